"""Run rules against a profile: outcome, score, explanation, evidence, ranking.

Score (0-100) = impact x evidence strength. Strength comes from the rule's score curve: a smooth
S-curve through 0.25 at `info` and 0.75 at `warn` (JMC-style), so a value twice as far past `warn`
scores higher, and the working is shown next to every finding:

    impact 90 x strength 0.96 (mean(spec.acceptance_length) = 1.08; info 2.5, warn 1.3) = 86
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from logdoctor.engine.conditions import MISSING, Node
from logdoctor.engine.conditiontree import FactRef
from logdoctor.engine.deadline import Deadline
from logdoctor.engine.problems import FAMILIES, problem_id
from logdoctor.engine.result import (
    SEVERITY_ORDER,
    Evidence,
    Finding,
    RuleOutcome,
    Verdict,
    severity_for,
)
from logdoctor.engine.rules import LoadedRule, ScoreCurve, rule_engines
from logdoctor.engine.spans import merge_spans, value_spans
from logdoctor.engine.suppress import Suppressions
from logdoctor.facts import BASELINE_PREFIX, Profile, fact_spec
from logdoctor.facts.values import Ref

TextLookup = Callable[[str, int], str | None]
MAX_EVIDENCE = 6
HEALTHY_BELOW = 50
# A finding whose condition reads the stats lines through a single one of them: one line is one 10-second average
# (vLLM) or one logged batch (SGLang) and cannot tell a burst from the steady state, so it counts as the weaker
# evidence an unknown score metric does (0.75 below; docs/rules.md, "Thresholds and their sources").
SINGLE_SAMPLE_STRENGTH = 0.75


def strength(value: float, curve: ScoreCurve) -> float:
    """0.25 at curve.info, 0.75 at curve.warn; monotone, bounded in (0, 1)."""
    t = (value - curve.info) / (curve.warn - curve.info)
    t = max(min(t, 20.0), -20.0)
    return 1.0 / (1.0 + math.pow(3.0, -(2.0 * t - 1.0)))


def _fixes(item: LoadedRule, profile: Profile) -> list[str]:
    """The rule's fixes for this engine, rendered with the deployment's values; a `when` fix only when it holds.
    For a log whose engine is unknown, every engine's fixes, in registry order."""
    known = rule_engines()
    engines = [profile.engine] if profile.engine in known else list(known)
    out: list[str] = []
    for engine in engines:
        for index in range(len(item.rule.fix.root.get(engine, []))):
            cond = item.templates.get(f"fix-when:{engine}:{index}")
            if cond is None or cond[0][1] is None or cond[0][1].eval(profile) is True:
                out.append(render_template(item.templates[f"fix:{engine}:{index}"], profile))
    return out


UNKNOWN = "unknown (not in the log)"
# A unit written after a placeholder (`{compile.seconds} s`) is dropped when the value is unknown.
_UNIT_RE = re.compile(r"^ ?(?:s|ms|%|x|GiB|GB|MiB|MB|tok/s|tokens/s|tokens)(?![\w/])")


def render_template(parts: Sequence[tuple[str, Node | None, str]], profile: Profile) -> str:
    out: list[str] = []
    unknown_before = False
    for index, (text, node, spec) in enumerate(parts):
        out.append(_UNIT_RE.sub("", text, count=1) if unknown_before else text)
        unknown_before = False
        if node is None:
            continue
        value = node.eval(profile)
        shown = _format(value, spec)
        unknown_before = value is MISSING or value is None
        following = parts[index + 1][0] if index + 1 < len(parts) else ""
        if unknown_before and following.startswith(")") and next((o for o in reversed(out) if o), "").endswith("("):
            # a placeholder alone in parentheses: `(method unknown)`, not `(unknown (not in the log))`
            named = node.name.rsplit(".", 1)[-1].replace("_", " ") + " " if isinstance(node, FactRef) else ""
            shown = f"{named}unknown"
        out.append(shown)
    return "".join(out)


def _format(value: Any, spec: str) -> str:
    if value is MISSING or value is None:
        return UNKNOWN
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and not spec:
        return f"{value:.0f}" if value.is_integer() else f"{value:.3g}"
    if isinstance(value, list):
        return ", ".join(_format(v, spec) for v in value[:16]) + (" ..." if len(value) > 16 else "")
    try:
        return format(value, spec)
    except (ValueError, TypeError):
        return str(value)


def _evidence(item: LoadedRule, profile: Profile, lookup: TextLookup) -> list[Evidence]:
    names = item.rule.evidence or sorted(item.facts(), key=lambda n: (n not in item.rule.requires, n))
    lines: dict[tuple[str, int], tuple[Ref, list[str]]] = {}  # each line once, with the facts it supports
    for name in names:
        fact = profile.facts.get(name)
        if fact is None:
            continue
        for ref in fact.refs:
            key = (ref.source, ref.line)
            if key not in lines:
                if len(lines) >= MAX_EVIDENCE:
                    continue
                lines[key] = (ref, [])
            lines[key][1].append(name)
    out: list[Evidence] = []
    for ref, supported in lines.values():
        text = lookup(ref.source, ref.line)
        if text is None:
            continue
        spans = merge_spans([s for n in supported for s in value_spans(text, n, profile.facts[n].value)])
        out.append(Evidence(source=ref.source, line=ref.line, end_line=ref.end_line, text=text, spans=spans))
    return out


