"""Tests of the dataset loaders: the real benchmark files, then small files covering each rule."""

import os
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.io import savemat

from glocal.datasets import load, load_dataset
from glocal.datasets.svmlight import load_svmlight
from realdata import real

# source (dataset name, or a file under DATA_DIR), n, d, labels, training rows, sparse X
REAL = [
    ("enron", 1702, 1001, 53, None, True),
    ("image", 2000, 294, 5, 1501, False),
    ("arts", 5000, 462, 26, 2000, False),
    ("business", 5000, 438, 30, 2000, False),
    ("computers", 5000, 681, 33, 2000, False),
    ("education", 5000, 550, 33, 2000, False),
    ("entertainment", 5000, 640, 21, 2000, False),
    ("health", 5000, 612, 32, 2000, False),
    ("yeast", 2417, 103, 14, None, False),
    ("emotions", 593, 72, 6, None, False),
    ("scene", 2407, 294, 6, 1211, False),
    ("medical", 978, 1449, 45, None, True),
    ("genbase", 662, 1185, 27, None, False),
    ("bibtex", 7395, 1836, 159, None, True),
    ("delicious", 16105, 500, 983, None, True),
    ("birds", 645, 260, 19, 322, False),
    ("cal500", 502, 68, 174, None, False),
] + [(f"rcv1subset/rcv1subset{i}.mat", 6000, 944, 101, None, False) for i in range(1, 6)]


@pytest.mark.parametrize("source, n, d, n_labels, n_train, sparse", REAL, ids=[r[0] for r in REAL])
def test_real_dataset(source, n, d, n_labels, n_train, sparse):
    data = real(source)
    assert data.X.shape == (n, d)
    assert data.Y.shape == (n, n_labels)
    assert sp.issparse(data.X) == sparse
    if sparse:
        assert data.X.format == "csr"
    assert data.X.dtype == np.float64
    assert np.isfinite(data.X.data if sparse else data.X).all()
    assert np.issubdtype(data.Y.dtype, np.integer)
    assert np.isin(data.Y, (0, 1)).all()
    assert len(data.feature_names) == d
    assert len(data.label_names) == n_labels
    if n_train is None:
        assert "train_idx" not in data
    else:
        np.testing.assert_array_equal(data.train_idx, np.arange(n_train))
        np.testing.assert_array_equal(data.test_idx, np.arange(n_train, n))


def test_real_image_label_counts():
    data = real("image")
    assert data.label_names == [f"label{k}" for k in range(1, 6)]
    np.testing.assert_array_equal(data.Y.sum(axis=0), [409, 458, 580, 465, 560])


def test_real_enron_arff_matches_mat():
    arff_data = real("enron")
    mat_data = real("enron/enron.mat")
    assert arff_data.feature_names[:3] == ["0", "00", "000"]  # ARFF preferred to .mat
    np.testing.assert_array_equal(arff_data.X.toarray(), mat_data.X)
    np.testing.assert_array_equal(arff_data.Y, mat_data.Y)  # both in ARFF label order


def test_real_genbase_identifier_and_yes_no():
    data = real("genbase")
    assert "protein" not in data.feature_names
    assert set(np.unique(data.X)) == {0.0, 1.0}
    assert data.X.mean() < 0.5  # YES, the rare value, is 1


def test_real_birds_quoted_names_and_nominal():
    data = real("birds")
    assert "Stellar's Jay" in data.label_names
    location = data.X[:, data.feature_names.index("location")]
    np.testing.assert_array_equal(np.unique(location), np.arange(12))


# --- small files ------------------------------------------------------------------------

MULAN_ARFF = """% labels in the middle, quoted names
@relation toy
@attribute 'feat one' numeric
@attribute 'lab\\'A' {0,1}
@attribute f2 NUMERIC
@attribute "lab B" {0,1}
@attribute parent {0,1}
@attribute f3 real
@data
1.5,1,2,0,1,-3
0,0,?,1,1,4
% a comment between rows
2,0,1,0,0,0.5
"""

MULAN_XML = """<?xml version="1.0" encoding="utf-8"?>
<labels xmlns="http://mulan.sourceforge.net/labels">
  <label name="parent">
    <label name="lab B"></label>
    <label name="lab'A"></label>
  </label>
</labels>
"""

