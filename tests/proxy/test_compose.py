"""docker-compose.yml and Dockerfile: the multi-replica topology, checked without Docker.

No Docker engine runs here, so this checks the files' structure: the services, their
ports and health checks, and that every ``prefixgate`` command line in them uses the CLI's
real commands and flags (parsed by the click commands themselves).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from proxy.cli import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compose() -> dict:
    yaml = pytest.importorskip(
        "yaml"
    )  # PyYAML is in this environment; without it the text check below still runs
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_structure_without_a_yaml_parser():
    text = (ROOT / "docker-compose.yml").read_text()
    services = re.findall(
        r"^  ([a-z][a-z0-9-]*):\s*$", text.split("\nservices:\n", 1)[1].split("\nvolumes:\n", 1)[0], re.M
    )
    assert services == ["redis", "engine", "proxy-a", "proxy-b"]
    assert text.count("healthcheck:") == 3  # redis, engine, and the proxies' shared anchor
    assert '"8080:8080"' in text and '"8081:8080"' in text


def _command(name: str) -> click.Command:
    ctx = click.Context(cli)
    command = cli.get_command(ctx, name)
    assert command is not None, f"prefixgate has no command {name!r}"
    return command


def _check_args(args: list[str]) -> click.Context:
    """Parse ``prefixgate ARGS`` with the real click command: unknown flags, missing values
    or bad values fail here, as they would at start."""
    name, *rest = args
    command = _command(name)
    known = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    for arg in rest:
        if arg.startswith("--"):
            assert arg.split("=", 1)[0] in known, f"`prefixgate {name}` has no flag {arg}"
    return command.make_context(name, list(rest), resilient_parsing=False)


def _healthcheck_ok(check: dict) -> None:
    assert check["test"][0] in ("CMD", "CMD-SHELL") and len(check["test"]) > 1
    for key in ("interval", "timeout", "retries"):
        assert key in check


def test_services_ports_and_health_checks(compose):
    services = compose["services"]
    assert set(services) == {"redis", "engine", "proxy-a", "proxy-b"}
    for service in services.values():
        _healthcheck_ok(service["healthcheck"])
    assert sorted(p for name in ("proxy-a", "proxy-b") for p in services[name]["ports"]) == [
        "8080:8080",
        "8081:8080",
    ]
    assert "ports" not in services["redis"] and "ports" not in services["engine"]  # internal only
    for name in ("proxy-a", "proxy-b"):
        service = services[name]
        assert service["depends_on"] == {
            "redis": {"condition": "service_healthy"},
            "engine": {"condition": "service_healthy"},
        }
        assert "8080/prefixgate/health" in " ".join(service["healthcheck"]["test"])
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]


def test_replicas_share_redis_engine_and_tenant_secret(compose):
    services = compose["services"]
    a, b = services["proxy-a"], services["proxy-b"]
    assert a["command"] == b["command"] and a["environment"] == b["environment"]
    assert "PREFIXGATE_TENANT_SECRET" in a["environment"] and "PREFIXGATE_ADMIN_TOKEN" in a["environment"]
    assert a["volumes"] != b["volumes"]  # each replica keeps its own ledger
    ctx = _check_args(a["command"])
    assert ctx.params["store"] == "redis://redis:6379/0"
    engine = _check_args(services["engine"]["command"])
    assert ctx.params["openai_base"] == f"http://engine:{engine.params['port']}/v1"
    assert ctx.params["port"] == 8080 and ctx.params["host"] == "0.0.0.0"


def test_every_command_line_uses_real_prefixgate_flags(compose):
    commands = [s["command"] for name, s in compose["services"].items() if name != "redis"]
    assert len(commands) == 3
    for args in commands:
        assert isinstance(args, list) and all(isinstance(a, str) for a in args)
        _check_args(args)
    with pytest.raises(AssertionError, match="no flag"):  # the check itself bites
        _check_args(["serve", "--no-such-flag", "x"])


def test_the_replica_command_line_starts_a_valid_config(compose, monkeypatch, tmp_path):
    from click.testing import CliRunner

    import proxy.server.serve as serve_module

    seen = {}
    monkeypatch.setattr(serve_module, "run", lambda config, level: seen.setdefault("config", config))
    monkeypatch.chdir(tmp_path)  # no pyproject.toml upstreams from the checkout
    monkeypatch.setenv("PREFIXGATE_ADMIN_TOKEN", "t" * 24)
    monkeypatch.setenv("PREFIXGATE_TENANT_SECRET", "ab" * 32)
    result = CliRunner().invoke(cli, compose["services"]["proxy-a"]["command"])
    assert result.exit_code == 0, result.output
    config = seen["config"]
    assert config.store == "redis://redis:6379/0" and config.tenant_secret == "ab" * 32 and config.admin_token


def test_dockerfile_entrypoint_cmd_and_healthcheck():
    text = (ROOT / "Dockerfile").read_text()
    entry = json.loads(re.search(r"^ENTRYPOINT (\[.*\])$", text, re.M).group(1))
    cmd = json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))
    assert entry == ["prefixgate"]
    _check_args(cmd)
    assert re.search(r"^HEALTHCHECK .*\n?.*CMD .*prefixgate/health", text, re.M)
    assert "EXPOSE 8080" in text
    for path in ("proxy", "analyzer", "kvcache", "pyproject.toml"):
        assert (ROOT / path).exists() and f" {path}" in text
    assert '".[local]"' in text  # the image installs the local extra for the engine
