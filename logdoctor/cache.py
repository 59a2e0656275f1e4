"""A small verified JSON cache on disk for work every start would otherwise repeat (docs/benchmarks.md, *Start-up*).

The rule engine keeps the parsed form of every rule condition here, so a start does not run pyparsing on 40
unchanged rules: `$XDG_CACHE_HOME/logdoctor/conditions.json` (default `~/.cache/logdoctor/`). The file is
data, never code: one line with the SHA-256 of the rest, then a JSON object

    {"key": "<sha256 of what the entries depend on>", "entries": {"condition\\u0000not cuda_graphs.enabled": [...]}}

and it is used only when the digest matches its bytes, the key matches this logdoctor (its version and the
source of the code that made the entries), it belongs to this user and nobody else may write it. Anything
else (a missing, corrupt, stale, foreign or oversized file) reads as an empty cache, which is then rebuilt.
Each entry is keyed by the text it was made from, so an edited rule misses for its changed conditions only.
A directory that cannot be written costs the cache, never the run. `LOGDOCTOR_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ENV_DISABLE = "LOGDOCTOR_NO_CACHE"
MAX_FILE_BYTES = 8 * 1024 * 1024  # far above what the built-in rules need (about 60 KB); a bigger file is not read
MAX_ENTRIES = 20_000  # entries kept on save: those used by this process first, then the older ones
_MAGIC = "logdoctor-cache-1"


_CACHE_DIR: list[tuple[tuple[str, str | None], Path | None]] = []  # (the variables, cache_dir's answer for them)


def cache_dir() -> Path | None:
    """`$XDG_CACHE_HOME/logdoctor` (an absolute XDG_CACHE_HOME only, as the XDG spec says), else
    `~/.cache/logdoctor`; None when caching is off or there is no home directory."""
    if os.environ.get(ENV_DISABLE, "").strip() not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    # asked for every condition and rule file loaded (about 550 times when the rules load from their files): the
    # answer, two Paths made, is kept while the variables it comes from stay the same
    known = (base, os.environ.get("HOME"))
    if _CACHE_DIR and _CACHE_DIR[0][0] == known:
        return _CACHE_DIR[0][1]
    found: Path | None
    if base and os.path.isabs(base):
        found = Path(base) / "logdoctor"
    else:
        try:
            found = Path.home() / ".cache" / "logdoctor"
        except (RuntimeError, KeyError, OSError):
            found = None
    _CACHE_DIR[:] = [(known, found)]
    return found


def code_key(*parts: str | bytes) -> str:
    """A key over what the cached entries depend on (a version, the source of the code that made them)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class VerifiedCache:
    """Entries (JSON values keyed by strings) loaded from one file on first use and saved back when new."""

    def __init__(self, name: str, key: str, directory: Path | None = None) -> None:
        self.name = name
        self.key = key
        self._directory = directory
        self._entries: dict[str, Any] | None = None
        self._used: dict[str, Any] = {}
        self._dirty = False

    @property
    def path(self) -> Path | None:
        directory = self._directory if self._directory is not None else cache_dir()
        return directory / f"{self.name}.json" if directory is not None else None

    def get(self, key: str) -> Any:
        if self._entries is None:
            self._entries = self._read()
        value = self._entries.get(key)
        if value is not None:
            self._used[key] = value
        return value

    def put(self, key: str, value: Any) -> None:
        if self._entries is None:
            self._entries = self._read()
        self._entries[key] = value
        self._used[key] = value
        self._dirty = True

    def discard(self, keys: Iterable[str]) -> None:
        """Forget entries found unusable (they are written again when next made)."""
        for key in keys:
            if self._entries is not None and self._entries.pop(key, None) is not None:
                self._dirty = True
            self._used.pop(key, None)

    def save(self) -> bool:
        """Write the file if anything was added; False when nothing was written (nothing new, or not writable)."""
        path = self.path
        if not self._dirty or path is None or self._entries is None:
            return False
        kept = dict(self._used)
        for key, value in self._entries.items():
            if len(kept) >= MAX_ENTRIES:
                break
            kept.setdefault(key, value)
        body = json.dumps({"key": self.key, "entries": kept}, separators=(",", ":"), sort_keys=True).encode("utf-8")
        data = f"{_MAGIC} {hashlib.sha256(body).hexdigest()}\n".encode("ascii") + body
        if not _write_own_file(path, data):
            return False
        self._dirty = False
        return True

    def _read(self) -> dict[str, Any]:
        path = self.path
        if path is None:
            return {}
        data = _read_own_file(path)
        if data is None:
            return {}
        header, _, body = data.partition(b"\n")
        if header != f"{_MAGIC} {hashlib.sha256(body).hexdigest()}".encode("ascii"):
            return {}
        try:
            document = json.loads(body)
        except ValueError:
            return {}
        if not isinstance(document, dict) or document.get("key") != self.key:
            return {}
        entries = document.get("entries")
        return entries if isinstance(entries, dict) else {}


