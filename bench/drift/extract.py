"""Every logger call of an engine wheel, found with an AST walk over the wheel's `.py` files (no install).

    logger.warning("Custom allreduce is disabled because ... %s", reason)   # vllm/distributed/.../custom_all_reduce.py
    -> Message(module=..., line=..., level="WARNING",
               parts=["Custom allreduce is disabled because ... ", Placeholder(expr="reason", spec="%s")])

What counts as a logger call: `<name>.<level>(...)` where `<name>` is `logger`/`log`/`_logger` or a name
bound to `init_logger(...)` / `logging.getLogger(...)`; `print_warning_once` / `print_info_once`;
SGLang's `log_info_on_rank0(logger, msg)`; a call through a `log_fn`-style parameter or a local bound to
`logger.<level>`. The message may be a literal, `%` args, `.format`, an f-string, implicit or `+`
concatenation, or a variable assigned (and `+=`-extended) earlier in the same function.
"""

from __future__ import annotations

import ast
import json
import re
import string
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXTRACTOR_VERSION = 1  # bump when the extraction changes, so cached results are rebuilt
LEVELS: dict[str, str] = {
    "debug": "DEBUG",
    "info": "INFO",
    "info_once": "INFO",
    "debug_once": "DEBUG",
    "warning": "WARNING",
    "warn": "WARNING",
    "warning_once": "WARNING",
    "error": "ERROR",
    "exception": "ERROR",
    "critical": "CRITICAL",
    "fatal": "CRITICAL",
}
DEFAULT_LOGGER_NAMES = frozenset({"logger", "log", "_logger", "LOGGER", "_LOGGER", "_log"})
HELPERS: dict[str, tuple[str, int]] = {  # function name -> (level, index of the message argument)
    "print_warning_once": ("WARNING", 0),
    "print_info_once": ("INFO", 0),
    "log_info_on_rank0": ("INFO", 1),
    "log_warning_on_rank0": ("WARNING", 1),
}
LOG_FN_PARAMS = frozenset({"log_fn", "log_func", "logger_fn", "log_method", "print_fn"})
_ORDER = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
_PERCENT = re.compile(
    r"%(?:\((?P<key>\w+)\))?(?P<spec>[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%]))"
)


@dataclass(frozen=True)
class Placeholder:
    """A value inserted into a message: the expression that supplies it and how it is formatted."""

    expr: str
    spec: str = "%s"  # `%d`, `%.2f`, or a str.format spec written `{:.2f}` / `{!r}` / `{}`


Part = str | Placeholder


@dataclass
class Message:
    module: str  # path inside the wheel: vllm/v1/spec_decode/metrics.py
    line: int
    level: str
    parts: list[Part] = field(default_factory=list)

    @property
    def literal(self) -> str:
        """The literal text only (placeholders dropped): what relevance keys are matched against."""
        return "".join(p for p in self.parts if isinstance(p, str))

    @property
    def template(self) -> str:
        """Printable form: literals as they are, placeholders as `{expr|spec}`."""
        out: list[str] = []
        for p in self.parts:
            out.append(p if isinstance(p, str) else "{" + p.expr + "|" + p.spec + "}")
        return "".join(out)

    @property
    def placeholders(self) -> list[Placeholder]:
        return [p for p in self.parts if isinstance(p, Placeholder)]


@dataclass
class Extraction:
    engine: str
    version: str
    messages: list[Message]
    files: int
    unparsable: list[str]


def _merge(parts: list[Part]) -> list[Part]:
    out: list[Part] = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] = out[-1] + p
        elif p != "":
            out.append(p)
    return out


class _FunctionScope:
    """String assignments seen so far in one function body, for messages held in a variable."""

    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.assigned: dict[str, ast.expr] = {}
        self.appended: dict[str, list[ast.expr]] = {}
        self.level_aliases: dict[str, str] = {}
        self.lists: dict[str, list[ast.expr]] = {}  # `parts = ["a: %d", ...]` then `parts.append("b: %d")`


