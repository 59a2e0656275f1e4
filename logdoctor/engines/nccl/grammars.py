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
from logdoctor.parse import cmdline
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case
from logdoctor.parse.warning_vocabulary import warning_event

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


# A pasted shell line that sets NCCL's environment (`export NCCL_P2P_DISABLE=1`, a `-e NCCL_P2P_LEVEL=LOC \\`
# continuation of a `docker run`, `NCCL_P2P_DISABLE=1 torchrun ...`): logdoctor/parse/cmdline.py `shell_env`. A line
# that also holds the launch command is the command grammar's (vllm/sglang), which reads the same settings from it.


def parse_shell_env(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if cmdline.LAUNCH_COMMAND_RE.search(line.message):
        return None
    return cmdline.nccl_env_events(line, ctx, line.message) or None


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
# NCCL 2.19+ (init.cc): whether every pair of this node's GPUs can use P2P; 0 means some pairs go through SHM.
_INTRA_NODE_P2P_RE = re.compile(r"Check P2P Type intraNodeP2pSupport (?P<support>\d+) directMode (?P<mode>\d+)")


def _values(m: re.Match[str], *names: str) -> Values:
    return {name: int(m.group(name)) for name in names if m.group(name) is not None}


# A communicator's init line read as `label value` pairs (tolerance to variants), for when the
# patterns above do not match: a renamed (`nRanks`), reordered or new field still gives the known values under
# their names, and an unknown label is kept under its snake_case name.
_LABELLED_RE = re.compile(r"\b([A-Za-z][A-Za-z_]*) (0x[0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*)\b")
_INIT_LABELS = {
    "rank": "rank",
    "nranks": "nranks",
    "cudadev": "cuda_dev",
    "nvmldev": "nvml_dev",
    "busid": "bus_id",
    "nnodes": "nnodes",
    "localranks": "local_ranks",
    "localrank": "local_rank",
    "mnnvl": "mnnvl",
    "comm": "comm",
    "commid": "comm_id",
}
_TEXT_LABELS = {"comm", "comm_id", "bus_id"}  # hex identifiers, kept as printed
_INIT_PHASE_RE = re.compile(r"\bInit (?P<phase>START|COMPLETE)\b")
_SNAKE_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _comm_init_labelled(message: str) -> Values | None:
    """The values of a comm-init line whose wording the patterns do not know; None unless rank and nranks are read."""
    values: Values = {}
    for label, value in _LABELLED_RE.findall(message):
        name = _INIT_LABELS.get(label.lower().replace("_", "")) or _SNAKE_RE.sub("_", label).lower()
        if name in values:
            continue  # `[Rank 0] ... rank 0`: the first is kept
        numeric = value.isdigit() and len(value) <= 18 and name not in _TEXT_LABELS
        values[name] = int(value) if numeric else value
    if not isinstance(values.get("rank"), int) or not isinstance(values.get("nranks"), int):
        return None
    phase = _INIT_PHASE_RE.search(message)
    if phase is not None:
        values["phase"] = phase.group("phase")
    return values


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
    if "comm 0x" in message and ("Init " in message or "nnodes" in message.lower()):
        labelled = _comm_init_labelled(message)
        if labelled is not None:
            return info("comm-init", labelled)
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
    m = _INTRA_NODE_P2P_RE.search(message)
    if m:
        supported = m.group("support") != "0"
        return info(
            "p2p-type" if supported else "p2p-disabled", {"intra_node_p2p": supported, "mode": int(m.group("mode"))}
        )
    return None


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
    return [NcclInfo(**ctx.base(line, "nccl"), kind="warn", message=text), *words]


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
            case(
                "sample-1",
                "node031:1936469:1936515 [2] NCCL INFO Channel 00 : 2[2] -> 3[3] via SHM/direct/direct",
                ("nccl_transport", {}),
            ),
            case(
                "sample-2",
                "algo-1:18063:18133 [6] NCCL INFO Channel 03/0 : 6[6] -> 5[5] via P2P/CUMEM/read",
                ("nccl_transport", {}),
            ),
            case(
                "sample-3",
                "ubuntu:9621:9692 [7] NCCL INFO Channel 14/0 : 15[7] -> 0[0] [send] via NET/Socket/0",
                ("nccl_transport", {}),
            ),
            case(
                "sample-4",
                "machine-1:16194:18586 [6] NCCL INFO Channel 03 : 7[b2000] -> 14[b1000] [receive] via NET/IB/0/GDRDMA",
                ("nccl_transport", {}),
            ),
            case(
                "row-1",
                "sh9-machine-20250813085604-64df4c99dc-m27xf:3884652:3884747 [0] NCCL INFO Channel 00 : 0[0] -> 4[4] via "
                "SHM/direct/direct",
                (
                    "nccl_transport",
                    {
                        "channel": 0,
                        "src_rank": 0,
                        "dst_rank": 4,
                        "src_device": 0,
                        "dst_device": 4,
                        "transport": "SHM",
                        "detail": "SHM/direct/direct",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-2",
                "tj5-sc-ai-h800r-dev01:533:1765 [2] NCCL INFO Channel 07 : 2[6] -> 3[7] via SHM/direct/direct",
                (
                    "nccl_transport",
                    {
                        "channel": 7,
                        "src_rank": 2,
                        "dst_rank": 3,
                        "src_device": 6,
                        "dst_device": 7,
                        "transport": "SHM",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-3",
                "2024-12-04T05:27:44.079Z | algo-1:18063:18133 [6] NCCL INFO Channel 03/0 : 6[6] -> 5[5] via P2P/CUMEM/read",
                (
                    "nccl_transport",
                    {
                        "channel": 3,
                        "src_rank": 6,
                        "dst_rank": 5,
                        "transport": "P2P",
                        "detail": "P2P/CUMEM/read",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-4",
                "H20-GPU-06:4015540:4015653 [1] NCCL INFO Channel 00/0 : 3[1] -> 2[0] via P2P/CUMEM",
                (
                    "nccl_transport",
                    {
                        "src_rank": 3,
                        "dst_rank": 2,
                        "src_device": 1,
                        "dst_device": 0,
                        "transport": "P2P",
                        "detail": "P2P/CUMEM",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-5",
                "H20-GPU-06:4015540:4015653 [1] NCCL INFO Channel 07/0 : 0[0] -> 2[0] [receive] via NET/IB/3/GDRDMA",
                (
                    "nccl_transport",
                    {
                        "channel": 7,
                        "src_rank": 0,
                        "dst_rank": 2,
                        "transport": "NET",
                        "detail": "NET/IB/3/GDRDMA",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-6",
                "job-…-worker-0:5670:5810 [7] NCCL INFO Channel 02/0 : 7[7] -> 0[0] via P2P/CUMEM",
                ("nccl_transport", {"channel": 2, "src_rank": 7, "dst_rank": 0, "transport": "P2P", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "row-7",
                "NCCL INFO Channel 01/0 : 1[50000] -> 2[53000] via P2P/IPC",
                (
                    "nccl_transport",
                    {
                        "channel": 1,
                        "src_rank": 1,
                        "dst_rank": 2,
                        "src_device": None,
                        "dst_device": None,
                        "transport": "P2P",
                        "detail": "P2P/IPC",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-8",
                "NCCL INFO Channel 00/0 : 4[b5000] -> 1[f000] via P2P/IPC/read",
                (
                    "nccl_transport",
                    {
                        "src_rank": 4,
                        "dst_rank": 1,
                        "src_device": None,
                        "dst_device": None,
                        "detail": "P2P/IPC/read",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-9",
                "A03-R28-I49-2-6000166:58077:58141 [6] NCCL INFO Channel 03 : 6[e1000] -> 7[e7000] via P2P/direct pointer/read",
                (
                    "nccl_transport",
                    {
                        "channel": 3,
                        "src_rank": 6,
                        "dst_rank": 7,
                        "src_device": None,
                        "transport": "P2P",
                        "detail": "P2P/direct pointer/read",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-10",
                "machine-1:16194:18586 [6] NCCL INFO Channel 03 : 7[b2000] -> 14[b1000] [receive] via NET/IB/0/GDRDMA",
                (
                    "nccl_transport",
                    {"src_rank": 7, "dst_rank": 14, "transport": "NET", "detail": "NET/IB/0/GDRDMA", "engine": "nccl"},
                ),
                exact=True,
            ),
            case(
                "row-11",
                "hw14:798:813 [3] NCCL INFO Channel 02/0 : 3[3] -> 4[4] via P2P/direct pointer",
                (
                    "nccl_transport",
                    {
                        "src_device": 3,
                        "dst_device": 4,
                        "transport": "P2P",
                        "detail": "P2P/direct pointer",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-12",
                "ubuntu:9621:9692 [7] NCCL INFO Channel 14/0 : 15[7] -> 0[0] [send] via NET/Socket/0",
                (
                    "nccl_transport",
                    {
                        "channel": 14,
                        "src_rank": 15,
                        "dst_rank": 0,
                        "src_device": 7,
                        "transport": "NET",
                        "detail": "NET/Socket/0",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-13",
                "7502d6c5484e:1025:1025 [3] NCCL INFO Channel 00/0 : 0[2] -> 1[3] [receive] via NET/Socket/0",
                (
                    "nccl_transport",
                    {
                        "src_rank": 0,
                        "dst_rank": 1,
                        "src_device": 2,
                        "dst_device": 3,
                        "transport": "NET",
                        "detail": "NET/Socket/0",
                        "engine": "nccl",
                    },
                ),
                exact=True,
            ),
            case(
                "row-14",
                "node1:10:11 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct",
                ("nccl_transport", {"transport": "SHM", "detail": "SHM/direct", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "row-15",
                "node1:10:11 [0] NCCL INFO Channel 01/1 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA",
                (
                    "nccl_transport",
                    {"channel": 1, "dst_rank": 8, "transport": "NET", "detail": "NET/IB/0(1)/GDRDMA", "engine": "nccl"},
                ),
                exact=True,
            ),
            case(
                "row-16",
                "node1:10:11 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/0(PCI)",
                ("nccl_transport", {"transport": "NET", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "row-17",
                "node1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[2] via P2P/indirect/1[1]",
                ("nccl_transport", {"transport": "P2P", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "row-18",
                "node1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] via P2P/MNNVL",
                ("nccl_transport", {"transport": "P2P", "detail": "P2P/MNNVL", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "row-19",
                "node1:10:11 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC",
                ("nccl_transport", {"channel": 0, "transport": "P2P", "detail": "P2P/IPC", "engine": "nccl"}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "nccl.version",
        "nccl",
        ("NCCL version",),
        parse_version,
        (
            case("sample-1", "NCCL version 2.21.5+cuda12.4", ("nccl_version", {}), ("engine_version", {})),
            case(
                "sample-2",
                "vm:668:668 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
                ("nccl_version", {}),
                ("engine_version", {}),
            ),
            case(
                "row-1",
                "NCCL version 2.21.5+cuda12.4",
                ("nccl_version", {"version": "2.21.5", "cuda": "12.4"}),
                ("engine_version", {"version": "2.21.5", "origin": "nccl version", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "row-2",
                "NCCL version 2.19.3+cuda12.3",
                ("nccl_version", {"version": "2.19.3", "cuda": "12.3"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-3",
                "NCCL version 2.18.1+cuda12.1",
                ("nccl_version", {"version": "2.18.1"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-4",
                "NCCL version 2.7.8+cuda10.0",
                ("nccl_version", {"version": "2.7.8", "cuda": "10.0"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-5",
                "gpu-node:100:100 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
                ("nccl_version", {"version": "2.27.3", "cuda": "12.9", "level": "INFO"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-6",
                "NCCL version 2.21.5.1+cuda12.4",
                ("nccl_version", {"version": "2.21.5.1"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-7",
                "I0820 14:27:21.482718 4030958 ProcessGroupNCCL.cpp:980] [PG ID 1 PG GUID 1 Rank 1] ProcessGroupNCCL "
                "environments: NCCL version: 2.25.1, TORCH_NCCL_ASYNC_ERROR_HANDLING: 3",
                ("nccl_version", {"version": "2.25.1", "cuda": None}),
                ("engine_version", {}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "nccl.shell_env",
        "nccl",
        ("-e NCCL_", "--env NCCL_", "--env=NCCL_", "export NCCL_", "env NCCL_", "NCCL_P2P_DISABLE=", "NCCL_P2P_LEVEL="),
        parse_shell_env,
        (
            case(
                "docker-run-e",
                "docker run --runtime nvidia --gpus all -e NCCL_P2P_DISABLE=1 -e NCCL_IB_DISABLE=1 -p 8000:8000 \\",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1", "engine": "nccl"}),
                ("nccl_env", {"name": "NCCL_IB_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "continuation-env",
                "    --env NCCL_P2P_LEVEL=LOC \\",
                ("nccl_env", {"name": "NCCL_P2P_LEVEL", "value": "LOC", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "env-equals",
                "  --env=NCCL_SHM_DISABLE=1 \\",
                ("nccl_env", {"name": "NCCL_SHM_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "export",
                "export NCCL_P2P_DISABLE=1",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
            case("a-line-of-assignments-alone-is-left-to-collect-env", "NCCL_P2P_LEVEL=LOC", exact=True),
            case("a-hint-is-not-a-setting", "WARNING: to silence this, set NCCL_P2P_DISABLE=1 before", exact=True),
            case(
                "assignments-before-the-command",
                "CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 torchrun --nproc-per-node 2 bench_allreduce.py",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1", "engine": "nccl"}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "nccl.env",
        "nccl",
        ("set by environment to",),
        parse_env,
        (
            case("sample-1", "vm:669:669 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1", ("nccl_env", {})),
            case("sample-2", "vm:668:668 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.", ("nccl_env", {})),
            case(
                "row-1",
                "vm:669:669 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1"}),
                exact=True,
            ),
            case(
                "row-2",
                "vm:668:668 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.",
                ("nccl_env", {"name": "NCCL_NVLS_ENABLE", "value": "0"}),
                exact=True,
            ),
            case(
                "row-3",
                "iZ8vb69v6s60nfnp50dd1dZ:297:305 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 4.",
                ("nccl_env", {"name": "NCCL_MAX_NCHANNELS", "value": "4"}),
                exact=True,
            ),
            case(
                "row-4",
                "node:1:2 [0] NCCL INFO NCCL_CUMEM_ENABLE set by environment to 0.",
                ("nccl_env", {"name": "NCCL_CUMEM_ENABLE", "value": "0"}),
                exact=True,
            ),
            case(
                "row-5",
                "node:1:2 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.",
                ("nccl_env", {"name": "NCCL_SHM_DISABLE", "value": "1"}),
                exact=True,
            ),
            case(
                "row-6",
                "node:1:2 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC",
                ("nccl_env", {"name": "NCCL_P2P_LEVEL", "value": "LOC"}),
                exact=True,
            ),
            case(
                "row-7",
                "node:1:2 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0",
                ("nccl_env", {"value": "bond0"}),
                exact=True,
            ),
            case(
                "row-8",
                "node:1:2 [0] NCCL INFO NCCL_ALGO set by environment to allreduce:tree",
                ("nccl_env", {"value": "allreduce:tree"}),
                exact=True,
            ),
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
            "Init COMPLETE",
            "Init START",
            " nNodes ",
            " coll channels, ",
            "NVLS multicast support is",
            "Connected all ",
            "Connected NVLS",
            "Check P2P Type",
        ),
        parse_info,
        (
            case("sample-1", "vm:668:668 [0] NCCL INFO Using network Socket", ("nccl_info", {})),
            case(
                "sample-2",
                "bcc-qianfan-gpu4090-offline-1:89404:89404 [2] NCCL INFO P2P is disabled between connected GPUs 6 and 7. "
                "You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
                ("nccl_info", {}),
            ),
            case(
                "sample-3",
                "vm:668:668 [0] NCCL INFO comm 0xfa503f0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
                ("nccl_info", {}),
            ),
            case(
                "row-1",
                "vm:668:668 [0] NCCL INFO Using network Socket",
                ("nccl_info", {"kind": "network", "values": {"network": "Socket"}}),
                exact=True,
            ),
            case(
                "row-2",
                "node1:10:10 [0] NCCL INFO Using network IB",
                ("nccl_info", {"kind": "network", "values": {"network": "IB"}}),
                exact=True,
            ),
            case(
                "row-3",
                "node1:10:10 [0] NCCL INFO Using network AWS Libfabric",
                ("nccl_info", {"values": {"network": "AWS Libfabric"}}),
                exact=True,
            ),
            case(
                "row-4",
                "bcc-qianfan-gpu4090-offline-1:89404:89404 [2] NCCL INFO P2P is disabled between connected GPUs 6 and 7. You "
                "can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
                ("nccl_info", {"kind": "p2p-disabled", "values": {"gpu_a": 6, "gpu_b": 7, "nvlink": False}}),
                exact=True,
            ),
            case(
                "row-5",
                "gpu7:300:300 [1] transport/p2p.cc:944 (p2pSendSetup) NCCL WARN P2P is disabled between NVLINK connected GPUs "
                "0 and 1. This should not be the case given their connectivity, and is probably due to a hardware issue.",
                (
                    "nccl_info",
                    {"kind": "p2p-disabled", "level": "WARN", "values": {"gpu_a": 0, "gpu_b": 1, "nvlink": True}},
                ),
                exact=True,
            ),
            case(
                "row-6",
                "node:1:2 [0] NCCL INFO Could not enable P2P between dev 0(=1b000) and dev 1(=1c000)",
                ("nccl_info", {"kind": "p2p-disabled", "values": {"gpu_a": 0, "gpu_b": 1}}),
                exact=True,
            ),
            case(
                "row-7",
                "vm:668:668 [0] NCCL INFO ncclCommInitRankConfig comm 0xfa503f0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 "
                "commId 0x8d93563a5dc3ab4b - Init COMPLETE",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "rank": 0,
                            "nranks": 2,
                            "cuda_dev": 0,
                            "nvml_dev": 0,
                            "phase": "COMPLETE",
                            "comm": "0xfa503f0",
                            "bus_id": "60",
                            "api": "ncclCommInitRankConfig",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-8",
                "node:1:2 [3] NCCL INFO comm 0x55d0 rank 3 nranks 4 cudaDev 3 nvmlDev 3 busId 1b000 commId 0xabc - Init START",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "rank": 3,
                            "nranks": 4,
                            "cuda_dev": 3,
                            "nvml_dev": 3,
                            "phase": "START",
                            "comm": "0x55d0",
                            "bus_id": "1b000",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-9",
                "node:1:2 [0] NCCL INFO ncclCommSplit comm 0x77 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 parent 0x55 "
                "color 1 key 0 commId 0xdef - Init COMPLETE",
                ("nccl_info", {"kind": "comm-init"}),
                exact=True,
            ),
            case(
                "row-10",
                "node:1:2 [0] NCCL INFO [Rank 0] ncclCommInitRankConfig comm 0x77 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
                "18000 commId 0xdef - Init START",
                ("nccl_info", {"kind": "comm-init"}),
                exact=True,
            ),
            case(
                "labelled-reordered",  # constructed variant: nRanks renamed, nvmlDev moved, a new localRank field
                "node:1:2 [1] NCCL INFO ncclCommInitRankConfig comm 0x7f00 rank 1 nRanks 2 cudaDev 1 busId 1c000 nvmlDev 1 "
                "commId 0xabc localRank 1 - Init COMPLETE",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "comm": "0x7f00",
                            "rank": 1,
                            "nranks": 2,
                            "cuda_dev": 1,
                            "bus_id": "1c000",
                            "nvml_dev": 1,
                            "comm_id": "0xabc",
                            "local_rank": 1,
                            "phase": "COMPLETE",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "labelled-reworded",  # constructed variant: the phase first, a new field (`nChannels`)
                "node:1:2 [0] NCCL INFO Init COMPLETE: comm 0x7f00 rank 0 nranks 4 cudaDev 0 nChannels 16 busId 18000",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "comm": "0x7f00",
                            "rank": 0,
                            "nranks": 4,
                            "cuda_dev": 0,
                            "n_channels": 16,
                            "bus_id": "18000",
                            "phase": "COMPLETE",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-11",
                "vm:668:668 [0] NCCL INFO comm 0xfa503f0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {"rank": 0, "nranks": 2, "nnodes": 1, "local_ranks": 2, "local_rank": 0, "mnnvl": 0},
                    },
                ),
                exact=True,
            ),
            case(
                "row-12",
                "vm:668:668 [0] NCCL INFO 4 coll channels, 4 collnet channels, 0 nvls channels, 4 p2p channels, 2 p2p channels "
                "per peer",
                (
                    "nccl_info",
                    {"kind": "channels", "values": {"coll": 4, "collnet": 4, "nvls": 0, "p2p": 4, "per_peer": 2}},
                ),
                exact=True,
            ),
            case(
                "row-13",
                "node:1:2 [0] NCCL INFO 16 coll channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer",
                ("nccl_info", {"kind": "channels", "values": {"coll": 16, "nvls": 16, "p2p": 16, "per_peer": 2}}),
                exact=True,
            ),
            case(
                "row-14",
                "A03-R28-I49-3-9000018:193027:193118 [6] NCCL INFO 8 coll channels, 8 p2p channels, 1 p2p channels per peer",
                ("nccl_info", {"kind": "channels", "values": {"coll": 8, "p2p": 8, "per_peer": 1}}),
                exact=True,
            ),
            case(
                "row-15",
                "node:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0",
                ("nccl_info", {"kind": "nvls", "values": {"available": False, "device": 0}}),
                exact=True,
            ),
            case(
                "row-16",
                "node:1:2 [0] NCCL INFO NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)",
                ("nccl_info", {"kind": "nvls", "values": {"available": True, "device": 0}}),
                exact=True,
            ),
            case(
                "row-17",
                "node:1:2 [0] NCCL INFO Connected NVLS tree",
                ("nccl_info", {"kind": "nvls", "values": {"connected": "nvls"}}),
                exact=True,
            ),
            case(
                "row-18",
                "tj5-sc-ai-h800r-dev01:532:1764 [1] NCCL INFO Connected all rings",
                ("nccl_info", {"kind": "connected", "values": {"connected": "rings"}}),
                exact=True,
            ),
            case(
                "row-19",
                "node:1:2 [0] NCCL INFO Connected all trees",
                ("nccl_info", {"kind": "connected", "values": {"connected": "trees"}}),
                exact=True,
            ),
            case(
                "row-20",
                "vm:669:669 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
                ("nccl_info", {"kind": "connected", "values": {"connected": "rings", "pxn": 0, "gdr": 1}}),
                exact=True,
            ),
            case(
                "row-21",
                "7502d6c5484e:743:743 [2] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0",
                ("nccl_info", {"kind": "p2p-type", "values": {"direct": 0, "mode": 0}}),
                exact=True,
            ),
            case(
                "row-22",
                "vm:668:668 [0] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1",
                ("nccl_info", {"kind": "p2p-type", "values": {"direct": 0, "mode": 0, "cuda": 1}}),
                exact=True,
            ),
            case(
                "intra-node-p2p-0",
                "node1:123:123 [0] NCCL INFO Check P2P Type intraNodeP2pSupport 0 directMode 1",
                ("nccl_info", {"kind": "p2p-disabled", "values": {"intra_node_p2p": False, "mode": 1}}),
                exact=True,
            ),
            case(
                "intra-node-p2p-1",
                "node1:123:123 [0] NCCL INFO Check P2P Type intraNodeP2pSupport 1 directMode 0",
                ("nccl_info", {"kind": "p2p-type", "values": {"intra_node_p2p": True, "mode": 0}}),
                exact=True,
            ),
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
                "row-1",
                "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
                "unhandled cuda error",
                ("engine_failure", {"kind": "nccl-error"}),
                exact=True,
            ),
        ),
    ),
]
