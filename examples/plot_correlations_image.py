"""
Global and local label correlations on the Image data (the paper's Figure 3)
============================================================================

The premise of GLOCAL is that labels correlate differently in different parts of the
data. On the Image data (2000 natural scenes, 294 features, 5 labels) it forms 4 groups
by k-means and learns one label correlation matrix per group; the global matrix is their
average weighted by group size (the paper's Lemma 1).

The learned matrices are the model's label Laplacians read as correlations (entry
-<z_i, z_j> of the unit-norm rows of Z_m), not the co-occurrence statistics of the labels:
they say which labels the model pushes to score alike within a group. Many entries sit at
+1 or -1: the Z step minimizes a linear function of Z_m Z_m^T over matrices with unit
diagonal, and such minima are often at the extreme matrices of rank one, whose entries
are all +1 or -1 (see plot_oblique_manifold.py). For comparison the second figure shows the
plain Pearson correlation of the labels within the same groups.

The label files name the labels ``label1`` ... ``label5``; the names used here, desert,
mountains, sea, sunset and trees, are those the multi-label literature gives for this
dataset (Zhang & Zhou, ML-kNN, 2007), not confirmed by the files.

Needs the data directory ``$GLOCAL_DATA`` with the Image dataset. Writes
``image_correlations_learned.png`` and ``image_correlations_labels.png`` to
``$GLOCAL_EXAMPLES_OUT`` (default: ``glocal-examples`` in the system's temporary folder).
"""

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from glocal import GLOCAL
from glocal.datasets import load_dataset
from glocal.plotting import plot_correlations, save_figure

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
DATA_DIR = os.environ.get("GLOCAL_DATA")  # None: load_dataset says what to set
LABEL_NAMES = ["desert", "mountains", "sea", "sunset", "trees"]  # from the literature

# %%
# Load the data, or say what to set. CI must have the data, so there it is an error.
try:
    data = load_dataset("image", DATA_DIR)
except FileNotFoundError as error:
    print(f"Image data not found ({error}).\nSet GLOCAL_DATA to the directory holding the "
          "image dataset (e.g. image-train.arff) to run this example.", file=sys.stderr)
    sys.exit(1 if os.environ.get("CI", "").lower() == "true" else 0)

# %%
# Fit on all 2000 images, with the default 4 k-means groups.
model = GLOCAL(random_state=0).fit(data.X, data.Y)
np.set_printoptions(precision=2, suppress=True)
print("learned global correlation:\n", model.global_correlation_)
fig = plot_correlations(model, LABEL_NAMES)
fig.suptitle("GLOCAL's learned label correlations on Image: global and per k-means group")
save_figure(fig, OUT / "image_correlations_learned.png", overwrite=True)

# %%
# The labels' own correlation in each of those groups (a label constant within a group
# has no correlation: shown as 0).
group_sizes = np.bincount(model.groups_)
with np.errstate(invalid="ignore", divide="ignore"):
    empirical = np.nan_to_num(np.stack([np.corrcoef(data.Y[model.groups_ == m].T)
                                        for m in range(model.n_groups_)]))
fig = plot_correlations((np.tensordot(group_sizes / group_sizes.sum(), empirical, axes=1),
                         empirical), LABEL_NAMES)
fig.suptitle("Pearson correlation of the labels in each group, and their size-weighted mean")
save_figure(fig, OUT / "image_correlations_labels.png", overwrite=True)
