"""The typed events every stage shares: what one (or a few) log lines mean.

A parser turns `(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total`
into `CompileTime(kind="torch_compile", seconds=82.29, ...)`. Events are frozen records (`Record`, below) with a
`type` discriminator, so `--format jsonl` and golden files are `model_dump(mode="json")` of them.

Units are normalised here, once: rates are fractions 0..1 (never percent), memory is GiB, times are
seconds, throughput is tokens per second. `mean_acceptance_length` always counts the bonus token.

This module imports nothing of logdoctor's own.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import re
import sys
import tempfile
import zlib
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import UnionType
from typing import IO, TYPE_CHECKING, Any, ClassVar, Literal, Self, Union, get_args, get_origin, overload

# --- records ------------------------------------------------------------------------------------
# Events, results, rules and the hardware table are `Record`s: frozen classes declared like dataclasses, with the
# part of pydantic's behaviour the pipeline relies on (lax conversion of what a grammar passes: "82" or 82 for a
# float, a tuple for a list; Literal values checked; unknown fields refused; `model_copy`, `model_dump`,
# `model_dump_json` with pydantic's output) at a fraction of pydantic's start-up: a class costs its annotations'
# names at definition, and its converters (one per annotation text) on its first instance. pydantic itself is
# imported only at the borders that need it: the JSON Schema (report/json.py builds pydantic twins of the
# records) and the error messages of user-written files (docs/benchmarks.md, *pydantic off the hot path*).


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


# The name of a registered engine or input kind (logdoctor.registry), or "unknown".
Engine = str

# --- vocabularies ------------------------------------------------------------------------------
# Each lists exactly the values the grammars (logdoctor/engines/**, logdoctor/inputs/**) emit, so mypy
# rejects a consumer that tests for a value nothing produces. A grammar that adds a value adds it here.

# "sglang": accept rate before 0.5.11 (length / draft slots); "sglang-per-draft": 0.5.11+ (accepted / drafted)
# "metrics": read from a Prometheus scrape (logdoctor/inputs/metrics), either engine; rates are accepted / drafted
SpecDecodeFormat = Literal[
    "vllm-v1-0.11", "vllm-v1-0.9", "vllm-v1-0.8.5", "vllm-v1-0.8.3", "vllm-v0", "sglang", "sglang-per-draft", "metrics"
]
StatsFormat = Literal[
    "vllm-v0",
    "vllm-v1",
    "vllm-v0-prefix-cache",
    "vllm-iteration",
    "vllm-mfu",
    "sglang-decode",
    "sglang-prefill",
    "metrics",
]
AllReduceReason = Literal["no-p2p", "pcie-more-than-two", "world-size", "spans-nodes", "library", "user"]
NcclInfoKind = Literal[
    "network",
    "p2p-disabled",
    "comm-init",
    "channels",
    "nvls",
    "connected",
    "p2p-type",
    "warn",
    "distributed-init",
    "rank-assignment",
    "library",
    "library-load-failed",
    "allreduce-backend",
    "all2all",
]
HybridKind = Literal[
    "block-size-alignment",
    "mamba-page-padding",
    "mamba-cache-mode",
    "prefix-caching",
    "padding-layers",
    "spec-decode",
    "cudagraph-cap",
    "mamba-pool",
    "hybrid-detected",
    "gdn-kernel",
    "gdn-kernel-fallback",
    "linear-attention-backend",
    "mamba-cache-dtype",
    "mamba-ssu-kernel",
]
CompileKind = Literal[
    "torch_compile",
    "dynamo",
    "graph_compile",
    "compile_and_warmup",
    "warmup",
    "cache_load",
    "cache_save",
    "cache_dir",
    "cache_disabled",
    "compile_disabled",
    "compilation",
    "init_engine",
    "memory_profiling",
    "weights_load",
    "draft_weights_load",
    "model_load",
    "distributed_init",
    "server_ready",
]
FailureKind = Literal[
    "engine-dead",
    "startup-failed",
    "cuda-oom",
    "cuda-error",
    "nccl-timeout",
    "nccl-error",
    "worker-died",
    "shm-broadcast-wait",
    "rpc-timeout",
    "watchdog",
    "exception",
    "kv-cache-insufficient",
    "gpu-memory-insufficient",
    "memory-leak",
    "kv-transfer",
    "shutdown",  # a stop began (SIGTERM, `Shutting down`, `shutdown triggered`): not a failure, the marker after
    # which failure lines are teardown (facts: failure.shutdown_only)
]
SchedulerConfigKind = Literal[
    "chunked-prefill",
    "async-scheduling",
    "spec-token-budget",
    "max-num-seqs",
    "prefix-caching",
    "max-num-batched-tokens",
    "mixed-chunk",
    "prefill-interval",
]
OffloadKind = Literal["weights", "kv", "swap"]
# "container": the SSH collector records `container: lxc (...)`, and facts reads HostInfo(kind="container")
# into host.container, but no host grammar parses those lines yet.
HostInfoKind = Literal["driver", "hypervisor", "container", "version", "package", "env"]
WarningTopic = Literal[
    "async-scheduling",
    "attention-backend",
    "cudagraph-cascade",
    "env-deprecated",
    "env-unknown",
    "kv-cache-request-failed",
    "model-support",
    "spec-drafter-weights",
    "spec-synthetic-rejection",
    "stats-disabled",
    "tp-spans-nodes",
    "transformers-backend",
    "v0-fallback",
    "spec-config",
    "allreduce-fusion",
    "cpu-threads",
    "env-override",
    "flashinfer-allreduce",
    "fp8-block-config",
    "generation-config",
    "hybrid-kv-cache-manager",
    "int8-block-config",
    "kernel-warmup",
    "mamba-ssu-config",
    "max-model-len",
    "memory-imbalance",
    "model-runner",
    "moe-config",
    "mscclpp",
    "nccl-cumem",
    "nccl-symm-mem",
    "pp-partition",
    "prefill-cuda-graph",
    "sparse-mla",
    "spec-decode",
    "spec-drafter",
    "spec-mtp-multistep",
    "spec-scorer-batch-expansion",
    "spec-scorer-mqa",
    "symm-mem",
    "tokenizer",
    "trace-function",
    "jit-during-inference",
    "kv-transfer",
    "no-nvlink",
    "gemm-allreduce-fusion",
    "aot-compile-unavailable",
    "jit-compilation",
    "memory-profiling",
    "fp8-kv-scale",
    "fp8-kv",
    "moe-parallel",
    "mixed-gpus",
    "pin-memory",
]


class ProcessInfo(Record):
    """Who printed the line: `(Worker_TP1 pid=17705)`, `[2025-05-09 11:14:36 DP0 TP1]`, NCCL `host:pid:tid [dev]`."""

    role: str  # APIServer, EngineCore, Worker, RayWorker, Scheduler (SGLang TP process), NCCL, ...
    name: str | None = None  # the raw name as printed: `Worker_TP0_EP0`, `VllmWorker rank=0`
    pid: int | None = None
    host: str | None = None
    tp_rank: int | None = None
    pp_rank: int | None = None
    dp_rank: int | None = None
    ep_rank: int | None = None
    device: int | None = None  # NCCL's `[dev]`

    def label(self) -> str:
        parts = [self.role]
        for prefix, value in (("DP", self.dp_rank), ("PP", self.pp_rank), ("TP", self.tp_rank)):
            if value is not None:
                parts.append(f"{prefix}{value}")
        return " ".join(parts)


class EventBase(Record):
    """Where an event came from. `line` is 1-based in the source; `end_line` is set when it spans lines."""

    type: str  # the discriminator, fixed by each subclass
    source: str
    line: int
    end_line: int | None = None
    timestamp: str | None = None  # as printed, normalised: `MM-DD HH:MM:SS` (vLLM) or `YYYY-MM-DD HH:MM:SS`
    level: str | None = None  # INFO, WARNING, ERROR, ...
    process: ProcessInfo | None = None
    engine: Engine = "unknown"


# --- identity and configuration ---------------------------------------------------------------


class EngineVersion(EventBase):
    """`vLLM API server version 0.7.3`, the 0.15+ logo, `Initializing a V1 LLM engine (v0.20.1)`, SGLang/NCCL versions."""

    type: Literal["engine_version"] = "engine_version"
    version: str | None = None
    engine_generation: str | None = None  # "V0" / "V1" for vLLM
    model: str | None = None
    origin: str  # "version line", "logo", "engine init", "nccl version", "inferred from header shape"


class StartupConfig(EventBase):
    """A configuration dump parsed into a dict: vLLM `non-default args: {...}`, the engine-init
    `key=value` dump, `args: Namespace(...)`, SGLang `server_args=ServerArgs(...)`, or a command line.

    Values are Python values; enum reprs become `{"__enum__": "CUDAGraphMode.FULL", "value": 2}`, constructor
    calls `{"__class__": "SpeculativeConfig", ...fields}`. `truncated` is set when the dump was cut off
    mid-value (only the keys before the cut are present)."""

    type: Literal["startup_config"] = "startup_config"
    origin: Literal[
        "non-default args", "engine init", "namespace", "server_args", "command line", "env", "model config"
    ]
    config: dict[str, Any]
    truncated: bool = False


class ModelInfo(EventBase):
    """Model architecture, max model len, dtype and similar identity lines."""

    type: Literal["model_info"] = "model_info"
    model: str | None = None
    architecture: str | None = None
    max_model_len: int | None = None
    dtype: str | None = None
    is_hybrid: bool | None = None


class Platform(EventBase):
    """`Automatically detected platform cuda.` / `cpu`, GPU name and compute capability where printed."""

    type: Literal["platform"] = "platform"
    platform: str | None = None  # cuda, rocm, cpu, tpu, xpu, ...
    gpu_name: str | None = None
    compute_capability: str | None = None
    message: str | None = None


# --- speculative decoding and throughput ----------------------------------------------------------


class SpecDecodeStats(EventBase):
    """One speculative-decoding report, normalised across vLLM V0/V1 formats and SGLang `accept len`.

    `interval` is True for per-interval counters (vLLM V1, SGLang), False for cumulative ones (vLLM V0)."""

    type: Literal["spec_decode_stats"] = "spec_decode_stats"
    format: SpecDecodeFormat
    interval: bool = True
    mean_acceptance_length: float | None = None  # includes the bonus token
    acceptance_rate: float | None = None  # 0..1: accepted / drafted
    per_position_acceptance: list[float] | None = None
    num_speculative_tokens: int | None = None
    accepted_tokens: int | None = None
    drafted_tokens: int | None = None
    emitted_tokens: int | None = None
    num_drafts: int | None = None
    accepted_throughput: float | None = None
    drafted_throughput: float | None = None
    system_efficiency: float | None = None
    extra: dict[str, float | int | str] = field(default_factory=dict)  # fields of a reworded line no label maps


class SchedulerStats(EventBase):
    """A periodic throughput/scheduler line: vLLM V0/V1 stats, SGLang `Decode batch` / `Prefill batch`."""

    type: Literal["scheduler_stats"] = "scheduler_stats"
    format: StatsFormat
    engine_index: int | None = None
    prompt_throughput: float | None = None
    generation_throughput: float | None = None
    running: int | None = None
    waiting: int | None = None
    swapped: int | None = None
    deferred: int | None = None
    preemptions: int | None = None
    kv_cache_usage: float | None = None  # 0..1
    cpu_kv_cache_usage: float | None = None  # 0..1
    prefix_cache_hit_rate: float | None = None  # 0..1
    cuda_graph: bool | None = None  # SGLang decode lines
    num_tokens: int | None = None  # SGLang `#token`
    new_tokens: int | None = None  # SGLang prefill `#new-token`
    cached_tokens: int | None = None  # SGLang prefill `#cached-token`
    queue: int | None = None  # SGLang `#queue-req`
    extra: dict[str, float | int | str] = field(default_factory=dict)


# --- communication ----------------------------------------------------------------------------


class CustomAllReduce(EventBase):
    """vLLM/SGLang custom all-reduce status: disabled and why, or positive evidence it is in use."""

    type: Literal["custom_allreduce"] = "custom_allreduce"
    enabled: bool
    reason: AllReduceReason | None = None
    message: str | None = None


class AllReduceBackends(EventBase):
    """vLLM 0.25+: `Using ['CUSTOM', 'PYNCCL'] all-reduce backends (in dispatch order) for group 'tp:0' ...`."""

    type: Literal["allreduce_backends"] = "allreduce_backends"
    backends: list[str]
    group: str | None = None
    candidates: list[str] = field(default_factory=list)


class P2PCheck(EventBase):
    """P2P capability checks: vLLM's P2P cache, `Two processes do not agree`, `nvidia-smi topo -p2p` results."""

    type: Literal["p2p_check"] = "p2p_check"
    supported: bool | None = None
    message: str


