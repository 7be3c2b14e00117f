"""The registry of importance methods: one entry per measure.

Each entry says what a method is called (in plots, the report and error
messages), which public function computes it and which private core the
selectors call with input they have already validated, what it needs from
the model and the rows, and how its values are read (unit and scale).
:class:`~sklearn_fimp.ImportanceSelector`, the Displays and the report
dispatch from here, and the capability checks below give their error
messages. Adding a measure is one entry in ``METHODS`` (and its module in
``_importance/``).
"""

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._importance._conditional import (
    _conditional_permutation_importance,
    conditional_permutation_importance,
    fitted_samplers,
)
from ._importance._conditional_samplers import samplers_of_rows
from ._importance._drop_column import _drop_column_importance, drop_column_importance
from ._importance._mdi import _mdi_importance, mdi_importance
from ._importance._oob_mdi import _oob_mdi_importance, oob_mdi_importance
from ._importance._oob_permutation import (
    _oob_permutation_importance,
    oob_permutation_importance,
)
from ._importance._permutation import _permutation_importance, permutation_importance
from ._importance._shap import _shap_importance, shap_importance
from ._utils._compat import MISSING_VALUES_ROUTED_AS_FITTED
from ._utils._models import (
    has_bagged_trees,
    has_trees,
    single_output,
    supports_oob,
    supports_tree_shap,
)
from ._utils._result import importance_result

#: What a method measures on. MODEL_ONLY: the fitted model alone (X and y
#: are not used); TRAINING_ROWS: the rows the model was fitted on, each
#: scored by the members that did not see it (out of bag); HELD_OUT_ROWS:
#: rows the model did not train on; REFITS: the method fits clones of the
#: model itself.
MODEL_ONLY = "model"
TRAINING_ROWS = "training"
HELD_OUT_ROWS = "held_out"
REFITS = "refits"

#: Scorers whose values lie in [0, 1] (or at most 1): a drop of 0.1 in them
#: is a large effect whatever the data.
UNIT_SCALE_SCORINGS = frozenset(
    {
        "accuracy",
        "balanced_accuracy",
        "r2",
        "explained_variance",
        "roc_auc",
        "roc_auc_ovr",
        "roc_auc_ovo",
        "roc_auc_ovr_weighted",
        "roc_auc_ovo_weighted",
        "average_precision",
        "f1",
        "f1_macro",
        "f1_micro",
        "f1_weighted",
        "precision",
        "precision_macro",
        "precision_micro",
        "precision_weighted",
        "recall",
        "recall_macro",
        "recall_micro",
        "recall_weighted",
        "jaccard",
        "top_k_accuracy",
    }
)


def _score_drop_unit(result):
    scoring = result.get("scoring")
    if result.get("scale", False):
        return "score drop / standard error"
    if isinstance(scoring, str):
        return f"drop in {scoring}"
    return "drop in score"


def _score_drop_on_unit_scale(result):
    scoring = result.get("scoring")
    if result.get("scale", False):
        return False
    return scoring is None or (
        isinstance(scoring, str) and scoring in UNIT_SCALE_SCORINGS
    )


def _any_model(estimator):
    return True


#: The rows a round of probes measures by SHAP at most: TreeExplainer's exact
#: values cost some milliseconds per row on a forest of the rounds' 30
#: trees, as much as the round's fit for a few hundred rows.
SHAP_ROUND_ROWS = 256


