"""What the SSH collector runs on a host: the shell scripts and the exact command line each travels in.

Every remote command is `[sudo -n] sh -c SCRIPT sh ARG...`: SCRIPT is one of the constant POSIX shell
scripts below (it never contains a user-supplied value), and every value (a path, a glob, a keyword,
a container id) travels as a separately `shlex.quote`d positional argument. Paths reach commands only
as `"$f"` in a redirection, globs are expanded with `IFS=` from an unquoted variable (so `$(...)`,
`;` or a newline inside a name is matched as text, never run). Tools used on the host: sh, grep, awk,
od, tr, wc, gzip, find, readlink, head, ls (plus docker/podman, systemctl/journalctl, nvidia-smi and
python when present). Nothing is installed or written on the host.

What to look for comes from the engine registry: each serving engine's `process_hints` (command-line
fragments), `log_globs` (log file names) and `distribution` (the package `pip show` knows). Those values
are built into the scripts once, at import, each shell-quoted as a separate word (`shlex.quote`), and the
names that land inside a quoted program text (the engine and distribution names) must be plain words
(`[A-Za-z0-9][A-Za-z0-9._-]*`), checked here.

Scripts print records framed by NUL bytes (`kind:value\\0`; read back in logdoctor/sources/discovery.py), so a
file name with a newline survives:

    proc:4242:python -m vllm serve Qwen/Qwen3-8B --port 8000
    fd:4242:1:/root/vllm-serve.log
    file:/var/log/sglang/server.log.1
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from logdoctor.registry import REGISTRY, EngineSpec

_PLAIN_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def discovered_engines(registered: Sequence[EngineSpec] | None = None) -> tuple[EngineSpec, ...]:
    """The engines discovery looks for: the registered ones (or `registered`) that say how their server
    process is called."""
    specs = tuple(spec for spec in (REGISTRY.specs() if registered is None else registered) if spec.process_hints)
    for spec in specs:
        if "\n" in spec.label or "\r" in spec.label:
            raise ValueError(f"engine {spec.name!r}: its label is one line (it heads the discovery script)")
        for word in (spec.name, spec.distribution or spec.name):
            if not _PLAIN_WORD_RE.fullmatch(word):
                raise ValueError(f"engine {spec.name!r}: {word!r} is not a plain name ([A-Za-z0-9._-]) for discovery")
    return specs


def _any_case(glob: str) -> str:
    """`*vllm*` -> `*[vV][lL][lL][mM]*`: a file-name glob that `find -name` matches in any case."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in glob)


_ENGINES = discovered_engines()
# Command lines that identify a serving process (the host's /proc/PID/cmdline, NULs as spaces).
SERVER_PATTERNS: tuple[str, ...] = tuple(hint for spec in _ENGINES for hint in spec.process_hints)
# A process, container or systemd unit is looked at only when its command line or name has an engine's name.
ENGINE_NAMES: tuple[str, ...] = tuple(spec.name for spec in _ENGINES)
ENGINE_RE = re.compile("|".join(re.escape(name) for name in ENGINE_NAMES), re.IGNORECASE)
LOG_GLOBS: tuple[str, ...] = tuple(glob for spec in _ENGINES for glob in spec.log_globs)
DISTRIBUTIONS: tuple[str, ...] = tuple(spec.distribution or spec.name for spec in _ENGINES)
SEARCH_DEPTH = 3
FACT_LIMIT = 256 * 1024  # bytes kept of one host-fact command's output

# --- scripts ------------------------------------------------------------------------------------

PROBE_SCRIPT = r"""# logdoctor probe: who am I, where is home, which tools exist
printf '\000'
printf 'home:%s\000' "$HOME"
printf 'user:%s\000' "$(id -un 2>/dev/null)"
for t in grep awk od tr wc gzip find readlink head ls sudo docker podman systemctl journalctl nvidia-smi python3; do
  command -v "$t" >/dev/null 2>&1 && printf 'tool:%s\000' "$t"
done
exit 0
"""

SUDO_PROBE = "sudo -n true"

