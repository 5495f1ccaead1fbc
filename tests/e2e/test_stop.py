"""Stops at random moments end on time, and the books are complete.

Real ``prefixgate serve`` processes with ``--shutdown-timeout 1``, each stopped by SIGTERM at a
random moment (right after it was started, during its start-up, idle, while requests are in
flight, twice in a row) in front of dependencies that are dead or hang:

- upstreams (:mod:`tests.support.hung`): OpenAI streams that trickle forever, Anthropic
  requests to a listener that never reads nor answers (one of them with a 4 MiB body, so the
  proxy's own send stalls), quick requests looping until the stop, and in some trials a Gemini
  auto-cache call (``--gemini-auto-cache``) whose upstream never answers;
- stores: memory; Redis at a listener that accepts and never replies; a real Redis stopped
  (SIGSTOP) or killed mid-run; nothing listening; and the hung Redis without a tenant secret,
  whose start blocks on reading the shared one (a stop during start-up);
- event loops: uvloop, and plain asyncio (``PREFIXGATE_SERVER=asyncio``, no wakeup fd).

Every process must exit within ``--shutdown-timeout`` + :data:`BOUND_S` of the first SIGTERM,
with a clean status (-SIGTERM: the graceful path, never the watchdog's 143); every response it
gave (its request id) is exactly one row of its ledger, with the status the client saw, the
requests in flight at the stop as 503 ``shutdown_cut`` (the auto-cache call too); no traceback
or error line in its log. The trials run side by side (about 10 s on 2 cores); the seed is in
the failure message and ``PREFIXGATE_STOP_SEED`` replays it.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.support.hung import HungListener, ScriptedUpstream
from tests.support.procs import ledger_rows, log_problems
from tests.support.redis_procs import RedisProcess
from tests.support.servers import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.reliability]

SHUTDOWN_TIMEOUT_S = 1.0
BOUND_S = 3.0  # the fixed part of a stop (proxy.server.shutdown: at most 2.9 s past the timeout)
CLEAN = {0, -signal.SIGTERM}  # uvicorn re-raises the SIGTERM it handled once the shutdown is done
SECRET = "5e" * 32
SYSTEM = "You are the stop tests' assistant; answer in one word. " * 400  # over Gemini's caching minimum
STREAMS, WAITING = 2, 2


@dataclass
class Trial:
    name: str
    store: str  # memory | hung | stopped | killed | down | hung-no-secret
    moment: str  # at-start | startup | idle | in-flight | twice
    loop: str = "uvloop"
    gemini: bool = False


TRIALS = [
    Trial("memory, in flight", "memory", "in-flight"),
    Trial("memory, twice", "memory", "twice"),
    Trial("memory, right after start", "memory", "at-start"),
    Trial("memory, during start-up", "memory", "startup"),
    Trial("memory, idle, asyncio", "memory", "idle", loop="asyncio"),
    Trial("memory, in flight, asyncio", "memory", "in-flight", loop="asyncio"),
    Trial("gemini auto-cache call hung, in flight", "memory", "in-flight", gemini=True),
    Trial("hung redis, in flight", "hung", "in-flight"),
    Trial("hung redis, gemini call hung, twice", "hung", "twice", gemini=True),
    Trial("redis stopped mid-run, in flight", "stopped", "in-flight"),
    Trial("redis killed mid-run, twice", "killed", "twice"),
    Trial("redis down, in flight", "down", "in-flight"),
    Trial("hung redis, no secret, during start-up", "hung-no-secret", "startup"),
]


@dataclass
class Outcome:
    kind: str  # stream | waiting | quick | gemini
    confirmed: bool = False  # in flight (first event, or the upstream has it) before the stop
    status: int | None = None
    request_id: str | None = None
    error: str | None = None  # x-prefixgate-error


@dataclass
class Result:
    trial: Trial
    took: float | None = None
    rc: int | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    log: str = ""
    problems: list[str] = field(default_factory=list)


class Load:
    """The trial's clients, one thread each; :meth:`stop` ends the quick loop."""

    def __init__(self, base: str, hung: HungListener, upstream: ScriptedUpstream, gemini: bool) -> None:
        self.base, self.hung, self.upstream = base, hung, upstream
        self.outcomes: list[Outcome] = []
        self.threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._streaming = threading.Semaphore(0)
        self.gemini = gemini

    def start(self) -> None:
        calls = (
            [(self._quick, ())]
            + [(self._stream, ())] * STREAMS
            + [(self._waiting, (i == 0,)) for i in range(WAITING)]
        )
        for target, args in calls:
            thread = threading.Thread(target=target, args=args, daemon=True)
            thread.start()
            self.threads.append(thread)
        if self.gemini:
            self._gemini()

    def confirm(self, timeout_s: float = 15.0) -> None:
        """Until every stream had its first event and the upstreams have every waiting call."""
        deadline = time.monotonic() + timeout_s
        for _ in range(STREAMS):
            assert self._streaming.acquire(timeout=max(0.0, deadline - time.monotonic())), (
                "streams did not start"
            )
        while self.hung.accepted < WAITING or (self.gemini and self.upstream.count("cachedContents") < 1):
            assert time.monotonic() < deadline, "the waiting requests never reached their upstream"
            time.sleep(0.01)
        for outcome in list(self.outcomes):
            if outcome.kind in ("stream", "waiting", "gemini-call"):
                outcome.confirmed = True

    def stop(self) -> None:
        self._stop.set()
        for thread in self.threads:
            thread.join(15)

    def _seen(self, outcome: Outcome, response: httpx.Response) -> None:
        outcome.status = response.status_code
        outcome.request_id = response.headers.get("x-prefixgate-request-id")
        outcome.error = response.headers.get("x-prefixgate-error")

    def _stream(self) -> None:
        outcome = Outcome("stream")
        self.outcomes.append(outcome)
        body = {
            "model": "gpt-4o-mini",
            "stream": True,
            "messages": [{"role": "user", "content": "count forever"}],
        }
        try:
            with (
                httpx.Client(timeout=15) as client,
                client.stream(
                    "POST",
                    f"{self.base}/v1/chat/completions",
                    json=body,
                    headers={"authorization": "Bearer sk-stop-stream"},
                ) as r,
            ):
                self._seen(outcome, r)
                for n, _ in enumerate(r.iter_raw()):
                    if n == 0:
                        self._streaming.release()
        except httpx.HTTPError:
            pass

    def _waiting(self, big: bool) -> None:
        outcome = Outcome("waiting")
        self.outcomes.append(outcome)
        body = {
            "model": "claude-sonnet-4-6",
            "max_tokens": 8,
            "messages": [{"role": "user", "content": "x" * (4 << 20) if big else "wait"}],
        }  # 4 MiB: the upstream never reads it
        try:
            r = httpx.post(
                f"{self.base}/v1/messages", json=body, headers={"x-api-key": "sk-ant-stop"}, timeout=15
            )
            self._seen(outcome, r)
        except httpx.HTTPError:
            pass

    def _quick(self) -> None:
        with httpx.Client(timeout=15) as client:
            while not self._stop.is_set():
                outcome = Outcome("quick")
                try:
                    r = client.post(
                        f"{self.base}/v1/chat/completions",
                        headers={"authorization": "Bearer sk-stop-quick"},
                        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
                    )
                    self._seen(outcome, r)
                    self.outcomes.append(outcome)
                except httpx.HTTPError:  # the proxy stopped listening: this one never reached it
                    return
                time.sleep(0.1)

    def _gemini(self) -> None:
        """One request the auto-cache answers with a background ``cachedContents`` call (it hangs)."""
        outcome = Outcome("gemini")
        body = {
            "systemInstruction": {"parts": [{"text": SYSTEM}]},
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        }
        r = httpx.post(
            f"{self.base}/v1beta/models/gemini-2.5-flash:generateContent",
            json=body,
            headers={"x-goog-api-key": "AIza-stop"},
            timeout=15,
        )
        self._seen(outcome, r)
        self.outcomes.append(outcome)
        assert r.headers.get("x-prefixgate-gemini-cache") == "creating", r.headers
        self.outcomes.append(Outcome("gemini-call"))  # its row has no client; found by its route


