"""`logdoctor diagnose clickhouse://...` against a real ClickHouse 18.16 on loopback (tests/sources/clickhouse_lab.py).

Three story logs are stored as the rows of an OTel-exporter-shaped table (three deployments, two services, plus
a `gateway` service of chatter), with `GET /health` rows between their lines and the rows inserted shuffled."""

from __future__ import annotations

import http.server
import io
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.errors import CollectionError, UsageError
from logdoctor.parse.keywords import candidate_keywords
from logdoctor.sources.clickhouse import (
    ClickHouseOptions,
    ClickHouseTarget,
    error_text,
    parse_clickhouse_url,
    parse_time,
    quote_identifier,
    quote_string,
    read_clickhouse,
    unescape_tsv,
)
from tests.sources.clickhouse_lab import (
    OTEL_COLUMNS,
    OTEL_TABLE_1816,
    PLANTED,
    READER_PASSWORD,
    ClickHouseLab,
    free_port,
    otel_rows,
    start_clickhouse,
    tsv,
)
from tests.sources.quiet_http import QuietHTTPServer

TABLE = "logs.otel_logs"


@pytest.fixture(scope="module")
def lab() -> Iterator[ClickHouseLab]:
    for server in start_clickhouse():
        server.query("CREATE DATABASE logs")
        server.query(OTEL_TABLE_1816.format(table=TABLE))
        data, _ = otel_rows(PLANTED, int(time.time()) - 1800)
        server.query(f"INSERT INTO {TABLE} ({OTEL_COLUMNS}) FORMAT TabSeparated", data)
        # Old rows: outside the default --since 1h.
        old, _ = otel_rows(PLANTED[:1], int(time.time()) - 3 * 86400, seed=3)
        server.query(f"INSERT INTO {TABLE} ({OTEL_COLUMNS}) FORMAT TabSeparated", old)
        yield server


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def findings(report: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(f["rule"], f["cause"], f["score"]) for f in report["findings"]]


def test_one_report_per_deployment_with_the_findings_of_the_file(lab: ClickHouseLab) -> None:
    code, out, err = run(
        "diagnose", lab.url(TABLE), "--where", "ServiceName IN ('vllm', 'sglang')", "--since", "1h", "--format", "json"
    )

    assert code == 1, err  # the DFlash story has high findings
    data = json.loads(out)
    assert data["report"] == "deployments"  # one object, a diagnosis a deployment inside (docs/json.md)
    reports = data["deployments"]
    assert len(reports) == len(PLANTED)
    for planted, report in zip(PLANTED, reports, strict=True):
        (source,) = report["sources"]
        assert source["kind"] == "clickhouse" and source["path"] == TABLE and source["host"] == "127.0.0.1"
        assert source["name"] == f"otel_logs[{planted.host},{planted.pod},{planted.container},{planted.service}]"
        assert source["prefiltered"] and source["lines"] == len(planted.lines())  # rows stored in the range
        _, file_out, _ = run("diagnose", str(planted.log), "--format", "json")
        from_file = json.loads(file_out)
        assert findings(report) == findings(from_file), planted.log.name
        assert report["verdict"]["kind"] == from_file["verdict"]["kind"]
        assert report["facts"] == from_file["facts"]
        assert report["engine"]["name"] == from_file["engine"]["name"] == planted.service
    assert "4 deployment" not in err and "3 deployment(s)" in err  # --where left the gateway out


def test_rows_arrive_in_time_order_and_only_matching_rows_leave_the_server(lab: ClickHouseLab) -> None:
    keywords = candidate_keywords()
    target = parse_clickhouse_url(lab.url(TABLE))
    options = ClickHouseOptions(since=time.time() - 3600, where="ServiceName != 'gateway'")

    read = read_clickhouse(target, options, keywords)
    got = {d.label: [text for _, text in d.lines] for d in read.deployments}

    stored = 0
    for planted in PLANTED:
        label = f"host={planted.host} pod={planted.pod} container={planted.container} service={planted.service}"
        expected = [line for line in planted.lines() if any(k in line for k in keywords)]
        assert got[label] == expected  # the file's candidate lines, in the file's order
        stored += len(planted.lines())
    assert read.stored == stored
    sent = lab.result_rows(read.rows_query_id)
    assert sent == sum(len(lines) for lines in got.values())
    assert sent < stored * 0.7  # the /health chatter (a third of the rows) stayed on the server


