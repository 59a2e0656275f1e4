"""The unit of the parser: a line type (`Grammar`) declared once, with its keywords, its parse function and its
cases.

An engine package (logdoctor/engines/<name>/, logdoctor/inputs/<name>/) lists its line types in its `SPEC`
(logdoctor.registry). Each names the literal keywords a line must contain to be worth parsing: the pipeline
(and the remote collector's `grep -F`) selects candidate lines by those keywords alone, so pyparsing and
regexes only ever run on lines that will very likely become events.

    Grammar(
        name="vllm.spec_decode",
        engine="vllm",
        keywords=("SpecDecoding metrics:",),
        parse=parse_spec_decode,            # (LogLine, ParseContext) -> list[Event] | None
        cases=(
            case("v1-0.11", "(APIServer pid=1) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: ...",
                 ("spec_decode_stats", {"mean_acceptance_length": 2.87, "acceptance_rate": 0.311})),
        ),
    )

`parse` returns None when the line is not its business (the next grammar sharing a keyword is tried),
or a list of events (possibly empty: recognised, nothing to report). A case is log text (one or more lines)
and the events it must give: the event type and the values that matter (normalised units; values not named
are not checked). tests/test_line_types.py runs every registered case and checks that every line type and
every keyword is exercised by some case.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from logdoctor.events import Engine, EventBase
from logdoctor.parse.envelope import LogLine

ParseFn = Callable[[LogLine, "ParseContext"], "list[EventBase] | None"]
BlockFn = Callable[[LogLine, "ParseContext"], "list[EventBase] | None"]
# (the match of a whole physical line, the source, the line's number, the context) -> the line and its events, or
# None where the general path must decide (the line type does not claim lines of a forced other engine)
BuildFn = Callable[[re.Match[str], str, int, "ParseContext"], "tuple[LogLine, list[EventBase]] | None"]


@dataclass(frozen=True)
class Case:
    """Log text and the events it must give: (event type, the fields that must match)."""

    id: str
    text: str
    expect: tuple[tuple[str, dict[str, Any]], ...]
    engine: str | None = None  # parse as if `--engine` forced this
    exact: bool = False  # the text gives exactly these events, in this order (else: at least these)


def case(
    case_id: str, text: str, *expected: tuple[str, dict[str, Any]], engine: str | None = None, exact: bool = False
) -> Case:
    return Case(case_id, text, tuple(expected), engine, exact)


@dataclass(frozen=True)
class WholeLine:
    """A line type's fast path for the one line shape an event-dense log repeats (a busy server's batch or stats
    line): `pattern` matches the whole physical line, header included, only where the envelope and the line type
    read it as `build` does, and `build` gives the line and the events the general path gives it, skipping the
    envelope's tries and the dispatch. A line it does not match takes the general path."""

    pattern: re.Pattern[str]
    build: BuildFn


@dataclass(frozen=True)
class Grammar:
    name: str
    engine: Engine
    keywords: tuple[str, ...]
    parse: ParseFn
    cases: tuple[Case, ...] = ()
    whole_line: WholeLine | None = None

    @property
    def samples(self) -> tuple[str, ...]:
        """The text of every case (documentation and drift tools list them)."""
        return tuple(c.text for c in self.cases)


@dataclass
class ParseContext:
    """Per-source state shared by the grammars while one source is parsed."""

    source: str
    forced_engine: str | None = None
    # Set by a grammar that has opened a multi-line block (a benchmark result table, a tqdm bar run):
    # every following line is offered to it first, keyword or not, until it returns None.
    block: BlockFn | None = None
    state: dict[str, Any] = field(default_factory=dict)
    header_counts: dict[str, int] = field(default_factory=dict)

    def base(self, line: LogLine, engine: Engine) -> dict[str, Any]:
        """The EventBase fields for an event parsed from `line`."""
        return {
            "source": self.source,
            "line": line.number,
            "end_line": line.end,
            "timestamp": line.timestamp,
            "level": line.level,
            "process": line.process,
            "engine": engine,
        }


# An event built from a line's regex match: (the match, the EventBase fields, the line's message) -> events.
MatchBuild = Callable[[re.Match[str], dict[str, Any], str], list[EventBase]]


def event_of_groups(
    cls: type[EventBase], convert: dict[str, Callable[[str], Any]] | None = None, **constants: Any
) -> MatchBuild:
    """One event of `cls` with these constant fields; the regex's named groups fill the fields of the same name
    (pydantic converts the text, `convert` gives a group its own conversion), and a group named `<field>__gb` is
    decimal GB (bytes / 1e9) converted to GiB."""
    conversions = convert or {}

    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        values: dict[str, Any] = dict(constants)
        for name, text in m.groupdict().items():
            if text is None:
                continue
            if name.endswith("__gb"):
                values[name[: -len("__gb")]] = round(float(text) * 1e9 / 2**30, 2)
            elif name in conversions:
                values[name] = conversions[name](text)
            else:
                values[name] = text
        if "message" in cls.model_fields:
            values.setdefault("message", message)
        return [cls(**base, **values)]

    return build
