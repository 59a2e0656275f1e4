"""The redaction table: every form of secret the issue found leaking is masked, and what is not a secret stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.parse.pipeline import EventStream, parse_text
from logdoctor.redact import EXAMPLES, MASK, PATTERNS, Redactor, redact

ROWS = [(p.name, p.example, p.expected) for p in PATTERNS] + list(EXAMPLES)


@pytest.mark.parametrize(("name", "example", "expected"), ROWS, ids=[row[0] for row in ROWS])
def test_each_form_is_masked_as_the_table_says(name: str, example: str, expected: str) -> None:
    assert redact(example) == expected


def test_a_clean_line_is_returned_unchanged_and_not_copied() -> None:
    line = "(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Avg generation throughput: 18.2 tokens/s"
    assert redact(line) is line


def test_private_key_lines_are_masked_up_to_the_end_line() -> None:
    lines = [
        "loading TLS material:",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "QyNTUxOQAAACDPR1JjPmRjW0FyOa3tl7hdfzn7pj8zHmdKoGvaCjA4hQAAAJgQnS0lEJ0t",
        "-----END OPENSSH PRIVATE KEY-----",
        "INFO 05-08 16:25:09 [api_server.py:1] vLLM API server version 0.20.1",
    ]
    redactor = Redactor()
    out = [redactor(line) for line in lines]
    assert out[0] == lines[0]
    assert out[2] == MASK and out[3] == MASK
    assert out[4].endswith("-----END OPENSSH PRIVATE KEY-----")
    assert out[5] == lines[5]
    assert "b3BlbnNz" not in "\n".join(out)


def test_a_key_block_without_end_stops_at_the_first_line_that_is_not_base64() -> None:
    redactor = Redactor()
    assert redactor("-----BEGIN PRIVATE KEY-----") == "-----BEGIN PRIVATE KEY-----"
    assert redactor("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC") == MASK
    normal = "(APIServer pid=1) INFO 05-08 16:25:09 [api_server.py:1] vLLM API server version 0.20.1"
    assert redactor(normal) == normal


def test_every_line_read_is_redacted_not_only_candidates() -> None:
    # Neither line is a candidate of any grammar; both would show in `parse --show-unparsed` samples.
    text = "\n".join(
        [
            "(APIServer pid=1) INFO 05-08 16:25:09 [utils.py:1] non-default args: {'otlp_traces_endpoint': "
            "'https://otel:Pa55w0rd@collector:4317', 'api_key': 'abc'}",
            "export HUGGING_FACE_HUB_TOKEN=hf_abcdefghijklmnopqrstuvwxyz1234",
        ]
    )
    lines = list(enumerate(text.split("\n"), start=1))
    stream = EventStream("x.log", lines, keep_text=True)
    events = list(stream)
    dumped = " ".join(e.model_dump_json() for e in events) + repr(stream.stats) + repr(stream.texts)
    assert "Pa55w0rd" not in dumped and "abcdefghijklmnop" not in dumped
    assert all("Pa55w0rd" not in e.model_dump_json() for e in parse_text(text))


def test_docs_security_lists_every_row_of_the_table() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "security.md").read_text(encoding="utf-8")
    for name, _, _ in ROWS:
        assert f"| {name}" in doc, name


def test_the_pre_check_passes_every_line_the_regex_would_change() -> None:
    """The literal pre-check must be exact: a line it turns away is never looked at again."""
    from logdoctor.redact import _has_marker

    for name, example, expected in ROWS:
        if example != expected:
            assert _has_marker(example), name
    for prefix in ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA"):
        assert redact(f"x{prefix}IOSFODNN7EXAMPLEy") == f"x{MASK}y", prefix


GLUED = [
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "hf_abcdefghijklmnopqrstuvwxyz12345678",
    "xoxb-1234567890-abcdefghij",
    "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghijT3BlbkFJabcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghij",
    "sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-abcdefghijklmnopqrstuvwxyz012AA",
]


def test_tokens_glued_to_words_reach_no_output(tmp_path: Path) -> None:
    """Tokens glued to a neighbouring word, in a process prefix, an unparsed line and a stats line: `parse`
    (JSON lines, --show-unparsed), the detection notes and every diagnose format carry none of them."""
    from click.testing import CliRunner

    from logdoctor.app.cli import main

    story = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
    lines = story.read_text(encoding="utf-8").splitlines()
    stats = (
        "INFO 05-08 14:07:10 [loggers.py:271] Engine 000: Avg prompt throughput: 46.0 tokens/s, Avg generation "
        "throughput: 17.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.4%, Prefix cache hit "
        "rate: 21.4%"
    )
    lines[60:60] = [
        f"(APIServer pid=2961) INFO 05-08 14:02:11 [x.py:1] Avg prompt throughput: tokens{GLUED[0]} model{GLUED[2]}x",
        f"({GLUED[1]}EngineCore pid=2961) {stats}",
        f"(APIServer pid=2961) {stats} xyz{GLUED[3]} using{GLUED[4]} with{GLUED[5]}",
        f"(APIServer pid=2961) INFO 05-08 14:02:11 [x.py:1] Avg generation throughput: x{GLUED[3]} y{GLUED[5]}",
    ]
    log = tmp_path / "glued.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = [
        ["parse", str(log), "--format", "jsonl"],
        ["parse", str(log), "--show-unparsed"],
        ["parse", str(log), "--explain-detection"],
        *(["diagnose", str(log), "--format", fmt] for fmt in ("json", "markdown", "github", "html")),
    ]
    for args in runs:
        result = CliRunner().invoke(main, args)
        assert result.exit_code in (0, 1), (args, result.output)
        for secret in GLUED:
            assert secret not in result.output, (args, secret)


_LONG_ID = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_-" * 2
OPENAI_AND_ANTHROPIC = [
    "sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789",
    f"sk-proj-{_LONG_ID[:74]}T3BlbkFJ{_LONG_ID[:74]}",
    f"sk-svcacct-{_LONG_ID[:58]}T3BlbkFJ{_LONG_ID[:58]}",
    f"sk-admin-{_LONG_ID[:58]}T3BlbkFJ{_LONG_ID[:58]}",
    f"sk-ant-api03-{_LONG_ID[:93]}AA",
    f"sk-ant-admin01-{_LONG_ID[:93]}AA",
]


@pytest.mark.parametrize("key", OPENAI_AND_ANTHROPIC)
def test_openai_and_anthropic_keys_glued_on_both_sides_are_masked(key: str) -> None:
    assert redact(f"tokens{key}EngineCore pid=3") == f"tokens{MASK}EngineCore pid=3"
    assert redact(f"({key}) x") == f"({MASK}) x"


@pytest.mark.parametrize(
    "text",
    [
        "mounted disk-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "task-" + "a1" * 30,
        "task-proj-" + _LONG_ID[:100],
        "risk-admin-controller-deployment-7d9f8c6b5-x2x9z-abcdefghijklmnopqrstuvwxyz",
        "desk-ant-api03-" + _LONG_ID[:60],
        "ask-" + "0123456789" * 6,
    ],
)
def test_words_that_end_in_sk_before_a_long_id_are_not_keys(text: str) -> None:
    assert redact(text) == text
