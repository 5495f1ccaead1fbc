"""A recorder sink that keeps every record it is handed, for tests that read records back."""

from __future__ import annotations


class Keep:
    def __init__(self) -> None:
        self.records: list = []

    def handle(self, record) -> None:
        self.records.append(record)

    async def aclose(self) -> None:
        return None
