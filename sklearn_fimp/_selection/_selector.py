"""ImportanceSelector: keep the features that beat random probes."""

import numbers
import warnings
from copy import deepcopy
from functools import partial

from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
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
from ._budget import measure_repeats, measure_rows
from ._composed import arm, composed_tests, contribution_method
from ._decisions import (
    TooFewPassed,
    check_min_features,
    fit_cause,
    max_features_count,
    select,
)
from ._measure import check_importance_getter, measure_step
from ._modes import mode_of
from ._pipeline_probes import selects_through
from ._plan import Plan, round_design, tested_columns
from ._probe_test import CORRECTIONS
from ._probes import N_PROBES
from ._round_models import round_model
from ._rows import INDEPENDENT, row_structure
from ._score_cost import (
    ScoreGuard,
    recovers,
    selection_cost,
    warn_if_selection_costs,
)
from ._tentative import tentative_choice

PROBE_KINDS = ("shadow", "uniform", "normal")


class ImportanceSelector(BaseImportanceSelector):
    """Keep the features whose importance beats random probe columns.

    ``fit`` appends probe columns to X (shuffled copies of the features by
    default), drawn once and held fixed, and runs ``n_rounds`` rounds: each
    fits the estimator with a fresh seed and measures every column's
    importance with one of this package's importance functions. A feature
    is kept when its mean importance over the rounds beats the probes' by a
    statistical test. Probes never leave ``fit``: ``transform`` and the
    fitted ``estimator_`` see the real features only.

    The test compares each feature's mean importance over the rounds with
    the probe means of features like it (as many distinct values), and
    corrects the p-values for the number of features: by default
    Benjamini-Hochberg's procedure, which bounds the expected share of
    noise among the kept features by ``alpha``. ``decisions_`` says per
    feature "confirmed", "tentative" (beats the probes only before the
    correction) or "rejected"; ``ranking_`` is 1, 2 and 3, 4, ... for them,
    as BorutaPy's. :ref:`The user guide <selector_methods>` describes the
    test, the decisions and what each default measures;
    ``docs/probe_test.rst`` states the test, ``docs/bench_calibration.rst``
    its error rates where the truth is known, ``docs/bench_power.rst`` its
    power beside BorutaPy, and ``docs/bench_field.rst`` what each method
    costs in plain fits of the model.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The model whose importances are measured: a classifier, regressor
        or Pipeline (cloned; with ``prefit=True``, an already fitted one).
        None: a RandomForestClassifier for class labels (strings, booleans,
        a category dtype, or at most 10 distinct whole numbers), a
        RandomForestRegressor otherwise (scikit-learn's defaults; a y of
        more than 10 distinct whole numbers is warned of, since ids of many
        classes look the same), with 30
        trees in each round of probes (``round_trees="auto"``) and the
        default 100 in the refit. What ``fit`` costs, in plain fits of the
        model, is on ``docs/bench_power.rst`` and
        ``docs/bench_field.rst``.
    method : {"auto", "mdi", "oob_mdi", "permutation", "oob_permutation", \
            "conditional_permutation", "drop_column", "shap"}, default="auto"
        How importance is measured.

        - "mdi": mean decrease in impurity (:func:`mdi_importance`); tree
          models only. Biased towards high-cardinality features, which
          shadow probes compensate for.
        - "oob_mdi": MDI re-scored on out-of-bag rows
          (:func:`oob_mdi_importance`); bagged trees with bootstrap.
        - "permutation": score drop when a column is permuted in rows held
          out of the fit (:func:`permutation_importance`): with probes,
          for a boosted model two fixed halves, each measured on the model
          fitted on the other (fitted once when its fit is deterministic),
          for another model a fresh 20% each round; or every split of
          ``cv``. Any model or Pipeline (a Pipeline's raw input columns
          are permuted).
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
          "permutation" (:func:`shap_importance`): LightGBM's, XGBoost's
          and CatBoost's own TreeSHAP, or for scikit-learn's tree models
          shap's TreeExplainer (the optional ``shap`` package).
        - "auto": "oob_mdi" for bagged trees with bootstrap ("oob_permutation"
          when ``groups`` is given, or when X has missing values and
          scikit-learn is older than 1.8), "permutation" otherwise. For
          LightGBM, XGBoost or CatBoost alone (no ``groups``, ``cv`` or
          ``importance_getter``), "permutation" and "shap" on the same
          fits, each tested at ``alpha / 2``, keeping what either confirms
          (``tests_``): redundant columns stand in for each other under
          permutation, and contributions credit each one the model uses.

    threshold : "probes", "stability", float or str, default="probes"
        "probes": keep the features that pass the test above. "stability":
        stability selection, for many more columns than rows where a few
        features carry the signal: each of ``n_rounds`` rounds fits the
        estimator on each of two complementary random halves of the rows
        and measures the importances there by ``method``; a feature is
        selected in a half when its importance is positive and among the
        ``q`` largest, and kept when selected in at least 60% of the halves
        (``selection_frequency_``). ``q`` is the largest count for which
        Meinshausen and Buehlmann's bound on the expected number of noise
        features kept, ``q**2 / (0.2 * n_features)``, is at most ``pfer``,
        about ``sqrt(pfer * n_features / 5)``; no probes are added. It keeps
        few features where the signal is spread over many correlated
        columns (each gets a share of the importance and few stay in the
        top ``q``), and needs independent rows (grouped or time-ordered
        rows, said by ``cv`` and ``fit(groups=...)``, are an error).
        A float: keep
        features whose mean importance is at least this value
        (``-np.inf`` keeps every feature, so that ``max_features`` alone
        selects, as in SelectFromModel). "mean", "median" or a scaled one
        such as "1.5*mean": that statistic of the features' mean importances
        (no probes are added). The selection is made in ``fit``: changing
        ``threshold`` (or ``alpha``, ``correction``, ``keep_tentative``,
        ``pfer``, ``max_features``, ``min_features``) after ``fit`` makes
        ``transform`` and ``predict`` raise until ``fit`` is called again
        (SelectFromModel reads its threshold again at ``transform``; here
        ``estimator_`` was refitted on the selection). Importances that are
        NaN (a scorer or ``importance_getter`` that returned NaN) are an
        error: no threshold or test can rank them.
    probes : {"shadow", "uniform", "normal"}, default="shadow"
        Kind of probe column: shuffled copies of the features (keeping their
        distribution, dtype and cardinality, which matters for MDI), or
        uniform or standard normal noise.
    n_probes : "auto" or int, default="auto"
        Number of probes (probe groups, with ``groups``), the same columns
        in every round. "auto": one per feature (or group), and at least 50;
        four times that for a scikit-learn linear model, whose columns cost
        little to fit and measure and whose test needs the resolution; on
        50 features or more, more for a kind of feature with too few shadows
        of its own (``docs/probe_test.rst``). The test's null distribution
        is the probes' means: with fewer, more of its tail is extrapolated,
        and with 20 or fewer no p-value goes below ``1 / (n_probes + 1)``.
    n_rounds : "auto" or int, default="auto"
        With ``threshold="stability"``: the pairs of complementary halves
        (two fits of the estimator on half of the rows each), 25 with
        "auto". With probes: the most rounds: each refits the estimator with
        a fresh seed drawn from ``random_state`` (in place of an integer
        ``random_state`` the estimator was given, with which every round
        would fit the same model; the refit keeps it), or, for "permutation"
        and "drop_column", does what one measure does, so ``fit`` costs
        about ``n_rounds`` times one measure. More rounds average more of
        the model's randomness out of the features' means and help weak
        features; the rounds stop at half of them when every feature is
        settled there (``n_rounds_`` says how many ran). Below four rounds
        the test looks once, at the end. "auto": 10, and 1 for
        "drop_column", whose one round refits the model once per feature and
        probe (what :func:`drop_column_importance` costs alone, about).
    round_trees : "auto", int or None, default="auto"
        Trees fitted in each round of probes (each half, with "stability")
        when the estimator is a bagged
        ensemble (RandomForest, ExtraTrees or Bagging, alone or as a
        Pipeline's last step); the refit on the selected features keeps all
        of them, and other estimators are fitted as given. A bagged model's
        importance is an average over independent trees, so the rounds share
        its trees out instead of each fitting all of them. "auto": 30% of
        ``n_estimators``, rounded up, and at least 30 (all of them below
        30). None: every round fits all of them. An int: that many.
        For a boosted model (HistGradientBoosting, LightGBM, XGBoost or
        CatBoost, alone or ending a Pipeline), "auto" measures each half's
        model cut at the number of iterations that scores best on the half
        it is measured on (at least 30% of them), as if it had
        stopped early there: its later iterations fit what is left of its
        training rows, mostly noise on a small or imbalanced table, and the
        probes it splits on there blur the test (with a scoring that adds up
        over rows, as the default does). None: as fitted. The refit keeps
        all its iterations.
    keep_tentative : bool, "auto" or "cv", default="auto"
        Keep the "tentative" features (see ``decisions_``) as well as the
        confirmed ones: all of them (True), none (False), or those a
        cross-validated score asks for ("cv"): the estimator, fitted as the
        refit fits it on the confirmed features and on them with the first
        1, 2, 4, ... and all of the tentative ones by significance, is
        scored on the splits of ``cv`` (5-fold when None) with ``scoring``,
        and the smallest set within one standard error of the best is kept
        (``cv_results_``). "auto": "cv" where the confirmed features lose
        more than 10% of what all features score above a constant
        prediction (``selection_score_``), False elsewhere. A feature kept
        beyond the confirmed ones beats the probes on its own; the choice
        among them makes no error promise (docs/bench_field.rst).
    alpha : float in (0, 1), default=0.05
        Level of the test: with the default correction, the expected share
        of features no better than the probes among the kept ones; with
        "holm" or "bonferroni", the probability of keeping any of them.
    correction : {"fdr_bh", "holm", "bonferroni"} or None, default="fdr_bh"
        Adjustment of the p-values for testing many features (or groups):
        Benjamini-Hochberg's false discovery rate, or the family-wise
        error rate of Holm's or Bonferroni's method (fewer features kept,
        a stronger promise); None tests each feature alone.
    pfer : float > 0, default=1.0
        With ``threshold="stability"``: the bound on the expected number of
        noise features (or groups) kept, which also bounds the probability
        of keeping any. The bound holds for noise features that are
        exchangeable and no likelier to be selected than a random choice;
        the noise columns kept on data where the truth is known are on
        ``docs/bench_calibration.rst``. Ignored otherwise.
    n_repeats : "auto" or int, default="auto"
        Permutations (or conditional draws) per feature in each measure of
        the permutation methods. "auto": one per round of probes (the
        rounds already repeat, each with a fresh model, and the test
        averages them; five would cost five times as much for the same
        test), five without probes.
    groups : None, "auto", list or dict, default=None
        Groups of *features* (columns), not of rows: the rows' groups of a
        group-aware ``cv`` are ``fit(X, y, groups=...)``.
        Select whole groups of features (as in
        :func:`permutation_importance`; features no group mentions are
        groups of their own). Permutation methods permute a group as a
        block, drop-column drops it, MDI, MDI-oob and SHAP sum its columns'
        importances; probes then mirror the groups (a shadow probe is a
        whole group shuffled together). None: each feature alone, but with
        the probes a forest (alone or ending a Pipeline) tests
        numeric columns correlated at ``|rho| >= 0.9`` as groups
        (near-duplicates share what they carry), and a scikit-learn linear
        model tested with
        permutation those at ``|rho| >= 0.7`` (:func:`feature_groups`:
        permuting one of a correlated pair makes rows its coefficients
        extrapolate to); the user guide says what each measured.

        A kept group keeps all its columns (``groups_``), and the promise of
        ``alpha`` is over groups. ``groups=[[j] for j in range(n_features)]``
        tests every column alone.
    scoring : str, callable or None, default=None
        Scorer of the permutation and drop-column methods, of
        ``keep_tentative``'s cross-validation and of ``selection_score_``.
        None: log-loss for a classifier with ``predict_proba`` (a proper
        scoring rule: it moves with every row's probability), the Brier
        score for a forest's vote shares on a binary target of numeric
        labels (log-loss prices a vote share of 0 without bound), the
        estimator's ``score`` otherwise. One metric, as for RFECV.
    cv : int, cross-validation generator, iterable or None, default=None
        Splits for "permutation" and "drop_column", and for
        ``keep_tentative="cv"``'s scores (5-fold, stratified for
        classifiers, when None). None is, for "permutation", the splits
        above (a 20% split without probes), and for "drop_column" the
        out-of-bag score or a 20% split. A group-aware splitter
        (GroupKFold) gets the rows' groups from ``fit(X, y, groups=...)``.
        With a time-ordered cv (TimeSeriesSplit) or the rows' groups,
        shadows keep the rows' dependence and "auto" measures on the cv's
        held-out rows (the user guide's "Time-ordered and grouped rows").
        An iterable of splits is read once per fit, as ``check_cv`` reads
        it, and its splits are taken as independent rows unless ``fit``
        gets the rows' groups; time order is read from the splits.
        threshold="stability" with a method that splits needs a splitter.
    max_features : int, float, callable or None, default=None
        Keep at most this many features (a float: this fraction of them),
        the most significant first. A callable is called with X (as
        validated by ``fit``, before probes are added) and returns that
        int, as in SelectFromModel. Counted in groups when ``groups`` is
        given. The count used is ``max_features_``. 0 keeps no feature, as
        in SelectFromModel, and needs ``min_features=0``; a ``min_features``
        above ``max_features_`` is an error.
    min_features : int, default=1
        Keep at least this many features (or groups), the most significant
        first, even when fewer pass the threshold; a warning says so, and
        how many of the features left out are tentative.
    prefit : bool, default=False
        Whether ``estimator`` is already fitted. ``fit(X, y)`` then measures
        its importances without refitting: X, y are validation rows for
        "permutation", its training rows for the out-of-bag methods, and
        only checked against the model's columns by "mdi". A prefit model
        has never seen probe columns, so it needs a numeric, "mean" or
        "median" threshold; "drop_column" refits
        by definition and cannot be used. X must have the columns the model
        was fitted on, in the same order (as its ``predict`` checks); a
        model that is not fitted is an error.
    refit : bool, default=True
        Fit a clone of the estimator on the selected features as
        ``estimator_``, to which ``predict``, ``predict_proba``,
        ``predict_log_proba``, ``decision_function`` and ``score`` delegate
        (``is_classifier`` and the other estimator tags follow the
        estimator, as for RFE). Ignored with
        ``prefit=True``. In a Pipeline whose next step is the model, set it
        to False to save that fit.
    max_samples : "auto", int, float or None, default="auto"
        Score the permutation, conditional and SHAP importances on at most
        this many rows (a float: this fraction of them), drawn without
        replacement with ``random_state`` from the held-out rows (or the
        training rows, out of bag), afresh in each round; the model is
        still fitted on all rows. None: all rows. "auto": at most 10,000
        rows in each round of probes (256 for "shap", whose exact values
        cost milliseconds per row), all rows without probes. On large
        data, some ten thousand rows rank features about as all rows do,
        for a fraction of the time. Methods that score no rows ignore it,
        with a warning.
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
        split; None when several models were fitted: with "drop_column",
        a ``cv`` of several splits, or two cross-fitted halves); with
        "stability", the last half's model, fitted on half of the rows.
        With ``prefit=True``, a copy of the given estimator.
    method_ : str
        The method used ("auto" resolved), or "importance_getter".
    importances_ : Bunch
        The importance function's result for the real features (or groups)
        followed by the probes, with ``is_probe`` (bool mask),
        ``n_probes``, ``statistics`` (the scores of the test) and
        ``pvalues`` added (the last two None without probes). With probes,
        ``importances`` has one column per round (the k-th probe row holds
        the k-th probe of each round, the same column in every round), and
        ``n_rounds`` (those run), ``mirrors`` (n_rounds, n_probes: the
        feature or group each probe copied, -1 for uniform and normal
        probes) and ``classes`` (each one's kind, whose shadows standardize
        it) are added. With "stability": the real features only, one
        column per half (the mean importance there).
    threshold_ : float
        For "probes": the score (a feature's mean importance over the rounds
        above its probes' mean, in units of their standard deviation) above
        which a feature was confirmed at the last look, at the level reached
        by the correction, against all probes' scores. Otherwise the mean
        importance above which a feature was kept; for "stability", the
        selection frequency a feature needed (0.6).
    n_rounds_ : int
        Rounds of probes run: ``n_rounds``, or half of it when every feature
        was settled at the first look; for "stability", the pairs of halves;
        0 otherwise.
    decisions_ : ndarray of str of shape (n_features_in_,) or None
        "confirmed", "tentative" or "rejected" per feature (its group's,
        with ``groups``); None unless ``threshold="probes"``. ``support_``
        may differ where ``max_features``, ``min_features`` or
        ``keep_tentative`` apply.
    ranking_ : ndarray of int of shape (n_features_in_,)
        With probes: 1 confirmed, 2 tentative, 3, 4, ... rejected by
        decreasing score. With "stability": 1 kept, then 2, 3, ... by
        decreasing selection frequency (and mean importance). Otherwise the
        rank of the mean importance (1 = largest).
    selection_frequency_ : ndarray of shape (n_features_in_,) or None
        With ``threshold="stability"``: the share of the halves each
        feature (its group, with ``groups``) was selected in; a feature is
        kept at 0.6 or more. None otherwise.
    importance_history_ : ndarray of shape (n_rounds_, n_groups) or None
        Importance of each feature (or group) in each round of probes; with
        "stability", in each half (``2 * n_rounds_`` rows).
    probe_history_ : ndarray of shape (n_rounds_, n_probes) or None
        Importance of each probe in each round.
    pvalues_ : ndarray of shape (n_features_in_,) or None
        Unadjusted p-value of each feature (its group's, with ``groups``);
        None unless ``threshold="probes"``.
    pvalues_corrected_ : ndarray of shape (n_features_in_,) or None
        The same after ``correction``; a feature passes when it is at most
        ``alpha``. Not ``correction`` of ``pvalues_`` alone: the smallest
        over the two looks of the look's one over its share of ``alpha``.
    cv_results_ : dict of ndarrays
        Only where ``keep_tentative`` chose by cross-validation: the
        candidate sets' ``n_features`` (in features, or groups; smallest
        first), ``mean_test_score`` and ``std_test_score`` over the splits,
        and ``split{k}_test_score`` for each split ``k``; the scores are NaN
        when no feature was tentative (nothing to choose, nothing fitted).
    tests_ : dict of Bunch or None
        With the composed tests of ``method="auto"`` (a LightGBM, XGBoost
        or CatBoost model): for "permutation" and "shap", the share of
        ``alpha`` each was tested at, and per feature its ``pvalues``,
        ``pvalues_corrected`` (compared with that share) and
        ``decisions``, with its ``importance_history``. None otherwise.
    selection_score_ : Bunch or None
        What the selection costs, measured on every fit (None with
        ``prefit=True``): ``kept`` and ``all``, the held-out score of the
        round model (sized as the rounds size it) on the kept and on all
        features, fitted on each of two complementary halves of the rows
        and scored on the other (the splits of ``cv`` for time-ordered or
        grouped rows) by the rounds' scoring; ``chance``, a constant
        prediction's; ``lost``, the share of what all features gain over
        the constant that the kept ones lose (a warning above 0.1); and
        ``n_fits``, the fits it cost (4 on halves, 2 more where
        ``keep_tentative="auto"`` chose again; none when every feature is
        kept); ``scoring``, the name of the rounds' scoring ("r2" or
        "accuracy" for the estimator's ``score``).
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
    The test assumes noise features independent of y and of the other
    features; a noise feature correlated with a relevant one is not noise
    to the model, nor what this test rejects (:class:`DependenceAnalyzer`).

    ``sample_weight`` (and any fit parameter routing requests) goes to the
    estimator's ``fit`` and to the importance's scorer or out-of-bag weights.

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
            out-of-bag averages). With metadata routing enabled
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
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            decide(
                tentative_choice(plan, X, y, fit_kwargs) if by_cv else None, cause, seed
            )
        auto = self.keep_tentative == "auto" and plan.use_probes
        guarded = auto and recovers(first := self.selection_score_, self.decisions_)
        for warning in said:  # "too few passed" is the guard's to say again
            if not (guarded and issubclass(warning.category, TooFewPassed)):
                warnings.warn_explicit(
                    warning.message, warning.category, warning.filename, warning.lineno
                )
        if guarded:
            n_first = sum(bool(self.support_[g].any()) for g in plan.groups)
            guard = ScoreGuard(plan, X, y, fit_kwargs, seed, first, n_first)
            decide(guard, cause, seed, known=first)
            self.selection_score_.n_fits += first.n_fits
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
        if score_weight is not None:
            score_weight = check_sample_weight(score_weight, X)
        self._warn_inferred_target(y)
        estimator = self._estimator_to_measure(y, int(seed))
        if self.prefit:  # the rows against the model's fit, as predict checks
            check_fitted_inputs(estimator, X, y)
        self._check_classes(estimator, y, prefit=self.prefit)
        cv = self._cv_with_splits(estimator, X, y, split_kwargs)
        rows = row_structure(estimator, None if self.prefit else cv, X, y, split_kwargs)
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
        tested = tested_columns(
            rounds_model, method_for, X, y, feature_names, self, use_probes
        )
        method, labels, groups, n_probes, top_up = tested
        max_count = max_features_count(self.max_features, X, len(groups))
        check_min_features(self.min_features, len(groups), self.max_features, max_count)
        rounds = mode.sized_for_rounds
        progress = Progress(type(self).__name__, self.verbose)
        round_params = rounds_model.round_params(estimator, self.round_trees)
        n_rounds = mode.rounds(self.n_rounds, method)
        design = (rounds_model, estimator, method, cv, rows, y, n_rounds, int(seed))
        round_cv, round_fits, keeps_fits = round_design(*design, probes=use_probes)
        # method="auto" with a booster's own contributions: both tests on the
        # same fits (_composed.py)
        also = contribution_method(
            self, rounds_model, estimator, method, round_cv if use_probes else None, y
        )
        options = dict(
            labels=labels,
            groups=groups,
            sample_weight=score_weight,
            cv=cv,
            **self._measure_options(rounds_model.scoring(estimator, self.scoring, y)),
            n_repeats=measure_repeats(self.n_repeats, rounds),
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
            # a Pipeline transforms each shadow as its column (_pipeline_probes
            # .py); drop-column refits without columns, which it cannot follow
            probes_through=use_probes
            and self.probes == "shadow"
            and selects_through(estimator)
            and (method is None or method.fits_model),
            progress=progress,
            **self._steps(
                method, rounds_model, round_cv, keeps_fits, also, fit_kwargs, progress
            ),
        )

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
        if chosen is not None and int(self.support_.sum()) == chosen.n_kept:
            self.selection_score_ = chosen  # the guard scored this support
            self.selection_score_.n_fits = choose.n_fits
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
