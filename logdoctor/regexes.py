"""Regexes compiled on first use: `LazyPattern`, and `lazy_regexes`, under which `re.compile` called by chosen modules
gives one. The registry imports the engine packages under it (their ~640 top-level regexes, a few dozen of which a
log uses), and the console script runs every command under it for all of logdoctor's modules (docs/architecture.md,
*The registry*). This module imports nothing of logdoctor's, so the console script pays for no more than it.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TypeGuard

_PATTERN_ATTRIBUTES = (
    "search",
    "match",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "scanner",
    "flags",
    "groups",
    "groupindex",
)


class LazyPattern:
    """A regex an engine package compiles at its top level, compiled when first used.

    The engine packages hold about 640 such regexes and a log uses a few dozen of them; compiling them all
    was most of the cost of importing the packages (docs/benchmarks.md, *Start-up*). On first use the
    compiled pattern's methods are copied onto the instance, so later calls cost what a `re.Pattern`'s do.
    It behaves as the compiled pattern (methods, `pattern`, `flags`, `groups`, `groupindex`, equality,
    pickling); `isinstance(x, re.Pattern)` is the one difference (`is_pattern` answers for both)."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def compiled(self) -> re.Pattern[Any]:
        compiled: re.Pattern[Any] | None = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = _REAL_COMPILE(self.pattern, self._flags)
            for name in _PATTERN_ATTRIBUTES:
                self.__dict__[name] = getattr(compiled, name)
            self.__dict__["_compiled"] = compiled
        return compiled

    def __getattr__(self, name: str) -> Any:  # only for what is not yet on the instance
        if name.startswith("__") or name in ("_flags", "_compiled"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return repr(self.compiled())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPattern):
            other = other.compiled()
        return self.compiled() == other

    def __hash__(self) -> int:
        return hash(self.compiled())

    def __reduce__(self) -> tuple[Any, ...]:
        return (_REAL_COMPILE, (self.pattern, self._flags))

    def __copy__(self) -> LazyPattern:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> LazyPattern:
        return self


def is_pattern(value: object) -> TypeGuard[re.Pattern[Any]]:
    """A compiled regex, or an engine package's regex compiled on first use (LazyPattern)."""
    return isinstance(value, re.Pattern | LazyPattern)


_REAL_COMPILE = re.compile
# The modules and packages the registry is importing (innermost last): their re.compile calls are lazy.
_lazy_prefixes: list[tuple[frozenset[str], tuple[str, ...]]] = []


def _compile(pattern: Any, flags: Any = 0) -> Any:
    """`re.compile` while the registry imports engine packages: lazy for their modules, as before elsewhere."""
    if _lazy_prefixes and isinstance(pattern, str | bytes):
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if isinstance(caller, str):
            for modules, packages in _lazy_prefixes:
                if caller in modules or caller.startswith(packages):
                    return LazyPattern(pattern, int(flags))
    if isinstance(pattern, LazyPattern):
        pattern = pattern.compiled()
    return _REAL_COMPILE(pattern, flags)


@contextlib.contextmanager
def lazy_regexes(modules: list[str]) -> Iterator[None]:
    """Within: `re.compile` called by the code of `modules` (and their submodules) gives a LazyPattern.

    `re.compile` is replaced while the registry imports engine packages (under its lock), and while the console
    script runs a command (logdoctor/app/entry.py: every logdoctor module's regexes compile on first use, most of
    them never in a short run); a call from any other module still compiles at once, so code outside logdoctor
    sees no change."""
    outermost = not _lazy_prefixes
    _lazy_prefixes.append((frozenset(modules), tuple(m + "." for m in modules)))
    if outermost:
        re.compile = _compile
    try:
        yield
    finally:
        _lazy_prefixes.pop()
        if outermost and re.compile is _compile:
            re.compile = _REAL_COMPILE
