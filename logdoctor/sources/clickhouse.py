"""Logs in ClickHouse as a source: the rows of a logs table, one line source a deployment, read over HTTP.

    logdoctor diagnose clickhouse://ch.internal:8123/otel.otel_logs --where "ServiceName = 'vllm'" --since 1h
    logdoctor diagnose clickhouses://ch.internal:8443/otel.otel_logs ...    HTTPS, the certificate verified

The table defaults to the OpenTelemetry collector's ClickHouse exporter schema (`Timestamp`, `Body`, `ServiceName`,
`ResourceAttributes`); every column can be renamed (`ClickHouseOptions`). Three queries, all plain SQL over the HTTP
interface that ClickHouse 18.16 and current releases share (docs/sources.md):

1. `system.columns` (with `system.functions`): the table exists, its columns, how the attributes are stored (a
   `Map`, a `Nested`/two arrays, or a JSON `String`), and whether `multiSearchAny` exists (18.16 lacks it).
2. `count()` per deployment over the time range and `--where`: the rows stored, and an empty result told apart
   from a quiet one before the large query runs.
3. The rows that hold a parser keyword (the same literal strings the SSH collector greps for, pushed down as
   `multiSearchAny(Body, [...])` or OR-ed `position(Body, ...) > 0`), ordered by deployment then time, streamed
   as TabSeparated one line at a time: only matching rows leave the server and none is held here.

A deployment is the rows that share the identity attributes (`host.name`, `k8s.pod.name`, `k8s.container.name`)
and the service. Nothing here knows a log format: the caller passes the keywords in.
"""

from __future__ import annotations

import itertools
import re
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, Any

from logdoctor.errors import CollectionError, UsageError
from logdoctor.redact import redact
from logdoctor.sanitize import one_line
from logdoctor.sources.limits import DEFAULT_MAX_ROWS  # matching rows kept per deployment

TLS_SCHEMES = ("clickhouses", "clickhouse+https")  # HTTPS: the server's certificate is verified
SCHEMES = ("clickhouse", *TLS_SCHEMES)
DEFAULT_PORT = 8123
DEFAULT_TLS_PORT = 8443  # ClickHouse's https_port in its shipped config.xml
DEFAULT_IDENTITY = ("host.name", "k8s.pod.name", "k8s.container.name")
# Short names of the identity attributes in report headings (`host=gpu-3 pod=vllm-0`); others keep their key.
SHORT_NAMES = {"host.name": "host", "k8s.pod.name": "pod", "k8s.container.name": "container"}
MAX_BODY_BYTES = 1024 * 1024  # a Body is cut here, like a local line (sources.local.MAX_LINE_BYTES)
MULTI_SEARCH_NEEDLES = 200  # multiSearchAny takes at most 255 needles a call: several calls are OR-ed
ERROR_CHARS = 300  # ClickHouse's error text is cut here (18.16 lists every token it expected)
DEFAULT_TIMEOUT = 30.0
DEFAULT_READ_TIMEOUT = 300.0


