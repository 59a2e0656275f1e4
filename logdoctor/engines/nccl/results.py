"""nccl-tests' results table: the column header and the rows under it, read by the header's columns.

    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
         1048576        262144     float     sum      -1    187.3    5.60    5.60      0    186.9    5.61    5.61      0

The columns differ by release (src/util.cu writeResultHeader, writeBenchmarkLinePreamble / Body): before 2.13 each
test printed its own header, with `redop` and `root` only where the test has them and a max-deviation `error`
column; 2.13 and later print both for every test and `#wrong`, the elements the check found wrong; `-C` prints
`cputime` where `time` stands, `-T` appends a `timestamp`, per-iteration timing appends `i_min i_max i_p99 i_cv%` to
each half. A row is the preamble (size, count, type, then redop and root where the header has them) and the
out-of-place and in-place halves, each starting at its time column. A paste may put Markdown pipes between the
cells. A row under no header is read with the columns its own shape implies: the 2.13 layout, with `redop` and
`root` where the row has them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from logdoctor.engines.nccl.common import Values
from logdoctor.events import EngineFailure, EventBase, NcclInfo
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import BlockFn, ParseContext

_TIME_COLUMNS = frozenset({"time", "cputime"})
_HALF = ("time", "algbw", "busbw", "#wrong")  # one half of a row under no header
_PLACES = ("out-of-place", "in-place")
_COLUMNS_KEY = "nccl.results_columns"  # the last header's columns, for rows a log line separated from it
_CELL_SPLIT_RE = re.compile(r"[\s|]+")
_ROW_START_RE = re.compile(r"^[\s|]*\d+[\s|]+\d+[\s|]+[^\s|]")  # size, count, then a cell: worth reading
_NUM_RE = re.compile(r"[\d.]+(?:e[+-]?\d+)?")
_TYPE_RE = re.compile(r"[a-z][a-z0-9_]*")
_REDOP_RE = re.compile(r"[a-z]\w*")
_ROOT_RE = re.compile(r"-?\d+")
_PREAMBLE = {
    "size": re.compile(r"\d+"),
    "count": re.compile(r"\d+"),
    "type": _TYPE_RE,
    "redop": _REDOP_RE,
    "root": _ROOT_RE,
}
# `#wrong` is `%6g` (a large count reads `1.04858e+06`), `N/A` where the run was not checked (`-c 0`)
_WRONG_COUNT_RE = re.compile(r"(?P<count>\d+(?:\.\d+)?(?:e\+\d+)?)\*?")  # a whole cell: fullmatch


@dataclass(frozen=True)
class Columns:
    """Where a row's values stand: the columns before the halves (`size count type redop root`), one half's."""

    preamble: tuple[str, ...]
    half: tuple[str, ...]
    halves: int
    # only a header says a row has a `#wrong` column worth reading (before 2.13 the column was `error`)
    checked: bool


def cells(text: str) -> list[str]:
    """A row's or header's cells: white space and Markdown pipes between them, a header's `#` before them."""
    return [cell for cell in _CELL_SPLIT_RE.split(text.strip().lstrip("#|")) if cell]


# NCCL 1.x's tests (test/single/all_reduce_test.cu) name the same columns `bytes N type op ... res` (`res` the
# largest deviation, as nccl-tests' `error` before 2.13)
_OLD_NAMES = {"bytes": "size", "N": "count", "op": "redop", "res": "error"}


def header_columns(text: str) -> Columns | None:
    """The columns a results table's header names (`#  size  count  type  redop  root  time  algbw  busbw #wrong ...`);
    None for any other line."""
    names = cells(text)
    if names[:1] == ["bytes"]:
        names = [_OLD_NAMES.get(name, name) for name in names]
    if names[:3] != ["size", "count", "type"] or "algbw" not in names or "busbw" not in names:
        return None
    starts = [i for i, name in enumerate(names) if name in _TIME_COLUMNS]
    if not starts or names[starts[0] + 1 : starts[0] + 3] != ["algbw", "busbw"]:
        return None
    end = starts[1] if len(starts) > 1 else len(names)
    half = tuple("time" if name in _TIME_COLUMNS else name for name in names[starts[0] : end])
    return Columns(tuple(names[: starts[0]]), half, min(len(starts), len(_PLACES)), "#wrong" in half)


# the columns a row under no header may have, most first: the first whose cells fit is the row's
_ROW_LAYOUTS = tuple(
    Columns(("size", "count", "type", *optional), _HALF, len(_PLACES), checked=False)
    for optional in (("redop", "root"), ("redop",), ("root",), ())
)


