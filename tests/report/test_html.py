"""`--format html` in headless Chromium: the page loads without a console error, each chart holds the
points the log has, the screenshot is not blank, log text stays text, a fleet links to its hosts.

Expected point counts are read from the story fixtures' golden event files, not from the renderer."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.engine.rules import load_rules
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources
from logdoctor.report.html import _script_json, render_fleet_html
from logdoctor.report.observed import observed_of
from tests.report.browser import Browser, png_colours

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story"
DFLASH = STORY / "vllm-dflash-tp2-a6000.log"
SGLANG = STORY / "sglang-mtp-tp2-a6000.log"
HEALTHY = STORY / "vllm-mtp-tp2-a6000-healthy.log"
DECODE_FORMATS = {"vllm-v0", "vllm-v1", "sglang-decode"}


def _time(event: dict[str, Any]) -> datetime | None:
    stamp = event.get("timestamp")
    if stamp is None:
        return None
    return datetime.strptime(stamp if stamp[:4].isdigit() else "2000-" + stamp, "%Y-%m-%d %H:%M:%S")


def expected_points(log: Path) -> dict[str, int]:
    """What each chart must hold, counted from the golden events: the stats lines from the first
    throughput line on (earlier ones are start-up, not drawn)."""
    events = [json.loads(line) for line in log.with_name(log.name.replace(".log", ".events.jsonl")).open()]
    placed = [(when, e) for e in events if (when := _time(e)) is not None]
    serving = min(
        when
        for when, e in placed
        if e["type"] == "scheduler_stats"
        and e["format"] in DECODE_FORMATS
        and e.get("generation_throughput") is not None
    )
    events = [e for when, e in placed if when >= serving]
    stats = [e for e in events if e["type"] == "scheduler_stats"]
    decode = [e for e in stats if e["format"] in DECODE_FORMATS and e.get("generation_throughput") is not None]
    return {
        "decode": len(decode),
        "per-request": sum(1 for e in decode if e.get("running")),
        "acceptance": sum(
            1 for e in events if e["type"] == "spec_decode_stats" and e.get("mean_acceptance_length") is not None
        ),
        "kv": sum(1 for e in stats if e.get("kv_cache_usage") is not None),
        "queue": sum(1 for e in stats if e.get("running") is not None)
        + sum(1 for e in stats if e.get("waiting") is not None or e.get("queue") is not None),
    }


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    yield b
    b.close()


def cli(*args: str) -> int:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code


def charts_in(page: object) -> dict[str, dict[str, int]]:
    from tests.report.browser import Page

    assert isinstance(page, Page)
    charts = page.evaluate("JSON.stringify(window.logdoctorCharts)")
    dom = page.evaluate(
        "JSON.stringify([...document.querySelectorAll('figure.chart')].map(f => "
        "[f.id, Number(f.dataset.points), Number(f.dataset.rendered || 0)]))"
    )
    drawn = {c["id"]: c["points"] for c in json.loads(charts)}
    return {
        fid: {"declared": declared, "rendered": rendered, "drawn": drawn.get(fid, 0)}
        for fid, declared, rendered in json.loads(dom)
    }


def test_story_page_loads_clean_with_every_point(browser: Browser, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert cli("diagnose", str(DFLASH), "--format", "html", "-o", str(out)) == 1  # findings: exit 1 as ever
    page = browser.open(out)
    assert page.console == []
    assert page.evaluate("document.body.dataset.chartsReady") == "5"
    charts = charts_in(page)
    expected = expected_points(DFLASH)
    assert expected == {"decode": 30, "per-request": 30, "acceptance": 30, "kv": 30, "queue": 60}  # the fixture
    for name, count in expected.items():
        assert charts[f"d0-{name}"] == {"declared": count, "rendered": count, "drawn": count}, name
    # uPlot drew into a canvas of the chart's size
    assert page.evaluate("document.querySelectorAll('figure.chart canvas').length") == 5
    text = page.evaluate("document.body.innerText")
    assert "spec-net-loss" in text and "below-break-even" in text
    assert "SpecDecoding metrics: Mean acceptance length: 1.27" in text  # evidence, whole
    assert "--speculative-config" in text  # the fix
    assert png_colours(page.screenshot()) > 100  # text, charts and colours: far from a blank page


def test_page_requests_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    cli("diagnose", str(SGLANG), "--format", "html", "-o", str(out))
    page = out.read_text(encoding="utf-8")
    assert "default-src 'none'" in page  # the CSP: no request can leave the page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<script src" not in page


def test_diff_overlays_both_timelines(browser: Browser, tmp_path: Path) -> None:
    out = tmp_path / "diff.html"
    cli("diff", str(SGLANG), str(DFLASH), "--format", "html", "-o", str(out))
    page = browser.open(out)
    assert page.console == []
    charts = charts_in(page)
    base, cand = expected_points(SGLANG), expected_points(DFLASH)
    for name in base:
        assert charts[f"diff-{name}"]["drawn"] == base[name] + cand[name], name
    series = page.evaluate(
        "JSON.stringify([...document.querySelectorAll('#diff-decode .u-legend .u-label')].map(e => e.textContent))"
    )
    assert json.loads(series) == ["baseline: aggregate", "candidate: aggregate"]
    # one y axis a chart: the per-request rate has its own chart, never a second scale drawn over the first
    for chart in ("decode", "per-request", "kv"):
        assert page.evaluate(f"document.querySelectorAll('#diff-{chart} .u-axis').length") == 2, chart
    drawn = json.loads(page.evaluate("JSON.stringify(window.logdoctorCharts)"))
    assert all(c["scales"] == ["y"] and not c["clock"] for c in drawn)  # two deployments: seconds since serving
    text = page.evaluate("document.body.innerText")
    assert "candidate is 4.0x slower per request" in text
    assert "num_speculative_tokens" in text


def test_log_text_never_becomes_markup(browser: Browser, tmp_path: Path) -> None:
    """A log line carrying HTML is shown as text, in the evidence and in the markers table."""
    payload = '<img src=x onerror="window.pwned=1"></pre></script><script>window.pwned=2</script><b>bold</b>'
    log = tmp_path / "hostile.log"
    text = DFLASH.read_text(encoding="utf-8")
    hostile = (
        "(Worker pid=3102) WARNING 05-08 14:02:40 [custom_all_reduce.py:154] Custom allreduce is disabled because "
        f"your platform lacks GPU P2P capability or P2P test failed. {payload}"
    )
    log.write_text(text.replace(text.splitlines()[19], hostile), encoding="utf-8")  # line 20
    out = tmp_path / "hostile.html"
    cli("diagnose", str(log), "--format", "html", "-o", str(out))
    page = browser.open(out)
    assert page.console == []
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('img, b').length") == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 3  # data, uPlot, ours
    assert page.evaluate("document.body.dataset.chartsReady") == "5"  # the page still works
    shown = page.evaluate("document.body.textContent")
    assert shown.count(payload) >= 2  # the evidence line and the warning marker, as text


def test_script_json_cannot_close_its_element() -> None:
    text = _script_json({"label": "</script><!-- & -->"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"label": "</script><!-- & -->"}


def test_fleet_table_links_to_each_host(browser: Browser, tmp_path: Path) -> None:
    rules = load_rules([], builtin=True)
    diagnoses, observed = [], []
    for log in (DFLASH, HEALTHY):
        lines = list(enumerate(log.read_text(encoding="utf-8").splitlines(), start=1))
        parsed = parse_sources([LineSource(name=log.name, lines=lines)])
        diagnoses.append(diagnose_parsed(parsed, rules)[0])
        observed.append(observed_of(parsed.events))
    out = tmp_path / "fleet.html"
    out.write_text(render_fleet_html(["kpro5", "kpro6"], diagnoses, observed), encoding="utf-8")
    page = browser.open(out)
    assert page.console == []
    links = json.loads(
        page.evaluate(
            "JSON.stringify([...document.querySelectorAll('.fleet-table a')].map(a => "
            "[a.textContent, a.getAttribute('href'), !!document.querySelector(a.getAttribute('href'))]))"
        )
    )
    assert links == [["kpro5", "#d0", True], ["kpro6", "#d1", True]]
    charts = charts_in(page)
    assert charts["d0-decode"]["drawn"] == expected_points(DFLASH)["decode"]
    assert charts["d1-decode"]["drawn"] == expected_points(HEALTHY)["decode"]
    verdicts = page.evaluate("[...document.querySelectorAll('.fleet-table tr')].slice(1).map(r => r.className)")
    assert verdicts == ["bad", "good"]


def test_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["diagnose", str(DFLASH), "--format", "html", "-o", str(tmp_path / "no" / "x.html")]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith("logdoctor: error: -o ") and "cannot write it" in result.stderr


def test_a_blank_page_counts_as_blank(browser: Browser, tmp_path: Path) -> None:
    """The non-blank check above can fail: an empty page's screenshot has one colour."""
    empty = tmp_path / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body style='background:#fff'></body></html>", encoding="utf-8")
    assert png_colours(browser.open(empty).screenshot()) == 1


