"""The retry rule: a request goes to a second replica only when no byte of it was sent, once."""

from __future__ import annotations

import httpx
import pytest

from proxy.replicas.retry_rule import LOCAL, NOT_SENT, SENT, after_failure, phase_of, status_fails
from proxy.transport import H1Transport
from tests.support.servers import free_port


async def _send_to_closed_port() -> BaseException:
    transport = H1Transport(4)
    url = httpx.URL(f"http://127.0.0.1:{free_port()}/v1/chat/completions")
    try:
        await transport.send("POST", url, [(b"Host", url.netloc), (b"Content-Length", b"2")], b"{}", {})
    except httpx.HTTPError as exc:
        return exc
    finally:
        await transport.aclose()
    raise AssertionError("a closed port answered")


async def test_a_refused_connection_sent_nothing():
    exc = await _send_to_closed_port()
    assert isinstance(exc, httpx.ConnectError)
    assert phase_of(exc) == NOT_SENT


@pytest.mark.parametrize(
    ("exc", "phase"),
    [
        (httpx.ConnectTimeout("t"), NOT_SENT),
        (httpx.PoolTimeout("t"), LOCAL),
        (httpx.ReadTimeout("t"), SENT),
        (httpx.WriteTimeout("t"), SENT),
        (httpx.WriteError("w"), SENT),
        (httpx.RemoteProtocolError("r"), SENT),
        (httpx.ReadError("r"), SENT),
        (OSError("o"), SENT),
    ],
)
def test_phases(exc, phase):
    assert phase_of(exc) == phase


def test_only_a_first_unsent_request_with_another_replica_goes_again():
    assert after_failure(NOT_SENT, 1, True).retry
    assert after_failure(NOT_SENT, 1, True).counts_against_replica
    assert not after_failure(NOT_SENT, 2, True).retry  # once
    assert not after_failure(NOT_SENT, 1, False).retry  # nowhere to go
    sent = after_failure(SENT, 1, True)
    assert not sent.retry and sent.counts_against_replica and "never sent twice" in sent.reason
    local = after_failure(LOCAL, 1, True)
    assert not local.retry and not local.counts_against_replica
    with pytest.raises(ValueError, match="unknown phase"):
        after_failure("maybe", 1, True)


def test_failing_statuses():
    assert [s for s in (200, 400, 404, 429, 500, 501, 502, 503, 504, 505) if status_fails(s)] == [
        500,
        502,
        503,
        504,
    ]
