"""Records: frozen classes declared like dataclasses, with the part of pydantic's behaviour the pipeline relies on.

Events (logdoctor.events), the result models, rules and the hardware table are made of them. This module imports
nothing of logdoctor's own.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from types import UnionType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self, Union, get_args, get_origin

# --- records ------------------------------------------------------------------------------------
# Events, results, rules and the hardware table are `Record`s: frozen classes declared like dataclasses, with the
# part of pydantic's behaviour the pipeline relies on (lax conversion of what a grammar passes: "82" or 82 for a
# float, a tuple for a list; Literal values checked; unknown fields refused; `model_copy`, `model_dump`,
# `model_dump_json` with pydantic's output) at a fraction of pydantic's start-up: a class costs its annotations'
# names at definition, and its converters (one per annotation text) on its first instance. pydantic itself is
# imported only at the borders that need it: the JSON Schema (report/json.py builds pydantic twins of the
# records) and the error messages of user-written files (docs/benchmarks.md, *Start-up*).


class _Factory:
    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A field whose default is made afresh for each record (`extra: dict[str, str] = field(default_factory=dict)`)."""
    return _Factory(default_factory)


if TYPE_CHECKING:
    from pydantic import BaseModel
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda cls: cls


# A field's check: the types stored as they are, and the converter for anything else (None: nothing else fits).
_Check = tuple[frozenset[type], Callable[[Any], Any] | None]
_CHECKS: dict[type, dict[str, _Check]] = {}
_NONE = type(None)
_INT_TEXT = re.compile(r"\s*[+-]?\d[\d_]*(?:\.0*)?\s*")
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _to_float(value: Any) -> float:
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip()):
        return float(value)
    if isinstance(value, bytes):
        return _to_float(value.decode())
    raise ValueError(f"not a number: {value!r}")


def _to_int(value: Any) -> int:
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str) and value.isascii() and _INT_TEXT.fullmatch(value):
        return int(value.strip().split(".")[0])
    raise ValueError(f"not an integer: {value!r}")


def _to_bool(value: Any) -> bool:
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    raise ValueError(f"not a boolean: {value!r}")


