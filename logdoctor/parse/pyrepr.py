"""A pyparsing grammar for the Python-literal and repr syntax of engine configuration dumps.

It reads what `repr()`, `str(VllmConfig)` and argparse print, which `ast.literal_eval` cannot:

    >>> parse_value("{'mode': <CompilationMode.VLLM_COMPILE: 3>, 'sizes': [1, 2]}").value
    {'mode': {'__enum__': 'CompilationMode.VLLM_COMPILE', 'value': 3}, 'sizes': [1, 2]}
    >>> parse_value("SpeculativeConfig(method='dflash', model=None, num_spec_tokens=15)").value
    {'__class__': 'SpeculativeConfig', 'method': 'dflash', 'model': None, 'num_spec_tokens': 15}
    >>> parse_kwargs("model='/m', dtype=torch.bfloat16, tensor_parallel_size=2").value
    {'model': '/m', 'dtype': 'torch.bfloat16', 'tensor_parallel_size': 2}

A dump cut off mid-value (a log line truncated by a paste, `'num_sp...`) still yields every complete
item before the cut, with `truncated=True`:

    >>> r = parse_value("{'method': 'dflash', 'model': '/root/models/Qwen3.6-27B-DFlash', 'num_sp...")
    >>> r.value, r.truncated
    ({'method': 'dflash', 'model': '/root/models/Qwen3.6-27B-DFlash'}, True)

Also: JSON (`true`/`false`/`null`), tuples, sets, `<function f at 0x7f>`, bare and dotted names
(`auto`, `torch.bfloat16`, `compressed-tensors`) and `...` elisions inside containers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyparsing as pp

_ELLIPSIS = object()


def _build() -> tuple[pp.ParserElement, pp.ParserElement]:
    import pyparsing as pp

    pp.ParserElement.enable_packrat()
    LBRACE, RBRACE, LBRACK, RBRACK, LPAR, RPAR, COLON, EQ = map(pp.Suppress, "{}[]():=")

    value = pp.Forward()
    value.set_name("value")

    sq_string = pp.QuotedString("'", esc_char="\\", unquote_results=True)
    dq_string = pp.QuotedString('"', esc_char="\\", unquote_results=True)
    string = (sq_string | dq_string).set_name("string")

    number = pp.Regex(_NUMBER_RE.pattern).set_name("number")
    number.set_parse_action(lambda t: float(t[0]) if any(c in t[0] for c in ".eE") else int(t[0]))

    constant = pp.Regex(_CONSTANT_RE.pattern).set_name("constant")
    # A parse action returning None keeps the tokens, so wrap the value in a list.
    constant.set_parse_action(lambda t: [_CONSTANTS[t[0]]])

    ellipsis = pp.Regex(_ELLIPSIS_RE.pattern).set_name("ellipsis")
    ellipsis.set_parse_action(lambda: [_ELLIPSIS])

    identifier = pp.Regex(_IDENTIFIER_RE.pattern)
    dotted = pp.Regex(_DOTTED_RE.pattern)
    # Bare words as str(VllmConfig) prints them: auto, cuda:0, compressed-tensors, torch.bfloat16, /path/x
    bare = pp.Regex(_BARE_RE.pattern).set_name("bare word")

    # <CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, <CompilationMode.VLLM_COMPILE: 3>
    enum_repr = pp.Suppress("<") + dotted("name") + COLON + value("value") + pp.Suppress(">")
    enum_repr.set_parse_action(lambda t: {"__enum__": t["name"], "value": t["value"]})
    # <function ServeSubcommand.cmd at 0x7dc10ca6fba0>, <class 'foo'>, anything else in angle brackets
    opaque = pp.Regex(_OPAQUE_RE.pattern).set_name("opaque repr")
    opaque.set_parse_action(lambda t: t[0])

    def _items(tokens: pp.ParseResults) -> list[Any]:
        return [x for x in tokens.as_list() if x is not _ELLIPSIS]

    list_items = pp.Optional(pp.DelimitedList(value, allow_trailing_delim=True))
    list_value = pp.Group(LBRACK + list_items + RBRACK)
    list_value.set_parse_action(lambda t: [_items(t[0])])
    tuple_value = pp.Group(LPAR + list_items + RPAR)
    tuple_value.set_parse_action(lambda t: [_items(t[0])])

    dict_entry = pp.Group(value("key") + COLON + value("value")) | ellipsis
    dict_value = pp.Group(LBRACE + pp.Optional(pp.DelimitedList(dict_entry, allow_trailing_delim=True)) + RBRACE)

    def _to_dict(t: pp.ParseResults) -> list[dict[Any, Any]]:
        out: dict[Any, Any] = {}
        for entry in t[0]:
            if entry is _ELLIPSIS:
                continue
            key = entry["key"]
            out[key if isinstance(key, str | int | float | bool) or key is None else str(key)] = entry["value"]
        return [out]

    dict_value.set_parse_action(_to_dict)
    set_value = pp.Group(LBRACE + pp.DelimitedList(value, allow_trailing_delim=True) + RBRACE)
    set_value.set_parse_action(lambda t: [_items(t[0])])

    kwarg = pp.Group(identifier("key") + EQ + value("value"))
    call_arg = kwarg | ellipsis | value
    call = dotted("callee") + pp.Group(
        LPAR + pp.Optional(pp.DelimitedList(call_arg, allow_trailing_delim=True)) + RPAR
    )("args")

    def _to_call(t: pp.ParseResults) -> list[dict[str, Any]]:
        out: dict[str, Any] = {"__class__": t["callee"]}
        positional: list[Any] = []
        for arg in t["args"]:
            if arg is _ELLIPSIS:
                continue
            if isinstance(arg, pp.ParseResults) and "key" in arg:
                out[arg["key"]] = arg["value"]
            else:
                positional.append(arg)
        if positional:
            out["__args__"] = positional
        return [out]

    call.set_parse_action(_to_call)

    value <<= (
        string
        | enum_repr
        | opaque
        | dict_value
        | set_value
        | list_value
        | tuple_value
        | number
        | constant
        | call
        | ellipsis
        | bare
    )

    # Top-level `key=value, key=value` (str(VllmConfig)); values may be bare words.
    top_kwarg = pp.Group(identifier("key") + EQ + value("value")) | ellipsis
    kwargs = pp.Optional(pp.DelimitedList(top_kwarg, allow_trailing_delim=True))
    return value, kwargs


_GRAMMARS: list[tuple[pp.ParserElement, pp.ParserElement]] = []  # (VALUE, KWARGS), built on first use


def _grammar(kind: str) -> pp.ParserElement:
    """The pyparsing grammar (`value` or `kwargs`), built and pyparsing imported only when the plain reader below
    cannot answer: importing pyparsing is a tenth of a short diagnose's start-up (docs/benchmarks.md, *Start-up*)."""
    if not _GRAMMARS:
        _GRAMMARS.append(_build())
    value, kwargs = _GRAMMARS[0]
    return value if kind == "value" else kwargs


