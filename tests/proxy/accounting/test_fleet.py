"""The fleet totals' flusher and reader against a real Redis (own key prefix), and a closed port."""

from __future__ import annotations

import asyncio
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from analyzer.usage import Usage
from proxy.accounting.counters import COUNTERS
from proxy.accounting.fleet import Fleet
from proxy.accounting.fleet_redis import FleetRedis, to_ints
from proxy.accounting.metrics import Metrics
from proxy.accounting.records import RequestRecord
from proxy.accounting.stats import Stats
from tests.support.request_records import records
from tests.support.servers import free_port

SHOWN = [c.name for c in COUNTERS if c.shown]


def fleet_on(url: str, prefix: str, **kw) -> Fleet:
    return Fleet(FleetRedis(f"{url}?key_prefix={prefix}"), **kw)


def closed_port_url(prefix: str) -> str:
    return f"redis://127.0.0.1:{free_port()}/0?key_prefix={prefix}"


def assert_same_counters(fleet_json: dict, stats_json: dict) -> None:
    for name in SHOWN:
        want, got = stats_json[name], fleet_json[name]
        if isinstance(want, float):
            assert got == pytest.approx(want, abs=2e-9), name
        else:
            assert got == want, name


def test_a_flush_sums_records_like_stats_in_one_batch(redis_url):
    url, prefix = redis_url
    recs = records()
    stats = Stats()

    async def scenario():
        fleet = fleet_on(url, prefix)
        for r in recs:
            stats.handle(r)
            fleet.handle(r)  # no I/O here: the loop (started on this running loop) flushes later
        assert fleet.pending_requests == len(recs)
        assert await fleet.flush() and fleet.flushed == 1 and fleet.pending_requests == 0
        view = await fleet.view()
        await fleet.aclose()
        return view

    view = asyncio.run(scenario())
    want = stats.to_json()
    assert view["available"] is True and view["error"] is None and view["as_of"] is not None
    assert_same_counters(view, want)
    assert set(view["providers"]) == set(want["providers"])
    for name, row in want["providers"].items():
        assert_same_counters(view["providers"][name], row)
    assert [(m["provider"], m["model"], m["requests"]) for m in view["models"]] == [
        (m["provider"], m["model"], m["requests"]) for m in want["models"]
    ]
    assert view["flush"]["pending_requests"] == 0 and view["flush"]["failures"] == 0


def test_two_replicas_add_up_and_money_stays_exact(redis_url):
    url, prefix = redis_url

    def rec(i: int) -> RequestRecord:
        return RequestRecord(
            f"x{i}",
            time.time(),
            "t",
            "openai",
            "/v1/chat/completions",
            model="m",
            status=200,
            analysed=True,
            usage=Usage(10, 0, 0, 0, 1),
            cost_usd=0.1,
            saved_usd=0.2,
            missed_usd=0.0,
        )

    async def scenario():
        a, b = fleet_on(url, prefix), fleet_on(url, prefix, read_cache_s=0.0)
        for i in range(3):
            a.handle(rec(i))
            b.handle(rec(10 + i))
        assert await a.flush() and await b.flush()
        view = await b.view()
        hours, error, _ = await b.hours()
        await a.aclose()
        await b.aclose()
        return view, hours, error

    view, hours, error = asyncio.run(scenario())
    assert view["requests"] == 6 and view["output_tokens"] == 6
    assert view["cost_usd"] == 0.6 and view["saved_usd"] == 1.2  # integer nano-USD: no 0.6000000000000001
    assert error is None and sum(r[0] for rows in hours.values() for r in rows.values()) == 6


def test_a_failed_flush_keeps_the_batch_and_a_retry_counts_once(redis_url):
    url, prefix = redis_url
    recs = records()

    async def scenario():
        fleet = Fleet(FleetRedis(closed_port_url(prefix)), deadline_s=2.0)
        for r in recs[:5]:
            fleet.handle(r)
        assert not await fleet.flush()  # connection refused: kept
        for r in recs[5:]:
            fleet.handle(r)  # later records wait in the next batch
        assert fleet.failures == 1 and fleet.last_error and fleet.pending_requests == len(recs)
        down = await fleet.view()  # Redis down: said, not raised
        dead, fleet.redis = fleet.redis, FleetRedis(f"{url}?key_prefix={prefix}")  # Redis "comes back"
        await dead.aclose()
        seq, batch = fleet.batch
        assert await fleet.flush() and fleet.batch is None  # the kept batch, same number
        assert (
            await fleet.redis.write(fleet.replica, seq, batch) == -1
        )  # a resend after a lost reply: no double count
        assert await fleet.flush() and fleet.pending_requests == 0  # then the records that waited
        fleet._totals.ttl_s = 0.0
        up = await fleet.view()
        await fleet.aclose()
        return down, up

    down, up = asyncio.run(scenario())
    assert down["available"] is False and down["error"] and down["as_of"] is None and "requests" not in down
    assert down["flush"]["pending_requests"] == len(recs) and down["flush"]["last_error"]
    assert up["available"] is True and up["requests"] == len(recs)


