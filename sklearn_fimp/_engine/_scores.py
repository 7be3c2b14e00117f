"""Scores with each group permuted or replaced: the engine's entry points
for validation and forest-level out-of-bag permutation importance, and for
conditional permutation importance (each group replaced by given values).

A score is computed one of two ways. When the rows span several chunks and
the score is a sum over rows (accuracy, R², mean squared error ...:
:class:`~sklearn_fimp._utils._scoring.AdditiveScore`), each chunk's row
terms are summed as the chunk is routed, so time and memory stay linear in
the number of rows. Otherwise every row's permuted outputs are scored at
once: by the metric's formula for the scores
:class:`~sklearn_fimp._utils._scoring.DirectScore` knows (the additive ones
and ROC AUC), which agrees with scikit-learn's scorer to floating-point
precision without its checks of the input on every call, and by the scorer
itself, through a stand-in estimator, for any other.
"""

from typing import NamedTuple

import numpy as np
from joblib import delayed

from .._utils._compat import scorer_reads_labels_only
from .._utils._scoring import AdditiveScore, DirectScore, score_outputs, score_table
from . import _backend, _budgets
from ._changes import GivenValues, group_changes, permutation_tasks, route_chunk
from ._kept import _KEPT, kept
from ._ties import changed_rows, outputs_and_ties, repair_ties, sorted_outputs
from .adapters import adapter_for


def tree_ensemble(estimator):
    """The engine's :class:`~.adapters.TreeEnsemble` of a fitted model,
    prepared for the backend, or None when no adapter takes the model
    (kept within :func:`~._kept.keeping_ensembles`)."""
    store = _KEPT.get()
    if store is not None and id(estimator) in store:
        return store[id(estimator)][1]
    adapter = adapter_for(estimator)
    ensemble = None if adapter is None else adapter.ensemble()
    ensemble = None if ensemble is None else _backend.prepare_ensemble(ensemble)
    if store is not None:
        store[id(estimator)] = (estimator, ensemble)
    return ensemble


def engine_input(estimator, X):
    """X as the model's trees read it, validated against the model."""
    return adapter_for(estimator).engine_input(X)


def worth_rerouting(ensemble, X, groups, tree_rows=None):
    """Which groups the engine computes faster than predicting every row (a
    boolean per group; ``tree_rows``: each tree's rows, or None for all)."""
    return ensemble.backend.worth_rerouting(ensemble, X, groups, tree_rows)


def replaced_outputs(
    ensemble,
    X,
    groups,
    replacements,
    n_jobs,
    *,
    start,
    divisor,
    chunks,
    tree_rows=None,
    ranks_matter=True,
    progress=None,
):
    """Yield ``(g, r, outputs, base_total)``: the model's output on every
    row with group ``g`` replaced by ``replacements[g][r]`` (see
    :func:`~._changes.group_changes`), as its own ``predict`` would give
    it: ``(start + sum of leaf values) / divisor``, and the unreplaced
    ``start + sum of leaf values``. ``ranks_matter=False`` (a scorer that
    reads predicted labels only) skips the repair of ties between rows.
    """
    divisor = np.reshape(divisor, (-1, 1)) if np.ndim(divisor) else divisor
    every_row = np.arange(X.shape[0])
    # tied rows are repaired many tasks at once (one pass over the trees for
    # all of them, where one per task dominated with many ties, as ROC AUC
    # on a forest's vote shares has), the tasks' outputs and tied rows held
    # meanwhile up to TASK_BYTES; each row's repair is the same either way
    tie_row_bytes = X.shape[1] * X.itemsize
    held, held_bytes = [], 0

    def repaired(base_total):
        repair_ties(
            ensemble,
            X,
            [
                (outputs, ties, every_row, groups[g], replacements[g][r])
                for g, r, outputs, ties in held
            ],
            start=start,
            divisor=divisor,
            tree_rows=tree_rows,
        )
        tasks = [(g, r, outputs, base_total) for g, r, outputs, _ in held]
        held.clear()
        return tasks

    for batch, base_total, changes in group_changes(
        ensemble,
        X,
        groups,
        replacements,
        n_jobs,
        tree_rows=tree_rows,
        start=start,
        chunks=chunks,
        progress=progress,
    ):
        reference = (
            sorted_outputs(ensemble, base_total, divisor)
            if ranks_matter and ensemble.classifier
            else None
        )
        for i, g in enumerate(batch):
            for r in range(len(replacements[g])):
                outputs, ties = outputs_and_ties(
                    ensemble,
                    base_total,
                    changes[i, r],
                    divisor,
                    reference,
                )
                held.append((g, r, outputs, ties))
                held_bytes += outputs.nbytes + len(ties) * tie_row_bytes
                if held_bytes >= _budgets.TASK_BYTES:
                    yield from repaired(base_total)
                    held_bytes = 0
        yield from repaired(base_total)
        held_bytes = 0


