"""The round-model registry: how the selector's rounds make their model.

Every round of probes (``_selector_rounds.py``) and every half of stability
selection (``_stability.py``) fits a fresh model made from the user's. What
that model is depends on the family: a bagged forest fits a share of its
trees in each round, since the rounds average its randomness anyway; its
vote shares are scored by the Brier score on a binary target, where
log-loss is unbounded. One entry per family says, for the model the user
wraps (alone, or as a Pipeline's last step):

- ``accepts(model)``: whether the entry is the family's;
- ``round_params(estimator, round_trees)``: the parameters that size each
  round's model (``round_trees``: a bagged forest's share of its trees);
- ``reseed(estimator, seed)``: a clone with every seed the family reads set
  to ``seed``, the user's fixed one too: otherwise each round would fit the
  same model and average nothing;
- ``scoring(estimator, scoring, y)``: the score a round's measure is scored
  by when the user chose none;
- ``cross_fits``: whether the rounds measure every row, once per round
  (two halves of the rows fixed for the fit, each measured on the model
  fitted on the other), rather than a fresh fifth of the rows;
- ``deterministic(estimator, n_rows)``: whether a fit depends on its rows
  alone, so that the rounds fit each half once and differ by their
  permutations only (``round_fits``: how many seeds the rounds cycle
  through, one for a deterministic model);
- ``stopping(round_trees)``: ``stop(model, X, y, scorer)``, which gives the
  model a round measures on the held-out rows X, y (a boosted model cut at
  the iteration that scores best there), or None to measure it as fitted;
- ``probes_per_feature(method)``: how many probes ``n_probes="auto"``
  adds per feature (or group) for that registry entry, and how many times
  ``MIN_AUTO_PROBES`` at least;
- ``contributions(estimator)``: the method that reads the model's own
  per-row contributions on the rounds' fits (``"shap"`` for LightGBM,
  XGBoost and CatBoost), which ``method="auto"`` composes with the
  permutation test (``_composed.py``), or None;
- ``tested_groups(X, method)``: the groups of columns the probe test
  measures with the selector's ``method`` ("auto" or a name) when the user
  gave none (None: each column alone); the method is resolved for them.

:func:`round_model` returns the first entry of ``ROUND_MODELS`` that
accepts the model, and :data:`GENERIC` for every other model. A new family
is one subclass of :class:`RoundModel` and one line in ``ROUND_MODELS``.
"""

import copy
import math

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils.multiclass import type_of_target

from ..._importance._groups import correlated_groups
from ..._methods import METHODS
from ..._utils._models import (
    BAGGED_ENSEMBLES,
    HIST_GRADIENT_BOOSTING,
    is_catboost_estimator,
    is_lightgbm_trees,
    is_xgboost_trees,
)
from ..._utils._random import with_shared_seed
from ..._utils._scoring import (
    AdditiveScore,
    block_scores,
    probability_scoring,
    terms_block_scores,
)
from ._staged import staged_outputs

#: round_trees="auto": a bagged ensemble (whose importance averages
#: independent members) fits this share of its members in each round ...
ROUND_TREE_SHARE = 0.3
#: ... and at least this many (the calibration benchmark's rounds), or all
#: of them when the forest has fewer.
MIN_ROUND_TREES = 30
#: The Spearman correlation at which a tree model's "auto" tests columns
#: together (``RoundModel.near_duplicates``).
FOREST_GROUPS = 0.9
#: Seeds the rounds of a model whose fit is random cycle through: each half
#: of the rows is fitted this many times, and every other round measures
#: one of those fits again with fresh permutations.
STOCHASTIC_FITS = 3
#: The parameters that seed a model, by their last name (``a__b``: ``b``).
SEED_PARAMETERS = ("random_state", "random_seed", "seed")


def seeded_parameters(estimator):
    """The parameters of ``estimator`` (deep) that seed a random draw."""
    return [
        name
        for name in estimator.get_params(deep=True)
        if name.rpartition("__")[2] in SEED_PARAMETERS
    ]


