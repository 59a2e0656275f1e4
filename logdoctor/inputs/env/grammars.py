"""Environment dumps users paste beside a log: `vllm collect-env` / `python collect_env.py` (PyTorch's format, the
vLLM 0.9+ sectioned `key : value` one too), `python -m sglang.check_env`, and `nvidia-smi -q`.

    PyTorch version              : 2.7.0+cu126              -> HostInfo(kind="version", name="torch")
    GPU models and configuration :                          -> GpuInfo per `GPU N: name` line that follows
    GPU 0: NVIDIA H100 80GB HBM3
    Nvidia driver version        : 570.124.06               -> HostInfo(kind="driver", name="nvidia")
    vLLM Version                 : 0.9.1                    -> HostInfo(kind="version", name="vllm")
    [pip3] nvidia-nccl-cu12==2.26.2                         -> HostInfo(kind="package", name="nvidia-nccl-cu12")
         Environment Variables                              -> HostInfo(kind="env") for each NAME=value line,
    NCCL_CUMEM_ENABLE=0                                        and NcclEnv for NCCL_* (the NCCL facts read it)

The topology matrix collect_env and check_env embed (`GPU Topology:` / `NVIDIA Topology:`) is read by the host
package's matrix line type. Key names come from vLLM 0.33.0 `vllm/collect_env.py` (`env_info_fmt`), SGLang
0.5.23 `sglang/check_env.py` (`check_env`) and a captured `nvidia-smi -q` of driver 580.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from logdoctor.events import EventBase, GpuInfo, GpuProcess, HostInfo, NcclEnv
from logdoctor.inputs.host import gpustate
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine, has_header
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

_NOT_COLLECTED = ("Could not collect", "N/A", "None", "Not Available", "No CUDA", "")


def _host(line: LogLine, ctx: ParseContext, kind: str, name: str, value: str) -> HostInfo:
    return HostInfo(**ctx.base(line, "env"), kind=kind, name=name, value=value)  # type: ignore[arg-type]


def _version(text: str) -> str:
    """`0.10.1.dev1+g1234 (git sha: 1234)` -> `0.10.1.dev1+g1234`; `12.4.131` stays."""
    return text.split()[0] if text.split() else text


# --- collect_env: one-line keys --------------------------------------------------------------------------

# `PyTorch version: 2.4.0+cu121` (PyTorch's format, vLLM < 0.9) and `PyTorch version              : 2.7.0`
_COLLECT_KEY_RE = re.compile(
    r"^\s*(?P<key>PyTorch version|CUDA used to build PyTorch|CUDA runtime version|Nvidia driver version|vLLM Version)"
    r"\s*:\s*(?P<value>.*?)\s*$"
)
_COLLECT_KEYS: dict[str, tuple[str, str]] = {
    "PyTorch version": ("version", "torch"),
    "CUDA used to build PyTorch": ("version", "torch-cuda"),
    "CUDA runtime version": ("version", "cuda-runtime"),
    "Nvidia driver version": ("driver", "nvidia"),
    "vLLM Version": ("version", "vllm"),
}


def parse_collect_key(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _COLLECT_KEY_RE.match(line.text)
    if not m:
        return None
    value = m.group("value")
    if value in _NOT_COLLECTED:
        return []
    kind, name = _COLLECT_KEYS[m.group("key")]
    return [_host(line, ctx, kind, name, _version(value))]


# --- collect_env: the GPU list ------------------------------------------------------------------------------

_GPU_MODELS_RE = re.compile(r"^\s*GPU models and configuration\s*:\s*(?P<rest>.*?)\s*$")
_GPU_LINE_RE = re.compile(r"^\s*GPU (?P<index>\d+): (?P<name>.+?)(?: \(UUID: [^)]*\))?\s*$")


def _gpu(line: LogLine, ctx: ParseContext, m: re.Match[str]) -> GpuInfo:
    return GpuInfo(**ctx.base(line, "env"), index=int(m.group("index")), name=m.group("name"))


def _read_gpu_list(seen: list[int]) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        if blocks.is_blank(line):
            if seen:
                ctx.block = None
            return []  # the blank line before the list (`maybe_start_on_next_line`) or after it
        m = _GPU_LINE_RE.match(line.text)
        if not m:
            ctx.block = None
            return None
        seen.append(int(m.group("index")))
        return [_gpu(line, ctx, m)]

    return read


def parse_gpu_models(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _GPU_MODELS_RE.match(line.text)
    if not m:
        return None
    rest = m.group("rest")
    inline = _GPU_LINE_RE.match(rest)
    if inline:
        return [_gpu(line, ctx, inline)]
    if rest in _NOT_COLLECTED:
        ctx.block = _read_gpu_list([])
        return []
    # one GPU named without an index (ROCm: `AMD Radeon RX 7900 XTX (gfx1100)`)
    return [GpuInfo(**ctx.base(line, "env"), index=0, name=rest)]


# --- collect_env: environment variables -------------------------------------------------------------------

# vLLM 0.9+ prints them under an `Environment Variables` section; older collect_env after the topology legend
_ENV_SECTION_RE = re.compile(r"^\s*Environment Variables\s*$")
_LEGEND_END_RE = re.compile(r"^\s*NV#\s+= Connection traversing a bonded set of # NVLinks\s*$")
_ENV_VAR_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*?)\s*$")
_RULE_RE = re.compile(r"^\s*={5,}\s*$")


def _env_events(line: LogLine, ctx: ParseContext, name: str, value: str) -> list[EventBase]:
    events: list[EventBase] = [_host(line, ctx, "env", name, value)]
    if name.startswith("NCCL_"):
        events.append(NcclEnv(**ctx.base(line, "env"), name=name, value=value))
    return events


def _read_env(state: dict[str, int]) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text
        if blocks.is_blank(line) or _RULE_RE.match(text):
            if state["vars"]:
                ctx.block = None
                return []
            state["gap"] += 1
            if state["gap"] > 3:
                ctx.block = None
            return []
        m = _ENV_VAR_RE.match(text)
        if not m:
            ctx.block = None
            return None
        state["vars"] += 1
        return _env_events(line, ctx, m.group("name"), m.group("value"))

    return read


def parse_env_section(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if not (_ENV_SECTION_RE.match(line.text) or _LEGEND_END_RE.match(line.text)):
        return None
    ctx.block = _read_env({"vars": 0, "gap": 0})
    return []


# --- collect_env / conda: package lines -------------------------------------------------------------------

# `[pip3] nvidia-nccl-cu12==2.21.5`, `[conda] torch                     2.5.1                    pypi_0    pypi`
_PACKAGE_RE = re.compile(r"^\s*\[(?:pip3?|conda|uv)\] (?P<name>[A-Za-z0-9][\w.\-]*)\s*(?:==|\s)\s*(?P<version>\S+)")
# the packages whose versions decide speed; the others are recognised and dropped
_RELEVANT_PACKAGE_RE = re.compile(
    r"^(?:torch|triton|transformers|vllm|sglang|sgl[-_]kernel|flashinfer.*|flash[-_]attn|xformers"
    r"|nvidia-nccl-cu\d+|nccl|nvidia-cudnn-cu\d+|nvidia-cuda-runtime-cu\d+|pynvml|nvidia-ml-py)$",
    re.IGNORECASE,
)


def parse_package(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _PACKAGE_RE.match(line.text)
    if not m:
        return None
    name = m.group("name").lower()
    if not _RELEVANT_PACKAGE_RE.match(name):
        return []
    return [_host(line, ctx, "package", name, m.group("version"))]


# --- python -m sglang.check_env ---------------------------------------------------------------------------

_COLLECT_CUDA_RE = re.compile(r"^\s*Is CUDA available\s*: ")
_CHECK_ENV_START_RE = re.compile(r"^\s*CUDA available: (?P<value>\S+)\s*$")
_CHECK_ROW_RE = re.compile(r"^(?P<key>[A-Za-z_][\w .,\-]*?):{1,2} ?(?P<value>.*?)\s*$")
_CHECK_GPUS_RE = re.compile(r"^GPU (?P<ids>\d+(?:,\d+)*)(?::|$)")
_BARE_VERSION_RE = re.compile(r"^\s*\d+(?:\.\d+)+\s*$")
_NVCC_RE = re.compile(r"release (?P<version>\d+\.\d+)")
_CHECK_VERSIONS = {"PyTorch": "torch", "sglang": "sglang", "vllm": "vllm"}


def _check_row(line: LogLine, ctx: ParseContext, key: str, value: str) -> list[EventBase]:
    gpus = _CHECK_GPUS_RE.match(key)
    if gpus:  # `GPU 0,1,2,3: NVIDIA H100 80GB HBM3` (check_env groups GPUs of one name)
        base = ctx.base(line, "env")
        return [GpuInfo(**base, index=int(i), name=value) for i in gpus.group("ids").split(",")]
    if value in _NOT_COLLECTED or value == "Module Not Found":
        return []
    if key == "CUDA Driver Version":
        return [_host(line, ctx, "driver", "nvidia", _version(value))]
    if key == "NVCC":
        nvcc = _NVCC_RE.search(value)
        return [_host(line, ctx, "version", "cuda-runtime", nvcc.group("version"))] if nvcc else []
    if key == "Hypervisor vendor":
        return [_host(line, ctx, "hypervisor", "hypervisor", value)]
    if key in _CHECK_VERSIONS:
        return [_host(line, ctx, "version", _CHECK_VERSIONS[key], _version(value))]
    if _RELEVANT_PACKAGE_RE.match(key):
        return [_host(line, ctx, "package", key.lower(), _version(value))]
    return []


def _read_check_env(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    text = line.text
    if blocks.is_blank(line) or has_header(line):
        ctx.block = None
        return None if has_header(line) else []
    if _BARE_VERSION_RE.match(text):
        return []  # older check_env printed the driver version once a GPU (sgl-project/sglang#748)
    m = _CHECK_ROW_RE.match(text)
    if not m:
        ctx.block = None
        return None
    key, value = m.group("key"), m.group("value")
    if key == "NVIDIA Topology":
        ctx.block = None  # the matrix that follows is the host package's
        return []
    return _check_row(line, ctx, key, value)


def parse_check_env(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if _COLLECT_CUDA_RE.match(line.text):
        return []  # collect_env's `Is CUDA available: True` shares the keyword
    if not _CHECK_ENV_START_RE.match(line.text):
        return None
    ctx.block = _read_check_env
    return []


# --- nvidia-smi -q ------------------------------------------------------------------------------------------

_SMI_OPEN = "env.smi_gpu"  # the GPU section being read, so `finish` can emit it
_SMI_START_RE = re.compile(r"^\s*(?:=+NVSMI LOG=+|Attached GPUs\s+: \d+)\s*$")
_SMI_GPU_RE = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_SMI_ROW_RE = re.compile(r"^(?P<indent> *)(?P<key>\S.*?)(?:\s+: ?(?P<value>.*?))?\s*$")
_SMI_TOP_KEYS = ("Timestamp", "Driver Version", "CUDA Version", "Attached GPUs")
_LEADING_INT_RE = re.compile(r"^(?P<n>\d+)")


@dataclass
class _SmiGpu:
    header: LogLine
    bus_id: str
    ordinal: int
    rows: dict[tuple[str, ...], str] = field(default_factory=dict)
    end: int | None = None
    processes: list[tuple[LogLine, dict[str, str]]] = field(default_factory=list)  # the Processes section


@dataclass
class _Smi:
    path: list[str] = field(default_factory=list)
    driver: str | None = None
    gpus: int = 0
    gpu: _SmiGpu | None = None


def _int(text: str | None) -> int | None:
    m = _LEADING_INT_RE.match(text or "")
    return int(m.group("n")) if m else None


def _smi_processes(gpu: _SmiGpu, bus_id: str, ctx: ParseContext) -> list[EventBase]:
    return [
        GpuProcess(
            **ctx.base(line, "env"),
            pid=_int(rows.get("Process ID")),
            name=rows.get("Name") or "?",
            bus_id=bus_id,
            memory_mib=_int(rows.get("Used GPU Memory")),
        )
        for line, rows in gpu.processes
    ]


def _smi_event(gpu: _SmiGpu, smi: _Smi, ctx: ParseContext) -> list[EventBase]:
    ctx.state.pop(_SMI_OPEN, None)
    rows = gpu.rows
    # `nvidia-smi -q -d POWER,PERFORMANCE` prints no Product Name: the GPU is known by its bus id only
    name = rows.get(("Product Name",)) or ""
    if not rows:
        return []
    link = ("PCI", "GPU Link Info")
    persistence = rows.get(("Persistence Mode",))
    base = ctx.base(gpu.header, "env")
    base["end_line"] = gpu.end
    bus_id = rows.get(("PCI", "Bus Id")) or gpu.bus_id
    return [
        GpuInfo(
            **base,
            index=gpu.ordinal,
            name=name,
            memory_mib=_int(rows.get(("FB Memory Usage", "Total"))),
            driver=smi.driver,
            bus_id=bus_id,
            pcie_generation=_int(rows.get((*link, "PCIe Generation", "Current"))),
            pcie_generation_max=_int(rows.get((*link, "PCIe Generation", "Max"))),
            pcie_width=_int(rows.get((*link, "Link Width", "Current"))),
            pcie_width_max=_int(rows.get((*link, "Link Width", "Max"))),
            persistence_mode=None if persistence not in ("Enabled", "Disabled") else persistence == "Enabled",
            sm_clock_mhz=_int(rows.get(("Clocks", "SM"))),
            sm_clock_max_mhz=_int(rows.get(("Max Clocks", "SM"))),
            **gpustate.from_smi_rows(rows),
        ),
        *_smi_processes(gpu, bus_id, ctx),
    ]


def _read_smi(smi: _Smi) -> BlockFn:
    def close(ctx: ParseContext) -> list[EventBase]:
        gpu, smi.gpu = smi.gpu, None
        return _smi_event(gpu, smi, ctx) if gpu is not None else []

    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        raw = line.text.rstrip()
        if not raw.strip():
            return []
        gpu = _SMI_GPU_RE.match(raw)
        if gpu:
            events = close(ctx)
            smi.gpu = _SmiGpu(header=line, bus_id=gpu.group("bus"), ordinal=smi.gpus)
            smi.gpus += 1
            smi.path = []
            ctx.state[_SMI_OPEN] = (smi.gpu, smi)
            return events
        # -q indents by four spaces and never aligns with tabs or space runs inside a name: a tab, or a
        # section name with a run of spaces, is the next output (`nvidia-smi topo -m`'s header)
        m = None if "\t" in raw else _SMI_ROW_RE.match(raw)
        if m is not None and m.group("value") is None and "  " in m.group("key"):
            m = None
        indent = len(m.group("indent")) // 4 if m else 0
        top = m is not None and indent == 0 and m.group("key") in _SMI_TOP_KEYS
        if m is None or has_header(line) or (indent == 0 and not top) or (indent > 0 and smi.gpu is None):
            ctx.block = None
            blocks.stash(ctx, close(ctx))
            return None
        key, value = m.group("key"), m.group("value")
        if top:
            if key == "Driver Version" and value:
                smi.driver = value
                return [_host(line, ctx, "driver", "nvidia", value)]
            if key == "CUDA Version" and value:
                return [_host(line, ctx, "driver", "cuda", value)]
            return []
        del smi.path[indent - 1 :]
        if smi.gpu is not None and smi.path[:1] == ["Processes"] and value is not None:
            # one block a process: `Process ID : 616`, then its `Type`, `Name`, `Used GPU Memory`
            if key == "Process ID":
                smi.gpu.processes.append((line, {}))
            if smi.gpu.processes:
                smi.gpu.processes[-1][1].setdefault(key, value)
            smi.gpu.end = line.number
            return []
        if value is None:
            smi.path.append(key)  # a section: `    PCI`, `        GPU Link Info`
        elif smi.gpu is not None:
            smi.gpu.rows.setdefault((*smi.path, key), value)
            smi.gpu.end = line.number
        return []

    return read


def parse_smi_q(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if not _SMI_START_RE.match(line.text):
        return None
    ctx.block = _read_smi(_Smi())
    return []


# --- a rig report's GPU hardware section (club-3090 `scripts/report.sh`, pasted in its issue threads) ------------
#
# - **GPU 0:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 595.71.05 | VBIOS 94.02.59.00.D6 | persistence=Disabled
#   - **Power:** limit=250.00 W (default=350.00 W, max=350.00 W) | current_draw=15.75 W ⚠ user-capped below default
#   - **PCIe:** x8 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:04:00.0 ⚠ slot is narrower than ...

_RIG_OPEN = "env.rig_gpu"
_RIG_GPU_RE = re.compile(
    r"^\s*- \*\*GPU (?P<index>\d+):\*\* (?P<name>[^|]+?) \| (?P<mem>\d+) MiB \| driver (?P<driver>[\d.]+)"
    r"(?:.*?\bpersistence=(?P<persistence>Enabled|Disabled))?"
)
_RIG_POWER_RE = re.compile(
    r"^\s+- \*\*Power:\*\* limit=(?P<limit>[\d.]+) W \(default=(?P<default>[\d.]+) W, max=(?P<max>[\d.]+) W\)"
    r"(?: \| current_draw=(?P<draw>[\d.]+) W)?"
)
_RIG_PCIE_RE = re.compile(
    r"^\s+- \*\*PCIe:\*\* x(?P<width>\d+) lanes negotiated \(GPU max x(?P<width_max>\d+), Gen up to (?P<gen>\d+)\)"
    r"(?: \| bus (?P<bus>[0-9A-Fa-f:.]+))?"
)


@dataclass
class _RigGpu:
    header: LogLine
    fields: dict[str, object]
    end: int


def _rig_event(gpu: _RigGpu, ctx: ParseContext) -> list[EventBase]:
    ctx.state.pop(_RIG_OPEN, None)
    base = ctx.base(gpu.header, "env")
    base["end_line"] = gpu.end
    return [GpuInfo(**base, **gpu.fields)]  # type: ignore[arg-type]


def _read_rig(gpu: _RigGpu) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        power = _RIG_POWER_RE.match(line.text)
        if power:
            gpu.fields.update(
                power_limit_w=float(power.group("limit")),
                power_default_limit_w=float(power.group("default")),
                power_max_limit_w=float(power.group("max")),
                power_draw_w=float(power.group("draw")) if power.group("draw") else None,
            )
            gpu.end = line.number
            return []
        pcie = _RIG_PCIE_RE.match(line.text)
        if pcie:
            gpu.fields.update(
                pcie_width=int(pcie.group("width")),
                pcie_width_max=int(pcie.group("width_max")),
                pcie_generation_max=int(pcie.group("gen")),
            )
            if pcie.group("bus"):
                gpu.fields["bus_id"] = pcie.group("bus")
            gpu.end = line.number
            return []
        ctx.block = None  # the next GPU, or the end of the section
        blocks.stash(ctx, _rig_event(gpu, ctx))
        return None

    return read


def parse_rig_gpu(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _RIG_GPU_RE.match(line.text)
    if not m:
        return None
    persistence = m.group("persistence")
    fields: dict[str, object] = {
        "index": int(m.group("index")),
        "name": m.group("name").strip(),
        "memory_mib": int(m.group("mem")),
        "driver": m.group("driver"),
        "persistence_mode": None if persistence is None else persistence == "Enabled",
    }
    gpu = _RigGpu(header=line, fields=fields, end=line.number)
    ctx.state[_RIG_OPEN] = gpu
    ctx.block = _read_rig(gpu)
    return []


def finish(ctx: ParseContext) -> list[EventBase]:
    """An `nvidia-smi -q` GPU section, or a rig report's GPU, still open when the source ends."""
    events: list[EventBase] = []
    open_gpu = ctx.state.get(_SMI_OPEN)
    if isinstance(open_gpu, tuple):
        gpu, smi = open_gpu
        ctx.block = None
        events.extend(_smi_event(gpu, smi, ctx))
    rig = ctx.state.get(_RIG_OPEN)
    if isinstance(rig, _RigGpu):
        ctx.block = None
        events.extend(_rig_event(rig, ctx))
    return events