class _RowSums(NamedTuple):
    """What every chunk's sums of row terms share (see
    :func:`summed_row_terms`)."""

    ensemble: object
    X: np.ndarray
    groups: list
    #: ``replacements[g][r]``
    replacements: list
    start: np.ndarray
    #: (n_rows, 1) or a number
    divisor: object
    additive: AdditiveScore
    scored_values: object
    #: which rows are scored, and each row's index among them
    scored: np.ndarray
    term_rows: np.ndarray
    tree_rows: list | None

    def outputs_of(self, base, change, rows):
        """Outputs of ``rows`` of X (``base`` and ``change`` theirs), and
        their tied rows (see :func:`~._ties.repair_ties`)."""
        divisor = self.divisor[rows] if np.ndim(self.divisor) else self.divisor
        return outputs_and_ties(self.ensemble, base, change, divisor)

    def row_terms(self, outputs, rows):
        return self.additive.row_terms(
            self.scored_values(outputs), self.term_rows[rows]
        )


def _add_chunk_sums(sums, part, routed, chunk_rows, base, totals):
    """Add to ``totals[g, r]`` (g in ``part``) the chunk's sum of row terms
    with group ``g`` replaced by its replacement ``r``: the unreplaced sum,
    plus the change of the terms of the rows the task's changes reach."""
    kept = np.flatnonzero(sums.scored[chunk_rows])
    base_terms = np.zeros(len(chunk_rows))
    if len(kept):
        rows = chunk_rows[kept]
        # nothing changed: no row to repair
        outputs, _ = sums.outputs_of(base[kept], np.zeros_like(base[kept]), rows)
        base_terms[kept] = sums.row_terms(outputs, rows)
    base_sum = base_terms.sum()
    tasks = [(g, r) for g in part for r in range(len(sums.replacements[g]))]
    changes = sums.ensemble.backend.task_changes(
        sums.ensemble,
        routed,
        chunk_rows,
        sums.X,
        [(sums.groups[g], sums.replacements[g][r]) for g, r in tasks],
    )
    # tied rows are repaired many tasks at once (one pass over the trees for
    # all of them), the tasks' outputs held meanwhile up to TASK_BYTES
    held, held_bytes = [], 0

    def add_held():
        repair_ties(
            sums.ensemble,
            sums.X,
            [
                (outputs, ties, rows, sums.groups[g], sums.replacements[g][r])
                for g, r, _, rows, outputs, ties in held
            ],
            start=sums.start,
            divisor=sums.divisor,
            tree_rows=sums.tree_rows,
        )
        for g, r, moved, rows, outputs, _ in held:
            terms = sums.row_terms(outputs, rows)
            totals[g, r] += base_sum + (terms.sum() - base_terms[moved].sum())
        held.clear()

    for (g, r), change in zip(tasks, changes, strict=True):
        # rows that are not scored are out of bag for no tree: unchanged
        moved = changed_rows(change)
        rows = chunk_rows[moved]
        outputs, ties = sums.outputs_of(base[moved], change[moved], rows)
        held.append((g, r, moved, rows, outputs, ties))
        held_bytes += outputs.nbytes + 2 * moved.nbytes
        if held_bytes >= _budgets.TASK_BYTES:
            add_held()
            held_bytes = 0
    add_held()


