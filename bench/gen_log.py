"""Write a deterministic, realistic vLLM 0.20.1 serving log of a requested size (the benchmark input).

The log is what `vllm serve` with `--enable-log-requests` prints for a DFlash (k=15) TP=2 deployment:
a startup block (logo, `non-default args`, engine-init dump, NCCL/custom all-reduce, attention backend,
KV cache, torch.compile and CUDA-graph capture, taken from /work/shared/catalogue/vllm.md), then
hours of serving: per-request `Received request` / `Added request` / `Finished request` lines, uvicorn
access lines, Prometheus scrapes, and every 10 simulated seconds one `Engine 000:` stats line and one
`SpecDecoding metrics:` line (both suppressed while the server is idle, as vLLM does):

    (APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 2.5 tokens/s, ...
    (APIServer pid=1) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.87, ...

The same seed and size always give the same bytes. Usage:

    .venv/bin/python bench/gen_log.py                     # 1 GiB -> bench/out/vllm-serve-1G.log
    .venv/bin/python bench/gen_log.py --size 256M --out /tmp/x.log --seed 7
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
OUT_DIR = BENCH_DIR / "out"
DEFAULT_SIZE = "1G"
DEFAULT_SEED = 20260508
CHUNK_BYTES = 8 * 1024 * 1024

STATS_INTERVAL_S = 10
START_EPOCH = 1778257201  # 2026-05-08 16:20:01 UTC: vLLM prints month-day only
API = "(APIServer pid=1) "
ENGINE = "(EngineCore pid=43) "
WORKERS = ("(Worker_TP0 pid=147) ", "(Worker_TP1 pid=148) ")
MODEL = "Qwen/Qwen3-8B"
DRAFTER = "z-lab/Qwen3-8B-DFlash-b16"
NUM_SPEC_TOKENS = 15

_UNITS = {"": 1, "B": 1, "K": 1024, "KB": 1024, "KIB": 1024, "M": 1024**2, "MB": 1024**2, "MIB": 1024**2}
_UNITS.update({"G": 1024**3, "GB": 1024**3, "GIB": 1024**3})


def parse_size(text: str) -> int:
    """`1G`, `256M`, `512k`, `1048576` -> bytes (binary units: 1G = 1 GiB)."""
    value = text.strip().upper()
    digits = value.rstrip("KMGIB")
    unit = value[len(digits) :]
    if not digits or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 1G, 256M, 64K)")
    try:
        number = float(digits)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from exc
    size = int(number * _UNITS[unit])
    if size <= 0:
        raise argparse.ArgumentTypeError(f"size must be positive: {text!r}")
    return size


def size_label(size: int) -> str:
    for unit, factor in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def default_path(size: int, seed: int = DEFAULT_SEED) -> Path:
    suffix = "" if seed == DEFAULT_SEED else f"-seed{seed}"
    return OUT_DIR / f"vllm-serve-{size_label(size)}{suffix}.log"


class Clock:
    """Simulated wall clock rendered as vLLM's `MM-DD HH:MM:SS` (cached per second)."""

    def __init__(self, epoch: float) -> None:
        self.now = epoch
        self._second = -1
        self._text = ""

    def stamp(self, at: float | None = None) -> str:
        second = int(self.now if at is None else at)
        if second != self._second:
            t = time.gmtime(second)
            self._second = second
            self._text = f"{t.tm_mon:02d}-{t.tm_mday:02d} {t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
        return self._text


# --- startup -------------------------------------------------------------------------------------

