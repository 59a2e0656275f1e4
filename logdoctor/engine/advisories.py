"""Known performance regressions of engine releases: the advisory database and its matching.

One YAML file an advisory, `advisories/<engine>/<id>.yaml` (docs/advisories.md):

    # advisories/vllm/nvfp4-scale-buffer-uninitialised.yaml
    title: NVFP4 decode on Blackwell 7x slower (swizzled scale buffer left uninitialised)
    cause: quantization-kernel-fallback       # the public cause its slowdown shows as (CAUSES.md)
    affected: [">=0.21.1rc1.dev185,<0.22.1"]  # PEP 440 ranges; any one may hold
    fixed_in: "0.22.1"                        # the first release with the fix (none: not fixed yet)
    when: "quant.method in ['modelopt_fp4', 'nvfp4']"   # optional: the rule language over facts
    effect: {statement: "...", slowdown: 7.2}  # as the source states it; slowdown = fixed / affected throughput
    workaround: ["--quantization fp8"]
    references: [https://github.com/vllm-project/vllm/issues/45741]
    tests:                                      # facts that match, and a near miss that does not
      - {version: 0.22.0, facts: {quant.method: modelopt_fp4}}
      - {version: 0.22.1, facts: {quant.method: modelopt_fp4}, matches: false}

Matching (`match_advisories`): the installed version of the advisory's engine (the version line, or an
environment dump's package version) against `affected`, then `when` over the facts, three-valued like a rule.
Both true: a finding (kind `advisory`) scored by the stated slowdown and ranked with the rules' findings.
Version unknown (not printed, or only a range dated from the header shape) or the condition undecidable: a
known issue that *may* apply, listed with the versions it applies to, never a finding.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logdoctor.engine.conditions import ConditionError, Node, parse_condition
from logdoctor.engine.loading import load_builtin_set, load_yaml_files, node_classes
from logdoctor.engine.result import Finding, KnownIssue, severity_for
from logdoctor.engine.rules import CAUSES, locate
from logdoctor.engine.versions import InvalidSpecifier, Specifier, SpecifierSet, Version, parse_version
from logdoctor.errors import RuleError
from logdoctor.facts import FACTS, Fact, Profile
from logdoctor.records import Record, field
from logdoctor.userfile import MAX_RULE_FILE_BYTES, UserFileError, YamlDataCache, read_user_file

if TYPE_CHECKING:
    from pydantic import BaseModel

    from logdoctor.engine.suppress import Suppressions

ADVISORY_YAML = YamlDataCache("advisory-files")

# The software an advisory may be about (its folder), and where the installed version is read: the log's own
# version line when the log is that engine's, else an environment dump beside it (`vllm collect-env`).
ADVISORY_ENGINES: dict[str, tuple[str, ...]] = {
    "vllm": ("host.vllm",),
    "sglang": ("host.sglang",),
    "nccl": ("nccl.version", "host.nccl"),
    "torch": ("host.torch",),
    "driver": ("host.driver",),
}
ENGINE_LABELS = {"vllm": "vLLM", "sglang": "SGLang", "nccl": "NCCL", "torch": "PyTorch", "driver": "NVIDIA driver"}
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MIN_SCORE, MAX_SCORE = 10, 95
UNSIZED_SCORE = 30  # a known issue whose source gives no size: "low", below the healthy threshold of 50


class AdvisoryEffect(Record):
    """The effect as the source states it, and the slowdown it implies: throughput fixed / affected (>= 1)."""

    statement: str
    slowdown: float | None = None  # None: the source states no size (the score is UNSIZED_SCORE)


class AdvisoryTest(Record):
    """Facts (and the engine's version) that must match the advisory, or must not (`matches: false`)."""

    version: str
    facts: dict[str, Any] = field(default_factory=dict)
    matches: bool = True


class Advisory(Record):
    id: str
    engine: str
    title: str
    cause: str
    affected: list[str]
    fixed_in: str | None = None
    when: str | None = None
    effect: AdvisoryEffect
    workaround: list[str] = field(default_factory=list)
    references: list[str]
    tests: list[AdvisoryTest] = field(default_factory=list)
    description: str | None = None


class LoadedAdvisory:
    """A validated advisory with its ranges and condition compiled, and the file it came from."""

    __slots__ = ("advisory", "builtin", "path", "ranges", "when")

    def __init__(
        self, advisory: Advisory, path: str, ranges: list[SpecifierSet], when: Node | None, builtin: bool
    ) -> None:
        self.advisory = advisory
        self.path = path
        self.ranges = ranges
        self.when = when
        self.builtin = builtin

    def __repr__(self) -> str:
        return f"LoadedAdvisory({self.advisory.id!r}, path={self.path!r})"

    @property
    def id(self) -> str:
        return self.advisory.id

    def affects(self, version: Version) -> bool:
        return any(r.contains(version) for r in self.ranges)

    @property
    def affected_text(self) -> str:
        return " or ".join(str(r) for r in self.ranges)


def _specifier_text(value: str) -> str:
    SpecifierSet(value)  # InvalidSpecifier (a ValueError) words the problem
    return value


def _version_text(value: str) -> str:
    Version(value)
    return value


def _fact_name(name: str) -> str:
    if name not in FACTS:
        close = difflib.get_close_matches(name, sorted(FACTS), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ValueError(f"unknown fact '{name}'{hint}")
    return name


def _fits(adv: Advisory) -> bool:
    """Whether the data meets every check of `advisory_model` (then pydantic need not run)."""
    try:
        for text in adv.affected:
            SpecifierSet(text)
        for version in [adv.fixed_in, *(t.version for t in adv.tests)]:
            if version is not None:
                Version(version)
    except ValueError:
        return False
    return (
        _ID_RE.match(adv.id) is not None
        and adv.engine in ADVISORY_ENGINES
        and adv.cause in CAUSES
        and bool(adv.affected)
        and bool(adv.references)
        and all(r.startswith("https://") for r in adv.references)
        and (adv.effect.slowdown is None or adv.effect.slowdown >= 1.0)
        and all(name in FACTS for t in adv.tests for name in t.facts)
        and _tests_fit(adv)
    )


def _tests_fit(adv: Advisory) -> bool:
    return any(t.matches for t in adv.tests) and any(not t.matches for t in adv.tests)


@cache
def advisory_model() -> type[BaseModel]:
    """The pydantic model of an advisory file: its JSON Schema (docs/schema/advisory.schema.json) and the wording
    of the errors of a file that does not fit."""
    from typing import Annotated

    from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

    Range = Annotated[str, AfterValidator(_specifier_text)]
    VersionText = Annotated[str, AfterValidator(_version_text)]
    FactName = Annotated[str, AfterValidator(_fact_name)]
    Url = Annotated[str, Field(pattern=r"^https://\S+$")]

    class EffectModel(BaseModel):
        """The effect as the source states it, and the slowdown it implies: throughput fixed / affected (>= 1)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        statement: str = Field(min_length=1, description="the effect in the source's words and numbers")
        slowdown: float | None = Field(
            default=None,
            ge=1.0,
            description="throughput once fixed / throughput affected, from the source; none: unsized",
        )

    class TestModel(BaseModel):
        """Facts (and the engine's version) that must match the advisory, or must not (`matches: false`)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        version: VersionText
        facts: dict[FactName, str | int | float | bool | list[str | int | float]] = Field(default_factory=dict)
        matches: bool = True

    class AdvisoryModel(BaseModel):
        """A known performance regression or performance bug of one engine's releases."""

        model_config = ConfigDict(frozen=True, extra="forbid", title="logdoctor advisory")

        id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="the file's stem")
        engine: str = Field(description="the folder: " + ", ".join(ADVISORY_ENGINES))
        title: str = Field(min_length=1)
        cause: str = Field(description="the public cause id (CAUSES.md) the slowdown shows as")
        affected: list[Range] = Field(min_length=1, description="PEP 440 ranges of affected versions; any may hold")
        fixed_in: VersionText | None = Field(default=None, description="first release with the fix; none: open")
        when: str | None = Field(default=None, description="condition over facts (docs/rules.md)")
        effect: EffectModel
        workaround: list[str] = Field(default_factory=list)
        references: list[Url] = Field(min_length=1)
        tests: list[TestModel] = Field(default_factory=list)
        description: str | None = None

        @field_validator("engine")
        @classmethod
        def _engine(cls, value: str) -> str:
            if value not in ADVISORY_ENGINES:
                raise ValueError(f"unknown engine '{value}' (one of {', '.join(ADVISORY_ENGINES)})")
            return value

        @field_validator("cause")
        @classmethod
        def _cause(cls, value: str) -> str:
            if value not in CAUSES:
                raise ValueError(f"unknown cause '{value}' (see CAUSES.md: {', '.join(CAUSES)})")
            return value

        @model_validator(mode="after")
        def _tests(self) -> AdvisoryModel:
            if not any(t.matches for t in self.tests) or all(t.matches for t in self.tests):
                raise ValueError("tests: give facts that match and a near miss that does not (matches: false)")
            return self

    return AdvisoryModel


def validate_advisory(data: dict[str, Any]) -> Advisory:
    """An advisory file's data as an Advisory; pydantic.ValidationError (every problem) when it does not fit."""
    try:
        adv = Advisory(**data)
        if _fits(adv):
            return adv
    except (ValueError, TypeError):
        pass
    checked = advisory_model().model_validate(data)
    return Advisory(**checked.model_dump())


def builtin_advisories_dir() -> Path:
    return Path(str(resources.files("logdoctor._advisories")))


def _load_file(path: Path, root: Path, builtin: bool, errors: list[str]) -> LoadedAdvisory | None:
    display = str(path)
    try:
        text = read_user_file(path, directory=root, max_bytes=MAX_RULE_FILE_BYTES)
        data, tree = ADVISORY_YAML.load(display, text)
    except UserFileError as exc:
        errors.append(f"{display}:{exc.line}:{exc.column}: {exc}")
        return None
    if not isinstance(data, dict):
        errors.append(f"{display}:1:1: an advisory file must be a mapping")
        return None
    before = len(errors)
    stem = path.name.removesuffix(".yaml")
    folder = path.parent.name if path.parent != root else None
    for key, from_path, what in (("id", stem, "file's stem"), ("engine", folder, "folder it sits in")):
        written = data.get(key)
        if from_path is None:
            if written is None:
                errors.append(
                    f"{display}:1:1: {key}: no engine folder: write `engine:` or move the file to <dir>/<engine>/"
                )
        elif written is None:
            data[key] = from_path
        elif written != from_path:
            line, col = locate(tree, [key])
            errors.append(f"{display}:{line}:{col}: {key}: '{written}' differs from the {what} ({from_path})")
    try:
        adv = validate_advisory(data)
    except ValueError as exc:
        if not hasattr(exc, "errors"):
            raise
        for err in exc.errors():
            loc = [x if isinstance(x, int) else str(x) for x in err["loc"]]
            at_key = err["type"] == "extra_forbidden" or loc[-1:] == ["[key]"]
            if loc[-1:] == ["[key]"]:
                loc = loc[:-1]
            line, col = locate(tree, loc, key=at_key)
            where = ".".join(str(x) for x in loc) or "advisory"
            errors.append(f"{display}:{line}:{col}: {where}: {err['msg'].removeprefix('Value error, ')}")
        return None
    when: Node | None = None
    if adv.when is not None:
        try:
            when = parse_condition(adv.when)
        except ConditionError as exc:
            line, col = locate(tree, ["when"])
            errors.append(f"{display}:{line}:{col}: when: {exc}")
    if len(errors) > before:
        return None
    try:
        ranges = [SpecifierSet(text) for text in adv.affected]
    except InvalidSpecifier as exc:  # validated above; kept so a change there cannot slip through
        errors.append(f"{display}:1:1: affected: {exc}")
        return None
    return LoadedAdvisory(adv, display, ranges, when, builtin)


def advisory_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.yaml") if p.is_file())


def load_advisories(directories: Iterable[Path] = (), *, builtin: bool = True) -> list[LoadedAdvisory]:
    """The built-in advisories (unless disabled) and every `*.yaml` under the given directories.

    Raises RuleError listing every problem as file:line:col (schema, ranges, facts, conditions, duplicate ids)."""
    errors: list[str] = []
    loaded = (
        load_builtin_set(
            "advisory",
            builtin_advisories_dir(),
            advisory_files,
            _load_file,
            ADVISORY_YAML,
            LoadedAdvisory,
            (LoadedAdvisory, Advisory, AdvisoryEffect, AdvisoryTest, SpecifierSet, Specifier, Version, *node_classes()),
            errors,
        )
        if builtin
        else []
    )
    directories = list(directories)
    if directories:
        loaded += load_yaml_files(None, directories, "advisory", advisory_files, _load_file, ADVISORY_YAML, errors)
    seen: dict[str, str] = {}
    for item in loaded:
        if item.id in seen:
            errors.append(f"{item.path}:1:1: duplicate advisory id '{item.id}' (also in {seen[item.id]})")
        else:
            seen[item.id] = item.path
    if errors:
        raise RuleError(f"{len(errors)} problem(s) in advisory files:\n  " + "\n  ".join(errors))
    return loaded


@cache
def builtin_advisories() -> tuple[LoadedAdvisory, ...]:
    return tuple(load_advisories())


# `--advisories DIR` (diagnose, diff, watch) names a team's own advisories through the environment, so the worker
# processes of a fleet run see them too; os.pathsep between directories.
ADVISORIES_ENV = "LOGDOCTOR_ADVISORIES"


def active_advisories() -> tuple[LoadedAdvisory, ...]:
    """The advisories a diagnosis matches: the built-in set, plus the directories in $LOGDOCTOR_ADVISORIES."""
    extra = os.environ.get(ADVISORIES_ENV, "")
    return _with_directories(extra) if extra else builtin_advisories()


@cache
def _with_directories(extra: str) -> tuple[LoadedAdvisory, ...]:
    return tuple(load_advisories([Path(p) for p in extra.split(os.pathsep) if p]))


# --- matching ------------------------------------------------------------------------------------------------


def installed_version(engine: str, profile: Profile) -> tuple[str | None, str]:
    """The version of `engine` this deployment runs, as written, and where it was read."""
    if profile.engine == engine and profile.version:
        return profile.version, "the log's version line"
    for name in ADVISORY_ENGINES.get(engine, ()):
        value = profile.value(name)
        if isinstance(value, str) and value:
            return value, name
    return None, ""


def score_for(slowdown: float | None) -> int:
    """The score of a matched advisory from its stated slowdown: the share of throughput the bug takes,
    100 x (1 - 1/slowdown), kept within 10..95 (a 2x slowdown scores 50, a 7x one 86); UNSIZED_SCORE when the
    source states no size."""
    if slowdown is None:
        return UNSIZED_SCORE
    return max(MIN_SCORE, min(MAX_SCORE, round(100 * (1 - 1 / slowdown))))


def _working(slowdown: float | None, score: int) -> str:
    if slowdown is None:
        return f"the source states no size: {score}"
    return f"stated slowdown {slowdown:g}x: 100 x (1 - 1/{slowdown:g}) = {score}"


def _issue(item: LoadedAdvisory, status: str, version: str | None, reason: str) -> KnownIssue:
    adv = item.advisory
    return KnownIssue(
        id=adv.id,
        engine=adv.engine,
        title=adv.title,
        cause=adv.cause,
        status="applies" if status == "applies" else "may-apply",
        version=version,
        affected=item.affected_text,
        fixed_in=adv.fixed_in,
        reason=reason,
        effect=adv.effect.statement,
        slowdown=adv.effect.slowdown,
        workaround=list(adv.workaround),
        references=list(adv.references),
    )


def _fix(item: LoadedAdvisory) -> list[str]:
    adv = item.advisory
    label = ENGINE_LABELS.get(adv.engine, adv.engine)
    upgrade = [f"upgrade to {label} {adv.fixed_in} or later (the first release with the fix)"] if adv.fixed_in else []
    return [*upgrade, *adv.workaround]


def match_advisories(
    advisories: Sequence[LoadedAdvisory],
    profile: Profile,
    suppressions: Suppressions | None = None,
) -> tuple[list[Finding], list[KnownIssue]]:
    """The findings of the advisories that apply to this deployment, and every known issue that applies or may.

    An advisory is considered when the deployment runs its engine, or when a version of it is known (an NCCL
    version line in a vLLM log, an environment dump)."""
    findings: list[Finding] = []
    issues: list[KnownIssue] = []
    for item in advisories:
        adv = item.advisory
        label = ENGINE_LABELS.get(adv.engine, adv.engine)
        written, where = installed_version(adv.engine, profile)
        if written is None and profile.engine != adv.engine:
            continue
        version = parse_version(written) if written else None
        verdict = item.when.eval(profile) if item.when is not None else True
        if verdict is False:
            continue
        if version is None:
            seen = f"only dated to {written}" if written else "not in the log"
            issues.append(
                _issue(item, "may-apply", written, f"{label} version {seen}: applies to {item.affected_text}")
            )
            continue
        if not item.affects(version):
            continue
        if verdict is None:
            assert item.when is not None
            absent = sorted(n for n in item.when.facts() if not profile.has(n))
            need = ", ".join(absent) if absent else "values unknown"
            issues.append(_issue(item, "may-apply", written, f"{label} {written} is affected; could not check {need}"))
            continue
        fixed = f", fixed in {adv.fixed_in}" if adv.fixed_in else ", not fixed in any release yet"
        issue = _issue(item, "applies", written, f"{label} {written} ({where}) is in {item.affected_text}")
        issues.append(issue)
        if suppressions is not None and suppressions.match(adv.id, adv.cause) is not None:
            continue
        score = score_for(adv.effect.slowdown)
        findings.append(
            Finding(
                cause=adv.cause,
                rule=adv.id,
                title=f"Known issue in {label} {written}: {adv.title}",
                score=score,
                severity=severity_for(score),
                explanation=f"known issue in {label} {written} (affected {item.affected_text}{fixed}): "
                f"{adv.effect.statement}",
                working=_working(adv.effect.slowdown, score),
                fix=_fix(item),
                references=list(adv.references),
                status="stable",
                kind="advisory",
            )
        )
    return findings, issues


def sample_profile(facts: Mapping[str, Any], engine: str, version: str) -> Profile:
    """A profile holding only the given facts, run by `engine` at `version` (an advisory's tests)."""
    made = {name: Fact(value=value, refs=[], origin="advisory test") for name, value in facts.items()}
    return Profile(facts=made, engine=engine, version=version)


def run_tests(item: LoadedAdvisory) -> list[str]:
    """Each test of the advisory that does not come out as it says, as a one-line problem."""
    problems: list[str] = []
    adv = item.advisory
    for index, test in enumerate(adv.tests):
        profile = sample_profile(test.facts, adv.engine, test.version)
        findings, _ = match_advisories([item], profile)
        if bool(findings) != test.matches:
            said = "match" if test.matches else "not match"
            problems.append(f"{item.path}: tests[{index}] (version {test.version}) should {said}")
    return problems


def advisories_for(
    advisories: Sequence[LoadedAdvisory], engine: str | None = None, version: str | None = None
) -> list[tuple[LoadedAdvisory, bool | None]]:
    """`logdoctor advisories`: each advisory of the engine (all engines without one), with whether it affects the
    version (None: no version given, or one that is not a PEP 440 version)."""
    parsed = parse_version(version) if version else None
    out: list[tuple[LoadedAdvisory, bool | None]] = []
    for item in advisories:
        if engine is not None and item.advisory.engine != engine:
            continue
        affects = item.affects(parsed) if parsed is not None else None
        if affects is False:
            continue
        out.append((item, affects))
    return out


def schema_json() -> str:
    """docs/schema/advisory.schema.json: the JSON Schema of an advisory file (`make schema`)."""
    import json

    schema = advisory_model().model_json_schema()
    # id and engine come from the path (<engine>/<id>.yaml): a file may leave them out
    schema["required"] = [name for name in schema.get("required", []) if name not in ("id", "engine")]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(schema_json(), end="")
