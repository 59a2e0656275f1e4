"""Time that holds on long lines: a line's parse grows with the line, never with its square, and a line over the
parse cap is read for its head only, with a note (docs/security.md, *Bounded*).

Growth is measured by comparing the work at two sizes (a time ratio with a generous bound, the better of two
tries, summed where single lines are too quick to time), never an absolute wall time."""

from __future__ import annotations

import time
from typing import Any

import pytest

from logdoctor.parse.pipeline import MAX_PARSED_CHARS, EventStream, candidate_keywords
from logdoctor.redact import redact

PREFIXES = ["(APIServer pid=1) INFO 05-08 14:02:11 [x.py:1] ", "[2026-05-07 09:13:19 TP0] "]
# Runs of what made a regex rescan a line from every character: a word, `key=` pairs, dotted names, JWT starts.
FILLS = ["a", "a="]
STATS = (
    "(APIServer pid=1) INFO 05-08 14:07:10 [loggers.py:271] Engine 000: Avg prompt throughput: 46.0 tokens/s, "
    "Avg generation throughput: 17.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.4%, "
    "Prefix cache hit rate: 21.4%"
)


def _cost(lines: list[str], tries: int = 3) -> float:
    # This process's CPU time, best of `tries`: other processes on a busy machine do not count, as they do in wall time.
    best = float("inf")
    for _ in range(tries):
        started = time.process_time()
        for line in lines:
            list(EventStream("x.log", [(1, line)]))
        best = min(best, time.process_time() - started)
    return best


def _lines(keyword: str, fill: str, size: int) -> list[str]:
    run = (fill * (size // len(fill) + 1))[:size]
    return [f"{prefix}{keyword} {run}" for prefix in PREFIXES] + [f"{prefix}{run} {keyword} x" for prefix in PREFIXES]


def test_every_keyword_line_parses_in_time_linear_in_its_length() -> None:
    """Each line type's keyword with a long run after it and before it: 2,000 against 8,000 characters (4x)
    must cost well under the 16x a scan from every character would. Keywords are timed in groups of 25 so each
    measurement is long enough to compare; a group is timed once, and three times more only when that once looks
    slow: what fails is the best of those four, so a group never fails on a single measurement."""
    keywords = candidate_keywords()
    list(EventStream("x.log", [(1, f"{PREFIXES[0]}{keywords[0]}")]))  # the keyword regex is built once, here
    slow = []
    for fill in FILLS:
        for start in range(0, len(keywords), 25):
            group = keywords[start : start + 25]
            small_lines = [line for k in group for line in _lines(k, fill, 2_000)]
            large_lines = [line for k in group for line in _lines(k, fill, 8_000)]
            small, large = _cost(small_lines, tries=1), _cost(large_lines, tries=1)
            if large > 0.05 and large / small > 8:
                small, large = min(small, _cost(small_lines)), min(large, _cost(large_lines))
            if large > 0.05 and large / small > 8:
                slow.append((fill, group, round(large / small, 1)))
    assert slow == []


@pytest.mark.parametrize("fill", ["a", "a.", "key=", "eyJ", "'a': ", "https://a"])
def test_redaction_is_linear_on_long_lines(fill: str) -> None:
    def cost(size: int) -> float:
        line = "api_key " + fill * (size // len(fill))
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            redact(line)
            best = min(best, time.process_time() - started)
        return best

    small, large = cost(16_000), cost(64_000)  # 4x the line: 4x the work, where a rescan from each character is 16x
    assert large < 0.05 or large / small < 10, (fill, small, large)


def test_a_line_over_the_cap_is_read_for_its_head_with_a_note() -> None:
    long = STATS + ", " + "a" * 300_000
    stream = EventStream("x.log", [(1, long), (2, STATS + " " + "b." * 200_000)], keep_text=True)
    events = list(stream)
    assert [type(e).__name__ for e in events] == ["SchedulerStats", "SchedulerStats"]
    assert events[0].generation_throughput == 17.9  # type: ignore[attr-defined]
    assert any("line 1: 300," in note and "parse cap" in note for note in stream.stats.notes), stream.stats.notes


def test_a_secret_straddling_the_cap_is_masked_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The redactor sees past the cut, so a token cut by it does not leave its first characters unmasked."""
    seen: list[str] = []
    original = EventStream._dispatch

    def spy(self: EventStream, line: Any) -> Any:
        seen.append(line.text)
        return original(self, line)

    monkeypatch.setattr(EventStream, "_dispatch", spy)
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    pad = MAX_PARSED_CHARS - 10 - len(STATS) - 1
    head = STATS + " " + ("a " * pad)[:pad]  # the token starts 10 characters before the cut
    list(EventStream("x.log", [(1, head + token + " " + "z" * 100_000)]))
    assert len(seen) == 1 and len(seen[0]) <= MAX_PARSED_CHARS
    assert "ghp_" not in seen[0] and "***" in seen[0][-100:]


def test_long_lines_cost_the_same_past_the_cap() -> None:
    """Past the cap a longer line costs no more parsing: 300,000 against 1,200,000 characters of one line."""
    small = _cost([STATS + " " + "a=" * 150_000])
    large = _cost([STATS + " " + "a=" * 600_000])
    assert large / small < 3, (small, large)


def test_a_one_line_json_document_is_read_whole_in_linear_time() -> None:
    """A benchmark's JSON report is one line of several hundred kB: past the parse cap it is read whole, and its
    reader gives up on nesting no report has (each value's key path grew with the depth)."""
    nested = _cost(['{"benchmarks": [' + '{"a": 1, ' * 5_000]), _cost(['{"benchmarks": [' + '{"a": 1, ' * 20_000])
    flat = _cost(['{"benchmarks": [' + '{"a": 1}, ' * 5_000]), _cost(['{"benchmarks": [' + '{"a": 1}, ' * 20_000])
    for small, large in (nested, flat):
        assert large < 0.05 or large / small < 8, (small, large)