@dataclass(frozen=True)
class ClickHouseTarget:
    """`clickhouse://[user@]host[:port]/[database.]table` (or `/database/table`): the HTTP interface;
    `clickhouses://` (or `clickhouse+https://`): the HTTPS one."""

    host: str
    port: int
    table: str
    database: str | None = None
    user: str | None = None
    scheme: str = "clickhouse"

    @property
    def tls(self) -> bool:
        return self.scheme in TLS_SCHEMES

    @property
    def display(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        return f"{self.scheme}://{user}{host}:{self.port}/{self.table_name}"

    @property
    def table_name(self) -> str:
        return f"{self.database}.{self.table}" if self.database else self.table

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/"


def is_clickhouse_url(target: str) -> bool:
    return target.lower().startswith(tuple(f"{s}://" for s in SCHEMES))


_NAME_RE = re.compile(r"[A-Za-z0-9_.\-]+")


def parse_clickhouse_url(url: str) -> ClickHouseTarget:
    """The target of a `clickhouse://` URL; a password in it is refused (it would sit in shell history and in
    every process listing: CLICKHOUSE_PASSWORD or --clickhouse-password-file carry it instead)."""
    shown = redact(url)
    try:
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port or (DEFAULT_TLS_PORT if scheme in TLS_SCHEMES else DEFAULT_PORT)
    except ValueError as exc:
        raise UsageError(f"{one_line(shown)}: not a clickhouse://HOST[:PORT]/TABLE URL ({exc})") from None
    if parts.password is not None:
        raise UsageError(
            f"{one_line(shown)}: a password in the URL is refused (it would be visible in shell history and process "
            "lists): set CLICKHOUSE_PASSWORD or give --clickhouse-password-file FILE"
        )
    if parts.query or parts.fragment:
        raise UsageError(f"{one_line(shown)}: the URL takes no ?query or #fragment (see `logdoctor diagnose --help`)")
    if not parts.hostname:
        raise UsageError(f"{one_line(shown)}: no host (clickhouse://HOST[:PORT]/TABLE)")
    path = [p for p in urllib.parse.unquote(parts.path).split("/") if p]
    if len(path) == 1 and "." in path[0]:
        path = path[0].split(".", 1)
    if not path or len(path) > 2 or not all(_NAME_RE.fullmatch(p) for p in path):
        raise UsageError(
            f"{one_line(shown)}: name the table as /TABLE, /DATABASE.TABLE or /DATABASE/TABLE "
            "(letters, digits, _ . -), e.g. clickhouse://localhost:8123/otel.otel_logs"
        )
    database, table = (path[0], path[1]) if len(path) == 2 else (None, path[0])
    return ClickHouseTarget(
        host=parts.hostname, port=port, table=table, database=database, user=parts.username or None, scheme=scheme
    )


@dataclass(frozen=True)
class ClickHouseOptions:
    """What to read from the table (the `diagnose` options of docs/sources.md)."""

    where: str | None = None  # the user's own SQL condition, passed through in parentheses
    since: float | None = None  # epoch seconds
    until: float | None = None
    time_column: str = "Timestamp"
    body_column: str = "Body"
    service_column: str = "ServiceName"
    attributes_column: str = "ResourceAttributes"  # "" : no attributes, the service alone is the identity
    identity_attributes: tuple[str, ...] = DEFAULT_IDENTITY
    user: str | None = None  # --clickhouse-user: over the URL's user
    default_user: str | None = None  # $CLICKHOUSE_USER: when neither names one
    password: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT  # seconds to connect and describe the table
    read_timeout: float = DEFAULT_READ_TIMEOUT  # seconds the count and the rows query may go quiet
    max_rows: int = DEFAULT_MAX_ROWS
    ca_file: str | None = None  # --clickhouse-ca-file: the CA (or the certificate) an HTTPS server is checked with


# --- SQL ------------------------------------------------------------------------------------------------


def quote_string(value: str) -> str:
    """A ClickHouse string literal: every value logdoctor puts into SQL goes through here."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\t", "\\t")
    return "'" + escaped.replace("\r", "\\r").replace("\0", "\\0") + "'"


def quote_identifier(name: str) -> str:
    """A backquoted identifier (a column or table name from an option or the URL)."""
    if not name or "\0" in name or "\n" in name:
        raise UsageError(f"{name!r} is not a column or table name")
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


@dataclass(frozen=True)
class TableShape:
    """What `system.columns` said about the table."""

    columns: dict[str, str]  # name -> type
    multi_search: bool  # multiSearchAny exists (not in 18.16)
    json_extract: bool = False  # JSONExtractString exists (not in 18.16)

    def attribute_expression(self, column: str, key: str) -> str:
        """How one attribute is read: `col['k']` (Map), `col.value[indexOf(col.key, 'k')]` (Nested or two
        arrays, as 18.16 and SigNoz's older tables store them), `visitParamExtractString(col, 'k')` (JSON)."""
        kind = self.columns.get(column, "")
        bare = kind.removeprefix("LowCardinality(").removeprefix("Nullable(")
        if bare.startswith("Map("):
            return f"{quote_identifier(column)}[{quote_string(key)}]"
        if bare.startswith("String"):
            if self.json_extract:
                return f"JSONExtractString({quote_identifier(column)}, {quote_string(key)})"
            # 18.16 has only visitParam*, which wants `"key":value` with no space after the colon.
            pattern, replacement = quote_string('"[ ]*:[ ]*'), quote_string('":')
            spaced = f"replaceRegexpAll({quote_identifier(column)}, {pattern}, {replacement})"
            return f"visitParamExtractString({spaced}, {quote_string(key)})"
        keys, values = self.attribute_arrays(column) or ("", "")
        return f"{quote_identifier(values)}[indexOf({quote_identifier(keys)}, {quote_string(key)})]"

    def attribute_arrays(self, column: str) -> tuple[str, str] | None:
        for keys, values in (("key", "value"), ("keys", "values"), ("_key", "_value"), ("_keys", "_values")):
            sep = "" if keys.startswith("_") else "."
            pair = (f"{column}{sep}{keys}", f"{column}{sep}{values}")
            if all(self.columns.get(name, "").startswith("Array(") for name in pair):
                return pair
        return None

    def has_attributes(self, column: str) -> bool:
        kind = self.columns.get(column, "")
        bare = kind.removeprefix("LowCardinality(").removeprefix("Nullable(")
        return bare.startswith(("Map(", "String")) or self.attribute_arrays(column) is not None


def keyword_condition(body: str, keywords: Sequence[str], multi_search: bool) -> str:
    """Rows whose body holds any keyword: `multiSearchAny` where the server has it, else OR-ed `position`."""
    pieces = sorted({piece for keyword in keywords for piece in keyword.split("\n") if piece})
    if not pieces:
        return "1"
    column = quote_identifier(body)
    if multi_search:
        chunks = [pieces[i : i + MULTI_SEARCH_NEEDLES] for i in range(0, len(pieces), MULTI_SEARCH_NEEDLES)]
        calls = [f"multiSearchAny({column}, [{', '.join(quote_string(p) for p in chunk)}])" for chunk in chunks]
        return " OR ".join(calls)
    return " OR ".join(f"position({column}, {quote_string(p)}) > 0" for p in pieces)


@dataclass(frozen=True)
class Queries:
    """The SQL of one read (kept for tests and `--debug`; user SQL appears only inside `(...)`)."""

    identity_names: tuple[str, ...]  # heading names of the identity parts, the service last
    counts: str
    rows: str


def build_queries(
    target: ClickHouseTarget, options: ClickHouseOptions, shape: TableShape, keywords: Sequence[str]
) -> Queries:
    table = (
        f"{quote_identifier(target.database)}.{quote_identifier(target.table)}"
        if target.database
        else quote_identifier(target.table)
    )
    identity: list[tuple[str, str]] = []
    if options.attributes_column:
        for key in options.identity_attributes:
            identity.append((SHORT_NAMES.get(key, key), shape.attribute_expression(options.attributes_column, key)))
    identity.append(("service", f"toString({quote_identifier(options.service_column)})"))
    aliases = [f"ld_id{i}" for i in range(len(identity))]
    selected = ", ".join(f"{expr} AS {alias}" for (_, expr), alias in zip(identity, aliases, strict=True))
    conditions: list[str] = []
    time_column = quote_identifier(options.time_column)
    if options.since is not None:
        conditions.append(f"{time_column} >= toDateTime({int(options.since)})")
    if options.until is not None:
        conditions.append(f"{time_column} < toDateTime({int(options.until) + 1})")
    if options.where:
        conditions.append(f"({options.where}\n)")  # the newline ends a `--` comment the user's SQL may end with
    base = " AND ".join(conditions) or "1"
    group = ", ".join(aliases)
    # S608: every name and value of ours is quoted above; `--where` is the user's own SQL, by design.
    counts = (
        f"SELECT {selected}, count() FROM {table} WHERE {base} GROUP BY {group} ORDER BY {group} FORMAT TabSeparated"  # noqa: S608
    )
    body = f"substring(toString({quote_identifier(options.body_column)}), 1, {MAX_BODY_BYTES})"
    match = keyword_condition(options.body_column, keywords, shape.multi_search)
    rows = (
        f"SELECT {selected}, {body} FROM {table} WHERE ({base}) AND ({match}) "  # noqa: S608
        f"ORDER BY {group}, {time_column} LIMIT {options.max_rows + 1} BY {group} FORMAT TabSeparated"
    )
    return Queries(tuple(name for name, _ in identity), counts, rows)


# --- HTTP ------------------------------------------------------------------------------------------------

_TSV_ESCAPES = {"b": "\b", "f": "\f", "r": "\r", "n": "\n", "t": "\t", "0": "\0", "'": "'", "\\": "\\", "N": ""}
_TSV_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)
# 18.16: `Code: 60, e.displayText() = DB::Exception: Table x doesn't exist., e.what() = DB::Exception`;
# current: `Code: 60. DB::Exception: Table x does not exist. (UNKNOWN_TABLE) (version 24.3.1.1)`.
_ERROR_RE = re.compile(r"^Code: (?P<code>\d+)[.,] (?:e\.displayText\(\) = )?(?:DB::Exception: )?(?P<text>.*)", re.S)
AUTH_CODES = {192, 193, 194, 516}  # unknown user, wrong password, password required, authentication failed
UNKNOWN_TABLE_CODES = {60, 81}  # unknown table, unknown database


def unescape_tsv(field_text: str) -> str:
    return _TSV_ESCAPE_RE.sub(lambda m: _TSV_ESCAPES.get(m.group(1), m.group(1)), field_text)


def error_text(raw: str) -> tuple[int | None, str]:
    """ClickHouse's error as (code, one sanitised line): the `e.what()` tail and the version note are dropped."""
    text = raw.strip()
    code: int | None = None
    m = _ERROR_RE.match(text)
    if m:
        code = int(m.group("code"))
        text = m.group("text")
    text = re.sub(r",? e\.what\(\) = DB::Exception\s*$", "", text)
    text = re.sub(r"\s*\(version [^)]*\)\s*$", "", text)
    text = one_line(redact(text))
    if len(text) > ERROR_CHARS:
        text = text[: ERROR_CHARS - 3] + "..."
    return code, text


def _opener(ca_file: str | None = None) -> Any:
    """urllib without the environment's proxies and without redirects: the password header goes to the named
    server and nowhere else (a proxy or a redirect target would receive it too). HTTPS checks the server's
    certificate and name against `ca_file`, else the system's CA store (ssl.create_default_context)."""
    import ssl
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # urllib then raises the 3xx as an HTTPError: reported as the query's failure

    context = ssl.create_default_context(cafile=ca_file)
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}), NoRedirect(), urllib.request.HTTPSHandler(context=context)
    )


