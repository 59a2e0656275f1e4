"""One exception hierarchy; every subclass maps to a documented exit code.

The CLI catches `LogdoctorError` and prints `logdoctor: error: <message>` on one line (the traceback
only with `--debug`), then exits with `error.exit_status`; any other exception is a bug of ours, printed as
`logdoctor: internal error: ...` with a `--debug` hint, exit 4 (never 1, which means findings).
"""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    """Exit codes of every logdoctor command (docs/cli.md)."""

    OK = 0
    FINDINGS = 1  # diagnose/diff: a finding at or above --fail-on; test: a failing case
    USAGE = 2  # bad arguments, unreadable input, invalid rule or test files
    COLLECTION = 3  # a host could not be reached, authenticated or read
    INTERNAL = 4  # a bug in logdoctor (an uncaught exception): one line, `--debug` shows the traceback
    INTERRUPTED = 130  # Ctrl-C ended a command (128 + SIGINT; SIGTERM and SIGHUP give 143 and 129)


class LogdoctorError(Exception):
    """Base of all errors that logdoctor reports as one line."""

    exit_status: ExitStatus = ExitStatus.USAGE


class UsageError(LogdoctorError):
    """Arguments that do not fit together."""


class InputError(LogdoctorError):
    """A path is missing, unreadable, a directory, or not a log."""


class RuleError(LogdoctorError):
    """A rule file (or a set of them) is invalid; the message lists every problem with file:line:col."""


class ConfigError(LogdoctorError):
    """`.logdoctor.yaml` or another user configuration is invalid."""


class CollectionError(LogdoctorError):
    """A remote host could not be collected from (unreachable, auth, host key, permissions, nothing found)."""

    exit_status = ExitStatus.COLLECTION


class HostKeyError(CollectionError):
    """The host key is unknown or changed; never trusted silently."""


def internal_error_line(exc: BaseException) -> str:
    """The one line an internal error prints (its exception's text is shown as text, at most 300 characters)."""
    from logdoctor.sanitize import one_line

    detail = one_line(str(exc))
    detail = detail if len(detail) <= 300 else detail[:297] + "..."
    return f"internal error: {type(exc).__name__}: {detail} (a bug: rerun with --debug for the traceback)"
