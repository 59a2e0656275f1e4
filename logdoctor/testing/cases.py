"""Run fixture cases: a captured log, its expectation file and its golden event file.

    fixtures/logs/story/vllm-dflash-tp2-a6000.log             the log (or .log.gz, or a folder of files)
    fixtures/logs/story/vllm-dflash-tp2-a6000.expect.yaml     what the rules must say about it
    fixtures/logs/story/vllm-dflash-tp2-a6000.events.jsonl    what the parser must find in it

Every case goes through `logdoctor.pipeline.run`, the same stages `logdoctor diagnose` runs. Rule samples are
checked too, so `logdoctor test` is the one command a rule pack's CI (or pre-commit) needs.
"""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from logdoctor.engine.evaluate import HEALTHY_BELOW
from logdoctor.engine.result import Diagnosis
from logdoctor.engine.rules import LoadedRule, load_rules, locate
from logdoctor.errors import ExitStatus, UsageError
from logdoctor.parse.keywords import candidate_keywords
from logdoctor.parse.pipeline import SourceStats
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources
from logdoctor.report.events import event_json
from logdoctor.sources.local import LocalSource, open_local
from logdoctor.testing.checks import Problem, ProblemKind, check_fires, check_not_fires, check_outcome
from logdoctor.testing.expectations import (
    EXPECT_SUFFIX,
    GOLDEN_SUFFIX,
    ExpectationError,
    ExpectationFile,
    Location,
    load_expectation,
)
from logdoctor.testing.samples import sample_failures

DEFAULT_FIXTURES = Path("fixtures") / "logs"
LOG_SUFFIXES = (".log", ".log.gz")
_DIFF_WIDTH = 160


def display_path(path: Path) -> str:
    """Relative to the working directory when inside it, so `file:line` is clickable in a terminal."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def default_fixture_dir(start: Path | None = None) -> Path:
    """`fixtures/logs` in the working directory or the nearest parent that has one (a repo's root)."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / DEFAULT_FIXTURES
        if candidate.is_dir():
            return candidate
    raise UsageError(f"no PATH given and no {DEFAULT_FIXTURES}/ in {here} or its parents; give the fixture directory")


# --- cases ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One deployment's logs and the files that say what logdoctor must make of them."""

    expect_path: Path
    logs: tuple[Path, ...]  # one file, or the files of a folder case in name order
    names: tuple[str, ...]  # source names, relative to the case's directory (stable across checkouts)

    @property
    def name(self) -> str:
        return display_path(self.expect_path)[: -len(EXPECT_SUFFIX)]

    @property
    def golden_path(self) -> Path:
        return self.expect_path.with_name(self.expect_path.name[: -len(EXPECT_SUFFIX)] + GOLDEN_SUFFIX)


class CaseFileError(Exception):
    """The case's files do not fit together (no log for an expectation, two candidate logs, ...)."""


def _case_logs(expect_path: Path) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    stem = expect_path.name[: -len(EXPECT_SUFFIX)]
    directory = expect_path.parent
    found = [p for p in (directory / stem, *(directory / (stem + s) for s in LOG_SUFFIXES)) if p.exists()]
    if not found:
        raise CaseFileError(f"no log for this expectation: expected {stem}.log, {stem}.log.gz or a folder {stem}/")
    if len(found) > 1:
        raise CaseFileError("two logs for this expectation: " + " and ".join(p.name for p in found) + "; keep one")
    log = found[0]
    if log.is_dir():
        files = sorted(p for p in log.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.parts))
        if not files:
            raise CaseFileError(f"the case folder {stem}/ has no files")
        return tuple(files), tuple(str(p.relative_to(directory)) for p in files)
    return (log,), (log.name,)


def case_for(path: Path) -> Case:
    """The case of an expectation file, a log file or a case folder.

    Raises CaseFileError with a `file:1:1: message` line when the files do not fit together."""
    if path.name.endswith(EXPECT_SUFFIX):
        expect = path
    else:
        stem = path.name
        for suffix in (*LOG_SUFFIXES, GOLDEN_SUFFIX):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        expect = path.with_name(stem + EXPECT_SUFFIX)
        if not expect.is_file():
            raise CaseFileError(f"{display_path(path)}:1:1: no expectation file {expect.name} beside it")
    if not expect.is_file():
        raise CaseFileError(f"{display_path(expect)}:1:1: no such expectation file")
    try:
        logs, names = _case_logs(expect)
    except CaseFileError as exc:
        raise CaseFileError(f"{display_path(expect)}:1:1: {exc}") from exc
    return Case(expect, logs, names)


