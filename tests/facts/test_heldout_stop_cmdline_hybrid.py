"""Facts and rules from the held-out accuracy work: the stop marker, pasted command lines, the
CPU device in the engine dump, and what a hybrid's disabled prefix cache costs."""

from __future__ import annotations

from logdoctor.facts import build_profile
from logdoctor.parse.pipeline import parse_text
from tests.facts import helpers

SIGTERM = "(EngineCore pid=7) INFO 08-21 09:45:37 [core.py:1214] [shutdown] EngineCore: trigger received signal=SIGTERM"
TEARDOWN_OOM = (
    "(EngineCore pid=7) ERROR 08-21 09:45:38 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 21.75 MiB is free."
)


def _stats(prompt: float, generated: float) -> str:
    return (
        "(APIServer pid=1) INFO 08-01 21:34:49 [loggers.py:271] Engine 000: Avg prompt throughput: "
        f"{prompt} tokens/s, Avg generation throughput: {generated} tokens/s, Running: 1 reqs, Waiting: 0 reqs, "
        "GPU KV cache usage: 2.1%, Prefix cache hit rate: 0.0%"
    )


def test_an_error_after_sigterm_is_teardown_and_before_it_is_a_failure() -> None:
    after = _stats(0, 30) + "\n" + SIGTERM + "\n" + TEARDOWN_OOM
    assert helpers.profile(after).value("failure.shutdown_only") is True
    assert "engine-failed" not in {f.rule for f in helpers.findings(after)}
    before = _stats(0, 30) + "\n" + TEARDOWN_OOM + "\n" + SIGTERM
    assert helpers.profile(before).value("failure.shutdown_only") is False
    assert "engine-failed" in {f.rule for f in helpers.findings(before)}


def test_a_stop_is_not_counted_as_a_failure_and_no_failure_line_is_zero() -> None:
    profile = helpers.profile(_stats(0, 30) + "\n" + SIGTERM)
    assert profile.value("failure.count") == 0
    assert "failure.kinds" not in profile.facts


def test_a_pasted_command_line_sets_the_facts_its_flags_say() -> None:
    text = "vllm serve Qwen/Qwen2.5-1.5B \\\n    --tensor-parallel-size 2 \\\n    --enforce-eager\n" + _stats(0, 128)
    profile = helpers.profile(text)
    assert profile.value("cuda_graphs.enabled") is False
    assert profile.value("parallel.tp") == 2
    assert "eager-decode" in {f.rule for f in helpers.findings(text)}


def test_sglang_command_line_disable_cuda_graph() -> None:
    text = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 --disable-cuda-graph"
    profile = build_profile(parse_text(text, "t.log", "sglang"), engine="sglang")
    assert profile.value("cuda_graphs.enabled") is False
    assert profile.value("parallel.tp") == 2


def test_device_config_cpu_is_the_cpu_platform() -> None:
    text = (
        "(EngineCore pid=25) INFO 08-18 02:57:03 [core.py:114] Initializing a V1 LLM engine (v0.25.1) with config: "
        "model='facebook/opt-125m', enforce_eager=True, device_config=cpu, seed=0"
    )
    profile = helpers.profile(text)
    assert profile.value("platform") == "cpu"
    assert "eager-decode" not in {f.rule for f in helpers.findings(text)}


def test_hybrid_prefix_caching_off_costs_with_long_prompts_only() -> None:
    hybrid = (
        "(EngineCore pid=1) INFO 08-01 10:00:00 [core.py:100] Initializing a V1 LLM engine (v0.25.1) with config: "
        "model='Qwen/Qwen3.6-27B', enable_prefix_caching=False, seed=0\n"
        "(EngineCore pid=1) INFO 08-01 10:00:01 [config.py:500] Setting attention block size to 800 tokens to ensure "
        "that attention page size is >= mamba page size.\n"
    )
    chat = hybrid + "\n".join(_stats(60, 50) for _ in range(5))
    agent = hybrid + "\n".join(_stats(4000, 50) for _ in range(5))
    assert helpers.profile(chat).value("throughput.prompt_ratio") == 1.2
    assert helpers.profile(agent).value("throughput.prompt_ratio") == 80.0

    def score(text: str) -> int:
        return max((f.score for f in helpers.findings(text) if f.rule == "hybrid-prefix-caching-off"), default=0)

    assert score(chat) < 25 < 45 < score(agent)


def test_autoawq_fallback_fix_is_not_the_quantization_flag() -> None:
    """vLLM 0.33 chooses AutoAWQ's kernel itself: `--quantization awq_marlin` is no fix there."""
    text = (
        "(Worker_TP0 pid=226) WARNING 11-30 10:00:05 [auto_awq.py:325] Layer 'model.layers.0.self_attn.qkv_proj' is "
        "not supported by AutoAWQMarlin. Falling back to unoptimized AWQ kernels."
    )
    (finding,) = [f for f in helpers.findings(text) if f.rule == "slow-quant-kernel"]
    fixes = " ".join(finding.fix)
    assert "awq_marlin" not in fixes
    assert "AutoAWQ" in fixes
    forced = (
        "INFO 06-19 06:04:52 gptq_marlin.py:137] Detected that the model can run with gptq_marlin, however you "
        "specified quantization=gptq explicitly, so forcing gptq. Use quantization=gptq_marlin for faster inference"
    )
    (finding,) = [f for f in helpers.findings(forced) if f.rule == "slow-quant-kernel"]
    assert any("gptq_marlin" in fix for fix in finding.fix)


def test_gloo_is_normal_on_the_cpu_and_a_problem_for_gpu_tp() -> None:
    gloo = (
        "(Worker_TP0 pid=226) WARNING 11-30 10:00:06 [parallel_state.py:1942] Distributed backend nccl is not "
        "available; falling back to gloo."
    )
    tp2 = (
        "(APIServer pid=1) INFO 11-30 10:00:00 [startup.py:160] non-default args: {'model': 'm', "
        "'tensor_parallel_size': 2}\n" + gloo
    )
    assert "tp-over-gloo" in {f.rule for f in helpers.findings(tp2)}
    cpu = (
        "(EngineCore pid=25) INFO 08-18 02:57:03 [core.py:114] Initializing a V1 LLM engine (v0.25.1) with config: "
        "model='m', tensor_parallel_size=2, device_config=cpu, seed=0\n" + gloo
    )
    assert "tp-over-gloo" not in {f.rule for f in helpers.findings(cpu)}