class NcclVersion(EventBase):
    type: Literal["nccl_version"] = "nccl_version"
    version: str
    cuda: str | None = None


class NcclTransport(EventBase):
    """`Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM` (and `via SHM/direct/direct`, `via NET/Socket/0`, ...)."""

    type: Literal["nccl_transport"] = "nccl_transport"
    channel: int | None = None
    src_rank: int | None = None
    dst_rank: int | None = None
    src_device: int | None = None
    dst_device: int | None = None
    transport: str  # "P2P", "SHM", "NET", "NVLS", "COLLNET", ...
    detail: str  # the full transport text: "P2P/CUMEM/read", "SHM/direct/direct", "NET/IB/0/GDRDMA"


class NcclEnv(EventBase):
    """`NCCL_P2P_DISABLE set by environment to 1`, and similar environment echoes."""

    type: Literal["nccl_env"] = "nccl_env"
    name: str
    value: str


class NcclInfo(EventBase):
    """Other NCCL facts worth keeping: `Using network Socket`, `P2P is disabled`, comm init summary, WARNs."""

    type: Literal["nccl_info"] = "nccl_info"
    kind: NcclInfoKind
    message: str
    values: dict[str, str | int | float | bool] = field(default_factory=dict)


# --- backends, memory, graphs, kernels --------------------------------------------------------


