"""The one registry of engines and input kinds: everything that knows a log format is looked up here.

An engine (vLLM, SGLang, NCCL) or an input kind (pasted benchmark results, host facts) is a package that
exports `SPEC`, an `EngineSpec`: its line types (grammars), the envelope headers it owns, how it dates a log
to a version, how its configuration becomes facts, its flag spellings for `diff`, and its discovery hints.
The core (pipeline, detection, facts, rule engine, diff, reports) asks this registry and never imports a
named engine, so adding an engine is one package plus one line in `BUILTIN`:

    BUILTIN = ("logdoctor.engines.vllm", ..., "mycompany.logdoctor_trtllm")

A package outside logdoctor can also be registered at run time (`register_module("pkg.engine")`) or named in
the environment variable `LOGDOCTOR_ENGINES` (comma-separated module names), read at the first look-up.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

# Where the registry imports a package, its regexes compile on first use; re-exported, as code checks for a regex
# with `registry.is_pattern`.
from logdoctor.regexes import LazyPattern as LazyPattern
from logdoctor.regexes import is_pattern as is_pattern
from logdoctor.regexes import lazy_regexes as lazy_regexes

if TYPE_CHECKING:
    from logdoctor.events import EventBase, StartupConfig
    from logdoctor.facts.profile import ProfileBuilder
    from logdoctor.parse.detect import Detection
    from logdoctor.parse.grammar import Grammar, ParseContext
    from logdoctor.vocabulary import PortFunction

# Built-in packages, in the order their line types are offered a line that several claim.
BUILTIN: tuple[str, ...] = (
    "logdoctor.engines.vllm",
    "logdoctor.engines.sglang",
    "logdoctor.engines.nccl",
    "logdoctor.inputs.bench",
    "logdoctor.inputs.host",
    "logdoctor.inputs.metrics",
    "logdoctor.inputs.env",
    "logdoctor.inputs.modelconfig",
)
ENV_VARIABLE = "LOGDOCTOR_ENGINES"

EngineKind = Literal["serving", "collective", "input"]


@dataclass(frozen=True)
class Spelling:
    """How one engine spells one engine-neutral setting (logdoctor.vocabulary.SETTINGS): the keys of its
    startup dump the setting is read from, where else its log shows it, and the flag that sets it, for
    `diff`'s port lines and the rules' fix text.

        Spelling("--tp-size", config_keys=("tp_size",))                  # a plain setting
        Spelling("--cuda-graph-max-bs", "--cuda-graph-max-bs {value}", shown_as="cuda_graph_max_bs")
        Spelling(shown_as="gen throughput (token/s)")                     # a measurement: no flag
    """

    flag: str | None = None  # the flag as the user would type it: "--tp-size"
    template: str | None = None  # the flag with a value (`{value}`); default "<flag> {value}"
    # Keys of the startup dump the plain setting is read from (a later one wins); facts reads them.
    config_keys: tuple[str, ...] = ()
    shown_as: str | None = None  # where the log shows it when no config key names it: "GPU KV cache size"
    when_on: str | None = None  # a boolean setting: the flag that turns it on ...
    when_off: str | None = None  # ... and off ("drop --disable-radix-cache")

    @property
    def key(self) -> str | None:
        """Where this engine's log shows the setting, as diff names it."""
        return self.shown_as or (self.config_keys[0] if self.config_keys else None)

    def render(self, value: Any) -> str:
        return (self.template or f"{self.flag} {{value}}").format(value=value)


FlagSpelling = Spelling  # the name the registry first gave it