def test_default_since_leaves_old_rows_out_and_all_reads_them(lab: ClickHouseLab) -> None:
    target = parse_clickhouse_url(lab.url(TABLE))
    where = "ServiceName = 'vllm'"
    recent = read_clickhouse(target, ClickHouseOptions(since=parse_time("1h"), where=where), candidate_keywords())
    everything = read_clickhouse(target, ClickHouseOptions(since=parse_time("all"), where=where), candidate_keywords())
    assert everything.stored == recent.stored + len(PLANTED[0].lines())


def test_attributes_as_json_string_and_renamed_columns(lab: ClickHouseLab) -> None:
    table = "logs.app_logs"
    lab.query(f"CREATE TABLE {table} (ts DateTime, svc String, msg String, attrs String) ENGINE = Log")
    start = int(time.time()) - 600
    rows = []
    for second, line in enumerate(PLANTED[0].lines()):
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start + second))
        attrs = json.dumps({"host.name": "gpu-j", "k8s.pod.name": "vllm-j"})
        rows.append(f"{stamp}\tvllm\t{tsv(line)}\t{tsv(attrs)}\n")
    lab.query(f"INSERT INTO {table} FORMAT TabSeparated", "".join(reversed(rows)).encode())

    code, out, err = run(
        "diagnose",
        lab.url(table),
        "--time-column", "ts",
        "--body-column", "msg",
        "--service-column", "svc",
        "--attributes-column", "attrs",
        "--identity-attribute", "host.name",
        "--format", "json",
    )  # fmt: skip

    assert code == 1, err
    report = json.loads(out)
    assert report["sources"][0]["name"] == "app_logs[gpu-j,vllm]"
    assert report["findings"][0]["cause"] == "spec-low-acceptance"


def test_unreachable_server_is_one_line_exit_3() -> None:
    code, out, err = run("diagnose", f"clickhouse://127.0.0.1:{free_port()}/otel_logs")
    assert code == 3
    assert err.count("\n") == 1 and "cannot connect" in err and "Traceback" not in err
    assert out == ""


def test_bad_where_shows_clickhouse_error_on_one_line(lab: ClickHouseLab) -> None:
    code, _, err = run("diagnose", lab.url(TABLE), "--where", "ServiceName = ")
    assert code == 3
    assert err.count("\n") == 1 and "Syntax error" in err and "the query failed" in err
    assert "e.what()" not in err and len(err) < 500


def test_unknown_column_in_where_is_the_servers_word(lab: ClickHouseLab) -> None:
    code, _, err = run("diagnose", lab.url(TABLE), "--where", "NoSuchColumn = 1")
    assert code == 3 and err.count("\n") == 1 and "NoSuchColumn" in err


def test_empty_result_is_one_line_exit_3(lab: ClickHouseLab) -> None:
    code, _, err = run("diagnose", lab.url(TABLE), "--where", "ServiceName = 'nope'")
    assert code == 3
    assert err.strip().endswith("since " + err.strip().rsplit("since ", 1)[1]) and "no rows in logs.otel_logs" in err
    assert err.count("\n") == 1


def test_rows_of_no_known_format_are_not_called_healthy(lab: ClickHouseLab) -> None:
    code, _, err = run("diagnose", lab.url(TABLE), "--where", "ServiceName = 'gateway'")
    assert code == 3 and "0 matching rows of 50 read" in err
    assert "no rows of a vLLM, SGLang or NCCL format in 1 deployment(s)" in err.splitlines()[-1]


def test_missing_table_is_one_line_exit_3(lab: ClickHouseLab) -> None:
    code, _, err = run("diagnose", lab.url("logs.nosuch"))
    assert code == 3 and err.count("\n") == 1 and "table logs.nosuch does not exist" in err


