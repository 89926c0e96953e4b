"""The kit as a pytest plugin: every case of every library named is a test
item, run in the kit's worker process as `python -m dlpack_conformance`
runs it (a crash fails that item only, and the run goes on).

    pytest -p dlpack_conformance --dlpack-library mylib [--dlpack-xfail FILE] [--dlpack-case PATTERN]
    pytest -p dlpack_conformance --dlpack-sanitize     # any test suite, every DLPack exchange sanitized

or, in the ini file (pytest.ini, or [tool.pytest.ini_options] in
pyproject.toml), `dlpack_library = mylib` and `dlpack_xfail = FILE` (a path
relative to the ini file). The installed kit registers the plugin (entry
point pytest11), so `-p dlpack_conformance` only makes sure it is loaded;
with no library named it adds nothing to a run. A kit vendored as a
directory, not installed, loads it with `-p dlpack_conformance.pytest_plugin`.

A pass passes; a fail or a crash fails with the requirement, its source,
what the library did and the reproducer; a skip skips with its reason; a
warn passes with a DLPackWarning (`-W error::dlpack_conformance.pytest_plugin.DLPackWarning`
makes warnings fail); a failure the xfail file names xfails, and a case it
names that passes fails, saying which line to remove."""

import io
import os
import warnings

import pytest

from . import runner

_SUMMARY = pytest.StashKey[str]()  # the sanitizer's summary, from session finish to the terminal summary


class DLPackWarning(UserWarning):
    """A case whose verdict is `warn`: the library breaks what the text only
    recommends, or makes a choice the text leaves open."""


def pytest_addoption(parser):
    group = parser.getgroup("dlpack_conformance", "DLPack conformance kit (dlpack_conformance)")
    group.addoption(
        "--dlpack-library",
        action="append",
        default=[],
        metavar="LIBRARY",
        help="run the kit's cases against LIBRARY (a module such as numpy, or an adapter file); repeatable",
    )
    group.addoption(
        "--dlpack-xfail",
        metavar="FILE",
        help="cases expected to fail, one pattern a line (`library: pattern` for one library)",
    )
    group.addoption(
        "--dlpack-case",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only cases whose id contains PATTERN (or matches it, with * ? [ ]); repeatable",
    )
    group.addoption(
        "--dlpack-malformed-crashes",
        choices=("fail", "report"),
        default="fail",
        help="whether a crash on a malformed tensor (the kit's policy, no DLPack text) fails its test "
        "(fail, the default) or passes with a DLPackWarning (report), as the command's "
        "--malformed-crashes",
    )
    group.addoption(
        "--dlpack-sanitize",
        action="store_true",
        help="run the test suite under the DLPack sanitizer (dlpack_conformance.sanitize): every exchange "
        "checked, a report fails the run",
    )
    parser.addini("dlpack_library", type="args", help="libraries to run the kit's cases against")
    parser.addini("dlpack_xfail", help="the kit's xfail file, relative to the ini file")


def libraries(config):
    """The libraries named on the command line, else in the ini file."""
    return config.getoption("dlpack_library") or config.getini("dlpack_library")


def xfail_entries(config):
    path = config.getoption("dlpack_xfail")
    if not path:
        path = config.getini("dlpack_xfail")
        if path and config.inipath is not None:
            path = os.path.join(os.path.dirname(str(config.inipath)), path)
    if not path:
        return []
    try:
        return runner.read_xfail(path)
    except OSError as e:
        raise pytest.UsageError(f"--dlpack-xfail: {e}") from None


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "dlpack_conformance: a case of the DLPack conformance kit (added by the plugin)"
    )
    if config.getoption("dlpack_sanitize"):
        from . import sanitize

        sanitize.enable(report_at_exit=False)


