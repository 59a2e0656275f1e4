"""Pasted runs: an input holding several benchmark runs is split per run and its controlled pair compared.

The inputs are constructed from the engines' benchmark output formats (vllm/benchmarks/throughput.py,
sglang/bench_one_batch.py); the numbers are illustrative."""

from __future__ import annotations

from pathlib import Path

from logdoctor.engine.rules import load_rules
from logdoctor.events import BenchmarkResult
from logdoctor.pipeline.pasted import best_pair, split_runs
from logdoctor.pipeline.run import LineSource, diagnose_sources, parse_sources
from logdoctor.pipeline.runlabels import label_settings

_RUN_A = (
    "vllm bench throughput --model Qwen/Qwen2.5-7B-Instruct --input-len 1024 --output-len 512 --num-prompts 500\n"
    "Throughput: 9.81 requests/s, 15069.02 total tokens/s, 5023.01 output tokens/s\n"
)
_RUN_B_FP8 = (
    "vllm bench throughput --model Qwen/Qwen2.5-7B-Instruct --input-len 1024 --output-len 512 --num-prompts 500 "
    "--quantization fp8\n"
    "Throughput: 7.02 requests/s, 10782.00 total tokens/s, 3594.00 output tokens/s\n"
)


def _source(text: str) -> LineSource:
    return LineSource(name="paste.txt", lines=list(enumerate(text.splitlines(), 1)))


def _diagnose(text: str):  # type: ignore[no-untyped-def]
    return diagnose_sources([_source(text)], load_rules())


def test_each_command_and_its_result_is_a_run() -> None:
    runs = split_runs(parse_sources([_source(_RUN_A + _RUN_B_FP8)]).events)
    assert [(r.first, r.last) for r in runs] == [(1, 2), (3, 4)]
    assert runs[1].command()["quantization"] == "fp8"
    assert runs[0].speeds() == {"vllm-bench-throughput output tok/s": 5023.01, "vllm-bench-throughput req/s": 9.81}


def test_the_slower_run_is_the_candidate_whatever_the_order() -> None:
    for text in (_RUN_A + _RUN_B_FP8, _RUN_B_FP8 + _RUN_A):
        pair = best_pair(split_runs(parse_sources([_source(text)]).events))
        assert pair is not None
        assert pair.candidate.command().get("quantization") == "fp8"
        assert pair.differs == {"quantization": (None, "fp8")}
        assert round(pair.ratio, 2) == 1.40


def test_quantized_run_measured_slower_is_ranked_first() -> None:
    diagnosis = _diagnose(_RUN_A + _RUN_B_FP8)
    assert diagnosis.findings[0].rule == "diff-quantized-slower"
    assert diagnosis.findings[0].cause == "quantization-kernel-fallback"
    assert "1.40x slower" in diagnosis.findings[0].explanation
    assert any("2 runs in this input" in w for w in diagnosis.warnings)


def test_a_faster_quantized_run_blames_nothing() -> None:
    faster = _RUN_B_FP8.replace(
        "7.02 requests/s, 10782.00 total tokens/s, 3594.00", "12.1 requests/s, 18000 total tokens/s, 6100.5"
    )
    diagnosis = _diagnose(_RUN_A + faster)
    assert not [f for f in diagnosis.findings if f.cause == "quantization-kernel-fallback"]


def test_another_workload_is_not_a_controlled_comparison() -> None:
    other = _RUN_B_FP8.replace("--input-len 1024", "--input-len 4096")
    assert best_pair(split_runs(parse_sources([_source(_RUN_A + other)]).events)) is None
    assert not _diagnose(_RUN_A + other).findings


def test_another_model_is_not_a_controlled_comparison() -> None:
    other = _RUN_B_FP8.replace("Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct")
    assert best_pair(split_runs(parse_sources([_source(_RUN_A + other)]).events)) is None


def test_a_gap_within_noise_blames_no_setting() -> None:
    close = _RUN_B_FP8.replace("3594.00 output", "4950.00 output")
    diagnosis = _diagnose(_RUN_A + close)
    assert not diagnosis.findings
    assert any("benchmark noise" in w for w in diagnosis.warnings)


