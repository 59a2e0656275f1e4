"""profile -> Deployment on the story fixture, and what is reported missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.facts import Profile
from logdoctor.perf.adapter import deployment_from_profile, params_from_name
from logdoctor.perf.hardware import load_hardware
from logdoctor.perf.model import GIB, expected
from logdoctor.pipeline.run import LineSource, parse_sources, profile_of

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


def _profile(path: Path) -> Profile:
    lines = path.read_text(encoding="utf-8").splitlines()
    return profile_of(parse_sources([LineSource(path.name, list(enumerate(lines, 1)))]))


@pytest.fixture(scope="module")
def story() -> Profile:
    return _profile(STORY)


def test_story_with_gpu_flag(story: Profile) -> None:
    inputs = deployment_from_profile(story, gpu="RTX A6000")
    dep = inputs.deployment
    assert dep is not None
    assert dep.gpu.name == "RTX A6000"
    assert dep.tp == 2 and dep.pp == 1
    assert dep.weights_bytes_per_gpu == pytest.approx(27.41 * GIB)
    assert dep.link == "p2p-off"  # `Custom allreduce is disabled because your platform lacks GPU P2P capability`
    assert dep.custom_allreduce is False
    assert dep.cuda_graphs is True
    assert dep.batch == 1
    assert dep.spec is not None and dep.spec.k == 15 and dep.spec.method == "dflash"
    assert dep.spec.position_acceptance is not None and len(dep.spec.position_acceptance) == 15
    assert dep.kv_bytes_per_token_per_gpu == pytest.approx(6.12 * GIB / 41472)
    assert inputs.measured_per_request == pytest.approx(18.15, abs=0.2)
    missing = {m.what: m.how for m in inputs.unknown}
    assert "layers" in missing and "config.json" in missing["layers"]
    assert "GPU" not in missing

    table = load_hardware()
    e = expected(dep, table, measured_per_request=inputs.measured_per_request)
    # 29.4 GB a GPU at 768 GB/s x 0.88 is 22.6 tok/s without speculation; tau 1.29 from the per-position rates
    assert e.tokens_per_step == pytest.approx(1.294, abs=0.01)
    # vLLM's measured 0.85 ms a drafted token x 15 on top of the bytes: below the 24.7 of plain decode
    assert 20 < e.per_request_tok_s < 24
    assert e.ratio is not None and 0.7 < e.ratio < 0.9


def test_story_layers_add_the_allreduce(story: Profile) -> None:
    table = load_hardware()
    without = deployment_from_profile(story, gpu="RTX A6000").deployment
    with_layers = deployment_from_profile(story, gpu="RTX A6000", layers=64, hidden_size=5120).deployment
    assert without is not None and with_layers is not None
    assert expected(with_layers, table).step_seconds > expected(without, table).step_seconds
    assert all(m.what != "layers" for m in deployment_from_profile(story, gpu="A6000", layers=64).unknown)


def test_story_without_gpu_says_what_to_pass(story: Profile) -> None:
    inputs = deployment_from_profile(story)
    assert inputs.deployment is None
    assert inputs.unknown[0].what == "GPU"
    assert "--gpu NAME" in inputs.unknown[0].how and "logdoctor gpus" in inputs.unknown[0].how


def test_unknown_gpu_name(story: Profile) -> None:
    inputs = deployment_from_profile(story, gpu="Radeon 7")
    assert inputs.deployment is None
    assert str(inputs.unknown[0]).startswith("GPU: unknown GPU: Radeon 7")


def test_healthy_story_reads_custom_allreduce_on() -> None:
    inputs = deployment_from_profile(_profile(STORY.with_name("vllm-mtp-tp2-a6000-healthy.log")), gpu="RTX A6000")
    assert inputs.deployment is not None
    assert inputs.deployment.custom_allreduce is True
    assert inputs.deployment.link == "unknown"
    assert any("nvidia-smi topo -m" in m.how for m in inputs.unknown)


@pytest.mark.parametrize(
    ("model", "total", "active"),
    [
        ("Qwen/Qwen3-8B", 8e9, None),
        ("/root/models/Qwen3.6-27B", 27e9, None),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", 30e9, 3e9),
        ("RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8", 70e9, None),
        ("openai/gpt-oss-120b", 120e9, None),
        ("nvidia/Nemotron-H-56B-Base-8K", 56e9, None),
        ("Qwen/Qwen2.5-0.5B-Instruct", 0.5e9, None),
        ("my-finetune", None, None),
    ],
)
def test_params_from_name(model: str, total: float | None, active: float | None) -> None:
    assert params_from_name(model) == (total, active)


class _Facts:
    """A profile of given facts (what deployment_from_profile reads)."""

    def __init__(self, **facts: object) -> None:
        self.facts = {k.replace("__", "."): v for k, v in facts.items()}

    def value(self, name: str) -> object:
        return self.facts.get(name)

    def has(self, name: str) -> bool:
        return name in self.facts


def test_story_reads_the_architecture_and_takes_the_drafter_out(story: Profile) -> None:
    assert story.value("model.architecture") == "Qwen3_5ForConditionalGeneration"
    shape = load_hardware().model_shape("Qwen3.6-27B")
    assert shape is not None
    head = shape[1].lm_head_bytes_per_gpu(2)
    assert head is not None and head == pytest.approx(248320 * 5120 * 2 / 2)
    inputs = deployment_from_profile(story, gpu="RTX A6000", layers=64, hidden_size=5120, lm_head_bytes_per_gpu=head)
    dep = inputs.deployment
    assert dep is not None
    # vLLM counted the DFlash drafter's 5 layers in `Model loading took`: a target step does not read them
    held = 27.41 * GIB
    assert dep.unread_bytes_per_gpu == pytest.approx(5 * (held - head) / (64 + 5))
    assert any("multimodal" in d for d in inputs.derived)
    assert any(d.startswith("parameters from the load") for d in inputs.derived)


def test_method_from_the_drafters_architecture_and_moe_without_an_active_count() -> None:
    facts = _Facts(
        model="/m/Some-Dense",
        model__weights_gib=20.0,
        model__architecture="SomeForCausalLM",
        spec__enabled=True,
        spec__num_tokens=3.0,
        spec__draft_architecture="Qwen3_5MTP",
        spec__acceptance_length=[2.5],
        parallel__tp=1.0,
    )
    inputs = deployment_from_profile(facts, gpu="H100 SXM")
    assert inputs.deployment is not None and inputs.deployment.spec is not None
    assert inputs.deployment.spec.method == "mtp"
    # a MoE whose active share nothing gives: no deployment, so no bound, and the reason first
    facts.facts["model"], facts.facts["model.architecture"] = "/m/Some-MoE", "SomeMoeForCausalLM"
    inputs = deployment_from_profile(facts, gpu="H100 SXM")
    assert inputs.deployment is None
    assert inputs.unknown[0].what == "MoE active parameters"
    assert inputs.unknown[0].how.startswith("no bound: active parameters of /m/Some-MoE unknown")
    # with the active count in the name it has one
    facts.facts["model"] = "/m/Some-30B-A3B"
    assert deployment_from_profile(facts, gpu="H100 SXM").deployment is not None


def test_draft_model_size_from_its_name() -> None:
    facts = _Facts(
        model="meta-llama/Llama-3.1-70B-Instruct",
        model__weights_gib=70.0,
        engine="vllm",
        spec__enabled=True,
        spec__method="draft_model",
        spec__num_tokens=4.0,
        spec__draft_model="meta-llama/Llama-3.2-1B-Instruct",
        parallel__tp=2.0,
    )
    inputs = deployment_from_profile(facts, gpu="H100 SXM")
    dep = inputs.deployment
    assert dep is not None and dep.spec is not None
    assert dep.spec.drafter_bytes_per_gpu == pytest.approx(1e9 * 2 / 2)
    assert dep.unread_bytes_per_gpu == pytest.approx(1e9)  # loaded with the target, not read by its step


def test_drafter_architecture_is_the_second_resolved_architecture() -> None:
    # a real log (DGX Spark, Laguna-S-2.1 with its DFlash drafter): vLLM resolves the drafter's config second
    profile = _profile(ROOT / "fixtures" / "logs" / "realworld" / "vllm-r004.log")
    assert profile.value("model.architecture") == "LagunaForCausalLM"
    assert profile.value("spec.draft_architecture") == "DFlashLagunaForCausalLM"
