"""Failures read by structure (logdoctor/parse/failures.py): tracebacks through process prefixes and interleaving,
exception lines, fatal signals and OOM kills, each with its exception type, process and phase; what is no failure
(a handled traceback, a destructor at exit, a stop, one request's error); and short pastes of lines no line type
knows, which are still the engine's log.

Excerpts marked "real" are lines of fixture logs (the file is named); the others are constructed in the engines'
formats, with messages no line type knows on purpose (a release's new error must still be read)."""

from __future__ import annotations

from logdoctor.events import EngineFailure, EventBase
from logdoctor.parse.failures import FAILURE_KEYWORDS, exception_kind
from logdoctor.parse.keywords import candidate_keywords
from logdoctor.parse.pipeline import EventStream, parse_text
from logdoctor.testing import assert_fires, assert_not_fires, diagnose_text


def failures(text: str) -> list[EngineFailure]:
    return [e for e in parse_text(text) if isinstance(e, EngineFailure)]


def real(events: list[EngineFailure]) -> list[EngineFailure]:
    """The failures of the run: no stop marker, no request error."""
    return [e for e in events if e.kind not in ("shutdown", "request-error")]


# constructed: an EngineCore traceback at start-up, vLLM 0.2x's bare process-prefixed form, whose exception no line
# type knows; the API server's own lines are printed in between
STARTUP_TRACEBACK = """\
(APIServer pid=1) INFO 11-02 09:10:00 [api_server.py:1805] vLLM API server version 0.33.0
(EngineCore_DP0 pid=7) Process EngineCore_DP0:
(EngineCore_DP0 pid=7) Traceback (most recent call last):
(EngineCore_DP0 pid=7)   File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap
(APIServer pid=1) INFO 11-02 09:10:01 [core_client.py:600] Waiting for 1 core engine proc(s) to start: {0}
(EngineCore_DP0 pid=7)     self.run()
(EngineCore_DP0 pid=7)   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 700, in run_engine_core
(EngineCore_DP0 pid=7)     raise FrobnicatorError(
(EngineCore_DP0 pid=7) vllm.frobnicate.FrobnicatorError: the frobnicator rejected the chat template
"""


def test_traceback_through_a_process_prefix_and_interleaved_lines() -> None:
    [failure] = failures(STARTUP_TRACEBACK)
    assert failure.kind == "startup-failed"
    assert failure.exception == "vllm.frobnicate.FrobnicatorError"
    assert failure.message == "vllm.frobnicate.FrobnicatorError: the frobnicator rejected the chat template"
    assert failure.phase == "startup"
    assert failure.process is not None and failure.process.role == "EngineCore"
    assert failure.engine == "vllm"
    assert failure.line == 9


def test_startup_traceback_is_an_engine_failure_finding() -> None:
    finding = assert_fires(diagnose_text(STARTUP_TRACEBACK), cause="engine-failure", rank=1)
    assert any("FrobnicatorError" in e.text for e in finding.evidence)


def test_two_processes_tracebacks_interleaved() -> None:
    # constructed: two workers print their tracebacks at the same time
    text = """\
(Worker_TP0 pid=10) ERROR 11-02 09:10:00 [multiproc_executor.py:700] Traceback (most recent call last):
(Worker_TP1 pid=11) ERROR 11-02 09:10:00 [multiproc_executor.py:700] Traceback (most recent call last):
(Worker_TP0 pid=10) ERROR 11-02 09:10:00 [multiproc_executor.py:700]   File "/x/worker.py", line 5, in step
(Worker_TP1 pid=11) ERROR 11-02 09:10:00 [multiproc_executor.py:700]   File "/x/worker.py", line 5, in step
(Worker_TP1 pid=11) ERROR 11-02 09:10:00 [multiproc_executor.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
(Worker_TP0 pid=10) ERROR 11-02 09:10:00 [multiproc_executor.py:700] KernelLaunchRefused: grid too large
"""
    found = failures(text)
    by_rank = {f.process.tp_rank: f for f in found if f.process is not None}
    assert by_rank[1].kind == "cuda-oom"
    assert by_rank[1].exception == "torch.OutOfMemoryError"
    assert by_rank[0].kind == "startup-failed"
    assert by_rank[0].exception == "KernelLaunchRefused"