def _preamble_fits(row: list[str], columns: Columns) -> bool:
    """Whether a row's first cells are what the columns name: size and count, a type, a reduction, a root rank."""
    if len(row) <= len(columns.preamble):
        return False
    for name, cell in zip(columns.preamble, row, strict=False):
        pattern = _PREAMBLE.get(name)
        if pattern is not None and not pattern.fullmatch(cell):
            return False
    return True


def _half(row: list[str], start: int, columns: Columns) -> dict[str, str] | None:
    """One half's cells by column name; None where the row does not hold the half's figures."""
    cells_ = row[start : start + len(columns.half)]
    if len(cells_) < len(columns.half):
        return None
    half = dict(zip(columns.half, cells_, strict=True))
    if not all(_NUM_RE.fullmatch(half[name]) for name in ("time", "algbw", "busbw")):
        return None
    return half


@dataclass(frozen=True)
class Row:
    """A row read: its values (`size`, `time_us`, `busbw`, `ip_busbw`) and each half's `#wrong` count above zero."""

    values: Values
    wrong: tuple[str, ...]


def read_row(text: str, columns: Columns | None) -> Row | None:
    """A results row read by `columns` (a header's), or where they do not fit it, by the first layout of a row under
    no header that does; None for any other line."""
    if not _ROW_START_RE.match(text):
        return None
    row = cells(text)
    for layout in (columns, *_ROW_LAYOUTS):
        if layout is None or not _preamble_fits(row, layout):
            continue
        start = len(layout.preamble)
        halves = [_half(row, start + i * len(layout.half), layout) for i in range(layout.halves)]
        out, in_place = halves[0], halves[1] if len(halves) > 1 else None
        if out is None:
            continue
        values: Values = {"size": int(row[0]), "time_us": float(out["time"]), "busbw": float(out["busbw"])}
        if in_place is not None:
            values["ip_busbw"] = float(in_place["busbw"])
        # a row without its out-of-place half (trace replay) does not line up with the header's `#wrong` columns
        whole = all(half is not None for half in halves)
        return Row(values, _wrong(halves) if layout.checked and whole else ())
    return None


def _wrong(halves: list[dict[str, str] | None]) -> tuple[str, ...]:
    wrong = []
    for place, half in zip(_PLACES, halves, strict=False):
        m = _WRONG_COUNT_RE.fullmatch(half["#wrong"]) if half is not None else None
        if m is not None and float(m.group("count")) > 0:
            wrong.append(f"{place} {int(float(m.group('count')))}")
    return tuple(wrong)


def row_events(line: LogLine, ctx: ParseContext, row: Row, *, check: bool) -> list[EventBase]:
    """A row's `test-row` event, and where `check` and a half's `#wrong` is not zero, the wrong values it reports."""
    text = line.message.strip()
    base = ctx.base(line, "nccl")
    events: list[EventBase] = [NcclInfo(**base, kind="test-row", message=text, values=row.values)]
    if check and row.wrong:
        size = cells(text)[0]
        message = f"nccl-tests: wrong values at {size} bytes ({', '.join(row.wrong)} #wrong): {text}"
        events.append(EngineFailure(**base, kind="wrong-results", message=message))
    return events


def open_table(ctx: ParseContext, columns: Columns) -> None:
    """Read the rows under a header by its columns: the block that follows it, and later rows a log line separated
    from it."""
    ctx.state[_COLUMNS_KEY] = columns
    ctx.block = _results_table(columns)


def last_columns(ctx: ParseContext) -> Columns | None:
    """The columns of the last results table's header in this source."""
    columns: Columns | None = ctx.state.get(_COLUMNS_KEY)
    return columns


def _results_table(columns: Columns) -> BlockFn:
    """The rows under a results table's column header, read by the header's columns: a row whose `#wrong` is
    not zero is a collective that returned wrong values. The table ends at the first line that is not a row or
    a line of the header (the summary, a log line, a blank line), which is then parsed as any other."""

    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.message.strip()
        units = "(elements)" in text and text.startswith(("#", "|"))
        separator = text.startswith("|") and not text.strip("|-: ")
        if not text.lstrip("#").strip() or units or separator:
            return []  # the units line under the header, a bare `#`, a Markdown separator row
        row = read_row(text, columns)
        if row is None:
            return [] if _ROW_START_RE.match(text) else None  # a row cut short is still the table's
        return row_events(line, ctx, row, check=True)

    return read
