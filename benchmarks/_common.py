"""What the benchmark scripts share: the data directory, the paper's kind of split, a synthetic
sparse text-like set and the timing of fits."""

import argparse
import csv
import os
import statistics
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, train_test_split
from threadpoolctl import threadpool_limits

from glocal.datasets import load_dataset, make_glocal_data
from glocal.protocol import drop_unlabeled_rows, sample_observed

DATA_DIR = os.environ.get("GLOCAL_DATA")  # None: load_dataset says what to set


def paper_split(name, data_dir, seed):
    """One random 60/40 split of all rows of a dataset (a shared one or ``"synthetic:N,D,L"``,
    as `named_data` reads them), test rows without a positive dropped."""
    X, Y = named_data(name, data_dir)
    X_train, X_test, Y_train, Y_test = train_test_split(X, Y, test_size=0.4, random_state=seed)
    X_test, Y_test = drop_unlabeled_rows(X_test, Y_test)
    return X_train, X_test, Y_train, Y_test


def observed_split(name, data_dir, seed, rho):
    """`paper_split`, a fraction ``rho`` of each label's training entries kept by the paper's
    sampler (the rest NaN; all of them when ``rho`` is 1) and 3 shuffled folds seeded by
    ``seed``: X_train, X_test, the observed Y_train, Y_test and the folds."""
    X_train, X_test, Y_train, Y_test = paper_split(name, data_dir, seed)
    Y_observed = sample_observed(Y_train, rho, random_state=seed) if rho < 1 else Y_train
    return X_train, X_test, Y_observed, Y_test, KFold(n_splits=3, shuffle=True,
                                                       random_state=seed)


def cpu_timed(fit):
    """``fit()`` and the CPU seconds it took."""
    tic = time.process_time()
    result = fit()
    return result, time.process_time() - tic


def cells_parser(description, datasets=None):
    """The options of a benchmark over (dataset, rho) cells: ``--datasets`` (``datasets`` by
    default, or required), ``--rhos``, ``--seed``, ``--data-dir`` and ``--out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--datasets", nargs="+", default=datasets, required=datasets is None)
    parser.add_argument("--rhos", nargs="+", type=float, default=[0.3, 1.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--out", required=True, help="CSV file to write (appended to)")
    return parser


def append_cells(path, fields, cells):
    """Append the rows of every cell (``cells`` yields lists of row dicts) to the CSV
    ``path``, a header first in a new file, printing each row; the cells are computed with
    one BLAS thread and their ConvergenceWarnings silenced (the studies count them
    elsewhere)."""
    with open(path, "a", newline="") as file, threadpool_limits(1, "blas"):
        writer = csv.DictWriter(file, fields)
        if file.tell() == 0:
            writer.writeheader()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for rows in cells:
                for row in rows:
                    writer.writerow(row)
                    print(" ".join(f"{row[field]}" for field in fields), flush=True)
                file.flush()


def named_data(name, data_dir, max_rows=None, seed=0):
    """X and a dense {0, 1} Y of a shared dataset, or of ``"synthetic:N,D,L"``: the
    generator's N x D Gaussian features with entries of magnitude below 1 set to zero
    (sparse), and its L labels. ``max_rows`` keeps that many rows drawn at random."""
    if name.startswith("synthetic:"):
        n, d, l = (int(part) for part in name.split(":")[1].split(","))
        data = make_glocal_data(n_samples=n, n_features=d, n_labels=l, random_state=seed)
        X, Y = sp.csr_matrix(np.where(np.abs(data.X) > 1.0, data.X, 0.0)), data.Y
    else:
        data = load_dataset(name, data_dir)
        X, Y = data.X, data.Y
    Y = np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=float)
    if max_rows is not None and X.shape[0] > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))
        X, Y = X[rows], Y[rows]
    return X, Y


def sparse_text_data(n=3600, d=50_000, l=101, density=0.0015, seed=0):
    """Text-like data: Zipf-popular features, unit-norm rows, labels from a sparse linear
    model (3% positives per label)."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, d + 1) ** 0.8
    per_row = max(1, int(density * d))
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.choice(d, size=n * per_row, p=popularity / popularity.sum())
    X = sp.csr_matrix((rng.random(n * per_row) + 0.5, (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    X = sp.csr_matrix(sp.diags(1.0 / sp.linalg.norm(X, axis=1)) @ X)
    coef = sp.random(d, l, density=0.01, random_state=seed) @ sp.diags(rng.standard_normal(l))
    scores = np.asarray((X @ coef).todense()) + 0.05 * rng.standard_normal((n, l))
    return X, (scores > np.quantile(scores, 0.97, axis=0)).astype(float)


def timed_fit(make_model, X, Y, repeats, **fit_params):
    """Median fit time, the last fitted model and whether a ConvergenceWarning was raised."""
    times = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        for _ in range(repeats):
            model = make_model()
            tic = time.process_time()
            model.fit(X, Y, **fit_params)
            times.append(time.process_time() - tic)
    capped = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return statistics.median(times), model, capped


try:
    from libmultilabel import linear as libmultilabel_linear
except ImportError:  # the message names the extra that installs it
    libmultilabel_linear = None


class OneVsRest:
    """``libmultilabel.linear.train_1vsrest`` behind ``fit`` / ``decision_function``, each
    label on its observed rows (NaN in Y marks the others)."""

    def __init__(self, options):
        self.options = options

    def fit(self, X, Y):
        X = sp.csr_matrix(X, dtype=float)
        observed = ~np.isnan(Y)
        if observed.all():
            self.model_ = libmultilabel_linear.train_1vsrest(
                sp.csr_matrix(Y), X, options=self.options, verbose=False)
            return self
        weights, bias = np.zeros((0, Y.shape[1])), None
        for j in range(Y.shape[1]):
            rows = np.flatnonzero(observed[:, j])
            if rows.size:  # a label never observed keeps the score 0
                model = libmultilabel_linear.train_1vsrest(
                    sp.csr_matrix(Y[rows, j:j + 1]), X[rows], options=self.options,
                    verbose=False)
                if bias is None:  # its number of weights: d, or d + 1 with a bias
                    weights, bias = np.zeros((model.weights.shape[0], Y.shape[1])), model.bias
                weights[:, j] = np.asarray(model.weights)[:, 0]
        self.model_ = libmultilabel_linear.FlatModel(
            name="1vsrest", weights=np.asmatrix(weights), bias=bias, thresholds=0,
            multiclass=False)
        return self

    def decision_function(self, X):
        return self.model_.predict_values(sp.csr_matrix(X, dtype=float))
