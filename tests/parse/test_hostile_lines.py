"""The hostile-input audit's local crash reproducers: each line is parsed (or left "not understood" and counted), never raises,
and a diagnosis of the story log with it still runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.facts import build_profile
from logdoctor.parse.pipeline import EventStream, parse_text

STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
HUGE = "9" * 5000  # over Python's 4,300-digit limit for int()
BIG = "9" * 310  # an int, but no float holds it

LINES = {
    "pid": f"(APIServer pid={HUGE}) INFO 05-08 14:02:11 [api_server.py:1] vLLM API server version 0.20.1",
    "max_model_len": f"(APIServer pid=1) INFO 05-08 14:02:24 [model.py:1583] Using max model len {HUGE}",
    "nccl_rank": f"host:531:1762 [0] NCCL INFO Channel 00 : 0[4] -> 1[{HUGE}] via P2P/IPC",
    "nccl_nranks": f"vm:668:668 [0] NCCL INFO comm 0xfa503f0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL {HUGE}",
    "sglang_dp": f"[2025-06-12 22:41:35 DP{HUGE} TP0] Decode batch, #running-req: 1, #token: 57, token usage: 0.01",
    "worker_tp": f"(Worker_TP{HUGE} pid=3101) INFO 05-08 14:02:42 [cuda.py:482] Using FLASH_ATTN attention backend",
    "mm_cache_dot": "(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 "
    "tokens/s, Avg generation throughput: 18.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, "
    "Prefix cache hit rate: 0.0%, MM cache hit rate: .",
    "model_loading_dot": "(EngineCore_0 pid=3455) INFO 09-19 14:11:01 [gpu_model_runner.py:2007] Model loading took . "
    "GiB and 12.5 seconds",
    "stats_dot": "INFO 05-11 12:06:02 [metrics.py:486] Avg prompt throughput: 41.3 tokens/s, Avg generation "
    "throughput: . tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.1%",
    "max_num_batched_tokens_310": "(APIServer pid=1) INFO 09-19 14:10:37 [scheduler.py:222] Chunked prefill is "
    f"enabled with max_num_batched_tokens={BIG}.",
    "config_310": "(APIServer pid=1) INFO 05-08 14:02:11 [utils.py:233] non-default args: {'model_tag': '/m', "
    f"'max_num_batched_tokens': {BIG}, 'tensor_parallel_size': 2}}",
    "kv_cache_size_310": f"(EngineCore_0 pid=1) INFO 09-19 14:11:19 [kv_cache_utils.py:849] GPU KV cache size: 112,{BIG} tokens",
    "graph_bs_310": f"[2026-04-14 09:14:27 TP0] Capture cuda graph bs [1, 2, 4, 8, 12, {BIG}]",
    "version_huge": f"(APIServer pid=1) INFO 09-19 14:10:27 [api_server.py:1805] vLLM API server version 0.10.{HUGE}",
}


@pytest.mark.parametrize("name", sorted(LINES))
def test_a_hostile_line_never_raises(name: str) -> None:
    line = LINES[name]
    stream = EventStream("x.log", [(1, line)])
    events = list(stream)
    build_profile(events)  # facts never see a number they cannot hold
    assert stream.stats.lines == 1
    assert stream.stats.events == len(events)


def test_a_grammar_failure_is_counted_as_not_understood() -> None:
    stream = EventStream("x.log", [(1, LINES["max_model_len"])])
    assert list(stream) == []
    assert stream.stats.unrecognised == 1


@pytest.mark.parametrize("name", sorted(LINES))
def test_diagnose_with_a_hostile_line_still_reports(tmp_path: Path, name: str) -> None:
    path = tmp_path / "x.log"
    path.write_text(STORY.read_text(encoding="utf-8") + LINES[name] + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["diagnose", str(path), "--format", "json"])
    assert result.exit_code == 1, result.stderr  # the story's findings are still there
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_good_lines_of_a_log_still_parse_around_a_bad_one() -> None:
    text = STORY.read_text(encoding="utf-8")
    after = [e for e in parse_text(LINES["pid"] + "\n" + text) if e.line > 1]
    assert [(e.type, e.line - 1) for e in after] == [(e.type, e.line) for e in parse_text(text)]
