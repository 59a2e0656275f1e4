"""Start-up time of `logdoctor --version`, `--help` and `diagnose` of a 10-line log, against `python3 -c pass`.

Each round runs every command once, alternating them with `python3 -c pass` (the floor: an interpreter
that imports nothing), and the order of the commands flips every round, so a burst of load on this
shared machine hits all of them. The result is the median of each command's wall times and its ratio
to the median of `python3 -c pass` in the same run (docs/benchmarks.md, *Start-up*).

    .venv/bin/python bench/bench_startup.py                      # 15 rounds, this tree
    .venv/bin/python bench/bench_startup.py --baseline /tmp/ld-base --runs 21 --record

This tree is run as the `logdoctor` console script beside this python (installed editable, or as a wheel
built from the tree); a `--baseline` tree (e.g. `git archive` of an older commit, with `rules/` copied to
`logdoctor/_rules` where no editable install maps it) as `PYTHON -c LAUNCHER TREE ARGS...`: the launcher
puts TREE first on sys.path and calls `logdoctor.app.cli:main`, the command group, under the same interpreter and
packages (this tree's console script is `logdoctor.app.entry:main`, which answers a lone `--version` without click;
an older tree's script called the group itself). Before timing, both packages are byte-compiled (`compileall`), as `pip install` does:
this environment sets PYTHONDONTWRITEBYTECODE=1, under which every start would compile logdoctor's
sources again (`--no-compile` measures that case).

The 10-line log is the first 10 lines of fixtures/logs/story/vllm-dflash-tp2-a6000.log (the vLLM banner,
`non-default args` and the resolved architecture), written to bench/out/startup-10-lines.log.
"""

from __future__ import annotations

import argparse
import compileall
import datetime
import importlib.util
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "benchmarks.md"
OUT = REPO / "bench" / "out"
STORY = REPO / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
SECTION = "## Start-up"
LAUNCHER = (
    "import sys; tree = sys.argv[1]; del sys.argv[1]; sys.argv[0] = 'logdoctor'; sys.path.insert(0, tree); "
    "from logdoctor.app.cli import main; main()"
)
TARGETS_MS = {"--version": 100.0, "--help": 100.0, "diagnose": 300.0}
ENV_NO_CACHE = "LOGDOCTOR_NO_CACHE"  # logdoctor/cache.py: the parsed-condition cache off


def logdoctor_bin() -> str:
    """The `logdoctor` console script beside this python (this tree's, installed editable or as a wheel)."""
    here = Path(sys.executable).parent / "logdoctor"
    return str(here) if here.exists() else (shutil.which("logdoctor") or "logdoctor")


