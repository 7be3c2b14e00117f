"""ImportanceSelector: keep the features that beat random probes."""

import numbers
import warnings
from copy import deepcopy
from functools import partial

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_is_fitted

from .._utils._compat import (
    Interval,
    RealNotInt,
    StrOptions,
    check_sample_weight,
    fit_context,
)
from .._utils._progress import Progress
from .._utils._random import MAX_SEED
from .._utils._validation import (
    check_fitted_inputs,
    discard_fit_on_error,
    explain_input_errors,
)
from ._base import BaseImportanceSelector, default_estimator
from ._deciding._composed import arm, composed_tests, contribution_method
from ._deciding._decisions import (
    TooFewPassed,
    check_min_features,
    fit_cause,
    max_features_count,
    say_once,
    select,
)
from ._deciding._probe_test import CORRECTIONS
from ._deciding._score_cost import (
    ScoreGuard,
    recovers,
    selection_cost,
    warn_if_selection_costs,
)
from ._deciding._tentative import tentative_choice
from ._measuring._budget import measure_repeats, measure_rows
from ._measuring._measure import check_importance_getter, measure_step
from ._measuring._pipeline_probes import selects_through
from ._measuring._probes import N_PROBES
from ._measuring._round_models import round_model
from ._modes import mode_of
from ._plan import Plan, round_design, tested_columns
from ._rows import INDEPENDENT, row_structure

PROBE_KINDS = ("shadow", "uniform", "normal")


def probes_through(probes, estimator, method):
    """Whether a Pipeline ``estimator`` transforms each shadow probe as its
    column (``_pipeline_probes.py``): it selects columns through its steps,
    and ``method`` fits the model (drop-column refits without columns, which
    a probe cannot follow; ``method`` None: ``importance_getter``)."""
    return (
        probes == "shadow"
        and selects_through(estimator)
        and (method is None or method.fits_model)
    )