def tls_problem(exc: BaseException) -> str | None:
    """One line for a TLS failure (a certificate not trusted, a name that does not match, a server that does not
    speak TLS on that port), or None for any other error."""
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        reason = exc.verify_message or exc.reason or "not trusted"
        if exc.verify_code in (62, 64):  # X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH
            return (
                f"the server's TLS certificate is for another name ({reason.rstrip('.')}): connect by a name "
                "its subjectAltName holds"
            )
        return (
            f"the server's TLS certificate was not accepted ({reason}): give the CA that signed it with "
            "--clickhouse-ca-file FILE"
        )
    if isinstance(exc, ssl.SSLError):
        return f"the TLS handshake failed ({exc.reason or exc}; is the port ClickHouse's https_port?)"
    return None


def check_ca_file(ca_file: str) -> None:
    """A --clickhouse-ca-file that cannot be read or holds no certificate: a usage error, before any query."""
    import ssl

    try:
        ssl.create_default_context(cafile=ca_file)
    except FileNotFoundError:
        raise UsageError(f"--clickhouse-ca-file {ca_file}: no such file") from None
    except (OSError, ssl.SSLError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not a PEM certificate file"
        raise UsageError(f"--clickhouse-ca-file {ca_file}: cannot read it ({reason})") from None


class ClickHouseClient:
    """Queries over the HTTP interface: POST the SQL, credentials in X-ClickHouse-User/-Key headers (never in a
    URL), the answer read line by line."""

    def __init__(self, target: ClickHouseTarget, options: ClickHouseOptions) -> None:
        self.target = target
        self.options = options
        self.user = options.user or target.user or options.default_user

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "text/plain; charset=utf-8", "User-Agent": "logdoctor"}
        if self.user:
            headers["X-ClickHouse-User"] = self.user
        if self.options.password is not None:
            headers["X-ClickHouse-Key"] = self.options.password
        return headers

    def open(self, sql: str, query_id: str | None = None, timeout: float | None = None) -> IO[bytes]:
        # Imported here: http.client and urllib.request cost `logdoctor --version` tens of milliseconds.
        import http.client
        import urllib.error
        import urllib.request

        params = {"database": self.target.database} if self.target.database else {}
        if query_id:
            params["query_id"] = query_id
        url = self.target.base_url + ("?" + urllib.parse.urlencode(params) if params else "")
        # S310: the URL is always http(s)://HOST:PORT/ built from a parsed clickhouse:// target.
        request = urllib.request.Request(url, data=sql.encode("utf-8"), headers=self._headers(), method="POST")  # noqa: S310
        where = self.target.display
        try:
            opener = _opener(self.options.ca_file if self.target.tls else None)
            response: IO[bytes] = opener.open(request, timeout=timeout or self.options.timeout)
            return response
        except urllib.error.HTTPError as exc:
            body = exc.read(64 * 1024).decode("utf-8", "replace")
            exc.close()
            code, text = error_text(body or f"HTTP {exc.code}")
            if code in AUTH_CODES or exc.code in (401, 403):
                who = f"user {self.user}" if self.user else "user default"
                raise CollectionError(
                    f"{where}: authentication failed for {one_line(who)} ({text}); set CLICKHOUSE_USER and "
                    "CLICKHOUSE_PASSWORD or --clickhouse-user/--clickhouse-password-file"
                ) from None
            if code in UNKNOWN_TABLE_CODES:
                raise CollectionError(f"{where}: {text}") from None
            raise CollectionError(f"{where}: the query failed: {text}") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            tls = tls_problem(reason) if isinstance(reason, BaseException) else None
            if tls is not None:
                raise CollectionError(f"{where}: {tls}") from None
            detail = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
            if isinstance(reason, TimeoutError):
                detail = f"no answer within {timeout or self.options.timeout:g}s"
                if self.target.tls:  # urllib wraps only the connect and send: here, the handshake got no answer
                    raise CollectionError(
                        f"{where}: cannot connect, or the TLS handshake failed ({detail}; is the port ClickHouse's https_port?)"
                    ) from None
            raise CollectionError(f"{where}: cannot connect ({one_line(detail)})") from None
        except TimeoutError:
            raise CollectionError(f"{where}: no answer within {timeout or self.options.timeout:g}s") from None
        except (OSError, http.client.HTTPException) as exc:
            tls = tls_problem(exc)
            if tls is not None:
                raise CollectionError(f"{where}: {tls}") from None
            raise CollectionError(f"{where}: cannot connect ({one_line(str(exc) or type(exc).__name__)})") from None

    def rows(
        self, sql: str, width: int, query_id: str | None = None, timeout: float | None = None
    ) -> Iterator[list[str]]:
        """The TabSeparated rows of a query, `width` fields each, as they arrive. An error ClickHouse writes
        after it has begun the answer (the status is already 200) ends the rows with a CollectionError."""
        import http.client

        where = self.target.display
        with self.open(sql, query_id, timeout) as response:
            while True:
                try:
                    raw = response.readline(MAX_BODY_BYTES + 64 * 1024)
                except TimeoutError:
                    quiet = timeout or self.options.timeout
                    raise CollectionError(f"{where}: the answer stopped for {quiet:g}s") from None
                except (OSError, http.client.HTTPException) as exc:
                    raise CollectionError(f"{where}: the answer broke off ({one_line(str(exc))})") from None
                if not raw:
                    return
                line = raw.decode("utf-8", "replace").rstrip("\n")
                fields = line.split("\t")
                if len(fields) != width:
                    if line.startswith("Code: "):
                        rest = response.read(64 * 1024).decode("utf-8", "replace")
                        _, text = error_text(line + "\n" + rest)
                        raise CollectionError(f"{where}: the query failed while answering: {text}")
                    raise CollectionError(f"{where}: an answer row with {len(fields)} fields, not {width}")
                yield [unescape_tsv(f) for f in fields]


