"""Reading SGLang's Prefill batch / Decode batch lines (and their grep'd tails) into events; stats.py declares
the line types and their cases."""

from __future__ import annotations

import functools
import re
from typing import Any

from logdoctor.engines.sglang.common import _DRAFT_TOKENS, _NON_WORD_RE, _VERSION
from logdoctor.events import (
    EventBase,
    SchedulerStats,
    SpecDecodeStats,
)
from logdoctor.parse.envelope import LogLine, sglang_process
from logdoctor.parse.grammar import ParseContext

# What `accept rate` on a Decode batch line means (see `_spec_stats`). Before 0.5.11 it was accept_len divided by
# the draft slots per step (speculative_num_draft_tokens = k + 1); from 0.5.11 it is correct drafts / drafted
# tokens (scheduler_components/metrics_reporter.py: num_correct_drafts / (forward_ct * (num_draft_tokens - 1))).
ACCEPT_RATE_PER_DRAFT_SINCE = (0, 5, 11)


def _whole_within(numerator: float, rate: float, half_step: float = 0.005) -> bool:
    """Is numerator / rate a whole number >= 1 for some values that print as these two (`{x:.2f}`)?"""
    low = max(numerator - half_step, 0.0) / (rate + half_step)
    high = (numerator + half_step) / max(rate - half_step, 1e-9)
    return high >= 1 and int(high) >= max(low, 1.0)


# --- Prefill batch / Decode batch ------------------------------------------------------------------

_BATCH_RE = re.compile(r"\b(?P<kind>Prefill|Decode) batch(?: \[(?P<iter>\d+)\])?[.,]\s+(?P<body>#.*)$")
_GRAPH_KEY_RE = re.compile(r"^(?P<device>cuda|cpu|npu|xpu|musa|hpu) graph$")


def _batch_value(raw: str) -> float | int | str | bool:
    """`24` -> 24, `0.66` -> 0.66, `True` -> True, `91.20%` -> 0.912; anything else stays text."""
    raw = raw.strip()
    if raw == "True" or raw == "False":
        return raw == "True"
    percent = raw.endswith("%")
    text = raw[:-1].rstrip() if percent else raw
    try:
        number: float | int = float(text) if ("." in text or "e" in text or "E" in text) else int(text)
    except ValueError:
        return raw
    if number != number or number in (float("inf"), float("-inf")):
        return raw
    return round(float(number) / 100, 6) if percent else number


@functools.lru_cache(maxsize=1024)  # a batch line repeats the same few keys thousands of times
def _extra_key(key: str) -> str:
    return _NON_WORD_RE.sub("_", key.lower().lstrip("#")).strip("_")


# SGLang key -> SchedulerStats field. Hybrid pools report the full-attention pool as the KV usage.
_BATCH_FIELDS = {
    "#running-req": "running",
    "#token": "num_tokens",
    "#full token": "num_tokens",
    "#gpu token": "num_tokens",
    "token usage": "kv_cache_usage",
    "full token usage": "kv_cache_usage",
    "gpu token usage": "kv_cache_usage",
    "cpu token usage": "cpu_kv_cache_usage",
    "gen throughput (token/s)": "generation_throughput",
    "input throughput (token/s)": "prompt_throughput",
    "#queue-req": "queue",
    "#new-token": "new_tokens",
    "#cached-token": "cached_tokens",
    "cache hit rate": "prefix_cache_hit_rate",
}
_INT_FIELDS = {"running", "num_tokens", "queue", "new_tokens", "cached_tokens"}


# A batch line's key -> (its SchedulerStats field, the device its `... graph` flag names, its key in `extra`): a busy
# server prints the same few keys on every line, so each is looked at once.
_KEY_PLANS: dict[str, tuple[str | None, str | None, str]] = {}


def _key_plan(key: str) -> tuple[str | None, str | None, str]:
    graph = _GRAPH_KEY_RE.match(key) if key.endswith(" graph") else None
    plan = (_BATCH_FIELDS.get(key), graph.group("device") if graph else None, _extra_key(key))
    if len(_KEY_PLANS) < 1024:
        _KEY_PLANS[key] = plan
    return plan


