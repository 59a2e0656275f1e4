"""Facts derived from the events and the facts already built: conditions that are normal for a deployment
(so rules can tell them from problems) and quantities computed from several lines.

    vLLM `Using AttentionBackendEnum.TRITON_ATTN backend.` with no attention backend in `non-default args`
        -> attention.model_required = True (the model's own config chose it: Gemma 4, gpt-oss)
    `Running: 2 reqs, ..., Pending: 3 reqs, GPU KV cache usage: 82.1%`
        -> kv.free_request_slots = 0.44 (the free 17.9% holds under half of one running request's share)

The last combiner (`Derived`): it reads every event and derives in `finish`, after the other combiners
have written the facts it builds on. Every fact it sets is declared in logdoctor/facts/declarations.py.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from logdoctor.eventlog import EventLog
from logdoctor.events import (
    AttentionBackend,
    BenchmarkResult,
    CompileTime,
    CudaGraph,
    EngineFailure,
    EngineVersion,
    EventBase,
    GpuInfo,
    GpuP2P,
    GpuTopology,
    KVCache,
    NcclInfo,
    NcclTransport,
    Platform,
    SchedulerStats,
    SpecDecodeStats,
    StartupConfig,
)
from logdoctor.facts import speculation
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.series import Series
from logdoctor.registry import REGISTRY

if TYPE_CHECKING:
    from logdoctor.facts.profile import ProfileBuilder

# Failure lines that are the API server's view of an engine core that is gone: they name no cause of their own
# (vLLM: "EngineCore encountered an issue. See stack trace (above) for the root cause."; and the client's monitor
# thread in core_client.py, which prints "Engine core proc EngineCore_DP0 died unexpectedly, shutting down
# client." when a core process exits while the client still runs: an exit the core logged no error for - killed
# from outside, or torn down with its parent - reads the same).
_CONSEQUENCE = re.compile(
    r"output_handler failed|EngineDeadError: EngineCore encountered an issue|Engine core proc(?:ess)? \S+ died "
    r"unexpectedly",
    re.I,
)
_CORE_EXIT = re.compile(r"Engine core proc(?:ess)? \S+ died unexpectedly", re.I)
# An event the grammars may give for a shutdown that began (SIGTERM, `Shutting down`, `shutdown triggered`).
_SHUTDOWN_KINDS = frozenset({"shutdown", "shutdown-requested"})
# Failure events that are no failure of the run: a wait (the start still running), one request's error.
_NOT_FAILURES = frozenset({"shm-broadcast-wait", "request-error"})
# Why vLLM chose a backend for the model or GPU itself (not a fallback from a faster one the GPU has); the grammars
# give "compute-capability" once they read `FA2 is only supported on devices with compute capability >= 8`.
_MODEL_REASONS = frozenset({"heterogeneous-head-dim", "attention-sinks", "compute-capability"})
# SGLang captures decode graphs for batch sizes 1, 2, 4, 8 and then every 8 (cuda_graph_max_bs rounds to these).
_SGLANG_CAPTURE_STEP = 8
# Speculative step cost (docs/rules.md, "Derived facts"): the one k sweep of logdoctor/facts/speculation.py, which the
# roofline uses too when the GPU is known, here without hardware: verification by the ridge rule (1 while batch x
# (k + 1) verified tokens stay under ~256, where a bf16 decode step turns compute-bound), plus the drafter's passes
# (k for EAGLE/MTP/draft models, one for a DFlash block, none for n-gram) at the method's default cost per pass.
_RIDGE_TOKENS = 256.0
# Lines that show the engine finished starting (or served).
_READY_KINDS = frozenset({"init_engine", "graph_capture"})


class Derived(Combiner):
    """Conditions normal for a deployment, and quantities from several lines (see the module docstring)."""

    reads = (EventBase,)
    produces = (
        "attention.model_required",
        "cuda_graphs.suggested_max_batch",
        "failure.core_exit_unexplained",
        "failure.shutdown_only",
        "failure.shutdown_stalled",
        "hybrid.prefix_caching_disabled",
        "kv.free_request_slots",
        "platform.gpu_signals",
        "sched.waiting_at_cap_share",
        "sched.queue_share",
        "sched.queue_draining",
        "spec.best_k",
        "spec.typical_acceptance",
        "spec.best_k_speedup",
        "spec.step_cost",
        "spec.verify_cost",
        "spec.break_even",
        "spec.acceptance_is_root",
        "startup.incomplete",
        "nccl.test_unfinished",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        # The periodic lines (a million in a week-long log) are summed up as they stream by (`Served`); the
        # others are few, and held compressed (eventlog.EventLog) for the passes below.
        self.events = EventLog()
        self.served = Served()
        self.last: dict[str, EventBase] = {}  # each source's last event (failure.shutdown_stalled)

    def add(self, ev: EventBase) -> None:
        last = self.last.get(ev.source)
        if last is None or ev.line >= last.line:
            self.last[ev.source] = ev
        if isinstance(ev, SchedulerStats | SpecDecodeStats):
            self.served.add(ev)
        elif isinstance(ev, _KEPT):
            self.events.append(ev)

    def finish(self) -> None:
        derive(self.b, self.events, self.served)
        _shutdown_stalled(self.b, self.last.values())


# The event types the derivations below read, besides the periodic stats and spec-decode lines.
_KEPT = (
    AttentionBackend,
    BenchmarkResult,
    CompileTime,
    CudaGraph,
    EngineFailure,
    EngineVersion,
    GpuInfo,
    GpuP2P,
    GpuTopology,
    KVCache,
    NcclInfo,
    NcclTransport,
    Platform,
    StartupConfig,
)


QueueEntry = tuple[str, int, int, bool]  # an interval with a queue: source, running, waiting, prefilling


def queue_entry(ev: SchedulerStats, running: int, waiting: int) -> QueueEntry:
    prompt, generation = ev.prompt_throughput, ev.generation_throughput
    return (ev.source, running, waiting, prompt is not None and generation is not None and prompt > generation)


def _drains(a: QueueEntry, c: QueueEntry) -> bool:
    return a[0] == c[0] and c[2] < a[2] and c[1] > a[1]


@dataclass
class Draining:
    """sched.queue_draining, one interval with a queue at a time (or a stretch of them, merged in order)."""

    count: int = 0
    first: QueueEntry | None = None
    last: QueueEntry | None = None
    holds: bool = True

    def add(self, entry: QueueEntry) -> None:
        self.holds = self.holds and entry[3] and (self.last is None or _drains(self.last, entry))
        self.first, self.last, self.count = self.first or entry, entry, self.count + 1

    def extend(self, other: Draining) -> None:
        if other.first is None:
            return
        self.holds = self.holds and other.holds and (self.last is None or _drains(self.last, other.first))
        self.first, self.last, self.count = self.first or other.first, other.last, self.count + other.count


class Served:
    """What the derivations need of the stats and spec-decode lines, gathered one line at a time."""

    def __init__(self) -> None:
        self.sources: set[str] = set()  # sources that printed either
        self.slots = Series()  # kv.free_request_slots: one value an interval with a queue
        self.first_slots: SchedulerStats | None = None
        self.running = Series()  # running requests of the stats lines that name some
        self.peak_running = 0
        # sched.waiting_at_cap_share: the stats lines that give both counts, and of those with requests waiting,
        # how many ran each running count (and the first of them): the cap is compared once it is known
        self.counted = 0
        self.waiting_by_running: dict[int, tuple[int, SchedulerStats]] = {}
        # sched.queue_share: waiting / (running + waiting) of each interval with a queue
        self.queue_shares = Series()
        self.first_queue: SchedulerStats | None = None
        self.queue = Draining()  # sched.queue_draining

    def add(self, ev: SchedulerStats | SpecDecodeStats) -> None:
        self.sources.add(ev.source)
        if not isinstance(ev, SchedulerStats):
            return
        if ev.running:
            self.running.append(float(ev.running))
            self.peak_running = max(self.peak_running, ev.running)
        waiting = ev.waiting if ev.waiting is not None else ev.queue
        if ev.running is not None and waiting:
            self.queue_shares.append(waiting / (ev.running + waiting))
            self.first_queue = self.first_queue or ev
            self.queue.add(queue_entry(ev, ev.running, waiting))
        if ev.running is not None and waiting is not None:
            self.counted += 1
            if waiting > 0:
                seen = self.waiting_by_running.get(ev.running)
                self.waiting_by_running[ev.running] = (seen[0] + 1, seen[1]) if seen else (1, ev)
        usage, running = ev.kv_cache_usage, ev.running
        if not waiting or not running or not usage or usage <= 0:
            return
        self.slots.append((1.0 - min(usage, 1.0)) * running / usage)
        self.first_slots = self.first_slots or ev


def derive(b: ProfileBuilder, evs: Sequence[EventBase], served: Served) -> None:
    _failures_after_stop(b, evs, served)
    _attention_model_required(b, evs)
    _hybrid_prefix_caching(b, evs)
    _kv_free_request_slots(b, served)
    _waiting_at_cap(b, served)
    _queue_share(b, served)
    _queue_draining(b, served)
    _startup_incomplete(b, evs, served)
    _nccl_test_unfinished(b, evs)
    _gpu_signals(b, evs)
    _suggested_graph_batch(b, served)
    _spec_best_k(b, served)


def _failures_after_stop(b: ProfileBuilder, evs: Sequence[EventBase], served: Served) -> None:
    """failure.shutdown_only: every failure line came after a shutdown began, or is only the API server's
    EngineDeadError with no root cause logged while the server had been serving (the core was stopped)."""
    failures = [e for e in evs if isinstance(e, EngineFailure) and e.kind not in _NOT_FAILURES]
    if not failures:
        return
    stops = [e for e in evs if isinstance(e, EngineFailure) and e.kind in _SHUTDOWN_KINDS]
    real = [e for e in failures if e.kind not in _SHUTDOWN_KINDS]
    if not real:
        b.set("failure.shutdown_only", True, stops[0], "only shutdown lines")
        return

    def after_stop(f: EngineFailure) -> bool:
        return f.phase == "shutdown" or any(s.source == f.source and s.line < f.line for s in stops)

    consequence_only = all(_CONSEQUENCE.search(f.message) for f in real) and all(
        f.source in served.sources for f in real
    )
    if all(after_stop(f) for f in real):
        b.set("failure.shutdown_only", True, real[0], "every failure line follows a shutdown")
    elif consequence_only:
        b.set("failure.shutdown_only", True, real[0], "only the API server's EngineDeadError, no root cause logged")
        exits = [f for f in real if _CORE_EXIT.search(f.message)]
        if exits:
            # not a failure of the serving it followed, but a core process that exited on its own: worth a note
            b.set("failure.core_exit_unexplained", True, exits[0], "the core exited after serving, no error logged")
    else:
        b.set("failure.shutdown_only", False, real[0], "a failure line with its own cause")


# uvicorn's waits on in-flight work during a stop (server.py `_wait_tasks_to_complete`): the responses still being
# sent, then the request tasks still running. Each is followed, once the work ends, by the lifespan shutdown lines.
_STOP_WAIT = re.compile(
    r"Waiting for (?:connections to close|background tasks to complete)\. \(CTRL\+C to force quit\)"
)


def _shutdown_stalled(b: ProfileBuilder, lasts: Iterable[EventBase]) -> None:
    """failure.shutdown_stalled: a source ends on uvicorn waiting for in-flight requests of a stop: the requests
    never finished, and nothing after it (no `Application shutdown complete.`, no `Finished server process`).
    False otherwise: like failure.count, the absence of the line is evidence."""
    for ev in lasts:
        if isinstance(ev, EngineFailure) and ev.kind in _SHUTDOWN_KINDS and _STOP_WAIT.search(ev.message or ""):
            b.set("failure.shutdown_stalled", True, ev, "the log ends while the stop waits on in-flight requests")
            return
    b.set("failure.shutdown_stalled", False, None, "no log ends on a stop's wait for in-flight requests")


def _attention_model_required(b: ProfileBuilder, evs: Sequence[EventBase]) -> None:
    """attention.model_required: the target's backend is the only one vLLM offered, vLLM forced it for the
    model (attention sinks, heterogeneous head dims), or vLLM's own config selected it although the user's
    `non-default args` name no attention backend."""
    backend = b.value("attention.backend")
    if backend is None:
        return
    user_cfg = [e for e in evs if isinstance(e, StartupConfig) and e.origin in ("non-default args", "command line")]
    user_set = any(e.config.get("attention_backend") not in (None, "None", "auto") for e in user_cfg)
    for ev in evs:
        if not isinstance(ev, AttentionBackend) or ev.role not in ("target", "unknown"):
            continue
        if ev.fallback_reason in _MODEL_REASONS:
            b.set("attention.model_required", True, ev, f"the engine chose it for the model ({ev.fallback_reason})")
            return
        if ev.backend == backend and ev.candidates and set(ev.candidates) == {backend}:
            b.set("attention.model_required", True, ev, "the only backend the engine offered")
            return
        if ev.backend == backend and ev.forced and user_cfg and not user_set and not ev.fallback_reason:
            b.set("attention.model_required", True, ev, "selected by the engine's model config, not by the user")
            return
    b.set("attention.model_required", False, None, "chosen among several backends")


def _hybrid_prefix_caching(b: ProfileBuilder, evs: Sequence[EventBase]) -> None:
    """hybrid.prefix_caching_disabled from the engine-config dump: a hybrid model whose effective config says
    `enable_prefix_caching=False` while the user's arguments did not turn it off."""
    if not b.value("hybrid.is_hybrid") or "hybrid.prefix_caching_disabled" in b.facts:
        return
    user_off = any(
        isinstance(e, StartupConfig)
        and e.origin in ("non-default args", "command line")
        and e.config.get("enable_prefix_caching") in (False, "False")
        for e in evs
    )
    if user_off:
        return
    for ev in evs:
        if (
            isinstance(ev, StartupConfig)
            and ev.origin == "engine init"
            and ev.config.get("enable_prefix_caching") in (False, "False")
        ):
            b.set("hybrid.prefix_caching_disabled", True, ev, "engine config: enable_prefix_caching=False")
            return


