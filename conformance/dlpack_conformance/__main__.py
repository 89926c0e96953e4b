"""python -m dlpack_conformance LIBRARY... [--json FILE] [--markdown FILE] [--case PATTERN] [--xfail FILE]

Runs the DLPack conformance cases against each LIBRARY (a module name such
as numpy, torch, jax, or an adapter file ending in .py) and prints a report.
Exit status: 0 when every library passes (warnings, declared skips and
expected failures included); 1 when a case fails or crashes, an expected
failure passes, a library lacks a producer or a consumer its adapter does
not declare it lacks, or most of a side's cases were skipped without the
adapter saying why; 2 when the kit cannot run (a library that does not
import, a bad argument); 3 when nothing fails but the kit could not judge
some cases (its own error, reported with the traceback)."""

import argparse
import json
import os
import sys
import time

from . import report, runner

MODULE = "python -m dlpack_conformance"
COMMAND = "dlpack-conformance"  # the console command pip installs


def main(argv=None, prog=MODULE):
    """The kit's command line; prog is how the user called it, the first
    word of every message."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "libraries",
        nargs="*",
        metavar="LIBRARY",
        help="a module (numpy, torch, jax, ...) or an adapter file (path ending in .py)",
    )
    parser.add_argument("--json", metavar="FILE", help="write every result as JSON to FILE")
    parser.add_argument(
        "--case",
        metavar="PATTERN",
        action="append",
        default=[],
        help="run only cases whose id contains PATTERN (or matches it, with * ? [ ]); repeatable",
    )
    parser.add_argument(
        "--xfail",
        metavar="FILE",
        help="cases expected to fail, one pattern a line (`library: pattern` for one library)",
    )
    parser.add_argument("--list", action="store_true", help="list the case ids for each LIBRARY and exit")
    parser.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print the summary and one entry per broken requirement only",
    )
    parser.add_argument(
        "--markdown",
        metavar="FILE",
        help="write a report fit to paste into an issue of the library's tracker to FILE",
    )
    parser.add_argument(
        "--malformed-crashes",
        choices=("fail", "report"),
        default="fail",
        help="whether a crash on a malformed tensor fails the run (default) or is only reported",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result-fd", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--request-fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        runner.worker(args.worker, args.result_fd, args.request_fd)
        return 0
    if not args.libraries:
        parser.print_usage(sys.stderr)
        print(
            f"{prog}: name at least one LIBRARY, such as numpy",
            file=sys.stderr,
        )
        return 2
    try:
        xfail = runner.read_xfail(args.xfail) if args.xfail else []
    except OSError as e:
        print(f"{prog}: --xfail: {e}", file=sys.stderr)
        return 2
    files = {}
    for option in ("json", "markdown"):
        if getattr(args, option):
            try:
                files[option] = open(getattr(args, option), "w")  # noqa: SIM115 - written at the end, opened first to fail early
            except OSError as e:
                print(f"{prog}: --{option}: {e}", file=sys.stderr)
                return 2
    results, cannot, summaries, pages = [], [], [], []
    try:
        for library in args.libraries:
            try:
                _, cases = runner.select_cases(library, args.case)
            except runner.CannotRun as e:
                cannot.append(f"cannot run against {library}: {e}")
                continue
            if not cases:
                cannot.append(
                    f"no case of {library} matches --case {' --case '.join(args.case)} (--list lists them)"
                )
                continue
            if args.list:
                print("\n".join(c.id for c in cases))
                continue
            start = time.monotonic()
            try:
                got = runner.run_library(library, args.case, isolate=runner.isolated_by_environment())
            except runner.CannotRun as e:
                cannot.append(f"cannot run against {library}: {e}")
                continue
            runner.apply_xfail(got, xfail, library)
            results += got
            whole = runner.whole_sides(library, got)
            summaries.append(runner.summarize(got, args.malformed_crashes, whole))
            pages.append(report.markdown(got, args.malformed_crashes, _command(prog, library, args), whole))
            report.print_library(
                got,
                time.monotonic() - start,
                quiet=args.quiet,
                malformed_crashes=args.malformed_crashes,
                whole_sides=whole,
            )
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; the results so far follow", file=sys.stderr)
        cannot.append("interrupted")
    finally:
        if "json" in files:
            with files["json"] as f:
                json.dump(results, f, indent=1)
                f.write("\n")
        if "markdown" in files:
            with files["markdown"] as f:
                f.write("\n".join(pages))
    for line in cannot:
        print(f"{prog}: {line}", file=sys.stderr)
    if cannot:
        return 130 if cannot[-1] == "interrupted" else 2
    return runner.exit_status(summaries)


def _command(prog, library, args):
    """The command that ran library, as typed: how the kit was called, the
    library as named, and every option that changes a verdict (the output
    options, --json, --markdown and -q, change none and are left out)."""
    import shlex

    words = [prog, library]
    if args.malformed_crashes != "fail":
        words += ["--malformed-crashes", args.malformed_crashes]
    if args.xfail:
        words += ["--xfail", args.xfail]
    for pattern in args.case:
        words += ["--case", pattern]
    command = shlex.join(words[1:])
    isolated = "DLPACK_CONFORMANCE_ISOLATE=1 " if runner.isolated_by_environment() else ""
    return f"{isolated}{prog} {command}"


def run(argv=None, prog=MODULE):
    """main, quiet when stdout is closed early (`... | head`)."""
    try:
        status = main(argv, prog)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a process that SIGPIPE ended
    return status


def command():
    """The dlpack-conformance command: run, named as the user called it."""
    return run(prog=COMMAND)


if __name__ == "__main__":
    sys.exit(run())
