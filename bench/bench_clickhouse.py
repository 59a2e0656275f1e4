"""The ClickHouse keyword pushdown on the local 18.16 server: what each form of the filter costs (docs/sources.md).

Starts the test server of tests/sources/clickhouse_lab.py (127.0.0.1, a temporary directory), loads COPIES copies
of one real vLLM log (fixtures/logs/realworld/vllm-r021.log) as rows, and times, best of --runs:

    count      SELECT count() over the table (the deployment count query's floor)
    position   the reader's filter on a server without multiSearchAny: OR-ed position(Body, kw) > 0
    match      one match(Body, 'kw1|kw2|...') (re2), the form logdoctor does not use (--match; slow on 18.16)
    tiny       the position filter on a one-row table: the fixed cost of analysing the long expression

    .venv/bin/python bench/bench_clickhouse.py --copies 100 --runs 2
    .venv/bin/python bench/bench_clickhouse.py --copies 10 --runs 1 --match
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from logdoctor.parse.keywords import candidate_keywords  # noqa: E402
from logdoctor.sources.clickhouse import keyword_condition, quote_string  # noqa: E402
from tests.sources.clickhouse_lab import ClickHouseLab, start_clickhouse, tsv  # noqa: E402

LOG = ROOT / "fixtures" / "logs" / "realworld" / "vllm-r021.log"


def best(lab: ClickHouseLab, sql: str, runs: int) -> tuple[float, str]:
    times: list[float] = []
    answer = ""
    for _ in range(runs):
        start = time.perf_counter()
        answer = lab.query(sql, timeout=3600).strip()
        times.append(time.perf_counter() - start)
    return min(times), answer


def re2_escape(text: str) -> str:
    return "".join("\\" + c if c in "\\.+*?()|[]{}^$" else ("\\t" if c == "\t" else c) for c in text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--match", action="store_true", help="also time the match() form")
    args = parser.parse_args()

    keywords = candidate_keywords()
    lines = LOG.read_text(encoding="utf-8", errors="replace").splitlines()
    rows = "".join(f"2026-12-01 10:00:00\t{tsv(line)}\n" for line in lines).encode()
    position = keyword_condition("Body", keywords, multi_search=False)
    pieces = sorted({p for k in keywords for p in k.split("\n") if p})
    match = f"match(Body, {quote_string('|'.join(re2_escape(p) for p in pieces))})"
    for lab in start_clickhouse():
        version = lab.query("SELECT version()").strip()
        lab.query("CREATE TABLE big (Timestamp DateTime, Body String) ENGINE = MergeTree ORDER BY Timestamp")
        lab.query("CREATE TABLE tiny (Timestamp DateTime, Body String) ENGINE = MergeTree ORDER BY Timestamp")
        lab.query("INSERT INTO tiny FORMAT TabSeparated", b"2026-12-01 10:00:00\tSpecDecoding metrics: x\n")
        for _ in range(args.copies):
            lab.query("INSERT INTO big FORMAT TabSeparated", rows)
        size = lab.query("SELECT sum(length(Body)) FROM big").strip()
        print(f"ClickHouse {version}; {args.copies} copies of {LOG.name}: {size} bytes of Body; {len(pieces)} keywords")
        results = {
            "count": best(lab, "SELECT count() FROM big", args.runs),
            "position": best(lab, f"SELECT count() FROM big WHERE {position}", args.runs),  # noqa: S608
            "tiny": best(lab, f"SELECT count() FROM tiny WHERE {position}", args.runs),  # noqa: S608
        }
        if args.match:
            results["match"] = best(lab, f"SELECT count() FROM big WHERE {match}", args.runs)  # noqa: S608
        for name, (seconds, answer) in results.items():
            print(f"  {name:9} {seconds:8.2f} s  rows {answer}")
        if "match" in results:
            print(f"  match / position: {results['match'][0] / results['position'][0]:.1f}x")


if __name__ == "__main__":
    main()
