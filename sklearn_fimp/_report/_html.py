"""The report's page: its sections, tables and style, rendered from what
was measured and decided (the figures come from ``_figures``)."""

import html

import numpy as np

from .._utils._targets import MAX_CLASSES_OF_NUMERIC_TARGET
from ._analysis import (
    FEW_VALUES_AS_CLASSES,
    METHOD_TEXT,
    METHOD_TITLES,
    has_spread,
)
from ._columns import EXCLUSION_RULE
from ._common import fmt as _fmt
from ._common import names_text as _names
from ._figures import (
    WRITTEN_ABOVE,
    dependence_figure,
    importance_figure,
)
from ._verdicts import CONDITIONAL_SHARE

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
.summary { background: #f6f9fc; border: 1px solid #cfe0ef; padding: 0.2em 1.2em 0.8em; }
th.sortable { cursor: pointer; } th.sortable:after { content: " \\2195"; color: #999; }
"""
#: Sorts a table with class "sortable" by the clicked column (numbers as
#: numbers); the page's only script, and it reads no user text as code.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.classList.add("sortable");
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.from(body.rows);
      var down = th.dataset.order !== "down"; th.dataset.order = down ? "down" : "up";
      function key(row) { var t = row.cells[column].textContent;
        var n = parseFloat(t.replace(/,/g, "")); return isNaN(n) ? t : n; }
      rows.sort(function (a, b) { var x = key(a), y = key(b);
        var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0)
          : (typeof x === "number" ? -1 : 1);
        return down ? -c : c; });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
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
    parts.append(f"<script>{SORT_SCRIPT}</script></body></html>")
    return "\n".join(parts)


# ----------------------------------------------------------------------------
# building blocks

#: Names listed in a sentence before "and N more (see the table)".


def _e(value):
    return html.escape(str(value), quote=True)


def _table(header, rows, classes=None, sortable=False):
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        css = f' class="{_e(classes[i])}"' if classes and classes[i] else ""
        body.append(f"<tr{css}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    table_class = ' class="sortable"' if sortable else ""
    return (
        f"<table{table_class}><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _folded(table, n_rows, limit, what):
    """A table longer than ``limit`` rows, folded under a summary line."""
    if limit is None or n_rows <= limit:
        return table
    return f"<details><summary>{_e(what)} ({n_rows} rows)</summary>{table}</details>"


def _score(value):
    """A score with three decimals; never "-0.000"."""
    text = f"{value:.3f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _items(texts):
    return "".join(f"<li>{_e(text)}</li>" for text in texts)


def _metric(task, scoring):
    if scoring:
        return scoring
    return "accuracy" if task == "classification" else "R²"


# ----------------------------------------------------------------------------
# the summary, first on the page


def summary_html(data, facts, decided, options):
    """The conclusions and next steps, first on the page: ``decided`` (see
    ``_verdicts.decide``) rendered."""
    fitted = facts.fitted
    metric = _metric(data.task, options.scoring)
    gap = fitted.score - fitted.chance
    if fitted.score <= fitted.chance:
        quality = (
            "no better than the baseline: the importances below describe a "
            "model that has not learnt the target, so read them with care"
        )
    elif fitted.chance < 1 and gap / (1 - min(fitted.chance, 0.999)) < 0.1:
        quality = "hardly better than the baseline"
    else:
        quality = "clearly better than the baseline"
    lines = [
        f"<b>Model</b>: {_e(metric)} {_score(fitted.score)} on held-out rows "
        f"against {_score(fitted.chance)} for the baseline "
        f"({_e(_baseline(data.task))}): {quality}."
    ]
    lines += _verdict_lines(facts, decided)
    redundant = decided.redundant
    if facts.analyzer is not None:
        lines.append(
            f"<b>Redundant</b> (among the {facts.analyzer.n_features_in_} most "
            "important features): "
            + (
                _e(
                    "; ".join(
                        f"{f} (explained by {by})" if by else f for f, by in redundant
                    )
                )
                if redundant
                else "none above the threshold"
            )
            + "."
        )
    if decided.shared:
        lines.append(
            "<b>Importance shared with correlated features</b> (conditional "
            "permutation importance below half the ordinary one): "
            f"{_e(_names(decided.shared))}."
        )
    if data.excluded:
        lines.append(
            f"<b>Left out</b> before modelling: "
            f"{_e(_names([c for c, _ in data.excluded]))} (see Data)."
        )
    steps = decided.steps
    return (
        "<div class='summary'><h2>Summary</h2>"
        f"<ul>{''.join(f'<li>{line}</li>' for line in lines)}</ul>"
        "<p><b>Next steps</b></p>"
        f"<ol>{_items(steps)}</ol></div>"
    )


def _verdict_lines(facts, decided):
    """The summary's lines on the features that matter, the uncertain ones
    and the noise, each with the measures that decided it (none where
    neither the selector nor held-out permutation was measured)."""
    lines = []
    matter, uncertain, noise = decided.matter, decided.uncertain, decided.noise
    evidence = decided.evidence
    if facts.get("results") or facts.get("selector") is not None:
        decided_by = (
            " and ".join(evidence)
            if evidence
            else (
                "no deciding measure: neither ImportanceSelector nor permutation "
                "importance on held-out rows was measured"
            )
        )
        lines.append(
            f"<b>Features that matter</b> ({len(matter)}; {_e(decided_by)}): "
            f"{_e(_names(matter)) or 'none'}."
        )
        if uncertain:
            lines.append(
                f"<b>Uncertain</b> ({len(uncertain)}): "
                + "; ".join(
                    f"{_e(reason)}: {_e(_names(group))}"
                    for reason, group in decided.why
                )
                + "."
            )
        lines.append(
            f"<b>Noise</b> ({len(noise)}; "
            + _e(
                " and ".join(
                    e.replace("above", "not above", 1).replace(
                        "kept by", "dropped by", 1
                    )
                    for e in evidence
                )
                or "none measured"
            )
            + f"): {_e(_names(noise)) or 'none'}."
        )
        if facts.get("results") and any(
            m in facts.results for m in ("mdi", "drop_column")
        ):
            lines.append(
                "MDI (training rows, favours many distinct values) and "
                "drop-column importance (one refit per feature, no error bar) "
                "are shown below as context; they do not decide these verdicts."
            )
    return lines


def _baseline(task):
    if task == "classification":
        return "predicting the training rows' class shares"
    return "always predicting the training rows' mean"


# ----------------------------------------------------------------------------
# the sections, in the page's order


def overview_html(source, target, data, methods, sep=None):
    """The data: where it comes from, the task and why, the target, the
    columns and what was done with each."""
    how = dict(data.converted)
    kinds = []
    for column in data.X.columns:
        series = data.X[column]
        if column in data.categorical:
            kind = f"categories ({series.nunique()} values, ordinal codes)"
        else:
            kind = "number"
        missing = int(series.isna().sum())
        kinds.append([column, kind, missing])
    for column, reason in data.converted:
        if column not in data.X.columns:
            kinds.append([column, reason, ""])
        else:
            kinds[list(data.X.columns).index(column)][1] = how[column]
    rule = (
        "it is not numeric, or holds at most "
        f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct whole numbers"
        if data.task == "classification"
        else "it is numeric with more than "
        f"{MAX_CLASSES_OF_NUMERIC_TARGET} distinct values, or fractional ones"
    )
    notes = _items(data.notes)
    excluded = ""
    if data.excluded:
        excluded = (
            f"<p><b>Left out of the model and of the dependence step "
            f"({len(data.excluded)} column(s))</b>:</p>"
            + _table(["column", "why"], data.excluded)
            + f"<p class='note'>{_e(EXCLUSION_RULE)}</p>"
        )
    converted = ""
    if data.converted:
        converted = "<p><b>Read differently from plain text</b>:</p>" + _table(
            ["column", "read as"], data.converted
        )
    sep_text = "" if sep is None else f" Columns separated by {_e(repr(sep))}."
    return (
        "<h2>Data</h2>"
        f"<p>Source: <code>{_e(source)}</code>.{sep_text} Target: "
        f"<code>{_e(target)}</code>, treated as <b>{_e(data.task)}</b> because "
        f"{_e(rule)} (override with <code>--task</code>). {len(data.y)} rows, "
        f"{data.X.shape[1]} features: string columns are encoded as category "
        "codes (in sorted order, read once from every row) inside the model's "
        "Pipeline, and every stage below reads the same codes; missing values "
        "are left to the forest.</p>"
        + _target_html(target, data.target_summary)
        + (f"<ul>{notes}</ul>" if notes else "")
        + excluded
        + converted
        + "<details><summary>Columns</summary>"
        + _table(["column", "read as", "missing values"], kinds, sortable=True)
        + "</details>"
        + "<p class='note'>Importance methods compared: "
        + _e(", ".join(METHOD_TITLES[m] for m in methods))
        + ".</p>"
    )


def _target_html(target, summary):
    if summary is None:
        return ""
    if summary.task == "classification":
        shares = ", ".join(f"{c}: {share:.0%}" for c, share in summary.classes[:12])
        more = len(summary.classes) - 12
        return (
            f"<p>Target classes ({len(summary.classes)}): {_e(shares)}"
            + (f" and {more} more" if more > 0 else "")
            + ("; <b>imbalanced</b>" if summary.imbalanced else "")
            + ".</p>"
        )
    q = summary.quantiles
    return (
        f"<p>Target <code>{_e(target)}</code>: "
        + ", ".join(f"{k} {_fmt(v)}" for k, v in q.items())
        + f"; mean {_fmt(summary.mean)}, skewness {summary.skewness:.2f}"
        + ("; <b>skewed</b> (see --log-target)" if summary.skewed else "")
        + ".</p>"
    )


def score_html(score, chance, task, n_train, n_test, scoring=None, forest=None):
    """The model's held-out score next to the chance score, with a verdict;
    ``forest`` (the fitted forest) for how it was grown."""
    metric = _metric(task, scoring)
    verdict = ""
    if score < chance:
        advice = (
            "look for outliers in the target, try --log-target or --scoring "
            "neg_mean_absolute_error"
            if task == "regression"
            else "the classes may be imbalanced: try --scoring balanced_accuracy"
        )
        verdict = (
            "<p><b>The model predicts the held-out rows worse than that: its "
            f"importances say little about the data ({_e(advice)}).</b></p>"
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
        f"on {n_train} rows scores <b>{_e(metric)} = {_score(score)}</b> on the "
        f"{n_test} held-out rows; {_e(_baseline(task))} scores {_score(chance)}. "
        "Importances are only worth reading for a model that predicts well.</p>"
        + verdict
        + _forest_html(forest)
    )


def _forest_html(forest):
    """How the forest was grown, where it differs from scikit-learn's
    defaults (to save time on large or wide data)."""
    if forest is None:
        return ""
    parts = [f"{forest.n_estimators} trees"]
    if forest.max_samples is not None:
        parts.append(
            f"each fitted on a bootstrap sample of {forest.max_samples} rows "
            "(--tree-rows; every row still counts in the held-out and "
            "out-of-bag scores)"
        )
    if isinstance(forest.max_features, float) and forest.max_features < 1:
        parts.append(
            f"each split choosing among {forest.max_features:.0%} of the features, "
            "drawn at random (as R's randomForest does for regression; "
            "scikit-learn's default considers every feature, about three times "
            "the work)"
        )
    return f"<p class='note'>The forest: {_e('; '.join(parts))}.</p>"


def importance_html(results, random_name, task, top, notes=(), *, findings=()):
    """Each method's importances next to the random column: bars of the
    ``top`` features, a sortable table of all of them, and ``findings``
    (one sentence per method on how it ranks the random column)."""
    first = next(iter(results.values()))
    n_features = len(first.feature_names)
    n_rows = min(n_features, top + 1)
    figure_html = importance_figure(results, random_name, n_rows)

    names = [str(n) for n in first.feature_names]
    order = np.argsort(-first.importances_mean, kind="stable")
    lookups = [
        dict(zip(map(str, r.feature_names), zip(r.importances_mean, r.importances_std)))
        for r in results.values()
    ]
    spreads = [has_spread(m, r) for m, r in results.items()]
    rows, classes = [], []
    for i in order:
        row = [names[i]]
        for lookup, spread in zip(lookups, spreads):
            mean, std = lookup[names[i]]
            row.append(_fmt(float(mean)))
            row.append(_fmt(float(std)) if spread else "n/a")
        rows.append(row)
        classes.append("reference" if names[i] == random_name else "")
    header = ["feature"]
    for method in results:
        header += [METHOD_TITLES[method], "± sd"]
    table = _folded(
        _table(header, rows, classes, sortable=True),
        len(rows),
        top + 1,
        "Every feature's importances (sortable table)",
    )

    findings = [f"<li>{_e(finding)}</li>" for finding in findings]
    described = _items(_described(m, r) for m, r in results.items())
    unit = "accuracy" if task == "classification" else "R²"
    shown = (
        f"The chart shows the {n_rows - 1} leading features of the first method "
        f"and the random column; the table below the chart lists all "
        f"{n_features - 1} (open it; click a heading to sort)."
        if n_rows < n_features
        else ""
    )
    return (
        "<h2>Importances, next to a column of random numbers</h2>"
        + (f"<ul>{_items(notes)}</ul>" if notes else "")
        + f"<p>A column of uniform random numbers, <code>{_e(random_name)}</code> "
        "(grey, hatched), was added to the features: a feature no more important "
        "than it is noise the model learnt. MDI is measured on the training rows "
        "and favours features with many distinct values, so it often ranks the "
        "random column above real features; the other methods measure what the "
        f"model loses without a feature (in {unit} for the score-based ones). "
        "Bars: mean; whiskers: standard deviation over trees or shuffles (n/a "
        f"for drop-column, one refit per feature, whose spread is unknown). "
        f"{shown}</p>"
        f"<ul>{described}</ul>" + figure_html + f"<ul>{''.join(findings)}</ul>" + table
    )


def _described(method, result):
    """What a method measures, with its number of shuffles of each column
    (fewer on many rows, see n_repeats in _analysis.py)."""
    text = METHOD_TEXT[method]
    repeats = result.get("n_repeats")
    if repeats:
        text += f" ({repeats} shuffle{'s' if repeats > 1 else ''} of each column)"
    return text


def _cells_text(matrix, names):
    """What the heatmap's cells mean, including the blank ones and those
    above 1, for the sentence under it."""
    finite = matrix[np.isfinite(matrix)]
    text = (
        "The first column is always written. Blank cells: the diagonal (a "
        "feature is not used to predict itself), the row of a constant feature "
        "(nothing to predict), and drops of at "
        f"most {WRITTEN_ABOVE:g} (negative ones included), drawn nearly white "
        "and not written."
    )
    if finite.size and finite.max() > 1:
        i, k = np.unravel_index(np.nanargmax(matrix), matrix.shape)
        text += (
            f" A drop can exceed 1 (here up to {finite.max():.2f}, {names[i]} "
            f"when {names[k]} is shuffled): R² falls below 0 when the shuffled "
            "input makes the forest predict worse than always predicting the "
            "mean, so the drop is the dependence plus that shortfall: the "
            "forest that predicts the feature leans heavily on the shuffled one."
        )
    else:
        text += (
            " A drop can exceed 1 when a shuffled input makes the forest "
            "predict worse than the mean (R² below 0); none does here."
        )
    return text


def dependence_html(analyzer, n_features=None, n_rows=None, n_trees=None):
    """The dependence heatmap (clustered, on a colour scale that fits the
    values), what its cells mean, and what DependenceAnalyzer would drop;
    None (fewer than two features) says there is nothing to measure."""
    if analyzer is None:
        return (
            "<h2>Dependence</h2><p>With a single feature there is no dependence "
            "to measure.</p>"
        )
    n = analyzer.n_features_in_
    figure_html, matrix, names = dependence_figure(analyzer)
    path = analyzer.elimination_path_
    rows = [
        [
            feature,
            _fmt(float(dependence_then)),
            "nothing (constant, or no input helps)" if explained is None else explained,
        ]
        for feature, dependence_then, explained in zip(
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
    scope = ""
    if n_features is not None and n < n_features:
        scope = (
            f" Measured on the {n} most important of the {n_features} features (--top)"
        )
    if n_rows is not None:
        scope += (" and" if scope else " Measured") + (
            f" on at most {n_rows} rows (--dependence-rows)"
        )
    if n_trees is not None:
        scope += (" with" if scope else " Measured with") + (
            f" forests of {n_trees} trees (--dependence-trees)"
        )
    scope += "." if scope else ""
    return (
        "<h2>Dependence between features</h2>"
        "<p>The dependence of a feature is how well a forest predicts it from "
        "all the other features shown here (out-of-bag R², or chance-corrected "
        "accuracy for categories and for columns of at most "
        f"{FEW_VALUES_AS_CLASSES} distinct values): near 1, the feature is "
        "redundant; at 0 or below, the others do not predict it. The first "
        "column is the dependence; the others say how much it drops when each "
        "other feature is shuffled, i.e. which features explain it (features "
        "that explain each other are placed together). Redundant features "
        "share their importance, so a low importance above may only mean that "
        "another column "
        f"carries the same information.{_e(scope)}</p>"
        + figure_html
        + f"<p class='note'>{_e(_cells_text(matrix, names))}</p>"
        + f"<p>{_e(verdict)}</p>"
        + table
    )


class _ComparedImportances:
    """The columns of the comparison table: both importances of a feature,
    its sampler's fit and, when the dependence step ran, its dependence."""

    def __init__(self, ordinary, conditional, analyzer):
        self.ordinary = _mean_and_std(ordinary)
        self.conditional = _mean_and_std(conditional)
        self.sampler_fits = dict(
            zip(
                map(str, conditional.feature_names),
                (np.mean(s) for s in conditional.get("sampler_scores", [])),
            )
        )
        self.dependences = {}
        if analyzer is not None:
            self.dependences = dict(
                zip(
                    map(str, analyzer.feature_names_in_),
                    map(float, analyzer.dependence_),
                )
            )

    @property
    def header(self):
        header = [
            "feature",
            "ordinary",
            "± sd",
            "conditional",
            "± sd",
            "its sampler's fit (out-of-bag R² or accuracy)",
        ]
        if self.dependences:
            header.append("dependence (heatmap)")
        return header

    def cells(self, feature):
        o_mean, o_std = self.ordinary[feature]
        c_mean, c_std = self.conditional[feature]
        fits, dependences = self.sampler_fits, self.dependences
        cells = [
            feature,
            _fmt(float(o_mean)),
            _fmt(float(o_std)),
            _fmt(float(c_mean)),
            _fmt(float(c_std)),
            _fmt(float(fits[feature])) if feature in fits else "",
        ]
        if dependences:
            cells.append(_fmt(dependences[feature]) if feature in dependences else "")
        return cells


def _mean_and_std(result):
    """Each feature's (mean, standard deviation) of an importance result."""
    return dict(
        zip(
            map(str, result.feature_names),
            zip(result.importances_mean, result.importances_std),
        )
    )


def _disagreement_html(disagree, partners, columns):
    """The finding (which features the two importances disagree on, and
    why that matters) and their table, empty when they agree."""
    if not disagree:
        finding = (
            "<p>No disagreement: every compared feature keeps at least "
            f"{CONDITIONAL_SHARE:.0%} of its importance under conditional "
            "permutation, so each carries information the other features do "
            "not.</p>"
        )
        return finding, ""
    rows = [
        [*columns.cells(feature), partners.get(feature) or ""] for feature in disagree
    ]
    one = len(disagree) == 1
    finding = (
        f"<p>They disagree on {len(disagree)} feature(s): "
        f"<b>{_e(_names(disagree))}</b>. The model uses "
        + ("this feature" if one else "these features")
        + ", but most of the information it takes from "
        + ("it" if one else "them")
        + " is shared with correlated features: replaced by a plausible "
        "value given the others, "
        + ("it costs" if one else "each costs")
        + " the model much less than when scrambled, because other features "
        "carry the same information (the last column names the one that "
        "explains it most, when the dependence step measured it).</p>"
    )
    table = _table(columns.header + ["explained most by (dependence step)"], rows)
    return finding, table


def _sampler_fit_text(with_dependence):
    """What the sampler's fit column measures, and, when the heatmap is
    shown too, why it is not the heatmap's dependence."""
    return (
        "The sampler's fit is how well the forest that draws a feature's "
        "plausible values predicts it from every other column of the model (the "
        "random one included), out of bag on the held-out rows measured here "
        f"(accuracy for categories and for columns of at most {FEW_VALUES_AS_CLASSES} "
        "distinct values, not corrected for chance)"
        + (
            ". It is not the dependence of the heatmap, which predicts the "
            "feature from the leading features only, on other rows "
            "(--dependence-rows), with other forests, and corrects accuracy for "
            "chance: the two answer the same question on different inputs and "
            "rows, so they differ (both are shown)."
            if with_dependence
            else "."
        )
    )


def _comparison_scope(n_rows, n_held_out):
    """A sentence when conditional permutation measured fewer rows than the
    ordinary one (--dependence-rows), else nothing."""
    if n_rows is not None and n_held_out is not None and n_rows < n_held_out:
        return (
            f" Conditional permutation was measured on {n_rows} of the "
            f"{n_held_out} held-out rows (--dependence-rows), ordinary "
            "permutation on all of them."
        )
    return ""


def conditional_html(
    ordinary,
    conditional,
    random_name,
    candidates,
    *,
    n_rows=None,
    n_held_out=None,
    n_features=None,
    note=None,
    missing=False,
    analyzer=None,
    disagree=(),
    partners=None,
):
    """Ordinary next to conditional permutation importance; ``disagree``
    lists the features where they disagree (``_verdicts.decide``) and
    ``partners`` the feature that explains each most."""
    heading = "<h2>Ordinary and conditional permutation importance</h2>"
    intro = (
        "<p>Conditional permutation importance replaces a column by a draw from "
        "its distribution <i>given the other features</i> (a forest's prediction "
        "of it from the other columns plus shuffled residuals) instead of "
        "shuffling it freely, so the model is only asked about rows that could "
        "occur. It measures what a feature adds to the others; ordinary "
        "permutation measures what the model loses when the feature is "
        "scrambled, which also counts information other features carry.</p>"
    )
    if missing:
        return heading + (
            "<p>Left out: ordinary permutation importance was not measured "
            "(add --method permutation, and do not --skip importances).</p>"
        )
    if not candidates:
        return (
            heading + intro + "<p>No feature is clearly above the random column under "
            "permutation importance, so there is nothing to compare.</p>"
        )
    if conditional is None:
        return heading + intro + f"<p>{_e(note)}</p>"
    rule = (
        "A feature is listed when its conditional importance is less than "
        f"{CONDITIONAL_SHARE:.0%} of its ordinary one: then most of what the model "
        "loses when the feature is scrambled is information that other features "
        "also carry."
    )
    # the compared features (conditional permutation chosen with --method
    # measured every feature)
    names = {str(f) for f in conditional.feature_names}
    measured = [f for f in candidates if f in names]
    compared = (
        f"Compared: the {len(measured)} feature(s) among the "
        + (f"{n_features} leading ones " if n_features else "")
        + "that ordinary permutation puts clearly above the random column."
    )
    columns = _ComparedImportances(ordinary, conditional, analyzer)
    finding, table = _disagreement_html(list(disagree), partners or {}, columns)
    everything = _folded(
        _table(
            columns.header,
            [columns.cells(f) for f in [*measured, random_name]],
            sortable=True,
        ),
        len(measured) + 1,
        0,
        "Both importances of every compared feature and the random column",
    )
    scope = _comparison_scope(n_rows, n_held_out)
    fit_text = _sampler_fit_text(bool(columns.dependences))
    return (
        heading
        + intro
        + f"<p>{_e(compared)} {_e(rule)}{_e(scope)}</p>"
        + f"<p class='note'>{_e(fit_text)}</p>"
        + finding
        + table
        + everything
    )


def skipped_html(title, stage):
    """A section left out with --skip."""
    return f"<h2>{_e(title)}</h2><p>Left out (--skip {_e(stage)}).</p>"


def warnings_html(caught):
    """The distinct warnings raised while the report was computed, each
    with the step that raised it."""
    return "<h2>Warnings</h2>" + _table(["step", "warning"], caught)
