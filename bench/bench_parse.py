"""`logdoctor parse` against `grep -E` on one generated vLLM log: wall time, ratio, peak RSS, event counts.

Three commands read the same file from the page cache and write their output to a file in bench/out/
(never /dev/null: GNU grep stops at the first match when its output is /dev/null): the issue's
`grep -E`, `logdoctor parse --format jsonl`, and logdoctor's grep prefilter on its own (to split
logdoctor's time between grep and Python). A round runs each once and the order flips every round,
so that noise on this shared machine hits all of them; the best of N of each is reported, and the
ratio of the two bests (plus the per-round ratios) is the result. See docs/benchmarks.md.

    .venv/bin/python bench/bench_parse.py                       # 1 GiB log, 3 rounds
    .venv/bin/python bench/bench_parse.py --size 256M --runs 5 --record
    .venv/bin/python bench/bench_parse.py --dense --size 100M    # a busy SGLang server's log: every line an event

Beside the story's grep, the same grep split over 16 line-aligned byte ranges run at once (`tail -c +START | head -c
LEN | grep -E`, one a range) is timed: what the machine's cores can do, the reference for diagnose's parse workers.

Peak RSS is measured two ways. In the timed runs each command runs under GNU time (or a tiny
fork/exec/wait4 launcher), whose ru_maxrss is that of the largest *single* process of the tree: the
kernel folds the waited-for children (logdoctor's grep and wc) in as a maximum, not a sum. A separate,
untimed run adds up VmRSS over the whole tree (logdoctor + grep + wc) every 10 ms and reports the
peak of that sum. The RSS target is checked against the larger of the two.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_memory import write_dense_sglang
from gen_log import DEFAULT_SEED, DEFAULT_SIZE, OUT_DIR, default_path, generate, parse_size

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "benchmarks.md"
STORY_PATTERN = "accept|spec|draft|NCCL|P2P|attention_backend|gpu_memory|KV cache|kv_cache|num_gpu_blocks|mamba"
TARGET_RATIO = 2.0
TARGET_DIAGNOSE_RATIO = 1.3  # diagnose of the 1 GiB log against the story's grep
TARGET_RSS_MB = 150.0
TARGET_DIAGNOSE_RSS_MB = 100.0  # diagnose's own process, on 64 MB, 256 MB and 1 GiB logs alike
SAMPLE_INTERVAL_S = 0.01
# Line markers and the event type each must produce exactly once.
CHECKED_LINES = {"SpecDecoding metrics:": "spec_decode_stats", "Avg prompt throughput:": "scheduler_stats"}
# The event-dense SGLang log: every batch line a stats event, every Decode batch line (all name `accept len`) a
# spec-decode one too.
DENSE_CHECKED_LINES = {"batch, #": "scheduler_stats", "accept len:": "spec_decode_stats"}
TARGET_DENSE_RATIO = 3.0  # diagnose of the event-dense 100 MB log against one grep
TARGET_DENSE_S = 1.5
TARGET_PARALLEL_RATIO = 2.0  # diagnose of the 1 GiB log against the 16-part grep
GREP_PARTS = 16


@dataclass
class Run:
    wall_s: float
    maxrss_kib: int
    user_s: float
    sys_s: float


@dataclass
class Measure:
    name: str
    command: list[str]
    output: Path
    runs: list[Run] = field(default_factory=list)

    @property
    def best(self) -> Run:
        return min(self.runs, key=lambda r: r.wall_s)


def logdoctor_bin() -> str:
    here = Path(sys.executable).parent / "logdoctor"
    return str(here) if here.exists() else (shutil.which("logdoctor") or "logdoctor")


# Fallback when GNU time is missing: fork, exec, wait4, write "maxrss_kib utime stime" to argv[1].
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(f"{ru.ru_maxrss} {ru.ru_utime} {ru.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""
GNU_TIME = "/usr/bin/time"


@dataclass
class OwnCpu:
    """One run of a command: its wall time, the CPU of its own process, and that of the children it waited for
    (parse workers, their greps and heads), read from /proc/PID/stat once it has exited but before it is reaped."""

    wall_s: float
    own_s: float
    children_s: float


def own_cpu(command: Sequence[str], output: Path, env: dict[str, str]) -> OwnCpu:
    ticks = os.sysconf("SC_CLK_TCK")
    with open(output, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, still a zombie: its /proc stat is there
        wall = time.perf_counter() - started
        with open(f"/proc/{proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        proc.wait()
    # Fields 14-17 of proc(5): utime, stime, cutime, cstime (the stat line after the command name starts at 3).
    utime, stime, cutime, cstime = (int(fields[i]) / ticks for i in range(11, 15))
    return OwnCpu(wall, utime + stime, cutime + cstime)


def rusage_method() -> str:
    if os.access(GNU_TIME, os.X_OK):
        return "GNU time (`/usr/bin/time -f %M`)"
    return "a `python -I -S` fork/exec/wait4 launcher (its ~7 MiB pre-exec RSS is a floor)"


def run_once(command: Sequence[str], output: Path, env: dict[str, str]) -> Run:
    """Run `command > output` under a tiny launcher that reports the command's own rusage.

    The launcher matters: ru_maxrss of a forked child starts from its parent's RSS at fork time, so
    wait4() straight from this (large) Python process would report this process's size for grep.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rusage", dir=OUT_DIR) as usage_file:
        if os.access(GNU_TIME, os.X_OK):
            wrapped = [GNU_TIME, "-f", "%M %U %S", "-o", usage_file.name, *command]
        else:
            wrapped = [sys.executable, "-I", "-S", "-c", _LAUNCHER, usage_file.name, *command]
        with open(output, "wb") as out:
            started = time.perf_counter()
            returncode = subprocess.call(wrapped, stdout=out, stderr=subprocess.DEVNULL, env=env)
            wall = time.perf_counter() - started
        fields = usage_file.read().split()[-3:]
    if returncode not in (0, 1):  # grep exits 1 when nothing matched
        raise SystemExit(f"{command[0]} exited {returncode}")
    maxrss, user, system = int(fields[0]), float(fields[1]), float(fields[2])
    return Run(wall_s=wall, maxrss_kib=maxrss, user_s=user, sys_s=system)


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                kids.extend(int(k) for k in fh.read().split())
    except OSError:
        pass
    return kids


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _hwm_kib(pid: int) -> int:
    """Peak RSS of one process so far (`VmHWM`), 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _pss_kib(pid: int) -> int | None:
    """Proportional set size (a page shared by N processes counts 1/N in each), None where the kernel has none."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _identity(pid: int) -> tuple[str, str] | None:
    """(comm, exe) of a process, None once it is gone."""
    try:
        with open(f"/proc/{pid}/comm") as fh:
            comm = fh.read().strip()
        return comm, os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