def summed_row_terms(
    ensemble,
    X,
    groups,
    replacements,
    n_jobs,
    *,
    start,
    divisor,
    additive,
    scored_values,
    chunks,
    tree_rows=None,
    scored=None,
    progress=None,
):
    """Sums over rows of ``additive``'s row terms with each group ``g``
    replaced by each of ``replacements[g]``, shape (n_groups, n_repeats),
    and the unreplaced ``start + sum of leaf values`` of every row.

    Chunk by chunk: each chunk of rows is routed once for all groups and
    only one chunk's outputs are held per worker, so time and memory stay
    linear in the number of rows. ``scored`` (a mask) limits the sums to
    some rows, the row terms of which ``additive`` indexes in order;
    ``scored_values`` turns outputs into what ``additive.row_terms`` reads.
    """
    n_rows = X.shape[0]
    if scored is None:
        scored = np.ones(n_rows, dtype=bool)
    sums = _RowSums(
        ensemble,
        X,
        groups,
        replacements,
        start,
        np.reshape(divisor, (-1, 1)) if np.ndim(divisor) else divisor,
        additive,
        scored_values,
        scored,
        np.cumsum(scored) - 1,
        tree_rows,
    )
    totals = np.zeros((len(groups), len(replacements[0]) if len(groups) else 0))
    base_total = np.array(start, dtype=np.float64)
    with _budgets.engine_threads(n_jobs) as parallel:
        for chunk_rows in chunks:
            routed = route_chunk(ensemble, X, chunk_rows, tree_rows, parallel)
            base = base_total[chunk_rows]
            ensemble.backend.add_leaf_values(ensemble, base, routed)
            base_total[chunk_rows] = base
            # groups are split between workers; each adds to its own totals
            parallel(
                delayed(_add_chunk_sums)(sums, part, routed, chunk_rows, base, totals)
                for part in _budgets.worker_parts(len(groups), n_jobs)
            )
            # freed before the next chunk is routed, not held beside it
            del routed
            if progress is not None:
                progress(f"tree engine: {chunk_rows[-1] + 1:,} of {n_rows:,} rows done")
    return totals, base_total


def _scored_values(ensemble):
    """What :meth:`AdditiveScore.row_terms` reads of engine outputs:
    probabilities for classifiers, values for regressors."""
    if ensemble.classifier:
        return lambda outputs: ensemble.adapter.scorer_outputs(outputs).proba
    # through the link (exp for a Poisson, gamma or Tweedie booster)
    return lambda outputs: np.reshape(
        ensemble.adapter.scorer_outputs(outputs).values, outputs.shape
    )


def _chunked_additive(estimator, chunks, scoring, y, sample_weight):
    """The additive form of the score when the rows span several chunks,
    else None.

    Within one chunk all rows' outputs are scored at once (see the
    module's docstring); beyond, scoring all rows at once would
    mean routing every chunk again for each batch of groups, and the sums of
    row terms agree with the scorer to floating-point precision.
    """
    if len(chunks) < 2:
        return None
    return AdditiveScore.for_scoring(estimator, scoring, y, sample_weight)