# --- reading deployments ------------------------------------------------------------------------------


@dataclass
class Deployment:
    """The rows of one deployment: `lines` are numbered bodies in time order, arriving while they are read."""

    identity: tuple[str, ...]
    label: str  # `host=gpu-3 pod=vllm-0 container=vllm service=vllm`
    name: str  # the source name evidence cites: `otel_logs[gpu-3,vllm-0,vllm,vllm]` (attribute values, service last;
    # no `/`: reports show a path's last part)
    stored: int | None  # rows in range before the keyword filter (None: arrived after the count)
    lines: Iterator[tuple[int, str]]
    rows: int = 0  # matching rows received
    bytes_read: int = 0
    cut: bool = False  # more than max_rows matched


@dataclass
class ClickHouseRead:
    """One table's read: its deployments (a generator: each one's lines are consumed before the next), the
    queries run, and what was received."""

    target: ClickHouseTarget
    queries: Queries
    rows_query_id: str
    stored: int
    deployments: Iterator[Deployment]


def describe(client: ClickHouseClient) -> TableShape:
    target = client.target
    database = quote_string(target.database) if target.database else "currentDatabase()"
    sql = (
        "SELECT name, type FROM system.columns WHERE database = "  # noqa: S608 (quoted values)
        f"{database} AND table = {quote_string(target.table)} "
        "UNION ALL SELECT name, 'function' FROM system.functions WHERE name IN ('multiSearchAny', 'JSONExtractString') "
        "FORMAT TabSeparated"
    )
    columns: dict[str, str] = {}
    functions: set[str] = set()
    for name, kind in client.rows(sql, 2):
        if kind == "function":
            functions.add(name)
        else:
            columns[name] = kind
    if not columns:
        who = f" (or user {client.user} may not see it)" if client.user else ""
        raise CollectionError(f"{target.display}: table {target.table_name} does not exist{one_line(who)}")
    return TableShape(columns, "multiSearchAny" in functions, "JSONExtractString" in functions)


