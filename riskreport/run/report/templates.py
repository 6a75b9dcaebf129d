"""Templates: where a template name is looked up, what a template declares (its papermill parameters and
notebook metadata), and a user-given parameter checked against its declaration."""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from riskreport.errors import ParameterError, RiskReportError, UnknownNameError
from riskreport.io.collection import PROJECT_ROOT

# parameters that may name an input file, with the reader that checks it (module, function; imported when a file
# is given, so that finding a template imports no pandas): the file is hashed with the collection's
FILE_PARAMETERS = {
    "systems": ("riskreport.io.trec", "read_system_list"),
    "pool": ("riskreport.io.trec", "read_system_list"),
    "rank_gains": ("riskreport.io.trec", "read_rank_gains"),
    "run_scores": ("riskreport.io.letor", "read_run_scores"),
}
VERDICTS_TABLE = re.compile(
    r"""["']verdicts["']"""
)  # a code cell naming the verdicts table (`save_table(t, "verdicts")`)


CONTEXT = "context"  # the template parameter the runner sets (report.Page): not the user's, not in the fingerprint
# The templates riskreport ships (pyproject.toml's package data lists the same files, and only them). Of the
# installed templates folder a bare name reaches these alone: in a checkout that folder is the repository's
# templates/, where `riskreport new-template` also scaffolds from the repository root, and a template scaffolded
# there is the user's, found as it is beside an installed wheel (by path), never packed into a wheel.
BUILT_IN = ("bayesian_risk", "nondeterministic", "risk_ltr", "risk_report")


@dataclass(frozen=True)
class Template:
    name: str
    path: Path
    parameters: dict  # name -> {"default": str, "type": str, "help": str}
    description: str
    instances: bool = False  # notebook metadata riskreport.instances: the template reads non-deterministic systems
    letor: bool = False  # notebook metadata riskreport.letor: `collection` is a LETOR data folder (riskreport.ltr)
    origin: str = "given as a path"  # where it was found: "installed", "$RISKREPORT_TEMPLATES", "given as a path"
    verdicts: bool = False  # it writes tables/verdicts.csv (metadata riskreport.verdicts, else a code cell naming
    # the "verdicts" table): only such a report can be gated (`gate.check_gated_template`)


def template_dirs() -> list[tuple[Path, str]]:
    """Folders a bare template name is looked up in, first match wins: `$RISKREPORT_TEMPLATES`, then
    the installed templates.

    The working directory is deliberately not searched: a `templates/` folder that anyone could
    write to must not replace the installed templates (templates are code). A template there
    runs when given as a path (`riskreport run templates/my.ipynb`).
    """
    dirs = [
        (Path(p), "$RISKREPORT_TEMPLATES") for p in os.environ.get("RISKREPORT_TEMPLATES", "").split(os.pathsep) if p
    ]
    dirs.append((installed_templates(), "installed"))
    out: list[tuple[Path, str]] = []
    for folder, origin in dirs:
        if folder.is_dir() and folder.resolve() not in [o.resolve() for o, _ in out]:
            out.append((folder, origin))
    return out


def installed_templates() -> Path:
    """The built-in templates: `riskreport/templates` of an installed package (the wheel maps the repository's
    top-level templates/ there), else the checkout's templates/ (where analysts edit them)."""
    shipped = Path(__file__).resolve().parents[2] / "templates"
    return shipped if shipped.is_dir() else PROJECT_ROOT / "templates"


def named_templates(folder: Path, origin: str) -> list[Path]:
    """The notebooks of one of `template_dirs` that a bare name reaches: every `*.ipynb` of a `$RISKREPORT_TEMPLATES`
    folder; of the installed templates the built-in ones (`BUILT_IN`) only, in a checkout as in a wheel."""
    if origin == "installed":
        return [folder / f"{name}.ipynb" for name in BUILT_IN if (folder / f"{name}.ipynb").is_file()]
    return sorted(folder.glob("*.ipynb"))


def list_templates() -> list[Template]:
    seen: dict[str, Template] = {}
    for folder, origin in template_dirs():
        for path in named_templates(folder, origin):
            if path.stem not in seen:
                seen[path.stem] = load_template(path, origin)
    return list(seen.values())


def find_template(spec: str | os.PathLike) -> Template:
    """A template by name (see `template_dirs`) or by path (anything ending in .ipynb or holding a '/').

    A name loads the one notebook it names, the first of `template_dirs` that holds it, as `list_templates`
    would find it (reading every template to find one took ~1 s of each `riskreport run`)."""
    return load_template(*template_path(spec))


def template_path(spec: str | os.PathLike) -> tuple[Path, str]:
    """The file a template name or path means and where it was found (`find_template`), without reading it."""
    text = str(spec)
    path = Path(text).expanduser()
    if path.suffix == ".ipynb" or os.sep in text or "/" in text:
        if not path.is_file():
            raise RiskReportError(
                f"Template file {path} does not exist (give a template name, or the path of an .ipynb file)."
            )
        return path, "given as a path"
    if text and not text.startswith("."):  # a glob of *.ipynb, as list_templates's, never lists a hidden file
        for folder, origin in template_dirs():
            if folder / f"{text}.ipynb" in named_templates(folder, origin):
                return folder / f"{text}.ipynb", origin
    hint = (
        "Give a template by name (an installed template or one in $RISKREPORT_TEMPLATES) or by path to an .ipynb file."
    )
    local, checkout = Path.cwd() / "templates" / f"{text}.ipynb", installed_templates() / f"{text}.ipynb"
    if local.is_file():
        hint += (
            f" {local} is not used for a bare name, since templates are code and the working directory "
            f"may be shared: run it as templates/{text}.ipynb, or add its folder to $RISKREPORT_TEMPLATES."
        )
    elif checkout.is_file():  # scaffolded beside the built-in templates of a checkout: the user's, by path too
        hint += (
            f" {checkout} is not one of riskreport's built-in templates ({', '.join(BUILT_IN)}): run it by its "
            "path, or add its folder to $RISKREPORT_TEMPLATES."
        )
    raise UnknownNameError("template", text, template_names(), hint=hint)


