"""Data folders given by name or by path, the one lookup of collections (`riskreport.io.collection`) and
learning-to-rank folders (`riskreport.io.letor`): the data directories, a name looked up only inside them, a
synthetic demo made on first use where the package may write, and a folder's optional TOML settings file."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

from riskreport.errors import InputFormatError, RiskReportError, UnknownNameError
from riskreport.progress import stderr_printer

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# A source checkout (the repository, editable install) has its own data/ and templates/; an installed wheel has not.
CHECKOUT = (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "riskreport" / "__init__.py").is_file()
COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def user_data_dir() -> Path:
    """Where an installed riskreport keeps collections it makes (the demo): the platform's user data folder,
    e.g. `~/.local/share/riskreport` on Linux (`$XDG_DATA_HOME` respected), never inside site-packages."""
    from platformdirs import user_data_path

    return user_data_path("riskreport", appauthor=False)


def data_dirs() -> list[Path]:
    """Where collections given by name are looked up: $RISKREPORT_DATA, ./data, the checkout's data/ (in a source
    checkout) and the user data folder (`user_data_dir`, where an installed riskreport makes the demo)."""
    dirs = [Path(p) for p in os.environ.get("RISKREPORT_DATA", "").split(os.pathsep) if p]
    dirs += [Path.cwd() / "data"] + ([PROJECT_ROOT / "data"] if CHECKOUT else []) + [user_data_dir()]
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def available_collections() -> list[str]:
    """The names of the collections in the data directories (folders that look like one)."""
    names = {
        p.name
        for d in data_dirs()
        for p in d.iterdir()
        if p.is_dir() and looks_like_collection(p) and _inside(p, d) and COLLECTION_NAME.fullmatch(p.name)
    }
    return sorted(names)


def resolve_data_folder(spec: str | os.PathLike, demo: str, make_demo: Callable[[], Path]) -> Path:
    """A data folder from a name under a data directory, or from a path; the synthetic demo named `demo`, when
    no data directory holds it, made on first use by `make_demo`.

    A name (letters, digits, '.', '_', '-'; no '/', not starting with '.') is only ever looked
    up as a direct entry of a data directory, and a symbolic link there that leads outside
    that directory is refused: a name cannot reach outside data/. Anything else is a path,
    relative to the current directory, and means exactly that path.
    """
    text = str(spec)
    candidate = Path(text).expanduser()
    if candidate.is_dir() and (
        os.sep in text or "/" in text or text.startswith(".") or looks_like_collection(candidate)
    ):
        return candidate.resolve()
    if COLLECTION_NAME.fullmatch(text):
        for root in data_dirs():
            entry = root / text
            if entry.is_dir() and not _inside(entry, root):
                raise RiskReportError(
                    f"{entry} is a symbolic link to {entry.resolve()}, outside {root}: a collection given by name "
                    f"must live in a data directory. Give its path instead (--collection {entry.resolve()}) or "
                    "add its parent folder to RISKREPORT_DATA."
                )
            if entry.is_dir():
                return entry.resolve()
        if text == demo:  # the shipped demo, made on first use where the package may write
            return make_demo()
    _not_a_folder(text, candidate)
    raise UnknownNameError(
        "collection",
        text,
        available_collections(),
        hint="Give a collection by name (a folder under data/) or by path to its folder.",
    )


def _not_a_folder(text: str, candidate: Path) -> None:
    """What a path that is no data folder is: a file (a run file, a qrels file), or nothing at all (a mistyped
    path): said in those words rather than as an unknown name, which is what a bare name is."""
    if candidate.is_file():
        raise RiskReportError(
            f"{text} is a file, not a collection: give the folder that holds the qrels and runs/ (or scores.csv), "
            "a score table (*.csv), or a folder of runs with --qrels."
        )
    if not candidate.exists() and (not COLLECTION_NAME.fullmatch(text) or text.startswith("~")):
        missing = next((p for p in [candidate, *candidate.parents] if p.exists()), None)
        where = f" ({missing} exists, {candidate.relative_to(missing).parts[0]} does not)" if missing else ""
        raise RiskReportError(
            f"{text} does not exist{where}: give a collection by path to its folder, or by name (a folder "
            f"under a data directory: {', '.join(available_collections()) or 'none yet'})."
        )


def make_demo(path: Path, what: str, generate: Callable[[Path], Path], remedy: str) -> Path:
    """The synthetic demo `what` written to `path` by `generate`, saying so on stderr; where the package may not
    write, an error that names the folder and the `remedy` (a command)."""
    stderr_printer("riskreport: ")(f"making the synthetic {what} in {path}")
    try:
        return generate(path).resolve()
    except OSError as error:
        raise RiskReportError(
            f"Cannot make the {what} in {path}: {error}. Set RISKREPORT_DATA to a writable folder and run `{remedy}`."
        ) from None


def read_settings(path: Path, keys: set[str]) -> dict:
    """A data folder's optional TOML settings file (collection.toml, letor.toml): {} when there is none; an error
    naming the file for invalid TOML or a key not among `keys`."""
    if not path.is_file():
        return {}
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise InputFormatError(path, f"invalid TOML ({error})") from None
    unknown = sorted(set(config) - keys)
    if unknown:
        raise InputFormatError(
            path, f"unknown key(s) {', '.join(unknown)}", expected=f"keys among {', '.join(sorted(keys))}"
        )
    return config


def looks_like_collection(path: Path) -> bool:
    """Whether a folder has what a collection has: a scores.csv, a collection.toml or a runs/ folder."""
    return (path / "scores.csv").is_file() or (path / "collection.toml").is_file() or (path / "runs").is_dir()


def _inside(entry: Path, root: Path) -> bool:
    """Whether `entry` (a direct entry of `root`), links followed, is still a direct entry of `root`."""
    return entry.resolve().parent == root.resolve()
