"""Process lifetimes: a helper process ends with the process that started it."""
from __future__ import annotations

import os
import threading
import time


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