def final_step(estimator):
    """``(prefix, model)``: the model ``estimator`` is or ends with (the last
    step of a Pipeline, nested ones included), and the prefix its
    parameters take in ``estimator.set_params``."""
    prefix = ""
    while isinstance(estimator, Pipeline):
        name, estimator = estimator.steps[-1]
        prefix += f"{name}__"
    return prefix, estimator


class RoundModel:
    """The generic entry: any model, fitted as given in each round on a
    fresh held-out split (every ``random_state`` reseeded), and scored by
    log-loss when it is a classifier with probabilities (its own ``score``
    otherwise). With a ``cv``, whose splits are the same in every round, a
    deterministic model is fitted once per split."""

    #: Which models the entry is for, in words (error messages, docs).
    family = "any model"
    #: Whether the rounds cross-fit (see the module's docstring). Not for a
    #: linear model: a noise column correlated with another gets inflated,
    #: opposite coefficients on the pair, which its permutation breaks and
    #: its shadow's does not, so that every row measured keeps such noise
    #: more often (mc3-corr-1000 of bench_calibration: 4 of 5 data sets with
    #: the halves against 2 of 5 with a fresh fifth of the rows).
    cross_fits = False

    def probes_per_feature(self, method):
        """Probes per feature (or group) with n_probes="auto" for the
        registry entry ``method`` (None: an ``importance_getter``): each probe is one
        more column to fit and to measure in every round, and one more
        value of the test's null distribution."""
        return 1

    def accepts(self, model):
        """Whether ``model`` (the user's model, or a Pipeline's last step)
        is of this entry's family."""
        return True

    def contributions(self, estimator):
        """The method that measures ``estimator``'s own per-row
        contributions on the rounds' fitted models without permuting a
        column (its native TreeSHAP: ``"shap"``), which ``method="auto"``
        composes with the permutation test (``_composed.py``); None: the
        family has none that needs no optional package."""
        return None

    #: The rank correlation at which "auto" and every method that measures
    #: groups test columns together (``tested_groups``); None: never.
    near_duplicates = None

    def tested_groups(self, X, method):
        """The groups of X's columns (positions) that the probe test
        measures with the selector's ``method`` ("auto" or a method's name,
        resolved afterwards for these groups: a method that measures
        groups) when the user gave none; None: each column alone. Columns
        correlated at ``near_duplicates`` or more, as groups
        (``_groups.correlated_groups``), for every method (each measures
        groups)."""
        if self.near_duplicates is None:
            return None
        return correlated_groups(X, min_correlation=self.near_duplicates)

    def round_params(self, estimator, round_trees):
        """The parameters of ``estimator`` that size each round's model
        (``{}``: as given). A generic model has no trees to share out: an
        int ``round_trees`` is an error, "auto" and None fit it as given."""
        round_tree_count(None, round_trees, estimator=estimator)
        return {}

    def reseed(self, estimator, seed):
        """A clone of ``estimator`` with every seed set to ``seed``."""
        return with_shared_seed(estimator, seed, replace_fixed=True)

    def scoring(self, estimator, scoring, y):
        """The scoring of a round's measure: ``scoring`` when given; a
        proper scoring rule for a classifier with probabilities (log-loss,
        ``probability_scoring``), its ``score`` otherwise."""
        return probability_scoring(estimator, scoring)

    def deterministic(self, estimator, n_rows):
        """Whether a fit of ``estimator`` (alone or ending a Pipeline) on
        ``n_rows`` rows depends on those rows alone: no step before the
        model reads a seed, and the model is deterministic by
        ``model_deterministic``."""
        prefix, model = final_step(estimator)
        if any(not name.startswith(prefix) for name in seeded_parameters(estimator)):
            return False
        return self.model_deterministic(model, n_rows)

    def model_deterministic(self, model, n_rows):
        """Whether the model's fit is deterministic. Generic: it has no
        parameter that seeds anything, so that no reseeding could vary
        it."""
        return not seeded_parameters(model)

    def round_fits(self, estimator, n_rows, n_rounds):
        """How many seeds the ``n_rounds`` rounds cycle through when every
        round measures the same splits: one for a deterministic fit (the
        same model whatever the seed), ``STOCHASTIC_FITS`` for a family that
        cross-fits, and otherwise each round its own, as with fresh
        splits."""
        if self.deterministic(estimator, n_rows):
            return 1
        return min(STOCHASTIC_FITS, n_rounds) if self.cross_fits else n_rounds

    def stopping(self, round_trees):
        """``stop(model, X, y, scorer)``: the model a round measures on the
        held-out rows X, y, given the model fitted; None: as fitted. A
        generic model has no iterations to stop at."""
        return None

    def make(self, estimator, seed, params):
        """The model of one round: ``estimator`` reseeded with ``seed`` and
        sized by ``params`` (``round_params``' result)."""
        return self.reseed(estimator, seed).set_params(**params)


