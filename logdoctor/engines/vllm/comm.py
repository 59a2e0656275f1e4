"""vLLM line types: §5 custom all-reduce, P2P, NCCL, distributed init (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import (
    Events,
    NoticeBuild,
    _base,
    _event,
    _grammar,
    _msg,
    _names,
    _notices,
    _table_warning,
)
from logdoctor.events import (
    AllReduceBackends,
    AllReduceReason,
    CustomAllReduce,
    NcclEnv,
    NcclInfo,
    NcclVersion,
    P2PCheck,
    PerfWarning,
    WarningTopic,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# Why custom all-reduce is off: (regex, reason code).
_CUSTOM_AR_DISABLED: tuple[tuple[re.Pattern[str], AllReduceReason], ...] = (
    (re.compile(r"lacks GPU P2P capability or P2P test failed"), "no-p2p"),
    (re.compile(r"not supported on more than two PCIe-only GPU"), "pcie-more-than-two"),
    (re.compile(r"unsupported world size"), "world-size"),
    (re.compile(r"process group spans across nodes|multi-node group does not"), "spans-nodes"),
    (re.compile(r"missing custom allreduce library"), "library"),
)
_CUSTOM_AR_RE = re.compile(r"Custom (?:allreduce|collectives) (?:is|are) disabled")
_CUDA_GRAPH_ADDRESSES_RE = re.compile(r"Registering (?P<n>\d+) cuda graph addresses")
_P2P_CACHE_RE = re.compile(r"(?:reading|generating) GPU P2P access cache (?:from|in) (?P<path>\S+)")
_P2P_DISAGREE_RE = re.compile(r"Two processes do not agree on the P2P access status on (?P<src>\d+) -> (?P<dst>\d+)")
_P2P_SKIP_RE = re.compile(r"Skipping P2P check and trusting the driver's P2P report")
_NCCL_VERSION_RE = re.compile(r"vLLM is using nccl==(?P<ver>[\w.+-]+)")
_NCCL_LIBRARY_RE = re.compile(
    r"Found nccl from (?:library (?P<lib>\S+)|environment variable VLLM_NCCL_SO_PATH=(?P<env>\S+))"
)
_NCCL_LOAD_FAILED_RE = re.compile(r"Failed to load NCCL library from (?P<lib>\S+?)\.? ")
_AR_BACKENDS_RE = re.compile(
    r"Using (?P<backends>\[[^\]]*\]) all-reduce backends \(in dispatch order\) for group '(?P<group>[^']*)'"
    r"(?: out of potential backends: (?P<cands>\[[^\]]*\]))?"
)
_FLASHINFER_AR_RE = re.compile(r"(?:Using|Auto-selected) flashinfer allreduce backend: (?P<backend>\S+)")
_DIST_INIT_RE = re.compile(
    r"world_size=(?P<world>\d+) rank=(?P<rank>\d+) local_rank=(?P<local>\d+) "
    r"distributed_init_method=(?P<method>\S+) backend=(?P<backend>\w+)"
)
_RANK_ASSIGN_RE = re.compile(r"rank (?P<rank>\d+) in world size (?P<world>\d+) is assigned as (?P<rest>.*)")
_RANK_PART_RE = re.compile(r"\b(?P<group>DP|PP|PCP|TP|DCP|ETP|EP|EPLB) rank (?P<value>\d+|N/A)")
_RAY_TP_SPREAD_RE = re.compile(r"tensor_parallel_size=(?P<tp>\d+) is bigger than a reserved number of (?P<dev>\w+?)s")
_ALL2ALL_RE = re.compile(r"Using (?P<manager>\S+) all2all manager")
# Communication warnings without a more specific event: (regex, PerfWarning topic).
_COMM_WARNINGS: tuple[tuple[re.Pattern[str], WarningTopic], ...] = (
    (re.compile(r"SymmMemCommunicator: .*(?:not available|not supported|failed)"), "symm-mem"),
    (re.compile(r"To enable VLLM_USE_NCCL_SYMM_MEM"), "nccl-symm-mem"),
    (re.compile(r"Failed to compile NCCL memory allocator"), "nccl-symm-mem"),
    (re.compile(r"Failed to initialize FlashInfer All Reduce workspace"), "flashinfer-allreduce"),
    (re.compile(r"FlashInfer All Reduce is disabled"), "flashinfer-allreduce"),
    (re.compile(r"AllReduce fusion pass is disabled"), "allreduce-fusion"),
    (re.compile(r"NCCL_CUMEM_ENABLE is set to \S+, skipping override"), "nccl-cumem"),
    (re.compile(r"Reducing Torch parallelism from \d+ threads to \d+"), "cpu-threads"),
)


def parse_custom_allreduce(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    if _CUSTOM_AR_RE.search(text):
        reason = next((code for pattern, code in _CUSTOM_AR_DISABLED if pattern.search(text)), None)
        return [CustomAllReduce(**_base(line, ctx), enabled=False, reason=reason, message=_msg(line))]
    if _CUDA_GRAPH_ADDRESSES_RE.search(text):
        # Only the custom all-reduce registers CUDA-graph buffers: positive evidence that it is in use.
        return [CustomAllReduce(**_base(line, ctx), enabled=True, message=_msg(line))]
    return None


# vLLM 0.33 (distributed/parallel_state.py): collectives over gloo (host memory, TCP) instead of NCCL.
_GLOO_FALLBACK_RE = re.compile(r"Distributed backend (?P<backend>\w+) is not available; falling back to gloo")


def parse_comm(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _GLOO_FALLBACK_RE.search(text)
    if m:
        fallback = {"backend": "gloo", "requested_backend": m.group("backend")}
        return [NcclInfo(**base, kind="distributed-init", message=_msg(line), values=fallback)]
    m = _NCCL_VERSION_RE.search(text)
    if m:
        return [NcclVersion(**base, version=m.group("ver"))]
    m = _AR_BACKENDS_RE.search(text)
    if m:
        backends = _names(m.group("backends"))
        events: Events = [
            AllReduceBackends(**base, backends=backends, group=m.group("group"), candidates=_names(m.group("cands")))
        ]
        if "CUSTOM" in backends:
            events.append(CustomAllReduce(**base, enabled=True, message=_msg(line)))
        return events
    if _P2P_CACHE_RE.search(text) or _P2P_SKIP_RE.search(text):
        return [P2PCheck(**base, supported=None, message=_msg(line))]
    if _P2P_DISAGREE_RE.search(text):
        return [P2PCheck(**base, supported=False, message=_msg(line))]
    m = _DIST_INIT_RE.search(text)
    if m:
        values: dict[str, str | int | float | bool] = {
            "world_size": int(m.group("world")),
            "rank": int(m.group("rank")),
            "local_rank": int(m.group("local")),
            "distributed_init_method": m.group("method"),
            "backend": m.group("backend"),
        }
        return [NcclInfo(**base, kind="distributed-init", message=_msg(line), values=values)]
    m = _RANK_ASSIGN_RE.search(text)
    if m:
        values = {"rank": int(m.group("rank")), "world_size": int(m.group("world"))}
        for part in _RANK_PART_RE.finditer(m.group("rest")):
            value = part.group("value")
            values[f"{part.group('group').lower()}_rank"] = int(value) if value.isdigit() else value
        return [NcclInfo(**base, kind="rank-assignment", message=_msg(line), values=values)]
    m = _NCCL_LIBRARY_RE.search(text)
    if m:
        return [
            NcclInfo(**base, kind="library", message=_msg(line), values={"library": m.group("lib") or m.group("env")})
        ]
    m = _NCCL_LOAD_FAILED_RE.search(text)
    if m:
        return [NcclInfo(**base, kind="library-load-failed", message=_msg(line), values={"library": m.group("lib")})]
    m = _FLASHINFER_AR_RE.search(text)
    if m:
        return [
            NcclInfo(**base, kind="allreduce-backend", message=_msg(line), values={"flashinfer": m.group("backend")})
        ]
    m = _ALL2ALL_RE.search(text)
    if m:
        return [NcclInfo(**base, kind="all2all", message=_msg(line), values={"manager": m.group("manager")})]
    m = _RAY_TP_SPREAD_RE.search(text)
    if m:
        return [PerfWarning(**base, topic="tp-spans-nodes", message=_msg(line))]
    warning = _table_warning(_COMM_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    if "SymmMemCommunicator:" in text:
        return []  # an INFO note such as `Using override max_size`: nothing wrong
    return None


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (
        re.compile(
            "MNNVL multimem reduce-scatter symmetric-memory allocation failed on at least one rank; falling back to NCCL"
        ),
        _event(CustomAllReduce, enabled=False),
    ),
    (
        re.compile("Custom quick allreduce is disabled because this process group spans across nodes"),
        _event(CustomAllReduce, enabled=False, reason="spans-nodes"),
    ),
    (
        re.compile("Custom quick allreduce is disabled due to an unsupported world size"),
        _event(CustomAllReduce, enabled=False, reason="world-size"),
    ),
    (
        re.compile("FlashInfer PCIe IPC all-reduce requires every rank in the TP group to be on one node"),
        _event(CustomAllReduce, enabled=False, reason="spans-nodes"),
    ),
    (
        re.compile(
            "Failed to initialize \\S+ fused allreduce\\+RMSNorm Lamport workspace: cudaErrorPeerAccessUnsupported"
        ),
        _event(P2PCheck, supported=False),
    ),
    (
        re.compile("Tensor parallel size \\(\\d+\\) exceeds available GPUs \\(\\d+\\)"),
        _event(PerfWarning, topic="tp-spans-nodes"),
    ),
    (re.compile("Detected different devices in the system: "), _event(PerfWarning, topic="mixed-gpus")),
    (
        re.compile("(?P<name>NCCL_GRAPH_REGISTER)=(?P<value>\\S+) pins the CUDA graph pool during sleep"),
        _event(NcclEnv),
    ),
    (
        re.compile("NVLink detection failed\\. This is normal if your machine has no NVLink"),
        _event(PerfWarning, topic="no-nvlink"),
    ),
    (
        re.compile(
            "Failed to initialize Flashinfer allreduce workspace\\. Flashinfer allreduce-norm fusion will be disabled"
        ),
        _event(PerfWarning, topic="allreduce-fusion"),
    ),
)


def parse_comm_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "custom_allreduce",
        ("Custom allreduce is disabled", "Custom collectives are disabled", "cuda graph addresses"),
        parse_custom_allreduce,
        (
            case(
                "sample-1",
                "(Worker_TP0 pid=147) INFO 05-14 00:05:01 [custom_all_reduce.py:203] Registering 4355 cuda graph addresses",
                ("custom_allreduce", {}),
            ),
            case(
                "custom-ar-no-p2p-0.4",
                "(eager_allreduce pid=3040) WARNING 05-13 08:48:35 custom_all_reduce.py:166] Custom allreduce is disabled "
                "because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
                "disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "no-p2p"}),
            ),
            case(
                "custom-ar-pcie-0.7.3",
                "(VllmWorkerProcess pid=191) WARNING 02-22 22:09:01 custom_all_reduce.py:136] Custom allreduce is disabled "
                "because it's not supported on more than two PCIe-only GPU[s…]",
                ("custom_allreduce", {"enabled": False, "reason": "pcie-more-than-two"}),
            ),
            case(
                "custom-ar-pcie-colour-codes",
                "[1;36m(VllmWorker rank=0 pid=14480)[0;0m WARNING 07-28 06:36:18 [custom_all_reduce.py:137] Custom allreduce "
                "is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify "
                "disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "pcie-more-than-two", "level": "WARNING"}),
            ),
            case(
                "custom-ar-world-size",
                "(Worker_TP0 pid=7) WARNING 05-20 12:00:00 [custom_all_reduce.py:150] Custom allreduce is disabled due to an "
                "unsupported world size: 3. Supported world sizes: [2, 4, 6, 8]. To silence this warning, specify "
                "disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "world-size"}),
            ),
            case(
                "custom-ar-spans-nodes-ray",
                "(EngineCore_0 pid=1159) (RayWorkerWrapper pid=343, ip=10.42.9.224) WARNING 09-10 23:27:29 "
                "[custom_all_reduce.py:85] Custom allreduce is disabled because this process group spans across nodes.",
                ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
            ),
            case(
                "custom-ar-mnnvl",
                "(Worker_TP0 pid=7) WARNING 09-15 12:00:00 [custom_all_reduce.py:160] Custom collectives are disabled because "
                "this multi-node group does not have MNNVL-capable GPUs on every rank.",
                ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
            ),
            case(
                "custom-ar-library",
                "(Worker_TP0 pid=7) INFO 05-20 12:00:00 [custom_all_reduce.py:70] Custom allreduce is disabled because of "
                "missing custom allreduce library",
                ("custom_allreduce", {"enabled": False, "reason": "library"}),
            ),
            case(
                "custom-ar-registering-addresses",
                "(VllmWorker rank=0 pid=2445155) INFO 05-10 16:00:15 [custom_all_reduce.py:195] Registering 4355 cuda graph "
                "addresses",
                ("custom_allreduce", {"enabled": True}),
            ),
        ),
    ),
    _grammar(
        "comm",
        (
            "vLLM is using nccl==",
            "all-reduce backends (in dispatch order)",
            "GPU P2P access cache",
            "Two processes do not agree on the P2P",
            "Skipping P2P check",
            "local_rank=",
            "is assigned as DP rank",
            "Found nccl from",
            "Failed to load NCCL library",
            "flashinfer allreduce backend:",
            "all2all manager",
            "is bigger than a reserved number of",
            "SymmMemCommunicator:",
            "VLLM_USE_NCCL_SYMM_MEM",
            "NCCL memory allocator",
            "FlashInfer All Reduce",
            "AllReduce fusion pass is disabled",
            "NCCL_CUMEM_ENABLE is set to",
            "Reducing Torch parallelism",
            "falling back to gloo",
        ),
        parse_comm,
        (
            case(
                "sample-1",
                "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:53 [pynccl.py:69] vLLM is using nccl==2.21.5",
                ("nccl_version", {}),
            ),
            case(
                "sample-2",
                "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:54 [custom_all_reduce_utils.py:244] reading GPU P2P "
                "access cache from /users/7/eloualic/.cache/vllm/gpu_p2p_access_cache_for_0,1.json",
                ("p2p_check", {}),
            ),
            case(
                "nccl-version-and-p2p-cache-0.8",
                "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:53 [pynccl.py:69] vLLM is using nccl==2.21.5\n"
                "(VllmWorker rank=0 pid=3008574) INFO 05-29 23:36:53 [utils.py:1055] Found nccl from library libnccl.so.2\n"
                "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:54 [custom_all_reduce_utils.py:244] reading GPU P2P access "
                "cache from /users/7/eloualic/.cache/vllm/gpu_p2p_access_cache_for_0,1.json",
                ("nccl_version", {"version": "2.21.5", "engine": "vllm"}),
                ("nccl_info", {"kind": "library", "values": {"library": "libnccl.so.2"}}),
                ("p2p_check", {"supported": None}),
            ),
            case(
                "p2p-disagree",
                "(VllmWorkerProcess pid=191) WARNING 02-22 22:09:01 custom_all_reduce_utils.py:250] Two processes do not agree "
                "on the P2P access status on 0 -> 1, treat as disabled.",
                ("p2p_check", {"supported": False}),
            ),
            case(
                "allreduce-backends-0.25",
                "(Worker_TP0 pid=120) INFO 07-10 10:00:00 [cuda_communicator.py:353] Using ['CUSTOM', 'PYNCCL'] all-reduce "
                "backends (in dispatch order) for group 'tp:0' out of potential backends: ['FLASHINFER_PCIE_IPC', 'FLASHINFER', "
                "'NCCL_SYMM_MEM', 'QUICK_REDUCE', 'AITER_CUSTOM', 'CUSTOM', 'SYMM_MEM', 'PYNCCL'].",
                (
                    "allreduce_backends",
                    {
                        "backends": ["CUSTOM", "PYNCCL"],
                        "group": "tp:0",
                        "candidates": [
                            "FLASHINFER_PCIE_IPC",
                            "FLASHINFER",
                            "NCCL_SYMM_MEM",
                            "QUICK_REDUCE",
                            "AITER_CUSTOM",
                            "CUSTOM",
                            "SYMM_MEM",
                            "PYNCCL",
                        ],
                    },
                ),
                ("custom_allreduce", {"enabled": True}),
            ),
            case(
                "allreduce-backends-without-custom",
                "(Worker_TP0 pid=120) INFO 07-10 10:00:00 [cuda_communicator.py:353] Using ['PYNCCL'] all-reduce backends (in "
                "dispatch order) for group 'tp:0' out of potential backends: ['CUSTOM', 'PYNCCL'].",
                ("allreduce_backends", {"backends": ["PYNCCL"]}),
            ),
            case(
                "symm-mem-warning",
                "(Worker_TP0 pid=120) WARNING 11-20 10:00:00 [symm_mem.py:60] SymmMemCommunicator: Device capability 8.6 not "
                "supported, communicator is not available.",
                ("perf_warning", {"topic": "symm-mem"}),
            ),
            case(
                "flashinfer-ar-workspace",
                "(Worker_TP0 pid=120) WARNING 04-10 10:00:00 [flashinfer_all_reduce.py:90] Failed to initialize FlashInfer All "
                "Reduce workspace: no NVSwitch. This is expected on GPUs without NVSwitch (e.g., NVLink bridge-only or PCIe "
                "topologies).",
                ("perf_warning", {"topic": "flashinfer-allreduce"}),
            ),
            case(
                "distributed-init-0.12",
                "(Worker_TP1 pid=148) INFO 05-14 00:03:10 [parallel_state.py:1208] world_size=2 rank=1 local_rank=1 "
                "distributed_init_method=tcp://127.0.0.1:44131 backend=nccl",
                (
                    "nccl_info",
                    {
                        "kind": "distributed-init",
                        "values": {"world_size": 2, "rank": 1, "local_rank": 1, "backend": "nccl"},
                    },
                ),
            ),
            case(
                "rank-assignment-0.9",
                "INFO 06-04 13:12:34 [parallel_state.py:1064] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP "
                "rank 0, EP rank 0",
                (
                    "nccl_info",
                    {
                        "kind": "rank-assignment",
                        "values": {"rank": 0, "world_size": 1, "dp_rank": 0, "tp_rank": 0, "ep_rank": 0},
                    },
                ),
            ),
            case(
                "rank-assignment-0.16-na",
                "(Worker_TP1 pid=4243) INFO 05-20 12:00:02 [parallel_state.py:1723] rank 1 in world size 2 is assigned as DP "
                "rank 0, PP rank 0, PCP rank 0, TP rank 1, EP rank N/A, EPLB rank N/A",
                ("nccl_info", {"kind": "rank-assignment", "values": {"tp_rank": 1, "pcp_rank": 0, "ep_rank": "N/A"}}),
            ),
            case(
                "ray-tp-spans-nodes",
                "(_EngineBackgroundProcess pid=19245) WARNING 04-15 10:19:12 ray_utils.py:180] tensor_parallel_size=2 is bigger "
                "than a reserved number of GPUs (1 GPUs) in a node 348553707a378daeb5edea16f5fe9c5aafbdcd7ff550361a6988df81. "
                "Tensor parallel workers can be spread out to 2+ nodes which can degrade the performance unless you have fast "
                "interconnect across nodes, like Infiniband.",
                ("perf_warning", {"topic": "tp-spans-nodes"}),
            ),
            case(
                "gloo-fallback-0.33",
                "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [parallel_state.py:1942] Distributed backend nccl is not available; "
                "falling back to gloo.",
                ("nccl_info", {"kind": "distributed-init", "values": {"backend": "gloo", "requested_backend": "nccl"}}),
            ),
        ),
    ),
    _grammar(
        "comm_notices",
        (
            "MNNVL multimem reduce-scatter symmetric-memory allocation failed",
            "Custom quick allreduce is disabled because this process group spans",
            "Custom quick allreduce is disabled due to an unsupported world size",
            "PCIe IPC all-reduce requires every rank in the TP group to be on one node",
            "Lamport workspace: cudaErrorPeerAccessUnsupported",
            "exceeds available GPUs",
            "Detected different devices in the system:",
            "pins the CUDA graph pool during sleep",
            "NVLink detection failed.",
            "allreduce-norm fusion will be disabled",
        ),
        parse_comm_notices,
        (
            case(
                "v0.33-mnnvl-multimem-reduce-scatter-symmetric-",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [custom_all_reduce.py:429] MNNVL multimem reduce-scatter symmetric-memory allocation failed on at least one rank; falling back to NCCL.",
                ("custom_allreduce", {"enabled": False}),
            ),
            case(
                "v0.33-custom-quick-allreduce-is-disabled-becau",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [quick_all_reduce.py:116] Custom quick allreduce is disabled because this process group spans across nodes.",
                ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
            ),
            case(
                "v0.33-custom-quick-allreduce-is-disabled-due-t",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [quick_all_reduce.py:130] Custom quick allreduce is disabled due to an unsupported world size: 3. Supported world sizes: [2, 4, 8].",
                ("custom_allreduce", {"enabled": False, "reason": "world-size"}),
            ),
            case(
                "v0.33-pcie-ipc-all-reduce-requires-every-rank-",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [flashinfer_pcie_ipc_all_reduce.py:81] FlashInfer PCIe IPC all-reduce requires every rank in the TP group to be on one node.",
                ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
            ),
            case(
                "v0.33-lamport-workspace-cudaerrorpeeraccessuns",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [rms_norm_tp.py:327] Failed to initialize MiniMax fused allreduce+RMSNorm Lamport workspace: cudaErrorPeerAccessUnsupported. This is expected on GPUs without P2P (IPC peer access) support. Falling back to the eager allreduce + RMSNorm path.",
                ("p2p_check", {"supported": False}),
            ),
            case(
                "v0.33-exceeds-available-gpus",
                "(EngineCore pid=180) WARNING 11-30 10:00:00 [ray_utils.py:293] Tensor parallel size (8) exceeds available GPUs (4). This may result in Ray placement group allocation failures. Consider reducing tensor_parallel_size to 4 or less, or ensure your Ray cluster has 4 GPUs available.",
                ("perf_warning", {"topic": "tp-spans-nodes"}),
            ),
            case(
                "v0.33-detected-different-devices-in-the-system",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cuda.py:998] Detected different devices in the system: NVIDIA RTX A6000, NVIDIA GeForce RTX 3090. Please make sure to set `CUDA_DEVICE_ORDER=PCI_BUS_ID` to avoid unexpected behavior.",
                ("perf_warning", {"topic": "mixed-gpus"}),
            ),
            case(
                "v0.33-pins-the-cuda-graph-pool-during-sleep",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [vllm.py:2334] NCCL_GRAPH_REGISTER=1 pins the CUDA graph pool during sleep.",
                ("nccl_env", {"name": "NCCL_GRAPH_REGISTER", "value": "1"}),
            ),
            case(
                "v0.33-nvlink-detection-failed",
                "(Worker_TP0 pid=226) ERROR 11-30 10:00:00 [cuda.py:833] NVLink detection failed. This is normal if your machine has no NVLink equipped.",
                ("perf_warning", {"topic": "no-nvlink"}),
            ),
            case(
                "v0.33-allreduce-norm-fusion-will-be-disabled",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [allreduce_rms_fusion.py:1045] Failed to initialize Flashinfer allreduce workspace. Flashinfer allreduce-norm fusion will be disabled.",
                ("perf_warning", {"topic": "allreduce-fusion"}),
            ),
        ),
    ),
]
