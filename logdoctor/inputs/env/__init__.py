"""Environment dumps (`vllm collect-env`, `python -m sglang.check_env`, `nvidia-smi -q`): line types in grammars.py.

Their events are host facts (GpuInfo, HostInfo, NcclEnv) like the host package's; the topology matrix the dumps
embed is that package's line type.
"""

from __future__ import annotations

from logdoctor.inputs.env.grammars import GRAMMARS, finish
from logdoctor.registry import EngineSpec

SPEC = EngineSpec(name="env", label="environment dump", kind="input", grammars=tuple(GRAMMARS), finish=finish)