_CASE_PATTERNS = "|".join(f"*{shlex.quote(p)}*" for p in SERVER_PATTERNS)
_GREP_WORDS = " ".join(f"-e {shlex.quote(name)}" for name in ENGINE_NAMES)
_FIND_NAMES = " -o ".join(f"-name {shlex.quote(_any_case(glob))}" for glob in LOG_GLOBS)
_LABELS = "/".join(spec.label for spec in _ENGINES)

DISCOVERY_SCRIPT = (
    "# logdoctor-discovery: find "
    + _LABELS
    + r""" logs (read-only); $1 = the login user's home
home=$1
LC_ALL=C
export LC_ALL
printf '\000'
me=$$
printf 'searched:processes\000'
for c in $(grep -l -a -i """
    + _GREP_WORDS
    + r""" /proc/[0-9]*/cmdline 2>/dev/null); do
  d=${c%/cmdline}
  pid=${d#/proc/}
  [ "$pid" = "$me" ] && continue
  cmd=$(tr '\000' ' ' 2>/dev/null < "$c") || continue
  case $cmd in
    *logdoctor-discovery*|'') continue ;;
    """
    + _CASE_PATTERNS
    + r""") ;;
    *) continue ;;
  esac
  printf 'proc:%s:%s\000' "$pid" "$cmd"
  ppid=$(grep '^PPid:' "$d/status" 2>/dev/null | tr -dc '0-9')
  printf 'ppid:%s:%s\000' "$pid" "$ppid"
  a0=$(tr '\000' '\n' 2>/dev/null < "$c" | head -n 1)
  printf 'argv0:%s:%s\000' "$pid" "$a0"
  if exe=$(readlink "$d/exe" 2>/dev/null); then printf 'exe:%s:%s\000' "$pid" "$exe"; fi
  if cg=$(tr '\n' ' ' 2>/dev/null < "$d/cgroup"); then printf 'cgroup:%s:%s\000' "$pid" "$cg"; fi
  for fd in 1 2; do
    if t=$(readlink "$d/fd/$fd" 2>/dev/null); then
      printf 'fd:%s:%s:%s\000' "$pid" "$fd" "$t"
      case $t in
        /dev/*) ;;
        /*)
          b=${t% (deleted)}
          bd=$(readlink -f -- "${b%/*}" 2>/dev/null)
          for s in "$b".[0-9]* "$b"-[0-9]*; do
            if [ -L "$s" ]; then
              # a rotated sibling that is a symlink is read only when it points into the log's directory
              st=$(readlink -f -- "$s" 2>/dev/null)
              case $st in
                "$bd"/*) [ -n "$bd" ] || { printf 'symlink-out:%s\000' "$s"; continue; } ;;
                *) printf 'symlink-out:%s\000' "$s"; continue ;;
              esac
            fi
            if [ -f "$s" ]; then printf 'rotated:%s\000' "$s"; fi
          done ;;
      esac
    else
      printf 'fddenied:%s:%s\000' "$pid" "$fd"
    fi
  done
done
dirs=$home
if [ "$home" != /root ] && [ -r /root ] && [ -x /root ]; then dirs="$dirs
/root"; fi
dirs="$dirs
/var/log"
IFS='
'
for dir in $dirs; do
  unset IFS
  [ -n "$dir" ] && [ -d "$dir" ] || continue
  printf 'searched:dir:%s\000' "$dir"
  find "$dir" -xdev -maxdepth """
    + str(SEARCH_DEPTH)
    + r""" -type f \( """
    + _FIND_NAMES
    + r""" \) \( -name '*.log' -o -name '*.log.[0-9]*' -o -name '*.log-[0-9]*' \) -exec printf 'file:%s\000' {} + 2>/dev/null
done
unset IFS
for rt in docker podman; do
  command -v "$rt" >/dev/null 2>&1 || continue
  printf 'searched:runtime:%s\000' "$rt"
  if out=$("$rt" ps --no-trunc --format '{{.ID}}|{{.Image}}|{{.Names}}|{{.Command}}' 2>&1 </dev/null); then
    printf 'containers:%s:%s\000' "$rt" "$out"
  else
    printf 'runtime-error:%s:%s\000' "$rt" "$out"
  fi
done
if command -v systemctl >/dev/null 2>&1; then
  if out=$(systemctl list-units --all --type=service --no-legend --plain --no-pager 2>/dev/null </dev/null); then
    printf 'searched:systemd\000'
    printf 'units:%s\000' "$out"
  fi
fi
exit 0
"""
)