def _set_median(
    b: ProfileBuilder, name: str, values: Series, first: SchedulerStats | None, digits: int, intervals: str
) -> None:
    """`name` is the median of a value read in some stats intervals, `first` the first of them."""
    if values and first is not None:
        b.set(name, round(statistics.median(values), digits), first, f"{values.seen} {intervals}")


def _kv_free_request_slots(b: ProfileBuilder, served: Served) -> None:
    """kv.free_request_slots: in intervals with requests waiting, how many more requests of the running ones'
    average KV footprint the free part of the cache holds, (1 - usage) x running / usage (median). Below 1 a
    waiting request does not fit: the queue is KV-bound, whatever the usage percentage."""
    _set_median(b, "kv.free_request_slots", served.slots, served.first_slots, 3, "intervals with a queue")


def _waiting_at_cap(b: ProfileBuilder, served: Served) -> None:
    """sched.waiting_at_cap_share: the share of stats intervals in which requests wait while the running count is
    at the scheduler's cap (max_num_seqs / max_running_requests). The scheduler admits a waiting request only below
    the cap, so in those intervals the cap is what holds it back (unless the KV cache is full too)."""
    cap = b.value("sched.max_num_seqs")
    if not isinstance(cap, int | float) or isinstance(cap, bool) or cap <= 0 or not served.counted:
        return
    at_cap = [(n, ev) for running, (n, ev) in served.waiting_by_running.items() if running >= cap]
    count = sum(n for n, _ in at_cap)
    first = min((ev for _, ev in at_cap), key=lambda e: (e.source, e.line), default=None)
    b.set(
        "sched.waiting_at_cap_share",
        round(count / served.counted, 4),
        first,
        f"{count} of {served.counted} intervals with requests waiting at the cap of {cap:g}",
    )