def healthy(base: str, proc: subprocess.Popen, timeout_s: float = 60.0) -> None:
    # 13 servers start at once on 2 shared cores: start-up is not what this test times
    deadline = time.monotonic() + timeout_s
    while True:
        with contextlib.suppress(httpx.TransportError):
            httpx.get(
                f"{base}/prefixgate/health", timeout=2
            )  # 200, or 503 while the store is degraded: up either way
            return
        assert proc.poll() is None and time.monotonic() < deadline, "prefixgate serve did not come up"
        time.sleep(0.02)


def run_trial(trial: Trial, workdir: Path, rng: random.Random) -> Result:
    result = Result(trial)
    workdir.mkdir(parents=True)
    port, ledger, log = free_port(), workdir / "ledger.sqlite", workdir / "serve.log"
    env = {**os.environ, "PREFIXGATE_HOME": str(workdir), "PYTHONFAULTHANDLER": "1"}
    if trial.loop == "asyncio":
        env["PREFIXGATE_SERVER"] = "asyncio"
    redis: RedisProcess | None = None
    with HungListener() as hung, ScriptedUpstream() as upstream, HungListener() as hung_redis:
        store = "memory"
        if trial.store in ("hung", "hung-no-secret"):
            store = f"redis://127.0.0.1:{hung_redis.port}/0"
        elif trial.store in ("stopped", "killed"):
            redis = RedisProcess(workdir / "redis")
            redis.start()
            store = redis.url
        elif trial.store == "down":
            store = f"redis://127.0.0.1:{free_port()}/0"
        if trial.store != "memory" and trial.store != "hung-no-secret":
            env["PREFIXGATE_TENANT_SECRET"] = SECRET  # else the start blocks on reading the shared one
        cmd = [
            sys.executable,
            "-m",
            "proxy.cli",
            "serve",
            "--port",
            str(port),
            "--openai-base",
            f"{upstream.url}/v1",
            "--anthropic-base",
            hung.url,
            "--gemini-base",
            upstream.url,
            "--store",
            store,
            "--ledger",
            str(ledger),
            "--shutdown-timeout",
            f"{SHUTDOWN_TIMEOUT_S:g}",
            "--log-level",
            "warning",
        ]
        if trial.gemini:
            cmd += ["--gemini-auto-cache", "--gemini-auto-cache-after", "1"]
        base = f"http://127.0.0.1:{port}"
        load: Load | None = None
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            if trial.moment == "at-start":
                time.sleep(rng.uniform(0, 0.05))
            elif trial.moment == "startup":
                time.sleep(
                    rng.uniform(0.3, 3.0) if trial.store == "hung-no-secret" else rng.uniform(0.05, 0.6)
                )
            else:
                healthy(base, proc)
                if trial.moment == "idle":
                    time.sleep(rng.uniform(0, 0.3))
                else:
                    load = Load(base, hung, upstream, trial.gemini)
                    load.start()
                    load.confirm()
                    if redis is not None and redis.proc is not None:
                        if trial.store == "stopped":
                            os.kill(redis.proc.pid, signal.SIGSTOP)
                        else:
                            redis.kill()
                    time.sleep(rng.uniform(0.05, 0.6))
            started = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            if trial.moment == "twice":
                time.sleep(rng.uniform(0, 0.4))
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
            try:
                result.rc = proc.wait(timeout=SHUTDOWN_TIMEOUT_S + BOUND_S + 10)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGABRT)  # faulthandler writes every thread's stack to the log
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            result.took = time.monotonic() - started
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            if load is not None:
                load.stop()
                result.outcomes = load.outcomes
            if redis is not None and redis.proc is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(redis.proc.pid, signal.SIGCONT)
                redis.kill()
    result.log = log.read_text(errors="replace")
    result.problems = log_problems(result.log)
    result.rows = ledger_rows(ledger) if ledger.exists() else []
    return result


