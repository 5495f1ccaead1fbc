"""Throwaway Redis servers the tests start themselves: one node, or a 3-node Redis Cluster.

:class:`RedisProcess` is one ``redis-server`` on a free loopback port (no persistence) that a
test starts, kills and starts again on the same port (or never starts: a Redis down at start);
:func:`redis_server` runs one for the length of a ``with`` block; :func:`redis_cluster` runs three
``redis-server --cluster-enabled yes`` joined with ``redis-cli --cluster create``. Both end
their processes in ``finally``. :func:`redis_answers` says whether a Redis URL answers a PING. A missing ``redis-server`` / ``redis-cli`` skips the test,
or fails it under ``CI=true`` (:func:`tests.support.ci.missing`). This module starts no proxy.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.ci import missing
from tests.support.servers import free_port


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5).ping())
    except Exception:
        return False


def _binaries(*names: str) -> list[str]:
    found = [shutil.which(name) for name in names]
    if not all(found):
        missing(" and ".join(names))
    return [str(path) for path in found]


def _pings(cli: str, port: int) -> bool:
    done = subprocess.run(
        [cli, "-p", str(port), "ping"], check=False, capture_output=True, text=True, timeout=5
    )
    return done.stdout.strip() == "PONG"


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


class RedisProcess:
    """One throwaway ``redis-server`` in ``workdir`` on a free port (no persistence), not
    started yet; :meth:`kill` and :meth:`start` keep its port."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.server, self.cli = _binaries("redis-server", "redis-cli")
        self.port = port or free_port()
        self.workdir = Path(workdir)
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> None:
        self.starts += 1
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                self.server,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout_s
        while not _pings(self.cli, self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server on port {self.port} did not start (start #{self.starts})")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL, as a crash would: no save, connections reset."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=5)


@contextlib.contextmanager
def redis_server(workdir: Path) -> Iterator[RedisProcess]:
    """A started :class:`RedisProcess`, ended when the block ends."""
    node = RedisProcess(workdir)
    try:
        node.start()
        yield node
    finally:
        if node.proc is not None:
            _stop([node.proc])


def node_port() -> int:
    """A free port whose cluster bus port (+10000) is free too (and below 65536)."""
    for _ in range(200):
        port = random.randint(20000, 45000)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair for a cluster node")


def cluster_ok(port: int) -> bool:
    out = subprocess.run(
        ["redis-cli", "-p", str(port), "cluster", "info"],
        check=False,
        capture_output=True,
        text=True,
        timeout=5,
    ).stdout
    return "cluster_state:ok" in out


@dataclass
class Cluster:
    url: str  # redis-cluster://host:port,host:port,host:port
    ports: list[int]
    procs: list[subprocess.Popen] = field(default_factory=list)

    def __iter__(self):  # (url, ports, procs), as the first fixture yielded it
        return iter((self.url, self.ports, self.procs))

    def owner_of_slot(self, slot: int) -> int:
        """The port of the master serving ``slot`` (asked of a live node)."""
        import redis

        for port in self.ports:
            try:
                slots = redis.Redis(port=port, socket_timeout=2).execute_command("CLUSTER SLOTS")
            except redis.RedisError:
                continue
            for start, end, master, *_ in slots:
                if start <= slot <= end:
                    return int(master[1])
        raise RuntimeError(f"no live node knows slot {slot}")


def redis_cluster(tmp_path_factory, *extra: str) -> Iterator[Cluster]:
    """A fresh 3-master cluster (generator for a fixture: ``yield from``); ``extra`` is
    added to each ``redis-server`` command line (e.g. ``--cluster-require-full-coverage no``)."""
    server, cli = _binaries("redis-server", "redis-cli")
    ports = [node_port() for _ in range(3)]
    procs: list[subprocess.Popen] = []
    try:
        for port in ports:
            workdir = tmp_path_factory.mktemp(f"cluster-{port}")
            procs.append(
                subprocess.Popen(
                    [
                        server,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        str(workdir / "nodes.conf"),
                        "--cluster-node-timeout",
                        "2000",
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--dir",
                        str(workdir),
                        *extra,
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 10
        for port in ports:
            while not _pings(cli, port):
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    missing("Redis Cluster (a node did not start)")
                time.sleep(0.05)
        created = subprocess.run(
            [
                cli,
                "--cluster",
                "create",
                *(f"127.0.0.1:{p}" for p in ports),
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert created.returncode == 0, created.stdout + created.stderr
        deadline = time.monotonic() + 15
        while not all(cluster_ok(p) for p in ports):
            assert time.monotonic() < deadline, "cluster did not reach cluster_state:ok"
            time.sleep(0.1)
        yield Cluster("redis-cluster://" + ",".join(f"127.0.0.1:{p}" for p in ports), ports, procs)
    finally:
        _stop(procs)
