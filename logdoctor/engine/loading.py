"""Loading a set of YAML files (rules, advisories) and the snapshot of a built-in set kept for the next start.

Every file of a directory is loaded by the set's own loader, its problems collected as file:line:col; a built-in
set that loaded without a problem is kept whole in the start-up cache (logdoctor/cache.py, `Snapshot`) under a
key of its files' bytes and the code that loaded it, and the next start reads that one file instead.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from logdoctor.engine.conditioncache import save_parse_cache
from logdoctor.engine.conditiontree import Node
from logdoctor.userfile import YamlDataCache

_T = TypeVar("_T")


def node_classes() -> tuple[type, ...]:
    """Every class of a parsed condition's tree."""
    found: list[type] = []
    pending: list[type] = [Node]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return tuple(found)


def load_yaml_files(
    builtin_dir: Path | None,
    directories: Iterable[Path],
    kind: str,
    files_of: Callable[[Path], Iterable[Path]],
    load_one: Callable[[Path, Path, bool, list[str]], _T | None],
    yaml_cache: YamlDataCache,
    errors: list[str],
) -> list[_T]:
    """Every file of the built-in directory (unless None) and of `directories`, loaded by `load_one(path, root,
    builtin, errors)`; problems go to `errors` as file:line:col. A file whose cached YAML gave errors is parsed
    again, so that its errors carry positions; the caches are saved once, for the next start (logdoctor/cache.py)."""
    loaded: list[_T] = []
    sources: list[tuple[Path, bool]] = [(builtin_dir, True)] if builtin_dir is not None else []
    for directory in directories:
        if not directory.is_dir():
            errors.append(f"{directory}:1:1: not a directory of {kind} files")
            continue
        sources.append((directory, False))
    for directory, is_builtin in sources:
        for path in files_of(directory):
            before = len(errors)
            item = load_one(path, directory, is_builtin, errors)
            if len(errors) > before and yaml_cache.forget(str(path)):  # cached: parse it, for the positions
                del errors[before:]
                item = load_one(path, directory, is_builtin, errors)
            if item is not None:
                loaded.append(item)
            if len(errors) == before:
                yaml_cache.keep(str(path))
    save_parse_cache()
    yaml_cache.save()
    return loaded


@functools.cache
def _code_digest() -> bytes:
    """The bytes of the code a loaded built-in set depends on: the engine package's modules (loading, validation,
    conditions), the records, the fact list and the registry's table (engine names)."""
    from logdoctor import __version__

    here = os.path.dirname(os.path.abspath(__file__))
    package = os.path.dirname(here)
    code = sorted(os.path.join(here, name) for name in os.listdir(here) if name.endswith(".py"))
    code += [os.path.join(package, *parts) for parts in (("records.py",), ("facts", "declarations.py"))]
    code.append(os.path.join(package, "engines", "registry_table.py"))
    digest = hashlib.sha256(__version__.encode())
    for path in code:
        digest.update(path.encode("utf-8", "surrogateescape") + b"\0")
        try:
            with open(path, "rb") as fh:
                digest.update(fh.read())
        except OSError:
            digest.update(b"(not readable)")
    return digest.digest()


def snapshot_key(kind: str, directory: Path) -> str:
    """What a snapshot of a loaded built-in set depends on: logdoctor's version, the code that loads and validates
    it (`_code_digest`) and every YAML file under `directory`, by its path and its bytes (plain `os` calls: this runs
    at every start)."""
    digest = hashlib.sha256(kind.encode() + b"\0" + _code_digest() + str(directory).encode("utf-8", "surrogateescape"))
    files: list[str] = []
    for root, _, names in os.walk(directory, followlinks=True):
        files += [os.path.join(root, name) for name in names if name.endswith(".yaml")]
    for path in sorted(files):
        digest.update(b"\0" + path.encode("utf-8", "surrogateescape") + b"\0")
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            data = b"(not readable)"
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def load_builtin_set(
    kind: str,
    directory: Path,
    files_of: Callable[[Path], list[Path]],
    load_one: Callable[[Path, Path, bool, list[str]], _T | None],
    yaml_cache: YamlDataCache,
    item_type: type[_T],
    classes: Iterable[type],
    errors: list[str],
) -> list[_T]:
    """A built-in set (rules, advisories): from the snapshot of the last start that loaded it, when nothing it depends
    on changed (logdoctor/cache.py, `Snapshot`, which makes only `classes`); else loaded from its files by
    `load_yaml_files`, and the snapshot written for the next start."""
    from logdoctor.cache import Snapshot, cache_dir

    if cache_dir() is None:  # the start-up cache is off
        return load_yaml_files(directory, (), kind, files_of, load_one, yaml_cache, errors)
    # one file a directory: installs sharing a cache directory do not overwrite each other's snapshot
    where = hashlib.sha256(str(directory).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    snapshot = Snapshot(f"{kind}-set-{where}", classes)
    key = snapshot_key(kind, directory)
    cached = snapshot.load(key)
    if isinstance(cached, list) and all(isinstance(item, item_type) for item in cached):
        return cached
    before = len(errors)
    loaded = load_yaml_files(directory, (), kind, files_of, load_one, yaml_cache, errors)
    if len(errors) == before:
        snapshot.save(key, loaded)
    return loaded
