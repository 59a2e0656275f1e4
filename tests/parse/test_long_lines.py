"""Time that holds on long lines: a line's parse grows with the line, never with its square; its keywords and a
warning's words are read in its head; a line over the parse cap is read for its head only, with a note
(docs/security.md, *Bounded*).

Growth is measured by comparing the work at two sizes: this process's CPU time (other processes on a busy machine do
not count, as they do in wall time), the best of several tries where one try looks slow, against a generous bound:
a line eight times as long costs about eight times as much, where a scan from every character costs ~64 times."""

from __future__ import annotations

import time
from typing import Any

import pytest

from logdoctor.parse.keywords import KEYWORD_HEAD, candidate_keywords
from logdoctor.parse.pipeline import MAX_PARSED_CHARS, EventStream
from logdoctor.parse.warning_vocabulary import CLASSIFIED_CHARS
from logdoctor.redact import redact

PREFIXES = ["(APIServer pid=1) INFO 05-08 14:02:11 [x.py:1] ", "[2026-05-07 09:13:19 TP0] "]
# Runs of what made a regex rescan a line from every character: a word, `key=` pairs, words and spaces (prose).
FILLS = ["a", "a=", "a "]
# 8x apart; a keyword after the longer run still sits in the keyword head, so both sizes are read the same way.
SMALL, LARGE = 250, 2_000
GROWTH_LIMIT = 20  # of LARGE over SMALL: at most 8 when linear (less: a line's fixed costs), ~64 when quadratic
STATS = (
    "(APIServer pid=1) INFO 05-08 14:07:10 [loggers.py:271] Engine 000: Avg prompt throughput: 46.0 tokens/s, "
    "Avg generation throughput: 17.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.4%, "
    "Prefix cache hit rate: 21.4%"
)


def _cost(lines: list[str], tries: int = 1) -> float:
    """CPU time of parsing each line in a stream of its own (no line type's state carries to the next), best of
    `tries`."""
    best = float("inf")
    for _ in range(tries):
        started = time.process_time()
        for line in lines:
            for _event in EventStream("x.log", [(1, line)]):
                pass
        best = min(best, time.process_time() - started)
    return best


def _lines(keyword: str, size: int) -> list[str]:
    lines = []
    for fill in FILLS:
        run = (fill * (size // len(fill) + 1))[:size]
        lines += [f"{prefix}{keyword} {run}" for prefix in PREFIXES] + [f"{PREFIXES[0]}{run} {keyword} x"]
    return lines


def test_every_keyword_line_parses_in_time_linear_in_its_length() -> None:
    """Each line type's keyword with a run after it (vLLM's and SGLang's header) and before it, each line timed alone:
    LARGE costs well under the square of SMALL's growth. A line that looks slow once is timed three times more, and
    fails on the best of those."""
    keywords = candidate_keywords()
    assert len(PREFIXES[0]) + LARGE + 1 + max(map(len, keywords)) <= KEYWORD_HEAD
    _cost([line for keyword in keywords for line in _lines(keyword, 8)])  # each line type's regexes compiled
    slow = []
    for keyword in keywords:
        for small_line, large_line in zip(_lines(keyword, SMALL), _lines(keyword, LARGE), strict=True):
            small, large = _cost([small_line]), _cost([large_line])
            if large / small > GROWTH_LIMIT / 2:
                small, large = min(small, _cost([small_line], 3)), min(large, _cost([large_line], 3))
                if large / small > GROWTH_LIMIT:
                    slow.append((large_line[:120], round(large / small, 1)))
    assert slow == []


def test_a_keyword_past_the_head_is_not_read() -> None:
    """A line's keywords are looked for in its first KEYWORD_HEAD characters; the line type they choose reads it
    whole (the run after the stats here)."""
    pad = "a " * KEYWORD_HEAD
    late = f"{PREFIXES[0]}{pad}{STATS.split('] ', 1)[1]}"
    assert list(EventStream("x.log", [(1, late)])) == []
    events = list(EventStream("x.log", [(1, f"{STATS}, {pad}")]))
    assert [type(e).__name__ for e in events] == ["SchedulerStats"]


@pytest.mark.parametrize(
    "head",
    [
        "(APIServer pid=1) WARNING 05-08 14:02:11 [x.py:1] falling back to a slower path ",
        "[2026-05-07 09:13:19 TP0] Falling back to a slower kernel, performance may degrade ",
    ],
    ids=["vllm-warning", "sglang-levelless"],
)
def test_a_long_warning_is_classified_by_its_head(head: str) -> None:
    """The warning vocabulary (some twenty regexes) reads the first CLASSIFIED_CHARS characters of a warning: a line at
    the parse cap costs little more than one of twice the head, where the whole line cost 8x as much."""
    short, long = 2 * CLASSIFIED_CHARS, MAX_PARSED_CHARS
    small = _cost([head + ("lorem ipsum " * short)[:short]], tries=3)
    large = _cost([head + ("lorem ipsum " * long)[:long]], tries=3)
    assert large / small < 3, (small, large)


@pytest.mark.parametrize("fill", ["a", "eyJ", "a ", "a="])
def test_a_run_inside_a_stats_line_is_read_in_linear_time(fill: str) -> None:
    """The fuzz harness's slowest input: a run pasted into the middle of a stats line, fields after it (the KV-cache
    device word was looked for from each letter of the run: 30x the cost for 8x the run, 155 s at the parse cap)."""
    head, tail = STATS.split("GPU KV cache us")
    small = _cost([f"{head}GPU KV cache us{(fill * 250)[:250]}{tail}"], tries=3)
    large = _cost([f"{head}GPU KV cache us{(fill * 2_000)[:2_000]}{tail}"], tries=3)
    assert large / small < GROWTH_LIMIT, (small, large)


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
    small = _cost([STATS + " " + "a=" * 150_000], tries=3)
    large = _cost([STATS + " " + "a=" * 600_000], tries=3)
    assert large / small < 3, (small, large)


def test_a_one_line_json_document_is_read_whole_in_linear_time() -> None:
    """A benchmark's JSON report is one line of several hundred kB: past the parse cap it is read whole, and its
    reader gives up on nesting no report has (each value's key path grew with the depth)."""
    nested = [_cost(['{"benchmarks": [' + '{"a": 1, ' * n], tries=3) for n in (5_000, 20_000)]
    flat = [_cost(['{"benchmarks": [' + '{"a": 1}, ' * n], tries=3) for n in (5_000, 20_000)]
    for small, large in (nested, flat):
        assert large < 0.05 or large / small < 8, (small, large)
