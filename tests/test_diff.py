"""`logdoctor diff` end to end: the story's SGLang MTP baseline against the vLLM DFlash candidate, the
same-engine pair, a real pair split from one paste, the vocabulary, the gap and its attribution."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.diff import GROUPS, VOCABULARY, Gap, Side, attribute, port, read, spelling
from logdoctor.engine.result import Finding
from logdoctor.facts import FACTS, Profile
from logdoctor.pipeline.run import LineSource, parse_sources, profile_of
from logdoctor.registry import serving_names

ROOT = Path(__file__).resolve().parents[1]
STORY = ROOT / "fixtures" / "logs" / "story"
SGLANG_MTP = STORY / "sglang-mtp-tp2-a6000.log"
VLLM_DFLASH = STORY / "vllm-dflash-tp2-a6000.log"
VLLM_MTP = STORY / "vllm-mtp-tp2-a6000-healthy.log"
REAL = ROOT / "fixtures" / "diff" / "vllm-001"
CORPUS = ROOT.parent / "shared" / "corpus" / "realworld" / "vllm-001.log"

MTP_TO_VLLM = """--speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'"""
DIFFERENCE_FIELDS = {"key", "baseline", "candidate", "matters", "why", "port", "baseline_flag", "candidate_flag"}


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["diff", *args], input=input)
    return result.exit_code, result.stdout, result.stderr


def diff_json(*args: str) -> dict[str, Any]:
    code, out, err = run(*args, "--format", "json", "--fail-on", "never")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def rows(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["key"]: row for row in data["differences"]}


def profile(path: Path) -> Profile:
    lines = enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
    return profile_of(parse_sources([LineSource(name=path.name, lines=lines)]))


# --- the story -----------------------------------------------------------------------------------


def test_story_puts_the_gap_and_the_speculative_differences_on_top_with_vllm_flags() -> None:
    code, out, _ = run(str(SGLANG_MTP), str(VLLM_DFLASH), "--format", "json")
    assert code == 1  # high findings, as diagnose
    data = json.loads(out)
    assert data["schema_version"] == 1 and data["report"] == "diff"
    assert data["baseline"]["engine"]["name"] == "sglang"
    assert data["candidate"]["engine"] == {**data["candidate"]["engine"], "name": "vllm", "version": "0.20.1"}
    assert [s["name"] for s in data["baseline"]["sources"]] == [str(SGLANG_MTP)]
    assert [s["name"] for s in data["candidate"]["sources"]] == [str(VLLM_DFLASH)]

    gap = data["gap"]
    assert gap["key"] == "decode_tok_s_per_request"
    assert gap["baseline"] == pytest.approx(73.5, abs=0.2) and gap["candidate"] == pytest.approx(18.2, abs=0.2)
    assert 3.9 <= gap["ratio"] <= 4.2
    assert gap["summary"].startswith("4.0x slower per request")

    keys = [row["key"] for row in data["differences"]]
    assert keys[0] == "decode_tok_s_per_request"
    assert {"speculative_method", "num_speculative_tokens", "mean_acceptance_length"} <= set(keys[1:6])
    by_key = rows(data)
    for key in ("speculative_method", "num_speculative_tokens", "mean_acceptance_length"):
        row = by_key[key]
        assert set(row) >= DIFFERENCE_FIELDS
        assert row["state"] == "differs" and row["matters"] is True and row["why"]
        assert row["port"] == MTP_TO_VLLM
    assert by_key["mean_acceptance_length"]["candidate_key"] == "SpecDecoding metrics: Mean acceptance length"
    assert by_key["mean_acceptance_length"]["baseline_key"] == "Decode batch: accept len"
    assert (by_key["speculative_method"]["baseline"], by_key["speculative_method"]["candidate"]) == ("mtp", "dflash")
    assert by_key["speculative_method"]["baseline_flag"] == "--speculative-algorithm"
    assert by_key["speculative_method"]["candidate_flag"] == "--speculative-config"
    assert (by_key["num_speculative_tokens"]["baseline"], by_key["num_speculative_tokens"]["candidate"]) == (3, 15)
    assert by_key["num_speculative_tokens"]["baseline_flag"] == "--speculative-num-draft-tokens"
    assert by_key["mean_acceptance_length"]["baseline"] == pytest.approx(3.08, abs=0.02)
    assert by_key["mean_acceptance_length"]["candidate"] == pytest.approx(1.29, abs=0.02)
    # every row that matters comes before every row that does not
    matters = [row["matters"] for row in data["differences"]]
    assert matters == sorted(matters, reverse=True)


