"""proxy.accounting.recorder: enrichers before sinks; one failure never loses the others."""

from __future__ import annotations

import asyncio

from proxy.accounting.recorder import Recorder
from proxy.accounting.records import RequestRecord
from proxy.body_analysis import BodyAnalysis
from proxy.exchange import Exchange


class Sink:
    def __init__(self, fail=False):
        self.seen, self.fail, self.closed = [], fail, False

    def handle(self, record):
        if self.fail:
            raise RuntimeError("boom")
        self.seen.append((record.request_id, record.cost_usd))

    async def aclose(self):
        self.closed = True
        if self.fail:
            raise RuntimeError("boom")


class Pricer:
    def enrich(self, exchange):
        exchange.record.cost_usd = float(len(exchange.analysis.segments))


class Broken:
    def enrich(self, exchange):
        raise ValueError("bad enricher")


def test_enrichers_run_before_sinks_and_failures_are_contained(caplog):
    good, bad = Sink(), Sink(fail=True)
    recorder = Recorder([bad, good], [Broken(), Pricer()])
    recorder.record(
        Exchange(
            RequestRecord("r1", 0.0, "t", "openai", "/v1/x"), analysis=BodyAnalysis(True, segments=[1, 2, 3])
        )
    )
    assert good.seen == [("r1", 3.0)]
    assert "bad enricher" in caplog.text or "Broken" in caplog.text
    asyncio.run(recorder.aclose())
    assert good.closed and bad.closed


def test_emit_hands_a_record_without_an_exchange_to_the_sinks_only():
    good, bad = Sink(), Sink(fail=True)
    recorder = Recorder([bad, good], [Broken()])  # an enricher would need an exchange: emit runs none
    recorder.emit(RequestRecord("r1-create", 0.0, "t", "gemini", "/v1beta/cachedContents", cost_usd=None))
    assert good.seen == [("r1-create", None)]
