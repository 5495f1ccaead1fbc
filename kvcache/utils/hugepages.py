"""Large tensors on 2 MiB transparent huge pages: weights and KV caches that a decode step streams.

On Linux, memory advised with ``madvise(MADV_HUGEPAGE)`` before it is first touched is backed by 2 MiB
pages (fewer TLB misses: measured in docs/engine.md). ``Arena`` hands out consecutive views of one such
buffer; ``empty`` makes one tensor. Each buffer is over-allocated by up to 4 MiB of address space so that
whole huge pages inside it can be advised. Where madvise is unavailable or refused, or THP is "never",
the memory is ordinary memory and everything still works (``advised`` only says the advice was
accepted). This module does not decide what to place (``utils.loader`` and the caches do).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from math import prod

import torch

HUGE_PAGE = 2 * 2**20
MADV_HUGEPAGE = 14
MIN_BYTES = HUGE_PAGE  # smaller tensors gain nothing


def _madvise():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        function = libc.madvise
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    function.restype = ctypes.c_int
    return function


_MADVISE = _madvise()


def _aligned_buffer(nbytes: int) -> tuple[torch.Tensor, int, bool]:
    """A byte buffer with room for ``nbytes`` from a 2 MiB boundary: (buffer, start offset, advised).
    Below ``MIN_BYTES`` it is a plain buffer (torch aligns it to 64 bytes)."""
    if nbytes < MIN_BYTES:
        return torch.empty(nbytes, dtype=torch.uint8), 0, False
    length = -(-nbytes // HUGE_PAGE) * HUGE_PAGE  # whole huge pages: the advised range stays inside `raw`
    raw = torch.empty(length + HUGE_PAGE, dtype=torch.uint8)
    start = -raw.data_ptr() % HUGE_PAGE
    advised = False
    if _MADVISE is not None:
        advised = _MADVISE(raw.data_ptr() + start, length, MADV_HUGEPAGE) == 0
    return raw, start, advised


def empty(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """``torch.empty(shape, dtype=dtype)``, on huge pages when it is large enough and the OS agrees."""
    nbytes = prod(shape) * torch.empty((), dtype=dtype).element_size()
    if nbytes < MIN_BYTES:
        return torch.empty(shape, dtype=dtype)
    raw, start, _ = _aligned_buffer(nbytes)
    return raw[start : start + nbytes].view(dtype).view(shape)


class Arena:
    """One huge-page buffer of ``nbytes``; ``take`` returns consecutive, 64-byte aligned tensor views."""

    ALIGN = 64

    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self.raw, self.offset, self.advised = _aligned_buffer(nbytes)
        self.end = self.offset + nbytes

    @classmethod
    def for_shapes(cls, shapes: list[tuple[int, ...]], dtype: torch.dtype) -> Arena:
        size = torch.empty((), dtype=dtype).element_size()
        return cls(sum(-(-prod(s) * size // cls.ALIGN) * cls.ALIGN for s in shapes))

    def take(self, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        nbytes = prod(shape) * torch.empty((), dtype=dtype).element_size()
        if self.offset + nbytes > self.end:
            raise ValueError(f"arena of {self.nbytes} bytes is full (asked for {nbytes} more)")
        view = self.raw[self.offset : self.offset + nbytes].view(dtype).view(shape)
        self.offset += -(-nbytes // self.ALIGN) * self.ALIGN
        return view
