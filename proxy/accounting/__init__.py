"""Accounting, the write side: what each finished request cost, saved and missed, and where it is kept.

The request path hands each finished request to :mod:`.recorder`; enrichers (:mod:`.money`, with
:mod:`.diagnosis`) fill the money on its :class:`.records.RequestRecord`, then sinks keep it:
:mod:`.stats` (with :mod:`.drift`, :mod:`.provider_miss`), the ledger (:mod:`.ledger`,
:mod:`.ledger_writer`, :mod:`.ledger_schema`), :mod:`.metrics` (:mod:`.metric_collectors`) and, on a
Redis store, :mod:`.fleet` (:mod:`.fleet_reads`, :mod:`.fleet_rows`, :mod:`.fleet_redis`). Every
counter is defined once, in :mod:`.counters`; :mod:`.money_layer` builds the parts for the app.

Nothing here sends requests; the read side is :mod:`proxy.reporting` (it imports this, never back).
"""
