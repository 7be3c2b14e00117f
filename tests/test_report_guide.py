"""The report as a guide: messy columns recognised before modelling, the
summary, the stage options and the size of wide pages."""

import base64
import re
import struct
import warnings

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from sklearn_fimp._report import _run, main  # noqa: E402

from ._report_cases import capture_facts  # noqa: E402

# small forests; a test's own options come after these, and so override them
# (argparse keeps the last value of an option)
FAST = ["--n-estimators", "8", "--dependence-trees", "5", "--quiet"]
N_ROWS = 120


@pytest.fixture
def seen(monkeypatch):
    """The columns the model and the dependence step were given."""
    record = {}
    prepare_inputs, analyse_dependence = _run.prepare_inputs, _run.analyse_dependence

    def prepare(data, options):
        record["model"] = [str(c) for c in data.X.columns]
        return prepare_inputs(data, options)

    def dependence(inputs, features, options, verbose=0):
        record["dependence"] = [str(f) for f in features]
        return analyse_dependence(inputs, features, options, verbose)

    monkeypatch.setattr(_run, "prepare_inputs", prepare)
    monkeypatch.setattr(_run, "analyse_dependence", dependence)
    return record


def _base(seed=0):
    rng = np.random.RandomState(seed)
    signal = rng.normal(size=N_ROWS)
    return rng, pd.DataFrame({"signal": signal, "noise": rng.uniform(size=N_ROWS)})


def _report(tmp_path, frame, *options, write=None, target="y"):
    path = tmp_path / "data.csv"
    if write is None:
        frame.to_csv(path, index=False)
    else:
        write(frame, path)
    out = tmp_path / "report.html"
    argv = ["report", str(path), "--target", target, "--out", str(out)]
    assert main(argv + FAST + list(options)) == 0
    return out.read_text(encoding="utf-8")


def _left_out(text, column):
    """The reason the Data section gives for leaving ``column`` out."""
    match = re.search(rf"<tr><td>{re.escape(column)}</td><td>([^<]*)</td></tr>", text)
    assert match, f"{column} is not listed as left out"
    return match.group(1)


def _not_seen(seen, column):
    assert column not in seen["model"]
    assert column not in seen["dependence"]


def test_identifier_columns_are_left_out(tmp_path, seen):
    rng, frame = _base()
    frame["customer"] = [f"C-{i:05d}" for i in rng.permutation(N_ROWS)]
    frame["row_id"] = np.arange(1, N_ROWS + 1)
    frame["y"] = 3 * frame.signal + 0.1 * rng.normal(size=N_ROWS)
    text = _report(tmp_path, frame)
    assert _left_out(text, "customer").startswith("identifier: 120 distinct values")
    assert _left_out(text, "row_id").startswith("identifier: a distinct whole number")
    for column in ("customer", "row_id"):
        _not_seen(seen, column)
    assert "Left out of the model and of the dependence step (2 column(s))" in text
    assert seen["model"] == ["signal", "noise"]


def test_free_text_is_left_out_with_a_next_step(tmp_path, seen):
    rng, frame = _base()
    words = np.array(["cosy", "flat", "near", "park", "bright", "quiet", "big"])
    frame["description"] = [
        " ".join(rng.choice(words, size=rng.randint(4, 9))) for _ in range(N_ROWS)
    ]
    frame["y"] = 3 * frame.signal + 0.1 * rng.normal(size=N_ROWS)
    text = _report(tmp_path, frame)
    assert _left_out(text, "description").startswith("free text:")
    _not_seen(seen, "description")
    assert "&#x27;description&#x27; is free text, left out: derive features" in text