_COMPILATION_CONFIG = (
    "{'mode': <CompilationMode.VLLM_COMPILE: 3>, 'debug_dump_path': None, 'cache_dir': "
    "'/root/.cache/vllm/torch_compile_cache/5c1e0f3b2a', 'compile_cache_save_format': 'binary', "
    "'backend': 'inductor', 'custom_ops': ['none'], 'splitting_ops': ['vllm::unified_attention', "
    "'vllm::unified_attention_with_output', 'vllm::unified_mla_attention', "
    "'vllm::unified_mla_attention_with_output', 'vllm::mamba_mixer2', 'vllm::mamba_mixer', "
    "'vllm::short_conv', 'vllm::linear_attention', 'vllm::plamo2_mamba_mixer', 'vllm::gdn_attention_core', "
    "'vllm::kda_attention', 'vllm::sparse_attn_indexer'], 'compile_mm_encoder': False, "
    "'use_inductor_graph_partition': False, 'pass_config': {'fuse_norm_quant': False, 'fuse_act_quant': False, "
    "'fuse_attn_quant': False, 'eliminate_noops': True, 'enable_sp': False, 'fuse_gemm_comms': False, "
    "'fuse_allreduce_rms': False}, 'max_cudagraph_capture_size': 512, 'dynamic_shapes_config': "
    "{'type': <DynamicShapesType.BACKED: 'backed'>, 'evaluate_guards': False}, 'local_cache_dir': "
    "'/root/.cache/vllm/torch_compile_cache/5c1e0f3b2a/rank_0_0/backbone', 'cudagraph_mode': "
    "<CUDAGraphMode.FULL_AND_PIECEWISE: (2, 1)>, 'cudagraph_num_of_warmups': 1, 'cudagraph_capture_sizes': "
    "[1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, "
    "176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256, 272, 288, 304, 320, 336, 352, 368, 384, 400, 416, "
    "432, 448, 464, 480, 496, 512], 'cudagraph_copy_inputs': False, 'cudagraph_specialize_lora': True, "
    "'use_inductor_graph_partition': False, 'fast_moe_cold_start': True, 'static_all_moe_layers': []}"
)


