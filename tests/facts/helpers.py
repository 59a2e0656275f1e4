"""What the fact tests share: one pasted log's profile, and the findings of a whole diagnosis of it."""

from __future__ import annotations

from logdoctor.engine.result import Finding
from logdoctor.engine.rules import load_rules
from logdoctor.facts import Profile, build_profile
from logdoctor.parse.pipeline import parse_text
from logdoctor.pipeline.run import LineSource, diagnose_sources


def profile(text: str, engine: str | None = None) -> Profile:
    """The profile of `text`, parsed as one source (`engine` forces the engine, as `--engine` does)."""
    return build_profile(parse_text(text, "t.log", engine), engine=engine)


def findings(text: str) -> list[Finding]:
    """The findings of `text` diagnosed as one source with the built-in rules, ranked."""
    lines = ((i, s) for i, s in enumerate(text.split("\n"), start=1))
    return diagnose_sources([LineSource("t.log", lines)], load_rules()).findings


def findings_by_rule(text: str) -> dict[str, Finding]:
    """The findings of `text` by the rule that made each."""
    return {f.rule: f for f in findings(text)}
