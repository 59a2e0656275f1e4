"""What every vLLM line type shares: the number and unit helpers, the event base, and `_grammar`, which makes a
line type that leaves alone lines another engine's header (or --engine) says are not vLLM's.

Normalisation (see events.py): rates are fractions 0..1, memory GiB, times seconds, and the mean acceptance
length always counts the bonus token. Where a version changes a number's meaning the parser decides from
the line itself when it can, else from what the log said earlier (`ctx.state`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any

from logdoctor.events import Engine, EventBase, PerfWarning, WarningTopic
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Case, Grammar, MatchBuild, ParseContext, event_of_groups

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
    table: tuple[tuple[re.Pattern[str], WarningTopic], ...], text: str, base: dict[str, Any], line: LogLine
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


def _claims(line: LogLine, ctx: ParseContext) -> bool:
    """vLLM grammars leave alone what another engine's header (or --engine) says is not vLLM's."""
    return ctx.forced_engine in (None, "vllm") and line.engine_hint in (None, "vllm")


def _grammar(name: str, keywords: Iterable[str], parse: ParseFn, cases: Iterable[Case]) -> Grammar:
    def guarded(line: LogLine, ctx: ParseContext) -> Events | None:
        return parse(line, ctx) if _claims(line, ctx) else None

    guarded.__name__ = parse.__name__
    guarded.__doc__ = parse.__doc__
    return Grammar(f"vllm.{name}", "vllm", tuple(keywords), guarded, tuple(cases))


# --- notice tables -------------------------------------------------------------------------------
# A family's one-message notices (a fallback, a disabled feature, a chosen kernel) as rows of (regex, builder):
# the first row whose regex is found in the message gives the events. `_event(Cls, field=constant, ...)` builds
# one event; the regex's named groups fill the fields of the same name (pydantic converts the text), a group
# named `<field>__gb` is decimal GB converted to GiB.

NoticeBuild = MatchBuild


def _event(cls: type[EventBase], **constants: Any) -> NoticeBuild:
    return event_of_groups(cls, **constants)


def _notices(rows: Iterable[tuple[re.Pattern[str], NoticeBuild]], line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    for regex, build in rows:
        m = regex.search(text)
        if m:
            return build(m, _base(line, ctx), _msg(line))
    return None


# --- labelled values -------------------------------------------------------------------------------
# Stats lines read as `Label=number` / `Label: number unit` pairs keyed by a normalised label, so a reworded,
# reordered or new field still gives the known values.
_LABEL_CHARS_RE = re.compile(r"[^a-z0-9]+")


def _label(text: str) -> str:
    """`Avg xfer time (ms)` -> avg_xfer_time_ms, `Throughput (MB/s)` -> throughput_mb_s."""
    return _LABEL_CHARS_RE.sub("_", text.lower()).strip("_")


# Each pair `label[=:] number` is found from its value back to its label (the first letter after the pair before,
# or after the last `=`, `:` or `,`): the pairs of `label[^=:,]*? [=:] number`, in time linear in the line (that lazy
# label, tried from every letter of a long run of text, rescanned the run each time).
_VALUE_AFTER_RE = re.compile(r"[=:]\s*(?P<value>-?[\d.]+(?:e[+-]?\d+)?)(?![\w.])")
_LABEL_START_RE = re.compile(r"[A-Za-z#]")


def _labelled_values(text: str) -> dict[str, float | int | str]:
    values: dict[str, float | int | str] = {}
    done = 0  # where the last pair ended: a label starts after it
    for m in _VALUE_AFTER_RE.finditer(text):
        sep = m.start()
        region = max(
            done, text.rfind("=", done, sep) + 1, text.rfind(":", done, sep) + 1, text.rfind(",", done, sep) + 1
        )
        start = _LABEL_START_RE.search(text, region, sep)
        if start is None:
            continue
        label = text[start.start() : sep].rstrip()
        raw = m.group("value")
        done = m.end()  # a pair whose number does not convert (`.e5`) still ends where it ends
        try:
            values[_label(label)] = int(raw) if re.fullmatch(r"-?\d+", raw) else float(raw)
        except ValueError:
            continue
    return values
