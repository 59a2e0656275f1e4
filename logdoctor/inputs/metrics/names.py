"""The engines' metric names this input kind reads, newest spelling first (docs/sources.md lists the releases).

Read from vLLM 0.33.0 (`vllm/v1/metrics/loggers.py`, `vllm/v1/spec_decode/metrics.py`) and SGLang 0.5.23
(`sglang/srt/observability/metrics_collector.py`); older spellings from the releases that printed them:
vLLM <= 0.10 `vllm:gpu_cache_usage_perc` (deprecated for `vllm:kv_cache_usage_perc`), <= 0.10
`vllm:time_per_output_token_seconds` (for `vllm:inter_token_latency_seconds`), V0's gauges
(`vllm:avg_generation_throughput_toks_per_s`, `vllm:num_requests_swapped`, `vllm:cpu_cache_usage_perc`,
`vllm:spec_decode_draft_acceptance_rate`), `vllm:gpu_prefix_cache_*` (V1 <= 0.10). A counter `x` is exposed as
`x_total` (and `x_created`), a histogram as `x_bucket`, `x_sum`, `x_count`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Names:
    """The spellings of each quantity for one engine; the first one present in a scrape is read."""

    running: tuple[str, ...] = ()
    waiting: tuple[str, ...] = ()
    swapped: tuple[str, ...] = ()
    kv_usage: tuple[str, ...] = ()  # gauge, 0..1
    cpu_kv_usage: tuple[str, ...] = ()
    generation_tokens: tuple[str, ...] = ()  # counters
    prompt_tokens: tuple[str, ...] = ()
    preemptions: tuple[str, ...] = ()
    prefix_queries: tuple[str, ...] = ()
    prefix_hits: tuple[str, ...] = ()
    generation_throughput: tuple[str, ...] = ()  # gauges the engine computes itself (tok/s)
    prompt_throughput: tuple[str, ...] = ()
    prefix_hit_rate: tuple[str, ...] = ()  # gauge, 0..1
    spec_drafts: tuple[str, ...] = ()  # vLLM counters
    spec_draft_tokens: tuple[str, ...] = ()
    spec_accepted: tuple[str, ...] = ()
    spec_accepted_per_position: tuple[str, ...] = ()
    spec_acceptance_rate: tuple[str, ...] = ()  # gauges: accepted / drafted
    spec_acceptance_length: tuple[str, ...] = ()
    spec_steps: tuple[str, ...] = ()
    spec_draft_slots: tuple[str, ...] = ()  # SGLang `speculative_num_draft_tokens` (k + 1 for a chain)
    ttft: tuple[str, ...] = ()  # histograms (the family name, without _sum/_count)
    itl: tuple[str, ...] = ()
    tpot: tuple[str, ...] = ()
    e2e: tuple[str, ...] = ()
    iteration_tokens: tuple[str, ...] = ()
    kv_tokens: tuple[str, ...] = ()  # gauges of capacity and configuration
    page_size: tuple[str, ...] = ()
    context_length: tuple[str, ...] = ()
    max_running: tuple[str, ...] = ()
    cache_config: tuple[str, ...] = ()  # an info gauge whose labels are the cache configuration

    def all(self) -> tuple[str, ...]:
        """Every name read, as the family name a sample line starts with."""
        out: list[str] = []
        for value in vars(self).values():
            out.extend(value)
        return tuple(dict.fromkeys(out))


VLLM = Names(
    running=("vllm:num_requests_running",),
    waiting=("vllm:num_requests_waiting",),
    swapped=("vllm:num_requests_swapped",),
    kv_usage=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    cpu_kv_usage=("vllm:cpu_cache_usage_perc",),
    generation_tokens=("vllm:generation_tokens_total",),
    prompt_tokens=("vllm:prompt_tokens_total",),
    preemptions=("vllm:num_preemptions_total",),
    prefix_queries=("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
    prefix_hits=("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
    generation_throughput=("vllm:avg_generation_throughput_toks_per_s",),
    prompt_throughput=("vllm:avg_prompt_throughput_toks_per_s",),
    prefix_hit_rate=("vllm:gpu_prefix_cache_hit_rate",),
    spec_drafts=("vllm:spec_decode_num_drafts_total",),
    spec_draft_tokens=("vllm:spec_decode_num_draft_tokens_total",),
    spec_accepted=("vllm:spec_decode_num_accepted_tokens_total",),
    spec_accepted_per_position=("vllm:spec_decode_num_accepted_tokens_per_pos_total",),
    spec_acceptance_rate=("vllm:spec_decode_draft_acceptance_rate",),
    ttft=("vllm:time_to_first_token_seconds",),
    itl=("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"),
    tpot=("vllm:request_time_per_output_token_seconds",),
    e2e=("vllm:e2e_request_latency_seconds",),
    iteration_tokens=("vllm:iteration_tokens_total",),
    cache_config=("vllm:cache_config_info",),
)

SGLANG = Names(
    running=("sglang:num_running_reqs",),
    waiting=("sglang:num_queue_reqs",),
    kv_usage=("sglang:token_usage",),
    generation_tokens=("sglang:generation_tokens_total",),
    prompt_tokens=("sglang:prompt_tokens_total",),
    preemptions=("sglang:num_retracted_requests_total",),
    generation_throughput=("sglang:gen_throughput",),
    prefix_hit_rate=("sglang:cache_hit_rate",),
    spec_acceptance_rate=("sglang:spec_accept_rate",),
    spec_acceptance_length=("sglang:spec_accept_length",),
    spec_steps=("sglang:spec_num_steps",),
    spec_draft_slots=("sglang:spec_num_draft_tokens",),
    ttft=("sglang:time_to_first_token_seconds",),
    itl=("sglang:inter_token_latency_seconds",),
    tpot=("sglang:request_time_per_output_token_seconds", "sglang:time_per_output_token_seconds"),
    e2e=("sglang:e2e_request_latency_seconds",),
    kv_tokens=("sglang:max_total_num_tokens",),
    page_size=("sglang:page_size",),
    context_length=("sglang:context_len",),
    max_running=("sglang:max_running_requests",),
)

BY_ENGINE = {"vllm": VLLM, "sglang": SGLANG}
# Labels that tell data-parallel replicas apart (their values add up); TP ranks of one replica repeat a value.
REPLICA_LABELS = ("engine", "dp_rank")