LIST_SCRIPT = r"""# logdoctor list: expand the --log paths and globs on the host ($1... = patterns)
LC_ALL=C
export LC_ALL
printf '\000'
i=0
for p do
  i=$((i + 1))
  case $p in
    '~') p=$HOME ;;
    '~/'*) p=$HOME/${p#??} ;;
  esac
  n=0
  IFS=
  for f in $p; do
    if [ -e "$f" ] || [ -L "$f" ]; then
      n=$((n + 1))
      if [ "$f" != "$p" ] && [ -L "$f" ]; then
        # matched by a glob, not named: a symlink is read only when it points into its own directory
        case $f in */*) fd=${f%/*} ;; *) fd=. ;; esac
        fd=$(readlink -f -- "${fd:-/}" 2>/dev/null)
        ft=$(readlink -f -- "$f" 2>/dev/null)
        case $ft in
          "$fd"/*) [ -n "$fd" ] || { printf 'symlink-out:%s:%s\000' "$i" "$f"; continue; } ;;
          *) printf 'symlink-out:%s:%s\000' "$i" "$f"; continue ;;
        esac
      fi
      printf 'match:%s:%s\000' "$i" "$f"
    fi
  done
  unset IFS
  if [ "$n" -eq 0 ]; then
    if ls -d -- "$p" 2>&1 | grep -q 'Permission denied'; then r=permission; else r=not-found; fi
    printf 'nomatch:%s:%s\000' "$i" "$r"
  fi
done
exit 0
"""

# awk: keep at most `max` bytes of `N:text` lines: the first half as they come, then the newest
# lines that fit in what is left; say how many lines were skipped in between, and, last, how many
# lines it sent (the reader checks that as many arrived: a read cut anywhere lacks this line).
_CAP_AWK = r"""BEGIN { half = int(max / 2) }
/^#logdoctor-/ { print; next }
{
  n = length($0) + 1
  if (!tailing && used + n <= half) { print; used += n; sent++; next }
  tailing = 1
  buf[t] = $0; bl[t] = n; t++; tb += n
  while (h < t && tb > max - used) { tb -= bl[h]; sb += bl[h]; delete buf[h]; delete bl[h]; h++; sk++ }
}
END {
  if (sk > 0) print "#logdoctor-skipped " sk " " sb
  for (i = h; i < t; i++) { print buf[i]; sent++ }
  print "#logdoctor-sent " (sent + 0)
}"""

# awk: number the lines of a stream (docker logs, journalctl) and count its bytes, for the grep after it.
_NUMBER_AWK = r"""{ bytes += length($0) + 1; print NR ":" $0 }
END { print "#logdoctor-size " (bytes + 0) }"""


# The checks of a log file `$f` both remote readers start with (this one and sshfollow.FOLLOW_SCRIPT): one
# #logdoctor-error line for a directory, something not a regular file, no permission or no such file.
FILE_CHECKS = r"""LC_ALL=C
export LC_ALL
if [ -d "$f" ]; then echo '#logdoctor-error directory'; exit 0; fi
if [ -e "$f" ] && [ ! -f "$f" ]; then echo '#logdoctor-error not-regular'; exit 0; fi
if ! (: < "$f") 2>/dev/null; then
  if [ -e "$f" ] || ls -d -- "$f" 2>&1 | grep -q 'Permission denied'; then echo '#logdoctor-error permission'; else echo '#logdoctor-error not-found'; fi
  exit 0
fi
"""

