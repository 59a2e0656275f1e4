"""logdoctor/facts/combiners/derived.py: conditions normal for a deployment, quantities from several lines, and the fixes
that use them (real line formats from the fixtures; each test can fail)."""

from __future__ import annotations

import pytest

from logdoctor.facts.combiners.derived import step_cost, verify_cost
from tests.facts import helpers

STATS = (
    "(APIServer pid=23283) INFO 08-01 21:34:49 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 30.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 2.1%, "
    "Prefix cache hit rate: 0.0%"
)
TEARDOWN = """\
(APIServer pid=23283) ERROR 08-01 21:34:51 [async_llm.py:704] AsyncLLM output_handler failed.
(APIServer pid=23283) ERROR 08-01 21:34:51 [async_llm.py:704] vllm.v1.engine.exceptions.EngineDeadError: \
EngineCore encountered an issue. See stack trace (above) for the root cause."""
OOM = (
    "(EngineCore pid=112) ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 21.75 MiB is free."
)


def test_teardown_after_serving_is_not_a_failure() -> None:
    profile = helpers.profile(STATS + "\n" + TEARDOWN)
    assert profile.value("failure.count") == 2
    assert profile.value("failure.shutdown_only") is True
    assert "engine-failed" not in {f.rule for f in helpers.findings(STATS + "\n" + TEARDOWN)}


def test_a_failure_with_its_own_cause_still_counts() -> None:
    text = STATS + "\n" + OOM + "\n" + TEARDOWN
    assert helpers.profile(text).value("failure.shutdown_only") is False
    assert "engine-failed" in {f.rule for f in helpers.findings(text)}


def test_free_request_slots_make_a_small_batch_queue_kv_bound() -> None:
    line = (
        "INFO 02-28 21:48:18 metrics.py:161] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
        "44.9 tokens/s, Running: 2 reqs, Swapped: 0 reqs, Pending: 3 reqs, GPU KV cache usage: 82.1%, "
        "CPU KV cache usage: 0.0%"
    )
    assert helpers.profile(line).value("kv.free_request_slots") == pytest.approx(0.179 * 2 / 0.821, abs=1e-3)
    causes = [f.cause for f in helpers.findings(line)]
    assert causes[:1] == ["kv-cache-pressure"]
    assert "chunked-prefill-or-batching-config" not in causes


BANNER = "(APIServer pid=1) INFO 05-01 14:19:20 [api_server.py:1805] vLLM API server version 0.10.1"
COMPILE = "(EngineCore pid=112) INFO 05-01 14:20:06 [monitor.py:34] torch.compile takes 30.61 s in total"
INIT = (
    "(EngineCore pid=112) INFO 05-01 14:21:06 [core.py:210] init engine (profile, create kv cache, warmup model) "
    "took 90.51 seconds"
)


def test_a_start_that_never_completes() -> None:
    assert helpers.profile(BANNER + "\n" + COMPILE).value("startup.incomplete") is True
    assert helpers.profile(BANNER + "\n" + COMPILE + "\n" + INIT).value("startup.incomplete") is False
    # an excerpt without the start's beginning cannot tell a cut paste from a death
    assert helpers.profile(COMPILE).value("startup.incomplete") is None


def test_an_offline_run_that_captured_its_graphs_and_measured_has_completed_its_start() -> None:
    # real: fixtures/logs/realworld13/vllm-c951.log lines 4, 8-14 (vLLM 0.5.4: no init-engine line, no stats lines)
    banner = (
        "INFO 08-09 13:55:56 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: "
        "model='meta-llama/Meta-Llama-3.1-8B-Instruct', speculative_config=None"
    )
    loaded = "INFO 08-09 13:56:03 model_runner.py:732] Loading model weights took 14.9888 GB"
    captured = "INFO 08-09 13:56:20 model_runner.py:1225] Graph capturing finished in 14 secs."
    result = "Throughput: 13.38 requests/s, 4681.85 tokens/s"
    assert helpers.profile(banner + "\n" + loaded).value("startup.incomplete") is True
    assert helpers.profile(banner + "\n" + loaded + "\n" + captured).value("startup.incomplete") is False
    assert helpers.profile(banner + "\n" + loaded + "\n" + result).value("startup.incomplete") is False


# real: fixtures/logs/realworld6/nccl-r004.log (the parameter line) and realworld6/nccl-rh01.log (the summary)
NCCL_TEST_START = (
    "# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0"
)
NCCL_INIT = "llm207:149:157 [1] NCCL INFO NET/IB : No device found."
NCCL_TEST_DONE = "# Avg bus bandwidth    : 25.0537"


