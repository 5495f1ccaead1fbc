"""When a failed send may go to another replica: only when no byte of it left the proxy, and once.

A connect error or connect timeout is :data:`NOT_SENT`: the replica never saw the request, so the
next healthy replica gets it, once. Anything later (a write or read error, a read timeout, a broken
answer, any status) is :data:`SENT`: the request may have reached a model and is never sent
twice. The proxy's own pool limit is :data:`LOCAL`: no retry, and not the replica's fault.
Pure functions; the caller sends and counts (see :mod:`.replica_set`).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

NOT_SENT = "not_sent"
SENT = "sent"
LOCAL = "local"
MAX_ATTEMPTS = 2  # the first replica and, after a connect failure, one more


@dataclass(frozen=True, slots=True)
class NextStep:
    retry: bool  # send it to another replica
    counts_against_replica: bool  # a passive health failure of the replica that failed
    reason: str


def phase_of(exc: BaseException) -> str:
    """How far a failed send got, from the transport's exception."""
    if isinstance(exc, httpx.PoolTimeout):  # a TimeoutException too: test it first
        return LOCAL
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return NOT_SENT
    return SENT


def after_failure(phase: str, attempts: int, another_healthy: bool) -> NextStep:
    """What to do after the ``attempts``-th send of a request failed at ``phase``."""
    if phase == LOCAL:
        return NextStep(False, False, "the proxy's own connection limit: not the replica's failure")
    if phase == SENT:
        return NextStep(False, True, "the request may have reached the replica: never sent twice")
    if phase != NOT_SENT:
        raise ValueError(f"unknown phase {phase!r}")
    if attempts >= MAX_ATTEMPTS:
        return NextStep(False, True, "already sent to another replica once")
    if not another_healthy:
        return NextStep(False, True, "no other healthy replica")
    return NextStep(True, True, "the connection failed before any byte was sent")


def status_fails(status: int) -> bool:
    """An answer that counts as the replica failing (passive health): a 5xx but 501 and 505,
    which say the request is wrong, not the replica."""
    return status >= 500 and status not in (501, 505)
