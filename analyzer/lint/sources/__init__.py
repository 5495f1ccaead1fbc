"""Prompts where they live in code: prompt-like string literals and templates in Python and
JavaScript/TypeScript files, turned into text units the PG0xx rules read.

- :mod:`.pieces` — one template as literal pieces and interpolations; its text unit,
  positions in the file and volatile values (the literal parts through
  :func:`analyzer.detect.find_volatile`, each interpolation by what it names or calls).
- :mod:`.promptlike` — which literals are prompts (their name, their call, prose).
- :mod:`.python` — Python: strings, f-strings, ``.format`` and ``%`` templates, ``+``
  concatenation, parsed with ``ast`` (positions from ``tokenize``); :mod:`.pystrings`
  decodes one string token.
- :mod:`.javascript` — JS/TS: strings, template literals and ``+`` concatenation, parsed
  with tree-sitter.

Static strings with no interpolation are linted as prompts, like a prompt file. Nothing
here reads files or reports findings.
"""

from __future__ import annotations

PYTHON_SUFFIXES = {".py", ".pyi"}
JS_SUFFIXES = {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}
SOURCE_SUFFIXES = PYTHON_SUFFIXES | JS_SUFFIXES
