"""What a reader sees: report pages (tables, verdict matrices, prose), figures, LaTeX tables and the
standalone HTML export.

Two floors, the lower two side by side, each importing only those below it (the import-linter contract in
pyproject.toml): `pages` (the `Page` a template writes through, its prose, the Bayesian and non-deterministic
pages, the standalone HTML export and its nbconvert template) -> `plotting` (the plot functions, their layout and
colours, figures drawn on the other core, written and kept) | `tabular` (the wide tables in HTML, LaTeX and CSV).
Each module is also reached by its short name (`MODULES`): `render.plots`, `from riskreport.render import report`.
"""

from riskreport.short_names import short_module

# Each module by its short name (`render.tables`, `from riskreport.render import bayes`), imported on first use.
MODULES = {
    **{m: f"pages.{m}" for m in ("report", "report_text", "bayes", "nondeterministic", "changes", "export")},
    **{
        m: f"plotting.{m}"
        for m in (
            "plots",
            "inference_plots",
            "instance_plots",
            "plot_layout",
            "palette",
            "drawing",
            "figures",
            "figure_store",
        )
    },
    **{m: f"tabular.{m}" for m in ("tables", "html", "latex", "latex_tables", "csv_writer", "campaign")},
}


def __getattr__(name: str):
    return short_module(__name__, MODULES, name)
