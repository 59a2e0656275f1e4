"""What the SSH collector's host scripts answered (logdoctor/sources/hostscripts.py), read back: the probe,
the server processes, containers, units and log files found, and the sources to read in order.

Scripts print records framed by NUL bytes (`kind:value\\0`), so a file name with a newline survives:

    proc:4242:python -m vllm serve Qwen/Qwen3-8B --port 8000
    fd:4242:1:/root/vllm-serve.log
    file:/var/log/sglang/server.log.1
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from logdoctor.redact import redact
from logdoctor.sources.hostscripts import (
    ENGINE_NAMES,
    ENGINE_RE,
    LOG_GLOBS,
    READ_FILE_SCRIPT,
    READ_STREAM_SCRIPT,
    SEARCH_DEPTH,
    SERVER_PATTERNS,
    remote_command,
)
from logdoctor.sources.local import ere_alternation


def records(data: bytes) -> list[tuple[str, str]]:
    """`kind:value` records of a NUL-framed answer (anything a login script printed first is dropped)."""
    out: list[tuple[str, str]] = []
    chunks = data.split(b"\0")
    for chunk in chunks[1:] if len(chunks) > 1 else chunks:
        if not chunk:
            continue
        kind, sep, value = chunk.decode("utf-8", "surrogateescape").partition(":")
        if sep:
            out.append((kind, value))
    return out


def surrogate_safe(text: str) -> str:
    """A str that encodes as UTF-8 (undecodable bytes of a remote name shown as U+FFFD)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@dataclass
class Probe:
    home: str = ""
    user: str = ""
    tools: set[str] = field(default_factory=set)


def parse_probe(data: bytes) -> Probe:
    probe = Probe()
    for kind, value in records(data):
        if kind == "home":
            probe.home = value
        elif kind == "user":
            probe.user = value
        elif kind == "tool":
            probe.tools.add(value)
    return probe


@dataclass
class ServerProcess:
    """A running vLLM/SGLang server process and where its output goes."""

    pid: int
    cmdline: str
    ppid: int | None = None
    argv0: str = ""
    exe: str = ""
    cgroup: str = ""
    fds: dict[int, str] = field(default_factory=dict)
    denied_fds: list[int] = field(default_factory=list)

    def short(self, width: int = 80) -> str:
        text = self.cmdline.strip()
        return text if len(text) <= width else text[: width - 3] + "..."


@dataclass(frozen=True)
class Container:
    runtime: str
    id: str
    image: str
    name: str
    command: str


@dataclass
class Discovery:
    processes: list[ServerProcess] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    rotated: list[str] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _split_pid(value: str) -> tuple[int, str] | None:
    pid, _, rest = value.partition(":")
    return (int(pid), rest) if pid.isdigit() else None


def parse_discovery(data: bytes) -> Discovery:
    found = Discovery()
    procs: dict[int, ServerProcess] = {}
    for kind, value in records(data):
        if kind not in ("file", "rotated", "fd"):
            # only paths keep undecodable bytes (surrogate escapes), so a non-UTF-8 name can be read back
            value = surrogate_safe(value)
        if kind == "searched":
            what, _, rest = value.partition(":")
            if what == "processes":
                found.searched.append("running processes whose command line contains " + ", ".join(SERVER_PATTERNS))
            elif what == "dir":
                found.searched.append(
                    f"{rest}: {'/'.join(LOG_GLOBS)} files named *.log, *.log.N, *.log-DATE (depth {SEARCH_DEPTH})"
                )
            elif what == "runtime":
                found.searched.append(
                    f"{rest} ps: running containers whose image, name or command mentions {'/'.join(ENGINE_NAMES)}"
                )
            elif what == "systemd":
                found.searched.append(f"systemd services whose name or description mentions {'/'.join(ENGINE_NAMES)}")
            continue
        if kind == "proc":
            parsed = _split_pid(value)
            if parsed:
                # masked here, so no report line, note or saved file ever carries an --api-key value
                procs[parsed[0]] = ServerProcess(pid=parsed[0], cmdline=redact(parsed[1].strip()))
            continue
        if kind in ("ppid", "argv0", "exe", "cgroup"):
            parsed = _split_pid(value)
            if parsed is None or parsed[0] not in procs:
                continue
            proc = procs[parsed[0]]
            if kind == "ppid":
                proc.ppid = int(parsed[1]) if parsed[1].isdigit() else None
            elif kind == "argv0":
                proc.argv0 = parsed[1]
            elif kind == "exe":
                proc.exe = parsed[1]
            else:
                proc.cgroup = parsed[1]
            continue
        if kind in ("fd", "fddenied"):
            parsed = _split_pid(value)
            if parsed is None or parsed[0] not in procs:
                continue
            fd_text, _, target = parsed[1].partition(":")
            if not fd_text.isdigit():
                continue
            if kind == "fd":
                procs[parsed[0]].fds[int(fd_text)] = target
            else:
                procs[parsed[0]].denied_fds.append(int(fd_text))
            continue
        if kind == "symlink-out":
            found.notes.append(
                f"{surrogate_safe(value)}: skipped, a symbolic link out of its log's directory "
                "(name it with --log to read it)"
            )
            continue
        if kind == "file":
            found.files.append(value)
        elif kind == "rotated":
            found.rotated.append(value)
        elif kind == "containers":
            runtime, _, table = value.partition(":")
            found.containers.extend(_parse_containers(runtime, table))
        elif kind == "runtime-error":
            runtime, _, text = value.partition(":")
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "failed")
            found.notes.append(f"{runtime} ps failed: {first[:200]}")
        elif kind == "units":
            found.units.extend(_parse_units(value))
    found.processes = list(procs.values())
    return found


