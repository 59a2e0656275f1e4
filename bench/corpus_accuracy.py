"""Diagnosis accuracy on labelled real-log corpora: is the labelled primary cause the top finding?

    .venv/bin/python bench/corpus_accuracy.py                      # the default corpora
    .venv/bin/python bench/corpus_accuracy.py --corpus fixtures/logs/realworld
    .venv/bin/python bench/corpus_accuracy.py --corpus ../shared/corpus --corpus DIR

A case is a `<case>.log` with a label `<case>.yaml` beside it (the `.yaml` that is not an
`.expect.yaml`; first cause = primary, `healthy` for a run without a problem). Each log runs
through the same pipeline as `logdoctor diagnose` (built-in rules, no suppressions). The report
gives, per corpus and for all corpora together: the primary cause ranked 1st and within the top 3
(problem logs; causes are ranked by their best finding), the primary cause's problem ranked 1st (the report's
unit: causes of one mechanism, such as spec-net-loss and spec-low-acceptance, are one problem; engine/problems.py),
and the highest finding score on a
healthy log. The accuracy targets: top-1 >= 90%, top-3 >= 97%, no healthy log with a finding of
50 or more; the exit status is 0 when all corpora together meet them.

Default corpora: ../shared/corpus (the logs the rules were written from), fixtures/logs/realworld
(real logs collected afterwards; some rules were changed after them), and the held-out sets
fixtures/logs/realworld2 ... realworld14 (each labelled and committed before logdoctor was run on it).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from logdoctor.engine.problems import problem_id
from logdoctor.engine.rules import load_rules
from logdoctor.pipeline.run import LineSource, diagnose_sources
from logdoctor.sources.local import open_local

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPORA = [
    REPO.parent / "shared" / "corpus",
    REPO / "fixtures" / "logs" / "realworld",
    REPO / "fixtures" / "logs" / "realworld2",
    REPO / "fixtures" / "logs" / "realworld3",
    REPO / "fixtures" / "logs" / "realworld4",
    REPO / "fixtures" / "logs" / "realworld5",
    REPO / "fixtures" / "logs" / "realworld6",
    REPO / "fixtures" / "logs" / "realworld7",
    REPO / "fixtures" / "logs" / "realworld8",
    REPO / "fixtures" / "logs" / "realworld9",
    REPO / "fixtures" / "logs" / "realworld10",
    REPO / "fixtures" / "logs" / "realworld11",
    REPO / "fixtures" / "logs" / "realworld12",
    REPO / "fixtures" / "logs" / "realworld13",
    REPO / "fixtures" / "logs" / "realworld14",
]
HEALTHY_LIMIT = 50
TOP1_TARGET = 0.90
TOP3_TARGET = 0.97


@dataclass
class Row:
    corpus: str
    case: str
    label: str
    ranked: list[tuple[str, str, int]]  # (cause, rule, score), best first
    problems: list[str] = field(default_factory=list)  # the report's problems (engine/problems.py), best first

    @property
    def healthy(self) -> bool:
        return self.label == "healthy"

    @property
    def causes(self) -> list[str]:
        causes: list[str] = []
        for cause, _, _ in self.ranked:
            if cause not in causes:
                causes.append(cause)
        return causes

    @property
    def rank(self) -> int | None:
        causes = self.causes
        return causes.index(self.label) + 1 if self.label in causes else None

    @property
    def problem_rank(self) -> int | None:
        """The rank of the problem the primary cause belongs to, as the report counts them: a cause that shares
        one mechanism with a higher finding (spec-low-acceptance under below-break-even) is in the same problem."""
        wanted = problem_id(self.label)
        return self.problems.index(wanted) + 1 if wanted in self.problems else None

    @property
    def top_score(self) -> int:
        return max((score for _, _, score in self.ranked), default=0)


def label_files(corpus: Path) -> list[Path]:
    """The label of each case: `<case>.yaml` with `<case>.log` beside it, never an `.expect.yaml`."""
    labels = []
    for path in sorted(corpus.rglob("*.yaml")):
        if path.name.endswith(".expect.yaml"):
            continue
        if path.with_suffix(".log").exists():
            labels.append(path)
    return labels


def run(corpus: Path) -> list[Row]:
    rules = load_rules()
    rows: list[Row] = []
    for label_path in label_files(corpus):
        log = label_path.with_suffix(".log")
        label = yaml.safe_load(label_path.read_text(encoding="utf-8"))
        primary = str(label["causes"][0])
        source = open_local(str(log))
        diagnosis = diagnose_sources([LineSource(name=log.name, lines=source.lines())], rules)
        case = log.relative_to(corpus).with_suffix("").as_posix()
        ranked = [(f.cause, f.rule, f.score) for f in diagnosis.findings]
        rows.append(Row(corpus.name, case, primary, ranked, [p.id for p in diagnosis.problems]))
    return rows


@dataclass
class Summary:
    problems: int
    top1: int
    top3: int
    healthy: int
    worst_healthy: int
    top1_problem: int = 0

    @classmethod
    def of(cls, rows: list[Row]) -> Summary:
        problems = [r for r in rows if not r.healthy]
        healthy = [r for r in rows if r.healthy]
        return cls(
            problems=len(problems),
            top1=sum(1 for r in problems if r.rank == 1),
            top3=sum(1 for r in problems if r.rank is not None and r.rank <= 3),
            healthy=len(healthy),
            worst_healthy=max((r.top_score for r in healthy), default=0),
            top1_problem=sum(1 for r in problems if r.problem_rank == 1),
        )

    def line(self, name: str) -> str:
        def pct(n: int) -> str:
            return f"{100 * n / max(self.problems, 1):.0f}%"

        return (
            f"{name}: problem logs {self.problems}; primary cause ranked 1st: {self.top1} ({pct(self.top1)}), "
            f"in top 3: {self.top3} ({pct(self.top3)}); its problem ranked 1st: {self.top1_problem} "
            f"({pct(self.top1_problem)}); healthy logs {self.healthy}; "
            f"highest finding score on a healthy log: {self.worst_healthy}"
        )

    @property
    def met(self) -> bool:
        return (
            self.top1 >= TOP1_TARGET * self.problems
            and self.top3 >= TOP3_TARGET * self.problems
            and self.worst_healthy < HEALTHY_LIMIT
        )


def table(rows: list[Row]) -> list[str]:
    out = ["| corpus | case | label | rank | top findings (cause:score [rule]) |", "|---|---|---|---|---|"]
    for r in rows:
        top = ", ".join(f"{c}:{s} [{rule}]" for c, rule, s in r.ranked[:3]) or "(none)"
        rank = "-" if r.healthy else (str(r.rank) if r.rank else "missed")
        out.append(f"| {r.corpus} | {r.case} | {r.label} | {rank} | {top} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        help="a labelled corpus folder (repeatable; default: ../shared/corpus and fixtures/logs/realworld)",
    )
    parser.add_argument("--markdown", action="store_true", help="accepted for compatibility; the table is Markdown")
    args = parser.parse_args(argv)
    corpora: list[Path] = args.corpus or list(DEFAULT_CORPORA)
    for corpus in corpora:
        if not corpus.is_dir():
            print(f"error: corpus folder not found: {corpus}", file=sys.stderr)
            return 2
    per_corpus = [(corpus, run(corpus)) for corpus in corpora]
    everything = [row for _, rows in per_corpus for row in rows]
    for line in table(everything):
        print(line)
    print()
    for corpus, rows in per_corpus:
        print(Summary.of(rows).line(os.path.relpath(corpus)))
    total = Summary.of(everything)
    if len(per_corpus) > 1:
        print(total.line("all corpora"))
    print("targets met" if total.met else "targets NOT met")
    return 0 if total.met else 1


if __name__ == "__main__":
    sys.exit(main())
