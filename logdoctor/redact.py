"""Secrets never leave logdoctor: API keys, tokens and passwords are masked as soon as a line is read.

    non-default args: {'api_key': 'sk-abc123', 'hf_token': 'hf_xyz'}  ->  {'api_key': '***', 'hf_token': '***'}
    otlp_traces_endpoint=https://otel:s3cret@collector:4317            ->  https://otel:***@collector:4317
    --api-key sk-abc123                                                 ->  --api-key ***

The parse pipeline runs every line it reads through a `Redactor` (one a source, for the lines of a
PEM private key) before any envelope or grammar sees it, so events, evidence, golden files, JSON,
Markdown and error messages are all clean. `PATTERNS` is the table of every form masked, each with an
example and its expected masking: `tests/test_redact.py` checks each row and docs/security.md lists them.

Cost: a line without any of `_MARKERS` (nearly every line of a serving log) costs one `lower()` and a few
substring tests; only the rare line holding one is run through the combined regex.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MASK = "***"


@dataclass(frozen=True)
class Pattern:
    """One form of secret: `regex` has one group named `v`, the secret part, which is masked."""

    name: str
    regex: str
    example: str
    expected: str


# Names that end a secret's key: `VLLM_API_KEY`, `aws_secret_access_key`, `hf_token`, `ssl_keyfile_password`.
# A name must *end* with one of them (`tokenizer`, `max_num_batched_tokens` and `token usage` are not secrets).
_KEY_END = (
    r"api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|secret|token|password|passwd|passphrase|pwd"
    r"|credentials?"
)
# A name starts where a run of name characters starts (not after each `.` inside one: a line of `a.b.c...` would
# be scanned once from every dot, a cost that grows with the square of the line).
_KEY_NAME = rf"(?<![\w.-])[\w.-]*?(?:{_KEY_END})(?![\w])"
# A value: an escaped-JSON string (`\"x\"`), a quoted string (escapes and the other quote inside), a list, or a
# bare word (quotes inside it, but not at its end: `api_key=pa"ss` is masked whole, `"k=v"` keeps its quote).
_VALUE = (
    r"\\\"(?:[^\"\\]|\\[^\"])*\\\""
    r"|\"(?:[^\"\\]|\\.)*\""
    r"|'(?:[^'\\]|\\.)*'"
    r"|\[[^\]]*\]"
    # a bare word, but not the `{` that opens a JSON object (`"time_to_first_token": {` is a metric block)
    r"|(?!\{(?:\s|\"|$))[^\s,;}\])'\"\\]+(?:['\"\\]+[^\s,;}\])'\"\\]+)*"
)

PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        "pem-private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?P<v>.+?)(?=-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)",
        r'key="-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"',
        r'key="-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----"',
    ),
    Pattern(
        "url-password",
        r"(?<![\w.+-])[a-z][a-z0-9+.-]*://[^\s/:@'\"]*:(?P<v>[^\s/@'\"]+)@",
        "otlp_traces_endpoint=https://otel:Pa55w0rd@collector:4317",
        "otlp_traces_endpoint=https://otel:***@collector:4317",
    ),
    Pattern(
        "aws-access-key-id",
        r"(?-i:\b(?P<v>(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16})\b)",
        "using key AKIAIOSFODNN7EXAMPLE for s3",
        "using key *** for s3",
    ),
    Pattern(
        "authorization-header",
        r"authorization\\?['\"]?\s*[:=]\s*\\?['\"]?(?:(?:basic|bearer|token|digest)\s+)?(?P<v>[^\s'\",}\\]+)",
        "Authorization: Basic dXNlcjpwYXNz",
        "Authorization: Basic ***",
    ),
    Pattern(
        "bearer-token",
        r"bearer\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})",
        "curl -H 'authorization-x: bearer eyJhbGciOiJIUzI1NiJ9'",
        "curl -H 'authorization-x: bearer ***'",
    ),
    Pattern(
        "secret-flag",
        r"--(?:[a-z0-9]+[_-])*(?:api[_-]key|token|secret|secret[_-]key|access[_-]key|password|passwd)"
        r"(?:\s+|=|['\"],\s*['\"])(?P<v>'[^']*'|\"[^\"]*\"|[^\s'\",\]]+)",
        "vllm serve Qwen/Qwen3-8B --api-key sk-local-1234 --port 8000",
        "vllm serve Qwen/Qwen3-8B --api-key *** --port 8000",
    ),
    Pattern(
        "keyed-secret",
        rf"(?P<k>{_KEY_NAME})\\?['\"]?\s*[:=]\s*(?P<v>{_VALUE})",
        "non-default args: {'api_key': 'abc', 'hf_token': 'xyz'}",
        "non-default args: {'api_key': '***', 'hf_token': '***'}",
    ),
    Pattern(
        # A token with a prefix no word or identifier holds, masked wherever it starts: glued to the word before it
        # (a cut and spliced line: `tokensghp_...`, `(AKIA...EngineCore pid=1)`) as well as standing alone. The
        # lengths are the issuers' own (GitHub 36 after `ghp_`, Hugging Face 34 after `hf_`, AWS 16 after the
        # prefix), so an identifier that merely contains `hf_` or `ghs_` is not one.
        "glued-token-shape",
        r"(?P<v>(?-i:(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16})"
        r"|(?-i:eyJ[A-Za-z0-9_-]{8,400}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,})"  # bounded: each `eyJ` scans once
        r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,}|hf_[A-Za-z0-9]{30,}|xox[abprse]-[A-Za-z0-9-]{10,}"
        r"|glpat-[A-Za-z0-9_-]{20,}"
        # OpenAI and Anthropic keys in their issuers' shapes (OpenAI's hold `T3BlbkFJ`, base64 of `OpenAI`;
        # Anthropic's are 93 characters and `AA` after the kind): a word that merely ends in `sk-` (`task-`,
        # `disk-` and a hex id) is none of them
        r"|(?-i:sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ"
        r"(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})"
        r"|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|sk-ant-(?:api|admin|oat|ort)[0-9]{2}-[A-Za-z0-9_-]{93}AA))",
        "Decode batch tokensghp_abcdefghijklmnopqrstuvwxyz0123456789 x",
        "Decode batch tokens*** x",
    ),
    Pattern(
        "token-shape",
        r"(?<![\w-])(?P<v>sk-(?:ant-|proj-)?[A-Za-z0-9_-]{12,}|hf_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}"
        r"|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{20,})",
        "downloading with hf_abcdefghijklmnopqrstuvwxyz1234",
        "downloading with ***",
    ),
)

# More rows of the table: each is a form the issue found leaking (tests check every one).
EXAMPLES: tuple[tuple[str, str, str], ...] = (
    ("aws-secret-env", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key=***"),
    ("aws-session-env", "AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEJr//////////wEaCXVz", "AWS_SESSION_TOKEN=***"),
    ("vllm-api-key-env", "VLLM_API_KEY=local-secret-1", "VLLM_API_KEY=***"),
    ("hf-hub-env", "HUGGING_FACE_HUB_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234", "HUGGING_FACE_HUB_TOKEN=***"),
    ("hf-token-env", "env HF_TOKEN=abc123xyz python -m vllm", "env HF_TOKEN=*** python -m vllm"),
    ("anthropic-env", "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnop", "ANTHROPIC_API_KEY=***"),
    ("openai-env", "export OPENAI_API_KEY='sk-proj-abcdefghijklmnop'", "export OPENAI_API_KEY='***'"),
    ("wandb-env", "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "WANDB_API_KEY=***"),
    ("lowercase-bearer", "header authorization: bearer abcdefgh12345678", "header authorization: bearer ***"),
    # glued to the word before it (a log line cut and spliced: the fuzzer found `Decode batchAuthorization: ...`)
    ("glued-authorization", "Decode batchAuthorization: Basic dXNlcjpwYXNz", "Decode batchAuthorization: Basic ***"),
    ("glued-bearer", "Decode batchBearer abcdefgh12345678", "Decode batchBearer ***"),
    ("github-pat", "token github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "token ***"),
    ("github-classic", "cloning with ghp_abcdefghijklmnopqrstuvwxyz0123456789", "cloning with ***"),
    (
        "escaped-json",
        r'payload="{\"api_key\": \"abc def\", \"model\": \"m\"}"',
        r'payload="{\"api_key\": \"***\", \"model\": \"m\"}"',
    ),
    ("quote-in-value", "password='pa\"ss wo\\'rd' next", "password='***' next"),
    ("quote-in-bare-value", 'password=pa"ss next', "password=*** next"),
    (
        "cli-list",
        "argv: ['vllm', 'serve', '--api-key', 'abc123', '--port']",
        "argv: ['vllm', 'serve', '--api-key', '***', '--port']",
    ),
    ("hf-token-flag", "--hf-token=hf_abcdefghijklmnopqrstuvwxyz", "--hf-token=***"),
    ("redis-url", "kv_transfer: redis://:hunter2@10.0.0.5:6379/0", "kv_transfer: redis://:***@10.0.0.5:6379/0"),
    # glued to the word before it: masked wherever the token starts (the prefix is the issuer's, the length too)
    ("glued-aws-key", "(AKIAIOSFODNN7EXAMPLEEngineCore pid=3) INFO", "(***EngineCore pid=3) INFO"),
    ("glued-hugging-face", "modelhf_abcdefghijklmnopqrstuvwxyz12345678 x", "model*** x"),
    ("glued-slack", "handlerxoxb-1234567890-abcdefghij x", "handler*** x"),
    ("glued-openai", "usingsk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789 x", "using*** x"),
    (
        "glued-openai-project",
        "modelsk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghijT3BlbkFJabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghijEngineCore",
        "model***EngineCore",
    ),
    (
        "glued-anthropic",
        "withsk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghijklmnopqrstuvwxyz012AA x",
        "with*** x",
    ),
    ("glued-github-pat", "patgithub_pat_11ABCDEFG0123456789_abcdefghijklmnop", "pat***"),
    (
        "glued-into-a-count-key",  # a fuzz input: a token pasted into the key of an SGLang batch line's count
        "#new-token: 6, #ghp_abcdefghijklmnopqrstuvwxyz0123456789cached-token: 0, token usage: 0.00",
        "#new-token: 6, #***-token: 0, token usage: 0.00",
    ),
    (
        "jwt",
        "session:eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w x",
        "session:*** x",
    ),
    ("identifiers-kept", "use_hf_transfer=True task-abcdefghijklmnop", "use_hf_transfer=True task-abcdefghijklmnop"),
    # words that end in `sk-` before a long id are not OpenAI keys (only the issuers' shapes are masked glued)
    (
        "sk-words-kept",
        "mounted disk-0123456789abcdef0123456789abcdef0123456789abcdef task-proj-abcdefghijklmnopqrstuvwxyz0123",
        "mounted disk-0123456789abcdef0123456789abcdef0123456789abcdef task-proj-abcdefghijklmnopqrstuvwxyz0123",
    ),
    (
        "token-count-kept",
        "[TP0] Decode batch, #running-req: 4, #token: 57, token usage: 0.01",
        "[TP0] Decode batch, #running-req: 4, #token: 57, token usage: 0.01",
    ),
    (
        "none-kept",
        "non-default args: {'api_key': None, 'tokenizer': '/models/x'}",
        "non-default args: {'api_key': None, 'tokenizer': '/models/x'}",
    ),
    ("tokens-kept", "max_num_batched_tokens=8192, max_tokens: 16", "max_num_batched_tokens=8192, max_tokens: 16"),
    (
        "json-object-value-kept",
        '  "time_to_first_token": {"unit": "ms", "avg": 12.5},',
        '  "time_to_first_token": {"unit": "ms", "avg": 12.5},',
    ),
    ("json-object-open-kept", '  "time_to_first_token": {', '  "time_to_first_token": {'),
    ("json-secret-in-object", '"server_info": {"api_key": "sk-local-1"}', '"server_info": {"api_key": "***"}'),
)

_COMBINED = re.compile(
    "|".join(
        f"(?:{p.regex.replace('(?P<v>', f'(?P<v{i}>').replace('(?P<k>', f'(?P<k{i}>')})" for i, p in enumerate(PATTERNS)
    ),
    re.IGNORECASE,
)
_KEEP = frozenset(("none", "null", "true", "false", "''", '""', MASK, f"'{MASK}'", f'"{MASK}"', r"\"\"", r"\"***\""))
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?%?")
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_PEM_BODY = re.compile(r"\s*(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: .*)?\s*")  # base64 or a `Proc-Type: ...` header
_PEM_MAX_LINES = 200
# A `token` that can end a secret's key or flag: `hf_token: x`, `"token"="x"`, `--hf-token x`. A count
# (`#token: 57,` on every SGLang batch line, `token usage: 0.72`) is not one: the keyed form keeps a number after a
# `token` key, so the pre-check turns such a line away (the `(?!\s)` stops `\s*` giving back the space that would
# let the number test start before the number).
_TOKEN_MARKER = re.compile(
    r"token\\?['\"]?\s*[:=]\s*(?!\s)(?![-+]?\d+(?:\.\d+)?%?(?:[\s,;}\])]|$))"
    r"|--[\w-]*token(?:\s|=|['\"],)"
)
_GITHUB_MARKER = re.compile(r"gh[pousr]_|github_pat_")
# A key the keyed form keeps (a count, `None`) may itself hold a token glued into it (`#ghp_...cached-token: 0`):
# the keyed match starts where the token does and wins the alternation, so the kept text is searched again.
_GLUED = re.compile(next(p.regex for p in PATTERNS if p.name == "glued-token-shape"), re.IGNORECASE)
_AWS_MARKER = re.compile(r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)")


def _mask(m: re.Match[str]) -> str:
    group = m.lastgroup or ""  # the value group closes last in every pattern: `v<index of the pattern>`
    value = m.group(group)
    index = int(group[1:])
    if PATTERNS[index].name == "keyed-secret":
        key = m.group(f"k{index}")
        if value.lower() in _KEEP:
            return _GLUED.sub(MASK, m.group(0))  # nothing secret in the value: empty, masked already, None
        if _NUMBER.fullmatch(value) and key.lower().endswith("token"):
            return _GLUED.sub(MASK, m.group(0))  # a count (`#token: 57`), not a secret
    if value[:2] == '\\"':
        masked = f'\\"{MASK}\\"'
    elif value[:1] == "[":
        masked = f"['{MASK}']"
    elif value[:1] in ("'", '"'):
        masked = f"{value[0]}{MASK}{value[0]}"
    else:
        masked = MASK
    start, end = m.start(group) - m.start(), m.end(group) - m.start()
    text = m.group(0)
    return text[:start] + masked + text[end:]


def _has_marker(text: str) -> bool:
    """Whether the line holds a literal that every form in `PATTERNS` contains: the cheap pre-check.

    One-character tests are a memchr (~0.03 us); multi-character ones scan the line (~0.3 us), so the
    markers whose first letters are rare in log lines hide behind a one-character test."""
    low = text.lower()
    return (
        "key" in low
        or "secret" in low
        or "pass" in low
        or ("token" in low and _TOKEN_MARKER.search(low) is not None)
        or ("@" in low and "://" in low)
        or "sk-" in low
        or ("_" in low and ("hf_" in low or _GITHUB_MARKER.search(low) is not None))
        or ("b" in low and "bearer" in low)
        or ("z" in low and "authorization" in low)
        or ("pwd" in low or "credential" in low or "xox" in low or "glpat-" in low or "-----begin" in low)
        or ("A" in text and _AWS_MARKER.search(text) is not None)  # AWS key ids are upper case, as is the regex
        or "eyJ" in text  # a JWT's header, base64 of `{"`
    )


def _masked(text: str) -> str:
    masked = _COMBINED.sub(_mask, text)
    return text if masked == text else masked


def redact(text: str) -> str:
    """Mask secrets in one line; returns `text` itself (the same object) when nothing was masked."""
    return _masked(text) if _has_marker(text) else text


class Redactor:
    """`redact` for the lines of one source, in order: also masks the body lines of a PEM private key
    (`-----BEGIN ... PRIVATE KEY-----` up to its END line, or the first line that is not base64)."""

    def __init__(self) -> None:
        self._in_key = 0  # lines of a private key masked so far; 0 outside one

    def carried(self) -> int:
        """The state carried to the next line (lines of a private key masked so far): a parse split in ranges
        compares it at each cut (logdoctor.pipeline.parallel)."""
        return self._in_key

    def __call__(self, text: str) -> str:
        if self._in_key:
            end = _PEM_END.search(text)
            if end is not None:
                self._in_key = 0
                return MASK + text[end.start() :]
            if self._in_key < _PEM_MAX_LINES and _PEM_BODY.fullmatch(text):
                self._in_key += 1
                return MASK if text.strip() else text
            self._in_key = 0
        if not _has_marker(text):
            return text
        if "-----" in text:
            begin = _PEM_BEGIN.search(text)
            if begin is not None and _PEM_END.search(text, begin.end()) is None:
                self._in_key = 1
        return _masked(text)
