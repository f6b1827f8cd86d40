"""Baselines the paper compares GLOCAL with, under GLOCAL's estimator API."""

from .br import BR
from .leml import LEML
from .maxide import MAXIDE
from .mllrc import MLLRC
from .mlloc import MLLOC
from .two_stage import MBR, MMLLOC, TwoStage

__all__ = ["BR", "LEML", "MAXIDE", "MBR", "MLLOC", "MLLRC", "MMLLOC", "TwoStage"]
