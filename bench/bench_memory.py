"""Peak memory (RSS) and wall time of `logdoctor diagnose` against `logdoctor parse` on big logs.

Inputs: the generated vLLM serving logs of `bench/gen_log.py` (64 MiB, 256 MiB, 1 GiB by default: about one
stats and one SpecDecoding line in 75 lines), and an event-dense log written here, in which every line but the
first is an event: vLLM 0.20.1 `Engine 000:` stats lines and `SpecDecoding metrics:` lines, alternating, with
values drawn from a seeded random generator (so they compress like a real log's, not like one line repeated).

Each command runs in a measuring process of its own, which reads `getrusage(RUSAGE_CHILDREN).ru_maxrss`: the
peak RSS of the largest process it waited for (logdoctor, or a grep prefilter it started). Wall time is that
process's. `--baseline TREE` runs an older tree too (a `git archive` with `rules/` copied to `logdoctor/_rules`)
with the same interpreter and packages (`python -S`, TREE and this site-packages on PYTHONPATH), in the same
run, alternating with this tree.

    .venv/bin/python bench/bench_memory.py                               # 64M, 256M, 1G and a 300M dense log
    .venv/bin/python bench/bench_memory.py --sizes 64M --dense 20M --baseline /tmp/ld-base
    .venv/bin/python bench/bench_memory.py --sizes "" --dense 300M --no-parse
    .venv/bin/python bench/bench_memory.py --sizes 1G --dense "" --workers   # with the parse workers

Every command runs in one process (`LOGDOCTOR_PARSE_WORKERS=0`: no parse workers, logdoctor.pipeline.parallel) unless
`--workers` is given: the memory targets are one process's, and workers trade memory for wall time.

Logs are written under bench/out/ (kept: generating 1 GiB takes a while) unless they exist.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_log import OUT_DIR, default_path, parse_size, size_label

REPO = Path(__file__).resolve().parents[1]
MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
    "w = time.perf_counter() - t; sys.stderr.buffer.write(r.stderr[-2000:]); u = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(u.ru_maxrss, w, u.ru_utime + u.ru_stime, r.returncode, file=sys.stderr)"
)
VERSION = "(APIServer pid=1) INFO 05-08 16:20:01 [api_server.py:1885] vLLM API server version 0.20.1\n"
STATS = (
    "(APIServer pid=1) INFO {stamp} [loggers.py:271] Engine 000: Avg prompt throughput: {prompt:.1f} tokens/s, "
    "Avg generation throughput: {gen:.1f} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
    "GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {hit:.1f}%\n"
)
SPEC = (
    "(APIServer pid=1) INFO {stamp} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: {length:.2f}, "
    "Accepted throughput: {acc:.2f} tokens/s, Drafted throughput: {drafted:.2f} tokens/s, Accepted: {acc_n} "
    "tokens, Drafted: {drafted_n} tokens, Per-position acceptance rate: {positions}, Avg Draft acceptance rate: "
    "{rate:.1f}%\n"
)


def write_dense(path: Path, size: int, seed: int = 15) -> None:
    """A log of `size` bytes in which every line after the version line is a stats or SpecDecoding event."""
    rng = random.Random(seed)
    start = datetime.datetime(2026, 5, 8, 16, 20, 11)
    written = 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(VERSION)
        written += len(VERSION)
        step = 0
        while written < size:
            stamp = (start + datetime.timedelta(seconds=10 * step)).strftime("%m-%d %H:%M:%S")
            running = rng.randint(1, 8)
            gen = rng.uniform(15, 40) * running
            lines = STATS.format(
                stamp=stamp,
                prompt=rng.uniform(0, 400),
                gen=gen,
                running=running,
                waiting=rng.choice((0, 0, 0, 1, 2)),
                kv=rng.uniform(0, 90),
                hit=rng.uniform(0, 60),
            )
            positions = [max(0.0, 0.8 - 0.06 * i + rng.uniform(-0.05, 0.05)) for i in range(15)]
            drafted_n = 15 * rng.randint(10, 60)
            acc_n = int(drafted_n * sum(positions) / 15)
            lines += SPEC.format(
                stamp=stamp,
                length=1 + sum(positions),
                acc=acc_n / 10,
                drafted=drafted_n / 10,
                acc_n=acc_n,
                drafted_n=drafted_n,
                positions=", ".join(f"{p:.3f}" for p in positions),
                rate=100 * acc_n / drafted_n,
            )
            fh.write(lines)
            written += len(lines)
            step += 1
    tmp.replace(path)


SGLANG_HEAD = (
    "[{day} 16:20:01] server_args=ServerArgs(model_path='Qwen/Qwen3-32B', tp_size=2, dp_size=1, "
    "speculative_algorithm='EAGLE3', speculative_num_steps=3, speculative_eagle_topk=1, "
    "speculative_num_draft_tokens=4)\n"
)
DECODE = (
    "[{day} {clock} TP{rank}] Decode batch, #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, "
    "accept len: {accept:.2f}, accept rate: {rate:.2f}, cuda graph: True, gen throughput (token/s): {gen:.2f}, "
    "#queue-req: {queue}, \n"
)
PREFILL = (
    "[{day} {clock} TP{rank}] Prefill batch, #new-seq: {seqs}, #new-token: {new}, #cached-token: {cached}, "
    "token usage: {usage:.2f}, #running-req: {running}, #queue-req: {queue}, \n"
)


def write_dense_sglang(path: Path, size: int, seed: int = 28, ranks: int = 2) -> None:
    """A busy SGLang server's log of `size` bytes: after its server_args line, every line is a `Decode batch` line
    (one every 40 decode steps per TP rank, SGLang's default `--decode-log-interval`), with a `Prefill batch` line
    per rank in every 20 steps, values drawn from a seeded random generator."""
    rng = random.Random(seed)
    start = datetime.datetime(2026, 5, 8, 16, 20, 11)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        head = SGLANG_HEAD.format(day=start.strftime("%Y-%m-%d"))
        fh.write(head)
        written = len(head)
        step = 0
        while written < size:
            now = start + datetime.timedelta(milliseconds=1500 * step)
            day, clock = now.strftime("%Y-%m-%d"), now.strftime("%H:%M:%S")
            running = rng.randint(8, 64)
            usage = rng.uniform(0.2, 0.95)
            accept = rng.uniform(2.0, 3.6)
            lines = "".join(
                DECODE.format(
                    day=day,
                    clock=clock,
                    rank=rank,
                    running=running,
                    tokens=int(usage * 350_000),
                    usage=usage,
                    accept=accept,
                    rate=accept / 4,
                    gen=running * rng.uniform(30, 60),
                    queue=rng.choice((0, 0, 0, 1, 3)),
                )
                for rank in range(ranks)
            )
            if step % 20 == 0:
                new = rng.randint(500, 16384)
                lines += "".join(
                    PREFILL.format(
                        day=day,
                        clock=clock,
                        rank=rank,
                        seqs=rng.randint(1, 4),
                        new=new,
                        cached=rng.randint(0, new),
                        usage=usage,
                        running=running,
                        queue=0,
                    )
                    for rank in range(ranks)
                )
            fh.write(lines)
            written += len(lines)
            step += 1
    tmp.replace(path)


@dataclass
class Measured:
    peak_kib: int
    wall_s: float
    cpu_s: float  # user + system of the command and its children: what load from other work does not inflate


def measure(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Measured:
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )
    last = result.stderr.strip().splitlines()[-1].split()
    peak, wall, cpu, rc = int(last[0]), float(last[1]), float(last[2]), int(last[3])
    if rc != 0:
        raise SystemExit(f"{' '.join(command)}: exit {rc}\n{result.stderr[-2000:]}")
    return Measured(peak, wall, cpu)


Tree = tuple[str, list[str], dict[str, str] | None, Path]


def trees(baseline: Path | None) -> list[Tree]:
    out: list[Tree] = [("this tree", [sys.executable, "-m", "logdoctor"], None, REPO)]
    if baseline is not None:
        # Run from the baseline tree: `-m` puts the working directory first on sys.path.
        env = dict(os.environ, PYTHONPATH=f"{baseline}{os.pathsep}{sysconfig.get_paths()['purelib']}")
        out.append((f"baseline {baseline}", [sys.executable, "-S", "-m", "logdoctor"], env, baseline.resolve()))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="64M,256M,1G", help="bench/gen_log.py sizes, comma-separated ('' none)")
    parser.add_argument("--dense", default="300M", help="size of the event-dense log ('' none; default 300M)")
    parser.add_argument("--no-parse", action="store_true", help="measure diagnose only")
    parser.add_argument("--baseline", type=Path, default=None, help="an older tree to measure in the same run")
    parser.add_argument("--runs", type=int, default=1, help="rounds, the trees' order flipped each round (default 1)")
    parser.add_argument("--workers", action="store_true", help="let big files be parsed in worker processes")
    args = parser.parse_args(argv)
    if not args.workers:
        os.environ["LOGDOCTOR_PARSE_WORKERS"] = "0"  # inherited by every command below (and the baseline's)

    logs: list[tuple[str, Path]] = []
    for text in filter(None, (s.strip() for s in args.sizes.split(","))):
        size = parse_size(text)
        path = default_path(size)
        if not path.exists():
            print(f"generating {path} ...", file=sys.stderr)
            subprocess.run(
                [sys.executable, str(REPO / "bench/gen_log.py"), "--size", text, "--out", str(path)], check=True
            )
        logs.append((f"{size_label(size)} bench log", path))
    if args.dense:
        size = parse_size(args.dense)
        path = OUT_DIR / f"dense-{size_label(size).replace(' ', '')}.log"
        if not path.exists():
            print(f"generating {path} ...", file=sys.stderr)
            OUT_DIR.mkdir(parents=True, exist_ok=True)
            write_dense(path, size)
        logs.append((f"{size_label(size)} event-dense log", path))

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"### Memory, {now}\n")
    print(f"{platform.node()}: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start; peak RSS")
    print(f"of the largest process (the largest of {args.runs} round(s)), wall and CPU time (user + system) of the")
    print(
        "command and its children (the fastest round; stdout to /dev/null); "
        + ("parse workers allowed.\n" if args.workers else "one process (`LOGDOCTOR_PARSE_WORKERS=0`).\n")
    )
    print(
        "| log | lines | tree | diagnose peak | diagnose wall (CPU) | parse peak | parse wall (CPU) | diagnose / parse CPU |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for label, path in logs:
        with open(path, "rb") as fh:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
        results: dict[str, list[tuple[Measured, Measured | None]]] = {}
        for round_ in range(args.runs):
            order = trees(args.baseline)
            for tree, prefix, env, cwd in order if round_ % 2 == 0 else order[::-1]:
                diag = measure([*prefix, "diagnose", str(path), "--format", "json", "--fail-on", "never"], env, cwd)
                parsed = (
                    None if args.no_parse else measure([*prefix, "parse", str(path), "--format", "jsonl"], env, cwd)
                )
                results.setdefault(tree, []).append((diag, parsed))
        for tree, measured in results.items():
            # The largest peak and the fastest wall of the rounds: load from other work only ever adds time.
            peak = max(d.peak_kib for d, _ in measured) / 1024
            wall = min(d.wall_s for d, _ in measured)
            cpu = min(d.cpu_s for d, _ in measured)
            cells = [label, f"{lines:,}", tree, f"{peak:.1f} MiB", f"{wall:.1f} s ({cpu:.1f} s)"]
            parses = [p for _, p in measured if p is not None]
            if parses:
                parse_wall = min(p.wall_s for p in parses)
                parse_cpu = min(p.cpu_s for p in parses)
                parse_peak = max(p.peak_kib for p in parses) / 1024
                cells += [f"{parse_peak:.1f} MiB", f"{parse_wall:.1f} s ({parse_cpu:.1f} s)", f"{cpu / parse_cpu:.2f}x"]
            else:
                cells += ["", "", ""]
            print("| " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
