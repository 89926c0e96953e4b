"""The report for people. Per library: a summary line (the version, a count
per verdict, judged and skipped cases per side), what fails the run, then
one entry per broken requirement (how many cases broke it, the first few
ids, what the library did in the first, one reproducer), not one per case:
the JSON keeps every case. markdown() writes the same groups as a report
fit to paste into an issue of the library's tracker."""

import platform
import re
import sys

from .runner import SIDES, VERDICTS, fails_run, summarize

SHOWN_IDS = 3
# the order groups are printed in, and their heading
HEADINGS = {
    "fail": "FAIL",
    "crash": "CRASH",
    "error": "KIT ERROR",
    "warn": "WARN",
    "xfail": "XFAIL",
}


def group(results, verdicts):
    """The results of the given verdicts, grouped by what they break: a
    requirement (fail, warn, crash, xfail) or, for the kit's errors, the
    exception. A list of (verdict, key, results), failures first, then by
    size."""
    groups = {}
    for r in results:
        if r["verdict"] not in verdicts:
            continue
        key = r["spec"]
        if r["verdict"] == "error":
            key = _error_key(r["message"])
        groups.setdefault((r["verdict"], key), []).append(r)
    order = list(HEADINGS)
    return sorted(
        ((v, k, rs) for (v, k), rs in groups.items()),
        key=lambda g: (order.index(g[0]) if g[0] in order else len(order), -len(g[2]), str(g[1])),
    )


def _error_key(message):
    """An error's exception type."""
    kind = re.search(r": (\w+): ", message)
    return kind.group(1) if kind else message


def summary_line(results, seconds=None, malformed_crashes="fail"):
    s = summarize(results, malformed_crashes)
    counts = ", ".join(f"{s['counts'][v]} {v}" for v in VERDICTS if s["counts"][v])
    name = s["library"] + (f" {s['version']}" if s["version"] else "")
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    sides = []
    for side in SIDES:
        n = s["sides"][side]
        if not n["cases"]:
            continue
        text = f"{side} judged {n['judged']} of {n['cases']}"
        if n["missing"]:
            text += f" (no {side})"
        elif n["skipped"]:
            text += f" ({n['skipped']} skipped, {n['declared']} of them declared)"
        sides.append(text)
    return f"== {name}: {s['cases']} cases{took}: {counts}; " + "; ".join(sides)


def print_library(results, seconds, quiet=False, out=None, malformed_crashes="fail", whole_sides=SIDES):
    out = out or sys.stdout
    if not results:
        print("no case matched", file=out)
        return
    s = summarize(results, malformed_crashes, whole_sides)
    print(summary_line(results, seconds, malformed_crashes), file=out)
    for problem in s["problems"]:
        print(f"   the run fails: {problem}", file=out)
    if s["errors"]:
        n = f"{s['errors']} case{'s' * (s['errors'] != 1)}"
        print(
            f"   the kit could not judge {n} (KIT ERROR below), not counted against {s['library']}: "
            "the traceback says where it was raised (the kit, the adapter, or the library called "
            "from a check)",
            file=out,
        )
    shown = ("fail", "crash", "error") if quiet else ("fail", "crash", "error", "warn", "xfail")
    for verdict, key, rs in group(results, shown):
        print(file=out)
        _print_group(verdict, key, rs, out, malformed_crashes)
    if not quiet:
        skipped = [r for r in results if r["verdict"] == "skip"]
        if skipped:
            print(f"\nskipped ({len(skipped)}):", file=out)
            for line in skip_lines(skipped):
                print(f"  {line}", file=out)
    print(file=out)


def skip_lines(skipped):
    """The skip summary: one line per reason, the reasons that differ only by
    the case's dtype as one line naming the dtypes."""
    groups = {}
    for r in skipped:
        dtype = _case_dtype(r["case"])
        why = r["message"]
        if dtype:
            why = re.sub(re.escape(dtype), "<dtype>", why, flags=re.IGNORECASE)
        groups.setdefault(why, []).append(dtype)
    lines = []
    for why, dtypes in sorted(groups.items(), key=lambda g: -len(g[1])):
        named = sorted({d for d in dtypes if d})
        if "<dtype>" in why and named:
            why += f" (<dtype>: {', '.join(named)})"
        lines.append(f"{len(dtypes)} x {why}")
    return lines


def _case_dtype(case):
    """The dtype a case is about (producer/dtype/int8/..., .../dtype-protocol/int8), or None."""
    parts = case.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in ("dtype", "dtype-protocol"):
            return parts[i + 1]
    return None


def _cases(rs):
    ids = ", ".join(r["case"] for r in rs[:SHOWN_IDS])
    more = len(rs) - SHOWN_IDS
    return ids + (f" (and {more} more)" if more > 0 else "")