def test_one_run_is_not_compared() -> None:
    diagnosis = _diagnose(_RUN_A)
    assert not any("runs in this input" in w for w in diagnosis.warnings)


def test_a_bare_flag_left_out_is_off() -> None:
    text = (
        "$ python3 -m sglang.bench_one_batch --model-path M --batch-size 1 --input-len 128 --output-len 8\n"
        "Decode.  median latency: 0.00738 s, median throughput:    135.50 token/s\n"
        "$ python3 -m sglang.bench_one_batch --model-path M --batch-size 1 --input-len 128 --output-len 8 "
        "--disable-cuda-graph\n"
        "Decode.  median latency: 0.01871 s, median throughput:     53.45 token/s\n"
    )
    pair = best_pair(split_runs(parse_sources([_source(text)]).events))
    assert pair is not None and pair.differs == {"disable_cuda_graph": (False, True)}
    assert _diagnose(text).findings[0].rule == "diff-eager-vs-graphs"


def test_results_noted_above_their_commands_pair_with_them() -> None:
    # The layout of https://github.com/sgl-project/sglang/issues/1008: each result as a comment above its command.
    text = (
        "# Decode.  median latency: 0.00737 s, median throughput:    135.64 token/s\n"
        "python3 -m sglang.bench_latency --model M --batch-size 1 --input 128 --output 8\n"
        "\n"
        "# Decode.  median latency: 0.01871 s, median throughput:     53.45 token/s\n"
        "python3 -m sglang.bench_latency --model M --batch-size 1 --input 128 --output 8 --disable-cuda-graph\n"
    )
    runs = split_runs(parse_sources([_source(text)]).events)
    assert [(r.first, r.last) for r in runs] == [(1, 2), (4, 5)]
    pair = best_pair(runs)
    assert pair is not None and pair.candidate.first == 4
    assert _diagnose(text).findings[0].rule == "diff-eager-vs-graphs"


def test_a_quantized_checkpoint_without_the_flag_is_not_called_unquantized() -> None:
    # An AWQ checkpoint runs AWQ whether or not --quantization names it: no "none" is assumed for it.
    awq = _RUN_A.replace("Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct-AWQ")
    slow = _RUN_B_FP8.replace("Qwen2.5-7B-Instruct", "Qwen2.5-7B-Instruct-AWQ").replace("fp8", "awq")
    diagnosis = _diagnose(awq + slow)
    assert any("2 runs in this input" in w for w in diagnosis.warnings)
    assert not [f for f in diagnosis.findings if f.rule == "diff-quantized-slower"]


def test_results_at_another_concurrency_are_not_compared() -> None:
    def run(flag: str, concurrency: int, tok_s: float) -> str:
        return (
            f"vllm serve meta-llama/Llama-3.1-8B-Instruct --port 9001{flag}\n"
            "============ Serving Benchmark Result ============\n"
            "Successful requests:                     80\n"
            f"Maximum request concurrency:             {concurrency}\n"
            f"Output token throughput (tok/s):         {tok_s}\n"
            "==================================================\n"
        )

    text = run("", 64, 4100.0) + run(" --enforce-eager", 1, 96.0)
    assert best_pair(split_runs(parse_sources([_source(text)]).events)) is None
    same = run("", 1, 139.4) + run(" --enforce-eager", 1, 96.0)
    pair = best_pair(split_runs(parse_sources([_source(same)]).events))
    assert pair is not None and pair.measure == "vllm-bench-serve output tok/s at concurrency 1"
    assert pair.differs == {"enforce_eager": (False, True)}


_SERVE_RESULT = (
    "============ Serving Benchmark Result ============\n"
    "Successful requests:                     200\n"
    "Maximum request concurrency:             16\n"
    "Benchmark duration (s):                  {duration}\n"
    "Output token throughput (tok/s):         {output}\n"
    "==================================================\n"
)