@dataclass(frozen=True)
class EngineSpec:
    """What one engine (or input kind) contributes. Only `name`, `label` and `kind` are required."""

    name: str  # the engine name in events, rules (`engines:`), `--engine`, JSON: "vllm"
    label: str  # how reports write it: "vLLM"
    kind: EngineKind
    grammars: tuple[Grammar, ...] = ()
    # Envelope header ids (LogLine.header) that only this engine prints, with how --explain-detection says it.
    headers: Mapping[str, str] = field(default_factory=dict)
    # A version (range) from header shapes and process names when no version line was printed.
    infer_version: Callable[[Detection], str | None] | None = None
    # Events still open when a source ends (a benchmark table without its closing rule).
    finish: Callable[[ParseContext], list[EventBase]] | None = None
    # Engine-neutral setting (logdoctor.vocabulary.SETTINGS key) -> how this engine spells it: the dump keys
    # a plain setting is read from (logdoctor/facts/combiners/config.py), the flag diff and fix text write.
    flags: Mapping[str, Spelling] = field(default_factory=dict)
    # What the configuration dump (StartupConfig.config) says beyond the plain settings of `flags`:
    # (builder, config, event) -> writes facts. `config_facts` lists every fact it may write (a test checks).
    apply_config: Callable[[ProfileBuilder, dict[str, Any], StartupConfig], None] | None = None
    config_facts: tuple[str, ...] = ()
    # diff's port for a composite setting (vocabulary `composite=True`): (setting key, baseline) -> this
    # engine's flag text that sets the baseline's value, or None.
    port: PortFunction | None = None
    # Remote discovery (logdoctor.sources.hostscripts), for engines that run as a server process: fragments of
    # its command line ("vllm serve"), looked at in processes whose command line holds `name`; log file
    # name globs ("*vllm*"), matched in any case; and the distribution name `pip show` knows it by, for the
    # remote version check (default: `name`). `name` and `distribution` must be plain words ([A-Za-z0-9._-]).
    process_hints: tuple[str, ...] = ()
    log_globs: tuple[str, ...] = ()
    distribution: str | None = None

    @property
    def serving(self) -> bool:
        return self.kind == "serving"


TABLE_MODULE = "logdoctor.engines.registry_table"  # BUILTIN described without importing it (`describe`)


@dataclass
class _Entry:
    """One registered package: what the registry answers without importing it, and its spec once imported."""

    module: str
    name: str
    label: str
    kind: EngineKind
    headers: Mapping[str, str]
    keywords: frozenset[str]
    config_facts: tuple[str, ...]
    spec: EngineSpec | None = None


def describe(spec: EngineSpec) -> dict[str, Any]:
    """What the registry knows of a package before importing it (logdoctor/engines/registry_table.py holds this
    for BUILTIN): its names, header ids, the keywords of its line types, and the facts its configuration dump may
    set (the plain settings it reads from the dump, then `config_facts`)."""
    from logdoctor.vocabulary import SETTINGS

    settings = [SETTINGS[n].fact for n, s in spec.flags.items() if s.config_keys]
    return {
        "name": spec.name,
        "label": spec.label,
        "kind": spec.kind,
        "headers": dict(spec.headers),
        "keywords": sorted({k for g in spec.grammars for k in g.keywords}),
        "config_facts": list(dict.fromkeys([*settings, *spec.config_facts])),
    }


def builtin_table() -> dict[str, dict[str, Any]]:
    """`describe` of every BUILTIN package (importing each): what logdoctor/engines/registry_table.py holds."""
    with lazy_regexes(list(BUILTIN)):
        return {module: describe(_spec_of(module)) for module in BUILTIN}


def _entry(module: str, described: Mapping[str, Any], spec: EngineSpec | None = None) -> _Entry:
    return _Entry(
        module,
        described["name"],
        described["label"],
        described["kind"],
        described["headers"],
        frozenset(described["keywords"]),
        tuple(described["config_facts"]),
        spec,
    )