class ImportanceSelector(BaseImportanceSelector):
    """Keep the features whose importance beats random probe columns.

    ``fit`` appends probe columns to X (shuffled copies of the features by
    default), drawn once, and runs up to ``n_rounds`` rounds, each fitting
    the estimator with a fresh seed and measuring every column by
    ``method``. A feature is kept when its mean importance over the rounds
    beats the probes of features like it, by a test corrected for the
    number of features. ``transform`` and ``estimator_`` never see probes.

    Read more in the :ref:`User Guide <selector>`; :doc:`/probe_test` states
    the test, :doc:`/bench_calibration` its error rates, :doc:`/bench_power`
    its power beside BorutaPy, :doc:`/bench_field` each method's cost.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The model measured: a classifier, regressor or Pipeline, cloned
        (fitted already with ``prefit=True``). None: RandomForestClassifier
        for class labels (strings, booleans, a category dtype, or at most 10
        distinct whole numbers), RandomForestRegressor otherwise.
    method : {"auto", "mdi", "oob_mdi", "permutation", "oob_permutation", \
            "conditional_permutation", "drop_column", "shap"}, default="auto"
        The importance measured, by the function of that name
        (:ref:`guide <selector_methods>`): "mdi" (tree models), "oob_mdi" (bagged
        trees), "permutation" (any model or Pipeline, on held-out rows: with
        probes, two fixed halves for a boosted model, a fresh 20% each round
        for another, or the splits of ``cv``), "oob_permutation" (bagged
        models), "conditional_permutation" (a column replaced by a draw
        given the others, on held-out rows), "drop_column" (a refit without
        the column), "shap" (tree models, on held-out rows). "auto":
        "oob_mdi" for bagged trees ("oob_permutation" for X with missing
        values before scikit-learn 1.8, and for other bagged models), else
        "permutation"; for LightGBM, XGBoost or CatBoost alone,
        "permutation" and "shap" on the same fits, each tested at
        ``alpha / 2``, keeping what either confirms (``tests_``).
    threshold : "probes", "stability", float or str, default="probes"
        "probes": keep the features that beat the probes. "stability":
        stability selection, for many more columns than rows and
        independent rows: no probes; a feature is kept when among the ``q``
        largest positive importances (``q`` set by ``pfer``) in at least 60%
        of ``n_rounds`` pairs of complementary halves of the rows. A float:
        keep the mean importances at least this (``-np.inf``: all, for
        ``max_features`` alone); "mean", "median" or e.g. "1.5*mean": that
        statistic of them. Changing a selection parameter after ``fit``
        makes ``transform`` raise until the next ``fit``.
    probes : {"shadow", "uniform", "normal"}, default="shadow"
        Probe columns: shuffled copies of the features (their distribution
        and cardinality, which matter for MDI), or uniform or normal noise.
    n_probes : "auto" or int, default="auto"
        Number of probes (probe groups, with ``groups``). "auto": one per
        feature or group, at least 50, four times that for a scikit-learn
        linear model, more for a kind of feature short of shadows on 50
        features or more. With 20 or fewer, no p-value goes below
        ``1 / (n_probes + 1)`` (:doc:`/probe_test`).
    n_rounds : "auto" or int, default="auto"
        With probes, the most rounds, each a fit with a fresh seed from
        ``random_state`` (replacing one fixed on the estimator; the refit
        keeps it); they stop at half when every feature is settled
        (``n_rounds_``), and below four the test looks once. "auto": 10, 1
        for "drop_column". With "stability": pairs of halves, "auto" 25.
    round_trees : "auto", int or None, default="auto"
        Trees a round fits for a bagged ensemble (RandomForest, ExtraTrees,
        Bagging, alone or ending a Pipeline): "auto" 30% of ``n_estimators``
        rounded up, at least 30 (all below 30); an int that many; None all.
        "auto" measures a boosted model cut where it scores best on the rows
        measured (at least 30% of its iterations), None as fitted. The refit
        keeps every tree; other models are fitted as given.
    keep_tentative : bool, "auto" or "cv", default="auto"
        Keep the "tentative" features (``decisions_``) too: all (True), none
        (False), or "cv": nested sets of them by significance, scored on the
        splits of ``cv``, the smallest within one standard error of the best.
        "auto": none, unless the kept features lose over 5% of what all gain
        over a constant (``selection_score_``); then features join by
        significance until they lose at most that on the same halves. What
        it adds is outside the promise of ``alpha``: the default forest kept
        noise in 1 of 75 null data sets (:doc:`/bench_default_nulls`).
    alpha : float in (0, 1), default=0.05
        Level of the test: with "fdr_bh", the expected share of noise among
        the kept features; with "holm" or "bonferroni", the chance of keeping
        any. At 0.05 the default forest's false discovery rate was at most
        5.0%, and Holm's family-wise error at most 6.2% (1 of 16 data sets),
        on each regime of independent rows of :doc:`/bench_calibration`.
    correction : {"fdr_bh", "holm", "bonferroni"} or None, default="fdr_bh"
        Adjustment of the p-values for the features (or groups) tested:
        Benjamini-Hochberg's false discovery rate, Holm's or Bonferroni's
        family-wise error rate (fewer kept); None tests each alone.
    pfer : float > 0, default=1.0
        With ``threshold="stability"``, the bound on the expected number of
        noise features kept (exchangeable, no likelier to be selected than
        at random), which sets ``q``: ``q**2 / (0.2 * n_features) <= pfer``.
        No noise was kept in either wide null regime's 60 data sets
        (:doc:`/bench_calibration`).
    n_repeats : "auto" or int, default="auto"
        Permutations (or conditional draws) per feature in each measure.
        "auto": one per round of probes (the rounds repeat), five without.
    groups : None, "auto", list or dict, default=None
        Groups of features (columns) selected whole, as in
        :func:`permutation_importance`: permuted or dropped as a block, or
        their columns' importances summed, each shadow a whole group; a kept
        group keeps its columns (``groups_``), and ``alpha`` bounds groups.
        "auto": :func:`feature_groups` of X. None: each feature alone, but
        with probes a forest groups numeric columns correlated at
        ``|rho| >= 0.9``, a linear model measured by permutation at 0.7
        (:ref:`common_cases`). The rows' groups go to ``fit(groups=...)``.
    scoring : str, callable or None, default=None
        The scorer of the permutation and drop-column methods,
        ``keep_tentative``'s cross-validation and ``selection_score_``.
        None: log-loss for a classifier with ``predict_proba``, the Brier
        score for a bagged forest on a binary target of numeric labels, the
        estimator's ``score`` otherwise (:ref:`round-cost` says why).
    cv : int, cross-validation generator, iterable or None, default=None
        Splits for the methods that score held-out rows or refit (None: as
        under ``method``, a 20% split without probes, out of bag or a 20%
        split for "drop_column"), and for ``keep_tentative="cv"`` (None:
        5-fold, stratified for a classifier). A group-aware splitter
        gets the rows' groups from ``fit(groups=...)``; with them or a
        time-ordered splitter, shadows keep the rows' dependence and "auto"
        is permutation on the cv's held-out rows (:doc:`/probe_test`).
    max_features : int, float, callable or None, default=None
        Keep at most this many features (or groups), the most significant
        first: a float, this fraction; a callable, given X, returns the
        count, as in SelectFromModel. 0 keeps none (``min_features=0``).
    min_features : int, default=1
        Keep at least this many features (or groups), the most significant
        first, even when fewer pass; a warning says so.
    prefit : bool, default=False
        Whether ``estimator`` is fitted: ``fit(X, y)`` measures it as it is,
        on validation rows for "permutation", training rows out of bag.
        It has seen no probes: it needs a numeric, "mean" or "median"
        threshold, and not "drop_column".
    refit : bool, default=True
        Fit a clone of the estimator on the selected features as
        ``estimator_``, to which ``predict`` and the others delegate (not
        with ``prefit=True``). False saves that fit before the model.
    max_samples : "auto", int, float or None, default="auto"
        Rows the permutation, conditional and SHAP methods score at most (a
        float: this fraction), drawn afresh each round; the model is fitted
        on all rows. "auto": 10,000 a round of probes (256 for "shap"), all
        without probes. None: all rows.
    importance_getter : "auto", str, callable or None, default=None
        Read the model's own importances, as SelectFromModel does: "auto"
        ``coef_`` or ``feature_importances_``, a string an attribute path
        (``"named_steps.ridge.coef_"``), a callable ``getter(estimator)``;
        a coefficient matrix gives each column's L1 norm. Mostly with
        ``prefit=True``; ``method`` must then be "auto". None: use ``method``.
    n_jobs : int or None, default=None
        Parallel jobs (joblib's semantics); the results do not depend on it.
    verbose : int, default=0
        Progress messages on stderr: a line per stage of ``fit``.
    random_state : int, RandomState instance or None, default=None
        Seed of the probes, the splits and the permutations, also given to
        every ``random_state`` of the estimator left at None.

    Attributes
    ----------
    estimator_ : estimator
        With ``refit=True``, the estimator fitted on the selected features
        (None if none); with ``refit=False``, the one fitted with the probes
        and measured (None where several were; "stability": the last
        half's); with ``prefit=True``, a copy of the given estimator.
    method_ : str
        The method used ("auto" resolved), or "importance_getter".
    importances_ : Bunch
        The importance function's result for the features (or groups), then
        the probes, with ``is_probe``, ``n_probes``, ``statistics`` and
        ``pvalues`` (None without probes); with probes one column per round,
        ``n_rounds``, ``mirrors`` (the feature each probe copied, -1 for
        noise) and ``classes``; "stability": one column per half.
    threshold_ : float
        The score a feature needed at the last look (its mean importance
        above its probes', in their standard deviations); "stability": the
        frequency needed (0.6); without probes, the mean importance.
    n_rounds_ : int
        Rounds of probes run, or pairs of halves ("stability"); else 0.
    decisions_ : ndarray of str of shape (n_features_in_,) or None
        With probes: "confirmed", "tentative" (beats the probes before the
        correction only) or "rejected", per feature (its group's).
    ranking_ : ndarray of int of shape (n_features_in_,)
        With probes 1 confirmed, 2 tentative, 3, 4, ... rejected by score,
        as BorutaPy's; "stability": 1 kept, then by selection frequency;
        else by mean importance (1 = largest).
    selection_frequency_ : ndarray of shape (n_features_in_,) or None
        With "stability": the share of the halves each feature was kept in.
    importance_history_ : ndarray of shape (n_rounds_, n_groups) or None
        Importance of each feature (or group) in each round (or half).
    probe_history_ : ndarray of shape (n_rounds_, n_probes) or None
        Importance of each probe in each round.
    pvalues_ : ndarray of shape (n_features_in_,) or None
        With probes, each feature's (its group's) unadjusted p-value.
    pvalues_corrected_ : ndarray of shape (n_features_in_,) or None
        After ``correction``: the smallest over the two looks of the look's
        adjusted p-value over its share of ``alpha`` (:doc:`/probe_test`); a
        feature passes at ``alpha`` or less.
    cv_results_ : dict of ndarrays
        Where ``keep_tentative`` chose: the candidates' ``n_features`` and
        ``mean_test_score`` (on the halves with "auto"); with "cv" also
        ``std_test_score`` and ``split{k}_test_score``.
    tests_ : dict of Bunch or None
        With the composed tests of ``method="auto"``: for "permutation" and
        "shap", the share of ``alpha``, ``pvalues``, ``pvalues_corrected``,
        ``decisions`` and ``importance_history``.
    selection_score_ : Bunch or None
        What the selection costs (None with ``prefit=True``): ``kept`` and
        ``all``, the round model's score on the kept and on all features,
        fitted on each of two halves of the rows and scored on the other;
        ``chance``, a constant prediction's; ``lost``, the share of the gain
        over it the kept features lose (warned of above 0.05; None without a
        gain beyond the same predictions against permuted targets: 1 of 500
        noise tables of 100 rows measured one); ``n_fits``; ``scoring``
        (ROC AUC for a classifier with ``predict_proba``); ``n_kept``.
    groups_ : list of ndarray
        Column positions of each group (one feature each without groups).
    max_features_ : int
        The most features (or groups) ``fit`` could keep.
    support_ : ndarray of shape (n_features_in_,)
        Mask of the selected features.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during ``fit``, when they are strings.

    See Also
    --------
    RecursiveImportanceSelector : Recursive elimination, as RFECV.
    sklearn.feature_selection.SelectFromModel : A threshold, no probes.

    Notes
    -----
    The test assumes noise features independent of y and of the other
    features: a noise feature correlated with a relevant one is not noise to
    the model, nor what it rejects (:class:`DependenceAnalyzer`). The
    ``sample_weight`` and routed fit parameters go to the estimator's
    ``fit`` and to the importance's scorer or out-of-bag weights.

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
    array([1, 1, 1, 1, 1, 5, 3, 4, 7, 6])
    >>> selector.transform(X).shape
    (500, 5)
    """

    _selection_parameters = (
        "threshold",
        "alpha",
        "correction",
        "keep_tentative",
        "pfer",
        "max_features",
        "min_features",
    )

    _parameter_constraints = {
        **BaseImportanceSelector._parameter_constraints,
        "threshold": [Interval(numbers.Real, None, None, closed="both"), str],
        "probes": [StrOptions(set(PROBE_KINDS))],
        "n_probes": N_PROBES,
        "n_rounds": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
        ],
        "round_trees": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
            None,
        ],
        "keep_tentative": ["boolean", StrOptions({"auto", "cv"})],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        "correction": [StrOptions(set(CORRECTIONS)), None],
        "pfer": [Interval(numbers.Real, 0, None, closed="neither")],
        "groups": [list, tuple, dict, StrOptions({"auto"}), None],
        "max_features": [
            Interval(numbers.Integral, 0, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            callable,
            None,
        ],
        "min_features": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_repeats": [
            StrOptions({"auto"}),
            Interval(numbers.Integral, 1, None, closed="left"),
        ],
        "max_samples": [
            StrOptions({"auto"}),
            *BaseImportanceSelector._parameter_constraints["max_samples"],
        ],
        "prefit": ["boolean"],
        "refit": ["boolean"],
        "importance_getter": [str, callable, None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        method="auto",
        threshold="probes",
        probes="shadow",
        n_probes="auto",
        n_rounds="auto",
        round_trees="auto",
        keep_tentative="auto",
        alpha=0.05,
        correction="fdr_bh",
        pfer=1.0,
        n_repeats="auto",
        groups=None,
        scoring=None,
        cv=None,
        max_features=None,
        min_features=1,
        prefit=False,
        refit=True,
        max_samples="auto",
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
        self.round_trees = round_trees
        self.keep_tentative = keep_tentative
        self.alpha = alpha
        self.correction = correction
        self.pfer = pfer
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

    def _delegates(self):
        return self.refit and not self.prefit

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
            out-of-bag averages): with ``cv``, each split's model is fitted
            with its training rows' weights and scored with its held-out
            rows'. With metadata routing enabled
            (``sklearn.set_config(enable_metadata_routing=True)``), each goes
            where the estimator, the scorer and the splitter of ``cv``
            request it.

        Returns
        -------
        self : ImportanceSelector
            The fitted selector.
        """
        # validate once, route the parameters, draw every seed up front
        X, y, feature_names = self._check_X_y(X, y)
        fit_kwargs, score_weight, split_kwargs = self._routed_params(groups, fit_params)
        rng = check_random_state(self.random_state)
        seed, probe_seed, importance_seed = rng.randint(MAX_SEED + 1, size=3)
        seeds = (seed, importance_seed)
        plan = self._plan(
            X, y, feature_names, fit_kwargs, split_kwargs, score_weight, seeds
        )

        # measure: rounds of probes, pairs of halves, or one measure
        result, model, history = plan.mode.run(plan, X, y, fit_kwargs, probe_seed)

        # decide (keep_tentative="cv": by cross-validation), score what the
        # selection costs on held-out halves; "auto": decide by
        # cross-validation where it costs more than SCORE_LOSS
        cause = fit_cause(plan, len(y), y)
        decide = partial(self._decide, result, history, plan, X, y, fit_kwargs)
        by_cv = plan.use_probes and self.keep_tentative == "cv"
        auto = self.keep_tentative == "auto" and plan.use_probes
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            decide(
                tentative_choice(plan, X, y, fit_kwargs) if by_cv else None, cause, seed
            )
            n_first_said = len(said)
            if auto and recovers(first := self.selection_score_, self.decisions_):
                kept = [bool(self.support_[g].any()) for g in plan.groups]
                guard = ScoreGuard(plan, X, y, fit_kwargs, seed, first, kept)
                decide(guard, cause, seed, known=first)
                self.selection_score_.n_fits += first.n_fits
            else:  # the first decision's warnings stand
                n_first_said = 0
        # "too few passed" of a first decision the guard replaced is not said
        say_once(
            said, skip=lambda i, w: i < n_first_said and w.category is TooFewPassed
        )
        warn_if_selection_costs(self)
        if self.prefit:
            self.estimator_ = deepcopy(self.estimator)
        elif self.refit and self.support_.any():
            plan.progress(f"refitting on the {int(self.support_.sum())} kept features")
            self.estimator_ = self._refit_selected(plan.estimator, X, y, fit_kwargs)
        else:
            self.estimator_ = None if self.refit else model
        return self

    # ------------------------------------------------------------------
    # prepare

    def _plan(self, X, y, feature_names, fit_kwargs, split_kwargs, score_weight, seeds):
        """The :class:`~._plan.Plan` of this fit, checked before any fit:
        the estimator, the method's registry entry (None with
        ``importance_getter``), cv, the groups, the core's options (with
        ``seeds``' importance seed), the test, the round model, and
        ``measure(estimator, X, y, options)``, which fits where the method
        needs it and measures (``_measure.measure``)."""
        seed, importance_seed = seeds
        estimator, cv, rows, score_weight = self._checked_inputs(
            X, y, split_kwargs, score_weight, int(seed)
        )
        mode = mode_of(self.threshold, self.prefit)
        use_probes = mode.probes
        # how each round (or half) makes its model (_round_models.py)
        rounds_model = round_model(estimator)
        method_for = partial(
            self._method_entry,
            estimator,
            y,
            X,
            prefit=self.prefit,
            dependent_rows=rows.kind != INDEPENDENT,
        )
        if self.importance_getter is not None:
            check_importance_getter(self.importance_getter, self.method)
            self._warn_ignored_parameters(None, dependent_rows=rows.kind != INDEPENDENT)
            method_for = None
        params = self.get_params(deep=False)
        tested = tested_columns(
            rounds_model, method_for, X, y, feature_names, params, use_probes
        )
        method, labels, groups, n_probes, top_up = tested
        max_count = max_features_count(self.max_features, X, len(groups))
        check_min_features(self.min_features, len(groups), self.max_features, max_count)
        progress = Progress(type(self).__name__, self.verbose)
        round_params = rounds_model.round_params(estimator, self.round_trees)
        n_rounds = mode.rounds(self.n_rounds, method)
        design = (rounds_model, estimator, method, cv, rows, y, n_rounds, int(seed))
        round_cv, round_fits, keeps_fits = round_design(*design, probes=use_probes)
        # method="auto" with a booster's own contributions: both tests on the
        # same fits (_composed.py)
        also = contribution_method(
            params, rounds_model, estimator, method, round_cv if use_probes else None, y
        )
        options = dict(
            labels=labels,
            groups=groups,
            sample_weight=score_weight,
            cv=cv,
            **self._measure_options(rounds_model.scoring(estimator, self.scoring, y)),
            n_repeats=measure_repeats(self.n_repeats, mode.sized_for_rounds),
            seed=importance_seed,
        )
        return Plan(
            **self._plan_parameters(),
            n_probes=n_probes,
            top_up=top_up,
            max_count=max_count,
            feature_names=feature_names,
            estimator=estimator,
            method=method,
            method_name="importance_getter" if method is None else method.name,
            cv=cv,
            labels=labels,
            groups=groups,
            options=options,
            mode=mode,
            n_rounds=n_rounds,
            round_fits=round_fits,
            keeps_fits=keeps_fits,
            rows=rows,
            # each round's model: the estimator with every seed drawn afresh
            # (the user's fixed one too, or the rounds would average nothing)
            # and sized for the rounds (a forest's trees; the refit keeps all)
            round_estimator=partial(
                rounds_model.make,
                default_estimator(y) if self.estimator is None else self.estimator,
                params=round_params,
            ),
            probes_through=use_probes
            and probes_through(self.probes, estimator, method),
            progress=progress,
            **self._steps(
                method, rounds_model, round_cv, keeps_fits, also, fit_kwargs, progress
            ),
        )

    def _checked_inputs(self, X, y, split_kwargs, score_weight, seed):
        """``(estimator, cv, rows, score_weight)`` of the plan, each checked
        against the data before any fit: the estimator to measure (seeded
        with ``seed``; a prefit one against the rows it was fitted on), its
        classes, the splits of ``cv`` and the rows' structure
        (``_rows.row_structure``)."""
        if score_weight is not None:
            score_weight = check_sample_weight(score_weight, X)
        self._warn_inferred_target(y)
        estimator = self._estimator_to_measure(y, seed)
        if self.prefit:  # the rows against the model's fit, as predict checks
            check_fitted_inputs(estimator, X, y)
        self._check_classes(estimator, y, prefit=self.prefit)
        cv = self._cv_with_splits(estimator, X, y, split_kwargs)
        rows = row_structure(estimator, None if self.prefit else cv, X, y, split_kwargs)
        return estimator, cv, rows, score_weight

    def _steps(
        self, method, rounds_model, round_cv, keeps_fits, also, fit_kwargs, progress
    ):
        """The plan's ``measure`` (``_measure.measure_step``: fit where the
        method needs it, on the rounds' splits ``round_cv``, and measure)
        and its ``arms``: the ``also`` method measured on the same fits
        (``_composed.py``; None: no arm)."""
        mode = mode_of(self.threshold, self.prefit)
        stop = rounds_model.stopping(self.round_trees) if mode.probes else None
        fits = {} if also is not None else None  # the main step's, shared
        return dict(
            # fit_kwargs: the rows' own, for a subset of the rows (a half)
            measure=measure_step(
                method,
                fit_kwargs=fit_kwargs,
                cv=round_cv,
                max_samples=measure_rows(
                    self.max_samples, mode.sized_for_rounds, method
                ),
                prefit=self.prefit,
                getter=self.importance_getter,
                progress=progress,
                keep_fits=keeps_fits,
                stop=stop,
                fits=fits,
            ),
            arms=()
            if also is None
            else (
                arm(
                    also,
                    self.max_samples,
                    fit_kwargs=fit_kwargs,
                    cv=round_cv,
                    progress=progress,
                    stop=stop,
                    fits=fits,
                ),
            ),
        )

    def _plan_parameters(self):
        """The plan's fields the selector's parameters give as they are."""
        return {
            "given_estimator": self.estimator,
            "probes": self.probes,
            "alpha": self.alpha,
            "correction": self.correction,
            "prefit": self.prefit,
            "scoring": self.scoring,
            "n_jobs": self.n_jobs,
            # a ColumnTransformer listing columns lists the candidates
            "column_names": getattr(self, "feature_names_in_", []),
        }

    def _measure_options(self, scoring):
        """The core's options the selector's parameters give as they are;
        ``scoring`` is the round model's (a proper scoring rule for a
        classifier with probabilities unless the user chose one: log-loss,
        or Brier for a bagged model's vote shares on a binary target)."""
        return {
            "scoring": scoring,
            "n_jobs": self.n_jobs,
            "verbose": self.verbose,
            "centre_target": True,
        }

    def _estimator_to_measure(self, y, seed):
        """The estimator to fit (a clone, its unset seeds set to ``seed``),
        or the fitted one with ``prefit=True``."""
        if not self.prefit:
            return self._estimator_to_fit(y, seed)
        if self.estimator is None:
            raise ValueError(
                "prefit=True selects with a model you already fitted, and "
                "estimator=None gives none. Pass the fitted estimator, or "
                "prefit=False."
            )
        try:
            check_is_fitted(self.estimator)
        except NotFittedError as exc:
            raise NotFittedError(
                f"prefit=True measures the estimator as it was fitted, and this "
                f"{type(self.estimator).__name__} is not fitted yet. Fit it "
                "first and pass the fitted model (prefit=True is for a model "
                "trained elsewhere), or pass prefit=False and the selector "
                "fits it."
            ) from exc
        return self.estimator

    def _selector_parameters(self):
        # selection_score_ (not with prefit) scores with scoring, and
        # keep_tentative="cv" (or "auto") on cv's splits, whatever the method
        cv = ("cv",) if self.keep_tentative in ("auto", "cv") else ()
        return (*(() if self.prefit else ("scoring",)), *cv)

    def _decide(
        self, result, history, plan, X, y, fit_kwargs, choose, cause, seed, known=None
    ):
        """The decisions as fitted attributes (``choose``: what chooses
        among the features the test did not confirm, ``keep_tentative="cv"``'s
        cross-validation or "auto"'s score guard; None) and what they cost
        (``selection_score_``; None with ``prefit``; ``known``: the cost of
        an earlier decision, whose score on all features is reused)."""
        self._set_selection(result, history, plan, X.shape[1], choose, cause)
        self._record_selection_parameters()
        plan.progress(f"kept {int(self.support_.sum())} of {X.shape[1]} features")
        self.selection_score_ = None
        chosen = getattr(choose, "cost", None)
        if chosen is not None and np.array_equal(self.support_, choose.support):
            # the guard scored this support (no refit)
            self.selection_score_ = Bunch(**{**chosen, "n_fits": choose.n_fits})
        elif not self.prefit:
            self.selection_score_ = selection_cost(
                plan, X, y, self.support_, fit_kwargs=fit_kwargs, seed=seed, known=known
            )
            self.selection_score_.n_fits += getattr(choose, "n_fits", 0)

    def _set_selection(self, result, history, plan, n_features, choose, cause):
        """The decisions (``_decisions.select``) as fitted attributes."""
        test = plan.mode.test(self, plan, choose)
        selection = select(
            result,
            history,
            plan.groups,
            n_features,
            test=test,
            max_features=None if self.max_features is None else plan.max_count,
            min_features=self.min_features,
            cause=cause,
        )
        if choose is not None:
            self.cv_results_ = choose.cv_results
        elif hasattr(self, "cv_results_"):
            del self.cv_results_  # from an earlier fit with keep_tentative="cv"
        # each composed test's own p-values and decisions, per feature
        self.tests_ = composed_tests(test, plan.groups, n_features)
        self.max_features_ = plan.max_count
        self.method_ = plan.method_name
        self.importances_ = result
        self.groups_ = plan.groups
        for name, value in selection.items():
            setattr(self, f"{name}_", value)
        # rounds of probes run, or pairs of halves (stability selection)
        self.n_rounds_ = plan.mode.rounds_run(plan, history)
        self.importance_history_ = None if history is None else history.real
        self.probe_history_ = None if history is None else history.probes
