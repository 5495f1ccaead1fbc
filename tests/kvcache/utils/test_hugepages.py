"""``kvcache.utils.hugepages``: 2 MiB-aligned buffers advised for transparent huge pages, and an arena of views."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from kvcache.utils import hugepages  # noqa: E402
from kvcache.utils.hugepages import HUGE_PAGE, Arena  # noqa: E402

pytestmark = pytest.mark.local
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def test_large_empty_tensors_start_on_a_huge_page_boundary_and_small_ones_are_plain():
    big = hugepages.empty((3, HUGE_PAGE // 4), torch.float32)
    assert big.shape == (3, HUGE_PAGE // 4) and big.dtype == torch.float32 and big.is_contiguous()
    assert big.data_ptr() % HUGE_PAGE == 0
    big.fill_(2.5)
    assert float(big.sum()) == 2.5 * big.numel()
    small = hugepages.empty((4, 8), torch.float16)
    assert small.shape == (4, 8) and small.dtype == torch.float16


def test_arena_views_are_aligned_disjoint_and_bounded():
    shapes = [(5, 7), (1000, 300), (3,)]
    arena = Arena.for_shapes(shapes, torch.float32)
    views = [arena.take(shape, torch.float32) for shape in shapes]
    for index, view in enumerate(views):
        assert view.data_ptr() % Arena.ALIGN == 0
        view.fill_(index)
    assert [float(v.float().mean()) for v in views] == [0.0, 1.0, 2.0]  # no view overwrote another
    with pytest.raises(ValueError, match="arena .* is full"):
        arena.take((1,), torch.float32)


@pytest.mark.parametrize("nbytes", [HUGE_PAGE, 3 * HUGE_PAGE + 4096, 5 * HUGE_PAGE - 64])
def test_the_advised_range_is_whole_huge_pages_inside_the_buffer(nbytes, monkeypatch):
    advised = []
    monkeypatch.setattr(
        hugepages, "_MADVISE", lambda address, length, advice: advised.append((address, length)) or 0
    )
    arena = Arena(nbytes)
    ((address, length),) = advised
    buffer_start = arena.raw.data_ptr()
    assert address % HUGE_PAGE == 0 and length % HUGE_PAGE == 0 and length >= nbytes
    assert buffer_start <= address and address + length <= buffer_start + arena.raw.numel()
    assert arena.advised and address == buffer_start + arena.offset


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not THP.is_file() or "[never]" in THP.read_text(),
    reason="transparent huge pages are not available on this machine",
)
def test_linux_accepts_the_huge_page_advice():
    assert Arena(4 * HUGE_PAGE).advised is True
