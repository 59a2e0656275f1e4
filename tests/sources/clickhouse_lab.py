"""A real ClickHouse server on loopback for the log-store tests, and the fixture logs as its rows.

`clickhouse_lab()` starts Debian's `/usr/sbin/clickhouse-server` (18.16 here; `make clickhouse` installs it) with a
generated config: free HTTP and TCP ports on 127.0.0.1 (and 127.0.0.2, a loopback address the certificate does
not name), data, tmp and log paths in a temporary directory,
`system.query_log` on (so a test can read how many rows a query returned), and two users: `default` (no password)
and `reader` (password `READER_PASSWORD`). It also listens for HTTPS on a free port with a self-signed certificate
for 127.0.0.1 and localhost, made with `openssl req -x509` (`ClickHouseLab.cert`, the file a client trusts it
by). The packaged systemd service is never used.

Nothing is skipped: without the binary the tests fail and say how to fix it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER = "/usr/sbin/clickhouse-server"
READER_PASSWORD = "rd-pw-7f3a9c"  # a throw-away password of the test server
ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """preexec_fn: SIGTERM the server when pytest dies (a killed run leaves no server behind)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


CONFIG = """<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>{root}/log/server.log</log><errorlog>{root}/log/error.log</errorlog>
    <size>10M</size><count>1</count></logger>
  <http_port>{http}</http_port>
  <tcp_port>{tcp}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <listen_host>127.0.0.2</listen_host>
  <path>{root}/data/</path>
  <tmp_path>{root}/tmp/</tmp_path>
  <user_files_path>{root}/user_files/</user_files_path>
  <format_schema_path>{root}/format_schemas/</format_schema_path>
  <users_config>{root}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <query_log><database>system</database><table>query_log</table>
    <flush_interval_milliseconds>200</flush_interval_milliseconds></query_log>
  <https_port>{https}</https_port>
  <openSSL><server><certificateFile>{root}/tls/cert.pem</certificateFile><privateKeyFile>{root}/tls/key.pem</privateKeyFile>
    <verificationMode>none</verificationMode><loadDefaultCAFile>false</loadDefaultCAFile>
    <cacheSessions>true</cacheSessions><disableProtocols>sslv2,sslv3</disableProtocols>
    <preferServerCiphers>true</preferServerCiphers></server></openSSL>
</yandex>
"""

USERS = """<?xml version="1.0"?>
<yandex>
  <profiles><default><log_queries>1</log_queries></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></default>
    <reader><password>{password}</password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></reader>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
"""


