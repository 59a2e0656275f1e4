"""A GPU's state as nvidia-smi prints it, in both its forms, read into GpuInfo's state fields.

    nvidia-smi -q                                    nvidia-smi --query-gpu=... --format=csv
    Performance State : P0                           pstate                       P0
    Utilization / GPU : 100 %                        utilization.gpu [%]          100 %
    Clocks Event Reasons / SW Power Cap : Active     clocks_event_reasons.active  0x0000000000000004
    GPU Power Readings / Current Power Limit : 700 W power.limit [W]              700.00 W

Key names come from a captured `nvidia-smi -q` and `--help-query-gpu` of driver 580 (fixtures/inputs/host);
drivers before 535 print `Clocks Throttle Reasons` / `clocks_throttle_reasons.*` and `Power Readings` /
`Power Draw` / `Power Limit` / `Enforced Power Limit`, which are read the same way.
"""

from __future__ import annotations

import re
from typing import Any

_NUMBER_RE = re.compile(r"^(?P<n>-?\d+(?:\.\d+)?)")

# nvidia-smi's clock event (throttle) reason names -> the ids GpuInfo.clock_events holds
CLOCK_EVENTS: dict[str, str] = {
    "Idle": "idle",
    "GPU Idle": "idle",
    "Applications Clocks Setting": "app-clocks",
    "SW Power Cap": "power-cap",
    "HW Slowdown": "hw-slowdown",
    "HW Thermal Slowdown": "hw-thermal",
    "HW Power Brake Slowdown": "power-brake",
    "Sync Boost": "sync-boost",
    "SW Thermal Slowdown": "sw-thermal",
    "Display Clock Setting": "display",
}
# NVML's nvmlClocksEventReason* bits, which `clocks_event_reasons.active` prints as a hexadecimal mask
_CLOCK_EVENT_BITS: tuple[tuple[int, str], ...] = (
    (0x1, "idle"),
    (0x2, "app-clocks"),
    (0x4, "power-cap"),
    (0x8, "hw-slowdown"),
    (0x10, "sync-boost"),
    (0x20, "sw-thermal"),
    (0x40, "hw-thermal"),
    (0x80, "power-brake"),
    (0x100, "display"),
)
# the CSV's one-reason columns (`clocks_event_reasons.sw_power_cap`, older `clocks_throttle_reasons.*`)
_CLOCK_EVENT_COLUMNS: dict[str, str] = {
    "gpu_idle": "idle",
    "applications_clocks_setting": "app-clocks",
    "sw_power_cap": "power-cap",
    "hw_slowdown": "hw-slowdown",
    "hw_thermal_slowdown": "hw-thermal",
    "hw_power_brake_slowdown": "power-brake",
    "sync_boost": "sync-boost",
    "sw_thermal_slowdown": "sw-thermal",
    "display_clock_setting": "display",
}
_EVENT_SECTIONS = ("Clocks Event Reasons", "Clocks Throttle Reasons")
_SLOWDOWN_COUNTERS = ("SW Thermal Slowdown", "HW Thermal Slowdown", "HW Power Braking")
_POWER_SECTIONS = ("GPU Power Readings", "Power Readings")


def number(text: str | None) -> float | None:
    """`700.00 W` -> 700.0, `58 C` -> 58.0, `100 %` -> 100.0; `N/A`, `[N/A]`, `Unknown Error` -> None."""
    m = _NUMBER_RE.match((text or "").strip())
    return float(m.group("n")) if m else None


def _int(text: str | None) -> int | None:
    value = number(text)
    return None if value is None else int(value)


def _yes(text: str | None) -> bool | None:
    value = (text or "").strip().lower()
    return True if value == "yes" else False if value == "no" else None


