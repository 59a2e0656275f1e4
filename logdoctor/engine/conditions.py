"""The rule condition language: a small pyparsing grammar over fact names, parsed at load, never eval'd.

    mean(spec.acceptance_length) < 1.3 + 0.1 * spec.num_tokens and spec.num_tokens >= 2
    attention.backend in ['XFORMERS', 'TORCH_SDPA'] or exists(attention.fallback_reason)
    share(sched.waiting > 0) >= 0.3 and max(kv.usage) >= 0.9
    not cuda_graphs.enabled

Values: numbers, 'strings', true/false, [lists]; arithmetic + - * /; comparisons < <= > >= == !=;
`in` / `not in`; `and` / `or` / `not`; `exists(fact)`; aggregations over a time series
(mean, median, max, min, p10, p90, first, last, sum, count) and `share(series OP value)`.
In `logdoctor diff`, `baseline.<fact>` reads the baseline deployment's fact (`mean(baseline.spec.acceptance_length)`).

Logic is three-valued: a comparison that reads a missing fact is *unknown* (None), so a rule can tell
"ruled out" from "could not check".
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyparsing as pp

from logdoctor.engine.aggregations import AGGREGATIONS, aggregate
from logdoctor.facts import BASELINE_PREFIX, FACTS

pp.ParserElement.enable_packrat()


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


_CONDITION, _EXPRESSION = _build_grammar()


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


def _parse(grammar: pp.ParserElement, text: str, known: Sequence[str] | None) -> Node:
    _check_size(text)
    try:
        result = grammar.parse_string(text, parse_all=True)
    except pp.ParseBaseException as exc:
        raise ConditionError(f"cannot parse: {exc.msg}", exc.col) from None
    node: Node = result[0]
    _check(node, known)
    return node


def parse_condition(text: str, known: Sequence[str] | None = None) -> Node:
    """Parse a `when` / `ruled_out_when` condition; raises ConditionError with a column."""
    return _parse(_CONDITION, text, known)


def parse_expression(text: str, known: Sequence[str] | None = None) -> Node:
    """Parse a numeric expression (score metric, template placeholder)."""
    return _parse(_EXPRESSION, text, known)


def reads_baseline(node: Node) -> bool:
    """Whether a parsed condition or expression names a `baseline.` fact (a diff-mode rule)."""
    return any(name.startswith(BASELINE_PREFIX) for name in node.facts())
