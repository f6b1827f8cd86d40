"""
Asymmetric label correlations: which label implies which
========================================================

Label correlations are often one-sided. The GLOCAL paper ends on this example: "mountain"
is highly correlated with "tree", since a mountain usually has trees on it, but "tree" is
much less correlated with "mountain", because trees also grow in streets and parks. A label
Laplacian Z Z^T is symmetric, so the paper's model can only say that the two labels go
together, never which one implies the other.

``GLOCAL(correlation="asymmetric")`` learns a directed weight A[i, j] for every ordered pair
of labels: how strongly label i implies label j. It penalizes the scores' violations of the
implications it learns, max(0, f_i(x) - f_j(x))^2 (label j should score at least as high as
label i, where i implies j). Every row of A is a distribution over the other labels and
"no label", graded by how little the scores contradict each implication (see the user
guide's model page).

Synthetic scenes: "mountain" on about a sixth of them, "tree" on every mountain scene and on
half of the others, "sea" independent of both. Writes ``asymmetric_correlations.png`` and
``symmetric_correlations.png`` to ``$GLOCAL_EXAMPLES_OUT`` (default: ``glocal-examples`` in
the system's temporary folder).
"""

import os
import tempfile
from pathlib import Path

import numpy as np

from glocal import GLOCAL
from glocal.plotting import label_correlations, plot_correlations, save_figure

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
NAMES = ["mountain", "tree", "sea"]
MOUNTAIN, TREE, SEA = range(3)

# %%
# The scenes: each label is read off its own feature, and "tree" is also set wherever
# "mountain" is.
rng = np.random.default_rng(0)
X = rng.standard_normal((800, 10))
mountain = X[:, 0] > 1.0
tree = mountain | (X[:, 1] > 0.0)
sea = X[:, 2] > 0.5
Y = np.column_stack([mountain, tree, sea]).astype(float)
implied, _ = label_correlations(Y, directed=True)  # P(column relevant | row relevant)
print(f"P(tree | mountain) = {implied[MOUNTAIN, TREE]:.2f}, "
      f"P(mountain | tree) = {implied[TREE, MOUNTAIN]:.2f}")

# %%
# The recommended model's settings (squared hinge, a bias per label, no shrinkage of V)
# with a weak directed term over all samples (lam3; lam4 = 0: no local terms), one group.
settings = dict(n_latent=3, n_groups=1, lam3=0.01, lam4=0.0, loss="squared_hinge",
                fit_intercept=True, lam_v=0.0, random_state=0)
directed = GLOCAL(correlation="asymmetric", **settings).fit(X, Y)
A = directed.global_correlation_
np.set_printoptions(precision=2, suppress=True)
print("learned directed weights (row implies column):\n", A)
assert A[MOUNTAIN, TREE] > 0.7 and A[TREE, MOUNTAIN] < 0.05  # the direction is recovered
fig = plot_correlations(directed, NAMES, labels=Y)
save_figure(fig, OUT / "asymmetric_correlations.png", overwrite=True)

# %%
# Row "mountain" puts most of its weight on "tree"; rows "tree" and "sea" put almost all
# of theirs on "no label" (the rest to one of each row): neither implies another label.
# The labels' own P(column | row), below the learned weights in the figure, is one-sided
# in the same way.
#
# The paper's symmetric term on the same data and at the same weight: its correlation of
# mountain with tree is, by construction, its correlation of tree with mountain.
symmetric = GLOCAL(correlation="laplacian", **settings).fit(X, Y)
S = symmetric.global_correlation_
print("learned symmetric correlations:\n", S)
assert np.allclose(S, S.T)  # no direction to read
fig = plot_correlations(symmetric, NAMES, labels=Y)
save_figure(fig, OUT / "symmetric_correlations.png", overwrite=True)

# %%
# Whether either term helps prediction is another question, measured on real data, each
# term's weight tuned by cross-validation against the model without one, in the
# documentation's study of the correlation terms ("Label correlations: what the terms
# add").