def test_redis_down_after_a_read_keeps_the_last_values(redis_url):
    url, prefix = redis_url

    async def scenario():
        fleet = fleet_on(url, prefix, read_cache_s=0.0)
        fleet.handle(records()[0])
        await fleet.flush()
        before = await fleet.view()
        live, fleet.redis = fleet.redis, FleetRedis(closed_port_url(prefix))
        after = await fleet.view()
        await live.aclose()
        await fleet.aclose()
        return before, after

    before, after = asyncio.run(scenario())
    assert before["available"] and before["requests"] == 1
    assert after["available"] is False and after["requests"] == 1 and after["as_of"] == before["as_of"]


def test_pending_keys_are_capped_models_fold_then_drops_are_counted(redis_url):
    url, prefix = redis_url

    def rec(provider: str, model: str) -> RequestRecord:
        return RequestRecord("r", time.time(), "t", provider, "/v1/x", model=model, status=200)

    async def scenario():
        fleet = fleet_on(url, prefix, max_pending=2)
        for provider, model in [
            ("openai", "a"),
            ("openai", "b"),
            ("openai", "c"),
            ("openai", "d"),
            ("anthropic", "e"),
        ]:
            fleet.handle(rec(provider, model))
        state = dict(fleet.pending)
        await fleet.aclose()  # the final flush
        return state, fleet

    state, fleet = asyncio.run(scenario())
    assert [k[:2] for k in state] == [
        ("openai", "a"),
        ("openai", "b"),
    ]  # "c" and "d": no room for an "other" row either
    assert fleet.dropped == 3 and fleet.pending_requests == 0


def test_the_loop_flushes_on_its_own_and_close_flushes_the_rest(redis_url):
    url, prefix = redis_url

    async def scenario():
        fleet = fleet_on(url, prefix, interval_s=0.01, read_cache_s=0.0)
        fleet.start()
        fleet.handle(records()[0])
        for _ in range(500):  # the loop's next tick; a wait, not a timing assertion
            if fleet.flushed:
                break
            await asyncio.sleep(0.01)
        flushed_by_loop = fleet.flushed
        fleet.handle(records()[1])
        fleet.interval_s = 3600.0  # no more ticks: only aclose can send this one
        await fleet.aclose()
        reader = fleet_on(url, prefix)
        view = await reader.view()
        await reader.aclose()
        return flushed_by_loop, view

    flushed_by_loop, view = asyncio.run(scenario())
    assert flushed_by_loop >= 1 and view["requests"] == 2


def test_metrics_export_the_fleet_series(redis_url):
    url, prefix = redis_url
    recs = records()

    async def scenario():
        fleet = fleet_on(url, prefix)
        for r in recs:
            fleet.handle(r)
        await fleet.flush()
        metrics = Metrics()
        metrics.attach_fleet(fleet)
        await metrics.refresh()
        text = metrics.render().decode()
        await fleet.aclose()
        return text

    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for fam in text_string_to_metric_families(asyncio.run(scenario()))
        for s in fam.samples
    }
    assert (
        samples[("prefixgate_fleet_requests_total", (("model", "gpt-4o-mini"), ("provider", "openai")))] == 12
    )
    assert samples[("prefixgate_fleet_requests_total", (("model", ""), ("provider", "openai")))] == 1
    assert samples[
        (
            "prefixgate_fleet_tokens_total",
            (("kind", "cache_read"), ("model", "gpt-4o-mini"), ("provider", "openai")),
        )
    ] == sum(r.usage.cached_tokens for r in recs[:12])
    assert samples[("prefixgate_fleet_available", ())] == 1
    assert (
        "prefixgate_fleet_cost_usd_total",
        (("model", "private"), ("provider", "anthropic")),
    ) not in samples  # unpriced: never $0


