"""A benchmark client's acceptance length is the measurement where the server printed no spec-decode line.

Constructed: SGLang's launch command with EAGLE-3 and a client's summary lines (`Average Output throughput`,
`Average Accept length`), and a V1 vLLM SpecDecoding line for the case where the server's own numbers win."""

from __future__ import annotations

from tests.facts.helpers import findings_by_rule, profile

_LAUNCH = (
    "python -m sglang.launch_server --model-path /m/Qwen2.5-VL-7B-Instruct --speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path /m/eagle3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
    "--speculative-num-draft-tokens 4\n"
)
_CLIENT = "Average Latency: 92.421 s\nAverage Output throughput: 41.960 token/s\nAverage Accept length: {length}\n"


def test_the_clients_acceptance_length_is_read_without_server_lines() -> None:
    text = _LAUNCH + _CLIENT.format(length="1.037")
    assert profile(text).value("spec.acceptance_length") == [1.037]
    assert "low-acceptance" in findings_by_rule(text)
    assert "low-acceptance" not in findings_by_rule(_LAUNCH + _CLIENT.format(length="3.200"))


def test_the_servers_own_acceptance_wins_over_the_clients() -> None:
    server = (
        "(APIServer pid=1) INFO 05-08 16:21:01 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.90, "
        "Accepted throughput: 10.00 tokens/s, Drafted throughput: 15.00 tokens/s, Accepted: 100 tokens, "
        "Drafted: 150 tokens, Per-position acceptance rate: 0.800, 0.700, 0.400, Avg Draft acceptance rate: 63.3%\n"
    )
    assert profile(server + _CLIENT.format(length="1.037")).value("spec.acceptance_length") == [2.9]
