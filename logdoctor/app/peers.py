"""The hosts of a multi-host run whose GPUs differ from their peers': clocks, PCIe link, power limit, faults.

    host-state outliers: 1 of 4 hosts differs from their peers
      node3  PCIe link GPU 0: gen4 x4 of gen4 x16 (busy), 25% of its bandwidth (peers: 100%)   12.1 tok/s per
             request (fleet median 30.5)

Each host is compared with the median of the others that report the same fact (at least two hosts must report
it), so a fleet of identical machines names none of them, and one GPU host among CPU hosts is not compared.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from logdoctor.engine.result import Diagnosis
from logdoctor.sanitize import clean_text

# a busy GPU's clock this far below its peers' is not the spread of one model's load over identical GPUs
CLOCK_SHARE = 0.85
POWER_LIMIT_GAP = 0.05  # power limit / default below the peers' by more than this


@dataclass(frozen=True)
class HostDifference:
    """One host whose GPUs differ from its peers', with its measured speed and the fleet's where known."""

    host: str
    differences: list[str]
    per_request: float | None
    median: float | None

    @property
    def reason(self) -> str:
        return "; ".join(self.differences)


def _number(facts: dict[str, Any], name: str) -> float | None:
    value = facts.get(name)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _speed(d: Diagnosis) -> float | None:
    return d.performance.measured_per_request_tok_s if d.performance is not None else None


def _compare(
    facts: Sequence[dict[str, Any]], name: str, differs: Callable[[float, float], bool]
) -> list[tuple[float, float] | None]:
    """For each host, (its value, the median of its peers') where it differs from them, else None."""
    values = [_number(f, name) for f in facts]
    out: list[tuple[float, float] | None] = []
    for i, value in enumerate(values):
        peers = [v for j, v in enumerate(values) if j != i and v is not None]
        if value is None or not peers:
            out.append(None)
            continue
        median = statistics.median(peers)
        out.append((value, median) if differs(value, median) else None)
    return out


def host_outliers(hosts: Sequence[str], diagnoses: Sequence[Diagnosis]) -> list[HostDifference]:
    """The hosts whose GPU state differs from the others', in the order given."""
    facts = [d.facts for d in diagnoses]
    link = _compare(facts, "gpu.pcie_link_ratio", lambda v, m: v < 1.0 and v < m)
    clock = _compare(facts, "gpu.sm_clock_ratio", lambda v, m: v < CLOCK_SHARE * m)
    power = _compare(facts, "gpu.power_limit_ratio", lambda v, m: v < m - POWER_LIMIT_GAP)
    faults = _compare(facts, "gpu.hardware_error_count", lambda v, m: v > 0 and m == 0)
    slowdown = _compare(facts, "gpu.slowdown_s", lambda v, m: v >= 1 and m < 1)
    others = _compare(facts, "gpu.other_processes", lambda v, m: v >= 1 and m == 0)
    speeds = [s for s in (_speed(d) for d in diagnoses) if s is not None]
    median_speed = statistics.median(speeds) if len(speeds) >= 2 else None
    out: list[HostDifference] = []
    for i, (host, f) in enumerate(zip(hosts, facts, strict=True)):
        found: list[str] = []
        if (pair := link[i]) is not None:
            found.append(f"PCIe link {f.get('gpu.pcie_link')}, {pair[0]:.0%} of its bandwidth (peers: {pair[1]:.0%})")
        if (pair := clock[i]) is not None:
            found.append(f"SM clock {f.get('gpu.sm_clock')} busy, {pair[0]:.2f} of max (peers: {pair[1]:.2f})")
        if (pair := power[i]) is not None:
            found.append(f"power {f.get('gpu.power_limit')}, {pair[0]:.0%} of default (peers: {pair[1]:.0%})")
        if (pair := faults[i]) is not None:
            errors = f.get("gpu.hardware_errors") or []
            first = f": {errors[0]}" if isinstance(errors, list) and errors else ""
            found.append(f"{pair[0]:.0f} hardware fault(s){first} (peers: none)")
        if (pair := slowdown[i]) is not None:
            found.append(f"{pair[0]:.0f} s of thermal slowdown or power braking recorded (peers: none)")
        if (pair := others[i]) is not None:
            found.append(f"{pair[0]:.0f} other process(es) holding GPU memory (peers: none)")
        if found:
            out.append(HostDifference(host, found, _speed(diagnoses[i]), median_speed))
    return out


def outlier_lines(outliers: Sequence[HostDifference], hosts: int) -> list[str]:
    """The section the terminal and Markdown reports print after the fleet table."""
    if not outliers:
        return []
    verb = "differs" if len(outliers) == 1 else "differ"
    lines = [f"host-state outliers: {len(outliers)} of {hosts} hosts {verb} from their peers"]
    for o in outliers:
        speed = ""
        if o.per_request is not None:
            fleet = f" (fleet median {o.median:.1f})" if o.median is not None else ""
            speed = f"; {o.per_request:.1f} tok/s per request{fleet}"
        lines.append(clean_text(f"  {o.host}: {o.reason}{speed}"))
    return lines
