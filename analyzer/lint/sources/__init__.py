"""Prompts where they live in code: prompt-like literals and templates in Python and JS/TS files.

:mod:`.pieces` (one template: literal pieces, interpolations, positions, volatile values),
:mod:`.promptlike` (which literals are prompts), :mod:`.python` (``ast`` + ``tokenize``;
:mod:`.pystrings` decodes a token) and :mod:`.javascript` (tree-sitter) turn them into the text
units the PG0xx rules read. Static strings with no interpolation are linted like a prompt file.

It does NOT read files or report findings.
"""

from __future__ import annotations

PYTHON_SUFFIXES = {".py", ".pyi"}
JS_SUFFIXES = {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}
SOURCE_SUFFIXES = PYTHON_SUFFIXES | JS_SUFFIXES
