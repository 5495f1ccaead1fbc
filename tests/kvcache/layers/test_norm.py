"""``kvcache.layers.norm``: the one-row RMSNorm equals the batched form, which equals the three-step reference."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from kvcache.layers.norm import rms_norm  # noqa: E402
from tests.support.kvcache_checkpoints import one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local


def test_one_row_rms_norm_matches_the_batched_form():
    gen = torch.Generator().manual_seed(5)
    x, weight = torch.randn(3, 384, generator=gen) * 4, torch.rand(384, generator=gen) + 0.5
    batched = rms_norm(x, weight, 1e-5)
    reference = weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5))
    assert torch.equal(batched, reference)
    for row in range(3):
        assert (rms_norm(x[row : row + 1], weight, 1e-5) - reference[row]).abs().max() <= 1e-5
