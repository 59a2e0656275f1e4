"""Mask credentials in collected lines before they are kept, printed or saved.

vLLM prints its startup arguments (`non-default args: {..., 'api_key': ['sk-...']}`), server command
lines carry `--api-key`/`--hf-token`, and environments leak `HF_TOKEN=...`. Only the value is replaced,
so the line keeps its shape (a Python repr stays a valid repr) and still parses:

    >>> redact("vllm serve m --api-key sk-123 --port 8000")
    'vllm serve m --api-key <redacted> --port 8000'
    >>> redact("non-default args: {'model': 'm', 'api_key': ['sk-1', 'sk-2']}")
    "non-default args: {'model': 'm', 'api_key': ['<redacted>']}"
    >>> redact("HF_TOKEN=hf_abc python -m sglang.launch_server")
    'HF_TOKEN=<redacted> python -m sglang.launch_server'
    >>> redact("ServerArgs(model_path='m', api_key='sk-1', hf_token=None, port=30000)")
    "ServerArgs(model_path='m', api_key='<redacted>', hf_token=None, port=30000)"
    >>> redact("Avg generation throughput: 342.2 tokens/s, max_num_batched_tokens=8192")
    'Avg generation throughput: 342.2 tokens/s, max_num_batched_tokens=8192'
"""

from __future__ import annotations

import re

# Whole key names only: `max_num_batched_tokens` and `tokens/s` must survive.
_KEY = (
    r"(?:api[_-]?keys?|hf[_-]token|hugging[_-]?face[_-]hub[_-]token|access[_-]token|auth[_-]token|"
    r"secret[_-]key|client[_-]secret|password|passwd|token|secret)"
)
_QUOTED = r"(?:'[^']*'|\"[^\"]*\")"
_LITERAL = r"(?:None|null|True|False|true|false)(?![\w-])"
_FLAG_RE = re.compile(rf"(?i)(?<![\w-])(--{_KEY})(=|\s+)(?!{_LITERAL})({_QUOTED}|[^\s'\"]+)")
_REPR_RE = re.compile(rf"(?i)(['\"]{_KEY}['\"]\s*:\s*)(\[[^\]]*\]|{_QUOTED})")
_ASSIGN_RE = re.compile(rf"(?i)(?<![\w-])({_KEY})=(?!{_LITERAL})({_QUOTED}|[^\s,;'\")]+)")
REDACTED = "<redacted>"


def _masked(value: str) -> str:
    """The replacement for one value, keeping its quotes or list brackets."""
    if value.startswith("["):
        return f"['{REDACTED}']" if value.strip("[] ") else value
    if value[:1] in ("'", '"'):
        return f"{value[0]}{REDACTED}{value[0]}" if len(value) > 2 else value
    return REDACTED


def redact(text: str) -> str:
    if "=" not in text and ":" not in text and "--" not in text:
        return text
    text = _FLAG_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}{_masked(m.group(3))}", text)
    text = _REPR_RE.sub(lambda m: f"{m.group(1)}{_masked(m.group(2))}", text)
    return _ASSIGN_RE.sub(lambda m: f"{m.group(1)}={_masked(m.group(2))}", text)
