"""The proxy's benchmarks: ``prefixgate bench proxy`` (latency and throughput vs direct) and its kin.

:mod:`.command` (the command), :mod:`.scenarios` (the alternating rounds), :mod:`.chat_request`
(the request it sends), :mod:`.proxy_tables` (its tables), :mod:`.http` (the load generator),
:mod:`.procs` (child processes: the emulator, proxies, a baseline), :mod:`.redis_stats` (Redis's
own command counts, for ``--store``), :mod:`.held` (``--held N``). Not imported by the proxy.
"""
