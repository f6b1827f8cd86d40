"""Hyperparameters by k-fold cross-validation on observed labels.

* `GLOCALCV`: GLOCAL's, along warm-started regularization paths.
* `select_hyperparameters`: the one tuning function of the experiments, `GLOCALCV` for the
  GLOCAL family and `sklearn.model_selection.GridSearchCV` for any other estimator, on the
  same folds with the same scorer.

The modules, each one part of the search: ``_defaults`` (the recommended model and grid),
``_plan`` (which fits a fold makes, in which order, from where), ``_fold`` (one fold's fits
and scores), ``_racing`` (which settings the later folds still fit), ``_search`` (the
estimator) and ``_select``.
"""

from ._defaults import (DEFAULT_ESTIMATOR_PARAMS, DEFAULT_PARAM_GRID, MAX_DEFAULT_LATENT,
                        PATH_SOLVER_OPTIONS)
from ._search import GLOCALCV
from ._select import select_hyperparameters

# Saved model files and pickles name a class by its module: the public one, so that files
# outlive moves inside this package.
GLOCALCV.__module__ = __name__

__all__ = ["GLOCALCV", "select_hyperparameters"]
