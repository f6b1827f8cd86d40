"""Property-based tests of the input layer (hypothesis): every estimator, on random small
inputs of every accepted kind, either fits with finite scores (and unit-norm rows of Z for the
GLOCAL family) or refuses the input with a ValueError / TypeError that names it.

Inputs: random shapes; X dense (float64, float32, int, bool), nested lists, or sparse
(CSR with 32- or 64-bit indices, CSC, COO),
sometimes holding NaN or infinity; label matrices with empty and full columns, missing
entries in random patterns (up to all of a column, or all of Y), as float, bool, or object
arrays with None for missing (and pandas nullable frames for the label encodings). Also: a
results file of `glocal reproduce` cut anywhere or given a random line yields only the runs
written, reporting what it leaves out; a data file (ARFF, .mat, svmlight) cut, overwritten
or given bytes anywhere loads or is refused by one line naming it.
"""

import csv
import io
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from estimators import GLOCAL_FAMILY, quick_estimators
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from glocal._utils.validation import check_labels
from glocal.reproduce.results import FIELDS, scan_results

# The words by which an error message names the input it refuses.
_NAMES_INPUT = re.compile(r"\b(X|Y|y|labels?|samples?|features?)\b")

# Derandomized and without an example database: CI runs the same examples every time.
_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    """A random (X, Y) pair of the kinds the estimators accept, or nearly."""
    n = draw(st.integers(2, 12))
    d = draw(st.integers(1, 6))
    n_labels = draw(st.integers(1, 5))
    values = draw(arrays(np.float64, (n, d), elements=st.floats(-1e3, 1e3, width=32)
                         | st.just(0.0)))
    if draw(st.booleans()) and draw(st.booleans()):  # a quarter of X hold a non-finite value
        values[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = draw(
            st.sampled_from([np.nan, np.inf, -np.inf]))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, bool]))
    if dtype is not np.float64 and np.isfinite(values).all():
        values = values.astype(dtype)
    layout = draw(st.sampled_from(["dense", "csr", "csc", "coo", "csr64", "list"]))
    if layout == "list":
        X = values.tolist()
    elif layout == "csr64":  # 64-bit indices, as scipy makes for some inputs
        X = sp.csr_matrix(values)
        X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    else:
        X = values if layout == "dense" else sp.coo_matrix(values).asformat(layout)

    Y = draw(arrays(np.float64, (n, n_labels), elements=st.sampled_from([0.0, 1.0])))
    columns = draw(st.lists(st.sampled_from(["empty", "full", "random"]), min_size=n_labels,
                            max_size=n_labels))
    for j, kind in enumerate(columns):
        if kind != "random":
            Y[:, j] = float(kind == "full")
    missing = draw(st.sampled_from(["none", "none", "random", "random", "a whole column", "all"]))
    if missing == "random":
        Y[draw(arrays(bool, Y.shape))] = np.nan
    elif missing == "a whole column":
        Y[:, draw(st.integers(0, n_labels - 1))] = np.nan
    elif missing == "all":
        Y[:] = np.nan
    encoding = draw(st.sampled_from(["float", "bool", "object with None"]))
    if encoding == "bool" and not np.isnan(Y).any():
        Y = Y.astype(bool)
    elif encoding == "object with None":
        Y = np.where(np.isnan(Y), None, Y).astype(object)
    return X, Y


@pytest.mark.parametrize("name", list(quick_estimators()))
@_SETTINGS
@given(problem=problems())
def test_every_estimator_fits_finitely_or_names_the_bad_input(name, problem):
    X, Y = problem
    model = quick_estimators()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # label warnings, solver caps, k-means duplicates
        try:
            model.fit(X, Y)
        except (ValueError, TypeError) as error:
            event(f"refused: {str(error)[:60]}")
            assert _NAMES_INPUT.search(str(error)), f"{name}: {error!r} does not name the input"
            return
        scores = model.decision_function(X)
    event("fitted")
    assert scores.shape == (np.shape(X)[0], np.shape(Y)[1])
    assert np.isfinite(scores).all()
    # The scores do not depend on the layout or dtype X comes in.
    dense = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    np.testing.assert_allclose(model.decision_function(dense), scores, rtol=1e-6, atol=1e-9)
    if name in GLOCAL_FAMILY:
        np.testing.assert_allclose(np.linalg.norm(model.Z_, axis=-1), 1.0, atol=1e-8)