def test_missing_column_names_the_option(lab: ClickHouseLab) -> None:
    code, _, err = run("diagnose", lab.url(TABLE), "--body-column", "Message")
    assert code == 3 and "Message (--body-column)" in err and "it has: Body" in err


def test_password_from_env_or_file_sent_as_headers_and_never_shown(lab: ClickHouseLab, tmp_path: Path) -> None:
    url = lab.url(TABLE)
    env = {"CLICKHOUSE_USER": "reader", "CLICKHOUSE_PASSWORD": READER_PASSWORD}
    code, out, err = run("diagnose", url, "--where", "ServiceName = 'sglang'", "--format", "json", env=env)
    assert code in (0, 1), err
    assert json.loads(out)["engine"]["name"] == "sglang"
    assert READER_PASSWORD not in out + err

    wrong = {"CLICKHOUSE_USER": "reader", "CLICKHOUSE_PASSWORD": "not-" + READER_PASSWORD}
    code, out, err = run("diagnose", url, env=wrong)
    assert code == 3 and err.count("\n") == 1
    assert "authentication failed for user reader" in err and READER_PASSWORD not in out + err

    secret = tmp_path / "pw"
    secret.write_text(READER_PASSWORD + "\n", encoding="utf-8")
    code, out, err = run(
        "diagnose", url, "--clickhouse-user", "reader", "--clickhouse-password-file", str(secret),
        "--where", "ServiceName = 'sglang'", "--format", "json", env={"CLICKHOUSE_PASSWORD": ""},
    )  # fmt: skip
    assert code in (0, 1), err
    assert json.loads(out)["engine"]["name"] == "sglang" and READER_PASSWORD not in out + err

    as_reader = f"clickhouse://reader@127.0.0.1:{lab.http_port}/{TABLE}"  # the URL's user over $CLICKHOUSE_USER
    code, out, err = run(
        "diagnose", as_reader, "--where", "ServiceName = 'sglang'", "--format", "json",
        env={"CLICKHOUSE_USER": "default", "CLICKHOUSE_PASSWORD": READER_PASSWORD},
    )  # fmt: skip
    assert code in (0, 1), err
    assert json.loads(out)["engine"]["name"] == "sglang" and READER_PASSWORD not in out + err

    code, _, err = run("diagnose", url, "--clickhouse-user", "reader", env={"CLICKHOUSE_PASSWORD": ""})
    assert code == 3 and "authentication failed" in err


def test_password_in_the_url_is_refused_unshown(lab: ClickHouseLab) -> None:
    url = f"clickhouse://reader:{READER_PASSWORD}@127.0.0.1:{lab.http_port}/{TABLE}"
    code, out, err = run("diagnose", url)
    assert code == 2 and "a password in the URL is refused" in err
    assert READER_PASSWORD not in out + err and err.count("\n") == 1


def test_one_bad_table_keeps_the_other_tables_reports(lab: ClickHouseLab) -> None:
    code, out, err = run(
        "diagnose", lab.url("logs.nosuch"), lab.url(TABLE), "--where", "ServiceName = 'vllm'", "--format", "json"
    )
    assert code == 3
    reports = json.loads(out)["deployments"]
    assert len(reports) == 3  # the failed table, then the two vLLM deployments
    assert "does not exist" in reports[0]["errors"][0]["error"]
    assert [r["engine"]["name"] for r in reports[1:]] == ["vllm", "vllm"]
    assert "logs.nosuch: error: table logs.nosuch does not exist" in err


def test_text_output_has_a_section_per_deployment_and_the_fleet_table(lab: ClickHouseLab) -> None:
    code, out, _ = run("diagnose", lab.url(TABLE), "--where", "ServiceName != 'gateway'")
    assert code == 1
    assert out.count("spec-low-acceptance") >= 2 and "3 deployments" in out  # the fleet table of emit_many
    for planted in PLANTED:
        assert f"pod={planted.pod}" in out