def test_dates_are_expanded_into_parts(tmp_path, seen):
    rng, frame = _base()
    dates = pd.Timestamp("2021-01-01") + pd.to_timedelta(
        rng.randint(0, 365, size=N_ROWS), unit="D"
    )
    frame["listed"] = dates.strftime("%Y-%m-%d")
    frame["y"] = dates.month + 0.1 * rng.normal(size=N_ROWS)
    text = _report(tmp_path, frame)
    parts = ["listed_year", "listed_month", "listed_weekday", "listed_days"]
    assert f"expanded into {', '.join(parts)}" in text
    assert seen["model"] == ["signal", "noise"] + parts
    _not_seen(seen, "listed")
    # the month carries the target: it is the first feature of the summary
    summary = text[text.index("Features that matter") :]
    assert summary.index("listed_") < summary.index("</li>")


def test_currency_is_parsed_as_numbers(tmp_path, seen):
    rng, frame = _base()
    amount = rng.uniform(100, 5000, size=N_ROWS).round(2)
    frame["price"] = [f"${a:,.2f}" for a in amount]
    frame["y"] = amount / 1000 + 0.1 * rng.normal(size=N_ROWS)
    text = _report(tmp_path, frame)
    assert (
        "<td>price</td><td>numbers written with currency symbols and thousands "
        "separators</td>"
    ) in text
    assert "price" in seen["model"]
    from sklearn_fimp._report._columns import recognise_columns

    parsed = recognise_columns(frame[["price"]]).X["price"]
    np.testing.assert_allclose(parsed.to_numpy(), amount)


def test_decimal_commas_and_a_sniffed_separator(tmp_path, seen):
    rng, frame = _base()
    amount = rng.uniform(0, 20000, size=N_ROWS).round(1)
    frame["amount"] = amount
    frame["y"] = amount / 1000 + 0.1 * rng.normal(size=N_ROWS)

    def write(frame, path):
        european = frame.copy()
        european["amount"] = [
            f"{a:,.1f}".replace(",", " ").replace(".", ",").replace(" ", ".")
            for a in amount
        ]
        european.to_csv(path, sep=";", decimal=",", index=False)

    text = _report(tmp_path, frame, "--decimal", ",", write=write)
    assert "Columns separated by &#x27;;&#x27;" in text
    assert "numbers written with thousands separators and decimal commas" in text
    assert seen["model"] == ["signal", "noise", "amount"]
    from sklearn_fimp._report._data import read_table

    table, sep = read_table(tmp_path / "data.csv", decimal=",")
    assert sep == ";"
    np.testing.assert_allclose(table["signal"], frame["signal"])


def test_latin1_file_needs_and_takes_its_encoding(tmp_path, capsys, seen):
    rng, frame = _base()
    frame["city"] = rng.choice(["Zürich", "Genève", "Besançon"], size=N_ROWS)
    frame["y"] = (frame.city == "Genève") + 0.1 * rng.normal(size=N_ROWS)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False, encoding="latin-1")
    status = main(["report", str(path), "--target", "y", "--quiet"])
    err = capsys.readouterr().err
    assert status == 2
    assert "is not utf-8 text" in err and "--encoding latin-1" in err

    def write(frame, path):
        frame.to_csv(path, index=False, encoding="latin-1")

    text = _report(tmp_path, frame, "--encoding", "latin-1", write=write)
    assert "<td>city</td><td>categories (3 values, ordinal codes)</td>" in text
    assert "city" in seen["model"]


def test_summary_scoring_log_target_and_spreads(tmp_path):
    rng, frame = _base()
    frame["y"] = np.exp(2 * frame.signal + 0.1 * rng.normal(size=N_ROWS))
    text = _report(tmp_path, frame)
    assert text.index("<h2>Summary</h2>") < text.index("<h2>Data</h2>")
    assert "skewed" in text and "rerun with --log-target" in text
    assert re.search(r"Features that matter</b> \(\d+;[^)]*\): signal", text)
    # drop-column with one refit has no spread; no value prints as -0
    assert "<td>n/a</td>" in text
    assert not re.search(r">-0(\.0*)?<", text)
    # how the forest was grown and how often each column was shuffled
    assert "each split choosing among 33% of the features" in text
    assert "(10 shuffles of each column)" in text
    assert "adjusted by the Benjamini-Hochberg procedure at most 0.05" in text

    text = _report(
        tmp_path, frame, "--log-target", "--scoring", "neg_mean_absolute_error"
    )
    assert "log(1 + y)" in text and "neg_mean_absolute_error =" in text
    assert "rerun with --log-target" not in text


