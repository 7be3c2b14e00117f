"""Sphinx configuration of the sklearn_fimp documentation.

Build with ``make -C docs html`` (warnings are errors) or, without running
the gallery examples, ``make -C docs html-noplot``.
"""

import os
import re
import sys
from pathlib import Path

import sklearn_fimp

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "sphinxext"))
# Sphinx-gallery runs the examples in this process: keep matplotlib off screen.
os.environ.setdefault("MPLBACKEND", "Agg")

project = "sklearn_fimp"
author = "sklearn_fimp developers"
copyright = "sklearn_fimp developers"
release = sklearn_fimp.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 from the docs extra (a copy in the built site's _static/),
    # so that the maths renders without network; it sets mathjax_path.
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"
default_role = "literal"

# -- API reference -----------------------------------------------------------
# Every name in sklearn_fimp.__all__ gets a generated page (docs/generated/).
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": True}
autodoc_typehints = "none"
# Methods are listed by the class template; numpydoc would list them twice.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- Gallery -----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(DOCS.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "doc_module": ("sklearn_fimp",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"sklearn_fimp": None},
    "inspect_global_variables": False,
    "remove_config_comments": True,
    "min_reported_time": 0,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "within_subsection_order": "gallery_order.ExampleOrder",
    "download_all_examples": False,
    # The computation-times pages load their table script from a CDN: the
    # site stays readable offline without them.
    "write_computation_times": False,
}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn_fimp {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": True,
    "navbar_end": ["navbar-icon-links"],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "user_guide": [], "benchmarks": []}
html_static_path = []
html_show_sourcelink = False


# -- Docstring hooks ---------------------------------------------------------
# Inherited scikit-learn methods (set_output, get_metadata_routing, ...) link
# to labels and glossary terms of scikit-learn's own documentation, which
# this site does not have: their :ref: and :term: roles are shown as plain
# text.
_REF_ROLE = re.compile(r":(?:ref|term):`([^`<]*?)\s*<[^`>]*>`|:(?:ref|term):`([^`]*)`")


def _plain_refs(line):
    return _REF_ROLE.sub(lambda m: m.group(1) or m.group(2), line)


def _is_own(obj):
    return getattr(obj, "__module__", "").startswith("sklearn_fimp")


# The importance functions return a Bunch whose fields are listed under the
# Returns entry, one per line, some with a description and some without. As
# plain text this reads well; reST needs a blank line before a field that
# follows a description or a field without one.
_SECTION_RULE = re.compile(r"^\s*-{3,}\s*$")
_FIELD = re.compile(r"^\w+(, \w+)*( : .+)?$")


def _separate_bunch_fields(lines):
    out, in_returns, base = [], False, None
    for i, line in enumerate(lines):
        next_line = lines[i + 1] if i + 1 < len(lines) else ""
        if _SECTION_RULE.match(next_line):
            in_returns = line.strip() == "Returns"
            base = None
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if in_returns and stripped and not _SECTION_RULE.match(line):
            if base is None:
                base = indent
            elif indent == base + 4 and _FIELD.match(stripped) and out:
                previous = out[-1]
                previous_indent = len(previous) - len(previous.lstrip())
                if previous.strip() and (
                    previous_indent > indent or _FIELD.match(previous.strip())
                ):
                    out.append("")
        out.append(line)
    return out


# numpydoc copies the type of a parameter or attribute into reST as it is,
# where a word ending in "_" (``n_features_in_``) is a link to a target.
_TYPED_NAME = re.compile(r"^(\s*\w+(?:, \w+)* : )(.*)$")
_TRAILING_UNDERSCORE = re.compile(r"\b(\w+)_(?=\W|$)")


def _escape_type(line):
    match = _TYPED_NAME.match(line)
    if match is None:
        return line
    return match.group(1) + _TRAILING_UNDERSCORE.sub(r"\1\\_", match.group(2))


def _process_docstring(app, what, name, obj, options, lines):
    if _is_own(obj):
        lines[:] = [_escape_type(line) for line in _separate_bunch_fields(lines)]
    else:
        lines[:] = [_plain_refs(line) for line in lines]


def setup(app):
    # Before numpydoc (priority 500) turns the sections into reST.
    app.connect("autodoc-process-docstring", _process_docstring, priority=400)
