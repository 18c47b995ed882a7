"""Atomic file writes: a failed or interrupted write never leaves a partial file."""

from __future__ import annotations

import os
import tempfile

__all__ = ["atomic_write"]


def atomic_write(path, writer, mode="w"):
    """Write ``path`` through ``writer(fh)`` on a temp file, then rename it into place.

    An interrupted or failed write leaves no partial file under ``path``.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".spotree-", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            writer(fh)
        # mkstemp creates 0600 files; give the result the usual permissions.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
