"""Expected performance on this hardware: a GPU table in data, a roofline model of decode, and the
effect of fixing each cause (docs/expected-performance.md).

    >>> from logdoctor.perf import load_hardware
    >>> load_hardware().lookup("NVIDIA H100 80GB HBM3").gpu.memory_bandwidth_gb_s
    3350.0

The table's names are imported on first use, so `logdoctor.facts.speculation` (which the facts layer calls on
every diagnosis) does not load pydantic models and YAML with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logdoctor.perf.hardware import GpuSpec, HardwareTable, Lookup, load_hardware

__all__ = ["GpuSpec", "HardwareTable", "Lookup", "load_hardware"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from logdoctor.perf import hardware

        return getattr(hardware, name)
    raise AttributeError(f"module 'logdoctor.perf' has no attribute {name!r}")
