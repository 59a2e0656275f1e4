"""Which line types a line may be: the engines' literal keywords, one trie regex over them, and the index from a
keyword to the line types (grammars) that read it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from logdoctor.parse.failures import FAILURE_KEYWORDS
from logdoctor.parse.grammar import BuildFn, Grammar
from logdoctor.parse.warning_vocabulary import LEVELLESS_COMPANION, LEVELLESS_KEYWORDS, WARNING_KEYWORDS
from logdoctor.registry import REGISTRY, Registry, on_change
from logdoctor.sources.local import Along

# A line's line type is chosen by the keywords in its first KEYWORD_HEAD characters (docs/security.md, *Bounded*):
# engines print a message's words first, and what a prompt, a dump or a paste appends after them would otherwise be
# scanned for ~770 keywords. The line type chosen still reads the whole parsed line (a 14,000-character config dump).
KEYWORD_HEAD = 4096


# A line type's fast path as the feed loop calls it: its pattern's bound `match`, its builder.
WholeMatch = tuple[Callable[[str], "re.Match[str] | None"], BuildFn]


def candidate_keywords(grammars: Iterable[Grammar] | None = None) -> list[str]:
    """Every literal keyword (of every registered line type by default, with the failure reader's and the warning
    levels a warning line is read by), deduplicated, longest first: the collector's `grep -F` patterns."""
    if grammars is None:  # the registry's keywords, without importing the packages
        plain = set(REGISTRY.keywords()) | set(FAILURE_KEYWORDS + WARNING_KEYWORDS)
        levelless: tuple[str, ...] = LEVELLESS_KEYWORDS
    else:
        plain = {k for g in grammars for k in g.keywords}
        levelless = ()
    # A levelless warning word is read only after an SGLang date (`may_be_warning`): the prefilter's grep keeps it
    # only on a line with one, not on every request whose prompt says "slow".
    along = {Along(k, LEVELLESS_COMPANION) for k in levelless if k not in plain}
    return sorted(plain | along, key=lambda k: (-len(k), k))


def keyword_regex(keywords: Iterable[str]) -> str:
    """One regex for a set of literals, factored into a trie: `ab(?:c|d(?:ef)?)` for `abc`, `abd`, `abdef`.

    Python's `re` tries the branches of an alternation one by one at every position, so a flat
    `kw1|kw2|...` of 400 keywords costs 400 tests a character; the trie costs one test per distinct next
    character. It matches what the flat, longest-first alternation matched: at each position the longest
    keyword (every keyword matching at one position lies on one trie path, and deeper is tried first).
    """
    end = ""  # marks a node where a keyword ends (no real edge is the empty string)
    trie: dict[str, Any] = {}
    for keyword in keywords:
        node = trie
        for char in keyword:
            node = node.setdefault(char, {})
        node[end] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char != end]
        if not branches:
            return ""
        if len(branches) == 1 and end not in node:
            return branches[0]
        group = "(?:" + "|".join(branches) + ")"
        return group + "?" if end in node else group

    return build(trie)


