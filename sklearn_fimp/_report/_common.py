"""What every step of the report shares: the program's name, its error,
and how numbers and names are written in its sentences."""

import numpy as np

PROG = "sklearn-fimp"
EXIT_USAGE = 2


class ReportError(Exception):
    """An input the report cannot use; the message says what to do."""


#: Names listed in a sentence before "and N more".
MAX_NAMES_IN_TEXT = 12


def fmt(value):
    """Three significant digits; never "-0" (a value that rounds to zero);
    thousands written out with separators ("1,210", not "1.21e+03")."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    text = f"{value:.3g}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    if "e+" in text and abs(float(text)) < 1e12:
        text = f"{float(text):,.0f}"
    return text


def names_text(names, limit=MAX_NAMES_IN_TEXT):
    """Names for a sentence: at most ``limit``, then how many more."""
    names = [str(n) for n in names]
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more (see the table)"