@dataclass(frozen=True)
class ImportanceMethod:
    """One importance measure and what it needs.

    Attributes
    ----------
    name : str
        The ``method=`` value.
    title : str
        Its name in plots, legends and the report ("MDI-oob").
    description : str
        One sentence for the report.
    function : callable
        The public function (validates its input).
    core : callable
        The private core: validated X and y, resolved ``labels`` and
        ``groups``, a drawn ``seed``.
    rows : str
        What it measures on: MODEL_ONLY, TRAINING_ROWS, HELD_OUT_ROWS or
        REFITS.
    reads_model : bool
        Whether it reads the model's internals (trees, bags), which a
        Pipeline hides: such a method cannot map importances back to the
        Pipeline's input columns.
    supports : callable
        ``supports(estimator)``: whether a (possibly unfitted) model has
        what the method reads.
    requirement : str
        What ``supports`` asks for, in words, for error messages.
    single_output : bool
        Whether it needs a single target.
    unit, on_unit_scale : callable
        ``unit(result)``: the axis label of a result; ``on_unit_scale``:
        whether its values are at most about 1 by construction.
    options : frozenset of str
        The keyword arguments the core takes (beyond the model, X and y);
        ``tests/test_methods.py`` checks them against its signature.
    parameters : frozenset of str
        The keyword arguments the public function takes, likewise.
    round_rows : int or None
        The rows one round of a selector's probes measures at most
        (``max_samples="auto"``), where the method costs far more per row
        than a permutation; None: the selector's default
        (``_selection/_measuring/_budget.py``).
    prepare, take : callable or None
        ``prepare(X, options)``: what the method computes from X alone (not
        from the model), as core options over X's rows, which a caller
        measuring the same X with several models (a selector's rounds)
        computes once; ``take(prepared, rows)``: those options restricted
        to the rows ``rows`` (None: all). None: nothing to prepare.
    additive : bool
        Whether a group's importance is its columns' summed (MDI, MDI-oob:
        their decreases in impurity add up over the splits): ``measure``
        then sums the core's per-column values over the ``groups`` given.
    in_sample_impurity : bool
        Whether it is the trees' decrease in impurity on their training
        rows, the importance a fitted tree model reports itself
        (``feature_importances_``, pyspark.ml's ``featureImportances``,
        which ``distributed_select_features`` reads).
    marginal : bool
        Whether it breaks a column by values drawn regardless of the other
        columns (a permutation), so that a column of a correlated pair,
        broken alone, makes rows unlike any the model was fitted on: the
        selector's rounds then test a linear model's correlated columns
        together (``_round_models.LinearModels.tested_groups``).
    linear_path : bool
        Whether its core measures a linear model through its coefficients
        (``_importance/_linear.py``: a few operations per row), so that a
        probe costs a linear model's rounds little and ``n_probes="auto"``
        gives it more (``_round_models.LinearModels.probes_per_feature``).
    misses_redundant : bool
        Whether redundant columns defeat it: its importance is the score
        the model loses when one column is broken (permuted, replaced or
        dropped), which a column that others stand in for barely costs.
        ``method="auto"`` composes such a test with the round model's own
        contributions (``_composed.contribution_method``).
    """

    name: str
    title: str
    description: str
    function: Callable
    core: Callable
    rows: str
    reads_model: bool
    supports: Callable
    requirement: str
    single_output: bool
    unit: Callable
    on_unit_scale: Callable
    options: frozenset
    parameters: frozenset
    round_rows: int | None = None
    prepare: Callable | None = None
    take: Callable | None = None
    additive: bool = False
    in_sample_impurity: bool = False
    marginal: bool = False
    linear_path: bool = False
    misses_redundant: bool = False

    @property
    def fits_model(self):
        """Whether a caller fits the model it measures (the method does not
        refit it itself)."""
        return self.rows != REFITS

    @property
    def reads_rows(self):
        """Whether the method reads the rows it is given (not the model
        alone)."""
        return self.rows != MODEL_ONLY

    @property
    def measures_held_out(self):
        """Whether the method scores rows held out of the model's fit, so
        that a caller fitting the model holds some rows out of it."""
        return self.rows == HELD_OUT_ROWS

    @property
    def repeats(self):
        """Whether the method measures each column ``n_repeats`` times
        (permutations or draws): its public function takes ``n_repeats``."""
        return "n_repeats" in self.parameters

    def compute(self, estimator, X, y, **options):
        """Call the public function with the options it declares taking, of
        ``options`` (each of which some method's function takes)."""
        arguments = (estimator, X, y) if self.reads_rows else (estimator,)
        return self.function(*arguments, **_declared(self.parameters, options))

    def measure(self, estimator, X, y, **options):
        """Call the private core with the options it declares taking, of
        ``options`` (X, y, groups and seed already validated, resolved and
        drawn; each option one that some method's core takes)."""
        arguments = (estimator, X, y) if self.reads_rows else (estimator,)
        groups = options.get("groups")
        if not self.additive or groups is None:
            return self.core(*arguments, **_declared(self.options, options))
        columns = [f"x{j}" for j in range(X.shape[1])]
        result = self.core(
            *arguments, **_declared(self.options, dict(options, labels=columns))
        )
        return importance_result(
            np.array([result.importances[g].sum(axis=0) for g in groups]),
            options["labels"],
            groups=list(groups),
            method=self.name,
            **({"n_trees": result.n_trees} if "n_trees" in result else {}),
        )