def _labelled(first: str, second: str, slow: str = "531.06", fast: str = "989.01") -> str:
    return (
        f"{first}\n{_SERVE_RESULT.format(duration='96.41', output=slow)}\n"
        f"{second}\n{_SERVE_RESULT.format(duration='51.77', output=fast)}"
    )


def test_a_prose_label_above_results_begins_and_names_a_run() -> None:
    parsed = parse_sources([_source(_labelled("With --enforce-eager:", "Without --enforce-eager:"))])
    runs = split_runs(parsed.events, parsed.lookup)
    assert [(r.label, r.first) for r in runs] == [("With --enforce-eager", 2), ("Without --enforce-eager", 10)]
    # without the evidence lines the labels are not seen: one run, as before
    assert len(split_runs(parsed.events)) == 1


def test_the_setting_a_label_names_is_the_one_that_differs() -> None:
    diagnosis = _diagnose(_labelled("With --enforce-eager:", "Without --enforce-eager:"))
    assert diagnosis.findings[0].rule == "diff-eager-vs-graphs"
    assert '("With --enforce-eager") 1.86x slower' in diagnosis.findings[0].explanation
    assert any("enforce_eager False -> True" in w for w in diagnosis.warnings)


def test_labels_that_name_no_known_setting_blame_nothing() -> None:
    diagnosis = _diagnose(_labelled("baseline", "after the upgrade"))
    assert not [f for f in diagnosis.findings if f.rule.startswith("diff-")]
    # the gap is still said, with the runs' names
    assert any('("baseline") ran 1.86x slower than' in w and "no setting is blamed" in w for w in diagnosis.warnings)


def test_a_log_line_above_results_is_not_a_label() -> None:
    text = _labelled(
        "INFO 05-01 14:39:06 [api_server.py:1] vLLM API server version 0.11.0",
        "INFO 05-01 14:49:06 [api_server.py:1] vLLM API server version 0.11.0",
    )
    parsed = parse_sources([_source(text)])
    assert [r.label for r in split_runs(parsed.events, parsed.lookup)] == [None]


def test_label_settings_read_flags_short_settings_formats_and_graphs() -> None:
    assert label_settings("Without --enforce-eager:", "vllm") == {"enforce_eager": False}
    assert label_settings("with --tensor-parallel-size 4", "vllm") == {"tensor_parallel_size": 4}
    assert label_settings("**TP=2**", "vllm") == {"tensor_parallel_size": 2}
    assert label_settings("tp 4, no CUDA graphs", "sglang") == {"tp_size": 4, "disable_cuda_graph": True}
    assert label_settings("For FP8:", "vllm") == {"quantization": "fp8"}
    assert label_settings("For FP16:", "vllm") == {"quantization": "none"}
    assert label_settings("FP8 vs BF16", "vllm") == {}  # two formats: which one ran is not said
    assert label_settings("AWQ_MARLIN", "vllm") == {"quantization": "awq_marlin"}  # the kernel is the method
    assert label_settings("AWQ", "vllm") == {"quantization": "awq"}
    assert label_settings("eager mode", "vllm") == {"enforce_eager": True}
    assert label_settings("with speculative decoding", "vllm") == {}
    assert label_settings("baseline", "unknown-engine") == {}
    assert label_settings('When "VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1" is set', "vllm") == {
        "attention_backend": "TRITON_ATTN"
    }
    assert label_settings("When using FlashAttnBackend:", "vllm") == {"attention_backend": "FLASH_ATTN"}
    assert label_settings("FLASHINFER vs FLASH_ATTN", "vllm") == {}  # two backends: which one ran is not said
    assert label_settings("without FlashInfer", "vllm") == {}


_REALWORLD8 = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld8"


def _diagnose_file(name: str):  # type: ignore[no-untyped-def]
    path = _REALWORLD8 / name
    return _diagnose(path.read_text(encoding="utf-8"))


