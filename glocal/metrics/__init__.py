"""Multi-label ranking measures of the GLOCAL paper (Zhu, Kwok & Zhou, TKDE 2018).

Every measure is ``f(y_true, y_score)`` with ``y_true`` a {0, 1} indicator matrix and
``y_score`` real scores, both of shape (n_samples, n_labels), dense or scipy.sparse.
Notation: ``C_i+`` / ``C_i-`` are the positive / negative labels of instance ``i``,
``Z_j+`` / ``Z_j-`` the positive / negative instances of label ``j``, and
``rank(i, j)`` is the pessimistic rank of label ``j`` in row ``i``: the number of labels
whose score is ``>= f_j(x_i)`` (1 = best; tied labels all get the worst rank of their group).

==================== ======= ================================================================
measure              paper   per instance (or label), averaged
==================== ======= ================================================================
ranking_loss         Rkl     |{(a, b) in C_i+ x C_i- : f_a <= f_b}| / (|C_i+| |C_i-|)
coverage             Cvg     max{rank(i, j) : j in C_i+} - 1
average_precision    Ap      mean over c in C_i+ of |{j in C_i+ : f_j >= f_c}| / rank(i, c)
label_auc                    |{(a, b) in Z_j+ x Z_j- : f_j(x_a) >= f_j(x_b)}| / (|Z_j+| |Z_j-|)
instance_auc         Auc     |{(a, b) in C_i+ x C_i- : f_a >= f_b}| / (|C_i+| |C_i-|)
==================== ======= ================================================================

Ties count as errors in ``ranking_loss`` and as correct in both AUCs, so with tied scores
``ranking_loss + instance_auc`` exceeds 1 by the fraction of tied pairs. ``coverage`` is
scikit-learn's ``coverage_error`` minus 1 and ``average_precision`` equals scikit-learn's
``label_ranking_average_precision_score`` on the rows where both are defined.

The paper reports a single "Auc" column that tracks ``1 - Rkl`` closely, which points to the
per-instance AUC; :data:`PAPER_NAMES` therefore maps "Auc" to ``instance_auc``.

Undefined cases are skipped, and the mean is taken over what remains:

* ``ranking_loss``, ``instance_auc``: instances with no positive or no negative label;
* ``coverage``, ``average_precision``: instances with no positive label;
* ``label_auc``: labels with no positive or no negative instance.

If nothing remains, a ValueError naming the measure is raised.

**Missing labels.** `observed_average_precision` (NaN in ``y_true`` = missing) ranks each row
among its observed entries only and skips rows without an observed positive; it is what
every estimator's ``score`` returns, and `observed_average_precision_scorer` is the same
measure as a ``scoring`` callable for ``GridSearchCV`` / ``cross_val_score``.
`observed_weighted_average_precision` weights those rows by their number of observed labels
(the same measure without NaN); `observed_two_way_average_precision`, `glocal.GLOCALCV`'s
cross-validation criterion, adds to it each label's ranking of its observed rows.
`evaluate_masked` gives every measure restricted to any chosen entries (undefined -> NaN).

**Label sets and the top of the ranking.** `micro_f1` and `macro_f1` score predicted
{0, 1} label sets (NaN labels left out), `precision_at_k` and `ndcg_at_k` the k
best-ranked labels of each row, and `label_report` gives support, AUC, precision, recall and
F1 per label.

Each measure sorts every row once (every column for ``label_auc``; ``O(n l log l)``) and
counts pairs from cumulative counts over tie groups; no pair is ever enumerated.
"""

from ._label_sets import label_report, macro_f1, micro_f1, ndcg_at_k, precision_at_k, \
    top_k_labels
from ._observed import (
    evaluate_masked,
    observed_average_precision,
    observed_average_precision_scorer,
    observed_two_way_average_precision,
    observed_two_way_average_precision_scorer,
    observed_weighted_average_precision,
    observed_weighted_average_precision_scorer,
)
from ._ranking import (
    GREATER_IS_BETTER,
    PAPER_NAMES,
    average_precision,
    coverage,
    evaluate,
    instance_auc,
    label_auc,
    ranking_loss,
)

__all__ = [
    "ranking_loss",
    "coverage",
    "average_precision",
    "label_auc",
    "instance_auc",
    "evaluate",
    "evaluate_masked",
    "observed_average_precision",
    "observed_average_precision_scorer",
    "observed_weighted_average_precision",
    "observed_weighted_average_precision_scorer",
    "observed_two_way_average_precision",
    "observed_two_way_average_precision_scorer",
    "micro_f1",
    "macro_f1",
    "precision_at_k",
    "ndcg_at_k",
    "label_report",
    "PAPER_NAMES",
    "GREATER_IS_BETTER",
]
