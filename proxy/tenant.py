"""Tenants: a keyed hash of the API key, so one tenant's prefixes never reveal another's.

``tenant = HMAC-SHA256(install_secret, api_key)[:16 bytes]`` as hex. The secret is 32
random bytes generated once per install in ``<state_dir>/tenant.key`` (created with mode
0600, the directory 0700 when prefixgate creates it; the default state directory, which
older releases created 0755, is tightened to 0700 too, while a ``$PREFIXGATE_HOME`` the user
made keeps the mode they gave it: :mod:`proxy.private`); without it a tenant id cannot be linked back to a key, not
even by trying candidate keys. The API key is read from ``Authorization: Bearer …``,
``x-api-key`` (Anthropic), ``api-key`` (Azure) or ``x-goog-api-key`` (Gemini), else from a
``key=`` query parameter (Gemini's other spelling); requests without one are
``"anonymous"``. The same key in a header or in the query is one tenant.

This module never stores, logs or returns the key itself.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from urllib.parse import unquote_to_bytes

from proxy.config import default_state_dir
from proxy.private import private_dir

SECRET_FILE = "tenant.key"
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
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another process won the race: use its secret
        finally:
            tmp.unlink()
    secret = bytes.fromhex(path.read_text().strip())
    if len(secret) < 16:
        raise ValueError(f"{path} holds a secret that is too short; delete it to make a new one")
    return secret


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


class TenantHasher:
    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("tenant secret must be at least 16 bytes")
        self._secret = secret

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> "TenantHasher":
        state_dir = Path(state_dir)
        return cls(load_or_create_secret(state_dir, tighten=is_default_state_dir(state_dir)))

    def tenant_of_key(self, api_key: bytes | None) -> str:
        if not api_key:
            return ANONYMOUS
        return hmac.new(self._secret, api_key, hashlib.sha256).hexdigest()[:32]

    def tenant_of(self, headers: list[tuple[bytes, bytes]], query: bytes = b"") -> str:
        key = api_key_of(headers)
        if key is None and query:
            key = query_key_of(query)
        return self.tenant_of_key(key)