def parse_batch(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _BATCH_RE.search(line.message)
    if not m:
        return None
    return _batch_events(line, ctx, m.group("kind"), m.group("body"), m.group("iter"), fragment=False)


# A Decode batch line without its head: `accept len: 1.55, accept rate: 0.05, cuda graph: True, gen through` (a
# `grep -o 'accept len.*'`, a terminal that cut the line, a paste that kept only the tail). It starts at a key only
# decode lines print, so a Prefill batch tail is never taken for one.
_BATCH_FRAGMENT_RE = re.compile(r"^\s*(?P<body>(?:accept len|gen throughput \(token/s\)): .*)$")


def parse_batch_fragment(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if _BATCH_RE.search(line.message):
        return None
    m = _BATCH_FRAGMENT_RE.match(line.message)
    if not m:
        return None
    return _batch_events(line, ctx, "Decode", m.group("body"), None, fragment=True)


# A body's SchedulerStats fields, its `extra`, its accept len and accept rate.
_BodyValues = tuple[dict[str, Any], dict[str, float | int | str], float | None, float | None]


def _batch_events(
    line: LogLine, ctx: ParseContext, kind: str, body: str, forward_iter: str | None, *, fragment: bool
) -> list[EventBase] | None:
    """The events of a batch line's `key: value, ...` body. A fragment (no head) gives the speculation numbers it
    holds, and the stats only when it still names the running requests."""
    match = _DECODE_BODY_RE.fullmatch(body) if kind == "Decode" and not fragment else None
    if match is not None:
        return _standard_decode_events(line, ctx, match.groups(), forward_iter)
    return _events_of(line, ctx, kind, _body_values(kind, body), forward_iter, fragment=fragment)


def _events_of(
    line: LogLine,
    ctx: ParseContext,
    kind: str,
    values: _BodyValues,
    forward_iter: str | None,
    *,
    fragment: bool,
) -> list[EventBase] | None:
    fields, extra, accept_len, accept_rate = values
    base = ctx.base(line, "sglang")
    events: list[EventBase] = []
    if "running" in fields or "new_tokens" in fields:
        if forward_iter:
            extra["forward_iter"] = int(forward_iter)
        events.append(
            SchedulerStats(
                **base,
                format="sglang-decode" if kind == "Decode" else "sglang-prefill",
                extra=extra,
                **fields,
            )
        )
    elif not fragment or (accept_len is None and accept_rate is None):
        return None
    if accept_len is not None or accept_rate is not None:
        events.append(_spec_stats(base, accept_len, accept_rate, ctx))
    return events


def _body_values(kind: str, body: str) -> _BodyValues:
    """A batch body's values, item by item."""
    fields: dict[str, Any] = {}
    extra: dict[str, float | int | str] = {}
    accept_len: float | None = None
    accept_rate: float | None = None
    for item in body.split(","):
        key, sep, raw = item.partition(":")
        key = key.strip()
        if not sep or not key:
            continue
        value = _batch_value(raw)
        target, device, extra_key = _KEY_PLANS.get(key) or _key_plan(key)
        if device is not None and isinstance(value, bool):
            # A prefill batch normally runs without a graph: only the decode flag means eager decoding.
            if kind == "Decode":
                fields["cuda_graph"] = value
            else:
                extra["cuda_graph"] = str(value)
            if device != "cuda":
                extra["graph_device"] = device
        elif key == "accept len" and isinstance(value, int | float):
            accept_len = float(value)
        elif key == "accept rate" and isinstance(value, int | float):
            accept_rate = float(value)
        elif target is not None and target not in fields and isinstance(value, int | float):
            fields[target] = int(value) if target in _INT_FIELDS else float(value)
        elif not isinstance(value, bool):
            extra[extra_key] = value
        else:
            extra[extra_key] = str(value)
    return fields, extra, accept_len, accept_rate


# The Decode batch body a busy server prints on every line (a speculative one with `accept len` and `accept rate`),
# read by one match into what `_body_values` gives it. The numbers are short enough that the float of their text is
# the float of the number `_batch_value` makes of it; any other body is read item by item.
_INT = r"(\d{1,15})"
_NUMBER = r"(\d{1,15}(?:\.\d{1,15})?)"
_DECODE_BODY = (
    rf"#running-req: {_INT}, #token: {_INT}, token usage: {_NUMBER}, "
    rf"(?:accept len: {_NUMBER}, accept rate: {_NUMBER}, )?cuda graph: (True|False), "
    rf"gen throughput \(token/s\): {_NUMBER}, #queue-req: {_INT}(?:, ?)?"
)
_DECODE_BODY_RE = re.compile(_DECODE_BODY)


def _standard_decode_events(
    line: LogLine, ctx: ParseContext, groups: tuple[str | Any, ...], forward_iter: str | None
) -> list[EventBase]:
    """The events of a standard decode body (`_DECODE_BODY_RE`'s groups): its values are of their fields' exact types
    (ints, floats, a bool), so they are built unchecked (tests/test_records.py holds them to the constructor)."""
    running, tokens, usage, length, rate, graph, throughput, queue = groups
    base = ctx.base(line, "sglang")
    stats = SchedulerStats.model_construct_values(
        {
            **base,
            "format": "sglang-decode",
            "extra": {} if forward_iter is None else {"forward_iter": int(forward_iter)},
            "running": int(running),
            "num_tokens": int(tokens),
            "kv_cache_usage": float(usage),
            "cuda_graph": graph == "True",
            "generation_throughput": float(throughput),
            "queue": int(queue),
        }
    )
    if length is None:  # the accept len and accept rate come together
        return [stats]
    return [stats, _spec_stats(base, float(length), float(rate), ctx)]


# A busy server's batch lines whole, as SGLang prints them: `[2026-05-08 16:20:11 TP0] Decode batch, #running-req: 15,
# ...` with the standard decode body, or a Prefill batch line with the standard prefill body. The envelope reads such a
# header as `[date time ranks] ` and the batch line type reads the body as `whole_batch_line` does (the decode body
# by `_DECODE_BODY_RE`, the prefill one item by item into these fields), so an event-dense log's lines skip the
# envelope's tries and the dispatch; any other line takes the general path. tests/parse/test_whole_line.py checks
# both give the same on every SGLang fixture line and on generated variants.
_PREFILL_BODY = (
    rf"#new-seq: {_INT}, #new-token: {_INT}, #cached-token: {_INT}, token usage: {_NUMBER}, #running-req: {_INT}, "
    rf"#queue-req: {_INT}(?:, ?)?"
)
BATCH_LINE_RE = re.compile(
    r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.\d{3})?((?: (?:DP|TP|EP|PP)\d{1,6})*)\] "
    rf"(?:Decode batch(?: \[(\d{{1,15}})\])?[.,] {_DECODE_BODY}|Prefill batch(?: \[(\d{{1,15}})\])?[.,] {_PREFILL_BODY})"
    r"(?=\n*\Z)"
)


