"""Grammars for NCCL's own lines (catalogue/sglang-nccl.md §11), NCCL 2.4 to 2.30, in any engine's log.

The envelope (`host:pid:tid [dev] NCCL INFO`, NCCL >= 2.26 WARN timestamps, mpirun/Ray/docker wrappers)
is stripped first; these grammars read the message:

    node031:1936469:1936515 [2] NCCL INFO Channel 00 : 2[2] -> 3[3] via SHM/direct/direct
    vm:668:668 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1
    NCCL version 2.21.5+cuda12.4                                   (bare, on stdout, NCCL <= 2.21)

`Using network Socket` names the network plugin NCCL will use *if* it needs the network (bootstrap and
inter-node); a healthy single-host run prints it too, so it is not evidence of a NET transport between
GPUs: only `Channel ... via NET/...` lines are.
"""

from __future__ import annotations

import re

from logdoctor.events import (
    Engine,
    EngineFailure,
    EngineVersion,
    EventBase,
    FailureKind,
    NcclEnv,
    NcclInfo,
    NcclInfoKind,
    NcclTransport,
    NcclVersion,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

Values = dict[str, str | int | float | bool]


def _engine(line: LogLine) -> Engine:
    """Torch errors about NCCL are printed by the serving engine's process; NCCL's own lines are NCCL's."""
    if line.engine_hint == "vllm":
        return "vllm"
    if line.engine_hint == "sglang":
        return "sglang"
    return "nccl"


# --- version ---------------------------------------------------------------------------------------

# `NCCL version 2.21.5+cuda12.4`, `NCCL version 2.27.3+cuda12.9`, torch: `NCCL version: 2.25.1,`
_VERSION_RE = re.compile(r"\bNCCL version:? (?P<ver>\d+\.\d+(?:\.\d+)*)(?:\+cuda(?P<cuda>\d+(?:\.\d+)*))?")


def parse_version(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _VERSION_RE.search(line.message)
    if not m:
        return None
    base = ctx.base(line, "nccl")
    version = m.group("ver")
    return [
        NcclVersion(**base, version=version, cuda=m.group("cuda")),
        EngineVersion(**base, version=version, origin="nccl version"),
    ]


# --- channel transports ----------------------------------------------------------------------------

# `Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read`, `Channel 03 : 7[b2000] -> 14[b1000] [receive] via NET/IB/0/GDRDMA`,
# NCCL <= 2.5: `Ring 00 : 0[0] -> 1[1] via P2P/IPC`.
_TRANSPORT_RE = re.compile(
    r"\b(?:Channel|Ring) (?P<channel>\d+)(?:/\d+)? : (?P<src>\d+)\[(?P<src_dev>[0-9a-fA-F]+)\] -> "
    r"(?P<dst>\d+)\[(?P<dst_dev>[0-9a-fA-F]+)\](?: \[(?:send|receive)\])? via (?P<detail>\S.*?)\s*$"
)
# NCCL <= 2.18.1 prints the PCI bus id (hex, e.g. `b2000`) where later releases print the NVML device index.
_MAX_DEVICE_INDEX = 64


def _device(text: str) -> int | None:
    if text.isdigit() and int(text) < _MAX_DEVICE_INDEX:
        return int(text)
    return None


def _transport_family(detail: str) -> str:
    """`P2P` of `P2P/CUMEM/read`, `NET` of `NET/IB/0(1)/GDRDMA`, `SHM` of `SHM/direct`."""
    return detail.split("/", 1)[0].split("(", 1)[0].strip().upper()


def parse_transport(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _TRANSPORT_RE.search(line.message)
    if not m:
        return None
    detail = m.group("detail")
    return [
        NcclTransport(
            **ctx.base(line, "nccl"),
            channel=int(m.group("channel")),
            src_rank=int(m.group("src")),
            dst_rank=int(m.group("dst")),
            src_device=_device(m.group("src_dev")),
            dst_device=_device(m.group("dst_dev")),
            transport=_transport_family(detail),
            detail=detail,
        )
    ]


# --- environment echoes ----------------------------------------------------------------------------

# Integer parameters end with a period (`NCCL_NVLS_ENABLE set by environment to 0.`), string ones do not.
_ENV_RE = re.compile(r"\b(?P<name>NCCL_[A-Z0-9_]+) set by environment to (?P<value>.*?)\s*$")
_INT_WITH_PERIOD_RE = re.compile(r"^-?\d+\.$")


def parse_env(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _ENV_RE.search(line.message)
    if not m:
        return None
    value = m.group("value")
    if _INT_WITH_PERIOD_RE.match(value):
        value = value[:-1]
    return [NcclEnv(**ctx.base(line, "nccl"), name=m.group("name"), value=value)]


# --- facts worth keeping ---------------------------------------------------------------------------

_NETWORK_RE = re.compile(r"\bUsing network (?P<network>\S.*?)\s*$")
_P2P_DISABLED_RE = re.compile(
    r"P2P is disabled between (?P<nvlink>NVLINK )?connected GPUs (?P<a>\d+) and (?P<b>\d+)"
    r"|(?:Could not enable P2P|peer query failed) between dev (?P<dev_a>\d+)\(=[0-9a-fA-F]+\) and dev (?P<dev_b>\d+)"
    r"|\bP2P (?:is )?disabled\b"
)
_COMM_INIT_RE = re.compile(
    r"(?:\[Rank \d+\] )?(?:(?P<api>nccl\w+) )?comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nranks (?P<nranks>\d+) "
    r"cudaDev (?P<cuda_dev>\d+)(?: nvmlDev (?P<nvml_dev>\d+))? busId (?P<bus_id>[0-9a-fA-F]+)\b.*?"
    r" - Init (?P<phase>START|COMPLETE)"
)
_COMM_RANKS_RE = re.compile(
    r"\bcomm 0x[0-9a-fA-F]+ rank (?P<rank>\d+) nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+) "
    r"localRanks (?P<local_ranks>\d+) localRank (?P<local_rank>\d+)(?: MNNVL (?P<mnnvl>\d+))?"
)
_CHANNELS_RE = re.compile(
    r"\b(?P<coll>\d+) coll channels, (?:(?P<collnet>\d+) collnet channels, )?(?:(?P<nvls>\d+) nvls channels, )?"
    r"(?P<p2p>\d+) p2p channels(?:, (?P<per_peer>\d+) p2p channels? per peer)?"
)
_NVLS_RE = re.compile(r"NVLS multicast support is (?P<not>not )?available on dev (?P<dev>\d+)")
_CONNECTED_RE = re.compile(
    r"\bConnected (?:all (?P<what>rings|trees)|(?P<nvls>NVLS)\b)(?:, use ring PXN (?P<pxn>\d+) GDR (?P<gdr>\d+))?"
)
_P2P_TYPE_RE = re.compile(
    r"Check P2P Type isAllDirectP2p (?P<direct>\d+) directMode (?P<mode>\d+)(?: isAllCudaP2p (?P<cuda>\d+))?"
)


def _values(m: re.Match[str], *names: str) -> Values:
    return {name: int(m.group(name)) for name in names if m.group(name) is not None}


def parse_info(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    message = line.message
    base = ctx.base(line, "nccl")
    text = message.strip()

    def info(kind: NcclInfoKind, values: Values) -> list[EventBase]:
        return [NcclInfo(**base, kind=kind, message=text, values=values)]

    m = _NETWORK_RE.search(message)
    if m:
        return info("network", {"network": m.group("network")})
    m = _P2P_DISABLED_RE.search(message)
    if m:
        values: Values = {}
        a, b = m.group("a") or m.group("dev_a"), m.group("b") or m.group("dev_b")
        if a is not None and b is not None:
            values = {"gpu_a": int(a), "gpu_b": int(b)}
        if m.group("a") is not None:
            values["nvlink"] = m.group("nvlink") is not None
        return info("p2p-disabled", values)
    m = _COMM_INIT_RE.search(message)
    if m:
        values = _values(m, "rank", "nranks", "cuda_dev", "nvml_dev")
        values.update(phase=m.group("phase"), comm=m.group("comm"), bus_id=m.group("bus_id"))
        if m.group("api"):
            values["api"] = m.group("api")
        return info("comm-init", values)
    m = _COMM_RANKS_RE.search(message)
    if m:
        return info("comm-init", _values(m, "rank", "nranks", "nnodes", "local_ranks", "local_rank", "mnnvl"))
    m = _CHANNELS_RE.search(message)
    if m:
        return info("channels", _values(m, "coll", "collnet", "nvls", "p2p", "per_peer"))
    m = _NVLS_RE.search(message)
    if m:
        return info("nvls", {"available": m.group("not") is None, "device": int(m.group("dev"))})
    m = _CONNECTED_RE.search(message)
    if m:
        values = _values(m, "pxn", "gdr")
        values["connected"] = m.group("what") or "nvls"
        return info("nvls" if m.group("nvls") else "connected", values)
    m = _P2P_TYPE_RE.search(message)
    if m:
        return info("p2p-type", _values(m, "direct", "mode", "cuda"))
    return None


# --- WARN lines and NCCL errors --------------------------------------------------------------------


def parse_warn(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    """A WARN line's message is free text: the grammar is chosen by the phrases of §11.6, the level decides."""
    if line.header == "nccl" and line.level != "WARN":
        return []  # the same phrase at INFO: a retry NCCL recovers from
    if line.header != "nccl" and "NCCL WARN" not in line.message:
        return None
    text = line.message.split("NCCL WARN", 1)[-1].strip()
    return [NcclInfo(**ctx.base(line, "nccl"), kind="warn", message=text)]


_ERROR_RE = re.compile(
    r"(?P<timeout>Watchdog caught collective operation timeout|NCCL communicator was aborted)"
    r"|NCCL error\b|\bncclUnhandledCudaError\b|\bncclSystemError\b|\bncclInternalError\b"
)


def parse_error(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _ERROR_RE.search(line.message)
    if not m:
        return None
    kind: FailureKind = "nccl-timeout" if m.group("timeout") else "nccl-error"
    return [EngineFailure(**ctx.base(line, _engine(line)), kind=kind, message=line.message.strip())]


GRAMMARS: list[Grammar] = [
    Grammar(
        "nccl.transport",
        "nccl",
        ("] via ",),
        parse_transport,
        (
            "node031:1936469:1936515 [2] NCCL INFO Channel 00 : 2[2] -> 3[3] via SHM/direct/direct",
            "algo-1:18063:18133 [6] NCCL INFO Channel 03/0 : 6[6] -> 5[5] via P2P/CUMEM/read",
            "ubuntu:9621:9692 [7] NCCL INFO Channel 14/0 : 15[7] -> 0[0] [send] via NET/Socket/0",
            "machine-1:16194:18586 [6] NCCL INFO Channel 03 : 7[b2000] -> 14[b1000] [receive] via NET/IB/0/GDRDMA",
        ),
    ),
    Grammar(
        "nccl.version",
        "nccl",
        ("NCCL version",),
        parse_version,
        ("NCCL version 2.21.5+cuda12.4", "vm:668:668 [0] NCCL INFO NCCL version 2.28.9+cuda13.0"),
    ),
    Grammar(
        "nccl.env",
        "nccl",
        ("set by environment to",),
        parse_env,
        (
            "vm:669:669 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1",
            "vm:668:668 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.",
        ),
    ),
    Grammar(
        "nccl.info",
        "nccl",
        (
            "Using network ",
            "P2P is disabled",
            "P2P disabled",
            "Could not enable P2P between",
            "peer query failed between",
            "- Init START",
            "- Init COMPLETE",
            " nNodes ",
            " coll channels, ",
            "NVLS multicast support is",
            "Connected all ",
            "Connected NVLS",
            "Check P2P Type",
        ),
        parse_info,
        (
            "vm:668:668 [0] NCCL INFO Using network Socket",
            "bcc-qianfan-gpu4090-offline-1:89404:89404 [2] NCCL INFO P2P is disabled between connected GPUs 6 and 7. "
            "You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
            "vm:668:668 [0] NCCL INFO comm 0xfa503f0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
        ),
    ),
    Grammar(
        "nccl.warn",
        "nccl",
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
            "172-27-101-52:959:959 [0] transport/p2p.cc:944 NCCL WARN rank 0 failed to IPC register userbuff",
            "42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use",
        ),
    ),
    Grammar(
        "nccl.error",
        "nccl",
        (
            "NCCL error",
            "NCCL error: ",
            "Watchdog caught collective operation timeout",
            "NCCL communicator was aborted",
            "ncclUnhandledCudaError",
            "ncclSystemError",
            "ncclInternalError",
        ),
        parse_error,
        (
            "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
            "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600000 "
            "milliseconds before timing out.",
        ),
    ),
]
