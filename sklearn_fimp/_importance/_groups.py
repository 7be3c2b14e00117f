"""Feature groups: resolving user-given groups, and finding collinear ones."""

import numbers

import numpy as np
import scipy.sparse
from scipy.cluster import hierarchy
from scipy.spatial.distance import squareform
from scipy.stats import rankdata

from .._utils._compat import Interval, StrOptions, validate_params
from .._utils._frames import check_table, is_pandas, is_polars, take_rows
from .._utils._random import evaluation_rows
from .._utils._validation import explain_input_errors

UNGROUPED_OPTIONS = ("separate", "together", "drop")


def _member_position(member, feature_names, label):
    """Column position of a group member given by name or by position."""
    if isinstance(member, numbers.Integral) and not isinstance(member, bool):
        if 0 <= member < len(feature_names):
            return int(member)
        raise ValueError(
            f"groups: group {label!r} names column position {member}, but X has "
            f"{len(feature_names)} columns; use positions 0 to "
            f"{len(feature_names) - 1} or column names."
        )
    if isinstance(member, str):
        matches = np.flatnonzero(feature_names == member)
        if len(matches):
            return int(matches[0])
        known = ", ".join(repr(str(n)) for n in feature_names[:10])
        more = ", ..." if len(feature_names) > 10 else ""
        raise ValueError(
            f"groups: group {label!r} names unknown feature {member!r}; the "
            f"features of X are [{known}{more}]. Use those names or column "
            "positions."
        )
    raise TypeError(
        f"groups: group {label!r} has member {member!r} of type "
        f"{type(member).__name__}; name features by column name (str) or "
        "position (int)."
    )


def _is_scalar_member(item):
    return isinstance(item, (str, numbers.Integral))


def resolve_groups(groups, feature_names, X=None, *, ungrouped="separate"):
    """Turn the ``groups`` parameter into labels and column positions.

    Parameters
    ----------
    groups : None, "auto", list or dict
        None: one group per feature. "auto": :func:`feature_groups` of ``X``.
        A list whose items are a feature (name or position) or a list of
        features; a dict ``{label: features}``. Groups may overlap.
    feature_names : ndarray of str
    X : array-like, optional
        Needed for ``groups="auto"``.
    ungrouped : {"separate", "together", "drop"}
        What happens to features no group mentions: one group each, one
        group labelled "other", or left out.

    Returns
    -------
    labels : list of str
    members : list of ndarray of int
    """
    feature_names = np.asarray(feature_names, dtype=object)
    n_features = len(feature_names)
    if groups is None:
        return [str(n) for n in feature_names], [
            np.array([j]) for j in range(n_features)
        ]
    if isinstance(groups, str):
        if groups != "auto":
            raise ValueError(
                f"groups={groups!r} is not supported; pass None, 'auto', a list "
                "of features or lists of features, or a dict {label: features}."
            )
        groups = feature_groups(X)
    if isinstance(groups, dict):
        items = [(str(label), members) for label, members in groups.items()]
    elif isinstance(groups, (list, tuple)):
        items = [(None, g) for g in groups]
    else:
        raise TypeError(
            f"groups must be None, 'auto', a list or a dict; got "
            f"{type(groups).__name__}."
        )
    if ungrouped not in UNGROUPED_OPTIONS:
        raise ValueError(
            f"ungrouped={ungrouped!r} is not supported; use one of {UNGROUPED_OPTIONS}."
        )

    labels, members = [], []
    for label, group in items:
        group_list = [group] if _is_scalar_member(group) else list(group)
        shown = label if label is not None else "+".join(map(str, group_list))
        if not group_list:
            raise ValueError(
                f"groups: group {shown!r} is empty; give it at least one feature "
                "or remove it."
            )
        positions = [_member_position(m, feature_names, shown) for m in group_list]
        positions = list(dict.fromkeys(positions))
        if label is None:
            label = "+".join(str(feature_names[p]) for p in positions)
        labels.append(label)
        members.append(np.asarray(positions, dtype=np.intp))

    mentioned = np.zeros(n_features, dtype=bool)
    for positions in members:
        mentioned[positions] = True
    rest = np.flatnonzero(~mentioned)
    if len(rest) and ungrouped == "separate":
        labels.extend(str(feature_names[j]) for j in rest)
        members.extend(np.array([j]) for j in rest)
    elif len(rest) and ungrouped == "together":
        labels.append("other")
        members.append(rest)

    seen = set()
    for label in labels:
        if label in seen:
            raise ValueError(
                f"groups: the label {label!r} is used by two groups; give each "
                "group a distinct label (pass a dict {label: features})."
            )
        seen.add(label)
    return labels, members


def _rank_columns(X):
    """Column-wise average ranks of a numeric table, as float64."""
    if is_pandas(X) or is_polars(X):
        names = [str(c) for c in X.columns]
        if is_pandas(X):
            columns = [X.iloc[:, j] for j in range(X.shape[1])]
        else:
            columns = [X.get_column(c) for c in X.columns]
        arrays = []
        for name, column in zip(names, columns):
            values = np.asarray(column.to_numpy())
            if not (
                np.issubdtype(values.dtype, np.number)
                or np.issubdtype(values.dtype, np.bool_)
            ):
                raise ValueError(
                    f"feature_groups: column {name!r} has dtype {values.dtype}, "
                    "and Spearman correlation needs numbers; encode it first or "
                    "put it in a group by hand."
                )
            arrays.append(values.astype(np.float64))
        X = np.column_stack(arrays)
    else:
        X, _ = check_table(X)
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                "feature_groups: X must be numeric for Spearman correlation; "
                f"converting it failed ({exc}). Encode it first."
            ) from exc
    return rankdata(X, axis=0, nan_policy="omit")


