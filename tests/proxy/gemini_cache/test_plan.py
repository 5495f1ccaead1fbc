"""Where a Gemini body may be cut for an explicit cache, and the two bodies of a cut:
the create body holds exactly the head and the leading contents, and the cache's parts
followed by the rewritten body's are the original body again."""

from __future__ import annotations

import orjson

from analyzer.prefix import chain
from analyzer.segments import gemini_segments
from proxy.gemini_cache.plan import create_body, cuts, eligible, rewritten_body

SYSTEM = {"parts": [{"text": "policy " * 100}]}


def body(*texts: str, system=SYSTEM, **extra) -> dict:
    roles = ["user", "model"]
    out = {"contents": [{"role": roles[i % 2], "parts": [{"text": t}]} for i, t in enumerate(texts)], **extra}
    if system is not None:
        out["systemInstruction"] = system
    return out


def cuts_of(b: dict, tenant: str = "t1"):
    segs = gemini_segments(b)
    return cuts(tenant, b, segs, chain(segs, b"root"))


def test_cuts_are_at_content_boundaries_longest_first():
    found = cuts_of(body("doc", "ok", "question"))
    assert [(c.n_contents, c.n_segments) for c in found] == [(2, 3), (1, 2), (0, 1)]
    assert found[0].tokens > found[1].tokens > 0
    # no head: no cut before the first content
    assert [c.n_contents for c in cuts_of(body("doc", "ok", "q", system=None))] == [2, 1]
    assert cuts_of(body("only", system=None)) == []


def test_digests_pin_tenant_tool_config_and_content():
    a, b = cuts_of(body("doc", "ok", "q1")), cuts_of(body("doc", "ok", "q2"))
    assert [c.digest for c in a] == [c.digest for c in b]  # the question is never in a cut
    assert cuts_of(body("doc", "ok", "q1"), tenant="t2")[0].digest != a[0].digest
    assert (
        cuts_of(body("doc", "ok", "q1", toolConfig={"functionCallingConfig": {"mode": "ANY"}}))[0].digest
        != a[0].digest
    )
    assert cuts_of(body("DOC", "ok", "q1"))[0].digest != a[0].digest
    assert cuts_of(body("doc", "ok", "q1", system={"parts": [{"text": "other"}]}))[1].digest != a[1].digest


def test_not_eligible():
    assert not eligible(body("a", "b", cachedContent="cachedContents/x")) and not eligible(
        {"contents": "text"}
    )
    assert not eligible([]) and not eligible({"contents": []}) and eligible(body("a"))
    assert not eligible(body("a", "b", system_instruction=None))  # spelled both ways: never guessed
    assert cuts_of(body("a", "b", cachedContent="cachedContents/x")) == []


def test_create_and_rewritten_bodies_rebuild_the_request():
    tools = [{"functionDeclarations": [{"name": "f"}]}]
    original = body(
        "doc",
        "ok",
        "question",
        tools=tools,
        toolConfig={"functionCallingConfig": {"mode": "AUTO"}},
        generationConfig={"maxOutputTokens": 5},
    )
    cut = cuts_of(original)[0]
    created = orjson.loads(create_body(original, cut, "gemini-2.5-flash", 300))
    assert created["model"] == "models/gemini-2.5-flash" and created["ttl"] == "300s"
    assert (
        created["systemInstruction"] == SYSTEM
        and created["tools"] == tools
        and created["contents"] == original["contents"][:2]
    )
    sent = orjson.loads(rewritten_body(original, cut, "cachedContents/abc"))
    assert sent == {
        "cachedContent": "cachedContents/abc",
        "generationConfig": {"maxOutputTokens": 5},
        "contents": original["contents"][2:],
    }
    # the cache's parts, then the request's: the original model input
    rebuilt = {k: v for k, v in created.items() if k in ("systemInstruction", "tools", "toolConfig")}
    rebuilt.update({k: v for k, v in sent.items() if k != "cachedContent"})
    rebuilt["contents"] = created["contents"] + sent["contents"]
    assert rebuilt == original
    # snake_case heads are moved too, and a cut after no contents keeps every content
    snake = {"system_instruction": SYSTEM, "contents": [{"role": "user", "parts": [{"text": "q"}]}]}
    zero = cuts_of(snake)[0]
    assert zero.n_contents == 0 and orjson.loads(rewritten_body(snake, zero, "cachedContents/z")) == {
        "cachedContent": "cachedContents/z",
        "contents": snake["contents"],
    }
    assert "contents" not in orjson.loads(create_body(snake, zero, "models/gemini-2.5-pro", 600))


def test_digests_pin_every_byte_the_cache_would_hold():
    """Equal digests only for the very same cached JSON: what the segments do not see (an empty
    content's place, tools in a shape they skip, the system instruction's role) tells cuts apart,
    so a request is never rewritten onto a cache holding other input."""
    x, y, q = ({"role": "user", "parts": [{"text": t}]} for t in ("doc", "more", "q"))
    empty = {"role": "model", "parts": []}
    a = {"systemInstruction": SYSTEM, "contents": [x, empty, y, q]}
    b = {"systemInstruction": SYSTEM, "contents": [empty, x, y, q]}
    assert {c.digest for c in cuts_of(a) if c.n_contents == 3}.isdisjoint(
        c.digest for c in cuts_of(b) if c.n_contents == 3
    )
    tools_f = body("doc", "q", tools={"functionDeclarations": [{"name": "f"}]})
    tools_g = body("doc", "q", tools={"functionDeclarations": [{"name": "g"}]})
    assert cuts_of(tools_f)[0].digest != cuts_of(tools_g)[0].digest
    assert (
        cuts_of(body("doc", "q", system={"role": "user", **SYSTEM}))[0].digest
        != cuts_of(body("doc", "q"))[0].digest
    )
    # the scope (tenant, upstream, model) is part of every digest
    assert (
        cuts_of(body("doc", "q"), tenant="t1\x00up1\x00m")[0].digest
        != cuts_of(body("doc", "q"), tenant="t1\x00up2\x00m")[0].digest
    )
