"""What the reproduction compares: the methods with their grids, the paper's datasets, and the
constants of its design (test share, quick mode, the small-cluster clustering)."""

from typing import NamedTuple

from ..baselines import BR, LEML, MAXIDE, MBR, MLLOC, MLLRC, MMLLOC
from ..estimator import GLOCAL, GLObal, loCAL
from ..model_selection import GLOCALCV
from ..protocol import (
    BR_GRID,
    GLOBAL_ABLATION_GRID,
    GLOCAL_ABLATION_GRID,
    GLOCAL_GRID,
    LOCAL_ABLATION_GRID,
    LEML_GRID,
    MAXIDE_GRID,
    MBR_GRID,
    MLLOC_GRID,
    MLLRC_GRID,
    MMLLOC_GRID,
)


class Method(NamedTuple):
    """A method of the comparison.

    Attributes
    ----------
    estimator : estimator
        Unfitted prototype; cloned for every run (every ``random_state`` among its
        parameters, nested ones included, set per repetition).
    param_grid : dict
        Grid searched by 5-fold cross-validation on every training set; empty for an
        estimator that tunes itself (`glocal.GLOCALCV`).
    ablation_grid : dict or list of dict or None
        The grid searched instead in the small-cluster ablation (the weights of the
        correlation terms, for the GLOCAL family); None: `param_grid` there too.
    """

    estimator: object
    param_grid: dict
    ablation_grid: object = None

    def grid(self, small_clusters):
        """The grid searched in a run with or without the small-cluster ablation."""
        if small_clusters and self.ablation_grid is not None:
            return self.ablation_grid
        return self.param_grid


# Grids: see glocal.protocol. The two-stage methods are built with explicit parts so that
# the grid can reach the learner's parameters (``learner__C``).
METHODS = {
    "GLOCAL": Method(GLOCAL(), GLOCAL_GRID, GLOCAL_ABLATION_GRID),
    "BR": Method(BR(), BR_GRID),
    "GLObal": Method(GLObal(), GLOCAL_GRID, GLOBAL_ABLATION_GRID),
    "loCAL": Method(loCAL(), GLOCAL_GRID, LOCAL_ABLATION_GRID),
    "LEML": Method(LEML(), LEML_GRID),
    "ML-LRC": Method(MLLRC(), MLLRC_GRID),
    "MLLOC": Method(MLLOC(), MLLOC_GRID),
    "MAXIDE": Method(MAXIDE(), MAXIDE_GRID),
    "MBR": Method(MBR(completer=MAXIDE(), learner=BR()), MBR_GRID),
    "MMLLOC": Method(MMLLOC(completer=MAXIDE(), learner=MLLOC()), MMLLOC_GRID),
    "GLOCALCV": Method(GLOCALCV(), {}),  # the recommended model, not in the paper
}

PAPER_DATASETS = ("arts", "business", "computers", "education", "entertainment", "health",
                  "enron", "image")

TEST_SIZE = 0.4
QUICK_MAX_SAMPLES = 500
# The clustering of the small-cluster table: its number of groups, and the share of all the
# rows below which a cluster is small.
SMALL_CLUSTER_GROUPS = 16
SMALL_CLUSTER_FRACTION = 0.05
# Methods whose presence switches the small-cluster design on by default.
SMALL_CLUSTER_METHODS = ("GLObal", "loCAL")
