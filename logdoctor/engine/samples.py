"""Each rule carries sample lines that must make it fire (lnav's `sample`, sqlfluff's `fail_str`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logdoctor.engine.evaluate import evaluate_rule
from logdoctor.engine.result import RuleOutcome
from logdoctor.engine.rules import LoadedRule
from logdoctor.facts import build_profile
from logdoctor.parse.pipeline import EventStream


@dataclass(frozen=True)
class SampleFailure:
    """One sample of one rule that did not behave: `index` is 0-based into `rule.samples`."""

    rule: LoadedRule
    index: int
    outcome: RuleOutcome

    @property
    def message(self) -> str:
        expected = "fire" if self.rule.rule.samples[self.index].fires else "not fire"
        return (
            f"{self.rule.path}: sample {self.index + 1} should {expected} but the rule was {self.outcome.outcome} "
            f"({self.outcome.reason})"
        )


def _lookup(texts: dict[int, str]) -> Callable[[str, int], str | None]:
    return lambda _source, number: texts.get(number)


def sample_failures(item: LoadedRule) -> list[SampleFailure]:
    """Run one rule on each of its own samples; return the samples that do not behave."""
    failures: list[SampleFailure] = []
    for index, sample in enumerate(item.rule.samples):
        lines = ((i, s) for i, s in enumerate(sample.text.splitlines(), start=1))
        stream = EventStream(f"{item.id}#sample{index + 1}", lines, engine=sample.engine, keep_text=True)
        events = list(stream)
        profile = build_profile(events, engine=sample.engine or stream.detection.engine)
        outcome, _ = evaluate_rule(item, profile, _lookup(stream.texts or {}))
        if (outcome.outcome == "fired") != sample.fires:
            failures.append(SampleFailure(item, index, outcome))
    return failures


def check_samples(rules: Sequence[LoadedRule]) -> list[str]:
    """Run every rule on its own samples; return one message per sample that does not behave."""
    return [failure.message for item in rules for failure in sample_failures(item)]
