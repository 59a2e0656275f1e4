"""Committed fixtures, the coverage tables and the worklist: written by `make drift`, read by the tests.

fixtures/drift/<engine>-<version>.yaml holds one release's cases; docs/drift.md carries, between
`<!-- drift:begin -->` and `<!-- drift:end -->`, the tables built from every committed fixture.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from .check import Case
from .classify import STATUSES
from .relevance import REPO, Relevant

FIXTURES = REPO / "fixtures" / "drift"
DOC = REPO / "docs" / "drift.md"
BEGIN, END = "<!-- drift:begin -->", "<!-- drift:end -->"


def fixture_path(engine: str, version: str) -> Path:
    return FIXTURES / f"{engine}-{version}.yaml"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)[:4])


def committed(engine: str) -> list[tuple[str, dict[str, Any]]]:
    """Every committed fixture of an engine, oldest release first."""
    out = []
    for path in FIXTURES.glob(f"{engine}-*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.append((str(data["version"]), data))
    return sorted(out, key=lambda vd: version_key(vd[0]))


def last_committed(engine: str) -> list[tuple[str, dict[str, Any]]]:
    """The fixtures of an engine as git's HEAD has them (what "since the last committed check" compares with);
    the working tree's when this is not a git checkout."""
    rel = FIXTURES.relative_to(REPO).as_posix()
    listing = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "--name-only", "HEAD", rel + "/"],
        capture_output=True,
        text=True,
        check=False,
    )
    if listing.returncode != 0:
        return committed(engine)
    out = []
    for name in listing.stdout.split():
        if not Path(name).name.startswith(engine + "-"):
            continue
        shown = subprocess.run(
            ["git", "-C", str(REPO), "show", f"HEAD:{name}"], capture_output=True, text=True, check=False
        )
        if shown.returncode == 0:
            data = yaml.safe_load(shown.stdout)
            out.append((str(data["version"]), data))
    return sorted(out, key=lambda vd: version_key(vd[0]))


def write_fixture(
    engine: str, version: str, cases: list[Case], absent: list[Relevant], extracted: int, files: int
) -> Path:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    counts = Counter(c.status for c in cases)
    data = {
        "engine": engine,
        "version": version,
        "generated_by": "make drift (bench/drift); do not edit by hand",
        "modules": files,
        "messages_extracted": extracted,
        "summary": {s: counts.get(s, 0) for s in STATUSES} | {"total": len(cases)},
        "not_printed": [e.key for e in absent],
        "cases": [c.as_dict() for c in cases],
    }
    path = fixture_path(engine, version)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100_000)
    path.write_text(text, encoding="utf-8")
    return path


def changes(previous: dict[str, Any] | None, cases: list[Case], extracted: int) -> list[str]:
    """What moved since the last committed check: messages gone, new, reworded, and status changes."""
    if previous is None:
        return ["no earlier committed check for this engine"]
    before = {c["key"]: c for c in previous.get("cases", [])}
    now = {c.key: c for c in cases}
    lines = []
    label = f"since the committed check of {previous['engine']} {previous['version']}"
    for key in sorted(set(before) - set(now)):
        lines.append(f"disappeared {label}: {key}  (was {before[key]['status']})")
    for key in sorted(set(now) - set(before)):
        lines.append(f"appeared {label}: {key}  ({now[key].status})")
    for key in sorted(set(now) & set(before)):
        old, new = before[key], now[key]
        if old["template"] != new.template:
            lines.append(f"reworded {label}: {key}\n    was: {old['template']}\n    now: {new.template}")
        if old["status"] != new.status:
            lines.append(f"status {label}: {key}: {old['status']} -> {new.status}")
    lines.append(f"logger calls {label}: {previous.get('messages_extracted')} -> {extracted}")
    return lines


def _table(data: dict[str, Any]) -> list[str]:
    per: dict[str, Counter[str]] = {}
    for c in data["cases"]:
        per.setdefault(c["cause"], Counter())[c["status"]] += 1
    rows = [
        "| cause | messages | right | wrong values | wrong event | missed | coverage |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    total: Counter[str] = Counter()
    for cause in sorted(per):
        n = sum(per[cause].values())
        total.update(per[cause])
        rows.append(_row(f"`{cause}`", per[cause], n))
    rows.append(_row("**all**", total, sum(total.values())))
    return rows


def _row(label: str, counts: Counter[str], n: int) -> str:
    right = counts.get("right", 0)
    pct = f"{100 * right / n:.0f}%" if n else "-"
    cells = [str(counts.get(s, 0)) for s in STATUSES]
    return f"| {label} | {n} | " + " | ".join(cells) + f" | {pct} |"


def coverage_line(data: dict[str, Any]) -> str:
    s = data["summary"]
    pct = 100 * s["right"] / s["total"] if s["total"] else 0.0
    return f"{data['engine']} {data['version']}: {s['right']}/{s['total']} right ({pct:.1f}%)"


def doc_section() -> str:
    out: list[str] = []
    for engine in ("vllm", "sglang"):
        for version, data in committed(engine):
            name = "vLLM" if engine == "vllm" else "SGLang"
            out.append(f"### {name} {version}: {coverage_line(data).split(': ', 1)[1]}")
            out.append("")
            out.append(f"{data['messages_extracted']} logger calls in {data['modules']} modules; "
                       f"{data['summary']['total']} on the relevance list.")  # fmt: skip
            out.append("")
            out.extend(_table(data))
            out.append("")
    out.append("### Worklist: the messages not read right")
    out.append("")
    for engine in ("vllm", "sglang"):
        for version, data in committed(engine):
            bad = [c for c in data["cases"] if c["status"] != "right"]
            out.append(f"#### {engine} {version} ({len(bad)})")
            out.append("")
            out.append("| cause | status | expected | message (source) |")
            out.append("|---|---|---|---|")
            for c in sorted(bad, key=lambda c: (c["cause"], c["status"], c["source"])):
                expected = c["event"] + (" " + _fields(c["fields"]) if c["fields"] else "")
                got = f"; got {', '.join(c['got'])}" if c["got"] else ""
                if c.get("diff"):
                    got += "; " + ", ".join(f"{k}={v['got']!r}" for k, v in c["diff"].items())
                if c.get("note"):
                    got += f"; {c['note']}"
                msg = c["template"].replace("|", "\\|").replace("\n", " ")
                if len(msg) > 160:
                    msg = msg[:157] + "..."
                out.append(
                    f"| `{c['cause']}` | {c['status']}{got.replace('|', '/')} | {expected.replace('|', '/')} | `{msg}` ({c['source']}) |"
                )
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def _fields(fields: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in fields.items()) + "}"


def update_doc(doc: Path = DOC) -> bool:
    """Rewrite the generated part of docs/drift.md; False when the markers are missing."""
    if not doc.exists():
        return False
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        return False
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(head + BEGIN + "\n" + doc_section() + END + tail, encoding="utf-8")
    return True