def _parse_containers(runtime: str, table: str) -> list[Container]:
    out = []
    for line in table.splitlines():
        parts = line.split("|", 3)
        if len(parts) < 3 or not re.fullmatch(r"[0-9a-f]{6,64}", parts[0].strip()):
            continue
        command = parts[3] if len(parts) > 3 else ""
        out.append(Container(runtime, parts[0].strip(), parts[1].strip(), parts[2].strip(), command.strip()))
    return out


def _parse_units(table: str) -> list[str]:
    units = []
    for line in table.splitlines():
        fields = line.replace("●", " ").split()
        if not fields or not fields[0].endswith(".service"):
            continue
        if ENGINE_RE.search(line):
            units.append(fields[0])
    return units


# --- from what was found to what to read -------------------------------------------------------------

_DOCKER_CGROUP_RE = re.compile(r"(?:docker[-/]|/docker/)([0-9a-f]{64})")
_PODMAN_CGROUP_RE = re.compile(r"libpod-([0-9a-f]{64})")
_UNIT_CGROUP_RE = re.compile(r"/([^/\s]+\.service)(?:/|\s|$)")
_ROTATION_RE = re.compile(r"\.(\d+)(?:\.gz)?$|-(\d{8,10})(?:\.gz)?$")


@dataclass(frozen=True)
class SourcePlan:
    """One remote source to read: a file, a container's log, or a journald unit."""

    reader: str  # "file" | "docker" | "podman" | "journald"
    target: str  # path (undecodable bytes as surrogate escapes), container id or unit
    path: str  # what reports show: the path (valid UTF-8), `docker:NAME`, `journald:UNIT`
    origin: str  # "process" | "file" | "rotated" | "log" | "docker" | "journald"
    description: str
    base_name: str

    def command(self, budget: int, keywords: Sequence[str], *, sudo: bool, compress: bool = False) -> str:
        """The read command; `compress`: the host gzips the kept lines (it has gzip), sent after a marker line."""
        pattern = ere_alternation(keywords)
        z = "gzip" if compress else ""
        if self.reader == "file":
            return remote_command(READ_FILE_SCRIPT, [self.target, str(budget), pattern, z], sudo=sudo)
        return remote_command(READ_STREAM_SCRIPT, [self.reader, self.target, str(budget), pattern, z], sudo=sudo)


def rotation_key(path: str) -> tuple[int, int, str]:
    """Newest first: `x.log.1` before `x.log.2.gz`; dated `x.log-20250102` before `x.log-20250101`."""
    m = _ROTATION_RE.search(path)
    if m is None:
        return (0, 0, path)
    if m.group(1) is not None:
        return (1, int(m.group(1)), path)
    return (2, -int(m.group(2)), path)


def is_rotated(path: str) -> bool:
    return _ROTATION_RE.search(os.path.basename(path)) is not None and not path.endswith(".log")


