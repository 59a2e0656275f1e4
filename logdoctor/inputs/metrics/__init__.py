"""Prometheus metrics of vLLM and SGLang (a saved `curl host:8000/metrics`, or series read from a Prometheus
server by `logdoctor.sources.prometheus`): line types and the snapshot reader in grammars.py."""

from __future__ import annotations

from logdoctor.inputs.metrics.grammars import GRAMMARS, finish
from logdoctor.registry import EngineSpec

SPEC = EngineSpec(name="metrics", label="Prometheus metrics", kind="input", grammars=tuple(GRAMMARS), finish=finish)
