"""Envelope stripping: turn one physical line of any wrapper into a `LogLine` with a bare message.

Handles, in this order: a JSON log record's line (Docker's json-file driver, `journalctl -o json`), HTML entities (a
log copied from a page's source), tqdm carriage returns and CRLF, ANSI colour codes (also with the ESC byte lost
in a copy: ` [36m`), outer wrappers (docker `--timestamps`, compose `svc-1  | `, journald, kubectl
`[pod/...]`, mpirun `[1,0]<stdout>:`), then the engine header:

    (APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt ...   -> vLLM
    INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: ...                         -> vLLM <= 0.7
    [2025-05-09 11:14:36 DP0 TP1] Decode batch, #running-req: 4, ...                    -> SGLang
    2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] Decode batch. ...   -> SGLang (plain)
    host:531:1762 [0] NCCL INFO Channel 00 : 0[4] -> 1[5] via SHM/direct/direct          -> NCCL

Pasted-text artefacts (Markdown fences, shell prompts, `...` elisions) are marked `skip`.
"""

from __future__ import annotations

import functools
import html
import json
import re
from dataclasses import dataclass, field

from logdoctor.events import ProcessInfo
from logdoctor.registry import REGISTRY

# `\x1b[1;36m`, and the same with the ESC byte lost in a copy (` [36m`, `[0;0m`). Also OSC-less `^[[`.
ANSI_RE = re.compile(r"(?:\x1b|\^\[)\[[0-9;]*m|\[[0-9][0-9;]*m")

# Starts with a literal `[`, so `re` skips to each bracket at C speed: a cheap test before ANSI_RE.
_ESCLESS_ANSI_RE = re.compile(r"\[[0-9][0-9;]*m")

_OUTER_WRAPPERS = [
    # docker logs --timestamps / kubectl --timestamps: RFC 3339 with nanoseconds, optional ` | `
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?(?:\s+\|)?\s+"),
    # journald short format: `Nov 30 10:00:00 host vllm[123]: `
    re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d [\w.-]+ [\w.@/-]+(?:\[\d+\])?: "),
    # docker compose: `svc-1  | `, or a bare `container_name  | ` when no other ` | ` follows: the first cell of
    # a pasted table (`C | Agg tok/s | ...`, `1 | 18.0 | ...`) is not a service name.
    re.compile(r"^(?:[A-Za-z][\w.-]*[-_]\d+|[A-Za-z][\w.-]+(?=\s+\|\s(?!.*\s\|\s)))\s+\|\s"),
    # kubectl logs --prefix: `[pod/name/container] `
    re.compile(r"^\[pod/[^\]]+\] "),
    # OpenMPI --tag-output: `[1,0]<stdout>:`
    re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:"),
    # multi-node launchers number each node's output: `0: [rank0]:[W305 ...]`, `0: [2025-03-05 03:55:35 TP0] ...`
    re.compile(r"^\d{1,4}: (?=\[rank\d+\]:|\[\d{4}-\d\d-\d\d )"),
    # a GitHub / e-mail quote of a pasted log: `> INFO 05-08 ...`, nested `> > ...`, a bare `>` for an empty
    # line (never `>>> `, a Python prompt, which stays a skipped artefact)
    re.compile(r"^(?:>(?: |$))+"),
    # a line-number gutter: `cat -n` / `nl` (`    12\t`), an editor or `bat` (`  12 | `, `12 │ `), `grep -n`
    # (`12:(APIServer pid=1) INFO ...`: only before a letter, `(` or `[`, so a time `10:00:00` stays). A `|`
    # gutter only when no other ` | ` follows: `1 | 18.0 | 18.0` is a row of a pasted table.
    re.compile(r"^\s*\d{1,7}(?:\t| ?[|│] ?(?!.*\s[|│]\s)|:(?=[A-Za-z(\[]))"),
]