def test_store_options_need_a_store_target_and_targets_are_not_mixed(lab: ClickHouseLab) -> None:
    code, _, err = run("diagnose", str(PLANTED[0].log), "--where", "1")
    assert code == 2 and "--where only apply to clickhouse:// targets" in err
    code, _, err = run("diagnose", lab.url(TABLE), str(PLANTED[0].log))
    assert code == 2 and "give clickhouse:// targets on their own" in err
    code, _, err = run("diagnose", lab.url(TABLE), "--save", "somewhere")
    assert code == 2 and "--save only apply to host targets" in err


def test_more_rows_than_max_rows_is_partial(lab: ClickHouseLab) -> None:
    code, out, err = run(
        "diagnose", lab.url(TABLE), "--where", "ServiceName = 'sglang'", "--max-rows", "10", "--format", "json"
    )
    assert code == 3
    report = json.loads(out)
    assert report["verdict"]["healthy"] is False
    assert "more than --max-rows 10 matching rows: read the earliest" in report["errors"][0]["error"]
    assert "incomplete: more than --max-rows 10" in err


# --- the pieces, against the same server where SQL is involved ------------------------------------------


def test_quoted_values_come_back_unchanged_from_the_server(lab: ClickHouseLab) -> None:
    nasty = "it's a \\ back'slash\t\n`tick` ' OR 1 --"
    answer = lab.query(f"SELECT {quote_string(nasty)} AS {quote_identifier('we`ird')} FORMAT TSVWithNames")
    name, value = answer.removesuffix("\n").split("\n")
    assert (unescape_tsv(name), unescape_tsv(value)) == ("we`ird", nasty)


def test_url_forms() -> None:
    assert parse_clickhouse_url("clickhouse://h:9123/otel.otel_logs") == ClickHouseTarget(
        "h", 9123, "otel_logs", "otel"
    )
    assert parse_clickhouse_url("clickhouse://ro@h/db/t") == ClickHouseTarget("h", 8123, "t", "db", "ro")
    assert parse_clickhouse_url("clickhouse://h/t").display == "clickhouse://h:8123/t"
    for bad in ("clickhouse://h", "clickhouse://h/a/b/c", "clickhouse://h/t?x=1", "clickhouse://h/t;drop"):
        with pytest.raises(UsageError):
            parse_clickhouse_url(bad)
    with pytest.raises(UsageError, match="password") as refused:
        parse_clickhouse_url("clickhouse://u:hunter2@h/t")
    assert "hunter2" not in str(refused.value)


def test_times() -> None:
    now = 1_800_000_000.0
    assert parse_time("30m", now) == now - 1800
    assert parse_time("2d", now) == now - 2 * 86400
    assert parse_time("2026-12-01T10:00:00Z", now) == parse_time("2026-12-01 10:00:00", now) == 1796119200
    assert parse_time("all", now) is None
    with pytest.raises(UsageError, match="not a time"):
        parse_time("yesterday", now)


def test_error_text_of_old_and_new_servers() -> None:
    old = "Code: 60, e.displayText() = DB::Exception: Table default.x doesn't exist., e.what() = DB::Exception\n"
    new = "Code: 60. DB::Exception: Table default.x does not exist. (UNKNOWN_TABLE) (version 24.3.1.1)\n"
    assert error_text(old) == (60, "Table default.x doesn't exist.")
    assert error_text(new) == (60, "Table default.x does not exist. (UNKNOWN_TABLE)")
    assert error_text("Code: 62, e.displayText() = DB::Exception: bad \x1b[31mred\n")[1].count("\x1b") == 0


def test_collection_error_for_a_closed_port_names_the_target() -> None:
    target = parse_clickhouse_url(f"clickhouse://127.0.0.1:{free_port()}/t")
    with pytest.raises(CollectionError, match=r"^clickhouse://127\.0\.0\.1:\d+/t: cannot connect"):
        read_clickhouse(target, ClickHouseOptions(timeout=5), ["x"])


# --- an error after the answer began ----------------------------------------------------------------------


