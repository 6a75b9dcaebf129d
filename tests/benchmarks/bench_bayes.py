"""Benchmark of riskreport.bayes (PyMC + nutpie) against Stan through PyStan, on TREC-COVID round 1.

For BHM-Gaussian and BHM-ZOiB on the 42 pooled and all 107 systems (generated data of the same shape
when ../shared is absent): the wall time, compile included, until every system effect has bulk and
tail ESS ≥ 10,000, side by side with the same model in Stan through PyStan (same priors and batch
rule; brms's non-centred parameterisation in Stan, the zero-sum one in ours, the same posterior);
system-effect medians and WAIC are compared (WAIC of both from the same riskreport code). Also: a cached re-run, and the peak memory of PPDRisk⁻ replicates for
72,000 draws.

PyStan is not a project dependency: give the Python of an environment that has it, e.g.

    python3 -m venv /tmp/stan-venv && /tmp/stan-venv/bin/pip install pystan arviz pandas
    .venv/bin/python tests/benchmarks/bench_bayes.py --stan-python /tmp/stan-venv/bin/python

Each fit runs in a fresh process (imports, compilation and sampling counted as a user would meet
them). Print the machine load beside the numbers: the 2 cores are shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
COVID = ROOT.parent / "shared" / "data" / "trec-covid-round1"

OURS = r"""
import json, sys, time
started = time.time()
import pandas as pd
from riskreport import bayes
imported = time.time()
args = json.loads(sys.argv[1])
table = pd.read_csv(args["scores"])
data = bayes.scores_data(table)
result = bayes.fit(args["model"], data, target_ess=args["target_ess"], seed=args["seed"], chains=args["chains"],
                   cache_dir=args["cache"], use_cache=args["use_cache"], progress=None)
done = time.time()
effects = bayes.system_effects(result).set_index("system")["effect_median"].reindex(list(data.systems))
print(json.dumps({"import_s": imported - started, "fit_s": done - imported, "total_s": done - started,
                  "to_target_s": imported - started + result.diagnostics.get("seconds_to_target", 0.0),
                  "cached": result.cached, "draws": result.n_draws, "min_ess_bulk": result.diagnostics["min_ess_bulk"],
                  "min_ess_tail": result.diagnostics["min_ess_tail"], "max_rhat": result.diagnostics["max_rhat"],
                  "divergences": result.diagnostics["divergences"], "waic": result.criteria["waic"],
                  "batches": result.batches, "medians": effects.tolist()}))
"""

STAN_MODELS = {
    "gaussian": """
data { int N; int S; int T; vector[N] y; array[N] int sys; array[N] int top; real b_loc; real scale; }
parameters { real b; real<lower=0> sigma; real<lower=0> sd_sys; real<lower=0> sd_top; vector[S] z_sys; vector[T] z_top; }
model {
  b ~ student_t(3, b_loc, scale); sigma ~ student_t(3, 0, scale);
  sd_sys ~ student_t(3, 0, scale); sd_top ~ student_t(3, 0, scale);
  z_sys ~ std_normal(); z_top ~ std_normal();
  y ~ normal(b + sd_sys * z_sys[sys] + sd_top * z_top[top], sigma);
}
""",
    "zoib": """
data { int N; int S; int T; vector[N] y; array[N] int sys; array[N] int top; int N0; int N1; int NI;
       array[NI] int inner; }
parameters { real b; real<lower=0> phi; real<lower=0, upper=1> zoi; real<lower=0, upper=1> coi;
             real<lower=0> sd_sys; real<lower=0> sd_top; vector[S] z_sys; vector[T] z_top; }