@explain_input_errors
@validate_params(
    {
        "X": ["array-like"],
        "threshold": [Interval(numbers.Real, 0, 1, closed="both")],
        "linkage": [StrOptions({"complete", "average", "single"})],
    },
    prefer_skip_nested_validation=True,
)
def feature_groups(X, *, threshold=0.3, linkage="complete"):
    """Group features whose Spearman rank correlations are strong.

    Features are clustered hierarchically with the distance
    ``1 - |rho|``, where ``rho`` is the Spearman rank correlation of two
    columns, and the tree is cut at ``threshold``. With the default complete
    linkage, every pair of features in a group has ``|rho| >= 1 - threshold``.
    Constant columns correlate with nothing and stay alone.

    Pass the result (edited or not) as ``groups=`` to
    :func:`permutation_importance`, :func:`oob_permutation_importance` or
    :func:`drop_column_importance`; ``groups="auto"`` does the same with the
    defaults.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Numeric features. A missing value counts as its column's mean rank.
    threshold : float in [0, 1], default=0.3
        Largest distance ``1 - |rho|`` inside a group: 0 groups only
        perfectly monotone relations, 1 puts everything in one group.
    linkage : {"complete", "average", "single"}, default="complete"
        How the distance between two groups is measured (see
        :func:`scipy.cluster.hierarchy.linkage`).

    Returns
    -------
    groups : list of list
        Every feature in exactly one group, groups in the order of their
        first column. Members are column names for a DataFrame, positions for
        an array.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_fimp import feature_groups
    >>> rng = np.random.RandomState(0)
    >>> a, b = rng.normal(size=(2, 200))
    >>> X = np.column_stack([a, b, a + 0.01 * rng.normal(size=200)])
    >>> feature_groups(X)
    [[0, 2], [1]]
    """
    names = [str(c) for c in X.columns] if (is_pandas(X) or is_polars(X)) else None
    ranks = _rank_columns(X)
    n_features = ranks.shape[1]
    if n_features == 1:
        return [[names[0] if names else 0]]
    centered = ranks - np.nanmean(ranks, axis=0)
    centered = np.where(np.isnan(centered), 0.0, centered)
    scale = np.sqrt(np.sum(centered**2, axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (centered.T @ centered) / np.outer(scale, scale)
    rho = np.where(np.isfinite(rho), rho, 0.0)
    distance = np.clip(1.0 - np.abs(rho), 0.0, 1.0)
    np.fill_diagonal(distance, 0.0)
    distance = (distance + distance.T) / 2
    tree = hierarchy.linkage(squareform(distance, checks=False), method=linkage)
    cluster_of = hierarchy.fcluster(tree, t=threshold, criterion="distance")
    groups = {}
    for j, cluster in enumerate(cluster_of):
        groups.setdefault(cluster, []).append(names[j] if names else j)
    return sorted(groups.values(), key=lambda g: names.index(g[0]) if names else g[0])


#: ``correlated_groups`` clusters at most this many numeric columns (the
#: correlation matrix grows with their square) ...
MAX_GROUPED_COLUMNS = 5000
#: ... from the rank correlations on at most this many rows (a fixed draw):
#: a correlation of 0.7 is estimated within about 0.01 there, and ranking
#: every row of a large table would cost a copy of it.
MAX_GROUPED_ROWS = 10_000


def correlated_groups(X, min_correlation=0.7):
    """Groups of column positions whose numeric columns :func:`feature_groups`
    clusters (complete linkage: every pair of a group at ``|rho| >=
    min_correlation``),
    every other column alone, in the order of their first column; None when
    no two columns are grouped, or X is sparse, has fewer than two or more
    than ``MAX_GROUPED_COLUMNS`` numeric columns. The correlations are those
    of at most ``MAX_GROUPED_ROWS`` rows."""
    if scipy.sparse.issparse(X):
        return None
    n_columns = X.shape[1]
    if X.shape[0] > MAX_GROUPED_ROWS:
        X = take_rows(X, evaluation_rows(0, X.shape[0], MAX_GROUPED_ROWS))
    if is_pandas(X):
        from pandas.api.types import is_numeric_dtype

        numeric = [j for j, dtype in enumerate(X.dtypes) if is_numeric_dtype(dtype)]
        table = X.iloc[:, numeric]
    elif is_polars(X):
        numeric = [j for j, dtype in enumerate(X.dtypes) if dtype.is_numeric()]
        table = X[:, numeric].to_numpy()
    else:
        array = np.asarray(X)
        if array.dtype.kind not in "biuf":
            return None
        numeric = list(range(array.shape[1]))
        table = array
    if not 2 <= len(numeric) <= MAX_GROUPED_COLUMNS:
        return None
    positions = np.asarray(numeric)
    found = [
        [int(positions[j]) for j in group]
        for group in feature_groups(
            np.asarray(table, dtype=np.float64), threshold=1.0 - min_correlation
        )
    ]
    if all(len(group) == 1 for group in found):
        return None
    grouped = {j for group in found for j in group}
    found += [[j] for j in range(n_columns) if j not in grouped]
    return sorted(found, key=min)
