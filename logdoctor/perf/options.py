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

UNKNOWN_GPU_HOW = (
    "pass --gpu NAME (`logdoctor gpus` lists the names the model knows), or include `nvidia-smi -q` / collect_env "
    "output beside the log"
)

# Facts that may name the GPU, in order; any other fact whose name ends in `gpu_name` is accepted too.
GPU_NAME_FACTS = ("gpu.name", "host.gpu_name", "gpu.model", "env.gpu_name")


@dataclass(frozen=True)
class SeenAcceptance:
    """The acceptance another deployment of the same model measured (`diff`: the baseline's), which the model's
    choices of that method use in place of its published figure."""

    method: str
    tau: float  # mean acceptance length, bonus token included
    k: int
    where: str  # "the baseline (sglang, sglang-mtp-tp2-a6000.log)"
    model: str  # the served model's last path component: the acceptance is used only for the same model


def model_tail(model: object) -> str:
    """The served model's last path component, lower case (`/root/models/Qwen3.6-27B` -> `qwen3.6-27b`)."""
    return str(model or "").rstrip("/").rsplit("/", 1)[-1].lower()


@dataclass(frozen=True)
class PerfOptions:
    """`--gpu` and the hardware table (built-in plus `--hardware` files); in `diff`, the acceptance the other
    deployment of the same model measured."""

    gpu: str | None = None
    table: HardwareTable | None = None
    seen: SeenAcceptance | None = None

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


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def unknown_gpu_how(facts: FactSource) -> str:
    """What to pass for the GPU, with what the log says about it: how many GPUs, and the least memory each has
    (the weights and KV cache it holds, over the memory fraction the engine may use)."""
    said: list[str] = []
    tp = _number(facts.value("parallel.tp"))
    pp = _number(facts.value("parallel.pp")) or 1.0
    count = _number(facts.value("gpu.count")) or (tp * pp if tp else None)
    if count:
        said.append(f"{count:.0f} GPU(s)" + (f" (TP={tp:.0f})" if tp else ""))
    weights = _number(facts.value("model.weights_gib"))
    kv = _number(facts.value("kv.memory_gib"))
    fraction = _number(facts.value("memory.fraction"))
    memory = _number(facts.value("gpu.memory_gib"))
    if memory:
        said.append(f"{memory:.0f} GiB each")
    elif weights:
        held = weights + (kv or 0.0)
        parts = f"{weights:.1f} GiB weights" + (f" + {kv:.1f} GiB KV cache" if kv else "")
        if fraction and fraction < 1:
            said.append(f"at least {held / fraction:.0f} GiB each ({parts} within {fraction:g} of its memory)")
        else:
            said.append(f"at least {held:.0f} GiB each ({parts})")
    platform = facts.value("platform")
    if isinstance(platform, str) and platform and platform != "cuda":
        said.append(f"platform {platform}")
    if not said:
        return UNKNOWN_GPU_HOW
    return f"the log says {', '.join(said)} but not the GPU's name: " + UNKNOWN_GPU_HOW
