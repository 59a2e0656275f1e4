"""Where in an evidence line the values of a finding are: character spans, for excerpts centred on them.

    fact spec.num_tokens = 15, line "... speculative_config=SpeculativeConfig(method='dflash', ..., num_spec_tokens=15)"
    -> [(start, end)] of "num_spec_tokens=15"

A value is looked for as the log prints it (a number in its usual spellings, a string, an enum's last part);
of several matches the one nearest a word of the fact's name wins (`tokens` for `spec.num_tokens`), and the
span grows left to take that word in when it sits just before the value (`num_spec_tokens=`). A fact whose
value the line does not print (a derived quantity, a boolean) is marked by the words of its name instead.
"""

from __future__ import annotations

import re
from typing import Any

Span = tuple[int, int]
_LABEL_REACH = 40  # how far before a value a word of the fact's name still labels it
_MAX_NEEDLES = 64
_GENERIC_WORDS = frozenset(
    {"num", "count", "enabled", "seconds", "value", "spec", "size", "mean", "max", "min", "warning"}
)


def _number_spellings(value: float) -> list[str]:
    out: list[str] = []
    if value.is_integer():
        out += [str(int(value)), f"{int(value):,}"]
    out += [f"{value:g}", f"{value:.1f}", f"{value:.2f}", f"{value:.3f}"]
    if 0 < value < 1:
        out += [f"{value * 100:.1f}%", f"{value * 100:.0f}%"]
    return list(dict.fromkeys(s for s in out if s not in ("0", "0.0", "0.00", "0.000")))


def _needles(value: Any) -> list[str]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return _number_spellings(float(value))
    if isinstance(value, str):
        text = value.strip()
        if len(text) < 2:
            return []
        return list(dict.fromkeys([text, text.rsplit(".", 1)[-1]]))
    if isinstance(value, list):
        out: list[str] = []
        for item in value[:_MAX_NEEDLES]:
            if not isinstance(item, list | dict):
                out.extend(_needles(item))
        return list(dict.fromkeys(out))
    return []


def name_words(name: str) -> list[str]:
    """`spec.acceptance_length` -> ['acceptance', 'length']; short and generic words are left out."""
    words = re.split(r"[._\s]+", name.lower())
    return [w for w in words if len(w) >= 4 and w not in _GENERIC_WORDS]


def _word_hits(text: str, words: list[str]) -> list[Span]:
    lowered = text.lower()
    hits: list[Span] = []
    for word in words:
        hits += [(m.start(), m.end()) for m in re.finditer(re.escape(word), lowered)]
    return sorted(hits)


def value_spans(text: str, name: str, value: Any) -> list[Span]:
    """The span of `value` (fact `name`) in `text`, at most one; the words of the name when the value is not printed."""
    words = name_words(name)
    labels = _word_hits(text, words)
    best: tuple[int, Span] | None = None
    for needle in _needles(value):
        if needle[0].isdigit() or needle[0] == "-":
            pattern = r"(?<![\w.])" + re.escape(needle) + r"(?![\d])"
            flags = 0
        else:
            pattern = r"(?<![\w])" + re.escape(needle) + r"(?![\w])"
            flags = re.IGNORECASE
        for match in re.finditer(pattern, text, flags):
            start, end = match.span()
            before = [label for label in labels if label[1] <= start and start - label[1] <= _LABEL_REACH]
            distance = start - before[-1][1] if before else _LABEL_REACH + 1 + start // 1000
            if before:
                span = (_key_start(text, before[-1][0]), end)
            elif start > 0 and text[start - 1] == "=":  # `tp_size=2`: the key it is the value of
                span = (_key_start(text, start - 1), end)
            else:
                span = (start, end)
            if best is None or distance < best[0]:
                best = (distance, span)
    if best is not None:
        return [best[1]]
    for word in sorted(words, key=len, reverse=True):  # the most specific word of the name
        hits = _word_hits(text, [word])
        if hits:
            return [(_key_start(text, hits[0][0]), hits[0][1])]
    return []


def _key_start(text: str, start: int) -> int:
    """The start of the identifier a word is part of: `tokens` -> `num_spec_tokens`."""
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return start


def merge_spans(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