# vLLM: LEVEL MM-DD HH:MM:SS [file.py:N] msg   (<= 0.7.3 without the `[`); also after a Markdown `**` a user
# added to a pasted line
VLLM_HEADER_RE = re.compile(
    r"(?:^|(?<=[\s)\]$*]))(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    r"(?P<md>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?:\.\d+)? (?P<bracket>\[)?(?P<file>[^\]\s:]+):(?P<lineno>\d+)\] ?"
)
# Where a vLLM header can start: one regex with a literal first character is far cheaper than VLLM_HEADER_RE's
# lookbehind tried at every position, so it finds the first candidate (and tells whether another header follows).
_LEVEL_WORD_RE = re.compile(r"DEBUG |INFO |WARNING |ERROR |CRITICAL ")
# vLLM process prefixes: `(APIServer pid=1)`, `(VllmWorker rank=0 pid=281)`, `(RayWorkerWrapper pid=4, ip=10.0.0.1)`
PROC_RE = re.compile(r"\((?P<name>[A-Za-z_][\w .=:-]*?)\s+pid=(?P<pid>\d+)(?:,\s*ip=(?P<ip>[^)\s]+))?\)")
_LEADING_PROCS_RE = re.compile(r"^\s*((?:\([A-Za-z_][\w .=:-]*?\s+pid=\d+(?:,\s*ip=[^)\s]+)?\)\s*)+)")

# SGLang: [YYYY-MM-DD HH:MM:SS(.mmm)? RANKS] msg ; leading `[` is sometimes lost in a paste
SGLANG_HEADER_RE = re.compile(
    r"(?:^|(?<=[\s:)]))\[?(?P<date>\d{4}-\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d)(?:\.\d{3})?"
    r"(?P<ranks>(?: (?:DP|PP|ATTN_CP|MOE_DP|TP|EP|CP)\d+)*)\] ?"
)
# SGLang time-only paste `[03:51:54] Decode batch`
SGLANG_TIME_ONLY_RE = re.compile(r"^\[(?P<hms>\d\d:\d\d:\d\d)(?P<ranks>(?: (?:DP|PP|TP|EP)\d+)*)\] ")
# Python logging / host-app format: `2025-12-04 20:35:53 INFO 151972 [file.py:287] msg`,
# `[2026-02-26 05:19:58] WARNING server_args.py:1245: msg`, `[2025-05-22 12:33:26] INFO core.py:58: msg`
PLAIN_HEADER_RE = re.compile(
    r"^\[?(?P<date>\d{4}-\d\d-\d\d)[ T](?P<hms>\d\d:\d\d:\d\d)(?:[.,]\d+)?\]? "
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b:?\s+(?:\d+\s+)?(?:\[?(?P<file>[\w./-]+\.py):\d+\]?:?\s+)?"
)
# Module files only SGLang has: a Python-logging header naming one of them is an SGLang line (`sglang-plain`).
_SGLANG_FILES = frozenset(
    {
        "scheduler_metrics_mixin.py",
        "metrics_reporter.py",
        "server_args.py",
        "tokenizer_manager.py",
        "detokenizer_manager.py",
        "data_parallel_controller.py",
        "cuda_graph_runner.py",
        "eagle_worker.py",
        "model_runner_kv_cache_mixin.py",
        "kv_cache_configurator.py",
    }
)
# `WARNING:sglang.srt.server_args:msg` (Python basicConfig default)
BASIC_CONFIG_RE = re.compile(r"^(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL):(?P<logger>[\w.]+):")
# NCCL: [ts] host:pid:tid [dev] (TRACE time )?(file:line (func) )?NCCL LEVEL msg
NCCL_HEADER_RE = re.compile(
    # the host starts where a run of host characters starts: from every character of a long run, the search cost
    # grew with the square of the line
    r"(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] )?(?<![^\s:\[\]()])(?P<host>[^\s:\[\]()]+):(?P<pid>\d+):(?P<tid>\d+) "
    r"(?:\[(?P<dev>\d+)\] )?(?:\d+\.\d+ )?(?:(?P<file>\S+):(?P<lineno>\d+)(?: \([^)]*\))? )?"
    r"NCCL (?P<level>INFO|WARN|TRACE|CALL) ?"
)
# uvicorn `INFO:     127.0.0.1:37582 - "POST /v1/chat/completions HTTP/1.1" 200 OK`
UVICORN_RE = re.compile(r"^(?P<level>INFO|WARNING|ERROR):\s{2,}")
# PyTorch c10d: `[rank1]:[E ProcessGroupNCCL.cpp:563] ...` or `[rank0]:[E321 02:07:08.408 ProcessGroupNCCL.cpp:607]`
C10D_RE = re.compile(r"^\[rank(?P<rank>\d+)\]:\[(?P<sev>[IWEF])[^\]]*\] ")

