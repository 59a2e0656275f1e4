"""vLLM line types: §12 model, quantization and kernels, platform, offload, misc (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, _base, _gib, _grammar, _msg, _table_warning
from logdoctor.events import (
    ModelInfo,
    Offload,
    PerfWarning,
    Platform,
    Quantization,
    WarningTopic,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

_MAX_MODEL_LEN_RE = re.compile(r"Using max model len (?P<n>\d+)")
_ARCHITECTURE_RE = re.compile(r"Resolved architecture: (?P<arch>\S+)")
_DOWNCASTING_RE = re.compile(r"Downcasting (?P<src>\S+) to (?P<dst>[\w.]+?)\.?\s*$")
_TRANSFORMERS_FALLBACK_RE = re.compile(
    r"(?P<arch>\S+) has no vLLM implementation, falling back to Transformers implementation"
    r"|Using Transformers (?:modeling )?backend\."
    r"|does not define a tensor parallel plan\. The Transformers modeling backend"
)
_MODEL_WARNINGS: tuple[tuple[re.Pattern[str], WarningTopic], ...] = (
    (re.compile(r"sampling parameters have been overridden by"), "generation-config"),
    (re.compile(r"Using a slow tokenizer"), "tokenizer"),
    (re.compile(r"Hidden layers were unevenly partitioned"), "pp-partition"),
    (re.compile(r"The max_model_len \(\d+\) is too large\. This may degrade the performance"), "max-model-len"),
    (re.compile(r"Sparse MLA top-k mask workspace .*? is too small"), "sparse-mla"),
    (re.compile(r"^Using V2 Model Runner|Model Runner V2 does not yet support"), "model-runner"),
)

_MARLIN_NO_NATIVE_RE = re.compile(
    r"Your GPU does not have native support for (?P<fmt>FP8|FP4) computation but \S+ quantization is being used"
)
_MARLIN_NOTES_RE = re.compile(
    r"You are running Marlin kernel with bf16 on GPUs before SM90|Marlin requires thread-tile padding"
)
_FORCED_SLOW_QUANT_RE = re.compile(
    r"Detected that the model can run with (?P<fast>\w+), \**however you specified quantization=(?P<slow>\w+) explicitly"
)
_CONVERTIBLE_RE = re.compile(
    r"The model is convertible to (?P<method>\w+) during runtime\. Using (?P<kernel>\w+) kernel"
)
_QUANT_NOT_OPTIMIZED_RE = re.compile(r"(?P<method>\S+) quantization is not fully optimized yet")
_GPTQ_MARLIN_KERNEL_RE = re.compile(r"Using (?P<kernel>\w+) for GPTQMarlinLinearMethod")
_SELECTED_KERNEL_RE = re.compile(r"Selected (?P<kernel>\w+) for (?P<method>\w+)")
_NVFP4_GEMM_RE = re.compile(r"Using (?P<kernel>\S+) for NVFP4 GEMM")
_MOE_BACKEND_RE = re.compile(
    r"Using '?(?P<kernel>[^' ]+)'? (?P<method>Fp8|NvFp4|Mxfp4|WNA16|Int8|MxFp8|W4A8|) ?MoE backend"
)
_EMULATION_MOE_RE = re.compile(
    r"Using (?P<kernel>\w+EmulationTritonExperts|OCP_MXQuantizationEmulationTritonExperts) MoE backend", re.I
)
_MXFP4_NO_FLASHINFER_RE = re.compile(r"MXFP4 MoE is enabled on Hopper/Blackwell but FlashInfer is not available")
_DEEPGEMM_RE = re.compile(
    r"Using DeepGemm kernels for (?P<method>\w+)|(?P<unsupported>DeepGemm not supported on the current platform)"
)
_CHECKPOINT_RE = re.compile(r"Detected (?P<method>fp8|ModelOpt NVFP4) checkpoint")
_QUANT_WARNINGS: tuple[tuple[re.Pattern[str], WarningTopic], ...] = (
    (re.compile(r"Using default MoE config\. Performance might be sub-optimal"), "moe-config"),
    (re.compile(r"Using default W8A8 Block FP8 kernel config"), "fp8-block-config"),
    (re.compile(r"Using default W8A8 Block INT8 kernel config"), "int8-block-config"),
)

_PLATFORM_RE = re.compile(r"Automatically detected platform (?P<platform>\w+)")
_PIN_MEMORY_RE = re.compile(r"Pin memory is not supported on (?P<platform>\w+)")
_SWAP_SPACE_RE = re.compile(r"Possibly too large swap space\. (?P<gib>[\d.]+) GiB out of the")
_CPU_OFFLOAD_RE = re.compile(r"Total CPU offloaded parameters: (?P<value>[\d.]+)(?: ?(?P<unit>[GMT]i?Bs?))?")
_KV_OFFLOAD_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"Pinned memory not available\. CPU offload performance may be degraded"),
    re.compile(r"disabling CPU offload since it requires prefix caching"),
    re.compile(r"cudaHostRegister failed"),
    re.compile(r"Initializing KVConnectorBase_V1"),
)


def parse_model(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _MAX_MODEL_LEN_RE.search(text)
    if m:
        return [ModelInfo(**base, max_model_len=int(m.group("n")))]
    m = _ARCHITECTURE_RE.search(text)
    if m:
        return [ModelInfo(**base, architecture=m.group("arch"))]
    m = _DOWNCASTING_RE.search(text)
    if m:
        return [ModelInfo(**base, dtype=m.group("dst"))]
    m = _TRANSFORMERS_FALLBACK_RE.search(text)
    if m:
        events: Events = [PerfWarning(**base, topic="transformers-backend", message=_msg(line))]
        if m.group("arch"):
            events.append(ModelInfo(**base, architecture=m.group("arch")))
        return events
    warning = _table_warning(_MODEL_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


def parse_quantization(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _MARLIN_NO_NATIVE_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("fmt").lower(), kernel="Marlin", fallback=True, message=_msg(line))]
    m = _FORCED_SLOW_QUANT_RE.search(text)
    if m:
        # The user asked for the plain kernel although the Marlin one would run: slower GEMMs.
        return [Quantization(**base, method=m.group("slow"), fallback=True, message=_msg(line))]
    m = _CONVERTIBLE_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("method"), kernel=m.group("kernel"), message=_msg(line))]
    m = _QUANT_NOT_OPTIMIZED_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("method"), message=_msg(line))]
    if _MARLIN_NOTES_RE.search(text):
        return [Quantization(**base, kernel="Marlin", message=_msg(line))]
    m = _GPTQ_MARLIN_KERNEL_RE.search(text)
    if m:
        return [Quantization(**base, method="gptq_marlin", kernel=m.group("kernel"), message=_msg(line))]
    m = _EMULATION_MOE_RE.search(text)
    if m:
        return [Quantization(**base, kernel=m.group("kernel"), fallback=True, message=_msg(line))]
    m = _MOE_BACKEND_RE.search(text)
    if m:
        method = m.group("method").lower() or None
        return [Quantization(**base, method=method, kernel=m.group("kernel"), message=_msg(line))]
    m = _NVFP4_GEMM_RE.search(text)
    if m:
        return [Quantization(**base, method="nvfp4", kernel=m.group("kernel"), message=_msg(line))]
    m = _SELECTED_KERNEL_RE.search(text)
    if m:
        return [Quantization(**base, method=m.group("method"), kernel=m.group("kernel"), message=_msg(line))]
    if _MXFP4_NO_FLASHINFER_RE.search(text):
        return [Quantization(**base, method="mxfp4", fallback=True, message=_msg(line))]
    m = _DEEPGEMM_RE.search(text)
    if m:
        unsupported = m.group("unsupported") is not None
        return [
            Quantization(
                **base,
                method="fp8",
                kernel=None if unsupported else "DeepGemm",
                fallback=unsupported,
                message=_msg(line),
            )
        ]
    m = _CHECKPOINT_RE.search(text)
    if m:
        method = "fp8" if m.group("method") == "fp8" else "modelopt_fp4"
        return [Quantization(**base, method=method, message=_msg(line))]
    warning = _table_warning(_QUANT_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


def parse_platform(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _PLATFORM_RE.search(text) or _PIN_MEMORY_RE.search(text)
    if m:
        return [Platform(**base, platform=m.group("platform").lower(), message=_msg(line))]
    m = _SWAP_SPACE_RE.search(text)
    if m:
        return [Offload(**base, kind="swap", gib=float(m.group("gib")), message=_msg(line))]
    m = _CPU_OFFLOAD_RE.search(text)
    if m:
        unit = m.group("unit")
        gib = _gib(m.group("value"), unit) if unit else None
        return [Offload(**base, kind="weights", gib=gib, message=_msg(line))]
    if any(p.search(text) for p in _KV_OFFLOAD_RES):
        return [Offload(**base, kind="kv", message=_msg(line))]
    return None


GRAMMARS: list[Grammar] = [
    _grammar(
        "model",
        (
            "Using max model len",
            "Resolved architecture:",
            "Downcasting ",
            "falling back to Transformers implementation",
            "Using Transformers backend.",
            "Using Transformers modeling backend",
            "does not define a tensor parallel plan",
            "sampling parameters have been overridden",
            "Using a slow tokenizer",
            "Hidden layers were unevenly partitioned",
            "insufficient smem size",
            "top-k mask workspace",
            "Using V2 Model Runner",
            "Model Runner V2 does not yet support",
        ),
        parse_model,
        (
            "(APIServer pid=1009) INFO 09-10 23:26:31 [__init__.py:1750] Using max model len 16384",
            "(APIServer pid=1009) INFO 09-10 23:26:29 [__init__.py:711] Resolved architecture: GptOssForCausalLM",
        ),
    ),
    _grammar(
        "quantization",
        (
            "does not have native support for",
            "Marlin kernel with bf16",
            "Marlin requires thread-tile padding",
            "however you specified quantization=",
            "during runtime. Using",
            "quantization is not fully optimized yet",
            "for GPTQMarlinLinearMethod",
            "Kernel for ",
            "for NVFP4 GEMM",
            "MoE backend",
            "EmulationTritonExperts",
            "MXFP4 MoE is enabled",
            "DeepGemm",
            "checkpoint. Please note",
            "Using default MoE config",
            "Using default W8A8 Block",
        ),
        parse_quantization,
        (
            "WARNING 05-13 14:43:17 [marlin_utils_fp8.py:167] Your GPU does not have native support for FP8 "
            "computation but FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the "
            "Marlin kernel. This may degrade performance for compute-heavy workloads.",
            "(VllmWorker rank=1 pid=236) WARNING 05-03 17:42:23 [fused_moe.py:668] Using default MoE config. "
            "Performance might be sub-optimal! Config file not found at /usr/local/lib/python3.12/dist-packages/vllm/"
            "model_executor/layers/fused_moe/configs/E=16,N=1536,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,"
            "block_shape=[128,128].json",
            "INFO 09-24 15:46:11 gptq_marlin.py:112] Detected that the model can run with gptq_marlin, however you "
            "specified quantization=gptq explicitly, so forcing gptq. Use quantization=gptq_marlin for faster inference",
        ),
    ),
    _grammar(
        "platform",
        (
            "Automatically detected platform",
            "Pin memory is not supported on",
            "Possibly too large swap space",
            "Total CPU offloaded parameters",
            "Pinned memory not available",
            "disabling CPU offload since",
            "cudaHostRegister failed",
            "Initializing KVConnectorBase_V1",
        ),
        parse_platform,
        (
            "INFO 09-10 23:26:06 [__init__.py:241] Automatically detected platform cuda.",
            "(EngineCore_DP0 pid=8933) WARNING 10-23 18:38:47 [cpu.py:316] Pin memory is not supported on CPU.",
        ),
    ),
]
