"""Benchmark of feature_dependence and DependenceAnalyzer.

Measures, in one run, the two speed targets of the dependence work:

1. Full pass (the dependence of every feature and the dependence matrix):
   :func:`sklearn_fimp.feature_dependence` against the straightforward
   approach written below: for each feature, fit one forest (the same
   forest, same seed) to predict it from the others, score it out of bag
   (its ``oob_score_``), then compute the out-of-bag permutation
   importance of each input with the generic path (permute the column over
   the training rows, let every tree predict its out-of-bag rows, average,
   score). Both use the same permutations, so their results must agree; the
   bench checks that they do. Target: ours at least 3x faster.
2. Sequential elimination: :class:`sklearn_fimp.DependenceAnalyzer` on data
   with 30 features of which 10 are redundant, against the naive greedy loop
   that re-measures every remaining feature after each drop (one
   ``feature_dependence`` call per drop). Target: the analyzer fits at most
   2x the models of one full pass.

Workloads:

- D1: scikit-learn's breast-cancer data (569 rows, 30 numeric features).
- D2: 1000 rows, 20 independent features (normal, uniform, exponential) and
  10 redundant ones (noisy monotone transforms of one of them, or functions
  of two), seed 0.

3. Against rfpimp's algorithm at its defaults (a re-implementation, as
   rfpimp 1.3.7 does not run on scikit-learn 1.9; checked against rfpimp
   itself with its one broken helper replaced): process CPU time of five
   seeds, interleaved, n_jobs=1 on both sides, target ours at least 3x
   faster; the per-feature standard deviation of the dependence over the
   seeds, target no larger than rfpimp's; and what each change of forest
   buys.

Every model is sklearn_fimp's default forest (100 trees, each on a
bootstrap sample of 30% of the rows, ``min_samples_leaf=5``,
``max_features=1.0``) with ``n_repeats=1``, unless a row says otherwise.
Run from the repository root::

    python bench/bench_dependence.py             # everything, 3 timing runs
    python bench/bench_dependence.py --quick     # smoke run in seconds, no docs

Timings are medians of ``--repeats`` runs of time.perf_counter (one run for
the elimination, which is long), the two implementations interleaved. The
machine may be shared: the load average at the start is recorded.
"""

import argparse
import os
import statistics
import sys
import warnings

import numpy as np
from _common import (
    DOCS,
    RFPIMP_TREES,
    command_line,
    cpu_timed,
    git_commit,
    heading,
    list_table,
    load_breast_cancer_features,
    load_redundant,
    missing,
    reproduce,
    rfpimp_forests_alone,
    shown,
    skip,
    timed,
    utc_stamp,
    versions,
    write_page,
    written_by,
)
from sklearn.base import clone
from sklearn.metrics import r2_score

from sklearn_fimp import DependenceAnalyzer, feature_dependence

# Private helpers, used only to give the straightforward approach the very
# forest, seeds and permutations sklearn_fimp draws, so that both must
# agree: no public function returns them.
from sklearn_fimp._importance._dependence import default_regressor, feature_seeds
from sklearn_fimp._utils._random import draw_seed, permutation_seed, row_permutations

DOCS_TABLE = DOCS / "bench_dependence.rst"
RANDOM_STATE = 0
#: --quick: the seeds of the comparison with rfpimp's algorithm, the trees
#: of its forests, and D1 alone in it.
QUICK_SEEDS = 2
QUICK_TREES = 10


def model_for(quick):
    model = default_regressor()
    if quick:
        model.set_params(n_estimators=20)
    return model


# -- the straightforward approach ----------------------------------------------


def generic_oob_r2(forest, oob_rows, X, y):
    """Out-of-bag R²: every tree predicts its out-of-bag rows, averaged."""
    total = np.zeros(len(y))
    count = np.zeros(len(y))
    for tree, rows in zip(forest.estimators_, oob_rows):
        total[rows] += tree.predict(X[rows])
        count[rows] += 1
    scored = count > 0
    return r2_score(y[scored], total[scored] / count[scored])


