"""What every SGLang line type shares: the rule tables (`Rule`, `_apply`), the event builders, the number
helpers, the ctx.state keys, and `_grammar`, which declares a line type.

SGLang line types (catalogue/sglang-nccl.md §1-§9), SGLang 0.3.6 to 0.5.23.

SGLang prints no level name, so severity comes from what a line says, not from its header:

    [2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, accept len: 3.05, ...
    [2025-06-12 22:41:35 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. ...
    [2025-01-23 19:34:55] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', tp_size=1, ...)

Memory sizes SGLang prints as `GB` are bytes / 2**30, so they are GiB already.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from logdoctor.events import (
    Engine,
    EngineFailure,
    EventBase,
    FailureKind,
    HybridKind,
    HybridModel,
    PerfWarning,
    WarningTopic,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Case, Grammar, MatchBuild, ParseContext, ParseFn, event_of_groups
from logdoctor.parse.pyrepr import parse_value

GraphKind = Literal["capture_failed", "eager_mode"]
GraphRole = Literal["target", "drafter"]
AttentionRole = Literal["target", "drafter", "encoder", "prefill", "decode"]
Build = MatchBuild


@dataclass(frozen=True)
class Rule:
    """One line format: a compiled regex (searched in the message) and what its match means."""

    regex: re.Pattern[str]
    build: Build


def _engine(line: LogLine) -> Engine:
    """vLLM prints some of the same texts (custom all-reduce, AWQ); keep the engine of the line's header."""
    return "vllm" if line.engine_hint == "vllm" else "sglang"


def _apply(rules: list[Rule], line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    message = line.message
    for rule in rules:
        m = rule.regex.search(message)
        if m:
            return rule.build(m, ctx.base(line, _engine(line)), message.strip())
    return None


def _f(value: str | None) -> float | None:
    return None if value is None else float(value)


def _i(value: str | None) -> int | None:
    return None if value is None else int(value)


_BACKEND_SEPARATOR_RE = re.compile(r"[\s-]+")
_NON_WORD_RE = re.compile(r"[^a-z0-9]+")


def _backend(name: str) -> str:
    """`flashinfer` -> FLASHINFER, `flashinfer mla` -> FLASHINFER_MLA, `'fa3'` -> FA3."""
    return _BACKEND_SEPARATOR_RE.sub("_", name.strip().strip("'\"`").rstrip(".")).upper()


def _int_list(text: str) -> list[int] | None:
    parsed = parse_value(text).value
    if isinstance(parsed, list) and all(isinstance(x, int) for x in parsed):
        return [int(x) for x in parsed]
    return None


# ctx.state keys this module owns.
_VERSION = "sglang.version"  # tuple[int, ...] of the first version the log printed
_DRAFT_TOKENS = "sglang.speculative_num_draft_tokens"  # from server_args: k + 1


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text.split("+")[0])[:3])


def _ev(cls: type[EventBase], **constants: Any) -> Build:
    """One event of `cls` with these constant fields, filled from the regex's named groups (`event_of_groups`);
    `backend` is normalised like every SGLang backend name. SGLang's own `GB` elsewhere is GiB (bytes / 2**30)."""
    return event_of_groups(cls, {"backend": _backend}, **constants)


def _hybrid(kind: HybridKind) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [HybridModel(**base, kind=kind, message=message)]

    return build


def _failure(kind: FailureKind) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [EngineFailure(**base, kind=kind, message=message)]

    return build


def _perf(topic: WarningTopic) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [PerfWarning(**base, topic=topic, message=message)]

    return build


def _grammar(name: str, keywords: Iterable[str], parse: ParseFn, cases: Iterable[Case]) -> Grammar:
    """An SGLang line type. No engine guard, unlike vLLM's: vLLM prints some of the same texts, and `_engine`
    keeps the engine of the line's header."""
    return Grammar(f"sglang.{name}", "sglang", tuple(keywords), parse, tuple(cases))
