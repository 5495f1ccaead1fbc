"""Device names → torch devices: ``auto`` (CUDA when present, else the CPU), ``cpu``, ``cuda`` or ``cuda:N``.

``--device cuda`` on a machine without CUDA (a CPU-only torch build, or no GPU visible) is a
``DeviceError`` naming what is missing, never a traceback at the first kernel. ``free_bytes`` is the memory
a KV pool may take from: free device memory on CUDA, ``MemAvailable`` on the CPU. It does not pick a dtype
(``dtypes``) or size the pool (``engine.memory``).
"""

from __future__ import annotations

from pathlib import Path

import torch

from kvcache.errors import DeviceError

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str | None) -> torch.device:
    wanted = (name or "auto").strip().lower()
    if wanted == "auto":
        return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    if wanted == "cpu":
        return torch.device("cpu")
    if wanted == "cuda" or wanted.startswith("cuda:"):
        if not torch.cuda.is_available():
            build = (
                "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
            )
            raise DeviceError(
                f"--device {wanted}: CUDA is not available (torch {torch.__version__} is {build}"
                f"{'' if torch.version.cuda is None else ', but no GPU is visible'}); use --device cpu or auto"
            )
        device = torch.device(wanted)
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceError(f"--device {wanted}: only {torch.cuda.device_count()} CUDA device(s) visible")
        return device if device.index is not None else torch.device("cuda", torch.cuda.current_device())
    raise DeviceError(f"unknown device {name!r} (use auto, cpu or cuda)")


def free_bytes(device: torch.device) -> int:
    """Memory free for new tensors now: CUDA's free device memory, or the OS's MemAvailable."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    import os

    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (a no-op on the CPU): for timings only."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
