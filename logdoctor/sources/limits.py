"""The caps on reading one local input (docs/security.md), apart from the reader itself.

So does `raise_on_termination`, which the CLI's entry point calls before any command runs.

`logdoctor.app.options` builds the CLI flags from these defaults at import time; keeping them here, not in
`logdoctor.sources.local` (gzip, subprocess, signal handling), keeps `logdoctor --version` and `--help`
from importing the reader (docs/benchmarks.md, *Start-up*). `logdoctor.sources.local` re-exports them.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from types import FrameType

DEFAULT_MAX_READ = 32 * 1024**3  # bytes of one input (after gunzip)
DEFAULT_MAX_GZIP_RATIO = 100.0  # decompressed / compressed; real logs gzip 5-30x
# --input-timeout: seconds a pipe, FIFO or non-terminal stdin may send nothing. Its own name: DEFAULT_READ_TIMEOUT
# below is SSH's --read-timeout (300 s), and the CLI once declared --input-timeout with that one
DEFAULT_INPUT_TIMEOUT = 60.0
DEFAULT_MAX_SECONDS = 1800.0  # seconds to read (and parse) one input


@dataclass(frozen=True)
class ReadLimits:
    """The caps on reading one local input (flags of `parse`, `diagnose` and `diff`; docs/security.md)."""

    max_bytes: int = DEFAULT_MAX_READ
    max_gzip_ratio: float = DEFAULT_MAX_GZIP_RATIO
    read_timeout: float = DEFAULT_INPUT_TIMEOUT  # 0: wait forever
    max_seconds: float = DEFAULT_MAX_SECONDS  # 0: no limit


class _Termination(SystemExit):
    """SIGTERM or SIGHUP, raised where Python is, so that `finally` blocks run (children killed, nothing left)."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise _Termination(128 + signum)


def raise_on_termination() -> None:
    """Make SIGTERM and SIGHUP unwind the stack like Ctrl-C does (the prefilter's grep, gzip and wc are
    killed on the way out). Call once from the main thread (the CLI's entry point)."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) in (signal.SIG_DFL, None):
            signal.signal(signum, _terminate)


# clickhouse:// targets (logdoctor/sources/clickhouse.py): matching rows kept per deployment (the earliest; the rest
# is reported as cut). Here so that `--max-rows`'s default is declared without importing the ClickHouse reader.
DEFAULT_MAX_ROWS = 2_000_000

# The SSH options' defaults (docs/ssh.md), here so that the CLI declares them without importing the SSH source,
# and `watch HOST` (which refuses the options it has no use for) knows them as the CLI gave them.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # --max-bytes: log lines transferred from one host
DEFAULT_READ_TIMEOUT = 300.0  # --read-timeout: seconds one remote log read may take
# --jobs, hosts collected at a time: collecting is mostly waiting (the remote greps, the network), so twice the
# CPUs, at least 8 (docs/ssh.md, *Many hosts*: twenty hosts on 16 cores are one wave).
DEFAULT_JOBS = max(8, 2 * len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else 8
