"""Host facts (nvidia-smi topology and queries, P2P checks, one-line facts): line types in grammars.py."""

from __future__ import annotations

from logdoctor.inputs.host.grammars import GRAMMARS
from logdoctor.registry import EngineSpec

SPEC = EngineSpec(name="host", label="host facts", kind="input", grammars=tuple(GRAMMARS))
