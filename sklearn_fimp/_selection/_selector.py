"""ImportanceSelector: keep the features that beat random probes."""

import numbers
import re
import warnings
from copy import deepcopy

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import DataConversionWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils import Bunch, check_random_state, get_tags
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_is_fitted

from .._importance._groups import resolve_groups
from .._methods import METHODS, check_method, resolve_auto, takes_missing_values
from .._utils._compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    add_note,
    check_sample_weight,
    fit_context,
    routing_enabled,
    transform_checking_names,
    validate_data,
)
from .._utils._frames import drop_columns, is_dataframe
from .._utils._progress import Progress
from .._utils._random import MAX_SEED, with_shared_seed
from .._utils._result import importance_result
from .._utils._scoring import SCORING_CONSTRAINT, get_scorer
from .._utils._validation import (
    check_finite_target,
    discard_fit_on_error,
    explain_input_errors,
    text_columns_in_error,
)
from ._measure import measure_importances, measure_model_importances
from ._probe_test import (
    adjust_pvalues,
    critical_pvalue,
    decide,
    round_critical_value,
    round_test,
)
from ._rounds import measure_rounds

PROBE_KINDS = ("shadow", "uniform", "normal")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh")
#: "auto" adds one probe per feature (or group), and at least this many, so
#: that the spread of the probes' importances is estimated well enough.
MIN_AUTO_PROBES = 20
_SCALED_THRESHOLD = re.compile(r"^\s*([0-9.eE+-]+)\s*\*\s*(mean|median)\s*$")


def _default_estimator(y):
    """A random forest for the target: classifier for labels, else regressor."""
    target = type_of_target(y, input_name="y")
    if target in ("binary", "multiclass", "multiclass-multioutput"):
        return RandomForestClassifier()
    if target in ("continuous", "continuous-multioutput"):
        return RandomForestRegressor()
    raise ValueError(
        f"Unknown label type: y has target type {target!r}, for which no default "
        "estimator is "
        "defined; pass estimator= a classifier or regressor that supports it."
    )


def _parse_threshold(threshold, importances):
    """The importance value a float / "mean" / "median" / "1.5*mean" means."""
    if isinstance(threshold, numbers.Real) and not isinstance(threshold, bool):
        return float(threshold)
    match = _SCALED_THRESHOLD.match(threshold)
    if threshold in ("mean", "median"):
        scale, reference = 1.0, threshold
    elif match is not None:
        try:
            scale = float(match.group(1))
        except ValueError:
            match = None
        reference = match.group(2) if match is not None else None
    if threshold not in ("mean", "median") and match is None:
        raise ValueError(
            f"threshold={threshold!r} is not understood; pass 'probes', a float, "
            "'mean', 'median', or a scaled reference such as '1.5*mean' or "
            "'0.5*median'."
        )
    center = np.mean(importances) if reference == "mean" else np.median(importances)
    return float(scale * center)


def _select_columns(X, support):
    """Columns of X where ``support`` is True, keeping X's container."""
    return drop_columns(X, np.flatnonzero(~support))


def _refit_note(support):
    return (
        f"ImportanceSelector: raised by the refit on the {int(support.sum())} "
        "selected features (refit=False skips it)."
    )


def _estimator_has(attribute):
    """Whether the selector can delegate ``attribute`` to its estimator."""

    def check(self):
        if hasattr(self, "estimator_"):
            return (
                self.refit and not self.prefit and hasattr(self.estimator_, attribute)
            )
        if self.prefit or not self.refit:
            return False
        if self.estimator is None:
            return attribute in (
                "predict",
                "predict_proba",
                "predict_log_proba",
                "score",
            )
        return hasattr(self.estimator, attribute)

    return check


