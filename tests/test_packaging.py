"""What a user installing sklearn_fimp gets: the sdist carries its tests
and license, and a missing compiled extension is reported, once."""

import functools
import inspect
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
@pytest.mark.slow
def test_sdist_carries_tests_and_license_and_collects(tmp_path):
    """Build the sdist, unpack it, and collect its tests with the unpacked
    package (no compiled kernels there: the NumPy engine). Marked slow: a
    build and a collection of every test in child processes, 20 s beside
    the default run's other tests."""
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


def _readme_test_command():
    """The line of README.md's shell blocks that runs the tests."""
    lines, in_shell = [], False
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            in_shell = line.strip() in ("```bash", "```sh", "```console")
        elif in_shell and "pytest" in line:
            lines.append(line.strip())
    assert len(lines) == 1, f"README.md's shell blocks run pytest in {lines}"
    return lines[0]


def _ci_commands():
    """The command lines of .ci/run: neither comments nor echoed text."""
    import re

    commands = []
    for line in (ROOT / ".ci" / "run").read_text().splitlines():
        line = re.sub(r"(^|\s)#.*", "", line).strip()
        if line and not line.startswith(("#", "echo ", '"')):
            commands.append(line)
    return commands


@needs_sources
def test_ci_runs_the_readme_test_command_first():
    """.ci/run's first install and first default test run are README.md's
    test command as written, so that a green CI means a newcomer's run of
    it passes: nothing is installed before it (another extra would let the
    tests that need it run, where a newcomer's skip or fail)."""
    readme = _readme_test_command()
    assert "pip install" in readme and "pytest" in readme, readme
    commands = _ci_commands()
    installs = [line for line in commands if "pip install" in line]
    assert installs, ".ci/run installs nothing"
    assert installs[0] == readme, (
        f".ci/run's first install is {installs[0]!r}, not README.md's test "
        f"command {readme!r}"
    )
    # the slow step (pytest -m slow) is defined before it, and runs after
    default_runs = [
        line for line in commands if "pytest" in line and "-m slow" not in line
    ]
    assert default_runs[0] == readme, (
        f".ci/run's first default test run is {default_runs[0]!r}, not "
        f"README.md's test command {readme!r}"
    )


# --- Each extra installs what its code path imports -----------------------
#
# A feature's code path is its entry modules: every import in them counts,
# also the lazy ones inside functions (they run when the feature is used),
# and so do the module-level imports of every module importing them
# executes (the package's own modules, followed transitively, with their
# parent packages' __init__). Each third-party module found is mapped to the
# distribution that provides it (importlib.metadata.packages_distributions),
# and must be installed by the extra or the core dependencies, counting what
# those pull in themselves. An import of ``library.part`` where the
# library's distribution has an extra named ``part`` (``dask.dataframe``,
# ``pyspark.sql``) needs that extra's requirements as well.

PACKAGE = ROOT / "sklearn_fimp"


def _distributed_modules(leave_out):
    return [
        path
        for path in sorted((PACKAGE / "_distributed").glob("*.py"))
        if path.name != leave_out
    ]


def _modules_importing(library):
    """The modules that import the library and are not the entry of a
    feature other than the frame libraries'."""
    others = set()
    for feature, (_, entries, _) in FEATURES.items():
        if feature not in ("pandas", "polars"):
            others.update(path.resolve() for path in entries())
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if library in {name.split(".")[0] for name, _, _ in _imports(path)}
        and path.resolve() not in others
    ]


#: feature -> (extra, entry modules, libraries the caller brings: a module
#: on the path imports them only for data or a model of their type, which the
#: caller already has installed)
FEATURES = {
    "dask": ("dask", lambda: _distributed_modules(leave_out="_spark.py"), ()),
    "spark": (
        "spark",
        lambda: [
            *_distributed_modules(leave_out="_dask.py"),
            PACKAGE / "_selection" / "_distributed.py",
            PACKAGE / "_utils" / "_spark_trees.py",
            PACKAGE / "_importance" / "_spark_trees.py",
            PACKAGE / "_engine" / "adapters" / "_spark_ml.py",
        ],
        (),
    ),
    "boost": (
        "boost",
        lambda: [
            PACKAGE / "_engine" / "adapters" / "_xgboost.py",
            PACKAGE / "_engine" / "adapters" / "_lightgbm.py",
            PACKAGE / "_engine" / "adapters" / "_catboost.py",
            PACKAGE / "_importance" / "_boosting_gains.py",
        ],
        ("pandas",),  # the categorical columns of a pandas X
    ),
    "shap": (
        "shap",
        lambda: [PACKAGE / "_importance" / "_shap.py"],
        ("xgboost", "catboost"),  # their models' own SHAP values
    ),
    "plot": (
        "plot",
        lambda: [
            *sorted((PACKAGE / "_plot").glob("*.py")),
            *sorted((PACKAGE / "_report").glob("*.py")),
        ],
        (),
    ),
    "polars": ("polars", lambda: _modules_importing("polars"), ("pandas",)),
    "pandas": ("pandas", lambda: _modules_importing("pandas"), ("polars",)),
}


