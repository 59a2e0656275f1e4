"""NCCL line types: the transport each channel uses (`Channel 00 : 2[2] -> 3[3] via SHM/direct/direct`)."""

from __future__ import annotations

import re

from logdoctor.engines.nccl.common import _grammar
from logdoctor.events import (
    EventBase,
    NcclTransport,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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


GRAMMARS: list[Grammar] = [
    _grammar(
        "transport",
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
]