# Where a fact declares no hint of its own: the lines that carry facts of its family, and the flag or command that
# prints them (an engine's stats lines are on by default; NCCL's channel lines need NCCL_DEBUG=INFO).
_FAMILY_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("sched.", "kv.", "throughput.", "stall."),
        "the periodic stats lines under load: vLLM prints them every 10 s unless started with --disable-log-stats "
        "(and `--enable-log-stats` on engines that default it off); SGLang prints `Decode batch` lines at "
        "--log-level info, and its Prometheus metrics with --enable-metrics",
    ),
    (
        ("spec.",),
        "vLLM prints `SpecDecoding metrics` with the stats lines (not with --disable-log-stats); SGLang prints "
        "`accept len` on Decode batch lines",
    ),
    (
        ("nccl.", "comm."),
        "run with NCCL_DEBUG=INFO and keep the NCCL init lines (`Channel 00/0 : 0[0] -> 1[1] via ...`)",
    ),
    (("topology.",), "`nvidia-smi topo -m` beside the log (logdoctor diagnose HOST collects it)"),
    (("gpu.",), "`nvidia-smi -q` beside the log (logdoctor diagnose HOST collects it)"),
    (("env.", "host."), "`vllm collect-env` (or `python -m sglang.check_env`) output beside the log"),
    (
        ("failure.", "disagg.", "startup."),
        "the whole server log around the event, every worker's lines included (not a filtered excerpt)",
    ),
    (
        (
            "quant.",
            "attention.",
            "cuda_graphs.",
            "allreduce.",
            "parallel.",
            "model.",
            "hybrid.",
            "compile.",
            "offload.",
        ),
        "the start-up block of the log (vLLM `non-default args` / engine-init line, SGLang `server_args=`)",
    ),
)


def how_to_get(name: str) -> str:
    """The flag, command or lines that give a fact: its own hint, else its family's."""
    bare = name.removeprefix(BASELINE_PREFIX)
    spec = fact_spec(bare)
    hint = spec.hint if spec is not None else ""
    if not hint:
        hint = next((h for prefixes, h in _FAMILY_HINTS if bare.startswith(prefixes)), "")
    return f"baseline: {hint}" if hint and name.startswith(BASELINE_PREFIX) else hint


def _hint(names: Sequence[str]) -> list[str]:
    """One line a missing fact: `sched.preemptions (what it is): how to get it`."""
    hints: list[str] = []
    for name in names:
        spec = fact_spec(name.removeprefix(BASELINE_PREFIX))
        what = f"{name} ({spec.description})" if spec is not None and spec.description else name
        hint = how_to_get(name)
        line = f"{what}: {hint}" if hint else what
        if line not in hints:
            hints.append(line)
    return hints


def _single_sample(item: LoadedRule, profile: Profile) -> bool:
    """Whether the series the rule's condition reads (stats lines, acceptance lines) hold one value each. A pasted
    benchmark result is a whole run's aggregate, not one interval: a condition that reads one is not weak."""
    counts: list[int] = []
    for name in item.when.facts():
        base = name.removeprefix(BASELINE_PREFIX)
        spec = fact_spec(base)
        if spec is None or spec.kind != "series":
            continue
        value = profile.value(name)
        if base.startswith("bench.") and value is not None:
            return False
        if isinstance(value, list):
            seen = getattr(value, "seen", None)
            counts.append(seen if isinstance(seen, int) else len(value))
    return bool(counts) and max(counts) == 1


