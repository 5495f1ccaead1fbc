"""Device and dtype names: auto picks CUDA when present, fp32 on the CPU; a device or dtype the machine
cannot run is one clear ``EngineError``, and ``free_bytes`` reports memory a pool can take."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from kvcache.errors import DeviceError, DTypeError  # noqa: E402
from kvcache.utils.device import free_bytes, resolve_device  # noqa: E402
from kvcache.utils.dtypes import auto_dtype, resolve_dtype  # noqa: E402

pytestmark = pytest.mark.local


def test_auto_is_cuda_when_present_else_the_cpu():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device(None) == resolve_device("auto")
    assert resolve_device("CPU") == torch.device("cpu")


def test_cuda_without_cuda_is_a_clear_error():
    if torch.cuda.is_available():
        assert resolve_device("cuda").type == "cuda"
        with pytest.raises(DeviceError, match="CUDA device"):
            resolve_device(f"cuda:{torch.cuda.device_count()}")
        return
    with pytest.raises(DeviceError, match="--device cuda: CUDA is not available .*use --device cpu or auto"):
        resolve_device("cuda")
    with pytest.raises(DeviceError, match="CUDA is not available"):
        resolve_device("cuda:0")


def test_an_unknown_device_is_refused_by_name():
    with pytest.raises(DeviceError, match="unknown device 'tpu'"):
        resolve_device("tpu")


def test_auto_dtype_is_fp32_on_the_cpu_and_probed():
    assert auto_dtype(torch.device("cpu")) == torch.float32
    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32
    assert resolve_dtype("bf16") == torch.bfloat16 and resolve_dtype("float16") == torch.float16
    with pytest.raises(DTypeError, match="this machine cannot compute in float8_e4m3fn"):
        resolve_dtype("float8_e4m3fn", torch.device("cpu"))
    with pytest.raises(DTypeError, match="unknown dtype 'fp12'"):
        resolve_dtype("fp12")


def test_free_bytes_on_the_cpu_is_positive_and_below_physical_memory():
    import os

    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < free_bytes(torch.device("cpu")) <= physical
