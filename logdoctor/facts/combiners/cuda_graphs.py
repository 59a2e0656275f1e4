"""CUDA graphs for the target and the drafter: captured, downgraded, capped, or eager.

CudaGraph(kind="mode_downgrade", mode_to="NONE") (later)  -> cuda_graphs.enabled = False (wins over config)
SGLang `Decode batch ... cuda graph: False` x 12 of 40    -> cuda_graphs.eager_share = 0.3
"""

from __future__ import annotations

from logdoctor.events import CudaGraph, EventBase, SchedulerStats
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.values import Fact, ref


class CudaGraphs(Combiner):
    reads = (CudaGraph, SchedulerStats)
    produces = (
        "cuda_graphs.enabled",
        "cuda_graphs.mode",
        "cuda_graphs.max_batch",
        "cuda_graphs.drafter",
        "cuda_graphs.eager_share",
        "cuda_graphs.downgraded",
        "compile.graph_capture_seconds",
        "hybrid.cudagraph_capped",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.decode_lines = 0
        self.eager_decode_lines = 0
        self.eager_examples: list[SchedulerStats] = []  # evidence: the first Decode batch lines without graphs

    def add(self, ev: EventBase) -> None:
        if isinstance(ev, SchedulerStats):
            if ev.format == "sglang-decode":
                self.decode_lines += 1
                if ev.cuda_graph is False:
                    self.eager_decode_lines += 1
                    if len(self.eager_examples) < 3:
                        self.eager_examples.append(ev)
        elif isinstance(ev, CudaGraph):
            self._graph(ev)

    def _graph(self, ev: CudaGraph) -> None:
        b = self.b
        if ev.role == "drafter":
            if ev.kind in ("drafter_eager", "eager_mode", "capture_skipped", "capture_failed") or (
                ev.kind == "mode_downgrade" and (ev.mode_to or "").upper() == "NONE"
            ):
                b.set("cuda_graphs.drafter", False, ev, ev.message)
            elif ev.kind in ("capture_finished", "capture_progress", "capture_started"):
                b.set("cuda_graphs.drafter", True, ev, ev.message, keep_first=True)
            return
        if ev.kind == "drafter_eager":
            b.set("cuda_graphs.drafter", False, ev, ev.message)
        elif ev.kind in ("eager_mode", "capture_skipped", "capture_failed"):
            b.set("cuda_graphs.enabled", False, ev, ev.message)
            b.set("cuda_graphs.mode", "NONE", ev, ev.message)
        elif ev.kind == "mode_downgrade":
            b.set("cuda_graphs.downgraded", True, ev, ev.message)
            if ev.mode_to:
                b.set("cuda_graphs.mode", ev.mode_to.upper(), ev, ev.message)
                if ev.mode_to.upper() == "NONE":
                    b.set("cuda_graphs.enabled", False, ev, ev.message)
        elif ev.kind in ("capture_finished", "capture_progress"):
            if b.value("cuda_graphs.enabled") is not False:
                b.set("cuda_graphs.enabled", True, ev, ev.message)
            if ev.seconds is not None and ev.kind == "capture_finished":
                b.set("compile.graph_capture_seconds", ev.seconds, ev, ev.message, keep_first=True)
        elif ev.kind == "capture_capped":
            b.set("hybrid.cudagraph_capped", True, ev, ev.message)
            if ev.max_batch_size is not None:
                b.set("cuda_graphs.max_batch", float(ev.max_batch_size), ev, ev.message)
            if ev.max_batch_size == 0:
                b.set("cuda_graphs.enabled", False, ev, ev.message)
        if ev.kind == "capture_sizes" and ev.max_batch_size is not None:
            b.set("cuda_graphs.max_batch", float(ev.max_batch_size), ev, ev.message)
            if b.value("cuda_graphs.enabled") is None:
                b.set("cuda_graphs.enabled", True, ev, ev.message)

    def finish(self) -> None:
        b, lines, eager = self.b, self.decode_lines, self.eager_decode_lines
        if not lines:
            return
        b.put(
            "cuda_graphs.eager_share",
            Fact(
                value=eager / lines,
                refs=[ref(e) for e in self.eager_examples],
                origin=f"{eager}/{lines} Decode batch lines",
            ),
        )
        if eager == lines and "cuda_graphs.enabled" not in b.facts:
            b.set(
                "cuda_graphs.enabled", False, self.eager_examples[0], "every Decode batch line says cuda graph: False"
            )