class KeywordIndex:
    """The keywords a text holds, as the trie regex finds them, and for each keyword the grammars to try.

    The regex reports one keyword per stretch of text (the longest), so a keyword that contains another
    (`Custom allreduce is disabled` contains `allreduce is disabled`) also stands for the grammars of the one
    it contains.

    Building and compiling the trie regex of 700 keywords costs about 0.1 s, more than a short log takes to
    read (docs/benchmarks.md, *Start-up*), so the first texts are scanned with `str.find`, one keyword at a
    time, which finds the same keywords at the same places (the leftmost, and there the longest); the regex
    is compiled once those scans have covered `PLAIN_SCAN_BUDGET` characters."""

    PLAIN_SCAN_BUDGET = 64 * 1024  # characters scanned with str.find (plus a line's worth for each scan)
    _SCAN_OVERHEAD = 64

    def __init__(self, grammars: Iterable[Grammar] | None = None, registry: Registry | None = None) -> None:
        """Over `grammars`, or over the keywords of `registry`, whose packages are imported only when a text
        holds one of their keywords (a short vLLM log imports no other engine's line types)."""
        own: dict[str, list[Grammar]] = {}
        own_grammars = list(grammars or ())
        for g in own_grammars:
            for k in g.keywords:
                own.setdefault(k, []).append(g)
        self._registry = registry
        self._own = own
        keywords = registry.keywords() if registry is not None else own
        self.keywords = sorted(keywords, key=lambda k: (-len(k), k))  # candidate_keywords' order: longest first
        # The line types' fast paths for whole lines (Grammar.whole_line): over the registry, those of the packages
        # imported so far, added in place as a keyword imports one (a dense log's first line of a shape takes the
        # general path, which imports the package; the rest take the fast path). They match disjoint shapes.
        self.whole_lines: list[WholeMatch] = []
        self._with_whole_line: set[int] = set()
        self._add_whole_lines(own_grammars)
        self._expanded: dict[str, list[Grammar]] = {}
        self._regex: re.Pattern[str] | None = None
        self._budget = self.PLAIN_SCAN_BUDGET if "" not in keywords else 0

    def _grammars_of(self, keyword: str) -> list[Grammar]:
        if self._registry is None:
            return self._own.get(keyword, [])
        found = self._own.get(keyword)
        if found is None:
            found = self._own[keyword] = self._registry.keyword_grammars(keyword)
            self._add_whole_lines(found)
        return found

    def _add_whole_lines(self, grammars: Iterable[Grammar]) -> None:
        for g in grammars:
            whole = g.whole_line
            if whole is not None and id(g) not in self._with_whole_line:
                self._with_whole_line.add(id(g))
                self.whole_lines.append((whole.pattern.match, whole.build))

    def grammars_for(self, keyword: str) -> list[Grammar]:
        """The grammars of `keyword` and of every keyword it contains, in that order (built on first ask)."""
        expanded = self._expanded.get(keyword)
        if expanded is None:
            expanded = list(self._grammars_of(keyword))
            for inner in self.keywords:
                if inner != keyword and inner in keyword:
                    expanded.extend(g for g in self._grammars_of(inner) if g not in expanded)
            self._expanded[keyword] = expanded
        return expanded

    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(keyword_regex(self.keywords))
        return self._regex

    def _plain(self, text: str) -> bool:
        """Whether to scan `text` with str.find (and charge the budget), not with the regex."""
        if self._regex is not None:
            return False
        self._budget -= len(text) + self._SCAN_OVERHEAD
        return self._budget >= 0

    def _first(self, text: str, start: int) -> tuple[int, str] | None:
        best_at, best = -1, ""
        for keyword in self.keywords:  # longest first: at a tie of places, the first found is the longest
            end = len(text) if best_at < 0 else best_at + len(keyword) - 1  # only places before the best so far
            at = text.find(keyword, start, end)
            if at >= 0:
                best_at, best = at, keyword
                if at == start:
                    break
        return (best_at, best) if best_at >= 0 else None

    def search(self, text: str) -> str | None:
        """The first keyword in the head of `text` (the leftmost, the longest there), or None."""
        text = text[:KEYWORD_HEAD]
        if not self._plain(text):
            m = self.regex().search(text)
            return m.group(0) if m is not None else None
        found = self._first(text, 0)
        return found[1] if found is not None else None

    def findall(self, text: str) -> list[str]:
        """Every keyword in the head of `text`, left to right, each found after the end of the one before (regex
        finditer)."""
        text = text[:KEYWORD_HEAD]
        if not self._plain(text):
            return [m.group(0) for m in self.regex().finditer(text)]
        found: list[str] = []
        start = 0
        while (hit := self._first(text, start)) is not None:
            found.append(hit[1])
            start = hit[0] + len(hit[1])
        return found


_default_index: list[KeywordIndex] = []  # the registry's, built on first use and again when it changes


def registry_index() -> KeywordIndex:
    """The index over the registry (shared, rebuilt when the registry changes)."""
    if not _default_index:
        _default_index.append(KeywordIndex(registry=REGISTRY))
    return _default_index[0]


on_change(_default_index.clear)
