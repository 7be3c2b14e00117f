"""Tests of ImportanceDisplay, DependenceDisplay and CorrelationDisplay."""

import subprocess
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import make_regression  # noqa: E402
from sklearn.ensemble import RandomForestRegressor  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.utils import Bunch  # noqa: E402

from sklearn_fimp import (  # noqa: E402
    CorrelationDisplay,
    DependenceAnalyzer,
    DependenceDisplay,
    ImportanceDisplay,
    ImportanceSelector,
    ProbeDisplay,
    permutation_importance,
)
from sklearn_fimp._utils._result import importance_result  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _result(means, names, *, spread=0.0, method="permutation", **details):
    """An importance result whose repeats are mean - spread and mean + spread
    (so importances_std equals spread)."""
    means = np.asarray(means, dtype=float)
    repeats = np.column_stack([means - spread, means + spread])
    return importance_result(repeats, names, method=method, **details)


def _widths(bars):
    return np.array([patch.get_width() for patch in bars.patches])


def _centres(bars):
    return np.array([patch.get_y() + patch.get_height() / 2 for patch in bars.patches])


def _tick_labels(ax):
    return [label.get_text() for label in ax.get_yticklabels()]


@pytest.fixture(scope="module")
def small_forest():
    X, y = make_regression(n_samples=120, n_features=4, n_informative=2, random_state=0)
    forest = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, y)
    return forest, X, y


# ----------------------------------------------------------------------------
# ImportanceDisplay


def test_importance_display_bars_sorted_largest_on_top():
    result = _result([0.1, 0.5, 0.3, 0.2], ["a", "b", "c", "d"], spread=0.01)
    display = ImportanceDisplay.from_result(result)
    assert isinstance(display.figure_, matplotlib.figure.Figure)
    assert display.ax_ is display.axes_[0]
    widths = _widths(display.bars_[0])
    np.testing.assert_allclose(widths, [0.5, 0.3, 0.2, 0.1])
    assert _tick_labels(display.ax_) == ["b", "c", "d", "a"]
    # the y axis is inverted: the first (largest) bar is drawn on top
    bottom, top = display.ax_.get_ylim()
    assert bottom > top
    assert np.all(np.diff(_centres(display.bars_[0])) > 0)
    assert display.feature_order_.tolist() == [1, 2, 3, 0]


def test_importance_display_errorbars_are_the_std():
    result = _result([0.4, 0.2], ["a", "b"], spread=0.05)
    display = ImportanceDisplay.from_result(result)
    errorbar = display.errorbars_[0]
    assert errorbar is not None
    segments = errorbar.lines[2][0].get_segments()
    spans = sorted((seg[0][0], seg[1][0]) for seg in segments)
    np.testing.assert_allclose(spans, [(0.15, 0.25), (0.35, 0.45)])


def test_importance_display_no_errorbars_without_spread_or_when_disabled():
    display = ImportanceDisplay.from_result(_result([0.4, 0.2], ["a", "b"]))
    assert display.errorbars_ == [None]
    spread = _result([0.4, 0.2], ["a", "b"], spread=0.05)
    assert ImportanceDisplay.from_result(spread, errorbars=False).errorbars_ == [None]


def test_importance_display_min_upper_bound_keeps_tiny_importances_small():
    tiny = _result([0.002, 0.001], ["a", "b"], scoring=None)
    auto = ImportanceDisplay.from_result(tiny)
    assert auto.ax_.get_xlim()[1] >= 0.1
    unbounded = ImportanceDisplay.from_result(tiny, min_upper_bound=None)
    assert unbounded.ax_.get_xlim()[1] < 0.01
    fixed = ImportanceDisplay.from_result(tiny, min_upper_bound=0.5)
    assert fixed.ax_.get_xlim()[1] >= 0.5
    # a unit that depends on the target (MDI-oob) gets no automatic bound
    oob_mdi = _result([0.002, 0.001], ["a", "b"], method="oob_mdi")
    assert ImportanceDisplay.from_result(oob_mdi).ax_.get_xlim()[1] < 0.01
    # large importances are never cut
    large = _result([0.8, 0.1], ["a", "b"])
    assert ImportanceDisplay.from_result(large).ax_.get_xlim()[1] >= 0.8


