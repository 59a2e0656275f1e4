"""SGLang line types: Prefill batch / Decode batch lines (and their grep'd tails), read by batch.py."""

from __future__ import annotations

import dataclasses

from logdoctor.engines.sglang.batch import BATCH_LINE_RE, parse_batch, parse_batch_fragment, whole_batch_line
from logdoctor.engines.sglang.common import _grammar
from logdoctor.parse.grammar import Grammar, WholeLine, case

GRAMMARS: list[Grammar] = [
    _grammar(
        "batch_fragment",
        ("accept len: ", "gen throughput (token/s): "),
        parse_batch_fragment,
        (
            case(
                "grep-o-accept-tail-0.5.12",
                "accept len: 1.55, accept rate: 0.05, cuda graph: True, gen through",
                ("spec_decode_stats", {"mean_acceptance_length": 1.55, "acceptance_rate": 0.05, "engine": "sglang"}),
                exact=True,
            ),
            case(
                "tail-with-running",
                "gen throughput (token/s): 81.97, #queue-req: 0, #running-req: 3",
                ("scheduler_stats", {"format": "sglang-decode", "generation_throughput": 81.97, "running": 3}),
                exact=True,
            ),
            case(
                "tail-without-numbers-is-nothing",
                "gen throughput (token/s): n/a, #queue-req: 0",
            ),
            case(
                "whole-line-is-the-batch-grammars",
                "[2025-09-03 18:33:19 TP0] Decode batch. #running-req: 1, #token: 177, token usage: 0.00, cuda graph: "
                "True, gen throughput (token/s): 84.20, #queue-req: 0,",
                ("scheduler_stats", {"running": 1}),
            ),
        ),
    ),
    _grammar(
        "batch",
        ("Decode batch", "Prefill batch"),
        parse_batch,
        (
            case(
                "sample-1",
                "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, "
                "accept len: 3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2",
                ("scheduler_stats", {}),
                ("spec_decode_stats", {}),
            ),
            case(
                "sample-2",
                "[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: 75, #cached-token: 0, cache hit rate: "
                "0.00%, token usage: 0.01, #running-req: 1, #queue-req: 62",
                ("scheduler_stats", {}),
            ),
            case(
                "sample-3",
                "[2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13, #full token: 8704, full token usage: 0.00, "
                "#swa token: 3712, swa token usage: 0.01, accept len: 3.19, accept rate: 0.31, cuda graph: True, "
                "gen throughput (token/s): 0.50, #queue-req: 2",
                ("scheduler_stats", {}),
                ("spec_decode_stats", {}),
            ),
            case(
                "row-1",
                "[2026-04-08 14:05:21 TP0] Decode batch, #running-req: 5, #token: 20800, token usage: 0.29, cuda graph: True, "
                "gen throughput (token/s): 144.95, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 5,
                        "num_tokens": 20800,
                        "kv_cache_usage": 0.29,
                        "cuda_graph": True,
                        "generation_throughput": 144.95,
                        "queue": 0,
                    },
                ),
                exact=True,
            ),
            case(
                "row-2",
                "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, accept len: "
                "3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 24,
                        "num_tokens": 233600,
                        "kv_cache_usage": 0.66,
                        "cuda_graph": True,
                        "generation_throughput": 239.06,
                        "queue": 2,
                        "extra": {"graph_device": "npu"},
                    },
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.05,
                        "acceptance_rate": 0.68,
                        "num_speculative_tokens": 3,
                    },
                ),
                exact=True,
            ),
            case(
                "row-3",
                "[2025-11-11 04:06:27] Decode batch, #running-req: 46, #token: 34901, token usage: 0.19, cuda graph: False, "
                "gen throughput (token/s): 1447.08, #queue-req: 0, ",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 46,
                        "num_tokens": 34901,
                        "kv_cache_usage": 0.19,
                        "cuda_graph": False,
                        "generation_throughput": 1447.08,
                    },
                ),
                exact=True,
            ),
            case(
                "row-4",
                "1. Country:[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 57, token usage: 0.00, "
                "gen throughput (token/s): 5.91, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 1,
                        "num_tokens": 57,
                        "kv_cache_usage": 0.0,
                        "cuda_graph": None,
                        "generation_throughput": 5.91,
                    },
                ),
                exact=True,
            ),
            case(
                "row-5",
                "[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 60, token usage: 0.00, gen throughput "
                "(token/s): 5.91, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 1,
                        "num_tokens": 60,
                        "generation_throughput": 5.91,
                        "queue": 0,
                    },
                ),
                exact=True,
            ),
            case(
                "row-6",
                "[2025-12-12 08:43:59 TP0] Decode batch, #running-req: 6, #token: 1920, token usage: 0.94, cuda graph: True, "
                "gen throughput (token/s): 446.45, #queue-req: 5,",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 6,
                        "num_tokens": 1920,
                        "kv_cache_usage": 0.94,
                        "cuda_graph": True,
                        "queue": 5,
                    },
                ),
                exact=True,
            ),
            case(
                "row-7",
                "[2026-04-05 20:02:51] Decode batch, #running-req: 32, #token: 11179, token usage: 0.08, cuda graph: True, "
                "gen throughput (token/s): 1635.11, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 32,
                        "num_tokens": 11179,
                        "kv_cache_usage": 0.08,
                        "generation_throughput": 1635.11,
                    },
                ),
                exact=True,
            ),
            case(
                "row-8",
                "\x1b[36m(CommandActor pid=105447)\x1b[0m [2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13, "
                "#full token: 8704, full token usage: 0.00, #swa token: 3712, swa token usage: 0.01, accept len: 3.19, "
                "accept rate: 0.31, cuda graph: True, gen throughput (token/s): 0.50, #queue-req: 2",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 13,
                        "num_tokens": 8704,
                        "kv_cache_usage": 0.0,
                        "cuda_graph": True,
                        "generation_throughput": 0.5,
                        "queue": 2,
                        "extra": {"swa_token": 3712, "swa_token_usage": 0.01},
                    },
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.19,
                        "acceptance_rate": 0.31,
                        "num_speculative_tokens": 7,
                    },
                ),
                exact=True,
            ),
            case(
                "row-9",
                "[2026-09-30 08:30:35] Decode batch, #running-req: 9, #full token: 11584, full token usage: 0.01, mamba num: "
                "36, mamba usage: 0.60, accept len: 3.04, accept rate: 0.68, cuda graph: True, gen throughput (token/s): "
                "22.40, #queue-req: 1",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 9,
                        "num_tokens": 11584,
                        "kv_cache_usage": 0.01,
                        "generation_throughput": 22.4,
                        "queue": 1,
                        "extra": {"mamba_num": 36, "mamba_usage": 0.6},
                    },
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.04,
                        "acceptance_rate": 0.68,
                        "num_speculative_tokens": 3,
                    },
                ),
                exact=True,
            ),
            case(
                "row-10",
                "[03:51:54] Decode batch, #running-req: 6, #full token: 2435072, full token usage: 0.92, swa token usage: "
                "0.09, gen throughput (token/s): 24.33",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 6,
                        "num_tokens": 2435072,
                        "kv_cache_usage": 0.92,
                        "cuda_graph": None,
                        "queue": None,
                        "generation_throughput": 24.33,
                        "extra": {"swa_token_usage": 0.09},
                    },
                ),
                exact=True,
            ),
            case(
                "row-11",
                "Decode batch. #running-req: 233, #token: 370959, token usage: 0.82, cuda graph: True, gen throughput "
                "(token/s): 4594.01, #queue-req: 317",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 233,
                        "num_tokens": 370959,
                        "kv_cache_usage": 0.82,
                        "queue": 317,
                        "generation_throughput": 4594.01,
                    },
                ),
                exact=True,
            ),
            case(
                "row-12",
                "[2024-12-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, "
                "gen throughput (token/s): 294.51, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 4,
                        "num_tokens": 12840,
                        "kv_cache_usage": 0.06,
                        "generation_throughput": 294.51,
                        "queue": 0,
                    },
                ),
                exact=True,
            ),
            case(
                "row-13",
                "[2025-01-10 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "gen throughput (token/s): 294.51, #queue-req: 0",
                ("scheduler_stats", {"format": "sglang-decode", "running": 4, "generation_throughput": 294.51}),
                (
                    "spec_decode_stats",
                    {"format": "sglang", "interval": True, "mean_acceptance_length": 3.12, "acceptance_rate": None},
                ),
                exact=True,
            ),
            case(
                "row-14",
                "[2025-03-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "gen throughput (token/s): 294.51, largest-len: 0, #queue-req: 0, ",
                ("scheduler_stats", {"format": "sglang-decode", "running": 4, "queue": 0, "extra": {"largest_len": 0}}),
                (
                    "spec_decode_stats",
                    {"format": "sglang", "interval": True, "mean_acceptance_length": 3.12, "acceptance_rate": None},
                ),
                exact=True,
            ),
            case(
                "row-15",
                "[2025-04-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0",
                ("scheduler_stats", {"format": "sglang-decode", "running": 4, "cuda_graph": True}),
                (
                    "spec_decode_stats",
                    {"format": "sglang", "interval": True, "mean_acceptance_length": 3.12, "acceptance_rate": None},
                ),
                exact=True,
            ),
            case(
                "row-16",
                "[2025-10-01 10:00:00 TP0] Decode batch, #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "accept rate: 0.71, cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0, ",
                (
                    "scheduler_stats",
                    {"format": "sglang-decode", "running": 4, "kv_cache_usage": 0.06, "cuda_graph": True, "queue": 0},
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.12,
                        "acceptance_rate": 0.71,
                        "num_speculative_tokens": 3,
                    },
                ),
                exact=True,
            ),
            case(
                "row-17",
                "[2026-10-01 10:00:00 TP0] Decode batch [1234], #running-req: 4, #token: 12840, token usage: 0.06, "
                "cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0, est. decode TFLOPS/s (per GPU): 12.5, "
                "est. read BW (GB/s per GPU): 1800.2, est. write BW (GB/s per GPU): 20.1, fwd occupancy: 91.20%, "
                "fwd+idle occupancy: 95.00%",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 4,
                        "queue": 0,
                        "extra": {
                            "forward_iter": 1234,
                            "est_decode_tflops_s_per_gpu": 12.5,
                            "est_read_bw_gb_s_per_gpu": 1800.2,
                            "est_write_bw_gb_s_per_gpu": 20.1,
                            "fwd_occupancy": 0.912,
                            "fwd_idle_occupancy": 0.95,
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-18",
                "[2026-06-01 10:00:00 TP0] Decode batch, #running-req: 4, #gpu token: 4096, gpu token usage: 0.50, "
                "#cpu token: 65536, cpu token usage: 0.25, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "num_tokens": 4096,
                        "kv_cache_usage": 0.5,
                        "cpu_kv_cache_usage": 0.25,
                        "extra": {"cpu_token": 65536},
                    },
                ),
                exact=True,
            ),
            case(
                "row-19",
                "[2025-11-01 10:00:00 TP0] Decode batch, #running-req: 8, #token: 4000, token usage: 0.10, pre-allocated "
                "usage: 0.05, #prealloc-req: 1, #transfer-req: 2, #retracted-req: 3, cuda graph: True, gen throughput "
                "(token/s): 500.00, #queue-req: 0, ",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 8,
                        "extra": {
                            "pre_allocated_usage": 0.05,
                            "prealloc_req": 1,
                            "transfer_req": 2,
                            "retracted_req": 3,
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-20",
                "[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: 75, #cached-token: 0, cache hit rate: 0.00%, "
                "token usage: 0.01, #running-req: 1, #queue-req: 62",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 75,
                        "cached_tokens": 0,
                        "prefix_cache_hit_rate": 0.0,
                        "kv_cache_usage": 0.01,
                        "running": 1,
                        "queue": 62,
                        "extra": {"new_seq": 1},
                    },
                ),
                exact=True,
            ),
            case(
                "row-21",
                "[2026-05-15 12:50:14] Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, full token usage: 0.01, "
                "swa token usage: 0.02, #running-req: 0, #queue-req: 0, input throughput (token/s): 46.36, cuda graph: False",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 2048,
                        "kv_cache_usage": 0.01,
                        "prompt_throughput": 46.36,
                        "cuda_graph": None,
                        "extra": {"new_seq": 1, "swa_token_usage": 0.02, "cuda_graph": "False"},
                    },
                ),
                exact=True,
            ),
            case(
                "row-22",
                "[2026-04-05 20:02:51] Prefill batch, #new-seq: 1, #new-token: 158, #cached-token: 0, token usage: 0.08, "
                "#running-req: 31, #queue-req: 0, cuda graph: True, input throughput (token/s): 559.53",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 158,
                        "running": 31,
                        "queue": 0,
                        "prompt_throughput": 559.53,
                    },
                ),
                exact=True,
            ),
            case(
                "row-23",
                "[2026-07-21 15:00:13 TP0 EP0] Prefill batch, #new-seq: 8, #new-token: 54400, #cached-token: 482304, token "
                "usage: 0.66, #running-req: 16, #queue-req: 2, #pending-token: 0, npu graph: False, input throughput "
                "(token/s): 2793.64",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 54400,
                        "cached_tokens": 482304,
                        "kv_cache_usage": 0.66,
                        "running": 16,
                        "queue": 2,
                        "prompt_throughput": 2793.64,
                        "extra": {"new_seq": 8, "pending_token": 0, "cuda_graph": "False", "graph_device": "npu"},
                    },
                ),
                exact=True,
            ),
            case(
                "row-24",
                "[2026-09-30 08:30:15] Prefill batch, #new-seq: 1, #new-token: 64, #cached-token: 128, full token usage: 0.00, "
                "mamba usage: 0.05, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput "
                "(token/s): 7.34",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 64,
                        "cached_tokens": 128,
                        "kv_cache_usage": 0.0,
                        "prompt_throughput": 7.34,
                    },
                ),
                exact=True,
            ),
            case(
                "row-25",
                "[2025-10-01 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
                "#running-req: 3, #queue-req: 0, ",
                ("scheduler_stats", {"format": "sglang-prefill", "new_tokens": 512, "running": 3, "queue": 0}),
                exact=True,
            ),
            case(
                "row-26",
                "[2025-07-01 10:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
                "#unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 1, input throughput (token/s): 1024.55, ",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "running": None,
                        "new_tokens": 512,
                        "prompt_throughput": 1024.55,
                        "extra": {"new_seq": 1, "unbootstrapped_req": 0, "transferring_req": 1},
                    },
                ),
                exact=True,
            ),
            case(
                "accept-rate-per-draft-from-server-args",
                "[2026-03-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, "
                "speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_num_draft_tokens=4)\n"
                "[2026-03-01 10:01:00 TP0] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, accept len: 1.42, "
                "accept rate: 0.14, cuda graph: True, gen throughput (token/s): 80.00, #queue-req: 0",
                (
                    "spec_decode_stats",
                    {"format": "sglang-per-draft", "acceptance_rate": 0.14, "num_speculative_tokens": 3},
                ),
            ),
            case(
                "accept-rate-per-slot-before-0.5.11",
                "sglang: 0.5.10\n"
                "[2026-03-01 10:01:00 TP0] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, accept len: 3.12, "
                "accept rate: 0.78, cuda graph: True, gen throughput (token/s): 80.00, #queue-req: 0",
                ("spec_decode_stats", {"format": "sglang", "mean_acceptance_length": 3.12, "acceptance_rate": 0.78}),
            ),
            case(
                "accept-rate-per-draft-from-0.5.11",
                "sglang: 0.5.11\n"
                "[2026-03-01 10:01:00 TP0] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, accept len: 3.12, "
                "accept rate: 0.78, cuda graph: True, gen throughput (token/s): 80.00, #queue-req: 0",
                (
                    "spec_decode_stats",
                    {"format": "sglang-per-draft", "acceptance_rate": 0.78, "num_speculative_tokens": 3},
                ),
            ),
        ),
    ),
]
# The batch line type with its fast path (see `_BATCH_LINE_RE`).
GRAMMARS[1] = dataclasses.replace(GRAMMARS[1], whole_line=WholeLine(BATCH_LINE_RE, whole_batch_line))
