"""proxy.provider_diagnostics: Anthropic's own miss reason — asked for under safe/aggressive
(never under off), remembered per tenant by prefix chain, read for the money layer and for
the x-prefixgate-provider-miss-reason header, which the relay reads ahead of the head without
changing a byte the client gets. Against a mocked Anthropic upstream (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import gzip
import time

import httpx
import orjson
import pytest
from starlette.testclient import TestClient

from analyzer.pricing import PriceTable
from analyzer.usage import Usage
from proxy.accounting.money import Money
from proxy.accounting.records import RequestRecord
from proxy.app import create_app
from proxy.config import ProxyConfig
from proxy.exchange import Exchange
from proxy.provider_diagnostics import (
    HEADER,
    MAX_JSON_PEEK,
    MAX_SSE_PEEK,
    REWRITE_ID,
    UNKNOWN_SHAPE,
    Peek,
    Reason,
    ResponseMemory,
    header_value,
    read_reason,
    splice,
)
from tests.support.servers import serve

KEY = {"x-api-key": "sk-ant-provider-diagnostics", "anthropic-version": "2023-06-01"}
SYSTEM = "You are the ACME support assistant; answer briefly and cite the policy. " * 80
PATH = "/v1/messages"


def messages(system: str = SYSTEM, question: str = "hi", **extra) -> dict:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 16,
        "system": system,
        "messages": [{"role": "user", "content": question}],
        **extra,
    }


def miss(kind: str = "system_changed", tokens: int | None = 1200) -> dict:
    reason = {"type": kind, **({"cache_missed_input_tokens": tokens} if tokens is not None else {})}
    return {"cache_miss_reason": reason}


# -- reading the answer ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["model_changed", "system_changed", "tools_changed", "messages_changed"])
def test_every_type_with_tokens(kind):
    assert read_reason(miss(kind, 900)) == Reason(kind, 900)
    assert header_value(Reason(kind, 900)) == f"{kind}; tokens=900"


@pytest.mark.parametrize("kind", ["previous_message_not_found", "unavailable"])
def test_types_without_tokens(kind):
    assert read_reason(miss(kind, None)) == Reason(kind, None)
    assert header_value(read_reason(miss(kind, None))) == kind


@pytest.mark.parametrize(
    "diagnostics",
    [
        [],
        "system_changed",
        3,
        {},
        {"reason": "x"},
        {"cache_miss_reason": "system_changed"},
        {"cache_miss_reason": {"type": "prompt_rewritten", "cache_missed_input_tokens": 5}},
        {"cache_miss_reason": {"type": "system_changed"}},  # a listed type without its tokens
        {"cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": "12"}},
        {"cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": True}},
        {"cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": -1}},
    ],
)
def test_an_unknown_shape_is_flagged_never_raised(diagnostics):
    assert read_reason(diagnostics) == Reason(UNKNOWN_SHAPE)
    assert header_value(read_reason(diagnostics)) == UNKNOWN_SHAPE


def test_no_diagnostics_or_a_pending_one_is_no_reason():
    assert read_reason(None) is None
    assert read_reason({"cache_miss_reason": None}) is None  # no miss, or the comparison still pending
    assert header_value(None) is None


def _enriched(diagnostics, model: str = "claude-sonnet-4-5") -> RequestRecord:
    record = RequestRecord(
        "r",
        0.0,
        "t",
        "anthropic",
        PATH,
        model=model,
        status=200,
        analysed=True,
        usage=Usage(1300, 0, 0, 0, 5),
    )
    Money(PriceTable.load()).enrich(Exchange(record, diagnostics=diagnostics))
    return record


def test_the_money_layer_prices_the_providers_missed_tokens():
    record = _enriched(miss("system_changed", 1200))
    # claude-sonnet-4-5: $3.00 input, $0.30 cached read per 1M: 1,200 × 2.70 = 3,240 → $0.00324
    assert (record.provider_miss_reason, record.provider_missed_tokens) == ("system_changed", 1200)
    assert abs(record.provider_missed_usd - 0.00324) < 1e-12
    assert record.cost_usd is not None  # the request's own cost is untouched


def test_unpriced_tokenless_and_unknown_answers_carry_no_dollars():
    unpriced = _enriched(miss("tools_changed", 800), model="private-claude")
    assert (unpriced.provider_miss_reason, unpriced.provider_missed_tokens, unpriced.provider_missed_usd) == (
        "tools_changed",
        800,
        None,
    )
    gone = _enriched(miss("previous_message_not_found", None))
    assert (gone.provider_miss_reason, gone.provider_missed_tokens, gone.provider_missed_usd) == (
        "previous_message_not_found",
        None,
        None,
    )
    odd = _enriched({"cache_miss_reason": {"type": "brand_new_reason", "cache_missed_input_tokens": 10}})
    assert (odd.provider_miss_reason, odd.provider_missed_tokens, odd.provider_missed_usd) == (
        UNKNOWN_SHAPE,
        None,
        None,
    )
    assert odd.cost_usd is not None  # ignored for money: the row keeps its cost, flagged by the reason
    none = _enriched(None)
    assert (none.provider_miss_reason, none.provider_missed_tokens, none.provider_missed_usd) == (
        None,
        None,
        None,
    )


# -- the memory ------------------------------------------------------------------------------------


def test_the_most_recent_response_on_the_closest_prefix():
    memory = ResponseMemory()
    memory.remember("t", "anthropic", (b"a", b"b", b"c"), "msg_1")
    memory.remember("t", "anthropic", (b"a", b"x"), "msg_2")
    assert memory.closest("t", "anthropic", (b"a", b"b", b"c", b"d")) == "msg_1"  # deepest shared prefix
    assert memory.closest("t", "anthropic", (b"a", b"y")) == "msg_2"  # the most recent on the prefix a
    assert (
        memory.closest("t", "anthropic", (b"z",)) == "msg_2"
    )  # nothing shared: the latest, to name what changed
    assert memory.closest("t", "other", (b"z",)) is None  # another upstream's latest is not ours
    assert memory.closest("u", "anthropic", (b"a",)) is None  # never another tenant's


def test_the_memory_is_bounded():
    memory = ResponseMemory(per_tenant=4, max_tenants=2)
    memory.remember("t", "anthropic", tuple(bytes([i]) for i in range(10)), "msg_long")
    assert len(memory) == 4  # a long chain keeps its deepest hashes
    assert memory.closest("t", "anthropic", (bytes([9]),)) == "msg_long"
    memory.remember("u", "anthropic", (b"u",), "msg_u")
    memory.remember("v", "anthropic", (b"v",), "msg_v")
    assert memory.closest("t", "anthropic", (b"\x09",)) is None  # the least recently seen tenant went
    with pytest.raises(ValueError):
        ResponseMemory(per_tenant=0)


@pytest.mark.parametrize("raw", [b'{"model":"m"}', b'  {\n  "model": "m"\n}', b"{}", b"{ }"])
def test_splice_keeps_every_other_byte(raw):
    out = splice(raw, "msg_1")
    assert orjson.loads(out) == {**orjson.loads(raw), "diagnostics": {"previous_message_id": "msg_1"}}
    assert out.replace(b'"diagnostics":{"previous_message_id":"msg_1"}', b"").replace(b"{,", b"{") == raw
    assert orjson.loads(splice(raw, None))["diagnostics"] == {"previous_message_id": None}


# -- the read-ahead ---------------------------------------------------------------------------------


def test_peek_reads_a_json_answer_whole_and_gives_up_past_the_bound():
    doc = orjson.dumps({"id": "msg_1", "diagnostics": miss("system_changed", 77)})
    peek = Peek("application/json", None)
    for i in range(0, len(doc), 7):
        peek.feed(doc[i : i + 7])
    assert not peek.done
    peek.end()
    assert peek.reason == Reason("system_changed", 77)
    zipped = Peek("application/json", "gzip")
    zipped.feed(gzip.compress(doc))
    zipped.end()
    assert zipped.reason == Reason("system_changed", 77)
    big = Peek("application/json", None)
    big.feed(b"x" * (MAX_JSON_PEEK + 1))
    assert big.done and big.reason is None
    assert Peek("application/octet-stream", None).done and Peek("application/json", "br").done


def test_peek_stops_at_the_first_event_of_a_stream():
    start = {"type": "message_start", "message": {"id": "msg_2", "diagnostics": miss("tools_changed", 5)}}
    events = b"event: message_start\ndata: " + orjson.dumps(start) + b"\n\n" + b"event: ping\ndata: {}\n\n"
    peek = Peek("text/event-stream; charset=utf-8", None)
    peek.feed(events[:20])
    assert not peek.done
    peek.feed(events[20:])
    assert peek.done and peek.reason == Reason("tools_changed", 5)
    long = Peek("text/event-stream", None)
    long.feed(b": " + b"x" * MAX_SSE_PEEK)
    assert long.done and long.reason is None
    other = Peek("text/event-stream", None)
    other.feed(b"data: not json\n\n")
    assert other.done and other.reason is None


# -- through the proxy ----------------------------------------------------------------------------


class Anthropic:
    """Answers each Messages request with a new id, and ``answer`` as its diagnostics once the
    request named a previous message."""

    def __init__(self):
        self.bodies: list[bytes] = []
        self.stream_chunks: list[bytes] | None = None
        self.answer = miss("system_changed", 1500)
        self.gzip = False
        self.fail_after: int | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.content)
        body = orjson.loads(
            request.content.removeprefix(b"\xef\xbb\xbf")
        )  # a lenient upstream reads a BOM'd body too
        rid = f"msg_{len(self.bodies)}"
        named = isinstance(body.get("diagnostics"), dict) and body["diagnostics"].get("previous_message_id")
        usage = {
            "input_tokens": 1300,
            "output_tokens": 3,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
        if self.stream_chunks is not None:
            return httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                stream=Chunks(self.stream_chunks, self.fail_after),
            )
        doc = {
            "id": rid,
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "usage": usage,
        }
        if named or "diagnostics" in body:
            doc["diagnostics"] = self.answer if named else {"cache_miss_reason": None}
        raw = orjson.dumps(doc)
        if self.gzip:
            return httpx.Response(
                200,
                headers={"content-type": "application/json", "content-encoding": "gzip"},
                content=gzip.compress(raw),
            )
        return httpx.Response(200, headers={"content-type": "application/json"}, content=raw)


class Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes], fail_after: int | None = None):
        self.chunks, self.fail_after = chunks, fail_after

    async def __aiter__(self):
        for i, chunk in enumerate(self.chunks):
            if self.fail_after is not None and i == self.fail_after:
                raise httpx.ReadError("upstream went away")
            yield chunk


class Keep:
    def __init__(self):
        self.records = []

    def handle(self, record):
        self.records.append(record)

    async def aclose(self):
        return None


@pytest.fixture
def proxy(state_dir):
    def make(rewrite: str = "safe"):
        upstream, keep = Anthropic(), Keep()
        cfg = ProxyConfig(
            anthropic_base="http://anthropic.test", state_dir=state_dir, ledger=":memory:", rewrite=rewrite
        )
        client = TestClient(create_app(cfg, transport=httpx.MockTransport(upstream)))
        client.__enter__()
        client.app.state.gate.recorder.add_sink(keep)
        made.append(client)
        return client, upstream, keep

    made: list[TestClient] = []
    yield make
    for client in made:
        client.__exit__(None, None, None)


def test_safe_names_the_previous_answer_and_shows_the_providers_reason(proxy):
    client, upstream, keep = proxy("safe")
    first = client.post(PATH, json=messages(), headers=KEY)
    assert orjson.loads(upstream.bodies[0])["diagnostics"] == {
        "previous_message_id": None
    }  # opted in: nothing to name yet
    assert HEADER not in first.headers and REWRITE_ID in first.headers["x-prefixgate-rewrites"]
    second = client.post(PATH, json=messages(SYSTEM + " Be formal."), headers=KEY)
    assert orjson.loads(upstream.bodies[1])["diagnostics"] == {"previous_message_id": "msg_1"}
    assert second.headers[HEADER] == "system_changed; tokens=1500"
    assert second.json()["diagnostics"] == miss("system_changed", 1500)  # the answer as the upstream sent it
    record = keep.records[-1]
    assert (record.response_id, record.provider_miss_reason, record.provider_missed_tokens) == (
        "msg_2",
        "system_changed",
        1500,
    )
    assert abs(record.provider_missed_usd - 1500 * 2.7 / 1e6) < 1e-12


def test_the_closest_prefix_wins_over_the_latest(proxy):
    client, upstream, _ = proxy("safe")
    client.post(PATH, json=messages(question="conversation A"), headers=KEY)  # msg_1
    client.post(PATH, json=messages("Another assistant entirely. " * 60, "B"), headers=KEY)  # msg_2
    a2 = messages(question="conversation A")
    a2["messages"] += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    client.post(PATH, json=a2, headers=KEY)
    assert orjson.loads(upstream.bodies[2])["diagnostics"] == {"previous_message_id": "msg_1"}


def test_the_clients_own_diagnostics_are_never_touched_but_still_shown(proxy):
    client, upstream, keep = proxy("safe")
    sent = orjson.dumps(messages(diagnostics={"previous_message_id": "msg_client"}))
    reply = client.post(PATH, content=sent, headers={**KEY, "content-type": "application/json"})
    assert orjson.loads(upstream.bodies[0])["diagnostics"] == {"previous_message_id": "msg_client"}
    assert REWRITE_ID not in reply.headers.get("x-prefixgate-rewrites", "")
    assert reply.headers[HEADER] == "system_changed; tokens=1500"


def test_off_forwards_the_bytes_unchanged(proxy):
    client, upstream, keep = proxy("off")
    for question in ("one", "two"):
        sent = (
            b'{ "model": "claude-sonnet-4-5",  "max_tokens": 16, "system": "'
            + SYSTEM.encode()
            + b'", "messages": [{"role": "user", "content": "'
            + question.encode()
            + b'"}]}'
        )
        reply = client.post(PATH, content=sent, headers={**KEY, "content-type": "application/json"})
        assert upstream.bodies[-1] == sent and HEADER not in reply.headers
    assert keep.records[-1].provider_miss_reason is None


def test_a_gzip_answer_and_an_odd_shape_pass_byte_for_byte(proxy):
    client, upstream, keep = proxy("safe")
    client.post(PATH, json=messages(), headers=KEY)
    upstream.gzip = True
    upstream.answer = {"cache_miss_reason": {"type": "brand_new_reason"}}
    reply = client.post(PATH, json=messages(question="again"), headers={**KEY, "accept-encoding": "gzip"})
    assert reply.headers[HEADER] == UNKNOWN_SHAPE and reply.json()["diagnostics"] == upstream.answer
    assert (
        keep.records[-1].provider_miss_reason == UNKNOWN_SHAPE
        and keep.records[-1].provider_missed_usd is None
    )


def _stream(rid: str, diagnostics) -> list[bytes]:
    message = {
        "id": rid,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-sonnet-4-5",
        "usage": {"input_tokens": 1300, "output_tokens": 1},
        "diagnostics": diagnostics,
    }
    start = {"type": "message_start", "message": message}
    raw = (
        b"event: message_start\ndata: " + orjson.dumps(start) + b"\n\n"
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
    )
    return [raw[i : i + 50] for i in range(0, len(raw), 50)]  # the first event arrives over several chunks


def test_a_stream_is_read_ahead_to_its_first_event_and_relayed_byte_for_byte(proxy):
    client, upstream, keep = proxy("safe")
    client.post(PATH, json=messages(), headers=KEY)
    upstream.stream_chunks = _stream("msg_s", miss("messages_changed", 640))
    reply = client.post(PATH, json=messages(question="again", stream=True), headers=KEY)
    assert reply.headers[HEADER] == "messages_changed; tokens=640"
    assert reply.content == b"".join(upstream.stream_chunks)
    record = keep.records[-1]
    assert (record.response_id, record.provider_miss_reason, record.usage.output_tokens) == (
        "msg_s",
        "messages_changed",
        3,
    )


def test_a_read_that_breaks_off_during_the_read_ahead_fails_as_it_would_have(proxy):
    client, upstream, keep = proxy("safe")
    client.post(PATH, json=messages(), headers=KEY)
    upstream.stream_chunks, upstream.fail_after = _stream("msg_s", miss("messages_changed", 640)), 1
    with pytest.raises(RuntimeError, match="upstream failed mid-response"):  # the head went out, then the cut
        client.post(PATH, json=messages(question="again", stream=True), headers=KEY)
    record = keep.records[-1]
    assert record.error == "upstream_read_error" and record.status == 200


def test_only_anthropic_messages_are_asked(state_dir):
    upstream = Anthropic()
    cfg = ProxyConfig(
        openai_base="http://openai.test",
        anthropic_base="http://anthropic.test",
        state_dir=state_dir,
        ledger=":memory:",
        rewrite="aggressive",
    )
    with TestClient(create_app(cfg, transport=httpx.MockTransport(upstream))) as client:
        client.post(
            "/v1/chat/completions",
            json={"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": "Bearer sk-x"},
        )
        client.post("/v1/messages/count_tokens", json=messages(), headers=KEY)
        client.post(PATH, json=messages(), headers=KEY)
    assert ["diagnostics" in orjson.loads(b) for b in upstream.bodies] == [False, False, True]


# -- review: odd answers, bounds in bytes and in time ---------------------------------------------


@pytest.mark.parametrize("kind", [["system_changed"], {"name": "system_changed"}])
def test_an_unhashable_type_is_an_unknown_shape_not_a_crash(kind):
    assert read_reason({"cache_miss_reason": {"type": kind, "cache_missed_input_tokens": 5}}) == Reason(
        UNKNOWN_SHAPE
    )


def test_an_unhashable_type_in_the_answer_still_relays_the_200_byte_for_byte(proxy):
    client, upstream, keep = proxy("safe")
    client.post(PATH, json=messages(), headers=KEY)
    upstream.answer = {"cache_miss_reason": {"type": ["system_changed"], "cache_missed_input_tokens": 5}}
    reply = client.post(PATH, json=messages(question="again"), headers=KEY)
    assert reply.status_code == 200 and reply.json()["diagnostics"] == upstream.answer
    assert reply.headers[HEADER] == UNKNOWN_SHAPE
    assert keep.records[-1].status == 200 and keep.records[-1].provider_miss_reason == UNKNOWN_SHAPE


def test_peek_bounds_what_a_compressed_answer_decodes_to():
    bomb = gzip.compress(b" " * (MAX_JSON_PEEK + 1))  # a few KB on the wire, over the bound decoded
    peek = Peek("application/json", "gzip")
    peek.feed(bomb)
    assert peek.done and peek.reason is None
    stream = Peek("text/event-stream", "gzip")
    stream.feed(gzip.compress(b": " + b"x" * MAX_SSE_PEEK))
    assert stream.done and stream.reason is None


class Late(httpx.AsyncByteStream):
    """A stream whose first chunk comes ``delay_s`` late (``fail``: then the read breaks off)."""

    def __init__(self, chunks: list[bytes], delay_s: float, fail: bool = False):
        self.chunks, self.delay_s, self.fail = chunks, delay_s, fail

    async def __aiter__(self):
        await asyncio.sleep(self.delay_s)
        if self.fail:
            raise httpx.ReadError("upstream went away")
        for chunk in self.chunks:
            yield chunk


class LateAnthropic(Anthropic):
    """Anthropic whose streamed answers come as ``late`` (a :class:`Late` stream) once set."""

    late: Late | None = None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.late is None:
            return super().__call__(request)
        self.bodies.append(request.content)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=self.late)


def _late_reply(state_dir, late: Late):
    """(seconds to the head, the reply, its body bytes or the error, the records, the upstream)."""
    upstream, keep = LateAnthropic(), Keep()
    cfg = ProxyConfig(
        anthropic_base="http://anthropic.test", state_dir=state_dir, ledger=":memory:", rewrite="safe"
    )
    app = create_app(cfg, transport=httpx.MockTransport(upstream))
    with serve(app) as base:
        app.state.gate.recorder.add_sink(keep)
        httpx.post(f"{base}{PATH}", json=messages(), headers=KEY)  # msg_1: the next request names it
        upstream.late = late
        started = time.monotonic()
        with httpx.stream(
            "POST", f"{base}{PATH}", json=messages(question="again", stream=True), headers=KEY, timeout=10
        ) as reply:
            head_s = time.monotonic() - started
            try:
                body: bytes | Exception = b"".join(reply.iter_raw())
            except httpx.HTTPError as exc:
                body = exc
        deadline = time.monotonic() + 5
        while len(keep.records) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
    return head_s, reply, body, keep.records, upstream


def test_a_stream_whose_first_event_is_late_gets_its_head_without_waiting_for_it(state_dir):
    chunks = _stream("msg_s", miss("messages_changed", 640))
    head_s, reply, body, records, upstream = _late_reply(state_dir, Late(chunks, delay_s=3.0))
    assert head_s < 2.0, f"the head waited {head_s:.2f} s for the first event"
    assert reply.status_code == 200 and HEADER not in reply.headers  # too late for the head
    assert body == b"".join(chunks)  # every byte, in order
    assert orjson.loads(upstream.bodies[-1])["diagnostics"] == {"previous_message_id": "msg_1"}
    assert len(records) == 2
    assert (records[-1].status, records[-1].response_id, records[-1].provider_miss_reason) == (
        200,
        "msg_s",
        "messages_changed",
    )


def test_a_late_stream_that_breaks_off_is_one_record_and_a_cut_body(state_dir):
    head_s, reply, body, records, _ = _late_reply(state_dir, Late([], delay_s=1.5, fail=True))
    assert head_s < 1.4 and reply.status_code == 200  # the head went out; then the read broke off
    assert isinstance(body, httpx.HTTPError)  # a truncated body, never a complete-looking one
    assert len(records) == 2 and (records[-1].status, records[-1].error) == (200, "upstream_read_error")


def test_an_early_first_event_still_gives_the_header(state_dir):
    chunks = _stream("msg_s", miss("messages_changed", 640))
    head_s, reply, body, records, _ = _late_reply(state_dir, Late(chunks, delay_s=0.05))
    assert reply.headers[HEADER] == "messages_changed; tokens=640" and body == b"".join(chunks)


@pytest.mark.parametrize(
    "read_s", [0.2, 1.0]
)  # before the head went out; after it, while the late read is under way
def test_a_client_leaving_during_the_read_ahead_is_one_499_record(state_dir, read_s):
    upstream, keep = LateAnthropic(), Keep()
    cfg = ProxyConfig(
        anthropic_base="http://anthropic.test", state_dir=state_dir, ledger=":memory:", rewrite="safe"
    )
    app = create_app(cfg, transport=httpx.MockTransport(upstream))
    with serve(app) as base:
        app.state.gate.recorder.add_sink(keep)
        httpx.post(f"{base}{PATH}", json=messages(), headers=KEY)
        upstream.late = Late(_stream("msg_s", miss()), delay_s=3.0)
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                f"{base}{PATH}",
                json=messages(question="again", stream=True),
                headers=KEY,
                timeout=httpx.Timeout(5, read=read_s),
            )
        deadline = time.monotonic() + 5
        while len(keep.records) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.2)
    assert [r.status for r in keep.records] == [200, 499] and keep.records[-1].error == "client_disconnected"


def test_odd_but_valid_bodies_keep_every_byte_but_the_spliced_field(proxy):
    client, upstream, _ = proxy("safe")
    headers = {**KEY, "content-type": "application/json"}
    plain = orjson.dumps(
        messages("Be brief.")
    )  # too short for a breakpoint: the safe rewrite leaves the bytes alone
    bom = b"\xef\xbb\xbf" + plain  # not JSON to a strict parser: forwarded as sent, nothing asked
    client.post(PATH, content=bom, headers=headers)
    assert upstream.bodies[-1] == bom
    spaced = b" \r\n\t" + plain
    client.post(PATH, content=spaced, headers=headers)
    assert upstream.bodies[-1].startswith(
        b' \r\n\t{"diagnostics":{"previous_message_id":'
    ) and upstream.bodies[-1].endswith(plain[1:])
    doubled = (
        plain[:-1] + b',"diagnostics":{"previous_message_id":"msg_a"},"diagnostics":null}'
    )  # the client's own, twice
    client.post(PATH, content=doubled, headers=headers)
    assert upstream.bodies[-1] == doubled


def test_a_body_the_rewrite_skipped_as_an_unknown_shape_goes_untouched(proxy):
    client, upstream, _ = proxy("safe")
    sent = b'{"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": {"role": "user"}}'  # JSON, but not a Messages body
    reply = client.post(PATH, content=sent, headers={**KEY, "content-type": "application/json"})
    assert upstream.bodies[-1] == sent
    assert reply.headers["x-prefixgate-rewrites"] == "skipped-unknown-shape"
