"""The Wilson score interval of a share of votes (wins of n, the stronger side's picks of n):
one formula for every mode, written out because SciPy's ``binomtest`` would load
``scipy.stats`` (seconds) into every web process that shows a win rate."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


def wilson_interval(hits: int, n: int, z: float = Z95) -> tuple[float, float]:
    """``(low, high)`` for ``hits`` out of ``n``; ``(0, 1)`` without votes."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    scale = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / scale
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)
