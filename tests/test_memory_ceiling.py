"""A memory ceiling of `diagnose` that does not depend on the machine's speed: the peak RSS of a real
`logdoctor diagnose` of a generated event-dense log (every line an event, the worst case for memory).

diagnose holds its events and evidence lines compressed (eventlog.EventLog, eventlog.LineTexts, about 100 bytes a
line together), combines them as they are parsed (facts.ProfileStream) and keeps its series bounded
(facts/series.py), so 30,000 stats and SpecDecoding lines peak at 54.7 MiB, 4.5 MiB above the same command on
a 10-event log (50.2 MiB: the interpreter with logdoctor imported; docs/benchmarks.md, *Memory*). The test measures
both in the same run and bounds the difference, which does not depend on what start-up imports: holding the
pydantic events again (about 4 KiB each) would add some 120 MiB, a plain copy of every line's text 11 MiB.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EVENTS = 30_000  # lines after the version line: half stats, half SpecDecoding
CEILING_MIB = 70  # the whole process
ABOVE_FLOOR_MIB = 12  # above the same diagnose of the version line and the first 10 event lines
VERSION = "(APIServer pid=1) INFO 05-08 14:02:11 [api_server.py:1] vLLM API server version 0.20.1\n"
STATS = (
    "(APIServer pid=1) INFO 05-08 16:{m:02d}:{s:02d} [loggers.py:271] Engine 000: Avg prompt throughput: {p:.1f} "
    "tokens/s, Avg generation throughput: 18.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: "
    "0.4%, Prefix cache hit rate: 0.0%\n"
)
SPEC = (
    "(APIServer pid=1) INFO 05-08 16:{m:02d}:{s:02d} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
    "{length:.2f}, Accepted throughput: 0.50 tokens/s, Drafted throughput: 25.50 tokens/s, Accepted: 5 tokens, "
    "Drafted: 255 tokens, Per-position acceptance rate: 0.200, 0.059, 0.020, 0.010, 0.000, 0.000, 0.000, 0.000, "
    "0.000, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 1.9%\n"
)
# Measured in a process of its own: RUSAGE_CHILDREN of a test worker holds every child it ever waited for.
MEASURE = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "sys.stdout.write(r.stdout); sys.stderr.write(r.stderr); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(r.returncode)"
)


def _write(path: Path, events: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(VERSION)
        for i in range(events // 2):
            fh.write(STATS.format(m=i // 60 % 60, s=i % 60, p=i % 997 / 10))
            fh.write(SPEC.format(m=i // 60 % 60, s=i % 60, length=1 + i % 89 / 100))


def _diagnose_peak_mib(path: Path) -> tuple[float, str]:
    command = [sys.executable, "-m", "logdoctor", "diagnose", str(path), "--format", "json", "--fail-on", "never"]
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr
    return int(result.stderr.strip().splitlines()[-1]) / 1024, result.stdout


def test_diagnose_of_an_event_dense_log_stays_under_its_memory_ceiling(tmp_path: Path) -> None:
    dense, short = tmp_path / "dense.log", tmp_path / "short.log"
    _write(dense, EVENTS)
    _write(short, 10)
    floor_mib, short_report = _diagnose_peak_mib(short)
    peak_mib, report = _diagnose_peak_mib(dense)
    assert '"throughput.intervals": 5.0' in short_report
    assert f'"throughput.intervals": {EVENTS // 2}.0' in report  # every stats line was read
    print(f"diagnose of {EVENTS:,} events: {peak_mib:.1f} MiB; of 10: {floor_mib:.1f} MiB")
    assert peak_mib < CEILING_MIB, f"diagnose of {EVENTS:,} events peaked at {peak_mib:.0f} MiB"
    assert peak_mib - floor_mib < ABOVE_FLOOR_MIB, (
        f"diagnose of {EVENTS:,} events peaked at {peak_mib:.1f} MiB, {peak_mib - floor_mib:.1f} MiB above the "
        f"{floor_mib:.1f} MiB of 10 events"
    )
