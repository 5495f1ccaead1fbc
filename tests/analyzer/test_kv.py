"""Every number the two seed documents print comes out of `prefixgate kv` exactly."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from analyzer import kv
from analyzer.kv_cli import kv_command


def run(*args: str) -> dict:
    result = CliRunner().invoke(kv_command, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize(
    ("model", "kib_per_token", "gib_at_128k"),
    [("llama-3-8b", 128, 16), ("llama-3-70b", 320, 40), ("llama-3-70b-mha", 2560, 320)],
)
def test_seed_per_token_and_128k(model, kib_per_token, gib_at_128k):
    out = run("--model", model, "--tokens", "128K")
    assert out["tokens"] == 131_072
    assert out["bytes_per_token"] == kib_per_token * 1024
    assert out["total_bytes"] == gib_at_128k * 1024**3


def test_seed_flags_equal_preset_and_formula():
    out = run("--layers", "80", "--kv-heads", "64", "--head-dim", "128", "--tokens", "131072")
    assert out["total_bytes"] == kv.kv_cache_bytes(80, 64, 128, 128 * 1024) == 320 * kv.GIB
    assert out["model"] is None


def test_seed_122_conversations_beside_8b_on_80gb():
    out = run("--model", "llama-3-8b", "--tokens", "4,000", "--gpu-memory", "80GB")
    assert out["weight_bytes"] == 8e9 * 2
    assert out["bytes_per_conversation"] == 524_288_000  # "about 0.52 GB"
    assert out["conversations_that_fit"] == 122
    same = run(
        "--layers",
        "32",
        "--kv-heads",
        "8",
        "--head-dim",
        "128",
        "--tokens",
        "4000",
        "--gpu-memory",
        "80GB",
        "--weights",
        "16GB",
    )
    assert same["conversations_that_fit"] == 122


def test_seed_209_tokens_per_second_at_3_35_tb_s():
    out = run("--model", "llama-3-8b", "--bandwidth", "3.35TB/s")
    assert f"{out['decode_tokens_per_s_limit']:.0f}" == "209"
    assert out["decode_tokens_per_s_limit"] == pytest.approx(209.375)


def test_seed_small_example_10_tokens_per_second():
    out = run(
        "--layers",
        "2",
        "--kv-heads",
        "1",
        "--head-dim",
        "4",
        "--weights",
        "10GB",
        "--bandwidth",
        "100GB/s",
        "--tokens",
        "3",
    )
    assert out["bytes_per_token"] == 32 and out["total_bytes"] == 96
    assert out["decode_tokens_per_s_limit"] == 10


def test_seed_two_1_05_gb_at_8k_and_about_60_users():
    out = run(
        "--layers",
        "32",
        "--kv-heads",
        "8",
        "--head-dim",
        "128",
        "--tokens",
        "8000",
        "--gpu-memory",
        "80GB",
        "--weights",
        "16GB",
    )
    assert out["total_bytes"] == 2 * 32 * 8 * 128 * 8000 * 2
    assert round(out["total_bytes"] / 1e9, 2) == 1.05
    assert out["conversations_that_fit"] == 61 and round(out["conversations_that_fit"], -1) == 60


def test_gqa_shrinks_4x_versus_32_heads_and_8_bits_halve():
    mha = run("--layers", "32", "--kv-heads", "32", "--head-dim", "128", "--tokens", "8000")
    gqa = run("--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--tokens", "8000")
    q8 = run("--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--tokens", "8000", "--bits", "8")
    q4 = run("--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--tokens", "8000", "--bits", "4")
    assert mha["total_bytes"] == 4 * gqa["total_bytes"] == 8 * q8["total_bytes"] == 16 * q4["total_bytes"]


def test_window_caps_tokens_and_batch_multiplies():
    out = run("--model", "mistral-7b", "--tokens", "32K", "--window", "4096", "--batch", "3")
    assert out["tokens_cached"] == 4096
    assert out["total_bytes"] == 3 * 4096 * out["bytes_per_token"]


def test_with_cache_ceiling_is_lower():
    out = run("--model", "llama-3-8b", "--tokens", "128K", "--bandwidth", "3.35TB/s")
    assert out["decode_tokens_per_s_limit_with_cache"] == pytest.approx(3.35e12 / (16e9 + 16 * kv.GIB))


@pytest.mark.parametrize(
    "args",
    [
        ["--layers", "32"],
        ["--model", "gpt-9000"],
        ["--model", "llama-3-8b", "--bits", "3"],
        ["--model", "llama-3-8b", "--tokens", "lots"],
        ["--model", "llama-3-8b", "--tokens", "10", "--gpu-memory", "eighty"],
        ["--model", "llama-3-8b", "--tokens", "10", "--gpu-memory", "8GB"],
        ["--layers", "1", "--kv-heads", "1", "--head-dim", "1", "--gpu-memory", "80GB", "--tokens", "9"],
        ["--model", "llama-3-8b", "--batch", "0"],
        ["--model", "llama-3-8b", "--layers", "0"],
        ["--model", "llama-3-8b", "--tokens", "0", "--gpu-memory", "80GB"],
        ["--model", "llama-3-8b", "--tokens", "-5"],
        ["--model", "llama-3-8b", "--tokens", "1K", "--bandwidth", "0TB/s"],
        ["--model", "llama-3-8b", "--tokens", "1K", "--gpu-memory", "0GB"],
        ["--layers", "1", "--kv-heads", "1", "--head-dim", "1", "--weights", "0", "--bandwidth", "1TB/s"],
        ["--model", "llama-3-8b", "--window", "0"],
    ],
)
def test_bad_flags_exit_2_with_a_message(args):
    result = CliRunner().invoke(kv_command, args)
    assert result.exit_code == 2
    assert "Error" in result.output and "Traceback" not in result.output


def test_zero_tokens_and_a_window_wider_than_the_conversation():
    assert run("--model", "llama-3-8b", "--tokens", "0")["total_bytes"] == 0
    out = run("--model", "llama-3-8b", "--tokens", "8K", "--window", "128K")
    assert out["tokens_cached"] == 8 * 1024 and out["total_bytes"] == 1 * kv.GIB


def test_unknown_model_names_the_known_ones():
    result = CliRunner().invoke(kv_command, ["--model", "gpt-9000", "--tokens", "1K"])
    assert (
        result.exit_code == 2
        and "unknown model 'gpt-9000'" in result.output
        and "llama-3-8b" in result.output
    )


def test_parse_sizes():
    assert kv.parse_bytes("80GB") == 80e9
    assert kv.parse_bytes("24GiB") == 24 * 2**30
    assert kv.parse_bytes("3.35TB/s", per_second=True) == pytest.approx(3.35e12)
    assert kv.parse_bytes("1e9") == 1e9
    assert kv.parse_tokens("128k") == 131_072
    with pytest.raises(ValueError):
        kv.parse_bytes("12 parsecs")


def test_text_output_names_the_figures():
    result = CliRunner().invoke(
        kv_command,
        ["--model", "llama-3-8b", "--tokens", "4000", "--gpu-memory", "80GB", "--bandwidth", "3.35TB/s"],
    )
    assert result.exit_code == 0
    assert "131,072" in result.output and "122" in result.output and "209 tokens/s" in result.output