@_SETTINGS
@given(problem=problems(), as_frame=st.booleans())
def test_label_encodings_agree(problem, as_frame):
    """Float with NaN, bool, object with None, a pandas nullable frame with pd.NA: one
    meaning."""
    _, Y = problem
    Y_float = np.array(np.where(np.equal(Y, None), np.nan, Y), dtype=float)
    if as_frame:
        pd = pytest.importorskip("pandas")
        Y = pd.DataFrame({j: pd.array(np.where(np.isnan(column), None, column),
                                      dtype="Int64")
                          for j, column in enumerate(Y_float.T)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            expected = check_labels(Y_float, Y_float.shape[0])
        except ValueError as error:
            with pytest.raises(ValueError, match=re.escape(str(error))):
                check_labels(Y, Y_float.shape[0])
            return
        got = check_labels(Y, Y_float.shape[0])
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


@st.composite
def damaged_results(draw):
    """A sound results file of a few runs, cut at a random place or with a random line put
    in somewhere, and the sound rows."""
    n_rows = draw(st.integers(1, 4))
    rows = []
    for rep in range(n_rows):
        row = dict.fromkeys(FIELDS, np.nan)
        row.update(dataset="synthetic", repetition=rep, rho=1.0, method="GLOCAL", seed=0,
                   quick=True, tune=False, drop_unlabeled=True, small_clusters=False,
                   n_train=6, n_test=4, params='{"lam2": 4.0, "n_latent": 20}',
                   prediction_average_precision=draw(st.floats(0, 1)), time_fit=0.5)
        rows.append(row)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if isinstance(v, float) and np.isnan(v) else v
                      for k, v in row.items()} for row in rows)
    text = buffer.getvalue()
    header = text.index("\n") + 1
    if draw(st.booleans()):
        text = text[:draw(st.integers(header, len(text)))]
    else:
        at = draw(st.sampled_from([i + 1 for i, c in enumerate(text) if c == "\n"]))
        line = draw(st.text(st.characters(codec="utf-8", exclude_characters="\r"),
                            max_size=80)) + "\n"
        text = text[:at] + line + text[at:]
    return text, rows


@settings(_SETTINGS, max_examples=60)
@given(damaged=damaged_results())
def test_a_damaged_results_file_yields_only_sound_rows(tmp_path_factory, damaged):
    text, sound = damaged
    path = tmp_path_factory.mktemp("results") / "results.csv"
    path.write_text(text, encoding="utf-8")
    rows, problems = scan_results(path)
    # Every row read is a run written, with its values.
    written = {row["repetition"]: row["prediction_average_precision"] for row in sound}
    assert all(row["prediction_average_precision"] == written[row["repetition"]]
               for row in rows)
    assert len({row["repetition"] for row in rows}) == len(rows)
    # A run whose line was begun is read, or something is reported, with file and line.
    begun = sum(1 for line in text.splitlines()[1:] if line.startswith("s"))
    assert len(rows) >= begun or problems
    assert all(re.match(rf"{re.escape(str(path))}:\d+(-\d+)?: ", p) for p in problems)
    if text.endswith("\n") and len(text.splitlines()) == len(sound) + 1:  # whole lines
        assert len(rows) == len(sound)


