"""Every WARNING / ERROR / CRITICAL logger call of a release, accounted for (docs/drift.md, *Warnings*).

The relevance list (relevance.yaml) is chosen by hand; this census is not: each warning-level call of the wheel
is rendered as a log line and ends in one of

    event         a line type reads it (the event classes it gave)
    vocabulary    no line type does, the warning vocabulary gives it a cause (docs/warnings.md)
    irrelevant    with a reason: noise the vocabulary drops, a failure line (read by its structure), no
                  performance word, a subsystem with no cause, or a reviewed entry of warnings.yaml
    not-understood  a performance word and nothing to pin it on: the worklist

census(extraction) -> Census; write_census(...) -> fixtures/drift/warnings/<engine>-<version>.yaml
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from logdoctor.events import EngineVersion, EngineWarning
from logdoctor.parse.envelope import parse_envelope
from logdoctor.parse.pipeline import parse_text
from logdoctor.parse.warning_vocabulary import classify, failure_line

from .extract import Extraction, Message
from .relevance import REPO, Relevant
from .render import render_line

LEVELS = ("WARNING", "ERROR", "CRITICAL")
OUTCOMES = ("event", "vocabulary", "irrelevant", "not-understood")
REVIEWED_FILE = Path(__file__).with_name("warnings.yaml")
CENSUS_DIR = REPO / "fixtures" / "drift" / "warnings"
_TEMPLATE_CHARS = 120
# Any entry renders placeholders by their defaults; the census has no values of its own.
_NEUTRAL = Relevant(module="-", match="-", cause="engine-failure", event="none-fits", note="warning census")


class Reviewed(BaseModel):
    """A warning judged by hand: irrelevant, with the reason (warnings.yaml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    module: str  # the file inside the wheel, or a folder (ending in `/`): every call under it
    match: str = ""  # a literal fragment of the message; empty: every call of the module
    reason: str

    def covers(self, message: Message) -> bool:
        module = message.module
        if not (module.startswith(self.module) if self.module.endswith("/") else module == self.module):
            return False
        return not self.match or any(isinstance(p, str) and self.match in p for p in message.parts)


class ReviewedList(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    vllm: list[Reviewed] = []
    sglang: list[Reviewed] = []


class ReviewedError(Exception):
    pass


def load_reviewed(path: Path = REVIEWED_FILE) -> ReviewedList:
    try:
        return ReviewedList.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ReviewedError(f"{path}: {exc}") from exc


@dataclass
class Call:
    source: str  # module:line
    level: str
    outcome: str
    detail: str  # the event classes, the cause, or the reason
    template: str

    def as_text(self) -> str:
        """One entry of the census file: `source | LEVEL | outcome | detail | template`."""
        return " | ".join((self.source, self.level, self.outcome, self.detail, self.template))


@dataclass
class Census:
    engine: str
    version: str
    calls: list[Call] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        return Counter(c.outcome for c in self.calls)

    def reasons(self) -> Counter[str]:
        """Irrelevant calls by the kind of reason (the words before the first colon)."""
        return Counter(c.detail.split(":", 1)[0] for c in self.calls if c.outcome == "irrelevant")


def judge(engine: str, version: str, message: Message, reviewed: list[Reviewed]) -> Call:
    """One warning-level call: its rendered line through the parser, then through the vocabulary."""
    line = render_line(engine, version, message, _NEUTRAL)
    template = " ".join(message.template.split())[:_TEMPLATE_CHARS]
    source = f"{message.module}:{message.line}"

    def call(outcome: str, detail: str) -> Call:
        return Call(source, message.level, outcome, detail, template)

    events = [
        e
        for e in parse_text(line, source="drift", engine=engine)
        if not (isinstance(e, EngineVersion) and e.origin == "inferred from header shape")
    ]
    kinds = sorted({type(e).__name__ for e in events if not isinstance(e, EngineWarning)})
    if kinds:
        return call("event", ", ".join(kinds))
    for entry in reviewed:
        if entry.covers(message):
            return call("irrelevant", f"reviewed: {entry.reason}")
    text = parse_envelope("drift", 1, line).message.strip()
    if not text:
        return call("irrelevant", "empty: the message is a placeholder filled elsewhere")
    if failure_line(text):
        return call("irrelevant", "failure: a traceback or exception line, read by its structure")
    verdict = classify(text, message.module.rsplit("/", 1)[-1])
    if verdict.noise:
        return call("irrelevant", "noise: deprecation, tokenizer, API or shutdown words (docs/warnings.md)")
    if verdict.cause is not None:
        return call("vocabulary", verdict.cause)
    if verdict.performance is None:
        about = f" (about {verdict.subsystem})" if verdict.subsystem else ""
        return call("irrelevant", f"no performance word: the message names no effect on speed{about}")
    if verdict.subsystem is not None:
        return call("irrelevant", f"no cause: '{verdict.performance}' about {verdict.subsystem}, which no cause covers")
    return call("not-understood", f"'{verdict.performance}' with no subsystem word")


def census(extraction: Extraction, reviewed: ReviewedList | None = None) -> Census:
    entries = (reviewed or ReviewedList()).vllm if extraction.engine == "vllm" else (reviewed or ReviewedList()).sglang
    out = Census(extraction.engine, extraction.version)
    for message in extraction.messages:
        if message.level in LEVELS:
            out.calls.append(judge(extraction.engine, extraction.version, message, entries))
    out.calls.sort(key=lambda c: (c.source.split(":")[0], int(c.source.rsplit(":", 1)[1])))
    return out


def census_path(engine: str, version: str, directory: Path = CENSUS_DIR) -> Path:
    return directory / f"{engine}-{version}.yaml"


def write_census(result: Census, directory: Path = CENSUS_DIR) -> Path:
    """The census as data: counts, then one entry a call (deterministic: same wheel and parser, same bytes)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = census_path(result.engine, result.version, directory)
    counts = result.counts()
    data = {
        "engine": result.engine,
        "version": result.version,
        "calls": len(result.calls),
        "outcomes": {o: counts.get(o, 0) for o in OUTCOMES},
        "irrelevant_reasons": dict(sorted(result.reasons().items())),
        "entries": [c.as_text() for c in result.calls],
    }
    header = (
        "# Every WARNING / ERROR / CRITICAL logger call of this release and what logdoctor makes of it\n"
        "# (bench/drift/warnings.py, docs/drift.md): event, vocabulary, irrelevant (with a reason) or not-understood.\n"
        "# entries: module:line | level | outcome | event classes, cause or reason | message template\n"
    )
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100_000)
    path.write_text(header + text, encoding="utf-8")
    return path


def committed_censuses(directory: Path = CENSUS_DIR) -> list[dict[str, Any]]:
    out = []
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "outcomes" in data:
            out.append(data)
    return out


def table(censuses: list[dict[str, Any]]) -> str:
    """The shares per engine release, for docs/drift.md."""
    rows = [
        "| release | warning-level calls | event | vocabulary | irrelevant | not understood | accounted for |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for data in censuses:
        n = int(data["calls"]) or 1
        o = data["outcomes"]
        accounted = n - int(o.get("not-understood", 0))
        cells = [f"{o.get(k, 0)} ({100 * int(o.get(k, 0)) / n:.0f}%)" for k in OUTCOMES]
        rows.append(
            f"| {data['engine']} {data['version']} | {data['calls']} | "
            + " | ".join(cells)
            + f" | {100 * accounted / n:.1f}% |"
        )
    return "\n".join(rows)


def reason_table(censuses: list[dict[str, Any]]) -> str:
    kinds = sorted({k for d in censuses for k in d.get("irrelevant_reasons", {})})
    head = "| irrelevant because | " + " | ".join(f"{d['engine']} {d['version']}" for d in censuses) + " |"
    rows = [head, "|---|" + "---:|" * len(censuses)]
    for kind in kinds:
        rows.append(f"| {kind} | " + " | ".join(str(d["irrelevant_reasons"].get(kind, 0)) for d in censuses) + " |")
    return "\n".join(rows)


WARN_BEGIN, WARN_END = "<!-- warnings:begin -->", "<!-- warnings:end -->"


def update_doc(doc: Path, directory: Path = CENSUS_DIR) -> bool:
    """Rewrite the census tables of docs/drift.md (between the warnings markers); False when they are missing."""
    if not doc.exists():
        return False
    text = doc.read_text(encoding="utf-8")
    if WARN_BEGIN not in text or WARN_END not in text:
        return False
    censuses = committed_censuses(directory)
    body = table(censuses) + "\n\n" + reason_table(censuses) + "\n" if censuses else "(no census yet: run make drift)\n"
    head, _, rest = text.partition(WARN_BEGIN)
    _, _, tail = rest.partition(WARN_END)
    doc.write_text(head + WARN_BEGIN + "\n" + body + WARN_END + tail, encoding="utf-8")
    return True
