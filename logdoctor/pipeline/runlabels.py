"""A pasted run's label: the line of prose right above its command or results (`Without --enforce-eager:`, `For
FP8:`, `**TP=2**`), the settings it names in the engine's vocabulary, and the slow setting a heading names where no
two runs are compared (logdoctor.pipeline.pasted splits and compares the runs)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from logdoctor.events import EventBase
from logdoctor.parse import cmdline
from logdoctor.parse.blocks import SHELL_COMMAND_RE
from logdoctor.parse.envelope import parse_envelope
from logdoctor.parse.summary import own_label
from logdoctor.parse.warning_vocabulary import subsystem_named
from logdoctor.registry import REGISTRY

Lookup = Callable[[str, int], "str | None"]

# A run's label (logdoctor.parse.pipeline keeps it as evidence): at most this many lines above the run's first line
# (a heading may sit above the command that ran the run, and its fences).
LABEL_GAP = 8
# Markdown around a label: `**With eager**`, `### TP=2`, `> baseline:`, `- run 2`, and its closing colon.
_LABEL_MARKUP_RE = re.compile(r"^[\s>#*_`-]+|[\s*_`:]+$")
_LETTER_RE = re.compile(r"[A-Za-z]")
# Words that turn a setting the label names off: `Without --enforce-eager`, `no CUDA graphs`, `w/o eager`.
_NEGATION_RE = re.compile(r"\b(?:without|w/o|no|not|disabled?|off)\b", re.IGNORECASE)
_LABEL_PUNCTUATION = ":,;.()[]*`'\""
# The short names of the parallelism settings (`TP=2`, `tp 4`, `-tp 2`), as vLLM's and SGLang's short flags.
_SHORT_SETTING_RE = re.compile(r"(?<![A-Za-z])(?P<name>tp|pp|dp)\s*[=:]?\s*(?P<value>\d+)\b", re.IGNORECASE)
_SHORT_SETTINGS = {"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size", "dp": "data_parallel_size"}
# A weight format named alone (`For FP8:`): a quantization method, or the unquantized 16/32-bit formats. The
# kernel-specific methods of `--quantization` (`AWQ_MARLIN`, `gptq_marlin`) are methods of their own: a pair of runs
# headed `AWQ` and `AWQ_MARLIN` differs in its kernel.
_FORMAT_RE = re.compile(
    r"(?<![\w-])((?:awq|gptq|fp8)_marlin|gptq_marlin_24|awq_triton|marlin|machete|fp8|awq|gptq|int8|int4|w4a16|w8a8|w4a8|"
    r"nvfp4|mxfp4|bnb|gguf|fp16|bf16|float16|bfloat16|fp32)(?![\w-])",
    re.IGNORECASE,
)
_UNQUANTIZED = frozenset({"fp16", "bf16", "float16", "bfloat16", "fp32"})
# An attention backend named by its registry name, its environment variable or its class (`VLLM_ATTENTION_BACKEND=
# TRITON_ATTN_VLLM_V1`, `FLASHINFER`, `FlashAttnBackend`); vLLM drops the `_VLLM_V1` suffix itself.
_BACKEND_RE = re.compile(
    r"(?<![A-Za-z0-9])(?P<name>flash_?attn|flash_?attention|flashinfer|triton_?attn|xformers|torch_?sdpa|"
    r"flex_?attention|rocm_?attn)(?:_vllm_v1)?(?:_?backend)?(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_BACKEND_NAMES = {
    "flashattn": "FLASH_ATTN",
    "flashattention": "FLASH_ATTN",
    "flashinfer": "FLASHINFER",
    "tritonattn": "TRITON_ATTN",
    "xformers": "XFORMERS",
    "torchsdpa": "TORCH_SDPA",
    "flexattention": "FLEX_ATTENTION",
    "rocmattn": "ROCM_ATTN",
}
_EAGER_RE = re.compile(r"\beager\b", re.IGNORECASE)
# Clauses of a label: `piecewise cuda graph is enabled but decode cuda graph is disabled` says two things.
_CLAUSE_RE = re.compile(r"[,;]|\b(?:but|and|while|whereas|versus|vs)\b", re.IGNORECASE)
_GRAPHS_RE = re.compile(r"\bcuda[ -]?graphs?\b", re.IGNORECASE)


def run_label(event: EventBase, lookup: Lookup, taken: set[int]) -> str | None:
    """The line of prose right above `event`'s line (a blank line or a fence between them), where the parser kept
    it: not a log line (no header, no process prefix), not another event's line, and holding a word."""
    found = label_line(event, lookup, taken)
    return found[1] if found is not None else None


