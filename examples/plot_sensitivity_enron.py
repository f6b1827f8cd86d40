"""
Sensitivity to the hyperparameters on Enron (the paper's Figures 5-9)
=====================================================================

The paper varies one parameter at a time around its best setting and watches the four
measures. Here the centre is GLOCAL's default setting and the split is one random 60/40
split of Enron (1702 e-mails, 1001 features, 53 labels); each curve is one parameter:
the number of groups g, the global and local manifold weights lam3 and lam4, the latent
dimension k and the Frobenius weight lam2.

What to look for: lam2 matters most (it shrinks rare labels away when large and lets W
overfit when small); on Enron the manifold weights help once they reach about 0.1-1, and
the number of groups matters little.

Needs the Enron dataset in the data directory ``$GLOCAL_DATA``. Writes
``enron_sensitivity_<parameter>.png`` to ``$GLOCAL_EXAMPLES_OUT`` (default:
``glocal-examples`` in the system's temporary folder).
"""

import os
import sys
import tempfile
from pathlib import Path

from sklearn.model_selection import train_test_split

from glocal.datasets import load_dataset
from glocal.plotting import plot_sensitivity, save_figure, sensitivity
from glocal.protocol import drop_unlabeled_rows

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
DATA_DIR = os.environ.get("GLOCAL_DATA")  # None: load_dataset says what to set
GRID = {"g": [1, 2, 4, 8, 16], "lam3": [0.0, 1e-3, 1e-2, 1e-1, 1.0],
        "lam4": [0.0, 1e-3, 1e-2, 1e-1, 1.0], "k": [5, 10, 20, 30], "lam2": [1.0, 2.0, 4.0, 8.0]}

try:
    enron = load_dataset("enron", DATA_DIR)
except FileNotFoundError as error:  # in CI the data must be there
    print(f"{error}\nSet GLOCAL_DATA to the data directory to run this example.",
          file=sys.stderr)
    sys.exit(1 if os.environ.get("CI", "").lower() == "true" else 0)

X_train, X_test, Y_train, Y_test = train_test_split(enron.X, enron.Y, test_size=0.4,
                                                    random_state=0)
X_test, Y_test = drop_unlabeled_rows(X_test, Y_test)

# %%
# One parameter at a time, the others at GLOCAL's defaults.
for parameter, values in GRID.items():
    results = sensitivity(X_train, Y_train, X_test, Y_test, parameter, values, random_state=0)
    best = max(results, key=lambda r: r["average_precision"])
    print(f"{parameter}: best Ap {best['average_precision']:.4f} at {best[parameter]}")
    fig = plot_sensitivity(results, parameter)
    fig.suptitle(f"Enron: varying {parameter}, the others at GLOCAL's defaults")
    save_figure(fig, OUT / f"enron_sensitivity_{parameter}.png", overwrite=True)
