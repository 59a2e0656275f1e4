"""Logs as they arrive outside a terminal's scrollback: JSON log records, HTML-escaped text, and lines a terminal
broke at its width more than once or before their keyword. The lines are constructed from real vLLM messages (the
corpus's); every form must give the events the plain line gives."""

from __future__ import annotations

import html
import json

from logdoctor.parse.envelope import clean_physical
from logdoctor.parse.pipeline import parse_text

STATS = (
    "(APIServer pid=1) INFO 10-14 17:04:48 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 756.7 tokens/s, Running: 34 reqs, Waiting: 18 reqs, GPU KV cache usage: 99.2%, "
    "Prefix cache hit rate: 43.2%"
)
SPEC_V0 = (
    "INFO 07-24 04:00:31 metrics.py:316] Speculative metrics: Draft acceptance rate: 0.000, System efficiency: "
    "0.059, Number of speculative tokens: 16, Number of accepted tokens: 0, Number of draft tokens tokens: 42272, "
    "Number of emitted tokens tokens: 2642."
)
SHM = (
    "(EngineCore pid=3132424) INFO 08-13 11:35:44 [shm_broadcast.py:802] No available shared memory broadcast block "
    "found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work "
    "(e.g. compilation, weight/kv cache quantization)."
)


def _types(text: str) -> list[tuple[str, str | None]]:
    return [(e.type, getattr(e, "kind", None)) for e in parse_text(text)]


def _broken(line: str, width: int) -> str:
    return "\n".join(line[at : at + width] for at in range(0, len(line), width))


def test_docker_json_and_journald_json_records_give_their_line() -> None:
    docker = json.dumps({"log": STATS + "\n", "stream": "stderr", "time": "2025-10-15T00:04:48.758564289Z"})
    journald = json.dumps({"MESSAGE": STATS, "_PID": "4121", "__REALTIME_TIMESTAMP": "1760486688758564"})
    assert clean_physical(docker) == STATS
    assert clean_physical(journald) == STATS
    assert _types(docker) == _types(STATS) == [("scheduler_stats", None)]
    # An empty record is an empty line, and a JSON document that is no log record stays as it is.
    assert clean_physical(json.dumps({"log": "\n"})) == ""
    assert clean_physical('{"model": "x", "tp": 2}') == '{"model": "x", "tp": 2}'


def test_html_escaped_text_is_read_as_the_text() -> None:
    dump = "INFO 08-18 19:56:47 [cli_args.py:261] non-default args: {'model': 'x', 'tensor_parallel_size': 2}"
    assert clean_physical(html.escape(dump)) == dump
    assert _types(html.escape(dump)) == _types(dump)


def test_a_line_broken_into_three_pieces_is_read_whole() -> None:
    assert _types(_broken(SPEC_V0, 120)) == _types(SPEC_V0) == [("spec_decode_stats", None)]
    assert _types(_broken(STATS, 100)) == _types(STATS)


def test_a_line_broken_before_its_keyword_is_read_whole_and_its_rest_is_no_hang_report() -> None:
    whole = _types(SHM)
    assert whole == [("engine_failure", "shm-broadcast-wait")]
    # broken after "found i": the first piece holds no keyword of its own
    assert _types(SHM[:118] + "\n" + SHM[118:]) == whole
    # broken after "found in ": the rest, "60 seconds. This typically happens when some processes are hanging", is
    # the engine's sentence, not a person's report of a hang
    at = SHM.index("60 seconds")
    assert _types(SHM[:at] + "\n" + SHM[at:]) == whole


def test_a_persons_sentence_after_a_long_line_is_still_read() -> None:
    said = "The server hangs here and never answers."
    assert ("engine_failure", "reported-hang") in _types(STATS + "\n" + said)
