"""`logdoctor test --format junit`: JUnit XML for CI (sigma-cli's `--junitxml`, pytest's `--junitxml`).

One `<testsuite>` for the fixture cases (a `<testcase>` a case: `<failure>` for failed expectations,
`<error>` for a bad test file) and one for rule samples (a `<testcase>` a rule that has samples).
Todos and notes go to the case's `<system-out>`; warnings to the suite's `<system-err>`.
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

from logdoctor.sanitize import clean_text
from logdoctor.testing.cases import CaseResult, SampleResult, SuiteResult, display_path


def _classname(name: str) -> str:
    parent, _, _ = name.rpartition("/")
    return parent.replace("/", ".") or "fixtures"


def _case(parent: ET.Element, case: CaseResult) -> int:
    element = ET.SubElement(
        parent,
        "testcase",
        name=case.name.rpartition("/")[2],
        classname=_classname(case.name),
        file=display_path(case.expect_path),
        time=f"{case.seconds:.3f}",
    )
    if case.error is not None:
        error = ET.SubElement(element, "error", type="bad test file", message=case.error.splitlines()[0])
        error.text = case.error
        return 0
    if case.failures:
        first = case.failures[0]
        failure = ET.SubElement(element, "failure", type=first.kind, message=str(first))
        failure.text = "\n".join(str(f) for f in case.failures)
    out = [str(t) for t in case.todos] + [f"note: {n}" for n in case.notes]
    if out:
        ET.SubElement(element, "system-out").text = "\n".join(out)
    return 1 if case.failures else 0


def _samples(parent: ET.Element, result: SampleResult) -> int:
    element = ET.SubElement(
        parent,
        "testcase",
        name=result.rule.id,
        classname="rule-samples",
        file=display_path(Path(result.rule.path)),
        time="0",
    )
    if result.failures:
        first = result.failures[0]
        failure = ET.SubElement(element, "failure", type="sample", message=str(first))
        failure.text = "\n".join(str(f) for f in result.failures)
    return 1 if result.failures else 0


def render_junit(suite: SuiteResult) -> str:
    root = ET.Element("testsuites", name="logdoctor test")
    cases = ET.SubElement(root, "testsuite", name="fixtures")
    failures = sum(_case(cases, c) for c in suite.cases)
    errors = len(suite.bad_files)
    cases.set("tests", str(len(suite.cases)))
    cases.set("failures", str(failures))
    cases.set("errors", str(errors))
    cases.set("skipped", "0")
    cases.set("time", f"{sum(c.seconds for c in suite.cases):.3f}")
    warnings = list(suite.warnings)
    if suite.unexercised:
        warnings.append("rules exercised by no fixture: " + ", ".join(suite.unexercised))
    if warnings:
        ET.SubElement(cases, "system-err").text = "\n".join(f"warning: {w}" for w in warnings)
    samples = ET.SubElement(root, "testsuite", name="rule samples")
    sample_failures = sum(_samples(samples, s) for s in suite.samples)
    samples.set("tests", str(len(suite.samples)))
    samples.set("failures", str(sample_failures))
    samples.set("errors", "0")
    samples.set("skipped", "0")
    root.set("tests", str(len(suite.cases) + len(suite.samples)))
    root.set("failures", str(failures + sample_failures))
    root.set("errors", str(errors))
    root.set("time", f"{suite.seconds:.3f}")
    ET.indent(root)
    # XML 1.0 has no control characters, and a terminal showing the file must not run them: shown as escapes.
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + clean_text(ET.tostring(root, encoding="unicode")) + "\n"
