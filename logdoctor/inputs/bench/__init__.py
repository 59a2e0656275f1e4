"""Pasted benchmark results (`vllm bench serve`, `sglang.bench_serving`, tables): line types in grammars.py."""

from __future__ import annotations

from logdoctor.inputs.bench.grammars import GRAMMARS, finish
from logdoctor.registry import EngineSpec

SPEC = EngineSpec(name="bench", label="benchmark results", kind="input", grammars=tuple(GRAMMARS), finish=finish)
