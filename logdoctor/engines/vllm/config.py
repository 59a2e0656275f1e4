"""vLLM line types: §2.2/§2.3 configuration dumps (catalogue/vllm.md)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

from logdoctor.engines.vllm.common import _NUM_SPEC_TOKENS, _WRAPPED_DUMP, Events, _base, _grammar, _remember_version
from logdoctor.events import EngineVersion, PerfWarning, Platform, StartupConfig
from logdoctor.parse import cmdline
from logdoctor.parse.envelope import LogLine, has_header
from logdoctor.parse.grammar import Grammar, ParseContext, case
from logdoctor.parse.pyrepr import ParsedRepr, parse_kwargs, parse_value, scan_top_level

_ENGINE_INIT_RE = re.compile(
    r"Initializing an? (?:(?P<gen>V[01]) )?LLM engine \(v(?P<ver>[^)]+)\)(?: with config: (?P<cfg>.*))?"
)
_DUMP_INPUT_RE = re.compile(r"Dumping input data for (?P<gen>V[01]) LLM engine \(v(?P<ver>[^)]+)\)")
_NON_DEFAULT_RE = re.compile(r"non-default args: (?P<cfg>\{.*)")
_NAMESPACE_RE = re.compile(r"\bargs: (?P<cfg>Namespace\(.*)")
# An elision a user typed into a pasted dump (`None, ... tensor_parallel_size=1, ..., enforce_eager=...`).
_ELISION_RE = re.compile(r"(?:,\s*)?(?:\.\.\.|…)\s*,?\s*(?=\b[A-Za-z_]\w*=)")
_SYNTHETIC_REJECTION_RE = re.compile(r"rejection_sample_method['\"]?\s*[:=]\s*['\"]synthetic")
# The last key of str(VllmConfig) (V1, all versions) and of the V0 init format: a dump that parses whole
# and ends with one of them was not cut by a terminal.
_DUMP_LAST_KEYS = frozenset(
    {"compilation_config", "kernel_config", "aux_output_config", "use_cached_outputs", "mm_processor_kwargs"}
)
DumpKind = Literal["non-default args", "engine init", "namespace"]


def _jsonable(value: Any) -> Any:
    """pyrepr keeps an in-value `...` elision as a sentinel object; make the config JSON-serialisable."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return "..."


def _num_spec_tokens(config: dict[str, Any]) -> int | None:
    spec = config.get("speculative_config")
    if isinstance(spec, dict):
        for key in ("num_spec_tokens", "num_speculative_tokens"):
            if isinstance(spec.get(key), int):
                return int(spec[key])
    value = config.get("num_speculative_tokens")
    return value if isinstance(value, int) else None


@functools.lru_cache(maxsize=8)
def _parse_repr(kind: DumpKind, text: str) -> ParsedRepr:
    """pyrepr's parse of a dump's (right-stripped) text: the slowest step of the vLLM grammars, ~0.1 s for an
    engine-init dump. `_dump_complete` parses a dump to see whether it is whole and `_parse_dump` then needs the
    very same parse: cached, so it runs once. The result is shared: never modify it."""
    if kind == "engine init":
        return parse_kwargs(_ELISION_RE.sub(", ", text))
    return parse_value(text)


def _parse_dump(kind: DumpKind, text: str) -> tuple[dict[str, Any], bool]:
    text = text.rstrip()
    cut = text.endswith(("...", "…"))
    parsed = _parse_repr(kind, text)
    if kind == "engine init":
        value = parsed.value
    else:
        value = dict(parsed.value) if isinstance(parsed.value, dict) else {}  # a copy: the parse is cached
        value.pop("__class__", None)
    return _jsonable(value), parsed.truncated or cut


