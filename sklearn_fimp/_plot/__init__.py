"""Displays in scikit-learn's pattern: class methods compute, ``plot`` draws.

matplotlib is imported only when a display computes or draws (install it
with the ``plot`` extra).
"""

from .correlation import CorrelationDisplay
from .dependence import DependenceDisplay
from .importance import ImportanceDisplay
from .probes import ProbeDisplay
from .recursive import RecursiveSelectionDisplay

__all__ = [
    "CorrelationDisplay",
    "DependenceDisplay",
    "ImportanceDisplay",
    "RecursiveSelectionDisplay",
    "ProbeDisplay",
]