def plan_sources(found: Discovery) -> tuple[list[SourcePlan], list[str], list[str]]:
    """Order what discovery found into sources to read: (plans, found-lines for the report, notes)."""
    plans: list[SourcePlan] = []
    used_targets: set[str] = set()
    found_lines: list[str] = []
    notes: list[str] = []

    def add(plan: SourcePlan) -> None:
        if plan.target in used_targets:
            return
        used_targets.add(plan.target)
        plans.append(plan)

    by_pid = {p.pid: p for p in found.processes}
    for proc in found.processes:
        parent = by_pid.get(proc.ppid or -1)
        if parent is not None and parent.cmdline == proc.cmdline:
            continue  # a forked worker of a server already listed
        found_lines.append(f"process {proc.pid}: {proc.short()}")
        targets = dict.fromkeys(proc.fds.values())
        for target in targets:
            fds = ", ".join(f"fd {n}" for n, t in sorted(proc.fds.items()) if t == target)
            shown = surrogate_safe(target)
            if target.startswith("/dev/"):
                if target != "/dev/null":
                    notes.append(
                        f"process {proc.pid} writes its output ({fds}) to a terminal {shown}: not readable; give --log"
                    )
                else:
                    notes.append(f"process {proc.pid} discards its output ({fds} -> /dev/null)")
                continue
            if target.startswith("/"):
                deleted = target.endswith(" (deleted)")
                fd_num = next(n for n, t in sorted(proc.fds.items()) if t == target)
                path = f"/proc/{proc.pid}/fd/{fd_num}" if deleted else target
                desc = f"{fds} of process {proc.pid}" + (f" (deleted file {shown[:-10]})" if deleted else "")
                base = os.path.basename(target.removesuffix(" (deleted)"))
                add(SourcePlan("file", path, surrogate_safe(path), "process", desc, base))
                continue
            # a pipe or socket: follow it to a container runtime or a systemd unit when we can
            plan = _plan_from_cgroup(proc, fds, found)
            if plan is not None:
                add(plan)
            else:
                notes.append(
                    f"process {proc.pid} writes its output ({fds}) to {shown}, which logdoctor cannot follow; give --log"
                )
        if proc.denied_fds and not proc.fds:
            notes.append(
                f"permission denied reading where process {proc.pid} writes its output (/proc/{proc.pid}/fd); try --sudo"
            )
    for c in found.containers:
        if ENGINE_RE.search(f"{c.image} {c.name} {c.command}"):
            add(_container_plan(c.runtime, c.id, c.name, f"container {c.name} ({c.image})"))
    for unit in found.units:
        add(SourcePlan("journald", unit, f"journald:{unit}", "journald", f"journald unit {unit}", f"journal-{unit}"))
    current = [f for f in found.files if not is_rotated(f)]
    rotated = sorted({*found.rotated, *(f for f in found.files if is_rotated(f))}, key=rotation_key)
    for path in current:
        add(SourcePlan("file", path, surrogate_safe(path), "file", "log file", os.path.basename(path)))
    for path in rotated:
        add(SourcePlan("file", path, surrogate_safe(path), "rotated", "rotated log file", os.path.basename(path)))
    return plans, found_lines, notes


def _container_plan(runtime: str, cid: str, name: str, description: str) -> SourcePlan:
    return SourcePlan(
        runtime, cid, f"{runtime}:{name or cid[:12]}", "docker", description, f"{runtime}-{name or cid[:12]}"
    )


def _plan_from_cgroup(proc: ServerProcess, fds: str, found: Discovery) -> SourcePlan | None:
    m = _DOCKER_CGROUP_RE.search(proc.cgroup)
    runtime = "docker"
    if m is None:
        m = _PODMAN_CGROUP_RE.search(proc.cgroup)
        runtime = "podman"
    if m is not None:
        cid = m.group(1)
        known = next((c for c in found.containers if cid.startswith(c.id) or c.id.startswith(cid)), None)
        name = known.name if known else ""
        return _container_plan(runtime, known.id if known else cid, name, f"container of process {proc.pid} ({fds})")
    unit = _UNIT_CGROUP_RE.search(proc.cgroup)
    if unit is not None:
        name = unit.group(1)
        return SourcePlan(
            "journald", name, f"journald:{name}", "journald", f"journald unit of process {proc.pid}", f"journal-{name}"
        )
    return None


def python_candidates(processes: Iterable[ServerProcess]) -> list[str]:
    """Interpreters to ask for engine versions: the servers' own (venv first), then python3/python."""
    out: list[str] = []
    for proc in processes:
        argv0 = proc.argv0
        if argv0.startswith("/"):
            base = os.path.basename(argv0)
            if base.startswith("python"):
                out.append(argv0)
            else:  # a console script such as /opt/venv/bin/vllm: its venv's python sits beside it
                out += [os.path.join(os.path.dirname(argv0), "python3"), os.path.join(os.path.dirname(argv0), "python")]
        if proc.exe.startswith("/") and os.path.basename(proc.exe).startswith("python"):
            out.append(proc.exe.removesuffix(" (deleted)"))
    out += ["python3", "python"]
    return list(dict.fromkeys(out))
