"""`logdoctor mcp`: the diagnosis as tools an agent calls through the Model Context Protocol (stdio).

    {"mcpServers": {"logdoctor": {"command": "logdoctor", "args": ["mcp"]}}}

Tools: diagnose, diff, parse (paged), explain, causes, gpus (docs/agents.md). diagnose, diff and parse run the CLI
itself in a child process (`python -m logdoctor ... --format json`), so the caps on bytes and time, the redaction of
secrets, the escape sanitising, the known_hosts policy and the exit codes are the CLI's and no other; an exit the CLI
counts as an error (2 usage or input, 3 collection, 4 internal) comes back as a tool error carrying the CLI's one-line
message. What the server was started with (the SSH files, --accept-new, --sudo, the caps) is fixed for the session: no
tool argument can change it, and every target is passed after `--`, so nothing a model writes is read as an option.
explain, causes and gpus read the built-in rule set and hardware table in this process.
"""

import contextlib
import difflib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from logdoctor import __version__
from logdoctor.engine.problems import FAMILIES, problem_id
from logdoctor.errors import ExitStatus
from logdoctor.sanitize import clean, one_line

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

    from logdoctor.sources.limits import ReadLimits

PAGE_LIMIT = 500  # the most events one `parse` call returns
PAGE_DEFAULT = 100

INSTRUCTIONS = """\
logdoctor reads vLLM, SGLang and NCCL logs (local files, hosts over SSH, or pasted text) and ranks why an
LLM serving deployment is slow, with the evidence lines and the flags to change. Start with `diagnose` on
the server log (or `diff` to compare a fast and a slow deployment); read the summary first, then the
findings. Use `explain` for a cause or rule id, `parse` to look at events of one type, `causes` and `gpus`
for the vocabularies."""


@dataclass(frozen=True)
class ServerPolicy:
    """What the server was started with: the same for every call, out of the model's reach."""

    limits: "ReadLimits | None" = None  # the caps on reading a local input; None: the CLI's defaults
    ssh_config: str | None = None
    known_hosts: str | None = None
    identities: tuple[str, ...] = ()
    accept_new: bool = False  # record an unknown host key (never a changed one): only when started with it
    sudo: bool = False
    timeout: float | None = None
    read_timeout: float | None = None
    max_bytes: int | None = None
    python: str = field(default_factory=lambda: sys.executable)

    def limit_args(self) -> list[str]:
        if self.limits is None:
            return []
        return [
            f"--max-read={self.limits.max_bytes}",
            f"--max-gzip-ratio={self.limits.max_gzip_ratio}",
            f"--input-timeout={self.limits.read_timeout}",
            f"--max-seconds={self.limits.max_seconds}",
        ]

    def ssh_args(self, hosts: bool) -> list[str]:
        """The SSH options of every call that has targets; the host-only ones (the CLI refuses them for files:
        fleet.HostOptions.host_only_given) when a target is a host."""
        args: list[str] = []
        if self.ssh_config:
            args.append(f"--ssh-config={self.ssh_config}")
        if self.known_hosts:
            args.append(f"--known-hosts={self.known_hosts}")
        if self.timeout is not None:
            args.append(f"--timeout={self.timeout}")
        if self.read_timeout is not None:
            args.append(f"--read-timeout={self.read_timeout}")
        if self.max_bytes is not None:
            args.append(f"--max-bytes={self.max_bytes}")
        if hosts:
            args += [f"--identity={path}" for path in self.identities]
            if self.accept_new:
                args.append("--accept-new")
            if self.sudo:
                args.append("--sudo")
        return args


class ToolFailure(Exception):
    """A call the CLI refused or could not complete: the tool's error, with the CLI's one-line message."""

    def __init__(self, message: str, report: Any = None) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class Finished:
    """A child logdoctor run: its exit code, stdout and the error lines of its stderr."""

    code: int
    stdout: bytes
    stderr: str


EXIT_MEANINGS = {2: "usage or input error", 3: "collection error", 4: "internal error"}


