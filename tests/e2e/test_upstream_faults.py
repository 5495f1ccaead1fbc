"""The fault matrix through the real proxy: each broken upstream response → what the
client sees → the ledger row; and every later request on the proxy's pool gets its own.

One raw-socket upstream (:mod:`tests.support.rawserver`) plays each case of
:mod:`tests.support.transport_corpus` to the case's first request and echoes the tag of every
other; the proxy (real uvicorn, SQLite ledger) sits in front with its default transport. Only a
case that must time out gets a short read deadline; a loaded machine's stall cannot fail the rest.
Run as a script (``python -m tests.e2e.test_upstream_faults``) it prints the matrix.
"""

from __future__ import annotations

import sqlite3
import sys

import httpx
import pytest

from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.transport import H1Transport
from tests.support.rawserver import RawRequest, RawServer, Reply, echo
from tests.support.servers import serve
from tests.support.transport_corpus import CASES

pytestmark = pytest.mark.e2e
BODY = b'{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}'
#: the read deadline of a request whose case must time out; every other gets the config's 30 s
SHORT_READ_S = 0.5


class _ShortReadFor(H1Transport):
    """The proxy's default transport; the requests tagged ``tags`` get :data:`SHORT_READ_S` to read."""

    def __init__(self, tags: set[str]) -> None:
        super().__init__()
        self.tags = tags

    async def send(self, method, url, headers, body, timeouts):
        if url.params.get("tag") in self.tags:
            timeouts = {**timeouts, "read": SHORT_READ_S}
        return await super().send(method, url, headers, body, timeouts)


def _client_sees(client: httpx.Client, tag: str) -> tuple[str, str | None]:
    """(``status:body`` | ``status:truncated``, the proxy's request id)."""
    try:
        with client.stream(
            "POST",
            f"/v1/chat/completions?tag={tag}",
            content=BODY,
            headers={"content-type": "application/json"},
        ) as r:
            rid = r.headers.get("x-prefixgate-request-id")
            try:
                body = r.read()
            except httpx.HTTPError:
                return f"{r.status_code}:truncated", rid
            if r.status_code in (502, 504) and b'"error"' in body:
                return str(r.status_code), rid  # the proxy's own error, in the provider's shape
            return f"{r.status_code}:{body.decode(errors='replace')}", rid
    except httpx.HTTPError as exc:
        return f"connection error ({type(exc).__name__})", None


def fault_matrix(tmp_path) -> list[tuple[str, str, str, tuple, bool]]:
    """(case, expected, client saw, ledger row (status, error), next three got their own)."""
    current = {"case": CASES[0]}

    def script(request: RawRequest):
        return current["case"].reply if request.tag.endswith("-t1") else echo(request.tag)

    ledger = tmp_path / "ledger.sqlite"
    rows = []
    transport = _ShortReadFor({f"c{i}-t1" for i, case in enumerate(CASES) if case.ours == "504"})
    with RawServer(script) as upstream:
        config = ProxyConfig(
            openai_base=upstream.url + "/v1",
            ledger=str(ledger),
            state_dir=tmp_path / "state",
            read_timeout=30.0,
        )
        app = create_app(config, transport=transport)
        with serve(app) as url, httpx.Client(base_url=url, timeout=60) as client:
            for i, case in enumerate(CASES):
                current["case"] = case
                seen, rid = _client_sees(client, f"c{i}-t1")
                if case.reply.idle or case.reply.hold:
                    # a connection never to be reused (bytes came on it unasked, or the upstream
                    # holds it): the proxy closes it, and the next request waits for that event
                    (first,) = [r for r in upstream.requests if r.tag == f"c{i}-t1"]
                    assert upstream.wait_ended(first.conn, 10), f"{case.name}: the proxy kept that connection"
                others = [_client_sees(client, f"c{i}-t{n}")[0] for n in (2, 3, 4)]
                own = others == ['200:{"tag":"c%d-t%d"}' % (i, n) for n in (2, 3, 4)]
                rows.append((case, seen, rid, own))
        assert upstream.held_requests == 0, "a request went on a connection the upstream held"
    db = sqlite3.connect(ledger)
    by_id = {r[0]: (r[1], r[2]) for r in db.execute("SELECT request_id, status, error FROM requests")}
    count = db.execute("SELECT count(*) FROM requests").fetchone()[0]
    db.close()
    assert count == 4 * len(CASES), "one ledger row per request"
    return [(case.name, case.ours, seen, by_id.get(rid), own) for case, seen, rid, own in rows]


def _expected_row(expected: str) -> tuple[int, str | None]:
    if expected == "502":
        return 502, "upstream_protocol_error"
    if expected == "504":
        return 504, "upstream_timeout"
    status, _, body = expected.partition(":")
    return int(status), ("upstream_read_error" if body == "truncated" else None)


def test_fault_matrix_through_the_proxy(tmp_path):
    for name, expected, seen, row, own in fault_matrix(tmp_path):
        assert seen == expected, name
        assert row is not None and row == _expected_row(expected), (name, row)
        assert own, f"{name}: a later request got a response that was not its own"


def test_after_lf_only_framing_the_next_request_goes_on_a_new_connection(tmp_path):
    """The issue's report, as a user would meet it: an upstream answers one request with
    LF-only line ends, then holds the connection and never answers on it again. The proxy
    delivers that answer, does not reuse the connection, and the next request is answered
    at once on a new one (reused, it would wait for the 30 s read timeout and get a 504)."""
    lf_only = b"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 15\n\n" + b'{"tag":"first"}'

    def script(request: RawRequest):
        return Reply([(lf_only, 0)], hold=True) if request.tag == "first" else echo(request.tag)

    with RawServer(script) as upstream:
        config = ProxyConfig(
            openai_base=upstream.url + "/v1",
            ledger=str(tmp_path / "ledger.sqlite"),
            state_dir=tmp_path / "state",
            read_timeout=30.0,
        )
        with serve(create_app(config)) as url, httpx.Client(base_url=url, timeout=60) as client:
            assert _client_sees(client, "first")[0] == '200:{"tag":"first"}'
            assert [_client_sees(client, f"next{n}")[0] for n in (1, 2)] == [
                '200:{"tag":"next1"}',
                '200:{"tag":"next2"}',
            ]
        assert upstream.connections == 2  # the held one, then one new connection kept alive for both others
        assert upstream.held_requests == 0  # nothing was ever sent on the held connection


if __name__ == "__main__":  # prints the matrix for the closing note
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        for name, _expected, seen, row, own in fault_matrix(Path(tmp)):
            ledger_row = f"{row[0] if row else '-'} {row[1] if row and row[1] else ''}"
            print(f"| {name} | {seen} | {ledger_row} | {'yes' if own else 'NO'} |", file=sys.stdout)
