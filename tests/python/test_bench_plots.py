"""bench/plot.py, which draws the benchmarks' figures: from a small fixed set of
numbers (nothing is timed) each kind of plot is a valid SVG, written the same
byte for byte every time, with no date, its labels and figures as text; and
the figures in docs/bench are SVGs that docs/benchmarks.md shows."""
import glob
import importlib.util
import os
import re
import sys
import xml.etree.ElementTree as ET

import pytest
from harness import REQUIRED, ROOT

SVG = "{http://www.w3.org/2000/svg}"

if importlib.util.find_spec("matplotlib") is None:
    if REQUIRED:
        raise RuntimeError("matplotlib is not installed (DLGEN_REQUIRE_TOOLS=1)")
    pytest.skip("matplotlib is not installed", allow_module_level=True)
sys.path.insert(0, os.path.join(ROOT, "bench"))
import plot

GROUPS = [
    plot.Group("Python exchange of 16 float32 elements", "np.from_dlpack(np_array)", 736.0, [
        plot.Ratio("dlpack_ctypes.from_dlpack(np_array)", 8441.0, 11.35, 10.98, 11.81),
        plot.Ratio("dlpack_cython.from_dlpack(np_array)", 842.0, 1.15, 1.07, 1.18),
    ]),
    plot.Group("tvm-ffi consuming a dlpack_cython tensor", "via __dlpack__", 1910.0, [
        plot.Ratio("via __dlpack_c_exchange_api__", 717.0, 0.38, 0.37, 0.39),
    ]),
]
PANELS = [
    plot.Panel("Contiguous copy of 64 MiB", [
        plot.Rate("devices.Copy", 16.6, 14.0, 18.0),
        plot.Rate("Go copy (memmove)", 16.2, 15.1, 17.0),
    ], "devices.Copy at 0.97x Go's speed"),
    plot.Panel("A transpose made contiguous", [
        plot.Rate("devices.Copy into new memory", 0.80, 0.70, 0.90),
        plot.Rate("np.ascontiguousarray(a.T)", 0.16, 0.15, 0.18),
    ], "devices.Copy at 5.18x NumPy's speed"),
]
NOTE = "2 CPUs, load average 5.3 at the end of the run"


def text_of(svg):
    """Every text element's content, in document order."""
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    assert not re.search(r'\bd="[^"]*\n', svg), "a path's data is written over more than one line"
    assert float(root.get("width").removesuffix("pt")) > 0 and float(root.get("height").removesuffix("pt")) > 0
    return ["".join(t.itertext()) for t in root.iter(SVG + "text")]


def draw(tmp_path, kind):
    paths = [tmp_path / f"{kind}-{i}" / "figure.svg" for i in range(2)]
    for path in paths:
        if kind == "ratios":
            plot.ratios(str(path), "Python exchange cost", GROUPS, NOTE)
        else:
            plot.throughput(str(path), "Copy engine throughput", PANELS, NOTE)
    first, second = (p.read_bytes() for p in paths)
    assert first == second, "the same numbers drew different files"
    return first.decode()


def test_ratios_plot(tmp_path):
    svg = draw(tmp_path, "ratios")
    texts = text_of(svg)
    for label in ("Python exchange cost", "dlpack_ctypes.from_dlpack(np_array)",
                  "dlpack_cython.from_dlpack(np_array)", "via __dlpack_c_exchange_api__", NOTE,
                  "11.35x", "1.15x", "0.38x", "1x", "10x"):
        assert label in texts, label
    assert any("np.from_dlpack(np_array), 736 ns" in t for t in texts)
    # one error bar per candidate, from its q1 to its q3
    assert len(re.findall(r'<g id="LineCollection_\d+">', svg)) == 3
    assert not re.search(r"<dc:date>", svg)


def test_throughput_plot(tmp_path):
    svg = draw(tmp_path, "throughput")
    texts = text_of(svg)
    for label in ("Copy engine throughput", "devices.Copy", "Go copy (memmove)", "np.ascontiguousarray(a.T)",
                  "16.60 GB/s", "0.16 GB/s", "devices.Copy at 5.18x NumPy's speed", NOTE):
        assert label in texts, label
    assert not re.search(r"<dc:date>", svg)


def test_docs_show_every_figure():
    with open(os.path.join(ROOT, "docs", "benchmarks.md")) as f:
        page = f.read()
    figures = sorted(glob.glob(os.path.join(ROOT, "docs", "bench", "*.svg")))
    assert {os.path.basename(f) for f in figures} == {"python-exchange.svg", "framework.svg", "copy-engine.svg"}
    for figure in figures:
        name = os.path.basename(figure)
        assert f"(bench/{name})" in page, f"docs/benchmarks.md does not show {name}"
        with open(figure) as f:
            assert text_of(f.read())


def test_a_plot_goes_to_the_docs_only_when_asked(monkeypatch, tmp_path):
    monkeypatch.delenv("DLGEN_BENCH_DOCS", raising=False)
    monkeypatch.setenv("DLGEN_BENCH_OUT", str(tmp_path))
    assert plot.out("copy-engine.svg") == os.path.join(str(tmp_path), "copy-engine.svg")
    monkeypatch.delenv("DLGEN_BENCH_OUT")
    assert not os.path.abspath(plot.out("copy-engine.svg")).startswith(ROOT + os.sep)
    monkeypatch.setenv("DLGEN_BENCH_DOCS", "1")
    assert plot.out("copy-engine.svg") == os.path.join(ROOT, "docs", "bench", "copy-engine.svg")