class ImportanceSelector(SelectorMixin, MetaEstimatorMixin, BaseEstimator):
    """Keep the features whose importance beats random probe columns.

    ``fit`` runs ``n_rounds`` rounds: each appends fresh probe columns to X
    (shuffled copies of the features by default), fits the estimator and
    measures every column's importance with one of this package's
    importance functions. A feature is kept only when a statistical test
    says its importance is larger than that of probes of its own kind.
    Probes never leave ``fit``: ``transform`` and the fitted ``estimator_``
    see the real features only.

    **The test.** A shuffled copy (shadow) of a feature keeps its
    distribution and number of distinct values, so for a feature independent
    of y and of the other features, it and its shadows are exchangeable.
    In each round a feature's score is its importance minus the mean of its
    own shadows' importances (over all rounds), divided by their standard
    deviation (shadows of a continuous column spread two to three times
    wider than those of a three-level one, so one pool of probes is unfair
    to some features). Its p-value in that round is the share of all
    probes' scores, computed the same way (leave one out) and pooled over
    features and rounds, at least as large; beyond the tenth largest probe
    score a generalized Pareto tail fitted to the largest ones extrapolates
    it (never a bounded tail: an exponential one if the fit says bounded;
    where importances take few values and the probes' scores tie,
    Cantelli's inequality, which holds for any distribution, bounds the
    tail instead), and no p-value is below the share of probe scores that
    reach the feature's. The rounds share the feature's column, so they are
    not independent; they are combined by a rule valid under any
    dependence: with ``k`` a third of the rounds (rounded up), the p-value
    is the k-th smallest round p-value times ``n_rounds / k`` (a feature
    reaches ``alpha`` when it reaches ``alpha * k / n_rounds`` in at least
    ``k`` rounds). The p-values are then adjusted for the
    number of features tested: Holm's step-down method by default, which
    bounds the probability of keeping any noise feature by ``alpha`` for
    valid p-values under any dependence between the tests; "fdr_bh"
    (Benjamini-Hochberg) bounds the expected share of noise among kept
    features instead. Measured on data where the truth is known
    (``docs/bench_calibration.rst``, ``alpha=0.05``, 10 rounds, 60 data
    sets per regime): over nine forest regimes (regression, binary and
    three or four classes; 100 to 5,000 rows; 5 to 500 columns; continuous,
    few-valued and mutually correlated noise; pure noise and signal plus
    noise) the share of data sets with any noise feature kept is at most
    3/60 with 30-tree forests (none in two regimes), and at most 3/60 on
    four of them with scikit-learn's default 100-tree forests; each of the
    six methods, and a linear model through "permutation", kept noise in
    0/60 data sets of 100 rows and 5 columns. The single-fit t test this
    selector used before kept noise in up to 28/30 (500 columns of pure
    noise), BorutaPy in up to 23/60 (48/60 on 500 columns). Where
    importances are sparse (HistGradientBoosting on three columns with a
    strong signal, held-out permutation importance exactly 0 for the probes
    in almost every round) noise was kept in 0/60 data sets, against 9/60
    for the previous version of this test, which averaged the rounds. The
    test errs on the safe side: a noise feature's raw p-value is at most
    0.01 in at most 0.8% of cases in every regime (a valid p-value allows
    1%).

    **Decisions.** ``decisions_`` says, per feature, "confirmed" (the
    corrected p-value is at most ``alpha``), "tentative" (only the raw
    p-value is: the feature beats the probes on its own, not after the
    correction for the number of features) or "rejected". Tentative
    features are dropped unless ``keep_tentative=True``; more rounds
    (``n_rounds``) sharpen the evidence on them. ``ranking_`` is 1 for
    confirmed features, 2 for tentative ones and 3, 4, ... for rejected ones
    by decreasing score, as BorutaPy's. ``importance_history_`` holds each
    round's importances, drawn against the probes' by :class:`ProbeDisplay`.

    **Defaults.** ``method="auto"`` measures MDI-oob (impurity decreases
    re-scored on out-of-bag rows, :func:`oob_mdi_importance`) when the
    estimator is a RandomForest*, ExtraTrees* or Bagging* of trees with
    bootstrap, and permutation importance on held-out rows otherwise (or
    out-of-bag permutation importance when ``groups`` is given). On the
    package's selection benchmark (``bench/bench_selection.py``: Friedman,
    redundant features, cardinality bias, an interaction, and rental data
    with planted noise) MDI-oob with shadow probes, Holm's correction and
    ``alpha=0.01`` selected best, and costs almost nothing beyond the one
    fit: it needs no permutations. See ``docs/bench_selection.rst``.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The model whose importances are measured: a classifier, regressor
        or Pipeline (cloned; with ``prefit=True``, an already fitted one).
        None: a RandomForestClassifier for class labels, a
        RandomForestRegressor otherwise (scikit-learn's defaults).
    method : {"auto", "mdi", "oob_mdi", "permutation", "oob_permutation", \
            "conditional_permutation", "drop_column", "shap"}, default="auto"
        How importance is measured.

        - "mdi": mean decrease in impurity (:func:`mdi_importance`); tree
          models only. Biased towards high-cardinality features, which
          shadow probes compensate for.
        - "oob_mdi": MDI re-scored on out-of-bag rows
          (:func:`oob_mdi_importance`); bagged trees with bootstrap.
        - "permutation": score drop when a column is permuted in rows held
          out of the fit (:func:`permutation_importance`): a 20% held-out
          split, or every split of ``cv``. Any model or Pipeline (a
          Pipeline's raw input columns are permuted).
        - "oob_permutation": the same on out-of-bag rows
          (:func:`oob_permutation_importance`); bagged models with bootstrap.
        - "conditional_permutation": score drop when a column is replaced
          by a draw given the other features, on held-out rows as for
          "permutation" (:func:`conditional_permutation_importance`): what
          a feature adds given the others, without crediting a correlated
          stand-in; one sampler model per feature and probe.
        - "drop_column": score lost when the model is refitted without the
          column (:func:`drop_column_importance`); any model, one fit per
          feature and probe.
        - "shap": mean absolute SHAP value on held-out rows, split as for
          "permutation" (:func:`shap_importance`); tree models that shap's
          TreeExplainer reads, with the optional ``shap`` package.
        - "auto": "oob_mdi" for bagged trees with bootstrap ("oob_permutation"
          when ``groups`` is given, or when X has missing values and
          scikit-learn is older than 1.8), "permutation" otherwise.

    threshold : "probes", float or str, default="probes"
        "probes": keep the features that pass the test above. A float: keep
        features whose mean importance is at least this value
        (``-np.inf`` keeps every feature, so that ``max_features`` alone
        selects, as in SelectFromModel). "mean", "median" or a scaled one
        such as "1.5*mean": that statistic of the features' mean importances
        (no probes are added).
    probes : {"shadow", "uniform", "normal"}, default="shadow"
        Kind of probe column: shuffled copies of the features (keeping their
        distribution, dtype and cardinality, which matters for MDI), or
        uniform or standard normal noise.
    n_probes : "auto" or int, default="auto"
        Number of probes (probe groups, with ``groups``). "auto": one per
        feature (or group), and at least 20.
    n_rounds : int, default=10
        Rounds of fresh probes; each refits the estimator (or, for
        "permutation" and "drop_column", does what one measure does), so
        ``fit`` costs about ``n_rounds`` times one measure. The test needs
        at least three rounds to standardize each feature by its own
        shadows; with fewer, features are compared with all probes pooled
        (one round of 20 probes cannot give a p-value below 1/21).
        Each round fits the estimator as given, so its trees set the cost
        and the power (fewer trees make each round noisier and the test
        more cautious). On wide data (600 rows x 300 features, 8
        informative, 16 seeds, ``alpha=0.05``) 10 rounds of 100-tree forests
        reached F1 0.78, where BorutaPy reached 0.78 and kept noise in 12
        of the 16 data sets, ours in 1; on the 8 data sets run side by side
        ours took 0.28-0.36 of BorutaPy's time. 30-tree rounds cost about a
        third as much and reached 0.75 on 8 of them
        (``docs/bench_calibration.rst``). Tentative features get more evidence
        from more rounds or more probes: a round's p-value cannot go much
        below ``1 / N`` with ``N = n_rounds * n_probes`` probe scores where
        importances are sparse (a few probes' rare non-zero values give the
        null scores a heavy tail), and a third of the rounds must reach the
        level. On three columns with HistGradientBoosting and held-out
        permutation importance, a clearly important feature got p = 0.008
        with the defaults (tentative at ``alpha=0.01``), 0.0013 with
        ``n_probes=60`` and below 1e-4 with ``n_rounds=30``.
    keep_tentative : bool, default=False
        Keep the "tentative" features (see ``decisions_``) as well as the
        confirmed ones.
    alpha : float in (0, 1), default=0.01
        Level of the test: with Holm's correction, the probability of
        keeping any feature that is no better than the probes.
    correction : {"holm", "bonferroni", "fdr_bh"} or None, default="holm"
        Adjustment of the p-values for testing many features (or groups).
    n_repeats : int, default=5
        Permutations per feature for the permutation methods.
    groups : None, "auto", list or dict, default=None
        Groups of *features* (columns), not of rows: the rows' groups of a
        group-aware ``cv`` are ``fit(X, y, groups=...)``.
        Select whole groups of features (as in
        :func:`permutation_importance`; features no group mentions are
        groups of their own). Permutation methods permute a group as a
        block and drop-column drops it; probes then mirror the groups (a
        shadow probe is a whole group shuffled together). Needs a
        permutation or drop-column method.
    scoring : str, callable or None, default=None
        Scorer of the permutation and drop-column methods; None uses the
        estimator's ``score`` (accuracy or R²). One metric, as for
        scikit-learn's RFECV: the selection tests one importance per
        feature. Several metrics (a list or dict, or a callable returning a
        dict), which the importance functions accept, are an error here;
        call them directly to compare metrics.
    cv : int, cross-validation generator, iterable or None, default=None
        Splits for "permutation" and "drop_column": None is one held-out
        split of 20% (stratified for classifiers) for "permutation" and the
        out-of-bag score or that split for "drop_column". A group-aware
        splitter (GroupKFold) gets the rows' groups from
        ``fit(X, y, groups=...)``.
    max_features : int, float, callable or None, default=None
        Keep at most this many features (a float: this fraction of them),
        the most significant first. A callable is called with X (as
        validated by ``fit``, before probes are added) and returns that
        int, as in SelectFromModel. Counted in groups when ``groups`` is
        given. The count used is ``max_features_``.
    min_features : int, default=1
        Keep at least this many features (or groups), the most significant
        first, even when fewer pass the threshold; a warning says so.
    prefit : bool, default=False
        Whether ``estimator`` is already fitted. ``fit(X, y)`` then measures
        its importances without refitting: X, y are validation rows for
        "permutation", its training rows for the out-of-bag methods, and
        unused by "mdi". A prefit model has never seen probe columns, so it
        needs a numeric, "mean" or "median" threshold; "drop_column" refits
        by definition and cannot be used.
    refit : bool, default=True
        Fit a clone of the estimator on the selected features as
        ``estimator_``, to which ``predict``, ``predict_proba``,
        ``predict_log_proba``, ``decision_function`` and ``score`` delegate
        (``is_classifier`` and the other estimator tags follow the
        estimator, as for RFE). Ignored with
        ``prefit=True``. In a Pipeline whose next step is the model, set it
        to False to save that fit.
    max_samples : int, float or None, default=None
        Score "permutation" and "oob_permutation" importances on at most
        this many rows (a float: this fraction of them), drawn without
        replacement with ``random_state`` from the held-out rows (or the
        training rows, out of bag); the model is still fitted on all rows.
        None: all rows. On large data, some ten thousand rows rank features
        about as all rows do, for a fraction of the time. Other methods
        score no rows and reject it.
    importance_getter : "auto", str, callable or None, default=None
        Read the model's own importances instead of measuring them, as
        SelectFromModel does: "auto" reads ``coef_`` or
        ``feature_importances_``, a string an attribute path (such as
        ``"named_steps.ridge.coef_"`` for a Pipeline whose steps keep the
        columns), a callable ``getter(fitted_estimator)`` returns them; a
        coefficient matrix (one row per class or output) gives the L1 norm
        of each column, and a group's importance is the sum of its
        columns'. Mostly for ``prefit=True`` (with a numeric, "mean" or
        "median" threshold); without prefit the estimator is fitted on the
        features and the probes, whose importances it reads alike. None:
        importances are measured with ``method``, which must then be
        "auto" when this is given. ``method_`` is "importance_getter".
    n_jobs : int or None, default=None
        Parallel jobs of the importance functions (joblib semantics;
        ``joblib.parallel_config(backend="dask")`` runs them on a Dask
        cluster, with the same results).
    verbose : int, default=0
        Progress messages on stderr: a line per stage of ``fit`` (fitting,
        measuring, each split of ``cv``), and those of the importance
        function.
    random_state : int, RandomState instance or None, default=None
        Seed of the probes, the held-out split and the permutations; also
        given to every ``random_state`` of the estimator left at None, so
        that the selection is reproducible. Seeds are drawn before any
        parallel work: results do not depend on ``n_jobs``.

    Attributes
    ----------
    estimator_ : estimator
        With ``refit=True``, the estimator fitted on the selected features
        (None if no feature was selected). With ``refit=False``, the
        estimator fitted on the features and probes whose importances were
        measured (for "permutation", on the rows outside the held-out
        split; None when several models were fitted, with "drop_column" or
        a ``cv`` of several splits). With ``prefit=True``, a copy of the
        given estimator.
    method_ : str
        The method used ("auto" resolved), or "importance_getter".
    importances_ : Bunch
        The importance function's result for the real features (or groups)
        followed by the probes, with ``is_probe`` (bool mask),
        ``n_probes``, ``statistics`` (the scores of the test) and
        ``pvalues`` added (the last two None without probes). With probes,
        ``importances`` has one column per round (the k-th probe row holds
        the k-th probe of each round), and ``n_rounds`` and ``mirrors``
        (n_rounds, n_probes: the feature or group each probe copied, -1 for
        uniform and normal probes) are added.
    threshold_ : float
        For "probes": the score (a feature's importance in a round above its
        shadows' mean, in units of their standard deviation; the statistic
        is its k-th largest over the rounds, k a third of them) above which
        a feature was confirmed, at the level reached by the correction.
        Otherwise the mean importance above which a feature was kept.
    decisions_ : ndarray of str of shape (n_features_in_,) or None
        "confirmed", "tentative" or "rejected" per feature (its group's,
        with ``groups``); None unless ``threshold="probes"``. ``support_``
        may differ where ``max_features``, ``min_features`` or
        ``keep_tentative`` apply.
    ranking_ : ndarray of int of shape (n_features_in_,)
        With probes: 1 confirmed, 2 tentative, 3, 4, ... rejected by
        decreasing score. Otherwise the rank of the mean importance
        (1 = largest).
    importance_history_ : ndarray of shape (n_rounds, n_groups) or None
        Importance of each feature (or group) in each round of probes.
    probe_history_ : ndarray of shape (n_rounds, n_probes) or None
        Importance of each probe in each round.
    pvalues_ : ndarray of shape (n_features_in_,) or None
        Unadjusted p-value of each feature (its group's, with ``groups``);
        None unless ``threshold="probes"``.
    pvalues_corrected_ : ndarray of shape (n_features_in_,) or None
        The same after ``correction``; a feature passes when it is at most
        ``alpha``.
    groups_ : list of ndarray
        Column positions of each group (one feature each without
        ``groups``).
    max_features_ : int
        The most features (or groups) ``fit`` could keep: ``max_features``
        as a count (what a callable returned), or the number of features
        (groups) when it is None.
    support_ : ndarray of shape (n_features_in_,)
        Mask of the selected features.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when X has string column names.

    See Also
    --------
    sklearn.feature_selection.SelectFromModel : Threshold on an estimator's
        importances, without probes.
    oob_mdi_importance, oob_permutation_importance, permutation_importance

    Notes
    -----
    Why the single-fit t test this selector used before was liberal, and
    the measured figures of the candidate tests it was chosen from, are in
    the user guide and ``docs/bench_calibration.rst``. The test assumes
    noise features independent of y and of the other features; a noise
    feature correlated with a relevant one is not noise to the model, and
    is not what this test rejects (see :class:`DependenceAnalyzer`).

    ``sample_weight`` (and, with metadata routing enabled, any requested
    fit parameter) is passed to the estimator's ``fit`` and to the scorer
    or out-of-bag weighting of the importance function.

    Examples
    --------
    >>> from sklearn.datasets import make_friedman1
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from sklearn_fimp import ImportanceSelector
    >>> X, y = make_friedman1(n_samples=500, n_features=10, random_state=0)
    >>> selector = ImportanceSelector(
    ...     RandomForestRegressor(n_estimators=20), random_state=0
    ... ).fit(X, y)
    >>> selector.get_support(indices=True)
    array([0, 1, 2, 3, 4])
    >>> selector.decisions_[[0, 5]]
    array(['confirmed', 'rejected'], dtype=object)
    >>> selector.ranking_
    array([1, 1, 1, 1, 1, 5, 4, 6, 7, 3])
    >>> selector.transform(X).shape
    (500, 5)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), None],
        "method": [StrOptions({"auto", *METHODS})],
        "threshold": [Interval(numbers.Real, None, None, closed="both"), str],
        "probes": [StrOptions(set(PROBE_KINDS))],
        "n_probes": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 2, None, closed="left"),
        ],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left")],
        "keep_tentative": ["boolean"],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "correction": [StrOptions(set(CORRECTIONS)), None],
        "n_repeats": [Interval(numbers.Integral, 1, None, closed="left")],
        "groups": [list, tuple, dict, StrOptions({"auto"}), None],
        "scoring": SCORING_CONSTRAINT,
        "cv": ["cv_object"],
        "max_features": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            callable,
            None,
        ],
        "min_features": [Interval(numbers.Integral, 0, None, closed="left")],
        "prefit": ["boolean"],
        "refit": ["boolean"],
        "max_samples": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "importance_getter": [str, callable, None],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        estimator=None,
        *,
        method="auto",
        threshold="probes",
        probes="shadow",
        n_probes="auto",
        n_rounds=10,
        keep_tentative=False,
        alpha=0.01,
        correction="holm",
        n_repeats=5,
        groups=None,
        scoring=None,
        cv=None,
        max_features=None,
        min_features=1,
        prefit=False,
        refit=True,
        max_samples=None,
        importance_getter=None,
        n_jobs=None,
        verbose=0,
        random_state=None,
    ):
        self.estimator = estimator
        self.method = method
        self.threshold = threshold
        self.probes = probes
        self.n_probes = n_probes
        self.n_rounds = n_rounds
        self.keep_tentative = keep_tentative
        self.alpha = alpha
        self.correction = correction
        self.n_repeats = n_repeats
        self.groups = groups
        self.scoring = scoring
        self.cv = cv
        self.max_features = max_features
        self.min_features = min_features
        self.prefit = prefit
        self.refit = refit
        self.max_samples = max_samples
        self.importance_getter = importance_getter
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------------
    # scikit-learn plumbing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        estimator = self.estimator
        if estimator is None:
            estimator = RandomForestRegressor()
        estimator_tags = get_tags(estimator)
        # MDI-oob refuses rows with NaN before scikit-learn 1.8
        tags.input_tags.allow_nan = estimator_tags.input_tags.allow_nan and (
            takes_missing_values(self.method)
        )
        tags.input_tags.categorical = estimator_tags.input_tags.categorical
        tags.input_tags.string = estimator_tags.input_tags.string
        tags.input_tags.sparse = False
        tags.target_tags.required = True
        # a classifier's selector is a classifier (as RFE's): is_classifier,
        # check_cv's stratification and scorers read this; with
        # estimator=None the kind depends on y, so it stays unknown
        if self.estimator is not None:
            tags.estimator_type = estimator_tags.estimator_type
            tags.classifier_tags = deepcopy(estimator_tags.classifier_tags)
            tags.regressor_tags = deepcopy(estimator_tags.regressor_tags)
        return tags

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_

    def get_metadata_routing(self):
        """Routing of fit parameters to the estimator and the scorer.

        Returns
        -------
        routing : MetadataRouter
            ``fit`` parameters go to the estimator's ``fit``, to the
            scorer's ``score`` (the importance function's weights) and, when
            ``cv`` is given, to its splitter's ``split`` (``groups`` for a
            group-aware splitter such as GroupKFold).
        """
        estimator = self.estimator
        if estimator is None:
            estimator = RandomForestRegressor()
            if routing_enabled():
                estimator.set_fit_request(sample_weight=True)
                estimator.set_score_request(sample_weight=True)
        router = MetadataRouter(owner=self)
        router.add(
            estimator=estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )
        router.add(
            scorer=self._scorer_for_routing(estimator),
            method_mapping=MethodMapping().add(caller="fit", callee="score"),
        )
        if self.cv is not None:
            router.add(
                splitter=check_cv(self.cv),
                method_mapping=MethodMapping().add(caller="fit", callee="split"),
            )
        return router

    def _scorer_for_routing(self, estimator):
        if self.scoring is None:
            return estimator
        return get_scorer(estimator, self.scoring)

    def _routed_params(self, groups, fit_params):
        """Parameters for the estimator's fit, the importance's weights and
        the splitter of ``cv``.

        With metadata routing enabled they go where the estimator, the
        scorer and the splitter request them; otherwise every parameter goes
        to ``fit``, ``sample_weight`` to the importance function as well and
        ``groups`` to the splitter only (as scikit-learn's meta-estimators
        pass ``**fit_params`` and ``groups``).
        """
        if routing_enabled():
            split_kwargs = {} if groups is None else {"groups": groups}
            routed = process_routing(self, "fit", **split_kwargs, **fit_params)
            # attribute access only: with no metadata scikit-learn returns an
            # empty request object on which `"scorer" in routed` never ends
            fit_kwargs = dict(routed.estimator.fit)
            score_weight = routed.scorer.score.get("sample_weight")
            split_kwargs = {} if self.cv is None else dict(routed.splitter.split)
            return fit_kwargs, score_weight, split_kwargs
        split_kwargs = {} if groups is None else {"groups": groups}
        return dict(fit_params), fit_params.get("sample_weight"), split_kwargs

    # ------------------------------------------------------------------
    # fit

    def _resolve_method(self, estimator, y, X):
        """The registry entry of the method to use, after checking that the
        estimator (and ``groups``, y, X, ``prefit``, ``max_samples``) allow
        it; None with ``importance_getter``."""
        if self.importance_getter is not None:
            self._check_importance_getter()
            return None
        name = self.method
        if name == "auto":
            name = resolve_auto(estimator, y, grouped=self.groups is not None, X=X)
        method = METHODS[name]
        check_method(method, estimator, y=y, groups=self.groups, prefit=self.prefit)
        if self.max_samples is not None and not method.scores_rows:
            raise ValueError(
                f"max_samples={self.max_samples!r} limits the rows importances "
                f"are scored on, and method={name!r} scores none (or refits on "
                "all of them). Use method='permutation' or 'oob_permutation', "
                "or max_samples=None."
            )
        return method

    def _check_importance_getter(self):
        """``importance_getter`` reads the model's own importances: the
        parameters of a measuring method cannot apply."""
        if self.method != "auto":
            raise ValueError(
                f"importance_getter={self.importance_getter!r} reads the "
                f"model's own importances, and method={self.method!r} "
                "measures them another way; pass one of them (method='auto' "
                "with importance_getter, or importance_getter=None)."
            )
        if self.max_samples is not None:
            raise ValueError(
                f"max_samples={self.max_samples!r} limits the rows importances "
                "are scored on, and importance_getter reads them from the "
                "model without scoring rows. Pass max_samples=None."
            )

    def _check_counts(self, n_features):
        if self.min_features > n_features:
            raise ValueError(
                f"min_features={self.min_features} is more than the "
                f"{n_features} features (or groups) of X; pass at most "
                f"{n_features}."
            )

    def _check_X_y(self, X, y):
        """X and y validated (the one validation of X in ``fit``), and the
        feature names."""
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target "
                "y is None. Pass the target values of the rows of X."
            )
        allow_nan = get_tags(self).input_tags.allow_nan
        frame = is_dataframe(X)
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(
                f"X is a sparse matrix; {type(self).__name__} permutes and "
                "appends dense columns. Convert it with X.toarray()."
            )
        X = validate_data(
            self,
            X,
            reset=True,
            dtype=None,
            ensure_all_finite=not allow_nan,
            ensure_min_samples=2,
            skip_check_array=frame,
        )
        if frame and (X.shape[0] < 2 or X.shape[1] < 1):
            raise ValueError(
                f"X has shape {X.shape}; {type(self).__name__} needs at least "
                "2 samples and 1 feature."
            )
        y = check_array(
            y, ensure_2d=False, dtype=None, ensure_all_finite=False, input_name="y"
        )
        check_finite_target(y)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; "
                "its single column is used.",
                DataConversionWarning,
                stacklevel=4,
            )
            y = y.ravel()
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"X has {X.shape[0]} rows but y has {y.shape[0]}; pass one "
                "target value per row of X."
            )
        feature_names = np.asarray(
            [str(c) for c in X.columns]
            if frame
            else [f"x{i}" for i in range(X.shape[1])],
            dtype=object,
        )
        return X, y, feature_names

    def _estimator_to_measure(self, y, seed):
        """The estimator to fit (a clone, its unset seeds set to ``seed``), or
        the fitted one with ``prefit=True``."""
        if self.prefit:
            if self.estimator is None:
                raise ValueError(
                    "prefit=True selects with a model you already fitted, and "
                    "estimator=None gives none. Pass the fitted estimator, or "
                    "prefit=False."
                )
            check_is_fitted(self.estimator)
            return self.estimator
        if self.estimator is None:
            return _default_estimator(y).set_params(random_state=seed)
        return with_shared_seed(self.estimator, seed)

    def _max_features(self, X, n_groups):
        """The most features (or groups) to keep: ``max_features`` as a
        count (a callable is called with X, as SelectFromModel does)."""
        max_features = self.max_features
        if max_features is None:
            return n_groups
        if callable(max_features):
            max_features = max_features(X)
            if isinstance(max_features, bool) or not isinstance(
                max_features, numbers.Integral
            ):
                raise TypeError(
                    f"max_features is a callable, and it returned "
                    f"{max_features!r} of type {type(max_features).__name__}; "
                    "it must return an int, the number of features to keep."
                )
            if max_features < 0:
                raise ValueError(
                    f"max_features is a callable, and it returned {max_features}; "
                    "it must return an int >= 0, the number of features to keep."
                )
            return int(max_features)
        if isinstance(max_features, numbers.Integral):
            return int(max_features)
        return max(1, int(max_features * n_groups))

    def _check_classes(self, estimator, y):
        """A classifier needs two classes: fitted on one, every feature is
        useless and the selection would be arbitrary."""
        if self.prefit or not is_classifier(estimator):
            return
        for column in y.reshape(len(y), -1).T:
            classes = np.unique(column)
            if len(classes) == 1:
                label = classes[0].item() if hasattr(classes[0], "item") else classes[0]
                raise ValueError(
                    f"y has a single class, {label!r}: a classifier fitted "
                    "on it predicts that class whatever the features, so no "
                    "feature is important and any selection would be "
                    "arbitrary. Pass rows of at least two classes."
                )

    def _splits(self, estimator, X, y, split_kwargs):
        """``cv``, or its splits when split parameters (the rows' ``groups``)
        were passed to ``fit``."""
        if not split_kwargs:
            return self.cv
        if self.cv is None:
            raise ValueError(
                f"fit got {', '.join(sorted(split_kwargs))}=, which go to the "
                "splitter of cv, and cv=None. Pass a group-aware splitter, "
                "e.g. cv=GroupKFold(5), or leave the rows' groups out (the "
                "groups of features are the selector's groups= parameter)."
            )
        splitter = check_cv(self.cv, y, classifier=is_classifier(estimator))
        return list(splitter.split(X, y, **split_kwargs))

    def _uses_probes(self):
        """Whether the threshold is the probe test (a bad threshold string
        or probes with ``prefit=True`` are rejected here, before any fit)."""
        use_probes = isinstance(self.threshold, str) and self.threshold == "probes"
        if use_probes and self.prefit:
            raise ValueError(
                "threshold='probes' with prefit=True: the fitted estimator has "
                "never seen probe columns, so no method can measure their "
                "importance without refitting it. Pass prefit=False, or a "
                "float, 'mean' or 'median' threshold."
            )
        if not use_probes:
            _parse_threshold(self.threshold, np.zeros(1))
        return use_probes

    @discard_fit_on_error
    @fit_context(prefer_skip_nested_validation=False)
    @explain_input_errors
    def fit(self, X, y, groups=None, **fit_params):
        """Measure importances with probes and select features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training rows (pandas or polars frames are kept as frames, so a
            Pipeline can select columns by name). With ``prefit=True``: the
            estimator's validation rows for "permutation", its training rows
            for the out-of-bag methods.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Target values.
        groups : array-like of shape (n_samples,), default=None
            Group labels of the rows, for a group-aware ``cv`` (GroupKFold,
            LeaveOneGroupOut, ...): passed to its ``split``, as
            scikit-learn's RFECV and ``cross_validate`` do, so that no group
            is both fitted on and scored. Not to be confused with the
            ``groups`` parameter of the selector, which groups *features*
            (columns); this one groups *rows*. Needs ``cv``. With metadata
            routing enabled, it goes to the splitter when the splitter
            requests it (GroupKFold does by default).
        **fit_params : dict
            Parameters of the estimator's ``fit``. ``sample_weight`` also
            weights the rows of the importance's score (or of the
            out-of-bag averages). With metadata routing enabled
            (``sklearn.set_config(enable_metadata_routing=True)``), each goes
            where the estimator, the scorer and the splitter of ``cv``
            request it.

        Returns
        -------
        self : ImportanceSelector
            The fitted selector.
        """
        # prepare: validate once, route the parameters, draw every seed
        # before any parallel work
        X, y, feature_names = self._check_X_y(X, y)
        fit_kwargs, score_weight, split_kwargs = self._routed_params(groups, fit_params)
        if score_weight is not None:
            score_weight = check_sample_weight(score_weight, X)
        progress = Progress(type(self).__name__, self.verbose)
        rng = check_random_state(self.random_state)
        seed, probe_seed, importance_seed = rng.randint(MAX_SEED + 1, size=3)
        estimator = self._estimator_to_measure(y, seed)
        self._check_classes(estimator, y)
        method = self._resolve_method(estimator, y, X)
        method_name = "importance_getter" if method is None else method.name
        cv = self._splits(estimator, X, y, split_kwargs)
        labels, groups = resolve_groups(self.groups, feature_names, X)
        self._check_counts(len(groups))
        self.max_features_ = self._max_features(X, len(groups))
        use_probes = self._uses_probes()

        # add probes and measure: without probes one measure; with them
        # n_rounds, each with fresh probes and a refit
        options = {
            "labels": labels,
            "groups": groups,
            "seed": importance_seed,
            "sample_weight": score_weight,
            "scoring": self.scoring,
            "n_repeats": self.n_repeats,
            "cv": cv,
            "n_jobs": self.n_jobs,
            "verbose": self.verbose,
            "centre_target": True,
        }
        history = None
        if use_probes:
            result, model, history = self._measure_rounds(
                X,
                y,
                feature_names,
                labels,
                groups,
                method,
                fit_kwargs,
                options,
                cv,
                probe_seed,
                progress,
            )
        else:
            progress(
                f"measuring {method_name!r} importances of {len(groups)} features "
                f"or groups on {X.shape[0]} rows"
            )
            result, model = self._measure(
                estimator, method, X, y, fit_kwargs, options, cv, progress
            )
            result.feature_names = np.asarray(labels, dtype=object)
            result.groups = list(groups)
            result.is_probe = np.zeros(len(groups), dtype=bool)
            result.n_probes = 0

        # decide
        passed, order, threshold, pvalues, corrected, ranking = self._decide(
            result, history, len(groups), use_probes, estimator
        )
        chosen = self._apply_counts(passed, order, use_probes)
        support = np.zeros(X.shape[1], dtype=bool)
        for g in np.flatnonzero(chosen):
            support[groups[g]] = True
        self.method_ = method_name
        self.importances_ = result
        self.threshold_ = threshold
        self.groups_ = groups
        self.support_ = support
        self.pvalues_ = self._per_feature(pvalues, groups, X.shape[1])
        self.pvalues_corrected_ = self._per_feature(corrected, groups, X.shape[1])
        self.ranking_ = self._per_feature(ranking, groups, X.shape[1]).astype(int)
        self.decisions_ = (
            None
            if pvalues is None
            else np.array(["confirmed", "tentative", "rejected"], dtype=object)[
                np.minimum(self.ranking_, 3) - 1
            ]
        )
        self.importance_history_ = None if history is None else history.real
        self.probe_history_ = None if history is None else history.probes
        progress(f"kept {int(support.sum())} of {X.shape[1]} features")

        # refit
        if self.prefit:
            self.estimator_ = deepcopy(self.estimator)
        elif self.refit and support.any():
            progress(f"refitting on the {int(support.sum())} kept features")
            self.estimator_ = self._refit(estimator, X, y, fit_kwargs)
        else:
            self.estimator_ = None if self.refit else model
        return self

    def _measure_rounds(
        self,
        X,
        y,
        feature_names,
        labels,
        groups,
        method,
        fit_kwargs,
        options,
        cv,
        probe_seed,
        progress,
    ):
        """``n_rounds`` of fresh probes: the last round's importance result
        with every round as a column, the last model, and the history."""
        n_probes = (
            max(len(groups), MIN_AUTO_PROBES)
            if self.n_probes == "auto"
            else self.n_probes
        )
        results, models = [], []
        name = "importance_getter" if method is None else method.name

        def measure(X_measured, all_groups, all_labels, seed):
            estimator_seed, importance_seed = np.random.RandomState(seed).randint(
                MAX_SEED + 1, size=2
            )
            progress(
                f"round {len(results) + 1} of {self.n_rounds}: measuring "
                f"{name!r} importances of {len(groups)} features or groups "
                f"and {n_probes} probes on {X.shape[0]} rows"
            )
            round_options = dict(
                options, labels=all_labels, groups=all_groups, seed=importance_seed
            )
            result, model = self._measure(
                self._estimator_to_measure(y, int(estimator_seed)),
                method,
                X_measured,
                y,
                fit_kwargs,
                round_options,
                cv,
                progress,
            )
            result.groups = list(all_groups)
            result.feature_names = np.asarray(all_labels, dtype=object)
            results.append(result)
            models[:] = [model]
            return result.importances_mean

        try:
            real, probes, owners = measure_rounds(
                measure,
                X,
                groups,
                labels,
                feature_names,
                self.probes,
                n_probes,
                self.n_rounds,
                np.random.RandomState(probe_seed),
            )
        except (ValueError, TypeError) as exc:
            if not results:  # the first round failed
                self._explain_failed_shadows(exc, X, y, fit_kwargs)
            raise
        last = results[-1]
        result = importance_result(
            np.hstack([real, probes]).T,
            last.feature_names,
            **{
                key: value
                for key, value in last.items()
                if key
                not in (
                    "importances",
                    "importances_mean",
                    "importances_std",
                    "feature_names",
                )
            },
        )
        result.groups = list(last.groups)
        result.is_probe = np.arange(len(result.groups)) >= len(groups)
        result.n_probes = n_probes
        result.n_rounds = self.n_rounds
        result.mirrors = owners
        history = Bunch(real=real, probes=probes, owners=owners)
        return result, models[0], history

    def _decide(self, result, history, n_real, use_probes, estimator):
        """Which features (or groups) pass, in which order of significance,
        the threshold, the p-values and the ranking (p-values None without
        probes). Sets the result's ``statistics`` and ``pvalues``."""
        means = result.importances_mean[:n_real]
        if not use_probes:
            threshold = _parse_threshold(self.threshold, means)
            result.statistics = result.pvalues = None
            order = np.argsort(-means, kind="stable")
            ranking = np.empty(n_real, dtype=int)
            ranking[order] = np.arange(1, n_real + 1)
            return means >= threshold, order, threshold, None, None, ranking
        if not np.any(history.probes):
            warnings.warn(
                f"estimator={type(estimator).__name__}(...) gave every probe "
                "column an importance of 0, so 'beats the probes' "
                "reduces to 'importance above 0'. If a step drops columns "
                "it does not know (a ColumnTransformer listing columns by "
                "name), let it pass them (remainder='passthrough' or "
                "make_column_selector), or use a numeric threshold.",
                UserWarning,
                stacklevel=4,
            )
        scores, pvalues, null = round_test(
            history.real, history.probes, history.owners, n_real
        )
        corrected = adjust_pvalues(pvalues, self.correction)
        decisions, ranking = decide(pvalues, corrected, scores, self.alpha)
        critical = critical_pvalue(corrected, self.alpha, self.correction)
        n_rounds = history.real.shape[0]
        threshold = round_critical_value(null, critical, n_rounds) if len(null) else 0.0
        missing = np.full(len(result.groups) - n_real, np.nan)
        result.statistics = np.concatenate([scores, missing])
        result.pvalues = np.concatenate([pvalues, missing])
        order = np.lexsort((-scores, pvalues))
        passed = decisions == "confirmed"
        if self.keep_tentative:
            passed |= decisions == "tentative"
        return passed, order, threshold, pvalues, corrected, ranking

    @staticmethod
    def _per_feature(values, groups, n_features):
        """Group values spread to features (the smallest over overlaps)."""
        if values is None:
            return None
        out = np.full(n_features, np.inf)
        for value, columns in zip(values, groups):
            out[columns] = np.minimum(out[columns], value)
        return out

    def _apply_counts(self, passed, order, use_probes):
        """Apply max_features and min_features to the groups that passed."""
        n_groups = len(passed)
        chosen = passed.copy()
        if self.max_features is not None:
            ranked_passed = [g for g in order if chosen[g]]
            chosen[ranked_passed[self.max_features_ :]] = False
        n_chosen = int(chosen.sum())
        if n_chosen < self.min_features or n_chosen == 0:
            if use_probes:
                detail = (
                    f"only {n_chosen} of {n_groups} features (or groups) beat "
                    f"the probes at alpha={self.alpha} "
                    f"(correction={self.correction!r})"
                )
            else:
                detail = (
                    f"only {n_chosen} of {n_groups} features (or groups) reach "
                    f"threshold={self.threshold!r}"
                )
            kept = (
                f"keeping the {self.min_features} most important because "
                f"min_features={self.min_features}"
                if n_chosen < self.min_features
                else "min_features=0, so no feature is kept and refit is skipped"
            )
            warnings.warn(
                f"{detail}; {kept}. The model may predict y no better than "
                "chance, or the data are too few: check importances_ and the "
                "model's score.",
                UserWarning,
                stacklevel=4,
            )
            for g in order:
                if chosen.sum() >= self.min_features:
                    break
                chosen[g] = True
        return chosen

    def _explain_failed_shadows(self, exc, X, y, fit_kwargs):
        """Raise a clearer error when the estimator fits X but not X with
        shadow copies of its text columns: a step that selects the text
        columns by name lets their copies through unencoded."""
        found = text_columns_in_error(exc, X) if self.probes == "shadow" else []
        if not found or self.prefit:
            return
        try:
            clone(self._estimator_to_measure(y, 0)).fit(X, y, **fit_kwargs)
        except Exception:  # the estimator fails without probes too: not ours
            return
        name = found[0][0]
        model = "the default estimator"
        if self.estimator is not None:
            model = f"estimator={type(self.estimator).__name__}(...)"
        raise ValueError(
            f"{model} fits X but not X with probes: probes='shadow' adds "
            f"copies of X's columns under new names ({name!r} is copied as "
            f"'probe_<i>_{name}'), and the copies of the text column(s) "
            f"{', '.join(repr(n) for n, _ in found)} reach the model unencoded "
            f"({str(exc).strip().splitlines()[0]}). A step that selects "
            "columns by name (a ColumnTransformer listing them) does not "
            "know the copies. Select the columns by dtype instead, e.g. "
            "make_column_selector(dtype_exclude='number') for the encoder, so "
            "that each copy is encoded as its column is; or use "
            "probes='normal' (probes that copy no column)."
        ) from exc

    def _measure(self, estimator, method, X, y, fit_kwargs, options, cv, progress):
        """The importance result over real and probe columns, and the model
        fitted on them (None when several were fitted)."""
        if method is None:
            return measure_model_importances(
                estimator,
                self.importance_getter,
                X,
                y,
                fit_kwargs=fit_kwargs,
                labels=options["labels"],
                groups=options["groups"],
                prefit=self.prefit,
                progress=progress,
            )
        result, model = measure_importances(
            estimator,
            method,
            X,
            y,
            fit_kwargs=fit_kwargs,
            options=options,
            prefit=self.prefit,
            cv=cv,
            max_samples=self.max_samples,
            progress=progress,
        )
        if not isinstance(result, Bunch):  # a dict of them, one per metric
            raise ValueError(
                f"scoring={self.scoring!r} returned several metrics "
                f"({sorted(result)}); ImportanceSelector selects on one "
                "importance per feature, so it needs a scoring that returns "
                "one number. Pick one metric, or call the importance "
                "function directly to compare several."
            )
        return result, model

    def _refit(self, estimator, X, y, fit_kwargs):
        X_selected = _select_columns(X, self.support_)
        try:
            return clone(estimator).fit(X_selected, y, **fit_kwargs)
        except (KeyError, ValueError) as exc:
            if not isinstance(estimator, Pipeline):
                add_note(exc, _refit_note(self.support_))
                raise
            raise ValueError(
                f"refit=True: fitting the Pipeline on the {int(self.support_.sum())} "
                f"selected columns failed ({exc}). A step that lists columns by "
                "name needs them all; select columns with make_column_selector, "
                "or pass refit=False and put the model after the selector."
            ) from exc
        except Exception as exc:
            add_note(exc, _refit_note(self.support_))
            raise

    # ------------------------------------------------------------------
    # delegation to the refitted estimator

    @explain_input_errors
    def _selected_input(self, X):
        """X checked against fit and reduced to the selected columns, in the
        container the estimator was refitted on."""
        check_is_fitted(self)
        frame = is_dataframe(X)
        allow_nan = get_tags(self).input_tags.allow_nan
        X = validate_data(
            self,
            X,
            reset=False,
            dtype=None,
            ensure_all_finite=not allow_nan,
            skip_check_array=frame,
        )
        if frame and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input."
            )
        return _select_columns(X, self.support_)

    def transform(self, X):
        """Reduce X to the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        X_selected : ndarray or DataFrame of shape (n_samples, n_selected)
        """
        check_is_fitted(self)
        return transform_checking_names(self, X, super().transform)

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        X = self._selected_input(X)
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._selected_input(X)
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log of the class probabilities of ``estimator_`` on the selected
        features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._selected_input(X)
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        X = self._selected_input(X)
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("score"))
    def score(self, X, y, **score_params):
        """Score of ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        **score_params : dict
            Passed to the estimator's ``score`` (e.g. ``sample_weight``).

        Returns
        -------
        score : float
        """
        X = self._selected_input(X)
        return self.estimator_.score(X, y, **score_params)

    @property
    def classes_(self):
        """Class labels of ``estimator_`` (classifiers only)."""
        check_is_fitted(self)
        return self.estimator_.classes_
