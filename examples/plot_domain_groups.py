"""
Local groups from domain knowledge instead of k-means
=====================================================

GLOCAL learns one label correlation matrix per group of samples. By default the groups are
k-means clusters of the features, which is only as good as the features' cluster
structure. When the groups are known (the source of a document, the site of a patient,
the camera of an image), pass them: ``fit(X, Y, groups=...)``. Predictions never need
them: the groups shape the training only.

Synthetic data with planted groups makes the difference visible. Each group pairs the
labels differently (two labels of a pair are copies within the group), and the groups
are close together in feature space (``separation=1``), so k-means does not find them.
30% of the training labels are observed, and we measure how well the hidden ones are
recovered (Ap over each row's missing entries) with the planted groups, k-means groups,
randomly shuffled groups, and without the label-correlation terms (lam3 = lam4 = 0).

Writes ``domain_groups.png`` to ``$GLOCAL_EXAMPLES_OUT`` (default: ``glocal-examples`` in
the system's temporary folder).
"""

import os
import tempfile
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from sklearn.metrics import adjusted_rand_score, confusion_matrix

from glocal import GLOCAL
from glocal.datasets import make_glocal_data
from glocal.plotting import save_figure
from glocal.protocol import evaluate_masked, sample_observed

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
# The setting of tests/test_synthetic.py where the local correlations carry information:
# 3 groups of 100 samples, 8 labels in group-specific pairs, no feature noise.
DATA = {"n_samples": 300, "n_features": 96, "n_labels": 8, "n_groups": 3, "group_dim": 32,
        "cluster_size": 2, "n_shared_clusters": 0, "noise": 0.0, "separation": 1.0}
MODEL = {"n_groups": 3, "n_latent": 8, "lam2": 0.3, "lam3": 0.001, "lam4": 1.0}

# %%
# Five data sets; for each, four ways to group the samples.
recovery = {"planted groups": [], "k-means groups": [], "shuffled groups": [],
            "no correlation terms": []}
agreement = []  # adjusted Rand index of k-means vs planted groups (1 = the same)
for seed in range(5):
    data = make_glocal_data(random_state=seed, **DATA)
    Y_observed = sample_observed(data.Y, 0.3, random_state=seed)
    shuffled = np.random.default_rng(seed).permutation(data.groups)
    runs = {"planted groups": (MODEL, data.groups),
            "k-means groups": (MODEL, None),
            "shuffled groups": (MODEL, shuffled),
            "no correlation terms": ({**MODEL, "lam3": 0.0, "lam4": 0.0}, data.groups)}
    for name, (params, groups) in runs.items():
        model = GLOCAL(random_state=seed, **params).fit(data.X, Y_observed, groups=groups)
        scores = evaluate_masked(data.Y, model.decision_function(data.X),
                                 np.isnan(Y_observed))
        recovery[name].append(scores["average_precision"])
        if groups is None:
            agreement.append(adjusted_rand_score(data.groups, model.groups_))
            counts = confusion_matrix(data.groups, model.groups_)  # kept: the last seed's

# %%
# k-means misses the planted groups, and only the planted groups help recovery.
print(f"adjusted Rand index of k-means vs planted groups: {np.round(agreement, 2)}")
for name, values in recovery.items():
    print(f"{name:<22} Ap on the missing labels {np.mean(values):.4f} "
          f"(std {np.std(values):.4f})")

# %%
# Figure: the k-means groups against the planted ones, and the recovered labels.
fig = Figure(figsize=(10, 4), layout="constrained")
ax_groups, ax_recovery = fig.subplots(1, 2, width_ratios=[1, 1.6])
ax_groups.imshow(counts, cmap="Blues")
for (i, j), count in np.ndenumerate(counts):
    ax_groups.text(j, i, count, ha="center", va="center",
                   color="white" if count > counts.max() / 2 else "black")
ax_groups.set(xticks=range(3), yticks=range(3), xlabel="k-means group",
              ylabel="planted group", title="Samples per group (last data set)")
# One grey line per data set: the comparison is paired, the spread is between data sets.
table = np.array(list(recovery.values()))  # settings x seeds
ax_recovery.plot(table, color="0.75", linewidth=1)
ax_recovery.errorbar(range(len(table)), table.mean(axis=1), yerr=table.std(axis=1), fmt="o",
                     capsize=4)
ax_recovery.set_xticks(range(len(recovery)), [n.replace(" ", "\n", 1) for n in recovery])
ax_recovery.set(ylabel="Ap on the missing training labels",
                title="Recovery of hidden labels (5 data sets, mean and std)")
save_figure(fig, OUT / "domain_groups.png", overwrite=True)
