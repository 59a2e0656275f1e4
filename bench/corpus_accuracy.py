"""Diagnosis accuracy on the labelled corpus: is the labelled primary cause the top finding?

    .venv/bin/python bench/corpus_accuracy.py [--corpus ../shared/corpus] [--markdown]

For each `*.log` with a `.yaml` label (first cause = primary), runs the same pipeline as
`logdoctor diagnose` and reports: primary cause ranked 1st, within the top 3, and for healthy logs
the highest finding score (target: below 50). Issue #3 targets: top-1 >= 85%, top-3 >= 95% of
problem logs; no healthy log with a finding scored 50 or more.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from logdoctor.engine.rules import load_rules
from logdoctor.run import LineSource, diagnose_sources
from logdoctor.sources.local import open_local

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


@dataclass
class Row:
    case: str
    label: str
    ranked: list[tuple[str, int]]

    @property
    def healthy(self) -> bool:
        return self.label == "healthy"

    @property
    def rank(self) -> int | None:
        causes: list[str] = []
        for cause, _ in self.ranked:
            if cause not in causes:
                causes.append(cause)
        return causes.index(self.label) + 1 if self.label in causes else None


def run(corpus: Path) -> list[Row]:
    rules = load_rules()
    rows: list[Row] = []
    for label_path in sorted(corpus.rglob("*.yaml")):
        log = label_path.with_suffix(".log")
        if not log.exists():
            continue
        label = yaml.safe_load(label_path.read_text(encoding="utf-8"))
        primary = str(label["causes"][0])
        source = open_local(str(log))
        diagnosis = diagnose_sources([LineSource(name=log.name, lines=source.lines())], rules)
        rows.append(Row(f"{log.parent.name}/{log.stem}", primary, [(f.cause, f.score) for f in diagnosis.findings]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--markdown", action="store_true", help="print the per-case table as Markdown")
    args = parser.parse_args(argv)
    rows = run(args.corpus)
    problems = [r for r in rows if not r.healthy]
    healthy = [r for r in rows if r.healthy]
    top1 = sum(1 for r in problems if r.rank == 1)
    top3 = sum(1 for r in problems if r.rank is not None and r.rank <= 3)
    worst_healthy = max((max((s for _, s in r.ranked), default=0) for r in healthy), default=0)
    print("| case | label | rank | top findings (cause:score) |")
    print("|---|---|---|---|")
    for r in rows:
        top = ", ".join(f"{c}:{s}" for c, s in r.ranked[:3]) or "(none)"
        rank = "-" if r.healthy else (str(r.rank) if r.rank else "missed")
        print(f"| {r.case} | {r.label} | {rank} | {top} |")
    print()
    print(
        f"problem logs: {len(problems)}; primary cause ranked 1st: {top1} ({100 * top1 / max(len(problems), 1):.0f}%), "
        f"in top 3: {top3} ({100 * top3 / max(len(problems), 1):.0f}%)"
    )
    print(f"healthy logs: {len(healthy)}; highest finding score on a healthy log: {worst_healthy}")
    ok = top1 >= 0.85 * len(problems) and top3 >= 0.95 * len(problems) and worst_healthy < 50
    print("targets met" if ok else "targets NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
