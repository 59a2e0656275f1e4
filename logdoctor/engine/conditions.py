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

import importlib.util
import operator
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from logdoctor import __version__
from logdoctor.cache import VerifiedCache, code_key
from logdoctor.engine.aggregations import AGGREGATIONS, aggregate
from logdoctor.facts import BASELINE_PREFIX, FACTS

if TYPE_CHECKING:
    import pyparsing as pp


class FactSource(Protocol):
    def value(self, name: str) -> Any: ...


class Missing:
    """A value that could not be computed because a fact is absent."""

    _instance: Missing | None = None

    def __new__(cls) -> Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING = Missing()


class ConditionError(ValueError):
    """A condition that does not parse or names an unknown fact; `column` is 1-based within the expression."""

    def __init__(self, message: str, column: int = 1) -> None:
        super().__init__(message)
        self.column = column


# --- AST -------------------------------------------------------------------------------------------


class Node:
    column: int = 1

    def eval(self, facts: FactSource) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def facts(self) -> set[str]:
        return set()


@dataclass
class Literal(Node):
    value: Any

    def eval(self, facts: FactSource) -> Any:
        return self.value


@dataclass
class FactRef(Node):
    name: str
    column: int = 1

    def eval(self, facts: FactSource) -> Any:
        value = facts.value(self.name)
        return MISSING if value is None else value

    def facts(self) -> set[str]:
        return {self.name}


@dataclass
class ListNode(Node):
    items: list[Node]

    def eval(self, facts: FactSource) -> Any:
        return [i.eval(facts) for i in self.items]

    def facts(self) -> set[str]:
        return set().union(*(i.facts() for i in self.items)) if self.items else set()


@dataclass
class Aggregate(Node):
    func: str
    ref: FactRef

    def eval(self, facts: FactSource) -> Any:
        series = self.ref.eval(facts)
        if series is MISSING or not isinstance(series, list) or not series:
            return MISSING
        numbers = [float(x) for x in series if isinstance(x, int | float) and not isinstance(x, bool)]
        if not numbers:
            return MISSING
        return aggregate(self.func, series, numbers)  # a sampled series: its exact count, sum, max, ...

    def facts(self) -> set[str]:
        return {self.ref.name}


@dataclass
class Share(Node):
    ref: FactRef
    op: str
    threshold: Node

    def eval(self, facts: FactSource) -> Any:
        series = self.ref.eval(facts)
        limit = self.threshold.eval(facts)
        if series is MISSING or limit is MISSING or not isinstance(series, list) or not series:
            return MISSING
        compare = _COMPARE[self.op]
        return sum(1 for x in series if compare(x, limit)) / len(series)

    def facts(self) -> set[str]:
        return {self.ref.name} | self.threshold.facts()


@dataclass
class Exists(Node):
    ref: FactRef

    def eval(self, facts: FactSource) -> Any:
        value = facts.value(self.ref.name)
        return value is not None and value != []

    def facts(self) -> set[str]:
        return {self.ref.name}


_ARITH: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": lambda a, b: a / b if b else float("inf"),
}

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


@dataclass
class Arith(Node):
    op: str
    left: Node
    right: Node

    def eval(self, facts: FactSource) -> Any:
        a, b = self.left.eval(facts), self.right.eval(facts)
        if a is MISSING or b is MISSING:
            return MISSING
        if (
            isinstance(a, bool)
            or isinstance(b, bool)
            or not isinstance(a, int | float)
            or not isinstance(b, int | float)
        ):
            return MISSING
        return _ARITH[self.op](float(a), float(b))

    def facts(self) -> set[str]:
        return self.left.facts() | self.right.facts()


@dataclass
class Negate(Node):
    operand: Node

    def eval(self, facts: FactSource) -> Any:
        v = self.operand.eval(facts)
        return MISSING if v is MISSING or isinstance(v, bool) or not isinstance(v, int | float) else -v

    def facts(self) -> set[str]:
        return self.operand.facts()


@dataclass
class Compare(Node):
    op: str
    left: Node
    right: Node

    def eval(self, facts: FactSource) -> bool | None:
        a, b = self.left.eval(facts), self.right.eval(facts)
        if a is MISSING or b is MISSING:
            return None
        if self.op in ("in", "not in"):
            if isinstance(a, str) and isinstance(b, str):  # 'Qwen3_5' in model.architecture: a part of the text
                return (a.upper() in b.upper()) == (self.op == "in")
            if not isinstance(b, list):
                return None
            found = (a.upper() in [str(x).upper() for x in b]) if isinstance(a, str) else a in b
            return found if self.op == "in" else not found
        if self.op in ("==", "!=") and isinstance(a, str) and isinstance(b, str):
            return (a.upper() == b.upper()) == (self.op == "==")
        try:
            return bool(_COMPARE[self.op](a, b))
        except TypeError:
            return None

    def facts(self) -> set[str]:
        return self.left.facts() | self.right.facts()


