"""The parse's cost on long lines: CPU time (process_time) of N lines of SIZE characters, in four shapes.

    .venv/bin/python bench/bench_long_lines.py                  # 2,000 lines of 8,000 characters a shape
    .venv/bin/python bench/bench_long_lines.py --lines 200 --size 65536

Each shape is a line an engine prints followed by a long run of prose (a prompt, a pasted document):

    prompt      a line with no line type's keyword (`Received prompt: ...`): chosen by no line type
    vllm        a vLLM line starting with a line type's keyword, each keyword in turn
    sglang      the same after an SGLang header (its lines carry no level: the warning vocabulary reads them too)
    warning     a vLLM WARNING no line type reads: the warning vocabulary classifies it

Every line type is warmed up first (its regexes compiled) on short lines, so only the long lines are timed; the
figure is the best of `--runs`, as CPU time of this process (docs/security.md, *Bounded*).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from logdoctor.parse.keywords import candidate_keywords
from logdoctor.parse.pipeline import EventStream

VLLM = "(APIServer pid=1) INFO 05-08 14:02:11 [x.py:1] "
WARNING = "(APIServer pid=1) WARNING 05-08 14:02:11 [x.py:1] "
SGLANG = "[2026-05-07 09:13:19 TP0] "
PROSE = "lorem ipsum dolor sit amet "


def shapes() -> dict[str, Callable[[int, str], str]]:
    keywords = [str(k) for k in candidate_keywords()]
    return {
        "prompt": lambda i, run: f"{VLLM}Received prompt: {run}",
        "vllm": lambda i, run: f"{VLLM}{keywords[i % len(keywords)]} {run}",
        "sglang": lambda i, run: f"{SGLANG}{keywords[i % len(keywords)]} {run}",
        "warning": lambda i, run: f"{WARNING}falling back to a slower path {run}",
    }


def cost(lines: list[tuple[int, str]], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        for _event in EventStream("x.log", lines):
            pass
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--size", type=int, default=8000, help="characters a line")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    made = shapes()
    warm = [(i + 1, make(i, "x")) for make in made.values() for i in range(len(candidate_keywords()))]
    cost(warm, 1)
    run = (PROSE * (args.size // len(PROSE) + 1))[: args.size]
    total = 0.0
    for name, make in made.items():
        lines = [(i + 1, make(i, run)[: args.size]) for i in range(args.lines)]
        seconds = cost(lines, args.runs)
        total += seconds
        per_char = seconds / (args.lines * args.size) * 1e9
        size = f"{args.lines:,} lines of {args.size:,} characters"
        print(f"{name:8s} {size}: {seconds:7.2f} s CPU, {per_char:6.0f} ns a character")
    print(f"all four shapes: {total:.2f} s CPU")


if __name__ == "__main__":
    main()
