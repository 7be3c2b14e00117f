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
"""

import argparse
import hashlib
import importlib.metadata
import json
import pickle
import statistics
import time
from pathlib import Path

import numpy as np
import sklearn
from sklearn.inspection import permutation_importance


def distribution_versions():
    """Versions of the distributions that provide ``import lightgbm``."""
    versions = {}
    for name in ("lightgbm", "lightgbm-takt"):
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def library_digest():
    """SHA-256 of the lib_lightgbm.so that ``import lightgbm`` loads."""
    import lightgbm

    library = Path(lightgbm.__file__).parent / "lib" / "lib_lightgbm.so"
    if not library.is_file():
        return None
    return hashlib.sha256(library.read_bytes()).hexdigest()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with open(args.folder / "model.pkl", "rb") as file:
        model = pickle.load(file)
    data = np.load(args.folder / "data.npz")
    X, y = data["X"], data["y"]
    seconds = {}
    for n_jobs in (1, 2):
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            result = permutation_importance(
                model, X, y, n_repeats=args.n_repeats, n_jobs=n_jobs, random_state=0
            )
            times.append(time.perf_counter() - start)
        seconds[n_jobs] = statistics.median(times)
        if n_jobs == 1:
            np.save(args.folder / "importances.npy", result.importances)
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