def test_a_heading_above_the_command_names_the_run_below_it() -> None:
    # Two gsm8k runs (SGLang benchmark/gsm8k/bench_sglang.py), each under a Markdown heading that sits above the
    # command and its fence; the second heading turns the decode CUDA graph off in its second clause.
    diagnosis = _diagnose_file("sglang-b201.log")
    assert diagnosis.findings[0].cause == "cuda-graphs-disabled"
    assert diagnosis.findings[0].rule == "diff-eager-vs-graphs"


def test_a_graph_clause_negated_after_its_mention_is_eager() -> None:
    label = "When only piecewise cuda graph is enabled but decode cuda graph is disabled"
    assert label_settings(label, "sglang") == {"disable_cuda_graph": True}
    assert label_settings("When both decode cuda graph and piecewise cuda graph is enabled", "sglang") == {
        "disable_cuda_graph": False
    }
    assert label_settings("With CUDA graph disabled", "vllm") == {"enforce_eager": True}


def test_the_spec_decode_example_output_is_read_as_acceptance() -> None:
    # vLLM examples/offline_inference/spec_decode.py: the engine's counters printed by the example, EAGLE-3 k=3.
    diagnosis = _diagnose_file("vllm-b108.log")
    assert diagnosis.verdict.kind != "not-a-log"
    assert diagnosis.findings[0].cause == "spec-low-acceptance"


def test_a_heading_names_the_slow_path_clause_by_clause() -> None:
    # constructed headings
    from logdoctor.pipeline.runlabels import heading_cause

    assert heading_cause("results of CPU + DISK offload, no optimization") == (
        "cpu-offload-or-swap",
        "results of CPU + DISK offload",
    )
    assert heading_cause("Result (without Moe config)") is not None
    assert heading_cause("Result (without Moe config)")[0] == "quantization-kernel-fallback"  # type: ignore[index]
    assert heading_cause("Before tuning") == ("quantization-kernel-fallback", "Before tuning")
    assert heading_cause("After tuning") is None  # the tuned kernel is the fast path
    assert heading_cause("Result (with Moe config)") is None
    assert heading_cause("Baseline, no offload") is None
    assert heading_cause("With CUDA graphs") is None
    assert heading_cause("No CUDA graphs") == ("cuda-graphs-disabled", "No CUDA graphs")


def test_one_run_under_a_heading_that_names_a_slow_setting_is_a_modest_finding() -> None:
    # sglang.bench_serving against vLLM with LMCache's CPU and disk offload, pasted without its title line
    diagnosis = _diagnose_file("vllm-b005.log")
    top = diagnosis.findings[0]
    assert (top.cause, top.rule) == ("cpu-offload-or-swap", "offload-warned")
    assert top.score < 50
    assert any(e.line == 1 for e in top.evidence)
    for name in ("sglang-b001.log", "sglang-b203.log"):
        assert _diagnose_file(name).findings[0].cause == "quantization-kernel-fallback"


def test_a_heading_that_names_no_slow_setting_gives_no_finding() -> None:
    # constructed: the same result block under a heading that names the fast path
    block = (_REALWORLD8 / "vllm-b005.log").read_text(encoding="utf-8").splitlines()[1:]
    diagnosis = _diagnose("# results without offload\n" + "\n".join(block) + "\n")
    assert not [f for f in diagnosis.findings if f.cause == "cpu-offload-or-swap"]


def test_bench_one_batch_warm_up_and_measured_pass_are_not_two_deployments() -> None:
    # sglang.bench_one_batch: the warm-up pass, then `Benchmark ...` and the measured pass
    diagnosis = _diagnose_file("sglang-b207.log")
    assert [(f.cause, f.rule) for f in diagnosis.findings] == [("torch-compile-or-warmup", "bench-warmup-pass")]
    assert diagnosis.findings[0].score < 50
    assert not any("runs in this input" in w for w in diagnosis.warnings)