def test_importance_display_min_upper_bound_per_method():
    results = {
        "first": _result([0.002, 0.001], ["a", "b"]),
        "second": _result([0.002, 0.001], ["a", "b"]),
    }
    display = ImportanceDisplay.from_result(results, min_upper_bound={"second": 1.0})
    assert display.axes_[0].get_xlim()[1] < 0.01
    assert display.axes_[1].get_xlim()[1] >= 1.0
    with pytest.raises(ValueError, match="unknown method"):
        ImportanceDisplay.from_result(results, min_upper_bound={"third": 1.0})
    with pytest.raises(ValueError, match="positive"):
        ImportanceDisplay.from_result(results, min_upper_bound=-1)
    with pytest.raises(ValueError, match="not understood"):
        ImportanceDisplay.from_result(results, min_upper_bound="big")


def test_importance_display_methods_side_by_side_share_the_feature_order():
    results = {
        "MDI": _result([0.6, 0.3, 0.1], ["a", "b", "c"], method="mdi"),
        # the same features in another order, ranked differently
        "permutation": _result([0.05, 0.2, 0.1], ["c", "a", "b"]),
        "drop-column": _result([0.0, 0.1, 0.3], ["a", "b", "c"], method="drop_column"),
    }
    display = ImportanceDisplay.from_result(results)
    assert len(display.axes_) == 3
    assert [ax.get_title() for ax in display.axes_] == list(results)
    # sorted by the first method; every axes draws a, b, c in that order
    np.testing.assert_allclose(_widths(display.bars_[0]), [0.6, 0.3, 0.1])
    np.testing.assert_allclose(_widths(display.bars_[1]), [0.2, 0.1, 0.05])
    np.testing.assert_allclose(_widths(display.bars_[2]), [0.0, 0.1, 0.3])
    assert _tick_labels(display.axes_[0]) == ["a", "b", "c"]
    # the other axes share the rows and do not repeat the labels
    for ax in display.axes_[1:]:
        assert ax.get_shared_y_axes().joined(ax, display.ax_)
        assert ax.yaxis.get_tick_params()["labelleft"] is False

    by_drop = ImportanceDisplay.from_result(results, sort_by="drop-column")
    np.testing.assert_allclose(_widths(by_drop.bars_[2]), [0.3, 0.1, 0.0])
    with pytest.raises(ValueError, match="sort_by"):
        ImportanceDisplay.from_result(results, sort_by="nope")


def test_importance_display_grid_names_the_rows_in_each_row_of_axes():
    import matplotlib.pyplot as plt

    results = {name: _result([0.6, 0.3, 0.1], ["a", "b", "c"]) for name in "wxyz"}
    figure, axes = plt.subplots(2, 2, sharey=True)
    display = ImportanceDisplay.from_result(results, ax=axes)
    # the first column names the rows, the second does not repeat them
    assert _tick_labels(display.axes_[0]) == ["a", "b", "c"]
    assert _tick_labels(display.axes_[2]) == ["a", "b", "c"]
    assert display.axes_[2].yaxis.get_tick_params()["labelleft"] is not False
    for ax in display.axes_[[1, 3]]:
        assert ax.yaxis.get_tick_params()["labelleft"] is False
    plt.close(figure)


def test_importance_display_side_by_side_needs_the_same_features():
    results = {"one": _result([1, 2], ["a", "b"]), "two": _result([1, 2], ["a", "c"])}
    with pytest.raises(ValueError, match="same features"):
        ImportanceDisplay.from_result(results)


