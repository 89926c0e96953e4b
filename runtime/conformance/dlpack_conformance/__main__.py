"""python -m dlpack_conformance LIBRARY... [--json FILE] [--case PATTERN] [--xfail FILE]

Runs the DLPack conformance cases against each LIBRARY (a module name such
as numpy, torch, jax, or an adapter file ending in .py) and prints a report.
Exit status: 0 when every case passes (warnings, skips and expected
failures included), 1 when a case fails or crashes or an expected failure
passes, 2 when the kit cannot run (a library that does not import, a bad
argument)."""

import argparse
import json
import sys
import time

from . import report, runner


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m dlpack_conformance",
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
    parser.add_argument(
        "--list", action="store_true", help="list the case ids for each LIBRARY and exit"
    )
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="print the summary and the failures only"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--result-fd", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        runner.worker(args.worker, args.result_fd)
        return 0
    if not args.libraries:
        parser.print_usage(sys.stderr)
        print(
            "python -m dlpack_conformance: name at least one LIBRARY, such as numpy",
            file=sys.stderr,
        )
        return 2
    try:
        xfail = runner.read_xfail(args.xfail) if args.xfail else []
    except OSError as e:
        print(f"python -m dlpack_conformance: --xfail: {e}", file=sys.stderr)
        return 2
    json_file = None
    if args.json:
        try:
            json_file = open(args.json, "w")  # noqa: SIM115 - written at the end, opened first to fail early
        except OSError as e:
            print(f"python -m dlpack_conformance: --json: {e}", file=sys.stderr)
            return 2
    results, cannot = [], []
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
                got = runner.run_library(library, args.case)
            except runner.CannotRun as e:
                cannot.append(f"cannot run against {library}: {e}")
                continue
            runner.apply_xfail(got, xfail, library)
            results += got
            report.print_library(got, time.monotonic() - start, quiet=args.quiet)
    except KeyboardInterrupt:
        print(
            "python -m dlpack_conformance: interrupted; the results so far follow", file=sys.stderr
        )
        cannot.append("interrupted")
    finally:
        if json_file is not None:
            with json_file:
                json.dump(results, json_file, indent=1)
                json_file.write("\n")
    for line in cannot:
        print(f"python -m dlpack_conformance: {line}", file=sys.stderr)
    if cannot:
        return 130 if cannot[-1] == "interrupted" else 2
    return 1 if runner.failed(results) else 0


if __name__ == "__main__":
    sys.exit(main())