def _queue_share(b: ProfileBuilder, served: Served) -> None:
    """sched.queue_share: in the intervals with requests waiting, waiting / (running + waiting) (median). Admitting
    the whole queue grows the batch by at most this share, and decode throughput grows at most in proportion (a
    decode step costs about the same at a slightly larger batch while memory-bound), so a few requests waiting
    beside hundreds running is admission under load, not a limit that costs throughput (docs/rules.md,
    "Thresholds and their sources")."""
    _set_median(b, "sched.queue_share", served.queue_shares, served.first_queue, 4, "intervals with requests waiting")


def _queue_draining(b: ProfileBuilder, served: Served) -> None:
    """sched.queue_draining: in every interval with a queue the engine spends its steps on prefill (prompt
    throughput above generation throughput), and from each such interval to the next the queue falls while the
    running batch grows: a burst of requests admitted as fast as their prompts are prefilled. No limit on the batch
    holds those requests (a cap or a full KV cache keeps the running count flat); each waits for the prefill of
    the ones before it, which a larger batch does not make faster."""
    queue = served.queue
    if queue.count < 2 or served.first_queue is None:
        return
    b.set("sched.queue_draining", queue.holds, served.first_queue, f"{queue.count} intervals with requests waiting")


def _startup_incomplete(b: ProfileBuilder, evs: Sequence[EventBase], served: Served) -> None:
    """startup.incomplete: the log holds the beginning of a start (the version banner or the configuration
    dump, so it is not an excerpt from the middle), the start got as far as loading weights or compiling,
    and the log ends before any line that shows the engine ready or
    serving, with no failure line: the process died silently (OOM killer) or the log was cut."""
    engine = REGISTRY.get(str(b.value("engine")))
    if not evs or engine is None or not engine.serving:
        return
    if not any(isinstance(e, StartupConfig | EngineVersion) for e in evs):
        return  # an excerpt: where the start began is not in the log
    started: CompileTime | None = None  # the last startup line
    for e in evs:
        if isinstance(e, CompileTime):
            started = e
    if started is None:
        return  # the start did not get as far as loading or compiling: too short to tell a cut paste from a death
    ready = bool(served.sources) or any(
        (isinstance(e, EngineFailure) and e.kind not in _NOT_FAILURES)  # a wait is the start still running
        or (isinstance(e, CompileTime) and e.kind in _READY_KINDS)
        or (isinstance(e, KVCache) and e.max_concurrency is not None)
        or (isinstance(e, CudaGraph) and e.kind == "capture_finished")  # the last step before serving
        or isinstance(e, BenchmarkResult)  # an offline run's result: it ran (no serving line to print)
        for e in evs
    )
    b.set("startup.incomplete", not ready, started, "the last startup line" if not ready else "ready lines")


