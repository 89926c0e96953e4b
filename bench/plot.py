"""The benchmarks' figures drawn as SVG plots for docs/bench/, beside the tables
the benchmarks print (docs/benchmarks.md shows them).

Two kinds: ratios, a candidate's time over its peer's time in the same run
(the peer is the line at 1.0, each candidate a point at its median ratio with
the middle half of its per-round ratios as error bars, on a log scale); and
throughput, GB/s of copies against Go's copy and NumPy, with the middle half
of the per-iteration or per-round figures as error bars.

The same numbers always give the same file: matplotlib's ids come from a
fixed hash salt, the metadata carries no date, and text stays text (no glyph
paths), so a diff of two runs shows the numbers that changed.
"""
import io
import os
import re
import tempfile
from typing import NamedTuple

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "bench")


def out(name):
    """Where the plot name goes: docs/bench/, the figures the docs show, only when
    asked (DLGEN_BENCH_DOCS=1, as make bench-docs sets); otherwise a scratch folder
    outside the checkout (DLGEN_BENCH_OUT, default dlgen-bench under the system's
    temporary folder), so that a run changes no tracked file."""
    if os.environ.get("DLGEN_BENCH_DOCS") == "1":
        return os.path.join(DOCS, name)
    scratch = os.environ.get("DLGEN_BENCH_OUT") or os.path.join(tempfile.gettempdir(), "dlgen-bench")
    return os.path.join(scratch, name)

STYLE = {
    "svg.hashsalt": "dlgen",
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
METADATA = {"Date": None, "Creator": "dlgen bench/plot.py (matplotlib " + matplotlib.__version__ + ")"}
CANDIDATE, PEER, GRID = "#1f5fa8", "#555555", "#dddddd"


class Ratio(NamedTuple):
    """A candidate's median time and its time over the peer's: the median of
    the per-round ratios and their quartiles."""
    label: str
    ns: float
    median: float
    q1: float
    q3: float


class Group(NamedTuple):
    """A peer and the candidates measured against it in one interleaved run."""
    title: str
    peer: str
    peer_ns: float
    ratios: list


class Rate(NamedTuple):
    """A copy's throughput in GB/s: the median and the quartiles."""
    label: str
    median: float
    q1: float
    q3: float


class Panel(NamedTuple):
    """Copies of the same data compared; note says how they compare."""
    title: str
    rates: list
    note: str


def machine():
    """The machine the figures come from: CPUs and load, to print under a plot."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{os.cpu_count()} CPUs, load average {load:.1f} at the end of the run"


def ratios(path, title, groups, note):
    """Writes an SVG of each group's candidates as ratios against its peer."""
    groups = [g for g in groups if g.ratios]
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(8, 0.9 + sum(0.32 * len(g.ratios) + 0.62 for g in groups)), layout="constrained")
        axes = fig.subplots(len(groups), 1, sharex=True, squeeze=False,
                            gridspec_kw={"height_ratios": [len(g.ratios) + 1.4 for g in groups]})[:, 0]
        values = [1.0] + [v for g in groups for r in g.ratios for v in (r.q1, r.q3)]
        lo, hi = min(values) / 1.5, max(values) * 2.2
        for ax, g in zip(axes, groups):
            ys = range(len(g.ratios) - 1, -1, -1)  # the first candidate on top
            ax.axvline(1.0, color=PEER, linestyle="--", linewidth=1)
            for y, r in zip(ys, g.ratios):
                ax.errorbar([r.median], [y], xerr=[[r.median - r.q1], [r.q3 - r.median]],
                            fmt="o", color=CANDIDATE, markersize=4, capsize=3, linewidth=1)
                ax.annotate(f"{r.median:.2f}x", (r.q3, y), xytext=(5, 0), textcoords="offset points",
                            va="center", fontsize=8)
            ax.set_yticks(list(ys), [r.label for r in g.ratios])
            ax.set_ylim(-0.7, len(g.ratios) - 0.3)
            ax.set_title(f"{g.title}\npeer (dashed line, 1.0): {g.peer}, {g.peer_ns:.0f} ns",
                         loc="left", fontsize=9)
            ax.grid(axis="x", color=GRID, linewidth=0.6)
            ax.set_axisbelow(True)
        ax = axes[-1]
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ticks = [m * 10.0 ** e for e in range(-3, 4) for m in (1, 2, 5) if lo <= m * 10.0 ** e <= hi]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("time relative to the peer (log scale; left of the dashed line is faster)\n"
                      "point: median of per-round ratios; bar: their middle half (quartiles)")
        fig.suptitle(title, x=0.01, ha="left", fontweight="bold")
        fig.supxlabel(note, x=0.99, ha="right", fontsize=7, color=PEER)
        _save(fig, path)


def throughput(path, title, panels, note):
    """Writes an SVG of each panel's copies as GB/s bars."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(9, 0.9 + sum(0.45 * len(p.rates) + 0.8 for p in panels)), layout="constrained")
        axes = fig.subplots(len(panels), 1, squeeze=False,
                            gridspec_kw={"height_ratios": [len(p.rates) + 1.2 for p in panels]})[:, 0]
        for ax, p in zip(axes, panels):
            ys = list(range(len(p.rates) - 1, -1, -1))
            colors = [CANDIDATE] * (len(p.rates) - 1) + [PEER]  # the last is the peer
            ax.barh(ys, [r.median for r in p.rates], height=0.6, color=colors,
                    xerr=[[r.median - r.q1 for r in p.rates], [r.q3 - r.median for r in p.rates]],
                    error_kw={"capsize": 3, "linewidth": 1, "ecolor": "black"})
            for y, r in zip(ys, p.rates):
                ax.annotate(f"{r.median:.2f} GB/s", (r.q3, y), xytext=(5, 0), textcoords="offset points",
                            va="center", fontsize=8)
            ax.set_yticks(ys, [r.label for r in p.rates])
            ax.set_xlim(0, max(r.q3 for r in p.rates) * 1.3)
            ax.set_title(f"{p.title}\n{p.note}", loc="left", fontsize=9)
            ax.grid(axis="x", color=GRID, linewidth=0.6)
            ax.set_axisbelow(True)
            ax.set_xlabel("GB/s (bytes of the tensor / time; bar: median, whisker: middle half)")
        fig.suptitle(title, x=0.01, ha="left", fontweight="bold")
        fig.supxlabel(note, x=0.99, ha="right", fontsize=7, color=PEER)
        _save(fig, path)


def _save(fig, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    out = io.StringIO()
    fig.savefig(out, format="svg", metadata=METADATA)
    with open(path, "w") as f:
        f.write(one_line_paths(out.getvalue()))
    print(f"plot: {os.path.relpath(path)}")


def one_line_paths(svg):
    """svg with each path's data on one line (matplotlib writes a point a
    line; whitespace in path data is only a separator): the same drawing in
    a fifth fewer lines of checked-in output."""
    return re.sub(r'\bd="([^"]*)"', lambda m: 'd="' + " ".join(m.group(1).split()) + '"', svg)
