"""Benchmark: Bayesian fits and reports, cold and warm: the compiled kernels' cache, the draws cache, the fits' cost.

Side by side in one run, each row a new process (Python start and imports included), to ESS ≥
`--target-ess` with the report's diagnostics:

- `zoib42 cold`: BHM-ZOiB on TREC-COVID's 42 pooled runs, empty caches (draws, numba's compiled kernels);
- `zoib42 new data`: 42 other runs of the 107 with the kernels compiled by the row above, no draws
  cached: what an analyst waits for after changing α, the collection or the systems;
- `zoib42 cached`: the first data again, its draws cached;
- `demo report cold` / `demo report, compile cache warm`: `riskreport run bayesian_risk` (6 fits), an empty
  cache, then with only the compiled kernels kept;
- `--rows real`: a bare papermill run of a one-cell notebook, then cold `riskreport run bayesian_risk` reports
  (empty caches each) of the demo, the thesis's Chapter 5 (TREC-COVID round 1's 42 pooled runs, RBP(p=0.8),
  baseline bm25_baseline, α 0 1), all 107 TREC-COVID round 1 runs (baseline BM25R2) and TREC Web 2012
  (ERR@20, baseline indriCASP) from ../shared (skipped when absent; `--real` picks some), wall and CPU seconds;
- `campaign cold`: a Robust04-shaped campaign (110 systems × 249 topics, generated) with ZOiB and Gaussian,
  empty caches (`--rows campaign`; long).

For every fit (of a report: read from its draws cache entry) the row prints gradients per unit of tail ESS
(warm-up included), µs of CPU per gradient, seconds compiling or loading the model and seconds sampling.

Generated data of the same shapes replace TREC-COVID when ../shared is absent. brms's and PyStan's
figures come from `bench_bayes.py --stan-python` (PyStan) and the README (brms; R is not installed).
Not collected by the test run; the 2 cores are shared, so repeat (`--repeat`) and read medians.

    python tests/benchmarks/bench_bayes_reuse.py [--repeat 3] [--rows fits report real campaign]
        [--real demo chapter5 covid107 web2012] [--campaign-models gaussian zoib] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
COVID = ROOT.parent / "shared" / "data" / "trec-covid-round1"

FIT = r"""
import json, resource, sys, time
started = time.time()
import pandas as pd
from riskreport import bayes
imported = time.time()
args = json.loads(sys.argv[1])
WORK = ("gradients_per_tail_ess", "us_per_gradient", "compile_seconds", "sampling_seconds", "min_ess_tail")
data = bayes.scores_data(pd.read_csv(args["scores"]))
lines = []
result = bayes.fit(args["model"], data, target_ess=args["target_ess"], cache_dir=args["cache"],
                   progress=lambda m: (lines.append((round(time.time() - started, 2), m)), print(m, file=sys.stderr, flush=True)))
done = time.time()
usage = resource.getrusage(resource.RUSAGE_SELF)
d = result.diagnostics
print(json.dumps({"total_s": done - started, "cpu_s": usage.ru_utime + usage.ru_stime, "import_s": imported - started,
                  "fits": [{"fit": result.label, **{k: d.get(k) for k in WORK}}],
                  "cached": result.cached, "draws": result.n_draws, "waic": result.criteria.get("waic"),
                  "min_ess_bulk": result.diagnostics["min_ess_bulk"],
                  "min_ess_tail": result.diagnostics["min_ess_tail"],
                  "max_rhat": result.diagnostics["max_rhat"], "divergences": result.diagnostics["divergences"],
                  "ok": result.ok, "lines": lines}))