def _declared(declared, options):
    """The ``options`` in ``declared``; an option no method declares is a
    caller's mistake (a renamed keyword), not one to drop silently."""
    unknown = set(options) - ALL_OPTIONS
    if unknown:
        raise TypeError(
            f"no importance method takes the option(s) {sorted(unknown)}; "
            f"the methods take {sorted(ALL_OPTIONS)}."
        )
    return {key: value for key, value in options.items() if key in declared}


#: Options of the permutation cores (and the public functions' ``random_state``
#: in place of the cores' ``seed``, ``labels`` and ``groups``).
_PERMUTATION = ("sample_weight", "scoring", "n_repeats", "max_samples", "n_jobs")
_PUBLIC = ("groups", "ungrouped", "sample_weight", "n_jobs", "verbose", "random_state")


METHODS = {
    method.name: method
    for method in [
        ImportanceMethod(
            name="mdi",
            title="MDI",
            description="mean decrease in impurity, read from the trees, on "
            "training rows",
            function=mdi_importance,
            core=_mdi_importance,
            rows=MODEL_ONLY,
            reads_model=True,
            supports=has_trees,
            requirement="a tree model (DecisionTree*, RandomForest*, "
            "ExtraTrees*, Bagging* of trees, GradientBoosting*, "
            "HistGradientBoosting*, XGBoost or LightGBM trees)",
            additive=True,
            in_sample_impurity=True,
            single_output=False,
            unit=lambda result: "share of impurity decrease",
            on_unit_scale=lambda result: (
                result.get("normalization", "sklearn") is not None
            ),
            options=frozenset(("labels", "normalization")),
            parameters=frozenset(("normalization",)),
        ),
        ImportanceMethod(
            name="oob_mdi",
            title="MDI-oob",
            description="impurity decreases re-scored on out-of-bag rows",
            function=oob_mdi_importance,
            core=_oob_mdi_importance,
            rows=TRAINING_ROWS,
            reads_model=True,
            supports=has_bagged_trees,
            requirement="bagged decision trees fitted with bootstrap=True "
            "(RandomForest*, ExtraTrees*(bootstrap=True), Bagging* of trees)",
            additive=True,
            single_output=True,
            unit=lambda result: "out-of-bag impurity decrease",
            on_unit_scale=lambda result: False,
            options=frozenset(("labels", "sample_weight", "centre_target", "n_jobs")),
            parameters=frozenset(("sample_weight", "n_jobs")),
        ),
        ImportanceMethod(
            name="permutation",
            title="permutation",
            description="drop in the held-out score when the column is shuffled",
            function=permutation_importance,
            core=_permutation_importance,
            rows=HELD_OUT_ROWS,
            reads_model=False,
            supports=_any_model,
            requirement="a fitted model or Pipeline",
            marginal=True,
            linear_path=True,
            misses_redundant=True,
            single_output=False,
            unit=_score_drop_unit,
            on_unit_scale=_score_drop_on_unit_scale,
            options=frozenset(("labels", "groups", "seed", *_PERMUTATION, "verbose")),
            parameters=frozenset((*_PUBLIC, "scoring", "n_repeats", "max_samples")),
        ),
        ImportanceMethod(
            name="oob_permutation",
            title="out-of-bag permutation",
            description="drop in the out-of-bag score when the column is shuffled",
            function=oob_permutation_importance,
            core=_oob_permutation_importance,
            rows=TRAINING_ROWS,
            reads_model=True,
            supports=supports_oob,
            requirement="out-of-bag rows (a RandomForest*, ExtraTrees* or "
            "Bagging* model with bootstrap=True)",
            marginal=True,
            misses_redundant=True,
            single_output=True,
            unit=_score_drop_unit,
            on_unit_scale=_score_drop_on_unit_scale,
            options=frozenset(
                (
                    "labels",
                    "groups",
                    "seed",
                    *_PERMUTATION,
                    "per_tree",
                    "scale",
                    "verbose",
                )
            ),
            parameters=frozenset(
                (*_PUBLIC, "scoring", "n_repeats", "max_samples", "per_tree", "scale")
            ),
        ),
        ImportanceMethod(
            name="conditional_permutation",
            title="conditional permutation",
            description="drop in the held-out score when the column is replaced "
            "by a draw given the other features",
            function=conditional_permutation_importance,
            core=_conditional_permutation_importance,
            rows=HELD_OUT_ROWS,
            reads_model=False,
            supports=_any_model,
            requirement="a fitted model or Pipeline",
            misses_redundant=True,
            single_output=False,
            unit=_score_drop_unit,
            on_unit_scale=_score_drop_on_unit_scale,
            options=frozenset(
                (
                    "labels",
                    "groups",
                    "seed",
                    *_PERMUTATION,
                    "sampler",
                    "categorical_threshold",
                    "row_groups",
                    "samplers",
                    "probe_groups",
                    "verbose",
                )
            ),
            parameters=frozenset(
                (
                    *_PUBLIC,
                    "scoring",
                    "n_repeats",
                    "max_samples",
                    "sampler",
                    "categorical_threshold",
                    "row_groups",
                )
            ),
            prepare=lambda X, options: {
                "samplers": fitted_samplers(
                    X,
                    options["groups"],
                    options.get("sampler", "forest"),
                    options.get("categorical_threshold", 10),
                    options["seed"],
                    options.get("n_jobs"),
                    options.get("probe_groups", 0),
                )
            },
            take=lambda prepared, rows: {
                "samplers": samplers_of_rows(prepared["samplers"], rows)
            },
        ),
        ImportanceMethod(
            name="drop_column",
            title="drop-column",
            description="drop in the held-out score when the model is retrained "
            "without the column",
            function=drop_column_importance,
            core=_drop_column_importance,
            rows=REFITS,
            reads_model=False,
            supports=_any_model,
            requirement="a model or Pipeline that can be refitted",
            misses_redundant=True,
            single_output=False,
            unit=_score_drop_unit,
            on_unit_scale=_score_drop_on_unit_scale,
            options=frozenset(
                (
                    "labels",
                    "groups",
                    "seed",
                    "sample_weight",
                    "fit_params",
                    "scoring",
                    "cv",
                    "n_jobs",
                    "verbose",
                )
            ),
            parameters=frozenset((*_PUBLIC, "scoring", "cv")),
        ),
        ImportanceMethod(
            name="shap",
            title="mean |SHAP|",
            description="mean absolute SHAP value (exact TreeSHAP: the "
            "booster's own for LightGBM, XGBoost and CatBoost, shap's "
            "TreeExplainer, from the optional shap package, for scikit-learn's "
            "trees) on held-out rows",
            function=shap_importance,
            core=_shap_importance,
            rows=HELD_OUT_ROWS,
            reads_model=True,
            supports=supports_tree_shap,
            requirement="a LightGBM, XGBoost or CatBoost model, or a "
            "scikit-learn tree model shap's TreeExplainer reads (DecisionTree*, "
            "RandomForest*, ExtraTrees*, GradientBoosting*, "
            "HistGradientBoosting*)",
            single_output=False,
            unit=lambda result: "mean |SHAP value|",
            on_unit_scale=lambda result: False,
            options=frozenset(
                ("labels", "groups", "seed", "sample_weight", "max_samples")
            ),
            parameters=frozenset(
                ("groups", "ungrouped", "sample_weight", "max_samples", "random_state")
            ),
            round_rows=SHAP_ROUND_ROWS,
        ),
    ]
}


