"""The advisory database: PEP 440 ranges, the loader's errors, every built-in advisory's own tests, matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.engine.advisories import (
    LoadedAdvisory,
    advisories_for,
    builtin_advisories,
    load_advisories,
    match_advisories,
    run_tests,
    sample_profile,
    score_for,
)
from logdoctor.engine.versions import InvalidSpecifier, SpecifierSet, Version, parse_version
from logdoctor.errors import RuleError
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources

REPO = Path(__file__).resolve().parents[2]
STORY = REPO / "fixtures" / "logs" / "story"


# --- versions ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("1.0.dev1", "1.0a1"),
        ("1.0a1", "1.0b1"),
        ("1.0b1", "1.0rc1"),
        ("1.0rc1", "1.0"),
        ("1.0", "1.0.post1"),
        ("0.21.1rc1.dev185+gb29cbf065", "0.21.1rc1"),
        ("0.21.0", "0.21.1rc1.dev185+gb29cbf065"),
        ("0.9.2", "0.10.0"),
        ("2.21.5", "2.21.5+cuda12.4"),
    ],
)
def test_versions_order_as_pep_440(lower: str, higher: str) -> None:
    assert Version(lower) < Version(higher)
    assert not Version(higher) < Version(lower)


def test_version_spellings_normalise() -> None:
    assert Version("1.0") == Version("1.0.0")
    assert Version("v0.10.1") == Version("0.10.1")
    assert Version("0.5.0-rc1") == Version("0.5.0rc1")
    assert parse_version(">=0.18") is None  # a range dated from the header shape is not a version
    assert parse_version("0.7-0.10") is None


@pytest.mark.parametrize(
    ("spec", "version", "inside"),
    [
        (">=0.20.0,<0.21.0", "0.20.1", True),
        (">=0.20.0,<0.21.0", "0.21.0", False),
        (">=0.20.0,<0.21.0", "0.19.1", False),
        ("<0.21.0", "0.21.0rc1", True),  # advisories include pre-releases on purpose
        ("==2.21.5", "2.21.5+cuda12.4", True),  # a local label is a build of that version
        ("==0.5.*", "0.5.9", True),
        ("==0.5.*", "0.6.0", False),
        ("~=2.21.0", "2.21.5", True),
        ("~=2.21.0", "2.22.0", False),
        ("!=0.20.1", "0.20.1", False),
    ],
)
def test_specifier_sets(spec: str, version: str, inside: bool) -> None:
    assert SpecifierSet(spec).contains(Version(version)) is inside


@pytest.mark.parametrize("bad", ["", "0.20", ">=abc", "=>0.20", ">=0.20.*", "~=1"])
def test_bad_specifiers_are_refused(bad: str) -> None:
    with pytest.raises(InvalidSpecifier):
        SpecifierSet(bad)


# --- the built-in database ---------------------------------------------------------------------------------


def _builtin() -> list[LoadedAdvisory]:
    return list(builtin_advisories())


@pytest.mark.parametrize("item", _builtin(), ids=lambda item: item.id)
def test_each_advisory_passes_its_own_tests(item: LoadedAdvisory) -> None:
    assert run_tests(item) == []
    assert any(t.matches for t in item.advisory.tests)
    assert any(not t.matches for t in item.advisory.tests)  # a near miss: the fixed version, another method


@pytest.mark.parametrize("item", _builtin(), ids=lambda item: item.id)
def test_each_advisory_names_its_source(item: LoadedAdvisory) -> None:
    assert item.advisory.references
    assert all(ref.startswith("https://") for ref in item.advisory.references)
    if item.advisory.fixed_in is not None:  # the fixed release is outside every affected range
        assert not item.affects(Version(item.advisory.fixed_in))


def test_the_database_covers_each_engine() -> None:
    engines = {item.advisory.engine for item in _builtin()}
    assert {"vllm", "sglang", "nccl"} <= engines
    assert len(_builtin()) >= 15


def test_scores_follow_the_stated_slowdown() -> None:
    assert score_for(2.0) == 50
    assert score_for(7.2) == 86
    assert score_for(1.05) == 10  # floor: a known issue is never below "low"
    assert score_for(1000.0) == 95


# --- the loader's errors -----------------------------------------------------------------------------------


def _write(tmp_path: Path, engine: str, name: str, text: str) -> Path:
    folder = tmp_path / engine
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


GOOD = """\
title: Something slow
cause: spec-net-loss
affected: [">=0.20.0,<0.21.0"]
fixed_in: "0.21.0"
when: "spec.method == 'dflash'"
effect: {statement: "2x slower", slowdown: 2.0}
references: [https://github.com/vllm-project/vllm/issues/1]
tests:
  - {version: 0.20.1, facts: {spec.method: dflash}}
  - {version: 0.21.0, facts: {spec.method: dflash}, matches: false}
"""


def test_a_team_directory_loads_beside_the_builtin_set(tmp_path: Path) -> None:
    _write(tmp_path, "vllm", "team-issue.yaml", GOOD)
    loaded = load_advisories([tmp_path])
    ours = [a for a in loaded if a.id == "team-issue"]
    assert len(ours) == 1 and not ours[0].builtin and ours[0].advisory.engine == "vllm"
    assert run_tests(ours[0]) == []


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (('affected: [">=0.20.0,<0.21.0"]', 'affected: [">=0.20.0,<<0.21.0"]'), ":3:", "not a PEP 440 version"),
        (("cause: spec-net-loss", "cause: spec-net-los"), ":2:", "unknown cause"),
        (("spec.method == 'dflash'\"", "spec.methd == 'dflash'\""), ":5:", "unknown fact 'spec.methd'"),
        (("slowdown: 2.0", "slowdown: 0.5"), ":6:", "greater than or equal to 1"),
        (("facts: {spec.method: dflash}}", "facts: {spec.methd: dflash}}"), ":9:", "unknown fact"),
        (("https://github.com/vllm-project/vllm/issues/1", "github.com/x"), ":7:", "should match pattern"),
        ((", matches: false}", "}"), ":1:", "near miss"),
        (("title: Something slow", "title: Something slow\ncolour: red"), ":2:", "Extra inputs"),
    ],
)
def test_problems_are_reported_with_file_and_line(
    tmp_path: Path, change: tuple[str, str], where: str, message: str
) -> None:
    path = _write(tmp_path, "vllm", "bad.yaml", GOOD.replace(*change))
    with pytest.raises(RuleError) as info:
        load_advisories([tmp_path], builtin=False)
    text = str(info.value)
    assert f"{path}{where}" in text, text
    assert message in text, text


def test_the_folder_names_the_engine(tmp_path: Path) -> None:
    _write(tmp_path, "tensorrt", "x.yaml", GOOD)
    with pytest.raises(RuleError, match="unknown engine 'tensorrt'"):
        load_advisories([tmp_path], builtin=False)
    _write(tmp_path, "vllm", "y.yaml", GOOD.replace("title:", "engine: sglang\ntitle:"))
    with pytest.raises(RuleError, match=r"y.yaml:1:\d+: engine: 'sglang' differs from the folder"):
        load_advisories([tmp_path], builtin=False)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    _write(tmp_path, "vllm", "nvfp4-scale-buffer-uninitialised.yaml", GOOD)
    with pytest.raises(RuleError, match="duplicate advisory id 'nvfp4-scale-buffer-uninitialised'"):
        load_advisories([tmp_path])


def test_not_a_mapping_and_bad_yaml_are_one_line_each(tmp_path: Path) -> None:
    _write(tmp_path, "vllm", "a.yaml", "- just a list\n")
    _write(tmp_path, "vllm", "b.yaml", "title: [unclosed\n")
    with pytest.raises(RuleError) as info:
        load_advisories([tmp_path], builtin=False)
    assert "2 problem(s)" in str(info.value)
    assert "a.yaml:1:1: an advisory file must be a mapping" in str(info.value)


# --- matching --------------------------------------------------------------------------------------------


def _team(tmp_path: Path) -> LoadedAdvisory:
    _write(tmp_path, "vllm", "team-issue.yaml", GOOD)
    return next(a for a in load_advisories([tmp_path], builtin=False) if a.id == "team-issue")


def test_a_match_is_a_finding_of_its_own_kind(tmp_path: Path) -> None:
    item = _team(tmp_path)
    findings, issues = match_advisories([item], sample_profile({"spec.method": "dflash"}, "vllm", "0.20.1"))
    assert [f.kind for f in findings] == ["advisory"]
    finding = findings[0]
    assert finding.rule == "team-issue" and finding.cause == "spec-net-loss" and finding.score == 50
    assert "0.20.1" in finding.title and "fixed in 0.21.0" in finding.explanation
    assert finding.fix[0].startswith("upgrade to vLLM 0.21.0")
    assert finding.references == ["https://github.com/vllm-project/vllm/issues/1"]
    assert [(i.id, i.status) for i in issues] == [("team-issue", "applies")]


def test_an_unknown_version_says_which_versions_it_would_apply_to(tmp_path: Path) -> None:
    item = _team(tmp_path)
    for version in (None, ">=0.18"):  # not printed, or only dated from the header shape
        profile = sample_profile({"spec.method": "dflash"}, "vllm", "0")
        profile.version = version
        findings, issues = match_advisories([item], profile)
        assert findings == []
        assert [i.status for i in issues] == ["may-apply"]
        assert ">=0.20.0,<0.21.0" in issues[0].reason


def test_an_undecidable_condition_may_apply_and_a_false_one_does_not(tmp_path: Path) -> None:
    item = _team(tmp_path)
    findings, issues = match_advisories([item], sample_profile({}, "vllm", "0.20.1"))
    assert findings == [] and [i.status for i in issues] == ["may-apply"]
    assert "spec.method" in issues[0].reason
    findings, issues = match_advisories([item], sample_profile({"spec.method": "mtp"}, "vllm", "0.20.1"))
    assert findings == [] and issues == []


def test_another_engine_is_not_matched(tmp_path: Path) -> None:
    item = _team(tmp_path)
    findings, issues = match_advisories([item], sample_profile({"spec.method": "dflash"}, "sglang", "0.20.1"))
    assert findings == [] and issues == []


def test_an_environment_dump_gives_the_version_of_another_engine(tmp_path: Path) -> None:
    item = _team(tmp_path)
    profile = sample_profile({"spec.method": "dflash", "host.vllm": "0.20.2"}, "unknown", "0")
    profile.version = None
    findings, _ = match_advisories([item], profile)
    assert [f.rule for f in findings] == ["team-issue"]


def test_listing_by_engine_and_version() -> None:
    listed = advisories_for(list(builtin_advisories()), "vllm", "0.20.1")
    ids = {item.id for item, _ in listed}
    assert "dflash-below-expected-speedup" in ids
    assert all(affects is True for _, affects in listed)
    assert all(item.advisory.engine == "vllm" for item, _ in listed)
    every = advisories_for(list(builtin_advisories()), "vllm")
    assert all(affects is None for _, affects in every) and len(every) >= len(listed)


# --- the story fixture --------------------------------------------------------------------------------------


def _diagnose(text: str, name: str = "story.log") -> tuple[list[str], list[str]]:
    parsed = parse_sources([LineSource(name=name, lines=list(enumerate(text.splitlines(), 1)), kind="text")])
    diagnosis, _ = diagnose_parsed(parsed, [])
    return [f.rule for f in diagnosis.findings if f.kind == "advisory"], [i.id for i in diagnosis.known_issues]


def test_the_story_reports_the_dflash_advisory() -> None:
    text = (STORY / "vllm-dflash-tp2-a6000.log").read_text()
    found, issues = _diagnose(text)
    assert "dflash-below-expected-speedup" in found
    assert "dflash-below-expected-speedup" in issues


def test_a_version_outside_the_range_or_another_method_does_not() -> None:
    text = (STORY / "vllm-dflash-tp2-a6000.log").read_text()
    older = text.replace("version 0.20.1", "version 0.18.1").replace("(v0.20.1)", "(v0.18.1)")
    assert "0.20.1" not in older
    found, _ = _diagnose(older)
    assert "dflash-below-expected-speedup" not in found
    healthy = (STORY / "vllm-mtp-tp2-a6000-healthy.log").read_text()
    found, _ = _diagnose(healthy)
    assert "dflash-below-expected-speedup" not in found


def test_a_hardware_specific_regression_needs_that_hardware_in_the_log() -> None:
    # real: vLLM 0.23.0 with an NVFP4 model on two GeForce cards whose name the log does not print
    # (fixtures/logs/realworld8/vllm-b201.log); the NVFP4 regression was measured on B300/GB300 only
    text = (REPO / "fixtures" / "logs" / "realworld8" / "vllm-b201.log").read_text()
    found, issues = _diagnose(text, "vllm-b201.log")
    assert "nvfp4-scale-buffer-uninitialised" not in found
    assert "nvfp4-scale-buffer-uninitialised" in issues  # listed: it may apply where the GPU is not known


# --- the command and the reports ----------------------------------------------------------------------------


def test_the_advisories_command_lists_what_applies_to_a_version() -> None:
    from click.testing import CliRunner

    from logdoctor.app.cli import main

    runner = CliRunner()
    result = runner.invoke(main, ["advisories", "--engine", "vllm", "--version", "0.20.1", "--format", "json"])
    assert result.exit_code == 0, result.output
    import json

    data = json.loads(result.output)
    ids = {row["id"] for row in data["advisories"]}
    assert "dflash-below-expected-speedup" in ids and "nvfp4-scale-buffer-uninitialised" not in ids
    assert all(row["applies"] is True for row in data["advisories"])
    tested = runner.invoke(main, ["advisories", "--test"])
    assert tested.exit_code == 0 and ", 0 failed" in tested.output
    bad = runner.invoke(main, ["advisories", "--version", "0.20.1"])
    assert bad.exit_code == 2 and "--version needs --engine" in bad.output


def test_a_team_directory_is_listed_and_matched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from logdoctor.app.cli import main
    from logdoctor.engine.advisories import ADVISORIES_ENV

    monkeypatch.setenv(ADVISORIES_ENV, "")  # the option sets it in this process: restored when the test ends
    _write(tmp_path, "vllm", "team-issue.yaml", GOOD)
    runner = CliRunner()
    result = runner.invoke(main, ["advisories", "--advisories", str(tmp_path), "--engine", "vllm", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "team-issue" in result.output
    _write(tmp_path, "vllm", "broken.yaml", GOOD.replace("cause: spec-net-loss", "cause: nope"))
    broken = runner.invoke(main, ["advisories", "--advisories", str(tmp_path)])
    assert broken.exit_code == 2 and "broken.yaml:2:" in broken.output


def test_reports_carry_known_issues_escaped() -> None:
    from logdoctor.engine.result import Diagnosis, EngineReport, KnownIssue, Verdict
    from logdoctor.report.advisories import known_issues_html, known_issues_markdown
    from logdoctor.report.github import inline_code, prose

    issue = KnownIssue(
        id="team-issue",
        engine="vllm",
        title="<script>alert(1)</script> slow",
        cause="spec-net-loss",
        status="applies",
        version="0.20.1",
        affected=">=0.20.0,<0.21.0",
        fixed_in="0.21.0",
        reason="vLLM 0.20.1 is in >=0.20.0,<0.21.0",
        effect="2x *slower*",
        slowdown=2.0,
        references=["https://github.com/vllm-project/vllm/issues/1", "javascript:alert(1)"],
    )
    d = Diagnosis(
        sources=[],
        engine=EngineReport(name="vllm", version="0.20.1"),
        verdict=Verdict(healthy=False, summary="x"),
        findings=[],
        ruled_out=[],
        insufficient_data=[],
        known_issues=[issue],
    )
    page = known_issues_html(d)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "applies (fixed in 0.21.0)" in page
    assert "href=" not in page and "<code>https://github.com/vllm-project/vllm/issues/1</code>" in page
    markdown = "\n".join(known_issues_markdown(d, prose, inline_code))
    assert "**Known issues of this release**" in markdown
    assert "\\<script\\>" in markdown and "\\*slower\\*" in markdown
    assert "javascript:" not in markdown  # only https links become links


def test_the_committed_schema_is_the_models() -> None:
    from logdoctor.engine.advisories import schema_json

    committed = (REPO / "docs" / "schema" / "advisory.schema.json").read_text()
    assert committed == schema_json(), "run `make schema`"


def test_every_builtin_file_fits_the_schema() -> None:
    import json

    import jsonschema
    import yaml

    schema = json.loads((REPO / "docs" / "schema" / "advisory.schema.json").read_text())
    for item in builtin_advisories():
        data = yaml.safe_load(Path(item.path).read_text())
        jsonschema.validate(data, schema)


def test_drift_flags_a_version_that_was_never_released(tmp_path: Path) -> None:
    from drift.advisories import check_advisories

    _write(tmp_path, "vllm", "typo.yaml", GOOD.replace('fixed_in: "0.21.0"', 'fixed_in: "0.2.10"'))
    loaded = load_advisories([tmp_path], builtin=False)
    releases = {"vllm": {"0.20.0", "0.20.1", "0.21.0"}}
    problems = check_advisories(loaded, lambda engine: releases.get(engine, set()))
    assert problems == [f"{tmp_path / 'vllm' / 'typo.yaml'}: vllm 0.2.10 is not a released version"]
    assert check_advisories(load_advisories([_team_dir(tmp_path)], builtin=False), lambda e: releases[e]) == []


def _team_dir(tmp_path: Path) -> Path:
    good = tmp_path / "good"
    good.mkdir()
    _write(good, "vllm", "ok.yaml", GOOD)
    return good