@dataclass
class Discovery:
    cases: list[Case] = field(default_factory=list)
    bad: list[CaseResult] = field(default_factory=list)  # expectation files whose case does not fit together
    warnings: list[str] = field(default_factory=list)


def discover(paths: Sequence[Path]) -> Discovery:
    """Every `*.expect.yaml` under the paths (files are taken as they are), each with its log."""
    found = Discovery()
    expect_files: list[Path] = []
    orphans: list[Path] = []
    for path in paths:
        if not path.exists():
            raise UsageError(f"{path}: no such file or directory")
        if path.is_dir():
            here = sorted(p for p in path.rglob("*" + EXPECT_SUFFIX) if p.is_file())
            if not here:
                found.warnings.append(f"{display_path(path)}: no test cases (*{EXPECT_SUFFIX}) here")
            expect_files.extend(here)
            misnamed = sorted(path.rglob("*.expect.yml")) + sorted(path.rglob("*.expected.yaml"))
            found.warnings.extend(
                f"{display_path(p)}: not read; expectation files end in {EXPECT_SUFFIX}" for p in misnamed
            )
            orphans.extend(p for p in sorted(path.rglob("*")) if p.is_file() and p.name.endswith(LOG_SUFFIXES))
        else:
            expect_files.append(path)
    seen: set[Path] = set()
    covered: set[Path] = set()
    for path in expect_files:
        try:
            case = case_for(path)
        except CaseFileError as exc:
            found.bad.append(CaseResult.bad_file(path, str(exc)))
            continue
        key = case.expect_path.resolve()
        if key in seen:
            continue
        seen.add(key)
        found.cases.append(case)
        covered.update(p.resolve() for p in case.logs)
    lonely = [p for p in orphans if p.resolve() not in covered]
    if lonely:
        shown = ", ".join(display_path(p) for p in lonely[:5]) + (
            f", ... {len(lonely) - 5} more" if len(lonely) > 5 else ""
        )
        found.warnings.append(f"{len(lonely)} fixture log(s) without an expectation file (not tested): {shown}")
    return found


# --- results -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    """One failed expectation, with the file and line that states it."""

    kind: ProblemKind
    message: str
    where: Location | None = None

    def __str__(self) -> str:
        prefix = f"{self.where}: " if self.where is not None else ""
        return f"{prefix}{self.kind}: {self.message}"


@dataclass(frozen=True)
class Todo:
    """A known gap from the `todo` list: reported, never failing; `done` when it now behaves as it should."""

    message: str
    where: Location
    done: bool = False

    def __str__(self) -> str:
        return f"{self.where}: todo: {self.message}"


@dataclass
class CaseResult:
    """What one case's run found. `error` is set when the case's files are unusable (exit 2)."""

    name: str
    expect_path: Path
    case: Case | None = None
    expect: ExpectationFile | None = None
    diagnosis: Diagnosis | None = None
    failures: list[Failure] = field(default_factory=list)
    todos: list[Todo] = field(default_factory=list)  # reported, never failing
    notes: list[str] = field(default_factory=list)  # golden file updated, unused allow entries, ...
    error: str | None = None
    checks: int = 0
    seconds: float = 0.0

    @classmethod
    def bad_file(cls, path: Path, message: str) -> CaseResult:
        name = display_path(path).removesuffix(EXPECT_SUFFIX)
        return cls(name=name, expect_path=path, error=message)

    @property
    def passed(self) -> bool:
        return self.error is None and not self.failures

    def describe(self) -> str:
        if self.error is not None:
            return f"{self.name}: bad test file:\n  " + self.error.replace("\n", "\n  ")
        lines = [f"{self.name}: {'passed' if self.passed else 'FAILED'} ({self.checks} checks)"]
        lines.extend(f"  {f}" for f in self.failures)
        lines.extend(f"  {t}" for t in self.todos)
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def assert_passed(self) -> None:
        """For pytest: raise AssertionError listing every failure (and the todos, for context)."""
        if not self.passed:
            raise AssertionError(self.describe())