class AttentionBackend(EventBase):
    """The attention backend chosen (`Using FLASH_ATTN attention backend out of ...`), or a fallback reason."""

    type: Literal["attention_backend"] = "attention_backend"
    backend: str | None = None  # normalised upper-case name: FLASH_ATTN, FLASHINFER, TRITON_ATTN, XFORMERS, ...
    role: Literal["target", "drafter", "encoder", "prefill", "decode", "unknown"] = "unknown"
    candidates: list[str] = field(default_factory=list)
    forced: bool = False  # the user chose it (env var / --attention-backend)
    fallback_reason: str | None = None  # set when this line explains why a faster backend was not used
    version: str | None = None  # FlashAttention version where printed: "2", "3", "4"
    message: str | None = None


class KVCache(EventBase):
    """KV-cache capacity lines: `GPU KV cache size: 123,456 tokens`, `# GPU blocks: N`, `Maximum concurrency ...`,
    `Available KV cache memory: X GiB`, SGLang `max_total_num_tokens=N`, `KV Cache is allocated. #tokens: N`."""

    type: Literal["kv_cache"] = "kv_cache"
    gpu_blocks: int | None = None
    cpu_blocks: int | None = None
    kv_tokens: int | None = None
    max_concurrency: float | None = None
    tokens_per_request: int | None = None
    available_memory_gib: float | None = None
    kv_cache_memory_gib: float | None = None
    block_size: int | None = None
    free_memory_gib: float | None = None  # GPU memory left free once the pool is sized (SGLang available_gpu_mem)
    connector: str | None = None  # disaggregated prefill: the KV-transfer connector in use ("nixl", "mooncake", ...)
    transfer_backend: str | None = None  # the connector's transport where printed (NIXL's "UCX")
    # KV-transfer metrics (vLLM `KV Transfer metrics: Label=value, ...`), by normalised label:
    # `Avg xfer time (ms)` -> avg_xfer_time_ms; units as printed in the label.
    transfer: dict[str, float | int | str] = field(default_factory=dict)
    message: str | None = None


