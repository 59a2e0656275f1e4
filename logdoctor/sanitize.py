"""The output border: text that came from a log, a host or a file, made safe to show.

    evidence line with \x1b]52;c;ZWNobyBwd25lZA==\x07 in it  ->  evidence line with \\x1b]52;c;ZWNobyBwd25lZA==\\x07 in it

Every C0 control but tab and newline, DEL, every C1 control (U+0080-U+009F: 8-bit CSI U+009B and OSC
U+009D included), the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) and the
line/paragraph separators are replaced by their visible escapes (`\\x1b`, `\\x9b`, `\\u202e`). Without
the ESC (or 8-bit introducer) byte no escape sequence can act: OSC 52 clipboard writes, title changes,
screen clears and hyperlinks all print as inert text.

Each renderer calls `clean` once on the model it renders (a Diagnosis, a DiffReport, an event), not field
by field; the renderers then never let rich read such text as markup (`rich.text.Text`, `markup=False`).
"""

from __future__ import annotations

import re
import sys
from typing import Any, TypeVar

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
T = TypeVar("T")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean_text(text: str) -> str:
    """`text` with every control and bidi character shown as its escape; the same object when there is none."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_visible, text)


def one_line(text: str) -> str:
    """`clean_text` for text shown inside one line (a file name in an error, a progress line): newlines too."""
    return clean_text(text).replace("\n", "\\n")


def clean(value: T) -> T:
    """A copy of `value` (a record or pydantic model, dict, list, tuple or str, nested) with every string `clean_text`-ed.

    Parts without anything to clean are returned as they are (no copy)."""
    return _clean(value)  # type: ignore[no-any-return]


def _is_model(value: Any) -> bool:
    # A record (logdoctor.records.Record: events, results) or a pydantic model. Neither module is imported for this:
    # a record exists only where logdoctor.records was imported (logdoctor --version imports this module and need
    # not pay for them; docs/benchmarks.md, *Start-up*), a pydantic model only where pydantic was.
    records = sys.modules.get("logdoctor.records")
    if records is not None and isinstance(value, records.Record):
        return True
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(value, pydantic.BaseModel)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if _is_model(value):
        updates: dict[str, Any] = {}
        for name in type(value).model_fields:
            current = getattr(value, name)
            cleaned = _clean(current)
            if cleaned is not current:
                updates[name] = cleaned
        return value.model_copy(update=updates) if updates else value
    if isinstance(value, dict):
        items = [(_clean(k), _clean(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        cleaned_items = [_clean(v) for v in value]
        if all(a is b for a, b in zip(cleaned_items, value, strict=True)):
            return value
        return type(value)(cleaned_items) if isinstance(value, tuple) else cleaned_items
    return value


def has_unsafe(text: str) -> bool:
    """Whether `text` holds anything `clean_text` would replace (tests, the fuzz harness)."""
    return _UNSAFE.search(text) is not None
