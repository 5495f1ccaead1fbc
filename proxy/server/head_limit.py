"""Refuses request heads (request line + headers) over a size limit, with 431, in both of
uvicorn's HTTP/1.1 implementations.

:func:`head_limited` passes uvicorn :class:`HeadLimitedHttpTools` or :class:`HeadLimitedH11`
as ``http=``; the limit is ``h11_max_incomplete_event_size``. Over it: one 431
(``x-prefixgate-error: header_too_large``), then the connection closes; the app never sees it.

It does not limit bodies (``--max-body`` does) or change anything else uvicorn does.
See docs/request-path.md.
"""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("prefixgate.http")

DEFAULT_MAX_HEAD = 64 * 1024
_MESSAGE = b"Request header fields too large.\n"
_REFUSAL = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"x-prefixgate-error: header_too_large\r\n"
    b"content-length: " + str(len(_MESSAGE)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + _MESSAGE
)


class _Refusing:
    """What both protocols share: the limit, and refusing once."""

    transport: asyncio.Transport
    client: tuple[str, int] | None
    max_head: int
    refused: bool
    refusal_due: bool

    def _setup_limit(self, config) -> None:
        self.max_head = config.h11_max_incomplete_event_size or DEFAULT_MAX_HEAD
        self.refused = False
        self.refusal_due = False

    def _refuse(self) -> None:
        if self.refused:
            return
        self.refused = True
        peer = "%s:%d " % self.client if self.client else ""
        log.warning("%srequest head over %d bytes refused (431)", peer, self.max_head)
        if self._response_in_flight():
            # a pipelined head: the 431 goes out after the response before it
            self.refusal_due = True
            return
        self._send_refusal()

    def _response_in_flight(self) -> bool:
        cycle = getattr(self, "cycle", None)
        return (cycle is not None and not cycle.response_complete) or bool(getattr(self, "pipeline", None))

    def _send_refusal(self) -> None:
        self.refusal_due = False
        if not self.transport.is_closing():
            self.transport.write(_REFUSAL)
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if self.refusal_due and not self._response_in_flight():
            self._send_refusal()


def _header_bytes(name: bytes, value: bytes) -> int:
    """The size of ``name: value\\r\\n``."""
    return len(name) + len(value) + 4


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:
    # httptools not installed: uvicorn's "auto" is h11 then, and so is ours
    HttpToolsProtocol = None  # type: ignore[assignment,misc]
else:

    class HeadLimitedHttpTools(_Refusing, HttpToolsProtocol):  # type: ignore[misc]
        """httptools has no limit of its own: the head is counted both as bytes received while it
        is incomplete (less the previous request's body bytes in the same read) and as the URL
        and header bytes the parser handed over. A head over the limit starts no request cycle:
        the app never runs."""

        def __init__(self, config, server_state, app_state, _loop=None) -> None:
            super().__init__(config, server_state, app_state, _loop)
            self._setup_limit(config)
            self._in_head = False
            self._received_in_head = 0
            self._body_in_read = 0
            self._parsed_head = 0

        def data_received(self, data: bytes) -> None:
            if self.refused:
                return
            self._body_in_read = 0
            super().data_received(data)
            if self._in_head and not self.refused:
                self._received_in_head += len(data) - self._body_in_read
                if max(self._received_in_head, self._parsed_head) > self.max_head:
                    self._refuse()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_head, self._received_in_head, self._parsed_head = True, 0, 0

        def on_url(self, url: bytes) -> None:
            super().on_url(url)
            self._parsed_head += len(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            super().on_header(name, value)
            self._parsed_head += _header_bytes(name, value)

        def on_headers_complete(self) -> None:
            self._in_head = False
            if self.refused or self._parsed_head > self.max_head:
                self._refuse()
                return
            super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            self._body_in_read += len(body)
            if not self.refused:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if not self.refused:
                super().on_message_complete()


class HeadLimitedH11(_Refusing, H11Protocol):
    def __init__(self, config, server_state, app_state, _loop=None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._setup_limit(config)
        next_event = self.conn.next_event

        def checked_next_event():
            # uvicorn answers every h11 error with 400; a head too large is a 431 here. NEED_DATA
            # ends uvicorn's event loop for this read without starting a request.
            try:
                event = next_event()
            except h11.RemoteProtocolError as exc:
                if exc.error_status_hint != 431:
                    raise
                self._refuse()
                return h11.NEED_DATA
            if isinstance(event, h11.Request):
                size = (
                    len(event.method)
                    + len(event.target)
                    + sum(_header_bytes(n, v) for n, v in event.headers.raw_items())
                )
                if size > self.max_head:
                    self._refuse()
                    return h11.NEED_DATA
            return event

        self.conn.next_event = checked_next_event  # type: ignore[method-assign]

    def data_received(self, data: bytes) -> None:
        if not self.refused:
            super().data_received(data)


def head_limited(http: str) -> type[asyncio.Protocol]:
    """The protocol class to give uvicorn as ``http=`` for ``http`` ("auto", "httptools" or
    "h11"); set the limit with ``h11_max_incomplete_event_size``."""
    if http == "h11" or (http == "auto" and HttpToolsProtocol is None):
        return HeadLimitedH11
    if http in ("auto", "httptools"):
        if HttpToolsProtocol is None:
            raise ValueError("http='httptools' needs the httptools package")
        return HeadLimitedHttpTools
    raise ValueError(f"unknown HTTP implementation {http!r} (auto, httptools or h11)")
