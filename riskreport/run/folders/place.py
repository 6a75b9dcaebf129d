"""A finished report folder moved into place in one rename (the previous report renamed away first, or riskreport's
own files merged into a `--force` folder), and the `latest` link moved onto it the same way: a reader never
sees half a report. Used by `riskreport run` (`report.runner`) and `Analysis.save` (`api.files`)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from riskreport.io.files import Destination, merge_into


def move_into_place(work: Path, destination: Destination) -> None:
    """Move the complete build folder `work` to `destination` (see the module)."""
    final = destination.final
    if destination.mode == "merge":
        merge_into(work, final)
    elif final.exists() and any(final.iterdir()):  # a previous report holding only its own files
        old = Path(tempfile.mkdtemp(prefix=f".old-{final.name}-", dir=final.parent))
        os.replace(final, old / final.name)
        os.replace(work, final)
        shutil.rmtree(old, ignore_errors=True)
    else:  # new, or an empty folder (rename replaces it)
        os.replace(work, final)


def point_latest(link: Path, target: Path) -> None:
    """Point `link` at `target` (a sibling) by renaming a new link over it."""
    tmp = link.with_name(f".latest-{os.getpid()}")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(target.name)
    os.replace(tmp, link)