def _module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_path(name):
    """The file of one of the package's modules, or None."""
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.lru_cache
def _imports(path):
    """(absolute module name, line, at module level) of every import in a
    module; ``from package import name`` also yields ``package.name``, which
    counts when it is a module."""
    import ast

    tree = ast.parse(path.read_text(), filename=str(path))
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    top_level = {id(node) for node in tree.body}
    for statement in tree.body:  # module-level try/if blocks run on import
        if isinstance(statement, (ast.If, ast.Try)):
            top_level.update(id(node) for node in ast.walk(statement))
    found = []
    for node in ast.walk(tree):
        at_top = id(node) in top_level
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, at_top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            found.append((source, node.lineno, at_top))
            found += [(f"{source}.{a.name}", node.lineno, at_top) for a in node.names]
    return tuple(found)


def _code_path_imports(entries):
    """{third-party library or library.part: ["file:line", ...]} on the path
    of the entry modules (see above)."""
    import sys

    entries = [path.resolve() for path in entries]
    third_party = {}
    seen = set()
    queue = [(path, True) for path in entries]
    while queue:
        path, is_entry = queue.pop()
        if (path, is_entry) in seen:
            continue
        seen.add((path, is_entry))
        name = _module_name(path)
        parents = name.split(".")
        for k in range(1, len(parents)):  # importing a module runs its packages
            queue.append((_module_path(".".join(parents[:k])), False))
        for source, line, at_top in _imports(path):
            if not (at_top or is_entry):
                continue
            top = source.split(".")[0]
            if top == "sklearn_fimp":
                target = _module_path(source)
                if target is not None:
                    queue.append((target, target in entries))
            elif top not in sys.stdlib_module_names and top != "__future__":
                # a library and the part of it imported (``dask.dataframe``)
                key = ".".join(source.split(".")[:2])
                where = f"{path.relative_to(ROOT)}:{line}"
                places = third_party.setdefault(key, [])
                if where not in places:
                    places.append(where)
    return third_party


def _installed_closure(requirements, extras_of_self):
    """Canonical names of the distributions the requirements install, with
    what each installed one requires in turn; ``sklearn-fimp[x]`` expands to
    the project's own extra x."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    closure = set()
    queue = [(Requirement(line), "") for line in requirements]
    while queue:
        requirement, extra = queue.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        if name == "sklearn-fimp":
            for own in requirement.extras:
                queue += [(Requirement(line), "") for line in extras_of_self[own]]
            continue
        wanted = {""} | {canonicalize_name(e) for e in requirement.extras}
        if (name, frozenset(wanted)) in closure:
            continue
        closure.add((name, frozenset(wanted)))
        try:
            lines = requires(name) or []
        except PackageNotFoundError:
            continue
        for line in lines:
            for own_extra in wanted:
                queue.append((Requirement(line), own_extra))
    return {name for name, _ in closure}


def _extra_requirements(distribution, extra):
    """The requirements a distribution's extra adds (empty when it has no
    such extra or is not installed)."""
    from importlib.metadata import PackageNotFoundError, metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    try:
        meta = metadata(distribution)
    except PackageNotFoundError:
        return []
    declared = {canonicalize_name(e) for e in meta.get_all("Provides-Extra") or []}
    if canonicalize_name(extra) not in declared:
        return []
    found = []
    for line in meta.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        marker = requirement.marker
        if (
            marker
            and marker.evaluate({"extra": canonicalize_name(extra)})
            and not marker.evaluate({"extra": ""})
        ):
            found.append(line)
    return found


def _project():
    """The [project] table of pyproject.toml."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@functools.lru_cache