def startup_lines(clock: Clock) -> list[str]:
    """About a hundred lines of a vLLM 0.20.1 start, in catalogue formats, clock advanced as it goes."""
    lines: list[str] = []
    tp0, tp1 = WORKERS

    def log(proc: str, level: str, where: str, message: str, advance: float = 0.0) -> None:
        clock.now += advance
        lines.append(f"{proc}{level} {clock.stamp()} [{where}] {message}")

    for part in (
        "",
        "       █     █     █▄   ▄█",
        " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.20.1",
        f"  █▄█▀ █     █     █     █  model   {MODEL}",
        "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
        "",
    ):
        log(API, "INFO", "utils.py:297", part)
    log(
        API,
        "INFO",
        "utils.py:233",
        f"non-default args: {{'model_tag': '{MODEL}', 'enable_log_requests': True, 'host': '0.0.0.0', "
        f"'model': '{MODEL}', 'max_model_len': 32768, 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.92, "
        f"'enable_prefix_caching': True, 'speculative_config': {{'method': 'dflash', 'model': '{DRAFTER}', "
        f"'num_speculative_tokens': {NUM_SPEC_TOKENS}}}}}",
    )
    log(API, "INFO", "model.py:547", "Resolved architecture: Qwen3ForCausalLM", 4.1)
    log(API, "INFO", "model.py:1602", "Using max model len 32768")
    log(API, "INFO", "model.py:547", "Resolved architecture: DFlashDraftModel", 0.6)
    log(API, "INFO", "model.py:1602", "Using max model len 40960")
    log(API, "INFO", "scheduler.py:242", "Chunked prefill is enabled with max_num_batched_tokens=2048.")
    log(API, "INFO", "vllm.py:1118", "Asynchronous scheduling is enabled.")
    engine_config = (
        f"model='{MODEL}', speculative_config=SpeculativeConfig(method='dflash', model='{DRAFTER}', "
        f"num_spec_tokens={NUM_SPEC_TOKENS}), tokenizer='{MODEL}', skip_tokenizer_init=False, tokenizer_mode=auto, "
        "revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=32768, "
        "download_dir=None, load_format=auto, tensor_parallel_size=2, pipeline_parallel_size=1, "
        "data_parallel_size=1, decode_context_parallel_size=1, dcp_comm_backend=ag_rs, "
        "disable_custom_all_reduce=False, quantization=None, quantization_config=None, enforce_eager=False, "
        "enable_return_routed_experts=False, kv_cache_dtype=auto, device_config=cuda, "
        "structured_outputs_config=StructuredOutputsConfig(backend='auto', disable_fallback=False, "
        "disable_any_whitespace=False, disable_additional_properties=False, reasoning_parser='', "
        "reasoning_parser_plugin='', enable_in_reasoning=False), "
        "observability_config=ObservabilityConfig(show_hidden_metrics_for_version=None, "
        "otlp_traces_endpoint=None, collect_detailed_traces=None, kv_cache_metrics=False, "
        "kv_cache_metrics_sample=0.01, cudagraph_metrics=False, enable_layerwise_nvtx_tracing=False, "
        "enable_mfu_metrics=False, enable_mm_processor_stats=False, enable_logging_iteration_details=False), "
        f"seed=0, served_model_name={MODEL}, enable_prefix_caching=True, enable_chunked_prefill=True, "
        f"pooler_config=None, compilation_config={_COMPILATION_CONFIG}, kernel_config=KernelConfig(enable_jit_warmup=True)"
    )
    log(ENGINE, "INFO", "core.py:109", f"Initializing a V1 LLM engine (v0.20.1) with config: {engine_config}", 2.3)
    log(
        ENGINE,
        "WARNING",
        "vllm.py:1406",
        "max_num_scheduled_tokens is set to 1948 based on the speculative decoding settings. This may lead to "
        "suboptimal performance. Consider increasing max_num_batched_tokens to accommodate the additional draft "
        "token slots, or decrease num_speculative_tokens or max_num_seqs.",
    )
    log(
        ENGINE,
        "WARNING",
        "multiproc_executor.py:880",
        "Reducing Torch parallelism from 16 threads to 1 to avoid unnecessary CPU contention. Set OMP_NUM_THREADS "
        "in the external environment to tune this value as needed.",
    )
    for rank, proc in enumerate(WORKERS):
        log(
            proc,
            "INFO",
            "parallel_state.py:1208",
            f"world_size=2 rank={rank} local_rank={rank} distributed_init_method=tcp://127.0.0.1:44131 backend=nccl",
            3.2,
        )
    for proc in WORKERS:
        log(proc, "INFO", "pynccl.py:111", "vLLM is using nccl==2.27.5", 0.4)
    for proc in WORKERS:
        log(
            proc,
            "WARNING",
            "custom_all_reduce.py:154",
            "Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed. To "
            "silence this warning, specify disable_custom_all_reduce=True explicitly.",
        )
    for rank, proc in enumerate(WORKERS):
        log(
            proc,
            "INFO",
            "parallel_state.py:1723",
            f"rank {rank} in world size 2 is assigned as DP rank 0, PP rank 0, PCP rank 0, TP rank {rank}, "
            "EP rank N/A, EPLB rank N/A",
        )
    for proc in WORKERS:
        log(proc, "INFO", "gpu_model_runner.py:4400", f"Starting to load model {MODEL}...", 0.2)
    for proc in WORKERS:
        log(
            proc,
            "INFO",
            "cuda.py:482",
            "Using FLASH_ATTN attention backend out of potential backends: "
            "['FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION'].",
            0.1,
        )
        log(proc, "INFO", "flash_attn.py:789", "Using FlashAttention version 2")
    shards = 5
    for done in range(shards + 1):
        pct = done * 100 // shards
        eta = "?, ?it/s" if done == 0 else f"00:{(shards - done) * 5:02d}, {4.9 + done * 0.1:.2f}s/it"
        lines.append(
            f"{tp0}Loading safetensors checkpoint shards: {pct:3d}% Completed | {done}/{shards} "
            f"[00:{done * 5:02d}<{eta}]"
        )
    lines.append(tp0)
    log(tp0, "INFO", "default_loader.py:384", "Loading weights took 24.84 seconds", 25.0)
    log(tp1, "INFO", "default_loader.py:384", "Loading weights took 24.91 seconds")
    for proc in WORKERS:
        log(proc, "INFO", "gpu_model_runner.py:4450", "Loading drafter model...", 0.3)
    for proc in WORKERS:
        log(proc, "INFO", "default_loader.py:384", "Loading weights took 1.37 seconds", 1.4)
    log(tp0, "INFO", "gpu_model_runner.py:4879", "Model loading took 8.66 GiB memory and 31.657031 seconds", 0.5)
    log(tp1, "INFO", "gpu_model_runner.py:4879", "Model loading took 8.66 GiB memory and 31.702266 seconds")
    for proc in WORKERS:
        log(
            proc,
            "INFO",
            "backends.py:61",
            "Using cache directory: /root/.cache/vllm/torch_compile_cache/5c1e0f3b2a/rank_0_0/backbone for vLLM's "
            "torch.compile",
            1.0,
        )
    for proc in WORKERS:
        log(proc, "INFO", "backends.py:1128", "Dynamo bytecode transform time: 14.14 s", 14.1)
    for proc in WORKERS:
        log(proc, "INFO", "backends.py:376", "Cache the graph of compile range (1, 2048) for later use", 5.0)
    log(
        ENGINE,
        "INFO",
        "shm_broadcast.py:681",
        "No available shared memory broadcast block found in 60 seconds. This typically happens when some "
        "processes are hanging or doing some time-consuming work (e.g. compilation, weight/kv cache quantization).",
        40.0,
    )
    for proc in WORKERS:
        log(proc, "INFO", "backends.py:391", "Compiling a graph for compile range (1, 2048) takes 44.99 s", 1.0)
    for proc in WORKERS:
        log(proc, "INFO", "monitor.py:53", "torch.compile took 82.29 s in total", 22.0)
    for proc in WORKERS:
        log(proc, "INFO", "monitor.py:81", "Initial profiling/warmup run took 76.71 s", 77.0)
    for proc in WORKERS:
        log(proc, "INFO", "gpu_model_runner.py:6143", "Estimated CUDA graph memory: 0.38 GiB total", 1.0)
    for proc in WORKERS:
        log(proc, "INFO", "gpu_worker.py:460", "Available KV cache memory: 29.74 GiB")
    log(ENGINE, "INFO", "kv_cache_utils.py:1316", "GPU KV cache size: 433,104 tokens", 0.5)
    log(ENGINE, "INFO", "kv_cache_utils.py:1321", "Maximum concurrency for 32,768 tokens per request: 13.22x")
    for title, count in (("mixed prefill-decode, PIECEWISE", 51), ("decode, FULL", 35)):
        # tqdm redraws with carriage returns: one physical line, several segments.
        segments = [
            f"Capturing CUDA graphs ({title}): {p:3d}%|{'█' * (p // 10)}{' ' * (10 - p // 10)}| "
            f"{count * p // 100}/{count} [00:0{p // 25}<00:0{4 - p // 25}, {10.5 + p / 50:.2f}it/s]"
            for p in (0, 25, 50, 75, 100)
        ]
        lines.append(tp0 + "\r".join(segments))
        clock.now += 5
    for proc in WORKERS:
        log(proc, "INFO", "gpu_model_runner.py:6398", "Graph capturing finished in 11 secs, took 0.41 GiB")
    log(
        ENGINE,
        "INFO",
        "core.py:312",
        "init engine (profile, create kv cache, warmup model) took 182.37 s (compilation: 96.10 s)",
        0.4,
    )
    log(
        API,
        "INFO",
        "loggers.py:223",
        "Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 27069",
        0.6,
    )
    log(API, "INFO", "api_server.py:2055", "Supported tasks: ['generate']")
    log(API, "INFO", "api_server.py:2107", "Starting vLLM server on http://0.0.0.0:8000")
    log(API, "INFO", "launcher.py:37", "Available routes are:")
    for route, methods in (
        ("/openapi.json", "HEAD, GET"),
        ("/docs", "HEAD, GET"),
        ("/health", "GET"),
        ("/metrics", "GET"),
        ("/tokenize", "POST"),
        ("/v1/models", "GET"),
        ("/version", "GET"),
        ("/v1/chat/completions", "POST"),
        ("/v1/completions", "POST"),
    ):
        log(API, "INFO", "launcher.py:45", f"Route: {route}, Methods: {methods}")
    lines.append(f"{API}INFO:     Started server process [1]")
    lines.append(f"{API}INFO:     Waiting for application startup.")
    lines.append(f"{API}INFO:     Application startup complete.")
    return lines