def evaluate_rule(item: LoadedRule, profile: Profile, lookup: TextLookup) -> tuple[RuleOutcome, Finding | None]:
    rule = item.rule
    base: dict[str, Any] = {"rule": rule.id, "cause": rule.cause, "title": rule.title}
    if profile.engine not in rule.engines and profile.engine in rule_engines():
        return RuleOutcome(**base, outcome="not_applicable", reason=f"rule is for {', '.join(rule.engines)}"), None
    missing = [name for name in rule.requires if not profile.has(name)]
    if missing:
        return (
            RuleOutcome(
                **base,
                outcome="insufficient_data",
                reason="needs " + ", ".join(missing),
                missing=missing,
                hints=_hint(missing),
            ),
            None,
        )
    verdict = item.when.eval(profile)
    if verdict is None:
        absent = sorted(n for n in item.when.facts() if not profile.has(n))
        return (
            RuleOutcome(
                **base,
                outcome="insufficient_data",
                reason="could not decide: " + (", ".join(absent) + " missing" if absent else "values unknown"),
                missing=absent,
                hints=_hint(absent),
            ),
            None,
        )
    if verdict is False:
        if item.ruled_out_when is None or item.ruled_out_when.eval(profile) is True:
            return RuleOutcome(**base, outcome="ruled_out", reason="condition not met: " + rule.when), None
        absent = sorted(n for n in item.ruled_out_when.facts() if not profile.has(n))
        return (
            RuleOutcome(
                **base,
                outcome="insufficient_data",
                reason="not fired, but not clearly ruled out either",
                missing=absent,
                hints=_hint(absent),
            ),
            None,
        )
    strength_value = 1.0
    working = f"impact {rule.impact}"
    if rule.score is not None and item.metric is not None:
        metric = item.metric.eval(profile)
        if isinstance(metric, int | float) and not isinstance(metric, bool) and metric == metric:  # NaN: unknown
            strength_value = strength(float(metric), rule.score)
            working += (
                f" x strength {strength_value:.2f} ({rule.score.metric} = {_format(float(metric), '')}; "
                f"info {rule.score.info:g}, warn {rule.score.warn:g})"
            )
        else:
            strength_value = 0.75
            working += f" x strength 0.75 ({rule.score.metric} unknown)"
    if _single_sample(item, profile):
        strength_value *= SINGLE_SAMPLE_STRENGTH
        working += f" x {SINGLE_SAMPLE_STRENGTH:g} (one stats line: weak evidence)"
    score = max(1, min(100, round(rule.impact * strength_value)))
    working += f" = {score}"
    finding = Finding(
        cause=rule.cause,
        rule=rule.id,
        title=rule.title,
        score=score,
        severity=severity_for(score),
        explanation=render_template(item.templates["explain"], profile),
        working=working,
        estimate=render_template(item.templates["estimate"], profile) if "estimate" in item.templates else None,
        evidence=_evidence(item, profile, lookup),
        fix=_fixes(item, profile),
        references=list(rule.references),
        status=rule.status,
    )
    return RuleOutcome(**base, outcome="fired", reason=finding.explanation), finding


def evaluate(
    rules: Sequence[LoadedRule],
    profile: Profile,
    lookup: TextLookup,
    suppressions: Suppressions | None = None,
    today: date | None = None,
    *,
    diff: bool = False,
    deadline: Deadline | None = None,
) -> tuple[list[Finding], list[RuleOutcome], list[str]]:
    """All rules against one profile. Returns ranked findings, every outcome, and suppression warnings.

    `mode: diff` rules run only with `diff=True`, on a profile that carries the baseline's facts
    (`facts.with_baseline`); without a baseline they are skipped, not reported as could-not-check.
    `deadline`: checked before each rule (InputError, exit 2, once the time is up)."""
    findings: list[Finding] = []
    outcomes: list[RuleOutcome] = []
    for index, item in enumerate(rules):
        if deadline is not None:
            deadline.check(f"at rule {item.id}, {index + 1} of {len(rules)}")
        if item.rule.status == "deprecated" or (item.is_diff and not diff):
            continue
        if item.rule.mode == "warned" and not all(profile.has(name) for name in item.rule.requires):
            continue  # no such warning in the log: that rules nothing out, and nothing was missing to check it
        outcome, finding = evaluate_rule(item, profile, lookup)
        if finding is not None and suppressions is not None:
            why = suppressions.match(finding.rule, finding.cause, today)
            if why is not None:
                outcome = outcome.model_copy(update={"outcome": "suppressed", "reason": why})
                finding = None
        outcomes.append(outcome)
        if finding is not None:
            findings.append(finding)
    findings.sort(key=lambda f: (-f.score, -SEVERITY_ORDER[f.severity], f.cause, f.rule))
    warnings = suppressions.warnings(today) if suppressions is not None else []
    return findings, outcomes, warnings


def verdict_for(findings: Sequence[Finding], outcomes: Sequence[RuleOutcome]) -> Verdict:
    passed = sum(1 for o in outcomes if o.outcome == "ruled_out")
    unknown = sum(1 for o in outcomes if o.outcome == "insufficient_data")
    serious = [f for f in findings if f.score >= HEALTHY_BELOW]
    if not serious:
        minor = f", {len(findings)} minor finding(s)" if findings else ""
        return Verdict(healthy=True, summary=f"healthy: {passed} checks passed, {unknown} could not run{minor}")
    top = serious[0]
    # findings that share one mechanism are one problem (engine/problems.py)
    found = dict.fromkeys(problem_id(f.cause) for f in serious)
    pid = problem_id(top.cause)
    shared = pid != top.cause and sum(1 for f in serious if problem_id(f.cause) == pid) > 1
    title = FAMILIES[top.cause][1] if shared else top.title  # the problem's title, as diagnose's verdict says it
    return Verdict(
        healthy=False,
        summary=f"{len(found)} likely problem(s); top: {pid} (score {top.score}) - {title}",
    )
