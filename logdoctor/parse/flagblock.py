"""A fenced block of engine flags, one a line: the launch settings of the run it is pasted with.

    - Backend Parameters:                  -> StartupConfig(origin="command line", config={"tp_size": 8,
      ```bash                                   "enable_dp_attention": True, "max_running_requests": 64},
      --tp-size=8                               engine: the one whose vocabulary alone has such a flag)
      --enable-dp-attention
      --max-running-requests=64
      ```

Deployment tools and documents list a server's arguments this way, without the program name (an argument list, as
a container's `args:` holds it): each line is one argument, `--name=value`, `--name value` or a bare switch, so a
value is the rest of its line (`--speculative-config={"method":"mtp"}` keeps its JSON). The engine is the one whose
flag vocabulary (logdoctor.registry) holds a flag of the block that no other engine's holds; a block no engine
claims alone gives nothing. Flags are read by their long names (`--tp-size` -> `tp_size`); a short alias is not.
"""

from __future__ import annotations

import re
from typing import Any

from logdoctor.events import EventBase, StartupConfig
from logdoctor.parse import cmdline
from logdoctor.registry import REGISTRY

# A Markdown fence, opening (with an info string: `bash`, `shell`) or closing, indented under a list item or an
# admonition.
_FENCE_RE = re.compile(r"^\s*(?:`{3,}|~{3,})\s*[\w+-]*\s*$")
# One argument a line: `--name`, `--name=value`, `--name value`; a trailing `\` (a shell continuation) is allowed.
_FLAG_LINE_RE = re.compile(r"^\s*(?P<name>--[A-Za-z][\w-]*)(?:(?:=|\s+)(?P<value>.*?))?\s*\\?\s*$")
MAX_FLAG_LINES = 200  # a longer run of flags is no argument list a person pasted


def is_fence(text: str) -> bool:
    return _FENCE_RE.match(text) is not None


def flag_words(lines: list[str]) -> list[str] | None:
    """The block's lines as arguments (`--name=value` or `--name`); None where a line is no flag."""
    words: list[str] = []
    for text in lines:
        m = _FLAG_LINE_RE.match(text)
        if m is None:
            return None
        raw = m.group("value")
        if raw is None or raw == "":
            words.append(m.group("name"))
            continue
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":  # a value quoted as the shell would take it
            raw = raw[1:-1]
        words.append(f"{m.group('name')}={raw}")
    return words


def _vocabularies() -> dict[str, frozenset[str]]:
    """Each serving engine's flags (`--max-num-seqs`), from its settings vocabulary."""
    out: dict[str, frozenset[str]] = {}
    for name in REGISTRY.names("serving"):
        spec = REGISTRY.get(name)
        if spec is None:
            continue
        tokens = {t for s in spec.flags.values() for t in (s.flag or "").split() if t.startswith("--") and "." not in t}
        out[name] = frozenset(tokens)
    return out


def engine_of(words: list[str], forced: str | None = None) -> str | None:
    """The engine whose vocabulary alone holds a flag of `words` (`forced`: the engine `--engine` names)."""
    if forced is not None:
        return forced
    vocabularies = _vocabularies()
    names = {w.split("=", 1)[0] for w in words}
    claims = [
        e
        for e, own in vocabularies.items()
        if any(n in own and all(n not in o for x, o in vocabularies.items() if x != e) for n in names)
    ]
    return claims[0] if len(claims) == 1 else None


def block_events(source: str, lines: list[tuple[int, str]], forced: str | None = None) -> list[EventBase]:
    """The configuration event of a fenced block's lines (number, text), or nothing where they are no flag list
    or no engine claims them."""
    if not lines or len(lines) > MAX_FLAG_LINES:
        return []
    words = flag_words([text for _, text in lines])
    return _config_events(source, lines[0][0], lines[-1][0], words, forced)


def _config_events(source: str, first: int, last: int, words: list[str] | None, forced: str | None) -> list[EventBase]:
    """The configuration event of `words` on lines `first`-`last`, where one engine's vocabulary claims them."""
    if words is None:
        return []
    engine = engine_of(words, forced)
    if engine is None:
        return []
    options: dict[str, Any] = cmdline.options(words, {})
    if not options:
        return []
    return [
        StartupConfig(
            source=source,
            line=first,
            end_line=last if last != first else None,
            engine=engine,
            origin="command line",
            config=options,
        )
    ]


# Markdown inline code in a line of prose: `--quantization fp8 --enforce-eager`.
_INLINE_CODE_RE = re.compile(r"`([^`]+)`")
# Words before a span that say the flags were not what ran: `without --enforce-eager`, `instead of`, `try`, and
# advice, an engine's own included (SGLang: "Please set proper `--max-total-tokens` to avoid ...").
_NOT_RUN_RE = re.compile(
    r"\b(?:without|w/o|no|not|never|remov\w*|drop\w*|instead|try|trying|could|should|would|if|unless|avoid\w*|"
    r"please|consider\w*|recommend\w*|suggest\w*|can|may|might)\b",
    re.IGNORECASE,
)


def inline_flag_words(text: str) -> list[str] | None:
    """The engine flags a line of prose gives in inline code spans made of flags only (`--tp 2 --enforce-eager`,
    not `vllm serve ...`, which a shell command's reader takes), as arguments; None where a span has a word that
    is no flag or flag value, or the words before it say the flags were not what ran."""
    words: list[str] = []
    start = 0
    for m in _INLINE_CODE_RE.finditer(text):
        tokens = m.group(1).split()
        if not tokens or not tokens[0].startswith("--"):
            continue
        if _NOT_RUN_RE.search(text[start : m.start()]):
            return None
        start = m.end()
        for index, token in enumerate(tokens):
            if token.startswith("--"):
                words.append(token)
            elif index > 0 and tokens[index - 1].startswith("--") and "=" not in tokens[index - 1]:
                words[-1] = f"{words[-1]}={token}"
            else:
                return None
    return words or None


def inline_events(source: str, number: int, text: str, forced: str | None = None) -> list[EventBase]:
    """The configuration event of the flags a line of prose gives in inline code (`inline_flag_words`), where one
    engine's vocabulary alone claims them."""
    return _config_events(source, number, number, inline_flag_words(text), forced)


class FlagBlockReader:
    """Watches the lines no line type took: a fence, then only flag lines, then a fence, all on consecutive lines, is
    a flag block."""

    def __init__(self) -> None:
        self.after_fence = False
        self.lines: list[tuple[int, str]] = []
        self.last = 0  # the number of the last line offered: a line some line type read in between breaks a block

    def interrupt(self) -> None:
        self.after_fence = False
        self.lines = []

    def offer(self, number: int, text: str) -> list[tuple[int, str]] | None:
        """The block's flag lines, once its closing fence arrives (`number`: the line's, to see lines in between).
        Every fence, and every line no line type took while `after_fence`, is to be offered."""
        if number != self.last + 1:
            self.interrupt()
        self.last = number
        if is_fence(text):
            found = self.lines if self.after_fence and self.lines else None
            self.after_fence, self.lines = found is None, []
            return found
        if self.after_fence and _FLAG_LINE_RE.match(text) is not None and len(self.lines) < MAX_FLAG_LINES:
            self.lines.append((number, text))
        else:
            self.interrupt()
        return None