#: Every option some method's core or public function takes.
ALL_OPTIONS = frozenset().union(
    *(method.options | method.parameters for method in METHODS.values())
)


def resolve_auto(estimator, y, *, X=None, dependent_rows=False):
    """The method "auto" stands for: MDI-oob for bagged trees (a group's is
    its columns' summed; out-of-bag permutation when X holds missing values
    and scikit-learn is older than 1.8, whose forests route them at fit
    otherwise than at predict), out-of-bag permutation for other bagged
    models, permutation on held-out rows otherwise. With ``dependent_rows``
    (time-ordered or grouped rows, split by the user's cv) always
    permutation on the cv's held-out rows: out-of-bag rows are the
    neighbours of in-bag rows, and what a model fits to neighbours scores
    there as if it generalised."""
    if _hides_model(estimator) or not single_output(y) or dependent_rows:
        return "permutation"
    oob_mdi_reads_X = MISSING_VALUES_ROUTED_AS_FITTED or not _has_missing(X)
    if has_bagged_trees(estimator) and oob_mdi_reads_X:
        return "oob_mdi"
    if supports_oob(estimator):
        return "oob_permutation"
    return "permutation"


def takes_missing_values(name):
    """Whether ``method=name`` ("auto" included) measures rows with missing
    values when the model takes them: MDI-oob does from scikit-learn 1.8
    (before, forests route such rows at fit otherwise than at predict, and
    "auto" then picks out-of-bag permutation instead)."""
    return name != "oob_mdi" or MISSING_VALUES_ROUTED_AS_FITTED


