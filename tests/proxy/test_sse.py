"""proxy.sse: events split incrementally, raw bytes preserved."""

from __future__ import annotations

import pytest

from proxy.sse import SSEParser, parse_event

STREAM = (
    b'event: message_start\ndata: {"a":1}\n\n'
    b": ping\r\n\r\n"
    b"data: line1\r\ndata: line2\r\n\r\n"
    b"event: x\rdata: y\r\r"
    b"data: [DONE]\n\n"
)


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, len(STREAM)])
def test_any_chunking_gives_the_same_events_and_bytes(step):
    parser = SSEParser()
    events = []
    for i in range(0, len(STREAM), step):
        events += parser.feed(STREAM[i : i + step])
    assert b"".join(e.raw for e in events) + parser.flush() == STREAM
    assert [(e.event, e.data) for e in events] == [
        ("message_start", '{"a":1}'),
        (None, ""),
        (None, "line1\nline2"),
        ("x", "y"),
        (None, "[DONE]"),
    ]


def test_unterminated_tail_comes_back_from_flush():
    parser = SSEParser()
    assert parser.feed(b"data: 1\n\ndata: par") != []
    assert parser.flush() == b"data: par"


def test_field_without_space_and_comment_lines():
    event = parse_event(b"data:x\n:comment\nid: 3\n\n")
    assert event.data == "x" and event.event is None
