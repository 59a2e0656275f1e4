"""Rule files: schema, loading, validation. One YAML file a rule; every error carries file:line:column.

A rule's identity is its path: `rules/<cause>/<id>.yaml`. The id is the file's stem and the cause the
folder that holds it; `id:` and `cause:` may be written in the file, and must then agree with the path
(a file directly in a `--rules DIR` has no cause folder and must say `cause:`):

    # rules/cuda-graphs-disabled/vllm-eager-decode.yaml
    id: vllm-eager-decode                 # optional: the file's stem
    cause: cuda-graphs-disabled           # optional: the folder's name
    title: Decode runs eagerly (no CUDA graphs)
    engines: [vllm, sglang]
    requires: [cuda_graphs.enabled]
    when: "not cuda_graphs.enabled"
    impact: 90
    explain: "CUDA graphs are off ({cuda_graphs.mode}) ..."
    fix: {vllm: ["remove --enforce-eager"], sglang: ["remove --disable-cuda-graph"]}

A `mode: diff` rule compares with a baseline deployment (`logdoctor diff`): its facts may be
`baseline.<fact>` (`mean(baseline.spec.acceptance_length)`), and `logdoctor diagnose` never runs it.

All errors of a rule set are collected in one pass (pySigma style) and raised together.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Self

from logdoctor.engine.conditions import ConditionError, Node, parse_condition, parse_expression, reads_baseline
from logdoctor.engine.loading import load_builtin_set, load_yaml_files, node_classes
from logdoctor.errors import RuleError
from logdoctor.facts import BASELINE_PREFIX, FACTS
from logdoctor.records import Record, field
from logdoctor.registry import REGISTRY
from logdoctor.userfile import MAX_RULE_FILE_BYTES, UserFileError, YamlDataCache, read_user_file

if TYPE_CHECKING:
    import yaml
    from pydantic import BaseModel

# The rule files' parsed YAML, kept for the next start (logdoctor/userfile.py; docs/cli.md, *Start-up cache*).
RULE_YAML = YamlDataCache("rule-files")

# The causes (docs/causes.md): each is a folder of rules/, and a rule's cause is the folder it sits in.
CAUSES: tuple[str, ...] = (
    "cuda-graphs-disabled",
    "custom-allreduce-disabled",
    "nccl-no-p2p",
    "tp-over-slow-link",
    "spec-low-acceptance",
    "spec-net-loss",
    "attention-backend-fallback",
    "kv-cache-pressure",
    "mamba-hybrid-issue",
    "torch-compile-or-warmup",
    "quantization-kernel-fallback",
    "cpu-offload-or-swap",
    "chunked-prefill-or-batching-config",
    "no-gpu-backend",
    "engine-failure",
    "gpu-throttled",
    "pcie-link-degraded",
    "gpu-hardware-errors",
    "gpu-shared",
)


def rule_engines() -> tuple[str, ...]:
    """The engines a rule may name (`engines:`, `fix:`, a sample's `engine:`): every registered engine
    that writes logs (serving engines and NCCL), not the input kinds (benchmark results, host facts)."""
    return tuple(name for name in REGISTRY.names() if REGISTRY.kind(name) != "input")


def known_engine(name: str) -> str:
    """The name, when it is a registered engine a rule may name; ValueError (with a close match) otherwise."""
    names = rule_engines()
    if name not in names:
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise ValueError(f"unknown engine '{name}'{hint}; known engines: {', '.join(names)}")
    return name


def _known_fact(name: str) -> str:
    bare = name.removeprefix(BASELINE_PREFIX)
    if bare not in FACTS:
        close = difflib.get_close_matches(bare, sorted(FACTS), n=1)
        hint = f" (did you mean '{name[: len(name) - len(bare)]}{close[0]}'?)" if close else ""
        raise ValueError(f"unknown fact '{name}'{hint}")
    return name


_PLACEHOLDER_RE = re.compile(r"\{([^{}]+)\}")
# In fix texts a placeholder starts with a name, a number (`{2 * sched.max_num_seqs}`) or a parenthesis, so JSON
# such as '{"method": "mtp"}' stays literal.
_FIX_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z0-9(][^{}\"']*)\}")
_FORMAT_SPEC_RE = re.compile(r"^(.*?)(?::([<>^]?[+-]?\d*(?:\.\d+)?[fdg%]?))?$", re.S)
_FORMAT_NUMBERS_RE = re.compile(r"(\d*)(?:\.(\d+))?")
# an expression, then `:` and something other than a format spec (`{x:.1zz}`): the spec is what is wrong
_BAD_FORMAT_SPEC_RE = re.compile(r"^(.*[\w)\]\s]):([^:()\[\]'\"]*)$", re.S)
MAX_FORMAT_WIDTH = 64  # `{x:9999999999.2f}` would build a 10 GB string
MAX_FORMAT_PRECISION = 12
MAX_TEMPLATE_PLACEHOLDERS = 64


class ScoreCurve(Record):
    """Evidence strength from one metric: 0.25 at `info`, 0.75 at `warn`, a smooth S-curve around them.

    `info > warn` means lower is worse (acceptance length); `info < warn` means higher is worse (KV usage)."""

    metric: str
    info: float
    warn: float  # differs from info


class Sample(Record):
    """Lines that must make the rule fire (or not, with `fires: false`).

    A diff-mode rule's sample is a pair: `baseline` holds the lines of the faster deployment, `text`
    the candidate's; `baseline_engine` / `engine` force either side's engine."""

    text: str
    fires: bool = True
    engine: str | None = None  # a registered engine (rule_engines), like baseline_engine
    baseline: str | None = None
    baseline_engine: str | None = None


class FixItem(Record):
    """A fix offered only when its condition holds: `{text: "drop --disable-custom-all-reduce", when: "..."}`."""

    text: str
    when: str


class Fix(Record):
    """What to change, per engine: `fix: {vllm: [...], sglang: [...]}`, keyed by registered engine names; an item
    is a text (a template over facts) or `{text, when}`, offered only when its condition holds."""

    _root: ClassVar[bool] = True
    root: dict[str, list[str | FixItem]] = field(default_factory=dict)

    @classmethod
    def model_validate(cls, data: Mapping[str, Any]) -> Self:
        return cls(root=dict(data))

    def for_engine(self, engine: str) -> list[str | FixItem]:
        """The engine's own fixes; for a log whose engine is unknown, every engine's, in registry order."""
        value = self.root.get(engine)
        if value:
            return list(value)
        names = rule_engines()
        return [] if engine in names else [line for name in names for line in self.root.get(name, [])]


# The effect functions a rule may name (logdoctor/perf/fixes.py maps each to its formula).
EffectName = Literal["custom-allreduce", "p2p", "cuda-graphs", "spec-k", "kv-concurrency", "cpu-offload"]
RuleStatus = Literal["stable", "test", "experimental", "deprecated"]
RuleMode = Literal["diagnose", "diff", "warned"]
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class Rule(Record):
    """A validated rule file. What the annotations do not say (the id's pattern, known causes, engines and facts,
    impact 1-100, a score curve's info != warn) `_fits` checks, and the pydantic model `rule_model` words the
    errors of a file that does not fit."""

    id: str
    cause: str
    title: str
    engines: list[str]
    status: RuleStatus = "test"
    # diff: reads baseline.* facts, run only by `logdoctor diff`; warned: reads an engine warning (`warned.*`, the
    # warning vocabulary) and is left out, not "could not check", where the log has no such warning
    mode: RuleMode = "diagnose"
    requires: list[str] = field(default_factory=list)
    when: str
    ruled_out_when: str | None = None
    impact: int
    score: ScoreCurve | None = None
    explain: str
    estimate: str | None = None
    fix: Fix = field(default_factory=Fix)
    evidence: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    description: str | None = None
    # The expected-performance model's effect function for this rule's fix (logdoctor/perf/effects.py,
    # docs/expected-performance.md): the finding then carries its speedup and ranks by tok/s recovered.
    effect: EffectName | None = None


def _fits(rule: Rule) -> bool:
    """Whether the rule meets every check of `rule_model` beyond the field types (then pydantic need not run)."""
    engines = set(rule_engines())
    named = [*rule.engines, *rule.fix.root]
    named += [e for sample in rule.samples for e in (sample.engine, sample.baseline_engine) if e is not None]
    return (
        _ID_RE.match(rule.id) is not None
        and rule.cause in CAUSES
        and all(name in engines for name in named)
        and all(name.removeprefix(BASELINE_PREFIX) in FACTS for name in (*rule.requires, *rule.evidence))
        and 1 <= rule.impact <= 100
        and (rule.score is None or rule.score.info != rule.score.warn)
    )


def validate_rule(data: dict[str, Any]) -> Rule:
    """A rule file's data as a Rule; pydantic.ValidationError (with every problem) when it does not fit.

    Data that fits the records as they are is not shown to pydantic (a diagnosis loads the 40 built-in rules each
    start, and importing and building pydantic cost more than the rest of the loading); anything else is, so its
    errors are pydantic's, and a value it converts is converted as it does."""
    try:
        rule = Rule(**data)
        if _fits(rule):
            return rule
    except (ValueError, TypeError):
        pass
    checked = rule_model().model_validate(data)
    return Rule(**checked.model_dump())


@cache
def rule_model() -> type[BaseModel]:
    """The pydantic model of a rule file: the error messages of a file that does not fit (tests/engine/test_rules.py
    checks it has the Rule record's fields, types and defaults)."""
    from pydantic import AfterValidator, BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

    EngineName = Annotated[str, AfterValidator(known_engine)]
    FactName = Annotated[str, AfterValidator(_known_fact)]

    class ScoreCurveModel(BaseModel):
        """Evidence strength from one metric: 0.25 at `info`, 0.75 at `warn`, a smooth S-curve around them.

        `info > warn` means lower is worse (acceptance length); `info < warn` means higher is worse (KV usage)."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        metric: str
        info: float
        warn: float

        @model_validator(mode="after")
        def _distinct(self) -> ScoreCurveModel:
            if self.info == self.warn:
                raise ValueError("info and warn must differ")
            return self

    class SampleModel(BaseModel):
        """Lines that must make the rule fire (or not, with `fires: false`).

        A diff-mode rule's sample is a pair: `baseline` holds the lines of the faster deployment, `text`
        the candidate's; `baseline_engine` / `engine` force either side's engine."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        text: str
        fires: bool = True
        engine: EngineName | None = None
        baseline: str | None = None
        baseline_engine: EngineName | None = None

    class FixItemModel(BaseModel):
        """A fix offered only when its condition holds: `{text: "drop --disable-custom-all-reduce", when: "..."}`."""

        model_config = ConfigDict(frozen=True, extra="forbid")

        text: str
        when: str

    class FixModel(RootModel[dict[EngineName, list[str | FixItemModel]]]):
        """What to change, per engine: `fix: {vllm: [...], sglang: [...]}`, keyed by registered engine names; an item
        is a text (a template over facts) or `{text, when}`, offered only when its condition holds."""

        model_config = ConfigDict(frozen=True)

        root: dict[EngineName, list[str | FixItemModel]] = Field(default_factory=dict)

    class RuleModel(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")

        id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
        cause: str
        title: str
        engines: list[EngineName]
        status: Literal["stable", "test", "experimental", "deprecated"] = "test"
        mode: RuleMode = "diagnose"  # diff: run only by `logdoctor diff`; warned: left out without its warning
        requires: list[FactName] = Field(default_factory=list)
        when: str
        ruled_out_when: str | None = None
        impact: int = Field(ge=1, le=100)
        score: ScoreCurveModel | None = None
        explain: str
        estimate: str | None = None
        fix: FixModel = Field(default_factory=FixModel)
        evidence: list[FactName] = Field(default_factory=list)
        references: list[str] = Field(default_factory=list)
        samples: list[SampleModel] = Field(default_factory=list)
        tags: list[str] = Field(default_factory=list)
        description: str | None = None
        # The expected-performance model's effect function for this rule's fix (logdoctor/perf/effects.py,
        # docs/expected-performance.md): the finding then carries its speedup and ranks by tok/s recovered.
        effect: EffectName | None = None

        @field_validator("cause")
        @classmethod
        def _known_cause(cls, value: str) -> str:
            if value not in CAUSES:
                raise ValueError(f"unknown cause '{value}' (see docs/causes.md: {', '.join(CAUSES)})")
            return value

    return RuleModel


class LoadedRule:
    """A validated rule with its conditions compiled, and where it came from. (A plain class: a dataclass costs
    about 4 M instructions to create, docs/benchmarks.md.)"""

    __slots__ = ("builtin", "metric", "path", "rule", "ruled_out_when", "templates", "when")

    def __init__(
        self,
        rule: Rule,
        path: str,
        when: Node,
        ruled_out_when: Node | None,
        metric: Node | None,
        templates: dict[str, list[tuple[str, Node | None, str]]],
        builtin: bool = False,
    ) -> None:
        self.rule = rule
        self.path = path
        self.when = when
        self.ruled_out_when = ruled_out_when
        self.metric = metric
        self.templates = templates
        self.builtin = builtin

    def __repr__(self) -> str:
        return f"LoadedRule({self.rule.id!r}, path={self.path!r}, builtin={self.builtin})"

    @property
    def id(self) -> str:
        return self.rule.id

    def facts(self) -> set[str]:
        names = set(self.when.facts())
        if self.ruled_out_when is not None:
            names |= self.ruled_out_when.facts()
        return names

    @property
    def is_diff(self) -> bool:
        return self.rule.mode == "diff"


# What a snapshot of the built-in rules may hold (logdoctor/cache.py, `Snapshot`).
SNAPSHOT_CLASSES = (LoadedRule, Rule, ScoreCurve, Sample, FixItem, Fix, *node_classes())


def locate(node: yaml.Node | None, loc: Sequence[str | int], *, key: bool = False) -> tuple[int, int]:
    """Line and column (1-based) of a path inside a composed YAML document; the deepest part found.

    With `key=True` and a path ending in a mapping key, the key's position (for "unknown key" errors).
    Shared by every YAML file logdoctor validates (rules, expectation files)."""
    if node is None:
        return 1, 1
    import yaml

    current: yaml.Node = node
    for index, part in enumerate(loc):
        if isinstance(current, yaml.MappingNode):
            for key_node, value in current.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == part:
                    current = key_node if key and index == len(loc) - 1 else value
                    break
            else:
                break
        elif isinstance(current, yaml.SequenceNode) and isinstance(part, int) and part < len(current.value):
            current = current.value[part]
        else:
            break
    return current.start_mark.line + 1, current.start_mark.column + 1


def _value_column(node: yaml.Node | None, key: str) -> tuple[int, int, bool]:
    """Line/column of a scalar value, and whether it is a plain/quoted single-line scalar (columns map 1:1)."""
    if node is None:
        return 1, 1, False
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return 1, 1, False
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            single = (
                isinstance(v, yaml.ScalarNode)
                and v.style in (None, "", "'", '"')
                and v.start_mark.line == v.end_mark.line
            )
            offset = 1 if isinstance(v, yaml.ScalarNode) and v.style in ("'", '"') else 0
            return v.start_mark.line + 1, v.start_mark.column + 1 + offset, single
    return 1, 1, False


def _compile_template(text: str, placeholder: re.Pattern[str] = _PLACEHOLDER_RE) -> list[tuple[str, Node | None, str]]:
    """Split `mean length {mean(spec.acceptance_length):.2f}` into literal text and parsed expressions."""
    parts: list[tuple[str, Node | None, str]] = []
    pos = 0
    for count, m in enumerate(placeholder.finditer(text), start=1):
        if count > MAX_TEMPLATE_PLACEHOLDERS:
            raise ConditionError(f"more than {MAX_TEMPLATE_PLACEHOLDERS} placeholders", m.start() + 1)
        parts.append((text[pos : m.start()], None, ""))
        inner = _FORMAT_SPEC_RE.match(m.group(1))
        assert inner is not None
        expr, spec = inner.group(1), inner.group(2) or ""
        _check_format(spec, m.start() + 1)
        bad_spec = _BAD_FORMAT_SPEC_RE.match(m.group(1)) if inner.group(2) is None else None
        if bad_spec is not None:
            raise ConditionError(
                f"format spec ':{bad_spec.group(2)}' is not one of [<>^][+-][width][.precision][f|d|g|%] "
                "(such as :.2f, :.0f, :d, :.1%)",
                m.start() + 2 + len(bad_spec.group(1)),
            )
        try:
            node = parse_expression(expr.strip())
        except ConditionError as exc:  # the column within the template, not within the placeholder
            raise ConditionError(str(exc), m.start() + 1 + len(expr) - len(expr.lstrip()) + exc.column) from None
        parts.append(("", node, spec))
        pos = m.end()
    parts.append((text[pos:], None, ""))
    return parts


def _identity(path: Path, root: Path, data: dict[str, Any], tree: yaml.Node | None, errors: list[str]) -> bool:
    """Fill `id` (the file's stem) and `cause` (the folder holding the file) from the path into `data`.

    Written `id:`/`cause:` must agree with the path; a file directly in the rule directory has no cause
    folder and must write `cause:`. False, with the errors added, when the file disagrees with its path."""
    display = str(path)
    problems: list[tuple[str, str]] = []
    stem = path.name.removesuffix(".yaml")
    written_id = data.setdefault("id", stem)
    if isinstance(written_id, str) and written_id != stem:
        problems.append(
            ("id", f"'{written_id}' differs from the file name {path.name}: a rule's id is its file's stem")
        )
    folder = path.parent.name if path.parent != root else None
    written_cause = data.get("cause")
    if folder is None:
        if written_cause is None:
            problems.append(("rule", "no cause folder: write `cause:`, or move the file to <rules>/<cause>/"))
    elif folder not in CAUSES:
        problems.append(("rule", f"the folder '{folder}' is not a cause (a rule sits in <rules>/<cause>/{path.name})"))
    elif written_cause is None:
        data["cause"] = folder
    elif isinstance(written_cause, str) and written_cause != folder:
        problems.append(
            ("cause", f"'{written_cause}' differs from the folder {folder}/: a rule's cause is the folder it sits in")
        )
    for key, message in problems:
        line, col = locate(tree, [key] if key in data else [])
        errors.append(f"{display}:{line}:{col}: {key}: {message}")
    return not problems


def _keys_at(loc: Sequence[Any]) -> set[str]:
    """The keys the rule schema allows in the mapping at `loc` (the mapping holding an unknown key)."""
    schema = rule_model().model_json_schema()
    defs = schema.get("$defs", {})

    def resolve(node: dict[str, Any]) -> list[dict[str, Any]]:
        if "$ref" in node:
            return resolve(defs.get(node["$ref"].rsplit("/", 1)[-1], {}))
        options = node.get("anyOf", []) + node.get("oneOf", []) + node.get("allOf", [])
        return [n for option in options for n in resolve(option)] if options else [node]

    nodes = resolve(schema)
    for part in loc:
        following: list[dict[str, Any]] = []
        for node in nodes:
            if isinstance(part, int):
                if isinstance(node.get("items"), dict):
                    following += resolve(node["items"])
            elif part in node.get("properties", {}):
                following += resolve(node["properties"][part])
            elif isinstance(node.get("additionalProperties"), dict):
                following += resolve(node["additionalProperties"])
        nodes = following
    return {key for node in nodes for key in node.get("properties", {})}


def _close_key(loc: Sequence[Any]) -> tuple[Any, ...] | None:
    """The allowed key closest to the unknown one at `loc` (its path), if one is close."""
    import difflib

    if not loc or not isinstance(loc[-1], str):
        return None
    close = difflib.get_close_matches(loc[-1], sorted(_keys_at(loc[:-1])), n=1, cutoff=0.6)
    return (*loc[:-1], close[0]) if close else None


def _meant_keys(found: Sequence[Any]) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Unknown keys that are a misspelling of a required key the file lacks: {unknown key's path: the key's}."""
    import difflib

    missing = {tuple(err["loc"]) for err in found if err["type"] == "missing"}
    meant: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for err in found:
        loc = tuple(err["loc"])
        if err["type"] != "extra_forbidden" or not loc or not isinstance(loc[-1], str):
            continue
        candidates = sorted(m[-1] for m in missing if m[:-1] == loc[:-1] and isinstance(m[-1], str))
        close = difflib.get_close_matches(loc[-1], candidates, n=1, cutoff=0.6)
        if close:
            meant[loc] = (*loc[:-1], close[0])
    return meant


def _check_format(spec: str, column: int) -> None:
    """Bounded widths and precisions: a template cannot make logdoctor build a huge string."""
    numbers = _FORMAT_NUMBERS_RE.search(spec.lstrip("<>^+-"))
    if numbers is None:
        return
    width, precision = numbers.group(1), numbers.group(2)
    if width and (len(width) > 3 or int(width) > MAX_FORMAT_WIDTH):
        raise ConditionError(f"format width {width[:20]} is over {MAX_FORMAT_WIDTH}", column)
    if precision and (len(precision) > 3 or int(precision) > MAX_FORMAT_PRECISION):
        raise ConditionError(f"format precision {precision[:20]} is over {MAX_FORMAT_PRECISION}", column)


def _load_file(path: Path, root: Path, builtin: bool, errors: list[str]) -> LoadedRule | None:
    display = str(path)
    try:
        text = read_user_file(path, directory=root, max_bytes=MAX_RULE_FILE_BYTES)
        data, tree = RULE_YAML.load(display, text)  # no tree: from the cache, loaded cleanly before
    except UserFileError as exc:
        errors.append(f"{display}:{exc.line}:{exc.column}: {exc}")
        return None
    if not isinstance(data, dict):
        errors.append(f"{display}:1:1: a rule file must be a mapping")
        return None
    identified = _identity(path, root, data, tree, errors)
    mode_written = "mode" in data
    try:
        rule = validate_rule(data)
    except ValueError as exc:  # pydantic's ValidationError: the one kind validate_rule lets out
        if not hasattr(exc, "errors"):
            raise
        found = exc.errors()
        meant = _meant_keys(found)
        for err in found:
            if not identified and err["type"] == "missing" and err["loc"] == ("cause",):
                continue  # said already: the path gives no cause
            if err["type"] == "missing" and tuple(err["loc"]) in meant.values():
                continue  # a misspelt key says it (`impactt: unknown key (did you mean 'impact'?)`)
            where_path = [str(x) if not isinstance(x, int) else x for x in err["loc"]]
            at_key = err["type"] == "extra_forbidden" or where_path[-1:] == ["[key]"]
            if where_path[-1:] == ["[key]"]:
                where_path = where_path[:-1]
            line, col = locate(tree, where_path, key=at_key)
            where = ".".join(str(x) for x in where_path) or "rule"
            message = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                close = meant.get(tuple(err["loc"])) or _close_key(err["loc"])
                message = "unknown key " + (
                    f"(did you mean '{close[-1]}'?)" if close else "(docs/rules.md lists the keys)"
                )
            errors.append(f"{display}:{line}:{col}: {where}: {message}")
        return None
    compiled: dict[str, Node | None] = {}
    failed = False
    for key in ("when", "ruled_out_when"):
        source = getattr(rule, key)
        if source is None:
            compiled[key] = None
            continue
        try:
            compiled[key] = parse_condition(source)
        except ConditionError as exc:
            line, col, single = _value_column(tree, key)
            errors.append(f"{display}:{line}:{col + exc.column - 1 if single else col}: {key}: {exc}")
            failed = True
    metric: Node | None = None
    if rule.score is not None:
        try:
            metric = parse_expression(rule.score.metric)
        except ConditionError as exc:
            line, col = locate(tree, ["score", "metric"])
            errors.append(f"{display}:{line}:{col}: score.metric: {exc}")
            failed = True
    templates: dict[str, list[tuple[str, Node | None, str]]] = {}
    for key in ("explain", "estimate"):
        source = getattr(rule, key)
        if source is None:
            continue
        try:
            templates[key] = _compile_template(source)
        except ConditionError as exc:
            line, col, single = _value_column(tree, key)
            errors.append(f"{display}:{line}:{col + exc.column - 1 if single else col}: {key}: {exc}")
            failed = True
    for engine, fixes in rule.fix.root.items():  # fix texts are templates too: `--cuda-graph-max-bs {max(...)}`
        for index, fix in enumerate(fixes):
            text, cond = (fix.text, fix.when) if isinstance(fix, FixItem) else (fix, None)
            try:
                templates[f"fix:{engine}:{index}"] = _compile_template(text, _FIX_PLACEHOLDER_RE)
                if cond is not None:
                    templates[f"fix-when:{engine}:{index}"] = [("", parse_condition(cond), "")]
            except ConditionError as exc:
                line, col = locate(tree, ["fix", engine, index])
                errors.append(f"{display}:{line}:{col}: fix: {exc}")
                failed = True
    if failed or not identified:
        return None
    when = compiled["when"]
    assert when is not None
    parts = [when, compiled["ruled_out_when"], metric, templates]
    if not _mode_fits(rule, mode_written, tree, display, parts, errors):
        return None
    return LoadedRule(rule, display, when, compiled["ruled_out_when"], metric, templates, builtin)


def _mode_fits(
    rule: Rule, mode_written: bool, tree: yaml.Node | None, display: str, parts: list[Any], errors: list[str]
) -> bool:
    """`baseline.` facts only in `mode: diff` rules, which must read at least one, and whose samples are pairs."""
    nodes: list[Node] = []
    for part in parts:
        if isinstance(part, Node):
            nodes.append(part)
        elif isinstance(part, dict):
            nodes.extend(node for pieces in part.values() for _, node, _ in pieces if node is not None)
    named = [*rule.requires, *rule.evidence]
    uses = any(reads_baseline(node) for node in nodes) or any(n.startswith(BASELINE_PREFIX) for n in named)
    problems: list[tuple[list[str | int], str]] = []
    if uses and rule.mode != "diff":
        problems.append(
            (
                ["mode"] if mode_written else ["when"],
                "reads baseline.* facts: add `mode: diff` (only `logdoctor diff` has a baseline)",
            )
        )
    if rule.mode == "diff" and not uses:
        problems.append((["mode"], "a `mode: diff` rule compares with the baseline: read at least one baseline.* fact"))
    for index, sample in enumerate(rule.samples):
        if rule.mode == "diff" and sample.baseline is None:
            problems.append(
                (["samples", index], "a diff-mode sample needs `baseline:` (the faster deployment's lines)")
            )
        elif rule.mode != "diff" and (sample.baseline is not None or sample.baseline_engine is not None):
            problems.append((["samples", index], "`baseline:` only applies to samples of `mode: diff` rules"))
    for loc, message in problems:
        line, col = locate(tree, loc)
        errors.append(f"{display}:{line}:{col}: {'.'.join(str(x) for x in loc)}: {message}")
    return not problems


def builtin_rules_dir() -> Path:
    return Path(str(resources.files("logdoctor._rules")))


def rule_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.yaml") if p.is_file())


def load_rules(directories: Iterable[Path] = (), *, builtin: bool = True) -> list[LoadedRule]:
    """Load the built-in rules (unless disabled) and every `*.yaml` under the given directories.

    Raises RuleError listing every problem (file:line:col) when any file is invalid, disagrees with its
    path (`<cause>/<id>.yaml`), or ids collide (a pack's rule with a built-in one included)."""
    errors: list[str] = []
    loaded = (
        load_builtin_set(
            "rule", builtin_rules_dir(), rule_files, _load_file, RULE_YAML, LoadedRule, SNAPSHOT_CLASSES, errors
        )
        if builtin
        else []
    )
    directories = list(directories)
    if directories:
        loaded += load_yaml_files(None, directories, "rule", rule_files, _load_file, RULE_YAML, errors)
    seen: dict[str, str] = {}
    for item in loaded:
        if item.id in seen:
            errors.append(f"{item.path}:1:1: duplicate rule id '{item.id}' (also in {seen[item.id]})")
        elif item.builtin:
            seen[item.id] = f"the built-in set: {item.path}"
        else:
            seen[item.id] = item.path
    if errors:
        raise RuleError(f"{len(errors)} problem(s) in rule files:\n  " + "\n  ".join(errors))
    return loaded


def rule_as_dict(item: LoadedRule) -> dict[str, Any]:
    return item.rule.model_dump(mode="json", exclude_none=True)
