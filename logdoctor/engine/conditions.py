"""The rule condition language: a small grammar over fact names, parsed at load, never eval'd.

    mean(spec.acceptance_length) < 1.3 + 0.1 * spec.num_tokens and spec.num_tokens >= 2
    attention.backend in ['XFORMERS', 'TORCH_SDPA'] or exists(attention.fallback_reason)
    share(sched.waiting > 0) >= 0.3 and max(kv.usage) >= 0.9
    not cuda_graphs.enabled

Values: numbers, 'strings', true/false, [lists]; arithmetic + - * /; comparisons < <= > >= == !=;
`in` / `not in` (a list's item, or a part of a text); `and` / `or` / `not`; `exists(fact)`; aggregations over a time series
(mean, median, max, min, p10, p90, first, last, sum, count) and `share(series OP value)`.
In `logdoctor diff`, `baseline.<fact>` reads the baseline deployment's fact (`mean(baseline.spec.acceptance_length)`).

Logic is three-valued: a comparison that reads a missing fact is *unknown* (None), so a rule can tell
"ruled out" from "could not check".
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from logdoctor.engine.aggregations import AGGREGATIONS
from logdoctor.engine.conditioncache import decode, encode, parse_cache
from logdoctor.engine.conditiongrammar import _grammar, _read
from logdoctor.engine.conditiontree import (
    MISSING,
    Aggregate,
    Arith,
    BoolOp,
    Compare,
    ConditionError,
    Exists,
    FactRef,
    FactSource,
    ListNode,
    Missing,
    Negate,
    Node,
    Not,
    Share,
    Truth,
)
from logdoctor.facts import BASELINE_PREFIX, FACTS

# The language's public face: its trees, errors and limits come from here whichever module defines them.
__all__ = [
    "MAX_CONDITION_LENGTH",
    "MAX_NESTING",
    "MAX_OPERATORS",
    "MISSING",
    "ConditionError",
    "FactSource",
    "Missing",
    "Node",
    "parse_condition",
    "parse_expression",
    "reads_baseline",
]


def _check(node: Node, known: Sequence[str] | None = None) -> None:
    """Reject unknown facts and series used without an aggregation (and aggregations of non-series).

    `baseline.<fact>` is known whenever `<fact>` is."""
    names: Collection[str] = set(known) if known is not None else FACTS  # not a copy of FACTS a call

    def unknown(name: str, column: int) -> ConditionError:
        bare = name.removeprefix(BASELINE_PREFIX)
        prefix = name[: len(name) - len(bare)]
        return ConditionError(f"unknown fact '{name}'{_suggest(bare, names, prefix)}", column)

    def visit(n: Node, aggregated: bool) -> None:
        if isinstance(n, FactRef):
            bare = n.name.removeprefix(BASELINE_PREFIX)
            if bare not in names:
                raise unknown(n.name, n.column)
            kind = FACTS[bare].kind if bare in FACTS else "number"
            if kind == "series" and not aggregated:
                raise ConditionError(
                    f"'{n.name}' is a time series: use it inside mean(), median(), max(), min(), p10(), share(), ...",
                    n.column,
                )
            if aggregated and kind not in ("series", "list"):
                raise ConditionError(f"'{n.name}' is a single value, not a series: drop the aggregation", n.column)
            return
        if isinstance(n, Aggregate | Share):
            visit(n.ref, True)
            if isinstance(n, Share):
                visit(n.threshold, False)
            return
        if isinstance(n, Exists):
            if n.ref.name.removeprefix(BASELINE_PREFIX) not in names:
                raise unknown(n.ref.name, n.ref.column)
            return
        for child in _children(n):
            visit(child, False)

    visit(node, False)


def _children(n: Node) -> list[Node]:
    if isinstance(n, Arith | Compare):
        return [n.left, n.right]
    if isinstance(n, Negate | Truth | Not):
        return [n.operand]
    if isinstance(n, BoolOp):
        return list(n.operands)
    if isinstance(n, ListNode):
        return list(n.items)
    return []


_CALL_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_OPERATOR_AT_RE = re.compile(r"[<>=!]=?=?=?|[-+*/]{2,}")
_COMPARISONS = ("<=", ">=", "==", "!=", "<", ">")


def _parse_error(text: str, column: int, detail: str) -> ConditionError:
    """What pyparsing's "Expected end of text" at a column means, said at the column of the cause: a function
    name that is not one (with the closest names), an operator that is not one, or the text that could not be
    read."""
    functions = {*AGGREGATIONS, "exists", "share"}
    for m in _CALL_RE.finditer(_STRING_RE.sub(lambda s: "_" * len(s.group(0)), text)):
        name = m.group(1)
        if name.lower() not in functions and name.lower() not in ("and", "or", "not", "in"):
            return ConditionError(f"unknown function '{name}'{_suggest(name, functions)}", m.start() + 1)
    rest = text[column - 1 :]
    operator = _OPERATOR_AT_RE.match(rest)
    if operator is not None and operator.group(0) not in _COMPARISONS:
        close = [op for op in _COMPARISONS if op in operator.group(0)][:1]
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return ConditionError(f"unknown operator '{operator.group(0)}'{hint}", column)
    shown = rest if len(rest) <= 40 else rest[:37] + "..."
    what = f"cannot parse from '{shown}'" if shown.strip() else "cannot parse: it ends where a value is expected"
    # pyparsing's "Expected ..." names one token, or spells out the whole grammar (no help then)
    return ConditionError(f"{what} ({detail})" if len(detail) <= 60 else what, column)


def _suggest(name: str, names: Collection[str], prefix: str = "") -> str:
    import difflib

    close = difflib.get_close_matches(name, sorted(names), n=1)
    return f" (did you mean '{prefix}{close[0]}'?)" if close else ""


MAX_CONDITION_LENGTH = 2000  # characters of one condition or expression
MAX_NESTING = 16  # parentheses and brackets inside each other (the grammar's time grows fast with depth)
MAX_OPERATORS = 100  # and/or/not/in, comparisons and arithmetic in one condition
_OPERATOR_RE = re.compile(r"\b(?:and|or|not|in)\b|[<>=!]=|[-+*/<>]", re.IGNORECASE)
_STRING_RE = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def _check_size(text: str) -> None:
    """Limits a rule author never reaches, so that a hostile rule file costs milliseconds, not minutes (or the
    stack): its length, its nesting depth and its number of operators, each an error at a column."""
    if len(text) > MAX_CONDITION_LENGTH:
        raise ConditionError(f"longer than {MAX_CONDITION_LENGTH} characters", MAX_CONDITION_LENGTH + 1)
    if len(text) <= MAX_OPERATORS and text.count("(") + text.count("[") <= MAX_NESTING:
        return  # neither limit can be reached: an operator takes at least one character (most texts a start reads)
    bare = _STRING_RE.sub(lambda m: "_" * len(m.group(0)), text)  # brackets and words inside strings don't count
    depth = 0
    for index, char in enumerate(bare):
        if char in "([":
            depth += 1
            if depth > MAX_NESTING:
                raise ConditionError(f"nested deeper than {MAX_NESTING} parentheses", index + 1)
        elif char in ")]":
            depth -= 1
    for count, m in enumerate(_OPERATOR_RE.finditer(bare), start=1):
        if count > MAX_OPERATORS:
            raise ConditionError(f"more than {MAX_OPERATORS} operators", m.start() + 1)


# The texts read in this process and their trees (trees are never changed once made, so rules share them): the
# built-in rules write the same placeholder (`{spec.num_tokens}`, `{parallel.tp}`) in many templates, and a third
# of the texts a cold start reads are such repeats. Bounded, for a long-running `watch` whose rules are edited.
_READ: dict[tuple[str, str], Node] = {}
_MAX_READ = 4096


def _parse(kind: str, text: str, known: Sequence[str] | None) -> Node:
    read = _READ.get((kind, text))
    if read is None:
        _check_size(text)
    cache = parse_cache()
    key = f"{kind}\0{text}"
    node: Node | None = None
    cached = cache.get(key) if cache is not None else None
    if cache is not None and cached is not None:
        try:
            node = decode(cached)
        except (ValueError, RecursionError):
            cache.discard([key])
    if node is None:
        node = read if read is not None else (_read(kind, text) or _pyparse(kind, text))
        if read is None and len(_READ) < _MAX_READ:
            _READ[kind, text] = node
        if cache is not None:
            cache.put(key, encode(node))
    _check(node, known)
    return node


def _pyparse(kind: str, text: str) -> Node:
    """`text` read by the pyparsing grammar; a ConditionError saying where and why it does not parse."""
    import pyparsing as pp

    try:
        result = _grammar(kind).parse_string(text, parse_all=True)
    except pp.ParseBaseException as exc:
        raise _parse_error(text, exc.col, exc.msg) from None
    node = result[0]
    assert isinstance(node, Node)
    return node


def parse_condition(text: str, known: Sequence[str] | None = None) -> Node:
    """Parse a `when` / `ruled_out_when` condition; raises ConditionError with a column."""
    return _parse("condition", text, known)


def parse_expression(text: str, known: Sequence[str] | None = None) -> Node:
    """Parse a numeric expression (score metric, template placeholder)."""
    return _parse("expression", text, known)


def reads_baseline(node: Node) -> bool:
    """Whether a parsed condition or expression names a `baseline.` fact (a diff-mode rule)."""
    return any(name.startswith(BASELINE_PREFIX) for name in node.facts())
