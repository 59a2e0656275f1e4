"""Each rule carries sample lines that must make it fire (lnav's `sample`, sqlfluff's `fail_str`).

A sample runs through the same stages as `logdoctor diagnose` (`logdoctor.pipeline.run`: parse, then build the
profile), then its own rule alone. Used by `logdoctor test`, `logdoctor rules check` and `logdoctor.testing`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logdoctor.engine.evaluate import evaluate_rule
from logdoctor.engine.result import RuleOutcome
from logdoctor.engine.rules import LoadedRule
from logdoctor.eventlog import LineTexts
from logdoctor.facts import Profile, with_baseline
from logdoctor.pipeline.run import LineSource, parse_sources, profile_of


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


def _lookup(texts: dict[str, LineTexts]) -> Callable[[str, int], str | None]:
    def lookup(source: str, number: int) -> str | None:
        lines = texts.get(source)
        return None if lines is None else lines.get(number)

    return lookup


def _sample_profile(name: str, text: str, engine: str | None) -> tuple[Profile, dict[str, LineTexts]]:
    lines = ((i, s) for i, s in enumerate(text.splitlines(), start=1))
    parsed = parse_sources([LineSource(name=name, lines=lines)], engine)
    return profile_of(parsed, engine), parsed.texts


def sample_failures(item: LoadedRule) -> list[SampleFailure]:
    """Run one rule on each of its own samples; return the samples that do not behave.

    A diff-mode rule's sample is a pair: the rule reads the candidate (`text`) with the baseline beside it."""
    failures: list[SampleFailure] = []
    for index, sample in enumerate(item.rule.samples):
        profile, texts = _sample_profile(f"{item.id}#sample{index + 1}", sample.text, sample.engine)
        if sample.baseline is not None:
            name = f"{item.id}#sample{index + 1}-baseline"
            baseline, baseline_texts = _sample_profile(name, sample.baseline, sample.baseline_engine)
            profile = with_baseline(profile, baseline)
            texts = {**baseline_texts, **texts}
        outcome, _ = evaluate_rule(item, profile, _lookup(texts))
        if (outcome.outcome == "fired") != sample.fires:
            failures.append(SampleFailure(item, index, outcome))
    return failures


def check_samples(rules: Sequence[LoadedRule]) -> list[str]:
    """Run every rule on its own samples; return one message per sample that does not behave."""
    return [failure.message for item in rules for failure in sample_failures(item)]
