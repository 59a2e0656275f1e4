"""`logdoctor test --format text`: one line a case, then every failure as `file:line:col: kind: message`.

FAIL  fixtures/logs/story/vllm-dflash-tp2-a6000  (14 checks, 0.21 s)
      fixtures/logs/story/vllm-dflash-tp2-a6000.expect.yaml:12:5: missing: cause spec-net-loss did not fire: ...
"""

from __future__ import annotations

from collections.abc import Callable

import click

from logdoctor.sanitize import clean_text
from logdoctor.testing.cases import CaseResult, SuiteResult

Style = Callable[[str, str], str]


def _plain(text: str, _colour: str) -> str:
    return text


def _coloured(text: str, colour: str) -> str:
    return click.style(text, fg=colour, bold=colour == "red")


def _case_lines(case: CaseResult, style: Style) -> list[str]:
    # Case names, failures and notes can quote a log or a file name: their escapes are shown, never sent.
    name = clean_text(case.name)
    if case.error is not None:
        lines = [f"{style('ERROR', 'red')} {name}  (bad test file)"]
        lines.extend(f"      {clean_text(line)}" for line in case.error.splitlines())
        return lines
    status = style("PASS ", "green") if case.passed else style("FAIL ", "red")
    lines = [f"{status} {name}  ({case.checks} checks, {case.seconds:.2f} s)"]
    lines.extend(f"      {clean_text(str(failure))}" for failure in case.failures)
    lines.extend(f"      {style(clean_text(str(todo)), 'green' if todo.done else 'yellow')}" for todo in case.todos)
    lines.extend(f"      note: {clean_text(note)}" for note in case.notes)
    return lines


def render_text(suite: SuiteResult, *, colour: bool = False) -> str:
    style: Style = _coloured if colour else _plain
    out: list[str] = []
    for case in suite.cases:
        out.extend(_case_lines(case, style))
    failed = [f for s in suite.samples for f in s.failures]
    if suite.samples:
        checked = sum(len(s.rule.rule.samples) for s in suite.samples)
        status = style("PASS ", "green") if not failed else style("FAIL ", "red")
        out.append(f"{status} rule samples  ({checked} samples of {len(suite.samples)} rules)")
        out.extend(f"      {clean_text(str(f))}" for f in failed)
    warnings = list(suite.warnings)
    if suite.unexercised:
        warnings.append(
            f"{len(suite.unexercised)} of {len(suite.rules)} rules are exercised by none of these cases "
            f"(no case expects them or their cause to fire): {', '.join(suite.unexercised)}"
        )
    for warning in warnings:
        out.append(f"{style('warning:', 'yellow')} {clean_text(warning)}")
    todos = sum(len(c.todos) for c in suite.cases)
    ran = [c for c in suite.cases if c.error is None]
    summary = (
        f"{len(ran)} case(s): {len(ran) - len(suite.failed_cases)} passed, {len(suite.failed_cases)} failed"
        + (f", {todos} todo" if todos else "")
        + (f"; {len(suite.bad_files)} bad test file(s)" if suite.bad_files else "")
        + (f"; {len(failed)} sample failure(s)" if suite.samples else "; samples not checked")
        + f"; {suite.seconds:.1f} s"
    )
    out.append(style(summary, "green" if int(suite.exit_status) == 0 else "red"))
    return "\n".join(out) + "\n"


def summary_line(suite: SuiteResult) -> str:
    ran = [c for c in suite.cases if c.error is None]
    return (
        f"{len(ran)} case(s), {len(suite.failed_cases)} failed, {len(suite.bad_files)} bad test file(s), "
        f"{len(suite.failed_samples)} rule(s) with failing samples"
    )