# --- one case ------------------------------------------------------------------------------------


def _line_sources(case: Case) -> list[LineSource]:
    keywords = candidate_keywords()
    out: list[LineSource] = []
    for path, name in zip(case.logs, case.names, strict=True):
        local = open_local(str(path))

        def finish(stat: SourceStats, local: LocalSource = local) -> None:
            stat.bytes_read = local.bytes_read

        out.append(LineSource(name=name, lines=local.lines(keywords), path=str(path), finish=finish))
    return out


def _golden_problem(golden: Path, now: list[str]) -> Failure | None:
    where = Location(display_path(golden), 1, 1)
    if not golden.is_file():
        return Failure(
            "golden missing",
            f"no golden event file {golden.name}; run `logdoctor test --update` to write it",
            where,
        )
    was = golden.read_text(encoding="utf-8").splitlines()
    if was == now:
        return None
    for index, (old, new) in enumerate(zip(was, now, strict=False)):
        if old != new:
            return Failure(
                "golden drift",
                f"event {index + 1} differs {_line_diff(old, new)}; if the parser change is intended, "
                "run `logdoctor test --update`",
                Location(where.path, index + 1, 1),
            )
    shorter = min(len(was), len(now))
    if len(now) > len(was):
        extra = f"the parser now finds {len(now) - len(was)} more event(s), first: {_clip(now[shorter])}"
    else:
        extra = f"the parser now finds {len(was) - len(now)} fewer event(s), first gone: {_clip(was[shorter])}"
    return Failure(
        "golden drift",
        f"{extra}; if the parser change is intended, run `logdoctor test --update`",
        Location(where.path, shorter + 1, 1),
    )


def _clip(text: str) -> str:
    return text if len(text) <= _DIFF_WIDTH else text[: _DIFF_WIDTH - 3] + "..."


def _line_diff(old: str, new: str) -> str:
    """The fields that changed, when both lines are JSON objects; else both lines, clipped."""
    try:
        before, after = json.loads(old), json.loads(new)
    except json.JSONDecodeError:
        before = after = None
    if isinstance(before, dict) and isinstance(after, dict):
        keys = [k for k in (*before, *(k for k in after if k not in before)) if before.get(k) != after.get(k)]
        shown = ", ".join(
            f"{k}: {_clip(json.dumps(before.get(k)))} -> {_clip(json.dumps(after.get(k)))}" for k in keys[:4]
        )
        more = f", ... {len(keys) - 4} more field(s)" if len(keys) > 4 else ""
        label = f"{after.get('type', before.get('type'))} at line {after.get('line', before.get('line'))}"
        return f"({label}) golden -> now: {shown}{more}"
    return f"golden {_clip(old)!r}, now {_clip(new)!r}"


def run_case(
    path: Path | str | Case,
    *,
    rules: Sequence[LoadedRule] | None = None,
    rules_dirs: Iterable[Path] = (),
    builtin: bool = True,
    update_golden: bool = False,
    check_golden: bool = True,
    raise_errors: bool = False,
) -> CaseResult:
    """Run one case (an expectation file, its log, or its folder) against a rule set.

    `rules` defaults to the built-in rules (unless `builtin=False`) plus every rule under `rules_dirs`."""
    if isinstance(path, Case):
        case = path
    else:
        try:
            case = case_for(Path(path))
        except CaseFileError as exc:
            return CaseResult.bad_file(Path(path), str(exc))
    if rules is None:
        rules = load_rules([Path(d) for d in rules_dirs], builtin=builtin)
    result = CaseResult(name=case.name, expect_path=case.expect_path, case=case)
    try:
        result.expect = load_expectation(case.expect_path, display_path(case.expect_path))
    except ExpectationError as exc:
        result.error = str(exc)
        return result
    started = time.perf_counter()
    try:
        _run(case, result.expect, rules, result, update_golden=update_golden, check_golden=check_golden)
    except Exception as exc:
        if raise_errors:
            raise
        result.failures.append(
            Failure("error", f"the pipeline crashed on this case: {_crash(exc)}", result.expect.where())
        )
    result.seconds = time.perf_counter() - started
    return result


