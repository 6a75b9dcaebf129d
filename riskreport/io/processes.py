"""Process lifetimes and interrupts.

A helper process ends with the process that started it (`exit_with_parent`). In the command
line and in batch workers, SIGINT (Ctrl-C) and SIGTERM raise `Interrupted` once, in the main
thread (`raise_on_signals`); a second signal during the clean-up that follows is ignored, so an
impatient second Ctrl-C cannot leave a half-removed build folder. `deferred_signals` holds a
signal back while a few renames must happen together (a report moved into place).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; `detail` says what was stopped and what was kept (one line)."""

    def __init__(self, signum: int = signal.SIGINT, detail: str = ""):
        super().__init__(signum, detail)
        self.signum, self.detail = int(signum), detail

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    def __str__(self) -> str:
        return f"interrupted ({self.signal_name})" + (f": {self.detail}" if self.detail else "")

    @classmethod
    def of(cls, error: BaseException, detail: str) -> Interrupted:
        """`error` (an `Interrupted` or a plain KeyboardInterrupt) with `detail`."""
        return cls(getattr(error, "signum", signal.SIGINT), detail)


# raised: the signal number once an Interrupted was raised (0: none yet)
_STATE: dict = {"deferring": 0, "pending": None, "raised": 0, "busy": None}


def raise_on_signals(busy: Callable[[], bool] | None = None) -> dict:
    """From now on the first SIGINT or SIGTERM raises `Interrupted` in the main thread; later ones are ignored.

    With `busy` (a worker process), a signal that comes while `busy()` is false ends the process at
    once, quietly (exit code 128 + signal): an idle worker has nothing to clean up. Returns the
    handlers replaced (for `restore_signals`); does nothing outside the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        return {}
    _STATE.update(deferring=0, pending=None, raised=0, busy=busy)
    return {signum: signal.signal(signum, _raise) for signum in INTERRUPTS}


def restore_signals(previous: dict) -> None:
    """Put back the handlers `raise_on_signals` replaced, and forget its state (a later run starts afresh)."""
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    if previous:
        _STATE.update(deferring=0, pending=None, raised=0, busy=None)


def _raise(signum: int, frame) -> None:
    if _STATE["raised"]:
        return
    if _STATE["busy"] is not None and not _STATE["busy"]():
        os._exit(128 + signum)
    if _STATE["deferring"]:
        _STATE["pending"] = signum
        return
    _STATE["raised"] = signum
    raise Interrupted(signum)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """A signal that arrives inside the block is raised when the block ends (with `raise_on_signals` only).

    A signal already raised whose `Interrupted` never reached the caller is raised again on entry: Python
    drops an exception raised by a signal handler at a few points (while an import finishes, in a
    `__del__` or a weakref callback, where it prints "Exception ignored"), and the run would otherwise
    go on to put its report in place and exit 0 after a Ctrl-C.
    """
    if _STATE["raised"] and any(signal.getsignal(signum) is _raise for signum in INTERRUPTS):
        raise Interrupted(_STATE["raised"])
    _STATE["deferring"] += 1
    try:
        yield
    finally:
        _STATE["deferring"] -= 1
    pending = _STATE["pending"]
    if pending is not None and not _STATE["deferring"] and not _STATE["raised"]:
        _STATE.update(pending=None, raised=pending)
        raise Interrupted(pending)


def ignore_interrupts() -> None:
    """In a helper process: Ctrl-C (sent by the terminal to the whole process group) is left to the parent,
    which stops its helpers itself; no helper prints a KeyboardInterrupt traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def kill_group(pgid: int | None) -> bool:
    """SIGKILL every process of the group `pgid`; False when none is left (or `pgid` is unknown)."""
    if not pgid or pgid == os.getpgid(0):
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def exit_with_parent(interval: float = 0.5) -> None:
    """End this process (at once, no clean-up) when its parent process has died.

    A dead parent shows as a changed parent pid (the orphan is re-parented to init or a
    sub-reaper). Used by kernels and by the worker processes of batches and evaluations.
    """
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, name="riskreport-exit-with-parent", daemon=True).start()
