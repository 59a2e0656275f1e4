"""`logdoctor gpus`: the GPUs the expected-performance model knows, with the figures it uses for each.

logdoctor gpus
logdoctor gpus --hardware lab.yaml
"""

from __future__ import annotations

from pathlib import Path

import click

from logdoctor.app.cli import examples
from logdoctor.app.commands.common import handle_errors, stdout_console


def _tflops(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


@click.command(epilog=examples("logdoctor gpus", "logdoctor gpus --hardware lab.yaml"))
@click.option(
    "--hardware",
    "hardware_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Extra hardware YAML (GPUs, model shapes, constants; repeatable), read after the built-in table.",
)
@handle_errors
def gpus(hardware_files: tuple[Path, ...]) -> None:
    """List the GPUs --gpu takes, with the figures the expected-performance model uses."""
    from rich.table import Table
    from rich.text import Text

    from logdoctor.perf.hardware import load_hardware
    from logdoctor.sanitize import clean_text

    table = load_hardware(hardware_files)
    out = Table(show_lines=False)
    for column in ("name", "memory GB", "bandwidth GB/s", "bf16 TFLOP/s", "fp8 TFLOP/s", "link", "also known as"):
        out.add_column(column, no_wrap=column not in ("also known as",))
    for gpu in sorted(table.gpus, key=lambda g: (g.vendor, g.name)):
        if gpu.nvlink is not None:
            link = f"NVLink {gpu.nvlink.generation} {gpu.nvlink.bandwidth_gb_s:g} GB/s"
        elif gpu.infinity_fabric_gb_s is not None:
            link = f"Infinity Fabric {gpu.infinity_fabric_gb_s:g} GB/s"
        else:
            link = f"PCIe {gpu.pcie.generation} x{gpu.pcie.lanes}"
        cells = (
            gpu.name,
            f"{gpu.memory_gb:g}",
            f"{gpu.memory_bandwidth_gb_s:g}",
            _tflops(gpu.bf16_tflops if gpu.bf16_tflops is not None else gpu.fp16_tflops),
            _tflops(gpu.fp8_tflops),
            link,
            ", ".join(gpu.aliases),
        )
        out.add_row(*(Text(clean_text(cell)) for cell in cells))
    console = stdout_console()
    console.print(out)
    console.print(
        Text(f"{len(table.gpus)} GPUs; pass one as --gpu NAME (an alias works too), or add yours with --hardware FILE")
    )
