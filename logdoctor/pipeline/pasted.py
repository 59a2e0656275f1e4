"""Pasted runs: one input that holds several runs of one engine, each a command (or a configuration dump) and the
numbers it measured, compared the way `logdoctor diff` compares two deployments.

    $ python -m sglang.bench_one_batch --model-path M --batch-size 1           run 1: 135.5 tok/s
    Decode.  median latency: 0.00738 s, median throughput: 135.50 token/s
    $ python -m sglang.bench_one_batch --model-path M --batch-size 1 --disable-cuda-graph
    Decode.  median latency: 0.01871 s, median throughput:  53.45 token/s      run 2: 2.5x slower
                                                                             -> diff-eager-vs-graphs, run 2 vs run 1

A run begins at a configuration event (a pasted command, a `non-default args` / `server_args` dump) that follows
the measurements of the run before it, or, where results are noted above their commands, ends at one. A line of
prose right above a run's command or results (`Without --enforce-eager:`, `For FP8:`, `**TP=2**`) begins a run too
and names it; where it names a setting the engine's vocabulary knows (a flag, a short parallelism setting, a
quantization format, eager mode or CUDA graphs), that setting is the run's as if its command had set it. Its
measurements are the benchmark results (`vllm bench`, SGLang's offline benchmarks, `LLM.generate`'s progress bar,
serving benchmark blocks) and the engine's periodic stats lines. Two runs are compared when they measured the same
thing with the same tool, ran the same model and workload (the benchmark's own arguments: batch size, lengths,
prompts, rate), and differ in at least one setting. Of the pairs, the one that differs in the fewest settings is
the controlled comparison (the widest gap first); its faster run is the baseline and its slower run the candidate,
and the regression rules (`mode: diff`, docs/diff.md) run on them; where they explain none of its differences (a
default the engine computes, whose value is not known), the next pair as controlled is tried, then the pairs that
differ in more settings (the note names every difference). A flag that one command gives and the other does not has the
engine's default on the other (argparse's: a bare flag is off unless given; no `--quantization` runs the
checkpoint's own format, unquantized unless its name says otherwise; no speculative configuration, none).
Where no pair is compared, the heading of the slowest run that names a slow setting of the cause vocabulary
(`# results of CPU + DISK offload`, `Result (without Moe config):`) is a finding of that cause's `warned` rule.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from logdoctor.engine.evaluate import evaluate
from logdoctor.engine.result import SEVERITY_ORDER, Finding
from logdoctor.engine.rules import LoadedRule
from logdoctor.engine.suppress import Suppressions
from logdoctor.events import BenchmarkResult, EngineWarning, EventBase, SchedulerStats, StartupConfig
from logdoctor.facts import build_profile, with_baseline
from logdoctor.parse.blocks import SHELL_COMMAND_RE
from logdoctor.parse.envelope import parse_envelope
from logdoctor.parse.warning_vocabulary import subsystem_named
from logdoctor.pipeline.runlabels import (
    HEADING_STRENGTH,
    LABEL_GAP,
    PRESENT_IS_SLOW_AGAINST_ANOTHER,
    heading_cause,
    label_line,
    label_settings,
    names_cause,
)
from logdoctor.registry import REGISTRY

Lookup = Callable[[str, int], "str | None"]

# Runs pasted by hand are short: a longer input (a server log with a benchmark result beside it) is not split.
MAX_PASTED_EVENTS = 5000

# The runs of one input compared pairwise, at most (a paste of a whole sweep is read up to here).
MAX_RUNS = 32

# The controlled pairs evaluated at most, widest gap first, until the regression rules explain one.
MAX_PAIRS_TRIED = 8

# A gap below this is run-to-run noise of a benchmark, not a setting's effect (the same 5% the diff table's
# measurement rows treat as equal: vocabulary.py, `tolerance=0.05`).
MIN_GAP = 1.05

# The benchmark's own arguments: a different workload makes two runs incomparable, not a setting that differs.
_WORKLOAD_KEYS = frozenset(
    {
        "batch_size",
        "input",
        "output",
        "input_len",
        "output_len",
        "input_length",
        "output_length",
        "num_prompts",
        "num_iters",
        "num_iters_warmup",
        "n",
        "dataset",
        "dataset_name",
        "dataset_path",
        "random_input",
        "random_output",
        "random_input_len",
        "random_output_len",
        "random_range_ratio",
        "request_rate",
        "max_concurrency",
        "seed",
        "result_filename",
        "output_json",
        "output_file",
        "run_name",
        "profile",
        "port",
        "host",
        "log_level",
        "served_model_name",
        "trust_remote_code",
        "download_dir",
    }
)
_MODEL_KEYS = ("model", "model_path")
_QUANT_KEYS = ("quantization",)
_SPEC_KEYS = ("speculative_config", "speculative_algorithm", "speculative_model")  # the last: vLLM before 0.7
# A checkpoint whose name says it is quantized runs quantized without `--quantization`.
_QUANTIZED_NAME_RE = re.compile(r"awq|gptq|fp8|int4|int8|w4a16|w8a8|bnb|nf4|nvfp4|mxfp4|gguf|exl2", re.IGNORECASE)


@dataclass
class PastedRun:
    """One run of the input: its events (in line order), its lines and what it measured."""

    index: int
    events: list[EventBase] = field(default_factory=list)
    first: int = 0
    last: int = 0
    label: str | None = None  # the prose line above the run
    label_line: int | None = None  # its line
    label_config: dict[str, Any] = field(default_factory=dict)  # the settings its label names
    # the label right above its results where its own label is above its command (`Result (without MoE config):`)
    results_label: tuple[int, str] | None = None

    def configs(self) -> list[StartupConfig]:
        return [e for e in self.events if isinstance(e, StartupConfig) and e.origin != "env"]

    def command(self) -> dict[str, Any]:
        """The settings its label and configuration events give (a later event's key wins), without the
        workload's."""
        merged: dict[str, Any] = dict(self.label_config)
        for event in self.configs():
            merged.update(event.config)
        return merged

    def profile_events(self, engine: str) -> list[EventBase]:
        """Its events, with the settings its label names as a configuration event of their own."""
        if not self.label_config:
            return self.events
        anchor = self.events[0]
        named = StartupConfig(
            source=anchor.source, line=anchor.line, engine=engine, origin="command line", config=self.label_config
        )
        return [named, *self.events]

    def name(self) -> str:
        where = f"lines {self.first}-{self.last}"
        return f'{where} ("{self.label}")' if self.label else where

    def workload(self) -> dict[str, Any]:
        return {k: v for k, v in self.command().items() if k in _WORKLOAD_KEYS}

    def model(self) -> str | None:
        command = self.command()
        for key in _MODEL_KEYS:
            value = command.get(key)
            if isinstance(value, str) and value:
                return value.rstrip("/").rsplit("/", 1)[-1].lower()
        return None

    def speeds(self) -> dict[str, float]:
        """Measured speed by what measured it (higher is faster): output tok/s of each benchmark tool, the stats
        lines' median generation throughput, or 1 / latency where a tool gives only a latency."""
        by_tool: dict[str, list[float]] = {}
        stats: list[float] = []
        for event in self.events:
            if isinstance(event, BenchmarkResult):
                # Results at another concurrency (batch size) measure another load: compared only at equal ones.
                at = f" at concurrency {event.concurrency:g}" if event.concurrency else ""
                if event.output_throughput:
                    by_tool.setdefault(f"{event.tool} output tok/s{at}", []).append(event.output_throughput)
                elif event.mean_e2e_ms:
                    by_tool.setdefault(f"{event.tool} 1/latency{at}", []).append(1000.0 / event.mean_e2e_ms)
                requests = _request_rate(event)
                if requests:  # after the token rates: a block cut after its duration still has this one
                    by_tool.setdefault(f"{event.tool} req/s{at}", []).append(requests)
            elif isinstance(event, SchedulerStats) and event.generation_throughput:
                stats.append(event.generation_throughput)
        # The best of a tool's results: a warm-up pass measures the same setting, only colder.
        speeds = {tool: max(values) for tool, values in by_tool.items()}
        # One stats line is weak evidence of a server's speed, unless the run is named (a label, a command): the
        # user pasted that line as the run's result.
        if len(stats) >= 2 or (stats and self.label is not None):
            speeds["generation tok/s (stats lines)"] = statistics.median(stats)
        return speeds


def _request_rate(event: BenchmarkResult) -> float | None:
    """Completed requests a second, by the clients' definition (completed / the benchmark's duration, as vLLM's and
    SGLang's serving benchmarks compute it), so a block cut before that row still has it; else the printed figure."""
    duration = event.values.get("benchmark_duration_s")
    if event.completed and isinstance(duration, int | float) and duration > 0:
        try:
            rate = event.completed / float(duration)  # unrounded: the printed figure has two decimals
        except OverflowError:  # a count of hundreds of digits (a mangled paste) is no rate
            return None
        return rate if math.isfinite(rate) else None
    return event.request_throughput or None


def _is_config(event: EventBase) -> bool:
    return isinstance(event, StartupConfig) and event.origin != "env"


def _is_measurement(event: EventBase) -> bool:
    return isinstance(event, BenchmarkResult) or (
        isinstance(event, SchedulerStats) and bool(event.generation_throughput)
    )


def _labels(ordered: Sequence[EventBase], lookup: Lookup | None) -> dict[int, tuple[int, str]]:
    """The label above each configuration and benchmark result event that has one (its line, its text), by the
    event's id."""
    if lookup is None:
        return {}
    taken = {n for e in ordered for n in range(e.line, (e.end_line or e.line) + 1)}
    labels: dict[int, tuple[int, str]] = {}
    for event in ordered:
        if _is_config(event) or isinstance(event, BenchmarkResult):
            found = label_line(event, lookup, taken)
            if found is not None:
                labels[id(event)] = found
    return labels


def _commanded(ordered: Sequence[EventBase], lookup: Lookup | None) -> set[int]:
    """The events with a shell command no line type read between them and the event before (within a label's reach):
    each began another invocation of a program, so another run."""
    found: set[int] = set()
    if lookup is None:
        return found
    before = 0
    for event in ordered:
        lines = range(max(before + 1, event.line - LABEL_GAP), event.line)
        if any(_shell_command(lookup, event.source, number) is not None for number in lines):
            found.add(id(event))
        before = max(before, event.end_line or event.line)
    return found


def _shell_command(lookup: Lookup, source: str, number: int) -> str | None:
    """The kept line `number` when it is a shell command no line type read, without its envelope."""
    text = lookup(source, number)
    if text is None:
        return None
    message = parse_envelope(source, number, text).message
    return message if SHELL_COMMAND_RE.match(message) else None


def split_runs(events: Iterable[EventBase], lookup: Lookup | None = None) -> list[PastedRun]:
    """The input's runs. Most pastes give each command before its output: a configuration event after a measurement
    begins the next run. Where the input's first measurement comes before its first configuration (results noted
    as comments above each command), each run ends at its configuration instead. With `lookup` (the evidence
    lines), a labelled command or result after a measurement begins the next run too, and names it, as does a result
    below a shell command that no line type read (a user's own script run again)."""
    ordered = sorted(events, key=lambda e: e.line)
    labels = _labels(ordered, lookup)
    commanded = _commanded(ordered, lookup)
    first = next((e for e in ordered if _is_config(e) or _is_measurement(e)), None)
    results_first = first is not None and _is_measurement(first)
    runs: list[PastedRun] = []
    current = PastedRun(1)
    measured = False
    for event in ordered:
        config = _is_config(event)
        label = labels.get(id(event))
        if measured and ((config and not results_first) or label is not None or id(event) in commanded):
            runs.append(current)
            current = PastedRun(len(runs) + 1)
            measured = False
        if label is not None and current.label is None and not measured:
            current.label_line, current.label = label
        elif label is not None and not measured and _is_measurement(event) and current.results_label is None:
            current.results_label = label
        if not current.events:
            current.first = event.line
        current.events.append(event)
        current.last = max(current.last, event.end_line or event.line)
        measured = measured or _is_measurement(event)
        if config and results_first and measured:
            runs.append(current)
            current = PastedRun(len(runs) + 1)
            measured = False
    if current.events:
        runs.append(current)
    return runs


def _command_above(run: PastedRun, lookup: Lookup) -> tuple[int, list[str]] | None:
    """The shell command no line type read right above a run (within the heading's reach): its line and words."""
    source = run.events[0].source
    for number in range(run.first - 1, max(run.first - 1 - LABEL_GAP, 0), -1):
        message = _shell_command(lookup, source, number)
        if message is not None:
            message = message.strip().strip("`")  # Markdown's inline code around it
            return number, message.replace("$", " ", 1).split() if message.startswith("$") else message.split()
    return None


def _command_labels(runs: Sequence[PastedRun], lookup: Lookup) -> None:
    """Runs of one program (`python bench.py` and `python bench.py --with_speculation True`) whose commands no line
    type read: the words only one run's command has name that run, as a label would (`--with_speculation True`),
    where its own label does not already tell it from the others."""
    commands = {run.index: found for run in runs if run.events and (found := _command_above(run, lookup)) is not None}
    by_program: dict[tuple[str, ...], list[PastedRun]] = {}
    for run in runs:
        if run.index in commands:
            by_program.setdefault(tuple(commands[run.index][1][:2]), []).append(run)
    for group in by_program.values():
        if len(group) < 2 or len({tuple(commands[run.index][1]) for run in group}) < 2:
            continue
        labels = [run.label for run in group]
        for run in group:
            line, words = commands[run.index]
            others = [set(commands[other.index][1]) for other in group if other is not run]
            own = [word for word in words[2:] if not all(word in other for other in others)]
            if own and (run.label is None or labels.count(run.label) > 1):
                run.label, run.label_line = " ".join(own), line
            elif run.label is None:  # the plain command: named by it, to be measured against the others
                run.label, run.label_line = " ".join(words), line


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def settings_differ(a: PastedRun, b: PastedRun) -> dict[str, tuple[Any, Any]]:
    """The settings the two runs' commands set differently: key -> (a's value, b's value), None for a default
    that is not a plain off (a non-flag option one command leaves out)."""
    ca = {k: v for k, v in a.command().items() if k not in _WORKLOAD_KEYS and k not in _MODEL_KEYS}
    cb = {k: v for k, v in b.command().items() if k not in _WORKLOAD_KEYS and k not in _MODEL_KEYS}
    out: dict[str, tuple[Any, Any]] = {}
    for key in dict.fromkeys([*ca, *cb]):
        va, vb = ca.get(key), cb.get(key)
        if key not in ca and _is_bool(vb):
            va = not vb
        if key not in cb and _is_bool(va):
            vb = not va
        if va != vb:
            out[key] = (va, vb)
    return out


def _with_defaults(run: PastedRun, other: PastedRun, engine: str) -> list[EventBase]:
    """The run's events, with the defaults its command leaves out where the other command sets them: a flag the
    other gives is off here, and no quantization flag is an unquantized run unless the model's name says so."""
    own = run.command()
    filled: dict[str, Any] = {}
    for key, value in other.command().items():
        if key in own or key in _WORKLOAD_KEYS:
            continue
        if _is_bool(value):
            filled[key] = not value
        elif key in _QUANT_KEYS and not _QUANTIZED_NAME_RE.search(run.model() or ""):
            filled[key] = "none"
        elif key in _SPEC_KEYS:
            filled[key] = None  # no speculative decoding unless a command asks for it
    events = run.profile_events(engine)
    if not filled:
        return events
    configs = run.configs()
    anchor = configs[0] if configs else run.events[0]
    default = StartupConfig(
        source=anchor.source,
        line=anchor.line,
        engine=engine,
        origin="command line",
        config=filled,
    )
    return [default, *events]


@dataclass
class Comparison:
    """The controlled pair of runs: the faster (baseline), the slower (candidate), and how they differ."""

    baseline: PastedRun
    candidate: PastedRun
    measure: str
    baseline_speed: float
    candidate_speed: float
    differs: dict[str, tuple[Any, Any]]  # key -> (baseline's value, candidate's value)

    @property
    def ratio(self) -> float:
        return self.baseline_speed / self.candidate_speed

    def changed(self) -> str:
        """The settings they differ in, as `key baseline -> candidate`."""
        return ", ".join(f"{k} {_show(b)} -> {_show(c)}" for k, (b, c) in self.differs.items())

    def note(self, runs: int) -> str:
        changed = self.changed()
        base, cand = self.baseline, self.candidate
        return (
            f"{runs} runs in this input; {cand.name()} run {self.ratio:.2f}x slower than {base.name()} "
            f"({self.measure}: {self.candidate_speed:.4g} vs {self.baseline_speed:.4g}); "
            f"the commands differ in: {changed} (compared as `logdoctor diff` compares two deployments)"
        )


def _show(value: Any) -> str:
    text = "(default)" if value is None else str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def best_pair(runs: Sequence[PastedRun]) -> Comparison | None:
    """The pair of comparable runs that differ in the fewest settings (then by the widest gap)."""
    pairs = controlled_pairs(runs)
    return pairs[0] if pairs else None


def controlled_pairs(runs: Sequence[PastedRun]) -> list[Comparison]:
    """The pairs of comparable runs that differ in the fewest settings, the widest gap first."""
    pairs = comparable_pairs(runs)
    return [pair for pair in pairs if len(pair.differs) == len(pairs[0].differs)]


def comparable_pairs(runs: Sequence[PastedRun]) -> list[Comparison]:
    """Every pair of comparable runs, those that differ in fewer settings first, then the widest gap."""
    found: list[Comparison] = []
    runs = runs[:MAX_RUNS]
    keys = [(run.model(), run.workload()) for run in runs]
    speeds = [run.speeds() for run in runs]
    for i, a in enumerate(runs):
        for j in range(i + 1, len(runs)):
            b = runs[j]
            if keys[i] != keys[j]:
                continue
            sa, sb = speeds[i], speeds[j]
            common = [m for m in sa if m in sb and sa[m] > 0 and sb[m] > 0]
            if not common:
                continue
            measure = common[0]
            differs = settings_differ(a, b)
            if not differs:
                continue
            fast, slow = (a, b) if sa[measure] >= sb[measure] else (b, a)
            fast_speed, slow_speed = max(sa[measure], sb[measure]), min(sa[measure], sb[measure])
            oriented = {k: (v[0], v[1]) if fast is a else (v[1], v[0]) for k, v in differs.items()}
            found.append(Comparison(fast, slow, measure, fast_speed, slow_speed, oriented))
    found.sort(key=lambda pair: (len(pair.differs), -pair.ratio))
    return found


def _serving_engine(engine: str, runs: Sequence[PastedRun]) -> str:
    """The engine the runs ran on: the input's, or, for benchmark output alone (no engine line), the one the
    benchmark tools name (`vllm-offline`, `sglang-bench-one-batch`)."""
    serving = REGISTRY.names("serving")
    if engine in serving:
        return engine
    tools = {e.tool.split("-", 1)[0] for run in runs for e in run.events if isinstance(e, BenchmarkResult)}
    named = [name for name in serving if name in tools]
    return named[0] if len(named) == 1 else engine


def compare_runs(
    events: Iterable[EventBase],
    engine: str,
    version: str | None,
    rules: Sequence[LoadedRule],
    lookup: Callable[[str, int], str | None],
    suppressions: Suppressions | None = None,
    today: date | None = None,
    focus: tuple[int, int] | None = None,
) -> tuple[list[Finding], list[str]]:
    """The regression findings of the input's controlled pair of runs, and a note that says which runs were
    compared; nothing where the input holds one run or no comparable pair. `focus`: the lines of the server start
    being diagnosed, where the runs span several starts; a pair whose slower run is another start gives its note
    and no finding (a restart that went from the slow setting to the fast one has nothing left to fix)."""
    every = split_runs(events, lookup)
    _command_labels(every, lookup)
    engine = _serving_engine(engine, every)
    for run in every:
        if run.label is not None:
            run.label_config = label_settings(run.label, engine)
            # words of its own that set nothing (a command the paste wrapped mid-word): the whole command's settings
            if not run.label_config and (command := _command_above(run, lookup)) is not None:
                run.label_config = label_settings(" ".join(command[1]), engine)
    runs = [run for run in every if run.speeds() and (run.configs() or run.label_config)]
    pairs = [pair for pair in controlled_pairs(runs) if math.isfinite(pair.ratio)] if len(runs) >= 2 else []
    if not pairs:
        named = heading_findings(every, engine, rules, lookup, suppressions, today)
        return named, [] if named else _unexplained_gap(every)
    if pairs[0].ratio < MIN_GAP:
        note = pairs[0].note(len(runs))
        return [], [note + f"; a gap under {MIN_GAP - 1:.0%} is benchmark noise, so no setting is blamed"]
    diff_rules = [item for item in rules if item.is_diff]
    # The widest gap first; where no regression rule explains its difference (a setting left at a default the
    # engine computes, so its value is not known, or one no rule reads: another parallel layout), the next pair as
    # controlled that does, then the pairs that differ in more settings (the note names every difference).
    wider = [p for p in comparable_pairs(runs) if math.isfinite(p.ratio) and len(p.differs) > len(pairs[0].differs)]
    by_rule = True  # a regression rule's findings, which say what was measured; else the setting's own finding
    for pair in [p for p in [*pairs, *wider] if p.ratio >= MIN_GAP][:MAX_PAIRS_TRIED]:
        base = build_profile(_with_defaults(pair.baseline, pair.candidate, engine), engine=engine, version=version)
        cand = build_profile(_with_defaults(pair.candidate, pair.baseline, engine), engine=engine, version=version)
        findings, _, _ = evaluate(diff_rules, with_baseline(cand, base), lookup, suppressions, today, diff=True)
        if findings:
            break
    else:
        pair, by_rule = pairs[0], False
        judge = _Judge(engine, rules, lookup, suppressions, today)
        findings = _setting_findings(pair, judge) if pair.ratio >= MIN_GAP else []
    note = pair.note(len(runs))
    if findings and _elsewhere(pair, focus):
        return [], [note + _ELSEWHERE]
    if not by_rule:
        return findings, [note]
    measured = (
        f" (measured: {pair.candidate.name()} {pair.ratio:.2f}x slower than {pair.baseline.name()}, {pair.measure})"
    )
    return [f.model_copy(update={"explanation": f.explanation + measured}) for f in findings], [note]


_ELSEWHERE = "; the slower run is not the server start diagnosed here"


def _elsewhere(pair: Comparison, focus: tuple[int, int] | None) -> bool:
    """Whether the pair's slower run begins outside the server start being diagnosed (`focus`, its lines)."""
    return focus is not None and not focus[0] <= pair.candidate.first <= focus[1]


def _unexplained_gap(runs: Sequence[PastedRun]) -> list[str]:
    """A note for labelled runs that measured apart by more than noise where no setting tells them apart (`baseline`
    / `after the upgrade`): what was measured, and that nothing is blamed."""
    named = [run for run in runs if run.label is not None and run.speeds()]
    for i, a in enumerate(named):
        for b in named[i + 1 :]:
            sa, sb = a.speeds(), b.speeds()
            measure = next((m for m in sa if m in sb and sa[m] > 0 and sb[m] > 0), None)
            if measure is None:
                continue
            (fast, fast_speed), (slow, slow_speed) = sorted(((a, sa[measure]), (b, sb[measure])), key=lambda r: -r[1])
            if fast_speed / slow_speed >= MIN_GAP:
                return [
                    f"{len(named)} labelled runs in this input; {slow.name()} ran {fast_speed / slow_speed:.2f}x slower "
                    f"than {fast.name()} ({measure}: {slow_speed:.4g} vs {fast_speed:.4g}); neither label nor command "
                    "names a setting that differs, so no setting is blamed"
                ]
    return []


def merge_findings(findings: Sequence[Finding], extra: Sequence[Finding]) -> list[Finding]:
    """Both lists as one, best score first (a rule once: its better finding)."""
    by_rule: dict[str, Finding] = {}
    for finding in [*findings, *extra]:
        kept = by_rule.get(finding.rule)
        if kept is None or finding.score > kept.score:
            by_rule[finding.rule] = finding
    return sorted(by_rule.values(), key=lambda f: (-f.score, -SEVERITY_ORDER[f.severity], f.cause, f.rule))


# How strongly a controlled pair's one differing setting says it: a measurement, not words, but by the user's own
# benchmark, which no regression rule explains (the warned rules' score, docs/warnings.md).
MEASURED_PAIR_STRENGTH = 1.0


def _setting_cause(pair: Comparison) -> str | None:
    """The controlled pair no regression rule explains: where every setting the two runs differ in names one cause
    of the vocabulary (`--enable-prefix-caching`, `--max-num-seqs`: the warning vocabulary's subsystem words) and
    the slower run has it, the measured gap is that cause's finding, as the engine's own warning in those words
    would be, not a verdict."""
    if any(candidate is None or candidate is False for _, candidate in pair.differs.values()):
        return None  # the slower run lacks the setting (a faster quantized run): its cost is not what was measured
    causes = {
        found[0] if (found := subsystem_named(key.replace("_", " "))) is not None else None for key in pair.differs
    }
    return causes.pop() if len(causes) == 1 else None


def _setting_findings(pair: Comparison, judge: _Judge) -> list[Finding]:
    cause = _setting_cause(pair)
    if cause is None:
        return []
    changed = pair.changed()
    explanation = (
        f"{pair.candidate.name()} ran {pair.ratio:.2f}x slower than {pair.baseline.name()} ({pair.measure}: "
        f"{pair.candidate_speed:.4g} vs {pair.baseline_speed:.4g}), and the two runs differ only in {changed}; "
        "no regression rule explains that setting's cost, so the measurement is the evidence"
    )
    title = f"Two pasted runs differ in one setting, and the slower one has it: {changed}"
    line = pair.candidate.label_line or pair.candidate.events[0].line
    return judge.warned(cause, changed, line, explanation, title, MEASURED_PAIR_STRENGTH, pair.candidate.events[0])


@dataclass(frozen=True)
class _Judge:
    """What evaluates the `warned` rules on words a paste gives (a heading, a measured pair's setting)."""

    engine: str
    rules: Sequence[LoadedRule]
    lookup: Lookup
    suppressions: Suppressions | None
    today: date | None

    def warned(
        self, cause: str, words: str, line: int, explanation: str, title: str, strength: float, anchor: EventBase
    ) -> list[Finding]:
        """`cause`'s `warned` rule on `words` at `line`, as a finding with `explanation` and `title`."""
        said = EngineWarning(
            source=anchor.source,
            line=line,
            engine=self.engine,
            cause=cause,
            subsystem=words,
            subsystem_from="message",
            strength=strength,
            message=words,
        )
        warned = [item for item in self.rules if item.rule.mode == "warned" and item.rule.cause == cause]
        profile = build_profile([said], engine=self.engine)
        findings, _, _ = evaluate(warned, profile, self.lookup, self.suppressions, self.today)
        return [f.model_copy(update={"explanation": explanation, "title": title}) for f in findings]


def heading_findings(
    runs: Sequence[PastedRun],
    engine: str,
    rules: Sequence[LoadedRule],
    lookup: Lookup,
    suppressions: Suppressions | None = None,
    today: date | None = None,
) -> list[Finding]:
    """Where no pair of runs was compared: the setting the heading of the input's slowest measured run names, as a
    finding of that cause's `warned` rule (a modest score: the author's words are the evidence, not a measurement)."""
    measured = [run for run in runs if run.speeds() and run.label is not None and run.label_line is not None]
    if not measured:
        return []
    slowest = measured[0]
    if len(measured) > 1:
        common = [m for m in measured[0].speeds() if all(m in run.speeds() for run in measured)]
        if not common:
            return []
        slowest = min(measured, key=lambda run: run.speeds()[common[0]])
    assert slowest.label is not None and slowest.label_line is not None
    faster = [run.label for run in measured if run is not slowest and run.label is not None]
    # the heading of its results first: it says how the measured run ran where the command's says what was deployed
    headings = [slowest.results_label] if slowest.results_label is not None else []
    chosen = next(
        (
            (line, named)
            for line, text in [*headings, (slowest.label_line, slowest.label)]
            if (named := heading_cause(text, faster)) is not None
        ),
        None,
    )
    if chosen is None:
        return []
    heading_line, (cause, words) = chosen
    # the measure every measured run has, in the slowest run's order
    measure = next(m for m in slowest.speeds() if all(m in run.speeds() for run in measured))
    explanation = (
        f'the heading above {slowest.name()} names "{words}" ({cause}): the run was measured that way; no run '
        "without it is in the input to measure the cost"
    )
    others = [run for run in measured if run is not slowest]
    if others:  # the runs beside it: what it measured against them, though no setting of theirs is known
        fastest = max(others, key=lambda run: run.speeds()[measure])
        ratio = fastest.speeds()[measure] / slowest.speeds()[measure]
        explanation = (
            f'the heading of {slowest.name()} names "{words}" ({cause}), and it ran {ratio:.2f}x slower than '
            f"{fastest.name()} ({measure}: {slowest.speeds()[measure]:.4g} vs {fastest.speeds()[measure]:.4g})"
        )
    if cause in PRESENT_IS_SLOW_AGAINST_ANOTHER:
        # measured: the best run without the setting against the best run with it, beyond benchmark noise
        with_it = max(
            (run for run in measured if names_cause(run.label or "", cause)), key=lambda r: r.speeds()[measure]
        )
        without = max(
            (run for run in measured if not names_cause(run.label or "", cause)), key=lambda r: r.speeds()[measure]
        )
        ratio = without.speeds()[measure] / with_it.speeds()[measure]
        if ratio < MIN_GAP:
            return []
        explanation = (
            f'{with_it.name()} names "{words}" ({cause}) and ran {ratio:.2f}x slower than {without.name()}, which '
            f"does not ({measure}: {with_it.speeds()[measure]:.4g} vs {without.speeds()[measure]:.4g}; the best run "
            "of each)"
        )
    title = f"The run's heading names a slow setting: {words}"
    judge = _Judge(engine, rules, lookup, suppressions, today)
    return judge.warned(cause, words, heading_line, explanation, title, HEADING_STRENGTH, slowest.events[0])