def _first(rows: dict[tuple[str, ...], str], *keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = rows.get(key)
        if value is not None and number(value) is not None:
            return value
    return None


def _ordered(events: set[str]) -> list[str]:
    return [name for _, name in _CLOCK_EVENT_BITS if name in events]


def from_smi_rows(rows: dict[tuple[str, ...], str]) -> dict[str, Any]:
    """GpuInfo's state fields from one GPU section of `nvidia-smi -q` (rows keyed by their section path)."""
    events: set[str] = set()
    seen_events = False
    uncorrected: int | None = None
    slowdown: float | None = None
    for key, value in rows.items():
        if key[0] == "Clocks Event Reasons Counters" and len(key) == 2 and key[1] in _SLOWDOWN_COUNTERS:
            us = number(value)
            if us is not None:
                slowdown = (slowdown or 0.0) + us / 1e6
            continue
        if key[0] in _EVENT_SECTIONS and len(key) == 2 and key[1] in CLOCK_EVENTS:
            seen_events = True
            if value.strip() == "Active":
                events.add(CLOCK_EVENTS[key[1]])
        elif key[:2] == ("ECC Errors", "Volatile") and (
            "Uncorrectable" in key[-1] or (len(key) == 4 and key[2] == "Double Bit" and key[3] == "Total")
        ):
            count = _int(value)
            if count is not None:
                uncorrected = (uncorrected or 0) + count
    power = [s for s in _POWER_SECTIONS if any(k[0] == s for k in rows)]
    section = power[0] if power else _POWER_SECTIONS[0]
    recovery = (rows.get(("GPU Recovery Action",)) or "").strip()
    pending_pages = _yes(rows.get(("Retired Pages", "Pending Page Blacklist"))) or _yes(
        rows.get(("Retired Pages", "Pending Page Retirement"))
    )
    remap_pending = _yes(rows.get(("Remapped Rows", "Pending")))
    return {
        "pstate": rows.get(("Performance State",)),
        "utilization_pct": _int(rows.get(("Utilization", "GPU"))),
        "memory_used_mib": _int(rows.get(("FB Memory Usage", "Used"))),
        "temperature_c": _int(rows.get(("Temperature", "GPU Current Temp"))),
        "power_draw_w": number(
            _first(
                rows, (section, "Average Power Draw"), (section, "Power Draw"), (section, "Instantaneous Power Draw")
            )
        ),
        "power_limit_w": number(
            _first(rows, (section, "Current Power Limit"), (section, "Enforced Power Limit"), (section, "Power Limit"))
        ),
        "power_default_limit_w": number(rows.get((section, "Default Power Limit"))),
        "power_max_limit_w": number(rows.get((section, "Max Power Limit"))),
        "clock_events": _ordered(events) if seen_events else None,
        "slowdown_s": None if slowdown is None else round(slowdown, 3),
        "ecc_uncorrected": uncorrected,
        "remap_pending": None
        if remap_pending is None and pending_pages is None
        else bool(remap_pending or pending_pages),
        "remap_failed": _yes(rows.get(("Remapped Rows", "Remapping Failure Occurred"))),
        "recovery_action": recovery if recovery and recovery not in ("None", "N/A") else None,
    }


def _csv(row: dict[str, str | None], *names: str) -> str | None:
    for name in names:
        value = row.get(name)
        if value is not None:
            return value
    return None


def _csv_events(row: dict[str, str | None]) -> list[str] | None:
    mask = _csv(row, "clocks_event_reasons.active", "clocks_throttle_reasons.active")
    if mask is not None:
        try:
            bits = int(mask, 16)
        except ValueError:
            bits = None
        if bits is not None:
            return [name for bit, name in _CLOCK_EVENT_BITS if bits & bit]
    events: set[str] = set()
    seen = False
    for field, value in row.items():
        prefix, _, reason = field.partition(".")
        if prefix in ("clocks_event_reasons", "clocks_throttle_reasons") and reason in _CLOCK_EVENT_COLUMNS:
            seen = seen or value is not None
            if (value or "").strip() == "Active":
                events.add(_CLOCK_EVENT_COLUMNS[reason])
    return _ordered(events) if seen else None


def from_csv_row(row: dict[str, str | None]) -> dict[str, Any]:
    """GpuInfo's fields from one row of `nvidia-smi --query-gpu=... --format=csv` (units already cut from the
    header; N/A cells are None). The header prints canonical names (`clocks.current.sm` for `clocks.sm`)."""
    remap = _yes(row.get("remapped_rows.pending"))
    pages = _yes(row.get("retired_pages.pending"))
    persistence = (row.get("persistence_mode") or "").strip()
    return {
        "persistence_mode": None if persistence not in ("Enabled", "Disabled") else persistence == "Enabled",
        "pstate": row.get("pstate"),
        "utilization_pct": _int(row.get("utilization.gpu")),
        "memory_used_mib": _int(row.get("memory.used")),
        "temperature_c": _int(row.get("temperature.gpu")),
        "power_draw_w": number(_csv(row, "power.draw", "power.draw.average", "power.draw.instant")),
        "power_limit_w": number(_csv(row, "enforced.power.limit", "power.limit")),
        "power_default_limit_w": number(row.get("power.default_limit")),
        "power_max_limit_w": number(row.get("power.max_limit")),
        "clock_events": _csv_events(row),
        "ecc_uncorrected": _int(row.get("ecc.errors.uncorrected.volatile.total")),
        "remap_pending": None if remap is None and pages is None else bool(remap or pages),
        "remap_failed": _yes(row.get("remapped_rows.failure")),
        "sm_clock_mhz": _int(_csv(row, "clocks.current.sm", "clocks.sm")),
        "sm_clock_max_mhz": _int(_csv(row, "clocks.max.sm", "clocks.max.sm_clock")),
        "pcie_generation": _int(_csv(row, "pcie.link.gen.current", "pcie.link.gen.gpucurrent")),
        "pcie_generation_max": _int(_csv(row, "pcie.link.gen.max", "pcie.link.gen.gpumax")),
        "pcie_width": _int(row.get("pcie.link.width.current")),
        "pcie_width_max": _int(row.get("pcie.link.width.max")),
    }