def _to_str(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return value.decode()
    raise ValueError(f"not a string: {value!r}")


_SCALARS: dict[Any, _Check] = {
    float: (frozenset({float}), _to_float),
    int: (frozenset({int}), _to_int),
    bool: (frozenset({bool}), _to_bool),
    str: (frozenset({str}), _to_str),
    _NONE: (frozenset({_NONE}), None),
}


def _converter(check: _Check) -> Callable[[Any], Any]:
    exact, convert = check

    def run(value: Any) -> Any:
        if type(value) in exact:
            return value
        if convert is None:
            raise ValueError(f"unexpected value {value!r}")
        return convert(value)

    return run


def _check_for(hint: Any) -> _Check:
    """How a value of the annotation `hint` (evaluated) is checked and converted, as pydantic's lax mode does."""
    if hint is Any or hint is object:
        return frozenset(), lambda value: value
    if hint in _SCALARS:
        return _SCALARS[hint]
    if isinstance(hint, type) and issubclass(hint, Record):
        record = hint

        def to_record(value: Any) -> Any:
            if isinstance(value, record):
                return value
            if isinstance(value, dict) and (record._root or all(isinstance(k, str) for k in value)):
                return record(root=value) if record._root else record(**value)
            raise ValueError(f"not a {record.__name__}: {value!r}")

        return frozenset({record}), to_record
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        allowed = frozenset(args)
        kinds = frozenset(type(a) for a in args)

        def literal(value: Any) -> Any:
            if type(value) in kinds and value in allowed:
                return value
            raise ValueError(f"{value!r} is not one of {sorted(map(str, args))}")

        return frozenset(), literal
    if origin is Union or origin is UnionType:
        members = [_check_for(arg) for arg in args]
        exact = frozenset().union(*(m[0] for m in members))
        converters = [_converter(m) for m in members]

        def union(value: Any) -> Any:
            for convert in converters:
                try:
                    return convert(value)
                except ValueError:
                    continue
            raise ValueError(f"unexpected value {value!r}")

        return exact, union
    if origin is list or origin is tuple:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            items = [_converter(_check_for(arg)) for arg in args]

            def fixed(value: Any) -> Any:
                if not isinstance(value, list | tuple) or len(value) != len(items):
                    raise ValueError(f"not a {len(items)}-tuple: {value!r}")
                return tuple(convert(v) for convert, v in zip(items, value, strict=True))

            return frozenset(), fixed
        item = _converter(_check_for(args[0] if args else Any))
        make: Callable[[Any], Any] = list if origin is list else tuple

        def sequence(value: Any) -> Any:
            if not isinstance(value, list | tuple | set | frozenset):
                raise ValueError(f"not a list: {value!r}")
            return make(item(v) for v in value)

        return frozenset(), sequence
    if origin is dict:
        key_of = _converter(_check_for(args[0] if args else Any))
        value_of = _converter(_check_for(args[1] if args else Any))

        def mapping(value: Any) -> Any:
            if not isinstance(value, dict):
                raise ValueError(f"not a mapping: {value!r}")
            return {key_of(k): value_of(v) for k, v in value.items()}

        return frozenset(), mapping
    if isinstance(hint, type):
        cls = hint

        def instance(value: Any) -> Any:
            if isinstance(value, cls):
                return value
            raise ValueError(f"not a {cls.__name__}: {value!r}")

        return frozenset({cls}), instance
    raise TypeError(f"no converter for the annotation {hint!r}")


_BY_TEXT: dict[tuple[str, str], _Check] = {}


def _checks(cls: type[Record]) -> dict[str, _Check]:
    """The class's field checks, built on its first instance (annotations evaluated in their module, once a text)."""
    checks: dict[str, _Check] = {}
    for klass in reversed(cls.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, Record)):
            continue
        namespace = sys.modules[klass.__module__].__dict__
        for name, text in klass.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 - inspect is slow to import
            if name not in cls.model_fields:
                continue
            key = (klass.__module__, text)
            check = _BY_TEXT.get(key)
            if check is None:
                check = _BY_TEXT[key] = _check_for(eval(text, namespace))  # noqa: S307 - our own annotations
            checks[name] = check
    _CHECKS[cls] = checks
    return checks


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field,))
class Record:
    """A frozen record: fields are class annotations, defaults class attributes (`field(default_factory=...)` for a
    fresh list or dict). `Record(**values)` converts each value as pydantic's lax mode would and raises ValueError
    for an unknown field, a missing one or a value that does not fit."""

    # name -> annotation text, every field in order (a base's first; a field a subclass declares again keeps its
    # place, as in pydantic)
    model_fields: ClassVar[dict[str, str]] = {}
    _json_keys: ClassVar[tuple[tuple[str, str], ...]] = ()  # each field's name and its JSON key, `"name":`
    _defaults: ClassVar[dict[str, Any]] = {}
    _factories: ClassVar[tuple[tuple[str, Callable[[], Any]], ...]] = ()
    _required: ClassVar[tuple[str, ...]] = ()
    _root: ClassVar[bool] = False  # one field, `root`, which model_dump gives instead of a mapping (pydantic RootModel)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = dict(cls.model_fields)
        defaults = dict(cls._defaults)
        factories = dict(cls._factories)
        for name, text in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 - inspect is slow to import
            if text.startswith(("ClassVar", "typing.ClassVar")):
                continue
            fields[name] = text
            if name in cls.__dict__:
                value = cls.__dict__[name]
                if isinstance(value, _Factory):
                    factories[name] = value.factory
                    defaults.pop(name, None)
                    delattr(cls, name)
                else:
                    defaults[name] = value
                    factories.pop(name, None)
        cls.model_fields = fields
        cls._json_keys = tuple((name, f'"{name}":') for name in fields)
        cls._defaults = defaults
        cls._factories = tuple(factories.items())
        cls._required = tuple(n for n in fields if n not in defaults and n not in factories)

    def __init__(self, **data: Any) -> None:
        cls = type(self)
        checks = _CHECKS.get(cls) or _checks(cls)
        values = self.__dict__
        for name, value in data.items():
            check = checks.get(name)
            if check is None:
                raise ValueError(f"{cls.__name__}: unexpected field {name!r}")
            exact, convert = check
            if type(value) in exact:
                values[name] = value
            elif convert is None:
                raise ValueError(f"{cls.__name__}.{name}: unexpected value {value!r}")
            else:
                try:
                    values[name] = convert(value)
                except ValueError as exc:
                    raise ValueError(f"{cls.__name__}.{name}: {exc}") from None
        for name in cls._required:
            if name not in values:
                raise ValueError(f"{cls.__name__}: field {name!r} is required")
        for name, factory in cls._factories:
            if name not in values:
                values[name] = factory()

    @classmethod
    def model_construct(cls, **data: Any) -> Self:
        """A record of values already of their fields' exact types (a `dict` field given a fresh dict), taken as they
        are, unchecked (pydantic's `model_construct`): for the line types that build an event a line of an
        event-dense log, where the checks cost as much as reading the line. The constructor would keep each value
        unchanged; tests/test_records.py holds the callers to that."""
        record = object.__new__(cls)
        values = record.__dict__
        values.update(data)
        for name, factory in cls._factories:
            if name not in values:
                values[name] = factory()
        return record

    @classmethod
    def model_construct_values(cls, values: dict[str, Any]) -> Self:
        """`model_construct` of the values in a dict the caller built: no keywords to pack and unpack, which cost
        more than the rest (a busy server's batch line gives two events)."""
        record = object.__new__(cls)
        record.__dict__.update(values)
        for name, factory in cls._factories:
            if name not in values:
                record.__dict__[name] = factory()
        return record

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: use model_copy(update=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.model_fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr_args(self) -> str:
        return ", ".join(f"{name}={getattr(self, name)!r}" for name in self.model_fields)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__repr_args()})"

    def __str__(self) -> str:
        return " ".join(f"{name}={getattr(self, name)!r}" for name in self.model_fields)

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> Self:
        """A copy with some fields replaced, the values taken as they are (as pydantic's `model_copy`)."""
        twin = object.__new__(type(self))
        values = twin.__dict__
        values.update(self.__dict__)
        if update:
            values.update(update)
        return twin

    def model_dump(
        self,
        *,
        mode: Literal["python", "json"] = "python",
        exclude_none: bool = False,
        exclude: Iterable[str] = (),
        include: Iterable[str] | None = None,
    ) -> dict[str, Any]:
        """The fields as a dict, nested records too, as pydantic's `model_dump` gives them (`mode="json"`: lists
        for tuples and sets, text keys); `exclude_none` drops the fields (not dict items) that are None."""
        names: Iterable[str] = self.model_fields
        if exclude or include is not None:
            skip = frozenset(exclude)
            only = None if include is None else frozenset(include)
            names = [n for n in names if n not in skip and (only is None or n in only)]
        return self._dump_fields(names, mode == "json", exclude_none)

    def _dump_fields(self, names: Iterable[str], json_mode: bool, exclude_none: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in names:
            value = getattr(self, name)
            if value is None:
                if not exclude_none:
                    out[name] = None
            elif type(value) in _PLAIN:
                out[name] = value
            else:
                out[name] = _dump(value, json_mode, exclude_none)
        return out

    def model_dump_json(self, *, exclude_none: bool = False) -> str:
        """Compact JSON as pydantic writes it: fields in order, text as UTF-8, an infinite float as null, a float
        under 1e-4 as `0.00001` or `1e-7` (not Python's `1e-05`, `1e-07`). `parse --format jsonl` writes every event
        this way, so each class gets a writer made for its fields on first use (_json_writer)."""
        cls = type(self)
        writer = _JSON_WRITERS.get(cls) or _json_writer(cls)
        return writer(self, exclude_none)

    @classmethod
    def model_validate(cls, data: Mapping[str, Any]) -> Self:
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"{cls.__name__}: not a mapping: {data!r}")
        return cls(**data)


