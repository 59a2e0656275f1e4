"""The parsed form of a rule condition (logdoctor/engine/conditions.py): one node class per construct of the
language, each evaluating itself over a deployment's facts.

    share(sched.waiting > 0) >= 0.3   ->  Compare(">=", Share(FactRef("sched.waiting"), ">", Literal(0.0)), Literal(0.3))

Logic is three-valued: a comparison that reads a missing fact is *unknown* (None), so a rule can tell
"ruled out" from "could not check".
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Protocol

from logdoctor.engine.aggregations import aggregate


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


class Node:
    """A node of the tree. Each subclass lists its fields as annotations, and gets what `@dataclass` would give it
    (`__init__` by position or name, `__eq__`, `__repr__`) from here: a dataclass costs about 3 M instructions to
    create, and these twelve were a twentieth of a short `diagnose`'s start-up (docs/benchmarks.md, *Start-up*)."""

    column: int = 1
    _fields: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]  # compared by value and not frozen, as a dataclass's

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._fields = tuple(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063 - the class's own, in order

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if not kwargs and len(args) == len(fields):  # every field by position: nothing to check
            self.__dict__.update(zip(fields, args, strict=True))
            return
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields, {len(args)} given")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError(f"{type(self).__name__}: unexpected or repeated field {name!r}")
            values[name] = value
        for name in fields[len(args) :]:
            if name not in values and name not in type(self).__dict__:
                raise TypeError(f"{type(self).__name__}: field {name!r} is required")
        self.__dict__.update(values)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def eval(self, facts: FactSource) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def facts(self) -> set[str]:
        return set()


class Literal(Node):
    value: Any

    def eval(self, facts: FactSource) -> Any:
        return self.value


class FactRef(Node):
    name: str
    column: int = 1

    def eval(self, facts: FactSource) -> Any:
        value = facts.value(self.name)
        return MISSING if value is None else value

    def facts(self) -> set[str]:
        return {self.name}


class ListNode(Node):
    items: list[Node]

    def eval(self, facts: FactSource) -> Any:
        return [i.eval(facts) for i in self.items]

    def facts(self) -> set[str]:
        return set().union(*(i.facts() for i in self.items)) if self.items else set()


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


class Negate(Node):
    operand: Node

    def eval(self, facts: FactSource) -> Any:
        v = self.operand.eval(facts)
        return MISSING if v is MISSING or isinstance(v, bool) or not isinstance(v, int | float) else -v

    def facts(self) -> set[str]:
        return self.operand.facts()


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


class Not(Node):
    operand: Node

    def eval(self, facts: FactSource) -> bool | None:
        v = self.operand.eval(facts)
        return None if v is None else not v

    def facts(self) -> set[str]:
        return self.operand.facts()


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
