"""Fleet totals in Redis: the key layout, one write script and one read script.

Keys sit under one hash tag, ``{key_prefix}{fleet}:…`` (all-time, hourly, per-replica
``applied``); fields are ``<counter>|<provider>|<model>`` integers (USD in nano-dollars).
:func:`write` applies a numbered batch once per replica (Lua, atomic).

It keeps no state and sets no deadline (:mod:`proxy.accounting.fleet` does), but its
client's close at shutdown (:data:`CLOSE_S`). See docs/multi-replica.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence

from proxy.accounting.counters import COUNTERS
from proxy.store.redis_clients import redis_client

TAG = "{fleet}"
RETENTION_S = 32 * 24 * 3600
MAX_MODEL_CHARS = 200
CLOSE_S = 1.0
READ_CHUNK = 24
NANO = 1_000_000_000
_USD = frozenset(i for i, c in enumerate(COUNTERS) if c.kind == "usd")
_INDEX = {c.name: i for i, c in enumerate(COUNTERS)}

# A delta's key: (provider, model, unix hour).
Key = tuple[str, str, int]

# KEYS: applied:<replica>, all, hour keys…; ARGV: replica, seq, ttl, then per hour key: n, n × (field, increment).
_WRITE_LUA = """
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
if last >= tonumber(ARGV[2]) then return -1 end
local a, failed = 4, 0
for k = 3, #KEYS do
  local n = tonumber(ARGV[a]); a = a + 1
  for j = 1, n do
    local f, v = ARGV[a], ARGV[a + 1]; a = a + 2
    local r1 = redis.pcall('HINCRBY', KEYS[k], f, v)
    local r2 = redis.pcall('HINCRBY', KEYS[2], f, v)
    if type(r1) == 'table' and r1.err then failed = failed + 1 end
    if type(r2) == 'table' and r2.err then failed = failed + 1 end
  end
  redis.call('EXPIRE', KEYS[k], ARGV[3])
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return failed
"""

_READ_LUA = """
local out = {}
for i = 1, #KEYS do out[i] = redis.call('HGETALL', KEYS[i]) end
return out
"""


def field(counter: str, provider: str, model: str) -> str:
    return f"{counter}|{provider}|{model[:MAX_MODEL_CHARS]}"


def to_ints(values: Sequence[float | int]) -> list[int]:
    """One record's contributions (:data:`COUNTERS` order) as the integers Redis keeps."""
    return [round(v * NANO) if i in _USD else int(v) for i, v in enumerate(values)]


def from_ints(values: Sequence[int]) -> list[float | int]:
    """Back from Redis' integers: USD as floats, the rest as ints."""
    return [v / NANO if i in _USD else v for i, v in enumerate(values)]


class FleetRedis:
    """The fleet's keys on one Redis or Cluster (its own client; redis-py's socket timeouts
    are a backstop only)."""

    def __init__(self, url: str, timeout_s: float = 2.0) -> None:
        self._redis, prefix = redis_client(url, timeout_s, asyncio=True)
        self.base = f"{prefix}{TAG}:"
        self._write = self._redis.register_script(_WRITE_LUA)
        self._read = self._redis.register_script(_READ_LUA)

    def hour_key(self, hour: int) -> str:
        return f"{self.base}h:{hour}"

    async def write(self, replica: str, seq: int, deltas: Mapping[Key, Sequence[int]]) -> int:
        """Apply one batch; the number of fields that failed (overflow), or -1 when this batch
        was applied before."""
        by_hour: dict[int, list[str]] = {}
        for (provider, model, hour), values in deltas.items():
            args = by_hour.setdefault(hour, [])
            for c, v in zip(COUNTERS, values):
                if v:
                    args += (field(c.name, provider, model), str(v))
        keys = [f"{self.base}applied:{replica}", self.base + "all"]
        argv: list[str | int] = [replica, seq, RETENTION_S]
        for hour, args in sorted(by_hour.items()):
            keys.append(self.hour_key(hour))
            argv += (len(args) // 2, *args)
        return int(await self._write(keys=keys, args=argv))

    async def read_all(self) -> dict[tuple[str, str], list[int]]:
        """All-time sums per (provider, model)."""
        (fields,) = await self._read(keys=[self.base + "all"])
        return parse(fields)

    async def read_hours(self, hours: Iterable[int]) -> dict[int, dict[tuple[str, str], list[int]]]:
        """Sums per hour (those with data) and (provider, model), read :data:`READ_CHUNK` hours
        per script call: no one read blocks Redis (every replica's look-ups) for long."""
        hours = list(hours)
        out: dict[int, dict[tuple[str, str], list[int]]] = {}
        for i in range(0, len(hours), READ_CHUNK):
            part = hours[i : i + READ_CHUNK]
            answers = await self._read(keys=[self.hour_key(h) for h in part])
            out.update((h, rows) for h, fields in zip(part, answers) if (rows := parse(fields)))
        return out

    async def ping(self) -> bool:
        return bool(await self._redis.ping())

    async def aclose(self) -> None:
        """Close the client within :data:`CLOSE_S`: a hung Redis never hangs a shutdown (the
        process is ending; its sockets go with it)."""
        try:
            async with asyncio.timeout(CLOSE_S):
                await self._redis.aclose()
        except TimeoutError:
            pass


def parse(flat: Sequence[bytes]) -> dict[tuple[str, str], list[int]]:
    """``HGETALL``'s flat answer → sums per (provider, model) in :data:`COUNTERS` order.
    Fields this version does not know (a newer replica's counter) or that do not parse are
    ignored."""
    out: dict[tuple[str, str], list[int]] = {}
    for i in range(0, len(flat) - 1, 2):
        try:
            name, provider, model = flat[i].decode().split("|", 2)
            value = int(flat[i + 1])
        except (UnicodeDecodeError, ValueError):
            continue
        index = _INDEX.get(name)
        if index is None:
            continue
        row = out.get((provider, model))
        if row is None:
            row = out[(provider, model)] = [0] * len(COUNTERS)
        row[index] += value
    return out