def straightforward_dependence(X, model, n_repeats, random_state, n_jobs):
    """One forest per feature, then generic-path OOB permutation importance
    of each of its inputs. Returns the dependence vector and the matrix."""
    n_rows, n_features = X.shape
    _, seeds = feature_seeds(draw_seed(random_state), n_features)
    dependence = np.empty(n_features)
    matrix = np.full((n_features, n_features), np.nan)
    for j in range(n_features):
        others = np.delete(np.arange(n_features), j)
        X_inputs = X[:, others].astype(np.float32)
        y = X[:, j]
        forest = clone(model).set_params(random_state=seeds[j], n_jobs=n_jobs)
        forest.fit(X_inputs, y)
        oob_rows = []
        for in_bag in forest.estimators_samples_:
            mask = np.ones(n_rows, dtype=bool)
            mask[in_bag] = False
            oob_rows.append(np.flatnonzero(mask))
        # the forest's oob_score_ (oob_score=True) is the same number, computed
        # once more at fit; the baseline serves as the dependence instead
        baseline = generic_oob_r2(forest, oob_rows, X_inputs, y)
        dependence[j] = baseline
        seed = permutation_seed(draw_seed(seeds[j]))
        permutations = row_permutations(seed, n_rows, n_repeats)
        for k, column in enumerate(others):
            drops = []
            for permutation in permutations:
                X_permuted = X_inputs.copy()
                X_permuted[:, k] = X_inputs[permutation, k]
                drops.append(baseline - generic_oob_r2(forest, oob_rows, X_permuted, y))
            matrix[j, column] = np.mean(drops)
    return dependence, matrix


def forest_fits(X, model, random_state):
    """Only the forests both approaches fit (same seeds), one after another."""
    n_features = X.shape[1]
    _, seeds = feature_seeds(draw_seed(random_state), n_features)
    for j in range(n_features):
        others = np.delete(np.arange(n_features), j)
        clone(model).set_params(random_state=seeds[j]).fit(X[:, others], X[:, j])


def naive_greedy_elimination(X, model, threshold, random_state, n_jobs):
    """Re-measure every remaining feature after each drop. Returns the kept
    mask and the number of models fitted."""
    active = np.arange(X.shape[1])
    n_fits = 0
    while len(active) > 1:
        result = feature_dependence(
            X[:, active],
            estimator=model,
            n_jobs=n_jobs,
            random_state=random_state,
        )
        n_fits += len(active)
        if result.dependence.max() <= threshold:
            break
        active = np.delete(active, int(np.argmax(result.dependence)))
    support = np.zeros(X.shape[1], dtype=bool)
    support[active] = True
    return support, n_fits


# -- measuring -------------------------------------------------------------------


def interleaved_medians(functions, repeats):
    """Median time of each function over ``repeats`` interleaved rounds, and
    each one's last result."""
    times = [[] for _ in functions]
    results = [None] * len(functions)
    for _ in range(repeats):
        for i, function in enumerate(functions):
            seconds, results[i] = timed(function)
            times[i].append(seconds)
    return [statistics.median(t) for t in times], results


def full_pass_rows(name, X, model, n_jobs, n_repeats, repeats):
    """Time both implementations of one full pass; check they agree."""

    def ours():
        result = feature_dependence(
            X,
            estimator=model,
            n_repeats=n_repeats,
            n_jobs=n_jobs,
            random_state=RANDOM_STATE,
        )
        return result.dependence, result.matrix

    def straightforward():
        return straightforward_dependence(X, model, n_repeats, RANDOM_STATE, n_jobs)

    functions = [ours, straightforward]
    if n_jobs == 1:
        functions.append(lambda: forest_fits(X, model, RANDOM_STATE))
    times, results = interleaved_medians(functions, repeats)
    t_ours, t_plain = times[:2]
    t_fits = times[2] if n_jobs == 1 else float("nan")
    mine, plain = results[:2]
    dependence_gap = float(np.max(np.abs(mine[0] - plain[0])))
    matrix_gap = float(np.nanmax(np.abs(mine[1] - plain[1])))
    if dependence_gap > 1e-9 or matrix_gap > 1e-9:
        raise AssertionError(
            f"{name}: sklearn_fimp and the straightforward approach disagree "
            f"(dependence by {dependence_gap:.2e}, matrix by {matrix_gap:.2e})"
        )
    task = f"full pass, n_repeats={n_repeats}"
    gap = max(dependence_gap, matrix_gap)
    line = (
        f"{name:<30} {task:<26} n_jobs={n_jobs}  ours {t_ours:7.2f}s  "
        f"straightforward {t_plain:7.2f}s  ratio {t_plain / t_ours:4.2f}x  "
        f"(max difference {gap:.1e})"
    )
    if n_jobs == 1:
        line += (
            f"\n{'':<30} forest fits alone {t_fits:7.2f}s; beyond the fits "
            f"ours {t_ours - t_fits:7.2f}s, straightforward {t_plain - t_fits:7.2f}s"
        )
    print(line)
    return (name, task, n_jobs, t_ours, t_plain, t_fits, gap)


