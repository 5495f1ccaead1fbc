"""Request records for the accounting tests, and a ledger written from them.

:func:`records` is a day's traffic as the money layer leaves it (every 10 minutes from
:data:`T0`: costs with their breakdowns, some cached, some rewritten, one unpriced model and one
upstream error); :func:`variety` covers every branch a counter has; :func:`write` puts records in
a ledger file the way the proxy does (each with a prefix chain).
"""

from __future__ import annotations

import asyncio
import json

from analyzer.cost import Breakdown, cost_of
from analyzer.pricing import PriceTable
from analyzer.usage import Usage
from proxy.accounting.ledger import Ledger
from proxy.accounting.records import RequestRecord

T0 = 1_700_000_000.0  # 2023-11-14
PRICES = PriceTable.load()


def records() -> list[RequestRecord]:
    """Records as the money layer leaves them: cost with its breakdown, some rewritten."""
    out = []
    for i in range(12):
        cached = 1024 if i % 3 else 0
        cost = 0.001 - cached * 1e-7
        out.append(
            RequestRecord(
                f"r{i}",
                T0 + i * 600,
                "t",
                "openai",
                "/v1/chat/completions",
                model="gpt-4o-mini",
                status=200,
                analysed=True,
                usage=Usage(2000, cached, 0, 0, 100),
                prefix_segments=1 if cached else 0,
                prefix_bytes=4400,
                total_segments=2,
                total_bytes=4600,
                cost_usd=cost,
                cost_breakdown=Breakdown(cost - 0.0002 - cached * 5e-8, cached * 5e-8, 0.0, 0.0002),
                rewrites=["add-breakpoints", "cap-breakpoints"]
                if i == 5
                else ["add-breakpoints"]
                if i % 4 == 1
                else [],
                saved_usd=cached * 1e-7,
                missed_usd=0.0 if cached else 0.00007,
                miss_reason=None if cached else "volatile-time; path=messages[0]; offset=9",
                body=json.dumps(
                    {
                        "model": "gpt-4o-mini",
                        "messages": [
                            {"role": "system", "content": "You are terse."},
                            {"role": "user", "content": f"q{i}"},
                        ],
                    }
                ).encode(),
            )
        )
    out.append(
        RequestRecord(
            "u",
            T0 + 30,
            "t",
            "anthropic",
            "/v1/messages",
            model="private",
            status=200,
            analysed=True,
            usage=Usage(50, 0, 0, 0, 5),
        )
    )
    out.append(
        RequestRecord(
            "e",
            T0 + 40,
            "t",
            "openai",
            "/v1/chat/completions",
            status=502,
            analysed=False,
            error="upstream_unreachable",
        )
    )
    return out


def write(path: str, recs, log_bodies=False) -> None:
    async def main():
        ledger = Ledger(path, log_bodies=log_bodies)
        for r in recs:
            r.chain = ["aa" * 8, "bb" * 8] if r.prefix_segments else ["cc" * 8]
            ledger.handle(r)
        await ledger.aclose()

    asyncio.run(main())


def variety() -> list[RequestRecord]:
    """Records covering every branch a counter has: no usage, unpriced, clamped usage, an
    unknown prefix, errors with and without a status, rewrites, unanalysed bodies."""
    out = []
    cases = [
        {"model": "gpt-4o-mini", "usage": Usage(2000, 1024, 0, 0, 50), "prefix_segments": 2},
        {
            "model": "claude-sonnet-4-5",
            "usage": Usage(12000, 0, 10000, 4000, 9),
            "rewrites": ["add-breakpoints"],
        },
        {
            "model": "claude-sonnet-4-5",
            "usage": Usage(100, 60, 60, 0, 1),
            "prefix_segments": None,
            "prefix_bytes": None,
        },  # uncached clamps at 0
        {
            "model": "private",
            "usage": Usage(10, 0, 0, 0, 1),
            "rewrites": ["add-breakpoints", "cap-breakpoints"],
        },
        {"model": "gpt-4o", "usage": Usage(5, 0, 0, 0, 10**9, flags=("usage.completion_tokens:too_large",))},
        {"model": None, "usage": None, "status": 502, "error": "upstream_unreachable", "analysed": False},
        {"model": "gpt-4o", "usage": None, "status": 0, "error": "client_disconnected"},
        {"model": "gpt-4o", "usage": Usage(0, 0, 0, 0, 0), "status": 429, "rewrites": ["skipped-error"]},
        {"model": "gpt-5.6-terra", "usage": Usage(6000, 2048, 3000, 0, 400)},  # OpenAI writes, billed
        {"model": "gpt-6.2-sol", "usage": Usage(6000, 0, 3000, 0, 4, cache_write_12h_tokens=2000)},
        {
            "model": "gpt-5.5",
            "usage": Usage(3000, 0, 2000, 0, 5),
            "drift": ["cache_write_tokens:not_billed_by_price_row"],
        },
        {
            "model": "claude-sonnet-4-5",
            "usage": Usage(10, 0, 0, 0, 1, drift=("iterations[x]:unknown_type",)),
            "drift": ["iterations[x]:unknown_type"],
        },
        {
            "model": "gpt-5.6-terra",
            "usage": Usage(6000, 0, 3000, 0, 4),
            "flags": ["cache_write_tokens:ttl_split_unknown"],
        },
    ]
    for i, kw in enumerate(cases):
        kw.setdefault("status", 200)
        kw.setdefault("analysed", True)
        r = RequestRecord(
            f"r{i}",
            1_700_000_000.0 + i,
            "t",
            "anthropic" if "claude" in (kw.get("model") or "") else "openai",
            "/v1/x",
            **kw,
        )
        cost = cost_of(r.usage, PRICES.lookup(r.model)) if not r.flags else cost_of(None, None)
        r.cost_usd, r.saved_usd, r.cost_breakdown = cost.cost_usd, cost.saved_usd, cost.parts
        r.missed_usd = None if not cost.priced or r.prefix_segments is None else 0.000125
        out.append(r)
    return out
