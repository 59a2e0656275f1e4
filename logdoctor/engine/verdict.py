"""The verdict: healthy, problems found, inconclusive, or not a log - never "healthy" on what was not understood.

    healthy        enough evidence was read (the deployment's configuration, with its measured throughput where the
                   log has stats lines, or an NCCL transport map), nothing material was found, and throughput -
                   where the expected bound is known - is not far below it
    problems       at least one finding scored 50 or more; counted as problems (findings that share one
                   mechanism are one: logdoctor/engine/problems.py)
    inconclusive   nothing material, but the evidence a verdict needs is missing (a serving engine's configuration,
                   all of it, or part of it where a minor finding was made); `missing` says what it is and the
                   exact flag or command that produces it
    not-a-log      no line of any known format (an empty file, README.md, random bytes): the CLI exits 2

The decision reads only the result model and the facts' names (docs/rules.md), so every renderer and the
JSON report share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from logdoctor.engine.problems import FAMILIES, problem_id
from logdoctor.engine.result import Finding, Performance, RuleOutcome, SourceReport, Verdict
from logdoctor.registry import REGISTRY

MIN_CHECKS = 1  # rules that ran and ruled their cause out; fewer and nothing was really checked
MATERIAL_SCORE = 50  # a finding at or above this makes the verdict "problems" (severity medium or high)
# measured / expected below this, with no finding to explain it, makes a run inconclusive, not healthy: healthy
# runs land at 50-90% of the roofline bound (docs/expected-performance.md, "Checks against measurements")
UNEXPLAINED_SLOWNESS = 0.5

# Evidence a verdict needs, by the facts that carry it (any one of the names is enough), and how to get it.
_SERVING_EVIDENCE: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "configuration",
        ("parallel.tp", "spec.enabled", "cuda_graphs.enabled", "sched.max_num_seqs", "model", "quant.method"),
        "the server's start-up lines (vLLM `non-default args` / `Initializing a V1 LLM engine ... with config`, "
        "SGLang `server_args=ServerArgs(...)`): keep the log from the start of the server",
    ),
    (
        "measured throughput",
        ("throughput.generation", "sched.running", "spec.acceptance_length", "bench.output_throughput"),
        "periodic stats lines under load: vLLM prints them unless `--disable-log-stats` is set (every 10 s, "
        "`Avg generation throughput`); SGLang prints `Decode batch` lines at `--log-level info` "
        "(`--decode-log-interval 40`); or paste a `vllm bench serve` / `sglang.bench_serving` result",
    ),
)
_NCCL_EVIDENCE = (
    (
        "NCCL transports",
        ("nccl.transport", "nccl.p2p_channels", "nccl.shm_channels", "nccl.net_channels"),
        "the channel lines of `NCCL_DEBUG=INFO` (`Channel 00/0 : 0[0] -> 1[1] via P2P/IPC`); "
        "`nvidia-smi topo -m` shows the links",
    ),
)


def _members(findings: Sequence[Finding], pid: str) -> int:
    return sum(1 for f in findings if problem_id(f.cause) == pid)


def _collective(engine: str) -> bool:
    """A collective library's log (NCCL's) is judged on its own evidence, not a serving engine's."""
    spec = REGISTRY.get(engine)
    return spec is not None and spec.kind == "collective"


def missing_evidence(engine: str, facts: Mapping[str, Any]) -> list[str]:
    """What is missing for a verdict, each as 'what: how to get it'."""
    needs = _NCCL_EVIDENCE if _collective(engine) else _SERVING_EVIDENCE
    return [f"{what}: {how}" for what, names, how in needs if not any(n in facts for n in names)]


def _no_config(missing: Sequence[str]) -> bool:
    return any(m.startswith("configuration:") for m in missing)


def not_understood(sources: Iterable[SourceReport]) -> int:
    return sum(s.unrecognised for s in sources)


def decide(
    findings: Sequence[Finding],
    outcomes: Sequence[RuleOutcome],
    sources: Sequence[SourceReport],
    engine: str,
    facts: Mapping[str, Any],
    measured_over_expected: float | None = None,
    performance: Performance | None = None,
) -> Verdict:
    """`performance` (logdoctor/perf/assess.py) gives measured / expected where the bound is known, and the
    summary's `18.2 tok/s per request, expected <= 28 on 2x RTX A6000 (65%)`."""
    if performance is not None and measured_over_expected is None:
        measured_over_expected = performance.ratio
    perf = f"; {performance.summary}" if performance is not None and performance.summary else ""
    events = sum(s.events for s in sources)
    unknown_lines = not_understood(sources)
    note = f"; {unknown_lines} line(s) not understood (logdoctor parse --show-unparsed)" if unknown_lines else ""
    if events == 0 and engine == "unknown":
        return Verdict(
            healthy=False,
            kind="not-a-log",
            summary="not a log: no line of a vLLM, SGLang or NCCL format" + note,
            not_understood=unknown_lines,
        )
    serious = [f for f in findings if f.score >= MATERIAL_SCORE]
    if serious:
        top = serious[0]
        # counted as problems: findings that share one mechanism (engine/problems.py) are one
        found = list(dict.fromkeys(problem_id(f.cause) for f in serious))
        pid = problem_id(top.cause)
        title = FAMILIES[top.cause][1] if pid != top.cause and _members(serious, pid) > 1 else top.title
        return Verdict(
            healthy=False,
            kind="problems",
            summary=f"{len(found)} likely problem(s); top: {pid} (score {top.score}) - {title}" + perf + note,
            not_understood=unknown_lines,
        )
    passed = sum(1 for o in outcomes if o.outcome == "ruled_out")
    minor = f", {len(findings)} minor finding(s)" if findings else ""
    needed = len(_NCCL_EVIDENCE if _collective(engine) else _SERVING_EVIDENCE)
    missing = missing_evidence(engine, facts)
    unexplained = measured_over_expected is not None and measured_over_expected < UNEXPLAINED_SLOWNESS
    if unexplained:
        missing.append(
            f"an explanation: throughput is {measured_over_expected:.0%} of what this hardware should deliver and "
            "no rule found why (see the expected-performance working)"
        )
    what = ", ".join(m.split(":")[0] for m in missing)
    # Inconclusive: none of the evidence a verdict stands on was read, too few checks could run, the run is far
    # slower than the hardware allows with nothing to explain it, a minor finding stands where part of the
    # evidence is missing (the part not read - a log cut before its stats lines, or pasted without its start-up -
    # is where such a finding would be confirmed or ruled out), or a serving engine's configuration was not read:
    # most causes (eager decode, custom all-reduce, attention backend, quantization kernel, speculation set-up)
    # are read from the start-up lines, so a stats excerpt or a log cut after its start cannot rule them out.
    # A start-up with nothing found and no stats lines is healthy; what is missing is still listed.
    partial_with_finding = bool(missing) and bool(findings)
    if unexplained or len(missing) >= needed or passed < MIN_CHECKS or partial_with_finding or _no_config(missing):
        return Verdict(
            healthy=False,
            kind="inconclusive",
            summary=f"inconclusive: {passed} checks passed{minor}; missing: {what or 'checks that could run'}"
            + perf
            + note,
            missing=missing,
            not_understood=unknown_lines,
        )
    return Verdict(
        healthy=True,
        kind="healthy",
        summary=f"healthy: {passed} checks passed{minor}" + (f" (not read: {what})" if missing else "") + perf + note,
        missing=missing,
        not_understood=unknown_lines,
    )
