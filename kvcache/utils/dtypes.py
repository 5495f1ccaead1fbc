"""Dtype names → torch dtypes, and a probe that the machine can really compute in the chosen one.

Accepts fp32/float32, bf16/bfloat16, fp16/float16 and "auto" (bf16 on CUDA, fp16 on a GPU without bf16,
fp32 on the CPU). Each is probed on the device it will run on; other torch dtype names (e.g. float8_e4m3fn)
and dtypes the device cannot run a matmul + softmax in are refused with a clear ``DTypeError``. It does
not cast any weights itself.
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


def auto_dtype(device: torch.device) -> torch.dtype:
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16
    return torch.float32


def resolve_dtype(name: str | None, device: torch.device | None = None) -> torch.dtype:
    """The torch dtype for ``name`` (``auto``/None: ``auto_dtype``), probed on ``device`` (default: CPU)."""
    device = device or torch.device("cpu")
    wanted = (name or "auto").strip().lower()
    if wanted == "auto":
        dtype = auto_dtype(device)
        _probe(dtype, device)
        return dtype
    dtype = ALIASES.get(wanted)
    if dtype is None:
        candidate = getattr(torch, wanted, None)
        if not isinstance(candidate, torch.dtype):
            raise DTypeError(f"unknown dtype {name!r} (use fp32, bf16 or fp16)")
        dtype = candidate
    _probe(dtype, device)
    return dtype


def dtype_name(dtype: torch.dtype) -> str:
    return SHORT_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def _probe(dtype: torch.dtype, device: torch.device) -> None:
    if not dtype.is_floating_point:
        raise DTypeError(f"dtype {dtype_name(dtype)} is not a floating-point type; use fp32, bf16 or fp16")
    where = "this machine" if device.type == "cpu" else f"this GPU ({torch.cuda.get_device_name(device)})"
    if (
        device.type == "cuda"
        and dtype == torch.bfloat16
        and not torch.cuda.is_bf16_supported(including_emulation=False)
    ):
        raise DTypeError(f"{where} cannot compute in bf16 (compute capability below 8.0); use fp16 or fp32")
    try:
        a = torch.ones(4, 4, device=device).to(dtype)
        out = F.softmax(a @ a, dim=-1) * a
        float(out.float().sum())
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        raise DTypeError(
            f"{where} cannot compute in {dtype_name(dtype)} ({str(exc).splitlines()[0]}); use fp32, bf16 or fp16"
        ) from None
