"""A real Prometheus on loopback scraping 20 loopback vLLM exporters, one of them slow, for the source tests.

`prometheus_lab` (one per test session and xdist worker) starts Debian's `/usr/bin/prometheus` (2.42) with a
generated prometheus.yml (scrape every second), a temporary storage directory and a free 127.0.0.1 port;
the packaged systemd service is never touched. The exporters are small threaded HTTP servers, each on its
own 127.0.0.1 port, serving vLLM 0.33.0's `/metrics` text (the families, types and HELP texts of
vllm/v1/metrics/loggers.py and vllm/v1/spec_decode/metrics.py, `pip download --no-deps vllm==0.33.0`) with
counters advanced by the clock:

    19 healthy   8 requests running, 40 tok/s each, MTP k=3 accepting 0.8/0.6/0.4 (length 2.8)
    1 slow       8 requests running, 12 tok/s each, k=3 accepting 0.2/0.08/0.02 (length 1.3)
    1 broken     (job vllm-broken) text Prometheus cannot parse, so its target is down (up == 0)

A bearer-token proxy in front of Prometheus (a third loopback server) answers 401 without the token.
Nothing is skipped: without the binary the tests fail and say `make prometheus` installs it.
"""

# ruff: noqa: S310  (every URL here is http://127.0.0.1:PORT, built by this module)

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
from typing import Any

import pytest

PROMETHEUS = "/usr/bin/prometheus"
TOKEN = "s3cr3t-test-token-9f2c"  # the proxy's token: must never appear in logdoctor's output
HEALTHY = (40.0, (0.8, 0.6, 0.4))
SLOW = (12.0, (0.2, 0.08, 0.02))
RUNNING = 8

_FAMILIES = (
    ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches."),
    ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed."),
    ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage."),
    ("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine."),
    ("vllm:prompt_tokens", "counter", "Number of prefill tokens processed."),
    ("vllm:generation_tokens", "counter", "Number of generation tokens processed."),
    ("vllm:spec_decode_num_drafts", "counter", "Number of spec decoding drafts."),
    ("vllm:spec_decode_num_draft_tokens", "counter", "Number of draft tokens."),
    ("vllm:spec_decode_num_accepted_tokens", "counter", "Number of accepted tokens."),
    ("vllm:spec_decode_num_accepted_tokens_per_pos", "counter", "Accepted tokens per draft position."),
    ("vllm:inter_token_latency_seconds", "histogram", "Histogram of inter-token latency in seconds."),
    ("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig"),
)


def metrics_text(elapsed: float, per_request: float, positions: tuple[float, ...]) -> str:
    """vLLM 0.33.0's exposition text for a server `elapsed` seconds into a steady load."""
    labels = 'engine="0",model_name="Qwen/Qwen3-8B"'
    generated = RUNNING * per_request * elapsed
    length = 1 + sum(positions)
    drafts = generated / length
    values: dict[str, list[tuple[str, float]]] = {
        "vllm:num_requests_running": [(labels, RUNNING)],
        "vllm:num_requests_waiting": [(labels, 0)],
        "vllm:kv_cache_usage_perc": [(labels, 0.31)],
        "vllm:num_preemptions": [(labels, 0)],
        "vllm:prompt_tokens": [(labels, 1000 + generated / 4)],
        "vllm:generation_tokens": [(labels, generated)],
        "vllm:spec_decode_num_drafts": [(labels, drafts)],
        "vllm:spec_decode_num_draft_tokens": [(labels, drafts * len(positions))],
        "vllm:spec_decode_num_accepted_tokens": [(labels, drafts * sum(positions))],
        "vllm:spec_decode_num_accepted_tokens_per_pos": [
            (f'{labels},position="{i}"', drafts * rate) for i, rate in enumerate(positions)
        ],
    }
    out: list[str] = []
    for name, kind, doc in _FAMILIES:
        out += [f"# HELP {name} {doc}", f"# TYPE {name} {kind}"]
        if name == "vllm:inter_token_latency_seconds":
            steps = drafts
            out += [
                f'{name}_bucket{{{labels},le="0.05"}} {steps if per_request > 20 else 0:.1f}',
                f'{name}_bucket{{{labels},le="+Inf"}} {steps:.1f}',
                f"{name}_count{{{labels}}} {steps:.1f}",
                f"{name}_sum{{{labels}}} {steps * length / per_request:.4f}",
            ]
        elif name == "vllm:cache_config_info":
            out.append(
                f'{name}{{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",'
                f'gpu_memory_utilization="0.9",num_gpu_blocks="27000"}} 1.0'
            )
        else:
            suffix = "_total" if kind == "counter" else ""
            out += [f"{name}{suffix}{{{series}}} {float(value)!r}" for series, value in values[name]]
    return "\n".join(out) + "\n"


@dataclass
class Exporter:
    name: str  # "127.0.0.1:PORT", the instance label Prometheus gives it
    slow: bool
    server: ThreadingHTTPServer


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


class _LabServer(ThreadingHTTPServer):
    """A loopback server whose client going away mid-answer is no error: under load Prometheus gives up a slow
    scrape (its scrape_timeout) and closes the connection; socketserver would print that traceback to stderr,
    into the output of whichever CLI call a test is making at the moment."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


def _serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = _LabServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="prometheus-lab", daemon=True).start()
    return server


def _exporter(started: float, profile: tuple[float, tuple[float, ...]] | None) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if profile is None:
                body = b'vllm:num_requests_running{model_name="m" 3.0\nthis is not exposition text\n'
            else:
                body = metrics_text(time.time() - started, *profile).encode()
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
    started = time.time() - 3600  # counters of a server an hour into its load
    servers: list[ThreadingHTTPServer] = []
    exporters: list[Exporter] = []
    for index in range(20):
        slow = index == 13
        server = _exporter(started, SLOW if slow else HEALTHY)
        servers.append(server)
        exporters.append(Exporter(f"127.0.0.1:{server.server_address[1]}", slow, server))
    broken = _exporter(started, None)
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
