"""Helpers the tests share: real servers on loopback, raw-socket upstreams, a real
``prefixgate serve`` process, the browser, tiny checkpoints, and where fixtures live; the
in-process gateways, SDK clients and payloads of the end-to-end tests, record sets for the
accounting tests, mocked upstreams and stores. Test modules import these from here, never from
one another (``tests/test_test_layout.py``); fixtures pytest must find stay in ``conftest.py``."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
