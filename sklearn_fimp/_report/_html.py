"""The report's page: its sections, tables, figures (PNG, embedded) and style.

Figures are drawn by the package's Displays on matplotlib Figures made here
without pyplot, so that the command opens no window and keeps no figure.
"""

import base64
import html
import io

import numpy as np

from .._plot._common import heatmap_size
from ._analysis import METHOD_TEXT, METHOD_TITLES
from ._data import MAX_CLASSES_OF_NUMERIC_TARGET

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
th { background: #f3f3f3; } tr.kept td { background: #eaf3fb; }
tr.reference td { background: #f1f1f1; font-style: italic; }
img { max-width: 100%; height: auto; } .note { color: #555; font-size: 0.9em; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


def render_html(sections, title):
    """The whole page: the title, the style and the sections in order."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
    ]
    parts.extend(sections)
    parts.append("</body></html>")
    return "\n".join(parts)


# ----------------------------------------------------------------------------
# building blocks


def _e(value):
    return html.escape(str(value), quote=True)


def _new_figure(width, height):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _figure_html(figure, alt):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{_e(alt)}">'


def _table(header, rows, classes=None):
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{_e(classes[i])}"' if classes and classes[i] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    return (
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _fmt(value):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return f"{value:.3g}"


def _items(texts):
    return "".join(f"<li>{_e(text)}</li>" for text in texts)


# ----------------------------------------------------------------------------
# the sections, in the page's order


def overview_html(source, target, data, methods):
    """The data: where it comes from, the task and why, the columns."""
    kinds = []
    for column in data.X.columns:
        series = data.X[column]
        if column in data.categorical:
            kind = f"categories ({series.nunique()} values, ordinal codes)"
        else:
            kind = "number"
        missing = int(series.isna().sum())
        kinds.append([column, kind, missing])
    rule = (
        "it is not numeric, or holds at most "
        f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct whole numbers"
        if data.task == "classification"
        else "it is numeric with more than "
        f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct values, or fractional ones"
    )
    notes = _items(data.notes)
    return (
        "<h2>Data</h2>"
        f"<p>Source: <code>{_e(source)}</code>. Target: <code>{_e(target)}</code>, "
        f"treated as <b>{_e(data.task)}</b> because {_e(rule)} (override with "
        f"<code>--task</code>). {len(data.y)} rows, {data.X.shape[1]} features, all "
        "used: string columns are encoded as category codes (in sorted order) "
        "inside the model's Pipeline; missing values are left to the forest.</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + "<details><summary>Columns</summary>"
        + _table(["column", "read as", "missing values"], kinds)
        + "</details>"
        + f"<p class='note'>Importance methods compared: {_e(', '.join(methods))}.</p>"
    )


def score_html(score, chance, task, n_train, n_test):
    """The model's held-out score next to the chance score, with a verdict."""
    metric = "accuracy" if task == "classification" else "R²"
    chance_text = (
        "always predicting the most frequent class"
        if task == "classification"
        else "always predicting the mean"
    )
    verdict = ""
    if score < chance:
        verdict = (
            "<p><b>The model predicts the held-out rows worse than that: its "
            "importances say little about the data (look for outliers in the "
            "target, or too few rows).</b></p>"
        )
    elif chance >= 1 or (score - chance) / (1 - chance) < 0.1:
        verdict = (
            "<p><b>The model predicts the target hardly better than that (it "
            "closes less than a tenth of the gap to a perfect score): its "
            "importances say little about the data.</b></p>"
        )
    return (
        "<h2>Model</h2>"
        f"<p>A random forest (in a Pipeline that encodes string columns) trained "
        f"on {n_train} rows scores <b>{metric} = {score:.3f}</b> on the "
        f"{n_test} held-out rows; {_e(chance_text)} scores {chance:.3f}. "
        "Importances are only worth reading for a model that predicts well.</p>"
        + verdict
    )


def importance_html(results, random_name, task):
    """Each method's importances, as bars and a table, next to the random
    column, and which real features it outranks."""
    from .._plot.importance import ImportanceDisplay

    titled = {METHOD_TITLES[m]: r for m, r in results.items()}
    first = next(iter(results.values()))
    n_rows = len(first.feature_names)
    figure = _new_figure(
        max(6.4, 4.2 * len(titled)), min(max(3, 0.3 * n_rows + 1.4), 40)
    )
    axes = figure.subplots(1, len(titled), sharey=True, squeeze=False)[0]
    ImportanceDisplay.from_result(titled, probes=[random_name], ax=list(axes))
    figure_html = _figure_html(figure, "importances of each feature by method")

    names = [str(n) for n in first.feature_names]
    order = np.argsort(-first.importances_mean, kind="stable")
    lookups = [
        dict(zip(map(str, r.feature_names), zip(r.importances_mean, r.importances_std)))
        for r in results.values()
    ]
    rows, classes = [], []
    for i in order:
        row = [names[i]]
        for lookup in lookups:
            mean, std = lookup[names[i]]
            row.append(f"{_fmt(float(mean))} ± {_fmt(float(std))}")
        rows.append(row)
        classes.append("reference" if names[i] == random_name else "")
    table = _table(["feature"] + list(titled), rows, classes)

    findings = [
        _random_column_finding(method, result, names, random_name)
        for method, result in results.items()
    ]
    described = _items(METHOD_TEXT[m] for m in results)
    unit = "accuracy" if task == "classification" else "R²"
    return (
        "<h2>Importances, next to a column of random numbers</h2>"
        f"<p>A column of uniform random numbers, <code>{_e(random_name)}</code> "
        "(grey, hatched), was added to the features: a feature no more important "
        "than it is noise the model learnt. MDI is measured on the training rows "
        "and favours features with many distinct values, so it often ranks the "
        "random column above real features; the other methods measure what the "
        f"model loses without a feature (in {unit} for the score-based ones). "
        "Bars: mean; whiskers: standard deviation over trees or shuffles.</p>"
        f"<ul>{described}</ul>" + figure_html + f"<ul>{''.join(findings)}</ul>" + table
    )


def _random_column_finding(method, result, names, random_name):
    values = dict(zip(map(str, result.feature_names), result.importances_mean))
    below = [n for n in names if n != random_name and values[n] < values[random_name]]
    if below:
        return (
            f"<li>{_e(METHOD_TITLES[method])}: the random column outranks "
            f"{len(below)} real feature(s): {_e(', '.join(below))}.</li>"
        )
    return (
        f"<li>{_e(METHOD_TITLES[method])}: every real feature is above the "
        "random column.</li>"
    )


def selector_html(selector, feature_names, notes):
    """What ImportanceSelector kept, with p-values, bars and its threshold;
    ``notes`` are shown above the figure."""
    from .._plot.importance import ImportanceDisplay

    n_groups = len(selector.groups_)
    result = selector.importances_
    n_rows = len(result.feature_names)
    figure = _new_figure(7.5, min(max(3, 0.25 * n_rows + 1.4), 60))
    ImportanceDisplay.from_selector(selector, ax=figure.subplots(), errorbars=False)
    figure_html = _figure_html(
        figure, "ImportanceSelector: features, probes, threshold"
    )

    names = [str(n) for n in feature_names]
    order = np.lexsort((-result.importances_mean[:n_groups], selector.pvalues_))
    rows, classes = [], []
    for j in order:
        kept = bool(selector.support_[j])
        rows.append(
            [
                names[j],
                _fmt(float(result.importances_mean[j])),
                _fmt(float(selector.pvalues_[j])),
                _fmt(float(selector.pvalues_corrected_[j])),
                _decision(kept, selector.pvalues_corrected_[j], selector.alpha),
            ]
        )
        classes.append("kept" if kept else "")
    kept = [names[j] for j in np.flatnonzero(selector.support_)]
    notes = _items(notes)
    return (
        "<h2>Features that beat random probes (ImportanceSelector)</h2>"
        f"<p>ImportanceSelector added {int(result.n_probes)} probe columns "
        "(shuffled copies of the features), fitted the forest, measured every "
        f"column's importance ({_e(selector.method_.replace('_', '-'))}) and kept "
        "a feature only when a one-sided test says its importance is above the "
        f"probes' (p-value adjusted by {_e(selector.correction)}'s method at most "
        f"{selector.alpha}). It keeps <b>{len(kept)} of {len(names)}</b> "
        f"features: {_e(', '.join(kept)) or 'none'}. Bars are mean importances; "
        "the dashed line is the importance a feature needed.</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + figure_html
        + _table(
            ["feature", "importance", "p-value", "adjusted p-value", "decision"],
            rows,
            classes,
        )
    )


def _decision(kept, corrected, alpha):
    if not kept:
        return "dropped"
    if corrected <= alpha:
        return "kept"
    return "kept (min_features)"


def dependence_html(analyzer):
    """The dependence heatmap and what DependenceAnalyzer would drop; None
    (a single feature) says there is nothing to measure."""
    from .._plot.dependence import DependenceDisplay

    if analyzer is None:
        return (
            "<h2>Dependence</h2><p>With a single feature there is no dependence "
            "to measure.</p>"
        )
    n = analyzer.n_features_in_
    figure = _new_figure(*heatmap_size(n + 1, n))
    DependenceDisplay.from_analyzer(analyzer, ax=figure.subplots())
    figure_html = _figure_html(figure, "dependence heatmap")
    path = analyzer.elimination_path_
    rows = [
        [
            feature,
            _fmt(float(dependence)),
            "nothing (constant, or no input helps)" if explained is None else explained,
        ]
        for feature, dependence, explained in zip(
            path["feature"], path["dependence"], path["explained_by"]
        )
    ]
    if rows:
        verdict = (
            f"DependenceAnalyzer (threshold {analyzer.threshold}) would drop "
            f"{len(rows)} feature(s), in this order:"
        )
        table = _table(
            ["dropped feature", "its dependence then", "explained most by"], rows
        )
    else:
        verdict = (
            f"No feature has a dependence above {analyzer.threshold}: "
            "DependenceAnalyzer would drop none."
        )
        table = ""
    return (
        "<h2>Dependence between features</h2>"
        "<p>The dependence of a feature is how well a forest predicts it from all "
        "the other features (out-of-bag R², or chance-corrected accuracy for "
        "categories): near 1, the feature is redundant. The first column is the "
        "dependence; the others say how much it drops when each other feature is "
        "shuffled, i.e. which features explain it. Redundant features share their "
        "importance, so a low importance above may only mean that another column "
        "carries the same information.</p>"
        + figure_html
        + f"<p>{_e(verdict)}</p>"
        + table
    )


def warnings_html(messages):
    """The distinct warnings raised while the report was computed."""
    return f"<h2>Warnings</h2><ul>{_items(messages)}</ul>"
