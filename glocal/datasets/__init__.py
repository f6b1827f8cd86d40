"""Multi-label datasets: loaders for Mulan/MEKA ARFF, MATLAB and svmlight files, and
synthetic data with global and local label correlations."""

__all__ = ["load", "load_dataset", "make_glocal_data"]

from ._base import known_names
from .load import load, load_dataset
from .synthetic import make_glocal_data
