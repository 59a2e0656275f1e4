"""Snapshot of logdoctor's observable behaviour on every fixture, to prove a refactor changes nothing.

    .venv/bin/python bench/behaviour_snapshot.py OUT_DIR            # write the snapshot of this tree
    .venv/bin/python bench/behaviour_snapshot.py OUT_DIR --jobs 16  # several logdoctor processes at a time
    .venv/bin/python bench/behaviour_snapshot.py OUT_DIR --only '*.diagnose.md'  # only the outputs so named
    .venv/bin/python bench/behaviour_snapshot.py --compare A B      # list every file that differs

For each fixture case under fixtures/logs (a log, a .log.gz or a folder of files = one deployment) it writes
`logdoctor parse --format jsonl`, `logdoctor diagnose --format json` and `--format markdown` under each engine
choice, plus `diff --format json` of every pair of story logs and of the fixtures/diff cases, and the output of
`logdoctor test` and `logdoctor rules list`. Run it with the tree before and after the change (e.g. a
`git archive` of the old commit with its own venv, or the same venv with PYTHONPATH pointing at the old tree).
"""

from __future__ import annotations

import argparse
import filecmp
import fnmatch
import itertools
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("auto", "vllm", "sglang")


def cases(root: Path) -> list[list[Path]]:
    found: list[list[Path]] = []
    for expect in sorted(root.rglob("*.expect.yaml")):
        stem = expect.name[: -len(".expect.yaml")]
        folder = expect.with_name(stem)
        if folder.is_dir():
            found.append(sorted(p for p in folder.iterdir() if p.is_file()))
            continue
        for suffix in (".log", ".log.gz", ".txt"):
            log = expect.with_name(stem + suffix)
            if log.exists():
                found.append([log])
                break
    return found


def logdoctor(*args: str) -> bytes:
    done = subprocess.run([sys.executable, "-m", "logdoctor", *args], capture_output=True, cwd=ROOT, check=False)
    return b"rc=%d\n" % done.returncode + done.stdout + b"\n--- stderr\n" + done.stderr


def snapshot(out: Path, jobs: int = 1, only: tuple[str, ...] = ()) -> None:
    out.mkdir(parents=True, exist_ok=True)
    logs = ROOT / "fixtures" / "logs"
    runs: list[tuple[str, tuple[str, ...]]] = []  # (output file, logdoctor arguments)
    for case in cases(logs):
        name = "__".join((*case[0].relative_to(logs).parts[:-1], case[0].name))
        paths = [str(p.relative_to(ROOT)) for p in case]
        for engine in ENGINES:
            runs.append((f"{name}.{engine}.parse.jsonl", ("parse", "--format", "jsonl", "--engine", engine, *paths)))
            runs.append(
                (
                    f"{name}.{engine}.diagnose.json",
                    ("diagnose", "--format", "json", "--engine", engine, "--fail-on", "never", *paths),
                )
            )
        runs.append((f"{name}.diagnose.md", ("diagnose", "--format", "markdown", *paths)))
    story = sorted((logs / "story").glob("*.log"))
    for a, b in itertools.permutations(story, 2):
        pair = (str(a.relative_to(ROOT)), str(b.relative_to(ROOT)))
        runs.append((f"diff__{a.stem}__{b.stem}.json", ("diff", "--format", "json", *pair)))
    for folder in sorted((ROOT / "fixtures" / "diff").glob("*")):
        files = sorted(folder.glob("*.log"))
        if len(files) == 2:
            runs.append(
                (f"diff__{folder.name}.json", ("diff", "--format", "json", *(str(f.relative_to(ROOT)) for f in files)))
            )
    runs += [("test.txt", ("test",)), ("rules-list.txt", ("rules", "list")), ("rules-facts.txt", ("rules", "facts"))]
    if only:  # a change that cannot reach some commands (e.g. the rule engine never runs in `parse`) checks the rest
        runs = [run for run in runs if any(fnmatch.fnmatchcase(run[0], pattern) for pattern in only)]

    def one(run: tuple[str, tuple[str, ...]]) -> None:
        name, args = run
        output = logdoctor(*args)
        if name == "test.txt":
            output = re.sub(rb"\d+\.\d+ s\b", b"_ s", output)  # durations are the one thing that may differ
        (out / name).write_bytes(output)

    # Each run is its own process: `--jobs` runs several at once (the whole snapshot is ~1,500 processes).
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, runs))


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differing = [n for n in names if not ((a / n).exists() and (b / n).exists() and filecmp.cmp(a / n, b / n, False))]
    for name in differing:
        print(f"differs: {name}")
    print(f"{len(names) - len(differing)} of {len(names)} outputs identical")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument("--jobs", type=int, default=1, help="logdoctor processes at a time (default 1)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="GLOB",
        help="only the outputs whose file name matches (repeatable)",
    )
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.out is None:
        parser.error("give OUT_DIR or --compare A B")
    snapshot(args.out, args.jobs, tuple(args.only))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