# --- the plain reader: a dump read as the grammar reads it, without pyparsing ------------------------------------
#
# Most dumps hold only quoted strings without backslashes, numbers, the constants, dicts, lists and tuples, bare words
# (`auto`, `torch.bfloat16`, `Qwen/Qwen3-8B`), calls (`SpeculativeConfig(method='dflash', ...)`), enum reprs
# (`<CompilationMode.VLLM_COMPILE: 3>`), opaque reprs (`<function f at 0x7f>`) and `...` elisions; the engine-init
# dump is `key=value, ...` of those. The reader below is the grammar's ordered choice written out (the grammar's own
# regexes, tried in the same order, no backtracking into a choice once it matched), so for such a text (or one of them
# cut off) it gives what the grammar gives, some forty times faster; pyparsing is then never imported. It says when it cannot
# tell: a set, an escape, a line break in a string, a dict key that is not a plain value, or anything it does not read
# is OUTSIDE, and the grammar reads the text. FAILED is said only where the grammar must fail too: the text ends
# inside a container or a string, as a cut-off dump does. tests/parse/test_pyrepr.py checks the answers against the
# grammar's on generated dumps and every cut of them.

OUTSIDE = object()  # not a text the plain reader reads: ask the grammar
FAILED = object()  # the grammar fails on this text too
_SPACE = " \t\n\r"  # pyparsing's default whitespace
_NUMBER_RE = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_CONSTANT_RE = re.compile(r"(?:None|True|False|true|false|null|nan|inf|-inf)(?![\w.\-/])")
_CONSTANTS: dict[str, Any] = {
    "None": None,
    "null": None,
    "True": True,
    "true": True,
    "False": False,
    "false": False,
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
}
_IDENTIFIER_RE = re.compile(r"[A-Za-z_]\w*")
_DOTTED_RE = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*")
_BARE_RE = re.compile(r"[A-Za-z_/~][\w.\-/:+@~]*(?<![.:])")
_OPAQUE_RE = re.compile(r"<[^<>]*>")
_ELLIPSIS_RE = re.compile(r"\.\.\.|…")
_CLOSERS = {"{": "}", "[": "]", "(": ")"}