class _MidStreamFailure(http.server.BaseHTTPRequestHandler):
    """A loopback stand-in for the one thing 18.16 will not do on demand: fail after it has begun to answer.
    ClickHouse then has already sent `200 OK` and appends its exception text to the rows (constructed from the
    18.16 format the real server's errors above show)."""

    def do_POST(self) -> None:
        sql = self.rfile.read(int(self.headers["Content-Length"])).decode()
        if "system.columns" in sql:
            body = "Timestamp\tDateTime\nBody\tString\nServiceName\tString\nResourceAttributes.key\tArray(String)\n"
            body += "ResourceAttributes.value\tArray(String)\n"
        elif "count()" in sql:
            body = "gpu-a\tvllm-0\tvllm\tvllm\t500\n"
        else:
            lines = PLANTED[0].log.read_text(encoding="utf-8").splitlines()[:40]
            body = "".join(f"gpu-a\tvllm-0\tvllm\tvllm\t{tsv(line)}\n" for line in lines)
            body += "Code: 241, e.displayText() = DB::Exception: Memory limit (for query) exceeded, e.what() = DB::Exception\n"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_an_error_after_rows_arrived_keeps_them_marked_partial() -> None:
    server = QuietHTTPServer(("127.0.0.1", 0), _MidStreamFailure)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"clickhouse://127.0.0.1:{server.server_address[1]}/otel_logs"
        code, out, err = run("diagnose", url, "--format", "json")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 3
    report = json.loads(out)
    assert report["verdict"]["healthy"] is False
    assert "Memory limit (for query) exceeded" in report["errors"][0]["error"]
    assert report["engine"]["name"] == "vllm"  # the rows that came are diagnosed
    assert "e.what()" not in out
    assert "host=gpu-a pod=vllm-0 container=vllm service=vllm: incomplete: the query failed while answering" in err


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Records every request it gets; answers 302 to another address when `redirect_to` is set."""

    seen: ClassVar[list[str | None]]  # the password header of each request
    redirect_to: ClassVar[str | None] = None

    def do_POST(self) -> None:
        type(self).seen.append(self.headers.get("X-ClickHouse-Key"))
        if self.redirect_to:
            self.send_response(302)
            self.send_header("Location", self.redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


def _serve(handler: type[http.server.BaseHTTPRequestHandler]) -> http.server.ThreadingHTTPServer:
    server = QuietHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_the_password_never_follows_a_redirect_or_goes_to_a_proxy(lab: ClickHouseLab) -> None:
    class Target(_Recorder):
        seen: ClassVar[list[str | None]] = []

    class Redirector(_Recorder):
        seen: ClassVar[list[str | None]] = []

    class Proxy(_Recorder):
        seen: ClassVar[list[str | None]] = []

    target, redirector, proxy = _serve(Target), _serve(Redirector), _serve(Proxy)
    Redirector.redirect_to = f"http://127.0.0.1:{target.server_address[1]}/"
    env = {"CLICKHOUSE_USER": "reader", "CLICKHOUSE_PASSWORD": READER_PASSWORD}
    try:
        code, _, err = run("diagnose", f"clickhouse://127.0.0.1:{redirector.server_address[1]}/t", env=env)
        assert code == 3 and "HTTP 302" in err and err.count("\n") == 1
        assert len(Redirector.seen) == 1 and Redirector.seen == [READER_PASSWORD]
        assert Target.seen == []  # the redirect was not followed

        via_proxy = {**env, "http_proxy": f"http://127.0.0.1:{proxy.server_address[1]}", "no_proxy": ""}
        code, _, err = run("diagnose", lab.url(TABLE), "--where", "ServiceName = 'sglang'", env=via_proxy)
        assert code in (0, 1), err
        assert Proxy.seen == []  # the environment's proxy was not used
    finally:
        for server in (target, redirector, proxy):
            server.shutdown()
            server.server_close()


def test_diagnose_clickhouse_is_the_one_url_handler(lab: ClickHouseLab) -> None:
    from rich.console import Console

    from logdoctor.app.stores import StoreOptions, diagnose_clickhouse
    from logdoctor.engine.rules import load_rules

    err = io.StringIO()
    found = diagnose_clickhouse(
        lab.url(TABLE),
        StoreOptions(where="ServiceName = 'vllm'"),
        lambda: load_rules((), builtin=True),
        engine="auto",
        suppressions=None,
        err=Console(file=err),
    )
    assert [d.engine.name for d in found.diagnoses] == ["vllm", "vllm"] and not found.failed
    assert found.names[0] == "host=gpu-a pod=vllm-dflash-0 container=vllm service=vllm"
    assert found.diagnoses[0].findings[0].cause == "spec-low-acceptance"
    assert "2 deployment(s)" in err.getvalue()


# --- HTTPS ------------------------------------------------------------------------------------------------


def test_https_with_the_servers_ca_reads_the_same_deployments(lab: ClickHouseLab) -> None:
    where = ("--where", "ServiceName IN ('vllm', 'sglang')", "--format", "json")
    code, out, err = run("diagnose", lab.tls_url(TABLE), "--clickhouse-ca-file", str(lab.cert), *where)
    assert code == 1, err
    over_tls = json.loads(out)["deployments"]
    _, plain_out, _ = run("diagnose", lab.url(TABLE), *where)
    plain = json.loads(plain_out)["deployments"]
    assert [findings(r) for r in over_tls] == [findings(r) for r in plain]
    assert [r["sources"][0]["name"] for r in over_tls] == [r["sources"][0]["name"] for r in plain]
    assert f"clickhouses://127.0.0.1:{lab.https_port}/{TABLE}" in err  # progress names the HTTPS target


def test_https_by_name_checks_the_name_in_the_certificate(lab: ClickHouseLab) -> None:
    # the certificate names localhost and 127.0.0.1: both verify
    code, _, err = run(
        "diagnose", lab.tls_url(TABLE, host="localhost"), "--clickhouse-ca-file", str(lab.cert), "--since", "all"
    )
    assert code == 1, err


def test_https_to_a_name_the_certificate_does_not_hold_is_refused(lab: ClickHouseLab) -> None:
    # 127.0.0.2 reaches the same server, but the certificate names 127.0.0.1 and localhost only
    code, out, err = run("diagnose", lab.tls_url(TABLE, host="127.0.0.2"), "--clickhouse-ca-file", str(lab.cert))
    assert code == 3 and not out
    (line,) = err.strip().splitlines()
    assert "the server's TLS certificate is for another name (IP address mismatch" in line, line
    assert "'127.0.0.2'" in line and "--clickhouse-ca-file" not in line  # no CA file would help
    code, _, err = run("diagnose", f"clickhouse://127.0.0.2:{lab.http_port}/{TABLE}", "--since", "all")
    assert code == 1, err  # over plain HTTP that address answers: it is the name check that refused


def test_https_without_the_ca_is_refused_on_one_line(lab: ClickHouseLab) -> None:
    code, out, err = run("diagnose", lab.tls_url(TABLE))  # the system store does not trust a self-signed cert
    assert code == 3 and not out
    (line,) = err.strip().splitlines()
    assert "the server's TLS certificate was not accepted (self-signed certificate)" in line
    assert "--clickhouse-ca-file" in line and "Traceback" not in err


def test_https_to_the_plain_http_port_says_the_handshake_failed(lab: ClickHouseLab) -> None:
    url = f"clickhouses://127.0.0.1:{lab.http_port}/{TABLE}"
    code, _, err = run("diagnose", url, "--clickhouse-ca-file", str(lab.cert))
    assert code == 3
    (line,) = err.strip().splitlines()
    assert "the TLS handshake failed" in line and "https_port" in line


def test_ca_file_errors_are_usage_errors(lab: ClickHouseLab, tmp_path: Path) -> None:
    code, _, err = run("diagnose", lab.tls_url(TABLE), "--clickhouse-ca-file", str(tmp_path / "nope.pem"))
    assert code == 2 and "no such file" in err
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n", encoding="utf-8")
    code, _, err = run("diagnose", lab.tls_url(TABLE), "--clickhouse-ca-file", str(junk))
    assert code == 2 and "cannot read it" in err
    code, _, err = run("diagnose", lab.url(TABLE), "--clickhouse-ca-file", str(lab.cert))
    assert code == 2 and "HTTPS targets" in err


def test_https_url_forms() -> None:
    target = parse_clickhouse_url("clickhouses://h/otel.otel_logs")
    assert (target.port, target.tls, target.base_url) == (8443, True, "https://h:8443/")
    assert target.display == "clickhouses://h:8443/otel.otel_logs"
    assert parse_clickhouse_url("clickhouse+https://ro@h:9443/t").display == "clickhouse+https://ro@h:9443/t"
    assert not parse_clickhouse_url("clickhouse://h/t").tls


# --- diff with a side in the store ------------------------------------------------------------------------


def comparable(diff_json: str) -> dict[str, Any]:
    """A diff report without what names its sources (file paths vs table rows)."""
    data = json.loads(diff_json)
    return {k: data[k] for k in ("gap", "differences", "verdict")} | {"findings": findings(data)}


def test_diff_of_two_deployments_in_one_table_is_the_diff_of_their_files(lab: ClickHouseLab) -> None:
    fast, slow = PLANTED[1], PLANTED[0]  # the healthy MTP deployment, the DFlash one
    url = lab.url(TABLE)
    code, out, err = run(
        "diff", f"{url}#pod={fast.pod}", f"{url}#pod={slow.pod},host={slow.host}", "--since", "all", "--format", "json"
    )
    assert code == 1, err  # the candidate has high findings
    _, files_out, _ = run("diff", str(fast.log), str(slow.log), "--format", "json")
    assert comparable(out) == comparable(files_out)
    data = json.loads(out)
    assert [s["name"] for s in data["baseline"]["sources"]] == [
        f"otel_logs[{fast.host},{fast.pod},{fast.container},{fast.service}]"
    ]
    # a store side and a file side mix; HTTPS works the same
    code, mixed, err = run(
        "diff", f"{lab.tls_url(TABLE)}#pod={fast.pod}", str(slow.log), "--clickhouse-ca-file", str(lab.cert),
        "--since", "all", "--format", "json",
    )  # fmt: skip
    assert code == 1, err
    assert comparable(mixed) == comparable(files_out)


def test_diff_side_of_several_deployments_asks_which(lab: ClickHouseLab) -> None:
    code, out, err = run("diff", lab.url(TABLE), str(PLANTED[0].log), "--where", "ServiceName = 'vllm'")
    assert code == 2 and not out
    *progress, line = err.strip().splitlines()  # the store's progress lines, then the error
    assert line.startswith("logdoctor: error: baseline: ") and all("error" not in p for p in progress)
    assert "2 deployments match" in line and "#host=gpu-a" in line
    assert "pod=vllm-dflash-0" in line and "pod=vllm-mtp-0" in line
    code, _, err = run("diff", f"{lab.url(TABLE)}#pod=nope", str(PLANTED[0].log))
    assert code == 2 and "no deployment matches #pod=nope" in err
    code, _, err = run("diff", f"{lab.url(TABLE)}#pod", str(PLANTED[0].log))
    assert code == 2 and "#KEY=VALUE" in err


def test_diff_store_side_errors_are_one_line(lab: ClickHouseLab) -> None:
    code, _, err = run("diff", f"clickhouse://127.0.0.1:{free_port()}/{TABLE}#pod=x", str(PLANTED[0].log))
    assert code == 3 and "cannot connect" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("diff", f"{lab.url(TABLE)}#pod=vllm-mtp-0", str(PLANTED[0].log), str(PLANTED[1].log))
    assert code == 2  # three targets: diff compares two
    code, _, err = run("diff", "--baseline", lab.url(TABLE), "--baseline", str(PLANTED[0].log), str(PLANTED[1].log))
    assert code == 2 and "URL targets on their own" in err