# constructed: one user script run twice, its own flag the only difference (LLM.generate's progress bars)
_SCRIPT_RUNS = """```bash
python bench_offline.py

Processed prompts: 100%|█| 10/10 [00:33<00:00,  3.35s/it, est. speed input: 40.85 toks/s, output: 305.54 toks/s]
```

```bash
python bench_offline.py --with_speculation True

Processed prompts: 100%|█| 10/10 [00:28<00:00,  2.85s/it, est. speed input: 48.08 toks/s, output: 74.31 toks/s]
```
"""


def test_the_words_only_one_scripts_command_has_name_its_run() -> None:
    diagnosis = _diagnose(_SCRIPT_RUNS)
    top = diagnosis.findings[0]
    assert (top.cause, top.rule) == ("spec-net-loss", "spec-warned")
    assert "4.11x slower" in top.explanation and "--with_speculation True" in top.explanation


def test_speculation_named_by_the_faster_run_is_no_net_loss() -> None:
    # constructed: the same two runs with their commands swapped, so the run with speculation is the faster
    first, second = _SCRIPT_RUNS.split("\n\n```bash\n")
    swapped = first.replace("bench_offline.py", "bench_offline.py --with_speculation True") + "\n\n```bash\n"
    swapped += second.replace("bench_offline.py --with_speculation True", "bench_offline.py")
    assert not [f for f in _diagnose(swapped).findings if f.cause == "spec-net-loss"]


def test_a_single_run_with_speculation_says_nothing_of_its_cost() -> None:
    one = _SCRIPT_RUNS.split("\n\n```bash\n")[1]
    assert not [f for f in _diagnose("```bash\n" + one).findings if f.cause == "spec-net-loss"]


_REALWORLD9 = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld9"


def _diagnose_case(case: str):  # type: ignore[no-untyped-def]
    return _diagnose((_REALWORLD9 / f"{case}.log").read_text())


def test_runs_whose_commands_are_fenced_flag_lists_are_compared() -> None:
    # sglang-c204: three runs, each a fenced list of flags and a result block in an admonition, at 512 in flight
    diagnosis = _diagnose_case("sglang-c204")
    assert diagnosis.findings[0].rule == "diff-cap-below-client"
    assert any("max_running_requests 256 -> 64" in w for w in diagnosis.warnings)


def test_a_default_the_engine_computes_leaves_the_next_controlled_pair_to_explain() -> None:
    # sglang-c203: `auto` (no --mem-fraction-static) against 0.85 is the widest gap, but the default's value is not
    # known; 0.8 against 0.85 differs in as few settings and is explained
    diagnosis = _diagnose_case("sglang-c203")
    assert diagnosis.findings[0].rule == "diff-lower-memory-fraction"
    assert diagnosis.findings[0].cause == "kv-cache-pressure"
    assert any("mem_fraction_static 0.85 -> 0.8" in w for w in diagnosis.warnings)


def test_speculation_slower_in_aggregate_on_the_same_benchmark_is_a_net_loss() -> None:
    # sglang-c202: with EAGLE each request decodes faster (TPOT 42 against 306 ms) but the run is 3x slower overall
    diagnosis = _diagnose_case("sglang-c202")
    assert diagnosis.findings[0].rule == "diff-spec-changed"
    assert diagnosis.findings[0].cause == "spec-net-loss"


def _flag_run(flags: str, output: float) -> str:
    # constructed, in the layout of fixtures/logs/realworld9/vllm-c206.log (a fenced flag list, then the result block)
    lines = "".join(f"  {flag}\n" for flag in flags.split())
    return (
        f"- Backend Parameters:\n  ```bash\n{lines}  ```\n\n"
        "    ============ Serving Benchmark Result ============\n"
        "    Successful requests:                     1000\n"
        "    Maximum request concurrency:             512\n"
        f"    Output token throughput (tok/s):         {output}\n"
        "    ==================================================\n\n"
    )


