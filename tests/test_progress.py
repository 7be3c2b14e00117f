"""``verbose``: progress of long computations on stderr, silence by default."""

import re

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.linear_model import LogisticRegression

from sklearn_fimp import (
    DependenceAnalyzer,
    ImportanceSelector,
    drop_column_importance,
    feature_dependence,
    oob_permutation_importance,
    permutation_importance,
)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=200, n_features=4, n_informative=2, n_redundant=0, random_state=0
    )
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    return X, y, forest


def small_forest():
    return RandomForestRegressor(n_estimators=5)


CALLS = {
    "permutation_importance": lambda X, y, forest, verbose: permutation_importance(
        LogisticRegression().fit(X, y), X, y, n_jobs=2, verbose=verbose, random_state=0
    ),
    "permutation_importance engine": (
        lambda X, y, forest, verbose: permutation_importance(
            forest, X, y, verbose=verbose, random_state=0
        )
    ),
    "oob_permutation_importance": lambda X, y, forest, verbose: (
        oob_permutation_importance(forest, X, y, verbose=verbose, random_state=0)
    ),
    "oob_permutation_importance per tree": lambda X, y, forest, verbose: (
        oob_permutation_importance(
            forest, X, y, per_tree=True, n_jobs=2, verbose=verbose, random_state=0
        )
    ),
    "drop_column_importance": lambda X, y, forest, verbose: drop_column_importance(
        LogisticRegression(), X, y, n_jobs=2, verbose=verbose, random_state=0
    ),
    "feature_dependence": lambda X, y, forest, verbose: feature_dependence(
        X, estimator=small_forest(), n_jobs=2, verbose=verbose, random_state=0
    ),
    "DependenceAnalyzer": lambda X, y, forest, verbose: DependenceAnalyzer(
        small_forest(), threshold=0.0, verbose=verbose, random_state=0
    ).fit(X),
    "ImportanceSelector": lambda X, y, forest, verbose: ImportanceSelector(
        LogisticRegression(),
        method="permutation",
        cv=2,
        threshold="mean",
        verbose=verbose,
        random_state=0,
    ).fit(X, y),
}


@pytest.mark.parametrize("name", CALLS)
def test_verbose_reports_progress_on_stderr_only(data, name, capfd):
    X, y, forest = data
    CALLS[name](X, y, forest, 0)
    silent = capfd.readouterr()
    assert silent.out == "" and silent.err == ""

    CALLS[name](X, y, forest, 10)
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err.strip()
    assert f"[{name.split()[0]}]" in captured.err
    # each line is named after a computation of this package, or joblib's
    prefixes = tuple(f"[{other.split()[0]}]" for other in CALLS) + ("[Parallel",)
    for line in captured.err.strip().splitlines():
        assert line.startswith(prefixes), line


def test_verbose_names_each_stage_of_selection(data, capfd):
    X, y, _ = data
    ImportanceSelector(
        LogisticRegression(),
        method="permutation",
        cv=3,
        threshold="mean",
        verbose=1,
        random_state=0,
    ).fit(X, y)
    err = capfd.readouterr().err
    for stage in ("split 1 of 3", "split 3 of 3", "kept", "refitting"):
        assert stage in err


def test_verbose_reports_each_elimination_step(capfd):
    rng = np.random.RandomState(0)
    a = rng.normal(size=200)
    X = np.column_stack([a, a, rng.normal(size=200)])
    analyzer = DependenceAnalyzer(small_forest(), verbose=1, random_state=0).fit(X)
    err = capfd.readouterr().err
    assert err.count("dropped") == len(analyzer.elimination_path_["feature"]) == 1
    assert "x0 (dependence" in err or "x1 (dependence" in err


def test_verbose_counts_the_fits_of_drop_column(data, capfd):
    X, y, _ = data
    drop_column_importance(LogisticRegression(), X, y, cv=2, verbose=1)
    err = capfd.readouterr().err
    assert "totalling 10 fits" in err  # (baseline + 4 features) x 2 splits


@pytest.mark.parametrize("verbose", [-1, 1.5, "yes"])
def test_verbose_rejects_invalid_values(data, verbose):
    X, y, forest = data
    with pytest.raises(ValueError, match="verbose"):
        permutation_importance(forest, X, y, verbose=verbose)
    with pytest.raises(ValueError, match="verbose"):
        ImportanceSelector(verbose=verbose).fit(X, y)


@pytest.mark.parametrize("oob", [False, True], ids=["validation", "oob"])
def test_tree_engine_reports_each_chunk_of_rows(data, oob, capsys, monkeypatch):
    # on many rows the engine works a chunk of rows at a time; with verbose
    # it says how far it has got, in rows
    from sklearn_fimp._engine import _tree_engine

    X, y, forest = data
    monkeypatch.setattr(_tree_engine, "CHUNK_ROWS", 80)
    if oob:
        oob_permutation_importance(forest, X, y, verbose=1, random_state=0)
    else:
        permutation_importance(forest, X, y, verbose=1, random_state=0)
    lines = capsys.readouterr().err.splitlines()
    done = [line for line in lines if "tree engine:" in line]
    assert [line.split("tree engine: ")[1].split(" (")[0] for line in done] == [
        "80 of 200 rows done",
        "160 of 200 rows done",
        "200 of 200 rows done",
    ]
    assert all(line.startswith("[") for line in done)
    # and nothing without verbose
    permutation_importance(forest, X, y, random_state=0)
    assert capsys.readouterr().err == ""


def test_tree_engine_reports_each_batch_of_groups(data, capsys, monkeypatch):
    # a score that is not a sum over rows (ROC AUC) needs every row's output
    # at once; when the outputs of all groups do not fit, groups go in batches
    from sklearn_fimp._engine import _tree_engine

    X, y, forest = data
    monkeypatch.setattr(_tree_engine, "BATCH_BYTES", 1)
    permutation_importance(forest, X, y, scoring="roc_auc", verbose=1, random_state=0)
    err = capsys.readouterr().err
    assert [f"tree engine: {g} of 4 groups done" in err for g in (1, 2, 3, 4)] == [
        True
    ] * 4


def test_progress_command_lines_and_timed_stages(capsys):
    # the sklearn-fimp command's lines: "name: message", and a timed stage
    # on one line, "name: message ... 1.2 s"
    from sklearn_fimp._utils._progress import Progress

    progress = Progress("prog", True, command=True)
    progress("reading")
    with progress.stage("fitting"):
        pass
    assert re.fullmatch(
        r"prog: reading\nprog: fitting \.\.\. \d+\.\d s\n", capsys.readouterr().err
    )
    # a computation's lines keep their form, and gain the stage's time
    progress = Progress("name", 1)
    progress("step")
    with progress.stage("stage"):
        pass
    assert re.fullmatch(
        r"\[name\] step \(elapsed \d+\.\ds\)\n"
        r"\[name\] stage \.\.\. \d+\.\d s \(elapsed \d+\.\ds\)\n",
        capsys.readouterr().err,
    )


def test_progress_stage_silent_or_failing(capsys):
    from sklearn_fimp._utils._progress import Progress

    for verbose in (0, False):
        progress = Progress("prog", verbose, command=True)
        progress("reading")
        with progress.stage("fitting"):
            pass
        assert capsys.readouterr().err == ""
    # a stage that raises ends its line, so that the error starts a new one
    progress = Progress("prog", True, command=True)
    with pytest.raises(KeyError), progress.stage("fitting"):
        raise KeyError("x")
    assert capsys.readouterr().err == "prog: fitting ...\n"
