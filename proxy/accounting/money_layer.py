"""The money layer's parts, built once for the app: :class:`MoneyLayer` (prices, money, ledger, metrics).

:meth:`MoneyLayer.build` loads the price table and opens the ledger, both failing here, before the
server starts, with a clear error (:class:`~analyzer.pricing.PriceFileError` naming the bad row,
:class:`~proxy.accounting.ledger_schema.LedgerError` the file). The app registers ``enrichers`` and
``sinks`` with its recorder. Money takes one route: :meth:`~proxy.accounting.money.Money.before` at
request time, :meth:`~proxy.accounting.money.Money.enrich` when the recorder gets the exchange.

This module holds no logic of its own; each part lives in its module. See docs/money.md.
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