def test_a_client_above_the_cap_binds_it_only_beyond_vllm_data_parallel_ranks() -> None:
    one_rank = _flag_run("--max-num-seqs=512", 5312.0) + _flag_run("--max-num-seqs=256", 4974.0)
    found = _diagnose(one_rank).findings
    assert found[0].cause == "chunked-prefill-or-batching-config"
    # the pair's regression rule and the slower run's own: its cap of 256 under the client's 512
    assert {"diff-cap-below-client", "cap-below-client"} <= {f.rule for f in found}
    # two engines of 256 each run the client's 512 at once: nothing says requests waited
    two_ranks = _flag_run("--data-parallel-size=2 --max-num-seqs=512", 5312.0) + _flag_run(
        "--data-parallel-size=2 --max-num-seqs=256", 4974.0
    )
    assert all(f.rule not in ("diff-cap-below-client", "cap-below-client") for f in _diagnose(two_ranks).findings)


def test_prose_with_a_keyword_still_labels_the_run_below_it() -> None:
    # a serving benchmark block per backend, the second cut after its duration (realworld9 vllm-c002, a thread's
    # paste): the label above the second block holds an attention line type's keyword and names the run
    path = _REALWORLD8.parent / "realworld9" / "vllm-c002.log"
    text = path.read_text(encoding="utf-8")
    runs = split_runs(parse_sources([_source(text)]).events, parse_sources([_source(text)]).lookup)
    assert [run.label for run in runs] == [
        'When "VLLM_ATTENTION_BACKEND=TRITON_ATTN_VLLM_V1" is set, vLLM runs very slowly',
        "When using FlashAttnBackend",
    ]
    # the cut block's request rate by the client's definition, completed / duration
    assert runs[1].speeds() == {"vllm-bench-serve req/s": 100 / 36.24}
    top = _diagnose(text).findings[0]
    assert (top.cause, top.rule) == ("attention-backend-fallback", "diff-slower-attention")
    assert "14.06x slower" in top.explanation


def test_labels_commands_and_flag_lists_are_read_inside_a_wrapper() -> None:
    # the same pastes quoted in a GitHub reply (`> `) and under docker's timestamps: a wrapper changes nothing
    realworld9 = _REALWORLD8.parent / "realworld9"
    for name, cause in (
        ("vllm-c001.log", "spec-net-loss"),
        ("vllm-c002.log", "attention-backend-fallback"),
        ("vllm-c206.log", "chunked-prefill-or-batching-config"),
    ):
        lines = (realworld9 / name).read_text(encoding="utf-8").splitlines()
        for prefix in ("> ", "2025-09-22T10:00:00.123456789Z "):
            wrapped = "\n".join(prefix + line for line in lines) + "\n"
            top = _diagnose(wrapped).findings[0]
            assert top.cause == cause, (name, prefix)


def test_a_count_too_large_for_a_float_gives_no_request_rate() -> None:
    # constructed: a mangled paste whose successful count has 400 digits (a fuzz input): no rate, no exception
    block = (
        "============ Serving Benchmark Result ============\n"
        f"Successful requests:                     {'9' * 400}\n"
        "Benchmark duration (s):                  191.31\n"
        "Output token throughput (tok/s):         1505.38\n"
        "==================================================\n"
    )
    runs = split_runs(parse_sources([_source(block)]).events)
    assert all("req/s" not in key for run in runs for key in run.speeds())
    _diagnose(block + "\n" + block)


# constructed, in the layout of a thread's paste of two runs of a vLLM fork: each command in Markdown's inline code
# (longer than a label, the second wrapped mid-word by the paste) above the one stats line it produced
_INLINE_RUNS = (
    "with eager\n"
    "`aphrodite run Qwen/Qwen2.5-7B-Instruct-AWQ --max-model-len 5000 --swap-space 0 --max-num-seqs 1 "
    "--disable-log-requests --enforce-eager --served-model-name model -tp 2`\n"
    "gives\n"
    "`INFO:     Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 31.4 tokens/s, Running: 1 reqs, "
    "Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.3%, CPU KV cache usage: 0.0%.`\n"
    "\n"
    "without eager\n"
    "`aphrodite run Qwen/Qwen2.5-7B-Instruct-AWQ --max-model-len 5000 --swap-space 0 --max-num-seqs 1 "
    "--disable-log-requests --served-model-name mo\n"
    "del -tp 2`\n"
    "gives\n"
    "`INFO:     Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 57.8 tokens/s, Running: 1 reqs, "
    "Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.2%, CPU KV cache usage: 0.0%.`\n"
)