# --- serving -------------------------------------------------------------------------------------

_WORD_TEXT = (
    "the of and to in is that for it as with was on be by this are from or have an they which you were her all "
    "she there would their we him been has when who will more no if out so said what up its about into than them "
    "can only other new some could time these two may then do first any my now such like our over man me even "
    "most made after also did many before must through back years where much your way well down should because "
    "each just those people how too little state good very make world still own see men work long get here "
    "between both life being under never day same another know while last might us great old year off come "
    "since against go came right used take three summarize explain write function python code error table data "
    "list email report customer invoice order translate review refactor test unit json schema query database "
    "docker kubernetes deploy latency budget meeting agenda notes outline essay story poem recipe"
)
_WORDS = _WORD_TEXT.split()
_SYSTEM_PROMPTS = (
    "You are a helpful assistant.",
    "You are a senior software engineer. Answer concisely and show code when it helps.",
    "You are a customer-support agent for an online store. Be polite and precise.",
    "Reply in JSON only.",
)
_SAMPLING_TEMPLATE = (
    "SamplingParams(n=1, presence_penalty={presence}, frequency_penalty=0.0, repetition_penalty=1.0, "
    "temperature={temperature}, top_p={top_p}, top_k={top_k}, min_p=0.0, seed=None, stop=[], stop_token_ids=[], "
    "bad_words=[], include_stop_str_in_output=False, ignore_eos=False, max_tokens={max_tokens}, min_tokens=0, "
    "logprobs=None, prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, "
    "truncate_prompt_tokens=None, structured_outputs=None, extra_args=None)"
)


