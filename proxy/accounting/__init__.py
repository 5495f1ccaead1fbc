"""Accounting: what each finished request cost, saved and missed, and where it is kept.

The request path hands every finished request to :mod:`.recorder` as its
:class:`~proxy.exchange.Exchange`; enrichers (:mod:`.money`, with the miss-diagnosis memory
of :mod:`.diagnosis`) fill the money on its :class:`.records.RequestRecord`, then sinks
keep the record: in-memory totals (:mod:`.stats`), the SQLite ledger (:mod:`.ledger`,
schema in :mod:`.ledger_schema`), Prometheus series (:mod:`.metrics`). Readers: the
summary API and the dashboard (:mod:`.summary`, :mod:`.dashboard`, :mod:`.money_app`,
``static/``) and ``prefixgate report`` (:mod:`.report`). Every counter they show is
defined once, in :mod:`.counters`. The proxy writes into this
package; nothing here sends requests.
"""