def test_commands_in_inline_code_above_one_stats_line_each_are_compared() -> None:
    # the run with --enforce-eager measured 1.84x slower; its wrapped twin's own words set nothing, so its whole
    # command stands for it
    diagnosis = _diagnose(_INLINE_RUNS)
    assert diagnosis.findings[0].rule == "diff-eager-vs-graphs"
    assert "1.84x slower" in diagnosis.findings[0].explanation


def test_one_stats_line_of_an_unnamed_run_is_no_measurement() -> None:
    # the same line with nothing that names the run: one stats line is weak evidence of a server's speed
    runs = split_runs(parse_sources([_source(_INLINE_RUNS.splitlines()[3] + "\n")]).events)
    assert [run.speeds() for run in runs] == [{}]


# Constructed from `vllm bench throughput`'s output format; the two commands differ in one flag that no regression
# rule reads as slow, and the run with it is 1.37x slower.
_WITH_CHUNKED = (
    "vllm bench throughput --model m --input-len 1024 --output-len 50 --num-prompts 500 --max-num-seqs 8\n"
    "Throughput: 29.77 requests/s, 31975.46 total tokens/s, 1488.62 output tokens/s\n"
)
_WITHOUT = (
    "vllm bench throughput --model m --input-len 1024 --output-len 50 --num-prompts 500\n"
    "Throughput: 40.88 requests/s, 43903.77 total tokens/s, 2043.94 output tokens/s\n"
)


def test_a_measured_pair_no_rule_explains_is_the_settings_cause() -> None:
    """The user's controlled pair measured the one setting's cost: a modest finding of the cause its words name."""
    diagnosis = _diagnose(_WITHOUT + _WITH_CHUNKED)
    top = diagnosis.findings[0]
    assert top.cause == "chunked-prefill-or-batching-config" and top.score < 50
    assert "1.37x slower" in top.explanation and "max_num_seqs (default) -> 8" in top.explanation


def test_a_pair_whose_slower_run_lacks_the_setting_blames_nothing() -> None:
    faster = _WITH_CHUNKED.replace("29.77 requests/s, 31975.46 total tokens/s, 1488.62", "50.1 requests/s, 5e4 t, 2600")
    assert not _diagnose(_WITHOUT + faster).findings


# Constructed from `sglang.bench_serving`'s output format: the heading above the result (not above the launch
# command) says how the run ran, and the block is cut after its duration, as a paste's length limit cuts it.
_HEADED_RESULT = (
    "Deploy:\n"
    "```bash\n"
    "python3 -m sglang.launch_server --model-path /m --tp 8\n"
    "```\n"
    "Result (without MoE config):\n"
    "```\n"
    "============ Serving Benchmark Result ============\n"
    "Backend:                                 sglang\n"
    "Max request concurrency:                 8\n"
    "Successful requests:                     200\n"
    "Benchmark duration (s):                  200.99\n"
    "Total input tokens:                      103005\n"
    "Total generated tokens:                  53590\n"
)


def test_the_heading_above_a_cut_result_names_its_setting() -> None:
    result = next(e for e in parse_sources([_source(_HEADED_RESULT)]).events if isinstance(e, BenchmarkResult))
    assert result.output_throughput == round(53590 / 200.99, 4)  # generated tokens over the duration
    top = _diagnose(_HEADED_RESULT).findings[0]
    assert top.cause == "quantization-kernel-fallback" and "without MoE config" in top.explanation


# real: fixtures/logs/realworld13/vllm-c950.log lines 4-13, 58-71 and 94-104 (cut: the token counts, the latency
# rows, a comment line and trailing spaces left out), vLLM 0.6 on eight MI300X: the plain run, two TP=2 replicas
# and a speculative run with vLLM's old `--speculative_model`
_SERVE = "VLLM_USE_TRITON_FLASH_ATTN=0 vllm serve {} --gpu_memory_utilization=0.96 --max-num-seqs 2048{}\n"


