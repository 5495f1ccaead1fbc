"""The attention kernels of ``kvcache.layers.attention`` against torch's own: one-query GQA attention (with and
without a window mask, on token-minor cache views)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")

from kvcache.layers.attention import attend, attend_one  # noqa: E402
from tests.support.kvcache_checkpoints import one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local


def token_minor(x: torch.Tensor, capacity: int) -> torch.Tensor:
    """x [H_kv, n, d] copied into [H_kv, d, capacity] storage and viewed back as [H_kv, n, d]."""
    storage = torch.zeros(x.shape[0], x.shape[2], capacity)
    view = storage.transpose(1, 2)[:, : x.shape[1]]
    view.copy_(x)
    return view


@pytest.mark.parametrize("heads, kv_heads", [(6, 2), (4, 4), (8, 1)])
def test_one_query_attention_equals_repeated_kv_reference(heads, kv_heads):
    gen = torch.Generator().manual_seed(heads)
    n, d = 37, 16
    q = torch.randn(heads, 1, d, generator=gen)
    k, v = torch.randn(kv_heads, n, d, generator=gen), torch.randn(kv_heads, n, d, generator=gen)
    group = heads // kv_heads
    # Reference: every query head gets its own copy of its group's KV head (what GQA avoids doing).
    reference = F.scaled_dot_product_attention(
        q[None], k.repeat_interleave(group, 0)[None], v.repeat_interleave(group, 0)[None], scale=d**-0.5
    )[0]
    ours = attend_one(q, token_minor(k, 64), token_minor(v, 64), None, d**-0.5)
    assert ours.shape == (heads, 1, d)
    assert (ours - reference).abs().max() <= 1e-5


def test_one_query_window_mask_hides_keys_outside_the_window():
    gen = torch.Generator().manual_seed(3)
    n, d, window = 20, 8, 5
    q = torch.randn(4, 1, d, generator=gen)
    k, v = torch.randn(2, n, d, generator=gen), torch.randn(2, n, d, generator=gen)
    q_pos, k_pos = torch.tensor([n - 1]), torch.arange(n)
    masked = attend(q, k, v, q_pos, k_pos, window, d**-0.5)
    only_window = attend_one(q, k[:, -window:], v[:, -window:], None, d**-0.5)
    assert (masked - only_window).abs().max() <= 1e-6


def test_prefill_attention_accepts_token_minor_views():
    gen = torch.Generator().manual_seed(4)
    n, d = 12, 8
    q = torch.randn(4, n, d, generator=gen)
    k, v = torch.randn(2, n, d, generator=gen), torch.randn(2, n, d, generator=gen)
    pos = torch.arange(n)
    strided = attend(q, token_minor(k, 32), token_minor(v, 32), pos, pos, None, d**-0.5)
    assert (strided - attend(q, k, v, pos, pos, None, d**-0.5)).abs().max() <= 1e-6