def label_line(event: EventBase, lookup: Lookup, taken: set[int]) -> tuple[int, str] | None:
    """`run_label`'s line: its number and its text without markup; a summary line's own label (`Eager mode: 199 ms`)."""
    own = own_label(event)
    if own is not None:
        return event.line, own
    for number in range(event.line - 1, max(event.line - 1 - LABEL_GAP, 0), -1):
        if number in taken:
            return None
        text = lookup(event.source, number)
        if text is None:
            continue
        line = parse_envelope(event.source, number, text)
        if line.header is not None or line.process is not None or line.skip:
            return None
        if SHELL_COMMAND_RE.match(line.message):  # not a label: the heading above it is (`_command_labels`)
            continue
        label = _LABEL_MARKUP_RE.sub("", line.message).strip()
        return (number, label) if _LETTER_RE.search(label) else None
    return None


def label_settings(label: str, engine: str) -> dict[str, Any]:
    """The settings a run's label names, keyed as the engine's configuration dump keys them: a flag of the engine's
    vocabulary (`--enforce-eager`, `--tensor-parallel-size 2`; off after `without` / `no`), a short parallelism
    setting (`TP=2`), one weight format (`FP8`; `FP16` / `BF16` unquantized), one attention backend
    (`VLLM_ATTENTION_BACKEND=TRITON_ATTN`, `FlashAttnBackend`), eager mode or CUDA graphs."""
    spec = REGISTRY.get(engine)
    if spec is None:
        return {}
    valued: dict[str, str] = {}  # a flag that takes a value -> its dump key
    switches: dict[str, str] = {}  # a flag that is on or off -> its key
    for spelling in spec.flags.values():
        for token in (spelling.flag or "").split():
            if not token.startswith("--") or "." in token:
                continue
            if spelling.config_keys:
                valued[token] = spelling.config_keys[0]
            elif not token.endswith("-config"):  # a JSON configuration: a bare mention sets nothing
                switches[token] = token[2:].replace("-", "_")
    out: dict[str, Any] = {}
    words = label.split()
    for i, word in enumerate(words):
        name, _, raw = word.strip(_LABEL_PUNCTUATION).partition("=")
        negated = bool(_NEGATION_RE.search(" ".join(words[:i])))
        if name in valued:
            raw = raw or (words[i + 1].strip(_LABEL_PUNCTUATION) if i + 1 < len(words) else "")
            if raw and not raw.startswith("-"):
                out[valued[name]] = cmdline.value(raw)
        elif name in switches:
            out[switches[name]] = not negated
        elif name.startswith("--no-") and "--" + name[5:] in switches:
            out[switches["--" + name[5:]]] = False
    for short in _SHORT_SETTING_RE.finditer(label):
        parallel = spec.flags.get(_SHORT_SETTINGS[short.group("name").lower()])
        if parallel is not None and parallel.config_keys:
            out.setdefault(parallel.config_keys[0], int(short.group("value")))
    formats = {f.lower() for f in _FORMAT_RE.findall(label)}
    quant = spec.flags.get("quantization")
    if len(formats) == 1 and quant is not None and quant.config_keys:
        (fmt,) = formats
        out.setdefault(quant.config_keys[0], "none" if fmt in _UNQUANTIZED else fmt)
    backends = {_BACKEND_NAMES[m.group("name").lower().replace("_", "")] for m in _BACKEND_RE.finditer(label)}
    attention = spec.flags.get("attention_backend")
    if len(backends) == 1 and attention is not None and not _NEGATION_RE.search(label):
        out.setdefault(attention.config_keys[0] if attention.config_keys else "attention_backend", backends.pop())
    # eager mode and CUDA graphs: the engine's switch for them (vLLM --enforce-eager, SGLang --disable-cuda-graph)
    graphs = spec.flags.get("cuda_graphs")
    eager_keys = [switches[t] for t in ((graphs.flag or "") if graphs else "").split() if t in switches]
    if eager_keys and eager_keys[0] not in out:
        for regex, eager in ((_EAGER_RE, True), (_GRAPHS_RE, False)):
            # Each clause that names it, negated before or after (`without CUDA graphs`, `decode cuda graph is
            # disabled`): CUDA graphs off in any clause is eager decode for that part of the model.
            clauses = [bool(_NEGATION_RE.search(c)) for c in _CLAUSE_RE.split(label) if regex.search(c)]
            if clauses:
                out[eager_keys[0]] = (not all(clauses)) if eager else any(clauses)
                break
    return out