def test_skip_stages_and_warnings_by_step(tmp_path, monkeypatch):
    from joblib import Parallel, delayed

    def warn_in_workers(data, features, options, verbose=0):
        Parallel(n_jobs=2)(delayed(warnings.warn)(f"worker {i}") for i in range(2))
        return None

    monkeypatch.setattr(_run, "analyse_dependence", warn_in_workers)
    rng, frame = _base()
    frame["y"] = frame.signal + 0.1 * rng.normal(size=N_ROWS)
    text = _report(tmp_path, frame, "--skip", "importances,selector")
    assert "Left out (--skip importances)" in text
    assert "Left out (--skip selector)" in text
    assert "<tr><td>dependence</td><td>worker 0</td></tr>" in text
    assert "<tr><td>dependence</td><td>worker 1</td></tr>" in text


def test_time_savers_are_chosen_by_size():
    from sklearn_fimp._methods import HELD_OUT_ROWS, TRAINING_ROWS
    from sklearn_fimp._report._analysis import make_model, n_repeats, plan_methods

    # fewer shuffles on many rows, never fewer than two (a spread)
    assert n_repeats(HELD_OUT_ROWS, 500) == 10
    assert n_repeats(HELD_OUT_ROWS, 12_500) == 4
    assert n_repeats(HELD_OUT_ROWS, 50_000) == 2
    assert n_repeats(TRAINING_ROWS, 1_500) == 5
    assert n_repeats(TRAINING_ROWS, 150_000) == 2
    methods = ["mdi", "permutation", "drop_column"]
    assert plan_methods(methods, 0.1, 20, 60, 500) == (methods, [], "")
    # over the budget: out-of-bag permutation instead of drop-column, or, with
    # many held-out rows, the held-out permutation alone
    planned, notes, short = plan_methods(methods, 10.0, 20, 60, 500)
    assert planned == ["mdi", "permutation", "oob_permutation"]
    assert "measured instead" in notes[0] and "instead" in short
    planned, notes, short = plan_methods(methods, 10.0, 20, 60, 50_000)
    assert planned == ["mdi", "permutation"]
    assert "permutation importance on the 50000 held-out rows" in notes[0]
    assert "left out" in short
    # regression forests choose each split among a third of the features
    forest = make_model("regression", 10, None, 0)[-1]
    assert forest.max_features == pytest.approx(1 / 3)
    assert make_model("classification", 10, None, 0)[-1].max_features == "sqrt"


def test_bad_stage_or_scoring_is_named(tmp_path, capsys):
    rng, frame = _base()
    frame["y"] = frame.signal
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    for option, value, fix in [
        ("--skip", "plots", "choose among importances, selector, dependence"),
        ("--scoring", "accuracy_score", "is not a scikit-learn scorer"),
        ("--time-budget", "-1", "is negative"),
    ]:
        status = main(["report", str(path), "--target", "y", option, value])
        err = capsys.readouterr().err
        assert status == 2 and option in err and fix in err


def _png_heights(text):
    heights = []
    for data in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text):
        header = base64.b64decode(data[:64])
        heights.append(struct.unpack(">II", header[16:24])[1])
    return heights


def test_wide_page_stays_small_and_charts_hold_top_rows(tmp_path):
    rng = np.random.RandomState(0)
    n_rows, n_features, top = 200, 100, 10
    X = rng.normal(size=(n_rows, n_features))
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(n_features)])
    frame["y"] = X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=n_rows)
    text = _report(tmp_path, frame, "--top", str(top), "--time-budget", "0")
    # drop-column gives way to out-of-bag permutation over the time budget
    assert "Out-of-bag permutation importance, which needs no refit" in text
    assert len(text.encode()) < 1_000_000
    importance, selector, heatmap = _png_heights(text)
    dpi = 90
    # figure heights (inches) of top + 1 bars, 2 * top selector rows and a
    # heatmap of top features
    assert importance <= (0.3 * (top + 1) + 1.6) * dpi + 1
    assert selector <= (0.25 * 2 * top + 1.4) * dpi + 1
    assert heatmap <= 12 * dpi
    assert "The chart shows the 10 leading features" in text
    # every feature is still in the sortable table
    for j in range(n_features):
        assert f"<td>x{j}</td>" in text
    assert "Measured on the 10 most important of the 100 features" in text


