"""The report's verdicts, once and without HTML: which features matter,
which are noise, which the evidence leaves uncertain, where ordinary and
conditional permutation disagree, and what to do next.

Two pieces of evidence decide, because their error rates are measured:
ImportanceSelector's calibrated test (``docs/bench_calibration.rst``) and
permutation importance on held-out rows with its spread over shuffles (a
feature counts as above the column of random numbers when its mean exceeds
the random column's by more than ``MARGIN_STANDARD_ERRORS`` standard errors
of the difference). MDI, measured on the training rows, favours features
with many distinct values, and drop-column importance is one refit per
feature with no error bar: the page shows both as context, and neither
decides a verdict. ``_html.py`` renders what this module decides.
"""

import numpy as np
from sklearn.utils import Bunch

from ._analysis import METHOD_TITLES, has_spread
from ._common import fmt as _fmt
from ._common import names_text as _names

#: A feature is above the random column under a method when its mean
#: importance exceeds the random column's by more than this many standard
#: errors of the difference (the repeats' spread; the means alone for a
#: method without one, such as drop-column's single refit).
MARGIN_STANDARD_ERRORS = 2.0
#: The importance whose comparison with the random column decides verdicts
#: (with the selector's decision): permutation on held-out rows.
DECIDING_METHOD = "permutation"


def clearly_above(name, result, random_name):
    """``{feature: bool}``: is each feature's mean importance above the
    random column's by more than ``MARGIN_STANDARD_ERRORS`` standard errors
    of the difference (strictly above, for a method without a spread)?"""
    names = list(map(str, result.feature_names))
    means = np.asarray(result.importances_mean, dtype=float)
    r = names.index(random_name)
    importances = result.get("importances")
    if importances is not None:
        importances = np.asarray(importances, dtype=float)
    if (
        importances is not None
        and importances.ndim == 2
        and importances.shape[1] > 1
        and has_spread(name, result)
    ):
        n_repeats = importances.shape[1]
        errors = importances.std(axis=1, ddof=1) / np.sqrt(n_repeats)
        margin = MARGIN_STANDARD_ERRORS * np.sqrt(errors**2 + errors[r] ** 2)
    else:
        margin = np.zeros(len(names))
    above = means - means[r] > margin
    return dict(zip(names, map(bool, above)))


def _evidence(facts, names):
    """``(above, kept)``: each feature above the random column under held-out
    permutation (None when it was not measured) and kept by the selector
    (None when it did not run)."""
    random_name = facts.fitted.random_name
    results = facts.get("results") or {}
    above = None
    if DECIDING_METHOD in results:
        above = clearly_above(DECIDING_METHOD, results[DECIDING_METHOD], random_name)
    kept = None
    if facts.get("selector") is not None:
        features = [str(c) for c in facts.fitted.X.columns if str(c) != random_name]
        kept = dict(zip(features, map(bool, facts.selector.support_)))
    return above, kept


def kept_in_groups(facts):
    """The features the selector kept as members of a group of columns it
    tested together (near-duplicates), by name."""
    selector = facts.get("selector")
    if selector is None:
        return set()
    random_name = facts.fitted.random_name
    features = [str(c) for c in facts.fitted.X.columns if str(c) != random_name]
    return {
        features[j]
        for group in selector.groups_
        if len(group) > 1 and selector.support_[group[0]]
        for j in group
    }


def deciding_evidence(facts):
    """The names of the evidence that decided, for the page's sentences."""
    above, kept = _evidence(facts, [])
    evidence = []
    if above is not None:
        evidence.append(
            "above the random column under permutation on held-out rows by "
            f"more than {MARGIN_STANDARD_ERRORS:g} standard errors of the "
            "difference"
        )
    if kept is not None:
        evidence.append("kept by ImportanceSelector")
    return evidence


def verdicts(facts):
    """``(matter, uncertain, noise)``, the features in each, most important
    first.

    A feature *matters* when the deciding evidence that was measured all
    says so: held-out permutation puts it above the random column and the
    selector keeps it (either alone when the other did not run). It is
    *noise* when all of it says not. It is *uncertain* when the two
    disagree, or when neither ran (MDI and drop-column do not decide).
    """
    random_name = facts.fitted.random_name
    names = [str(c) for c in facts.fitted.X.columns if str(c) != random_name]
    above, kept = _evidence(facts, names)
    matter, uncertain, noise = [], [], []
    for n in names:
        votes = [v[n] for v in (above, kept) if v is not None]
        if not votes:
            uncertain.append(n)
        elif all(votes):
            matter.append(n)
        elif not any(votes):
            noise.append(n)
        else:
            uncertain.append(n)
    order = {n: i for i, n in enumerate(facts.top)}
    rank = lambda n: order.get(n, len(order))  # noqa: E731
    return sorted(matter, key=rank), sorted(uncertain, key=rank), noise