def _print_group(verdict, key, rs, out, malformed_crashes):
    first = rs[0]
    n = f"{len(rs)} case{'s' * (len(rs) != 1)}"
    if verdict == "error":
        print(f"KIT ERROR {key}: {n} the kit could not judge (not the library's fault)", file=out)
    else:
        basis = f"  [{first['basis']}]" if first.get("basis") else ""
        print(
            f"{HEADINGS[verdict]} {key or 'a requirement the kit does not name'}: {n}{basis}",
            file=out,
        )
    if verdict == "crash" and not any(fails_run(r, malformed_crashes) for r in rs):
        print("  (--malformed-crashes report: reported, not failing the run)", file=out)
    if first["spec"]:
        print(f"  requires: {first['requirement']}", file=out)
        print(f"  source:   {first['source']}", file=out)
    print(f"  cases:    {_cases(rs)}", file=out)
    print(f"  got:      {first['message']}  ({first['case']}: {first['about']})", file=out)
    if verdict == "error" and first.get("traceback"):
        print("  traceback:", file=out)
        for line in first["traceback"].splitlines():
            print("    " + line, file=out)
    if verdict in ("fail", "crash", "error") and first.get("reproducer"):
        print(f"  reproducer ({first['case']}):", file=out)
        for line in first["reproducer"].splitlines():
            print("    " + line, file=out)


# ---- Markdown ---------------------------------------------------------------


def markdown(results, malformed_crashes="fail", command=None, whole_sides=SIDES):
    """A report of one library's run fit to paste into an issue: per broken
    rule, the rule, where it is written and how strongly, what the library
    did, the cases, one reproducer."""
    s = summarize(results, malformed_crashes, whole_sides)
    name = s["library"] + (f" {s['version']}" if s["version"] else "")
    lines = [f"## DLPack conformance of {name}", ""]
    command = command or f"python -m dlpack_conformance {s['library']}"
    lines += [
        (
            f"Found with the DLPack conformance kit (`{command}`), on Python "
            f"{platform.python_version()}, {platform.system()} {platform.machine()}:"
        ),
        "",
        f"`{summary_line(results, None, malformed_crashes).lstrip('= ')}`",
        "",
    ]
    if s["problems"]:
        lines += ["The run fails:", "", *(f"- {p}" for p in s["problems"]), ""]
    failing = group(results, ("fail", "crash"))
    warned = group(results, ("warn",))
    if not failing:
        lines += ["No requirement is broken.", ""]
    for n, (verdict, key, rs) in enumerate(failing, 1):
        lines += _markdown_group(n, verdict, key, rs, s["library"], malformed_crashes)
    if warned:
        lines += [
            "### Recommendations not followed (`should`: warnings, not failures)",
            "",
            "| rule | cases | first case | what the library did |",
            "|---|---|---|---|",
        ]
        for _verdict, key, rs in warned:
            rule, got = _cell(rs[0]["requirement"] or ""), _cell(rs[0]["message"])
            lines.append(f"| `{key}`: {rule} | {len(rs)} | `{rs[0]['case']}` | {got} |")
        lines.append("")
    if s["errors"]:
        lines += [
            (
                f"The kit could not judge {s['errors']} cases (its own errors, not {s['library']}'s); "
                "they are left out here."
            ),
            "",
        ]
    return "\n".join(lines)


def _markdown_group(n, verdict, key, rs, library, malformed_crashes):
    first = rs[0]
    title = f"### {n}. `{key}`" + (" (crash)" if verdict == "crash" else "") + f": {len(rs)} case"
    lines = [title + ("s" if len(rs) != 1 else ""), ""]
    if first["spec"]:
        strength = first["basis"]
        words = (
            "the kit's own policy, not a text's words"
            if strength != first["strength"]  # "must, the kit's policy"
            else ("required by the text" if strength == "must" else "recommended by the text")
        )
        lines += [
            f"**Rule** ({strength}: {words}): {first['requirement']}",
            "",
            f"**Where it is written:** {first['source']}",
            "",
        ]
    if verdict == "crash" and not any(fails_run(r, malformed_crashes) for r in rs):
        lines += [
            "(Reported only: this run was told not to fail on crashes on malformed input.)",
            "",
        ]
    lines += [
        f"**What {library} did** (`{first['case']}`, {first['about']}): {first['message']}",
        "",
    ]
    ids = ", ".join(f"`{r['case']}`" for r in rs[:SHOWN_IDS])
    if len(rs) > SHOWN_IDS:
        rest = "<br>".join(f"`{r['case']}`" for r in rs[SHOWN_IDS:])
        ids += f" and <details><summary>{len(rs) - SHOWN_IDS} more</summary>{rest}</details>"
    lines += [f"**Cases:** {ids}", ""]
    if first.get("reproducer"):
        code = first["reproducer"].rstrip()
        lines += ["**Reproducer** (with the kit installed):", "", "```python", code, "```", ""]
    return lines


def _cell(text):
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 200 else text[:200] + "..."
