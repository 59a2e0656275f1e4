"""The maintained list of performance-relevant messages (bench/drift/relevance.yaml), validated once.

An entry is keyed by the module path inside the wheel and a distinctive literal fragment of the message
(never the line number, which moves every release):

    - module: vllm/v1/spec_decode/metrics.py
      match: "SpecDecoding metrics: Mean acceptance length"
      cause: spec-low-acceptance
      event: SpecDecodeStats
      values: {mean_acceptance_length: 2.31}      # placeholder expression, index, or `prefix*` -> value to render
      fields: {mean_acceptance_length: 2.31}      # event field -> value the parser must produce
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from logdoctor.events import EVENT_TYPES

REPO = Path(__file__).resolve().parents[2]
RELEVANCE_FILE = Path(__file__).with_name("relevance.yaml")
NONE_FITS = "none-fits"
EVENT_CLASSES = {cls.__name__: cls for cls in EVENT_TYPES}


def cause_ids() -> set[str]:
    """The stable cause ids (docs/causes.md): every cause has its folder of rules under rules/."""
    return {p.name for p in (REPO / "rules").iterdir() if p.is_dir() and not p.name.startswith("_")}


class Relevant(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    module: str
    match: str
    cause: str
    event: str
    fields: dict[str, Any] = Field(default_factory=dict)
    values: dict[str | int, Any] = Field(default_factory=dict)
    drop: list[str] = Field(
        default_factory=list
    )  # regexes cut from the rendered text: optional parts a real line lacks
    process: str | None = None  # the process prefix to render, when the module's default is wrong
    level: str | None = None  # the level to render, when the call site cannot say (a log_fn parameter)
    note: str | None = None

    @property
    def key(self) -> str:
        return f"{self.module}::{self.match}"

    @model_validator(mode="after")
    def _check(self) -> Relevant:
        if self.event != NONE_FITS:
            cls = EVENT_CLASSES.get(self.event)
            if cls is None:
                raise ValueError(f"unknown event class {self.event!r} (logdoctor/events.py)")
            unknown = sorted(set(self.fields) - set(cls.model_fields))
            if unknown:
                raise ValueError(f"{self.event} has no field(s) {unknown}")
        elif not self.note:
            raise ValueError("an entry marked none-fits needs a note saying what event is missing")
        for pattern in self.drop:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"drop pattern {pattern!r}: {exc}") from exc
        return self


class RelevanceList(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    vllm: list[Relevant] = Field(default_factory=list)
    sglang: list[Relevant] = Field(default_factory=list)

    def for_engine(self, engine: Literal["vllm", "sglang"] | str) -> list[Relevant]:
        return list(self.vllm if engine == "vllm" else self.sglang)


class RelevanceError(Exception):
    pass


def load_relevance(path: Path = RELEVANCE_FILE) -> RelevanceList:
    """Load and check the list: pydantic errors, unknown causes and duplicate keys, all at once."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        rel = RelevanceList.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise RelevanceError(f"{path}: {exc}") from exc
    causes = cause_ids()
    problems: list[str] = []
    for engine in ("vllm", "sglang"):
        seen: set[str] = set()
        for i, entry in enumerate(rel.for_engine(engine)):
            where = f"{path.name}: {engine}[{i}] ({entry.match!r})"
            if entry.cause not in causes:
                problems.append(f"{where}: unknown cause {entry.cause!r}")
            if entry.key in seen:
                problems.append(f"{where}: duplicate key")
            seen.add(entry.key)
    if problems:
        raise RelevanceError("\n".join(problems))
    return rel
