"""A headless Chromium driven over the Chrome DevTools Protocol on a pipe (``--remote-debugging-pipe``):
no port, no websocket, no dependency. Chromium reads commands on its file descriptor 3 and writes
answers and events on 4, one JSON message each, ended by a NUL byte. Used by tests/test_browser.py to
run page-side checks (the scales and marks of each Vega view) that ``--dump-dom`` cannot reach."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run", "--hide-scrollbars", "--mute-audio"]  # fmt: skip


class BrowserError(RuntimeError):
    """Chromium answered a command with an error, exited, or did not answer in time."""


class Browser:
    """One Chromium process; :meth:`page` opens a tab. Use as a context manager (it ends the process)."""

    def __init__(self, executable: str, *, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="sl-chromium-")
        cmd_read, self._cmd = os.pipe()  # we write commands, Chromium reads them on fd 3
        self._events_fd, out_write = os.pipe()  # Chromium writes on fd 4, we read

        def _fds() -> None:  # in the child, before exec: the pipes on the descriptors Chromium expects
            os.dup2(cmd_read, 3)
            os.dup2(out_write, 4)

        self.process = subprocess.Popen(
            [executable, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=_fds,
        )  # fmt: skip
        os.close(cmd_read)
        os.close(out_write)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(BrowserError, OSError):
                self.send("Browser.close", timeout=10)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self._cmd, self._events_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("Chromium did not answer in time")
            ready, _, _ = select.select([self._events_fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._events_fd, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium closed its pipe (exit code {self.process.poll()})")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, *, session: str | None = None,
             timeout: float | None = None) -> dict[str, Any]:  # fmt: skip
        """Send one command and return its result; events that arrive meanwhile are kept in
        :attr:`events` (each with its ``sessionId``)."""
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def wait_event(self, method: str, *, session: str, timeout: float = 60.0) -> dict[str, Any]:
        """Wait for the next event ``method`` of ``session`` not yet taken (events already kept count)."""
        deadline = time.monotonic() + timeout
        while True:
            for ev in self.events:
                if ev.get("method") == method and ev.get("sessionId") == session and not ev.get("_taken"):
                    ev["_taken"] = True
                    return ev
            self.events.append(self._read_message(deadline))

    def page(self, width: int = 1200, height: int = 1400) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        return Page(self, target, session, width, height)


class Page:
    """A tab: navigate, evaluate JavaScript (awaiting promises), screenshot; JavaScript errors (uncaught
    exceptions, ``console.error``) are collected in :attr:`errors`."""

    def __init__(self, browser: Browser, target: str, session: str, width: int, height: int) -> None:
        self.browser, self.target, self.session = browser, target, session
        for domain in ("Page", "Runtime"):
            self.send(f"{domain}.enable")
        self.resize(width, height)

    def send(self, method: str, params: dict | None = None, **kw: Any) -> dict[str, Any]:
        return self.browser.send(method, params, session=self.session, **kw)

    def resize(self, width: int, height: int) -> None:
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})  # fmt: skip

    def goto(self, url: str, timeout: float = 90.0) -> None:
        """Open ``url`` and wait for its load event."""
        self.send("Page.navigate", {"url": url})
        self.browser.wait_event("Page.loadEventFired", session=self.session, timeout=timeout)

    def evaluate(self, expression: str, timeout: float = 120.0) -> Any:
        """The value of ``expression`` (a promise is awaited), as JSON."""
        out = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                        timeout=timeout)  # fmt: skip
        if "exceptionDetails" in out:
            details = out["exceptionDetails"]
            raise BrowserError(details.get("exception", {}).get("description") or details.get("text"))
        return out["result"].get("value")

    @property
    def errors(self) -> list[str]:
        """The page's JavaScript errors so far: uncaught exceptions and ``console.error`` calls."""
        out = []
        for ev in self.browser.events:
            if ev.get("sessionId") != self.session:
                continue
            p = ev.get("params", {})
            if ev.get("method") == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
            elif ev.get("method") == "Runtime.consoleAPICalled" and p.get("type") == "error":
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        return out

    def screenshot(self, path: Path) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})