def _has_missing(X):
    """Whether a numeric X holds NaN (False for None or non-numeric X)."""
    if X is None:
        return False
    try:
        return bool(np.isnan(np.asarray(X, dtype=np.float64)).any())
    except (TypeError, ValueError):
        return False


def _hides_model(estimator):
    from sklearn.pipeline import Pipeline

    return isinstance(estimator, Pipeline)


def check_method(method, estimator, *, y=None, prefit=False):
    """Raise a ValueError saying why ``method`` cannot measure ``estimator``
    (with this target and ``prefit``), and what to use instead (every method
    measures groups of columns too).
    """
    name = f"{type(estimator).__name__}(...)"
    if method.reads_model and _hides_model(estimator):
        raise ValueError(
            f"method={method.name!r} reads the model's trees or out-of-bag rows, "
            f"but estimator={name} is a Pipeline whose steps transform X first, "
            "so its importances cannot be mapped back to X's columns. Use "
            "method='permutation' or 'drop_column', which permute or drop the "
            "Pipeline's raw input columns."
        )
    if not method.supports(estimator):
        alternatives = [
            repr(other.name)
            for other in METHODS.values()
            if other.name != method.name and other.supports(estimator)
        ]
        raise ValueError(
            f"method={method.name!r} needs {method.requirement}, and "
            f"estimator={name} is not one. Use method="
            + ", ".join(alternatives[:-1])
            + (" or " if len(alternatives) > 1 else "")
            + alternatives[-1]
            + (
                ", or an estimator with bootstrap=True."
                if method.name.startswith("oob")
                else "."
            )
        )
    if y is not None and method.single_output and not single_output(y):
        raise ValueError(
            f"method={method.name!r} supports a single target, and y has "
            f"{y.shape[1]} columns. Use method='permutation'."
        )
    if prefit and method.rows == REFITS:
        raise ValueError(
            f"method={method.name!r} refits the model without each feature, "
            "which prefit=True rules out. Use method='permutation' with "
            "validation rows, or prefit=False."
        )


