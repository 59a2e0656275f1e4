"""Expected performance on this hardware: a GPU table in data, a roofline model of decode, and the
effect of fixing each cause (docs/expected-performance.md).

    >>> from logdoctor.perf import load_hardware
    >>> load_hardware().lookup("NVIDIA H100 80GB HBM3").gpu.memory_bandwidth_gb_s
    3350.0
"""

from logdoctor.perf.hardware import GpuSpec, HardwareTable, Lookup, load_hardware

__all__ = ["GpuSpec", "HardwareTable", "Lookup", "load_hardware"]
