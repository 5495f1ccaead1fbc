"""The money layer's parts, built once for the app: :class:`MoneyLayer` (prices, money, ledger, metrics).

:meth:`MoneyLayer.build` loads the price table (bundled, with ``--prices`` merged over it)
and opens the ledger — both fail here, before the server starts, with a clear error
(:class:`~analyzer.pricing.PriceFileError` naming the bad row, or
:class:`~proxy.accounting.ledger.LedgerError` naming the file). The app then registers
``enrichers`` and ``sinks`` with its recorder, and mounts the pages that read the ledger and
the metrics (:func:`proxy.reporting.dashboard.routes`). Money takes one route: the handler
calls :meth:`proxy.accounting.money.Money.before` (``gate.money.money``) for each analysed
request on a caching endpoint and keeps the :class:`~proxy.exchange.Early` it returns on the
request's exchange (its ``diagnosis`` is the ``x-prefixgate-miss-reason`` header); the
recorder calls the same :class:`~proxy.accounting.money.Money`'s ``enrich`` when it is done.

This module holds no logic of its own; each part lives in its module.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.pricing import PriceTable
from proxy.accounting.ledger import Ledger
from proxy.accounting.metrics import Metrics
from proxy.accounting.money import Money
from proxy.config import ProxyConfig


@dataclass
class MoneyLayer:
    prices: PriceTable
    money: Money
    ledger: Ledger
    metrics: Metrics
    log_bodies: bool = False

    @classmethod
    def build(cls, config: ProxyConfig) -> MoneyLayer:
        prices = PriceTable.load(config.prices)
        ledger = Ledger(config.ledger_path, log_bodies=config.log_bodies)
        metrics = Metrics()
        metrics.attach_ledger(lambda: (ledger.failures, ledger.dropped, ledger.flagged))
        keys = {u.name: u.prices for u in config.all_upstreams if u.prices}
        return cls(prices, Money(prices, upstream_prices=keys), ledger, metrics, config.log_bodies)

    @property
    def enrichers(self) -> list:
        return [self.money]

    @property
    def sinks(self) -> list:
        return [self.ledger, self.metrics]
