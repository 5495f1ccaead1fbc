"""Choosing a token from logits: top-p keeps the nucleus, a vanishing temperature is greedy."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from kvcache.layers.sampler import Sampler  # noqa: E402
from kvcache.params import SamplingParams  # noqa: E402

pytestmark = pytest.mark.local


def test_top_p_keeps_only_the_nucleus():
    logits = torch.tensor([5.0, 4.0, 0.0, -1.0, -2.0])  # p ≈ 0.72, 0.26, ...
    sampler = Sampler(SamplingParams(temperature=1.0, top_p=0.5, seed=0))
    assert {sampler(logits) for _ in range(50)} == {0}
    wider = Sampler(SamplingParams(temperature=1.0, top_p=0.9, seed=0))
    assert {wider(logits) for _ in range(200)} == {0, 1}


def test_top_p_stops_as_soon_as_the_nucleus_reaches_p():
    # Four equally likely tokens: two of them already make p = 0.5, so a third is never drawn.
    sampler = Sampler(SamplingParams(temperature=1.0, top_p=0.5, seed=0))
    assert {sampler(torch.zeros(4)) for _ in range(200)} == {0, 1}


def test_a_vanishing_temperature_is_greedy_not_a_crash():
    logits = torch.tensor([1.0, 3.0, 2.0])
    for temperature in (1e-45, 1e-9):
        sampler = Sampler(SamplingParams(temperature=temperature, seed=0))
        assert sampler.params.greedy and sampler(logits) == 1
    assert not SamplingParams(temperature=0.01).greedy