def check_columns(target: ClickHouseTarget, options: ClickHouseOptions, shape: TableShape) -> None:
    named = {
        "--time-column": options.time_column,
        "--body-column": options.body_column,
        "--service-column": options.service_column,
    }
    missing = [f"{value} ({option})" for option, value in named.items() if value not in shape.columns]
    if options.attributes_column and not shape.has_attributes(options.attributes_column):
        missing.append(f"{options.attributes_column} (--attributes-column: a Map, a JSON String or .key/.value arrays)")
    if missing:
        have = ", ".join(sorted(shape.columns)[:20])
        raise CollectionError(
            f"{target.display}: {target.table_name} has no column {', '.join(missing)}; it has: {one_line(have)}"
        )


def label_of(names: Sequence[str], identity: Sequence[str]) -> str:
    parts = [f"{name}={value}" for name, value in zip(names, identity, strict=True) if value]
    return one_line(" ".join(parts)) or "(no identity attributes)"


def read_clickhouse(
    target: ClickHouseTarget,
    options: ClickHouseOptions,
    keywords: Sequence[str],
    progress: Callable[[str], None] | None = None,
) -> ClickHouseRead:
    """Describe the table and count its rows (errors raise here, before anything is parsed), then give the
    deployments whose matching rows stream in as they are consumed."""
    say = progress or (lambda _message: None)
    client = ClickHouseClient(target, options)
    shape = describe(client)
    check_columns(target, options, shape)
    queries = build_queries(target, options, shape, keywords)
    width = len(queries.identity_names)
    stored: dict[tuple[str, ...], int] = {}
    for row in client.rows(queries.counts, width + 1, timeout=options.read_timeout):
        stored[tuple(row[:width])] = int(row[width] or 0)
    total = sum(stored.values())
    if not total:
        scope = f" matching --where ({one_line(redact(options.where))})" if options.where else ""
        raise CollectionError(f"{target.display}: no rows in {target.table_name}{scope}{describe_range(options)}")
    say(
        f"{total} rows in {len(stored)} deployment(s){describe_range(options)}; reading those with a parser keyword "
        f"({'multiSearchAny' if shape.multi_search else 'position'})"
    )
    import uuid

    query_id = f"logdoctor-{uuid.uuid4()}"

    def deployments() -> Iterator[Deployment]:
        seen: set[tuple[str, ...]] = set()
        received = client.rows(queries.rows, width + 1, query_id, options.read_timeout)
        for identity, group in itertools.groupby(received, key=lambda r: tuple(r[:width])):
            seen.add(identity)
            yield _deployment(identity, group, stored.get(identity))
        for identity in stored:  # rows in range, none of them with a keyword
            if identity not in seen:
                yield _deployment(identity, iter(()), stored[identity])

    def _deployment(identity: tuple[str, ...], group: Iterator[list[str]], count: int | None) -> Deployment:
        label = label_of(queries.identity_names, identity)
        name = one_line(f"{target.table}[{','.join(value.replace('/', '_') for value in identity if value)}]")
        deployment = Deployment(identity, label, name, count, iter(()))

        def lines() -> Iterator[tuple[int, str]]:
            number = 0
            for row in group:
                deployment.rows += 1
                if deployment.rows > options.max_rows:
                    deployment.cut = True
                    continue  # LIMIT BY sent one row more than the cap: it only says the cap was reached
                body = row[width]
                deployment.bytes_read += len(body.encode("utf-8", "replace")) + 1
                for text in body.split("\n"):
                    number += 1
                    yield number, text.rstrip("\r")
            deployment.rows = min(deployment.rows, options.max_rows)

        deployment.lines = lines()
        return deployment

    return ClickHouseRead(target, queries, query_id, total, deployments())