class HybridModel(EventBase):
    """Mamba / linear-attention hybrid layout notices (block-size alignment, page padding, cache mode)."""

    type: Literal["hybrid_model"] = "hybrid_model"
    kind: HybridKind
    attention_block_size: int | None = None
    padding_percent: float | None = None
    mamba_cache_mode: str | None = None
    prefix_caching: bool | None = None
    message: str


class CudaGraph(EventBase):
    """CUDA-graph capture and eager-mode evidence for the target or the drafter."""

    type: Literal["cuda_graph"] = "cuda_graph"
    kind: Literal[
        "capture_started",
        "capture_finished",
        "capture_progress",
        "eager_mode",
        "mode_downgrade",
        "capture_skipped",
        "capture_capped",
        "drafter_eager",
        "capture_failed",
        "capture_sizes",
        "memory_profile",  # vLLM 0.18+ CUDA-graph memory estimate / profiling notices
    ]
    role: Literal["target", "drafter", "encoder", "unknown"] = "unknown"
    seconds: float | None = None
    memory_gib: float | None = None
    mode_from: str | None = None
    mode_to: str | None = None
    mode: str | None = None  # the runtime mode a capture bar names: `Capturing CUDA graphs (decode, FULL)` -> FULL
    max_batch_size: int | None = None
    batch_sizes: list[int] | None = None
    message: str


