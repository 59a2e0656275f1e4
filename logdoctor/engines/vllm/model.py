"""vLLM line types: §12 the model: architecture, max model len, dtype, Transformers fallback (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import (
    Events,
    _base,
    _grammar,
    _msg,
    _table_warning,
)
from logdoctor.events import ModelInfo, PerfWarning, WarningTopic
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_MAX_MODEL_LEN_RE = re.compile(r"Using max model len (?P<n>\d+)")
_ARCHITECTURE_RE = re.compile(r"Resolved architecture: (?P<arch>\S+)")
_DOWNCASTING_RE = re.compile(r"Downcasting (?P<src>\S+) to (?P<dst>[\w.]+?)\.?\s*$")
_TRANSFORMERS_FALLBACK_RE = re.compile(
    r"(?<!\S)(?P<arch>\S+) has no vLLM implementation, falling back to Transformers implementation"
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
            case(
                "sample-1",
                "(APIServer pid=1009) INFO 09-10 23:26:29 [__init__.py:711] Resolved architecture: GptOssForCausalLM",
                ("model_info", {}),
            ),
            case(
                "attn-0.25-list-and-fa-version",
                "(EngineCore pid=144178) INFO 07-28 09:43:00 [gpu_worker.py:385] Using V2 Model Runner\n"
                "(EngineCore pid=144178) INFO 07-28 09:43:02 [cuda.py:482] Using FLASH_ATTN attention backend out of potential "
                "backends: ['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].\n"
                "(EngineCore pid=144178) INFO 07-28 09:43:02 [flash_attn.py:789] Using FlashAttention version 2",
                ("perf_warning", {"topic": "model-runner"}),
                (
                    "attention_backend",
                    {
                        "backend": "FLASH_ATTN",
                        "candidates": ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"],
                    },
                ),
                ("attention_backend", {"backend": "FLASH_ATTN", "version": "2"}),
            ),
            case(
                "max-model-len",
                "(APIServer pid=1009) INFO 09-10 23:26:31 [__init__.py:1750] Using max model len 16384",
                ("model_info", {"max_model_len": 16384}),
            ),
            case(
                "model-identity-0.10",
                "(APIServer pid=1009) INFO 09-10 23:26:29 [__init__.py:711] Resolved architecture: GptOssForCausalLM\n"
                "(APIServer pid=1009) INFO 09-10 23:26:31 [__init__.py:2816] Downcasting torch.float32 to torch.bfloat16.",
                ("model_info", {"architecture": "GptOssForCausalLM"}),
                ("model_info", {"dtype": "torch.bfloat16"}),
            ),
            case(
                "transformers-fallback",
                "(EngineCore pid=7) WARNING 05-01 10:00:00 [utils.py:200] MyModelForCausalLM has no vLLM implementation, "
                "falling back to Transformers implementation. Some features may not be supported and performance may not be "
                "optimal.",
                ("perf_warning", {"topic": "transformers-backend"}),
                ("model_info", {"architecture": "MyModelForCausalLM"}),
            ),
            case(
                "slow-tokenizer",
                "(APIServer pid=1) WARNING 10-01 10:00:00 [registry.py:80] Using a slow tokenizer. This might cause a "
                "significant slowdown. Consider using a fast tokenizer instead.",
                ("perf_warning", {"topic": "tokenizer"}),
            ),
        ),
    ),
]
