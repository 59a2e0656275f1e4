"""The output border: no control character or escape sequence of a log reaches any output raw, and rich
never reads log text as markup (the hostile-input audit's reproducers, in every format)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.report.mdtext import fence, text
from logdoctor.sanitize import clean, clean_text, has_unsafe

ROOT = Path(__file__).resolve().parents[1]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x1b\\"
HOSTILE = [OSC52, "\x1b]0;owned\x07", "\x1b[2J\x1b[H", "\x9b31m", "\x9d8;;https://evil.example\x9c", "\u202egnp.exe"]


def run(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def _story_with(tmp_path: Path, old: str, new: str, line: int | None = None) -> Path:
    lines = STORY.read_text(encoding="utf-8").split("\n")
    for index, text_ in enumerate(lines):
        if old in text_ and (line is None or index + 1 == line):
            lines[index] = text_.replace(old, new)
    path = tmp_path / "x.log"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _raw_controls(output: str) -> list[str]:
    return [c for c in output if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_clean_text_shows_each_control_visibly() -> None:
    assert clean_text("a\x1b[31mb") == "a\\x1b[31mb"
    assert clean_text("\x9b\x9d\x07\x7f") == "\\x9b\\x9d\\x07\\x7f"
    assert clean_text("\u202eevil") == "\\u202eevil"
    same = "tab\tand newline\n stay"
    assert clean_text(same) is same


def test_clean_copies_only_what_changes() -> None:
    data = {"a": ["x", "y\x1b"], "b": ("z",)}
    out = clean(data)
    assert out == {"a": ["x", "y\\x1b"], "b": ("z",)}
    assert out["b"] is data["b"]


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
@pytest.mark.parametrize("payload", HOSTILE)
def test_the_osc52_reproducer_reaches_no_output_raw(tmp_path: Path, fmt: str, payload: str) -> None:
    # sed '15s#/root/models/Qwen3.6-27B#/root/\x1b]52;c;...\x1b\\models/Qwen3.6-27B#' (and the other sequences)
    log = _story_with(tmp_path, "/root/models/Qwen3.6-27B", f"/root/{payload}models/Qwen3.6-27B", line=15)
    code, out, err = run("diagnose", str(log), "--format", fmt)
    assert code in (0, 1), err
    assert _raw_controls(out + err) == []
    assert "\u202e" not in out + err
    if fmt == "json":
        json.loads(out)


def test_escapes_in_parse_table_unparsed_and_jsonl_are_visible(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(
        f"(APIServer pid=1) INFO 05-08 14:02:11 [api_server.py:1] vLLM API server version 0.20.1{OSC52}\n"
        f"(APIServer pid=1) INFO 05-08 14:02:11 [utils.py:1] non-default args: {{'model': '/m/\x9b2J'}}\n"
        f"(APIServer pid=1) WARNING 05-08 14:02:11 [cuda.py:1] Using XFormers backend{OSC52} weird\n",
        encoding="utf-8",
    )
    for args in (["--show-unparsed", "--explain-detection"], ["--format", "jsonl"]):
        code, out, err = run("parse", str(log), *args)
        assert code == 0, err
        assert _raw_controls(out + err) == []


def test_a_file_name_with_escapes_in_the_no_such_file_error(tmp_path: Path) -> None:
    code, out, err = run("diagnose", str(tmp_path / f"x{OSC52}.log"))
    assert code == 2
    assert "no such file" in err and "\\x1b]52" in err
    assert _raw_controls(out + err) == []


@pytest.mark.parametrize(
    "model", ["[link=https://evil.example/]click[/link]", "/models/[/x]", "[bold red]x", "/models/[/]"]
)
def test_rich_markup_in_a_model_name_stays_literal(tmp_path: Path, model: str) -> None:
    log = tmp_path / "x.log"
    log.write_text(
        f"(APIServer pid=1) INFO 05-08 14:02:11 [utils.py:1] non-default args: {{'model': '{model}', "
        "'enforce_eager': True}\n",
        encoding="utf-8",
    )
    code, out, err = run("parse", str(log))
    assert code == 0, err
    assert model[:12] in out
    assert "\x1b]8;" not in out  # no OSC 8 hyperlink
    code, out, err = run("diagnose", str(log))
    assert code in (0, 1), err
    assert "\x1b]8;" not in out


def test_markdown_escapes_links_images_html_and_autolinks() -> None:
    hostile = "![x](https://evil.example/a.png) [y](http://e.x) <img src=x> www.evil.example **b**"
    shown = text(hostile)
    for raw in ("![", "](", "https://", "http://", "www.", "**"):
        assert raw not in shown
    assert re.search(r"(?<!\\)<", shown) is None  # every `<` escaped: no HTML
    assert fence(["a ```` b"]) == "`````"


def test_markdown_evidence_cannot_close_its_fence(tmp_path: Path) -> None:
    log = _story_with(tmp_path, "/root/models/Qwen3.6-27B", "/root/```\n# pwned\n```models/Qwen3.6-27B", line=15)
    code, out, _ = run("diagnose", str(log), "--format", "markdown")
    assert code in (0, 1)
    assert "\n# pwned" not in out


def test_has_unsafe() -> None:
    assert has_unsafe("\x1b") and not has_unsafe("plain")


PAGE_PAYLOAD = OSC52 + "\x01\x02\x85\x9b31m\u202e"


@pytest.mark.parametrize("fmt", ["github", "html"])
def test_page_formats_carry_no_control_byte_of_a_log(tmp_path: Path, fmt: str) -> None:
    """An OSC 52 write and raw C0/C1 bytes in a model path: the GitHub body (printed before it is piped to `gh`)
    and the HTML page show them as text, one deployment, several, and `diff`'s page; the page's data still parses."""
    log = _story_with(tmp_path, "/root/models/Qwen3.6-27B", f"/root/{PAGE_PAYLOAD}models/Qwen3.6-27B")
    other = tmp_path / "other" / "y.log"
    other.parent.mkdir()
    other.write_text(
        (ROOT / "fixtures" / "logs" / "story" / "sglang-mtp-tp2-a6000.log")
        .read_text(encoding="utf-8")
        .replace("/root/models/Qwen3.6-27B", f"/root/{PAGE_PAYLOAD}models/Qwen3.6-27B"),
        encoding="utf-8",
    )
    runs = [["diagnose", str(log)], ["diagnose", str(log), str(other)]]
    if fmt == "html":
        runs.append(["diff", str(other), str(log)])
    for args in runs:
        code, out, err = run(*args, "--format", fmt)
        assert code in (0, 1), (args, err)
        assert _raw_controls(out + err) == [], (args, sorted(set(_raw_controls(out + err))))
        assert "\u202e" not in out
        assert "\\x1b]52;c;" in out, args  # shown, as text
        if fmt == "html":
            start = out.index('id="logdoctor-data"')
            body = out[out.index(">", start) + 1 : out.index("</script>", start)]
            json.loads(body)