def test_rank_prefixed_nccl_error() -> None:
    # constructed: torchrun's `[rankN]:` prefix on a worker's stderr
    text = """\
[rank1]: Traceback (most recent call last):
[rank1]:   File "/x/train.py", line 12, in <module>
[rank1]:     dist.all_reduce(t)
[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error
"""
    [failure] = failures(text)
    assert failure.kind == "nccl-error"
    assert failure.process is not None and failure.process.tp_rank == 1


def test_first_and_last_lines_without_frames() -> None:
    # constructed: a prefiltered log keeps only the lines with keywords: the traceback's start and its exception
    text = """\
(EngineCore pid=7) ERROR 11-02 09:10:00 [core.py:1136] Traceback (most recent call last):
(EngineCore pid=7) ERROR 11-02 09:10:00 [core.py:1136] asyncio.TimeoutError: the model loader gave up
"""
    [failure] = failures(text)
    assert failure.kind == "rpc-timeout"
    assert all(k in candidate_keywords() for k in FAILURE_KEYWORDS)


def test_sglang_scheduler_exception_then_bare_lines() -> None:
    # real: fixtures/logs/realworld2/sglang-r004.log (frames shortened)
    text = """\
[2026-03-25 17:22:56] Scheduler hit an exception: Traceback (most recent call last):
  File "/share/home/cli/anaconda3/envs/ver/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 3169, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/share/home/cli/anaconda3/envs/ver/lib/python3.10/site-packages/sglang/srt/managers/scheduler.py", line 1641, in handle_generate_request
    added_to_grammar_queue = self.grammar_manager.process_req_with_grammar(req)
TypeError: unhashable type: 'dict'

[2026-03-25 17:22:56] SIGQUIT received. signum=None, frame=None. It usually means one child failed.
"""
    found = failures(text)
    typed = [f for f in found if f.exception == "TypeError"]
    assert len(typed) == 1
    assert typed[0].kind == "startup-failed"  # no ready or stats line in the excerpt
    assert typed[0].engine == "sglang"


# --- what is not a failure --------------------------------------------------------------------------------------


def test_warning_level_traceback_is_no_failure() -> None:
    # constructed: a traceback the engine logged as a warning and went on
    text = """\
(EngineCore pid=7) WARNING 11-02 09:10:00 [utils.py:80] Traceback (most recent call last):
(EngineCore pid=7) WARNING 11-02 09:10:00 [utils.py:80]   File "/x/probe.py", line 3, in probe
(EngineCore pid=7) WARNING 11-02 09:10:00 [utils.py:80] ImportError: libfoo.so: cannot open shared object file
"""
    assert failures(text) == []


def test_exception_ignored_at_exit_is_no_failure() -> None:
    # real: fixtures/logs/realworld4/vllm-rh09.log lines 83-94 (frames shortened)
    text = """\
(EngineCore_DP0 pid=941609) Exception ignored in: <function ExecutorBase.__del__ at 0x7a42bd9a3420>
(EngineCore_DP0 pid=941609) Traceback (most recent call last):
(EngineCore_DP0 pid=941609)   File "/home/stewa/code/imageworks/.venv/lib/python3.12/site-packages/vllm/executor/executor_base.py", line 237, in __del__
(EngineCore_DP0 pid=941609)     self.shutdown()
(EngineCore_DP0 pid=941609) AttributeError: 'NoneType' object has no attribute 'ensure_kv_transfer_shutdown'
"""
    assert failures(text) == []


STATS = (
    "(APIServer pid=1) INFO 11-02 09:12:00 [loggers.py:236] Engine 000: Avg prompt throughput: 120.0 tokens/s, "
    "Avg generation throughput: 80.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.0%, "
    "Prefix cache hit rate: 0.0%\n"
)


def test_request_error_answered_is_no_failure() -> None:
    # constructed, in the shape of fixtures/logs/realworld5/vllm-rh01.log: uvicorn answers 400, serves on
    text = (
        STATS
        + """\
(APIServer pid=1) ERROR:    Exception in ASGI application
(APIServer pid=1) Traceback (most recent call last):
(APIServer pid=1)   File "/usr/local/lib/python3.12/dist-packages/uvicorn/protocols/http/httptools_impl.py", line 421, in run_asgi
(APIServer pid=1) vllm.exceptions.PromptTooLongForWidget: the prompt has 9000 tokens
(APIServer pid=1) INFO:     172.17.0.1:47808 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request
"""
        + STATS
    )
    found = failures(text)
    assert [f.kind for f in found] == ["request-error"]
    assert found[0].phase == "serving"
    assert_not_fires(diagnose_text(text), cause="engine-failure")


