"""The report tells the truth (issue 31): each test rebuilds, on small data,
one contradiction a new user found on the page, and fails on the report as
it was: the heatmap's clipped colour bar, its unexplained cells and its
"predicted from the others" that disagreed with the comparison table; the
selector's chart of probe slivers in unnamed units; messy CSV files read
silently wrong; two codings of the same categories in one report; and
--n-estimators that the selector stage ignored."""

import html
import re
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from sklearn.utils import Bunch  # noqa: E402

from sklearn_fimp._report import (  # noqa: E402
    _analysis,
    _figures,
    _html,
    _selector_html,
    main,
)

from ._report_cases import capture_facts  # noqa: E402

FAST = [
    "--n-estimators",
    "8",
    "--selector-trees",
    "8",
    "--dependence-trees",
    "5",
    "--quiet",
]


def _report(tmp_path, frame, *options, target="y", text=None):
    """The page of a report on ``frame`` (or on the CSV ``text``)."""
    path = tmp_path / "data.csv"
    if text is None:
        frame.to_csv(path, index=False)
    else:
        path.write_text(text, encoding="utf-8")
    out = tmp_path / "report.html"
    argv = ["report", str(path), "--target", target, "--out", str(out)]
    assert main(argv + FAST + list(options)) == 0
    return out.read_text(encoding="utf-8")


def _analyzer(matrix, names=("a", "b", "c")):
    """A fitted DependenceAnalyzer's attributes, as the page reads them."""
    matrix = np.asarray(matrix, dtype=float)
    return Bunch(
        n_features_in_=len(names),
        feature_names_in_=np.asarray(names, dtype=object),
        dependence_=np.array([0.8, 0.6, -0.02]),
        dependence_matrix_=matrix,
        support_=np.ones(len(names), dtype=bool),
        threshold=0.95,
        elimination_path_={"feature": [], "dependence": [], "explained_by": []},
    )


def test_report_heatmap_colour_bar_label_fits_a_small_heatmap(monkeypatch):
    # rent and penguins: the label ran past the top and bottom of the figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figures = []
    monkeypatch.setattr(_figures, "figure_html", lambda f, a: figures.append(f) or "")
    matrix = [[np.nan, 0.3, 0.0], [0.2, np.nan, 0.0], [0.0, 0.0, np.nan]]
    _html.dependence_html(_analyzer(matrix))
    figure = figures[0]
    FigureCanvasAgg(figure).draw()
    label = figure.axes[-1].yaxis.label
    assert label.get_text()
    box, page = label.get_window_extent(), figure.bbox
    assert page.y0 <= box.y0 and box.y1 <= page.y1
    assert page.x0 <= box.x0 and box.x1 <= page.x1
    # the dependence column is written however small (rent's interest_level)
    assert "-0.02" in [t.get_text() for t in figure.axes[0].texts]


def test_report_heatmap_says_what_blank_cells_and_cells_above_one_are():
    # the demo's heatmap had cells up to 1.79 and blank cells, unexplained
    matrix = [[np.nan, 1.5, 0.01], [0.3, np.nan, -0.2], [0.0, 0.0, np.nan]]
    text = html.unescape(_html.dependence_html(_analyzer(matrix)))
    assert "Blank cells: the diagonal" in text
    assert "The first column is always written." in text
    assert "drops of at most 0.05 (negative ones included)" in text
    assert "A drop can exceed 1 (here up to 1.50, a when b is shuffled)" in text
    assert "R² falls below 0" in text
    below = [[np.nan, 0.5, 0.0], [0.3, np.nan, 0.0], [0.0, 0.0, np.nan]]
    assert "none does here" in _html.dependence_html(_analyzer(below))


