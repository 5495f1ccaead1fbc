"""``prefixgate local``'s device flags: --device cuda without CUDA and a bad --kv-memory end in one clear
line; a good start prints the pool's banner (bytes per token, blocks, conversations that fit)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from kvcache.server.cli import local_command  # noqa: E402
from tests.support.kvcache_checkpoints import checkpoint, one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local


@pytest.fixture
def served(monkeypatch):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append(kwargs))  # do not block serving
    return calls


def test_the_start_banner_prints_the_pools_arithmetic(served):
    args = ["--model", str(checkpoint("llama3")), "--threads", "1", "--device", "cpu", "--max-context", "256"]
    result = CliRunner().invoke(local_command, [*args, "--kv-memory", "1MiB", "--context", "128"])
    assert result.exit_code == 0, result.output
    per_token = 2 * 2 * 2 * 16 * 4  # 2 · layers · KV heads · head dim · fp32
    blocks = 2**20 // (per_token * 16)
    assert f"KV pool: {per_token} B per token" in result.output
    assert f"{blocks} blocks of 16 tokens" in result.output and "(--kv-memory 1MiB)" in result.output
    assert f"{blocks * 16 // 128} conversations of 128 tokens fit" in result.output
    assert "fp32 on cpu" in result.output and served and served[0]["port"] == 8000


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--kv-memory", "lots"], "not a size: 'lots'"),
        (["--kv-memory", "1KiB"], "less than one context (256 tokens); give --kv-memory more"),
        (["--kv-memory", "1MiB", "--kv-blocks", "99"], "give --kv-memory or --kv-blocks, not both"),
        (["--context", "many"], "not a token count: 'many'"),
    ],
)
def test_bad_pool_flags_end_in_one_line(flags, message, served):
    args = ["--model", str(checkpoint("llama3")), "--threads", "1", "--device", "cpu", "--max-context", "256"]
    result = CliRunner().invoke(local_command, args + flags)
    assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
    assert not served


def test_cuda_without_cuda_is_refused_before_loading(served):
    result = CliRunner().invoke(local_command, ["--model", str(checkpoint("llama3")), "--device", "cuda"])
    if torch.cuda.is_available():  # then it serves on the GPU
        assert result.exit_code == 0 and "on cuda" in result.output
        return
    assert result.exit_code == 1 and "--device cuda: CUDA is not available" in result.output and not served