def test_serving_exception_with_no_answer_after_is_a_failure() -> None:
    # constructed: the API server's last words are an exception
    text = (
        STATS
        + """\
(APIServer pid=1) Traceback (most recent call last):
(APIServer pid=1)   File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/api_server.py", line 9, in run
(APIServer pid=1) RuntimeError: the output processor lost its queue
"""
    )
    [failure] = failures(text)
    assert failure.kind == "exception"
    assert failure.phase == "serving"
    assert_fires(diagnose_text(text), cause="engine-failure", rank=1)


def test_ctrl_c_of_a_serving_server_is_a_stop() -> None:
    # constructed: KeyboardInterrupt, then the teardown's errors
    text = (
        STATS
        + """\
(APIServer pid=1) Traceback (most recent call last):
(APIServer pid=1)   File "/usr/lib/python3.12/asyncio/runners.py", line 118, in run
(APIServer pid=1) KeyboardInterrupt
(EngineCore pid=7) ERROR 11-02 09:13:00 [core.py:900] RuntimeError: the shared memory queue is closed
"""
    )
    found = failures(text)
    assert found[0].kind == "shutdown"
    assert found[-1].phase == "shutdown"
    assert_not_fires(diagnose_text(text), cause="engine-failure")


def test_ctrl_c_of_a_start_keeps_the_start_failure() -> None:
    # real: fixtures/logs/realworld2/vllm-r010.log lines 235-237 and 356-359 (a start interrupted while it failed)
    text = """\
(EngineCore pid=3408798)     raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
(EngineCore pid=3408798) KeyboardInterrupt
(APIServer pid=3407862) Traceback (most recent call last):
(APIServer pid=3407862)     raise RuntimeError(
(APIServer pid=3407862) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
"""
    kinds = [f.kind for f in failures(text)]
    assert kinds == ["startup-failed"]


# --- signals and kills ------------------------------------------------------------------------------------------


def test_fatal_signals_and_kills() -> None:
    # constructed: the C runtime, Python, the shell and the kernel, as they print them
    assert [f.kind for f in failures("Fatal Python error: Segmentation fault")] == ["engine-dead"]
    assert [f.kind for f in failures("Segmentation fault (core dumped)")] == ["engine-dead"]
    assert [f.kind for f in failures("./serve.sh: line 5: 12345 Killed                  python3 -m vllm")] == [
        "engine-dead"
    ]
    oom = "[12345.678901] Out of memory: Killed process 4242 (python3) total-vm:90000000kB, anon-rss:60000000kB"
    assert [f.kind for f in failures(oom)] == ["worker-died"]
    # real: fixtures/logs/realworld/nccl-r001.log
    cxx = "terminate called after throwing an instance of 'c10::DistBackendError'"
    assert [f.kind for f in failures(cxx)] == ["nccl-error"]


def test_check_macros_that_exit() -> None:
    """The CUDA and NCCL check macros of vLLM's CUDA sources and of NCCL's examples print one line and exit: a failure
    whatever else a line type reads in the line (vLLM's custom all-reduce's line is also a P2P check's answer)."""
    # real: fixtures/logs/realworld12/sglang-c501.log line 8 (an SGLang start with vLLM's custom all-reduce)
    peer = (
        "Failed: Cuda error /home/runner/work/vllm/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported "
        "between these two devices'"
    )
    events = parse_text(peer)
    assert [e.type for e in events] == ["p2p_check", "engine_failure"]
    assert [f.kind for f in failures(peer)] == ["cuda-error"]
    # constructed: NCCLCHECK of NCCL's first tests
    assert [f.kind for f in failures("Failed, NCCL error all_reduce_test.cu:85 'unhandled cuda error'")] == [
        "nccl-error"
    ]
    assert failures("Failed: 3 of 100 requests") == []  # no file:line and quoted message: no check macro


