"""The fuzz run's count: each shard records how many inputs it ran (`fuzz <kind>`) and its slowest input, summed and
ranked here at the end of the run, from every worker of `-n` too."""

from __future__ import annotations

from collections import Counter

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts: Counter[str] = Counter()
    slowest: list[tuple[float, str, int, int, str]] = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "call":
                continue
            for name, value in getattr(report, "user_properties", ()):
                if name == "fuzz slowest" and isinstance(value, tuple | list):  # a list once it crossed from a worker
                    slowest.append(tuple(value))
                elif isinstance(name, str) and name.startswith("fuzz ") and isinstance(value, int):
                    counts[name.removeprefix("fuzz ")] += value
    if counts:
        parts = ", ".join(f"{count:,} {kind}" for kind, count in counts.items())
        terminalreporter.write_line(f"fuzz inputs run: {sum(counts.values()):,} ({parts})")
    for seconds, kind, shard, index, name in sorted(slowest, reverse=True)[:5]:
        terminalreporter.write_line(f"slowest: {seconds:.2f} s CPU, {kind} shard {shard} input {index} ({name})")
