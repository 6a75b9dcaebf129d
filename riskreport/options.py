"""Report options checked before anything runs: the α grid, the URisk sign convention, corrections, seeds,
sample counts, levels. Pure (only `riskreport.errors`), so every layer can check the options it receives."""

from __future__ import annotations

from riskreport.errors import ParameterError, UnknownNameError

CORRECTIONS = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh", "none": None}  # name -> statsmodels'


def check_alphas(alphas) -> list[float]:
    """The α grid as sorted unique finite floats ≥ 0."""
    if isinstance(alphas, (int, float)) and not isinstance(alphas, bool):
        alphas = [alphas]
    if isinstance(alphas, (str, bytes, dict)) or not hasattr(alphas, "__iter__"):
        raise ParameterError(f"alphas must be a list of non-negative numbers, got {alphas!r}.")
    try:
        values = [float(a) for a in alphas if not isinstance(a, bool)]
    except (TypeError, ValueError):
        raise ParameterError(f"alphas must be a list of non-negative numbers, got {alphas!r}.") from None
    if not values or len(values) != len(list(alphas)) or any(not (a >= 0) or a == float("inf") for a in values):
        raise ParameterError(f"alphas must be a non-empty list of finite non-negative numbers, got {alphas!r}.")
    return sorted(set(values))


MAX_BOOTSTRAP_SAMPLES = 1_000_000  # B x topics resample counts are held in memory
CONVENTIONS = ("standard", "minus")  # how URisk is signed (stats.risk)


def check_options(parameters: dict, params=None) -> dict:
    """The one check of the report options templates share: before a kernel starts, in a template's first
    cell, and inside the functions an option reaches (a wrong value from Python is the same error).

    Types are checked against the template's declaration (`runner.coerce_parameter`); this checks
    values: `seed` ≥ 0, 1 ≤ `bootstrap_samples` ≤ 1,000,000, `ci_levels` in (0, 1), `topic_alphas`
    like `alphas`, `convention`, `correction`, `max_figure_systems` ≥ 1, `delta0` > 0, `sig_level`
    in (0, 1) (in (0, 0.5) with `delta0`: the equivalence tests), `other_measures` (a list of measure
    strings; `measures.params.check_report_options` also parses each) and, given the resolved
    `params` (anything with `challengers`), `focus_system` (must be a challenger). Other names pass
    unchanged; a bad value raises `ParameterError` naming the parameter. Pure: no riskreport import
    beyond the errors, so the statistics check their options without the file readers.
    """

    def whole(name, low, high=None):
        value = parameters[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high and value > high):
            bound = f"between {low:,} and {high:,}" if high else f"≥ {low}"
            raise ParameterError(f"{name} must be a whole number {bound}, got {value!r}.")

    def choice(name, allowed):
        if parameters[name] not in allowed:
            raise ParameterError(f"{name} must be one of {', '.join(allowed)}, got {parameters[name]!r}.")

    checks = {
        "seed": lambda: whole("seed", 0),
        "bootstrap_samples": lambda: whole("bootstrap_samples", 1, MAX_BOOTSTRAP_SAMPLES),
        "max_figure_systems": lambda: whole("max_figure_systems", 1),
        "convention": lambda: choice("convention", CONVENTIONS),
        "correction": lambda: choice("correction", CORRECTIONS),
        "ci_levels": lambda: _check_levels(parameters["ci_levels"]),
        "topic_alphas": lambda: _check_topic_alphas(parameters["topic_alphas"]),
        "delta0": lambda: _check_positive("delta0", parameters["delta0"]),
        "sig_level": lambda: _check_sig_level(parameters["sig_level"], equivalence="delta0" in parameters),
        "other_measures": lambda: _check_measure_list(parameters["other_measures"]),
        "measures": lambda: _check_measure_list(parameters["measures"], "measures"),
        "focus_system": lambda: _check_focus(parameters["focus_system"], params),
    }
    for name in parameters:
        if name in checks:
            checks[name]()
    return parameters


def _check_levels(levels) -> None:
    if not (
        isinstance(levels, (list, tuple))
        and levels
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1 for v in levels)
    ):
        raise ParameterError(f"ci_levels must be a non-empty list of levels between 0 and 1, got {levels!r}.")


def _check_positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}.")


def _check_topic_alphas(values) -> None:
    if values is None:  # None: the report's own α grid
        return
    try:
        check_alphas(values)
    except ParameterError as error:
        raise ParameterError(f"topic_{error}") from None


def _check_sig_level(value, equivalence: bool = False) -> None:
    high = 0.5 if equivalence else 1
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < high:
        why = " for the equivalence tests" if equivalence else ""
        raise ParameterError(f"sig_level must be a number between 0 and {high:g}{why}, got {value!r}.")


def _check_measure_list(measures, name: str = "other_measures") -> None:
    if measures is None:
        return
    if (
        isinstance(measures, str)
        or not isinstance(measures, (list, tuple))
        or not all(isinstance(m, str) for m in measures)
    ):
        raise ParameterError(f"{name} must be a list of ir_measures strings, got {measures!r}.")


def _check_focus(system, params) -> None:
    if system is None or params is None:
        return
    if system not in params.challengers:
        raise UnknownNameError(
            "challenger",
            system,
            params.challengers,
            hint="(focus_system must be a challenger of this report, not the baseline)",
        )
