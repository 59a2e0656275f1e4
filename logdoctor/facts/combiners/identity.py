"""Which engine wrote the logs, its version, and the served model from the version line.

    EngineVersion(engine="vllm", version="0.20.1")  -> engine = vllm, engine.version = 0.20.1

The engine is the registered engine most events name, a serving engine before a collective library
(a vLLM log full of NCCL lines is a vLLM deployment); `--engine` and a detected version win.
"""

from __future__ import annotations

from logdoctor.events import EngineVersion, EventBase
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.registry import REGISTRY


class Identity(Combiner):
    reads = (EventBase,)
    produces = ("engine", "engine.version", "model", "nccl.version")

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.serving = set(REGISTRY.names("serving"))
        self.voters = self.serving | set(REGISTRY.names("collective"))
        self.votes: dict[str, int] = {}
        self.versions: dict[str, str] = {}

    def add(self, ev: EventBase) -> None:
        engine = ev.engine
        if engine in self.voters:
            self.votes[engine] = self.votes.get(engine, 0) + 1
        if isinstance(ev, EngineVersion):
            if ev.version and engine in self.serving:
                self.versions.setdefault(engine, ev.version)
            elif ev.version and engine == "nccl":  # the NCCL a serving engine loaded (known NCCL issues)
                self.b.set("nccl.version", ev.version, ev, ev.origin, keep_first=True)
            if ev.model:
                self.b.set("model", ev.model, ev, ev.origin, keep_first=True)

    def finish(self) -> None:
        votes = self.votes
        # Detection says "unknown" when no header, process name or version line names an engine (a paste
        # stripped of its prefixes); the engine whose line types read the events is then the evidence.
        known = self.b.engine if self.b.engine not in (None, "unknown") else None
        detected = known or (max(votes, key=lambda k: (k in self.serving, votes[k])) if votes else "unknown")
        self.b.set("engine", detected, None, "detection")
        found_version = self.b.version or self.versions.get(detected)
        if found_version:
            self.b.set("engine.version", found_version, None, "version line")
