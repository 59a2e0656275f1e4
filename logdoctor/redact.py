"""Secrets never leave logdoctor: API keys, tokens and passwords are masked as soon as a line is read.

    non-default args: {'api_key': 'sk-abc123', 'hf_token': 'hf_xyz'}  ->  {'api_key': '***', 'hf_token': '***'}
    --api-key sk-abc123                                             ->  --api-key ***
    Authorization: Bearer eyJhbGciOi...                             ->  Authorization: Bearer ***

Applied by the parse pipeline to every candidate line before any grammar sees it, so events, evidence,
golden files, JSON, Markdown and `--save` bundles are all clean.
"""

from __future__ import annotations

import re

MASK = "***"

# Names of secrets, not a secret (hence the noqa).
_SECRET_NAMES = (
    r"api[_-]?key|admin[_-]?api[_-]?key|hf[_-]?token|token|access[_-]?token|secret|secret[_-]?key|"  # noqa: S105
    r"password|passwd|ssl[_-]?keyfile[_-]?password|auth[_-]?token|huggingface[_-]?token|openai[_-]?api[_-]?key"
)
# 'api_key': 'x' / "api_key": "x" / api_key='x' / api_key=x
_KEYED = re.compile(
    rf"""(?P<key>(?P<q>['"]?)\b(?:{_SECRET_NAMES})(?P=q)\s*(?::|=)\s*)(?P<val>\[[^\]]*\]|'[^']*'|"[^"]*"|[^\s,}})\]]+)""",
    re.IGNORECASE,
)
# --api-key VALUE / --hf-token=VALUE
_FLAG = re.compile(rf"(?P<key>--(?:{_SECRET_NAMES})(?:\s+|=))(?P<val>[^\s'\"]+|'[^']*'|\"[^\"]*\")", re.IGNORECASE)
_BEARER = re.compile(r"(?P<key>\bBearer\s+)(?P<val>[A-Za-z0-9._~+/=-]{8,})")
# Well-known token shapes anywhere: OpenAI-style sk-..., Hugging Face hf_..., GitHub ghp_...
_SHAPES = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{12,}|hf_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,})\b")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?%?")
_TRIGGER = re.compile(r"key|token|secret|passw|bearer|sk-|hf_|gh[pousr]_", re.IGNORECASE)


def _mask_value(m: re.Match[str]) -> str:
    value = m.group("val")
    if value in ("None", "null", "''", '""', MASK, f"'{MASK}'", f'"{MASK}"') or _NUMBER.fullmatch(value):
        return m.group(0)  # nothing secret: empty, masked already, or a count such as `#token: 57`
    if value[:1] == "[":
        return f"{m.group('key')}['{MASK}']"
    if value[:1] in ("'", '"'):
        return f"{m.group('key')}{value[0]}{MASK}{value[0]}"
    return f"{m.group('key')}{MASK}"


# Exact substrings (lower case) that any secret this module masks must contain. Checking them with `in`
# costs about a microsecond, so the regexes run only on the rare line that could hold a secret
# (`tokens/s` in every stats line is not one of them).
_CHEAP = (
    "key",
    "token'",
    'token"',
    "token=",
    "token:",
    "token ",
    "secret",
    "passw",
    "bearer",
    "sk-",
    "hf_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
)


def redact(text: str) -> str:
    """Mask secrets in one line; cheap when the line has no secret-like word."""
    low = text.lower()
    if not any(marker in low for marker in _CHEAP) or not _TRIGGER.search(text):
        return text
    text = _KEYED.sub(_mask_value, text)
    text = _FLAG.sub(_mask_value, text)
    text = _BEARER.sub(_mask_value, text)
    return _SHAPES.sub(MASK, text)
