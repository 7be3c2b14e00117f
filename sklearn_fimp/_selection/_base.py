"""What the selectors share: the base class of ImportanceSelector and
RecursiveImportanceSelector.

The base holds the scikit-learn plumbing once: the estimator tags that
follow the wrapped estimator, the metadata routing of ``fit``'s parameters
to the estimator, the scorer and the splitter of ``cv``, the one validation
of X and y at the start of ``fit``, the choice of the estimator to fit (the
default forest for the target, or a clone whose unset seeds are shared),
the method's registry entry, and the delegation of ``predict`` and the other
methods to the model refitted on the selected features. A subclass writes
its ``fit`` (which sets ``support_`` and ``estimator_``) and says, in
``_delegates``, whether ``estimator_`` is that refitted model.
"""

import numbers
import warnings
from copy import deepcopy

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import DataConversionWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.model_selection import check_cv
from sklearn.pipeline import Pipeline
from sklearn.utils import get_tags
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_is_fitted

from .._importance._pipeline import for_columns
from .._methods import (
    METHODS,
    check_method,
    resolve_auto,
    signature_defaults,
    takes_missing_values,
    warn_ignored_options,
)
from .._utils._compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    add_note,
    output_config,
    routing_enabled,
    transform_checking_names,
    validate_data,
)
from .._utils._frames import (
    drop_columns,
    is_dataframe,
    is_pandas,
    is_polars,
    nullable_as_float,
)
from .._utils._models import nan_handling
from .._utils._random import with_shared_seed
from .._utils._scoring import SCORING_CONSTRAINT, get_scorer
from .._utils._splits import reusable_cv, routing_splitter
from .._utils._targets import (
    MAX_CLASSES_OF_NUMERIC_TARGET,
    many_whole_numbers,
    target_task,
)
from .._utils._validation import check_finite_target, explain_input_errors

#: What a selector with ``estimator=None`` delegates: the default forest
#: is a classifier or a regressor depending on y, known only after fit.
DEFAULT_ESTIMATOR_METHODS = ("predict", "predict_proba", "predict_log_proba", "score")


def default_estimator(y):
    """A random forest for the target: a classifier for class labels, else a
    regressor (``_utils._targets.target_task``: a numeric target is class
    labels only when it holds at most ``MAX_CLASSES_OF_NUMERIC_TARGET``
    distinct whole numbers)."""
    target = type_of_target(y, input_name="y")
    if target not in (
        "binary",
        "multiclass",
        "multiclass-multioutput",
        "continuous",
        "continuous-multioutput",
    ):
        raise ValueError(
            f"Unknown label type: y has target type {target!r}, for which no "
            "default estimator is defined; pass estimator= a classifier or "
            "regressor that supports it."
        )
    if target_task(y) == "classification":
        return RandomForestClassifier()
    return RandomForestRegressor()


def warn_inferred_target(y, stacklevel=4):
    """Warn when the default forest treats a target of many distinct whole
    numbers as a quantity: ids of many classes look the same (as integers,
    or as floats), and only the user knows which they are."""
    distinct = many_whole_numbers(y)
    if distinct:
        warnings.warn(
            f"estimator=None: y holds {distinct} distinct whole numbers (more "
            f"than {MAX_CLASSES_OF_NUMERIC_TARGET}), so the default forest "
            "treats it as a quantity and fits a RandomForestRegressor. If "
            "they are class labels, pass estimator=RandomForestClassifier() "
            "(or y as strings or a category dtype); if they are a quantity, "
            "pass estimator=RandomForestRegressor() to silence this warning.",
            UserWarning,
            stacklevel=stacklevel,
        )


def select_columns(X, support):
    """Columns of X where ``support`` is True, keeping X's container."""
    return drop_columns(X, np.flatnonzero(~support))


def _estimator_has(attribute):
    """Whether the selector can delegate ``attribute`` to its estimator."""

    def check(self):
        if not self._delegates():
            return False
        if hasattr(self, "estimator_"):
            return hasattr(self.estimator_, attribute)
        if self.estimator is None:
            return attribute in DEFAULT_ESTIMATOR_METHODS
        return hasattr(self.estimator, attribute)

    return check


