"""A fitted boosted model's outputs cut at several iteration counts, in one
pass over its trees.

``held_out_stop`` (``_round_models.py``) scores a boosted model cut at up
to ``STOP_CANDIDATES`` iteration counts. Predicting each cut model routes
the rows through its first trees again, count after count (with counts
from 30% to all of the iterations, about four times the trees of one
predict). A boosted model's raw output after ``k`` iterations is its start
plus the leaf values of the trees of its first ``k`` iterations (one tree
per class per iteration for several classes), added tree by tree in order,
then its link; each family here gives the outputs at every count from one
pass over the trees:

- HistGradientBoosting: ``staged_predict_proba`` (a classifier) or
  ``staged_predict``, the model's outputs after each iteration, which add
  the predictors to its baseline in the order its ``predict`` does;
- XGBoost: the iterations between one count and the next predicted from
  the margin at the earlier count (``base_margin`` and ``iteration_range``):
  XGBoost adds the trees, in float32, to the margin it starts from as it
  adds them to its base score, and applies its own link;
- LightGBM: every row's leaf in every tree (``pred_leaf``) and the leaf
  values of the model's text, added in float64 in the model's order, as
  LightGBM adds them (the same raw output to the bit), through the
  objective's link in NumPy (LightGBM's formula: the same outputs to
  rounding); up to ``LEAF_VALUES`` leaves at a time.

The outputs are what the cut model's ``predict_proba`` (a classifier) or
``predict`` gives: bit for bit for HistGradientBoosting and XGBoost, to
rounding for LightGBM. :func:`staged_outputs` returns None for every other
model (the caller predicts each cut model): XGBoost's ``dart`` (predicted
from a given margin, its outputs are not the cut model's), LightGBM with
linear trees, averaged outputs (``rf``), an objective whose link is not in
``LINKS`` or that reads an option (``sqrt``, a sigmoid other than 1, printed
rounded in the model's text); and CatBoost, whose predict of each cut
model already costs about what one pass over its leaves does.
"""

import json
import re

import numpy as np
from sklearn.base import is_classifier

from ..._engine.adapters._flat_trees import linked_outputs
from ..._engine.adapters._lightgbm import LINKS as LIGHTGBM_LINKS
from ..._utils._frames import take_rows
from ..._utils._models import (
    HIST_GRADIENT_BOOSTING,
    is_lightgbm_trees,
    is_xgboost_trees,
)

#: LightGBM: leaves (rows times trees) looked up at once; a block of rows
#: holds their leaves (int32) and leaf values and sums (float64 each).
LEAF_VALUES = 2**21


def staged_outputs(model, counts):
    """``stages(X)`` for the fitted boosted ``model`` (not a Pipeline) and
    the iteration counts ``counts`` (increasing, at most the model's):
    an iterator of ``(i, rows, outputs)``, the outputs of rows ``rows`` (an
    array of positions) of X of the model cut at ``counts[i]``, which cover
    every row for each count; None when the model's family is not staged
    here (see the module docstring)."""
    counts = [int(count) for count in counts]
    if isinstance(model, HIST_GRADIENT_BOOSTING):
        return _hist_gradient_boosting(model, counts)
    if is_xgboost_trees(model):
        return _xgboost(model, counts)
    if is_lightgbm_trees(model):
        return _lightgbm(model, counts)
    return None


def _hist_gradient_boosting(model, counts):
    classifier = is_classifier(model)
    staged = model.staged_predict_proba if classifier else model.staged_predict

    def stages(X):
        rows = np.arange(X.shape[0])
        stage = iter(enumerate(counts))
        i, count = next(stage)
        for iterations, outputs in enumerate(staged(X), start=1):
            if iterations < count:
                continue
            yield i, rows, outputs
            i, count = next(stage, (None, None))
            if i is None:
                return

    return stages


def _xgboost(model, counts):
    config = json.loads(model.get_booster().save_config())
    if config["learner"]["gradient_booster"]["name"] != "gbtree":
        return None  # dart: from a given margin, not the cut model's outputs
    predict = model.predict_proba if is_classifier(model) else model.predict

    def stages(X):
        rows = np.arange(X.shape[0])
        margin, done = None, 0
        for i, count in enumerate(counts):
            span = (done, count)
            yield i, rows, predict(X, base_margin=margin, iteration_range=span)
            if i + 1 < len(counts):
                margin = model.predict(
                    X, output_margin=True, base_margin=margin, iteration_range=span
                )
            done = count

    return stages


def _lightgbm(model, counts):
    booster = model.booster_
    text = booster.model_to_string(num_iteration=-1)
    # the trees, and the header before them (feature importances, after
    # them, list the columns by name)
    text = text[: text.find("\nend of trees")]
    head = text[: text.find("\nTree=")]
    objective = re.search(r"^objective=(.*)$", head, re.MULTILINE)
    per_iteration = re.search(r"^num_tree_per_iteration=(\d+)$", head, re.MULTILINE)
    if objective is None or per_iteration is None:
        return None
    name, *options = objective.group(1).split()
    link = LIGHTGBM_LINKS.get(name)
    classifier = is_classifier(model)
    if (
        link not in (("sigmoid", "softmax") if classifier else ("identity", "exp"))
        or any(":" not in option for option in options)  # reg_sqrt: "sqrt"
        or any(o.startswith("sigmoid:") and o != "sigmoid:1" for o in options)
        or re.search(r"^average_output$", head, re.MULTILINE)
        or re.search(r"^is_linear=1$", text, re.MULTILINE)
    ):
        return None
    values = [
        np.array(line.split(), dtype=np.float64)
        for line in re.findall(r"^leaf_value=(.*)$", text, re.MULTILINE)
    ]
    per_iteration = int(per_iteration.group(1))
    if len(values) != booster.current_iteration() * per_iteration:
        return None
    table = np.concatenate(values)
    offsets = np.cumsum([0] + [len(v) for v in values[:-1]])
    classes = getattr(model, "classes_", None)

    def stages(X):
        n_rows = X.shape[0]
        size = max(1, LEAF_VALUES // len(values))
        for start in range(0, n_rows, size):
            rows = np.arange(start, min(start + size, n_rows))
            part = X if len(rows) == n_rows else take_rows(X, rows)
            leaves = np.asarray(model.predict(part, pred_leaf=True)).reshape(
                len(rows), len(values)
            )
            leaf_values = table[offsets + leaves]
            # each class's sums after each iteration, added in order
            sums = [
                np.cumsum(leaf_values[:, k::per_iteration], axis=1)
                for k in range(per_iteration)
            ]
            for i, count in enumerate(counts):
                raw = np.column_stack([s[:, count - 1] for s in sums])
                outputs = linked_outputs(raw, link, classes)
                yield i, rows, outputs.proba if classifier else outputs.values

    return stages