def _dump_events(kind: DumpKind, line: LogLine, ctx: ParseContext, text: str, end: int | None = None) -> Events:
    config, truncated = _parse_dump(kind, text)
    base = _base(line, ctx)
    if end is not None:
        base["end_line"] = end
    k = _num_spec_tokens(config)
    if k:
        ctx.state[_NUM_SPEC_TOKENS] = k
    events: Events = [StartupConfig(**base, origin=kind, config=config, truncated=truncated)]
    device = config.get("device_config")
    if isinstance(device, str) and device.lower() in _NON_GPU_DEVICES:
        # The platform line is DEBUG since 0.11.1: on a CPU (or XPU, TPU ...) build the dump is what says so.
        events.append(Platform(**base, platform=device.lower(), message=f"device_config={device} in the engine config"))
    if _SYNTHETIC_REJECTION_RE.search(text):
        # No log line says so: `rejection_sample_method='synthetic'` (0.21+) makes the acceptance numbers fake.
        events.append(
            PerfWarning(
                **base,
                topic="spec-synthetic-rejection",
                message="speculative decoding uses synthetic rejection sampling: acceptance metrics are not real",
            )
        )
    return events


_TOP_KEY_RE = re.compile(r"\s*([A-Za-z_]\w*)=")
_NON_GPU_DEVICES = frozenset({"cpu", "xpu", "tpu", "hpu", "npu", "neuron"})  # vLLM's device types other than cuda


def _dump_closed(kind: DumpKind, text: str) -> bool:
    """A cheap look before the full parse: brackets and quotes balanced, and (for the engine-init dump) the last
    top-level `key=` is one that ends str(VllmConfig)."""
    top = scan_top_level(text)
    if top.depth > 0 or top.quoted:
        return False
    if kind != "engine init":
        return True
    tail = text.rstrip().rstrip(",")
    if tail != text.rstrip():  # the V0 format ends with `use_cached_outputs=True, `
        return _dump_closed(kind, tail)
    last_comma = max((i for i in top.commas if text[i + 1 : i + 2] == " "), default=-1)
    m = _TOP_KEY_RE.match(text, last_comma + 1)
    return m is not None and m.group(1) in _DUMP_LAST_KEYS


def _dump_complete(kind: DumpKind, text: str) -> bool:
    """Whether a dump is whole, or was cut by a terminal and continues on the next physical lines."""
    text = text.rstrip()
    if text.endswith(("...", "…")):
        return True  # cut in the source: nothing follows
    if not _dump_closed(kind, text):
        return False
    parsed = _parse_repr(kind, text)
    if kind != "engine init":
        return not parsed.truncated
    keys = list(parsed.value)
    return not parsed.truncated and bool(keys) and keys[-1] in _DUMP_LAST_KEYS


@dataclass
class _WrappedDump:
    kind: DumpKind
    line: LogLine
    text: str
    end: int | None = None


def _is_dump_piece(line: LogLine) -> bool:
    """A piece of a terminal-wrapped dump: no header, no process prefix. Unlike the pipeline's rule for one
    wrapped line, a piece may start with a space (the terminal broke the line at one)."""
    return bool(line.text.strip()) and not line.skip and not has_header(line)


def _open_dump(kind: DumpKind, line: LogLine, ctx: ParseContext, text: str) -> Events:
    """Parse a dump now when it is whole; else collect the wrapped pieces that follow (`ctx.block`)."""
    if _dump_complete(kind, text):
        return _dump_events(kind, line, ctx, text)
    ctx.state[_WRAPPED_DUMP] = _WrappedDump(kind, line, text)
    ctx.block = _continue_dump
    return []


