"""The report's selector section: what ImportanceSelector kept, its
p-values, the groups it tested together, and the figure's bars (from
``_figures``)."""

import numpy as np

from .._selection._deciding._decisions import LOOK_SPENDING
from .._selection._deciding._score_cost import GUARD_LEVEL, SCORE_LOSS
from .._selection._measuring._round_models import FOREST_GROUPS
from ._analysis import METHOD_TITLES
from ._common import fmt as _fmt
from ._common import names_text as _names
from ._figures import selector_figure
from ._html import _e, _folded, _items, _table


def _n_trees(selector):
    """The number of trees of the selector's forest, or "its" when unknown."""
    return str(selector.estimator.get_params().get("n_estimators", "its"))


def _selector_unit(selector, task, target_unit):
    """The unit of the selector's importances, in words."""
    from .._methods import METHODS

    if selector.method_ in ("oob_mdi", "mdi"):
        where = "out-of-bag " if selector.method_ == "oob_mdi" else ""
        if task == "regression":
            return (
                f"{where}decrease of the squared error, in squared units of "
                f"the target ({target_unit})²"
            )
        return f"{where}decrease of the Gini impurity (no unit)"
    method = METHODS.get(selector.method_)
    return method.unit(selector.importances_) if method else "importance"


def group_label(names, group):
    """A tested group's name: its column's, or its first two columns' and
    how many it holds (near-duplicate columns tested together)."""
    group = [int(j) for j in group]
    if len(group) == 1:
        return names[group[0]]
    if len(group) == 2:
        return f"{names[group[0]]} + {names[group[1]]}"
    return f"{names[group[0]]} + {names[group[1]]} + ... ({len(group)} columns)"


def _grouped(selector):
    """The sentence saying which columns were tested together, if any."""
    several = [group for group in selector.groups_ if len(group) > 1]
    if not several:
        return ""
    columns = sum(len(group) for group in several)
    return (
        f" {columns} near-duplicate columns (rank correlation at least "
        f"{FOREST_GROUPS}) "
        f"were tested as {_count(len(several), 'group')}, each one row of the "
        "table: a "
        "kept group keeps all its columns, and the adjusted p-value's promise "
        "is over the groups and the columns tested alone."
    )


def _cost(selector):
    """The sentence saying what the selection costs on held-out halves of
    the rows (``selection_score_``), or "" where it was not measured."""
    cost = getattr(selector, "selection_score_", None)
    if cost is None or cost.kept is None:
        return ""
    scoring = cost.scoring if isinstance(cost.scoring, str) else "the model's score"
    lost = (
        ""
        if cost.lost is None
        else f": it loses {cost.lost:.0%} of what the model gains over a constant "
        f"prediction ({_fmt(cost.chance)})"
        + (
            f", more than the {SCORE_LOSS:.0%} the selector warns above"
            if cost.lost > SCORE_LOSS
            else ""
        )
    )
    chose = ""
    if hasattr(selector, "cv_results_") and selector.keep_tentative == "auto":
        # the guard's candidates beat half of their probes; the others kept
        # are min_features'
        added = selector.support_ & (selector.decisions_ != "confirmed")
        added &= np.asarray(selector.pvalues_) <= GUARD_LEVEL
        chose = (
            f" The confirmed features alone lost more than {SCORE_LOSS:.0%}, so "
            "features were added in order of significance until the kept ones "
            f"lost at most that: {int(added.sum())} were added, which no error "
            "rate covers."
        )
    return (
        f"{chose} Fitted on each of two halves of the rows and scored on the "
        f"other ({scoring}), the model scores {_fmt(cost.kept)} on the kept "
        f"features and {_fmt(cost.all)} on all of them{lost}."
    )