@dataclass
class TreePeak:
    """Memory of a command's process tree, sampled every 10 ms."""

    total_kib: int  # peak of the sum over the tree (PSS where the kernel has it)
    per_name: dict[str, int]  # the largest sample of each process name
    root_kib: int  # the command's own process: its peak RSS (VmHWM), whatever its children do
    descendants_kib: int  # peak of the sum over its descendants alone (parse workers, greps, heads, wc)


def tree_peak_rss(command: Sequence[str], output: Path, env: dict[str, str]) -> TreePeak:
    """Peak of the summed memory of a process and all its descendants, sampled every 10 ms; also the process's
    own peak RSS and the peak of its descendants' sum.

    The sum is of PSS (`/proc/PID/smaps_rollup`), where the kernel has it: a page that forked workers
    share with logdoctor counts once in all, split between them. Without PSS, VmRSS is summed, and a
    child with its parent's name and executable (between fork and exec, sharing its parent's pages) is
    not counted, nor what it starts.
    """
    peak = root_peak = below_peak = 0
    per_name: dict[str, int] = {}
    me = _identity(os.getpid())
    with open(output, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        done = threading.Event()

        def sample() -> None:
            nonlocal peak, root_peak, below_peak
            while not done.is_set():
                total = 0
                root_peak = max(root_peak, _hwm_kib(proc.pid))
                root_now: int | None = None
                todo: list[tuple[int, tuple[str, str] | None]] = [(proc.pid, me)]
                while todo:
                    pid, parent = todo.pop()
                    ident = _identity(pid)
                    pss = _pss_kib(pid) if ident is not None else None
                    if ident is None or (pss is None and ident == parent):
                        continue  # gone, or (without PSS) not exec'd yet
                    rss = pss if pss is not None else _rss_kib(pid)
                    total += rss
                    if root_now is None:
                        root_now = rss  # the first one taken is the command itself
                    per_name[ident[0]] = max(per_name.get(ident[0], 0), rss)
                    todo.extend((child, ident) for child in _children(pid))
                peak = max(peak, total)
                below_peak = max(below_peak, total - (root_now or 0))
                done.wait(SAMPLE_INTERVAL_S)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        proc.wait()
        done.set()
        sampler.join()
    return TreePeak(peak, per_name, root_peak, below_peak)


def count_lines_with(path: Path, needle: str) -> int:
    result = subprocess.run(
        ["grep", "-c", "-F", "--", needle, str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    return int(result.stdout.strip() or 0)


def event_counts(jsonl: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    with open(jsonl, encoding="utf-8") as fh:
        for line in fh:
            counts[json.loads(line)["type"]] += 1
    return counts


def physical_lines(path: Path) -> int:
    out = subprocess.run(["wc", "-l", str(path)], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as fh:
        while fh.read(16 * 1024 * 1024):
            pass


def machine() -> dict[str, str]:
    mem_kib = 0
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    cpu = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    grep_version = subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {
        "nproc": str(len(os.sched_getaffinity(0))),
        "memory": f"{mem_kib / 1024 / 1024:.1f} GiB",
        "cpu": cpu or platform.processor() or "unknown",
        "kernel": platform.release(),
        "python": platform.python_version(),
        "grep": grep_version,
    }


def prefilter_parts_of(size: int) -> int:
    from logdoctor.sources.local import prefilter_parts

    return prefilter_parts(size)


def parse_split(log: Path, size: int) -> str:
    """How diagnose reads this file: in worker processes, one byte range each, or in one (logdoctor.pipeline.parallel)."""
    from logdoctor.sources.local import open_local, usable_cpus

    ranges = open_local(str(log)).parallel_ranges()
    if ranges is not None and usable_cpus() > 1 and os.environ.get("LOGDOCTOR_PARSE_WORKERS", "").strip() != "0":
        workers = min(usable_cpus(), len(ranges))
        return f"prefiltered and parsed in {len(ranges)} byte ranges by {workers} worker processes"
    return f"parsed in one process, its prefilter in {prefilter_parts_of(size)} byte ranges"


def _workers_of(log: Path) -> str:
    from logdoctor.sources.local import open_local, usable_cpus

    ranges = open_local(str(log)).parallel_ranges()
    if ranges is None or os.environ.get("LOGDOCTOR_PARSE_WORKERS", "").strip() == "0":
        return "its prefilter's greps (parsed in one process)"
    return f"{min(usable_cpus(), len(ranges))} parse workers with their greps and heads"


def parallel_grep_command(log: Path, size: int, parts: int, out: Path) -> list[str]:
    """One shell running the story's grep over `parts` line-aligned byte ranges at once, each to a file of its own."""
    from logdoctor.sources.local import split_at_lines

    jobs = [
        f"(tail -c +{start + 1} '{log}' | head -c {end - start} | grep -E '{STORY_PATTERN}' > '{out}.{k}') &"
        for k, (start, end) in enumerate(split_at_lines(str(log), size, parts))
    ]
    return ["sh", "-c", " ".join([*jobs, "wait"])]


def logdoctor_keywords() -> list[str]:
    from logdoctor.parse.keywords import candidate_keywords

    return candidate_keywords()


def prefilter_pattern_file(keywords: list[str]) -> Path:
    """The pattern file logdoctor's prefilter hands to grep, so that stage can be timed on its own."""
    from logdoctor.sources.local import ere_alternation

    path = OUT_DIR / "bench-prefilter.pattern"
    path.write_text(ere_alternation(keywords) + "\n", encoding="utf-8")
    return path


def verdict(good: bool) -> str:
    return "met" if good else "**missed**"


def mib(n_bytes: int) -> str:
    return f"{n_bytes / 1024 / 1024:,.1f} MiB"


def record_block(block: str, section: str) -> None:
    """Add `block` at the end of `section` (a `## ` heading) of docs/benchmarks.md, before the next
    `## ` heading, so each benchmark's results stay under its own section; a missing section is added."""
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else "# Benchmarks\n"
    start = text.find(f"\n{section}\n")
    if start < 0:
        text = text.rstrip("\n") + f"\n\n{section}\n"
        start = text.find(f"\n{section}\n")
    following = text.find("\n## ", start + 1)
    end = len(text) if following < 0 else following
    DOC.write_text(text[:end].rstrip("\n") + "\n\n" + block.rstrip("\n") + "\n" + text[end:], encoding="utf-8")


def compare_trees(args: argparse.Namespace) -> int:
    """`diagnose --format json` of the log by each tree in turn, --runs rounds: the medians of the diagnose process's
    own CPU and of its children's, the parent's share, a projection for 16 CPUs, and whether the reports agree."""
    log: Path = args.log or default_path(args.size, args.seed)
    if not log.exists():
        generate(log, args.size, args.seed)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    warm_page_cache(log)
    trees = [tree.resolve() for tree in args.compare_trees]
    runs: dict[Path, list[OwnCpu]] = {tree: [] for tree in trees}
    outputs = {tree: OUT_DIR / f"bench-diagnose-tree{i}.json" for i, tree in enumerate(trees)}
    command = [sys.executable, "-P", "-m", "logdoctor", "diagnose", str(log), "--format", "json", "--fail-on", "never"]
    for round_no in range(args.runs):
        for tree in trees if round_no % 2 == 0 else trees[::-1]:
            env = {**os.environ, "LC_ALL": "C", "PYTHONPATH": str(tree)}
            runs[tree].append(own_cpu(command, outputs[tree], env))
            print(f"  round {round_no + 1}: {tree} {runs[tree][-1].own_s:.2f} s own", file=sys.stderr)
    same = len({outputs[tree].read_bytes() for tree in trees}) == 1
    peaks = {}
    for tree in trees:  # one more run each, its memory sampled every 10 ms
        env = {**os.environ, "LC_ALL": "C", "PYTHONPATH": str(tree)}
        peaks[tree] = tree_peak_rss(command, outputs[tree], env)
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    info = machine()

    rows = []
    for tree in trees:
        got = runs[tree]
        own = statistics.median(r.own_s for r in got)
        children = statistics.median(r.children_s for r in got)
        peak = peaks[tree]
        rows.append(
            f"| `{tree}` | {own:.2f} s | {children:.2f} s | {own / (own + children):.0%} | "
            f"{own + children / 16:.2f} s | {min(r.wall_s for r in got):.2f} s | {peak.root_kib / 1024:.1f} MiB | "
            f"{peak.descendants_kib * 1024 / 1e6:.0f} MB | {', '.join(f'{r.own_s:.2f}' for r in got)} |"
        )
    print(f"""### diagnose's own CPU by tree, {mib(log.stat().st_size)} log, {when}

Command: `diagnose {log.name} --format json --fail-on never` run as `python -P -m logdoctor` with PYTHONPATH=TREE,
the trees in turn, {args.runs} alternating rounds; {_workers_of(log)}. Machine: {info["nproc"]} CPUs ({info["cpu"]}),
Python {info["python"]}. Own CPU: utime + stime of the diagnose process; children: its waited-for children's
(parse workers, their greps and heads), both from /proc/PID/stat at its exit; medians. Memory: one more run of
each, sampled every 10 ms (the diagnose process's VmHWM; the PSS summed over its descendants).

| tree | own CPU | children's CPU | own share | own + children / 16 | best wall | peak RSS, diagnose process | peak PSS, its children | own CPU per run |
|---|---:|---:|---:|---:|---:|---:|---:|---|
{chr(10).join(rows)}

- The trees' JSON reports of the last round: {"byte-identical" if same else "**DIFFERENT**"}.
""")
    return 0 if same else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=parse_size, default=parse_size(DEFAULT_SIZE), help="log size (default 1G)")
    parser.add_argument("--log", type=Path, default=None, help="benchmark this file instead (generated if missing)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--runs", type=int, default=3, help="rounds; each runs every command once (default 3)")
    parser.add_argument(
        "--dense",
        action="store_true",
        help="an event-dense SGLang log (every line a Decode or Prefill batch line) of --size instead of gen_log's",
    )
    parser.add_argument("--record", action="store_true", help=f"append the result block to {DOC.relative_to(REPO)}")
    parser.add_argument(
        "--tree",
        type=Path,
        default=None,
        help="run logdoctor from this source tree (`python -P -m logdoctor` with PYTHONPATH=TREE), e.g. a `git archive` "
        "of another commit, to compare trees with one interpreter",
    )
    parser.add_argument(
        "--compare-trees",
        type=Path,
        nargs="+",
        default=None,
        metavar="TREE",
        help="only the diagnose process's own CPU against its children's, for each source tree in turn, alternating "
        "--runs times (what the parent keeps serial when the parse is split)",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.compare_trees:
        return compare_trees(args)

    log: Path = args.log or (
        OUT_DIR / f"dense-sglang-{args.size}-{args.seed}.log" if args.dense else default_path(args.size, args.seed)
    )
    if not log.exists():
        print(f"generating {log} ({mib(args.size)}, seed {args.seed}) ...", file=sys.stderr)
        started = time.perf_counter()
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        if args.dense:
            write_dense_sglang(log, args.size, args.seed)
        else:
            generate(log, args.size, args.seed)
        print(f"  done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    size = log.stat().st_size
    warm_page_cache(log)
    keywords = logdoctor_keywords()

    env = {**os.environ, "LC_ALL": "C"}
    program = [logdoctor_bin()]
    if args.tree is not None:
        program = [sys.executable, "-P", "-m", "logdoctor"]  # -P: not the current directory's logdoctor
        env["PYTHONPATH"] = str(args.tree.resolve())
    grep = Measure("grep", ["grep", "-E", STORY_PATTERN, str(log)], OUT_DIR / "bench-grep.out")
    pgrep_out = OUT_DIR / "bench-grep-parts.out"
    pgrep = Measure(f"grep x{GREP_PARTS}", parallel_grep_command(log, size, GREP_PARTS, pgrep_out), pgrep_out)
    ld = Measure("logdoctor", [*program, "parse", str(log), "--format", "jsonl"], OUT_DIR / "bench-logdoctor.jsonl")
    # logdoctor's first stage alone (what `LocalSource` runs; wc -l runs beside it on the other core).
    pattern = prefilter_pattern_file(keywords)
    stage = Measure(
        "prefilter", ["grep", "-a", "-n", "-E", "-f", str(pattern), "--", str(log)], OUT_DIR / "bench-prefilter.out"
    )
    diag = Measure(
        "diagnose",
        [*program, "diagnose", str(log), "--format", "json", "--fail-on", "never"],
        OUT_DIR / "bench-diagnose.json",
    )
    measures = (grep, pgrep, ld, stage, diag)
    for round_no in range(args.runs):
        for m in measures if round_no % 2 == 0 else measures[::-1]:
            m.runs.append(run_once(m.command, m.output, env))
            print(f"  round {round_no + 1}: {m.name:9s} {m.runs[-1].wall_s:7.2f} s", file=sys.stderr)
    # The diagnose process's own CPU against its workers': what stays serial in the parent when the parse is split.
    owns = []
    for round_no in range(args.runs):
        owns.append(own_cpu(diag.command, diag.output, env))
        print(f"  own CPU {round_no + 1}: diagnose {owns[-1].own_s:.2f} s itself, {owns[-1].children_s:.2f} s children")
    parse_peak = tree_peak_rss(ld.command, ld.output, env)
    tree_peak_kib, per_name = parse_peak.total_kib, parse_peak.per_name
    diag_peak = tree_peak_rss(diag.command, diag.output, env)
    # diagnose's report must not depend on how the file was read: once more in one process, compared byte for byte.
    one = OUT_DIR / "bench-diagnose-one-process.json"
    run_once(diag.command, one, {**env, "LOGDOCTOR_PARSE_WORKERS": "0", "LOGDOCTOR_PREFILTER_PARTS": "1"})
    same_report = one.read_bytes() == diag.output.read_bytes()

    # Correctness, cheaply: every SpecDecoding / stats line of the file became exactly one event.
    counts = event_counts(ld.output)
    checked = DENSE_CHECKED_LINES if args.dense else CHECKED_LINES
    checks = [(needle, count_lines_with(log, needle), counts.get(kind, 0), kind) for needle, kind in checked.items()]
    ok = all(lines == events for _, lines, events, _ in checks) and same_report

    ratio = ld.best.wall_s / grep.best.wall_s
    diag_ratio = diag.best.wall_s / grep.best.wall_s
    diag_rounds = [b.wall_s / a.wall_s for a, b in zip(grep.runs, diag.runs, strict=True)]
    diag_target = 1.0 if len(os.sched_getaffinity(0)) >= 4 else TARGET_DIAGNOSE_RATIO
    pgrep_ratio = diag.best.wall_s / pgrep.best.wall_s
    pgrep_rounds = [b.wall_s / a.wall_s for a, b in zip(pgrep.runs, diag.runs, strict=True)]
    if args.dense:
        dense_ok = diag_ratio <= TARGET_DENSE_RATIO and diag.best.wall_s <= TARGET_DENSE_S
        diag_line = (
            f"- **diagnose / grep wall: {diag_ratio:.2f}×, {diag.best.wall_s:.2f} s** (event-dense target ≤ "
            f"{TARGET_DENSE_RATIO:g}× and ≤ {TARGET_DENSE_S:g} s: {verdict(dense_ok)})"
        )
    else:
        diag_line = (
            f"- **diagnose / grep wall: {diag_ratio:.2f}×** (target ≤ {TARGET_DIAGNOSE_RATIO:g}×, and under 1× on 4 CPUs "
            f"or more: {verdict(diag_ratio <= diag_target)})"
        )
    round_ratios = [b.wall_s / a.wall_s for a, b in zip(grep.runs, ld.runs, strict=True)]
    stage_ratio = stage.best.wall_s / grep.best.wall_s
    rss_mb = ld.best.maxrss_kib * 1024 / 1e6
    tree_mb = tree_peak_kib * 1024 / 1e6
    n_events = sum(counts.values())
    selected = physical_lines(stage.output)
    python_s = ld.best.user_s + ld.best.sys_s - (stage.best.user_s + stage.best.sys_s)
    own = sorted(owns, key=lambda o: o.own_s)[len(owns) // 2]  # the median run by the parent's CPU
    workers = _workers_of(log)
    projected = own.own_s + own.children_s / 16
    info = machine()
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    rel_log = log.relative_to(REPO) if log.is_relative_to(REPO) else log

    def row(title: str, m: Measure) -> str:
        cpu = m.best.user_s + m.best.sys_s
        return (
            f"| {title} | {m.best.wall_s:.2f} s | {cpu:.2f} s | {m.best.maxrss_kib / 1024:.1f} MiB "
            f"| {mib(m.output.stat().st_size)} |"
        )

    samples = ", ".join(f"{name} {kib / 1024:.1f} MiB" for name, kib in sorted(per_name.items()))
    check = "; ".join(
        f"`{needle}` lines {lines:,} {'=' if lines == events else '≠'} {kind} events {events:,}"
        for needle, lines, events, kind in checks
    )
    kind = "event-dense SGLang log" if args.dense else "vLLM serving log"
    block = f"""### {mib(size)} {kind}, {when}

Input: `{rel_log}` ({size:,} bytes, {physical_lines(log):,} lines, seed {args.seed}); {len(keywords)} logdoctor keywords.
Machine: {info["nproc"]} CPUs ({info["cpu"]}), {info["memory"]} RAM, Linux {info["kernel"]}, Python {info["python"]}, {info["grep"]}.
Best of {args.runs} alternating rounds; every command writes its output to a file in `bench/out/`.

| command | best wall | CPU user+sys | peak RSS (largest process) | output |
|---|---:|---:|---:|---:|
{row("`LC_ALL=C grep -E '<story pattern>' FILE > out`", grep)}
{row(f"the same grep over {GREP_PARTS} line-aligned byte ranges at once (`tail -c | head -c | grep -E`)", pgrep)}
{row("`logdoctor parse FILE --format jsonl > out`", ld)}
{row("logdoctor's prefilter alone: `LC_ALL=C grep -a -n -E -f ALTERNATION FILE > out`", stage)}
{row("`logdoctor diagnose FILE --format json --fail-on never > out`", diag)}

- **logdoctor / grep wall: {ratio:.2f}×** (target ≤ {TARGET_RATIO:.0f}×: {verdict(ratio <= TARGET_RATIO)}); per round: {", ".join(f"{r:.2f}×" for r in round_ratios)}. The prefilter stage alone: {stage_ratio:.2f}× grep.
{diag_line}; per round: {", ".join(f"{r:.2f}×" for r in diag_rounds)}; {parse_split(log, size)}; its memory: **{diag_peak.root_kib / 1024:.1f} MiB peak RSS of the diagnose process** (target ≤ {TARGET_DIAGNOSE_RSS_MB:.0f} MB: {verdict(diag_peak.root_kib * 1024 / 1e6 <= TARGET_DIAGNOSE_RSS_MB)}), its workers and their greps {diag_peak.descendants_kib * 1024 / 1e6:.0f} MB at their peak (PSS summed; per process at most: {", ".join(f"{name} {kib / 1024:.1f} MiB" for name, kib in sorted(diag_peak.per_name.items()))}), {diag_peak.total_kib * 1024 / 1e6:.0f} MB for the whole tree; its JSON report {"byte-identical" if same_report else "**DIFFERENT**"} to a one-process run's (`LOGDOCTOR_PARSE_WORKERS=0 LOGDOCTOR_PREFILTER_PARTS=1`).
- **diagnose / the {GREP_PARTS}-part grep wall: {pgrep_ratio:.2f}×** (target ≤ {TARGET_PARALLEL_RATIO:g}× for the sparse 1 GiB log: {verdict(pgrep_ratio <= TARGET_PARALLEL_RATIO)}); per round: {", ".join(f"{r:.2f}×" for r in pgrep_rounds)}.
- **The diagnose process's own CPU: {own.own_s:.2f} s** of {own.own_s + own.children_s:.2f} s in all ({own.own_s / max(own.own_s + own.children_s, 1e-9):.0%}; its children, {workers}: {own.children_s:.2f} s), wall {own.wall_s:.2f} s (the median of {len(owns)} runs by its own CPU; per run: {", ".join(f"{o.own_s:.2f} s" for o in owns)}); projected on 16 CPUs, its own CPU plus its children's over 16: {projected:.2f} s.
- Where logdoctor's time goes: the prefilter passes {selected:,} of the lines to Python, which turns them into {n_events:,} events; CPU beyond the prefilter's (Python start-up, parsing, JSON, wc -l): {python_s:.2f} s, {python_s / max(n_events, 1) * 1e6:.0f} µs an event.
- **logdoctor peak RSS: {tree_mb:.0f} MB** summed over its process tree (PSS, sampled every {SAMPLE_INTERVAL_S * 1000:.0f} ms; per process: {samples}); ru_maxrss of the largest single process {rss_mb:.0f} MB, by {rusage_method()} (target ≤ {TARGET_RSS_MB:.0f} MB: {verdict(max(tree_mb, rss_mb) <= TARGET_RSS_MB)}).
- Events: {n_events:,} ({", ".join(f"{k} {v:,}" for k, v in counts.most_common())}).
- Check: {check}: {"ok" if ok else "**FAILED**"}.
"""
    print(block)
    if args.record:
        record_block(block, "## Results")
        print(f"appended to {DOC.relative_to(REPO)}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
