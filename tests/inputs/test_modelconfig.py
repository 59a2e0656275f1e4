"""A model's config.json beside a log (logdoctor/inputs/modelconfig): real config.json files from a public
repository (fixtures/inputs/modelconfig/README.md) become the shape facts, and the expected-performance model reads
the weights a step reads from them instead of the loaded figure and the model name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logdoctor.inputs.modelconfig.shape import drafter_params, shape_of
from logdoctor.perf.assess import assess
from logdoctor.perf.options import PerfOptions
from logdoctor.pipeline.run import LineSource, Parsed, parse_sources, profile_of

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "fixtures" / "inputs" / "modelconfig"
R004 = ROOT / "fixtures" / "logs" / "realworld2" / "vllm-r004.log"


def _source(path: Path) -> LineSource:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return LineSource(str(path.relative_to(ROOT)), list(enumerate(lines, 1)))


def _parsed(*paths: Path) -> Parsed:
    return parse_sources([_source(p) for p in paths])


def _config(name: str) -> dict[str, object]:
    loaded = json.loads((CONFIGS / name / "config.json").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


@pytest.mark.parametrize(
    ("name", "layers", "params_b", "read_b"),
    [
        # published totals: Llama-3.1-8B 8.03B; Qwen3-8B 8.2B; Qwen3-30B-A3B 30.5B with 3.3B activated (embedding
        # included; a step reads 3.3B - 0.31B embedding); Qwen3-32B 32.8B
        ("Llama-3.1-8B", 32, 8.03, 7.50),
        ("Qwen3-8B", 36, 8.19, 7.57),
        ("Qwen3-30B-A3B", 48, 30.5, 3.04),
        ("Qwen3-32B", 64, 32.8, 31.98),
    ],
)
def test_shape_of_real_configs(name: str, layers: int, params_b: float, read_b: float) -> None:
    shape = shape_of(_config(name))
    assert shape is not None
    assert shape.layers == layers
    assert shape.params == pytest.approx(params_b * 1e9, rel=0.01)
    assert shape.read_params == pytest.approx(read_b * 1e9, rel=0.01)
    assert not shape.tied_embeddings


def test_moe_config_gives_experts() -> None:
    shape = shape_of(_config("Qwen3-30B-A3B"))
    assert shape is not None
    assert (shape.experts, shape.experts_active) == (128, 8)
    assert shape.active_fraction == pytest.approx(0.0996, abs=1e-3)


def test_a_nested_text_config_and_a_drafter() -> None:
    """Qwen3.5-style configs nest the language model under `text_config`; a DFlash drafter names itself (keys of
    z-lab's Qwen3-8B-DFlash-b16 as vllm-project/speculators' DFlashConverter tests give them)."""
    nested = shape_of(
        {
            "architectures": ["Qwen3_5ForConditionalGeneration"],
            "vision_config": {"depth": 27, "hidden_size": 1152},
            "text_config": {
                "model_type": "qwen3_5_text",
                "num_hidden_layers": 64,
                "hidden_size": 5120,
                "vocab_size": 248320,
                "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 16,
                "mtp_num_hidden_layers": 1,
            },
        }
    )
    assert nested is not None
    assert (nested.layers, nested.full_attention_layers, nested.linear_attention_layers) == (64, 16, 48)
    assert nested.vision and nested.mtp_layers == 1
    drafter = shape_of(
        {
            "architectures": ["DFlashDraftModel"],
            "block_size": 16,
            "num_target_layers": 36,
            "dflash_config": {"mask_token_id": 151669, "target_layer_ids": [1, 9, 17, 25, 33]},
            "vocab_size": 151936,
            "hidden_size": 4096,
            "intermediate_size": 12288,
            "num_hidden_layers": 5,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": 128,
        }
    )
    assert drafter is not None
    assert (drafter.drafter, drafter.layers, drafter.drafter_block_size) == ("dflash", 5, 16)
    # five Qwen3-8B-sized layers (attention 42e6 + MLP 151e6 each), without the target's embedding and LM head
    assert drafter_params(drafter) == pytest.approx(5 * 192.9e6, rel=0.01)


def test_not_a_model_config() -> None:
    assert shape_of({"architectures": ["X"], "foo": 1}) is None
    assert shape_of({"num_hidden_layers": 2, "hidden_size": 8}) is None


def test_config_json_becomes_facts_beside_a_log() -> None:
    parsed = _parsed(R004, CONFIGS / "Qwen3-30B-A3B" / "config.json")
    profile = profile_of(parsed)
    assert profile.value("model.layers") == 48
    assert profile.value("model.experts_active") == 8
    assert profile.value("model.read_params") == pytest.approx(3.04e9, rel=0.01)
    assert "config.json" in str(profile.value("model.config_source"))
    # the served log's identity is untouched: the config is a side file of its deployment
    assert profile.value("engine") == "vllm"


def test_the_bound_reads_the_shape_not_the_name() -> None:
    """vllm-r004 (Qwen3-30B-A3B eager on an RTX PRO 6000): with its config.json the weights a step reads come from
    the shape (48 layers' attention, 8 of 128 experts, the LM head: 6.08 GB), not from 3e9 active parameters in the
    name over 30e9."""
    parsed = _parsed(R004, CONFIGS / "Qwen3-30B-A3B" / "config.json")
    _, performance = assess([], profile_of(parsed), [], PerfOptions(gpu="RTX PRO 6000"))
    assert performance is not None
    text = "\n".join(performance.derived)
    assert "from the config.json's shape" in text
    assert "6.08 GB" in text
    assert performance.ratio is not None and 0.5 <= performance.ratio <= 0.9


def test_a_config_of_another_model_is_not_used() -> None:
    """Llama-3.1-8B's config beside a 30B MoE's log: its 16 GB of weights do not match the 61 GB loaded."""
    parsed = _parsed(R004, CONFIGS / "Llama-3.1-8B" / "config.json")
    _, performance = assess([], profile_of(parsed), [], PerfOptions(gpu="RTX PRO 6000"))
    assert performance is not None
    assert not any("from the config.json's shape" in d for d in performance.derived)
    assert any("another model's config" in u.how for u in performance.unknown)


def test_diagnose_with_a_config_json_on_the_command_line() -> None:
    """`logdoctor diagnose LOG config.json --gpu ... --format json`: one deployment, the shape in the working."""
    from click.testing import CliRunner

    from logdoctor.app.cli import main

    config = str(CONFIGS / "Qwen3-30B-A3B" / "config.json")
    result = CliRunner().invoke(main, ["diagnose", str(R004), config, "--gpu", "RTX PRO 6000", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.stdout)
    performance = data["performance"] if "performance" in data else data["deployments"][0]["performance"]
    assert any("from the config.json's shape" in line for line in performance["derived"])
    assert performance["ratio"] == pytest.approx(0.82, abs=0.02)


def test_a_config_json_alone_is_not_a_serving_log() -> None:
    """A config.json by itself has no line of a serving log: diagnose says so, it does not call it healthy."""
    from click.testing import CliRunner

    from logdoctor.app.cli import main

    result = CliRunner().invoke(main, ["diagnose", str(CONFIGS / "Llama-3.1-8B" / "config.json")])
    assert "HEALTHY" not in result.output
    assert "Traceback" not in result.output
