"""``prefixgate rewrite FILE``: what the proxy's rewrite would send, offline.

Applies the same rewrites as ``serve --rewrite MODE`` to one body (``-`` for stdin) and prints
the body to send, or a unified diff with ``--diff``; the ids (and an ``x-grok-conv-id`` header)
go to stderr. ``--api``, ``--model``, ``--rules`` and ``--tenant`` override what the body says.
Exit 0 (rewritten or not), 2 for a file that cannot be read or is not a JSON object.

It does NOT apply ``ttl-1h`` / ``ttl-12h`` (they need the proxy's view of time) or write
anything but stdout and stderr. See docs/rewrite.md ("Offline").
"""

from __future__ import annotations

import difflib
import json
import sys
from typing import Any

import click

from analyzer.cache_rules import RULES
from analyzer.rewrite import (
    AGGRESSIVE,
    ANTHROPIC_MESSAGES,
    APIS,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    SAFE,
    rewrite_request,
)

_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}


def infer_api(body: dict[str, Any]) -> str:
    """The API a body is shaped for (see the module docstring)."""
    if "messages" not in body and ("input" in body or "instructions" in body):
        return OPENAI_RESPONSES
    if "system" in body or "anthropic_version" in body:
        return ANTHROPIC_MESSAGES
    tools = body.get("tools")
    if isinstance(tools, list) and any(isinstance(t, dict) and "input_schema" in t for t in tools):
        return ANTHROPIC_MESSAGES
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS for b in content
        ):
            return ANTHROPIC_MESSAGES
    return OPENAI_CHAT


def _pretty(body: Any) -> str:
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


@click.command("rewrite")
@click.argument("file", type=click.File("rb"))
@click.option(
    "--mode",
    type=click.Choice([SAFE, AGGRESSIVE]),
    default=SAFE,
    show_default=True,
    help="Which rewrites (as `serve --rewrite`).",
)
@click.option(
    "--api",
    type=click.Choice(APIS),
    default=None,
    help="The request's API (default: told by the body's shape).",
)
@click.option("--model", default=None, help="The model the request goes to (default: the body's `model`).")
@click.option(
    "--rules",
    type=click.Choice([r for r in RULES if r in ("openai", "anthropic", "xai", "mistral")]),
    default=None,
    help="Whose caching rules the upstream follows (default: the API's provider).",
)
@click.option(
    "--tenant",
    default="anonymous",
    show_default=True,
    help="Tenant for the prompt_cache_key (the proxy uses a keyed hash of the API key).",
)
@click.option("--diff", "as_diff", is_flag=True, help="Print a unified diff of the body before and after.")
def rewrite_command(
    file, mode: str, api: str | None, model: str | None, rules: str | None, tenant: str, as_diff: bool
) -> None:
    """Apply the proxy's --rewrite MODE to the request body in FILE (- for stdin)."""
    try:
        body = json.loads(file.read())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise click.UsageError(f"{file.name}: not a JSON request body ({exc})") from None
    if not isinstance(body, dict):
        raise click.UsageError(f"{file.name}: a request body is a JSON object, got {type(body).__name__}")
    api = api or infer_api(body)
    if model is None and isinstance(body.get("model"), str):
        model = body["model"]
    if rules is not None and (rules == "anthropic") != (api == ANTHROPIC_MESSAGES):
        raise click.UsageError(f"--rules {rules} does not speak {api}")
    result = rewrite_request(api, body, mode=mode, model=model, tenant=tenant, rules=rules)
    after = result.body if result.body is not None else body
    click.echo(
        f"{api}, --rewrite {mode}: {', '.join(result.applied) or 'nothing to rewrite'} (model: {model or 'none named'})",
        err=True,
    )
    for name, value in result.headers.items():
        click.echo(f"header {name}: {value}", err=True)
    if as_diff:
        diff = difflib.unified_diff(
            _pretty(body).splitlines(keepends=True),
            _pretty(after).splitlines(keepends=True),
            fromfile=f"{file.name} (as sent)",
            tofile=f"{file.name} (--rewrite {mode})",
        )
        sys.stdout.writelines(diff)
    else:
        sys.stdout.write(_pretty(after))