class BaggedTrees(RoundModel):
    """A bagged ensemble of trees (RandomForest*, ExtraTrees*, Bagging*):
    each round fits a share of its trees, and a binary target of numeric
    labels is scored by the Brier score."""

    family = "RandomForest, ExtraTrees or Bagging, alone or as a Pipeline's last step"
    #: A bagged ensemble is measured on its out-of-bag rows, or on a fresh
    #: fifth of the rows in each round (a held-out method), and every round
    #: fits its own share of the trees with its own seed (it reads one).
    cross_fits = False

    def accepts(self, model):
        return isinstance(model, BAGGED_ENSEMBLES)

    #: A tree splits on any one of near-duplicate columns as well as on
    #: another, so the forest shares what they carry among them: each
    #: column's importance is its share, and a block of many such columns
    #: loses column by column to probes that compete with nothing. On the
    #: meats table (215 rows, 100 near-infrared absorbances, every pair
    #: rank-correlated at 0.95 or more; 5-fold HistGradientBoosting on the
    #: kept columns, three seeds) the forest tested column by column kept
    #: 8.7 absorbances, 0.183 below all columns; the block tested as one
    #: group is kept whole, 0.108 above (docs/bench_power_wide.rst). Below
    #: 0.9 columns carry enough of their own that the forest tells them
    #: apart, and a group would keep the weaker member with the stronger.
    near_duplicates = FOREST_GROUPS

    def round_params(self, estimator, round_trees):
        prefix, model = final_step(estimator)
        count = round_tree_count(model.n_estimators, round_trees, estimator=estimator)
        return {f"{prefix}n_estimators": count}

    def scoring(self, estimator, scoring, y):
        """The Brier score for a binary target of numeric labels when the
        user chose no scoring: a bagged ensemble's probabilities are shares
        of its trees' votes, exactly 0 for a class no tree predicts, and one
        such row costs log-loss ``-log(eps) = 36`` where a typical row costs
        well under 1, so that log-loss measures which rows reach 0 rather
        than what a column adds (``docs/probe_test.rst``). The Brier score
        is bounded. scikit-learn's Brier scorer needs numeric labels to
        know the positive class."""
        chosen = super().scoring(estimator, scoring, y)
        if chosen != "neg_log_loss" or scoring is not None:
            return chosen
        binary = type_of_target(y) == "binary" and np.asarray(y).dtype.kind in "biuf"
        return "neg_brier_score" if binary else chosen


