"""A report's figures kept with the evaluations: a figure drawn once per content, its PNGs read back by the next report.

Drawing is most of what a warm report still does (a campaign's per-topic panels: 12 challengers x 250 topics,
hundreds of tick labels laid out twice). A figure of an `Analysis` is a function of its scores, parameters and
options, its name, number and caption, riskreport's code, the libraries that draw it and matplotlib's settings;
under a key made of all of them (`figure_key`) the cache (`riskreport.io.cache`, kind `figures`) keeps the two
PNGs a page uses, the 200-dpi file and the page's 100-dpi copy, byte for byte. Only PNG pages are kept (SVG and
PDF are drawn anew); a missing or damaged entry means drawing the figure, nothing else.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

KIND = "figures"


def figure_key(analysis, name: str, number: int, caption: str, formats: tuple[str, ...]) -> str | None:
    """The cache key of figure `name` of `analysis` drawn as figure `number` with `caption`; None when it is not
    kept (another format than PNG asked for, or an analysis loaded from a folder, whose scores may be gone)."""
    if tuple(formats) != ("png",) or getattr(analysis, "record", None) is not None:
        return None
    from riskreport.io.cache import cache_key
    from riskreport.io.fingerprint import code_digest, versions
    from riskreport.render.plotting.drawing import style_snapshot

    p = analysis.params
    drawn = {k: str(v) for k, v in style_snapshot().items()}  # what a figure is drawn with: not `interactive`,
    style = hashlib.sha256(json.dumps(drawn, sort_keys=True).encode())  # which pyplot sets at a kernel's first figure
    return cache_key(
        KIND,
        matrix=analysis.matrix_sha256,
        baselines=[p.baseline, *p.all_baselines],
        alphas=p.alphas,
        measure=p.measure,
        sig_level=p.sig_level,
        options={k: v for k, v in analysis.options.items()},
        name=name,
        number=number,
        caption=caption,
        code=code_digest(),
        versions=versions("numpy", "scipy", "pandas", "statsmodels", "matplotlib", "seaborn", "pillow"),
        style=style.hexdigest(),
    )


def load(key: str) -> tuple[bytes, bytes] | None:
    """(the 200-dpi PNG file, the page's copy) kept under `key`, or None."""
    from riskreport.io.cache import Cache

    hit = Cache(KIND).get_arrays(key)
    if hit is None or set(hit[0]) != {"png_file", "png_page"}:
        return None
    return hit[0]["png_file"].tobytes(), hit[0]["png_page"].tobytes()


def keep(key: str, file: Path, page: bytes) -> None:
    """Keep the PNG `file` (as written) and the page's copy under `key`."""
    from riskreport.io.cache import Cache

    arrays = {
        "png_file": np.frombuffer(file.read_bytes(), dtype=np.uint8),
        "png_page": np.frombuffer(page, dtype=np.uint8),
    }
    Cache(KIND).put_arrays(key, arrays, {"file": file.name})
