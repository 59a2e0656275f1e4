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


def _mask_value(m: re.Match[str]) -> str:
    value = m.group("val")
    if value in ("None", "null", "''", '""', MASK, f"'{MASK}'", f'"{MASK}"') or _NUMBER.fullmatch(value):
        return m.group(0)  # nothing secret: empty, masked already, or a count such as `#token: 57`
    if value[:1] == "[":
        return f"{m.group('key')}['{MASK}']"
    if value[:1] in ("'", '"'):
        return f"{m.group('key')}{value[0]}{MASK}{value[0]}"
    return f"{m.group('key')}{MASK}"


# Exact substrings (lower case) that any secret this module masks must contain. The regexes run only on the rare
# line that holds one (`tokens/s` in every stats line is not one of them).
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
_TOKEN_MARKER = re.compile(r"token['\"=: ]")  # the five `token` markers
_GITHUB_MARKER = re.compile(r"gh[pousr]_")  # the five `gh*_` markers


def _has_marker(low: str) -> bool:
    """Whether the lower-cased line contains one of `_CHEAP`: each multi-character `in` scans the line (~0.3 us), a
    one-character `in` is a memchr (~0.03 us), so markers with a character rare in log lines hide behind it."""
    return (
        "key" in low
        or "secret" in low
        or "sk-" in low
        or ("token" in low and _TOKEN_MARKER.search(low) is not None)
        or ("w" in low and "passw" in low)
        or ("b" in low and "bearer" in low)
        or ("_" in low and ("hf_" in low or _GITHUB_MARKER.search(low) is not None))
    )


def redact(text: str) -> str:
    """Mask secrets in one line; cheap when the line has no secret-like word."""
    if not _has_marker(text.lower()):
        return text
    text = _KEYED.sub(_mask_value, text)
    text = _FLAG.sub(_mask_value, text)
    # The last two patterns are case-sensitive and start with a `\b` that keeps `re` from scanning fast (~6 us a
    # line each): without their literal text they cannot match, and `sub` returns the very same string.
    if "Bearer" in text:
        text = _BEARER.sub(_mask_value, text)
    if "sk-" in text or "_" in text:
        text = _SHAPES.sub(MASK, text)
    return text