def test_an_nccl_test_that_never_finishes() -> None:
    hung = NCCL_TEST_START + "\n" + NCCL_INIT
    assert helpers.profile(hung).value("nccl.test_unfinished") is True
    assert "nccl-test-unfinished" in {f.rule for f in helpers.findings(hung)}
    assert helpers.profile(hung + "\n" + NCCL_TEST_DONE).value("nccl.test_unfinished") is False
    # a second run that starts after the first one's summary and never ends is the one that hung
    assert helpers.profile(hung + "\n" + NCCL_TEST_DONE + "\n" + hung).value("nccl.test_unfinished") is True
    # constructed: a failure line explains the end (engine-failed covers it)
    failed = hung + "\nllm207: Test NCCL failure common.cu:1005 'unhandled system error'"
    assert helpers.profile(failed).value("nccl.test_unfinished") is False
    # NCCL lines without the test's parameter line are an excerpt: nothing to tell
    assert helpers.profile(NCCL_INIT).value("nccl.test_unfinished") is None


def test_the_only_backend_offered_is_not_a_fallback() -> None:
    only = (
        "(EngineCore_0 pid=1) INFO 08-07 12:00:00 [cuda.py:351] Using TRITON_ATTN attention backend out of "
        "potential backends: ('TRITON_ATTN',)"
    )
    several = only.replace("('TRITON_ATTN',)", "('FLASH_ATTN', 'TRITON_ATTN')")
    assert helpers.profile(only).value("attention.model_required") is True
    assert helpers.profile(several).value("attention.model_required") is False
    assert "vllm-slow-attention-backend" not in {f.rule for f in helpers.findings(only)}
    assert "vllm-slow-attention-backend" in {f.rule for f in helpers.findings(several)}


def test_cpu_platform_without_gpu_signals_is_a_note() -> None:
    cpu = "INFO 06-25 17:38:01 [__init__.py:239] Automatically detected platform cpu."
    assert helpers.profile(cpu).value("platform.gpu_signals") == 0
    (finding,) = [f for f in helpers.findings(cpu) if f.rule == "cpu-platform"]
    assert finding.score < 50
    unspecified = "INFO 04-01 18:01:58 [__init__.py:243] No platform detected, vLLM is running on UnspecifiedPlatform"
    (finding,) = [f for f in helpers.findings(unspecified) if f.rule == "cpu-platform"]
    assert finding.score >= 90


def test_verification_cost_grows_with_batch_past_the_ridge() -> None:
    assert verify_cost(4, 1) == 1.0
    assert verify_cost(4, 600) == pytest.approx(5.0)
    assert step_cost(3, 1) == pytest.approx(1.15)


def test_sglang_graph_size_fix_uses_the_batch_seen() -> None:
    lines = "\n".join(
        f"[2026-05-07 09:17:{i:02d} TP0] Decode batch, #running-req: {n}, #token: 9000, token usage: 0.30, "
        f"cuda graph: {n <= 32}, gen throughput (token/s): 900.00, #queue-req: 0"
        for i, n in enumerate([16, 40, 46, 44, 8])
    )
    (finding,) = [f for f in helpers.findings(lines) if f.rule == "batch-above-graph-size"]
    assert any(fix.startswith("--cuda-graph-max-bs 48 ") for fix in finding.fix), finding.fix
    assert not any("<" in fix for fix in finding.fix)


def test_allreduce_fixes_follow_the_reason() -> None:
    user = (
        "(APIServer pid=1) INFO 05-01 14:19:21 [utils.py:326] non-default args: {'model': 'm', "
        "'tensor_parallel_size': 2, 'disable_custom_all_reduce': True}"
    )
    (finding,) = [f for f in helpers.findings(user) if f.rule == "custom-allreduce-off"]
    assert finding.fix == ["drop --disable-custom-all-reduce"]
    p2p = (
        "(Worker_TP0 pid=7) WARNING 05-01 14:19:30 [custom_all_reduce.py:137] Custom allreduce is disabled because "
        "your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
        "disable_custom_all_reduce=True explicitly."
    )
    (finding,) = [f for f in helpers.findings(p2p) if f.rule == "custom-allreduce-off"]
    assert any(fix.startswith("check P2P") for fix in finding.fix)
    assert not any("drop --disable-custom-all-reduce" in fix for fix in finding.fix)


