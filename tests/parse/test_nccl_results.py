"""nccl-tests' results table (logdoctor/engines/nccl/results.py): each release's column header, and its rows read by
the header's columns."""

from __future__ import annotations

from logdoctor.engines.nccl import results
from logdoctor.events import EngineFailure, EventBase, NcclInfo
from logdoctor.parse.pipeline import parse_text

# 2.13 and later (realworld8/nccl-b202.log, real): `redop` and `root` for every test, `#wrong`
HEADER = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
UNITS = "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)"
ROW = "  2147483648     536870912     float     sum      -1    13989  153.51  230.27      0    13997  153.42  230.13      0"
# before 2.13, all_gather (ROCm/rccl pull 930, real): a header of its own, no `redop` nor `root`, an `error` column
OLD_ALL_GATHER_HEADER = (
    "#       size         count      type     time   algbw   busbw  error     time   algbw   busbw  error"
)
OLD_ALL_GATHER_ROW = (
    "        8192           128     float    34.81    0.24    0.22  0e+00    34.78    0.24    0.22  0e+00"
)


def rows(events: list[EventBase]) -> list[dict[str, object]]:
    return [dict(e.values) for e in events if isinstance(e, NcclInfo) and e.kind == "test-row"]


def failures(events: list[EventBase]) -> list[EngineFailure]:
    return [e for e in events if isinstance(e, EngineFailure) and e.kind == "wrong-results"]


def test_the_current_header_and_a_row_with_whole_microseconds() -> None:
    events = parse_text("\n".join([HEADER, UNITS, ROW]))
    assert rows(events) == [{"size": 2147483648, "time_us": 13989.0, "busbw": 230.27, "ip_busbw": 230.13}]
    assert failures(events) == []


def test_an_old_header_without_redop_and_root() -> None:
    assert rows(parse_text(f"{OLD_ALL_GATHER_HEADER}\n{OLD_ALL_GATHER_ROW}")) == [
        {"size": 8192, "time_us": 34.81, "busbw": 0.22, "ip_busbw": 0.22}
    ]
    # constructed: a time of whole microseconds where no column stands between the type and the time; only the
    # header tells it from a root rank
    slow = "     1048576        262144     float    13989   97.80  183.38  0e+00    13975   97.83  183.42  0e+00"
    assert rows(parse_text(f"{OLD_ALL_GATHER_HEADER}\n{slow}")) == [
        {"size": 1048576, "time_us": 13989.0, "busbw": 183.38, "ip_busbw": 183.42}
    ]


def test_an_old_header_with_a_root_and_no_redop() -> None:
    # constructed in broadcast_perf's pre-2.13 layout (src/broadcast.cu: `size count type root`)
    header = (
        "#       size         count      type    root     time   algbw   busbw  error     time   algbw   busbw  error"
    )
    row = "     1048576        262144     float       0    55.10   19.03   19.03  0e+00    54.20   19.35   19.35  0e+00"
    assert rows(parse_text(f"{header}\n{row}")) == [
        {"size": 1048576, "time_us": 55.1, "busbw": 19.03, "ip_busbw": 19.35}
    ]


def test_nccl_1_tests_name_the_columns_their_own_way() -> None:
    # real: fixtures/logs/realworld12/nccl-c504.log (NCCL 1.x's test/single/all_reduce_test), its rank and header lines
    rank = "#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB"
    header = (
        "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res"
    )
    assert results.header_columns(header) == results.header_columns(
        "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error"
    )
    events = parse_text(f"{rank}\n{header}")
    assert [(e.kind, e.values.get("gpu")) for e in events if isinstance(e, NcclInfo)] == [
        ("test-rank", "Tesla P100-PCIE-16GB"),
        ("test-start", None),
    ]
    # constructed: a row of its layout
    row = "     1000000    250000   float    sum    0.123   8.13  12.19  0e+00    0.121   8.26  12.39  0e+00"
    assert rows(parse_text(f"{header}\n{row}")) == [
        {"size": 1000000, "time_us": 0.123, "busbw": 12.19, "ip_busbw": 12.39}
    ]


# constructed in the layout of 2.19.2's per-iteration timing (src/util.cu writeResultHeader, writePerIterReport)
PER_ITERATION_HEADER = (
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    i_p99"
    "    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%"
)
PER_ITERATION_ROW = (
    "     1048576        262144     float     sum      -1    187.3    5.60    5.60       0   180.10   195.40   194.90"
    "     1.20    186.9    5.61    5.61       7   179.80   194.10   193.70     1.10"
)


