"""The warning vocabulary: what a WARNING or ERROR line no line type understood is about (docs/warnings.md).

Engines print new warnings every release. A line with a warning level that no line type read is not
dropped: its words say whether it is about performance and which part of the engine it names, and that
maps it to a cause, or to "not understood":

    WARNING [fused_moe.py:882] Grouped GEMM is not fully optimized yet for this shape
      performance words: "not fully optimized"  subsystem: "gemm" (message) -> quantization-kernel-fallback
    WARNING [api_server.py:91] Served model name differs from the model path
      no performance word -> not understood (listed, no finding)
    WARNING [tokenizer.py:12] The tokenizer class is deprecated and will be removed
      noise ("deprecated", "tokenizer") -> nothing

`classify` does the words; `warning_level` says whether a parsed line is a warning at all. The pipeline
calls `read_warning` for a warning line that every line type passed over (logdoctor/parse/pipeline.py).
Tracebacks and `SomeError: message` lines are failures, read by their structure elsewhere: this module
leaves them alone. The drift checker (bench/drift/) uses `classify` on every logger call of a release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from logdoctor.events import EngineWarning, EventBase
from logdoctor.parse.envelope import LogLine

# Literal fragments that make a physical line worth reading as a warning: the level words of vLLM's, Python
# logging's and NCCL's headers, and Python's `warnings` module format (`file.py:12: UserWarning: ...`).
WARNING_KEYWORDS: tuple[str, ...] = ("WARN", "ERROR", "CRITICAL", "Warning: ")

# SGLang's own header (`[2025-11-30 10:00:00 TP0] msg`) carries no level: a warning looks like any other line. Such
# a line is read only when it holds one of these fragments of a strong performance word, and kept only when a cause
# fits (an INFO line that says "fallback" and names a subsystem is as telling as a WARNING).
LEVELLESS_KEYWORDS: tuple[str, ...] = (
    "all back",
    "alling back",
    "allback",
    "ell back",
    "optimiz",
    "slow",
    "erformance",
)


# What a levelless line must hold near its start: the `[20..` of SGLang's date.
LEVELLESS_COMPANION = "[20"


def may_be_warning(text: str) -> bool:
    """Whether a line holds one of WARNING_KEYWORDS, or one of LEVELLESS_KEYWORDS after an SGLang header's date
    (`[20..`) near its start (the same literals, tested one by one without a loop: this runs on every line no line
    type's keyword selected)."""
    if "WARN" in text or "ERROR" in text or "CRITICAL" in text or "Warning: " in text:
        return True
    return LEVELLESS_COMPANION in text[:80] and (
        "all back" in text
        or "alling back" in text
        or "allback" in text
        or "ell back" in text
        or "optimiz" in text
        or "slow" in text
        or "erformance" in text
    )


_LEVELLESS_HEADERS = frozenset({"sglang"})

# Headers that carry a level.
_LEVELS = frozenset({"WARNING", "WARN", "ERROR", "CRITICAL"})

# Python's warnings.showwarning format: `/usr/lib/python3/site-packages/torch/x.py:12: UserWarning: message`
_PY_WARNING_RE = re.compile(r"(?:^|[\s/])(?P<file>[\w.-]+\.py):\d+: (?P<category>[A-Z]\w*Warning): (?P<message>.*)")

# Lines of a traceback or an exception: read as failures by their structure, never here.
_FAILURE_RE = re.compile(
    r"^(?:Traceback \(most recent call last\)|File \"|During handling of|The above exception|raise\b|"
    r"[\w.]*(?:Error|Exception|Interrupt|Exit)\b(?:\(|:|$)|[\^~ ]+$)"
)

# Noise: warnings about the API, tokenizers, templates and deprecations; never a performance cause.
_NOISE_RE = re.compile(
    r"deprecat|FutureWarning|will be removed|no longer (?:supported|used|needed)|renamed|is ignored|"
    r"tokeni[sz]|chat.?template|generation.?config|special tokens?|pad.?token|eos.?token|"
    r"trust.?remote.?code|revision|processor|use_fast|telemetry|usage stats|hf.?token|huggingface|"
    r"sampling param|logprobs|tool.?call|reasoning.?parser|response_format|prompt|accuracy|leaked|"
    r"destroy_process_group|destroyed before|\[shutdown\]|SECURITY WARNING",
    re.IGNORECASE,
)

# Performance words: a strong one says the choice is slow; a weak one that something is off or absent.
_STRONG_PERF_RE = re.compile(
    r"fall(?:ing|s)? ?back|fallback|fell back|not (?:fully |yet )?optimi[sz]ed|sub-?optimal|\bslow(?:er|ly|s)?\b|"
    r"performance (?:may|might|will|could) |degrad|emulat|inefficien|not efficient|less efficient|lower performance|"
    r"reduced performance|performance (?:penalty|impact|drop|regression|loss|hit)|"
    r"(?:reduce|reduces|reducing|lower|lowers|hurt|hurts|harm|harms|affect|affects|impact|impacts) (?:the )?performance",
    re.IGNORECASE,
)
_WEAK_PERF_RE = re.compile(
    r"\bdisabl(?:e|ed|es|ing)\b|not (?:be )?(?:supported|available|enabled|compatible)|unsupported|unavailable|"
    r"default (?:[\w-]+ ){0,3}config|\beager\b|cannot use|can't use|could not use|unable to use|not using|"
    r"(?:will )?not be used|won't be used|no [\w-]+ will be used|"
    r"\bturn(?:ed|ing)? off\b|skip(?:ped|ping)? (?:\w+ )?(?:capture|compil|tuning)|insufficient|too small|"
    r"(?:lacks?|no|without|not have|does not have) native",
    re.IGNORECASE,
)

# Subsystem words -> cause, most specific first (a drafter's CUDA graph is about CUDA graphs, a custom
# all-reduce's P2P check about the all-reduce). Matched on the message and on the logger's file name, both
# lower-cased with `_` and `-` read as spaces.
_SUBSYSTEMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (cause, re.compile(pattern))
    for cause, pattern in (
        (
            "cuda-graphs-disabled",
            r"cuda ?graph|graph capture|capture size|enforce eager|eager mode|"
            r"(?:run|runs|running|execution|fall(?:s|ing)? back) (?:to )?eager|(?:kept|stays?|remains?|left) eager|graph pool",
        ),
        (
            "no-gpu-backend",
            r"cpu (?:platform|backend|only)|no (?:cuda|gpu)s?\b|cuda (?:is )?not available|running on (?:the )?cpu",
        ),
        ("custom-allreduce-disabled", r"custom (?:all ?reduce|ar)\b|all ?reduce|allgather|reduce ?scatter|mscclpp"),
        ("nccl-no-p2p", r"\bnccl\b|\bp2p\b|peer (?:to peer|access)|nvlink|\bipc\b|cumem|symm(?:etric)? mem"),
        ("mamba-hybrid-issue", r"mamba|\bhybrid\b|linear attention|\bgdn\b|\bssm\b|gated delta"),
        ("spec-net-loss", r"specul|spec decod|\bdraft|\beagle|\bmtp\b|ngram|medusa|proposer|dflash|\bverif"),
        ("cpu-offload-or-swap", r"offload|\bswap|host memory|cpu memory|hicache|hierarchical cache"),
        (
            "kv-cache-pressure",
            r"kv ?cache|cache blocks?|gpu blocks|block size|preempt|prefix cach|radix cache|kv (?:pool|block)|\bevict",
        ),
        ("torch-compile-or-warmup", r"compil|inductor|dynamo|warm ?up|graph module|fx graph"),
        (
            "quantization-kernel-fallback",
            r"quant|\bfp8|\bfp4|\bint[48]\b|w8a8|w4a16|w4a8|\bawq|\bgptq|marlin|cutlass|machete|\bmoe\b|expert|"
            r"\bgemm|deep ?gemm|mxfp|nvfp|\bkernel|autotun|tactics|fast path|\bfused|fusion|\btriton\b|custom op|"
            r"\bgelu|\brope\b|layer ?norm|rms ?norm|activation|onednn|\blinear\b|deep ?ep|all ?2 ?all|all to all|"
            r"quantization scheme|\bscheme\b",
        ),
        (
            "attention-backend-fallback",
            r"attention|\battn|flash ?attn|xformers|\bsdpa\b|\bmla\b|flash ?mla|\bf?mha\b|fmha",
        ),
        (
            "chunked-prefill-or-batching-config",
            r"chunked prefill|max num (?:batched tokens|seqs)|max running requests|batch size|scheduler|"
            r"scheduling|max prefill tokens|chunk size|chunking|prefill tile|token budget",
        ),
        ("tp-over-slow-link", r"\bray\b|multi ?node|\bnodes\b|\bgloo\b|\bpcie\b|infiniband|\bnetwork\b"),
    )
)

