"""The correlation terms of the objective: the interface every term implements
(`interface.CorrelationTerm`) and each term, one module apiece.

* `laplacians`: the paper's global and local label Laplacians (Eq. (4));
* `centered`: the same Laplacians on the scores' deviations from their means;
* `implications`: directed implications between labels.

A new term is one module with a subclass of `CorrelationTerm` and, to be named by
``GLOCAL(correlation=...)``, one line in `CORRELATION_TERMS`.
"""

from .centered import CenteredLaplacians
from .implications import LabelImplications
from .interface import Block, CorrelationTerm, FeatureSide
from .laplacians import LabelLaplacians

__all__ = ["CorrelationTerm", "Block", "FeatureSide", "LabelLaplacians",
           "CenteredLaplacians", "LabelImplications", "CORRELATION_TERMS"]

# The correlation terms by name (``GLOCAL(correlation=...)``), each a `CorrelationTerm` made
# from lam3, lam4, the group fractions and whether to precondition its blocks: the paper's
# Laplacians of the scores, the same on the scores' deviations from their means, and
# directed implications between labels.
CORRELATION_TERMS = {"laplacian": LabelLaplacians, "centered": CenteredLaplacians,
                     "asymmetric": LabelImplications}
