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
