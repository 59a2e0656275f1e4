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

_HEADER_ENGINE = {
    "vllm": "vllm",
    "vllm-old": "vllm",
    "sglang": "sglang",
    "sglang-plain": "sglang",
    "nccl": "nccl",
}


@dataclass
class Detection:
    """What engine wrote a source and why we think so."""

    forced: str | None = None
    header_counts: dict[str, int] = field(default_factory=dict)
    process_names: dict[str, int] = field(default_factory=dict)
    first_line: dict[str, int] = field(default_factory=dict)
    versions: list[tuple[str, str, int]] = field(default_factory=list)  # (engine, version, line)

    def observe_line(self, line: LogLine) -> None:
        header, process = line.header, line.process
        if header:
            self.header_counts[header] = self.header_counts.get(header, 0) + 1
            if header not in self.first_line:
                self.first_line[header] = line.number
        if process is not None and process.name:
            base = process.name.split()[0]
            self.process_names[base] = self.process_names.get(base, 0) + 1

    def observe_event(self, event: EventBase) -> None:
        if isinstance(event, EngineVersion) and event.version and event.engine in ("vllm", "sglang", "nccl"):
            self.versions.append((event.engine, event.version, event.line))

    @property
    def engine(self) -> str:
        if self.forced:
            return self.forced
        serving = [(e, v, n) for e, v, n in self.versions if e in ("vllm", "sglang")]
        if serving:
            return serving[0][0]
        votes: dict[str, int] = {}
        for header, count in self.header_counts.items():
            engine = _HEADER_ENGINE.get(header)
            if engine:
                votes[engine] = votes.get(engine, 0) + count
        serving_votes = {k: v for k, v in votes.items() if k != "nccl"}
        if serving_votes:
            return max(serving_votes, key=lambda k: serving_votes[k])
        if votes:
            return "nccl"
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
        if self.engine != "vllm":
            return None
        names = self.process_names
        if self.header_counts.get("vllm-old") and not self.header_counts.get("vllm"):
            return "<=0.7.3"
        if any(n.startswith("EngineCore_DP") for n in names) or any(n.startswith("Worker_") for n in names):
            if "EngineCore" in names:
                return ">=0.18"
            return ">=0.10.2"
        if "APIServer" in names:
            return ">=0.10.1"
        if any(n.startswith("VllmWorker") for n in names):
            return "0.7-0.10"
        if self.header_counts.get("vllm"):
            return ">=0.8.0"
        return None

    def reasons(self) -> list[str]:
        out: list[str] = []
        if self.forced:
            out.append(f"engine forced to {self.forced} by --engine")
        for engine, version, line in self.versions:
            out.append(f"line {line}: {engine} version {version} printed")
        labels = {
            "vllm": "vLLM header `LEVEL MM-DD HH:MM:SS [file.py:N]` (vLLM >= 0.8)",
            "vllm-old": "vLLM header `LEVEL MM-DD HH:MM:SS file.py:N]` (vLLM <= 0.7.3)",
            "sglang": "SGLang header `[YYYY-MM-DD HH:MM:SS TPn]`",
            "sglang-plain": "SGLang plain header",
            "nccl": "NCCL `host:pid:tid [dev] NCCL INFO` lines",
            "uvicorn": "uvicorn `INFO:     ...` lines (either engine)",
            "c10d": "PyTorch c10d `[rankN]:[E ...]` lines",
            "plain": "Python logging header `YYYY-MM-DD HH:MM:SS LEVEL`",
        }
        for header, count in sorted(self.header_counts.items(), key=lambda kv: -kv[1]):
            out.append(
                f"{count} line(s) with {labels.get(header, header)}, first at line {self.first_line.get(header)}"
            )
        if self.process_names:
            names = ", ".join(f"{n} x{c}" for n, c in sorted(self.process_names.items(), key=lambda kv: -kv[1])[:6])
            out.append(f"process prefixes: {names}")
        inferred = self.inferred_version_range()
        if inferred and not any(e == "vllm" for e, _, _ in self.versions):
            out.append(f"no version line: header shape and process names date it to vLLM {inferred}")
        out.append(f"=> engine {self.engine}" + (f", version {self.version}" if self.version else ""))
        return out
