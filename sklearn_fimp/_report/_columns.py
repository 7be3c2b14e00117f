"""What each column of the CSV file holds, decided before any model sees it.

String columns are read as numbers when they are numbers written with a
currency symbol, thousands separators or a decimal comma; as dates, which
are expanded into numeric parts; as identifiers, names or free text, which
are excluded (a forest cannot learn from a value per row, and encoding
them costs memory and time; ``EXCLUSION_RULE`` states the rules);
otherwise as categories. Whole-number columns with a distinct value per
row that count up, or are named like an identifier, are excluded too.
Every conversion and exclusion is returned, for the page.
"""

import re
import warnings
from typing import NamedTuple

import numpy as np

#: Share of a column's non-missing values that must parse for the column to
#: be read as numbers or dates.
PARSED_SHARE = 0.95
#: A string column with more distinct values than this share of its
#: non-missing values (and more than MIN_DISTINCT_IDENTIFIER values) holds
#: one value per row or nearly: an identifier.
IDENTIFIER_SHARE = 0.9
MIN_DISTINCT_IDENTIFIER = 20
#: Free text: at least this many words per value on average, and more
#: distinct values than TEXT_SHARE of the non-missing values.
TEXT_WORDS = 3
TEXT_SHARE = 0.2
#: Names (of cars, people, products): a string column in which more than
#: this share of the rows hold a value that occurs in no other row (and with
#: more than MIN_DISTINCT_IDENTIFIER distinct values). A value seen once is
#: one the forest learns nothing general from, and a held-out row's value is
#: then mostly one the model never saw.
NAME_SHARE = 0.5
#: The rules above, as the page states them.
EXCLUSION_RULE = (
    "A text column is left out as an identifier when more than "
    f"{IDENTIFIER_SHARE:.0%} of its values are distinct, as names when more "
    f"than {NAME_SHARE:.0%} of its rows hold a value no other row has, and as "
    f"free text when its values average {TEXT_WORDS} words or more and more "
    f"than {TEXT_SHARE:.0%} of them are distinct (each with more than "
    f"{MIN_DISTINCT_IDENTIFIER} distinct values); a whole-number column when "
    "every row has its own value and it counts up or is named like an "
    "identifier. A forest learns nothing general from a value seen once."
)
#: Names of whole-number columns read as identifiers when their values are
#: distinct (besides counters).
IDENTIFIER_NAME = re.compile(r"(^|[^a-z])(id|key|uuid|index)$|_id$|^id_", re.I)
CURRENCY = "$€£¥₹"
_NUMBER = {
    ".": re.compile(
        rf"^\(?[-+]?\s*[{CURRENCY}]?\s*[-+]?(\d{{1,3}}(,\d{{3}})+|\d+)(\.\d*)?"
        rf"\s*[{CURRENCY}%]?\)?$"
    ),
    ",": re.compile(
        rf"^\(?[-+]?\s*[{CURRENCY}]?\s*[-+]?(\d{{1,3}}([. ]\d{{3}})+|\d+)(,\d*)?"
        rf"\s*[{CURRENCY}%]?\)?$"
    ),
}
_DATE_LIKE = re.compile(
    r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T]\d{1,2}:\d{2}(:\d{2})?)?"
)


class Columns(NamedTuple):
    """The features as the model will see them, and what was done."""

    X: object
    converted: list  # (column, "how it was read")
    excluded: list  # (column, "why it was left out")
    expanded: dict  # date column -> the columns that replace it


def recognise_columns(X, decimal="."):
    """Read, expand or exclude the columns of ``X`` (a copy is returned)."""
    import pandas as pd

    parts, converted, excluded, expanded = {}, [], [], {}
    for column in X.columns:
        values = X[column]
        present = values.dropna()
        if pd.api.types.is_bool_dtype(values.dtype):
            parts[column] = values.astype(float)
            continue
        if pd.api.types.is_numeric_dtype(values.dtype):
            reason = _numeric_identifier(column, present)
            if reason:
                excluded.append((column, reason))
            else:
                parts[column] = values
            continue
        if isinstance(values.dtype, pd.CategoricalDtype) or len(present) == 0:
            parts[column] = values
            continue
        text = present.astype(str).str.strip()
        numbers = _parse_numbers(text, decimal)
        if numbers is not None:
            parts[column] = _parse_numbers(
                values.astype("string").str.strip(), decimal, strict=False
            )
            converted.append((column, numbers))
            continue
        dates = _parse_dates(text)
        if dates is not None:
            new = _date_parts(column, values, set(X.columns) | set(parts))
            parts.update(new)
            expanded[column] = list(new)
            converted.append(
                (column, f"dates ({dates}), expanded into {', '.join(new)}")
            )
            continue
        reason = _text_or_identifier(text)
        if reason:
            excluded.append((column, reason))
        else:
            parts[column] = values
    frame = pd.DataFrame(parts, index=X.index)
    return Columns(frame, converted, excluded, expanded)


