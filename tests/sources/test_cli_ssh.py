"""`logdoctor diagnose HOST...` end to end against the sshd fixture, and its offline rerun from --save."""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from tests.sources.conftest import SshLab, free_port

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def ssh_args(lab: SshLab) -> list[str]:
    return ["--ssh-config", str(lab.ssh_config), "--known-hosts", str(lab.known_hosts)]


def remote_story(lab: SshLab) -> Path:
    """The story log placed on the 'remote' host, padded so line numbers are large and sparse."""
    path = lab.root / f"story-{secrets.token_hex(3)}.log"
    with open(path, "w", encoding="utf-8") as out:
        out.write("unrelated startup chatter\n" * 5000)
        out.write(STORY.read_text(encoding="utf-8"))
    return path


def summary(report: dict[str, Any]) -> list[tuple[str, int, list[int]]]:
    return [(f["cause"], f["score"], [e["line"] for e in f["evidence"]]) for f in report["findings"]]


def test_diagnose_host_then_rerun_offline_from_save(ssh_lab: SshLab, tmp_path: Path) -> None:
    log = remote_story(ssh_lab)
    save = tmp_path / "collected"

    code, out, err = run(
        "diagnose", "kpro5", *ssh_args(ssh_lab), "--log", str(log), "--save", str(save), "--format", "json"
    )

    assert code == 1, err  # the story has high findings
    live = json.loads(out)
    assert live["findings"][0]["cause"] == "spec-low-acceptance"
    (src,) = [s for s in live["sources"] if s["path"] == str(log)]
    assert {s["kind"] for s in live["sources"]} == {"ssh"}
    assert src["kind"] == "ssh" and src["host"] == "kpro5" and src["path"] == str(log)
    assert src["bytes_read"] == log.stat().st_size
    assert 0 < src["bytes_transferred"] < src["bytes_read"]
    assert min(e["line"] for f in live["findings"] for e in f["evidence"]) > 5000  # remote numbering
    assert "sk-kpro5" not in out + err
    assert f"kpro5: saved to {save}/kpro5/" in err

    saved = sorted((save / "kpro5").glob("*.log"))
    assert log.name in [p.name for p in saved]  # with the host facts (container.log, ...)
    assert not any("sk-kpro5" in p.read_text() for p in saved)
    code2, out2, _ = run("diagnose", *map(str, saved), "--format", "json")
    assert code2 == 1
    offline = json.loads(out2)
    assert summary(offline) == summary(live)
    manifest = json.loads((save / "kpro5" / "manifest.json").read_text())
    assert log.name in [s["file"] for s in manifest["sources"]] and manifest["commands"]


def test_several_hosts_one_down(ssh_lab: SshLab) -> None:
    log = remote_story(ssh_lab)
    down = f"root@127.0.0.6:{free_port('127.0.0.6')}"

    code, out, err = run(
        "diagnose",
        "kpro5",
        down,
        "node2",
        *ssh_args(ssh_lab),
        "--log",
        str(log),
        "--max-bytes",
        "1M",
        "--format",
        "json",
    )

    assert code == 3  # a host could not be collected; the others are still reported
    fleet = json.loads(out)  # one object, the hosts inside (docs/json.md)
    assert fleet["report"] == "fleet"
    reports = fleet["hosts"]
    assert len(reports) == 3
    # the same log on both hosts; node2's host facts name its GPUs (2x H200), so its findings also carry the
    # expected-performance model's effects and rank by them: the same findings, scored for that hardware
    assert reports[0]["findings"] and reports[0]["performance"]["known"] is False
    assert {f["rule"] for f in reports[0]["findings"]} == {f["rule"] for f in reports[2]["findings"]}
    assert reports[2]["performance"]["gpu"] == "H200" and any(f.get("effect") for f in reports[2]["findings"])
    assert reports[1]["sources"] == [] and reports[1]["errors"][0]["host"] == down
    assert "connection refused" in reports[1]["errors"][0]["error"]
    assert "collected 2 of 3 hosts" in err


