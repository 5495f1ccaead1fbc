"""Generation parameters check their own fields (no torch needed)."""

from __future__ import annotations

import pytest

from kvcache.params import GenerationParams, SamplingParams


def test_invalid_sampling_parameters_are_refused():
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(top_p=0.0)
    with pytest.raises(ValueError, match="temperature"):
        SamplingParams(temperature=-1)
    with pytest.raises(ValueError, match="max_new_tokens"):
        GenerationParams(max_new_tokens=0)