class CatBoostModels(RoundModel):
    """CatBoost's models: reseeded through ``random_seed``, which CatBoost
    fixes to 0 when unset and leaves out of ``get_params``, so that the
    generic reseeding (every ``*random_state`` parameter) reached none and
    every round fitted one identical model."""

    family = "CatBoostClassifier, CatBoostRegressor or CatBoost"
    cross_fits = True

    def accepts(self, model):
        return is_catboost_estimator(model)

    def contributions(self, estimator):
        """CatBoost's own TreeSHAP (``ShapValues``), for the model alone."""
        return None if isinstance(estimator, Pipeline) else "shap"

    def model_deterministic(self, model, n_rows):
        """CatBoost draws by default (``random_strength``, its bootstrap),
        and fixes its seed to 0 when none is given: stochastic."""
        return False

    def reseed(self, estimator, seed):
        estimator = super().reseed(estimator, seed)
        prefix, model = final_step(estimator)
        # CatBoost takes random_state as an alias, and refuses both at once
        name = "random_state" if "random_state" in model.get_params() else "random_seed"
        return estimator.set_params(**{f"{prefix}{name}": seed})

    def stopping(self, round_trees):
        return None if round_trees is None else held_out_stop


class BoostedTrees(RoundModel):
    """HistGradientBoosting, LightGBM and XGBoost: deterministic given their
    rows unless they subsample rows or columns (or stop early on a random
    validation split), so that each half of the rows is fitted once."""

    family = "HistGradientBoosting, LightGBM or XGBoost"
    cross_fits = True
    #: Near-duplicate columns are tested one by one: as groups (at 0.9, as
    #: for a forest) the field benchmark's meats table (100 absorbances in
    #: one block, 3 seeds) went from 1 column kept, 0.36 below all columns,
    #: to the block, 0.11 above, with LightGBM; but Parkinson speech (105
    #: groups of 2-30 acoustic measures, 252 rows) went from -0.08 to -0.23
    #: and grants test from -0.05 to -0.18: a group's shadow of many noise
    #: columns is a high bar on few rows (docs/bench_field.rst).
    near_duplicates = None

    def accepts(self, model):
        return (
            isinstance(model, HIST_GRADIENT_BOOSTING)
            or is_lightgbm_trees(model)
            or is_xgboost_trees(model)
        )

    def model_deterministic(self, model, n_rows):
        params = model.get_params()
        if isinstance(model, HIST_GRADIENT_BOOSTING):
            # early stopping scores a random validation split ("auto": above
            # 10,000 rows); max_features draws columns at each split
            stops = params["early_stopping"]
            stops = n_rows > HGB_EARLY_STOPPING_ROWS if stops == "auto" else stops
            return not stops and params.get("max_features", 1.0) == 1.0
        if is_lightgbm_trees(model):
            return not (
                params.get("boosting_type") in ("rf", "goss")
                or params.get("extra_trees")
                or _below_one(params, LIGHTGBM_COLUMN_SHARES)
                or (
                    _below_one(params, LIGHTGBM_ROW_SHARES)
                    and max(params.get(f, 0) or 0 for f in LIGHTGBM_ROW_FREQUENCIES) > 0
                )
            )
        return not (
            _below_one(params, XGBOOST_SHARES)
            or (params.get("booster") == "dart" and (params.get("rate_drop") or 0) > 0)
        )

    def contributions(self, estimator):
        """LightGBM's and XGBoost's own TreeSHAP (``pred_contrib``); not
        HistGradientBoosting's, which only the optional shap package reads,
        nor a Pipeline's, whose raw columns contributions do not reach."""
        if isinstance(estimator, (Pipeline, HIST_GRADIENT_BOOSTING)):
            return None
        return "shap"

    def stopping(self, round_trees):
        """``held_out_stop`` (``round_trees="auto"``): a boosted model's
        later iterations fit what is left of its training rows, most of it
        noise on a small or imbalanced table, so that the probes it splits
        on there blur the test; measured as it would have stopped early on
        the rows it is measured on, it shows what its first iterations
        learned. None: as fitted."""
        return None if round_trees is None else held_out_stop