def elimination_rows(name, X, model, n_jobs, full_pass_seconds):
    threshold = DependenceAnalyzer().threshold
    t_ours, analyzer = timed(
        lambda: DependenceAnalyzer(model, n_jobs=n_jobs, random_state=RANDOM_STATE).fit(
            X
        )
    )
    t_naive, (naive_support, naive_fits) = timed(
        lambda: naive_greedy_elimination(X, model, threshold, RANDOM_STATE, n_jobs)
    )
    n_features = X.shape[1]
    rows = [
        (
            "DependenceAnalyzer (sequential, re-measures what relied on the drop)",
            analyzer.n_fits_,
            t_ours,
            int(analyzer.support_.sum()),
        ),
        (
            "naive greedy loop (re-measures everything after each drop)",
            naive_fits,
            t_naive,
            int(naive_support.sum()),
        ),
    ]
    differ = int(np.sum(analyzer.support_ != naive_support))
    for label, fits, seconds, kept in rows:
        print(
            f"{name:<30} {label:<70} fits {fits:4d} ({fits / n_features:4.2f}x "
            f"a pass)  {seconds:7.2f}s ({seconds / full_pass_seconds:4.2f}x a "
            f"pass)  kept {kept}"
        )
    print(f"{name:<30} features kept by one elimination only: {differ}")
    return [
        (name, label, fits, fits / n_features, seconds, seconds / full_pass_seconds)
        for label, fits, seconds, _ in rows
    ], differ


# -- rfpimp's algorithm ------------------------------------------------------------
#
# rfpimp 1.3.7's feature_dependence_matrix does not run on scikit-learn 1.9:
# its out-of-bag rows come from a private scikit-learn function whose
# signature changed. Below is a re-implementation of the same algorithm and
# defaults, drawing its random numbers in the same order from NumPy's global
# generator; rfpimp_matches checks it against rfpimp itself, run with that one
# function replaced by a working equivalent.

RFPIMP_ROWS = 5000
RFPIMP_CATEGORICAL = 20
RFPIMP_ZERO = 0.001


def rfpimp_unsampled_rows(tree, n_rows):
    """The out-of-bag rows of one tree of a forest fitted on ``n_rows`` rows
    (full bootstrap, no sample weight), as rfpimp computes them."""
    from sklearn.ensemble._forest import (
        _generate_unsampled_indices,
        _get_n_samples_bootstrap,
    )

    n_bootstrap = _get_n_samples_bootstrap(n_rows, n_rows, None)
    return _generate_unsampled_indices(tree.random_state, n_rows, n_bootstrap, None)


def rfpimp_oob_r2(forest, X, y):
    """rfpimp's oob_regression_r2_score: every tree predicts its out-of-bag
    rows, one tree.predict call per tree."""
    n_rows = len(X)
    total = np.zeros(n_rows)
    count = np.zeros(n_rows)
    for tree in forest.estimators_:
        rows = rfpimp_unsampled_rows(tree, n_rows)
        total[rows] += tree.predict(X[rows])
        count[rows] += 1
    count[count == 0] = 1
    return r2_score(y, total / count)


def rfpimp_oob_f1(forest, X, y):
    """rfpimp's oob_classifier_f1_score: summed out-of-bag probabilities,
    macro F1."""
    from sklearn.metrics import f1_score

    n_rows = len(X)
    proba = np.zeros((n_rows, len(np.unique(y))))
    for tree in forest.estimators_:
        rows = rfpimp_unsampled_rows(tree, n_rows)
        proba[rows] += tree.predict_proba(X[rows])
    return f1_score(y, forest.classes_[np.argmax(proba, axis=1)], average="macro")


