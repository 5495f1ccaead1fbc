"""Reporting, the read side of the accounting: what the ledger, the metrics and the fleet say.

:mod:`.summary` sums the ledger over a time range (the counters of
:mod:`proxy.accounting.counters`, so it agrees with ``/prefixgate/stats``); :mod:`.dashboard`
mounts the admin pages and APIs under ``/prefixgate/`` (the dashboard and its ``static/``
files, the summary and fleet APIs, the metrics text) and :mod:`.kv_page` the KV-cache
calculator; :mod:`.report` is ``prefixgate report``. This package reads
:mod:`proxy.accounting` (never the reverse: ``tests/test_layout.py``) and writes nothing.
"""