def _served(heading: str, args: str, duration: str, rate: str, output: str, total: str, then: str = "") -> str:
    return (
        heading
        + _SERVE.format(args, then)
        + "\n============ Serving Benchmark Result ============\n"
        + "Successful requests:                     1024\n"
        + f"Benchmark duration (s):                  {duration}\n"
        + f"Request throughput (req/s):              {rate}\n"
        + f"Output token throughput (tok/s):         {output}\n"
        + f"Total Token throughput (tok/s):          {total}\n"
        + "==================================================\n"
    )


_TP8 = _served(
    "# tp8\n",
    "-tp 8 meta-llama/Llama-3.1-70B-Instruct --num-scheduler-steps 12",
    "63.81",
    "16.05",
    "2993.85",
    "6455.63",
)
_TP2 = _served(
    "", "-tp 2 meta-llama/Llama-3.1-70B-Instruct --num-scheduler-steps 12", "286.06", "3.58", "671.54", "1443.76"
)
_SD = _served(
    "# sd 1B\n",
    "-tp 8 meta-llama/Llama-3.1-70B-Instruct",
    "116.32",
    "8.80",
    "1651.57",
    "3550.73",
    then=" --speculative_model meta-llama/Llama-3.2-1B-Instruct --num_speculative_tokens 5",
)


def test_where_the_most_controlled_pair_has_no_rule_a_pair_differing_in_more_settings_is_tried() -> None:
    # tp8 against tp2 differs in one setting no regression rule reads (another parallel layout); tp8 against the
    # speculative run differs in three, and speculation added where the run is slower is the net loss
    diagnosis = _diagnose(_TP8 + _TP2 + _SD)
    assert diagnosis.findings[0].rule == "diff-spec-changed"
    assert diagnosis.findings[0].cause == "spec-net-loss"
    assert any("num_scheduler_steps 12 -> (default)" in w for w in diagnosis.warnings)  # the confounder is named
    # alone, the two runs without speculation blame nothing
    assert not _diagnose(_TP8 + _TP2).findings


# Constructed from fixtures/logs/realworld13/vllm-c951.log lines 4-14 (vLLM 0.5.4, an offline `benchmark_throughput.py`
# run that starts its own engine): the same run again with `enforce_eager=True` in the engine's config, its graph
# capture lines left out and its speeds lowered. Each run is a server start of its own.
_C951 = (Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld13" / "vllm-c951.log").read_text()
_GRAPHS = "\n".join(_C951.splitlines()[3:14]) + "\n"
_EAGER = (
    "\n".join(
        line.replace("enforce_eager=False", "enforce_eager=True").replace("13:5", "14:1")
        for line in _GRAPHS.splitlines()
        if "CUDA graph" not in line and "Graph capturing" not in line and "Capturing the model" not in line
    )
    .replace("output: 3354.88 toks/s", "output: 2101.40 toks/s")
    .replace("13.38 requests/s, 4681.85 tokens/s", "8.38 requests/s, 2932.60 tokens/s")
    + "\n"
)


def test_runs_pasted_as_server_starts_of_their_own_are_compared_across_the_starts() -> None:
    diagnosis = _diagnose(_GRAPHS + _EAGER)  # the eager run last: the start diagnosed is the slower one
    assert diagnosis.findings[0].rule == "diff-eager-vs-graphs"
    assert "1.60x slower" in diagnosis.findings[0].explanation
    assert any("2 server starts" in w for w in diagnosis.warnings)


def test_a_slower_earlier_start_is_noted_not_blamed_on_the_start_diagnosed() -> None:
    # eager first, then the graphs: the last start, the one diagnosed, has nothing left to fix
    diagnosis = _diagnose(_EAGER + _GRAPHS)
    assert not [f for f in diagnosis.findings if f.rule == "diff-eager-vs-graphs"]
    assert any("the slower run is not the server start diagnosed here" in w for w in diagnosis.warnings)
