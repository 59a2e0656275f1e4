"""vLLM line types: §11 errors: engine death, OOM, CUDA/NCCL errors, timeouts (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, _generic_base, _grammar, _is_traceback_code, _msg
from logdoctor.events import (
    EngineFailure,
    FailureKind,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

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
            "(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136] EngineCore failed to start.",
            "ERROR 04-28 02:37:03 [core.py:398] EngineCore encountered a fatal error.",
            "(APIServer pid=1179246) RuntimeError: Engine core initialization failed. See root cause above. Failed "
            "core proc(s): {}",
            "(EngineCore pid=112) ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. "
            "Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 21.75 MiB is free. "
            "Including non-PyTorch memory, this process has 23.50 GiB memory in use.",
            "(RayWorkerWrapper pid=489968) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1572864, NumelOut=1572864, "
            "Timeout(ms)=600000) ran for 600021 milliseconds before timing out.",
        ),
    ),
]