"""


def tables(workdir: Path) -> dict[str, Path]:
    """zoib42 (the 42 pooled runs), other42 (42 other runs, the same shape) and the generated campaign, as CSV."""
    rng = np.random.default_rng(0)
    out = {}
    if COVID.is_dir():
        scores = pd.read_csv(COVID / "round1_data.csv")
        pooled = pd.read_csv(COVID / "round1_pooled.csv")
        pool = set(pooled.loc[pooled["pooled"] == 1, "system"])
        others = [s for s in dict.fromkeys(scores["system"]) if s not in pool][:42]
        found = {"zoib42": scores[scores["system"].isin(pool)], "other42": scores[scores["system"].isin(others)]}
    else:
        found = {name: generated(rng, 42, 30) for name in ("zoib42", "other42")}
    found["campaign"] = generated(np.random.default_rng(0), 110, 249)  # the same data with or without ../shared
    for name, table in found.items():
        out[name] = workdir / f"{name}.csv"
        table.to_csv(out[name], index=False)
    return out


def generated(rng, systems: int, topics: int) -> pd.DataFrame:
    """ZOiB-like scores: logit-normal means, beta noise, about 4.5% exact 0s and 1s."""
    mu = 1 / (1 + np.exp(-(rng.normal(-0.8, 0.5, systems)[:, None] + rng.normal(0, 1, topics)[None, :])))
    y = rng.beta(mu * 3, (1 - mu) * 3)
    y = np.where(rng.random(y.shape) < 0.045, (rng.random(y.shape) < 0.3).astype(float), y)
    return pd.DataFrame(
        {
            "system": np.repeat([f"s{i}" for i in range(systems)], topics),
            "topic": np.tile(np.arange(topics), systems),
            "score": y.ravel(),
        }
    )


def environment(cache: Path, compiledir: Path) -> dict:
    return {
        **os.environ,
        "RISKREPORT_CACHE": str(cache),
        "PYTENSOR_FLAGS": f"base_compiledir={compiledir}",
        "PYTHONPATH": str(ROOT),
    }


def fit_row(scores: Path, model: str, cache: Path, env: dict, target_ess: int) -> dict:
    args = {"scores": str(scores), "model": model, "cache": str(cache), "target_ess": target_ess}
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(FIT)
    try:
        out = subprocess.run(  # the fit's progress goes to this benchmark's stderr as it comes (long rows)
            [sys.executable, handle.name, json.dumps(args)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
            check=False,
        )
    finally:
        os.unlink(handle.name)
    if out.returncode != 0:
        raise RuntimeError(f"the fit's process failed (exit status {out.returncode}): its stderr is above")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report_row(out: Path, env: dict, *extra: str) -> dict:
    started, children = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "riskreport", "run", "bayesian_risk", "--out", str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    fits = fit_costs(Path(env["RISKREPORT_CACHE"]) / "bayes")
    models = pd.read_csv(out / "tables" / "bayes_models.csv")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "total_s": time.time() - started,
        "cpu_s": after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime,
        "waic": dict(zip(models["model"], models["waic"].round(2), strict=True)),
        "fits": fits,
        "lines": [line for line in done.stderr.splitlines() if "riskreport: bayes: " in line],
    }


WORK = ("gradients_per_tail_ess", "us_per_gradient", "compile_seconds", "sampling_seconds", "min_ess_tail")


def fit_costs(folder: Path) -> list[dict]:
    """Each fit's cost from its draws cache entry (`sampling.work`), in the order the fits were written."""
    rows = []
    for entry in sorted(folder.glob("??/*.npz"), key=lambda p: p.stat().st_mtime):
        with np.load(entry) as stored:
            meta = json.loads(bytes(stored["__record__"]).decode())["meta"]
        rows.append(
            {
                "fit": meta["model"],
                **{k: meta["diagnostics"].get(k) for k in WORK},
                "divergences": meta["diagnostics"].get("divergences"),
                "retry": meta["settings"].get("retry"),
            }
        )
    return rows


def papermill_row(work: Path, env: dict) -> dict:
    """A bare papermill run of a one-cell notebook in the same kernel: the floor under any report."""
    import nbformat

    notebook = work / "bare.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), notebook)
    started, children = time.time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "papermill", "-k", "python3", str(notebook), str(work / "bare-out.ipynb")],
        capture_output=True,
        env=env,
        cwd=ROOT,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "total_s": time.time() - started,
        "cpu_s": after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime,
    }


REAL = {  # the real campaigns: (row, collection, options of `riskreport run bayesian_risk`)
    "chapter5": (
        "Chapter 5: TREC-COVID round 1, 42 pooled runs, alpha 0 1",
        "trec-covid-round1/round1_data.csv",
        [
            "-p",
            "pool",
            "{shared}/trec-covid-round1/round1_pooled.csv",
            "--baseline",
            "bm25_baseline",
            "--alpha",
            "0",
            "1",
        ],
    ),
    "covid107": (
        "TREC-COVID round 1, 107 runs x 30 topics",
        "trec-covid-round1/round1_data.csv",
        ["--baseline", "BM25R2"],
    ),
    "web2012": (
        "TREC Web 2012, 8 runs x 50 topics, ERR@20",
        "trec-web-2012",
        ["--baseline", "indriCASP", "--measure", "ERR@20"],
    ),
}


def drop_draws(cache: Path) -> None:
    """Keep the compiled kernels (`numba`), remove the draws."""
    for entry in (cache / "bayes").glob("??/*.npz"):
        entry.unlink()