def test_sigterm_is_no_crash() -> None:
    # real: fixtures/logs/realworld2/vllm-r001.log line 19 (a start given up on while it waited for GPUs)
    assert failures("*** SIGTERM received at time=1748300290 on cpu 8 ***") == []
    # constructed: the same of a server that served is its stop
    assert [f.kind for f in failures(STATS + "*** SIGTERM received at time=1748300290 on cpu 8 ***")] == ["shutdown"]


def test_logged_records_are_not_shell_lines() -> None:
    # constructed: vLLM's own `Aborted request` is no `Aborted (core dumped)`
    text = "(APIServer pid=1) INFO 11-02 09:10:00 [async_llm.py:400] Aborted request chatcmpl-1."
    assert failures(text) == []


def test_lone_exception_lines() -> None:
    # constructed: an exception logged on its own at ERROR; the same words at INFO are no failure
    err = "(APIServer pid=1) ERROR 11-02 09:10:00 [api_server.py:900] OSError: [Errno 98] Address already in use"
    info = "(APIServer pid=1) INFO 11-02 09:10:00 [api_server.py:900] OSError: [Errno 98] Address already in use"
    assert [(f.kind, f.exception) for f in failures(err)] == [("startup-failed", "OSError")]
    assert failures(info) == []


def test_a_line_type_knows_better() -> None:
    # a line type's own reading of an exception line stands (its kind), with the exception's type added
    text = (
        "(EngineCore pid=112) ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 50.00 MiB."
    )
    [failure] = failures(text)
    assert failure.kind == "cuda-oom"
    assert failure.exception == "torch.OutOfMemoryError"


def test_exception_kinds() -> None:
    assert exception_kind("torch.OutOfMemoryError", "CUDA out of memory.", "serving") == "cuda-oom"
    assert exception_kind("RuntimeError", "NCCL communicator was aborted: timed out", "serving") == "nccl-timeout"
    assert exception_kind("torch.AcceleratorError", "CUDA error: an illegal memory access", "serving") == "cuda-error"
    assert exception_kind("TimeoutError", "", "startup") == "rpc-timeout"
    assert exception_kind("ValueError", "bad argument", "startup") == "startup-failed"
    assert exception_kind("ValueError", "bad argument", "serving") == "exception"


# --- short pastes of lines no line type knows --------------------------------------------------------------------


def stream_of(text: str) -> tuple[list[EventBase], EventStream]:
    stream = EventStream("<paste>", enumerate(text.splitlines(), start=1))
    return list(stream), stream


def test_short_paste_of_unknown_vllm_lines_is_a_log() -> None:
    # constructed: record headers of a newer release, messages no line type knows
    text = """\
(EngineCore_DP0 pid=2301) INFO 11-02 09:14:01 [scheduler.py:1260] Resumed preempted request cmpl-8f2a with 1536 computed tokens.
(EngineCore_DP0 pid=2301) INFO 11-02 09:14:03 [offloading_connector.py:412] KV offload: stored 48 blocks to CPU
"""
    _, stream = stream_of(text)
    assert stream.detection.engine == "vllm"
    assert diagnose_text(text).verdict.kind != "not-a-log"


def test_short_paste_of_nccl_lines_no_line_type_reads_is_a_log() -> None:
    # real: fixtures/logs/realworld12/nccl-c505.log lines 10-12, a trace that stops in NCCL's set-up
    text = """\
worker2-us-opwest-1:182125:182125 [0] NCCL INFO Bootstrap : Using eno2:10.1.10.95<0>
worker2-us-opwest-1:182125:182125 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation
worker2-us-opwest-1:182125:182125 NCCL CALL ncclGetUniqueId(0x6394b9eeaad4d0af)
"""
    _, stream = stream_of(text)
    assert stream.detection.engine == "nccl"
    assert diagnose_text(text).verdict.kind != "not-a-log"


def test_short_paste_of_unknown_sglang_lines_is_a_log() -> None:
    # constructed: SGLang's header with its ranks
    text = "[2026-01-05 10:00:00 TP0] LMCache: retrieved 12 chunks for request 7\n"
    _, stream = stream_of(text)
    assert stream.detection.engine == "sglang"


def test_text_with_brackets_is_still_not_a_log() -> None:
    text = "# Notes\n[2026-01-05] meeting notes [todo]\nSee [the docs](https://example.com).\n"
    assert diagnose_text(text).verdict.kind == "not-a-log"


