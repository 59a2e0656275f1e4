"""NCCL line types: the INFO facts worth keeping (network, P2P, communicator init, channels, NVLS)."""

from __future__ import annotations

import re

from logdoctor.engines.nccl import results
from logdoctor.engines.nccl.common import Values, _grammar
from logdoctor.events import (
    EngineFailure,
    EventBase,
    NcclInfo,
    NcclInfoKind,
)
from logdoctor.parse import cmdline
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- facts worth keeping ---------------------------------------------------------------------------

_NETWORK_RE = re.compile(r"\bUsing network (?P<network>\S.*?)\s*$")
_P2P_DISABLED_RE = re.compile(
    r"P2P is disabled between (?P<nvlink>NVLINK )?connected GPUs (?P<a>\d+) and (?P<b>\d+)"
    r"|(?:Could not enable P2P|peer query failed) between dev (?P<dev_a>\d+)\(=[0-9a-fA-F]+\) and dev (?P<dev_b>\d+)"
    r"|\bP2P (?:is )?disabled\b"
)
_COMM_INIT_RE = re.compile(
    r"(?:\[Rank \d+\] )?(?:(?P<api>nccl\w+) )?comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nranks (?P<nranks>\d+) "
    r"cudaDev (?P<cuda_dev>\d+)(?: nvmlDev (?P<nvml_dev>\d+))? busId (?P<bus_id>[0-9a-fA-F]+)\b.*?"
    r" - Init (?P<phase>START|COMPLETE)"
)
_COMM_RANKS_RE = re.compile(
    r"\bcomm 0x[0-9a-fA-F]+ rank (?P<rank>\d+) nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+) "
    r"localRanks (?P<local_ranks>\d+) localRank (?P<local_rank>\d+)(?: MNNVL (?P<mnnvl>\d+))?"
)
_CHANNELS_RE = re.compile(
    r"\b(?P<coll>\d+) coll channels, (?:(?P<collnet>\d+) collnet channels, )?(?:(?P<nvls>\d+) nvls channels, )?"
    r"(?P<p2p>\d+) p2p channels(?:, (?P<per_peer>\d+) p2p channels? per peer)?"
)
_NVLS_RE = re.compile(r"NVLS multicast support is (?P<not>not )?available on dev (?P<dev>\d+)")
_CONNECTED_RE = re.compile(
    r"\bConnected (?:all (?P<what>rings|trees)|(?P<nvls>NVLS)\b)(?:, use ring PXN (?P<pxn>\d+) GDR (?P<gdr>\d+))?"
)
_P2P_TYPE_RE = re.compile(
    r"Check P2P Type isAllDirectP2p (?P<direct>\d+) directMode (?P<mode>\d+)(?: isAllCudaP2p (?P<cuda>\d+))?"
)
# NCCL 2.19+ (init.cc): whether every pair of this node's GPUs can use P2P; 0 means some pairs go through SHM.
_INTRA_NODE_P2P_RE = re.compile(r"Check P2P Type intraNodeP2pSupport (?P<support>\d+) directMode (?P<mode>\d+)")


def _values(m: re.Match[str], *names: str) -> Values:
    return {name: int(m.group(name)) for name in names if m.group(name) is not None}