class CompileTime(EventBase):
    """torch.compile / Dynamo / engine-init durations and compile-cache hits."""

    type: Literal["compile_time"] = "compile_time"
    kind: CompileKind
    seconds: float | None = None
    memory_gib: float | None = None
    cache_hit: bool | None = None
    message: str


class Quantization(EventBase):
    """Quantization method and the GEMM/MoE kernel chosen, and fallbacks to slower kernels."""

    type: Literal["quantization"] = "quantization"
    method: str | None = None  # fp8, awq, awq_marlin, gptq, gptq_marlin, compressed-tensors, ...
    kernel: str | None = None  # Marlin, Machete, CUTLASS, ...
    fallback: bool = False
    message: str


class Preemption(EventBase):
    """A preemption or retraction: vLLM V0 `Sequence group N is preempted by PreemptionMode.RECOMPUTE ...`,
    SGLang `KV cache pool is full. Retract requests.`"""

    type: Literal["preemption"] = "preemption"
    mode: str | None = None  # RECOMPUTE, SWAP, retract
    cumulative: int | None = None
    count: int | None = None
    message: str


class EngineFailure(EventBase):
    """The engine crashed, hung or lost a worker."""

    type: Literal["engine_failure"] = "engine_failure"
    kind: FailureKind
    connector: str | None = None  # kv-transfer: the KV connector, "nixl", "mooncake", "moriio", ... where known
    requests: int | None = None  # requests the failure affected, where printed
    message: str


class SchedulerConfig(EventBase):
    """Runtime notices about batching: chunked prefill size, async scheduling, max_num_scheduled_tokens."""

    type: Literal["scheduler_config"] = "scheduler_config"
    kind: SchedulerConfigKind
    enabled: bool | None = None
    value: int | None = None
    message: str


class Offload(EventBase):
    """Weights or KV cache in host memory: `cpu_offload_gb`, swap space, CPU KV cache."""

    type: Literal["offload"] = "offload"
    kind: OffloadKind
    gib: float | None = None
    message: str


class PerfWarning(EventBase):
    """A performance warning the engine printed that has no more specific event (kept with its text)."""

    type: Literal["perf_warning"] = "perf_warning"
    topic: WarningTopic
    message: str


# --- user-pasted benchmark results and host facts ---------------------------------------------


class BenchmarkResult(EventBase):
    """One result a user pasted beside the log: a row of the story's concurrency table
    (`C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail`), or a `vllm bench serve` /
    `sglang.bench_serving` result block."""

    type: Literal["benchmark_result"] = "benchmark_result"
    tool: str  # "concurrency-table", "vllm-bench-serve", "sglang-bench-serving", "sglang-bench-one-batch"
    concurrency: float | None = None
    output_throughput: float | None = None  # aggregate generated tok/s
    per_request_throughput: float | None = None  # decode tok/s per request
    total_throughput: float | None = None
    request_throughput: float | None = None
    mean_ttft_ms: float | None = None
    median_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    median_tpot_ms: float | None = None
    mean_itl_ms: float | None = None
    mean_e2e_ms: float | None = None
    completed: int | None = None
    failed: int | None = None
    acceptance_length: float | None = None
    request_rate: float | None = None  # requests/s the client offered; None for `inf` (all at once) or unknown
    model: str | None = None  # the model the benchmark asked for (`model_id`, SGLang's `server_info.model_path`)
    backend: str | None = None  # the client backend: "vllm", "openai-chat", "sglang", ...
    values: dict[str, float | int | str] = field(default_factory=dict)


