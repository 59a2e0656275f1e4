"""Hostile rule files and suppression files: each is an error at file:line:col in bounded time,
never a traceback, a hang or the content of a file outside the rule directory."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.engine.rules import load_rules
from logdoctor.engine.suppress import load_suppressions
from logdoctor.errors import ConfigError, RuleError
from logdoctor.userfile import MAX_RULE_FILE_BYTES

STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
RULE = """id: my-rule
cause: kv-cache-pressure
title: KV usage high
engines: [vllm]
requires: [kv.usage]
when: {when}
impact: 50
explain: "{explain}"
"""


def _rule(tmp_path: Path, when: str = "max(kv.usage) > 0.9", explain: str = "usage {max(kv.usage):.2f}") -> Path:
    directory = tmp_path / "rules"
    (directory / "kv-cache-pressure").mkdir(parents=True, exist_ok=True)
    (directory / "kv-cache-pressure" / "my-rule.yaml").write_text(
        RULE.format(when=when, explain=explain), encoding="utf-8"
    )
    return directory


def _error(directory: Path) -> str:
    started = time.monotonic()
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    # A hang guard, not a speed measure (catastrophic backtracking or an exponential parse never returns).
    assert time.monotonic() - started < 120
    return str(info.value)


def test_a_valid_rule_loads(tmp_path: Path) -> None:
    assert [r.id for r in load_rules([_rule(tmp_path)], builtin=False)] == ["my-rule"]


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ("'" + "(" * 1000 + "max(kv.usage) > 0.9" + ")" * 1000 + "'", "longer than 2000 characters"),
        ("'" + "(" * 200 + "max(kv.usage) > 0.9" + ")" * 200 + "'", "nested deeper than 16 parentheses"),
        ("'" + " and ".join(["max(kv.usage) > 0.9"] * 1000) + "'", "longer than 2000 characters"),
        ("'" + "not " * 110 + "exists(kv.usage)'", "more than 100 operators"),
        ("'" + "1" + " + 1" * 150 + " > 0'", "more than 100 operators"),
    ],
)
def test_condition_size_limits_are_errors_at_a_column(tmp_path: Path, when: str, message: str) -> None:
    error = _error(_rule(tmp_path, when=when))
    assert "my-rule.yaml:6:" in error and message in error


def test_a_huge_format_width_is_refused(tmp_path: Path) -> None:
    error = _error(_rule(tmp_path, explain="usage {max(kv.usage):9999999999.2f}"))
    assert "my-rule.yaml:8:" in error and "format width 9999999999 is over 64" in error
    error = _error(_rule(tmp_path, explain="usage {max(kv.usage):.999f}"))
    assert "format precision 999 is over 12" in error


@pytest.mark.parametrize("depth", [5000, 10000])
def test_yaml_nested_thousands_deep(tmp_path: Path, depth: int) -> None:
    directory = tmp_path / "rules"
    directory.mkdir()
    (directory / "deep.yaml").write_text("tags: " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    error = _error(directory)
    assert "deep.yaml:1:" in error and "nested more than 64 levels deep" in error
    (directory / "deep.yaml").write_text("a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, depth // 10)))
    assert "deep.yaml:" in _error(directory)


def test_a_non_utf8_rule_file(tmp_path: Path) -> None:
    directory = _rule(tmp_path)
    (directory / "r.yaml").write_bytes(b"id: x\ntitle: caf\xe9\n")
    error = _error(directory)
    assert "r.yaml:2:11: not UTF-8 (byte 0xe9)" in error


def test_a_rule_file_over_the_size_cap(tmp_path: Path) -> None:
    directory = _rule(tmp_path)
    (directory / "r.yaml").write_text("# x\n" * (MAX_RULE_FILE_BYTES // 4 + 1), encoding="utf-8")
    assert "larger than 256 KiB" in _error(directory)


def test_a_symlink_out_of_the_rule_directory_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$hashedpassword:19000:0:99999:7:::\n", encoding="utf-8")
    directory = tmp_path / "rules"
    directory.mkdir()
    (directory / "evil.yaml").symlink_to(secret)
    error = _error(directory)
    assert "evil.yaml:1:1: a symlink out of" in error
    assert "hashedpassword" not in error
    inside = directory / "kv-cache-pressure"
    inside.mkdir()
    (inside / "my-rule.yaml").write_text(RULE.format(when="max(kv.usage) > 0.9", explain="x"), encoding="utf-8")
    (directory / "evil.yaml").unlink()
    (inside / "alias.yaml").symlink_to(inside / "my-rule.yaml")  # inside the directory: read (its id then disagrees)
    error = _error(directory)
    assert "alias.yaml:1:5: id: 'my-rule' differs from the file name alias.yaml" in error
    assert "symlink out of" not in error


def test_the_cli_reports_a_bad_rule_file_as_exit_2(tmp_path: Path) -> None:
    directory = _rule(tmp_path, when="'" + "(" * 1000 + "x" + ")" * 1000 + "'")
    result = CliRunner().invoke(main, ["diagnose", str(STORY), "--rules", str(directory)])
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr and "my-rule.yaml:6:" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"suppress:\n  - rule: x\n    reason: r\n    expires: 2027-02-30\n", ".logdoctor.yaml:4:14: invalid value"),
        (b"suppress:\n  - rule: x\n    reason: caf\xe9\n", "not UTF-8"),
        (b"suppress: " + b"[" * 8000 + b"]" * 8000 + b"\n", "nested more than 64 levels deep"),
        (b"suppress: [\n", "invalid YAML"),
    ],
)
def test_hostile_suppression_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / ".logdoctor.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_suppressions(path)
    assert message in str(info.value)
    result = CliRunner().invoke(main, ["diagnose", str(STORY), "--config", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.stderr


def test_a_suppression_file_linked_out_of_its_directory(tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text("suppress: []\n# root:hashedpassword\n", encoding="utf-8")
    here = tmp_path / "project"
    here.mkdir()
    (here / ".logdoctor.yaml").symlink_to(secret)
    with pytest.raises(ConfigError, match="a symlink out of") as info:
        load_suppressions(here / ".logdoctor.yaml")
    assert "hashedpassword" not in str(info.value)
