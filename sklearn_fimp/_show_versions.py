"""``show_versions``: what to paste into a bug report."""

import platform
import sys
from importlib.metadata import PackageNotFoundError, version

#: distributions whose versions change what sklearn_fimp does
DEPENDENCIES = (
    "scikit-learn",
    "numpy",
    "scipy",
    "joblib",
    "pandas",
    "polars",
    "pyarrow",
    "matplotlib",
    "dask",
    "distributed",
    "xgboost",
    "xgboost-cpu",
    "lightgbm",
    "pyspark",
    "joblibspark",
)


def _system_info():
    return {
        "python": sys.version.replace("\n", " "),
        "executable": sys.executable,
        "machine": platform.platform(),
    }


def _dependency_info():
    from . import __version__

    info = {"sklearn_fimp": __version__}
    for name in DEPENDENCIES:
        try:
            info[name] = version(name)
        except PackageNotFoundError:
            info[name] = None
    return info


def _kernel_info():
    from ._engine import _backend

    if _backend.COMPILED is None:
        return {
            "in use": False,
            "library": "not built or refused (the tree engine runs its NumPy "
            "implementation)",
        }
    return {"in use": True, "library": _backend.COMPILED.kernels.path}


def show_versions():
    """Print the versions of Python, sklearn_fimp and its dependencies, and
    whether the tree engine's compiled kernels are in use.

    Paste its output into a bug report. Without the compiled kernels (no C
    compiler when the package was built) the tree engine runs its NumPy
    implementation: the same results, several times slower.

    Parameters
    ----------
    None

    Returns
    -------
    None
        The report is printed on standard output.

    Examples
    --------
    >>> from sklearn_fimp import show_versions
    >>> show_versions()  # doctest: +SKIP
    """
    for title, info in (
        ("System", _system_info()),
        ("Python dependencies", _dependency_info()),
        ("Compiled kernels", _kernel_info()),
    ):
        print(f"\n{title}:")
        for key, value in info.items():
            print(f"{key:>14}: {value}")