class _Stop(Exception):
    def __init__(self, answer: object) -> None:
        self.answer = answer


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _plain_string(text: str, at: int) -> tuple[str, int]:
    char = text[at]
    end = at + 1
    while end < len(text) and text[end] != char:
        if text[end] in "\\\n\r":
            raise _Stop(OUTSIDE)
        end += 1
    if end >= len(text):
        raise _Stop(FAILED)  # cut inside the string
    return text[at + 1 : end], end + 1


def _plain_item(text: str, at: int, depth: int) -> tuple[Any, int]:
    """One `value` at `at` (after whitespace): the value (`_ELLIPSIS` for an elision) and where it ends."""
    at = _skip(text, at)
    if at >= len(text):
        raise _Stop(FAILED)
    char = text[at]
    if char in "'\"":
        return _plain_string(text, at)
    if char == "<":
        return _plain_angle(text, at, depth)
    if char in _CLOSERS:
        if depth >= MAX_DEPTH:
            raise _Stop(OUTSIDE)
        return _plain_container(text, at, depth + 1)
    number = _NUMBER_RE.match(text, at)
    if number is not None:
        token = number.group(0)
        return (float(token) if any(c in token for c in ".eE") else int(token)), number.end()
    constant = _CONSTANT_RE.match(text, at)
    if constant is not None:
        return _CONSTANTS[constant.group(0)], constant.end()
    dotted = _DOTTED_RE.match(text, at)
    if dotted is not None:
        after = _skip(text, dotted.end())
        if after < len(text) and text[after] == "(":
            if depth >= MAX_DEPTH:
                raise _Stop(OUTSIDE)
            return _plain_call(text, dotted.group(0), after, depth + 1)
    elision = _ELLIPSIS_RE.match(text, at)
    if elision is not None:
        return _ELLIPSIS, elision.end()
    bare = _BARE_RE.match(text, at)
    if bare is not None:
        return bare.group(0), bare.end()
    raise _Stop(OUTSIDE)


