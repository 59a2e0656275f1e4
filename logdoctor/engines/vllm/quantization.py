"""vLLM line types: §12 quantization and kernels (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import (
    Events,
    _base,
    _grammar,
    _msg,
    _table_warning,
)
from logdoctor.events import Quantization, WarningTopic
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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
_QUANT_NOT_OPTIMIZED_RE = re.compile(r"(?<!\S)(?P<method>\S+) quantization is not fully optimized yet")
# Methods vLLM warned of only because its list of optimized methods did not name them yet.
_LISTED_LATE = frozenset({"mxfp4"})
_GPTQ_MARLIN_KERNEL_RE = re.compile(r"Using (?P<kernel>\w+) for GPTQMarlinLinearMethod")
_SELECTED_KERNEL_RE = re.compile(r"Selected (?P<kernel>\w+) for (?P<method>\w+)")
_NVFP4_GEMM_RE = re.compile(r"Using (?P<kernel>\S+) for NVFP4 GEMM")
_MOE_BACKEND_RE = re.compile(
    r"Using '?(?P<kernel>[^' ]+)'? (?P<method>Fp8|NvFp4|Mxfp4|WNA16|Int8|MxFp8|W4A8|) ?MoE backend"
)
_EMULATION_MOE_RE = re.compile(
    r"Using (?P<kernel>\w+EmulationTritonExperts|OCP_MXQuantizationEmulationTritonExperts) MoE backend", re.I
)
# The emulated MoE experts by kernel-name prefix (vLLM 0.33): OCP MX is MXFP4 (vllm/.../ocp_mx_emulation_moe.py).
_EMULATION_MOE_FORMATS = (
    ("nvfp4", "nvfp4"),
    ("mxfp8", "mxfp8"),
    ("ocp_mx", "mxfp4"),
    ("mxfp4", "mxfp4"),
    ("int4", "int4"),
)
_MXFP4_NO_FLASHINFER_RE = re.compile(r"MXFP4 MoE is enabled on Hopper/Blackwell but FlashInfer is not available")
_DEEPGEMM_RE = re.compile(
    r"Using DeepGemm kernels for (?P<method>\w+)|(?P<unsupported>DeepGemm not supported on the current platform)"
)
# vLLM 0.33 folds gptq/gptq_marlin into AutoGPTQ and awq/awq_marlin into AutoAWQ: the kernel is named only here.
# vllm/model_executor/kernels/linear/__init__.py lists the CUDA kernels "in priority/performance order":
# CutlassW4A8, Machete, Marlin, then Conch, Exllama, TritonW4A16, Humming - chosen only when the faster ones
# cannot run this layer or GPU.
_MIXED_PRECISION_KERNEL_RE = re.compile(
    r"Using (?P<kernel>\w+?)(?:LinearKernel)? for "
    r"(?P<what>AutoGPTQLinearMethod|mixed-precision linear|CompressedTensorsWNA16\b)"
)
_SLOW_MIXED_PRECISION_KERNELS = frozenset({"Conch", "Exllama", "TritonW4A16", "Humming"})
_MIXED_PRECISION_METHOD = {
    "AutoGPTQLinearMethod": "gptq",
    "CompressedTensorsWNA16": "compressed-tensors",
    "mixed-precision linear": None,
}
_AWQ_UNOPTIMIZED_RE = re.compile(r"is not supported by AutoAWQMarlin\. Falling back to unoptimized AWQ kernels")
_EMULATION_FALLBACK_RE = re.compile(
    r"(?P<fmt>NVFP4) linear falling back to the slow and unoptimized emulation backend"
    r"|does not support native (?P<fmt2>MXFP4) computation\. Using (?P<kernel>Emulation\w+)"
)
_CHECKPOINT_RE = re.compile(r"Detected (?P<method>fp8|ModelOpt NVFP4) checkpoint")
_QUANT_WARNINGS: tuple[tuple[re.Pattern[str], WarningTopic], ...] = (
    (re.compile(r"Using default MoE config\. Performance might be sub-optimal"), "moe-config"),
    (re.compile(r"Using default W8A8 Block FP8 kernel config"), "fp8-block-config"),
    (re.compile(r"Using default W8A8 Block INT8 kernel config"), "int8-block-config"),
)


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
        # vLLM prints it for every method outside its list of optimized ones: the engine's own word that the
        # method's kernels are slower than the ones it would choose. 0.10.1-0.10.2 left mxfp4 (gpt-oss) off the list
        # while its MoE ran on its own kernels, which their own lines name (the Marlin FP4 fallback among them).
        method = m.group("method")
        slow = method.lower() not in _LISTED_LATE
        return [Quantization(**base, method=method, fallback=slow, message=_msg(line))]
    if _MARLIN_NOTES_RE.search(text):
        return [Quantization(**base, kernel="Marlin", message=_msg(line))]
    m = _GPTQ_MARLIN_KERNEL_RE.search(text)
    if m:
        return [Quantization(**base, method="gptq_marlin", kernel=m.group("kernel"), message=_msg(line))]
    m = _EMULATION_MOE_RE.search(text)
    if m:
        kernel = m.group("kernel")
        method = next((fmt for prefix, fmt in _EMULATION_MOE_FORMATS if kernel.lower().startswith(prefix)), None)
        return [Quantization(**base, method=method, kernel=kernel, fallback=True, message=_msg(line))]
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
    m = _MIXED_PRECISION_KERNEL_RE.search(text)
    if m:
        kernel = m.group("kernel")
        return [
            Quantization(
                **base,
                method=_MIXED_PRECISION_METHOD[m.group("what")],
                kernel=kernel,
                fallback=kernel in _SLOW_MIXED_PRECISION_KERNELS,
                message=_msg(line),
            )
        ]
    if _AWQ_UNOPTIMIZED_RE.search(text):
        # 0.33's AutoAWQ picks Marlin itself; a layer it cannot tile runs on the plain AWQ kernel, and no
        # --quantization value changes that (the kernel name lets the fix say so).
        return [Quantization(**base, method="awq", kernel="unoptimized AWQ", fallback=True, message=_msg(line))]
    m = _EMULATION_FALLBACK_RE.search(text)
    if m:
        fmt = (m.group("fmt") or m.group("fmt2")).lower()
        return [
            Quantization(**base, method=fmt, kernel=m.group("kernel") or "emulation", fallback=True, message=_msg(line))
        ]
    m = _CHECKPOINT_RE.search(text)
    if m:
        method = "fp8" if m.group("method") == "fp8" else "modelopt_fp4"
        return [Quantization(**base, method=method, message=_msg(line))]
    warning = _table_warning(_QUANT_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


GRAMMARS: list[Grammar] = [
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
            "for AutoGPTQLinearMethod",
            "for mixed-precision linear",
            "for CompressedTensorsWNA16",
            "Falling back to unoptimized AWQ",
            "linear falling back to the slow and unoptimized emulation",
            "does not support native MXFP4 computation",
        ),
        parse_quantization,
        (
            case(
                "sample-1",
                "INFO 09-24 15:46:11 gptq_marlin.py:112] Detected that the model can run with gptq_marlin, however you "
                "specified quantization=gptq explicitly, so forcing gptq. Use quantization=gptq_marlin for faster inference",
                ("quantization", {}),
            ),
            case(
                "marlin-fp8-no-native",
                "WARNING 05-13 14:43:17 [marlin_utils_fp8.py:167] Your GPU does not have native support for FP8 computation but "
                "FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel. This "
                "may degrade performance for compute-heavy workloads.",
                ("quantization", {"method": "fp8", "kernel": "Marlin", "fallback": True}),
            ),
            case(
                "marlin-fp4-no-native-truncated",
                "(EngineCore_0 pid=1159) (RayWorkerWrapper pid=345, ip=10.42.11.243) WARNING 09-10 23:47:47 "
                "[marlin_utils_fp4.py:196] Your GPU does not have native support for FP4 computation but FP4 quantization is "
                "being used. Weight-only FP4 compression will be used leveraging the Marlin kernel. This may degrade p",
                ("quantization", {"method": "fp4", "kernel": "Marlin", "fallback": True}),
            ),
            case(
                "not-optimized-listed-late",
                "(EngineCore_0 pid=1159) WARNING 09-10 23:47:40 [__init__.py:1600] mxfp4 quantization is not fully "
                "optimized yet. The speed can be slower than non-quantized models.",
                ("quantization", {"method": "mxfp4", "fallback": False}),
                exact=True,
            ),
            case(
                "gptq-forced-markdown-bold",
                "INFO 09-24 15:46:11 gptq_marlin.py:112] Detected that the model can run with gptq_marlin, **however you "
                "specified quantization=gptq explicitly, so forcing gptq. Use quantization=gptq_marlin for faster inference**\n"
                "WARNING 09-24 15:46:11 config.py:335] gptq quantization is not fully optimized yet. The speed can be slower "
                "than non-quantized models.\n"
                "**INFO 09-24 15:46:11 gptq_marlin.py:108] The model is convertible to gptq_marlin during runtime. Using "
                "gptq_marlin kernel.**",
                ("quantization", {"method": "gptq", "fallback": True}),
                ("quantization", {"method": "gptq", "fallback": True}),
                ("quantization", {"method": "gptq_marlin", "kernel": "gptq_marlin", "fallback": False}),
            ),
            case(
                "awq-forced",
                "INFO 09-24 15:46:11 awq_marlin.py:110] Detected that the model can run with awq_marlin, however you specified "
                "quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference",
                ("quantization", {"method": "awq", "fallback": True}),
            ),
            case(
                "moe-default-config-0.8.5",
                "(VllmWorker rank=1 pid=236) WARNING 05-03 17:42:23 [fused_moe.py:668] Using default MoE config. Performance "
                "might be sub-optimal! Config file not found at /usr/local/lib/python3.12/dist-packages/vllm/model_executor/"
                "layers/fused_moe/configs/E=16,N=1536,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,block_shape=[128,128]"
                ".json",
                ("perf_warning", {"topic": "moe-config"}),
            ),
            case(
                "moe-default-config-stacked-prefixes",
                "(EngineCore_0 pid=2875517) (VllmWorker pid=2875530) WARNING 08-15 12:11:58 [fused_moe.py:727] Using default "
                "MoE config. Performance might be sub-optimal! Config file not found at [...]",
                ("perf_warning", {"topic": "moe-config"}),
            ),
            case(
                "moe-default-config-colour-reset",
                "(VllmWorker rank=0 pid=281) [0;0m WARNING 05-15 11:07:08 [fused_moe.py:659] Using default MoE config. "
                "Performance might be sub-optimal! Config file not found at /x/E=128,N=384,device_name=Tesla_T4.json",
                ("perf_warning", {"topic": "moe-config", "level": "WARNING"}),
            ),
            case(
                "w8a8-block-fp8-default",
                "(Worker_TP0 pid=7) WARNING 05-01 10:00:00 [fp8_utils.py:500] Using default W8A8 Block FP8 kernel config. "
                "Performance might be sub-optimal! Config file not found at /x/N=7168,K=2048,device_name=NVIDIA_H20.json",
                ("perf_warning", {"topic": "fp8-block-config"}),
            ),
            case(
                "gptq-marlin-kernel",
                "INFO 10-01 10:00:00 gptq_marlin.py:200] Using MacheteLinearKernel for GPTQMarlinLinearMethod",
                ("quantization", {"method": "gptq_marlin", "kernel": "MacheteLinearKernel"}),
            ),
            case(
                "selected-kernel",
                "(Worker_TP0 pid=7) INFO 03-10 10:00:00 [__init__.py:90] Selected CutlassFP8ScaledMMLinearKernel for "
                "Fp8LinearMethod",
                ("quantization", {"kernel": "CutlassFP8ScaledMMLinearKernel", "method": "Fp8LinearMethod"}),
            ),
            case(
                "fp8-moe-backend-not-attention",
                "(Worker_TP0 pid=7) INFO 02-01 10:00:00 [fp8.py:120] Using TRITON Fp8 MoE backend out of potential backends: "
                "['DEEPGEMM', 'TRITON'].",
                ("quantization", {"method": "fp8", "kernel": "TRITON"}),
            ),
            case(
                "moe-emulation",
                "(Worker_TP0 pid=7) WARNING 05-01 10:00:00 [nvfp4_emulation_moe.py:50] Using "
                "Nvfp4QuantizationEmulationTritonExperts MOE backend. This will dequantize weights on the fly and may be slower "
                "than native quantized MOE.",
                ("quantization", {"kernel": "Nvfp4QuantizationEmulationTritonExperts", "fallback": True}),
            ),
            case(
                "autogptq-machete-0.33",
                "(Worker_TP0 pid=9) INFO 11-30 10:00:00 [auto_gptq.py:352] Using MacheteLinearKernel for AutoGPTQLinearMethod",
                ("quantization", {"method": "gptq", "kernel": "Machete", "fallback": False}),
            ),
            case(
                "mixed-precision-exllama-0.33",
                "(Worker_TP0 pid=9) INFO 11-30 10:00:00 [__init__.py:945] Using ExllamaLinearKernel for mixed-precision linear",
                ("quantization", {"method": None, "kernel": "Exllama", "fallback": True}),
            ),
            case(
                "wna16-marlin-0.33",
                "(Worker_TP0 pid=9) INFO 11-30 10:00:00 [compressed_tensors_wNa16.py:153] Using MarlinLinearKernel for "
                "CompressedTensorsWNA16",
                ("quantization", {"method": "compressed-tensors", "kernel": "Marlin", "fallback": False}),
            ),
            case(
                "autoawq-unoptimized-0.33",
                "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [auto_awq.py:325] Layer 'model.layers.0.mlp.gate_up_proj' is not "
                "supported by AutoAWQMarlin. Falling back to unoptimized AWQ kernels.",
                ("quantization", {"method": "awq", "fallback": True}),
            ),
            case(
                "nvfp4-emulation-0.33",
                "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [__init__.py:1294] NVFP4 linear falling back to the slow and "
                "unoptimized emulation backend as no optimized backend is available (unavailable reasons: "
                "CutlassNvFp4LinearKernel: requires SM100)",
                ("quantization", {"method": "nvfp4", "kernel": "emulation", "fallback": True}),
            ),
            case(
                "mxfp4-emulation-0.33",
                "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [emulation.py:101] The current platform does not support native "
                "MXFP4 computation. Using EmulationMxfp4LinearKernel, with simulated weight dequantization and activation "
                "QDQ (quantize and dequantize), with the linear in high precision.",
                ("quantization", {"method": "mxfp4", "kernel": "EmulationMxfp4LinearKernel", "fallback": True}),
            ),
        ),
    ),
]
