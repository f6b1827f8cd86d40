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
Pearson correlation of the labels themselves, globally and within the same groups, below
the model's, with how far the two agree.

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
fig.suptitle("Correlations of GLOCAL's label scores on Image: global and per k-means group")
save_figure(fig, OUT / "image_correlations_learned.png", overwrite=True)

# %%
# The labels' own correlation, over all images and in each of those groups (a label
# constant within a group has none: grey), below the model's. Each labels panel prints
# their agreement: Spearman's correlation over the 10 label pairs, and the share of pairs
# whose two correlations have the same sign.
fig = plot_correlations(model, LABEL_NAMES, labels=data.Y)
save_figure(fig, OUT / "image_correlations_labels.png", overwrite=True)