def _crash(exc: BaseException) -> str:
    """The exception and the innermost frames: enough to find the bug, short enough to read among failures."""
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    where = " < ".join(f"{display_path(Path(f.filename))}:{f.lineno} in {f.name}" for f in reversed(frames))
    return f"{type(exc).__name__}: {exc} (at {where}; --debug shows the traceback)"


def _run(
    case: Case,
    expect_file: ExpectationFile,
    rules: Sequence[LoadedRule],
    result: CaseResult,
    *,
    update_golden: bool,
    check_golden: bool,
) -> None:
    expect = expect_file.expectation
    parsed = parse_sources(_line_sources(case), expect.engine)
    diagnosis, _ = diagnose_parsed(parsed, rules, engine=expect.engine)
    result.diagnosis = diagnosis
    rule_causes = {item.id: item.rule.cause for item in rules if not item.is_diff}

    def fail(problem: Problem | None, *loc: str | int) -> None:
        result.checks += 1
        if problem is not None:
            result.failures.append(Failure(problem.kind, problem.message, expect_file.where(*loc)))

    for index, entry in enumerate(expect.fires):
        problem = check_fires(
            diagnosis,
            cause=entry.cause,
            rule=entry.rule,
            rank=entry.rank,
            min_score=entry.min_score,
            rule_causes=rule_causes,
        )
        fail(problem, "fires", index)
    for index, not_entry in enumerate(expect.must_not_fire):
        fail(check_not_fires(diagnosis, cause=not_entry.cause, rule=not_entry.rule), "must_not_fire", index)
    for index, rule_id in enumerate(expect.ruled_out):
        fail(check_outcome(diagnosis, rule_id, "ruled_out", rule_causes), "ruled_out", index)
    for index, rule_id in enumerate(expect.insufficient_data):
        fail(check_outcome(diagnosis, rule_id, "insufficient_data", rule_causes), "insufficient_data", index)
    for index, todo in enumerate(expect.todo):
        where = expect_file.where("todo", index)
        if todo.fires:
            gap = check_fires(diagnosis, cause=todo.cause, rule=todo.rule, rule_causes=rule_causes)
            text = (
                f"{todo.target} should fire, not yet ({todo.note}): {gap.message}"
                if gap is not None
                else f"{todo.target} fires now; move it from `todo` to `fires`"
            )
        else:
            gap = check_not_fires(diagnosis, cause=todo.cause, rule=todo.rule)
            text = (
                f"{todo.target} should not fire, still does ({todo.note}): {gap.message}"
                if gap is not None
                else f"{todo.target} no longer fires; move it from `todo` to `must_not_fire`"
            )
        result.todos.append(Todo(text, where, done=gap is None))
    if expect.good_log:
        _good_log(expect_file, diagnosis, result)
    if check_golden or update_golden:
        _golden(case, [event_json(e) for e in parsed.events], result, update=update_golden)


def _good_log(expect_file: ExpectationFile, diagnosis: Diagnosis, result: CaseResult) -> None:
    """Sigma's goodlog run: a healthy log may produce no finding at 50 or more unless `allow` says why."""
    expect = expect_file.expectation
    used: set[int] = set()
    where = expect_file.where("healthy") if expect.healthy is not None else expect_file.where()
    for finding in diagnosis.findings:
        if finding.score < HEALTHY_BELOW:
            continue
        result.checks += 1
        allowed = [
            i for i, a in enumerate(expect.allow) if a.rule in (None, finding.rule) and a.cause in (None, finding.cause)
        ]
        known_fp = any(
            not t.fires and t.rule in (None, finding.rule) and t.cause in (None, finding.cause) for t in expect.todo
        )
        if allowed:
            used.update(allowed)
        elif not known_fp:
            result.failures.append(
                Failure(
                    "unexpected",
                    f"a healthy log, but rule {finding.rule} (cause {finding.cause}) scored {finding.score} >= "
                    f"{HEALTHY_BELOW}: {finding.explanation}. If this is right for this log, add "
                    f"`allow: [{{rule: {finding.rule}, reason: ...}}]`",
                    where,
                )
            )
    for index, entry in enumerate(expect.allow):
        if index not in used:
            result.notes.append(f"{expect_file.where('allow', index)}: allow entry for {entry.target} matched nothing")


