"""The bound against every labelled corpus log: a real run's measured rate above its bound is a fault of the model.

bench/expected_check.py (`--beaten`) lists them; here the list must stay empty. The story's two MTP logs are
constructed (their rate was drawn around a figure the story reports for another checkpoint) and are not held to it
(docs/expected-performance.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from expected_check import BEATEN_BY, _gpu_in_text, beaten, labelled_logs

from logdoctor.engine.result import Diagnosis
from logdoctor.engine.rules import LoadedRule, load_rules
from logdoctor.perf.bound import median_interval
from logdoctor.perf.hardware import HardwareTable, load_hardware
from logdoctor.perf.model import Deployment
from logdoctor.perf.options import perf_options
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources, profile_of
from logdoctor.report.performance import performance_lines
from tests.perf.test_assess import _Facts

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "fixtures" / "logs"
# gpt-oss-20b (a MoE whose architecture says so, no active count in its name) on a DGX Spark
GPT_OSS = LOGS / "realworld" / "vllm-r006.log"
# Laguna-S-2.1 (a MoE only by the engine's `MoE backend` lines) on a DGX Spark
LAGUNA = LOGS / "realworld" / "vllm-r003.log"
# gpt-oss-120b on 8x B200, a pasted cookbook benchmark: the MoE family only by its name
GPT_OSS_BY_NAME = LOGS / "realworld9" / "sglang-ch12.log"
# Qwen3-8B on one H100: 95 tok/s at 7 running, 4511 at 128, 8592 in an interval that ended with none running
SWEEP = LOGS / "realworld6" / "vllm-r006.log"


@pytest.fixture(scope="module")
def rules() -> list[LoadedRule]:
    return load_rules([], builtin=True)


@pytest.fixture(scope="module")
def table() -> HardwareTable:
    return load_hardware()


def _diagnose(path: Path, rules: list[LoadedRule], gpu: str) -> Diagnosis:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    parsed = parse_sources([LineSource(path.name, list(enumerate(lines, 1)))])
    return diagnose_parsed(parsed, rules, perf=perf_options(gpu))[0]


def test_no_real_log_beats_its_bound(table: HardwareTable, rules: list[LoadedRule]) -> None:
    logs = labelled_logs(LOGS)
    assert len(logs) > 300
    found = beaten(table, logs, rules)
    assert not found, f"measured above the bound x {BEATEN_BY}: " + "; ".join(
        f"{r.case} {r.measured} > {r.bound} ({r.note})" for r in found
    )


def test_a_label_that_names_two_gpus_names_none(table: HardwareTable) -> None:
    assert _gpu_in_text(table, "one NVIDIA GPU of about 48 GB: 80-95% of a 48 GB card (A6000, L40S)") is None
    assert _gpu_in_text(table, "2 GPUs of compute capability 8.9 (RTX 4090 / L40 class)") is None
    assert _gpu_in_text(table, "NVIDIA DGX Spark (GB10, 121 GB unified memory)") == "GB10"
    assert _gpu_in_text(table, "one H100 NVL (95 GB)") == "H100 NVL"


@pytest.mark.parametrize(
    ("log", "model", "by", "gpu"),
    [
        (GPT_OSS, "Huihui-gpt-oss-20b", "GptOssForCausalLM", "GB10"),
        (LAGUNA, "Laguna-S-2.1", "MoE kernel", "GB10"),
        (GPT_OSS_BY_NAME, "openai/gpt-oss-120b", "its name gpt-oss-120b", "B200"),
    ],
)
def test_moe_without_its_active_count_gets_no_bound(
    rules: list[LoadedRule], log: Path, model: str, by: str, gpu: str
) -> None:
    d = _diagnose(log, rules, gpu)
    p = d.performance
    assert p is not None and not p.known and p.ratio is None and p.expected_per_request_tok_s is None
    first = p.unknown[0]
    assert first.what == "MoE active parameters"
    assert first.how.startswith("no bound: active parameters of ") and model in first.how and by in first.how
    lines = performance_lines(d)
    assert lines is not None and "no bound: active parameters of" in lines.headline
    assert "expected <=" not in d.verdict.summary


def test_moe_with_its_active_count_in_the_name_keeps_its_bound(rules: list[LoadedRule]) -> None:
    # Gemma-4-26B-A4B INT4 on a DGX Spark: 4e9 of 26e9 active from the name
    p = _diagnose(LOGS / "realworld" / "vllm-rh08.log", rules, "GB10").performance
    assert p is not None and p.known and p.ratio is not None and 0.5 <= p.ratio <= 1.0
    assert any("4e9 of 26e9 parameters active" in d for d in p.derived)


def test_aggregate_is_compared_at_its_own_intervals_batch(rules: list[LoadedRule]) -> None:
    p = _diagnose(SWEEP, rules, "H100 SXM").performance
    assert p is not None and p.known and p.basis == "aggregate"
    # a rate of the log with the running count of the same stats line, not the median rate over the median batch
    assert (p.measured_aggregate_tok_s, p.batch) in {(95.1, 7), (4511.0, 128)}
    assert p.ratio is not None and p.ratio < 1.0
    assert p.summary.startswith(f"{p.measured_aggregate_tok_s:.0f} tok/s aggregate at batch {p.batch}, expected <=")
    # the summary's bound is the section's own figure at that batch, not measured over the rounded ratio
    assert p.expected_aggregate_tok_s is not None and f"expected <= {p.expected_aggregate_tok_s:.0f} " in p.summary


def test_median_interval_pairs_each_rate_with_its_batch(table: HardwareTable) -> None:
    dep = Deployment(gpu=table.require("H100 SXM"), weights_bytes_per_gpu=16e9)
    facts = _Facts({"throughput.generation": [95.0, 4511.0, 8592.0], "throughput.batch": [7.0, 128.0, 0.0]})
    found = median_interval(facts, dep, table)
    assert found is not None
    ratio, rate, at = found
    # the interval that ended with nothing running says no batch; of the two left, the lower ratio
    assert (rate, at.batch) == (95.0, 7) and 0 < ratio < 1
    assert median_interval(_Facts({"throughput.generation": [10.0], "throughput.batch": [0.0]}), dep, table) is None
    assert median_interval(_Facts({"throughput.generation": [10.0]}), dep, table) is None


def test_gb10_is_in_the_table(table: HardwareTable) -> None:
    found = table.lookup("NVIDIA GB10")
    assert found.gpu is not None and found.gpu.name == "GB10"
    assert found.gpu.memory_bandwidth_gb_s == 273 and found.gpu.memory_gb == 128
    assert table.lookup("DGX Spark").gpu is found.gpu


def test_moe_backend_line_is_a_fact() -> None:
    lines = LAGUNA.read_text(encoding="utf-8").splitlines()
    profile = profile_of(parse_sources([LineSource(LAGUNA.name, list(enumerate(lines, 1)))]))
    assert profile.value("model.moe") is True
    lines = SWEEP.read_text(encoding="utf-8").splitlines()
    assert profile_of(parse_sources([LineSource(SWEEP.name, list(enumerate(lines, 1)))])).value("model.moe") is None
