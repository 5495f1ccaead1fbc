"""Tenants: a keyed hash of the API key, so one tenant's prefixes never reveal another's.

``tenant = HMAC-SHA256(secret, api_key)[:16 bytes]`` as hex, the key read from the request's
auth headers or ``key=`` (else ``"anonymous"``). The secret comes from ``--tenant-secret-file``,
``$PREFIXGATE_TENANT_SECRET``, a Redis store's shared one (:func:`resolve_secret`), else the
install's ``tenant.key``; a store secret is fetched in the background when Redis is down at start
and written back / converged when Redis returns (:class:`TenantHasher`). :class:`Tenant` strings
remember whether their secret is still the shared one, so no prefix is recorded under another.
This module never stores, logs or returns the key or the secret.
See docs/request-path.md (tenants), docs/multi-replica.md and docs/store.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import os
import secrets
from pathlib import Path
from urllib.parse import unquote_to_bytes

from proxy.config import default_state_dir
from proxy.private import private_dir
from proxy.store.breaker import FIRST_BACKOFF_S, MAX_BACKOFF_S, Backoff

log = logging.getLogger("prefixgate.tenant")

SECRET_FILE = "tenant.key"
SECRET_ENV = "PREFIXGATE_TENANT_SECRET"
ANONYMOUS = "anonymous"
_KEY_HEADERS = (b"authorization", b"x-api-key", b"api-key", b"x-goog-api-key")


def is_default_state_dir(state_dir: Path) -> bool:
    """True for the state folder prefixgate picks itself (no ``$PREFIXGATE_HOME``)."""
    return not os.environ.get("PREFIXGATE_HOME") and Path(state_dir) == default_state_dir()


def load_or_create_secret(state_dir: Path, *, tighten: bool = False) -> bytes:
    """The install's secret; created on first use, atomically: written in full to a private
    temporary file (mode 0600), then hard-linked into place, so a process starting at the
    same moment reads either no file or the whole secret, never a half-written one."""
    private_dir(state_dir, tighten=tighten)
    path = state_dir / SECRET_FILE
    if not path.exists():
        tmp = state_dir / f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_bytes(32).hex() + "\n")
            # another process that won the race to link it first: its secret is used
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            tmp.unlink()
    secret = bytes.fromhex(path.read_text().strip())
    if len(secret) < 16:
        raise ValueError(f"{path} holds a secret that is too short; delete it to make a new one")
    return secret


class TenantSecretError(Exception):
    """The tenant secret could not be read or fetched (the message never holds the secret)."""


def parse_secret(text: str, where: str) -> bytes:
    """A secret's bytes: hex text decoded (32+ hex digits), any other text as UTF-8."""
    text = text.strip()
    try:
        secret = bytes.fromhex(text) if len(text) >= 32 and len(text) % 2 == 0 else None
    except ValueError:
        secret = None
    if secret is None:
        secret = text.encode()
    if len(secret) < 16:
        raise TenantSecretError(f"{where} holds a tenant secret shorter than 16 bytes")
    return secret


def resolve_secret(config) -> bytes:
    """The tenant secret for ``config`` (:class:`proxy.config.ProxyConfig`), in the order the
    module docstring gives. Raises :class:`TenantSecretError`."""
    if config.tenant_secret_file:
        try:
            text = Path(config.tenant_secret_file).read_text()
        except (OSError, UnicodeError) as exc:
            raise TenantSecretError(
                f"cannot read --tenant-secret-file {config.tenant_secret_file}: {type(exc).__name__}"
            ) from None
        return parse_secret(text, f"--tenant-secret-file {config.tenant_secret_file}")
    if config.tenant_secret:
        return parse_secret(config.tenant_secret, SECRET_ENV)
    if config.store != "memory":
        return _from_store(config.store)
    state_dir = Path(config.state_dir)
    return load_or_create_secret(state_dir, tighten=is_default_state_dir(state_dir))


def _from_store(url: str) -> bytes:
    from proxy.store.shared_secret import shared_secret

    try:
        return shared_secret(url, timeout_s=2.0)
    except Exception as exc:
        raise TenantSecretError(
            f"could not read the shared tenant secret from the Redis store ({type(exc).__name__})"
        ) from None