def _nccl_test_unfinished(b: ProfileBuilder, evs: Sequence[EventBase]) -> None:
    """nccl.test_unfinished: an nccl-tests run's first line is in the log and neither its summary (`# Avg bus
    bandwidth`) nor a failure line follows, nor a row of the last size its parameters sweep: the collective stopped
    progressing (a hang), or the log was cut. nccl-tests prints a row once a size's iterations complete, so a hang
    stops the table before a size; a table that reaches the last size and lacks only the summary is an excerpt."""
    last_start: NcclInfo | None = None
    finished = rows = False
    for e in evs:
        if isinstance(e, NcclInfo) and e.kind == "test-start":
            last_start, finished, rows = e, False, False
        elif last_start is not None and e.source == last_start.source and e.line > last_start.line:
            done = isinstance(e, NcclInfo) and e.kind == "test-done"
            failed = isinstance(e, EngineFailure) and e.kind not in _NOT_FAILURES
            finished = finished or done or failed
            rows = rows or (isinstance(e, NcclInfo) and e.kind == "test-row")
    if last_start is None:
        return
    if not finished and rows and b.value("nccl.test_rows_complete") is True:
        b.set("nccl.test_unfinished", False, last_start, "the table's last row is the run's largest size")
        return
    b.set("nccl.test_unfinished", not finished, last_start, "the test's first line")


