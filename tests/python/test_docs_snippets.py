"""Every Python snippet of docs/ runs as written: each ```python block is run
as a script, in a scratch directory that holds what its page says to make
first (the generated modules, a vendored copy for mylib, the c-shared bridge
libdlgen.so, the conformance kit). A block that is not a program marks it on
the line before its fence, with its reason, which this test requires:

    <!-- snippet: fragment, the body of a __dlpack__ method -->

and a block that needs an optional library names it:

    <!-- snippet: needs torch -->
"""
import os
import re
import shutil
import subprocess
import sys

import pytest
import required

from conftest import CYTHON_DIR, GENERATED, ROOT

DOCS = os.path.join(ROOT, "docs")
MARKER = re.compile(r"^<!-- snippet: (fragment|needs),? (.*?) -->$")


def snippets():
    """(page:line, marker kind, marker text, code) of every Python block."""
    out = []
    for name in sorted(os.listdir(DOCS)):
        if not name.endswith(".md"):
            continue
        lines = open(os.path.join(DOCS, name), encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"^(\s*)```python\s*$", lines[i])
            if not m:
                i += 1
                continue
            indent, start = m.group(1), i
            i += 1
            body = []
            while not lines[i].strip().startswith("```"):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
            marker = MARKER.match(before)
            kind, text = (marker.group(1), marker.group(2)) if marker else ("", "")
            out.append((f"docs/{name}:{start + 1}", kind, text, "\n".join(body) + "\n"))
            i += 1
    return out


SNIPPETS = snippets()


def test_fragments_are_few_and_justified():
    fragments = [(where, why) for where, kind, why, _ in SNIPPETS if kind == "fragment"]
    assert all(len(why.split()) >= 4 for _, why in fragments), fragments
    assert len(fragments) * 2 < len(SNIPPETS), "most snippets run: " + repr(fragments)


def prepare(dlgen, code, scratch):
    """scratch holding what code needs; the PYTHONPATH it runs with."""
    shutil.copy(os.path.join(GENERATED, "dlpack_ctypes.py"), scratch)
    path = [str(scratch)] + ([CYTHON_DIR] if CYTHON_DIR else [])
    if "mylib._vendor" in code:
        (scratch / "mylib").mkdir()
        (scratch / "mylib" / "__init__.py").write_text("")
        subprocess.run([dlgen, "-lang", "python", "-python-package", "mylib._vendor.python",
                        "-out", str(scratch / "mylib" / "_vendor")], check=True, capture_output=True)
    if "dlpack_conformance" in code:
        subprocess.run([dlgen, "-lang", "conformance", "-out", str(scratch)], check=True, capture_output=True)
        path.append(str(scratch / "conformance"))
    if "libdlgen.so" in code:
        for tool in ("go", "gcc"):
            if shutil.which(tool) is None:
                pytest.fail(f"{tool} is not installed") if required.REQUIRED else pytest.skip(f"{tool} is not installed")
        subprocess.run(["go", "build", "-buildmode=c-shared", "-o", str(scratch / "libdlgen.so"), "./examples/gobridge"],
                       cwd=ROOT, check=True, capture_output=True)
    return os.pathsep.join(path)


@pytest.mark.parametrize("where,kind,needs,code", [s for s in SNIPPETS if s[1] != "fragment"], ids=lambda v: v
                         if isinstance(v, str) and v.startswith("docs/") else "")
def test_snippet_runs_as_written(dlgen, tmp_path, where, kind, needs, code):
    for module in needs.split(", ") if kind == "needs" else []:
        required.module(module)
    if "dlpack_cython" in code and not CYTHON_DIR:
        pytest.fail("Cython is not installed") if required.REQUIRED else pytest.skip("Cython is not installed")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = prepare(dlgen, code, tmp_path)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, f"{where}:\n{code}\n{r.stdout}{r.stderr}"


def test_readme_kit_example_with_its_xfail_file(dlgen, tmp_path):
    """The README's conformance-kit example: its xfail file names what NumPy
    fails on a stock machine, and with it the NumPy run passes (exit 0)."""
    required.module("numpy")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        section = f.read().split("### Testing any library's DLPack", 1)[1].split("\n### ", 1)[0]
    commands = section.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    xfail = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert "xfail.txt" in section and all(line.startswith("numpy: ") for line in xfail.splitlines()), xfail
    run = next(c.split("#")[0].split() for c in commands if "--xfail" in c)
    assert run[:3] == ["python", "-m", "dlpack_conformance"], run
    subprocess.run([dlgen, "-lang", "conformance", "-out", str(tmp_path)], check=True, capture_output=True)
    kit = tmp_path / "conformance"
    (kit / "xfail.txt").write_text(xfail)
    r = subprocess.run([sys.executable, *run[1:]], cwd=kit, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
