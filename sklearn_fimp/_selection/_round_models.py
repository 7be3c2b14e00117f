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
  by when the user chose none.

:func:`round_model` returns the first entry of ``ROUND_MODELS`` that
accepts the model, and :data:`GENERIC` for every other model. A new family
is one subclass of :class:`RoundModel` and one line in ``ROUND_MODELS``.
"""

import math

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils.multiclass import type_of_target

from .._utils._models import BAGGED_ENSEMBLES, is_catboost_estimator
from .._utils._random import with_shared_seed
from .._utils._scoring import probability_scoring

#: round_trees="auto": a bagged ensemble (whose importance averages
#: independent members) fits this share of its members in each round ...
ROUND_TREE_SHARE = 0.3
#: ... and at least this many (the calibration benchmark's rounds), or all
#: of them when the forest has fewer.
MIN_ROUND_TREES = 30


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
    """The generic entry: any model, fitted in each round as given, with
    every ``random_state`` reseeded, and scored by log-loss when it is a
    classifier with probabilities (its own ``score`` otherwise)."""

    #: Which models the entry is for, in words (error messages, docs).
    family = "any model"

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

    def make(self, estimator, seed, params):
        """The model of one round: ``estimator`` reseeded with ``seed`` and
        sized by ``params`` (``round_params``' result)."""
        return self.reseed(estimator, seed).set_params(**params)


class BaggedTrees(RoundModel):
    """A bagged ensemble of trees (RandomForest*, ExtraTrees*, Bagging*):
    each round fits a share of its trees, and a binary target of numeric
    labels is scored by the Brier score."""

    family = "RandomForest, ExtraTrees or Bagging, alone or as a Pipeline's last step"

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

    def accepts(self, model):
        return is_catboost_estimator(model)

    def reseed(self, estimator, seed):
        estimator = super().reseed(estimator, seed)
        prefix, model = final_step(estimator)
        # CatBoost takes random_state as an alias, and refuses both at once
        name = "random_state" if "random_state" in model.get_params() else "random_seed"
        return estimator.set_params(**{f"{prefix}{name}": seed})


#: The entries, the first that accepts a model is its; every other model
#: is :data:`GENERIC`'s.
ROUND_MODELS = (BaggedTrees(), CatBoostModels())
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
