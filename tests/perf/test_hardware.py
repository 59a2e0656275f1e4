"""The GPU table: lookups by the names nvidia-smi / collect_env print, user overrides, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.errors import ConfigError, ExitStatus
from logdoctor.perf.hardware import HardwareTable, load_hardware, normalise


@pytest.fixture(scope="module")
def table() -> HardwareTable:
    return load_hardware()


REQUIRED = [
    "H200",
    "H100 SXM",
    "H100 PCIe",
    "A100 SXM 40GB",
    "A100 SXM 80GB",
    "A100 PCIe 40GB",
    "A100 PCIe 80GB",
    "A10",
    "A10G",
    "L4",
    "L40S",
    "RTX A6000",
    "RTX 6000 Ada",
    "RTX 3090",
    "RTX 4090",
    "RTX 5090",
    "V100 SXM2",
    "T4",
    "P40",
    "B200",
    "MI300X",
    "GH200 96GB",
]


@pytest.mark.parametrize("name", REQUIRED)
def test_required_gpus_are_in_the_table_with_a_source(table: HardwareTable, name: str) -> None:
    gpu = table.lookup(name).gpu
    assert gpu is not None and gpu.name == name
    assert gpu.source.startswith("https://")
    assert gpu.memory_bandwidth_gb_s > 0 and gpu.memory_gb > 0


@pytest.mark.parametrize(
    ("printed", "name", "bandwidth"),
    [
        ("NVIDIA RTX A6000", "RTX A6000", 768),
        ("NVIDIA H100 80GB HBM3", "H100 SXM", 3350),
        ("NVIDIA H100 PCIe", "H100 PCIe", 2000),
        ("Tesla P40", "P40", 346),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB", 1555),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", 2039),
        ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB", 1935),
        ("NVIDIA GeForce RTX 4090", "RTX 4090", 1008),
        ("nvidia geforce rtx 3090", "RTX 3090", 936),
        ("Tesla V100-SXM2-16GB", "V100 SXM2", 900),
        ("Tesla T4", "T4", 320),
        ("NVIDIA L40S", "L40S", 864),
        ("NVIDIA H200", "H200", 4800),
        ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", 960),
        ("AMD Instinct MI300X", "MI300X", 5300),
        ("NVIDIA GH200 480GB", "GH200 96GB", 4000),
        ("RTX A6000 48GB", "RTX A6000", 768),  # a memory suffix the table does not list
    ],
)
def test_lookup_by_printed_name(table: HardwareTable, printed: str, name: str, bandwidth: float) -> None:
    found = table.lookup(printed)
    assert found.gpu is not None, found.message
    assert found.gpu.name == name
    assert found.gpu.memory_bandwidth_gb_s == bandwidth


def test_unknown_gpu_says_what_to_pass(table: HardwareTable) -> None:
    with pytest.raises(ConfigError, match="unknown GPU: Voodoo"):
        table.require("Voodoo 5 6000")
    found = table.lookup("Voodoo 5 6000")
    assert found.gpu is None
    assert found.message.startswith("unknown GPU: Voodoo 5 6000")
    assert "--gpu" in found.message


def test_normalise_levels() -> None:
    assert normalise("NVIDIA_A100-SXM4-40GB") == "nvidia a100 sxm4 40gb"
    assert normalise("NVIDIA GeForce RTX 4090", 1) == "rtx 4090"
    assert normalise("NVIDIA H100 80GB HBM3", 2) == "h100"


def test_dtypes_without_hardware_support_are_null(table: HardwareTable) -> None:
    assert table.require("V100 SXM2").bf16_tflops is None  # Volta has no BF16
    assert table.require("A100 SXM 80GB").fp8_tflops is None  # FP8 arrived with Ada/Hopper
    assert table.require("H100 SXM").fp8_tflops == 1979
    assert table.require("RTX 4090").nvlink is None
    assert table.require("H200").tensor_tflops(1) == 1979
    assert table.require("H200").tensor_tflops(0.5) == 989  # 4-bit weights run BF16 GEMMs


def test_pcie_bandwidth(table: HardwareTable) -> None:
    a6000 = table.require("RTX A6000")
    assert table.pcie_gb_s(a6000.pcie) == pytest.approx(31.5, abs=0.1)
    assert table.pcie_gb_s(table.require("H200").pcie) == pytest.approx(63.0, abs=0.1)


USER_FILE = """\
gpus:
  - name: RTX A6000
    aliases: ["NVIDIA RTX A6000"]
    memory_gb: 48
    memory_bandwidth_gb_s: 700
    bf16_tflops: 155
    fp8_tflops: null
    nvlink: null
    pcie: {generation: 4, lanes: 8}
    source: "measured on our box with nvbandwidth"
  - name: Lab GPU X
    aliases: ["ACME X1"]
    memory_gb: 16
    memory_bandwidth_gb_s: 500
    bf16_tflops: 50
    fp8_tflops: null
    nvlink: null
    pcie: {generation: 3, lanes: 16}
    source: "https://example.invalid/x1"
constants:
  bandwidth_fraction: {value: 0.8, source: "our own stream test"}
"""


def test_user_file_overrides_and_extends(tmp_path: Path) -> None:
    path = tmp_path / "hw.yaml"
    path.write_text(USER_FILE, encoding="utf-8")
    table = load_hardware([path])
    a6000 = table.lookup("NVIDIA RTX A6000").gpu
    assert a6000 is not None and a6000.memory_bandwidth_gb_s == 700 and a6000.nvlink is None
    x1, h200 = table.lookup("ACME X1").gpu, table.lookup("H200").gpu
    assert x1 is not None and x1.name == "Lab GPU X"
    assert table.constant("bandwidth_fraction").value == 0.8
    assert h200 is not None and h200.memory_bandwidth_gb_s == 4800  # the rest of the built-in table stays
    assert sum(1 for g in table.gpus if g.name == "RTX A6000") == 1


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("gpus:\n  - name: X\n    memory_gb: 1\n    bandwith: 3\n", 4, "bandwith"),
        ("gpus:\n  - name: X\n    memory_gb: lots\n", 3, "memory_gb"),
        ("gpus: [\n", 2, "invalid YAML"),
        ("- just\n- a list\n", 1, "mapping"),
        ("pcie:\n  '7': {per_lane_gb_s: 15}\n", 2, "source"),
    ],
)
def test_bad_user_file_is_one_line_with_file_and_line(tmp_path: Path, text: str, line: int, words: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_hardware([path])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}:"), message
    assert words in message
    assert info.value.exit_status == ExitStatus.USAGE


def test_missing_user_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read hardware file"):
        load_hardware([tmp_path / "nope.yaml"])