def _golden(case: Case, lines: list[str], result: CaseResult, *, update: bool) -> None:
    golden = case.golden_path
    if update:
        text = "".join(line + "\n" for line in lines)
        if not golden.is_file() or golden.read_text(encoding="utf-8") != text:
            golden.write_text(text, encoding="utf-8")
            result.notes.append(f"wrote {display_path(golden)} ({len(lines)} events)")
        return
    result.checks += 1
    problem = _golden_problem(golden, lines)
    if problem is not None:
        result.failures.append(problem)


# --- a whole run ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleResult:
    """A rule's own samples (lnav's `sample`): each must fire, or not, as it says."""

    rule: LoadedRule
    failures: list[Failure]

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class SuiteResult:
    """Everything `logdoctor test` found; rendered as text or JUnit XML."""

    cases: list[CaseResult]
    samples: list[SampleResult]
    rules: list[LoadedRule]
    unexercised: list[str]
    warnings: list[str]
    seconds: float = 0.0

    @property
    def bad_files(self) -> list[CaseResult]:
        return [c for c in self.cases if c.error is not None]

    @property
    def failed_cases(self) -> list[CaseResult]:
        return [c for c in self.cases if c.error is None and c.failures]

    @property
    def failed_samples(self) -> list[SampleResult]:
        return [s for s in self.samples if s.failures]

    @property
    def exit_status(self) -> ExitStatus:
        if self.bad_files:
            return ExitStatus.USAGE
        if self.failed_cases or self.failed_samples:
            return ExitStatus.FINDINGS
        return ExitStatus.OK


def _sample_locations(item: LoadedRule) -> dict[int, Location]:
    path = Path(item.path)
    try:
        tree = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        tree = None
    shown = display_path(path)
    return {i: Location(shown, *locate(tree, ["samples", i])) for i in range(len(item.rule.samples))}


def check_rule_samples(rules: Sequence[LoadedRule], *, raise_errors: bool = False) -> list[SampleResult]:
    out: list[SampleResult] = []
    for item in rules:
        if not item.rule.samples:
            continue
        try:
            problems = sample_failures(item)
        except Exception as exc:
            if raise_errors:
                raise
            at = Location(display_path(Path(item.path)), 1, 1)
            crash = Failure("error", f"the pipeline crashed on this rule's samples: {_crash(exc)}", at)
            out.append(SampleResult(item, [crash]))
            continue
        places = _sample_locations(item) if problems else {}
        failures = [
            Failure("sample", p.message.removeprefix(f"{item.path}: ") + f" [rule {item.id}]", places.get(p.index))
            for p in problems
        ]
        out.append(SampleResult(item, failures))
    return out


def exercised_rules(cases: Iterable[CaseResult], rules: Sequence[LoadedRule]) -> set[str]:
    """A rule is exercised when some case expects it, or its cause, to fire."""
    rule_ids: set[str] = set()
    causes: set[str] = set()
    for case in cases:
        if case.expect is None:
            continue
        for entry in case.expect.expectation.fires:
            if entry.rule is not None:
                rule_ids.add(entry.rule)
            if entry.cause is not None:
                causes.add(entry.cause)
    return {item.id for item in rules if item.id in rule_ids or item.rule.cause in causes}


def run_suite(
    paths: Sequence[Path],
    rules: Sequence[LoadedRule],
    *,
    update_golden: bool = False,
    samples: bool = True,
    raise_errors: bool = False,
) -> SuiteResult:
    """Every case under the paths, plus every rule's samples (unless `samples=False`), against one rule set."""
    started = time.perf_counter()
    found = discover(paths)
    results = list(found.bad)
    for case in found.cases:
        results.append(run_case(case, rules=rules, update_golden=update_golden, raise_errors=raise_errors))
    results.sort(key=lambda r: r.name)
    exercised = exercised_rules(results, rules)
    # In a user's rule pack (--rules beside the built-in set) only the pack's own rules need cases.
    own = [item for item in rules if not item.builtin] or list(rules)
    unexercised = sorted(
        item.id for item in own if item.id not in exercised and item.rule.status != "deprecated" and not item.is_diff
    )
    return SuiteResult(
        cases=results,
        samples=check_rule_samples(rules, raise_errors=raise_errors) if samples else [],
        rules=list(rules),
        unexercised=unexercised,
        warnings=found.warnings,
        seconds=time.perf_counter() - started,
    )
