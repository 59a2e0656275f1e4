"""What the HTML and GitHub reports show beside the diagnosis, taken from the parsed events: the time
series (report.timeline) and the launch settings the log printed.

    (APIServer pid=2961) INFO 05-08 14:02:11 [utils.py:233] non-default args: {'model_tag': '/root/models/Q...',
        'tensor_parallel_size': 2, 'api_key': ['***'], ...}
    -> Launch(origin="non-default args", settings={"tensor_parallel_size": 2, "api_key": ["***"], ...})

A full configuration dump (SGLang `server_args=ServerArgs(...)`, `args: Namespace(...)`) prints every
setting, defaults included; only the settings that bear on speed are kept from it (`_DUMP_KEYS`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from logdoctor.events import EventBase, StartupConfig
from logdoctor.records import Record, field
from logdoctor.redact import MASK
from logdoctor.report.timeline import Timeline, timeline_of

# Settings of a full dump worth showing in a bug report: parallelism, speculation, memory, batching, kernels.
_DUMP_KEYS = re.compile(
    r"^(model(_path)?|served_model_name|tp_size|pp_size|dp_size|ep_size|tensor_parallel_size|pipeline_parallel_size|"
    r"data_parallel_size|speculative_.*|attention_backend|.*cuda_graph.*|mem_fraction_static|gpu_memory_utilization|"
    r"max_running_requests|max_num_seqs|chunked_prefill_size|max_num_batched_tokens|max_model_len|context_length|"
    r"quantization|kv_cache_dtype|dtype|disable_custom_all_reduce|enable_torch_compile|enforce_eager|"
    r"schedule_policy|enable_mixed_chunk|disable_radix_cache|enable_prefix_caching|mamba_.*)$"
)
# A setting named like a secret: `api_key`, `hf_token`, `ssl_keyfile_password`; not `num_draft_tokens`.
_SECRET_KEYS = re.compile(r"(^|[_-])(api[_-]?key|token|secret|secret[_-]?key|password|passwd)$", re.IGNORECASE)
_ORIGIN_ORDER = ("command line", "non-default args", "server_args", "namespace")


class _Model(Record):
    """Frozen, unknown fields refused (logdoctor.records.Record)."""


class Launch(_Model):
    origin: str  # the StartupConfig origin it came from
    source: str
    line: int
    settings: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False  # the log cut the dump off: later settings are missing
    selected: bool = False  # a subset of a full dump (see _DUMP_KEYS)


class Observed(_Model):
    timeline: Timeline = field(default_factory=Timeline)
    launch: Launch | None = None


def _masked(settings: dict[str, Any]) -> dict[str, Any]:
    """The reader masked secrets in the line already; a key named like a secret is masked again here,
    whatever its value, so a bug report never carries one."""
    return {
        key: (MASK if _SECRET_KEYS.search(key) and value not in (None, "") else value)
        for key, value in settings.items()
    }


def launch_of(events: Sequence[EventBase]) -> Launch | None:
    configs = [e for e in events if isinstance(e, StartupConfig) and e.origin in _ORIGIN_ORDER]
    if not configs:
        return None
    best = min(configs, key=lambda e: (_ORIGIN_ORDER.index(e.origin), e.line))
    full_dump = best.origin in ("server_args", "namespace")
    settings = best.config
    if full_dump:
        settings = {k: v for k, v in settings.items() if _DUMP_KEYS.match(k) and v not in (None, False, "", [], {})}
    return Launch(
        origin=best.origin,
        source=best.source,
        line=best.line,
        settings=_masked(settings),
        truncated=best.truncated,
        selected=full_dump,
    )


def observed_of(events: Sequence[EventBase]) -> Observed:
    return Observed(timeline=timeline_of(events), launch=launch_of(events))


# (fact, label) of the environment summary the HTML and GitHub reports open with.
ENVIRONMENT = (
    ("engine", "engine"),
    ("engine.version", "version"),
    ("model", "model"),
    ("gpu.name", "GPU"),
    ("gpu.count", "GPUs"),
    ("parallel.tp", "TP"),
    ("parallel.pp", "PP"),
    ("parallel.dp", "DP"),
    ("spec.method", "speculative method"),
    ("spec.num_tokens", "speculative tokens"),
    ("attention.backend", "attention backend"),
    ("host.container", "container"),
)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def environment_rows(facts: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) for each environment fact the log showed; an unknown one is left out."""
    rows = []
    for fact, label in ENVIRONMENT:
        value = facts.get(fact)
        if value is not None and value != "" and not isinstance(value, list | dict):
            rows.append((label, _shown(value)))
    return rows