class LinearModels(RoundModel):
    """scikit-learn's linear models: deterministic unless their solver
    draws (stochastic gradients, liblinear, random coordinate selection)."""

    family = "a scikit-learn linear model"

    def probes_per_feature(self, method):
        """Four for a method that measures a linear model through its
        coefficients (``linear_path``: permutation), one otherwise.

        A column costs a linear model little to fit and, through its
        coefficients (``_importance/_linear.py``), to measure, while the rounds
        vary only by their held-out rows: the test's resolution is its probes.
        With one per feature its smallest p-values stop near 1 / (probes + 1),
        and whether Benjamini-Hochberg keeps the strong columns turns on a
        seed: on breast cancer (30 columns, a scaler and a logistic regression,
        seeds 0, 1, 2; each column alone) 50 probes kept 17, 1 and 1 columns,
        100 kept 1, 15 and 18, 200 kept 16, 17 and 19."""
        return 4 if method is not None and method.linear_path else 1

    def tested_groups(self, X, method):
        """X's numeric columns correlated at ``|rho| >= 0.7`` as groups
        (``_groups.correlated_groups``), for a method that breaks a column
        regardless of the others (``marginal``: permutation; "auto" is
        permutation for a linear model). Permuting one
        column of a correlated pair makes rows unlike any the model was
        fitted on, and a linear model's coefficients extrapolate to them: a
        noise column correlated with another, on which the fit put large
        opposite coefficients, loses far more score than its shadow, which
        correlates with nothing. On pure noise with pairs correlated at 0.89
        (bench_calibration's mc3-corr-1000) logistic regression kept noise
        in 16 of 20 data sets measured column by column, and in none of 20
        with the pairs permuted together (0 of 140 over seven null
        regimes)."""
        if method == "auto" or METHODS[method].marginal:
            return correlated_groups(X)
        return None

    def accepts(self, model):
        return type(model).__module__.startswith("sklearn.linear_model")

    def model_deterministic(self, model, n_rows):
        params = model.get_params()
        if "solver" in params and params["solver"] in RANDOM_SOLVERS:
            return False
        if params.get("selection") == "random":
            return False
        # the rest read random_state only with a random solver or
        # selection; SGD, Perceptron, RANSAC and the like always draw
        return not any(
            name in params for name in ("shuffle", "max_trials", "n_subsamples")
        )


#: HistGradientBoosting's early_stopping="auto" stops early above this many
#: rows.
HGB_EARLY_STOPPING_ROWS = 10_000
#: LightGBM's shares of rows and columns that draw when below 1 (rows only
#: with a bagging frequency above 0), under their scikit-learn and native
#: names.
LIGHTGBM_ROW_SHARES = ("subsample", "bagging_fraction")
LIGHTGBM_ROW_FREQUENCIES = ("subsample_freq", "bagging_freq")
LIGHTGBM_COLUMN_SHARES = (
    "colsample_bytree",
    "feature_fraction",
    "feature_fraction_bynode",
)
#: XGBoost's shares of rows and columns that draw when below 1.
XGBOOST_SHARES = (
    "subsample",
    "colsample_bytree",
    "colsample_bylevel",
    "colsample_bynode",
)
#: Linear solvers that draw (their order of rows or coordinates).
RANDOM_SOLVERS = ("sag", "saga", "liblinear")


#: ``held_out_stop`` scores this many iteration counts, spaced evenly in
#: logarithm from one to all of the model's iterations, ...
STOP_CANDIDATES = 24
#: ... and at least this share of them: a model cut to its first few
#: iterations splits on so few columns that nearly every column, real or
#: probe, measures exactly 0, and the probe test's null of the few left was
#: not calibrated (bench_calibration's bin-blocks-1000, 1,000 correlated
#: noise columns: noise kept in 13 of 20 data sets through
#: HistGradientBoosting cut at any count, 10 through LightGBM, 8 through
#: XGBoost; 0 of 20 with this floor) ...
STOP_FLOOR = 0.3
#: ... each on this many blocks of the rows (every row in one), whose
#: spread gives the standard error of a count's score against the best's.
STOP_BLOCKS = 10


