"""Two-stage learning with missing labels: complete the training labels, then learn from them.

The GLOCAL paper (Zhu, Kwok & Zhou, TKDE 2018, Sec. "Learning with Missing Labels") evaluates
the methods that need full labels, BR and MLLOC, by first filling in the missing labels with
MAXIDE (Xu, Jin & Zhou, NIPS 2013): MBR is MAXIDE + BR and MMLLOC is MAXIDE + MLLOC. Both are
compositions of existing estimators through `TwoStage`. (Here `BR` and `MLLOC` also learn
from the observed labels directly.)
"""

import time

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods

from .._base import MultiLabelMixin
from .._fitted import Array, Integer, Model, Number
from .br import BR
from .maxide import MAXIDE


class TwoStage(MultiLabelMixin, BaseEstimator):
    """Fill in the missing training labels with one estimator, then learn with another.

    ``fit(X, Y)`` clones ``completer`` and fits it on X and the incomplete Y (NaN = missing),
    replaces every NaN of Y by the completer's {0, 1} estimate (observed entries are kept),
    and fits a clone of ``learner`` on X and the completed labels. When Y has no NaN, the
    completer is skipped and the learner is fitted on Y directly. Predictions are the
    learner's.

    The completed labels come from ``completer.fill(Y)`` when the completer has such a
    method (as `MAXIDE` does: the sign of its completed scores on the training samples),
    otherwise from ``completer.predict(X)``.

    Parameters
    ----------
    completer : estimator or None, default=None
        Fitted on the incomplete labels; None means ``MAXIDE()``.
    learner : estimator or None, default=None
        Fitted on the completed labels; must have ``decision_function``. None means
        ``BR()``.
    random_state : int, RandomState instance or None, default=None
        Seeds the completer and the learner where they take a ``random_state`` left at
        None (BR and MLLOC do; MAXIDE draws no random numbers), each with its own seed drawn
        from this one, so that an int makes fits reproducible bit for bit. A
        ``random_state`` already set on the completer or the learner is kept.

    Attributes
    ----------
    completer_ : estimator or None
        The fitted completer; None when Y had no missing entry.
    learner_ : estimator
        The fitted learner.
    Y_completed_ : ndarray of shape (n_samples, n_labels)
        The {0, 1} labels the learner was fitted on.
    fill_time_, learn_time_ : float
        Seconds spent fitting the completer (0 without missing labels) and the learner: the
        paper's timing table reports them separately (F and R).
    n_features_in_ : int
    """

    _parameter_constraints = {
        "completer": [HasMethods(["fit"]), None],
        "learner": [HasMethods(["fit", "decision_function"]), None],
        "random_state": ["random_state"],
    }
    _fitted_attributes = {
        "completer_": Model(none=True),
        "learner_": Model(),
        "Y_completed_": Array("f", ("n_samples", "n_labels")),
        "fill_time_": Number(),
        "learn_time_": Number(),
        "n_features_in_": Integer(1),
    }

    def __init__(self, completer=None, learner=None, random_state=None):
        self.completer = completer
        self.learner = learner
        self.random_state = random_state

    def _default_completer(self):
        return MAXIDE()

    def _default_learner(self):
        return BR()

    def fit(self, X, Y):
        """Complete the training labels if any is missing, then fit the learner.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label indicator: 1 positive, 0 negative, NaN missing.

        Returns
        -------
        self
        """
        X, Y_signed, J = self._check_training_data(X, Y)
        rng = check_random_state(self.random_state)
        # Both seeds are drawn every time, so the learner's does not depend on whether a
        # completer ran.
        completer_seed, learner_seed = rng.randint(np.iinfo(np.int32).max, size=2)
        Y_full = (Y_signed.T > 0).astype(float)
        start = time.perf_counter()
        if J is None:
            self.completer_ = None
        else:
            Y_missing = np.where(J.T > 0, Y_full, np.nan)
            completer = self.completer if self.completer is not None else self._default_completer()
            self.completer_ = self._seeded(completer, completer_seed).fit(X, Y_missing)
            if hasattr(self.completer_, "fill"):
                Y_full = np.asarray(self.completer_.fill(Y_missing), dtype=float)
            else:
                predicted = np.asarray(self.completer_.predict(X), dtype=float)
                Y_full = np.where(J.T > 0, Y_full, predicted)
            if Y_full.shape != Y_missing.shape or np.isnan(Y_full).any():
                raise ValueError(f"the completer {type(self.completer_).__name__} did not return "
                                 f"a complete label matrix of shape {Y_missing.shape}")
        self.fill_time_ = time.perf_counter() - start
        learner = self.learner if self.learner is not None else self._default_learner()
        start = time.perf_counter()
        self.learner_ = self._seeded(learner, learner_seed).fit(X, Y_full)
        self.learn_time_ = time.perf_counter() - start
        self.Y_completed_ = Y_full
        self.n_features_in_ = X.shape[1]
        return self

    def _seeded(self, estimator, seed):
        """A clone of ``estimator``, seeded when it takes a random_state left at None."""
        estimator = clone(estimator)
        params = estimator.get_params(deep=False)
        if (self.random_state is not None and "random_state" in params
                and params["random_state"] is None):
            estimator.set_params(random_state=int(seed))
        return estimator

    def decision_function(self, X):
        """The learner's label scores, shape (n_samples, n_labels)."""
        X = self._check_fitted_features(X)
        return self.learner_.decision_function(X)


class MBR(TwoStage):
    """MBR: MAXIDE fills in the missing training labels, then BR learns from them.

    The GLOCAL paper's two-stage baseline for learning with missing labels (Zhu, Kwok & Zhou,
    TKDE 2018): `MAXIDE` (Xu, Jin & Zhou, NIPS 2013) completes the label matrix, then binary
    relevance (`BR`, one linear SVM per label) is trained on the completed labels. See
    `TwoStage` for the parameters (defaults ``MAXIDE()`` and ``BR()``) and attributes.
    """


class MMLLOC(TwoStage):
    """MMLLOC: MAXIDE fills in the missing training labels, then MLLOC learns from them.

    The GLOCAL paper's two-stage baseline for learning with missing labels (Zhu, Kwok & Zhou,
    TKDE 2018): `MAXIDE` (Xu, Jin & Zhou, NIPS 2013) completes the label matrix, then MLLOC
    (Huang & Zhou, AAAI 2012), which exploits local label correlations, is trained on the
    completed labels. See `TwoStage` for the parameters (defaults ``MAXIDE()`` and
    ``MLLOC()``) and attributes.
    """

    def _default_learner(self):
        from .mlloc import MLLOC  # imported here: the module is optional for the others

        return MLLOC()