_SMI_SAMPLE = """\
==============NVSMI LOG==============

Timestamp                                              : Tue Dec  1 11:32:16 2026
Driver Version                                         : 580.159.04
CUDA Version                                           : 13.0

Attached GPUs                                          : 1
GPU 00000000:00:06.0
    Product Name                                       : NVIDIA H200
    Persistence Mode                                   : Enabled
    PCI
        Bus Id                                         : 00000000:00:06.0
        GPU Link Info
            PCIe Generation
                Max                                    : 5
                Current                                : 5
            Link Width
                Max                                    : 16x
                Current                                : 16x
    FB Memory Usage
        Total                                          : 143771 MiB
    Clocks
        SM                                             : 345 MHz
    Max Clocks
        SM                                             : 1980 MHz"""

GRAMMARS: list[Grammar] = [
    Grammar(
        "env.rig_report_gpu",
        "env",
        ("- **GPU ",),
        parse_rig_gpu,
        (
            case(
                # noonghunna/club-3090#747 (a rig report's GPU hardware section)
                "club-3090",
                "- **GPU 0:** NVIDIA GeForce RTX 3090 | 24576 MiB | driver 610.43.03 | VBIOS 94.02.59.00.D6 | "
                "persistence=Disabled\n"
                "  - **Power:** limit=250.00 W (default=350.00 W, max=350.00 W) | current_draw=15.75 W ⚠ user-capped "
                "below default\n"
                "  - **PCIe:** x8 lanes negotiated (GPU max x16, Gen up to 4) | bus 00000000:04:00.0 ⚠ slot is "
                "narrower than GPU capability — affects load + all-reduce bandwidth",
                (
                    "gpu_info",
                    {
                        "index": 0,
                        "name": "NVIDIA GeForce RTX 3090",
                        "memory_mib": 24576,
                        "power_limit_w": 250.0,
                        "power_default_limit_w": 350.0,
                        "pcie_width": 8,
                        "pcie_width_max": 16,
                        "pcie_generation_max": 4,
                        "bus_id": "00000000:04:00.0",
                    },
                ),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "env.collect_env_key",
        "env",
        (
            "PyTorch version",
            "CUDA used to build PyTorch",
            "CUDA runtime version",
            "Nvidia driver version",
            "vLLM Version",
        ),
        parse_collect_key,
        (
            case(
                "torch-old-format",
                "PyTorch version: 2.4.0+cu121",
                ("host_info", {"kind": "version", "value": "2.4.0+cu121"}),
            ),
            case(
                "cuda-build", "CUDA used to build PyTorch: 12.1", ("host_info", {"name": "torch-cuda", "value": "12.1"})
            ),
            case(
                "cuda-runtime-sectioned",
                "CUDA runtime version         : 12.9.41",
                ("host_info", {"name": "cuda-runtime", "value": "12.9.41"}),
            ),
            case("driver", "Nvidia driver version: 551.88", ("host_info", {"kind": "driver", "value": "551.88"})),
            case(
                "vllm-version-git",
                "vLLM Version                 : 0.10.1.dev1+gabc (git sha: abc)",
                ("host_info", {"name": "vllm", "value": "0.10.1.dev1+gabc"}),
            ),
            case("not-collected", "CUDA runtime version: Could not collect", exact=True),
        ),
    ),
    Grammar(
        "env.gpu_models",
        "env",
        ("GPU models and configuration",),
        parse_gpu_models,
        (
            case(
                "inline",
                "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4070 Laptop GPU",
                ("gpu_info", {"index": 0, "name": "NVIDIA GeForce RTX 4070 Laptop GPU"}),
                exact=True,
            ),
            case(
                "list",
                "GPU models and configuration : \nGPU 0: NVIDIA H100 80GB HBM3\nGPU 1: NVIDIA H100 80GB HBM3\n",
                ("gpu_info", {"index": 0, "name": "NVIDIA H100 80GB HBM3"}),
                ("gpu_info", {"index": 1}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "env.env_vars",
        "env",
        ("Environment Variables", "Connection traversing a bonded set of # NVLinks"),
        parse_env_section,
        (
            case(
                "sectioned",
                "==============================\n     Environment Variables\n==============================\n"
                "NCCL_CUMEM_ENABLE=0\nVLLM_WORKER_MULTIPROC_METHOD=spawn\n",
                ("host_info", {"kind": "env", "name": "NCCL_CUMEM_ENABLE", "value": "0"}),
                ("nccl_env", {"name": "NCCL_CUMEM_ENABLE", "value": "0"}),
                ("host_info", {"kind": "env", "name": "VLLM_WORKER_MULTIPROC_METHOD", "value": "spawn"}),
                exact=True,
            ),
            case(
                "after-legend",
                "  NV#  = Connection traversing a bonded set of # NVLinks\n\nNCCL_P2P_DISABLE=1\n",
                ("host_info", {"kind": "env", "name": "NCCL_P2P_DISABLE"}),
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1"}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "env.package",
        "env",
        ("[pip3] ", "[pip] ", "[conda] ", "[uv] "),
        parse_package,
        (
            case("pip3-nccl", "[pip3] nvidia-nccl-cu12==2.21.5", ("host_info", {"kind": "package", "value": "2.21.5"})),
            case("pip", "[pip] torch==2.7.0", ("host_info", {"name": "torch", "value": "2.7.0"})),
            case(
                "conda",
                "[conda] torch                     2.5.1                    pypi_0    pypi",
                ("host_info", {"name": "torch", "value": "2.5.1"}),
            ),
            case("uv-irrelevant", "[uv] numpy==2.2.6", exact=True),
        ),
    ),
    Grammar(
        "env.check_env",
        "env",
        ("CUDA available: ",),
        parse_check_env,
        (
            case("collect-env-cuda-available", "Is CUDA available             : True", exact=True),
            case(
                "sglang-check-env",
                "CUDA available: True\nGPU 0,1: NVIDIA H100 80GB HBM3\nGPU 0,1 Compute Capability: 9.0\n"
                "CUDA_HOME: /usr/local/cuda\nNVCC: Cuda compilation tools, release 12.4, V12.4.131\n"
                "CUDA Driver Version: 550.54.15\n550.54.15\nPyTorch: 2.5.1+cu124\nsglang: 0.4.1.post4\nflashinfer: Module Not Found\n"
                "NVIDIA Topology: \nHypervisor vendor: KVM",
                ("gpu_info", {"index": 0, "name": "NVIDIA H100 80GB HBM3"}),
                ("gpu_info", {"index": 1}),
                ("host_info", {"name": "cuda-runtime", "value": "12.4"}),
                ("host_info", {"kind": "driver", "value": "550.54.15"}),
                ("host_info", {"name": "torch", "value": "2.5.1+cu124"}),
                ("host_info", {"name": "sglang", "value": "0.4.1.post4"}),
                ("host_info", {"kind": "hypervisor", "value": "KVM"}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "env.nvidia_smi_q",
        "env",
        ("NVSMI LOG", "Attached GPUs"),
        parse_smi_q,
        (
            case(
                "h200-driver-580",
                _SMI_SAMPLE,
                ("host_info", {"kind": "driver", "name": "nvidia", "value": "580.159.04"}),
                ("host_info", {"kind": "driver", "name": "cuda", "value": "13.0"}),
                (
                    "gpu_info",
                    {
                        "index": 0,
                        "name": "NVIDIA H200",
                        "memory_mib": 143771,
                        "bus_id": "00000000:00:06.0",
                        "pcie_generation_max": 5,
                        "pcie_width": 16,
                        "persistence_mode": True,
                        "sm_clock_max_mhz": 1980,
                    },
                ),
                exact=True,
            ),
            case("attached-only", "Attached GPUs                                          : 2", exact=True),
        ),
    ),
]
