"""Anthropic server-side compaction (``context_management`` edit ``compact_20260112``): the
extra billed pass that appears only in ``usage.iterations``.

When the prompt reaches the edit's ``input_tokens`` trigger (else the config's), a compaction
pass runs before the answer; usage then carries ``iterations``: the ``compaction`` entry (not in
the top-level numbers) then the ``message`` one (equal to them); streaming, ``message_start``
lists the compaction entry and ``message_delta`` the message's.
The SDK types say what is reported, not how the passes are built: :data:`ASSUMPTIONS`.
It formats only the iteration entries; the Message is :mod:`.anthropic_messages`'.
See docs/emulator.md (the caching rules it applies).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analyzer.tokens import BYTES_PER_TOKEN
from proxy.emulator.anthropic_cache import AnthropicUsage, CacheRuleError, apply_anthropic_cache
from proxy.emulator.config import EmulatorConfig
from proxy.emulator.provider_cache import ProviderCache

ASSUMPTIONS = """Assumptions (how the passes are built), one a line:
- The compaction pass runs the Anthropic cache rules on the prompt as sent; its output is ``prompt tokens // 50`` tokens (at least 1, at most the reply cap).
- The final pass runs them on tools → system (``cache_control`` kept) → one user message holding the summary.
- An edit type starting ``compact_`` is a compaction edit (later versions alike).
- A trigger value may be any positive integer; a trigger other than ``input_tokens`` with a positive integer ``value`` is a 400.
- ``pause_after_compaction`` and ``instructions`` are ignored; no ``compaction`` content block is added; the reply text is the usual one.
"""

#: Summary tokens = prompt tokens // SUMMARY_RATIO.
SUMMARY_RATIO = 50


@dataclass(frozen=True, slots=True)
class Compaction:
    """The two passes of a compacted request: ``compaction`` over the prompt as sent (its output
    ``summary_tokens``), ``message`` the final message's, over the compacted prompt."""

    compaction: AnthropicUsage
    summary_tokens: int
    message: AnthropicUsage


def trigger_tokens(body: dict[str, Any], default: int) -> int | None:
    """The input-token trigger of the request's compaction edit; None when it has none."""
    cm = body.get("context_management")
    edits = cm.get("edits") if isinstance(cm, dict) else None
    if not isinstance(edits, list):
        return None
    for i, edit in enumerate(edits):
        if not (
            isinstance(edit, dict)
            and isinstance(edit.get("type"), str)
            and edit["type"].startswith("compact_")
        ):
            continue
        trigger = edit.get("trigger")
        if trigger is None:
            return default
        value = trigger.get("value") if isinstance(trigger, dict) else None
        if (
            not isinstance(trigger, dict)
            or trigger.get("type") != "input_tokens"
            or not isinstance(value, int)
            or isinstance(value, bool)
            or value < 1
        ):
            raise CacheRuleError(
                f"context_management.edits.{i}.trigger: expected "
                '{"type": "input_tokens", "value": <positive integer>}'
            )
        return value
    return None


def compacted_body(body: dict[str, Any], summary_tokens: int) -> dict[str, Any]:
    """The prompt the final message pass reads: tools and system, then the summary."""
    summary = ("summary " * (summary_tokens * BYTES_PER_TOKEN // 8 + 1))[: summary_tokens * BYTES_PER_TOKEN]
    out = {k: body[k] for k in ("model", "tools", "system") if k in body}
    out["messages"] = [{"role": "user", "content": [{"type": "text", "text": summary}]}]
    return out


def maybe_compact(
    cache: ProviderCache,
    config: EmulatorConfig,
    key: bytes,
    route: str,
    body: dict[str, Any],
    trigger: int | None,
    first: AnthropicUsage,
) -> Compaction | None:
    """The compaction of a request (``trigger``: :func:`trigger_tokens`) whose pass over the prompt
    as sent gave ``first``; None when it asks for none or its prompt is under the trigger."""
    if trigger is None or first.total_prompt_tokens < trigger:
        return None
    summary = max(1, min(config.max_output_tokens, first.total_prompt_tokens // SUMMARY_RATIO))
    final = apply_anthropic_cache(cache, config, key, route, compacted_body(body, summary))
    return Compaction(first, summary, final)


def iteration(kind: str, u: AnthropicUsage, output: int) -> dict[str, Any]:
    """One ``usage.iterations`` entry (``BetaCompactionIterationUsage`` / ``BetaMessageIterationUsage``)."""
    return {
        "type": kind,
        "input_tokens": u.input_tokens,
        "output_tokens": output,
        "cache_read_input_tokens": u.cache_read_input_tokens,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": u.cache_creation_5m,
            "ephemeral_1h_input_tokens": u.cache_creation_1h,
        },
    }
