"""vLLM line types: §12 platform, offload, and one-message notices (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import (
    Events,
    NoticeBuild,
    _base,
    _event,
    _gib,
    _grammar,
    _msg,
    _notices,
)
from logdoctor.events import KVCache, Offload, PerfWarning, Platform, Quantization
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_PLATFORM_RE = re.compile(r"Automatically detected platform (?P<platform>\w+)")
# No GPU platform plugin activated: vLLM runs on UnspecifiedPlatform (no CUDA/ROCm device found).
_NO_PLATFORM_RE = re.compile(r"No platform detected, vLLM is running on (?P<platform>Unspecified)Platform")
_PIN_MEMORY_RE = re.compile(r"Pin memory is not supported on (?P<platform>\w+)")
_SWAP_SPACE_RE = re.compile(r"Possibly too large swap space\. (?P<gib>[\d.]+) GiB out of the")
_CPU_OFFLOAD_RE = re.compile(r"Total CPU offloaded parameters: (?P<value>[\d.]+)(?: ?(?P<unit>[GMT]i?Bs?))?")
_KV_OFFLOAD_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"Pinned memory not available\. CPU offload performance may be degraded"),
    re.compile(r"disabling CPU offload since it requires prefix caching"),
    re.compile(r"cudaHostRegister failed"),
)
# Every V1 KV connector prints this (vllm/distributed/kv_transfer/kv_connector/v1/base.py): NIXL for disaggregated
# prefill as much as LMCache or the offloading connector. It names none of them, and a connector keeps the working
# KV cache on the GPU (it moves copies between instances or tiers), so it says nothing about host memory.
_KV_CONNECTOR_RE = re.compile(r"Initializing KVConnectorBase_V1")


def parse_platform(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _PLATFORM_RE.search(text) or _PIN_MEMORY_RE.search(text) or _NO_PLATFORM_RE.search(text)
    if m:
        return [Platform(**base, platform=m.group("platform").lower(), message=_msg(line))]
    m = _SWAP_SPACE_RE.search(text)
    if m:
        return [Offload(**base, kind="swap", gib=float(m.group("gib")), message=_msg(line))]
    m = _CPU_OFFLOAD_RE.search(text)
    if m:
        unit = m.group("unit")
        # vLLM 0.33 prints `format_gib(bytes)`, a bare number of GiB (vllm/utils/mem_utils.py).
        gib = _gib(m.group("value"), unit) if unit else float(m.group("value"))
        return [Offload(**base, kind="weights", gib=gib, message=_msg(line))]
    if any(p.search(text) for p in _KV_OFFLOAD_RES):
        return [Offload(**base, kind="kv", message=_msg(line))]
    if _KV_CONNECTOR_RE.search(text):
        return [
            KVCache(**base, connector="kv-connector-v1", message=_msg(line))
        ]  # unnamed: combiners/disaggregation.py
    return None


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (
        re.compile("is not supported by GPTQMoeMarlin\\. Falling back to Moe WNA16 kernels"),
        _event(Quantization, method="gptq", kernel="MoeWNA16", fallback=True),
    ),
    (
        re.compile("is not supported by AutoAWQMoEMarlin\\. Falling back to Moe WNA16 kernels"),
        _event(Quantization, method="awq", kernel="MoeWNA16", fallback=True),
    ),
    (re.compile("Using (?P<kernel>\\w+) for AutoAWQMarlinLinearMethod"), _event(Quantization, method="awq")),
    (re.compile("Using (?P<kernel>\\w+) for MXFP4 GEMM"), _event(Quantization, method="mxfp4")),
    (re.compile("Using (?P<kernel>\\w+) for MXFP8 GEMM"), _event(Quantization, method="mxfp8")),
    (
        re.compile(
            "kernels for activation_quant_key=\\w+ are not yet integrated in vLLM\\. Using (?P<kernel>Emulation\\w+), with simulated weight dequantization"
        ),
        _event(Quantization, method="mxfp4", fallback=True),
    ),
    (re.compile("The quantization method (?P<method>\\w+) is deprecated and will be removed"), _event(Quantization)),
    (
        re.compile("--linear-backend=\\S+ has no kernel for this linear layer type; using automatic selection"),
        _event(Quantization, fallback=True),
    ),
    (
        re.compile(
            "--linear-backend=\\S+ was requested, but no \\S+ kernel exists for \\S+ linear layers; falling back to normal kernel selection"
        ),
        _event(Quantization, fallback=True),
    ),
    (
        re.compile("MarlinMxFp4LinearKernel is a weight-only \\(A16\\) kernel; the requested activation quantization"),
        _event(Quantization, method="mxfp4", kernel="Marlin", fallback=True),
    ),
    (
        re.compile("supports native MXFP4 W4A4 MOE computation via AITER MOE backend, but AITER is not found"),
        _event(Quantization, method="mxfp4", fallback=True),
    ),
    (
        re.compile("Requantizing \\S+ MXFP4 experts to groupwise int4"),
        _event(Quantization, method="mxfp4", fallback=True),
    ),
    (re.compile("MXFP8->BF16 load-time dequant complete"), _event(Quantization, method="mxfp8", fallback=True)),
    (
        re.compile(
            "\\[PrefetchOffloader\\] Initialized \\d+ modules\\. Total GPU memory saved: (?P<gib__gb>[\\d.]+) GB"
        ),
        _event(Offload, kind="weights"),
    ),
    (re.compile("Offloader set to NoopOffloader \\(no offloading\\)"), _event(Offload, kind="weights", gib=0.0)),
    (re.compile("--cpu-offload-gb is enabled with CUDA graphs on WSL2"), _event(Offload, kind="weights")),
    (re.compile("KV offloading: EAGLE/MTP draft attention groups .* detected"), _event(Offload, kind="kv")),
    (re.compile("Detected Mooncake CPU/disk offloading pressure"), _event(Offload, kind="kv")),
    (re.compile("Using 'pin_memory=False' as WSL is detected"), _event(PerfWarning, topic="pin-memory")),
    (re.compile("Unspecified platform detected, switching to CPU Platform"), _event(Platform, platform="cpu")),
    (re.compile("zentorch failed to import, falling back to CpuPlatform"), _event(Platform, platform="cpu")),
    (re.compile("The vLLM package was not found, so its version could not be inspected"), _event(Platform)),
    (re.compile("CPU backend prefers block_size is multiples of \\d+"), _event(Platform, platform="cpu")),
    (re.compile("Triton is not installed\\. triton-cpu is expected on x86 CPUs"), _event(Platform, platform="cpu")),
    (re.compile("Dual-Batch Overlap is not supported on CPU, disabled"), _event(Platform, platform="cpu")),
    (re.compile("libtcmalloc is not found in LD_PRELOAD"), _event(Platform, platform="cpu")),
    (re.compile("sleep mode is not supported on CPU, ignore it"), _event(Platform, platform="cpu")),
    (re.compile("EAGLE drafter KV cache initialized for CPU backend"), _event(Platform, platform="cpu")),
    (
        re.compile("CPU backend doesn't allow to use `torch\\.set_num_threads` after the thread binding"),
        _event(Platform, platform="cpu"),
    ),
    (re.compile("Failed to import from vllm\\._C_AVX512"), _event(Platform, platform="cpu")),
    (
        re.compile("Some projections are incompatible with GEMM-RS/AR; using the unfused path"),
        _event(PerfWarning, topic="gemm-allreduce-fusion"),
    ),
)


def parse_platform_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


GRAMMARS: list[Grammar] = [
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
            "No platform detected",
        ),
        parse_platform,
        (
            case(
                "sample-1",
                "INFO 09-10 23:26:06 [__init__.py:241] Automatically detected platform cuda.",
                ("platform", {}),
            ),
            case(
                "sample-2",
                "(EngineCore_DP0 pid=8933) WARNING 10-23 18:38:47 [cpu.py:316] Pin memory is not supported on CPU.",
                ("platform", {}),
            ),
            case(
                "platform-cpu",
                "INFO 05-11 12:03:00 [__init__.py:239] Automatically detected platform cpu.\n"
                "(EngineCore_DP0 pid=8933) WARNING 10-23 18:38:47 [cpu.py:316] Pin memory is not supported on CPU.",
                ("platform", {"platform": "cpu", "level": "INFO"}),
                ("platform", {"platform": "cpu", "level": "WARNING"}),
            ),
            case(
                "swap-space",
                "WARNING 10-01 10:00:00 config.py:600] Possibly too large swap space. 16.00 GiB out of the 31.00 GiB total CPU "
                "memory is allocated for the swap space.",
                ("offload", {"kind": "swap", "gib": 16.0}),
            ),
            case(
                "cpu-offload-weights",
                "(Worker_TP0 pid=7) INFO 02-26 10:00:00 [utils.py:600] Total CPU offloaded parameters: 12.5 GBs",
                ("offload", {"kind": "weights", "gib": 12.5}),
            ),
            case(
                "kv-connector",
                "(Worker_TP0 pid=7) WARNING 10-03 16:22:00 [base.py:80] Initializing KVConnectorBase_V1. This API is "
                "experimental and subject to change in the future as we iterate the design.",
                ("kv_cache", {"connector": "kv-connector-v1"}),
            ),
            case(
                "no-platform-0.8",
                "INFO 03-01 10:00:00 [__init__.py:211] No platform detected, vLLM is running on UnspecifiedPlatform",
                ("platform", {"platform": "unspecified"}),
            ),
            case(
                "no-platform-debug-0.33",
                "DEBUG 03-01 10:00:00 [platforms/__init__.py:291] No platform detected, vLLM is running on UnspecifiedPlatform",
                ("platform", {"platform": "unspecified"}),
            ),
            case(
                "cpu-offload-bare-gib-0.33",
                "(Worker_TP0 pid=9) INFO 11-30 10:00:00 [uva.py:68] Total CPU offloaded parameters: 12.0",
                ("offload", {"kind": "weights", "gib": 12.0}),
            ),
        ),
    ),
    _grammar(
        "platform_notices",
        (
            "is not supported by GPTQMoeMarlin",
            "is not supported by AutoAWQMoEMarlin",
            "AutoAWQMarlinLinearMethod",
            "MXFP4 GEMM",
            "MXFP8 GEMM",
            "Using EmulationMxfp4LinearKernel",
            "is deprecated and will be removed in future versions of vLLM",
            "has no kernel for this linear layer type",
            "falling back to normal kernel selection for this layer",
            "is a weight-only (A16) kernel; the requested activation quantization",
            "This platform supports native MXFP4 W4A4 MOE computation via AITER",
            "MXFP4 experts to groupwise int4",
            "MXFP8->BF16 load-time dequant complete",
            "[PrefetchOffloader] Initialized",
            "Offloader set to NoopOffloader",
            "--cpu-offload-gb is enabled with CUDA graphs on WSL2",
            "KV offloading: EAGLE/MTP draft attention groups",
            "CPU/disk offloading pressure",
            "as WSL is detected and the WSL2 kernel version is below",
            "Unspecified platform detected, switching to CPU Platform",
            "zentorch failed to import, falling back to CpuPlatform",
            "The vLLM package was not found, so its version could not be inspected",
            "CPU backend prefers block_size is multiples of",
            "triton-cpu is expected on x86 CPUs",
            "is not supported on CPU, disabled.",
            "libtcmalloc is not found in LD_PRELOAD",
            "sleep mode is not supported on CPU",
            "drafter KV cache initialized for CPU backend",
            "CPU backend doesn't allow to use `torch.set_num_threads`",
            "Failed to import from vllm._C_AVX512",
            "incompatible with GEMM-RS/AR; using the unfused path",
        ),
        parse_platform_notices,
        (
            case(
                "v0.33-is-not-supported-by-gptqmoemarlin",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [auto_gptq.py:244] Layer 'model.layers.3.mlp.experts' is not supported by GPTQMoeMarlin. Falling back to Moe WNA16 kernels.",
                ("quantization", {"method": "gptq", "fallback": True}),
            ),
            case(
                "v0.33-is-not-supported-by-autoawqmoemarlin",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [auto_awq.py:348] Layer 'model.layers.3.mlp.experts' is not supported by AutoAWQMoEMarlin. Falling back to Moe WNA16 kernels.",
                ("quantization", {"method": "awq", "fallback": True}),
            ),
            case(
                "v0.33-for-autoawqmarlinlinearmethod",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [auto_awq.py:451] Using MarlinLinearKernel for AutoAWQMarlinLinearMethod",
                ("quantization", {"method": "awq", "kernel": "MarlinLinearKernel"}),
            ),
            case(
                "v0.33-for-mxfp4-gemm",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [__init__.py:1091] Using MarlinMxFp4LinearKernel for MXFP4 GEMM",
                ("quantization", {"method": "mxfp4", "kernel": "MarlinMxFp4LinearKernel"}),
            ),
            case(
                "v0.33-for-mxfp8-gemm",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [__init__.py:1004] Using CutlassMxFp8LinearKernel for MXFP8 GEMM",
                ("quantization", {"method": "mxfp8", "kernel": "CutlassMxFp8LinearKernel"}),
            ),
            case(
                "v0.33-using-emulationmxfp4linearkernel",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [emulation.py:91] The current platform supports native MXFP4/MXFP6 computation, but kernels for activation_quant_key=kFp8Dynamic are not yet integrated in vLLM. Using EmulationMxfp4LinearKernel, with simulated weight dequantization and activation QDQ (quantize and dequantize), with the linear layers computed in high precision.",
                ("quantization", {"method": "mxfp4", "fallback": True}),
            ),
            case(
                "v0.33-is-deprecated-and-will-be-removed-in-fut",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [model.py:1474] The quantization method gptq is deprecated and will be removed in future versions of vLLM.",
                ("quantization", {"method": "gptq"}),
            ),
            case(
                "v0.33-has-no-kernel-for-this-linear-layer-type",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [__init__.py:401] --linear-backend=machete has no kernel for this linear layer type; using automatic selection for that layer type.",
                ("quantization", {"fallback": True}),
            ),
            case(
                "v0.33-falling-back-to-normal-kernel-selection-",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [__init__.py:432] --linear-backend=cutlass was requested, but no cutlass kernel exists for w4a16 linear layers; falling back to normal kernel selection for this layer.",
                ("quantization", {"fallback": True}),
            ),
            case(
                "v0.33-is-a-weight-only-a16-kernel-the-requeste",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [marlin.py:32] MarlinMxFp4LinearKernel is a weight-only (A16) kernel; the requested activation quantization (kFp8Dynamic) is ignored.",
                ("quantization", {"method": "mxfp4", "kernel": "Marlin", "fallback": True}),
            ),
            case(
                "v0.33-this-platform-supports-native-mxfp4-w4a4",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [aiter.py:185] This platform supports native MXFP4 W4A4 MOE computation via AITER MOE backend, but AITER is not found or not supported. Consider installing AITER: https://github.com/ROCm/aiter.",
                ("quantization", {"method": "mxfp4", "fallback": True}),
            ),
            case(
                "v0.33-mxfp4-experts-to-groupwise-int4",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [mxfp4.py:562] Requantizing Kimi-K3 MXFP4 experts to groupwise int4 for gfx942. This conversion is lossy and was explicitly enabled by --quantization-config.moe.weight int4_per_group_32.",
                ("quantization", {"method": "mxfp4", "fallback": True}),
            ),
            case(
                "v0.33-mxfp8-bf16-load-time-dequant-complete",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [modelopt.py:1448] MXFP8->BF16 load-time dequant complete (256 experts/layer); MoE now runs in BF16 with no per-step dequant.",
                ("quantization", {"method": "mxfp8", "fallback": True}),
            ),
            case(
                "v0.33-prefetchoffloader-initialized",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [prefetch.py:381] [PrefetchOffloader] Initialized 48 modules. Total GPU memory saved: 12.0000 GB, Static buffer pool: 1.2000 GB (group_size=8, num_in_group=8, prefetch_step=8, mode=self_mode)",
                ("offload", {"kind": "weights", "gib": 11.18}),
            ),
            case(
                "v0.33-offloader-set-to-noopoffloader",
                "(Worker_TP0 pid=226) DEBUG 11-30 10:00:00 [model_executor/offloader/base.py:137] Offloader set to NoopOffloader (no offloading).",
                ("offload", {"kind": "weights"}),
            ),
            case(
                "v0.33-cpu-offload-gb-is-enabled-with-cuda-grap",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cuda.py:352] --cpu-offload-gb is enabled with CUDA graphs on WSL2. This combination requires pinned (page-locked) memory allocations. WARNING: Windows (WDDM) enforces a hard system-wide cap of roughly 50% of physical RAM on pinned memory shared across ALL processes by default (limit can changed via %USERPROFILE%\\.wslconfig). Excessive use of page-locked memory can prevent Windows from reclaiming memory under load, which can cause the entire host OS to become unresponsive and may require a hard reboot to recover. Proceed at your own risk. To raise the WSL2 VM memory ceiling, increase the `memory` setting in %USERPROFILE%\\.wslconfig and run `wsl --shutdown`.",
                ("offload", {"kind": "weights"}),
            ),
            case(
                "v0.33-kv-offloading-eagle-mtp-draft-attention-",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [scheduler.py:235] KV offloading: EAGLE/MTP draft attention groups [1] detected. The trailing chunk of these groups will be excluded from offloading due to volatility.",
                ("offload", {"kind": "kv"}),
            ),
            case(
                "v0.33-cpu-disk-offloading-pressure",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [worker.py:969] Detected Mooncake CPU/disk offloading pressure (NO_AVAILABLE_HANDLE); skipping future store batches for request req_id until a later store batch succeeds",
                ("offload", {"kind": "kv"}),
            ),
            case(
                "v0.33-as-wsl-is-detected-and-the-wsl2-kernel-v",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cuda.py:312] Using 'pin_memory=False' as WSL is detected and the WSL2 kernel version is below 4.19.121. This may slow down performance. Please run `wsl --update`.",
                ("perf_warning", {"topic": "pin-memory"}),
            ),
            case(
                "v0.33-unspecified-platform-detected-switching-",
                "(APIServer pid=1) INFO 11-30 10:00:00 [main.py:84] Unspecified platform detected, switching to CPU Platform instead.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-zentorch-failed-to-import-falling-back-t",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [__init__.py:221] AMD Zen CPU detected but zentorch failed to import, falling back to CpuPlatform. This usually means the zentorch build does not match the installed torch version.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-the-vllm-package-was-not-found-so-its-ve",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [__init__.py:25] The vLLM package was not found, so its version could not be inspected. This may cause platform detection to fail.",
                ("platform", {}),
            ),
            case(
                "v0.33-cpu-backend-prefers-block-size-is-multip",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu.py:313] CPU backend prefers block_size is multiples of 32, otherwise the performance is not optimized.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-triton-cpu-is-expected-on-x86-cpus",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu.py:242] Triton is not installed. triton-cpu is expected on x86 CPUs.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-is-not-supported-on-cpu-disabled",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu.py:364] Dual-Batch Overlap is not supported on CPU, disabled.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-libtcmalloc-is-not-found-in-ld-preload",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu_worker.py:101] libtcmalloc is not found in LD_PRELOAD. For best performance, please follow the section `set LD_PRELOAD` in https://docs.vllm.ai/en/latest/getting_started/installation/cpu/ to setup required pre-loaded libraries.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-sleep-mode-is-not-supported-on-cpu",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu_worker.py:167] sleep mode is not supported on CPU, ignore it.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-drafter-kv-cache-initialized-for-cpu-bac",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [cpu_model_runner.py:107] EAGLE drafter KV cache initialized for CPU backend",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-cpu-backend-doesn-t-allow-to-use-torch-s",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu_worker.py:127] CPU backend doesn't allow to use `torch.set_num_threads` after the thread binding, skip it.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-failed-to-import-from-vllm-c-avx512",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu.py:678] Failed to import from vllm._C_AVX512: ImportError('libnuma.so.1')",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.33-incompatible-with-gemm-rs-ar-using-the-u",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [gemm_rs_ar.py:976] Some projections are incompatible with GEMM-RS/AR; using the unfused path instead.",
                ("perf_warning", {"topic": "gemm-allreduce-fusion"}),
            ),
        ),
    ),
]
