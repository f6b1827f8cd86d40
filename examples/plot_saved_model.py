"""
A model saved by the command line, read in Python: label sets, probabilities, top features
==========================================================================================

``glocal fit`` saves the fitted recommended model, ``GLOCALCV()``, in skops' format;
``glocal.persistence.load_model`` returns that same estimator, so Python predicts exactly
what ``glocal predict`` writes, and it carries the search's results (``best_params_``,
``cv_results_``) and a linear map of the features, ``coef_`` (labels x features) with
``intercept_``: the score of label j is ``x @ coef_[j] + intercept_[j]``. This example
writes a small ARFF file with 70 % of its labels missing, fits it with the command (run
here through ``glocal.cli.main``, as ``glocal fit`` would run in a shell), prints
``glocal inspect``'s summary, loads the model and checks that its label sets are those of
``glocal predict --labels``, reads its probabilities and each label's features of largest
weight.

It writes ``saved_model_weights.png`` to the directory named by the environment variable
``GLOCAL_EXAMPLES_OUT`` (default: ``glocal-examples`` in the system's temporary folder).
"""

import csv
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from sklearn.model_selection import train_test_split

from glocal.cli import main
from glocal.datasets import make_glocal_data
from glocal.persistence import load_model, load_model_info
from glocal.plotting import save_figure
from glocal.protocol import sample_observed

# Figures go to a folder of their own, never into the current one (a checkout); the data
# files and the model to a temporary folder, removed at the end.
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
WORK = Path(tempfile.mkdtemp(prefix="glocal-saved-model-"))

# %%
# Data files: 600 synthetic samples of 24 features (named f00 to f23) and 12 labels, split
# 60/40; 30 % of the training labels observed, the others written as '?' (missing).
data = make_glocal_data(random_state=0)
X_train, X_test, Y_train, Y_test = train_test_split(data.X, data.Y, test_size=0.4,
                                                    random_state=0)
Y_train = sample_observed(Y_train, 0.3, random_state=0)
features = [f"f{i:02d}" for i in range(X_train.shape[1])]
labels = [f"label{j:02d}" for j in range(Y_train.shape[1])]


def write_arff(path, X, Y):
    """A MEKA ARFF file: the labels first (-C gives their number), then the features."""
    header = [f"@relation 'synthetic: -C {len(labels)}'"]
    header += [f"@attribute {name} {{0,1}}" for name in labels]
    header += [f"@attribute {name} numeric" for name in features] + ["@data"]
    rows = [",".join(["?" if np.isnan(y) else str(int(y)) for y in Y[i]]
                     + [repr(float(x)) for x in X[i]]) for i in range(len(X))]
    path.write_text("\n".join(header + rows) + "\n")


write_arff(WORK / "train.arff", X_train, Y_train)
write_arff(WORK / "test.arff", X_test, Y_test)

# %%
# Fit and save, as ``glocal fit train.arff --model model.skops`` does, then what the file
# holds, as ``glocal inspect model.skops --top 3`` prints it.
model_file = WORK / "model.skops"
assert main(["fit", str(WORK / "train.arff"), "--model", str(model_file)]) == 0
assert main(["inspect", str(model_file), "--top", "3"]) == 0

# %%
# The label sets of ``glocal predict --labels``, and those of the loaded model: the same.
assert main(["predict", str(model_file), str(WORK / "test.arff"), "--labels",
             "--out", str(WORK / "labels.csv")]) == 0
with open(WORK / "labels.csv") as file:
    written = np.array(list(csv.reader(file))[1:], dtype=int)
model = load_model(model_file)
predicted = model.predict(X_test)
assert (predicted == written).all()
print(f"{type(model).__name__} chose {model.best_params_} (mean CV score "
      f"{model.best_score_:.4f}); its label sets of the {len(X_test)} test rows are those "
      "of glocal predict --labels")
print(f"test rows given no label: {np.mean(predicted.sum(axis=1) == 0):.3f} with the tuned "
      f"thresholds, {np.mean((model.decision_function(X_test) > 0).sum(axis=1) == 0):.3f} "
      "with the sign of the scores")

# %%
# Probabilities: each label's scores (margins of the squared hinge) mapped by the Platt
# scaling that the search fitted on its out-of-fold scores, as ``glocal predict --proba``
# writes them.
probabilities = model.predict_proba(X_test)
print(f"probabilities of the first test row: {np.round(probabilities[0], 3)}")

# %%
# Top features per label: the largest weights of ``coef_``, named by the feature names the
# command kept beside the model. The scores are ``X @ coef_.T + intercept_`` (of the rows
# scaled to unit norm when the search chose ``normalize_rows``).
names = load_model_info(model_file)["feature_names"]
scored = (X_test / np.linalg.norm(X_test, axis=1, keepdims=True)
          if model.best_estimator_.normalize_rows_ else X_test)
assert np.allclose(scored @ model.coef_.T + model.intercept_, model.decision_function(X_test))
top = np.argsort(-np.abs(model.coef_), axis=1)[:, :3]
for label, weights, order in zip(labels, model.coef_, top):
    print(f"{label}: " + ", ".join(f"{names[i]} {weights[i]:+.3f}" for i in order))

# %%
# Figure: every label's weights, the three largest of each framed.
fig = Figure(figsize=(9, 4), layout="constrained")
ax = fig.subplots()
limit = np.abs(model.coef_).max()
image = ax.imshow(model.coef_, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
for j, order in enumerate(top):
    ax.scatter(order, [j] * len(order), s=40, facecolors="none", edgecolors="black")
ax.set_xticks(range(len(names)), names, rotation=90, fontsize="small")
ax.set_yticks(range(len(labels)), labels, fontsize="small")
ax.set(title="coef_ of the loaded GLOCALCV (circles: each label's top 3 features)",
       xlabel="feature", ylabel="label")
fig.colorbar(image, ax=ax, label="weight in the label's score")
save_figure(fig, OUT / "saved_model_weights.png", overwrite=True)
shutil.rmtree(WORK)
