"""Environment dumps (logdoctor/inputs/env): real collect_env / check_env pastes and a captured nvidia-smi -q become
host facts, read beside a log in one command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from logdoctor.events import EventBase, GpuInfo, HostInfo, NcclEnv
from logdoctor.facts import build_profile
from logdoctor.parse.pipeline import EventStream, parse_text
from logdoctor.perf.adapter import deployment_from_profile

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "fixtures" / "inputs" / "env"


def events_of(name: str) -> list[EventBase]:
    return parse_text((ENV / name).read_text(encoding="utf-8"), source=name)


def facts_of(*names: str) -> dict[str, Any]:
    events = [e for name in names for e in events_of(name)]
    return {k: v.value for k, v in build_profile(events).facts.items()}


# file -> facts its content must give (every file is a verbatim excerpt or capture, fixtures/inputs/README.md)
REAL: dict[str, dict[str, Any]] = {
    "vllm-collect-env-9293.txt": {
        "gpu.name": "NVIDIA GeForce RTX 4070 Laptop GPU",
        "gpu.count": 1.0,
        "host.driver": "551.88",
        "host.torch": "2.4.0+cu121",
        "host.cuda_runtime": "12.4.131",
    },
    "vllm-collect-env-10147.txt": {"gpu.name": "Tesla V100S-PCIE-32GB", "gpu.count": 3.0, "host.torch": "2.5.1+cu118"},
    "vllm-collect-env-19607.txt": {"host.vllm": "0.8.5.post1", "topology.pcie_only": False},
    "vllm-collect-env-22372.txt": {"host.vllm": "0.1.dev1+gb4b9813", "topology.pcie_only": False},
    "sglang-check-env-661.txt": {
        "gpu.name": "NVIDIA A100-SXM4-80GB",
        "gpu.count": 2.0,
        "host.driver": "535.54.03",
        "host.cuda_runtime": "12.2",
        "host.torch": "2.3.0+cu121",
        "host.sglang": "0.1.21",
        "host.vllm": "0.5.1",
        "topology.pcie_only": False,
    },
    "sglang-check-env-18943.txt": {
        "gpu.name": "NVIDIA B200",
        "gpu.count": 8.0,
        "host.driver": "580.95.05",
        "host.sglang": "0.0.0.dev1+gd3bae71e3",
        "topology.pcie_only": False,
    },
    "sglang-check-env-1310.txt": {"gpu.name": "NVIDIA RTX A6000", "gpu.count": 8.0, "topology.pcie_only": True},
    "nvidia-smi-q-h200-captured.txt": {
        "gpu.name": "NVIDIA H200",
        "gpu.count": 1.0,
        "gpu.memory_gib": 140.4,
        "gpu.pcie_generation": 5.0,
        "gpu.pcie_width": 16.0,
        "gpu.pcie_width_max": 16.0,
        "gpu.persistence_mode": True,
        "host.driver": "580.159.04",
        "host.cuda": "13.0",
    },
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_dumps_give_host_facts(name: str) -> None:
    facts = facts_of(name)
    for fact, value in REAL[name].items():
        assert facts.get(fact) == value, (fact, facts.get(fact))


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_dumps_leave_no_line_not_understood(name: str) -> None:
    lines = list(enumerate((ENV / name).read_text(encoding="utf-8").split("\n"), start=1))
    stream = EventStream(name, lines)
    assert list(stream)
    assert stream.stats.unrecognised == 0, stream.stats.unrecognised_samples


def test_nvidia_smi_q_captured_on_an_h200() -> None:
    (gpu,) = [e for e in events_of("nvidia-smi-q-h200-captured.txt") if isinstance(e, GpuInfo)]
    assert gpu.model_dump(include={"index", "name", "memory_mib", "driver", "bus_id"}) == {
        "index": 0,
        "name": "NVIDIA H200",
        "memory_mib": 143771,
        "driver": "580.159.04",
        "bus_id": "00000000:00:06.0",
    }
    assert (gpu.pcie_generation, gpu.pcie_generation_max, gpu.pcie_width, gpu.pcie_width_max) == (5, 5, 16, 16)
    assert (gpu.persistence_mode, gpu.sm_clock_mhz, gpu.sm_clock_max_mhz) == (True, 345, 1980)
    assert (gpu.line, gpu.end_line) == (9, 256)


def test_nvidia_smi_q_of_two_gpus_and_a_log_line_after_it() -> None:
    one = (ENV / "nvidia-smi-q-h200-captured.txt").read_text(encoding="utf-8").split("\n")
    start = one.index("GPU 00000000:00:06.0")
    section = one[start:]
    section = [s for s in section if s.strip()]
    second = ["GPU 00000000:00:07.0"] + [s.replace("Disabled", "Disabled") for s in section[1:]]
    second = [s.replace(": Enabled", ": Disabled") if "Persistence Mode" in s else s for s in second]
    log = "(APIServer pid=1) INFO 05-08 14:02:11 [api_server.py:1] vLLM API server version 0.20.1"
    text = "\n".join([*one[:start], *section, *second, log])
    events = parse_text(text)
    gpus = [e for e in events if isinstance(e, GpuInfo)]
    assert [(g.index, g.bus_id, g.persistence_mode) for g in gpus] == [
        (0, "00000000:00:06.0", True),
        (1, "00000000:00:06.0", False),  # the Bus Id row of the copied section wins over the header
    ]
    assert any(e.type == "engine_version" for e in events)
    facts = {k: v.value for k, v in build_profile(events).facts.items()}
    assert facts["gpu.count"] == 2.0 and facts["gpu.persistence_mode"] is False


def test_pcie_link_facts_take_the_slowest_gpu() -> None:
    text = (ENV / "nvidia-smi-q-h200-captured.txt").read_text(encoding="utf-8")
    narrow = text.replace("GPU 00000000:00:06.0", "GPU 00000000:00:07.0").replace(
        "                Current                                : 16x",
        "                Current                                : 8x",
    )
    narrow = narrow.split("Attached GPUs")[1].split("\n", 1)[1]  # only the GPU section
    facts = {k: v.value for k, v in build_profile(parse_text(text + "\n" + narrow)).facts.items()}
    assert facts["gpu.pcie_width"] == 8.0 and facts["gpu.pcie_width_max"] == 16.0


def test_the_expected_performance_model_gets_the_gpu_from_a_dump() -> None:
    events = events_of("nvidia-smi-q-h200-captured.txt")
    inputs = deployment_from_profile(build_profile(events))
    assert not [m for m in inputs.unknown if m.what == "GPU"]
    assert any("H200" in line for line in inputs.derived)


def test_environment_variables_and_nccl_env() -> None:
    text = (
        "==============================\n     Environment Variables\n==============================\n"
        "NCCL_P2P_DISABLE=1\nNCCL_CUMEM_ENABLE=0\nVLLM_ATTENTION_BACKEND=FLASHINFER\nCUDA_VISIBLE_DEVICES=0,1\n"
        "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456\n\nsomething else entirely"
    )
    events = parse_text(text)
    env = [(e.name, e.value) for e in events if isinstance(e, HostInfo) and e.kind == "env"]
    assert env == [
        ("NCCL_P2P_DISABLE", "1"),
        ("NCCL_CUMEM_ENABLE", "0"),
        ("VLLM_ATTENTION_BACKEND", "FLASHINFER"),
        ("CUDA_VISIBLE_DEVICES", "0,1"),
        ("HF_TOKEN", "***"),  # masked as the line was read
    ]
    assert [e.name for e in events if isinstance(e, NcclEnv)] == ["NCCL_P2P_DISABLE", "NCCL_CUMEM_ENABLE"]
    facts = {k: v.value for k, v in build_profile(events).facts.items()}
    assert facts["nccl.p2p_disabled_env"] is True
    assert "HF_TOKEN=***" in facts["host.env"]
    assert "abcdefghijklmnop" not in json.dumps(facts)


def test_env_var_lines_outside_a_dump_are_not_read() -> None:
    text = (
        "(APIServer pid=1) WARNING 05-08 14:02:11 [envs.py:1] VLLM_ATTENTION_BACKEND is deprecated\n"
        "NCCL_P2P_DISABLE=1\n"
    )
    events = parse_text(text)
    assert not [e for e in events if isinstance(e, HostInfo | NcclEnv)]


def test_check_env_paste_with_a_secret_on_the_launch_line() -> None:
    # sgl-project/sglang#1310 pasted its launch command (with --api-key) above check_env's output
    name = "sglang-check-env-1310.txt"
    text = (ENV / name).read_text(encoding="utf-8")
    assert "sk-1dwqsdv4r3wef3rvefg34ef1dwRv" in text
    lines = list(enumerate(text.split("\n"), start=1))
    stream = EventStream(name, lines, keep_text=True)
    dumped = " ".join(e.model_dump_json() for e in stream) + repr(stream.texts) + repr(stream.stats)
    assert "1dwqsdv4r3wef3rvefg34ef1dwRv" not in dumped


def test_diagnose_a_log_with_an_env_dump_in_one_command(tmp_path: Path) -> None:
    log = ROOT / "fixtures" / "logs" / "story" / "vllm-mtp-tp2-a6000-healthy.log"
    dump = ENV / "nvidia-smi-q-h200-captured.txt"
    out = subprocess.run(
        [sys.executable, "-m", "logdoctor", "diagnose", str(log), str(dump), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    report = json.loads(out.stdout)
    assert report["engine"]["name"] == "vllm"
    assert report["facts"]["gpu.name"] == "NVIDIA H200"
    assert report["facts"]["host.driver"] == "580.159.04"
    assert [s["name"] for s in report["sources"]] == [str(log), str(dump)]


def test_an_env_dump_alone_is_not_called_not_a_log() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "logdoctor", "diagnose", str(ENV / "sglang-check-env-661.txt"), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(out.stdout)
    assert report["verdict"]["kind"] != "not-a-log"
    assert report["facts"]["gpu.count"] == 2.0


@pytest.mark.parametrize("tabs", [True, False])
def test_nvidia_smi_q_then_topo_m_in_one_file(tabs: bool) -> None:
    smi = (ENV / "nvidia-smi-q-h200-captured.txt").read_text(encoding="utf-8")
    topo = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tNV18\t0-31\t0\t\tN/A\nGPU1\tNV18\t X \t0-31\t0\t\tN/A\n"
    if not tabs:  # pasted with the tabs turned into spaces
        topo = topo.expandtabs(8)
    events = parse_text(smi + topo)
    # the GPU section ends at the matrix's header; its event is handed back at the end of the source
    assert sorted(e.type for e in events if e.type in ("gpu_info", "gpu_topology")) == ["gpu_info", "gpu_topology"]
    facts = {k: v.value for k, v in build_profile(events).facts.items()}
    assert facts["topology.pcie_only"] is False and facts["gpu.memory_gib"] == 140.4
