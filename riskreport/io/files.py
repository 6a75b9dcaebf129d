"""Files riskreport writes, and the rules that keep everything else safe.

- A report folder lists the files it holds in its `params.json` (`files`); only those are
  riskreport's. A folder is replaced only when it is empty or is a previous report, and even
  then files riskreport did not write stay where they are.
- Destinations are checked before any work starts: a folder that cannot be written is a
  one-line error naming it, not a traceback minutes later.
- A full disk (or a file-size limit) is recognised wherever it strikes, so the caller can say
  so plainly and remove its half-written temporary folder.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from riskreport.errors import RiskReportError

# Files of a report written before params.json listed them (riskreport < 0.2).
LEGACY_REPORT_FILES = ("report.html", "report.ipynb", "params.json")
DISK_ERRNOS = {
    errno.ENOSPC: "no space left on the device",
    errno.EFBIG: "file too large (the file-size limit, see `ulimit -f`)",
    getattr(errno, "EDQUOT", 122): "disk quota exceeded",
}
_ERRNO_TEXT = re.compile(r"\[Errno (\d+)\]")
_NAMED_FILE = re.compile(r"\[Errno \d+\][^:]*: '([^']+)'")


class DestinationError(RiskReportError):
    """A folder riskreport was asked to write into cannot be used (missing, read-only, not ours)."""


class DiskFullError(RiskReportError):
    """Writing failed for lack of space (or a file-size limit); nothing was left half-written."""


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename."""
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, 0o666 & ~umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---- writable folders ------------------------------------------------------------------------


def check_writable(folder: Path, what: str) -> None:
    """Raise `DestinationError` unless a file can be created in the existing `folder`.

    `what` names the destination in the message, e.g. "--out /path/report".

    Tried for real (a probe file), since permission bits do not tell for root, read-only
    mounts or immutable folders.
    """
    try:
        handle, probe = tempfile.mkstemp(prefix=".riskreport-probe-", dir=folder)
    except OSError as error:
        raise DestinationError(
            f"{what}: cannot write in {folder} ({_reason(error)}). Choose a folder you can write to."
        ) from None
    os.close(handle)
    os.unlink(probe)


def ensure_folder(folder: Path, what: str) -> Path:
    """Create `folder` if missing (and writable parents, as `mkdir -p` would) and check it is writable.

    The first existing ancestor must be a folder we can write to; a path through a file, or a
    read-only ancestor, is a `DestinationError` naming it.
    """
    folder = Path(folder).expanduser().absolute()
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise DestinationError(f"{what} {folder}: {existing} is a file, not a folder.")
    if existing != folder:
        check_writable(existing, f"{what} {folder}")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise DestinationError(f"{what} {folder}: cannot create it ({_reason(error)}).") from None
    check_writable(folder, f"{what} {folder}")
    return folder


def _reason(error: OSError) -> str:
    return DISK_ERRNOS.get(error.errno) or error.strerror or str(error)


# ---- disk-full detection ---------------------------------------------------------------------