def test_traceback_under_a_header_on_its_first_line_only() -> None:
    # constructed: Python logging (here uvicorn's lifespan) heads only a record's first line
    text = """\
INFO:     Waiting for application startup.
ERROR:    Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/starlette/routing.py", line 693, in lifespan
    async with self.lifespan_context(app) as maybe_state:
RuntimeError: the widget registry is empty

ERROR:    Application startup failed. Exiting.
"""
    [failure] = failures(text)
    assert (failure.kind, failure.exception, failure.phase) == ("startup-failed", "RuntimeError", "startup")


def test_server_error_answer_is_a_failure() -> None:
    # constructed: the exception's request is answered 500: the server failed it
    text = (
        STATS
        + """\
(APIServer pid=1) ERROR:    Exception in ASGI application
(APIServer pid=1) Traceback (most recent call last):
(APIServer pid=1)   File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/serving_chat.py", line 9, in f
(APIServer pid=1) AssertionError
(APIServer pid=1) INFO:     10.0.0.7:40000 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error
"""
        + STATS
    )
    [failure] = failures(text)
    assert (failure.kind, failure.exception) == ("exception", "AssertionError")


def test_launchers_report_dead_tasks() -> None:
    # constructed, in the formats of Slurm (srun, slurmstepd), Open MPI, torchrun and nccl-tests (common.h)
    cases = {
        "srun: error: nid001234: task 3: Exited with exit code 1": "worker-died",
        "srun: error: nid001234: task 3: Killed": "worker-died",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=1.0. Some of the step tasks have been OOM Killed.": (
            "worker-died"
        ),
        "mpirun noticed that process rank 0 with PID 1234 on node n1 exited on signal 9 (Killed).": "worker-died",
        "nid001234: Test CUDA failure common.cu:891 'no CUDA-capable device is detected'": "cuda-error",
        "nid001234: Test NCCL failure common.cu:1005 'unhandled system error'": "nccl-error",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 4242) of "
        "binary: /usr/bin/python3": "worker-died",
    }
    for line, kind in cases.items():
        assert [f.kind for f in failures(line)] == [kind], line
    assert failures("srun: error: nid001234: task 3: Exited with exit code 0") == []


def test_a_cancelled_job_is_a_stop() -> None:
    # real: fixtures/logs/realworld3/vllm-rh03.log (a server that served until its job's time limit)
    cancel = "slurmstepd: error: *** JOB 5858 ON gpuh05 CANCELLED AT 2025-12-21T02:31:17 DUE TO TIME LIMIT ***"
    assert [f.kind for f in failures(STATS + cancel)] == ["shutdown"]
    assert failures(cancel) == []  # of a start: given up on, the failures it leaves behind still count


def test_a_cut_traceback_is_dropped() -> None:
    # constructed: a traceback whose process printed nothing more of it; the lines after it are read as usual
    from logdoctor.parse.failures import FailureReader

    reader = FailureReader()
    lines = ["(EngineCore pid=7) Traceback (most recent call last):"]
    lines += [f"(APIServer pid=1) INFO 11-02 09:10:00 [x.py:1] line {i}" for i in range(300)]
    stream = EventStream("<cut>", enumerate(lines, start=1))
    stream.failures = reader
    list(stream)
    assert not reader.open
    assert not reader.wants("(APIServer pid=1) INFO 11-02 09:10:00 [x.py:1] one more line")


def test_a_traceback_cut_by_the_end_of_the_log_is_a_failure() -> None:
    # real: fixtures/logs/realworld7/sglang-b006.log (a pasted scheduler traceback that ends in a frame); the
    # engine is named by the frames' package, the failure has no exception type
    text = (
        "Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1748, in run_scheduler_process\n'
        "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py", line 207, in initialize\n'
    )
    [failure] = failures(text)
    assert (failure.kind, failure.exception, failure.engine, failure.line) == ("startup-failed", None, "sglang", 1)
    assert "model_runner.py" in failure.message
    result = diagnose_text(text)
    assert result.verdict.kind != "not-a-log"
    assert_fires(result, "engine-failure")
    # constructed: the same cut at WARNING (handled and logged) is no failure
    warned = "WARNING 11-02 09:10:00 [x.py:1] Traceback (most recent call last):\n" + text.split("\n", 1)[1]
    assert failures(warned) == []