def rfpimp_dependence(X, trees=RFPIMP_TREES):
    """rfpimp.feature_dependence_matrix(X) at its defaults, with NumPy's
    global generator seeded by the caller: per feature a random forest of 50
    trees (scikit-learn's defaults otherwise, a classifier for features with
    at most 20 distinct values), its oob_score_ as the dependence, then the
    drop in out-of-bag R² (or F1) when each other feature is permuted,
    clipped to [0, 1]. Returns the dependence vector and the matrix (1 on
    the diagonal, as rfpimp's)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.preprocessing import LabelEncoder

    X = np.array(X, dtype=np.float64)
    n_rows, n_features = X.shape
    categorical = [
        j for j in range(n_features) if len(np.unique(X[:, j])) <= RFPIMP_CATEGORICAL
    ]
    for j in categorical:
        X[:, j] = LabelEncoder().fit_transform(X[:, j])
    if n_rows > RFPIMP_ROWS:
        X = X[np.random.choice(n_rows, RFPIMP_ROWS)]  # noqa: NPY002 - as rfpimp
    dependence = np.empty(n_features)
    matrix = np.zeros((n_features, n_features))
    for j in range(n_features):
        others = np.delete(np.arange(n_features), j)
        X_inputs, y = X[:, others], X[:, j]
        if j in categorical:
            forest = RandomForestClassifier(n_estimators=trees, oob_score=True)
            metric = rfpimp_oob_f1
        else:
            forest = RandomForestRegressor(n_estimators=trees, oob_score=True)
            metric = rfpimp_oob_r2
        forest.fit(X_inputs, y)
        baseline = metric(forest, X_inputs, y)
        drops = np.empty(len(others))
        for k in range(len(others)):
            saved = X_inputs[:, k].copy()
            X_inputs[:, k] = np.random.permutation(X_inputs[:, k])  # noqa: NPY002
            drops[k] = baseline - metric(forest, X_inputs, y)
            X_inputs[:, k] = saved
        drops = np.clip(drops, 0.0, 1.0)
        drops[drops < RFPIMP_ZERO] = 0.0
        matrix[j, others] = drops
        matrix[j, j] = 1.0
        dependence[j] = forest.oob_score_
    return dependence, matrix


def rfpimp_itself(X, seed):
    """rfpimp.feature_dependence_matrix itself, with its out-of-bag helper
    replaced by rfpimp_unsampled_rows; None when rfpimp is not installed."""
    try:
        import pandas as pd
        import rfpimp
    except ImportError:
        return None
    original = rfpimp._get_unsampled_indices
    rfpimp._get_unsampled_indices = rfpimp_unsampled_rows
    try:
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
        np.random.seed(seed)  # noqa: NPY002 - rfpimp draws from the global generator
        table = rfpimp.feature_dependence_matrix(frame)
    finally:
        rfpimp._get_unsampled_indices = original
    return table["Dependence"].to_numpy(float), table.iloc[:, 1:].to_numpy(float)


def rfpimp_seeded(X, seed, trees=RFPIMP_TREES):
    """rfpimp_dependence(X) after seeding NumPy's global generator, as
    rfpimp's users do."""
    np.random.seed(seed)  # noqa: NPY002 - rfpimp draws from the global generator
    return rfpimp_dependence(X, trees)


def change_steps():
    """What each change buys: estimators passed to feature_dependence, from
    rfpimp's forest (the engine alone replaces its permutation loop) to the
    default (None: measured with the comparison), and one not taken."""
    from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

    return [
        (
            "rfpimp's forest (50 trees, full bootstrap samples, leaves of 1 row), "
            "the matrix by the tree engine",
            RandomForestRegressor(n_estimators=50),
        ),
        (
            "100 trees, leaves of at least 5 rows (the previous default)",
            RandomForestRegressor(
                n_estimators=100, min_samples_leaf=5, max_features=1.0
            ),
        ),
        (
            "... and each tree on a bootstrap sample of 30% of the rows (the default)",
            None,
        ),
        (
            "extremely randomized trees instead (100 trees, bootstrap samples "
            "of half the rows, leaves of 5; not taken)",
            ExtraTreesRegressor(
                n_estimators=100,
                min_samples_leaf=5,
                max_features=1.0,
                bootstrap=True,
                max_samples=0.5,
            ),
        ),
    ]