model {
  vector[NI] mu = inv_logit(b + sd_sys * z_sys[sys[inner]] + sd_top * z_top[top[inner]]);
  b ~ student_t(3, 0, 2.5); sd_sys ~ student_t(3, 0, 2.5); sd_top ~ student_t(3, 0, 2.5);
  phi ~ gamma(0.01, 0.01); zoi ~ beta(1, 1); coi ~ beta(1, 1);
  z_sys ~ std_normal(); z_top ~ std_normal();
  target += (N0 + N1) * log(zoi) + N0 * log1m(coi) + N1 * log(coi) + NI * log1m(zoi);
  y[inner] ~ beta(mu * phi, (1 - mu) * phi);
}
""",
}

STAN = r"""
import json, math, sys, time
started = time.time()
import numpy as np, pandas as pd, stan, arviz as az
args = json.loads(sys.argv[1])
table = pd.read_csv(args["scores"])
systems = list(dict.fromkeys(table["system"].astype(str))); topics = list(dict.fromkeys(table["topic"].astype(str)))
y = table["score"].to_numpy(float)
data = {"N": len(y), "S": len(systems), "T": len(topics), "y": y,
        "sys": (pd.Categorical(table["system"].astype(str), systems).codes + 1).tolist(),
        "top": (pd.Categorical(table["topic"].astype(str), topics).codes + 1).tolist()}
if args["model"] == "gaussian":
    med = float(np.median(y)); data.update(b_loc=float(np.round(med, 1)),
        scale=max(2.5, float(np.round(np.median(np.abs(y - med)) * 1.4826, 1))))
else:
    inner = np.nonzero((y > 0) & (y < 1))[0] + 1
    data.update(N0=int((y == 0).sum()), N1=int((y == 1).sum()), NI=len(inner), inner=inner.tolist())
t = time.time()
model = stan.build(args["code"], data=data, random_seed=args["seed"])
build_s = time.time() - t
if args.get("build_only"):
    print(json.dumps({"build_s": build_s})); sys.exit(0)
chains, target = args["chains"], args["target_ess"]
per_chain = math.ceil(target / chains / 0.6)
parts = []
while True:
    if parts:
        model = stan.build(args["code"], data=data, random_seed=args["seed"] + 7919 * len(parts))
    fit = model.sample(num_chains=chains, num_samples=per_chain, num_warmup=1000)
    names = ["b", "sd_sys", "sd_top", "z_sys", "z_top"] + (["sigma"] if args["model"] == "gaussian" else ["phi", "zoi", "coi"])
    part = {}
    for n in names:                                 # fit[n]: (dims..., samples * chains), chain index fastest
        v = np.asarray(fit[n])
        v = np.moveaxis(v.reshape(v.shape[:-1] + (-1, chains)), (-1, -2), (0, 1))   # (chains, samples, dims...)
        part[n] = v.reshape(v.shape[:2]) if n not in ("z_sys", "z_top") else v
    parts.append(part)
    draws = {n: np.concatenate([p[n] for p in parts], axis=1) for n in parts[0]}
    r = draws["sd_sys"][..., None] * draws["z_sys"]
    ds = az.convert_to_dataset({"r": r})
    bulk = float(az.ess(ds, method="bulk")["r"].min()); tail = float(az.ess(ds, method="tail")["r"].min())
    if min(bulk, tail) >= target or draws["b"].size >= 72000:
        break
    per_chain = max(50, math.ceil(draws["b"].shape[1] * (target / min(bulk, tail) - 1) * 1.15))
done = time.time()
np.savez(args["out"], **draws)
print(json.dumps({"build_s": build_s, "total_s": done - started, "draws": int(draws["b"].size),
                  "min_ess_bulk": bulk, "min_ess_tail": tail, "batches": len(parts)}))