def test_report_conditional_table_and_heatmap_name_their_own_quantities(
    tmp_path, monkeypatch
):
    # the demo's s5: "predicted from the others" 0.441 in the table, 0.55 on
    # the heatmap; they are two measures, now named apart, the heatmap's
    # shown beside the sampler's
    captured = capture_facts(monkeypatch)
    rng = np.random.RandomState(0)
    n = 300
    a = rng.normal(size=n)
    frame = pd.DataFrame(
        {"a": a, "b": a + 0.3 * rng.normal(size=n), "c": rng.normal(size=n)}
    )
    frame["y"] = frame.a + frame.b + frame.c + 0.1 * rng.normal(size=n)
    text = _report(tmp_path, frame, "--skip", "selector")
    analyzer = captured["facts"].analyzer
    section = html.unescape(text[text.index("<h2>Ordinary and conditional") :])
    assert "predicted from the others" not in section
    assert "its sampler's fit (out-of-bag R² or accuracy)" in section
    assert "It is not the dependence of the heatmap" in section
    dependence = dict(zip(analyzer.feature_names_in_, analyzer.dependence_))
    rows = re.findall(r"<tr><td>([abc])</td>((?:<td>[^<]*</td>)+)</tr>", section)
    assert rows
    for feature, cells in rows:
        values = re.findall(r"<td>([^<]*)</td>", cells)
        assert values[5] == _html._fmt(float(dependence[feature])), feature


def test_report_selector_chart_draws_probes_as_one_band_in_named_units(
    tmp_path, monkeypatch
):
    # rent: about 20 near-zero probe bars, in squared target units unsaid
    captured = capture_facts(monkeypatch)
    drawn = []
    figure_html = _figures.figure_html

    def record(figure, alt):
        drawn.append((alt, figure))
        return figure_html(figure, alt)

    monkeypatch.setattr(_figures, "figure_html", record)
    rng = np.random.RandomState(1)
    n = 150
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["price"] = 1000 * frame.a + 50 * rng.normal(size=n)
    text = _report(tmp_path, frame, "--skip", "dependence,conditional", target="price")
    selector = captured["facts"].selector
    figure = next(f for alt, f in drawn if alt.startswith("ImportanceSelector"))
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert sorted(labels) == ["a", "b"]  # no probe rows
    probes = selector.importances_.importances_mean[len(selector.groups_) :]
    assert len(probes) == selector.importances_.n_probes
    section = html.unescape(text[text.index("<h2>Features that beat") :])
    assert f"The {len(probes)} probes are drawn as one grey band" in section
    assert "in squared units of the target (price)²" in section
    assert "(price)²" in figure.axes[0].get_xlabel()


def test_report_reads_decimal_commas_under_a_semicolon(tmp_path):
    # a ;-separated file: longitude and latitude read as 844- and 1,041-level
    # categories unless --decimal , was given
    rng = np.random.RandomState(2)
    n = 120
    longitude = rng.uniform(-74.05, -73.75, size=n).round(4)
    latitude = rng.uniform(40.6, 40.9, size=n).round(4)
    y = 10 * longitude + rng.normal(size=n)
    lines = ["longitude;latitude;y"] + [
        f"{x:.4f};{z:.4f};{v:.3f}".replace(".", ",")
        for x, z, v in zip(longitude, latitude, y)
    ]
    text = html.unescape(_report(tmp_path, None, text="\n".join(lines)))
    assert "Decimal commas found in 'longitude', 'latitude', 'y'" in text
    assert "<td>longitude</td><td>number</td>" in text
    assert "categories (" not in text


def test_report_leaves_name_columns_out_and_states_the_rule(tmp_path):
    # vega's cars: Name, 304 distinct names in 398 rows, was a feature
    rng = np.random.RandomState(3)
    n = 200
    makes = ["ford", "chevrolet", "plymouth", "toyota", "datsun"]
    names = [f"{rng.choice(makes)} m{k}" for k in rng.randint(0, 150, size=n)]
    frame = pd.DataFrame({"Name": names, "weight": rng.normal(size=n)})
    frame["y"] = frame.weight + 0.1 * rng.normal(size=n)
    once = int((frame.Name.map(frame.Name.value_counts()) == 1).sum())
    assert 0.5 * n < once and frame.Name.nunique() < 0.9 * n
    text = html.unescape(_report(tmp_path, frame, "--skip", "selector"))
    assert re.search(
        rf"<td>Name</td><td>names: {frame.Name.nunique()} distinct values in "
        rf"{n} rows, {once} of them held by one row only",
        text,
    )
    assert "as names when more than 50% of its rows hold a value no other row" in text


