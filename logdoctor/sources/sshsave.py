"""`--save DIR`: what was collected from each host, written as a bundle `diagnose DIR` reads again."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import stat
import threading
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from logdoctor import __version__
from logdoctor.errors import CollectionError, InputError
from logdoctor.sources.collection import _SAFE_NAME_RE, HostCollection, RemoteSource
from logdoctor.sources.discovery import surrogate_safe
from logdoctor.sources.local import NUMBERED_HEADER

# --- --save -------------------------------------------------------------------------------------------

_save_lock = threading.Lock()


def host_dir_name(host: str) -> str:
    return _SAFE_NAME_RE.sub("_", host).strip("._-") or "host"


def _iso(ts: float) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


def manifest(collection: HostCollection) -> dict[str, Any]:
    """The `manifest.json` of a saved collection (also usable as the JSON report's per-host block)."""
    return {
        "logdoctor": __version__,
        "format": 2,
        "host": collection.host,
        "address": collection.address,
        "started": _iso(collection.started),
        "finished": _iso(collection.finished),
        "complete": collection.complete,
        "incomplete": collection.incomplete,
        "error": collection.error,
        "error_kind": collection.error_kind,
        "keywords": collection.keywords,
        "found": collection.found,
        "searched": collection.searched,
        "notes": collection.notes,
        "bytes_transferred": collection.bytes_transferred,
        "sources": [
            {
                "file": s.name,
                "kind": s.kind,
                "host": s.host,
                "path": s.path,
                "origin": s.origin,
                "description": s.description,
                "bytes_read": s.bytes_read,
                "bytes_transferred": s.bytes_transferred,
                "lines": len(s.lines),
                "filtered": s.filtered,
                "gzipped": s.gzipped,
                "skipped_lines": s.skipped_lines,
                "skipped_bytes": s.skipped_bytes,
                "truncated": s.truncated,
                "complete": not s.truncated,
                "partial": s.partial or None,
                "lines_expected": len(s.lines) if not s.truncated else s.lines_expected,
                "command": s.command,
            }
            for s in collection.sources
        ],
        "commands": [
            {
                "command": r.command,
                "purpose": r.purpose,
                "started": _iso(r.started),
                "seconds": round(r.seconds, 3),
                "exit_status": r.exit_status,
                "stdout_bytes": r.stdout_bytes,
                "stderr_bytes": r.stderr_bytes,
                "timed_out": r.timed_out,
                "capped": r.capped,
            }
            for r in collection.command_log
        ],
    }


def _scrub(value: Any) -> Any:
    """JSON-ready copy where every str encodes as UTF-8 (a non-UTF-8 remote or --log name shows U+FFFD)."""
    if isinstance(value, str):
        return surrogate_safe(value)
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def prepare_save_dir(directory: str | os.PathLike[str]) -> Path:
    """`--save DIR`, checked before any host is contacted: DIR is created (0700), or it must be an
    empty directory that is not a symbolic link; anything else is a one-line error (exit 2)."""
    path = Path(directory)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            os.makedirs(path, mode=0o700)
        except OSError as exc:
            raise InputError(f"--save {directory}: cannot create it ({exc.strerror or exc})") from exc
        return path
    except OSError as exc:
        raise InputError(f"--save {directory}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"--save {directory}: is a symbolic link; give a new or an empty directory")
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"--save {directory}: exists and is not a directory; give a new or an empty directory")
    try:
        entries = os.listdir(path)
    except OSError as exc:
        raise InputError(f"--save {directory}: cannot list it ({exc.strerror or exc})") from exc
    if entries:
        raise InputError(
            f"--save {directory}: is not empty ({len(entries)} entries); give a new or an empty directory "
            "(a bundle is never written over)"
        )
    return path


class _SafeDir:
    """Files written into one directory that logdoctor created: each to a temporary name opened with
    O_CREAT|O_EXCL|O_NOFOLLOW (a planted symlink is never followed), then renamed into place."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def write(self, name: str, chunks: Iterable[bytes]) -> None:
        tmp = f".{name}.tmp-{secrets.token_hex(8)}"  # unguessable: a planted name cannot be in the way
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
            os.rename(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)  # replaces a link, never follows it
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise

    def close(self) -> None:
        os.close(self.fd)


def _manifest_bytes(data: dict[str, Any]) -> list[bytes]:
    return [(json.dumps(_scrub(data), indent=2, ensure_ascii=False) + "\n").encode("utf-8")]


def _source_lines(source: RemoteSource) -> Iterator[bytes]:
    yield NUMBERED_HEADER + b"\n"
    batch: list[str] = []
    for number, text in source.lines:
        batch.append(f"{number}:{text}\n")
        if len(batch) >= 4096:
            yield "".join(batch).encode("utf-8", "surrogateescape")
            batch.clear()
    yield "".join(batch).encode("utf-8", "surrogateescape")


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM/SIGHUP during a save raise KeyboardInterrupt (main thread only), so the temporary file
    is removed and the bundle stays marked partial instead of the process dying mid-file."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def save_collection(collection: HostCollection, directory: str | os.PathLike[str]) -> Path:
    """Write `DIR/<host>/manifest.json` and `DIR/<host>/<source>.log` (numbered lines); return the host dir.

    `logdoctor diagnose DIR/<host>/*.log` then reads the same lines with the same line numbers. The host
    directory is always new (`<host>-2` when the name is taken); the manifest is written first with
    `"complete": false`, then the logs, then the manifest again with the collection's own `complete`,
    so a save cut anywhere (Ctrl-C, SIGTERM, a full disk) leaves a bundle an offline run calls partial.
    """
    base = Path(directory)
    name = host_dir_name(collection.host)
    with _save_lock, _sigterm_interrupts():
        try:
            base.mkdir(parents=True, exist_ok=True, mode=0o700)
            host_dir = base / name
            for n in range(2, 1000):
                try:
                    os.mkdir(host_dir, 0o700)
                    break
                except FileExistsError:
                    host_dir = base / f"{name}-{n}"
            else:
                raise CollectionError(f"--save {directory}: no free name for {name}")
            out = _SafeDir(host_dir)
            try:
                data = manifest(collection)
                final = dict(data)
                data["complete"] = False
                data["incomplete"] = ["the save did not finish", *collection.incomplete]
                out.write("manifest.json", _manifest_bytes(data))
                for source in collection.sources:
                    out.write(source.name, _source_lines(source))
                out.write("manifest.json", _manifest_bytes(final))
            finally:
                out.close()
        except OSError as exc:
            raise CollectionError(f"--save {directory}: cannot write {base / name}: {exc.strerror or exc}") from exc
    return host_dir
