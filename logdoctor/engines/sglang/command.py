"""SGLang line types: the launch command pasted with the log."""

from __future__ import annotations

import re

from logdoctor.engines.sglang.common import _DRAFT_TOKENS, _grammar
from logdoctor.events import (
    EventBase,
    StartupConfig,
)
from logdoctor.parse import cmdline
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- the command line pasted with the log ----------------------------------------------------------
# `python -m sglang.launch_server --model-path M --tp 2 --disable-cuda-graph` (also `sglang serve`, and the
# same with `\` continuations): the options as the ServerArgs field names the server_args dump prints. The offline
# benchmarks (`bench_one_batch`, formerly `bench_latency`, `bench_offline_throughput`, `bench_one_batch_server`)
# take the same ServerArgs flags beside their own.
_COMMAND_RE = re.compile(
    r"(?:^|(?<=[\s$>:`\"'(]))(?:python\d?(?:\.\d+)? -m sglang\.(?:launch_server|bench_latency|bench_one_batch(?:_server)?"
    r"|bench_offline_throughput)|sglang serve)(?=\s|$)(?P<args>.*)$"
)
# Spellings sglang/srt/server_args.py accepts besides `--field-name` (add_cli_args).
_COMMAND_ALIASES = {
    "--model": "model_path",
    "--tp": "tp_size",
    "--tensor-parallel-size": "tp_size",
    "--pp": "pp_size",
    "--pipeline-parallel-size": "pp_size",
    "--dp": "dp_size",
    "--data-parallel-size": "dp_size",
    "--ep": "ep_size",
    "--expert-parallel-size": "ep_size",
    "--speculative-algo": "speculative_algorithm",
    "--speculative-draft": "speculative_draft_model_path",
    "--speculative-draft-model": "speculative_draft_model_path",
    "--mem-frac": "mem_fraction_static",
}


def _command_event(line: LogLine, ctx: ParseContext, parts: list[str], end: int | None) -> list[EventBase]:
    options = cmdline.joined_options(parts, _COMMAND_ALIASES)
    if not options:
        return []
    draft_tokens = options.get("speculative_num_draft_tokens")
    if isinstance(draft_tokens, int) and not isinstance(draft_tokens, bool) and draft_tokens >= 2:
        ctx.state.setdefault(_DRAFT_TOKENS, draft_tokens)
    base = ctx.base(line, "sglang")
    if end is not None:
        base["end_line"] = end
    return [StartupConfig(**base, origin="command line", config=options)]


def parse_command(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return cmdline.read_launch(line, ctx, _COMMAND_RE, _command_event)


GRAMMARS: list[Grammar] = [
    _grammar(
        "command_line",
        ("-m sglang.launch_server", "sglang serve", "-m sglang.bench_"),
        parse_command,
        (
            case(
                "launch-server-pr-12343",
                "CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B-FP8 "
                "--tp-size 4 --ep 4",
                (
                    "startup_config",
                    {
                        "origin": "command line",
                        "engine": "sglang",
                        "config": {"model_path": "Qwen/Qwen3-30B-A3B-FP8", "tp_size": 4, "ep_size": 4},
                    },
                ),
                exact=True,
            ),
            case(
                "bench-latency",
                "python3 -m sglang.bench_latency --model-path meta-llama/Meta-Llama-3-8B --batch-size 1 --input 128 "
                "--output 8 --disable-cuda-graph",
                (
                    "startup_config",
                    {
                        "origin": "command line",
                        "config": {"model_path": "meta-llama/Meta-Llama-3-8B", "disable_cuda_graph": True},
                    },
                ),
                exact=True,
            ),
            case(
                "bench-one-batch-server-is-not-bench-one-batch",
                "python -m sglang.bench_one_batch_server --model-path Qwen/Qwen3-8B --batch-size 16 --tp 2",
                ("startup_config", {"config": {"model_path": "Qwen/Qwen3-8B", "tp_size": 2, "batch_size": 16}}),
                exact=True,
            ),
            case(
                "sglang-serve",
                "sglang serve --model-path Qwen/Qwen3-8B --disable-radix-cache --mem-frac 0.8",
                (
                    "startup_config",
                    {
                        "config": {
                            "model_path": "Qwen/Qwen3-8B",
                            "disable_radix_cache": True,
                            "mem_fraction_static": 0.8,
                        }
                    },
                ),
                exact=True,
            ),
            case(
                "continued-lines-eagle3-specforge-310",
                "python -m sglang.launch_server \\\n"
                "    --model-path /ch/pretrained_models/Qwen2.5-VL-7B-Instruct \\\n"
                "    --speculative-algorithm EAGLE3 \\\n"
                "    --speculative-num-draft-tokens 24 \\\n"
                "    --cuda-graph-max-bs 1 \\\n"
                "    --disable-cuda-graph",
                (
                    "startup_config",
                    {
                        "config": {
                            "model_path": "/ch/pretrained_models/Qwen2.5-VL-7B-Instruct",
                            "speculative_algorithm": "EAGLE3",
                            "speculative_num_draft_tokens": 24,
                            "cuda_graph_max_bs": 1,
                            "disable_cuda_graph": True,
                        }
                    },
                ),
                exact=True,
            ),
        ),
    ),
]
