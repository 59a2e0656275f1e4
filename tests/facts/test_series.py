"""facts/series.py: a series fact is exact up to SERIES_CAP values, then an even sample with an exact summary."""

from __future__ import annotations

import copy
import itertools
import statistics

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from logdoctor.engine.aggregations import AGGREGATIONS, aggregate
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.series import SERIES_CAP, Series, concat


def test_a_series_below_the_cap_is_exactly_its_values() -> None:
    values = [float(i % 7) for i in range(1000)]
    series = Series(values)
    assert series == values
    assert not series.sampled
    for func in AGGREGATIONS:
        assert aggregate(func, series, list(series)) == AGGREGATIONS[func](values)


def test_past_the_cap_it_keeps_an_even_sample_and_the_exact_summary() -> None:
    n = SERIES_CAP * 3 + 5
    values = [float(i) for i in range(n)]
    values[12345] = 1e9  # one spike: max must still see it
    series = Series(values)
    assert series.sampled
    assert SERIES_CAP // 2 <= len(series) < SERIES_CAP
    assert series[0] == 0.0
    assert all(b - a == series.stride for a, b in itertools.pairwise(series))  # every stride-th value from the first
    assert aggregate("count", series, list(series)) == n
    assert aggregate("max", series, list(series)) == 1e9
    assert aggregate("min", series, list(series)) == 0.0
    assert aggregate("last", series, list(series)) == float(n - 1)
    assert aggregate("sum", series, list(series)) == sum(values)
    # The quantiles come from the sample: close to the whole series' median, not equal to it.
    assert abs(aggregate("median", series, list(series)) - statistics.median(values)) < 0.01 * n


def test_a_sampled_series_survives_copying_with_its_summary() -> None:
    series = Series(float(i) for i in range(SERIES_CAP + 10))
    back = copy.deepcopy(series)  # through __reduce__, as pickle goes
    assert isinstance(back, Series)
    assert (list(back), back.seen, back.stride, back.high) == (list(series), series.seen, series.stride, series.high)


def test_concat_is_appending_in_order() -> None:
    a, b = [1.0, 2.0, 3.0], [4.0, 5.0]
    assert concat([Series(a), Series(b)]) == a + b
    big = Series(float(i) for i in range(SERIES_CAP + 1))
    joined = concat([big, Series(b)])
    assert joined.seen == SERIES_CAP + 3
    assert joined.latest == 5.0
    assert joined.high == float(SERIES_CAP)


def test_the_builder_makes_series_facts_bounded_and_other_lists_plain() -> None:
    from logdoctor.events import SchedulerStats

    b = ProfileBuilder()
    ev = SchedulerStats(source="x.log", line=1, format="vllm-v1", kv_cache_usage=0.5)
    for _ in range(SERIES_CAP + 1):
        b.append("kv.usage", 0.5, ev, "stats lines")
    b.append("host.env", "A=1", ev, "environment dump")
    assert isinstance(b.value("kv.usage"), Series)
    assert b.value("kv.usage").sampled
    assert len(b.facts["kv.usage"].refs) == 3
    assert type(b.value("host.env")) is list


def test_equal_floats_share_one_object_and_every_value_stays_what_it_was() -> None:
    values = [i % 10 / 10 for i in range(5000)]  # each an object of its own, as parsed lines give them
    series = Series(values)
    assert series == values
    assert len({id(v) for v in series}) == 10  # one float object a distinct value, not 5,000
    odd = [0.0, -0.0, float("nan"), 1, 1.0, True, -0.0, 0.0]
    kept = Series(odd)
    assert [repr(v) for v in kept] == [repr(v) for v in odd]  # -0.0 is not 0.0, an int is not a float
    assert [type(v) for v in kept] == [type(v) for v in odd]
    wide = Series(float(i) + 0.5 for i in range(10_000))  # more distinct values than are shared: kept all the same
    assert list(wide) == [float(i) + 0.5 for i in range(10_000)]


def _state(series: Series) -> tuple[object, ...]:
    """Everything a series holds, NaN and -0.0 told apart by their repr."""
    summary = (series.seen, series.total, series.low, series.high, series.latest, series.stride)
    shared = sorted(repr(v) for v in series._shared)
    return ([(type(v), repr(v)) for v in series], [repr(v) for v in summary], shared)


@settings(max_examples=200)
@given(
    head=st.lists(st.floats(allow_nan=True) | st.integers(-5, 5) | st.sampled_from([0.0, -0.0, 0.5]), max_size=40),
    chunks=st.lists(
        st.lists(st.floats(allow_nan=True) | st.integers(-5, 5) | st.sampled_from([0.0, -0.0, 0.5]), max_size=40),
        max_size=5,
    ),
)
def test_extend_is_append_of_each_value(head: list[float], chunks: list[list[float]]) -> None:
    """A parse worker's range of a series is extended in one call (facts/partial.py): the same summary, sample and
    shared values as appending each value; NaN, -0.0, ints and floats mixed."""
    one, many = Series(head), Series(head)
    for chunk in chunks:
        for value in chunk:
            one.append(value)
        many.extend(chunk)
    assert _state(many) == _state(one)


_VALUE = st.floats(allow_nan=True) | st.integers(-5, 5) | st.sampled_from([0.0, -0.0, 0.5, 1.5, 2.0])


@settings(max_examples=300)
@given(
    cap=st.sampled_from([2, 4, 8, 32]),
    table=st.sampled_from([1, 3, 16, 100, 4096]),
    chunks=st.lists(
        st.lists(_VALUE, max_size=150)
        | st.lists(st.sampled_from([0.25, 0.5, 0.75, 1.0, 3.0]), max_size=150)
        | st.lists(st.floats(0, 1000).map(lambda v: round(v, 1)), max_size=200),
        max_size=8,
    ),
)
@example(
    cap=1024, table=100, chunks=[[float(i) for i in range(10)], [float(i) for i in range(1000, 1300)], [7.0, 1250.0]]
)
def test_extend_past_a_small_cap_and_a_full_table_is_append_of_each_value(
    cap: int, table: int, chunks: list[list[float]]
) -> None:
    """With the cap and the table of shared floats made small, `extend` passes through every halving of the sample
    and a full table, and keeps what `append` of each value keeps, the same objects shared."""
    from logdoctor.facts import series

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(series, "SERIES_CAP", cap)
        patch.setattr(series, "SHARED_VALUES", table)
        one, many = Series(), Series()
        for chunk in chunks:
            for value in chunk:
                one.append(value)
            many.extend(chunk)
            assert _state(many) == _state(one)
            assert [id(v) for v in many] == [id(v) for v in one] or _shared_alike(many, one)


def _shared_alike(a: Series, b: Series) -> bool:
    """The same positions hold one object in both (the objects themselves may differ: a value not shared)."""
    first_a: dict[int, int] = {}
    first_b: dict[int, int] = {}
    return [first_a.setdefault(id(v), i) for i, v in enumerate(a)] == [
        first_b.setdefault(id(v), i) for i, v in enumerate(b)
    ]


def test_extend_past_the_cap_samples_as_appending_does() -> None:
    values = [float(i % 977) for i in range(SERIES_CAP * 2 + 123)]
    one, many = Series(), Series()
    for value in values:
        one.append(value)
    for start in range(0, len(values), 40_000):
        many.extend(values[start : start + 40_000])
    assert _state(many) == _state(one) and many.sampled