def check(result: Result) -> list[str]:
    """What is wrong with one trial (empty: nothing)."""
    wrong = []
    limit = SHUTDOWN_TIMEOUT_S + BOUND_S
    if result.took is None or result.took > limit:
        wrong.append(f"still running {limit:g} s after SIGTERM (took {result.took})")
    if result.rc not in CLEAN:
        wrong.append(f"exit status {result.rc}")
    if result.problems:
        wrong.append(f"log problems: {result.problems[:5]}")
    ids = [row["request_id"] for row in result.rows]
    if len(ids) != len(set(ids)):
        wrong.append("a request id in two rows")
    by_id = {row["request_id"]: row for row in result.rows}
    for outcome in result.outcomes:
        if outcome.kind == "gemini-call":
            continue
        if outcome.confirmed and outcome.request_id is None:
            wrong.append(f"a {outcome.kind} request in flight at the stop got no response")
            continue
        if outcome.request_id is None:
            continue
        row = by_id.get(outcome.request_id)
        if row is None:
            wrong.append(
                f"{outcome.kind} {outcome.request_id} (status {outcome.status}) is not in the ledger"
            )
        elif outcome.kind in ("stream", "waiting"):
            if (row["status"], row["error"]) != (503, "shutdown_cut"):
                wrong.append(
                    f"{outcome.kind} {outcome.request_id}: row {row['status']} {row['error']}, not 503 shutdown_cut"
                )
        elif row["status"] != outcome.status:
            wrong.append(
                f"{outcome.kind} {outcome.request_id}: row {row['status']}, the client saw {outcome.status}"
            )
    if any(o.kind == "waiting" for o in result.outcomes):
        waiting = [o for o in result.outcomes if o.kind == "waiting"]
        if [(o.status, o.error) for o in waiting] != [(503, "shutdown_cut")] * len(waiting):
            wrong.append(f"waiting requests answered {[(o.status, o.error) for o in waiting]}")
    if any(o.kind == "gemini-call" for o in result.outcomes):
        calls = [(r["status"], r["error"]) for r in result.rows if r["route"].endswith("/cachedContents")]
        if calls != [(503, "shutdown_cut")]:
            wrong.append(f"the auto-cache call's rows: {calls}")
    return wrong


