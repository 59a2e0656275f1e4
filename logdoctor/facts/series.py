"""A series fact's values, bounded: every value while there are at most `SERIES_CAP`, then a uniform sample.

    kv.usage over 10 days of 10-second stats lines (86,400 values)
        -> the first 65,536 values, then every 2nd of them (32,768, then 65,536 again), every 4th, ...
           with the exact count, sum, minimum, maximum and last value of all 86,400

A log of a million stats lines would otherwise hold a million floats a series (32 MB each). A `Series` is a
`list` of what it keeps, so rules, diff and reports read it as before; `engine.aggregations` takes `count`,
`sum`, `mean`, `min`, `max` and `last` of a sampled series from its exact summary, and `median`, `p10`, `p90`
from the sample (every `stride`-th value from the first: spread evenly over the whole log). Below the cap, which
no fixture and no bench log reaches, a series is exactly the list it was.

Equal float values share one float object (up to `SHARED_VALUES` distinct ones a series): a float is 24 bytes
and its place in the list 8, and stats lines repeat their values (`KV cache usage: 0.4%`, `Running: 1 reqs`), so
a series at the cap holds ~0.5 MB instead of ~2 MB. Sharing is invisible: floats are immutable, and -0.0 and NaN
(which compare equal to 0.0, and to nothing) are never shared.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import reduce
from itertools import chain
from math import copysign
from operator import add

SERIES_CAP = 65_536  # values kept exactly; 65,536 stats lines are 7.6 days of one process at vLLM's 10 s
SHARED_VALUES = 4096  # distinct float values a series keeps one object for (a table of ~250 KB at most)


class Series(list[float]):
    """Values appended one at a time; past `SERIES_CAP`, every other kept value is dropped and the stride doubles."""

    __slots__ = ("_shared", "high", "latest", "low", "seen", "stride", "total")

    def __init__(self, values: Iterable[float] = ()) -> None:
        super().__init__()
        self.seen = 0  # values appended, kept or not
        self.total = 0.0  # their sum, added in order
        self.low = float("inf")
        self.high = float("-inf")
        self.latest = 0.0
        self.stride = 1  # every stride-th value appended (from the first) is kept
        self._shared: dict[float, float] = {}  # a float value -> the one object of it the series holds
        for value in values:
            self.append(value)

    @property
    def sampled(self) -> bool:
        return self.stride > 1

    def append(self, value: float) -> None:
        index = self.seen
        self.seen = index + 1
        self.total += value
        if value < self.low:
            self.low = value
        if value > self.high:
            self.high = value
        self.latest = value
        if index % self.stride:
            return
        if type(value) is float and (value or copysign(1.0, value) > 0.0):  # not -0.0, which equals 0.0
            shared = self._shared.get(value)
            if shared is not None:
                value = shared
            elif value == value and len(self._shared) < SHARED_VALUES:  # NaN equals nothing: never shared
                self._shared[value] = value
        super().append(value)
        if len(self) >= SERIES_CAP:
            del self[1::2]
            self.stride *= 2

    def extend(self, values: Iterable[float]) -> None:
        """Each value appended in turn: the summary and the sample are those `append` of each keeps. Where no value
        would be dropped (nothing sampled yet, and the cap not reached), the summary is taken at once: the sum
        `reduce`d in order (as the appends add), the minimum and maximum by `min`/`max`, which replace their
        running value exactly where `append` would (a strictly smaller or larger value; NaN never)."""
        values = values if isinstance(values, list) else list(values)
        if self.stride != 1 or len(self) + len(values) >= SERIES_CAP:
            append = self.append
            for value in values:
                append(value)
            return
        if not values:
            return
        self.seen += len(values)
        self.total = reduce(add, values, self.total)
        self.low = min(chain((self.low,), values))
        self.high = max(chain((self.high,), values))
        self.latest = values[-1]
        shared = self._shared
        kept = []
        for value in values:
            if type(value) is float and (value or copysign(1.0, value) > 0.0):  # as `append` shares them
                one = shared.get(value)
                if one is not None:
                    value = one
                elif value == value and len(shared) < SHARED_VALUES:
                    shared[value] = value
            kept.append(value)
        list.extend(self, kept)

    def __reduce__(self) -> tuple[object, ...]:  # pickle and copy keep the summary, not only the kept values
        return (_rebuild, (list(self), self.seen, self.total, self.low, self.high, self.latest, self.stride))


def _rebuild(kept: list[float], seen: int, total: float, low: float, high: float, latest: float, stride: int) -> Series:
    series = Series()
    list.extend(series, kept)
    series.seen, series.total, series.low, series.high, series.latest, series.stride = (
        seen,
        total,
        low,
        high,
        latest,
        stride,
    )
    return series


def concat(parts: Iterable[list[float]]) -> Series:
    """Series one after the other, as if appended in that order; where a part is already sampled, its kept values
    are appended (sampled again) and the summary is the parts' summaries combined."""
    parts = list(parts)
    out = Series()
    for part in parts:
        out.extend(list(part))
    sampled = [p for p in parts if isinstance(p, Series) and p.sampled]
    if sampled:
        whole = [p if isinstance(p, Series) else Series(p) for p in parts if p]
        out.seen = sum(p.seen for p in whole)
        out.total = sum(p.total for p in whole)
        out.low = min(p.low for p in whole)
        out.high = max(p.high for p in whole)
        out.latest = whole[-1].latest
        out.stride = max(out.stride, *(p.stride for p in sampled))
    return out