"""


def datasets(workdir: Path) -> dict[str, Path]:
    """42 pooled and 107 TREC-COVID systems (or generated data of the same shape) as CSV files."""
    out = {}
    if COVID.is_dir():
        scores = pd.read_csv(COVID / "round1_data.csv")
        pooled = pd.read_csv(COVID / "round1_pooled.csv")
        pool = set(pooled.loc[pooled["pooled"] == 1, "system"])
        tables = {"covid42": scores[scores["system"].isin(pool)], "covid107": scores}
    else:
        rng = np.random.default_rng(0)
        tables = {}
        for name, n in (("generated42", 42), ("generated107", 107)):
            mu = 1 / (1 + np.exp(-(rng.normal(-0.8, 0.5, n)[:, None] + rng.normal(0, 1, 30)[None, :])))
            y = rng.beta(mu * 3, (1 - mu) * 3)
            y = np.where(rng.random(y.shape) < 0.045, (rng.random(y.shape) < 0.3).astype(float), y)
            tables[name] = pd.DataFrame(
                {
                    "system": np.repeat([f"s{i}" for i in range(n)], 30),
                    "topic": np.tile(np.arange(30), n),
                    "score": y.ravel(),
                }
            )
    for name, table in tables.items():
        path = workdir / f"{name}.csv"
        table.to_csv(path, index=False)
        out[name] = path
    return out


def fresh_compiledir() -> dict:
    """An environment whose PyTensor compile cache (numba's on-disk cache of the graph's pieces) starts empty."""
    return {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={tempfile.mkdtemp(prefix='bench-pytensor-')}"}


def run_json(python: str, script: str, args: dict, env=None) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(script)
    result = subprocess.run([python, handle.name, json.dumps(args)], capture_output=True, text=True, env=env, cwd=ROOT)
    os.unlink(handle.name)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def stan_waic(model: str, scores: Path, draws_path: Path) -> tuple[float, list]:
    """WAIC and system-effect medians of the Stan draws, by the same riskreport code as ours."""
    from riskreport import bayes
    from riskreport.bayes.diagnosis.diagnostics import information_criteria

    data = bayes.scores_data(pd.read_csv(scores))
    with np.load(draws_path) as stored:
        draws = {k: stored[k] for k in stored.files}
    for group in ("sys", "top"):  # Stan's non-centred effects: r = sd·z
        if f"z_{group}" in draws:
            draws[f"r_{group}"] = draws[f"sd_{group}"][..., None] * draws[f"z_{group}"]
    medians = np.median(draws["r_sys"].reshape(-1, draws["r_sys"].shape[-1]), axis=0)
    return information_criteria(model, data, draws)["waic"], medians.tolist()


def ppd_memory(draws: int = 72_000) -> dict:
    """Peak RSS growth of PPDRisk⁻ replicates for `draws` posterior draws (42 × 30 ZOiB), in a fresh process."""
    script = r"""
