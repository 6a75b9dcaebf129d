"""Progress lines: how long work says what it is doing, one line of text at a time, on stderr."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

Progress = Callable[[str], None]  # what a long computation calls with each line of progress


def stderr_printer(prefix: str) -> Progress:
    """A `Progress` writing `prefix + message` as one line on stderr.

    Inside a Jupyter kernel the line goes to the kernel's own stderr (the terminal of `riskreport run`),
    not into the notebook, so that progress never lands in a report's HTML.
    """

    def say(message: str) -> None:
        line = f"{prefix}{message}\n"
        terminal = getattr(sys.stderr, "_original_stdstream_copy", None)  # ipykernel's copy of fd 2
        if isinstance(terminal, int):
            try:
                os.write(terminal, line.encode())
                return
            except OSError:
                pass
        stream = sys.stderr
        if type(stream).__module__.startswith("ipykernel") and sys.__stderr__ is not None:
            stream = sys.__stderr__  # a kernel that does not capture fd 2 (ipykernel skips it under pytest)
        stream.write(line)
        stream.flush()

    return say