def _continue_dump(line: LogLine, ctx: ParseContext) -> Events | None:
    dump = ctx.state.get(_WRAPPED_DUMP)
    if not isinstance(dump, _WrappedDump):
        ctx.block = None
        return None
    if _is_dump_piece(line):
        dump.text += line.text.rstrip()
        dump.end = line.number
        if not _dump_complete(dump.kind, dump.text):
            return []
        ctx.block = None
        del ctx.state[_WRAPPED_DUMP]
        return _dump_events(dump.kind, dump.line, ctx, dump.text, dump.end)
    # The dump ended without its last key (cut in the source). Its events must go out with this line's: a
    # block that returns None loses them, so the line is parsed here by the vLLM grammars (a line right after
    # a config dump is a vLLM line; one only another engine's grammar would claim is the price of this).
    ctx.block = None
    del ctx.state[_WRAPPED_DUMP]
    events = _dump_events(dump.kind, dump.line, ctx, dump.text, dump.end)
    if not line.text.strip():  # a blank line, or the end of the input
        return events
    return events + (_dispatch_own(line, ctx) or [])


def parse_non_default_args(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _NON_DEFAULT_RE.search(line.message)
    if not m:
        return None
    return _open_dump("non-default args", line, ctx, m.group("cfg"))


def parse_namespace(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _NAMESPACE_RE.search(line.message)
    if not m:
        return None
    return _open_dump("namespace", line, ctx, m.group("cfg"))


def parse_engine_init(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _ENGINE_INIT_RE.search(line.message)
    if m:
        _remember_version(ctx, m.group("ver"))
        version = EngineVersion(
            **_base(line, ctx), version=m.group("ver"), engine_generation=m.group("gen"), origin="engine init"
        )
        if m.group("cfg") is None:
            return [version]  # a paste that elided the dump
        return [version, *_open_dump("engine init", line, ctx, m.group("cfg"))]
    m = _DUMP_INPUT_RE.search(line.message)
    if m:
        # Printed just before `EngineCore encountered a fatal error.` when execute_model crashed.
        _remember_version(ctx, m.group("ver"))
        return [
            EngineVersion(
                **_base(line, ctx), version=m.group("ver"), engine_generation=m.group("gen"), origin="dump input"
            )
        ]
    return None


# --- the command line pasted with the log ----------------------------------------------------------
# `vllm serve MODEL \` + `    --tensor-parallel-size 2 \` + `    --enforce-eager` (or `python -m
# vllm.entrypoints.openai.api_server --model ...`): often the only record of a flag the user set. The options
# are the argparse dests the `non-default args` dump would print, so the same facts read them.
# The `vllm/vllm-openai` image runs the API server itself (its entrypoint), so what follows the image in `docker run`
# is the server's own arguments (`--model M`, or the model first on images whose entrypoint is `vllm serve`); the
# image may begin a continuation line of a multi-line `docker run ... \`. The offline benchmarks (`vllm bench latency`
# / `throughput`, benchmarks/benchmark_latency.py / benchmark_throughput.py) build the engine from the same flags.
_COMMAND_RE = re.compile(
    r"(?:^|(?<=[\s$>:`\"'(]))(?:vllm serve|python\d?(?:\.\d+)? -m vllm\.entrypoints\.(?:openai\.)?api_server"
    r"|vllm bench (?:latency|throughput)|python\d?(?:\.\d+)? (?:\S*/)?benchmark_(?:latency|throughput)\.py"
    r"|(?:[\w.-]+(?::\d+)?/)?vllm/vllm-openai(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?)(?=\s|$)(?P<args>.*)$"
)
# Short spellings vLLM's argparse accepts (vllm/engine/arg_utils.py, vllm/config/compilation.py).
_COMMAND_ALIASES = {
    "-tp": "tensor_parallel_size",
    "-pp": "pipeline_parallel_size",
    "-dp": "data_parallel_size",
    "-q": "quantization",
    "-O": "compilation_config",
}


def _command_event(line: LogLine, ctx: ParseContext, parts: list[str], end: int | None) -> Events:
    options = cmdline.joined_options(parts, _COMMAND_ALIASES, positional="model")
    if not options:
        return []
    base = _base(line, ctx)
    if end is not None:
        base["end_line"] = end
    return [StartupConfig(**base, origin="command line", config=options)]


# The attention backend set for the command alone (`VLLM_ATTENTION_BACKEND=FLASHMLA python3 benchmark_throughput.py
# ...`): the setting `--attention-backend` gives on releases that have the flag, keyed as the flag's dest.
_ENV_BACKEND_RE = re.compile(r"(?:^|\s)VLLM_ATTENTION_BACKEND=(?P<backend>[A-Za-z0-9_]+)(?=\s)")


def _env_settings(prefix: str) -> dict[str, Any]:
    m = _ENV_BACKEND_RE.search(prefix)
    return {"attention_backend": m.group("backend")} if m is not None else {}


def parse_command(line: LogLine, ctx: ParseContext) -> Events | None:
    return cmdline.read_launch(line, ctx, _COMMAND_RE, _command_event, _env_settings)


GRAMMARS: list[Grammar] = [
    _grammar(
        "command_line",
        (
            "vllm serve",
            " -m vllm.entrypoints.",
            "vllm/vllm-openai",
            "vllm bench ",
            "benchmark_latency.py",
            "benchmark_throughput.py",
        ),
        parse_command,
        (
            case(
                "docker-run-with-nccl-env",
                "docker run --gpus all -e NCCL_P2P_DISABLE=1 vllm/vllm-openai:v0.10.1 --model Qwen/Qwen3-8B -tp 2",
                ("nccl_env", {"name": "NCCL_P2P_DISABLE", "value": "1", "engine": "nccl"}),
                (
                    "startup_config",
                    {"origin": "command line", "config": {"model": "Qwen/Qwen3-8B", "tensor_parallel_size": 2}},
                ),
                exact=True,
            ),
            case(
                "bench-throughput-command",
                "vllm bench throughput --model Qwen/Qwen3-8B --quantization fp8 --input-len 512 --output-len 256",
                (
                    "startup_config",
                    {"origin": "command line", "config": {"model": "Qwen/Qwen3-8B", "quantization": "fp8"}},
                ),
                exact=True,
            ),
            case(
                "benchmark-latency-script",
                "python3 benchmarks/benchmark_latency.py --model meta-llama/Llama-3.1-8B --enforce-eager --batch-size 1",
                ("startup_config", {"config": {"model": "meta-llama/Llama-3.1-8B", "enforce_eager": True}}),
                exact=True,
            ),
            case(
                "one-letter-option-with-its-value-joined",
                "$ vllm serve meta-llama/Meta-Llama-3-8B -O3",
                (
                    "startup_config",
                    {"config": {"model": "meta-llama/Meta-Llama-3-8B", "compilation_config": 3}},
                ),
                exact=True,
            ),
            case(
                "benchmark-throughput-script",
                "python benchmark_throughput.py --model facebook/opt-125m -tp 2",
                ("startup_config", {"config": {"model": "facebook/opt-125m", "tensor_parallel_size": 2}}),
                exact=True,
            ),
            case(
                # real: fixtures/logs/realworld13/vllm-c990.log line 4 (cut after --num-prompts)
                "attention-backend-set-for-the-command",
                "VLLM_ATTENTION_BACKEND=TRITON_MLA python3 benchmarks/benchmark_throughput.py --tensor-parallel-size 8 "
                "--num-prompts 100",
                (
                    "startup_config",
                    {"config": {"tensor_parallel_size": 8, "num_prompts": 100, "attention_backend": "TRITON_MLA"}},
                ),
                exact=True,
            ),
            case(
                "serve-one-line",
                "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --enforce-eager --gpu-memory-utilization 0.95",
                (
                    "startup_config",
                    {
                        "origin": "command line",
                        "config": {
                            "model": "Qwen/Qwen3-8B",
                            "tensor_parallel_size": 2,
                            "enforce_eager": True,
                            "gpu_memory_utilization": 0.95,
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "serve-continued-lines-arena-hard-81",
                "vllm serve /data3/models/qwen2.5-1.5B \\\n"
                "    --tensor-parallel-size 2 \\\n"
                "    --api-key xxx \\\n"
                "    --max_model_len 8192 \\\n"
                "    --enforce-eager",
                (
                    "startup_config",
                    {
                        "origin": "command line",
                        "config": {
                            "model": "/data3/models/qwen2.5-1.5B",
                            "tensor_parallel_size": 2,
                            "max_model_len": 8192,
                            "enforce_eager": True,
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "api-server-module-spec-json-and-pipe",
                "python -m vllm.entrypoints.openai.api_server --model m -tp 4 --speculative-config "
                '\'{"method": "ngram", "num_speculative_tokens": 5}\' --no-enable-prefix-caching 2>&1 | tee x.log',
                (
                    "startup_config",
                    {
                        "config": {
                            "model": "m",
                            "tensor_parallel_size": 4,
                            "speculative_config": {"method": "ngram", "num_speculative_tokens": 5},
                            "enable_prefix_caching": False,
                        }
                    },
                ),
                exact=True,
            ),
            case(
                "echoed-by-a-script",
                "Executing command: vllm serve Qwen/Qwen2.5-32B-Instruct --host 0.0.0.0 --port 8000 --tensor-parallel-size 4",
                ("startup_config", {"config": {"model": "Qwen/Qwen2.5-32B-Instruct", "tensor_parallel_size": 4}}),
            ),
            case(
                "not-a-command-prose",
                "the vllm server crashed",
                exact=True,
            ),
            case(
                "docker-run-image-then-server-args",
                "docker run --runtime nvidia --gpus all -p 8000:8000 --ipc=host vllm/vllm-openai:v0.10.1 "
                "--model Qwen/Qwen3-8B --enforce-eager -tp 2",
                (
                    "startup_config",
                    {"config": {"model": "Qwen/Qwen3-8B", "enforce_eager": True, "tensor_parallel_size": 2}},
                ),
                exact=True,
            ),
            case(
                "docker-run-image-on-a-continuation-line",
                "    vllm/vllm-openai:latest \\\n    --model mistralai/Mistral-7B-v0.1 \\\n    --disable-custom-all-reduce",
                (
                    "startup_config",
                    {"config": {"model": "mistralai/Mistral-7B-v0.1", "disable_custom_all_reduce": True}},
                ),
                exact=True,
            ),
            case(
                "behind-a-shell-prompt",
                "$ vllm serve Qwen/Qwen3-8B --enforce-eager",
                ("startup_config", {"config": {"model": "Qwen/Qwen3-8B", "enforce_eager": True}}),
                exact=True,
            ),
            case(
                "image-name-in-a-compose-file-alone",
                "    image: vllm/vllm-openai:latest",
                exact=True,
            ),
        ),
    ),
    _grammar(
        "non_default_args",
        ("non-default args:",),
        parse_non_default_args,
        (
            case(
                "sample-1",
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:233] non-default args: {'model_tag': "
                "'/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf', 'max_model_len': 16384, 'served_model_name': "
                "['Qwen/Qwen3-8B'], 'gpu_memory_utilization': 0.79, 'kv_cache_dtype': 'fp8', 'max_num_seqs': 16}",
                ("startup_config", {}),
            ),
            case(
                "sample-2",
                "(APIServer pid=1009) INFO 09-10 23:26:12 [utils.py:326] non-default args: {'model_tag': 'gpt-oss-120b', "
                "'port': 8081, 'model': 'gpt-oss-120b', 'max_model_len': 16384, 'tensor_parallel_size': 4}",
                ("startup_config", {}),
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
                "spec-synthetic-rejection",
                "(APIServer pid=1) INFO 05-20 12:00:00 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B', "
                "'speculative_config': {'method': 'dflash', 'num_speculative_tokens': 15, 'rejection_sample_method': "
                "'synthetic'}}",
                ("startup_config", {"config": {"speculative_config": {"rejection_sample_method": "synthetic"}}}),
                ("perf_warning", {"topic": "spec-synthetic-rejection"}),
            ),
        ),
    ),
    _grammar(
        "namespace",
        ("args: Namespace(",),
        parse_namespace,
        (
            case(
                "namespace-0.7",
                "INFO 02-07 18:06:00 api_server.py:841] args: Namespace(subparser='serve', model_tag='.', config='', "
                "host=None, port=8000, ... , dispatch_function=<function ServeSubcommand.cmd at 0x7dc10ca6fba0>)",
                (
                    "startup_config",
                    {"origin": "namespace", "config": {"subparser": "serve", "model_tag": ".", "port": 8000}},
                ),
            ),
            case(
                "namespace-v0-spec-flags-rendered",
                "INFO 11-20 10:00:00 api_server.py:585] args: Namespace(model='/models/Llama-70B', "
                "speculative_model='/models/Llama-8B', num_speculative_tokens=3, speculative_draft_tensor_parallel_size=4, "
                "tensor_parallel_size=4)",
                (
                    "startup_config",
                    {
                        "origin": "namespace",
                        "config": {"num_speculative_tokens": 3, "speculative_model": "/models/Llama-8B"},
                    },
                ),
            ),
        ),
    ),
    _grammar(
        "engine_init",
        ("LLM engine (v",),
        parse_engine_init,
        (
            case(
                "sample-1",
                "(EngineCore pid=129) INFO 05-06 06:05:38 [core.py:109] Initializing a V1 LLM engine "
                "(v0.20.2rc1.dev49+g9b4e83934) with config: model='/model', speculative_config=SpeculativeConfig("
                "method='mtp', model='google/gemma-4-31B-it-assistant', num_spec_tokens=4), tokenizer='/model', "
                "enforce_eager=False, kv_cache_dtype=fp8, device_config=cuda, structured_outputs_config="
                "StructuredOutputsConfig(backend='auto', ...), observability_config=ObservabilityConfig("
                "show_hidden_metrics_for_version=None, ..., cudagraph_metrics=False, enable_logging_iteration_details=F...",
                ("engine_version", {}),
                ("startup_config", {}),
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
                "dump-input-before-crash-rendered",
                "ERROR 06-15 13:57:57 [dump_input.py:69] Dumping input data for V1 LLM engine (v0.9.1) with config: "
                "model='Qwen/Qwen3-8B', speculative_config=None, ",
                ("engine_version", {"version": "0.9.1", "engine_generation": "V1", "origin": "dump input"}),
            ),
            case(
                "engine-init-0.33-cpu",  # the platform line is DEBUG since 0.11.1: the dump's device_config says cpu
                "(EngineCore_DP0 pid=200) INFO 11-20 10:00:05 [core.py:95] Initializing a V1 LLM engine (v0.33.0) with config: "
                "model='Qwen/Qwen3-8B', speculative_config=None, tokenizer='Qwen/Qwen3-8B', dtype=torch.bfloat16, "
                "max_seq_len=40960, tensor_parallel_size=1, enforce_eager=True, kv_cache_dtype=auto, device_config=cpu, "
                "structured_outputs_config=StructuredOutputsConfig(backend='auto'), seed=0",
                ("engine_version", {"version": "0.33.0"}),
                ("startup_config", {"config": {"device_config": "cpu"}}),
                ("platform", {"platform": "cpu", "message": "device_config=cpu in the engine config"}),
            ),
        ),
    ),
]


def _dispatch_own(line: LogLine, ctx: ParseContext) -> Events | None:
    """Offer a line to the vLLM grammars whose keywords it contains (used when a wrapped dump ends)."""
    from logdoctor.engines.vllm import GRAMMARS  # the whole engine: imported here, it imports this module

    for grammar in GRAMMARS:
        if any(k in line.message for k in grammar.keywords):
            events = grammar.parse(line, ctx)
            if events is not None:
                return events
    return None
