"""The condition language's grammar, twice: the pyparsing grammar (built on first use) and a hand-written reader of
the same grammar that reads the texts rule authors write without importing pyparsing.

    mean(spec.acceptance_length) < 1.3 + 0.1 * spec.num_tokens and spec.num_tokens >= 2
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from logdoctor.engine.aggregations import AGGREGATIONS
from logdoctor.engine.conditiontree import (
    Aggregate,
    Arith,
    BoolOp,
    Compare,
    Exists,
    FactRef,
    ListNode,
    Literal,
    Negate,
    Node,
    Not,
    Share,
    Truth,
)

if TYPE_CHECKING:
    import pyparsing as pp


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
_WS_RE = re.compile(r"[ \t\n\r]*")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")  # its keyword chars
_WORD_RE = re.compile(r"[A-Za-z0-9_$]*")  # a run of _IDENT_CHARS
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
        if at < len(text) and text[at] in _WS:
            at = _WS_RE.match(text, at).end()  # type: ignore[union-attr]  # matches the empty text too
        return at

    def column(self, loc: int) -> int:  # pyparsing's `col`
        s = self.text
        return 1 if 0 < loc < len(s) and s[loc - 1] == "\n" else loc - s.rfind("\n", 0, loc)

    def word(self) -> tuple[int, str]:
        """Where the next token starts, and the run of keyword characters there: a keyword stands there when it is
        the whole run (not part of a longer name). The run is empty where the token before runs on into it (`1and`),
        as no keyword starts there. One regex a token, where trying each keyword in turn cost a regex each."""
        at = self.skip()
        text = self.text
        if at > 0 and text[at - 1] in _IDENT_CHARS:
            return at, ""
        return at, _WORD_RE.match(text, at).group(0)  # type: ignore[union-attr]  # matches the empty text too

    def keyword(self, word: str, *, caseless: bool = True) -> bool:
        """Whether `word` stands at the next token as a keyword (not part of a longer name); consumed if so."""
        at, run = self.word()
        if (run.lower() if caseless else run) != word:
            return False
        self.at = at + len(word)
        return True

    def char(self, char: str) -> bool:
        at = self.skip()
        if self.text.startswith(char, at):
            self.at = at + len(char)
            return True
        return False

    def expect(self, char: str) -> None:
        if not self.char(char):
            raise _Unsure

    def fact(self) -> FactRef:
        at, run = self.word()
        if run.lower() in _RESERVED or run in ("true", "false"):
            raise _Unsure
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
        at, run = self.word()
        if run in ("true", "false"):
            self.at = at + len(run)
            return Literal(run == "true")
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
        start = self.at
        at, run = self.word()  # the caseless keywords `share` and `exists`, an aggregation, or a fact
        keyword = run.lower()
        if keyword == "share":
            self.at = at + len(run)
            self.expect("(")
            ref = self.fact()
            op = self.compare_op()
            if op is None:
                raise _Unsure
            threshold = self.arith()
            self.expect(")")
            return Share(ref, op, threshold)
        if keyword == "exists":
            self.at = at + len(run)
            self.expect("(")
            ref = self.fact()
            self.expect(")")
            return Exists(ref)
        if run in AGGREGATIONS:
            self.at = at + len(run)
            if self.char("("):
                ref = self.fact()
                self.expect(")")
                return Aggregate(run, ref)
            self.at = start  # a fact of that name (pyparsing's MatchFirst goes on to `fact`)
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
    if _FACT_RE.fullmatch(text) is not None:  # a fact alone, the most common placeholder: what `fact` reads
        run = _WORD_RE.match(text).group(0)  # type: ignore[union-attr]  # matches the empty text too
        if run.lower() not in _RESERVED and run not in ("true", "false"):
            ref = FactRef(text, column=1)
            return ref if kind != "condition" else Truth(ref)
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