def ten_line_log() -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "startup-10-lines.log"
    with STORY.open("rb") as fh:
        lines = [fh.readline() for _ in range(10)]
    path.write_bytes(b"".join(lines))
    return path


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall, CPU user+sys) of one run; the CPU comes from RUSAGE_CHILDREN (runs are sequential)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # diagnose exits 1 when a finding reaches --fail-on
        raise SystemExit(f"bench_startup: {' '.join(cmd)} exited {done.returncode}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# Where a 10-line diagnose spends its CPU: the imports and steps of `diagnose`, in its order, each timed with
# process_time in one fresh process (a step pays for what the steps before it did not import).
# Where a 10-line diagnose goes: the imports and steps of `diagnose`, in its order. `--stages` times each with
# process_time in one fresh process (a step pays for what the steps before it did not import); `--instructions`
# counts the instructions of a process that runs the steps up to each one (valgrind), so each row's cost is the
# difference to the row before.
# The console script runs a command with logdoctor's regexes compiled on first use (logdoctor/app/entry.py), and so
# does the first step here; pydantic is not imported by a text report (records; docs/benchmarks.md), and the engine
# packages are imported by the parse, for the lines that hold their keywords (logdoctor/registry.py).
STAGE_STEPS: tuple[tuple[str, str], ...] = (
    (
        "import logdoctor.app.commands.diagnose (click, its options; regexes lazy as under the console script)",
        "from logdoctor.regexes import lazy_regexes\n"
        "lazy_regexes(['logdoctor']).__enter__()\n"
        "import logdoctor.app.commands.diagnose",
    ),
    ("the event models (logdoctor.events)", "import logdoctor.events"),
    ("the registry's table (no engine package)", "from logdoctor.registry import REGISTRY; REGISTRY.names()"),
    ("the rule engine's modules", "import logdoctor.engine.rules, logdoctor.engine.evaluate"),
    ("loading the built-in rules", "from logdoctor.engine.rules import load_rules; load_rules()"),
    (
        "diagnose's other modules",
        "import logdoctor.app.deployments, logdoctor.perf.options, logdoctor.app.progress, logdoctor.app.fleet",
    ),
    # the text report's modules: `--format json` imports logdoctor.report.json instead (commands/common.emit);
    # rich only where it draws (a terminal, colour, COLUMNS: report/plain.py)
    ("the report modules", "import logdoctor.report.formats, logdoctor.report.terminal"),
    (
        "parsing the 10 lines (the engine packages they need)",
        "from logdoctor.parse.pipeline import EventStream\n"
        "with open(sys.argv[1], encoding='utf-8') as fh:\n"
        "    list(EventStream('log', enumerate(fh.read().splitlines(), 1)))",
    ),
)


def stage_program(upto: int | None = None, *, timed: bool = True) -> str:
    """The steps (the first `upto` of them), each followed by a process_time mark when `timed`."""
    lines = [
        "import sys, time",
        "marks, last = [], time.process_time()",
        "def mark(name):",
        "    global last",
        "    now = time.process_time(); marks.append((name, (now - last) * 1000)); last = now",
    ]
    for name, code in STAGE_STEPS[:upto]:
        lines.append(code)
        if timed:
            lines.append(f"mark({name!r})")
    if timed:
        lines.append('print("\\t".join(f"{name}={ms:.1f}" for name, ms in marks))')
    return "\n".join(lines) + "\n"


STAGES = stage_program()


def instructions(cmd: list[str], env: dict[str, str] | None = None) -> int:
    """Instructions one run executes, counted by valgrind's callgrind: unlike wall or CPU time, the count does
    not move with the load of a shared machine (each command is run once; the count varies by well under 1%)."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        check=False,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"bench_startup: valgrind printed no instruction count for {' '.join(cmd)}")
    return int(found.group(1))


def stages(log: Path, runs: int, env: dict[str, str]) -> list[str]:
    """The STAGES breakdown: the median of each stage over `runs` fresh processes, as table rows."""
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", STAGES, str(log)], env=env, capture_output=True, text=True, check=True
        ).stdout
        for item in out.strip().split("\t"):
            name, _, ms = item.rpartition("=")
            samples.setdefault(name, []).append(float(ms))
    rows = ["| stage (CPU, one process, in diagnose's order) | median |", "|---|---:|"]
    rows += [f"| {name} | {statistics.median(values):.0f} ms |" for name, values in samples.items()]
    total = sum(statistics.median(values) for values in samples.values())
    rows.append(f"| sum | {total:.0f} ms |")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--baseline", type=Path, help="also time this tree (e.g. `git archive` of an older commit)")
    parser.add_argument("--python3", default="python3", help="the floor's interpreter (default python3 on PATH)")
    parser.add_argument("--no-compile", action="store_true", help="do not byte-compile the trees first")
    parser.add_argument("--stages", action="store_true", help="also break a 10-line diagnose down by stage (CPU)")
    parser.add_argument(
        "--instructions", action="store_true", help="also count each command's instructions once (valgrind)"
    )
    parser.add_argument("--record", action="store_true", help=f"append the result block to {DOC.relative_to(REPO)}")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    log = ten_line_log()
    installed = importlib.util.find_spec("logdoctor")
    assert installed is not None and installed.origin is not None, "logdoctor is not installed for this python"
    packages = [Path(installed.origin).parent]
    variants: list[tuple[str, list[str]]] = [("", [logdoctor_bin()])]
    if args.baseline:
        baseline = args.baseline.resolve()
        packages.append(baseline / "logdoctor")
        variants.append((" (baseline)", [sys.executable, "-c", LAUNCHER, str(baseline)]))
    if not args.no_compile:  # logdoctor and its dependencies (a venv installed with --no-compile has none)
        for package in [*packages, Path(sysconfig.get_paths()["purelib"])]:
            compileall.compile_dir(str(package), quiet=1)
    # The parsed-condition cache (logdoctor/cache.py) lives in a directory of this run's own, filled by the
    # untimed warm-up; `diagnose, no cache` runs with LOGDOCTOR_NO_CACHE=1, what a first start pays.
    cache_home = OUT / "startup-cache"
    shutil.rmtree(cache_home, ignore_errors=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    env.pop(ENV_NO_CACHE, None)
    cold = {**env, ENV_NO_CACHE: "1"}
    commands: list[tuple[str, list[str], dict[str, str]]] = []
    for suffix, prefix in variants:
        for name, extra, command_env in (
            ("--version", ["--version"], env),
            ("--help", ["--help"], env),
            ("diagnose", ["diagnose", str(log), "--fail-on", "never"], env),
            ("diagnose, no cache", ["diagnose", str(log), "--fail-on", "never"], cold),
        ):
            commands.append((name + suffix, [*prefix, *extra], command_env))
    floor_cmd = [args.python3, "-c", "pass"]
    walls: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    cpus: dict[str, list[float]] = {name: [] for name, _, _ in commands}
    floor: list[float] = []
    floor_cpu: list[float] = []
    for _, cmd, command_env in commands:  # warm the page cache (and the cache of parsed conditions) once, untimed
        timed(cmd, command_env)
    for round_no in range(args.runs):
        order = commands if round_no % 2 == 0 else list(reversed(commands))
        for name, cmd, command_env in order:
            wall, cpu = timed(floor_cmd)
            floor.append(wall)
            floor_cpu.append(cpu)
            wall, cpu = timed(cmd, command_env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    floor_ms = statistics.median(floor) * 1000
    floor_cpu_ms = statistics.median(floor_cpu) * 1000
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"### Start-up, {now}",
        "",
        "Command: `.venv/bin/python bench/bench_startup.py "
        + " ".join(a for a in (argv if argv is not None else sys.argv[1:]) if a != "--record")
        + "`.",
        f"Machine: {os.cpu_count()} CPUs, Linux {platform.release()}, Python {platform.python_version()}; "
        f"{args.runs} alternating rounds, medians; "
        + ("modules byte-compiled first (as installed)." if not args.no_compile else "no byte-compiled modules."),
        "",
        "| command | median wall | ratio to `python3 -c pass` | median CPU (user+sys) | target (wall) |",
        "|---|---:|---:|---:|---:|",
        f"| `{args.python3} -c pass` | {floor_ms:.0f} ms | 1.00× | {floor_cpu_ms:.0f} ms | |",
    ]
    for name, _, _ in commands:
        median_ms = statistics.median(walls[name]) * 1000
        cpu_ms = statistics.median(cpus[name]) * 1000
        base = name.split(" (")[0].split(",")[0]
        shown = (
            f"logdoctor {name}"
            if not name.startswith("diagnose")
            else "logdoctor " + name.replace("diagnose", "diagnose <10-line log>", 1)
        )
        target = TARGETS_MS[base]
        verdict = "met" if median_ms <= target else "**missed**"
        lines.append(
            f"| `{shown}` | {median_ms:.0f} ms | {median_ms / floor_ms:.2f}× | {cpu_ms:.0f} ms "
            f"| ≤ {target:.0f} ms: {verdict} |"
        )
    if args.instructions:
        floor_count = instructions([sys.executable, "-c", "pass"])  # the interpreter logdoctor runs under
        lines += [
            "",
            "| command (instructions, valgrind --tool=callgrind, one run) | instructions | ratio to `python -c pass` |",
            "|---|---:|---:|",
            f"| `python -c pass` | {floor_count / 1e6:,.0f} M | 1.00× |",
        ]
        for name, cmd, command_env in commands:
            count = instructions(cmd, command_env)
            lines.append(f"| `logdoctor {name}` | {count / 1e6:,.0f} M | {count / floor_count:.2f}× |")
        lines += ["", "| stage of a 10-line diagnose, this tree (instructions, cumulative) | instructions | added |"]
        lines.append("|---|---:|---:|")
        before = floor_count
        for upto, (name, _) in enumerate(STAGE_STEPS, start=1):
            program = stage_program(upto, timed=False)
            count = instructions([sys.executable, "-c", program, str(log)], env)
            lines.append(f"| + {name} | {count / 1e6:,.0f} M | {(count - before) / 1e6:,.0f} M |")
            before = count
    if args.stages:
        lines += ["", *stages(log, args.runs, env)]
    block = "\n".join(lines) + "\n"
    print(block)
    if args.record:
        from bench_parse import record_block  # one rule for where a block goes in docs/benchmarks.md

        record_block(block, SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
