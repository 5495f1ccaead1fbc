"""Tenants: a keyed hash of the API key, so one tenant's prefixes never reveal another's.

``tenant = HMAC-SHA256(install_secret, api_key)[:16 bytes]`` as hex. The secret is 32
random bytes generated once per install in ``<state_dir>/tenant.key`` (created with mode
0600, the directory 0700); without it a tenant id cannot be linked back to a key, not
even by trying candidate keys. The API key is read from ``Authorization: Bearer …``,
``x-api-key`` (Anthropic) or ``api-key`` (Azure); requests without one are
``"anonymous"``.

This module never stores, logs or returns the key itself.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SECRET_FILE = "tenant.key"
ANONYMOUS = "anonymous"
_KEY_HEADERS = (b"authorization", b"x-api-key", b"api-key")


def load_or_create_secret(state_dir: Path) -> bytes:
    """The install's secret; created atomically (O_EXCL, mode 0600) on first use."""
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = state_dir / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        secret = bytes.fromhex(path.read_text().strip())
        if len(secret) < 16:
            raise ValueError(f"{path} holds a secret that is too short; delete it to make a new one")
        return secret
    secret = secrets.token_bytes(32)
    with os.fdopen(fd, "w") as fh:
        fh.write(secret.hex() + "\n")
    return secret


def api_key_of(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    for name, value in headers:
        if name.lower() in _KEY_HEADERS and value:
            if value[:7].lower() == b"bearer ":
                value = value[7:].strip()
            return value or None
    return None


class TenantHasher:
    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("tenant secret must be at least 16 bytes")
        self._secret = secret

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> "TenantHasher":
        return cls(load_or_create_secret(Path(state_dir)))

    def tenant_of_key(self, api_key: bytes | None) -> str:
        if not api_key:
            return ANONYMOUS
        return hmac.new(self._secret, api_key, hashlib.sha256).hexdigest()[:32]

    def tenant_of(self, headers: list[tuple[bytes, bytes]]) -> str:
        return self.tenant_of_key(api_key_of(headers))