def one_round(files: dict, work: Path, args, i: int) -> list[dict]:
    rows = []

    def add(name, measure):
        load = os.getloadavg()[0]
        rows.append({"row": name, **measure(), "load_before": load, "load_after": os.getloadavg()[0]})
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "lines"}), flush=True)

    cache, compiledir = work / f"cache-{i}", work / f"pytensor-{i}"
    env = environment(cache, compiledir)
    bayes_cache = cache / "bayes"
    if "fits" in args.rows:
        add("zoib42 cold", lambda: fit_row(files["zoib42"], "zoib", bayes_cache, env, args.target_ess))
        add("zoib42 new data", lambda: fit_row(files["other42"], "zoib", bayes_cache, env, args.target_ess))
        add("zoib42 cached", lambda: fit_row(files["zoib42"], "zoib", bayes_cache, env, args.target_ess))
    if "report" in args.rows:
        report_cache, report_pytensor = work / f"rcache-{i}", work / f"rpytensor-{i}"
        renv = environment(report_cache, report_pytensor)
        add("demo report cold", lambda: report_row(work / f"report-{i}-a", renv))
        drop_draws(report_cache)
        add("demo report, compile cache warm", lambda: report_row(work / f"report-{i}-b", renv))
    if "real" in args.rows:  # cold reports, each with empty caches, beside a bare papermill run
        add("bare papermill run", lambda: papermill_row(work, environment(work / "pcache", work / "ppytensor")))
        if "demo" in args.real:
            add(
                "demo report cold",
                lambda: report_row(work / f"real-demo-{i}", environment(work / f"dcache-{i}", work / f"dpytensor-{i}")),
            )
        shared = ROOT.parent / "shared" / "data"
        for k, (name, collection, extra) in REAL.items():
            if k in args.real and (shared / collection).exists():
                add(
                    f"{name} report cold",
                    lambda k=k, c=collection, e=extra: report_row(
                        work / f"real-{k}-{i}",
                        environment(work / f"realcache-{k}-{i}", work / f"realpytensor-{k}-{i}"),
                        "--collection",
                        str(shared / c),
                        *[part.format(shared=shared) for part in e],
                    ),
                )
    if "campaign" in args.rows:
        for model in args.campaign_models:
            ccache, cpytensor = work / f"ccache-{i}-{model}", work / f"cpytensor-{i}-{model}"
            add(
                f"campaign {model} cold",
                lambda m=model, c=ccache, t=cpytensor: fit_row(
                    files["campaign"], m, c / "bayes", environment(c, t), args.target_ess
                ),
            )
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--target-ess", type=int, default=10_000)
    parser.add_argument(
        "--rows",
        nargs="+",
        default=["fits", "report"],
        choices=["fits", "report", "real", "campaign"],
        help="which rows: the ZOiB-42 fits, the demo report, cold reports of the real campaigns of ../shared beside "
        "a bare papermill run, the 110 × 249 campaign (long)",
    )
    parser.add_argument(
        "--real", nargs="+", default=["demo", *REAL], choices=["demo", *REAL], help="the reports of --rows real"
    )
    parser.add_argument(
        "--campaign-models",
        nargs="+",
        default=["gaussian", "zoib"],
        choices=["gaussian", "zoib"],
        help="--rows campaign",
    )
    parser.add_argument("--json", help="also write every row (with its progress lines) here")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-bayes-reuse-"))
    print(f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}", flush=True)
    try:
        files = tables(work)
        rows = [row for i in range(args.repeat) for row in one_round(files, work, args, i)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nmedians of {args.repeat} round(s), seconds (new process each, imports included):")
    for name in dict.fromkeys(row["row"] for row in rows):
        mine = [row for row in rows if row["row"] == name]
        times = [row["total_s"] for row in mine]
        waic = mine[-1].get("waic")
        print(
            f"  {name:48s} {statistics.median(times):7.1f}  (runs: {', '.join(f'{t:.1f}' for t in times)}; "
            f"CPU {statistics.median(row.get('cpu_s', float('nan')) for row in mine):.1f} s; WAIC {waic}; "
            f"load {mine[-1]['load_before']:.1f}–{mine[-1]['load_after']:.1f})"
        )
        for cost in mine[-1].get("fits", []):
            print(
                f"    {cost['fit']:20s} {cost['gradients_per_tail_ess'] or float('nan'):6.1f} gradients per tail ESS, "
                f"{cost['us_per_gradient'] or float('nan'):7.1f} µs CPU per gradient, compile {cost['compile_seconds'] or 0:5.1f} s, "
                f"sampling {cost['sampling_seconds'] or 0:5.1f} s (tail ESS {cost['min_ess_tail'] or 0:,.0f}"
                f"{', retry ' + json.dumps(cost['retry']) if cost.get('retry') else ''})"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
