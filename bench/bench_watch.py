"""What one `logdoctor watch` redraw costs, re-parsing everything read (before) against parsing only new lines.

A generated vLLM serving log (bench/gen_log.py) is read into a watcher as `watch` reads a file; at each
checkpoint (every `--step` candidate lines) one redraw's diagnosis is timed both ways on the same lines:

    full         every candidate line parsed again, then the rules (what watch did before)
    incremental  only the lines since the last redraw parsed, the end of the source peeked, then the rules

Both diagnoses are compared (JSON) at every checkpoint; the script fails if they differ. Usage:

    .venv/bin/python bench/bench_watch.py                    # 128 MiB log, a redraw every 1,000 candidates
    .venv/bin/python bench/bench_watch.py --size 16M --step 200
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))

from logdoctor.app.commands.common import load_rule_set  # noqa: E402
from logdoctor.app.watch import Watcher  # noqa: E402
from logdoctor.pipeline.run import diagnose_parsed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", default="128M")
    parser.add_argument("--step", type=int, default=1_000, help="candidate lines between two redraws")
    args = parser.parse_args()
    log = BENCH / "out" / f"vllm-serve-{args.size}.log"
    if not log.exists():
        log.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(BENCH / "gen_log.py"), "--size", args.size, "--out", str(log)], check=True)
    rules = load_rule_set((), False)
    quiet = Console(file=io.StringIO())
    watcher = Watcher(
        str(log), rules, engine="auto", suppressions=None, interval=1, console=quiet, err=quiet, live=False, render=str
    )
    print(f"{log.name}: {log.stat().st_size / 2**20:.0f} MiB; a redraw every {args.step:,} candidate lines")
    print(f"{'candidates':>11} {'full s':>8} {'incr s':>8} {'ratio':>6}")
    totals = [0.0, 0.0]
    next_at = args.step
    with log.open("rb") as handle:
        for raw in handle:
            watcher._add(raw.rstrip(b"\n"))
            kept = len(watcher.segments[-1].lines)
            if kept < next_at:
                continue
            next_at += args.step
            t0 = time.perf_counter()
            incremental = diagnose_parsed(watcher.parsed(), rules, engine="auto")[0]
            t1 = time.perf_counter()
            full = diagnose_parsed(watcher.parsed_again(), rules, engine="auto")[0]
            t2 = time.perf_counter()
            if incremental.model_dump_json() != full.model_dump_json():
                print(f"at {kept:,} candidates the diagnoses differ", file=sys.stderr)
                return 1
            totals[0] += t2 - t1
            totals[1] += t1 - t0
            print(f"{kept:>11,} {t2 - t1:>8.3f} {t1 - t0:>8.3f} {(t2 - t1) / (t1 - t0):>5.1f}x")
    print(
        f"{'all redraws':>11} {totals[0]:>8.2f} {totals[1]:>8.2f} {totals[0] / totals[1]:>5.1f}x  (diagnoses identical)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
