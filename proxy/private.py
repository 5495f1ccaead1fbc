"""Private folders and files: what prefixgate creates for its state only its user can read.

- :func:`private_dir` creates a folder (parents as ``mkdir -p`` does, with default modes) and
  gives the folder itself mode 0700 with an explicit ``chmod`` after creating it, so the
  umask can neither widen nor narrow it. A folder that already exists keeps its mode unless
  ``tighten`` is asked for (prefixgate's default state folder: releases before this module
  created it 0755); tightening a folder the user does not own is skipped, not an error.
- :func:`create_private_file` creates an empty file with mode 0600 (``O_EXCL``, then
  ``fchmod``) unless it exists. SQLite gives a database's ``-wal`` and ``-shm`` files the
  mode of the database file, so a ledger created this way keeps all three 0600.

Which folders are prefixgate's own and which the user chose is the caller's decision
(:mod:`proxy.tenant`, :mod:`proxy.accounting.ledger_schema`). This module never deletes anything and
never changes the mode of an existing file.
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: str | os.PathLike[str], *, tighten: bool = False) -> Path:
    """``path`` as an existing folder: 0700 when this call created it (or ``tighten``)."""
    path = Path(path)
    created = False
    if not path.is_dir():
        try:
            path.mkdir(parents=True, mode=DIR_MODE)
            created = True
        except FileExistsError:  # another process made it a moment ago, or it is a file
            if not path.is_dir():
                raise
    if created:
        os.chmod(path, DIR_MODE)
    elif tighten and path.stat().st_mode & 0o777 != DIR_MODE:
        try:
            os.chmod(path, DIR_MODE)
        except PermissionError:  # not ours to change
            pass
    return path


def create_private_file(path: str | os.PathLike[str]) -> bool:
    """Create ``path`` empty with mode 0600 unless it exists; True when this call created it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return False
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return True
