"""`python -m riskreport.run.kernel`: an IPython kernel that ends when the process that started it dies.

jupyter_client starts kernels in their own session, so a `kill -9` of `riskreport run` or of a
batch worker would leave the kernel running (and writing). A watcher thread ends this kernel
as soon as its parent is gone.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if sys.path and sys.path[0] in ("", os.getcwd()):  # as ipykernel_launcher: the report folder is no module path
        del sys.path[0]
    from riskreport.io.processes import exit_with_parent

    exit_with_parent()
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
