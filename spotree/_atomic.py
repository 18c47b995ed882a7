"""Atomic file writes: a failed or interrupted write never leaves a partial file."""

from __future__ import annotations

import os
import secrets
import stat

__all__ = ["atomic_write"]

_PREFIX, _SUFFIX = ".spotree-", ".tmp"


def atomic_write(path, writer, mode="w"):
    """Write ``path`` through ``writer(fh)`` on a temp file, then rename it into place.

    The temp file sits next to ``path`` (so the rename is atomic) and is
    removed whatever stops the write, a ``KeyboardInterrupt`` included,
    wherever it arrives: its name is chosen before the file exists and every
    step from its creation on runs under one ``try``. ``path`` holds either
    its previous content or the complete new one, and keeps its permissions
    (a new file gets the umask's). A symbolic link is
    followed (its target is written, the link kept); a pipe or a device
    (``/dev/stdout``) is written directly, as nothing can be renamed onto it.

    Parameters
    ----------
    path : str or os.PathLike
    writer : callable
        ``writer(fh)`` writes the content to the open file ``fh``.
    mode : {"w", "wb"}, default="w"
        Text (UTF-8) or binary.

    Raises
    ------
    IsADirectoryError
        If ``path`` is a directory.
    OSError
        If the folder cannot be written; the error names ``path``.
    """
    path = os.fspath(path)
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb'; got {mode!r}.")
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory, not a file that can be written", path)
    if os.path.exists(path) and not os.path.isfile(path):
        # A pipe or a device (/dev/stdout): nothing to rename onto; renaming would
        # replace the device node (or the link to it) with a regular file.
        with (open(path, "wb") if mode == "wb" else open(path, "w", encoding="utf-8")) as fh:
            writer(fh)
        return
    if os.path.islink(path):
        # Write the file the link points to; renaming onto the link would replace
        # the link itself and leave its target as it was.
        path = os.path.realpath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = None
    try:
        while True:
            tmp = os.path.join(folder, f"{_PREFIX}{secrets.token_hex(8)}{_SUFFIX}")
            try:
                # "x": created here or not at all; permissions follow the umask,
                # as for any file the user writes.
                fh = (open(tmp, "xb") if mode == "wb"
                      else open(tmp, "x", encoding="utf-8"))
            except FileExistsError:
                tmp = None  # another writer's file: draw another name
                continue
            except OSError as exc:
                tmp = None
                raise type(exc)(exc.errno, f"cannot write {path}: {exc.strerror}",
                                path) from None
            break
        with fh:
            writer(fh)
        _keep_mode(tmp, path)
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        raise


def _keep_mode(tmp, path):
    """Give ``tmp`` the permissions of the file ``path`` it replaces, as writing in
    place keeps them (a private model.json re-saved was readable by all, the
    umask's); a new file keeps the umask's. A function of its own: a ``try``
    nested in atomic_write's, interrupted at its first bytecode (the NOP of the
    ``try``), left the temp file behind on Python 3.11."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return
    os.chmod(tmp, mode)
