"""Facts from the third held-out set: which all-reduce list speaks for TP, and what a KV connector
line does and does not say."""

from __future__ import annotations

from tests.facts import helpers

TP_CUSTOM = (
    "(Worker pid=60651) INFO 07-01 09:41:21 [cuda_communicator.py:237] Using ['CUSTOM', 'SYMM_MEM', 'PYNCCL'] "
    "all-reduce backends (in dispatch order) for group 'tp:0' out of potential backends: ['NCCL_SYMM_MEM', "
    "'QUICK_REDUCE', 'FLASHINFER', 'CUSTOM', 'SYMM_MEM', 'PYNCCL']."
)
EP_NCCL = (
    "(Worker pid=60651) INFO 07-01 09:41:21 [cuda_communicator.py:237] Using ['PYNCCL'] all-reduce backends (in "
    "dispatch order) for group 'ep:0' out of potential backends: ['NCCL_SYMM_MEM', 'QUICK_REDUCE', 'FLASHINFER', "
    "'CUSTOM', 'SYMM_MEM', 'PYNCCL']."
)
TP_NCCL = EP_NCCL.replace("'ep:0'", "'tp:0'")
CONNECTOR = (
    "WARNING 06-15 14:54:07 [base.py:61] Initializing KVConnectorBase_V1. This API is experimental and subject to "
    "change in the future as we iterate the design."
)
STATS = (
    "INFO 06-15 14:55:05 [loggers.py:116] Engine 000: Avg prompt throughput: 3077.1 tokens/s, Avg generation "
    "throughput: 13.1 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 50.0%"
)


def test_only_the_tp_group_decides_custom_allreduce() -> None:
    # vLLM never gives the expert-parallel group a custom all-reduce; its NCCL-only list is not a TP fallback.
    assert helpers.profile(TP_CUSTOM + "\n" + EP_NCCL).value("allreduce.custom") is True
    assert helpers.profile(EP_NCCL + "\n" + TP_CUSTOM).value("allreduce.custom") is True
    assert helpers.profile(EP_NCCL).value("allreduce.custom") is None
    assert helpers.profile(TP_NCCL).value("allreduce.custom") is False


def test_a_kv_connector_is_not_kv_in_host_memory() -> None:
    text = CONNECTOR + "\n" + STATS
    profile = helpers.profile(text)
    assert profile.value("offload.kv") is None
    assert profile.value("disagg.connector") == "kv-connector-v1"
    assert "host-memory" not in {f.rule for f in helpers.findings(text)}


BANNER = "(APIServer pid=1) INFO 03-10 20:08:20 [utils.py:287] vLLM API server version 0.16.0"
LOADED = (
    "(Worker_TP0 pid=9) INFO 03-10 20:11:48 [gpu_model_runner.py:4221] Model loading took 91.36 GiB memory and "
    "136.075547 seconds"
)


def _wait(minute: int) -> str:
    return (
        f"(EngineCore_DP0 pid=8) INFO 03-10 20:{minute:02d}:48 [shm_broadcast.py:542] No available shared memory "
        "broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some "
        "time-consuming work (e.g. compilation, weight/kv cache quantization)."
    )


def test_waits_before_serving_are_startup_time_and_the_start_is_unfinished() -> None:
    text = "\n".join([BANNER, LOADED, *(_wait(m) for m in range(12, 21))])
    profile = helpers.profile(text)
    assert profile.value("compile.startup_wait_seconds") == 540
    assert profile.value("compile.startup_seconds") >= 540
    assert profile.value("startup.incomplete") is True
    rules = {f.rule for f in helpers.findings(text)}
    assert {"long-startup", "start-never-completed"} <= rules
    assert "hung-workers" not in rules


def test_waits_after_serving_are_a_stall_not_startup() -> None:
    stats = STATS.replace("06-15 14:55:05", "03-10 20:11:50")
    profile = helpers.profile("\n".join([BANNER, LOADED, stats, _wait(13), _wait(14)]))
    assert profile.value("compile.startup_wait_seconds") is None
    assert profile.value("stall.serving_waits") == 2
