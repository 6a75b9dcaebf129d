"""The colours of every figure: verdicts (risk, reward, neither), wins and losses, and one colour and
marker per system (`Palette`), the baseline black and thick."""

from __future__ import annotations

VERDICT_COLOURS = {"risk": "#d95f02", "reward": "#1b9e77", "inconclusive": "#777777", "undefined": "#777777"}
RISK_COLOURS = {"win": VERDICT_COLOURS["reward"], "loss": VERDICT_COLOURS["risk"], "tie": "#999999"}  # per topic
# Colour-blind-safe qualitative colours (Okabe & Ito 2008, then Paul Tol's "muted"); markers tell repeats apart.
SYSTEM_COLOURS = [
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#F0E442",
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#882255",
    "#AA4499",
    "#DDCC77",
    "#CC6677",
]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*"]
BASELINE_STYLE = {"color": "black", "linewidth": 2.6, "marker": "s", "zorder": 5}


class Palette(dict):
    """One colour and marker per system for every figure of a report; the baseline black and thick.

    >>> palette = Palette(["bm25", "dense", "llm"], baseline="bm25")
    >>> palette["bm25"]["color"], palette["dense"]["color"]
    ('black', '#E69F00')
    """

    def __init__(self, systems, baseline: str | None = None):
        super().__init__()
        self.baseline = baseline
        others = [s for s in dict.fromkeys(systems) if s != baseline]
        for i, system in enumerate(others):
            self[system] = {
                "color": SYSTEM_COLOURS[i % len(SYSTEM_COLOURS)],
                "linewidth": 1.4,
                "marker": MARKERS[(i // len(SYSTEM_COLOURS) + i) % len(MARKERS)],
                "zorder": 3,
            }
        if baseline is not None:
            self[baseline] = dict(BASELINE_STYLE)

    def colour(self, system: str) -> str:
        return self.get(system, {"color": VERDICT_COLOURS["inconclusive"]})["color"]

    def colours(self) -> dict[str, str]:
        return {system: style["color"] for system, style in self.items()}


def palette_for(systems, palette: Palette | None, baseline: str | None = None) -> Palette:
    return palette if palette is not None else Palette(systems, baseline)
