"""A Prometheus server as a source: every vLLM / SGLang instance it scrapes, over a time range.

    logdoctor diagnose prometheus://127.0.0.1:9090 --selector '{job="vllm"}' --since 30m

Through the HTTP API (https://prometheus.io/docs/prometheus/latest/querying/api/): `/api/v1/series` lists the
engine series matching the selector, grouped by `--group-by` (the `instance` label); `/api/v1/query_range`
reads each instance's series at an even step; `/api/v1/query` of `up` names the instances whose scrapes fail.
Each instance becomes one deployment whose lines are its series written back as exposition text, one scrape a
step, each sample with its timestamp:

    vllm:generation_tokens_total{engine="0",instance="10.0.0.7:8000",job="vllm",model_name="m"} 48212 1764590400000

so the metrics input kind reads them exactly as it reads a saved `curl /metrics` (counters become rates).
Only the standard library's urllib is used; a bearer token (`--bearer-token-env` / `--bearer-token-file`) is
sent in the Authorization header and never printed.
"""

from __future__ import annotations

import json
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from logdoctor.errors import CollectionError, UsageError
from logdoctor.redact import redact
from logdoctor.sources.urls import Deployment, UrlCollection, UrlOptions, collection_error

MAX_ANSWER_BYTES = 64 * 1024 * 1024  # one API answer; a bigger one asks for a narrower selector or range
MAX_POINTS = 120  # scrapes read per instance: enough intervals for medians, bounded work per instance
MIN_STEP = 15.0  # seconds; Prometheus's default scrape interval is 15 s (60 s in the packaged config)
_ENGINE_NAMES = "(?:vllm|sglang):.+"
_TARGET_RE = re.compile(r"^(?P<scheme>prometheus(?:\+https)?)://(?P<host>[^/?#]+)(?P<path>/[^?#]*)?$", re.I)
_SELECTOR_RE = re.compile(r"^\s*\{(?P<matchers>.*)\}\s*$", re.S)


def base_url(target: str) -> str:
    """`prometheus://host:9090/prefix` -> `http://host:9090/prefix` (`prometheus+https://` -> https)."""
    m = _TARGET_RE.match(target)
    if m is None:
        raise UsageError(f"{redact(target)}: not a Prometheus URL such as prometheus://127.0.0.1:9090")
    scheme = "https" if m.group("scheme").lower().endswith("https") else "http"
    host = m.group("host").rsplit("@", 1)[-1]  # credentials in the URL are not sent (use a token option)
    return f"{scheme}://{host}{(m.group('path') or '').rstrip('/')}"


def _matchers(selector: str | None) -> str:
    if selector is None or not selector.strip():
        return ""
    m = _SELECTOR_RE.match(selector)
    if m is None:
        raise UsageError(f"--selector {selector!r}: give label matchers in braces, such as '{{job=\"vllm\"}}'")
    return m.group("matchers").strip().rstrip(",")


def _name_regex(names: tuple[str, ...]) -> str:
    """The series worth reading: the names the metrics input kind reads (histograms by their _sum and _count)."""
    plain = sorted({n for n in names if re.fullmatch(r"(?:vllm|sglang):[A-Za-z0-9_:]+", n)})
    if not plain:
        return _ENGINE_NAMES
    return "(?:" + "|".join(plain) + ")(?:_sum|_count)?"


def selector(options: UrlOptions, *extra: str) -> str:
    parts = [f'__name__=~"{_name_regex(options.metric_names)}"', _matchers(options.selector), *extra]
    return "{" + ",".join(p for p in parts if p) + "}"


class _Api:
    """GET/POST one API path, turning every failure into one line naming the target."""

    def __init__(self, target: str, base: str, token: str | None, timeout: float) -> None:
        self.target, self.base, self.token, self.timeout = target, base, token, timeout

    def call(self, path: str, params: dict[str, str], *, post: bool = False) -> Any:
        body = urllib.parse.urlencode(params).encode()
        url = self.base + path + ("" if post else "?" + body.decode())
        # base_url() built the URL from http(s) only
        request = urllib.request.Request(url, data=body if post else None, method="POST" if post else "GET")  # noqa: S310
        request.add_header("Accept", "application/json")
        if post:
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # noqa: S310 (http(s) only)
                raw = answer.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, socket.timeout | TimeoutError):
                raise collection_error(self.target, f"no answer within {self.timeout:g} s") from exc
            text = getattr(reason, "strerror", None) or str(reason)
            raise collection_error(self.target, f"cannot connect to {self.base} ({text})") from exc
        if len(raw) > MAX_ANSWER_BYTES:
            raise collection_error(
                self.target, f"{path}: answer larger than {MAX_ANSWER_BYTES >> 20} MiB; narrow --selector or --since"
            )
        return self._data(path, raw)

    def _data(self, path: str, raw: bytes) -> Any:
        try:
            answer = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            answer = None
        if not isinstance(answer, dict) or answer.get("status") not in ("success", "error"):
            raise collection_error(
                self.target, f"{path}: the answer is not the Prometheus HTTP API's JSON (is {self.base} Prometheus?)"
            )
        if answer["status"] == "error":
            raise collection_error(self.target, f"Prometheus refused the query: {_api_error(answer)}")
        return answer.get("data")

    def _http_error(self, exc: urllib.error.HTTPError) -> CollectionError:
        if exc.code in (401, 403):
            if self.token:
                return collection_error(self.target, f"the bearer token was refused (HTTP {exc.code})")
            return collection_error(
                self.target,
                f"authentication needed (HTTP {exc.code}): give a token with --bearer-token-env NAME "
                "or --bearer-token-file FILE",
            )
        try:
            answer = json.loads(exc.read(65536))
        except (ValueError, OSError, UnicodeDecodeError):
            answer = None
        if isinstance(answer, dict) and answer.get("status") == "error":
            return collection_error(self.target, f"Prometheus refused the query: {_api_error(answer)}")
        return collection_error(self.target, f"HTTP {exc.code} {exc.reason} from {self.base}")