def test_sigterm_at_random_moments_ends_every_stop_on_time_with_complete_books(tmp_path):
    seed = int(os.environ.get("PREFIXGATE_STOP_SEED") or random.randrange(1 << 30))
    rng = random.Random(seed)
    rngs = [random.Random(rng.random()) for _ in TRIALS]
    with ThreadPoolExecutor(len(TRIALS)) as pool:
        results = list(
            pool.map(lambda i: run_trial(TRIALS[i], tmp_path / f"trial-{i}", rngs[i]), range(len(TRIALS)))
        )
    report = "\n".join(
        f"  {r.trial.name}: {'-' if r.took is None else f'{r.took:.2f} s'}, exit {r.rc}, "
        f"{len(r.rows)} rows, {sum(o.request_id is not None for o in r.outcomes)} answered"
        for r in results
    )
    print(f"\nseed {seed}:\n{report}")
    failures = {r.trial.name: (wrong, r.log[-2500:]) for r in results if (wrong := check(r))}
    assert not failures, f"seed {seed} (PREFIXGATE_STOP_SEED={seed} replays it)\n{report}\n" + "\n".join(
        f"--- {name}: {wrong}\n{log}" for name, (wrong, log) in failures.items()
    )
    assert sum(len(r.rows) for r in results) > 0


def test_a_port_handed_to_a_proxy_is_never_one_a_listener_of_a_trial_beside_can_take():
    from tests.support.servers import _ephemeral_start

    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50 and all(p < _ephemeral_start() for p in ports)
    with HungListener() as listener:  # binds port 0: the kernel picks from the ephemeral range
        assert listener.port >= _ephemeral_start() and listener.port not in ports