def test_report_names_a_repeated_header(tmp_path, capsys):
    # a second "price" column became "price.1" without a word
    rng = np.random.RandomState(4)
    n = 60
    rows = [f"{a:.3f},{b:.3f},{c:.3f}" for a, b, c in zip(*rng.normal(size=(3, n)))]
    path = tmp_path / "data.csv"
    path.write_text("\n".join(["price,size,price"] + rows), encoding="utf-8")
    out = tmp_path / "report.html"
    argv = ["report", str(path), "--target", "size", "--out", str(out)]
    assert main(argv + FAST[:-1] + ["--skip", "selector,dependence"]) == 0
    message = (
        "The header names 'price' 2 times (columns 1, 3): the first is read as "
        "'price', the second as 'price.1'"
    )
    assert message in capsys.readouterr().err
    assert message in html.unescape(out.read_text(encoding="utf-8"))


def test_report_codes_categories_once_for_every_stage(tmp_path, monkeypatch):
    # DependenceAnalyzer coded the categories its own way; now every stage
    # reads the report's codes
    import sklearn_fimp

    captured = capture_facts(monkeypatch)
    seen = {}
    fit = sklearn_fimp.DependenceAnalyzer.fit

    def record(self, X, y=None):
        seen["X"] = X.copy()
        return fit(self, X, y)

    monkeypatch.setattr(sklearn_fimp.DependenceAnalyzer, "fit", record)
    entry = _analysis.METHODS["conditional_permutation"]

    def conditional(estimator, X, y, **kwargs):
        seen["conditional"] = X.copy()
        return entry.compute(estimator, X, y, **kwargs)

    monkeypatch.setitem(
        _analysis.METHODS, "conditional_permutation", Bunch(compute=conditional)
    )
    rng = np.random.RandomState(5)
    n = 200
    frame = pd.DataFrame(
        {
            "level": rng.choice(["low", "mid", "high", "top"], size=n),
            "x": rng.normal(size=n),
        }
    )
    frame["y"] = (frame.level == "high") + frame.x + 0.1 * rng.normal(size=n)
    _report(tmp_path, frame, "--skip", "selector")
    inputs = captured["facts"].fitted
    model_codes = inputs.model[:-1].transform(inputs.X)["level"].to_numpy()
    np.testing.assert_array_equal(inputs.coded["level"].to_numpy(), model_codes)
    # the dependence step and conditional permutation (on the held-out rows)
    # read the same codes, held as categories
    for stage, rows in (("X", slice(None)), ("conditional", inputs.test)):
        codes = seen[stage]["level"]
        assert isinstance(codes.dtype, pd.CategoricalDtype), stage
        np.testing.assert_array_equal(
            codes.astype(float).to_numpy(), model_codes[rows], err_msg=stage
        )


def test_report_selector_trees_are_its_own_option(tmp_path, monkeypatch):
    # the selector grew at least 30 trees a round whatever --n-estimators said
    captured = capture_facts(monkeypatch)
    rng = np.random.RandomState(6)
    n = 80
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["y"] = frame.a + 0.1 * rng.normal(size=n)
    text = _report(
        tmp_path, frame, "--selector-trees", "6", "--skip", "dependence,conditional"
    )
    selector = captured["facts"].selector
    assert selector.estimator.n_estimators == 6
    assert "fitted a forest of 6 trees (--selector-trees)" in text
    assert captured["facts"].fitted.model[-1].n_estimators == 8