@dataclass
class ClickHouseLab:
    root: Path
    http_port: int
    process: subprocess.Popen[bytes]
    https_port: int = 0

    def url(self, table: str) -> str:
        return f"clickhouse://127.0.0.1:{self.http_port}/{table}"

    def tls_url(self, table: str, host: str = "127.0.0.1") -> str:
        return f"clickhouses://{host}:{self.https_port}/{table}"

    @property
    def cert(self) -> Path:
        """The server's self-signed certificate: the CA file a client trusts it by."""
        return self.root / "tls" / "cert.pem"

    def query(
        self, sql: str, data: bytes | None = None, user: str = "default", password: str = "", timeout: float = 60
    ) -> str:
        """Run SQL as the test's admin (INSERT data goes in the body, the statement in the URL)."""
        url = f"http://127.0.0.1:{self.http_port}/"
        if data is not None:
            url += "?" + urllib.parse.urlencode({"query": sql})
        body = data if data is not None else sql.encode("utf-8")
        request = urllib.request.Request(  # noqa: S310 (http://127.0.0.1 only)
            url, data=body, headers={"X-ClickHouse-User": user, "X-ClickHouse-Key": password}, method="POST"
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            text: str = response.read().decode("utf-8")
            return text

    def result_rows(self, query_id: str) -> int:
        """Rows the server sent for a finished query (system.query_log)."""
        deadline = time.monotonic() + 20
        while True:
            self.query("SYSTEM FLUSH LOGS")
            got = self.query(
                "SELECT result_rows FROM system.query_log WHERE query_id = "  # noqa: S608 (our own uuid)
                f"'{query_id}' AND type = 2 FORMAT TabSeparated"
            ).split()
            if got:
                return int(got[0])
            if time.monotonic() > deadline:
                raise AssertionError(f"query {query_id} is not in system.query_log")
            time.sleep(0.2)


def self_signed(folder: Path) -> None:
    """cert.pem and key.pem: a self-signed certificate for 127.0.0.1 and localhost, valid two days."""
    try:
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
             "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.fail(f"ClickHouse tests: cannot make a certificate with openssl ({exc})", pytrace=False)


def start_clickhouse() -> Iterator[ClickHouseLab]:
    if not os.access(SERVER, os.X_OK):
        pytest.fail(
            f"ClickHouse tests: {SERVER} is missing: run `make clickhouse` (apt-get install clickhouse-server)",
            pytrace=False,
        )
    with tempfile.TemporaryDirectory(prefix="logdoctor-clickhouse-") as tmp:
        root = Path(tmp)
        for sub in ("log", "data", "tmp", "user_files", "format_schemas", "tls"):
            (root / sub).mkdir()
        self_signed(root / "tls")
        http, tcp, https = free_port(), free_port(), free_port()
        (root / "config.xml").write_text(CONFIG.format(root=root, http=http, tcp=tcp, https=https), encoding="utf-8")
        (root / "users.xml").write_text(USERS.format(password=READER_PASSWORD), encoding="utf-8")
        with open(root / "log" / "stdout", "wb") as out:
            process = subprocess.Popen(
                [SERVER, f"--config-file={root / 'config.xml'}"],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=root,
                preexec_fn=_die_with_parent,
            )
        lab = ClickHouseLab(root, http, process, https)
        try:
            deadline = time.monotonic() + 60
            while True:
                if process.poll() is not None:
                    log = (root / "log" / "stdout").read_text(errors="replace")[-2000:]
                    pytest.fail(f"clickhouse-server exited {process.returncode}: {log}", pytrace=False)
                with contextlib.suppress(OSError):
                    if lab.query("SELECT 1").strip() == "1":
                        break
                if time.monotonic() > deadline:
                    pytest.fail("clickhouse-server did not answer within 60 s", pytrace=False)
                time.sleep(0.2)
            yield lab
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- the fixture logs as rows ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Planted:
    """One deployment's rows: a fixture log with chatter lines between its lines, one second apart."""

    log: Path
    service: str
    host: str
    pod: str
    container: str

    def lines(self) -> list[str]:
        out: list[str] = []
        for index, line in enumerate(self.log.read_text(encoding="utf-8").splitlines()):
            out.append(line)
            if index % 2 == 0:  # rows no keyword matches: the pushdown must keep them on the server
                out.append(f'INFO:     127.0.0.1:{40000 + index} - "GET /health HTTP/1.1" 200 OK')
        return out


PLANTED = (
    Planted(STORY / "vllm-dflash-tp2-a6000.log", "vllm", "gpu-a", "vllm-dflash-0", "vllm"),
    Planted(STORY / "vllm-mtp-tp2-a6000-healthy.log", "vllm", "gpu-b", "vllm-mtp-0", "vllm"),
    Planted(STORY / "sglang-mtp-tp2-a6000.log", "sglang", "gpu-c", "sglang-mtp-0", "sglang"),
)


def tsv(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def tsv_array(values: Sequence[str]) -> str:
    quoted = ("'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'" for v in values)
    return tsv("[" + ",".join(quoted) + "]")


def otel_rows(planted: Sequence[Planted], start: int, seed: int = 7) -> tuple[bytes, int]:
    """TabSeparated rows for an 18.16 table shaped like the OTel exporter's (attributes as Nested arrays), in a
    shuffled order: the reader must put them back in time order. Also a `gateway` service of plain chatter."""
    rows: list[str] = []
    for deployment in planted:
        keys = ["host.name", "k8s.pod.name", "k8s.container.name"]
        values = [deployment.host, deployment.pod, deployment.container]
        for second, line in enumerate(deployment.lines()):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start + second))
            rows.append(f"{stamp}\t{deployment.service}\tINFO\t{tsv(line)}\t{tsv_array(keys)}\t{tsv_array(values)}\n")
    for second in range(50):
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start + second))
        rows.append(f"{stamp}\tgateway\tINFO\tproxy: upstream ok in {second} ms\t['host.name']\t['edge-1']\n")
    random.Random(seed).shuffle(rows)  # noqa: S311 (a reproducible shuffle, not a secret)
    return "".join(rows).encode("utf-8"), len(rows)


OTEL_TABLE_1816 = """CREATE TABLE {table} (
    Timestamp DateTime,
    TraceId String,
    SeverityText String,
    ServiceName String,
    Body String,
    ResourceAttributes Nested(key String, value String)
) ENGINE = MergeTree PARTITION BY toDate(Timestamp) ORDER BY (ServiceName, Timestamp)"""

OTEL_COLUMNS = "Timestamp, ServiceName, SeverityText, Body, ResourceAttributes.key, ResourceAttributes.value"
