"""
GLOCAL in a scikit-learn Pipeline, tuned by GridSearchCV
========================================================

GLOCAL is a scikit-learn estimator, so it composes with the rest of the library: here a
`Pipeline` standardizes the features before GLOCAL, and `GridSearchCV` picks the
regularization weight lam2 and the latent dimension k (``n_latent``) by 3-fold
cross-validation. With no ``scoring`` argument the search uses the estimator's own
``score``: the average precision of the label ranking (the paper's Ap).

Hyperparameters of a pipeline step are addressed as ``<step>__<parameter>``. (With
missing labels (NaN) in Y, ``score`` ranks each row among its observed labels only; for
GLOCAL itself, `glocal.GLOCALCV` searches faster.)

Writes ``pipeline_gridsearch.png`` to ``$GLOCAL_EXAMPLES_OUT`` (default: ``glocal-examples``
in the system's temporary folder).
"""

import os
import tempfile
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from glocal import GLOCAL
from glocal.datasets import make_glocal_data
from glocal.plotting import save_figure

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))

# %%
# Data and a 60/40 split; the search sees the training part only.
data = make_glocal_data(random_state=0)
X_train, X_test, Y_train, Y_test = train_test_split(data.X, data.Y, test_size=0.4,
                                                    random_state=0)

# %%
# The pipeline and the grid.
pipeline = Pipeline([("scale", StandardScaler()), ("glocal", GLOCAL(random_state=0))])
grid = {"glocal__lam2": [0.3, 1, 4, 10], "glocal__n_latent": [4, 8, 12]}
search = GridSearchCV(pipeline, grid, cv=KFold(3, shuffle=True, random_state=0))
search.fit(X_train, Y_train)  # refits the best setting on all training data

default = pipeline.fit(X_train, Y_train)
print(f"best setting {search.best_params_}, cross-validated Ap {search.best_score_:.4f}")
print(f"test Ap: tuned {search.score(X_test, Y_test):.4f}, "
      f"defaults {default.score(X_test, Y_test):.4f}")

# %%
# Figure: mean cross-validated Ap over the grid (the best setting is framed).
lam2, n_latent = grid["glocal__lam2"], grid["glocal__n_latent"]
scores = np.empty((len(lam2), len(n_latent)))
for params, value in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
    scores[lam2.index(params["glocal__lam2"]), n_latent.index(params["glocal__n_latent"])] = value
fig = Figure(figsize=(5.5, 4), layout="constrained")
ax = fig.subplots()
image = ax.imshow(scores, cmap="viridis")
for (i, j), value in np.ndenumerate(scores):
    ax.text(j, i, f"{value:.3f}", ha="center", va="center",
            color="black" if value > scores.mean() else "white")
i, j = lam2.index(search.best_params_["glocal__lam2"]), n_latent.index(
    search.best_params_["glocal__n_latent"])
ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
ax.set(xticks=range(len(n_latent)), xticklabels=n_latent, xlabel="n_latent (k)",
       yticks=range(len(lam2)), yticklabels=lam2, ylabel="lam2",
       title="GridSearchCV: mean Ap over 3 folds")
fig.colorbar(image, ax=ax, label="Ap")
save_figure(fig, OUT / "pipeline_gridsearch.png", overwrite=True)
