"""URL targets of `logdoctor diagnose`: a scheme names a service that holds many deployments' data.

    logdoctor diagnose prometheus://127.0.0.1:9090 --selector '{job="vllm"}' --since 30m

`HANDLERS` maps a scheme to the module and function that reads it (imported only when a target uses it); a
handler returns one `Deployment` a server instance (numbered lines, as any source gives), or raises
`CollectionError` with one line saying why it could not read the service. Adding a store is one line:

    HANDLERS["clickhouse"] = "logdoctor.sources.clickhouse:collect"

`ssh://` is not here: it names a host to collect over SSH (logdoctor.sources.target).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from logdoctor.errors import CollectionError, LogdoctorError, UsageError

HANDLERS: dict[str, str] = {
    "prometheus": "logdoctor.sources.prometheus:collect",
    "prometheus+https": "logdoctor.sources.prometheus:collect",
}

_SCHEME_RE = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://", re.IGNORECASE)
_DURATION_RE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h|d|w)?$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


@dataclass(frozen=True)
class UrlOptions:
    """The options of URL targets (docs/sources.md), as the command line gave them."""

    selector: str | None = None  # Prometheus: label matchers the series must have, `{job="vllm"}`
    since: str = "30m"  # how far back from `until`, a Prometheus duration (checked when used: since_seconds)
    until: float | None = None  # unix seconds; None: now
    step: str | None = None  # between the points read; None: chosen from the range
    group_by: str = "instance"  # the label that tells deployments apart
    bearer_token_env: str | None = None  # the name of an environment variable holding the token
    bearer_token_file: str | None = None
    timeout: float = 10.0
    # The metric names worth reading (the input kinds' keywords); empty: every `vllm:` / `sglang:` series.
    metric_names: tuple[str, ...] = ()

    def since_seconds(self) -> float:
        return parse_duration(self.since, "--since")

    def step_seconds(self) -> float | None:
        return parse_duration(self.step, "--step") if self.step else None

    def bearer_token(self) -> str | None:
        """The token, read when needed; never printed or saved (errors name where it came from, not what it is)."""
        if self.bearer_token_env and self.bearer_token_file:
            raise UsageError("give --bearer-token-env or --bearer-token-file, not both")
        if self.bearer_token_env:
            token = os.environ.get(self.bearer_token_env)
            if not token:
                raise UsageError(f"--bearer-token-env {self.bearer_token_env}: that variable is not set or empty")
            return token.strip()
        if self.bearer_token_file:
            try:
                with open(self.bearer_token_file, encoding="utf-8") as fh:
                    token = fh.read().strip()
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not text"
                raise UsageError(f"--bearer-token-file {self.bearer_token_file}: cannot read it ({reason})") from exc
            if not token:
                raise UsageError(f"--bearer-token-file {self.bearer_token_file}: the file is empty")
            return token
        return None


@dataclass
class Deployment:
    """One deployment's data from a URL target: a name for the report and its numbered lines."""

    name: str
    lines: list[tuple[int, str]]
    labels: dict[str, str] = field(default_factory=dict)  # what identifies it (instance, job, pod, ...)


@dataclass
class UrlCollection:
    """What one URL target gave: its deployments, or the one-line reason it could not be read."""

    target: str
    deployments: list[Deployment] = field(default_factory=list)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    # Deployments the service knows of but holds no data for (a Prometheus target that is down), and why.
    failures: dict[str, str] = field(default_factory=dict)


Handler = Callable[[str, UrlOptions], UrlCollection]


def scheme_of(target: str) -> str | None:
    m = _SCHEME_RE.match(target)
    return m.group("scheme").lower() if m else None


def is_url_target(target: str) -> bool:
    """A target whose scheme has a handler (`prometheus://...`); `ssh://` and paths are not."""
    scheme = scheme_of(target)
    return scheme is not None and scheme in HANDLERS


def split_url_targets(targets: Sequence[str]) -> tuple[list[str], list[str]]:
    """(URL targets, the others), each in the order given."""
    urls = [t for t in targets if is_url_target(t)]
    return urls, [t for t in targets if t not in urls]


def handler_for(target: str) -> Handler:
    scheme = scheme_of(target)
    if scheme is None or scheme not in HANDLERS:
        known = ", ".join(f"{s}://" for s in sorted(HANDLERS))
        from logdoctor.redact import redact  # here: its patterns cost every start ~10 ms

        raise UsageError(f"{redact(target)}: not a URL target logdoctor reads ({known})")
    module_name, _, function = HANDLERS[scheme].partition(":")
    handler: Handler = getattr(importlib.import_module(module_name), function)
    return handler


def collect(targets: Iterable[str], options: UrlOptions) -> list[UrlCollection]:
    """Read every URL target; one that cannot be read keeps its error and the others their data."""
    out: list[UrlCollection] = []
    for target in targets:
        handler = handler_for(target)
        try:
            out.append(handler(target, options))
        except UsageError:
            raise
        except LogdoctorError as exc:
            from logdoctor.redact import redact

            out.append(UrlCollection(target=redact(target), error=str(exc)))
    return out


def parse_duration(text: str, what: str) -> float:
    """Prometheus durations: `30m`, `1h`, `90s`, `2d` (a bare number is seconds)."""
    m = _DURATION_RE.match(text.strip())
    if m is None or float(m.group("n")) <= 0:
        raise UsageError(f"{what} {text!r}: not a duration such as 30m, 1h, 90s or 2d")
    return float(m.group("n")) * _UNITS[m.group("unit") or "s"]


def collection_error(target: str, message: str) -> CollectionError:
    return CollectionError(f"{target}: {message}")