def test_importance_display_from_estimator_every_method(small_forest):
    forest, X, y = small_forest
    methods = ["mdi", "oob_mdi", "permutation", "oob_permutation", "drop_column"]
    display = ImportanceDisplay.from_estimator(
        forest, X, y, method=methods, n_repeats=2, random_state=0
    )
    titles = [ax.get_title() for ax in display.axes_]
    assert titles == [
        "MDI",
        "MDI-oob",
        "permutation",
        "out-of-bag permutation",
        "drop-column",
    ]
    assert all(len(bars.patches) == 4 for bars in display.bars_)


def test_importance_display_from_estimator_rejects_bad_methods(small_forest):
    forest, X, y = small_forest
    with pytest.raises(ValueError, match="unknown method"):
        ImportanceDisplay.from_estimator(forest, X, y, method="gini")
    with pytest.raises(ValueError, match="listed twice"):
        ImportanceDisplay.from_estimator(forest, X, y, method=["mdi", "mdi"])
    with pytest.raises(ValueError, match="groups"):
        ImportanceDisplay.from_estimator(
            forest, X, y, method=["mdi", "permutation"], groups=[[0, 1]]
        )


def test_importance_display_groups_are_thicker_and_labelled_with_members(
    small_forest,
):
    forest, X, y = small_forest
    result = permutation_importance(
        forest, X, y, groups={"pair": [0, 1]}, n_repeats=2, random_state=0
    )
    names = ["alpha", "beta", "gamma", "delta"]
    display = ImportanceDisplay.from_result(result, column_names=names)
    labels = _tick_labels(display.ax_)
    heights = [patch.get_height() for patch in display.bars_[0].patches]
    group_row = next(i for i, label in enumerate(labels) if label.startswith("pair"))
    assert labels[group_row] == "pair (alpha, beta)"
    others = [h for i, h in enumerate(heights) if i != group_row]
    assert heights[group_row] > max(others)
    assert sorted(labels[:group_row] + labels[group_row + 1 :]) == ["delta", "gamma"]


def test_importance_display_unlabelled_group_shows_its_members(small_forest):
    forest, X, y = small_forest
    result = permutation_importance(
        forest, X, y, groups=[[0, 1]], ungrouped="drop", n_repeats=2, random_state=0
    )
    display = ImportanceDisplay.from_result(result)
    assert _tick_labels(display.ax_) == ["x0 + x1"]


def test_importance_display_probes_are_distinct():
    result = _result([0.5, 0.3, 0.1], ["a", "random", "b"])
    display = ImportanceDisplay.from_result(result, probes=["random"])
    patches = display.bars_[0].patches
    assert patches[1].get_hatch() == "//"
    assert patches[0].get_hatch() is None
    assert patches[1].get_facecolor() != patches[0].get_facecolor()
    label = display.ax_.get_yticklabels()[1]
    assert label.get_text() == "random" and label.get_fontstyle() == "italic"
    with pytest.raises(ValueError, match="not features"):
        ImportanceDisplay.from_result(result, probes=["nope"])
    hidden = ImportanceDisplay.from_result(result, probes=["random"], show_probes=False)
    assert _tick_labels(hidden.ax_) == ["a", "b"]


def test_importance_display_max_features():
    result = _result([0.1, 0.5, 0.3, 0.2], ["a", "b", "c", "d"])
    display = ImportanceDisplay.from_result(result, max_features=2)
    assert _tick_labels(display.ax_) == ["b", "c"]
    with pytest.raises(ValueError, match="max_features"):
        ImportanceDisplay.from_result(result, max_features=0)


@pytest.fixture(scope="module")
def fitted_selector():
    X, y = make_regression(n_samples=150, n_features=5, n_informative=2, random_state=0)
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=15), n_probes=6, random_state=0
    )
    return selector.fit(X, y)


