"""Thresholds read in context (docs/rules.md, "Thresholds and their sources"): a queue against the running batch,
acceptance against the method and k, one stats line as weaker evidence. The lines are vLLM V1's real formats
(loggers.py stats line, metrics.py SpecDecoding line, utils.py non-default args); the values are constructed."""

from __future__ import annotations

import pytest

from logdoctor.facts.speculation import typical_acceptance
from tests.facts import helpers


def _stats(running: int, waiting: int, kv: float, minute: int = 22) -> str:
    return (
        f"INFO 07-31 16:{minute:02d}:25 [loggers.py:271] Engine 000: Avg prompt throughput: 3983.0 tokens/s, "
        f"Avg generation throughput: 9069.9 tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
        f"GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: 29.8%"
    )


def _spec(method: str, k: int, length: float, minute: int = 22) -> str:
    return (
        f"INFO 07-31 16:21:25 [utils.py:233] non-default args: {{'model': '/m', 'speculative_config': "
        f"{{'method': '{method}', 'num_speculative_tokens': {k}}}}}\n"
        f"INFO 07-31 16:{minute:02d}:43 [metrics.py:100] SpecDecoding metrics: Mean acceptance length: {length:.2f}, "
        "Accepted throughput: 10.00 tokens/s, Drafted throughput: 20.00 tokens/s, Accepted: 100 tokens, "
        "Drafted: 200 tokens"
    )


def test_queue_share_is_the_queue_over_the_requests_in_the_engine() -> None:
    profile = helpers.profile("\n".join([_stats(480, 3, 46.9, 22), _stats(476, 5, 47.8, 23), _stats(470, 0, 47.0, 24)]))
    assert profile.value("sched.queue_share") == pytest.approx(0.0083, abs=1e-4)  # median of 3/483 and 5/481


def test_a_few_waiting_while_hundreds_run_is_not_a_batching_problem() -> None:
    text = "\n".join([_stats(480, 3, 46.9, 22), _stats(476, 5, 47.8, 23)])
    assert not [f for f in helpers.findings(text) if f.cause == "chunked-prefill-or-batching-config"]


def test_a_queue_as_large_as_the_batch_with_free_kv_still_is() -> None:
    text = "\n".join([_stats(8, 12, 26.9, 22), _stats(8, 10, 29.8, 23)])
    assert [f.rule for f in helpers.findings(text) if f.cause == "chunked-prefill-or-batching-config"] == [
        "queue-with-free-kv"
    ]


@pytest.mark.parametrize(
    ("method", "k", "architecture", "expected"),
    [
        ("dflash", 15, "", 6.3),  # sglang#16818: the published figure at its own k
        ("mtp", 3, "DeepseekV3ForCausalLM", 2.5),  # sglang#3582, the low end
        ("mtp", 3, "Qwen3_5ForConditionalGeneration", 2.52),  # Qwen3.6-27B's own head, club-3090#105
        ("eagle", 2, "", 1.89),  # vllm#16035
        ("eagle3", 3, "", 2.26),  # vllm#32030, the low end of three models
        (None, 3, "", 2.533),  # the log names no method: 1 + 0.7 + 0.49 + 0.343
        (None, 1, "", 1.7),
        # neither method nor k: the smallest k's figure, which a working drafter at any k reaches (an SGLang decode
        # line's accept len of 1.9 with no k is not low: it is 90% at k=1)
        (None, None, "", 1.7),
    ],
)
def test_typical_acceptance_by_method_family_and_k(
    method: str | None, k: int | None, architecture: str, expected: float
) -> None:
    found = typical_acceptance(method, k, architecture)
    assert found is not None
    tau, source = found
    assert tau == pytest.approx(expected, abs=0.01)
    assert source


@pytest.mark.parametrize(
    ("method", "architecture"),
    [
        ("ngram", ""),  # a lookup accepts what the workload repeats: no method figure
        ("medusa", ""),
        ("draft_model", ""),
        ("mtp", "Glm4MoeForCausalLM"),  # no figure for GLM's head: DeepSeek's says nothing of it
        ("mtp", ""),  # the family is not in the log
    ],
)
def test_typical_acceptance_is_unknown_without_a_published_figure(method: str, architecture: str) -> None:
    assert typical_acceptance(method, 3, architecture) is None


def test_typical_acceptance_is_carried_to_another_k() -> None:
    def tau(k: int) -> float:
        found = typical_acceptance("mtp", k, "DeepseekV3ForCausalLM")
        assert found is not None
        return found[0]

    assert tau(1) < tau(3) < tau(5)
    assert tau(1) <= 2.0  # at most k + 1


def test_eagle_at_its_published_acceptance_is_not_low() -> None:
    # 1.85 at k=2 is what EAGLE-1 reaches on MT-Bench (vllm#16035); a flat "below 2.2 with k >= 2" called it low.
    text = "\n".join([_spec("eagle", 2, 1.85, 22), _spec("eagle", 2, 1.86, 23).split("\n")[1]])
    assert not [f for f in helpers.findings(text) if f.rule == "low-acceptance"]


def test_dflash_far_below_its_published_acceptance_is_low() -> None:
    # 2.5 of 15 drafted tokens: under half of DFlash's published ~6.3 (sglang#16818), though above a flat 2.2.
    text = "\n".join([_spec("dflash", 15, 2.5, 22), _spec("dflash", 15, 2.6, 23).split("\n")[1]])
    low = [f for f in helpers.findings(text) if f.rule == "low-acceptance"]
    assert low and low[0].score >= 50
    assert "6.30" in low[0].explanation


def test_one_stats_line_is_weaker_evidence_than_two() -> None:
    one = [f for f in helpers.findings(_stats(8, 12, 26.9, 22)) if f.rule == "queue-with-free-kv"]
    two = [
        f
        for f in helpers.findings("\n".join([_stats(8, 12, 26.9, 22), _stats(8, 12, 26.9, 23)]))
        if f.rule == "queue-with-free-kv"
    ]
    assert one and two
    assert "one stats line" in one[0].working
    assert "one stats line" not in two[0].working
    assert one[0].score < two[0].score


def test_a_full_cache_with_a_few_waiting_beside_hundreds_running_is_not_pressure() -> None:
    text = "\n".join([_stats(480, 3, 95.9, 22), _stats(478, 5, 96.5, 23)])
    assert not [f for f in helpers.findings(text) if f.cause == "kv-cache-pressure"]
    crowded = "\n".join([_stats(18, 43, 95.9, 22), _stats(18, 42, 95.5, 23)])
    assert [f.rule for f in helpers.findings(crowded) if f.cause == "kv-cache-pressure"] == ["kv-saturated"]


@pytest.mark.parametrize(("fraction", "offered"), [(0.8, True), (0.95, False)])
def test_kv_saturated_never_offers_the_memory_fraction_already_set(fraction: float, offered: bool) -> None:
    args = (
        f"INFO 07-31 16:21:25 [utils.py:233] non-default args: {{'model': '/m', 'gpu_memory_utilization': {fraction}}}"
    )
    text = "\n".join([args, _stats(8, 12, 98.5, 22), _stats(8, 10, 99.1, 23), _stats(8, 11, 98.8, 24)])
    kv = next(f for f in helpers.findings(text) if f.rule == "kv-saturated")
    assert ("--gpu-memory-utilization 0.92 (if memory allows)" in kv.fix) is offered
