"""Every code block of README.md and docs/*.md runs as written, or says on
the line before its fence why it cannot run alone; this file is the one
place that holds both. A block without a marker runs, by its language:

- python: as a script, in a scratch directory holding what its page says to
  make first (the generated modules, a vendored copy for mylib, the c-shared
  bridge libdlgen.so, the conformance kit);
- sh and console: the blocks of a page, in order, in one scratch directory
  with dlgen on PATH; a console block's `$ ` lines are the commands and the
  lines after each its output, which must match (a line `...` stands for any
  lines, and `...` inside a line for any text);
- yaml and toml: they parse (YAML with the schema loader's library).

Any other block carries one marker, whose reason the test checks:

    <!-- snippet: fragment of PATH -->       its lines appear in PATH, in order
    <!-- snippet: harness NAME -->           pasted into testdata/snippets/NAME
                                             at its SNIPPET line, it builds (and
                                             runs, where the harness has a main)
    <!-- snippet: tested by PATH NAME -->    the test NAME of PATH (or what of its file
                                             it uses) reads this page
    <!-- snippet: needs WHAT, ... -->         Python modules (the block runs where
                                             they import), or what a test lacks:
                                             network, root, sycl, minutes, checkout
    <!-- snippet: given COMMAND -->          COMMAND runs first in the scratch
                                             directory (sh and console only;
                                             $DLGEN_CHECKOUT is this checkout)
    <!-- snippet: illustration, REASON -->   made up for reading: a format, a
                                             report of your library, timings
"""
import os
import re
import shutil
import subprocess
import sys
import tomllib
from typing import NamedTuple

import pytest
import required

from harness import CYTHON_DIR, GENERATED, ROOT

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESSES = os.path.join(HERE, "testdata", "snippets")
MARKER = re.compile(r"^<!-- snippet: (fragment of|tested by|[a-z]+)[ ,]*(.*?) -->$")
FENCE = re.compile(r"^(\s*)(```|~~~)([\w+-]*)\s*$")
KINDS = ("fragment of", "harness", "tested by", "needs", "given", "illustration")

# go in the module of the Go blocks: this checkout by a replace, nothing fetched.
GO_OFFLINE = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOWORK": "off", "GOSUMDB": "off"}

# What a block needs that no test here has, and the text that shows it does.
UNRUNNABLE = {
    "network": r"pip install|go get|apt-get|cargo add",  # an index, a proxy
    "root": r"\bsudo\b",
    "sycl": r"dpnp|dpctl",  # a SYCL runtime (tests/python/test_devices.py)
    "minutes": r"(^|\n)make ",  # the suite or the benchmarks
    "checkout": r"\./(cmd|internal|tests|scripts)/|go (run|test|build) \./",  # runs inside a dlgen checkout
}


class Block(NamedTuple):
    where: str  # page:line
    page: str
    lang: str
    kind: str
    arg: str
    code: str


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def pages():
    return ["README.md", *sorted("docs/" + n for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))]


def blocks():
    out = []
    for page in pages():
        lines = read(os.path.join(ROOT, page)).split("\n")
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            indent, close, start = m.group(1), m.group(2), i
            i += 1
            body = []
            while not lines[i].strip().startswith(close):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
            marker = MARKER.match(before)
            kind, arg = (marker.group(1), marker.group(2)) if marker else ("", "")
            out.append(Block(f"{page}:{start + 1}", page, m.group(3), kind, arg, "\n".join(body) + "\n"))
            i += 1
    return out


BLOCKS = blocks()


def ids(blocks):
    return [b.where for b in blocks]


def ident(value):
    return value.where if isinstance(value, Block) else str(value)


def of(kind, *langs):
    return [b for b in BLOCKS if b.kind == kind and (not langs or b.lang in langs)]


def runs_unmarked(b):
    return b.lang in ("python", "sh", "console", "yaml", "toml")


def test_every_block_runs_or_says_why():
    unmarked = [b.where + " " + (b.lang or "(no language)") for b in BLOCKS if not b.kind and not runs_unmarked(b)]
    assert not unmarked, "blocks that neither run nor carry a <!-- snippet: ... --> marker: " + repr(unmarked)
    unknown = [(b.where, b.kind) for b in BLOCKS if b.kind and b.kind not in KINDS]
    assert not unknown, f"markers of no kind of {KINDS}: {unknown}"


