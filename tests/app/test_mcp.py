"""`logdoctor mcp` end to end: the server started as a subprocess, driven by the MCP SDK's own stdio client.

The host tests use the SSH lab of tests/sources (real OpenSSH on loopback addresses).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from logdoctor.app.cli import main
from logdoctor.app.mcp import ServerPolicy, run_cli, summary_of
from tests.sources.conftest import SshLab, free_port
from tests.sources.conftest import ssh_lab as ssh_lab  # the lab's fixture, shared with tests/sources

ROOT = Path(__file__).resolve().parents[2]
STORY = Path("fixtures/logs/story")
SLOW = STORY / "vllm-dflash-tp2-a6000.log"  # relative: the server and the CLI both run in ROOT
FAST = STORY / "sglang-mtp-tp2-a6000.log"
TOOLS = {"diagnose", "diff", "parse", "explain", "causes", "gpus"}
T = TypeVar("T")


def with_server(work: Callable[[ClientSession], Awaitable[T]], *server_args: str, errlog: Path | None = None) -> T:
    """Start `python -m logdoctor mcp SERVER_ARGS` in ROOT, run `work` against it, stop it."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "logdoctor", "mcp", *server_args], cwd=str(ROOT))

    async def main() -> T:
        with open(errlog or "/dev/null", "w", encoding="utf-8") as err:
            with anyio.fail_after(180):
                async with stdio_client(params, errlog=err) as streams, ClientSession(*streams) as session:
                    await session.initialize()
                    return await work(session)

    return anyio.run(main)


def call(name: str, arguments: dict[str, Any], *server_args: str, errlog: Path | None = None) -> CallToolResult:
    async def work(session: ClientSession) -> CallToolResult:
        return await session.call_tool(name, arguments)

    return with_server(work, *server_args, errlog=errlog)


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def payload(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, texts(result)
    assert isinstance(result.structured_content, dict)
    assert json.loads(texts(result)[1]) == result.structured_content  # the same payload as JSON text
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error, texts(result)
    return texts(result)[0]


def cli_json(*args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "logdoctor", *args, "--format", "json"], cwd=ROOT, capture_output=True, check=False
    )
    return done.returncode, json.loads(done.stdout)


def test_summary_speaks_of_problems_with_the_recommended_action() -> None:
    """With the GPU known the summary says what the terminal says: the problem, its effect, the recommended action
    with its expected tok/s and source, the alternatives with theirs; a diff's candidate as one problem too."""
    _, report = cli_json("diagnose", str(SLOW), "--gpu", "RTX A6000")
    text = summary_of(report, 1)
    assert "1. speculation (score " in text and "speculation as deployed runs at 0." in text
    recommended = next(line for line in text.splitlines() if line.strip().startswith("recommended: "))
    assert '"method": "mtp"' in recommended and "tok/s per request expected (" in recommended
    assert "club-3090/issues/105" in text  # the Qwen figure's source
    assert "alternative: drop --speculative-config -> " in text
    link = text[text.index("tp-link (score") :]
    assert "recommended: enable GPU P2P" in link and "tok/s per request expected" in link
    _, diff = cli_json("diff", str(FAST), str(SLOW), "--gpu", "RTX A6000")
    text = summary_of(diff, 1)
    entries = [line for line in text.splitlines() if line[:1].isdigit() and ". " in line[:4]]
    assert (
        entries[0].startswith("1. speculation (score ")
        and "Speculative decoding costs more than it gives" in entries[0]
    )
    assert not any(e.split(" ", 2)[1].startswith("spec-") for e in entries)  # the diff rules joined their problem


