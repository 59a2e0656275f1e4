"""Start-up findings by what they cost the serving, a stop that never finished its
requests, SGLang's decode-graph cap against what it admits, and the lines behind them."""

from __future__ import annotations

from tests.facts import helpers

V0_STATS = (
    "INFO 12-16 00:58:06 llm_engine.py:649] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 311.1 "
    "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 97.3%, CPU KV cache usage: 0.0%"
)
STOP = "^CINFO:     Shutting down"
WAIT_TASKS = "INFO:     Waiting for background tasks to complete. (CTRL+C to force quit)"
STOP_DONE = ["INFO:     Waiting for application shutdown.", "INFO:     Application shutdown complete."]

CAPTURE_END_JOINED = (
    "Capture target decode CUDA graph end. elapsed=0.89 s, mem usage=0.15 GB, avail mem=6.95 GB "
    "max_total_num_tokens=2980168, chunked_prefill_size=4096, max_prefill_tokens=16384, max_running_requests=4096, "
    "context_len=32768, available_gpu_mem=6.95 GB"
)
CAPTURE_BEGIN = (
    "Capture target decode CUDA graph begin. backend=full, num_tokens_per_req=1, bs=[1, 2, 4, 8, 12, 16, 24, 32], "
    "avail mem=7.10 GB"
)
DECODE = (
    "[2026-08-20 10:01:02 TP0] Decode batch. #running-req: 12, #token: 3894, token usage: 0.01, cuda graph: True, "
    "gen throughput (token/s): 1452.63, #queue-req: 0"
)

COMPILE = [
    "(Worker_TP0 pid=118) INFO 05-04 01:03:57 [backends.py:391] Compiling a graph for compile range (1, 8192) takes "
    "44.99 s",
    "(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total",
]
SERVING = [
    "(APIServer pid=1) INFO 05-04 01:06:10 [loggers.py:273] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
    "generation throughput: 41.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache "
    "hit rate: 0.0%",
] * 3


def _rules(text: str) -> set[str]:
    return {f.rule for f in helpers.findings(text)}


def test_a_log_that_ends_on_the_stop_waiting_for_requests_is_a_stalled_stop() -> None:
    text = "\n".join([V0_STATS, STOP, WAIT_TASKS])
    assert helpers.profile(text).value("failure.shutdown_stalled") is True
    assert "shutdown-never-completed" in _rules(text)


def test_a_stop_that_went_on_past_its_wait_is_not_stalled() -> None:
    text = "\n".join([V0_STATS, STOP, WAIT_TASKS, *STOP_DONE])
    assert helpers.profile(text).value("failure.shutdown_stalled") is False
    assert "shutdown-never-completed" not in _rules(text)
    # and no stop at all is evidence too, not a missing fact
    assert helpers.profile(V0_STATS).value("failure.shutdown_stalled") is False


def test_the_limits_line_a_paste_joined_onto_the_capture_line_is_read() -> None:
    profile = helpers.profile(CAPTURE_BEGIN + "\n" + CAPTURE_END_JOINED)
    assert profile.engine == "sglang"  # no header names it: the line types that read the events do
    assert profile.value("sched.max_num_seqs") == 4096
    assert profile.value("kv.tokens") == 2980168
    assert profile.value("model.max_len") == 32768
    assert profile.value("compile.graph_capture_seconds") == 0.89


def test_the_graph_cap_counts_only_while_the_load_is_unknown() -> None:
    text = CAPTURE_BEGIN + "\n" + CAPTURE_END_JOINED
    found = [f for f in helpers.findings(text) if f.rule == "graph-cap-below-admission"]
    assert found and found[0].score < 50  # the load is unknown: a note
    # Decode batch lines give the eager share: batch-above-graph-size decides instead
    assert "graph-cap-below-admission" not in _rules(text + "\n" + DECODE)


def test_start_up_is_a_problem_only_where_the_log_shows_no_serving() -> None:
    unserved = "\n".join(COMPILE)
    served = "\n".join([*COMPILE, *SERVING])
    assert "long-startup" in _rules(unserved) and "startup-before-serving" not in _rules(unserved)
    after = {f.rule: f.score for f in helpers.findings(served)}
    assert "long-startup" not in after
    assert 0 < after["startup-before-serving"] < 50


def test_enforce_eager_o0_is_eager_mode() -> None:
    line = (
        "(APIServer pid=523647) WARNING 04-27 15:04:49 [vllm.py:601] Enforce eager set, overriding optimization "
        "level to -O0"
    )
    profile = helpers.profile(line)
    assert profile.value("cuda_graphs.enabled") is False
    assert profile.value("compile.disabled") is True


def _wait(minute: int) -> str:
    return (
        f"(EngineCore_DP0 pid=8) INFO 03-10 20:{minute:02d}:48 [shm_broadcast.py:542] No available shared memory "
        "broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some "
        "time-consuming work (e.g. compilation, weight/kv cache quantization)."
    )


def test_a_start_still_waiting_on_its_workers_outranks_the_serving_settings() -> None:
    banner = "(APIServer pid=1) INFO 03-10 20:08:20 [utils.py:287] vLLM API server version 0.16.0"
    eager = (
        "(APIServer pid=1) WARNING 03-10 20:08:36 [vllm.py:727] Enforce eager set, overriding optimization level to -O0"
    )
    text = "\n".join([banner, eager, *(_wait(m) for m in range(12, 21))])
    findings = helpers.findings(text)
    assert findings[0].rule == "startup-still-running"
    assert "eager-decode" in {f.rule for f in findings}
    # without the engine's waits the log may as well end on a killed process: no claim the start is running
    assert "startup-still-running" not in _rules("\n".join([banner, eager]))
