"""Facts from the third held-out set (session 4): which all-reduce list speaks for TP, and what a KV connector
line does and does not say."""

from __future__ import annotations

from logdoctor.engine.result import Finding
from logdoctor.engine.rules import load_rules
from logdoctor.facts import Profile, build_profile
from logdoctor.parse.pipeline import parse_text
from logdoctor.run import LineSource, diagnose_sources

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


def _profile(text: str) -> Profile:
    return build_profile(parse_text(text, "t.log"))


def _findings(text: str) -> list[Finding]:
    lines = ((i, s) for i, s in enumerate(text.split("\n"), start=1))
    return diagnose_sources([LineSource("t.log", lines)], load_rules()).findings


def test_only_the_tp_group_decides_custom_allreduce() -> None:
    # vLLM never gives the expert-parallel group a custom all-reduce; its NCCL-only list is not a TP fallback.
    assert _profile(TP_CUSTOM + "\n" + EP_NCCL).value("allreduce.custom") is True
    assert _profile(EP_NCCL + "\n" + TP_CUSTOM).value("allreduce.custom") is True
    assert _profile(EP_NCCL).value("allreduce.custom") is None
    assert _profile(TP_NCCL).value("allreduce.custom") is False


def test_a_kv_connector_is_not_kv_in_host_memory() -> None:
    text = CONNECTOR + "\n" + STATS
    profile = _profile(text)
    assert profile.value("offload.kv") is None
    assert profile.value("disagg.connector") == "kv-connector-v1"
    assert "host-memory" not in {f.rule for f in _findings(text)}
