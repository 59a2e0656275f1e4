"""SGLang line types: quantization kernels and their tuned configs."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.sglang.common import Build, Rule, _apply, _ev, _grammar, _perf
from logdoctor.events import (
    EventBase,
    Quantization,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- quantization kernels and their tuned configs ---------------------------------------------------------------
# SGLang carries vLLM's quantization layers (the Marlin FP8 fallback wording is vLLM's) and its own Triton MoE /
# block-FP8 kernels, which fall back to a default config when no tuned file exists for this GPU and shape.


def _quant(method: str | None, kernel: str | None, fallback: bool) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        groups = m.groupdict()
        found = groups.get("method")
        return [
            Quantization(
                **base,
                method=(found.lower() if found else method),
                kernel=groups.get("kernel") or kernel,
                fallback=fallback,
                message=message,
            )
        ]

    return build


_QUANTIZATION_RULES = [
    Rule(re.compile(r"Using default MoE kernel config\. Performance might be sub-optimal"), _perf("moe-config")),
    Rule(re.compile(r"Using default W8A8 Block FP8 kernel config"), _perf("fp8-block-config")),
    Rule(re.compile(r"Using default W8A8 Block INT8 kernel config"), _perf("int8-block-config")),
    Rule(
        re.compile(r"however you specified quantization=(?P<method>awq|gptq) explicitly, so forcing (?:awq|gptq)"),
        _quant(None, None, True),
    ),
    Rule(
        re.compile(r"Your GPU does not have native support for (?P<method>FP8|FP4) computation but \S+ quantization"),
        _quant(None, "Marlin", True),
    ),
    Rule(
        re.compile(r"The model is convertible to (?P<method>\w+) during runtime\. Using (?P<kernel>\w+) kernel"),
        _quant(None, None, False),
    ),
    Rule(
        re.compile("is not supported by AWQMarlin\\. Falling back to unoptimized AWQ kernels"),
        _ev(Quantization, method="awq", fallback=True),
    ),
    Rule(
        re.compile("is not supported by AWQMoeMarlin\\. Falling back to Moe WNA16 kernels"),
        _ev(Quantization, method="awq", kernel="MoeWNA16", fallback=True),
    ),
    Rule(
        re.compile(
            "--fp8-gemm-backend=\\S+ cannot serve \\[\\d+, \\d+\\] block FP8 weights on this setup; using Triton"
        ),
        _ev(Quantization, method="fp8", kernel="Triton", fallback=True),
    ),
    Rule(
        re.compile("Block-fp8 layer stays on the Triton kernel"),
        _ev(Quantization, method="fp8", kernel="Triton", fallback=True),
    ),
    Rule(
        re.compile("Fp8MoEMethod has no \\w+ path; using triton for its fp8 experts"),
        _ev(Quantization, method="fp8", kernel="Triton", fallback=True),
    ),
    Rule(re.compile("Detected fp8 checkpoint\\."), _ev(Quantization, method="fp8")),
    Rule(
        re.compile(
            "NVFP4 w4a4 (?:MoE )?requires compute capability >= [\\d.]+; serving this checkpoint weight-only via FP4 Marlin"
        ),
        _ev(Quantization, method="nvfp4", kernel="Marlin", fallback=True),
    ),
    Rule(
        re.compile("Using CompressedTensorsWNA16MarlinMoEMethod"),
        _ev(Quantization, method="compressed-tensors", kernel="Marlin"),
    ),
    Rule(re.compile("You are running Marlin kernel with bf16 on GPUs before SM90"), _ev(Quantization, kernel="Marlin")),
    Rule(re.compile("Detected ModelOpt FP8 checkpoint"), _ev(Quantization, method="modelopt")),
    Rule(re.compile("Dequantized FP4 MoE expert weights to FP8"), _ev(Quantization, method="fp8", fallback=True)),
    Rule(re.compile("on SM\\d+: moe_runner_backend=marlin"), _ev(Quantization, kernel="Marlin")),
]


def parse_quantization(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_QUANTIZATION_RULES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "quantization",
        (
            "Using default MoE kernel config",
            "Using default W8A8 Block",
            "explicitly, so forcing",
            "does not have native support for",
            "during runtime. Using",
            "is not supported by AWQMarlin. Falling back to unoptimized AWQ kernels",
            "is not supported by AWQMoeMarlin. Falling back to Moe WNA16 kernels",
            "block FP8 weights on this setup; using Triton",
            "Block-fp8 layer stays on the Triton kernel",
            "for its fp8 experts",
            "Detected fp8 checkpoint.",
            "NVFP4 w4a4 requires compute capability",
            "NVFP4 w4a4 MoE requires compute capability",
            "Using CompressedTensorsWNA16MarlinMoEMethod",
            "You are running Marlin kernel with bf16 on GPUs before SM90",
            "Detected ModelOpt FP8 checkpoint",
            "Dequantized FP4 MoE expert weights to FP8",
            "moe_runner_backend=marlin",
        ),
        parse_quantization,
        (
            case(
                "default-moe-config",
                "[2025-05-09 11:14:36 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config "
                "file not found at /sgl/configs/E=64,N=1408,device_name=NVIDIA_A100-SXM4-80GB.json, you can create them "
                "with https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton",
                ("perf_warning", {"topic": "moe-config"}),
                exact=True,
            ),
            case(
                "default-block-fp8-config",
                "[2025-05-09 11:14:36 TP0] Using default W8A8 Block FP8 kernel config. Performance might be "
                "sub-optimal! Config file not found at /sgl/configs/N=4096,K=7168,device_name=NVIDIA_H20.json",
                ("perf_warning", {"topic": "fp8-block-config"}),
                exact=True,
            ),
            case(
                "awq-forced",
                "[2025-05-09 11:14:36 TP0] Detected that the model can run with awq_marlin, however you specified "
                "quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference",
                ("quantization", {"method": "awq", "fallback": True}),
                exact=True,
            ),
            case(
                "marlin-fp8-fallback",
                "[2025-05-09 11:14:36 TP0] Your GPU does not have native support for FP8 computation but FP8 "
                "quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel. "
                "This may degrade performance for compute-heavy workloads.",
                ("quantization", {"method": "fp8", "kernel": "Marlin", "fallback": True}),
                exact=True,
            ),
            case(
                "awq-marlin-convertible",
                "[2025-05-09 11:14:36 TP0] The model is convertible to awq_marlin during runtime. Using awq_marlin kernel.",
                ("quantization", {"method": "awq_marlin", "kernel": "awq_marlin", "fallback": False}),
                exact=True,
            ),
            case(
                "v0.5.23-is-not-supported-by-awqmarlin-falling-ba",
                "[2025-11-30 10:00:00 TP0] Layer 'model.layers.0.self_attn.qkv_proj' is not supported by AWQMarlin. Falling back to unoptimized AWQ kernels.",
                ("quantization", {"method": "awq", "fallback": True}),
            ),
            case(
                "v0.5.23-is-not-supported-by-awqmoemarlin-falling",
                "[2025-11-30 10:00:00 TP0] Layer 'model.layers.3.mlp.experts' is not supported by AWQMoeMarlin. Falling back to Moe WNA16 kernels.",
                ("quantization", {"method": "awq", "fallback": True}),
            ),
            case(
                "v0.5.23-block-fp8-weights-on-this-setup-using-tr",
                "[2025-11-30 10:00:00 TP0] --fp8-gemm-backend=deep_gemm cannot serve [128, 128] block FP8 weights on this setup; using Triton. DeepGEMM takes [32, 32] blocks on SM90, and on SM100 with UE8M0 scales.",
                ("quantization", {"method": "fp8", "kernel": "Triton", "fallback": True}),
            ),
            case(
                "v0.5.23-block-fp8-layer-stays-on-the-triton-kern",
                "[2025-11-30 10:00:00 TP0] Block-fp8 layer stays on the Triton kernel: shape not supported",
                ("quantization", {"method": "fp8", "kernel": "Triton", "fallback": True}),
            ),
            case(
                "v0.5.23-for-its-fp8-experts",
                "[2025-11-30 10:00:00 TP0] Fp8MoEMethod has no FLASHINFER_CUTLASS path; using triton for its fp8 experts.",
                ("quantization", {"method": "fp8", "kernel": "Triton", "fallback": True}),
            ),
            case(
                "v0.5.23-detected-fp8-checkpoint",
                "[2025-11-30 10:00:00 TP0] Detected fp8 checkpoint.",
                ("quantization", {"method": "fp8"}),
            ),
            case(
                "v0.5.23-nvfp4-w4a4-requires-compute-capability",
                "[2025-11-30 10:00:00 TP0] NVFP4 w4a4 requires compute capability >= 10.0; serving this checkpoint weight-only via FP4 Marlin instead. Activation quantization is ignored.",
                ("quantization", {"method": "nvfp4", "fallback": True}),
            ),
            case(
                "v0.5.23-nvfp4-w4a4-moe-requires-compute-capabili",
                "[2025-11-30 10:00:00 TP0] NVFP4 w4a4 MoE requires compute capability >= 10.0; serving this checkpoint weight-only via FP4 Marlin instead. Activation quantization is ignored.",
                ("quantization", {"method": "nvfp4", "fallback": True}),
            ),
            case(
                "v0.5.23-using-compressedtensorswna16marlinmoemet",
                "[2025-11-30 10:00:00 TP0] Using CompressedTensorsWNA16MarlinMoEMethod",
                ("quantization", {"method": "compressed-tensors", "kernel": "Marlin"}),
            ),
            case(
                "v0.5.23-you-are-running-marlin-kernel-with-bf16-",
                "[2025-11-30 10:00:00 TP0] You are running Marlin kernel with bf16 on GPUs before SM90. You can consider change to fp16 to achieve better performance if possible.",
                ("quantization", {"kernel": "Marlin"}),
            ),
            case(
                "v0.5.23-detected-modelopt-fp8-checkpoint",
                "[2025-11-30 10:00:00 TP0] Detected ModelOpt FP8 checkpoint. The format is experimental and subject to change.",
                ("quantization", {"method": "modelopt"}),
            ),
            case(
                "v0.5.23-dequantized-fp4-moe-expert-weights-to-fp",
                "[2025-11-30 10:00:00 TP0] Dequantized FP4 MoE expert weights to FP8.",
                ("quantization", {"method": "fp8", "fallback": True}),
            ),
            case(
                "v0.5.23-moe-runner-backend-marlin",
                "[2025-11-30 10:00:00 TP0] MiMoV2 on SM90: moe_runner_backend=marlin.",
                ("quantization", {"kernel": "Marlin"}),
            ),
        ),
    ),
]