MESSAGE_LIMIT = 300  # characters of a warning's text kept in its event
# Characters of a warning's text read for its words: they come first, and a prompt or a dump after them would cost
# ~60 regex scans a character (docs/security.md, *Bounded*).
CLASSIFIED_CHARS = 4096


@dataclass(frozen=True)
class Classified:
    """What the vocabulary says of one warning's text."""

    noise: bool = False
    cause: str | None = None  # None: no cause fits (a performance word without a subsystem, or none at all)
    performance: str | None = None  # the performance word found, as written
    subsystem: str | None = None  # the subsystem word found, as written
    subsystem_from: Literal["message", "logger"] | None = None  # the logger: the call's file name or NCCL's header
    strength: float = 0.0  # 0.5 .. 1.0 when a cause fits (docs/warnings.md, *Scores*)


# Subsystems with no cause: a performance word about these (sampling, the host's limits, the network name) is
# listed as not understood rather than pinned on a cause it does not belong to. A non-quantized layer falling back
# to the unquantized method is the normal path of a layer that was never quantized, not a slower kernel.
_UNMAPPED_RE = re.compile(
    r"non ?quantized|unquantized|sampl(?:ing|er)|top ?[pk]\b|\bnuma\b|ulimit|hostname|loopback|\blora\b|tokeni|multimodal|"
    r"\bvision\b|\bimage|\baudio|\bvideo|logging|metrics|tracing|\bdtype|float(?:16|32|64)|precision|"
    r"mooncake|\bnixl|moriio|connector|encoder|embedding|watermark|browsing|interpreter|progress|serializ|pickle|"
    # Loading the weights (once, at start-up), the host's memory allocation, the disaggregated and tiered caches'
    # transfers, the device lookups of other platforms, profiling and debugging aids, the control plane (health
    # checks, the load publisher, elastic membership, docs) and output shaping (grammars, pooling, scoring): no cause of
    # docs/causes.md follows from them.
    r"weights? (?:load|transfer|cache)|(?:load|loading) weights|checkpoint|load ?format|model loader|safetensors|\bgds\b|\bmmap\b|hugepage|allocator|memory pool|"
    r"\bwsl\b|\bdma\b|\buva\b|staging|\btransfer|\bl3\b|storage|disaggregat|\bpd\b|"
    r"device capability|mem get info|amdsmi|gcn|\bxpu\b|xccl|\bnpu\b|\bmusa\b|\bmlx\b|"
    r"\bamx\b|profil|nvtx|coredump|dump|\bdebug|ssl|certificate|signal handler|health|load publisher|"
    r"elastic|static dir|\bdocs\b|grammar|structured output|outlines|json schema|pooling|scor(?:e|ing)\b|"
    r"rerank|maxsim|jpeg|modality|\bvit\b|snapshot|criu|\bshm\b|spinloop|model (?:of )?type|transformers (?:implementation|backend)|"
    r"context parallel|\bcp\b|\bdcp\b|memory saver|sleep mode|\bnvml|pynvml|\bvmm\b|package version|loading workers|\bmr\b|"
    r"memory regist"
)