def stability(dependences):
    """Per-feature standard deviation over seeds (rows)."""
    return np.asarray(dependences).std(axis=0, ddof=1)


def rfpimp_rows(name, X, seeds, quick):
    """rfpimp's algorithm and feature_dependence at its defaults, the five
    seeds interleaved, n_jobs=1; the stability of each over the seeds; the
    same for each step of change_steps."""
    trees = QUICK_TREES if quick else RFPIMP_TREES
    rfpimp_cpu = ours_cpu = rfpimp_wall = ours_wall = 0.0
    theirs, mine = [], []
    for seed in seeds:
        cpu, wall, (dependence, _) = cpu_timed(
            lambda seed=seed: rfpimp_seeded(X, seed, trees)
        )
        rfpimp_cpu += cpu
        rfpimp_wall += wall
        theirs.append(dependence)
        cpu, wall, result = cpu_timed(
            lambda seed=seed: feature_dependence(X, n_jobs=1, random_state=seed)
        )
        ours_cpu += cpu
        ours_wall += wall
        mine.append(result.dependence)
    theirs, mine = np.array(theirs), np.array(mine)
    sd_theirs, sd_mine = stability(theirs), stability(mine)
    again = rfpimp_forests_alone(X, [100 + s for s in seeds], trees)
    sd_again = stability(again)
    print(
        f"{name:<30} rfpimp's algorithm {rfpimp_cpu:7.1f}s CPU ({rfpimp_wall:.1f}s "
        f"wall), feature_dependence {ours_cpu:6.1f}s CPU ({ours_wall:.1f}s wall) "
        f"for {len(seeds)} seeds: {rfpimp_cpu / ours_cpu:.2f}x"
    )
    print(
        f"{name:<30} per-feature sd over seeds: rfpimp mean {sd_theirs.mean():.4f}, "
        f"ours mean {sd_mine.mean():.4f}, ours larger on "
        f"{int(np.sum(sd_mine > sd_theirs))} of {len(sd_mine)} features "
        f"(median ratio {np.median(sd_mine / np.maximum(sd_theirs, 1e-12)):.2f}); "
        f"rfpimp's forests at other seeds larger on "
        f"{int(np.sum(sd_again > sd_theirs))}"
    )
    steps = []
    for label, model in [] if quick else change_steps():
        if model is None:  # the default: measured above
            cpu, values = ours_cpu, mine
        else:
            cpu, values = 0.0, []
            for seed in seeds:
                seconds, _, result = cpu_timed(
                    lambda seed=seed, model=model: feature_dependence(
                        X, estimator=model, n_jobs=1, random_state=seed
                    )
                )
                cpu += seconds
                values.append(result.dependence)
            values = np.array(values)
        sd = stability(values)
        gap = float(np.max(np.abs(values.mean(axis=0) - theirs.mean(axis=0))))
        steps.append(
            (
                label,
                cpu,
                rfpimp_cpu / cpu,
                float(sd.mean()),
                int(np.sum(sd > sd_theirs)),
                float(values.mean()),
                gap,
            )
        )
        print(
            f"{name:<30}   {label[:60]:<60} {cpu:6.1f}s CPU ({rfpimp_cpu / cpu:4.2f}x)"
            f" sd mean {sd.mean():.4f}, larger on {int(np.sum(sd > sd_theirs)):2d}, "
            f"largest gap to rfpimp's mean {gap:.3f}"
        )
    return {
        "name": name,
        "rfpimp_cpu": rfpimp_cpu,
        "ours_cpu": ours_cpu,
        "rfpimp_wall": rfpimp_wall,
        "ours_wall": ours_wall,
        "theirs": theirs,
        "mine": mine,
        "sd_again": sd_again,
        "steps": steps,
    }


# -- report ------------------------------------------------------------------------


