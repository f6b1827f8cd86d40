"""`GLOCALCV`: GLOCAL's hyperparameters by cross-validation on observed labels."""

import time
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._base import MultiLabelMixin, _check_feature_names, warn_if_any_vanished
from .._fitted import Array, Data, Integer, Model, Number, _Optional
from .._utils import validation
from .._utils.progress import SearchProgress, counted, fit_progress, iterations_text, \
    settings_text
from ..estimator import GLOCAL
from ..metrics import (observed_average_precision_scorer,
                       observed_two_way_average_precision_scorer,
                       observed_weighted_average_precision_scorer)
from ..thresholds import mean_thresholds
from ._calibration import fit_platt, platt_proba
from ._defaults import DEFAULT_ESTIMATOR_PARAMS, DEFAULT_PARAM_GRID, MAX_DEFAULT_LATENT
from ._fold import _walk_fold
from ._plan import _needed, _plan
from ._racing import contenders, first_racing_fold


def _fold_stats(values, fitted):
    """The mean and standard deviation over the folds (rows) of every setting's ``values``
    on the folds it was fitted on (``fitted``)."""
    with np.errstate(invalid="ignore"):  # -inf, a vanished fit's score, has no spread
        if fitted.all():
            return values.mean(axis=0), values.std(axis=0)
        columns = [values[fitted[:, j], j] for j in range(values.shape[1])]
        return (np.array([column.mean() for column in columns]),
                np.array([column.std() for column in columns]))