def _prompt_pool(rng: random.Random, count: int) -> list[str]:
    """Chat-templated prompts (Qwen style) as vLLM prints them: `repr()` of the whole string, one line."""
    prompts = []
    for _ in range(count):
        length = int(min(6000, max(40, rng.lognormvariate(6.6, 0.9))))  # median ~ 735 chars
        words: list[str] = []
        total = 0
        while total < length:
            word = rng.choice(_WORDS)
            words.append(word)
            total += len(word) + 1
        body = " ".join(words).capitalize() + "?"
        text = (
            f"<|im_start|>system\n{rng.choice(_SYSTEM_PROMPTS)}<|im_end|>\n"
            f"<|im_start|>user\n{body}<|im_end|>\n<|im_start|>assistant\n"
        )
        prompts.append(repr(text))
    return prompts


def _sampling_pool(rng: random.Random, count: int) -> list[str]:
    return [
        _SAMPLING_TEMPLATE.format(
            presence=rng.choice(("0.0", "0.0", "1.5")),
            temperature=rng.choice(("0.0", "0.6", "0.7", "1.0")),
            top_p=rng.choice(("1.0", "0.95", "0.8")),
            top_k=rng.choice(("0", "20", "40")),
            max_tokens=rng.choice(("512", "1024", "2048", "4096", "8192", "32768")),
        )
        for _ in range(count)
    ]