SPARSE_ARFF = """@relation sparse
@attribute a numeric
@attribute b numeric
@attribute present {YES,NO}
@attribute y1 {0,1}
@attribute y2 {0,1}
@data
{0 1.5,3 1}
{1 2,2 NO,4 1}
{0 -1}
{}
"""


def xml_for(*labels):
    rows = "".join(f'<label name="{name}"/>' for name in labels)
    return f'<labels xmlns="http://mulan.sourceforge.net/labels">{rows}</labels>'


def write(path, text):
    path.write_text(text)
    return path


def test_mulan_dense_arff(tmp_path):
    write(tmp_path / "toy.xml", MULAN_XML)
    data = load(write(tmp_path / "toy.arff", MULAN_ARFF))
    assert data.name == "toy"
    assert data.feature_names == ["feat one", "f2", "f3"]
    assert data.label_names == ["lab'A", "lab B", "parent"]  # ARFF order, not XML order
    assert isinstance(data.X, np.ndarray) and data.X.dtype == np.float64
    np.testing.assert_array_equal(data.X, [[1.5, 2, -3], [0, np.nan, 4], [2, 1, 0.5]])
    np.testing.assert_array_equal(data.Y, [[1, 0, 1], [0, 1, 1], [0, 0, 0]])


def test_explicit_xml(tmp_path):
    xml = write(tmp_path / "labels.xml", MULAN_XML)
    data = load(write(tmp_path / "other.arff", MULAN_ARFF), xml=xml)
    assert data.label_names == ["lab'A", "lab B", "parent"]


def test_sparse_arff(tmp_path):
    write(tmp_path / "sparse.xml", xml_for("y1", "y2"))
    data = load(write(tmp_path / "sparse.arff", SPARSE_ARFF))
    assert sp.issparse(data.X) and data.X.format == "csr"
    # An omitted nominal entry is its first declared value, YES.
    np.testing.assert_array_equal(
        data.X.toarray(), [[1.5, 0, 1], [0, 2, 0], [-1, 0, 1], [0, 0, 1]]
    )
    np.testing.assert_array_equal(data.Y, [[1, 0], [0, 1], [0, 0], [0, 0]])


MEKA_FIRST = """@relation 'toy: -C 3 -split 1'
@attribute l1 {0,1}
@attribute l2 {0,1}
@attribute l3 {0,1}
@attribute f1 numeric
@data
1,0,1,0.5
0,1,0,0.25
"""

MEKA_LAST = """@relation 'toy: -C -2'
@attribute f1 numeric
@attribute l1 {0,1}
@attribute l2 {0,1}
@data
0.5,1,0
0.25,0,1
"""


@pytest.mark.parametrize(
    "text, labels, Y",
    [(MEKA_FIRST, ["l1", "l2", "l3"], [[1, 0, 1], [0, 1, 0]]), (MEKA_LAST, ["l1", "l2"], np.eye(2))],
)
def test_meka_arff(tmp_path, text, labels, Y):
    data = load(write(tmp_path / "meka.arff", text))
    assert data.label_names == labels
    assert data.feature_names == ["f1"]
    np.testing.assert_array_equal(data.X, [[0.5], [0.25]])
    np.testing.assert_array_equal(data.Y, Y)


def test_nominal_features_and_identifiers(tmp_path):
    text = """@relation 'ids: -C -1'
@attribute id {p1,p2,p3,p4}
@attribute note string
@attribute flag {NO,YES}
@attribute ok {TRUE,FALSE}
@attribute colour {red,green,blue}
@attribute x numeric
@attribute y {0,1}
@data
p3,'free text',YES,TRUE,blue,1,1
p1,more,NO,FALSE,red,2,0
p4,x,YES,FALSE,blue,3,1
p2,y,NO,TRUE,green,4,0
"""
    data = load(write(tmp_path / "ids.arff", text))
    assert data.feature_names == ["flag", "ok", "colour", "x"]
    np.testing.assert_array_equal(
        data.X, [[1, 1, 2, 1], [0, 0, 0, 2], [1, 0, 2, 3], [0, 1, 1, 4]]
    )
    np.testing.assert_array_equal(data.Y, [[1], [0], [1], [0]])