#: Options that choose the rows held out of the model's fit (a selector's
#: ``cv``, ``distributed_select_features``'s ``test_size``): used by the
#: methods that score held-out rows or refit on splits.
SPLIT_OPTIONS = frozenset(("cv", "test_size"))


def uses_option(method, option):
    """Whether registry entry ``method`` uses ``option`` (None stands for a
    selector's ``importance_getter``, which reads the model's own
    importances and uses none): a split option (``SPLIT_OPTIONS``) where it
    scores held-out rows or refits, any other where its public function
    takes a parameter of that name (``ImportanceMethod.parameters``)."""
    if method is None:
        return False
    if option in SPLIT_OPTIONS:
        return method.rows in (HELD_OUT_ROWS, REFITS)
    return option in method.parameters


def signature_defaults(function, names):
    """The defaults of ``function``'s parameters ``names``, by name."""
    parameters = inspect.signature(function).parameters
    return {name: parameters[name].default for name in names}


def _is_default(value, default):
    if value is default:
        return True
    scalar = (str, bool, int, float, type(None))
    return (
        isinstance(value, scalar)
        and isinstance(default, scalar)
        and (type(value) is type(default) and value == default)
    )


def warn_ignored_options(methods, options, defaults, *, owner):
    """Warn once per option that is set away from its default and that none
    of ``methods`` uses (``uses_option``): a ``UserWarning`` that names the
    option, its value, the method(s) that ignore it and those that would use
    it.

    A warning rather than an error, as scikit-learn warns of a parameter
    the chosen variant ignores (LogisticRegression's ``l1_ratio`` without
    the elastic-net penalty): ``method="auto"`` resolves by the estimator,
    so the same parameters go to a search over estimators or methods in
    which some candidates ignore them, and what is computed is otherwise
    what was asked. Combinations that cannot be computed are errors
    (``check_method``).

    Parameters
    ----------
    methods : list of ImportanceMethod or None
        The resolved method(s); None for ``importance_getter``.
    options : dict
        Option name to the value passed.
    defaults : dict
        Option name to its default (an option without one is never
        reported).
    owner : str
        Who takes the options, for the message ("ImportanceSelector").
    """
    names = [
        "importance_getter (the model's own importances)"
        if m is None
        else f"method={m.name!r}"
        for m in methods
    ]
    for option, value in options.items():
        if option not in defaults or _is_default(value, defaults[option]):
            continue
        if any(uses_option(method, option) for method in methods):
            continue
        users = [name for name, entry in METHODS.items() if uses_option(entry, option)]
        which = (
            f"{names[0]} ignores it"
            if len(names) == 1
            else f"none of {', '.join(names)} uses it"
        )
        warnings.warn(
            f"{owner}: {option}={value!r} has no effect: {which}. It applies "
            f"to method={' or '.join(repr(u) for u in users)}; leave {option} "
            f"at its default ({defaults[option]!r}) to silence this warning.",
            UserWarning,
            stacklevel=_stacklevel_of_caller(),
        )


def _stacklevel_of_caller():
    """The ``stacklevel`` of a warning issued by the caller of this function
    that points at the first frame outside sklearn_fimp and scikit-learn
    (the user's line, whatever the wrappers in between)."""
    import os

    import sklearn

    # this module lies at the top of the sklearn_fimp package
    inside = tuple(
        os.path.dirname(path) + os.sep for path in (sklearn.__file__, __file__)
    )
    frame, level = inspect.currentframe().f_back, 1
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level