def test_story_ports_the_other_settings_that_matter_and_folds_what_is_equal() -> None:
    data = diff_json(str(SGLANG_MTP), str(VLLM_DFLASH))
    by_key = rows(data)
    assert by_key["max_concurrent_requests"]["port"] == "--max-num-seqs 16"
    assert by_key["max_concurrent_requests"]["baseline_flag"] == "--max-running-requests"
    assert by_key["max_concurrent_requests"]["matters"] is True
    # 0.88 on SGLang vs 0.92 on vLLM: a difference, but the candidate is not worse off
    assert by_key["memory_fraction"]["matters"] is False
    assert by_key["memory_fraction"]["port"] == "--gpu-memory-utilization 0.88"
    # both sides lost custom all-reduce the same way: equal, folded, and not blamed for the gap
    for equal in ("custom_all_reduce", "tensor_parallel_size", "cuda_graphs", "model", "max_batched_tokens"):
        assert equal not in by_key
    assert data["folded"] > 0
    everything = rows(diff_json(str(SGLANG_MTP), str(VLLM_DFLASH), "--all"))
    assert {row["key"] for row in everything.values()} == {entry.key for entry in VOCABULARY}
    assert everything["custom_all_reduce"]["state"] == "equal"
    assert (everything["custom_all_reduce"]["baseline"], everything["custom_all_reduce"]["candidate"]) == (False, False)
    assert everything["tensor_parallel_size"]["baseline_flag"] == "--tp-size"
    assert everything["tensor_parallel_size"]["candidate_flag"] == "--tensor-parallel-size"
    assert everything["cuda_graphs"]["state"] == "equal"
    assert everything["cuda_graphs"]["baseline_flag"] == "--disable-cuda-graph"
    # never guessed: the SGLang log prints no version, the vLLM log no drafter graph lines
    assert everything["engine_version"]["state"] == "unknown" and everything["engine_version"]["baseline"] is None
    assert everything["drafter_cuda_graphs"]["candidate"] is None and everything["drafter_cuda_graphs"]["port"] is None


def test_story_findings_are_ranked_and_the_gap_is_split_over_the_causes_that_differ() -> None:
    data = diff_json(str(SGLANG_MTP), str(VLLM_DFLASH))
    findings = data["findings"]
    scores = [f["score"] for f in findings]
    assert scores == sorted(scores, reverse=True)
    assert findings[0]["cause"] in ("spec-net-loss", "spec-low-acceptance")
    fired = {f["rule"] for f in findings}
    assert {"diff-acceptance-drop", "diff-spec-changed", "below-break-even", "custom-allreduce-off"} <= fired
    assert "diff-allreduce-lost" not in fired  # the baseline had no custom all-reduce either
    assert "diff-eager-vs-graphs" in {o["rule"] for o in data["ruled_out"]}
    assert "custom-allreduce-off" in data["baseline"]["findings"]

    gap = data["gap"]
    assert gap["method"] == "score-share"
    shares = {s["problem"]: s for s in gap["attribution"]}
    # spec-net-loss and spec-low-acceptance are one problem: one share, named by its best finding's cause
    assert set(shares) == {"speculation"}
    assert sum(s["share"] for s in shares.values()) <= 1.0 + 1e-3
    assert gap["left_out"]["custom-allreduce-off"] == "fires on the baseline too"
    assert {"below-break-even", "diff-spec-changed", "low-acceptance"} <= set(shares["speculation"]["rules"])
    assert shares["speculation"]["cause"] == "spec-net-loss"


def test_story_text_and_markdown_say_the_same() -> None:
    code, out, _ = run(str(SGLANG_MTP), str(VLLM_DFLASH))
    assert code == 1
    assert "candidate is 4.0x slower per request" in out
    assert "speculative_method" in out and "num_speculative_tokens" in out
    assert f"      {MTP_TO_VLLM}\n" in out  # the port, once for every speculative row
    assert "      --max-num-seqs 16\n" in out
    assert "also in the baseline" in out
    code, md, _ = run(str(SGLANG_MTP), str(VLLM_DFLASH), "--format", "markdown")
    assert code == 1
    assert md.startswith("## logdoctor diff\n")
    assert "**Candidate is 4.0x slower per request" in md
    assert "| | setting | baseline (sglang) | candidate (vllm 0.20.1) | port to vllm | why |" in md
    line = next(row for row in md.splitlines() if row.startswith("| ❗ | `speculative_method`"))
    assert "mtp · `--speculative-algorithm`" in line and "dflash · `--speculative-config`" in line
    assert '\'{"method": "mtp", "num_speculative_tokens": 3}\'' in line
    assert "*(also in the baseline: custom-allreduce-off, tp-over-pcie)*" in md  # the TP link, one heading