def _providers():
    """Each top-level module's installed distributions, as
    ``importlib.metadata.packages_distributions`` gives them on Python 3.11
    and later: from a distribution's ``top_level.txt``, else from the files
    it installed. (Python 3.10's reads ``top_level.txt`` only, which wheels
    built without setuptools, such as numpy's and scikit-learn's, do not
    ship, so it would find no provider for them.)"""
    from importlib.metadata import distributions

    providers = {}
    for distribution in distributions():
        names = (distribution.read_text("top_level.txt") or "").split()
        if not names:
            names = {
                file.parts[0] if len(file.parts) > 1 else inspect.getmodulename(file)
                for file in distribution.files or []
            }
        for name in names:
            if name and "." not in name:
                providers.setdefault(name, []).append(distribution.metadata["Name"])
    return providers


def missing_from_extra(feature):
    """What the feature's code path imports that its extra and the core
    dependencies do not install: a list of sentences, empty when none."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    extra, entries, callers_frames = FEATURES[feature]
    installed = _installed_closure(project["dependencies"] + extras[extra], extras)
    providers = _providers()
    missing = []
    for source, places in sorted(_code_path_imports(entries()).items()):
        top, _, part = source.partition(".")
        if top in callers_frames:
            continue
        where = ", ".join(places[:3]) + (", ..." if len(places) > 3 else "")
        distributions = providers.get(top)
        if not distributions:
            missing.append(
                f"{source} (imported at {where}): no installed distribution "
                "provides it; install the tests extra to run this check"
            )
            continue
        names = {canonicalize_name(d) for d in distributions}
        if not names & installed:
            missing.append(
                f"{source} (imported at {where}) needs {sorted(names)[0]}, "
                f"which the [{extra}] extra does not install"
            )
            continue
        part = part.split(".")[0]
        for distribution in sorted(names & installed):
            for line in _extra_requirements(distribution, part) if part else []:
                needed = canonicalize_name(Requirement(line).name)
                if needed not in installed:
                    missing.append(
                        f"{source} (imported at {where}) needs {needed} "
                        f"({distribution}[{part}] requires it), which the "
                        f"[{extra}] extra does not install"
                    )
    return missing


def not_installed(feature):
    """The libraries the feature's extra declares, under their import name,
    that its code path imports and that are not installed here: their
    requirements cannot be read, so the check cannot run (a library the
    extra does not declare is still a failure of the check)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = _project()
    extra, entries, callers_frames = FEATURES[feature]
    declared = {
        canonicalize_name(Requirement(line).name)
        for line in project["dependencies"] + project["optional-dependencies"][extra]
    }
    providers = _providers()
    return sorted(
        {
            top
            for top in (name.split(".")[0] for name in _code_path_imports(entries()))
            if top not in callers_frames
            and not providers.get(top)
            and canonicalize_name(top) in declared
        }
    )


@needs_sources
@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_extra_installs_what_its_code_path_imports(feature):
    absent = not_installed(feature)
    if absent:
        extra = FEATURES[feature][0]
        pytest.skip(
            f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not "
            f"installed (the [{extra}] extra installs "
            f"{'it' if len(absent) == 1 else 'them'}): the check reads the "
            "installed requirements"
        )
    missing = missing_from_extra(feature)
    assert not missing, (
        f"pyproject.toml's [{FEATURES[feature][0]}] extra misses:\n"
        + "\n".join(missing)
    )


@needs_sources
def test_extras_declare_every_third_party_import():
    """Every third-party module the package imports anywhere is covered by
    a feature above or by the core dependencies."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = _project()
    core = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    covered = {
        top
        for top, distributions in _providers().items()
        if core & {canonicalize_name(d) for d in distributions}
    }
    for _, entries, _ in FEATURES.values():
        covered |= {name.split(".")[0] for name in _code_path_imports(entries())}
    everything = _code_path_imports(sorted(PACKAGE.rglob("*.py")))
    uncovered = sorted({name.split(".")[0] for name in everything} - covered)
    assert not uncovered, (
        f"{uncovered}: imported by sklearn_fimp, but neither a core dependency "
        "nor on the code path of a feature of FEATURES (tests/test_packaging.py)"
    )
