"""Benchmark `logdoctor diagnose HOST` over SSH against `ssh HOST grep` (the SSH targets in docs/benchmarks.md).

Starts real OpenSSH servers on loopback addresses (bench/sshlab.py: 127.0.0.2 ... 127.0.0.21, a free
port, host key and known_hosts entry each, an ssh config with the aliases h1 ... h20; this machine is
the "remote" host, so a remote log is just a path) and measures, in alternating rounds, best of N:

One host, the 1 GiB log (bench/out/vllm-serve-1G.log):
    ssh -F CONFIG h1 "LC_ALL=C grep -E '<story pattern>' LOG" > out          (the reference)
    logdoctor diagnose h1 --log LOG --ssh-config CONFIG --known-hosts KH -i KEY --format json > out
    logdoctor diagnose h1 --ssh-config CONFIG ... --format json > out       (discovery: a stand-in
        `vllm serve` process, from a venv that has vllm's metadata, has LOG as its stdout and stderr)
    targets: logdoctor <= 2x the ssh grep's wall time; bytes_transferred <= 1 % of the log.

Twenty hosts, a 64 MiB log each (bench/out/vllm-serve-64M.log, the same path on every host):
    logdoctor diagnose h1 --log LOG ... --format json > out
    logdoctor diagnose h1 ... h20 --log LOG --jobs 8 ... --format json > out
    target: twenty hosts <= 3x one host's wall time.

For every run: wall time, logdoctor's own CPU and peak RSS (GNU time), the CPU of everything the
servers ran for it (sshd sessions, sh, grep, awk: the sshd listeners' reaped children), and, from
logdoctor's progress lines on stderr, when collection ended (the rest is parsing, rules and the
report). Every logdoctor report is checked: no errors, the log's bytes_read is its size, and the
stats/SpecDecoding series hold as many intervals as `grep -c` finds lines. After the rounds, one
untimed run with `--save` gives the time of each remote command (its manifest); loopback bytes
show what crossed the wire. See
docs/benchmarks.md, "SSH collection".

    .venv/bin/python bench/bench_ssh.py                  # both parts, 3 rounds, about 5 minutes
    .venv/bin/python bench/bench_ssh.py --only fleet --runs 5 --record
    .venv/bin/python bench/bench_ssh.py --baseline /tmp/ld-base   # A/B against another logdoctor tree

Every sshd and the stand-in server are stopped and the temporary directory removed at the end, and
the whole run stops by itself after --max-seconds (default 480; --baseline needs about 10 minutes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_parse import (
    _LAUNCHER,
    GNU_TIME,
    STORY_PATTERN,
    count_lines_with,
    logdoctor_bin,
    machine,
    mib,
    record_block,
)
from gen_log import DEFAULT_SEED, OUT_DIR, default_path, generate, parse_size
from sshlab import Lab, LabError, die_with_parent, loopback_bytes, ssh_lab

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "benchmarks.md"
DOC_SECTION = "## SSH collection"
TARGET_RATIO = 2.0
TARGET_TRANSFER = 0.01
TARGET_FLEET_RATIO = 1.5  # on a 16-core machine
VLLM_VERSION = "0.20.1"
COLLECTED_RE = re.compile(r": (done: \d+ sources|failed: )")


class BenchError(RuntimeError):
    """A command failed, timed out, or the run went past --max-seconds."""


@dataclass
class Run:
    wall_s: float
    cpu_s: float  # the local command and its waited-for children (user + sys)
    maxrss_kib: int  # its largest process
    remote_cpu_s: float  # what the sshd servers ran for it: sessions, sh, grep, awk, python ...
    wire_bytes: int  # received on the loopback interface during the run (SSH packets, both ways)
    collected_s: float | None  # logdoctor: when the last host's collection ended (progress on stderr)
    exit_status: int
    own_cpu_s: float | None = None  # logdoctor's own process alone (all its threads), without its workers


@dataclass
class Measure:
    key: str
    title: str
    command: list[str]
    output: Path
    env: dict[str, str]
    runs: list[Run] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def best(self) -> Run:
        return min(self.runs, key=lambda r: r.wall_s)


@dataclass(frozen=True)
class Expected:
    """What every report of a log must say (counted on the file itself)."""

    log: Path
    size: int
    stats_lines: int
    spec_lines: int


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            raise BenchError(f"stopped: the benchmark ran past --max-seconds {self.seconds:g}")
        return left


# --- running one command --------------------------------------------------------------------------


def run_once(lab: Lab, m: Measure, deadline: Deadline) -> Run:
    """`m.command > m.output` under GNU time, with the remote CPU it caused and its stderr timestamped."""
    if not lab.wait_idle():
        raise BenchError("sshd sessions of the previous command are still running")
    remote_before = lab.remote_cpu_seconds()
    wire_before = loopback_bytes()
    with tempfile.NamedTemporaryFile("r", suffix=".rusage", dir=lab.root) as usage, open(m.output, "wb") as out:
        if os.access(GNU_TIME, os.X_OK):
            wrapped = [GNU_TIME, "-f", "%M %U %S", "-o", usage.name, *m.command]
        else:
            wrapped = [sys.executable, "-I", "-S", "-c", _LAUNCHER, usage.name, *m.command]
        stderr: list[tuple[float, str]] = []
        started = time.perf_counter()
        proc = subprocess.Popen(wrapped, stdout=out, stderr=subprocess.PIPE, env=m.env, start_new_session=True)
        reader = threading.Thread(target=_read_stderr, args=(proc, stderr), daemon=True)
        reader.start()
        own_cpu: list[float] = []
        watcher = threading.Thread(target=_watch_own_cpu, args=(proc, own_cpu), daemon=True)
        watcher.start()
        try:
            status = proc.wait(timeout=deadline.left())
        except BaseException as exc:  # past --max-seconds, or Ctrl-C: never leave the command running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if isinstance(exc, subprocess.TimeoutExpired):
                raise BenchError(f"{m.key}: still running at --max-seconds {deadline.seconds:g}; killed") from None
            raise
        wall = time.perf_counter() - started
        reader.join(timeout=5)
        watcher.join(timeout=5)
        fields = usage.read().split()[-3:]
    if status not in (0, 1):  # diagnose: 1 = findings; grep: 1 = no match
        tail = "\n".join(line for _, line in stderr[-10:])
        raise BenchError(f"{m.key} exited {status}: {' '.join(m.command)}\n{tail}")
    lab.wait_idle()
    remote = lab.remote_cpu_seconds() - remote_before
    wire = loopback_bytes() - wire_before
    collected = max((t - started for t, line in stderr if COLLECTED_RE.search(line)), default=None)
    return Run(
        wall_s=wall,
        cpu_s=float(fields[1]) + float(fields[2]),
        maxrss_kib=int(fields[0]),
        remote_cpu_s=remote,
        wire_bytes=wire,
        collected_s=collected,
        exit_status=status,
        own_cpu_s=own_cpu[-1] if own_cpu else None,
    )


def _watch_own_cpu(proc: subprocess.Popen[bytes], sink: list[float]) -> None:
    """The CPU (user + sys, every thread) of the command under GNU time, sampled every 20 ms until it exits: its
    last sample is within 20 ms of CPU of what it used, apart from its children (parse workers, ssh)."""
    tick = os.sysconf("SC_CLK_TCK")
    pid: int | None = None
    while proc.poll() is None:
        if pid is None:
            kids = [int(k) for k in _task_children(proc.pid)]
            pid = kids[0] if kids else None
        if pid is not None:
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                sink.append((int(fields[11]) + int(fields[12])) / tick)  # utime, stime
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.02)


def _task_children(pid: int) -> list[str]:
    out: list[str] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(fh.read().split())
    except OSError:
        pass
    return out


def _own(run: Run) -> str:
    return "not sampled" if run.own_cpu_s is None else f"{run.own_cpu_s:.2f} s of CPU"


def _read_stderr(proc: subprocess.Popen[bytes], sink: list[tuple[float, str]]) -> None:
    assert proc.stderr is not None
    for raw in proc.stderr:
        sink.append((time.perf_counter(), raw.decode("utf-8", "replace").rstrip("\n")))


def alternate(
    lab: Lab, measures: Sequence[Measure], runs: int, deadline: Deadline, check: Callable[[Measure], list[str]]
) -> None:
    """`runs` rounds; each runs every command once, in an order that flips every round."""
    for round_no in range(runs):
        for m in measures if round_no % 2 == 0 else measures[::-1]:
            run = run_once(lab, m, deadline)
            m.runs.append(run)
            m.problems.extend(p for p in check(m) if p not in m.problems)
            print(
                f"  round {round_no + 1}: {m.key:22s} {run.wall_s:7.2f} s  (cpu {run.cpu_s:5.2f} s, "
                f"remote cpu {run.remote_cpu_s:5.2f} s)",
                file=sys.stderr,
            )


# --- what the reports must say ----------------------------------------------------------------------


def series_length(value: Any) -> int:
    """Entries of a fact series in the JSON report, which cuts it at 50 values plus "... N more"."""
    if not isinstance(value, list):
        return 0
    if value and isinstance(value[-1], str) and value[-1].startswith("... "):
        return len(value) - 1 + int(value[-1].split()[1])
    return len(value)


def log_source(report: dict[str, Any], log: Path) -> dict[str, Any] | None:
    return next((s for s in report.get("sources", []) if s.get("path") == str(log)), None)


def check_report(report: dict[str, Any], expected: Expected, where: str) -> list[str]:
    problems: list[str] = []
    if report.get("errors"):
        problems.append(f"{where}: errors {report['errors']}")
        return problems
    src = log_source(report, expected.log)
    if src is None:
        return [f"{where}: no source for {expected.log}"]
    if src["bytes_read"] != expected.size:
        problems.append(f"{where}: bytes_read {src['bytes_read']:,} != file size {expected.size:,}")
    facts = report.get("facts", {})
    stats = int(facts.get("throughput.intervals") or 0)
    spec = series_length(facts.get("spec.acceptance_length"))
    if stats != expected.stats_lines:
        problems.append(
            f"{where}: {stats:,} stats intervals != {expected.stats_lines:,} `Avg prompt throughput:` lines"
        )
    if spec != expected.spec_lines:
        problems.append(
            f"{where}: {spec:,} spec-decode intervals != {expected.spec_lines:,} `SpecDecoding metrics:` lines"
        )
    return problems


def load_reports(path: Path) -> list[dict[str, Any]]:
    """The diagnoses of a `--format json` run: one, or a fleet's `hosts` (each without the `host` the fleet
    object adds, so it compares with its one-host run)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and data.get("report") == "fleet":
        return [{k: v for k, v in entry.items() if k != "host"} for entry in data["hosts"]]
    return data if isinstance(data, list) else [data]


