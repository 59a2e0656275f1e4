"""A message template with plausible values, as a full log line in the engine version's header format.

vLLM 0.30+:  (Worker_TP0 pid=2201) WARNING 11-30 10:00:00 [custom_all_reduce.py:283] Custom allreduce is ...
SGLang:      [2025-11-30 10:00:00 TP0] Decode batch, #running-req: 5, ...
"""

from __future__ import annotations

import re
from typing import Any

from .extract import Message, Placeholder
from .relevance import Relevant

_NUMERIC_HINT = re.compile(
    r"(num|len|size|count|time|sec|memory|mem|gib|gb|mb|bytes|tokens|usage|rate|ratio|util|ms|blocks|bs|step|total)",
    re.IGNORECASE,
)

# vLLM modules whose messages are printed by the API server or the engine core (everything else runs in a worker).
_VLLM_API = (
    "vllm/entrypoints/",
    "vllm/v1/metrics/",
    "vllm/v1/engine/async_llm.py",
    "vllm/v1/engine/core_client.py",
    "vllm/config/",
    "vllm/engine/arg_utils.py",
    "vllm/v1/spec_decode/metrics.py",
    "vllm/platforms/__init__.py",
    "vllm/transformers_utils/",
    "vllm/tokenizers/",
    "vllm/renderers/",
    "vllm/usage/",
    "vllm/envs.py",
)
_VLLM_CORE = (
    "vllm/v1/engine/",
    "vllm/v1/core/",
    "vllm/v1/executor/",
    "vllm/v1/structured_output/",
    "vllm/distributed/kv_transfer/kv_connector/v1/base.py",
)
# SGLang modules that run in the main process (no rank suffix in the header).
_SGLANG_MAIN = (
    "sglang/srt/entrypoints/",
    "sglang/srt/server_args.py",
    "sglang/srt/managers/tokenizer_manager.py",
    "sglang/launch_server.py",
    "sglang/srt/managers/detokenizer_manager.py",
    "sglang/srt/managers/data_parallel_controller.py",
    "sglang/srt/managers/template_manager.py",
)


def vllm_process(module: str) -> str:
    if module.startswith(_VLLM_API):
        return "APIServer pid=1"
    if module.startswith(_VLLM_CORE):
        return "EngineCore pid=180"
    return "Worker_TP0 pid=226"


def default_value(ph: Placeholder) -> Any:
    conv = ph.spec.rstrip("}")[-1:] if ph.spec.startswith("{") else ph.spec[-1:]
    if conv in "dixXou" and conv:
        return 4
    if conv in "eEfFgG%" and conv:
        return 1.5
    name = re.sub(r"\W+", "_", ph.expr).strip("_")
    if _NUMERIC_HINT.search(name):
        return 8
    return name.rsplit("_", 1)[-1] if len(name) > 24 else name


def format_value(value: Any, spec: str) -> str:
    """Format as the call site would: a `%` conversion (`%.2f`) or a str.format spec (`{:,}`, `{!r}`)."""
    if spec.startswith("%"):
        conv = spec[-1]
        if conv in "dixXou" and isinstance(value, float):
            value = int(value)
        if conv in "dixXoueEfFgG" and isinstance(value, str):
            return value
        try:
            return spec % (value,)
        except (TypeError, ValueError):
            return str(value)
    inner = spec[1:-1]
    conv_s = ""
    if inner.startswith("!"):
        conv_s, _, inner = inner[1:].partition(":")
    else:
        inner = inner[1:] if inner.startswith(":") else inner
    if conv_s == "r" and not isinstance(value, str | int | float):
        value = repr(value)
    elif conv_s == "r":
        return repr(value)
    try:
        return format(value, inner)
    except (TypeError, ValueError):
        return str(value)


def render_message(message: Message, entry: Relevant) -> str:
    out: list[str] = []
    index = 0
    for part in message.parts:
        if isinstance(part, str):
            out.append(part)
            continue
        value = _value_for(entry, index, part)
        index += 1
        out.append(format_value(value, part.spec))
    text = "".join(out)
    for pattern in entry.drop:
        text = re.sub(pattern, "", text)
    # Multi-line messages: the header goes on the first line only; keep it one line for the case.
    return " ".join(text.strip().splitlines())


def _value_for(entry: Relevant, index: int, part: Placeholder) -> Any:
    if index in entry.values:
        return entry.values[index]
    if part.expr in entry.values:
        return entry.values[part.expr]
    for key, value in entry.values.items():
        if isinstance(key, str) and key.endswith("*") and part.expr.startswith(key[:-1]):
            return value
    return default_value(part)


def render_line(engine: str, version: str, message: Message, entry: Relevant) -> str:
    text = render_message(message, entry)
    level = entry.level or message.level
    if engine == "vllm":
        filename = message.module.rsplit("/", 1)[-1]
        if level == "DEBUG" and _version_tuple(version) >= (0, 11):
            # Only a VLLM_LOGGING_LEVEL=DEBUG run prints DEBUG lines, and from 0.11 it names the file by its path.
            filename = message.module.removeprefix("vllm/")
        header = f"{level} 11-30 10:00:00 [{filename}:{message.line}] "
        if _version_tuple(version) >= (0, 30):
            return f"({entry.process or vllm_process(message.module)}) {header}{text}"
        return header + text
    suffix = "" if message.module.startswith(_SGLANG_MAIN) else " TP0"
    if entry.process is not None:
        suffix = entry.process
    return f"[2025-11-30 10:00:00{suffix}] {text}"


def _version_tuple(version: str) -> tuple[int, ...]:
    nums = re.findall(r"\d+", version)
    return tuple(int(n) for n in nums[:3]) if nums else (0,)
