"""Files without labels (new data to predict on) load only when asked for."""

import numpy as np
import pytest
import scipy.io

from glocal.datasets import load

DENSE = "@relation '{relation}'\n@attribute f1 numeric\n@attribute f2 numeric\n@data\n1,2\n3,4\n"


@pytest.mark.parametrize("relation", ["new: -C 0", "new"])
def test_arff_without_labels(tmp_path, relation):
    path = tmp_path / "new.arff"
    path.write_text(DENSE.format(relation=relation))
    data = load(path, unlabeled=True)
    assert data.Y.shape == (2, 0) and data.label_names == []
    assert data.feature_names == ["f1", "f2"]
    np.testing.assert_array_equal(data.X, [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="-C 0|cannot tell which attributes are labels"):
        load(path)


def test_arff_without_the_labels_its_xml_names(tmp_path):
    path = tmp_path / "new.arff"
    path.write_text(DENSE.format(relation="new"))
    xml = tmp_path / "labels.xml"
    xml.write_text('<labels xmlns="http://mulan.sourceforge.net/labels">'
                   '<label name="a"/><label name="b"/></labels>')
    assert load(path, xml=xml, unlabeled=True).Y.shape == (2, 0)
    with pytest.raises(ValueError, match="are not attributes"):
        load(path, xml=xml)
    # Some labels present and some absent is a broken file, not unlabeled data.
    xml.write_text('<labels><label name="f2"/><label name="b"/></labels>')
    with pytest.raises(ValueError, match="are not attributes"):
        load(path, xml=xml, unlabeled=True)


def test_mat_with_data_only(tmp_path):
    path = tmp_path / "new.mat"
    scipy.io.savemat(path, {"data": np.ones((3, 2))})
    data = load(path, unlabeled=True)
    assert data.X.shape == (3, 2) and data.Y.shape == (3, 0)
    with pytest.raises(ValueError, match="unknown variable layout"):
        load(path)


def test_svmlight_without_labels_takes_the_model_shape(tmp_path):
    path = tmp_path / "new.svm"
    path.write_text(" 1:0.5 2:1\n 1:1\n")
    data = load(path)
    assert data.X.shape == (2, 2) and data.Y.shape == (2, 0)  # one-based indices
    data = load(path, n_features=6, n_labels=4)
    assert data.X.shape == (2, 6) and data.Y.shape == (2, 4) and not data.Y.any()