def expected_for(log: Path) -> Expected:
    return Expected(
        log=log,
        size=log.stat().st_size,
        stats_lines=count_lines_with(log, "Avg prompt throughput:"),
        spec_lines=count_lines_with(log, "SpecDecoding metrics:"),
    )


def candidate_lines(log: Path) -> int:
    """Lines holding one of logdoctor's keywords: what the remote grep must send (counted here, locally)."""
    from logdoctor.parse.keywords import candidate_keywords
    from logdoctor.sources.local import ere_alternation

    result = subprocess.run(
        ["grep", "-c", "-a", "-E", "-e", ere_alternation(candidate_keywords()), "--", str(log)],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    return int(result.stdout.strip() or 0)


# --- the stand-in vLLM server for discovery -----------------------------------------------------------


@contextmanager
def stand_in_server(root: Path, log: Path, seconds: float) -> Iterator[int]:
    """A process that looks like `vllm serve` to discovery, writing (nothing) to `log`.

    It runs from a venv whose site-packages holds vllm's metadata, through a `vllm` console script,
    so /proc/PID/cmdline reads `VENV/bin/python3 VENV/bin/vllm serve Qwen/Qwen3-8B ...` and the
    engine-versions fact finds vllm in the server's own python, as on a real host. The log is opened
    read-only: the benchmark input can never change.
    """
    venv = root / "vllm-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    dist = site / f"vllm-{VLLM_VERSION}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_VERSION}\n")
    script = venv / "bin" / "vllm"
    script.write_text(
        f"#!{venv}/bin/python3\n# stands in for vLLM's console script\nimport time\n\ntime.sleep({seconds})\n"
    )
    script.chmod(0o755)
    argv = [str(script), "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--enable-log-requests"]
    with open(log, "rb") as fh:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, start_new_session=True, preexec_fn=die_with_parent
        )
    try:
        deadline = time.monotonic() + 10
        while b"vllm\0serve" not in _cmdline(proc.pid):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise BenchError(f"the stand-in vLLM server did not start (exit {proc.poll()})")
            time.sleep(0.02)
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


