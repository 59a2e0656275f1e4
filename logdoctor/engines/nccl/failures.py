"""NCCL line types: WARN lines and NCCL errors."""

from __future__ import annotations

import re

from logdoctor.engines.nccl.common import _engine, _grammar
from logdoctor.events import (
    EngineFailure,
    EventBase,
    FailureKind,
    NcclInfo,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case
from logdoctor.parse.warning_vocabulary import warning_event

# --- WARN lines and NCCL errors --------------------------------------------------------------------


def parse_warn(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    """A WARN line's message is free text: the grammar is chosen by the phrases of §11.6, the level decides."""
    if line.header == "nccl" and line.level != "WARN":
        return []  # the same phrase at INFO: a retry NCCL recovers from
    if line.header != "nccl" and "NCCL WARN" not in line.message:
        return None
    text = line.message.split("NCCL WARN", 1)[-1].strip()
    # The warning vocabulary reads its words too (docs/warnings.md): a cause, or a warning not understood.
    words = warning_event(line, "nccl", text)
    failed: list[EventBase] = []
    if _CUDA_CHECK_RE.match(text):
        failed = [EngineFailure(**ctx.base(line, _engine(line)), kind="cuda-error", message=text)]
    return [NcclInfo(**ctx.base(line, "nccl"), kind="warn", message=text), *words, *failed]


# NCCL's CUDA checks (src/include/checks.h: CUDACHECK, CUDACHECKGOTO, CUCHECK) print `Cuda failure '<error>'` (or
# `Cuda failure 98 '<error>'`) at WARN and return ncclUnhandledCudaError: the NCCL call failed. The check that
# tolerates a failure (CUDACHECKIGNORE) logs it at INFO.
_CUDA_CHECK_RE = re.compile(r"Cuda failure (?:\d+ )?'")


_ERROR_RE = re.compile(
    r"(?P<timeout>Watchdog caught collective operation timeout|NCCL communicator was aborted)"
    r"|NCCL error\b|\bncclUnhandledCudaError\b|\bncclSystemError\b|\bncclInternalError\b"
)


# PyTorch's NCCL process group logs at ERROR (`[E... ProcessGroupNCCL.cpp:N]`) when a collective stops making
# progress, in words that change with each release (the watchdog's timeout, its heartbeat monitor, the watchdog
# itself stuck, `Timeout at NCCL work`): at that level and from that file, time words are a hang.
_STALL_RE = re.compile(r"timed out|time ?out|stuck|hang|without making progress", re.IGNORECASE)


def parse_error(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _ERROR_RE.search(line.message)
    if not m:
        if line.level == "ERROR" and "ProcessGroupNCCL" in line.text and _STALL_RE.search(line.message):
            return [EngineFailure(**ctx.base(line, _engine(line)), kind="nccl-timeout", message=line.message.strip())]
        return None
    kind: FailureKind = "nccl-timeout" if m.group("timeout") else "nccl-error"
    return [EngineFailure(**ctx.base(line, _engine(line)), kind=kind, message=line.message.strip())]


# NCCLCHECK's back trace (src/include/checks.h): a call that returns an error (not ncclSuccess, not ncclInProgress)
# logs `<file>:<line> -> <ncclResult_t>` at INFO, once a frame, as the error climbs to the API call the application
# made, unless the failure was expected (ncclDebugNoWarn, while NCCL probes). The chain is the failure, whatever
# the WARN above it says in words.
_TRACE_RE = re.compile(
    r"NCCL INFO (?P<file>[\w./-]+\.(?:cc|cu|cpp|c|h)):(?P<line>\d+) -> (?P<code>[1-9]\d*)(?: \[(?P<thread>[^\]]*)\])?\s*$"
)
_RESULTS = {
    "1": "ncclUnhandledCudaError",
    "2": "ncclSystemError",
    "3": "ncclInternalError",
    "4": "ncclInvalidArgument",
    "5": "ncclInvalidUsage",
    "6": "ncclRemoteError",
}
_TRACE_KEY = "nccl.trace_line"  # the last back-trace line's number: the frames after the first are one failure
_TRACE_FRAMES_APART = 3  # blank lines or a WARN's continuation may sit between two frames of one chain


def parse_trace(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    """The first frame of an NCCL back trace is a failed NCCL call; the frames after it are the same failure."""
    m = _TRACE_RE.search(line.text)
    if m is None:
        return None
    last = ctx.state.get(_TRACE_KEY)
    ctx.state[_TRACE_KEY] = line.number
    if isinstance(last, int) and 0 < line.number - last <= _TRACE_FRAMES_APART:
        return []
    code = m.group("code")
    result = _RESULTS.get(code, f"ncclResult {code}")
    message = f"an NCCL call failed: {m.group('file')}:{m.group('line')} returned {code} ({result})"
    return [EngineFailure(**ctx.base(line, _engine(line)), kind="nccl-error", exception=result, message=message)]


GRAMMARS: list[Grammar] = [
    _grammar(
        "warn",
        (
            "NCCL WARN",
            "socketPollConnect",
            "Call to connect",
            "Call to bind failed",
            "Cuda failure",
            "No usable listening interface",
            "no interface found",
            "does not loop back",
            "failed to IPC register",
        ),
        parse_warn,
        (
            case(
                "sample-1",
                "172-27-101-52:959:959 [0] transport/p2p.cc:944 NCCL WARN rank 0 failed to IPC register userbuff",
                ("nccl_info", {}),
            ),
            case(
                "sample-2",
                "42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use",
                ("nccl_info", {}),
            ),
            case(
                "row-1",
                "172-27-101-52:959:959 [0] transport/p2p.cc:944 NCCL WARN rank 0 failed to IPC register userbuff",
                ("nccl_info", {"kind": "warn", "level": "WARN", "message": "rank 0 failed to IPC register userbuff"}),
                ("engine_warning", {"cause": None, "level": "WARN"}),  # the vocabulary: no performance word
                exact=True,
            ),
            case(
                "row-2",
                "42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use",
                ("nccl_info", {"kind": "warn", "message": "Call to bind failed : Address already in use"}),
                ("engine_warning", {"cause": None, "level": "WARN"}),  # the vocabulary: no performance word
                exact=True,
            ),
            case(
                "row-3",
                "[2026-01-05 10:00:00] node5:236:300 [2] misc/socket.cc:540 NCCL WARN socketPollConnect: Connect to "
                "10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)",
                ("nccl_info", {"kind": "warn", "timestamp": "2026-01-05 10:00:00"}),
                ("engine_warning", {"cause": None, "level": "WARN"}),  # the vocabulary: no performance word
                exact=True,
            ),
            case(
                "row-4",
                "node5:236:300 [2] misc/socket.cc:484 (ncclSocketListen) NCCL WARN NET/Socket : No usable listening interface found",
                ("nccl_info", {"kind": "warn"}),
                ("engine_warning", {"cause": None, "level": "WARN"}),  # the vocabulary: no performance word
                exact=True,
            ),
            case(
                "row-5",
                "node5:236:300 [2] enqueue.cc:100 NCCL WARN Cuda failure 'out of memory'",
                ("nccl_info", {"kind": "warn"}),
                ("engine_warning", {"cause": None, "level": "WARN"}),  # the vocabulary: no performance word
                ("engine_failure", {"kind": "cuda-error"}),  # CUDACHECK's WARN: the NCCL call returned an error
                exact=True,
            ),
            case(
                "row-6",
                "NCCL WARN Error : ring 0 does not loop back to start",
                ("nccl_info", {"kind": "warn"}),
                ("engine_warning", {"cause": None, "level": "WARN"}),  # the vocabulary: no performance word
                exact=True,
            ),
            case(
                "row-7",
                "node5:236:300 [2] NCCL INFO socketPollConnect to 10.0.0.4<56849> failed with error Connection refused, retrying",
                exact=True,
            ),
        ),
    ),
    _grammar(
        "error",
        (
            "NCCL error",
            "NCCL error: ",
            "Watchdog caught collective operation timeout",
            "NCCL communicator was aborted",
            "ncclUnhandledCudaError",
            "ncclSystemError",
            "ncclInternalError",
            "ProcessGroupNCCL",
        ),
        parse_error,
        (
            case(
                "sample-1",
                "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
                ("engine_failure", {}),
            ),
            case(
                "sample-2",
                "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
                "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600000 "
                "milliseconds before timing out.",
                ("engine_failure", {}),
            ),
            case(
                "heartbeat-timeout",
                "[rank0]:[E1016 04:38:38.361094626 ProcessGroupNCCL.cpp:1423] [PG 0 Rank 0] Heartbeat monitor timed "
                "out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
                ("engine_failure", {"kind": "nccl-timeout"}),
                exact=True,
            ),
            case(
                "watchdog-stuck",
                "[rank1]:[E1016 04:38:38.361 ProcessGroupNCCL.cpp:1512] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
                "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
                "collectives.",
                ("engine_failure", {"kind": "nccl-timeout"}),
                exact=True,
            ),
            case(
                "work-timeout",
                "[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Timeout at NCCL work: 3, last enqueued NCCL work: "
                "6, last completed NCCL work: 2.",
                ("engine_failure", {"kind": "nccl-timeout"}),
                exact=True,
            ),
            case(
                "warning-level",
                "[rank0]:[W1016 04:38:38.361 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been "
                "destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
                "destroy_process_group to ensure that any pending NCCL operations have finished in this process.",
                exact=True,
            ),
            case(
                "row-1",
                "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
                "unhandled cuda error",
                ("engine_failure", {"kind": "nccl-error"}),
                exact=True,
            ),
        ),
    ),
    _grammar(
        "trace",
        (".cc:", ".cu:", ".h:"),  # NCCL's sources: a frame names its file, which a ring line (`5 -> 6 -> 7`) does not
        parse_trace,
        (
            case(
                "sample-1",
                "[Node-A]:[PID]:[Thread] [0] NCCL INFO transport/net.cc:1302 -> 6",
                ("engine_failure", {"kind": "nccl-error", "exception": "ncclRemoteError"}),
            ),
            case(
                "row-1",
                "node1:2471:2601 [3] NCCL INFO group.cc:64 -> 2 [Async thread]",
                ("engine_failure", {"kind": "nccl-error", "exception": "ncclSystemError"}),
                exact=True,
            ),
            case("success-is-no-failure", "node1:2471:2601 [3] NCCL INFO init.cc:100 -> 0", exact=True),
            case(
                "header-file",
                "node1:2471:2601 [3] NCCL INFO include/alloc.h:105 -> 1",
                ("engine_failure", {"kind": "nccl-error", "exception": "ncclUnhandledCudaError"}),
                exact=True,
            ),
            case(
                "cuda-file",
                "node1:2471:2601 [3] NCCL INFO collectives/device/common.cu:40 -> 3",
                ("engine_failure", {"kind": "nccl-error", "exception": "ncclInternalError"}),
                exact=True,
            ),
            case("ring-line", "node1:36519:36519 [6] NCCL INFO Ring 01 : 5 -> 6 -> 7"),
        ),
    ),
]