READ_FILE_SCRIPT = (
    r"""# logdoctor read-file: $1 = path, $2 = byte budget, $3 = the keywords as one escaped ERE alternation,
# $4 = gzip: compress what is sent (after a #logdoctor-gzip-stream line)
f=$1
max=$2
re=$3
z=$4
"""
    + FILE_CHECKS
    + r"""# grep holds a whole line in memory: a NUL hole (what copytruncate leaves) or a line of gigabytes would take
# that much of the host's memory; 1 GiB of address space at most, and the NULs of a sparse file's holes
# dropped before grep (NULs are not newlines, so line numbers do not change).
capped_grep() { ( ulimit -v 1048576 2>/dev/null; exec grep -a -n -E -e "$re" ); }
read_file() {
size=$(wc -c < "$f")
echo "#logdoctor-size $size"
holes=
blocks=$(du -k -- "$f" 2>/dev/null | cut -f1)
case $blocks in ''|*[!0-9]*) ;; *) [ $((blocks + 1024)) -lt $((size / 1024)) ] && holes=1 ;; esac
magic=$(od -An -tx1 -N2 < "$f" 2>/dev/null | tr -d ' \n')
if [ "$magic" = 1f8b ]; then
  echo '#logdoctor-gzip'
  { gzip -dc < "$f"; echo "#logdoctor-status gzip $?" >&2; } | tr -d '\000' | { capped_grep; s=$?; [ "$s" -le 1 ] || echo; echo "#logdoctor-status grep $s"; } | awk -v max="$max" '"""
    + _CAP_AWK
    + r"""'
else
  { if [ -n "$holes" ]; then tr -d '\000' < "$f" | capped_grep; else capped_grep < "$f"; fi; s=$?; [ "$s" -le 1 ] || echo; echo "#logdoctor-status grep $s"; } | awk -v max="$max" '"""
    + _CAP_AWK
    + r"""'
fi
}
if [ "$z" = gzip ]; then
  echo '#logdoctor-gzip-stream'
  read_file | gzip -1
else
  read_file
fi
"""
)

READ_STREAM_SCRIPT = (
    r"""# logdoctor read-stream: $1 = docker|podman|journald, $2 = container or unit, $3 = byte budget, $4 = keyword ERE,
# $5 = gzip: compress what is sent (after a #logdoctor-gzip-stream line)
kind=$1
name=$2
max=$3
re=$4
z=$5
LC_ALL=C
export LC_ALL
case $kind in
  docker|podman)
    if ! err=$("$kind" inspect --format '{{.Id}}' "$name" 2>&1 >/dev/null </dev/null); then
      printf '#logdoctor-error command %s\n' "$err" | head -n 1
      exit 0
    fi ;;
esac
read_stream() {
case $kind in
  docker|podman)
    { "$kind" logs --timestamps "$name" 2>&1 </dev/null; echo "#logdoctor-status $kind $?" >&2; } | awk '"""
    + _NUMBER_AWK
    + r"""' | { grep -a -E -e "$re" -e '^#logdoctor-size '; s=$?; [ "$s" -le 1 ] || echo; echo "#logdoctor-status grep $s"; } | awk -v max="$max" '"""
    + _CAP_AWK
    + r"""' ;;
  journald)
    { journalctl -u "$name" --no-pager -o short </dev/null; echo "#logdoctor-status journalctl $?" >&2; } | awk '"""
    + _NUMBER_AWK
    + r"""' | { grep -a -E -e "$re" -e '^#logdoctor-size '; s=$?; [ "$s" -le 1 ] || echo; echo "#logdoctor-status grep $s"; } | awk -v max="$max" '"""
    + _CAP_AWK
    + r"""' ;;
esac
}
if [ "$z" = gzip ]; then
  echo '#logdoctor-gzip-stream'
  read_stream | gzip -1
else
  read_stream
fi
"""
)

FACT_SCRIPT = r"""# logdoctor host fact: run "$@" if the tool exists (127 = missing)
command -v "$1" >/dev/null 2>&1 || exit 127
exec "$@" </dev/null
"""

_PY_NAMES = ", ".join(f'"{name}"' for name in DISTRIBUTIONS) + ("," if len(DISTRIBUTIONS) == 1 else "")
_PIP_NAMES = " ".join(shlex.quote(name) for name in DISTRIBUTIONS)

