"""vLLM line types: §3 speculative decoding (catalogue/vllm.md)."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.vllm.attention import _normalise_backend
from logdoctor.engines.vllm.common import (
    _NUM_SPEC_TOKENS,
    _VERSION,
    Events,
    NoticeBuild,
    _base,
    _event,
    _f,
    _grammar,
    _labelled_values,
    _msg,
    _notices,
    _table_warning,
)
from logdoctor.events import (
    AttentionBackend,
    CudaGraph,
    EngineVersion,
    ModelInfo,
    PerfWarning,
    SchedulerConfig,
    SpecDecodeFormat,
    SpecDecodeStats,
    WarningTopic,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_SPEC_V1_RE = re.compile(
    r"SpecDecoding metrics: (?:Draft acceptance rate: (?P<rate_old>[\d.]+|nan)%, )?"
    r"(?:Mean acceptance length: (?P<mal>[\d.]+|nan), )?"
    r"(?:Accepted throughput: (?P<acc_tps>[\d.]+) tokens/s, Drafted throughput: (?P<dr_tps>[\d.]+) tokens/s, )?"
    r"Accepted: (?P<acc>\d+) tokens, Drafted: (?P<dr>\d+) tokens"
    # Greedy: a lazy `+?` tried the rest of the pattern after every character (5x slower). The set has no `A`, so
    # the rates still end before `, Avg Draft`; only trailing spaces may differ, and each rate is stripped.
    r"(?:, Per-position acceptance rate: (?P<pos>[\d., nan]+))?"
    r"(?:, Avg Draft acceptance rate: (?P<rate>[\d.]+|nan)%)?\s*$"
)
_SPEC_V0_RE = re.compile(
    r"Speculative metrics: Draft acceptance rate: (?P<rate>[\d.]+|nan), System efficiency: (?P<eff>[\d.]+|nan), "
    r"Number of speculative tokens: (?P<k>\d+), Number of accepted tokens: (?P<acc>\d+), "
    # Some V0 builds print the unit twice: `Number of draft tokens tokens: 42272`.
    r"Number of draft tokens(?: tokens)?: (?P<dr>\d+), Number of emitted tokens(?: tokens)?: (?P<em>\d+)"
)


def _mean_length_has_bonus(mal: float, positions: list[float] | None, ctx: ParseContext) -> bool:
    """0.8.5 printed `Mean acceptance length` as accepted/drafts (no bonus token); 0.9.0+ prints 1 + accepted/drafts,
    in the same format string. The per-position rates sum to accepted/drafts, so they tell the two apart on the
    line itself; without them the version printed earlier in the log decides, and 0.9+ is assumed otherwise
    (0.9.0 - 0.10.x used this format far longer than 0.8.5 did)."""
    if positions:
        accepted_per_draft = sum(positions)
        return abs(mal - (1 + accepted_per_draft)) <= abs(mal - accepted_per_draft)
    version = ctx.state.get(_VERSION)
    return not (isinstance(version, tuple) and (0, 8, 5) <= version < (0, 9))


# Tolerance: a SpecDecoding / Speculative metrics line the exact patterns above refuse (a
# reworded, doubled, reordered or new field) is read as `Label: number unit` pairs by normalised label
# (common._labelled_values); the labels it knows give the usual fields, the others are kept in `extra`.
_SPEC_V1_LABELS = {
    "draft_acceptance_rate": "rate_old",
    "mean_acceptance_length": "mal",
    "accepted_throughput": "acc_tps",
    "drafted_throughput": "dr_tps",
    "accepted": "acc",
    "accepted_tokens": "acc",
    "drafted": "dr",
    "drafted_tokens": "dr",
    "avg_draft_acceptance_rate": "rate",
}
_SPEC_V0_LABELS = {
    "draft_acceptance_rate": "rate",
    "system_efficiency": "eff",
    "number_of_speculative_tokens": "k",
    "number_of_accepted_tokens": "acc",
    "number_of_draft_tokens": "dr",
    "number_of_emitted_tokens": "em",
}
_CUT_COUNT_RE = re.compile(r"(?:Accepted|Drafted): \d+\s*$")
_POSITIONS_RE = re.compile(r",? ?Per-position acceptance rates?: (?P<pos>[\d., nan]*[\dn])")


def _undoubled(label: str) -> str:
    """`number_of_draft_tokens_tokens` -> number_of_draft_tokens (some V0 builds print the unit twice)."""
    words = label.split("_")
    return "_".join(w for i, w in enumerate(words) if i == 0 or w != words[i - 1])


def _count(text: str) -> int:
    """A token count as printed (`2642`), or as the labelled reader gave a count with a sentence's full stop after it
    (`2642.` -> `2642.0`); a count with a fraction is no count (ValueError: the line is not understood)."""
    value = float(text)
    if not value.is_integer():
        raise ValueError(f"not a count: {text}")
    return int(value)


def _spec_labelled(body: str, labels: dict[str, str], keys: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the fields by regex-group name, the unknown labels) of a metrics line's text after its prefix."""
    g: dict[str, Any] = dict.fromkeys(keys)
    m = _POSITIONS_RE.search(body)
    if m:
        g["pos"] = m.group("pos")
        body = body[: m.start()] + body[m.end() :]
    extra: dict[str, Any] = {}
    for label, value in _labelled_values(body).items():
        key = labels.get(_undoubled(label))
        if key is not None and g.get(key) is None:
            g[key] = str(value)
        else:
            extra[label] = value
    return g, extra