def held_out_stop(model, X, y, scoring, sample_weight=None):
    """``model`` (a fitted boosted model, alone or ending a Pipeline) cut at
    the most iterations (at least ``STOP_FLOOR`` of them) whose score by
    ``scoring`` (a scorer name, a callable or None, as the measure takes
    it) on the rows X, y (weighted by ``sample_weight``) is within one
    standard error of the best count's (``most_within_one_error``): a
    copy, the fitted model unchanged. The
    rows are scored in ``STOP_BLOCKS`` blocks, the outputs of every count
    computed in one pass over the trees where the family allows
    (:func:`staged_block_scores`), else by predicting each cut model. A
    model that stopped early on its own (LightGBM's, XGBoost's or
    CatBoost's best iteration), or of one iteration, or rows too few for
    the blocks, or a scoring that does not add up over rows
    (:class:`~.._utils._scoring.AdditiveScore`: log-loss, the Brier score,
    accuracy, R² and mean squared error do; ROC AUC does not, and a block
    may hold one class only), is returned as it is.

    Within one standard error, the model keeps the iterations in which its
    weaker columns come in, and loses those that overfit clearly. The
    count is chosen on the rows measured, once per fitted model: every
    column, real or probe, is measured on the same cut model, so that a
    noise feature and its shadows stay alike."""
    _, final = final_step(model)
    total = _iterations(final)
    additive = AdditiveScore.for_scoring(model, scoring, np.asarray(y), sample_weight)
    if total is None or total <= 1 or X.shape[0] < 2 * STOP_BLOCKS or not additive:
        return model
    counts = np.unique(np.geomspace(1, total, STOP_CANDIDATES).round().astype(int))
    counts = counts[counts >= STOP_FLOOR * total]
    blocks = np.array_split(np.arange(X.shape[0]), STOP_BLOCKS)
    scores = staged_block_scores(additive, model, X, blocks, counts)
    best = int(counts[most_within_one_error(scores)])
    return model if best == total else _with_final(model, _cut(final, best))


def staged_block_scores(additive, model, X, blocks, counts):
    """``block_scores`` of ``model`` (a fitted boosted model, alone or
    ending a Pipeline) cut at each of ``counts`` (increasing), one row per
    count: from one pass over the model's trees where the family gives the
    outputs of every count at once (:func:`~._staged.staged_outputs`, on
    the inputs the Pipeline's steps give the model), else predicting each
    cut model."""
    _, final = final_step(model)
    stages = staged_outputs(final, counts)
    if stages is None:
        return np.array(
            [
                block_scores(additive, _with_final(model, cut), X, blocks)
                for cut in _cuts(final, counts)
            ]
        )
    terms = np.empty((len(counts), X.shape[0]))
    for i, rows, outputs in stages(_model_input(model, X)):
        terms[i, rows] = additive.row_terms(outputs, rows)
    return np.array([terms_block_scores(additive, row, blocks) for row in terms])


def _model_input(estimator, X):
    """X as the model ``estimator`` is or ends with reads it: transformed by
    the steps of the Pipeline (nested ones too) before it, as the
    Pipeline's ``predict`` transforms it."""
    while isinstance(estimator, Pipeline):
        for _, step in estimator.steps[:-1]:
            if step is not None and step != "passthrough":
                X = step.transform(X)
        estimator = estimator.steps[-1][1]
    return X


def most_within_one_error(scores):
    """The last row of ``scores`` (one row per iteration count, in order;
    one column per block of rows) whose mean is within one standard error
    of the best row's: the error of the blocks' differences from it."""
    differences = scores - scores[np.argmax(scores.mean(axis=1))]
    error = differences.std(axis=1, ddof=1) / np.sqrt(scores.shape[1])
    return int(np.flatnonzero(differences.mean(axis=1) >= -error)[-1])


