"""Stop strings over streamed text: partial matches are held back until they can be told apart."""

from __future__ import annotations

from kvcache.server.stops import StopMatcher


def test_stop_matcher_holds_back_partial_matches():
    matcher = StopMatcher(["END", "\n\n"])
    out = [matcher.feed(p) for p in ["hello E", "N", "x world\n", "\nmore"]]
    assert out == ["hello ", "", "ENx world", ""] and matcher.stopped
    assert matcher.flush() == ""
    plain = StopMatcher(["STOP"])
    assert plain.feed("abc ST") == "abc " and plain.flush() == "ST"