def rfpimp_rst(rfpimp, match):
    """The section of the page on rfpimp's algorithm."""
    lines = [
        "",
        *heading("Against rfpimp's algorithm", "-"),
        "",
        "rfpimp 1.3.7's ``feature_dependence_matrix`` (per feature a random "
        "forest of 50 trees on at most 5,000 rows, its out-of-bag R² as the "
        "dependence, then the out-of-bag permutation importance of every other "
        "feature, one ``tree.predict`` call per tree and permuted column) does "
        "not run on scikit-learn 1.9: its out-of-bag rows come from a private "
        "scikit-learn function whose signature changed. The bench times a "
        "re-implementation of the same algorithm and defaults "
        "(``rfpimp_dependence`` in the script), which draws its random numbers "
        "in the same order from NumPy's global generator.",
    ]
    if match is not None:
        difference, seconds_itself, seconds_mine = match
        lines += [
            "Checked against rfpimp itself, run with only that out-of-bag "
            "helper replaced by a working equivalent, on breast cancer with "
            f"seed 0: largest difference in the dependences and the matrix "
            f"{difference:.1e}; rfpimp itself took {seconds_itself:.1f} s of CPU, "
            f"the re-implementation {seconds_mine:.1f} s.",
        ]
    lines += [
        "",
        "Both sides run with n_jobs=1 in this process, seed by seed "
        "interleaved (rfpimp's, then ours, for each of the seeds); times are "
        "the CPU time of the process over all seeds. Stability is the standard "
        "deviation of each feature's dependence over the seeds. A standard "
        "deviation from five values is itself imprecise: the last column "
        "counts the features on which rfpimp's own forests, at five other "
        "seeds, vary more than at the first five.",
        "",
    ]
    body = []
    for r in rfpimp:
        sd_theirs, sd_mine = stability(r["theirs"]), stability(r["mine"])
        n = len(sd_mine)
        body.append(
            [
                r["name"],
                f"{r['rfpimp_cpu']:.1f}",
                f"{r['ours_cpu']:.1f}",
                f"{r['rfpimp_cpu'] / r['ours_cpu']:.2f}x",
                f"{r['rfpimp_wall']:.1f} / {r['ours_wall']:.1f}",
                f"{sd_theirs.mean():.4f}",
                f"{sd_mine.mean():.4f}",
                f"{int(np.sum(sd_mine > sd_theirs))} of {n}",
                f"{np.median(sd_mine / np.maximum(sd_theirs, 1e-12)):.2f}",
                f"{int(np.sum(r['sd_again'] > sd_theirs))} of {n}",
            ]
        )
    lines += list_table(
        "Dependence pass against rfpimp's algorithm at its "
        "defaults (target: at least 3x faster, per-feature standard deviation "
        "no larger)",
        [
            "Workload",
            "rfpimp's algorithm, CPU (s)",
            "feature_dependence, CPU (s)",
            "Speed-up (CPU)",
            "Wall (s), rfpimp / ours",
            "Mean per-feature sd, rfpimp",
            "Mean per-feature sd, ours",
            "Features where ours' sd is larger",
            "Median ratio of sds (ours / rfpimp)",
            "rfpimp at 5 other seeds: features where its sd is larger",
        ],
        body,
    )
    for r in rfpimp:
        theirs, mine = r["theirs"], r["mine"]
        sd_theirs, sd_mine = stability(theirs), stability(mine)
        lines += [""] + list_table(
            f"{r['name']}: each feature's dependence, mean and "
            "standard deviation over the seeds",
            [
                "Feature",
                "rfpimp, mean",
                "rfpimp, sd",
                "ours, mean",
                "ours, sd",
                "sd ratio (ours / rfpimp)",
            ],
            [
                [
                    j,
                    f"{theirs[:, j].mean():.4f}",
                    f"{sd_theirs[j]:.4f}",
                    f"{mine[:, j].mean():.4f}",
                    f"{sd_mine[j]:.4f}",
                    f"{sd_mine[j] / max(sd_theirs[j], 1e-12):.2f}",
                ]
                for j in range(theirs.shape[1])
            ],
        )
    body = []
    for r in rfpimp:
        for label, cpu, ratio, sd_mean, larger, mean, gap in r["steps"]:
            body.append(
                [
                    r["name"],
                    label,
                    f"{cpu:.1f}",
                    f"{ratio:.2f}x",
                    f"{sd_mean:.4f}",
                    larger,
                    f"{mean:.3f}",
                    f"{gap:.3f}",
                ]
            )
        body.append(
            [
                r["name"],
                "rfpimp's algorithm (reference)",
                f"{r['rfpimp_cpu']:.1f}",
                "1.00x",
                f"{stability(r['theirs']).mean():.4f}",
                "",
                f"{r['theirs'].mean():.3f}",
                "0",
            ]
        )
    lines += [""] + list_table(
        "What each change buys: feature_dependence with other "
        "forests, the same seeds (CPU time over all seeds; stability against "
        "rfpimp's above)",
        [
            "Workload",
            "Forests",
            "CPU (s)",
            "Speed-up over rfpimp's algorithm",
            "Mean per-feature sd",
            "Features where the sd is larger than rfpimp's",
            "Mean dependence",
            "Largest gap to rfpimp's mean dependence",
        ],
        body,
    )
    return lines