def test_report_coding_keeps_missing_values_missing():
    from sklearn_fimp._report._data import prepare_data

    rng = np.random.RandomState(7)
    n = 40
    frame = pd.DataFrame(
        {"level": rng.choice(["b", "a", "c"], size=n), "y": rng.normal(size=n)}
    )
    frame.loc[::7, "level"] = np.nan
    before = frame.copy()
    data = prepare_data(frame, "y", "auto", None, 0)
    inputs = _analysis.prepare_inputs(data, Bunch(random_state=0))
    coded = inputs.coded["level"].to_numpy()
    missing = frame.level.isna().to_numpy()
    assert np.isnan(coded[missing]).all()
    expected = frame.level[~missing].map({"a": 0.0, "b": 1.0, "c": 2.0})
    np.testing.assert_array_equal(coded[~missing], expected.to_numpy())
    categories = _analysis.as_categories(inputs, ["level"])["level"]
    assert categories.isna().to_numpy().tolist() == missing.tolist()
    pd.testing.assert_frame_equal(frame, before)  # the caller's data


def test_report_html_renders_what_was_decided():
    # the page's module held the decision rules beside its CSS; it now
    # renders what _verdicts.decide returns and calls no rule itself
    rules = (
        "verdicts",
        "next_steps",
        "clearly_above",
        "conditional_disagreements",
        "random_column_finding",
        "deciding_evidence",
        "why_uncertain",
        "explained_by",
    )
    assert not [name for name in rules if hasattr(_html, name)]


def test_report_selector_unit_is_named_for_each_task():
    oob_mdi = Bunch(method_="oob_mdi")
    assert _selector_html._selector_unit(oob_mdi, "regression", "log(1 + price)") == (
        "out-of-bag decrease of the squared error, in squared units of the "
        "target (log(1 + price))²"
    )
    assert _selector_html._selector_unit(oob_mdi, "classification", "species") == (
        "out-of-bag decrease of the Gini impurity (no unit)"
    )


def test_report_selector_table_has_a_row_per_tested_group():
    # columns 0 and 1 are near-duplicates, tested as one group: one row,
    # with the group's p-value and decision, not one per column (the
    # table indexed the per-column arrays by group before)
    from sklearn.ensemble import RandomForestRegressor

    from sklearn_fimp import ImportanceSelector

    rng = np.random.RandomState(0)
    a = rng.normal(size=300)
    X = np.column_stack([a, a + 0.01 * rng.normal(size=300), rng.normal(size=300)])
    y = a + 0.3 * rng.normal(size=300)
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=10), n_rounds=2, random_state=0
    ).fit(X, y)
    assert [list(g) for g in selector.groups_] == [[0, 1], [2]]
    page = _selector_html.selector_html(selector, ["a", "a2", "noise"], [])
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page, flags=re.S)
    cells = [re.findall(r"<td>(.*?)</td>", row) for row in rows]
    cells = [row for row in cells if row]
    assert [row[0] for row in cells] == ["a + a2", "noise"]
    assert cells[0][2] == _selector_html._fmt(float(selector.pvalues_[0]))
    assert cells[0][4] == "kept" and cells[1][4] != "kept"
    assert "were tested as one group" in page


def test_report_repeated_headers_are_read_as_pandas_reads_them(tmp_path):
    from sklearn_fimp._report._data import duplicate_headers

    path = tmp_path / "spaced.txt"
    path.write_text("a  b  a  b \n1  2  3  4\n", encoding="utf-8")
    # any separator read_csv takes; an empty name is not a repeat
    assert duplicate_headers(path, r"\s+", "utf-8") == {"a": [1, 3], "b": [2, 4]}
    path.write_text(",b,,b\n1,2,3,4\n", encoding="utf-8")
    assert duplicate_headers(path, ",", "utf-8") == {"b": [2, 4]}


