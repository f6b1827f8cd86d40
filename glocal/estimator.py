"""The GLOCAL estimator: validate, call `glocal.solver.glocal_fit`, keep the arrays."""

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ._base import (
    MultiLabelMixin,
    _check_feature_names,
    if_logistic_loss,
    warn_if_scores_vanish,
)
from ._fit_data import (
    FitCache,
    all_callbacks,
    blas_controller,
    glocal_data,
    is_dask_array,
    solver_options,
    warn_unless_converged,
)
from ._fitted import Array, Boolean, Floats, Integer, Mapping, Number
from ._utils import validation
from ._utils.progress import fit_progress
from .solver import glocal_fit
from .solver.correlations import CORRELATION_TERMS
from .solver.losses import LOSSES
from .solver.optimizers import OPTIMIZERS


class GLOCAL(MultiLabelMixin, BaseEstimator):
    """Multi-label learning with global and local label correlations (Zhu, Kwok & Zhou, 2018).

    Learns a low-rank factorization Y ~ U V of the observed labels, a linear map V ~ W^T X
    from features to latent labels, and one label Laplacian Z_m Z_m^T (unit diagonal) per
    group of samples, by minimizing the paper's Eq. (4)::

        ||J o (Y - U V)||^2 + lam ||V - W^T X||^2 + lam2 (||U||^2 + ||V||^2 + ||W||^2)
          + sum_m [ lam3 (n_m/n) tr(F_0^T Z_m Z_m^T F_0) + lam4 tr(F_m^T Z_m Z_m^T F_m) ]

    with F_0 = U W^T X, F_m = U W^T X_m, Y the labels mapped to +1 / -1 and J the mask of
    observed entries. With default arguments this is exactly the paper's objective on X and Y
    as given: no rescaling of the weights, no intercept, no preprocessing.

    Opt-in extensions (not in the paper: ``loss``, ``class_weight``, ``lam_v``) minimize::

        sum_{(j, i) observed} c_ji ell(y_ji, (U V)_ji) + lam ||V - W^T X||^2
          + lam2 (||U||^2 + ||W||^2) + lam_v ||V||^2 + (the same manifold terms)

    with ``loss`` choosing ell (``"squared"``: (f - y)^2, the paper's; ``"squared_hinge"``:
    max(0, 1 - y f)^2, LinearSVC's; ``"logistic"``: log(1 + exp(-y f))), ``class_weight``
    the weights c_ji (1, or per-label balanced) and ``lam_v`` (lam2 unless given). With a
    loss other than the squared one, or class weights, V has no closed form: with
    ``v_closed_form=True`` each of its columns is solved by Newton's method, else the whole
    block by preconditioned trust regions like W; U is then solved by Newton's method on its
    rows (unless an optimizer is named for it). ``normalize_rows=True`` minimizes the
    same objective with every column x_i of X replaced by x_i / ||x_i||.

    Parameters
    ----------
    n_latent : int, default=20
        k, the dimension of the latent label space (also the width of every Z_m).
    n_groups : int, default=4
        g, the number of local groups found by k-means on X when ``fit`` gets no ``groups``.
        Above 20,000 samples (`glocal.groups.KMEANS_MAX_ROWS`; the paper's sets have at
        most 16,105) the centers are fitted on 20,000 rows drawn with ``random_state`` and
        every sample joins its nearest center.
    lam : float, default=1.0
        Weight of ||V - W^T X||^2 (the paper fixes it to 1).
    lam2 : float, default=4.0
        Weight of the Frobenius regularizer ||U||^2 + ||V||^2 + ||W||^2. On U and V it acts
        as 2 lam2 times the nuclear norm of U V, which soft-thresholds the singular values of
        the label matrix at lam2: a label with fewer than about (lam2 / 2)^2 positives
        is then ranked as if it had none, so large values hurt data with rare labels. The
        default was chosen across ten benchmark datasets (see the Performance study in
        the documentation).
    lam3 : float, default=1e-3
        Weight of the global label-manifold regularizer.
    lam4 : float, default=1e-3
        Weight of the local label-manifold regularizers.
    correlation : {"laplacian", "centered", "asymmetric"}, default="laplacian"
        The correlation terms that lam3 and lam4 weigh. ``"laplacian"``: the paper's, above.
        ``"centered"`` (not in the paper): the same Laplacians on the scores' deviations
        from their means, F_0 - f_0 1^T and F_m - f_m 1^T (f_0 the mean score of each label
        over all samples, f_m over group m), so that they read the scores' covariance and
        not their offsets (`glocal.solver.correlations.centered`). ``"asymmetric"`` (not in the
        paper; its conclusion's future work): a directed weight A_m[i, j] >= 0 per pair of labels
        and group for "label i implies label j", each row summing to at most one (the rest, a_m[i],
        on "label i implies no label"), learned with the scores' violations of it::

            sum_m [ lam3 (n_m/n) sum_{s <= n} + lam4 sum_{s in group m} ]
                  sum_i [ sum_{j != i} A_m[i, j] max(0, f_i(x_s) - f_j(x_s))^2 + a_m[i] v_0 ]
              + tau (lam3 + lam4) sum_m n_m sum_i [ sum_{j != i} A_m[i, j] log A_m[i, j]
                                                   + a_m[i] log a_m[i] + log l ]

        with v_0 = 0.25 and tau = 0.1 (`glocal.solver.correlations.implications`): each row of A_m
        is then a Gibbs distribution over the labels that label i may imply, and none, graded by
        how much the scores contradict each. It costs n l^2 per pass over the samples, against the
        paper's l k^2.
    max_iter : int, default=30
        Maximum number of outer iterations of Algorithm 1; a ``ConvergenceWarning`` says
        when it was reached before ``tol``.
    init_max_iter : int, default=30
        Maximum number of rounds of the basic-model initialisation (Eq. 1),
        with the same warning; 0 skips it (from ``fit(..., init=...)``, a solution of a
        nearby model, Algorithm 1 then starts at once).
    tol : float, default=1e-4
        Relative decrease of the objective below which a loop stops (the basic-model
        initialisation also waits for what its decreases leave to come to be that small).
    optimizer : {"auto", "trust_regions", "conjugate_gradient", "steepest_descent"} or dict, \
            default="auto"
        pymanopt optimizer of every block, or a dict from block name ("U", "V", "W", "Z")
        to optimizer name. ``"auto"`` takes the fastest measured per block: preconditioned
        trust regions for U (Newton's method on its rows under a loss other than the
        paper's) and W, conjugate gradients for Z. ``"steepest_descent"``
        (Armijo backtracking) with ``v_closed_form=False`` mirrors the paper's Manopt.
    v_closed_form : bool, default=True
        Solve the V block exactly, column by column, instead of by an optimizer on the
        whole V: by the paper's closed form (``loss="squared"``, ``class_weight=None``),
        else by Newton's method on every column, run to convergence.
    solver_options : dict, default=None
        Further fields of `glocal.solver.SolverOptions` (other than ``optimizer`` and
        ``v_closed_form``): ``block_max_iter``, ``max_inner`` and ``block_rtol``, e.g.
        ``{"block_rtol": 1e-2}`` for looser block solves. None of them changes the
        objective, only how it is minimized. (The key ``"_levers"`` takes a dict of
        `glocal.solver.plan.Levers`, switches that only benchmarks flip.)
    fit_intercept : bool, default=False
        Not part of the paper's model. When True, a constant feature of value
        ``intercept_scaling`` is appended to X (regularized with W, as liblinear does), so
        that every label gets a bias; this matters for features without a constant offset
        (e.g. centred data) and for ranking frequent labels.
    intercept_scaling : float, default=1.0
        Value of that constant feature.
    loss : {"squared", "squared_hinge", "logistic"}, default="squared"
        Not part of the paper's model unless ``"squared"``. Loss ell(y, f) of each observed
        label entry (y = +1 / -1, f its entry of U V), see above and `glocal.solver.losses`.
    class_weight : {None, "balanced"}, default=None
        Not part of the paper's model. ``"balanced"`` weighs every observed entry of label j
        by n_j / (2 n_j(y)), with n_j its observed entries and n_j(y) those of the entry's
        class, as scikit-learn's ``class_weight="balanced"`` does for each binary problem:
        the positives of a rare label then weigh as much as its negatives.
    lam_v : float or None, default=None
        Not part of the paper's model unless None (then lam2). Weight of ||V||^2 alone. The
        paper's lam2 ||V||^2 shrinks the latent labels of every sample, hence all its label
        scores, missing entries included: tied to W^T X (large lam) it acts as a ridge
        lam2 ||X W||^2 that grows against the label-fit term as fewer labels are observed.
        A small ``lam_v`` with a large ``lam`` leaves trace-norm-regularized linear models
        U W^T x fitted on the observed entries. Measured with missing labels (see the
        Missing-labels study in the documentation): ``lam_v=0, fit_intercept=True,
        n_latent=min(n_labels, 100)`` with lam2 tuned in {16, 4, 2, 1}, the design
        `glocal.GLOCALCV` searches by default.
    normalize_rows : bool, default=False
        Not part of the paper's model. When True, every sample is scaled to unit Euclidean
        norm, x / ||x|| (a zero row stays zero), before anything else in ``fit`` (k-means
        included) and in ``decision_function``: the model minimizes its objective with X
        replaced by D^-1 X, D = diag(||x_1||, ..., ||x_n||), and ``W_`` acts on the scaled
        rows. lam2 ||W||^2 then means the same on every dataset (features of rows with
        norm s make it s times weaker on the scores U W^T x), and documents of different
        lengths weigh alike. Measured with missing labels (the Missing-labels study in the
        documentation): searched by CV with lam2, it lifts GLOCAL above BR on Enron; CV
        left it off on Image, where it hurts.
    random_state : int, RandomState instance or None, default=None
        Seeds k-means and the initial point.
    verbose : int, default=0
        1: a line through the fit on a terminal (standard error; nothing when it is not a
        terminal) with the time elapsed and the round of the loop it is in (no time left:
        how many rounds a loop takes is known only when it stops); 2 and more: also print
        the objective after every round.

    Attributes
    ----------
    U_ : ndarray of shape (n_labels, n_latent)
    V_ : ndarray of shape (n_latent, n_samples)
        Latent labels of the training samples (a Dask array, chunked like X, when X is
        one).
    W_ : ndarray of shape (n_features, n_latent)
    intercept_ : ndarray of shape (n_labels,)
        Label biases (zero unless ``fit_intercept``); scores are X W_ U_^T + intercept_.
    coef_ : ndarray of shape (n_labels, n_features)
        ``U_ W_^T``, each label's weight of each feature (computed when read):
        ``decision_function(X)`` is ``X @ coef_.T + intercept_``, and with
        ``normalize_rows_`` it is ``normalize(X) @ coef_.T + intercept_``
        (`sklearn.preprocessing.normalize`, every row scaled to unit norm).
    Z_ : ndarray of shape (n_groups_, n_labels, n_latent)
        Factors of the group label Laplacians; every row has unit norm. With
        ``correlation="asymmetric"``, the directed weights A_m instead, shape
        (n_groups_, n_labels, n_labels).
    groups_ : ndarray of shape (n_samples,)
        Group id of every training sample, in ``[0, n_groups_)`` (a Dask array when X is
        one).
    n_groups_ : int
        Number of groups actually used.
    objective_history_ : list of float
        Eq. (4) after the basic-model initialisation and after every outer
        iteration.
    init_objective_history_ : list of float
        The basic model's objective (Eq. 1) at the initial point and after every
        initialisation round.
    block_objective_history_ : ndarray of shape (n_iter_, 4)
        Eq. (4) after the Z, V, U and W updates of every outer iteration (the
        paper's Figure 4 per block); the last column matches ``objective_history_[1:]``.
    n_iter_ : int
        Outer iterations run.
    n_init_iter_ : int
        Basic-model initialisation rounds run.
    local_correlations_ : ndarray of shape (n_groups_, n_labels, n_labels)
        Learned label correlations of each group, ``-<z_i, z_j>`` off the unit diagonal
        (Z_m Z_m^T plays the role of a normalized Laplacian I - S_m). They estimate how the
        model's scores of two labels go together on the group's samples, not the labels:
        S_m[i, j] is drawn to +1 where the two labels' scores have a positive inner product
        over the group (their covariance with ``correlation="centered"``), to -1 where it is
        negative. Against the Pearson correlation of the training labels in the group (the
        shared datasets measured, the default weights; the correlation study) their
        Spearman correlation over label pairs averaged +0.25 (``"laplacian"``), +0.23
        (``"centered"``); with ``"asymmetric"``, the directed weights A_m (row implies
        column, in [0, 1]), graded by how rarely the scores put the row's label above the
        column's, against P(column relevant | row relevant): +0.29. Computed from ``Z_``
        when read (not kept).
    global_correlation_ : ndarray of shape (n_labels, n_labels)
        ``sum_m (n_m / n) local_correlations_[m]``, the paper's Lemma 1, computed when read.
        Against the labels' Pearson correlation: Spearman +0.28 (``"laplacian"``), +0.20
        (``"centered"``), with the labels' sign on 54 % and 61 % of the pairs (chance: about
        half); ``"asymmetric"`` against P(column relevant | row relevant): +0.29.
    fit_times_ : dict
        Seconds spent in ``"clustering"``, ``"init"`` (basic-model
        initialisation) and ``"main"`` (Algorithm 1).
    normalize_rows_ : bool
        Whether the model was fitted on unit-norm rows, so scores new rows as such (read by
        ``decision_function``: ``set_params`` after ``fit`` changes no prediction).
    n_features_in_ : int

    Notes
    -----
    Zhu, Y., Kwok, J. T., & Zhou, Z.-H. (2018). Multi-label learning with global and local
    label correlation. IEEE Transactions on Knowledge and Data Engineering, 30(6), 1081-1094.
    """

    _parameter_constraints = {
        "n_latent": [Interval(Integral, 1, None, closed="left")],
        "n_groups": [Interval(Integral, 1, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "lam2": [Interval(Real, 0, None, closed="neither")],
        "lam3": [Interval(Real, 0, None, closed="left")],
        "lam4": [Interval(Real, 0, None, closed="left")],
        "correlation": [StrOptions(set(CORRELATION_TERMS))],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "init_max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "optimizer": [StrOptions({"auto", *OPTIMIZERS}), dict],
        "v_closed_form": ["boolean"],
        "solver_options": [dict, None],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "lam_v": [Interval(Real, 0, None, closed="left"), None],
        "loss": [StrOptions(set(LOSSES))],
        "class_weight": [StrOptions({"balanced"}), None],
        "normalize_rows": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # What fit sets (see glocal._fitted): checked when a model is saved or loaded.
    _fitted_attributes = {
        "U_": Array("f", ("n_labels", "n_latent")),
        "V_": Array("f", ("n_latent", "n_samples")),
        "W_": Array("f", ("n_features_in_", "n_latent")),
        # The correlation term's state: n_latent wide for the Laplacians, n_labels for the
        # directed weights.
        "Z_": Array("f", ("n_groups_", "n_labels", "n_state")),
        "_correlation": Array("U", ()),
        "_latent_bias": Array("f", ("n_latent",), none=True),
        "intercept_": Array("f", ("n_labels",)),
        "normalize_rows_": Boolean(),
        "groups_": Array("i", ("n_samples",)),
        "n_groups_": Integer(1),
        "_group_fractions": Array("f", ("n_groups_",)),
        "objective_history_": Floats(),
        "init_objective_history_": Floats(),
        "block_objective_history_": Array("f", ("n_iter_", 4)),
        "n_iter_": Integer(),
        "n_init_iter_": Integer(),
        "fit_times_": Mapping(Number()),
        "n_features_in_": Integer(1),
    }

    def __init__(self, n_latent=20, *, n_groups=4, lam=1.0, lam2=4.0, lam3=1e-3, lam4=1e-3,
                 correlation="laplacian", max_iter=30, init_max_iter=30, tol=1e-4,
                 optimizer="auto", v_closed_form=True, solver_options=None,
                 fit_intercept=False, intercept_scaling=1.0, loss="squared",
                 class_weight=None, lam_v=None, normalize_rows=False, random_state=None,
                 verbose=0):
        self.n_latent = n_latent
        self.n_groups = n_groups
        self.lam = lam
        self.lam2 = lam2
        self.lam3 = lam3
        self.lam4 = lam4
        self.correlation = correlation
        self.max_iter = max_iter
        self.init_max_iter = init_max_iter
        self.tol = tol
        self.optimizer = optimizer
        self.v_closed_form = v_closed_form
        self.solver_options = solver_options
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.loss = loss
        self.class_weight = class_weight
        self.lam_v = lam_v
        self.normalize_rows = normalize_rows
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, Y, groups=None, *, init=None, cache=None, callback=None):
        """Fit the model.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Features; sparse input stays sparse. A Dask array chunked by rows (dense or
            scipy.sparse chunks) is fitted chunk by chunk, see Notes.
        Y : {array-like, sparse matrix, dask array} of shape (n_samples, n_labels)
            Label indicator: 1 positive, 0 negative, NaN missing. For the paper's
            {-1, 0, +1} encoding use `glocal.from_signed_labels`. A scipy-sparse Y
            (implicit zeros negative, stored ones positive, stored NaN missing) is never
            copied into dense n_samples x n_labels floats, nor is its mask, when
            ``loss="squared"``, ``class_weight=None`` and ``v_closed_form=True`` (the
            defaults): the solver uses their products only (`glocal.labels`); with other
            settings it is densified.
        groups : array-like or dask array of shape (n_samples,), optional
            Group of every sample (e.g. from domain knowledge); k-means on X with
            ``n_groups`` clusters when omitted (`dask_ml.cluster.KMeans` for a Dask X).
        init : fitted GLOCAL, GLObal or loCAL, or tuple (U, V, W, Z), default=None
            Starting point of the fit instead of the basic model's own: a model fitted on
            the same labels and groups, e.g. at a nearby ``lam2`` (a regularization path,
            as `glocal.GLOCALCV` walks), or arrays shaped as its ``U_``, ``V_`` (None:
            W^T X), ``W_`` and ``Z_`` (None: the correlation term's own start, as for a
            model fitted with another ``correlation``). The estimator adapts W's
            layout: the bias is carried over when both fits have ``fit_intercept``, starts
            at zero when only this one has it, and is dropped otherwise. The init's ``V_``
            is used when it has one column per sample of X, else V starts at W^T X. The
            basic-model initialisation (``init_max_iter`` rounds) and Algorithm 1 then run
            from it as usual; its cap is then no ConvergenceWarning (a few rounds from a
            solution only re-balance the basic model, and Algorithm 1 goes on).
        cache : FitCache, default=None
            Work shared by fits on the same X: the k-means groups and the feature second
            moments X^T X (and X_m^T X_m per group), computed by the first fit that needs
            them and reused by the next ones (see `FitCache`). Results are the same with
            or without it.
        callback : callable, default=None
            ``callback(stage, iteration, objective)``, called after every round of each
            loop, ``stage`` being ``"init"`` (the basic-model initialisation) or ``"main"``
            (Algorithm 1) and ``iteration`` counting from 1.

        Returns
        -------
        self

        Notes
        -----
        With X a Dask array (``pip install glocal[dask]``), the same solver minimizes the
        same objective: every quantity it needs of the samples is a sum over the chunks of
        rows of small statistics (k x k, l x k, d x k, and X^T X and the groups' X_m^T X_m
        once, d x d) or a chunk-wise map (V, column by column, and P = X W), computed
        where the chunks are; V and P stay there, chunked like X, and each round of the
        solver is a few passes over the chunks. The block solvers of U, W and Z run here,
        on small arrays. On data that fits in memory it gives the in-memory fit's result up
        to rounding. It runs on the default Dask scheduler, or on a cluster once a
        ``dask.distributed.Client`` is made, e.g. ``Client("tcp://host:8786")`` for a
        remote scheduler (its workers need ``glocal`` installed). Every ``loss`` fits this
        way (under one other than the paper's, V is solved by Newton's method column by
        column, and U by Newton's method on its rows from sums over the chunks), with
        ``class_weight=None`` and ``v_closed_form=True``. Up to 4000 features X^T X is kept
        in memory; with more, W's products go through X chunk by chunk (no d x d matrix).
        ``V_`` and ``groups_`` are then Dask arrays (compute them, or drop them, before
        pickling the model, as ``glocal fit`` does); X is not persisted (call
        ``X.persist()`` first when it fits in the workers' memory: every pass then reads it
        instead of recomputing it).
        """
        self._validate_params()
        validation.check_optimizer_map(self.optimizer, OPTIMIZERS)
        options, levers = solver_options(self.optimizer, self.v_closed_form,
                                         self.solver_options)
        if cache is not None and not isinstance(cache, FitCache):
            raise ValueError(f"cache must be a glocal.FitCache, got "
                             f"{type(cache).__name__}")
        _check_feature_names(self, X, reset=True)
        rng = check_random_state(self.random_state)
        data, groups, clustering_time = glocal_data(X, Y, groups, self, options, rng, cache)
        n_features = np.shape(X)[1]  # X may be a list
        initial_point = (None if init is None else
                         self._initial_point(init, n_features, *data.Y.shape, data.n_groups))
        progress = (fit_progress(self, type(self).__name__, self.verbose) if self.verbose
                    else None)
        callbacks = [function for function in
                     (callback, progress, self._report if self.verbose >= 2 else None)
                     if function is not None]
        with blas_controller().limit(limits=1, user_api="blas"):
            result = glocal_fit(data, self.n_latent, max_iter=self.max_iter,
                                init_max_iter=self.init_max_iter, tol=self.tol, options=options,
                                levers=levers, correlation=self.correlation,
                                random_state=rng.randint(2**31 - 1),
                                callback=all_callbacks(callbacks), initial_point=initial_point)
        if progress is not None:
            progress.finish()
        warn_unless_converged(result, self.init_max_iter, self.max_iter, self.tol,
                               warm=init is not None)
        warn_if_scores_vanish(result.U, result.V, f"lam2={self.lam2:g}")

        self.U_, self.V_, self.Z_ = result.U, result.V, result.Z
        self.W_ = result.W[:n_features]
        # W's last row times the constant feature is the bias of the latent labels; kept so
        # that a fit started from this one carries it over.
        self._latent_bias = (self.intercept_scaling * result.W[n_features]
                             if self.fit_intercept else None)
        self.intercept_ = (self._latent_bias @ self.U_.T if self.fit_intercept
                           else np.zeros(self.U_.shape[0]))
        self.normalize_rows_ = bool(self.normalize_rows)
        self.groups_ = groups
        self.n_groups_ = data.n_groups
        self.objective_history_ = result.objective_history
        self.init_objective_history_ = result.init_history
        self.block_objective_history_ = np.array(result.block_history).reshape(-1, 4)
        self.n_iter_ = result.n_iter
        self.n_init_iter_ = result.n_init_iter
        self.fit_times_ = {"clustering": clustering_time, **result.times}
        self._group_fractions = data.group_fractions
        self._correlation = np.array(self.correlation)  # what Z_ holds, frozen at fit
        self.n_features_in_ = n_features
        return self

    def _initial_point(self, init, n_features, n_labels, n_samples, n_groups):
        """The solver's (U, V, W, Z) from ``init`` (see `fit`), W laid out for this model."""
        if isinstance(init, GLOCAL):
            check_is_fitted(init)
            U, V, W, Z = init.U_, init.V_, init.W_, init.Z_
            if str(init._correlation) != self.correlation:
                Z = None  # another term's state: this term starts from its own
            bias = (None if init._latent_bias is None  # the row of W giving the same scores
                    else init._latent_bias / self.intercept_scaling)
            if not isinstance(V, np.ndarray) or V.shape[1] != n_samples:
                V = None  # fitted on other samples: V starts at W^T X
        elif isinstance(init, (tuple, list)) and len(init) == 4:
            U, V, W, Z = init
            bias = None
        else:
            raise ValueError("init must be a fitted GLOCAL (GLObal, loCAL) or a tuple "
                             f"(U, V, W, Z), got {type(init).__name__}")
        k = self.n_latent
        term = self._term(np.full(n_groups, 1.0 / n_groups))
        expected = {"U": (n_labels, k), "V": (k, n_samples), "W": (n_features, k),
                    "Z": term.state_shape(n_groups, n_labels, k)}
        for name, array in zip("UVWZ", (U, V, W, Z)):
            if (array is not None or name not in "VZ") and np.shape(array) != expected[name]:
                raise ValueError(f"init: {name} has shape {np.shape(array)}, expected "
                                 f"{expected[name]}")
        W = np.asarray(W, dtype=float)
        if self.fit_intercept:
            bias = np.zeros(W.shape[1]) if bias is None else bias
            W = np.vstack([W, bias[None, :]])
        return U, V, W, Z

    def _term(self, group_fractions, correlation=None):
        """The correlation term (`glocal.solver.correlations.CORRELATION_TERMS`), of this model's
        ``correlation`` or of another name."""
        return CORRELATION_TERMS[correlation or self.correlation](self.lam3, self.lam4,
                                                                  group_fractions)

    def _correlations(self):
        check_is_fitted(self)
        term = self._term(self._group_fractions, str(self._correlation))
        return term.correlations(self.Z_, self._group_fractions)

    @property
    def local_correlations_(self):
        return self._correlations()["local_correlations_"]

    @property
    def global_correlation_(self):
        return self._correlations()["global_correlation_"]

    @property
    def coef_(self):
        check_is_fitted(self)
        return self.U_ @ self.W_.T

    def _normalized(self, X):
        """X, or its rows scaled to unit Euclidean norm when fitted with ``normalize_rows``."""
        return normalize(X) if self.normalize_rows_ else X

    @staticmethod
    def _report(stage, iteration, value):
        step = "basic-model initialisation round" if stage == "init" else "main iteration"
        print(f"[GLOCAL] {step} {iteration}: objective {value:.6g}")

    def decision_function(self, X):
        """Label scores X W_ U_^T (+ intercept_), shape (n_samples, n_labels).

        With ``normalize_rows`` the rows of X are first scaled to unit norm.

        Higher means more relevant; the paper predicts a label where its score is positive.
        For a Dask array X (chunked by rows) the scores are a lazy Dask array chunked like
        X, and so is `predict`'s result.
        """
        if is_dask_array(X):  # lazily, block by block
            from .solver.dask_backend import check_features

            check_is_fitted(self)
            X = check_features(X, self.n_features_in_, type(self).__name__)
            if self.normalize_rows_:
                X = X.map_blocks(normalize, dtype=float)
            return X.map_blocks(_linear_scores, self.W_, self.U_, self.intercept_,
                                dtype=float, chunks=(X.chunks[0], (self.U_.shape[0],)))
        return _linear_scores(self._normalized(self._check_fitted_features(X)), self.W_,
                              self.U_, self.intercept_)

    @if_logistic_loss(lambda self: self, "GLOCAL(loss='logistic')")
    def predict_proba(self, X):
        """Label probabilities 1 / (1 + exp(-score)), shape (n_samples, n_labels).

        Only with ``loss="logistic"``, whose fit makes the scores log-odds of the observed
        entries, shrunk by the model's penalties: on held-out rows of the paper's datasets
        their log-loss and Brier score were worse than per-label logistic regression's
        (the label-sets study of the documentation), and without a bias
        (``fit_intercept=False``, the paper's) a label the model knows nothing of gets 0.5.
        The squared and squared-hinge losses fit margins, not probabilities: their scores
        rank labels and their sign (or `glocal.GLOCALCV`'s tuned thresholds) predicts them,
        but no transform of them is a probability without a calibration on held-out rows.
        """
        return expit(self.decision_function(X))


def _linear_scores(X, W, U, intercept):
    """X W U^T + intercept."""
    return np.asarray(X @ W) @ U.T + intercept


class GLObal(GLOCAL):
    """GLOCAL with the global label correlation only: GLOCAL with ``lam4=0``.

    The paper's first degenerate version of GLOCAL (Section 4, Table "small clusters"). It
    takes every parameter of `GLOCAL` except ``lam4``, fixed at 0 (as
    `sklearn.linear_model.Lasso` is ElasticNet with ``l1_ratio=1``). With lam4 = 0 every Z_m
    faces the same problem, so the learned Laplacians describe one global correlation.
    """

    _parameter_constraints = {k: v for k, v in GLOCAL._parameter_constraints.items()
                              if k != "lam4"}
    _fixed_parameters = {"lam4": 0.0}  # GLOCAL's parameters this class sets itself

    def __init__(self, n_latent=20, *, n_groups=4, lam=1.0, lam2=4.0, lam3=1e-3,
                 correlation="laplacian", max_iter=30, init_max_iter=30, tol=1e-4,
                 optimizer="auto", v_closed_form=True,
                 solver_options=None, fit_intercept=False, intercept_scaling=1.0,
                 loss="squared", class_weight=None, lam_v=None, normalize_rows=False,
                 random_state=None, verbose=0):
        super().__init__(n_latent=n_latent, n_groups=n_groups, lam=lam, lam2=lam2, lam3=lam3,
                         **self._fixed_parameters, correlation=correlation,
                         max_iter=max_iter, init_max_iter=init_max_iter, tol=tol,
                         optimizer=optimizer, v_closed_form=v_closed_form,
                         solver_options=solver_options, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling, loss=loss,
                         class_weight=class_weight, lam_v=lam_v,
                         normalize_rows=normalize_rows, random_state=random_state,
                         verbose=verbose)


class loCAL(GLOCAL):
    """GLOCAL with the local label correlations only: GLOCAL with ``lam3=0``.

    The paper's second degenerate version of GLOCAL. It takes every parameter of `GLOCAL`
    except ``lam3``, fixed at 0.
    """

    _parameter_constraints = {k: v for k, v in GLOCAL._parameter_constraints.items()
                              if k != "lam3"}
    _fixed_parameters = {"lam3": 0.0}

    def __init__(self, n_latent=20, *, n_groups=4, lam=1.0, lam2=4.0, lam4=1e-3,
                 correlation="laplacian", max_iter=30, init_max_iter=30, tol=1e-4,
                 optimizer="auto", v_closed_form=True,
                 solver_options=None, fit_intercept=False, intercept_scaling=1.0,
                 loss="squared", class_weight=None, lam_v=None, normalize_rows=False,
                 random_state=None, verbose=0):
        super().__init__(n_latent=n_latent, n_groups=n_groups, lam=lam, lam2=lam2,
                         **self._fixed_parameters, lam4=lam4, correlation=correlation,
                         max_iter=max_iter, init_max_iter=init_max_iter, tol=tol,
                         optimizer=optimizer, v_closed_form=v_closed_form,
                         solver_options=solver_options, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling, loss=loss,
                         class_weight=class_weight, lam_v=lam_v,
                         normalize_rows=normalize_rows, random_state=random_state,
                         verbose=verbose)
