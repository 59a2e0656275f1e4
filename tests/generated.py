"""bench/gen_log.py's generated vLLM serving log, for tests that need a log of a given size (seeded: the same bytes
on every run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generated_log(path: Path, size: str) -> Path:
    """Write the generated log of `size` (`3M`, `64M`) to `path` and return it."""
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_log.py"), "--size", size, "--out", str(path)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return path