class Registry:
    """The registered packages. Names, kinds, labels, header ids and keywords of the built-in ones come from a
    table (logdoctor/engines/registry_table.py); a package is imported when its spec is first needed, for a line
    that holds one of its keywords, say (importing an engine costs start-up time, docs/benchmarks.md)."""

    def __init__(self, modules: tuple[str, ...]) -> None:
        self._modules = list(modules)
        self._entries: dict[str, _Entry] | None = None  # by name, in the order line types are offered a line
        self._header_owners: dict[str, str] | None = None
        self._keyword_entries: dict[str, tuple[_Entry, ...]] | None = None
        self._lock = threading.RLock()

    def _table(self) -> dict[str, _Entry]:
        entries = self._entries
        if entries is not None:
            return entries
        with self._lock:
            if self._entries is None:
                extra = [m.strip() for m in os.environ.get(ENV_VARIABLE, "").split(",") if m.strip()]
                table: Mapping[str, Mapping[str, Any]] = {}
                if any(m not in extra for m in self._modules):
                    table = getattr(importlib.import_module(TABLE_MODULE), "TABLE", {})
                loaded: dict[str, _Entry] = {}
                for module in [*self._modules, *extra]:
                    described = table.get(module) if module not in extra else None
                    if described is not None:
                        loaded.setdefault(described["name"], _entry(module, described))
                        continue
                    with lazy_regexes([module]):
                        spec = _spec_of(module)
                    loaded.setdefault(spec.name, _entry(module, describe(spec), spec))
                self._entries = loaded
            return self._entries

    def _spec(self, entry: _Entry) -> EngineSpec:
        spec = entry.spec
        if spec is None:
            with self._lock:
                if entry.spec is None:
                    with lazy_regexes([entry.module]):
                        entry.spec = _spec_of(entry.module)
                spec = entry.spec
        return spec

    def register(self, spec: EngineSpec) -> None:
        """Add (or replace) a spec; look-ups after this see it."""
        with self._lock:
            entries = dict(self._table())
            entries[spec.name] = _entry(spec.name, describe(spec), spec)
            self._entries = entries
            self._header_owners = None
            self._keyword_entries = None
        _changed()

    def unregister(self, name: str) -> None:
        with self._lock:
            entries = dict(self._table())
            entries.pop(name, None)
            self._entries = entries
            self._header_owners = None
            self._keyword_entries = None
        _changed()

    def specs(self) -> tuple[EngineSpec, ...]:
        """Every spec (each package imported, if not yet)."""
        return tuple(self._spec(entry) for entry in self._table().values())

    def loaded_specs(self) -> tuple[EngineSpec, ...]:
        """The specs of the packages imported so far: a package none of whose keywords a log held parsed none of
        its lines, so it has nothing to finish."""
        return tuple(entry.spec for entry in self._table().values() if entry.spec is not None)

    def get(self, name: str) -> EngineSpec | None:
        entry = self._table().get(name)
        return self._spec(entry) if entry is not None else None

    def kind(self, name: str) -> EngineKind | None:
        entry = self._table().get(name)
        return entry.kind if entry is not None else None

    def names(self, kind: EngineKind | None = None) -> tuple[str, ...]:
        return tuple(e.name for e in self._table().values() if kind is None or e.kind == kind)

    def grammars(self) -> tuple[Grammar, ...]:
        return tuple(g for s in self.specs() for g in s.grammars)

    def keywords(self) -> frozenset[str]:
        """The keywords of every line type, without importing the packages."""
        return frozenset(self._by_keyword())

    def keyword_grammars(self, keyword: str) -> list[Grammar]:
        """The line types that list `keyword`, in registry order (importing the packages that own it)."""
        return [
            g
            for entry in self._by_keyword().get(keyword, ())
            for g in self._spec(entry).grammars
            if keyword in g.keywords
        ]

    def _by_keyword(self) -> dict[str, tuple[_Entry, ...]]:
        index = self._keyword_entries
        if index is None:
            found: dict[str, list[_Entry]] = {}
            for entry in self._table().values():
                for keyword in entry.keywords:
                    found.setdefault(keyword, []).append(entry)
            index = {k: tuple(v) for k, v in found.items()}
            self._keyword_entries = index
        return index

    def header_engine(self, header: str | None) -> str | None:
        """The engine that owns an envelope header id, if one does (asked for every candidate line)."""
        owners = self._header_owners
        if owners is None:
            owners = {h: e.name for e in reversed(self._table().values()) for h in e.headers}
            self._header_owners = owners
        return owners.get(header) if header is not None else None

    def header_labels(self) -> dict[str, str]:
        """Envelope header id -> how --explain-detection describes it, for every package."""
        return {h: text for e in self._table().values() for h, text in e.headers.items()}

    def config_facts(self) -> tuple[str, ...]:
        """Every fact a configuration dump may set, on any registered engine."""
        return tuple(dict.fromkeys(f for e in self._table().values() for f in e.config_facts))

    def label(self, name: str) -> str:
        entry = self._table().get(name)
        return entry.label if entry is not None else name


def _spec_of(module: str) -> EngineSpec:
    spec = getattr(importlib.import_module(module), "SPEC", None)
    if not isinstance(spec, EngineSpec):
        raise TypeError(f"engine module {module} has no SPEC of type EngineSpec")
    return spec


_listeners: list[Callable[[], None]] = []


def on_change(listener: Callable[[], None]) -> None:
    """Call `listener` whenever a spec is registered or removed (caches built from the registry)."""
    _listeners.append(listener)


def _changed() -> None:
    for listener in _listeners:
        listener()


REGISTRY = Registry(BUILTIN)


def register_module(module: str) -> EngineSpec:
    """Import `module`, register its `SPEC` and return it."""
    with lazy_regexes([module]):
        spec = _spec_of(module)
    REGISTRY.register(spec)
    return spec


def serving_names() -> tuple[str, ...]:
    return REGISTRY.names("serving")


def engine_choices() -> list[str]:
    """`--engine` choices: auto and every serving engine."""
    return ["auto", *serving_names()]
