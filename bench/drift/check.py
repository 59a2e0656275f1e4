"""One engine release against the relevance list: match, render, parse, classify.

The result is the list of cases committed as `fixtures/drift/<engine>-<version>.yaml`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .classify import classify
from .extract import Extraction, Message
from .relevance import Relevant
from .render import render_line


@dataclass
class Case:
    key: str
    cause: str
    engine: str
    version: str
    source: str  # module:line in that release (informational; the key is what identifies the message)
    level: str
    template: str
    line: str
    event: str
    fields: dict[str, Any]
    status: str
    got: list[str]
    diff: dict[str, Any] = field(default_factory=dict)
    note: str | None = None
    ambiguous: int = 0  # other messages of the module with the same fragment

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "cause": self.cause,
            "source": self.source,
            "level": self.level,
            "template": self.template,
            "line": self.line,
            "engine": self.engine,
            "version": self.version,
            "event": self.event,
            "fields": self.fields,
            "status": self.status,
            "got": self.got,
        }
        if self.diff:
            out["diff"] = {k: {"expected": v[0], "got": v[1]} for k, v in self.diff.items()}
        if self.note:
            out["note"] = self.note
        if self.ambiguous:
            out["ambiguous"] = self.ambiguous
        return out


def find(messages_by_module: dict[str, list[Message]], entry: Relevant) -> list[Message]:
    """Messages of the entry's module with the fragment inside one literal piece."""
    return [
        m
        for m in messages_by_module.get(entry.module, [])
        if any(isinstance(p, str) and entry.match in p for p in m.parts)
    ]


def check(extraction: Extraction, entries: list[Relevant]) -> tuple[list[Case], list[Relevant]]:
    """The cases of one release, and the entries whose message this release does not print."""
    by_module: dict[str, list[Message]] = {}
    for m in extraction.messages:
        by_module.setdefault(m.module, []).append(m)
    cases: list[Case] = []
    absent: list[Relevant] = []
    engine = extraction.engine
    for entry in entries:
        found = find(by_module, entry)
        if not found:
            absent.append(entry)
            continue
        message = found[0]
        line = render_line(engine, extraction.version, message, entry)
        outcome = classify(line, engine, entry.event, entry.fields)
        cases.append(
            Case(
                key=entry.key,
                cause=entry.cause,
                engine=engine,
                version=extraction.version,
                source=f"{message.module}:{message.line}",
                level=entry.level or message.level,
                template=message.template,
                line=line,
                event=entry.event,
                fields=dict(entry.fields),
                status=outcome.status,
                got=outcome.got,
                diff={k: (_plain(v[0]), _plain(v[1])) for k, v in outcome.diff.items()},
                note=entry.note,
                ambiguous=len(found) - 1,
            )
        )
    return cases, absent


def _plain(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)