# Pasted-text artefacts.
_FENCE_RE = re.compile(r"^\s*(?:```|~~~)")
_PROMPT_RE = re.compile(r"^\s*(?:\$|>>>|[\w.-]+@[\w.-]+(?::[^\s#$]*)?[#$]|\([\w.-]+\)\s*\$)\s+\S")
_ELISION_RE = re.compile(r"^\s*(?:\.\.\.|…|\[\.\.\.\]|\(\.\.\.\)|<snip>|\[snip\])\s*$")
# A prompt before a server's launch, offline-benchmark or nccl-tests command (`$ vllm serve M --enforce-eager`, `root@box:~# CUDA_VISIBLE_DEVICES=0
# python -m sglang.launch_server ...`, `$ docker run ... vllm/vllm-openai ...`): the command is configuration the
# engines' command-line grammars read, so the line is kept; any other command behind a prompt (`grep ... log`) stays
# a skipped artefact, so the lines it searched for are not read twice.
_LAUNCH_RE = re.compile(
    r"\b(?:vllm serve|python\d?(?:\.\d+)? -m (?:vllm\.entrypoints\.|sglang\.launch_server)|sglang serve|"
    r"docker run\b.*\bvllm/vllm-openai|vllm bench (?:latency|throughput)|python\d?(?:\.\d+)? -m sglang\.bench_\w+|"
    r"python\d?(?:\.\d+)? (?:\S*/)?benchmark_(?:latency|throughput)\.py|"
    r"(?:all_reduce|all_gather|alltoall|broadcast|reduce_scatter|reduce|sendrecv|scatter|gather|hypercube)_perf"
    r"(?:_mpi)?)(?=[\s:@]|$)"
)
# How a fence or an elision starts once `strip()` has removed what `^\s*` would match: a cheap test before the regexes.
_ARTEFACT_STARTS = ("```", "~~~", "...", "…", "[...]", "(...)", "<snip>", "[snip]")

_RANK_PART_RE = re.compile(r"(DP|PP|ATTN_CP|MOE_DP|TP|EP|CP)(\d+)")
_VLLM_NAME_RANK_RE = re.compile(r"(DP|PP|PCP|TP|DCP|EP)(\d+)")


@dataclass(slots=True)
class LogLine:
    """One logical line after envelope stripping. `number`/`end` are 1-based physical line numbers."""

    source: str
    number: int
    text: str  # the whole line, CR-resolved and ANSI-stripped, wrappers removed
    message: str  # what the engine logged, without any header
    end: int | None = None
    header: str | None = None  # "vllm", "vllm-old", "sglang", "sglang-plain", "nccl", "uvicorn", "c10d", "plain"
    level: str | None = None
    timestamp: str | None = None
    file: str | None = None
    process: ProcessInfo | None = None
    skip: bool = False  # Markdown fence, shell prompt, elision
    extras: dict[str, str] = field(default_factory=dict)

    @property
    def engine_hint(self) -> str | None:
        """The engine whose header this line carries (the specs say which headers each engine owns)."""
        return REGISTRY.header_engine(self.header)


