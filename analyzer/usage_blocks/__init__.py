"""The readers of every provider's usage block, one module per provider shape.

:mod:`.counts` is the normalised :class:`~.counts.Usage`; :mod:`.block_reader` reads one block's
numbers, sanitised, with drift notes; :mod:`.openai_usage`, :mod:`.anthropic_usage` and
:mod:`.gemini_usage` read their provider's blocks. Callers use :mod:`analyzer.usage`.
See docs/money.md.
"""