def _api_error(answer: dict[str, Any]) -> str:
    kind, error = answer.get("errorType"), answer.get("error")
    text = str(error or "no reason given")
    return f"{kind}: {text}" if kind else text


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(series: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """A query_range matrix as exposition text: one scrape a step, every sample with its timestamp (ms)."""
    by_time: dict[float, list[str]] = {}
    for item in series:
        metric = item.get("metric") or {}
        name = metric.get("__name__")
        if not isinstance(name, str):
            continue
        labels = ",".join(f'{k}="{_escape(str(v))}"' for k, v in sorted(metric.items()) if k != "__name__")
        head = f"{name}{{{labels}}}" if labels else name
        for point in item.get("values") or ():
            if isinstance(point, list) and len(point) == 2:
                stamp, value = point
                by_time.setdefault(float(stamp), []).append(f"{head} {value} {round(float(stamp) * 1000)}")
    lines: list[str] = []
    for stamp in sorted(by_time):
        lines.extend(sorted(by_time[stamp]))
    return list(enumerate(lines, start=1))


def collect(target: str, options: UrlOptions) -> UrlCollection:
    """Every instance matching the selector over the range, one deployment each (see the module docstring)."""
    base = base_url(target)
    target = redact(target)  # how errors and reports name it: a password in the URL is never shown (nor sent)
    api = _Api(target, base, options.bearer_token(), options.timeout)
    since = options.since_seconds()
    end = options.until if options.until is not None else time.time()
    start = end - since
    step = options.step_seconds() or max(MIN_STEP, since / MAX_POINTS)
    window = {"start": f"{start:.3f}", "end": f"{end:.3f}"}
    found = api.call("/api/v1/series", {"match[]": selector(options), **window}, post=True)
    if not isinstance(found, list):
        raise collection_error(target, "/api/v1/series: the answer is not a list of series")
    label = options.group_by
    groups = sorted({str(s.get(label, "")) for s in found if isinstance(s, dict)})
    collection = UrlCollection(target=target)
    down = _down_instances(api, options, end)
    if not groups:
        what = options.selector or "{}"
        if down:
            raise collection_error(
                target, f"no engine series match {what}; the scrape of {', '.join(down)} fails (up == 0)"
            )
        raise collection_error(
            target, f"no vLLM or SGLang series match {what} in the {_span(since)} before {_when(end)}"
        )
    for group in groups:
        matcher = f'{label}="{_escape(group)}"' if group else f'{label}=""'
        name = f"{label}={group}" if group else f"{target} (no {label} label)"
        try:  # one instance's failure (an answer over the cap) is that instance's row, not the whole fleet's
            data = api.call(
                "/api/v1/query_range",
                {"query": selector(options, matcher), **window, "step": f"{step:g}"},
                post=True,
            )
            result = data.get("result") if isinstance(data, dict) else None
            if not isinstance(result, list):
                raise collection_error(target, "/api/v1/query_range: the answer is not a matrix")
        except CollectionError as exc:
            collection.failures[group or name] = f"{group or name}: {exc}"
            continue
        collection.deployments.append(
            Deployment(name=group or name, lines=render(result), labels={label: group} if group else {})
        )
    for instance in down:
        if instance not in groups:
            collection.failures[instance] = f"{instance}: Prometheus cannot scrape it (up == 0)"
    return collection


def _down_instances(api: _Api, options: UrlOptions, end: float) -> list[str]:
    """Targets of the selector whose last scrape failed: a server down, or /metrics text Prometheus rejects."""
    query = "up{" + ",".join(p for p in (_matchers(options.selector),) if p) + "} == 0"
    data = api.call("/api/v1/query", {"query": query, "time": f"{end:.3f}"}, post=True)
    result = data.get("result") if isinstance(data, dict) else None
    out: list[str] = []
    for item in result if isinstance(result, list) else ():
        metric = item.get("metric") if isinstance(item, dict) else None
        if isinstance(metric, dict):
            out.append(str(metric.get(options.group_by, metric.get("instance", "?"))))
    return sorted(set(out))


def _span(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp))
