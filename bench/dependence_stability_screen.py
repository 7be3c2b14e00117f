"""Screen forests for feature_dependence: per-feature stability against rfpimp.

For each configuration of the dependence forests, runs ``feature_dependence``
at several random states on the two workloads of bench_dependence.py (D1
breast cancer, D2 30 features of which 10 redundant) and compares the standard
deviation of each feature's dependence over the seeds with that of rfpimp's
forests (50 trees, full bootstrap samples, fully grown; the dependence rfpimp
reports is their out-of-bag R², so the forests alone give its distribution).
Each (workload, configuration, seed) is cached as JSON in --cache, so runs
can be split and resumed; ``--analyze`` prints the comparison:

- the process CPU time per pass, the mean per-feature sd, the largest and
  median ratio of sds (ours / rfpimp's) and the features where it exceeds 1;
- how often rfpimp, against itself, "fails" the five-seed comparison (seeds
  0-4 against 5-9);
- the expected number of features failing a five-seed against five-seed
  comparison, taking the sds measured here as the truth (F(4, 4)
  distribution of the ratio of two five-value variances).

Run from the repository root::

    python bench/dependence_stability_screen.py rfpimp --seeds 10
    python bench/dependence_stability_screen.py default --seeds 6 --data D1
    python bench/dependence_stability_screen.py --analyze
    python bench/dependence_stability_screen.py --quick   # seconds, no cache
"""

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from _common import (
    cpu_timed,
    load_breast_cancer_features,
    load_redundant,
    rfpimp_forests_alone,
)
from scipy import stats
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from sklearn_fimp import feature_dependence

#: The workloads' data (the small data of bench_dependence.py --quick with
#: --quick).
QUICK = False
DATA = {
    "D1": lambda: load_breast_cancer_features(QUICK)[1],
    "D2": lambda: load_redundant(QUICK)[1],
}


def _rf(n, samples, leaf):
    return lambda: RandomForestRegressor(
        n_estimators=n, max_features=1.0, max_samples=samples, min_samples_leaf=leaf
    )


def _et(n, samples, leaf):
    return lambda: ExtraTreesRegressor(
        n_estimators=n,
        max_features=1.0,
        bootstrap=True,
        max_samples=samples,
        min_samples_leaf=leaf,
    )


#: name -> a function making the regressor (None: feature_dependence's default)
CONFIGS = {
    "default": lambda: None,
    "rf100_s3_l2": _rf(100, 0.3, 2),
    "rf100_s5_l1": _rf(100, 0.5, 1),
    "et100_full_l1": _et(100, None, 1),
    "et100_s5_l1": _et(100, 0.5, 1),
}


def run(config, workload, seeds, cache):
    X = DATA[workload]()
    for seed in seeds:
        path = cache / f"{workload}_{config}_{seed}.json"
        if path.exists():
            continue
        if config == "rfpimp":
            cpu, _, dependences = cpu_timed(
                lambda seed=seed: rfpimp_forests_alone(X, [1000 + seed])
            )
            dependence = dependences[0]
        else:
            cpu, _, result = cpu_timed(
                lambda seed=seed: feature_dependence(
                    X, estimator=CONFIGS[config](), n_jobs=1, random_state=seed
                )
            )
            dependence = result.dependence
        path.write_text(json.dumps({"cpu": cpu, "dep": [float(d) for d in dependence]}))
        print(f"{config} {workload} seed {seed}: {cpu:.2f} s CPU", flush=True)


def _load(cache, workload, config):
    runs = [
        json.loads(p.read_text())
        for p in sorted(cache.glob(f"{workload}_{config}_*.json"))
    ]
    return np.array([r["dep"] for r in runs]), np.array([r["cpu"] for r in runs])


def analyze(cache):
    for workload in DATA:
        theirs, cpu = _load(cache, workload, "rfpimp")
        if len(theirs) < 2:
            continue
        sd_theirs = theirs.std(axis=0, ddof=1)
        print(
            f"{workload} rfpimp's forests: {len(theirs)} seeds, "
            f"{cpu.mean():.1f} s CPU per pass, mean sd {sd_theirs.mean():.4f}"
        )
        if len(theirs) >= 10:
            first = theirs[:5].std(axis=0, ddof=1)
            second = theirs[5:10].std(axis=0, ddof=1)
            print(
                f"  rfpimp against itself, seeds 5-9 larger than 0-4 on "
                f"{int(np.sum(second > first))} of {len(first)} features"
            )
        for config in CONFIGS:
            mine, cpu = _load(cache, workload, config)
            if len(mine) < 2:
                continue
            sd = mine.std(axis=0, ddof=1)
            ratio = sd / sd_theirs
            fails = 1 - stats.f.cdf((sd_theirs / sd) ** 2, 4, 4)
            high = theirs.mean(axis=0) > 0.95
            print(
                f"  {config:<14} {len(mine)} seeds, {cpu.mean():5.1f} s CPU per pass,"
                f" mean sd {sd.mean():.4f}, ratio max {ratio.max():.2f} median "
                f"{np.median(ratio):.2f}, larger on {int(np.sum(ratio > 1))} "
                f"({int(np.sum(high & (ratio > 1)))} of them of the "
                f"{int(high.sum())} with rfpimp R² > 0.95); expected failures "
                f"5 vs 5 seeds {fails.sum():.1f}"
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", choices=["rfpimp", *CONFIGS])
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--data", default="D1,D2")
    parser.add_argument("--cache", type=Path, default=Path("dependence_screen"))
    parser.add_argument("--analyze", action="store_true")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run in seconds: rfpimp's forests and the default on D1's "
        "small data, 2 seeds, in a temporary cache, then --analyze",
    )
    args = parser.parse_args(argv)
    if args.quick:
        global QUICK
        QUICK = True
        with tempfile.TemporaryDirectory() as cache:
            for config in ("rfpimp", "default"):
                run(config, "D1", range(2), Path(cache))
            analyze(Path(cache))
        return
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.config:
        for workload in args.data.split(","):
            run(args.config, workload, range(args.seeds), args.cache)
    if args.analyze:
        analyze(args.cache)


if __name__ == "__main__":
    main()