# A communicator's init line read as `label value` pairs (tolerance to variants), for when the
# patterns above do not match: a renamed (`nRanks`), reordered or new field still gives the known values under
# their names, and an unknown label is kept under its snake_case name.
_LABELLED_RE = re.compile(r"\b([A-Za-z][A-Za-z_]*) (0x[0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*)\b")
_INIT_LABELS = {
    "rank": "rank",
    "nranks": "nranks",
    "cudadev": "cuda_dev",
    "nvmldev": "nvml_dev",
    "busid": "bus_id",
    "nnodes": "nnodes",
    "localranks": "local_ranks",
    "localrank": "local_rank",
    "mnnvl": "mnnvl",
    "comm": "comm",
    "commid": "comm_id",
}
_TEXT_LABELS = {"comm", "comm_id", "bus_id"}  # hex identifiers, kept as printed
_INIT_PHASE_RE = re.compile(r"\bInit (?P<phase>START|COMPLETE)\b")
_SNAKE_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _comm_init_labelled(message: str) -> Values | None:
    """The values of a comm-init line whose wording the patterns do not know; None unless rank and nranks are read."""
    values: Values = {}
    for label, value in _LABELLED_RE.findall(message):
        name = _INIT_LABELS.get(label.lower().replace("_", "")) or _SNAKE_RE.sub("_", label).lower()
        if name in values:
            continue  # `[Rank 0] ... rank 0`: the first is kept
        numeric = value.isdigit() and len(value) <= 18 and name not in _TEXT_LABELS
        values[name] = int(value) if numeric else value
    if not isinstance(values.get("rank"), int) or not isinstance(values.get("nranks"), int):
        return None
    phase = _INIT_PHASE_RE.search(message)
    if phase is not None:
        values["phase"] = phase.group("phase")
    return values


