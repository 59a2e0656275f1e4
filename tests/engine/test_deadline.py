"""The wall-clock guard of one input's diagnosis (`--max-seconds`): one line, exit 2, never a traceback.

No test waits for a clock: a deadline whose start lies in the past, or one shorter than the work before its first
check (building the profile), is already over when it is first checked."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.app.diffs import diff_parsed
from logdoctor.engine.deadline import Deadline
from logdoctor.engine.evaluate import evaluate
from logdoctor.engine.rules import load_rules
from logdoctor.errors import ExitStatus, InputError
from logdoctor.pipeline.run import Parsed, diagnose_parsed, local_line_sources, parse_sources, profile_of

STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
RULES = load_rules()


def _parsed() -> Parsed:
    return parse_sources(local_line_sources([str(STORY)]))


def test_rule_evaluation_stops_before_the_next_rule_once_the_time_is_up() -> None:
    parsed = _parsed()
    profile = profile_of(parsed, None)
    over = Deadline(5.0, "x.log", started=time.monotonic() - 60)
    with pytest.raises(InputError) as caught:
        evaluate(RULES, profile, parsed.lookup, deadline=over)
    message = str(caught.value)
    assert message == (
        f"x.log: stopped after 5 s diagnosing (at rule {RULES[0].id}, 1 of {len(RULES)}): over --max-seconds "
        "(raise it to diagnose longer)"
    )
    assert caught.value.exit_status == ExitStatus.USAGE


def test_no_limit_and_a_deadline_not_yet_reached_change_nothing() -> None:
    parsed = _parsed()
    profile = profile_of(parsed, None)
    plain = evaluate(RULES, profile, parsed.lookup)
    unlimited = evaluate(RULES, profile, parsed.lookup, deadline=Deadline(0, "x.log", started=0.0))
    ahead = evaluate(RULES, profile, parsed.lookup, deadline=Deadline(3600, "x.log"))
    assert [f.rule for f in plain[0]] == [f.rule for f in unlimited[0]] == [f.rule for f in ahead[0]]
    assert plain[0], "the story log has findings, so the comparison above compares something"


def test_a_diagnosis_and_a_diff_past_their_time_raise_the_input_error() -> None:
    with pytest.raises(InputError, match=r"vllm-dflash-tp2-a6000\.log: stopped after 1e-09 s diagnosing \(at rule "):
        diagnose_parsed(_parsed(), RULES, max_seconds=1e-9)
    with pytest.raises(InputError, match=r"stopped after 1e-09 s diagnosing"):
        diff_parsed(_parsed(), _parsed(), RULES, max_seconds=1e-9)


@pytest.mark.parametrize("command", [["diagnose"], ["diagnose", "--format", "json"], ["diff"]])
def test_the_cli_says_one_line_and_exits_2(command: list[str]) -> None:
    paths = [str(STORY), str(STORY)] if command[0] == "diff" else [str(STORY)]
    result = CliRunner().invoke(main, [*command[:1], *paths, *command[1:], "--max-seconds", "0.000000001"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("logdoctor: error: "), lines
    assert "over --max-seconds (raise it to" in lines[0]
    assert result.stdout == ""