def test_tools_listed_with_schemas_and_descriptions() -> None:
    async def work(session: ClientSession) -> Any:
        return await session.list_tools()

    listed = with_server(work)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60, tool.name  # written for a model to choose by
        assert tool.input_schema["type"] == "object"
    diagnose = tools["diagnose"].input_schema["properties"]
    assert {"targets", "text", "engine", "gpu", "all_runs", "rules", "remote_logs"} <= set(diagnose)
    assert diagnose["engine"]["enum"][0] == "auto" and "vllm" in diagnose["engine"]["enum"]
    assert diagnose["targets"]["type"] == "array"
    parse = tools["parse"].input_schema["properties"]
    assert parse["limit"]["maximum"] == 500 and parse["offset"]["minimum"] == 0
    assert tools["explain"].input_schema["required"] == ["id"]
    assert {"baseline", "candidate", "baseline_text", "candidate_text"} <= set(tools["diff"].input_schema["properties"])


def test_diagnose_story_gives_the_cli_findings(tmp_path: Path) -> None:
    errlog = tmp_path / "server.err"
    result = call("diagnose", {"targets": [str(SLOW)]}, errlog=errlog)

    got = payload(result)
    code, expected = cli_json("diagnose", str(SLOW))
    assert got["exit_code"] == code == 1  # findings at or above high, as the CLI exits
    assert got["report"]["findings"] == expected["findings"]
    assert got["report"]["verdict"] == expected["verdict"]
    summary = texts(result)[0]
    # one entry a problem, as the terminal's boxes: its rules together, its effect, one first action
    assert summary.startswith("problems: ") and "1. speculation (score " in summary
    assert "[rules low-acceptance, " in summary and "below-break-even" in summary
    assert "effect: " in summary and "fix: " in summary and f"first {SLOW}:" in summary
    assert summary.count("spec-low-acceptance (score") == 0  # never a second entry for the same problem
    assert "sk-kpro5" not in json.dumps(result.model_dump())  # the story's own secret, masked by the CLI
    assert "Traceback" not in errlog.read_text()


def test_diff_story_logs() -> None:
    result = call("diff", {"baseline": [str(FAST)], "candidate": [str(SLOW)]})

    got = payload(result)
    code, expected = cli_json("diff", str(FAST), str(SLOW))
    assert got["exit_code"] == code
    report = got["report"]
    assert report["report"] == "diff"
    assert report["gap"] == expected["gap"] and report["differences"] == expected["differences"]
    assert report["gap"]["candidate"] < report["gap"]["baseline"]  # the vLLM DFlash side is the slow one
    assert texts(result)[0].startswith(f"diff: {report['gap']['summary']}")


def test_diff_with_pasted_sides_matches_paths() -> None:
    by_text = call(
        "diff",
        {
            "baseline_text": (ROOT / FAST).read_text(encoding="utf-8"),
            "candidate_text": (ROOT / SLOW).read_text(encoding="utf-8"),
        },
    )
    by_path = call("diff", {"baseline": [str(FAST)], "candidate": [str(SLOW)]})

    assert payload(by_text)["report"]["gap"] == payload(by_path)["report"]["gap"]
    assert [f["rule"] for f in payload(by_text)["report"]["findings"]] == [
        f["rule"] for f in payload(by_path)["report"]["findings"]
    ]


def test_missing_file_is_a_tool_error(tmp_path: Path) -> None:
    errlog = tmp_path / "server.err"
    result = call("diagnose", {"targets": ["fixtures/logs/story/no-such.log"]}, errlog=errlog)

    assert error_text(result) == "logdoctor: error: fixtures/logs/story/no-such.log: no such file"
    assert "Traceback" not in errlog.read_text()


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("diagnose", {"targets": [str(SLOW)], "gpu": "Voodoo 5"}, "Voodoo 5"),  # the CLI's usage error
        ("diagnose", {"targets": [str(SLOW)], "engine": "tgi"}, "diagnose: bad argument: engine: Value error, 'tgi'"),
        ("diagnose", {"targets": str(SLOW)}, "diagnose: bad argument: targets: Input should be a valid list"),
        ("diagnose", {}, "give targets"),
        ("diagnose", {"targets": ["-"]}, "stdin"),
        ("parse", {"targets": [str(SLOW)], "limit": 100000}, "parse: bad argument: limit: Input should be less"),
        ("diff", {"baseline": [str(FAST)]}, "no candidate"),
        ("explain", {"id": "spec-net-los"}, "did you mean spec-net-loss"),
    ],
)
def test_bad_arguments_are_tool_errors(name: str, arguments: dict[str, Any], message: str) -> None:
    got = error_text(call(name, arguments))

    assert message in got and "\n" not in got


