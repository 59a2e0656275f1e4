"""`--format github` rendered with a Markdown parser (markdown-it-py, CommonMark): the structure a
vLLM/SGLang issue wants, and no markup or secret that came from the log."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from markdown_it import MarkdownIt
from markdown_it.token import Token

from logdoctor.app.cli import main
from logdoctor.report.github import fenced, inline_code, prose

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story"
DFLASH = STORY / "vllm-dflash-tp2-a6000.log"
SGLANG = STORY / "sglang-mtp-tp2-a6000.log"
GITHUB_BODY_LIMIT = 65536  # characters GitHub takes in an issue body
# The only raw HTML the report writes itself.
OUR_HTML = re.compile(r"^(<details><summary>[^<>]*</summary>|</details>|<sub>|</sub>)\s*$")
md = MarkdownIt("commonmark")


def github(log: Path) -> str:
    result = CliRunner().invoke(main, ["diagnose", str(log), "--format", "github"])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def tokens(text: str) -> list[Token]:
    flat: list[Token] = []
    for token in md.parse(text):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def headings(toks: list[Token]) -> list[str]:
    return [toks[i + 1].content for i, t in enumerate(toks) if t.type == "heading_open"]


def test_vllm_issue_body_structure() -> None:
    text = github(DFLASH)
    toks = tokens(text)
    assert headings(toks) == ["Environment", "Launch settings", "Diagnosis (logdoctor 0.1.0)", "Evidence"]
    environment = md.render(text.split("### Launch settings")[0])
    for shown in ("<code>vllm</code>", "<code>0.20.1</code>", "<code>/root/models/Qwen3.6-27B</code>"):
        assert shown in environment
    assert "<strong>TP</strong>: <code>2</code>" in environment
    assert "<strong>GPU</strong>: not in the log; add the output of <code>nvidia-smi --query-gpu=" in environment
    fences = [t for t in toks if t.type == "fence"]
    launch, evidence = fences[0], fences[1:]
    assert "tensor_parallel_size: 2" in launch.content and "api_key: ***" in launch.content
    assert "sk-kpro5" not in text  # the secret in non-default args
    assert "Initializing a V1 LLM engine" not in launch.content  # no raw config dump as the launch
    opened = [t.content for t in toks if t.type == "html_block" and t.content.startswith("<details>")]
    assert len(opened) == len(evidence) == 7  # one folded block a finding, each with its fenced lines
    assert opened[0].startswith("<details><summary>Evidence: spec-low-acceptance (4 lines)</summary>")
    assert evidence[0].content.splitlines()[0].startswith("vllm-dflash-tp2-a6000.log:60: ")
    assert all(len(line) < 400 for f in evidence for line in f.content.splitlines())  # dumps are cut
    for t in toks:
        if t.type in ("html_block", "html_inline"):
            assert all(OUR_HTML.match(part) for part in t.content.strip().splitlines()), t.content
    ordered = [t for t in toks if t.type == "ordered_list_open"]
    assert ordered  # the ranked causes
    assert "spec-net-loss" in md.render(text).split("<ol>")[1].split("</li>")[0]
    assert len(text) < GITHUB_BODY_LIMIT


def test_sglang_launch_is_a_selection_of_server_args() -> None:
    text = github(SGLANG)
    toks = tokens(text)
    launch = next(t for t in toks if t.type == "fence")
    settings = dict(line.split(": ", 1) for line in launch.content.splitlines())
    assert settings["tp_size"] == "2"
    assert settings["speculative_algorithm"] in ("EAGLE", "NEXTN", "MTP", "EAGLE3")
    assert settings["speculative_num_draft_tokens"] == "4"  # a count named "tokens" is no secret
    assert "tokenizer_mode" not in settings  # a default-looking setting of the full dump is left out
    assert len(settings) < 40
    assert "the settings that bear on speed" in text


def test_log_text_never_becomes_markup() -> None:
    payload = "``` </details><script>alert(1)</script> *em* [a](http://example.invalid) <b>x</b> ~~s~~ # h"
    rendered = md.render(f"text {prose(payload)} and {inline_code(payload)}\n\n" + "\n".join(fenced([payload])))
    for tag in ("<script", "<em>", "<a ", "<b>", "<h1", "</details>"):
        assert tag not in rendered, tag
    assert rendered.count("&lt;script&gt;") == 3  # shown three times, as text
    toks = tokens("\n".join(fenced([payload, "after"])))
    assert [t.type for t in toks] == ["fence"] and toks[0].content == f"{payload}\nafter\n"


def test_hostile_log_line_keeps_the_structure(tmp_path: Path) -> None:
    text = DFLASH.read_text(encoding="utf-8")
    hostile = (
        "(Worker pid=3102) WARNING 05-08 14:02:40 [custom_all_reduce.py:154] Custom allreduce is disabled because "
        "your platform lacks GPU P2P capability or P2P test failed. ```` </details><script>x</script>"
    )
    log = tmp_path / "hostile.log"
    log.write_text(text.replace(text.splitlines()[19], hostile), encoding="utf-8")
    body = github(log)
    toks = tokens(body)
    assert [t.content for t in toks if t.type in ("html_block", "html_inline") and "script" in t.content] == []
    assert sum(1 for t in toks if t.type == "fence") == 8  # the launch and the seven evidence blocks, as before
    assert any("</details><script>x</script>" in t.content for t in toks if t.type == "fence")


def test_diff_has_no_github_format() -> None:
    result = CliRunner().invoke(main, ["diff", str(SGLANG), str(DFLASH), "--format", "github"])
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "run `logdoctor diagnose`" in result.stderr


def test_settings_named_like_secrets_are_masked_whatever_their_value() -> None:
    from logdoctor.events import StartupConfig
    from logdoctor.report.observed import launch_of

    config = {"hf_token": "plain-value", "ssl_keyfile_password": "x", "api_key": None, "max_num_batched_tokens": 8192}
    event = StartupConfig(source="x.log", line=1, origin="non-default args", config=config)
    launch = launch_of([event])
    assert launch is not None
    assert launch.settings == {
        "hf_token": "***",
        "ssl_keyfile_password": "***",
        "api_key": None,
        "max_num_batched_tokens": 8192,
    }


def test_gpu_from_a_pasted_nvidia_smi_listing() -> None:
    case = ROOT / "fixtures" / "logs" / "corpus" / "nccl-2xh200-p2p-disabled"
    result = CliRunner().invoke(main, ["diagnose", *map(str, sorted(case.iterdir())), "--format", "github"])
    environment = result.stdout.split("### Diagnosis")[0]
    assert "- **GPU**: `NVIDIA H200`\n- **GPUs**: `2`\n" in environment
    assert "not in the log" not in environment
