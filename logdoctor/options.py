"""Option bundles of the CLI that live outside `cli.py`: the caps on reading local input (docs/cli.md).

logdoctor parse big.log --max-read 64G --input-timeout 0
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from logdoctor.sources.limits import (
    DEFAULT_MAX_GZIP_RATIO,
    DEFAULT_MAX_READ,
    DEFAULT_MAX_SECONDS,
    DEFAULT_READ_TIMEOUT,
    ReadLimits,
)

F = TypeVar("F", bound=Callable[..., Any])


def _size(ctx: click.Context, param: click.Parameter, value: str | int) -> int:
    from logdoctor.cli import parse_size  # the CLI's size syntax (`64M`), one definition

    return parse_size(ctx, param, value)


def read_limit_options(func: F) -> F:
    """`--max-read`, `--max-gzip-ratio`, `--input-timeout`, `--max-seconds`: the caps on reading a local input
    (docs/security.md), handed to the command as one `limits: ReadLimits`."""

    @functools.wraps(func)
    def wrapper(
        *args: Any, max_read: int, max_gzip_ratio: float, input_timeout: float, max_seconds: float, **kwargs: Any
    ) -> Any:
        limits = ReadLimits(max_read, max_gzip_ratio, input_timeout, max_seconds)
        return func(*args, limits=limits, **kwargs)

    options = [
        click.option(
            "--max-read",
            type=str,
            metavar="SIZE",
            callback=_size,
            default=str(DEFAULT_MAX_READ),
            show_default="32G",
            help="Most bytes to read from one local input (after gunzip).",
        ),
        click.option(
            "--max-gzip-ratio",
            type=click.FloatRange(min=1),
            default=DEFAULT_MAX_GZIP_RATIO,
            show_default=True,
            help="Stop a .gz that decompresses to more than this many times its size.",
        ),
        click.option(
            "--input-timeout",
            type=click.FloatRange(min=0),
            default=DEFAULT_READ_TIMEOUT,
            show_default=True,
            help="Seconds a pipe, FIFO or stdin may send nothing (0: wait for ever).",
        ),
        click.option(
            "--max-seconds",
            type=click.FloatRange(min=0),
            default=DEFAULT_MAX_SECONDS,
            show_default=True,
            help="Seconds to spend reading one local input (0: no limit).",
        ),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]
