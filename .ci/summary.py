"""One line per CI run: the versions that matter and pytest's counts, then
the run's slowest tests.

Usage: python .ci/summary.py LABEL JUNIT_XML SECONDS

Run with the environment's own interpreter, after its pytest run wrote
JUNIT_XML (``--junitxml``); SECONDS is the wall time of that run. The line
starts with "== matrix" so that it can be found in CI's log; the next lines,
after one starting "== slowest", give the 15 slowest tests of the run with
their seconds (setup, call and teardown, as the junit file counts them).
"""

import platform
import sys
import xml.etree.ElementTree as ET
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ("scikit-learn", "numpy", "scipy", "pandas", "polars", "pyspark")
N_SLOWEST = 15


def installed(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"


def read(path):
    """The root of a junit file, or the reason it cannot be read."""
    try:
        return ET.parse(path).getroot(), None
    except (OSError, ET.ParseError) as exc:
        return None, f"no pytest report ({exc})"


def counts(root):
    """passed, failed, errors and skipped (xfail included) of a junit file."""
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in suites:
        for key in total:
            total[key] += int(suite.get(key, 0))
    passed = total["tests"] - total["failures"] - total["errors"] - total["skipped"]
    return (
        f"passed {passed}, failed {total['failures']}, errors {total['errors']}, "
        f"skipped {total['skipped']}"
    )


def slowest(root, n=N_SLOWEST):
    """The ``n`` slowest tests of a junit file: (seconds, test id), slowest
    first."""
    timed = []
    for case in root.iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname")
        test = f"{classname}::{name}" if classname else name
        timed.append((float(case.get("time") or 0), test))
    return sorted(timed, key=lambda item: -item[0])[:n]


def main(label, junit, seconds):
    fields = [f"Python {platform.python_version()}"]
    fields += [f"{name} {installed(name)}" for name in PACKAGES]
    root, problem = read(junit)
    print(
        f"== matrix | {label} | {' | '.join(fields)} | {problem or counts(root)} "
        f"| pytest {float(seconds):.0f} s"
    )
    if root is None:
        return
    print(f"== slowest {N_SLOWEST} tests | {label}")
    for test_seconds, test in slowest(root):
        print(f"{test_seconds:8.2f} s  {test}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