def _plain_angle(text: str, at: int, depth: int) -> tuple[Any, int]:
    """`<Name.MEMBER: value>` (an enum repr), else `<...>` with no angle bracket inside (an opaque repr), as the grammar
    tries them: the opaque repr only where the enum repr surely fails (its name, colon or closing `>` is missing, or
    its value is cut off)."""
    name = _DOTTED_RE.match(text, _skip(text, at + 1))
    colon = _skip(text, name.end()) if name is not None else len(text)
    if name is not None and colon < len(text) and text[colon] == ":":
        if depth >= MAX_DEPTH:
            raise _Stop(OUTSIDE)
        try:
            value, end = _plain_item(text, colon + 1, depth + 1)
        except _Stop as stop:
            if stop.answer is not FAILED:
                raise
        else:
            if value is _ELLIPSIS:
                raise _Stop(OUTSIDE)  # the grammar keeps the elision as the value
            end = _skip(text, end)
            if end < len(text) and text[end] == ">":
                return {"__enum__": name.group(0), "value": value}, end + 1
    opaque = _OPAQUE_RE.match(text, at)
    if opaque is None:
        raise _Stop(OUTSIDE)
    return opaque.group(0), opaque.end()


def _plain_call(text: str, callee: str, at: int, depth: int) -> tuple[dict[str, Any], int]:
    """`Callee(key=value, value, ...)` from its `(` at `at`: positional values under `__args__`. Any trouble inside is
    OUTSIDE: the grammar then reads the callee as a bare word and fails on the bracket, or reads what this does not."""
    out: dict[str, Any] = {"__class__": callee}
    positional: list[Any] = []
    try:
        at = _skip(text, at + 1)
        while True:
            if at >= len(text):
                raise _Stop(OUTSIDE)
            if text[at] == ")":
                break
            key = _IDENTIFIER_RE.match(text, at)
            equals = _skip(text, key.end()) if key is not None else -1
            if key is not None and equals < len(text) and text[equals] == "=":
                value, at = _plain_item(text, equals + 1, depth)
                if value is _ELLIPSIS:
                    raise _Stop(OUTSIDE)
                out[key.group(0)] = value
            else:
                value, at = _plain_item(text, at, depth)
                if value is not _ELLIPSIS:
                    positional.append(value)
            at = _skip(text, at)
            if at < len(text) and text[at] == ",":
                at = _skip(text, at + 1)
            elif at >= len(text) or text[at] != ")":
                raise _Stop(OUTSIDE)
    except _Stop:
        raise _Stop(OUTSIDE) from None
    if positional:
        out["__args__"] = positional
    return out, at + 1


def _plain_container(text: str, at: int, depth: int) -> tuple[Any, int]:
    opener = text[at]
    closer = _CLOSERS[opener]
    items: list[Any] = []
    entries: dict[Any, Any] = {}
    at = _skip(text, at + 1)
    while True:
        if at >= len(text):
            raise _Stop(FAILED)
        if text[at] == closer:
            return (entries if opener == "{" else items), at + 1
        item, at = _plain_item(text, at, depth)
        if opener == "{" and item is not _ELLIPSIS:
            if not isinstance(item, str | int | float | bool) and item is not None:
                raise _Stop(OUTSIDE)  # the grammar turns such a key into its str(): not ours to guess
            at = _skip(text, at)
            if at >= len(text):
                raise _Stop(FAILED)
            if text[at] != ":":
                raise _Stop(OUTSIDE)  # a set, or not a dict at all
            value, at = _plain_item(text, at + 1, depth)
            if value is _ELLIPSIS:
                raise _Stop(OUTSIDE)
            entries[item] = value
        elif item is not _ELLIPSIS:
            items.append(item)
        at = _skip(text, at)
        if at >= len(text):
            raise _Stop(FAILED)
        if text[at] == ",":
            at = _skip(text, at + 1)
        elif text[at] != closer:
            raise _Stop(OUTSIDE)


def _plain_value(text: str) -> object:
    """The value the grammar reads from `text`; else OUTSIDE, or FAILED (cut off)."""
    try:
        value, at = _plain_item(text, 0, 0)
    except _Stop as stop:
        return stop.answer
    except RecursionError:
        return OUTSIDE
    if value is _ELLIPSIS:
        return OUTSIDE
    return value if _skip(text, at) == len(text) else OUTSIDE


