"""Check the expected-performance model against measured throughput: corpus logs and published measurements.

    .venv/bin/python bench/expected_check.py [--corpus ../shared/corpus/realworld] [--fixtures fixtures/logs]

For every log (the real-log corpus, then the fixtures): parse it with the `logdoctor diagnose` pipeline
(`parse_sources` + `profile_of`), take the GPU from the log (`gpu.name`) or else from the label file (its
`hardware:` field, then the rest of its text, comments included), build the Deployment with
`deployment_from_profile`, and print measured vs expected. Then the same for measurements published with
their hardware (the H200 microbenchmark in ../shared/h200-microbench.txt and the cited threads).

Target: healthy runs with known hardware land between 50% and 90% of the bound; problem runs lower.
A measurement above the bound (ratio > 1) is a miss of the model or of its inputs and is printed as such.
Results and their discussion: docs/expected-performance.md. No constant here is fitted to a log.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from logdoctor.engine.result import Finding
from logdoctor.engine.rules import LoadedRule, load_rules
from logdoctor.facts import Profile
from logdoctor.perf import effects
from logdoctor.perf.adapter import deployment_from_profile
from logdoctor.perf.assess import which_bound
from logdoctor.perf.hardware import HardwareTable, load_hardware, normalise
from logdoctor.perf.model import Deployment, expected
from logdoctor.perf.options import PerfOptions
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources, profile_of

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "realworld"
DEFAULT_FIXTURES = ROOT / "fixtures" / "logs"


# The story fixtures' hardware, as README.md states it ("TP=2 over two RTX A6000 in LXC"); their labels
# say "the same GPUs" without the name.
STORY_GPU = ("story", "RTX A6000")


@dataclass
class Row:
    case: str
    label: str
    gpu: str
    detail: str
    measured: str
    bound: str
    ratio: float | None
    note: str
    constructed: bool = False
    loose: str = ""  # why the bound is far from tight (an input the bound had to take at its best)
    as_deployed: float | None = None  # measured / the bound as deployed (speculation: at the measured acceptance)
    which: str = ""  # which bound `ratio` is against (with speculation: the best of no spec, typical, as deployed)


def _label(log: Path) -> tuple[str, str]:
    """(primary cause or 'healthy', the label file's text) from `x.yaml` (corpus) or `x.expect.yaml` (fixtures)."""
    for candidate in (log.with_suffix(".yaml"), log.with_name(log.stem + ".expect.yaml")):
        if candidate.exists():
            text = candidate.read_text(encoding="utf-8")
            data = yaml.safe_load(text) or {}
            if not isinstance(data, dict):
                return "?", text
            causes = data.get("causes")
            if isinstance(causes, list) and causes:
                return str(causes[0]), text
            if data.get("healthy") is True:
                return "healthy", text
            fires = data.get("fires")
            if isinstance(fires, list) and fires and isinstance(fires[0], dict):
                return str(fires[0].get("cause") or fires[0].get("rule") or "?"), text
            return "?", text
    return "?", ""


def _gpu_in_text(table: HardwareTable, text: str) -> str | None:
    """The one table GPU the text names (a name or alias; where two overlap, the longer: `H100 NVL` is not also
    `H100`). A text that names two GPUs guesses between them ("a 48 GB card (A6000, L40S)"): None, as for a text
    that names none. A guessed GPU is no hardware to hold a run to."""
    hay = " " + normalise(text) + " "
    spans: list[tuple[int, int, str]] = []
    for gpu in table.gpus:
        for name in (gpu.name, *gpu.aliases):
            needle = " " + normalise(name) + " "
            if len(needle) <= 4:  # a word of three letters at least (L40, A10); not L4 or T4
                continue
            at = hay.find(needle)
            while at >= 0:
                spans.append((at, at + len(needle), gpu.name))
                at = hay.find(needle, at + 1)
    named = {
        gpu
        for start, end, gpu in spans
        if not any(s <= start and end <= e and (e - s) > (end - start) for s, e, _ in spans)
    }
    return named.pop() if len(named) == 1 else None


def _hardware_field(text: str) -> str:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return ""
    return str(data.get("hardware", "")) if isinstance(data, dict) else ""


def _rank(findings: list[Finding], cause: str) -> int | None:
    causes = list(dict.fromkeys(f.cause for f in findings))
    return causes.index(cause) + 1 if cause in causes else None


# Real config.json files (fixtures/inputs/modelconfig/README.md), given beside a log whose served model is one of
# them (its name without a packaging suffix: Qwen3-30B-A3B-Instruct-2507 -> Qwen3-30B-A3B), as a user would.
CONFIGS = ROOT / "fixtures" / "inputs" / "modelconfig"
_PACKAGING = re.compile(r"([-_](instruct|chat|it|base|hf|fp8|awq|gptq|\d{4}))+$", re.I)


def config_for(log: Path) -> Path | None:
    """The config.json of the log's served model, where fixtures/inputs/modelconfig has it."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    model = str(profile_of(parse_sources([LineSource(log.name, list(enumerate(lines, 1)))])).value("model") or "")
    tail = _PACKAGING.sub("", model.rstrip("/").rsplit("/", 1)[-1]).lower()
    tail = tail.removeprefix("meta-")  # meta-llama/Meta-Llama-3.1-8B is the hub's Llama-3.1-8B, renamed
    for candidate in sorted(CONFIGS.glob("*/config.json")) if tail else []:
        if candidate.parent.name.lower() == tail:
            return candidate
    return None


def gpu_of(table: HardwareTable, log: Path, profile: Profile) -> tuple[str | None, str]:
    """The GPU a log ran on and where it was read: the log (`gpu.name`), else the label's `hardware:` field, else
    the label's text, where either names exactly one GPU of the table; the story's from its README."""
    _, label_text = _label(log)
    if profile.value("gpu.name"):
        return str(profile.value("gpu.name")), "log"
    gpu = _gpu_in_text(table, _hardware_field(label_text))
    if gpu:
        return gpu, "label hardware:"
    gpu = _gpu_in_text(table, label_text)
    if gpu:
        return gpu, "label text"
    if log.parent.name == STORY_GPU[0]:
        return STORY_GPU[1], "README.md (the story)"
    return None, ""


def check_log(
    table: HardwareTable, log: Path, rules: list[LoadedRule], config: Path | None = None, *, ranks: bool = True
) -> Row:
    """One log through `logdoctor diagnose`'s own pipeline (`diagnose_parsed` with the GPU as `--gpu`), so the
    check is of what the report says; and the labelled cause's rank with and without the GPU. With `config`, the
    model's config.json is given beside it (`logdoctor diagnose LOG config.json`)."""
    label, label_text = _label(log)
    case = f"{log.parent.name}/{log.name}"
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    sources = [LineSource(log.name, list(enumerate(lines, 1)))]
    if config is not None:
        text = config.read_text(encoding="utf-8").splitlines()
        sources.append(LineSource(f"{config.parent.name}/config.json", list(enumerate(text, 1))))
    parsed = parse_sources(sources)
    profile = profile_of(parsed)
    gpu, gpu_from = gpu_of(table, log, profile)
    options = PerfOptions(gpu=str(gpu) if gpu else None, table=table)
    diagnosis, _ = diagnose_parsed(parsed, rules, perf=options)
    p = diagnosis.performance
    plain_rank = with_rank = None
    if ranks and gpu and label not in ("healthy", "?"):
        plain, _ = diagnose_parsed(parsed, rules, perf=PerfOptions(table=table))
        plain_rank, with_rank = _rank(plain.findings, label), _rank(diagnosis.findings, label)
    if p is None or not p.known:
        missing = "; ".join(f"{u.what}: {u.how}" for u in (p.unknown if p else []))
        return Row(case, label, str(gpu or "-"), "", "-", "-", None, missing[:110])
    detail = f"TP{p.tp} B={p.batch}" + (f" tau={p.tokens_per_step:.2f}" if (p.tokens_per_step or 1) > 1 else "")
    if p.basis == "per request" and p.measured_per_request_tok_s is not None and p.ratio is not None:
        measured, bound = f"{p.measured_per_request_tok_s:.1f}/req", f"{p.measured_per_request_tok_s / p.ratio:.1f}/req"
    elif p.basis == "aggregate" and p.measured_aggregate_tok_s is not None:
        measured, bound = f"{p.measured_aggregate_tok_s:.0f} agg", f"{p.expected_aggregate_tok_s or 0:.0f} agg"
    else:
        measured, bound = "-", f"{p.expected_per_request_tok_s or 0:.1f}/req"
    unknown = ", ".join(u.what.split(" (")[0] for u in p.unknown) or "none"
    note = f"GPU from {gpu_from}; verdict {diagnosis.verdict.kind}; unknown: {unknown}"
    if plain_rank is not None or with_rank is not None:
        note += f"; rank of {label}: {plain_rank or '-'} without the GPU, {with_rank or '-'} with it"
    constructed = "constructed: true" in label_text
    loose = "acceptance unknown" if any(u.what.startswith("speculative acceptance") for u in p.unknown) else ""
    which = which_bound(p) if p.expected_no_spec_tok_s is not None else ""
    if which:
        note = f"bound {which}; " + note
    return Row(
        case,
        label,
        p.gpu or "-",
        detail,
        measured,
        bound,
        p.ratio,
        note,
        constructed,
        loose,
        p.ratio_as_deployed,
        which,
    )


def published(table: HardwareTable) -> list[Row]:
    """Measurements published with their hardware and model size (not logs in the corpus)."""
    rows: list[Row] = []
    h200 = table.require("H200")
    # ../shared/h200-microbench.txt: 15.01 GB of bf16 Llama-3-8B-shaped linears, no attention, CUDA graphs off
    # but no elementwise kernels (the GEMV chain); B=1..256.
    for batch, tok_s in ((1, 232), (8, 1799), (32, 6889), (64, 13247), (128, 24385), (256, 37845)):
        dep = Deployment(gpu=h200, weights_bytes_per_gpu=15.01e9, batch=batch)
        e = expected(dep, table, measured_aggregate=float(tok_s))
        rows.append(
            Row(
                f"h200-microbench B={batch}",
                "healthy",
                "H200",
                "synthetic GEMV chain",
                f"{tok_s} agg",
                f"{e.aggregate_tok_s:.0f} agg ({e.bound})",
                e.ratio,
                "../shared/h200-microbench.txt",
            )
        )
    h100 = table.require("H100 SXM")
    # vllm PR#16937: H100, bs=1, Llama-3.1-8B (16.06 GB bf16), vanilla decode 133 tok/s
    e = expected(Deployment(gpu=h100, weights_bytes_per_gpu=16.06e9), table, measured_per_request=133.0)
    rows.append(
        Row(
            "vllm PR#16937 vanilla",
            "healthy",
            "H100 SXM",
            "Llama-3.1-8B bs=1",
            "133/req",
            f"{e.per_request_tok_s:.1f}/req",
            e.ratio,
            "https://github.com/vllm-project/vllm/pull/16937",
        )
    )
    # EAGLE-3 paper: H100 bs=1, base 158 tok/s (LLaMA-3.1-8B in SGLang)
    e = expected(Deployment(gpu=h100, weights_bytes_per_gpu=16.06e9), table, measured_per_request=158.0)
    rows.append(
        Row(
            "EAGLE-3 paper base",
            "healthy",
            "H100 SXM",
            "Llama-3.1-8B bs=1",
            "158/req",
            f"{e.per_request_tok_s:.1f}/req",
            e.ratio,
            "https://arxiv.org/html/2503.01840v3",
        )
    )
    return rows


def story_effects(table: HardwareTable, fixtures: Path) -> list[str]:
    """What the effect functions say on the story log (docs/expected-performance.md quotes these lines)."""
    log = fixtures / "story" / "vllm-dflash-tp2-a6000.log"
    lines = log.read_text(encoding="utf-8").splitlines()
    profile = profile_of(parse_sources([LineSource(log.name, list(enumerate(lines, 1)))]))
    found = table.model_shape(str(profile.value("model")))
    assert found is not None, "the story's model is in hardware.yaml's models:"
    shape = found[1]
    inputs = deployment_from_profile(
        profile,
        gpu=STORY_GPU[1],
        table=table,
        layers=shape.layers,
        hidden_size=shape.hidden_size,
        unread_bytes_per_gpu=shape.unread_bytes_per_gpu(2, 2.0),
        lm_head_bytes_per_gpu=shape.lm_head_bytes_per_gpu(2),
        vocab_size=shape.vocab_size,
        shape_read_params=shape.read_params,
        shape_params=shape.params,
        shape_source=f"the models: entry {found[0]}",
    )
    dep = inputs.deployment
    assert dep is not None and dep.spec is not None
    out = []
    e = expected(dep, table, measured_per_request=inputs.measured_per_request)
    plain = expected(replace(dep, spec=None), table)
    out.append(
        f"bound {e.per_request_tok_s:.1f} tok/s (tau {e.tokens_per_step:.3f}), measured {inputs.measured_per_request:.1f}: {e.ratio:.2f}"
    )
    out.append(
        f"bound without speculation {plain.per_request_tok_s:.1f} tok/s: measured / that = {(inputs.measured_per_request or 0) / plain.per_request_tok_s:.2f}"
    )
    for cause in ("custom-allreduce-disabled", "nccl-no-p2p", "cuda-graphs-disabled"):
        eff = effects.speedup_if_fixed(cause, dep, table)
        out.append(f"{cause}: {'-' if eff is None else f'{eff.speedup:.3f}x'}")
    plan = effects.spec_best_k(dep, table)
    out.append(
        f"best k {plan.best.k} ({plan.best.speedup_vs_no_spec:.3f}x over no speculation) vs k={plan.current.k} "
        f"({plan.current.speedup_vs_no_spec:.3f}x)"
    )
    by_batch = effects.cuda_graphs_by_batch(dep, table, [1, 8, 32, 128])
    out.append("CUDA graphs by batch: " + ", ".join(f"B={b} {v:.3f}x" for b, v in by_batch.items()))
    return out


# A measurement this far above its bound is a fault of the model (or of its inputs) to find and fix by class.
BEATEN_BY = 1.05


def labelled_logs(fixtures: Path) -> list[Path]:
    """Every corpus log with a label: fixtures/logs/*/NAME.log beside NAME.yaml or NAME.expect.yaml."""
    return [
        log
        for log in sorted(fixtures.glob("*/*.log"))
        if log.with_suffix(".yaml").exists() or log.with_name(log.stem + ".expect.yaml").exists()
    ]


# What a measured rate is written with: stats lines (`generation throughput`, `gen throughput`), benchmarks (tok/s).
_RATE = re.compile(r"throughput|tokens?/s|tok/s", re.I)


def _may_have_gpu(table: HardwareTable, log: Path) -> bool:
    """Whether a GPU can be known for the log without parsing it: its label names one, or its text names a GPU of
    the table somewhere (where a `gpu.name` fact would come from: nvidia-smi, collect_env)."""
    text = log.read_text(encoding="utf-8", errors="replace")
    if not _RATE.search(text):
        return False  # nothing measured: no ratio to check
    _, label_text = _label(log)
    if _gpu_in_text(table, label_text) or log.parent.name == STORY_GPU[0]:
        return True
    hay = " " + normalise(text) + " "
    names = (name for gpu in table.gpus for name in (gpu.name, *gpu.aliases))
    return any(len(n) > 4 and n in hay for n in (" " + normalise(name) + " " for name in names))


def beaten(table: HardwareTable, logs: list[Path], rules: list[LoadedRule]) -> list[Row]:
    """The rows of real (not constructed) logs whose measured rate is above the bound by more than `BEATEN_BY`:
    each is a model bug until shown otherwise. Logs for which no GPU can be known get no bound and are skipped."""
    real = [log for log in logs if "constructed: true" not in _label(log)[1]]
    rows = [check_log(table, log, rules, ranks=False) for log in real if _may_have_gpu(table, log)]
    return [r for r in rows if r.ratio is not None and r.ratio > BEATEN_BY and not r.constructed]


def verdict(row: Row) -> str:
    if row.ratio is None:
        return "no check"
    if row.loose:
        return f"loose bound ({row.loose})"
    if row.ratio > 1.0:
        return "MISS (above the bound)"
    if row.label == "healthy":
        return "ok (50-90%)" if 0.5 <= row.ratio <= 0.9 else "outside 50-90%"
    return "ok (below healthy)" if row.ratio < 0.5 else "problem run at >= 50%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    parser.add_argument("--all", action="store_true", help="also list logs that cannot be checked")
    parser.add_argument(
        "--beaten",
        action="store_true",
        help=f"only list the real labelled logs of --fixtures measured above their bound by more than {BEATEN_BY}x",
    )
    args = parser.parse_args()
    table = load_hardware()
    rules = load_rules([], builtin=True)
    if args.beaten:
        logs = labelled_logs(args.fixtures)
        found = beaten(table, logs, rules)
        print(f"# {len(logs)} labelled logs; {len(found)} real ones measured above their bound x {BEATEN_BY}")
        for r in found:
            print(f"{r.case:44} {r.gpu:14} {r.detail:24} {r.measured:>11} {r.bound:>16} {r.ratio:.2f}; {r.note}")
        return
    logs = sorted(args.corpus.glob("*.log")) + sorted(args.fixtures.glob("**/*.log"))
    rows = [check_log(table, log, rules) for log in logs]
    # the same logs with their model's config.json beside them, where fixtures/inputs/modelconfig has it
    measured = {r.case for r in rows if r.ratio is not None}
    with_config = [(log, config_for(log)) for log in logs if f"{log.parent.name}/{log.name}" in measured]
    rows += [
        replace(check_log(table, log, rules, cfg), case=f"{log.parent.name}/{log.name} + config.json")
        for log, cfg in with_config
        if cfg is not None
    ]
    checkable = [r for r in rows if r.ratio is not None]
    print(f"# {len(logs)} logs; {len(checkable)} with known hardware and a measurement")
    header = (
        f"{'case':44} {'src':4} {'label':26} {'gpu':12} {'setup':22} {'measured':>11} {'bound':>16} {'ratio':>6} "
        f"{'deployed':>8}  result / note"
    )
    print(header)
    for r in rows:
        if r.ratio is None and not args.all:
            continue
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
        deployed = f"{r.as_deployed:.2f}" if r.as_deployed is not None else "-"
        src = "con" if r.constructed else "real"
        print(
            f"{r.case[:44]:44} {src:4} {r.label[:26]:26} {r.gpu[:12]:12} {r.detail[:22]:22} {r.measured:>11} "
            f"{r.bound:>16} {ratio:>6} {deployed:>8}  {verdict(r)}; {r.note}"
        )
    print("\n# published measurements with their hardware")
    print(header)
    for r in published(table):
        ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
        print(
            f"{r.case[:44]:44} {'pub':4} {r.label[:26]:26} {r.gpu[:12]:12} {r.detail[:22]:22} {r.measured:>11} "
            f"{r.bound:>16} {ratio:>6} {'-':>8}  {verdict(r)}; {r.note}"
        )
    print(f"\n# effects on the story log ({STORY_GPU[1]}, its model's shape from hardware.yaml)")
    for line in story_effects(table, args.fixtures):
        print(line)
    unknown_gpu = sum(1 for r in rows if r.ratio is None and r.measured == "-" and r.gpu == "-")
    print(f"\n# {unknown_gpu} logs name no GPU in the log or the label; run with --all to list every log")


if __name__ == "__main__":
    main()
