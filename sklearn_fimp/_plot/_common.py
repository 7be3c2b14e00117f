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


#: Smallest font size (points) at which a heatmap writes its values: below
#: it the values are left out and the colours alone are read.
MIN_CELL_FONT_SIZE = 5.0


def write_cell_values(ax, image, cells, written, values_format, text_kw):
    """Write ``cells[i, j]`` in each cell where ``written`` is True, in black
    or white as reads better; an array of the Texts (None where nothing is
    written).

    Unless ``text_kw`` sets a ``fontsize``, the values shrink to fit their
    cells as the axes are finally laid out, so that neighbours never
    overlap; cells too small for ``MIN_CELL_FONT_SIZE`` get no value.
    Column labels slanted at 45 degrees turn upright when they would
    overlap. Call it last, once the labels and colour bar are in place.
    """
    texts = np.full(cells.shape, None, dtype=object)
    text_kw = {} if text_kw is None else dict(text_kw)
    for i, j in zip(*np.nonzero(written)):
        style = {
            "ha": "center",
            "va": "center",
            "fontsize": "small",
            "color": text_color(image, cells[i, j]),
            **text_kw,
        }
        texts[i, j] = ax.text(j, i, format(cells[i, j], values_format), **style)
    _fit_to_cells(ax, texts, cells.shape, shrink="fontsize" not in text_kw)
    return texts


def _upright_crowded_labels(ax, renderer):
    """Turn slanted column labels upright when neighbours would overlap:
    slanted at 45 degrees, two labels are their spacing times sin(45)
    apart, upright their full spacing."""
    labels = [label for label in ax.get_xticklabels() if label.get_text()]
    ticks = ax.get_xticks()
    if len(labels) < 2 or len(ticks) < 2:
        return False
    spacing = abs(
        ax.transData.transform((ticks[1], 0))[0]
        - ax.transData.transform((ticks[0], 0))[0]
    )
    slanted = [label for label in labels if label.get_rotation() % 90]
    if not slanted:
        return False
    height = max(label.get_fontsize() for label in slanted) * renderer.points_to_pixels(
        1.2
    )
    if spacing * np.sin(np.radians(45)) >= height:
        return False
    for label in slanted:
        label.set_rotation(90)
        label.set_verticalalignment("center")
    return True


def _renderer(figure):
    """The renderer that measures text on ``figure``. A figure made without
    pyplot (``matplotlib.figure.Figure()``) has a canvas that cannot
    measure; it gets the Agg canvas that saving it to PNG would use."""
    if not hasattr(figure.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)
    return figure.canvas.get_renderer()


def _fit_to_cells(ax, texts, shape, shrink):
    figure = ax.figure
    renderer = _renderer(figure)
    figure.draw_without_rendering()  # lays the axes out, as they will be drawn
    if _upright_crowded_labels(ax, renderer):
        figure.draw_without_rendering()
    written = [(index, text) for index, text in np.ndenumerate(texts) if text]
    if not written or not shrink:
        return
    box = ax.get_window_extent(renderer)
    # the image's cells in display pixels (imshow may not fill the axes)
    left, right, bottom, top = ax.get_images()[-1].get_extent()
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    cell_width = box.width * abs(right - left) / abs(x1 - x0) / shape[1]
    cell_height = box.height * abs(top - bottom) / abs(y1 - y0) / shape[0]
    extents = [text.get_window_extent(renderer) for _, text in written]
    scale = min(
        1.0,
        0.9 * cell_width / max(e.width for e in extents),
        0.9 * cell_height / max(e.height for e in extents),
    )
    if scale >= 1.0:
        return
    size = written[0][1].get_fontsize() * scale
    for index, text in written:
        if size < MIN_CELL_FONT_SIZE:
            text.remove()
            texts[index] = None
        else:
            text.set_fontsize(size)
