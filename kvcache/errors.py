"""The engine's exception tree: every bad input becomes one of these, with a message a user can act on.

    EngineError                  base; the CLI and server print ``str(exc)``, never a traceback
    ├── ModelFilesError          a checkpoint folder or one of its files is missing or unreadable
    ├── UnsupportedModelError    an architecture, activation or RoPE type this engine does not implement
    ├── DTypeError               a dtype that is unknown or that this machine cannot run
    ├── DeviceError              a device that is unknown or absent (``--device cuda`` without CUDA)
    └── ContextLengthError       a prompt (plus the tokens asked for) longer than the context

It does not format HTTP errors (the server maps these to OpenAI error JSON: 400 or 503).
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


class DeviceError(EngineError):
    """An unknown device, or one this machine does not have."""


class ContextLengthError(EngineError):
    """The prompt does not fit into the model's (or the server's) context."""
