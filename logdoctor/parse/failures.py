"""Failures read by their structure, not their wording: a Python traceback block, an exception line logged at
ERROR or CRITICAL (or as its repr, `AssertionError('...')`), a fatal signal, a process the kernel's OOM killer
ended, a launcher that could not start the engine (the interpreter's `python: ...`, argparse's `prog: error: ...`,
docker's `Error response from daemon`, the shell's `command not found`).

    (APIServer pid=1) Traceback (most recent call last):
    (APIServer pid=1)   File ".../vllm/entrypoints/openai/api_server.py", line 1873, in init_app_state
    (Worker_TP0 pid=226) INFO 11-30 10:00:12 [multiproc_executor.py:760] Parent process exited, terminating worker
    (APIServer pid=1)     resolved_chat_template = load_chat_template(args.chat_template)
    (APIServer pid=1) jinja2.exceptions.TemplateSyntaxError: unexpected '}'
        -> EngineFailure(kind="startup-failed", exception="jinja2.exceptions.TemplateSyntaxError", phase="startup")

A traceback is followed per process prefix (`(EngineCore_DP0 pid=7)`, `(Worker_TP1 pid=9)`, `[rank0]:`), so the
lines of other processes printed in between do not break it; its last unindented line is the exception. The
exception's type and text say which failure it is where they name one (CUDA out of memory, CUDA and NCCL errors,
timeouts); any other is a start-up failure before the engine served and an exception after. No message list: a
release's new error is read as what it is.

What is not a failure: a traceback logged at DEBUG, INFO or WARNING (the engine handled it and went on), one Python
prints after `Exception ignored in:` (a destructor at exit), a thread's (`Exception in thread ...:`) after which
the server starts or serves, a stop: `KeyboardInterrupt` or `SystemExit` of a server
that served ends the run the way a SIGTERM does, so it becomes the `shutdown` marker after which failure lines are
teardown; and one request's error: an exception of the serving API server after which the server answers again (an
HTTP response other than a 5xx, a stats line) becomes `request-error`, which is no failure of the run.

The phase of each failure is where the stream was when it was read: `startup` before the engine served (a stats
line, SGLang's ready line), `serving` after, `shutdown` once a stop began. `FailureReader` is the pipeline's one
hook (logdoctor.parse.pipeline): `wants` is a substring test cheap enough for every line, `read` turns a wanted line
into events, `observe` follows the events the stream releases.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from logdoctor.events import (
    CompileTime,
    Engine,
    EngineFailure,
    EngineVersion,
    EventBase,
    FailureKind,
    FailurePhase,
    ProcessInfo,
    SchedulerStats,
)
from logdoctor.parse.envelope import LogLine, parse_cleaned
from logdoctor.registry import REGISTRY

TRACEBACK = "Traceback (most recent call last):"
_MESSAGE_LIMIT = 1000
_BLOCK_LIMIT = 400  # lines of one process without an exception line: the block was cut (a paste), dropped
# Lines of the log since a traceback's last line: after this many it was cut (its process printed nothing more of
# it), and is dropped; its exception line, should it still come, is read as a lone exception line. An open block
# makes every line worth reading, so none stays open long. At most _OPEN_LIMIT are open at once (the oldest go).
_STALE_LINES = 200
_OPEN_LIMIT = 64

# What a line must hold to be worth reading here when no traceback is open: a traceback's start, an exception's type
# (`...Error: `, `...Exception: `), a stop, a signal or a kill. Plain substring tests (cheaper than any regex), and
# the literals a prefilter (`grep -F`, logdoctor.parse.keywords.candidate_keywords) keeps besides the line types'
# keywords: without its frames, a traceback's first and last lines still give its failure.
FAILURE_KEYWORDS = (
    "Traceback (most recent call last)",
    "rror: ",
    "Error(",
    "Exception: ",
    "Exception(",
    "Exception i",  # `Exception ignored in:`, `Exception in thread ...:`
    "KeyboardInterrupt",
    "SystemExit",
    "Fatal Python error",
    "SIG",
    "signal",
    "Killed",
    "killed",
    "oom-kill",
    "oom_kill",
    "core dumped",
    "Segmentation fault",
    "Aborted",
    "Bus error",
    "Illegal instruction",
    "terminate called",
    "exitcode",
    "srun: error",
    "slurmstepd: error",
    "exited on signal",
    "Test CUDA failure",
    "Test NCCL failure",
    "Failed: Cuda error",
    "Failed: CUDA error",
    "Failed, NCCL error",
    "Failed: NCCL error",
    "No module named",
    "can't open file",
    "Error response",
    "not found",
)

_CTRL_C_RE = re.compile(r"^(?:\^C)+")
# PyTorch elastic's prefix on each line of a worker's stderr (vLLM's `(Name pid=N)` is the envelope's process).
_RANK_RE = re.compile(r"^\[rank(?P<rank>\d+)\]:\s?")
# The last line of a traceback: a dotted type, optionally with a cause in brackets (`RayTaskError(ValueError)`),
# then `: message` or nothing.
_EXCEPTION_RE = re.compile(r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:\([\w.]*\))?)(?::\s*(?P<message>.*)|\s*$)")
# The same outside a traceback: only a type that says it is one (`...Error`, `...Exception`), a message required;
# logged at ERROR it may be the exception's repr, `AssertionError('Only FlashAttention backend is supported')`.
_LONE_EXCEPTION_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception)(?:\([\w.]*\))?)"
    r"(?:: (?P<message>\S.*)|\((?P<repr>(?P<quote>['\"]).*(?P=quote))?\)\s*$)"
)
# Lines inside a traceback that are neither code nor its exception: a frame (`File "..."`, also where a process
# prefix swallowed its indentation), a chained traceback's heading, Python 3.11's `^^^^` marks and exception groups.
_FRAME_STARTS = ('File "', "During handling of the above exception", "The above exception was the direct cause")
_MARKER_STARTS = "^~|+-"
# A process prefix before an unheaded line, with the one space vLLM prints after it.
_PROC_PREFIX_RE = re.compile(r"^\s*(?:\([A-Za-z_][\w .=:-]*?\s+pid=\d+(?:,\s*ip=[^)\s]+)?\) ?)+")
# A frame in an engine's own package (`File ".../site-packages/sglang/srt/managers/scheduler.py"`, a source
# checkout's `.../vllm/vllm/engine/llm_engine.py`): the traceback is that engine's.
_ENGINE_FRAME_RE = re.compile(r'^File "[^"]*/(?P<engine>vllm|sglang)/(?:[\w.]+/)*[\w.]+\.py", line \d+')
# The server answers a request (uvicorn's access line): whatever failed before it was that request's.
_ANSWER_RE = re.compile(r'HTTP/\d(?:\.\d)?" (?P<status>\d{3})\b')
# Lines that say the server serves: uvicorn's start-up end, its address, an HTTP response.
_SERVING_MARKERS = ("Application startup complete", "Uvicorn running on", 'HTTP/1.1" ')
# The processes that answer requests (vLLM's API server, SGLang's main process; an unprefixed line may be any).
_FRONT_ROLES = frozenset({"APIServer", "Main"})
# The API server's own modules (vLLM's entrypoints: `[serving_chat.py:203]`, `[api_server.py:...]`): a line logged from
# one is the front's whatever prefix a wrapper put before it (a launcher that prefixes every line with a worker's name).
_FRONT_FILE_RE = re.compile(r"^(?:serving_\w+|api_server)\.py$")
_IGNORED = "Exception ignored in"
# Python's threading module before a thread's uncaught exception: the thread died, the process may go on.
_THREAD = "Exception in thread "
_STOP_TYPES = frozenset({"KeyboardInterrupt", "SystemExit"})
_QUIET_TYPES = frozenset({"CancelledError", "GeneratorExit", "StopIteration", "StopAsyncIteration"})
_NOT_FAILED_LEVELS = frozenset({"DEBUG", "INFO", "WARNING"})

# Fatal signals and kills as the C runtime, Python, the shell, abseil, PyTorch elastic and the kernel print them:
# (pattern, failure kind, only on a line without a log header).
_FATAL_RES: tuple[tuple[re.Pattern[str], FailureKind, bool], ...] = (
    # the kernel (`dmesg`): `Out of memory: Killed process 1234 (python3)`, `oom-kill:...`, `invoked oom-killer`;
    # a container runtime's `OOMKilled`
    (re.compile(r"Out of memory: Kill(?:ed)? process|\boom[-_]kill(?:er)?\b|\bOOMKilled\b"), "worker-died", False),
    # `Fatal Python error: Segmentation fault`, `Fatal Python error: Aborted`
    (re.compile(r"^Fatal Python error: "), "engine-dead", False),
    # abseil / glog: `*** SIGSEGV received at time=1700000000 on cpu 3 ***`
    (re.compile(r"^\*\*\* SIG[A-Z]+ received"), "engine-dead", False),
    # the C++ runtime before an abort: `terminate called after throwing an instance of 'c10::Error'`
    (re.compile(r"^terminate called (?:after throwing|without an active exception)"), "engine-dead", False),
    # the shell: `Segmentation fault (core dumped)`, `Aborted (core dumped)`, `Killed`, and as a job's status
    # `./serve.sh: line 5: 12345 Killed                  python3 -m ...`
    (
        re.compile(
            r"^(?:.*: line \d+: +\d+ +)?(?:Segmentation fault|Aborted|Bus error|Illegal instruction|Killed)"
            r"(?: \(core dumped\))?(?:\s{2,}\S.*)?\s*$"
        ),
        "engine-dead",
        True,
    ),
    # PyTorch elastic: `exitcode  : -9 (pid: 1234)`, `Signal 9 (SIGKILL) received by PID 1234`,
    # `failed (exitcode: 1) local_rank: 0 (pid: 1234) of binary: ...`
    (
        re.compile(
            r"^\s*exitcode\s*: -\d+ \(pid: \d+\)|Signal \d+ \(SIG[A-Z]+\) received by PID"
            r"|failed \(exitcode: -?[1-9]\d*\) local_rank: \d+"
        ),
        "worker-died",
        False,
    ),
    # launchers reporting a task that died: Slurm's `srun: error: node1: task 3: Exited with exit code 1` (or
    # `: Killed`, `: Segmentation fault`), `slurmstepd: error: *** STEP 12.0 ON node1 CANCELLED AT ...`, its cgroup's
    # `Detected 1 oom-kill event(s)` (`oom_kill` in older releases); Open MPI's `mpirun noticed that process rank 0
    # with PID 1234 on node node1 exited on signal 9 (Killed).`
    (
        re.compile(
            r"^srun: error: \S+: tasks? [\d,-]+: (?!Exited with exit code 0\b)\S"
            r"|^slurmstepd: error: (?:\*\*\* (?:STEP|JOB) \S+ ON \S+ CANCELLED|Detected \d+ oom[-_]kill)"
            r"|mpirun noticed that process rank \d+ with PID \d+ on node \S+ exited on signal \d+"
        ),
        "worker-died",
        False,
    ),
    # the Python interpreter's own fatal error, printed as `<executable>: <message>` before it exits with status 1:
    # `/venv/bin/python: Error while finding module specification for 'vllm.entrypoints.openai.api_server'
    # (ModuleNotFoundError: No module named 'vllm')`, `python3: can't open file '/app/serve.py': [Errno 2] ...`
    (re.compile(r"^(?:\S*/)?python(?:\d+(?:\.\d+)?)?: \S"), "startup-failed", True),
    # a launcher's own error, `<program>: error: <message>` before it exits: argparse's `vllm serve: error:
    # unrecognized arguments: --foo` (exit status 2), `docker: Error response from daemon: could not select device
    # driver`, `nvidia-container-cli: initialization error: nvml error: driver not loaded`; an exception's type
    # (`ValueError: internal error: ...`) is read as the exception it is, Slurm's lines by the pattern below
    (
        re.compile(
            r"^(?![\w.]*(?:Error|Exception|Warning):|srun:|slurmstepd:)(?:\S*/)?[\w.-]+(?: [\w.-]+)?: (?:[a-z]+ )?"
            r"(?:error: |Error response)"
        ),
        "startup-failed",
        True,
    ),
    # the shell could not start the command: `bash: vllm: command not found`, `/bin/sh: 1: sglang: not found`
    (
        re.compile(r"^(?:\S*/)?(?:ba|z|da|k)?sh: (?:line )?(?:\d+: )?\S+: (?:command )?not found"),
        "startup-failed",
        True,
    ),
    # nccl-tests' CUDACHECK / NCCLCHECK (common.h): `node1: Test CUDA failure common.cu:891 'no CUDA-capable device
    # is detected'`, `Test NCCL failure common.cu:1005 'unhandled system error'`
    (re.compile(r"Test CUDA failure \S+:\d+ "), "cuda-error", False),
    (re.compile(r"Test NCCL failure \S+:\d+ "), "nccl-error", False),
    # a process reporting a signal it got: `received signal SIGSEGV`, `killed by signal 9`, `Caught signal 11`
    (
        re.compile(
            r"\b(?:received|caught|got|killed by) (?:fatal )?signal[: ]+(?:SIG(?:SEGV|ABRT|BUS|ILL|FPE|KILL)\b|(?:4|6|7|8|9|11)\b)",
            re.I,
        ),
        "worker-died",
        False,
    ),
)

# The same check macros in the engines' CUDA sources and in NCCL's examples and first tests print this and exit the
# process, whatever a line type also reads in the line (vLLM's custom all-reduce:
# `Failed: Cuda error /.../csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'`
# is a P2P check's answer too); `Failed, NCCL error all_reduce_test.cu:85 'unhandled cuda error'`.
_EXIT_MACRO_RES: tuple[tuple[re.Pattern[str], FailureKind], ...] = (
    (re.compile(r"\bFailed[:,] (?:Cuda|CUDA) error \S+:\d+ '"), "cuda-error"),
    (re.compile(r"\bFailed[:,] NCCL error \S+:\d+ '"), "nccl-error"),
)

# A stop asked from outside: SIGTERM, SIGINT, SIGHUP, SIGQUIT; Slurm's CANCELLED (scancel, the time limit).
_STOP_SIGNAL_RE = re.compile(r"\bSIG(?:TERM|INT|HUP|QUIT)\b|\bsignal[: ]+(?:1|2|3|15)\b|\bCANCELLED AT\b")
# What an exception's words can say more precisely than "engine-dead" about a fatal line.
_SPECIFIC_KINDS = frozenset({"cuda-oom", "cuda-error", "nccl-error", "nccl-timeout"})


@dataclass
class _Block:
    """One open traceback: where it began, at which level, and whether Python said it ignored it."""

    start: LogLine
    level: str | None
    ignored: bool
    thread: bool = False  # Python said a thread (not the process) raised it
    lines: int = 0
    last: int = 0  # the log's line number of its last line
    frame: str = ""  # its last `File "..."` line
    engine: Engine = "unknown"  # the engine whose package its frames are in (`.../sglang/srt/...`, `.../vllm/...`)
    known: bool = False  # a line type read its first line as a failure (`Scheduler hit an exception: Traceback`)


class FailureReader:
    """The failures of one source, read by structure; see the module's docstring."""

    def __init__(self) -> None:
        self._blocks: dict[str, _Block] = {}  # open tracebacks by process prefix
        self._ignored: set[str] = set()  # prefixes whose next traceback follows `Exception ignored in:`
        self._threads: set[str] = set()  # prefixes whose next traceback follows `Exception in thread ...:`
        self._serving = False
        self._stopping = False
        # Exceptions of the serving API server not yet released: a request's error when the server answers again
        # (an HTTP response, a stats line) after it, a failure when the log ends or fails on first.
        self._pending: list[EngineFailure] = []
        # What came first after them: "answered" (an HTTP response, a stats line) or "failed" (a failure line)
        self._outcome: str | None = None

    # -- the pipeline's hook ------------------------------------------------------------------------
    def wants(self, text: str) -> bool:
        """Whether `read` may give something for this line (a traceback is open, it holds a failure's keyword, or
        it says the server serves while that is still to be learnt)."""
        if self._blocks:
            return True
        for keyword in FAILURE_KEYWORDS:  # a loop, not any(): this runs for every line of a log
            if keyword in text:
                return True
        return (bool(self._pending) or not self._serving) and _serving_marker(text)

    def read(self, line: LogLine, events: list[EventBase] | None) -> list[EventBase] | None:
        """The events of a wanted line: `events` (what the line types gave, None for nothing) with a failure they
        did not see added, or theirs annotated with the exception's type and phase; None when nothing was read."""
        if line.text.startswith("^C"):  # a terminal's echo of the Ctrl-C, glued to the next line's prefix
            line = parse_cleaned(line.source, line.number, _CTRL_C_RE.sub("", line.text))
        message, rank = _own_text(line)
        answer = _ANSWER_RE.search(message)
        answered = answer is not None
        if answer is not None and self._pending and self._outcome is None:
            # a 5xx is the server failing the request it could not serve; any other answer, the server serving on
            self._outcome = "failed" if answer.group("status").startswith("5") else "answered"
        if self._pending and self._outcome is None and _serving_marker(message):
            self._outcome = "answered"  # the server started or answers: what was pending did not stop it
        settled = self._settle() if self._pending and self._outcome is not None else []
        if answered or (not self._serving and _serving_marker(message)):
            self._serving = True
        read = self._read(line, message, rank, events)
        if not settled:
            return read
        return [*settled, *(read or ())]

    def observe(self, event: EventBase) -> None:
        """Follow the stream's phase: serving from the first stats or ready line, stopping from a stop marker, and
        back to start-up at a new start's version line."""
        if isinstance(event, SchedulerStats):
            self._serving = True
            if self._pending and self._outcome is None:
                self._outcome = "answered"
        elif isinstance(event, EngineFailure):
            if event.kind == "shutdown":
                self._stopping = True
            if (
                self._pending
                and self._outcome is None
                and event.kind not in ("request-error", "shm-broadcast-wait", "reported-hang")
            ):
                self._outcome = "failed"  # the server's exception came with its failure, or its stop
        elif isinstance(event, CompileTime):
            if event.kind == "server_ready":
                self._serving = True
                if self._pending and self._outcome is None:
                    self._outcome = "answered"
        elif isinstance(event, EngineVersion) and event.version and (self._serving or self._stopping):
            self._serving = self._stopping = False

    def close(self) -> list[EventBase]:
        """The source ended: the exceptions still pending were the server's last words (failures). A traceback
        still open at the end was cut before its exception line (a paste, a log cut short): Python prints one only
        for an exception that propagated, so it is still a failure, of a type the log does not show; one logged
        at DEBUG to WARNING, after `Exception ignored in:`, in a thread or on a line already read as a failure is not."""
        blocks = [
            b for b in self._blocks.values() if not (b.ignored or b.thread or b.known or b.level in _NOT_FAILED_LEVELS)
        ]
        self._blocks.clear()
        cut: list[EventBase] = []
        for block in blocks:
            cut.extend(self._cut(block))
        return [*self._settle(), *cut]

    def _cut(self, block: _Block) -> list[EventBase]:
        """The events of a traceback the log's end cut: the failure, at its first line, and the engine its frames
        name where no header did (a bare paste of a traceback is the engine's when its frames are the engine's)."""
        start = block.start
        where = block.frame
        text = "traceback cut before its exception line" + (f"; last frame: {where}" if where else "")
        out = self._add(start, exception_kind("", where, self.phase), None, text, None, None)
        engine = block.engine
        if engine != "unknown":
            out = [e.model_copy(update={"engine": engine}) if e.engine == "unknown" else e for e in out]
            out.insert(
                0,
                EngineVersion(
                    source=start.source, line=start.number, engine=engine, origin="traceback frames", version=None
                ),
            )
        return out

    @property
    def open(self) -> bool:
        """Whether a traceback is open or an exception pending (a range of a file parsed apart must not end so)."""
        return bool(self._blocks) or bool(self._pending)

    def carried(self) -> str:
        """What the next line's reading depends on, as text to compare (EventStream.carried_state)."""
        return repr((sorted(self._blocks), sorted(self._ignored), sorted(self._threads), self._serving, self._stopping))

    # -- reading ------------------------------------------------------------------------------------
    @property
    def phase(self) -> FailurePhase:
        if self._stopping:
            return "shutdown"
        return "serving" if self._serving else "startup"

    def _settle(self) -> list[EngineFailure]:
        """Release the pending exceptions: request errors when the server answered first, failures otherwise."""
        pending, self._pending = self._pending, []
        if self._outcome == "answered":
            pending = [e.model_copy(update={"kind": "request-error"}) for e in pending]
        self._outcome = None
        return pending

    def _read(
        self, line: LogLine, message: str, rank: str | None, events: list[EventBase] | None
    ) -> list[EventBase] | None:
        # A traceback is followed by the process that prints it: vLLM's `(Name pid=N)`, the rank's `[rankN]:`.
        # SGLang's header names no process: its tracebacks follow their `... hit an exception:` line bare.
        proc = line.process
        key = f"{proc.name}|{proc.pid}|{rank}" if proc is not None and proc.pid is not None else f"||{rank}"
        if self._blocks:
            self._expire(line.number)
        block = self._blocks.get(key)
        if block is not None:
            block.last = line.number
            return self._in_block(key, block, line, message, events, rank)
        stripped = message.strip()
        if TRACEBACK in message:
            self._open(key, line, events)
            return events if events is not None else []
        if stripped.startswith(_IGNORED):
            self._ignored.add(key)
            return events if events is not None else []
        if stripped.startswith(_THREAD):
            self._threads.add(key)
            return events if events is not None else []
        fatal = self._fatal(line, stripped, events, rank)
        if fatal is not None:
            return fatal
        if line.level in ("ERROR", "CRITICAL") or (line.header is None and not message[:1].isspace()):
            lone = _LONE_EXCEPTION_RE.match(stripped)
            if lone is not None and (lone.group("message") is not None or line.level is not None):
                text = lone.group("message") or (lone.group("repr") or "")[1:-1]
                return self._exception(line, lone.group("type"), text, events, rank)
        return events

    def _open(self, key: str, line: LogLine, events: list[EventBase] | None) -> None:
        self._blocks.pop(key, None)
        if len(self._blocks) >= _OPEN_LIMIT:
            del self._blocks[next(iter(self._blocks))]
        known = any(isinstance(e, EngineFailure) for e in events or ())
        self._blocks[key] = _Block(
            line, line.level, key in self._ignored, key in self._threads, last=line.number, known=known
        )
        self._ignored.discard(key)
        self._threads.discard(key)

    def _expire(self, number: int) -> None:
        for key in [k for k, b in self._blocks.items() if number - b.last > _STALE_LINES]:
            del self._blocks[key]

    def _in_block(
        self, key: str, block: _Block, line: LogLine, message: str, events: list[EventBase] | None, rank: str | None
    ) -> list[EventBase] | None:
        block.lines += 1
        stripped = message.strip()
        if TRACEBACK in message:  # a new traceback of the same process: the open one was cut
            self._open(key, line, events)
            return events if events is not None else []
        if line.header is not None and line.level != block.level:
            # another record of the same process printed in between; an unheaded line goes on the record (Python
            # logging's formatter heads only a record's first line: uvicorn's `ERROR:    Traceback ...`)
            return events
        if (
            not stripped
            or message[:1].isspace()
            or stripped.startswith(_FRAME_STARTS)
            or stripped[:1] in _MARKER_STARTS
        ):
            if stripped.startswith('File "'):
                block.frame = stripped
                m = _ENGINE_FRAME_RE.search(stripped)
                if m is not None and block.engine == "unknown":
                    block.engine = m.group("engine")
            if block.lines > _BLOCK_LIMIT:
                del self._blocks[key]
            return events if events is not None else []
        found = _EXCEPTION_RE.match(stripped)
        if found is None:  # an unindented line that is no exception: not this block's
            if block.lines > _BLOCK_LIMIT:
                del self._blocks[key]
            return events
        del self._blocks[key]
        if block.ignored or (block.level in _NOT_FAILED_LEVELS):
            return events if events is not None else []
        if line.header is None and block.start.header is not None:
            # SGLang's `Scheduler hit an exception: Traceback ...` is its header's; the lines after it are bare
            line = dataclasses.replace(line, header=block.start.header, process=line.process or block.start.process)
        read = self._exception(line, found.group("type"), found.group("message") or "", events, rank)
        if block.thread:
            # a thread's exception (the usage-stats reporter offline, say) ends the run only if nothing shows the
            # engine going on after it: pending, like the API server's, until a ready, stats or answer line
            died = [
                e for e in read if isinstance(e, EngineFailure) and e.kind != "shutdown" and e not in (events or ())
            ]
            self._pending.extend(died)
            read = [e for e in read if not any(e is d for d in died)]
        return read

    def _exception(
        self, line: LogLine, exc_type: str, text: str, events: list[EventBase] | None, rank: str | None
    ) -> list[EventBase]:
        short = exc_type.split("(")[0].rsplit(".", 1)[-1]
        if short in _QUIET_TYPES or (short in _STOP_TYPES and not self._serving):
            # Ctrl-C on a start that never completed is the user giving up on it: the failures it leaves behind
            # (`Engine core initialization failed`) still say the start failed.
            return events if events is not None else []
        if short in _STOP_TYPES:
            kind: FailureKind = "shutdown"
        else:
            kind = exception_kind(exc_type, text, self.phase)
        return self._add(line, kind, exc_type, text.strip(), events, rank)

    def _fatal(
        self, line: LogLine, stripped: str, events: list[EventBase] | None, rank: str | None
    ) -> list[EventBase] | None:
        if line.level in _NOT_FAILED_LEVELS:
            return None
        for pattern, kind in _EXIT_MACRO_RES:
            if pattern.search(stripped):
                known = [e for e in events or () if isinstance(e, EngineFailure)]
                added = [] if known else self._add(line, kind, None, stripped, None, rank)
                return [*(events or ()), *added]
        for pattern, kind, bare_only in _FATAL_RES:
            if not pattern.search(stripped) or (bare_only and line.header is not None):
                continue
            if _STOP_SIGNAL_RE.search(stripped):
                # a stop asked for (SIGTERM, scancel): the end of a server that served, a start given up on otherwise
                return self._add(line, "shutdown", None, stripped, events, rank) if self._serving else events
            said = exception_kind("", stripped, self.phase)  # `... instance of 'c10::DistBackendError'`
            return self._add(line, said if said in _SPECIFIC_KINDS else kind, None, stripped, events, rank)
        return None

    def _add(
        self,
        line: LogLine,
        kind: FailureKind,
        exc_type: str | None,
        text: str,
        events: list[EventBase] | None,
        rank: str | None,
    ) -> list[EventBase]:
        phase: FailurePhase = self.phase
        if kind == "shutdown":
            self._stopping = True
        if events is not None:
            # A line type read the line already, and knows its meaning better (its failure kind is the more specific;
            # a line it read as something else, or as nothing, is no failure): add only what it left out.
            known = [e for e in events if isinstance(e, EngineFailure)]
            if not known:
                return events
            first = known[0]
            update: dict[str, object] = {"exception": first.exception or exc_type, "phase": first.phase or phase}
            if first.process is None and rank is not None:
                update["process"] = ProcessInfo(role="torch", tp_rank=int(rank))
            return [e.model_copy(update=update) if e is first else e for e in events]
        proc = line.process
        if proc is None and rank is not None:
            proc = ProcessInfo(role="torch", tp_rank=int(rank))
        message = f"{exc_type}: {text}" if exc_type and text else (exc_type or text)
        failure = EngineFailure(
            source=line.source,
            line=line.number,
            end_line=line.end,
            timestamp=line.timestamp,
            level=line.level,
            process=proc,
            engine=_engine(line, proc),
            kind=kind,
            exception=exc_type,
            phase=phase,
            message=message[:_MESSAGE_LIMIT],
        )
        if (
            kind != "shutdown"
            and phase == "serving"
            and exc_type is not None
            and (proc is None or proc.role in _FRONT_ROLES or _FRONT_FILE_RE.match(line.file or "") is not None)
        ):
            # the API server's exception while it serves: a failed request, unless the server never answers again
            self._pending.append(failure)
            return []
        return [failure]


