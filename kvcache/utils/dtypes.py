"""Dtype names → torch dtypes, and a probe that the machine can really compute in the chosen one.

Accepts fp32/float32, bf16/bfloat16, fp16/float16 and "auto" (the checkpoint's own dtype, else fp32).
Other torch dtype names (e.g. float8_e4m3fn) are probed and refused with a clear ``DTypeError`` when the
machine cannot run a matmul + softmax in them. It does not cast any weights itself.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from kvcache.errors import DTypeError

ALIASES = {
    "fp32": torch.float32,
    "float32": torch.float32,
    "float": torch.float32,
    "bf16": torch.bfloat16,
    "bfloat16": torch.bfloat16,
    "fp16": torch.float16,
    "float16": torch.float16,
    "half": torch.float16,
}
SHORT_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


def resolve_dtype(name: str | None, checkpoint_dtype: str | None = None) -> torch.dtype:
    """The torch dtype for ``name`` (``auto``/None: the checkpoint's dtype), probed on this machine."""
    wanted = (name or "auto").strip().lower()
    if wanted == "auto":
        wanted = (checkpoint_dtype or "float32").lower()
    dtype = ALIASES.get(wanted)
    if dtype is None:
        candidate = getattr(torch, wanted, None)
        if not isinstance(candidate, torch.dtype):
            raise DTypeError(f"unknown dtype {name!r} (use fp32, bf16 or fp16)")
        dtype = candidate
    _probe(dtype)
    return dtype


def dtype_name(dtype: torch.dtype) -> str:
    return SHORT_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def _probe(dtype: torch.dtype) -> None:
    if not dtype.is_floating_point:
        raise DTypeError(f"dtype {dtype_name(dtype)} is not a floating-point type; use fp32, bf16 or fp16")
    try:
        a = torch.ones(4, 4).to(dtype)
        out = F.softmax(a @ a, dim=-1) * a
        float(out.float().sum())
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        raise DTypeError(
            f"this machine cannot compute in {dtype_name(dtype)} ({str(exc).splitlines()[0]}); use fp32, bf16 or fp16"
        ) from None