# The field that holds the line in a JSON log record: Docker's json-file driver and Fluentd (`log`), `journalctl -o
# json` (`MESSAGE`), structured loggers and exports of Loki or CloudWatch (`message`, `msg`), Google Cloud Logging
# (`textPayload`). The first one present wins.
_JSON_LINE_KEYS = ("log", "MESSAGE", "message", "msg", "textPayload")
_JSON_RECORD_MAX_CHARS = 65_536  # a longer line is a document (a benchmark's JSON report), not one log line
# The entities an HTML page's source escapes a log's text with; a log's own text rarely holds one.
_HTML_ENTITY_RE = re.compile(r"&(?:quot|#x27|#39|#34|lt|gt|amp|nbsp);")


def _json_record(raw: str) -> str | None:
    """The line a JSON log record holds (`{"log":"INFO 05-08 ...\\n","stream":"stderr","time":"..."}`), or None."""
    try:
        record = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    for key in _JSON_LINE_KEYS:
        value = record.get(key)
        if isinstance(value, str):
            return value.rstrip("\n").replace("\n", " ")
    return None


def clean_physical(raw: str) -> str:
    """Unwrap a JSON log record, decode HTML entities, resolve carriage returns (keep the last non-empty segment:
    tqdm redraws, CRLF) and strip ANSI codes."""
    if raw.startswith('{"') and raw.rstrip().endswith("}") and len(raw) <= _JSON_RECORD_MAX_CHARS:
        record = _json_record(raw)
        raw = raw if record is None else record
    if "&" in raw and _HTML_ENTITY_RE.search(raw):  # a log copied from a page's HTML source: `&#x27;model&#x27;`
        raw = html.unescape(raw)
    if "\r" in raw:
        segments = [s for s in raw.split("\r") if s.strip()]
        raw = segments[-1] if segments else ""
    if "\x1b" in raw or "^[" in raw or ("[" in raw and _ESCLESS_ANSI_RE.search(raw)):
        raw = ANSI_RE.sub("", raw)
    return raw.rstrip("\n")


def strip_outer(text: str) -> str:
    """Remove container/journald/compose wrappers (repeatedly: a docker timestamp before a compose prefix)."""
    # Every wrapper starts with a digit, a letter, `[`, `>` or a gutter's padding: most engine lines (`(APIServer pid=1) ...`) have
    # none and need no regex at all. (`isalnum` is true for whatever `\d` and `[A-Za-z]` match.)
    if not text or not (text[0].isalnum() or text[0] in "[> "):
        return text
    for _ in range(3):
        for pattern in _OUTER_WRAPPERS:
            m = pattern.match(text)
            if m:
                text = text[m.end() :]
                break
        else:
            return text
    return text


@functools.lru_cache(maxsize=4096)  # a log has few processes and ProcessInfo is frozen: share them
def vllm_process(name: str, pid: int | None, ip: str | None = None) -> ProcessInfo:
    """Map a vLLM process name to a role and ranks: `Worker_DP0_TP1_EP1`, `VllmWorker rank=1`, `EngineCore_DP0`."""
    name = name.strip()
    ranks: dict[str, int] = {}
    for key, value in _VLLM_NAME_RANK_RE.findall(name):
        ranks.setdefault(key, int(value))
    lowered = name.lower()
    if lowered.startswith("apiserver") or lowered.startswith("api_server"):
        role = "APIServer"
    elif lowered.startswith("enginecore") or lowered.startswith("dpenginecore"):
        role = "EngineCore"
        m = re.search(r"_(\d+)$", name)
        if m and "DP" not in ranks:
            ranks["DP"] = int(m.group(1))
    elif lowered.startswith("ray"):
        role = "RayWorker"
    elif "worker" in lowered:
        role = "Worker"
        m = re.search(r"rank=(\d+)", name)
        if m:
            ranks.setdefault("TP", int(m.group(1)))
    else:
        role = name.split()[0] if name else "unknown"
    return ProcessInfo(
        role=role,
        name=name,
        pid=pid,
        host=ip,
        tp_rank=ranks.get("TP"),
        pp_rank=ranks.get("PP"),
        dp_rank=ranks.get("DP"),
        ep_rank=ranks.get("EP"),
    )