def redundant_features(analyzer):
    """``[(feature, explained_by)]``: what DependenceAnalyzer would drop, in
    its order (empty when the dependence step did not run)."""
    if analyzer is None:
        return []
    path = analyzer.elimination_path_
    return list(zip(map(str, path["feature"]), path["explained_by"]))


def decide(data, facts, options):
    """Every verdict of the page, once, from the measured ``facts``: a Bunch
    with ``matter``, ``uncertain`` and ``noise`` (see :func:`verdicts`),
    ``evidence`` (what decided), ``why`` (what leaves each uncertain
    feature undecided), ``redundant`` and the next ``steps``."""
    matter, uncertain, noise = verdicts(facts)
    analyzer = facts.get("analyzer")
    redundant = redundant_features(analyzer)
    random_name = facts.fitted.random_name
    findings = [
        random_column_finding(method, result, random_name)
        for method, result in (facts.get("results") or {}).items()
    ]
    shared = []
    comparison = facts.get("comparison") or {}
    if comparison.get("conditional") is not None:
        measured = set(map(str, comparison["conditional"].feature_names))
        shared = [
            f
            for f in conditional_disagreements(
                comparison["ordinary"], comparison["conditional"], random_name
            )
            if f in comparison["candidates"] and f in measured
        ]
    return Bunch(
        matter=matter,
        uncertain=uncertain,
        noise=noise,
        evidence=deciding_evidence(facts),
        why=why_uncertain(facts, uncertain),
        redundant=redundant,
        findings=findings,
        shared=shared,
        partners={f: explained_by(analyzer, f) for f in shared},
        steps=next_steps(data, facts, options, matter, noise, redundant, uncertain),
    )


def explained_by(analyzer, feature):
    """The feature whose shuffling lowers ``feature``'s dependence most, in
    the dependence step (None when it was not measured there)."""
    if analyzer is None:
        return None
    names = [str(n) for n in analyzer.feature_names_in_]
    if feature not in names:
        return None
    row = np.asarray(analyzer.dependence_matrix_, dtype=float)[names.index(feature)]
    if not np.isfinite(row).any() or np.nanmax(row) <= 0:
        return None
    return names[int(np.nanargmax(row))]


def why_uncertain(facts, names):
    """What leaves each uncertain feature undecided, as ``[(reason,
    names)]`` in the order of ``names``."""
    above, kept = _evidence(facts, names)
    together = kept_in_groups(facts)
    groups = {}
    for n in names:
        if above is None and kept is None:
            reason = (
                "neither ImportanceSelector nor permutation importance on "
                "held-out rows was measured"
            )
        elif n in together:
            reason = (
                "kept by the selector with its group of near-duplicate columns, "
                "tested together, but not clearly above the random column under "
                "permutation alone (shuffled alone, a column leaves its copies "
                "to carry what they share)"
            )
        elif kept is not None and kept[n]:
            reason = "kept by the selector but not clearly above the random column"
            reason += " under permutation"
        else:
            reason = "above the random column under permutation but dropped by "
            reason += "the selector"
        groups.setdefault(reason, []).append(n)
    return list(groups.items())


def random_column_finding(method, result, random_name):
    """One sentence on how a method ranks the random column: the real
    features it does not put strictly below (ties count against them)."""
    names = [str(n) for n in result.feature_names]
    values = dict(zip(names, map(float, result.importances_mean)))
    reference = values[random_name]
    not_above = [n for n in names if n != random_name and values[n] <= reference]
    title = METHOD_TITLES[method]
    if not_above:
        return (
            f"{title}: the random column ({_fmt(reference)}) ranks at or above "
            f"{len(not_above)} real feature(s): {_names(not_above)}."
        )
    return (
        f"{title}: every real feature is above the random column ({_fmt(reference)})."
    )


#: Scorers whose best score is 1 (None: the report's defaults, accuracy and
#: R²); a ``neg_`` scorer's best is 0.
_BEST_IS_ONE = ("accuracy", "balanced_accuracy", "r2", "roc_auc", "f1", "precision")


def _perfect(score, scoring):
    """Whether ``score`` is the best ``scoring`` can give (False when that
    best is not known)."""
    if scoring is None or str(scoring).startswith(_BEST_IS_ONE):
        return score >= 1.0
    if str(scoring).startswith("neg_"):
        return score >= 0.0
    return False