def _facts(results, support, names=("a", "b", "c", "d", "random")):
    from sklearn.utils import Bunch

    names = list(names)
    return Bunch(
        fitted=Bunch(random_name="random", X=pd.DataFrame(columns=names)),
        results=results,
        selector=None
        if support is None
        else Bunch(
            support_=np.array(support), groups_=[[j] for j in range(len(support))]
        ),
        top=names[:-1],
    )


def _result(values, repeats=None):
    from sklearn.utils import Bunch

    names = np.array(["a", "b", "c", "d", "random"])
    result = Bunch(feature_names=names, importances_mean=np.array(values, float))
    if repeats is not None:
        result.importances = np.asarray(repeats, float)
    return result


def test_verdicts_follow_the_selector_and_held_out_permutation():
    from sklearn_fimp._report._verdicts import verdicts, why_uncertain

    results = {
        "mdi": _result([5, 5, 0, 0, 1]),
        "permutation": _result([5, 0, 5, 0, 1]),
    }
    facts = _facts(results, [True, True, False, False])
    # a: kept and above under permutation; b: kept, not above; c: above,
    # dropped; d: neither. MDI has no say
    assert verdicts(facts) == (["a"], ["b", "c"], ["d"])
    assert why_uncertain(facts, ["b", "c"]) == [
        (
            "kept by the selector but not clearly above the random column "
            "under permutation",
            ["b"],
        ),
        (
            "above the random column under permutation but dropped by the selector",
            ["c"],
        ),
    ]
    facts.selector = None  # permutation alone decides
    assert verdicts(facts) == (["a", "c"], [], ["b", "d"])
    facts.results, facts.selector = None, _facts(None, [1, 0, 1, 0]).selector
    assert verdicts(facts) == (["a", "c"], [], ["b", "d"])  # the selector alone
    facts.selector = None  # nothing deciding was measured
    assert verdicts(facts) == ([], ["a", "b", "c", "d"], [])


def test_a_column_kept_with_its_near_duplicates_is_uncertain_for_that_reason():
    # a and b were tested as one group and kept; b alone is not above the
    # random column under permutation (its copy a carries what they share):
    # the page says why, and asks for no more rows or rounds
    from sklearn.utils import Bunch

    from sklearn_fimp._report._verdicts import next_steps, why_uncertain

    results = {"permutation": _result([5, 0, 0, 0, 1])}
    facts = _facts(results, [True, True, False, False])
    facts.selector.groups_ = [[0, 1], [2], [3]]
    assert why_uncertain(facts, ["b"])[0][0].startswith(
        "kept by the selector with its group of near-duplicate columns"
    )
    data = Bunch(task="regression", target_summary=None, excluded=[])
    data.n_rows_total, data.y = 100, np.zeros(100)
    facts.fitted.score, facts.fitted.chance, facts.method_notes = 0.8, 0.0, []
    options = Bunch(scoring=None, log_target=False)
    steps = next_steps(data, facts, options, ["a"], ["c", "d"], [], ["b"])
    assert any("kept with their groups of near-duplicate" in s for s in steps)
    assert not any("split on" in step for step in steps)


def test_mdi_does_not_veto_a_feature_the_selector_and_permutation_keep():
    # rent with interest_level: price 0.118 under permutation against
    # -0.001 for the random column, kept by the selector, below the random
    # column under MDI: it was "uncertain", and no feature "mattered"
    from sklearn_fimp._report._verdicts import verdicts

    permutation = _result(
        [0.118, 0.0, 0.0, 0.0, -0.001],
        repeats=[[0.12, 0.116, 0.118], [0.0] * 3, [0.0] * 3, [0.0] * 3, [-0.001] * 3],
    )
    facts = _facts(
        {"mdi": _result([0.01, 0.3, 0.3, 0.3, 0.09]), "permutation": permutation},
        [True, False, False, False],
    )
    assert verdicts(facts)[0] == ["a"]


