"""``prefixgate emulator``: serve the upstream emulator under uvicorn.

Point the proxy's ``--openai-base`` at ``http://HOST:PORT/v1`` and ``--anthropic-base`` and
``--gemini-base`` at ``http://HOST:PORT``. This module only parses flags and starts the server.
"""

from __future__ import annotations

import click

from proxy.emulator.config import EmulatorConfig


@click.command("emulator")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port", default=8090, show_default=True, type=click.IntRange(0, 65535), help="Port to listen on."
)
@click.option(
    "--openai-ttl",
    "openai_ttl_s",
    default=600.0,
    show_default=True,
    type=float,
    help="Seconds an unused OpenAI prefix stays cached.",
)
@click.option(
    "--gemini-ttl",
    "gemini_ttl_s",
    default=300.0,
    show_default=True,
    type=float,
    help="Seconds an unused Gemini (implicit cache) prefix stays cached.",
)
@click.option(
    "--compaction-trigger",
    "compaction_trigger_tokens",
    default=150_000,
    show_default=True,
    type=click.IntRange(1),
    help="Anthropic compaction: input tokens that trigger it when the edit names no trigger.",
)
@click.option("--require-api-key", is_flag=True, help="Answer 401 to requests without a key.")
@click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
def emulator_command(
    host: str,
    port: int,
    openai_ttl_s: float,
    gemini_ttl_s: float,
    compaction_trigger_tokens: int,
    require_api_key: bool,
    log_level: str,
) -> None:
    """Run the OpenAI + Anthropic + Gemini upstream emulator (deterministic replies, provider caching rules)."""
    import uvicorn

    from proxy.emulator.app import create_app

    try:
        config = EmulatorConfig(
            openai_ttl_s=openai_ttl_s,
            gemini_ttl_s=gemini_ttl_s,
            compaction_trigger_tokens=compaction_trigger_tokens,
            require_api_key=require_api_key,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    click.echo(
        f"emulator: OpenAI base http://{host}:{port}/v1, Anthropic and Gemini base http://{host}:{port}",
        err=True,
    )
    uvicorn.run(create_app(config), host=host, port=port, log_level=log_level)
