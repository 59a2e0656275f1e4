"""`logdoctor diagnose prometheus://...` against a real Prometheus scraping 20 loopback exporters that serve
recorded real vLLM and SGLang `/metrics` texts (tests/sources/prometheus_lab.py): the fleet table, the outlier
and its cause, and every error as one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.sources.prometheus import base_url, render
from tests.sources.conftest import free_port
from tests.sources.prometheus_lab import (
    HEALTHY_TEXT,
    METRICS,
    SLOW_TEXT,
    TOKEN,
    PrometheusLab,
    healthy_recording,
    prometheus_lab,
    slow_recording,
)

__all__ = ["prometheus_lab"]  # the session fixture, imported so pytest finds it here


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_the_slow_instance_ranks_first_with_its_cause(prometheus_lab: PrometheusLab) -> None:
    code, out, err = run("diagnose", prometheus_lab.url, "--selector", '{job="vllm"}', "--since", "1m", "--step", "1s")
    assert code == 0, err  # the slow instance's finding is medium, below the default --fail-on high
    slow = prometheus_lab.slow.name
    table = out[out.index("20 hosts") : out.index("outliers:")]
    rows = [line for line in table.splitlines() if "127.0.0.1:" in line]
    assert len(rows) == 20
    assert slow in rows[0], rows[:3]
    # the SGLang server of the docs' scrape: 2826 requests queued while its token pool is 28% used
    assert "sglang" in rows[0] and "chunked-prefill" in rows[0]  # the cause (its column may be cut at 80)
    outliers = out[out.index("outliers:") :]
    assert "1 of 20 instances" in outliers
    # the fleet median: the live scrapes' 152 tokens in 15 s (Prometheus's scrape times jitter under load)
    median = re.search(r"fleet median \(([0-9.]+) tok/s", outliers)
    assert median is not None and abs(float(median.group(1)) - 152 / 15) < 0.1 * 152 / 15
    outlier_rows = [line for line in outliers.splitlines() if "127.0.0.1:" in line]
    assert len(outlier_rows) == 1 and slow in outlier_rows[0]
    # 86.5 tok/s over 162 running requests: 0.53 a request, about 0.05x the median
    speed = re.search(r"│\s+([0-9.]+) │\s+([0-9.]+)x │", outlier_rows[0])
    assert speed is not None and 0.4 < float(speed.group(1)) < 0.7 and float(speed.group(2)) < 0.1
    assert "queue" in outliers or "wait" in outliers


def test_json_has_one_report_an_instance(prometheus_lab: PrometheusLab) -> None:
    code, out, err = run(
        "diagnose",
        prometheus_lab.url,
        "--selector",
        '{job="vllm"}',
        "--since",
        "1m",
        "--step",
        "1s",
        "--format",
        "json",
    )
    assert code == 0, err
    fleet = json.loads(out)
    assert fleet["report"] == "fleet"  # one object, the instances inside (docs/json.md)
    reports = fleet["hosts"]
    assert len(reports) == 20
    assert [o["host"] for o in fleet["outliers"]][:1] == [reports[0]["host"]]  # the slow one named first
    first = reports[0]
    assert first["sources"][0]["name"] == prometheus_lab.slow.name
    assert first["engine"]["name"] == "sglang"
    assert first["findings"][0]["cause"] == "chunked-prefill-or-batching-config"
    for healthy in reports[1:]:  # MTP at acceptance length 3.68 of k=5 is no spec-decode problem
        assert not any(f["cause"].startswith("spec-") and f["score"] >= 50 for f in healthy["findings"])
    assert sum(r["verdict"]["kind"] == "healthy" for r in reports) == 19  # 18 live vLLM scrapes, the idle V0 one


def test_unreachable_server_is_one_line_exit_3() -> None:
    port = free_port("127.0.0.1")
    code, _, err = run("diagnose", f"prometheus://127.0.0.1:{port}")
    assert code == 3
    assert err.count("\n") == 1 and "cannot connect" in err and "Traceback" not in err


def test_bad_selector_is_prometheus_error(prometheus_lab: PrometheusLab) -> None:
    code, _, err = run("diagnose", prometheus_lab.url, "--selector", '{job=~"("}')
    assert code == 3
    assert err.startswith("logdoctor: error: ") and "Prometheus refused the query: bad_data" in err
    assert err.count("\n") == 1


def test_selector_without_braces_is_usage() -> None:
    code, _, err = run("diagnose", "prometheus://127.0.0.1:1", "--selector", 'job="vllm"')
    assert code == 2 and "label matchers in braces" in err


def test_empty_result_says_what_matched_nothing(prometheus_lab: PrometheusLab) -> None:
    code, _, err = run("diagnose", prometheus_lab.url, "--selector", '{job="nothing-here"}', "--since", "5m")
    assert code == 3
    assert 'no vLLM or SGLang series match {job="nothing-here"} in the 5m before' in err


def test_bearer_token_from_env_and_file_never_printed(prometheus_lab: PrometheusLab, tmp_path: Path) -> None:
    args = ["diagnose", prometheus_lab.proxy_url, "--selector", '{job="vllm"}', "--since", "1m", "--step", "1s"]
    code, out, err = run(*args)
    assert code == 3 and "authentication needed (HTTP 401)" in err and "--bearer-token-env" in err
    code, out, err = run(*args, "--bearer-token-env", "PROM_TOKEN", env={"PROM_TOKEN": TOKEN})
    assert code == 0, err
    assert prometheus_lab.slow.name in out
    assert TOKEN not in out + err
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    code, out, err = run(
        *args, "--bearer-token-file", str(token_file), "--format", "json", "-o", str(tmp_path / "r.json")
    )
    assert code == 0, err
    assert TOKEN not in (tmp_path / "r.json").read_text(encoding="utf-8") + out + err
    code, out, err = run(*args, "--bearer-token-env", "PROM_TOKEN", env={"PROM_TOKEN": "wrong"})
    assert code == 3 and "the bearer token was refused (HTTP 401)" in err and "wrong" not in err
    code, _, err = run(*args, "--bearer-token-env", "UNSET_TOKEN_VARIABLE", env={"UNSET_TOKEN_VARIABLE": ""})
    assert code == 2 and "not set or empty" in err


def test_malformed_exposition_text_fails_its_instance_and_keeps_the_others(prometheus_lab: PrometheusLab) -> None:
    code, out, err = run(
        "diagnose", prometheus_lab.url, "--selector", '{job=~"vllm|vllm-broken"}', "--since", "1m", "--step", "1s"
    )
    assert code == 3
    assert f"{prometheus_lab.broken}: Prometheus cannot scrape it (up == 0)" in err
    assert "21 hosts" in out and prometheus_lab.slow.name in out


def test_one_unreachable_server_keeps_the_other(prometheus_lab: PrometheusLab) -> None:
    dead = f"prometheus://127.0.0.1:{free_port('127.0.0.1')}"
    code, out, err = run(
        "diagnose", prometheus_lab.url, dead, "--selector", '{job="vllm"}', "--since", "1m", "--step", "1s"
    )
    assert code == 3
    assert "cannot connect" in err and "21 hosts" in out and prometheus_lab.slow.name in out


def test_url_targets_do_not_mix_with_files(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("x\n", encoding="utf-8")
    code, _, err = run("diagnose", "prometheus://127.0.0.1:9090", str(log))
    assert code == 2 and "URL targets alone" in err


@pytest.mark.parametrize(
    ("target", "url"),
    [
        ("prometheus://127.0.0.1:9090", "http://127.0.0.1:9090"),
        ("prometheus+https://127.0.0.1:9090/prom/", "https://127.0.0.1:9090/prom"),
        ("prometheus://user:pw@127.0.0.1:9090", "http://127.0.0.1:9090"),
    ],
)
def test_base_url(target: str, url: str) -> None:
    assert base_url(target) == url


def test_render_writes_one_scrape_a_step() -> None:
    series = [
        {"metric": {"__name__": "vllm:num_requests_running", "instance": "a"}, "values": [[10, "1"], [11, "2"]]},
        {"metric": {"__name__": "vllm:generation_tokens_total", "instance": "a"}, "values": [[10, "5"], [11, "9"]]},
    ]
    assert [text for _, text in render(series)] == [
        'vllm:generation_tokens_total{instance="a"} 5 10000',
        'vllm:num_requests_running{instance="a"} 1 10000',
        'vllm:generation_tokens_total{instance="a"} 9 11000',
        'vllm:num_requests_running{instance="a"} 2 11000',
    ]


@pytest.mark.parametrize("fmt", ["html", "github", "markdown"])
def test_page_formats_show_every_instance(prometheus_lab: PrometheusLab, tmp_path: Path, fmt: str) -> None:
    page = tmp_path / f"fleet.{fmt}"
    code, _, err = run(
        "diagnose", prometheus_lab.url, "--selector", '{job="vllm"}', "--since", "1m", "--step", "1s",
        "--format", fmt, "-o", str(page),
    )  # fmt: skip
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    assert all(e.name in text for e in prometheus_lab.exporters)
    if fmt == "markdown":
        assert "## Outliers" in text and prometheus_lab.slow.name in text.split("## Outliers")[1]


def test_a_password_in_the_url_is_never_shown() -> None:
    port = free_port("127.0.0.1")
    code, out, err = run("diagnose", f"prometheus://admin:hunter2@127.0.0.1:{port}")
    assert code == 3 and "cannot connect" in err
    assert "hunter2" not in out + err and "admin:***@" in err


def test_diff_of_two_instances_names_the_slow_ones_cause(prometheus_lab: PrometheusLab) -> None:
    slow = prometheus_lab.slow.name
    fast = next(e.name for e in prometheus_lab.exporters if not e.slow)
    window = ("--selector", '{job="vllm"}', "--since", "1m", "--step", "1s", "--format", "json")
    code, out, err = run(
        "diff", f"{prometheus_lab.url}#instance={fast}", f"{prometheus_lab.url}#instance={slow}", *window
    )
    assert code == 0, err
    report = json.loads(out)
    assert [s["name"] for s in report["baseline"]["sources"]] == [fast]
    assert [s["name"] for s in report["candidate"]["sources"]] == [slow]
    assert report["findings"] and report["findings"][0]["cause"] == "chunked-prefill-or-batching-config"
    # without a pick the side is ambiguous: one line naming the way to pick
    code, _, err = run("diff", prometheus_lab.url, f"{prometheus_lab.url}#instance={slow}", *window)
    assert code == 2 and "deployments match" in err and "#instance=" in err


def test_exporters_serve_the_recorded_texts_with_only_counter_values_advanced(prometheus_lab: PrometheusLab) -> None:
    """What each exporter serves is its fixture's bytes but for the values of counter and histogram samples."""
    import urllib.request

    recorded = {
        HEALTHY_TEXT: (METRICS / HEALTHY_TEXT).read_text(encoding="utf-8").splitlines()[27:],  # its 2nd scrape
        SLOW_TEXT: (METRICS / SLOW_TEXT).read_text(encoding="utf-8").splitlines()[1:],  # without `$ curl`
    }
    for exporter in (prometheus_lab.slow, prometheus_lab.exporters[0]):
        url = f"http://{exporter.name}/metrics"
        with urllib.request.urlopen(url, timeout=10) as answer:
            served = answer.read().decode().splitlines()
        want = recorded[exporter.text]
        assert len(served) == len(want)
        changed = [(a, b) for a, b in zip(want, served, strict=True) if a != b]
        assert changed  # the counters moved on since the recording
        for before, after in changed:
            series, value = before.rsplit(" ", 1)
            assert after.startswith(series + " ") and float(after.rsplit(" ", 1)[1]) > float(value)
            name = series.split("{")[0]
            assert name.endswith(("_total", "_sum", "_count", "_bucket")), before
        assert not any("_created" in a for a, _ in changed)


def test_recordings_advance_at_the_rates_they_record() -> None:
    healthy = healthy_recording()
    text = (METRICS / HEALTHY_TEXT).read_text(encoding="utf-8")
    assert healthy.text(0) == text[text.index("vllm:spec_decode_num_drafts_total", 10) :]  # as recorded
    later = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in healthy.text(15.0).splitlines()
        if not line.startswith("#")
    }
    gen = 'vllm:generation_tokens_total{engine="0",model_name="deepseek-v4-flash"}'
    assert later[gen] == 9322.0 + 152.0  # another 15 s at the recorded 9170 -> 9322
    assert later['vllm:num_requests_running{engine="0",model_name="deepseek-v4-flash"}'] == 1.0  # a gauge stays
    slow = slow_recording()
    after = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in slow.text(100.0).splitlines()
        if not line.startswith("#")
    }
    name = 'sglang:generation_tokens_total{model_name="meta-llama/Llama-3.1-8B-Instruct"}'
    assert after[name] == pytest.approx(7.557572e06 + 100 * 86.50814177726902)  # the gen_throughput gauge's rate
