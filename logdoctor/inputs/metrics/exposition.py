"""The Prometheus text exposition format, one line at a time (what `curl host:8000/metrics` prints).

    # HELP vllm:num_requests_running Number of requests in model execution batches.
    # TYPE vllm:num_requests_running gauge
    vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 3.0
    vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 48212.0 1764590400000

A sample line is a metric name, optional `{label="value",...}`, a value (`Nan`, `+Inf` allowed) and an
optional timestamp in milliseconds. Only the engines' own families (`vllm:`, `sglang:`) are read; the
process and Python families every exporter adds are not this package's business.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_NAME = r"(?P<name>(?:vllm|sglang):[A-Za-z0-9_:]+)"
_LABEL_VALUE = r'"(?:[^"\\]|\\.)*"'
_LABELS = rf"\{{(?P<labels>(?:\s*[A-Za-z_][A-Za-z0-9_]*\s*=\s*{_LABEL_VALUE}\s*,?)*)\s*\}}"
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|[Nn]a[Nn]|[Ii]nf(?:inity)?)"
_SAMPLE_RE = re.compile(rf"^\s*{_NAME}(?:{_LABELS})?\s+(?P<value>{_NUMBER})(?:\s+(?P<ts>-?\d{{1,16}}))?\s*$")
_LABEL_RE = re.compile(rf"(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(?P<value>{_LABEL_VALUE})")
_META_RE = re.compile(r"^\s*#\s*(?P<kind>HELP|TYPE)\s+" + _NAME + r"(?:\s+(?P<rest>.*))?$")
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


@dataclass(frozen=True)
class Sample:
    """One sample: `vllm:kv_cache_usage_perc{engine="0"} 0.42` -> name, labels, value (timestamp in ms)."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float
    timestamp_ms: int | None = None

    def label(self, key: str) -> str | None:
        for k, v in self.labels:
            if k == key:
                return v
        return None


@dataclass(frozen=True)
class Meta:
    """A `# HELP name text` or `# TYPE name kind` line."""

    kind: str  # "HELP" or "TYPE"
    name: str
    text: str


def _unescape(quoted: str) -> str:
    return re.sub(r"\\[\\\"n]", lambda m: _ESCAPES[m.group(0)], quoted[1:-1])


def parse_sample(text: str) -> Sample | None:
    """The sample on this line, or None when it is not an engine metric sample."""
    m = _SAMPLE_RE.match(text)
    if m is None:
        return None
    raw = m.group("value").lower()
    value = math.nan if raw.lstrip("+-") == "nan" else float(raw.replace("infinity", "inf"))
    labels = tuple(
        (lm.group("key"), _unescape(lm.group("value"))) for lm in _LABEL_RE.finditer(m.group("labels") or "")
    )
    ts = m.group("ts")
    return Sample(m.group("name"), labels, value, int(ts) if ts else None)


def parse_meta(text: str) -> Meta | None:
    m = _META_RE.match(text)
    if m is None:
        return None
    return Meta(m.group("kind"), m.group("name"), (m.group("rest") or "").strip())