def test_importance_display_from_selector_draws_probes(fitted_selector):
    selector = fitted_selector
    display = ImportanceDisplay.from_selector(selector)
    # the probe test's threshold is a score per feature, not one importance
    assert display.threshold_line_ is None

    labels = _tick_labels(display.ax_)
    patches = display.bars_[0].patches
    assert len(labels) == 5 + 6
    for label, patch, text in zip(labels, patches, display.ax_.get_yticklabels()):
        probe = label.startswith("probe_")
        assert (patch.get_hatch() == "//") == probe
        assert (text.get_fontstyle() == "italic") == probe
    kept = set(np.asarray(["x0", "x1", "x2", "x3", "x4"])[selector.support_])
    for label, patch in zip(labels, patches):
        if label.startswith("probe_"):
            continue
        assert (patch.get_alpha() == 1.0) == (label in kept)
    legend = [t.get_text() for t in display.ax_.get_legend().get_texts()]
    assert "probe" in legend and "kept" in legend


def test_importance_display_from_selector_rejects_unfitted_and_other_objects(
    small_forest,
):
    with pytest.raises(NotFittedError):
        ImportanceDisplay.from_selector(ImportanceSelector())
    with pytest.raises(TypeError, match="ImportanceSelector"):
        ImportanceDisplay.from_selector(small_forest[0])


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros(3), "importance function"),
        ({"dependence": [1.0], "matrix": [[np.nan]], "feature_names": ["a"]}, "Dep"),
        ({"one": np.zeros(3)}, "importance function"),
        ({}, "empty"),
    ],
)
def test_importance_display_from_result_rejects_other_objects(bad, match):
    with pytest.raises((TypeError, ValueError), match=match):
        ImportanceDisplay.from_result(bad)


def test_importance_display_draws_on_given_axes_and_checks_them():
    result = _result([0.4, 0.2], ["a", "b"])
    figure, ax = plt.subplots()
    display = ImportanceDisplay.from_result(result, ax=ax)
    assert display.ax_ is ax and display.figure_ is figure

    two = {"one": result, "two": result}
    figure, axes = plt.subplots(1, 2)
    display = ImportanceDisplay.from_result(two, ax=axes)
    assert list(display.axes_) == list(axes)
    with pytest.raises(ValueError, match="one per method"):
        ImportanceDisplay.from_result(two, ax=axes[0])
    with pytest.raises(TypeError, match="Axes"):
        ImportanceDisplay.from_result(result, ax="left")
    with pytest.raises(TypeError, match="Axes"):
        ImportanceDisplay.from_result(result, ax=[figure])


def test_importance_display_checks_its_arrays():
    display = ImportanceDisplay([0.1, 0.2], [0.0], ["a", "b"])
    with pytest.raises(ValueError, match="importances_std"):
        display.plot()
    display = ImportanceDisplay([0.1, 0.2], None, ["a"])
    with pytest.raises(ValueError, match="feature_names"):
        display.plot()


def test_importance_display_prints_names_with_dollar_signs():
    result = _result([0.4, 0.2], ["cost ($)", "price $ per $ unit"])
    display = ImportanceDisplay.from_result(result)
    display.figure_.canvas.draw()
    assert "cost ($)" in _tick_labels(display.ax_)[0].replace("\\", "")


# ----------------------------------------------------------------------------
# DependenceDisplay


def _dependence_result():
    matrix = np.array(
        [
            [np.nan, 0.02, 0.70],
            [0.01, np.nan, 0.03],
            [0.60, 0.20, np.nan],
        ]
    )
    return Bunch(
        dependence=np.array([0.9, 0.1, 0.8]),
        matrix=matrix,
        feature_names=np.array(["a", "b", "c"], dtype=object),
    )