def _sound_files(directory):
    """One small sound file of each format the loaders read."""
    from scipy.io import savemat
    from sklearn.datasets import dump_svmlight_file

    rng = np.random.default_rng(0)
    X, Y = np.round(rng.random((6, 3)), 3), np.eye(6, 2, dtype=int)
    arff = directory / "d.arff"
    arff.write_text("@relation 'd: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n"
                    + "".join(f"@attribute f{j} numeric\n" for j in range(3)) + "@data\n"
                    + "".join(",".join([*map(str, y), *map(str, x)]) + "\n"
                              for x, y in zip(X, Y)))
    savemat(directory / "d.mat", {"data": X, "target": Y})
    savemat(directory / "z.mat", {"data": X, "target": Y}, do_compression=True)
    dump_svmlight_file(X, Y, str(directory / "d.svm"), multilabel=True)
    return {name: (directory / name).read_bytes() for name in ("d.arff", "d.mat", "z.mat",
                                                               "d.svm")}


@st.composite
def damaged_files(draw):
    """A file name and the bytes of a sound file of that format, cut, overwritten in a
    few places, or with bytes put in."""
    if not _SOUND:
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as directory:
            _SOUND.update(_sound_files(Path(directory)))
    name = draw(st.sampled_from(sorted(_SOUND)))
    data = bytearray(_SOUND[name])
    damage = draw(st.sampled_from(["cut", "overwrite", "insert"]))
    if damage == "cut":
        data = data[:draw(st.integers(0, len(data) - 1))]
    else:
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(data) - 1))
            chunk = draw(st.binary(min_size=1, max_size=8))
            data[at:at + (len(chunk) if damage == "overwrite" else 0)] = chunk
    event(f"{name}: {damage}")
    return name, bytes(data)


_SOUND = {}


@settings(_SETTINGS, max_examples=150)
@given(damaged=damaged_files())
def test_a_damaged_data_file_loads_or_is_one_clear_error(tmp_path_factory, damaged):
    """Whatever the damage, a data file loads (a damage the format cannot tell) or is
    refused by a one-line ValueError that names the file."""
    from glocal.datasets import load

    directory = tmp_path_factory.mktemp("files")
    name, data = damaged
    path = directory / f"damaged{name[1:]}" if name != "z.mat" else directory / "damaged.mat"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            loaded = load(path, unlabeled=True)
        except ValueError as error:
            message = str(error)
            assert str(path) in message and "\n" not in message, message
            event("refused")
            return
    event("loaded")
    X = loaded.X.toarray() if sp.issparse(loaded.X) else loaded.X
    assert X.dtype == np.float64 and loaded.Y.shape[0] == X.shape[0]


@st.composite
def shifted_problems(draw):
    """Features with a large common offset and a scale (timestamps, raw identifiers, tiny
    units), or unsigned integers near 2^63, with complete labels."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    n, d, n_labels = draw(st.integers(8, 30)), draw(st.integers(1, 6)), draw(st.integers(1, 4))
    X = rng.standard_normal((n, d))
    Y = (rng.random((n, n_labels)) < 0.4).astype(float)
    Y[0] = 1.0  # every label has a positive
    if draw(st.booleans()):
        scale = 10.0 ** draw(st.integers(-8, 8))
        offset = draw(st.sampled_from([1.0, -1.0])) * 10.0 ** draw(st.integers(0, 12))
        per_column = draw(st.booleans())
        X = X * scale + (offset * rng.integers(1, 4, size=d) if per_column else offset)
    else:
        X = np.uint64(2**63 - 2**20) + (np.abs(X) * 1000).astype(np.uint64)
    return X, Y


@pytest.mark.parametrize("name", list(quick_estimators()))
@settings(_SETTINGS, max_examples=15)
@given(problem=shifted_problems())
def test_offsets_and_scales_fit_or_fail_naming_the_fix(name, problem):
    X, Y = problem
    model = quick_estimators()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            scores = model.fit(X, Y).decision_function(X)
        except ValueError as error:
            event("refused")
            message = str(error)
            assert "\n" not in message and "rescale" in message, f"{name}: {message}"
            return
    event("fitted")
    assert scores.shape == Y.shape and np.isfinite(scores).all()