def test_train_test_pair(tmp_path):
    header, rows = MULAN_ARFF.split("@data\n")
    folder = tmp_path / "toy"
    folder.mkdir()
    write(folder / "toy.xml", MULAN_XML)
    train = write(folder / "toy-train.arff", header + "@data\n" + rows)
    write(folder / "toy-test.arff", header + "@data\n9,1,9,1,0,9\n")

    data = load(train)
    assert data.name == "toy"
    assert data.X.shape == (4, 3)
    np.testing.assert_array_equal(data.train_idx, [0, 1, 2])
    np.testing.assert_array_equal(data.test_idx, [3])
    np.testing.assert_array_equal(data.Y[3], [1, 1, 0])
    for other in (load(folder), load_dataset("TOY", tmp_path)):
        np.testing.assert_array_equal(other.test_idx, [3])
    assert "train_idx" not in load(folder / "toy-test.arff")


def test_train_test_attributes_must_agree(tmp_path):
    write(tmp_path / "toy.xml", MULAN_XML)
    train = write(tmp_path / "toy-train.arff", MULAN_ARFF)
    test = write(tmp_path / "toy-test.arff", MULAN_ARFF.replace("f3 real", "f4 real"))
    with pytest.raises(ValueError, match=re.escape(str(test))):
        load(train)


def test_mat_orientations_and_encodings(tmp_path):
    rng = np.random.default_rng(0)
    data = rng.integers(0, 5, size=(4, 3)).astype(np.uint8)
    signed = np.array([[1, -1, -1, 1], [-1, 1, -1, -1]])

    savemat(tmp_path / "lxn.mat", {"data": data, "target": signed})
    loaded = load(tmp_path / "lxn.mat")
    assert loaded.X.dtype == np.float64
    np.testing.assert_array_equal(loaded.X, data)
    np.testing.assert_array_equal(loaded.Y, (signed.T > 0).astype(int))
    assert loaded.feature_names == ["x0", "x1", "x2"] and loaded.label_names == ["y0", "y1"]

    savemat(tmp_path / "nxl.mat", {"data": sp.csc_matrix(data), "target": (signed.T > 0) * 1})
    loaded = load(tmp_path / "nxl.mat")
    assert sp.issparse(loaded.X) and loaded.X.format == "csr"
    np.testing.assert_array_equal(loaded.Y, (signed.T > 0).astype(int))

    # A lone square target gives no evidence of transposition.
    square = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1]])
    savemat(tmp_path / "square.mat", {"data": data[:3], "target": square})
    np.testing.assert_array_equal(load(tmp_path / "square.mat").Y, square)


def test_mat_split_orientation_from_other_target(tmp_path):
    train_target = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1]])  # square: ambiguous
    test_target = np.array([[0, 1], [1, 1], [0, 0]])  # 3 labels x 2 instances
    savemat(
        tmp_path / "split.mat",
        {
            "train_data": np.ones((3, 2)),
            "train_target": train_target,
            "test_data": np.zeros((2, 2)),
            "test_target": test_target,
        },
    )
    loaded = load(tmp_path / "split.mat")
    np.testing.assert_array_equal(loaded.Y, np.vstack([train_target.T, test_target.T]))
    np.testing.assert_array_equal(loaded.train_idx, [0, 1, 2])
    np.testing.assert_array_equal(loaded.test_idx, [3, 4])


def test_svmlight_multilabel(tmp_path):
    path = write(tmp_path / "toy.svm", "0,2 1:0.5 3:1\n1 2:2\n2 1:1\n")
    loaded = load(path)
    assert sp.issparse(loaded.X)
    np.testing.assert_array_equal(loaded.X.toarray(), [[0.5, 0, 1], [0, 2, 0], [1, 0, 0]])
    np.testing.assert_array_equal(loaded.Y, [[1, 0, 1], [0, 1, 0], [0, 0, 1]])
    assert loaded.label_names == ["0", "1", "2"]
    assert load_svmlight(path, n_labels=5).Y.shape == (3, 5)


def test_arff_preferred_to_mat(tmp_path):
    write(tmp_path / "d.arff", MULAN_ARFF)
    write(tmp_path / "d.xml", MULAN_XML)
    savemat(tmp_path / "d.mat", {"data": np.ones((3, 3)), "target": np.ones((3, 3))})
    assert load_dataset("d", tmp_path).feature_names == ["feat one", "f2", "f3"]


# --- errors -------------------------------------------------------------------------------


def raises_naming(error, path):
    return pytest.raises(error, match=re.escape(str(path)))