#: What can and cannot be shared between the dependence models, the
#: analyzer's and the conditional sampler's (issue 17 asks).
SHARING_NOTES = [
    "",
    "Sharing models",
    "--------------",
    "",
    "- ``DependenceAnalyzer``'s first pass is ``feature_dependence``'s: the "
    "same rows, seeds and forests (the tests check that the dependences are "
    "equal), and the analyzer keeps it as ``dependence_`` and "
    "``dependence_matrix_``; fitting the analyzer gives both without a second "
    "pass.",
    "- After a drop, every remaining model had the dropped feature among its "
    "inputs, so none can be reused unchanged; the analyzer refits only those "
    "that relied on it by more than ``tol`` (the elimination table above).",
    "- The conditional sampler of ``conditional_permutation_importance`` is "
    "fitted on the rows the explained model is scored on (its held-out rows, "
    "in the model's input encoding), from the columns outside each group, with "
    "a forest sized for out-of-bag predictions (about 17 out-of-bag trees per "
    "row, leaves of 5 rows, at most 2,000 rows per tree); "
    "``feature_dependence`` fits on the caller's table (at most 5,000 rows "
    "drawn with its own seed) with its own forests and seeds. Using the models "
    "of one for the other would change the other's results: they coincide only "
    "when the rows, the inputs (single-column groups), the forest and the seed "
    "all do, which no default call arranges. What is shared already: the "
    "sampler's out-of-bag R² is returned as ``sampler_scores``, the dependence "
    "of each column on the evaluation rows, at no extra fit (the report shows "
    "it).",
]