class GpuInfo(EventBase):
    """A GPU as `nvidia-smi --query-gpu` (or another listing) reports it."""

    type: Literal["gpu_info"] = "gpu_info"
    index: int | None = None
    name: str
    memory_mib: int | None = None
    driver: str | None = None
    bus_id: str | None = None
    # `nvidia-smi -q`: the PCIe link (the current generation drops at idle, so the maximum is kept too),
    # persistence mode and the SM clock (current and maximum, MHz)
    pcie_generation: int | None = None
    pcie_generation_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    persistence_mode: bool | None = None
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None


class GpuTopology(EventBase):
    """`nvidia-smi topo -m`: the link between each pair of GPUs (NV#, PIX, PXB, PHB, NODE, SYS)."""

    type: Literal["gpu_topology"] = "gpu_topology"
    links: dict[str, str]  # "0-1" -> "NV18"
    gpus: int


class GpuP2P(EventBase):
    """`nvidia-smi topo -p2p r`: P2P read capability between each pair (OK, CNS, GNS, TNS, NS, U)."""

    type: Literal["gpu_p2p"] = "gpu_p2p"
    mode: str  # "r", "w", "rw", "n", "a"
    status: dict[str, str]  # "0-1" -> "OK"


class HostInfo(EventBase):
    """Other host facts a collector or an environment dump records: container kind, driver, versions
    (`kind="version"`: torch, vllm, sglang, cuda-runtime ...), installed packages (`kind="package"`, from
    `[pip3] nvidia-nccl-cu12==2.21.5`), environment variables (`kind="env"`, `NCCL_P2P_DISABLE=1`)."""

    type: Literal["host_info"] = "host_info"
    kind: HostInfoKind
    name: str
    value: str


Event = (
    EngineVersion
    | StartupConfig
    | ModelInfo
    | Platform
    | SpecDecodeStats
    | SchedulerStats
    | CustomAllReduce
    | AllReduceBackends
    | P2PCheck
    | NcclVersion
    | NcclTransport
    | NcclEnv
    | NcclInfo
    | AttentionBackend
    | KVCache
    | HybridModel
    | CudaGraph
    | CompileTime
    | Quantization
    | Preemption
    | EngineFailure
    | SchedulerConfig
    | Offload
    | PerfWarning
    | BenchmarkResult
    | GpuInfo
    | GpuTopology
    | GpuP2P
    | HostInfo
)

EVENT_TYPES: tuple[type[EventBase], ...] = (
    EngineVersion,
    StartupConfig,
    ModelInfo,
    Platform,
    SpecDecodeStats,
    SchedulerStats,
    CustomAllReduce,
    AllReduceBackends,
    P2PCheck,
    NcclVersion,
    NcclTransport,
    NcclEnv,
    NcclInfo,
    AttentionBackend,
    KVCache,
    HybridModel,
    CudaGraph,
    CompileTime,
    Quantization,
    Preemption,
    EngineFailure,
    SchedulerConfig,
    Offload,
    PerfWarning,
    BenchmarkResult,
    GpuInfo,
    GpuTopology,
    GpuP2P,
    HostInfo,
)


# --- storage ------------------------------------------------------------------------------------
# A pydantic event costs about 4 KiB of memory (the instance, its __dict__, its fields-set, its ProcessInfo);
# a log of a million stats lines would hold 4 GB. `EventLog` keeps a deployment's events pickled and
# zlib-compressed in batches (10-80 bytes an event: consecutive stats lines differ in a few digits) and
# gives them back, in order, each time it is iterated; `LineTexts` does the same for the evidence lines.
# docs/benchmarks.md ("Memory") has the measurements.

_BATCH = 1024  # events (or lines) a compressed batch: big enough to compress well, small enough to decode


# Compressed bytes a store keeps in memory; past that its batches go to an unlinked temporary file (`_Spool`),
# so memory stays flat however long the log: ~80,000 events, or as many lines' texts, fit in memory.
MEMORY_BUDGET = 4 << 20


class _OnDisk:
    """A batch written to a store's temporary file."""

    __slots__ = ("length", "offset", "spool")

    def __init__(self, spool: _Spool, offset: int, length: int) -> None:
        self.spool, self.offset, self.length = spool, offset, length

    def read(self) -> bytes:
        return self.spool.read(self.offset, self.length)