def test_sglang_reads_its_mtp_head_and_k_as_the_vllm_side_does() -> None:
    sglang, vllm = profile(SGLANG_MTP), profile(VLLM_MTP)
    for name in ("spec.method", "spec.num_tokens", "parallel.tp", "cuda_graphs.enabled", "allreduce.custom"):
        assert sglang.value(name) is not None, name
    assert sglang.value("spec.method") == vllm.value("spec.method") == "mtp"
    assert sglang.value("spec.num_tokens") == vllm.value("spec.num_tokens") == 3.0  # 4 draft tokens - the root
    assert sglang.value("sched.max_num_seqs") == 16.0  # from the max_total_num_tokens=... line
    assert sglang.value("kv.tokens") == 262144.0


# --- the other direction and the same engine -------------------------------------------------------


def test_ports_to_sglang_use_sglang_flags() -> None:
    vllm = Side(profile(VLLM_MTP))
    by_key = {entry.key: entry for entry in VOCABULARY}
    assert port(by_key["speculative_method"], vllm, "sglang") == (
        "--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 4"
    )
    assert port(by_key["tensor_parallel_size"], vllm, "sglang") == "--tp-size 2"
    assert port(by_key["memory_fraction"], vllm, "sglang") == "--mem-fraction-static 0.92"
    assert port(by_key["max_concurrent_requests"], vllm, "sglang") == "--max-running-requests 8"
    assert port(by_key["max_batched_tokens"], vllm, "sglang") == "--chunked-prefill-size 8192"
    assert port(by_key["cuda_graph_max_batch"], vllm, "sglang") == "--cuda-graph-max-bs 32"
    assert port(by_key["cuda_graphs"], vllm, "sglang") == "drop --disable-cuda-graph"
    assert port(by_key["cuda_graphs"], vllm, "vllm") == (
        'drop --enforce-eager; --compilation-config \'{"cudagraph_mode": "FULL_AND_PIECEWISE"}\''
    )
    dflash = Side(profile(VLLM_DFLASH))
    assert port(by_key["speculative_method"], dflash, "sglang") == (
        "--speculative-algorithm DFLASH --speculative-draft-model-path /root/models/Qwen3.6-27B-DFlash "
        "--speculative-num-draft-tokens 16"
    )
    data = diff_json(str(VLLM_MTP), str(SGLANG_MTP))
    assert data["gap"]["summary"].startswith("about as fast per request")
    assert data["gap"]["attribution"] == []
    assert rows(data)["max_concurrent_requests"]["matters"] is False  # 16 on the candidate: more, not less


def test_same_engine_pair_blames_the_drafter_and_the_lost_all_reduce() -> None:
    data = diff_json("--baseline", str(VLLM_MTP), "--candidate", str(VLLM_DFLASH))
    by_key = rows(data)
    assert by_key["custom_all_reduce"]["matters"] is True
    assert by_key["custom_all_reduce"]["candidate_detail"] == "no-p2p"
    assert by_key["custom_all_reduce"]["port"].startswith("drop --disable-custom-all-reduce")
    assert by_key["speculative_method"]["port"] == MTP_TO_VLLM
    fired = {f["rule"] for f in data["findings"]}
    assert {"diff-allreduce-lost", "diff-acceptance-drop"} <= fired
    assert "tp-link" in {s["problem"] for s in data["gap"]["attribution"]}  # custom all-reduce: the TP link problem


# --- a real pair ---------------------------------------------------------------------------------


def test_real_pair_is_split_verbatim_from_one_paste() -> None:
    original = (REAL / "original.log").read_bytes()
    halves = (REAL / "baseline-without-mtp.log").read_bytes() + (REAL / "candidate-with-mtp.log").read_bytes()
    assert halves == original
    if CORPUS.exists():
        assert CORPUS.read_bytes() == original


