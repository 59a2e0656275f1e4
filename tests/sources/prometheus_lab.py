"""A real Prometheus on loopback scraping 20 loopback exporters that serve recorded real `/metrics` texts.

`prometheus_lab` (one per test session and xdist worker) starts Debian's `/usr/bin/prometheus` (2.42) with a
generated prometheus.yml (scrape every second), a temporary storage directory and a free 127.0.0.1 port;
the packaged systemd service is never touched. The exporters are small threaded HTTP servers, each on its
own 127.0.0.1 port, each serving one recorded scrape from fixtures/logs/metrics/ (the sources are cited in each
fixture's .expect.yaml and in docs/sources.md):

    18 healthy  vllm-dspark-mtp-live-two-scrapes.log: two live scrapes of a vLLM V1 server 15 s apart
                (DeepSeek-V4-Flash, MTP k=5, acceptance length 3.68, one request at ~10 tok/s)
    1 idle      aibrix-vllm-v0-runtime-doc.log: a vLLM V0 server after 4 requests, nothing running
    1 slow      sglang-docs-production-metrics.log: an SGLang server with 162 requests running and 2826
                queued, generating 86.5 tok/s in all (0.53 tok/s a request) while its token pool is 28% used
    1 broken    (job vllm-broken) the same SGLang text as the docs page prints it, its `$ curl` line
                included: not exposition text, so Prometheus cannot parse it and its target is down (up == 0)

A recorded scrape is a snapshot; a snapshot has no rate. So each exporter serves the recorded text with only
the VALUES of its counter and histogram samples advanced with the clock (`Recorded.text`), at the rate the
recording itself gives:

- two scrapes (the DSpark text): each series at its own increase between them, over their 15 s; the last
  scrape's lines are served, its gauges as recorded;
- one scrape (the SGLang text): every counter and histogram series at its value over the server's age, the age
  being the generation counter over the `sglang:gen_throughput` gauge (7,557,572 tokens at 86.5 tok/s: 24.3 h),
  so the generation counter grows at the gauge's rate and every mean (TTFT, TPOT) stays the recorded one;
- idle (the AIBrix text): nothing advances; an idle server's counters stand still.

Names, labels, order, `# HELP` / `# TYPE` lines, gauges and `_created` series are the recorded bytes; the
AIBrix text's 4-space docs indent and the docs' `$ curl` prompt line (not part of what the server sent) are
dropped for the exporters that Prometheus should read. The planted slow instance is a real scrape of a slow
server, not a healthy text slowed down.

A bearer-token proxy in front of Prometheus (a third loopback server) answers 401 without the token.
Nothing is skipped: without the binary the tests fail and say `make prometheus` installs it.
"""

# ruff: noqa: S310  (every URL here is http://127.0.0.1:PORT, built by this module)

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.sources.quiet_http import QuietHTTPServer

PROMETHEUS = "/usr/bin/prometheus"
TOKEN = "s3cr3t-test-token-9f2c"  # the proxy's token: must never appear in logdoctor's output
METRICS = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "metrics"
HEALTHY_TEXT = "vllm-dspark-mtp-live-two-scrapes.log"
HEALTHY_INTERVAL_S = 15.0  # between its two scrapes, as the source states
IDLE_TEXT = "aibrix-vllm-v0-runtime-doc.log"
SLOW_TEXT = "sglang-docs-production-metrics.log"
SLOW_INDEX, IDLE_INDEX = 13, 5

_SAMPLE_RE = re.compile(r"^(?P<series>(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{.*\})?)\s+(?P<value>\S+)$")
_TYPE_RE = re.compile(r"^# TYPE (?P<name>\S+) (?P<kind>\S+)")
_ADVANCING_SUFFIXES = ("_total", "_sum", "_count", "_bucket")