def test_dependence_display_first_column_and_sorted_rows():
    display = DependenceDisplay.from_result(_dependence_result())
    assert display.feature_order_.tolist() == [0, 2, 1]
    labels = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert labels == ["dependence", "a", "c", "b"]
    cells = display.im_.get_array()
    np.testing.assert_allclose(cells[:, 0], [0.9, 0.8, 0.1])
    # row a, column c holds matrix[a, c]
    assert cells[0, 2] == pytest.approx(0.70)
    assert np.ma.is_masked(cells[0, 1])  # the diagonal is blank


def test_dependence_display_max_features_keeps_the_most_dependent():
    display = DependenceDisplay.from_result(_dependence_result(), max_features=2)
    assert display.feature_order_.tolist() == [0, 2]
    labels = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert labels == ["dependence", "a", "c"]
    cells = display.im_.get_array()
    assert cells.shape == (2, 3)
    assert cells[0, 2] == pytest.approx(0.70)  # matrix[a, c], as in full
    unsorted = DependenceDisplay.from_result(
        _dependence_result(), sort=False, max_features=2
    )
    assert unsorted.feature_order_.tolist() == [0, 1]
    with pytest.raises(ValueError, match="max_features must be a positive integer"):
        DependenceDisplay.from_result(_dependence_result(), max_features=0)


def test_dependence_display_writes_values_only_above_the_threshold():
    result = _dependence_result()
    display = DependenceDisplay.from_result(result, value_threshold=0.05)
    cells = np.ma.filled(display.im_.get_array(), np.nan)
    written = np.vectorize(lambda t: t is not None)(display.text_)
    np.testing.assert_array_equal(written, np.nan_to_num(cells, nan=-1) > 0.05)
    assert written.sum() == 6  # 0.9, 0.8, 0.1, 0.70, 0.60, 0.20
    assert display.text_[0, 2].get_text() == "0.70"
    everything = DependenceDisplay.from_result(result, value_threshold=None)
    assert sum(t is not None for t in everything.text_.ravel()) == 9


def test_dependence_display_from_analyzer_marks_dropped_features():
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 150))
    X = np.column_stack([a, b, a + 0.01 * rng.normal(size=150)])
    analyzer = DependenceAnalyzer(
        RandomForestRegressor(n_estimators=15), random_state=0
    ).fit(X)
    display = DependenceDisplay.from_analyzer(analyzer)
    labels = [t.get_text() for t in display.ax_.get_yticklabels()]
    dropped = [f"x{j} (dropped)" for j in np.flatnonzero(~analyzer.support_)]
    assert dropped and all(label in labels for label in dropped)
    assert display.colorbar_ is not None


def test_dependence_display_from_data_and_errors():
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 100))
    X = np.column_stack([a, b, a + 0.05 * rng.normal(size=100)])
    display = DependenceDisplay.from_data(
        X, estimator=RandomForestRegressor(n_estimators=10), random_state=0
    )
    assert display.feature_names[display.feature_order_][-1] == "x1"
    with pytest.raises(TypeError, match="ImportanceDisplay"):
        DependenceDisplay.from_result(_result([1.0], ["a"]))
    with pytest.raises(TypeError, match="DependenceAnalyzer"):
        DependenceDisplay.from_analyzer(ImportanceSelector())
    with pytest.raises(NotFittedError):
        DependenceDisplay.from_analyzer(DependenceAnalyzer())
    with pytest.raises(TypeError, match="Axes"):
        DependenceDisplay.from_result(_dependence_result(), ax=[1, 2])
    with pytest.raises(ValueError, match="matrix"):
        DependenceDisplay([0.1, 0.2], np.zeros((3, 3)), ["a", "b"]).plot()


# ----------------------------------------------------------------------------
# CorrelationDisplay


