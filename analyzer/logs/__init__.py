"""``prefixgate analyze``: repeated prefixes, hit rates and money in request logs.

:mod:`.reader` streams records from JSONL logs and the proxy's SQLite ledger (whose columns
:mod:`.ledger_columns` names, for the proxy that writes it too);
:mod:`.tree` is the prefix tree over segment hashes; :mod:`.analysis` runs one pass as
:mod:`.config` says (a record's chain from :mod:`.record_chain`, the bodies it compares with in
:mod:`.recent_bodies`, its counts in :mod:`.tallies`; provider rules from
:mod:`analyzer.cache_rules`, forks from :mod:`analyzer.divergence`, prices from
:mod:`analyzer.pricing`); :mod:`.report` prints; :mod:`.cli` is the command. Its benchmark is
:mod:`analyzer.bench` (``prefixgate bench analyze``).
"""
