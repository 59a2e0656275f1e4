"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`), and a PNG
reader: what the HTML report tests need, with nothing beyond the standard library and Debian's chromium.

The browser reads commands on its fd 3 and writes replies and events on its fd 4, each message one
JSON object ended by a NUL byte (no websocket, no port)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
MISSING = "chromium is not installed: run `make chromium` (or `apt-get install chromium`) as root"


class BrowserError(RuntimeError):
    pass


@dataclass
class Page:
    """One tab: what it logged while it loaded and the replies to our questions."""

    browser: Browser
    session: str
    console: list[str] = field(default_factory=list)  # console errors, exceptions, log entries of level error

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session, page=self)

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def screenshot(self, scale: float = 0.5) -> bytes:
        size = self.evaluate(
            "[document.documentElement.clientWidth, Math.min(Math.max(document.body.scrollHeight, window.innerHeight), 1400)]"
        )
        clip = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": scale}
        return base64.b64decode(self.send("Page.captureScreenshot", format="png", clip=clip)["data"])


class Browser:
    def __init__(self, timeout: float = 30.0) -> None:
        if not os.path.exists(CHROMIUM):
            raise BrowserError(MISSING)
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="logdoctor-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def plumb() -> None:  # in the child, before exec: our pipe ends become its fds 3 and 4
            a, b = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",  # the tests run as root in CI; the page is our own file
                "--disable-gpu",
                "--no-first-run",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}",
                "--window-size=1280,1000",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=plumb,  # the test process starts no threads before this
            pass_fds=(3, 4),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError(f"chromium closed the pipe (exit {self.process.poll()})")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        data: dict[str, Any] = json.loads(message)
        return data

    def _event(self, message: dict[str, Any], page: Page | None) -> None:
        if page is None or message.get("sessionId") != page.session:
            return
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            page.console.append(
                "console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            page.console.append("exception: " + json.dumps(params["exceptionDetails"])[:500])
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            page.console.append("log: " + params["entry"].get("text", ""))

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None, page: Page | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        request: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            request["sessionId"] = session
        os.write(self._to_browser, json.dumps(request).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read_message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message, page)

    def wait_for(self, page: Page, event: str) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read_message(deadline)
            self._event(message, page)
            if message.get("method") == event and message.get("sessionId") == page.session:
                return

    def open(self, path: Path) -> Page:
        """Load a local file in a new tab; the page's console errors are collected from the start."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            page.send(domain)
        page.send("Page.navigate", url=path.resolve().as_uri())
        self.wait_for(page, "Page.loadEventFired")
        return page

    def close(self) -> None:
        with contextlib.suppress(BrowserError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)


# --- PNG ----------------------------------------------------------------------------------------


def png_colours(data: bytes) -> int:
    """The number of distinct colours of an 8-bit RGB or RGBA PNG (what Chromium's screenshots are)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}, interlace {interlace}")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours: set[bytes] = set()
    for row in range(height):
        start = row * (stride + 1)
        method, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        if method == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif method == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif method == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif method == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + predictor) & 0xFF
        colours.update(bytes(line[i : i + channels]) for i in range(0, stride, channels))
        previous = line
    return len(colours)