def test_several_hosts_end_with_a_fleet_table(ssh_lab: SshLab) -> None:
    log = remote_story(ssh_lab)
    down = f"root@127.0.0.6:{free_port('127.0.0.6')}"

    code, out, _ = run("diagnose", "kpro5", down, *ssh_args(ssh_lab), "--log", str(log), "--max-bytes", "1M")

    assert code == 3
    table = out[out.rindex("2 hosts") :]
    cells = [[c.strip() for c in line.strip("│┃ ").split("│")] for line in table.splitlines()]
    rows = {row[0]: " ".join(row) for row in cells if row and row[0] in ("kpro5", down)}
    assert "spec-low-acceptance" in rows["kpro5"] and "vllm" in rows["kpro5"]
    assert "error:" in rows[down]
    code, out, _ = run(
        "diagnose", "kpro5", down, *ssh_args(ssh_lab), "--log", str(log), "--max-bytes", "1M", "--format", "markdown"
    )
    assert "## Fleet" in out and "| kpro5 | vllm" in out


def test_fleet_as_html_and_github(ssh_lab: SshLab, tmp_path: Path) -> None:
    """`--format html -o FILE` over SSH: the fleet table links to each host's section, and the host that
    was read has its timelines (the points its parsing thread kept while the lines arrived)."""
    log = remote_story(ssh_lab)
    down = f"root@127.0.0.6:{free_port('127.0.0.6')}"
    page = tmp_path / "fleet.html"
    args = ["diagnose", "kpro5", down, *ssh_args(ssh_lab), "--log", str(log), "--max-bytes", "1M"]
    code, out, _ = run(*args, "--format", "html", "-o", str(page))
    assert code == 3 and out == ""
    html = page.read_text(encoding="utf-8")
    assert '<a href="#d0">kpro5</a>' in html and f'<a href="#d1">{down}</a>' in html
    assert '<section class="deployment" id="d1">' in html and "not collected" in html
    assert 'id="d0-decode" data-points="30"' in html  # 30 stats lines: the aggregate rate
    assert 'id="d0-per-request" data-points="30"' in html  # and the per-request rate, a chart of its own
    assert 'id="d1-decode" data-points="0"' in html
    code, out, _ = run(*args, "--format", "github")
    assert out.startswith("## Fleet\n") and "## kpro5" in out and "```text" in out


def test_single_host_failure_is_one_line_exit_3(ssh_lab: SshLab, tmp_path: Path) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    code, out, err = run("diagnose", "kpro5", "--ssh-config", str(ssh_lab.ssh_config), "--known-hosts", str(empty))
    assert code == 3 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("logdoctor: error:")]
    assert len(errors) == 1 and errors[0].startswith("logdoctor: error: kpro5: unknown host key")
    assert "Traceback" not in err


def test_host_options_need_a_host_and_paths_win(tmp_path: Path) -> None:
    local = tmp_path / "kpro5"  # an existing file named like a host is a file
    shutil.copy(STORY, local)
    code, _, err = run("diagnose", str(local), "--log", "/var/log/x.log")
    assert code == 2 and "--log only apply to host targets" in err
    code, _, _ = run("diagnose", str(local), "--format", "json")
    assert code == 1
    code, _, err = run("diagnose", "kpro5", "--max-bytes", "12x")
    assert code == 2 and "not a size" in err


def test_broken_rules_dir_fails_before_any_host_is_contacted(ssh_lab: SshLab, tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "bad.yaml").write_text("id: [unclosed\n")
    code, out, err = run("diagnose", "kpro5", *ssh_args(ssh_lab), "--log", "/x.log", "--rules", str(rules))
    assert code == 2 and out == ""
    assert "bad.yaml" in err and "Traceback" not in err
    assert "connecting" not in err  # the rule files are checked first


def test_a_diagnosis_that_breaks_fails_only_its_host(ssh_lab: SshLab, monkeypatch: pytest.MonkeyPatch) -> None:
    import logdoctor.pipeline.run

    log = remote_story(ssh_lab)
    real = logdoctor.pipeline.run.diagnose_parsed

    def broken_on_node2(parsed: logdoctor.pipeline.run.Parsed, *args: Any, **kwargs: Any) -> Any:
        if any(stat.host == "node2" for stat in parsed.stats):
            raise ValueError("a parser bug")
        return real(parsed, *args, **kwargs)

    monkeypatch.setattr(logdoctor.pipeline.run, "diagnose_parsed", broken_on_node2)
    monkeypatch.setenv("LOGDOCTOR_WORKERS", "0")  # the patch is this process's: the hosts are diagnosed here
    code, out, err = run("diagnose", "kpro5", "node2", *ssh_args(ssh_lab), "--log", str(log), "--format", "json")

    assert code == 3
    kpro5, node2 = json.loads(out)["hosts"]
    assert kpro5["findings"][0]["cause"] == "spec-low-acceptance"
    assert node2["errors"][0]["error"] == "node2: internal error while diagnosing: ValueError: a parser bug"
    assert "Traceback" not in err


