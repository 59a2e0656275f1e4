"""Row by row: each setting of the vocabulary read on both deployments, compared, and ported.

    read(SETTINGS["num_speculative_tokens"], profile)   -> 15.0
    port(SETTINGS["tensor_parallel_size"], base, "sglang") -> "--tp-size 2"

A plain setting's port is the candidate engine's flag (`EngineSpec.flags`) with the baseline's value;
a composite one is written by the candidate engine's `EngineSpec.port`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from logdoctor.engine.aggregations import aggregate
from logdoctor.engine.diffresult import Difference, State, plain_number
from logdoctor.engine.result import Finding
from logdoctor.engine.rules import LoadedRule
from logdoctor.facts import BASELINE_PREFIX, Profile
from logdoctor.registry import REGISTRY, Spelling
from logdoctor.vocabulary import DIFF_ROWS, GROUPS, Setting, Side

# Attention backends: one canonical name per kernel family, and a speed class.
_ATTENTION_CANONICAL = {"FA3": "FLASH_ATTN", "FA4": "FLASH_ATTN", "TRITON": "TRITON_ATTN", "TORCH_NATIVE": "TORCH_SDPA"}
# 0: the fast kernels; 1: Triton (a legitimate default for some models and GPUs); 2: reference paths.
_ATTENTION_SPEED = {
    "FLASH_ATTN": 0,
    "FLASHINFER": 0,
    "FLASHMLA": 0,
    "CUTLASS_MLA": 0,
    "TRTLLM_MHA": 0,
    "TRTLLM_MLA": 0,
    "TRITON_ATTN": 1,
    "TRITON_MLA": 1,
    "XFORMERS": 2,
    "TORCH_SDPA": 2,
    "SDPA": 2,
    "FLEX_ATTENTION": 2,
}
_TRANSPORT_SPEED = {"P2P": 0, "NVLS": 0, "COLLNET": 1, "SHM": 1, "NET": 2}


def spelling(entry: Setting, engine: str) -> Spelling | None:
    """How `engine` spells the setting, if it is a registered engine that does."""
    spec = REGISTRY.get(engine)
    return spec.flags.get(entry.key) if spec is not None else None


def read(entry: Setting, profile: Profile) -> Any:
    """The row's value on one deployment, or None when its logs cannot show it (never guessed)."""
    for name in entry.facts:
        value = profile.value(name)
        if value is None or value == []:
            continue
        if entry.aggregate is not None:
            numbers = [float(x) for x in value if isinstance(x, int | float) and not isinstance(x, bool)]
            if not numbers:
                continue
            return round(aggregate(entry.aggregate, value, numbers), 4)
        return value
    if entry.spec_off is not None and profile.value("spec.enabled") is False:
        return entry.spec_off
    return None


def _canonical(entry: Setting, value: Any) -> Any:
    if isinstance(value, str):
        text = value.rstrip("/").rsplit("/", 1)[-1] if entry.basename else value
        text = text.casefold()
        if entry.better == "attention":
            upper = text.upper()
            return _ATTENTION_CANONICAL.get(upper, upper)
        return text
    return value


def same(entry: Setting, a: Any, b: Any) -> bool:
    a, b = _canonical(entry, a), _canonical(entry, b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=entry.tolerance) if entry.tolerance else float(a) == float(b)
    return bool(a == b)


def worse(entry: Setting, baseline: Any, candidate: Any) -> bool:
    """Whether the candidate's value is on the slower side of the baseline's (the row matters)."""
    if entry.better == "any":
        return True
    if entry.better == "never":
        return False
    if entry.better == "on":
        return baseline is True and candidate is False
    if entry.better in ("higher", "lower"):
        if not isinstance(baseline, int | float) or not isinstance(candidate, int | float):
            return False
        return candidate < baseline if entry.better == "higher" else candidate > baseline
    speed = _ATTENTION_SPEED if entry.better == "attention" else _TRANSPORT_SPEED
    slow_base = speed.get(str(_canonical(entry, baseline)).upper())
    slow_cand = speed.get(str(_canonical(entry, candidate)).upper())
    return slow_base is not None and slow_cand is not None and slow_cand > slow_base


