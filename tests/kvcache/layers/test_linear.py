"""``Projection``: the stored layout follows the matrix's shape, and every layout computes x·Wᵀ (+ b, + residual)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = pytest.importorskip("torch.nn.functional")

from kvcache.layers.linear import Projection  # noqa: E402
from tests.support.kvcache_checkpoints import one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local


@pytest.mark.parametrize(
    "out_features, in_features, input_major", [(96, 32, True), (32, 96, False), (48, 48, False)]
)
def test_wide_matrices_are_stored_input_major_and_compute_the_same_product(
    out_features, in_features, input_major
):
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(out_features, in_features, generator=gen)
    x = torch.randn(5, in_features, generator=gen)
    proj = Projection(weight)
    assert proj.input_major is input_major
    assert proj.stored.shape == ((in_features, out_features) if input_major else (out_features, in_features))
    assert proj.stored.is_contiguous() and torch.equal(proj.weight, weight)
    assert (proj(x) - F.linear(x, weight)).abs().max() <= 1e-5
    assert (proj(x[:1]) - F.linear(x[:1], weight)).abs().max() <= 1e-5  # the one-row decode case
    assert proj.nbytes == weight.nbytes


def test_bias_and_residual_are_added():
    gen = torch.Generator().manual_seed(1)
    weight, bias = torch.randn(64, 16, generator=gen), torch.randn(64, generator=gen)
    x, residual = torch.randn(3, 16, generator=gen), torch.randn(3, 64, generator=gen)
    with_bias = Projection(weight, bias)
    assert (with_bias(x) - F.linear(x, weight, bias)).abs().max() <= 1e-5
    assert with_bias.nbytes == weight.nbytes + bias.nbytes
    plain = Projection(weight, input_major=False)
    assert (plain(x, residual) - (residual + F.linear(x, weight))).abs().max() <= 1e-5
    with pytest.raises(ValueError, match="bias cannot also take a residual"):
        with_bias(x, residual)


def test_a_projection_weight_must_be_a_matrix():
    with pytest.raises(ValueError, match="2-D"):
        Projection(torch.ones(4))


def test_scaled_and_add_into_are_the_decode_steps_fused_forms():
    gen = torch.Generator().manual_seed(2)
    weight, bias = torch.randn(64, 16, generator=gen), torch.randn(64, generator=gen)
    x, residual = torch.randn(1, 16, generator=gen), torch.randn(1, 64, generator=gen)
    plain, with_bias = Projection(weight), Projection(weight, bias)
    assert (plain.scaled(x, 0.37) - 0.37 * F.linear(x, weight)).abs().max() <= 1e-5
    out = torch.full((1, 64), float("nan"))  # beta=0: whatever ``out`` held is ignored
    assert plain.scaled(x, 0.37, out=out) is out and not out.isnan().any()
    assert (with_bias.scaled(x, 2.0) - (2.0 * F.linear(x, weight) + bias)).abs().max() <= 1e-5
    expected = residual + F.linear(x, weight)
    assert plain.add_into(residual, x) is residual  # in place
    assert (residual - expected).abs().max() <= 1e-5
    with pytest.raises(ValueError, match="bias cannot also take a residual"):
        with_bias.add_into(residual, x)
