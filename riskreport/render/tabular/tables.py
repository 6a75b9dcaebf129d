"""The report's wide tables: the verdict matrix (one column group per baseline and α), and URisk/TRisk, intervals
and tests side by side with the verdicts (shown as interactive tables, `riskreport.render.tabular.html`)."""

from __future__ import annotations

import html

import pandas as pd

from riskreport.measures.params import ReportParameters
from riskreport.render.tabular.html import (  # noqa: F401 - importable from here as before
    FAST_HTML_CELLS,
    HTML,
    WHOLE_ROWS,
    _alpha_label,
    _short_p,
    _signed,
    fixed,
    interactive,
    note,
    side_by_side,
    styled,
    styler_html,
)

VERDICT_COLOURS = {
    "risk": "background-color: #fde0d2",
    "reward": "background-color: #d9f0e3",
    "undefined": "background-color: #eeeeee",
}


VERDICT_ANCHOR = "verdict-matrix"


def back_link() -> HTML:
    """A line linking back to the verdict matrix at the top of the page."""
    return HTML(
        f"<p class='rr-note'><a href='#{VERDICT_ANCHOR}'>↑ verdicts per system and α</a> (the one "
        "significance rule of this report)</p>"
    )


PAGE_ROWS = 3_000  # above this, a table of every method's verdict shows only the rows that differ from the rule


def interval_verdicts(
    verdicts: pd.DataFrame, summary: pd.DataFrame, limit: int = PAGE_ROWS
) -> tuple[pd.DataFrame, str]:
    """The interval methods' own verdicts for the page, and a caption that says which rows are shown.

    `verdicts` is `significance.report_verdicts`' first table (`kind` test or interval), `summary` its
    second (the rule's verdict per challenger and α). Up to `limit` rows: all of them. Beyond (a campaign:
    110 systems × 21 α × 5 methods = 11,550 rows, 7 MB of page), only the rows whose verdict differs from
    the rule's, with the rule's verdict beside them; every row stays in `tables/verdicts.csv`.
    """
    intervals = verdicts[verdicts["kind"] != "test"].drop(columns=["kind", "statistic", "p_adjusted"])
    if len(intervals) <= limit:
        return intervals, "Every interval method at the first level, with its own verdict"
    key = _key(intervals, summary)
    rule = summary[[*key, "verdict"]].rename(columns={"verdict": "rule_verdict"})
    both = intervals.merge(rule, on=key, how="left")
    same = both["verdict"].replace("undefined", "inconclusive") == both["rule_verdict"].replace(
        "undefined", "inconclusive"
    )
    differs = both[~same]
    return differs, (
        f"Interval methods whose verdict differs from the report's: {len(differs):,} of "
        f"{len(intervals):,} rows (every row: tables/verdicts.csv)"
    )


def flagged(summary: pd.DataFrame) -> list[str]:
    """The challengers the rule flags (▼ risk or ▲ reward against some baseline at some α), in the summary's order
    (riskiest first): the rows a paged table shows first (`interactive(..., flagged=...)`)."""
    hit = summary[summary["verdict"].isin(["risk", "reward"])]
    return [str(s) for s in dict.fromkeys(hit["system"])]


