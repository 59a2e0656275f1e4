"""The keyword trie of the parse pipeline selects what the flat longest-first alternation selected; the cheap tests
in front of the keyword regex and of redaction answer what they answered."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from logdoctor import redact
from logdoctor.parse.pipeline import EventStream, candidate_keywords, keyword_regex


def flat(keywords: list[str]) -> re.Pattern[str]:
    """The pipeline's former pattern: every keyword escaped, longest first."""
    ordered = sorted(set(keywords), key=lambda k: (-len(k), k))
    return re.compile("|".join(re.escape(k) for k in ordered))


def matches(pattern: re.Pattern[str], text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(0)) for m in pattern.finditer(text)]


def test_trie_shape() -> None:
    assert keyword_regex(["abc", "abd", "abdef"]) == "ab(?:c|d(?:ef)?)"


def test_longest_keyword_wins_at_a_position() -> None:
    trie = re.compile(keyword_regex(["KV cache", "KV cache usage:", "cache"]))
    assert matches(trie, "GPU KV cache usage: 7.4%, KV cache size, cache") == [
        (4, "KV cache usage:"),
        (26, "KV cache"),
        (41, "cache"),
    ]


def test_special_characters_are_literal() -> None:
    keywords = ["LLM engine (v", "[rank0]:[E", "a.b", "x|y", "tab\there", "█  model"]
    trie = re.compile(keyword_regex(keywords))
    text = "INFO LLM engine (v0.20.1) [rank0]:[E axb a.b x|y tab\there █  model"
    assert matches(trie, text) == matches(flat(keywords), text)
    assert {m for _, m in matches(trie, text)} == set(keywords)


def test_real_keywords_on_real_lines() -> None:
    keywords = candidate_keywords()
    trie, reference = re.compile(keyword_regex(keywords)), flat(keywords)
    lines = [
        "(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 2.5 tokens/s, "
        "Avg generation throughput: 74.7 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 7.4%, "
        "Prefix cache hit rate: 0.0%",
        "(APIServer pid=1) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.87, "
        "Accepted: 489 tokens, Drafted: 1572 tokens",
        "host:531:1762 [0] NCCL INFO Channel 00 : 0[4] -> 1[5] via SHM/direct/direct",
        '(APIServer pid=1) INFO:     127.0.0.1:37582 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    ]
    for line in lines:
        assert matches(trie, line) == matches(reference, line)


_ALPHABET = "abcAB .:(|[█\t"


@given(
    keywords=st.lists(st.text(alphabet=_ALPHABET, min_size=1, max_size=6), min_size=1, max_size=12),
    text=st.text(alphabet=_ALPHABET, max_size=80),
)
def test_trie_equals_flat_alternation(keywords: list[str], text: str) -> None:
    trie, reference = re.compile(keyword_regex(keywords)), flat(keywords)
    assert matches(trie, text) == matches(reference, text)
    assert (trie.search(text) is None) == (reference.search(text) is None)


# --- the pipeline's cheap tests answer what the regexes answer -----------------------------------

_KEYWORD_PIECES = ["Avg prompt throughput:", "SpecDecoding metrics:", "NCCL INFO", "Avg prompt", " metrics:", "x", " "]


@settings(deadline=None)  # a per-example deadline is a timing assertion; it fails on a loaded 2-CPU machine
@given(st.lists(st.lists(st.sampled_from(_KEYWORD_PIECES), max_size=4).map("".join), max_size=30))
def test_recent_keywords_select_what_the_regex_selects(texts: list[str]) -> None:
    stream = EventStream("t", [])
    pattern = re.compile(keyword_regex(candidate_keywords()))
    for text in texts:
        assert stream._is_candidate(text) == (pattern.search(text) is not None)


def test_redaction_pretest_equals_the_marker_list() -> None:
    texts = [marker for marker in redact._CHEAP] + [marker.upper() for marker in redact._CHEAP]
    texts += ["tokens/s", "token/s", "api-key", "the_key", "gh_x", "ghx_", "hf-", "sk_", "bearer", "passwd", "secrets"]
    texts += ["Avg generation throughput: 74.7 tokens/s, Running: 1 reqs", "#token: 57", "token", "xtoken=y"]
    for text in texts:
        low = text.lower()
        assert redact._has_marker(low) == any(marker in low for marker in redact._CHEAP), text


@given(st.text(alphabet="keytoknsrcpawbhfg_-'\"=: ", max_size=12))
def test_redaction_pretest_on_random_text(text: str) -> None:
    assert redact._has_marker(text) == any(marker in text for marker in redact._CHEAP)