def error_message(stderr: str, code: int) -> str:
    """The CLI's one-line error(s) (`logdoctor: error: ...`), else its last line of stderr, else the exit."""
    lines = [one_line(line) for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("logdoctor") and "error:" in line]
    if errors:
        message = "; ".join(errors)
    else:
        meaning = f" ({EXIT_MEANINGS[code]})" if code in EXIT_MEANINGS else ""
        message = f"logdoctor exited with {code}{meaning}" + (f": {lines[-1]}" if lines else "")
    if "--accept-new" in message:  # the CLI's hint names its own flag: here it is the server's
        message += " [for this MCP server: only its operator can, by starting `logdoctor mcp --accept-new`]"
    return message


def has_hosts(targets: Sequence[str], ssh_config: str | None) -> bool:
    """Whether any target is a host, by the CLI's own test (an existing path is a file; fleet.split_targets)."""
    if not targets:
        return False
    from logdoctor.app.fleet import split_targets

    try:
        return bool(split_targets(targets, ssh_config)[1])
    except Exception:  # an unreadable ssh config: the child says so in its own words
        return False


def check_targets(targets: Sequence[str], what: str) -> list[str]:
    if any(t == "-" for t in targets):
        raise ToolFailure(f"{what}: `-` (stdin) is not a target here: give the log's text as the text argument")
    if any(not t.strip() for t in targets):
        raise ToolFailure(f"{what}: an empty target")
    return list(targets)


async def run_cli(
    policy: ServerPolicy,
    args: Sequence[str],
    stdin: bytes | None = None,
    on_line: Callable[[str], None] | None = None,
) -> Finished:
    """`python -m logdoctor ARGS` in a child process: stdout kept whole, or each line handed to `on_line` as it
    comes (then not kept). The child leads a process group of its own; a call that ends before it does (the
    client cancelled it) ends the group: SIGTERM, which the CLI unwinds to stop its grep prefilter and parse
    workers, then SIGKILL after KILL_GRACE seconds."""
    import anyio
    from anyio.streams.text import TextReceiveStream

    process = await anyio.open_process(
        [policy.python, "-m", "logdoctor", *args],
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,  # never the server's stdin: the client's channel
        env=child_environment(),
        start_new_session=True,
    )
    out: list[bytes] = []
    err: list[str] = []
    try:
        async with anyio.create_task_group() as group:

            async def feed() -> None:
                if process.stdin is not None:
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                        await process.stdin.send(stdin or b"")
                    await process.stdin.aclose()

            async def drain() -> None:
                assert process.stderr is not None
                async for chunk in TextReceiveStream(process.stderr, errors="replace"):
                    err.append(chunk)

            group.start_soon(feed)
            group.start_soon(drain)
            assert process.stdout is not None
            if on_line is None:
                async for data in process.stdout:
                    out.append(data)
            else:
                pending = ""
                async for chunk in TextReceiveStream(process.stdout, errors="replace"):
                    *complete, pending = (pending + chunk).split("\n")
                    for line in complete:
                        on_line(line)
                if pending:
                    on_line(pending)
        code = await process.wait()
    finally:
        if process.returncode is None:
            with anyio.CancelScope(shield=True):
                end_group(process.pid, signal.SIGTERM)
                with anyio.move_on_after(KILL_GRACE):
                    await process.wait()
                if process.returncode is None:
                    end_group(process.pid, signal.SIGKILL)
                    await process.wait()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    return Finished(code, b"".join(out), "".join(err))


KILL_GRACE = 5.0  # seconds a cancelled child has to unwind after SIGTERM


