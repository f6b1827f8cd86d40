"""Every estimator of the package in a small, fast configuration, for tests over all of them."""

import pytest

from glocal import GLOCAL, GLObal, loCAL
from glocal.baselines import BR, LEML, MAXIDE, MBR, MLLOC, MLLRC, MMLLOC

GLOCAL_FAMILY = ("GLOCAL", "GLObal", "loCAL")

# Marks a test whose fits stop at their iteration caps on purpose (small caps for speed, or
# tol=0): their ConvergenceWarnings are expected, and kept out of the suite's summary.
capped_fits = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def quick_estimators():
    """Fresh estimators by name, seeded where they draw random numbers."""
    glocal = dict(n_latent=2, n_groups=2, max_iter=3, init_max_iter=3, random_state=0)
    return {
        "GLOCAL": GLOCAL(**glocal), "GLObal": GLObal(**glocal), "loCAL": loCAL(**glocal),
        "BR": BR(), "LEML": LEML(n_components=2, max_iter=5, random_state=0),
        "MLLRC": MLLRC(max_iter=50, random_state=0),
        "MLLOC": MLLOC(n_groups=2, max_iter=3, random_state=0),
        "MAXIDE": MAXIDE(max_iter=20),
        "MBR": MBR(completer=MAXIDE(max_iter=20), learner=BR()),
        "MMLLOC": MMLLOC(completer=MAXIDE(max_iter=20),
                         learner=MLLOC(n_groups=2, max_iter=3, random_state=0)),
    }


def quick_search():
    """GLOCALCV over two settings on two folds, seeded."""
    from glocal import GLOCALCV

    return GLOCALCV(GLOCAL(n_latent=2, n_groups=2, max_iter=3, init_max_iter=3),
                    {"lam2": [4.0, 1.0]}, cv=2, random_state=0)
