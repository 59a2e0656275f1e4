"""`logdoctor diagnose` end to end on the story fixtures: ranking, formats, exit codes, redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main

ROOT = Path(__file__).resolve().parents[1]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
HEALTHY = ROOT / "fixtures" / "logs" / "story" / "vllm-mtp-tp2-a6000-healthy.log"


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def test_story_json_ranks_the_speculation_root_first() -> None:
    code, out, _ = run("diagnose", str(STORY), "--format", "json")
    assert code == 1
    data = json.loads(out)
    assert data["schema_version"] == 1
    assert data["engine"]["name"] == "vllm"
    assert data["engine"]["version"] == "0.20.1"
    findings = data["findings"]
    # the speculation problem's root (a drafter that accepts 2%) first, the net loss it causes second
    assert [f["cause"] for f in findings[:2]] == ["spec-low-acceptance", "spec-net-loss"]
    assert [f["score"] for f in findings] == sorted((f["score"] for f in findings), reverse=True)
    causes = [f["cause"] for f in findings]
    assert "custom-allreduce-disabled" in causes
    assert "cuda-graphs-disabled" not in causes
    top = findings[0]
    assert top["severity"] == "high"
    assert top["evidence"] and all({"source", "line", "text"} <= set(e) for e in top["evidence"])
    assert any("SpecDecoding metrics" in e["text"] for e in top["evidence"])
    assert top["fix"]
    source = data["sources"][0]
    assert source["lines"] == 123 and source["events"] > 50 and source["bytes_read"] == STORY.stat().st_size
    assert {o["rule"] for o in data["ruled_out"]} >= {"eager-decode"}


def test_secrets_never_reach_any_output() -> None:
    assert "sk-kpro5" in STORY.read_text(encoding="utf-8")
    for fmt in ("json", "markdown", "text"):
        _, out, err = run("diagnose", str(STORY), "--format", fmt, "--verbose")
        assert "sk-kpro5" not in out + err
    _, out, _ = run("parse", str(STORY), "--format", "jsonl")
    assert "sk-kpro5" not in out
    assert "'***'" in out or '"***"' in out


def test_healthy_counterpart_is_healthy_and_exits_zero() -> None:
    code, out, _ = run("diagnose", str(HEALTHY), "--format", "json")
    data = json.loads(out)
    assert code == 0, data["findings"]
    assert data["verdict"]["healthy"] is True
    assert all(f["score"] < 50 for f in data["findings"])
    assert data["verdict"]["summary"].startswith("healthy:")


def test_markdown_and_text_reports() -> None:
    code, out, _ = run("diagnose", str(STORY), "--format", "markdown")
    assert code == 1
    assert out.startswith("## logdoctor diagnosis")
    assert "### 1. " in out and "spec-net-loss" in out
    code, out, _ = run("diagnose", str(STORY))
    assert code == 1
    assert "spec-net-loss" in out and "evidence" in out


def test_fail_on_controls_the_exit_code() -> None:
    assert run("diagnose", str(STORY), "--fail-on", "never")[0] == 0
    assert run("diagnose", str(HEALTHY), "--fail-on", "low")[0] in (0, 1)


def test_stdin_paste() -> None:
    code, out, _ = run("diagnose", "-", "--format", "json", input=STORY.read_text(encoding="utf-8"))
    assert code == 1
    assert json.loads(out)["findings"][0]["cause"] == "spec-low-acceptance"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("diagnose", "/nonexistent/vllm.log"), "/nonexistent/vllm.log: no such file"),
        (("diagnose", str(ROOT / "fixtures")), "is a directory"),
        (("parse", "/nonexistent/x.log"), "no such file"),
        (("diagnose", str(STORY), "--no-builtin-rules"), "--no-builtin-rules needs at least one --rules DIR"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in out + err
    assert len(err.strip().splitlines()) == 1


def test_suppression_with_reason_and_expiry(tmp_path: Path) -> None:
    config = tmp_path / "ld.yaml"
    config.write_text(
        "suppress:\n"
        "  - cause: custom-allreduce-disabled\n    reason: PCIe box, accepted\n"
        "  - rule: eager-decode\n    reason: unused on purpose\n"
        "  - rule: low-acceptance\n    reason: old\n    expires: 2020-01-01\n",
        encoding="utf-8",
    )
    _, out, _ = run("diagnose", str(STORY), "--format", "json", "--config", str(config))
    data = json.loads(out)
    assert "custom-allreduce-disabled" not in [f["cause"] for f in data["findings"]]
    assert [s["rule"] for s in data["suppressed"]] == ["custom-allreduce-off"]
    assert any("expired on 2020-01-01" in w for w in data["warnings"])
    assert any("rule eager-decode matched no finding" in w for w in data["warnings"])
    assert "spec-low-acceptance" in [f["cause"] for f in data["findings"]]


def test_rules_commands() -> None:
    code, out, _ = run("rules", "list")
    assert code == 0 and "below-break-even" in out
    code, out, _ = run("rules", "show", "eager-decode")
    assert code == 0 and "cause: cuda-graphs-disabled" in out
    code, out, _ = run("rules", "check")
    assert code == 0 and "rules OK" in out
    assert run("rules", "show", "nope")[0] == 2


def test_rules_check_a_pack_against_the_builtin_set(tmp_path: Path) -> None:
    pack = tmp_path / "pack" / "kv-cache-pressure"
    pack.mkdir(parents=True)
    builtin = (ROOT / "rules" / "kv-cache-pressure" / "kv-saturated.yaml").read_text(encoding="utf-8")
    (pack / "kv-saturated.yaml").write_text(builtin.replace("id: kv-saturated\n", ""), encoding="utf-8")
    code, _, err = run("rules", "check", str(pack.parent))
    assert code == 2 and "kv-saturated.yaml:1:1: duplicate rule id 'kv-saturated' (also in the built-in set" in err
    assert run("rules", "check", "--no-builtin-rules", str(pack.parent))[:2] == (0, "1 rules OK\n")
    (pack / "kv-saturated.yaml").rename(pack / "my-kv-saturated.yaml")
    assert run("rules", "check", str(pack.parent))[:2] == (0, "1 rules OK\n")
    assert run("rules", "check", str(ROOT / "rules"))[0] == 0  # the built-in directory itself


def test_docs_list_every_fact() -> None:
    from logdoctor.facts import FACTS

    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    missing = [name for name in FACTS if f"`{name}`" not in text]
    assert not missing, f"docs/rules.md lacks {missing}"


@pytest.mark.parametrize("content", [b"", b"# a README\n\nNothing of a server here.\n", bytes(range(256)) * 80])
def test_not_a_log_is_one_line_and_exit_2(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    result = CliRunner().invoke(main, ["diagnose", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a log: no line of a vLLM, SGLang or NCCL format" in lines[0]
    assert "healthy" not in result.output


def test_more_than_two_pcie_gpus_get_pairs_not_a_p2p_check() -> None:
    # real: vLLM 0.9.2 at TP=4 whose workers warn "not supported on more than two PCIe-only GPUs"; the engines
    # keep custom all-reduce off there even with P2P, so a P2P check would not bring it back
    log = ROOT / "fixtures" / "logs" / "realworld" / "vllm-r013.log"
    _, out, _ = run("diagnose", str(log), "--format", "json")
    finding = next(f for f in json.loads(out)["findings"] if f["rule"] == "custom-allreduce-off")
    assert any(step.startswith("TP groups of two PCIe GPUs: --tensor-parallel-size 2") for step in finding["fix"])
    assert not any(step.startswith("check P2P") for step in finding["fix"])
