"""Baselines the paper compares GLOCAL with, under GLOCAL's estimator API."""

from .br import BR
from .maxide import MAXIDE
from .mllrc import MLLRC
from .two_stage import MBR, MMLLOC, TwoStage

__all__ = ["BR", "MAXIDE", "MBR", "MLLRC", "MMLLOC", "TwoStage"]