VERSIONS_SCRIPT = (
    r"""# logdoctor engine versions: $1... = python interpreters to ask, best first; prints
# `pip show`-style Name:/Version: lines (importlib.metadata first: pip is slow to start, or absent in uv venvs).
# pip is asked only by an interpreter that could not run the importlib.metadata check (Python < 3.8):
# where the check ran and found nothing, pip reads the same metadata and finds nothing either.
prog='import importlib.metadata as m
for n in ("""
    + _PY_NAMES
    + r"""):
    try:
        print("Name: " + n + "\nVersion: " + m.version(n))
    except Exception:
        pass'
i=0
old=' '
for py do
  i=$((i + 1))
  case $py in
    /*) [ -x "$py" ] || continue ;;
    *) command -v "$py" >/dev/null 2>&1 || continue ;;
  esac
  if out=$("$py" -c "$prog" 2>/dev/null </dev/null); then
    if [ -n "$out" ]; then
      printf 'Python: %s\n%s\n' "$py" "$out"
      exit 0
    fi
  else
    old="$old$i "
  fi
done
i=0
for py do
  i=$((i + 1))
  case $old in
    *" $i "*) ;;
    *) continue ;;
  esac
  out=$("$py" -m pip show """
    + _PIP_NAMES
    + r""" 2>/dev/null </dev/null)
  if [ -n "$out" ]; then
    printf 'Python: %s\n%s\n' "$py" "$out"
    exit 0
  fi
done
exit 3
"""
)

CONTAINER_SCRIPT = r"""# logdoctor container check: is this host itself a container (LXC, docker, podman)?
found=0
if command -v systemd-detect-virt >/dev/null 2>&1; then
  if v=$(systemd-detect-virt --container 2>/dev/null); then echo "container: $v (systemd-detect-virt)"; found=1; fi
fi
if [ -f /.dockerenv ]; then echo 'container: docker (/.dockerenv)'; found=1; fi
if [ -f /run/.containerenv ]; then echo 'container: podman (/run/.containerenv)'; found=1; fi
v=$(tr '\000' '\n' 2>/dev/null < /proc/1/environ | grep '^container=' | head -n 1)
if [ -n "$v" ]; then echo "container: ${v#container=} (/proc/1/environ)"; found=1; fi
if grep -q -e '/lxc' -e 'lxc.payload' /proc/1/cgroup 2>/dev/null; then echo 'container: lxc (/proc/1/cgroup)'; found=1; fi
if [ "$found" = 0 ]; then echo 'container: none'; fi
exit 0
"""


# The GPUs' state: load, clocks and what holds them back, power against the default limit, the PCIe link against
# its maximum, memory health. Drivers before 535 know `clocks_throttle_reasons.active` and may lack remapped_rows:
# one unknown field fails the whole query, so the script falls back to the older names, then to a shorter list.
GPU_STATE_FIELDS = (
    "index,name,pci.bus_id,persistence_mode,pstate,utilization.gpu,memory.used,memory.total,clocks.sm,clocks.max.sm,"
    "clocks_event_reasons.active,power.draw,power.limit,power.default_limit,power.max_limit,temperature.gpu,"
    "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,"
    "ecc.errors.uncorrected.volatile.total,remapped_rows.pending,remapped_rows.failure"
)
GPU_STATE_FIELDS_OLD = (
    "index,name,pci.bus_id,persistence_mode,pstate,utilization.gpu,memory.used,memory.total,clocks.sm,clocks.max.sm,"
    "clocks_throttle_reasons.active,power.draw,power.limit,power.default_limit,power.max_limit,temperature.gpu,"
    "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max"
)
GPU_STATE_SCRIPT = r"""# logdoctor host fact: nvidia-smi --query-gpu=$1, else =$2 (older field names); 127 = no nvidia-smi
command -v nvidia-smi >/dev/null 2>&1 || exit 127
if out=$(nvidia-smi --query-gpu="$1" --format=csv </dev/null 2>/dev/null); then printf '%s\n' "$out"; exit 0; fi
exec nvidia-smi --query-gpu="$2" --format=csv </dev/null
"""

