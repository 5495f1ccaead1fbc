"""The route bench's workload: deterministic, distinct apps, every request once, salted per run."""

from __future__ import annotations

import pytest

from proxy.bench.route_workload import RouteWorkload, chat_body, schedule, system_prompts


def test_prompts_are_distinct_sized_and_reproducible():
    w = RouteWorkload(apps=5, system_tokens=500)
    prompts = system_prompts(w, "run a")
    assert len(set(prompts)) == 5
    assert all(480 * 4 <= len(p) <= 520 * 4 for p in prompts)
    assert system_prompts(w, "run a") == prompts
    assert all(a != b for a, b in zip(system_prompts(w, "run b"), prompts))


def test_the_schedule_holds_every_request_once_in_a_seeded_order():
    w = RouteWorkload(apps=4, requests_per_app=6)
    order = schedule(w)
    assert sorted(order) == [(a, i) for a in range(4) for i in range(6)]
    assert order != sorted(order) and schedule(w) == order
    assert schedule(RouteWorkload(apps=4, requests_per_app=6, seed=8)) != order


def test_bodies_share_the_system_prompt_and_ask_for_usage():
    w = RouteWorkload(apps=2, system_tokens=100)
    systems = system_prompts(w, "s")
    one, two = chat_body(w, systems, 1, 0, "m"), chat_body(w, systems, 1, 1, "m")
    assert one["messages"][0] == two["messages"][0] and one["messages"][1] != two["messages"][1]
    assert one["stream_options"] == {"include_usage": True} and one["max_tokens"] == w.max_tokens


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="--apps must be an integer >= 1"):
        RouteWorkload(apps=0)
