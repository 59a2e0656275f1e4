"""Reading back what `diagnose --save` wrote: whether a saved bundle says it is partial.

Apart from `logdoctor.sources.ssh` (which imports paramiko, about 0.1 s) so that `diagnose FILE` of a
local log does not pay for the SSH collector (docs/benchmarks.md, *Start-up*); `sources.ssh` re-exports it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

MANIFEST_LIMIT = 64 * 1024 * 1024  # a manifest.json larger than this is not read back


def saved_bundle_problems(paths: Sequence[str]) -> list[str]:
    """For `diagnose DIR/<host>/*.log`: one line for each saved bundle among `paths` whose manifest says
    it is partial (the collection was cut, timed out or capped, or the save itself did not finish)."""
    problems: list[str] = []
    seen: set[str] = set()
    for p in paths:
        if p == "-":
            continue
        folder = os.path.dirname(os.path.abspath(p))
        if folder in seen:
            continue
        seen.add(folder)
        where = os.path.join(folder, "manifest.json")
        try:
            fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "rb") as fh:
                raw = fh.read(MANIFEST_LIMIT + 1)
            data = json.loads(raw) if len(raw) <= MANIFEST_LIMIT else None
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("complete") is not False:
            continue
        why = data.get("incomplete")
        detail = "; ".join(str(w) for w in why) if isinstance(why, list) and why else "no reason recorded"
        problems.append(f"{folder}: partial bundle ({detail})")
    return problems