def whole_batch_line(m: re.Match[str], source: str, number: int, ctx: ParseContext) -> tuple[LogLine, list[EventBase]]:
    groups = m.groups()
    text = m.group(0)  # without the newlines the pattern looks past
    line = LogLine(
        source,
        number,
        text,
        text[m.end(2) + 2 :],
        header="sglang",
        timestamp=groups[0],  # `date time`, as the envelope joins them
        process=sglang_process(groups[1]),
    )
    if groups[3] is not None:
        return line, _standard_decode_events(line, ctx, groups[3:11], groups[2])
    # The standard prefill body: what `_body_values` reads of it, item by item.
    new_seq, new, cached, usage, running, queue = groups[12:18]
    fields = {
        "new_tokens": int(new),
        "cached_tokens": int(cached),
        "kv_cache_usage": float(usage),
        "running": int(running),
        "queue": int(queue),
    }
    events = _events_of(
        line, ctx, "Prefill", (fields, {"new_seq": int(new_seq)}, None, None), groups[11], fragment=False
    )
    assert events is not None  # a body that names the running requests always gives its stats
    return line, events


def _spec_stats(base: dict[str, Any], length: float | None, rate: float | None, ctx: ParseContext) -> SpecDecodeStats:
    """`accept len` / `accept rate` of a Decode batch line, with the rate's definition decided.

    format "sglang": the rate before 0.5.11, length / draft slots (k + 1), converted by the facts;
    "sglang-per-draft": the 0.5.11+ rate, already accepted / drafted, with k = round((length - 1) / rate).
    The version printed earlier decides; without one, the draft-token count from server_args; without that, the
    definition under which the implied draft count is a whole number within the rounding of the printed values
    (`{x:.2f}`), and where both are, the 0.5.11+ one (today's releases)."""
    per_draft: bool | None = None
    version = ctx.state.get(_VERSION)
    if version:
        per_draft = version >= ACCEPT_RATE_PER_DRAFT_SINCE
    elif length is not None and rate:
        slots = ctx.state.get(_DRAFT_TOKENS)
        if isinstance(slots, int):
            old_k, new_k = length / rate - 1, (length - 1) / rate
            per_draft = abs(new_k - (slots - 1)) < abs(old_k - (slots - 1))
        else:
            per_draft = _whole_within(length - 1, rate) or not _whole_within(length, rate)
    # Every value is a float, an int or None, as its field holds it: built unchecked (a batch line of a busy server).
    if per_draft and length is not None and rate:
        return SpecDecodeStats.model_construct_values(
            {
                **base,
                "format": "sglang-per-draft",
                "interval": True,
                "mean_acceptance_length": length,
                "acceptance_rate": rate,
                "num_speculative_tokens": max(1, round((length - 1) / rate)),
            }
        )
    return SpecDecodeStats.model_construct_values(
        {**base, "format": "sglang", "interval": True, "mean_acceptance_length": length, "acceptance_rate": rate}
    )
