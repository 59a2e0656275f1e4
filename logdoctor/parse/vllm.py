"""Grammars for vLLM server lines (catalogue/vllm.md), v0.6 to v0.33: every performance-relevant line family
turned into a typed event.

    (APIServer pid=1) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.87, ...
        -> SpecDecodeStats(format="vllm-v1-0.11", mean_acceptance_length=2.87, acceptance_rate=0.311, ...)
    (Worker_TP0 pid=7) WARNING 07-28 06:36:18 [custom_all_reduce.py:137] Custom allreduce is disabled because ...
        -> CustomAllReduce(enabled=False, reason="pcie-more-than-two")

Each family is one `Grammar` (keywords, a parse function, verbatim samples); the parse function tries the
family's named regexes, one per format, and returns None when the line is not its business. Lines from
another engine's header (SGLang, NCCL) are never claimed here.

Normalisation (see events.py): rates are fractions 0..1, memory GiB, times seconds, and the mean acceptance
length always counts the bonus token. Where a version changes a number's meaning the parser decides from
the line itself when it can, else from what the log said earlier (`ctx.state`).

Configuration dumps that a terminal wrapped over several physical lines (`non-default args`, the engine-init
dump, `args: Namespace(...)`) are collected through `ctx.block` and parsed once whole.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from logdoctor.events import (
    AllReduceBackends,
    AttentionBackend,
    CompileTime,
    CudaGraph,
    CustomAllReduce,
    Engine,
    EngineFailure,
    EngineVersion,
    EventBase,
    HybridModel,
    KVCache,
    ModelInfo,
    NcclInfo,
    NcclVersion,
    Offload,
    P2PCheck,
    PerfWarning,
    Platform,
    Preemption,
    Quantization,
    SchedulerConfig,
    SchedulerStats,
    SpecDecodeStats,
    StartupConfig,
)
from logdoctor.parse.envelope import LogLine, has_header
from logdoctor.parse.pyrepr import ParsedRepr, parse_kwargs, parse_value
from logdoctor.parse.registry import Grammar, ParseContext

Events = list[EventBase]
ParseFn = Callable[[LogLine, ParseContext], "Events | None"]

# ctx.state keys this module owns.
_VERSION = "vllm.version"  # tuple[int, ...] of the version printed earlier in the log
_NUM_SPEC_TOKENS = "vllm.num_speculative_tokens"  # k from a config dump, for spec lines that do not print it
_CAPTURE_BARS = "vllm.capture_bars"  # tqdm bars already reported: (pid, description, finished)
_WRAPPED_DUMP = "vllm.wrapped_dump"  # a configuration dump being collected over wrapped physical lines

_MESSAGE_LIMIT = 1000
_NUM = r"[\d.]+(?:e[+-]?\d+)?"  # also vLLM's `:.2` significant-digit format: `3.6e+01`
_VLLM_ROLES = frozenset({"APIServer", "EngineCore", "Worker", "RayWorker"})


# --- small helpers -------------------------------------------------------------------------------


def _f(value: str | None) -> float | None:
    if value is None or value == "nan":
        return None
    return float(value)


@functools.lru_cache(maxsize=4096)  # stats lines repeat a few hundred printed percentages; `round` is slow
def _pct(value: str | None) -> float | None:
    """`95.9` (percent as printed) -> 0.959."""
    return None if value is None or value == "nan" else round(float(value) / 100, 6)


def _i(value: str | None) -> int | None:
    digits = None if value is None else value.replace(",", "").strip()
    return int(digits) if digits and digits.isdigit() else None


def _gib(value: str, unit: str) -> float:
    """Memory as GiB. vLLM's `GB` in old lines was computed as bytes / 2**30, so it is GiB too."""
    number = float(value)
    unit = unit.lower()
    if unit.startswith("m"):
        return round(number / 1024, 6)
    if unit.startswith("t"):
        return number * 1024
    return number


def _clock_seconds(text: str) -> float:
    """tqdm's elapsed field `20:16` / `1:02:03` -> seconds."""
    total = 0.0
    for part in text.split(":"):
        total = total * 60 + float(part)
    return total


def _msg(line: LogLine) -> str:
    return line.message.strip()[:_MESSAGE_LIMIT]


def _table_warning(
    table: tuple[tuple[re.Pattern[str], str], ...], text: str, base: dict[str, Any], line: LogLine
) -> list[EventBase] | None:
    """The PerfWarning of the first (pattern, topic) row of a warning table that matches `text`."""
    for pattern, topic in table:
        if pattern.search(text):
            return [PerfWarning(**base, topic=topic, message=_msg(line))]
    return None


def _base(line: LogLine, ctx: ParseContext) -> dict[str, Any]:
    return ctx.base(line, "vllm")


def _generic_base(line: LogLine, ctx: ParseContext) -> dict[str, Any]:
    """For PyTorch/CUDA/NCCL text that any engine can print: vLLM only when the header or process says so."""
    proc = line.process
    vllm = line.engine_hint == "vllm" or (proc is not None and proc.role in _VLLM_ROLES)
    engine: Engine = "vllm" if vllm else "unknown"
    return ctx.base(line, engine)


# Source text quoted in a traceback (`  File "..."`, `    raise RuntimeError("...`): it carries an error's
# words without being the error. The process prefix swallows the indentation, so `raise ` counts alone.
_TRACEBACK_CODE_RE = re.compile(r"^\s*(?:File \"|raise |return )|^\s{2}")


def _is_traceback_code(text: str) -> bool:
    return _TRACEBACK_CODE_RE.match(text) is not None


def _version_tuple(version: str) -> tuple[int, ...]:
    """`0.20.2rc1.dev49+g9b4e83934` -> (0, 20, 2)."""
    parts: list[int] = []
    for piece in version.split("."):
        m = re.match(r"\d+", piece)
        if not m:
            break
        parts.append(int(m.group(0)))
        if m.end() != len(piece):
            break
    return tuple(parts)


def _remember_version(ctx: ParseContext, version: str | None) -> None:
    if version:
        parsed = _version_tuple(version)
        if parsed:
            ctx.state[_VERSION] = parsed


_BACKEND_LIST_RE = re.compile(r"'([^']*)'|\"([^\"]*)\"|([A-Za-z0-9_.:+-]+)")


def _names(text: str | None) -> list[str]:
    """`['FLASH_ATTN', 'FLASHINFER']`, `('A', 'B')` or `A, B` -> the names."""
    if not text:
        return []
    return [next(g for g in m.groups() if g is not None) for m in _BACKEND_LIST_RE.finditer(text.strip("[]()."))]


# --- §2 version, logo, serving model --------------------------------------------------------------

_VERSION_RE = re.compile(
    r"vLLM (?:API |gRPC )?server version (?P<ver>\S+?)(?:, serving model (?P<model>\S+))?\s*$"
    r"|vLLM batch processing API version (?P<batch_ver>\S+)\s*$"
)
_LOGO_VERSION_RE = re.compile(r"█.*\bversion\s+(?P<ver>\S+)\s*$")
_LOGO_MODEL_RE = re.compile(r"█.*\bmodel\s+(?P<model>\S+)\s*$")


