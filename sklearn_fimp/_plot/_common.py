"""What the displays share: the lazy matplotlib import, axes checks, labels."""

import numpy as np

#: The optional dependency group that installs matplotlib.
PLOT_EXTRA = 'pip install "sklearn-fimp[plot]"'


def check_matplotlib(caller):
    """Import matplotlib, or raise an ImportError that says how to install it.

    Displays import matplotlib only when they draw, so the package itself
    does not depend on it.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"{caller} requires matplotlib, which is not installed; install it "
            f"with {PLOT_EXTRA} (or pip install matplotlib)."
        ) from exc


def is_axes(obj):
    from matplotlib.axes import Axes

    return isinstance(obj, Axes)


def heatmap_size(n_columns, n_rows):
    """Figure size in inches that leaves room for every cell and label."""
    width = min(max(6.4, 3.0 + 0.5 * n_columns), 40)
    height = min(max(4.8, 2.0 + 0.4 * n_rows), 40)
    return width, height


def single_axes(ax, caller, figsize=None):
    """``(ax, figure)``: a new figure and axes when ``ax`` is None."""
    if ax is None:
        import matplotlib.pyplot as plt

        figure, ax = plt.subplots(figsize=figsize, layout="constrained")
        return ax, figure
    if not is_axes(ax):
        raise TypeError(
            f"{caller}: ax must be a matplotlib Axes or None; got "
            f"{type(ax).__name__}. Pass e.g. the ax of "
            "matplotlib.pyplot.subplots(), or leave ax=None for a new figure."
        )
    return ax, ax.figure


def plain_text(text):
    """``text`` as matplotlib should print it: a dollar sign would otherwise
    start mathtext, which fails to render on names such as "cost ($) $"."""
    return str(text).replace("$", r"\$")


#: Characters of a group's tick label on one line; longer ones are wrapped
#: (a label as wide as the bars leaves no room for them at column width).
LABEL_WIDTH = 48


def member_label(label, members, max_members=4):
    """Tick label of a feature or group: a group shows its members, on
    lines of at most ``LABEL_WIDTH`` characters when the label is longer."""
    import textwrap

    label = str(label)
    if members is None or (len(members) == 1 and label == str(members[0])):
        return label
    shown = [str(m) for m in members[:max_members]]
    if len(members) > max_members:
        shown[-1] = f"... (+{len(members) - max_members + 1})"
    if label == "+".join(map(str, members)):
        text = " + ".join(shown)
        return "\n".join(textwrap.wrap(text, LABEL_WIDTH)) or text
    text = f"{label} ({', '.join(shown)})"
    if len(text) <= LABEL_WIDTH:
        return text
    lines = textwrap.wrap(label, LABEL_WIDTH)
    lines += textwrap.wrap(f"({', '.join(shown)})", LABEL_WIDTH)
    return "\n".join(lines)


def check_square_labels(values, names, what):
    """``names`` as an object array matching ``len(values)``."""
    names = np.asarray(names, dtype=object)
    if names.ndim != 1 or len(names) != len(values):
        raise ValueError(
            f"feature_names has {names.size} entries but {what} has "
            f"{len(values)} features; pass one name per feature."
        )
    return names


def text_color(image, value):
    """Black or white, whichever reads better on the cell colour."""
    red, green, blue, _ = image.cmap(image.norm(value))
    luminance = 0.299 * red + 0.587 * green + 0.114 * blue
    return "black" if luminance > 0.5 else "white"