def _base(name: str) -> str:
    for suffix in ("_bucket", "_sum", "_count", "_total"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


@dataclass
class Recorded:
    """A recorded scrape played forward: `lines` as recorded; `rates[i]` the per-second increase of line i's value."""

    lines: list[str]
    rates: dict[int, float]

    def text(self, elapsed: float) -> str:
        out = []
        for i, line in enumerate(self.lines):
            rate = self.rates.get(i)
            m = _SAMPLE_RE.match(line)
            if rate and elapsed > 0 and m is not None:
                line = f"{m.group('series')} {float(m.group('value')) + rate * elapsed!r}"
            out.append(line)
        return "\n".join(out) + "\n"


def _advancing(lines: list[str]) -> dict[int, tuple[str, float]]:
    """Line index -> (series, value) of each counter or histogram sample (by its # TYPE, else by its suffix)."""
    kinds: dict[str, str] = {}
    found: dict[int, tuple[str, float]] = {}
    for i, line in enumerate(lines):
        t = _TYPE_RE.match(line)
        if t is not None:
            kinds[t.group("name")] = t.group("kind")
            continue
        m = _SAMPLE_RE.match(line)
        if m is None or line.startswith("#"):
            continue
        name = m.group("name")
        kind = kinds.get(name) or kinds.get(_base(name))
        if name.endswith("_created"):
            continue  # the counter's creation time: a constant
        if kind in ("counter", "histogram") or (kind is None and name.endswith(_ADVANCING_SUFFIXES)):
            found[i] = (m.group("series"), float(m.group("value")))
    return found


def recorded_two_scrapes(text: str, interval_s: float) -> Recorded:
    """Two scrapes back to back: the second is served, each series advancing at its increase over `interval_s`."""
    lines = text.splitlines()
    first = lines[0]
    split = next(i for i in range(1, len(lines)) if lines[i].split(" ")[0] == first.split(" ")[0])
    before = {series: value for series, value in _advancing(lines[:split]).values()}
    served = lines[split:]
    rates = {
        i: (value - before[series]) / interval_s
        for i, (series, value) in _advancing(served).items()
        if series in before and value > before[series]
    }
    return Recorded(served, rates)


def recorded_one_scrape(lines: list[str], counter: str, throughput_gauge: str) -> Recorded:
    """One scrape: every counter and histogram series at its value over the server's age, that age being
    `counter`'s value over the `throughput_gauge` (tokens at tokens/s)."""
    values = {m.group("name"): float(m.group("value")) for m in map(_SAMPLE_RE.match, lines) if m is not None}
    age_s = values[counter] / values[throughput_gauge]
    return Recorded(lines, {i: value / age_s for i, (_, value) in _advancing(lines).items() if value > 0})


def healthy_recording() -> Recorded:
    return recorded_two_scrapes((METRICS / HEALTHY_TEXT).read_text(encoding="utf-8"), HEALTHY_INTERVAL_S)


def slow_recording() -> Recorded:
    lines = [
        line for line in (METRICS / SLOW_TEXT).read_text(encoding="utf-8").splitlines() if not line.startswith("$")
    ]
    return recorded_one_scrape(lines, "sglang:generation_tokens_total", "sglang:gen_throughput")


def idle_recording() -> Recorded:
    lines = [line.removeprefix("    ") for line in (METRICS / IDLE_TEXT).read_text(encoding="utf-8").splitlines()]
    return Recorded(lines, {})


def broken_recording() -> Recorded:
    return Recorded((METRICS / SLOW_TEXT).read_text(encoding="utf-8").splitlines(), {})


@dataclass
class Exporter:
    name: str  # "127.0.0.1:PORT", the instance label Prometheus gives it
    slow: bool
    server: ThreadingHTTPServer
    text: str = HEALTHY_TEXT  # the fixture it serves


@dataclass
class PrometheusLab:
    url: str  # prometheus://127.0.0.1:PORT
    proxy_url: str  # the same behind the bearer-token proxy
    exporters: list[Exporter]
    broken: str
    tmp: Path
    servers: list[ThreadingHTTPServer] = field(default_factory=list)

    @property
    def slow(self) -> Exporter:
        return next(e for e in self.exporters if e.slow)


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = QuietHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="prometheus-lab", daemon=True).start()
    return server