class _Visitor(ast.NodeVisitor):
    def __init__(self, module: str, source: str) -> None:
        self.module = module
        self.source = source
        self.messages: list[Message] = []
        self.logger_names: set[str] = set(DEFAULT_LOGGER_NAMES)
        self.scopes: list[_FunctionScope] = [_FunctionScope(set())]
        self._lines = source.splitlines(keepends=True)

    # -- expressions to parts -----------------------------------------------------------------
    def _src(self, node: ast.AST) -> str:
        # ast.get_source_segment splits the whole file on every call; slice the lines split once.
        start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if start is None or end is None or col is None or end_col is None:
            return ast.unparse(node)
        if start == end:
            text = self._lines[start - 1].encode()[col:end_col].decode(errors="replace")
        else:
            first = self._lines[start - 1].encode()[col:].decode(errors="replace")
            last = self._lines[end - 1].encode()[:end_col].decode(errors="replace")
            text = first + "".join(self._lines[start : end - 1]) + last
        return " ".join(text.split())

    def _parts(self, node: ast.expr, depth: int = 0) -> list[Part]:
        if depth > 8:
            return [Placeholder(self._src(node))]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.JoinedStr):
            out: list[Part] = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out.append(value.value)
                elif isinstance(value, ast.FormattedValue):
                    spec = ""
                    if value.format_spec is not None and isinstance(value.format_spec, ast.JoinedStr):
                        spec = "".join(
                            str(v.value) if isinstance(v, ast.Constant) else "?" for v in value.format_spec.values
                        )
                    conv = "" if value.conversion == -1 else "!" + chr(value.conversion)
                    out.append(Placeholder(self._src(value.value), "{" + conv + (":" + spec if spec else "") + "}"))
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._parts(node.left, depth + 1) + self._parts(node.right, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self._parts(node.left, depth + 1)
            if len(left) == 1 and isinstance(left[0], str):
                args = node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]
                return self._percent(left[0], args)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
        ):
            return self._brace(node.func.value.value, node.args, node.keywords)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant)
            and isinstance(node.func.value.value, str)
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in self.scopes[-1].lists
        ):
            sep = node.func.value.value
            out = []
            for i, item in enumerate(self.scopes[-1].lists[node.args[0].id]):
                if i:
                    out.append(sep)
                out += self._parts(item, depth + 1)
            return out
        if isinstance(node, ast.IfExp):
            return self._parts(node.body, depth + 1)
        if isinstance(node, ast.Name):
            scope = self.scopes[-1]
            if node.id in scope.assigned:
                out = self._parts(scope.assigned[node.id], depth + 1)
                for extra in scope.appended.get(node.id, []):
                    out += self._parts(extra, depth + 1)
                return out
        return [Placeholder(self._src(node))]

    def _percent(self, fmt: str, args: list[ast.expr], first_index: int = 0) -> list[Part]:
        out: list[Part] = []
        pos = 0
        index = first_index
        for m in _PERCENT.finditer(fmt):
            out.append(fmt[pos : m.start()])
            pos = m.end()
            if m.group("conv") == "%":
                out.append("%")
                continue
            expr = args[index - first_index] if index - first_index < len(args) else None
            index += 1
            name = m.group("key") or (self._src(expr) if expr is not None else f"arg{index - 1}")
            out.append(Placeholder(name, "%" + m.group("spec")))
        out.append(fmt[pos:])
        return out

    def _brace(self, fmt: str, args: list[ast.expr], keywords: list[ast.keyword]) -> list[Part]:
        out: list[Part] = []
        auto = 0
        kw = {k.arg: k.value for k in keywords if k.arg is not None}
        try:
            pieces = list(string.Formatter().parse(fmt))
        except ValueError:
            return [fmt]
        for literal, name, spec, conv in pieces:
            out.append(literal)
            if name is None:
                continue
            expr: ast.expr | None
            if name == "":
                expr = args[auto] if auto < len(args) else None
                auto += 1
            elif name.isdigit():
                expr = args[int(name)] if int(name) < len(args) else None
            else:
                expr = kw.get(name)
            label = self._src(expr) if expr is not None else name
            fspec = "{" + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}"
            out.append(Placeholder(label, fspec))
        return out

    # -- calls --------------------------------------------------------------------------------
    def _record(self, node: ast.Call, level: str, msg_index: int) -> None:
        if len(node.args) <= msg_index:
            msg_kw = next((k.value for k in node.keywords if k.arg in ("msg", "message")), None)
            if msg_kw is None:
                return
            first: ast.expr = msg_kw
            rest: list[ast.expr] = []
        else:
            first = node.args[msg_index]
            rest = list(node.args[msg_index + 1 :])
        parts = self._parts(first)
        if rest:
            # `logger.info("... %s", x)`: the % placeholders of the literal pieces take the extra args in order;
            # after a `*args` they are named arg0, arg1, ... by position.
            starred = next((i for i, a in enumerate(rest) if isinstance(a, ast.Starred)), len(rest))
            args = rest[:starred]
            bound: list[Part] = []
            used = 0
            for p in parts:
                if isinstance(p, str) and "%" in p:
                    sub = self._percent(p, args[used:], used)
                    used += sum(1 for s in sub if isinstance(s, Placeholder))
                    bound.extend(sub)
                else:
                    bound.append(p)
            parts = bound
        elif not rest:
            parts = [p.replace("%%", "%") if isinstance(p, str) else p for p in parts]
        self.messages.append(Message(self.module, node.lineno, level, _merge(parts)))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in LEVELS:
            owner = func.value
            if (isinstance(owner, ast.Name) and owner.id in self.logger_names) or (
                isinstance(owner, ast.Attribute) and owner.attr in self.logger_names
            ):
                self._record(node, LEVELS[func.attr], 0)
        elif isinstance(func, ast.Attribute) and func.attr == "log" and isinstance(func.value, ast.Name):
            if func.value.id in self.logger_names and node.args:
                level = self._src(node.args[0]).rsplit(".", 1)[-1].upper()
                node2 = ast.Call(func=func, args=node.args[1:], keywords=node.keywords)
                ast.copy_location(node2, node)
                self._record(node2, level if level in LEVELS.values() else "INFO", 0)
        elif isinstance(func, ast.Name):
            scope = self.scopes[-1]
            if func.id in HELPERS:
                level, index = HELPERS[func.id]
                self._record(node, level, index)
            elif func.id in scope.level_aliases:
                self._record(node, scope.level_aliases[func.id], 0)
            elif func.id in LOG_FN_PARAMS and func.id in scope.params:
                self._record(node, "INFO", 0)
        self.generic_visit(node)

    # -- bindings -----------------------------------------------------------------------------
    def _is_logger_factory(self, value: ast.expr) -> bool:
        if not isinstance(value, ast.Call):
            return False
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in ("init_logger", "getLogger", "get_logger")

    def visit_Assign(self, node: ast.Assign) -> None:
        self._bind(node.targets, node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._bind([node.target], node.value)
        self.generic_visit(node)

    def _bind(self, targets: list[ast.expr], value: ast.expr) -> None:
        scope = self.scopes[-1]
        for target in targets:
            name = (
                target.id
                if isinstance(target, ast.Name)
                else target.attr
                if isinstance(target, ast.Attribute)
                else None
            )
            if name is None:
                continue
            if self._is_logger_factory(value):
                self.logger_names.add(name)
            elif isinstance(target, ast.Name):
                levels = [
                    self._level_of(v) for v in ([value.body, value.orelse] if isinstance(value, ast.IfExp) else [value])
                ]
                if all(levels):
                    # `log_fn = logger.debug if idle else logger.info`: the line a busy server prints.
                    scope.level_aliases[name] = max((lv for lv in levels if lv), key=_ORDER.index)
                elif isinstance(value, ast.List):
                    scope.lists[name] = list(value.elts)
                else:
                    scope.assigned[name] = value
                    scope.appended.pop(name, None)

    def _level_of(self, node: ast.expr) -> str | None:
        if (
            isinstance(node, ast.Attribute)
            and node.attr in LEVELS
            and isinstance(node.value, ast.Name)
            and node.value.id in self.logger_names
        ):
            return LEVELS[node.attr]
        return None

    def visit_Expr(self, node: ast.Expr) -> None:
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id in self.scopes[-1].lists
            and len(call.args) == 1
        ):
            self.scopes[-1].lists[call.func.value.id].append(call.args[0])
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            scope = self.scopes[-1]
            if node.target.id in scope.assigned:
                scope.appended.setdefault(node.target.id, []).append(node.value)
        self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        a = node.args
        params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
        self.scopes.append(_FunctionScope(params))
        self.generic_visit(node)
        self.scopes.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function


