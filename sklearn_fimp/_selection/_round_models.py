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
  round's model (``round_trees``; early stopping would go here);
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
  through, one for a deterministic model).

:func:`round_model` returns the first entry of ``ROUND_MODELS`` that
accepts the model, and :data:`GENERIC` for every other model. A new family
is one subclass of :class:`RoundModel` and one line in ``ROUND_MODELS``.
"""

import math

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils.multiclass import type_of_target

from .._utils._models import (
    BAGGED_ENSEMBLES,
    HIST_GRADIENT_BOOSTING,
    is_catboost_estimator,
    is_lightgbm_trees,
    is_xgboost_trees,
)
from .._utils._random import with_shared_seed
from .._utils._scoring import probability_scoring

#: round_trees="auto": a bagged ensemble (whose importance averages
#: independent members) fits this share of its members in each round ...
ROUND_TREE_SHARE = 0.3
#: ... and at least this many (the calibration benchmark's rounds), or all
#: of them when the forest has fewer.
MIN_ROUND_TREES = 30
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

    def accepts(self, model):
        """Whether ``model`` (the user's model, or a Pipeline's last step)
        is of this entry's family."""
        return True

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


class BoostedTrees(RoundModel):
    """HistGradientBoosting, LightGBM and XGBoost: deterministic given their
    rows unless they subsample rows or columns (or stop early on a random
    validation split), so that each half of the rows is fitted once."""

    family = "HistGradientBoosting, LightGBM or XGBoost"
    cross_fits = True

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


class LinearModels(RoundModel):
    """scikit-learn's linear models: deterministic unless their solver
    draws (stochastic gradients, liblinear, random coordinate selection)."""

    family = "a scikit-learn linear model"

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
