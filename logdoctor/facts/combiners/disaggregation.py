"""Disaggregated prefill/decode: the KV connector and KV transfers that failed or had to be retried.

KVCache(connector="nixl", transfer_backend="UCX")                      -> disagg.connector = nixl
`Initializing KVConnectorBase_V1` (any V1 connector)                   -> disagg.connector = kv-connector-v1
EngineFailure(kind="kv-transfer", connector="nixl")                     -> disagg.transfer_failures += 1
`Failing 3 request(s) due to KV load failure`                            -> disagg.failed_requests += 3
PerfWarning(topic="kv-transfer"): `Recovered from KV load failure ...`,
    `Bootstrap query ... failed on attempt 1/3`                          -> disagg.transfer_retries += 1
"""

from __future__ import annotations

from logdoctor.events import EngineFailure, EventBase, KVCache, PerfWarning
from logdoctor.facts.combiner import Combiner

# vLLM's `Initializing KVConnectorBase_V1` (engines/vllm/platform.py): a connector is in use but not which one;
# a line that names it replaces this.
UNNAMED_CONNECTOR = "kv-connector-v1"


class Disaggregation(Combiner):
    reads = (KVCache, EngineFailure, PerfWarning)
    produces = ("disagg.connector", "disagg.transfer_failures", "disagg.failed_requests", "disagg.transfer_retries")

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, KVCache) and ev.connector:
            current = b.value("disagg.connector")
            if current is None or (current == UNNAMED_CONNECTOR and ev.connector != UNNAMED_CONNECTOR):
                b.set("disagg.connector", ev.connector, ev, ev.message or "KV connector")
        elif isinstance(ev, EngineFailure) and ev.kind == "kv-transfer":
            if ev.connector:
                b.set("disagg.connector", ev.connector, ev, ev.message, keep_first=True)
            b.set("disagg.transfer_failures", (b.value("disagg.transfer_failures") or 0.0) + 1.0, ev, ev.message)
            if ev.requests:
                total = (b.value("disagg.failed_requests") or 0.0) + float(ev.requests)
                b.set("disagg.failed_requests", total, ev, ev.message)
        elif isinstance(ev, PerfWarning) and ev.topic == "kv-transfer":
            b.set("disagg.transfer_retries", (b.value("disagg.transfer_retries") or 0.0) + 1.0, ev, ev.message)