@functools.lru_cache(maxsize=1024)
def sglang_process(ranks: str) -> ProcessInfo:
    parts = dict(_RANK_PART_RE.findall(ranks))
    if not parts:
        return ProcessInfo(role="Main")
    return ProcessInfo(
        role="Scheduler",
        tp_rank=int(parts["TP"]) if "TP" in parts else 0,
        pp_rank=int(parts["PP"]) if "PP" in parts else None,
        dp_rank=int(parts["DP"]) if "DP" in parts else None,
        ep_rank=int(parts["EP"]) if "EP" in parts else None,
    )


_PREFIX_CACHE_LIMIT = 256  # longer prefixes (pasted records glued together) are rare: not cached, memory stays small


@functools.lru_cache(maxsize=1024)
def _process_of_prefix(prefix: str) -> ProcessInfo | None:
    procs = list(PROC_RE.finditer(prefix))
    if not procs:
        return None
    last = procs[-1]
    return vllm_process(last.group("name"), int(last.group("pid")), last.group("ip"))


def _last_process(prefix: str) -> ProcessInfo | None:
    """The process of the last `(Name pid=N)` in the text before a header."""
    if "pid=" not in prefix:  # every match holds it; SGLang, NCCL and old vLLM lines mostly have no prefix
        return None
    # A log repeats a few prefixes on every line (`(APIServer pid=1) `): look each up once.
    if len(prefix) <= _PREFIX_CACHE_LIMIT:
        return _process_of_prefix(prefix)
    return _process_of_prefix.__wrapped__(prefix)


def parse_envelope(source: str, number: int, raw: str) -> LogLine:
    """Strip every envelope from one physical line. Never raises."""
    return parse_cleaned(source, number, clean_physical(raw))


# Markdown bold a user put around a value of a pasted line (`torch.compile takes **7.51 s** in total`) or around
# an environment setting of a pasted command (`**NCCL_P2P_DISABLE=1** ./all_reduce_perf ...`): the value or the
# setting is read without it. Only a span that starts with a digit or is one `NAME=VALUE` assignment of an
# upper-case name, so `**kwargs` and bold words stay as they are.
_MD_BOLD_VALUE_RE = re.compile(r"\*\*(\d[^*\n]*?|[A-Z][A-Z0-9_]*=[^*\s]*)\*\*")


