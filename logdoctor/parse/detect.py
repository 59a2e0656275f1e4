"""Engine and version detection, with the reasons kept so `--explain-detection` can show them.

Evidence, strongest first: an explicit version (`vLLM API server version 0.7.3`, the engine-init
line, `sglang==0.5.6`), then the header shape and process names, which date a vLLM log to a range
of releases (catalogue §14):

    INFO 10-16 19:05:47 metrics.py:367] ...           no `[` before the file         -> vLLM <= 0.7.3
    INFO 05-09 11:14:36 [utils.py:233] ...            bracketed file                 -> vLLM >= 0.8.0
    (APIServer pid=1) INFO ...                        APIServer prefix               -> vLLM >= 0.10.1
    (EngineCore_DP0 pid=7) INFO ...                   EngineCore_DP0                 -> vLLM 0.10.2 - 0.17
    (EngineCore pid=7) INFO ...                       EngineCore without _DP         -> vLLM >= 0.18 (or <= 0.10.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from logdoctor.events import EngineVersion, EventBase
from logdoctor.parse.envelope import LogLine
from logdoctor.registry import REGISTRY

# Envelope headers that any engine may print (the engines' own are in their specs).
_SHARED_HEADERS = {
    "uvicorn": "uvicorn `INFO:     ...` lines (either engine)",
    "c10d": "PyTorch c10d `[rankN]:[E ...]` lines",
    "plain": "Python logging header `YYYY-MM-DD HH:MM:SS LEVEL`",
}


# vLLM's process names (`(APIServer pid=1)`, `(EngineCore_DP0 pid=7)`, `(Worker_TP1 pid=9)`, V0's
# `(VllmWorkerProcess pid=9)`, `(RayWorkerWrapper pid=9)`): a prefix no other program prints.
_VLLM_PREFIX_ROLES = frozenset({"APIServer", "EngineCore"})
_VLLM_PREFIX_NAMES = ("Worker_", "VllmWorker", "RayWorkerWrapper")


@dataclass
class Detection:
    """What engine wrote a source and why we think so."""

    forced: str | None = None
    header_counts: dict[str, int] = field(default_factory=dict)
    process_names: dict[str, int] = field(default_factory=dict)
    first_line: dict[str, int] = field(default_factory=dict)
    versions: list[tuple[str, str, int]] = field(default_factory=list)  # (engine, version, line)
    # Engines named without a version (a Prometheus scrape's `vllm:` families): (engine, origin, line)
    named: list[tuple[str, str, int]] = field(default_factory=list)

    def merge(self, other: Detection) -> None:
        """Add what `other` saw after what this one saw (the next range of a source parsed apart)."""
        for header, count in other.header_counts.items():
            self.header_counts[header] = self.header_counts.get(header, 0) + count
        for name, count in other.process_names.items():
            self.process_names[name] = self.process_names.get(name, 0) + count
        for header, line in other.first_line.items():
            self.first_line.setdefault(header, line)
        self.versions.extend(other.versions)
        if not self.named:
            self.named.extend(other.named)

    def after(self, before: Detection) -> Detection:
        """This detection of a range's lines as it would be had `before` (the lines ahead of the range) been seen
        first: what the engine of a line without an engine of its own is decided by."""
        whole = Detection(forced=self.forced)
        whole.merge(before)
        whole.merge(self)
        return whole

    def observe_line(self, line: LogLine) -> None:
        header, process = line.header, line.process
        if header:
            self.header_counts[header] = self.header_counts.get(header, 0) + 1
            if header not in self.first_line:
                self.first_line[header] = line.number
        if process is not None and process.name:
            base = process.name.split()[0]
            self.process_names[base] = self.process_names.get(base, 0) + 1

    def observe_envelope(self, line: LogLine) -> None:
        """A line no line type's keyword selected, read for its envelope alone while no header has been seen: a
        short paste of lines no line type knows (a newer release's, an integration's) is still the engine's log
        when it carries the engine's own record header. Only the headers no other program prints count: vLLM's
        `LEVEL MM-DD HH:MM:SS [file.py:N]` and SGLang's `[YYYY-MM-DD HH:MM:SS TP0]` with its ranks; or vLLM's own
        process prefix (`(EngineCore_DP0 pid=7)`, `(Worker_TP1 pid=9)`) before a line of another format, which names
        the engine without a header shape to date it. NCCL's `host:pid:tid [dev] NCCL INFO` is its own too (a trace
        that stops in its set-up holds no line a line type reads)."""
        header, process = line.header, line.process
        if (
            header in ("vllm", "vllm-old")
            or (header == "sglang" and process is not None and process.role != "Main")
            or REGISTRY.kind(REGISTRY.header_engine(header) or "") == "collective"
        ):
            self.observe_line(line)
        elif (
            header is None
            and process is not None
            and process.pid is not None
            and (process.role in _VLLM_PREFIX_ROLES or (process.name or "").startswith(_VLLM_PREFIX_NAMES))
            and not self.named
        ):
            # a line an integration (LMCache, a KV connector) printed in a vLLM process: `(EngineCore_DP0 pid=7) ...`
            self.observe_line(line)
            self.named.append(("vllm", "process prefix", line.number))

    def observe_event(self, event: EventBase) -> None:
        if isinstance(event, EngineVersion) and _is_engine(event.engine):
            if event.version:
                self.versions.append((event.engine, event.version, event.line))
            elif not self.named:
                self.named.append((event.engine, event.origin, event.line))

    @property
    def engine(self) -> str:
        if self.forced:
            return self.forced
        serving_names = REGISTRY.names("serving")
        serving = [(e, v, n) for e, v, n in self.versions if e in serving_names]
        if serving:
            return serving[0][0]
        votes: dict[str, int] = {}
        for header, count in self.header_counts.items():
            engine = REGISTRY.header_engine(header)
            if engine:
                votes[engine] = votes.get(engine, 0) + count
        serving_votes = {k: v for k, v in votes.items() if k in serving_names}
        if serving_votes:
            return max(serving_votes, key=lambda k: serving_votes[k])
        named = [e for e, _, _ in self.named if e in serving_names]
        if named:
            return named[0]
        if votes:
            return max(votes, key=lambda k: votes[k])
        return "unknown"

    @property
    def version(self) -> str | None:
        engine = self.engine
        for e, v, _ in self.versions:
            if e == engine:
                return v
        return self.inferred_version_range()

    def inferred_version_range(self) -> str | None:
        """A version range from header shapes and process names, when no version line was seen."""
        spec = REGISTRY.get(self.engine)
        if spec is None or spec.infer_version is None:
            return None
        return spec.infer_version(self)

    def reasons(self) -> list[str]:
        out: list[str] = []
        if self.forced:
            out.append(f"engine forced to {self.forced} by --engine")
        for engine, version, line in self.versions:
            out.append(f"line {line}: {engine} version {version} printed")
        for engine, origin, line in self.named:
            out.append(f"line {line}: {engine} named by its {origin} (no version)")
        labels = {**_SHARED_HEADERS, **REGISTRY.header_labels()}
        for header, count in sorted(self.header_counts.items(), key=lambda kv: -kv[1]):
            out.append(
                f"{count} line(s) with {labels.get(header, header)}, first at line {self.first_line.get(header)}"
            )
        if self.process_names:
            names = ", ".join(f"{n} x{c}" for n, c in sorted(self.process_names.items(), key=lambda kv: -kv[1])[:6])
            out.append(f"process prefixes: {names}")
        inferred = self.inferred_version_range()
        if inferred and not any(e == self.engine for e, _, _ in self.versions):
            label = REGISTRY.label(self.engine)
            out.append(f"no version line: header shape and process names date it to {label} {inferred}")
        out.append(f"=> engine {self.engine}" + (f", version {self.version}" if self.version else ""))
        return out


def _is_engine(name: str) -> bool:
    kind = REGISTRY.kind(name)
    return kind is not None and kind != "input"