def _scores_with_groups_replaced(
    estimator,
    ensemble,
    X,
    y,
    sample_weight,
    groups,
    replacements,
    scorer,
    n_jobs,
    scoring,
    *,
    start,
    divisor,
    tree_rows=None,
    scored=None,
    progress=None,
    baseline=False,
):
    """Scores of the rows ``scored`` (a mask; None: all) with each group
    ``g`` replaced by each of ``replacements[g]``: summed chunk by chunk
    when the score is additive and the rows span several chunks, else by
    the scorer. Returns them with the unreplaced ``start + sum of leaf
    values`` of every row, or with ``baseline=True`` the score of the
    unreplaced rows (:func:`_base_outputs`, scored as the replaced ones)
    instead.
    ``progress`` (a :class:`~sklearn_fimp._utils._progress.Progress`, or
    None) is told of each chunk or batch done when there are several."""
    if scored is not None:
        y = y[scored]
        sample_weight = None if sample_weight is None else sample_weight[scored]
    chunks = kept(
        ("row chunks", id(ensemble), id(X), tree_rows is None),
        lambda: _budgets.row_chunks(ensemble, X, tree_rows),
        ensemble,
        X,
    )
    additive = _chunked_additive(estimator, chunks, scoring, y, sample_weight)
    if additive is not None:
        totals, base_total = summed_row_terms(
            ensemble,
            X,
            groups,
            replacements,
            n_jobs,
            start=start,
            divisor=divisor,
            additive=additive,
            scored_values=_scored_values(ensemble),
            chunks=chunks,
            tree_rows=tree_rows,
            scored=scored,
            progress=progress,
        )
        if baseline:
            outputs = _base_outputs(ensemble, base_total, divisor)
            values = _scored_values(ensemble)(
                outputs if scored is None else outputs[scored]
            )
            base_total = additive.score(
                additive.row_terms(values, np.arange(len(y))).sum()
            )
        return np.vectorize(additive.score)(totals), base_total
    direct = DirectScore.for_scoring(estimator, scoring, y, sample_weight)
    score_of = _outputs_scorer(ensemble, direct, scorer, y, sample_weight, scored)
    batched = _batched_additive(ensemble, direct, groups)
    if batched is not None:
        scores, base_total = _batched_scores(
            ensemble,
            X,
            groups,
            replacements,
            n_jobs,
            batched,
            start=start,
            divisor=divisor,
            chunks=chunks,
            tree_rows=tree_rows,
            scored=scored,
            progress=progress,
        )
        if baseline:
            base_total = score_of(_base_outputs(ensemble, base_total, divisor))
        return scores, base_total
    scores = {}
    for g, r, outputs, base_total in replaced_outputs(  # noqa: B007 (returned)
        ensemble,
        X,
        groups,
        replacements,
        n_jobs,
        start=start,
        divisor=divisor,
        chunks=chunks,
        tree_rows=tree_rows,
        # a sum over rows (log-loss, R² ...) compares no row with another
        ranks_matter=not scorer_reads_labels_only(scorer)
        and (direct is None or direct.kind != "additive"),
        progress=progress,
    ):
        scores[g, r] = score_of(outputs)
    n_repeats = len(replacements[0]) if len(groups) else 0
    if baseline:
        base_total = score_of(_base_outputs(ensemble, base_total, divisor))
    return score_table(scores, len(groups), n_repeats), base_total


#: Additive scores of probabilities or values: a rounding of the outputs
#: moves them by a rounding (no label or rank flips), so the tasks of a
#: batch are scored together, with no tie to repair.
_BATCHED_KINDS = ("neg_log_loss", "neg_brier_score", "r2", "neg_mean_squared_error")


def _batched_additive(ensemble, direct, groups):
    """The :class:`AdditiveScore` of ``direct`` when the tasks can be
    scored a batch at a time (:data:`_BATCHED_KINDS`, and the adapter
    stores what its row terms read), else None."""
    if direct is None or direct.kind != "additive" or not len(groups):
        return None
    additive = direct.additive
    if additive.kind not in _BATCHED_KINDS:
        return None
    probe = ensemble.adapter.scorer_outputs(np.zeros((1, ensemble.n_outputs)))
    return None if additive.stored_predictions(probe) is None else additive