_SNAPSHOT_MAGIC = b"logdoctor-snapshot-1"


class Snapshot:
    """One value kept whole for the next start: the built-in rule set as loaded, conditions compiled, so an
    unchanged set is neither read from YAML nor validated again (docs/cli.md, *Start-up cache*).

    `$XDG_CACHE_HOME/logdoctor/<name>.pickle`: one line `logdoctor-snapshot-1 <key> <sha256 of the rest>`, then
    the value pickled. It is used under the checks of `VerifiedCache` (this user's file, nobody else may write it,
    bounded size, the digest matches its bytes, the key matches what the value was made from) and unpickled by an
    unpickler that makes nothing but the classes `allowed` names (records, condition trees): no other global, so no
    function is called on the file's say. Anything else reads as no snapshot, and the caller loads afresh."""

    def __init__(self, name: str, allowed: Iterable[type], directory: Path | None = None) -> None:
        self.name = name
        self._allowed = {(cls.__module__, cls.__qualname__): cls for cls in allowed}
        self._directory = directory

    @property
    def path(self) -> Path | None:
        directory = self._directory if self._directory is not None else cache_dir()
        return directory / f"{self.name}.pickle" if directory is not None else None

    def load(self, key: str) -> Any:
        """The value saved under `key`, or None."""
        path = self.path
        data = _read_own_file(path) if path is not None else None
        if data is None:
            return None
        header, _, body = data.partition(b"\n")
        if header != b" ".join((_SNAPSHOT_MAGIC, key.encode("ascii"), hashlib.sha256(body).hexdigest().encode())):
            return None
        import io
        import pickle

        allowed = self._allowed

        class Unpickler(pickle.Unpickler):
            def find_class(self, module: str, name: str) -> Any:
                found = allowed.get((module, name))
                if found is None:
                    raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a snapshot")
                return found

        try:
            return Unpickler(io.BytesIO(body)).load()
        except Exception:  # a damaged or foreign snapshot is no snapshot
            return None

    def save(self, key: str, value: Any) -> bool:
        """Write the value under `key`; False when it could not be written."""
        import pickle

        path = self.path
        if path is None:
            return False
        body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        header = b" ".join((_SNAPSHOT_MAGIC, key.encode("ascii"), hashlib.sha256(body).hexdigest().encode()))
        return _write_own_file(path, header + b"\n" + body)


def _read_own_file(path: Path) -> bytes | None:
    """The bytes of a regular file of this user's that nobody else may write, at most MAX_FILE_BYTES; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_size > MAX_FILE_BYTES
            or (hasattr(os, "getuid") and info.st_uid != os.getuid())
            or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        ):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= MAX_FILE_BYTES else None


def _write_own_file(path: Path, data: bytes) -> bool:
    """Write `data` to `path` at once (a temporary file renamed), in a directory only this user may enter."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError:
        return False
    return True
