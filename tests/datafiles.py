"""Small data files written by the tests of the command line, of outputs and of saved
models: svmlight and ARFF."""

import numpy as np
from sklearn.datasets import dump_svmlight_file

ARFF = """@relation '{relation}'
{labels}@attribute f1 numeric
@attribute f2 numeric
@attribute f3 numeric
@attribute f4 numeric
@data
{rows}
"""


def thresholded_rows(n, seed=0):
    """n rows of 4 features (standard normal + 1) and 3 labels, each a feature above 1."""
    X = np.random.default_rng(seed).standard_normal((n, 4)) + 1
    return X, (X[:, :3] > 1).astype(int)


def _svmlight(path, seed, n=80, d=6, l=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 1.0
    Y = (X @ rng.standard_normal((d, l)) > 0).astype(int)
    dump_svmlight_file(X, Y, str(path), multilabel=True)
    return X, Y


def _arff(path, X, Y=None, relation="data"):
    """A dense ARFF file: MEKA labels a, b, c first (-C 3), NaN in Y written as a missing
    value ('?'), or no labels without Y."""
    labels = "" if Y is None else "".join(f"@attribute {name} {{0,1}}\n" for name in "abc")
    rows = [",".join(([] if Y is None else ["?" if v != v else str(int(v)) for v in Y[i]])
                     + [f"{v:.4f}" for v in X[i]]) for i in range(len(X))]
    if Y is not None:
        relation += ": -C 3"
    path.write_text(ARFF.format(relation=relation, labels=labels, rows="\n".join(rows)))
