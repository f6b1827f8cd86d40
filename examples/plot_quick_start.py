"""
Quick start: fit GLOCAL, score labels, compare with binary relevance
====================================================================

GLOCAL learns a low-rank map from features to labels, regularized by label correlations
that differ from one group of samples to another. This example fits it on synthetic data
whose label correlations are planted per group, looks at its scores for a few test
samples, and compares the paper's four ranking measures with binary relevance (BR, one
linear SVM per label).

It writes ``quick_start_convergence.png`` and ``quick_start_scores.png`` to the directory
named by the environment variable ``GLOCAL_EXAMPLES_OUT`` (default: the current directory).
"""

import os
from pathlib import Path

from matplotlib.figure import Figure
from sklearn.model_selection import train_test_split

from glocal import GLOCAL
from glocal.baselines import BR
from glocal.datasets import make_glocal_data
from glocal.metrics import PAPER_NAMES, evaluate
from glocal.plotting import plot_convergence, save_figure

OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT", "."))

# %%
# Data: 600 samples, 24 features, 12 labels in 3 groups with their own correlations.
data = make_glocal_data(random_state=0)
X_train, X_test, Y_train, Y_test = train_test_split(data.X, data.Y, test_size=0.4,
                                                    random_state=0)

# %%
# Fit. Labels are {0, 1}; NaN would mark a missing one (see plot_missing_labels.py).
model = GLOCAL(random_state=0).fit(X_train, Y_train)
br = BR().fit(X_train, Y_train)
print(f"GLOCAL: {model.n_init_iter_} basic-model initialisation rounds, "
      f"{model.n_iter_} outer iterations, {sum(model.fit_times_.values()):.2f} s")

# %%
# The objective never increases; the basic-model initialisation does most of the work.
save_figure(plot_convergence(model), OUT / "quick_start_convergence.png", overwrite=True)

# %%
# Measures on the test set. GLOCAL's ranking is close to BR's, not better, on this data.
scores = {"GLOCAL": model.decision_function(X_test), "BR": br.decision_function(X_test)}
measures = {name: evaluate(Y_test, S) for name, S in scores.items()}
print(f"{'':8}" + "".join(f"{short:>8}" for short in PAPER_NAMES))
for name, values in measures.items():
    print(f"{name:8}" + "".join(f"{values[m]:8.4f}" for m in PAPER_NAMES.values()))
print("Rkl and Cvg: lower is better; Auc and Ap: higher is better.")

# %%
# Scores of 30 test samples: predict() is their sign; the dots mark the true labels.
fig = Figure(figsize=(10, 4), layout="constrained")
ax_scores, ax_measures = fig.subplots(1, 2, width_ratios=[2, 1])
S = scores["GLOCAL"][:30].T
limit = abs(S).max()
image = ax_scores.imshow(S, cmap="RdBu_r", vmin=-limit, vmax=limit)
rows, columns = Y_test[:30].T.nonzero()
ax_scores.scatter(columns, rows, s=8, c="black", label="true label")
ax_scores.set(title="GLOCAL scores", xlabel="test sample", ylabel="label")
ax_scores.legend(loc="upper right", bbox_to_anchor=(1, -0.15))
fig.colorbar(image, ax=ax_scores, label="score")

# %%
# The paper's four measures side by side (Cvg is divided by the number of labels).
names = list(PAPER_NAMES)
for offset, (name, values) in zip((-0.2, 0.2), measures.items()):
    heights = [values[m] / (Y_test.shape[1] if short == "Cvg" else 1)
               for short, m in PAPER_NAMES.items()]
    ax_measures.bar([i + offset for i in range(len(names))], heights, width=0.4, label=name)
ax_measures.set_xticks(range(len(names)), ["Rkl ↓", "Auc ↑", "Cvg / l ↓", "Ap ↑"])
ax_measures.set(title="test measures", ylim=(0, 1.15))
ax_measures.legend(loc="upper center", ncols=2)
save_figure(fig, OUT / "quick_start_scores.png", overwrite=True)
