"""nccl-tests runs: each run's large-message bus bandwidth, the settings it ran with, and whether its table is whole.

    NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 1G -e 10G -f 2 -g 4     (the second of two runs)
      1073741824  268435456  float  sum  -1  309766  3.47  5.20  0  ...    -> nccl.test_busbw = 5.2,
    after a first run at 234.7 GB/s                                        -> nccl.test_busbw_ratio = 0.022,
                                                                              nccl.test_slow_run_p2p_off = True

A run is the stretch from its command, parameter line or table header to its summary: the NCCL_* settings, the
transports NCCL printed and the hosts of its rank lines between the previous run and its first row are its own.
Bus bandwidth is what nccl-tests normalises to the hardware's link speed (nccl-tests doc/PERFORMANCE.md); a run's
figure is the best busbw of its rows of at least 32 MiB (nccl-tests' default size): smaller messages are bound
by latency, not by the link.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logdoctor.events import EventBase, NcclEnv, NcclInfo, NcclTransport
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

LARGE_MESSAGE_BYTES = 32 * 1024**2


@dataclass
class _Run:
    sizes: dict[str, int] = field(default_factory=dict)  # min_bytes, max_bytes, step_factor / step_bytes
    p2p_off: EventBase | None = None  # the first line that takes P2P away
    hosts: set[str] = field(default_factory=set)
    rows: list[NcclInfo] = field(default_factory=list)
    peak: NcclInfo | None = None
    peak_busbw: float = 0.0
    done: bool = False

    def started(self) -> bool:
        return bool(self.rows) or self.done


def _p2p_off(ev: EventBase) -> bool:
    if isinstance(ev, NcclEnv):
        value = ev.value.strip().upper()
        return (ev.name == "NCCL_P2P_DISABLE" and value not in ("0", "")) or (
            ev.name == "NCCL_P2P_LEVEL" and value in ("LOC", "0")
        )
    if isinstance(ev, NcclInfo):
        return ev.kind == "p2p-disabled"
    return isinstance(ev, NcclTransport) and ev.transport == "SHM"


def _row_busbw(row: NcclInfo) -> float:
    values = [row.values.get("busbw"), row.values.get("ip_busbw")]
    return max((float(v) for v in values if isinstance(v, int | float)), default=0.0)


def _sweep_complete(run: _Run) -> bool | None:
    """Whether the run's last row is the last size its parameters sweep (common.cu: size from minBytes to maxBytes,
    times stepFactor or plus stepBytes); None when the parameters are not in the log."""
    if not run.rows or "max_bytes" not in run.sizes:
        return None
    last = run.rows[-1].values.get("size")
    if not isinstance(last, int):
        return None
    largest = run.sizes["max_bytes"]
    factor = run.sizes.get("step_factor", 1)
    following = last * factor if factor > 1 else last + run.sizes.get("step_bytes", 1024**2)
    # the printed size is at most the loop's (rounded down to whole elements a rank for some collectives), so a
    # next size past maxBytes from the printed one is past it from the loop's too
    return following > largest


class NcclTests(Combiner):
    reads = (NcclInfo, NcclEnv, NcclTransport)
    produces = (
        "nccl.test_busbw",
        "nccl.test_busbw_ratio",
        "nccl.test_slow_run_p2p_off",
        "nccl.test_rows_complete",
        "nccl.test_hosts",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.runs: list[_Run] = []
        self.next = _Run()  # what the lines since the last run say about the next one

    def _current(self) -> _Run | None:
        """The run printing rows, if one is."""
        return self.runs[-1] if self.runs and not self.runs[-1].done else None

    def add(self, ev: EventBase) -> None:
        kind = ev.kind if isinstance(ev, NcclInfo) else None
        current = self._current()
        if kind == "test-row":
            assert isinstance(ev, NcclInfo)
            self._row(ev)
        elif kind == "test-done":
            if current is not None:
                current.done = True
        elif kind in ("test-start", "test-sizes", "test-rank") or isinstance(ev, NcclEnv):
            # a new command, parameter line or setting after rows: that run is over, these are the next one's
            if current is not None:
                current.done = True
            run = self.next
            if _p2p_off(ev) and run.p2p_off is None:
                run.p2p_off = ev
            if kind == "test-rank" and isinstance(ev, NcclInfo) and isinstance(ev.values.get("host"), str):
                run.hosts.add(str(ev.values["host"]))
            elif isinstance(ev, NcclInfo) and kind != "test-rank":
                self._sizes(run, ev)
        else:
            # NCCL connects peers lazily, so its channel lines may come between a run's rows: they are that run's
            run = current if current is not None else self.next
            if isinstance(ev, NcclTransport) and ev.process is not None and ev.process.host:
                run.hosts.add(ev.process.host)
            if _p2p_off(ev) and run.p2p_off is None:
                run.p2p_off = ev

    @staticmethod
    def _sizes(run: _Run, ev: NcclInfo) -> None:
        values = {k: v for k, v in ev.values.items() if isinstance(v, int) and not isinstance(v, bool)}
        step = values.pop("step", None)
        if step is not None:
            values["step_bytes" if ev.values.get("step_kind") == "bytes" else "step_factor"] = step
        run.sizes.update(values)

    def _row(self, ev: NcclInfo) -> None:
        current = self._current()
        if current is None:
            current, self.next = self.next, _Run()
            self.runs.append(current)
        current.rows.append(ev)
        size = ev.values.get("size")
        busbw = _row_busbw(ev)
        if isinstance(size, int) and size >= LARGE_MESSAGE_BYTES and busbw > current.peak_busbw:
            current.peak, current.peak_busbw = ev, busbw

    def finish(self) -> None:
        b = self.b
        if not self.runs:
            return
        last = self.runs[-1]
        complete = _sweep_complete(last)
        if complete is not None:
            b.set("nccl.test_rows_complete", complete, last.rows[-1], "the last row against the sizes of the run")
        hosts = set().union(*(run.hosts for run in self.runs))
        if hosts:
            b.set("nccl.test_hosts", float(len(hosts)), None, "nccl-tests rank lines")
        measured = [run for run in self.runs if run.peak is not None]
        if not measured:
            return
        slow = min(measured, key=lambda run: run.peak_busbw)
        fast = max(measured, key=lambda run: run.peak_busbw)
        b.set("nccl.test_busbw", slow.peak_busbw, slow.peak, "the slowest run's best row of 32 MiB or more")
        if slow is fast or fast.peak is None:
            return
        b.set("nccl.test_busbw_ratio", slow.peak_busbw / fast.peak_busbw, slow.peak, "slowest / fastest run")
        b.add_ref("nccl.test_busbw_ratio", fast.peak)
        differs = slow.p2p_off is not None and fast.p2p_off is None
        b.set("nccl.test_slow_run_p2p_off", differs, slow.p2p_off or slow.peak, "the runs' P2P settings")