class GLOCALCV(MultiLabelMixin, BaseEstimator):
    """GLOCAL with its hyperparameters chosen by cross-validation on observed labels.

    **The recommended estimator.** ``GLOCALCV()`` with no arguments is the best design
    measured in this library with missing labels (with every label observed it ranked at
    least as well as tuned BR on 4 of the paper's 8 datasets only): GLOCAL with the squared hinge
    loss, a bias per label, no shrinkage of V and n_latent = min(n_labels, 100) (set in
    ``fit`` from Y), i.e. ``GLOCAL(loss="squared_hinge", fit_intercept=True, lam_v=0,
    n_latent=min(n_labels, 100), max_iter=200, init_max_iter=300, tol=1e-3)``,
    with lam2 in {16, 4, 2, 1} and ``normalize_rows`` in {False, True} chosen by 3-fold
    cross-validation (`DEFAULT_PARAM_GRID`) that races the settings over the folds (below).
    The grid, the caps and the rule for n_latent were chosen on datasets other than the
    paper's eight (birds, cal500, emotions, genbase, medical, scene, yeast; the
    measurements are in the comments of `DEFAULT_PARAM_GRID` and
    `DEFAULT_ESTIMATOR_PARAMS`), and evaluated on those eight against tuned BR in the
    documentation's missing-labels study. The refitted model minimizes::

        sum_{(j, i) observed} max(0, 1 - y_ji (U V)_ji)^2 + lam ||V - W^T X||^2
          + lam2 (||U||^2 + ||W||^2)
          + sum_m [ lam3 (n_m/n) tr(F_0^T Z_m Z_m^T F_0) + lam4 tr(F_m^T Z_m Z_m^T F_m) ]

    over U, V, W and the unit-row Z_m, with y_ji = +1 / -1, lam = 1, lam3 = lam4 = 1e-3,
    F_0 = U W^T X and F_m = U W^T X_m, where X (d x n, a column per sample) has a constant
    row of ones appended (its row w_0 of W gives the label biases U w_0, regularized with W)
    and, when CV chose ``normalize_rows``, every sample scaled to unit norm first. Labels
    are scored by U W^T x. This is not the paper's model: ``GLOCAL()`` keeps the paper's
    Eq. (4) as its default, and ``GLOCALCV(GLOCAL())`` tunes that one.

    **Label sets.** ``predict`` cuts each label's scores at its own threshold
    (``thresholds_``). With ``thresholds="cv"`` (the default) every fold of the search also
    finds, for every setting, each label's F1-maximizing threshold on the validation rows'
    observed entries (`glocal.thresholds.f1_thresholds`); the thresholds are the best
    setting's, averaged over the folds, at no further fit. The sign of the scores (the
    paper's rule, ``thresholds="sign"``) left many rows without any label; the thresholds
    study of the documentation measures both. ``predict_top_k`` gives the k best labels.

    **Probabilities.** ``predict_proba`` maps each label's score to a probability by Platt
    scaling, 1 / (1 + exp(-(a_j s + b_j))), whose a_j and b_j are fitted on the chosen
    setting's scores of the validation rows, pooled over the folds (the cross-entropy of
    the observed entries, against Platt's smoothed targets, with a_j >= 0): the search's
    fits give these scores, so no further fit is needed (they are kept until the search
    ends: 4 bytes per setting, training row and label). Chosen over isotonic regression
    and over maps fitted fold by fold on datasets other than the paper's eight (birds,
    cal500, genbase, medical; the probabilities study of the documentation).

    The `sklearn.linear_model.RidgeCV` of this library: ``fit`` scores every setting of
    ``param_grid`` by k-fold cross-validation, refits the best setting on all the data, and
    then predicts like that fitted estimator. Y may hold missing labels (NaN): folds are
    scored by `glocal.metrics.observed_two_way_average_precision`, among the observed
    entries only, so a missing label neither rewards nor penalizes a setting. Three quarters
    of it is the test measure, Ap of each row's ranking of its observed labels (rows without
    an observed positive skipped), rows weighted by their number of observed labels
    (without NaN the paper's Ap); one quarter is Ap of each label's ranking of its observed
    rows. With most labels missing, the rows' term rests on the few rows holding an
    observed positive, which a model ranking every row alike by its per-label biases orders
    almost as well as a real one: such models won searches at 5 and 10 % of the labels
    observed, 0.04 to 0.11 below tuned BR's test Ap. The labels' term rests on every
    observed entry, and ranks those models low. The missing-labels study of the
    documentation measures the criteria and says which data chose the quarter.

    **Paths and warm starts.** The settings that differ only in ``path_param`` and
    ``fit_intercept`` form a path, walked in decreasing order of ``path_param`` (strong to
    weak regularization for lam2). On each fold the first setting of a path is fitted from
    GLOCAL's own initial point; at every later value of ``path_param`` the first setting
    (in grid order) starts from its solution at the previous value, and, in a grid with
    ``fit_intercept``, the setting with the bias from the one without it at the same value
    (its W gets a zero bias row; the other way round the row is dropped). A start carries
    U, V, W and the Z_m (the same training rows, so V carries over as it is), through the
    public ``GLOCAL.fit(..., init=model)``; GLOCAL's basic-model initialisation and
    Algorithm 1 then run as usual, the initialisation for one round only when the start is
    that same-value solution, already a solution of Algorithm 1 for nearly the same model.
    The k-means groups of a fold and its feature second moments (X^T X, per group too) are
    computed once and shared by all settings through a `glocal.FitCache` (GLOCAL
    with the same ``random_state`` finds the same groups for every setting, so this changes
    no result).

    **Racing over the folds** (``racing``, default 1). The first fold fits every setting
    (the first two when fewer than a fifth of the label entries are observed: the fitted
    models then vary from fold to fold more than one fold's validation rows show, and
    racing after one fold dropped settings that won the later ones, as the missing-labels
    study of the documentation measures). After it, and after each later fold but the
    last, a setting stops being fitted when its
    mean validation score over the folds done is behind the best one's by more than
    ``racing`` standard errors of their difference; the later folds fit the others only.
    The standard error is measured on the validation rows, whatever ``scoring`` is: each
    fold cuts its validation rows at random into 10 parts, the same for every setting, and
    scores every setting on each part; the variance of two settings' difference over the
    parts, divided by 10, is that of their difference on the fold (exact for a mean over
    rows such as Ap), and the folds' variances add up. A setting whose scores vanished
    (below) stops at once. Racing changes which settings are fitted, never where a kept
    one starts: a dropped setting that a kept setting of its path starts from is still
    fitted (and scored); the settings after the last kept one of a path, and whole paths,
    are not. The best setting is chosen among the settings fitted on every fold.
    ``racing=None`` fits every setting on every fold, the search as ``GridSearchCV`` makes
    it.

    **Looser fits along the paths, exact refit.** The fits along the paths only rank the
    settings: they stop at ``path_tol`` (1e-2, against GLOCAL's 1e-4) and their block
    optimizers at `PATH_SOLVER_OPTIONS` (20 iterations, or a gradient norm 1e-2 of the
    starting one); none of this changes the objective, only how far it is minimized. The
    final refit on all the data is, by default (``refit_start="scratch"``), a plain
    ``estimator.set_params(**best_params_).fit(X, Y)``, from GLOCAL's own initial point at
    its own ``tol`` and solver options, the same model ``GridSearchCV(refit=True)`` would
    return. ``path_param=None`` with ``path_tol=None`` and ``racing=None`` fits every
    setting as ``GridSearchCV`` does (the same scores).

    GLOCAL's objective is not convex, so a warm-started fit may end at a different local
    solution than a fit from scratch; ``benchmarks/bench_glocalcv.py`` measures how the
    chosen setting compares with ``GridSearchCV``'s.

    Parameters
    ----------
    estimator : GLOCAL, GLObal or loCAL instance, default=None
        The model whose settings are searched; its other parameters are kept. None means
        the recommended model above, ``GLOCAL(loss="squared_hinge", fit_intercept=True,
        lam_v=0, n_latent=min(n_labels, 100), max_iter=200, init_max_iter=300,
        tol=1e-3)``;
        pass ``GLOCAL()`` to tune the paper's.
    param_grid : dict or list of dict, default=None
        As for ``GridSearchCV``: parameter names of ``estimator`` to lists of values. None
        means `DEFAULT_PARAM_GRID`: ``lam2`` in {16, 4, 2, 1} and ``normalize_rows`` in
        {False, True}. Any parameter of the estimator may appear (new ones need no change
        here).
    path_param : str or None, default="lam2"
        The parameter along which fits are warm-started; it must not change the shape of
        the model (not ``n_latent``, ``n_groups`` or ``fit_intercept``). None fits every
        setting from scratch. A grid without this parameter has paths of one point.
    cv : int, cross-validation generator or iterable, default=3
        As for ``GridSearchCV``; an int means shuffled `sklearn.model_selection.KFold`
        seeded by ``random_state``.
    path_tol : float or None, default=1e-2
        ``tol`` of the fits along the paths (the refit uses the estimator's own ``tol``),
        whose block optimizers also stop at `PATH_SOLVER_OPTIONS`. None means the
        estimator's own ``tol`` and solver options for every fit.
    scoring : callable or None, default=None
        ``scoring(estimator, X, Y)``, higher is better; None means
        `glocal.metrics.observed_two_way_average_precision` of the validation scores
        (`glocal.metrics.observed_two_way_average_precision_scorer`).
    refit : bool, default=True
        Refit the best setting on all the data (needed for ``predict``).
    n_jobs : int or None, default=None
        Folds fitted in parallel by joblib (each fold walks all paths). With ``racing``,
        the first fold (the first two with most labels missing, as below) is fitted
        first, then the others by batches of ``n_jobs`` folds, the settings dropped after
        each batch.
    thresholds : {"cv", "sign"}, default="cv"
        The cut of every label's scores in ``predict``: tuned by the cross-validation
        (above), or 0.
    random_state : int, RandomState instance or None, default=None
        Seeds the folds when ``cv`` is an int, and the fits of an estimator whose own
        ``random_state`` is None; an int makes ``fit`` reproducible bit for bit.
    racing : float or None, default=1.0
        After each fold but the last, stop fitting the settings whose mean score is behind
        the best by more than this many standard errors of the difference (see above);
        None fits every setting on every fold.
    refit_start : {"scratch", "fold"}, default="scratch"
        Where the refit on all the data starts: GLOCAL's own initial point, or the best
        setting's model of the last fold (U, W and the Z_m carried over, V from W^T X),
        then stopped at ``path_tol``. From a fold's model the search took 0.86 of the CPU
        time on the design datasets, but kept the mean test Ap within 0.002 of the refit
        from GLOCAL's own start in 4 of 9 cells only (the documentation has the numbers).
    verbose : int, default=0
        1: on a terminal (standard error), a progress bar through the search's fits, with
        the time left once the first fold is done (from its fits' times; the fits that
        racing drops leave the count), and the refit's time elapsed and round (as
        ``GLOCAL(verbose=1)`` shows it); then one line when each ends, saying what was
        chosen and how long it took; 2 and more: also a line per fitted setting and fold.

    Each distinct warning of the fits is raised once, when ``fit`` ends, labels named by
    the columns of a DataFrame Y; the folds' own label warnings are left out (they speak of
    a fold's rows: the check of all of Y says what holds for the data).

    Attributes
    ----------
    best_estimator_ : estimator
        The best setting refitted on all the data (when ``refit``).
    best_params_ : dict
        The setting of highest mean validation score (the first one on ties).
    best_score_ : float
        Its mean validation score.
    best_index_ : int
        Its index in ``cv_results_["params"]``.
    cv_results_ : dict of ndarray
        As ``GridSearchCV``'s, settings in ``ParameterGrid`` order: ``params``,
        ``param_<name>``, ``split<i>_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score``, ``mean_fit_time``, ``std_fit_time``,
        ``mean_n_init_iter`` and ``mean_n_iter`` (the rounds of the basic-model
        initialisation and Algorithm 1's outer iterations, averaged over folds). A setting
        that racing dropped and did not fit has NaN scores, times and rounds on the folds
        it was not fitted on, its means over the folds it was fitted on, and ranks after
        every setting fitted on all folds. A fit whose scores vanish (every entry of U V
        below 1e-6: a weight too large wiped the model out) scores -inf on its fold, so that
        setting is never chosen unless every setting vanished; one warning names them. No
        later fit of its path starts from it.
    n_splits_ : int
    refit_time_ : float
        Seconds spent refitting the best setting.
    thresholds_ : ndarray of shape (n_labels,)
        The threshold of every label that ``predict`` uses.
    coef_ : ndarray of shape (n_labels, n_features)
        ``best_estimator_.coef_``, each label's weight of each feature.
    intercept_ : ndarray of shape (n_labels,)
        ``best_estimator_.intercept_``: ``decision_function(X)`` is ``X @ coef_.T +
        intercept_``, or ``normalize(X) @ coef_.T + intercept_`` when the search chose
        ``normalize_rows`` (`sklearn.preprocessing.normalize`, every row scaled to unit
        norm; ``best_estimator_.normalize_rows_`` says which).
    calibration_slopes_, calibration_intercepts_ : ndarray of shape (n_labels,)
        Every label's Platt map of its scores to probabilities (``predict_proba``), fitted
        on the chosen setting's out-of-fold scores.
    n_features_in_ : int

    See Also
    --------
    glocal.metrics.observed_two_way_average_precision_scorer : the criterion as a scorer,
        for ``GridSearchCV``.

    Examples
    --------
    >>> from glocal import GLOCAL, GLOCALCV
    >>> from glocal.datasets import make_glocal_data
    >>> from glocal.protocol import sample_observed
    >>> data = make_glocal_data(random_state=0)
    >>> Y = sample_observed(data.Y, 0.5, random_state=0)  # half the labels missing
    >>> model = GLOCALCV(random_state=0).fit(data.X, Y)  # the recommended estimator
    >>> sorted(model.best_params_)
    ['lam2', 'normalize_rows']
    >>> model.best_estimator_.loss, model.best_estimator_.n_latent  # 12 labels
    ('squared_hinge', 12)
    >>> search = GLOCALCV(GLOCAL(n_latent=4), {"lam2": [4.0, 1.0]}, cv=3,
    ...                   random_state=0).fit(data.X, Y)  # the paper's model, another grid
    >>> sorted(search.best_params_)
    ['lam2']
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "decision_function"]), None],
        "param_grid": [dict, list, None],
        "path_param": [str, None],
        "cv": ["cv_object"],
        "path_tol": [Interval(Real, 0, None, closed="left"), None],
        "scoring": [callable, None],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
        "thresholds": [StrOptions({"cv", "sign"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "racing": [Interval(Real, 0, None, closed="left"), None],
        "refit_start": [StrOptions({"fold", "scratch"})],
    }
    _fitted_attributes = {
        "best_estimator_": Model(),
        "best_params_": Data(),
        "best_score_": Number(finite=False),
        "best_index_": Integer(),
        "cv_results_": Data(),
        "n_splits_": Integer(1),
        "refit_time_": Number(),
        "thresholds_": Array("f", ("n_labels",)),
        # Absent from models saved before probabilities were calibrated (they still load).
        "calibration_slopes_": _Optional(Array("f", ("n_labels",))),
        "calibration_intercepts_": _Optional(Array("f", ("n_labels",))),
        "n_features_in_": Integer(1),
    }

    def __init__(self, estimator=None, param_grid=None, path_param="lam2", cv=3,
                 path_tol=1e-2, scoring=None, refit=True, n_jobs=None, thresholds="cv",
                 random_state=None, verbose=0, racing=1.0, refit_start="scratch"):
        self.estimator = estimator
        self.param_grid = param_grid
        self.path_param = path_param
        self.cv = cv
        self.path_tol = path_tol
        self.scoring = scoring
        self.refit = refit
        self.n_jobs = n_jobs
        self.thresholds = thresholds
        self.random_state = random_state
        self.verbose = verbose
        self.racing = racing
        self.refit_start = refit_start

    def fit(self, X, Y, groups=None):
        """Score the settings by cross-validation (racing them over the folds unless
        ``racing`` is None), then refit the best on all the data.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            1 positive, 0 negative, NaN missing.
        groups : array-like of shape (n_samples,), optional
            GLOCAL's local groups (as for `GLOCAL.fit`), split with the rows; k-means on
            each training fold when omitted. Not used to make the folds.

        Returns
        -------
        self
        """
        self._validate_params()
        _check_feature_names(self, X, reset=True)
        given = X  # refitted as given, so that the model keeps a frame's feature names
        names = validation.label_names_of(Y)
        with validation.warnings_once(names) as fold_warnings:
            X = validation.check_features(X)
            if Y is not None:  # densified once: scipy-sparse labels and pandas nullable frames
                Y = validation.dense_labels(Y)
            validation.check_labels(Y, X.shape[0])
            Y = Y.astype(float)
            base = self._base_estimator(Y.shape[1])  # n_latent of the default from the labels
            candidates = list(ParameterGrid(self._grid()))
            for params in candidates:  # unknown names or values fail here, before any fit
                clone(base).set_params(**params)
            if groups is not None:
                groups = validation.check_groups(groups, X.shape[0])
            folds = self._folds(X)
            self._check_folds(Y, folds, base, candidates, groups)
            tic = time.perf_counter()
            runs = self._search(base, candidates, X, Y, groups, folds)
            for run in runs:
                fold_warnings.extend(run.pop())
            self._store_results(candidates, runs)
            self._calibrate(Y, folds, [run.pop() for run in runs])
            warn_if_any_vanished(candidates, [run[5] for run in runs])
            n_fits = int(sum(np.sum(~np.isnan(run[1])) for run in runs))
            self._say(f"scored {counted(len(candidates), 'setting')} on "
                      f"{counted(len(folds), 'fold')} ({counted(n_fits, 'fit')}) in "
                      f"{time.perf_counter() - tic:.1f} s; "
                      f"best {settings_text(self.best_params_)} (mean CV score "
                      f"{self.best_score_:.4f})")
            if self.refit:
                start = (runs[-1][7][self.best_index_] if self.refit_start == "fold"
                         else None)
                self._refit(base, given, Y, groups, start)
        self.n_features_in_ = X.shape[1]
        return self

    def _check_folds(self, Y, folds, base, candidates, groups):
        """Refuse folds that cannot be scored or clustered, before any fit."""
        if self.scoring in (None, observed_average_precision_scorer,
                            observed_two_way_average_precision_scorer,
                            observed_weighted_average_precision_scorer):
            validation.check_folds_can_be_scored(Y, folds)
        if groups is None:  # k-means on every training fold: say it now, not after fits
            most = max(params.get("n_groups", base.n_groups) for params in candidates)
            rows = min(len(train) for train, _ in folds)
            if most > rows:
                raise ValueError(f"n_groups={most} is larger than the {rows} rows of a "
                                 f"training fold (of {Y.shape[0]} samples, {len(folds)} "
                                 "folds)")

    def _search(self, base, candidates, X, Y, groups, folds):
        """Every fold's walk along the paths (`_walk_fold`), with a progress bar over the
        fits; each run ends with the warnings its fits raised.

        Without racing the folds are walked in parallel (``n_jobs``). With racing the first
        fold (the first two with most labels missing, `first_racing_fold`) is walked first,
        then the others by batches of ``n_jobs`` folds; after each batch but the last,
        `contenders` drops the settings behind the best, and the following folds fit the
        others only, and the settings their fits start from."""
        plan = _plan(candidates, self.path_param)
        n_folds, n_jobs = len(folds), effective_n_jobs(self.n_jobs)
        racing = self.racing is not None and n_folds > 1
        first = first_racing_fold(Y, n_folds) if racing else n_folds
        batches = [list(range(first)), *(list(range(i, min(i + n_jobs, n_folds)))
                                         for i in range(first, n_folds, n_jobs))]
        # Racing's parts of each fold's validation rows; drawn only when racing, so that
        # the search without it draws nothing from a given RandomState.
        seeds = (check_random_state(self.random_state).randint(np.iinfo(np.int32).max,
                                                               size=n_folds)
                 if racing else [None] * n_folds)
        kept = alive = np.ones(len(candidates), dtype=bool)  # raced; fitted (`_needed`)
        results = []
        with SearchProgress(n_folds, len(candidates), self.verbose) as progress:
            # One process: the bar moves at every fit; else at every fold that ends.
            each_fit = progress.fit_done if n_jobs == 1 else None
            for batch in batches:
                last = batch is batches[-1]
                runs = Parallel(n_jobs=self.n_jobs, return_as="generator")(
                    delayed(validation.call_recording_warnings)(
                        _walk_fold, base, candidates, plan, X, Y, groups, *folds[i],
                        self.scoring, self.path_tol, i, n_folds, self.verbose, each_fit,
                        alive, None if last else seeds[i],
                        self.refit_start == "fold" and i == n_folds - 1,
                        ignore=(validation.LabelWarning,))
                    for i in batch)
                for run, records in runs:
                    if each_fit is None:
                        progress.fold_done(int(alive.sum()))
                    results.append([*run, records])
                if not last:
                    kept = contenders(np.array([run[0] for run in results]),
                                      np.array([run[6] for run in results]), kept,
                                      self.racing)
                    needed = _needed(plan, kept)
                    progress.drop([step for step, (i, _) in enumerate(plan)
                                   if alive[i] and not needed[i]], n_folds - len(results))
                    alive = needed
        return results

    def _refit(self, base, X, Y, groups, start):
        """Fit the best setting on all the rows from ``start`` (a fold's model of it, or
        None: GLOCAL's own initial point), with a progress bar through the fit."""
        best = clone(base).set_params(**self.best_params_)
        if start is not None and self.path_tol is not None:
            best.set_params(tol=self.path_tol)
        tic = time.perf_counter()
        if not self.verbose:
            self.best_estimator_ = best.fit(X, Y, groups, init=start)
        else:
            progress = fit_progress(best, "GLOCALCV refit", self.verbose)
            try:
                self.best_estimator_ = best.fit(X, Y, groups, init=start, callback=progress)
            finally:
                progress.finish()
        self.refit_time_ = time.perf_counter() - tic
        self._say(f"refitted {settings_text(self.best_params_)} on all {Y.shape[0]} rows in "
                  f"{self.refit_time_:.1f} s ({iterations_text(best)})")

    def _calibrate(self, Y, folds, held_out):
        """Each label's Platt map (`fit_platt`), fitted on the best setting's scores of the
        validation rows of every fold, pooled (``held_out``: each fold's scores of every
        setting)."""
        scores = np.vstack([fold[self.best_index_] for fold in held_out])
        labels = np.vstack([Y[test] for _, test in folds])
        self.calibration_slopes_, self.calibration_intercepts_ = fit_platt(scores, labels)

    def _say(self, text):
        if self.verbose:
            print(f"[GLOCALCV] {text}", flush=True)

    def _base_estimator(self, n_labels):
        if self.estimator is None:
            base = GLOCAL(n_latent=min(n_labels, MAX_DEFAULT_LATENT), **DEFAULT_ESTIMATOR_PARAMS)
        else:
            base = clone(self.estimator)
        if not isinstance(base, GLOCAL):
            raise ValueError(f"GLOCALCV searches GLOCAL, GLObal or loCAL; got "
                             f"{type(base).__name__} (use GridSearchCV for other estimators)")
        if base.random_state is None and self.random_state is not None:
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            base.set_params(random_state=seed)
        return base

    def _grid(self):
        grid = DEFAULT_PARAM_GRID if self.param_grid is None else self.param_grid
        if self.path_param in ("n_latent", "n_groups", "fit_intercept"):
            raise ValueError(f"path_param={self.path_param!r} changes the shape of the model; "
                             "warm starts need a weight such as 'lam2', 'lam', 'lam3' or 'lam4'")
        return grid

    def _folds(self, X):
        return validation.cv_folds(self.cv, X, self.random_state)

    def _store_results(self, candidates, runs):
        scores = np.array([run[0] for run in runs])  # n_splits x n_candidates
        times = np.array([run[1] for run in runs])
        fitted = ~np.isnan(times)  # racing fits a setting on the folds before its drop only
        n_init_iter, n_iter = (np.array([run[i] for run in runs]) for i in (2, 3))
        thresholds = np.array([run[4] for run in runs])  # n_splits x n_candidates x n_labels
        results = {"params": candidates}
        for name in sorted({name for params in candidates for name in params}):
            column = np.ma.masked_all(len(candidates), dtype=object)
            for i, params in enumerate(candidates):
                if name in params:
                    column[i] = params[name]
            results[f"param_{name}"] = column
        for i, split in enumerate(scores):
            results[f"split{i}_test_score"] = split
        # Over the folds each setting was fitted on (a user's scorer's NaN is kept).
        (mean, std), (mean_time, std_time), (mean_init, _), (mean_iter, _) = (
            _fold_stats(values, fitted) for values in (scores, times, n_init_iter, n_iter))
        results["mean_test_score"] = mean
        results["std_test_score"] = std
        # Rank 1 is the best; ties share the smallest rank. A setting that racing dropped
        # ranks after every setting fitted on all folds, and NaN (from a user's scorer) ranks
        # last, as in GridSearchCV.
        dropped = ~fitted.all(axis=0)
        order = list(zip(np.where(np.isnan(mean), 2, dropped), np.where(np.isnan(mean), 0, -mean)))
        ranked = np.array([1 + sum(other < this for other in order) for this in order],
                          dtype=np.int32)
        results["rank_test_score"] = ranked
        results["mean_fit_time"] = mean_time
        results["std_fit_time"] = std_time
        results["mean_n_init_iter"] = mean_init
        results["mean_n_iter"] = mean_iter
        self.cv_results_ = results
        self.n_splits_ = len(runs)
        self.best_index_ = int(np.argmin(ranked))  # the first on ties
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(mean[self.best_index_])
        self.thresholds_ = (mean_thresholds(thresholds[:, self.best_index_])
                            if self.thresholds == "cv" else np.zeros(thresholds.shape[2]))

    @property
    def coef_(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.coef_

    @property
    def intercept_(self):
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.intercept_

    def decision_function(self, X):
        """Label scores of the refitted best setting, shape (n_samples, n_labels)."""
        check_is_fitted(self, "best_estimator_")
        _check_feature_names(self, X, reset=False)
        return self.best_estimator_.decision_function(X)

    def predict(self, X):
        """1 where a label's score is above its threshold ``thresholds_``, else 0.

        With ``thresholds="cv"`` each label's threshold was tuned by the search's
        cross-validation (see the class's description); with ``"sign"`` it is 0, the
        paper's rule.
        """
        return (self.decision_function(X) > self.thresholds_).astype(int)

    def predict_proba(self, X):
        """Each label's probability: its score mapped by Platt scaling tuned by the search.

        p_j(x) = 1 / (1 + exp(-(a_j s_j(x) + b_j))), with s_j the refitted model's score of
        label j (`decision_function`) and a_j, b_j (``calibration_slopes_``,
        ``calibration_intercepts_``) fitted when the search ran, on the chosen setting's
        scores of the validation rows of every fold, pooled: they minimize the
        cross-entropy of the label's observed entries there (against Platt's smoothed
        targets, missing entries left out; `fit_platt`), with a_j >= 0, so that a higher
        score never gives a lower probability (a label whose held-out scores rank its
        entries backwards gets a_j = 0). No further fit is needed. A label never positive
        (or never negative) among its observed training entries gets (N+ + 1) / (N + 2) for
        every row, N+ of its N observed entries being positive.
        This holds for every loss: with ``loss="logistic"`` the refitted model's own
        log-odds remain ``best_estimator_.predict_proba``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_labels)
            In (0, 1) (at least float64's machine epsilon from either end).
        """
        check_is_fitted(self, "best_estimator_")
        if not hasattr(self, "calibration_slopes_"):
            raise AttributeError("this GLOCALCV was fitted by a glocal version without "
                                 "calibrated probabilities; fit it again for predict_proba")
        return platt_proba(self.decision_function(X), self.calibration_slopes_,
                           self.calibration_intercepts_)
