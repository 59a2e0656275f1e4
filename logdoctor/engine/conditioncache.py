"""The parse cache of rule conditions (logdoctor/cache.py): parsed trees as JSON, keyed by kind and text.

"condition\0not cuda_graphs.enabled"  ->  ["not", ["truth", ["fact", "cuda_graphs.enabled", 5]]]
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logdoctor import __version__
from logdoctor.cache import VerifiedCache, cache_dir, code_key
from logdoctor.engine.aggregations import AGGREGATIONS
from logdoctor.engine.conditiontree import (
    _ARITH,
    _COMPARE,
    Aggregate,
    Arith,
    BoolOp,
    Compare,
    Exists,
    FactRef,
    ListNode,
    Literal,
    Negate,
    Node,
    Not,
    Share,
    Truth,
)

# --- the parse cache (logdoctor/cache.py): parsed trees as JSON, keyed by kind and text ------------------------
#
# A tree is a list: [tag, fields...]; `decode` accepts exactly what `encode` writes and raises ValueError on
# anything else, so a damaged entry is parsed again rather than trusted.

_BOOL_OPS = ("and", "or")
_COMPARE_OPS = (*_COMPARE, "in", "not in")
_MAX_DECODE_DEPTH = 4 * 64  # far deeper than MAX_NESTING allows a parsed text to be


def encode(node: Node) -> list[Any]:
    """A parsed condition or expression as JSON data (the inverse of `decode`)."""
    if isinstance(node, Literal):
        return ["lit", node.value]
    if isinstance(node, FactRef):
        return ["fact", node.name, node.column]
    if isinstance(node, ListNode):
        return ["list", [encode(i) for i in node.items]]
    if isinstance(node, Aggregate):
        return ["agg", node.func, encode(node.ref)]
    if isinstance(node, Share):
        return ["share", encode(node.ref), node.op, encode(node.threshold)]
    if isinstance(node, Exists):
        return ["exists", encode(node.ref)]
    if isinstance(node, Arith | Compare):
        return ["arith" if isinstance(node, Arith) else "cmp", node.op, encode(node.left), encode(node.right)]
    if isinstance(node, Negate | Truth | Not):
        return [{Negate: "neg", Truth: "truth", Not: "not"}[type(node)], encode(node.operand)]
    if isinstance(node, BoolOp):
        return ["bool", node.op, [encode(o) for o in node.operands]]
    raise TypeError(f"cannot encode {type(node).__name__}")


def decode(data: Any, depth: int = 0) -> Node:
    """A tree written by `encode`; ValueError for anything that is not exactly such a tree."""
    if depth > _MAX_DECODE_DEPTH or not isinstance(data, list) or not data or not isinstance(data[0], str):
        raise ValueError("not an encoded condition")
    tag, args = data[0], data[1:]

    def node(value: Any) -> Node:
        return decode(value, depth + 1)

    def text(value: Any, allowed: Sequence[str] | None = None) -> str:
        if not isinstance(value, str) or (allowed is not None and value not in allowed):
            raise ValueError("not an encoded condition")
        return value

    def nodes(value: Any) -> list[Node]:
        if not isinstance(value, list):
            raise ValueError("not an encoded condition")
        return [node(v) for v in value]

    def ref(value: Any) -> FactRef:
        result = node(value)
        if not isinstance(result, FactRef):
            raise ValueError("not an encoded condition")
        return result

    shape = (tag, len(args))
    if shape == ("lit", 1) and type(args[0]) in (float, str, bool):
        return Literal(args[0])
    if shape == ("fact", 2) and type(args[1]) is int and args[1] >= 1:
        return FactRef(text(args[0]), column=args[1])
    if shape == ("list", 1):
        return ListNode(nodes(args[0]))
    if shape == ("agg", 2):
        return Aggregate(text(args[0], tuple(AGGREGATIONS)), ref(args[1]))
    if shape == ("share", 3):
        return Share(ref(args[0]), text(args[1], tuple(_COMPARE)), node(args[2]))
    if shape == ("exists", 1):
        return Exists(ref(args[0]))
    if shape == ("arith", 3):
        return Arith(text(args[0], tuple(_ARITH)), node(args[1]), node(args[2]))
    if shape == ("cmp", 3):
        return Compare(text(args[0], _COMPARE_OPS), node(args[1]), node(args[2]))
    if shape == ("neg", 1):
        return Negate(node(args[0]))
    if shape == ("truth", 1):
        return Truth(node(args[0]))
    if shape == ("not", 1):
        return Not(node(args[0]))
    if shape == ("bool", 2):
        return BoolOp(text(args[0], _BOOL_OPS), nodes(args[1]))
    raise ValueError("not an encoded condition")


def _cache_key() -> str:
    """What a parsed tree depends on: logdoctor's version, the sources of the trees, the grammar and this module, and
    the pyparsing installed."""
    here = Path(__file__)
    source = b""
    for module in (here.with_name("conditiontree.py"), here.with_name("conditiongrammar.py"), here):
        try:
            source += module.read_bytes()
        except OSError:
            source += b"(source not readable)"
    spec = importlib.util.find_spec("pyparsing")
    where = ""
    if spec is not None and spec.origin is not None:
        try:
            info = os.stat(spec.origin)
            where = f"{spec.origin} {info.st_size} {info.st_mtime_ns}"
        except OSError:
            where = spec.origin
    return code_key("conditions", __version__, source, where)


_caches: list[VerifiedCache] = []


def parse_cache() -> VerifiedCache | None:
    """The process's cache of parsed conditions (its file is read on first look-up); None when the start-up cache is
    off (`LOGDOCTOR_NO_CACHE`), so nothing is encoded for it."""
    if cache_dir() is None:
        return None
    if not _caches:
        _caches.append(VerifiedCache("conditions", _cache_key()))
    return _caches[0]


def save_parse_cache() -> None:
    """Write the parsed conditions met in this process, if any were new (the rule loader calls it)."""
    if _caches:
        _caches[0].save()
