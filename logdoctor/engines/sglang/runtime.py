"""SGLang line types: retraction, crashes, warnings, readiness."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.sglang.common import Rule, _apply, _ev, _failure, _grammar
from logdoctor.events import (
    CompileTime,
    EngineFailure,
    EventBase,
    ModelInfo,
    Platform,
    Preemption,
    Quantization,
    SchedulerConfig,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- retraction, crashes, warnings, readiness ------------------------------------------------------


def _retract(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [Preemption(**base, mode="retract", count=int(m.group("n")), message=message)]


def _retract_abort(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [Preemption(**base, mode="retract-abort", count=1, message=message)]


def _quant_slow(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [Quantization(**base, method=m.group("method"), fallback=True, message=message)]


def _cast(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [ModelInfo(**base, dtype=m.group("to"))]


def _ready(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [CompileTime(**base, kind="server_ready", message=message)]


_RUNTIME_RULES = [
    Rule(
        re.compile(
            r"(?:KV cache pool is full\. Retract requests\.|Decode out of memory happened\.) #retracted_reqs: (?P<n>\d+)"
        ),
        _retract,
    ),
    Rule(re.compile(r"retract_decode: aborted last request"), _retract_abort),
    Rule(re.compile(r"Failed to retract any request"), _failure("exception")),
    Rule(re.compile(r"[Ww]atchdog timeout \("), _failure("watchdog")),
    Rule(re.compile(r"Scheduler hit an exception"), _failure("exception")),
    Rule(re.compile(r"Received sigquit from a child"), _failure("worker-died")),
    # The launcher's and the tokenizer manager's own words when a child process (a scheduler, the
    # detokenizer) has died: the crash-dump path finds no scheduler left, the running-phase SIGQUIT
    # handler and the subprocess watchdog name the dead child. A scheduler killed from outside (the
    # OOM killer, a segfault in native code) prints no traceback; these lines are all that is left.
    Rule(re.compile(r"No live scheduler processes found"), _failure("worker-died")),
    Rule(re.compile(r"SIGQUIT received\..*It usually means one child failed"), _failure("worker-died")),
    Rule(re.compile(r"Subprocess \S+ \(pid=\d+\) crashed with exit code"), _failure("worker-died")),
    Rule(re.compile(r"Rank \d+ scheduler died during initialization"), _failure("worker-died")),
    Rule(re.compile(r"memory leak detected!"), _failure("memory-leak")),
    Rule(re.compile(r"(?<![\w-])(?P<method>[\w-]+) quantization is not fully optimized yet"), _quant_slow),
    Rule(re.compile(r"Casting (?P<from>torch\.\w+) to (?P<to>torch\.\w+)\."), _cast),
    Rule(re.compile(r"The server is fired up and ready to roll!"), _ready),
    Rule(
        re.compile("reports it is not torch\\.compile compatible.*?Disabling torch\\.compile"),
        _ev(CompileTime, kind="compile_disabled"),
    ),
    Rule(re.compile("NCCL/RCCL/HCCL warmup completed in (?P<seconds>[\\d.]+)s"), _ev(CompileTime, kind="warmup")),
    Rule(
        re.compile("Chunked prefill is disabled for multimodal models with the Transformers backend"),
        _ev(SchedulerConfig, kind="chunked-prefill", enabled=False),
    ),
    Rule(
        re.compile("Chunked prefill is disabled because --enable-mis is set"),
        _ev(SchedulerConfig, kind="chunked-prefill", enabled=False),
    ),
    Rule(
        re.compile("Radix cache is disabled because --enable-mis is set"),
        _ev(SchedulerConfig, kind="prefix-caching", enabled=False),
    ),
    Rule(
        re.compile("Setting max_running_requests to (?P<value>\\d+) for \\w+"),
        _ev(SchedulerConfig, kind="max-num-seqs"),
    ),
    Rule(
        re.compile("Overlap schedule is not implemented for speculative decoding on CPU"), _ev(Platform, platform="cpu")
    ),
    Rule(
        re.compile("init_cpu_threads_env and shared memory based AllReduce is disabled"), _ev(Platform, platform="cpu")
    ),
    Rule(re.compile("--enable-symm-mem is not supported on non CUDA/HIP devices"), _ev(Platform)),
    Rule(re.compile("pre_warm_nccl is only applicable for CUDA or HIP hardware"), _ev(Platform)),
    Rule(re.compile("Some requests timed out when bootstrapping"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(
        re.compile("Some requests fail to receive KV Cache transfer done signal"),
        _ev(EngineFailure, kind="kv-transfer"),
    ),
    Rule(
        re.compile(
            "Lost connection with prefill instance \\(bootstrap_addr: \\S+\\), (?P<requests>\\d+) requests affected"
        ),
        _ev(EngineFailure, kind="kv-transfer"),
    ),
    Rule(re.compile("Prefill instance failed to register to bootstrap server"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("Decode (?:transfer|handshake) failed for request"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("Prefill (?:transfer|bootstrap) failed for request"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("bootstrap_thread died on engine_rank=\\d+"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("^\\s*Session \\S+ failed\\.\\s*$"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("Deferred KV release for room \\S+ timed out"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(
        re.compile("Disaggregated request received without bootstrap room id"), _ev(EngineFailure, kind="kv-transfer")
    ),
]


def parse_runtime(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_RUNTIME_RULES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "runtime",
        (
            "Retract requests.",
            "Decode out of memory happened",
            "retract_decode: aborted",
            "Failed to retract any request",
            "atchdog timeout (",
            "Scheduler hit an exception",
            "Received sigquit from a child",
            "No live scheduler processes found",
            "It usually means one child failed",
            ") crashed with exit code",
            "scheduler died during initialization",
            "memory leak detected!",
            "quantization is not fully optimized yet",
            "Casting torch.",
            "The server is fired up and ready to roll!",
            "is not torch.compile compatible",
            "warmup completed in",
            "Chunked prefill is disabled for multimodal models with the Transformers backend",
            "Chunked prefill is disabled because --enable-mis is set",
            "Radix cache is disabled because --enable-mis is set",
            "Setting max_running_requests to",
            "Overlap schedule is not implemented for speculative decoding on CPU",
            "init_cpu_threads_env and shared memory based AllReduce is disabled",
            "is not supported on non CUDA/HIP devices",
            "pre_warm_nccl is only applicable for CUDA or HIP hardware",
            "Some requests timed out when bootstrapping",
            "Some requests fail to receive KV Cache transfer done signal",
            "Lost connection with prefill instance",
            "failed to register to bootstrap server",
            "Decode transfer failed for request",
            "Decode handshake failed for request",
            "Prefill transfer failed for request",
            "Prefill bootstrap failed for request",
            "bootstrap_thread died on engine_rank=",
            "Session ",
            "Deferred KV release for room",
            "Disaggregated request received without bootstrap room id",
        ),
        parse_runtime,
        (
            case(
                "sample-1",
                "[2026-05-24 03:51:47 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, "
                "#new_tokens_gained: 65536, #new_token_ratio: 0.4213 -> 0.7000",
                ("preemption", {}),
            ),
            case("sample-2", "[2025-01-23 19:35:33] The server is fired up and ready to roll!", ("compile_time", {})),
            case(
                "sample-3",
                "[2025-03-31 04:29:49 TP0] awq quantization is not fully optimized yet. The speed can be slower than "
                "non-quantized models.",
                ("quantization", {}),
            ),
            case(
                "row-1",
                "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.9998 -> 1.0000",
                ("preemption", {"mode": "retract", "count": 1}),
                exact=True,
            ),
            case(
                "row-2",
                "[2026-05-24 03:51:47 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_tokens_gained: "
                "65536, #new_token_ratio: 0.4213 -> 0.7000",
                ("preemption", {"mode": "retract", "count": 2}),
                exact=True,
            ),
            case(
                "row-3",
                "[2024-12-01 10:00:00 TP0] Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.5000 -> 0.8000",
                ("preemption", {"mode": "retract", "count": 3}),
                exact=True,
            ),
            case(
                "row-4",
                "[2026-04-08 10:00:00 TP0] retract_decode: aborted last request 5f2c due to OOM",
                ("preemption", {"mode": "retract-abort", "count": 1}),
                exact=True,
            ),
            case(
                "row-5",
                "[2025-02-09 21:23:00] Received sigquit from a child proces. It usually means the child failed.",
                ("engine_failure", {"kind": "worker-died"}),
                exact=True,
            ),
            case(
                "v0.5.23-no-live-scheduler-processes",
                "[2026-08-27 03:49:55] No live scheduler processes found; skipping py-spy and CUDA coredump.",
                ("engine_failure", {"kind": "worker-died"}),
                exact=True,
            ),
            case(
                "v0.5.23-running-phase-sigquit",
                "[2025-11-30 10:00:00] SIGQUIT received. signum=3, frame=None. It usually means one child failed.",
                ("engine_failure", {"kind": "worker-died"}),
                exact=True,
            ),
            case(
                "v0.5.23-subprocess-watchdog",
                "[2025-11-30 10:00:00] Subprocess scheduler_0 (pid=4211) crashed with exit code -9. "
                "Triggering SIGQUIT for cleanup...",
                ("engine_failure", {"kind": "worker-died"}),
                exact=True,
            ),
            case(
                "v0.5.23-scheduler-died-during-init",
                "RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 "
                "(SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.",
                ("engine_failure", {"kind": "worker-died"}),
            ),
            case(
                "row-6",
                "[2025-02-09 21:23:00 TP2] Scheduler hit an exception: Traceback (most recent call last):",
                ("engine_failure", {"kind": "exception"}),
                exact=True,
            ),
            case(
                "row-7",
                "[2025-05-01 10:00:00 TP0] Watchdog timeout (self.watchdog_timeout=300)",
                ("engine_failure", {"kind": "watchdog"}),
                exact=True,
            ),
            case(
                "row-8",
                "[2026-01-01 10:00:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
                ("engine_failure", {"kind": "watchdog"}),
                exact=True,
            ),
            case(
                "row-9",
                "[2025-09-01 10:00:00 TP0] token_to_kv_pool_allocator memory leak detected! available_size=10, protected=0",
                ("engine_failure", {"kind": "memory-leak"}),
                exact=True,
            ),
            case(
                "row-10",
                "[2025-03-31 04:29:49 TP0] awq quantization is not fully optimized yet. The speed can be slower than "
                "non-quantized models.",
                ("quantization", {"method": "awq", "fallback": True}),
                exact=True,
            ),
            case(
                "row-11",
                "[2025-03-31 04:29:49 TP0] Casting torch.bfloat16 to torch.float16.",
                ("model_info", {"dtype": "torch.float16"}),
                exact=True,
            ),
            case(
                "row-12",
                "[2025-01-23 19:35:33] The server is fired up and ready to roll!",
                ("compile_time", {"kind": "server_ready"}),
                exact=True,
            ),
            case(
                "v0.5.23-is-not-torch-compile-compatible",
                "[2025-11-30 10:00:00 TP0] Transformers backend model reports it is not torch.compile compatible (e.g. dynamic rope scaling). Disabling torch.compile.",
                ("compile_time", {"kind": "compile_disabled"}),
            ),
            case(
                "v0.5.23-warmup-completed-in",
                "[2025-11-30 10:00:00 TP0] NCCL/RCCL/HCCL warmup completed in 1.234s (tp_size=2, pp_size=1, ep_size=1)",
                ("compile_time", {"kind": "warmup", "seconds": 1.234}),
            ),
            case(
                "v0.5.23-chunked-prefill-is-disabled-for-multimod",
                "[2025-11-30 10:00:00 TP0] Chunked prefill is disabled for multimodal models with the Transformers backend to avoid partial multimodal chunk mismatches.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
            ),
            case(
                "v0.5.23-chunked-prefill-is-disabled-because-enab",
                "[2025-11-30 10:00:00 TP0] Chunked prefill is disabled because --enable-mis is set.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
            ),
            case(
                "v0.5.23-radix-cache-is-disabled-because-enable-m",
                "[2025-11-30 10:00:00 TP0] Radix cache is disabled because --enable-mis is set.",
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
            ),
            case(
                "v0.5.23-setting-max-running-requests-to",
                "[2025-11-30 10:00:00 TP0] Setting max_running_requests to 256 for DeepseekV4ForCausalLM.",
                ("scheduler_config", {"kind": "max-num-seqs", "value": 256}),
            ),
            case(
                "v0.5.23-overlap-schedule-is-not-implemented-for-",
                "[2025-11-30 10:00:00 TP0] Overlap schedule is not implemented for speculative decoding on CPU.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.5.23-init-cpu-threads-env-and-shared-memory-b",
                "[2025-11-30 10:00:00 TP0] init_cpu_threads_env and shared memory based AllReduce is disabled, only intel amx backend and arm64 are supported",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.5.23-is-not-supported-on-non-cuda-hip-devices",
                "[2025-11-30 10:00:00 TP0] --enable-symm-mem is not supported on non CUDA/HIP devices (NCCL symmetric memory is unavailable). Disabling symmetric memory.",
                ("platform", {}),
            ),
            case(
                "v0.5.23-pre-warm-nccl-is-only-applicable-for-cud",
                "[2025-11-30 10:00:00 TP0] pre_warm_nccl is only applicable for CUDA or HIP hardware or NPU hardware. Ignoring pre_warm_nccl setting on current hardware.",
                ("platform", {}),
            ),
            case(
                "v0.5.23-some-requests-timed-out-when-bootstrappi",
                "[2025-11-30 10:00:00 TP0] Some requests timed out when bootstrapping, which means prefill instances fail to receive the KV indices from the decode instance of this request. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT=600' (10 minutes) to relax the timeout condition.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-some-requests-fail-to-receive-kv-cache-t",
                "[2025-11-30 10:00:00 TP0] Some requests fail to receive KV Cache transfer done signal after bootstrapping. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600' (10 minutes) to relax the timeout condition.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-lost-connection-with-prefill-instance",
                "[2025-11-30 10:00:00 TP0] Lost connection with prefill instance (bootstrap_addr: 10.0.0.2:8998), 4 requests affected",
                ("engine_failure", {"kind": "kv-transfer", "requests": 4}),
            ),
            case(
                "v0.5.23-failed-to-register-to-bootstrap-server",
                "[2025-11-30 10:00:00 TP0] Prefill instance failed to register to bootstrap server after 5 retries",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-decode-transfer-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Decode transfer failed for request rank=self_tp_rank decode_req.req.rid='decode_req_req_rid' decode_req.req.bootstrap_room='room' with exception e (HiCache local restore failed on this rank)",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-decode-handshake-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Decode handshake failed for request rank=self_tp_rank decode_req.req.rid='decode_req_req_rid' decode_req.req.bootstrap_room='room' with exception e",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-prefill-transfer-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Prefill transfer failed for request rank=get_parallel_tp_rank req.rid='req_rid' req.bootstrap_room='req_bootstrap_room' with exception e",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-prefill-bootstrap-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Prefill bootstrap failed for request rank=get_parallel_tp_rank req.rid='req_rid' req.bootstrap_room='req_bootstrap_room' with exception e",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-bootstrap-thread-died-on-engine-rank",
                "[2025-11-30 10:00:00 TP0] prefill bootstrap_thread died on engine_rank=0; requests to this rank will time out in KVPoll.Bootstrapping",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-session",
                "[2025-11-30 10:00:00 TP0] Session 10.0.0.2:17001 failed.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-deferred-kv-release-for-room",
                "[2025-11-30 10:00:00 TP0] Deferred KV release for room 42 timed out after 30s without a full drain ack from prefill; releasing anyway.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-disaggregated-request-received-without-b",
                "[2025-11-30 10:00:00 TP0] Invalid request: Disaggregated request received without bootstrap room id. req.rid=\"'r-7'\"",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
        ),
    ),
]