def verdict_matrix(
    summary: pd.DataFrame,
    convention: str = "standard",
    caption: str | None = None,
    page_size: int = WHOLE_ROWS,
    one_line: bool = False,
    first: list[str] | None = None,
) -> HTML:
    """Systems × α, each cell the rule's verdict with URisk and how many methods agree (where the rule is n/a,
    SE = 0: how many of the other methods are inconclusive, `verdict_summary`), coloured, riskiest first;
    with several baselines, one column group per baseline (its α beneath), each cell then shorter (▼/▲ mark).

    `summary` is `significance.report_verdicts(...)[1]` (already in risk order); `page_size` rows show at once,
    the systems `first` (default: those the rule flags, `flagged`) first; `one_line` keeps every verdict cell on
    one line (always so with several baselines).
    """
    order = list(dict.fromkeys(summary["system"]))
    baselines = list(dict.fromkeys(summary["baseline"])) if "baseline" in summary else [None]
    several = len(baselines) > 1
    text = (
        {"risk": "▼", "reward": "▲", "inconclusive": "·", "undefined": "n/a"}
        if several
        else {"risk": "▼ risk", "reward": "▲ reward", "inconclusive": "inconclusive", "undefined": "n/a (SE = 0)"}
    )
    cells = summary.assign(
        cell=[
            f"{text[v]} {fixed(u, 4, signed=True)} ({a}/{m})"  # n/a: (other methods inconclusive/other methods)
            for v, u, a, m in zip(
                summary["verdict"], _signed(summary["urisk"], convention), summary["agree"], summary["methods"]
            )
        ],
        label=[_alpha_label(a, convention) for a in summary["alpha"]],
    )
    labels = [_alpha_label(a, convention) for a in sorted(summary["alpha"].unique())]
    columns = ["label"] if not several else ["baseline", "label"]
    grid = pd.MultiIndex.from_product([baselines, labels]) if several else labels
    wide = cells.pivot(index="system", columns=columns, values="cell").reindex(index=order, columns=grid)
    colours = cells.pivot(index="system", columns=columns, values="verdict").reindex(index=order, columns=grid)
    differing = summary[summary["disagree"] != ""].groupby("system", sort=False)
    disagree = (
        {system: _methods_count(g["disagree"]) for system, g in differing}
        if several
        else {
            system: "; ".join(
                f"{_alpha_label(a, convention)} {_by_verdict(d)}" for a, d in zip(g["alpha"], g["disagree"])
            )
            for system, g in differing
        }
    )
    notes = pd.Series(disagree, dtype=object).reindex(order).fillna("")
    wide = wide.fillna("—" if several else "")
    if several:
        wide[("", "methods that disagree")] = notes.to_numpy()
        wide.insert(0, ("", "system"), wide.index)
        wide.columns = pd.MultiIndex.from_tuples(wide.columns, names=["baseline", None])
        colours = colours.reindex(columns=wide.columns)
    else:
        wide["methods that disagree"] = notes
        wide = wide.reset_index()
        colours = colours.reset_index(drop=True).reindex(columns=wide.columns)
    wide = wide.reset_index(drop=True)
    colours = colours.reset_index(drop=True)
    colours.columns = wide.columns
    style = (
        wide.style.hide(axis="index")
        .format(escape="html")
        .format_index(escape="html", axis=1)
        .set_properties(**{"text-align": "left"})
        .apply(
            lambda frame: colours.reindex(columns=frame.columns).map(
                lambda v: VERDICT_COLOURS.get(v, "") if isinstance(v, str) else ""
            ),
            axis=None,
        )
    )
    # one line per cell, with one baseline or several (the same cell style): 100 systems stay one screen each
    style = style.set_properties(subset=list(wide.columns[0 if one_line else 1 : -1]), **{"white-space": "nowrap"})
    if caption:
        style = style.set_caption(html.escape(caption))
    kind = " rr-verdict-groups" if several else ""
    return HTML(
        f"<div id='{VERDICT_ANCHOR}' class='rr-verdict-matrix{kind}'>"
        + interactive(style, page_size, flagged=flagged(summary) if first is None else first).markup
        + "</div>"
    )