import json, resource, sys, time
import numpy as np
from riskreport import bayes
from riskreport.bayes.fitting.fits import BayesFit
n, S, T = int(sys.argv[1]), 42, 30
rng = np.random.default_rng(0)
grid = bayes.scores_data(__import__("pandas").DataFrame(rng.random((S, T)), index=[f"s{i}" for i in range(S)]))
d = {"b": rng.normal(-1, .1, (12, n // 12)), "sd_sys": np.full((12, n // 12), .5), "sd_top": np.full((12, n // 12), .8),
     "r_sys": 0.5 * rng.normal(size=(12, n // 12, S)), "r_top": 0.8 * rng.normal(size=(12, n // 12, T)),
     "phi": np.full((12, n // 12), 4.0), "zoi": np.full((12, n // 12), .04), "coi": np.full((12, n // 12), .3)}
fit = BayesFit("zoib", grid, {}, d, {}, {"ok": True, "problems": ""}, {}, 0.0, {})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.time()
values, names = bayes.ppdrisk_draws(fit, "s0", [0.0, 1.0])
print(json.dumps({"seconds": time.time() - t, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "growth_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024,
                  "result_mb": values.nbytes / 2**20}))
"""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(script)
    out = subprocess.run([sys.executable, handle.name, str(draws)], capture_output=True, text=True, cwd=ROOT)
    os.unlink(handle.name)
    return json.loads(out.stdout.strip().splitlines()[-1])


def final_table(table: pd.DataFrame) -> str:
    """The summary: seconds to ESS ≥ target (imports and compile included), ours against Stan, and the load."""
    columns = {
        "dataset": "dataset",
        "model": "model",
        "ours_s": "ours (s)",
        "stan_s": "Stan (s)",
        "ratio": "Stan/ours",
        "ours_cold_s": "ours, empty compile cache (s)",
        "stan_cold_s": "Stan incl. C++ compile (s)",
        "ratio_cold": "ratio, both cold",
        "ours_draws": "our draws",
        "stan_draws": "Stan draws",
        "ours_waic": "WAIC ours",
        "stan_waic": "WAIC Stan",
        "load_before": "load avg (1 min)",
    }
    shown = table[[c for c in columns if c in table]].rename(columns=columns)
    return (
        "Seconds until every system effect has bulk and tail ESS >= target (fresh process; imports, compile and "
        "sampling; ours with PyTensor's compile cache warm, Stan with httpstan's model cache warm; 'cold': both "
        "compiles included)\n" + shown.to_string(index=False, float_format=lambda v: f"{v:.2f}")
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stan-python", help="Python of an environment with PyStan (skip Stan when absent)")
    parser.add_argument("--models", nargs="+", default=["gaussian", "zoib"])
    parser.add_argument("--datasets", nargs="+", default=None, help="subset of covid42 covid107 (or generated*)")
    parser.add_argument("--target-ess", type=int, default=10_000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--json", help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="bench-bayes-"))
    cache = workdir / "cache"
    rows = []
    for name, path in datasets(workdir).items():
        if args.datasets and name not in args.datasets:
            continue
        for model in args.models:
            common = {
                "scores": str(path),
                "model": model,
                "target_ess": args.target_ess,
                "seed": args.seed,
                "chains": args.chains,
                "cache": str(cache),
            }
            row = {"dataset": name, "model": model, "load_before": os.getloadavg()[0]}
            env = fresh_compiledir()
            cold = run_json(sys.executable, OURS, {**common, "use_cache": False}, env=env)  # empty compile cache
            ours = run_json(sys.executable, OURS, {**common, "use_cache": True}, env=env)  # compile cache warm
            cached = run_json(sys.executable, OURS, {**common, "use_cache": True}, env=env)  # draws cached
            row.update(
                {
                    "ours_cold_s": cold["to_target_s"],
                    "ours_s": ours["to_target_s"],
                    "ours_total_s": ours["total_s"],
                    "ours_fit_s": ours["fit_s"],
                    "ours_import_s": ours["import_s"],
                    "ours_draws": ours["draws"],
                    "ours_ess": min(ours["min_ess_bulk"], ours["min_ess_tail"]),
                    "ours_rhat": ours["max_rhat"],
                    "ours_divergences": ours["divergences"],
                    "ours_waic": ours["waic"],
                    "cached_fit_s": cached["fit_s"],
                    "cached_total_s": cached["total_s"],
                    "load_after_ours": os.getloadavg()[0],
                }
            )
            if args.stan_python:
                out = workdir / f"stan-{name}-{model}.npz"
                # httpstan caches a built model across runs (~/.cache/httpstan): the C++ compile is timed in an empty
                # cache of its own (cold), then the model is built in the usual cache so that the timed run excludes it
                build = {**common, "code": STAN_MODELS[model], "out": str(out), "build_only": True}
                first = run_json(
                    args.stan_python,
                    STAN,
                    build,
                    env={**os.environ, "XDG_CACHE_HOME": tempfile.mkdtemp(prefix="bench-httpstan-")},
                )
                run_json(args.stan_python, STAN, build)
                stan = run_json(args.stan_python, STAN, {**common, "code": STAN_MODELS[model], "out": str(out)})
                waic, medians = stan_waic(model, path, out)
                row.update(
                    {
                        "stan_s": stan["total_s"],
                        "stan_build_s": stan["build_s"],
                        "stan_draws": stan["draws"],
                        "stan_compile_s": first["build_s"],
                        "stan_cold_s": stan["total_s"] - stan["build_s"] + first["build_s"],
                        "stan_ess": min(stan["min_ess_bulk"], stan["min_ess_tail"]),
                        "stan_waic": waic,
                        "ratio": stan["total_s"] / ours["to_target_s"],
                        "ratio_cold": (stan["total_s"] - stan["build_s"] + first["build_s"]) / cold["to_target_s"],
                        "max_median_diff": float(np.max(np.abs(np.array(medians) - np.array(ours["medians"])))),
                        "load_after_stan": os.getloadavg()[0],
                    }
                )
            rows.append(row)
            print(json.dumps(row), flush=True)
    memory = ppd_memory()
    print(json.dumps({"ppdrisk_72000_draws": memory}), flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print(final_table(table))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "ppd_memory": memory}, indent=1))


if __name__ == "__main__":
    main()