@pytest.mark.parametrize("workers", ["2", "0"])
def test_each_fleet_report_is_the_hosts_one_host_report(
    ssh_lab: SshLab, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """Hosts diagnosed in worker processes (LOGDOCTOR_WORKERS=2) or in this process (0) give, host by host,
    the JSON report that `diagnose HOST` of that host alone gives."""
    log = remote_story(ssh_lab)
    monkeypatch.setenv("LOGDOCTOR_WORKERS", workers)
    code, out, err = run("diagnose", "kpro5", "node2", *ssh_args(ssh_lab), "--log", str(log), "--format", "json")
    assert code == 1, err  # the story's findings reach --fail-on high
    fleet = json.loads(out)["hosts"]  # one object, the hosts inside (docs/json.md)
    assert [r["sources"][0]["host"] for r in fleet] == ["kpro5", "node2"]
    for host, report in zip(("kpro5", "node2"), fleet, strict=True):
        code, out, err = run("diagnose", host, *ssh_args(ssh_lab), "--log", str(log), "--format", "json")
        assert code == 1, err
        assert report == {**json.loads(out), "host": host}  # the fleet entry adds the target it came from
        assert report["findings"] and report["findings"][0]["cause"] == "spec-low-acceptance"


def test_hosts_file(ssh_lab: SshLab, tmp_path: Path) -> None:
    log = remote_story(ssh_lab)
    hosts = tmp_path / "gpu-hosts"
    hosts.write_text("# the GPU fleet\nkpro5\n\n  node2   # second box\nkpro5\n")

    code, out, err = run("diagnose", "--hosts", str(hosts), *ssh_args(ssh_lab), "--log", str(log), "--format", "json")

    assert code == 1, err
    reports = json.loads(out)["hosts"]
    assert [r["sources"][0]["host"] for r in reports] == ["kpro5", "node2"]
    assert [r["host"] for r in reports] == ["kpro5", "node2"]  # each host once, in file order
    assert all(r["findings"][0]["cause"] == "spec-low-acceptance" for r in reports)
    # positional hosts come first, then the file's
    code, out, _ = run(
        "diagnose", "node2", "--hosts", str(hosts), *ssh_args(ssh_lab), "--log", str(log), "--format", "json"
    )
    assert [r["sources"][0]["host"] for r in json.loads(out)["hosts"]] == ["node2", "kpro5"]


def test_hosts_file_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "hosts"
    bad.write_text("kpro5\nroot@host:99999\n")
    code, out, err = run("diagnose", "--hosts", str(bad))
    assert code == 2 and out == ""
    assert f"{bad}:2: root@host:99999: bad port" in err and "Traceback" not in err
    empty = tmp_path / "empty"
    empty.write_text("# nothing yet\n\n")
    code, _, err = run("diagnose", "--hosts", str(empty))
    assert code == 2 and "no hosts in it" in err
    code, _, err = run("diagnose", "--hosts", str(tmp_path / "missing"))
    assert code == 2 and "cannot read it" in err
    good = tmp_path / "good"
    good.write_text("kpro5\n")
    code, _, err = run("diagnose", str(STORY), "--hosts", str(good))
    assert code == 2 and "give local paths or hosts, not both" in err


def test_hosts_from_stdin() -> None:
    result = CliRunner().invoke(main, ["diagnose", "--hosts", "-"], input="# list\nroot@host:0\n")
    assert result.exit_code == 2 and "-:2: root@host:0: bad port" in result.stderr
    result = CliRunner().invoke(main, ["diagnose", "-", "--hosts", "-"], input="kpro5\n")
    assert result.exit_code == 2 and "both want stdin" in result.stderr
