"""MoE experts computed on the CPU (SGLang's KTransformers integration), SGLang's own words when a child process
died without a traceback, and a vLLM stats interval whose iteration timer says no step ran.

The real logs are fixtures/logs/realworld8 (sglang-b204, sglang-b206, vllm-b102); the lines below marked
constructed follow the engines' format strings.
"""

from __future__ import annotations

from pathlib import Path

from tests.facts import helpers

REALWORLD8 = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld8"

# Constructed: a server_args dump of a KTransformers build, keys as sglang/srt/server_args.py names them.
KT_DUMP = (
    "[2026-08-27 03:51:50] server_args=ServerArgs(model_path='/models/Qwen3-30B-A3B-FP8', tp_size=1, "
    "cpu_offload_gb=0, kt_weight_path='/models/Qwen3-30B-A3B-INT4-CPU', kt_method='AMXINT4', kt_cpuinfer=96, "
    "kt_threadpool_count=2, kt_num_gpu_experts=0, disable_cuda_graph=True)"
)
PLAIN_DUMP = (
    "[2026-08-27 03:51:50] server_args=ServerArgs(model_path='/models/Qwen3-30B-A3B-FP8', tp_size=1, "
    "cpu_offload_gb=0, kt_weight_path=None, kt_method='AMXINT4', disable_cuda_graph=True)"
)


def _ranked_causes(path: Path) -> list[str]:
    causes: list[str] = []
    for finding in helpers.findings(path.read_text()):
        if finding.cause not in causes:
            causes.append(finding.cause)
    return causes


def test_kt_weight_path_in_the_dump_puts_experts_on_the_cpu() -> None:
    assert helpers.profile(KT_DUMP).value("offload.cpu_experts") is True
    assert helpers.profile(PLAIN_DUMP).value("offload.cpu_experts") is None


def test_cpu_expert_operators_rank_the_host_memory_first() -> None:
    assert _ranked_causes(REALWORLD8 / "sglang-b204.log")[:2] == ["cpu-offload-or-swap", "cuda-graphs-disabled"]


def test_a_server_whose_scheduler_is_gone_failed() -> None:
    causes = _ranked_causes(REALWORLD8 / "sglang-b206.log")
    assert causes[0] == "engine-failure"
    assert "cpu-offload-or-swap" in causes


def test_a_normal_process_tree_teardown_is_no_failure() -> None:
    # Constructed: the shutdown path calls kill_process_tree on the children only (include_parent=False).
    text = "[2026-08-27 04:10:00] kill_process_tree called: parent_pid=7680, include_parent=False, pid=7680"
    assert not [f for f in helpers.findings(text) if f.cause == "engine-failure"]


def test_an_interval_without_an_iteration_while_requests_run_is_a_stall() -> None:
    assert _ranked_causes(REALWORLD8 / "vllm-b102.log")[:2] == ["engine-failure", "kv-cache-pressure"]


# Constructed: vLLM's per-graph DEBUG load lines and the INFO line that ends the load (backends.py).
GRAPH_LOADS = [
    "DEBUG 07-01 21:11:24 [backends.py:123] Directly load the 0-th graph for shape 1 from inductor via handle "
    "('fn7', '/root/.cache/vllm/torch_compile_cache/469366c8cf/rank_0_0/inductor_cache/x3/cx37.py')",
    "INFO 07-01 21:11:24 [backends.py:167] Directly load the compiled graph(s) for shape 1 from the cache, took 4.428 s",
    "DEBUG 07-01 21:20:33 [backends.py:123] Directly load the 28-th graph for shape 1 from inductor via handle "
    "('fhu', '/root/.cache/vllm/torch_compile_cache/250015fb60/rank_0_0/inductor_cache/cd/ccdq.py')",
]


def test_a_compile_cache_load_is_the_compile_time_and_per_graph_lines_bound_no_phase() -> None:
    profile = helpers.profile("\n".join(GRAPH_LOADS))
    assert profile.value("compile.torch_seconds") == 4.428
    assert profile.value("compile.cache_hit") is True
    # the 28-th graph nine minutes later is another run of the paste, not a 549 s start
    assert profile.value("compile.phase_seconds") is None


def test_kernels_built_while_serving_are_counted_and_ranked() -> None:
    assert helpers.profile((REALWORLD8 / "vllm-b003.log").read_text()).value("compile.kernel_builds") == 2
    assert _ranked_causes(REALWORLD8 / "vllm-b003.log")[:1] == ["torch-compile-or-warmup"]
    assert _ranked_causes(REALWORLD8 / "vllm-b104.log")[:1] == ["torch-compile-or-warmup"]
