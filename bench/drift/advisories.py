"""`make drift`, advisories: every version an advisory names (its range bounds and `fixed_in`) is a release on
the package index, so a typo (`0.2.10` for `0.21.0`) or a version that never shipped cannot hide a match.

Pre-releases and nightlies (`0.21.1rc1.dev185`) are named on purpose and are never on the index: they are not
checked. NCCL is not checked either: its releases are the GitHub tags, and the `nvidia-nccl-cu12` wheels skip
some of them (2.26.3, 2.26.6)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterable

from logdoctor.engine.advisories import LoadedAdvisory, builtin_advisories
from logdoctor.engine.versions import Version

PACKAGES = {"vllm": "vllm", "sglang": "sglang", "torch": "torch"}


def released_versions(engine: str) -> set[str]:
    """The releases `pip index versions` lists for the engine's package (empty when it cannot say)."""
    package = PACKAGES.get(engine)
    if package is None:
        return set()
    cmd = [sys.executable, "-m", "pip", "index", "versions", package]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    m = re.search(r"^Available versions: (.+)$", proc.stdout, re.MULTILINE)
    return {v.strip() for v in m.group(1).split(",")} if proc.returncode == 0 and m else set()


def named_versions(item: LoadedAdvisory) -> list[Version]:
    versions = [spec.version for ranges in item.ranges for spec in ranges.specs]
    if item.advisory.fixed_in is not None:
        versions.append(Version(item.advisory.fixed_in))
    return versions


def check_advisories(
    advisories: Iterable[LoadedAdvisory] | None = None, releases: Callable[[str], set[str]] = released_versions
) -> list[str]:
    """One line per version an advisory names that is not a release (nor a pre-release of one)."""
    problems: list[str] = []
    known: dict[str, set[Version]] = {}
    for item in builtin_advisories() if advisories is None else advisories:
        engine = item.advisory.engine
        if engine not in known:
            known[engine] = {Version(v) for v in releases(engine) if _parses(v)}
        if not known[engine]:
            continue  # the index could not say (offline, or an engine without a package): nothing to check
        for version in named_versions(item):
            if not version.is_prerelease and version.public not in known[engine]:
                problems.append(f"{item.path}: {engine} {version} is not a released version")
    return problems


def _parses(text: str) -> bool:
    try:
        Version(text)
    except ValueError:
        return False
    return True