_Batch = bytes | _OnDisk


class _Spool:
    """Where a store's compressed batches live: in memory up to MEMORY_BUDGET, then in a temporary file that no
    other process can open (created unlinked, mode 0600, under $TMPDIR; gone when the store is). A file that cannot
    be created leaves the batches in memory."""

    __slots__ = ("_file", "_in_memory", "_no_file", "_size")

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._no_file = False  # the temporary file could not be created: memory it is
        self._in_memory = 0
        self._size = 0

    def keep(self, blob: bytes) -> _Batch:
        if self._in_memory + len(blob) <= MEMORY_BUDGET or not self._open():
            self._in_memory += len(blob)
            return blob
        assert self._file is not None
        offset = self._size
        view = memoryview(blob)
        while view:
            view = view[os.write(self._file.fileno(), view) :]
        self._size += len(blob)
        return _OnDisk(self, offset, len(blob))

    def _open(self) -> bool:
        if self._file is None and not self._no_file:
            try:
                # It lives as long as the store: closed (and its space freed) when the store is collected.
                self._file = tempfile.TemporaryFile(prefix="logdoctor-", buffering=0)  # noqa: SIM115
            except OSError:
                self._no_file = True
        return self._file is not None

    def read(self, offset: int, length: int) -> bytes:
        assert self._file is not None
        return os.pread(self._file.fileno(), length, offset)


def _pack(items: object, spool: _Spool) -> _Batch:
    return spool.keep(zlib.compress(pickle.dumps(items, pickle.HIGHEST_PROTOCOL), 1))  # level 1: the fastest


def _blob(batch: _Batch) -> bytes:
    return batch if isinstance(batch, bytes) else batch.read()


def _unpack(batch: _Batch) -> Any:
    data = _blob(batch)
    # Only bytes `_pack` made in this process (or in its forked parse workers, `adopt`) are unpickled: input never
    # reaches here as a pickle.
    return pickle.loads(zlib.decompress(data))  # noqa: S301


def _stored(batches: Sequence[_Batch]) -> tuple[int, int]:
    """(bytes in memory, bytes on disk) of some batches."""
    disk = sum(b.length for b in batches if isinstance(b, _OnDisk))
    return sum(len(b) for b in batches if isinstance(b, bytes)), disk


class EventLog(Sequence[EventBase]):
    """An append-only, re-iterable sequence of events held compressed: `append`/`extend` while parsing, then
    iterate as often as needed (each pass decodes the batches again, about 20 us an event). Indexing decodes the
    batch that holds the event: fine for `log[0]`, slow in a loop.

        log = EventLog(stream)           # parse once
        engines = {e.engine for e in log}
        profile = build_profile(log)     # a second pass over the same events
    """

    __slots__ = ("_batches", "_count", "_ends", "_pending", "_spool")

    def __init__(self, events: Iterable[EventBase] = ()) -> None:
        self._spool = _Spool()
        self._batches: list[_Batch] = []
        self._ends: list[int] = []  # events in the sealed batches up to and including each one
        self._pending: list[EventBase] = []
        self._count = 0
        self.extend(events)

    def append(self, event: EventBase) -> None:
        self._pending.append(event)
        self._count += 1
        if len(self._pending) >= _BATCH:
            self._seal()

    def extend(self, events: Iterable[EventBase]) -> None:
        if isinstance(events, EventLog):
            self._seal()
            events._seal()
            base = self._count
            self._batches.extend(events._batches)  # shared, not copied: a batch is never written again
            self._ends.extend(base + end for end in events._ends)
            self._count += events._count
            return
        for event in events:
            self.append(event)

    def _seal(self) -> None:
        if self._pending:
            self._batches.append(_pack(self._pending, self._spool))
            self._ends.append(self._count)
            self._pending = []

    def __iter__(self) -> Iterator[EventBase]:
        for batch in list(self._batches):
            events: list[EventBase] = _unpack(batch)
            yield from events
        yield from list(self._pending)

    @overload
    def __getitem__(self, index: int) -> EventBase: ...

    @overload
    def __getitem__(self, index: slice) -> list[EventBase]: ...

    def __getitem__(self, index: int | slice) -> EventBase | list[EventBase]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("EventLog index out of range")
        sealed = self._ends[-1] if self._ends else 0
        if index >= sealed:
            return self._pending[index - sealed]
        i = bisect_right(self._ends, index)
        start = self._ends[i - 1] if i else 0
        events: list[EventBase] = _unpack(self._batches[i])
        return events[index - start]

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __reduce__(self) -> tuple[object, ...]:  # to another process: the events, not this one's temporary file
        return (EventLog, (list(self),))

    def batches(self) -> list[tuple[bytes, int]]:
        """The compressed batches and the events in each, for `adopt` in another process of this logdoctor (a parse
        worker's events reach its parent without being decoded and encoded again)."""
        self._seal()
        starts = [0, *self._ends[:-1]]
        return [(_blob(b), end - start) for b, start, end in zip(self._batches, starts, self._ends, strict=True)]

    def adopt(self, blob: bytes, count: int) -> None:
        """Append a batch `batches` gave, as it is (kept in memory or spilled under this log's budget)."""
        self._seal()
        self._batches.append(self._spool.keep(blob))
        self._count += count
        self._ends.append(self._count)

    def __repr__(self) -> str:
        memory, disk = _stored(self._batches)
        return f"EventLog({self._count} events, compressed {memory} bytes in memory, {disk} on disk)"


