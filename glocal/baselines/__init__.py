"""Baselines the paper compares GLOCAL with, under GLOCAL's estimator API."""

from .br import BR

__all__ = ["BR"]
