"""Time scikit-learn's permutation_importance on a pickled model, in the
Python that runs this script.

``bench_permutation.py --takt-python PATH`` runs it with the Python of
another environment (one where ``lightgbm-takt`` replaces the official
LightGBM wheel), on the model and validation rows it pickled, so that the
peer is timed on the same model, rows, permutations and thread settings as
the official wheel. It imports scikit-learn, numpy and the model's library
only (not sklearn_fimp). Usage::

    PYTHON peer_sklearn_permutation.py FOLDER --repeats 3 --n-repeats 5

FOLDER holds ``model.pkl`` and ``data.npz`` (``X``, ``y``); the script
writes ``importances.npy`` there (n_jobs=1) and prints one JSON line: the
median seconds per n_jobs and the versions of the libraries it ran with.
``--quick`` (no FOLDER) fits a small model of the LightGBM found, or a
scikit-learn forest without one, in a temporary folder and runs on it.
"""

import argparse
import hashlib
import json
import pickle
import tempfile
from pathlib import Path

import numpy as np
import sklearn
from _common import distribution_version, median_time
from sklearn.inspection import permutation_importance


def distribution_versions():
    """Versions of the distributions that provide ``import lightgbm``."""
    versions = {}
    for name in ("lightgbm", "lightgbm-takt"):
        if distribution_version(name) is not None:
            versions[name] = distribution_version(name)
    return versions


def library_digest():
    """SHA-256 of the lib_lightgbm.so that ``import lightgbm`` loads."""
    try:
        import lightgbm
    except ImportError:
        return None
    library = Path(lightgbm.__file__).parent / "lib" / "lib_lightgbm.so"
    if not library.is_file():
        return None
    return hashlib.sha256(library.read_bytes()).hexdigest()


def quick_folder(folder):
    """A small model and its rows in ``folder``, for --quick."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=500, n_features=10, random_state=0)
    try:
        import lightgbm

        model = lightgbm.LGBMClassifier(n_estimators=10, n_jobs=1, verbose=-1)
    except ImportError:
        from sklearn.ensemble import RandomForestClassifier

        model = RandomForestClassifier(n_estimators=10, random_state=0)
    with open(folder / "model.pkl", "wb") as file:
        pickle.dump(model.fit(X, y), file)
    np.savez(folder / "data.npz", X=X, y=y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-repeats", type=int, default=5)
    parser.add_argument(
        "--quick", action="store_true", help="a small model in a temporary folder"
    )
    args = parser.parse_args(argv)
    if args.quick:
        with tempfile.TemporaryDirectory() as folder:
            quick_folder(Path(folder))
            run(Path(folder), 1, 2)
    elif args.folder is None:
        parser.error("FOLDER is needed (or --quick)")
    else:
        run(args.folder, args.repeats, args.n_repeats)


def run(folder, repeats, n_repeats):
    with open(folder / "model.pkl", "rb") as file:
        model = pickle.load(file)
    data = np.load(folder / "data.npz")
    X, y = data["X"], data["y"]
    seconds = {}
    for n_jobs in (1, 2):
        seconds[n_jobs], result = median_time(
            lambda n_jobs=n_jobs: permutation_importance(
                model, X, y, n_repeats=n_repeats, n_jobs=n_jobs, random_state=0
            ),
            repeats,
        )
        if n_jobs == 1:
            np.save(folder / "importances.npy", result.importances)
    print(
        json.dumps(
            {
                "seconds": seconds,
                "versions": distribution_versions(),
                "scikit-learn": sklearn.__version__,
                "numpy": np.__version__,
                "lib_lightgbm_sha256": library_digest(),
            }
        )
    )


if __name__ == "__main__":
    main()
