"""The outside peers of the field benchmark (issue 70), run once, logged.

The peers a LightGBM user picks instead of ours, each on the same planted
tables as ours (``_field_tables.planted_case(name, seed)``: the same X, y
in every process and environment; each row of the log carries X's
fingerprint, :func:`fingerprint`, for the harness to check):

- ``BorutaPy``: ``BorutaPy(RandomForest{Classifier,Regressor}(max_depth=5,
  n_jobs=1), n_estimators="auto", random_state=seed)``, its confirmed
  features (``support_``), as ``bench_power.py`` runs it;
- ``BorutaPy (LightGBM)``: the same around ``LGBM*(verbose=-1, n_jobs=1,
  random_state=seed)`` with LightGBM's own 100 rounds (BorutaPy's "auto"
  sizes a forest from its depth, and LightGBM has none: it would ask for a
  negative number of rounds);
- ``powershap``: ``PowerShap(model=LGBM*(verbose=-1, n_jobs=1,
  random_state=seed), show_progress=False)``, its defaults otherwise
  (automatic mode, alpha 0.01);
- ``arfs GrootCV``: ``GrootCV(objective=..., n_folds=5, n_iter=3,
  n_jobs=1, lgbm_params={"random_state": seed})``, objective ``binary``,
  ``softmax`` or ``rmse``: on a multiclass target it runs with
  ``softmax``, for which arfs sets ``num_class``; with ``multiclass`` it
  fails inside arfs ("ValueError: The truth value of an array with more
  than one element is ambiguous", tried on 3 classes);
- ``arfs Leshy``: ``Leshy(LGBM*(verbose=-1, n_jobs=1), n_estimators=100,
  importance="shap", max_iter=..., random_state=seed)``: LightGBM's 100
  rounds (Leshy's own default, 1,000, would set the model ten times larger
  than the plain fit it is measured in), its confirmed features.

What was cut, so that the one-time run fits in chunks a session finishes
(``CUTS``, recorded in every row's ``settings``): BorutaPy's ``max_iter`` 100
(its default) kept; Leshy's ``max_iter`` from 100 to 50; GrootCV's repeats
(``n_iter``) from 5 to 3 (15 folds, not 25); powershap runs as it comes.
A (table, peer) whose first seed takes over ``--one-seed-above`` seconds
(60) runs on that seed only: its other seeds are logged as
``"skipped": "one seed: ..."``.

Missing values: BorutaPy refuses NaN (``check_X_y``); the least a user does
is scikit-learn's ``SimpleImputer()`` (column means, empty columns kept),
which both BorutaPys get on a table with missing cells (``"imputed"`` in the
row), and so does the forest of their plain fit. The LightGBM peers take NaN
as it is.

Each cell (table, seed, peer) runs in a process of its own. Its row, appended
to the log as the cell ends: table, seed, selector, kept (column names),
seconds (of ``fit``), plain_fit_seconds and plain_fits (those seconds over
one plain fit of the wrapped model, timed in the same process on the same X
and y: LightGBM for the LightGBM peers, the depth-5 forest with its 100
trees for BorutaPy; the median of up to 3 fits), lightgbm_fits (the seconds
over one plain LightGBM fit, for every peer), peak_rss_mb (the cell
process's peak resident set size, Linux's VmHWM, read as the fit ends: the
imports and the table included; rss_before_fit_mb is that peak just before
``fit``),
versions, settings, x_sha1, and ``"error": "<type>: <message>"`` for a
failure (a failure is a result, logged and never retried; so is a cell that
runs over ``--timeout`` seconds).

Run with the peers' own environment (``bench/requirements-peers.txt``), one
thread, from the repository root::

    /work/peers-venv/bin/python bench/field_peers.py            # every table
    /work/peers-venv/bin/python bench/field_peers.py --tables permeability \\
        --peers "arfs*" --seeds 0
    /work/peers-venv/bin/python bench/field_peers.py --quick    # writes nothing

A run skips the cells already in the log (``--log``, default
``bench/bench_field_peers.jsonl``), so it resumes where a stopped one
ended; it runs the tables from the cheapest (rows x columns) up. The
one-time run went seed by seed: ``--seeds 0`` over every table first (the
wide ones, ``--tables "hepatic injury" "Parkinson speech" "grants test"``,
moved ahead), then ``--seeds 1 2``; ``--list`` prints the cells still
missing. The log's rows of permeability and tissue genes (seed 0) came from
a sizing run with the same settings (``--log`` elsewhere, copied in). The refit
scores are not computed here: the field benchmark scores the kept names in
the main environment. In an environment without a peer (the package's own,
as the bench test runs ``--quick``), that peer is skipped, and said so.
"""

