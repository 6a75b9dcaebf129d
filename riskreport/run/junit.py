"""`--junit FILE`: the verdicts of one report (`run`) or of every job (`batch`) as JUnit XML, so that CI systems
(GitLab, GitHub Actions, Jenkins) show risk verdicts in their test views.

One `<testsuite>` per report (named for the job, or the collection and template), one `<testcase>` per
(challenger, baseline, α), `classname` `riskreport.<suite>.<baseline>` and name `<challenger> at α=<α>`: it
fails when the verdict is risk (the report's one rule), with URisk, TRisk and the adjusted p-value in the
message; reward, inconclusive and undefined verdicts pass (their verdict is the case's `system-out`).
A report without verdicts (a template without a verdicts table, a failed job) is a suite without cases.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from riskreport.io.files import write_atomic


def junit_xml(suites: list[tuple[str, dict | None, str]]) -> str:
    """The JUnit XML of `suites`: (name, summary.json of the report or None, the report's folder)."""
    root = ET.Element("testsuites", name="riskreport")
    total = failed = 0
    for name, summary, folder in suites:
        verdicts = (summary or {}).get("verdicts") or []
        risky = sum(v["verdict"] == "risk" for v in verdicts)
        suite = ET.SubElement(
            root, "testsuite", name=name, tests=str(len(verdicts)), failures=str(risky), errors="0", skipped="0"
        )
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="report", value=str(folder))
        for v in verdicts:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"riskreport.{name}.{v['baseline']}",
                name=f"{v['system']} at α={v['alpha']:g}",
            )
            numbers = ", ".join(
                f"{label} {v[key]:.4g}"
                for label, key in (("URisk", "urisk"), ("TRisk", "trisk"), ("p_adj", "p_adjusted"))
                if v.get(key) is not None
            )
            if v["verdict"] == "risk":
                failure = ET.SubElement(
                    case,
                    "failure",
                    type="risk",
                    message=f"{v['system']} is significantly riskier than {v['baseline']} at α = {v['alpha']:g}",
                )
                failure.text = numbers
            else:
                ET.SubElement(case, "system-out").text = f"{v['verdict']} ({numbers})"
        total += len(verdicts)
        failed += risky
    root.set("tests", str(total))
    root.set("failures", str(failed))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: str | os.PathLike, suites: list[tuple[str, dict | None, str]]) -> Path:
    """Write `junit_xml(suites)` to `path` atomically; return the path."""
    path = Path(path)
    if path.parent and not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, junit_xml(suites))
    return path
