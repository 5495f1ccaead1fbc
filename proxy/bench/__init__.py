"""``prefixgate bench proxy``: latency and throughput through the proxy vs direct.

:mod:`.command` (the command and its table), :mod:`.http` (the load generator),
:mod:`.procs` (the emulator and proxy as child processes). Not imported by the proxy.
"""
