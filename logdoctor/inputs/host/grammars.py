"""Host facts a collector captures (catalogue/sglang-nccl.md §12): GPU topology, P2P capability, GPU list.

These outputs have no log header and span several lines, so the grammar that sees a table's header sets
`ctx.block` to read the rows that follow; the event is emitted once the last GPU row is read:

        GPU0	GPU1	CPU Affinity	NUMA Affinity	GPU NUMA ID        (nvidia-smi topo -m)
    GPU0	 X 	NV18	0-31	0		N/A                        -> GpuTopology(links={"0-1": "NV18"})
    GPU1	NV18	 X 	0-31	0		N/A

Tabs may have become spaces in a paste: cells are split on whitespace, and only the GPU columns are read
(their cells never contain a space). The ANSI underline nvidia-smi puts on the header is already gone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from logdoctor.events import EventBase, GpuDiag, GpuInfo, GpuP2P, GpuProcess, GpuTopology, GpuXid, HostInfo
from logdoctor.inputs.host import gpustate
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

# `\tGPU0\tGPU1\tNIC0\tCPU Affinity\t...` (topo -m) or ` \tGPU0\tGPU1\t` (topo -p2p): the GPU columns first.
# collect_env / check_env may put their title on the header's line: `GPU topology: GPU0      CPU Affinity ...`
_MATRIX_HEADER_RE = re.compile(
    r"^\s*(?:(?:GPU [Tt]opology|NVIDIA Topology)\s*:\s*)?GPU0(?P<more>(?:\s+GPU\d+)*)(?P<rest>(?:\s+.*)?)$"
)
_GPU_LABEL_RE = re.compile(r"^GPU(?P<index>\d+)$")
_TOPO_CELL_RE = re.compile(r"^(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC|C2C|P2C|NVB|N/A)$")
_P2P_CELL_RE = re.compile(r"^(?:X|OK|CNS|GNS|TNS|NS|DR|U|\w{1,4})$")
_P2P_MODE_RE = re.compile(r"\btopo -p2p (?P<mode>rw|r|w|n|a|p)\b")
_P2P_MODE = "host.p2p_mode"


@dataclass
class _Matrix:
    """A `topo -m` or `topo -p2p` table being read."""

    kind: str  # "topo" or "p2p"
    gpus: int
    header: LogLine
    rows: dict[int, list[str]] = field(default_factory=dict)
    end: int | None = None
    emitted: bool = False


def _pairs(rows: dict[int, list[str]], symmetric: bool) -> dict[str, str]:
    links: dict[str, str] = {}
    for i, cells in sorted(rows.items()):
        for j, cell in enumerate(cells):
            if i == j or (symmetric and j < i and j in rows):
                continue
            key = f"{min(i, j)}-{max(i, j)}" if symmetric else f"{i}-{j}"
            links.setdefault(key, cell)
    return links


def _matrix_event(matrix: _Matrix, ctx: ParseContext) -> list[EventBase]:
    matrix.emitted = True
    base = ctx.base(matrix.header, "host")
    base["end_line"] = matrix.end
    if matrix.kind == "topo":
        return [GpuTopology(**base, links=_pairs(matrix.rows, symmetric=True), gpus=matrix.gpus)]
    mode = str(ctx.state.get(_P2P_MODE, "unknown"))
    return [GpuP2P(**base, mode=mode, status=_pairs(matrix.rows, symmetric=False))]


def _read_matrix(matrix: _Matrix) -> BlockFn:
    valid = _TOPO_CELL_RE if matrix.kind == "topo" else _P2P_CELL_RE

    def end(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        ctx.block = None
        events = [] if matrix.emitted or not matrix.rows else _matrix_event(matrix, ctx)
        if blocks.is_blank(line):
            return events
        blocks.stash(ctx, events)
        return None

    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        tokens = line.text.split()
        if blocks.is_blank(line) or len(tokens) <= matrix.gpus:
            return end(line, ctx)
        label, cells = tokens[0], tokens[1 : 1 + matrix.gpus]
        if not all(valid.match(c) for c in cells):
            return end(line, ctx)
        gpu = _GPU_LABEL_RE.match(label)
        if gpu is None or matrix.emitted:
            return []  # a NIC row of topo -m: links to NICs are not GPU pairs
        matrix.rows[int(gpu.group("index"))] = cells
        matrix.end = line.number
        if len(matrix.rows) == matrix.gpus:
            return _matrix_event(matrix, ctx)
        return []

    return read


def parse_matrix_header(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _MATRIX_HEADER_RE.match(line.text)
    if not m:
        return None
    rest = m.group("rest").strip()
    gpus = 1 + len(m.group("more").split())
    if "CPU Affinity" in rest or rest.startswith(("NIC", "mlx")) or rest in ("...", "…"):
        kind = "topo"  # `...`: the paste elided the columns after the GPUs; the GPU cells are still read
    elif not rest:
        kind = "p2p"
    else:
        return None
    ctx.block = _read_matrix(_Matrix(kind=kind, gpus=gpus, header=line))
    return []


def parse_p2p_mode(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    """A collector's section title or a pasted command naming the `-p2p` mode of the table that follows."""
    m = _P2P_MODE_RE.search(line.text)
    if not m:
        return None
    ctx.state[_P2P_MODE] = m.group("mode")
    return []


