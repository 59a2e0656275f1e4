"""Benchmark results pasted beside the log: per-request and aggregate decode speed, by concurrency.

`vllm bench serve` block with `Mean TPOT (ms): 52.1`  -> bench.per_request = [19.2]
`Successful requests: 514`, `Failed requests: 486`  -> bench.failed_share = 0.486
"""

from __future__ import annotations

from logdoctor.events import BenchmarkResult, EventBase
from logdoctor.facts.combiner import Combiner


class Benchmarks(Combiner):
    reads = (BenchmarkResult,)
    produces = (
        "bench.per_request",
        "bench.output_throughput",
        "bench.concurrency",
        "bench.warmup_slowdown",
        "bench.failed_share",
        "bench.ttft_tail",
        "bench.ttft_tail_share",
    )

    def add(self, ev: EventBase) -> None:
        if not isinstance(ev, BenchmarkResult):
            return
        b = self.b
        if ev.per_request_throughput is not None:
            b.append("bench.per_request", ev.per_request_throughput, ev, "pasted benchmark")
        elif ev.mean_tpot_ms:
            b.append("bench.per_request", 1000.0 / ev.mean_tpot_ms, ev, "pasted benchmark (1000 / mean TPOT)")
        if ev.output_throughput is not None:
            b.append("bench.output_throughput", ev.output_throughput, ev, "pasted benchmark")
        if ev.concurrency is not None:
            b.append("bench.concurrency", ev.concurrency, ev, "pasted benchmark")
        # Only where the client printed both counts: requests a run was meant to send are not what it printed.
        if ev.failed is not None and ev.completed is not None and ev.failed + ev.completed > 0:
            share = ev.failed / (ev.failed + ev.completed)
            kept = b.value("bench.failed_share")
            if kept is None or share > kept:
                b.set("bench.failed_share", share, ev, "pasted benchmark: failed / (successful + failed) requests")
        self._ttft_tail(ev)
        warmup, step = ev.values.get("warmup_first_decode_latency_s"), ev.values.get("median_decode_latency_s")
        if isinstance(warmup, int | float) and isinstance(step, int | float) and step > 0:
            b.set("bench.warmup_slowdown", warmup / step, ev, "warm-up's first decode step / measured median step")

    def _ttft_tail(self, ev: BenchmarkResult) -> None:
        """bench.ttft_tail, P99 TTFT over the median, and bench.ttft_tail_share: the share of the requests the tail
        holds ((mean - median) / (P99 - median), the mean's excess over the median as a share of the tail's), over
        the share one wave of concurrency is (concurrency / requests). Of the benchmark whose tail is the longest."""
        p99, median, mean = ev.values.get("p99_ttft_ms"), ev.median_ttft_ms, ev.mean_ttft_ms
        if not (isinstance(p99, int | float) and median and mean and ev.concurrency and ev.completed):
            return
        if p99 <= median or median <= 0:
            return
        tail = p99 / median
        kept = self.b.value("bench.ttft_tail")
        if isinstance(kept, float) and kept >= tail:
            return
        share = max(0.0, mean - median) / (p99 - median)
        wave = min(1.0, ev.concurrency / ev.completed)
        self.b.set("bench.ttft_tail", round(tail, 2), ev, "pasted benchmark: P99 TTFT / median TTFT")
        self.b.set(
            "bench.ttft_tail_share",
            round(share / wave, 3),
            ev,
            f"pasted benchmark: (mean - median) / (P99 - median) TTFT = {share:.3f}, over concurrency / requests "
            f"= {wave:.3f}",
        )
