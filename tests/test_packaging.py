"""What a user installing sklearn_fimp gets: the sdist carries its tests
and license, and a missing compiled extension is reported, once."""

import shutil
import subprocess
import sys
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

import sklearn_fimp
from sklearn_fimp import permutation_importance, show_versions
from sklearn_fimp._engine import _backend

ROOT = Path(__file__).resolve().parents[1]

needs_sources = pytest.mark.skipif(
    not (ROOT / "pyproject.toml").is_file(),
    reason="pyproject.toml is not next to the tests (installed package)",
)


def test_show_versions_reports_dependencies_and_kernels(capsys):
    show_versions()
    out = capsys.readouterr().out
    assert f"sklearn_fimp: {sklearn_fimp.__version__}" in out
    for name in ("scikit-learn", "numpy", "scipy", "joblib", "pandas", "polars"):
        assert f"{name}: " in out
    in_use = _backend.COMPILED is not None
    assert f"in use: {in_use}" in out
    assert "show_versions" in sklearn_fimp.__all__


@pytest.fixture
def without_kernels(monkeypatch):
    """The engine as installed without a C compiler."""
    monkeypatch.setattr(_backend, "COMPILED", None)
    monkeypatch.setattr(_backend, "BACKEND", _backend.NUMPY)
    monkeypatch.setattr(_backend, "_said_not_compiled", False)


def test_missing_kernels_warn_once_at_first_engine_use(without_kernels, capsys):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(int)
    forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    with pytest.warns(UserWarning, match="compiled kernels are not installed"):
        first = permutation_importance(forest, X, y, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = permutation_importance(forest, X, y, random_state=0)
    np.testing.assert_array_equal(first.importances, second.importances)
    show_versions()
    assert "in use: False" in capsys.readouterr().out


@needs_sources
def test_sdist_carries_tests_and_license_and_collects(tmp_path):
    """Build the sdist, unpack it, and collect its tests with the unpacked
    package (no compiled kernels there: the NumPy engine)."""
    pytest.importorskip("build", reason="the build package is not installed")
    source = tmp_path / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "*.so", "__pycache__", "_build"
        ),
    )
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation"],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (archive,) = (source / "dist").glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    for name in (
        "LICENSE",
        "README.md",
        "tests/__init__.py",
        "tests/conftest.py",
        "sklearn_fimp/_engine/_ckernels.c",
    ):
        assert (unpacked / name).is_file(), f"the sdist leaves out {name}"
    assert "sklearn_fimp developers" in (unpacked / "LICENSE").read_text()
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=unpacked,
        capture_output=True,
        text=True,
    )
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr
    assert " error" not in collected.stdout.splitlines()[-1]
    assert "tests collected" in collected.stdout.splitlines()[-1]


@needs_sources
def test_minimum_versions_pin_the_declared_floors():
    """.ci/minimum-versions.txt, which CI installs for its second run, pins
    exactly the floors pyproject.toml declares."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    floors = {}
    for line in declared:
        requirement = Requirement(line)
        for spec in requirement.specifier:
            if spec.operator == ">=":
                floors.setdefault(canonicalize_name(requirement.name), set()).add(
                    spec.version
                )
    pins = {}
    for line in (ROOT / ".ci" / "minimum-versions.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version
    for name, version in pins.items():
        if name == "distributed":  # dask[distributed] pins it to dask's release
            continue
        found = {Version(floor) for floor in floors.get(name, ())}
        assert found == {Version(version)}, (name, version, floors.get(name))
    for name in ("scikit-learn", "numpy", "scipy", "joblib", "pandas", "polars"):
        assert canonicalize_name(name) in pins
