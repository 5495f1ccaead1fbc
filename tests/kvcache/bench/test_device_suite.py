"""The device suite on the CPU at tiny sizes (``python -m kvcache.bench.gpu`` and ``prefixgate bench engine
--device cpu``): every figure present and consistent with the others (not their speed), and a clear failure
where CUDA is asked for and absent."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from click.testing import CliRunner  # noqa: E402

from analyzer import kv  # noqa: E402
from kvcache.bench import gpu  # noqa: E402
from kvcache.bench.command import bench_engine_command  # noqa: E402
from tests.support.kvcache_checkpoints import one_torch_thread  # noqa: E402, F401 (autouse fixture)

pytestmark = pytest.mark.local
SMALL = ["--device", "cpu", "--batches", "1,3", "--prompt-tokens", "12", "--new-tokens", "8"]
SMALL += ["--prefix-tokens", "256", "--turn-tokens", "8", "--conversation-tokens", "512", "--threads", "1"]


def test_the_suite_writes_every_figure_and_they_agree(tmp_path, capsys):
    out = tmp_path / "suite.json"
    assert gpu.main([*SMALL, "--out", str(out)]) == 0
    table = capsys.readouterr().out
    r = json.loads(out.read_text())
    assert r["device"] == "cpu" and r["dtype"] == "fp32" and r["shape"] == "tiny" and r["random_weights"]
    assert r["ceiling_tokens_per_s"] == pytest.approx(r["copy_bandwidth_gb_per_s"] * 1e9 / r["weight_bytes"])
    d = r["decode"]
    assert [row["batch"] for row in d["batches"]] == [1, 3] and all(
        row["tokens_per_s"] > 0 for row in d["batches"]
    )
    assert d["share_of_ceiling"] == pytest.approx(d["batch_1_tokens_per_s"] / r["ceiling_tokens_per_s"])
    assert d["vs_transformers"] == pytest.approx(
        d["batch_1_tokens_per_s"] / r["transformers"]["decode_tokens_per_s"]
    )
    assert d["transformers_same_tokens"]["identical"] is True  # fp32: the same greedy tokens as generate()
    logits = r["transformers"]["logits"]
    assert logits["within_tolerance"] and logits["max_abs_diff"] < 1e-3 and logits["argmax_agreement"] == 1.0
    p = r["pool"]
    per_conversation = p["bytes_per_token"] * p["conversation_tokens"]
    assert p["formula_conversations"] == kv.conversations_that_fit(p["pool_bytes"], 0, per_conversation)
    assert p["held_conversations"] == p["formula_conversations"] == 64 * 2**20 // per_conversation
    assert r["identity"]["identical"] and r["identity"]["identical_rows"] == r["identity"]["batch"]
    t = r["ttft"]
    assert t["warm_cached_tokens"] == [256] and t["warm_over_cold"] == pytest.approx(
        t["warm_s"] / t["cold_s"]
    )
    assert t["warm_s"] < t["cold_s"]
    assert r["graph_steps"] == 0 and r["aims"]["applies"] is False  # the CPU never captures graphs
    assert set(r["seconds"]) == {"build", "transformers", "pool", "decode", "identity", "ttft"}
    for line in ("decode tok/s at batch 1", "share of the ceiling", "ours / transformers", "at batch 3"):
        assert line in table
    assert "TTFT cold / warm, 256-token shared prefix" in table and "conversations the pool holds" in table


def test_bench_engine_with_a_device_runs_the_suite_without_transformers():
    args = ["--device", "cpu", "--batches", "1,2", "--prompt-tokens", "12", "--new-tokens", "8"]
    args += ["--prefix-tokens", "256", "--conversation-tokens", "512", "--no-transformers", "--json"]
    result = CliRunner().invoke(bench_engine_command, args)
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["transformers"] == {"skipped": "--no-transformers"} and "vs_transformers" not in r["decode"]
    assert r["aims"]["vs_transformers_ge_2"] == {"value": None, "met": None}


def test_cuda_asked_for_and_absent_fails_in_one_line(capsys):
    if torch.cuda.is_available():  # nothing is missing here; the failure below needs CUDA's absence
        assert gpu.missing_requirements("cuda") == []
        return
    assert gpu.main(["--device", "cuda", "--out", "/nonexistent/never-written.json"]) == 1
    err = capsys.readouterr().err
    assert "--device cuda: torch" in err and "sees no CUDA device" in err
    result = CliRunner().invoke(bench_engine_command, ["--device", "cuda"])
    assert result.exit_code == 1 and "the device suite failed" in result.output


def test_suite_argv_passes_set_options_only():
    argv = gpu.suite_argv(device="cpu", shape=None, threads=2, no_transformers=True, json=False)
    assert argv == ["--device", "cpu", "--threads", "2", "--no-transformers"]
    assert gpu.parser().parse_args(argv).no_transformers


def test_generate_runs_to_length_without_masking_the_end_token():
    from kvcache.bench import device_runs as runs
    from kvcache.config import ModelConfig
    from kvcache.models.shapes import random_weights, shape_dict

    shape = shape_dict("tiny")
    weights = random_weights(ModelConfig.from_dict(shape), "cpu", torch.float32, 0)
    weights["lm_head.weight"][1] = 10.0  # the shape's eos (1) is often the argmax
    hf = runs.hf_model(shape, weights, torch.device("cpu"), torch.float32)
    tokens = runs.hf_decode(hf, [5, 6, 7], 6, torch.device("cpu"))["tokens"]
    assert len(tokens) == 6 and 1 in tokens  # min_new_tokens with an eos would have masked it


def test_a_failing_transformers_comparison_is_said_and_the_rest_measured(tmp_path, capsys, monkeypatch):
    from kvcache.bench import device_runs as runs

    def broken(*args):
        raise TypeError("from_config() got an unexpected keyword argument")

    monkeypatch.setattr(runs, "hf_model", broken)
    out = tmp_path / "suite.json"
    assert gpu.main([*SMALL, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    r = json.loads(out.read_text())
    assert r["transformers"] == {
        "skipped": "failed: TypeError: from_config() got an unexpected keyword argument"
    }
    assert "vs_transformers" not in r["decode"] and r["aims"]["logits_within_tolerance"]["met"] is None
    assert r["decode"]["batch_1_tokens_per_s"] > 0 and r["identity"]["identical"]
    assert "failed: TypeError" in captured.out and "[suite] ttft:" in captured.err


def test_too_old_a_torch_is_said_before_anything_runs(monkeypatch):
    monkeypatch.setattr(torch, "__version__", "2.4.1+cu121")
    assert gpu.missing_requirements("cpu") == ["torch 2.4.1+cu121 is too old: the engine needs torch >= 2.5"]
    monkeypatch.setattr(torch, "__version__", "2.10.0a0+git1234")
    assert gpu.missing_requirements("cpu") == []