# Generic words for an operation's implementation: with no subsystem named, a native or reference path in place of
# the fast one is a slower kernel.
_IMPLEMENTATION_RE = re.compile(
    r"(?:torch|pytorch) native|native (?:implementation|path|backend|op\b)|(?:back|fallback) to native|"
    r"reference (?:path|implementation|kernel)|naive implementation|hw agnostic|\bops?\b|\bjit\b|\bhpc\b|"
    r"flashinfer|\baiter\b|\basm\b|cute ?dsl|fly ?dsl"
)


def _words(text: str) -> str:
    return text.lower().replace("_", " ").replace("-", " ")


def _named(words: str) -> tuple[str | None, str] | None:
    """The cause of the subsystem words name (None for one with no cause), and the words. A sentence names its
    subject first: of a mapped and an unmapped subsystem, the one that starts earlier wins ("bitsandbytes
    quantization ... slower than non-quantized models" is about quantization)."""
    unmapped = _UNMAPPED_RE.search(words)
    for cause, pattern in _SUBSYSTEMS:
        m = pattern.search(words)
        if m is not None and (unmapped is None or m.start() < unmapped.start()):
            return cause, m.group(0).strip()
    if unmapped is not None:
        return None, unmapped.group(0).strip()
    return None


def _implementation(words: str) -> tuple[str | None, str] | None:
    """The words of an implementation (a native or reference path, an op, a kernel library): a kernel, named
    when nothing else is."""
    implementation = _IMPLEMENTATION_RE.search(words)
    return None if implementation is None else ("quantization-kernel-fallback", implementation.group(0).strip())


