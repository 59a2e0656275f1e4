"""The line types' fast paths for whole lines (`Grammar.whole_line`) give what the general path gives: the same
events (every field, the same values of the same types), evidence texts, counts, detection and carried state, on
every fixture log that holds a batch or stats line, and on generated variants of those lines, near misses included
(which must take the general path and still come out the same)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from logdoctor.parse.keywords import registry_index
from logdoctor.parse.pipeline import EventStream
from logdoctor.redact import Redactor
from logdoctor.registry import REGISTRY

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
# The shapes the fast paths read, as they appear in a log (a fixture without one needs no comparison).
SHAPES = ("Decode batch", "Prefill batch", "Avg prompt throughput")
HELD_OUT = "realworld9"  # a held-out set nothing is tuned on


def _parse(lines: list[tuple[int, str]], *, whole_lines: bool) -> dict[str, Any]:
    stream = EventStream("log", iter(lines), keep_text=True, whole_lines=whole_lines)
    events = list(stream)
    stats = stream.stats
    assert stream.texts is not None
    return {
        "events": [(type(e).__name__, e.model_dump(), sorted(vars(e).items(), key=repr)) for e in events],
        "kinds": [[type(v).__name__ for v in vars(e).values()] for e in events],
        "texts": list(stream.texts.items()),
        "stats": (stats.lines, stats.candidates, stats.events, stats.unrecognised, list(stats.unrecognised_lines)),
        "detection": (stream.detection.engine, stream.detection.header_counts, stream.detection.first_line),
        "state": stream.carried_state(),
    }


def _same(text: str) -> None:
    lines = list(enumerate(text.split("\n"), start=1))
    assert _parse(lines, whole_lines=True) == _parse(lines, whole_lines=False)


def _fixture_logs() -> list[Path]:
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or HELD_OUT in path.parts or path.suffix in (".json", ".yaml", ".gz"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(shape in text for shape in SHAPES):
            found.append(path)
    return found


def _taken(line: str) -> bool:
    return any(g.whole_line.pattern.match(line) is not None for g in REGISTRY.grammars() if g.whole_line is not None)


def test_fixture_logs_parse_the_same_with_and_without_the_fast_paths() -> None:
    compared = fast_lines = 0
    for path in _fixture_logs():
        text = path.read_text(encoding="utf-8", errors="replace")
        taken = sum(_taken(line) for line in text.split("\n"))
        if not taken:
            continue  # every line takes the general path either way
        fast_lines += taken
        compared += 1
        lines = list(enumerate(text.split("\n"), start=1))
        assert _parse(lines, whole_lines=True) == _parse(lines, whole_lines=False), path
    assert compared >= 20
    assert fast_lines >= 1000  # the fixtures exercise the fast paths, not only the general one


def test_the_standard_lines_take_a_fast_path() -> None:
    assert _taken(
        "[2026-05-08 16:20:11 TP0] Decode batch, #running-req: 15, #token: 264867, token usage: 0.76, accept len: 2.87, "
        "accept rate: 0.72, cuda graph: True, gen throughput (token/s): 770.44, #queue-req: 0, "
    )
    assert _taken(
        "[2026-05-08 16:20:11 TP1] Prefill batch, #new-seq: 2, #new-token: 13011, #cached-token: 2364, token usage: "
        "0.76, #running-req: 15, #queue-req: 0, "
    )
    assert not _taken("[2026-05-08 16:20:11 TP0] Decode batch, #running-req: 15, largest-len: 0, #queue-req: 0")
    assert _taken(
        "(APIServer pid=1) INFO 05-08 16:20:11 [loggers.py:271] Engine 000: Avg prompt throughput: 12.3 tokens/s, Avg "
        "generation throughput: 45.6 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.3%, Prefix "
        "cache hit rate: 45.6%"
    )


_NUMBER = st.one_of(
    st.integers(0, 10**6).map(str),
    st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 10**4), st.integers(0, 999).map(lambda n: f"{n:02d}")),
    st.sampled_from(["0", "00", "007", "0.0", "1.5", "123456789012345", "1234567890123456", "1e3", "nan", "-1"]),
)
_INT = st.one_of(st.integers(0, 10**7).map(str), st.sampled_from(["0", "007", "1234567890123456", "-3", "1.0"]))
_HEADER = st.builds(
    lambda date, ms, ranks: f"[{date}{ms}{ranks}] ",
    st.sampled_from(["2026-05-08 16:20:11", "2025-01-07 20:16:02"]),
    st.sampled_from(["", ".123", ".12"]),
    st.sampled_from(["", " TP0", " TP1", " DP6 TP6", " TP0 EP0", " PP1 TP3", " ATTN_CP1 TP0", " TP12345678"]),
)
_END = st.sampled_from(["", ",", ", ", ",  ", "\n", ", \n", " ", "\r", ", \r\n"])
_HEAD = st.sampled_from(
    [
        "",
        "sglang: 0.5.10\n",
        "sglang: 0.5.11\n",
        "[2026-03-01 10:00:00] server_args=ServerArgs(model_path='Q', speculative_num_draft_tokens=4)\n",
        "[2026-03-01 10:00:00] server_args=ServerArgs(model_path='Q', speculative_num_draft_tokens=8)\n",
        "Without CUDA graphs:\n",
        "-----BEGIN RSA PRIVATE KEY-----\n",
        "Traceback (most recent call last):\n",
    ]
)


@st.composite
def _decode(draw: st.DrawFn) -> str:
    spec = draw(st.booleans())
    body = f"#running-req: {draw(_INT)}, #token: {draw(_INT)}, token usage: {draw(_NUMBER)}, "
    if spec:
        body += f"accept len: {draw(_NUMBER)}, accept rate: {draw(_NUMBER)}, "
    body += f"{draw(st.sampled_from(['cuda', 'npu']))} graph: {draw(st.sampled_from(['True', 'False', 'true']))}, "
    body += f"gen throughput (token/s): {draw(_NUMBER)}, #queue-req: {draw(_INT)}"
    head = draw(st.sampled_from(["Decode batch, ", "Decode batch. ", "Decode batch [1234], ", "Decode batch,  "]))
    return draw(_HEADER) + head + body + draw(_END)


@st.composite
def _prefill(draw: st.DrawFn) -> str:
    body = (
        f"#new-seq: {draw(_INT)}, #new-token: {draw(_INT)}, #cached-token: {draw(_INT)}, token usage: "
        f"{draw(_NUMBER)}, #running-req: {draw(_INT)}, #queue-req: {draw(_INT)}"
    )
    head = draw(st.sampled_from(["Prefill batch, ", "Prefill batch. ", "Prefill batch [77], "]))
    return draw(_HEADER) + head + body + draw(_END)


_PLAIN_NUMBER = st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 10**4), st.integers(0, 9))


@st.composite
def _vllm_stats(draw: st.DrawFn) -> str:
    """A stats line: half of them of the standard shape the fast path reads, half anything near it."""
    if draw(st.booleans()):
        process, stamp, engine, device, number, end = (
            "(APIServer pid=1) ",
            "05-08 16:20:11",
            "000",
            "GPU",
            _PLAIN_NUMBER,
            "",
        )
    else:
        process = draw(st.sampled_from(["(APIServer pid=1) ", "(EngineCore_DP0 pid=7) ", "(EngineCore pid=12) ", ""]))
        stamp = draw(st.sampled_from(["05-08 16:20:11", "11-30 10:05:30", "05-08 16:20:11.123"]))
        engine = draw(st.sampled_from(["000", "001", "12"]))
        device = draw(st.sampled_from(["GPU", "XPU", "CPU"]))
        number, end = _NUMBER, draw(_END)
    return (
        f"{process}INFO {stamp} [loggers.py:271] Engine {engine}: Avg prompt throughput: {draw(number)} tokens/s, Avg "
        f"generation throughput: {draw(number)} tokens/s, Running: {draw(_INT)} reqs, Waiting: {draw(_INT)} reqs, "
        f"{device} KV cache usage: {draw(number)}%, Prefix cache hit rate: {draw(number)}%{end}"
    )


@settings(max_examples=300, deadline=None)
@given(_HEAD, st.lists(st.one_of(_decode(), _prefill()), min_size=1, max_size=4))
def test_generated_batch_lines_parse_the_same(head: str, lines: list[str]) -> None:
    _same(head + "\n".join(lines))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(
        ["", "(APIServer pid=1) INFO 05-08 16:20:01 [api_server.py:1885] vLLM API server version 0.20.1\n"]
    ),
    st.lists(_vllm_stats(), min_size=1, max_size=4),
)
def test_generated_vllm_stats_lines_parse_the_same(head: str, lines: list[str]) -> None:
    _same(head + "\n".join(lines))


def test_a_forced_other_engine_leaves_the_stats_line_to_the_general_path() -> None:
    line = (
        "(APIServer pid=1) INFO 05-08 16:20:11 [loggers.py:271] Engine 000: Avg prompt throughput: 12.3 tokens/s, Avg "
        "generation throughput: 45.6 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.3%, Prefix "
        "cache hit rate: 45.6%"
    )
    for engine in ("sglang", "vllm"):
        fast = list(EventStream("log", iter([(1, line)]), engine=engine))
        general = list(EventStream("log", iter([(1, line)]), engine=engine, whole_lines=False))
        assert fast == general


def test_a_fast_line_holds_nothing_the_redactor_masks() -> None:
    line = (
        "[2026-05-08 16:20:11 TP0] Decode batch, #running-req: 15, #token: 264867, token usage: 0.76, accept len: "
        "2.87, accept rate: 0.72, cuda graph: True, gen throughput (token/s): 770.44, #queue-req: 0, "
    )
    assert Redactor()(line) is line
    _same("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n" + line)  # inside a key the general path masks it


def test_the_fast_paths_come_with_the_package_a_line_imports() -> None:
    line = (
        "[2026-05-08 16:20:11 TP0] Decode batch, #running-req: 15, #token: 264867, token usage: 0.76, "
        "cuda graph: True, gen throughput (token/s): 770.44, #queue-req: 0, "
    )
    list(EventStream("log", iter([(1, line), (2, line)])))
    assert any(match(line) is not None for match, _ in registry_index().whole_lines)
