"""GLOCAL on real data: Enron from the data directory (required in CI)."""

import numpy as np
from sklearn.model_selection import train_test_split

from glocal import GLOCAL
from glocal.metrics import average_precision
from realdata import real


def test_glocal_on_enron_beats_label_frequency_ranking():
    data = real("enron")
    X_train, X_test, Y_train, Y_test = train_test_split(data.X, data.Y, test_size=0.4,
                                                        random_state=0)
    keep = np.asarray(Y_test.sum(axis=1)).ravel() > 0
    X_test, Y_test = X_test[keep], Y_test[keep]

    model = GLOCAL(random_state=0).fit(X_train, Y_train)

    history = np.asarray(model.objective_history_)
    assert np.all(np.diff(history) <= 1e-10 * history[:-1])
    assert history[-1] < history[0]
    ours = average_precision(Y_test, model.decision_function(X_test))
    frequency = np.broadcast_to(Y_train.mean(axis=0), Y_test.shape)
    baseline = average_precision(Y_test, frequency)
    assert ours > baseline, (ours, baseline)
