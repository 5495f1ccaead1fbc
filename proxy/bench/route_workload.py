"""The workload of ``prefixgate bench route``: K apps, each with its own long system prompt, whose
requests arrive in a random (seeded) order, each with a short user turn of its own.

Texts are words drawn from a fixed list (about 4 bytes a token, like English), so the same seed
gives the same bytes in every run. A ``salt`` leads each system prompt, so every policy starts
from caches that hold nothing of its prompts. It sends nothing (see :mod:`.route_run`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

WORDS = (
    "the of and to in is you that it for are as with on be this have from or by not but what all were "
    "when can said there use an each which she do how their if will up other about out many then them "
    "these so some her would make like him into time has look two more write go see number no way could "
    "people my than first water been call who oil its now find long down day did get come made may part "
    "invoice account policy refund customer order shipping support contract billing schedule report"
).split()


@dataclass(frozen=True)
class RouteWorkload:
    apps: int = 10
    requests_per_app: int = 24
    system_tokens: int = 6000
    user_tokens: int = 40
    max_tokens: int = 8
    concurrency: int = 8
    seed: int = 7

    def __post_init__(self) -> None:
        for name in ("apps", "requests_per_app", "system_tokens", "user_tokens", "max_tokens", "concurrency"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be an integer >= 1, got {value!r}")

    @property
    def requests(self) -> int:
        return self.apps * self.requests_per_app

    def prompt_tokens(self) -> int:
        """About how many tokens one request's prompt holds (system, user turn, chat markup)."""
        return self.system_tokens + self.user_tokens + 16


def text(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` tokens (4 bytes each) of words."""
    out: list[str] = []
    size = 0
    while size < tokens * 4:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def system_prompts(w: RouteWorkload, salt: str) -> list[str]:
    prompts = []
    for app in range(w.apps):
        head = f"[{salt}] You are assistant {app} of the bench. Follow these notes. "
        prompts.append(head + text(random.Random(f"{w.seed}-system-{app}"), w.system_tokens - len(head) // 4))
    return prompts


def schedule(w: RouteWorkload) -> list[tuple[int, int]]:
    """(app, request number) in arrival order: every app's requests, shuffled together."""
    order = [(app, i) for app in range(w.apps) for i in range(w.requests_per_app)]
    random.Random(f"{w.seed}-order").shuffle(order)
    return order


def chat_body(w: RouteWorkload, systems: list[str], app: int, i: int, model: str) -> dict:
    user = f"Request {i} of app {app}: " + text(random.Random(f"{w.seed}-user-{app}-{i}"), w.user_tokens)
    return {
        "model": model,
        "messages": [{"role": "system", "content": systems[app]}, {"role": "user", "content": user}],
        "max_tokens": w.max_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
