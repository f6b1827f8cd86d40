"""What the benchmark scripts share: the data directory and the paper's kind of split."""

import os

from sklearn.model_selection import train_test_split

from glocal.datasets import load_dataset
from glocal.protocol import drop_unlabeled_rows

DATA_DIR = os.environ.get("GLOCAL_DATA")  # None: load_dataset says what to set


def paper_split(name, data_dir, seed):
    """One random 60/40 split of all rows of a dataset, test rows without a positive dropped."""
    data = load_dataset(name, data_dir)
    X_train, X_test, Y_train, Y_test = train_test_split(data.X, data.Y, test_size=0.4,
                                                        random_state=seed)
    X_test, Y_test = drop_unlabeled_rows(X_test, Y_test)
    return X_train, X_test, Y_train, Y_test
