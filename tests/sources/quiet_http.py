"""A loopback HTTP server for the tests that never writes to stderr.

socketserver prints a traceback to sys.stderr when a client drops a connection mid-request (Prometheus timing out a
scrape, a reader that gave up). The servers run in background threads for a whole test session, so such a print can
land inside another test's captured stderr (click's CliRunner swaps sys.stderr for the whole process) and fail an
assertion about what logdoctor printed. Handler errors are kept on the server instead.
"""

from __future__ import annotations

from http.server import ThreadingHTTPServer
from typing import Any


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[tuple[object, BaseException | None]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        self.errors.append((client_address, sys.exc_info()[1]))
