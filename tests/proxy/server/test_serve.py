"""proxy.server.serve: flags → ProxyConfig, clean usage errors, and a real `prefixgate serve` process."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from click.testing import CliRunner

from proxy.cli import cli
from proxy.emulator.app import create_app as create_emulator
from proxy.server.serve import parse_size
from tests.support.servers import free_port, serve


@pytest.mark.parametrize(
    "text, size",
    [
        ("32MiB", 32 * 1024 * 1024),
        ("1024", 1024),
        ("20kb", 20_000),
        ("512 KiB", 512 * 1024),
        ("1.5MiB", 1572864),
        ("2GB", 2 * 10**9),
    ],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "MiB", "12 parsecs", "-5", "1e6"])
def test_parse_size_rejects(text):
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--openai-base", "ftp://x"], "--openai-base must be an http(s) URL"),
        (["--host", "0.0.0.0"], "without --admin-token"),
        (["--store", "mongodb://x"], "--store must be"),
        (["--max-body", "lots"], "not a size"),
        (["--read-timeout", "0"], "must be positive"),
        (["--max-header-size", "100"], "--max-header-size must be at least 1KiB"),
        (["--max-header-size", "big"], "not a size"),
        (["--shutdown-timeout", "-1"], "--shutdown-timeout must be 0 or more"),
        (["--store-timeout", "0"], "must be positive"),
        (["--max-connections", "0"], "Invalid value for '--max-connections'"),
        (["--max-connections", "many"], "Invalid value for '--max-connections'"),
        (["--pool-timeout", "0"], "Invalid value for '--pool-timeout'"),
    ],
)
def test_bad_settings_are_usage_errors(args, message):
    result = CliRunner().invoke(cli, ["serve", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_help_names_every_flag():
    out = CliRunner().invoke(cli, ["serve", "--help"]).output
    for flag in (
        "--host",
        "--port",
        "--openai-base",
        "--anthropic-base",
        "--store",
        "--ledger",
        "--max-body",
        "--connect-timeout",
        "--read-timeout",
        "--admin-token",
        "--log-bodies",
        "--prices",
        "--rewrite",
        "--log-level",
        "--max-header-size",
        "--shutdown-timeout",
        "--store-timeout",
        "--tenant-secret-file",
        "--max-connections",
        "--pool-timeout",
    ):
        assert flag in out


@pytest.mark.e2e
def test_prefixgate_serve_process_proxies_to_the_emulator(tmp_path):
    with serve(create_emulator()) as upstream:
        port = free_port()
        env = {**os.environ, "PREFIXGATE_HOME": str(tmp_path)}
        cmd = [
            sys.executable,
            "-m",
            "proxy.cli",
            "serve",
            "--port",
            str(port),
            "--openai-base",
            f"{upstream}/v1",
            "--anthropic-base",
            upstream,
            "--max-body",
            "64KiB",
            "--ledger",
            str(tmp_path / "ledger.sqlite"),
        ]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"{base}/prefixgate/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not come up"
                time.sleep(0.1)
            ok = httpx.post(
                f"{base}/v1/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            )
            big = httpx.post(f"{base}/v1/chat/completions", content=b"x" * (64 * 1024 + 1))
            assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"]
            assert big.status_code == 413
            assert httpx.get(f"{base}/prefixgate/stats").json()["requests"] == 2
        finally:
            proc.terminate()
            output = proc.communicate(timeout=10)[0].decode()
    assert "prefixgate proxy on" in output
    assert (tmp_path / "tenant.key").exists()
