"""The engine's exception tree: every bad input becomes one of these, with a message a user can act on.

    EngineError                  base; the CLI and server print ``str(exc)``, never a traceback
    ├── ModelFilesError          a checkpoint folder or one of its files is missing or unreadable
    ├── UnsupportedModelError    an architecture, activation or RoPE type this engine does not implement
    ├── DTypeError               a dtype that is unknown or that this machine cannot run
    └── ContextLengthError       a prompt (plus the tokens asked for) longer than the context

This module does not format HTTP errors; the server maps these to OpenAI error JSON itself (400 for a
bad request, 503 when generation fails).
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class: a problem with the user's input, explained in the message."""


class ModelFilesError(EngineError):
    """A checkpoint folder or one of its files is missing or unreadable."""


class UnsupportedModelError(EngineError):
    """The checkpoint describes something this engine does not implement."""


class DTypeError(EngineError):
    """An unknown dtype, or one this machine cannot compute in."""


class ContextLengthError(EngineError):
    """The prompt does not fit into the model's (or the server's) context."""