def test_without_the_sdk_the_command_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)  # as if `mcp` were not installed

    result = CliRunner().invoke(main, ["mcp"])

    assert result.exit_code == 2
    assert result.stderr == "logdoctor: error: logdoctor mcp needs the MCP SDK: pip install 'logdoctor[mcp]'\n"


def gone(pid: int) -> bool:
    """No such process, or a zombie: it has ended (a container's init may be slow to reap)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_cancelled_call_ends_the_child_and_what_it_started(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    child = tmp_path / "python"  # stands in for `python -m logdoctor ...`: starts a grandchild and waits
    child.write_text(f"#!/bin/sh\nsleep 300 &\necho $$ $! > {pids}.tmp && mv {pids}.tmp {pids}\nwait\n")
    child.chmod(0o755)

    async def cancel_when_started() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(run_cli, ServerPolicy(python=str(child)), ["diagnose", "x.log"])
            with anyio.fail_after(30):
                while not pids.exists():
                    await anyio.sleep(0.02)
            group.cancel_scope.cancel()  # what the SDK does when the client cancels the call

    anyio.run(cancel_when_started)

    started = [int(pid) for pid in pids.read_text().split()]
    deadline = time.monotonic() + 10
    while not all(gone(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert all(gone(pid) for pid in started), started
    finally:
        for pid in started:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_target_is_never_read_as_an_option(tmp_path: Path) -> None:
    """Targets go after `--`: `--rules=DIR` written as a target is a missing file, not a rule directory."""
    result = call("diagnose", {"targets": [f"--rules={tmp_path}"]})

    assert "no such file" in error_text(result)


def test_planted_secrets_come_back_masked() -> None:
    # Constructed: the story log with secrets added in the forms vLLM prints them, and a terminal escape.
    planted = (ROOT / SLOW).read_text(encoding="utf-8") + (
        "(APIServer pid=2961) INFO 05-08 14:09:00 [api_server.py:1] args: --api-key sk-planted-5e6f7a8b "
        "--hf-token hf_plantedTOKEN1234567890\n"
        "(APIServer pid=2961) WARNING 05-08 14:09:01 [api_server.py:2] \x1b]52;c;ZWNobyBwd25lZA==\x07 model path\n"
    )

    diagnosed = call("diagnose", {"text": planted})
    parsed = call("parse", {"text": planted, "limit": 500})

    for result in (diagnosed, parsed):
        everything = json.dumps(result.model_dump(), ensure_ascii=False)
        assert not result.is_error, texts(result)
        assert "sk-planted" not in everything and "hf_plantedTOKEN" not in everything
        assert "sk-kpro5" not in everything
        assert "\x1b" not in everything and "\x07" not in everything
    assert payload(diagnosed)["report"]["findings"][0]["cause"] == "spec-low-acceptance"


def test_parse_pages_through_events_of_one_type() -> None:
    async def work(session: ClientSession) -> list[CallToolResult]:
        arguments: dict[str, Any] = {"targets": [str(SLOW)], "types": ["spec_decode_stats"], "limit": 7}
        first = await session.call_tool("parse", arguments)
        second = await session.call_tool("parse", {**arguments, "offset": 28})
        return [first, second]

    first, second = (payload(r) for r in with_server(work))
    assert first["type_counts"]["spec_decode_stats"] == first["matching"] == 30
    assert len(first["events"]) == 7 and first["next_offset"] == 7
    assert {e["type"] for e in first["events"]} == {"spec_decode_stats"}
    assert [e["line"] for e in first["events"]] == sorted(e["line"] for e in first["events"])
    assert len(second["events"]) == 2 and second["next_offset"] is None
    assert second["events"][0]["line"] > first["events"][-1]["line"]


def test_explain_causes_and_gpus() -> None:
    async def work(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("explain", {"id": "below-break-even"}),
            await session.call_tool("explain", {"id": "spec-net-loss"}),
            await session.call_tool("causes", {}),
            await session.call_tool("gpus", {}),
        ]

    rule, cause, causes, gpus = (payload(r) for r in with_server(work))
    assert rule["kind"] == "rule" and rule["rule"]["cause"] == "spec-net-loss"
    assert "spec.acceptance_length" in rule["rule"]["reads"] and rule["rule"]["fix"]["vllm"]
    assert "break-even" in rule["rule"]["description"]
    assert cause["kind"] == "cause" and "below-break-even" in [r["id"] for r in cause["rules"]]
    ids = [c["cause"] for c in causes["causes"]]
    assert ids[0] == "cuda-graphs-disabled" and "engine-failure" in ids
    assert all(c["rules"] for c in causes["causes"])
    names = {g["name"]: g for g in gpus["gpus"]}
    assert names["RTX A6000"]["memory_gb"] == 48 and "H200" in names


# --- hosts, through the SSH lab -----------------------------------------------------------------------------


def lab_story(lab: SshLab) -> Path:
    path = lab.root / "mcp-story.log"
    path.write_text((ROOT / SLOW).read_text(encoding="utf-8"), encoding="utf-8")
    return path


def test_diagnose_a_loopback_host(ssh_lab: SshLab) -> None:
    log = lab_story(ssh_lab)
    result = call(
        "diagnose",
        {"targets": ["kpro5"], "remote_logs": [str(log)]},
        "--ssh-config",
        str(ssh_lab.ssh_config),
        "--known-hosts",
        str(ssh_lab.known_hosts),
    )

    got = payload(result)
    assert got["exit_code"] == 1
    report = got["report"]
    assert report["findings"][0]["cause"] == "spec-low-acceptance"
    assert {s["kind"] for s in report["sources"]} == {"ssh"} and report["sources"][0]["host"] == "kpro5"
    assert "sk-kpro5" not in json.dumps(result.model_dump())


def test_unknown_host_key_is_a_tool_error_unless_the_server_accepts_new(ssh_lab: SshLab, tmp_path: Path) -> None:
    log = lab_story(ssh_lab)
    known = tmp_path / "known_hosts"
    known.write_text("")
    arguments = {"targets": ["kpro5"], "remote_logs": [str(log)]}
    server = ("--ssh-config", str(ssh_lab.ssh_config), "--known-hosts", str(known))

    refused = call("diagnose", arguments, *server)

    message = error_text(refused)
    assert message.startswith("logdoctor: error: kpro5: unknown host key for ")
    assert "logdoctor mcp --accept-new" in message  # who can accept it: the server's operator
    assert known.read_text() == ""  # nothing recorded: a tool argument cannot accept it

    accepted = call("diagnose", arguments, *server, "--accept-new")

    assert payload(accepted)["report"]["findings"][0]["cause"] == "spec-low-acceptance"
    assert ssh_lab.servers["kpro5"].known_name in known.read_text()


def test_a_host_down_of_two_is_a_tool_error_carrying_what_was_collected(ssh_lab: SshLab) -> None:
    log = lab_story(ssh_lab)
    down = f"root@127.0.0.6:{free_port('127.0.0.6')}"

    result = call(
        "diagnose",
        {"targets": ["kpro5", down], "remote_logs": [str(log)]},
        "--ssh-config",
        str(ssh_lab.ssh_config),
        "--known-hosts",
        str(ssh_lab.known_hosts),
        "--timeout",
        "2",
    )

    message, summary, report_text = texts(result)
    assert result.is_error and message == "logdoctor exited with 3 (collection error): collected 1 of 2 hosts"
    assert "[kpro5] problems: " in summary and f"error: {down}: " in summary
    report = json.loads(report_text)
    assert [h["host"] for h in report["hosts"]] == ["kpro5", down]
    assert report["hosts"][0]["findings"][0]["cause"] == "spec-low-acceptance"
