"""The report for people: per library, a count per verdict, then every case
that did not pass, with the requirement it breaks, where that is written,
what the library did, and the reproducer."""

from collections import Counter

from .runner import VERDICTS


def print_library(results, seconds, quiet=False, out=None):
    import sys

    out = out or sys.stdout
    if not results:
        print("no case matched", file=out)
        return
    library = results[0]["library"]
    counts = Counter(r["verdict"] for r in results)
    summary = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])
    print(f"== {library}: {len(results)} cases in {seconds:.1f} s: {summary}", file=out)
    shown = ("fail", "crash") if quiet else ("fail", "crash", "warn", "xfail")
    for r in results:
        if r["verdict"] not in shown:
            continue
        print(f"\n{r['verdict'].upper()} {r['case']}  ({r['side']}: {r['about']})", file=out)
        if r["spec"]:
            print(f"  requires: {r['requirement']}", file=out)
            print(f"  source:   {r['source']} [{r['strength']}]", file=out)
        print(f"  got:      {r['message']}", file=out)
        if r["verdict"] in ("fail", "crash"):
            print("  reproducer:", file=out)
            for line in r["reproducer"].splitlines():
                print("    " + line, file=out)
    if not quiet:
        skipped = [r for r in results if r["verdict"] == "skip"]
        if skipped:
            reasons = Counter(r["message"] for r in skipped)
            print(f"\nskipped ({len(skipped)}):", file=out)
            for why, n in reasons.most_common():
                print(f"  {n} x {why}", file=out)
    print(file=out)
