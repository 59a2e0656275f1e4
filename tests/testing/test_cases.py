"""`logdoctor test` end to end: passing fixtures, broken rules, every failure kind, golden files."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml
from click.testing import CliRunner, Result

from logdoctor.app.cli import main
from logdoctor.testing import run_case
from tests.testing.conftest import DFLASH, DFLASH_EXPECT, HEALTHY, rule_file


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["test", *(str(a) for a in args)])


def expect_line(path: Path, text: str) -> int:
    """1-based line of the first line of an expectation file that contains `text`."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")


# --- (a) the fixtures pass ------------------------------------------------------------------------


def test_copied_fixtures_pass_with_copied_rules(cases: Path, rules_copy: Path) -> None:
    result = invoke("--no-builtin-rules", "--rules", rules_copy, "--no-samples", cases)
    assert result.exit_code == 0, result.output
    assert f"PASS  {cases / DFLASH}" in result.output
    assert f"PASS  {cases / HEALTHY}" in result.output
    assert "2 case(s): 2 passed, 0 failed" in result.output


def test_default_path_is_fixtures_logs_of_the_working_directory(
    cases: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found in a parent, like a repo root
    result = invoke("--no-samples")
    assert result.exit_code == 0, result.output
    assert "2 case(s): 2 passed" in result.output


def test_no_fixture_directory_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("--no-samples")
    assert result.exit_code == 2
    assert "no PATH given and no fixtures/logs/" in result.output


# --- (b) a rule broken on purpose -------------------------------------------------------------------


def test_threshold_change_makes_the_case_fail_naming_rule_and_expectation_line(cases: Path, rules_copy: Path) -> None:
    path = rule_file(rules_copy, "below-break-even")
    rule = yaml.safe_load(path.read_text(encoding="utf-8"))
    # A mean acceptance length is at least 1: with this threshold the rule can never fire.
    rule["when"] = "spec.num_tokens >= 2 and mean(spec.acceptance_length) < 1.0"
    path.write_text(yaml.safe_dump(rule, sort_keys=False), encoding="utf-8")

    # The cause has another source (the release's known DFlash issue, an advisory): expect the rule itself.
    expect = cases / f"{DFLASH}.expect.yaml"
    expect.write_text(
        expect.read_text(encoding="utf-8").replace("cause: spec-net-loss", "rule: below-break-even", 1),
        encoding="utf-8",
    )

    result = invoke("--no-builtin-rules", "--rules", rules_copy, cases)

    assert result.exit_code == 1, result.output
    line = expect_line(expect, "rule: below-break-even")
    assert (
        f"{expect}:{line}:5: missing: rule below-break-even did not fire: below-break-even was ruled out "
        "(condition not met: spec.num_tokens >= 2 and mean(spec.acceptance_length) < 1.0)"
    ) in result.output
    # The rule's own sample fails too, pointing into the rule file.
    assert f"{path}:" in result.output
    assert "sample 1 should fire but the rule was ruled_out" in result.output
    assert f"FAIL  {cases / DFLASH}" in result.output


def test_deleted_rule_fails_every_expectation_that_names_it(cases: Path, rules_copy: Path) -> None:
    rule_file(rules_copy, "custom-allreduce-off").unlink()
    rule_file(rules_copy, "custom-allreduce-warned").unlink()  # the cause's other diagnose rule

    result = invoke("--no-builtin-rules", "--rules", rules_copy, "--no-samples", cases)

    assert result.exit_code == 1, result.output
    dflash = cases / f"{DFLASH}.expect.yaml"
    line = expect_line(dflash, "cause: custom-allreduce-disabled")
    assert (
        f"{dflash}:{line}:5: missing: cause custom-allreduce-disabled did not fire: "
        "no rule in the rule set has cause custom-allreduce-disabled"
    ) in result.output
    healthy = cases / f"{HEALTHY}.expect.yaml"
    line = expect_line(healthy, "ruled_out:")
    column = healthy.read_text(encoding="utf-8").splitlines()[line - 1].index("custom-allreduce-off") + 1
    assert (
        f"{healthy}:{line}:{column}: outcome mismatch: rule custom-allreduce-off: expected ruled out, "
        "but rule custom-allreduce-off is not in the rule set (deleted or renamed?)"
    ) in result.output


def test_lower_score_is_reported_as_missing_with_the_working(cases: Path, rules_copy: Path) -> None:
    path = rule_file(rules_copy, "custom-allreduce-off")
    rule = yaml.safe_load(path.read_text(encoding="utf-8"))
    rule["impact"] = 30
    path.write_text(yaml.safe_dump(rule, sort_keys=False), encoding="utf-8")

    result = invoke("--no-builtin-rules", "--rules", rules_copy, "--no-samples", cases)

    assert result.exit_code == 1, result.output
    assert (
        "missing: cause custom-allreduce-disabled fired with a lower score than expected: "
        "custom-allreduce-off scored 30 < min_score 50 (impact 30 = 30)"
    ) in result.output


# --- (c) each failure kind ----------------------------------------------------------------------------


def write_expect(cases: Path, name: str, text: str) -> Path:
    path = cases / f"{name}.expect.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_unexpected_finding(cases: Path) -> None:
    expect = write_expect(
        cases,
        DFLASH,
        "source: x\nengine: vllm\nfires: [{cause: spec-net-loss}]\nmust_not_fire:\n  - rule: custom-allreduce-off\n",
    )
    result = invoke("--no-samples", expect)
    assert result.exit_code == 1, result.output
    assert f"{expect}:5:5: unexpected: rule custom-allreduce-off fired: custom-allreduce-off scored" in result.output


def test_rank_mismatch_shows_the_ranking(cases: Path) -> None:
    expect = write_expect(
        cases,
        DFLASH,
        DFLASH_EXPECT.replace("  - cause: spec-net-loss\n", "  - cause: spec-net-loss\n    rank: 1\n"),
    )
    result = invoke("--no-samples", expect)
    assert result.exit_code == 1, result.output
    line = expect_line(expect, "cause: spec-net-loss")
    assert f"{expect}:{line}:5: rank mismatch: cause spec-net-loss expected at rank 1, found at rank " in (
        result.output
    )
    assert "1. spec-low-acceptance (" in result.output


def test_todo_is_reported_and_never_fails(cases: Path) -> None:
    expect = write_expect(
        cases,
        HEALTHY,
        (cases / f"{HEALTHY}.expect.yaml").read_text(encoding="utf-8")
        + "todo:\n"
        + "  - rule: tp-spans-nodes\n    note: needs the host collector's topology\n"
        + "  - cause: engine-failure\n    fires: false\n    note: known false positive\n",
    )
    result = invoke("--no-samples", expect)
    assert result.exit_code == 0, result.output
    line = expect_line(expect, "rule: tp-spans-nodes")
    assert (
        f"{expect}:{line}:5: todo: rule tp-spans-nodes should fire, not yet (needs the host collector's topology): "
        "rule tp-spans-nodes did not fire: tp-spans-nodes "
    ) in result.output
    assert "1 todo" not in result.output and "2 todo" in result.output
    assert "todo: cause engine-failure no longer fires; move it from `todo` to `must_not_fire`" in result.output


def test_todo_that_now_fires_says_so(cases: Path) -> None:
    expect = write_expect(
        cases, DFLASH, DFLASH_EXPECT + "todo:\n  - cause: mamba-hybrid-issue\n    note: hybrid model\n"
    )
    result = invoke("--no-samples", expect)
    assert result.exit_code == 0, result.output
    assert "todo: cause mamba-hybrid-issue fires now; move it from `todo` to `fires`" in result.output


def test_healthy_case_with_a_serious_finding_fails_unless_allowed(cases: Path) -> None:
    header = "source: the sick story log, claimed healthy\nengine: vllm\n"
    expect = write_expect(cases, DFLASH, header + "healthy: true\n")
    result = invoke("--no-samples", expect)
    assert result.exit_code == 1, result.output
    assert f"{expect}:3:10: unexpected: a healthy log, but rule below-break-even (cause spec-net-loss) scored" in (
        result.output
    )

    outcome = run_case(expect, check_golden=False)
    assert outcome.diagnosis is not None
    serious = sorted({f.rule for f in outcome.diagnosis.findings if f.score >= 50})
    assert "below-break-even" in serious
    allow = "".join(f"  - rule: {rule}\n    reason: the story log is sick on purpose\n" for rule in serious)
    expect.write_text(header + "healthy: true\nallow:\n" + allow, encoding="utf-8")
    result = invoke("--no-samples", expect)
    assert result.exit_code == 0, result.output


def test_no_fires_means_a_good_log_run(cases: Path) -> None:
    expect = write_expect(cases, DFLASH, "source: no fires listed\nmust_not_fire: [{cause: cuda-graphs-disabled}]\n")
    result = invoke("--no-samples", expect)
    assert result.exit_code == 1, result.output
    assert "unexpected: a healthy log, but rule below-break-even" in result.output
    write_expect(cases, DFLASH, "source: no fires listed\nhealthy: false\n")
    assert invoke("--no-samples", expect).exit_code == 0


def test_invalid_expectation_exits_2_with_file_line_column(cases: Path) -> None:
    expect = write_expect(
        cases, DFLASH, "source: x\nfires:\n  - cause: spec-net-loss\n    rnak: 1\n  - cause: spec-net-los\n"
    )
    result = invoke("--no-samples", cases)
    assert result.exit_code == 2, result.output
    assert f"{expect}:4:5: fires.0.rnak: unknown key 'rnak' (did you mean 'rank'?)" in result.output
    assert f"{expect}:5:12: fires.1.cause: unknown cause 'spec-net-los' (did you mean 'spec-net-loss'?)" in (
        result.output
    )
    assert f"PASS  {cases / HEALTHY}" in result.output  # the other cases still run


def test_broken_yaml_and_missing_log_are_bad_test_files(cases: Path) -> None:
    broken = write_expect(cases, DFLASH, "source: x\nfires: [\n")
    orphan = write_expect(cases, "no-such-log", "source: x\n")
    result = invoke("--no-samples", cases)
    assert result.exit_code == 2, result.output
    assert f"{broken}:3:1: invalid YAML" in result.output
    assert f"{orphan}:1:1: no log for this expectation: expected no-such-log.log, no-such-log.log.gz" in result.output


def test_junit_output_parses(cases: Path, tmp_path: Path) -> None:
    write_expect(cases, DFLASH, DFLASH_EXPECT.replace("    rank: 1\n", "    rank: 2\n"))
    report = tmp_path / "report.xml"
    result = invoke("--format", "junit", "--output", report, cases)
    assert result.exit_code == 1, result.output
    root = ET.fromstring(report.read_text(encoding="utf-8"))  # noqa: S314 (our own output)
    assert root.tag == "testsuites"
    fixtures = root.find("testsuite[@name='fixtures']")
    assert fixtures is not None
    assert fixtures.get("tests") == "2"
    assert fixtures.get("failures") == "1"
    failure = fixtures.find(f"testcase[@name='{DFLASH}']/failure")
    assert failure is not None
    assert failure.get("type") == "rank mismatch"
    assert "expected at rank 2, found at rank 1" in (failure.text or "")
    samples = root.find("testsuite[@name='rule samples']")
    assert samples is not None
    assert int(samples.get("tests") or 0) > 0


def test_junit_to_stdout(cases: Path) -> None:
    result = invoke("--format", "junit", "--no-samples", cases)
    assert result.exit_code == 0, result.output
    root = ET.fromstring(result.stdout)  # noqa: S314 (our own output)
    assert root.get("failures") == "0"


# --- golden event files -----------------------------------------------------------------------------


def test_golden_drift_is_detected_and_fixed_by_update(cases: Path) -> None:
    golden = cases / f"{DFLASH}.events.jsonl"
    expect = cases / f"{DFLASH}.expect.yaml"
    lines = golden.read_text(encoding="utf-8").splitlines()
    assert lines, "the golden file has events"
    first = json.loads(lines[2])
    assert first["source"] == f"{DFLASH}.log"  # relative: the same on every checkout
    first["line"] = 9999
    lines[2] = json.dumps(first, ensure_ascii=False)
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    expect_before = expect.read_bytes()

    result = invoke("--no-samples", cases)
    assert result.exit_code == 1, result.output
    assert f"{golden}:3:1: golden drift: event 3 differs" in result.output
    assert "line: 9999 -> " in result.output

    result = invoke("--no-samples", "--update", cases)
    assert result.exit_code == 0, result.output
    assert f"wrote {golden}" in result.output
    assert expect.read_bytes() == expect_before  # expectations are never rewritten
    assert invoke("--no-samples", cases).exit_code == 0


def test_missing_golden_file_fails_with_a_hint(cases: Path) -> None:
    (cases / f"{HEALTHY}.events.jsonl").unlink()
    result = invoke("--no-samples", cases)
    assert result.exit_code == 1, result.output
    assert "golden missing: no golden event file" in result.output
    assert "run `logdoctor test --update`" in result.output


def test_golden_file_is_what_parse_jsonl_prints(cases: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(cases)
    printed = CliRunner().invoke(main, ["parse", "--format", "jsonl", "--engine", "vllm", f"{HEALTHY}.log"])
    assert printed.exit_code == 0, printed.output
    assert printed.stdout == (cases / f"{HEALTHY}.events.jsonl").read_text(encoding="utf-8")


# --- folder cases, samples, coverage -------------------------------------------------------------------


def test_folder_case_is_one_deployment(cases: Path) -> None:
    folder = cases / "two-files"
    folder.mkdir()
    text = (cases / f"{DFLASH}.log").read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(text) // 2
    (folder / "a-server.log").write_text("".join(text[:half]), encoding="utf-8")
    (folder / "b-server.log").write_text("".join(text[half:]), encoding="utf-8")
    write_expect(cases, "two-files", DFLASH_EXPECT.replace("    rank: 1\n    min_score: 75\n", ""))
    result = invoke("--no-samples", "--update", cases / "two-files.expect.yaml")
    assert result.exit_code == 0, result.output
    sources = {json.loads(line)["source"] for line in (cases / "two-files.events.jsonl").open(encoding="utf-8")}
    assert sources == {"two-files/a-server.log", "two-files/b-server.log"}


def test_failing_sample_points_into_the_rule_file(cases: Path, rules_copy: Path, tmp_path: Path) -> None:
    rule = yaml.safe_load(rule_file(rules_copy, "custom-allreduce-off").read_text(encoding="utf-8"))
    rule["samples"].append({"text": rule["samples"][0]["text"], "fires": False})
    mine = tmp_path / "my-rules" / "custom-allreduce-off.yaml"
    mine.parent.mkdir()
    mine.write_text(yaml.safe_dump(rule, sort_keys=False, width=1000), encoding="utf-8")
    tree = yaml.compose(mine.read_text(encoding="utf-8"))
    assert isinstance(tree, yaml.MappingNode)
    samples = next(v for k, v in tree.value if k.value == "samples").value[-1]

    result = invoke("--no-builtin-rules", "--rules", mine.parent, cases / f"{HEALTHY}.expect.yaml")

    assert result.exit_code == 1, result.output
    where = f"{mine}:{samples.start_mark.line + 1}:{samples.start_mark.column + 1}"
    number = len(rule["samples"])
    assert f"{where}: sample: sample {number} should not fire but the rule was fired" in result.output


def test_unexercised_rules_are_a_warning_not_a_failure(cases: Path, rules_copy: Path) -> None:
    result = invoke("--no-builtin-rules", "--rules", rules_copy, "--no-samples", cases)
    assert result.exit_code == 0, result.output
    warning = next(line for line in result.output.splitlines() if "exercised by none of these cases" in line)
    assert "below-break-even" not in warning  # expected by cause spec-net-loss
    assert "eager-decode" in warning  # only ever ruled out


def test_a_rule_pack_beside_the_builtin_set_lists_only_its_own_unexercised_rules(cases: Path, tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    source = rule_file(Path(__file__).resolve().parents[2] / "rules", "small-kv-cache").read_text(encoding="utf-8")
    (pack / "my-small-kv.yaml").write_text(source.replace("id: small-kv-cache", "id: my-small-kv"), encoding="utf-8")
    result = invoke("--rules", pack, "--no-samples", cases)
    assert "exercised by none of these cases" in result.output
    warning = next(line for line in result.output.splitlines() if "exercised by none" in line)
    assert warning.endswith(": my-small-kv"), warning


def test_test_output_shows_escapes_from_case_names_and_failures(tmp_path: Path) -> None:
    # A fixture named with a terminal escape and a failing expectation: the text and JUnit reports show it.
    import subprocess
    import sys

    story = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
    name = "x\x1b]0;pwned\x07"
    (tmp_path / f"{name}.log").write_bytes(story.read_bytes())
    (tmp_path / f"{name}.expect.yaml").write_text(
        "source: constructed for this test\nconstructed: true\nfires:\n  - cause: kv-cache-pressure\n    min_score: 99\n"
    )
    for fmt in ("text", "junit"):
        result = subprocess.run(
            [sys.executable, "-m", "logdoctor", "test", "--format", fmt, str(tmp_path)], capture_output=True, text=True
        )
        assert result.returncode == 1, result.stderr
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
        assert "\\x1b]0;pwned\\x07" in result.stdout


# --- (g) the repository's own fixtures ------------------------------------------------------------


def test_every_fixture_of_the_repository_passes_its_expectations_and_golden_files() -> None:
    """`logdoctor test fixtures/logs`, as docs/accuracy.md says it holds: a parser change that moves a golden event
    (a value's key order included, which the JSONL output shows) fails here, not only in a later `make golden`."""
    logs = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
    result = invoke("--no-samples", logs)
    assert result.exit_code == 0, result.output
    assert " 0 failed" in result.output, result.output
