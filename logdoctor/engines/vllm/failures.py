"""vLLM line types: §11 errors: engine death, OOM, CUDA/NCCL errors, timeouts (catalogue/vllm.md)."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.vllm.common import (
    Events,
    NoticeBuild,
    _event,
    _generic_base,
    _grammar,
    _is_traceback_code,
    _msg,
    _notices,
)
from logdoctor.events import EngineFailure, FailureKind, PerfWarning
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# (regex, EngineFailure kind), first match wins. Exception lines (`RuntimeError: ...`) are matched by their
# text, so a traceback logged through vLLM's formatter and one Python printed bare give the same event.
_FAILURES: tuple[tuple[re.Pattern[str], FailureKind], ...] = (
    (re.compile(r"EngineCore failed to start"), "startup-failed"),
    (re.compile(r"WorkerProc failed to start"), "startup-failed"),
    (re.compile(r"Engine core initialization failed"), "startup-failed"),
    (re.compile(r"RPCServer process died before responding to readiness probe"), "startup-failed"),
    (
        re.compile(
            r"Timed out waiting for (?:new )?(?:engines to send ?initial message|engine core processes to start)"
        ),
        "startup-failed",
    ),
    (re.compile(r"CUDA out of memory"), "cuda-oom"),
    (re.compile(r"CUDA error: "), "cuda-error"),
    (re.compile(r"NCCL error: "), "nccl-error"),
    (re.compile(r"Watchdog caught collective operation timeout"), "watchdog"),
    (re.compile(r"Fault detected in EP all2all communication"), "nccl-timeout"),
    (re.compile(r"Barrier (?:departure )?timed out after"), "nccl-timeout"),
    (re.compile(r"RPC call to \S+ timed out"), "rpc-timeout"),
    (re.compile(r"Engine iteration timed out"), "rpc-timeout"),
    (re.compile(r"No available (?:shared memory broadcast )?block found in"), "shm-broadcast-wait"),
    (re.compile(r"EngineCore encountered a fatal error"), "engine-dead"),
    (re.compile(r"EngineCore hit an exception"), "engine-dead"),
    (re.compile(r"EngineDeadError"), "engine-dead"),
    (re.compile(r"Engine core proc \S+ died unexpectedly"), "engine-dead"),
    (re.compile(r"Engine core process \S+ died unexpectedly"), "engine-dead"),
    (re.compile(r"\[shutdown\] MPClient: engine core exited unexpectedly"), "engine-dead"),
    (re.compile(r"AsyncLLM output_handler failed"), "engine-dead"),
    (re.compile(r"Request \S+ failed \(engine dead\)"), "engine-dead"),
    (re.compile(r"Engine background task failed"), "engine-dead"),
    (re.compile(r"Background loop (?:has errored already|is stopped|is not running)"), "engine-dead"),
    (
        re.compile(r"(?:AsyncLLMEngine|MQLLMEngine) (?:has failed|is already dead), terminating server process"),
        "engine-dead",
    ),
    (
        re.compile(r"(?:Got|MulitprocExecutor got|MultiprocExecutor got) fatal signal from worker processes"),
        "worker-died",
    ),
    (re.compile(r"WorkerProc (?:hit an exception|failed)"), "worker-died"),
    (re.compile(r"(?:Ray)?Worker ?[Pp]roc \S+ died unexpectedly"), "worker-died"),
    (re.compile(r"RayWorkerProc failed"), "worker-died"),
    (re.compile(r"Worker \S+ pid \S+ died, exit code"), "worker-died"),
    (re.compile(r"Process \S+ \(PID: \d+\) died with exit code"), "worker-died"),
    (re.compile(r"Error in chat completion stream generator"), "exception"),
)


def parse_failure(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    for pattern, kind in _FAILURES:
        if pattern.search(text):
            if _is_traceback_code(text):
                return []  # source text quoted in a traceback, not the error itself
            return [EngineFailure(**_generic_base(line, ctx), kind=kind, message=_msg(line))]
    return None


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.


def _nixl_missing(base: dict[str, Any], message: str) -> Events:
    """`NIXL is not available`: vllm/distributed/nixl_utils.py warns at import on every host without NIXL; only
    the NIXL connector's worker (kv_connector/v1/nixl/base_worker.py) logs it as an ERROR, when disaggregated
    prefill needs it. The warning is recognised and reports nothing."""
    if base.get("level") != "ERROR":
        return []
    return [EngineFailure(**base, kind="kv-transfer", connector="nixl", message=message)]


_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (re.compile("Error getting async model runner output"), _event(EngineFailure, kind="exception")),
    (re.compile("vLLM shutdown signal from EngineCore failed to send"), _event(EngineFailure, kind="engine-dead")),
    (re.compile("Invocation of \\w+ method failed"), _event(EngineFailure, kind="exception")),
    (re.compile("Unexpected error pre-processing request \\S+"), _event(EngineFailure, kind="exception")),
    (
        re.compile("Waiting for creating a placement group of specs for \\d+ seconds"),
        _event(EngineFailure, kind="rpc-timeout"),
    ),
    (
        re.compile("Failing (?P<requests>\\d+) request\\(s\\) due to KV load failure"),
        _event(EngineFailure, kind="kv-transfer"),
    ),
    (
        re.compile("Recovered from KV load failure: \\d+ request\\(s\\) rescheduled"),
        _event(PerfWarning, topic="kv-transfer"),
    ),
    (re.compile("NIXL transfer failure: "), _event(EngineFailure, kind="kv-transfer", connector="nixl")),
    (re.compile("NIXL is not available\\s*$"), lambda m, base, message: _nixl_missing(base, message)),
    (re.compile("Failed to connect to bootstrap server \\S+"), _event(EngineFailure, kind="kv-transfer")),
    (re.compile("Bootstrap query to \\S+ failed on attempt \\d+/\\d+"), _event(PerfWarning, topic="kv-transfer")),
    (
        re.compile("timed out after [\\d.]+ seconds without being sent\\. Freeing its blocks on the producer side"),
        _event(EngineFailure, kind="kv-transfer"),
    ),
    (
        re.compile("Deferred write task for request \\S+ timed out after [\\d.]+s waiting for remote blocks"),
        _event(EngineFailure, kind="kv-transfer"),
    ),
)


def parse_failures_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


# A stop that began: vLLM 0.2x's `[shutdown]` lifecycle lines (EngineCore on the signal, the API server when it
# is told to stop), the launcher's `Shutting down FastAPI HTTP server.` and uvicorn's bare `Shutting down`. The
# event is the marker after which failure lines are the teardown of a stopped server (failure.shutdown_only).
# uvicorn's later steps of the same stop (server.py, lifespan/on.py; unchanged from 0.12 to 0.38) are markers too:
# `Waiting for connections to close. (CTRL+C to force quit)` / `Waiting for background tasks to complete. (...)`
# while responses or request tasks are still running, then `Waiting for application shutdown.`, `Application
# shutdown complete.` and `Finished server process [N]`. A log whose last line is one of the two waits stopped
# while requests were still in flight and never finished them (failure.shutdown_stalled). A terminal echoes the
# Ctrl-C that starts the stop as `^C` before the next line (`^CINFO:     Shutting down`).
_SHUTDOWN_RE = re.compile(
    r"\[shutdown\] EngineCore: trigger received signal=(?:SIG)?(?:TERM|INT|HUP|QUIT)\b"
    r"|\[shutdown\] API server: shutdown triggered"
    r"|Shutting down FastAPI HTTP server"
    r"|^(?:\^C)*(?:INFO:\s+)?Shutting down\s*$"
    r"|^(?:\^C)*(?:INFO:\s+)?(?:Waiting for (?:connections to close|background tasks to complete)\. \(CTRL\+C to force quit\)"
    r"|Waiting for application shutdown\.|Application shutdown complete\.|Finished server process \[\d+\])\s*$"
)


def parse_shutdown(line: LogLine, ctx: ParseContext) -> Events | None:
    if not _SHUTDOWN_RE.search(line.message):
        return None
    return [EngineFailure(**_generic_base(line, ctx), kind="shutdown", message=_msg(line))]


GRAMMARS: list[Grammar] = [
    _grammar(
        "failure",
        (
            "EngineCore failed to start",
            "WorkerProc failed",
            "Engine core initialization failed",
            "RPCServer process died",
            "Timed out waiting for",
            "CUDA out of memory",
            "CUDA error: ",
            "NCCL error: ",
            "Watchdog caught collective operation timeout",
            "Fault detected in EP all2all",
            "Barrier timed out",
            "Barrier departure timed out",
            "RPC call to",
            "Engine iteration timed out",
            "block found in",
            "EngineCore encountered a fatal error",
            "EngineCore hit an exception",
            "EngineDeadError",
            "died unexpectedly",
            "engine core exited unexpectedly",
            "output_handler failed",
            "(engine dead)",
            "Engine background task failed",
            "Background loop ",
            "terminating server process",
            "fatal signal from worker processes",
            "WorkerProc hit an exception",
            "died, exit code",
            "died with exit code",
            "Error in chat completion stream generator",
        ),
        parse_failure,
        (
            case(
                "sample-1",
                "(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136] EngineCore failed to start.",
                ("engine_failure", {}),
            ),
            case(
                "sample-2",
                "ERROR 04-28 02:37:03 [core.py:398] EngineCore encountered a fatal error.",
                ("engine_failure", {}),
            ),
            case(
                "startup-failed-apiserver-runtime-error",
                "(APIServer pid=1179246) RuntimeError: Engine core initialization failed. See root cause above. Failed core "
                "proc(s): {}",
                ("engine_failure", {"kind": "startup-failed", "engine": "vllm"}),
            ),
            case(
                "fatal-error-0.8.5",
                "ERROR 04-28 02:37:03 [core.py:398] EngineCore encountered a fatal error.\n"
                "ERROR 04-28 02:37:03 [core.py:398] Traceback (most recent call last):",
                ("engine_failure", {"kind": "engine-dead"}),
            ),
            case(
                "hang-dump-then-death-0.9",
                "ERROR 06-15 13:57:57 [dump_input.py:79] Dumping scheduler output for model execution:\n"
                "ERROR 06-15 13:57:57 [dump_input.py:80] SchedulerOutput(scheduled_new_reqs=[], scheduled_cached_reqs=[], "
                "num_scheduled_tokens={}, total_num_scheduled_tokens=1, scheduled_spec_decode_tokens={})\n"
                "ERROR 06-15 13:57:57 [core.py:517] EngineCore encountered a fatal error.",
                ("engine_failure", {"kind": "engine-dead"}),
            ),
            case(
                "rpc-timeout-then-output-handler",
                "ERROR 09-06 04:14:11 [core.py:640] TimeoutError: RPC call to execute_model timed out.\n"
                "ERROR 09-06 04:14:11 [async_llm.py:416] AsyncLLM output_handler failed.",
                ("engine_failure", {"kind": "rpc-timeout"}),
                ("engine_failure", {"kind": "engine-dead"}),
            ),
            case(
                "engine-dead-apiserver-0.20",
                "(APIServer pid=1) ERROR 07-23 06:51:50 [async_llm.py:704] vllm.v1.engine.exceptions.EngineDeadError: "
                "EngineCore encountered an issue. See stack trace (above) for the root cause.\n"
                "(APIServer pid=1) ERROR 07-23 06:51:50 [serving.py:820] Error in chat completion stream generator.",
                ("engine_failure", {"kind": "engine-dead"}),
                ("engine_failure", {"kind": "exception"}),
            ),
            case(
                "engine-core-proc-died-dp",
                "ERROR 01-29 08:37:48 [core_client.py:564] Engine core proc EngineCore_DP1 died unexpectedly, shutting down "
                "client.",
                ("engine_failure", {"kind": "engine-dead"}),
            ),
            case(
                "worker-proc-died",
                "ERROR 07-01 10:00:00 [multiproc_executor.py:140] Worker proc VllmWorker-2 died unexpectedly, shutting down "
                "executor.",
                ("engine_failure", {"kind": "worker-died"}),
            ),
            case(
                "worker-proc-died-exit-code-0.29",
                "(EngineCore pid=7) ERROR 09-15 10:00:00 [multiproc_executor.py:300] Worker proc Worker_TP1 died unexpectedly "
                "(exit code: -9), shutting down executor.",
                ("engine_failure", {"kind": "worker-died"}),
            ),
            case(
                "workerproc-hit-exception",
                "(Worker_TP1 pid=1014) ERROR 01-14 18:56:27 [multiproc_executor.py:824] WorkerProc hit an exception.",
                ("engine_failure", {"kind": "worker-died"}),
            ),
            case(
                "v0-background-loop",
                "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already.",
                ("engine_failure", {"kind": "engine-dead"}),
            ),
            case(
                "v0-shm-no-block-colour-codes",
                "^[[1;36m(VllmWorkerProcess pid=340358)^[[0;0m WARNING 08-28 14:16:50 shm_broadcast.py:404] No available block "
                "found in 60 second.",
                ("engine_failure", {"kind": "shm-broadcast-wait", "level": "WARNING"}),
            ),
            case(
                "v0-engine-iteration-timeout",
                "ERROR 06-22 20:16:34 async_llm_engine.py:60] Engine iteration timed out. This should never happen!",
                ("engine_failure", {"kind": "rpc-timeout"}),
            ),
            case(
                "cuda-oom-traceback",
                "(EngineCore pid=112) ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. Tried to "
                "allocate 50.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 21.75 MiB is free. Including non-PyTorch "
                "memory, this process has 23.50 GiB memory in use.",
                ("engine_failure", {"kind": "cuda-oom", "engine": "vllm"}),
            ),
            case(
                "cuda-oom-sampler-warmup",
                "(EngineCore_DP0 pid=7) RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy "
                "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
                ("engine_failure", {"kind": "cuda-oom"}),
            ),
            case(
                "cuda-error-illegal-access",
                "(Worker_TP0 pid=7) ERROR 05-01 10:00:00 [multiproc_executor.py:600] RuntimeError: CUDA error: an illegal "
                "memory access was encountered",
                ("engine_failure", {"kind": "cuda-error"}),
            ),
            case(
                "c10d-watchdog-ray",
                "(RayWorkerWrapper pid=489968) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1572864, NumelOut=1572864, Timeout(ms)=600000) "
                "ran for 600021 milliseconds before timing out.",
                ("engine_failure", {"kind": "watchdog", "level": "ERROR", "engine": "vllm"}),
            ),
            case(
                "c10d-watchdog-glog",
                "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
                "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600005 "
                "milliseconds before timing out.",
                ("engine_failure", {"kind": "watchdog", "engine": "unknown"}),
            ),
            case(
                "nccl-error-v0",
                "(VllmWorkerProcess pid=236) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226] RuntimeError: NCCL error: "
                "unhandled system error",
                ("engine_failure", {"kind": "nccl-error"}),
            ),
            case(
                "nccl-error-debug-path",
                "ERROR 11-04 18:02:56 [v1/executor/multiproc_executor.py:597] RuntimeError: NCCL error: unhandled cuda error "
                "(run with NCCL_DEBUG=INFO for details)",
                ("engine_failure", {"kind": "nccl-error", "engine": "vllm"}),
            ),
            case(
                "shutdown-engine-exited",
                "(APIServer pid=1) WARNING 07-20 10:00:00 [core_client.py:700] [shutdown] MPClient: engine core exited "
                "unexpectedly; starting cleanup",
                ("engine_failure", {"kind": "engine-dead"}),
            ),
            case(
                "engine-ready-timeout",
                "(APIServer pid=1) TimeoutError: Timed out waiting for engine core processes to start. This is often caused by "
                "slow weight loading for large models. Waited 600s (configured by VLLM_ENGINE_READY_TIMEOUT_S).",
                ("engine_failure", {"kind": "startup-failed"}),
            ),
            case(
                "nccl-runtime-error",
                "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
                ("engine_failure", {}),
                exact=True,
            ),
        ),
    ),
    _grammar(
        "failures_notices",
        (
            "Error getting async model runner output",
            "vLLM shutdown signal from EngineCore failed to send",
            "Invocation of ",  # any utility method: execute_model, wake_up, sleep, ... (core.py `Invocation of %s`)
            "Unexpected error pre-processing request",
            "Waiting for creating a placement group of specs for",
            "due to KV load failure",
            "Recovered from KV load failure:",
            "NIXL transfer failure:",
            "NIXL is not available",
            "Failed to connect to bootstrap server",
            "failed on attempt",
            "without being sent. Freeing its blocks on the producer side",
            "Deferred write task for request",
        ),
        parse_failures_notices,
        (
            case(
                "v0.33-error-getting-async-model-runner-output",
                "(EngineCore pid=180) ERROR 11-30 10:00:00 [multiproc_executor.py:1105] Error getting async model runner output",
                ("engine_failure", {"kind": "exception"}),
            ),
            case(
                "v0.33-vllm-shutdown-signal-from-enginecore-fai",
                "(EngineCore pid=180) CRITICAL 11-30 10:00:00 [core.py:1878] vLLM shutdown signal from EngineCore failed to send. Please report this issue.",
                ("engine_failure", {"kind": "engine-dead"}),
            ),
            case(
                "v0.33-invocation-of-execute-model-method-faile",
                "(EngineCore pid=180) ERROR 11-30 10:00:00 [core.py:1849] Invocation of execute_model method failed",
                ("engine_failure", {"kind": "exception"}),
            ),
            case(
                "invocation-of-wake-up-method-failed",
                "(EngineCore pid=48200) ERROR 06-02 14:31:01 [core.py:1365] Invocation of wake_up method failed",
                ("engine_failure", {"kind": "exception"}),
            ),
            case(
                "v0.33-unexpected-error-pre-processing-request",
                "(EngineCore pid=180) ERROR 11-30 10:00:00 [core.py:2165] Unexpected error pre-processing request cmpl-1",
                ("engine_failure", {"kind": "exception"}),
            ),
            case(
                "v0.33-waiting-for-creating-a-placement-group-o",
                "(EngineCore pid=180) INFO 11-30 10:00:00 [ray_utils.py:223] Waiting for creating a placement group of specs for 120 seconds. specs=[{'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` and `ray list nodes` to see if you have enough resources, and make sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP environment variable specified in each node if you are running on a multi-node.",
                ("engine_failure", {"kind": "rpc-timeout"}),
            ),
            case(
                "v0.33-due-to-kv-load-failure",
                "(EngineCore pid=180) ERROR 11-30 10:00:00 [scheduler.py:3764] Failing 3 request(s) due to KV load failure (failure_policy=fail, 12288 tokens affected). Request IDs: ['a', 'b', 'c']",
                ("engine_failure", {"kind": "kv-transfer", "requests": 3}),
            ),
            case(
                "v0.33-recovered-from-kv-load-failure",
                "(EngineCore pid=180) WARNING 11-30 10:00:00 [scheduler.py:3773] Recovered from KV load failure: 3 request(s) rescheduled (12288 tokens affected).",
                ("perf_warning", {"topic": "kv-transfer"}),
            ),
            case(
                "v0.33-nixl-transfer-failure",
                "(Worker_TP0 pid=226) ERROR 11-30 10:00:00 [base_worker.py:1377] NIXL transfer failure: TRANSFER_FAILED | Context: remote engine 7a unreachable",
                ("engine_failure", {"kind": "kv-transfer", "connector": "nixl"}),
            ),
            case(
                "v0.33-nixl-is-not-available",
                "(Worker_TP0 pid=226) ERROR 11-30 10:00:00 [base_worker.py:610] NIXL is not available",
                ("engine_failure", {"kind": "kv-transfer", "connector": "nixl"}),
            ),
            case(
                "v0.33-failed-to-connect-to-bootstrap-server",
                "(Worker_TP0 pid=226) ERROR 11-30 10:00:00 [mooncake_connector.py:2611] Failed to connect to bootstrap server 10.0.0.2:8998 (type_e___name): e",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.33-failed-on-attempt",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [mooncake_connector.py:2587] Bootstrap query to 10.0.0.2:8998 failed on attempt 1/3 (type_e___name: e); retrying in 1.5 seconds",
                ("perf_warning", {"topic": "kv-transfer"}),
            ),
            case(
                "v0.33-without-being-sent-freeing-its-blocks-on",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [mooncake_connector.py:2340] Request cmpl-9 timed out after 480 seconds without being sent. Freeing its blocks on the producer side.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.33-deferred-write-task-for-request",
                "(Worker_TP0 pid=226) ERROR 11-30 10:00:00 [moriio_engine.py:261] Deferred write task for request cmpl-4 timed out after 30.0s waiting for remote blocks",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "nixl-missing-warning-at-import",
                "(APIServer pid=1805) WARNING 04-25 08:50:55 [nixl_utils.py:63] NIXL is not available",
                exact=True,
            ),
        ),
    ),
    _grammar(
        "shutdown",
        (
            "[shutdown] EngineCore: trigger received signal",
            "[shutdown] API server: shutdown triggered",
            "Shutting down",
            "(CTRL+C to force quit)",
            "Waiting for application shutdown.",
            "Application shutdown complete.",
            "Finished server process [",
        ),
        parse_shutdown,
        (
            case(
                "enginecore-sigterm-0.25",
                "(EngineCore pid=37032) INFO 08-21 09:45:37 [core.py:1214] [shutdown] EngineCore: trigger received "
                "signal=SIGTERM",
                ("engine_failure", {"kind": "shutdown", "level": "INFO"}),
            ),
            case(
                "api-server-shutdown-triggered-0.25",
                "(APIServer pid=36929) INFO 08-21 09:45:37 [launcher.py:100] [shutdown] API server: shutdown triggered",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "launcher-fastapi-0.8",
                "INFO 05-12 02:51:40 [launcher.py:80] Shutting down FastAPI HTTP server.",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "uvicorn-shutting-down",
                "(APIServer pid=1) INFO:     Shutting down",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "uvicorn-shutting-down-after-ctrl-c-echo",
                "^CINFO:     Shutting down",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "uvicorn-waiting-for-background-tasks",
                "INFO:     Waiting for background tasks to complete. (CTRL+C to force quit)",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "uvicorn-waiting-for-connections",
                "(APIServer pid=1) INFO:     Waiting for connections to close. (CTRL+C to force quit)",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "uvicorn-waiting-for-application-shutdown",
                "(APIServer pid=1) INFO:     Waiting for application shutdown.",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "uvicorn-application-shutdown-complete",
                "(APIServer pid=1) INFO:     Application shutdown complete.",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "uvicorn-finished-server-process",
                "INFO:     Finished server process [3421]",
                ("engine_failure", {"kind": "shutdown"}),
            ),
            case(
                "not-a-stop-startup-wait",
                "INFO:     Waiting for application startup.",
                exact=True,
            ),
            case(
                "not-a-stop-other-shutdown-steps",
                "(APIServer pid=36929) INFO 08-21 09:45:37 [core_client.py:655] [shutdown] MPClient: start timeout=0s",
                exact=True,
            ),
            case(
                "not-a-stop-died-shutting-down-client",
                "ERROR 01-29 08:37:48 [core_client.py:564] Engine core proc EngineCore_DP1 died unexpectedly, shutting "
                "down client.",
                ("engine_failure", {"kind": "engine-dead"}),
            ),
        ),
    ),
]