# A run's heading that names a setting of the cause vocabulary (the warning vocabulary's subsystem words): causes whose
# setting is the slow path when the heading names it (`CPU + DISK offload`), and causes whose setting is the fast path,
# slow only when the heading says it is absent (`without MoE config`, `Before tuning:`, `no CUDA graphs`).
_PRESENT_IS_SLOW = frozenset({"cpu-offload-or-swap", "no-gpu-backend", "tp-over-slow-link"})
# Causes whose setting costs only against the same run without it: speculation that makes a run slower than one
# without it is the net loss (CAUSES.md, spec-net-loss), but a single run with speculation says nothing of its cost.
PRESENT_IS_SLOW_AGAINST_ANOTHER = frozenset({"spec-net-loss"})
_ABSENT_IS_SLOW = frozenset(
    {
        "cuda-graphs-disabled",
        "quantization-kernel-fallback",
        "torch-compile-or-warmup",
        "custom-allreduce-disabled",
        "nccl-no-p2p",
        "attention-backend-fallback",
    }
)
# Absence in a heading: the label's negations, and a run measured before a setting was made (`Before tuning:`).
_HEADING_ABSENT_RE = re.compile(r"\b(?:without|w/o|no|not|disabled?|off|before|untuned|default)\b", re.IGNORECASE)
# The engines' kernel tuning (fused-MoE and block-FP8 GEMM configs, `benchmark_moe.py --tune`): a tuned config is the
# kernel's fast path.
_TUNING_RE = re.compile(r"\b(?:un)?tun(?:ed|ing)\b", re.IGNORECASE)
# How strongly a heading says it, for the warned rules' score (a warning with a weak performance word and its
# subsystem in the message: docs/warnings.md): the author's words, not the engine's, and no measurement against another.
HEADING_STRENGTH = 0.75


def names_cause(label: str, cause: str) -> bool:
    """Whether a run's label names `cause`'s setting as present in any clause."""
    for clause in _CLAUSE_RE.split(label):
        found = subsystem_named(clause)
        if found is not None and found[0] == cause and _HEADING_ABSENT_RE.search(clause) is None:
            return True
    return False


def heading_cause(label: str, measured_against: Sequence[str] = ()) -> tuple[str, str] | None:
    """The cause a run's heading names, and the words: a setting of the cause vocabulary that is the slow path as the
    heading puts it, clause by clause. `measured_against`: the labels of the other runs measured beside it, of which
    one must not name a setting that is slow only against its absence (speculation)."""
    for clause in _CLAUSE_RE.split(label):
        found = subsystem_named(clause)
        cause = found[0] if found is not None else None
        if cause is None and _TUNING_RE.search(clause):
            cause = "quantization-kernel-fallback"
        if cause is None:
            continue
        absent = _HEADING_ABSENT_RE.search(clause) is not None
        if cause == "cuda-graphs-disabled" and not absent and _EAGER_RE.search(clause):
            return cause, clause.strip()  # eager mode named: the graphs' absence said the other way round
        if (cause in _PRESENT_IS_SLOW and not absent) or (cause in _ABSENT_IS_SLOW and absent):
            return cause, clause.strip()
        if (
            cause in PRESENT_IS_SLOW_AGAINST_ANOTHER
            and not absent
            and any(names_cause(other, cause) is False for other in measured_against)
        ):
            return cause, clause.strip()
    return None
