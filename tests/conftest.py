"""Shared fixtures: a real Redis (throwaway when none answers), Chromium, state dirs.

Under CI (``CI=true``) a missing Redis or browser fails the test; elsewhere it skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

pytest.register_assert_rewrite(
    "tests.support"
)  # before the imports below: support's asserts report like a test's

from tests.support.ci import missing  # noqa: E402
from tests.support.redis_procs import redis_answers  # noqa: E402
from tests.support.servers import free_port  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path_factory, monkeypatch):
    """Every test gets its own PREFIXGATE_HOME: no secret or ledger leaks between tests."""
    monkeypatch.setenv("PREFIXGATE_HOME", str(tmp_path_factory.mktemp("pg-home")))


@pytest.fixture(scope="session")
def redis_server_url(tmp_path_factory):
    """A Redis URL: $PREFIXGATE_TEST_REDIS, the local 127.0.0.1:6379, or a throwaway server."""
    url = os.environ.get("PREFIXGATE_TEST_REDIS", "redis://127.0.0.1:6379/0")
    if redis_answers(url):
        yield url
        return
    binary = shutil.which("redis-server")
    if not binary:
        missing("Redis (no server answers and redis-server is not installed)")
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 10
    while not redis_answers(url):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            missing("Redis (throwaway redis-server did not start)")
        time.sleep(0.05)
    yield url
    proc.terminate()
    proc.wait(timeout=5)


@pytest.fixture
def redis_url(redis_server_url):
    """A Redis URL plus a unique key prefix; deletes only the keys under that prefix."""
    import redis

    prefix = f"prefixgate-test:{uuid.uuid4().hex[:12]}:"
    yield redis_server_url, prefix
    client = redis.Redis.from_url(redis_server_url)
    for key in client.scan_iter(match=prefix + "*", count=500):
        client.delete(key)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    missing("Chromium")
    return ""  # unreachable


@pytest.fixture
def state_dir() -> Path:
    return Path(os.environ["PREFIXGATE_HOME"])
