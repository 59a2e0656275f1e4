"""Reading the YAML files a user gives (rule files, `.logdoctor.yaml`) without trusting them.

    rules/x.yaml:3:7: not UTF-8 (byte 0xff)
    rules/deep.yaml:66:67: nested more than 64 levels deep
    rules/link.yaml:1:1: a symlink to /etc/shadow, outside rules/: not read

A file is read only when it resolves inside its directory (a symlink may point within it, never out of
it), up to a size cap, as strict UTF-8; YAML goes through `yaml.safe_load` only, and whatever PyYAML
raises (bad syntax, an impossible date such as `2027-02-30`, nesting that exhausts the stack) becomes
an error at a line and column of the file, never a traceback.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a file is parsed: a start whose rule files are all cached never imports PyYAML
    import yaml

    from logdoctor.cache import VerifiedCache

MAX_RULE_FILE_BYTES = 256 * 1024
MAX_CONFIG_BYTES = 256 * 1024
MAX_YAML_DEPTH = 64


class UserFileError(ValueError):
    """A problem in a user's file, at a 1-based line and column."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def read_user_file(path: Path, *, directory: Path | None = None, max_bytes: int) -> str:
    """The text of `path`, which must resolve inside `directory` (default: its own directory)."""
    root = (directory if directory is not None else path.parent).resolve()
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # missing, or a symlink loop
        raise UserFileError(f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    inside = str(root).rstrip(os.sep) + os.sep  # both resolved: `root` is one of `real`'s parents
    if real != root and not str(real).startswith(inside):
        raise UserFileError(f"a symlink out of {root}: not read")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise UserFileError(f"cannot read: {exc.strerror or exc}") from exc
    try:  # plain reads, without a buffered file object: the built-in sets are a hundred small files a start
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UserFileError("not a regular file: not read")
        parts: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            part = os.read(fd, left)
            if not part:
                break
            parts.append(part)
            left -= len(part)
        data = b"".join(parts)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise UserFileError(f"larger than {max_bytes // 1024} KiB: not read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UserFileError(f"not UTF-8 (byte 0x{data[exc.start]:02x})", line, column) from None


def _import_yaml() -> None:
    """Import PyYAML with its module-level regexes compiled on first use (logdoctor/regexes.py): libyaml parses the
    rule files and uses a few of its resolver's; compiling the pure-Python reader's test of printable characters
    alone was a third of importing PyYAML (docs/benchmarks.md, *Start-up*)."""
    if "yaml" not in sys.modules:
        from logdoctor.regexes import lazy_regexes

        with lazy_regexes(["yaml"]):
            import yaml  # noqa: F401


def load_yaml(text: str, *, compose: bool = False) -> tuple[Any, yaml.Node | None]:
    """`yaml.safe_load(text)` (and its node tree when `compose`), every failure a UserFileError."""
    _import_yaml()
    import yaml

    _check_flow_depth(text)
    fast = _load_with_libyaml(text, compose)
    if fast is not None:
        return fast
    try:
        data = yaml.safe_load(text)
        tree = yaml.compose(text, Loader=yaml.SafeLoader) if compose else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        raise UserFileError(f"invalid YAML: {getattr(exc, 'problem', None) or exc}", line, col) from None
    except RecursionError:
        line, col = _too_deep(text)
        raise UserFileError(f"nested more than {MAX_YAML_DEPTH} levels deep", line, col) from None
    except (ValueError, TypeError, OverflowError) as exc:  # a timestamp such as 2027-02-30, a huge number
        line, col = _value_error_mark(text, str(exc))
        raise UserFileError(f"invalid value: {exc}", line, col) from None
    return data, tree


def _load_with_libyaml(text: str, compose: bool) -> tuple[Any, yaml.Node | None] | None:
    """What `load_yaml` returns, parsed once by libyaml (PyYAML's C parser) with the same safe constructor,
    or None when libyaml is missing or the text fails in any way: then the pure-Python loader parses it
    again, and its messages and positions are the ones the user sees. The pure-Python scanner is what
    made loading the built-in rules (and parsing each file twice, for the data and the node tree) the
    largest part of a small `diagnose`'s start-up (docs/benchmarks.md, *Start-up*)."""
    import yaml

    loader_class = getattr(yaml, "CSafeLoader", None)
    if loader_class is None:
        return None
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        data = _construct(loader, node) if node is not None else None
    except Exception:  # every failure is reported by the pure-Python loader below
        return None
    finally:
        loader.dispose()
    return data, node if compose else None


class _Unsure(Exception):
    """`_construct` leaves the document to PyYAML's constructor."""


_STR_TAG, _SEQ_TAG, _MAP_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


def _construct(loader: Any, root: yaml.Node) -> Any:
    """`loader.construct_document(root)`, with the mappings, lists and strings a rule file is made of built
    directly: PyYAML's constructor builds each through generators and per-node bookkeeping, which cost as much as
    libyaml's parse (docs/benchmarks.md, *Start-up*). Any other scalar (a number, a boolean, a date) is made by
    PyYAML's constructor itself; a list or mapping met twice (an alias: PyYAML makes it one shared object), a
    merge key or a key that is not a scalar leaves the whole document to PyYAML, and whatever PyYAML raises is
    raised."""
    import yaml

    scalar = yaml.ScalarNode
    seen: set[int] = set()  # the lists and mappings made (an alias of a scalar gives an equal, immutable value)

    def build(node: yaml.Node) -> Any:
        tag = node.tag
        if type(node) is scalar:
            return node.value if tag == _STR_TAG else loader.construct_object(node)
        if id(node) in seen:
            raise _Unsure
        seen.add(id(node))
        if tag == _SEQ_TAG and isinstance(node, yaml.SequenceNode):
            return [item.value if type(item) is scalar and item.tag == _STR_TAG else build(item) for item in node.value]
        if tag == _MAP_TAG and isinstance(node, yaml.MappingNode):
            data: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                if type(key_node) is not scalar or key_node.tag in (_MERGE_TAG, _VALUE_TAG):
                    raise _Unsure
                key = key_node.value if key_node.tag == _STR_TAG else loader.construct_object(key_node)
                if type(value_node) is scalar and value_node.tag == _STR_TAG:
                    data[key] = value_node.value
                else:
                    data[key] = build(value_node)
            return data
        raise _Unsure

    try:
        return build(root)
    except _Unsure:
        # as construct_document leaves the loader: nothing made yet
        loader.constructed_objects, loader.recursive_objects, loader.state_generators = {}, {}, []
        return loader.construct_document(root)


_MERGE_TAG, _VALUE_TAG = "tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"


def _check_flow_depth(text: str) -> None:
    """Refuse `[[[[...` / `{{{{...` nested past MAX_YAML_DEPTH before PyYAML sees it: its scanner takes time
    quadratic in the flow depth (10,000 levels: minutes). Quoted text and comments don't count, and a line
    starting at column 1 with a key starts afresh (a flow collection cannot continue past it)."""
    if text.count("[") + text.count("{") <= MAX_YAML_DEPTH:
        return
    depth = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line[:1].isalpha():
            depth = 0
        quote = ""
        for column, char in enumerate(line, start=1):
            if quote:
                if char == quote:
                    quote = ""
            elif char in "'\"":
                quote = char
            elif char == "#" and (column == 1 or line[column - 2].isspace()):
                break
            elif char in "[{":
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise UserFileError(f"nested more than {MAX_YAML_DEPTH} levels deep", number, column)
            elif char in "]}":
                depth = max(depth - 1, 0)


def _too_deep(text: str) -> tuple[int, int]:
    """Where the nesting first goes deeper than MAX_YAML_DEPTH (PyYAML's event stream is not recursive)."""
    import yaml

    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                depth += 1
                if depth > MAX_YAML_DEPTH and event.start_mark is not None:
                    return event.start_mark.line + 1, event.start_mark.column + 1
            elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                depth -= 1
    except (yaml.YAMLError, RecursionError):
        pass
    return 1, 1


def _value_error_mark(text: str, message: str) -> tuple[int, int]:
    """The first scalar that PyYAML's constructors reject (constructor errors carry no position)."""
    import yaml

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.ScalarEvent) and event.implicit[0] and event.value:
                try:
                    yaml.safe_load(event.value)
                except (ValueError, TypeError, OverflowError):
                    mark = event.start_mark
                    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
                except yaml.YAMLError:
                    continue
    except (yaml.YAMLError, RecursionError):
        pass
    return 1, 1


def _plain(value: Any) -> bool:
    """Data that JSON gives back as it was: mappings with string keys, lists, strings, finite numbers, booleans,
    None (not the dates, sets, binary or non-string keys YAML can also make), nested at most MAX_YAML_DEPTH."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_YAML_DEPTH:
                return False
            if isinstance(item, dict):
                if not all(isinstance(k, str) for k in item):
                    return False
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif not (item is None or isinstance(item, str | int)):
            return False
    return True


class YamlDataCache:
    """What `load_yaml(text, compose=True)` gave for a file that then loaded without a problem, kept in the
    start-up cache (logdoctor/cache.py) under the file's name and the SHA-256 of its text, so an unchanged
    file is not parsed again and PyYAML is not imported (docs/cli.md, *Start-up cache*).

    A cached file comes back without its node tree (the tree only places problems at a line and column): the
    caller that finds a problem in such a file `forget`s it and loads it again, parsed, for the positions.
    Only plain data (`_plain`) is kept, as JSON text, so the mapping's order comes back as written."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._cache: VerifiedCache | None = None
        self._fresh: dict[str, tuple[str, str]] = {}  # file name -> (entry key, JSON), parsed in this process
        self._hits: set[str] = set()
        self._forgotten: set[str] = set()

    def _store(self) -> VerifiedCache:
        if self._cache is None:
            import importlib.util

            from logdoctor import __version__
            from logdoctor.cache import VerifiedCache, code_key

            spec = importlib.util.find_spec("yaml")  # the PyYAML that parsed the entries (its files' size and time)
            where = ""
            origins = [spec.origin, *(spec.submodule_search_locations or [])] if spec is not None else []
            for origin in origins:
                if origin:
                    try:
                        info = os.stat(origin)
                        where += f"{origin} {info.st_size} {info.st_mtime_ns};"
                    except OSError:
                        where += f"{origin};"
            self._cache = VerifiedCache(self.name, code_key(self.name, __version__, Path(__file__).read_bytes(), where))
        return self._cache

    @staticmethod
    def _key(name: str, text: str) -> str:
        return f"{name}\0{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"

    def load(self, name: str, text: str) -> tuple[Any, yaml.Node | None]:
        """`load_yaml(text, compose=True)`, or (the data, None) when this file's text loaded cleanly before."""
        from logdoctor.cache import cache_dir

        if cache_dir() is None:  # the start-up cache is off: nothing to look up or keep
            return load_yaml(text, compose=True)
        key = self._key(name, text)
        if name not in self._forgotten:
            cached = self._store().get(key)
            if isinstance(cached, str):
                self._hits.add(name)
                return json.loads(cached), None
        data, tree = load_yaml(text, compose=True)
        if _plain(data):
            self._fresh[name] = (key, json.dumps(data, ensure_ascii=False))  # before the caller changes `data`
        return data, tree

    def forget(self, name: str) -> bool:
        """Whether `name` came from the cache; if so, the next `load` parses it."""
        if name in self._hits:
            self._hits.discard(name)
            self._forgotten.add(name)
            return True
        return False

    def keep(self, name: str) -> None:
        """`name` loaded without a problem: keep what it parsed to."""
        fresh = self._fresh.pop(name, None)
        if fresh is not None:
            self._store().put(*fresh)

    def save(self) -> None:
        if self._cache is not None:
            self._cache.save()
