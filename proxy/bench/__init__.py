"""``prefixgate bench proxy``: latency and throughput through the proxy vs direct.

:mod:`.command` (the command and its table), :mod:`.http` (the load generator),
:mod:`.procs` (the emulator and proxies as child processes), :mod:`.redis_stats` (Redis's own
command counts and a look-up's time, for ``--store``). Not imported by the proxy.
"""
