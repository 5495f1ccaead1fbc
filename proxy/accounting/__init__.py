"""Accounting, the write side: what each finished request cost, saved and missed, and where it is kept.

The request path hands every finished request to :mod:`.recorder` as its
:class:`~proxy.exchange.Exchange`; enrichers (:mod:`.money`, with the miss-diagnosis memory
of :mod:`.diagnosis`) fill the money on its :class:`.records.RequestRecord`, then sinks
keep the record: in-memory totals (:mod:`.stats`, with :mod:`.drift` and
:mod:`.provider_miss`), the SQLite ledger (:mod:`.ledger`, schema in :mod:`.ledger_schema`),
Prometheus series (:mod:`.metrics`) and, on a Redis store, every replica's totals
(:mod:`.fleet`, :mod:`.fleet_redis`). :mod:`.money_layer` builds the money parts once for
the app. Every counter is defined once, in :mod:`.counters`.

The read side (the summary API, the dashboard, the KV page and ``prefixgate report``) is
:mod:`proxy.reporting`, which imports this package; nothing here imports it, and nothing
here sends requests.
"""