import argparse
import fnmatch
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

from _common import (
    BENCH,
    command_line,
    distribution_version,
    git_commit,
    missing,
    shown,
    skip,
    utc_stamp,
)

LOG = BENCH / "bench_field_peers.jsonl"
SEEDS = (0, 1, 2)
ONE_SEED_ABOVE = 60.0
TIMEOUT = 1800.0
#: the iterations each peer runs with, and what was cut from its default
CUTS = {
    "BorutaPy": {"max_iter": 100, "cut": "none (max_iter 100, its default)"},
    "BorutaPy (LightGBM)": {"max_iter": 100, "cut": "none (max_iter 100)"},
    "powershap": {"cut": "none (its defaults: automatic mode)"},
    "arfs GrootCV": {"n_folds": 5, "n_iter": 3, "cut": "n_iter 3 (default 5)"},
    "arfs Leshy": {"max_iter": 50, "cut": "max_iter 50 (default 100)"},
}
#: --quick: tiny tables and iterations, nothing written
QUICK_ROWS, QUICK_COLUMNS = 150, 20
QUICK_CUTS = {
    "BorutaPy": {"max_iter": 8},
    "BorutaPy (LightGBM)": {"max_iter": 8},
    "powershap": {"power_iterations": 5, "automatic": False},
    "arfs GrootCV": {"n_folds": 3, "n_iter": 1},
    "arfs Leshy": {"max_iter": 5},
}
#: the module each peer imports, and the distributions whose versions its
#: rows record
PEER_MODULES = {
    "BorutaPy": ("boruta", ["Boruta", "scikit-learn"]),
    "BorutaPy (LightGBM)": ("boruta", ["Boruta", "lightgbm"]),
    "powershap": ("powershap", ["powershap", "shap", "lightgbm"]),
    "arfs GrootCV": ("arfs", ["arfs", "shap", "lightgbm"]),
    "arfs Leshy": ("arfs", ["arfs", "shap", "lightgbm"]),
}
STACK = ["numpy", "pandas", "scikit-learn", "scipy"]
#: the peers that refuse NaN, and get SimpleImputer()'s means
IMPUTED = ("BorutaPy", "BorutaPy (LightGBM)")
THREADS = dict.fromkeys(
    ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"),
    "1",
)


# --------------------------------------------------------------------------
# one cell, in its own process


def fingerprint(X):
    """SHA-1 of X's column names and its values as float64 (NaN included):
    the same planted table gives the same text in any environment."""
    import numpy as np

    digest = hashlib.sha1("\0".join(map(str, X.columns)).encode())
    digest.update(np.ascontiguousarray(X.to_numpy(dtype=np.float64)).tobytes())
    return digest.hexdigest()


def _lightgbm(task, seed, **params):
    from lightgbm import LGBMClassifier, LGBMRegressor

    model = LGBMRegressor if task == "regression" else LGBMClassifier
    return model(verbose=-1, n_jobs=1, random_state=seed, **params)


def _forest(task, seed):
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    model = RandomForestRegressor if task == "regression" else RandomForestClassifier
    return model(max_depth=5, n_jobs=1, random_state=seed)


def _boruta(model, trees, cuts, seed):
    from boruta import BorutaPy

    def select(X, y):
        selector = BorutaPy(
            model, n_estimators=trees, random_state=seed, max_iter=cuts["max_iter"]
        )
        selector.fit(X.to_numpy(), y)
        return selector.support_

    return select


