"""Recorder sinks for tests that read records back: :class:`Keep` keeps every record it is
handed, :class:`ClientRecords` only those of clients' requests."""

from __future__ import annotations


class Keep:
    def __init__(self) -> None:
        self.records: list = []

    def handle(self, record) -> None:
        self.records.append(record)

    async def aclose(self) -> None:
        return None


class ClientRecords(Keep):
    """Only the records of clients' requests: not those of the Gemini auto-cache's own
    ``cachedContents`` calls, recorded as ``<request id>-<what>`` (client ids carry no ``-``)."""

    def handle(self, record) -> None:
        if "-" not in record.request_id:
            super().handle(record)