def parse_cleaned(source: str, number: int, cleaned: str) -> LogLine:
    """`parse_envelope` of a line `clean_physical` has already cleaned (the pipeline cleans once for both uses)."""
    text = strip_outer(cleaned)
    if "**" in text:
        text = _MD_BOLD_VALUE_RE.sub(r"\1", text)
    line = LogLine(source=source, number=number, text=text, message=text)
    stripped = text.strip()
    if not stripped:
        return line
    if stripped.startswith(_ARTEFACT_STARTS) and (_FENCE_RE.match(stripped) or _ELISION_RE.match(stripped)):
        line.skip = True
        return line

    # NCCL first: its WARN timestamp looks like SGLang's header.
    if "NCCL " in text:
        m = NCCL_HEADER_RE.search(text)
        if m:
            prefix_proc = _last_process(text[: m.start()])
            line.header = "nccl"
            line.level = m.group("level")
            line.timestamp = m.group("ts")
            line.message = text[m.end() :]
            dev = m.group("dev")
            line.process = ProcessInfo(
                role="NCCL",
                name=prefix_proc.name if prefix_proc else None,
                pid=int(m.group("pid")),
                host=m.group("host"),
                device=int(dev) if dev is not None else None,
            )
            return line

    # vLLM: take the *last* header on the line (a paste can glue a truncated record to the next one).
    # The regex has no literal prefix: search from the first level word (no header starts before it; the
    # lookbehind still sees the text before), and look for a second header only when a `]` (every header has
    # one; a one-character find is a memchr) and a level word follow.
    level_word = _LEVEL_WORD_RE.search(text)
    m = VLLM_HEADER_RE.search(text, level_word.start()) if level_word is not None else None
    if m is not None:
        first_end = m.end()
        if text.find("]", first_end) != -1 and _LEVEL_WORD_RE.search(text, first_end) is not None:
            for later in VLLM_HEADER_RE.finditer(text, first_end):
                m = later
        level, md, hms, bracket, file = m.group("level", "md", "hms", "bracket", "file")
        line.header = "vllm" if bracket else "vllm-old"
        line.level = level
        line.timestamp = f"{md} {hms}"
        line.file = file
        line.message = text[m.end() :]
        line.process = _last_process(text[: m.start()])
        return line

    m2 = SGLANG_HEADER_RE.search(text)
    if m2 and not text[m2.end() :].startswith(("INFO ", "WARNING ", "ERROR ", "DEBUG ")):
        line.header = "sglang"
        line.timestamp = f"{m2.group('date')} {m2.group('hms')}"
        line.message = text[m2.end() :]
        line.process = sglang_process(m2.group("ranks"))
        if line.message.startswith(("INFO:", "WARNING:", "ERROR:")) and UVICORN_RE.match(line.message):
            line.header = "uvicorn"
        before = _last_process(text[: m2.start()])
        if before is not None:
            line.extras["actor"] = before.name or ""
        return line

    m3 = PLAIN_HEADER_RE.match(stripped)
    if m3:
        line.header = "sglang-plain" if m3.group("file") in _SGLANG_FILES else "plain"
        line.level = m3.group("level").replace("WARN", "WARNING").replace("WARNINGING", "WARNING")
        line.timestamp = f"{m3.group('date')} {m3.group('hms')}"
        line.file = m3.group("file")
        line.message = stripped[m3.end() :]
        return line

    m4 = SGLANG_TIME_ONLY_RE.match(stripped)
    if m4:
        line.header = "sglang"
        line.timestamp = m4.group("hms")
        line.message = stripped[m4.end() :]
        line.process = sglang_process(m4.group("ranks"))
        return line

    # Process prefix only: tracebacks and print() output of a vLLM process.
    procs = _LEADING_PROCS_RE.match(text)
    rest = text
    if procs:
        line.process = _last_process(procs.group(1))
        rest = text[procs.end() :]
        line.message = rest
    m5 = UVICORN_RE.match(rest)
    if m5:
        line.header = "uvicorn"
        line.level = m5.group("level")
        line.message = rest[m5.end() :]
        return line
    m6 = C10D_RE.match(rest)
    if m6:
        line.header = "c10d"
        line.message = rest[m6.end() :]
        line.level = {"I": "INFO", "W": "WARNING", "E": "ERROR", "F": "CRITICAL"}[m6.group("sev")]
        rank = int(m6.group("rank"))
        if line.process is None:
            line.process = ProcessInfo(role="torch", tp_rank=rank)
        return line
    m7 = BASIC_CONFIG_RE.match(rest)
    if m7:
        line.header = "sglang-plain" if m7.group("logger").startswith("sglang.") else "plain"
        line.level = m7.group("level")
        line.message = rest[m7.end() :]
        return line
    if not procs and _PROMPT_RE.match(text) and not _LAUNCH_RE.search(text):
        line.skip = True
    return line


def has_header(line: LogLine) -> bool:
    return line.header is not None or line.process is not None