def test_correlation_display_upper_triangle_and_values():
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 100))
    X = np.column_stack([a, b, -a, a + b])
    display = CorrelationDisplay.from_data(X, value_threshold=0.6)
    assert display.correlation[0, 2] == pytest.approx(-1.0)
    cells = display.im_.get_array()
    assert cells.shape == (3, 3)
    below = np.tril(np.ones((3, 3), dtype=bool), k=-1)
    assert np.all(np.ma.getmaskarray(cells)[below])
    assert not np.any(np.ma.getmaskarray(cells)[~below])
    written = np.vectorize(lambda t: t is not None)(display.text_)
    expected = ~below & (np.abs(np.ma.filled(cells, 0)) >= 0.6)
    np.testing.assert_array_equal(written, expected)
    assert display.text_[0, 1].get_text() == "-1.00"
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == ["x0", "x1", "x2"]
    assert [t.get_text() for t in display.ax_.get_xticklabels()] == ["x1", "x2", "x3"]


def _cell_and_text_widths(display):
    """The widest written value and the width of one cell, in pixels, as
    the figure is drawn."""
    figure = display.figure_
    figure.draw_without_rendering()
    renderer = figure.canvas.get_renderer()
    texts = [t for t in display.text_.ravel() if t is not None]
    widest = max(t.get_window_extent(renderer).width for t in texts)
    n_columns = display.im_.get_array().shape[1]
    cell = display.ax_.get_window_extent(renderer).width / n_columns
    return widest, cell


def test_heatmap_values_shrink_to_their_cells_and_labels_turn_upright():
    names = [f"a rather long feature name {i}" for i in range(30)]
    correlation = np.full((30, 30), 0.97)
    np.fill_diagonal(correlation, 1.0)
    display = CorrelationDisplay(correlation, names).plot()
    default = display.text_[0, 0].get_fontsize()
    fig, ax = plt.subplots(figsize=(11, 10), layout="constrained")
    crowded = CorrelationDisplay(correlation, names).plot(ax=ax)
    widest, cell = _cell_and_text_widths(crowded)
    assert widest <= 0.95 * cell
    assert 5 <= crowded.text_[0, 0].get_fontsize() < default
    # slanted labels 45 degrees apart would overlap: they stand upright
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {90.0}
    # too small to read: no values at all, the colours remain
    fig, ax = plt.subplots(figsize=(3, 3), layout="constrained")
    short = [f"x{i}" for i in range(30)]
    tiny = CorrelationDisplay(correlation, short).plot(ax=ax, colorbar=False)
    assert all(t is None for t in tiny.text_.ravel())
    assert not ax.texts
    # a few features keep their slanted labels and full-size values
    few = CorrelationDisplay(correlation[:4, :4], names[:4]).plot()
    assert {t.get_rotation() for t in few.ax_.get_xticklabels()} == {45.0}
    assert few.text_[0, 0].get_fontsize() == default


def test_heatmaps_draw_on_figures_made_without_pyplot():
    # a bare Figure's canvas cannot measure text: the values still fit
    from matplotlib.figure import Figure

    correlation = np.full((12, 12), 0.97)
    np.fill_diagonal(correlation, 1.0)
    ax = Figure(figsize=(4, 4), layout="constrained").subplots()
    display = CorrelationDisplay(correlation, [f"x{i}" for i in range(12)]).plot(ax=ax)
    widest, cell = _cell_and_text_widths(display)
    assert widest <= 0.95 * cell


def test_dependence_display_values_fit_their_cells():
    rng = np.random.RandomState(0)
    n = 25
    result = Bunch(
        dependence=rng.uniform(0.5, 1.0, n),
        matrix=rng.uniform(0.5, 1.0, (n, n)),
        feature_names=np.array([f"feature {i}" for i in range(n)]),
    )
    fig, ax = plt.subplots(figsize=(7, 6), layout="constrained")
    display = DependenceDisplay.from_result(result, ax=ax)
    widest, cell = _cell_and_text_widths(display)
    assert widest <= 0.95 * cell