def extract_source(module: str, source: str) -> list[Message]:
    """The logger calls of one module's source text (raises SyntaxError when it does not parse)."""
    tree = ast.parse(source)
    visitor = _Visitor(module, source)
    visitor.visit(tree)
    return visitor.messages


def iter_modules(wheel: Path, package: str) -> Iterator[tuple[str, str]]:
    with zipfile.ZipFile(wheel) as zf:
        for name in sorted(zf.namelist()):
            if name.startswith(package + "/") and name.endswith(".py"):
                yield name, zf.read(name).decode("utf-8", errors="replace")


def extract_wheel(wheel: Path, engine: str, version: str) -> Extraction:
    package = "vllm" if engine == "vllm" else "sglang"
    messages: list[Message] = []
    files = 0
    unparsable: list[str] = []
    for module, source in iter_modules(wheel, package):
        files += 1
        try:
            messages.extend(extract_source(module, source))
        except SyntaxError:
            unparsable.append(module)
    messages.sort(key=lambda m: (m.module, m.line))
    return Extraction(engine, version, messages, files, unparsable)


def _to_json(ex: Extraction) -> dict[str, Any]:
    return {
        "engine": ex.engine,
        "version": ex.version,
        "files": ex.files,
        "unparsable": ex.unparsable,
        "messages": [
            [m.module, m.line, m.level, [p if isinstance(p, str) else [p.expr, p.spec] for p in m.parts]]
            for m in ex.messages
        ],
    }


def _from_json(data: dict[str, Any]) -> Extraction:
    messages = [
        Message(module, line, level, [p if isinstance(p, str) else Placeholder(p[0], p[1]) for p in parts])
        for module, line, level, parts in data["messages"]
    ]
    return Extraction(data["engine"], data["version"], messages, data["files"], data["unparsable"])


def extract_cached(wheel: Path, engine: str, version: str) -> Extraction:
    """`extract_wheel`, remembered beside the wheel (`<wheel>.calls-v<N>.json`) so a re-run skips the AST walk."""
    cache = wheel.with_name(f"{wheel.name}.calls-v{EXTRACTOR_VERSION}.json")
    if cache.exists():
        try:
            return _from_json(json.loads(cache.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError):
            pass  # a damaged cache is rebuilt
    ex = extract_wheel(wheel, engine, version)
    cache.write_text(json.dumps(_to_json(ex)), encoding="utf-8")
    return ex