def parse_spec_decode_v1(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _SPEC_V1_RE.search(line.message)
    extra: dict[str, Any] = {}
    if m:
        g = m.groupdict()  # one call instead of a dozen `m.group(...)`: this line comes every few seconds
    else:
        _, found, body = line.message.partition("SpecDecoding metrics:")
        if not found:
            return None
        if _CUT_COUNT_RE.search(body):
            return None  # cut after a count whose unit is missing (a terminal-wrapped line): joined with the next
        g, extra = _spec_labelled(
            body, _SPEC_V1_LABELS, ("rate_old", "mal", "acc_tps", "dr_tps", "acc", "dr", "pos", "rate")
        )
        if g["acc"] is None or g["dr"] is None:
            return None
    positions = [float(p) for p in g["pos"].split(",") if p.strip() not in ("", "nan")] if g["pos"] else None
    accepted, drafted = _count(g["acc"]), _count(g["dr"])
    k = len(positions) if positions else ctx.state.get(_NUM_SPEC_TOKENS)
    num_drafts = round(drafted / k) if k and drafted else None
    mal = _f(g["mal"])
    fmt: SpecDecodeFormat
    if g["acc_tps"] is not None:
        fmt = "vllm-v1-0.11"
    elif mal is not None:
        fmt = "vllm-v1-0.9"
    else:
        fmt = "vllm-v1-0.8.3"
    if mal is not None and g["rate_old"] is not None and not _mean_length_has_bonus(mal, positions, ctx):
        fmt = "vllm-v1-0.8.5"
        mal += 1
    if mal is None and num_drafts:
        mal = 1 + accepted / num_drafts
    rate_pct = _f(g["rate"]) if g["rate"] is not None else _f(g["rate_old"])
    return [
        SpecDecodeStats(
            **_base(line, ctx),
            format=fmt,
            interval=True,
            mean_acceptance_length=round(mal, 4) if mal is not None else None,
            acceptance_rate=round(rate_pct / 100, 6)
            if rate_pct is not None
            else (accepted / drafted if drafted else None),
            per_position_acceptance=positions,
            num_speculative_tokens=k,
            accepted_tokens=accepted,
            drafted_tokens=drafted,
            num_drafts=num_drafts,
            accepted_throughput=_f(g["acc_tps"]),
            drafted_throughput=_f(g["dr_tps"]),
            extra=extra,
        )
    ]


def parse_spec_decode_v0(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _SPEC_V0_RE.search(line.message)
    extra: dict[str, Any] = {}
    if m:
        g: dict[str, Any] = m.groupdict()
    else:
        _, found, body = line.message.partition("Speculative metrics:")
        if not found:
            return None
        g, extra = _spec_labelled(body, _SPEC_V0_LABELS, ("rate", "eff", "k", "acc", "dr", "em"))
        if any(g[key] is None for key in ("k", "acc", "dr", "em")):
            return None
    k, accepted, drafted, emitted = (_count(g[key]) for key in ("k", "acc", "dr", "em"))
    ctx.state[_NUM_SPEC_TOKENS] = k
    # Cumulative since start. V0 counts accepted draft tokens per position (not only the accepted prefix);
    # the tokens a verification step really produced are `emitted` (accepted prefix + the bonus/recovered
    # token), so the V1-comparable mean acceptance length is emitted / steps = system efficiency x (k + 1).
    steps = round(drafted / k) if k else 0
    return [
        SpecDecodeStats(
            **_base(line, ctx),
            format="vllm-v0",
            interval=False,
            mean_acceptance_length=round(emitted / steps, 4) if steps else None,
            acceptance_rate=_f(g["rate"]),
            num_speculative_tokens=k,
            accepted_tokens=accepted,
            drafted_tokens=drafted,
            emitted_tokens=emitted,
            num_drafts=steps or None,
            system_efficiency=_f(g["eff"]),
            extra=extra,
        )
    ]


# V0 spec-decode worker, the drafter lines and spec-decode warnings: (regex, PerfWarning topic).
_SPEC_NOTICES: tuple[tuple[re.Pattern[str], WarningTopic], ...] = (
    (re.compile(r"\[Speculative Decoding\] Use batch expansion for scoring proposals"), "spec-scorer-batch-expansion"),
    (re.compile(r"\[Speculative Decoding\] Disabling MQA scorer as "), "spec-scorer-batch-expansion"),
    (re.compile(r"\[Speculative Decoding\] Use MQA scorer for scoring proposals"), "spec-scorer-mqa"),
    (re.compile(r"DFlash buffer initialization was skipped"), "spec-drafter-weights"),
    (re.compile(r"Async output processing is not supported with speculative decoding"), "spec-decode"),
    (re.compile(r"Enabling num_speculative_tokens > 1 will run ?multiple times of forward"), "spec-mtp-multistep"),
    (
        re.compile(r"cannot currently be run with tp>1; setting speculative_draft_tensor_parallel_size=1"),
        "spec-drafter",
    ),
    (re.compile(r"Speculative decoding on CPU without Intel OpenMP"), "spec-decode"),
    (re.compile(r"method `\S+` is deprecated and replaced with mtp"), "spec-drafter"),
    (re.compile(r"Loading drafter model"), "spec-drafter"),
    (re.compile(r"Starting to load draft model"), "spec-drafter"),
    (re.compile(r"Sharing target model \w+ weights with the draft model"), "spec-drafter"),
    (re.compile(r"Keeping separate lm_head weights from the target model"), "spec-drafter"),
    (re.compile(r"Using (?:Eagle3 )?auxiliary layers from (?:speculative )?config"), "spec-drafter"),
    (re.compile(r"Loaded DFlash mask embedding"), "spec-drafter"),
    (re.compile(r"DSpark draft model loaded"), "spec-drafter"),
    (re.compile(r"The Beam DFlash2 context K/V weights were built lazily"), "spec-drafter-weights"),
)
_V0_FALLBACK_RE = re.compile(
    r"^(?P<feature>.+?) is not supported by the V1 Engine\. Falling back to V0"  # ^: one start, not one a character
    r"|^(?P<feature2>.+?) is experimental on VLLM_USE_V1=1\. Falling back to V0"
)
_SPEC_TOKEN_BUDGET_RE = re.compile(
    r"max_num_scheduled_tokens is set to (?P<n>\d+) based on the speculative decoding settings"
)
_DRAFT_EAGER_RE = re.compile(
    r"(?<!\S)(?P<name>\S+) draft attention \((?P<backend>[^)]*)\) does not support full CUDA graphs; running the draft eagerly"
)
_EAGLE_PIECEWISE_RE = re.compile(r"the eagle proposer only supports cudagraph_mode PIECEWISE")
_DRAFTER_BACKEND_RES = (
    re.compile(r"Using (?P<backend>FlashInfer) for draft model non-causal attention"),
    re.compile(r"Using the target model's (?P<backend>\S+) attention backend for the .*?drafter"),
)


def parse_spec_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _SPEC_TOKEN_BUDGET_RE.search(text)
    if m:
        return [SchedulerConfig(**base, kind="spec-token-budget", value=int(m.group("n")), message=_msg(line))]
    m = _DRAFT_EAGER_RE.search(text)
    if m:
        return [
            CudaGraph(**base, kind="drafter_eager", role="drafter", message=_msg(line)),
            AttentionBackend(
                **base,
                backend=_normalise_backend(m.group("backend")),
                role="drafter",
                fallback_reason="no-full-cudagraph",
                message=_msg(line),
            ),
        ]
    if _EAGLE_PIECEWISE_RE.search(text):
        return [CudaGraph(**base, kind="drafter_eager", role="drafter", message=_msg(line))]
    m = _V0_FALLBACK_RE.search(text)
    if m:
        feature = (m.group("feature") or m.group("feature2")).strip()
        return [
            EngineVersion(**base, engine_generation="V0", origin="V1 fallback"),
            PerfWarning(**base, topic="v0-fallback", message=_msg(line) or feature),
        ]
    for pattern in _DRAFTER_BACKEND_RES:
        m = pattern.search(text)
        if m:
            return [
                AttentionBackend(
                    **base, backend=_normalise_backend(m.group("backend")), role="drafter", message=_msg(line)
                )
            ]
    warning = _table_warning(_SPEC_NOTICES, text, base, line)
    if warning is not None:
        return warning
    return None


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES_0_33: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (
        re.compile(
            "The draft model's max_model_len \\(\\d+\\) is smaller than the target model's \\(\\d+\\).*?reducing max_model_len to (?P<max_model_len>\\d+)"
        ),
        _event(ModelInfo),
    ),
    (
        re.compile(
            "Speculative Decoding with draft models or parallel drafting does not fully support multimodal models yet"
        ),
        _event(PerfWarning, topic="spec-decode"),
    ),
    (re.compile("Very small vocabulary intersection \\(\\d+ tokens\\)"), _event(PerfWarning, topic="spec-decode")),
    (re.compile("EAGLE trailing prefix-cache block dropping is disabled"), _event(PerfWarning, topic="spec-decode")),
    (
        re.compile("Missing cached draft probabilities for request \\S+; falling back to legacy speculative rejection"),
        _event(PerfWarning, topic="spec-decode"),
    ),
    (
        re.compile(
            "Dynamic speculative decoding is not supported with the '[^']*' speculative method.*?falling back to static num_speculative_tokens=\\d+"
        ),
        _event(PerfWarning, topic="spec-config"),
    ),
    (
        re.compile(
            "Speculative decoding \\(method=\\S+\\) is enabled but no KV cache group could be identified as the draft model's"
        ),
        _event(PerfWarning, topic="spec-decode"),
    ),
)


def parse_spec_notices_0_33(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES_0_33, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "spec_decode_v1",
        ("SpecDecoding metrics:",),
        parse_spec_decode_v1,
        (
            case(
                "constructed-reordered-new-field",
                # Constructed: the 0.11+ fields reordered and a field no release prints yet.
                "(APIServer pid=1) INFO 11-30 10:00:00 [metrics.py:120] SpecDecoding metrics: Drafted: 3000 tokens, "
                "Accepted: 58 tokens, Mean acceptance length: 1.29, Avg Draft acceptance rate: 1.9%, Per-position "
                "acceptance rate: 0.120, 0.060, 0.040, Accepted throughput: 3.60 tokens/s, Drafted throughput: 187.50 "
                "tokens/s, Draft steps: 200",
                (
                    "spec_decode_stats",
                    {
                        "mean_acceptance_length": 1.29,
                        "acceptance_rate": 0.019,
                        "accepted_tokens": 58,
                        "drafted_tokens": 3000,
                        "per_position_acceptance": [0.12, 0.06, 0.04],
                        "num_speculative_tokens": 3,
                        "accepted_throughput": 3.6,
                        "extra": {"draft_steps": 200},
                    },
                ),
                exact=True,
            ),
            case(
                "constructed-cut-after-count",
                # Constructed: a terminal-wrapped line cut inside `Drafted: 3000 tokens`, its rest on the next line.
                "(APIServer pid=1) INFO 11-30 10:00:00 [metrics.py:120] SpecDecoding metrics: Accepted: 58 tokens, "
                "Drafted: 30\n00 tokens, Mean acceptance length: 1.29",
                ("spec_decode_stats", {"accepted_tokens": 58, "drafted_tokens": 3000, "line": 1, "end_line": 2}),
                exact=True,
            ),
            case(
                "spec-v1-0.20-mtp-k6",
                "(APIServer pid=13026) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
                "2.87, Accepted throughput: 48.90 tokens/s, Drafted throughput: 157.19 tokens/s, Accepted: 489 tokens, "
                "Drafted: 1572 tokens, Per-position acceptance rate: 0.740, 0.473, 0.309, 0.187, 0.099, 0.057, Avg Draft "
                "acceptance rate: 31.1%",
                (
                    "spec_decode_stats",
                    {
                        "format": "vllm-v1-0.11",
                        "interval": True,
                        "mean_acceptance_length": 2.87,
                        "acceptance_rate": 0.311,
                        "num_speculative_tokens": 6,
                        "accepted_tokens": 489,
                        "drafted_tokens": 1572,
                        "num_drafts": 262,
                        "accepted_throughput": 48.9,
                        "drafted_throughput": 157.19,
                        "per_position_acceptance": [0.74, 0.473, 0.309, 0.187, 0.099, 0.057],
                    },
                ),
            ),
            case(
                "spec-v1-dflash-k15-low",
                "(APIServer pid=1) INFO 05-01 14:24:50 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.37, "
                "Accepted throughput: 8.90 tokens/s, Drafted throughput: 97.50 tokens/s, Accepted: 89 tokens, Drafted: 975 "
                "tokens, Per-position acceptance rate: 0.600, 0.385, 0.215, 0.108, 0.062, 0.000, 0.000, 0.000, 0.000, 0.000, "
                "0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 9.1%",
                (
                    "spec_decode_stats",
                    {
                        "mean_acceptance_length": 2.37,
                        "acceptance_rate": 0.091,
                        "num_speculative_tokens": 15,
                        "num_drafts": 65,
                    },
                ),
            ),
            case(
                "spec-v1-dflash-k5",
                "(APIServer pid=1) INFO 05-07 04:56:17 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.63, "
                "Accepted throughput: 76.80 tokens/s, Drafted throughput: 235.49 tokens/s, Accepted: 768 tokens, Drafted: 2355 "
                "tokens, Per-position acceptance rate: 0.726, 0.467, 0.240, 0.134, 0.064, Avg Draft acceptance rate: 32.6%",
                (
                    "spec_decode_stats",
                    {"mean_acceptance_length": 2.63, "acceptance_rate": 0.326, "num_speculative_tokens": 5},
                ),
            ),
            case(
                "spec-v1-metrics-120-k3",
                "(APIServer pid=1) INFO 07-06 23:21:13 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.89, "
                "Accepted throughput: 59.80 tokens/s, Drafted throughput: 95.10 tokens/s, Accepted: 598 tokens, Drafted: 951 "
                "tokens, Per-position acceptance rate: 0.814, 0.615, 0.457, Avg Draft acceptance rate: 62.9%",
                (
                    "spec_decode_stats",
                    {"mean_acceptance_length": 2.89, "acceptance_rate": 0.629, "num_speculative_tokens": 3},
                ),
            ),
            case(
                "spec-v1-ascend-zero-acceptance",
                "(APIServer pid=6485) INFO 08-05 20:20:43 [metrics.py:100] SpecDecoding metrics: Mean acceptance length: 1.00, "
                "Accepted throughput: 0.00 tokens/s, Drafted throughput: 1.23 tokens/s, Accepted: 0 tokens, Drafted: 495 "
                "tokens, Per-position acceptance rate: 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 0.0%",
                (
                    "spec_decode_stats",
                    {
                        "mean_acceptance_length": 1.0,
                        "acceptance_rate": 0.0,
                        "accepted_tokens": 0,
                        "drafted_tokens": 495,
                    },
                ),
            ),
            case(
                "spec-v1-pr-review-ordering",
                "(APIServer pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] SpecDecoding metrics: Draft acceptance rate: 88.8%, "
                "Mean acceptance length: 5.44, Accepted throughput: 4.37 tokens/s, Drafted throughput: 4.92 tokens/s, Accepted: "
                "262 tokens, Drafted: 295 tokens, Per-position acceptance rate: 0.983, 0.949, 0.915, 0.881, 0.712",
                (
                    "spec_decode_stats",
                    {"mean_acceptance_length": 5.44, "acceptance_rate": 0.888, "num_speculative_tokens": 5},
                ),
            ),
            case(
                "spec-v1-0.8.3-short",
                "SpecDecoding metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens",
                (
                    "spec_decode_stats",
                    {
                        "format": "vllm-v1-0.8.3",
                        "acceptance_rate": 1.0,
                        "accepted_tokens": 66,
                        "drafted_tokens": 66,
                        "mean_acceptance_length": None,
                    },
                ),
            ),
            case(
                "spec-v1-0.8.3-short-k-from-config",
                "INFO 04-04 16:30:36 [core.py:61] Initializing a V1 LLM engine (v0.8.3) with config: model='m', "
                "speculative_config=SpeculativeConfig(method='ngram', model=None, num_spec_tokens=2), compilation_config={}\n"
                "INFO 04-04 16:31:36 [loggers.py:87] SpecDecoding metrics: Draft acceptance rate: 50.0%, Accepted: 66 tokens, "
                "Drafted: 132 tokens",
                ("spec_decode_stats", {"num_speculative_tokens": 2, "num_drafts": 66, "mean_acceptance_length": 2.0}),
            ),
            case(
                "spec-v1-0.8.5-no-bonus-rendered",
                "INFO 04-30 10:00:00 [loggers.py:111] SpecDecoding metrics: Draft acceptance rate: 45.0%, Mean acceptance "
                "length: 0.90, Accepted: 90 tokens, Drafted: 200 tokens, Per-position acceptance rate: 0.600, 0.300",
                (
                    "spec_decode_stats",
                    {"format": "vllm-v1-0.8.5", "mean_acceptance_length": 1.9, "acceptance_rate": 0.45},
                ),
            ),
            case(
                "spec-v1-0.9-bonus-rendered",
                "INFO 06-30 10:00:00 [metrics.py:86] SpecDecoding metrics: Draft acceptance rate: 45.0%, Mean acceptance "
                "length: 1.90, Accepted: 90 tokens, Drafted: 200 tokens, Per-position acceptance rate: 0.600, 0.300",
                ("spec_decode_stats", {"format": "vllm-v1-0.9", "mean_acceptance_length": 1.9, "num_drafts": 100}),
            ),
            case(
                "spec-v1-0.8.5-by-version-line",
                "INFO 04-30 09:59:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
                "INFO 04-30 10:00:00 [loggers.py:111] SpecDecoding metrics: Draft acceptance rate: 45.0%, Mean acceptance "
                "length: 0.90, Accepted: 90 tokens, Drafted: 200 tokens",
                ("spec_decode_stats", {"format": "vllm-v1-0.8.5", "mean_acceptance_length": 1.9}),
            ),
        ),
    ),
    _grammar(
        "spec_decode_v0",
        ("Speculative metrics:",),
        parse_spec_decode_v0,
        (
            case(
                "constructed-reordered-doubled-new-field",
                # Constructed: k first, the doubled `tokens tokens` labels, and an unknown field.
                "INFO 05-08 16:25:09 [metrics.py:471] Speculative metrics: Number of speculative tokens: 16, Draft "
                "acceptance rate: 0.000, System efficiency: 0.059, Number of accepted tokens: 0, Number of draft tokens "
                "tokens: 42272, Number of emitted tokens tokens: 2642, Number of bonus tokens: 5",
                (
                    "spec_decode_stats",
                    {
                        "format": "vllm-v0",
                        "num_speculative_tokens": 16,
                        "acceptance_rate": 0.0,
                        "drafted_tokens": 42272,
                        "emitted_tokens": 2642,
                        "system_efficiency": 0.059,
                        "extra": {"number_of_bonus_tokens": 5},
                    },
                ),
                exact=True,
            ),
            case(
                "constructed-count-before-a-full-stop",
                # A line its exact pattern refuses (two spaces where a terminal broke it), read label by label: the
                # last count is followed by the sentence's full stop.
                "INFO 07-24 04:00:31 metrics.py:316] Speculative metrics: Draft acceptance rate: 0.000, System "
                "efficiency: 0.059, Number of speculative tokens: 16, Number of accepted tokens: 0, Number of draft "
                "tokens  tokens: 42272, Number of emitted tokens tokens: 2642.",
                ("spec_decode_stats", {"format": "vllm-v0", "drafted_tokens": 42272, "emitted_tokens": 2642}),
            ),
            case(
                "constructed-missing-field",
                # A metrics line without the emitted count is not guessed at: no event.
                "INFO 05-08 16:25:09 [metrics.py:471] Speculative metrics: Draft acceptance rate: 0.500, Number of "
                "speculative tokens: 4",
                exact=True,
            ),
            case(
                "spec-v0-0.6.3-cumulative",
                "INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: Draft acceptance rate: 0.642, System efficiency: "
                "0.598, Number of speculative tokens: 3, Number of accepted tokens: 8547, Number of draft tokens: 13311, "
                "Number of emitted tokens: 10616.",
                (
                    "spec_decode_stats",
                    {
                        "format": "vllm-v0",
                        "interval": False,
                        "acceptance_rate": 0.642,
                        "system_efficiency": 0.598,
                        "num_speculative_tokens": 3,
                        "accepted_tokens": 8547,
                        "drafted_tokens": 13311,
                        "emitted_tokens": 10616,
                        "num_drafts": 4437,
                        "mean_acceptance_length": 2.3926,
                    },
                ),
            ),
            case(
                "spec-v0-0.7",
                "INFO 02-06 03:18:09 metrics.py:475] Speculative metrics: Draft acceptance rate: 0.067, System efficiency: "
                "0.167, Number of speculative tokens: 5, Number of accepted tokens: 1, Number of draft tokens: 15, Number of "
                "emitted tokens: 3.",
                (
                    "spec_decode_stats",
                    {"acceptance_rate": 0.067, "system_efficiency": 0.167, "mean_acceptance_length": 1.0},
                ),
            ),
            case(
                "spec-v0-unit-doubled",
                "INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: Draft acceptance rate: 0.000, System efficiency: "
                "0.059, Number of speculative tokens: 16, Number of accepted tokens: 0, Number of draft tokens tokens: 42272, "
                "Number of emitted tokens tokens: 2642.",
                ("spec_decode_stats", {"format": "vllm-v0", "num_speculative_tokens": 16, "acceptance_rate": 0.0}),
            ),
        ),
    ),
    _grammar(
        "spec_notices",
        (
            "[Speculative Decoding]",
            "DFlash buffer initialization",
            "Async output processing is not supported with speculative",
            "num_speculative_tokens > 1",
            "speculative_draft_tensor_parallel_size=1",
            "Speculative decoding on CPU",
            "is deprecated and replaced with mtp",
            "Loading drafter model",
            "Starting to load draft model",
            "with the draft model",
            "Keeping separate lm_head weights",
            "auxiliary layers from",
            "DFlash mask embedding",
            "DSpark draft model loaded",
            "DFlash2 context K/V",
            "Falling back to V0",
            "max_num_scheduled_tokens is set to",
            "running the draft eagerly",
            "eagle proposer only supports cudagraph_mode",
            "for draft model non-causal attention",
            "attention backend for the",
        ),
        parse_spec_notices,
        (
            case(
                "sample-1",
                "(Worker_TP0 pid=147) WARNING 09-15 12:31:40 [qwen3_dflash.py:412] DFlash buffer initialization was "
                "skipped. If dummy weights are not in use, this may indicate an error in weight loading.",
                ("perf_warning", {}),
            ),
            case(
                "spec-v0-batch-expansion",
                "INFO 10-16 19:00:01 spec_decode_worker.py:300] [Speculative Decoding] Use batch expansion for scoring "
                "proposals.",
                ("perf_warning", {"topic": "spec-scorer-batch-expansion"}),
            ),
            case(
                "spec-v0-mqa-disabled",
                "INFO 10-16 19:00:01 spec_decode_worker.py:290] [Speculative Decoding] Disabling MQA scorer as the MQA is only "
                "available with flash attn backend.",
                ("perf_warning", {"topic": "spec-scorer-batch-expansion"}),
            ),
            case(
                "spec-v0-mqa-scorer",
                "INFO 10-16 19:00:01 spec_decode_worker.py:300] [Speculative Decoding] Use MQA scorer for scoring proposals.",
                ("perf_warning", {"topic": "spec-scorer-mqa"}),
            ),
            case(
                "spec-v0-fallback",
                "WARNING 03-20 10:00:00 [arg_utils.py:1700] Speculative Decoding is not supported by the V1 Engine. Falling "
                "back to V0. ",
                ("engine_version", {"engine_generation": "V0", "origin": "V1 fallback"}),
                ("perf_warning", {"topic": "v0-fallback"}),
            ),
            case(
                "attention-env-v0-fallback",
                "WARNING 03-20 10:00:00 [arg_utils.py:1700] VLLM_ATTENTION_BACKEND=XFORMERS is not supported by the V1 Engine. "
                "Falling back to V0. We recommend to remove VLLM_ATTENTION_BACKEND=XFORMERS from your config in favor of the "
                "V1 Engine.",
                ("engine_version", {"engine_generation": "V0"}),
            ),
            case(
                "spec-dflash-buffer-skipped",
                "(Worker_TP0 pid=147) WARNING 05-06 06:18:10 [qwen3_dflash.py:412] DFlash buffer initialization was skipped. "
                "If dummy weights are not in use, this may indicate an error in weight loading.",
                ("perf_warning", {"topic": "spec-drafter-weights"}),
            ),
            case(
                "spec-draft-eager-0.29",
                "(Worker_TP0 pid=147) WARNING 09-15 12:33:02 [speculator.py:201] DFlash draft attention (TRITON_ATTN) does not "
                "support full CUDA graphs; running the draft eagerly.",
                ("cuda_graph", {"kind": "drafter_eager", "role": "drafter"}),
                ("attention_backend", {"backend": "TRITON_ATTN", "role": "drafter"}),
            ),
            case(
                "spec-eagle-proposer-piecewise",
                "(Worker_TP0 pid=147) WARNING 11-20 10:00:00 [eagle.py:80] Currently the eagle proposer only supports "
                "cudagraph_mode PIECEWISE, if you want the drafter to use cuda graphs, please set "
                "compilation_config.cudagraph_mode to PIECEWISE or FULL_AND_PIECEWISE",
                ("cuda_graph", {"kind": "drafter_eager", "role": "drafter"}),
            ),
            case(
                "spec-token-budget-0.20",
                "(EngineCore pid=43) WARNING 05-06 06:17:48 [vllm.py:1406] max_num_scheduled_tokens is set to 8188 based on the "
                "speculative decoding settings. This may lead to suboptimal performance. Consider increasing "
                "max_num_batched_tokens to accommodate the additional draft token slots, or decrease num_speculative_tokens or "
                "max_num_seqs.",
                ("scheduler_config", {"kind": "spec-token-budget", "value": 8188}),
            ),
            case(
                "spec-token-budget-0.29",
                "(EngineCore pid=43) WARNING 09-15 12:00:00 [vllm.py:1500] max_num_scheduled_tokens is set to 4094 based on the "
                "speculative decoding settings. This may lead to suboptimal performance. Consider increasing "
                "max_num_batched_tokens to accommodate the additional draft token slots, or decrease num_speculative_tokens.",
                ("scheduler_config", {"kind": "spec-token-budget", "value": 4094}),
            ),
            case(
                "spec-loading-drafter",
                "(Worker_TP0 pid=147) INFO 05-06 06:10:00 [gpu_model_runner.py:3100] Loading drafter model...",
                ("perf_warning", {"topic": "spec-drafter"}),
            ),
            case(
                "spec-mtp-multistep-0.11-typo",
                "(APIServer pid=1) WARNING 10-05 10:00:00 [speculative.py:300] Enabling num_speculative_tokens > 1 will "
                "runmultiple times of forward on same MTP layer,which may result in lower acceptance rate",
                ("perf_warning", {"topic": "spec-mtp-multistep"}),
            ),
            case(
                "spec-drafter-flashinfer-non-causal",
                "(Worker_TP0 pid=147) INFO 07-20 10:00:00 [flashinfer.py:500] Using FlashInfer for draft model non-causal "
                "attention; TRTLLM can still be used for target model causal attention.",
                ("attention_backend", {"backend": "FLASHINFER", "role": "drafter"}),
            ),
        ),
    ),
    _grammar(
        "spec_notices_0_33",
        (
            "The draft model's max_model_len",
            "does not fully support multimodal models yet",
            "Very small vocabulary intersection",
            "EAGLE trailing prefix-cache block dropping is disabled",
            "Missing cached draft probabilities for request",
            "Dynamic speculative decoding is not supported with the",
            "no KV cache group could be identified as the draft model's",
        ),
        parse_spec_notices_0_33,
        (
            case(
                "v0.33-the-draft-model-s-max-model-len",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [vllm.py:3043] The draft model's max_model_len (4096) is smaller than the target model's (32768) and the V2 model runner can't skip speculation for longer sequences; reducing max_model_len to 4096.",
                ("model_info", {"max_model_len": 4096}),
            ),
            case(
                "v0.33-does-not-fully-support-multimodal-models",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [llm_base_proposer.py:338] Speculative Decoding with draft models or parallel drafting does not fully support multimodal models yet. Proceeding with text-only speculative decoding.",
                ("perf_warning", {"topic": "spec-decode"}),
            ),
            case(
                "v0.33-very-small-vocabulary-intersection",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [vocab_mapping.py:133] Very small vocabulary intersection (812 tokens).",
                ("perf_warning", {"topic": "spec-decode"}),
            ),
            case(
                "v0.33-eagle-trailing-prefix-cache-block-droppi",
                "(EngineCore pid=180) WARNING 11-30 10:00:00 [scheduler.py:336] EAGLE trailing prefix-cache block dropping is disabled. This is experimental and may affect speculative-token acceptance rates.",
                ("perf_warning", {"topic": "spec-decode"}),
            ),
            case(
                "v0.33-missing-cached-draft-probabilities-for-r",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [gpu_model_runner.py:4702] Missing cached draft probabilities for request cmpl-7f3a; falling back to legacy speculative rejection behavior.",
                ("perf_warning", {"topic": "spec-decode"}),
            ),
            case(
                "v0.33-dynamic-speculative-decoding-is-not-supp",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [vllm.py:1100] Dynamic speculative decoding is not supported with the 'ngram' speculative method on Model Runner V1. Disabling num_speculative_tokens_per_batch_size and falling back to static num_speculative_tokens=4.",
                ("perf_warning", {"topic": "spec-config"}),
            ),
            case(
                "v0.33-no-kv-cache-group-could-be-identified-as",
                "(EngineCore pid=180) WARNING 11-30 10:00:00 [kv_cache_planning.py:1067] Speculative decoding (method=eagle3) is enabled but no KV cache group could be identified as the draft model's.",
                ("perf_warning", {"topic": "spec-decode"}),
            ),
        ),
    ),
]
