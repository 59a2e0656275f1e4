"""SGLang grammars, fed through the whole pipeline with the lines of catalogue/sglang-nccl.md §1-§9.

Each case is one log text (usually one line) and the events it must produce, in order, with the values
that matter. VERBATIM lines are copied from the catalogue; RENDERED ones are built from SGLang's format
strings (numbers invented, structure exact).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from logdoctor.events import EventBase, StartupConfig
from logdoctor.parse.pipeline import parse_text


@dataclass(frozen=True)
class E:
    """An expected event: its type and the fields to compare (floats approximately)."""

    type: str
    values: dict[str, Any] = field(default_factory=dict)


def e(type_: str, **values: Any) -> E:
    return E(type_, values)


def check(events: list[EventBase], expected: list[E]) -> None:
    assert [ev.type for ev in events] == [x.type for x in expected], [ev.type for ev in events]
    for event, exp in zip(events, expected, strict=True):
        for name, value in exp.values.items():
            actual = getattr(event, name)
            if isinstance(value, float):
                assert actual == pytest.approx(value), (name, actual)
            else:
                assert actual == value, (name, actual)


def decode(**values: Any) -> E:
    return e("scheduler_stats", format="sglang-decode", **values)


def prefill(**values: Any) -> E:
    return e("scheduler_stats", format="sglang-prefill", **values)


def spec(length: float, rate: float | None = None) -> E:
    return e("spec_decode_stats", format="sglang", interval=True, mean_acceptance_length=length, acceptance_rate=rate)


# --- §1 envelope examples and §3 Decode/Prefill batch lines ---------------------------------------


def test_batch_line_keeps_rank_and_timestamp() -> None:
    (event,) = parse_text(
        "[2025-05-31 18:31:21 DP6 TP6] Decode batch. #running-req: 8, #token: 36267, token usage: 0.12, cuda graph: "
        "True, gen throughput (token/s): 168.28, #queue-req: 0"
    )
    assert event.timestamp == "2025-05-31 18:31:21"
    assert event.process is not None
    assert (event.process.dp_rank, event.process.tp_rank) == (6, 6)
    assert event.engine == "sglang"


# --- §4-§9 one-line facts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[2025-01-23 19:35:15 TP0] Load weight begin. avail mem=78.81 GB",
        "[2025-01-23 19:35:16 TP0] Using model weights format ['*.safetensors']",
        '[2025-01-23 19:35:28] INFO:     127.0.0.1:47208 - "GET /v1/models HTTP/1.1" 200 OK',
    ],
)
def test_lines_without_events(text: str) -> None:
    assert parse_text(text) == []


def test_a_warning_no_line_type_reads_is_a_warning_not_understood() -> None:
    (event,) = parse_text(
        "[2026-02-26 05:19:58] WARNING server_args.py:1245: DSA with TP mode is active, dp_size=1, tp_size=8"
    )
    assert (event.type, getattr(event, "cause", "-"), event.level) == ("engine_warning", None, "WARNING")


# --- §2 the server_args dump --------------------------------------------------------------------------

DUMP_041 = (
    "[2025-01-23 19:34:55] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', tokenizer_path="
    "'meta-llama/Meta-Llama-3.1-8B-Instruct', tokenizer_mode='auto', load_format='auto', trust_remote_code=False, "
    "dtype='auto', kv_cache_dtype='auto', quantization_param_path=None, quantization=None, context_length=None, "
    "device='cuda', … mem_fraction_static=0.88, max_running_requests=None, max_total_tokens=None, "
    "chunked_prefill_size=8192, max_prefill_tokens=16384, schedule_policy='lpm', schedule_conservativeness=1.0, "
    "cpu_offload_gb=0, prefill_only_one_req=False, tp_size=1, stream_interval=1, random_seed=809822282, … "
    "attention_backend='flashinfer', sampling_backend='flashinfer', grammar_backend='outlines', "
    "speculative_draft_model_path=None, speculative_algorithm=None, speculative_num_steps=5, "
    "speculative_num_draft_tokens=64, speculative_eagle_topk=8, … disable_radix_cache=False, "
    "disable_jump_forward=False, disable_cuda_graph=False, disable_cuda_graph_padding=False, "
    "disable_outlines_disk_cache=False, disable_custom_all_reduce=False, disable_mla=False, "
    "disable_overlap_schedule=False, enable_mixed_chunk=False, enable_dp_attention=False, enable_ep_moe=False, "
    "enable_torch_compile=False, torch_compile_max_bs=32, cuda_graph_max_bs=160, cuda_graph_bs=None, "
    "torchao_config='', … enable_custom_logit_processor=False)"
)
DUMP_GLM5_TRUNCATED = (
    "[2026-02-26 05:19:58] server_args=ServerArgs(model_path='zai-org/GLM-5-FP8', tokenizer_path='zai-org/GLM-5-FP8', "
    "tokenizer_mode='auto', tokenizer_worker_num=1, skip_tokenizer_init=False, load_format='auto', "
    "model_loader_extra_config='{}', trust_remote_code=False, context_length=None, …, kv_cache_dtype='fp8_e4m3', …, "
    "mem_fraction_static=0.908, max_running_requests=None, max_queued_requests=None, max_total_tokens=None, "
    "chunked_prefill_size=16384, enable_dynamic_chunking=False, max_prefill_tokens=16384, prefill_max_requests=None, "
    "schedule_poli…"
)
DUMP_DSV4_DICT = (
    "[2026-09-11 23:34:03] server_args={'model_path': '/models/DeepSeek-V4.1-Flash', 'tokenizer_path': "
    "'/models/DeepSeek-V4.1-Flash', 'tokenizer_mode': 'auto', …, 'kv_cache_dtype': 'fp8_e4m3', …, "
    "'mem_fraction_static': 0.95, 'max_running_requests': 4, 'max_queued_requests': None, 'max_total_tokens': 3000000, "
    "'chunked_prefill_size': 1024, …, 'schedule_policy': 'fcfs', …, 'page_size': 256, …, 'disable_radix_cache': False, "
    "…, 'disable_overlap_schedule': False, …, 'nnodes': 3, 'node_rank': 0, 'tp_size': 3, …, 'attention_backend': "
    "'dsv4', …, 'cuda_graph_config': {'decode': {'backend': 'full', 'max_bs': 4, 'bs': [1, 2, 3, 4], …}, 'prefill': "
    "{'backend': 'disabled', …}}, 'cuda_graph_backend_decode': None, …, 'cuda_graph_max_bs_decode': 4, …, "
    "'disable_cuda_graph': False, …, 'disable_custom_all_reduce': False, …, 'speculative_algorithm': 'DSPARK', …, "
    "'speculative_num_steps': 1, 'speculative_eagle_topk': 1, 'speculative_num_draft_tokens': 6, …, 'ep_size': 3, …, "
    "'max_mamba_cache_size': None, 'mamba_ssm_dtype': None, …}"
)
DUMP_0520_DICT = (
    "[2026-09-24 01:50:02] server_args={'model_path': '/models/x', 'tp_size': 2, 'quantization': 'auto-round', "
    "'kv_cache_dtype': 'fp8_e4m3', 'context_length': 262144, 'speculative_algorithm': 'DFLASH', "
    "'speculative_num_draft_tokens': 8, 'mamba_ssm_dtype': None}"
)
DUMP_0514_NESTED = (
    "[2026-06-26 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=2, cuda_graph_config=CudaGraphConfig("
    "decode=PhaseConfig(backend='full', max_bs=256, bs=[1, 2, 4], tc_compiler='eager'), prefill=PhaseConfig("
    "backend='tc_piecewise', max_bs=1024)), disable_cuda_graph=False, disaggregation_mode='null', "
    "_speculative_draft_quantization_explicitly_set=False)"
)


def _config(text: str) -> StartupConfig:
    (event,) = parse_text(text)
    assert isinstance(event, StartupConfig)
    assert event.origin == "server_args"
    assert event.engine == "sglang"
    return event


def test_server_args_dataclass_041_with_elisions() -> None:
    event = _config(DUMP_041)
    assert event.truncated is False
    assert "__class__" not in event.config
    assert event.config["model_path"] == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert event.config["mem_fraction_static"] == 0.88
    assert event.config["tp_size"] == 1
    assert event.config["attention_backend"] == "flashinfer"
    assert event.config["disable_radix_cache"] is False
    assert event.config["cuda_graph_max_bs"] == 160
    assert event.config["enable_custom_logit_processor"] is False


def test_server_args_truncated_keeps_keys_before_the_cut() -> None:
    event = _config(DUMP_GLM5_TRUNCATED)
    assert event.truncated is True
    assert event.config["model_path"] == "zai-org/GLM-5-FP8"
    assert event.config["kv_cache_dtype"] == "fp8_e4m3"
    assert event.config["mem_fraction_static"] == 0.908
    assert event.config["prefill_max_requests"] is None
    assert "schedule_policy" not in event.config


def test_server_args_dict_form() -> None:
    event = _config(DUMP_DSV4_DICT)
    assert event.truncated is False
    assert event.config["tp_size"] == 3
    assert event.config["nnodes"] == 3
    assert event.config["attention_backend"] == "dsv4"
    assert event.config["speculative_algorithm"] == "DSPARK"
    assert event.config["cuda_graph_config"]["decode"]["bs"] == [1, 2, 3, 4]
    assert event.config["max_total_tokens"] == 3000000
    event = _config(DUMP_0520_DICT)
    assert event.config == {
        "model_path": "/models/x",
        "tp_size": 2,
        "quantization": "auto-round",
        "kv_cache_dtype": "fp8_e4m3",
        "context_length": 262144,
        "speculative_algorithm": "DFLASH",
        "speculative_num_draft_tokens": 8,
        "mamba_ssm_dtype": None,
    }


def test_server_args_nested_dataclasses() -> None:
    event = _config(DUMP_0514_NESTED)
    decode = event.config["cuda_graph_config"]["decode"]
    assert decode["__class__"] == "PhaseConfig"
    assert decode["bs"] == [1, 2, 4]
    assert event.config["disaggregation_mode"] == "null"
    assert event.config["_speculative_draft_quantization_explicitly_set"] is False


@pytest.mark.parametrize(
    "text",
    [
        "2026-09-22T06:49:56.336833841Z [2026-09-22 06:49:56] server_args={'model_path': '/m', 'tp_size': 2}",
        "2026-09-26T19:55:58.468Z zw21lesh-67pt5 INFO server_args={'model_path': '/m', 'tp_size': 2, …}",
        "[2026-03-21 03:31:56] INFO engine.py:177: server_args=ServerArgs(model_path='/m', tp_size=2)",
    ],
)
def test_server_args_behind_other_envelopes(text: str) -> None:
    event = _config(text)
    assert event.config["model_path"] == "/m"
    assert event.config["tp_size"] == 2


def test_server_args_wrapped_over_several_lines() -> None:
    text = (
        "[2026-09-24 01:50:02] server_args={'model_path': '/models/x', 'tp_size': 2, 'quanti\n"
        "zation': 'auto-round', 'kv_cache_dtype': 'fp8_e4m3', 'speculative_algorithm': 'DFL\n"
        "ASH', 'disable_cuda_graph': False}\n"
        "[2026-09-24 01:50:03] sglang is using nccl==2.27.3"
    )
    events = parse_text(text)
    assert [ev.type for ev in events] == ["startup_config", "nccl_version"]
    config = events[0]
    assert isinstance(config, StartupConfig)
    assert (config.line, config.end_line, config.truncated) == (1, 3, False)
    assert config.config["quantization"] == "auto-round"
    assert config.config["speculative_algorithm"] == "DFLASH"
    assert config.config["disable_cuda_graph"] is False


def test_server_args_cut_by_a_log_shipper_is_kept_as_truncated() -> None:
    text = (
        "[2026-09-24 01:50:02] server_args={'model_path': '/models/x', 'tp_size': 2, 'kv_cache_dtype': 'fp8_e4\n"
        "[2026-09-24 01:50:03] sglang is using nccl==2.27.3"
    )
    events = parse_text(text)
    assert sorted(ev.type for ev in events) == ["nccl_version", "startup_config"]
    config = next(ev for ev in events if isinstance(ev, StartupConfig))
    assert config.truncated is True
    assert config.config == {"model_path": "/models/x", "tp_size": 2}


# --- §1.7 a complete real startup (0.4.1, tp=1) ---------------------------------------------------------

STARTUP_041 = "\n".join(
    [
        DUMP_041,
        "[2025-01-23 19:35:14 TP0] Init torch distributed begin.",
        "[2025-01-23 19:35:15 TP0] Load weight begin. avail mem=78.81 GB",
        "[2025-01-23 19:35:16 TP0] Using model weights format ['*.safetensors']",
        "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:03<00:00,  1.31it/s]",
        "[2025-01-23 19:35:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB",
        "[2025-01-23 19:35:20 TP0] KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.",
        "[2025-01-23 19:35:20 TP0] Memory pool end. avail mem=8.34 GB",
        "[2025-01-23 19:35:20 TP0] Capture cuda graph begin. This can take up to several minutes.",
        "100%|██████████| 23/23 [00:06<00:00,  3.51it/s]",
        "[2025-01-23 19:35:27 TP0] Capture cuda graph end. Time elapsed: 6.57 s",
        "[2025-01-23 19:35:27 TP0] max_total_num_tokens=444500, max_prefill_tokens=16384, max_running_requests=2049, "
        "context_len=131072",
        "[2025-01-23 19:35:27] INFO:     Started server process [889167]",
        "[2025-01-23 19:35:28 TP0] Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, cache hit rate: 0.00%, "
        "token usage: 0.00, #running-req: 0, #queue-req: 0",
        "[2025-01-23 19:35:33] The server is fired up and ready to roll!",
        "[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 60, token usage: 0.00, gen throughput "
        "(token/s): 5.91, #queue-req: 0",
    ]
)


def test_complete_startup_041() -> None:
    # Line 5 is the shard-loading progress bar, which is read by the vLLM grammars (both engines print it).
    events = [ev for ev in parse_text(STARTUP_041) if ev.line != 5]
    check(
        events,
        [
            e("startup_config", line=1, origin="server_args"),
            e("compile_time", line=6, kind="weights_load"),
            e("model_info", line=6, architecture="LlamaForCausalLM"),
            e("kv_cache", line=7, kv_cache_memory_gib=54.26),
            e("kv_cache", line=8, free_memory_gib=8.34),  # `Memory pool end. avail mem=`
            e("cuda_graph", line=9, kind="capture_started"),
            e("cuda_graph", line=11, kind="capture_finished", seconds=6.57),
            e("kv_cache", line=12, kv_tokens=444500),
            e("scheduler_config", line=12, kind="max-num-seqs", value=2049),
            e("model_info", line=12, max_model_len=131072),
            prefill(line=14, new_tokens=7, running=0),
            e("compile_time", line=15, kind="server_ready"),
            decode(line=16, running=1, generation_throughput=5.91),
        ],
    )
    assert all(ev.engine == "sglang" for ev in events)


# --- every grammar's own samples are recognised -------------------------------------------------------
