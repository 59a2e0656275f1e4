"""Lines in, typed events out: candidate selection, envelope stripping, dispatch to grammars.

Streaming: `EventStream` is an iterator of events; memory stays flat in the log's size (only events
of not-yet-identified worker processes are held back, and only until the worker's rank is known).
After the stream is exhausted, `stream.stats` and `stream.detection` describe the source.
"""

from __future__ import annotations

import copy
import re
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from logdoctor.eventlog import LineTexts
from logdoctor.events import (
    BenchmarkResult,
    EngineFailure,
    EventBase,
    ProcessInfo,
    SchedulerStats,
    SpecDecodeStats,
    StartupConfig,
)
from logdoctor.parse import blocks
from logdoctor.parse.blocks import SHELL_COMMAND_RE
from logdoctor.parse.detect import Detection
from logdoctor.parse.envelope import LogLine, clean_physical, has_header, parse_cleaned, parse_envelope, strip_outer
from logdoctor.parse.failures import FailureReader
from logdoctor.parse.flagblock import FlagBlockReader, block_events, inline_events
from logdoctor.parse.grammar import Grammar, ParseContext
from logdoctor.parse.hugenumbers import HUGE_NUMBER, HUGE_NUMBER_DIGITS, too_big
from logdoctor.parse.keywords import KEYWORD_HEAD, KeywordIndex, WholeMatch, registry_index
from logdoctor.parse.summary import SummaryReader
from logdoctor.parse.symptoms import reported_hang
from logdoctor.parse.warning_vocabulary import (
    may_be_warning,
    read_warning,
)
from logdoctor.redact import Redactor
from logdoctor.registry import REGISTRY

UNPARSED_SAMPLE_SIZE = 20
_SHAPE_PREFIX = 24  # characters of the message that identify a line shape for the dispatch cache
_SHAPE_CACHE_SIZE = 4096
_HOLD_LIMIT = 10_000  # events held back waiting for a worker's rank before they are released as they are
_WRAP_MIN_LENGTH = 60  # a line shorter than this was not broken by a terminal
_WRAP_MAX_PIECES = 8  # the physical lines one broken line is rejoined from, at most
# A line longer than this is parsed for its head only (docs/security.md, *Bounded*): every field a grammar reads sits
# near a line's start, and a line's cost must not grow with whatever a prompt or a paste appended. The redactor sees
# a little more than the head, so a secret that straddles the cut is masked whole before the cut is made. A line that
# starts with `{` is a JSON document (a benchmark tool's report, one line of several hundred kB): read whole, under the
# read cap, by the JSON reader, which is linear.
MAX_PARSED_CHARS = 64 * 1024
_REDACT_MARGIN = 4096
_LONG_NOTES = 3
# A run's label: a short line of prose at most this many lines above its command or results (a blank line or a
# Markdown fence between them), kept with the evidence (logdoctor.pipeline.pasted reads it).
_LABEL_MAX_CHARS = 160
_KEPT_CHARS = 2000  # a kept evidence text is cut here
_LABEL_GAP = 3
_RUN_EVENTS = frozenset({BenchmarkResult, StartupConfig})


def _begins_run(event: EventBase) -> bool:
    """A configuration, a benchmark's results, or a stats line that measured generation (a pasted run's number)."""
    return type(event) in _RUN_EVENTS or (isinstance(event, SchedulerStats) and bool(event.generation_throughput))


# A heading above a run (`### Without CUDA graphs`, `Result (without MoE config):`) may sit above the command that
# ran it and its fences too: it is kept when the run begins within this many lines.
_HEADING_GAP = 8
_HEADING_RE = re.compile(r"^\s*(?:#{1,6}\s|\*\*).*\S|.*[A-Za-z)]\**:\s*$")
_WARNING_LEVELS = frozenset({"WARNING", "WARN", "ERROR", "CRITICAL"})
_RECENT_KEYWORDS = 2  # keywords of the last candidate lines, tested as plain substrings before the keyword regex
# What a grammar raises on a line it cannot cope with (a 5,000-digit pid, `took . s`, a nesting bomb): the line is
# "not understood" and counted, the run goes on.
GRAMMAR_FAILURES = (ValueError, ArithmeticError, RecursionError)


