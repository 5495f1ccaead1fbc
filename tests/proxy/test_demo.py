"""``prefixgate demo``: the local model priced (and labelled) so every card fills on the first
run, the admin token from a flag or the environment, and a banner naming the local routes."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import httpx
import openai
import pytest
from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from analyzer.pricing import PriceTable
from proxy import demo
from proxy.app import create_app
from proxy.cli import cli
from proxy.config import ProxyConfig
from tests.support.servers import serve

LOCAL_MODEL = "prefixgate-demo-random-v2"


def test_unpriced_local_models_are_priced_as_gpt_4o_mini_and_say_so():
    table = PriceTable.load()
    doc, rate = demo.demo_prices([LOCAL_MODEL, "gpt-4o"], "gpt-4o-mini", table)
    mini = table.lookup("gpt-4o-mini")
    assert rate == mini and [row["model"] for row in doc["models"]] == [
        LOCAL_MODEL
    ]  # a priced model keeps its own price
    row = doc["models"][0]
    assert row["label"] == "priced as gpt-4o-mini" and "gpt-4o-mini" in row["source"]
    assert (row["input"], row["cache_read"], row["output"]) == (mini.input, mini.cache_read, mini.output)
    with pytest.raises(Exception, match="no price for 'no-such-model'"):
        demo.demo_prices([LOCAL_MODEL], "no-such-model", table)


def test_the_banner_names_the_local_routes_the_price_and_the_token():
    rate = PriceTable.load().lookup("gpt-4o-mini")
    text = demo.banner(
        "0.0.0.0",
        8080,
        "local",
        "http://127.0.0.1:8081",
        "http://127.0.0.1:8082",
        [LOCAL_MODEL],
        rate,
        "s3cret",
    )
    assert "POST /v1/chat/completions, POST /v1/completions, POST /v1/responses, GET /v1/models" in text
    assert "/v1/embeddings) answer 404" in text
    assert (
        f"{LOCAL_MODEL} priced as gpt-4o-mini ($0.15 input, $0.075 cached, $0.6 output per 1M tokens" in text
    )
    assert "dashboard?token=…" in text and "s3cret" not in text  # the token is never printed
    assert "/prefixgate/kv" in text


@pytest.fixture
def no_children(monkeypatch):
    """The demo's wiring without its processes: children and the server are recorded, not run."""
    started: dict = {}

    @contextlib.contextmanager
    def child(spec, timeout_s=60.0):
        started.setdefault("children", []).append(spec.args[0])
        yield

    def run(config, level):
        started["config"] = config
        started["prices"] = json.loads(Path(config.prices).read_text()) if config.prices else None

    monkeypatch.setattr(demo, "child", child)
    monkeypatch.setattr(demo, "run", run)
    monkeypatch.setattr(demo, "_torch_available", lambda: True)
    monkeypatch.setattr(demo, "listed_models", lambda base: [LOCAL_MODEL])
    return started


def test_admin_token_from_the_flag_or_the_environment(no_children):
    refused = CliRunner().invoke(cli, ["demo", "--host", "0.0.0.0"], env={"PREFIXGATE_ADMIN_TOKEN": ""})
    assert refused.exit_code == 2 and "--admin-token" in refused.output and "children" not in no_children
    ok = CliRunner().invoke(cli, ["demo", "--host", "0.0.0.0"], env={"PREFIXGATE_ADMIN_TOKEN": "from-env"})
    assert ok.exit_code == 0, ok.output
    assert no_children["config"].admin_token == "from-env" and no_children["children"] == [
        "local",
        "emulator",
    ]
    assert no_children["prices"]["models"][0]["label"] == "priced as gpt-4o-mini"
    assert "priced as gpt-4o-mini" in ok.output and "from-env" not in ok.output
    flag = CliRunner().invoke(
        cli,
        ["demo", "--admin-token", "from-flag", "--priced-as", "none"],
        env={"PREFIXGATE_ADMIN_TOKEN": "env"},
    )
    assert (
        flag.exit_code == 0
        and no_children["config"].admin_token == "from-flag"
        and no_children["prices"] is None
    )
    bad = CliRunner().invoke(cli, ["demo", "--priced-as", "gpt-0"])
    assert bad.exit_code == 2 and "--priced-as" in bad.output