def for_baseline(table: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """The rows of a report table (risk, tests, bootstrap, topics, verdicts) against one `baseline`."""
    return table[table["baseline"] == baseline].reset_index(drop=True) if "baseline" in table else table


def baselines_note(baselines: list[str], n_systems: int) -> HTML:
    """What a report with several baselines shows, and that its verdicts are corrected as one family."""
    if len(baselines) < 2:
        return HTML("")
    family = len(baselines) * (n_systems - 1)
    return note(
        f"This report compares every system with {len(baselines)} baselines ({', '.join(baselines)}): "
        f"the verdict matrix has one column group per baseline. The p-values are adjusted across the whole "
        f"family of {family} comparisons at each α (every baseline against every other system), so each "
        f"verdict accounts for every comparison in this report. The risk table is shown per baseline; the "
        f"other sections compare with the first baseline, {baselines[0]}, and every table in tables/*.csv "
        "holds every baseline (column `baseline`)."
    )


def _key(table: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    """The columns that identify a verdict in both tables: system and α, and the baseline when both have it."""
    return ["system", "baseline", "alpha"] if "baseline" in table and "baseline" in summary else ["system", "alpha"]


def _methods_count(disagreements: pd.Series) -> str:
    """`randomisation ×5, sign ×2`: in how many of a system's cells (baseline × α) each method disagrees with
    the rule (a matrix with several baselines; each cell's methods are in tables/verdicts.csv)."""
    counts: dict[str, int] = {}
    for text in disagreements:
        for item in text.split("; "):
            method = item.partition(": ")[0]
            counts[method] = counts.get(method, 0) + 1
    return ", ".join(f"{m} ×{n}" for m, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _by_verdict(disagree: str) -> str:
    """`sign: risk; bca: risk; wilcoxon: reward` -> `risk: sign bca; reward: wilcoxon`; more than two methods
    with one verdict are counted (`risk: 5 methods`); every method's verdict is in tables/verdicts.csv."""
    groups: dict[str, list[str]] = {}
    for item in disagree.split("; "):
        method, _, verdict = item.partition(": ")
        groups.setdefault(verdict, []).append(method)
    return ", ".join(
        f"{verdict}: {' '.join(methods) if len(methods) <= 2 else f'{len(methods)} methods'}"
        for verdict, methods in groups.items()
    )


def risk_wide(risk: pd.DataFrame, summary: pd.DataFrame, convention: str = "standard", caption: str | None = None):
    """URisk and TRisk per system (rows, riskiest first) and α (columns), with the rule's adjusted p and mark.

    TRisk to 2 decimals: five α fit a 1400 px page; the values that do not change with α are in `risk_counts`."""
    order = list(dict.fromkeys(summary["system"]))
    key = _key(risk, summary)
    merged = risk.drop(columns=["verdict", "p_adjusted"], errors="ignore").merge(
        summary[[*key, "p_adjusted", "verdict"]], on=key
    )
    merged["urisk"] = _signed(merged["urisk"], convention)
    merged["trisk"] = _signed(merged["trisk"], convention)
    merged["mark"] = merged["verdict"].map({"risk": " ▼", "reward": " ▲"}).fillna("")
    parts = []
    for alpha, at in merged.groupby("alpha", sort=True):
        label = _alpha_label(alpha, convention)
        at = at.set_index("system").reindex(order)
        parts.append(
            pd.DataFrame(
                {
                    f"URisk {label}": [f"{fixed(u, 4, signed=True)}{m}" for u, m in zip(at["urisk"], at["mark"])],
                    f"TRisk {label}": at["trisk"],
                    f"p_adj {label}": at["p_adjusted"],
                },
                index=order,
            )
        )
    wide = pd.concat(parts, axis=1).rename_axis("system").reset_index()
    verdict = merged.pivot(index="system", columns="alpha", values="verdict").reindex(order)
    style = styled(wide, precision=4, caption=caption).format(
        lambda v: fixed(v, 2, signed=True), subset=[c for c in wide.columns if c.startswith("TRisk")], na_rep="–"
    )
    for alpha in verdict.columns:
        column = f"URisk {_alpha_label(alpha, convention)}"
        colours = verdict[alpha].map(lambda v: VERDICT_COLOURS.get(v, "")).tolist()
        style = style.apply(lambda _, c=colours: c, subset=[column])
    return style


def risk_counts(risk: pd.DataFrame, summary: pd.DataFrame, caption: str | None = None):
    """What does not change with α, per system (rows, riskiest first): wins, losses, ties, FRisk, FReward,
    FRisk/FReward and losses > 20% (the companion of `risk_wide`)."""
    order = list(dict.fromkeys(summary["system"]))
    once = (
        risk.drop_duplicates("system")
        .set_index("system")
        .reindex(order)[["wins", "losses", "ties", "frisk", "freward", "risk_reward", "loss20"]]
        .rename(
            columns={"risk_reward": "FRisk/FReward", "loss20": "losses > 20%", "frisk": "FRisk", "freward": "FReward"}
        )
    )
    return styled(once.rename_axis("system").reset_index(), precision=4, caption=caption)


def ci_wide(
    boot: pd.DataFrame,
    summary: pd.DataFrame,
    method: str = "bca",
    convention: str = "standard",
    caption: str | None = None,
):
    """The `method` interval of URisk at each level per system (rows, riskiest first) and α (columns), its own
    verdict beside it, and ≠ where that verdict differs from the report's rule (no colour: colours are the rule's)."""
    from riskreport.stats.risk import to_convention

    order = list(dict.fromkeys(summary["system"]))
    shown = to_convention(boot[boot["method"] == method], convention)
    rule = summary.set_index(["system", "alpha"])["verdict"]
    shown = shown.assign(rule=rule.reindex(pd.MultiIndex.from_frame(shown[["system", "alpha"]])).to_numpy())
    same = (shown["verdict"] == shown["rule"]) | ((shown["verdict"] == "inconclusive") & (shown["rule"] == "undefined"))
    shown["cell"] = [
        f"[{fixed(lo, 4, signed=True)}, {fixed(hi, 4, signed=True)}] {v}{'' if s else ' ≠'}"
        for lo, hi, v, s in zip(shown["ci_low"], shown["ci_high"], shown["verdict"], same)
    ]
    shown["label"] = [f"{_alpha_label(a, convention)}, {lv:g}" for a, lv in zip(shown["alpha"], shown["level"])]
    labels = list(dict.fromkeys(shown.sort_values(["alpha", "level"])["label"]))
    wide = shown.pivot(index="system", columns="label", values="cell").reindex(index=order, columns=labels)
    return styled(wide.rename_axis("system").reset_index(), caption=caption)


def tests_wide(
    tests: pd.DataFrame,
    summary: pd.DataFrame,
    sig_level: float,
    convention: str = "standard",
    caption: str | None = None,
):
    """Adjusted p-values per system (rows, riskiest first), α (column groups) and test (columns beneath: t, sign,
    Wilcoxon, `rand.` the randomisation test); the t-test column is the rule (coloured by its verdict), the other
    tests' p-values below the level are bold. Two header rows keep 5 α × 4 tests within a 1400 px page."""
    order = list(dict.fromkeys(summary["system"]))
    short = {"randomisation": "rand.", "wilcoxon": "Wilcoxon"}
    ranked = {t: i for i, t in enumerate(("t", "sign", "wilcoxon", "randomisation"))}
    alphas = sorted(tests["alpha"].unique())
    names = sorted(tests["test"].unique(), key=lambda t: ranked.get(t, len(ranked)))
    grid = pd.MultiIndex.from_product([alphas, names])
    wide = tests.pivot(index="system", columns=["alpha", "test"], values="p_adjusted").reindex(
        index=order, columns=grid
    )
    wide.columns = pd.MultiIndex.from_tuples(
        [(_alpha_label(a, convention), short.get(t, t)) for a, t in wide.columns], names=[None, None]
    )
    table = wide.rename_axis("system").reset_index()
    table.columns = pd.MultiIndex.from_tuples([("", "system"), *table.columns[1:]])
    numbers = list(table.columns[1:])
    style = styled(table, caption=caption).format(_short_p, subset=numbers, na_rep="–")
    verdict = summary.set_index(["system", "alpha"])["verdict"]
    for alpha in alphas:
        colours = [VERDICT_COLOURS.get(verdict.get((s, alpha), ""), "") for s in table[("", "system")]]
        style = style.apply(lambda _, c=colours: c, subset=[(_alpha_label(alpha, convention), "t")])
    others = [c for c in numbers if c[1] != "t"]
    return style.map(lambda v: "font-weight: bold" if isinstance(v, float) and v < sig_level else "", subset=others)


def collection_overview(params: ReportParameters, scores, judged: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables: the collection in numbers, and per system its source, missing topics and judged fraction."""
    from riskreport.io.trec import read_qrels

    col = params.collection
    topics = "topics (with ≥ 1 relevant document)" if col.qrels is not None else "topics (scored in the table)"
    rows = [("systems in the report", len(params.systems)), (topics, len(scores.topics))]
    if col.qrels is not None:
        qrels = read_qrels(col.qrels)
        rows += [
            ("judgments", len(qrels)),
            ("relevant judgments (relevance > 0)", int((qrels["relevance"] > 0).sum())),
            ("judged topics without relevant documents (excluded)", qrels["query_id"].nunique() - len(scores.topics)),
        ]
    rows += [("system–topic pairs missing from runs (scored 0)", len(scores.missing))]
    if col.qrels is not None:
        rows += [("run topics absent from the qrels (dropped)", len(scores.extra))]
    overview = pd.DataFrame(rows, columns=["item", "value"])
    missing = scores.missing.groupby("system")["topic"].agg(lambda t: ", ".join(t))
    per_system = pd.DataFrame({"system": params.systems})
    per_system["role"] = ["baseline" if s == params.baseline else "challenger" for s in params.systems]
    per_system["missing topics (scored 0)"] = per_system["system"].map(missing).fillna("")
    if not judged.empty:
        per_system[f"judged fraction ({judged['measure'].iloc[0]})"] = per_system["system"].map(
            judged.set_index("system")["judged"]
        )
    return overview, per_system