# --- nvidia-smi --query-gpu=... --format=csv ----------------------------------------------------------

_CSV_HEADER_RE = re.compile(r"^\s*[\w.]+(?: \[[^\]]+\])?(?:\s*,\s*[\w.]+(?: \[[^\]]+\])?)+\s*$")
_CSV_UNIT_RE = re.compile(r"\s*\[[^\]]+\]$")  # `memory.total [MiB]` -> `memory.total`
_MEMORY_RE = re.compile(r"^(?P<n>\d+)\s*MiB$")


def _csv_fields(header: str) -> list[str]:
    return [_CSV_UNIT_RE.sub("", f.strip()) for f in header.split(",")]


def _gpu_row(fields: list[str], cells: list[str]) -> dict[str, str | None]:
    return {
        f: (None if c in ("[N/A]", "N/A", "[Not Supported]", "") else c) for f, c in zip(fields, cells, strict=True)
    }


def _read_csv(fields: list[str]) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        cells = [c.strip() for c in line.text.split(",")]
        if blocks.is_blank(line) or len(cells) != len(fields):
            ctx.block = None
            return [] if blocks.is_blank(line) else None
        row = _gpu_row(fields, cells)
        name = row.get("name")
        if not name:
            ctx.block = None
            return None
        index = row.get("index")
        memory = _MEMORY_RE.match(row.get("memory.total") or "")
        return [
            GpuInfo(
                **ctx.base(line, "host"),
                index=int(index) if index and index.isdigit() else None,
                name=name,
                memory_mib=int(memory.group("n")) if memory else None,
                driver=row.get("driver_version"),
                bus_id=row.get("pci.bus_id"),
                **gpustate.from_csv_row(row),
            )
        ]

    return read


def _read_apps(fields: list[str]) -> BlockFn:
    """`nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id,used_gpu_memory --format=csv` rows."""

    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        cells = [c.strip() for c in line.text.split(",")]
        if blocks.is_blank(line) or len(cells) != len(fields):
            ctx.block = None
            return [] if blocks.is_blank(line) else None
        row = _gpu_row(fields, cells)
        pid = row.get("pid")
        if not pid or not pid.isdigit():
            ctx.block = None
            return None
        memory = gpustate.number(row.get("used_gpu_memory") or row.get("used_memory"))
        return [
            GpuProcess(
                **ctx.base(line, "host"),
                pid=int(pid),
                name=row.get("process_name") or row.get("name") or "?",
                bus_id=row.get("gpu_bus_id") or row.get("gpu_uuid"),
                memory_mib=None if memory is None else int(memory),
            )
        ]

    return read


