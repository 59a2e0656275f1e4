"""Deployments kept apart (logdoctor/app/deployments.py) and logs split per server start (logdoctor/pipeline/run.py), end to end
through `logdoctor diagnose` and on constructed lines in the engines' formats."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.app.deployments import parse_deployments
from logdoctor.engine.rules import load_rules
from logdoctor.parse.pipeline import parse_text
from logdoctor.pipeline.run import LineSource, diagnose_parsed, local_line_sources, parse_sources
from logdoctor.pipeline.tap import run_starts
from tests.parse.test_bench import VLLM_SERVE_OLD

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story"
VLLM = STORY / "vllm-dflash-tp2-a6000.log"
SGLANG = STORY / "sglang-mtp-tp2-a6000.log"
NCCL = ROOT / "fixtures" / "logs" / "corpus" / "nccl-001.log"
# fixtures/logs/realworld/vllm-rh05.log (healthy vLLM 0.10.0, served traffic) then vllm-r020.log (vLLM 0.13.0, AWQ).
RESTART = ROOT / "fixtures" / "logs" / "constructed" / "restart-vllm010-healthy-then-vllm013-awq.log"
FIRST_START_LINES = 1008  # vllm-rh05.log's lines


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def diagnose_json(*args: str) -> tuple[int, object]:
    code, out, err = run("diagnose", *args, "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


# --- several inputs ------------------------------------------------------------------------------------------


def test_two_engines_are_two_reports_with_a_pointer_to_diff() -> None:
    code, report = diagnose_json(str(SGLANG), str(VLLM))
    assert isinstance(report, dict) and report["report"] == "deployments"  # one object (docs/json.md)
    data = report["deployments"]
    assert len(data) == 2
    assert [d["engine"]["name"] for d in data] == ["sglang", "vllm"]
    assert [[s["name"] for s in d["sources"]] for d in data] == [[str(SGLANG)], [str(VLLM)]]
    # Each report is the file's own diagnosis: the vLLM one ranks as it does alone.
    _, alone = diagnose_json(str(VLLM))
    assert isinstance(alone, dict)
    assert [f["rule"] for f in data[1]["findings"]] == [f["rule"] for f in alone["findings"]]
    pointer = f"compare them with `logdoctor diff {SGLANG} {VLLM}`"
    assert all(any(pointer in w for w in d["warnings"]) for d in data)
    assert code == 1  # the vLLM deployment has a high finding: the exit code is over all of them


def test_two_deployments_in_text_have_a_heading_each_and_the_table() -> None:
    code, out, _ = run("diagnose", str(SGLANG), str(VLLM))
    assert code == 1
    assert out.count("logdoctor sglang") == 1 and out.count("logdoctor vllm 0.20.1") == 1
    assert "2 deployments" in out


def test_server_log_nccl_log_and_bench_table_stay_one_deployment(tmp_path: Path) -> None:
    bench = tmp_path / "bench.txt"
    bench.write_text(VLLM_SERVE_OLD + "\n", encoding="utf-8")
    paths = [str(VLLM), str(NCCL), str(bench)]
    _, data = diagnose_json(*paths)
    assert isinstance(data, dict), "one deployment is one report"
    assert [s["name"] for s in data["sources"]] == paths
    # Exactly what the one-deployment pipeline gives for the three together.
    parsed = parse_sources(local_line_sources(paths))
    today, _ = diagnose_parsed(parsed, load_rules())
    assert [(f["rule"], f["score"]) for f in data["findings"]] == [(f.rule, f.score) for f in today.findings]
    assert data["facts"]["bench.output_throughput"] == [53.75] and "nccl.transport" in data["facts"]
    assert not any("deployments in this command" in w for w in data["warnings"])


def _write(path: Path, lines: list[str]) -> str:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _vllm_start(version: str, args: str) -> list[str]:
    return [
        f"(APIServer pid=1) INFO 05-20 12:00:00 [api_server.py:1805] vLLM API server version {version}",
        f"(APIServer pid=1) INFO 05-20 12:00:00 [utils.py:326] non-default args: {{{args}}}",
    ]


STATS = (
    "(APIServer pid=1) INFO 05-20 12:10:00 [loggers.py:123] Engine 000: Avg prompt throughput: 10.0 tokens/s, "
    "Avg generation throughput: 50.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
    "Prefix cache hit rate: 0.0%"
)


def test_one_deployment_started_with_other_flags_in_two_files_stays_one(tmp_path: Path) -> None:
    # The A/B the rules compare (fixtures/logs/constructed/stale-attention-env-vllm033-mtp-ab/): one deployment.
    ab = ROOT / "fixtures" / "logs" / "constructed" / "stale-attention-env-vllm033-mtp-ab"
    paths = [str(ab / "1-serve-baseline.log"), str(ab / "2-serve-mtp.log")]
    (deployment,) = parse_deployments(local_line_sources(paths))
    diagnosis, _ = diagnose_parsed(deployment.parsed, load_rules())
    assert "measured-slower" in {o.rule for o in diagnosis.ruled_out}  # with and without MTP were compared
    # Another version of the model's engine is another deployment.
    old = _write(tmp_path / "old.log", _vllm_start("0.10.0", "'model': 'Qwen/Qwen3-8B'"))
    new = _write(tmp_path / "new.log", _vllm_start("0.10.1.1", "'model': 'Qwen/Qwen3-8B'"))
    assert [d.label for d in parse_deployments(local_line_sources([old, new]))] == [old, new]


def test_an_ambiguous_side_file_joins_the_server_log_before_it_and_says_so(tmp_path: Path) -> None:
    bench = tmp_path / "bench.txt"
    bench.write_text(VLLM_SERVE_OLD + "\n", encoding="utf-8")
    deployments = parse_deployments(local_line_sources([str(SGLANG), str(bench), str(VLLM)]))
    assert [[u.name for u in d.units] for d in deployments] == [[str(SGLANG), str(bench)], [str(VLLM)]]
    assert any("joined the deployment of" in n for n in deployments[0].notes)
    first = parse_deployments(local_line_sources([str(bench), str(SGLANG), str(VLLM)]))
    assert [u.name for u in first[0].units] == [str(bench), str(SGLANG)]


# --- one log, several server starts -----------------------------------------------------------------------------


def test_a_restarted_log_is_diagnosed_for_its_last_start_by_default() -> None:
    _, data = diagnose_json(str(RESTART))
    assert isinstance(data, dict)
    assert data["engine"]["version"] == "0.13.0"
    assert data["findings"][0]["cause"] == "quantization-kernel-fallback"
    assert "torch-compile-or-warmup" not in {f["cause"] for f in data["findings"]}  # the first start's slow start
    assert all(e["line"] > FIRST_START_LINES for f in data["findings"] for e in f["evidence"])
    note = next(w for w in data["warnings"] if "server starts" in w)
    assert note.startswith(f"2 server starts in {RESTART}; diagnosed the last (lines 1,")
    assert "--all-runs" in note
    assert data["sources"][0]["lines"] < 100  # the last start's lines only


def test_all_runs_diagnoses_each_start_as_its_own_deployment() -> None:
    _, report = diagnose_json(str(RESTART), "--all-runs")
    assert isinstance(report, dict) and report["report"] == "deployments"
    data = report["deployments"]
    assert len(data) == 2
    assert [d["engine"]["version"] for d in data] == ["0.10.0", "0.13.0"]
    assert data[0]["verdict"]["healthy"] is True
    assert data[1]["findings"][0]["cause"] == "quantization-kernel-fallback"
    assert any(w.startswith(f"{RESTART}: server start 1 of 2, lines 1-") for w in data[0]["warnings"])
    assert sum(d["sources"][0]["lines"] for d in data) == RESTART.read_bytes().count(b"\n")


def _starts(text: str) -> list[tuple[int, int | None]]:
    return run_starts(parse_text(text, "t.log"))


def test_a_restart_that_never_served_is_told_by_its_repeated_banner() -> None:
    # A crash loop: the same start-up lines twice, no traffic between them.
    text = "\n".join([*_vllm_start("0.10.1.1", "'model': 'm'"), *_vllm_start("0.10.1.1", "'model': 'm'")])
    assert _starts(text) == [(1, 1), (3, 3)]


def test_one_start_is_one_run_and_what_precedes_the_banner_stays_with_it() -> None:
    platform = "INFO 05-20 11:59:59 [__init__.py:241] Automatically detected platform cuda."
    text = "\n".join([platform, *_vllm_start("0.10.1.1", "'model': 'm'"), STATS, STATS])
    assert _starts(text) == [(1, 2)]


def test_the_platform_line_before_a_new_banner_goes_with_the_new_start() -> None:
    platform = "INFO 05-20 12:20:00 [__init__.py:241] Automatically detected platform cuda."
    text = "\n".join([*_vllm_start("0.10.1.1", "'model': 'm'"), STATS, platform, *_vllm_start("0.10.1.1", "'m': 1")])
    assert _starts(text) == [(1, 1), (4, 5)]


# real: fixtures/logs/realworld13/vllm-c951.log lines 4-14 and 18-19 (cut), three offline `benchmark_throughput.py`
# runs of vLLM 0.5.4 pasted one after another, the second with its quantization warning above its banner
OFFLINE_RUN = [
    "INFO 08-09 13:55:56 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: "
    "model='meta-llama/Meta-Llama-3.1-8B-Instruct', speculative_config=None, tokenizer='meta-llama/Meta-Llama-3.1-8B-Instruct'",
    "INFO 08-09 13:56:03 model_runner.py:732] Loading model weights took 14.9888 GB",
    "INFO 08-09 13:56:04 gpu_executor.py:102] # GPU blocks: 9930, # CPU blocks: 2048",
    "INFO 08-09 13:56:20 model_runner.py:1225] Graph capturing finished in 14 secs.",
    "Processed prompts: 100% 1000/1000 [01:14<00:00, 13.42it/s, est. speed input: 1341.95 toks/s, output: 3354.88 toks/s]",
    "Throughput: 13.38 requests/s, 4681.85 tokens/s",
]
NEXT_OFFLINE_START = [
    "WARNING 08-09 13:57:44 config.py:254] gptq quantization is not fully optimized yet. The speed can be slower "
    "than non-quantized models.",
    "INFO 08-09 13:57:44 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: "
    "model='kaitchup/Meta-Llama-3.1-8B-Instruct-autoround-gptq-4bit-asym', speculative_config=None",
]


def test_a_start_s_own_progress_stays_with_it_and_the_next_start_begins_at_its_configuration() -> None:
    # Loading, the KV cache, graph capture and the run's result come after this start's banner: the next start
    # begins at the warning printed above its own banner, not at the first start's weight loading.
    text = "\n".join([*OFFLINE_RUN, *NEXT_OFFLINE_START])
    assert _starts(text) == [(1, 1), (7, 8)]


def test_traffic_before_the_first_banner_is_the_end_of_an_earlier_start() -> None:
    text = "\n".join([STATS, *_vllm_start("0.10.1.1", "'model': 'm'"), STATS])
    assert _starts(text) == [(1, None), (2, 2)]


def test_a_failure_before_the_first_banner_is_the_end_of_an_earlier_start() -> None:
    """`docker logs --tail` of a restart loop: the dead start's traceback, then the next start's banner."""
    oom = (
        "(EngineCore_DP0 pid=9) ValueError: Free memory on device (13.58/15.99 GiB) on startup is less than desired "
        "GPU memory utilization (0.85, 13.59 GiB). Decrease GPU memory utilization or reduce GPU memory used by "
        "other processes."
    )
    text = "\n".join([oom, *_vllm_start("0.10.1.1", "'model': 'm'"), STATS])
    assert _starts(text) == [(1, None), (2, 2)]


def test_each_data_parallel_engine_core_printing_its_init_is_one_start() -> None:
    init = (
        "({who} pid={pid}) INFO 05-20 12:00:05 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with config: "
        "model='m', speculative_config=None, tokenizer='m'"
    )
    text = "\n".join(
        [
            *_vllm_start("0.10.1.1", "'model': 'm', 'data_parallel_size': 2"),
            init.format(who="EngineCore_DP0", pid=7),
            init.format(who="EngineCore_DP1", pid=8),
            STATS,
        ]
    )
    assert _starts(text) == [(1, 1)]


def test_a_new_version_begins_a_new_start() -> None:
    text = "\n".join([_vllm_start("0.10.0", "'model': 'm'")[0], _vllm_start("0.10.1.1", "'model': 'm'")[0]])
    assert _starts(text) == [(1, 1), (2, 2)]


def test_split_runs_keep_only_the_last_start_events_and_counts() -> None:
    second = [*_vllm_start("0.10.1.1", "'model': 'b'"), STATS]
    garbled = "(APIServer pid=1) INFO 05-20 12:10:00 [metrics.py:101] SpecDecoding metrics: (cut)"
    lines = [*_vllm_start("0.10.0", "'model': 'a'"), STATS, garbled, *second]
    whole = parse_sources([LineSource("t.log", list(enumerate(lines[:4], 1)))])
    assert whole.stats[0].unrecognised == 1  # the garbled line is not understood, and it is in the first start
    parsed = parse_sources([LineSource("t.log", list(enumerate(lines, 1)))])
    assert parsed.stats[0].unrecognised == 0
    assert parsed.run is not None and (parsed.run.first, parsed.run.last, parsed.run.count) == (5, 7, 2)
    assert min(e.line for e in parsed.events) == 5
    assert parsed.stats[0].lines == 3 and parsed.stats[0].events == len(parsed.events) == 3
    assert parsed.version == "0.10.1.1"


# --- diff of two starts ------------------------------------------------------------------------------------------


def test_diff_runs_compares_the_last_start_with_the_one_before() -> None:
    code, out, err = run("diff", "--runs", str(RESTART), "--format", "json")
    assert code in (0, 1), err
    data = json.loads(out)
    assert data["baseline"]["engine"]["version"] == "0.10.0"
    assert data["candidate"]["engine"]["version"] == "0.13.0"
    assert any(w.startswith(f"baseline: {RESTART}: server start 1 of 2") for w in data["warnings"])
    keys = {row["key"] for row in data["differences"]}
    assert "tensor_parallel_size" in keys  # TP=8 before the restart, 1 after


def test_diff_runs_of_a_log_with_one_start_is_a_usage_error() -> None:
    code, _, err = run("diff", "--runs", str(VLLM))
    assert code == 2 and "one server start in it" in err
    code, _, err = run("diff", "--runs", str(VLLM), str(SGLANG))
    assert code == 2 and "takes one LOG" in err


def test_all_runs_is_for_local_logs() -> None:
    code, _, err = run("diagnose", "--all-runs", "root@127.0.0.1")
    assert code == 2 and "--all-runs applies to local logs" in err


def test_a_forced_engine_keeps_side_files_side_files(tmp_path: Path) -> None:
    bench = tmp_path / "bench.txt"
    bench.write_text(VLLM_SERVE_OLD + "\n", encoding="utf-8")
    deployments = parse_deployments(local_line_sources([str(SGLANG), str(VLLM), str(bench)]), "vllm")
    assert any("bench.txt joined the deployment of" in n for d in deployments for n in d.notes)


def test_several_deployments_in_markdown_html_and_github() -> None:
    code, out, _ = run("diagnose", str(SGLANG), str(VLLM), "--format", "markdown")
    assert code == 1 and f"# {SGLANG}" in out and "## Deployments" in out and "| deployment |" in out
    for fmt in ("html", "github"):
        code, out, _ = run("diagnose", str(SGLANG), str(VLLM), "--format", fmt)
        assert code == 1 and str(SGLANG) in out and str(VLLM) in out


def test_the_nodes_of_one_deployment_are_one_even_on_two_hosts(tmp_path: Path) -> None:
    nccl = "{host}:11:11 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"
    dump = "'model': '/models/Qwen3-8B', 'node_rank': {rank}, 'nnodes': 2"
    node0 = _write(tmp_path / "n0.log", [*_vllm_start("0.10.1.1", dump.format(rank=0)), nccl.format(host="gpu-a")])
    node1 = _write(tmp_path / "n1.log", [*_vllm_start("0.10.1.1", dump.format(rank=1)), nccl.format(host="gpu-b")])
    (deployment,) = parse_deployments(local_line_sources([node0, node1]))
    assert {u.host for u in deployment.units} == {"gpu-a", "gpu-b"}
    # The same dump on two hosts without node ranks: two deployments.
    one = _write(tmp_path / "a.log", [*_vllm_start("0.10.1.1", "'model': 'Qwen/Qwen3-8B'"), nccl.format(host="gpu-a")])
    two = _write(tmp_path / "b.log", [*_vllm_start("0.10.1.1", "'model': 'Qwen/Qwen3-8B'"), nccl.format(host="gpu-b")])
    assert len(parse_deployments(local_line_sources([one, two]))) == 2
    # A local copy of a hub model is the same model; another model is not.
    version = "(APIServer pid=1) INFO 05-20 12:00:00 [utils.py:290] vLLM server version 0.21.0, serving model {model}"
    hub = _write(tmp_path / "hub.log", [version.format(model="Qwen/Qwen3-8B"), STATS])
    local = _write(tmp_path / "local.log", [*_vllm_start("0.21.0", "'model': '/models/qwen3-8b/'")])
    other = _write(tmp_path / "other.log", [version.format(model="Qwen/Qwen3-32B"), STATS])
    assert len(parse_deployments(local_line_sources([hub, local]))) == 1
    assert len(parse_deployments(local_line_sources([hub, other]))) == 2


def test_another_engine_start_begins_a_new_run() -> None:
    sglang = "[2026-09-24 01:50:02] server_args={'model_path': '/models/x', 'tp_size': 2}"
    text = "\n".join([sglang, *_vllm_start("0.10.1.1", "'model': 'm'")])
    assert _starts(text) == [(1, 1), (2, 2)]


def test_a_last_start_with_only_its_banner_is_passed_over_for_the_one_before(tmp_path: Path) -> None:
    log = _write(
        tmp_path / "cut.log", [*_vllm_start("0.10.0", "'model': 'a'"), STATS, *_vllm_start("0.10.0", "'m': 1")]
    )
    parsed = parse_sources(local_line_sources([log]))
    assert parsed.run is not None and (parsed.run.index, parsed.run.first, parsed.run.last) == (1, 1, 3)
    assert parsed.notes == [
        f"2 server starts in {log}; diagnosed start 1 (lines 1-3): the later one(s) (lines 4-5) printed only "
        "start-up lines; --all-runs diagnoses every one"
    ]


def test_diff_pointer_names_the_faster_deployment_first() -> None:
    """`diff` takes the fast deployment first (BASELINE): the pointer of `diagnose SLOW FAST` says so."""
    story = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story"
    slow, fast = story / "vllm-dflash-tp2-a6000.log", story / "sglang-mtp-tp2-a6000.log"
    result = CliRunner().invoke(main, ["diagnose", str(slow), str(fast)])
    # the report wraps at the terminal's width (80 where no width is known): read it as one run of words
    words = " ".join(result.output.split())
    assert words.count("compare them with") == 2
    assert words.count(f"compare them with `logdoctor diff {fast} {slow}`") == 2