def test_integration_lines_in_a_vllm_process_are_a_log() -> None:
    # constructed: LMCache's own record format, printed in vLLM's engine core process
    text = (
        "(EngineCore_DP0 pid=2301) [2025-11-02 09:14:01,123] LMCache INFO: Retrieved 1024 out of 1536 required "
        "tokens (cache_engine.py:500:lmcache.v1.cache_engine)\n"
    )
    _, stream = stream_of(text)
    assert stream.detection.engine == "vllm"
    assert diagnose_text(text).verdict.kind != "not-a-log"
    # a process prefix no vLLM process has names no engine
    _, other = stream_of("(MyService pid=12) started\n")
    assert other.detection.engine == "unknown"


def test_tracebacks_inside_docker_and_journald_envelopes() -> None:
    # constructed: `docker logs --timestamps` and journald's short format around the same traceback
    body = [
        "(EngineCore pid=7) Traceback (most recent call last):",
        '(EngineCore pid=7)   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 9, in run',
        "(EngineCore pid=7) torch.AcceleratorError: CUDA error: an illegal instruction was encountered",
    ]
    docker = "\n".join(f"2025-11-02T09:10:0{i}.123456789Z {line}" for i, line in enumerate(body))
    journald = "\n".join(f"Nov 02 09:10:0{i} gpu-node-1 vllm[4242]: {line}" for i, line in enumerate(body))
    for text in (docker, journald):
        [failure] = failures(text)
        assert (failure.kind, failure.exception) == ("cuda-error", "torch.AcceleratorError")
        assert failure.process is not None and failure.process.role == "EngineCore"


def test_an_exception_logged_as_its_repr() -> None:
    # real: fixtures/logs/realworld6/vllm-r018.log (a 500 answer, then the engine's exception as its repr)
    text = """\
INFO 03-19 11:53:56 [cuda.py:282] Using XFormers backend.
INFO:     127.0.0.1:41950 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error
ERROR 03-19 11:54:51 [engine.py:158] AssertionError('Only FlashAttention backend is supported for now.')
"""
    [failure] = failures(text)
    assert (failure.exception, failure.message) == (
        "AssertionError",
        "AssertionError: Only FlashAttention backend is supported for now.",
    )
    assert_fires(diagnose_text(text), "engine-failure")
    # constructed: a repr at INFO, or an unheaded repr, is a value printed, not an exception raised
    assert failures("INFO 03-19 11:54:51 [engine.py:158] AssertionError('x')") == []
    assert failures("AssertionError('x')") == []


def test_the_interpreters_own_fatal_error() -> None:
    # real: fixtures/logs/realworld6/vllm-r014.log, the whole file
    text = (
        "/azureuser/localfiles/wheat-from-chaff/backend/.venv/bin/python: Error while finding module specification "
        "for 'vllm.entrypoints.openai.api_server' (ModuleNotFoundError: No module named 'vllm')\n"
    )
    assert [f.kind for f in failures(text)] == ["startup-failed"]
    assert diagnose_text(text).verdict.kind != "not-a-log"
    assert_fires(diagnose_text(text), "engine-failure")
    # constructed: the same prefix of `python -m` with a missing module, and of a missing script
    assert [f.kind for f in failures("/usr/bin/python3: No module named vllm")] == ["startup-failed"]
    assert [f.kind for f in failures("python3.12: can't open file '/app/serve.py': [Errno 2] No such file")] == [
        "startup-failed"
    ]
    # a logged record that names python is no interpreter error
    assert failures("INFO 03-19 11:54:51 [utils.py:1] python: 3.12 detected") == []


def test_a_lone_exception_or_short_traceback_is_a_log() -> None:
    # constructed: a launch that failed before the engine printed anything of its own
    for text in (
        "ModuleNotFoundError: No module named 'vllm'\n",
        'Traceback (most recent call last):\n  File "/app/serve.py", line 3, in <module>\n    import vllm\n'
        "ModuleNotFoundError: No module named 'vllm'\n",
    ):
        result = diagnose_text(text)
        assert result.verdict.kind != "not-a-log"
        assert_fires(result, "engine-failure")


