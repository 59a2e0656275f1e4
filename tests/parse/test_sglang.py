"""SGLang grammars, fed through the whole pipeline with the lines of catalogue/sglang-nccl.md §1-§9.

Each case is one log text (usually one line) and the events it must produce, in order, with the values
that matter. VERBATIM lines are copied from the catalogue; RENDERED ones are built from SGLang's format
strings (numbers invented, structure exact).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from logdoctor.engines.sglang import grammars as sglang
from logdoctor.events import EventBase, StartupConfig
from logdoctor.parse.envelope import parse_envelope
from logdoctor.parse.grammar import Grammar, ParseContext
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

BATCH_CASES: list[tuple[str, list[E]]] = [
    # VERBATIM §1.2
    (
        "[2026-04-08 14:05:21 TP0] Decode batch, #running-req: 5, #token: 20800, token usage: 0.29, cuda graph: True, "
        "gen throughput (token/s): 144.95, #queue-req: 0",
        [
            decode(
                running=5, num_tokens=20800, kv_cache_usage=0.29, cuda_graph=True, generation_throughput=144.95, queue=0
            )
        ],
    ),
    (
        "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, accept len: "
        "3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2",
        [
            decode(
                running=24,
                num_tokens=233600,
                kv_cache_usage=0.66,
                cuda_graph=True,
                generation_throughput=239.06,
                queue=2,
                extra={"graph_device": "npu"},
            ),
            spec(3.05, 0.68),
        ],
    ),
    (
        "[2025-11-11 04:06:27] Decode batch, #running-req: 46, #token: 34901, token usage: 0.19, cuda graph: False, "
        "gen throughput (token/s): 1447.08, #queue-req: 0, ",
        [decode(running=46, num_tokens=34901, kv_cache_usage=0.19, cuda_graph=False, generation_throughput=1447.08)],
    ),
    # VERBATIM §1.1 glued to a streamed completion
    (
        "1. Country:[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 57, token usage: 0.00, "
        "gen throughput (token/s): 5.91, #queue-req: 0",
        [decode(running=1, num_tokens=57, kv_cache_usage=0.0, cuda_graph=None, generation_throughput=5.91)],
    ),
    # VERBATIM §3.2
    (
        "[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 60, token usage: 0.00, gen throughput "
        "(token/s): 5.91, #queue-req: 0",
        [decode(running=1, num_tokens=60, generation_throughput=5.91, queue=0)],
    ),
    (
        "[2025-12-12 08:43:59 TP0] Decode batch, #running-req: 6, #token: 1920, token usage: 0.94, cuda graph: True, "
        "gen throughput (token/s): 446.45, #queue-req: 5,",
        [decode(running=6, num_tokens=1920, kv_cache_usage=0.94, cuda_graph=True, queue=5)],
    ),
    (
        "[2026-04-05 20:02:51] Decode batch, #running-req: 32, #token: 11179, token usage: 0.08, cuda graph: True, "
        "gen throughput (token/s): 1635.11, #queue-req: 0",
        [decode(running=32, num_tokens=11179, kv_cache_usage=0.08, generation_throughput=1635.11)],
    ),
    (
        "\x1b[36m(CommandActor pid=105447)\x1b[0m [2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13, "
        "#full token: 8704, full token usage: 0.00, #swa token: 3712, swa token usage: 0.01, accept len: 3.19, "
        "accept rate: 0.31, cuda graph: True, gen throughput (token/s): 0.50, #queue-req: 2",
        [
            decode(
                running=13,
                num_tokens=8704,
                kv_cache_usage=0.0,
                cuda_graph=True,
                generation_throughput=0.5,
                queue=2,
                extra={"swa_token": 3712, "swa_token_usage": 0.01},
            ),
            spec(3.19, 0.31),
        ],
    ),
    (
        "[2026-09-30 08:30:35] Decode batch, #running-req: 9, #full token: 11584, full token usage: 0.01, mamba num: "
        "36, mamba usage: 0.60, accept len: 3.04, accept rate: 0.68, cuda graph: True, gen throughput (token/s): "
        "22.40, #queue-req: 1",
        [
            decode(
                running=9,
                num_tokens=11584,
                kv_cache_usage=0.01,
                generation_throughput=22.4,
                queue=1,
                extra={"mamba_num": 36, "mamba_usage": 0.6},
            ),
            spec(3.04, 0.68),
        ],
    ),
    (
        "[03:51:54] Decode batch, #running-req: 6, #full token: 2435072, full token usage: 0.92, swa token usage: "
        "0.09, gen throughput (token/s): 24.33",
        [
            decode(
                running=6,
                num_tokens=2435072,
                kv_cache_usage=0.92,
                cuda_graph=None,
                queue=None,
                generation_throughput=24.33,
                extra={"swa_token_usage": 0.09},
            )
        ],
    ),
    (
        "Decode batch. #running-req: 233, #token: 370959, token usage: 0.82, cuda graph: True, gen throughput "
        "(token/s): 4594.01, #queue-req: 317",
        [decode(running=233, num_tokens=370959, kv_cache_usage=0.82, queue=317, generation_throughput=4594.01)],
    ),
    # RENDERED §3.2, one per version family
    (
        "[2024-12-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, "
        "gen throughput (token/s): 294.51, #queue-req: 0",
        [decode(running=4, num_tokens=12840, kv_cache_usage=0.06, generation_throughput=294.51, queue=0)],
    ),
    (
        "[2025-01-10 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
        "gen throughput (token/s): 294.51, #queue-req: 0",
        [decode(running=4, generation_throughput=294.51), spec(3.12, None)],
    ),
    (
        "[2025-03-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
        "gen throughput (token/s): 294.51, largest-len: 0, #queue-req: 0, ",
        [decode(running=4, queue=0, extra={"largest_len": 0}), spec(3.12)],
    ),
    (
        "[2025-04-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
        "cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0",
        [decode(running=4, cuda_graph=True), spec(3.12)],
    ),
    (
        "[2025-10-01 10:00:00 TP0] Decode batch, #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
        "accept rate: 0.71, cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0, ",
        [decode(running=4, kv_cache_usage=0.06, cuda_graph=True, queue=0), spec(3.12, 0.71)],
    ),
    # SGLANG_LOG_FORWARD_ITERS=1, mfu metrics and the device-timer occupancy suffix (0.5.21+)
    (
        "[2026-10-01 10:00:00 TP0] Decode batch [1234], #running-req: 4, #token: 12840, token usage: 0.06, "
        "cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0, est. decode TFLOPS/s (per GPU): 12.5, "
        "est. read BW (GB/s per GPU): 1800.2, est. write BW (GB/s per GPU): 20.1, fwd occupancy: 91.20%, "
        "fwd+idle occupancy: 95.00%",
        [
            decode(
                running=4,
                queue=0,
                extra={
                    "forward_iter": 1234,
                    "est_decode_tflops_s_per_gpu": 12.5,
                    "est_read_bw_gb_s_per_gpu": 1800.2,
                    "est_write_bw_gb_s_per_gpu": 20.1,
                    "fwd_occupancy": 0.912,
                    "fwd_idle_occupancy": 0.95,
                },
            )
        ],
    ),
    # HiSparse (0.5.11+): the GPU pool is the KV usage, the CPU pool the CPU KV usage
    (
        "[2026-06-01 10:00:00 TP0] Decode batch, #running-req: 4, #gpu token: 4096, gpu token usage: 0.50, "
        "#cpu token: 65536, cpu token usage: 0.25, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0",
        [decode(num_tokens=4096, kv_cache_usage=0.5, cpu_kv_cache_usage=0.25, extra={"cpu_token": 65536})],
    ),
    # PD-decode extras (§3.4) land in `extra`
    (
        "[2025-11-01 10:00:00 TP0] Decode batch, #running-req: 8, #token: 4000, token usage: 0.10, pre-allocated "
        "usage: 0.05, #prealloc-req: 1, #transfer-req: 2, #retracted-req: 3, cuda graph: True, gen throughput "
        "(token/s): 500.00, #queue-req: 0, ",
        [
            decode(
                running=8,
                extra={"pre_allocated_usage": 0.05, "prealloc_req": 1, "transfer_req": 2, "retracted_req": 3},
            )
        ],
    ),
    # VERBATIM §3.3 Prefill lines
    (
        "[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: 75, #cached-token: 0, cache hit rate: 0.00%, "
        "token usage: 0.01, #running-req: 1, #queue-req: 62",
        [
            prefill(
                new_tokens=75,
                cached_tokens=0,
                prefix_cache_hit_rate=0.0,
                kv_cache_usage=0.01,
                running=1,
                queue=62,
                extra={"new_seq": 1},
            )
        ],
    ),
    (
        "[2026-05-15 12:50:14] Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, full token usage: 0.01, "
        "swa token usage: 0.02, #running-req: 0, #queue-req: 0, input throughput (token/s): 46.36, cuda graph: False",
        [
            prefill(
                new_tokens=2048,
                kv_cache_usage=0.01,
                prompt_throughput=46.36,
                cuda_graph=None,
                extra={"new_seq": 1, "swa_token_usage": 0.02, "cuda_graph": "False"},
            )
        ],
    ),
    (
        "[2026-04-05 20:02:51] Prefill batch, #new-seq: 1, #new-token: 158, #cached-token: 0, token usage: 0.08, "
        "#running-req: 31, #queue-req: 0, cuda graph: True, input throughput (token/s): 559.53",
        [prefill(new_tokens=158, running=31, queue=0, prompt_throughput=559.53)],
    ),
    (
        "[2026-07-21 15:00:13 TP0 EP0] Prefill batch, #new-seq: 8, #new-token: 54400, #cached-token: 482304, token "
        "usage: 0.66, #running-req: 16, #queue-req: 2, #pending-token: 0, npu graph: False, input throughput "
        "(token/s): 2793.64",
        [
            prefill(
                new_tokens=54400,
                cached_tokens=482304,
                kv_cache_usage=0.66,
                running=16,
                queue=2,
                prompt_throughput=2793.64,
                extra={"new_seq": 8, "pending_token": 0, "cuda_graph": "False", "graph_device": "npu"},
            )
        ],
    ),
    (
        "[2026-09-30 08:30:15] Prefill batch, #new-seq: 1, #new-token: 64, #cached-token: 128, full token usage: 0.00, "
        "mamba usage: 0.05, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput "
        "(token/s): 7.34",
        [prefill(new_tokens=64, cached_tokens=128, kv_cache_usage=0.0, prompt_throughput=7.34)],
    ),
    # RENDERED §3.3 and a PD prefill server without #running-req (0.4.7-0.5.2)
    (
        "[2025-10-01 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
        "#running-req: 3, #queue-req: 0, ",
        [prefill(new_tokens=512, running=3, queue=0)],
    ),
    (
        "[2025-07-01 10:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
        "#unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 1, input throughput (token/s): 1024.55, ",
        [
            prefill(
                running=None,
                new_tokens=512,
                prompt_throughput=1024.55,
                extra={"new_seq": 1, "unbootstrapped_req": 0, "transferring_req": 1},
            )
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), BATCH_CASES, ids=[t[:70] for t, _ in BATCH_CASES])
def test_batch_lines(text: str, expected: list[E]) -> None:
    check(parse_text(text), expected)


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

LINE_CASES: list[tuple[str, list[E]]] = [
    # §8.2 NCCL as seen by SGLang (VERBATIM), and patch 0 rendered empty (RENDERED)
    ("[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5", [e("nccl_version", version="2.21.5", engine="sglang")]),
    ("[2025-02-24 14:09:34 TP12] sglang is using nccl==2.21.5", [e("nccl_version", version="2.21.5")]),
    ("[2026-01-01 10:00:00 TP0] sglang is using nccl==2.27.", [e("nccl_version", version="2.27.0")]),
    # version evidence outside the log proper
    ("sglang: 0.5.6.post2", [e("engine_version", version="0.5.6.post2", origin="check_env", engine="sglang")]),
    ("pip install sglang[all]==0.4.6.post5", [e("engine_version", version="0.4.6.post5", origin="package pin")]),
    (
        "docker run --gpus all lmsysorg/sglang:v0.5.20-cu129 python3 -m sglang.launch_server",
        [e("engine_version", version="0.5.20", origin="docker image")],
    ),
    # §4.1 distributed init (VERBATIM, VERBATIM-IDX, RENDERED 0.5.21+)
    (
        "[2025-10-16 09:06:09 TP0] Init torch distributed ends. mem usage=1.96 GB",
        [e("compile_time", kind="distributed_init", seconds=None, memory_gib=1.96)],
    ),
    (
        "[2026-09-11 23:34:12 TP0 EP0] Init torch distributed ends. elapsed=1.33 s, mem usage=0.61 GB",
        [e("compile_time", kind="distributed_init", seconds=1.33, memory_gib=0.61)],
    ),
    (
        "[2026-10-20 10:00:00 TP0] Init parallel ends. elapsed=2.10 s",
        [e("compile_time", kind="distributed_init", seconds=2.1)],
    ),
    # §4.2 weights (VERBATIM, VERBATIM-IDX target + MTP draft, RENDERED 0.4.3 and overlap loader)
    (
        "[2025-01-23 19:35:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB",
        [
            e("compile_time", kind="weights_load", seconds=None, memory_gib=None),
            e("model_info", architecture="LlamaForCausalLM", dtype="torch.bfloat16"),
        ],
    ),
    (
        "[2026-08-28 21:32:38] Load weight end. elapsed=787.55 s, type=Qwen4ExpForConditionalGeneration, "
        "quant=modelopt_fp4, quant_algo=NVFP4, avail mem=29.01 GB, mem usage=82.97 GB.",
        [
            e("compile_time", kind="weights_load", seconds=787.55, memory_gib=82.97),
            e("model_info", architecture="Qwen4ExpForConditionalGeneration", dtype=None),
            e("quantization", method="modelopt_fp4", fallback=False),
        ],
    ),
    (
        "[2026-08-28 21:34:13] Load weight end. elapsed=94.49 s, type=Qwen4ExpForCausalLMMTP, quant=modelopt_fp4, "
        "quant_algo=NVFP4, avail mem=30.67 GB, mem usage=-1.86 GB.",
        [
            e("compile_time", kind="draft_weights_load", seconds=94.49, memory_gib=-1.86),
            e("quantization", method="modelopt_fp4"),
        ],
    ),
    (
        "[2026-10-10 11:59:36] Load weight end. elapsed=329.53 s, type=BailingMoeV3ForCausalLM, quant=fp8, fmt=e4m3, "
        "avail mem=29.67 GB, mem usage=80.31 GB.",
        [
            e("compile_time", kind="weights_load", seconds=329.53, memory_gib=80.31),
            e("model_info", architecture="BailingMoeV3ForCausalLM"),
            e("quantization", method="fp8"),
        ],
    ),
    (
        "[2025-04-01 10:00:00 TP0] Load weight end. type=DeepseekV3ForCausalLMNextN, dtype=torch.bfloat16, avail "
        "mem=20.10 GB, mem usage=1.20 GB.",
        [e("compile_time", kind="draft_weights_load", memory_gib=1.2)],
    ),
    (
        "[2026-09-01 10:00:00 TP0] Load weight end. Committed real weights after CUDA graph capture in 12.50 s "
        "(capture overlap window 8.00 s, startup overlap total 20.00 s)",
        [e("compile_time", kind="weights_load", seconds=12.5)],
    ),
    # §4.3 KV pool (VERBATIM target then draft, VERBATIM-IDX MLA, VERBATIM 0.4.1, RENDERED 0.4.3 and 0.5.17+)
    (
        "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, K size: "
        "3.46 GB, V size: 3.46 GB",
        [e("kv_cache", kv_tokens=454112, kv_cache_memory_gib=6.92)],
    ),
    (
        "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, K size: "
        "1.08 GB, V size: 1.08 GB",
        [e("kv_cache", kv_tokens=454112, kv_cache_memory_gib=2.16)],
    ),
    (
        "[2026-10-10 11:59:41] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1226984, KV size: 9.21 GB",
        [e("kv_cache", kv_tokens=1226984, kv_cache_memory_gib=9.21)],
    ),
    (
        "[2025-01-23 19:35:20 TP0] KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.",
        [e("kv_cache", kv_tokens=None, kv_cache_memory_gib=54.26)],
    ),
    (
        "[2025-03-06 06:15:00 TP0] KV Cache is allocated. #tokens: 444500, K size: 27.13 GB, V size: 27.13 GB",
        [e("kv_cache", kv_tokens=444500, kv_cache_memory_gib=54.26)],
    ),
    (
        "[2026-08-10 10:00:00 TP0] MiniMax MSA-v1 main NVFP4 KV Cache is allocated. dtype: torch.uint8, #tokens: "
        "800000, KV size: 4.50 GB",
        [e("kv_cache", kv_tokens=800000, kv_cache_memory_gib=4.5)],
    ),
    (
        "[2026-07-25 10:00:00 TP0] Post-capture KV sizing: max_total_num_tokens=523264, free memory=6.20 GB",
        [e("kv_cache", kv_tokens=523264, free_memory_gib=6.2)],
    ),
    (
        "[2026-07-25 10:00:00 TP0] Post-capture KV sizing: max_running_requests 512 -> 256",
        [e("scheduler_config", kind="max-num-seqs", value=256)],
    ),
    (
        "[2026-07-25 10:00:00 TP0] Post-capture KV sizing: decode CUDA graph max_bs=64 < max_running_requests=256; "
        "reserving activation headroom",
        [e("cuda_graph", kind="capture_capped", role="target", max_batch_size=64)],
    ),
    (
        "[2025-12-01 10:00:00 TP0] Use sliding window memory pool. full_layer_tokens=1048576, swa_layer_tokens=262144",
        [e("kv_cache", kv_tokens=1048576)],
    ),
    (
        "[2026-07-01 10:00:00 TP0] [unified-memory-pool]   total_bytes=85899345920, max_total_num_tokens=2000000, "
        "max_mamba_cache_size=256, max_num_reqs=256, speculative_num_draft_tokens=4",
        [e("kv_cache", kv_tokens=2000000)],
    ),
    # §4.4 effective limits (VERBATIM docs tp=1, VERBATIM-IDX tp=8, VERBATIM 0.4.1 form, bench_one_batch bare)
    (
        "[2025-08-11 17:17:03] max_total_num_tokens=665690, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=4096, context_len=65536, available_gpu_mem=13.50 GB",
        [
            e("kv_cache", kv_tokens=665690, free_memory_gib=13.5),
            e("scheduler_config", kind="max-num-seqs", value=4096),
            e("scheduler_config", kind="chunked-prefill", enabled=True, value=8192),
            e("model_info", max_model_len=65536),
        ],
    ),
    (
        "[2025-09-11 10:26:01 TP0] max_total_num_tokens=903439, chunked_prefill_size=8192, max_prefill_tokens=16384, "
        "max_running_requests=3529, context_len=131072, available_gpu_mem=10.26 GB",
        [
            e("kv_cache", kv_tokens=903439, free_memory_gib=10.26),
            e("scheduler_config", kind="max-num-seqs", value=3529),
            e("scheduler_config", kind="chunked-prefill", value=8192),
            e("model_info", max_model_len=131072),
        ],
    ),
    (
        "[2025-01-23 19:35:27 TP0] max_total_num_tokens=444500, max_prefill_tokens=16384, max_running_requests=2049, "
        "context_len=131072",
        [
            e("kv_cache", kv_tokens=444500, free_memory_gib=None),
            e("scheduler_config", kind="max-num-seqs", value=2049),
            e("model_info", max_model_len=131072),
        ],
    ),
    (
        "[2025-05-01 10:00:00 TP0] max_total_num_tokens=100000, chunked_prefill_size=-1, max_prefill_tokens=16384, "
        "max_running_requests=64, context_len=8192, available_gpu_mem=5.00 GB",
        [
            e("kv_cache", kv_tokens=100000),
            e("scheduler_config", kind="max-num-seqs", value=64),
            e("scheduler_config", kind="chunked-prefill", enabled=False, value=None),
            e("model_info", max_model_len=8192),
        ],
    ),
    ("max_total_num_tokens=425344", [e("kv_cache", kv_tokens=425344)]),
    # §4.5 mamba pool (VERBATIM-IDX), the concurrency cap and hybrid notices (RENDERED)
    (
        "[2026-10-10 11:59:39] Mamba Cache is allocated. max_mamba_cache_size: 117, conv_state size: 0.28GB, "
        "ssm_state size: 8.07GB ",
        [e("hybrid_model", kind="mamba-pool")],
    ),
    (
        "[2026-01-01 00:01:01] Mamba Cache is allocated. max_mamba_cache_size: 22, conv_state size: 0.06GB, ssm_state "
        "size: 3.23GB intermediate_ssm_state_cache size: 2.25GB intermediate_conv_window_cache size: 0.02GB",
        [e("hybrid_model", kind="mamba-pool")],
    ),
    (
        "[2026-08-08 10:00:00 TP0] max_running_requests is capped to 21 by the mamba state cache "
        "(max_mamba_cache_size=117, 5 state slots per request). To raise it: increase --mamba-full-memory-ratio or "
        "--max-mamba-cache-size, or halve the state size with --mamba-ssm-dtype bfloat16.",
        [e("hybrid_model", kind="mamba-pool"), e("scheduler_config", kind="max-num-seqs", value=21)],
    ),
    (
        "[2025-10-16 10:00:00 TP0] Using hybrid linear attention backend for hybrid GDN models.",
        [e("hybrid_model", kind="hybrid-detected")],
    ),
    (
        "[2026-04-08 10:00:00 TP0] Linear attention kernel backend: decode=triton, prefill=triton",
        [e("hybrid_model", kind="linear-attention-backend")],
    ),
    # §4.6 out of memory at init (RENDERED)
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
        "self.server_args.mem_fraction_static=0.8",
        [e("engine_failure", kind="startup-failed")],
    ),
    (
        "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88.",
        [e("engine_failure", kind="startup-failed")],
    ),
    (
        "[2025-04-01 10:00:00 TP1] The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
        "min_per_gpu_memory=70.1, local_gpu_memory=78.2, local_gpu_memory * 0.9=70.38",
        [e("perf_warning", topic="memory-imbalance")],
    ),
    # §5 CUDA graphs (VERBATIM-IDX, RENDERED draft and failure lines)
    (
        "[2025-01-23 19:35:27 TP0] Capture cuda graph end. Time elapsed: 6.57 s",
        [e("cuda_graph", kind="capture_finished", role="target", seconds=6.57, memory_gib=None)],
    ),
    (
        "[2025-09-11 10:26:00 TP0] Capture cuda graph end. Time elapsed: 17.13 s. mem usage=0.89 GB. avail mem=10.26 GB.",
        [e("cuda_graph", kind="capture_finished", role="target", seconds=17.13, memory_gib=0.89)],
    ),
    (
        "[2026-02-01 00:05:03 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=2.98 GB",
        [e("cuda_graph", kind="capture_started", role="target", seconds=None)],
    ),
    (
        "[2026-02-01 00:05:03 TP0] Capture cuda graph bs [1, 2, 4, 8]",
        [e("cuda_graph", kind="capture_sizes", role="target", batch_sizes=[1, 2, 4, 8], max_batch_size=8)],
    ),
    (
        "[2025-06-01 10:00:00 TP0] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, …, 256]",
        [e("cuda_graph", kind="capture_sizes", max_batch_size=256)],
    ),
    (
        "[2026-08-28 21:34:50] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, bs=[1, 2], "
        "avail mem=26.27 GB",
        [
            e("cuda_graph", kind="capture_started", role="target", batch_sizes=[1, 2], max_batch_size=2),
            e("cuda_graph", kind="capture_sizes", role="target", batch_sizes=[1, 2], max_batch_size=2),
        ],
    ),
    (
        "[2026-08-28 21:34:51] Capture target verify CUDA graph end. elapsed=1.61 s, mem usage=0.11 GB, avail mem=26.15 GB.",
        [e("cuda_graph", kind="capture_finished", role="target", seconds=1.61, memory_gib=0.11)],
    ),
    (
        "[2026-10-20 10:00:00] Capture target decode CUDA graph end. bs=[1, 2, 4], elapsed=3.00 s, mem usage=0.50 GB, "
        "avail mem=20.00 GB.",
        [
            e("cuda_graph", kind="capture_finished", seconds=3.0, max_batch_size=4),
            e("cuda_graph", kind="capture_sizes", max_batch_size=4),
        ],
    ),
    (
        "[2025-07-01 10:00:00 TP0] Capture draft cuda graph end. Time elapsed: 2.50 s. mem usage=0.20 GB. avail mem="
        "30.00 GB.",
        [e("cuda_graph", kind="capture_finished", role="drafter", seconds=2.5, memory_gib=0.2)],
    ),
    (
        "[2026-01-01 10:00:00 TP0] Capture draft extend cuda graph begin (step 1). This can take up to several "
        "minutes. avail mem=30.00 GB",
        [e("cuda_graph", kind="capture_started", role="drafter")],
    ),
    (
        "[2026-07-01 10:00:00 TP0] Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
        "bs=[1, 2, 4], avail mem=30.00 GB",
        [
            e("cuda_graph", kind="capture_started", role="drafter"),
            e("cuda_graph", kind="capture_sizes", role="drafter"),
        ],
    ),
    (
        "[2026-05-16 10:00:00 TP0] Capture Frozen-KV MTP draft cuda graph begin.",
        [e("cuda_graph", kind="capture_started", role="drafter")],
    ),
    (
        "[2026-01-01 10:00:00 TP0] Capture piecewise CUDA graph end. Time elapsed: 4.00 s. mem usage=0.30 GB. avail "
        "mem=20.00 GB.",
        [e("cuda_graph", kind="capture_finished", role="target", seconds=4.0)],
    ),
    (
        "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB",
        [e("cuda_graph", kind="capture_failed", role="target")],
    ),
    (
        "[2025-02-01 10:00:00 TP0] Cuda graph is disabled because of using torch native attention backend",
        [e("cuda_graph", kind="eager_mode", role="target")],
    ),
    (
        "[2025-10-01 10:00:00] Cuda graph is disabled because of using torch Flex Attention backend",
        [e("cuda_graph", kind="eager_mode")],
    ),
    ("[2025-06-01 10:00:00] Cuda graph is disabled because deepep_mode=`normal`", [e("cuda_graph", kind="eager_mode")]),
    ("[2026-05-07 10:00:00] CUDA graph is disabled because --enable-mis is set.", [e("cuda_graph", kind="eager_mode")]),
    # prefill-only graph notices do not say anything about decode graphs
    (
        "[2025-12-01 10:00:00] Cuda graph is disabled for prefill server when piecewise cuda graph is not enabled.",
        [e("perf_warning", topic="prefill-cuda-graph")],
    ),
    (
        "[2026-02-01 10:00:00] Disable piecewise CUDA graph because --disable-piecewise-cuda-graph is set",
        [e("perf_warning", topic="prefill-cuda-graph")],
    ),
    # §6 attention backend (VERBATIM basicConfig, VERBATIM corpus, RENDERED)
    (
        "WARNING:sglang.srt.server_args:Attention backend not explicitly specified. Use flashinfer backend by default.",
        [e("attention_backend", backend="FLASHINFER", role="target", level="WARNING")],
    ),
    (
        "[2025-06-20 10:01:12 TP0] Attention backend not set. Use flashinfer backend by default.",
        [e("attention_backend", backend="FLASHINFER")],
    ),
    (
        "[2025-08-01 10:01:12 TP0] Attention backend not explicitly specified. Use fa3 backend by default.",
        [e("attention_backend", backend="FA3")],
    ),
    (
        "[2026-01-20 10:01:12] Attention backend not specified. Use trtllm_mha backend by default.",
        [e("attention_backend", backend="TRTLLM_MHA")],
    ),
    (
        "[2025-03-31 04:29:49 TP0] MLA optimization is turned on. Use triton backend.",
        [e("attention_backend", backend="TRITON", role="target")],
    ),
    (
        "[2025-03-01 10:00:00 TP0] MLA optimization is turned on. Use flashinfer mla backend.",
        [e("attention_backend", backend="FLASHINFER_MLA")],
    ),
    (
        "[2025-04-01 10:00:00 TP0] MLA optimization is turned on. Use flashmla decode.",
        [e("attention_backend", backend="FLASHMLA", role="decode")],
    ),
    (
        "[2025-08-01 10:00:00 TP0] Using hybrid attention backend for decode and prefill: decode_backend=flashinfer, "
        "prefill_backend=fa3.",
        [
            e("attention_backend", backend="FLASHINFER", role="decode"),
            e("attention_backend", backend="FA3", role="prefill"),
        ],
    ),
    (
        "[2025-10-01 10:00:00] Use trtllm_mla as attention backend on sm100 for DeepseekV3ForCausalLM",
        [e("attention_backend", backend="TRTLLM_MLA")],
    ),
    (
        "[2026-03-01 10:00:00] Using triton as attention backend for Qwen3NextForCausalLM.",
        [e("attention_backend", backend="TRITON")],
    ),
    (
        "[2026-01-01 10:00:00] Overriding draft attention backend to triton.",
        [e("attention_backend", backend="TRITON", role="drafter")],
    ),
    (
        "[2025-05-01 10:00:00] FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.",
        [
            e(
                "attention_backend",
                backend="TRITON",
                fallback_reason="FlashAttention3 does not support this FP8 KV-cache dtype",
            )
        ],
    ),
    (
        "[2025-12-01 10:00:00] Attention backend not specified. Falling back to 'triton' for deterministic inference. "
        "You can explicitly set --attention-backend to one of ['fa3', 'flashinfer', 'triton'].",
        [e("attention_backend", backend="TRITON", fallback_reason="deterministic inference")],
    ),
    (
        "[2025-09-01 10:00:00 TP0] Multimodal attention backend not set. Use sdpa.",
        [e("attention_backend", backend="SDPA", role="encoder")],
    ),
    # §7.2 speculative-decoding setup (RENDERED)
    (
        "[2026-01-20 10:01:12] Max running requests is reset to 48 for speculative decoding. You can override this by "
        "explicitly setting --max-running-requests.",
        [e("scheduler_config", kind="max-num-seqs", value=48)],
    ),
    (
        "[2025-01-10 10:00:00] The radix cache, chunked prefill, and overlap scheduler are disabled because of using "
        "eagle speculative decoding.",
        [
            e("scheduler_config", kind="prefix-caching", enabled=False),
            e("scheduler_config", kind="chunked-prefill", enabled=False),
            e("scheduler_config", kind="async-scheduling", enabled=False),
        ],
    ),
    (
        "[2025-03-01 10:00:00] Overlap scheduler are disabled because of using eagle speculative decoding.",
        [e("scheduler_config", kind="async-scheduling", enabled=False)],
    ),
    (
        "[2025-06-20 10:01:12] Overlap scheduler is disabled because of using eagle speculative decoding.",
        [e("scheduler_config", kind="async-scheduling", enabled=False)],
    ),
    (
        "[2026-01-01 10:00:00] Overlap scheduler is disabled when spec v2 is off or using unsupported speculative "
        "algorithm. You can set env SGLANG_ENABLE_SPEC_V2=True to enable the experimental overlap scheduler. ",
        [e("scheduler_config", kind="async-scheduling", enabled=False)],
    ),
    (
        "[2026-01-01 10:00:00] Spec v2 is enabled for eagle/eagle3 speculative decoding and overlap schedule is "
        "turned on.",
        [e("scheduler_config", kind="async-scheduling", enabled=True)],
    ),
    (
        "[2026-05-07 10:00:00] Spec v1 is used for eagle/eagle3/standalone speculative decoding because overlap "
        "schedule is disabled.",
        [e("scheduler_config", kind="async-scheduling", enabled=False)],
    ),
    (
        "[2026-06-15 10:00:00] Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone speculative "
        "decoding.",
        [e("scheduler_config", kind="async-scheduling", enabled=False)],
    ),
    (
        "[2025-11-17 10:00:00] Disabling overlap schedule since MambaRadixCache is not compatible with overlap "
        "schedule currently, try to use --disable-radix-cache if overlap schedule is necessary",
        [e("scheduler_config", kind="async-scheduling", enabled=False)],
    ),
    (
        "[2025-08-01 10:00:00] Mixed chunked prefill is disabled because of using eagle speculative decoding.",
        [e("scheduler_config", kind="mixed-chunk", enabled=False)],
    ),
    (
        "[2026-01-23 10:00:00] Disabling radix cache since speculative decoding for NemotronHForCausalLM is not "
        "supported with radix cache yet.",
        [e("scheduler_config", kind="prefix-caching", enabled=False)],
    ),
    (
        "[2025-08-01 10:00:00] DP attention is enabled. The chunked prefill size is adjusted to 4096 to avoid MoE "
        "kernel issues.",
        [e("scheduler_config", kind="chunked-prefill", value=4096)],
    ),
    (
        "[2026-07-25 10:00:00] DP attention is enabled. chunked prefill size is adjusted from 16384 to 2048.",
        [e("scheduler_config", kind="chunked-prefill", value=2048)],
    ),
    (
        "[2025-06-01 10:00:00] speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
        "speculative_eagle_topk == 1",
        [e("perf_warning", topic="spec-config")],
    ),
    (
        "[2026-05-16 10:00:00 TP0] MTP depth 4 exceeds the checkpoint's num_draft_slots=3.",
        [e("perf_warning", topic="spec-config")],
    ),
    # §7.3 cumulative acceptance after POST /set_internal_state
    (
        "[2026-10-30 10:00:00 TP0] avg_spec_accept_length=3.04512345",
        [e("spec_decode_stats", format="sglang", interval=False, mean_acceptance_length=3.04512345)],
    ),
    # §8.1 custom all-reduce (VERBATIM corpus, RENDERED the other reasons and 0.5.10+ class names)
    (
        "[2025-06-12 22:41:35 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only "
        "GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        [e("custom_allreduce", enabled=False, reason="pcie-more-than-two", engine="sglang")],
    ),
    (
        "[2025-04-01 10:00:00 TP1] Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P "
        "test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        [e("custom_allreduce", enabled=False, reason="no-p2p")],
    ),
    (
        "[2025-04-01 10:00:00 TP0] Custom allreduce is disabled due to an unsupported world size: 3. Supported world "
        "sizes: [2, 4, 6, 8]. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        [e("custom_allreduce", enabled=False, reason="world-size")],
    ),
    (
        "[2025-04-01 10:00:00 TP8] Custom allreduce is disabled because this process group spans across nodes.",
        [e("custom_allreduce", enabled=False, reason="spans-nodes")],
    ),
    (
        "[2026-04-08 10:00:00 TP0] CustomAllReduceV2 is disabled because your platform lacks GPU P2P capability or P2P "
        "test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        [e("custom_allreduce", enabled=False, reason="no-p2p")],
    ),
    (
        "[2025-04-01 10:00:00 TP0] Setup Custom allreduce failed with CUDA error: invalid argument. To silence this "
        "warning, specify --disable-custom-all-reduce explicitly.",
        [e("custom_allreduce", enabled=False, reason="library")],
    ),
    (
        "[2025-10-01 10:00:00] NCCL_ALGO is set to 'allreduce:tree' and custom all reduce is disabled for "
        "deterministic inference when TP size > 1.",
        [e("custom_allreduce", enabled=False, reason="user")],
    ),
    (
        "[2026-05-16 10:00:00] Disabling SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2 because nnodes=2 (custom all-reduce v2 is "
        "intra-node only).",
        [e("custom_allreduce", enabled=False, reason="spans-nodes")],
    ),
    (
        "[2026-01-01 10:00:00 TP0] [AR] All-reduce call path: NCCL (custom AR disabled)",
        [e("custom_allreduce", enabled=False)],
    ),
    ("[2026-04-08 10:00:00 TP0] [AR] Using CustomAllReduceV2 (JIT-compiled)", [e("custom_allreduce", enabled=True)]),
    (
        "[2025-04-01 10:00:00 TP0] reading GPU P2P access cache from /root/.cache/sglang/gpu_p2p_access_cache_for_0,1.json",
        [e("p2p_check", supported=None)],
    ),
    (
        "[2025-04-01 10:00:00 TP1] Two processes do not agree on the P2P access status on 0 -> 1, treat as disabled.",
        [e("p2p_check", supported=False)],
    ),
    (
        "RuntimeError: CUDART error: peer access is not supported between these two devices",
        [e("p2p_check", supported=False)],
    ),
    # §9.1 retraction (VERBATIM docs, RENDERED 0.5.11+ and 0.3.6-0.4.6)
    (
        "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.9998 -> 1.0000",
        [e("preemption", mode="retract", count=1)],
    ),
    (
        "[2026-05-24 03:51:47 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_tokens_gained: "
        "65536, #new_token_ratio: 0.4213 -> 0.7000",
        [e("preemption", mode="retract", count=2)],
    ),
    (
        "[2024-12-01 10:00:00 TP0] Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.5000 -> 0.8000",
        [e("preemption", mode="retract", count=3)],
    ),
    (
        "[2026-04-08 10:00:00 TP0] retract_decode: aborted last request 5f2c due to OOM",
        [e("preemption", mode="retract-abort", count=1)],
    ),
    # §9.2 crashes and hangs (VERBATIM 0.4.2, RENDERED watchdogs)
    (
        "[2025-02-09 21:23:00] Received sigquit from a child proces. It usually means the child failed.",
        [e("engine_failure", kind="worker-died")],
    ),
    (
        "[2025-02-09 21:23:00 TP2] Scheduler hit an exception: Traceback (most recent call last):",
        [e("engine_failure", kind="exception")],
    ),
    ("[2025-05-01 10:00:00 TP0] Watchdog timeout (self.watchdog_timeout=300)", [e("engine_failure", kind="watchdog")]),
    (
        "[2026-01-01 10:00:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
        [e("engine_failure", kind="watchdog")],
    ),
    (
        "[2025-09-01 10:00:00 TP0] token_to_kv_pool_allocator memory leak detected! available_size=10, protected=0",
        [e("engine_failure", kind="memory-leak")],
    ),
    # §9.3 and corpus sglang-007: slower kernels and dtypes
    (
        "[2025-03-31 04:29:49 TP0] awq quantization is not fully optimized yet. The speed can be slower than "
        "non-quantized models.",
        [e("quantization", method="awq", fallback=True)],
    ),
    ("[2025-03-31 04:29:49 TP0] Casting torch.bfloat16 to torch.float16.", [e("model_info", dtype="torch.float16")]),
    # §1.4 readiness
    ("[2025-01-23 19:35:33] The server is fired up and ready to roll!", [e("compile_time", kind="server_ready")]),
]


@pytest.mark.parametrize(("text", "expected"), LINE_CASES, ids=[t[:70] for t, _ in LINE_CASES])
def test_lines(text: str, expected: list[E]) -> None:
    check(parse_text(text), expected)


@pytest.mark.parametrize(
    "text",
    [
        "[2025-01-23 19:35:15 TP0] Load weight begin. avail mem=78.81 GB",
        "[2025-01-23 19:35:16 TP0] Using model weights format ['*.safetensors']",
        "[2026-02-26 05:19:58] WARNING server_args.py:1245: DSA with TP mode is active, dp_size=1, tp_size=8",
        '[2025-01-23 19:35:28] INFO:     127.0.0.1:47208 - "GET /v1/models HTTP/1.1" 200 OK',
    ],
)
def test_lines_without_events(text: str) -> None:
    assert parse_text(text) == []


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


@pytest.mark.parametrize(
    ("grammar", "sample"),
    [(g, s) for g in sglang.GRAMMARS for s in g.samples],
    ids=[f"{g.name}-{i}" for g in sglang.GRAMMARS for i, _ in enumerate(g.samples)],
)
def test_grammar_samples(grammar: Grammar, sample: str) -> None:
    line = parse_envelope("sample", 1, sample)
    assert any(k in line.message for k in grammar.keywords)
    assert grammar.parse(line, ParseContext(source="sample")) is not None