def _chain(error: BaseException | None):
    """`error`, then its cause or context, and so on (each once)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def disk_problem(error: BaseException) -> str | None:
    """'no space left on the device', ... when `error` (or its cause) is a disk-full error; else None.

    Also recognises an error raised inside a kernel, which reaches us as text ("[Errno 28] ...").
    """
    for link in _chain(error):
        if isinstance(link, OSError) and link.errno in DISK_ERRNOS:
            return DISK_ERRNOS[link.errno]
        for number in _ERRNO_TEXT.findall(str(link)):
            if int(number) in DISK_ERRNOS:
                return DISK_ERRNOS[int(number)]
    return None


def failed_file(error: BaseException) -> str | None:
    """The file an OSError (or a kernel's error text, "...: '/path'") names, if any."""
    for link in _chain(error):
        if isinstance(link, OSError) and link.filename:
            return str(link.filename)
        named = _NAMED_FILE.search(str(link))
        if named:
            return named.group(1)
    return None


# ---- report folders: what is riskreport's ----------------------------------------------------


def read_record(folder: Path) -> dict | None:
    """The `params.json` of a riskreport report folder, or None when `folder` is not one."""
    try:
        record = json.loads((folder / "params.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(record, dict) and "template" in record and "status" in record:
        return record
    return None


def owned_files(folder: Path, record: dict | None = None) -> set[str]:
    """Relative paths (posix) of the files riskreport wrote in a report folder."""
    record = read_record(folder) if record is None else record
    if record is None:
        return set()
    listed = record.get("files")
    if isinstance(listed, list) and all(isinstance(f, str) for f in listed):
        return {f for f in listed if _inside(f)}
    legacy = {f for f in LEGACY_REPORT_FILES if (folder / f).is_file()}
    tables = [*(folder / "tables").glob("*.csv"), *(folder / "tables").glob("*.csv.gz")]
    return legacy | {p.relative_to(folder).as_posix() for p in tables}


def _inside(relative: str) -> bool:
    parts = Path(relative).parts
    return bool(parts) and not Path(relative).is_absolute() and ".." not in parts


def list_files(folder: Path) -> list[str]:
    """Every file below `folder`, as sorted relative posix paths."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())


@dataclass(frozen=True)
class Destination:
    """Where a report goes and how it replaces what is there.

    `mode`: "new" (nothing there), "swap" (an empty folder or a report holding only its own
    files: renamed over in one step) or "merge" (riskreport's files replaced one by one, every
    other file kept). `build_in` is the folder that holds the temporary build folder.
    """

    final: Path
    mode: str
    build_in: Path
    kept: tuple[str, ...] = ()


def plan_destination(
    out: str | os.PathLike, *, force: bool = False, names: tuple[str, str] = ("--out", "--force")
) -> Destination:
    """Check an explicit report folder (`--out`) before any work starts.

    `names`: how the caller calls the folder and the force in messages (`Analysis.save`: save and force=True).

    A missing folder is created (its parent must exist). An existing folder is used when it is
    empty or a previous riskreport report; any other folder needs `force`, and even then only
    riskreport's own files are replaced: a file of the same name that riskreport did not write
    is an error.
    """
    flag, forced = names
    final = Path(out).expanduser().absolute()
    final = final.parent.resolve() / final.name if final.name else final.resolve()
    if final.exists() and not final.is_dir():
        raise DestinationError(f"{flag} {final}: this is a file, not a folder. Give a folder for the report.")
    parent = final.parent
    if not final.exists():
        if not parent.is_dir():
            raise DestinationError(
                f"{flag} {final}: its parent folder {parent} does not exist. Create it first, or choose another folder."
            )
        check_writable(parent, f"{flag} {final}")
        return Destination(final, "new", parent)
    entries = list(final.iterdir())
    record = read_record(final)
    owned = owned_files(final, record)
    foreign = sorted(
        p.relative_to(final).as_posix()
        for p in final.rglob("*")
        if (p.is_file() or p.is_symlink()) and p.relative_to(final).as_posix() not in owned
    )
    if record is None and entries and not force:
        shown = ", ".join(sorted(p.name for p in entries)[:5]) + (", ..." if len(entries) > 5 else "")
        raise DestinationError(
            f"{flag} {final}: the folder is not empty and is not a riskreport report (no params.json of one); "
            f"it holds {shown}. riskreport never deletes files it did not write: choose a new or empty "
            f"folder, or pass {forced} to add the report's files (report.html, report.ipynb, params.json, "
            "tables/) beside the files already there."
        )
    parent_ok = _writable(parent)
    if not entries or (record is not None and not foreign and not _extra_folders(final, owned)):
        if parent_ok:
            check_writable(final, f"{flag} {final}")
            return Destination(final, "swap", parent)
    check_writable(final, f"{flag} {final}")
    return Destination(final, "merge", parent if parent_ok else final, tuple(foreign))


def _extra_folders(folder: Path, owned: set[str]) -> bool:
    """True when `folder` holds a sub-folder that no owned file lies in (an empty folder of the user's)."""
    ours = {Path(f).parent.as_posix() for f in owned}
    return any(p.is_dir() and p.relative_to(folder).as_posix() not in ours for p in folder.rglob("*"))


def _writable(folder: Path) -> bool:
    try:
        check_writable(folder, "")
    except DestinationError:
        return False
    return True


def collisions(work: Path, destination: Destination) -> list[str]:
    """Files the new report would overwrite that riskreport did not write (a merge refuses them)."""
    if destination.mode != "merge":
        return []
    return sorted(set(list_files(work)) & set(destination.kept))


def merge_into(work: Path, final: Path) -> None:
    """Replace riskreport's files in `final` by those of `work`; leave every other file alone.

    Files of the previous report that the new one does not have are deleted (they were
    riskreport's); then each new file is renamed into place, params.json last so that the
    folder reads as the new report only once every file is there.
    """
    old = owned_files(final)
    new = list_files(work)
    for relative in sorted(old - set(new)):
        target = final / relative
        if target.is_file() or target.is_symlink():
            target.unlink()
            _remove_empty_parents(target.parent, final)
    for relative in sorted(new, key=lambda f: f == "params.json"):
        target = final / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(work / relative, target)
    shutil.rmtree(work, ignore_errors=True)


def _remove_empty_parents(folder: Path, top: Path) -> None:
    while folder != top and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
