"""A memory ceiling of `diagnose` that does not depend on the machine's speed: the peak RSS of a real
`logdoctor diagnose` of a generated event-dense log (every line an event, issue 15's worst case).

Today diagnose keeps every event and its line text, about 4 KiB an event (docs/benchmarks.md,
*Memory*): 12,000 stats lines peak near 100 MiB. The ceiling catches a regression (a copy more of
every event); it is not issue 15's target (150 MB for 300 MB of such lines), which needs streaming facts.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EVENTS = 12_000
CEILING_MIB = 180
VERSION = "(APIServer pid=1) INFO 05-08 14:02:11 [api_server.py:1] vLLM API server version 0.20.1\n"
STATS = (
    "(APIServer pid=1) INFO 05-08 16:{m:02d}:{s:02d} [loggers.py:271] Engine 000: Avg prompt throughput: {p:.1f} "
    "tokens/s, Avg generation throughput: 18.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: "
    "0.4%, Prefix cache hit rate: 0.0%\n"
)
# Measured in a process of its own: RUSAGE_CHILDREN of a test worker holds every child it ever waited for.
MEASURE = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
    "sys.stderr.write(r.stderr); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(r.returncode)"
)


def test_diagnose_of_an_event_dense_log_stays_under_its_memory_ceiling(tmp_path: Path) -> None:
    path = tmp_path / "dense.log"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(VERSION)
        for i in range(EVENTS):
            fh.write(STATS.format(m=i // 60 % 60, s=i % 60, p=i % 997 / 10))
    command = [sys.executable, "-m", "logdoctor", "diagnose", str(path), "--format", "json", "--fail-on", "never"]
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr
    peak_mib = int(result.stderr.strip().splitlines()[-1]) / 1024
    assert peak_mib < CEILING_MIB, f"diagnose of {EVENTS:,} events peaked at {peak_mib:.0f} MiB"