def parse_info(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    message = line.message
    base = ctx.base(line, "nccl")
    text = message.strip()

    def info(kind: NcclInfoKind, values: Values) -> list[EventBase]:
        return [NcclInfo(**base, kind=kind, message=text, values=values)]

    m = _NETWORK_RE.search(message)
    if m:
        return info("network", {"network": m.group("network")})
    m = _P2P_DISABLED_RE.search(message)
    if m:
        values: Values = {}
        a, b = m.group("a") or m.group("dev_a"), m.group("b") or m.group("dev_b")
        if a is not None and b is not None:
            values = {"gpu_a": int(a), "gpu_b": int(b)}
        if m.group("a") is not None:
            values["nvlink"] = m.group("nvlink") is not None
        return info("p2p-disabled", values)
    m = _COMM_INIT_RE.search(message)
    if m:
        values = _values(m, "rank", "nranks", "cuda_dev", "nvml_dev")
        values.update(phase=m.group("phase"), comm=m.group("comm"), bus_id=m.group("bus_id"))
        if m.group("api"):
            values["api"] = m.group("api")
        return info("comm-init", values)
    m = _COMM_RANKS_RE.search(message)
    if m:
        return info("comm-init", _values(m, "rank", "nranks", "nnodes", "local_ranks", "local_rank", "mnnvl"))
    if "comm 0x" in message and ("Init " in message or "nnodes" in message.lower()):
        labelled = _comm_init_labelled(message)
        if labelled is not None:
            return info("comm-init", labelled)
    m = _CHANNELS_RE.search(message)
    if m:
        return info("channels", _values(m, "coll", "collnet", "nvls", "p2p", "per_peer"))
    m = _NVLS_RE.search(message)
    if m:
        return info("nvls", {"available": m.group("not") is None, "device": int(m.group("dev"))})
    m = _CONNECTED_RE.search(message)
    if m:
        values = _values(m, "pxn", "gdr")
        values["connected"] = m.group("what") or "nvls"
        return info("nvls" if m.group("nvls") else "connected", values)
    m = _P2P_TYPE_RE.search(message)
    if m:
        return info("p2p-type", _values(m, "direct", "mode", "cuda"))
    m = _INTRA_NODE_P2P_RE.search(message)
    if m:
        supported = m.group("support") != "0"
        return info(
            "p2p-type" if supported else "p2p-disabled", {"intra_node_p2p": supported, "mode": int(m.group("mode"))}
        )
    return None


# nccl-tests (all_reduce_perf and the others) print their parameters first and a summary last; between them one
# row a message size. A run whose header is in the log and whose summary is not never finished.
# A paste may lose the `#`. The results table's column header (`#  size  count  type  redop  root  time  algbw  busbw
# #wrong ...`, its columns differing by test and release) is printed just before the first collective: where the
# parameters were not pasted, it is the run's start, and names nccl-tests as the program.
_TEST_START_RE = re.compile(
    r"^#?\s*nThread (?P<nthread>\d+) nGpus (?P<ngpus>\d+) minBytes (?P<min_bytes>\d+)"
    r"(?: maxBytes (?P<max_bytes>\d+) step: (?P<step>\d+)\((?P<step_kind>factor|bytes)\))?"
)
# The command that started a run (`./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8`, maybe after NCCL_* settings or
# an mpirun prefix): the sizes it sweeps. Defaults are 32M to 32M; sizes take K/M/G, binary (common.cu parsesize).
_TEST_COMMAND_RE = re.compile(
    r"(?:^|[\s/])(?P<test>all_reduce|all_gather|alltoall|broadcast|reduce_scatter|reduce|sendrecv|scatter|gather"
    r"|hypercube)_perf(?:_mpi)?(?=\s|$)(?P<args>.*)$"
)
# the banner and the footer (2.19 and later, src/util.cu) name the binary too, without running it; a paste may
# lose their `#` as it may the parameter line's
_TEST_STARTING_RE = re.compile(r"^\s*#?\s*Collective test (?:starting|concluded):")
# the footer's last line: the run went through every size and printed its summary
_TEST_CONCLUDED_RE = re.compile(r"^#?\s*Collective test concluded:")
_SIZE_OPTION_RE = re.compile(
    r"(?:^|\s)(?:-(?P<short>[befi])\s*|--(?P<long>minbytes|maxbytes|stepfactor|stepbytes)[=\s]\s*)"
    r"(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>[KkMmGg])?(?=\s|$)"
)
_SIZE_OPTION = {"b": "min_bytes", "e": "max_bytes", "f": "step_factor", "i": "step_bytes"}
_SIZE_LONG = {"minbytes": "b", "maxbytes": "e", "stepfactor": "f", "stepbytes": "i"}
_UNITS = {"k": 1024, "m": 1024**2, "g": 1024**3}
# printed after the parameters when the GPUs' memory cannot hold the largest size (common.cu)
_TEST_REDUCED_RE = re.compile(r"^#\s*Reducing maxBytes to (?P<max_bytes>\d+) due to memory limitation")
# `#  Rank  0 Group  0 Pid  31706 on autodl-container-xxxxx device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti`
# NCCL 1.x's tests: `#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB` (one process, no host)
_TEST_RANK_RE = re.compile(
    r"^#?\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device|uses device)\s+"
    r"(?P<device>\d+)\s+\[[^\]]*\]\s+(?P<gpu>\S.*?)\s*$"
)
_TEST_DONE_RE = re.compile(r"^#?\s*Avg bus bandwidth\s*:\s*(?P<busbw>[\d.]+)")
# printed after the last size's row, just before the average: the run went through every size. The count is
# of result cells (one size, out-of-place or in-place) whose check found a value outside the bounds that the
# data type's rounding allows (src/util.cu writeResultFooter, common.cu CheckData): any is a wrong result.
_TEST_CHECKED_RE = re.compile(r"^#?\s*Out of bounds values\s*:\s*(?:(?P<wrong>\d+)\s+(?P<verdict>FAILED|OK))?")


def is_test_command(text: str) -> bool:
    """Whether a pasted shell line runs an nccl-tests binary (its NCCL_* settings are read with its sizes)."""
    return _TEST_COMMAND_RE.search(text) is not None and _TEST_STARTING_RE.match(text) is None


def _test_command(line: LogLine, ctx: ParseContext, m: re.Match[str]) -> list[EventBase]:
    """The sizes an nccl-tests command line sweeps, and the NCCL_* settings written before it."""
    values: Values = {"test": m.group("test"), "min_bytes": 32 * 1024**2, "max_bytes": 32 * 1024**2}
    for option in _SIZE_OPTION_RE.finditer(m.group("args")):
        short = option.group("short") or _SIZE_LONG[option.group("long")]
        unit = _UNITS.get((option.group("unit") or "").lower(), 1)
        values[_SIZE_OPTION[short]] = int(float(option.group("value")) * unit)
    settings = cmdline.nccl_env_events(line, ctx, line.message)
    return [
        *settings,
        NcclInfo(**ctx.base(line, "nccl"), kind="test-sizes", message=line.message.strip(), values=values),
    ]


def parse_test(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    """nccl-tests' output: its command line, first line (`# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 ...`),
    ranks, the results table's column header and rows, and its summary (`# Avg bus bandwidth    : 85.12`)."""
    text = line.message.strip()
    base = ctx.base(line, "nccl")
    row = results.read_row(text, results.last_columns(ctx))
    if row is not None:
        return results.row_events(line, ctx, row, check=False)
    m = _TEST_START_RE.match(text)
    if m is not None:
        values: Values = {k: int(v) for k, v in m.groupdict().items() if v is not None and k != "step_kind"}
        if m.group("step_kind") is not None:
            values["step_kind"] = m.group("step_kind")
        return [NcclInfo(**base, kind="test-start", message=text, values=values)]
    columns = results.header_columns(text)
    if columns is not None:
        results.open_table(ctx, columns)
        return [NcclInfo(**base, kind="test-start", message=text, values={})]
    m = _TEST_DONE_RE.match(text)
    if m is not None:
        values = {"busbw_gbps": float(m.group("busbw"))}
        return [NcclInfo(**base, kind="test-done", message=text, values=values)]
    m = _TEST_CHECKED_RE.match(text)
    if m is not None:
        done: list[EventBase] = [NcclInfo(**base, kind="test-done", message=text, values={})]
        if m.group("verdict") == "FAILED" and int(m.group("wrong")) > 0:
            done.append(EngineFailure(**base, kind="wrong-results", message=text))
        return done
    if _TEST_CONCLUDED_RE.match(text) is not None:
        return [NcclInfo(**base, kind="test-done", message=text, values={})]
    m = _TEST_RANK_RE.match(text)
    if m is not None:
        # in the line's order, as the reports print them (NCCL 1.x's rank line names no host)
        values = {"rank": int(m.group("rank"))}
        if m.group("host") is not None:
            values["host"] = m.group("host")
        values.update(device=int(m.group("device")), gpu=m.group("gpu"))
        return [NcclInfo(**base, kind="test-rank", message=text, values=values)]
    m = _TEST_REDUCED_RE.match(text)
    if m is not None:
        return [NcclInfo(**base, kind="test-sizes", message=text, values={"max_bytes": int(m.group("max_bytes"))})]
    m = _TEST_COMMAND_RE.search(line.message)
    if m is not None and is_test_command(line.message):
        return _test_command(line, ctx, m)
    return None


GRAMMARS: list[Grammar] = [
    _grammar(
        "test",
        (
            "nThread ",
            "Avg bus bandwidth",
            "algbw",
            "Out of bounds values",
            "Collective test concluded",
            "Reducing maxBytes",
            " Pid ",
            " uses device ",
            "_perf",
            " float ",
            " half ",
            " bfloat16 ",
            " double ",
            " int32 ",
            " int8 ",
            " uint8 ",
        ),
        parse_test,
        (
            case(
                "row",
                "  1073741824     268435456     float     sum      -1    67075   16.01   24.01      0    66560   16.13   "
                "24.20      0",
                (
                    "nccl_info",
                    {
                        "kind": "test-row",
                        "values": {"size": 1073741824, "time_us": 67075.0, "busbw": 24.01, "ip_busbw": 24.20},
                    },
                ),
                exact=True,
            ),
            case(
                "row-sendrecv-na",
                "   134217728      33554432     float     sum      -1   1211.2  110.81  110.81      0   1211.8  110.76  "
                "110.76    N/A",
                ("nccl_info", {"kind": "test-row", "values": {"size": 134217728, "busbw": 110.81}}),
                exact=True,
            ),
            case(  # constructed: the other data types nccl-tests prints (-d)
                "row-types",
                "     1048576        524288      half     sum      -1    35.93   29.18   51.07      0    35.48   29.55   "
                "51.72      0\n"
                "     1048576        524288  bfloat16     sum      -1    35.93   29.18   51.07      0    35.48   29.55   "
                "51.72      0\n"
                "     1048576        131072    double     sum      -1    35.93   29.18   51.07      0    35.48   29.55   "
                "51.72      0\n"
                "     1048576        262144     int32     sum      -1    35.93   29.18   51.07      0    35.48   29.55   "
                "51.72      0\n"
                "     1048576       1048576      int8     sum      -1    35.93   29.18   51.07      0    35.48   29.55   "
                "51.72      0\n"
                "     1048576       1048576     uint8     sum      -1    35.93   29.18   51.07      0    35.48   29.55   "
                "51.72      0",
                *(("nccl_info", {"kind": "test-row", "values": {"size": 1048576, "busbw": 51.07}}),) * 6,
                exact=True,
            ),
            case(  # old nccl-tests: no root column, #wrong as a float
                "row-no-root",
                "    8388608       2097152   float     sum    8.577   97.80  183.38  0e+00    8.575   97.83  183.42  0e+00",
                ("nccl_info", {"kind": "test-row", "values": {"size": 8388608, "busbw": 183.38, "ip_busbw": 183.42}}),
                exact=True,
            ),
            case(
                "command",
                "root@autodl-container-xxxxx:~/nccl-tests# ./build/all_reduce_perf -b 8 -e 1024M -f 2 -g2",
                (
                    "nccl_info",
                    {
                        "kind": "test-sizes",
                        "values": {"test": "all_reduce", "min_bytes": 8, "max_bytes": 1073741824, "step_factor": 2},
                    },
                ),
                exact=True,
            ),
            case(
                "command-with-settings",
                "NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 1G -e 10G -f 2 -g 4",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1"}),
                ("nccl_info", {"kind": "test-sizes", "values": {"min_bytes": 1073741824, "max_bytes": 10737418240}}),
                exact=True,
            ),
            case(
                "command-defaults",
                "mpirun -np 8 ./build/sendrecv_perf --stepfactor 2",
                (
                    "nccl_info",
                    {
                        "kind": "test-sizes",
                        "values": {"test": "sendrecv", "min_bytes": 33554432, "max_bytes": 33554432},
                    },
                ),
                exact=True,
            ),
            case("not-a-command", "# Collective test starting: all_reduce_perf"),
            case(
                "test-concluded",
                "# Collective test concluded: all_reduce_perf",
                ("nccl_info", {"kind": "test-done", "values": {}}),
                exact=True,
            ),
            case(  # the footer of a paste that lost the comment markers (dstack's Nebius guide)
                "footer-unmarked",
                "  Out of bounds values : 0 OK\n"
                "  Avg bus bandwidth    : 125.499\n"
                "\n"
                "  Collective test concluded: all_reduce_perf",
                ("nccl_info", {"kind": "test-done", "values": {}}),
                ("nccl_info", {"kind": "test-done", "values": {"busbw_gbps": 125.499}}),
                ("nccl_info", {"kind": "test-done", "values": {}}),
                exact=True,
            ),
            case(
                "reduced",
                "# Reducing maxBytes to 7635497642 due to memory limitation",
                ("nccl_info", {"kind": "test-sizes", "values": {"max_bytes": 7635497642}}),
                exact=True,
            ),
            case(
                "rank",
                "#  Rank  0 Group  0 Pid  31706 on autodl-container-xxxxx device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti",
                (
                    "nccl_info",
                    {
                        "kind": "test-rank",
                        "values": {
                            "rank": 0,
                            "host": "autodl-container-xxxxx",
                            "device": 0,
                            "gpu": "NVIDIA GeForce RTX 2080 Ti",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "rank-nccl1",
                "#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB",
                (
                    "nccl_info",
                    {"kind": "test-rank", "values": {"rank": 0, "device": 0, "gpu": "Tesla P100-PCIE-16GB"}},
                ),
                exact=True,
            ),
            case(
                "test-start",
                "# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 "
                "agg iters: 1 validation: 1 graph: 0",
                (
                    "nccl_info",
                    {
                        "kind": "test-start",
                        "values": {
                            "nthread": 1,
                            "ngpus": 2,
                            "min_bytes": 8,
                            "max_bytes": 134217728,
                            "step": 2,
                            "step_kind": "factor",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "test-start-table",
                "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
                "   busbw #wrong",
                ("nccl_info", {"kind": "test-start", "values": {}}),
                exact=True,
            ),
            case(
                "test-start-unmarked",
                "nThread 1 nGpus 2 minBytes 8 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20",
                ("nccl_info", {"kind": "test-start", "values": {"nthread": 1, "ngpus": 2, "min_bytes": 8}}),
                exact=True,
            ),
            case(
                "test-checked",
                "# Out of bounds values : 0 OK",
                ("nccl_info", {"kind": "test-done", "values": {}}),
                exact=True,
            ),
            case(
                "test-checked-failed",
                "# Out of bounds values : 50 FAILED",
                ("nccl_info", {"kind": "test-done", "values": {}}),
                ("engine_failure", {"kind": "wrong-results", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "table-rows-wrong",
                "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
                "   busbw #wrong\n"
                "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)"
                "  (GB/s)       \n"
                "     1048576        262144     float     sum      -1    187.3    5.60    5.60      0    186.9    5.61"
                "    5.61      0\n"
                "     2097152        524288     float     sum      -1    351.0    5.97    5.97  1.04858e+06    350.2"
                "    5.99    5.99     12\n"
                "     4194304       1048576     float     sum      -1    690.4    6.08    6.08      0    689.7    6.08"
                "    6.08    N/A\n"
                "# Out of bounds values : 1 FAILED",
                ("nccl_info", {"kind": "test-start"}),
                ("nccl_info", {"kind": "test-row", "line": 3, "values": {"size": 1048576, "busbw": 5.6}}),
                ("nccl_info", {"kind": "test-row", "line": 4}),
                ("engine_failure", {"kind": "wrong-results", "line": 4}),
                ("nccl_info", {"kind": "test-row", "line": 5}),
                ("nccl_info", {"kind": "test-done"}),
                ("engine_failure", {"kind": "wrong-results", "line": 6}),
                exact=True,
            ),
            case(
                "table-rows-error-column",
                "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw"
                "  error\n"
                "       65536          8192   float     sum    16.57    1.98    1.98  2e-07    13.83    2.37    2.37  0e+00\n"
                "# Out of bounds values : 0 OK",
                ("nccl_info", {"kind": "test-start"}),
                ("nccl_info", {"kind": "test-row", "values": {"size": 65536, "busbw": 1.98}}),
                ("nccl_info", {"kind": "test-done"}),
                exact=True,
            ),
            case(
                "test-done",
                "# Avg bus bandwidth    : 85.1234 ",
                ("nccl_info", {"kind": "test-done", "values": {"busbw_gbps": 85.1234}}),
                exact=True,
            ),
        ),
    ),
    _grammar(
        "info",
        (
            "Using network ",
            "P2P is disabled",
            "P2P disabled",
            "Could not enable P2P between",
            "peer query failed between",
            "- Init START",
            "- Init COMPLETE",
            "Init COMPLETE",
            "Init START",
            " nNodes ",
            " coll channels, ",
            "NVLS multicast support is",
            "Connected all ",
            "Connected NVLS",
            "Check P2P Type",
        ),
        parse_info,
        (
            case("sample-1", "vm:668:668 [0] NCCL INFO Using network Socket", ("nccl_info", {})),
            case(
                "sample-2",
                "bcc-qianfan-gpu4090-offline-1:89404:89404 [2] NCCL INFO P2P is disabled between connected GPUs 6 and 7. "
                "You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
                ("nccl_info", {}),
            ),
            case(
                "sample-3",
                "vm:668:668 [0] NCCL INFO comm 0xfa503f0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
                ("nccl_info", {}),
            ),
            case(
                "row-1",
                "vm:668:668 [0] NCCL INFO Using network Socket",
                ("nccl_info", {"kind": "network", "values": {"network": "Socket"}}),
                exact=True,
            ),
            case(
                "row-2",
                "node1:10:10 [0] NCCL INFO Using network IB",
                ("nccl_info", {"kind": "network", "values": {"network": "IB"}}),
                exact=True,
            ),
            case(
                "row-3",
                "node1:10:10 [0] NCCL INFO Using network AWS Libfabric",
                ("nccl_info", {"values": {"network": "AWS Libfabric"}}),
                exact=True,
            ),
            case(
                "row-4",
                "bcc-qianfan-gpu4090-offline-1:89404:89404 [2] NCCL INFO P2P is disabled between connected GPUs 6 and 7. You "
                "can repress this message with NCCL_IGNORE_DISABLED_P2P=1.",
                ("nccl_info", {"kind": "p2p-disabled", "values": {"gpu_a": 6, "gpu_b": 7, "nvlink": False}}),
                exact=True,
            ),
            case(
                "row-5",
                "gpu7:300:300 [1] transport/p2p.cc:944 (p2pSendSetup) NCCL WARN P2P is disabled between NVLINK connected GPUs "
                "0 and 1. This should not be the case given their connectivity, and is probably due to a hardware issue.",
                (
                    "nccl_info",
                    {"kind": "p2p-disabled", "level": "WARN", "values": {"gpu_a": 0, "gpu_b": 1, "nvlink": True}},
                ),
                exact=True,
            ),
            case(
                "row-6",
                "node:1:2 [0] NCCL INFO Could not enable P2P between dev 0(=1b000) and dev 1(=1c000)",
                ("nccl_info", {"kind": "p2p-disabled", "values": {"gpu_a": 0, "gpu_b": 1}}),
                exact=True,
            ),
            case(
                "row-7",
                "vm:668:668 [0] NCCL INFO ncclCommInitRankConfig comm 0xfa503f0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 "
                "commId 0x8d93563a5dc3ab4b - Init COMPLETE",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "rank": 0,
                            "nranks": 2,
                            "cuda_dev": 0,
                            "nvml_dev": 0,
                            "phase": "COMPLETE",
                            "comm": "0xfa503f0",
                            "bus_id": "60",
                            "api": "ncclCommInitRankConfig",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-8",
                "node:1:2 [3] NCCL INFO comm 0x55d0 rank 3 nranks 4 cudaDev 3 nvmlDev 3 busId 1b000 commId 0xabc - Init START",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "rank": 3,
                            "nranks": 4,
                            "cuda_dev": 3,
                            "nvml_dev": 3,
                            "phase": "START",
                            "comm": "0x55d0",
                            "bus_id": "1b000",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-9",
                "node:1:2 [0] NCCL INFO ncclCommSplit comm 0x77 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 parent 0x55 "
                "color 1 key 0 commId 0xdef - Init COMPLETE",
                ("nccl_info", {"kind": "comm-init"}),
                exact=True,
            ),
            case(
                "row-10",
                "node:1:2 [0] NCCL INFO [Rank 0] ncclCommInitRankConfig comm 0x77 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
                "18000 commId 0xdef - Init START",
                ("nccl_info", {"kind": "comm-init"}),
                exact=True,
            ),
            case(
                "labelled-reordered",  # constructed variant: nRanks renamed, nvmlDev moved, a new localRank field
                "node:1:2 [1] NCCL INFO ncclCommInitRankConfig comm 0x7f00 rank 1 nRanks 2 cudaDev 1 busId 1c000 nvmlDev 1 "
                "commId 0xabc localRank 1 - Init COMPLETE",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "comm": "0x7f00",
                            "rank": 1,
                            "nranks": 2,
                            "cuda_dev": 1,
                            "bus_id": "1c000",
                            "nvml_dev": 1,
                            "comm_id": "0xabc",
                            "local_rank": 1,
                            "phase": "COMPLETE",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "labelled-reworded",  # constructed variant: the phase first, a new field (`nChannels`)
                "node:1:2 [0] NCCL INFO Init COMPLETE: comm 0x7f00 rank 0 nranks 4 cudaDev 0 nChannels 16 busId 18000",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {
                            "comm": "0x7f00",
                            "rank": 0,
                            "nranks": 4,
                            "cuda_dev": 0,
                            "n_channels": 16,
                            "bus_id": "18000",
                            "phase": "COMPLETE",
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-11",
                "vm:668:668 [0] NCCL INFO comm 0xfa503f0 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0",
                (
                    "nccl_info",
                    {
                        "kind": "comm-init",
                        "values": {"rank": 0, "nranks": 2, "nnodes": 1, "local_ranks": 2, "local_rank": 0, "mnnvl": 0},
                    },
                ),
                exact=True,
            ),
            case(
                "row-12",
                "vm:668:668 [0] NCCL INFO 4 coll channels, 4 collnet channels, 0 nvls channels, 4 p2p channels, 2 p2p channels "
                "per peer",
                (
                    "nccl_info",
                    {"kind": "channels", "values": {"coll": 4, "collnet": 4, "nvls": 0, "p2p": 4, "per_peer": 2}},
                ),
                exact=True,
            ),
            case(
                "row-13",
                "node:1:2 [0] NCCL INFO 16 coll channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer",
                ("nccl_info", {"kind": "channels", "values": {"coll": 16, "nvls": 16, "p2p": 16, "per_peer": 2}}),
                exact=True,
            ),
            case(
                "row-14",
                "A03-R28-I49-3-9000018:193027:193118 [6] NCCL INFO 8 coll channels, 8 p2p channels, 1 p2p channels per peer",
                ("nccl_info", {"kind": "channels", "values": {"coll": 8, "p2p": 8, "per_peer": 1}}),
                exact=True,
            ),
            case(
                "row-15",
                "node:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0",
                ("nccl_info", {"kind": "nvls", "values": {"available": False, "device": 0}}),
                exact=True,
            ),
            case(
                "row-16",
                "node:1:2 [0] NCCL INFO NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)",
                ("nccl_info", {"kind": "nvls", "values": {"available": True, "device": 0}}),
                exact=True,
            ),
            case(
                "row-17",
                "node:1:2 [0] NCCL INFO Connected NVLS tree",
                ("nccl_info", {"kind": "nvls", "values": {"connected": "nvls"}}),
                exact=True,
            ),
            case(
                "row-18",
                "tj5-sc-ai-h800r-dev01:532:1764 [1] NCCL INFO Connected all rings",
                ("nccl_info", {"kind": "connected", "values": {"connected": "rings"}}),
                exact=True,
            ),
            case(
                "row-19",
                "node:1:2 [0] NCCL INFO Connected all trees",
                ("nccl_info", {"kind": "connected", "values": {"connected": "trees"}}),
                exact=True,
            ),
            case(
                "row-20",
                "vm:669:669 [1] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
                ("nccl_info", {"kind": "connected", "values": {"connected": "rings", "pxn": 0, "gdr": 1}}),
                exact=True,
            ),
            case(
                "row-21",
                "7502d6c5484e:743:743 [2] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0",
                ("nccl_info", {"kind": "p2p-type", "values": {"direct": 0, "mode": 0}}),
                exact=True,
            ),
            case(
                "row-22",
                "vm:668:668 [0] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1",
                ("nccl_info", {"kind": "p2p-type", "values": {"direct": 0, "mode": 0, "cuda": 1}}),
                exact=True,
            ),
            case(
                "intra-node-p2p-0",
                "node1:123:123 [0] NCCL INFO Check P2P Type intraNodeP2pSupport 0 directMode 1",
                ("nccl_info", {"kind": "p2p-disabled", "values": {"intra_node_p2p": False, "mode": 1}}),
                exact=True,
            ),
            case(
                "intra-node-p2p-1",
                "node1:123:123 [0] NCCL INFO Check P2P Type intraNodeP2pSupport 1 directMode 0",
                ("nccl_info", {"kind": "p2p-type", "values": {"intra_node_p2p": True, "mode": 0}}),
                exact=True,
            ),
        ),
    ),
]