def test_real_pair_states_the_gap_and_guesses_nothing() -> None:
    data = diff_json(str(REAL / "baseline-without-mtp.log"), str(REAL / "candidate-with-mtp.log"))
    gap = data["gap"]
    assert (gap["baseline"], gap["candidate"]) == (342.2, 128.3)
    assert gap["summary"] == "2.7x slower per request (128.3 vs 342.2 tok/s)"
    assert gap["attribution"] == [] and gap["unexplained_share"] == 1.0
    assert data["verdict"]["summary"].startswith("no finding explains the gap")
    by_key = rows(data)
    assert by_key["mean_acceptance_length"]["candidate"] == 1.97
    assert by_key["mean_acceptance_length"]["baseline"] is None
    assert by_key["mean_acceptance_length"]["state"] == "unknown"
    assert "speculative_method" not in by_key  # neither paste has a startup line: folded as unknown on both
    missing = {o["rule"]: o["missing"] for o in data["insufficient_data"]}
    assert "baseline.spec.enabled" in missing["diff-spec-changed"]


# --- the command line ----------------------------------------------------------------------------


def test_several_files_a_side_and_both_argument_forms(tmp_path: Path) -> None:
    positional = diff_json(str(SGLANG_MTP), str(VLLM_DFLASH))
    options = diff_json("--baseline", str(SGLANG_MTP), "--candidate", str(VLLM_DFLASH))
    mixed = diff_json("--baseline", str(SGLANG_MTP), str(VLLM_DFLASH))
    assert positional["differences"] == options["differences"] == mixed["differences"]
    text = VLLM_DFLASH.read_text(encoding="utf-8").splitlines(keepends=True)
    head, tail = tmp_path / "start.log", tmp_path / "stats.log"
    head.write_text("".join(text[:60]), encoding="utf-8")
    tail.write_text("".join(text[60:]), encoding="utf-8")
    split = diff_json("--baseline", str(SGLANG_MTP), "--candidate", str(head), "--candidate", str(tail))
    assert [s["name"] for s in split["candidate"]["sources"]] == [str(head), str(tail)]
    assert rows(split)["speculative_method"]["candidate"] == "dflash"
    assert split["gap"]["ratio"] == positional["gap"]["ratio"]
    piped = CliRunner().invoke(
        main, ["diff", str(SGLANG_MTP), "-", "--format", "json", "--fail-on", "never"], input=VLLM_DFLASH.read_text()
    )
    assert piped.exit_code == 0 and json.loads(piped.stdout)["gap"]["ratio"] == positional["gap"]["ratio"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((str(SGLANG_MTP),), "diff compares two deployments"),
        ((str(SGLANG_MTP), str(VLLM_DFLASH), str(VLLM_MTP)), "diff compares two deployments"),
        (("--baseline", str(SGLANG_MTP)), "no candidate"),
        (("--baseline", str(SGLANG_MTP), "--candidate", str(VLLM_MTP), str(VLLM_DFLASH)), "not both"),
        (("-", "-"), "only one side can be read from stdin"),
        ((str(SGLANG_MTP), "missing.log"), "missing.log"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    code, _, err = run(*args)
    assert code == 2
    assert message in err


def test_exit_codes_follow_fail_on() -> None:
    assert run(str(SGLANG_MTP), str(VLLM_DFLASH), "--format", "json")[0] == 1
    assert run(str(SGLANG_MTP), str(VLLM_DFLASH), "--format", "json", "--fail-on", "never")[0] == 0
    assert run(str(VLLM_MTP), str(SGLANG_MTP), "--format", "json")[0] == 0  # the SGLang side scores 60 at most


def test_diagnose_never_runs_regression_rules() -> None:
    result = CliRunner().invoke(main, ["diagnose", str(VLLM_DFLASH), "--format", "json"])
    data = json.loads(result.stdout)
    listed = [o["rule"] for key in ("ruled_out", "insufficient_data", "not_applicable") for o in data[key]]
    listed += [f["rule"] for f in data["findings"]]
    assert listed and not [rule for rule in listed if rule.startswith("diff-")]


# --- the vocabulary and the arithmetic -----------------------------------------------------------

REQUIRED_KEYS = {
    "engine",
    "engine_version",
    "model",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "speculative_method",
    "num_speculative_tokens",
    "draft_model",
    "mean_acceptance_length",
    "cuda_graphs",
    "drafter_cuda_graphs",
    "cuda_graph_max_batch",
    "attention_backend",
    "drafter_attention_backend",
    "custom_all_reduce",
    "nccl_transport",
    "kv_cache_tokens",
    "max_concurrent_requests",
    "max_batched_tokens",
    "quantization",
    "prefix_caching",
    "memory_fraction",
    "decode_tok_s_per_request",
    "generation_throughput",
}


def test_vocabulary_names_each_key_once_with_known_facts() -> None:
    keys = [entry.key for entry in VOCABULARY]
    assert len(keys) == len(set(keys))
    assert set(keys) >= REQUIRED_KEYS
    for entry in VOCABULARY:
        assert entry.group in GROUPS
        for name in (*entry.facts, *([entry.detail] if entry.detail else [])):
            assert name in FACTS, (entry.key, name)
        assert entry.why
        if not entry.measurement and not entry.composite and entry.better != "never":
            assert any(getattr(spelling(entry, engine), "flag", None) for engine in serving_names()), entry.key


def test_spec_rows_say_off_when_speculation_is_off() -> None:
    off = Profile(facts={}, engine="vllm")
    by_key = {entry.key: entry for entry in VOCABULARY}
    assert read(by_key["speculative_method"], off) is None  # nothing known: unknown, not "off"
    from logdoctor.facts import Fact

    off.facts["spec.enabled"] = Fact(False)
    assert read(by_key["speculative_method"], off) == "off"
    assert read(by_key["num_speculative_tokens"], off) == 0
    assert read(by_key["mean_acceptance_length"], off) is None
    assert port(by_key["speculative_method"], Side(off), "vllm") == "drop --speculative-config"
    assert port(by_key["speculative_method"], Side(off), "sglang") == "drop --speculative-algorithm"


def _finding(rule: str, cause: str, score: int) -> Finding:
    return Finding(
        cause=cause, rule=rule, title=rule, score=score, severity="high", explanation="", working=f"= {score}"
    )


def test_attribution_scales_scores_to_the_gap_and_keeps_what_nothing_explains() -> None:
    gap = Gap(key="decode_tok_s_per_request", baseline=80.0, candidate=20.0, ratio=4.0, summary="4.0x")
    strong = [_finding("a", "spec-net-loss", 90), _finding("b", "spec-net-loss", 70), _finding("c", "nccl-no-p2p", 60)]
    split = attribute(gap, strong, baseline_rules=set(), about_differences={"a", "b", "c"})
    assert [s.problem for s in split.attribution] == ["speculation", "tp-link"]  # a problem counts once
    assert [s.cause for s in split.attribution] == ["spec-net-loss", "nccl-no-p2p"]
    assert sum(s.share for s in split.attribution) == pytest.approx(1.0, abs=1e-3)
    assert split.attribution[0].share == pytest.approx(0.6)
    assert math.prod(s.factor for s in split.attribution) == pytest.approx(4.0, rel=0.01)
    weak = attribute(gap, [_finding("c", "nccl-no-p2p", 40)], baseline_rules=set(), about_differences={"c"})
    assert weak.attribution[0].share == pytest.approx(0.4) and weak.unexplained_share == pytest.approx(0.6)
    shared = attribute(gap, strong, baseline_rules={"c"}, about_differences={"a", "b"})
    assert shared.left_out == {"c": "fires on the baseline too"}
    unrelated = attribute(gap, strong, baseline_rules=set(), about_differences={"a"})
    assert unrelated.left_out == {
        "b": "reads nothing the deployments differ in",
        "c": "reads nothing the deployments differ in",
    }
    faster = gap.model_copy(update={"ratio": 0.5})
    assert attribute(faster, strong, set(), {"a"}).attribution == []


def test_docs_list_every_key_of_the_vocabulary() -> None:
    text = (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")
    for entry in VOCABULARY:
        assert f"| `{entry.key}` |" in text, entry.key


def test_story_with_the_gpu_the_recommended_head_runs_at_the_acceptance_the_baseline_measured() -> None:
    # the baseline ran the model's own MTP head (accept len 3.08 at k=3): the candidate's recommended action is
    # computed at that acceptance, not at the published low end (2.52), so what the model leaves of the gap is what
    # lies between the two measurements and their bounds
    data = diff_json(str(SGLANG_MTP), str(VLLM_DFLASH), "--gpu", "RTX A6000")
    gap = data["gap"]
    assert gap["method"] == "model"
    speculation = next(s for s in gap["attribution"] if s["problem"] == "speculation")
    assert 2.6 < speculation["factor"] < 3.0
    finding = next(f for f in data["findings"] if f["rule"] == "below-break-even")
    head = finding["effect"]["actions"][0]
    assert '"method": "mtp"' in head["text"] and "3.08 at k=3 measured by the baseline" in head["note"]
    rest = gap["ratio"] / math.prod(s["factor"] for s in gap["attribution"])
    assert rest < 1.5  # the two runs at 115% and 82% of their bounds: 1.41x
