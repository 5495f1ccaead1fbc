"""Prompts where they live in code: prompt-like literals and templates in Python, JS/TS, Go, Rust,
Java, C#, Kotlin, Swift, PHP and Ruby files.

:mod:`.pieces` (one template: literal pieces, interpolations, positions, volatile values),
:mod:`.promptlike` (which literals are prompts), :mod:`.python` (``ast`` + ``tokenize``;
:mod:`.pystrings` decodes a token), :mod:`.javascript`, :mod:`.compiled` and :mod:`.scripts`
(tree-sitter) turn them into the text units the PG0xx rules read. Static strings with no
interpolation are linted like a prompt file.

It does NOT read files or report findings.
"""

from __future__ import annotations

PYTHON_SUFFIXES = {".py", ".pyi"}
JS_SUFFIXES = {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"}
#: Go, Rust, Java, C#, Kotlin and Swift (:mod:`.compiled`)
COMPILED_SUFFIXES = {".go", ".rs", ".java", ".cs", ".kt", ".kts", ".swift"}
#: PHP and Ruby (:mod:`.scripts`)
SCRIPT_SUFFIXES = {".php", ".rb"}
SOURCE_SUFFIXES = PYTHON_SUFFIXES | JS_SUFFIXES | COMPILED_SUFFIXES | SCRIPT_SUFFIXES