def _own_text(line: LogLine) -> tuple[str, str | None]:
    """What the process printed, with its indentation (a process prefix's padding swallows it in `message`), and
    the rank of a `[rankN]:` prefix."""
    message = line.message
    if line.header is None and line.process is not None and message and message[0] != " ":
        m = _PROC_PREFIX_RE.match(line.text)
        if m is not None:
            message = line.text[m.end() :]
    m2 = _RANK_RE.match(message)
    if m2 is None:
        return message, None
    return message[m2.end() :], m2.group("rank")


def _serving_marker(message: str) -> bool:
    return any(marker in message for marker in _SERVING_MARKERS)


def exception_kind(exc_type: str, text: str, phase: FailurePhase) -> FailureKind:
    """The failure an exception is, from its type and message: the words Python, PyTorch, CUDA and NCCL put there
    (`OutOfMemoryError`, `CUDA error:`, `NCCL`, `TimeoutError`), else a start-up failure or an exception."""
    both = f"{exc_type} {text}"
    lowered = both.lower()
    if "outofmemoryerror" in lowered or "cuda out of memory" in lowered:
        return "cuda-oom"
    if "nccl" in lowered or "distbackenderror" in lowered:
        return "nccl-timeout" if "timeout" in lowered or "timed out" in lowered else "nccl-error"
    if "cuda error" in lowered or "acceleratorerror" in lowered or "cudaerror" in lowered or "cudasuccess" in lowered:
        return "cuda-error"
    if "timeouterror" in lowered or exc_type.rsplit(".", 1)[-1].lower().startswith("timeout"):
        return "rpc-timeout"
    return "startup-failed" if phase == "startup" else "exception"


def _engine(line: LogLine, proc: ProcessInfo | None) -> Engine:
    hint = REGISTRY.header_engine(line.header)
    if hint in ("vllm", "sglang"):
        return "vllm" if hint == "vllm" else "sglang"
    if proc is not None and proc.role in ("APIServer", "EngineCore", "Worker", "RayWorker"):
        return "vllm"
    return "unknown"