def test_per_iteration_columns_after_each_half() -> None:
    events = parse_text(f"{PER_ITERATION_HEADER}\n{PER_ITERATION_ROW}")
    # the in-place half starts at its own time column, not four cells after the out-of-place `#wrong`
    assert rows(events) == [{"size": 1048576, "time_us": 187.3, "busbw": 5.6, "ip_busbw": 5.61}]
    [failure] = failures(events)
    assert "(in-place 7 #wrong)" in failure.message


def test_rows_a_log_line_separates_from_their_header_keep_its_columns() -> None:
    info = "mew0:65704:65704 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x720000000 recvbuff 0x920000000 count 2097152"
    events = parse_text("\n".join([PER_ITERATION_HEADER, info, PER_ITERATION_ROW]))
    assert rows(events) == [{"size": 1048576, "time_us": 187.3, "busbw": 5.6, "ip_busbw": 5.61}]
    assert failures(events) == []  # only a row of the table itself is checked, as before the log line


def test_cputime_and_a_timestamp_column() -> None:
    # constructed: `-C 1` prints `cputime` for `time`, `-T 1` appends the time of the row (two cells, one column)
    header = (
        "#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   algbw   busbw"
        "  #wrong           timestamp"
    )
    row = (
        "     1048576        262144     float     sum      -1    187.3    5.60    5.60       0    186.9    5.61    5.61"
        "       3  2025-10-28 12:34:56"
    )
    events = parse_text(f"{header}\n{row}")
    assert [e.kind for e in events if isinstance(e, NcclInfo)] == ["test-start", "test-row"]
    assert rows(events) == [{"size": 1048576, "time_us": 187.3, "busbw": 5.6, "ip_busbw": 5.61}]
    [failure] = failures(events)
    assert "(in-place 3 #wrong)" in failure.message


def test_a_row_without_its_out_of_place_half() -> None:
    # constructed: trace replay prints blanks for the out-of-place half; the in-place figures are the row's, and its
    # cells no longer line up with the header's `#wrong` columns
    row = "     1048576        262144     float     sum      -1" + " " * 36 + "186.9    5.61    5.61      9"
    events = parse_text(f"{HEADER}\n{row}")
    assert rows(events) == [{"size": 1048576, "time_us": 186.9, "busbw": 5.61}]
    assert failures(events) == []


def test_a_markdown_table() -> None:
    # constructed: the table pasted as Markdown, the header without its `#`, a separator row, pipes between cells
    header = "| " + " | ".join(HEADER.lstrip("#").split()) + " |"
    separator = "|" + "---|" * 13
    row = "| " + " | ".join(ROW.split()[:8]) + " | 5 | " + " | ".join(ROW.split()[9:]) + " |"
    events = parse_text("\n".join([header, separator, row]))
    assert rows(events) == [{"size": 2147483648, "time_us": 13989.0, "busbw": 230.27, "ip_busbw": 230.13}]
    [failure] = failures(events)
    assert "(out-of-place 5 #wrong)" in failure.message


def test_header_columns() -> None:
    columns = results.header_columns(PER_ITERATION_HEADER)
    assert columns is not None
    assert columns.preamble == ("size", "count", "type", "redop", "root")
    assert columns.half == ("time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%")
    assert (columns.halves, columns.checked) == (2, True)
    old = results.header_columns(OLD_ALL_GATHER_HEADER)
    assert old is not None
    assert (old.preamble, old.checked) == (("size", "count", "type"), False)
    # the 2017 header names its columns otherwise and is read as the same columns; a units line is no header
    first = results.header_columns("#      bytes             N    type      op     time  algbw  busbw      res")
    assert first is not None and first.preamble == ("size", "count", "type", "redop")
    assert results.header_columns(UNITS) is None


def test_rows_under_no_header() -> None:
    # the columns a row's own shape implies: `redop` where a word follows the type, `root` where an integer does
    no_root = (
        "    8388608       2097152   float     sum    8.577   97.80  183.38  0e+00    8.575   97.83  183.42  0e+00"
    )
    for text, busbw in ((ROW, 230.27), (no_root, 183.38), (OLD_ALL_GATHER_ROW, 0.22)):
        row = results.read_row(text, None)
        assert row is not None
        assert row.values["busbw"] == busbw
        assert row.wrong == ()  # no header says which column counts wrong elements
    assert results.read_row("     1048576        262144     float     sum      -1", None) is None
    assert results.read_row("2025 10 rows written", None) is None