def parse_version(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _VERSION_RE.search(line.message)
    if m:
        version = m.group("ver") or m.group("batch_ver")
        _remember_version(ctx, version)
        return [EngineVersion(**_base(line, ctx), version=version, model=m.group("model"), origin="version line")]
    m = _LOGO_VERSION_RE.search(line.message)
    if m:
        _remember_version(ctx, m.group("ver"))
        return [EngineVersion(**_base(line, ctx), version=m.group("ver"), origin="logo")]
    m = _LOGO_MODEL_RE.search(line.message)
    if m:
        return [EngineVersion(**_base(line, ctx), model=m.group("model"), origin="logo")]
    return None


# --- §2.2/§2.3 configuration dumps ---------------------------------------------------------------

_ENGINE_INIT_RE = re.compile(
    r"Initializing an? (?:(?P<gen>V[01]) )?LLM engine \(v(?P<ver>[^)]+)\)(?: with config: (?P<cfg>.*))?"
)
_DUMP_INPUT_RE = re.compile(r"Dumping input data for (?P<gen>V[01]) LLM engine \(v(?P<ver>[^)]+)\)")
_NON_DEFAULT_RE = re.compile(r"non-default args: (?P<cfg>\{.*)")
_NAMESPACE_RE = re.compile(r"\bargs: (?P<cfg>Namespace\(.*)")
# An elision a user typed into a pasted dump (`None, ... tensor_parallel_size=1, ..., enforce_eager=...`).
_ELISION_RE = re.compile(r"(?:,\s*)?(?:\.\.\.|…)\s*,?\s*(?=\b[A-Za-z_]\w*=)")
_SYNTHETIC_REJECTION_RE = re.compile(r"rejection_sample_method['\"]?\s*[:=]\s*['\"]synthetic")
# The last key of str(VllmConfig) (V1, all versions) and of the V0 init format: a dump that parses whole
# and ends with one of them was not cut by a terminal.
_DUMP_LAST_KEYS = frozenset(
    {"compilation_config", "kernel_config", "aux_output_config", "use_cached_outputs", "mm_processor_kwargs"}
)
DumpKind = Literal["non-default args", "engine init", "namespace"]


def _jsonable(value: Any) -> Any:
    """pyrepr keeps an in-value `...` elision as a sentinel object; make the config JSON-serialisable."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return "..."


def _num_spec_tokens(config: dict[str, Any]) -> int | None:
    spec = config.get("speculative_config")
    if isinstance(spec, dict):
        for key in ("num_spec_tokens", "num_speculative_tokens"):
            if isinstance(spec.get(key), int):
                return int(spec[key])
    value = config.get("num_speculative_tokens")
    return value if isinstance(value, int) else None


@functools.lru_cache(maxsize=8)
def _parse_repr(kind: DumpKind, text: str) -> ParsedRepr:
    """pyrepr's parse of a dump's (right-stripped) text: the slowest step of the vLLM grammars, ~0.1 s for an
    engine-init dump. `_dump_complete` parses a dump to see whether it is whole and `_parse_dump` then needs the
    very same parse: cached, so it runs once. The result is shared: never modify it."""
    if kind == "engine init":
        return parse_kwargs(_ELISION_RE.sub(", ", text))
    return parse_value(text)


def _parse_dump(kind: DumpKind, text: str) -> tuple[dict[str, Any], bool]:
    text = text.rstrip()
    cut = text.endswith(("...", "…"))
    parsed = _parse_repr(kind, text)
    if kind == "engine init":
        value = parsed.value
    else:
        value = dict(parsed.value) if isinstance(parsed.value, dict) else {}  # a copy: the parse is cached
        value.pop("__class__", None)
    return _jsonable(value), parsed.truncated or cut


def _dump_events(kind: DumpKind, line: LogLine, ctx: ParseContext, text: str, end: int | None = None) -> Events:
    config, truncated = _parse_dump(kind, text)
    base = _base(line, ctx)
    if end is not None:
        base["end_line"] = end
    k = _num_spec_tokens(config)
    if k:
        ctx.state[_NUM_SPEC_TOKENS] = k
    events: Events = [StartupConfig(**base, origin=kind, config=config, truncated=truncated)]
    if _SYNTHETIC_REJECTION_RE.search(text):
        # No log line says so: `rejection_sample_method='synthetic'` (0.21+) makes the acceptance numbers fake.
        events.append(
            PerfWarning(
                **base,
                topic="spec-synthetic-rejection",
                message="speculative decoding uses synthetic rejection sampling: acceptance metrics are not real",
            )
        )
    return events


_TOP_KEY_RE = re.compile(r"\s*([A-Za-z_]\w*)=")


def _dump_closed(kind: DumpKind, text: str) -> bool:
    """A cheap look before the full parse: brackets and quotes balanced, and (for the engine-init dump) the last
    top-level `key=` is one that ends str(VllmConfig)."""
    depth, quote, last_comma, i = 0, "", -1, 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
        elif c == "," and depth == 0 and text[i + 1 : i + 2] == " ":
            last_comma = i
        i += 1
    if depth > 0 or quote:
        return False
    if kind != "engine init":
        return True
    tail = text.rstrip().rstrip(",")
    if tail != text.rstrip():  # the V0 format ends with `use_cached_outputs=True, `
        return _dump_closed(kind, tail)
    m = _TOP_KEY_RE.match(text, last_comma + 1)
    return m is not None and m.group(1) in _DUMP_LAST_KEYS


def _dump_complete(kind: DumpKind, text: str) -> bool:
    """Whether a dump is whole, or was cut by a terminal and continues on the next physical lines."""
    text = text.rstrip()
    if text.endswith(("...", "…")):
        return True  # cut in the source: nothing follows
    if not _dump_closed(kind, text):
        return False
    parsed = _parse_repr(kind, text)
    if kind != "engine init":
        return not parsed.truncated
    keys = list(parsed.value)
    return not parsed.truncated and bool(keys) and keys[-1] in _DUMP_LAST_KEYS


@dataclass
class _WrappedDump:
    kind: DumpKind
    line: LogLine
    text: str
    end: int | None = None


def _is_dump_piece(line: LogLine) -> bool:
    """A piece of a terminal-wrapped dump: no header, no process prefix. Unlike the pipeline's rule for one
    wrapped line, a piece may start with a space (the terminal broke the line at one)."""
    return bool(line.text.strip()) and not line.skip and not has_header(line)


def _open_dump(kind: DumpKind, line: LogLine, ctx: ParseContext, text: str) -> Events:
    """Parse a dump now when it is whole; else collect the wrapped pieces that follow (`ctx.block`)."""
    if _dump_complete(kind, text):
        return _dump_events(kind, line, ctx, text)
    ctx.state[_WRAPPED_DUMP] = _WrappedDump(kind, line, text)
    ctx.block = _continue_dump
    return []


def _continue_dump(line: LogLine, ctx: ParseContext) -> Events | None:
    dump = ctx.state.get(_WRAPPED_DUMP)
    if not isinstance(dump, _WrappedDump):
        ctx.block = None
        return None
    if _is_dump_piece(line):
        dump.text += line.text.rstrip()
        dump.end = line.number
        if not _dump_complete(dump.kind, dump.text):
            return []
        ctx.block = None
        del ctx.state[_WRAPPED_DUMP]
        return _dump_events(dump.kind, dump.line, ctx, dump.text, dump.end)
    # The dump ended without its last key (cut in the source). Its events must go out with this line's: a
    # block that returns None loses them, so the line is parsed here by the vLLM grammars (a line right after
    # a config dump is a vLLM line; one only another engine's grammar would claim is the price of this).
    ctx.block = None
    del ctx.state[_WRAPPED_DUMP]
    events = _dump_events(dump.kind, dump.line, ctx, dump.text, dump.end)
    if not line.text.strip():  # a blank line, or the end of the input
        return events
    return events + (_dispatch_own(line, ctx) or [])


def parse_non_default_args(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _NON_DEFAULT_RE.search(line.message)
    if not m:
        return None
    return _open_dump("non-default args", line, ctx, m.group("cfg"))


def parse_namespace(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _NAMESPACE_RE.search(line.message)
    if not m:
        return None
    return _open_dump("namespace", line, ctx, m.group("cfg"))


def parse_engine_init(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _ENGINE_INIT_RE.search(line.message)
    if m:
        _remember_version(ctx, m.group("ver"))
        version = EngineVersion(
            **_base(line, ctx), version=m.group("ver"), engine_generation=m.group("gen"), origin="engine init"
        )
        if m.group("cfg") is None:
            return [version]  # a paste that elided the dump
        return [version, *_open_dump("engine init", line, ctx, m.group("cfg"))]
    m = _DUMP_INPUT_RE.search(line.message)
    if m:
        # Printed just before `EngineCore encountered a fatal error.` when execute_model crashed.
        _remember_version(ctx, m.group("ver"))
        return [
            EngineVersion(
                **_base(line, ctx), version=m.group("ver"), engine_generation=m.group("gen"), origin="dump input"
            )
        ]
    return None


# --- §3 speculative decoding ---------------------------------------------------------------------

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
    r"Number of draft tokens: (?P<dr>\d+), Number of emitted tokens: (?P<em>\d+)"
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


def parse_spec_decode_v1(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _SPEC_V1_RE.search(line.message)
    if not m:
        return None
    g = m.groupdict()  # one call instead of a dozen `m.group(...)`: this line comes every few seconds
    positions = [float(p) for p in g["pos"].split(",") if p.strip() not in ("", "nan")] if g["pos"] else None
    accepted, drafted = int(g["acc"]), int(g["dr"])
    k = len(positions) if positions else ctx.state.get(_NUM_SPEC_TOKENS)
    num_drafts = round(drafted / k) if k and drafted else None
    mal = _f(g["mal"])
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
        )
    ]


def parse_spec_decode_v0(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _SPEC_V0_RE.search(line.message)
    if not m:
        return None
    k, accepted, drafted, emitted = (int(m.group(g)) for g in ("k", "acc", "dr", "em"))
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
            acceptance_rate=_f(m.group("rate")),
            num_speculative_tokens=k,
            accepted_tokens=accepted,
            drafted_tokens=drafted,
            emitted_tokens=emitted,
            num_drafts=steps or None,
            system_efficiency=_f(m.group("eff")),
        )
    ]


# V0 spec-decode worker, the drafter lines and spec-decode warnings: (regex, PerfWarning topic).
_SPEC_NOTICES: tuple[tuple[re.Pattern[str], str], ...] = (
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
    r"(?P<feature>.+?) is not supported by the V1 Engine\. Falling back to V0"
    r"|(?P<feature2>.+?) is experimental on VLLM_USE_V1=1\. Falling back to V0"
)
_SPEC_TOKEN_BUDGET_RE = re.compile(
    r"max_num_scheduled_tokens is set to (?P<n>\d+) based on the speculative decoding settings"
)
_DRAFT_EAGER_RE = re.compile(
    r"(?P<name>\S+) draft attention \((?P<backend>[^)]*)\) does not support full CUDA graphs; running the draft eagerly"
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


# --- §4 periodic stats, preemption, iteration details --------------------------------------------

_STATS_HEAD_RE = re.compile(
    r"(?:Engine (?P<eng>\d{3}): |(?P<n_eng>\d+) Engines Aggregated: )?"
    r"Avg prompt throughput: (?P<pp>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
    r"Running: (?P<run>\d+) reqs, (?:Swapped: (?P<swap>\d+) reqs, Pending|Waiting): (?P<wait>\d+) reqs"
)
# The optional parts after Waiting/Pending, in any order (0.11.1+ joins whichever apply with ", ").
_STATS_PART_RE = re.compile(
    r"(?P<key>Deferred|Preemptions|Corrupted|(?P<dev>[A-Za-z]+(?: \+ host)?) KV cache usage|"
    r"External prefix cache hit rate|MM cache hit rate|Prefix cache hit rate): (?P<val>[\d.]+|nan)(?: reqs|%)?"
)
_KV_FETCH_RE = re.compile(
    r"KV fetch: (?P<waiting>\d+) waiting to start, (?P<running>\d+) in progress, (?P<done>\d+) completed waiting"
)
_V0_PREFIX_HIT_RE = re.compile(r"Prefix cache hit rate: GPU: (?P<gpu>[\d.]+|nan)%, CPU: (?P<cpu>[\d.]+|nan)%")
_PREEMPTION_RE = re.compile(
    r"Sequence group (?P<group>\S+) is preempted (?:by|in) PreemptionMode\.(?P<mode>\w+) mode"
    r"(?:.*?total_num_cumulative_preemption=(?P<total>\d+))?"
)
_FAILING_REQUEST_RE = re.compile(r"Failing the request \S+ because there's not enough kv cache blocks")
_ITERATION_RE = re.compile(
    r"(?:Engine (?P<eng>\d{3}): )?Iteration\((?P<it>\d+)\): (?P<ctx_reqs>\d+) context requests, "
    r"(?P<ctx_tok>\d+) context tokens, (?P<gen_reqs>\d+) generation requests, (?P<gen_tok>\d+) generation tokens, "
    r"iteration elapsed time: (?P<ms>[\d.]+) ms(?P<dummy> \(dummy\))?(?:, (?P<dev>\w+) KV cache usage: (?P<kv>[\d.]+)%)?"
)
_MFU_RE = re.compile(r"(?:Engine (?P<eng>\d{3}): )?MFU: (?P<tf>[\d.]+) TF/s/device (?P<gb>[\d.]+) GB/s/device")
_STATS_DISABLED_RE = re.compile(r"AsyncLLM created with api_server_count more than 1; disabling stats logging")


def parse_stats(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    m = _STATS_HEAD_RE.search(text)
    if not m:
        return None
    head = m.groupdict()  # one call instead of one `m.group` a field: a stats line comes every few seconds
    v0 = head["swap"] is not None
    values: dict[str, float | None] = {}
    extra: dict[str, float | int | str] = {}
    kv_usage: float | None = None
    cpu_kv_usage: float | None = None
    for part in _STATS_PART_RE.finditer(text, m.end()):
        key, device, value = part.group("key", "dev", "val")
        if device:
            if device == "CPU" and v0:
                cpu_kv_usage = _pct(value)  # V0: the swap space in host memory
            else:
                kv_usage = _pct(value)
                if device != "GPU":
                    extra["kv_cache_device"] = device
        elif key in ("Deferred", "Preemptions", "Corrupted"):
            values[key] = float(value)
        else:
            values[key] = _pct(value)
    if values.get("Corrupted") is not None:
        extra["corrupted_requests"] = int(values["Corrupted"] or 0)
    for key, name in (
        ("External prefix cache hit rate", "external_prefix_cache_hit_rate"),
        ("MM cache hit rate", "mm_cache_hit_rate"),
    ):
        if values.get(key) is not None:
            extra[name] = values[key] or 0.0
    fetch = _KV_FETCH_RE.search(text, m.end())
    if fetch:
        extra.update(
            kv_fetch_waiting=int(fetch.group("waiting")),
            kv_fetch_in_progress=int(fetch.group("running")),
            kv_fetch_completed_waiting=int(fetch.group("done")),
        )
    if head["n_eng"]:
        extra["engines_aggregated"] = int(head["n_eng"])
    deferred, preemptions = values.get("Deferred"), values.get("Preemptions")
    return [
        SchedulerStats(
            **_base(line, ctx),
            format="vllm-v0" if v0 else "vllm-v1",
            engine_index=_i(head["eng"]),
            prompt_throughput=float(head["pp"]),
            generation_throughput=float(head["gen"]),
            running=int(head["run"]),
            waiting=int(head["wait"]),
            swapped=_i(head["swap"]),
            deferred=int(deferred) if deferred is not None else None,
            preemptions=int(preemptions) if preemptions is not None else None,
            kv_cache_usage=kv_usage,
            cpu_kv_cache_usage=cpu_kv_usage,
            prefix_cache_hit_rate=values.get("Prefix cache hit rate"),
            extra=extra,
        )
    ]


def parse_stats_extras(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _V0_PREFIX_HIT_RE.search(text)
    if m:
        # V0 prints the prefix-cache hit rates on their own line right after the stats line.
        return [
            SchedulerStats(
                **base,
                format="vllm-v0-prefix-cache",
                prefix_cache_hit_rate=_pct(m.group("gpu")),
                extra={"cpu_prefix_cache_hit_rate": _pct(m.group("cpu")) or 0.0},
            )
        ]
    m = _ITERATION_RE.search(text)
    if m:
        ctx_tok, gen_tok = int(m.group("ctx_tok")), int(m.group("gen_tok"))
        extra: dict[str, float | int | str] = {
            "iteration": int(m.group("it")),
            "context_requests": int(m.group("ctx_reqs")),
            "context_tokens": ctx_tok,
            "generation_requests": int(m.group("gen_reqs")),
            "generation_tokens": gen_tok,
            "iteration_seconds": float(m.group("ms")) / 1000,
        }
        if m.group("dummy"):
            extra["dummy"] = 1
        return [
            SchedulerStats(
                **base,
                format="vllm-iteration",
                engine_index=_i(m.group("eng")),
                running=int(m.group("ctx_reqs")) + int(m.group("gen_reqs")),
                num_tokens=ctx_tok + gen_tok,
                kv_cache_usage=_pct(m.group("kv")),
                extra=extra,
            )
        ]
    m = _MFU_RE.search(text)
    if m:
        return [
            SchedulerStats(
                **base,
                format="vllm-mfu",
                engine_index=_i(m.group("eng")),
                extra={"tflops_per_device": float(m.group("tf")), "gb_per_s_per_device": float(m.group("gb"))},
            )
        ]
    if _STATS_DISABLED_RE.search(text):
        return [PerfWarning(**base, topic="stats-disabled", message=_msg(line))]
    return None


def parse_preemption(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _PREEMPTION_RE.search(line.message)
    if m:
        return [
            Preemption(**_base(line, ctx), mode=m.group("mode"), cumulative=_i(m.group("total")), message=_msg(line))
        ]
    if _FAILING_REQUEST_RE.search(line.message):
        return [PerfWarning(**_base(line, ctx), topic="kv-cache-request-failed", message=_msg(line))]
    return None


# --- §5 custom all-reduce, P2P, NCCL, distributed init -------------------------------------------

# Why custom all-reduce is off: (regex, reason code).
_CUSTOM_AR_DISABLED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"lacks GPU P2P capability or P2P test failed"), "no-p2p"),
    (re.compile(r"not supported on more than two PCIe-only GPU"), "pcie-more-than-two"),
    (re.compile(r"unsupported world size"), "world-size"),
    (re.compile(r"process group spans across nodes|multi-node group does not"), "spans-nodes"),
    (re.compile(r"missing custom allreduce library"), "library"),
)
_CUSTOM_AR_RE = re.compile(r"Custom (?:allreduce|collectives) (?:is|are) disabled")
_CUDA_GRAPH_ADDRESSES_RE = re.compile(r"Registering (?P<n>\d+) cuda graph addresses")
_P2P_CACHE_RE = re.compile(r"(?:reading|generating) GPU P2P access cache (?:from|in) (?P<path>\S+)")
_P2P_DISAGREE_RE = re.compile(r"Two processes do not agree on the P2P access status on (?P<src>\d+) -> (?P<dst>\d+)")
_P2P_SKIP_RE = re.compile(r"Skipping P2P check and trusting the driver's P2P report")
_NCCL_VERSION_RE = re.compile(r"vLLM is using nccl==(?P<ver>[\w.+-]+)")
_NCCL_LIBRARY_RE = re.compile(
    r"Found nccl from (?:library (?P<lib>\S+)|environment variable VLLM_NCCL_SO_PATH=(?P<env>\S+))"
)
_NCCL_LOAD_FAILED_RE = re.compile(r"Failed to load NCCL library from (?P<lib>\S+?)\.? ")
_AR_BACKENDS_RE = re.compile(
    r"Using (?P<backends>\[[^\]]*\]) all-reduce backends \(in dispatch order\) for group '(?P<group>[^']*)'"
    r"(?: out of potential backends: (?P<cands>\[[^\]]*\]))?"
)
_FLASHINFER_AR_RE = re.compile(r"(?:Using|Auto-selected) flashinfer allreduce backend: (?P<backend>\S+)")
_DIST_INIT_RE = re.compile(
    r"world_size=(?P<world>\d+) rank=(?P<rank>\d+) local_rank=(?P<local>\d+) "
    r"distributed_init_method=(?P<method>\S+) backend=(?P<backend>\w+)"
)
_RANK_ASSIGN_RE = re.compile(r"rank (?P<rank>\d+) in world size (?P<world>\d+) is assigned as (?P<rest>.*)")
_RANK_PART_RE = re.compile(r"\b(?P<group>DP|PP|PCP|TP|DCP|ETP|EP|EPLB) rank (?P<value>\d+|N/A)")
_RAY_TP_SPREAD_RE = re.compile(r"tensor_parallel_size=(?P<tp>\d+) is bigger than a reserved number of (?P<dev>\w+?)s")
_ALL2ALL_RE = re.compile(r"Using (?P<manager>\S+) all2all manager")
# Communication warnings without a more specific event: (regex, PerfWarning topic).
_COMM_WARNINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"SymmMemCommunicator: .*(?:not available|not supported|failed)"), "symm-mem"),
    (re.compile(r"To enable VLLM_USE_NCCL_SYMM_MEM"), "nccl-symm-mem"),
    (re.compile(r"Failed to compile NCCL memory allocator"), "nccl-symm-mem"),
    (re.compile(r"Failed to initialize FlashInfer All Reduce workspace"), "flashinfer-allreduce"),
    (re.compile(r"FlashInfer All Reduce is disabled"), "flashinfer-allreduce"),
    (re.compile(r"AllReduce fusion pass is disabled"), "allreduce-fusion"),
    (re.compile(r"NCCL_CUMEM_ENABLE is set to \S+, skipping override"), "nccl-cumem"),
    (re.compile(r"Reducing Torch parallelism from \d+ threads to \d+"), "cpu-threads"),
)


def parse_custom_allreduce(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    if _CUSTOM_AR_RE.search(text):
        reason = next((code for pattern, code in _CUSTOM_AR_DISABLED if pattern.search(text)), None)
        return [CustomAllReduce(**_base(line, ctx), enabled=False, reason=reason, message=_msg(line))]
    if _CUDA_GRAPH_ADDRESSES_RE.search(text):
        # Only the custom all-reduce registers CUDA-graph buffers: positive evidence that it is in use.
        return [CustomAllReduce(**_base(line, ctx), enabled=True, message=_msg(line))]
    return None


def parse_comm(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _NCCL_VERSION_RE.search(text)
    if m:
        return [NcclVersion(**base, version=m.group("ver"))]
    m = _AR_BACKENDS_RE.search(text)
    if m:
        backends = _names(m.group("backends"))
        events: Events = [
            AllReduceBackends(**base, backends=backends, group=m.group("group"), candidates=_names(m.group("cands")))
        ]
        if "CUSTOM" in backends:
            events.append(CustomAllReduce(**base, enabled=True, message=_msg(line)))
        return events
    if _P2P_CACHE_RE.search(text) or _P2P_SKIP_RE.search(text):
        return [P2PCheck(**base, supported=None, message=_msg(line))]
    if _P2P_DISAGREE_RE.search(text):
        return [P2PCheck(**base, supported=False, message=_msg(line))]
    m = _DIST_INIT_RE.search(text)
    if m:
        values: dict[str, str | int | float | bool] = {
            "world_size": int(m.group("world")),
            "rank": int(m.group("rank")),
            "local_rank": int(m.group("local")),
            "distributed_init_method": m.group("method"),
            "backend": m.group("backend"),
        }
        return [NcclInfo(**base, kind="distributed-init", message=_msg(line), values=values)]
    m = _RANK_ASSIGN_RE.search(text)
    if m:
        values = {"rank": int(m.group("rank")), "world_size": int(m.group("world"))}
        for part in _RANK_PART_RE.finditer(m.group("rest")):
            value = part.group("value")
            values[f"{part.group('group').lower()}_rank"] = int(value) if value.isdigit() else value
        return [NcclInfo(**base, kind="rank-assignment", message=_msg(line), values=values)]
    m = _NCCL_LIBRARY_RE.search(text)
    if m:
        return [
            NcclInfo(**base, kind="library", message=_msg(line), values={"library": m.group("lib") or m.group("env")})
        ]
    m = _NCCL_LOAD_FAILED_RE.search(text)
    if m:
        return [NcclInfo(**base, kind="library-load-failed", message=_msg(line), values={"library": m.group("lib")})]
    m = _FLASHINFER_AR_RE.search(text)
    if m:
        return [
            NcclInfo(**base, kind="allreduce-backend", message=_msg(line), values={"flashinfer": m.group("backend")})
        ]
    m = _ALL2ALL_RE.search(text)
    if m:
        return [NcclInfo(**base, kind="all2all", message=_msg(line), values={"manager": m.group("manager")})]
    m = _RAY_TP_SPREAD_RE.search(text)
    if m:
        return [PerfWarning(**base, topic="tp-spans-nodes", message=_msg(line))]
    warning = _table_warning(_COMM_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    if "SymmMemCommunicator:" in text:
        return []  # an INFO note such as `Using override max_size`: nothing wrong
    return None


# --- §6 attention backend ------------------------------------------------------------------------

# The English names of V0 (0.6 - 0.10) and early V1 (0.7 - 0.11.0) lines, as the enum (0.11.1+) names them.
_BACKEND_ENGLISH: dict[str, str] = {
    "Flash Attention": "FLASH_ATTN",
    "FlashAttention": "FLASH_ATTN",
    "XFormers": "XFORMERS",
    "Flashinfer": "FLASHINFER",
    "FlashInfer": "FLASHINFER",
    "Torch SDPA": "TORCH_SDPA",
    "ROCmFlashAttention": "ROCM_FLASH",
    "Pallas": "PALLAS",
    "IPEX attention": "IPEX",
    "OpenVINO Attention": "OPENVINO",
    "HPUAttention": "HPU_ATTN",
    "BlocksparseFlashAttention": "BLOCK_SPARSE_FLASH_ATTN",
    "DualChunkFlashAttention": "DUAL_CHUNK_FLASH_ATTN",
    "DifferentialFlashAttention": "DIFFERENTIAL_FLASH_ATTN",
    "Triton MLA": "TRITON_MLA",
    "FlashMLA": "FLASHMLA",
    "Triton": "TRITON_ATTN",
    "FlexAttention": "FLEX_ATTENTION",
    "Tree Attention": "TREE_ATTN",
    "Cutlass MLA": "CUTLASS_MLA",
    "FlashAttention MLA": "FLASH_ATTN_MLA",
    "FlashInfer MLA": "FLASHINFER_MLA",
}
_ENGLISH_BACKEND_RE = re.compile(
    r"Using (?P<name>"
    + "|".join(re.escape(n) for n in sorted(_BACKEND_ENGLISH, key=len, reverse=True))
    + r") backend(?P<rest>(?: with [^.]*?)?(?: for (?P<for>\S+))?(?P<v1> on V1 engine)?[^.]*)\."
)
_POTENTIAL_BACKENDS_RE = re.compile(
    r"Using (?P<backend>[\w.]+) (?:attention )?backend out of potential backends: (?P<cands>[\[(][^\])]*[\])])"
)
_FORCED_BACKEND_RE = re.compile(
    r"Using (?:AttentionBackendEnum\.|_Backend\.)?(?P<backend>[A-Z0-9_]+) backend(?P<how> \(selected via --attention-backend\))?\.\s*$"
)
_ENCODER_BACKEND_RE = re.compile(
    r"Using (?:backend )?(?P<backend>(?:AttentionBackendEnum\.|_Backend\.)?[A-Z0-9_]+) for "
    r"(?:vit attention|MMEncoderAttention)"
)
_MLA_PREFILL_RE = re.compile(r"Using (?P<backend>\S+) MLA prefill backend|Using (?P<fa>FlashAttention) prefill for MLA")
_FA_VERSION_RE = re.compile(r"Using FlashAttention version (?P<ver>\d+)")
_FA_UPGRADE_RE = re.compile(r"upgrading FlashAttention (?P<old>\d) -> (?P<new>\d)")
_FA_DOWNGRADE_RE = re.compile(
    r"Cannot use FA version (?P<old>\d) (?P<why>on Blackwell platform|with ALiBi|with batch invariance),? "
    r"defaulting to FA version (?P<new>\d)(?P<maybe> if supported)?"
)
_CANNOT_USE_FA_RE = re.compile(r"Cannot use FlashAttention(?:-2)? backend (?P<why>.*?)\.?\s*$")
_FA_REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Volta and Turing"), "unsupported-gpu"),
    (re.compile(r"dtype"), "dtype"),
    (re.compile(r"FP8 KV cache"), "fp8-kv-cache"),
    (re.compile(r"head size"), "head-size"),
    (re.compile(r"block size"), "block-size"),
    (re.compile(r"sliding window"), "sliding-window"),
    (re.compile(r"package is not found|not found|not installed"), "package-missing"),
)
_BLOCK_SIZE_PRECLUDED_RE = re.compile(
    r"--block-size (?P<size>\d+) precluded higher-priority backend\(s\) (?P<precluded>.+?)\. "
    r"Using (?P<backend>[\w.]+) instead"
)
_NO_VALID_BACKEND_RE = re.compile(r"No valid attention backend found for (?P<device>\S+)")
_BACKEND_NOT_VALID_RE = re.compile(
    r"Selected backend (?:AttentionBackendEnum\.)?(?P<backend>[A-Z0-9_]+) is not valid for this configuration"
)
_FLASHINFER_MISSING_RE = re.compile(r"FlashInfer failed to import for V1 engine on Blackwell")
_PLEASE_USE_FLASHINFER_RE = re.compile(r"Please use FlashInfer backend with FP8 KV Cache for better performance")
_GEMMA4_FORCED_RE = re.compile(r"Forcing (?P<backend>[A-Z0-9_]+) backend to prevent mixed-backend")
_UNKNOWN_ENV_RE = re.compile(r"Unknown vLLM environment variable detected: (?P<name>\w+)")
_ATTENTION_ENV_DEPRECATED_RE = re.compile(r"Using (?P<name>VLLM_\w+) environment variable is deprecated")
_V1_SUFFIX_RE = re.compile(r"The suffix '_VLLM_V1' in the environment variable VLLM_ATTENTION_BACKEND")


def _normalise_backend(name: str) -> str:
    """`AttentionBackendEnum.FLASHINFER`, `_Backend.FLASH_ATTN`, `flash_attn`, `FlashInfer` -> the enum name."""
    name = name.strip().strip("'\"")
    if name in _BACKEND_ENGLISH:
        return _BACKEND_ENGLISH[name]
    name = name.rsplit(".", 1)[-1]
    name = name.removesuffix("_VLLM_V1")
    return name.upper()


def parse_attention(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _POTENTIAL_BACKENDS_RE.search(text)
    if m:
        return [
            AttentionBackend(
                **base,
                backend=_normalise_backend(m.group("backend")),
                role="target",
                candidates=[_normalise_backend(c) for c in _names(m.group("cands"))],
                message=_msg(line),
            )
        ]
    m = _ENCODER_BACKEND_RE.search(text)
    if m:
        return [
            AttentionBackend(**base, backend=_normalise_backend(m.group("backend")), role="encoder", message=_msg(line))
        ]
    m = _FORCED_BACKEND_RE.search(text)
    if m and (m.group("how") or "BackendEnum." in text or "_Backend." in text):
        # `Using AttentionBackendEnum.X backend.`: printed only when the user chose the backend (0.11.1+).
        return [
            AttentionBackend(**base, backend=_normalise_backend(m.group("backend")), forced=True, message=_msg(line))
        ]
    m = _ENGLISH_BACKEND_RE.search(text)
    if m:
        return [AttentionBackend(**base, backend=_BACKEND_ENGLISH[m.group("name")], message=_msg(line))]
    m = _FA_VERSION_RE.search(text)
    if m:
        return [AttentionBackend(**base, backend="FLASH_ATTN", version=m.group("ver"), message=_msg(line))]
    m = _FA_UPGRADE_RE.search(text)
    if m:
        return [AttentionBackend(**base, backend="FLASH_ATTN", version=m.group("new"), message=_msg(line))]
    m = _FA_DOWNGRADE_RE.search(text)
    if m:
        why = {
            "on Blackwell platform": "fa3-blackwell",
            "with ALiBi": "alibi",
            "with batch invariance": "batch-invariance",
        }
        return [
            AttentionBackend(
                **base,
                backend="FLASH_ATTN",
                version=None if m.group("maybe") else m.group("new"),
                fallback_reason=why[m.group("why")],
                message=_msg(line),
            )
        ]
    m = _CANNOT_USE_FA_RE.search(text)
    if m:
        reason = next((code for pattern, code in _FA_REASONS if pattern.search(m.group("why"))), "other")
        return [AttentionBackend(**base, fallback_reason=reason, message=_msg(line))]
    m = _BLOCK_SIZE_PRECLUDED_RE.search(text)
    if m:
        chosen = _normalise_backend(m.group("backend"))
        precluded = [_normalise_backend(b) for b in _names(m.group("precluded"))]
        return [
            AttentionBackend(
                **base,
                backend=chosen,
                candidates=[*precluded, chosen],
                fallback_reason="block-size",
                message=_msg(line),
            )
        ]
    m = _MLA_PREFILL_RE.search(text)
    if m:
        backend = _normalise_backend(m.group("backend") or m.group("fa"))
        return [AttentionBackend(**base, backend=backend, role="prefill", message=_msg(line))]
    m = _BACKEND_NOT_VALID_RE.search(text)
    if m:
        return [
            AttentionBackend(**base, backend=m.group("backend"), fallback_reason="not-valid", message=_msg(line)),
            EngineFailure(**base, kind="startup-failed", message=_msg(line)),
        ]
    if _NO_VALID_BACKEND_RE.search(text):
        return [
            AttentionBackend(**base, fallback_reason="no-valid-backend", message=_msg(line)),
            EngineFailure(**base, kind="startup-failed", message=_msg(line)),
        ]
    if _FLASHINFER_MISSING_RE.search(text):
        return [AttentionBackend(**base, fallback_reason="flashinfer-missing", message=_msg(line))]
    m = _GEMMA4_FORCED_RE.search(text)
    if m:
        return [
            AttentionBackend(
                **base, backend=m.group("backend"), fallback_reason="heterogeneous-head-dim", message=_msg(line)
            )
        ]
    if _PLEASE_USE_FLASHINFER_RE.search(text):
        return [PerfWarning(**base, topic="attention-backend", message=_msg(line))]
    return None


_ENV_WARNINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Overwriting environment variable \S+ from"), "env-override"),
    (re.compile(r"VLLM_TRACE_FUNCTION is enabled"), "trace-function"),
    (re.compile(r"OMP_NUM_THREADS=\S+ is set; leaving Torch threads"), "cpu-threads"),
)


def parse_env_warnings(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _UNKNOWN_ENV_RE.search(text)
    if m:
        events: Events = [PerfWarning(**base, topic="env-unknown", message=_msg(line))]
        if m.group("name") == "VLLM_ATTENTION_BACKEND":
            # 0.15+ ignores the variable: whatever backend the user meant to force is not in effect.
            events.append(AttentionBackend(**base, fallback_reason="env-var-ignored", message=_msg(line)))
        return events
    if _ATTENTION_ENV_DEPRECATED_RE.search(text) or _V1_SUFFIX_RE.search(text):
        return [PerfWarning(**base, topic="env-deprecated", message=_msg(line))]
    warning = _table_warning(_ENV_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


# --- §7 KV cache, memory, model loading ----------------------------------------------------------

_KV_BLOCKS_RE = re.compile(r"# (?P<dev>\w+) blocks: (?P<blocks>\d+)(?:, # CPU blocks: (?P<cpu>\d+))?")
_KV_SIZE_RE = re.compile(
    r"(?P<dev>\w+(?: \+ host)?) KV cache size: (?P<tokens>[\d,]+) tokens"
    r"(?:, Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x)?"
)
_MAX_CONCURRENCY_RE = re.compile(r"Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x")
_AVAILABLE_KV_RE = re.compile(r"Available KV cache memory: (?P<gib>[-\d.]+) GiB")
_PROFILE_RESULTS_RE = re.compile(r"Memory profiling results: .*?kv_cache_size=(?P<kv>[-\d.]+)GiB")
_PROFILE_REST_RE = re.compile(r"the rest of the memory reserved for KV Cache is (?P<kv>[-\d.]+) ?GiB")
_PROFILE_TAKES_RE = re.compile(r"Memory profiling takes (?P<s>[\d.]+) seconds")
_BLOCKS_OVERRIDE_RE = re.compile(r"Overriding num_gpu_blocks=(?P<old>\d+) with num_gpu_blocks_override=(?P<new>\d+)")
_CACHE_CONFIG_INFO_RE = re.compile(r"cache_config_info with initialization after num_gpu_blocks is: (?P<blocks>\d+)")
_KV_RESERVED_RE = re.compile(
    r"Initial free memory (?P<free>[\d.]+) GiB, reserved (?P<kv>[\d.]+) GiB memory for KV Cache"
)
_KV_BLOCK_SIZE_RE = re.compile(r"(?:Setting|Forcing) kv cache block size to (?P<size>\d+) for (?P<backend>\S+) backend")
_AUTO_FIT_RE = re.compile(
    r"Auto-fit max_model_len: (?:reduced from (?P<old>\d+) to (?P<new>\d+) to fit in available "
    r"(?:GPU|KV cache) memory \((?:(?P<gib>[\d.]+) GiB available for KV cache)?|full model context length "
    r"(?P<full>\d+) fits)"
)
_PADDING_LAYERS_RE = re.compile(r"Add (?P<n>\d+) padding layers, may waste at most (?P<pct>[\d.]+)% KV cache memory")
# OOM-ish startup errors (raised ValueError / RuntimeError, seen inside `EngineCore failed to start` tracebacks).
_KV_NO_MEMORY_RE = re.compile(r"No available memory for the cache blocks")
_KV_TOO_SMALL_RE = re.compile(
    r"To serve at least one request with the models?'s max seq len \((?P<len>\d+)\), \((?P<need>" + _NUM + r") "
    r"Gi?B KV cache is needed, which is larger than the available KV cache memory \((?P<avail>" + _NUM + r") Gi?B\)"
    r"(?:\. Based on the available memory, the estimated maximum model length is (?P<est>\d+))?"
)
_V0_MAX_SEQ_RE = re.compile(
    r"The model's max seq len \((?P<len>\d+)\) is larger than the maximum number of tokens that can be stored "
    r"in KV cache \((?P<tokens>\d+)\)"
)
_FREE_MEMORY_RE = re.compile(r"Free memory on device .*? on startup is less than desired GPU memory utilization")
_WEIGHTS_TIME_RE = re.compile(r"Loading weights took (?P<s>[\d.]+) seconds")
_WEIGHTS_MEMORY_RE = re.compile(r"Loading model weights took (?P<mem>[\d.]+) (?P<unit>Gi?B)")
_MODEL_LOADING_RE = re.compile(
    r"Model loading took (?P<mem>[-\d.]+) (?P<unit>Gi?B)(?: memory)? and (?P<s>[\d.]+) seconds"
)
_SHARDS_BAR_RE = re.compile(
    r"Loading (?P<what>\w+) checkpoint shards:\s*(?P<pct>\d+)% Completed \| (?P<n>\d+)/(?P<total>\d+) "
    r"\[(?P<elapsed>[\d:]+)<"
)
_INIT_ENGINE_RE = re.compile(
    r"init engine \(profile, create kv cache, warmup model\) took (?P<s>[\d.]+) s(?:econds)?"
    r"(?: \(compilation: (?P<comp>[\d.]+) s(?: . language_model: (?P<lm>[\d.]+) s, encoder: (?P<enc>[\d.]+) s)?\))?"
)


def parse_kv_cache(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _KV_SIZE_RE.search(text)
    if m:
        return [
            KVCache(
                **base,
                kv_tokens=_i(m.group("tokens")),
                tokens_per_request=_i(m.group("len")),
                max_concurrency=_f(m.group("conc")),
                message=_msg(line),
            )
        ]
    m = _MAX_CONCURRENCY_RE.search(text)
    if m:
        return [
            KVCache(
                **base,
                tokens_per_request=_i(m.group("len")),
                max_concurrency=float(m.group("conc")),
                message=_msg(line),
            )
        ]
    m = _AVAILABLE_KV_RE.search(text)
    if m:
        return [KVCache(**base, available_memory_gib=float(m.group("gib")), message=_msg(line))]
    m = _KV_BLOCKS_RE.search(text)
    if m:
        # `# GPU blocks` (V0 <= 0.6.6, V1 0.6.6 - 0.7), `# CUDA blocks` (0.7), `# cuda blocks` / `# cpu blocks`
        # (0.8 - 0.11.0: the device's own blocks first, then the CPU swap blocks).
        return [KVCache(**base, gpu_blocks=int(m.group("blocks")), cpu_blocks=_i(m.group("cpu")), message=_msg(line))]
    m = _CACHE_CONFIG_INFO_RE.search(text)
    if m:
        return [KVCache(**base, gpu_blocks=int(m.group("blocks")), message=_msg(line))]
    m = _BLOCKS_OVERRIDE_RE.search(text)
    if m:
        return [KVCache(**base, gpu_blocks=int(m.group("new")), message=_msg(line))]
    m = _PROFILE_RESULTS_RE.search(text) or _PROFILE_REST_RE.search(text)
    if m:
        return [KVCache(**base, kv_cache_memory_gib=float(m.group("kv")), message=_msg(line))]
    m = _KV_RESERVED_RE.search(text)
    if m:
        return [KVCache(**base, kv_cache_memory_gib=float(m.group("kv")), message=_msg(line))]
    m = _KV_BLOCK_SIZE_RE.search(text)
    if m:
        return [KVCache(**base, block_size=int(m.group("size")), message=_msg(line))]
    m = _AUTO_FIT_RE.search(text)
    if m:
        events: Events = [ModelInfo(**base, max_model_len=int(m.group("new") or m.group("full")))]
        if m.group("gib"):
            events.append(KVCache(**base, available_memory_gib=float(m.group("gib")), message=_msg(line)))
        return events
    m = _PADDING_LAYERS_RE.search(text)
    if m:
        return [HybridModel(**base, kind="padding-layers", padding_percent=float(m.group("pct")), message=_msg(line))]
    m = _PROFILE_TAKES_RE.search(text)
    if m:
        return [CompileTime(**base, kind="memory_profiling", seconds=float(m.group("s")), message=_msg(line))]
    return None


def parse_kv_errors(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    if _is_traceback_code(text):
        return []
    base = _generic_base(line, ctx)
    m = _KV_TOO_SMALL_RE.search(text)
    if m:
        return [
            EngineFailure(**base, kind="kv-cache-insufficient", message=_msg(line)),
            KVCache(
                **base,
                tokens_per_request=int(m.group("len")),
                available_memory_gib=float(m.group("avail")),
                message=_msg(line),
            ),
        ]
    m = _V0_MAX_SEQ_RE.search(text)
    if m:
        return [
            EngineFailure(**base, kind="kv-cache-insufficient", message=_msg(line)),
            KVCache(
                **base, kv_tokens=int(m.group("tokens")), tokens_per_request=int(m.group("len")), message=_msg(line)
            ),
        ]
    if _KV_NO_MEMORY_RE.search(text):
        return [EngineFailure(**base, kind="kv-cache-insufficient", message=_msg(line))]
    if _FREE_MEMORY_RE.search(text):
        return [EngineFailure(**base, kind="gpu-memory-insufficient", message=_msg(line))]
    return None


def parse_model_load(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _MODEL_LOADING_RE.search(text)
    if m:
        return [
            CompileTime(
                **base,
                kind="model_load",
                seconds=float(m.group("s")),
                memory_gib=_gib(m.group("mem"), m.group("unit")),
                message=_msg(line),
            )
        ]
    m = _WEIGHTS_TIME_RE.search(text)
    if m:
        return [CompileTime(**base, kind="weights_load", seconds=float(m.group("s")), message=_msg(line))]
    m = _WEIGHTS_MEMORY_RE.search(text)
    if m:
        return [
            CompileTime(**base, kind="model_load", memory_gib=_gib(m.group("mem"), m.group("unit")), message=_msg(line))
        ]
    m = _SHARDS_BAR_RE.search(text)
    if m:
        if m.group("n") != m.group("total"):
            return []  # a tqdm redraw before the end: nothing to report yet
        # tqdm repaints the finished bar (often twice); report it once per process.
        seen: set[tuple[int | None, str, bool]] = ctx.state.setdefault(_CAPTURE_BARS, set())
        key = (line.process.pid if line.process else None, f"{m.group('what')} checkpoint shards", True)
        if key in seen:
            return []
        seen.add(key)
        return [
            CompileTime(**base, kind="weights_load", seconds=_clock_seconds(m.group("elapsed")), message=_msg(line))
        ]
    m = _INIT_ENGINE_RE.search(text)
    if m:
        events: Events = [CompileTime(**base, kind="init_engine", seconds=float(m.group("s")), message=_msg(line))]
        if m.group("comp"):
            events.append(CompileTime(**base, kind="compilation", seconds=float(m.group("comp")), message=_msg(line)))
        return events
    return None


# --- §8 mamba / hybrid models --------------------------------------------------------------------

_ATTN_BLOCK_SIZE_RE = re.compile(r"Setting attention block size to (?P<size>\d+) tokens")
_MAMBA_PADDING_RE = re.compile(r"Padding mamba page size by (?P<pct>[\d.]+)%")
_XPU_MAMBA_SCALED_RE = re.compile(r"Scaled mamba_page_size_padded from (?P<old>\d+) to (?P<new>\d+) bytes")
_XPU_MAMBA_PADDED_RE = re.compile(
    r"set mamba_page_size_padded to (?P<new>\d+) bytes accordingly, before was (?P<old>\d+) bytes"
)
_MAMBA_CACHE_MODE_RE = re.compile(
    r"Mamba cache mode is set to '(?P<mode>\w+)'(?: for (?P<arch>\S+))?(?: by default)? when prefix caching "
    r"(?P<state>is enabled|and speculative decoding are enabled|is disabled)"
)
_MAMBA_ALL_FALLBACK_RE = re.compile(
    r"Hybrid or mamba-based model detected without support for prefix caching with Mamba cache 'all' mode: "
    r"falling back to '(?P<mode>\w+)' mode"
)
_HYBRID_PREFIX_OFF_RE = re.compile(
    r"Hybrid or mamba-based model detected(?::| without support for prefix caching:) disabling"
    r"(?: prefix caching)?"
)
_HYBRID_PREFIX_ON_RE = re.compile(
    r"Warning: Prefix caching (?:in Mamba cache '(?P<mode>\w+)' mode )?is currently enabled\. Its support for Mamba"
)
_HYBRID_CUDAGRAPH_RE = re.compile(r"Hybrid or mamba-based model detected: setting cudagraph mode to (?P<mode>\w+)")
_HYBRID_NOTICES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Disabling cascade attention since it is not supported for hybrid models"), "hybrid-detected"),
    (
        re.compile(r"Hybrid model with EAGLE speculative decoding: defaulting prefix_cache_retention_interval"),
        "spec-decode",
    ),
    (re.compile(r"DS conv state layout does not yet support speculative decoding"), "spec-decode"),
    (re.compile(r"--mamba-cache-mode is deprecated"), "mamba-cache-mode"),
    (
        re.compile(
            r"Using FlashInfer GDN prefill kernel|Using Triton/FLA GDN prefill kernel|Using \S+ GDN prefill kernel"
        ),
        "gdn-kernel",
    ),
    (re.compile(r"GDN (?:spec )?decode kernel: "), "gdn-kernel"),
    (re.compile(r"GDN prefill kernel is JIT-compiled"), "gdn-kernel"),
    (re.compile(r"GDN prefill backend '\S+' is selected but cannot use this kernel"), "gdn-kernel-fallback"),
    (re.compile(r"Falling back to the Triton GDN (?:spec )?decode path"), "gdn-kernel-fallback"),
    (re.compile(r"Using \S+ Mamba SSU backend|Using FlashInfer Mamba SSU algorithm"), "mamba-ssu-kernel"),
    (re.compile(r"Updating mamba_ssm_cache_dtype to"), "mamba-cache-dtype"),
    (re.compile(r"specifies mamba_ssm_dtype='\S+' in its config, but --mamba-ssm-cache-dtype"), "mamba-cache-dtype"),
)
_HYBRID_ERRORS_RE = re.compile(
    r"Mamba with speculative decoding is not supported yet"
    r"|currently does not support 'all' prefix caching, please use '--mamba-cache-mode=align'"
)
_MAMBA_CAP_RE = re.compile(
    r"Capping cudagraph capture sizes from max (?P<old>\d+) to (?P<new>\d+) to fit Mamba cache blocks "
    r"\((?P<blocks>\d+) blocks available\)"
)
_MAMBA_CAP_NONE_RE = re.compile(r"No valid cudagraph capture sizes remain after capping to Mamba cache blocks")
_HYBRID_WARNINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Hybrid KV cache manager is disabled for this hybrid model"), "hybrid-kv-cache-manager"),
    (re.compile(r"Turning off hybrid kv cache manager because"), "hybrid-kv-cache-manager"),
    (re.compile(r"Using default Mamba SSU config"), "mamba-ssu-config"),
    (re.compile(r"(?:GDN prefill kernel|Mamba2 SSD kernel) warmup .*?failed"), "kernel-warmup"),
)


def parse_hybrid(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _ATTN_BLOCK_SIZE_RE.search(text)
    if m:
        return [
            HybridModel(
                **base, kind="block-size-alignment", attention_block_size=int(m.group("size")), message=_msg(line)
            )
        ]
    m = _MAMBA_PADDING_RE.search(text)
    if m:
        return [
            HybridModel(**base, kind="mamba-page-padding", padding_percent=float(m.group("pct")), message=_msg(line))
        ]
    m = _XPU_MAMBA_SCALED_RE.search(text) or _XPU_MAMBA_PADDED_RE.search(text)
    if m:
        old, new = int(m.group("old")), int(m.group("new"))
        percent = round((new - old) / old * 100, 4) if old else None
        return [HybridModel(**base, kind="mamba-page-padding", padding_percent=percent, message=_msg(line))]
    m = _MAMBA_CACHE_MODE_RE.search(text)
    if m:
        enabled = m.group("state") != "is disabled"
        return [
            HybridModel(
                **base,
                kind="mamba-cache-mode",
                mamba_cache_mode=m.group("mode"),
                prefix_caching=enabled,
                message=_msg(line),
            )
        ]
    m = _MAMBA_ALL_FALLBACK_RE.search(text)
    if m:
        return [HybridModel(**base, kind="mamba-cache-mode", mamba_cache_mode=m.group("mode"), message=_msg(line))]
    m = _HYBRID_CUDAGRAPH_RE.search(text)
    if m:
        return [HybridModel(**base, kind="hybrid-detected", message=_msg(line))]
    if _HYBRID_PREFIX_OFF_RE.search(text):
        return [
            HybridModel(**base, kind="prefix-caching", prefix_caching=False, message=_msg(line)),
            SchedulerConfig(**base, kind="prefix-caching", enabled=False, message=_msg(line)),
        ]
    m = _HYBRID_PREFIX_ON_RE.search(text)
    if m:
        return [
            HybridModel(
                **base, kind="prefix-caching", prefix_caching=True, mamba_cache_mode=m.group("mode"), message=_msg(line)
            )
        ]
    m = _MAMBA_CAP_RE.search(text)
    if m:
        return [
            CudaGraph(
                **base, kind="capture_capped", role="target", max_batch_size=int(m.group("new")), message=_msg(line)
            ),
            HybridModel(**base, kind="cudagraph-cap", message=_msg(line)),
        ]
    if _MAMBA_CAP_NONE_RE.search(text):
        # Every capture size exceeded the Mamba blocks: CUDA graphs are silently off.
        return [
            CudaGraph(
                **base, kind="capture_capped", role="target", max_batch_size=0, mode_to="NONE", message=_msg(line)
            ),
            HybridModel(**base, kind="cudagraph-cap", message=_msg(line)),
        ]
    if _HYBRID_ERRORS_RE.search(text):
        if _is_traceback_code(text):
            return []
        return [
            HybridModel(
                **base, kind="spec-decode" if "speculative" in text else "mamba-cache-mode", message=_msg(line)
            ),
            EngineFailure(**base, kind="startup-failed", message=_msg(line)),
        ]
    for pattern, kind in _HYBRID_NOTICES:
        if pattern.search(text):
            return [HybridModel(**base, kind=kind, message=_msg(line))]
    warning = _table_warning(_HYBRID_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


# --- §9 CUDA graphs and torch.compile ------------------------------------------------------------

_CAPTURE_BAR_RE = re.compile(
    r"Capturing (?:(?P<what>[\w-]+(?: [\w-]+)?) )?CUDA graph(?:s| shapes)"
    r"(?: \((?P<batch>[^,()]+), (?P<mode>[A-Z_]+)\))?:\s*(?P<pct>\d+)%"
    r"(?:.*?(?P<n>\d+)/(?P<total>\d+)(?: \[(?P<elapsed>[\d:]+)<)?)?"
)
_CAPTURE_STARTED_RE = re.compile(r"Capturing the model for CUDA graphs|Capturing cudagraphs for decoding")
_CAPTURE_DRAFTER_RE = re.compile(r"Capturing model for (?P<what>.*?) ?speculator\.\.\.")
_CAPTURE_FINISHED_RE = re.compile(
    r"(?P<encoder>Encoder g|G)raph capturing finished in (?P<s>[\d.]+) secs?(?:, took (?P<gib>[-\d.]+) GiB)?"
)
_CAPTURE_SKIPPED_RE = re.compile(r"Skipping (?P<what>encoder and decoder )?CUDA graph capture")
_EAGER_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"Cudagraph is disabled under eager mode"),
    re.compile(r"CUDA graph is not supported (?:on|for) .*? yet, fallback to (?:the )?eager mode"),
    re.compile(r"Forcing enforce[ _]eager (?:to be True|== True)"),
    re.compile(r"(?:Disabling CUDA Graphs|disabling cudagraphs) since (?:DP with )?DeepEP"),
    re.compile(r"To see benefits of async output processing, enable CUDA graph"),
)
_ENFORCE_EAGER_RE = re.compile(r"Enforce eager set, disabling torch\.compile")
_MODE_SPEC_RE = re.compile(
    r"CUDAGraphMode\.(?P<from>\w+) is not supported with (?P<rest>.*?)(?:; setting cudagraph_mode=(?P<to>[A-Z_]+)|;|…|$)"
)
_MODE_COMPILATION_RE = re.compile(
    r"Cudagraph mode (?:CUDAGraphMode\.)?(?P<from>\w+) is not compatible with compilation mode "
    r"(?:CompilationMode\.)?(?P<cm>\w+)\. ?Overriding to (?:CUDAGraphMode\.)?(?P<to>[A-Z_]+)"
)
_MODE_OVERRIDE_RE = re.compile(
    r"[Oo]verriding cudagraph_mode (?:from )?(?:(?:CUDAGraphMode\.)?(?P<from>[A-Z_]+) )?to (?:CUDAGraphMode\.)?(?P<to>[A-Z_]+)"
)
_MODE_SET_NONE_RE = re.compile(r"Setting cudagraph_mode to (?P<to>[A-Z_]+)")
_MODE_FROM_SUPPORT_RE = re.compile(r"do not support (?P<from>[A-Z_]+)\.")
_CAPTURE_SIZES_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"Truncating max_cudagraph_capture_size to (?P<n>\d+)"),
    re.compile(r"Overriding max cuda graph capture size to (?P<n>\d+)"),
    re.compile(
        r"cudagraph_capture_sizes specified in compilation_config .*? is overridden by config (?P<sizes>\[[^\]]*\])"
    ),
)
_CUDAGRAPH_MEMORY_RE = re.compile(
    r"Estimated CUDA graph memory: (?P<est>[\d.]+) GiB total"
    r"|CUDA graph pool memory: (?P<actual>[\d.]+) GiB \(actual\)"
    r"|CUDA graph memory profiling is (?:enabled|disabled)"
    r"|Profiling CUDA graph memory"
)
_CASCADE_EAGER_RE = re.compile(r"No piecewise cudagraph for executing cascade attention")

_DYNAMO_RE = re.compile(r"Dynamo bytecode transform time: (?P<s>[\d.]+) s")
_GRAPH_COMPILE_RE = re.compile(
    r"Compiling a graph for (?:general shape|dynamic shape|shape \S+|compile range \([^)]*\)) takes (?P<s>[\d.]+) s"
)
_GRAPH_CACHE_SAVE_RE = re.compile(
    r"Cache the graph (?:of shape \S+|for dynamic shape|of compile range \([^)]*\)) for later use"
)
_GRAPH_CACHE_LOAD_RE = re.compile(
    r"Directly load the compiled graph(?:\(s\))? for .*? from the cache(?:, took (?P<s>[\d.]+) s)?"
)
_AOT_RE = re.compile(r"(?P<load>Directly load AOT compilation from path)|saved AOT compiled function to")
_COMPILE_AND_WARMUP_RE = re.compile(r"torch\.compile and initial profiling/warmup run together took (?P<s>[\d.]+) s")
_TORCH_COMPILE_TOTAL_RE = re.compile(r"torch\.compile (?:takes|took) (?P<s>[\d.]+) s in total")
_WARMUP_RE = re.compile(r"Initial profiling/warmup run took (?P<s>[\d.]+) s")
_COMPILE_CACHE_DIR_RE = re.compile(r"Using cache directory: (?P<dir>\S+) for vLLM's torch\.compile")
_COMPILE_CACHE_DISABLED_RE = re.compile(r"vLLM's torch\.compile cache is disabled")
_COMPILE_OFF_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"`torch\.compile` is turned on, but the model \S+ does not support it"),
    re.compile(r"Inductor compilation was disabled by user settings"),
    re.compile(r"TORCH_COMPILE_DISABLE is set, disabling torch\.compile"),
    re.compile(r"CPU offload is not supported with `torch\.compile`"),
)


def parse_capture_bar(line: LogLine, ctx: ParseContext) -> Events | None:
    """tqdm bars (no vLLM header): report a bar when first seen and when it completes, not every redraw."""
    m = _CAPTURE_BAR_RE.search(line.message)
    if not m:
        return None
    what = (m.group("what") or "").lower()
    role: Literal["target", "drafter"] = (
        "drafter" if any(w in what for w in ("eagle", "dflash", "dspark", "draft", "mtp", "specul")) else "target"
    )
    desc = line.message[m.start() : m.start("pct")].rstrip(": ").strip()
    done = m.group("pct") == "100"
    seen: set[tuple[int | None, str, bool]] = ctx.state.setdefault(_CAPTURE_BARS, set())
    pid = line.process.pid if line.process else None
    key = (pid, desc, done)
    if key in seen or (not done and (pid, desc, True) in seen):
        return []
    seen.add(key)
    seconds = _clock_seconds(m.group("elapsed")) if done and m.group("elapsed") else None
    return [
        CudaGraph(
            **_base(line, ctx),
            kind="capture_progress",
            role=role,
            mode=m.group("mode"),
            seconds=seconds,
            message=desc + f": {m.group('pct')}%",
        )
    ]


def parse_cuda_graphs(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _CAPTURE_FINISHED_RE.search(text)
    if m:
        return [
            CudaGraph(
                **base,
                kind="capture_finished",
                role="encoder" if m.group("encoder") == "Encoder g" else "target",
                seconds=float(m.group("s")),
                memory_gib=_f(m.group("gib")),
                message=_msg(line),
            )
        ]
    m = _CAPTURE_DRAFTER_RE.search(text)
    if m:
        return [CudaGraph(**base, kind="capture_started", role="drafter", message=_msg(line))]
    if _CAPTURE_STARTED_RE.search(text):
        return [CudaGraph(**base, kind="capture_started", role="target", message=_msg(line))]
    m = _CAPTURE_SKIPPED_RE.search(text)
    if m:
        return [CudaGraph(**base, kind="capture_skipped", role="target", message=_msg(line))]
    if _ENFORCE_EAGER_RE.search(text):
        return [
            CudaGraph(**base, kind="eager_mode", role="target", mode_to="NONE", message=_msg(line)),
            CompileTime(**base, kind="compile_disabled", message=_msg(line)),
        ]
    if any(p.search(text) for p in _EAGER_RES):
        return [CudaGraph(**base, kind="eager_mode", role="target", message=_msg(line))]
    m = _MODE_SPEC_RE.search(text) or _MODE_COMPILATION_RE.search(text)
    if m:
        return [
            CudaGraph(
                **base,
                kind="mode_downgrade",
                role="target",
                mode_from=m.group("from"),
                mode_to=m.group("to"),
                message=_msg(line),
            )
        ]
    m = _MODE_OVERRIDE_RE.search(text) or _MODE_SET_NONE_RE.search(text)
    if m:
        mode_from = m.groupdict().get("from")
        if mode_from is None:
            support = _MODE_FROM_SUPPORT_RE.search(text)
            mode_from = support.group("from") if support else None
        return [
            CudaGraph(
                **base,
                kind="mode_downgrade",
                role="target",
                mode_from=mode_from,
                mode_to=m.group("to"),
                message=_msg(line),
            )
        ]
    for pattern in _CAPTURE_SIZES_RES:
        m = pattern.search(text)
        if m:
            sizes = [int(s) for s in _names(m.groupdict().get("sizes")) if s.isdigit()] or None
            size = m.groupdict().get("n")
            return [
                CudaGraph(
                    **base,
                    kind="capture_sizes",
                    role="target",
                    max_batch_size=int(size) if size else (max(sizes) if sizes else None),
                    batch_sizes=sizes,
                    message=_msg(line),
                )
            ]
    m = _CUDAGRAPH_MEMORY_RE.search(text)
    if m:
        gib = _f(m.group("est") or m.group("actual"))
        return [CudaGraph(**base, kind="memory_profile", role="target", memory_gib=gib, message=_msg(line))]
    if _CASCADE_EAGER_RE.search(text):
        return [PerfWarning(**base, topic="cudagraph-cascade", message=_msg(line))]
    return None


def parse_compile(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    for kind, pattern in (
        ("dynamo", _DYNAMO_RE),
        ("graph_compile", _GRAPH_COMPILE_RE),
        ("compile_and_warmup", _COMPILE_AND_WARMUP_RE),
        ("torch_compile", _TORCH_COMPILE_TOTAL_RE),
        ("warmup", _WARMUP_RE),
    ):
        m = pattern.search(text)
        if m:
            return [CompileTime(**base, kind=kind, seconds=float(m.group("s")), message=_msg(line))]
    if _GRAPH_CACHE_SAVE_RE.search(text):
        # Compiled now and saved: the compile cache missed.
        return [CompileTime(**base, kind="cache_save", cache_hit=False, message=_msg(line))]
    m = _GRAPH_CACHE_LOAD_RE.search(text)
    if m:
        return [CompileTime(**base, kind="cache_load", cache_hit=True, seconds=_f(m.group("s")), message=_msg(line))]
    m = _AOT_RE.search(text)
    if m:
        hit = m.group("load") is not None
        return [CompileTime(**base, kind="cache_load" if hit else "cache_save", cache_hit=hit, message=_msg(line))]
    if _COMPILE_CACHE_DIR_RE.search(text):
        return [CompileTime(**base, kind="cache_dir", message=_msg(line))]
    if _COMPILE_CACHE_DISABLED_RE.search(text):
        return [CompileTime(**base, kind="cache_disabled", cache_hit=False, message=_msg(line))]
    if any(p.search(text) for p in _COMPILE_OFF_RES):
        events: Events = [CompileTime(**base, kind="compile_disabled", message=_msg(line))]
        if "CPU offload" in text:
            events.append(Offload(**base, kind="weights", message=_msg(line)))
        return events
    return None


# --- §10 scheduling: chunked prefill, batch limits, async scheduling, prefix caching --------------

_CHUNKED_PREFILL_RE = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>\d+)")
_CHUNKED_PREFILL_32K_RE = re.compile(r"Chunked prefill is enabled by default for models with max_model_len > 32K")
_BY_DEFAULT_RE = re.compile(r"\(?(?P<how>Enabling|Disabling)\)? (?P<what>chunked prefill|prefix caching) by default")
_BATCH_LIMIT_RE = re.compile(
    r"(?:Setting|Defaulting) (?P<what>max_num_batched_tokens|max_num_seqs) to (?P<n>\d+) for \S+ usage context"
)
_BATCHED_EXCEEDS_RE = re.compile(r"max_num_batched_tokens \((?P<n>\d+)\) exceeds max_num_seqs \* max_model_len")
_ASYNC_STATE_RE = re.compile(r"Asynchronous scheduling is (?P<state>enabled|disabled)")
_ASYNC_OFF_RE = re.compile(
    r"Async scheduling (?:is not yet supported|will be disabled|not supported|is not compatible|is disabled)"
)
_ASYNC_ON_RE = re.compile(
    r"(?:Using|Defaulting to) mp-based distributed executor backend for async scheduling"
    r"|Disabling NCCL for DP synchronization when using async scheduling"
)
_CUSTOM_SCHEDULER_RE = re.compile(r"degraded performance due to async scheduling being disabled")
# (regex, {kind: enabled}): lines that switch chunked prefill / prefix caching.
_SCHEDULER_SWITCHES: tuple[tuple[re.Pattern[str], dict[str, bool]], ...] = (
    (re.compile(r"Automatic prefix caching is enabled"), {"prefix-caching": True}),
    (re.compile(r"Disabling chunked prefill for model without KVCache"), {"chunked-prefill": False}),
    (re.compile(r"Disabling chunked prefill: model has non-causal attention"), {"chunked-prefill": False}),
    (re.compile(r"Disabling prefix caching: model has non-causal attention"), {"prefix-caching": False}),
    (
        re.compile(r"do not support chunked prefill nor prefix caching; disabling both"),
        {"chunked-prefill": False, "prefix-caching": False},
    ),
    (
        re.compile(r"forcing chunked prefill and prefix caching to be disabled"),
        {"chunked-prefill": False, "prefix-caching": False},
    ),
    (re.compile(r"Prefix caching is not supported for .*?; disabling it"), {"prefix-caching": False}),
    (re.compile(r"KV cache events are on, but prefix caching is not enabled"), {"prefix-caching": False}),
    (re.compile(r"Prefix caching has been disabled"), {"prefix-caching": False}),
    (re.compile(r"Disabling prefix caching for \S+ with batch invariance"), {"prefix-caching": False}),
)
_MODEL_SUPPORT_RE = re.compile(
    r"This model does not officially support (?:disabling )?(?:chunked prefill|prefix caching)"
)


def parse_scheduling(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _CHUNKED_PREFILL_RE.search(text)
    if m:
        return [
            SchedulerConfig(**base, kind="chunked-prefill", enabled=True, value=int(m.group("n")), message=_msg(line))
        ]
    if _CHUNKED_PREFILL_32K_RE.search(text):
        return [SchedulerConfig(**base, kind="chunked-prefill", enabled=True, message=_msg(line))]
    m = _BY_DEFAULT_RE.search(text)
    if m:
        kind = "chunked-prefill" if m.group("what") == "chunked prefill" else "prefix-caching"
        return [SchedulerConfig(**base, kind=kind, enabled=m.group("how") == "Enabling", message=_msg(line))]
    m = _BATCH_LIMIT_RE.search(text) or _BATCHED_EXCEEDS_RE.search(text)
    if m:
        what = m.groupdict().get("what") or "max_num_batched_tokens"
        kind = "max-num-seqs" if what == "max_num_seqs" else "max-num-batched-tokens"
        return [SchedulerConfig(**base, kind=kind, value=int(m.group("n")), message=_msg(line))]
    m = _ASYNC_STATE_RE.search(text)
    if m:
        return [
            SchedulerConfig(**base, kind="async-scheduling", enabled=m.group("state") == "enabled", message=_msg(line))
        ]
    if _ASYNC_OFF_RE.search(text):
        return [SchedulerConfig(**base, kind="async-scheduling", enabled=False, message=_msg(line))]
    if _ASYNC_ON_RE.search(text):
        return [SchedulerConfig(**base, kind="async-scheduling", enabled=True, message=_msg(line))]
    if _CUSTOM_SCHEDULER_RE.search(text):
        return [PerfWarning(**base, topic="async-scheduling", message=_msg(line))]
    for pattern, switches in _SCHEDULER_SWITCHES:
        if pattern.search(text):
            return [
                SchedulerConfig(**base, kind=kind, enabled=enabled, message=_msg(line))
                for kind, enabled in switches.items()
            ]
    if _MODEL_SUPPORT_RE.search(text):
        return [PerfWarning(**base, topic="model-support", message=_msg(line))]
    return None


# --- §11 errors: engine death, OOM, CUDA/NCCL errors, timeouts -----------------------------------

# (regex, EngineFailure kind), first match wins. Exception lines (`RuntimeError: ...`) are matched by their
# text, so a traceback logged through vLLM's formatter and one Python printed bare give the same event.
_FAILURES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"EngineCore failed to start"), "startup-failed"),
    (re.compile(r"WorkerProc failed to start"), "startup-failed"),
    (re.compile(r"Engine core initialization failed"), "startup-failed"),
    (re.compile(r"RPCServer process died before responding to readiness probe"), "startup-failed"),
    (
        re.compile(
            r"Timed out waiting for (?:new )?(?:engines to send ?initial message|engine core processes to start)"
        ),
        "startup-failed",
    ),
    (re.compile(r"CUDA out of memory"), "cuda-oom"),
    (re.compile(r"CUDA error: "), "cuda-error"),
    (re.compile(r"NCCL error: "), "nccl-error"),
    (re.compile(r"Watchdog caught collective operation timeout"), "watchdog"),
    (re.compile(r"Fault detected in EP all2all communication"), "nccl-timeout"),
    (re.compile(r"Barrier (?:departure )?timed out after"), "nccl-timeout"),
    (re.compile(r"RPC call to \S+ timed out"), "rpc-timeout"),
    (re.compile(r"Engine iteration timed out"), "rpc-timeout"),
    (re.compile(r"No available (?:shared memory broadcast )?block found in"), "shm-broadcast-wait"),
    (re.compile(r"EngineCore encountered a fatal error"), "engine-dead"),
    (re.compile(r"EngineCore hit an exception"), "engine-dead"),
    (re.compile(r"EngineDeadError"), "engine-dead"),
    (re.compile(r"Engine core proc \S+ died unexpectedly"), "engine-dead"),
    (re.compile(r"Engine core process \S+ died unexpectedly"), "engine-dead"),
    (re.compile(r"\[shutdown\] MPClient: engine core exited unexpectedly"), "engine-dead"),
    (re.compile(r"AsyncLLM output_handler failed"), "engine-dead"),
    (re.compile(r"Request \S+ failed \(engine dead\)"), "engine-dead"),
    (re.compile(r"Engine background task failed"), "engine-dead"),
    (re.compile(r"Background loop (?:has errored already|is stopped|is not running)"), "engine-dead"),
    (
        re.compile(r"(?:AsyncLLMEngine|MQLLMEngine) (?:has failed|is already dead), terminating server process"),
        "engine-dead",
    ),
    (
        re.compile(r"(?:Got|MulitprocExecutor got|MultiprocExecutor got) fatal signal from worker processes"),
        "worker-died",
    ),
    (re.compile(r"WorkerProc (?:hit an exception|failed)"), "worker-died"),
    (re.compile(r"(?:Ray)?Worker ?[Pp]roc \S+ died unexpectedly"), "worker-died"),
    (re.compile(r"RayWorkerProc failed"), "worker-died"),
    (re.compile(r"Worker \S+ pid \S+ died, exit code"), "worker-died"),
    (re.compile(r"Process \S+ \(PID: \d+\) died with exit code"), "worker-died"),
    (re.compile(r"Error in chat completion stream generator"), "exception"),
)


def parse_failure(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    for pattern, kind in _FAILURES:
        if pattern.search(text):
            if _is_traceback_code(text):
                return []  # source text quoted in a traceback, not the error itself
            return [EngineFailure(**_generic_base(line, ctx), kind=kind, message=_msg(line))]
    return None


# --- §12 model, quantization and kernels, platform, offload, misc --------------------------------

_MAX_MODEL_LEN_RE = re.compile(r"Using max model len (?P<n>\d+)")
_ARCHITECTURE_RE = re.compile(r"Resolved architecture: (?P<arch>\S+)")
_DOWNCASTING_RE = re.compile(r"Downcasting (?P<src>\S+) to (?P<dst>[\w.]+?)\.?\s*$")
_TRANSFORMERS_FALLBACK_RE = re.compile(
    r"(?P<arch>\S+) has no vLLM implementation, falling back to Transformers implementation"
    r"|Using Transformers (?:modeling )?backend\."
    r"|does not define a tensor parallel plan\. The Transformers modeling backend"
)
_MODEL_WARNINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"sampling parameters have been overridden by"), "generation-config"),
    (re.compile(r"Using a slow tokenizer"), "tokenizer"),
    (re.compile(r"Hidden layers were unevenly partitioned"), "pp-partition"),
    (re.compile(r"The max_model_len \(\d+\) is too large\. This may degrade the performance"), "max-model-len"),
    (re.compile(r"Sparse MLA top-k mask workspace .*? is too small"), "sparse-mla"),
    (re.compile(r"^Using V2 Model Runner|Model Runner V2 does not yet support"), "model-runner"),
)

_MARLIN_NO_NATIVE_RE = re.compile(
    r"Your GPU does not have native support for (?P<fmt>FP8|FP4) computation but \S+ quantization is being used"
)
_MARLIN_NOTES_RE = re.compile(
    r"You are running Marlin kernel with bf16 on GPUs before SM90|Marlin requires thread-tile padding"
)
_FORCED_SLOW_QUANT_RE = re.compile(
    r"Detected that the model can run with (?P<fast>\w+), \**however you specified quantization=(?P<slow>\w+) explicitly"
)
_CONVERTIBLE_RE = re.compile(
    r"The model is convertible to (?P<method>\w+) during runtime\. Using (?P<kernel>\w+) kernel"
)
_QUANT_NOT_OPTIMIZED_RE = re.compile(r"(?P<method>\S+) quantization is not fully optimized yet")
_GPTQ_MARLIN_KERNEL_RE = re.compile(r"Using (?P<kernel>\w+) for GPTQMarlinLinearMethod")
_SELECTED_KERNEL_RE = re.compile(r"Selected (?P<kernel>\w+) for (?P<method>\w+)")
_NVFP4_GEMM_RE = re.compile(r"Using (?P<kernel>\S+) for NVFP4 GEMM")
_MOE_BACKEND_RE = re.compile(
    r"Using '?(?P<kernel>[^' ]+)'? (?P<method>Fp8|NvFp4|Mxfp4|WNA16|Int8|MxFp8|W4A8|) ?MoE backend"
)
_EMULATION_MOE_RE = re.compile(
    r"Using (?P<kernel>\w+EmulationTritonExperts|OCP_MXQuantizationEmulationTritonExperts) MoE backend", re.I
)
_MXFP4_NO_FLASHINFER_RE = re.compile(r"MXFP4 MoE is enabled on Hopper/Blackwell but FlashInfer is not available")
_DEEPGEMM_RE = re.compile(
    r"Using DeepGemm kernels for (?P<method>\w+)|(?P<unsupported>DeepGemm not supported on the current platform)"
)
_CHECKPOINT_RE = re.compile(r"Detected (?P<method>fp8|ModelOpt NVFP4) checkpoint")
_QUANT_WARNINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Using default MoE config\. Performance might be sub-optimal"), "moe-config"),
    (re.compile(r"Using default W8A8 Block FP8 kernel config"), "fp8-block-config"),
    (re.compile(r"Using default W8A8 Block INT8 kernel config"), "int8-block-config"),
)

_PLATFORM_RE = re.compile(r"Automatically detected platform (?P<platform>\w+)")
_PIN_MEMORY_RE = re.compile(r"Pin memory is not supported on (?P<platform>\w+)")
_SWAP_SPACE_RE = re.compile(r"Possibly too large swap space\. (?P<gib>[\d.]+) GiB out of the")
_CPU_OFFLOAD_RE = re.compile(r"Total CPU offloaded parameters: (?P<value>[\d.]+)(?: ?(?P<unit>[GMT]i?Bs?))?")
_KV_OFFLOAD_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"Pinned memory not available\. CPU offload performance may be degraded"),
    re.compile(r"disabling CPU offload since it requires prefix caching"),
    re.compile(r"cudaHostRegister failed"),
    re.compile(r"Initializing KVConnectorBase_V1"),
)


def parse_model(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _MAX_MODEL_LEN_RE.search(text)
    if m:
        return [ModelInfo(**base, max_model_len=int(m.group("n")))]
    m = _ARCHITECTURE_RE.search(text)
    if m:
        return [ModelInfo(**base, architecture=m.group("arch"))]
    m = _DOWNCASTING_RE.search(text)
    if m:
        return [ModelInfo(**base, dtype=m.group("dst"))]
    m = _TRANSFORMERS_FALLBACK_RE.search(text)
    if m:
        events: Events = [PerfWarning(**base, topic="transformers-backend", message=_msg(line))]
        if m.group("arch"):
            events.append(ModelInfo(**base, architecture=m.group("arch")))
        return events
    warning = _table_warning(_MODEL_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


def parse_quantization(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _MARLIN_NO_NATIVE_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("fmt").lower(), kernel="Marlin", fallback=True, message=_msg(line))]
    m = _FORCED_SLOW_QUANT_RE.search(text)
    if m:
        # The user asked for the plain kernel although the Marlin one would run: slower GEMMs.
        return [Quantization(**base, method=m.group("slow"), fallback=True, message=_msg(line))]
    m = _CONVERTIBLE_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("method"), kernel=m.group("kernel"), message=_msg(line))]
    m = _QUANT_NOT_OPTIMIZED_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("method"), message=_msg(line))]
    if _MARLIN_NOTES_RE.search(text):
        return [Quantization(**base, kernel="Marlin", message=_msg(line))]
    m = _GPTQ_MARLIN_KERNEL_RE.search(text)
    if m:
        return [Quantization(**base, method="gptq_marlin", kernel=m.group("kernel"), message=_msg(line))]
    m = _EMULATION_MOE_RE.search(text)
    if m:
        return [Quantization(**base, kernel=m.group("kernel"), fallback=True, message=_msg(line))]
    m = _MOE_BACKEND_RE.search(text)
    if m:
        method = m.group("method").lower() or None
        return [Quantization(**base, method=method, kernel=m.group("kernel"), message=_msg(line))]
    m = _NVFP4_GEMM_RE.search(text)
    if m:
        return [Quantization(**base, method="nvfp4", kernel=m.group("kernel"), message=_msg(line))]
    m = _SELECTED_KERNEL_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("method"), kernel=m.group("kernel"), message=_msg(line))]
    if _MXFP4_NO_FLASHINFER_RE.search(text):
        return [Quantization(**base, method="mxfp4", fallback=True, message=_msg(line))]
    m = _DEEPGEMM_RE.search(text)
    if m:
        unsupported = m.group("unsupported") is not None
        return [
            Quantization(
                **base,
                method="fp8",
                kernel=None if unsupported else "DeepGemm",
                fallback=unsupported,
                message=_msg(line),
            )
        ]
    m = _CHECKPOINT_RE.search(text)
    if m:
        method = "fp8" if m.group("method") == "fp8" else "modelopt_fp4"
        return [Quantization(**base, method=method, message=_msg(line))]
    warning = _table_warning(_QUANT_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


def parse_platform(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _PLATFORM_RE.search(text) or _PIN_MEMORY_RE.search(text)
    if m:
        return [Platform(**base, platform=m.group("platform").lower(), message=_msg(line))]
    m = _SWAP_SPACE_RE.search(text)
    if m:
        return [Offload(**base, kind="swap", gib=float(m.group("gib")), message=_msg(line))]
    m = _CPU_OFFLOAD_RE.search(text)
    if m:
        unit = m.group("unit")
        gib = _gib(m.group("value"), unit) if unit else None
        return [Offload(**base, kind="weights", gib=gib, message=_msg(line))]
    if any(p.search(text) for p in _KV_OFFLOAD_RES):
        return [Offload(**base, kind="kv", message=_msg(line))]
    return None


# --- the grammars --------------------------------------------------------------------------------


def _claims(line: LogLine, ctx: ParseContext) -> bool:
    """vLLM grammars leave alone what another engine's header (or --engine) says is not vLLM's."""
    return ctx.forced_engine in (None, "vllm") and line.engine_hint in (None, "vllm")


def _grammar(name: str, keywords: Iterable[str], parse: ParseFn, samples: Iterable[str]) -> Grammar:
    def guarded(line: LogLine, ctx: ParseContext) -> Events | None:
        return parse(line, ctx) if _claims(line, ctx) else None

    guarded.__name__ = parse.__name__
    guarded.__doc__ = parse.__doc__
    return Grammar(f"vllm.{name}", "vllm", tuple(keywords), guarded, tuple(samples))


def _dispatch_own(line: LogLine, ctx: ParseContext) -> Events | None:
    """Offer a line to the vLLM grammars whose keywords it contains (used when a wrapped dump ends)."""
    for grammar in GRAMMARS:
        if any(k in line.message for k in grammar.keywords):
            events = grammar.parse(line, ctx)
            if events is not None:
                return events
    return None


GRAMMARS: list[Grammar] = [
    _grammar(
        "version",
        ("server version", "█  version", "█  model", "processing API version"),
        parse_version,
        (
            "INFO 07-08 11:49:48 api_server.py:206] vLLM API server version 0.5.1",
            "INFO 02-07 18:06:00 api_server.py:840] vLLM API server version 0.7.3.dev21+g0630d453",
            "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.18.0",
            "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]   █▄█▀ █     █     █     █  model   "
            "/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf",
        ),
    ),
    _grammar(
        "non_default_args",
        ("non-default args:",),
        parse_non_default_args,
        (
            "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:233] non-default args: {'model_tag': "
            "'/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf', 'max_model_len': 16384, 'served_model_name': "
            "['Qwen/Qwen3-8B'], 'gpu_memory_utilization': 0.79, 'kv_cache_dtype': 'fp8', 'max_num_seqs': 16}",
            "(APIServer pid=1009) INFO 09-10 23:26:12 [utils.py:326] non-default args: {'model_tag': 'gpt-oss-120b', "
            "'port': 8081, 'model': 'gpt-oss-120b', 'max_model_len': 16384, 'tensor_parallel_size': 4}",
        ),
    ),
    _grammar(
        "namespace",
        ("args: Namespace(",),
        parse_namespace,
        (
            "INFO 02-07 18:06:00 api_server.py:841] args: Namespace(subparser='serve', model_tag='.', config='', "
            "host=None, port=8000, ... , dispatch_function=<function ServeSubcommand.cmd at 0x7dc10ca6fba0>)",
        ),
    ),
    _grammar(
        "engine_init",
        ("LLM engine (v",),
        parse_engine_init,
        (
            "INFO 02-02 17:59:18 llm_engine.py:232] Initializing a V0 LLM engine (v0.7.1) with config: "
            "model='/home/bruce/Downloads/models/Qwen2.5-32B-Instruct', speculative_config=None, ... "
            "tensor_parallel_size=2, ..., enforce_eager=True, kv_cache_dtype=auto,  device_config=cuda, ... "
            'compilation_config={"splitting_ops":[],"compile_sizes":[],"cudagraph_capture_sizes":[],'
            '"max_capture_size":0}, use_cached_outputs=True, ',
            "(EngineCore pid=129) INFO 05-06 06:05:38 [core.py:109] Initializing a V1 LLM engine "
            "(v0.20.2rc1.dev49+g9b4e83934) with config: model='/model', speculative_config=SpeculativeConfig("
            "method='mtp', model='google/gemma-4-31B-it-assistant', num_spec_tokens=4), tokenizer='/model', "
            "enforce_eager=False, kv_cache_dtype=fp8, device_config=cuda, structured_outputs_config="
            "StructuredOutputsConfig(backend='auto', ...), observability_config=ObservabilityConfig("
            "show_hidden_metrics_for_version=None, ..., cudagraph_metrics=False, enable_logging_iteration_details=F...",
        ),
    ),
    _grammar(
        "spec_decode_v1",
        ("SpecDecoding metrics:",),
        parse_spec_decode_v1,
        (
            "(APIServer pid=13026) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length:"
            " 2.87, Accepted throughput: 48.90 tokens/s, Drafted throughput: 157.19 tokens/s, Accepted: 489 tokens, "
            "Drafted: 1572 tokens, Per-position acceptance rate: 0.740, 0.473, 0.309, 0.187, 0.099, 0.057, Avg Draft "
            "acceptance rate: 31.1%",
            "SpecDecoding metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens",
        ),
    ),
    _grammar(
        "spec_decode_v0",
        ("Speculative metrics:",),
        parse_spec_decode_v0,
        (
            "INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: Draft acceptance rate: 0.642, System efficiency:"
            " 0.598, Number of speculative tokens: 3, Number of accepted tokens: 8547, Number of draft tokens: 13311,"
            " Number of emitted tokens: 10616.",
            "INFO 02-06 03:18:09 metrics.py:475] Speculative metrics: Draft acceptance rate: 0.067, System efficiency:"
            " 0.167, Number of speculative tokens: 5, Number of accepted tokens: 1, Number of draft tokens: 15, "
            "Number of emitted tokens: 3.",
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
            "(EngineCore pid=43) WARNING 05-06 06:17:48 [vllm.py:1406] max_num_scheduled_tokens is set to 8188 based "
            "on the speculative decoding settings. This may lead to suboptimal performance. Consider increasing "
            "max_num_batched_tokens to accommodate the additional draft token slots, or decrease "
            "num_speculative_tokens or max_num_seqs.",
            "WARNING 03-20 10:00:00 [arg_utils.py:1700] Speculative Decoding is not supported by the V1 Engine. "
            "Falling back to V0. ",
            "(Worker_TP0 pid=147) WARNING 09-15 12:31:40 [qwen3_dflash.py:412] DFlash buffer initialization was "
            "skipped. If dummy weights are not in use, this may indicate an error in weight loading.",
            "(Worker_TP0 pid=147) WARNING 09-15 12:33:02 [speculator.py:201] DFlash draft attention (TRITON_ATTN) does "
            "not support full CUDA graphs; running the draft eagerly.",
            "INFO 10-16 19:00:01 spec_decode_worker.py:300] [Speculative Decoding] Use batch expansion for scoring "
            "proposals.",
        ),
    ),
    _grammar(
        "stats",
        ("Avg prompt throughput:",),
        parse_stats,
        (
            "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 "
            "tokens/s, Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache "
            "usage: 95.9%, Prefix cache hit rate: 0.0%",
            "INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
            "15.5 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV "
            "cache usage: 0.1%.",
        ),
    ),
    _grammar(
        "stats_extras",
        ("Prefix cache hit rate: GPU:", "context requests,", "TF/s/device", "api_server_count more than 1"),
        parse_stats_extras,
        (
            "INFO 05-25 06:50:29 [metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU: 90.00%",
            "(EngineCore pid=52) INFO 06-01 10:00:00 [core.py:401] Iteration(1234): 0 context requests, 0 context "
            "tokens, 1 generation requests, 4 generation tokens, iteration elapsed time: 13.72 ms",
        ),
    ),
    _grammar(
        "preemption",
        ("PreemptionMode.", "not enough kv cache blocks"),
        parse_preemption,
        (
            "WARNING 08-20 10:18:39 scheduler.py:1141] Sequence group 147 is preempted by PreemptionMode.RECOMPUTE "
            "mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase "
            "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
            "total_num_cumulative_preemption=1",
        ),
    ),
    _grammar(
        "custom_allreduce",
        ("Custom allreduce is disabled", "Custom collectives are disabled", "cuda graph addresses"),
        parse_custom_allreduce,
        (
            "(eager_allreduce pid=3040) WARNING 05-13 08:48:35 custom_all_reduce.py:166] Custom allreduce is disabled "
            "because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
            "disable_custom_all_reduce=True explicitly.",
            "(VllmWorkerProcess pid=191) WARNING 02-22 22:09:01 custom_all_reduce.py:136] Custom allreduce is disabled "
            "because it's not supported on more than two PCIe-only GPU[s…]",
            "(Worker_TP0 pid=147) INFO 05-14 00:05:01 [custom_all_reduce.py:203] Registering 4355 cuda graph addresses",
        ),
    ),
    _grammar(
        "comm",
        (
            "vLLM is using nccl==",
            "all-reduce backends (in dispatch order)",
            "GPU P2P access cache",
            "Two processes do not agree on the P2P",
            "Skipping P2P check",
            "local_rank=",
            "is assigned as DP rank",
            "Found nccl from",
            "Failed to load NCCL library",
            "flashinfer allreduce backend:",
            "all2all manager",
            "is bigger than a reserved number of",
            "SymmMemCommunicator:",
            "VLLM_USE_NCCL_SYMM_MEM",
            "NCCL memory allocator",
            "FlashInfer All Reduce",
            "AllReduce fusion pass is disabled",
            "NCCL_CUMEM_ENABLE is set to",
            "Reducing Torch parallelism",
        ),
        parse_comm,
        (
            "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:53 [pynccl.py:69] vLLM is using nccl==2.21.5",
            "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:54 [custom_all_reduce_utils.py:244] reading GPU P2P "
            "access cache from /users/7/eloualic/.cache/vllm/gpu_p2p_access_cache_for_0,1.json",
            "INFO 06-04 13:12:34 [parallel_state.py:1064] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, "
            "TP rank 0, EP rank 0",
            "(Worker_TP0 pid=120) INFO 07-10 10:00:00 [cuda_communicator.py:353] Using ['CUSTOM', 'PYNCCL'] all-reduce "
            "backends (in dispatch order) for group 'tp:0' out of potential backends: ['FLASHINFER_PCIE_IPC', "
            "'FLASHINFER', 'NCCL_SYMM_MEM', 'QUICK_REDUCE', 'AITER_CUSTOM', 'CUSTOM', 'SYMM_MEM', 'PYNCCL'].",
            "(Worker_TP1 pid=148) INFO 05-14 00:03:10 [parallel_state.py:1208] world_size=2 rank=1 local_rank=1 "
            "distributed_init_method=tcp://127.0.0.1:44131 backend=nccl",
        ),
    ),
    _grammar(
        "attention",
        (
            "backend out of potential backends",
            "Using AttentionBackendEnum.",
            "for vit attention",
            "for MMEncoderAttention",
            "backend (selected via --attention-backend)",
            *(f"Using {name} backend" for name in _BACKEND_ENGLISH),
            "Using FlashAttention version",
            "upgrading FlashAttention",
            "Cannot use FA version",
            "Cannot use FlashAttention",
            "precluded higher-priority backend",
            "MLA prefill backend",
            "Using FlashAttention prefill for MLA",
            "No valid attention backend found",
            "is not valid for this configuration",
            "FlashInfer failed to import",
            "Please use FlashInfer backend with FP8 KV Cache",
            "backend to prevent mixed-backend",
        ),
        parse_attention,
        (
            "INFO 02-19 19:18:30 cuda.py:230] Using Flash Attention backend.",
            "INFO 06-04 13:12:34 [cuda.py:217] Using Flash Attention backend on V1 engine.",
            "(Worker_TP0 pid=117124) INFO 01-04 14:48:25 [cuda.py:351] Using FLASH_ATTN attention backend out of "
            "potential backends: ('FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION')",
            "(Worker_TP1 pid=3261) INFO 04-27 12:49:29 [cuda.py:337] Using AttentionBackendEnum.FLASH_ATTN_V100 "
            "backend.",
            "INFO 08-07 16:06:47 selector.py:189] Cannot use FlashAttention-2 backend because the vllm_flash_attn "
            "package is not found. `pip install vllm-flash-attn` for better performance.",
            "(EngineCore pid=144178) INFO 07-28 09:43:02 [flash_attn.py:789] Using FlashAttention version 2",
        ),
    ),
    _grammar(
        "env",
        (
            "Unknown vLLM environment variable detected",
            "environment variable is deprecated",
            "The suffix '_VLLM_V1'",
            "Overwriting environment variable",
            "VLLM_TRACE_FUNCTION is enabled",
            "leaving Torch threads",
        ),
        parse_env_warnings,
        (
            "(APIServer pid=1) WARNING 02-26 10:00:00 [envs.py:1650] Unknown vLLM environment variable detected: "
            "VLLM_ATTENTION_BACKEND",
        ),
    ),
    _grammar(
        "kv_cache",
        (
            "KV cache size:",
            "Maximum concurrency for",
            "Available KV cache memory:",
            "# GPU blocks:",
            "# CUDA blocks:",
            "# cuda blocks:",
            "# cpu blocks:",
            "# xpu blocks:",
            "# hpu blocks:",
            "# tpu blocks:",
            "num_gpu_blocks is",
            "num_gpu_blocks_override=",
            "Memory profiling results:",
            "reserved for KV Cache is",
            "Memory profiling takes",
            "memory for KV Cache as specified",
            "kv cache block size to",
            "Auto-fit max_model_len:",
            "padding layers, may waste",
        ),
        parse_kv_cache,
        (
            "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB",
            "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens",
            "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:868] Maximum concurrency for 32,768 "
            "tokens per request: 1.30x",
            "INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381",
            "INFO 05-11 12:04:07 [executor_base.py:112] # cpu blocks: 1170, # CPU blocks: 0",
        ),
    ),
    _grammar(
        "kv_errors",
        (
            "No available memory for the cache blocks",
            "KV cache is needed, which is larger than",
            "that can be stored in KV cache",
            "on startup is less than desired GPU memory utilization",
        ),
        parse_kv_errors,
        (
            "(EngineCore_DP0 pid=494) ValueError: To serve at least one request with the models's max seq len "
            "(262144), (36.0 GiB KV cache is needed, which is larger than the available KV cache memory (6.94 GiB). "
            "Based on the available memory, the estimated maximum model length is 50512. Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
            "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV "
            "cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
            "the engine.",
        ),
    ),
    _grammar(
        "model_load",
        (
            "Loading weights took",
            "Loading model weights took",
            "Model loading took",
            "checkpoint shards:",
            "init engine (profile, create kv cache, warmup model)",
        ),
        parse_model_load,
        (
            "(Worker_TP0 pid=34322) INFO 05-06 20:59:57 [default_loader.py:384] Loading weights took 24.84 seconds",
            "(Worker_TP0 pid=34322) INFO 05-06 20:59:59 [gpu_model_runner.py:4879] Model loading took 12.66 GiB "
            "memory and 31.657031 seconds",
            "INFO 05-11 12:04:07 [llm_engine.py:435] init engine (profile, create kv cache, warmup model) took 0.15 "
            "seconds",
        ),
    ),
    _grammar(
        "hybrid",
        (
            "Setting attention block size to",
            "Padding mamba page size by",
            "mamba_page_size_padded",
            "Mamba cache mode is set to",
            "Hybrid or mamba-based model detected",
            "Its support for Mamba layers",
            "Disabling cascade attention since",
            "Hybrid model with EAGLE",
            "DS conv state layout",
            "--mamba-cache-mode is deprecated",
            "GDN prefill kernel",
            "GDN decode kernel",
            "GDN spec decode kernel",
            "GDN prefill backend",
            "Triton GDN",
            "Mamba SSU",
            "mamba_ssm_cache_dtype",
            "--mamba-ssm-cache-dtype",
            "Mamba with speculative decoding",
            "'all' prefix caching",
            "to fit Mamba cache blocks",
            "after capping to Mamba cache blocks",
            "Hybrid KV cache manager is disabled",
            "hybrid kv cache manager",
            "Mamba2 SSD kernel warmup",
        ),
        parse_hybrid,
        (
            "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:928] Setting attention block size to 480 "
            "tokens to ensure that attention page size is >= mamba page size.",
            "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:952] Padding mamba page size by 1.27% to "
            "ensure that mamba page size and attention page size are exactly equal.",
            "Mamba cache mode is set to 'align' for Qwen3_5ForConditionalGeneration by default when prefix caching is "
            "enabled",
        ),
    ),
    _grammar(
        "capture_bar",
        ("Capturing CUDA graph", "CUDA graphs:"),
        parse_capture_bar,
        (
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:03<00:00, 18.59it/s]",
            "(EngineCore_DP0 pid=9) Capturing CUDA graphs (decode, FULL): 100%|██████████| 35/35 [00:02<00:00, "
            "16.81it/s]",
        ),
    ),
    _grammar(
        "cuda_graphs",
        (
            "raph capturing finished in",
            "Capturing model for",
            "Capturing the model for CUDA graphs",
            "Capturing cudagraphs for decoding",
            "CUDA graph capture",
            "Cudagraph is disabled under eager mode",
            "Enforce eager set",
            "fallback to the eager mode",
            "fallback to eager mode",
            "Forcing enforce eager",
            "Forcing enforce_eager",
            "Disabling CUDA Graphs since",
            "disabling cudagraphs since",
            "enable CUDA graph. Since",
            "CUDAGraphMode.",
            "is not compatible with compilation mode",
            "Overriding cudagraph_mode",
            "Setting cudagraph_mode to",
            "max_cudagraph_capture_size to",
            "max cuda graph capture size",
            "is overridden by config",
            "CUDA graph memory",
            "CUDA graph pool memory",
            "cascade attention. Will fall back",
        ),
        parse_cuda_graphs,
        (
            "(VllmWorker rank=0 pid=2445155) INFO 05-10 16:00:15 [gpu_model_runner.py:1686] Graph capturing finished "
            "in 112 secs, took 0.95 GiB",
            "(EngineCore pid=1762577) INFO 04-20 14:42:51 [vllm.py:1081] Cudagraph is disabled under eager mode",
            "(Worker_TP0 pid=169) WARNING 06-25 05:45:32 [compilation.py:1407] CUDAGraphMode.FULL_AND_PIECEWISE is "
            "not supported with spec-decode for attention…",
            "(Worker_TP1 pid=148) INFO 05-14 00:04:16 [gpu_model_runner.py:6143] Estimated CUDA graph memory: 0.17 "
            "GiB total",
        ),
    ),
    _grammar(
        "compile",
        (
            "Dynamo bytecode transform time",
            "Compiling a graph for",
            "Cache the graph",
            "Directly load the compiled graph",
            "AOT compilation from path",
            "saved AOT compiled function",
            "torch.compile takes",
            "torch.compile took",
            "torch.compile and initial profiling",
            "Initial profiling/warmup run took",
            "Using cache directory:",
            "torch.compile cache is disabled",
            "`torch.compile` is turned on",
            "Inductor compilation was disabled",
            "TORCH_COMPILE_DISABLE is set",
            "CPU offload is not supported with `torch.compile`",
        ),
        parse_compile,
        (
            "(Worker_TP0 pid=118) INFO 05-04 01:03:11 [backends.py:1128] Dynamo bytecode transform time: 14.14 s",
            "(Worker_TP0 pid=118) INFO 05-04 01:03:57 [backends.py:391] Compiling a graph for compile range (1, 8192) "
            "takes 44.99 s",
            "(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total",
            "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [backends.py:292] Directly load the compiled graph(s) for "
            "compile range (1, 8192) from the cache, took 5.958 s",
            "INFO 01-30 03:19:13 monitor.py:31] torch.compile takes 54.73 s in total",
        ),
    ),
    _grammar(
        "scheduling",
        (
            "Chunked prefill is enabled",
            "chunked prefill by default",
            "prefix caching by default",
            "usage context",
            "exceeds max_num_seqs * max_model_len",
            "Asynchronous scheduling is",
            "Async scheduling ",
            "for async scheduling",
            "when using async scheduling",
            "async scheduling being disabled",
            "Automatic prefix caching is enabled",
            "Disabling chunked prefill",
            "Disabling prefix caching",
            "nor prefix caching",
            "forcing chunked prefill and prefix caching",
            "Prefix caching is not supported for",
            "but prefix caching is not enabled",
            "Prefix caching has been disabled",
            "does not officially support",
        ),
        parse_scheduling,
        (
            "INFO 07-28 09:35:08 [scheduler.py:242] Chunked prefill is enabled with max_num_batched_tokens=2048.",
            "INFO 07-28 09:35:08 [vllm.py:1118] Asynchronous scheduling is enabled.",
        ),
    ),
    _grammar(
        "failure",
        (
            "EngineCore failed to start",
            "WorkerProc failed",
            "Engine core initialization failed",
            "RPCServer process died",
            "Timed out waiting for",
            "CUDA out of memory",
            "CUDA error: ",
            "NCCL error: ",
            "Watchdog caught collective operation timeout",
            "Fault detected in EP all2all",
            "Barrier timed out",
            "Barrier departure timed out",
            "RPC call to",
            "Engine iteration timed out",
            "block found in",
            "EngineCore encountered a fatal error",
            "EngineCore hit an exception",
            "EngineDeadError",
            "died unexpectedly",
            "engine core exited unexpectedly",
            "output_handler failed",
            "(engine dead)",
            "Engine background task failed",
            "Background loop ",
            "terminating server process",
            "fatal signal from worker processes",
            "WorkerProc hit an exception",
            "died, exit code",
            "died with exit code",
            "Error in chat completion stream generator",
        ),
        parse_failure,
        (
            "(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136] EngineCore failed to start.",
            "ERROR 04-28 02:37:03 [core.py:398] EngineCore encountered a fatal error.",
            "(APIServer pid=1179246) RuntimeError: Engine core initialization failed. See root cause above. Failed "
            "core proc(s): {}",
            "(EngineCore pid=112) ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. "
            "Tried to allocate 50.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 21.75 MiB is free. "
            "Including non-PyTorch memory, this process has 23.50 GiB memory in use.",
            "(RayWorkerWrapper pid=489968) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1572864, NumelOut=1572864, "
            "Timeout(ms)=600000) ran for 600021 milliseconds before timing out.",
        ),
    ),
    _grammar(
        "model",
        (
            "Using max model len",
            "Resolved architecture:",
            "Downcasting ",
            "falling back to Transformers implementation",
            "Using Transformers backend.",
            "Using Transformers modeling backend",
            "does not define a tensor parallel plan",
            "sampling parameters have been overridden",
            "Using a slow tokenizer",
            "Hidden layers were unevenly partitioned",
            "insufficient smem size",
            "top-k mask workspace",
            "Using V2 Model Runner",
            "Model Runner V2 does not yet support",
        ),
        parse_model,
        (
            "(APIServer pid=1009) INFO 09-10 23:26:31 [__init__.py:1750] Using max model len 16384",
            "(APIServer pid=1009) INFO 09-10 23:26:29 [__init__.py:711] Resolved architecture: GptOssForCausalLM",
        ),
    ),
    _grammar(
        "quantization",
        (
            "does not have native support for",
            "Marlin kernel with bf16",
            "Marlin requires thread-tile padding",
            "however you specified quantization=",
            "during runtime. Using",
            "quantization is not fully optimized yet",
            "for GPTQMarlinLinearMethod",
            "Kernel for ",
            "for NVFP4 GEMM",
            "MoE backend",
            "EmulationTritonExperts",
            "MXFP4 MoE is enabled",
            "DeepGemm",
            "checkpoint. Please note",
            "Using default MoE config",
            "Using default W8A8 Block",
        ),
        parse_quantization,
        (
            "WARNING 05-13 14:43:17 [marlin_utils_fp8.py:167] Your GPU does not have native support for FP8 "
            "computation but FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the "
            "Marlin kernel. This may degrade performance for compute-heavy workloads.",
            "(VllmWorker rank=1 pid=236) WARNING 05-03 17:42:23 [fused_moe.py:668] Using default MoE config. "
            "Performance might be sub-optimal! Config file not found at /usr/local/lib/python3.12/dist-packages/vllm/"
            "model_executor/layers/fused_moe/configs/E=16,N=1536,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,"
            "block_shape=[128,128].json",
            "INFO 09-24 15:46:11 gptq_marlin.py:112] Detected that the model can run with gptq_marlin, however you "
            "specified quantization=gptq explicitly, so forcing gptq. Use quantization=gptq_marlin for faster inference",
        ),
    ),
    _grammar(
        "platform",
        (
            "Automatically detected platform",
            "Pin memory is not supported on",
            "Possibly too large swap space",
            "Total CPU offloaded parameters",
            "Pinned memory not available",
            "disabling CPU offload since",
            "cudaHostRegister failed",
            "Initializing KVConnectorBase_V1",
        ),
        parse_platform,
        (
            "INFO 09-10 23:26:06 [__init__.py:241] Automatically detected platform cuda.",
            "(EngineCore_DP0 pid=8933) WARNING 10-23 18:38:47 [cpu.py:316] Pin memory is not supported on CPU.",
        ),
    ),
]
