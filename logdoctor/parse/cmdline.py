"""A shell command pasted with a log -> the options it sets, keyed like argparse's `dest`.

    vllm serve Qwen/Qwen2.5-1.5B \\            -> {"model": "Qwen/Qwen2.5-1.5B", "tensor_parallel_size": 2,
        --tensor-parallel-size 2 --enforce-eager    "enforce_eager": True}

Users paste the command they ran above the log far more often than the engine's own configuration dump, and it
is then the only record of a flag such as `--enforce-eager`. This module knows no engine: each engine's line
type finds its own program name, gives the aliases of its short flags, and builds the event. Values are typed
as argparse would leave them for the facts (`2` -> 2, `0.95` -> 0.95, a JSON object -> dict, a bare flag ->
True, `--no-X` -> X = False); a shell redirection or pipe ends the command.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from logdoctor.events import EventBase, NcclEnv, StartupConfig
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import ParseContext
from logdoctor.registry import LazyPattern

# Tokens after which the rest is the shell's, not the program's: `| tee log`, `2>&1`, `> out.log`, `&& ...`.
_SHELL_END_RE = re.compile(r"^(?:\||\|\||&&|;|&|\d?>>?.*|<.*)$")
_NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$")
# Options whose values are credentials: never kept (the line was redacted already; this keeps them out of events).
_SECRET_DESTS = frozenset({"api_key", "hf_token", "token", "access_token"})
MAX_COMMAND_CHARS = 64 * 1024
MAX_COMMAND_LINES = 200  # continuation lines of one command at most

# An engine's event builder: (the command's first line, its text parts, the last line number or None) -> events.
EventsOf = Callable[[LogLine, ParseContext, list[str], "int | None"], list[EventBase]]


def read_command(line: LogLine, ctx: ParseContext, first: str, events_of: EventsOf) -> list[EventBase]:
    """The events of a pasted command whose text after the program name is `first`: at once when it does not
    end with a backslash, else once its continuation lines are read (a block that a blank line, a log header,
    a line not ending with a backslash, or MAX_COMMAND_LINES ends)."""
    if not first.endswith("\\"):
        return events_of(line, ctx, [first], None)
    parts = [first]
    state = {"end": line.number}

    def continuation(nxt: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = nxt.text.rstrip()
        if blocks.is_blank(nxt) or nxt.header is not None or nxt.process is not None:
            ctx.block = None
            events = events_of(line, ctx, parts, state["end"] if len(parts) > 1 else None)
            if blocks.is_blank(nxt):
                return events
            blocks.stash(ctx, events)
            return None
        parts.append(text)
        state["end"] = nxt.number
        if not text.endswith("\\") or len(parts) >= MAX_COMMAND_LINES:
            ctx.block = None
            return events_of(line, ctx, parts, state["end"])
        return []

    ctx.block = continuation
    return []


def read_launch(
    line: LogLine,
    ctx: ParseContext,
    command_re: re.Pattern[str],
    events_of: EventsOf,
    env_settings: Callable[[str], dict[str, Any]] | None = None,
) -> list[EventBase] | None:
    """A serving engine's launch command (`command_re` finds its program name and the options after it in `args`):
    the NCCL settings written before the program (`docker run -e NCCL_P2P_DISABLE=1 ...`, `NCCL_P2P_LEVEL=LOC vllm
    serve`), then the events of its options, once the continuation lines are read; None where it is no launch.
    `env_settings`: the engine's own settings among the variables written before the program (`VLLM_ATTENTION_BACKEND=
    FLASHMLA vllm serve ...`), keyed as its options are; an option the command gives wins."""
    m = command_re.search(line.message)
    if not m:
        return None
    prefix = line.message[: m.start()]
    env = nccl_env_events(line, ctx, prefix)
    settings = env_settings(prefix) if env_settings is not None else {}

    def with_env(line: LogLine, ctx: ParseContext, parts: list[str], end: int | None) -> list[EventBase]:
        events = events_of(line, ctx, parts, end)
        for event in events:
            if isinstance(event, StartupConfig):
                for key, value in settings.items():
                    event.config.setdefault(key, value)
        return events

    return env + read_command(line, ctx, m.group("args").rstrip(), with_env if settings else events_of)


def joined_options(parts: list[str], aliases: Mapping[str, str], positional: str | None = None) -> dict[str, Any]:
    """The options of a command read as `parts`, its first line's text and its continuation lines."""
    return options(tokens(" ".join(p.rstrip().removesuffix("\\") for p in parts)), aliases, positional)


def tokens(text: str) -> list[str]:
    """Shell words of `text` (one logical command, continuations already joined); tolerant of a stray quote."""
    text = text[:MAX_COMMAND_CHARS]
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError:  # an unbalanced quote (a cut paste): fall back to whitespace
        return text.split()


def value(raw: str) -> Any:
    """argparse-like typing of one option value."""
    if _NUMBER_RE.match(raw):
        number = float(raw)
        return int(number) if "." not in raw and "e" not in raw.lower() else number
    lowered = raw.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if raw[:1] in "{[":
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def options(words: list[str], aliases: Mapping[str, str], positional: str | None = None) -> dict[str, Any]:
    """The options of a program's arguments (`words` after the program name). `aliases` maps a spelling
    (`-tp`, `--tp`) to its dest; other `--long-name` options become `long_name`. The first bare word is the
    `positional` (vLLM's `serve MODEL`), other bare words are ignored; an unknown short option is skipped."""
    out: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if _SHELL_END_RE.match(word):
            break
        nxt = words[i + 1] if i + 1 < len(words) else None
        takes_next = (
            nxt is not None
            and not _SHELL_END_RE.match(nxt)
            and (not nxt.startswith("-") or bool(_NUMBER_RE.match(nxt)))
        )
        if word.startswith("--") and len(word) > 2:
            name, eq, raw = word[2:].partition("=")
            dest = aliases.get("--" + name) or name.replace("-", "_")
            if eq:
                val: Any = value(raw)
            elif takes_next and nxt is not None:
                val = value(nxt)
                i += 1
            elif dest.startswith("no_"):
                dest, val = dest[3:], False
            else:
                val = True
            if dest not in _SECRET_DESTS:
                out[dest] = val
        elif word.startswith("-") and len(word) > 1 and not _NUMBER_RE.match(word):
            name, eq, raw = word.partition("=")
            dest_or_none = aliases.get(name)
            if dest_or_none is None and not eq and len(word) > 2 and word[:2] in aliases:
                # argparse takes a one-letter option's value joined to it: `-O3` is `-O 3`
                name, eq, raw, dest_or_none = word[:2], "=", word[2:], aliases[word[:2]]
            if eq:
                if dest_or_none:
                    out[dest_or_none] = value(raw)
            elif takes_next and nxt is not None:
                if dest_or_none:
                    out[dest_or_none] = value(nxt)
                i += 1
            elif dest_or_none:
                out[dest_or_none] = True
        elif positional and positional not in out:
            out[positional] = word
        i += 1
    return out


# --- NCCL settings in a pasted shell line -------------------------------------------------------------------
# `docker run -e NCCL_P2P_DISABLE=1 ...`, `--env NCCL_P2P_LEVEL=LOC`, `export NCCL_P2P_DISABLE=1`, or assignments
# before the command (`NCCL_P2P_DISABLE=1 vllm serve ...`). Only these shell forms: a log message that suggests a
# setting (`... set NCCL_P2P_DISABLE=1 to ...`) is not one, so a bare `NAME=VALUE` counts only in the run of
# assignments before the command that begins the line (a line of assignments alone is left to
# collect_env's dump, whose section says it is the environment: tests/parse/test_env.py).
# Compiled on first use (registry.LazyPattern), as the engine packages' regexes are: most logs hold no such line.
_NCCL_SETTING = r"(?P<name>NCCL_[A-Z0-9_]+)=(?P<value>\"[^\"]*\"|'[^']*'|[^\s;&|\\]*)"
_SHELL_FLAG_ENV_RE = LazyPattern(r"(?:^|[\s;&(])(?:-e\s+|--env[=\s]+|export\s+|env\s+)" + _NCCL_SETTING, 0)
_LEADING_ASSIGNMENTS_RE = LazyPattern(
    r"^\s*(?:[$#]\s+)?(?P<run>(?:[A-Za-z_][A-Za-z0-9_]*=[^\s;&|]*\s+)+)(?=[^\s=]+(?:\s|$))", 0
)
_ASSIGNMENT_RE = LazyPattern(_NCCL_SETTING, 0)
# The launch commands the engines' command grammars read (vllm/engines/vllm/config.py, sglang/command.py).
LAUNCH_COMMAND_RE = LazyPattern(
    r"vllm serve|vllm\.entrypoints\.|vllm/vllm-openai|sglang\.launch_server|sglang serve", 0
)


def shell_env(text: str) -> list[tuple[str, str]]:
    """The NCCL_* settings a pasted shell line makes, as (name, value), in the order written."""
    found = [(m.group("name"), m.group("value")) for m in _SHELL_FLAG_ENV_RE.finditer(text)]
    lead = _LEADING_ASSIGNMENTS_RE.match(text)
    if lead:
        found += [(m.group("name"), m.group("value")) for m in _ASSIGNMENT_RE.finditer(lead.group("run"))]
    return [(name, value.strip("\"'")) for name, value in found]


def nccl_env_events(line: LogLine, ctx: ParseContext, text: str) -> list[EventBase]:
    """NcclEnv events for the settings `shell_env` finds in `text` (part of `line`)."""
    return [NcclEnv(**ctx.base(line, "nccl"), name=name, value=value) for name, value in shell_env(text)]