def fake_local_engine() -> Starlette:
    """What `prefixgate local` answers, enough for the money: its model list and a chat completion with usage."""

    async def models(request: Request):
        return JSONResponse({"object": "list", "data": [{"id": LOCAL_MODEL, "object": "model"}]})

    async def chat(request: Request):
        return JSONResponse(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": LOCAL_MODEL,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "gibberish"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": 3000,
                    "completion_tokens": 40,
                    "total_tokens": 3040,
                    "prompt_tokens_details": {"cached_tokens": 2048},
                },
            }
        )

    return Starlette(
        routes=[Route("/v1/models", models), Route("/v1/chat/completions", chat, methods=["POST"])]
    )


def test_every_card_is_filled_on_the_first_run(tmp_path):
    """The demo's price file in front of an engine with an unpriced model: spent and saved are
    money (gpt-4o-mini's rates), and the dashboard's summary labels the borrowed rate."""
    with serve(fake_local_engine()) as engine:
        doc, _ = demo.demo_prices(demo.listed_models(engine), "gpt-4o-mini", PriceTable.load())
        prices = tmp_path / "demo-prices.json"
        prices.write_text(json.dumps(doc))
        config = ProxyConfig(
            openai_base=f"{engine}/v1",
            anthropic_base=engine,
            state_dir=tmp_path / "state",
            ledger=str(tmp_path / "ledger.sqlite"),
            prices=str(prices),
        )
        with serve(create_app(config)) as proxy:
            client = openai.OpenAI(base_url=f"{proxy}/v1", api_key="demo", max_retries=0)
            client.chat.completions.create(model=LOCAL_MODEL, messages=[{"role": "user", "content": "hi"}])
            stats = httpx.get(f"{proxy}/prefixgate/stats").json()
            summary = httpx.get(f"{proxy}/prefixgate/api/summary?since=all").json()
    # gpt-4o-mini: 952 × 0.15 + 2,048 × 0.075 + 40 × 0.60 = 142.8 + 153.6 + 24 = 320.4 → $0.0003204;
    # saved 2,048 × (0.15 − 0.075) = 153.6 → $0.0001536
    assert (
        stats["unpriced"] == 0
        and abs(stats["cost_usd"] - 0.0003204) < 1e-9
        and abs(stats["saved_usd"] - 0.0001536) < 1e-9
    )
    assert (
        summary["models"][0]["model"] == LOCAL_MODEL
        and summary["models"][0]["priced_as"] == "priced as gpt-4o-mini"
    )


def test_the_banner_lists_the_routes_the_engine_defines():
    """The local engine's server is another package (it needs torch): its route table is read
    from the source, so the banner's list cannot drift from it."""
    import re

    source = (Path(demo.__file__).parents[1] / "kvcache" / "server" / "app.py").read_text()
    routes = {
        f"{method} {path}"
        for path, method in re.findall(r'Route\("(/v1/[^"]+)", \w+, methods=\["(\w+)"\]\)', source)
    }
    assert routes == set(demo.LOCAL_ROUTES)


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:  # the parent pid, after the state field
            found.add(int(stat.parent.name))
    return found


@pytest.mark.e2e
def test_a_sigterm_stops_the_demos_children_too(tmp_path):
    """An orchestrator stops the demo with SIGTERM: its upstream and emulator children stop with it."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    from tests.support.servers import free_port

    def three_free(base: int) -> bool:  # the demo takes port, port + 1 (upstream) and port + 2 (emulator)
        with contextlib.ExitStack() as stack:
            for p in range(base, base + 3):
                s = stack.enter_context(socket.socket())
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    return False
        return True

    port = free_port()
    while port > 65000 or not three_free(port):
        port = free_port()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proxy.cli",
            "demo",
            "--upstream",
            "emulator",
            "--port",
            str(port),
            "--ledger",
            str(tmp_path / "ledger.sqlite"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, "the demo exited before it served"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{port}/prefixgate/health", timeout=1).status_code in (
                    200,
                    503,
                ):
                    break
            time.sleep(0.2)
        children = _children(proc.pid)
        assert len(children) == 2  # the upstream and the Anthropic/Gemini emulator
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        time.sleep(0.5)
        alive = {
            c
            for c in children
            if Path(f"/proc/{c}").exists()
            and "Z" not in Path(f"/proc/{c}/stat").read_text().rsplit(")", 1)[1].split()[0]
        }
        assert alive == set()
    finally:
        for c in _children(proc.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(c, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
