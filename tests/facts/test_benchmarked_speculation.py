"""A benchmark client's speculative-decoding section, read where the server printed no spec-decode line: its
per-position rows give k and the per-position acceptance, which judge the drafter as the server's own lines would.

The block is constructed from `vllm bench serve`'s output format (vllm/benchmarks/serve.py); the numbers are those
of a real run's section (fixtures/logs/realworld11/vllm-c455.log)."""

from __future__ import annotations

from logdoctor.pipeline.run import LineSource, parse_sources, profile_of

_BLOCK = """\
============ Serving Benchmark Result ============
Successful requests:                     640
Maximum request concurrency:             32
Output token throughput (tok/s):         4648.82
---------------Speculative Decoding---------------
Acceptance rate (%):                     11.31
Acceptance length:                       1.45
Per-position acceptance (%):
  Position 0:                            35.32
  Position 1:                            8.40
  Position 2:                            1.33
  Position 3:                            0.21
==================================================
"""


def test_the_clients_per_position_rows_give_k_and_the_acceptance() -> None:
    profile = profile_of(parse_sources([LineSource("bench.txt", list(enumerate(_BLOCK.splitlines(), 1)))]))
    assert profile.value("spec.num_tokens") == 4.0
    assert profile.value("spec.position_acceptance") == [0.3532, 0.084, 0.0133, 0.0021]
    assert profile.value("spec.acceptance_rate") == [0.1131]
    # a first token accepted a third of the time is no drafter that accepts nothing: the published side decides
    assert profile.value("spec.acceptance_is_root") is True
    assert profile.facts["spec.acceptance_is_root"].origin.startswith("published acceptance")