def test_correlation_display_cluster_order_puts_correlated_features_together():
    rng = np.random.RandomState(0)
    a, b = rng.normal(size=(2, 200))
    X = np.column_stack([a, b, -a + 0.01 * rng.normal(size=200), b**3])
    display = CorrelationDisplay.from_data(X, order="cluster")
    order = display.feature_order_.tolist()
    assert abs(order.index(0) - order.index(2)) == 1
    assert abs(order.index(1) - order.index(3)) == 1


def test_correlation_display_errors():
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="at least 2"):
        CorrelationDisplay.from_data(np.zeros((10, 1)))
    with pytest.raises(ValueError, match="order"):
        CorrelationDisplay.from_data(np.random.RandomState(0).rand(10, 2), order="x")
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]})
    with pytest.raises(ValueError, match="'b'"):
        CorrelationDisplay.from_data(frame)


def test_package_import_does_not_import_matplotlib():
    code = "import sys, sklearn_fimp; print('matplotlib' in sys.modules)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "False"


def test_importance_display_from_selector_with_groups_and_column_names():
    pd = pytest.importorskip("pandas")
    X, y = make_regression(n_samples=150, n_features=5, n_informative=2, random_state=0)
    X = pd.DataFrame(X, columns=["a", "b", "c", "d", "e"])
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=10),
        groups={"ab": ["a", "b"]},
        n_probes=4,
        random_state=0,
    ).fit(X, y)
    display = ImportanceDisplay.from_selector(selector)
    labels = _tick_labels(display.ax_)
    heights = dict(zip(labels, (p.get_height() for p in display.bars_[0].patches)))
    assert "ab (a, b)" in labels
    assert heights["ab (a, b)"] > heights["c"]
    assert {"c", "d", "e"} < set(labels)


def test_importance_display_from_result_of_a_selector_draws_its_probes(
    fitted_selector,
):
    result = fitted_selector.importances_
    display = ImportanceDisplay.from_result(
        result, column_names=["a", "b", "c", "d", "e"]
    )
    labels = _tick_labels(display.ax_)
    assert {"a", "b", "c", "d", "e"} < set(labels)
    for label, patch in zip(labels, display.bars_[0].patches):
        assert (patch.get_hatch() == "//") == label.startswith("probe_")


def test_displays_without_matplotlib_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"sklearn-fimp\[plot\]"):
        ImportanceDisplay.from_result(_result([0.1], ["a"]))
    with pytest.raises(ImportError, match="DependenceDisplay.from_result"):
        DependenceDisplay.from_result(_dependence_result())
    with pytest.raises(ImportError, match="CorrelationDisplay.plot"):
        CorrelationDisplay(np.eye(2), ["a", "b"]).plot()


def test_displays_let_style_keywords_override_their_defaults():
    result = _result([0.4, 0.2], ["a", "b"])
    display = ImportanceDisplay.from_result(result, bar_kw={"color": "red"})
    assert all(
        patch.get_facecolor() == matplotlib.colors.to_rgba("red")
        for patch in display.bars_[0].patches
    )
    display = DependenceDisplay.from_result(
        _dependence_result(), text_kw={"color": "red"}, im_kw={"cmap": "Greys"}
    )
    assert display.text_[0, 0].get_color() == "red"
    assert display.im_.get_cmap().name == "Greys"
    display = CorrelationDisplay(np.array([[1, 0.9], [0.9, 1]]), ["a", "b"]).plot(
        text_kw={"fontsize": 20}
    )
    assert display.text_[0, 0].get_fontsize() == 20


# ----------------------------------------------------------------------------
# ProbeDisplay