def api_key_of(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The first non-empty key among the key headers (an empty ``Bearer`` is skipped)."""
    for name, value in headers:
        if name.lower() in _KEY_HEADERS:
            if value[:7].lower() == b"bearer ":
                value = value[7:]
            value = value.strip()
            if value:
                return value
    return None


def query_key_of(query: bytes) -> bytes | None:
    """The first non-empty ``key=`` parameter of a raw query string (percent-decoded)."""
    if b"key=" not in query:
        return None
    for part in query.split(b"&"):
        if part.startswith(b"key="):
            value = unquote_to_bytes(part[4:].replace(b"+", b" ")).strip()
            if value:
                return value
    return None


def _write_back(url: str, secret: bytes) -> bytes:
    from proxy.store.shared_secret import write_back_secret

    return write_back_secret(url, secret, timeout_s=2.0)


class _Epoch:
    """One secret's time in use: ``recordable`` while it is the secret the store's replicas share."""

    __slots__ = ("recordable",)

    def __init__(self, recordable: bool) -> None:
        self.recordable = recordable


class Tenant(str):
    """A tenant id (a plain ``str`` everywhere) that knows whether the secret it was hashed
    with may still record prefixes in the shared store (module docstring)."""

    epoch: _Epoch

    @property
    def recordable(self) -> bool:
        return self.epoch.recordable


class TenantHasher:
    """``pending_store``: a Redis URL whose shared secret is still to fetch (meanwhile the
    install's tenant.key hashes, never recorded); ``shared_store``: the Redis URL the shared
    secret lives in (None: not from a store); ``diverged``: times the store held another secret
    than this replica's (adopted)."""

    def __init__(
        self, secret: bytes, *, pending_store: str | None = None, shared_store: str | None = None
    ) -> None:
        if len(secret) < 16:
            raise ValueError("tenant secret must be at least 16 bytes")
        self._secret = secret
        self.pending_store = pending_store
        self.shared_store = shared_store or pending_store
        self.diverged = 0
        self._epoch = _Epoch(recordable=pending_store is None)

    def _adopt(self, secret: bytes) -> None:
        """Hash with ``secret`` (the store's) from now on; tenants hashed before stop being recordable."""
        if len(secret) < 16:
            raise TenantSecretError("the Redis store holds a tenant secret shorter than 16 bytes")
        self._epoch.recordable = False
        self._epoch = _Epoch(recordable=True)
        self._secret = secret

    async def reassert_shared(self) -> None:
        """Write this replica's shared secret back to the store if it lost it, and adopt the
        store's value if it holds another (module docstring). Nothing to do when the secret is
        not the store's or not read yet. Raises :class:`TenantSecretError` when Redis does not
        answer (bounded by the client's 2 s timeouts)."""
        url = self.shared_store
        if url is None or self.pending_store is not None:
            return
        mine = self._secret
        try:
            stored = await asyncio.to_thread(_write_back, url, mine)
        except Exception as exc:
            raise TenantSecretError(
                f"could not write the shared tenant secret back to the Redis store ({type(exc).__name__})"
            ) from None
        if stored != mine and self._secret is mine:
            self.diverged += 1
            log.error(
                "the Redis store holds another shared tenant secret than this replica's (Redis lost it and a replica "
                "started meanwhile created a new one): adopting the store's so that every replica derives the same "
                "tenants; prefixes recorded before no longer match. Give replicas --tenant-secret-file or $%s, or "
                "Redis persistence, to avoid this",
                SECRET_ENV,
            )
            self._adopt(stored)

    async def fetch_shared(
        self, first_delay_s: float = FIRST_BACKOFF_S, max_delay_s: float = MAX_BACKOFF_S
    ) -> None:
        """Fetch the shared secret from :attr:`pending_store` until it answers (capped
        exponential backoff with jitter), then hash with it. Run as a background task;
        cancel it on shutdown."""
        backoff = Backoff(first_delay_s, max_delay_s)
        while self.pending_store is not None:
            await asyncio.sleep(backoff.next_delay())
            try:
                secret = await asyncio.to_thread(_from_store, self.pending_store)
                self._adopt(secret)
            except TenantSecretError:
                continue
            self.pending_store = None
            log.warning(
                "shared tenant secret read from the Redis store: tenants now match the other replicas"
            )

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> TenantHasher:
        state_dir = Path(state_dir)
        return cls(load_or_create_secret(state_dir, tighten=is_default_state_dir(state_dir)))

    @classmethod
    def for_config(cls, config) -> TenantHasher:
        """The hasher every replica sharing ``config``'s store agrees on (:func:`resolve_secret`)."""
        from_store = not (config.tenant_secret_file or config.tenant_secret) and config.store != "memory"
        try:
            return cls(resolve_secret(config), shared_store=config.store if from_store else None)
        except TenantSecretError as exc:
            if config.tenant_secret_file or config.tenant_secret or config.store == "memory":
                raise
            log.warning(
                "%s: using this install's tenant.key until it answers; give every replica the same "
                "--tenant-secret-file or $%s to avoid this",
                exc,
                SECRET_ENV,
            )
            state_dir = Path(config.state_dir)
            return cls(
                load_or_create_secret(state_dir, tighten=is_default_state_dir(state_dir)),
                pending_store=config.store,
            )

    def __repr__(self) -> str:
        return "TenantHasher(<secret>)"

    def tenant_of_key(self, api_key: bytes | None) -> str:
        """The key's tenant: :data:`ANONYMOUS` without one (the same on every replica, whatever
        the secret); a plain str when the secret never changes, else a :class:`Tenant` that
        knows its secret's epoch."""
        if not api_key:
            return ANONYMOUS
        tenant = hmac.new(self._secret, api_key, hashlib.sha256).hexdigest()[:32]
        if self.shared_store is None:
            return tenant
        tenant = Tenant(tenant)
        tenant.epoch = self._epoch
        return tenant

    def tenant_of(self, headers: list[tuple[bytes, bytes]], query: bytes = b"") -> str:
        key = api_key_of(headers)
        if key is None and query:
            key = query_key_of(query)
        return self.tenant_of_key(key)
