"""Problems, not rule hits: findings that share one mechanism are one problem, counted once and ranked by it.

    problems = group(findings)          # findings ranked best first (perf.fixes.rank)
    problems[0].id, problems[0].rules   # "speculation", ["below-break-even", "low-acceptance"]

Two rules can see one mechanism from two sides: speculation that costs more than it gives (its acceptance is below
break-even; its acceptance is low), or a TP group whose GPUs talk over a slow path (custom all-reduce is off; TP
runs over PCIe without P2P; NCCL has no P2P). Fixing one fixes the other: one problem, one effect, one recommended
action. Every other cause is a problem of its own. The headline count, the boxes of the terminal report and the
"explains" product of the gap are of problems; the JSON keeps every rule's finding, each naming its problem.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from logdoctor.engine.result import Action, Finding, Problem, severity_for

# Causes that share one mechanism (docs/causes.md ids): the problem's id and title.
FAMILIES: dict[str, tuple[str, str]] = {
    "spec-net-loss": ("speculation", "Speculative decoding costs more than it gives"),
    "spec-low-acceptance": ("speculation", "Speculative decoding costs more than it gives"),
    "custom-allreduce-disabled": ("tp-link", "The TP group's all-reduces take a slow path between the GPUs"),
    "tp-over-slow-link": ("tp-link", "The TP group's all-reduces take a slow path between the GPUs"),
    "nccl-no-p2p": ("tp-link", "The TP group's all-reduces take a slow path between the GPUs"),
}


def problem_id(cause: str) -> str:
    return FAMILIES.get(cause, (cause, ""))[0]


_K_FLAG = re.compile(r"num_speculative_tokens|--speculative-num-draft-tokens|--speculative-num-steps|speculative steps")
_DROP = re.compile(r"drop --speculative|without --speculative")
_METHOD = re.compile(r'"method":\s*"([^"]+)"')


def sets_speculation(step: str) -> bool:
    """A fix that sets k, drops speculation or switches the method: the choices one answer must not give twice."""
    return bool(_K_FLAG.search(step) or _DROP.search(step) or _METHOD.search(step))


# The TP link's choices the model answers with a number (perf/fixes.py): a rule's line saying the same is dropped.
_LINK = re.compile(r"^enable (?:PCIe |GPU )?P2P|^drop --disable-custom-all-reduce")
# The KV cache's memory fraction and the CPU offload (perf/fixes.py: the fraction the log's numbers allow, dropping
# --cpu-offload-gb where the GPU holds the weights): a rule's line setting the same is dropped.
_MEMORY = re.compile(r"^(?:--gpu-memory-utilization|--mem-fraction-static) |^drop --cpu-offload-gb$")


def answered_by_model(step: str) -> bool:
    """A rule's fix line that the model's actions answer (with their expected tok/s) where it has them."""
    return sets_speculation(step) or bool(_LINK.search(step)) or bool(_MEMORY.search(step))


def _actions(members: Sequence[Finding]) -> list[Action]:
    """The model's actions where a member's effect has them (best first), then the members' fix lines that neither
    repeat nor contradict them; without the model, the best finding's fix lines, then the other members' lines that
    do not answer the same choice differently (k, no speculation, another method)."""
    modelled = next((f.effect.actions for f in members if f.effect is not None and f.effect.actions), [])
    out = list(modelled)
    seen = {a.text for a in out}
    for index, f in enumerate(members):
        for step in f.fix:
            if step in seen or step.startswith("by the model:"):
                continue
            if (modelled and answered_by_model(step)) or (index > 0 and sets_speculation(step)):
                continue
            seen.add(step)
            out.append(Action(text=step))
    return out


# Causes of one problem where one is the other's root, by a fact the profile decides (facts/combiners/derived.py):
# the fact -> (the root's cause when it is true, when it is false).
ROOTS: dict[str, tuple[str, str]] = {
    "spec.acceptance_is_root": ("spec-low-acceptance", "spec-net-loss"),
}


def root_first(findings: Sequence[Finding], roots: dict[str, tuple[bool, str]]) -> list[Finding]:
    """The findings with each problem's root cause ahead of its consequence: `roots` maps a fact of ROOTS to (its
    value, the reason in words). The root's best finding takes the consequence's score where that is higher (it is
    the same loss, seen from its cause) and says so; every other finding stays as it was, in the same order."""
    out = list(findings)
    for fact, (is_root, why) in roots.items():
        root, consequence = ROOTS[fact] if is_root else ROOTS[fact][::-1]
        at = next((i for i, f in enumerate(out) if f.cause == root), None)
        ahead = next((i for i, f in enumerate(out) if f.cause == consequence), None)
        if at is None or ahead is None or at < ahead:
            continue
        lead = out[ahead]
        raised = out[at].model_copy(
            update={
                "score": max(out[at].score, lead.score),
                "severity": severity_for(max(out[at].score, lead.score)),
                "explanation": f"{out[at].explanation}; the root of the {consequence} finding below it ({why})",
            }
        )
        del out[at]
        out.insert(ahead, raised)
    return out


def group(findings: Sequence[Finding]) -> tuple[list[Finding], list[Problem]]:
    """(the findings, each naming its problem; the problems best first). The findings' order is kept: a problem's
    score is its best finding's, its effect the one of its best finding with an effect."""
    members: dict[str, list[Finding]] = {}
    for f in findings:
        members.setdefault(problem_id(f.cause), []).append(f)
    problems: list[Problem] = []
    kept: dict[str, set[str]] = {}
    for pid, group_members in members.items():
        top = group_members[0]
        # the effect the gap multiplies for this problem: the largest among its findings
        effects = [f.effect for f in group_members if f.effect is not None]
        effect = max(effects, key=lambda e: e.speedup) if effects else None
        title = FAMILIES[top.cause][1] if top.cause in FAMILIES and len(group_members) > 1 else top.title
        actions = _actions(group_members)
        kept[pid] = {a.text for a in actions}
        problems.append(
            Problem(
                id=pid,
                title=title,
                score=top.score,
                severity=top.severity,
                causes=list(dict.fromkeys(f.cause for f in group_members)),
                rules=[f.rule for f in group_members],
                effect=effect,
                actions=actions,
            )
        )
    problems.sort(key=lambda p: -p.score)  # stable: the findings' order breaks ties
    # each finding keeps the fix lines its problem shows: no finding carries advice its problem contradicts
    tagged = [
        f.model_copy(
            update={"problem": problem_id(f.cause), "fix": [s for s in f.fix if s in kept[problem_id(f.cause)]]}
        )
        for f in findings
    ]
    return tagged, problems


__all__ = ["FAMILIES", "ROOTS", "answered_by_model", "group", "problem_id", "root_first", "sets_speculation"]