def parse_csv_header(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    text = line.text.strip()
    if not _CSV_HEADER_RE.match(text):
        return None
    fields = _csv_fields(text)
    if "pid" in fields and ("process_name" in fields or "used_gpu_memory" in fields or "used_memory" in fields):
        ctx.block = _read_apps(fields)
        return []
    if "name" not in fields:
        return None
    ctx.block = _read_csv(fields)
    return []


# --- one-line facts --------------------------------------------------------------------------------

# `nvidia-smi -L`: `GPU 0: NVIDIA H200 (UUID: GPU-3c1e...)`
_GPU_LIST_RE = re.compile(r"^\s*GPU (?P<index>\d+): (?P<name>.+?) \(UUID: GPU-")
# nvidia-smi banner `| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |`, check_env
_DRIVER_RE = re.compile(r"\bDriver Version:\s*(?P<driver>\d+(?:\.\d+)+)(?:\s+CUDA Version:\s*(?P<cuda>\d+\.\d+))?")
# `python -m sglang.check_env`: `Hypervisor vendor:: KVM` (the double colon is SGLang's)
_HYPERVISOR_RE = re.compile(r"\bHypervisor vendor::?\s*(?P<vendor>\S.*?)\s*$")


# the kernel log (`dmesg`, `journalctl -k`): `NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has
# fallen off the bus.`; the driver prints the bus id without the function, and newer ones add `, pid=`/`name=`
_XID_RE = re.compile(
    r"\bNVRM: Xid \((?:PCI:)?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.\d)?)\): (?P<code>\d+)\b,?\s*(?P<rest>.*?)\s*$"
)
_OFF_BUS_RE = re.compile(
    r"\bNVRM: GPU (?:at )?(?:PCI:)?(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.\d)?):? "
    r"(?P<rest>GPU has fallen off the bus.*?)\s*$"
)


# the driver's three-line notice without an Xid (NVIDIA/NVSentinel#155): `NVRM: The NVIDIA GPU 0000:b3:00.0` /
# `NVRM: (PCI ID: 10de:26b5) installed in this system has` / `NVRM: fallen off the bus and is not responding ...`
_OFF_BUS_NOTICE_RE = re.compile(r"\bNVRM: (?P<rest>fallen off the bus and is not responding to commands\.?)\s*$")


def parse_xid(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _XID_RE.search(line.text)
    if m:
        code = int(m.group("code"))
        return [GpuXid(**ctx.base(line, "host"), code=code, bus_id=m.group("bus"), message=m.group("rest"))]
    m = _OFF_BUS_RE.search(line.text)
    if m:
        return [GpuXid(**ctx.base(line, "host"), code=None, bus_id=m.group("bus"), message=m.group("rest"))]
    m = _OFF_BUS_NOTICE_RE.search(line.text)
    if m:
        return [GpuXid(**ctx.base(line, "host"), code=None, bus_id=None, message=m.group("rest"))]
    return None


# `dcgmi diag -r N`: its table's rows (DCGM 3.x `| PCIe | Fail - GPU: 3 |`; 4.x a test row, then one row a GPU:
# `| memory | Fail |` / `|  | GPU0: Fail |`). Only failed tests become events.
_DIAG_ROW_RE = re.compile(r"^\s*\|\s*(?P<test>[A-Za-z][\w /.\-]*?)\s*\|\s*(?P<result>Fail)\b(?P<rest>[^|]*)\|\s*$")
_DIAG_GPU_ROW_RE = re.compile(r"^\s*\|\s*\|\s*GPU(?P<gpu>\d+): (?P<result>Fail)\b(?P<rest>[^|]*)\|\s*$")
_DIAG_GPUS_RE = re.compile(r"GPUs?:?\s*(?P<ids>\d+(?:\s*,\s*\d+)*)")
_DIAG_TEST = "host.diag_test"


def parse_dcgm_diag(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _DIAG_ROW_RE.match(line.text)
    if m:
        test, rest = m.group("test"), m.group("rest").strip(" -")
        ctx.state[_DIAG_TEST] = test
        ids = _DIAG_GPUS_RE.search(rest)
        if not ids and not rest:
            return []  # DCGM 4.x: the GPUs follow, one row each
        gpus = [int(i) for i in re.split(r"\s*,\s*", ids.group("ids"))] if ids else []
        message = _DIAG_GPUS_RE.sub("", rest).strip(" -,")  # the GPUs are in `gpus`
        return [GpuDiag(**ctx.base(line, "host"), test=test, result=m.group("result"), gpus=gpus, message=message)]
    m = _DIAG_GPU_ROW_RE.match(line.text)
    if m and isinstance(ctx.state.get(_DIAG_TEST), str):
        return [
            GpuDiag(
                **ctx.base(line, "host"),
                test=ctx.state[_DIAG_TEST],
                result=m.group("result"),
                gpus=[int(m.group("gpu"))],
                message=m.group("rest").strip(" -"),
            )
        ]
    return None


# `nvidia-smi`'s summary table, its Processes rows (driver 470+ with the GI / CI columns, older without):
# `|    0   N/A  N/A             616      C   python3                                1130MiB |`
_TABLE_PROCESS_RE = re.compile(
    r"^\s*\|\s+(?P<gpu>\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(?P<pid>\d+)\s+(?P<type>C\+G|M\+C|C|G|M)\s+"
    r"(?P<name>\S.*?)\s+(?P<mem>\d+)MiB\s*\|\s*$"
)


# the table's second GPU row (`| N/A 59C P0 690W / 700W | 1139MiB / 143771MiB | 100% Default |`): recognised, not read
_TABLE_GPU_ROW_RE = re.compile(r"^\s*\|\s*(?:\d+%|N/A)\s+(?:\d+C|N/A)\s+P\d+\s.*\|\s*\d+MiB\s*/\s*\d+MiB\s*\|")


def parse_table_process(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _TABLE_PROCESS_RE.match(line.text)
    if not m:
        return [] if _TABLE_GPU_ROW_RE.match(line.text) else None
    if "G" in m.group("type") and "C" not in m.group("type"):
        return []  # a graphics process (Xorg, a compositor): no compute on the GPU
    return [
        GpuProcess(
            **ctx.base(line, "host"),
            pid=int(m.group("pid")),
            name=m.group("name"),
            bus_id=m.group("gpu"),  # the table's GPU index: its bus id is in the GPU rows above
            memory_mib=int(m.group("mem")),
        )
    ]


# the collector's CPU fact (logdoctor/sources/hostscripts.py CPU_SCRIPT)
_CPU_GOVERNOR_RE = re.compile(r"^cpu governor: (?P<governor>\S+) \((?P<n>\d+) CPUs\)\s*$")
_CPU_PLACEMENT_RE = re.compile(
    r"^cpu placement: server pid (?P<pid>\d+): cpus (?P<cpus>[\d,\-]*), numa memory nodes (?P<nodes>[\d,\-]*)\s*$"
)


def parse_cpu(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _CPU_GOVERNOR_RE.match(line.text)
    if m:
        value = f"{m.group('governor')} ({m.group('n')} CPUs)"
        return [HostInfo(**ctx.base(line, "host"), kind="cpu", name="governor", value=value)]
    m = _CPU_PLACEMENT_RE.match(line.text)
    if m:
        value = f"pid {m.group('pid')}: cpus {m.group('cpus') or '?'}, memory nodes {m.group('nodes') or '?'}"
        return [HostInfo(**ctx.base(line, "host"), kind="cpu", name="placement", value=value)]
    return None


def parse_gpu_list(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _GPU_LIST_RE.match(line.text)
    if not m:
        return None
    return [GpuInfo(**ctx.base(line, "host"), index=int(m.group("index")), name=m.group("name"))]


def parse_driver(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _DRIVER_RE.search(line.text)
    if not m:
        return None
    base = ctx.base(line, "host")
    events: list[EventBase] = [HostInfo(**base, kind="driver", name="nvidia", value=m.group("driver"))]
    if m.group("cuda"):
        events.append(HostInfo(**base, kind="driver", name="cuda", value=m.group("cuda")))
    return events


def parse_hypervisor(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _HYPERVISOR_RE.search(line.text)
    if not m:
        return None
    return [HostInfo(**ctx.base(line, "host"), kind="hypervisor", name="hypervisor", value=m.group("vendor"))]


GRAMMARS: list[Grammar] = [
    Grammar(
        "host.gpu_matrix",
        "host",
        ("GPU0\t", "GPU0 ", "CPU Affinity"),
        parse_matrix_header,
        (
            case("sample-1", "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"),
            case("sample-2", " \tGPU0\tGPU1\t"),
            case(
                # collect_env's title on the header line (vectorch-ai/ScaleLLM#288's example output)
                "collect-env-title",
                "GPU topology: GPU0      CPU Affinity    NUMA Affinity   GPU NUMA ID\nGPU0     X      0-31,64-95      0"
                "               N/A",
                ("gpu_topology", {"gpus": 1, "links": {}}),
                exact=True,
            ),
            case(
                # a paste that elides the columns after the GPUs (eugenesiow/LLM-Insights, DGX H100)
                "elided-columns",
                "        GPU0    GPU1    GPU2    ...\nGPU0     X      NV18    NV18    ...\nGPU1    NV18     X      NV18    ...\n"
                "GPU2    NV18    NV18     X      ...",
                ("gpu_topology", {"gpus": 3, "links": {"0-1": "NV18", "0-2": "NV18", "1-2": "NV18"}}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "host.p2p_mode", "host", ("topo -p2p ",), parse_p2p_mode, (case("sample-1", "==> nvidia-smi topo -p2p r <=="),)
    ),
    Grammar(
        "host.query_gpu",
        "host",
        (
            "memory.total",
            "pci.bus_id",
            "driver_version",
            "utilization.gpu",
            "clocks.",
            "power.",
            "pcie.link.",
            "ecc.errors.",
            "remapped_rows.",
            "persistence_mode",
            "process_name",
            "used_gpu_memory",
        ),
        parse_csv_header,
        (
            case("sample-1", "index, name, pci.bus_id, memory.total [MiB], driver_version"),
            case(
                "state",
                "index, name, pci.bus_id, utilization.gpu [%], clocks.current.sm [MHz], clocks.max.sm [MHz], "
                "clocks_event_reasons.active, power.draw [W], power.limit [W], power.default_limit [W], "
                "pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max\n"
                "0, NVIDIA H200, 00000000:00:06.0, 100 %, 1440 MHz, 1980 MHz, 0x0000000000000004, 690.30 W, "
                "700.00 W, 700.00 W, 5, 5, 16, 16",
                (
                    "gpu_info",
                    {
                        "utilization_pct": 100,
                        "sm_clock_mhz": 1440,
                        "sm_clock_max_mhz": 1980,
                        "clock_events": ["power-cap"],
                        "power_draw_w": 690.3,
                        "power_limit_w": 700.0,
                        "pcie_generation": 5,
                        "pcie_width_max": 16,
                    },
                ),
                exact=True,
            ),
            case(
                "persistence",
                "index, persistence_mode, name\n0, Enabled, NVIDIA H200",
                ("gpu_info", {"persistence_mode": True}),
                exact=True,
            ),
            case(
                "health",
                "index, name, ecc.errors.uncorrected.volatile.total, remapped_rows.pending, remapped_rows.failure\n"
                "0, NVIDIA A100-SXM4-80GB, 2, Yes, No",
                ("gpu_info", {"ecc_uncorrected": 2, "remap_pending": True, "remap_failed": False}),
                exact=True,
            ),
            case(
                "compute-apps",
                "pid, process_name, gpu_bus_id, gpu_uuid, used_gpu_memory [MiB]\n"
                "616, python3, 00000000:00:06.0, GPU-91863083-9e4d-354f-d985-9ddc754c181b, 1130 MiB",
                ("gpu_process", {"pid": 616, "name": "python3", "bus_id": "00000000:00:06.0", "memory_mib": 1130}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "host.xid",
        "host",
        ("NVRM: Xid", "fallen off the bus"),
        parse_xid,
        (
            case(
                "dmesg",
                "[ 5123.118765] NVRM: Xid (PCI:0000:3b:00): 79, pid=2890, name=python3, GPU has fallen off the bus.",
                (
                    "gpu_xid",
                    {
                        "code": 79,
                        "bus_id": "0000:3b:00",
                        "message": "pid=2890, name=python3, GPU has fallen off the bus.",
                    },
                ),
                exact=True,
            ),
            case(
                "journal",
                "Dec 02 08:51:19 gpu7 kernel: NVRM: Xid (PCI:0000:ca:00): 48, pid=77, DBE (0x1,0x2a).",
                ("gpu_xid", {"code": 48, "bus_id": "0000:ca:00"}),
                exact=True,
            ),
            case(
                "off-bus-notice",
                "               NVRM: fallen off the bus and is not responding to commands.",
                ("gpu_xid", {"code": None, "bus_id": None}),
                exact=True,
            ),
            case(
                "off-bus-without-xid",
                "[  812.4] NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.",
                ("gpu_xid", {"code": None, "bus_id": "0000:41:00.0"}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "host.dcgm_diag",
        "host",
        ("| Fail", ": Fail "),
        parse_dcgm_diag,
        (
            # constructed rows in the table layout of DCGM 3.3 (NVIDIA/DCGM#55's output) and 4.2 (NVIDIA/DCGM#253's)
            case(
                "dcgm-3",
                "| PCIe                      | Fail - GPU: 3                                  |",
                ("gpu_diag", {"test": "PCIe", "result": "Fail", "gpus": [3]}),
                exact=True,
            ),
            case(
                "dcgm-4",
                "| memory                    | Fail                                           |\n"
                "|                           | GPU0: Pass                                     |\n"
                "|                           | GPU1: Fail                                     |",
                ("gpu_diag", {"test": "memory", "result": "Fail", "gpus": [1]}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "host.smi_table_process",
        "host",
        ("MiB |",),
        parse_table_process,
        (
            case(
                # the captured H200 under load (fixtures/inputs/env/nvidia-smi-h200-load-captured.txt)
                "driver-580",
                "|    0   N/A  N/A             616      C   python3                                1130MiB |",
                ("gpu_process", {"pid": 616, "name": "python3", "bus_id": "0", "memory_mib": 1130}),
                exact=True,
            ),
            case(
                "no-gi-ci",
                "|    0      5284    C   python3                                       3567MiB |",
                ("gpu_process", {"pid": 5284, "memory_mib": 3567}),
                exact=True,
            ),
            case(
                "graphics",
                "|    0      1563    G   /usr/lib/xorg/Xorg                             162MiB |",
                exact=True,
            ),
            case(
                "gpu-row",
                "| N/A   59C    P0            690W /  700W |    1139MiB / 143771MiB |    100%      Default |",
                exact=True,
            ),
        ),
    ),
    Grammar(
        "host.cpu",
        "host",
        ("cpu governor: ", "cpu placement: "),
        parse_cpu,
        (
            case(
                "governor",
                "cpu governor: powersave (64 CPUs)",
                ("host_info", {"kind": "cpu", "name": "governor", "value": "powersave (64 CPUs)"}),
                exact=True,
            ),
            case(
                "placement",
                "cpu placement: server pid 4242: cpus 0-31,64-95, numa memory nodes 0",
                (
                    "host_info",
                    {"kind": "cpu", "name": "placement", "value": "pid 4242: cpus 0-31,64-95, memory nodes 0"},
                ),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "host.gpu_list",
        "host",
        ("(UUID: GPU-",),
        parse_gpu_list,
        (case("sample-1", "GPU 0: NVIDIA H200 (UUID: GPU-3c1e0a)", ("gpu_info", {})),),
    ),
    Grammar(
        "host.driver",
        "host",
        ("Driver Version:",),
        parse_driver,
        (
            case(
                "sample-1",
                "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |",
                ("host_info", {}),
            ),
        ),
    ),
    Grammar(
        "host.hypervisor",
        "host",
        ("Hypervisor vendor:",),
        parse_hypervisor,
        (case("sample-1", "Hypervisor vendor:: KVM", ("host_info", {})),),
    ),
]