def _plain_kwargs(text: str) -> object:
    """The `key=value, ...` dict the grammar reads from `text` (elisions skipped); else OUTSIDE, or FAILED."""
    out: dict[str, Any] = {}
    try:
        at = _skip(text, 0)
        while at < len(text):
            elision = _ELLIPSIS_RE.match(text, at)
            if elision is not None:
                at = elision.end()
            else:
                key = _IDENTIFIER_RE.match(text, at)
                if key is None:
                    return OUTSIDE
                equals = _skip(text, key.end())
                if equals >= len(text) or text[equals] != "=":
                    return OUTSIDE
                value, at = _plain_item(text, equals + 1, 0)
                if value is _ELLIPSIS:
                    return OUTSIDE
                out[key.group(0)] = value
            at = _skip(text, at)
            if at < len(text):
                if text[at] != ",":
                    return OUTSIDE
                at = _skip(text, at + 1)
    except _Stop as stop:
        return stop.answer
    except RecursionError:
        return OUTSIDE
    return out


@dataclass(frozen=True)
class ParsedRepr:
    value: Any
    truncated: bool = False


# what a scan of a dump's structure looks at: a whole quoted string (skipped, escapes and all), a quote never
# closed, a bracket, a comma
_STRUCTURE_RE = re.compile(r"""'[^'\\]*(?:\\[\s\S][^'\\]*)*'|"[^"\\]*(?:\\[\s\S][^"\\]*)*"|['"]|[][{}(),]""")


@dataclass(frozen=True)
class TopLevel:
    """A dump's structure outside its quoted strings (`scan_top_level`)."""

    depth: int  # the bracket depth at the end: above 0 still open, below 0 over-closed
    quoted: bool  # a quote is never closed: the rest of the text is inside it
    commas: list[int]  # where the commas at depth 0 stand


def scan_top_level(text: str, *, clamp: bool = False) -> TopLevel:
    """The bracket depth at the end of `text`, an unclosed quote, the top-level commas; quoted strings are skipped.
    `clamp`: a closer with nothing open is ignored (else the depth goes below 0)."""
    depth = 0
    commas: list[int] = []
    for m in _STRUCTURE_RE.finditer(text):
        c = m.group()
        if len(c) > 1:
            continue  # a quoted string
        if c in "'\"":
            return TopLevel(depth, True, commas)
        if c in "{[(":
            depth += 1
        elif c in "}])":
            if depth or not clamp:
                depth -= 1
        elif depth == 0:
            commas.append(m.start())
    return TopLevel(depth, False, commas)


_OPEN = {"{": "}", "[": "]", "(": ")", "<": ">"}


def _repair(text: str) -> str | None:
    """Close a dump that was cut off: drop the incomplete last item and append the missing closers.

    Scans brackets and quotes; remembers where the last complete item of each open container ended.
    Returns None when there is nothing to salvage."""
    text = text.rstrip()
    for tail in ("...", "…", "[...]"):
        if text.endswith(tail):
            text = text[: -len(tail)]
    stack: list[tuple[str, int]] = []  # (opening char, position of the last separator inside it)
    top_sep = 0
    quote: str | None = None
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "{[(" or (c == "<" and i + 1 < n and (text[i + 1].isalpha())):
            stack.append((c, i + 1))
        elif c in "}])>" and stack and _OPEN[stack[-1][0]] == c:
            stack.pop()
        elif c == ",":
            if stack:
                stack[-1] = (stack[-1][0], i)
            else:
                top_sep = i
        i += 1
    if not stack and quote is None:
        # Unbracketed kwargs list cut inside a bare value: drop the last item.
        return text[:top_sep] if top_sep else None
    if not stack:
        return text[:top_sep] if top_sep else None
    # Cut at the last separator of the innermost container, then close every open container.
    cut = stack[-1][1]
    body = text[:cut]
    closers = "".join(_OPEN[opener] for opener, _ in reversed(stack))
    # An enum or call whose args are cut is not a value: drop it back to its own separator.
    if stack[-1][0] == "<":
        stack.pop()
        if not stack:
            return text[:top_sep] if top_sep else None
        body = text[: stack[-1][1]]
        closers = "".join(_OPEN[opener] for opener, _ in reversed(stack))
    return body.rstrip().rstrip(",") + closers


