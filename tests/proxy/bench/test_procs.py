"""proxy.bench.procs: a real child started, waited for and stopped; a failed start told with its log."""

from __future__ import annotations

import signal

import click
import httpx
import pytest

from proxy.bench.procs import Child, child, children, free_ports, stop


def test_a_child_is_ready_when_its_url_answers_and_is_stopped_after_the_block(tmp_path):
    (port,) = free_ports(1)
    (tmp_path / "page.txt").write_text("hello")
    spec = Child(
        ["--bind", "127.0.0.1", str(port)],
        f"http://127.0.0.1:{port}/page.txt",
        "http.server",
        module="http.server",
        log=tmp_path / "server.log",
        cwd=tmp_path,
    )
    with child(spec, timeout_s=30) as proc:
        assert proc.poll() is None
        assert httpx.get(f"http://127.0.0.1:{port}/page.txt").text == "hello"
    assert proc.returncode == -signal.SIGTERM
    stop(proc)  # an exited child: nothing to do, no error


def test_a_child_that_exits_before_it_is_ready_is_reported_with_its_log(tmp_path):
    (port,) = free_ports(1)
    bad = Child(
        ["serve", "--port", "not-a-port"], f"http://127.0.0.1:{port}/", "bad serve", log=tmp_path / "bad.log"
    )
    with pytest.raises(click.ClickException) as info:
        with children([bad], timeout_s=30):
            pytest.fail("never ready")
    assert "bad serve exited with status 2 before it was ready" in info.value.message
    assert "not-a-port" in info.value.message  # the tail of its own log


def test_the_ports_are_distinct():
    ports = free_ports(8)
    assert len(set(ports)) == 8 and all(p > 0 for p in ports)