def _powershap(model, cuts, seed):
    from powershap import PowerShap

    params = {key: value for key, value in cuts.items() if key != "cut"}

    def select(X, y):
        selector = PowerShap(model=model, show_progress=False, **params)
        selector.fit(X, y)
        return selector.get_support()

    return select


def _groot(task, n_classes, cuts, seed):
    from arfs.feature_selection.allrelevant import GrootCV

    if task == "regression":
        objective = "rmse"
    else:
        objective = "binary" if n_classes == 2 else "softmax"

    def select(X, y):
        selector = GrootCV(
            objective=objective,
            n_folds=cuts["n_folds"],
            n_iter=cuts["n_iter"],
            silent=True,
            n_jobs=1,
            lgbm_params={"random_state": seed},
        )
        selector.fit(X, y)
        return selector.support_

    return select, {"objective": objective}


def _leshy(model, cuts, seed):
    from arfs.feature_selection.allrelevant import Leshy

    def select(X, y):
        selector = Leshy(
            model,
            n_estimators=100,
            importance="shap",
            max_iter=cuts["max_iter"],
            random_state=seed,
            verbose=0,
        )
        selector.fit(X, y)
        return selector.support_

    return select


def _plain_seconds(model, X, y):
    """The median seconds of up to 3 fits of ``model`` (fewer once a second
    has passed)."""
    import statistics

    from sklearn.base import clone

    times = []
    while len(times) < 3 and sum(times) < 1.0:
        start = time.perf_counter()
        clone(model).fit(X, y)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _quick_case(case):
    """A tiny cut of a planted case: its first rows, its first real columns
    and every planted one."""
    X, y = case["X"], case["y"]
    planted = [name for name in case["names"] if name in set(case["planted"])]
    real = [name for name in case["names"] if name not in set(planted)]
    columns = real[: QUICK_COLUMNS - len(planted)] + planted
    rows = slice(0, QUICK_ROWS)
    return dict(case, X=X.iloc[rows][columns].reset_index(drop=True), y=y[rows])