# --- commands ----------------------------------------------------------------------------------------


def ssh_args(lab: Lab, config: Path | None = None) -> list[str]:
    config = config or lab.ssh_config
    return ["--ssh-config", str(config), "--known-hosts", str(lab.known_hosts), "-i", str(lab.user_key)]


def logdoctor_variants(baseline: Path | None) -> list[tuple[str, list[str], dict[str, str]]]:
    """(label, argv prefix, env): this tree, and the --baseline tree run as `python -P -m logdoctor`."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    variants = [("", [logdoctor_bin()], env)]
    if baseline is not None:
        # -P: the current directory (the repo, with its own logdoctor/) must not shadow PYTHONPATH
        variants.append(
            (" (baseline)", [sys.executable, "-P", "-m", "logdoctor"], {**env, "PYTHONPATH": str(baseline)})
        )
    return variants


def check_baseline(baseline: Path) -> None:
    probe = subprocess.run(
        [
            sys.executable,
            "-P",
            "-c",
            "import logdoctor, logdoctor.engine.rules as r; print(logdoctor.__file__, len(r.load_rules()))",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(baseline)},
        check=False,
    )
    if probe.returncode != 0 or not probe.stdout.startswith(str(baseline)):
        raise BenchError(f"--baseline {baseline}: not a logdoctor tree with its rules: {probe.stdout}{probe.stderr}")


# --- where the time goes (one untimed run with --save) ------------------------------------------------


def command_times(command: Sequence[str], env: dict[str, str], save: Path, deadline: Deadline) -> list[dict[str, Any]]:
    """Per-host manifests of one `--save` run: each remote command's purpose and seconds."""
    subprocess.run(
        [*command, "--save", str(save)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        timeout=deadline.left(),
        check=False,
    )
    return [json.loads(p.read_text()) for p in sorted(save.glob("*/manifest.json"))]


def purpose_group(purpose: str) -> str:
    if purpose.startswith("read "):
        return "read (remote grep of the log)"
    if purpose in ("probe", "expand --log", "discovery", "sudo -n check"):
        return purpose
    if purpose == "pip show vllm sglang":  # the engine-versions fact (importlib.metadata first, pip rarely)
        return "fact: engine versions"
    return f"fact: {purpose}"


def time_table(manifests: list[dict[str, Any]]) -> list[tuple[str, float, float, int]]:
    """(command, mean seconds per host, max seconds, hosts) over the manifests, in command order."""
    per: dict[str, list[float]] = defaultdict(list)
    for manifest in manifests:
        for c in manifest["commands"]:
            per[purpose_group(c["purpose"])].append(float(c["seconds"]))
    return [(name, sum(v) / len(v), max(v), len(v)) for name, v in per.items()]


def session_cost(lab: Lab, deadline: Deadline, tries: int = 3) -> tuple[float, float]:
    """(wall, remote CPU) of the cheapest of `ssh h1 true`: a connection, one session, the login shell."""
    best = (float("inf"), float("inf"))
    for _ in range(tries):
        lab.wait_idle()
        before = lab.remote_cpu_seconds()
        started = time.perf_counter()
        subprocess.run(["ssh", "-F", str(lab.ssh_config), "h1", "true"], timeout=deadline.left(), check=True)
        wall = time.perf_counter() - started
        lab.wait_idle()
        best = min(best, (wall, lab.remote_cpu_seconds() - before))
    return best


def openssh_read_seconds(lab: Lab, manifest: dict[str, Any], deadline: Deadline) -> tuple[float, int]:
    """The exact read command logdoctor sent, run through OpenSSH's client: paramiko's channel vs ssh's."""
    command = next(c["command"] for c in manifest["commands"] if c["purpose"].startswith("read "))
    out = lab.root / "openssh-read.out"
    with open(out, "wb") as fh:
        started = time.perf_counter()
        subprocess.run(
            ["ssh", "-F", str(lab.ssh_config), "h1", command], stdout=fh, timeout=deadline.left(), check=True
        )
        wall = time.perf_counter() - started
    return wall, out.stat().st_size


# --- the report -------------------------------------------------------------------------------------


def verdict(good: bool) -> str:
    return "met" if good else "**missed**"


def row(m: Measure, nproc: int) -> str:
    b = m.best
    split = f"{b.collected_s:.2f} s + {b.wall_s - b.collected_s:.2f} s" if b.collected_s is not None else "—"
    busy = (b.cpu_s + b.remote_cpu_s) / (nproc * b.wall_s)
    return (
        f"| {m.title} | {b.wall_s:.2f} s | {split} | {b.cpu_s:.2f} s | {b.remote_cpu_s:.2f} s | {busy:.0%} "
        f"| {b.maxrss_kib / 1024:.0f} MiB | {mib(b.wire_bytes)} |"
    )


TABLE_HEAD = (
    "| command | best wall | collection + the rest | logdoctor CPU | remote CPU | CPUs busy | peak RSS | on the wire |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|"
)


def ab_text(pairs: Sequence[tuple[Measure, Measure]]) -> list[str]:
    """This tree against --baseline, best run against best run."""
    if not pairs:
        return []
    parts = [
        f"{now.key.removeprefix('ld ')} {base.best.wall_s:.2f} s → {now.best.wall_s:.2f} s "
        f"(remote CPU {base.best.remote_cpu_s:.2f} s → {now.best.remote_cpu_s:.2f} s)"
        for now, base in pairs
    ]
    return ["- This tree against the baseline, best against best wall: " + "; ".join(parts) + "."]


def rounds_text(numerator: Measure, denominator: Measure) -> str:
    return ", ".join(f"{b.wall_s / a.wall_s:.2f}×" for a, b in zip(denominator.runs, numerator.runs, strict=True))


def times_text(rows: list[tuple[str, float, float, int]], hosts: int) -> str:
    if hosts == 1:
        return "; ".join(f"{name} {mean:.2f} s" for name, mean, _, _ in rows)
    return "; ".join(f"{name} {mean:.2f} s (max {top:.2f} s)" for name, mean, top, _ in rows)


def source_summary(report: dict[str, Any]) -> str:
    return ", ".join(f"`{s['name']}` ({s['lines']:,} lines)" for s in report.get("sources", []))


def part_one(lab: Lab, args: argparse.Namespace, deadline: Deadline, nproc: int) -> tuple[str, bool]:
    log: Path = args.log
    expected = expected_for(log)
    candidates = candidate_lines(log)
    keys = ssh_args(lab)
    grep = Measure(
        "ssh grep",
        "`ssh -F CONFIG h1 \"LC_ALL=C grep -E '<story pattern>' LOG\" > out`",
        [
            "ssh",
            "-F",
            str(lab.ssh_config),
            "h1",
            f"LC_ALL=C grep -E {shlex.quote(STORY_PATTERN)} {shlex.quote(str(log))}",
        ],
        OUT_DIR / "bench-ssh-grep.out",
        dict(os.environ),
    )
    measures = [grep]
    by_variant: list[tuple[str, Measure, Measure]] = []
    for label, prefix, env in logdoctor_variants(args.baseline):
        tag = "base" if label else "ld"
        with_log = Measure(
            f"{tag} --log",
            f"`logdoctor diagnose h1 --log LOG ... --format json > out`{label}",
            [*prefix, "diagnose", "h1", "--log", str(log), *keys, "--format", "json"],
            lab.root / f"{tag}-log.json",
            env,
        )
        discovering = Measure(
            f"{tag} discovery",
            f"`logdoctor diagnose h1 ... --format json > out` (discovery){label}",
            [*prefix, "diagnose", "h1", *keys, "--format", "json"],
            lab.root / f"{tag}-discovery.json",
            env,
        )
        measures += [with_log, discovering]
        by_variant.append((label, with_log, discovering))

    def check(m: Measure) -> list[str]:
        if m is grep:
            return [] if m.output.stat().st_size > 0 else ["the ssh grep wrote nothing"]
        reports = load_reports(m.output)
        problems = check_report(reports[0], expected, m.key)
        src = log_source(reports[0], log)
        if src is not None and src["lines"] != candidates:
            problems.append(f"{m.key}: {src['lines']:,} lines transferred != {candidates:,} candidate lines")
        return problems

    with stand_in_server(lab.root, log, deadline.left() + 60):
        alternate(lab, measures, args.runs, deadline, check)
        _, ld_log, ld_disc = by_variant[0]
        save_log = command_times(ld_log.command, ld_log.env, lab.root / "save-log", deadline)
        save_disc = command_times(ld_disc.command, ld_disc.env, lab.root / "save-discovery", deadline)
        openssh_s, openssh_bytes = openssh_read_seconds(lab, save_log[0], deadline)
        session_s, session_cpu = session_cost(lab, deadline)

    ok = all(not m.problems for m in measures)
    report_log = load_reports(ld_log.output)[0]
    report_disc = load_reports(ld_disc.output)[0]
    src = log_source(report_log, log) or {}
    transferred_log = int(src.get("bytes_transferred") or 0)
    transferred_host = sum(int(s.get("bytes_transferred") or 0) for s in report_log["sources"])
    transferred_disc = sum(int(s.get("bytes_transferred") or 0) for s in report_disc["sources"])
    share = transferred_host / expected.size
    read_s = next(c["seconds"] for c in save_log[0]["commands"] if c["purpose"].startswith("read "))
    lines = [TABLE_HEAD, *(row(m, nproc) for m in measures)]
    bullets = []
    for label, with_log, discovering in by_variant:
        r_log = with_log.best.wall_s / grep.best.wall_s
        r_disc = discovering.best.wall_s / grep.best.wall_s
        bullets.append(
            f"- **logdoctor{label} --log / ssh grep wall: {r_log:.2f}×** (target ≤ {TARGET_RATIO:.0f}×: "
            f"{verdict(r_log <= TARGET_RATIO)}; per round {rounds_text(with_log, grep)}); with discovery "
            f"**{r_disc:.2f}×** ({verdict(r_disc <= TARGET_RATIO)}; per round {rounds_text(discovering, grep)})."
        )
    if len(by_variant) > 1:
        (_, now_log, now_disc), (_, base_log, base_disc) = by_variant[:2]
        bullets += ab_text([(now_log, base_log), (now_disc, base_disc)])
    bullets += [
        f"- **Transferred: {mib(transferred_host)} of {mib(expected.size)} = {share:.2%}** of the log "
        f"(target ≤ {TARGET_TRANSFER:.0%}: {verdict(share <= TARGET_TRANSFER)}): the log's source "
        f"{transferred_log:,} bytes ({src.get('lines', 0):,} candidate lines, bytes_read {src.get('bytes_read', 0):,}), "
        f"the host facts {transferred_host - transferred_log:,} bytes; with discovery {transferred_disc:,} bytes in all. "
        f"The ssh grep brought {mib(grep.output.stat().st_size)} ({grep.output.stat().st_size / expected.size:.0%}).",
        f"- On the wire (loopback bytes, SSH packets both ways, handshake included): logdoctor --log "
        f"{mib(ld_log.best.wire_bytes)} = {ld_log.best.wire_bytes / expected.size:.2%} of the log; "
        f"the ssh grep {mib(grep.best.wire_bytes)}.",
        f"- Remote commands of one `--save` run (--log): {times_text(time_table(save_log), 1)}. They run in "
        f"one SSH session (one `sh -s`); a session of its own would start the login shell again: "
        f"`ssh h1 true` takes {session_s:.2f} s and {session_cpu:.2f} s of the server's CPU.",
        f"- Remote commands of one `--save` run (discovery): {times_text(time_table(save_disc), 1)}.",
        f"- The same read command through OpenSSH's client: {openssh_s:.2f} s for {openssh_bytes:,} bytes "
        f"(logdoctor's paramiko channel: {read_s:.2f} s).",
        f"- Sources (--log): {source_summary(report_log)}; (discovery): {source_summary(report_disc)}.",
        f"- Check: every report has no errors, bytes_read {expected.size:,} = the file's size, "
        f"{candidates:,} lines transferred = the file's lines with a logdoctor keyword (`grep -c`), "
        f"`throughput.intervals` {expected.stats_lines:,} = `Avg prompt throughput:` lines and "
        f"`spec.acceptance_length` {expected.spec_lines:,} values = `SpecDecoding metrics:` lines: "
        + ("ok" if ok else "**FAILED**: " + "; ".join(p for m in measures for p in m.problems[:3])),
    ]
    rel = log.relative_to(REPO) if log.is_relative_to(REPO) else log
    text = (
        f"One host (h1 on {lab.servers[0].address}), `{rel}` ({expected.size:,} bytes).\n\n"
        + "\n".join(lines)
        + "\n\n"
        + "\n".join(bullets)
        + "\n"
    )
    return text, ok


def as_host(value: Any, host: str) -> Any:
    """A report with every string equal to `host` replaced by `HOST`, to compare hosts' reports."""
    if isinstance(value, dict):
        return {k: as_host(v, host) for k, v in value.items()}
    if isinstance(value, list):
        return [as_host(v, host) for v in value]
    return "HOST" if value == host else value


# The GPU facts that do not change while the machine runs; the others (temperature, power, clocks, utilisation, the
# link's width now, the processes) are read live.
_STATIC_GPU_FACTS = frozenset({"name", "count", "memory_gib", "pcie_generation", "pcie_width_max", "persistence_mode"})


def _static_gpu(facts: Any) -> Any:
    if not isinstance(facts, dict):
        return facts
    kept = {k: v for k, v in facts.items() if not (k.startswith("gpu.") and k[4:] not in _STATIC_GPU_FACTS)}
    if isinstance(kept.get("gpu"), dict):
        kept["gpu"] = {k: v for k, v in kept["gpu"].items() if k in _STATIC_GPU_FACTS}
    return kept


def without_live_sizes(report: Any) -> Any:
    """A report with what `nvidia-smi` reads live set aside: on a machine with a GPU, the GPU's state (temperature,
    power, clocks, utilisation) is read at each host's own moment, so it and the length of its text differ from run
    to run even when every host is the same machine. Everything read from the log is still compared."""
    if not isinstance(report, dict):
        return report
    sources = []
    for source in report.get("sources", []):
        if isinstance(source, dict) and "nvidia-smi" in str(source.get("name", "")):
            source = {k: v for k, v in source.items() if k not in ("bytes_read", "lines", "bytes_transferred")}
        sources.append(source)
    return {**report, "sources": sources, "facts": _static_gpu(report.get("facts"))}


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The JSON path of the first place two reports differ, with both values (shortened); None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            found = first_difference(a.get(key), b.get(key), f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return None if a == b else f"{path or '.'}: {json.dumps(a)[:120]} vs {json.dumps(b)[:120]}"


def part_fleet(lab: Lab, args: argparse.Namespace, deadline: Deadline, nproc: int) -> tuple[str, bool]:
    log: Path = args.fleet_log
    expected = expected_for(log)
    hosts = lab.aliases[: args.hosts]
    keys = ssh_args(lab)
    measures: list[Measure] = []
    pairs: list[tuple[str, Measure, Measure]] = []
    for label, prefix, env in logdoctor_variants(args.baseline):
        tag = "base" if label else "ld"
        one = Measure(
            f"{tag} one host",
            f"`logdoctor diagnose h1 --log LOG ... --format json > out`{label}",
            [*prefix, "diagnose", "h1", "--log", str(log), *keys, "--format", "json"],
            lab.root / f"{tag}-one.json",
            env,
        )
        fleet = Measure(
            f"{tag} {len(hosts)} hosts",
            f"`logdoctor diagnose h1 … h{len(hosts)} --log LOG --jobs {args.jobs} ... --format json > out`{label}",
            [*prefix, "diagnose", *hosts, "--log", str(log), "--jobs", str(args.jobs), *keys, "--format", "json"],
            lab.root / f"{tag}-fleet.json",
            env,
        )
        measures += [one, fleet]
        pairs.append((label, one, fleet))

    def check(m: Measure) -> list[str]:
        reports = load_reports(m.output)
        want = len(hosts) if "hosts" in m.key else 1
        if len(reports) != want:
            return [f"{m.key}: {len(reports)} reports, not {want}"]
        return [p for i, r in enumerate(reports) for p in check_report(r, expected, f"{m.key} #{i + 1}")]

    alternate(lab, measures, args.runs, deadline, check)
    _, one, fleet = pairs[0]
    manifests = command_times(fleet.command, fleet.env, lab.root / "save-fleet", deadline)
    ok = all(not m.problems for m in measures)
    reports = load_reports(fleet.output)
    single = load_reports(one.output)[0]

    def table_row(r: dict[str, Any]) -> tuple[str, str, str, str]:
        top = r["findings"][0] if r["findings"] else {}
        return (r["engine"]["name"], str(top.get("cause", "-")), str(top.get("score", "-")), r["verdict"]["summary"])

    same = all(table_row(r) == table_row(single) for r in reports)
    # Host by host, the whole report is the one-host run's, once the host's name is set aside.
    reference = as_host(without_live_sizes(single), "h1")
    hosts_reports = [as_host(without_live_sizes(r), f"h{i}") for i, r in enumerate(reports, start=1)]
    identical = [r == reference for r in hosts_reports]
    differs = next((i for i, same_as in enumerate(identical) if not same_as), None)
    events = {(log_source(r, log) or {}).get("events") for r in reports}
    ok = ok and same and len(events) == 1 and all(identical)
    engine, cause, score, _ = table_row(single)
    lines = [TABLE_HEAD, *(row(m, nproc) for m in measures)]
    bullets = []
    for label, one_m, fleet_m in pairs:
        ratio = fleet_m.best.wall_s / one_m.best.wall_s
        bullets.append(
            f"- **{len(hosts)} hosts{label} / one host wall: {ratio:.2f}×** (target ≤ {TARGET_FLEET_RATIO:g}×: "
            f"{verdict(ratio <= TARGET_FLEET_RATIO)}); per round {rounds_text(fleet_m, one_m)}."
        )
    if len(pairs) > 1:
        (_, now_one, now_fleet), (_, base_one, base_fleet) = pairs[:2]
        bullets += ab_text([(now_one, base_one), (now_fleet, base_fleet)])
    fleet_cpu = fleet.best.cpu_s + fleet.best.remote_cpu_s
    bullets += [
        f"- CPU of the {len(hosts)}-host run: logdoctor {fleet.best.cpu_s:.2f} s + the servers {fleet.best.remote_cpu_s:.2f} s "
        f"= {fleet_cpu:.1f} s on {nproc} CPUs, at least {fleet_cpu / nproc:.1f} s of wall on this machine; "
        f"one host: {one.best.cpu_s:.2f} s + {one.best.remote_cpu_s:.2f} s.",
        f"- logdoctor's own process (collection, all its threads; sampled from /proc, without its parse workers): "
        f"{_own(fleet.best)} in the {len(hosts)}-host run, {_own(one.best)} for one host.",
        f"- Remote commands of one `--save` run of the {len(hosts)} hosts, mean per host: "
        f"{times_text(time_table(manifests), len(manifests))}.",
        f"- Fleet table (what `--format terminal`/`markdown` print, from the same diagnoses): {len(reports)} reports, "
        f"{sum(1 for r in reports if r.get('errors'))} with errors; every host {engine} / top cause {cause} / score {score}, "
        f"as the one-host run; {'the same' if len(events) == 1 else 'DIFFERENT'} event count on every host "
        f"({', '.join(str(e) for e in sorted(events, key=str))}); "
        f"{sum(identical)} of {len(reports)} JSON reports identical to the one-host run's (host name and the live "
        "nvidia-smi readings aside)"
        + (
            "."
            if differs is None
            else f"; h{differs + 1} differs first at {first_difference(hosts_reports[differs], reference)}."
        ),
        f"- Check: every report has no errors, bytes_read {expected.size:,} = the file's size, "
        f"{expected.stats_lines:,} stats and {expected.spec_lines:,} spec-decode intervals = the `grep -c` counts: "
        + ("ok" if ok else "**FAILED**: " + "; ".join(p for m in measures for p in m.problems[:3])),
    ]
    rel = log.relative_to(REPO) if log.is_relative_to(REPO) else log
    text = (
        f"{len(hosts)} hosts (h1 … h{len(hosts)} on {lab.servers[0].address} … {lab.servers[len(hosts) - 1].address}, "
        f"one sshd each), every one reading `{rel}` ({expected.size:,} bytes) at the same path.\n\n"
        + "\n".join(lines)
        + "\n\n"
        + "\n".join(bullets)
        + "\n"
    )
    return text, ok


def ensure_log(path: Path | None, size: int) -> Path:
    log = path or default_path(size, DEFAULT_SEED)
    if not log.exists():
        if path is not None:
            raise BenchError(f"{log}: no such file")
        print(f"generating {log} ({mib(size)}) ...", file=sys.stderr)
        generate(log, size, DEFAULT_SEED)
    return log.resolve()


def warm(path: Path) -> None:
    with open(path, "rb") as fh:
        while fh.read(16 * 1024 * 1024):
            pass


def versions() -> str:
    ssh = subprocess.run(["ssh", "-V"], capture_output=True, text=True, check=False).stderr.strip()
    import paramiko

    return f"{ssh.split(',')[0]} (client and sshd), paramiko {paramiko.__version__}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=parse_size, default=parse_size("1G"), help="one-host log size (default 1G)")
    parser.add_argument("--log", type=Path, default=None, help="one-host log (default bench/out/vllm-serve-SIZE.log)")
    parser.add_argument("--fleet-size", type=parse_size, default=parse_size("64M"), help="per-host log (default 64M)")
    parser.add_argument("--fleet-log", type=Path, default=None, help="per-host log file")
    parser.add_argument("--hosts", type=int, default=20, help="fleet size (default 20)")
    from logdoctor.sources.limits import DEFAULT_JOBS

    parser.add_argument(
        "--jobs",
        type=int,
        default=DEFAULT_JOBS,
        help=f"logdoctor --jobs for the fleet (default {DEFAULT_JOBS}: its own)",
    )
    parser.add_argument("--runs", type=int, default=3, help="alternating rounds, best of (default 3)")
    parser.add_argument("--only", choices=("one", "fleet"), default=None, help="run one part only")
    parser.add_argument("--baseline", type=Path, default=None, help="also time the logdoctor package in this tree")
    parser.add_argument("--max-seconds", type=float, default=480.0, help="stop after this long (default 480)")
    parser.add_argument("--record", action="store_true", help=f"add the result block to {DOC.relative_to(REPO)}")
    args = parser.parse_args(argv)
    if args.runs < 1 or not 1 <= args.hosts <= 200 or args.jobs < 1:
        parser.error("--runs and --jobs must be at least 1, --hosts between 1 and 200")
    deadline = Deadline(args.max_seconds)
    # SIGTERM unwinds like Ctrl-C, so the `finally` blocks stop the servers and remove the directory
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        if args.baseline is not None:
            args.baseline = args.baseline.resolve()
            check_baseline(args.baseline)
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        args.log = ensure_log(args.log, args.size) if args.only != "fleet" else None
        args.fleet_log = ensure_log(args.fleet_log, args.fleet_size) if args.only != "one" else None
        for path in (args.log, args.fleet_log):
            if path is not None:
                warm(path)
        info = machine()
        nproc = int(info["nproc"])
        parts: list[str] = []
        ok = True
        with ssh_lab(args.hosts if args.only != "one" else 1) as lab:
            if args.only != "fleet":
                print("one host:", file=sys.stderr)
                text, good = part_one(lab, args, deadline, nproc)
                parts.append(text)
                ok = ok and good
            if args.only != "one":
                print(f"{args.hosts} hosts:", file=sys.stderr)
                text, good = part_fleet(lab, args, deadline, nproc)
                parts.append(text)
                ok = ok and good
            ssh_version = versions()
    except (BenchError, LabError) as exc:
        print(f"bench_ssh: {exc}", file=sys.stderr)
        return 2
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = {"one": "one host", "fleet": f"{args.hosts} hosts"}.get(args.only or "", f"one host and {args.hosts} hosts")
    block = (
        f"### SSH collection, {title}, {when}\n\n"
        f"Command: `.venv/bin/python bench/bench_ssh.py {' '.join(argv if argv is not None else sys.argv[1:])}`.\n"
        f"Machine: {info['nproc']} CPUs ({info['cpu']}), {info['memory']} RAM, Linux {info['kernel']}, "
        f"Python {info['python']}, {info['grep']}, {ssh_version}; the servers run on the same CPUs as logdoctor.\n"
        f"Best of {args.runs} alternating rounds. *Collection + the rest*: until logdoctor's last `done:` progress "
        f"line, then parsing, rules and the report. *Remote CPU*: everything the sshd servers ran for the command. "
        f"*CPUs busy*: (logdoctor CPU + remote CPU) / ({nproc} × wall).\n\n" + "\n".join(parts)
    )
    print(block)
    if args.record:
        record_block(block, DOC_SECTION)
        print(f"added to {DOC.relative_to(REPO)}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
