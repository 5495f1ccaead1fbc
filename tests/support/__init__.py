"""Helpers the tests share: real servers on loopback, raw-socket upstreams, a real
``prefixgate serve`` process, the browser, tiny checkpoints, and where fixtures live."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
