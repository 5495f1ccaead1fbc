"""``prefixgate bench engine``: KV cache vs none, ours vs ``transformers`` on the same weights.

:mod:`.command` (the command and its table), :mod:`.runs` (the timed runs). Not imported
by the engine.
"""