def _uncertain_steps(facts, options, uncertain):
    """The next steps for the uncertain features: those kept with their
    groups of near-duplicates apart, since more rows would not settle
    them."""
    fitted = facts.fitted
    steps = []
    together = kept_in_groups(facts)
    grouped = [n for n in uncertain if n in together]
    if grouped:
        steps.append(
            f"{len(grouped)} uncertain feature(s) ({_names(grouped, 6)}) were "
            "kept with their groups of near-duplicate columns: permutation of "
            "one of them alone cannot show what the group carries. To keep "
            "fewer columns, keep one of each group (DependenceAnalyzer's "
            "elimination path) and check the score."
        )
    uncertain = [n for n in uncertain if n not in together]
    if uncertain:
        steps.append(
            f"The evidence is split on {len(uncertain)} feature(s) "
            f"({_names(uncertain, 6)}): more rows"
            + (
                ", more of the selector's rounds (ImportanceSelector(n_rounds=...)) "
                "or a model that predicts better"
                if not _perfect(fitted.score, options.scoring)
                else " or more of the selector's rounds "
                "(ImportanceSelector(n_rounds=...))"
            )
            + " would settle them."
        )
    return steps


def _target_steps(data, facts, options):
    """The report's first steps, on the target: a skewed target or
    imbalanced classes scored as they are, or a model that does not beat
    its baseline."""
    fitted = facts.fitted
    steps = []
    summary = data.target_summary
    weak = fitted.score <= fitted.chance
    if data.task == "regression" and summary is not None:
        if summary.skewed and not options.log_target:
            steps.append(
                f"The target is skewed (skewness {summary.skewness:.1f}, max "
                f"{_fmt(summary.quantiles['max'])} against a median of "
                f"{_fmt(summary.quantiles['median'])}): rerun with --log-target, "
                "or --scoring neg_mean_absolute_error, so that a few extreme "
                "values do not dominate the score."
            )
        elif weak:
            steps.append(
                "The model does not beat the mean: look for errors or extreme "
                "values in the target, or add features that explain it."
            )
    if data.task == "classification" and summary is not None:
        if summary.imbalanced and options.scoring is None:
            steps.append(
                "The classes are imbalanced: rerun with --scoring "
                "balanced_accuracy (or f1_macro) so that the rare classes count."
            )
        elif weak:
            steps.append(
                "The model does not beat the class shares: the features may not "
                "carry the target, or more rows are needed."
            )
    return steps


def next_steps(data, facts, options, matter, noise, redundant, uncertain=()):
    """Concrete things to do, most useful first; none contradicts the
    verdicts (nothing "looks sound" while features are uncertain or none
    matters)."""
    steps = _target_steps(data, facts, options)
    if noise:
        steps.append(
            f"Try the model without the {len(noise)} noise feature(s) "
            f"({_names(noise, 6)}): ImportanceSelector in a Pipeline does this "
            "and checks the score."
        )
    if redundant:
        steps.append(
            "Redundant features share their importance: before reading a low "
            "importance as useless, keep one of each redundant group "
            "(DependenceAnalyzer's elimination path) and measure again."
        )
    if matter:
        steps.append(
            f"Check that the leading features ({_names(matter[:5], 5)}) make "
            "sense for the target and are known at prediction time (not a "
            "leak of the answer)."
        )
    for column, reason in data.excluded:
        if reason.startswith("free text"):
            steps.append(
                f"{column!r} is free text, left out: derive features from it "
                "(length, key words, categories) if it should matter."
            )
    if facts.method_notes:
        steps.append(
            "Drop-column importance was "
            + (
                "replaced by out-of-bag permutation"
                if "oob_permutation" in facts.methods
                else "left out"
            )
            + " to save time: raise --time-budget to measure it."
        )
    if data.n_rows_total > len(data.y):
        steps.append(
            f"The report used {len(data.y)} of {data.n_rows_total} rows "
            "(--max-rows); leave --max-rows out to use every row."
        )
    steps += _uncertain_steps(facts, options, uncertain)
    if not steps:
        if matter:
            steps.append(
                "Nothing stands out: every feature is decided, and the model "
                "beats its baseline."
            )
        else:
            steps.append(
                "No feature is shown to matter: check the target and the "
                "model's score before reading the importances."
            )
    return steps


#: A feature's conditional permutation importance below this share of its
#: ordinary one counts as a disagreement.
CONDITIONAL_SHARE = 0.5


def conditional_disagreements(ordinary, conditional, random_name):
    """The features where ordinary and conditional permutation disagree:
    ordinary permutation puts them clearly above the random column (see
    :func:`clearly_above`) and their conditional importance is less than
    ``CONDITIONAL_SHARE`` of their ordinary one, most important (ordinary)
    first."""
    above = clearly_above("permutation", ordinary, random_name)
    ordinary_mean = dict(
        zip(map(str, ordinary.feature_names), map(float, ordinary.importances_mean))
    )
    conditional_mean = dict(
        zip(
            map(str, conditional.feature_names),
            map(float, conditional.importances_mean),
        )
    )
    disagree = [
        f
        for f, value in conditional_mean.items()
        if f != random_name
        and above.get(f)
        and value < CONDITIONAL_SHARE * ordinary_mean[f]
    ]
    return sorted(disagree, key=lambda f: -ordinary_mean[f])
