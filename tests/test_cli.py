"""Tests of the sklearn-fimp command line (report)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

from sklearn_fimp._report import main  # noqa: E402
from sklearn_fimp._report._data import choose_task  # noqa: E402

SCRIPT_COLUMN = "<script>alert(1)</script>"
FAST = ["--n-estimators", "8", "--quiet"]


def _table(n_rows=90, seed=0):
    """y depends on 'signal', the script-named column and the colour."""
    rng = np.random.RandomState(seed)
    colour = rng.choice(["red", "green", "blue"], size=n_rows)
    signal = rng.normal(size=n_rows)
    script = rng.normal(size=n_rows)
    y = 3 * signal + script + (colour == "red") + 0.1 * rng.normal(size=n_rows)
    return pd.DataFrame(
        {
            "signal": signal,
            SCRIPT_COLUMN: script,
            "colour": colour,
            "noise": rng.uniform(size=n_rows),
            "y": y,
            "label": np.where(y > 0, "high", "low"),
        }
    )


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "data.csv"
    _table().to_csv(path, index=False)
    return path


def _images(text):
    return re.findall(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+"', text)


def _check_report(text):
    assert text.startswith("<!DOCTYPE html>")
    assert SCRIPT_COLUMN not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    # the page's one script is its own table sorter, after every section
    assert text.lower().count("<script") == 1
    assert text.rindex("<script>") > text.rindex("</table>")
    # self-contained: three figures embedded, nothing fetched
    assert len(_images(text)) == 3
    assert "http://" not in text and "https://" not in text
    for heading in ("Model", "Importances", "ImportanceSelector", "Dependence"):
        assert heading in text


def test_cli_report_regression_in_process(csv_file, tmp_path, capsys):
    out = tmp_path / "report.html"
    status = main(["report", str(csv_file), "--target", "y", "--out", str(out)] + FAST)
    assert status == 0
    text = out.read_text(encoding="utf-8")
    _check_report(text)
    assert "<b>regression</b>" in text
    assert "R² =" in text
    # every feature and the random reference column are reported
    for name in ("signal", "colour", "noise", "random", "label"):
        assert f"<td>{name}</td>" in text
    assert capsys.readouterr().err == ""  # --quiet


def test_cli_report_classification_with_methods_and_progress(
    csv_file, tmp_path, capsys
):
    out = tmp_path / "labels.html"
    status = main(
        [
            "report",
            str(csv_file),
            "--target",
            "label",
            "--method",
            "oob_permutation",
            "--method",
            "mdi,oob-mdi",
            "--out",
            str(out),
            "--n-estimators",
            "8",
        ]
    )
    assert status == 0
    text = out.read_text(encoding="utf-8")
    assert "<b>classification</b>" in text and "accuracy =" in text
    assert (
        "<th>out-of-bag permutation</th><th>± sd</th><th>MDI</th><th>± sd</th>"
        "<th>MDI-oob</th><th>± sd</th>"
    ) in text
    err = capsys.readouterr().err
    assert "fitting the forest" in err and "DependenceAnalyzer" in err
    assert f"wrote {out}" in err


def test_cli_report_subprocess_python_m(csv_file, tmp_path):
    out = tmp_path / "sub.html"
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(
        [root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    completed = subprocess.run(
        [sys.executable, "-m", "sklearn_fimp", "report", str(csv_file)]
        + ["--target", "y", "--out", str(out)]
        + FAST,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    _check_report(out.read_text(encoding="utf-8"))


def test_cli_report_demo(tmp_path):
    out = tmp_path / "demo.html"
    assert main(["report", "--demo", "--out", str(out)] + FAST) == 0
    text = out.read_text(encoding="utf-8")
    assert "progression" in text and len(_images(text)) == 3


def _error(capsys, argv):
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("sklearn-fimp: error: ")
    assert "Traceback" not in err
    return err


def test_cli_missing_file(capsys, tmp_path):
    err = _error(capsys, ["report", str(tmp_path / "nope.csv"), "--target", "y"])
    assert "no such file" in err


def test_cli_missing_target_lists_the_columns(capsys, csv_file):
    err = _error(capsys, ["report", str(csv_file), "--target", "price"])
    assert "'price' is not a column" in err
    assert "'signal'" in err and "'colour'" in err
    err = _error(capsys, ["report", str(csv_file)])
    assert "--target is required" in err and "'signal'" in err


def test_cli_target_with_one_value(capsys, tmp_path):
    path = tmp_path / "flat.csv"
    _table().assign(y=1.0).to_csv(path, index=False)
    err = _error(capsys, ["report", str(path), "--target", "y"])
    assert "single value" in err


def test_cli_other_input_errors(capsys, csv_file, tmp_path):
    assert "empty" in _error(capsys, ["report", str(_empty(tmp_path)), "--target", "y"])
    assert "not both" in _error(capsys, ["report", str(csv_file), "--demo"])
    assert "or --demo" in _error(capsys, ["report"])
    assert "not a method" in _error(
        capsys, ["report", "--demo", "--method", "lime", "--out", "x.html"]
    )
    assert "does not exist" in _error(
        capsys, ["report", "--demo", "--out", str(tmp_path / "no" / "r.html")]
    )
    few = tmp_path / "few.csv"
    _table(n_rows=10).to_csv(few, index=False)
    assert "at least 20" in _error(capsys, ["report", str(few), "--target", "y"])
    assert "numeric target" in _error(
        capsys, ["report", str(csv_file), "--target", "label", "--task", "regression"]
    )


def _empty(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    return path


def test_cli_without_command_or_with_bad_options(capsys):
    assert main([]) == 2
    assert "report" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["report", "--demo", "--n-estimators", "0"])
    assert info.value.code == 2


def test_cli_without_pandas_names_the_extra(capsys, csv_file, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    err = _error(capsys, ["report", str(csv_file), "--target", "y"])
    assert "sklearn-fimp[pandas]" in err


@pytest.mark.parametrize(
    "values, expected",
    [
        (["a", "b", "a"], "classification"),
        ([True, False, True], "classification"),
        ([0, 1, 2, 1], "classification"),
        ([0.0, 1.0, 1.0], "classification"),
        (list(range(11)), "regression"),
        ([0.5, 1.5, 0.5], "regression"),
    ],
)
def test_cli_choose_task_rule(values, expected):
    assert choose_task(pd.Series(values, name="t"), "auto") == expected


def test_cli_rows_without_target_are_left_out_with_a_note(tmp_path):
    path = tmp_path / "holes.csv"
    table = _table()
    table.loc[:4, "y"] = np.nan
    table.to_csv(path, index=False)
    out = tmp_path / "holes.html"
    assert main(["report", str(path), "--target", "y", "--out", str(out)] + FAST) == 0
    assert "5 rows without a value of the target were left out" in out.read_text()


def test_cli_report_notes_uninformative_columns(tmp_path):
    path = tmp_path / "odd.csv"
    table = _table().assign(constant=7.0, blank=np.nan)
    table.to_csv(path, index=False)
    out = tmp_path / "odd.html"
    status = main(["report", str(path), "--target", "label", "--out", str(out)] + FAST)
    assert status == 0
    text = out.read_text(encoding="utf-8")
    assert "One value only in &#x27;constant&#x27;" in text
    assert "No values in &#x27;blank&#x27;" in text
    for name in ("constant", "blank"):  # used, not dropped
        assert f"<td>{name}</td>" in text
    # conditional permutation models each column from the others
    assert "needs complete columns; blank has missing values" in text


def test_cli_without_matplotlib_names_the_extra(capsys, csv_file, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    err = _error(capsys, ["report", str(csv_file), "--target", "y"])
    assert "sklearn-fimp[plot]" in err