def _gpu_signals(b: ProfileBuilder, evs: Sequence[EventBase]) -> None:
    """platform.gpu_signals: on a CPU or undetected platform, how many kinds of line show that a GPU was meant
    to be used: GPUs listed (nvidia-smi, collect_env), NCCL channels, GPU topology, a GPU-platform line, or
    vLLM's UnspecifiedPlatform (a GPU build that found no GPU; a CPU build detects `cpu`)."""
    platform = b.value("platform")
    if platform not in ("cpu", "unspecified"):
        return
    kinds: set[str] = set()
    first: EventBase | None = None
    for ev in evs:
        kind = None
        if isinstance(ev, GpuInfo | GpuTopology | GpuP2P):
            kind = "gpu listing"
        elif isinstance(ev, NcclTransport):
            kind = "nccl"
        elif isinstance(ev, Platform) and (ev.gpu_name or (ev.platform or "").lower() in ("cuda", "rocm")):
            kind = "gpu platform line"
        elif isinstance(ev, Platform) and (ev.platform or "").lower() == "unspecified":
            kind = "unspecified platform"
        if kind is not None:
            kinds.add(kind)
            first = first or ev
    b.set("platform.gpu_signals", float(len(kinds)), first, ", ".join(sorted(kinds)) or "no GPU in the input")