def describe_range(options: ClickHouseOptions) -> str:
    def stamp(seconds: float) -> str:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%SZ")

    if options.since is not None and options.until is not None:
        return f" from {stamp(options.since)} to {stamp(options.until)}"
    if options.since is not None:
        return f" since {stamp(options.since)}"
    if options.until is not None:
        return f" until {stamp(options.until)}"
    return ""


# --- time options ---------------------------------------------------------------------------------------

_DURATION_RE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>s|m|h|d|w)$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_time(value: str, now: float | None = None) -> float | None:
    """`--since`/`--until`: a duration back from now (`90s`, `30m`, `1h`, `2d`, `1w`), a time (`2026-12-01T10:00`,
    `2026-12-01 10:00:00+02:00`; no zone means UTC), epoch seconds, or `all` (no bound)."""
    text = value.strip()
    if text.lower() in ("all", ""):
        return None
    current = time.time() if now is None else now
    m = _DURATION_RE.match(text)
    if m:
        return current - float(m.group("n")) * _UNIT_SECONDS[m.group("unit")]
    if re.fullmatch(r"\d{9,11}(?:\.\d+)?", text):
        return float(text)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{value!r} is not a time: give a duration back from now (30m, 1h, 2d), a time such as "
            "2026-12-01T10:00:00Z, epoch seconds, or `all`"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
