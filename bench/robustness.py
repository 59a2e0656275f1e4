"""Do verdicts survive the way real logs arrive? Wrapped and cut variants of every labelled corpus log.

    .venv/bin/python bench/robustness.py                         # every variant of the default corpora
    .venv/bin/python bench/robustness.py --variant gh-quote --variant head-200
    .venv/bin/python bench/robustness.py --corpus fixtures/logs/realworld --cases   # and the cases that changed

Logs reach logdoctor pasted into issues, through `docker logs --timestamps`, `kubectl logs --prefix`,
`journalctl`, a terminal with colours, a Windows editor, a Ray cluster, or cut to what fitted a comment.
Each labelled log of bench/corpus_accuracy.py's corpora is rewritten in memory (nothing is written to
disk) by one *wrapper* (every line gets the same envelope) or one *cut* (part of the log is dropped),
then diagnosed by the same pipeline as `logdoctor diagnose` (built-in rules, no suppressions).

Per variant the report gives, against the unwrapped original: problem logs whose labelled cause is first
and in the top 3, healthy logs' highest finding score, and the problem logs whose verdict is *healthy*
(a cut that removes the evidence must give *inconclusive* or a weaker finding, never healthy; the
original row says how many are called healthy uncut, and `--cases` lists each log a variant turned
healthy or ranked lower). A wrapper should change nothing; a cut may lose the
evidence, so its figures are a floor to watch, not a target.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_accuracy import DEFAULT_CORPORA, HEALTHY_LIMIT, label_files

from logdoctor.engine.rules import LoadedRule, load_rules
from logdoctor.parse.envelope import parse_envelope
from logdoctor.pipeline.run import LineSource, diagnose_sources
from logdoctor.sources.local import open_local

Lines = list[str]


def _numbered(fmt: Callable[[int, str], str]) -> Callable[[Lines], Lines]:
    return lambda lines: [fmt(i, line) for i, line in enumerate(lines)]


def _docker_ts(i: int, line: str) -> str:
    # `docker logs --timestamps`: RFC 3339 with nanoseconds, one second a line from an arbitrary start
    s = i % 60
    m = (i // 60) % 60
    h = (8 + i // 3600) % 24
    return f"2026-05-12T{h:02d}:{m:02d}:{s:02d}.{(i * 7919) % 10**9:09d}Z {line}"


def _journald(i: int, line: str) -> str:
    s = i % 60
    m = (i // 60) % 60
    return f"Dec 01 10:{m:02d}:{s:02d} gpu-node-3 vllm[4121]: {line}"


_ANSI_LEVELS = {"INFO": "\x1b[32m", "WARNING": "\x1b[33m", "ERROR": "\x1b[31m", "DEBUG": "\x1b[36m"}


def _ansi(line: str) -> str:
    # a colouring formatter: the level word coloured, the process prefix bold cyan (vLLM's own colour)
    for word, colour in _ANSI_LEVELS.items():
        if f"{word} " in line:
            line = line.replace(f"{word} ", f"{colour}{word}\x1b[0m ", 1)
            break
    if line.startswith("("):
        close = line.find(")")
        if close > 0:
            line = f"\x1b[1;36m{line[: close + 1]}\x1b[0;0m{line[close + 1 :]}"
    return line


def _ray(line: str) -> str:
    # Ray's driver prefixes what a worker actor logs: every line with an engine's log header and no process
    # prefix of its own gets one (a pasted command line or a benchmark table is not an actor's output)
    if "pid=" in line[:80]:
        return line
    parsed = parse_envelope("-", 1, line)
    if parsed.header is None or parsed.header == "uvicorn":
        return line
    return f"(RayWorkerWrapper pid=123) {line}"


def _docker_json(i: int, line: str) -> str:
    # Docker's json-file log driver (/var/lib/docker/containers/<id>/<id>-json.log): one JSON object a line
    s = i % 60
    m = (i // 60) % 60
    return json.dumps({"log": line + "\n", "stream": "stderr", "time": f"2026-05-12T08:{m:02d}:{s:02d}.{i:09d}Z"})


def _hard_wrap(lines: Lines, width: int = 120) -> Lines:
    # a terminal or an editor that breaks long lines at a fixed width: the rest of a line on lines of its own
    out: Lines = []
    for line in lines:
        out.extend([line[at : at + width] for at in range(0, len(line), width)] or [""])
    return out


def _middle(lines: Lines, width: int = 300) -> Lines:
    if len(lines) <= width:
        return lines
    start = (len(lines) - width) // 2
    return lines[start : start + width]


# name -> (kind, transform). Wrappers keep every line; cuts drop some.
VARIANTS: dict[str, tuple[str, Callable[[Lines], Lines]]] = {
    "docker-ts": ("wrapper", _numbered(_docker_ts)),
    "kubectl-prefix": ("wrapper", lambda ls: [f"[pod/vllm-0/server] {x}" for x in ls]),
    "journald": ("wrapper", _numbered(_journald)),
    "ansi": ("wrapper", lambda ls: [_ansi(x) for x in ls]),
    "crlf": ("wrapper", lambda ls: [f"{x}\r" for x in ls]),
    "gh-quote": ("wrapper", lambda ls: [f"> {x}" if x else ">" for x in ls]),
    "gutter": ("wrapper", _numbered(lambda i, x: f"{i + 1:>6}\t{x}")),
    "ray-prefix": ("wrapper", lambda ls: [_ray(x) for x in ls]),
    "docker-json": ("wrapper", _numbered(_docker_json)),
    "html-escaped": ("wrapper", lambda ls: [html.escape(x) for x in ls]),
    "hard-wrap-120": ("wrapper", _hard_wrap),
    "head-200": ("cut", lambda ls: ls[:200]),
    "tail-200": ("cut", lambda ls: ls[-200:]),
    "middle-300": ("cut", _middle),
    "every-other": ("cut", lambda ls: ls[::2]),
    "truncate-200": ("cut", lambda ls: [x[:200] for x in ls]),
}


@dataclass
class Case:
    corpus: str
    name: str
    label: str
    lines: Lines


@dataclass
class Outcome:
    rank: int | None
    top_score: int
    verdict: str
    top: str


def load_cases(corpora: list[Path]) -> list[Case]:
    cases: list[Case] = []
    for corpus in corpora:
        for label_path in label_files(corpus):
            log = label_path.with_suffix(".log")
            label = yaml.safe_load(label_path.read_text(encoding="utf-8"))
            lines = [text for _, text in open_local(str(log)).lines()]
            name = log.relative_to(corpus).with_suffix("").as_posix()
            cases.append(Case(corpus.name, name, str(label["causes"][0]), lines))
    return cases


def diagnose(lines: Lines, name: str, label: str, rules: list[LoadedRule]) -> Outcome:
    numbered: Iterator[tuple[int, str]] = ((i + 1, text) for i, text in enumerate(lines))
    diagnosis = diagnose_sources([LineSource(name=name, lines=numbered)], rules)
    causes: list[str] = []
    for f in diagnosis.findings:
        if f.cause not in causes:
            causes.append(f.cause)
    rank = causes.index(label) + 1 if label in causes else None
    top_score = max((f.score for f in diagnosis.findings), default=0)
    top = ", ".join(f"{f.cause}:{f.score}" for f in diagnosis.findings[:2]) or "(none)"
    return Outcome(rank, top_score, diagnosis.verdict.kind, top)


@dataclass
class Tally:
    problems: int = 0
    first: int = 0
    top3: int = 0
    healthy_logs: int = 0
    healthy_max: int = 0
    healthy_at_50: int = 0
    called_healthy: int = 0  # problem logs whose verdict is `healthy`

    def add(self, label: str, out: Outcome) -> None:
        if label == "healthy":
            self.healthy_logs += 1
            self.healthy_max = max(self.healthy_max, out.top_score)
            self.healthy_at_50 += out.top_score >= HEALTHY_LIMIT
            return
        self.problems += 1
        self.first += out.rank == 1
        self.top3 += out.rank is not None and out.rank <= 3
        self.called_healthy += out.verdict == "healthy"

    def cells(self) -> str:
        def pct(n: int) -> str:
            return f"{n} ({100 * n / max(self.problems, 1):.0f}%)"

        return (
            f"{pct(self.first)} | {pct(self.top3)} | {self.healthy_max} ({self.healthy_at_50} at 50+) | "
            f"{self.called_healthy}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append", help="a labelled corpus (repeatable)")
    parser.add_argument("--variant", action="append", choices=sorted(VARIANTS), help="only these (repeatable)")
    parser.add_argument("--cases", action="store_true", help="list every case whose rank or verdict changed")
    args = parser.parse_args(argv)
    corpora: list[Path] = args.corpus or [c for c in DEFAULT_CORPORA if c.is_dir()]
    for corpus in corpora:
        if not corpus.is_dir():
            print(f"error: corpus folder not found: {corpus}", file=sys.stderr)
            return 2
    names: list[str] = args.variant or list(VARIANTS)
    rules = load_rules()
    cases = load_cases(corpora)
    base = {(c.corpus, c.name): diagnose(c.lines, c.name, c.label, rules) for c in cases}
    original = Tally()
    for c in cases:
        original.add(c.label, base[(c.corpus, c.name)])
    print(f"{len(cases)} labelled logs from {len(corpora)} corpora")
    print()
    print("| variant | kind | primary first | primary in top 3 | healthy max | problem logs called healthy |")
    print("|---|---|---|---|---|---|")
    print(f"| original | - | {original.cells()} |")
    changed: list[str] = []
    for name in names:
        kind, transform = VARIANTS[name]
        tally = Tally()
        for c in cases:
            out = diagnose(transform(c.lines), c.name, c.label, rules)
            was = base[(c.corpus, c.name)]
            tally.add(c.label, out)
            worse = (
                (c.label == "healthy" and out.top_score >= HEALTHY_LIMIT > was.top_score)
                or (c.label != "healthy" and (out.rank or 99) > (was.rank or 99) and (was.rank or 99) <= 3)
                or (c.label != "healthy" and out.verdict == "healthy" != was.verdict)
            )
            if worse:
                changed.append(
                    f"{name}: {c.corpus} {c.name} [{c.label}] rank {was.rank} -> {out.rank}, "
                    f"verdict {was.verdict} -> {out.verdict}; now {out.top} (was {was.top})"
                )
        print(f"| {name} | {kind} | {tally.cells()} |", flush=True)
    if args.cases and changed:
        print()
        print("Cases that got worse:")
        for line in changed:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
