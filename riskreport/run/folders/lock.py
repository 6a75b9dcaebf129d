"""Advisory locks on the reports folder (POSIX `flock`).

The kernel releases an `flock` when its holder exits, however it exits (even SIGKILL), so a
lock is never stale. The lock file holds a note on its current owner, which a waiting or refused
process shows, and is removed when its holder lets go (a file left by a killed holder is taken
over by the next one). Removing a lock file is safe because a taker checks, once it holds the
lock, that the path still names the file it locked, and tries again if not.

A lock belongs to the process that took it alone: a forked child (a worker of a process pool)
would otherwise share the lock's open file and keep it held after its parent died, so every
child drops the locks it inherited as soon as it is forked.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from riskreport.errors import RiskReportError


class LockedError(RiskReportError):
    """Another process holds the lock (after waiting, when asked to wait)."""


_HELD: set[int] = set()  # descriptors of the locks this process holds


def _drop_inherited_locks() -> None:
    """In a forked child: point the inherited lock descriptors at /dev/null (the parent keeps its locks)."""
    if not _HELD:
        return
    null = os.open(os.devnull, os.O_RDONLY)
    for fd in _HELD:
        try:
            os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)
    _HELD.clear()


os.register_at_fork(after_in_child=_drop_inherited_locks)


@contextmanager
def locked(
    path: str | os.PathLike,
    *,
    wait: float = math.inf,
    owner: dict | None = None,
    on_wait: Callable[[str], None] | None = None,
    what: str = "",
    hint: str = "",
) -> Iterator[Path]:
    """Hold an exclusive lock on `path` (created if needed) for the duration of the block.

    `wait` is how many seconds to wait for a held lock (0: do not wait, `math.inf`: forever);
    after that, `LockedError` names the holder. `owner` (e.g. pid, jobs file) is written into
    the lock file for others to read; `on_wait` is told once that we are waiting; `what` names
    the locked thing and `hint` says what to do, in the error.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")
    try:
        deadline = time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if _same_file(handle, path):
                    break
                handle.close()  # its holder removed the file after we opened it: lock the one there now
                handle = open(path, "a+", encoding="utf-8")
                continue
            except BlockingIOError:
                holder = describe_holder(path)
                if time.monotonic() >= deadline:
                    waited = f" after waiting {wait:g} s" if wait > 0 else ""
                    raise LockedError(
                        f"{what or path} is locked by {holder}{waited}." + (f" {hint}" if hint else "")
                    ) from None
                if on_wait and not told:
                    on_wait(f"{what or path} is locked by {holder}; waiting")
                    told = True
                time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
        if owner is not None:
            handle.seek(0)
            handle.truncate()
            handle.write(
                json.dumps(
                    {
                        **owner,
                        "pid": os.getpid(),
                        "host": socket.gethostname(),
                        "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    }
                )
            )
            handle.flush()
        _HELD.add(handle.fileno())
    except BaseException:
        handle.close()
        raise
    try:
        yield path
    finally:
        _HELD.discard(handle.fileno())
        try:
            if _same_file(handle, path):
                path.unlink()  # while still held: a waiter that opened it finds it gone and opens the new one
        except OSError:
            pass
        handle.close()  # closing the descriptor releases the lock


def _same_file(handle, path: Path) -> bool:
    """Whether `path` still names the file open as `handle`."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(handle.fileno())
    return (named.st_ino, named.st_dev) == (held.st_ino, held.st_dev)


def describe_holder(path: Path) -> str:
    """'pid 123 on host (jobs.toml, since ...)' from the note in a lock file, or 'another process'."""
    try:
        note = json.loads(Path(path).read_text(encoding="utf-8"))
        extra = ", ".join(str(note[k]) for k in ("jobs", "since") if note.get(k))
        return f"pid {note['pid']} on {note['host']}" + (f" ({extra})" if extra else "")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"