def pydantic_twin(
    cls: type[Record],
    twins: dict[type[Record], type[BaseModel]],
    constraints: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> type[BaseModel]:
    """A pydantic model with the record's name, docstring, fields (annotation, default) and frozen/forbid config,
    its record fields made twins too (in `twins`); `constraints` adds `Field` arguments by class and field name
    (`{"ModelShape": {"layers": {"ge": 1}}}`). The JSON Schema of the reports and the error messages of the
    hardware table come from these, so they cannot drift from the records the pipeline uses. Imports pydantic."""
    if cls in twins:
        return twins[cls]
    from pydantic import ConfigDict, Field, create_model

    namespace: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if isinstance(klass, type) and issubclass(klass, Record):
            namespace.update(vars(sys.modules[klass.__module__]))
    for name in set(re.findall(r"[A-Za-z_]\w*", " ".join(cls.model_fields.values()))):
        ref = namespace.get(name)
        if isinstance(ref, type) and issubclass(ref, Record) and ref is not cls:
            namespace[name] = pydantic_twin(ref, twins, constraints)
    extra = (constraints or {}).get(cls.__name__, {})
    factories = dict(cls._factories)
    fields: dict[str, Any] = {}
    for name, text in cls.model_fields.items():
        annotation = eval(text, namespace)  # noqa: S307 - our own annotations
        if name in factories:
            fields[name] = (annotation, Field(default_factory=factories[name], **extra.get(name, {})))
        elif name in extra:
            fields[name] = (annotation, Field(cls._defaults.get(name, ...), **extra[name]))
        else:
            fields[name] = (annotation, cls._defaults.get(name, ...))
    twin: type[BaseModel] = create_model(
        cls.__name__,
        __config__=ConfigDict(frozen=True, extra="forbid"),
        __doc__=cls.__doc__,
        __module__=cls.__module__,
        **fields,
    )
    twins[cls] = twin
    return twin


_JSON_WRITERS: dict[type, Callable[[Any, bool], str]] = {}
# How a field of an annotation is written when its value has the annotated type (anything else: _json_value).
_JSON_AS = {
    "str": ("str", "_S(v)"),
    "int": ("int", "int.__repr__(v)"),
    "float": ("float", "_F(v)"),
    "bool": ("bool", "('true' if v else 'false')"),
    "list[float]": ("list", "_FL(v)"),
}


def _float_list(values: list[Any]) -> str:
    try:
        text = ",".join(map(float.__repr__, values))  # TypeError for anything but floats
    except TypeError:
        return _json_value(values, False)
    return "[" + text + "]" if "e" not in text and "n" not in text else _json_value(values, False)


def _json_writer(cls: type[Record]) -> Callable[[Any, bool], str]:
    """A function writing the record's JSON, one statement a field (about twice as fast as a loop over fields)."""
    lines = ["def write(self, exclude_none):", " d = self.__dict__", " parts = []", " a = parts.append"]
    namespace: dict[str, Any] = {"_S": _json_str, "_F": _json_float, "_FL": _float_list, "_V": _json_value}
    for index, (name, text) in enumerate(cls.model_fields.items()):
        key = repr(f'"{name}":')
        namespace[f"_D{index}"] = cls._defaults.get(name)
        lines.append(f" v = d[{name!r}] if {name!r} in d else _D{index}")
        lines.append(f" if v is None:\n  if not exclude_none: a({key} + 'null')")
        kind = _JSON_AS.get(text.removesuffix(" | None"))
        if kind is not None:
            lines.append(f" elif type(v) is {kind[0]}: a({key} + {kind[1]})")
        lines.append(f" else: a({key} + _V(v, exclude_none))")
    lines.append(" return '{' + ','.join(parts) + '}'")
    exec("\n".join(lines), namespace)  # noqa: S102 - code made here from the class's field names
    writer: Callable[[Any, bool], str] = namespace["write"]
    _JSON_WRITERS[cls] = writer
    return writer


def _dump(value: Any, json_mode: bool, exclude_none: bool) -> Any:
    kind = type(value)
    if kind in _PLAIN or value is None:
        return value
    if isinstance(value, Record):
        if value._root:
            return _dump(value.__dict__["root"], json_mode, exclude_none)
        return value._dump_fields(value.model_fields, json_mode, exclude_none)
    if kind is list:
        return [_dump(v, json_mode, exclude_none) for v in value]
    if kind is dict:
        if json_mode:
            return {_json_key(k): _dump(v, json_mode, exclude_none) for k, v in value.items()}
        return {k: _dump(v, json_mode, exclude_none) for k, v in value.items()}
    if kind is tuple:
        items = [_dump(v, json_mode, exclude_none) for v in value]
        return items if json_mode else tuple(items)
    if isinstance(value, set | frozenset):
        items = [_dump(v, json_mode, exclude_none) for v in value]
        return items if json_mode else kind(items)
    if json_mode and isinstance(value, bytes):
        return value.decode()
    return value


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


_PLAIN = frozenset({str, int, float, bool})


def _json_float(value: float) -> str:
    """A float as pydantic's JSON writes it: Python's repr but for 1e-05 (0.00001), 1e-07 (1e-7) and inf (null)."""
    text = float.__repr__(value)
    if "e" not in text and "n" not in text:
        return text
    if not math.isfinite(value):
        return "null"
    mantissa, _, exponent = text.partition("e")
    power = int(exponent)
    if power == -5:
        sign = "-" if mantissa.startswith("-") else ""
        return f"{sign}0.0000{mantissa.lstrip('-').replace('.', '')}"
    return f"{mantissa}e{power}" if power < 0 else text


_json_str: Callable[[str], str] = getattr(json.encoder, "c_encode_basestring", None) or json.encoder.encode_basestring


def _json_value(value: Any, exclude_none: bool) -> str:
    """A value as pydantic's JSON writes it: compact, UTF-8, its floats (_json_float), records by their fields."""
    kind = type(value)
    if kind is str:
        return _json_str(value)
    if kind is float:
        return _json_float(value)
    if kind is int:
        return int.__repr__(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is list or kind is tuple:
        return "[" + ",".join([_json_value(v, exclude_none) for v in value]) + "]"
    if kind is dict:
        items = [_json_str(_json_key(k)) + ":" + _json_value(v, exclude_none) for k, v in value.items()]
        return "{" + ",".join(items) + "}"
    if isinstance(value, Record):
        if value._root:
            return _json_value(value.__dict__["root"], exclude_none)
        return value.model_dump_json(exclude_none=exclude_none)
    dumped = _dump(value, True, exclude_none)  # a set, bytes: as model_dump(mode="json") gives them
    if type(dumped) is not kind:
        return _json_value(dumped, exclude_none)
    return json.dumps(dumped, ensure_ascii=False)