def port(entry: Setting, baseline: Side, engine: str) -> str | None:
    """The flag on `engine` that sets the baseline's value, or None when no flag does."""
    if entry.composite:
        spec = REGISTRY.get(engine)
        return spec.port(entry.key, baseline) if spec is not None and spec.port is not None else None
    if entry.measurement:
        return None
    spelled = spelling(entry, engine)
    value = read(entry, baseline.profile)
    if spelled is None or value is None:
        return None
    if isinstance(value, bool):
        return spelled.when_on if value else spelled.when_off
    if spelled.flag is None:
        return None
    return spelled.render(plain_number(value))


def _detail(entry: Setting, profile: Profile) -> str | None:
    if entry.detail is None:
        return None
    value = profile.value(entry.detail)
    return None if value is None else str(value)


def compare(baseline: Profile, candidate: Profile) -> list[Difference]:
    """Every row of the vocabulary, in vocabulary order (ranking happens in `rank_rows`)."""
    base_side = Side(baseline)
    rows: list[Difference] = []
    for entry in DIFF_ROWS:
        b, c = read(entry, baseline), read(entry, candidate)
        if b is None or c is None:
            state: State = "unknown"
        else:
            state = "equal" if same(entry, b, c) else "differs"
        base_spelling = spelling(entry, baseline.engine) or Spelling()
        cand_spelling = spelling(entry, candidate.engine) or Spelling()
        rows.append(
            Difference(
                key=entry.key,
                group=entry.group or "",
                state=state,
                baseline=b,
                candidate=c,
                baseline_detail=_detail(entry, baseline),
                candidate_detail=_detail(entry, candidate),
                matters=state == "differs" and worse(entry, b, c),
                why=entry.why,
                port=port(entry, base_side, candidate.engine) if state == "differs" else None,
                baseline_flag=base_spelling.flag,
                candidate_flag=cand_spelling.flag,
                baseline_key=base_spelling.key,
                candidate_key=cand_spelling.key,
            )
        )
    return rows


def link(rows: list[Difference], findings: Sequence[Finding], rules: Sequence[LoadedRule]) -> list[Difference]:
    """Name, on each row, the fired rules that read its facts (either side's)."""
    reads = {item.id: {n.removeprefix(BASELINE_PREFIX) for n in item.facts()} for item in rules}
    by_key = {entry.key: entry for entry in DIFF_ROWS}
    out: list[Difference] = []
    for row in rows:
        facts = set(by_key[row.key].facts)
        linked = [f.rule for f in findings if facts & reads.get(f.rule, set())]
        out.append(row.model_copy(update={"findings": linked}))
    return out


def rank_rows(rows: list[Difference], findings: Sequence[Finding], gap_key: str | None) -> list[Difference]:
    """The gap's row first; then rows that differ and matter, a group at a time, the group whose rows the
    strongest findings read first; then other differences; then rows one side cannot show; then equal ones."""
    score = {f.rule: f.score for f in findings}
    group_score: dict[str, int] = {}
    for row in rows:
        if row.matters:
            best = max((score[r] for r in row.findings), default=0)
            group_score[row.group] = max(group_score.get(row.group, 0), best)
    order = {entry.key: i for i, entry in enumerate(DIFF_ROWS)}

    def tier(row: Difference) -> int:
        if row.matters:
            return 0
        if row.state == "differs":
            return 1
        if row.state == "unknown" and (row.baseline is not None or row.candidate is not None):
            return 2
        return 3

    def key(row: Difference) -> tuple[int, int, int, int, int]:
        group = -group_score.get(row.group, 0) if tier(row) == 0 else 0
        return (row.key != gap_key, tier(row), group, GROUPS.index(row.group), order[row.key])

    return sorted(rows, key=key)


def folded(row: Difference) -> bool:
    """Equal rows and rows neither deployment's logs show are folded unless `--all`."""
    return row.state == "equal" or (row.baseline is None and row.candidate is None)
