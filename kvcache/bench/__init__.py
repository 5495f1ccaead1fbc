"""The engine's benchmarks: ``prefixgate bench engine`` (:mod:`.command`, its timed runs in :mod:`.runs`) and
``prefixgate bench server`` (:mod:`.server`, its runs in :mod:`.server_runs`). Not imported by the engine.
"""
