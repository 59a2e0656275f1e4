"""The keyword trie of the parse pipeline selects what the flat longest-first alternation selected; the cheap tests
in front of the keyword regex and of redaction answer what they answered."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from logdoctor import redact
from logdoctor.parse.grammar import Grammar
from logdoctor.parse.keywords import KeywordIndex, candidate_keywords, keyword_regex
from logdoctor.parse.pipeline import EventStream
from logdoctor.registry import REGISTRY


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


@settings(deadline=None)  # the first example builds the registry's keyword index
@given(st.lists(st.lists(st.sampled_from(_KEYWORD_PIECES), max_size=4).map("".join), max_size=30))
def test_recent_keywords_select_what_the_regex_selects(texts: list[str]) -> None:
    stream = EventStream("t", [])
    pattern = re.compile(keyword_regex(candidate_keywords()))
    for text in texts:
        assert stream._is_candidate(text) == (pattern.search(text) is not None)


def test_redaction_pretest_passes_every_secret_form() -> None:
    examples = [p.example for p in redact.PATTERNS] + [example for _, example, _ in redact.EXAMPLES]
    for text in examples + [text.upper() for text in examples]:
        if redact._masked(text) != text:
            assert redact._has_marker(text), text


@given(st.text(alphabet="keytoknsrcpawbhfgizAKI_-'\"=: @/:", max_size=24))
def test_redaction_pretest_never_hides_a_secret(text: str) -> None:
    # The pre-check may let a clean line through to the regex, never keep a secret from it.
    if redact._masked(text) != text:
        assert redact._has_marker(text), text


_COUNT_PIECES = ("token", "Token", "57", ".5", "--", *"#:= %,;'\"\\x-}]")


@given(st.lists(st.sampled_from(_COUNT_PIECES), max_size=12).map("".join))
def test_redaction_pretest_never_hides_a_secret_after_a_count(text: str) -> None:
    # `#token: 57` is turned away as a count; anything the keyed form would mask after a `token` key is not.
    if redact._masked(text) != text:
        assert redact._has_marker(text), text


def test_redaction_pretest_turns_batch_counts_away() -> None:
    line = "[TP0] Decode batch, #running-req: 4, #token: 57, token usage: 0.01, #new-token: 9%, "
    assert not redact._has_marker(line)
    for secret in ("#token: 57x", "hf_token: 5.1.2", "token='57'", "--hf-token 57", "token = -4a"):
        assert redact._has_marker(line + secret), secret


# --- the keyword index scans with str.find until compiling the regex pays: the same answers either way -----


def _plain_and_regex(keywords: list[str]) -> tuple[KeywordIndex, KeywordIndex]:
    grammars = [Grammar(f"g{i}", "vllm", (k,), lambda line, ctx: None) for i, k in enumerate(keywords)]
    plain, compiled = KeywordIndex(grammars), KeywordIndex(grammars)
    plain.PLAIN_SCAN_BUDGET = 10**12
    plain._budget = 10**12
    compiled.regex()
    return plain, compiled


@given(
    keywords=st.lists(st.text(alphabet=_ALPHABET, min_size=1, max_size=6), min_size=1, max_size=12),
    text=st.text(alphabet=_ALPHABET, max_size=80),
)
def test_plain_scan_finds_what_the_regex_finds(keywords: list[str], text: str) -> None:
    plain, compiled = _plain_and_regex(keywords)
    assert plain.findall(text) == compiled.findall(text)
    assert plain.search(text) == compiled.search(text)
    assert plain._regex is None  # it really scanned with str.find


def test_plain_scan_on_real_keywords_and_the_switch_to_the_regex() -> None:
    index = KeywordIndex(REGISTRY.grammars())
    reference = re.compile(keyword_regex(candidate_keywords()))
    line = (
        "(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 2.5 tokens/s, "
        "GPU KV cache usage: 7.4%, Prefix cache hit rate: 0.0% host:531:1762 [0] NCCL INFO Channel 00"
    )
    expected = [m.group(0) for m in reference.finditer(line)]
    assert index.findall(line) == expected and index._regex is None
    while index._regex is None:  # the budget runs out: from then on the regex answers, the same
        assert index.findall(line) == expected
    assert index.findall(line) == expected
    assert index.grammars_for(expected[0]) and index.search("nothing here") is None
