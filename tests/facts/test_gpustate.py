"""The GPUs' state from nvidia-smi: busy or idle, what holds the clocks, the link against its maximum, faults and
other processes, and how the host rules read it (normal power management and idle links stay quiet)."""

from __future__ import annotations

from pathlib import Path

from logdoctor.engine.evaluate import evaluate_rule
from logdoctor.engine.rules import load_rules
from logdoctor.facts import Profile
from logdoctor.pipeline.run import LineSource, parse_sources, profile_of

ROOT = Path(__file__).resolve().parents[2]
ENV = ROOT / "fixtures" / "inputs" / "env"
RULES = {r.id: r for r in load_rules()}


def _profile(*texts: str) -> Profile:
    sources = [LineSource(f"input{i}.txt", list(enumerate(t.splitlines(), 1))) for i, t in enumerate(texts)]
    return profile_of(parse_sources(sources))


def _outcome(rule: str, profile: Profile) -> str:
    outcome, _ = evaluate_rule(RULES[rule], profile, lambda source, number: None)
    return outcome.outcome


CSV = "index, name, utilization.gpu [%], clocks.current.sm [MHz], clocks.max.sm [MHz], clocks_event_reasons.active, "
CSV += "power.draw [W], power.limit [W], power.default_limit [W], pcie.link.gen.current, pcie.link.gen.max, "
CSV += "pcie.link.width.current, pcie.link.width.max\n"


def test_an_h200_at_its_default_limit_under_load_is_not_throttled() -> None:
    """The real capture: SW Power Cap active, SM 1440 of 1980 MHz, 690 of 700 W: normal power management."""
    p = _profile((ENV / "nvidia-smi-q-h200-load-captured.txt").read_text(encoding="utf-8"))
    assert p.value("gpu.busy") is True
    assert p.value("gpu.clock_events") == ["power-cap"]
    assert p.value("gpu.sm_clock_ratio") == 0.727
    assert p.value("gpu.power_limit_ratio") == 1.0
    assert p.value("gpu.hardware_error_count") == 0.0
    assert _outcome("clocks-held-back", p) == "ruled_out"
    assert _outcome("link-below-max", p) == "ruled_out"
    assert _outcome("gpu-faults", p) == "ruled_out"
    assert _outcome("other-processes", p) == "ruled_out"


def test_a_lowered_power_limit_under_load_is_throttling() -> None:
    p = _profile(CSV + "0, NVIDIA H200, 100 %, 1005 MHz, 1980 MHz, 0x4, 448.90 W, 450.00 W, 700.00 W, 5, 5, 16, 16")
    assert p.value("gpu.power_limit_ratio") == 0.643
    assert _outcome("clocks-held-back", p) == "fired"


def test_thermal_slowdown_under_load_is_throttling_whatever_the_limit() -> None:
    p = _profile(
        CSV + "0, NVIDIA RTX A4000, 100 %, 1400 MHz, 2100 MHz, 0x40, 120.00 W, 140.00 W, 140.00 W, 4, 4, 16, 16"
    )
    assert p.value("gpu.clock_events") == ["hw-thermal"]
    assert _outcome("clocks-held-back", p) == "fired"


def test_an_idle_gpu_is_not_read_for_clocks_and_its_downtrained_link_is_a_note() -> None:
    p = _profile(CSV + "0, NVIDIA H200, 0 %, 345 MHz, 1980 MHz, 0x1, 80.52 W, 700.00 W, 700.00 W, 1, 5, 16, 16")
    assert _outcome("clocks-held-back", p) == "ruled_out"
    # gen1 at idle is power saving: counted at its maximum, not fired, not called fine either
    assert p.value("gpu.pcie_link_degraded") is False and p.value("gpu.pcie_idle_downtrained") is True
    assert _outcome("link-below-max", p) == "insufficient_data"


def test_a_narrow_link_counts_at_any_load_and_a_busy_generation_drop_too() -> None:
    idle_x8 = _profile(
        CSV + "0, NVIDIA GeForce RTX 5090, 0 %, 300 MHz, 3090 MHz, 0x1, 20.00 W, 575.00 W, 575.00 W, 1, 5, 8, 16"
    )
    assert idle_x8.value("gpu.pcie_link_ratio") == 0.5 and _outcome("link-below-max", idle_x8) == "fired"
    busy_gen4 = _profile(
        CSV + "0, NVIDIA GeForce RTX 5090, 99 %, 2700 MHz, 3090 MHz, 0x4, 570.00 W, 575.00 W, 575.00 W, 4, 5, 16, 16"
    )
    assert busy_gen4.value("gpu.pcie_link") == "GPU 0: gen4 x16 of gen5 x16 (busy)"
    assert _outcome("link-below-max", busy_gen4) == "fired"


def test_application_xids_are_not_hardware_faults() -> None:
    p = _profile("[ 12.5] NVRM: Xid (PCI:0000:3b:00): 13, pid=2890, name=python3, Graphics SM Warp Exception")
    assert not p.has("gpu.hardware_error_count")
    p = _profile("[ 12.5] NVRM: Xid (PCI:0000:3b:00): 48, pid=77, DBE (0x1,0x2a).")
    assert p.value("gpu.hardware_error_count") == 1.0 and _outcome("gpu-faults", p) == "fired"


def test_a_process_listed_by_q_and_by_the_csv_counts_once() -> None:
    q = (ENV / "nvidia-smi-q-h200-load-captured.txt").read_text(encoding="utf-8")
    apps = (ENV / "compute-apps-h200-load-captured.csv").read_text(encoding="utf-8")
    p = _profile(q, apps)
    assert p.value("gpu.other_processes") == 0.0
    assert p.value("gpu.processes") == ["GPU 00000000:00:06.0: pid 616 python3 1130 MiB"]


def test_without_a_utilisation_reading_a_draw_at_the_limit_is_busy() -> None:
    """A rig report gives power, not utilisation: 248 W drawn of a 250 W cap (default 350 W) is a GPU at work held
    to a lowered limit, which holds its clocks down; 25 W of it is an idle one, whose load stays unknown."""
    rig = (
        "- **GPU 0:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 595.71.05 | VBIOS 94.02.42.40.A2 | persistence=Enabled\n"
        "  - **Power:** limit=250.00 W (default=350.00 W, max=350.00 W) | current_draw={draw} W\n"
    )
    busy = _profile(rig.format(draw="248.10"))
    assert busy.value("gpu.busy") is True and not busy.has("gpu.utilization")
    assert busy.value("gpu.power_at_limit") is True
    assert _outcome("clocks-held-back", busy) == "fired"  # at a limit 71% of the default
    idle = _profile(rig.format(draw="24.67"))
    assert not idle.has("gpu.busy")


def test_persistence_mode_from_the_query_and_counters_from_the_performance_display() -> None:
    """The host facts ask `--query-gpu` for persistence mode and `-q -d PERFORMANCE` for the clock event counters
    (real captures of an idle H200): together they give what the whole `-q` gave those facts."""
    p = _profile(
        (ENV / "query-gpu-persistence-h200-captured.csv").read_text(encoding="utf-8"),
        (ENV / "nvidia-smi-q-d-performance-h200-idle-captured.txt").read_text(encoding="utf-8"),
    )
    assert p.value("gpu.persistence_mode") is True
    assert p.value("gpu.slowdown_s") == 0.0
    off = _profile("index, persistence_mode, name\n0, Disabled, NVIDIA H200\n1, Enabled, NVIDIA H200\n")
    assert off.value("gpu.persistence_mode") is False  # one GPU without it is enough