def _batched_scores(
    ensemble,
    X,
    groups,
    replacements,
    n_jobs,
    additive,
    *,
    start,
    divisor,
    chunks,
    tree_rows,
    scored,
    progress,
):
    """The scores of :func:`_scores_with_groups_replaced` by ``additive``,
    many tasks at once: the unreplaced rows' sum of terms, plus, for the
    rows a task changes, their new terms minus their unreplaced ones, found
    and computed for a batch of tasks in a few array operations (up to
    ``TASK_BYTES`` of changes), where one task at a time spent most of its
    time in small calls and in the rows it does not change. Returns them
    with the unreplaced ``start + sum of leaf values``."""
    n_repeats = len(replacements[0])
    scores = np.empty((len(groups), n_repeats))
    divisor = np.reshape(divisor, (-1, 1)) if np.ndim(divisor) else divisor
    scored_rows = np.arange(X.shape[0]) if scored is None else np.flatnonzero(scored)
    # each row's position among the scored rows (the rows of y)
    position = np.full(X.shape[0], -1)
    position[scored_rows] = np.arange(len(scored_rows))
    terms_of_rows, base_sum = None, 0.0
    for batch, base_total, changes in group_changes(
        ensemble,
        X,
        groups,
        replacements,
        n_jobs,
        tree_rows=tree_rows,
        start=start,
        chunks=chunks,
        progress=progress,
    ):
        if terms_of_rows is None:  # the unreplaced rows' terms, once
            terms_of_rows = _row_terms(
                ensemble,
                additive,
                base_total[scored_rows],
                divisor[scored_rows] if np.ndim(divisor) else divisor,
                np.arange(len(scored_rows)),
            )
            base_sum = terms_of_rows.sum()
        tasks = changes.reshape(len(batch) * n_repeats, -1, changes.shape[3])
        # the changed rows' outputs, stored outputs and terms, up to a few
        # times one task's outputs at once
        step = max(1, _budgets.TASK_BYTES // (4 * max(tasks[0].nbytes, 1)))
        totals = np.full(len(tasks), base_sum)
        for first in range(0, len(tasks), step):
            part = tasks[first : first + step]
            moved = np.any(part != 0, axis=2)
            if scored is not None:
                moved &= scored
            task, row = np.nonzero(moved)
            if not len(task):
                continue
            terms = _row_terms(
                ensemble,
                additive,
                base_total[row] + part[task, row],
                divisor[row] if np.ndim(divisor) else divisor,
                position[row],
            )
            totals[first : first + len(part)] += np.bincount(
                task, weights=terms - terms_of_rows[position[row]], minlength=len(part)
            )
        scores[batch] = np.reshape(
            [additive.score(total) for total in totals], (len(batch), n_repeats)
        )
    return scores, base_total


def _row_terms(ensemble, additive, totals, divisor, rows):
    """``additive``'s terms of the rows ``rows`` (of y) whose sums of leaf
    values are ``totals``."""
    outputs = totals / divisor
    if ensemble.outputs_are_probabilities:
        # changes added out of order can overshoot by a rounding
        np.clip(outputs, 0.0, 1.0, out=outputs)
    stored = ensemble.adapter.scorer_outputs(outputs)
    terms = additive.prediction_terms(additive.stored_predictions(stored), rows)
    # numbers even where y holds them as objects
    return np.asarray(terms, dtype=np.float64)


def _outputs_scorer(ensemble, direct, scorer, y, sample_weight, scored):
    """``score_of(outputs)``: the score of every row's outputs on the rows
    ``scored`` (a mask; None: all), by ``direct``'s formula where it has
    one, else by the scorer."""

    def score_of(outputs):
        if scored is not None:
            outputs = outputs[scored]
        stored = ensemble.adapter.scorer_outputs(outputs)
        value = None if direct is None else direct(stored)
        if value is None:
            value = score_outputs(scorer, stored, y, sample_weight)
        return value

    return score_of


def _base_outputs(ensemble, base_total, divisor):
    """The model's outputs on the unreplaced rows: ``base_total`` is added
    tree by tree in the model's order (``group_changes``), so these are its
    ``predict``'s where the adapter's ``exact_outputs`` says so, and they
    are scored as the replaced outputs are."""
    divisor = np.reshape(divisor, (-1, 1)) if np.ndim(divisor) else divisor
    outputs = base_total / divisor
    if ensemble.outputs_are_probabilities:
        np.clip(outputs, 0.0, 1.0, out=outputs)
    return outputs


def permuted_scores(
    estimator,
    ensemble,
    X,
    y,
    sample_weight,
    groups,
    permutations,
    scorer,
    n_jobs,
    scoring=None,
    progress=None,
    baseline=False,
):
    """Scores with each group permuted, on validation rows (engine path of
    :func:`~sklearn_fimp.permutation_importance`): shape (n_groups,
    n_permutations); with ``baseline=True``, ``(scores, baseline score)``.

    ``X`` is already validated by :func:`engine_input`."""
    return replaced_scores(
        estimator,
        ensemble,
        X,
        y,
        sample_weight,
        groups,
        permutation_tasks(permutations, len(groups)),
        scorer,
        n_jobs,
        scoring=scoring,
        progress=progress,
        baseline=baseline,
    )


def replaced_scores(
    estimator,
    ensemble,
    X,
    y,
    sample_weight,
    groups,
    replacements,
    scorer,
    n_jobs,
    scoring=None,
    progress=None,
    baseline=False,
):
    """Scores with each group ``g`` replaced by each of ``replacements[g]``
    (:class:`~._changes.Permutation` or :class:`~._changes.GivenValues`,
    the same number for every group), on validation rows: shape (n_groups,
    n_replacements); with ``baseline=True``, ``(scores, baseline score)``,
    the score of the unreplaced rows from the same outputs (no ``predict``
    of its own). ``X`` is already validated by :func:`engine_input`."""
    start = ensemble.raw_start(X)
    divisor = float(len(ensemble.terms)) if ensemble.averaged else 1.0
    scores, base = _scores_with_groups_replaced(
        estimator,
        ensemble,
        X,
        y,
        sample_weight,
        groups,
        replacements,
        scorer,
        n_jobs,
        scoring,
        start=start,
        divisor=divisor,
        progress=progress,
        baseline=baseline,
    )
    return (scores, base) if baseline else scores


def oob_permuted_scores(
    estimator,
    ensemble,
    bagged_estimators,
    X,
    y,
    sample_weight,
    groups,
    permutations,
    scorer,
    n_jobs,
    scoring=None,
    progress=None,
):
    """Out-of-bag scores with each group permuted over the training rows
    (engine path of :func:`~sklearn_fimp.oob_permutation_importance`), and
    the sums of the bagged estimators' out-of-bag outputs with their counts,
    as :func:`~sklearn_fimp._importance._bagging.oob_sums` gives them (the
    baseline's input). ``bagged_estimators`` give each tree's
    ``oob_rows``, in the order of the ensemble's terms.

    ``X`` is already validated against the estimator."""
    X = np.ascontiguousarray(X, dtype=ensemble.adapter.input_dtype)
    tree_rows = [bagged.oob_rows for bagged in bagged_estimators]
    count = np.zeros(X.shape[0])
    for rows in tree_rows:
        count[rows] += 1
    scores, total = _scores_with_groups_replaced(
        estimator,
        ensemble,
        X,
        y,
        sample_weight,
        groups,
        permutation_tasks(permutations, len(groups)),
        scorer,
        n_jobs,
        scoring,
        start=np.zeros((X.shape[0], ensemble.n_outputs)),
        divisor=np.maximum(count, 1),
        tree_rows=tree_rows,
        scored=count > 0,
        progress=progress,
    )
    if not ensemble.classifier and total.shape[1] == 1:
        total = total[:, 0]  # as a single-output regressor predicts
    return scores, total, count


def replaced_scorer_outputs(
    ensemble, X, groups, values_of, n_repeats, n_jobs, *, ranks_matter, progress=None
):
    """Yield ``(g, r, outputs, base_outputs)``: the model's outputs on every
    row of X, wrapped for a scorer (``adapter.scorer_outputs``), with the
    columns of group ``g`` replaced by ``values_of(g)[r]`` (shape (n_rows,
    len(groups[g])), values as the trees read them, such as conditional
    draws), and its outputs on X unchanged (the same object for every
    task). The outputs are those of the model's own ``predict`` on X with
    the columns replaced, computed from the rows that leave their paths
    only (engine path of
    :func:`~sklearn_fimp.conditional_permutation_importance`); rows no
    replacement moves keep their unchanged outputs bit for bit.

    ``values_of(g)`` (``n_repeats`` arrays) is called once per group, a
    batch of groups at a time, so that only one batch's values are held.
    ``ranks_matter=False`` (a scorer that reads predicted labels only, and
    per-row losses) skips the repair of ties between rows.
    ``X`` is already validated by :func:`engine_input`.
    """
    start = ensemble.raw_start(X)
    divisor = float(len(ensemble.terms)) if ensemble.averaged else 1.0
    chunks = _budgets.row_chunks(ensemble, X, None)
    batch_size = _budgets.group_batch_size(
        len(groups), n_repeats, X.shape[0], ensemble.n_outputs
    )
    base_outputs = None
    for first in range(0, len(groups), batch_size):
        batch = list(range(first, min(first + batch_size, len(groups))))
        replacements = [
            [
                GivenValues(
                    np.ascontiguousarray(values, dtype=X.dtype).reshape(
                        X.shape[0], len(groups[g])
                    )
                )
                for values in values_of(g)
            ]
            for g in batch
        ]
        for i, r, outputs, base_total in replaced_outputs(
            ensemble,
            X,
            [groups[g] for g in batch],
            replacements,
            n_jobs,
            start=start,
            divisor=divisor,
            chunks=chunks,
            ranks_matter=ranks_matter,
            progress=progress,
        ):
            if base_outputs is None:
                unchanged, _ = outputs_and_ties(
                    ensemble, base_total, np.zeros_like(base_total), divisor
                )
                base_outputs = ensemble.adapter.scorer_outputs(unchanged)
            yield batch[i], r, ensemble.adapter.scorer_outputs(outputs), base_outputs
