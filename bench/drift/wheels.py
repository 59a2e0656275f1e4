"""Engine wheels from the package index, cached under `.drift-cache/` (ignored by git), never installed.

wheel_for("vllm", "0.33.0")  ->  .drift-cache/vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from .relevance import REPO

CACHE = REPO / ".drift-cache"
PACKAGES = {"vllm": "vllm", "sglang": "sglang"}
_PLATFORMS = [
    f"--platform={p}" for p in ("manylinux_2_34_x86_64", "manylinux_2_28_x86_64", "manylinux2014_x86_64", "any")
]


class WheelError(Exception):
    pass


def _cached(engine: str, version: str, cache: Path) -> Path | None:
    found = sorted(cache.glob(f"{PACKAGES[engine]}-{version}-*.whl"))
    return found[0] if found else None


def newest_version(engine: str) -> str:
    """The newest release on the index (`pip index versions`)."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", PACKAGES[engine]]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    m = re.search(rf"^{PACKAGES[engine]} \(([^)]+)\)", proc.stdout, re.MULTILINE)
    if proc.returncode != 0 or m is None:
        raise WheelError(f"could not ask the index for the newest {engine}: {proc.stderr.strip()[-200:]}")
    return m.group(1)


def wheel_for(engine: str, version: str, cache: Path = CACHE) -> Path:
    """Download (once) the wheel of one release with `pip download --no-deps`."""
    cache.mkdir(parents=True, exist_ok=True)
    hit = _cached(engine, version, cache)
    if hit is not None:
        return hit
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet", "-d", str(cache)]
    print(f"downloading {PACKAGES[engine]}=={version} into {cache}", file=sys.stderr)
    # A wheel built for another interpreter is as good (only its .py files are read): when none matches this
    # one, ask for the CPython versions and Linux platforms the engines publish.
    attempts: list[list[str]] = [[]] + [
        ["--python-version", py, "--implementation", "cp", *_PLATFORMS] for py in ("3.12", "3.11", "3.10")
    ]
    last = "no wheel found"
    for extra in attempts:
        proc = subprocess.run(
            [*base, *extra, f"{PACKAGES[engine]}=={version}"], capture_output=True, text=True, check=False
        )
        hit = _cached(engine, version, cache)
        if proc.returncode == 0 and hit is not None:
            return hit
        last = (proc.stderr.strip().splitlines() or [last])[-1]
    raise WheelError(f"pip download {PACKAGES[engine]}=={version} failed: {last}")