@dataclass
class SourceStats:
    """What was read from one source; `--format json` reports it per source."""

    name: str
    kind: str = "file"
    bytes_read: int = 0
    bytes_transferred: int | None = None
    lines: int = 0
    candidates: int = 0
    events: int = 0
    unrecognised: int = 0
    prefiltered: bool = False
    unrecognised_samples: list[tuple[int, str]] = field(default_factory=list)
    host: str | None = None
    path: str | None = None
    notes: list[str] = field(default_factory=list)  # what the reader skipped (over-long lines), for the report
    # The line number of every line not understood, as met (8 bytes a line): a log split per server start
    # (run.split_runs) counts each start's own.
    unrecognised_lines: array[int] = field(default_factory=lambda: array("q"))


class EventStream:
    """Iterate to parse; `stats` and `detection` are complete once iteration ends."""

    def __init__(
        self,
        source: str,
        lines: Iterable[tuple[int, str]],
        *,
        engine: str | None = None,
        stats: SourceStats | None = None,
        grammars: tuple[Grammar, ...] | None = None,
        keep_text: bool = False,
        whole_lines: bool = True,
    ) -> None:
        self.source = source
        self._lines = lines
        self.stats = stats or SourceStats(name=source)
        self.detection = Detection(forced=engine if engine not in (None, "auto") else None)
        self.context = ParseContext(source=source, forced_engine=self.detection.forced)
        self._index = registry_index() if grammars is None else KeywordIndex(grammars)
        # The line types' fast paths (`whole_lines=False`: every line through the general path, which they must equal)
        self._whole_lines: list[WholeMatch] = self._index.whole_lines if whole_lines else []
        # The registry's line types come with the warning vocabulary: a warning line none of them reads is still
        # read (logdoctor/parse/warning_vocabulary.py); a stream of chosen line types (tests) reads only those.
        self._read_warnings = grammars is None
        self._warning_only = False  # the last line `_is_candidate` took was chosen only for its warning words
        # Whether a header was seen in the lines so far: a range parsed apart starts with a fresh detection, but
        # whether lines are read for their envelope alone depends on every line before it, not the range's own.
        self._header_seen = False
        self._ranks: dict[int, ProcessInfo] = {}
        self._held: list[EventBase] = []
        self._by_shape: dict[str, Grammar] = {}
        self._claimed_by: Grammar | None = None
        self._recent_keywords: list[str] = []
        # Redacted text of every line that produced an event (evidence for findings), when asked for: held
        # compressed, as an event-dense log has as many of them as events.
        self.texts: LineTexts | None = LineTexts() if keep_text else None
        # The last short line no line type wanted: kept as evidence when a run's command or results follow it, as
        # it is then the label a user wrote above that run (`Without --enforce-eager:`; logdoctor.pipeline.pasted).
        self._prose: tuple[int, str] | None = None
        self._heading: tuple[int, str] | None = None  # the last heading-shaped prose line (_HEADING_RE)
        self._command: tuple[int, str] | None = None  # the last shell command no line type read (SHELL_COMMAND_RE)
        self._flags = FlagBlockReader()  # a fenced list of engine flags (logdoctor/parse/flagblock.py)
        self._summary = SummaryReader(source)  # labelled measurements, one a line (logdoctor/parse/summary.py)
        self._redact = Redactor()
        self.failures = FailureReader()  # tracebacks, exception lines, signals: read by their structure
        self._long_lines = 0  # lines over MAX_PARSED_CHARS, for their notes
        self._pending: tuple[LogLine | None, list[EventBase] | None] = (None, None)
        self._wrap_width = 0  # the length of the pending line's first physical line: a terminal's width
        # the last physical line when it was long and no candidate: a terminal may have broken it before its keyword
        self._plain_prev: tuple[int, str] | None = None
        self._plain_end = 0  # the last physical line of a line so rejoined
        # A byte range of a file parsed apart (logdoctor.pipeline.parallel): `final` False stops at the range's end
        # without closing what the source's end closes, and `cut_clean` then says whether nothing was left open.
        self.final = True
        self.cut_clean = True
        # A range's parse (`begin_range`): what the lines before it detected, and the engines decided from it.
        self._detected_before: Detection | None = None
        self.engines_guessed: list[tuple[Detection, str]] = []

    def peek_close(self) -> tuple[list[EventBase], SourceStats, Detection, LineTexts | None] | None:
        """What `close()` would give now, without closing the stream: its events, and the stats, detection
        and texts as they would then be; the stream goes on as if it had not been asked. None while a grammar
        holds a block open (its state lives in a closure that cannot be copied): parse the lines again then."""
        if self.context.block is not None:
            return None
        twin = copy.copy(self)
        twin.context = copy.deepcopy(self.context)
        twin.stats = copy.deepcopy(self.stats)
        twin.detection = copy.deepcopy(self.detection)
        twin._held = list(self._held)
        twin._ranks = dict(self._ranks)
        twin.texts = self.texts.copy() if self.texts is not None else None
        twin.failures = copy.deepcopy(self.failures)
        events = list(twin.close())
        return events, twin.stats, twin.detection, twin.texts

    # -- dispatch ---------------------------------------------------------------------------------
    def _dispatch(self, line: LogLine) -> list[EventBase] | None:
        try:
            events = self._dispatch_grammars(line)
        except GRAMMAR_FAILURES:
            return None
        if events and len(line.text) >= HUGE_NUMBER_DIGITS and HUGE_NUMBER.search(line.text) and too_big(events):
            return None
        if (
            self._prose is not None or self._heading is not None or self._command is not None
        ) and self.texts is not None:
            self._keep_label(line.number, events)
        if events and self.texts is not None:
            self.texts[line.number] = line.text[:_KEPT_CHARS]
        return events

    def _keep_label(self, number: int, events: list[EventBase] | None) -> None:
        """The prose line right above a line that begins a run (a command, a configuration dump, a benchmark's
        results or the block that holds them) is kept with the evidence, before that line's own text."""
        assert self.texts is not None
        prose, heading, command = self._prose, self._heading, self._command
        self._prose = self._heading = self._command = None
        if self.context.block is None and not any(_begins_run(e) for e in events or ()):
            return
        if prose is not None and number - prose[0] <= _LABEL_GAP:
            self.texts[prose[0]] = prose[1][:_KEPT_CHARS]
        for kept in (heading, command):
            if kept is not None and number - kept[0] <= _HEADING_GAP:
                self.texts[kept[0]] = kept[1][:_KEPT_CHARS]

    def _flag_block(self, lines: list[tuple[int, str]], *, inline: bool = False) -> list[EventBase]:
        """The configuration event of a fenced list of flags (`inline`: of a sentence's inline code), with its lines
        (and the label above it) as evidence."""
        if inline:
            events = inline_events(self.source, lines[0][0], lines[0][1], self.context.forced_engine)
        else:
            events = block_events(self.source, lines, self.context.forced_engine)
        if not events:
            return events
        self.stats.candidates += len(lines)
        if self.texts is not None:
            self._keep_label(lines[0][0], events)
            for number, text in lines:
                self.texts[number] = text[:_KEPT_CHARS]
        return events

    def _prose_events(self, number: int, text: str) -> list[EventBase]:
        """What a line of prose no line type read gives: flags in its inline code, or a summary's labelled
        measurement."""
        events: list[EventBase] = []
        if "`--" in text and len(text) <= _KEPT_CHARS:
            events = self._flag_block([(number, text)], inline=True)
        if ":" in text and len(text) <= _LABEL_MAX_CHARS:
            events.extend(self._summary_lines(number, text))
        hang = reported_hang(text)
        if hang is not None and self._prose_line(number, text):
            events.append(EngineFailure(source=self.source, line=number, kind="reported-hang", message=hang))
            if self.texts is not None:
                self.texts[number] = text[:_KEPT_CHARS]
        return events

    def _prose_line(self, number: int, text: str) -> bool:
        """Whether a line is a person's, not a program's: no log header, no process prefix (an engine's own line
        that no line type read may say its workers are hanging)."""
        try:
            return not has_header(parse_cleaned(self.source, number, text))
        except GRAMMAR_FAILURES:
            return False

    def _summary_lines(self, number: int, text: str) -> list[EventBase]:
        """The events of a summary's labelled measurements, their lines kept as evidence (and as their runs' names)."""
        read = self._summary.offer(number, text)
        if self.texts is not None:
            for event, line_text in read:
                self.texts[event.line] = line_text[:_KEPT_CHARS]
        return [event for event, _ in read]

    def _dispatch_grammars(self, line: LogLine) -> list[EventBase] | None:
        # Serving logs repeat a few line shapes (stats, SpecDecoding) thousands of times: try the
        # grammar that last claimed a line starting the same way before scanning for keywords.
        shape = line.message[:_SHAPE_PREFIX]
        cached = self._by_shape.get(shape)
        if cached is not None:
            result = cached.parse(line, self.context)
            if result is not None:
                return result
        result = self._scan_grammars(line)
        if result is not None and self._claimed_by is not None and len(self._by_shape) < _SHAPE_CACHE_SIZE:
            self._by_shape[shape] = self._claimed_by
        return result

    def _scan_grammars(self, line: LogLine) -> list[EventBase] | None:
        self._claimed_by = None
        seen: set[int] = set()
        hint = line.engine_hint
        candidates: list[Grammar] = []
        # Keywords in the message first; then the header's (some grammars key on it: `NCCL WARN`).
        header = line.text[: len(line.text) - len(line.message)] if line.text.endswith(line.message) else line.text
        texts = (line.message, header) if header else (line.message,)
        for text in texts:
            for keyword in self._index.findall(text):
                for g in self._index.grammars_for(keyword):
                    if id(g) not in seen:
                        seen.add(id(g))
                        candidates.append(g)
        if not candidates:
            return None
        if hint:
            candidates.sort(key=lambda g: g.engine != hint)
        for g in candidates:
            result = g.parse(line, self.context)
            if result is not None:
                self._claimed_by = g
                return result
        return None

    def _resolve_process(self, line: LogLine) -> None:
        """vLLM 0.17+ workers print `(Worker pid=N)` before distributed init and `(Worker_TP0 pid=N)` after."""
        proc = line.process
        if proc is None or proc.pid is None:
            return
        if proc.tp_rank is not None or proc.dp_rank is not None:
            self._ranks.setdefault(proc.pid, proc)
            return
        known = self._ranks.get(proc.pid)
        if known is not None and known.role == proc.role:
            line.process = known

    def _needs_rank(self, event: EventBase) -> bool:
        proc = event.process
        return (
            proc is not None
            and proc.role == "Worker"
            and proc.tp_rank is None
            and proc.pid is not None
            and proc.pid not in self._ranks
        )

    def _release(self, events: list[EventBase]) -> Iterator[EventBase]:
        for event in events:
            self.detection.observe_event(event)
            self.failures.observe(event)
            # the reporter's words are no line of a log: prose alone stays "not a log"
            if type(event) is not EngineFailure or event.kind != "reported-hang":
                self.stats.events += 1
            if self._held or self._needs_rank(event):
                self._held.append(event)
            else:
                yield event
        if self._held and (len(self._held) > _HOLD_LIMIT or not any(self._needs_rank(e) for e in self._held)):
            yield from self._flush_held()

    def _flush_held(self) -> Iterator[EventBase]:
        held, self._held = self._held, []
        for event in held:
            proc = event.process
            if proc is not None and proc.pid is not None and proc.tp_rank is None:
                known = self._ranks.get(proc.pid)
                if known is not None and known.role == proc.role:
                    event = event.model_copy(update={"process": known})
            yield event

    # -- main loop --------------------------------------------------------------------------------
    def _not_understood(self, line: LogLine) -> list[EventBase]:
        """A candidate no line type read: a warning line goes to the warning vocabulary (its event, with a cause
        or listed as a warning not understood, or [] for noise); any other line is counted as not understood,
        except a line that was a candidate only for the warning words and is no warning (a traceback line, a
        prompt that says "slow"): it holds no keyword of a line type, as before the vocabulary read warnings."""
        events = read_warning(line, self._engine_of(line)) if self._read_warnings else None
        if events is None and line.header is None:
            prose = self._prose_events(line.number, line.text)
            if prose:
                return prose
        if events is None:
            self._maybe_label(line)
        if events is None and self._read_warnings and self._index.search(line.text) is None:
            return []
        if events is None:
            self._unrecognised(line)
        if events and self.texts is not None:
            self.texts[line.number] = line.text[:_KEPT_CHARS]
        return events or []

    def _maybe_label(self, line: LogLine) -> None:
        """A line of prose no line type read is a run's label as a line with no keyword is (`When using
        FlashAttnBackend:` holds an attention line type's keyword and still only names the run below it)."""
        if line.header is None and line.process is None:
            self._note_prose(line.number, line.text)

    def _note_prose(self, number: int, text: str) -> bool:
        """Keep a short line of prose as the label of a run that may follow it (a heading as its heading too);
        whether it was kept as plain prose, not a heading."""
        if not text or len(text) > _LABEL_MAX_CHARS or text.isspace() or text.startswith("```"):
            return False
        self._prose = (number, text)
        if _HEADING_RE.match(text):
            self._heading = (number, text)
            return False
        return True

    def _engine_of(self, line: LogLine) -> str:
        engine = self.detection.forced or line.engine_hint
        if engine:
            return engine
        before = self._detected_before
        if before is None:
            return self.detection.engine
        # A range parsed apart: the detection of the lines before the range is a guess (the file's head, the
        # ranges this worker parsed before), which the parent checks against the ranges before it.
        engine = self.detection.after(before).engine
        self.engines_guessed.append((copy.deepcopy(self.detection), engine))
        return engine

    def _unrecognised(self, line: LogLine) -> None:
        self.stats.unrecognised += 1
        self.stats.unrecognised_lines.append(line.number)
        if len(self.stats.unrecognised_samples) < UNPARSED_SAMPLE_SIZE:
            self.stats.unrecognised_samples.append((line.number, line.text[:500]))

    def __iter__(self) -> Iterator[EventBase]:
        yield from self.feed(self._lines)
        yield from self.close()

    def feed(self, lines: Iterable[tuple[int, str]]) -> Iterator[EventBase]:
        """Parse more lines of the source: the events they complete (`__iter__` is `feed` then `close`).

        `logdoctor watch` feeds a growing log chunk by chunk to one stream; the parse is the same as of
        all the lines at once (a line a terminal broke across two chunks is joined, a block goes on)."""
        # a long candidate that did not parse, or parsed as cut off; kept across feeds
        pending, pending_events = self._pending
        context = self.context
        redact = self._redact
        whole_lines = self._whole_lines
        for number, raw in lines:
            self.stats.lines += 1
            if (
                whole_lines
                and context.block is None
                and pending is None
                and not redact.carried()
                and not self.failures.open
            ):
                # The shape an event-dense log repeats (a busy server's batch or stats line), read whole at once. Its
                # text holds nothing the redactor masks (tests/parse/test_whole_line.py) and nothing it could be
                # joined with: what the general path would do with it, minus the envelope's tries and the dispatch.
                whole = self._whole_line(whole_lines, number, raw)
                if whole is not None:
                    yield from self._release(whole)
                    continue
            capped = len(raw) > MAX_PARSED_CHARS and raw[:1] != "{"  # a benchmark's JSON report is one line
            if capped:
                raw = self._head(number, raw)
            raw = redact(raw)  # every line read, before anything else sees it
            if capped:
                raw = raw[:MAX_PARSED_CHARS]
            if context.block is not None:
                line = _envelope(self.source, number, raw)
                self._observe(line)
                try:
                    block_events = context.block(line, context)
                except GRAMMAR_FAILURES:
                    block_events = None
                if block_events is not None:
                    if self.texts is not None:
                        self.texts[number] = line.text[:_KEPT_CHARS]
                    yield from self._release(block_events)
                    continue
                context.block = None
                if self._is_candidate(line.message):
                    yield from self._handle_candidate(line)
                continue
            text = clean_physical(raw)
            if pending is not None:
                joined_events, longer = self._try_join(pending, number, raw)
                if joined_events is not None:
                    pending, pending_events = None, None
                    yield from self._release(joined_events)
                    continue
                if longer is not None:  # a middle piece of a line broken more than once: hold the joined text
                    pending = longer
                    continue
                if pending_events is None:
                    yield from self._release(self._not_understood(pending))
                else:
                    yield from self._release(pending_events)
                pending, pending_events = None, None
            width = len(text)
            plain, self._plain_prev = self._plain_prev, None
            candidate = self._is_candidate(text)
            if (
                not candidate
                and plain is not None
                and plain[0] == number - 1
                and self._continues(plain[1], number, text)
            ):
                # a line a terminal broke inside its keyword: the piece with the header, then this one
                width, number, text = len(plain[1]), plain[0], plain[1] + text
                self._plain_end, candidate = number + 1, True
            if not candidate:
                # a fenced list of flags and a run's label, read inside the paste's wrapper (a GitHub quote's `> `,
                # docker's timestamps), as the line types read the lines around them
                bare = strip_outer(text)
                # a fenced list of flags (no keyword on its lines): only a fence, or a line after one, is offered
                if self._flags.after_fence or "```" in bare or "~~~" in bare:
                    flags = self._flags.offer(number, bare)
                    if flags is not None:
                        yield from self._release(self._flag_block(flags))
                yield from self._release(self._prose_events(number, bare))
                prose = self._note_prose(number, bare)
                # a command may be longer than a label (its flags), not than a kept text
                if (prose or len(bare) <= _KEPT_CHARS) and SHELL_COMMAND_RE.match(bare):
                    self._command = (number, bare)
                if self.failures.wants(text):
                    yield from self._read_failure(number, text)
                elif not self._header_seen and ("]" in text or "pid=" in text):  # a header, a prefix
                    self._observe_envelope(number, text)
                if len(text) >= _WRAP_MIN_LENGTH:
                    self._plain_prev = (number, text)
                continue
            warning_only = self._warning_only
            try:
                line = parse_cleaned(self.source, number, text)
            except GRAMMAR_FAILURES:  # an envelope with a 5,000-digit pid: not understood
                line = LogLine(self.source, number, text, text)
            if self._plain_end:
                line.end, self._plain_end = self._plain_end, 0
            if line.skip:
                continue
            self._observe(line)
            self.stats.candidates += 1
            self._resolve_process(line)
            events = self._dispatch(line)
            if self._reader_may_add(events) and self.failures.wants(text):
                events = self._structure(line, events)
            if (
                len(line.text) >= _WRAP_MIN_LENGTH
                and (events is None or _maybe_cut(events))
                and (not warning_only or line.level in _WARNING_LEVELS)
            ):
                # A terminal may have broken this line: decide when the next physical line arrives. (A warning may be
                # cut before the keyword of its line type; a line chosen only for a word of its text, a prompt that
                # says "slow", is not worth holding.)
                pending, pending_events = line, events
                self._wrap_width = width
                continue
            if events is None:
                yield from self._release(self._not_understood(line))
                continue
            yield from self._release(events)
        self._pending = (pending, pending_events)

    def _whole_line(self, whole_lines: list[WholeMatch], number: int, raw: str) -> list[EventBase] | None:
        """The events of a line one of the line types' fast paths matches whole (Grammar.whole_line), with the
        bookkeeping of the general path for a candidate that gave events; None where none matches."""
        for match, build in whole_lines:
            m = match(raw)
            if m is None:
                continue
            try:
                built = build(m, self.source, number, self.context)
            except GRAMMAR_FAILURES:
                built = None
            if built is None:
                return None  # the general path decides what the line is
            line, events = built
            self._observe(line)
            self.stats.candidates += 1
            process = line.process
            if process is not None and process.pid is not None:
                self._resolve_process(line)
            texts = self.texts
            if texts is not None:
                if self._prose is not None or self._heading is not None:
                    self._keep_label(number, events)
                texts[number] = line.text[:_KEPT_CHARS]
            return events
        return None

    def _head(self, number: int, raw: str) -> str:
        """The head of an over-long line (what the redactor sees), with a note for the report."""
        self._long_lines += 1
        if self._long_lines <= _LONG_NOTES:
            self.stats.notes.append(
                f"line {number}: {len(raw):,} characters, over the {MAX_PARSED_CHARS:,}-character parse cap: "
                "only its head was read"
            )
        elif self._long_lines == _LONG_NOTES + 1:
            self.stats.notes.append(f"more lines over {MAX_PARSED_CHARS:,} characters: only the head of each was read")
        return raw[: MAX_PARSED_CHARS + _REDACT_MARGIN]

    def close(self) -> Iterator[EventBase]:
        """The source has ended: the events still open (a pending line, a block, the engines' `finish`, held events)."""
        pending, pending_events = self._pending
        context = self.context
        if not self.final:  # a range's end, not the source's: whatever is open would continue in the next range
            self.cut_clean = (
                pending is None
                and context.block is None
                and not self._held
                and not self.failures.open
                and self._plain_prev is None
            )
            return
        self._pending = (None, None)
        if pending is not None:
            if pending_events is None:
                yield from self._release(self._not_understood(pending))
            else:
                yield from self._release(pending_events)
        if context.block is not None:
            try:
                closing = context.block(LogLine(self.source, self.stats.lines + 1, "", ""), context) or []
            except GRAMMAR_FAILURES:
                closing = []
            yield from self._release(closing)
            context.block = None
        yield from self._release(self.failures.close())
        for spec in REGISTRY.loaded_specs():  # a package not imported parsed nothing to finish
            if spec.finish is None:
                continue
            try:
                finished = spec.finish(context)
            except GRAMMAR_FAILURES:
                finished = []
            yield from self._release(finished)
        # Tables closed by a foreign line wait in the context's stash (parse.blocks) until the source ends; a package
        # that drains them in its own finish may not be loaded at all.
        yield from self._release(blocks.drain(context))
        yield from self._flush_held()

    def carried_state(self) -> str:
        """What the parse of the next line depends on beyond the line itself, as text to compare: the grammars'
        state (versions, the speculative k, a wrapped dump), the workers' ranks by pid, the redactor's place in
        a private key, the forced engine. The dispatch cache and the recent keywords are left out: they choose
        which grammar is tried first, not what a line gives."""
        state = sorted((str(key), repr(value)) for key, value in self.context.state.items())
        ranks = sorted((pid, repr(proc)) for pid, proc in self._ranks.items())
        return repr(
            (
                state,
                ranks,
                self._redact.carried(),
                self.context.forced_engine,
                self.failures.carried(),
                self._header_seen,
            )
        )

    def begin_range(self, lines: Iterable[tuple[int, str]], stats: SourceStats) -> None:
        """Parse `lines` next, counted afresh in `stats` (with a fresh detection and texts), keeping the state
        carried from the lines parsed so far: a range's parse after the lines that lead up to it."""
        self._lines = lines
        self.stats = stats
        before = self._detected_before
        self._detected_before = self.detection if before is None else self.detection.after(before)
        self.engines_guessed = []
        self.detection = Detection(forced=self.detection.forced)
        if self.texts is not None:
            self.texts = LineTexts()
        self._held = []
        self.context.block = None
        self.cut_clean = True

    def _continues(self, before: str, number: int, text: str) -> bool:
        """Whether `text` continues the long line `before` that a terminal broke: `text` has no header of its own
        and is not indented, `before` has one, and only the two together hold a keyword."""
        if not text or _indented(text) or not self._is_candidate(before + text):
            return False
        try:
            return has_header(parse_cleaned(self.source, number - 1, before)) and not has_header(
                parse_cleaned(self.source, number, text)
            )
        except GRAMMAR_FAILURES:
            return False

    def _try_join(self, pending: LogLine, number: int, raw: str) -> tuple[list[EventBase] | None, LogLine | None]:
        """Rejoin a line a terminal broke at its width: the next *physical* line has no header of its own
        and is not indented, and the joined text parses (better than the first part alone): its events. Where
        it does not parse yet and the next line is as long as the first (a middle piece: a terminal breaks every
        piece but the last at the same width), the joined line, to be held for the piece after it."""
        if number != (pending.end or pending.number) + 1:
            return None, None
        nxt = _envelope(self.source, number, raw)
        if not nxt.text or nxt.skip or has_header(nxt) or _indented(nxt.text):
            return None, None
        joined = _envelope(self.source, pending.number, pending.text + nxt.text.rstrip())
        joined.end = number
        self._resolve_process(joined)
        events = self._dispatch(joined)
        if events is None:
            if number - pending.number + 1 < _WRAP_MAX_PIECES and len(clean_physical(raw)) == self._wrap_width:
                # held with the space a terminal may have broken at, for the piece after it
                held = _envelope(self.source, pending.number, pending.text + nxt.text)
                held.end = number
                return None, held
            return None, None
        self.stats.candidates += 1
        return events, None

    def _is_candidate(self, text: str) -> bool:
        # The keyword regex tries dozens of branches at every character (~5 us a line); a serving log's candidates
        # mostly repeat a keyword or two (stats, SpecDecoding), and a substring test for those costs ~0.1 us.
        # A line holding a keyword is one the regex matches, so the answer is the same.
        self._warning_only = False
        if len(text) > KEYWORD_HEAD:
            text = text[:KEYWORD_HEAD]
        for keyword in self._recent_keywords:
            if keyword in text:
                return True
        found = self._index.search(text)
        if found is None:
            self._warning_only = self._read_warnings and may_be_warning(text)
            return self._warning_only
        self._recent_keywords.insert(0, found)
        del self._recent_keywords[_RECENT_KEYWORDS:]
        return True

    def _observe(self, line: LogLine) -> None:
        self.detection.observe_line(line)
        if line.header:
            self._header_seen = True

    def _observe_envelope(self, number: int, text: str) -> None:
        try:
            line = parse_cleaned(self.source, number, text)
        except GRAMMAR_FAILURES:
            return
        if not line.skip:
            self.detection.observe_envelope(line)
            self._header_seen = self._header_seen or bool(self.detection.header_counts)

    def _read_failure(self, number: int, text: str) -> Iterator[EventBase]:
        """A line no line type's keyword selected, that the failure reader wants (a traceback's lines)."""
        try:
            line = parse_cleaned(self.source, number, text)
        except GRAMMAR_FAILURES:
            return
        if line.skip:
            return
        self._resolve_process(line)
        events = self._structure(line, None)
        if events is None:
            return
        self._observe(line)
        self.stats.candidates += 1
        yield from self._release(events)

    def _reader_may_add(self, events: list[EventBase] | None) -> bool:
        """Whether the failure reader may change what a line type gave: anything but a stats line (the bulk of a
        serving log's candidates, which skips its keyword tests), or any line while a traceback is open. A line a
        line type read as a setting or a check may still be a fatal error's (`Failed: Cuda error ...:307 'peer
        access is not supported ...'` is both a P2P check and the process's end)."""
        if events is None or self.failures.open:
            return True
        return not any(type(e) is SchedulerStats or type(e) is SpecDecodeStats for e in events)

    def _structure(self, line: LogLine, events: list[EventBase] | None) -> list[EventBase] | None:
        """The line types' events of a line, with what the failure reader reads in it by structure."""
        try:
            read = self.failures.read(line, events)
        except GRAMMAR_FAILURES:
            return events
        if read and self.texts is not None and not events:
            self.texts[line.number] = line.text[:_KEPT_CHARS]
        return read

    def _handle_candidate(self, line: LogLine) -> Iterator[EventBase]:
        self.stats.candidates += 1
        self._resolve_process(line)
        events = self._dispatch(line)
        if self._reader_may_add(events) and self.failures.wants(line.text):
            events = self._structure(line, events)
        if events is None:
            yield from self._release(self._not_understood(line))
        else:
            yield from self._release(events)


def _envelope(source: str, number: int, raw: str) -> LogLine:
    """`parse_envelope`, with a line whose envelope cannot be read (a 5,000-digit pid) left as plain text."""
    try:
        return parse_envelope(source, number, raw)
    except GRAMMAR_FAILURES:
        text = clean_physical(raw)
        return LogLine(source, number, text, text)


def _indented(text: str) -> bool:
    """An indented line is a block's (a traceback's frames), not the rest of a broken line: one space is where a
    terminal broke between words."""
    return text[:2].isspace() or text[:1] == "\t"


def _maybe_cut(events: list[EventBase]) -> bool:
    """A config dump that parsed only up to a cut: the rest may be on the next physical line."""
    return any(isinstance(e, StartupConfig) and e.truncated for e in events)


def parse_text(text: str, source: str = "<text>", engine: str | None = None) -> list[EventBase]:
    """Parse a whole string (tests, `logdoctor.testing`)."""
    lines = ((i, s) for i, s in enumerate(text.split("\n"), start=1))
    return list(EventStream(source, lines, engine=engine))
