"""Expectation files: what a captured fixture log must (and must not) make the rules say.

A case is a log (`<case>.log`, `<case>.log.gz`, or a folder `<case>/` of several files forming one
deployment) with a sidecar `<case>.expect.yaml` (sqlfluff's YAML cases, Semgrep's four outcomes):

    source: "user report, vLLM 0.20.1 on 2x RTX A6000 (LXC)"
    engine: vllm
    fires:
      - {cause: spec-net-loss, rank: 1, min_score: 75}
      - rule: custom-allreduce-off
    must_not_fire: [{cause: cuda-graphs-disabled}]
    ruled_out: [eager-decode]
    todo: [{cause: tp-over-slow-link, note: "no topology in the log yet"}]

Loading validates once, at the border: pydantic models with `extra="forbid"`, every error carrying
`file:line:col`, and every entry remembering its own line so a failing check points at it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from logdoctor.engine.evaluate import HEALTHY_BELOW
from logdoctor.engine.rules import CAUSES, known_engine, locate

EXPECT_SUFFIX = ".expect.yaml"
GOLDEN_SUFFIX = ".events.jsonl"
EngineName = Annotated[str, AfterValidator(known_engine)]


def _known_cause(value: str | None) -> str | None:
    if value is not None and value not in CAUSES:
        close = difflib.get_close_matches(value, CAUSES, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else f" (known causes: {', '.join(CAUSES)})"
        raise ValueError(f"unknown cause '{value}'{hint}")
    return value


class _Entry(BaseModel):
    """Names one rule (by id) or every rule of one cause; exactly one of the two."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cause: str | None = None
    rule: str | None = None

    @field_validator("cause")
    @classmethod
    def _check_cause(cls, value: str | None) -> str | None:
        return _known_cause(value)

    @model_validator(mode="after")
    def _one_target(self) -> _Entry:
        if (self.cause is None) == (self.rule is None):
            raise ValueError("give exactly one of `cause` or `rule`")
        return self

    @property
    def target(self) -> str:
        return f"cause {self.cause}" if self.cause is not None else f"rule {self.rule}"


class FiresEntry(_Entry):
    """Must fire; `rank` is the 1-based position among findings (among causes when `cause` is given)."""

    rank: int | None = Field(default=None, ge=1)
    min_score: int | None = Field(default=None, ge=1, le=100)


class NotFiresEntry(_Entry):
    """Must not fire at any score."""


class TodoEntry(_Entry):
    """A known gap, reported and never failing (Semgrep's todoruleid / todook).

    `fires: true` (the default): should fire but does not yet. `fires: false`: fires but should not."""

    note: str = Field(min_length=1)
    fires: bool = True


class AllowEntry(_Entry):
    """A finding scored at or above 50 that a healthy log may still produce, and why."""

    reason: str = Field(min_length=1)


class Expectation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(min_length=1)  # where the log came from (a user report, a test box, constructed)
    constructed: bool = False
    engine: EngineName | None = None
    healthy: bool | None = None
    fires: list[FiresEntry] = Field(default_factory=list)
    must_not_fire: list[NotFiresEntry] = Field(default_factory=list)
    ruled_out: list[str] = Field(default_factory=list)
    insufficient_data: list[str] = Field(default_factory=list)
    todo: list[TodoEntry] = Field(default_factory=list)
    allow: list[AllowEntry] = Field(default_factory=list)

    @property
    def good_log(self) -> bool:
        """Run as a good log (no finding at 50 or more unless allowed): `healthy: true`, or no `fires` at all
        when `healthy` is not given. An explicit `healthy: false` opts out."""
        return bool(self.healthy) if self.healthy is not None else not self.fires


@dataclass(frozen=True)
class Location:
    path: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


@dataclass
class ExpectationFile:
    """A validated expectation and where each of its entries sits in the file."""

    path: Path
    display: str
    expectation: Expectation
    tree: yaml.Node | None = None
    _cache: dict[tuple[str | int, ...], Location] = field(default_factory=dict)

    def where(self, *loc: str | int) -> Location:
        """The file:line:col of `fires[2]`, `ruled_out[0]`, ... (the key itself when the entry is absent)."""
        if loc not in self._cache:
            line, column = locate(self.tree, loc)
            self._cache[loc] = Location(self.display, line, column)
        return self._cache[loc]