def page(full, elimination, kept_differ, command, load, rfpimp, match):
    """The page: the full pass, the elimination, rfpimp's algorithm."""
    lines = [
        *written_by("bench_dependence.py"),
        *heading("Benchmark: feature dependence and sequential elimination"),
        "",
        f"- date: {utc_stamp()}, commit {git_commit()}",
        f"- cores (os.cpu_count()): {os.cpu_count()}; load average at start: "
        + ", ".join(f"{x:.1f}" for x in load)
        + " (shared machine)",
        "- " + versions("numpy", "scikit-learn", "sklearn_fimp"),
        "- forests: sklearn_fimp's default (100 trees, each on a bootstrap "
        "sample of 30% of the rows, min_samples_leaf=5, max_features=1.0); "
        "medians of interleaved runs (of --repeats runs)",
        "",
        *reproduce(command),
        "The straightforward approach fits the same forests with the same seeds",
        "and permutes with the same permutations; its results agree with",
        "``feature_dependence`` to the last column shown. Both fit the same",
        "forests, one per feature: the time those fits take alone (measured",
        "at n_jobs=1) bounds the speed-up, and the column after it gives the",
        "speed-up of what remains (the out-of-bag scores and the matrix).",
        "",
    ]
    body = []
    for name, task, n_jobs, t_ours, t_plain, t_fits, gap in full:
        measured = np.isfinite(t_fits)
        body.append(
            [
                name,
                task,
                n_jobs,
                f"{t_ours:.2f}",
                f"{t_plain:.2f}",
                f"{t_plain / t_ours:.2f}x",
                f"{t_fits:.2f}" if measured else "",
                f"{(t_plain - t_fits) / (t_ours - t_fits):.1f}x" if measured else "",
                f"{gap:.1e}",
            ]
        )
    lines += list_table(
        "Full pass: dependence vector and matrix (target: ours at least 3x faster)",
        [
            "Workload",
            "Task",
            "n_jobs",
            "feature_dependence (s)",
            "straightforward (s)",
            "Speed-up",
            "of which forest fits (s)",
            "Speed-up beyond the fits",
            "Max difference",
        ],
        body,
    )
    lines += [""] + list_table(
        "Sequential elimination, in models fitted and time, "
        "relative to one full pass (target: at most 2x the fits of a pass)",
        [
            "Workload",
            "Implementation",
            "Models fitted",
            "x a full pass",
            "Time (s)",
            "Time, x a full pass",
        ],
        [
            [
                name,
                label,
                fits,
                f"{fits_ratio:.2f}",
                f"{seconds:.2f}",
                f"{time_ratio:.2f}",
            ]
            for name, label, fits, fits_ratio, seconds, time_ratio in elimination
        ],
    )
    lines += [
        "",
        f"Features kept by one of the two eliminations only: {kept_differ} "
        "(where a redundant pair's two members tie, the two loops may keep a "
        "different one).",
    ]
    lines += rfpimp_rst(rfpimp, match) + SHARING_NOTES + [""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timing runs per full-pass measurement (median reported)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"small data and forests, {QUICK_SEEDS} seeds and D1 only against "
        "rfpimp's algorithm, for a smoke run in seconds; prints the page "
        "instead of writing it",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="also time the full pass with n_jobs=2 and with n_repeats=5, and "
        "the elimination with n_jobs=2",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=5,
        help="random states of the comparison with rfpimp's algorithm",
    )
    parser.add_argument(
        "--no-write",
        action="store_true",
        help=f"do not write {shown(DOCS_TABLE)}",
    )
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.quick:
        args.seeds = QUICK_SEEDS
        # forests of QUICK_TREES trees leave some rows out of no tree's bag
        warnings.filterwarnings("ignore", "Some inputs do not have OOB scores")
    load = os.getloadavg()
    model = model_for(args.quick)
    repeats = 1 if args.quick else args.repeats

    full = []
    pass_seconds = {}
    for name, X in (
        load_breast_cancer_features(args.quick),
        load_redundant(args.quick),
    ):
        for n_jobs in (1, 2) if args.full else (1,):
            row = full_pass_rows(name, X, model, n_jobs, 1, repeats)
            full.append(row)
            pass_seconds[name, n_jobs] = row[3]
    if args.full:
        name, X = load_breast_cancer_features(args.quick)
        full.append(full_pass_rows(name, X, model, 1, 5, repeats))

    name, X = load_redundant(args.quick)
    n_jobs = 2 if args.full else 1
    elimination, kept_differ = elimination_rows(
        name, X, model, n_jobs, pass_seconds[name, n_jobs]
    )

    name, X = load_breast_cancer_features(args.quick)
    seconds_itself, _, itself = cpu_timed(lambda: rfpimp_itself(X, 0))
    match = None
    if itself is None:
        skip("the check against rfpimp itself", missing("rfpimp"))
    else:
        seconds_mine, _, mine = cpu_timed(lambda: rfpimp_seeded(X, 0))
        difference = max(float(np.max(np.abs(a - b))) for a, b in zip(itself, mine))
        match = (difference, seconds_itself, seconds_mine)
        print(
            f"{name:<30} rfpimp itself against the re-implementation: largest "
            f"difference {difference:.1e}"
        )
    seeds = list(range(args.seeds))
    workloads = [load_breast_cancer_features(args.quick)]
    workloads += [] if args.quick else [load_redundant(args.quick)]
    rfpimp = [rfpimp_rows(name, X, seeds, args.quick) for name, X in workloads]

    if not args.no_write:
        command = command_line("bench_dependence.py", argv)
        text = page(full, elimination, kept_differ, command, load, rfpimp, match)
        write_page(DOCS_TABLE, text, quick=args.quick)


if __name__ == "__main__":
    main()
