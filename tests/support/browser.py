"""Headless Chromium for dashboard tests: the DOM after the page's scripts ran, a screenshot."""

from __future__ import annotations

import subprocess
import tempfile
from html.parser import HTMLParser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--virtual-time-budget=10000",
]


def chromium(path: str, url: str, *extra: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [path, *FLAGS, f"--user-data-dir={profile}", *extra, url],
            capture_output=True,
            text=True,
            timeout=90,
        )
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def dump_dom(path: str, url: str) -> str:
    return chromium(path, url, "--dump-dom")


def screenshot(path: str, url: str, out: str) -> None:
    chromium(path, url, "--window-size=1400,1100", f"--screenshot={out}")


class Elements(HTMLParser):
    """Every element's tag and attributes, in document order (text of elements with an id)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.items: list[tuple[str, dict[str, str]]] = []
        self.by_id: dict[str, dict[str, str]] = {}
        self.text: dict[str, str] = {}
        self._open: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.items.append((tag, a))
        if "id" in a:
            self.by_id[a["id"]] = a
            self._open.append(a["id"])
            self.text[a["id"]] = ""
        else:
            self._open.append("")

    def handle_endtag(self, tag):
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        for ident in self._open:
            if ident:
                self.text[ident] += data

    def find(self, tag: str | None = None, **attrs: str) -> list[dict[str, str]]:
        want = {k.replace("_", "-"): v for k, v in attrs.items()}
        return [
            a
            for t, a in self.items
            if (tag is None or t == tag) and all(a.get(k) == v for k, v in want.items())
        ]
