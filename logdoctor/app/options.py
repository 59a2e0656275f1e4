"""Option bundles of the CLI: the caps on reading local input (docs/cli.md), and the size syntax (`64M`).

logdoctor parse big.log --max-read 64G --input-timeout 0
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from logdoctor.sources.limits import (
    DEFAULT_INPUT_TIMEOUT,
    DEFAULT_MAX_GZIP_RATIO,
    DEFAULT_MAX_READ,
    DEFAULT_MAX_SECONDS,
    ReadLimits,
)

F = TypeVar("F", bound=Callable[..., Any])


_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_size(ctx: click.Context, param: click.Parameter, value: str | int) -> int:
    """`65536`, `512K`, `64M`, `1G` (powers of 1024) for --max-bytes."""
    if isinstance(value, int):
        return value
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in _SIZE_UNITS else ""
    try:
        size = int(float(text[: len(text) - len(unit)]) * _SIZE_UNITS[unit])
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a size such as 65536, 512K, 64M or 1G") from None
    if size < 1024:
        raise click.BadParameter(f"{value!r}: at least 1K")
    return size


def option_bundle(
    keyword: str,
    options: Sequence[Callable[[Any], Any]],
    build: Callable[[dict[str, Any]], Any],
    *,
    keep: Sequence[str] = (),
    also: Sequence[str] = (),
) -> Callable[[F], F]:
    """A decorator that declares `options` on a command and hands their values to it as the one keyword
    argument `keyword` = `build({parameter name: value})`.

    `keep`: names read but left for an inner bundle that shares them (`--since` serves clickhouse:// and
    prometheus://: declared by the outer bundle, popped by the inner one). `also`: names declared by an outer
    bundle that this one reads too (absent when that bundle is not applied: None)."""

    def probe() -> None: ...

    for option in options:
        option(probe)
    names = [param.name for param in getattr(probe, "__click_params__", []) if param.name]

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def bundled(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs[name] if name in keep else kwargs.pop(name) for name in names}
            values.update({name: kwargs.pop(name, None) for name in also})
            return func(*args, **{keyword: build(values)}, **kwargs)

        wrapped: Callable[..., Any] = bundled
        for option in reversed(options):
            wrapped = option(wrapped)
        return wrapped  # type: ignore[return-value]

    return decorate


def _read_limits(values: dict[str, Any]) -> ReadLimits:
    return ReadLimits(values["max_read"], values["max_gzip_ratio"], values["input_timeout"], values["max_seconds"])


# `--max-read`, `--max-gzip-ratio`, `--input-timeout`, `--max-seconds`: the caps on reading a local input
# (docs/security.md), handed to the command as one `limits: ReadLimits`.
read_limit_options = option_bundle(
    "limits",
    [
        click.option(
            "--max-read",
            type=str,
            metavar="SIZE",
            callback=parse_size,
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
            default=DEFAULT_INPUT_TIMEOUT,
            show_default=True,
            help="Seconds a pipe, FIFO or stdin may send nothing (0: wait for ever).",
        ),
        click.option(
            "--max-seconds",
            type=click.FloatRange(min=0),
            default=DEFAULT_MAX_SECONDS,
            show_default=True,
            help="Seconds one local input may take to read and parse, and again to diagnose (0: no limit).",
        ),
    ],
    _read_limits,
)