def test_illustrations_are_few_and_justified():
    made_up = of("illustration")
    assert all(len(b.arg.split()) >= 4 for b in made_up), [(b.where, b.arg) for b in made_up]
    assert len(made_up) * 6 < len(BLOCKS), "most blocks run: " + repr(ids(made_up))


def elided(pattern):
    """A regular expression for a line with `...` standing for any text."""
    return re.compile(".*".join(re.escape(p) for p in pattern.split("...")) + r"\Z", re.S)


def match_lines(want, got):
    """Whether the lines got match want, where a line `...` stands for any
    lines and `...` inside a line for any text."""
    if not want:
        return not got
    if want[0].strip() == "...":
        return any(match_lines(want[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and bool(elided(want[0].rstrip()).match(got[0].rstrip())) and match_lines(want[1:], got[1:])


@pytest.mark.parametrize("b", of("fragment of"), ids=ident)
def test_fragment_is_in_its_file(b):
    path = os.path.join(ROOT, b.arg)
    assert os.path.isfile(path), f"{b.where}: no file {b.arg}"
    text = [line.strip() for line in read(path).split("\n")]
    want = [line.strip() for line in b.code.split("\n") if line.strip() and line.strip() != "..."]
    k = 0
    for line in want:
        pattern = elided(line)
        while k < len(text) and not pattern.match(text[k]):
            k += 1
        assert k < len(text), f"{b.where}: {line!r} is not in {b.arg} (after the lines before it)"
        k += 1


# A top-level definition of a Go or Python test file: its doc comment (Go's
# `//` lines above it), its name and its text up to the next top-level line.
DEFINITION = re.compile(r"^((?://.*\n)*)(?:func (?:\([^)]*\) )?|def |class |var |const )?(\w+)\b.*\n(?:(?:[ \t}\)\]].*|)\n)*", re.M)


def definitions(source):
    return {m.group(2): m.group(0) for m in DEFINITION.finditer(source)}


def text_of_test(source, name):
    """The text of test name in source and of every definition of the same
    file it uses, at any depth; None where source defines no test name."""
    defs = definitions(source)
    if not re.match(r"(Test|test_)", name) or not re.search(rf"^(func|def) {re.escape(name)}\(", source, re.M):
        return None
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen or n not in defs:
            continue
        seen.add(n)
        todo += re.findall(r"\w+", defs[n])
    return "".join(defs[n] for n in seen)


@pytest.mark.parametrize("b", of("tested by"), ids=ident)
def test_tested_by_names_a_test_that_reads_the_page(b):
    """The marker names a test of its file (a func Test... or def test_...),
    and that test, or what of its file it uses, names the page (before: the
    page's name anywhere in the file would do, and any function)."""
    path, _, name = b.arg.partition(" ")
    text = text_of_test(read(os.path.join(ROOT, path)), name)
    assert text is not None, f"{b.where}: {path} has no test {name}"
    assert os.path.basename(b.page) in text, f"{b.where}: {path}'s {name} does not read {b.page}"


def test_tested_by_is_satisfied_by_the_test_alone():
    """The page named in another test of the file, or in the module's
    docstring, does not satisfy the marker; a helper the test calls does."""
    source = (
        '"""page.md"""\n'
        "def helper():\n    return 'other.md'\n\n\n"
        "def test_a():\n    helper()\n\n\n"
        "def test_b():\n    open('page.md')\n"
        "\n\n// docs/go.md quotes\nfunc TestC(t *testing.T) {\n\tt.Log()\n}\n"
    )
    assert "page.md" not in text_of_test(source, "test_a") and "other.md" in text_of_test(source, "test_a")
    assert "page.md" in text_of_test(source, "test_b")
    assert "go.md" in text_of_test(source, "TestC")
    assert text_of_test(source, "helper") is None and text_of_test(source, "test_z") is None


@pytest.mark.parametrize("b", of("given"), ids=ident)
def test_given_is_on_a_shell_block(b):
    assert b.lang in ("sh", "console"), f"{b.where}: given runs before shell blocks only, not a {b.lang or 'plain'} block"


# A Python block may need modules (it runs where they import); any other
# block may need only what UNRUNNABLE names, and must show it.
@pytest.mark.parametrize("b", [b for b in of("needs") if b.lang != "python" or set(b.arg.split(", ")) & set(UNRUNNABLE)],
                         ids=ident)
def test_what_a_block_needs_shows(b):
    for what in b.arg.split(", "):
        assert what in UNRUNNABLE, f"{b.where}: needs {what}, which is not one of {sorted(UNRUNNABLE)}"
        assert re.search(UNRUNNABLE[what], b.code), f"{b.where}: needs {what}, but nothing in it does"


# Python blocks


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
        need("go")
        need("gcc")
        # docs/go.md's command, as written, with the library written to scratch
        build = go_md_bridge_command().split()
        build[build.index("-o") + 1] = str(scratch / "libdlgen.so")
        subprocess.run(build, cwd=ROOT, check=True, capture_output=True)
    return os.pathsep.join(path)


def go_md_bridge_command():
    """docs/go.md's command that builds examples/gobridge as libdlgen.so."""
    block = next(b for b in BLOCKS if b.page == "docs/go.md" and "./examples/gobridge" in b.code)
    return block.code.split("#")[0].strip()


@pytest.mark.parametrize("b", [b for b in BLOCKS if b.lang == "python" and b.kind in ("", "needs", "harness")
                               and not set(b.arg.split(", ")) & set(UNRUNNABLE)], ids=ident)
def test_snippet_runs_as_written(dlgen, tmp_path, b):
    for module in b.arg.split(", ") if b.kind == "needs" else []:
        required.module(module)
    code = harnessed(b) if b.kind == "harness" else b.code
    if "dlpack_cython" in code and not CYTHON_DIR:
        pytest.fail("Cython is not installed") if required.REQUIRED else pytest.skip("Cython is not installed")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = prepare(dlgen, code, tmp_path)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, f"{b.where}:\n{code}\n{r.stdout}{r.stderr}"


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


# Shell and console blocks


def commands(code):
    """The commands of an sh block, comments and blank lines dropped."""
    out = []
    for line in code.split("\n"):
        cmd = line.split(" #")[0].strip() if not line.lstrip().startswith("#") else ""
        if cmd:
            out.append(cmd)
    return out


def shell(cmd, cwd, env, status=0):
    r = subprocess.run(["sh", "-c", f"(exit {status}); {cmd}"], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=300)
    return r.returncode, r.stdout + r.stderr


SHELL_PAGES = sorted({b.page for b in BLOCKS if b.lang in ("sh", "console") and b.kind in ("", "given")})


@pytest.mark.parametrize("page", SHELL_PAGES)
def test_shell_blocks_run_as_written(dlgen, tmp_path, page):
    """The sh and console blocks of a page, in order, in one directory, as a
    reader runs them: each command exits 0, and a console block's output is
    the one shown."""
    env = dict(os.environ, PATH=os.path.dirname(dlgen) + os.pathsep + os.environ["PATH"], DLGEN_CHECKOUT=ROOT)
    for b in BLOCKS:
        if b.page != page or b.lang not in ("sh", "console") or b.kind not in ("", "given"):
            continue
        if b.kind == "given":
            rc, out = shell(b.arg, tmp_path, env)
            assert rc == 0, f"{b.where}: given {b.arg}:\n{out}"
        if b.lang == "sh":
            for cmd in commands(b.code):
                rc, out = shell(cmd, tmp_path, env)
                # dlgen -diff and -identify exit 1 to report what they found
                finding = rc == 1 and re.match(r"dlgen -(diff|identify) ", cmd)
                assert rc == 0 or finding, f"{b.where}: {cmd}\n{out}"
            continue
        status, lines = 0, b.code.rstrip("\n").split("\n")
        starts = [k for k, line in enumerate(lines) if line.startswith("$ ")]
        assert starts and starts[0] == 0, f"{b.where}: a console block starts with a `$ ` command"
        for k, end in zip(starts, [*starts[1:], len(lines)], strict=True):
            cmd = lines[k][2:].split(" #")[0]
            status, out = shell(cmd, tmp_path, env, status)
            got = out.rstrip("\n").split("\n") if out.strip() else []
            assert match_lines(lines[k + 1:end], got), f"{b.where}: {cmd}\nwant:\n" + "\n".join(
                lines[k + 1:end]) + "\ngot:\n" + out


# YAML and TOML blocks


@pytest.mark.parametrize("b", [b for b in BLOCKS if b.lang == "toml" and not b.kind], ids=ident)
def test_toml_parses(b):
    tomllib.loads(b.code)


@pytest.fixture(scope="session")
def yamlcheck(tmp_path_factory):
    """A program that parses YAML on its stdin with the schema loader's YAML
    library (testdata/snippets/yamlcheck)."""
    exe = str(tmp_path_factory.mktemp("yamlcheck") / "yamlcheck")
    subprocess.run(["go", "build", "-o", exe, "./tests/python/testdata/snippets/yamlcheck"], cwd=ROOT, check=True)
    return exe


@pytest.mark.parametrize("b", [b for b in BLOCKS if b.lang == "yaml" and not b.kind], ids=ident)
def test_yaml_parses(yamlcheck, b):
    r = subprocess.run([yamlcheck], input=b.code, capture_output=True, text=True)
    assert r.returncode == 0, f"{b.where}:\n{b.code}\n{r.stderr}"


# Harnesses: Go, C, C++ and Rust blocks pasted into a file that completes them


def harnessed(b):
    """The harness's text with b pasted at its SNIPPET line (a Go block's
    leading import block goes to the harness's imports)."""
    text = read(os.path.join(HARNESSES, b.arg))
    code = b.code
    if b.lang == "go" and code.startswith("import ("):
        imports, _, code = code.partition("\n)\n")
        text = text.replace("import (\n", imports + "\n", 1)
    if b.lang in ("c", "cpp"):
        lines = code.split("\n")
        k = next(k for k, line in enumerate(lines) if not line.startswith("#include"))
        text, code = "\n".join(lines[:k]) + "\n" + text, "\n".join(lines[k:])
    line = next(line for line in text.split("\n") if "SNIPPET" in line)
    indent = line[:len(line) - len(line.lstrip())]
    return text.replace(line, "\n".join(indent + c if c else c for c in code.rstrip("\n").split("\n")), 1)


def test_harnesses_are_used():
    used = {b.arg for b in of("harness")}
    names = {n for n in os.listdir(HARNESSES) if os.path.isfile(os.path.join(HARNESSES, n))}
    assert names == used, "harnesses no block names, or names no harness: " + repr(names ^ used)


def need(tool):
    if shutil.which(tool) is None:
        pytest.fail(f"{tool} is not installed") if required.REQUIRED else pytest.skip(f"{tool} is not installed")


@pytest.mark.parametrize("b", of("harness", "c") + of("harness", "cpp"), ids=ident)
def test_c_block_builds_and_runs(tmp_path, b):
    cpp = b.lang == "cpp"
    need("g++" if cpp else "gcc")
    src = tmp_path / ("snippet.cpp" if cpp else "snippet.c")
    src.write_text(harnessed(b))
    exe = str(tmp_path / "snippet")
    std = ["g++", "-std=c++17"] if cpp else ["gcc", "-std=c99"]
    r = subprocess.run([*std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", os.path.join(ROOT, "generated", "c"),
                        "-o", exe, str(src)], capture_output=True, text=True)
    assert r.returncode == 0, f"{b.where} in {b.arg}:\n{src.read_text()}\n{r.stderr}"
    r = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"{b.where} in {b.arg}: exit {r.returncode}\n{r.stdout}{r.stderr}"


@pytest.fixture(scope="session")
def go_blocks(tmp_path_factory):
    """One module holding every Go block in its harness, a package each,
    that requires this checkout by a replace; go vet and go build (which
    links the mains) over it all at once. The module, and the log of the
    failures by package."""
    need("go")
    module = tmp_path_factory.mktemp("gosnippets")
    gomod = "module example.com/snippets\n\ngo 1.24.0\n\nrequire github.com/dlgen/dlgen v0.0.0\n\n"
    (module / "go.mod").write_text(gomod + f"replace github.com/dlgen/dlgen => {ROOT}\n")
    shutil.copy(os.path.join(ROOT, "go.sum"), module / "go.sum")
    for k, b in enumerate(of("harness", "go")):
        (module / f"b{k}").mkdir()
        name = "snippet_test.go" if b.arg.endswith("_test.go") else "snippet.go"
        (module / f"b{k}" / name).write_text(harnessed(b))
    env = dict(os.environ, **GO_OFFLINE)
    vet = subprocess.run(["go", "vet", "./..."], cwd=module, env=env, capture_output=True, text=True)
    build = subprocess.run(["go", "build", "./..."], cwd=module, env=env, capture_output=True, text=True)
    return module, vet.stdout + vet.stderr + build.stdout + build.stderr


@pytest.mark.parametrize("k,b", list(enumerate(of("harness", "go"))), ids=ids(of("harness", "go")))
def test_go_block_builds(go_blocks, k, b):
    module, log = go_blocks
    source = next((module / f"b{k}").iterdir()).read_text()
    assert not re.search(rf"\bb{k}\b", log), f"{b.where} in {b.arg}:\n{source}\n{log}"
    assert "go: " not in log, log  # the module itself did not load
    if "\nfunc main() {\n" in source:
        env = dict(os.environ, **GO_OFFLINE)
        r = subprocess.run(["go", "run", f"./b{k}"], cwd=module, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{b.where} in {b.arg}: exit {r.returncode}\n{source}\n{r.stdout}{r.stderr}"


@pytest.mark.parametrize("b", of("harness", "rust"), ids=ident)
def test_rust_block_builds(tmp_path, b):
    """cargo run of the harness against generated/rust/dlpack (cargo check
    of a PyO3 one), offline, in the target directory tests/rust keeps
    (.cache/rust/target)."""
    cargo = os.path.join(os.path.expanduser("~"), ".cargo", "bin", "cargo")
    cargo = cargo if os.path.exists(cargo) else shutil.which("cargo")
    if cargo is None:
        pytest.fail("cargo is not installed") if required.REQUIRED else pytest.skip("cargo is not installed")
    crate = os.path.join(ROOT, "generated", "rust", "dlpack").replace("\\", "/")
    pyo3 = "pyo3" in b.arg
    deps = f'dlpack = {{ path = "{crate}" }}\n'
    if pyo3:
        deps = (f'dlpack = {{ path = "{crate}", features = ["pyo3"] }}\n'
                'pyo3 = { version = "0.30", default-features = false, features = ["macros"] }\n')
    (tmp_path / "Cargo.toml").write_text(f'[package]\nname = "{b.arg[:-3]}"\nversion = "0.0.0"\nedition = "2021"\n\n'
                                         f"[dependencies]\n{deps}")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.rs").write_text(harnessed(b))
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(ROOT, ".cache", "rust", "target"), CARGO_NET_OFFLINE="true",
               CARGO_TERM_COLOR="never", PYO3_PYTHON=sys.executable)
    r = subprocess.run([cargo, "check" if pyo3 else "run", "-q"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"{b.where} in {b.arg}:\n{(tmp_path / 'src' / 'main.rs').read_text()}\n{r.stderr}"


@pytest.mark.parametrize("b", of("harness", "cython"), ids=ident)
def test_cython_block_compiles(dlgen, tmp_path, b):
    """cython over the harness, beside the generated .pxd files (a vendored
    copy for mylib): its cimports resolve and it type-checks."""
    required.module("Cython")
    if "mylib._vendor" in b.code:
        prepare(dlgen, b.code, tmp_path)
        src = tmp_path / "mylib" / "_ext.pyx"
    else:
        shutil.copytree(GENERATED, tmp_path, dirs_exist_ok=True)
        src = tmp_path / "snippet.pyx"
    src.write_text(harnessed(b))
    cython = os.path.join(os.path.dirname(sys.executable), "cython")
    r = subprocess.run([cython, "-3", "-I", str(tmp_path), str(src.relative_to(tmp_path))], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{b.where} in {b.arg}:\n{src.read_text()}\n{r.stdout}{r.stderr}"