def test_malformed_arff(tmp_path):
    path = write(tmp_path / "bad.arff", MULAN_ARFF.replace("f2 NUMERIC", "f2 complex"))
    with raises_naming(ValueError, path):
        load(path, xml=write(tmp_path / "bad.xml", MULAN_XML))
    path = write(tmp_path / "short.arff", MULAN_ARFF + "1,2\n")
    with raises_naming(ValueError, path):
        load(path, xml=tmp_path / "bad.xml")


def test_missing_xml(tmp_path):
    path = write(tmp_path / "toy-train.arff", MULAN_ARFF)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert "toy.xml" in str(info.value) and "xml=" in str(info.value)
    with raises_naming(FileNotFoundError, tmp_path / "nope.xml"):
        load(path, xml=tmp_path / "nope.xml")


def test_label_not_in_arff(tmp_path):
    write(tmp_path / "toy.xml", xml_for("parent", "ghost"))
    path = write(tmp_path / "toy.arff", MULAN_ARFF)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert "ghost" in str(info.value)


@pytest.mark.parametrize(
    "declared, good, bad, row",
    [("{0,1,2}", "0", "2", 2), ("numeric", "1", "0.5", 2), ("{no,yes}", "no", "yes", 1)],
)
def test_bad_label_value(tmp_path, declared, good, bad, row):
    text = f"@relation 'x: -C 1'\n@attribute y {declared}\n@attribute f numeric\n@data\n{good},1\n{bad},2\n"
    path = write(tmp_path / "labels.arff", text)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert "'y'" in str(info.value) and f"row {row}" in str(info.value)


@pytest.mark.parametrize("declared", ["{0,1}", "numeric"])
def test_missing_label_values_are_nan_when_accepted(tmp_path, declared):
    text = (f"@relation 'x: -C 2'\n@attribute y1 {declared}\n@attribute y2 {declared}\n"
            "@attribute f numeric\n@data\n1,?,1\n?,0,2\n0,1,3\n")
    path = write(tmp_path / "missing.arff", text)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert "'y2'" in str(info.value) and "row 1 has a missing value" in str(info.value)
    assert "missing_labels=True" in str(info.value)
    data = load(path, missing_labels=True)
    assert data.Y.dtype == np.float64
    np.testing.assert_array_equal(data.Y, [[1, np.nan], [np.nan, 0], [0, 1]])
    # Complete labels stay int; a value other than 0, 1 and '?' is still refused.
    assert load(write(tmp_path / "full.arff", text.replace("?", "0")),
                missing_labels=True).Y.dtype.kind == "i"
    with raises_naming(ValueError, path) as info:
        load(write(tmp_path / "missing.arff", text.replace("0,1,3", "0,0.5,3")),
             missing_labels=True)
    assert "0.5" in str(info.value)  # for {0,1}: not among the declared values


def test_missing_label_values_in_sparse_rows_and_nominal_words(tmp_path):
    write(tmp_path / "sparse.xml", xml_for("y1", "y2"))
    path = write(tmp_path / "sparse.arff", SPARSE_ARFF.replace("{0 -1}", "{0 -1,4 ?}"))
    np.testing.assert_array_equal(load(path, missing_labels=True).Y,
                                  [[1, 0], [0, 1], [0, np.nan], [0, 0]])
    text = "@relation 'x: -C 1'\n@attribute y {a,b}\n@attribute f numeric\n@data\n?,1\nb,2\n"
    path = write(tmp_path / "words.arff", text)
    with raises_naming(ValueError, path) as info:
        load(path, missing_labels=True)
    assert "row 2 has a non-numeric value" in str(info.value)


def test_unknown_extension(tmp_path):
    path = write(tmp_path / "data.csv", "1,2\n")
    with raises_naming(ValueError, path):
        load(path)


@pytest.mark.parametrize(
    "contents, message",
    [
        ({"X": np.ones((2, 2)), "Y": np.ones((2, 2))}, "layout"),
        ({"data": np.ones((4, 3)), "target": np.ones((2, 5))}, "do not match"),
        ({"data": np.ones((2, 3)), "target": np.array([[0, 2], [1, 0]])}, "target values"),
    ],
)
def test_bad_mat(tmp_path, contents, message):
    path = tmp_path / "bad.mat"
    savemat(path, contents)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert message in str(info.value)


def test_missing_file(tmp_path):
    with raises_naming(FileNotFoundError, tmp_path / "absent.arff"):
        load(tmp_path / "absent.arff")


