"""The Redis store's URLs: ``redis://`` with its ``key_prefix``, ``redis-cluster://`` node lists.

:func:`split_key_prefix` takes the proxy's own ``key_prefix`` off a URL, :func:`cluster_nodes`
and :func:`cluster_auth` read a ``redis-cluster://[user:password@]host:port[,host:port…]`` URL,
and :func:`redacted` makes any of them fit for an error message or a log.

It opens no connection (:mod:`proxy.store.redis_clients` does). See docs/store.md.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

CLUSTER_SCHEME = "redis-cluster://"
DEFAULT_KEY_PREFIX = "prefixgate:"


def split_key_prefix(url: str, default: str = DEFAULT_KEY_PREFIX) -> tuple[str, str]:
    """``redis://h/0?key_prefix=x:`` → (``redis://h/0``, ``x:``); other query args stay."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    prefix = default
    rest = []
    for key, value in query:
        if key == "key_prefix":
            prefix = value
        else:
            rest.append((key, value))
    out = urlunsplit(parts._replace(query=urlencode(rest)))
    if "://" in url and "://" not in out:  # unix:///tmp/r.sock: urlunsplit drops an empty authority's "//"
        out = out.replace(":", "://", 1)  # and redis-py 8 reads only "unix://" as a socket path
    return out, prefix


def redacted(url: str) -> str:
    """``url`` fit for an error message or a log: a password (or a lone user-info part, which
    may be one) in its authority replaced by ``***``. Handles ``redis-cluster://`` node lists."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    end = min([i for i in (rest.find("/"), rest.find("?")) if i >= 0] or [len(rest)])
    authority, tail = rest[:end], rest[end:]
    if "@" not in authority:
        return url
    userinfo, _, hosts = authority.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    return f"{scheme}://{user + ':' if colon else ''}***@{hosts}{tail}"


def cluster_nodes(url: str) -> tuple[list[tuple[str, int]], str]:
    """``redis-cluster://a:7000,b:7001/?key_prefix=x:`` → ([("a", 7000), ("b", 7001)], "x:").
    ValueError for a URL without nodes, with a port that is not a number, or with a
    ``key_prefix`` holding ``{`` or ``}`` (its hash tag would put every tenant's keys in one slot)."""
    if not url.startswith(CLUSTER_SCHEME):
        raise ValueError(f"not a {CLUSTER_SCHEME} URL: {redacted(url)!r}")
    rest = url[len(CLUSTER_SCHEME) :]
    hosts, _, query = rest.partition("?")
    # user:password@ is cluster_auth's, never part of a node name
    hosts = hosts.rpartition("@")[2].split("/", 1)[0]
    prefix = dict(parse_qsl(query, keep_blank_values=True)).get("key_prefix", DEFAULT_KEY_PREFIX)
    if "{" in prefix or "}" in prefix:
        raise ValueError(
            f"--store {CLUSTER_SCHEME}: key_prefix must not hold '{{' or '}}' (the tenant is the hash tag)"
        )
    nodes = []
    for item in filter(None, hosts.split(",")):
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"--store {CLUSTER_SCHEME} wants host:port[,host:port…], got {item!r}")
        nodes.append((host.strip("[]"), int(port)))
    if not nodes:
        raise ValueError(f"--store {CLUSTER_SCHEME} names no node: {redacted(url)!r}")
    return nodes, prefix


def cluster_auth(url: str) -> dict[str, str]:
    """``redis-cluster://user:pass@a:7000,…`` → ``{"username": "user", "password": "pass"}``
    (percent-decoded; only what the URL gives)."""
    hosts = url[len(CLUSTER_SCHEME) :].partition("?")[0]
    userinfo, at, _ = hosts.rpartition("@")
    if not at:
        return {}
    username, colon, password = userinfo.partition(":")
    auth = {"username": unquote(username)} if username else {}
    if colon:
        auth["password"] = unquote(password)
    return auth
