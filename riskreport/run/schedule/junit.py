"""`--junit FILE`: the verdicts of one report (`run`) or of every job (`batch`) as JUnit XML, so that CI systems
(GitLab, GitHub Actions, Jenkins) show risk verdicts in their test views.

One `<testsuite>` per report (named for the job, or the collection and template), one `<testcase>` per
(challenger, baseline, α), `classname` `riskreport.<suite>.<baseline>` and name `<challenger> at α=<α>`: it
fails when the verdict is risk (the report's one rule), with URisk, TRisk and the adjusted p-value in the
message; reward, inconclusive and undefined verdicts pass (their verdict is the case's `system-out`).
A report without verdicts (a template without a verdicts table, a failed job) is a suite without cases.

A suite's `time` is its report's duration (params.json `duration_s`) and each case's its share of it (the verdicts
of a report are computed together); its `report` property is the report's own stamped folder, not the `latest`
link that moves with the next run. Names come from users' files (a system name in a score CSV may hold any
character): characters XML 1.0 cannot hold (control characters such as ESC or form feed) are written as `\x1b`,
`\x0c`, ..., and `JUnit.replaced` says which were, so that the file is always well-formed XML.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from riskreport.io.files import DestinationError, check_writable, write_atomic

NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # outside XML 1.0's Char


@dataclass(frozen=True)
class Suite:
    """One report's suite: its `name`, summary.json (None: none), stamped folder and duration in seconds."""

    name: str
    summary: dict | None
    folder: str
    duration_s: float | None = None


@dataclass
class JUnit:
    """The JUnit XML `text` of some suites and the characters XML 1.0 cannot hold that were `replaced` in it."""

    text: str
    replaced: list[str] = field(default_factory=list)


def report_suite(folder: str | os.PathLike, name: str | None = None) -> Suite:
    """The suite of the report in `folder` (`latest` resolved to the stamped folder it points at): its summary.json
    and params.json duration; `name` by default its job, or its collection and template."""
    import json

    from riskreport.run.folders.summary import read_summary

    folder = Path(folder).resolve()
    summary = read_summary(folder)
    report = (summary or {}).get("report") or {}
    try:
        duration = json.loads((folder / "params.json").read_text(encoding="utf-8")).get("duration_s")
    except (OSError, ValueError, AttributeError):
        duration = None
    name = name or report.get("job") or f"{report.get('collection')}.{report.get('template')}"
    return Suite(str(name), summary, str(folder), duration if isinstance(duration, (int, float)) else None)


def junit_xml(suites: list[Suite]) -> JUnit:
    """The JUnit XML of `suites` (one `Suite` per report)."""
    replaced: dict[str, None] = {}

    def clean(value) -> str:
        def mark(match: re.Match) -> str:
            replaced[f"U+{ord(match[0]):04X}"] = None
            return f"\\x{ord(match[0]):02x}" if ord(match[0]) < 0x100 else f"\\u{ord(match[0]):04x}"

        return NOT_XML.sub(mark, str(value))

    root = ET.Element("testsuites", name="riskreport")
    total = failed = 0
    seconds = 0.0
    for entry in suites:
        name, verdicts = clean(entry.name), (entry.summary or {}).get("verdicts") or []
        risky = sum(v["verdict"] == "risk" for v in verdicts)
        duration = float(entry.duration_s or 0.0)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=name,
            tests=str(len(verdicts)),
            failures=str(risky),
            errors="0",
            skipped="0",
            time=f"{duration:.3f}",
        )
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="report", value=clean(entry.folder))
        for v in verdicts:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"riskreport.{name}.{clean(v['baseline'])}",
                name=f"{clean(v['system'])} at α={v['alpha']:g}",
                time=f"{duration / len(verdicts):.3f}",
            )
            numbers = ", ".join(
                f"{label} {v[key]:.4g}"
                for label, key in (("URisk", "urisk"), ("TRisk", "trisk"), ("p_adj", "p_adjusted"))
                if v.get(key) is not None
            )
            if v["verdict"] == "risk":
                message = f"{v['system']} is significantly riskier than {v['baseline']} at α = {v['alpha']:g}"
                failure = ET.SubElement(case, "failure", type="risk", message=clean(message))
                failure.text = numbers
            else:
                ET.SubElement(case, "system-out").text = clean(f"{v['verdict']} ({numbers})")
        total += len(verdicts)
        failed += risky
        seconds += duration
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("time", f"{seconds:.3f}")
    ET.indent(root)
    return JUnit(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n", list(replaced))


def check_junit_path(path: str | os.PathLike) -> Path:
    """Refuse, before a report runs, a `--junit` destination that cannot be written: a folder, a path through a
    regular file, a folder (or the first existing one above a missing folder) where no file can be created.
    Return the path, absolute."""
    path = Path(path).expanduser().absolute()
    what = f"--junit {path}"
    if path.is_dir():
        raise DestinationError(
            f"{what}: is a folder; give the path of the XML file to write (e.g. {path / 'risk.xml'})."
        )
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise DestinationError(f"{what}: {existing} is a file, not a folder.")
    check_writable(existing, what)
    return path


def write_junit(path: str | os.PathLike, suites: list[Suite]) -> tuple[Path, list[str]]:
    """Write `junit_xml(suites)` to `path` atomically (checked as `check_junit_path`); return the path and the
    characters that were replaced (`JUnit.replaced`)."""
    path = check_junit_path(path)
    junit = junit_xml(suites)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, junit.text)
    except OSError as error:
        raise DestinationError(f"--junit {path}: cannot write it ({error.strerror or error}).") from None
    return path, junit.replaced