def _stats_line(stamp: str, running: int, throughput: float) -> str:
    return (
        f"INFO {stamp} [loggers.py:257] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation "
        f"throughput: {throughput} tokens/s, Running: {running} reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%, "
        "Prefix cache hit rate: 0.0%"
    )


def test_an_idle_stretch_is_a_gap_and_the_axis_is_the_logs_clock(browser: Browser, tmp_path: Path) -> None:
    """Constructed: stats every 10 s from 09:00:00 to 09:01:00, nothing for four hours, then 13:00:00 to
    13:01:00. The lines are broken over the idle hours (no slope drawn through them), and the x axis reads the
    log's clock."""
    lines = ["INFO 05-08 09:00:00 [api_server.py:1] vLLM API server version 0.20.1"]
    for hour in (9, 13):
        for second in range(0, 61, 10):
            running = 1 if hour == 9 else 40
            lines.append(_stats_line(f"05-08 {hour:02d}:{second // 60:02d}:{second % 60:02d}", running, 20.0 * running))
    log = tmp_path / "idle.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "idle.html"
    cli("diagnose", str(log), "--format", "html", "-o", str(out))
    page = browser.open(out)
    assert page.console == []
    drawn = {c["id"]: c for c in json.loads(page.evaluate("JSON.stringify(window.logdoctorCharts)"))}
    for chart in ("d0-decode", "d0-queue"):
        assert drawn[chart]["gaps"] >= 1 and drawn[chart]["clock"], drawn[chart]
        assert drawn[chart]["scales"] == ["y"]
    assert drawn["d0-decode"]["points"] == 14
    labels = json.loads(
        page.evaluate(
            "JSON.stringify(window.logdoctorPlots['d0-decode'].axes[0]._values)"  # the labels uPlot drew
        )
    )
    assert labels and all(re.fullmatch(r"\d\d:\d\d", label) for label in labels), labels
    assert any(label.startswith(("10:", "11:", "12:")) for label in labels)  # the idle hours are on the axis
    # the rendered line: the canvas column halfway through the idle hours has no pixel of the line's colour
    # (#1f77b4), where a line joined across them would cross it; a column inside the served minute has some
    blue = page.evaluate(
        """(() => {
          const u = window.logdoctorPlots['d0-decode'];
          const xs = u.data[0];
          const column = (t) => {
            const x = Math.round(u.valToPos(t, 'x', true));
            const img = u.ctx.getImageData(x, u.bbox.top, 1, u.bbox.height).data;
            let n = 0;
            for (let i = 0; i < img.length; i += 4) {
              if (Math.abs(img[i] - 31) < 40 && Math.abs(img[i + 1] - 119) < 40 && Math.abs(img[i + 2] - 180) < 40
                  && img[i + 3] > 100) n++;
            }
            return n;
          };
          const idle = (60 + (xs[xs.length - 1] - 60)) / 2;
          return [column(idle), column(35), xs.length];
        })()"""
    )
    assert blue[0] == 0 and blue[1] > 0, blue
