"""A parse worker's CPU a line on an event-dense log, in this one process: what `diagnose` pays a line in each of
its parse workers (logdoctor/pipeline/parallel.py `_parse_range`), without the workers, the grep or the wall clock.

The file's lines go, as one range, through what a worker runs on them: `EventStream` (with the evidence texts
kept), the range's fact partials (`RangeFacts`) and the compressed `EventLog`. The figure is process CPU time, which
other work on a shared machine does not inflate; `--instructions` counts instructions instead (`perf stat`, where
the kernel allows it). `--profile` prints cProfile's top functions. `--digest` prints a hash of the events, the
partials and the texts, so two trees can be checked to give the same range parse:

    .venv/bin/python bench/bench_dense_worker.py --size 20M
    .venv/bin/python bench/bench_dense_worker.py --size 5M --profile 30
    PYTHONPATH=../base .venv/bin/python -P bench/bench_dense_worker.py --size 20M --digest   # another tree

The log is bench_memory's event-dense SGLang log (`--dense` of bench_parse.py), or `--log FILE`.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_memory import write_dense_sglang
from gen_log import OUT_DIR, parse_size


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for number, line in enumerate(fh, start=1):
            yield number, line.rstrip("\n")


def parse_as_worker(path: Path, digest: bool = False) -> tuple[int, float, str]:
    """(lines, CPU seconds, digest or "") of one worker's range parse of the whole file."""
    from logdoctor.eventlog import EventLog
    from logdoctor.facts.partial import RangeFacts
    from logdoctor.parse.keywords import registry_index
    from logdoctor.parse.pipeline import EventStream, SourceStats

    registry_index()  # a forked worker inherits the loaded registry
    lines = list(_lines(path))  # read before the clock starts: the worker's grep hands it lines
    warm = EventStream(path.name, iter(lines[:2000]), keep_text=True)  # the modules a parse imports, imported
    EventLog(RangeFacts().tap(warm))
    started = time.process_time()
    stream = EventStream(path.name, iter(()), keep_text=True)
    stream.final = False
    stats = SourceStats(name=path.name)
    stream.begin_range(iter(lines), stats)
    facts = RangeFacts()
    events = EventLog(facts.tap(stream))
    batches = events.batches()
    segments = facts.segments()
    assert stream.texts is not None
    texts = stream.texts.batches()
    cpu = time.process_time() - started
    if not digest:
        return len(lines), cpu, ""
    hashed = hashlib.sha256()
    for event in events:
        hashed.update(repr(event.model_dump()).encode())
    hashed.update(repr((stats.lines, stats.candidates, stats.events, stats.unrecognised)).encode())
    hashed.update(repr(stream.carried_state()).encode())
    for blob, span in texts:
        hashed.update(repr(span).encode() + blob)
    partials = hashlib.sha256(pickle.dumps([repr(s) for s in segments] if segments is not None else None))
    del batches
    # The partials' digest changes with their layout (facts/partial.py); the parent's diagnosis is compared by
    # tests/pipeline/test_parallel_facts.py and bench_parse.py --compare-trees.
    return len(lines), cpu, f"events {hashed.hexdigest()[:16]}, partials {partials.hexdigest()[:16]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=parse_size, default=parse_size("20M"), help="dense log size (default 20M)")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--log", type=Path, default=None, help="this file instead of the generated dense log")
    parser.add_argument("--runs", type=int, default=1, help="parses; the least CPU is reported (default 1)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile: print the top N by own time")
    parser.add_argument("--digest", action="store_true", help="print a hash of the range parse")
    args = parser.parse_args(argv)
    log: Path = args.log or OUT_DIR / f"dense-sglang-{args.size}-{args.seed}.log"
    if not log.exists():
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        write_dense_sglang(log, args.size, args.seed)
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        parse_as_worker(log)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
        return 0
    best = None
    for _ in range(args.runs):
        lines, cpu, digest = parse_as_worker(log, args.digest)
        best = cpu if best is None else min(best, cpu)
    assert best is not None
    print(f"{log.name}: {lines:,} lines, worker CPU {best:.2f} s, {best / lines * 1e6:.1f} us a line")
    if args.digest:
        print(f"digest: {digest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
