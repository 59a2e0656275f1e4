"""NCCL grammars, fed through the whole pipeline with the lines of catalogue/sglang-nccl.md §11."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from logdoctor.engines.nccl import grammars as nccl
from logdoctor.events import EventBase, NcclEnv, NcclInfo, NcclTransport
from logdoctor.parse.envelope import parse_envelope
from logdoctor.parse.grammar import Grammar, ParseContext
from logdoctor.parse.pipeline import EventStream, parse_text

CORPUS = Path("/work/shared/corpus")


def only(text: str) -> EventBase:
    events = parse_text(text)
    assert len(events) == 1, events
    return events[0]


def check(event: EventBase, expected: dict[str, Any]) -> None:
    for name, value in expected.items():
        assert getattr(event, name) == value, (name, getattr(event, name))


# --- §11.3 channel transports, every version shape ----------------------------------------------------

TRANSPORT_CASES: list[tuple[str, dict[str, Any]]] = [
    # VERBATIM
    (
        "sh9-machine-20250813085604-64df4c99dc-m27xf:3884652:3884747 [0] NCCL INFO Channel 00 : 0[0] -> 4[4] via "
        "SHM/direct/direct",
        dict(
            channel=0, src_rank=0, dst_rank=4, src_device=0, dst_device=4, transport="SHM", detail="SHM/direct/direct"
        ),
    ),
    (
        "tj5-sc-ai-h800r-dev01:533:1765 [2] NCCL INFO Channel 07 : 2[6] -> 3[7] via SHM/direct/direct",
        dict(channel=7, src_rank=2, dst_rank=3, src_device=6, dst_device=7, transport="SHM"),
    ),
    (
        "2024-12-04T05:27:44.079Z | algo-1:18063:18133 [6] NCCL INFO Channel 03/0 : 6[6] -> 5[5] via P2P/CUMEM/read",
        dict(channel=3, src_rank=6, dst_rank=5, transport="P2P", detail="P2P/CUMEM/read"),
    ),
    (
        "H20-GPU-06:4015540:4015653 [1] NCCL INFO Channel 00/0 : 3[1] -> 2[0] via P2P/CUMEM",
        dict(src_rank=3, dst_rank=2, src_device=1, dst_device=0, transport="P2P", detail="P2P/CUMEM"),
    ),
    (
        "H20-GPU-06:4015540:4015653 [1] NCCL INFO Channel 07/0 : 0[0] -> 2[0] [receive] via NET/IB/3/GDRDMA",
        dict(channel=7, src_rank=0, dst_rank=2, transport="NET", detail="NET/IB/3/GDRDMA"),
    ),
    (
        "job-…-worker-0:5670:5810 [7] NCCL INFO Channel 02/0 : 7[7] -> 0[0] via P2P/CUMEM",
        dict(channel=2, src_rank=7, dst_rank=0, transport="P2P"),
    ),
    # 2.14-2.18.1: bus ids in the brackets, not devices
    (
        "NCCL INFO Channel 01/0 : 1[50000] -> 2[53000] via P2P/IPC",
        dict(channel=1, src_rank=1, dst_rank=2, src_device=None, dst_device=None, transport="P2P", detail="P2P/IPC"),
    ),
    (
        "NCCL INFO Channel 00/0 : 4[b5000] -> 1[f000] via P2P/IPC/read",
        dict(src_rank=4, dst_rank=1, src_device=None, dst_device=None, detail="P2P/IPC/read"),
    ),
    # <= 2.12
    (
        "A03-R28-I49-2-6000166:58077:58141 [6] NCCL INFO Channel 03 : 6[e1000] -> 7[e7000] via P2P/direct pointer/read",
        dict(channel=3, src_rank=6, dst_rank=7, src_device=None, transport="P2P", detail="P2P/direct pointer/read"),
    ),
    (
        "machine-1:16194:18586 [6] NCCL INFO Channel 03 : 7[b2000] -> 14[b1000] [receive] via NET/IB/0/GDRDMA",
        dict(src_rank=7, dst_rank=14, transport="NET", detail="NET/IB/0/GDRDMA"),
    ),
    (
        "hw14:798:813 [3] NCCL INFO Channel 02/0 : 3[3] -> 4[4] via P2P/direct pointer",
        dict(src_device=3, dst_device=4, transport="P2P", detail="P2P/direct pointer"),
    ),
    (
        "ubuntu:9621:9692 [7] NCCL INFO Channel 14/0 : 15[7] -> 0[0] [send] via NET/Socket/0",
        dict(channel=14, src_rank=15, dst_rank=0, src_device=7, transport="NET", detail="NET/Socket/0"),
    ),
    # SGLang TP=2 in one container over NET/Socket (sglang#17402)
    (
        "7502d6c5484e:1025:1025 [3] NCCL INFO Channel 00/0 : 0[2] -> 1[3] [receive] via NET/Socket/0",
        dict(src_rank=0, dst_rank=1, src_device=2, dst_device=3, transport="NET", detail="NET/Socket/0"),
    ),
    # RENDERED: 2.30 single-token SHM, NET proxy and PCI forms, indirect and MNNVL P2P, NCCL <= 2.5 `Ring` lines
    ("node1:10:11 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct", dict(transport="SHM", detail="SHM/direct")),
    (
        "node1:10:11 [0] NCCL INFO Channel 01/1 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA",
        dict(channel=1, dst_rank=8, transport="NET", detail="NET/IB/0(1)/GDRDMA"),
    ),
    ("node1:10:11 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/0(PCI)", dict(transport="NET")),
    ("node1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 2[2] via P2P/indirect/1[1]", dict(transport="P2P")),
    ("node1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] via P2P/MNNVL", dict(transport="P2P", detail="P2P/MNNVL")),
    (
        "node1:10:11 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC",
        dict(channel=0, transport="P2P", detail="P2P/IPC"),
    ),
]


@pytest.mark.parametrize(("text", "expected"), TRANSPORT_CASES, ids=[t[:70] for t, _ in TRANSPORT_CASES])
def test_transport(text: str, expected: dict[str, Any]) -> None:
    event = only(text)
    assert isinstance(event, NcclTransport)
    assert event.engine == "nccl"
    check(event, expected)


def test_transport_keeps_the_rank_process() -> None:
    event = only("tj5-sc-ai-h800r-dev01:533:1765 [2] NCCL INFO Channel 07 : 2[6] -> 3[7] via SHM/direct/direct")
    assert event.process is not None
    assert (event.process.host, event.process.pid, event.process.device) == ("tj5-sc-ai-h800r-dev01", 533, 2)


# --- §11.2 versions, §11.4 environment, §11.5 summaries, §11.6 warnings --------------------------------

LINE_CASES: list[tuple[str, list[tuple[str, dict[str, Any]]]]] = [
    # §11.2 bare (<= 2.21), INFO (2.22+), torch's glog echo
    (
        "NCCL version 2.21.5+cuda12.4",
        [
            ("nccl_version", dict(version="2.21.5", cuda="12.4")),
            ("engine_version", dict(version="2.21.5", origin="nccl version", engine="nccl")),
        ],
    ),
    ("NCCL version 2.19.3+cuda12.3", [("nccl_version", dict(version="2.19.3", cuda="12.3")), ("engine_version", {})]),
    ("NCCL version 2.18.1+cuda12.1", [("nccl_version", dict(version="2.18.1")), ("engine_version", {})]),
    ("NCCL version 2.7.8+cuda10.0", [("nccl_version", dict(version="2.7.8", cuda="10.0")), ("engine_version", {})]),
    (
        "gpu-node:100:100 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
        [("nccl_version", dict(version="2.27.3", cuda="12.9", level="INFO")), ("engine_version", {})],
    ),
    ("NCCL version 2.21.5.1+cuda12.4", [("nccl_version", dict(version="2.21.5.1")), ("engine_version", {})]),
    (
        "I0820 14:27:21.482718 4030958 ProcessGroupNCCL.cpp:980] [PG ID 1 PG GUID 1 Rank 1] ProcessGroupNCCL "
        "environments: NCCL version: 2.25.1, TORCH_NCCL_ASYNC_ERROR_HANDLING: 3",
        [("nccl_version", dict(version="2.25.1", cuda=None)), ("engine_version", {})],
    ),
    # §11.4 (integer params end with a period, string params do not)
    (
        "vm:669:669 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1",
        [("nccl_env", dict(name="NCCL_P2P_DISABLE", value="1"))],
    ),
    (
        "vm:668:668 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.",
        [("nccl_env", dict(name="NCCL_NVLS_ENABLE", value="0"))],
    ),
    (
        "iZ8vb69v6s60nfnp50dd1dZ:297:305 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 4.",
        [("nccl_env", dict(name="NCCL_MAX_NCHANNELS", value="4"))],
    ),
    (
        "node:1:2 [0] NCCL INFO NCCL_CUMEM_ENABLE set by environment to 0.",
        [("nccl_env", dict(name="NCCL_CUMEM_ENABLE", value="0"))],
    ),
    (
        "node:1:2 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.",
        [("nccl_env", dict(name="NCCL_SHM_DISABLE", value="1"))],
    ),
    (
        "node:1:2 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC",
        [("nccl_env", dict(name="NCCL_P2P_LEVEL", value="LOC"))],
    ),
    ("node:1:2 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0", [("nccl_env", dict(value="bond0"))]),
    (
        "node:1:2 [0] NCCL INFO NCCL_ALGO set by environment to allreduce:tree",
        [("nccl_env", dict(value="allreduce:tree"))],
    ),
    # `Using network` names the plugin; it is printed on healthy single-host runs too
    (
        "vm:668:668 [0] NCCL INFO Using network Socket",
        [("nccl_info", dict(kind="network", values={"network": "Socket"}))],
    ),
    ("node1:10:10 [0] NCCL INFO Using network IB", [("nccl_info", dict(kind="network", values={"network": "IB"}))]),
    (
        "node1:10:10 [0] NCCL INFO Using network AWS Libfabric",
        [("nccl_info", dict(values={"network": "AWS Libfabric"}))],
    ),
    # P2P disabled (VERBATIM corpus nccl-003, RENDERED NVLink WARN and the dev forms)
    (
        "bcc-qianfan-gpu4090-offline-1:89404:89404 [2] NCCL INFO P2P is disabled between connected GPUs 6 and 7. You "
        "can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
        [("nccl_info", dict(kind="p2p-disabled", values={"gpu_a": 6, "gpu_b": 7, "nvlink": False}))],
    ),
    (
        "gpu7:300:300 [1] transport/p2p.cc:944 (p2pSendSetup) NCCL WARN P2P is disabled between NVLINK connected GPUs "
        "0 and 1. This should not be the case given their connectivity, and is probably due to a hardware issue.",
        [("nccl_info", dict(kind="p2p-disabled", level="WARN", values={"gpu_a": 0, "gpu_b": 1, "nvlink": True}))],
    ),
    (
        "node:1:2 [0] NCCL INFO Could not enable P2P between dev 0(=1b000) and dev 1(=1c000)",
        [("nccl_info", dict(kind="p2p-disabled", values={"gpu_a": 0, "gpu_b": 1}))],
    ),
    # comm init summaries, every version shape
    (
        "vm:668:668 [0] NCCL INFO ncclCommInitRankConfig comm 0xfa503f0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 "
        "commId 0x8d93563a5dc3ab4b - Init COMPLETE",
        [
            (
                "nccl_info",
                dict(
                    kind="comm-init",
                    values={
                        "rank": 0,
                        "nranks": 2,
                        "cuda_dev": 0,
                        "nvml_dev": 0,
                        "phase": "COMPLETE",
                        "comm": "0xfa503f0",
                        "bus_id": "60",
                        "api": "ncclCommInitRankConfig",
                    },
                ),
            )
        ],
    ),
    (
        "node:1:2 [3] NCCL INFO comm 0x55d0 rank 3 nranks 4 cudaDev 3 nvmlDev 3 busId 1b000 commId 0xabc - Init START",
        [
            (
                "nccl_info",
                dict(
                    kind="comm-init",
                    values={
                        "rank": 3,
                        "nranks": 4,
                        "cuda_dev": 3,
                        "nvml_dev": 3,
                        "phase": "START",
                        "comm": "0x55d0",
                        "bus_id": "1b000",
                    },
                ),
            )
        ],
    ),
    (
        "node:1:2 [0] NCCL INFO ncclCommSplit comm 0x77 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 parent 0x55 "
        "color 1 key 0 commId 0xdef - Init COMPLETE",
        [("nccl_info", dict(kind="comm-init"))],
    ),
    (
        "node:1:2 [0] NCCL INFO [Rank 0] ncclCommInitRankConfig comm 0x77 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
        "18000 commId 0xdef - Init START",
        [("nccl_info", dict(kind="comm-init"))],
    ),
    (
        "vm:668:668 [0] NCCL INFO comm 0xfa503f0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
        [
            (
                "nccl_info",
                dict(
                    kind="comm-init",
                    values={"rank": 0, "nranks": 2, "nnodes": 1, "local_ranks": 2, "local_rank": 0, "mnnvl": 0},
                ),
            )
        ],
    ),
    (
        "vm:668:668 [0] NCCL INFO 4 coll channels, 4 collnet channels, 0 nvls channels, 4 p2p channels, 2 p2p channels "
        "per peer",
        [("nccl_info", dict(kind="channels", values={"coll": 4, "collnet": 4, "nvls": 0, "p2p": 4, "per_peer": 2}))],
    ),
    (
        "node:1:2 [0] NCCL INFO 16 coll channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer",
        [("nccl_info", dict(kind="channels", values={"coll": 16, "nvls": 16, "p2p": 16, "per_peer": 2}))],
    ),
    (
        "A03-R28-I49-3-9000018:193027:193118 [6] NCCL INFO 8 coll channels, 8 p2p channels, 1 p2p channels per peer",
        [("nccl_info", dict(kind="channels", values={"coll": 8, "p2p": 8, "per_peer": 1}))],
    ),
    (
        "node:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0",
        [("nccl_info", dict(kind="nvls", values={"available": False, "device": 0}))],
    ),
    (
        "node:1:2 [0] NCCL INFO NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)",
        [("nccl_info", dict(kind="nvls", values={"available": True, "device": 0}))],
    ),
    ("node:1:2 [0] NCCL INFO Connected NVLS tree", [("nccl_info", dict(kind="nvls", values={"connected": "nvls"}))]),
    (
        "tj5-sc-ai-h800r-dev01:532:1764 [1] NCCL INFO Connected all rings",
        [("nccl_info", dict(kind="connected", values={"connected": "rings"}))],
    ),
    (
        "node:1:2 [0] NCCL INFO Connected all trees",
        [("nccl_info", dict(kind="connected", values={"connected": "trees"}))],
    ),
    (
        "vm:669:669 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
        [("nccl_info", dict(kind="connected", values={"connected": "rings", "pxn": 0, "gdr": 1}))],
    ),
    (
        "7502d6c5484e:743:743 [2] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0",
        [("nccl_info", dict(kind="p2p-type", values={"direct": 0, "mode": 0}))],
    ),
    (
        "vm:668:668 [0] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1",
        [("nccl_info", dict(kind="p2p-type", values={"direct": 0, "mode": 0, "cuda": 1}))],
    ),
    # §11.5/§11.6 WARN lines, every envelope version
    (
        "172-27-101-52:959:959 [0] transport/p2p.cc:944 NCCL WARN rank 0 failed to IPC register userbuff",
        [("nccl_info", dict(kind="warn", level="WARN", message="rank 0 failed to IPC register userbuff"))],
    ),
    (
        "42692884fcba:140:140 [0] include/socket.h:333 NCCL WARN Call to bind failed : Address already in use",
        [("nccl_info", dict(kind="warn", message="Call to bind failed : Address already in use"))],
    ),
    (
        "[2026-01-05 10:00:00] node5:236:300 [2] misc/socket.cc:540 NCCL WARN socketPollConnect: Connect to "
        "10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)",
        [("nccl_info", dict(kind="warn", timestamp="2026-01-05 10:00:00"))],
    ),
    (
        "node5:236:300 [2] misc/socket.cc:484 (ncclSocketListen) NCCL WARN NET/Socket : No usable listening interface found",
        [("nccl_info", dict(kind="warn"))],
    ),
    ("node5:236:300 [2] enqueue.cc:100 NCCL WARN Cuda failure 'out of memory'", [("nccl_info", dict(kind="warn"))]),
    ("NCCL WARN Error : ring 0 does not loop back to start", [("nccl_info", dict(kind="warn"))]),
    # torch errors about NCCL
    (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "unhandled cuda error",
        [("engine_failure", dict(kind="nccl-error"))],
    ),
    (
        "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)",
        [("engine_failure", {})],
    ),
]


@pytest.mark.parametrize(("text", "expected"), LINE_CASES, ids=[t[:70] for t, _ in LINE_CASES])
def test_lines(text: str, expected: list[tuple[str, dict[str, Any]]]) -> None:
    events = parse_text(text)
    assert [ev.type for ev in events] == [t for t, _ in expected]
    for event, (_, values) in zip(events, expected, strict=True):
        check(event, values)


@pytest.mark.parametrize(
    "text",
    [
        # recognised or not candidates at all: ring order, trees, plugins, bootstrap, INFO socket retries
        "7502d6c5484e:743:743 [2] NCCL INFO Channel 01/02 : 0 1",
        "iZ8vb69v6s60nfnp50dd1dZ:297:305 [0] NCCL INFO Channel 00/04 :    0   1",
        "7502d6c5484e:1025:1025 [3] NCCL INFO Trees [0] -1/-1/-1->1->0 [1] 0/-1/-1->1->-1",
        "7502d6c5484e:743:743 [2] NCCL INFO PROFILER/Plugin: Could not find: libnccl-profiler.so. ",
        "7502d6c5484e:1025:1275 [3] NCCL INFO [Proxy Service] Device 3 CPU core 126",
        "node5:236:236 [2] NCCL INFO Bootstrap : Using bond0:10.0.0.3<0>",
        "iZ8vb69v6s60nfnp50dd1dZ:297:297 [0] NCCL INFO NET/IB : No device found.",
        "node5:236:300 [2] NCCL INFO socketPollConnect to 10.0.0.4<56849> failed with error Connection refused, retrying",
    ],
)
def test_lines_without_events(text: str) -> None:
    assert parse_text(text) == []


def test_issue_3820_block() -> None:
    text = "\n".join(
        [
            "[2025-02-24 14:09:34 TP12] sglang is using nccl==2.21.5",
            "node5:236:236 [2] NCCL INFO cudaDriverVersion 12080",
            "node5:236:236 [2] NCCL INFO Bootstrap : Using bond0:10.0.0.3<0>",
        ]
    )
    assert [(ev.type, ev.engine) for ev in parse_text(text)] == [("nccl_version", "sglang")]


def test_issue_360_block() -> None:
    text = "\n".join(
        [
            "iZ8vb69v6s60nfnp50dd1dZ:297:297 [0] NCCL INFO Bootstrap : Using [0]eth0:172.26.10.27<0>",
            "iZ8vb69v6s60nfnp50dd1dZ:297:297 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using "
            "internal implementation",
            "iZ8vb69v6s60nfnp50dd1dZ:297:297 [0] NCCL INFO NET/IB : No device found.",
            "iZ8vb69v6s60nfnp50dd1dZ:297:297 [0] NCCL INFO NET/Socket : Using [0]eth0:172.26.10.27<0>",
            "iZ8vb69v6s60nfnp50dd1dZ:297:297 [0] NCCL INFO Using network Socket",
            "NCCL version 2.7.8+cuda10.0",
            "iZ8vb69v6s60nfnp50dd1dZ:297:305 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 4.",
            "iZ8vb69v6s60nfnp50dd1dZ:297:305 [0] NCCL INFO Channel 00/04 :    0   1",
            "iZ8vb69v6s60nfnp50dd1dZ:297:305 [0] NCCL INFO threadThresholds 8/8/64 | 16/8/64 | 8/8/64",
        ]
    )
    events = parse_text(text)
    assert [(ev.type, ev.line) for ev in events] == [
        ("nccl_info", 5),
        ("nccl_version", 6),
        ("engine_version", 6),
        ("nccl_env", 7),
    ]


# --- the captured 2xH200 run and the real-world excerpts --------------------------------------------


def _parse_file(path: Path) -> tuple[list[EventBase], EventStream]:
    lines = enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
    stream = EventStream(str(path), lines)
    return list(stream), stream


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_device_capture_p2p_disabled() -> None:
    events, stream = _parse_file(CORPUS / "device" / "nccl-2xh200-p2p-disabled.log")
    assert stream.stats.unrecognised == 0
    transports = [ev for ev in events if isinstance(ev, NcclTransport)]
    assert len(transports) == 8
    assert {ev.detail for ev in transports} == {"SHM/direct/direct"}
    assert {(ev.src_rank, ev.dst_rank) for ev in transports} == {(0, 1), (1, 0)}
    envs = [(ev.name, ev.value) for ev in events if isinstance(ev, NcclEnv)]
    assert envs.count(("NCCL_P2P_DISABLE", "1")) == 2
    networks = [ev for ev in events if isinstance(ev, NcclInfo) and ev.kind == "network"]
    assert [ev.values["network"] for ev in networks] == ["Socket", "Socket"]
    assert stream.detection.engine == "nccl"
    assert stream.detection.version == "2.28.9"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
@pytest.mark.parametrize(
    ("name", "transports", "p2p_disabled"),
    [
        ("nccl-001.log", {"SHM"}, 0),
        ("nccl-003.log", set(), 8),
        ("nccl-005.log", {"SHM"}, 0),
        ("nccl-h01.log", {"P2P"}, 0),
        ("nccl-h03.log", {"P2P"}, 0),
    ],
)
def test_realworld_corpus(name: str, transports: set[str], p2p_disabled: int) -> None:
    events, stream = _parse_file(CORPUS / "realworld" / name)
    assert stream.stats.unrecognised == 0
    assert {ev.transport for ev in events if isinstance(ev, NcclTransport)} == transports
    assert sum(1 for ev in events if isinstance(ev, NcclInfo) and ev.kind == "p2p-disabled") == p2p_disabled


@pytest.mark.parametrize(
    ("grammar", "sample"),
    [(g, s) for g in nccl.GRAMMARS for s in g.samples],
    ids=[f"{g.name}-{i}" for g in nccl.GRAMMARS for i, _ in enumerate(g.samples)],
)
def test_grammar_samples(grammar: Grammar, sample: str) -> None:
    line = parse_envelope("sample", 1, sample)
    assert any(k in line.message for k in grammar.keywords)
    assert grammar.parse(line, ParseContext(source="sample")) is not None
