"""Speculation findings where the GPU is not known: their effect said as unknown rather than a figure the model
would contradict once the GPU is given, and their k and drop choices without hardware-free speedups.

    findings = without_gpu(findings, rules, engine)
    findings[0].estimate   # "speculation as deployed against plain decode: unknown without the GPU (...)"
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from logdoctor.engine.problems import sets_speculation
from logdoctor.engine.result import Finding

if TYPE_CHECKING:
    from logdoctor.engine.rules import LoadedRule

# Without the GPU the cost of a speculative step is not known: a drafted token's overhead is a time, a large share
# of a small model's step on a fast GPU and a small one of a large model's on a slow GPU. The rules' estimate
# (0.2 plain steps a drafted token) would give one number here and the model another with the GPU; say it is
# unknown instead, and name the choices without the figures only the GPU can give.
SPEC_UNKNOWN = (
    "speculation as deployed against plain decode: unknown without the GPU (a drafted token costs a fixed time, a "
    "larger share of a fast step than of a slow one; a break-even above assumes 0.2 plain steps a drafted token, as on "
    "small models on fast GPUs); pass --gpu NAME (`logdoctor gpus` lists them) for the expected tok/s as deployed, "
    "without speculation and of each choice"
)
_CLAIM = re.compile(r"(?::| \()\s*per-position acceptance gives.*$")


def without_gpu(findings: Sequence[Finding], rules: Sequence[LoadedRule], engine: str) -> list[Finding]:
    """The speculation findings without a GPU: their effect said as unknown, their k and drop choices without the
    hardware-free speedups the model would replace (the MTP head's line stays: it rests on the log alone)."""
    spec_rules = {item.id for item in rules if item.rule.effect == "spec-k"}
    out: list[Finding] = []
    for f in findings:
        if f.rule not in spec_rules:
            out.append(f)
            continue
        fix: list[str] = []
        for step in f.fix:
            fix.append(_CLAIM.sub("", step) if sets_speculation(step) else step)
        drop = drop_flag(engine)
        if any(step.startswith(drop) for step in fix) and not any(
            _K_SET.search(step) and "MTP head" not in step for step in fix
        ):
            fix = [step for step in fix if not step.startswith(drop)]
            fix.insert(0, f"{drop}, or fewer speculative tokens: which is faster depends on the GPU (pass --gpu NAME)")
        out.append(f.model_copy(update={"estimate": SPEC_UNKNOWN, "fix": list(dict.fromkeys(fix))}))
    return out


def drop_flag(engine: str) -> str:
    """How an engine's speculation is dropped: SGLang's flag, else vLLM's."""
    return "drop --speculative-algorithm" if engine == "sglang" else "drop --speculative-config"


_K_SET = re.compile(r"num_speculative_tokens\": \d|--speculative-num-steps \d")


__all__ = ["SPEC_UNKNOWN", "drop_flag", "without_gpu"]
