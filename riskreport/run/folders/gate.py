"""The risk gate of `riskreport run --fail-on risk` and `batch`: a status of its own (`GATE_EXIT`) when a
challenger is significantly riskier than its baseline under the report's verdict rule, one line per offending
(challenger, baseline, α). The report is written first; the gate reads its summary.json (`summary`).

    riskreport run --fail-on risk                  # any challenger, any α
    riskreport run --fail-on risk@5                # at α = 5 only
    riskreport run --fail-on-system weak-ql        # only these challengers (implies --fail-on risk)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from riskreport.errors import ParameterError, RiskReportError, UnknownNameError

GATE_EXIT = 4  # exit status of a run or batch whose gate found risk (0 ok, 1 error, 2 usage, 3 locked)


@dataclass(frozen=True)
class Gate:
    """What fails: a risk verdict at `alpha` (None: any α) of one of `systems` (empty: any challenger)."""

    alpha: float | None = None
    systems: tuple[str, ...] = ()


class RiskGateError(RiskReportError):
    """The gate found risk: `lines` name each offending (challenger, baseline, α); the report is in `report`."""

    exit_code = GATE_EXIT

    def __init__(self, report: str | os.PathLike, lines: list[str]):
        self.report, self.lines = Path(report), list(lines)
        super().__init__(f"risk gate: {len(self.lines)} risk verdict(s) in {self.report}:\n" + "\n".join(self.lines))

    def __reduce__(self):
        return (self.__class__, (self.report, self.lines))


class UngatedReportError(ParameterError):
    """The report is written but has no verdicts for the gate to judge (a template that declared none)."""

    def __init__(self, report: str | os.PathLike):
        self.report = Path(report)
        super().__init__(
            f"--fail-on: the report {self.report} has no verdicts to gate (its template wrote no "
            "tables/verdicts.csv); the risk gate needs a risk_report report."
        )

    def __reduce__(self):
        return (self.__class__, (self.report,))


def parse_gate(fail_on: str | None, systems=None, where: str = "--fail-on") -> Gate | None:
    """`fail_on` ("risk" or "risk@ALPHA") and the named challengers as a `Gate`; None when neither is given."""
    names = tuple(dict.fromkeys(str(s) for s in systems or ()))
    if fail_on is None:
        return Gate(systems=names) if names else None
    text = str(fail_on).strip()
    kind, _, alpha = text.partition("@")
    value: float | None = None
    if alpha:
        try:
            value = float(alpha)
        except ValueError:
            value = -1.0
    if kind != "risk" or (alpha and not (value is not None and 0 <= value < float("inf"))) or text.endswith("@"):
        raise ParameterError(
            f"{where} {fail_on!r}: expected risk (any α) or risk@ALPHA for one α of the report, e.g. risk@5."
        )
    return Gate(value, names)


def check_gate(gate: Gate | None, systems, alphas, template=None) -> None:
    """Refuse, before a report runs, a gate naming a system or an α the report does not have, or a gate on a
    `template` (`templates.Template`) that writes no verdicts (it could never judge)."""
    if gate is None:
        return
    if template is not None:
        check_gated_template(template.name, template.verdicts)
    for name in gate.systems:
        if name not in systems:
            raise UnknownNameError("system", name, list(systems), hint="(--fail-on-system names a challenger)")
    problem = alpha_outside(gate, alphas, "the report's grid")
    if problem:
        raise ParameterError(f"--fail-on risk@{gate.alpha:g}: {problem}.")


def alpha_outside(gate: Gate | None, alphas, grid: str) -> str | None:
    """What is wrong with the gate's α for the `grid` ("the report's grid") `alphas`: "α = 7 is not in the report's
    grid (0, 1, 5, 10)"; None when it is in it, no α is gated or the grid is not known (`alphas` None)."""
    if gate is None or gate.alpha is None or alphas is None:
        return None
    if any(abs(gate.alpha - float(a)) < 1e-9 for a in alphas):
        return None
    return f"α = {gate.alpha:g} is not in {grid} ({', '.join(f'{float(a):g}' for a in alphas)})"


def check_gated_template(name: str, verdicts: bool) -> None:
    """Refuse a gate on template `name` when it writes no verdicts table (`verdicts` False, `templates.Template`):
    its report would run in full, then the gate could not judge it."""
    if not verdicts:
        raise ParameterError(
            f"--fail-on: template {name!r} writes no verdicts (no tables/verdicts.csv), so the risk gate "
            "could never judge its report; gate a risk_report report instead."
        )


def gate_option(text: str) -> str:
    """The value of `--fail-on` checked as the command line reads it (a wrong kind is a usage error, exit 2)."""
    import argparse

    try:
        parse_gate(text)
    except ParameterError:
        raise argparse.ArgumentTypeError(
            f"expected risk (any α) or risk@ALPHA (one α ≥ 0 of the report, e.g. risk@5), got {text!r}"
        ) from None
    return text


def offenders(gate: Gate, summary: dict | None) -> list[str]:
    """One line per (challenger, baseline, α) of a summary.json that the gate fails, in the report's order."""
    lines = []
    for v in (summary or {}).get("verdicts") or []:
        if v["verdict"] != "risk" or (gate.systems and v["system"] not in gate.systems):
            continue
        if gate.alpha is not None and abs(v["alpha"] - gate.alpha) > 1e-9:
            continue
        numbers = ", ".join(
            f"{label} {v[key]:.4g}"
            for label, key in (("URisk", "urisk"), ("TRisk", "trisk"), ("p_adj", "p_adjusted"))
            if v.get(key) is not None
        )
        lines.append(
            f"risk: {v['system']} is significantly riskier than {v['baseline']} at α = {v['alpha']:g} ({numbers})"
        )
    return lines


def enforce_gate(gate: Gate | None, folder: Path) -> None:
    """Raise `RiskGateError` when the report in `folder` fails the gate, `ParameterError` when it has no verdicts."""
    if gate is None:
        return
    from riskreport.run.folders.summary import read_summary

    summary = read_summary(folder)
    if not (summary or {}).get("verdicts"):  # a gate that cannot judge must not pass unseen
        raise UngatedReportError(folder)
    lines = offenders(gate, summary)
    if lines:
        raise RiskGateError(folder, lines)