def pytest_sessionfinish(session, exitstatus):
    """Under --dlpack-sanitize: the sanitizer's summary (stderr), and a
    report fails a run that passes otherwise."""
    if not session.config.getoption("dlpack_sanitize"):
        return
    from . import sanitize

    summary = io.StringIO()  # printed in the terminal summary, on a line of its own
    if sanitize.finish(summary) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    session.config.stash[_SUMMARY] = summary.getvalue()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not config.getoption("dlpack_sanitize"):
        return
    from . import sanitize

    checked, got = sanitize.exchanges(), sanitize.reports()
    terminalreporter.write_sep("-", "DLPack sanitizer")
    exchanges = f"{checked} exchange{'s' * (checked != 1)}"
    problems = f"{len(got)} problem{'s' * (len(got) != 1)}"
    terminalreporter.write_line(f"dlpack-sanitize: {exchanges} checked, {problems}")
    summary = config.stash.get(_SUMMARY, "")
    for line in summary.splitlines():
        terminalreporter.write_line(line)
    if not summary:  # the summary names them when it is printed
        for note in sanitize.not_intercepted():
            terminalreporter.write_line(f"dlpack-sanitize: not intercepted: {note}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    # First, so that -k, -m, --deselect and --lf see the cases as any item.
    named = libraries(config)
    if not named:
        return
    xfail = xfail_entries(config)
    for library in named:
        name = f"dlpack-conformance[{library}]"
        node = Library.from_parent(session, name=name, nodeid=name, library=library, xfail=xfail)
        items.extend(session.genitems(node))


class Library(pytest.Collector):
    """One library's cases; its items share one runner.Session (one worker
    process, and a fresh one after a crash), closed at the end of the run."""

    def __init__(self, *, library, xfail, **kwargs):
        super().__init__(**kwargs)
        self.library, self.xfail = library, xfail
        self.worker_session = None
        self.cannot_run = None
        self.config.add_cleanup(self.close)

    def collect(self):
        patterns = self.config.getoption("dlpack_case")
        try:
            _, cases = runner.select_cases(self.library, patterns)
        except runner.CannotRun as e:
            raise self.CollectError(f"--dlpack-library {self.library}: {e}") from None
        if not cases:
            raise self.CollectError(
                f"no case of {self.library} matches --dlpack-case {' --dlpack-case '.join(patterns)}"
            )
        return [Case.from_parent(self, name=case.id, case=case) for case in cases]

    def run(self, case):
        """The kit's result of case, the xfail file applied."""
        if self.cannot_run is None and self.worker_session is None:
            try:
                self.worker_session = runner.Session(self.library)
            except runner.CannotRun as e:
                self.cannot_run = f"cannot run against {self.library}: {e}"
        if self.cannot_run is not None:
            pytest.fail(self.cannot_run, pytrace=False)
        try:
            r = self.worker_session.run(case)
        except runner.CannotRun as e:  # the library does not import: every case says so
            self.cannot_run = f"cannot run against {self.library}: {e}"
            pytest.fail(self.cannot_run, pytrace=False)
        return runner.apply_xfail([r], self.xfail, self.library)[0]

    def close(self):
        if self.worker_session is not None:
            self.worker_session.close()
            self.worker_session = None


class Case(pytest.Item):
    """One case against one library."""

    def __init__(self, *, case, **kwargs):
        super().__init__(**kwargs)
        self.case = case
        self.add_marker("dlpack_conformance")

    def runtest(self):
        judge(self.parent.run(self.case), self.config.getoption("dlpack_malformed_crashes"))

    def reportinfo(self):
        return self.path, None, f"{self.parent.name}::{self.case.id}"


def judge(r, malformed_crashes="fail"):
    """Ends a test as the kit's result r says: returns for a pass (warning
    for a warn, and for a crash on a malformed tensor when malformed_crashes
    is "report"), skips, xfails or fails."""
    verdict, message = r["verdict"], r["message"]
    if r.get("spec"):
        message += f"\nrequires: {r['requirement']}\nsource:   {r['source']} [{r['strength']}]"
    if verdict == "skip":
        pytest.skip(f"{r['case']}: {message}")
    if verdict == "xfail":
        pytest.xfail(message)
    reproducer = r.get("reproducer") or ""
    if verdict == "error":
        pytest.fail(
            f"error: {r['case']}: the kit could not judge this case (the kit's fault, not the"
            f" library's): {message}\n{r.get('traceback') or ''}\nreproducer:\n{reproducer}",
            pytrace=False,
        )
    if runner.fails_run(r, malformed_crashes):
        pytest.fail(f"{verdict}: {r['case']}: {message}\nreproducer:\n{reproducer}", pytrace=False)
    if verdict != "pass":
        warnings.warn(f"{r['case']}: {verdict}: {message}", DLPackWarning, stacklevel=1)
