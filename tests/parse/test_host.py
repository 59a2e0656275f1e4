"""Host facts: `nvidia-smi topo -m`, `topo -p2p`, `--query-gpu` CSV (catalogue/sglang-nccl.md §12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.events import GpuInfo, GpuP2P, GpuTopology, HostInfo
from logdoctor.parse.pipeline import EventStream, parse_text

CORPUS = Path("/work/shared/corpus")

# VERBATIM (2x RTX 5090 on Threadripper, club-3090#1229)
TOPO_5090 = """\
\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tPHB\t0-63\t0\t\tN/A
GPU1\tPHB\t X \t0-63\t0\t\tN/A

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NV#  = Connection traversing a bonded set of # NVLinks"""

# VERBATIM shape of the captured 2xH200 output: ANSI underline on the header
TOPO_H200 = "\t\x1b[4mGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\nGPU0\t X \tNV18\t0-31\t0\t\tN/A\nGPU1\tNV18\t X \t0-31\t0\t\tN/A\n"

# RENDERED: 4 GPUs with NICs and a NIC legend; and the same pasted with tabs turned into spaces
TOPO_NICS = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tNV18\tNV18\tPIX\tSYS\t0-47,96-143\t0\t\tN/A
GPU1\tNV18\t X \tNV18\tNV18\tNODE\tSYS\t0-47,96-143\t0\t\tN/A
GPU2\tNV18\tNV18\t X \tNV18\tSYS\tPIX\t48-95,144-191\t1\t\tN/A
GPU3\tNV18\tNV18\tNV18\t X \tSYS\tNODE\t48-95,144-191\t1\t\tN/A
NIC0\tPIX\tNODE\tSYS\tSYS\t X \tSYS\t\t\t\t
NIC1\tSYS\tSYS\tPIX\tNODE\tSYS\t X \t\t\t\t

Legend:

  X    = Self

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1"""

TOPO_SPACES = """\
        GPU0    GPU1    GPU2    CPU Affinity    NUMA Affinity
GPU0     X      SYS     SYS     0-15            0
GPU1    SYS      X      SYS     0-15            0
GPU2    SYS     SYS      X      16-31           1
"""

# VERBATIM (same issue): consumer GPUs report P2P unsupported
P2P_GNS = """\
 \tGPU0\tGPU1\t
 GPU0\tX\tGNS\t
 GPU1\tGNS\tX\t

Legend:

  X    = Self
  OK   = Status Ok
  GNS  = GPU not supported"""

QUERY_CSV = """\
index, name, pci.bus_id, memory.total [MiB], driver_version
0, NVIDIA H200, 00000000:00:06.0, 143771 MiB, 580.159.04
1, NVIDIA H200, 00000000:00:07.0, 143771 MiB, 580.159.04"""


def test_topo_pcie_only() -> None:
    (event,) = parse_text(TOPO_5090)
    assert isinstance(event, GpuTopology)
    assert event.links == {"0-1": "PHB"}
    assert event.gpus == 2
    assert (event.line, event.end_line, event.engine) == (1, 3, "host")


def test_topo_nvlink_with_ansi_header() -> None:
    (event,) = parse_text(TOPO_H200)
    assert isinstance(event, GpuTopology)
    assert event.links == {"0-1": "NV18"}


def test_topo_with_nics_keeps_gpu_pairs_only() -> None:
    (event,) = parse_text(TOPO_NICS)
    assert isinstance(event, GpuTopology)
    assert event.gpus == 4
    assert event.links == {f"{i}-{j}": "NV18" for i in range(4) for j in range(i + 1, 4)}
    assert event.end_line == 5


def test_topo_pasted_with_spaces() -> None:
    (event,) = parse_text(TOPO_SPACES)
    assert isinstance(event, GpuTopology)
    assert event.links == {"0-1": "SYS", "0-2": "SYS", "1-2": "SYS"}


def test_topo_under_check_env_title() -> None:
    events = parse_text("NVIDIA Topology: \n" + TOPO_5090 + "\nHypervisor vendor:: KVM")
    assert [ev.type for ev in events] == ["gpu_topology", "host_info"]
    info = events[1]
    assert isinstance(info, HostInfo)
    assert (info.kind, info.value) == ("hypervisor", "KVM")


def test_topo_cut_short_is_still_reported() -> None:
    text = (
        "\tGPU0\tGPU1\tGPU2\tCPU Affinity\nGPU0\t X \tPIX\tSYS\t0-7\nGPU1\tPIX\t X \tSYS\t0-7\n[2025-01-01 10:00:00] x"
    )
    events = parse_text(text)
    assert [ev.type for ev in events] == ["gpu_topology"]
    topo = events[0]
    assert isinstance(topo, GpuTopology)
    assert topo.links == {"0-1": "PIX", "0-2": "SYS", "1-2": "SYS"}


def test_p2p_not_supported() -> None:
    (event,) = parse_text(P2P_GNS)
    assert isinstance(event, GpuP2P)
    assert event.status == {"0-1": "GNS", "1-0": "GNS"}
    assert event.mode == "unknown"


def test_p2p_mode_from_a_collector_title() -> None:
    events = parse_text("==> nvidia-smi topo -p2p r <==\n" + P2P_GNS)
    (event,) = events
    assert isinstance(event, GpuP2P)
    assert event.mode == "r"


def test_query_gpu_csv() -> None:
    events = parse_text(QUERY_CSV)
    assert [ev.type for ev in events] == ["gpu_info", "gpu_info"]
    first = events[0]
    assert isinstance(first, GpuInfo)
    assert (first.index, first.name, first.memory_mib, first.driver, first.bus_id) == (
        0,
        "NVIDIA H200",
        143771,
        "580.159.04",
        "00000000:00:06.0",
    )
    assert events[1].line == 3


def test_query_gpu_other_field_order() -> None:
    (event,) = parse_text("name, memory.total [MiB], index\nNVIDIA GeForce RTX 4090, 24564 MiB, 3")
    assert isinstance(event, GpuInfo)
    assert (event.index, event.name, event.memory_mib, event.driver) == (3, "NVIDIA GeForce RTX 4090", 24564, None)


def test_one_line_facts() -> None:
    events = parse_text(
        "GPU 0: NVIDIA H200 (UUID: GPU-3c1e0a7b-1111-2222-3333-444455556666)\n"
        "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |"
    )
    assert [(ev.type, getattr(ev, "name", None)) for ev in events] == [
        ("gpu_info", "NVIDIA H200"),
        ("host_info", "nvidia"),
        ("host_info", "cuda"),
    ]
    assert isinstance(events[1], HostInfo)
    assert events[1].value == "580.159.04"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
@pytest.mark.parametrize(
    ("name", "types"),
    [
        ("nvidia-smi-topo-m.txt", ["gpu_topology"]),
        ("nvidia-smi-topo-p2p.txt", ["gpu_p2p"]),
        ("nvidia-smi-query.csv", ["gpu_info", "gpu_info"]),
    ],
)
def test_device_captures(name: str, types: list[str]) -> None:
    path = CORPUS / "device" / name
    stream = EventStream(str(path), enumerate(path.read_text(encoding="utf-8").split("\n"), start=1))
    events = list(stream)
    assert [ev.type for ev in events] == types
    assert stream.stats.unrecognised == 0
    if isinstance(events[0], GpuTopology):
        assert events[0].links == {"0-1": "NV18"}
    if isinstance(events[0], GpuP2P):
        assert events[0].status == {"0-1": "OK", "1-0": "OK"}
