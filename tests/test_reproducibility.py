"""Seeded fits are reproducible bit for bit: twice in one process, and in a fresh process.

Every estimator that draws random numbers (k-means, random initial points, liblinear's
shuffling, power iterations) takes a ``random_state``; the two-stage methods pass theirs on
to the learner, and GLOCALCV to its folds and fits. MAXIDE draws none of its own.
"""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import glocal

# name -> expression building the estimator with random_state=0 (evaluated in both processes)
ESTIMATORS = {
    "GLOCAL": "GLOCAL(n_latent=3, random_state=0)",
    "GLObal": "GLObal(n_latent=3, random_state=0)",
    "loCAL": "loCAL(n_latent=3, random_state=0)",
    "GLOCALCV": "GLOCALCV(GLOCAL(n_latent=3, max_iter=5), {'lam2': [4.0, 1.0]}, cv=2, "
                "random_state=0)",
    "BR": "BR(random_state=0)",
    "LEML": "LEML(n_components=3, random_state=0)",
    "MLLRC": "MLLRC(random_state=0)",
    "MLLOC": "MLLOC(n_groups=3, random_state=0)",
    "MAXIDE": "MAXIDE()",
    "MBR": "MBR(random_state=0)",
    "MMLLOC": "MMLLOC(learner=MLLOC(n_groups=3), random_state=0)",
}

_SCRIPT = """
import hashlib, json, sys, warnings
import numpy as np
from glocal import GLOCAL, GLOCALCV, GLObal, loCAL
from glocal.baselines import BR, LEML, MAXIDE, MBR, MLLOC, MLLRC, MMLLOC

def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 8))
    Y = (X[:, :5] + 0.5 * rng.standard_normal((60, 5)) > 0.3).astype(float)
    Y[rng.random(Y.shape) < 0.3] = np.nan
    return X, Y

def fingerprint(expression):
    X, Y = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = eval(expression).fit(X, Y)
    scores = np.ascontiguousarray(model.decision_function(X), dtype=np.float64)
    return hashlib.sha256(scores.tobytes()).hexdigest()

if __name__ == "__main__":
    print(json.dumps({name: fingerprint(expr) for name, expr in json.loads(sys.argv[1]).items()}))
"""


def _fingerprints(names):
    namespace = {}
    exec(compile(_SCRIPT, "<reproducibility>", "exec"), namespace)
    return {name: namespace["fingerprint"](ESTIMATORS[name]) for name in names}


def test_every_estimator_is_listed():
    from glocal import baselines

    listed = set(ESTIMATORS)
    public = {name for module in (glocal, baselines) for name in module.__all__
              if isinstance(getattr(module, name), type)
              and issubclass(getattr(module, name), BaseEstimator)}
    assert public - {"TwoStage"} <= listed, public - listed


def test_seeded_fits_are_bitwise_reproducible_in_one_and_in_two_processes():
    first = _fingerprints(ESTIMATORS)
    assert _fingerprints(ESTIMATORS) == first
    root = Path(glocal.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    run = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(ESTIMATORS)],
                         capture_output=True, text=True, env=env, check=True)
    assert json.loads(run.stdout.strip().splitlines()[-1]) == first


@pytest.mark.parametrize("name", ["MBR", "MMLLOC"])
def test_two_stage_seed_reaches_the_learner(name):
    from glocal.baselines import MBR, MMLLOC

    X = np.random.default_rng(1).standard_normal((40, 5))
    Y = (X[:, :3] > 0).astype(float)
    Y[::4, 0] = np.nan
    model = {"MBR": MBR, "MMLLOC": MMLLOC}[name](random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, Y)
    assert isinstance(model.learner_.random_state, int)
    kept = {"MBR": MBR, "MMLLOC": MMLLOC}[name](random_state=0)
    kept.set_params(learner=type(model.learner_)(random_state=7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert kept.fit(X, Y).learner_.random_state == 7
