"""Headless Chromium driven over the DevTools protocol (the ``websocket-client`` package), for
the tests of the interactive page (layout_solver/page.py).

Debian's ``chromium`` is installed by ``./dev test`` (its apt list); without it the tests skip,
except under ``CI=true``, where a missing browser fails them: the page test must run in CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: seconds one DevTools call or page event may take before the test gives up (a hang, not a timing check)
DEADLINE = 60.0


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


class Page:
    """One browser tab: send DevTools commands, collect console errors and exceptions."""

    def __init__(self, ws_url: str):
        import websocket

        self.ws = websocket.create_connection(ws_url, timeout=DEADLINE, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.errors: list[str] = []
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")

    def _note(self, msg: dict[str, Any]) -> None:
        self.events.append(msg)
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description")))
                                                                          for a in p.get("args", [])))
        elif method == "Log.entryAdded" and p["entry"].get("level") == "error":
            self.errors.append(f"log: {p['entry'].get('text')} ({p['entry'].get('url', '')})")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))
            self._note(msg)
        raise TimeoutError(method)

    def wait_event(self, method: str) -> dict[str, Any]:
        for msg in self.events:
            if msg.get("method") == method:
                self.events.remove(msg)
                return msg
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            msg = json.loads(self.ws.recv())
            self._note(msg)
            if msg.get("method") == method:
                self.events.remove(msg)
                return msg
        raise TimeoutError(method)

    def js(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def open(self, path: Path) -> None:
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired")

    def click(self, selector: str) -> None:
        """A real mouse click (press + release) at the centre of the element ``selector``."""
        box = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                      "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                      "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        assert box is not None, f"nothing matches {selector}"
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def key(self, key: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code)

    def screenshot(self, path: Path) -> None:
        import base64

        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        self.ws.close()


class Browser:
    def __init__(self, exe: str):
        self.profile = tempfile.mkdtemp(prefix="turnip-fdm-chromium-")
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={self.profile}",
             "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        end = time.monotonic() + DEADLINE
        assert self.proc.stderr is not None
        while time.monotonic() < end:
            line = self.proc.stderr.readline()
            if not line:
                break
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
                break
        if port is None:
            self.close()
            raise RuntimeError("chromium did not start its DevTools endpoint")
        self.port = port

    def new_page(self) -> Page:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(req, timeout=DEADLINE) as r:
            target = json.load(r)
        return Page(target["webSocketDebuggerUrl"])

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    exe = find_browser()
    if exe is None:
        msg = "no chromium on PATH (./dev test apt-installs Debian's chromium)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{msg}: the page test must run in CI")
        pytest.skip(msg)
    try:
        import websocket  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("websocket-client is not installed (the test extra): the page test must run in CI")
        pytest.skip("websocket-client is not installed (pip install -e '.[test]')")
    b = Browser(exe)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    p = browser.new_page()
    try:
        yield p
    finally:
        p.close()