class ExpectationError(Exception):
    """An expectation file is invalid; `problems` are `file:line:col: message` lines."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


def _duplicate_keys(node: yaml.Node, display: str, problems: list[str]) -> None:
    """PyYAML keeps the last of two equal keys silently; a test file must not (pySigma's loader agrees)."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    mark = key.start_mark
                    problems.append(f"{display}:{mark.line + 1}:{mark.column + 1}: duplicate key '{key.value}'")
                seen.add(key.value)
            _duplicate_keys(value, display, problems)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _duplicate_keys(item, display, problems)


def load_expectation(path: Path, display: str | None = None) -> ExpectationFile:
    """Read and validate one expectation file; raise ExpectationError listing every problem."""
    display = display or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExpectationError([f"{display}:1:1: cannot read: {getattr(exc, 'strerror', None) or exc}"]) from exc
    try:
        tree = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        raise ExpectationError([f"{display}:{line}:{col}: invalid YAML: {getattr(exc, 'problem', exc)}"]) from exc
    if not isinstance(data, dict):
        raise ExpectationError([f"{display}:1:1: an expectation file must be a mapping (source:, fires:, ...)"])
    problems: list[str] = []
    if tree is not None:
        _duplicate_keys(tree, display, problems)
    try:
        expectation = Expectation.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors():
            loc = [x if isinstance(x, int) else str(x) for x in err["loc"]]
            line, col = locate(tree, loc, key=err["type"] == "extra_forbidden")
            where = ".".join(str(x) for x in err["loc"])
            message = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                message = f"unknown key '{loc[-1]}'"
                known = sorted(_known_keys(loc[:-1]))
                close = difflib.get_close_matches(str(loc[-1]), known, n=1)
                message += f" (did you mean '{close[0]}'?)" if close else f" (expected one of: {', '.join(known)})"
            problems.append(f"{display}:{line}:{col}: {where + ': ' if where else ''}{message}")
    if not problems:
        loaded = ExpectationFile(path, display, expectation, tree)
        problems = [f"{where}: {message}" for where, message in _contradictions(loaded)]
    if problems:
        # In file order, whatever order the validators found them in.
        problems.sort(key=lambda p: tuple(int(n) for n in p[len(display) + 1 :].split(":", 2)[:2]))
        raise ExpectationError(problems)
    return loaded


def _contradictions(loaded: ExpectationFile) -> list[tuple[Location, str]]:
    """Expectations that no diagnosis can meet all at once."""
    expect = loaded.expectation
    out: list[tuple[Location, str]] = []
    if expect.healthy:
        for index, entry in enumerate(expect.fires):
            if entry.min_score is not None and entry.min_score >= HEALTHY_BELOW:
                out.append(
                    (
                        loaded.where("fires", index, "min_score"),
                        f"fires.{index}.min_score: healthy: true, but {entry.target} is expected to score "
                        f"{entry.min_score} (a healthy log has no finding at {HEALTHY_BELOW} or more)",
                    )
                )
    fires = {e.target for e in expect.fires}
    for index, not_entry in enumerate(expect.must_not_fire):
        if not_entry.target in fires:
            out.append(
                (
                    loaded.where("must_not_fire", index),
                    f"must_not_fire.{index}: {not_entry.target} is also in `fires`",
                )
            )
    for index, rule_id in enumerate(expect.insufficient_data):
        if rule_id in expect.ruled_out:
            out.append(
                (
                    loaded.where("insufficient_data", index),
                    f"insufficient_data.{index}: rule {rule_id} is also in `ruled_out`",
                )
            )
    return out


_ENTRY_MODELS: dict[str, type[BaseModel]] = {
    "fires": FiresEntry,
    "must_not_fire": NotFiresEntry,
    "todo": TodoEntry,
    "allow": AllowEntry,
}


def _known_keys(parent: Sequence[str | int]) -> set[str]:
    if not parent:
        return set(Expectation.model_fields)
    model = _ENTRY_MODELS.get(str(parent[0]))
    return set(model.model_fields) if model is not None else set()