def _times(n):
    """ "once", "twice" or "n times"."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def _count(n, noun):
    """``n`` and ``noun``, "one" and the singular for 1."""
    return f"one {noun}" if n == 1 else f"{n} {noun}s"


def _leading(shown, selector):
    """What the bars show: the ``shown`` leading features, or features and
    groups when some columns were tested together."""
    grouped = any(len(group) > 1 for group in selector.groups_)
    if shown == 1:
        return "leading feature or group" if grouped else "leading feature"
    return f"{shown} leading " + ("features and groups" if grouped else "features")


def selector_html(
    selector, feature_names, notes, top=None, *, task="regression", target_unit=""
):
    """What ImportanceSelector kept, with p-values, bars of the leading
    features, the probes as one band, and the unit; ``notes`` above the
    figure."""
    n_groups = len(selector.groups_)
    result = selector.importances_
    shown = n_groups if top is None else min(n_groups, top)
    unit = _selector_unit(selector, task, target_unit)
    names = [str(n) for n in feature_names]
    # one row and bar per tested group (a column alone is a group of one)
    first = np.array([int(group[0]) for group in selector.groups_])
    labels = [group_label(names, group) for group in selector.groups_]
    figure_html = selector_figure(selector, labels, shown, unit)
    probes = np.asarray(result.importances_mean, dtype=float)[n_groups:]

    pvalues = selector.pvalues_[first]
    corrected = selector.pvalues_corrected_[first]
    order = np.lexsort((-result.importances_mean[:n_groups], pvalues))
    rows, classes = [], []
    for j in order:
        kept = bool(selector.support_[first[j]])
        rows.append(
            [
                labels[j],
                _fmt(float(result.importances_mean[j])),
                _fmt(float(pvalues[j])),
                _fmt(float(corrected[j])),
                _decision(kept, pvalues[j], corrected[j], selector, first[j]),
            ]
        )
        classes.append("kept" if kept else "")
    kept = [names[j] for j in np.flatnonzero(selector.support_)]
    notes = _items(notes)
    method = METHOD_TITLES.get(selector.method_, selector.method_)
    band = (
        f" The {len(probes)} probes are drawn as one grey band, from the lowest "
        f"({_fmt(float(probes.min()))}) to the highest ({_fmt(float(probes.max()))}) "
        "of their mean importances, with their median as a line; each feature "
        "is tested against its own copies, so a bar beyond the band is not by "
        "itself a decision (the table gives each p-value)."
        if len(probes)
        else ""
    )
    return (
        "<h2>Features that beat random probes (ImportanceSelector)</h2>"
        f"<p>ImportanceSelector added {int(result.n_probes)} probe columns "
        "(shuffled copies of the features, each named after the feature it "
        "copies), held them fixed, and in each of "
        f"{_e(_rounds_run(selector))} fitted a forest of "
        f"{_e(_n_trees(selector))} trees (--selector-trees) with a fresh seed "
        f"and measured every column's importance ({_e(method)}). It keeps a "
        "feature only when its mean importance over the rounds, in units of "
        "the spread of the probe means of features like it, beats theirs: "
        "one-sided p-value adjusted by "
        f"{_e(_correction(selector.correction))} at most {selector.alpha}"
        f"{_e(_promise(selector.correction))}.{_e(_grouped(selector))} It "
        f"keeps <b>{len(kept)} of {len(names)}</b> features: "
        f"{_e(_names(kept)) or 'none'}.{_e(_cost(selector))} Bars are the mean "
        f"importances over the rounds of the {_leading(shown, selector)}, in "
        f"{_e(unit)}: compare them with the probes', not across data sets."
        f"{_e(band)} The adjusted p-value is not the correction of the p-value "
        "beside it alone: the test looks at the rounds "
        f"{_times(len(LOOK_SPENDING))}, spending "
        f"{_e(' then '.join(f'{share:.0%}' for share in LOOK_SPENDING))} of "
        "alpha, and the adjusted p-value is the smallest of each look's "
        "adjusted p-value over its share.</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + figure_html
        + _folded(
            _table(
                ["feature", "importance", "p-value", "adjusted p-value", "decision"],
                rows,
                classes,
                sortable=True,
            ),
            len(rows),
            top,
            "Every feature's p-value and decision (sortable table)",
        )
    )


#: The multiple-testing corrections of ImportanceSelector, named in prose.
CORRECTION_NAMES = {
    "holm": "Holm's method",
    "bonferroni": "Bonferroni's correction",
    "fdr_bh": "the Benjamini-Hochberg procedure",
}


def _rounds_run(selector):
    """The rounds the selector ran, and why fewer than it could."""
    run, planned = int(selector.n_rounds_), int(selector.n_rounds)
    stop = f" (it stops after half of {planned} when every feature is settled)"
    return f"{run} rounds" + (stop if run < planned else "")


def _promise(name):
    """What ``correction`` bounds at level alpha, for the report's prose."""
    family = "the chance of keeping any noise feature"
    share = "the expected share of noise among the kept features"
    promise = {"holm": family, "bonferroni": family, "fdr_bh": share}.get(name)
    return "" if promise is None else f", which bounds {promise}"


def _correction(name):
    if name is None:
        return "no correction (none asked)"
    return CORRECTION_NAMES.get(name, f"the {name} correction")


def _decision(kept, pvalue, corrected, selector, column):
    """A feature's decision in words: confirmed and kept, added by
    ``keep_tentative="auto"`` to recover the score the selection cost (a
    candidate of the guard: raw p-value at most ``GUARD_LEVEL``), kept as a
    tentative feature (one a cross-validated score asked for, with
    ``cv_results_``), kept by ``min_features``, or dropped."""
    if not kept:
        return "dropped"
    if corrected <= selector.alpha:
        return "kept"
    guarded = hasattr(selector, "cv_results_") and selector.keep_tentative == "auto"
    if guarded and pvalue <= GUARD_LEVEL:
        return "kept (added to recover the score)"
    if selector.decisions_[column] == "tentative":
        if hasattr(selector, "cv_results_"):
            return "kept (tentative, by cross-validation)"
        if selector.keep_tentative is True:
            return "kept (tentative)"
    return "kept (min_features)"