@dataclass
class Truth(Node):
    """A bare operand used as a condition: a boolean fact (`cuda_graphs.enabled`) or an expression."""

    operand: Node

    def eval(self, facts: FactSource) -> bool | None:
        v = self.operand.eval(facts)
        if v is MISSING:
            return None
        return bool(v)

    def facts(self) -> set[str]:
        return self.operand.facts()


@dataclass
class Not(Node):
    operand: Node

    def eval(self, facts: FactSource) -> bool | None:
        v = self.operand.eval(facts)
        return None if v is None else not v

    def facts(self) -> set[str]:
        return self.operand.facts()


@dataclass
class BoolOp(Node):
    op: str
    operands: list[Node]

    def eval(self, facts: FactSource) -> bool | None:
        values = [o.eval(facts) for o in self.operands]
        if self.op == "and":
            if any(v is False for v in values):
                return False
            return None if any(v is None for v in values) else True
        if any(v is True for v in values):
            return True
        return None if any(v is None for v in values) else False

    def facts(self) -> set[str]:
        return set().union(*(o.facts() for o in self.operands))


# --- grammar ---------------------------------------------------------------------------------------


def _build_grammar() -> tuple[pp.ParserElement, pp.ParserElement]:
    import pyparsing as pp

    pp.ParserElement.enable_packrat()
    AND, OR, NOT, IN, EXISTS, SHARE = map(pp.CaselessKeyword, ["and", "or", "not", "in", "exists", "share"])
    TRUE, FALSE = pp.Keyword("true"), pp.Keyword("false")
    LPAR, RPAR, LBRACK, RBRACK = map(pp.Suppress, "()[]")
    keywords = AND | OR | NOT | IN | EXISTS | SHARE | TRUE | FALSE

    number = pp.Regex(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?").set_name("number")
    number.set_parse_action(lambda t: Literal(float(t[0])))
    string = pp.QuotedString("'", esc_char="\\") | pp.QuotedString('"', esc_char="\\")
    string.set_parse_action(lambda t: Literal(t[0]))
    boolean = TRUE | FALSE
    boolean.set_parse_action(lambda t: Literal(t[0] == "true"))

    fact_name = pp.Regex(r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*").set_name("fact name")
    fact = (~keywords + fact_name).set_name("fact")

    def _fact_action(s: str, loc: int, t: pp.ParseResults) -> FactRef:
        return FactRef(t[0], column=pp.col(loc, s))

    fact.set_parse_action(_fact_action)

    list_value = LBRACK + pp.Optional(pp.DelimitedList(string | number | boolean)) + RBRACK
    list_value.set_parse_action(lambda t: ListNode(list(t)))

    agg_name = pp.one_of(list(AGGREGATIONS), as_keyword=True)
    aggregate = agg_name + LPAR + fact + RPAR
    aggregate.set_parse_action(lambda t: Aggregate(t[0], t[1]))

    arith = pp.Forward()
    comp_op = pp.one_of("<= >= == != < >")
    share = SHARE.suppress() + LPAR + fact + comp_op + arith + RPAR
    share.set_parse_action(lambda t: Share(t[0], t[1], t[2]))
    exists = EXISTS.suppress() + LPAR + fact + RPAR
    exists.set_parse_action(lambda t: Exists(t[0]))

    operand = number | string | boolean | list_value | share | exists | aggregate | fact

    def _fold_arith(t: pp.ParseResults) -> Node:
        items = t[0]
        node: Node = items[0]
        for i in range(1, len(items), 2):
            node = Arith(items[i], node, items[i + 1])
        return node

    def _negate(t: pp.ParseResults) -> Node:
        return Negate(t[0][1])

    arith <<= pp.infix_notation(  # type: ignore[no-untyped-call]
        operand,
        [
            (pp.Literal("-"), 1, pp.OpAssoc.RIGHT, _negate),
            (pp.one_of("* /"), 2, pp.OpAssoc.LEFT, _fold_arith),
            (pp.one_of("+ -"), 2, pp.OpAssoc.LEFT, _fold_arith),
        ],
    )

    not_in = (NOT + IN).set_parse_action(lambda: "not in")
    comparison = arith + (comp_op | not_in | IN) + arith
    comparison.set_parse_action(lambda t: Compare(t[1] if t[1] != "in" else "in", t[0], t[2]))
    truth = arith.copy().add_parse_action(lambda t: Truth(t[0]))
    atom = comparison | truth

    def _not(t: pp.ParseResults) -> Node:
        return Not(t[0][1])

    def _bool(op: str) -> Callable[[pp.ParseResults], Node]:
        return lambda t: BoolOp(op, list(t[0][0::2]))

    condition = pp.infix_notation(  # type: ignore[no-untyped-call]
        atom,
        [
            (NOT, 1, pp.OpAssoc.RIGHT, _not),
            (AND, 2, pp.OpAssoc.LEFT, _bool("and")),
            (OR, 2, pp.OpAssoc.LEFT, _bool("or")),
        ],
    )
    return condition, arith


_GRAMMARS: list[tuple[pp.ParserElement, pp.ParserElement]] = []  # (condition, expression), built on first use


# --- a hand-written reader of the same grammar, for the cold start ------------------------------------------------
#
# Importing pyparsing and building the grammar costs more than the rest of a 10-line diagnose's start when the
# start-up cache is cold (docs/benchmarks.md, *Start-up*). `_read` reads the texts rule authors write with the same
# grammar, into the same trees, at the same columns; anything it is not sure of (a backslash in a string, a text that
# does not parse) it leaves to pyparsing, which also words every error. tests/engine/test_condition_reader.py
# compares the two on every condition and expression of the built-in rules and on malformed ones.


class _Unsure(Exception):
    """The hand-written reader gives up: pyparsing reads the text."""


_WS = " \t\n\r"  # pyparsing's default whitespace
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")  # its keyword chars
_NUMBER_RE = re.compile(r"\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
_FACT_RE = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*")
_STRING_PLAIN_RE = re.compile(r"'([^'\\\n\r]*)'|\"([^\"\\\n\r]*)\"")
_RESERVED = ("and", "or", "not", "in", "exists", "share")  # caseless keywords; `true` and `false` are exact
_COMPARE_BY_LENGTH = ("<=", ">=", "==", "!=", "<", ">")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def skip(self) -> int:
        """Where the next token starts (the whitespace before it is consumed with the token)."""
        text, at = self.text, self.at
        while at < len(text) and text[at] in _WS:
            at += 1
        return at

    def column(self, loc: int) -> int:  # pyparsing's `col`
        s = self.text
        return 1 if 0 < loc < len(s) and s[loc - 1] == "\n" else loc - s.rfind("\n", 0, loc)

    def keyword(self, word: str, *, caseless: bool = True) -> bool:
        """Whether `word` stands at the next token as a keyword (not part of a longer name); consumed if so."""
        at = self.skip()
        text = self.text
        part = text[at : at + len(word)]
        if (part.lower() if caseless else part) != word:
            return False
        end = at + len(word)
        if end < len(text) and text[end] in _IDENT_CHARS:
            return False
        if at > 0 and text[at - 1] in _IDENT_CHARS:
            return False
        self.at = end
        return True

    def peek_keyword(self, word: str, *, caseless: bool = True) -> bool:
        at = self.at
        found = self.keyword(word, caseless=caseless)
        self.at = at
        return found

    def char(self, char: str) -> bool:
        at = self.skip()
        if self.text.startswith(char, at):
            self.at = at + len(char)
            return True
        return False

    def expect(self, char: str) -> None:
        if not self.char(char):
            raise _Unsure

    def reserved_here(self) -> bool:
        return any(self.peek_keyword(w) for w in _RESERVED) or any(
            self.peek_keyword(w, caseless=False) for w in ("true", "false")
        )

    def fact(self) -> FactRef:
        if self.reserved_here():
            raise _Unsure
        at = self.skip()
        m = _FACT_RE.match(self.text, at)
        if m is None:
            raise _Unsure
        # pyparsing's column of a fact is where the token before it ended, before the whitespace between them
        column = self.column(self.at)
        self.at = m.end()
        return FactRef(m.group(0), column=column)

    def literal(self) -> Literal | None:
        at = self.skip()
        text = self.text
        m = _NUMBER_RE.match(text, at)
        if m is not None:
            self.at = m.end()
            return Literal(float(m.group(0)))
        if at < len(text) and text[at] in "'\"":
            s = _STRING_PLAIN_RE.match(text, at)
            if s is None:
                raise _Unsure  # an escape, a line end or no closing quote: pyparsing's rules
            self.at = s.end()
            return Literal(s.group(1) if s.group(1) is not None else s.group(2))
        for word, value in (("true", True), ("false", False)):
            if self.keyword(word, caseless=False):
                return Literal(value)
        return None

    def operand(self) -> Node:
        found = self.literal()
        if found is not None:
            return found
        if self.char("["):
            items: list[Node] = []
            if not self.char("]"):
                while True:
                    item = self.literal()
                    if item is None:
                        raise _Unsure
                    items.append(item)
                    if self.char("]"):
                        break
                    self.expect(",")
            return ListNode(items)
        if self.keyword("share"):
            self.expect("(")
            ref = self.fact()
            op = self.compare_op()
            if op is None:
                raise _Unsure
            threshold = self.arith()
            self.expect(")")
            return Share(ref, op, threshold)
        if self.keyword("exists"):
            self.expect("(")
            ref = self.fact()
            self.expect(")")
            return Exists(ref)
        start = self.at
        for name in AGGREGATIONS:
            if self.keyword(name, caseless=False):
                if self.char("("):
                    ref = self.fact()
                    self.expect(")")
                    return Aggregate(name, ref)
                self.at = start  # a fact of that name (pyparsing's MatchFirst goes on to `fact`)
                break
        return self.fact()

    def compare_op(self) -> str | None:
        at = self.skip()
        for op in _COMPARE_BY_LENGTH:
            if self.text.startswith(op, at):
                self.at = at + len(op)
                return op
        return None

    def unary(self) -> Node:
        if self.char("-"):
            return Negate(self.unary())
        if self.char("("):
            inner = self.arith()
            self.expect(")")
            return inner
        return self.operand()

    def product(self) -> Node:
        node = self.unary()
        while True:
            at = self.skip()
            op = self.text[at : at + 1]
            if op not in ("*", "/"):
                return node
            self.at = at + 1
            node = Arith(op, node, self.unary())

    def arith(self) -> Node:
        node = self.product()
        while True:
            at = self.skip()
            op = self.text[at : at + 1]
            if op not in ("+", "-"):
                return node
            self.at = at + 1
            node = Arith(op, node, self.product())

    def atom(self) -> Node:
        """A comparison or a truth value, else a parenthesised condition (pyparsing tries them in that order)."""
        start = self.at
        try:
            left = self.arith()
        except _Unsure:
            left = None
        if left is not None:
            op = self.compare_op()
            if op is None:
                after = self.at
                if self.keyword("not") and self.keyword("in"):
                    op = "not in"
                else:
                    self.at = after
                    if self.keyword("in"):
                        op = "in"
            if op is None:
                return Truth(left)
            return Compare(op, left, self.arith())
        self.at = start
        self.expect("(")
        inner = self.condition()
        self.expect(")")
        return inner

    def negation(self) -> Node:
        if self.keyword("not"):
            return Not(self.negation())
        return self.atom()

    def conjunction(self) -> Node:
        operands = [self.negation()]
        while self.keyword("and"):
            operands.append(self.negation())
        return operands[0] if len(operands) == 1 else BoolOp("and", operands)

    def condition(self) -> Node:
        operands = [self.conjunction()]
        while self.keyword("or"):
            operands.append(self.conjunction())
        return operands[0] if len(operands) == 1 else BoolOp("or", operands)


def _read(kind: str, text: str) -> Node | None:
    """`text` read by the hand-written reader, or None where it leaves the text to pyparsing."""
    reader = _Reader(text)
    try:
        node = reader.condition() if kind == "condition" else reader.arith()
    except (_Unsure, RecursionError):
        return None
    return node if reader.skip() == len(text) else None


def _grammar(kind: str) -> pp.ParserElement:
    """The pyparsing grammar, built (and pyparsing imported) only when a text is not in the cache."""
    if not _GRAMMARS:
        _GRAMMARS.append(_build_grammar())
    condition, expression = _GRAMMARS[0]
    return condition if kind == "condition" else expression


# --- the parse cache (logdoctor/cache.py): parsed trees as JSON, keyed by kind and text ------------------------
#
# A tree is a list: [tag, fields...]; `decode` accepts exactly what `encode` writes and raises ValueError on
# anything else, so a damaged entry is parsed again rather than trusted.

_BOOL_OPS = ("and", "or")
_COMPARE_OPS = (*_COMPARE, "in", "not in")
_MAX_DECODE_DEPTH = 4 * 64  # far deeper than MAX_NESTING allows a parsed text to be


def encode(node: Node) -> list[Any]:
    """A parsed condition or expression as JSON data (the inverse of `decode`)."""
    if isinstance(node, Literal):
        return ["lit", node.value]
    if isinstance(node, FactRef):
        return ["fact", node.name, node.column]
    if isinstance(node, ListNode):
        return ["list", [encode(i) for i in node.items]]
    if isinstance(node, Aggregate):
        return ["agg", node.func, encode(node.ref)]
    if isinstance(node, Share):
        return ["share", encode(node.ref), node.op, encode(node.threshold)]
    if isinstance(node, Exists):
        return ["exists", encode(node.ref)]
    if isinstance(node, Arith | Compare):
        return ["arith" if isinstance(node, Arith) else "cmp", node.op, encode(node.left), encode(node.right)]
    if isinstance(node, Negate | Truth | Not):
        return [{Negate: "neg", Truth: "truth", Not: "not"}[type(node)], encode(node.operand)]
    if isinstance(node, BoolOp):
        return ["bool", node.op, [encode(o) for o in node.operands]]
    raise TypeError(f"cannot encode {type(node).__name__}")


def decode(data: Any, depth: int = 0) -> Node:
    """A tree written by `encode`; ValueError for anything that is not exactly such a tree."""
    if depth > _MAX_DECODE_DEPTH or not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise ValueError("not an encoded condition")
    tag, args = data[0], data[1:]

    def node(value: Any) -> Node:
        return decode(value, depth + 1)

    def text(value: Any, allowed: Sequence[str] | None = None) -> str:
        if not isinstance(value, str) or (allowed is not None and value not in allowed):
            raise ValueError("not an encoded condition")
        return value

    def nodes(value: Any) -> list[Node]:
        if not isinstance(value, list):
            raise ValueError("not an encoded condition")
        return [node(v) for v in value]

    def ref(value: Any) -> FactRef:
        result = node(value)
        if not isinstance(result, FactRef):
            raise ValueError("not an encoded condition")
        return result

    shape = (tag, len(args))
    if shape == ("lit", 1) and type(args[0]) in (float, str, bool):
        return Literal(args[0])
    if shape == ("fact", 2) and type(args[1]) is int and args[1] >= 1:
        return FactRef(text(args[0]), column=args[1])
    if shape == ("list", 1):
        return ListNode(nodes(args[0]))
    if shape == ("agg", 2):
        return Aggregate(text(args[0], tuple(AGGREGATIONS)), ref(args[1]))
    if shape == ("share", 3):
        return Share(ref(args[0]), text(args[1], tuple(_COMPARE)), node(args[2]))
    if shape == ("exists", 1):
        return Exists(ref(args[0]))
    if shape == ("arith", 3):
        return Arith(text(args[0], tuple(_ARITH)), node(args[1]), node(args[2]))
    if shape == ("cmp", 3):
        return Compare(text(args[0], _COMPARE_OPS), node(args[1]), node(args[2]))
    if shape == ("neg", 1):
        return Negate(node(args[0]))
    if shape == ("truth", 1):
        return Truth(node(args[0]))
    if shape == ("not", 1):
        return Not(node(args[0]))
    if shape == ("bool", 2):
        return BoolOp(text(args[0], _BOOL_OPS), nodes(args[1]))
    raise ValueError("not an encoded condition")


def _cache_key() -> str:
    """What a parsed tree depends on: logdoctor's version, this module's source and the pyparsing installed."""
    try:
        with open(__file__, "rb") as fh:
            source = fh.read()
    except OSError:
        source = b"(source not readable)"
    spec = importlib.util.find_spec("pyparsing")
    where = ""
    if spec is not None and spec.origin is not None:
        try:
            info = os.stat(spec.origin)
            where = f"{spec.origin} {info.st_size} {info.st_mtime_ns}"
        except OSError:
            where = spec.origin
    return code_key("conditions", __version__, source, where)


_caches: list[VerifiedCache] = []


def parse_cache() -> VerifiedCache:
    """The process's cache of parsed conditions (its file is read on first look-up)."""
    if not _caches:
        _caches.append(VerifiedCache("conditions", _cache_key()))
    return _caches[0]


def save_parse_cache() -> None:
    """Write the parsed conditions met in this process, if any were new (the rule loader calls it)."""
    if _caches:
        _caches[0].save()


def _check(node: Node, known: Sequence[str] | None = None) -> None:
    """Reject unknown facts and series used without an aggregation (and aggregations of non-series).

    `baseline.<fact>` is known whenever `<fact>` is."""
    names = set(known) if known is not None else set(FACTS)

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


def _suggest(name: str, names: set[str], prefix: str = "") -> str:
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


def _parse(kind: str, text: str, known: Sequence[str] | None) -> Node:
    _check_size(text)
    cache = parse_cache()
    key = f"{kind}\0{text}"
    cached = cache.get(key)
    node: Node | None = None
    if cached is not None:
        try:
            node = decode(cached)
        except (ValueError, RecursionError):
            cache.discard([key])
    if node is None:
        node = _read(kind, text) or _pyparse(kind, text)
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