class LineTexts:
    """The redacted text of the lines that gave events (the evidence a finding quotes), by line number, held
    compressed in batches of consecutive lines; lines are added in ascending order, as a source is read."""

    __slots__ = ("_batches", "_pending", "_ranges", "_recent", "_spool")

    def __init__(self) -> None:
        self._spool = _Spool()
        self._ranges: list[tuple[int, int]] = []  # the first and last line number of each sealed batch
        self._batches: list[_Batch] = []
        self._pending: dict[int, str] = {}
        self._recent: tuple[int, dict[int, str]] | None = None  # the batch decoded last (evidence clusters)

    def __setitem__(self, number: int, text: str) -> None:
        self._pending[number] = text
        if len(self._pending) >= _BATCH:
            self._seal()

    def _seal(self) -> None:
        if self._pending:
            self._ranges.append((min(self._pending), max(self._pending)))
            self._batches.append(_pack(self._pending, self._spool))
            self._pending = {}

    def items(self) -> Iterator[tuple[int, str]]:
        """(line number, text) in the order they were added (a worker's texts sent to the parent as a dict)."""
        for batch in self._batches:
            yield from _unpack(batch).items()
        yield from list(self._pending.items())

    def batches(self) -> list[tuple[bytes, tuple[int, int]]]:
        """The compressed batches and the first and last line number in each, for `adopt` (as EventLog.batches)."""
        self._seal()
        return [(_blob(b), span) for b, span in zip(self._batches, self._ranges, strict=True)]

    def adopt(self, blob: bytes, span: tuple[int, int]) -> None:
        """Append a batch `batches` gave, of lines after those held."""
        self._seal()
        self._ranges.append(span)
        self._batches.append(self._spool.keep(blob))

    def copy(self) -> LineTexts:
        """A twin that can go on being added to without changing this one (sealed batches are shared: they never
        change, and the spool only ever appends)."""
        twin = LineTexts.__new__(LineTexts)
        twin._spool, twin._ranges, twin._batches = self._spool, list(self._ranges), list(self._batches)
        twin._pending, twin._recent = dict(self._pending), None
        return twin

    def get(self, number: int, default: str | None = None) -> str | None:
        """The text of a line, newest first: a line rejoined after a terminal wrap is stored again under its first
        number once the next line was read, possibly in a later batch."""
        if number in self._pending:
            return self._pending[number]
        for i in range(len(self._batches) - 1, -1, -1):
            first, last = self._ranges[i]
            if not first <= number <= last:
                continue
            if self._recent is None or self._recent[0] != i:
                self._recent = (i, _unpack(self._batches[i]))
            text = self._recent[1].get(number)
            if text is not None:
                return text
        return default

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and self.get(number) is not None

    def __len__(self) -> int:
        return len(self._pending) + len(self._batches) * _BATCH  # an upper bound once sealed: for reprs

    def __repr__(self) -> str:
        memory, disk = _stored(self._batches)
        pending = len(self._pending)
        return f"LineTexts({len(self._batches)} batches: {memory} bytes in memory, {disk} on disk; {pending} more)"
