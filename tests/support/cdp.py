"""Headless Chromium driven over the DevTools protocol on a pipe: a page at an exact viewport.

``chromium --screenshot`` and ``--dump-dom`` lay pages out no narrower than 500 px, so a
phone-width check needs ``Emulation.setDeviceMetricsOverride``. Chromium's
``--remote-debugging-pipe`` reads protocol commands on fd 3 and writes answers on fd 4,
each a JSON text ended by a NUL byte; this module speaks that much of it (no websocket, no
extra package): open a page at a width, wait for a condition, evaluate JavaScript, take a
screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

from tests.support.browser import FLAGS


class CDPError(RuntimeError):
    pass


class Browser:
    def __init__(self, path: str, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self._profile = tempfile.TemporaryDirectory()
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # The child's ends moved to fds >= 10; a small Python trampoline puts them on 3 and 4
        # and execs chromium (no preexec_fn: the tests run servers in threads).
        r, w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)
        flags = [f for f in FLAGS if not f.startswith("--virtual-time-budget")]
        argv = [
            path,
            *flags,
            f"--user-data-dir={self._profile.name}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        trampoline = f"import os, sys; os.dup2({r}, 3); os.dup2({w}, 4); os.close({r}); os.close({w}); os.execv(sys.argv[1], sys.argv[1:])"
        self.proc = subprocess.Popen(
            [sys.executable, "-c", trampoline, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(r, w),
        )
        os.close(r)
        os.close(w)
        self._buf = b""
        self._id = 0
        self.session: str | None = None

    def __enter__(self) -> Browser:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False)
        except (CDPError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._profile.cleanup()

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = True
    ) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            while b"\0" not in self._buf:
                if time.monotonic() > deadline:
                    raise CDPError(f"{method}: no answer within {self.timeout_s:.0f} s")
                chunk = os.read(self._from_child, 1 << 16)
                if not chunk:
                    raise CDPError(f"{method}: chromium closed the pipe (exit {self.proc.poll()})")
                self._buf += chunk
            raw, _, self._buf = self._buf.partition(b"\0")
            answer = json.loads(raw)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise CDPError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def open(self, url: str, width: int, height: int = 900) -> None:
        """A new page, ``width`` × ``height`` CSS pixels, at ``url``."""
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, session=False
        )["sessionId"]
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            raise CDPError(f"evaluate: {result['exceptionDetails'].get('text')}: {expression[:80]}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 30.0) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                value = self.evaluate(expression)
            except CDPError:
                value = None  # the page is still navigating
            if value:
                return value
            if time.monotonic() > deadline:
                raise CDPError(f"timed out waiting for {expression!r}")
            time.sleep(0.05)

    def screenshot(self, out: str, full_page: bool = False) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:  # the whole page, at the viewport's width
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            width = self.evaluate("window.innerWidth")
            params.update(
                captureBeyondViewport=True,
                clip={"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1},
            )
        data = self.send("Page.captureScreenshot", params)["data"]
        with open(out, "wb") as f:
            f.write(base64.b64decode(data))


# What "fits" means: the page does not scroll sideways, and no element reaches past the
# viewport unless an ancestor that scrolls (a table's wrapper) keeps it inside.
LAYOUT_JS = """(() => {
  const vw = document.documentElement.clientWidth;
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\\s+/).join(".") : "");
  const clipped = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o !== "visible") { const r = p.getBoundingClientRect(); if (r.left >= -0.5 && r.right <= vw + 0.5) return true; }
    }
    return false;
  };
  const wide = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    if ((r.right > vw + 0.5 || r.left < -0.5) && !clipped(el)) wide.push(describe(el) + " " + Math.round(r.left) + ".." + Math.round(r.right));
  }
  return {viewport: vw, scroll_width: document.documentElement.scrollWidth, wide: wide.slice(0, 20)};
})()"""


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as f:
        head = f.read(24)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