def end_group(pid: int, sig: signal.Signals) -> None:
    """Signal the child's process group (the child and what it started), if it is still there."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def child_environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"LOGDOCTOR_NO_PROGRESS": "1", "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
    env.pop("FORCE_COLOR", None)
    env.pop("COLUMNS", None)
    return env


def report_of(finished: Finished) -> Any:
    """The JSON the CLI printed, or a ToolFailure with its message."""
    code = finished.code
    report: Any = None
    if finished.stdout.strip():
        try:
            report = json.loads(finished.stdout)
        except ValueError:
            report = None
    if code in (int(ExitStatus.OK), int(ExitStatus.FINDINGS)) and report is not None:
        return clean(report)
    message = error_message(finished.stderr, code)
    if code in (int(ExitStatus.OK), int(ExitStatus.FINDINGS)):
        message = f"logdoctor printed no JSON report (exit {code}): {message}"
    raise ToolFailure(message, clean(report) if report is not None else None)


# --- summaries the model reads first ---------------------------------------------------------------------


def _action_text(action: dict[str, Any]) -> str:
    """`FLAG -> 50.4 tok/s per request expected (2.26x)`, as the terminal's box says it."""
    text = str(action.get("text") or "")
    if action.get("expected_tok_s") is None:
        return text
    gain = f" ({action['speedup']:.2f}x)" if isinstance(action.get("speedup"), int | float) else ""
    return f"{text} -> {action['expected_tok_s']:.1f} tok/s {action.get('basis') or 'per request'} expected{gain}"


