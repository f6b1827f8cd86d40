"""Input validation: every bad input raises a ValueError that names the problem."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from estimators import capped_fits, quick_estimators

from glocal import GLOCAL, from_signed_labels
from glocal._utils.validation import MAX_FEATURE_NORM, LabelWarning, check_features, \
    check_labels, named_label_warnings


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 4))
    Y = (X[:, :3] + 0.3 * rng.standard_normal((20, 3)) > 0).astype(float)
    return X, Y


pytestmark = capped_fits  # _quick fits one iteration: the input checks are tested


def _quick(**params):
    return GLOCAL(**{**dict(n_latent=2, n_groups=2, max_iter=1, init_max_iter=1,
                            random_state=0), **params})


# --- features ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, message", [(np.nan, "NaN"), (np.inf, "infinity"),
                                            (-np.inf, "infinity")])
def test_non_finite_x(xy, value, message):
    X, Y = xy
    X = X.copy()
    X[3, 1] = value
    with pytest.raises(ValueError, match=message):
        _quick().fit(X, Y)
    with pytest.raises(ValueError, match=message):
        _quick().fit(sp.csr_matrix(X), Y)


def test_empty_x():
    with pytest.raises(ValueError, match="0 sample"):
        _quick().fit(np.zeros((0, 4)), np.zeros((0, 3)))


def test_predict_with_other_number_of_features(xy):
    X, Y = xy
    est = _quick().fit(X, Y)
    for method in (est.predict, est.decision_function):
        with pytest.raises(ValueError, match="X has 3 features, but GLOCAL is expecting 4"):
            method(X[:, :3])
        with pytest.raises(ValueError, match="X has 5 features, but GLOCAL is expecting 4 features"):
            method(np.hstack([X, X[:, :1]]))


def test_predict_with_nan(xy):
    X, Y = xy
    est = _quick().fit(X, Y)
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.predict(X_bad)


# --- labels -----------------------------------------------------------------------------

def test_label_value_two(xy):
    X, Y = xy
    Y = Y.copy()
    Y[0, 0] = 2.0
    with pytest.raises(ValueError, match=r"only 0, 1 or NaN.*found \[2\.0\]") as info:
        _quick().fit(X, Y)
    assert "from_signed_labels" not in str(info.value)  # the hint is only for -1


def test_signed_labels_get_a_hint(xy):
    X, Y = xy
    signed = 2.0 * Y - 1.0
    with pytest.raises(ValueError, match=r"found \[-1\.0\].*from_signed_labels"):
        _quick().fit(X, signed)


def test_one_dimensional_y(xy):
    X, Y = xy
    with pytest.raises(ValueError, match="2-D"):
        _quick().fit(X, Y[:, 0])


def test_mismatched_rows(xy):
    X, Y = xy
    with pytest.raises(ValueError, match="different numbers of rows: 20 and 19"):
        _quick().fit(X, Y[:19])


def test_all_labels_missing(xy):
    X, Y = xy
    with pytest.raises(ValueError, match="every entry of Y is missing"):
        _quick().fit(X, np.full(Y.shape, np.nan))


def test_no_label_column(xy):
    X, _ = xy
    with pytest.raises(ValueError, match="no label column"):
        _quick().fit(X, np.zeros((20, 0)))


def test_non_numeric_y(xy):
    X, Y = xy
    with pytest.raises(ValueError, match="numeric"):
        _quick().fit(X, Y.astype(str))


def test_check_labels_output():
    Y = np.array([[1.0, 0.0, np.nan], [0.0, np.nan, 1.0]])
    with pytest.warns(UserWarning, match=r"labels \[1\] are never positive"):
        Y_signed, J = check_labels(Y, 2)
    np.testing.assert_array_equal(Y_signed, [[1, -1], [-1, 0], [0, 1]])
    np.testing.assert_array_equal(J, [[1, 1], [1, 0], [0, 1]])
    with pytest.warns(UserWarning, match=r"labels \[1\] are never positive"):
        Y_signed, J = check_labels(np.array([[True, False]]), 1)
    assert J is None
    np.testing.assert_array_equal(Y_signed, [[1], [-1]])


# --- groups -----------------------------------------------------------------------------

def test_too_many_groups(xy):
    X, Y = xy
    with pytest.raises(ValueError, match="n_groups=21 is larger than the number of samples"):
        _quick(n_groups=21).fit(X, Y)


@pytest.mark.parametrize("length", [19, 21])
def test_groups_wrong_length(xy, length):
    X, Y = xy
    with pytest.raises(ValueError, match="one group id per row"):
        _quick().fit(X, Y, groups=np.arange(length) % 2)


def test_groups_two_dimensional(xy):
    X, Y = xy
    with pytest.raises(ValueError, match="one group id per row"):
        _quick().fit(X, Y, groups=np.zeros((20, 1)))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_groups_with_nan(xy, bad):
    X, Y = xy
    groups = (np.arange(20) % 2).astype(float)
    groups[5] = bad
    with pytest.raises(ValueError, match="groups contains missing values"):
        _quick().fit(X, Y, groups=groups)


@pytest.mark.parametrize("groups", [
    np.array([1.0] * 10 + [2.0] * 9 + [np.nan], dtype=object),
    np.array(["a"] * 10 + ["b"] * 9 + [None], dtype=object),
], ids=["object-float-nan", "object-str-none"])
def test_groups_with_missing_values_in_object_array(xy, groups):
    X, Y = xy
    with pytest.raises(ValueError, match="NaN|None|missing"):
        _quick().fit(X, Y, groups=groups)


# --- hyperparameters ----------------------------------------------------------------------

@pytest.mark.parametrize("params, message", [
    (dict(lam=0.0), "'lam' parameter"),
    (dict(lam=-1.0), "'lam' parameter"),
    (dict(lam2=-1.0), "'lam2' parameter"),
    (dict(lam2=0.0), "'lam2' parameter"),
    (dict(lam3=-1.0), "'lam3' parameter"),
    (dict(lam4=-1.0), "'lam4' parameter"),
    (dict(n_latent=0), "'n_latent' parameter"),
    (dict(n_groups=0), "'n_groups' parameter"),
    (dict(tol=-1.0), "'tol' parameter"),
    (dict(optimizer="newton"), "'optimizer' parameter"),
    (dict(optimizer={"Q": "trust_regions"}), r"unknown blocks \['Q'\]"),
    (dict(optimizer={"U": "newton"}), "unknown optimizer names.*'U': 'newton'"),
])
def test_bad_hyperparameters(xy, params, message):
    X, Y = xy
    with pytest.raises(ValueError, match=message):
        _quick(**params).fit(X, Y)


def test_zero_manifold_weights_are_allowed(xy):
    X, Y = xy
    est = _quick(lam3=0.0, lam4=0.0, optimizer={"Z": "steepest_descent"}).fit(X, Y)
    assert np.all(np.isfinite(est.U_))


# --- the {-1, 0, +1} encoding -----------------------------------------------------------

def test_from_signed_labels():
    signed = np.array([[1, -1, 0], [0, 1, -1]])
    expected = np.array([[1.0, 0.0, np.nan], [np.nan, 1.0, 0.0]])
    np.testing.assert_array_equal(from_signed_labels(signed), expected)
    np.testing.assert_array_equal(from_signed_labels(sp.csr_matrix(signed)), expected)
    np.testing.assert_array_equal(from_signed_labels(signed.astype(float).tolist()), expected)
    # Round trip through the internal encoding: check_labels gives back the signed matrix.
    with pytest.warns(UserWarning, match=r"labels \[2\] are never positive"):
        Y_signed, J = check_labels(from_signed_labels(signed), 2)
    np.testing.assert_array_equal(Y_signed, signed.T)
    np.testing.assert_array_equal(J, (signed != 0).T)


@pytest.mark.parametrize("bad", [2, 0.5, -2, np.nan])
def test_from_signed_labels_rejects_other_values(bad):
    signed = np.array([[1.0, -1.0], [0.0, bad]])
    with pytest.raises(ValueError, match=r"-1 \(negative\), 0 \(missing\) or \+1"):
        from_signed_labels(signed)


def test_signed_labels_fit(xy):
    X, Y = xy
    signed = 2.0 * Y - 1.0
    signed[0, 0] = 0.0
    a = _quick().fit(X, from_signed_labels(signed))
    Y_missing = Y.copy()
    Y_missing[0, 0] = np.nan
    b = _quick().fit(X, Y_missing)
    np.testing.assert_array_equal(a.U_, b.U_)


# --- magnitude of X, complex input, object labels -----------------------------------------

def _huge(X, how):
    if how == "scaled by 1e150":
        return X * 1e150
    if how == "sparse, scaled by 1e150":
        return sp.csr_matrix(X * 1e150)
    X = X.copy()
    X[0, 0], X[1, 1] = np.finfo(float).max, -np.finfo(float).max
    return X


@pytest.mark.parametrize("name", list(quick_estimators()))
def test_x_too_large_for_float64_is_a_clear_error(xy, name):
    X, Y = xy
    for how in ("scaled by 1e150", "sparse, scaled by 1e150", "holding ±max float"):
        with pytest.raises(ValueError, match="X is too large for float64 arithmetic"):
            quick_estimators()[name].fit(_huge(X, how), Y)
    # Just under the bound every estimator fits (BR used to loop in liblinear without end)
    # and scores finitely; above it, scoring is refused the same way.
    scale = 0.5 * MAX_FEATURE_NORM / np.linalg.norm(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # solver caps on tiny data
        model = quick_estimators()[name].fit(X * scale, Y)
    assert np.isfinite(model.decision_function(X * scale)).all()
    with pytest.raises(ValueError, match="X is too large"):
        model.decision_function(X * 4 * scale)


def test_check_features_names_the_norm():
    with pytest.raises(ValueError, match=r"its norm is 1e\+60.*rescale X"):
        check_features(np.full((1, 1), 1e60))
    with pytest.raises(ValueError, match="its norm overflows float64"):
        check_features(np.full((2, 2), np.finfo(float).max))
    assert check_features(np.full((1, 1), 1e51)).shape == (1, 1)
    assert check_features(sp.csr_matrix((3, 4))).nnz == 0


def test_complex_input_is_rejected(xy):
    X, Y = xy
    with pytest.raises(ValueError, match="Complex data not supported: Y must be real"):
        _quick().fit(X, Y + 0j)
    with pytest.raises(ValueError, match="Complex data not supported: X must be real"):
        _quick().fit(X + 1j, Y)
    with pytest.raises(ValueError, match="Y must be numeric.*found 1j of type complex"):
        _quick().fit(X, np.where(Y > 0, 1j, 0).astype(object))


def test_none_in_object_labels_is_missing(xy):
    X, Y = xy
    Y_nan = Y.copy()
    Y_nan[::3, 1] = np.nan
    Y_object = Y_nan.astype(object)
    Y_object[::3, 1] = None
    expected = check_labels(Y_nan, 20)
    for got, want in zip(check_labels(Y_object, 20), expected):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(_quick().fit(X, Y_object).decision_function(X),
                                  _quick().fit(X, Y_nan).decision_function(X))
    Y_object[0, 0] = "1"
    with pytest.raises(ValueError, match="Y must be numeric.*found '1' of type str"):
        _quick().fit(X, Y_object)


def test_pandas_nullable_labels_read_na_as_missing(xy):
    pd = pytest.importorskip("pandas")
    X, Y = xy
    Y_nan = Y.copy()
    Y_nan[::4, 0] = Y_nan[1::5, 2] = np.nan
    frame = pd.DataFrame({"a": pd.array(Y[:, 0].astype(int), dtype="Int64"),
                          "b": pd.array(Y[:, 1].astype(bool), dtype="boolean"),
                          "c": pd.array(Y[:, 2], dtype="Float64")})
    frame.loc[::4, "a"] = pd.NA
    frame.loc[1::5, "c"] = pd.NA
    for got, want in zip(check_labels(frame, 20), check_labels(Y_nan, 20)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(_quick().fit(X, frame).decision_function(X),
                                  _quick().fit(X, Y_nan).decision_function(X))


def test_named_label_warnings_renames_label_warnings_only_and_survives_errors():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):
            with named_label_warnings(["a", "b", "c", "d"]):
                warnings.warn("labels [0, 3] are never positive", LabelWarning)
                warnings.warn("labels [1] of another kind", UserWarning)
                raise RuntimeError
        with named_label_warnings(None):
            warnings.warn("labels [2] kept", LabelWarning)
    assert [(w.category, str(w.message)) for w in caught] == [
        (LabelWarning, "labels 'a', 'd' are never positive"),
        (UserWarning, "labels [1] of another kind"),
        (LabelWarning, "labels [2] kept")]


# --- inputs every estimator takes alike ---------------------------------------------------


def test_lists_are_accepted_like_arrays(xy):
    X, Y = xy
    expected = _quick().fit(X, Y).decision_function(X)
    model = _quick().fit(X.tolist(), Y.tolist())
    np.testing.assert_allclose(model.decision_function(X.tolist()), expected)
    assert model.n_features_in_ == X.shape[1]


def test_sparse_x_with_64_bit_indices_is_accepted(xy):
    X, Y = xy
    X64 = sp.csr_matrix(X)
    X64.indices, X64.indptr = X64.indices.astype(np.int64), X64.indptr.astype(np.int64)
    scores = _quick().fit(X64, Y).decision_function(X64)
    np.testing.assert_allclose(scores, _quick().fit(X, Y).decision_function(X), atol=1e-12)
    assert X64.indices.dtype == np.int64  # the caller's matrix is left as it was


@pytest.mark.parametrize("dtype", ["Float64", "Int64", "boolean"])
def test_glocalcv_takes_pandas_nullable_labels(xy, dtype):
    pd = pytest.importorskip("pandas")
    from glocal import GLOCALCV

    X, Y = xy
    missing = np.zeros(Y.shape, dtype=bool)
    missing[::4, 0] = missing[1::5, 2] = True
    frame = pd.DataFrame(Y.astype(int)).astype(dtype)
    frame = frame.mask(missing, pd.NA)
    Y_nan = np.where(missing, np.nan, Y)
    search = dict(param_grid={"lam2": [4.0, 1.0]}, cv=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # X as a frame too: the search keeps its feature names, as GridSearchCV does.
        X_frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
        from_frame = GLOCALCV(_quick(), **search).fit(X_frame, frame)
        from_nan = GLOCALCV(_quick(), **search).fit(X, Y_nan)
    np.testing.assert_array_equal(from_frame.cv_results_["mean_test_score"],
                                  from_nan.cv_results_["mean_test_score"])
    np.testing.assert_allclose(from_frame.decision_function(X_frame),
                               from_nan.decision_function(X))
    np.testing.assert_array_equal(from_frame.feature_names_in_, X_frame.columns)
    with pytest.raises(ValueError, match="feature names should match"):
        from_frame.decision_function(X_frame[X_frame.columns[::-1]])


def test_mlloc_refuses_more_groups_than_rows(xy):
    from glocal.baselines import MLLOC

    X, Y = xy
    with pytest.raises(ValueError, match=r"n_groups=100 is larger than the number of samples "
                                         r"\(n_samples=20\)"):
        MLLOC(n_groups=100).fit(X, Y)


def test_a_model_wiped_out_by_lam2_warns(xy):
    X, Y = xy
    with pytest.warns(UserWarning,
                      match="scores are all zero .* lam2=10000 is too large") as caught:
        model = GLOCAL(n_latent=2, n_groups=2, lam2=1e4, random_state=0).fit(X, Y)
    # It points at the call of fit (a level further up failed in a script's top level).
    assert [w.filename for w in caught if "all zero" in str(w.message)] == [__file__]
    assert np.abs(model.decision_function(X)).max() < 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", category=LabelWarning)
        GLOCAL(n_latent=2, n_groups=2, random_state=0).fit(X, Y)  # the default: no warning


@pytest.mark.parametrize("name", list(quick_estimators()))
def test_feature_names_follow_scikit_learn(xy, name):
    pd = pytest.importorskip("pandas")
    X, Y = xy
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = quick_estimators()[name].fit(frame, Y)
    np.testing.assert_array_equal(model.feature_names_in_, frame.columns)
    model.decision_function(frame)
    for other in (frame[frame.columns[::-1]], frame.rename(columns={"f0": "g0"})):
        with pytest.raises(ValueError, match="feature names should match"):
            model.decision_function(other)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.decision_function(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not hasattr(quick_estimators()[name].fit(X, Y), "feature_names_in_")


@pytest.mark.parametrize("name", ["GLOCAL", "BR", "MLLOC", "GLOCALCV"])
def test_repeated_column_names_are_one_line(name):
    pd = pytest.importorskip("pandas")
    from estimators import quick_estimators, quick_search

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((30, 3)), columns=["a", "a", "b"])
    Y = (rng.random((30, 2)) < 0.5).astype(float)
    model = quick_search() if name == "GLOCALCV" else quick_estimators()[name]
    with pytest.raises(ValueError) as raised:
        model.fit(X, Y)
    assert str(raised.value) == ("X has repeated column names ('a'); name every feature "
                                 "column once")


@pytest.mark.parametrize("cv", [[(np.arange(50), [65])], [(np.arange(50), [-61])],
                                [(np.arange(50), [1.5])]])
@pytest.mark.parametrize("search", ["GLOCALCV", "LabelThresholdsCV"])
def test_cross_validation_folds_outside_the_rows_are_one_line(cv, search):
    from glocal import GLOCAL, GLOCALCV
    from glocal.baselines import BR
    from glocal.thresholds import LabelThresholdsCV

    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((60, 3)), (rng.random((60, 2)) < 0.5).astype(float)
    model = (GLOCALCV(GLOCAL(n_latent=1), {"lam2": [1.0]}, cv=cv) if search == "GLOCALCV"
             else LabelThresholdsCV(BR(), cv=cv))
    with pytest.raises(ValueError, match="not row numbers of X's 60 rows") as raised:
        model.fit(X, Y)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("name", ["GLOCAL", "BR", "GLOCALCV"])
@pytest.mark.parametrize("column", ["dates", "dates with a time zone", "durations",
                                    "strings"])
def test_a_column_that_is_not_numbers_is_named_in_one_line(xy, name, column):
    pd = pytest.importorskip("pandas")
    from estimators import quick_search

    X, Y = xy
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    frame["when"] = {
        "dates": pd.date_range("2020-01-01", periods=len(X)),
        "dates with a time zone": pd.date_range("2020-01-01", periods=len(X), tz="UTC"),
        "durations": pd.to_timedelta(np.arange(len(X)), unit="s"),
        "strings": [f"s{i}" for i in range(len(X))]}[column]
    model = quick_search() if name == "GLOCALCV" else quick_estimators()[name]
    for given in (frame, frame[["when"]]):  # alone, numpy would make dates nanoseconds
        with pytest.raises(ValueError) as raised:
            model.fit(given, Y)
        text = str(raised.value)
        assert "\n" not in text and text.startswith("X's column 'when' holds "), text
        assert "not numbers" in text
    fitted = _quick().fit(X, Y)
    with warnings.catch_warnings(), pytest.raises(ValueError, match="X's column 'when' holds"):
        warnings.simplefilter("ignore")  # fitted without feature names: said, not tested
        fitted.decision_function(frame[["a", "b", "c", "when"]])


def test_integers_beyond_two_to_the_53_are_named_in_one_warning(xy):
    pd = pytest.importorskip("pandas")
    X, Y = xy
    ids = np.uint64(2**63) + 2 * np.arange(len(X), dtype=np.uint64)  # float64: one value
    assert np.unique(ids.astype(np.float64)).size == 1
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(id=ids)
    frame["big"] = np.int64(-2**62) + np.arange(len(X))
    as_array = np.column_stack([(X * 100).astype(np.int64), ids.astype(np.int64) // 2])
    cases = [(frame, "X's columns 'id', 'big' hold integers beyond 2^53"),
             (as_array, "X's column 4 holds integers beyond 2^53"),
             (sp.csr_matrix(as_array), "X's column 4 holds integers beyond 2^53")]
    for given, message in cases:
        with pytest.warns(UserWarning) as warned:
            _quick().fit(given, Y)
        said = [str(w.message) for w in warned if "2^53" in str(w.message)]
        assert len(said) == 1 and said[0].startswith(message), said
        assert "rounds" in said[0]
    with warnings.catch_warnings():  # at most 2^53: exact in float64, nothing said
        warnings.simplefilter("error")
        check_features(np.array([[2**53, -2**53], [1, 2]], dtype=np.int64))
        check_features(pd.DataFrame({"n": pd.array([2**53, None], dtype="Int64")}).fillna(0))