def _suggested_graph_batch(b: ProfileBuilder, served: Served) -> None:
    """cuda_graphs.suggested_max_batch (SGLang): the largest running batch seen, rounded up to the capture step."""
    if b.value("engine") != "sglang":
        return
    peak = served.peak_running
    if peak:
        step = _SGLANG_CAPTURE_STEP
        b.set("cuda_graphs.suggested_max_batch", float(-(-peak // step) * step), None, f"largest #running-req {peak}")


def verify_cost(k: int, batch: float) -> float:
    """How much more a target forward over batch x (k + 1) tokens costs than one over batch tokens: 1 while the
    step stays memory-bound (below the ridge point), growing with the verified tokens past it."""
    return speculation.verify_cost_ridge(k, batch, _RIDGE_TOKENS)


def step_cost(k: int, batch: float, method: str = "unknown") -> float:
    """One speculative step with k drafted tokens, in plain decode steps, at `batch` running requests."""
    kind = speculation.drafter_kind(method)
    return speculation.hardware_free_cost(kind, speculation.default_draft_cost(method), batch)(k)


# Without a published acceptance for the method: a draft acceptance rate under this says almost no drafted token is
# accepted, so the drafter, not the choice of k, is what loses (the low-acceptance rule's own threshold).
_NOTHING_ACCEPTED_RATE = 0.15


def _acceptance_is_root(b: ProfileBuilder) -> None:
    """spec.acceptance_is_root: which side of the break-even a speculation that loses is on. Almost no drafted token
    accepted, or a drafter at the method's published acceptance would break even at this k: the low acceptance is
    the root and the net loss its consequence. Else the cost of k (or of the method on this deployment) is."""
    even = b.value("spec.break_even")
    if not isinstance(even, float):
        return
    rate = _acceptance_rate(b)
    if rate is not None and rate < _NOTHING_ACCEPTED_RATE:
        b.set("spec.acceptance_is_root", True, None, f"draft acceptance {rate:.0%}: almost nothing accepted")
        return
    typical = b.value("spec.typical_acceptance")
    if isinstance(typical, float):
        b.set(
            "spec.acceptance_is_root",
            typical >= even,
            None,
            f"published acceptance {typical:.2f}, break-even {even:.2f}",
        )


def _acceptance_rate(b: ProfileBuilder) -> float | None:
    """How often the drafter's first token is accepted where per-position acceptance is known (a mean over k
    positions falls with k whatever the drafter); else the mean share of drafted tokens accepted: the engine's rate
    where it prints one, else (L - 1) / k."""
    positions = b.value("spec.position_acceptance")
    if isinstance(positions, list) and positions and isinstance(positions[0], int | float):
        return float(positions[0])
    rates = b.value("spec.acceptance_rate")
    if isinstance(rates, Series) and rates.seen:
        return rates.total / rates.seen
    lengths, k = b.value("spec.acceptance_length"), b.value("spec.num_tokens")
    if isinstance(lengths, Series) and lengths.seen and isinstance(k, float) and k >= 1:
        return max(0.0, lengths.total / lengths.seen - 1) / k
    return None


def _spec_best_k(b: ProfileBuilder, served: Served) -> None:
    """spec.verify_cost and spec.step_cost at the configured k and the median running batch of the stats lines (1
    when none), and spec.best_k: from per-position acceptance p_i (the share of steps whose draft i was accepted),
    tokens per step E(k) = 1 + p_1 + ... + p_k; the k (0 = no speculation) with the best E(k) / step_cost(k)."""
    running = served.running
    batch = statistics.median(running) if running else 1.0
    method = str(b.value("spec.method") or "unknown")
    kind = speculation.drafter_kind(method)
    ratio = speculation.default_draft_cost(method)
    cost = speculation.hardware_free_cost(kind, ratio, batch)
    per_token = speculation.overhead_plain_steps(kind, ratio)
    expected_cost = speculation.with_overhead(cost, per_token)  # the bytes plus the per-step overhead
    k_conf = b.value("spec.num_tokens")
    if isinstance(k_conf, float) and k_conf >= 1:
        b.set(
            "spec.verify_cost",
            round(verify_cost(int(k_conf), batch), 3),
            None,
            f"k={int(k_conf)}, median batch {batch:g}, ridge {_RIDGE_TOKENS:g} tokens",
        )
        b.set(
            "spec.step_cost",
            round(cost(int(k_conf)), 3),
            None,
            f"k={int(k_conf)} {method} ({kind} drafter), median batch {batch:g}",
        )
        b.set(
            "spec.break_even",
            round(speculation.break_even(cost, int(k_conf), per_token), 3),
            None,
            f"k={int(k_conf)} {method} ({kind} drafter), median batch {batch:g}: step cost + "
            f"{per_token:g} a drafted token",
        )
    if b.value("spec.acceptance_length") is not None and b.value("spec.enabled") is not False:
        k_known = int(k_conf) if isinstance(k_conf, float) and k_conf >= 1 else None
        named = b.value("spec.method")
        typical = speculation.typical_acceptance(
            str(named) if named else None, k_known, str(b.value("model.architecture") or "")
        )
        if typical is not None:
            b.set("spec.typical_acceptance", typical[0], None, typical[1])
        _acceptance_is_root(b)
    positions = b.value("spec.position_acceptance")
    if not isinstance(positions, list) or not positions:
        return
    top = speculation.best(speculation.sweep([float(r) for r in positions], expected_cost))
    b.set("spec.best_k", float(top.k), None, f"per-position acceptance, batch {batch:g}")
    b.set("spec.best_k_speedup", round(top.speedup, 3), None, f"E(k)/step cost at k={top.k}")
