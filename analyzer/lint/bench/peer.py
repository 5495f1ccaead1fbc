"""promptcachelint, the peer ``prefixgate bench lint`` is measured beside, installed for the run.

:func:`install` runs ``python -m pip install --target TMP promptcachelint`` (``find_links``: a
folder of wheels, offline) and imports its detectors from there; it is never a dependency of
this project. :class:`Peer` wraps its static detector: :meth:`Peer.engine` as shipped (the first
match of each pattern per segment) and :meth:`Peer.spans` (every match of its patterns: what a
lint reports, scored on the labelled corpus).

It does NOT time or score anything itself (:mod:`.command` does).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

PACKAGE = "promptcachelint"


@dataclass
class Peer:
    version: str
    detectors: ModuleType
    model: ModuleType

    def engine(self, text: str) -> list:
        """Its ``volatile_content`` on one system segment holding ``text``, as shipped."""
        return self.detectors.volatile_content([self.model.Segment("system", "system", text)], 1)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Every match of its volatile patterns in ``text``: (start, end, pattern name)."""
        return [
            (m.start(), m.end(), p.name)
            for p in self.detectors.VOLATILE_PATTERNS
            for m in p.regex.finditer(text)
        ]


def install(target: Path, find_links: str | None = None, timeout: float = 180) -> Peer | str:
    """The peer installed into ``target`` and imported, or why it could not be."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--target",
        str(target),
    ]
    if find_links:
        cmd += ["--no-index", "--find-links", find_links]
    try:
        proc = subprocess.run([*cmd, PACKAGE], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"pip could not run: {e}"
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"pip install {PACKAGE} failed: {tail[0]}"
    sys.path.insert(0, str(target))
    try:
        detectors = importlib.import_module(f"{PACKAGE}.detectors")
        model = importlib.import_module(f"{PACKAGE}.model")
        version = getattr(importlib.import_module(PACKAGE), "__version__", "?")
    except ImportError as e:
        return f"{PACKAGE} installed but not importable: {e}"
    finally:
        sys.path.remove(str(target))
    return Peer(str(version), detectors, model)
