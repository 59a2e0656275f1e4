"""`python -m bench.drift --vllm 0.33.0 --sglang 0.5.23` (what `make drift` runs); no version: the newest.

Exit codes: 0 checked, 1 an advisory names a version that was never released, 2 bad relevance list or arguments,
3 a wheel could not be downloaded.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from . import report
from .check import check
from .extract import Extraction, extract_cached
from .formats import write_formats
from .relevance import REPO, RelevanceError, Relevant, load_relevance
from .warnings import ReviewedError, ReviewedList, census, load_reviewed, write_census
from .warnings import update_doc as update_census_doc
from .wheels import CACHE, WheelError, newest_version, wheel_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make drift", description=__doc__)
    parser.add_argument("--vllm", default="", help="vLLM versions, space or comma separated (default: newest)")
    parser.add_argument("--sglang", default="", help="SGLang versions, space or comma separated (default: newest)")
    parser.add_argument("--engines", default="vllm,sglang", help="which engines to check")
    parser.add_argument("--docs-only", action="store_true", help="only rebuild docs from the committed fixtures")
    args = parser.parse_args(argv)
    if args.docs_only:
        return _docs()
    try:
        relevance = load_relevance()
        reviewed = load_reviewed()
    except (RelevanceError, ReviewedError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    requested = {"vllm": args.vllm, "sglang": args.sglang}
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        if engine not in requested:
            print(f"error: unknown engine {engine!r} (vllm, sglang)", file=sys.stderr)
            return 2
        try:
            versions = requested[engine].replace(",", " ").split() or [newest_version(engine)]
            for version in versions:
                wheel = wheel_for(engine, version, CACHE)
                _check_one(engine, version, wheel, relevance.for_engine(engine), reviewed)
        except WheelError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 3
    return _docs()


def _docs() -> int:
    from .advisories import check_advisories

    problems = check_advisories()
    for problem in problems:
        print(f"advisory: {problem}", file=sys.stderr)
    if problems:
        return 1
    if report.update_doc():
        print(f"updated {report.DOC.relative_to(REPO)}")
    if update_census_doc(report.DOC):
        print(f"updated the warning census of {report.DOC.relative_to(REPO)}")
    print(f"wrote {write_formats().relative_to(REPO)}")
    return 0


def _check_one(engine: str, version: str, wheel: Path, entries: list[Relevant], reviewed: ReviewedList) -> None:
    extraction = extract_cached(wheel, engine, version)
    _census(extraction, reviewed)
    cases, absent = check(extraction, entries)
    earlier = report.last_committed(engine)
    same = [d for v, d in earlier if v == version]
    older = [d for v, d in earlier if report.version_key(v) < report.version_key(version)]
    previous = same[0] if same else (older[-1] if older else None)
    path = report.write_fixture(engine, version, cases, absent, len(extraction.messages), extraction.files)
    counts = Counter(c.status for c in cases)
    total = len(cases)
    print(f"{engine} {version}: {len(extraction.messages)} logger calls in {extraction.files} modules "
          f"({len(extraction.unparsable)} unparsable); {total} relevant cases")  # fmt: skip
    for status in ("right", "wrong-values", "wrong-event", "missed"):
        print(f"  {status:13} {counts.get(status, 0):4}")
    print(f"  coverage      {100 * counts.get('right', 0) / total:.1f}%" if total else "  coverage      -")
    per: dict[str, Counter[str]] = {}
    for c in cases:
        per.setdefault(c.cause, Counter())[c.status] += 1
    for cause in sorted(per):
        n = sum(per[cause].values())
        print(f"    {cause:36} {per[cause]['right']:3}/{n:<3}")
    for entry in absent:
        print(f"  not printed by {engine} {version}: {entry.key}")
    for change in report.changes(previous, cases, len(extraction.messages)):
        print(f"  {change}")
    print(f"  wrote {path.relative_to(REPO)}")


def _census(extraction: Extraction, reviewed: ReviewedList) -> None:
    """Every warning-level call of the release: event, vocabulary, irrelevant (with a reason), not understood."""
    result = census(extraction, reviewed)
    counts = result.counts()
    n = len(result.calls) or 1
    shares = ", ".join(f"{o} {counts.get(o, 0)} ({100 * counts.get(o, 0) / n:.0f}%)" for o in counts)
    print(f"{extraction.engine} {extraction.version}: {len(result.calls)} WARNING/ERROR/CRITICAL calls: {shares}")
    print(f"  wrote {write_census(result).relative_to(REPO)}")


if __name__ == "__main__":
    sys.exit(main())