def _iterations(model):
    """The iterations of a fitted boosted model, or None when it cannot be
    cut (it stopped early on its own)."""
    if isinstance(model, HIST_GRADIENT_BOOSTING):
        return int(model.n_iter_)
    if is_lightgbm_trees(model):
        booster = model.booster_
        return None if booster.best_iteration > 0 else booster.current_iteration()
    if is_xgboost_trees(model):
        booster = model.get_booster()
        return None if booster.attr("best_iteration") else booster.num_boosted_rounds()
    if is_catboost_estimator(model):
        best = model.get_best_iteration()
        return None if best is not None else int(model.tree_count_)
    return None


def _cuts(model, counts):
    """``_cut(model, k)`` for each count k in turn, each to be used before
    the next is made (LightGBM's share one copy of the booster)."""
    if not is_lightgbm_trees(model):
        yield from (_cut(model, int(k)) for k in counts)
        return
    cut = _cut(model, int(counts[0]))
    for k in counts:
        cut.booster_.best_iteration = int(k)
        yield cut


def _cut(model, iterations):
    """A copy of the fitted boosted ``model`` that predicts with its first
    ``iterations`` iterations."""
    if isinstance(model, HIST_GRADIENT_BOOSTING):
        cut = copy.copy(model)
        cut._predictors = model._predictors[:iterations]  # n_iter_ follows
        return cut
    if is_lightgbm_trees(model):
        cut = copy.copy(model)
        cut._Booster = copy.copy(model.booster_)
        cut._Booster.best_iteration = iterations
        return cut
    if is_xgboost_trees(model):
        cut = copy.copy(model)
        cut._Booster = model.get_booster()[:iterations]
        return cut
    cut = model.copy()  # CatBoost
    cut.shrink(ntree_end=iterations)
    cut._n_features_in = model.n_features_in_  # which its copy forgets
    return cut


def _with_final(estimator, model):
    """``estimator`` with ``model`` as its model: ``model`` itself, or a
    shallow copy of the Pipeline (nested ones too) ending in it."""
    if not isinstance(estimator, Pipeline):
        return model
    copied = copy.copy(estimator)
    name, last = estimator.steps[-1]
    copied.steps = [*estimator.steps[:-1], (name, _with_final(last, model))]
    return copied


def _below_one(params, names):
    """Whether any of the shares ``names`` is set below 1 in ``params``."""
    return any(params.get(name) is not None and params[name] < 1 for name in names)


#: The entries, the first that accepts a model is its; every other model
#: is :data:`GENERIC`'s.
ROUND_MODELS = (BaggedTrees(), BoostedTrees(), CatBoostModels(), LinearModels())
GENERIC = RoundModel()


def round_model(estimator):
    """The entry of ``ROUND_MODELS`` for ``estimator`` (alone or ending a
    Pipeline), or :data:`GENERIC`."""
    _, model = final_step(estimator)
    return next((entry for entry in ROUND_MODELS if entry.accepts(model)), GENERIC)


def round_tree_count(n_estimators, round_trees, *, estimator, bagged=None):
    """Trees of each round of a bagged model of ``n_estimators`` trees:
    ``round_trees`` if an int, all of them if None, and for "auto"
    ``ROUND_TREE_SHARE`` of them, rounded up, at least ``MIN_ROUND_TREES``
    and at most all of them. ``n_estimators`` None (``estimator`` is no
    bagged model): None, the model fitted as given, or an error for an int
    (``bagged`` says which models have trees to share out)."""
    if n_estimators is None:
        if isinstance(round_trees, str) or round_trees is None:
            return None
        raise ValueError(
            f"round_trees={round_trees!r} sets how many trees each round of "
            "probes fits, and only a bagged ensemble "
            f"({bagged or BaggedTrees.family}) has trees "
            "that can be shared out over rounds; the estimator is a "
            f"{type(estimator).__name__}. Use round_trees='auto' or None, "
            "which fit it as given."
        )
    if round_trees is None:
        return int(n_estimators)
    if isinstance(round_trees, str):  # "auto"
        share = math.ceil(ROUND_TREE_SHARE * n_estimators)
        return int(min(n_estimators, max(MIN_ROUND_TREES, share)))
    return int(round_trees)
