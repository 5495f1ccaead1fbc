"""proxy.gate: shutdown closes the recorder (the ledger's last rows) even when a part hangs or fails."""

from __future__ import annotations

import asyncio
import logging

import pytest

import proxy.gate as gate_module
from proxy.accounting.recorder import Recorder
from proxy.accounting.stats import Stats
from proxy.config import ProxyConfig
from proxy.gate import Gate
from proxy.tenant import TenantHasher
from proxy.upstream_urls import Router


class Sink:
    closed = False

    def handle(self, record) -> None:
        pass

    async def aclose(self) -> None:
        self.closed = True


class HungStore:
    def ready(self, tenant=None) -> bool:
        return True

    async def aclose(self) -> None:
        await asyncio.Event().wait()  # never returns


class FailingStore(HungStore):
    async def aclose(self) -> None:
        raise ConnectionError("gone")


def make(store, tmp_path) -> tuple[Gate, Sink]:
    config = ProxyConfig(state_dir=tmp_path)
    sink = Sink()
    stats = Stats()
    gate = Gate(
        config=config,
        router=Router.for_config(config),
        tenants=TenantHasher.for_config(config),
        store=store,
        recorder=Recorder([stats, sink]),
        stats=stats,
    )
    return gate, sink


def test_a_part_that_hangs_at_shutdown_is_left_behind_and_the_books_close(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(gate_module, "CLOSE_BUDGET_S", 0.2)
    gate, sink = make(HungStore(), tmp_path)
    with caplog.at_level(logging.WARNING, "prefixgate.shutdown"):
        asyncio.run(asyncio.wait_for(gate.aclose(), 5))
    assert sink.closed
    assert (
        "closing the prefix store took over" in caplog.text and "aclose" in caplog.text
    )  # where it was stuck


def test_a_part_that_fails_to_close_is_raised_after_the_books_close(tmp_path):
    gate, sink = make(FailingStore(), tmp_path)
    with pytest.raises(ConnectionError):
        asyncio.run(gate.aclose())
    assert sink.closed