def _rss_mb():
    """This process's peak resident set size so far (MB): Linux's VmHWM,
    which starts anew at ``exec`` (``ru_maxrss`` does not: a child's starts
    from the parent's at the fork)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


def run_cell(table, seed, peer, quick):
    """The row of one cell (without its peak memory, which the parent reads)."""
    import numpy as np
    from _field_tables import planted_case

    case = planted_case(table, seed)
    if quick:
        case = _quick_case(case)
    X, y, task = case["X"], np.asarray(case["y"]), case["task"]
    n_classes = None if task == "regression" else int(len(np.unique(y)))
    cuts = dict(CUTS[peer], **(QUICK_CUTS[peer] if quick else {}))
    row = {
        "table": table,
        "seed": seed,
        "selector": peer,
        "task": task,
        "n_classes": n_classes,
        "rows": int(X.shape[0]),
        "columns": int(X.shape[1]),
        "x_sha1": fingerprint(X),
        "planted": list(case["planted"]),
        "settings": cuts,
        "imputed": None,
    }
    row["versions"] = {
        name: distribution_version(name) for name in [*PEER_MODULES[peer][1], *STACK]
    }
    row["versions"]["python"] = sys.version.split()[0]
    extra = {}
    if peer in IMPUTED and X.isna().to_numpy().any():
        from sklearn.impute import SimpleImputer

        imputer = SimpleImputer(keep_empty_features=True)
        X = X.__class__(imputer.fit_transform(X), columns=X.columns)
        row["imputed"] = "SimpleImputer() (column means): BorutaPy refuses NaN"
    if peer == "BorutaPy":
        wrapped = _forest(task, seed)
        select = _boruta(_forest(task, seed), "auto", cuts, seed)
    elif peer == "BorutaPy (LightGBM)":
        wrapped = _lightgbm(task, seed)
        select = _boruta(_lightgbm(task, seed), 100, cuts, seed)
    elif peer == "powershap":
        wrapped = _lightgbm(task, seed)
        select = _powershap(_lightgbm(task, seed), cuts, seed)
    elif peer == "arfs GrootCV":
        wrapped = _lightgbm(task, seed)
        select, extra = _groot(task, n_classes, cuts, seed)
    elif peer == "arfs Leshy":
        wrapped = _lightgbm(task, seed)
        select = _leshy(_lightgbm(task, seed), cuts, seed)
    else:
        raise ValueError(f"unknown peer {peer!r}")
    row["settings"] = dict(cuts, **extra)
    row["plain_fit_model"] = repr(wrapped)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row["plain_fit_seconds"] = _plain_seconds(wrapped, X, y)
        lightgbm = _plain_seconds(_lightgbm(task, seed), X, y)
        row["rss_before_fit_mb"] = _rss_mb()
        start = time.perf_counter()
        try:
            support = np.asarray(select(X, y), dtype=bool)
        except Exception as exc:  # a failure is a result
            row["seconds"] = time.perf_counter() - start
            row["error"] = f"{type(exc).__name__}: {exc}"
            row["peak_rss_mb"] = _rss_mb()
            return row
    row["seconds"] = time.perf_counter() - start
    row["peak_rss_mb"] = _rss_mb()
    row["kept"] = [str(name) for name, kept in zip(X.columns, support) if kept]
    row["n_kept"] = len(row["kept"])
    row["planted_kept"] = sorted(set(row["kept"]) & set(case["planted"]))
    row["plain_fits"] = row["seconds"] / row["plain_fit_seconds"]
    row["lightgbm_fit_seconds"] = lightgbm
    row["lightgbm_fits"] = row["seconds"] / lightgbm
    return row


def cell_main(args):
    """The child: one cell, its row written to ``args.result``."""
    try:
        row = run_cell(args.cell_table, args.cell_seed, args.cell_peer, args.quick)
    except Exception as exc:  # loading or setting up failed: still a result
        row = {
            "table": args.cell_table,
            "seed": args.cell_seed,
            "selector": args.cell_peer,
            "error": f"{type(exc).__name__}: {exc}",
        }
    Path(args.result).write_text(json.dumps(row), encoding="utf-8")


# --------------------------------------------------------------------------
# the parent: which cells, one process each, the log


def run_in_child(table, seed, peer, quick, timeout):
    """The row of a cell run in its own process (which reads its own peak
    memory)."""
    with tempfile.TemporaryDirectory() as folder:
        result = Path(folder) / "row.json"
        errors = Path(folder) / "stderr.txt"
        command = [sys.executable, str(Path(__file__).resolve()), "--cell"]
        command += [table, str(seed), peer, "--result", str(result)]
        command += ["--quick"] if quick else []
        start = time.perf_counter()
        with open(errors, "w") as stderr:
            child = subprocess.Popen(
                command,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=dict(os.environ, **THREADS),
                start_new_session=True,
            )
            timed_out = threading.Event()

            def stop():
                timed_out.set()
                os.killpg(child.pid, signal.SIGKILL)

            timer = threading.Timer(timeout, stop)
            timer.start()
            child.wait()
            timer.cancel()
        wall = time.perf_counter() - start
        if result.is_file():
            row = json.loads(result.read_text(encoding="utf-8"))
        else:
            lines = errors.read_text(errors="replace").strip().splitlines()
            why = (
                f"TimeoutError: the cell ran over {timeout:.0f} s and was stopped"
                if timed_out.is_set()
                else f"ChildProcessError: exit code {child.returncode}"
                + (f"; {lines[-1]}" if lines else "")
            )
            row = {"table": table, "seed": seed, "selector": peer, "error": why}
            row["seconds"] = wall
    row["memory"] = "peak RSS (VmHWM) of the cell's own process, imports included"
    row["cell_wall_seconds"] = round(wall, 2)
    return row


def read_log(path):
    """The rows of a log (none when it does not exist)."""
    if not Path(path).is_file():
        return []
    return [
        json.loads(line)
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def chosen(patterns, names, what):
    if not patterns:
        return list(names)
    picked = [n for n in names if any(fnmatch.fnmatch(n, p) for p in patterns)]
    unknown = [p for p in patterns if not any(fnmatch.fnmatch(n, p) for n in names)]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)}")
    return picked


def summary(row):
    if "skipped" in row:
        return f"skipped ({row['skipped']})"
    if "error" in row:
        return f"ERROR {row['error'][:160]}"
    return (
        f"kept {row['n_kept']} (planted {len(row['planted_kept'])}), "
        f"{row['seconds']:.1f} s, {row['plain_fits']:.1f} plain fits, "
        f"{row['peak_rss_mb']:.0f} MB"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log", default=str(LOG))
    parser.add_argument("--tables", nargs="+", help="names or patterns")
    parser.add_argument("--peers", nargs="+", help="names or patterns")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--one-seed-above", type=float, default=ONE_SEED_ABOVE)
    parser.add_argument("--timeout", type=float, default=TIMEOUT)
    parser.add_argument("--list", action="store_true", help="the cells left")
    parser.add_argument("--cell", nargs=3, metavar=("TABLE", "SEED", "PEER"))
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cell:
        args.cell_table, args.cell_seed, args.cell_peer = args.cell
        args.cell_seed = int(args.cell_seed)
        return cell_main(args)

    from _field_tables import TABLES, describe

    peers = chosen(args.peers, CUTS, "peers")
    for peer in list(peers):
        why = missing(PEER_MODULES[peer][0])
        if why:
            skip(peer, why)
            peers.remove(peer)
    tables = chosen(args.tables, TABLES, "tables")
    sizes = {name: describe(name) for name in tables}
    tables.sort(key=lambda n: sizes[n]["rows_used"] * sizes[n]["columns"])
    seeds = args.seeds
    if args.quick:
        tables, seeds = tables[:1], seeds[:1]
    rows = [] if args.quick else read_log(args.log)
    done = {(r["table"], r["seed"], r["selector"]) for r in rows}
    cells = [
        (table, seed, peer)
        for table in tables
        for peer in peers
        for seed in seeds
        if (table, seed, peer) not in done
    ]
    if args.list:
        for cell in cells:
            print(*cell, sep="\t")
        return None
    print(
        f"{len(cells)} cells left of {len(tables) * len(peers) * len(seeds)}"
        + ("" if args.quick else f"; log {shown(args.log)}"),
        flush=True,
    )
    run = {
        "run": utc_stamp(),
        "commit": git_commit("bench", changed="+ local changes"),
        "command": command_line("field_peers.py", argv or sys.argv[1:]),
    }
    first = {}
    for table, seed, peer in cells:
        pair = (table, peer)
        if pair not in first:
            earlier = [
                r
                for r in rows
                if (r["table"], r["selector"]) == pair and "skipped" not in r
            ]
            first[pair] = earlier[0] if earlier else None
        head = first[pair]
        if head is not None and head["seed"] != seed:
            seconds = head.get("seconds") or 0.0
            if seconds > args.one_seed_above:
                row = {
                    "table": table,
                    "seed": seed,
                    "selector": peer,
                    "skipped": (
                        f"one seed: seed {head['seed']} took {seconds:.0f} s, "
                        f"over {args.one_seed_above:.0f} s"
                    ),
                }
                rows.append(row)
                print(f"{table} | seed {seed} | {peer}: {summary(row)}", flush=True)
                if not args.quick:
                    with open(args.log, "a", encoding="utf-8") as log:
                        log.write(json.dumps(dict(row, **run)) + "\n")
                continue
        row = run_in_child(table, seed, peer, args.quick, args.timeout)
        row.update(run)
        rows.append(row)
        if first[pair] is None:
            first[pair] = row
        print(f"{table} | seed {seed} | {peer}: {summary(row)}", flush=True)
        if not args.quick:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(row) + "\n")
    return None


if __name__ == "__main__":
    main()