def _ngram_log(running: int) -> str:
    args = (
        "(APIServer pid=1) INFO 07-06 23:20:00 [utils.py:326] non-default args: {'model': 'm', "
        "'speculative_config': {'method': 'ngram', 'num_speculative_tokens': 4, 'prompt_lookup_max': 4}}"
    )
    rows = []
    for i in range(4):
        rows.append(
            f"(APIServer pid=1) INFO 07-06 23:21:{10 + i} [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 "
            f"tokens/s, Avg generation throughput: 3000.0 tokens/s, Running: {running} reqs, Waiting: 0 reqs, "
            "GPU KV cache usage: 40.0%, Prefix cache hit rate: 0.0%"
        )
        rows.append(
            f"(APIServer pid=1) INFO 07-06 23:21:{10 + i} [metrics.py:120] SpecDecoding metrics: Mean acceptance "
            "length: 2.50, Accepted throughput: 59.80 tokens/s, Drafted throughput: 95.10 tokens/s, Accepted: 600 "
            "tokens, Drafted: 1600 tokens, Per-position acceptance rate: 0.600, 0.450, 0.300, 0.150, "
            "Avg Draft acceptance rate: 37.5%"
        )
    return "\n".join([args, *rows])


def test_break_even_accounts_for_batch_size() -> None:
    # acceptance 2.5 at k=4 pays at batch 1 (break-even 1.8) but not with 600 requests verifying 5 tokens each
    small, large = _ngram_log(1), _ngram_log(600)
    assert helpers.profile(small).value("spec.verify_cost") == 1.0
    assert helpers.profile(large).value("spec.verify_cost") == pytest.approx(5.0)
    assert "below-break-even" not in {f.rule for f in helpers.findings(small)}
    (finding,) = [f for f in helpers.findings(large) if f.rule == "below-break-even"]
    assert finding.score >= 75
    assert helpers.profile(large).value("spec.best_k") == 0
    assert any(fix.startswith("drop --speculative-config") for fix in finding.fix)
    # 0.6, 0.45, 0.3, 0.15 at batch 1, n-gram (no drafter pass) and the per-step overhead of 0.2 a drafted token
    # (speculation.with_overhead): k=3 (2.35 tokens for 1.6 plain steps, 1.47x) beats k=4 (2.5 for 1.8, 1.39x)
    assert helpers.profile(small).value("spec.best_k") == 3
    assert helpers.profile(small).value("spec.break_even") == pytest.approx(1.8)
    # at 600 running requests the verification of 5 tokens costs 5 plain steps: the overhead adds, 5 + 0.8
    assert helpers.profile(large).value("spec.break_even") == pytest.approx(5.8)


def _stats(running: int, waiting: int, usage: float) -> str:
    return (
        "(APIServer pid=1) INFO 07-31 16:22:25 [loggers.py:271] Engine 000: Avg prompt throughput: 3983.0 tokens/s, "
        f"Avg generation throughput: 69.9 tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
        f"GPU KV cache usage: {usage:.1f}%, Prefix cache hit rate: 29.8%"
    )


ARGS_CAP_8 = "(APIServer pid=1) INFO 07-31 16:21:25 [utils.py:233] non-default args: {'max_num_seqs': 8, 'model': '/m'}"


def test_waiting_at_the_cap_counts_only_intervals_where_both_hold() -> None:
    """The running count and the queue come from the same line: a queue below the cap (requests arriving faster
    than prefill admits them) and the cap reached with nothing waiting are not the cap holding requests back."""
    lines = [ARGS_CAP_8, _stats(8, 0, 30.0), _stats(5, 6, 25.0), _stats(8, 4, 28.0), _stats(3, 0, 10.0)]
    profile = helpers.profile("\n".join(lines))
    assert profile.value("sched.waiting_at_cap_share") == pytest.approx(0.25)
    assert "queue-at-admission-cap" in {f.rule for f in helpers.findings("\n".join(lines))}
    apart = [ARGS_CAP_8, _stats(8, 0, 30.0), _stats(5, 6, 25.0), _stats(3, 0, 10.0)]
    assert helpers.profile("\n".join(apart)).value("sched.waiting_at_cap_share") == 0
    assert "queue-at-admission-cap" not in {f.rule for f in helpers.findings("\n".join(apart))}


def test_a_backend_vllm_forces_for_the_model_is_required_without_the_users_args() -> None:
    """vLLM 0.25 forces TRITON_ATTN for Gemma 4's heterogeneous head dims; a paste without `non-default args`
    (a tail, a window) still shows the engine's own reason, which alone makes the backend the model's need.
    Both of the grammar's Gemma 4 messages give the one reason the derivation knows."""
    text = "\n".join(
        [
            "(APIServer pid=40298) INFO 08-02 10:27:11 [config.py:240] Gemma4 model has heterogeneous head dimensions "
            "(head_dim=256, global_head_dim=512). FA4 not available, forcing TRITON_ATTN backend.",
            "(EngineCore pid=40474) INFO 08-02 10:27:21 [cuda.py:416] Using AttentionBackendEnum.TRITON_ATTN backend.",
        ]
    )
    assert helpers.profile(text).value("attention.model_required") is True
    assert "vllm-slow-attention-backend" not in {f.rule for f in helpers.findings(text)}
