"""Reading a server's `/metrics` on an SSH host: twice, over loopback, with the tools found there.

The SSH collector runs `METRICS_SCRIPT` once per port a discovered server listens on (`--port N` on its
command line, else the engine's default: vLLM 8000, SGLang 30000). It reads
`http://127.0.0.1:PORT/metrics` with python3 (urllib) or else curl, keeps only the engines' families
(`vllm:`, `sglang:` samples and their `# HELP` / `# TYPE` lines), stamps every sample with the read's time in
milliseconds, waits `INTERVAL` seconds and reads again, so the metrics input kind differences the two into
rates. When the first read gets nothing (no server on that port) it stops at once. The port and interval reach
the remote shell as arguments, each shell-quoted once (`remote_command`).

    vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 48212.0 1764590400123
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from logdoctor.sources.discovery import ServerProcess
from logdoctor.sources.hostscripts import remote_command

INTERVAL = 5.0  # seconds between the two reads
READ_TIMEOUT = 5.0  # seconds one read may take
TIME_LIMIT = INTERVAL + 2 * READ_TIMEOUT + 5.0  # the whole command, both reads and the wait
MAX_PORTS = 4  # servers read on one host
DEFAULT_PORTS = {"vllm": 8000, "sglang": 30000}
_PORT_RE = re.compile(r"(?:^|\s)--port(?:=|\s+)(?P<port>\d{1,5})(?=\s|$)")

METRICS_SCRIPT = r"""# logdoctor /metrics: $1 = seconds between the two reads, $2 = seconds a read may take, $3 = loopback port
interval=$1; limit=$2; port=$3
if command -v python3 >/dev/null 2>&1; then
python3 - "$interval" "$limit" "$port" <<'PY'
import sys, time, urllib.request
interval, limit, port = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
for round in (1, 2):
    stamp = " %d" % (time.time() * 1000)
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=limit) as answer:
            text = answer.read(16 << 20).decode("utf-8", "replace")
    except Exception:
        text = ""
    lines = [l for l in text.splitlines() if l.startswith(("vllm:", "sglang:", "# HELP vllm:", "# TYPE vllm:", "# HELP sglang:", "# TYPE sglang:"))]
    if not lines:
        break
    for line in lines:
        print(line if line.startswith("#") else line + stamp)
    sys.stdout.flush()
    if round == 1:
        time.sleep(interval)
PY
exit 0
fi
command -v curl >/dev/null 2>&1 || exit 127
for round in 1 2; do
  stamp=$(date +%s%N 2>/dev/null)  # nanoseconds where date has %N (GNU), else whole seconds (busybox)
  case $stamp in *[!0-9]*|'') stamp=$(date +%s)000 ;; *) stamp=${stamp%??????} ;; esac
  out=$(curl -fsS --max-time "$limit" "http://127.0.0.1:$port/metrics" 2>/dev/null \
        | awk -v ts="$stamp" '/^# (HELP|TYPE) (vllm|sglang):/ {print; next} /^(vllm|sglang):/ {print $0 " " ts}')
  [ -n "$out" ] || break
  printf '%s\n' "$out"
  [ "$round" = 1 ] && sleep "$interval"
done
exit 0
"""


def server_ports(processes: Iterable[ServerProcess]) -> list[int]:
    """The ports the discovered servers listen on, in discovery order, each once."""
    ports: list[int] = []
    for proc in processes:
        m = _PORT_RE.search(proc.cmdline)
        default = DEFAULT_PORTS["sglang" if "sglang" in proc.cmdline else "vllm"]
        port = int(m.group("port")) if m else default
        if 0 < port < 65536 and port not in ports:
            ports.append(port)
    return ports[:MAX_PORTS]


def metrics_commands(processes: Iterable[ServerProcess]) -> list[tuple[int, str]]:
    """(port, the exact command string) for each server port to read."""
    return [
        (port, remote_command(METRICS_SCRIPT, [f"{INTERVAL:g}", f"{READ_TIMEOUT:g}", str(port)]))
        for port in server_ports(processes)
    ]