MAX_DEPTH = 64  # deeper nesting than any real dump: not parsed (pyparsing recursion would be wasted)


def _too_deep(text: str) -> bool:
    depth = 0
    for c in text:
        if c in "{[(":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif c in "}])":
            depth -= 1
    return False


# Real dumps are 5-30 kB (SGLang 0.5 prints 250-540 fields); anything longer is cut here, so a
# pathological line costs one bounded parse instead of pyparsing's time on megabytes.
MAX_CHARS = 128 * 1024


def _attempt(kind: str, text: str, convert: Any) -> object:
    """The converted parse of `text`, or FAILED: the plain reader first, then the grammar."""
    plain = _plain_value(text) if kind == "value" else _plain_kwargs(text)
    if plain is not OUTSIDE:
        return plain
    import pyparsing as pp

    try:
        return convert(_grammar(kind).parse_string(text, parse_all=True))
    except (pp.ParseBaseException, RecursionError):
        return FAILED


def _parse(kind: str, text: str, convert: Any) -> ParsedRepr | None:
    cut = len(text) > MAX_CHARS
    if cut:
        text = text[:MAX_CHARS]
    if _too_deep(text):
        return None
    if cut:
        return _parse_repaired(kind, text, convert)
    result = _attempt(kind, text, convert)
    if result is not FAILED:
        return ParsedRepr(result)
    return _parse_repaired(kind, text, convert)


def _parse_repaired(kind: str, text: str, convert: Any) -> ParsedRepr | None:
    repaired = _repair(text)
    attempts = 0
    while repaired is not None and attempts < 8:
        attempts += 1
        result = _attempt(kind, repaired, convert)
        if result is not FAILED:
            return ParsedRepr(result, truncated=True)
        repaired = _repair(repaired)
    return None


def parse_value(text: str) -> ParsedRepr:
    """Parse one Python-repr value; on failure return the text itself (never raises)."""
    parsed = _parse("value", text.strip(), lambda r: r[0] if len(r) else None)
    if parsed is None:
        return ParsedRepr(text, truncated=True)
    return parsed


def _kwargs_to_dict(result: pp.ParseResults) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in result:
        if item is _ELLIPSIS:
            continue
        out[item["key"]] = item["value"]
    return out


def parse_kwargs(text: str) -> ParsedRepr:
    """Parse `key=value, key=value, ...` (the vLLM engine-init dump); never raises.

    Items that do not parse are skipped one at a time, so one odd value costs only itself."""
    text = text.strip().rstrip(",").strip()
    parsed = _parse("kwargs", text, _kwargs_to_dict)
    if parsed is not None:
        return parsed
    return _parse_kwargs_itemwise(text)


def _split_top_level(text: str) -> list[str]:
    starts = [0, *(comma + 1 for comma in scan_top_level(text, clamp=True).commas)]
    ends = [*(start - 1 for start in starts[1:]), len(text)]
    parts = (text[start:end].strip() for start, end in zip(starts, ends, strict=True))
    return [p for p in parts if p]


def _parse_kwargs_itemwise(text: str) -> ParsedRepr:
    out: dict[str, Any] = {}
    truncated = False
    parts = _split_top_level(text)
    for index, part in enumerate(parts):
        key, sep, raw = part.partition("=")
        if not sep or not key.strip().isidentifier():
            truncated = truncated or index == len(parts) - 1
            continue
        value = parse_value(raw)
        if value.truncated and index == len(parts) - 1:
            truncated = True
            if isinstance(value.value, str) and value.value == raw.strip():
                continue
        out[key.strip()] = value.value
    return ParsedRepr(out, truncated=truncated)
