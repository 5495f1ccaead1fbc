"""GPT-5.6 workloads for ``prefixgate bench rewrite``: the codex pattern and an agent loop.

GPT-5.6 caches only at breakpoints, so these are the shapes its implicit breakpoint alone serves
worst and best: :func:`codex` (a fixed ~9,000-token developer prompt and six tools, one new user
message per request, no history: nothing is ever read) and :func:`agent_loop`
(:func:`proxy.bench.agent_workload.conversation` on GPT-5.6), each in Chat Completions' or
Responses' shape (``store: false``, as Codex sends). ``marked=True`` is the *ideal* app that
marks its own head with an explicit breakpoint and has nothing volatile.
Seeded and deterministic; this module sends nothing. See docs/measured.md (rewrite).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from proxy.bench.agent_workload import conversation

MODEL = "gpt-5.6-sol"
CHAT, RESPONSES = "openai-chat", "openai-responses"
MARK = {"mode": "explicit"}

_RULES = (
    "You are Forge, a coding agent working in the user's repository through the tools below. "
    "Read the relevant files before you change anything, keep each change minimal, follow the "
    "repository's own conventions, run the tests that cover what you touched and report what "
    "you ran. Never commit, push or delete branches unless asked; never print secrets. "
)
#: ~36 KB: ~9,000 estimated tokens.
DEVELOPER = "# Forge developer instructions\n\n" + _RULES * 104
_CODEX_TOOLS = {
    "shell": (
        "Run a shell command in the workspace and return its output.",
        {"command": "array", "workdir": "string", "timeout_ms": "integer"},
    ),
    "apply_patch": ("Apply a patch in the V4A diff format to files in the workspace.", {"input": "string"}),
    "read_file": (
        "Read a file, optionally a line range.",
        {"path": "string", "start": "integer", "end": "integer"},
    ),
    "list_dir": ("List a directory.", {"path": "string", "depth": "integer"}),
    "search": ("Search the workspace with a regular expression.", {"pattern": "string", "path": "string"}),
    "update_plan": (
        "Record the plan and the status of each step.",
        {"plan": "array", "explanation": "string"},
    ),
}
_TASKS = [
    "Fix the failing test in tests/test_parser.py (#{n}).",
    "Add a --dry-run flag to the deploy command (#{n}).",
    "Why does `make lint` fail on a clean checkout? (#{n})",
    "Rename the `cfg` module to `config` and update the imports (#{n}).",
    "Write a unit test for the retry backoff in client.py (#{n}).",
]


def _codex_tools(api: str) -> list[dict[str, Any]]:
    out = []
    for name, (text, params) in _CODEX_TOOLS.items():
        schema = {
            "type": "object",
            "properties": {p: {"type": kind} for p, kind in params.items()},
            "required": [next(iter(params))],
        }
        if api == CHAT:
            out.append(
                {"type": "function", "function": {"name": name, "description": text, "parameters": schema}}
            )
        else:
            out.append({"type": "function", "name": name, "description": text, "parameters": schema})
    return out


def _head_part(api: str, text: str) -> dict[str, Any]:
    return {
        "type": "text" if api == CHAT else "input_text",
        "text": text,
        "prompt_cache_breakpoint": dict(MARK),
    }


def _shape(
    api: str,
    model: str,
    tools: list[dict[str, Any]],
    head: str,
    turns: list[dict[str, Any]],
    marked: bool,
    max_tokens: int,
) -> dict[str, Any]:
    """One request body: the head (developer text) then the turns, in ``api``'s shape."""
    if api == CHAT:
        developer = {"role": "developer", "content": [_head_part(api, head)] if marked else head}
        return {"model": model, "max_tokens": max_tokens, "tools": tools, "messages": [developer, *turns]}
    body: dict[str, Any] = {"model": model, "max_output_tokens": max_tokens, "tools": tools, "store": False}
    if marked:
        body["input"] = [{"role": "developer", "content": [_head_part(api, head)]}, *turns]
    else:
        body["instructions"] = head
        body["input"] = turns
    return body


def codex(
    api: str, requests: int, *, marked: bool = False, seed: int = 1, model: str = MODEL
) -> Iterator[dict[str, Any]]:
    """``requests`` one-shot bodies sharing one head, each with a new user message."""
    if api not in (CHAT, RESPONSES):
        raise ValueError(f"api must be {CHAT} or {RESPONSES}, got {api!r}")
    rng = random.Random(seed)
    tools = _codex_tools(api)
    for i in range(requests):
        task = _TASKS[(i + seed) % len(_TASKS)].format(n=rng.randrange(1000, 9999))
        yield _shape(api, model, tools, DEVELOPER, [{"role": "user", "content": task}], marked, 64)


def _responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "function", **t["function"]} for t in tools]


def agent_loop(
    api: str,
    turns: int = 24,
    *,
    volatile: bool = True,
    shuffle: bool | None = None,
    marked: bool = False,
    seed: int = 1,
    model: str = MODEL,
) -> Iterator[dict[str, Any]]:
    """The bodies of one agent conversation (see the module docstring); ``marked`` implies
    nothing volatile (the ideal app)."""
    if api not in (CHAT, RESPONSES):
        raise ValueError(f"api must be {CHAT} or {RESPONSES}, got {api!r}")
    if marked:
        volatile, shuffle = False, False
    for body in conversation("openai", turns, volatile=volatile, shuffle=shuffle, seed=seed, model=model):
        system, *rest = body["messages"]
        tools = body["tools"] if api == CHAT else _responses_tools(body["tools"])
        out = _shape(api, model, tools, system["content"], rest, marked, body["max_tokens"])
        if api == CHAT and not marked:
            # as the agent framework sends it
            out["messages"][0]["role"] = "system"
        yield out
