"""Private folders and files: what prefixgate creates for its state only its user can read.

:func:`private_dir` creates a folder and ``chmod`` s it 0700 (the umask neither widens nor
narrows it); an existing one keeps its mode unless ``tighten`` (prefixgate's default folder, once
created 0755; skipped, not an error, when the user does not own it). :func:`create_private_file`
creates an empty 0600 file (``O_EXCL``, ``fchmod``); SQLite gives ``-wal`` / ``-shm`` the
database's mode. Which folders are prefixgate's own is the caller's decision.
It never deletes anything and never changes the mode of an existing file.
See docs/configuration.md (state).
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