def test_one_drop_column_refit_does_not_make_a_kept_feature_uncertain():
    # the demo's s5: second under MDI and permutation, kept with p = 2.5e-53,
    # -0.026 under drop-column's one refit on 111 rows
    from sklearn_fimp._report._verdicts import verdicts

    permutation = _result(
        [0.3, 0.0, 0.0, 0.0, 0.0],
        repeats=[[0.31, 0.29, 0.3], [0.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3],
    )
    facts = _facts(
        {"drop_column": _result([-0.026, 0, 0, 0, 0.01]), "permutation": permutation},
        [True, False, False, False],
    )
    assert verdicts(facts) == (["a"], [], ["b", "c", "d"])


def test_next_steps_never_call_split_evidence_sound():
    # with --scoring balanced_accuracy the next steps said the importances
    # "look sound" above 0 features that matter and 5 uncertain
    from sklearn.utils import Bunch

    from sklearn_fimp._report._verdicts import next_steps

    data = Bunch(task="classification", target_summary=None, excluded=[])
    data.n_rows_total, data.y = 100, np.zeros(100)
    facts = Bunch(fitted=Bunch(score=0.8, chance=0.5), method_notes=[])
    options = Bunch(scoring="balanced_accuracy", log_target=False)
    steps = next_steps(data, facts, options, [], [], [], ["a", "b"])
    assert not any("sound" in step for step in steps)
    assert any("split on 2 feature(s)" in step for step in steps)
    steps = next_steps(data, facts, options, [], [], [], [])
    assert not any("sound" in step for step in steps)
    assert "No feature is shown to matter" in steps[-1]


def test_random_column_finding_counts_ties_against_the_feature():
    # penguins' drop-column: 0 = 0 was "every real feature is above"
    from sklearn_fimp._report._verdicts import random_column_finding

    equal = _result([0.0, 0.1, 0.2, 0.3, 0.0])
    assert "ranks at or above 1 real feature(s): a" in random_column_finding(
        "drop_column", equal, "random"
    )
    negative = _result([-0.014, -0.055, 0.2, 0.3, -0.167])
    assert "every real feature is above the random column (-0.167)" in (
        random_column_finding("drop_column", negative, "random")
    )


def test_verdicts_need_a_margin_over_the_random_column():
    # "a" is above the random column by far more than its repeats' noise;
    # "b" by less than twice the standard error of the difference: not a
    # vote for "matters"; drop-column's single refit has no spread, and
    # there the means alone decide
    from sklearn.utils import Bunch

    from sklearn_fimp._report._verdicts import clearly_above

    names = np.array(["a", "b", "random"])
    repeats = np.array(
        [[5.0, 5.2, 4.8, 5.1], [1.3, 0.7, 1.4, 0.8], [1.0, 0.9, 1.1, 1.0]]
    )
    result = Bunch(
        feature_names=names, importances=repeats, importances_mean=repeats.mean(1)
    )
    assert clearly_above("permutation", result, "random") == {
        "a": True,
        "b": False,
        "random": False,
    }
    single = Bunch(
        feature_names=names,
        importances=repeats[:, :1],
        importances_mean=repeats[:, 0],
    )
    assert clearly_above("drop_column", single, "random")["b"] is True


def test_chart_rows_cut_every_per_feature_field():
    from sklearn_fimp._report._figures import rows_of
    from sklearn_fimp._utils._result import importance_result

    repeats = np.arange(12.0).reshape(4, 3)
    result = importance_result(
        repeats,
        ["a", "b", "c", "random"],
        method="permutation",
        groups=[[0], [1], [2], [3]],
    )
    rows = rows_of(result, ["c", "random"])
    assert list(rows.feature_names) == ["c", "random"]
    np.testing.assert_array_equal(rows.importances, repeats[[2, 3]])
    np.testing.assert_array_equal(rows.importances_mean, [7.0, 10.0])
    assert rows.groups == [[2], [3]] and rows.method == "permutation"


def _conditional_section(text):
    start = text.index("<h2>Ordinary and conditional permutation importance</h2>")
    end = text.find("<h2>", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_conditional_section_names_a_correlated_stand_in(tmp_path):
    # y uses 'cause' and 'other'; 'stand_in' is a noisy copy of 'cause' that
    # the target does not use: the forest splits on it too, so ordinary
    # permutation credits it, while a draw given the other features costs
    # the model nothing
    rng = np.random.RandomState(0)
    n_rows = 800
    cause, other = rng.normal(size=(2, n_rows))
    frame = pd.DataFrame(
        {
            "cause": cause,
            "stand_in": cause + 0.2 * rng.normal(size=n_rows),
            "other": other,
            "noise": rng.uniform(size=n_rows),
        }
    )
    frame["y"] = frame.cause + 0.5 * frame.other + 0.1 * rng.normal(size=n_rows)
    text = _report(tmp_path, frame, "--n-estimators", "60")
    assert "The forest: 60 trees;" in text  # not FAST's 8
    section = _conditional_section(text)
    # the listed features, in the first table: the stand-in, and the cause,
    # whose information the stand-in carries too; 'other' is not listed
    listed = section[: section.index("<details>")]
    named = re.search(r"They disagree on 2 feature\(s\): <b>([^<]*)</b>", listed)
    assert set(named.group(1).split(", ")) == {"cause", "stand_in"}
    assert "shared with correlated features" in listed
    assert "<td>other</td>" not in listed and "<td>other</td>" in section
    values = {}
    for name in ("cause", "stand_in"):
        row = re.search(rf"<tr><td>{name}</td>(.*?)</tr>", listed).group(1)
        values[name] = re.findall(r"<td>([^<]*)</td>", row)
    ordinary, conditional = float(values["stand_in"][0]), float(values["stand_in"][2])
    assert ordinary > 0.02 and conditional < ordinary / 4
    # conditional importance concentrates on the cause; each explains the other
    assert float(values["cause"][2]) > 2 * conditional
    assert values["stand_in"][-1] == "cause" and values["cause"][-1] == "stand_in"
    # and the summary says so
    summary = text[: text.index("<h2>Data</h2>")]
    assert "Importance shared with correlated features" in summary


def test_conditional_section_without_correlated_features(tmp_path):
    rng = np.random.RandomState(1)
    n_rows = 600
    a, b = rng.normal(size=(2, n_rows))
    frame = pd.DataFrame({"a": a, "b": b, "noise": rng.uniform(size=n_rows)})
    frame["y"] = a + b + 0.1 * rng.normal(size=n_rows)
    text = _report(tmp_path, frame, "--n-estimators", "40")
    assert "The forest: 40 trees;" in text  # not FAST's 8
    section = _conditional_section(text)
    assert "No disagreement" in section and "They disagree" not in section
    assert "Compared: the 2 feature(s)" in section


def test_conditional_section_is_bounded_and_can_be_skipped(tmp_path):
    from argparse import Namespace

    from sklearn_fimp._report._analysis import plan_conditional

    options = Namespace(dependence_rows=2000, time_budget=60.0)
    # rows: the held-out rows, at most --dependence-rows
    assert plan_conditional(5, 20, 500, options)[0] == 500
    n_rows, seconds, note = plan_conditional(5, 20, 50_000, options)
    assert n_rows == 2000 and 0 < seconds < 60 and note is None
    # wide data: one forest per feature over every other column costs more
    n_rows, seconds, note = plan_conditional(20, 2000, 50_000, options)
    assert seconds > 60 and "more than --time-budget 60 s" in note

    rng, frame = _base()
    frame["y"] = frame.signal + 0.1 * rng.normal(size=N_ROWS)
    text = _report(tmp_path, frame, "--time-budget", "0")
    assert "Left out: conditional permutation importance fits one forest" in (
        _conditional_section(text)
    )
    text = _report(tmp_path, frame, "--skip", "conditional")
    assert "Left out (--skip conditional)" in text
    text = _report(tmp_path, frame, "--method", "mdi")
    assert "ordinary permutation importance was not measured" in text


def test_conditional_section_reuses_the_chosen_method(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("conditional permutation measured twice")

    monkeypatch.setattr(_run, "measure_conditional", fail)
    rng = np.random.RandomState(2)
    n_rows = 400
    a, b = rng.normal(size=(2, n_rows))
    frame = pd.DataFrame({"a": a, "b": b, "noise": rng.uniform(size=n_rows)})
    frame["y"] = a + b + 0.1 * rng.normal(size=n_rows)
    text = _report(tmp_path, frame, "--method", "permutation,conditional_permutation")
    section = _conditional_section(text)
    # the compared features only, although every feature was measured
    assert "Compared: the 2 feature(s)" in section
    assert "<td>noise</td>" not in section


def test_page_verdicts_agree_with_the_pages_tables(tmp_path, monkeypatch):
    # every feature the summary says matters is kept by the selector and
    # above the random column under held-out permutation by more than the
    # stated margin; every noise feature neither; the page's sentence lists
    # exactly those features
    import html
    import re

    from sklearn_fimp._report._verdicts import clearly_above

    captured = capture_facts(monkeypatch)
    rng = np.random.RandomState(3)
    n = 400
    frame = pd.DataFrame(
        {
            "x1": rng.normal(size=n),
            "x2": rng.normal(size=n),
            "weak": rng.normal(size=n),
            "noise": rng.normal(size=n),
            "level": rng.choice(["a", "b", "c"], size=n),
        }
    )
    frame["y"] = (
        2 * frame.x1
        + frame.x2
        + 0.3 * frame.weak
        + (frame.level == "a")
        + 0.5 * rng.normal(size=n)
    )
    text = _report(tmp_path, frame, "--n-estimators", "30")
    facts = captured["facts"]
    random_name = facts.fitted.random_name
    above = clearly_above("permutation", facts.results["permutation"], random_name)
    features = [str(c) for c in facts.fitted.X.columns if str(c) != random_name]
    kept = dict(zip(features, facts.selector.support_))
    sentence = re.search(r"<b>Features that matter</b> \(\d+;[^)]*\): ([^<]*)\.", text)
    listed = [n.strip() for n in html.unescape(sentence.group(1)).split(",")]
    assert listed and set(listed) <= set(features)
    for name in listed:
        assert kept[name] and above[name], name
    noise = re.search(r"<b>Noise</b> \(\d+;[^)]*\): ([^<]*)\.", text)
    for name in html.unescape(noise.group(1)).split(","):
        name = name.strip()
        if name != "none":
            assert not kept[name] and not above[name], name
    assert "look sound" not in text


def test_next_steps_ask_no_better_model_of_a_perfect_one():
    # a model with accuracy 1.0 was told that "a model that predicts better"
    # would settle the uncertain features
    from sklearn.utils import Bunch

    from sklearn_fimp._report._verdicts import next_steps

    data = Bunch(task="classification", target_summary=None, excluded=[])
    data.n_rows_total, data.y = 100, np.zeros(100)
    options = Bunch(scoring=None, log_target=False)
    for score, asked in [(1.0, False), (0.9, True)]:
        facts = Bunch(fitted=Bunch(score=score, chance=0.5), method_notes=[])
        steps = next_steps(data, facts, options, [], [], [], ["a"])
        split = [step for step in steps if "split on 1 feature(s)" in step]
        assert len(split) == 1
        assert ("predicts better" in split[0]) is asked
    options = Bunch(scoring="neg_log_loss", log_target=False)
    facts = Bunch(fitted=Bunch(score=0.0, chance=-0.7), method_notes=[])
    steps = next_steps(data, facts, options, [], [], [], ["a"])
    assert not any("predicts better" in step for step in steps)