def test_load_dataset_unknown(tmp_path, monkeypatch):
    with raises_naming(FileNotFoundError, tmp_path) as info:
        load_dataset("nothing", tmp_path)
    assert "'nothing'" in str(info.value) and "GLOCAL_DATA" in str(info.value)
    monkeypatch.delenv("GLOCAL_DATA", raising=False)
    with pytest.raises(FileNotFoundError, match="GLOCAL_DATA"):
        load_dataset("nothing")


# --- damaged files: one ValueError naming the file and what is wrong -----------------------


def _mat_bytes(tmp_path, compressed):
    path = tmp_path / "sound.mat"
    X = np.random.default_rng(0).random((20, 5))
    savemat(path, {"data": X, "target": np.eye(20, 3)}, do_compression=compressed)
    return path.read_bytes()


@pytest.mark.parametrize("damage, message", [
    ("flipped bytes in compressed data", "damaged"),  # zlib.error inside scipy
    ("cut in the header", "damaged"),  # IndexError inside scipy
    ("cut in the data", "damaged"),  # "could not read bytes", without the file, in scipy
])
def test_damaged_mat_names_the_file(tmp_path, damage, message):
    data = _mat_bytes(tmp_path, compressed=damage.endswith("compressed data"))
    if damage.startswith("flipped"):
        data = data[:300] + bytes(b ^ 0xFF for b in data[300:340]) + data[340:]
    else:
        data = data[:100] if damage == "cut in the header" else data[:len(data) // 2]
    path = tmp_path / "damaged.mat"
    path.write_bytes(data)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("key", ["data", "target"])
def test_complex_mat_is_refused(tmp_path, key):
    contents = {"data": np.ones((3, 2)), "target": np.eye(3, 2)}
    contents[key] = contents[key] + 0j
    path = tmp_path / "complex.mat"
    savemat(path, contents)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert f"'{key}' holds complex numbers" in str(info.value)


@pytest.mark.parametrize("text, message", [
    ("0 3000000000:0.5\n", "malformed svmlight file"),  # OverflowError inside scikit-learn
    ("2000000000 1:0.5\n" * 8, "memory budget"),  # 120 GiB of labels
    ("0 1:0.5\n1 2:0.5e", "the last row is cut short"),
    ("0 1:0.5\n1 2:", "the last row is cut short"),
    ("0 1:0.5\n1 2", "the last row is cut short"),
    ("0 1:0.5\n1,", "malformed svmlight file"),
    ("inf 1:0.5\n", "labels must be non-negative integers"),
])
def test_damaged_svmlight_names_the_file(tmp_path, text, message):
    path = write(tmp_path / "damaged.svm", text)
    with raises_naming(ValueError, path) as info:
        load(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_svmlight_complete_last_row_without_newline_loads(tmp_path):
    loaded = load(write(tmp_path / "d.svm", "0 1:0.5\n1 2:0.25"))
    np.testing.assert_array_equal(loaded.X.toarray(), [[0.5, 0], [0, 0.25]])
    assert load(write(tmp_path / "e.svm", "0 1:0.5\n1")).Y.shape == (2, 2)  # labels only


def test_svmlight_index_base_is_found_once_and_then_kept(tmp_path):
    zero = write(tmp_path / "zero.svm", "0 0:1 2:3\n1 1:2\n")
    one = write(tmp_path / "one.svm", "0 1:1 3:3\n1 2:2\n")
    assert load(zero).index_base == 0 and load(one).index_base == 1
    np.testing.assert_array_equal(load(one).X.toarray(), [[1, 0, 3], [0, 2, 0]])
    # Read as 0-based data (a model's training file had a 0 index), a file whose feature 0
    # is given, if only as 0, is read as it is: nothing shifts.
    given = write(tmp_path / "given.svm", "0 0:0 1:1 3:3\n1 2:2\n")
    read = load(given, index_base=0, n_features=4)
    np.testing.assert_array_equal(read.X.toarray(), [[0, 1, 0, 3], [0, 0, 2, 0]])
    with raises_naming(ValueError, zero) as info:
        load(zero, index_base=1)
    assert "feature index 0" in str(info.value)


def test_arff_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "bom.arff"
    path.write_bytes(b"\xef\xbb\xbf" + MULAN_ARFF.encode())
    write(tmp_path / "bom.xml", MULAN_XML)
    assert load(path).feature_names == load(write(tmp_path / "plain.arff", MULAN_ARFF),
                                            xml=tmp_path / "bom.xml").feature_names


def test_svmlight_read_from_0_without_index_0_is_refused(tmp_path):
    """A model fitted on a 0-based file would score a 1-based file shifted by one feature
    (whether the file is 1-based cannot be told when it leaves the last feature out): the
    file is refused in one line that says how to number it."""
    one = tmp_path / "one.svm"
    one.write_text("0 1:1 2:2\n1 2:3 3:4\n")
    with raises_naming(ValueError, one) as info:
        load(one, index_base=0, n_features=5)
    assert "no feature index 0" in str(info.value) and "'0:0'" in str(info.value)
    (tmp_path / "zero.svm").write_text("0 0:1 2:2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load(tmp_path / "zero.svm", index_base=0, n_features=5)
        load(one)  # its own base: nothing to say


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_pipe_as_data_file_is_refused_unread(tmp_path):
    """Reading a pipe (or a device such as /dev/zero) would wait, or never end."""
    from test_persistence import _returns_soon

    pipe = tmp_path / "data.svm"
    os.mkfifo(pipe)
    assert _returns_soon(load, pipe)
    with raises_naming(ValueError, pipe) as info:
        load(pipe)
    assert "not a regular file" in str(info.value)


def test_svmlight_with_a_byte_order_mark_loads(tmp_path):
    """As an ARFF file with one: editors on Windows write a UTF-8 BOM."""
    text = "0 1:0.5\n1 2:0.25\n"
    plain = load(write(tmp_path / "plain.svm", text))
    path = tmp_path / "bom.svm"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    loaded = load(path)
    np.testing.assert_array_equal(loaded.X.toarray(), plain.X.toarray())
    np.testing.assert_array_equal(loaded.Y, plain.Y)


def test_arff_in_utf16_with_its_byte_order_mark_loads(tmp_path):
    """Windows tools save "Unicode" text as UTF-16 with a byte order mark."""
    write(tmp_path / "wide.xml", MULAN_XML)
    (tmp_path / "wide.arff").write_bytes(MULAN_ARFF.encode("utf-16"))
    plain = load(write(tmp_path / "plain.arff", MULAN_ARFF), xml=tmp_path / "wide.xml")
    loaded = load(tmp_path / "wide.arff")
    assert loaded.feature_names == plain.feature_names
    np.testing.assert_array_equal(loaded.X, plain.X)
    np.testing.assert_array_equal(loaded.Y, plain.Y)


def test_arff_in_utf16_cut_mid_character_names_the_file(tmp_path):
    path = tmp_path / "cut.arff"
    path.write_bytes(MULAN_ARFF.encode("utf-16")[:101])
    with raises_naming(ValueError, path) as info:
        load(path, xml=write(tmp_path / "cut.xml", MULAN_XML))
    assert "UTF-16" in str(info.value)


def _refused_fast(path, *fragments):
    """load refuses ``path`` in one line naming it, in under a second, as does the CLI."""
    import time

    from glocal.cli import main

    tic = time.perf_counter()
    with raises_naming(ValueError, path) as info:
        load(path)
    assert time.perf_counter() - tic < 1.0
    for fragment in fragments:
        assert fragment in str(info.value), info.value
    assert main(["fit", str(path), "--model", str(path.with_suffix(".skops"))]) == 2


def test_a_mat_file_that_inflates_like_a_bomb_is_refused_unread(tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    path = tmp_path / "bomb.mat"
    scipy_io.savemat(path, {"data": np.zeros((3000, 3000)), "target": np.zeros((3000, 2))},
                     do_compression=True)
    assert path.stat().st_size < 2**20
    _refused_fast(path, "bomb")


def test_a_mat_file_over_the_memory_budget_is_refused_unread(tmp_path, monkeypatch):
    scipy_io = pytest.importorskip("scipy.io")
    path = tmp_path / "big.mat"
    scipy_io.savemat(path, {"data": np.ones((400, 300)), "target": np.eye(400, 2)})
    monkeypatch.setenv("GLOCAL_MEMORY_BUDGET", "1e-4")  # about 100 kB
    _refused_fast(path, "memory budget")


def test_an_svmlight_feature_index_beyond_the_memory_budget_is_refused(tmp_path):
    path = write(tmp_path / "huge.svm", "1 2147483646:1\n0 3:1\n")
    _refused_fast(path, "feature index 2147483646", "memory budget")
