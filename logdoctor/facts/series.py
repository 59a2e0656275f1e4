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

from array import array
from collections.abc import Iterable
from functools import reduce
from itertools import chain
from math import copysign, isfinite
from operator import add

SERIES_CAP = 65_536  # values kept exactly; 65,536 stats lines are 7.6 days of one process at vLLM's 10 s
SHARED_VALUES = 4096  # distinct float values a series keeps one object for (a table of ~250 KB at most)


_NEGATIVE_ZERO = array("d", [-0.0]).tobytes()
_MIN_RUN = 64  # values shared by one map over the table at least; a smaller room is filled one value at a time


def _has_negative_zero(values: list[float]) -> bool:
    """Whether a -0.0 is among `values` (it equals 0.0, so `in` cannot tell), by its eight bytes at a float's place."""
    data = array("d", values).tobytes()
    at = data.find(_NEGATIVE_ZERO)
    while at >= 0:
        if at % 8 == 0:
            return True
        at = data.find(_NEGATIVE_ZERO, at + 1)
    return False


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
        """Each value appended in turn: the summary and the sample are those `append` of each keeps, taken at once
        (a parse worker's range of a series, merged in the parent: facts/partial.py). The sum is `reduce`d in order
        (as the appends add), the minimum and maximum by `min`/`max`, which replace their running value exactly
        where `append` would (a strictly smaller or larger value; NaN never); the values kept are every
        `stride`-th by their place among all appended, a run at a time up to the cap, where the sample halves
        and the stride doubles, as `append` does it."""
        values = values if isinstance(values, list) else list(values)
        if not values:
            return
        count = len(values)
        seen = self.seen
        self.seen = seen + count
        self.total = reduce(add, values, self.total)
        self.low = min(chain((self.low,), values))
        self.high = max(chain((self.high,), values))
        self.latest = values[-1]
        at = 0
        while at < count:
            stride = self.stride
            first = at + (-(seen + at)) % stride  # the next value whose place is a multiple of the stride
            picked = values[first::stride][: SERIES_CAP - len(self)]
            if not picked:
                return
            list.extend(self, self._shared_values(picked))
            at = first + (len(picked) - 1) * stride + 1
            if len(self) >= SERIES_CAP:
                del self[1::2]
                self.stride = stride * 2

    def _shared_values(self, values: list[float]) -> list[float]:
        """`values` with each float replaced by the object kept for an equal one, as `append` shares them: at C
        speed where every value is a finite float other than -0.0: runs no longer than the room left in the table,
        then, once it is full, one map of lookups."""
        shared = self._shared
        if set(map(type, values)) == {float} and all(map(isfinite, values)) and not _has_negative_zero(values):
            # While the table has room, a run no longer than that room cannot fill it past its size.
            kept: list[float] = []
            at, count = 0, len(values)
            while at < count and len(shared) < SHARED_VALUES:
                room = SHARED_VALUES - len(shared)
                run = values[at : at + max(room, _MIN_RUN)]
                kept.extend(map(shared.setdefault, run, run) if room >= _MIN_RUN else self._shared_one_by_one(run))
                at += len(run)
            rest = values[at:]
            kept.extend(map(shared.get, rest, rest))  # a full table: shared where it holds the value
            return kept
        return self._shared_one_by_one(values)

    def _shared_one_by_one(self, values: list[float]) -> list[float]:
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
        return kept

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
