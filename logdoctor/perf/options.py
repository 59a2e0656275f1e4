"""What `diagnose` and `diff` need of the performance model before a GPU is known: `--gpu` / `--hardware`
(`perf_options`) and the GPU-name facts. `logdoctor.perf.gate.assess` imports the model only when there is a GPU
to compute for (docs/benchmarks.md, *Start-up*).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from logdoctor.errors import ConfigError

if TYPE_CHECKING:
    from logdoctor.perf.adapter import FactSource
    from logdoctor.perf.hardware import HardwareTable

UNKNOWN_GPU_HOW = 'pass --gpu "RTX A6000" (a name from hardware.yaml), or include `nvidia-smi -q` / collect_env output'

# Facts that may name the GPU, in order; any other fact whose name ends in `gpu_name` is accepted too.
GPU_NAME_FACTS = ("gpu.name", "host.gpu_name", "gpu.model", "env.gpu_name")


@dataclass(frozen=True)
class PerfOptions:
    """`--gpu` and the hardware table (built-in plus `--hardware` files)."""

    gpu: str | None = None
    table: HardwareTable | None = None

    def hardware(self) -> HardwareTable:
        return self.table if self.table is not None else _builtin_table()


@functools.lru_cache(maxsize=1)
def _builtin_table() -> HardwareTable:
    from logdoctor.perf.hardware import load_hardware

    return load_hardware()


def perf_options(gpu: str | None, hardware: Sequence[str | Path] = ()) -> PerfOptions:
    """Read the `--hardware` files and check the `--gpu` name now, so a mistake is one line and exit 2 before any
    log is read."""
    if gpu is None and not hardware:
        return PerfOptions()  # the built-in table, read when a GPU turns up (host facts)
    from logdoctor.perf.hardware import load_hardware

    table = load_hardware(hardware)
    if gpu is not None:
        found = table.lookup(gpu)
        if found.gpu is None:
            raise ConfigError(f"--gpu: {found.message}")
    return PerfOptions(gpu=gpu, table=table)


def gpu_from_facts(facts: FactSource, names: Sequence[str] = ()) -> tuple[str, str] | None:
    """(GPU name, the fact it came from): the known GPU-name facts first, then any `*gpu_name` fact."""
    candidates = [*GPU_NAME_FACTS, *(n for n in names if n.endswith("gpu_name") and n not in GPU_NAME_FACTS)]
    for name in candidates:
        value = facts.value(name)
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, str) and v.strip()), None)
        if isinstance(value, str) and value.strip():
            return value.strip(), name
    return None


def _fact_names(profile: FactSource) -> list[str]:
    facts = getattr(profile, "facts", None)
    return list(facts) if isinstance(facts, Mapping) else []
