"""What the person who pasted a log says happened, where the log cannot show it: a run that hangs.

    It works with NCCL_P2P_DISABLE=1 ... it hangs/freezes right after initialization.
        -> EngineFailure(kind="reported-hang", message=<the sentence>)
    I run "./build/test/single/all_reduce_test 10000000" ... However, it stalled after outputs the following text.
        -> EngineFailure(kind="reported-hang", ...)

A hang prints nothing: the log of a run that stopped making progress ends like a log that was cut, and only the
reporter's words say which it was. A line of prose (no log header) whose sentence says the run hangs, is stuck,
freezes, stalls or deadlocks counts; one whose words just before say it does not (`no longer hangs`, `without
hanging`), that it might (`if it hangs`, `to avoid a hang`) or that a change fixes one (a pull request's `fixes a hang
in ...`) does not, and neither does a question.
"""

from __future__ import annotations

import re
from functools import cache

# The words, in the forms a report uses (`hangs`, `hung`, `is stuck`, `froze`, `freezes`, `stalled`, `deadlocks`);
# not the nouns `deadlock` (`such a thing as deadlock`), `frozen` or `freezing` (`<frozen importlib._bootstrap>`,
# SGLang's `Freezing GC`), nor a compound (`deadlock-safe`).
_HANG = (
    r"(?<![\w.-])(?:hang(?:s|ing)?|hung|stuck|freezes|froze|stall(?:s|ed|ing)?|deadlock(?:s|ed)|"
    r"(?:becomes|became|is|was|goes|went) unresponsive)(?![\w-]|\.\w)"
)
# Words just before the hang word (within _WINDOW_WORDS) that make it no report of one: a negation, a condition or
# a possibility (`doesn't hang`, `no longer hangs`, `if it hangs`, `might stall`, vLLM's own `This typically happens
# when some processes are hanging`, which a terminal may have broken onto a line of its own).
_NOT_REPORTED = r"\b(?:not|no|never|without|if|when|whenever|whether|might|may|can|unless|until|longer)\b|n't\b"
_WINDOW_WORDS = 4
# A fix anywhere before it in the sentence: a change's description, not a report (`This PR resolves an issue where
# the engine hangs`, `to avoid a hang`, `a workaround for the stall`).
_FIXING = r"\b(?:fix\w*|resolv\w*|solv\w*|address\w*|prevent\w*|avoid\w*|workaround)\b"
# The reporter, not the run, is stuck: `I am stuck on how to ...`, `we're stuck with`
_PERSON = r"^(?:i|i'm|im|we|we're|i've|we've)$"
_BEING = frozenset({"am", "are", "was", "were", "got", "get", "feel", "felt", "been", "'m"})
_SENTENCE_END = r"[.!?;](?:\s|$)"
_WORD_MAX_CHARS = 2000  # a longer line is no sentence of a report (a prompt, a dump)
# what a model wrote, as an offline run prints it (`Prompt: '...', Generated text: '...'`): no report
_MODEL_TEXT = ("Prompt:", "Generated text:")
# a cheap test before any pattern
_STEMS = ("hang", "hung", "stuck", "froze", "freezes", "stall", "deadlock", "unresponsive")


# The same report in Chinese, Japanese and Korean pastes, which have no spaces between words: `卡住`, `卡死` (stuck,
# frozen), `无响应`/`没有响应`/`没反应` (no response), `死锁` (deadlock), `假死` (hung), `ハング`, `フリーズ`, `固まっ`
# (hung, frozen), `멈췄`/`멈춤`/`멈춰` (stopped). Not the bare `卡` (a GPU card: `显卡`, `多卡`).
_CJK_HANG = r"卡住|卡死|卡主|无响应|没有响应|没反应|死锁|假死|ハング|フリーズ|固まっ|멈췄|멈춤|멈춰"
# Just before it, a negation, a condition or a fix (`不会卡住`, `如果卡死`, `避免死锁`, `修复`): no report.
_CJK_NOT_REPORTED = r"(?:不|没|未|别|如果|若|假如|避免|防止|修复|解决|しない|しなく|않)\S{0,3}$"
_CJK_SENTENCE_END = r"[。！？；!?;]"
_CJK_QUESTION = ("？", "?", "吗", "か")


@cache
def _cjk_patterns() -> tuple[re.Pattern[str], ...]:
    return re.compile(_CJK_HANG), re.compile(_CJK_NOT_REPORTED), re.compile(_CJK_SENTENCE_END)


def _cjk_reported_hang(text: str) -> str | None:
    """`reported_hang` for a sentence in Chinese, Japanese or Korean."""
    hang_re, not_reported_re, end_re = _cjk_patterns()
    for m in hang_re.finditer(text):
        starts = [end.end() for end in end_re.finditer(text, 0, m.start())]
        start = starts[-1] if starts else 0
        end_match = end_re.search(text, m.end())
        end = end_match.end() if end_match is not None else len(text)
        sentence = text[start:end].strip()
        if sentence.rstrip("。！；!;").endswith(_CJK_QUESTION) or not_reported_re.search(text[start : m.start()]):
            continue
        return sentence
    return None


@cache
def _patterns() -> tuple[re.Pattern[str], ...]:
    """Compiled on first use: a log without prose never pays for them (docs/benchmarks.md, *Start-up*)."""
    return (
        re.compile(_HANG, re.IGNORECASE),
        re.compile(_NOT_REPORTED, re.IGNORECASE),
        re.compile(_SENTENCE_END),
        re.compile(_PERSON, re.IGNORECASE),
        re.compile(_FIXING, re.IGNORECASE),
    )


def reported_hang(text: str) -> str | None:
    """The sentence of a prose line that reports a hang, or None. A line that starts as a program's does (a process
    prefix `(EngineCore pid=7)`, a timestamp `[2026-08-27 03:52:38]`, `<frozen ...>`, an offline run's `Prompt:`)
    is no prose."""
    stripped = text.lstrip()
    if len(text) > _WORD_MAX_CHARS or stripped[:1] in ("(", "[", "<") or stripped.startswith(_MODEL_TEXT):
        return None
    if not text.isascii():
        found = _cjk_reported_hang(text)
        if found is not None:
            return found
    lowered = text.lower()
    if not any(stem in lowered for stem in _STEMS):
        return None
    hang_re, not_reported_re, sentence_end_re, person_re, fixing_re = _patterns()
    for m in hang_re.finditer(text):
        starts = [end.end() for end in sentence_end_re.finditer(text, 0, m.start())]
        start = starts[-1] if starts else 0
        end_match = sentence_end_re.search(text, m.end())
        end = end_match.start() + 1 if end_match is not None else len(text)
        sentence = text[start:end].strip()
        if sentence.endswith("?"):  # a question: `does it hang for you?`
            continue
        if fixing_re.search(text, start, m.start()) is not None:
            continue
        before = text[start : m.start()].split()[-_WINDOW_WORDS:]
        if not_reported_re.search(" ".join(before)) is not None:
            continue
        last = before[-1:]
        if last and (
            person_re.match(last[0]) or (len(before) > 1 and person_re.match(before[-2]) and last[0].lower() in _BEING)
        ):
            continue
        return sentence
    return None