def test_usd_goes_to_redis_as_nano_dollars():
    values = [0] * len(COUNTERS)
    values[[c.name for c in COUNTERS].index("cost_usd")] = 0.000123456789
    assert to_ints(values)[[c.name for c in COUNTERS].index("cost_usd")] == 123457  # round(123456.789)


def test_a_dashboard_range_takes_every_hour_it_touches_and_fills_empty_ones():
    from proxy.reporting.dashboard import fleet_range

    now_hour = 500_000
    one = [0] * len(COUNTERS)
    one[[c.name for c in COUNTERS].index("requests")] = 1
    hours = {
        now_hour - 30: {("openai", "m"): one},
        now_hour - 2: {("openai", "m"): one},
        now_hour: {("openai", "m"): one},
    }
    now = now_hour * 3600 + 1800
    day = fleet_range(hours, now - 24 * 3600, now=now)
    assert (
        day["requests"] == 2 and len(day["series"]["points"]) == 25
    )  # 24 h back from mid-hour: 25 hour buckets
    assert [p["requests"] for p in day["series"]["points"]][-3:] == [1, 0, 1]
    assert fleet_range(hours, None, now=now)["requests"] == 3
    assert fleet_range({}, now - 3600, now=now)["requests"] == 0


def test_a_range_reads_only_its_hours_in_small_chunks(redis_url):
    """A 24 h view of a month of history read all 769 hour hashes in one script: with 20 models
    that blocked Redis (every replica's look-ups) ~150 ms and its reply outgrew the deadline."""
    from proxy.accounting.fleet_redis import READ_CHUNK

    url, prefix = redis_url
    now = time.time()

    def rec(ts: float) -> RequestRecord:
        return RequestRecord("r", ts, "t", "openai", "/v1/x", model="m", status=200)

    async def scenario():
        fleet = fleet_on(url, prefix, read_cache_s=0.0)
        fleet.handle(rec(now - 10 * 86400))
        fleet.handle(rec(now))
        assert await fleet.flush()
        calls: list[int] = []
        script = fleet.redis._read

        async def spy(keys, args=None):
            calls.append(len(keys))
            return await script(keys=keys)

        fleet.redis._read = spy
        day, error, _ = await fleet.hours(now - 86400)
        day_calls = list(calls)
        calls.clear()
        month, _, _ = await fleet.hours(None)
        await fleet.aclose()
        return day, error, day_calls, month, calls

    day, error, day_calls, month, month_calls = asyncio.run(scenario())
    assert (
        error is None and list(day) == [int(now // 3600)] and sum(day_calls) == 26
    )  # 24 h from mid-hour + the next
    assert sorted(month) == [int((now - 10 * 86400) // 3600), int(now // 3600)]
    assert max(month_calls) <= READ_CHUNK and sum(month_calls) == 32 * 24 + 1


def test_the_fleet_series_and_models_stay_capped_across_replicas(redis_url):
    """Each replica caps its own model names, but Redis holds every replica's (and every
    restarted process's): 250 names from 3 replicas were 250 label sets on every replica."""
    url, prefix = redis_url

    def rec(model: str) -> RequestRecord:
        return RequestRecord(
            "r", time.time(), "t", "openai", "/v1/x", model=model, status=200, usage=Usage(10, 0, 0, 0, 1)
        )

    async def scenario():
        replicas = [fleet_on(url, prefix, max_models=100) for _ in range(3)]
        for r, fleet in enumerate(replicas):
            for i in range(r * 80, r * 80 + 90):  # 90 names each, 250 distinct in all
                fleet.handle(rec(f"m{i:03d}"))
            assert await fleet.flush()
        metrics = Metrics(max_models=50)
        metrics.attach_fleet(replicas[0])
        await metrics.refresh()
        view = await replicas[0].view()
        for fleet in replicas:
            await fleet.aclose()
        return metrics.render().decode(), view

    text, view = asyncio.run(scenario())
    samples = [
        s
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == "prefixgate_fleet_requests_total"
    ]
    assert len(samples) <= 51 and sum(s.value for s in samples) == 270
    assert any(s.labels["model"] == "other" for s in samples)
    assert view["requests"] == 270 and 50 < len(view["models"]) <= 101


def test_the_flush_loop_outlives_an_unexpected_error(redis_url):
    url, prefix = redis_url

    async def scenario():
        fleet = fleet_on(url, prefix, interval_s=0.01, retry_s=0.01)
        real, calls = fleet.flush, []

        async def flaky():
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("not expected")  # a bug, not Redis: the loop must go on
            return await real()

        fleet.flush = flaky
        fleet.handle(records()[0])
        for _ in range(500):  # the loop's next ticks; a wait, not a timing assertion
            if fleet.flushed:
                break
            await asyncio.sleep(0.01)
        flushed = fleet.flushed
        await fleet.aclose()
        return flushed

    assert asyncio.run(scenario()) == 1


def test_a_record_after_the_final_flush_is_counted_as_dropped(redis_url):
    url, prefix = redis_url

    async def scenario():
        fleet = fleet_on(url, prefix)
        fleet.handle(records()[0])
        await fleet.aclose()
        fleet.handle(records()[1])  # a request uvicorn cancelled at shutdown, recorded late
        return fleet

    fleet = asyncio.run(scenario())
    assert fleet.pending_requests == 0 and fleet.dropped == 1 and fleet._task is None


def test_each_process_number_expires_with_the_hours(redis_url):
    """A replica id is per process: one field per process ever started, in one hash every write
    re-armed, grew without end. Each process's number is its own key, expiring like the hours."""
    import redis as sync_redis

    url, prefix = redis_url

    async def scenario():
        ids = []
        for _ in range(2):  # a replica restarted: a new process, a new id
            fleet = fleet_on(url, prefix)
            fleet.handle(records()[0])
            assert await fleet.flush()
            ids.append(fleet.replica)
            await fleet.aclose()
        return ids

    ids = asyncio.run(scenario())
    client = sync_redis.Redis.from_url(url)
    try:
        for replica in ids:
            ttl = client.ttl(f"{prefix}{{fleet}}:applied:{replica}")
            assert 0 < ttl <= 32 * 24 * 3600
        assert not client.exists(f"{prefix}{{fleet}}:applied")
    finally:
        client.close()


def test_a_record_during_the_final_flush_joins_it(redis_url):
    url, prefix = redis_url

    async def scenario():
        fleet = fleet_on(url, prefix)
        fleet.handle(records()[0])
        write = fleet.redis.write

        async def write_while_a_request_ends(*args):
            if not fleet.flushed:
                fleet.handle(records()[1])  # a request that ends while aclose flushes
            return await write(*args)

        fleet.redis.write = write_while_a_request_ends
        await fleet.aclose()
        reader = fleet_on(url, prefix)
        view = await reader.view()
        await reader.aclose()
        return fleet, view

    fleet, view = asyncio.run(scenario())
    assert view["requests"] == 2 and fleet.dropped == 0 and fleet.pending_requests == 0


def test_a_hung_redis_costs_a_range_read_one_deadline(redis_url):
    """A Redis that accepts and never answers: a range read gives up after one chunk's deadline
    (not the whole range's), says so, and never raises."""
    _, prefix = redis_url

    async def scenario():
        silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = silent.sockets[0].getsockname()[1]
        fleet = Fleet(
            FleetRedis(f"redis://127.0.0.1:{port}/0?key_prefix={prefix}", timeout_s=60.0), deadline_s=0.2
        )
        try:
            # the guard only bounds a wrong answer's cost (the whole range's 10 s); it asserts no speed
            hours, error, as_of = await asyncio.wait_for(fleet.hours(time.time() - 30 * 86400), 5.0)
            view = await asyncio.wait_for(fleet.view(), 5.0)
        finally:
            silent.close()
            await fleet.aclose()
        return hours, error, as_of, view

    hours, error, as_of, view = asyncio.run(scenario())
    assert hours is None and error == "TimeoutError" and as_of is None
    assert view["available"] is False and view["error"] == "TimeoutError"


def test_sums_past_2_pow_53_stay_exact_through_the_lua_script(redis_url):
    """Lua 5.1 numbers are doubles: increments go to HINCRBY as strings, never through one."""
    url, prefix = redis_url
    big = 2**53 + 1  # a double would store 2**53

    async def scenario():
        fleet = fleet_on(url, prefix)
        row = [0] * len(COUNTERS)
        row[[c.name for c in COUNTERS].index("output_tokens")] = big
        row[[c.name for c in COUNTERS].index("requests")] = 1
        assert (
            await fleet.redis.write(fleet.replica, 1, {("openai", "m", int(time.time() // 3600)): row}) == 0
        )
        assert (
            await fleet.redis.write(fleet.replica, 2, {("openai", "m", int(time.time() // 3600)): row}) == 0
        )
        rows = await fleet.redis.read_all()
        await fleet.aclose()
        return rows

    rows = asyncio.run(scenario())
    assert rows[("openai", "m")][[c.name for c in COUNTERS].index("output_tokens")] == 2 * big
