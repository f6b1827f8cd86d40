"""Regenerate the paper's result tables: datasets x repetitions x observed fraction x methods.

`run_reproduction` runs the paper's protocol (`glocal.protocol`) and writes, in its output
directory, ``results.csv`` (one row per finished run) and ``report.md`` (the tables).
Every run of a repetition uses the same random 60/40 split, whatever the method and the
observed fraction rho; for rho < 1 the training labels are masked by
`glocal.protocol.sample_observed`. Each run records:

* ``prediction_<measure>``: the measures of `glocal.metrics.evaluate` on the test split
  (test rows without a positive label dropped, as in the paper);
* ``recovery_<measure>`` (rho < 1): the same measures on the training label matrix
  restricted to its missing entries: each training row is ranked among its missing labels
  only, by the method's scores ``decision_function(X_train)``, and rows whose missing
  entries hold no positive (for Rkl and Auc: not both a positive and a negative) are
  skipped; the per-label AUC likewise uses each label's missing entries
  (`glocal.protocol.evaluate_masked`);
* ``small_<measure>`` (with ``small_clusters``): the test measures restricted to the test
  rows that fall in a small cluster, ``small_n_test`` of them (see "Small clusters" below);
* the chosen hyperparameters, and the fit time split into clustering, initialisation,
  label filling (the two-stage MBR and MMLLOC) and main loop where the estimator reports
  them (``fit_times_``; ``fill_time_`` and ``learn_time_``), plus the total fit and tuning
  times.

The methods (`METHODS`) are GLOCAL, its ablations GLObal and loCAL, and the paper's
competitors of `glocal.baselines`, each with the cross-validation grid documented in
`glocal.protocol`, and the recommended `glocal.GLOCALCV`, which tunes itself (its own 3-fold
search on each training set). For every method the prediction is its ``decision_function``
on the test rows, and the recovery its scores on the training rows: ``completed_scores_``
for MAXIDE (the completed label matrix; it equals MAXIDE's ``decision_function`` on the
training rows, as MAXIDE is a linear model of X), ``decision_function(X_train)`` for the
others. BR and MLLOC learn each label on the rows where it is observed; MBR and MMLLOC fill
in the missing labels with MAXIDE first (with full labels they are BR and MLLOC). GLOCAL,
GLObal and loCAL are tuned by `glocal.GLOCALCV` (warm-started paths), the others by
`glocal.model_selection.select_hyperparameters`, on the same folds with the same scorer.

**Small clusters** (the paper's table of GLObal, loCAL and GLOCAL on the clusters holding
under 5% of the samples). With ``small_clusters=True``, every repetition clusters all the
rows of the dataset, training and test together, once, by
``kmeans_groups(X, SMALL_CLUSTER_GROUPS, random_state=...)`` with
`SMALL_CLUSTER_GROUPS` = 16 groups: the paper's tuned number of groups g went up to 16 and
beyond, and with GLOCAL's default of 4 groups a cluster under 5% of the samples is rare.
The estimators whose ``fit`` takes ``groups`` (GLOCAL, GLObal, loCAL) get the training
rows' part of that clustering as their local groups (and ``n_groups=16``, which is what
their fits inside the cross-validation use, with k-means on each training fold), so that
their local correlations are those of these clusters, and they tune the weights of their
correlation terms instead of ``lam2`` and ``n_latent`` (`Method.ablation_grid`: GLObal
lam3, loCAL lam4, GLOCAL lam3 = lam4, each over the same three values). Every method then
records its test measures on the test rows whose cluster holds fewer than
`SMALL_CLUSTER_FRACTION` (5%) of all the rows (empty when there is none). This changes
GLOCAL's fits (given groups instead of k-means with 4 groups on the training rows), so it
is part of the configuration of an output directory: by default it is on exactly when
GLObal or loCAL is among the methods.

Every finished run is appended to ``results.csv`` as one line, and ``report.md`` is
replaced atomically (written to a temporary file in the same directory, then renamed), so
an interrupted reproduction keeps every finished run, and running it again with the same
output directory skips the runs already recorded. Reproductions into one output directory
at once take turns through a lock file: none loses or repeats another's rows, a run one of
them has recorded is skipped by the others, and each report holds every run recorded. A row
of ``results.csv`` that is damaged (cut short, a field that does not parse) or a run
recorded twice is reported with its file and line and run again, never counted as done.

Modules: `~glocal.reproduce.methods` (what is compared), `~glocal.reproduce.runner` (the runs),
`~glocal.reproduce.results` (``results.csv``), `~glocal.reproduce.report` (``report.md``).
"""

from .methods import (
    METHODS,
    PAPER_DATASETS,
    SMALL_CLUSTER_FRACTION,
    SMALL_CLUSTER_GROUPS,
    Method,
)
from .report import render_report
from .results import FIELDS, MEASURES, read_results
from .runner import run_reproduction

__all__ = [
    "FIELDS",
    "MEASURES",
    "METHODS",
    "PAPER_DATASETS",
    "SMALL_CLUSTER_FRACTION",
    "SMALL_CLUSTER_GROUPS",
    "Method",
    "read_results",
    "render_report",
    "run_reproduction",
]
