"""glocal: multi-label learning with global and local label correlations, on pymanopt.

The GLOCAL method of Zhu, Kwok & Zhou (IEEE TKDE 2018), with missing labels, as a
scikit-learn estimator whose alternating blocks are pymanopt problems.
"""

from ._validation import from_signed_labels
from .estimator import GLOCAL, GLObal, loCAL
from .model_selection import GLOCALCV

__version__ = "0.1.0"

__all__ = ["GLOCAL", "GLOCALCV", "GLObal", "loCAL", "from_signed_labels", "__version__"]
