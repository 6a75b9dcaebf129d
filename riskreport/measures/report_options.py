"""The check of a report's other options (those of its template) against its resolved parameters, before any
notebook starts."""

from __future__ import annotations

from riskreport.measures.measure_names import canonical_measure
from riskreport.options import check_options


def check_report_options(parameters: dict, params=None) -> dict:
    """`riskreport.options.check_options` (`params`: the report's resolved `ReportParameters`, for `focus_system`),
    and each measure of `other_measures`/`measures` parsed by ir_measures (an unknown measure is named before any
    run is evaluated)."""
    check_options(parameters, params)
    for name in ("other_measures", "measures"):
        for measure in parameters.get(name) or ():
            canonical_measure(measure)
    return parameters