def _exporter(started: float, recording: Recorded) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = recording.text(time.time() - started).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return _serve(Handler)


def _proxy(target: str) -> ThreadingHTTPServer:
    """Forwards to Prometheus only requests that carry `Authorization: Bearer TOKEN`."""

    class Handler(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self.send_response(401)
                self.send_header("WWW-Authenticate", "Bearer")
                self.end_headers()
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            request = urllib.request.Request(target + self.path, data=body, method=self.command)
            for header in ("Content-Type", "Accept"):
                if self.headers.get(header):
                    request.add_header(header, self.headers[header])
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    status, data = answer.status, answer.read()
            except urllib.error.HTTPError as exc:
                status, data = exc.code, exc.read()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    return _serve(Handler)


def _ready(url: str, deadline: float) -> None:
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=1) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"Prometheus at {url} did not become ready")


def _scraped(url: str, targets: int, deadline: float) -> None:
    """Wait until every target has been scraped a few times (enough intervals for rates)."""
    query = urllib.parse.urlencode({"query": "count(count_over_time(up[1m]) >= 6)"})
    while time.time() < deadline:
        with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=2) as answer:
            result = json.load(answer)["data"]["result"]
        if result and int(float(result[0]["value"][1])) >= targets:
            return
        time.sleep(0.5)
    raise RuntimeError("Prometheus did not scrape every exporter in time")


@pytest.fixture(scope="session")
def prometheus_lab() -> Iterator[PrometheusLab]:
    if not shutil.which(PROMETHEUS):
        pytest.fail(f"{PROMETHEUS} is missing: `make prometheus` installs Debian's prometheus package")
    tmp = Path(tempfile.mkdtemp(prefix="logdoctor-prometheus-"))
    started = time.time()  # the first scrape serves each recording as recorded; values advance from there
    healthy, idle, slow_text = healthy_recording(), idle_recording(), slow_recording()
    servers: list[ThreadingHTTPServer] = []
    exporters: list[Exporter] = []
    for index in range(20):
        text, recording = {SLOW_INDEX: (SLOW_TEXT, slow_text), IDLE_INDEX: (IDLE_TEXT, idle)}.get(
            index, (HEALTHY_TEXT, healthy)
        )
        server = _exporter(started, recording)
        servers.append(server)
        exporters.append(Exporter(f"127.0.0.1:{server.server_address[1]}", index == SLOW_INDEX, server, text))
    broken = _exporter(started, broken_recording())
    servers.append(broken)
    broken_name = f"127.0.0.1:{broken.server_address[1]}"
    from tests.sources.conftest import free_port

    port = free_port("127.0.0.1")
    targets = ", ".join(f"'{e.name}'" for e in exporters)
    (tmp / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
        f"scrape_configs:\n  - job_name: vllm\n    static_configs:\n      - targets: [{targets}]\n"
        f"  - job_name: vllm-broken\n    static_configs:\n      - targets: ['{broken_name}']\n",
        encoding="utf-8",
    )
    log = (tmp / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={tmp / 'prometheus.yml'}",
            f"--storage.tsdb.path={tmp / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _ready(url, time.time() + 30)
        _scraped(url, len(exporters) + 1, time.time() + 60)
        proxy = _proxy(url)
        servers.append(proxy)
        yield PrometheusLab(
            url=f"prometheus://127.0.0.1:{port}",
            proxy_url=f"prometheus://127.0.0.1:{proxy.server_address[1]}",
            exporters=exporters,
            broken=broken_name,
            tmp=tmp,
            servers=servers,
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        for server in servers:
            server.shutdown()
            server.server_close()
        shutil.rmtree(tmp, ignore_errors=True)
