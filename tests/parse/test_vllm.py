"""vLLM grammars: every VERBATIM (and the important RENDERED) line of catalogue/vllm.md through the full pipeline.

Each case is a log excerpt and the events it must produce: the event type and the normalised values
(rates 0..1, GiB, seconds, mean acceptance length with the bonus token). Values not named are not checked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logdoctor.engines import vllm
from logdoctor.engines.vllm import spec as vllm_spec
from logdoctor.events import EventBase
from logdoctor.parse.pipeline import EventStream, parse_text

Expect = list[tuple[str, dict[str, Any]]]

CORPUS = Path("/work/shared/corpus/realworld")


def _matches(actual: Any, expected: Any) -> bool:
    if isinstance(expected, float):
        return isinstance(actual, int | float) and actual == pytest.approx(expected, rel=1e-3, abs=1e-6)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(k in actual and _matches(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(_matches(a, e) for a, e in zip(actual, expected, strict=True))
    return bool(actual == expected)


def _find(events: list[EventBase], type_: str, fields: dict[str, Any]) -> EventBase | None:
    for event in events:
        data = event.model_dump()
        if event.type == type_ and all(k in data and _matches(data[k], v) for k, v in fields.items()):
            return event
    return None


def _describe(events: list[EventBase]) -> str:
    return "\n".join(
        str(e.model_dump(exclude_none=True, exclude={"source", "timestamp", "level", "process", "message"}))
        for e in events
    )


def case(case_id: str, text: str, *expected: tuple[str, dict[str, Any]]) -> Any:
    return pytest.param(text, list(expected), id=case_id)


# --- §2 startup configuration -------------------------------------------------------------------

STARTUP = [
    case(
        "version-0.5.1",
        "INFO 07-08 11:49:48 api_server.py:206] vLLM API server version 0.5.1",
        ("engine_version", {"version": "0.5.1", "origin": "version line", "engine": "vllm"}),
    ),
    case(
        "version-dev-build",
        "INFO 02-07 18:06:00 api_server.py:840] vLLM API server version 0.7.3.dev21+g0630d453",
        ("engine_version", {"version": "0.7.3.dev21+g0630d453"}),
    ),
    case(
        "version-serving-model-rendered",
        "(APIServer pid=1) INFO 05-20 12:00:00 [utils.py:290] vLLM server version 0.21.0, serving model Qwen/Qwen3-8B",
        ("engine_version", {"version": "0.21.0", "model": "Qwen/Qwen3-8B"}),
    ),
    case(
        "logo-0.18",
        "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297] \n"
        "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]        █     █     █▄   ▄█\n"
        "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.18.0\n"
        "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]   █▄█▀ █     █     █     █  model   "
        "/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf\n"
        "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]    ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀\n"
        "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297] ",
        ("engine_version", {"version": "0.18.0", "origin": "logo"}),
        ("engine_version", {"model": "/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf", "origin": "logo"}),
    ),
    case(
        "non-default-args-0.18",
        "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:233] non-default args: {'model_tag': "
        "'/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf', 'model': "
        "'/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf', 'tokenizer': '/models/Qwen/Qwen3-8B', "
        "'hf_config_path': '/models/Qwen/Qwen3-8B', 'max_model_len': 16384, 'served_model_name': ['Qwen/Qwen3-8B'], "
        "'gpu_memory_utilization': 0.79, 'kv_cache_dtype': 'fp8', 'kv_offloading_size': 16.0, 'max_num_seqs': 16, "
        "'disable_hybrid_kv_cache_manager': True, 'disable_log_stats': True}",
        (
            "startup_config",
            {
                "origin": "non-default args",
                "truncated": False,
                "config": {
                    "max_model_len": 16384,
                    "served_model_name": ["Qwen/Qwen3-8B"],
                    "gpu_memory_utilization": 0.79,
                    "kv_cache_dtype": "fp8",
                    "kv_offloading_size": 16.0,
                    "disable_log_stats": True,
                },
            },
        ),
    ),
    case(
        "non-default-args-spec-rendered",
        "(APIServer pid=1) INFO 05-08 16:20:01 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3.6-27B', "
        "'model': 'Qwen/Qwen3.6-27B', 'tensor_parallel_size': 2, 'max_model_len': 65536, 'gpu_memory_utilization': "
        "0.92, 'enable_prefix_caching': True, 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}",
        (
            "startup_config",
            {
                "config": {
                    "tensor_parallel_size": 2,
                    "speculative_config": {"method": "mtp", "num_speculative_tokens": 3},
                }
            },
        ),
    ),
    case(
        "namespace-0.7",
        "INFO 02-07 18:06:00 api_server.py:841] args: Namespace(subparser='serve', model_tag='.', config='', "
        "host=None, port=8000, ... , dispatch_function=<function ServeSubcommand.cmd at 0x7dc10ca6fba0>)",
        ("startup_config", {"origin": "namespace", "config": {"subparser": "serve", "model_tag": ".", "port": 8000}}),
    ),
    case(
        "namespace-v0-spec-flags-rendered",
        "INFO 11-20 10:00:00 api_server.py:585] args: Namespace(model='/models/Llama-70B', "
        "speculative_model='/models/Llama-8B', num_speculative_tokens=3, speculative_draft_tensor_parallel_size=4, "
        "tensor_parallel_size=4)",
        (
            "startup_config",
            {"origin": "namespace", "config": {"num_speculative_tokens": 3, "speculative_model": "/models/Llama-8B"}},
        ),
    ),
    case(
        "engine-init-0.20.2-mtp",
        "(EngineCore pid=129) INFO 05-06 06:05:38 [core.py:109] Initializing a V1 LLM engine (v0.20.2rc1.dev49+g9b4e83934)"
        " with config: model='/model', speculative_config=SpeculativeConfig(method='mtp', "
        "model='google/gemma-4-31B-it-assistant', num_spec_tokens=4), tokenizer='/model', skip_tokenizer_init=False, "
        "tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, "
        "max_seq_len=65536, download_dir=None, load_format=auto, tensor_parallel_size=1, pipeline_parallel_size=1, "
        "data_parallel_size=1, decode_context_parallel_size=1, dcp_comm_backend=ag_rs, disable_custom_all_reduce=False,"
        " quantization=compressed-tensors, quantization_config=None, enforce_eager=False, "
        "enable_return_routed_experts=False, kv_cache_dtype=fp8, device_config=cuda, structured_outputs_config="
        "StructuredOutputsConfig(backend='auto', ...), observability_config=ObservabilityConfig("
        "show_hidden_metrics_for_version=None, ..., cudagraph_metrics=False, enable_layerwise_nvtx_tracing=False, "
        "enable_mfu_metrics=False, enable_mm_processor_stats=False, enable_logging_iteration_details=F...",
        (
            "engine_version",
            {"version": "0.20.2rc1.dev49+g9b4e83934", "engine_generation": "V1", "origin": "engine init"},
        ),
        (
            "startup_config",
            {
                "origin": "engine init",
                "truncated": True,
                "config": {
                    "speculative_config": {"method": "mtp", "num_spec_tokens": 4},
                    "quantization": "compressed-tensors",
                    "kv_cache_dtype": "fp8",
                    "max_seq_len": 65536,
                    "enforce_eager": False,
                    "dtype": "torch.bfloat16",
                },
            },
        ),
    ),
    case(
        "engine-init-0.19.1-elided",
        "(EngineCore pid=1992630) INFO 08-26 22:26:28 [core.py:105] Initializing a V1 LLM engine (v0.19.1) with config: "
        "model='castorini/rank_vicuna_7b_v1', speculative_config=None, ... tensor_parallel_size=1, ..., "
        "enforce_eager=False, ... enable_prefix_caching=True, enable_chunked_prefill=...",
        ("engine_version", {"version": "0.19.1"}),
        (
            "startup_config",
            {
                "config": {
                    "model": "castorini/rank_vicuna_7b_v1",
                    "speculative_config": None,
                    "tensor_parallel_size": 1,
                    "enforce_eager": False,
                    "enable_prefix_caching": True,
                }
            },
        ),
    ),
    case(
        "engine-init-0.8.3-json-compilation-config",
        "INFO 04-04 16:30:36 [core.py:61] Initializing a V1 LLM engine (v0.8.3.dev244+g8b3a4a17e) with config: "
        'model=\'google/gemma-3-1b-it\', speculative_config=None, ... compilation_config={"level":3,"custom_ops":'
        '["none"],"splitting_ops":["vllm.unified_attention","vllm.unified_attention_with_output"],"use_inductor":true,'
        '"compile_sizes":[],"use_cudagraph":true,"cudagraph_num_of_warmups":1,"cudagraph_capture_sizes":[512,504,496,'
        "488,480...",
        ("engine_version", {"version": "0.8.3.dev244+g8b3a4a17e"}),
        (
            "startup_config",
            {
                "truncated": True,
                "config": {
                    "model": "google/gemma-3-1b-it",
                    "compilation_config": {"level": 3, "use_cudagraph": True, "custom_ops": ["none"]},
                },
            },
        ),
    ),
    case(
        "engine-init-0.14-dict-compilation-config-rendered",
        "(EngineCore_DP0 pid=7) INFO 01-20 10:00:00 [core.py:93] Initializing a V1 LLM engine (v0.14.0) with config: "
        "model='Qwen/Qwen3-8B', speculative_config=None, enforce_eager=False, compilation_config={'mode': "
        "<CompilationMode.VLLM_COMPILE: 3>, 'cudagraph_mode': <CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, "
        "'cudagraph_num_of_warmups': 1, 'cudagraph_capture_sizes': [1, 2, 4, 8, 16, 24, ..., 512], "
        "'cudagraph_copy_inputs': False, 'max_cudagraph_capture_size': 512, 'dynamic_shapes_config': {'type': "
        "<DynamicShapesType.BACKED: 'backed'>}, 'local_cache_dir': None, 'static_all_moe_layers': []}",
        (
            "startup_config",
            {
                "truncated": False,
                "config": {
                    "compilation_config": {
                        "mode": {"__enum__": "CompilationMode.VLLM_COMPILE", "value": 3},
                        "cudagraph_mode": {"__enum__": "CUDAGraphMode.FULL_AND_PIECEWISE", "value": [2, 1]},
                        "max_cudagraph_capture_size": 512,
                    }
                },
            },
        ),
    ),
    case(
        "engine-init-v0-0.7.1",
        "INFO 02-02 17:59:18 llm_engine.py:232] Initializing a V0 LLM engine (v0.7.1) with config: "
        "model='/home/bruce/Downloads/models/Qwen2.5-32B-Instruct', speculative_config=None, ... "
        "tensor_parallel_size=2, ..., enforce_eager=True, kv_cache_dtype=auto,  device_config=cuda, ... "
        'compilation_config={"splitting_ops":[],"compile_sizes":[],"cudagraph_capture_sizes":[],"max_capture_size":0},'
        " use_cached_outputs=True, ",
        ("engine_version", {"version": "0.7.1", "engine_generation": "V0"}),
        (
            "startup_config",
            {
                "truncated": False,
                "config": {
                    "tensor_parallel_size": 2,
                    "enforce_eager": True,
                    "device_config": "cuda",
                    "compilation_config": {"cudagraph_capture_sizes": [], "max_capture_size": 0},
                    "use_cached_outputs": True,
                },
            },
        ),
    ),
    case(
        "engine-init-foreign-header",
        "[2025-05-22 12:33:26] INFO core.py:58: Initializing a V1 LLM engine (v0.8.5) ...",
        ("engine_version", {"version": "0.8.5", "engine_generation": "V1", "level": "INFO"}),
    ),
    case(
        "engine-init-wrapped-by-terminal",
        "(EngineCore_0 pid=2881) INFO 09-04 01:29:00 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with "
        "config: model='Qwen2-7B-Instruct'\n"
        ", speculative_config=None, tokenizer='Qwen2-7B-Instruct', tensor_parallel_si\n"
        'ze=1, enforce_eager=False, compilation_config={"level":3,"cudagraph_capture_sizes":[512,504,4\n'
        '96,8,4,2,1],"max_capture_size":512}\n'
        "(EngineCore_0 pid=2881) INFO 09-04 01:29:05 [default_loader.py:262] Loading weights took 2.68 seconds",
        ("engine_version", {"version": "0.10.1.1"}),
        (
            "startup_config",
            {
                "line": 1,
                "end_line": 4,
                "truncated": False,
                "config": {
                    "model": "Qwen2-7B-Instruct",
                    "tensor_parallel_size": 1,
                    "enforce_eager": False,
                    "compilation_config": {"cudagraph_capture_sizes": [512, 504, 496, 8, 4, 2, 1]},
                },
            },
        ),
        ("compile_time", {"kind": "weights_load", "seconds": 2.68, "line": 5}),
    ),
    case(
        "non-default-args-wrapped-by-terminal",
        "(APIServer pid=2739) INFO 09-04 01:28:28 [utils.py:326] non-default args: {'model_tag': 'Qwen2-7B-Instruct', "
        "'port': 8081, 'model': 'Qwe\n"
        "n2-7B-Instruct', 'max_model_len': 16384, 'gpu_memory_utilization': 0.5}",
        (
            "startup_config",
            {"truncated": False, "config": {"model": "Qwen2-7B-Instruct", "gpu_memory_utilization": 0.5}},
        ),
    ),
    case(
        "dump-input-before-crash-rendered",
        "ERROR 06-15 13:57:57 [dump_input.py:69] Dumping input data for V1 LLM engine (v0.9.1) with config: "
        "model='Qwen/Qwen3-8B', speculative_config=None, ",
        ("engine_version", {"version": "0.9.1", "engine_generation": "V1", "origin": "dump input"}),
    ),
]


# --- §3 speculative decoding --------------------------------------------------------------------

SPEC = [
    case(
        "spec-v1-0.20-mtp-k6",
        "(APIServer pid=13026) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
        "2.87, Accepted throughput: 48.90 tokens/s, Drafted throughput: 157.19 tokens/s, Accepted: 489 tokens, "
        "Drafted: 1572 tokens, Per-position acceptance rate: 0.740, 0.473, 0.309, 0.187, 0.099, 0.057, Avg Draft "
        "acceptance rate: 31.1%",
        (
            "spec_decode_stats",
            {
                "format": "vllm-v1-0.11",
                "interval": True,
                "mean_acceptance_length": 2.87,
                "acceptance_rate": 0.311,
                "num_speculative_tokens": 6,
                "accepted_tokens": 489,
                "drafted_tokens": 1572,
                "num_drafts": 262,
                "accepted_throughput": 48.9,
                "drafted_throughput": 157.19,
                "per_position_acceptance": [0.74, 0.473, 0.309, 0.187, 0.099, 0.057],
            },
        ),
    ),
    case(
        "spec-v1-dflash-k15-low",
        "(APIServer pid=1) INFO 05-01 14:24:50 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.37, "
        "Accepted throughput: 8.90 tokens/s, Drafted throughput: 97.50 tokens/s, Accepted: 89 tokens, Drafted: 975 "
        "tokens, Per-position acceptance rate: 0.600, 0.385, 0.215, 0.108, 0.062, 0.000, 0.000, 0.000, 0.000, 0.000, "
        "0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 9.1%",
        (
            "spec_decode_stats",
            {"mean_acceptance_length": 2.37, "acceptance_rate": 0.091, "num_speculative_tokens": 15, "num_drafts": 65},
        ),
    ),
    case(
        "spec-v1-dflash-k5",
        "(APIServer pid=1) INFO 05-07 04:56:17 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.63, "
        "Accepted throughput: 76.80 tokens/s, Drafted throughput: 235.49 tokens/s, Accepted: 768 tokens, Drafted: 2355 "
        "tokens, Per-position acceptance rate: 0.726, 0.467, 0.240, 0.134, 0.064, Avg Draft acceptance rate: 32.6%",
        ("spec_decode_stats", {"mean_acceptance_length": 2.63, "acceptance_rate": 0.326, "num_speculative_tokens": 5}),
    ),
    case(
        "spec-v1-metrics-120-k3",
        "(APIServer pid=1) INFO 07-06 23:21:13 [metrics.py:120] SpecDecoding metrics: Mean acceptance length: 2.89, "
        "Accepted throughput: 59.80 tokens/s, Drafted throughput: 95.10 tokens/s, Accepted: 598 tokens, Drafted: 951 "
        "tokens, Per-position acceptance rate: 0.814, 0.615, 0.457, Avg Draft acceptance rate: 62.9%",
        ("spec_decode_stats", {"mean_acceptance_length": 2.89, "acceptance_rate": 0.629, "num_speculative_tokens": 3}),
    ),
    case(
        "spec-v1-ascend-zero-acceptance",
        "(APIServer pid=6485) INFO 08-05 20:20:43 [metrics.py:100] SpecDecoding metrics: Mean acceptance length: 1.00, "
        "Accepted throughput: 0.00 tokens/s, Drafted throughput: 1.23 tokens/s, Accepted: 0 tokens, Drafted: 495 "
        "tokens, Per-position acceptance rate: 0.000, 0.000, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 0.0%",
        (
            "spec_decode_stats",
            {"mean_acceptance_length": 1.0, "acceptance_rate": 0.0, "accepted_tokens": 0, "drafted_tokens": 495},
        ),
    ),
    case(
        "spec-v1-pr-review-ordering",
        "(APIServer pid=2236552) INFO 09-09 11:51:35 [metrics.py:96] SpecDecoding metrics: Draft acceptance rate: 88.8%, "
        "Mean acceptance length: 5.44, Accepted throughput: 4.37 tokens/s, Drafted throughput: 4.92 tokens/s, Accepted: "
        "262 tokens, Drafted: 295 tokens, Per-position acceptance rate: 0.983, 0.949, 0.915, 0.881, 0.712",
        ("spec_decode_stats", {"mean_acceptance_length": 5.44, "acceptance_rate": 0.888, "num_speculative_tokens": 5}),
    ),
    case(
        "spec-v1-0.8.3-short",
        "SpecDecoding metrics: Draft acceptance rate: 100.0%, Accepted: 66 tokens, Drafted: 66 tokens",
        (
            "spec_decode_stats",
            {
                "format": "vllm-v1-0.8.3",
                "acceptance_rate": 1.0,
                "accepted_tokens": 66,
                "drafted_tokens": 66,
                "mean_acceptance_length": None,
            },
        ),
    ),
    case(
        "spec-v1-0.8.3-short-k-from-config",
        "INFO 04-04 16:30:36 [core.py:61] Initializing a V1 LLM engine (v0.8.3) with config: model='m', "
        "speculative_config=SpeculativeConfig(method='ngram', model=None, num_spec_tokens=2), compilation_config={}\n"
        "INFO 04-04 16:31:36 [loggers.py:87] SpecDecoding metrics: Draft acceptance rate: 50.0%, Accepted: 66 tokens, "
        "Drafted: 132 tokens",
        ("spec_decode_stats", {"num_speculative_tokens": 2, "num_drafts": 66, "mean_acceptance_length": 2.0}),
    ),
    case(
        "spec-v1-0.8.5-no-bonus-rendered",
        "INFO 04-30 10:00:00 [loggers.py:111] SpecDecoding metrics: Draft acceptance rate: 45.0%, Mean acceptance "
        "length: 0.90, Accepted: 90 tokens, Drafted: 200 tokens, Per-position acceptance rate: 0.600, 0.300",
        ("spec_decode_stats", {"format": "vllm-v1-0.8.5", "mean_acceptance_length": 1.9, "acceptance_rate": 0.45}),
    ),
    case(
        "spec-v1-0.9-bonus-rendered",
        "INFO 06-30 10:00:00 [metrics.py:86] SpecDecoding metrics: Draft acceptance rate: 45.0%, Mean acceptance "
        "length: 1.90, Accepted: 90 tokens, Drafted: 200 tokens, Per-position acceptance rate: 0.600, 0.300",
        ("spec_decode_stats", {"format": "vllm-v1-0.9", "mean_acceptance_length": 1.9, "num_drafts": 100}),
    ),
    case(
        "spec-v1-0.8.5-by-version-line",
        "INFO 04-30 09:59:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
        "INFO 04-30 10:00:00 [loggers.py:111] SpecDecoding metrics: Draft acceptance rate: 45.0%, Mean acceptance "
        "length: 0.90, Accepted: 90 tokens, Drafted: 200 tokens",
        ("spec_decode_stats", {"format": "vllm-v1-0.8.5", "mean_acceptance_length": 1.9}),
    ),
    case(
        "spec-v0-0.6.3-cumulative",
        "INFO 10-16 19:05:47 metrics.py:367] Speculative metrics: Draft acceptance rate: 0.642, System efficiency: "
        "0.598, Number of speculative tokens: 3, Number of accepted tokens: 8547, Number of draft tokens: 13311, "
        "Number of emitted tokens: 10616.",
        (
            "spec_decode_stats",
            {
                "format": "vllm-v0",
                "interval": False,
                "acceptance_rate": 0.642,
                "system_efficiency": 0.598,
                "num_speculative_tokens": 3,
                "accepted_tokens": 8547,
                "drafted_tokens": 13311,
                "emitted_tokens": 10616,
                "num_drafts": 4437,
                "mean_acceptance_length": 2.3926,
            },
        ),
    ),
    case(
        "spec-v0-0.7",
        "INFO 02-06 03:18:09 metrics.py:475] Speculative metrics: Draft acceptance rate: 0.067, System efficiency: "
        "0.167, Number of speculative tokens: 5, Number of accepted tokens: 1, Number of draft tokens: 15, Number of "
        "emitted tokens: 3.",
        ("spec_decode_stats", {"acceptance_rate": 0.067, "system_efficiency": 0.167, "mean_acceptance_length": 1.0}),
    ),
    case(
        "spec-v0-batch-expansion",
        "INFO 10-16 19:00:01 spec_decode_worker.py:300] [Speculative Decoding] Use batch expansion for scoring "
        "proposals.",
        ("perf_warning", {"topic": "spec-scorer-batch-expansion"}),
    ),
    case(
        "spec-v0-mqa-disabled",
        "INFO 10-16 19:00:01 spec_decode_worker.py:290] [Speculative Decoding] Disabling MQA scorer as the MQA is only "
        "available with flash attn backend.",
        ("perf_warning", {"topic": "spec-scorer-batch-expansion"}),
    ),
    case(
        "spec-v0-mqa-scorer",
        "INFO 10-16 19:00:01 spec_decode_worker.py:300] [Speculative Decoding] Use MQA scorer for scoring proposals.",
        ("perf_warning", {"topic": "spec-scorer-mqa"}),
    ),
    case(
        "spec-v0-fallback",
        "WARNING 03-20 10:00:00 [arg_utils.py:1700] Speculative Decoding is not supported by the V1 Engine. Falling "
        "back to V0. ",
        ("engine_version", {"engine_generation": "V0", "origin": "V1 fallback"}),
        ("perf_warning", {"topic": "v0-fallback"}),
    ),
    case(
        "attention-env-v0-fallback",
        "WARNING 03-20 10:00:00 [arg_utils.py:1700] VLLM_ATTENTION_BACKEND=XFORMERS is not supported by the V1 Engine. "
        "Falling back to V0. We recommend to remove VLLM_ATTENTION_BACKEND=XFORMERS from your config in favor of the "
        "V1 Engine.",
        ("engine_version", {"engine_generation": "V0"}),
    ),
    case(
        "spec-dflash-buffer-skipped",
        "(Worker_TP0 pid=147) WARNING 05-06 06:18:10 [qwen3_dflash.py:412] DFlash buffer initialization was skipped. "
        "If dummy weights are not in use, this may indicate an error in weight loading.",
        ("perf_warning", {"topic": "spec-drafter-weights"}),
    ),
    case(
        "spec-draft-eager-0.29",
        "(Worker_TP0 pid=147) WARNING 09-15 12:33:02 [speculator.py:201] DFlash draft attention (TRITON_ATTN) does not "
        "support full CUDA graphs; running the draft eagerly.",
        ("cuda_graph", {"kind": "drafter_eager", "role": "drafter"}),
        ("attention_backend", {"backend": "TRITON_ATTN", "role": "drafter"}),
    ),
    case(
        "spec-eagle-proposer-piecewise",
        "(Worker_TP0 pid=147) WARNING 11-20 10:00:00 [eagle.py:80] Currently the eagle proposer only supports "
        "cudagraph_mode PIECEWISE, if you want the drafter to use cuda graphs, please set "
        "compilation_config.cudagraph_mode to PIECEWISE or FULL_AND_PIECEWISE",
        ("cuda_graph", {"kind": "drafter_eager", "role": "drafter"}),
    ),
    case(
        "spec-token-budget-0.20",
        "(EngineCore pid=43) WARNING 05-06 06:17:48 [vllm.py:1406] max_num_scheduled_tokens is set to 8188 based on the "
        "speculative decoding settings. This may lead to suboptimal performance. Consider increasing "
        "max_num_batched_tokens to accommodate the additional draft token slots, or decrease num_speculative_tokens or "
        "max_num_seqs.",
        ("scheduler_config", {"kind": "spec-token-budget", "value": 8188}),
    ),
    case(
        "spec-token-budget-0.29",
        "(EngineCore pid=43) WARNING 09-15 12:00:00 [vllm.py:1500] max_num_scheduled_tokens is set to 4094 based on the "
        "speculative decoding settings. This may lead to suboptimal performance. Consider increasing "
        "max_num_batched_tokens to accommodate the additional draft token slots, or decrease num_speculative_tokens.",
        ("scheduler_config", {"kind": "spec-token-budget", "value": 4094}),
    ),
    case(
        "spec-loading-drafter",
        "(Worker_TP0 pid=147) INFO 05-06 06:10:00 [gpu_model_runner.py:3100] Loading drafter model...",
        ("perf_warning", {"topic": "spec-drafter"}),
    ),
    case(
        "spec-mtp-multistep-0.11-typo",
        "(APIServer pid=1) WARNING 10-05 10:00:00 [speculative.py:300] Enabling num_speculative_tokens > 1 will "
        "runmultiple times of forward on same MTP layer,which may result in lower acceptance rate",
        ("perf_warning", {"topic": "spec-mtp-multistep"}),
    ),
    case(
        "spec-dflash-capture-model",
        "(Worker_TP0 pid=147) INFO 07-20 10:00:00 [speculator.py:180] Capturing model for DFlash speculator...",
        ("cuda_graph", {"kind": "capture_started", "role": "drafter"}),
    ),
    case(
        "spec-dflash-capture-bar",
        "Capturing dflash CUDA graphs: 100%|██████████| 35/35 [00:04<00:00,  8.10it/s]",
        ("cuda_graph", {"kind": "capture_progress", "role": "drafter", "seconds": 4.0}),
    ),
    case(
        "spec-drafter-flashinfer-non-causal",
        "(Worker_TP0 pid=147) INFO 07-20 10:00:00 [flashinfer.py:500] Using FlashInfer for draft model non-causal "
        "attention; TRTLLM can still be used for target model causal attention.",
        ("attention_backend", {"backend": "FLASHINFER", "role": "drafter"}),
    ),
    case(
        "spec-synthetic-rejection",
        "(APIServer pid=1) INFO 05-20 12:00:00 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B', "
        "'speculative_config': {'method': 'dflash', 'num_speculative_tokens': 15, 'rejection_sample_method': "
        "'synthetic'}}",
        ("startup_config", {"config": {"speculative_config": {"rejection_sample_method": "synthetic"}}}),
        ("perf_warning", {"topic": "spec-synthetic-rejection"}),
    ),
]


# --- §4 periodic stats, preemption --------------------------------------------------------------

STATS = [
    case(
        "stats-v1-0.20-saturated",
        "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache usage: 95.9%, "
        "Prefix cache hit rate: 0.0%",
        (
            "scheduler_stats",
            {
                "format": "vllm-v1",
                "engine_index": 0,
                "prompt_throughput": 0.0,
                "generation_throughput": 1055.3,
                "running": 18,
                "waiting": 43,
                "kv_cache_usage": 0.959,
                "prefix_cache_hit_rate": 0.0,
                "swapped": None,
            },
        ),
    ),
    case(
        "stats-v1-0.20-prefill",
        "(APIServer pid=3646) INFO 05-19 10:13:31 [loggers.py:271] Engine 000: Avg prompt throughput: 12068.8 tokens/s, "
        "Avg generation throughput: 734.9 tokens/s, Running: 18 reqs, Waiting: 33 reqs, GPU KV cache usage: 87.7%, "
        "Prefix cache hit rate: 0.0%",
        ("scheduler_stats", {"prompt_throughput": 12068.8, "waiting": 33, "kv_cache_usage": 0.877}),
    ),
    case(
        "stats-v1-0.10-no-prefix",
        "INFO 07-28 06:40:59 [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation "
        "throughput: 239.2 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 91.2%, Prefix cache hit "
        "rate: 0.0%",
        ("scheduler_stats", {"running": 8, "generation_throughput": 239.2, "kv_cache_usage": 0.912}),
    ),
    case(
        "stats-v1-0.13",
        "(APIServer pid=324144) INFO 12-25 13:39:40 [loggers.py:248] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 149.8 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.3%, "
        "Prefix cache hit rate: 18.8%",
        ("scheduler_stats", {"prefix_cache_hit_rate": 0.188, "kv_cache_usage": 0.033}),
    ),
    case(
        "stats-v1-0.21-all-optional",
        "(APIServer pid=1) INFO 05-20 12:00:10 [loggers.py:271] Engine 000: Avg prompt throughput: 812.4 tokens/s, Avg "
        "generation throughput: 301.7 tokens/s, Running: 24 reqs, Waiting: 9 reqs, Deferred: 3 reqs, Preemptions: 5, "
        "GPU KV cache usage: 99.1%, Prefix cache hit rate: 42.0%, MM cache hit rate: 10.3%",
        (
            "scheduler_stats",
            {
                "waiting": 9,
                "deferred": 3,
                "preemptions": 5,
                "kv_cache_usage": 0.991,
                "prefix_cache_hit_rate": 0.42,
                "extra": {"mm_cache_hit_rate": 0.103},
            },
        ),
    ),
    case(
        "stats-v1-0.33",
        "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:318] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
        "generation throughput: 73.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.1%, Prefix "
        "cache hit rate: 0.0%",
        ("scheduler_stats", {"generation_throughput": 73.2, "kv_cache_usage": 0.041}),
    ),
    case(
        "stats-v1-engines-aggregated",
        "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:318] 2 Engines Aggregated: Avg prompt throughput: 10.0 "
        "tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: "
        "1.0%, Prefix cache hit rate: 0.0%",
        ("scheduler_stats", {"engine_index": None, "running": 2, "extra": {"engines_aggregated": 2}}),
    ),
    case(
        "stats-v1-0.33-xpu-kv-fetch",
        "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:318] Engine 001: Avg prompt throughput: 0.0 tokens/s, Avg "
        "generation throughput: 50.0 tokens/s, Running: 2 reqs, Waiting: 1 reqs, KV fetch: 1 waiting to start, 2 in "
        "progress, 0 completed waiting, XPU KV cache usage: 12.5%",
        (
            "scheduler_stats",
            {
                "engine_index": 1,
                "kv_cache_usage": 0.125,
                "extra": {"kv_cache_device": "XPU", "kv_fetch_waiting": 1, "kv_fetch_in_progress": 2},
            },
        ),
    ),
    case(
        "stats-v1-external-prefix-corrupted",
        "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:271] Engine 000: Avg prompt throughput: 5.0 tokens/s, Avg "
        "generation throughput: 50.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.5%, Prefix "
        "cache hit rate: 50.0%, Corrupted: 1 reqs, External prefix cache hit rate: 25.0%",
        (
            "scheduler_stats",
            {
                "prefix_cache_hit_rate": 0.5,
                "extra": {"external_prefix_cache_hit_rate": 0.25, "corrupted_requests": 1},
            },
        ),
    ),
    case(
        "stats-v0-0.5-docker-timestamp",
        "[2024-07-08 15:17:34] INFO 07-08 07:17:34 metrics.py:334] Avg prompt throughput: 6501.4 tokens/s, Avg "
        "generation throughput: 69.1 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: "
        "15.6%, CPU KV cache usage: 0.0%",
        (
            "scheduler_stats",
            {
                "format": "vllm-v0",
                "prompt_throughput": 6501.4,
                "running": 4,
                "swapped": 0,
                "waiting": 0,
                "kv_cache_usage": 0.156,
                "cpu_kv_cache_usage": 0.0,
            },
        ),
    ),
    case(
        "stats-v0-0.8-bracketed-with-prefix-line",
        "INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 15.5 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: "
        "0.1%.\n"
        "INFO 05-25 06:50:29 [metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU: 90.00%",
        ("scheduler_stats", {"format": "vllm-v0", "cpu_kv_cache_usage": 0.001, "generation_throughput": 15.5}),
        (
            "scheduler_stats",
            {
                "format": "vllm-v0-prefix-cache",
                "prefix_cache_hit_rate": 0.0,
                "extra": {"cpu_prefix_cache_hit_rate": 0.9},
            },
        ),
    ),
    case(
        "stats-v0-wrapped-by-terminal",
        "INFO 07-03 23:23:42 [metrics.py:536] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 616.1 "
        "tokens/s, Running: 32 r\n"
        "eqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 17.6%, CPU KV cache usage: 0.0%.",
        ("scheduler_stats", {"running": 32, "kv_cache_usage": 0.176, "line": 1, "end_line": 2}),
    ),
    case(
        "preemption-v0",
        "WARNING 08-20 10:18:39 scheduler.py:1141] Sequence group 147 is preempted by PreemptionMode.RECOMPUTE mode "
        "because there is not enough KV cache space. This can affect the end-to-end performance. Increase "
        "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
        "total_num_cumulative_preemption=1",
        ("preemption", {"mode": "RECOMPUTE", "cumulative": 1}),
    ),
    case(
        "preemption-v0-0.6.1-wording",
        "WARNING 09-05 10:00:00 scheduler.py:1089] Sequence group 12 is preempted in PreemptionMode.SWAP mode because "
        "there is not enough KV cache space. This can impact the end-to-end performance. Increase "
        "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
        "total_num_cumulative_preemption=51",
        ("preemption", {"mode": "SWAP", "cumulative": 51}),
    ),
    case(
        "iteration-0.14",
        "(EngineCore pid=52) INFO 06-01 10:00:00 [core.py:401] Iteration(1234): 0 context requests, 0 context tokens, "
        "1 generation requests, 4 generation tokens, iteration elapsed time: 13.72 ms",
        (
            "scheduler_stats",
            {
                "format": "vllm-iteration",
                "running": 1,
                "num_tokens": 4,
                "extra": {"iteration": 1234, "generation_tokens": 4, "iteration_seconds": 0.01372},
            },
        ),
    ),
    case(
        "iteration-0.29",
        "(APIServer pid=1) INFO 09-15 10:00:00 [loggers.py:330] Engine 000: Iteration(77): 2 context requests, 4096 "
        "context tokens, 6 generation requests, 6 generation tokens, iteration elapsed time: 80.50 ms, GPU KV cache "
        "usage: 12.5%",
        (
            "scheduler_stats",
            {"format": "vllm-iteration", "engine_index": 0, "kv_cache_usage": 0.125, "num_tokens": 4102},
        ),
    ),
    case(
        "stats-disabled-api-server-count",
        "(APIServer pid=1) WARNING 09-15 10:00:00 [async_llm.py:150] AsyncLLM created with api_server_count more than "
        "1; disabling stats logging to avoid incomplete stats.",
        ("perf_warning", {"topic": "stats-disabled"}),
    ),
]


# --- §5 NCCL / P2P / custom all-reduce / distributed init ---------------------------------------

COMM = [
    case(
        "custom-ar-no-p2p-0.4",
        "(eager_allreduce pid=3040) WARNING 05-13 08:48:35 custom_all_reduce.py:166] Custom allreduce is disabled "
        "because your platform lacks GPU P2P capability or P2P test failed. To silence this warning, specify "
        "disable_custom_all_reduce=True explicitly.",
        ("custom_allreduce", {"enabled": False, "reason": "no-p2p"}),
    ),
    case(
        "custom-ar-pcie-0.7.3",
        "(VllmWorkerProcess pid=191) WARNING 02-22 22:09:01 custom_all_reduce.py:136] Custom allreduce is disabled "
        "because it's not supported on more than two PCIe-only GPU[s…]",
        ("custom_allreduce", {"enabled": False, "reason": "pcie-more-than-two"}),
    ),
    case(
        "custom-ar-pcie-colour-codes",
        "[1;36m(VllmWorker rank=0 pid=14480)[0;0m WARNING 07-28 06:36:18 [custom_all_reduce.py:137] Custom allreduce "
        "is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify "
        "disable_custom_all_reduce=True explicitly.",
        ("custom_allreduce", {"enabled": False, "reason": "pcie-more-than-two", "level": "WARNING"}),
    ),
    case(
        "custom-ar-world-size",
        "(Worker_TP0 pid=7) WARNING 05-20 12:00:00 [custom_all_reduce.py:150] Custom allreduce is disabled due to an "
        "unsupported world size: 3. Supported world sizes: [2, 4, 6, 8]. To silence this warning, specify "
        "disable_custom_all_reduce=True explicitly.",
        ("custom_allreduce", {"enabled": False, "reason": "world-size"}),
    ),
    case(
        "custom-ar-spans-nodes-ray",
        "(EngineCore_0 pid=1159) (RayWorkerWrapper pid=343, ip=10.42.9.224) WARNING 09-10 23:27:29 "
        "[custom_all_reduce.py:85] Custom allreduce is disabled because this process group spans across nodes.",
        ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
    ),
    case(
        "custom-ar-mnnvl",
        "(Worker_TP0 pid=7) WARNING 09-15 12:00:00 [custom_all_reduce.py:160] Custom collectives are disabled because "
        "this multi-node group does not have MNNVL-capable GPUs on every rank.",
        ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
    ),
    case(
        "custom-ar-library",
        "(Worker_TP0 pid=7) INFO 05-20 12:00:00 [custom_all_reduce.py:70] Custom allreduce is disabled because of "
        "missing custom allreduce library",
        ("custom_allreduce", {"enabled": False, "reason": "library"}),
    ),
    case(
        "custom-ar-registering-addresses",
        "(VllmWorker rank=0 pid=2445155) INFO 05-10 16:00:15 [custom_all_reduce.py:195] Registering 4355 cuda graph "
        "addresses",
        ("custom_allreduce", {"enabled": True}),
    ),
    case(
        "nccl-version-and-p2p-cache-0.8",
        "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:53 [pynccl.py:69] vLLM is using nccl==2.21.5\n"
        "(VllmWorker rank=0 pid=3008574) INFO 05-29 23:36:53 [utils.py:1055] Found nccl from library libnccl.so.2\n"
        "(VllmWorker rank=1 pid=3008575) INFO 05-29 23:36:54 [custom_all_reduce_utils.py:244] reading GPU P2P access "
        "cache from /users/7/eloualic/.cache/vllm/gpu_p2p_access_cache_for_0,1.json",
        ("nccl_version", {"version": "2.21.5", "engine": "vllm"}),
        ("nccl_info", {"kind": "library", "values": {"library": "libnccl.so.2"}}),
        ("p2p_check", {"supported": None}),
    ),
    case(
        "p2p-disagree",
        "(VllmWorkerProcess pid=191) WARNING 02-22 22:09:01 custom_all_reduce_utils.py:250] Two processes do not agree "
        "on the P2P access status on 0 -> 1, treat as disabled.",
        ("p2p_check", {"supported": False}),
    ),
    case(
        "allreduce-backends-0.25",
        "(Worker_TP0 pid=120) INFO 07-10 10:00:00 [cuda_communicator.py:353] Using ['CUSTOM', 'PYNCCL'] all-reduce "
        "backends (in dispatch order) for group 'tp:0' out of potential backends: ['FLASHINFER_PCIE_IPC', 'FLASHINFER', "
        "'NCCL_SYMM_MEM', 'QUICK_REDUCE', 'AITER_CUSTOM', 'CUSTOM', 'SYMM_MEM', 'PYNCCL'].",
        (
            "allreduce_backends",
            {
                "backends": ["CUSTOM", "PYNCCL"],
                "group": "tp:0",
                "candidates": [
                    "FLASHINFER_PCIE_IPC",
                    "FLASHINFER",
                    "NCCL_SYMM_MEM",
                    "QUICK_REDUCE",
                    "AITER_CUSTOM",
                    "CUSTOM",
                    "SYMM_MEM",
                    "PYNCCL",
                ],
            },
        ),
        ("custom_allreduce", {"enabled": True}),
    ),
    case(
        "allreduce-backends-without-custom",
        "(Worker_TP0 pid=120) INFO 07-10 10:00:00 [cuda_communicator.py:353] Using ['PYNCCL'] all-reduce backends (in "
        "dispatch order) for group 'tp:0' out of potential backends: ['CUSTOM', 'PYNCCL'].",
        ("allreduce_backends", {"backends": ["PYNCCL"]}),
    ),
    case(
        "symm-mem-warning",
        "(Worker_TP0 pid=120) WARNING 11-20 10:00:00 [symm_mem.py:60] SymmMemCommunicator: Device capability 8.6 not "
        "supported, communicator is not available.",
        ("perf_warning", {"topic": "symm-mem"}),
    ),
    case(
        "flashinfer-ar-workspace",
        "(Worker_TP0 pid=120) WARNING 04-10 10:00:00 [flashinfer_all_reduce.py:90] Failed to initialize FlashInfer All "
        "Reduce workspace: no NVSwitch. This is expected on GPUs without NVSwitch (e.g., NVLink bridge-only or PCIe "
        "topologies).",
        ("perf_warning", {"topic": "flashinfer-allreduce"}),
    ),
    case(
        "distributed-init-0.12",
        "(Worker_TP1 pid=148) INFO 05-14 00:03:10 [parallel_state.py:1208] world_size=2 rank=1 local_rank=1 "
        "distributed_init_method=tcp://127.0.0.1:44131 backend=nccl",
        (
            "nccl_info",
            {"kind": "distributed-init", "values": {"world_size": 2, "rank": 1, "local_rank": 1, "backend": "nccl"}},
        ),
    ),
    case(
        "rank-assignment-0.9",
        "INFO 06-04 13:12:34 [parallel_state.py:1064] rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP "
        "rank 0, EP rank 0",
        (
            "nccl_info",
            {
                "kind": "rank-assignment",
                "values": {"rank": 0, "world_size": 1, "dp_rank": 0, "tp_rank": 0, "ep_rank": 0},
            },
        ),
    ),
    case(
        "rank-assignment-0.16-na",
        "(Worker_TP1 pid=4243) INFO 05-20 12:00:02 [parallel_state.py:1723] rank 1 in world size 2 is assigned as DP "
        "rank 0, PP rank 0, PCP rank 0, TP rank 1, EP rank N/A, EPLB rank N/A",
        ("nccl_info", {"kind": "rank-assignment", "values": {"tp_rank": 1, "pcp_rank": 0, "ep_rank": "N/A"}}),
    ),
    case(
        "ray-tp-spans-nodes",
        "(_EngineBackgroundProcess pid=19245) WARNING 04-15 10:19:12 ray_utils.py:180] tensor_parallel_size=2 is bigger "
        "than a reserved number of GPUs (1 GPUs) in a node 348553707a378daeb5edea16f5fe9c5aafbdcd7ff550361a6988df81. "
        "Tensor parallel workers can be spread out to 2+ nodes which can degrade the performance unless you have fast "
        "interconnect across nodes, like Infiniband.",
        ("perf_warning", {"topic": "tp-spans-nodes"}),
    ),
]


# --- §6 attention backend -----------------------------------------------------------------------

ATTENTION = [
    case(
        "attn-v0-flash",
        "INFO 02-19 19:18:30 cuda.py:230] Using Flash Attention backend.",
        ("attention_backend", {"backend": "FLASH_ATTN", "forced": False}),
    ),
    case(
        "attn-v0-xformers-after-fa-missing",
        "INFO 08-07 16:06:47 selector.py:189] Cannot use FlashAttention-2 backend because the vllm_flash_attn package "
        "is not found. `pip install vllm-flash-attn` for better performance.\n"
        "INFO 08-07 16:06:47 selector.py:54] Using XFormers backend.",
        ("attention_backend", {"backend": None, "fallback_reason": "package-missing"}),
        ("attention_backend", {"backend": "XFORMERS"}),
    ),
    case(
        "attn-no-header-pasted",
        " Cannot use FlashAttention-2 backend because the flash_attn package is not found. Please install it for "
        "better performance.\n Using XFormers backend.",
        ("attention_backend", {"fallback_reason": "package-missing"}),
        ("attention_backend", {"backend": "XFORMERS"}),
    ),
    case(
        "attn-v0-flashinfer-0.6",
        "INFO 10-01 10:00:00 selector.py:141] Using Flashinfer backend.",
        ("attention_backend", {"backend": "FLASHINFER"}),
    ),
    case(
        "attn-v0-sdpa",
        "INFO 10-01 10:00:00 cpu.py:30] Using Torch SDPA backend.",
        ("attention_backend", {"backend": "TORCH_SDPA"}),
    ),
    case(
        "attn-v0-rocm",
        "INFO 10-01 10:00:00 rocm.py:110] Using ROCmFlashAttention backend.",
        ("attention_backend", {"backend": "ROCM_FLASH"}),
    ),
    case(
        "attn-v1-0.9-flash",
        "INFO 06-04 13:12:34 [cuda.py:217] Using Flash Attention backend on V1 engine.",
        ("attention_backend", {"backend": "FLASH_ATTN"}),
    ),
    case(
        "attn-v1-triton-ray",
        "(EngineCore_0 pid=1159) (RayWorkerWrapper pid=345, ip=10.42.9.225) INFO 09-10 23:27:30 [cuda.py:323] Using "
        "Triton backend on V1 engine. [repeated 3x across cluster]",
        ("attention_backend", {"backend": "TRITON_ATTN"}),
    ),
    case(
        "attn-v1-flex-for",
        "INFO 08-01 10:00:00 [cuda.py:250] Using FlexAttention backend for head_size=72 on V1 engine.",
        ("attention_backend", {"backend": "FLEX_ATTENTION"}),
    ),
    case(
        "attn-v1-blackwell-hnd",
        "INFO 08-01 10:00:00 [cuda.py:230] Using FlashInfer backend with HND KV cache layout on V1 engine by default for "
        "Blackwell (SM 10.0) GPUs.",
        ("attention_backend", {"backend": "FLASHINFER"}),
    ),
    case(
        "attn-0.14-tuple",
        "(Worker_TP0 pid=117124) INFO 01-04 14:48:25 [cuda.py:351] Using FLASH_ATTN attention backend out of potential "
        "backends: ('FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION')",
        (
            "attention_backend",
            {
                "backend": "FLASH_ATTN",
                "role": "target",
                "candidates": ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"],
            },
        ),
    ),
    case(
        "attn-0.25-list-and-fa-version",
        "(EngineCore pid=144178) INFO 07-28 09:43:00 [gpu_worker.py:385] Using V2 Model Runner\n"
        "(EngineCore pid=144178) INFO 07-28 09:43:02 [cuda.py:482] Using FLASH_ATTN attention backend out of potential "
        "backends: ['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].\n"
        "(EngineCore pid=144178) INFO 07-28 09:43:02 [flash_attn.py:789] Using FlashAttention version 2",
        ("perf_warning", {"topic": "model-runner"}),
        (
            "attention_backend",
            {"backend": "FLASH_ATTN", "candidates": ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"]},
        ),
        ("attention_backend", {"backend": "FLASH_ATTN", "version": "2"}),
    ),
    case(
        "attn-0.12-list-triton",
        "(Worker_TP0 pid=7) INFO 12-05 10:00:00 [cuda.py:340] Using TRITON_ATTN attention backend out of potential "
        "backends: ['TRITON_ATTN', 'FLEX_ATTENTION']",
        ("attention_backend", {"backend": "TRITON_ATTN", "candidates": ["TRITON_ATTN", "FLEX_ATTENTION"]}),
    ),
    case(
        "attn-forced-enum",
        "(Worker_TP1 pid=3261) INFO 04-27 12:49:29 [cuda.py:337] Using AttentionBackendEnum.FLASH_ATTN_V100 backend.",
        ("attention_backend", {"backend": "FLASH_ATTN_V100", "forced": True}),
    ),
    case(
        "attn-encoder-mm",
        "(Worker_TP0 pid=3259) INFO 04-27 12:49:29 [mm_encoder_attention.py:77] Using AttentionBackendEnum.TORCH_SDPA for "
        "MMEncoderAttention.",
        ("attention_backend", {"backend": "TORCH_SDPA", "role": "encoder", "forced": False}),
    ),
    case(
        "attn-encoder-vit",
        "(Worker_TP0 pid=7) INFO 01-20 10:00:00 [vision.py:90] Using backend AttentionBackendEnum.FLASH_ATTN for vit "
        "attention",
        ("attention_backend", {"backend": "FLASH_ATTN", "role": "encoder"}),
    ),
    case(
        "attn-rocm-forced",
        "(Worker_TP0 pid=7) INFO 04-10 10:00:00 [rocm.py:300] Using ROCM_AITER_FA backend (selected via "
        "--attention-backend).",
        ("attention_backend", {"backend": "ROCM_AITER_FA", "forced": True}),
    ),
    case(
        "attn-cannot-fa2-volta",
        "INFO 10-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend for Volta and Turing GPUs.",
        ("attention_backend", {"fallback_reason": "unsupported-gpu"}),
    ),
    case(
        "attn-cannot-fa2-dtype",
        "INFO 10-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend for dtype other than torch.float16 or "
        "torch.bfloat16.",
        ("attention_backend", {"fallback_reason": "dtype"}),
    ),
    case(
        "attn-cannot-fa-fp8-kv",
        "INFO 05-01 10:00:00 [cuda.py:200] Cannot use FlashAttention backend for FP8 KV cache.",
        ("attention_backend", {"fallback_reason": "fp8-kv-cache"}),
    ),
    case(
        "attn-cannot-fa2-head-size",
        "INFO 10-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend for head size 72.",
        ("attention_backend", {"fallback_reason": "head-size"}),
    ),
    case(
        "attn-cannot-fa2-sliding-window",
        "INFO 09-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend due to sliding window.",
        ("attention_backend", {"fallback_reason": "sliding-window"}),
    ),
    case(
        "attn-block-size-precluded",
        "(Worker_TP0 pid=7) WARNING 03-20 10:00:00 [cuda.py:400] --block-size 32 precluded higher-priority backend(s) "
        "['FLASH_ATTN', 'FLASHINFER']. Using TRITON_ATTN instead, which may result in reduced performance. Consider "
        "removing --block-size to auto-select the optimal block size.",
        (
            "attention_backend",
            {
                "backend": "TRITON_ATTN",
                "fallback_reason": "block-size",
                "candidates": ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"],
            },
        ),
    ),
    case(
        "attn-env-unknown",
        "(APIServer pid=1) WARNING 02-26 10:00:00 [envs.py:1650] Unknown vLLM environment variable detected: "
        "VLLM_ATTENTION_BACKEND",
        ("perf_warning", {"topic": "env-unknown"}),
        ("attention_backend", {"fallback_reason": "env-var-ignored"}),
    ),
    case(
        "attn-env-deprecated-0.13",
        "(APIServer pid=1) WARNING 12-20 10:00:00 [envs.py:100] Using VLLM_ATTENTION_BACKEND environment variable is "
        "deprecated and will be removed in v0.14.0 or v1.0.0, whichever is soonest. Please use "
        "--attention-config.backend command line argument or AttentionConfig(backend=...) config field instead.",
        ("perf_warning", {"topic": "env-deprecated"}),
    ),
    case(
        "attn-fa3-blackwell",
        "(Worker_TP0 pid=7) WARNING 06-01 10:00:00 [fa_utils.py:60] Cannot use FA version 3 on Blackwell platform "
        "defaulting to FA version 2.",
        ("attention_backend", {"backend": "FLASH_ATTN", "version": "2", "fallback_reason": "fa3-blackwell"}),
    ),
    case(
        "attn-fa4-alibi",
        "(Worker_TP0 pid=7) WARNING 06-01 10:00:00 [fa_utils.py:70] Cannot use FA version 4 with ALiBi, defaulting to "
        "FA version 2.",
        ("attention_backend", {"version": "2", "fallback_reason": "alibi"}),
    ),
    case(
        "attn-no-valid-backend",
        "(Worker_TP4_EP4 pid=2532) ERROR 12-29 15:21:11 [multiproc_executor.py:751] ValueError: No valid attention "
        "backend found for cuda with AttentionSelectorConfig(head_size=576, dtype=torch.bfloat16, kv_cache_dtype=auto, "
        "block_size=None, use_mla=True, has_sink=False, use_sparse=True, use_mm_prefix=False, attn_type=decoder). "
        "Reasons: {FLASH_ATTN_MLA: [sparse not supported, compute capability not supported, FlashAttention MLA not "
        "supported on this device], FLASHMLA: [...], FLASHINFER_MLA: [...], TRITON_MLA: [sparse not supported], "
        "FLASHMLA_SPARSE: [compute capability not supported]}.",
        ("attention_backend", {"fallback_reason": "no-valid-backend"}),
        ("engine_failure", {"kind": "startup-failed"}),
    ),
    case(
        "attn-selected-not-valid-drafter",
        "(EngineCore pid=7) ValueError: Selected backend AttentionBackendEnum.TRITON_ATTN is not valid for this "
        "configuration. Reason: ['non-causal attention not supported']",
        ("attention_backend", {"backend": "TRITON_ATTN", "fallback_reason": "not-valid"}),
        ("engine_failure", {"kind": "startup-failed"}),
    ),
    case(
        "attn-mla-prefill",
        "(Worker_TP0 pid=7) INFO 05-20 10:00:00 [selector.py:80] Using FLASHINFER MLA prefill backend.",
        ("attention_backend", {"backend": "FLASHINFER", "role": "prefill"}),
    ),
]


# --- §7 KV cache and memory ---------------------------------------------------------------------

KV = [
    case(
        "kv-v1-0.11",
        "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB\n"
        "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens\n"
        "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:868] Maximum concurrency for 32,768 "
        "tokens per request: 1.30x",
        ("kv_cache", {"available_memory_gib": 6.51}),
        ("kv_cache", {"kv_tokens": 42656}),
        ("kv_cache", {"tokens_per_request": 32768, "max_concurrency": 1.3}),
    ),
    case(
        "kv-v0-0.6.4-stripped-prefixes",
        "Loading model weights took 14.9888 GB\n"
        "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB "
        "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB "
        "gpu_memory_utilization=0.90\n"
        "# GPU blocks: 1478, # CPU blocks: 2048\n"
        "Maximum concurrency for 29000 tokens per request: 0.82x\n"
        "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache "
        "(23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        ("compile_time", {"kind": "model_load", "memory_gib": 14.9888}),
        ("kv_cache", {"kv_cache_memory_gib": 2.89}),
        ("kv_cache", {"gpu_blocks": 1478, "cpu_blocks": 2048}),
        ("kv_cache", {"tokens_per_request": 29000, "max_concurrency": 0.82}),
        ("engine_failure", {"kind": "kv-cache-insufficient"}),
        ("kv_cache", {"kv_tokens": 23648, "tokens_per_request": 29000}),
    ),
    case(
        "kv-v0-0.8-cpu",
        "INFO 05-11 12:04:07 [executor_base.py:112] # cpu blocks: 1170, # CPU blocks: 0\n"
        "INFO 05-11 12:04:07 [executor_base.py:117] Maximum concurrency for 32768 tokens per request: 4.57x\n"
        "INFO 05-11 12:04:07 [llm_engine.py:435] init engine (profile, create kv cache, warmup model) took 0.15 seconds",
        ("kv_cache", {"gpu_blocks": 1170, "cpu_blocks": 0}),
        ("kv_cache", {"max_concurrency": 4.57, "tokens_per_request": 32768}),
        ("compile_time", {"kind": "init_engine", "seconds": 0.15}),
    ),
    case(
        "model-loading-0.19-tp2",
        "(Worker_TP0 pid=34322) INFO 05-06 20:59:57 [default_loader.py:384] Loading weights took 24.84 seconds\n"
        "(Worker_TP0 pid=34322) INFO 05-06 20:59:59 [gpu_model_runner.py:4879] Model loading took 12.66 GiB memory and "
        "31.657031 seconds",
        ("compile_time", {"kind": "weights_load", "seconds": 24.84}),
        ("compile_time", {"kind": "model_load", "memory_gib": 12.66, "seconds": 31.657031}),
    ),
    case(
        "kv-error-0.14-too-small",
        "(EngineCore_DP0 pid=494) ValueError: To serve at least one request with the models's max seq len (262144), "
        "(36.0 GiB KV cache is needed, which is larger than the available KV cache memory (6.94 GiB). Based on the "
        "available memory, the estimated maximum model length is 50512. Try increasing `gpu_memory_utilization` or "
        "decreasing `max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
        ("engine_failure", {"kind": "kv-cache-insufficient", "engine": "vllm"}),
        ("kv_cache", {"available_memory_gib": 6.94, "tokens_per_request": 262144}),
    ),
    case(
        "kv-error-0.8.5-significant-digits",
        "ERROR 05-01 10:00:00 [core.py:390] ValueError: To serve at least one request with the models's max seq len "
        "(131072), (3.6e+01 GiB KV cache is needed, which is larger than the available KV cache memory (5.5 GiB). "
        "Based on the available memory, the estimated maximum model length is 20000. Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        ("kv_cache", {"available_memory_gib": 5.5, "tokens_per_request": 131072}),
    ),
    case(
        "kv-error-no-memory",
        "(EngineCore_DP0 pid=494) ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.",
        ("engine_failure", {"kind": "kv-cache-insufficient"}),
    ),
    case(
        "kv-error-free-memory",
        "(EngineCore_DP0 pid=494) ValueError: Free memory on device (7.1/23.56 GiB) on startup is less than desired GPU "
        "memory utilization (0.9, 21.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
        "processes.",
        ("engine_failure", {"kind": "gpu-memory-insufficient"}),
    ),
    case(
        "kv-v1-0.7.1",
        "INFO 01-30 03:18:12 gpu_model_runner.py:848] Loading model weights took 67.7229 GB\n"
        "INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381\n"
        "INFO 01-30 03:19:14 kv_cache_utils.py:398] Maximum concurrency for 2048 tokens per request: 10.79x",
        ("compile_time", {"kind": "model_load", "memory_gib": 67.7229}),
        ("kv_cache", {"gpu_blocks": 1381, "cpu_blocks": None}),
        ("kv_cache", {"max_concurrency": 10.79, "tokens_per_request": 2048}),
    ),
    case(
        "kv-v1-0.8.0-thousands",
        "INFO 02-19 23:56:55 kv_cache_utils.py:524] GPU KV cache size: 2,042,016 tokens\n"
        "INFO 02-19 23:56:55 kv_cache_utils.py:527] Maximum concurrency for 2,048 tokens per request: 997.08x",
        ("kv_cache", {"kv_tokens": 2042016}),
        ("kv_cache", {"tokens_per_request": 2048, "max_concurrency": 997.08}),
    ),
    case(
        "init-engine-0.20-compilation",
        "(EngineCore pid=43) INFO 05-07 02:18:01 [core.py:312] init engine (profile, create kv cache, warmup model) took "
        "182.37 s (compilation: 96.10 s)",
        ("compile_time", {"kind": "init_engine", "seconds": 182.37}),
        ("compile_time", {"kind": "compilation", "seconds": 96.1}),
    ),
    case(
        "kv-merged-0.29",
        "(EngineCore pid=43) INFO 09-15 12:00:00 [kv_cache_utils.py:1300] GPU KV cache size: 123,456 tokens, Maximum "
        "concurrency for 32,768 tokens per request: 3.77x",
        ("kv_cache", {"kv_tokens": 123456, "tokens_per_request": 32768, "max_concurrency": 3.77}),
    ),
    case(
        "kv-merged-0.33-host",
        "(EngineCore pid=43) INFO 11-02 12:00:00 [kv_cache_utils.py:1300] GPU + host KV cache size: 500,000 tokens, "
        "Maximum concurrency for 32,768 tokens per request: 15.26x",
        ("kv_cache", {"kv_tokens": 500000, "max_concurrency": 15.26}),
    ),
    case(
        "kv-padding-layers",
        "(EngineCore pid=43) WARNING 05-07 02:17:00 [kv_cache_utils.py:900] Add 2 padding layers, may waste at most "
        "6.25% KV cache memory",
        ("hybrid_model", {"kind": "padding-layers", "padding_percent": 6.25}),
    ),
    case(
        "memory-profiling-v0-three-lines",
        "INFO 12-27 10:00:00 worker.py:265] Memory profiling takes 5.21 seconds\n"
        "INFO 12-27 10:00:00 worker.py:265] the current vLLM instance can use total_gpu_memory (23.58GiB) x "
        "gpu_memory_utilization (0.90) = 21.22GiB\n"
        "INFO 12-27 10:00:00 worker.py:265] model weights take 14.99GiB; non_torch_memory takes 0.12GiB; PyTorch "
        "activation peak memory takes 1.20GiB; the rest of the memory reserved for KV Cache is 4.91GiB.",
        ("compile_time", {"kind": "memory_profiling", "seconds": 5.21}),
        ("kv_cache", {"kv_cache_memory_gib": 4.91}),
    ),
    case(
        "kv-cuda-graph-profiling-0.21",
        "(Worker_TP1 pid=148) INFO 05-14 00:04:16 [gpu_model_runner.py:6143] Estimated CUDA graph memory: 0.17 GiB "
        "total\n"
        "(Worker_TP0 pid=147) INFO 05-14 00:04:17 [gpu_worker.py:460] Available KV cache memory: 15.72 GiB\n"
        "(Worker_TP0 pid=147) INFO 05-14 00:04:17 [gpu_worker.py:475] CUDA graph memory profiling is enabled (default "
        "since v0.21.0). The current --gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.9129 "
        "without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase "
        "--gpu-memory-utilization to 0.9271. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
        ("cuda_graph", {"kind": "memory_profile", "memory_gib": 0.17}),
        ("kv_cache", {"available_memory_gib": 15.72}),
        ("cuda_graph", {"kind": "memory_profile", "memory_gib": None}),
    ),
    case(
        "kv-cache-config-info-wrapped",
        "(APIServer pid=2739) INFO 09-04 01:29:30 [loggers.py:142] Engine 000: vllm cache_config_info with "
        "initialization after num_gpu_blocks is\n"
        ": 29053",
        ("kv_cache", {"gpu_blocks": 29053}),
    ),
    case(
        "kv-auto-fit",
        "(EngineCore pid=43) INFO 01-20 10:00:00 [kv_cache_utils.py:1100] Auto-fit max_model_len: reduced from 262144 to "
        "50512 to fit in available GPU memory (6.94 GiB available for KV cache)",
        ("model_info", {"max_model_len": 50512}),
        ("kv_cache", {"available_memory_gib": 6.94}),
    ),
    case(
        "kv-block-size-forced-mla",
        "(Worker_TP0 pid=7) INFO 06-01 10:00:00 [cuda.py:150] Forcing kv cache block size to 64 for FlashMLA backend.",
        ("kv_cache", {"block_size": 64}),
    ),
]


# --- §8 mamba / hybrid --------------------------------------------------------------------------

HYBRID = [
    case(
        "hybrid-dflash-0.28",
        "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:928] Setting attention block size to 480 tokens to "
        "ensure that attention page size is >= mamba page size.\n"
        "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:952] Padding mamba page size by 1.27% to ensure that "
        "mamba page size and attention page size are exactly equal.",
        ("hybrid_model", {"kind": "block-size-alignment", "attention_block_size": 480}),
        ("hybrid_model", {"kind": "mamba-page-padding", "padding_percent": 1.27}),
    ),
    case(
        "hybrid-0.18-xpu",
        "INFO 03-30 07:05:40 [config.py:228] Setting attention block size to 528 tokens to ensure that attention page "
        "size is >= mamba page size.\n"
        "INFO 03-30 07:05:40 [config.py:259] Padding mamba page size by 0.76% to ensure that mamba page size and "
        "attention page size are exactly equal.",
        ("hybrid_model", {"attention_block_size": 528}),
        ("hybrid_model", {"padding_percent": 0.76}),
    ),
    case(
        "hybrid-0.20-tp2",
        "(Worker_TP1 pid=47) INFO 05-09 04:43:30 [interface.py:633] Padding mamba page size by 0.25% to ensure that "
        "mamba page size and attention page size are exactly equal.",
        ("hybrid_model", {"kind": "mamba-page-padding", "padding_percent": 0.25}),
    ),
    case(
        "hybrid-pasted-without-timestamp",
        "INFO [config.py:281] Setting attention block size to 528 tokens to ensure that attention page size is >= "
        "mamba page size.",
        ("hybrid_model", {"attention_block_size": 528}),
    ),
    case(
        "hybrid-xpu-0.33-scaled",
        "(Worker pid=7) INFO 11-02 10:00:00 [xpu.py:300] [XPU]Scaled mamba_page_size_padded from 1000 to 1010 bytes "
        "accordingly.",
        ("hybrid_model", {"kind": "mamba-page-padding", "padding_percent": 1.0}),
    ),
    case(
        "hybrid-mamba-cache-mode-align",
        "Mamba cache mode is set to 'align' for Qwen3_5ForConditionalGeneration by default when prefix caching is "
        "enabled",
        ("hybrid_model", {"kind": "mamba-cache-mode", "mamba_cache_mode": "align", "prefix_caching": True}),
    ),
    case(
        "hybrid-mamba-cache-mode-none",
        "(EngineCore pid=7) WARNING 03-01 10:00:00 [vllm.py:700] Mamba cache mode is set to 'none' when prefix caching "
        "is disabled",
        ("hybrid_model", {"mamba_cache_mode": "none", "prefix_caching": False}),
    ),
    case(
        "hybrid-prefix-caching-disabled-0.10",
        "INFO 09-20 10:00:00 [config.py:400] Hybrid or mamba-based model detected: disabling prefix caching since it is "
        "not yet supported.",
        ("hybrid_model", {"kind": "prefix-caching", "prefix_caching": False}),
        ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
    ),
    case(
        "hybrid-cudagraph-full-and-piecewise",
        "INFO 09-20 10:00:00 [config.py:410] Hybrid or mamba-based model detected: setting cudagraph mode to "
        "FULL_AND_PIECEWISE in order to optimize performance.",
        ("hybrid_model", {"kind": "hybrid-detected"}),
    ),
    case(
        "hybrid-prefix-caching-experimental",
        "INFO 02-01 10:00:00 [config.py:300] Warning: Prefix caching in Mamba cache 'align' mode is currently enabled. "
        "Its support for Mamba layers is experimental. Please report any issues you may observe.",
        ("hybrid_model", {"kind": "prefix-caching", "prefix_caching": True, "mamba_cache_mode": "align"}),
    ),
    case(
        "hybrid-cudagraph-capped",
        "(Worker_TP0 pid=7) WARNING 03-25 10:00:00 [gpu_model_runner.py:4500] Capping cudagraph capture sizes from max "
        "512 to 64 to fit Mamba cache blocks (66 blocks available). This limits the maximum batch size that can use "
        "CUDA graphs. To increase this limit, reduce max_num_seqs or increase available GPU memory.",
        ("cuda_graph", {"kind": "capture_capped", "max_batch_size": 64}),
        ("hybrid_model", {"kind": "cudagraph-cap"}),
    ),
    case(
        "hybrid-cudagraph-capture-disabled",
        "(Worker_TP0 pid=7) WARNING 03-25 10:00:00 [gpu_model_runner.py:4510] No valid cudagraph capture sizes remain "
        "after capping to Mamba cache blocks (3). The smallest capture size was 4. Disabling cudagraph capture. "
        "Consider reducing max_num_seqs or increasing available GPU memory.",
        ("cuda_graph", {"kind": "capture_capped", "max_batch_size": 0, "mode_to": "NONE"}),
    ),
    case(
        "hybrid-gdn-fallback",
        "(Worker_TP0 pid=7) WARNING 03-20 10:00:00 [qwen_next.py:300] GDN prefill backend 'flashinfer' is selected but "
        "cannot use this kernel on the current platform. Falling back to Triton/FLA.",
        ("hybrid_model", {"kind": "gdn-kernel-fallback"}),
    ),
    case(
        "hybrid-spec-not-supported",
        "(EngineCore_DP0 pid=7) NotImplementedError: Mamba with speculative decoding is not supported yet.",
        ("hybrid_model", {"kind": "spec-decode"}),
        ("engine_failure", {"kind": "startup-failed"}),
    ),
]


# --- §9 CUDA graphs and torch.compile -----------------------------------------------------------

GRAPHS = [
    case(
        "capture-bar-tqdm-redraws",
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|          | 0/67 [00:00<?, ?it/s]\r"
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:03<00:00, 18.59it/s]",
        ("cuda_graph", {"kind": "capture_progress", "mode": "PIECEWISE", "seconds": 3.0, "role": "target"}),
    ),
    case(
        "capture-bar-decode-full-prefixed",
        "(EngineCore_DP0 pid=9) Capturing CUDA graphs (decode, FULL): 100%|██████████| 35/35 [00:02<00:00, 16.81it/s]",
        ("cuda_graph", {"kind": "capture_progress", "mode": "FULL", "seconds": 2.0}),
    ),
    case(
        "capture-bar-0.10-shapes",
        "Capturing CUDA graph shapes: 100%|██████████| 67/67 [00:25<00:00,  2.63it/s]",
        ("cuda_graph", {"kind": "capture_progress", "mode": None, "seconds": 25.0}),
    ),
    case(
        "capture-bar-mojibake",
        "Capturing CUDA graphs (decode, FULL): 100%|â–ˆâ–ˆâ–ˆ| 35/35 [00:02<00:00, 16.81it/s]",
        ("cuda_graph", {"kind": "capture_progress", "mode": "FULL"}),
    ),
    case(
        "capture-finished-0.8",
        "(VllmWorker rank=0 pid=2445155) INFO 05-10 16:00:15 [gpu_model_runner.py:1686] Graph capturing finished in 112 "
        "secs, took 0.95 GiB",
        ("cuda_graph", {"kind": "capture_finished", "seconds": 112.0, "memory_gib": 0.95, "role": "target"}),
    ),
    case(
        "capture-finished-0.21",
        "(Worker_TP0 pid=147) INFO 05-14 00:05:02 [gpu_model_runner.py:6398] Graph capturing finished in 19 secs, took "
        "1.07 GiB",
        ("cuda_graph", {"kind": "capture_finished", "seconds": 19.0, "memory_gib": 1.07}),
    ),
    case(
        "capture-finished-encoder",
        "(Worker_TP0 pid=147) INFO 11-02 10:00:00 [mm_encoder_model_runner.py:300] Encoder graph capturing finished in "
        "4 secs, took 0.21 GiB (12 graphs)",
        ("cuda_graph", {"kind": "capture_finished", "role": "encoder", "memory_gib": 0.21}),
    ),
    case(
        "capture-started-v0",
        "INFO 12-27 10:00:00 model_runner.py:1400] Capturing cudagraphs for decoding. This may lead to unexpected "
        "consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use "
        "'--enforce-eager' in the CLI.",
        ("cuda_graph", {"kind": "capture_started"}),
    ),
    case(
        "eager-cudagraph-disabled",
        "(EngineCore pid=1762577) INFO 04-20 14:42:51 [vllm.py:1081] Cudagraph is disabled under eager mode",
        ("cuda_graph", {"kind": "eager_mode"}),
    ),
    case(
        "eager-enforce-eager-set",
        "(APIServer pid=1) WARNING 02-26 10:00:00 [vllm.py:900] Enforce eager set, disabling torch.compile and "
        "CUDAGraphs. This is equivalent to setting -cc.mode=none -cc.cudagraph_mode=none",
        ("cuda_graph", {"kind": "eager_mode", "mode_to": "NONE"}),
        ("compile_time", {"kind": "compile_disabled"}),
    ),
    case(
        "eager-dp-0.8",
        "INFO 03-20 10:00:00 [config.py:3500] Data Parallel: Forcing enforce eager to be True since DP is currently not "
        "supported with CUDA Graphs.",
        ("cuda_graph", {"kind": "eager_mode"}),
    ),
    case(
        "eager-deepep",
        "INFO 01-20 10:00:00 [config.py:500] DeepEP: Disabling CUDA Graphs since DeepEP high-throughput kernels are "
        "optimized for prefill and are incompatible with CUDA Graphs.",
        ("cuda_graph", {"kind": "eager_mode"}),
    ),
    case(
        "mode-downgrade-spec-truncated",
        "(Worker_TP0 pid=169) WARNING 06-25 05:45:32 [compilation.py:1407] CUDAGraphMode.FULL_AND_PIECEWISE is not "
        "supported with spec-decode for attention…",
        ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": None}),
    ),
    case(
        "mode-downgrade-spec-full",
        "(Worker_TP0 pid=169) WARNING 06-25 05:45:32 [compilation.py:1407] CUDAGraphMode.FULL_AND_PIECEWISE is not "
        "supported with spec-decode for attention backend FlashInferBackend (support: "
        "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE",
        ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "PIECEWISE"}),
    ),
    case(
        "mode-downgrade-backend",
        "(Worker_TP0 pid=169) WARNING 10-05 10:00:00 [compilation.py:900] CUDAGraphMode.FULL is not supported with "
        "TRITON_ATTN backend (support: AttentionCGSupport.NEVER); setting cudagraph_mode=PIECEWISE because attention is "
        "compiled piecewise",
        ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL", "mode_to": "PIECEWISE"}),
    ),
    case(
        "mode-downgrade-compilation-mode",
        "(APIServer pid=1) INFO 12-05 10:00:00 [vllm.py:500] Cudagraph mode FULL_AND_PIECEWISE is not compatible with "
        "compilation mode NONE.Overriding to NONE.",
        ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "NONE"}),
    ),
    case(
        "mode-downgrade-kv-connector",
        "(APIServer pid=1) WARNING 03-10 10:00:00 [vllm.py:600] KV connector LMCacheConnectorV1 requires PIECEWISE CUDA "
        "graph mode due to layerwise async operations that cannot be captured in CUDA graphs. Overriding cudagraph_mode "
        "from FULL_AND_PIECEWISE to PIECEWISE.",
        ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "PIECEWISE"}),
    ),
    case(
        "mode-downgrade-encoder-decoder",
        "(APIServer pid=1) WARNING 03-10 10:00:00 [vllm.py:610] Encoder-decoder models do not support "
        "FULL_AND_PIECEWISE. Overriding cudagraph_mode to FULL_DECODE_ONLY.",
        ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "FULL_DECODE_ONLY"}),
    ),
    case(
        "capture-skipped",
        "(Worker_TP0 pid=7) WARNING 10-05 10:00:00 [gpu_model_runner.py:3000] Skipping CUDA graph capture. To turn on "
        "CUDA graph capture, ensure `cudagraph_mode` was not manually set to `NONE`",
        ("cuda_graph", {"kind": "capture_skipped"}),
    ),
    case(
        "capture-size-override",
        "(APIServer pid=1009) INFO 09-10 23:26:32 [config.py:273] Overriding max cuda graph capture size to 1024 for "
        "performance.",
        ("cuda_graph", {"kind": "capture_sizes", "max_batch_size": 1024}),
    ),
    case(
        "compile-cold-0.21",
        "(Worker_TP0 pid=118) INFO 05-04 01:03:11 [backends.py:1128] Dynamo bytecode transform time: 14.14 s\n"
        "(Worker_TP0 pid=118) INFO 05-04 01:03:16 [backends.py:376] Cache the graph of compile range (1, 8192) for "
        "later use\n"
        "(Worker_TP0 pid=118) INFO 05-04 01:03:57 [backends.py:391] Compiling a graph for compile range (1, 8192) takes "
        "44.99 s\n"
        "(EngineCore pid=109) INFO 05-04 01:03:58 [shm_broadcast.py:681] No available shared memory broadcast block "
        "found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work "
        "(e.g. compilation, weight/kv cache quantization).\n"
        "(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total\n"
        "(Worker_TP0 pid=118) INFO 05-04 01:05:36 [monitor.py:81] Initial profiling/warmup run took 76.71 s",
        ("compile_time", {"kind": "dynamo", "seconds": 14.14}),
        ("compile_time", {"kind": "cache_save", "cache_hit": False}),
        ("compile_time", {"kind": "graph_compile", "seconds": 44.99}),
        ("engine_failure", {"kind": "shm-broadcast-wait"}),
        ("compile_time", {"kind": "torch_compile", "seconds": 82.29}),
        ("compile_time", {"kind": "warmup", "seconds": 76.71}),
    ),
    case(
        "compile-warm-cache",
        "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [backends.py:292] Directly load the compiled graph(s) for compile "
        "range (1, 8192) from the cache, took 5.958 s\n"
        "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [monitor.py:53] torch.compile took 9.61 s in total",
        ("compile_time", {"kind": "cache_load", "cache_hit": True, "seconds": 5.958}),
        ("compile_time", {"kind": "torch_compile", "seconds": 9.61}),
    ),
    case(
        "compile-0.7.1",
        "INFO 01-30 03:19:07 backends.py:321] Compiling a graph for general shape takes 41.86 s\n"
        "INFO 01-30 03:19:13 monitor.py:31] torch.compile takes 54.73 s in total",
        ("compile_time", {"kind": "graph_compile", "seconds": 41.86}),
        ("compile_time", {"kind": "torch_compile", "seconds": 54.73}),
    ),
    case(
        "compile-docker-prefixed",
        "[2025-10-16T06:09:23Z] (EngineCore_DP0 pid=23579) INFO 10-15 23:09:23 [backends.py:274] Compiling a graph for "
        "dynamic shape takes 41.40 s",
        ("compile_time", {"kind": "graph_compile", "seconds": 41.4}),
    ),
    case(
        "compile-cache-dir-and-together",
        "(EngineCore_0 pid=2881) INFO 09-04 01:29:15 [backends.py:548] Using cache directory: "
        "/home/cdsw/.cache/vllm/torch_compile_cache/23ca404a2f/rank_0_0/backbone for vLLM's torch.compile\n"
        "(Worker_TP0 pid=118) INFO 05-04 01:05:36 [monitor.py:90] torch.compile and initial profiling/warmup run "
        "together took 158.00 s in total\n"
        "(Worker_TP0 pid=118) INFO 05-04 01:05:36 [backends.py:500] vLLM's torch.compile cache is disabled.",
        ("compile_time", {"kind": "cache_dir"}),
        ("compile_time", {"kind": "compile_and_warmup", "seconds": 158.0}),
        ("compile_time", {"kind": "cache_disabled", "cache_hit": False}),
    ),
]


# --- §10 scheduling -----------------------------------------------------------------------------

SCHEDULING = [
    case(
        "chunked-prefill-and-async-0.26",
        "INFO 07-28 09:35:08 [scheduler.py:242] Chunked prefill is enabled with max_num_batched_tokens=2048.\n"
        "INFO 07-28 09:35:08 [vllm.py:1118] Asynchronous scheduling is enabled.",
        ("scheduler_config", {"kind": "chunked-prefill", "enabled": True, "value": 2048}),
        ("scheduler_config", {"kind": "async-scheduling", "enabled": True}),
    ),
    case(
        "async-disabled",
        "(APIServer pid=1) INFO 02-01 10:00:00 [vllm.py:1118] Asynchronous scheduling is disabled.",
        ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
    ),
    case(
        "async-disabled-ngram",
        "(APIServer pid=1) WARNING 02-01 10:00:00 [vllm.py:700] Async scheduling not supported with ngram-based "
        "speculative decoding and will be disabled.",
        ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
    ),
    case(
        "async-disabled-executor",
        "(APIServer pid=1) WARNING 02-01 10:00:00 [vllm.py:710] Async scheduling will be disabled because it is not "
        "supported with the `ray` distributed executor backend (only `mp`, `uni`, and `external_launcher` are "
        "supported).",
        ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
    ),
    case(
        "async-disabled-spec-0.11",
        "(APIServer pid=1) WARNING 11-20 10:00:00 [vllm.py:710] Async scheduling is not yet supported with speculative "
        "decoding  or pipeline_parallel_size > 1 and will be disabled.",
        ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
    ),
    case(
        "chunked-prefill-non-causal",
        "(EngineCore pid=7) INFO 07-20 10:00:00 [core.py:150] Disabling chunked prefill: model has non-causal attention "
        "layers.",
        ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
    ),
    case(
        "encoder-decoder-disables-both",
        "(APIServer pid=1) INFO 11-20 10:00:00 [scheduler.py:200] Encoder-decoder models do not support chunked prefill "
        "nor prefix caching; disabling both.",
        ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
        ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
    ),
    case(
        "max-num-seqs-usage-context",
        "WARNING 03-20 10:00:00 [arg_utils.py:1500] Setting max_num_seqs to 256 for OPENAI_API_SERVER usage context.",
        ("scheduler_config", {"kind": "max-num-seqs", "value": 256}),
    ),
    case(
        "chunked-prefill-by-default",
        "INFO 07-08 10:00:00 [arg_utils.py:1600] (Enabling) chunked prefill by default\n"
        "INFO 07-08 10:00:00 [arg_utils.py:1610] (Disabling) prefix caching by default",
        ("scheduler_config", {"kind": "chunked-prefill", "enabled": True}),
        ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
    ),
    case(
        "max-model-len",
        "(APIServer pid=1009) INFO 09-10 23:26:31 [__init__.py:1750] Using max model len 16384",
        ("model_info", {"max_model_len": 16384}),
    ),
]


# --- §11 errors ---------------------------------------------------------------------------------

ERRORS = [
    case(
        "startup-failed-0.20",
        "(EngineCore pid=74) INFO 05-07 06:12:45 [default_loader.py:391] Loading weights took 62.80 seconds\n"
        "(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136] EngineCore failed to start.\n"
        "(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136] Traceback (most recent call last):\n"
        '(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136]   File "/usr/local/lib/python3.12/dist-packages/vllm/'
        'v1/engine/core.py", line 1110, in run_engine_core',
        ("compile_time", {"kind": "weights_load", "seconds": 62.8}),
        ("engine_failure", {"kind": "startup-failed", "engine": "vllm", "level": "ERROR"}),
    ),
    case(
        "startup-failed-apiserver-runtime-error",
        "(APIServer pid=1179246) RuntimeError: Engine core initialization failed. See root cause above. Failed core "
        "proc(s): {}",
        ("engine_failure", {"kind": "startup-failed", "engine": "vllm"}),
    ),
    case(
        "fatal-error-0.8.5",
        "ERROR 04-28 02:37:03 [core.py:398] EngineCore encountered a fatal error.\n"
        "ERROR 04-28 02:37:03 [core.py:398] Traceback (most recent call last):",
        ("engine_failure", {"kind": "engine-dead"}),
    ),
    case(
        "hang-dump-then-death-0.9",
        "ERROR 06-15 13:57:57 [dump_input.py:79] Dumping scheduler output for model execution:\n"
        "ERROR 06-15 13:57:57 [dump_input.py:80] SchedulerOutput(scheduled_new_reqs=[], scheduled_cached_reqs=[], "
        "num_scheduled_tokens={}, total_num_scheduled_tokens=1, scheduled_spec_decode_tokens={})\n"
        "ERROR 06-15 13:57:57 [core.py:517] EngineCore encountered a fatal error.",
        ("engine_failure", {"kind": "engine-dead"}),
    ),
    case(
        "rpc-timeout-then-output-handler",
        "ERROR 09-06 04:14:11 [core.py:640] TimeoutError: RPC call to execute_model timed out.\n"
        "ERROR 09-06 04:14:11 [async_llm.py:416] AsyncLLM output_handler failed.",
        ("engine_failure", {"kind": "rpc-timeout"}),
        ("engine_failure", {"kind": "engine-dead"}),
    ),
    case(
        "engine-dead-apiserver-0.20",
        "(APIServer pid=1) ERROR 07-23 06:51:50 [async_llm.py:704] vllm.v1.engine.exceptions.EngineDeadError: "
        "EngineCore encountered an issue. See stack trace (above) for the root cause.\n"
        "(APIServer pid=1) ERROR 07-23 06:51:50 [serving.py:820] Error in chat completion stream generator.",
        ("engine_failure", {"kind": "engine-dead"}),
        ("engine_failure", {"kind": "exception"}),
    ),
    case(
        "engine-core-proc-died-dp",
        "ERROR 01-29 08:37:48 [core_client.py:564] Engine core proc EngineCore_DP1 died unexpectedly, shutting down "
        "client.",
        ("engine_failure", {"kind": "engine-dead"}),
    ),
    case(
        "worker-proc-died",
        "ERROR 07-01 10:00:00 [multiproc_executor.py:140] Worker proc VllmWorker-2 died unexpectedly, shutting down "
        "executor.",
        ("engine_failure", {"kind": "worker-died"}),
    ),
    case(
        "worker-proc-died-exit-code-0.29",
        "(EngineCore pid=7) ERROR 09-15 10:00:00 [multiproc_executor.py:300] Worker proc Worker_TP1 died unexpectedly "
        "(exit code: -9), shutting down executor.",
        ("engine_failure", {"kind": "worker-died"}),
    ),
    case(
        "workerproc-hit-exception",
        "(Worker_TP1 pid=1014) ERROR 01-14 18:56:27 [multiproc_executor.py:824] WorkerProc hit an exception.",
        ("engine_failure", {"kind": "worker-died"}),
    ),
    case(
        "v0-background-loop",
        "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already.",
        ("engine_failure", {"kind": "engine-dead"}),
    ),
    case(
        "v0-shm-no-block-colour-codes",
        "^[[1;36m(VllmWorkerProcess pid=340358)^[[0;0m WARNING 08-28 14:16:50 shm_broadcast.py:404] No available block "
        "found in 60 second.",
        ("engine_failure", {"kind": "shm-broadcast-wait", "level": "WARNING"}),
    ),
    case(
        "v0-engine-iteration-timeout",
        "ERROR 06-22 20:16:34 async_llm_engine.py:60] Engine iteration timed out. This should never happen!",
        ("engine_failure", {"kind": "rpc-timeout"}),
    ),
    case(
        "cuda-oom-traceback",
        "(EngineCore pid=112) ERROR 05-01 14:39:06 [core.py:1131] torch.OutOfMemoryError: CUDA out of memory. Tried to "
        "allocate 50.00 MiB. GPU 0 has a total capacity of 23.56 GiB of which 21.75 MiB is free. Including non-PyTorch "
        "memory, this process has 23.50 GiB memory in use.",
        ("engine_failure", {"kind": "cuda-oom", "engine": "vllm"}),
    ),
    case(
        "cuda-oom-sampler-warmup",
        "(EngineCore_DP0 pid=7) RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy "
        "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
        ("engine_failure", {"kind": "cuda-oom"}),
    ),
    case(
        "cuda-error-illegal-access",
        "(Worker_TP0 pid=7) ERROR 05-01 10:00:00 [multiproc_executor.py:600] RuntimeError: CUDA error: an illegal "
        "memory access was encountered",
        ("engine_failure", {"kind": "cuda-error"}),
    ),
    case(
        "c10d-watchdog-ray",
        "(RayWorkerWrapper pid=489968) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1572864, NumelOut=1572864, Timeout(ms)=600000) "
        "ran for 600021 milliseconds before timing out.",
        ("engine_failure", {"kind": "watchdog", "level": "ERROR", "engine": "vllm"}),
    ),
    case(
        "c10d-watchdog-glog",
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600005 "
        "milliseconds before timing out.",
        ("engine_failure", {"kind": "watchdog", "engine": "unknown"}),
    ),
    case(
        "nccl-error-v0",
        "(VllmWorkerProcess pid=236) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226] RuntimeError: NCCL error: "
        "unhandled system error",
        ("engine_failure", {"kind": "nccl-error"}),
    ),
    case(
        "nccl-error-debug-path",
        "ERROR 11-04 18:02:56 [v1/executor/multiproc_executor.py:597] RuntimeError: NCCL error: unhandled cuda error "
        "(run with NCCL_DEBUG=INFO for details)",
        ("engine_failure", {"kind": "nccl-error", "engine": "vllm"}),
    ),
    case(
        "shutdown-engine-exited",
        "(APIServer pid=1) WARNING 07-20 10:00:00 [core_client.py:700] [shutdown] MPClient: engine core exited "
        "unexpectedly; starting cleanup",
        ("engine_failure", {"kind": "engine-dead"}),
    ),
    case(
        "engine-ready-timeout",
        "(APIServer pid=1) TimeoutError: Timed out waiting for engine core processes to start. This is often caused by "
        "slow weight loading for large models. Waited 600s (configured by VLLM_ENGINE_READY_TIMEOUT_S).",
        ("engine_failure", {"kind": "startup-failed"}),
    ),
]


# --- §12 model, quantization, platform, offload, env --------------------------------------------

OTHER = [
    case(
        "model-identity-0.10",
        "(APIServer pid=1009) INFO 09-10 23:26:29 [__init__.py:711] Resolved architecture: GptOssForCausalLM\n"
        "(APIServer pid=1009) INFO 09-10 23:26:31 [__init__.py:2816] Downcasting torch.float32 to torch.bfloat16.",
        ("model_info", {"architecture": "GptOssForCausalLM"}),
        ("model_info", {"dtype": "torch.bfloat16"}),
    ),
    case(
        "transformers-fallback",
        "(EngineCore pid=7) WARNING 05-01 10:00:00 [utils.py:200] MyModelForCausalLM has no vLLM implementation, "
        "falling back to Transformers implementation. Some features may not be supported and performance may not be "
        "optimal.",
        ("perf_warning", {"topic": "transformers-backend"}),
        ("model_info", {"architecture": "MyModelForCausalLM"}),
    ),
    case(
        "marlin-fp8-no-native",
        "WARNING 05-13 14:43:17 [marlin_utils_fp8.py:167] Your GPU does not have native support for FP8 computation but "
        "FP8 quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel. This "
        "may degrade performance for compute-heavy workloads.",
        ("quantization", {"method": "fp8", "kernel": "Marlin", "fallback": True}),
    ),
    case(
        "marlin-fp4-no-native-truncated",
        "(EngineCore_0 pid=1159) (RayWorkerWrapper pid=345, ip=10.42.11.243) WARNING 09-10 23:47:47 "
        "[marlin_utils_fp4.py:196] Your GPU does not have native support for FP4 computation but FP4 quantization is "
        "being used. Weight-only FP4 compression will be used leveraging the Marlin kernel. This may degrade p",
        ("quantization", {"method": "fp4", "kernel": "Marlin", "fallback": True}),
    ),
    case(
        "gptq-forced-markdown-bold",
        "INFO 09-24 15:46:11 gptq_marlin.py:112] Detected that the model can run with gptq_marlin, **however you "
        "specified quantization=gptq explicitly, so forcing gptq. Use quantization=gptq_marlin for faster inference**\n"
        "WARNING 09-24 15:46:11 config.py:335] gptq quantization is not fully optimized yet. The speed can be slower "
        "than non-quantized models.\n"
        "**INFO 09-24 15:46:11 gptq_marlin.py:108] The model is convertible to gptq_marlin during runtime. Using "
        "gptq_marlin kernel.**",
        ("quantization", {"method": "gptq", "fallback": True}),
        ("quantization", {"method": "gptq", "fallback": False}),
        ("quantization", {"method": "gptq_marlin", "kernel": "gptq_marlin", "fallback": False}),
    ),
    case(
        "awq-forced",
        "INFO 09-24 15:46:11 awq_marlin.py:110] Detected that the model can run with awq_marlin, however you specified "
        "quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference",
        ("quantization", {"method": "awq", "fallback": True}),
    ),
    case(
        "moe-default-config-0.8.5",
        "(VllmWorker rank=1 pid=236) WARNING 05-03 17:42:23 [fused_moe.py:668] Using default MoE config. Performance "
        "might be sub-optimal! Config file not found at /usr/local/lib/python3.12/dist-packages/vllm/model_executor/"
        "layers/fused_moe/configs/E=16,N=1536,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,block_shape=[128,128]"
        ".json",
        ("perf_warning", {"topic": "moe-config"}),
    ),
    case(
        "moe-default-config-stacked-prefixes",
        "(EngineCore_0 pid=2875517) (VllmWorker pid=2875530) WARNING 08-15 12:11:58 [fused_moe.py:727] Using default "
        "MoE config. Performance might be sub-optimal! Config file not found at [...]",
        ("perf_warning", {"topic": "moe-config"}),
    ),
    case(
        "moe-default-config-colour-reset",
        "(VllmWorker rank=0 pid=281) [0;0m WARNING 05-15 11:07:08 [fused_moe.py:659] Using default MoE config. "
        "Performance might be sub-optimal! Config file not found at /x/E=128,N=384,device_name=Tesla_T4.json",
        ("perf_warning", {"topic": "moe-config", "level": "WARNING"}),
    ),
    case(
        "w8a8-block-fp8-default",
        "(Worker_TP0 pid=7) WARNING 05-01 10:00:00 [fp8_utils.py:500] Using default W8A8 Block FP8 kernel config. "
        "Performance might be sub-optimal! Config file not found at /x/N=7168,K=2048,device_name=NVIDIA_H20.json",
        ("perf_warning", {"topic": "fp8-block-config"}),
    ),
    case(
        "gptq-marlin-kernel",
        "INFO 10-01 10:00:00 gptq_marlin.py:200] Using MacheteLinearKernel for GPTQMarlinLinearMethod",
        ("quantization", {"method": "gptq_marlin", "kernel": "MacheteLinearKernel"}),
    ),
    case(
        "selected-kernel",
        "(Worker_TP0 pid=7) INFO 03-10 10:00:00 [__init__.py:90] Selected CutlassFP8ScaledMMLinearKernel for "
        "Fp8LinearMethod",
        ("quantization", {"kernel": "CutlassFP8ScaledMMLinearKernel", "method": "Fp8LinearMethod"}),
    ),
    case(
        "fp8-moe-backend-not-attention",
        "(Worker_TP0 pid=7) INFO 02-01 10:00:00 [fp8.py:120] Using TRITON Fp8 MoE backend out of potential backends: "
        "['DEEPGEMM', 'TRITON'].",
        ("quantization", {"method": "fp8", "kernel": "TRITON"}),
    ),
    case(
        "moe-emulation",
        "(Worker_TP0 pid=7) WARNING 05-01 10:00:00 [nvfp4_emulation_moe.py:50] Using "
        "Nvfp4QuantizationEmulationTritonExperts MOE backend. This will dequantize weights on the fly and may be slower "
        "than native quantized MOE.",
        ("quantization", {"kernel": "Nvfp4QuantizationEmulationTritonExperts", "fallback": True}),
    ),
    case(
        "platform-cpu",
        "INFO 05-11 12:03:00 [__init__.py:239] Automatically detected platform cpu.\n"
        "(EngineCore_DP0 pid=8933) WARNING 10-23 18:38:47 [cpu.py:316] Pin memory is not supported on CPU.",
        ("platform", {"platform": "cpu", "level": "INFO"}),
        ("platform", {"platform": "cpu", "level": "WARNING"}),
    ),
    case(
        "swap-space",
        "WARNING 10-01 10:00:00 config.py:600] Possibly too large swap space. 16.00 GiB out of the 31.00 GiB total CPU "
        "memory is allocated for the swap space.",
        ("offload", {"kind": "swap", "gib": 16.0}),
    ),
    case(
        "cpu-offload-weights",
        "(Worker_TP0 pid=7) INFO 02-26 10:00:00 [utils.py:600] Total CPU offloaded parameters: 12.5 GBs",
        ("offload", {"kind": "weights", "gib": 12.5}),
    ),
    case(
        "kv-connector",
        "(Worker_TP0 pid=7) WARNING 10-03 16:22:00 [base.py:80] Initializing KVConnectorBase_V1. This API is "
        "experimental and subject to change in the future as we iterate the design.",
        ("offload", {"kind": "kv"}),
    ),
    case(
        "env-trace-function",
        "WARNING 10-01 10:00:00 logger.py:200] VLLM_TRACE_FUNCTION is enabled. It will record every function executed "
        "by Python. This will slow down the code.",
        ("perf_warning", {"topic": "trace-function"}),
    ),
    case(
        "slow-tokenizer",
        "(APIServer pid=1) WARNING 10-01 10:00:00 [registry.py:80] Using a slow tokenizer. This might cause a "
        "significant slowdown. Consider using a fast tokenizer instead.",
        ("perf_warning", {"topic": "tokenizer"}),
    ),
]


ALL_CASES = STARTUP + SPEC + STATS + COMM + ATTENTION + KV + HYBRID + GRAPHS + SCHEDULING + ERRORS + OTHER


@pytest.mark.parametrize(("text", "expected"), ALL_CASES)
def test_catalogue_line(text: str, expected: Expect) -> None:
    events = parse_text(text, source="catalogue")
    for type_, fields in expected:
        assert _find(events, type_, fields) is not None, f"no {type_} event with {fields} among:\n{_describe(events)}"


def test_case_count() -> None:
    assert len(ALL_CASES) >= 100


# --- behaviour that needs more than one line ---------------------------------------------------


def test_capture_bar_reported_at_start_and_end_only() -> None:
    text = "\n".join(
        f"Capturing CUDA graphs (decode, FULL): {pct:3d}%|█     | {n}/35 [00:0{n // 10}<00:01, 16.81it/s]"
        for pct, n in ((0, 0), (37, 13), (74, 26), (100, 35))
    )
    events = [e for e in parse_text(text) if e.type == "cuda_graph"]
    assert [e.line for e in events] == [1, 4]


def test_traceback_source_lines_are_not_failures() -> None:
    text = (
        "(APIServer pid=1) Traceback (most recent call last):\n"
        '(APIServer pid=1)     raise RuntimeError("Engine core initialization failed. See root cause above. "\n'
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"
    )
    failures = [e for e in parse_text(text) if e.type == "engine_failure"]
    assert [e.line for e in failures] == [3]


def test_benign_shutdown_lines_are_not_failures() -> None:
    text = (
        "(APIServer pid=1) INFO 07-20 10:00:00 [launcher.py:100] [shutdown] API server: shutdown triggered\n"
        "[rank0]:[W507 00:37:04.709644328 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was not "
        "called before program exit, which can leak resources."
    )
    assert [e for e in parse_text(text) if e.type == "engine_failure"] == []


def test_other_engine_headers_are_not_claimed() -> None:
    text = (
        "[2025-05-09 11:14:36 TP0] Using default MoE config. Performance might be sub-optimal! Config file not found "
        "at /x.json"
    )
    assert [e for e in parse_text(text) if e.engine == "vllm"] == []


def test_truncated_dump_followed_by_header_line() -> None:
    """A dump that looks cut (no final key) but is followed by a header line: both lines still give events."""
    text = (
        "(EngineCore pid=1) INFO 05-06 06:05:38 [core.py:109] Initializing a V1 LLM engine (v0.20.1) with config: "
        "model='/model', tensor_parallel_size=2\n"
        "(EngineCore pid=1) INFO 05-06 06:05:39 [vllm.py:1081] Cudagraph is disabled under eager mode"
    )
    events = parse_text(text)
    config = _find(events, "startup_config", {"config": {"tensor_parallel_size": 2}})
    assert config is not None and config.line == 1
    assert _find(events, "cuda_graph", {"kind": "eager_mode", "line": 2}) is not None


# --- the per-position rates as the former lazy pattern read them -------------------------------

_LAZY_SPEC_V1_RE = re.compile(vllm_spec._SPEC_V1_RE.pattern.replace(r"(?P<pos>[\d., nan]+)", r"(?P<pos>[\d., nan]+?)"))


@given(
    rates=st.lists(st.sampled_from(["0.5", "0.125", " 0.25", "nan", "", " ", "1"]), min_size=1, max_size=6),
    tail=st.sampled_from(
        ["", ",", ", ", " ", "  \t", ", Avg Draft acceptance rate: 12.5%", ", Avg Draft acceptance rate: nan% "]
    ),
)
def test_spec_positions_read_as_the_lazy_pattern_did(rates: list[str], tail: str) -> None:
    message = (
        "SpecDecoding metrics: Mean acceptance length: 2.50, Accepted: 10 tokens, Drafted: 40 tokens, "
        "Per-position acceptance rate: " + ",".join(rates) + tail
    )
    assert _LAZY_SPEC_V1_RE.pattern != vllm_spec._SPEC_V1_RE.pattern
    greedy, lazy = vllm_spec._SPEC_V1_RE.search(message), _LAZY_SPEC_V1_RE.search(message)
    assert (greedy is None) == (lazy is None)
    if greedy is None or lazy is None:
        return
    assert greedy.group("rate") == lazy.group("rate")
    assert greedy.group("pos").split(",")[:-1] == lazy.group("pos").split(",")[:-1]
    assert greedy.group("pos").split(",")[-1].strip() == lazy.group("pos").split(",")[-1].strip()


# --- the grammars' own samples -----------------------------------------------------------------


@pytest.mark.parametrize("grammar", vllm.GRAMMARS, ids=lambda g: g.name)
def test_grammar_samples_parse(grammar: Any) -> None:
    assert len(grammar.samples) >= 1
    for sample in grammar.samples:
        assert any(k in sample for k in grammar.keywords), f"{grammar.name}: no keyword in {sample!r}"
        events = parse_text(sample)
        assert events, f"{grammar.name}: sample gave no event: {sample!r}"
        assert all(e.engine in ("vllm", "unknown") for e in events)


def test_keywords_are_specific() -> None:
    generic = {"INFO", "WARNING", "ERROR", "model", "vllm", "vLLM", "backend", "Using", "took"}
    for grammar in vllm.GRAMMARS:
        for keyword in grammar.keywords:
            assert keyword.strip() not in generic and len(keyword.strip()) >= 7, (grammar.name, keyword)


# --- real logs ---------------------------------------------------------------------------------

CORPUS_EXPECTED: dict[str, set[str]] = {
    "vllm-001": {"scheduler_stats", "spec_decode_stats"},
    "vllm-002": {"scheduler_stats"},
    "vllm-004": {"hybrid_model"},
    "vllm-009": {"compile_time"},
    "vllm-011": {"compile_time"},
    "vllm-013": {"attention_backend"},
    "vllm-016": {"spec_decode_stats"},
    "vllm-017": {"perf_warning"},
    "vllm-018": {"engine_version", "startup_config"},
    "vllm-021": {"perf_warning", "custom_allreduce", "quantization", "kv_cache", "nccl_version", "startup_config"},
    "vllm-022": {"custom_allreduce"},
    "vllm-024": {"quantization"},
    "vllm-026": {"attention_backend"},
    "vllm-028": {"hybrid_model"},
    "vllm-032": {"quantization"},
    "vllm-033": {"hybrid_model", "compile_time"},
    "vllm-034": {"startup_config", "kv_cache", "cuda_graph", "compile_time", "attention_backend", "model_info"},
    "vllm-037": {"hybrid_model"},
    "vllm-h02": {"scheduler_stats"},
    "vllm-h04": {"startup_config", "kv_cache", "cuda_graph", "compile_time", "attention_backend", "model_info"},
}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_log(name: str) -> None:
    path = CORPUS / f"{name}.log"
    if not path.exists():
        pytest.skip(f"{path} not in this corpus")
    lines = enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), start=1)
    stream = EventStream(name, lines)
    events = list(stream)
    assert CORPUS_EXPECTED[name] <= {e.type for e in events}
    assert stream.stats.unrecognised == 0, stream.stats.unrecognised_samples


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_018_wrapped_engine_init() -> None:
    text = (CORPUS / "vllm-018.log").read_text(encoding="utf-8")
    config = _find(parse_text(text), "startup_config", {"origin": "engine init"})
    assert config is not None
    data = config.model_dump()["config"]
    assert data["enforce_eager"] is True
    assert data["num_scheduler_steps"] == 1
    assert data["compilation_config"]["cudagraph_capture_sizes"] == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_h04_dump_wrapped_over_thirteen_lines() -> None:
    text = (CORPUS / "vllm-h04.log").read_text(encoding="utf-8")
    config = _find(parse_text(text), "startup_config", {"origin": "engine init"})
    assert config is not None and (config.line, config.end_line) == (11, 23) and not config.model_dump()["truncated"]
    data = config.model_dump()["config"]
    assert data["tensor_parallel_size"] == 1 and data["enforce_eager"] is False
    assert data["compilation_config"]["max_capture_size"] == 512