def test_probe_display_boxes_per_feature_coloured_by_decision(fitted_selector):
    selector = fitted_selector
    display = ProbeDisplay.from_estimator(selector)
    n_features = len(selector.groups_)
    boxes = display.boxes_["boxes"]
    assert len(boxes) == 3 + n_features  # probes' min, mean, max, then features
    labels = [t.get_text() for t in display.ax_.get_yticklabels()]
    assert labels[:3] == ["probes: min", "probes: mean", "probes: max"]
    medians = np.median(selector.importance_history_, axis=0)
    assert np.all(np.diff(medians[display.order_]) >= 0)
    colours = {
        "confirmed": "tab:green",
        "tentative": "gold",
        "rejected": "tab:red",
    }
    from matplotlib.colors import to_rgba

    for box, feature in zip(boxes[3:], display.order_):
        decision = selector.decisions_[feature]
        assert box.get_facecolor() == to_rgba(colours[decision])
    # each box is the feature's importances over the rounds
    first = boxes[3].get_path().vertices[:, 0]
    history = selector.importance_history_[:, display.order_[0]]
    assert first.min() == pytest.approx(np.percentile(history, 25))
    assert first.max() == pytest.approx(np.percentile(history, 75))


def test_probe_display_max_features_and_axes(fitted_selector):
    _, ax = plt.subplots()
    display = ProbeDisplay.from_estimator(fitted_selector, ax=ax, max_features=2)
    assert display.ax_ is ax and len(display.boxes_["boxes"]) == 3 + 2
    medians = np.median(fitted_selector.importance_history_, axis=0)
    np.testing.assert_array_equal(
        np.sort(display.order_), np.sort(np.argsort(medians)[-2:])
    )


def test_probe_display_errors(fitted_selector, small_forest):
    with pytest.raises(TypeError, match="fitted sklearn_fimp.ImportanceSelector"):
        ProbeDisplay.from_estimator(small_forest[0])
    forest, X, y = small_forest
    no_probes = ImportanceSelector(
        RandomForestRegressor(n_estimators=5), threshold="mean", random_state=0
    ).fit(X, y)
    with pytest.raises(ValueError, match="threshold='probes'"):
        ProbeDisplay.from_estimator(no_probes)
    with pytest.raises(ValueError, match="one name and one decision"):
        ProbeDisplay(np.zeros((3, 2)), np.zeros((3, 4)), ["a"], ["rejected"]).plot()
    with pytest.raises(ValueError, match="'confirmed', 'tentative' or 'rejected'"):
        ProbeDisplay(np.zeros((3, 1)), np.zeros((3, 4)), ["a"], ["maybe"]).plot()
    with pytest.raises(ValueError, match="max_features=0"):
        ProbeDisplay(np.zeros((3, 1)), np.zeros((3, 4)), ["a"], ["rejected"]).plot(
            max_features=0
        )


def test_dependence_display_colour_range_holds_values_above_one():
    matrix = np.array([[np.nan, 1.8], [0.3, np.nan]])
    display = DependenceDisplay(np.array([0.9, 0.5]), matrix, ["a", "b"]).plot()
    # a drop in R² above 1 gets its own colour, not the end colour of 0-1
    assert display.im_.get_clim() == pytest.approx((0.0, 1.8))
    within = DependenceDisplay(np.array([0.9, 0.5]), matrix / 2, ["a", "b"]).plot()
    assert within.im_.get_clim() == pytest.approx((0.0, 1.0))
    chosen = DependenceDisplay(np.array([0.9, 0.5]), matrix, ["a", "b"]).plot(
        im_kw={"vmax": 1.0}
    )
    assert chosen.im_.get_clim() == pytest.approx((0.0, 1.0))


def test_importance_display_wraps_long_group_labels():
    from sklearn_fimp._plot._common import LABEL_WIDTH

    members = ["mean compactness", "mean concavity", "worst compactness"]
    display = ImportanceDisplay(
        np.array([0.3, 0.1]),
        np.zeros(2),
        ["compactness, concavity", "other"],
        members=[members, None],
    ).plot()
    label = _tick_labels(display.ax_)[0]
    lines = label.splitlines()
    assert lines[0] == "compactness, concavity"
    assert " ".join(lines[1:]) == f"({', '.join(members)})"
    assert max(map(len, lines)) <= LABEL_WIDTH