def test_a_collective_that_stops_progressing_is_a_hang() -> None:
    # real: fixtures/logs/realworld/nccl-r001.log line 208; constructed: PyTorch's heartbeat monitor and a stuck
    # watchdog in the same header (their words change with each release; the level and the file do not)
    for text in (
        "[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Timeout at NCCL work: 3, last enqueued NCCL work: 6, "
        "last completed NCCL work: 2.",
        "[rank0]:[E1016 04:38:38.361094626 ProcessGroupNCCL.cpp:1423] [PG 0 Rank 0] Heartbeat monitor timed out! "
        "Process will be terminated after dumping debug info. workMetaList_.size()=1",
        "[rank1]:[E1016 04:38:38.361 ProcessGroupNCCL.cpp:1512] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
        "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
        "collectives.",
    ):
        assert [f.kind for f in failures(text)] == ["nccl-timeout"]
        assert_fires(diagnose_text(text + "\n"), "engine-failure")
    # the same file at WARNING is no hang
    warning = (
        "[rank0]:[W1016 04:38:38.361 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
        "destroyed before we destruct ProcessGroupNCCL."
    )
    assert failures(warning) == []


def test_a_launcher_that_could_not_start_the_engine() -> None:
    # real: fixtures/logs/realworld6/vllm-r001.log line 144 (argparse's error, after its usage block)
    argparse = (
        "usage: api_server.py [-h] [--host HOST] [--port PORT]\n"
        "api_server.py: error: unrecognized arguments: --attention-backend FLASHINFER --enable-metrics\n"
    )
    assert [f.kind for f in failures(argparse)] == ["startup-failed"]
    assert_fires(diagnose_text(argparse), "engine-failure")
    # constructed, in the words docker, the NVIDIA container runtime and the shells print
    for line in (
        'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].',
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
        "vllm serve: error: argument --tensor-parallel-size/-tp: invalid int value: 'two'",
        "bash: vllm: command not found",
        "/bin/sh: 1: sglang: not found",
    ):
        assert [f.kind for f in failures(line)] == ["startup-failed"], line
        assert diagnose_text(line + "\n").verdict.kind != "not-a-log"
    # an exception's type is no program name; a logged record is no launcher line
    assert [f.exception for f in failures("ValueError: internal error: bad shape")] == ["ValueError"]
    assert failures("INFO 06-20 20:02:25 [api.py:1] router: error: counts reset") == []


# constructed: vLLM's usage-stats reporter thread on a host without internet, then the server serving on
THREAD_EXCEPTION = """\
Exception in thread Thread-3 (_report_usage_worker):
Traceback (most recent call last):
  File "/usr/lib/python3.12/threading.py", line 1075, in _bootstrap_inner
    self.run()
requests.exceptions.ConnectionError: HTTPSConnectionPool(host='stats.vllm.ai', port=443): Max retries exceeded
"""


def test_a_thread_that_died_while_the_engine_went_on_is_no_failure() -> None:
    text = "(APIServer pid=1) INFO 11-02 09:10:00 [api_server.py:1805] vLLM API server version 0.33.0\n"
    text += THREAD_EXCEPTION + "(APIServer pid=1) INFO:     Application startup complete.\n" + STATS
    assert real(failures(text)) == []
    assert_not_fires(diagnose_text(text), "engine-failure")
    # the thread's exception as the log's last words is a failure
    assert [f.exception for f in real(failures(THREAD_EXCEPTION))] == ["requests.exceptions.ConnectionError"]


def test_the_api_servers_request_error_under_a_workers_prefix_is_still_a_request_error() -> None:
    # realworld3 vllm-rh04 (a real log) with Ray's worker prefix put before every line, as a launcher that prefixes
    # all output would: the rejection of an over-long request is logged from serving_chat.py, the API server's module
    from pathlib import Path

    log = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld3" / "vllm-rh04.log"
    text = "\n".join("(RayWorkerWrapper pid=123) " + line for line in log.read_text(encoding="utf-8").splitlines())
    failures = [e for e in parse_text(text) if isinstance(e, EngineFailure)]
    kinds = {e.kind for e in failures}
    assert "request-error" in kinds and kinds <= {"request-error", "shutdown"}  # the log ends with the server stopped
    assert_not_fires(diagnose_text(text), cause="engine-failure")