def _numeric_identifier(column, present):
    n = len(present)
    if n < MIN_DISTINCT_IDENTIFIER or present.nunique() < n:
        return None
    values = present.to_numpy(dtype=float)
    if not np.all(values == np.round(values)):
        return None
    steps = np.diff(values)
    if np.all(steps > 0) or np.all(steps < 0):
        return (
            "identifier: a distinct whole number per row, counting up (a row number?)"
        )
    if IDENTIFIER_NAME.search(str(column)):
        return "identifier: a distinct whole number per row, and named like one"
    return None


def _parse_numbers(text, decimal, strict=True):
    """Numbers written with currency, thousands separators, a decimal comma
    or a percent sign: a description (strict) or the parsed values."""
    pattern = _NUMBER[decimal]
    matches = text.str.match(pattern).fillna(False)
    if strict:
        if len(text) == 0 or matches.mean() < PARSED_SHARE:
            return None
        plain = text.str.fullmatch(r"[-+]?\d+(\.\d+)?").fillna(False)
        if plain.all():
            return None  # pandas read these as numbers unless a value is odd
    cleaned = text.str.replace(rf"[\s{CURRENCY}%]", "", regex=True)
    negative = cleaned.str.startswith("(") & cleaned.str.endswith(")")
    cleaned = cleaned.str.strip("()")
    if decimal == ",":
        cleaned = cleaned.str.replace(".", "", regex=False).str.replace(
            ",", ".", regex=False
        )
    else:
        cleaned = cleaned.str.replace(",", "", regex=False)
    import pandas as pd

    values = pd.to_numeric(cleaned.where(matches), errors="coerce").astype(float)
    values = values.where(~negative.fillna(False).astype(bool), -values)
    if not strict:
        return values
    signs = []
    if text.str.contains(f"[{CURRENCY}]", regex=True).any():
        signs.append("currency symbols")
    separator = r"\d[,]\d{3}" if decimal == "." else r"\d[. ]\d{3}"
    if text.str.contains(separator, regex=True).any():
        signs.append("thousands separators")
    if decimal == "," and text.str.contains(r"\d,\d", regex=True).any():
        signs.append("decimal commas")
    if text.str.contains("%", regex=False).any():
        signs.append("percent signs")
    unparsed = int((~matches).sum())
    how = "numbers written with " + (" and ".join(signs) or "odd spacing")
    if unparsed:
        how += f"; {unparsed} value(s) that are not numbers treated as missing"
    return how


def _parse_dates(text):
    import pandas as pd

    if text.str.match(_DATE_LIKE).fillna(False).mean() < PARSED_SHARE:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(text, errors="coerce", format="mixed")
    if parsed.notna().mean() < PARSED_SHARE:
        return None
    return f"{parsed.min():%Y-%m-%d} to {parsed.max():%Y-%m-%d}"


def _date_parts(column, values, taken):
    """Year, month, day of week, days since the first date (and the hour
    when the dates have times) as float columns."""
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dates = pd.to_datetime(
            values.astype("string").str.strip(), errors="coerce", format="mixed"
        )
    first = dates.min()
    parts = {
        "year": dates.dt.year,
        "month": dates.dt.month,
        "weekday": dates.dt.day_of_week,
        "days": (dates - first).dt.total_seconds() / 86400,
    }
    if (dates.dropna().dt.hour != 0).any():
        parts["hour"] = dates.dt.hour
    named = {}
    for part, series in parts.items():
        name = f"{column}_{part}"
        while name in taken:
            name = "_" + name
        named[name] = series.astype(float)
    return named


def _text_or_identifier(text):
    n = len(text)
    n_distinct = text.nunique()
    words = text.str.split().str.len().mean()
    if words >= TEXT_WORDS and n_distinct > TEXT_SHARE * n:
        return (
            f"free text: {n_distinct} distinct values of {words:.1f} words on "
            "average (derive features from it, e.g. its length or key words)"
        )
    if n_distinct > IDENTIFIER_SHARE * n and n_distinct > MIN_DISTINCT_IDENTIFIER:
        return (
            f"identifier: {n_distinct} distinct values in {n} rows; held-out "
            "rows bring values the model never saw"
        )
    once = int((text.map(text.value_counts()) == 1).sum())
    if once > NAME_SHARE * n and n_distinct > MIN_DISTINCT_IDENTIFIER:
        return (
            f"names: {n_distinct} distinct values in {n} rows, {once} of them "
            "held by one row only; held-out rows bring values the model never "
            "saw"
        )
    return None
