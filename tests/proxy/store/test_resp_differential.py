"""proxy.store.resp against redis-py, the maintained client: the same commands packed to the
same bytes, and the same replies read from a real Redis for generated values (integers,
bulk strings with any bytes, nils, status replies, nested arrays, error replies)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.store.resp import RespError, RespPool, pack

try:
    from redis._parsers.base import BaseParser
except ImportError:  # older redis-py
    from redis.connection import BaseParser
EXCEPTION_CLASSES = BaseParser.EXCEPTION_CLASSES

# Lua values a script can return: ("int", n) | ("bulk", bytes) | ("nil",) | ("status", text) | ("array", [...])
leaf = st.one_of(
    st.integers(min_value=-(2**53), max_value=2**53).map(lambda n: ("int", n)),
    st.binary(max_size=300).map(lambda b: ("bulk", b)),
    st.just(("nil",)),
    st.text(st.characters(codec="ascii", exclude_characters="\r\n"), max_size=20).map(
        lambda t: ("status", t.encode())
    ),
)
values = st.recursive(
    leaf, lambda inner: st.lists(inner, max_size=6).map(lambda xs: ("array", xs)), max_leaves=25
)


def to_lua(value, argv: list[bytes]) -> str:
    """A Lua expression for ``value``; byte strings travel as ARGV so any byte survives."""
    kind = value[0]
    if kind == "int":
        return f"({value[1]})"
    if kind == "nil":
        return "false"  # Redis turns Lua false into a nil bulk reply
    if kind in ("bulk", "status"):
        argv.append(value[1])
        ref = f"ARGV[{len(argv)}]"
        return f"redis.status_reply({ref})" if kind == "status" else ref
    return "{" + ", ".join(to_lua(v, argv) for v in value[1]) + "}"


def both(url: str, script: str, argv: list[bytes]):
    """(redis-py's reply, ours) for ``EVAL script 0 *argv``; an error reply as ('error', text)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        theirs = client.eval(script, 0, *argv)
    except redis.ResponseError as exc:  # redis-py strips a known code into the class: put it back
        code = next((c for c, cls in EXCEPTION_CLASSES.items() if cls is type(exc) and c != "ERR"), None)
        theirs = ("error", f"{code} {exc}" if code else str(exc))
    finally:
        client.close()

    async def ours_call():
        host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
        pool = RespPool(host, int(port))
        try:
            return await pool.call(pack([b"EVAL", script.encode(), b"0", *argv]))
        except RespError as exc:
            return ("error", str(exc))
        finally:
            await pool.aclose()

    return theirs, asyncio.run(ours_call())


@given(
    args=st.lists(st.binary(max_size=200), min_size=1, max_size=8).filter(lambda a: a[0] and b" " not in a[0])
)
def test_commands_pack_to_the_bytes_redis_py_sends(args):
    from redis.connection import Connection

    theirs = b"".join(Connection().pack_command(*args))
    assert pack(args) == theirs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=values)
def test_replies_read_as_redis_py_reads_them(redis_server_url, value):
    argv: list[bytes] = []
    script = "return " + to_lua(value, argv)
    theirs, ours = both(redis_server_url, script, argv)
    assert ours == theirs


@pytest.mark.parametrize(
    "script, argv",
    [
        ("return redis.error_reply('NOSCRIPT made up')", []),
        ("return redis.call('GET', KEYS[1] or 'pgtest-resp-absent-key')", []),
        ("return ARGV[1]", [bytes(range(256)) * 2048]),  # 512 KiB: a reply over many reads
        (
            "return {ARGV[1], {1, {false, ARGV[1]}}, -7}",
            [b"\r\n$3\r\n*1\r\n"],
        ),  # framing bytes inside a value
    ],
)
def test_edge_replies_match(redis_server_url, script, argv):
    theirs, ours = both(redis_server_url, script, argv)
    assert ours == theirs
