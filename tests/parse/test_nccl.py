"""NCCL grammars, fed through the whole pipeline with the lines of catalogue/sglang-nccl.md §11."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from logdoctor.events import EventBase, NcclEnv, NcclInfo, NcclTransport
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


def test_transport_keeps_the_rank_process() -> None:
    event = only("tj5-sc-ai-h800r-dev01:533:1765 [2] NCCL INFO Channel 07 : 2[6] -> 3[7] via SHM/direct/direct")
    assert event.process is not None
    assert (event.process.host, event.process.pid, event.process.device) == ("tj5-sc-ai-h800r-dev01", 533, 2)


# --- §11.2 versions, §11.4 environment, §11.5 summaries, §11.6 warnings --------------------------------


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