def template_names() -> list[str]:
    """The names `list_templates` finds, without reading a notebook (an unknown name is refused at once)."""
    names: dict[str, None] = {}
    for folder, origin in template_dirs():
        names.update((path.stem, None) for path in named_templates(folder, origin))
    return list(names)


def load_template(path: Path, origin: str = "given as a path") -> Template:
    import papermill

    notebook = _read_notebook(path)
    try:
        parameters = papermill.inspect_notebook(str(path))
    except Exception as error:  # noqa: BLE001 - papermill raises many kinds for a broken notebook
        raise RiskReportError(f"{path}: not a readable notebook template ({error})") from None
    params = {
        name: {"default": p["default"], "type": p["inferred_type_name"], "help": p["help"]}
        for name, p in parameters.items()
    }
    return _outline(path, notebook, origin, params)


def template_outline(path: Path, origin: str = "given as a path") -> Template:
    """A template's name, flags and description without its parameters (no papermill import: what a command
    checks before the heavy imports; `load_template` reads the parameters too)."""
    return _outline(path, _read_notebook(path), origin, {})


def _read_notebook(path: Path):
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except Exception as error:  # noqa: BLE001 - nbformat raises many kinds for a broken notebook
        raise RiskReportError(f"{path}: not a readable notebook template ({error})") from None


def _outline(path: Path, notebook, origin: str, params: dict) -> Template:
    """The `Template` of a notebook read from `path` whose parameters are `params`."""
    description = next(
        (
            c.source.strip().splitlines()[0].lstrip("# ").strip()
            for c in notebook.cells
            if c.cell_type == "markdown" and c.source.strip()
        ),
        "",
    )
    flags = notebook.metadata.get("riskreport", {})
    verdicts = flags.get("verdicts")
    if not isinstance(verdicts, bool):
        verdicts = any(c.cell_type == "code" and VERDICTS_TABLE.search(c.source) for c in notebook.cells)
    return Template(
        path.stem,
        path.resolve(),
        params,
        description,
        instances=bool(flags.get("instances", False)),
        origin=origin,
        letor=bool(flags.get("letor", False)),
        verdicts=verdicts,
    )


def coerce_parameter(template: Template, name: str, value):
    """Check a user-given parameter against the template's declaration; return the typed value.

    Text values (from the CLI or a job file) are read as Python literals where the declared
    type is not `str`; only plain data (numbers, text, booleans, None, lists, dicts) passes.
    `systems` and `pool` also take the path of a file listing systems (`params.choose_systems`),
    `rank_gains` the path of a per-rank gains table: read here (errors name the file and line) and
    passed on as an absolute path.
    """
    if name not in template.parameters:
        raise UnknownNameError(
            "parameter", name, list(template.parameters), hint=f"(parameters of template {template.name!r})"
        )
    declared = template.parameters[name]["type"].replace(" ", "")
    optional = declared.startswith("Optional[") and declared.endswith("]")
    base = declared[len("Optional[") : -1] if optional else declared
    kind = base.split("[", 1)[0].lower()
    if name in FILE_PARAMETERS and kind in ("list", "str") and _is_system_file(value):
        path = Path(value).expanduser().resolve()  # the kernel runs in the report's build folder: an absolute path
        module, reader = FILE_PARAMETERS[name]
        getattr(importlib.import_module(module), reader)(path)  # a format error now, naming the file and line
        return str(path)
    if isinstance(value, str) and kind != "str":
        value = _literal(value, default=value)
    if value is None and (optional or kind == "none"):
        return None
    if kind == "str" and isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    accepted = {
        "int": (int,),
        "float": (int, float),
        "str": (str,),
        "bool": (bool,),
        "list": (list, tuple),
        "dict": (dict,),
    }.get(kind)
    if accepted and (not isinstance(value, accepted) or (kind in ("int", "float") and isinstance(value, bool))):
        raise ParameterError(
            f"Parameter {name!r} of template {template.name!r} expects {declared}, "
            f"got {value!r} ({type(value).__name__})."
        )
    if isinstance(value, tuple):
        value = list(value)
    if kind == "list" and base.lower() in ("list[float]", "list[int]", "list[str]"):
        item = {"list[float]": (int, float), "list[int]": (int,), "list[str]": (str,)}[base.lower()]
        if not all(isinstance(v, item) and not isinstance(v, bool) for v in value):
            raise ParameterError(f"Parameter {name!r} expects {declared}, got {value!r}.")
    if not _is_plain_data(value):
        raise ParameterError(
            f"Parameter {name!r}: only numbers, strings, booleans, None and lists/dicts of them "
            f"are allowed, got {type(value).__name__}."
        )
    return value


def _is_system_file(value) -> bool:
    from riskreport.measures.params import is_system_file

    return is_system_file(value)


def _is_plain_data(value) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, list):
        return all(_is_plain_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain_data(v) for k, v in value.items())
    return False


def _literal(text: str, default=None):
    import ast

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return default