def test_report_leaves_out_a_copy_of_the_target(tmp_path):
    # a repeated "price" header made the second price a feature of the
    # first: R² 0.98, "price.1" the feature that matters most
    rng = np.random.RandomState(5)
    n = 80
    a, b, noise = rng.normal(size=(3, n))
    price = 3 * a + b + rng.normal(scale=0.1, size=n)
    rows = [f"{p:.3f},{x:.3f},{z:.3f},{p:.3f}" for p, x, z in zip(price, a, noise)]
    path = tmp_path / "data.csv"
    path.write_text("\n".join(["price,a,noise,price"] + rows), encoding="utf-8")
    out = tmp_path / "report.html"
    argv = ["report", str(path), "--target", "price", "--out", str(out)]
    assert main(argv + FAST + ["--skip", "selector,dependence"]) == 0
    page = html.unescape(out.read_text(encoding="utf-8"))
    assert "a copy of the target (the same value in every row)" in page
    features = re.search(r"<h2>Importances.*", page, re.S).group(0)
    assert "price.1" not in features


def test_report_says_what_the_selection_costs_as_selection_score_has_it():
    # the sentence quotes the fitted attribute's own figures
    from sklearn.ensemble import RandomForestRegressor

    from sklearn_fimp import ImportanceSelector

    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=300)
    selector = ImportanceSelector(
        RandomForestRegressor(n_estimators=10), n_rounds=2, random_state=0
    ).fit(X, y)
    cost = selector.selection_score_
    assert cost.kept is not None and not selector.support_.all()
    page = _selector_html.selector_html(selector, ["a", "b", "c", "d"], [])
    fmt = _selector_html._fmt
    assert (
        f"the model scores {fmt(cost.kept)} on the kept features and "
        f"{fmt(cost.all)} on all of them: it loses {cost.lost:.0%}"
    ) in page
    # nothing measured, nothing said (every feature kept fits nothing)
    selector.selection_score_ = None
    assert "two halves of the rows" not in _selector_html.selector_html(
        selector, ["a", "b", "c", "d"], []
    )


def test_report_names_the_features_keep_tentative_auto_added():
    # x0 strong, x1-x3 weak: x0 alone loses more than SCORE_LOSS, so the
    # default adds features by significance until the kept ones recover, and
    # the table says which were added that way
    from sklearn.ensemble import RandomForestRegressor

    from sklearn_fimp import ImportanceSelector

    rng = np.random.RandomState(1)
    X = rng.standard_normal((300, 30))
    y = X[:, :4] @ np.array([1.0, 0.3, 0.25, 0.2]) + rng.standard_normal(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selector = ImportanceSelector(
            RandomForestRegressor(n_estimators=20), n_rounds=5, random_state=7
        ).fit(X, y)
    assert hasattr(selector, "cv_results_")
    added = np.flatnonzero(selector.support_ & (selector.decisions_ != "confirmed"))
    assert len(added)
    names = [f"x{j}" for j in range(30)]
    page = _selector_html.selector_html(selector, names, [])
    assert f"lost at most that: {len(added)} were added" in page
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", page, flags=re.S)
    cells = [re.findall(r"<td>(.*?)</td>", row) for row in rows]
    by_guard = {
        row[0] for row in cells if row and row[4] == "kept (added to recover the score)"
    }
    assert by_guard == {names[j] for j in added}


def test_report_says_min_features_kept_what_the_guard_could_not_add():
    # a feature beyond the guard's candidates (raw p-value above
    # GUARD_LEVEL) kept where the guard ran is min_features', not added
    from sklearn.utils import Bunch

    from sklearn_fimp._selection._deciding._score_cost import GUARD_LEVEL

    guarded = Bunch(
        alpha=0.05,
        keep_tentative="auto",
        cv_results_={},
        decisions_=np.array(["rejected", "tentative"]),
    )
    decide = _selector_html._decision
    assert decide(True, GUARD_LEVEL + 0.1, 1.0, guarded, 0) == "kept (min_features)"
    assert (
        decide(True, GUARD_LEVEL, 1.0, guarded, 0)
        == "kept (added to recover the score)"
    )
    assert decide(True, 0.01, 0.01, guarded, 1) == "kept"
    assert decide(False, 0.01, 1.0, guarded, 1) == "dropped"
