"""proxy.server.launch: the listen backlog, the server's loop, and a config the app refuses as a
usage error (the real process is tests/proxy/server/test_serve.py's)."""

from __future__ import annotations

import click
import pytest

from proxy.config import ProxyConfig
from proxy.server import launch


def test_the_listen_backlog_is_the_kernels_cap_at_least_uvicorns():
    backlog = launch.listen_backlog()
    assert backlog >= launch.MIN_BACKLOG
    try:
        with open("/proc/sys/net/core/somaxconn") as f:
            cap = int(f.read())
    except OSError:
        assert backlog == launch.MIN_BACKLOG
    else:
        assert backlog == max(launch.MIN_BACKLOG, cap)


def test_plain_asyncio_and_h11_only_when_asked(monkeypatch):
    monkeypatch.delenv("PREFIXGATE_SERVER", raising=False)
    assert launch.server_loop_and_http() == ("auto", "auto")
    monkeypatch.setenv("PREFIXGATE_SERVER", "asyncio")
    assert launch.server_loop_and_http() == ("asyncio", "h11")


def test_a_prices_file_the_app_cannot_read_is_a_usage_error_before_serving(tmp_path, monkeypatch):
    bad = tmp_path / "prices.json"
    bad.write_text("{not json")
    served = []
    monkeypatch.setattr("proxy.server.shutdown.serve", lambda *a, **k: served.append(a))
    config = ProxyConfig(state_dir=tmp_path, ledger=str(tmp_path / "l.sqlite"), prices=str(bad))
    with pytest.raises(click.UsageError, match=str(bad.name)):
        launch.run(config, "warning")
    assert served == []