def _problems(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's problems (diagnose's JSON), else its findings grouped by the problem each names (a diff's),
    in the shape of a problem: id, title, score, rules, effect, actions."""
    problems = report.get("problems")
    if isinstance(problems, list) and problems:
        return [p for p in problems if isinstance(p, dict)]
    grouped: dict[str, dict[str, Any]] = {}
    for f in report.get("findings") or []:
        if not isinstance(f, dict):
            continue
        cause = str(f.get("cause") or "?")
        pid = str(f.get("problem") or problem_id(cause))
        p = grouped.setdefault(
            pid,
            {"id": pid, "title": f.get("title"), "score": f.get("score"), "severity": f.get("severity"), "rules": []},
        )
        p["rules"].append(f.get("rule"))
        if len(p["rules"]) > 1 and cause in FAMILIES:
            p["title"] = FAMILIES[cause][1]  # several rules, one mechanism: the problem's title, as diagnose says
        p.setdefault("effect", f.get("effect") if isinstance(f.get("effect"), dict) else None)
        p.setdefault("estimate", f.get("estimate"))
        effect_actions = (f.get("effect") or {}).get("actions") if isinstance(f.get("effect"), dict) else None
        p.setdefault("actions", effect_actions or [{"text": step} for step in f.get("fix") or []])
    return sorted(grouped.values(), key=lambda p: -(p.get("score") or 0))


def _problem_lines(report: dict[str, Any], limit: int = 5) -> list[str]:
    """One entry a problem, as the terminal's boxes: its rules, its effect in words, the recommended action with
    its expected result, and the alternatives with theirs."""
    problems = _problems(report)
    findings = {f.get("rule"): f for f in report.get("findings") or [] if isinstance(f, dict)}
    lines: list[str] = []
    for index, p in enumerate(problems[:limit], start=1):
        rules = [r for r in p.get("rules") or [] if r]
        lines.append(
            f"{index}. {p.get('id')} (score {p.get('score')}, {p.get('severity')}): {p.get('title')}"
            f" [rule{'s' if len(rules) > 1 else ''} {', '.join(str(r) for r in rules)}]"
        )
        top = findings.get(rules[0]) if rules else None
        if top is not None and top.get("explanation"):
            lines.append(f"   why: {top['explanation']}")
        effect = p.get("effect") if isinstance(p.get("effect"), dict) else None
        said = (effect or {}).get("statement") or p.get("estimate") or (top or {}).get("estimate")
        if said:
            lines.append(f"   effect: {said}")
        actions = [a for a in p.get("actions") or [] if isinstance(a, dict) and a.get("text")]
        modelled = [a for a in actions if a.get("expected_tok_s") is not None]
        if modelled:
            lines.append(f"   recommended: {_action_text(modelled[0])}")
            if modelled[0].get("source"):
                lines.append(f"     source: {modelled[0]['source']}")
            lines += [f"   alternative: {_action_text(a)}" for a in modelled[1:]]
            lines += [f"   check: {a['text']}" for a in actions if a not in modelled][:2]
        elif actions:
            lines.append(f"   fix: {actions[0]['text']}")
        evidence = (top or {}).get("evidence") or []
        if evidence:
            first = evidence[0]
            lines.append(f"   evidence: {len(evidence)} line(s), first {first.get('source')}:{first.get('line')}")
    if len(problems) > limit:
        lines.append(f"... {len(problems) - limit} more problem(s) in the report")
    return lines


def _diagnosis_summary(report: dict[str, Any], heading: str = "") -> list[str]:
    verdict = report.get("verdict") or {}
    lines = [f"{heading}{verdict.get('kind', '?')}: {verdict.get('summary', '')}".rstrip()]
    lines += _problem_lines(report)
    performance = report.get("performance") or {}
    if isinstance(performance, dict) and performance.get("summary"):
        if performance["summary"] not in lines[0]:  # the verdict line quotes it when the bound is known
            lines.append(f"expected performance: {performance['summary']}")
    elif isinstance(performance, dict) and performance.get("unknown"):
        missing = ", ".join(str(u.get("what")) for u in performance["unknown"] if isinstance(u, dict))
        lines.append(f"expected performance: unknown (missing: {missing}; the GPU can be given as `gpu`)")
    warnings = report.get("warnings") or []
    lines += [f"warning: {w}" for w in warnings[:3]]
    errors = report.get("errors") or []
    for error in errors[:5]:
        if isinstance(error, dict):
            lines.append(f"error: {error.get('host')}: {error.get('error')}")
    return lines


def summary_of(report: Any, exit_code: int | None) -> str:
    """A short text of a diagnose or diff report: the verdict, the top problems, each with its effect and its
    recommended action with the expected result (the model's, where the GPU is known)."""
    lines: list[str] = []
    if not isinstance(report, dict):
        return f"exit {exit_code}"
    if report.get("report") == "diff":
        gap = report.get("gap") or {}
        lines.append(f"diff: {gap.get('summary') or 'throughput gap unknown'}")
        differing = [d for d in report.get("differences") or [] if d.get("matters")]
        ported: set[str] = set()
        for row in differing[:8]:
            port = ""
            if row.get("port") and row["port"] not in ported:  # one flag often ports several rows
                port = f" -> port with: {row['port']}"
                ported.add(row["port"])
            lines.append(f"- {row.get('key')}: baseline {row.get('baseline')}, candidate {row.get('candidate')}{port}")
        lines += _diagnosis_summary(report, "candidate ")
    elif isinstance(report.get("deployments") or report.get("hosts"), list):
        parts = report.get("deployments") or report.get("hosts") or []
        lines.append(f"{len(parts)} reports (one a deployment or host)")
        for part in parts:
            name = part.get("name") or part.get("host") or part.get("deployment") or "?"
            inner = part.get("report") if isinstance(part.get("report"), dict) else part
            lines += _diagnosis_summary(inner, f"[{name}] ")
    else:
        lines += _diagnosis_summary(report)
    if exit_code is not None:
        meaning = {0: "no finding at or above high", 1: "findings at or above high"}.get(exit_code, "")
        lines.append(f"exit {exit_code}" + (f" ({meaning})" if meaning else ""))
    return "\n".join(lines)


def result(summary: str, payload: dict[str, Any]) -> "CallToolResult":
    """The summary first (for the model to read), then the payload as JSON text and as structured content."""
    from mcp.types import CallToolResult, TextContent

    payload = clean(payload)
    return CallToolResult(
        content=[
            TextContent(type="text", text=clean(summary)),
            TextContent(type="text", text=json.dumps(payload, ensure_ascii=False)),
        ],
        structured_content=payload,
    )


def failure(exc: ToolFailure) -> "CallToolResult":
    from mcp.types import CallToolResult, TextContent

    content = [TextContent(type="text", text=one_line(str(exc)))]
    if exc.report is not None:  # a collection error with what was collected (a host down of several)
        content.append(TextContent(type="text", text=clean(summary_of(exc.report, None))))
        content.append(TextContent(type="text", text=json.dumps(exc.report, ensure_ascii=False)))
    return CallToolResult(content=list(content), is_error=True)


# --- the tools' work (plain functions: the server wraps them) ---------------------------------------------


def _common_args(engine: str | None, gpu: str | None, rules: Sequence[str]) -> list[str]:
    args = [f"--engine={engine}"] if engine is not None else []
    if gpu:
        args.append(f"--gpu={gpu}")
    args += [f"--rules={directory}" for directory in rules]
    return args


async def diagnose(
    policy: ServerPolicy,
    targets: Sequence[str],
    text: str | None,
    engine: str,
    gpu: str | None,
    all_runs: bool,
    rules: Sequence[str],
    remote_logs: Sequence[str],
) -> "CallToolResult":
    try:
        targets = check_targets(targets, "diagnose")
        if bool(targets) == (text is not None):
            raise ToolFailure("diagnose: give targets (paths, hosts or URLs) or text (a pasted log), one of them")
        hosts = has_hosts(targets, policy.ssh_config)
        args = ["diagnose", "--format=json", *_common_args(engine, gpu, rules), *policy.limit_args()]
        if all_runs:
            args.append("--all-runs")
        if targets:
            args += policy.ssh_args(hosts)
        args += [f"--log={path}" for path in remote_logs]
        args += ["--", *targets] if targets else ["-"]
        finished = await run_cli(policy, args, text.encode("utf-8") if text is not None else None)
        report = report_of(finished)
    except ToolFailure as exc:
        return failure(exc)
    return result(summary_of(report, finished.code), {"exit_code": finished.code, "report": report})


async def diff(
    policy: ServerPolicy,
    baseline: Sequence[str],
    candidate: Sequence[str],
    baseline_text: str | None,
    candidate_text: str | None,
    engines: tuple[str, str],
    gpu: str | None,
    rules: Sequence[str],
    remote_logs: Sequence[str],
    show_all: bool,
) -> "CallToolResult":
    scratch: str | None = None
    try:
        baseline = check_targets(baseline, "diff baseline")
        candidate = check_targets(candidate, "diff candidate")
        for name, given, pasted in (("baseline", baseline, baseline_text), ("candidate", candidate, candidate_text)):
            if not given and pasted is None:
                raise ToolFailure(f"diff: no {name}: give {name} (paths or hosts) or {name}_text (a pasted log)")
        if baseline_text is not None or candidate_text is not None:
            scratch = tempfile.mkdtemp(prefix="logdoctor-mcp-")  # 0700: the pasted logs are read by the CLI only
            for name, pasted, side in (
                ("baseline", baseline_text, baseline),
                ("candidate", candidate_text, candidate),
            ):
                if pasted is not None:
                    path = os.path.join(scratch, f"{name}.log")
                    with open(path, "w", encoding="utf-8") as out:
                        out.write(pasted)
                    side.append(path)
        hosts = has_hosts([*baseline, *candidate], policy.ssh_config)
        args = ["diff", "--format=json", f"--baseline-engine={engines[0]}", f"--candidate-engine={engines[1]}"]
        args += [*_common_args(None, gpu, rules), *policy.limit_args()]
        args += policy.ssh_args(hosts)
        args += [f"--log={path}" for path in remote_logs]
        if show_all:
            args.append("--all")
        args += [f"--baseline={t}" for t in baseline] + [f"--candidate={t}" for t in candidate]
        finished = await run_cli(policy, args)
        report = report_of(finished)
    except ToolFailure as exc:
        return failure(exc)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return result(summary_of(report, finished.code), {"exit_code": finished.code, "report": report})


async def parse(
    policy: ServerPolicy,
    targets: Sequence[str],
    text: str | None,
    types: Sequence[str],
    offset: int,
    limit: int,
    engine: str,
) -> "CallToolResult":
    """The events of `types` (all when empty), `limit` of them from `offset`, and how many of each type there are.
    The child's JSON lines are read as they come: only the page is kept."""
    try:
        targets = check_targets(targets, "parse")
        if bool(targets) == (text is not None):
            raise ToolFailure("parse: give targets (local paths) or text (a pasted log), one of them")
        args = ["parse", "--format=jsonl", f"--engine={engine}", *policy.limit_args()]
        args += ["--", *targets] if targets else ["-"]
        wanted = set(types)
        counts: dict[str, int] = {}
        page: list[Any] = []
        matching = 0

        def take(line: str) -> None:
            nonlocal matching
            try:
                event = json.loads(line) if line.strip() else None
            except ValueError:
                event = None
            if not isinstance(event, dict):
                return
            kind = str(event.get("type", "?"))
            counts[kind] = counts.get(kind, 0) + 1
            if wanted and kind not in wanted:
                return
            if offset <= matching < offset + limit:
                page.append(event)
            matching += 1

        finished = await run_cli(policy, args, text.encode("utf-8") if text is not None else None, on_line=take)
        if finished.code != int(ExitStatus.OK):
            raise ToolFailure(error_message(finished.stderr, finished.code))
    except ToolFailure as exc:
        return failure(exc)
    unknown = sorted(wanted - set(counts))
    following = offset + len(page)
    payload: dict[str, Any] = {
        "events": page,
        "offset": offset,
        "matching": matching,
        "next_offset": following if following < matching else None,
        "type_counts": dict(sorted(counts.items(), key=lambda item: -item[1])),
    }
    lines = [f"{len(page)} event(s) of {matching} matching (offset {offset}) among {sum(counts.values())} events"]
    if payload["next_offset"] is not None:
        lines.append(f"more: call again with offset={payload['next_offset']}")
    if unknown:
        lines.append(f"no event of type(s) {', '.join(unknown)} (the types found are in type_counts)")
    return result("\n".join(lines), payload)


def _rule_entry(item: Any, full: bool) -> dict[str, Any]:
    rule = item.rule
    entry: dict[str, Any] = {
        "id": rule.id,
        "cause": rule.cause,
        "title": rule.title,
        "engines": list(rule.engines),
        "mode": rule.mode,
        "status": rule.status,
    }
    if full:
        fixes: dict[str, list[str]] = {}
        for engine, items in rule.fix.root.items():
            fixes[engine] = [fix if isinstance(fix, str) else f"{fix.text} (when {fix.when})" for fix in items]
        entry.update(
            {
                "description": " ".join((rule.description or "").split()),
                "reads": list(rule.requires),
                "when": rule.when,
                "impact": rule.impact,
                "fix": fixes,
                "references": list(rule.references),
            }
        )
    return entry


def explain(policy: ServerPolicy, identifier: str) -> "CallToolResult":
    from logdoctor.engine.rules import CAUSES, load_rules

    del policy
    loaded = load_rules((), builtin=True)
    for item in loaded:
        if item.id == identifier:
            entry = _rule_entry(item, full=True)
            text = f"rule {item.id} (cause {entry['cause']}): {entry['title']}\n{entry['description']}"
            return result(text, {"kind": "rule", "rule": entry})
    if identifier in CAUSES:
        members = [_rule_entry(item, full=True) for item in loaded if item.rule.cause == identifier]
        lines = [f"cause {identifier}: {len(members)} rule(s)"]
        lines += [f"- {m['id']} ({', '.join(m['engines'])}; {m['mode']}): {m['title']}" for m in members]
        return result("\n".join(lines), {"kind": "cause", "cause": identifier, "rules": members})
    known = [*CAUSES, *(item.id for item in loaded)]
    close = difflib.get_close_matches(identifier, known, n=3)
    hint = f" (did you mean {', '.join(close)}?)" if close else " (the `causes` tool lists every cause and rule)"
    return failure(ToolFailure(f"no rule or cause with id '{identifier}'{hint}"))


def causes(policy: ServerPolicy) -> "CallToolResult":
    from logdoctor.engine.rules import CAUSES, load_rules

    del policy
    loaded = load_rules((), builtin=True)
    entries: list[dict[str, Any]] = []
    lines: list[str] = []
    for cause in CAUSES:
        members = [_rule_entry(item, full=False) for item in loaded if item.rule.cause == cause]
        entries.append({"cause": cause, "rules": members})
        lines.append(f"{cause}: " + "; ".join(str(r["title"]) for r in members if r["mode"] == "diagnose"))
    return result("\n".join(lines), {"causes": entries})


def gpus(policy: ServerPolicy) -> "CallToolResult":
    from logdoctor.perf.hardware import load_hardware

    del policy
    table = load_hardware()
    entries = [
        {
            "name": gpu.name,
            "aliases": list(gpu.aliases),
            "vendor": gpu.vendor,
            "memory_gb": gpu.memory_gb,
            "memory_bandwidth_gb_s": gpu.memory_bandwidth_gb_s,
            "bf16_tflops": gpu.bf16_tflops,
            "fp8_tflops": gpu.fp8_tflops,
            "nvlink_gb_s": gpu.nvlink.bandwidth_gb_s if gpu.nvlink else None,
        }
        for gpu in table.gpus
    ]
    text = "GPU names for diagnose's gpu argument (any alias works too): " + ", ".join(g.name for g in table.gpus)
    return result(text, {"gpus": entries})


# --- the server -----------------------------------------------------------------------------------------------

DIAGNOSE_DESCRIPTION = """\
Rank the likely causes of a slow vLLM / SGLang deployment from its logs (the same report as
`logdoctor diagnose --format json`). Give `targets` (local log paths; files of one deployment are diagnosed
together: a server log, its NCCL log, a pasted benchmark table; hosts such as `user@gpu-host` or an ssh-config
alias, whose server logs are found over SSH; `prometheus://HOST:PORT`) or `text` (a pasted log). Returns a short
summary to read first (verdict, top findings with why, fix and evidence) and the versioned JSON report
(docs/json.md): findings ranked by score, each with evidence lines, fixes and references; what was ruled out;
what could not be checked and why. Cost: reads each log whole (seconds for a large log); a host target opens
an SSH connection and reads up to the server's byte cap. exit_code 1 means findings at or above high."""

DIFF_DESCRIPTION = """\
Compare a fast deployment (baseline) with a slow one (candidate): `logdoctor diff --format json`. Each side is
log paths, hosts, or pasted text (`baseline_text`, `candidate_text`); the engines may differ. Returns a summary
(the throughput gap and the settings that differ, with the flag that ports the baseline's value) and the diff
report: every setting in engine-neutral names, the candidate's findings, regression rules included. Cost:
reads both sides whole."""

PARSE_DESCRIPTION = """\
The typed events logdoctor reads from a log (`logdoctor parse --format jsonl`), a page at a time: to look closer
at what a finding read (for instance `types: ["spec_decode_stats"]`) without pulling the whole log. Give local
`targets` or `text`. Returns `events` (each with type, source, line and its fields), `type_counts` (every event
type in the log and how many), `matching` and `next_offset` for the next page. Cost: parses the whole log on
every call; only the page is returned."""

EXPLAIN_DESCRIPTION = """\
What a rule id (as in a finding's `rule`) or a cause id (a finding's `cause`) means: the rule's description,
the facts it reads, its condition, its fixes per engine and its references; for a cause, each of its rules.
Cheap: reads the built-in rule set."""

CAUSES_DESCRIPTION = """\
Every cause id logdoctor can report (a stable public vocabulary) with the titles of its rules. Cheap."""

GPUS_DESCRIPTION = """\
The GPUs logdoctor knows (name, aliases, memory, bandwidth, tensor peaks): the names `diagnose` and `diff`
accept as `gpu` for the expected-performance bound. Cheap."""


def build_server(policy: ServerPolicy) -> "MCPServer":
    """The MCP server with its six tools, each calling the function of the same name above."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
    from pydantic import AfterValidator, Field, ValidationError

    from logdoctor.registry import engine_choices

    class Server(MCPServer[Any]):
        async def call_tool(
            self, name: str, arguments: dict[str, Any], context: Any = None
        ) -> CallToolResult | InputRequiredResult:
            """The SDK's call; arguments that fail the schema are one line naming each argument and what is wrong
            (the SDK's message is pydantic's, several lines with a link)."""
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if not isinstance(exc.__cause__, ValidationError):
                    raise
                problems = "; ".join(
                    f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
                    for error in exc.__cause__.errors()
                )
                raise ToolError(one_line(f"{name}: bad argument: {problems}")) from exc.__cause__

    engines = engine_choices()

    def known_engine(value: str) -> str:
        if value not in engines:
            raise ValueError(f"{value!r} is not one of {', '.join(engines)}")
        return value

    EngineArg = Annotated[
        str,
        Field(description="Force the engine instead of detecting it.", json_schema_extra={"enum": engines}),
        AfterValidator(known_engine),
    ]
    Targets = Annotated[
        list[str],
        Field(description="Local log paths, or hosts (user@host, ssh://host, an ssh-config alias), or URLs."),
    ]
    Text = Annotated[str | None, Field(description="A pasted log (instead of targets).")]
    Gpu = Annotated[
        str | None,
        Field(description="The GPU the deployment runs on (see the gpus tool), for the expected tok/s."),
    ]
    Rules = Annotated[list[str], Field(description="Extra rule directories (on this machine) to load.")]
    RemoteLogs = Annotated[
        list[str],
        Field(description="For host targets: read these remote log paths or globs instead of discovering logs."),
    ]
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=True)
    local = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

    server = Server(name="logdoctor", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(name="diagnose", description=DIAGNOSE_DESCRIPTION, annotations=read_only)
    async def diagnose_tool(
        targets: Targets = [],  # noqa: B006 (pydantic copies defaults)
        text: Text = None,
        engine: EngineArg = "auto",
        gpu: Gpu = None,
        all_runs: Annotated[
            bool, Field(description="Diagnose every server start in a log, not only the last.")
        ] = False,
        rules: Rules = [],  # noqa: B006
        remote_logs: RemoteLogs = [],  # noqa: B006
    ) -> CallToolResult:
        return await diagnose(policy, targets, text, engine, gpu, all_runs, rules, remote_logs)

    @server.tool(name="diff", description=DIFF_DESCRIPTION, annotations=read_only)
    async def diff_tool(
        baseline: Annotated[list[str], Field(description="The fast deployment's log paths or hosts.")] = [],  # noqa: B006
        candidate: Annotated[list[str], Field(description="The slow deployment's log paths or hosts.")] = [],  # noqa: B006
        baseline_text: Annotated[str | None, Field(description="The fast deployment's log, pasted.")] = None,
        candidate_text: Annotated[str | None, Field(description="The slow deployment's log, pasted.")] = None,
        baseline_engine: EngineArg = "auto",
        candidate_engine: EngineArg = "auto",
        gpu: Gpu = None,
        rules: Rules = [],  # noqa: B006
        remote_logs: RemoteLogs = [],  # noqa: B006
        show_all: Annotated[bool, Field(description="Also return equal rows and rows neither side shows.")] = False,
    ) -> CallToolResult:
        return await diff(
            policy,
            baseline,
            candidate,
            baseline_text,
            candidate_text,
            (baseline_engine, candidate_engine),
            gpu,
            rules,
            remote_logs,
            show_all,
        )

    @server.tool(name="parse", description=PARSE_DESCRIPTION, annotations=local)
    async def parse_tool(
        targets: Annotated[list[str], Field(description="Local log paths.")] = [],  # noqa: B006
        text: Text = None,
        types: Annotated[list[str], Field(description="Event types to return (all when empty); see type_counts.")] = [],  # noqa: B006
        offset: Annotated[int, Field(ge=0, description="Matching events to skip (a page's next_offset).")] = 0,
        limit: Annotated[int, Field(ge=1, le=PAGE_LIMIT, description="Events to return.")] = PAGE_DEFAULT,
        engine: EngineArg = "auto",
    ) -> CallToolResult:
        return await parse(policy, targets, text, types, offset, limit, engine)

    @server.tool(name="explain", description=EXPLAIN_DESCRIPTION, annotations=local)
    def explain_tool(
        id: Annotated[str, Field(description="A rule id (below-break-even) or a cause id (spec-net-loss).")],
    ) -> CallToolResult:
        return explain(policy, id)

    @server.tool(name="causes", description=CAUSES_DESCRIPTION, annotations=local)
    def causes_tool() -> CallToolResult:
        return causes(policy)

    @server.tool(name="gpus", description=GPUS_DESCRIPTION, annotations=local)
    def gpus_tool() -> CallToolResult:
        return gpus(policy)

    return server


def serve(policy: ServerPolicy) -> None:
    """Serve over stdin/stdout until the client closes them."""
    build_server(policy).run("stdio")