def subsystem_named(text: str) -> tuple[str | None, str] | None:
    """The cause of the subsystem a text names and the words (None for a subsystem with no cause), or None: the
    vocabulary's subsystem words without its performance words (a run's heading names a setting, not a symptom)."""
    return _named(_words(text))


def classify(message: str, logger_file: str | None = None, *, nccl: bool = False) -> Classified:
    """The vocabulary's reading of one warning: noise, a cause with its words, or no cause.

    A cause needs a performance word and a subsystem word; the subsystem may come from the logger's file
    name (`fused_moe.py`), or from the header of an NCCL line (`nccl`), at a lower strength."""
    message = message[:CLASSIFIED_CHARS]
    if _NOISE_RE.search(message):
        return Classified(noise=True)
    strong = _STRONG_PERF_RE.search(message)
    perf = strong or _WEAK_PERF_RE.search(message)
    words = _words(message)  # read once: the subsystem words, then (when nothing else names one) an implementation
    found = _named(words)
    where: Literal["message", "logger"] = "message"
    if found is None and logger_file:
        found = _named(_words(logger_file.rsplit("/", 1)[-1].removesuffix(".py")))
        where = "logger"
    if found is None and nccl:
        found, where = ("nccl-no-p2p", "nccl"), "logger"
    if found is None:
        found, where = _implementation(words), "message"
    if perf is None:
        return Classified(subsystem=found[1] if found else None, subsystem_from=where if found else None)
    if found is None:
        return Classified(performance=perf.group(0))
    strength = 0.5 * (1.0 if strong else 0.5) + 0.5 * (1.0 if where == "message" else 0.5)
    return Classified(
        cause=found[0], performance=perf.group(0), subsystem=found[1], subsystem_from=where, strength=strength
    )


def failure_line(text: str) -> bool:
    """Whether a message is a line of a traceback or an exception (`ValueError: ...`): a failure, not a warning."""
    return _FAILURE_RE.match(text) is not None


def warning_level(line: LogLine) -> tuple[str, str, str | None] | None:
    """(level, message, logger file) of a line printed at WARNING or above, or None: a line whose header has a
    warning level (vLLM, Python logging, NCCL `WARN`, torch's `[W ...]`), or Python's `file.py:12: UserWarning:`."""
    if line.level in _LEVELS:
        return ("WARNING" if line.level == "WARN" else line.level), line.message, line.file
    if "Warning: " in line.message:
        m = _PY_WARNING_RE.search(line.message)
        if m is not None:
            return "WARNING", f"{m.group('category')}: {m.group('message')}", m.group("file")
    return None


def read_warning(line: LogLine, engine: str) -> list[EventBase] | None:
    """The event of a warning line no line type understood: `EngineWarning` (a cause, or none), [] for noise and
    for an SGLang line without a level that no cause fits, None when the line is no warning or is part of a failure
    (a traceback, an exception line)."""
    found = warning_level(line)
    levelless = found is None and line.header in _LEVELLESS_HEADERS and line.level is None
    if levelless:
        found = ("INFO", line.message, line.file)
    if found is None:
        return None
    level, message, logger_file = found
    text = message[:CLASSIFIED_CHARS].strip()
    if not text or message[:1].isspace() or failure_line(text):
        return None
    # No level to say it is a warning, and no cause to say it is about performance: an ordinary line (read only for its
    # performance word), not one left unread. The strong word first: one regex, where the vocabulary is some twenty.
    if levelless and (_STRONG_PERF_RE.search(text) is None or classify(text, logger_file).cause is None):
        return []
    return warning_event(line, engine, text, level=None if levelless else level, logger_file=logger_file)


def warning_event(
    line: LogLine, engine: str, text: str, *, level: str | None = "WARNING", logger_file: str | None = None
) -> list[EventBase]:
    """The warning vocabulary's event for one warning's text: [EngineWarning], or [] for noise. An NCCL WARN line's
    grammar calls it beside its own event."""
    nccl = line.header == "nccl" or engine == "nccl"
    verdict = classify(text, logger_file, nccl=nccl)
    if verdict.noise:
        return []
    return [
        EngineWarning(
            source=line.source,
            line=line.number,
            end_line=line.end,
            timestamp=line.timestamp,
            level=(line.level or "WARN") if nccl else level,
            process=line.process,
            engine=engine,
            cause=verdict.cause,
            performance=verdict.performance,
            subsystem=verdict.subsystem,
            subsystem_from=verdict.subsystem_from,
            strength=verdict.strength,
            logger=logger_file,
            message=text[:MESSAGE_LIMIT],
        )
    ]
