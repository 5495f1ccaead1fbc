from __future__ import annotations

import pytest

from analyzer.divergence import common_prefix_len
from analyzer.segments import Seen, Segment
from proxy.accounting.diagnosis import DiagnosisMemory


def seg(i: int, text: str, kind: str = "message") -> Segment:
    return Segment(kind, f"messages[{i}]", f"{kind}:user\x1f".encode() + text.encode())


def req(*texts: str, model: str = "m", ts: float = 0.0, provider: str = "openai") -> Seen:
    return Seen(provider, model, ts, tuple(seg(i, t) for i, t in enumerate(texts)))


def test_closest_is_longest_common_prefix_then_most_recent():
    mem = DiagnosisMemory()
    mem.observe("t", req("a", "b", "c"))
    mem.observe("t", req("a", "x"))
    mem.observe("t", req("z"))
    obs = mem.observe("t", req("a", "b", "d"))
    assert obs.common == 2
    assert [s.data for s in obs.earlier.segments][-1].endswith(b"c")
    obs = mem.observe("t", req("a", "q"))
    assert obs.common == 1
    assert obs.earlier.segments[-1].data.endswith(b"d")  # most recent of the ties


def test_tenants_are_separate_and_providers_too():
    mem = DiagnosisMemory()
    mem.observe("t1", req("a"))
    assert mem.observe("t2", req("a")).earlier is None
    assert mem.observe("t1", req("a", provider="anthropic")).earlier is None


def test_bounds_per_tenant_tenants_and_bytes():
    mem = DiagnosisMemory(per_tenant=2, max_tenants=2, max_bytes=10_000)
    for i in range(5):
        mem.observe("t", req(f"x{i}"))
    assert len(mem) == 2
    mem.observe("u", req("y"))
    mem.observe("v", req("y"))
    assert set(mem._tenants) == {"u", "v"}
    big = DiagnosisMemory(max_bytes=1000)
    for i in range(10):
        big.observe(f"t{i}", req("p" * 400 + str(i)))
    assert big.bytes_held <= 1000


def test_shared_segments_are_held_once():
    mem = DiagnosisMemory()
    prompt = "S" * 10_000
    for i in range(10):
        mem.observe("t", req(prompt, f"q{i}"))
    assert mem.bytes_held < 10_000 + 10 * 100


def test_invalid_bounds():
    with pytest.raises(ValueError):
        DiagnosisMemory(per_tenant=0)


def test_observe_returns_diagnosis():
    mem = DiagnosisMemory()
    mem.observe("t", req("a", model="m1"))
    assert mem.observe("t", req("a", model="m2")).diagnosis.reason == "model-changed"


def test_tie_prefers_the_request_whose_next_segment_shares_more_bytes():
    # A timestamp opening the system prompt: compare it with the previous timestamped
    # request, not with the newest request (which had no timestamp at all).
    mem = DiagnosisMemory()
    policy = "Refunds within 30 days. " * 20
    mem.observe("t", req(f"Now: 2026-11-30 14:05:07. {policy}", "q1"))
    mem.observe("t", req(policy, "q2"))
    obs = mem.observe("t", req(f"Now: 2026-11-30 14:09:41. {policy}", "q3"))
    assert obs.common == 0
    assert obs.earlier.segments[0].data.startswith(b"message:user\x1fNow: 2026-11-30 14:05:07")
    assert obs.diagnosis.reason.startswith("volatile-")


def test_common_prefix_len_finds_the_first_differing_byte():
    assert common_prefix_len(b"", b"abc") == 0
    assert common_prefix_len(b"abc", b"abc") == 3
    assert common_prefix_len(b"abc", b"abcdef") == 3
    assert common_prefix_len(b"\x00\x01", b"\x00\x00") == 1  # leading zero bytes still count
    assert common_prefix_len(b"x" * 5000 + b"1", b"x" * 5000 + b"2") == 5000
    assert common_prefix_len(b"time: 10:00:01", b"time: 10:00:59") == 12
