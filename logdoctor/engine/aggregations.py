"""The rule language's aggregations over a series fact: `mean(spec.acceptance_length)`, `p90(kv.usage)`.

`logdoctor diff` summarises its series rows with the same functions, so a row and a rule agree.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": lambda v: statistics.fmean(v),
    "median": lambda v: statistics.median(v),
    "max": lambda v: max(v),
    "min": lambda v: min(v),
    "p10": lambda v: _percentile(v, 0.10),
    "p90": lambda v: _percentile(v, 0.90),
    "first": lambda v: v[0],
    "last": lambda v: v[-1],
    "sum": lambda v: float(sum(v)),
    "count": lambda v: float(len(v)),
}

# What a sampled series (logdoctor/facts/series.py: past 65,536 values it keeps an even sample) knows exactly.
_EXACT: dict[str, Callable[[Any], float]] = {
    "count": lambda s: float(s.seen),
    "sum": lambda s: float(s.total),
    "mean": lambda s: s.total / s.seen,
    "min": lambda s: float(s.low),
    "max": lambda s: float(s.high),
    "last": lambda s: float(s.latest),
}


def aggregate(func: str, series: object, numbers: Sequence[float]) -> float:
    """`func` over a series fact's numbers; a sampled series answers from its exact summary where it has one,
    and the quantiles (median, p10, p90) from its sample."""
    if getattr(series, "sampled", False) and func in _EXACT:
        return _EXACT[func](series)
    try:
        return AGGREGATIONS[func](numbers)
    except OverflowError:  # fmean's exact sum of values near 1e308 overflows: the plain sum says how (inf or -inf)
        return sum(numbers) / len(numbers)