# The kernel log's NVRM Xid and fallen-off-the-bus lines of this boot (the last 200): journald first, dmesg
# second; neither readable (dmesg_restrict, no journal group) is exit 4 with the reason, not "no errors".
KERNEL_XID_SCRIPT = r"""# logdoctor host fact: NVRM Xid lines of the kernel log
pat='NVRM: (Xid|.*fallen off the bus)'
if command -v journalctl >/dev/null 2>&1 && journalctl -k -q --no-pager -n 1 </dev/null >/dev/null 2>&1; then
  journalctl -k -q --no-pager </dev/null 2>/dev/null | grep -E "$pat" | tail -n 200
  exit 0
fi
if command -v dmesg >/dev/null 2>&1 && dmesg </dev/null >/dev/null 2>&1; then
  dmesg </dev/null 2>/dev/null | grep -E "$pat" | tail -n 200
  exit 0
fi
echo "kernel log not readable by this user (journalctl -k, dmesg): Xid lines not checked" >&2
exit 4
"""


@dataclass(frozen=True)
class Fact:
    """A host-fact command whose whole output becomes a source (parsed by the host grammars): `script` is run
    with `argv` as its arguments (FACT_SCRIPT runs the argv itself)."""

    name: str
    argv: tuple[str, ...]
    script: str = FACT_SCRIPT
    title: str = ""  # what the saved source is called; the argv joined where empty

    @property
    def path(self) -> str:
        return self.title or " ".join(self.argv)


FACTS = (
    Fact("nvidia-smi-topo-m", ("nvidia-smi", "topo", "-m")),
    Fact("nvidia-smi-topo-p2p-r", ("nvidia-smi", "topo", "-p2p", "r")),
    Fact(
        "nvidia-smi-query-gpu",
        ("nvidia-smi", "--query-gpu=index,name,pci.bus_id,memory.total,driver_version", "--format=csv"),
    ),
    Fact(
        "nvidia-smi-gpu-state",
        (GPU_STATE_FIELDS, GPU_STATE_FIELDS_OLD),
        GPU_STATE_SCRIPT,
        "nvidia-smi --query-gpu=<GPU state> --format=csv",
    ),
    Fact(
        "nvidia-smi-compute-apps",
        ("nvidia-smi", "--query-compute-apps=pid,process_name,gpu_bus_id,used_gpu_memory", "--format=csv"),
    ),
    # Only the PERFORMANCE display: its clock event reason counters are in no --query-gpu field, and the whole
    # `-q` costs the driver about four times as long (0.11 s against 0.03 s on an H200, 1.2 s against 0.24 s for
    # twenty at once); everything else it prints comes from the queries above.
    Fact("nvidia-smi-q", ("nvidia-smi", "-q", "-d", "PERFORMANCE")),
)
# needs no nvidia-smi: run on every host
KERNEL_FACT = Fact("kernel-xid", (), KERNEL_XID_SCRIPT, "kernel log NVRM lines (journalctl -k / dmesg)")

# The CPU frequency governors (a line each, with how many CPUs use it: nothing without cpufreq, as in most VMs)
# and, for each server process ($@ = pids), the CPUs and NUMA memory nodes it may run on.
CPU_SCRIPT = r"""# logdoctor host fact: CPU governors and the servers' CPU / NUMA placement
for f in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
  [ -r "$f" ] && cat "$f"
done 2>/dev/null | sort | uniq -c | while read -r n g; do echo "cpu governor: $g ($n CPUs)"; done
for pid in "$@"; do
  [ -r "/proc/$pid/status" ] || continue
  c=$(grep '^Cpus_allowed_list:' "/proc/$pid/status" 2>/dev/null | awk '{print $2}')
  m=$(grep '^Mems_allowed_list:' "/proc/$pid/status" 2>/dev/null | awk '{print $2}')
  echo "cpu placement: server pid $pid: cpus $c, numa memory nodes $m"
done
exit 0
"""
CPU_TITLE = "CPU governors and the servers' CPU / NUMA placement"


def remote_command(script: str, args: Sequence[str] = (), *, sudo: bool = False) -> str:
    """The exact command string sent to the host: the script and each argument shell-quoted once."""
    parts = ["sudo", "-n", "--"] if sudo else []
    parts += ["sh", "-c", script, "sh", *args]
    return " ".join(shlex.quote(p) for p in parts)