@dataclass
class Totals:
    lines: int = 0
    bytes: int = 0
    requests: int = 0
    stats_lines: int = 0
    spec_lines: int = 0


def _load(second_of_day: float, rng: random.Random) -> float:
    """Requests per second: a day/night cycle with quiet hours (idle intervals, stats suppressed)."""
    hour = (second_of_day / 3600.0) % 24
    if 2 <= hour < 5:
        return 0.0 if rng.random() < 0.9 else 0.15
    base = 0.6 + 1.6 * max(0.0, 1 - abs(hour - 14) / 9)
    return base * rng.uniform(0.6, 1.4)


def generate(path: Path, size: int, seed: int = DEFAULT_SEED, progress: Callable[[int], None] | None = None) -> Totals:
    """Write at least `size` bytes (whole lines) to `path`; same seed and size, same bytes."""
    rng = random.Random(seed)
    clock = Clock(START_EPOCH)
    totals = Totals()
    path.parent.mkdir(parents=True, exist_ok=True)
    prompts = _prompt_pool(rng, 512)
    sampling = _sampling_pool(rng, 24)
    buf: list[str] = []
    buffered = 0

    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as out:

        def flush() -> None:
            nonlocal buffered
            if buf:
                data = ("\n".join(buf) + "\n").encode("utf-8")
                out.write(data)
                totals.bytes += len(data)
                totals.lines += len(buf)
                buf.clear()
                buffered = 0
                if progress is not None:
                    progress(totals.bytes)

        for line in startup_lines(clock):
            buf.append(line)
        flush()

        finishing: list[tuple[float, str, str, int]] = []  # (finish time, request id, client port, status)
        running = 0
        prev_active = True
        interval_start = float(int(clock.now) + 1)
        while totals.bytes + buffered < size:
            interval_end = interval_start + STATS_INTERVAL_S
            rate = _load(interval_start - 86400 * int(interval_start // 86400), rng)
            arrivals = sorted(interval_start + rng.random() * STATS_INTERVAL_S for _ in range(_poisson(rng, rate * 10)))
            prompt_tokens = 0
            generated_tokens = 0
            events: list[tuple[float, int, str]] = []
            for at in arrivals:
                rid = f"chatcmpl-{rng.getrandbits(128):032x}"
                prompt = rng.choice(prompts)
                tokens = len(prompt) // 4
                prompt_tokens += tokens
                stamp = clock.stamp(at)
                port = str(rng.randint(32768, 60999))
                events.append(
                    (
                        at,
                        0,
                        f"{API}INFO {stamp} [logger.py:43] Received request {rid}: prompt: {prompt}, "
                        f"params: {rng.choice(sampling)}, prompt_token_ids: None, prompt_embeds shape: None, "
                        "lora_request: None.",
                    )
                )
                events.append((at, 1, f"{API}INFO {stamp} [async_llm.py:346] Added request {rid}."))
                duration = rng.lognormvariate(1.8, 0.8)
                status = 200 if rng.random() > 0.002 else 400
                heapq.heappush(finishing, (at + duration, rid, port, status))
            for scrape in range(0, STATS_INTERVAL_S, 5):
                at = interval_start + scrape + 0.5
                events.append((at, 2, f'{API}INFO:     127.0.0.1:{40000 + scrape} - "GET /metrics HTTP/1.1" 200 OK'))
            while finishing and finishing[0][0] < interval_end:
                at, rid, port, status = heapq.heappop(finishing)
                stamp = clock.stamp(at)
                generated_tokens += int(min(4096, 60 * (at - interval_start) + 40))
                reason = "OK" if status == 200 else "Bad Request"
                events.append(
                    (
                        at,
                        3,
                        f'{API}INFO:     172.31.0.1:{port} - "POST /v1/chat/completions HTTP/1.1" {status} {reason}',
                    )
                )
                events.append((at, 4, f"{API}INFO {stamp} [async_llm.py:553] Finished request {rid}."))
            events.sort()
            for _, _, text in events:
                buf.append(text)
                buffered += len(text) + 1
            totals.requests += len(arrivals)
            running = len(finishing)  # still in flight at the end of the interval
            generated_tokens += running * rng.randint(300, 700)
            active = prompt_tokens > 0 or generated_tokens > 0
            stamp = clock.stamp(interval_end)
            if active or prev_active:
                kv = min(99.9, running * rng.uniform(1.5, 4.5))
                hit = rng.uniform(5.0, 45.0) if totals.requests else 0.0
                stats = (
                    f"{API}INFO {stamp} [loggers.py:271] Engine 000: Avg prompt throughput: "
                    f"{prompt_tokens / STATS_INTERVAL_S:.1f} tokens/s, Avg generation throughput: "
                    f"{generated_tokens / STATS_INTERVAL_S:.1f} tokens/s, Running: {running} reqs, Waiting: "
                    f"{0 if running < 40 else running - 40} reqs, GPU KV cache usage: {kv:.1f}%, "
                    f"Prefix cache hit rate: {hit:.1f}%"
                )
                buf.append(stats)
                totals.stats_lines += 1
                buffered += len(stats) + 1
                spec = _spec_line(rng, generated_tokens, stamp)
                if spec is not None:
                    buf.append(spec)
                    totals.spec_lines += 1
                    buffered += len(spec) + 1
            prev_active = active
            interval_start = interval_end
            if buffered >= CHUNK_BYTES:
                flush()
        flush()
    tmp.replace(path)
    return totals


def _poisson(rng: random.Random, mean: float) -> int:
    if mean <= 0:
        return 0
    if mean > 30:
        return max(0, round(rng.gauss(mean, mean**0.5)))
    limit, k, p = pow(2.718281828459045, -mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _spec_line(rng: random.Random, generated_tokens: int, stamp: str) -> str | None:
    """A self-consistent DFlash k=15 `SpecDecoding metrics` line (None when no draft ran: vLLM prints none)."""
    if generated_tokens <= 0:
        return None
    mean_length = rng.uniform(2.2, 3.4)
    drafts = max(1, int(generated_tokens / mean_length))
    ratio = rng.uniform(0.55, 0.7)
    scale = (mean_length - 1) * (1 - ratio) / (1 - ratio**NUM_SPEC_TOKENS)
    per_position = [int(drafts * min(1.0, scale * ratio**i)) for i in range(NUM_SPEC_TOKENS)]
    accepted = sum(per_position)
    drafted = drafts * NUM_SPEC_TOKENS
    rates = ", ".join(f"{count / drafts:.3f}" for count in per_position)
    return (
        f"{API}INFO {stamp} [metrics.py:101] SpecDecoding metrics: Mean acceptance length: "
        f"{1 + accepted / drafts:.2f}, Accepted throughput: {accepted / STATS_INTERVAL_S:.2f} tokens/s, "
        f"Drafted throughput: {drafted / STATS_INTERVAL_S:.2f} tokens/s, Accepted: {accepted} tokens, "
        f"Drafted: {drafted} tokens, Per-position acceptance rate: {rates}, "
        f"Avg Draft acceptance rate: {100 * accepted / drafted:.1f}%"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=parse_size, default=parse_size(DEFAULT_SIZE), help="e.g. 1G (default), 256M")
    parser.add_argument("--out", type=Path, default=None, help="default: bench/out/vllm-serve-<size>.log")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    path: Path = args.out or default_path(args.size, args.seed)
    started = time.perf_counter()
    totals = generate(path, args.size, args.seed)
    elapsed = time.perf_counter() - started
    print(
        f"{path}: {totals.bytes:,} bytes, {totals.lines:,} lines, {totals.requests:,} requests, "
        f"{totals.stats_lines:,} stats + {totals.spec_lines:,} SpecDecoding lines in {elapsed:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