def transform_selected(selector, X):
    """``X`` reduced to the columns ``selector`` (a fitted ``SelectorMixin``)
    keeps, of the type ``set_output`` asks for; a pandas or polars frame
    asked to return its own type keeps its column dtypes."""
    check_is_fitted(selector)
    config = output_config("transform", selector)
    own_dtypes = is_pandas(X) and not all(
        isinstance(dtype, np.dtype) for dtype in X.dtypes
    )
    if (is_polars(X) and config == "polars") or (own_dtypes and config == "default"):
        # a polars frame kept as is; pandas columns of its own dtypes (str,
        # category ...) as the object array scikit-learn >= 1.9 returns
        # (earlier releases try to convert a frame mixing pandas 3's str and
        # bool columns to float)
        validate_data(selector, X, skip_check_array=True, reset=False)
        kept = np.flatnonzero(selector.get_support())
        if is_polars(X):
            return X.select([X.columns[j] for j in kept])
        return X.iloc[:, kept].to_numpy()
    return transform_checking_names(
        selector, X, lambda X: SelectorMixin.transform(selector, X)
    )


def _same_value(a, b):
    """Whether two parameter values are the same (a callable by identity)."""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except (TypeError, ValueError):
        return False


class BaseImportanceSelector(SelectorMixin, MetaEstimatorMixin, BaseEstimator):
    """Base of the selectors that wrap an estimator and measure importances.

    Subclasses define ``__init__`` (storing at least the parameters of the
    base's ``_parameter_constraints``), their own constraints (the base's
    and theirs) and ``fit``; ``fit`` starts with ``_check_X_y`` and
    ``_routed_params`` and sets ``support_`` and ``estimator_``.
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"]), None],
        "method": [StrOptions({"auto", *METHODS})],
        "scoring": SCORING_CONSTRAINT,
        "cv": ["cv_object"],
        "n_repeats": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_samples": [
            Interval(numbers.Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "n_jobs": [numbers.Integral, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    # ------------------------------------------------------------------
    # scikit-learn plumbing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        estimator = self.estimator
        if estimator is None:
            estimator = RandomForestRegressor()
        estimator_tags = get_tags(estimator)
        # MDI-oob refuses rows with NaN before scikit-learn 1.8; a Pipeline
        # takes them when its steps impute them before a step that refuses
        takes_nan = estimator_tags.input_tags.allow_nan
        if isinstance(estimator, Pipeline):
            takes_nan = nan_handling(estimator) != "refuses"
        tags.input_tags.allow_nan = takes_nan and takes_missing_values(self.method)
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

    #: The parameters the selection in ``support_`` was decided by (and
    #: ``estimator_`` refitted on): set after ``fit``, they would not be
    #: read again (see ``_get_support_mask``).
    _selection_parameters = ()

    def _record_selection_parameters(self):
        """Remember the values ``fit`` decided with."""
        self._fitted_selection = {
            name: getattr(self, name) for name in self._selection_parameters
        }

    def _get_support_mask(self):
        check_is_fitted(self)
        self._check_selection_parameters()
        return self.support_

    def _check_selection_parameters(self):
        """SelectFromModel reads ``threshold`` and ``max_features`` again at
        ``transform``, from importances it keeps. Here the selection is a
        test decided in ``fit`` (and ``estimator_`` is refitted on it), so a
        parameter changed after ``fit`` cannot be honoured without fitting
        again: an error says so, rather than the old selection silently."""
        fitted = getattr(self, "_fitted_selection", {})
        changed = [
            f"{name} from {value!r} to {getattr(self, name)!r}"
            for name, value in fitted.items()
            if not _same_value(value, getattr(self, name))
        ]
        if changed:
            raise ValueError(
                f"{type(self).__name__}: {', '.join(changed)} after fit. The "
                "selection (and estimator_, refitted on it) was decided in fit, "
                "with the earlier value; call fit again to select with the new "
                "one, or set it back."
            )

    def get_metadata_routing(self):
        """Routing of fit parameters to the estimator, the scorer and the
        splitter.

        Returns
        -------
        routing : MetadataRouter
            ``fit`` parameters go to the estimator's ``fit``, to the
            scorer's ``score`` (the weights of the scores and importances)
            and, when ``cv`` is given, to its splitter's ``split``
            (``groups`` for a group-aware splitter such as GroupKFold).
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
            scorer=estimator
            if self.scoring is None
            else get_scorer(estimator, self.scoring),
            method_mapping=MethodMapping().add(caller="fit", callee="score"),
        )
        if self.cv is not None:
            router.add(
                splitter=routing_splitter(self.cv),
                method_mapping=MethodMapping().add(caller="fit", callee="split"),
            )
        return router

    def _routed_params(self, groups, fit_params):
        """Parameters for the estimator's fit, the importance's weights and
        the splitter of ``cv``.

        With metadata routing enabled they go where the estimator, the
        scorer and the splitter request them; otherwise every parameter goes
        to ``fit``, ``sample_weight`` to the scores as well and ``groups``
        to the splitter only (as scikit-learn's meta-estimators pass
        ``**fit_params`` and ``groups``).
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
    # the start of fit

    def _check_X_y(self, X, y):
        """X and y validated (the one validation of X in ``fit``), and the
        feature names."""
        name = type(self).__name__
        if y is None:
            raise ValueError(
                f"{name} requires y to be passed, but the target y is None. Pass "
                "the target values of the rows of X."
            )
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(
                f"X is a sparse matrix; {name} selects (and adds) dense columns. "
                "Convert it with X.toarray()."
            )
        frame = is_dataframe(X)
        X = validate_data(
            self,
            X,
            reset=True,
            dtype=None,
            ensure_all_finite=not get_tags(self).input_tags.allow_nan,
            ensure_min_samples=2,
            skip_check_array=frame,
        )
        if frame and (X.shape[0] < 2 or X.shape[1] < 1):
            raise ValueError(
                f"X has shape {X.shape}; {name} needs at least 2 samples and 1 feature."
            )
        X = nullable_as_float(X)
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

    def _estimator_to_fit(self, y, seed):
        """A clone of the estimator with its unset seeds set to ``seed``, or
        the default forest for the target with that seed."""
        if self.estimator is None:
            return default_estimator(y).set_params(random_state=seed)
        return with_shared_seed(self.estimator, seed)

    def _warn_inferred_target(self, y):
        """With ``estimator=None``, warn_inferred_target (once per fit)."""
        if self.estimator is None and not getattr(self, "prefit", False):
            warn_inferred_target(y, stacklevel=5)

    def _method_entry(self, estimator, y, X, *, prefit=False, dependent_rows=False):
        """The registry entry of ``method`` ("auto" resolved), after checking
        that the estimator (and y, ``prefit``) allow it, and
        warning of the parameters it ignores. ``dependent_rows``: the user's
        cv splits time-ordered or grouped rows (``_rows.py``)."""
        name = self.method
        if name == "auto":
            name = resolve_auto(estimator, y, X=X, dependent_rows=dependent_rows)
        method = METHODS[name]
        check_method(method, estimator, y=y, prefit=prefit)
        self._warn_ignored_parameters(method, dependent_rows=dependent_rows)
        return method

    #: The parameters only the importance method reads: ``fit`` warns of
    #: each one set away from its default that the resolved method ignores.
    #: A selector that reads one itself leaves it out (RecursiveImportance-
    #: Selector scores its subsets with ``scoring`` on the splits of ``cv``).
    _method_parameters = ("scoring", "n_repeats", "max_samples", "cv")

    def _selector_parameters(self):
        """Those of ``_method_parameters`` the selector reads itself with
        its current parameters (none here)."""
        return ()

    def _warn_ignored_parameters(self, method, *, dependent_rows=False):
        """A UserWarning for each of ``_method_parameters`` set away from its
        default that ``method`` (None: ``importance_getter``) ignores
        (``_methods.warn_ignored_options``). A ``cv`` that splits grouped or
        time-ordered rows is used whatever the method: the probes keep the
        rows' dependence (``_rows.py``)."""
        names = [
            name
            for name in self._method_parameters
            if not (name == "cv" and dependent_rows)
            and name not in self._selector_parameters()
        ]
        warn_ignored_options(
            [method],
            {name: getattr(self, name) for name in names},
            signature_defaults(type(self).__init__, names),
            owner=type(self).__name__,
        )

    def _check_classes(self, estimator, y, *, prefit=False):
        """A classifier needs two classes: fitted on one, every feature is
        useless and the selection would be arbitrary."""
        if prefit or not is_classifier(estimator):
            return
        for column in y.reshape(len(y), -1).T:
            classes = np.unique(column)
            if len(classes) == 1:
                label = _item(classes[0])
                raise ValueError(
                    f"y has a single class, {label!r}: a classifier fitted "
                    "on it predicts that class whatever the features, so no "
                    "feature is important and any selection would be "
                    "arbitrary. Pass rows of at least two classes."
                )
            labels, counts = np.unique(column, return_counts=True)
            if (counts == 1).any() and len(labels) > 2:
                single = [repr(_item(label)) for label in labels[counts == 1]]
                warnings.warn(
                    f"class {', '.join(single[:3])} of y has one row: it is "
                    "fitted on in every split and scored in none, and it "
                    f"makes the model one of {len(labels)} classes, which a "
                    "booster fits a tree per class per iteration for "
                    "(HistGradientBoosting on 300 rows of 2 classes and one "
                    "row of a third: a plain fit 2.5 times as long). Merge "
                    "the class with another or remove its row if it is not "
                    "meant.",
                    UserWarning,
                    stacklevel=4,
                )

    def _cv_with_splits(self, estimator, X, y, split_kwargs):
        """``cv``, or its splits when split parameters (the rows' ``groups``)
        were passed to ``fit`` or ``cv`` is an iterable of splits (read once,
        ``reusable_cv``)."""
        if not split_kwargs:
            return reusable_cv(self.cv)
        if self.cv is None:
            raise ValueError(
                f"fit got {', '.join(sorted(split_kwargs))}=, which go to the "
                "splitter of cv, and cv=None. Pass a group-aware splitter, "
                "e.g. cv=GroupKFold(5), or leave the rows' groups out (the "
                "groups of features are the selector's groups= parameter)."
            )
        splitter = check_cv(self.cv, y, classifier=is_classifier(estimator))
        return list(splitter.split(X, y, **split_kwargs))

    def _refit_selected(self, estimator, X, y, fit_kwargs):
        """A clone of ``estimator`` fitted on the selected columns of X."""
        selected = int(self.support_.sum())
        note = (
            f"{type(self).__name__}: raised by the refit on the {selected} "
            "selected features."
        )
        # a ColumnTransformer listing columns lists the selected ones
        names = getattr(self, "feature_names_in_", [])
        estimator = for_columns(estimator, self.support_, names)
        try:
            return clone(estimator).fit(
                select_columns(X, self.support_), y, **fit_kwargs
            )
        except (KeyError, ValueError) as exc:
            if not isinstance(estimator, Pipeline):
                add_note(exc, note)
                raise
            raise ValueError(
                f"fitting the Pipeline on the {selected} selected columns failed "
                f"({exc}). A step that lists columns by name needs them all; "
                "select columns with make_column_selector, or pass refit=False "
                "(ImportanceSelector) and put the model after the selector."
            ) from exc
        except Exception as exc:
            add_note(exc, note)
            raise

    # ------------------------------------------------------------------
    # delegation to the refitted estimator

    def _delegates(self):
        """Whether ``estimator_`` is (or will be) the estimator refitted on
        the selected features, to which ``predict`` and the others go."""
        return True

    @explain_input_errors
    def _selected_input(self, X):
        """X checked against fit and reduced to the selected columns, in the
        container the estimator was refitted on (a frame stays a frame, so
        that a Pipeline selecting columns by name still finds them)."""
        check_is_fitted(self)
        frame = is_dataframe(X)
        X = validate_data(
            self,
            X,
            reset=False,
            dtype=None,
            ensure_all_finite=not get_tags(self).input_tags.allow_nan,
            skip_check_array=frame,
        )
        if frame and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input."
            )
        return select_columns(nullable_as_float(X), self._get_support_mask())

    def transform(self, X):
        """Reduce X to the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        X_selected : ndarray or DataFrame of shape (n_samples, n_selected)
            Of the type ``set_output`` asks for; a pandas or polars frame
            asked to return its own type keeps its column dtypes.
        """
        return transform_selected(self, X)

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        X = self._selected_input(X)  # checks fitting before estimator_ is read
        return self.estimator_.predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._selected_input(X)  # checks fitting before estimator_ is read
        return self.estimator_.predict_proba(X)

    @available_if(_estimator_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log of the class probabilities of ``estimator_`` on the selected
        features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        X = self._selected_input(X)  # checks fitting before estimator_ is read
        return self.estimator_.predict_log_proba(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision function of ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)

        Returns
        -------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        X = self._selected_input(X)  # checks fitting before estimator_ is read
        return self.estimator_.decision_function(X)

    @available_if(_estimator_has("score"))
    def score(self, X, y, **score_params):
        """Score of ``estimator_`` on the selected features.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features_in_)
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


def _item(label):
    """A class label as a Python value (a numpy scalar's ``item()``)."""
    return label.item() if hasattr(label, "item") else label
