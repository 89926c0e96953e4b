"""Two packages vendor dlgen's Python output, of different releases, and
live in one process: each builds its copy as a subpackage (dlgen
-python-package, cythonize run from the project root), has an extension
module of its own that cimports its copy by the full dotted name, and gets
its own copy at run time; no copy claims a top-level name (the recipe of
docs/python-vendoring.md, for two packages)."""
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from harness import REQUIRED, cython_warnings

VENDORS = {"liba": "1.2", "libb": "1.3"}

EXTENSION = """# cython: language_level=3
cimport {pkg}._vendor.python.dlpack_cython as dl
from {pkg}._vendor.python.dlpack cimport DLPACK_MINOR_VERSION, DLTensor
from {pkg}._vendor.python.dlpack_cython cimport Tensor


def facts(x):
    cdef Tensor t = dl.tensor_from_managed(dl.managed_from_object(x))
    cdef DLTensor* d = &t.dltensor
    return DLPACK_MINOR_VERSION, type(dl.exchange_api(NULL, NULL)).__name__, type(t), d.ndim
"""

CHECK = """
import importlib, importlib.util, sys
import numpy as np
import liba.ext, libb.ext
from liba._vendor.python import dlpack_ctypes as cta, dlpack_cython as cya
from libb._vendor.python import dlpack_ctypes as ctb, dlpack_cython as cyb

a = np.arange(6.0).reshape(2, 3)
# Each extension got its own release's copy: v1.2 publishes the exchange API
# as an integer, v1.3 as a capsule.
assert liba.ext.facts(a) == (2, "int", cya.Tensor, 2), liba.ext.facts(a)
assert libb.ext.facts(a) == (3, "PyCapsule", cyb.Tensor, 2), libb.ext.facts(a)
assert cya.Tensor is not cyb.Tensor
assert (cya.DLPACK_VERSION_STRING, cyb.DLPACK_VERSION_STRING) == ("1.2", "1.3")
assert cya.Tensor.__module__ == "liba._vendor.python.dlpack_cython"
assert (cta.DLPACK_VERSION_STRING, ctb.DLPACK_VERSION_STRING) == ("1.2", "1.3")
# The copies exchange with each other and with NumPy, both ways.
t = cyb.from_dlpack(cta.from_dlpack(cya.from_dlpack(ctb.from_dlpack(a))))
np.from_dlpack(t)[1, 2] = 42
assert a[1, 2] == 42
# Nothing top-level: a plain import finds none of them.
for name in ("dlpack_cython", "dlpack_ctypes", "dlpack"):
    assert importlib.util.find_spec(name) is None, name
    assert name not in sys.modules, name
print("ok")
"""


def need_tools():
    for tool in ("gcc",):
        if shutil.which(tool) is None:
            if REQUIRED:
                pytest.fail(tool + " is not installed")
            pytest.skip(tool + " is not installed")
    if not os.path.exists(os.path.join(os.path.dirname(sys.executable), "cythonize")):
        if REQUIRED:
            pytest.fail("Cython is not installed")
        pytest.skip("Cython is not installed")


def vendor(dlgen, root, pkg, release):
    """pkg's project at root: dlgen's output as pkg._vendor.python, built
    from the root, and an extension module pkg.ext cimporting it."""
    vendored = root / pkg / "_vendor"
    vendored.mkdir(parents=True)
    for d in (root / pkg, vendored):
        (d / "__init__.py").write_text("")
    subprocess.run([dlgen, "-lang", "python", "-dlpack-version", release, "-python-package", pkg + "._vendor.python",
                    "-out", str(vendored)], check=True, capture_output=True, text=True)
    (root / pkg / "ext.pyx").write_text(EXTENSION.format(pkg=pkg))
    cythonize = os.path.join(os.path.dirname(sys.executable), "cythonize")
    # The environment of a user's build: none of this checkout's modules on the path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # docs/python-vendoring.md's command, run from the root
    r = subprocess.run([cythonize, "-i", f"{pkg}/_vendor/python/dlpack_cython.pyx", f"{pkg}/ext.pyx"], cwd=root,
                       capture_output=True, text=True, env=env)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log
    assert not cython_warnings(log), log


def test_two_vendored_releases_in_one_process(dlgen, tmp_path):
    need_tools()
    roots = {pkg: tmp_path / pkg for pkg in VENDORS}
    with ThreadPoolExecutor(len(VENDORS)) as pool:
        for f in [pool.submit(vendor, dlgen, roots[pkg], pkg, release) for pkg, release in VENDORS.items()]:
            f.result()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(str(r) for r in roots.values())
    r = subprocess.run([sys.executable, "-c", CHECK], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


README = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "README.md")


def readme_recipe():
    """The shell commands of the README's Python recipe, comments dropped."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = text.split("### Python: a framework speaking DLPack", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].split() for line in block.splitlines() if line.strip()]


def follow(commands, root, dlgen):
    """Runs commands (dlgen ..., cythonize ...) in root as a user's shell would."""
    tools = {"dlgen": dlgen, "cythonize": os.path.join(os.path.dirname(sys.executable), "cythonize")}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for argv in commands:
        r = subprocess.run([tools[argv[0]], *argv[1:]], cwd=root, capture_output=True, text=True, env=env)
        assert r.returncode == 0, " ".join(argv) + "\n" + r.stdout + r.stderr


USE = """
import numpy as np
from mypkg._vendor.python import dlpack_cython as dl
t = dl.from_dlpack(np.arange(3.0))
print(type(t).__module__, t.shape)
"""


def use(root):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", USE], cwd=root, capture_output=True, text=True, env=env,
                          timeout=120)


def test_readme_recipe_to_the_letter(dlgen, tmp_path):
    """The README's commands in an empty directory, as a new user runs them:
    mypkg/ does not exist yet, so Cython names the module
    _vendor.python.dlpack_cython (dlgen wrote mypkg/_vendor/__init__.py, not
    the user's own package's). The module refuses that name and says what to
    create; done as it says, the recipe works, with nothing built inside the
    vendored folder but the module. Forgetting -python-package is refused in
    words too."""
    need_tools()
    recipe = readme_recipe()
    assert [argv[0] for argv in recipe] == ["dlgen", "cythonize"], recipe
    assert "-python-package" in recipe[0], recipe
    bare = [argv for argv in recipe[0] if argv not in ("-python-package", "mypkg._vendor.python")]
    letter, forgot = tmp_path / "letter", tmp_path / "forgot"
    for root in (letter, forgot):
        root.mkdir()
    (forgot / "mypkg").mkdir()
    (forgot / "mypkg" / "__init__.py").write_text("")
    with ThreadPoolExecutor(2) as pool:
        for f in [pool.submit(follow, recipe, letter, dlgen), pool.submit(follow, [bare, recipe[1]], forgot, dlgen)]:
            f.result()

    r = use(letter)
    assert r.returncode != 0
    said = r.stderr.strip().splitlines()[-1]
    assert said == ("ImportError: dlpack_cython was generated as mypkg._vendor.python.dlpack_cython but built as "
                    "_vendor.python.dlpack_cython: Cython names a module after the __init__.py files around its "
                    ".pyx; create mypkg/__init__.py, then rebuild it from the directory holding mypkg: "
                    "cythonize -f -i mypkg/_vendor/python/dlpack_cython.pyx"), said
    (letter / "mypkg" / "__init__.py").write_text("")  # as the message says
    follow([said.rsplit(": ", 1)[1].split()], letter, dlgen)
    r = use(letter)
    assert r.returncode == 0 and r.stdout.strip() == "mypkg._vendor.python.dlpack_cython (3,)", r.stdout + r.stderr
    # The build directory of the right build is beside mypkg (the wrong one's is in mypkg/, the
    # top-level package it was built from): nothing is left in the vendored folder.
    stray = sorted(str(p.relative_to(letter)) for p in (letter / "mypkg" / "_vendor").rglob("*")
                   if p.is_dir() and p.name not in ("python", "dlpack", "__pycache__"))
    assert stray == [] and (letter / "build").is_dir(), stray

    r = use(forgot)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1] == (
        "ImportError: dlpack_cython was generated as the top-level module dlpack_cython but imported as "
        "mypkg._vendor.python.dlpack_cython: a copy inside a package must be generated for it, or it claims "
        "top-level names: dlgen -lang python -python-package mypkg._vendor.python -out mypkg/_vendor and rebuild"), r.stderr


NAME_CHECK = os.path.join(os.path.dirname(README), "internal", "backend", "python", "runtime", "name_check.py")

# (built, imported, generated) of every kind of mistake a module's name
# check refuses; the ctypes module is never built, so built is generated.
MISTAKES = [
    ("python.dlpack_cython", "python.dlpack_cython", "dlpack_cython"),
    ("mypkg.dlpack_cython", "mypkg.dlpack_cython", "dlpack_cython"),
    ("dlpack_cython", "mypkg._vendor.python.dlpack_cython", "dlpack_cython"),
    ("dlpack_cython", "mypkg.dlpack_cython", "dlpack_cython"),
    ("a.python.dlpack_cython", "dlpack_cython", "a.python.dlpack_cython"),
    ("a.python.dlpack_cython", "b.python.dlpack_cython", "a.python.dlpack_cython"),
    ("a.python.dlpack_cython", "b.dlpack_cython", "a.python.dlpack_cython"),
]


def name_mistake():
    """name_check.py's _name_mistake, which both modules call."""
    namespace = {}
    with open(NAME_CHECK, encoding="utf-8") as f:
        exec(compile(f.read(), NAME_CHECK, "exec"), namespace)  # noqa: S102 - dlgen's own source
    return namespace["_name_mistake"]


def test_every_suggested_command_is_one_dlgen_accepts(dlgen, tmp_path):
    """Each refusal of a module's name that suggests a dlgen command suggests
    one dlgen accepts: run from the directory the words name, it writes the
    module under the name the words ask for."""
    mistake = name_mistake()
    suggested = {}
    for module in ("dlpack_cython", "dlpack_ctypes"):
        for built, imported, generated in MISTAKES:
            built, imported, generated = (n.replace("dlpack_cython", module) for n in (built, imported, generated))
            if module == "dlpack_ctypes":
                built = generated
            if built == generated == imported:
                continue
            words = mistake(module, built, imported, generated, str(tmp_path / "site" / (module + ".py")))
            assert words.startswith(module + " was generated as "), words
            commands = re.findall(r"\bdlgen -lang python(?: -python-package \S+)? -out [^\s,]+", words)
            assert commands or "cythonize" in words, words
            for command in commands:
                suggested.setdefault(command, words)
    assert len(suggested) >= 5, suggested
    for i, (command, words) in enumerate(sorted(suggested.items())):
        root = tmp_path / f"run{i}"
        root.mkdir()
        argv = command.split()
        r = subprocess.run([dlgen, *argv[1:]], cwd=root, capture_output=True, text=True)
        assert r.returncode == 0, f"{words}\n{command}: {r.stderr}"
        package = argv[argv.index("-python-package") + 1] if "-python-package" in argv else None
        out = root / argv[argv.index("-out") + 1] / "python"
        want = f'"{package}.dlpack_ctypes"' if package else '"dlpack_ctypes"'
        assert f"_GENERATED_NAME = {want}" in (out / "dlpack_ctypes.py").read_text(), command


def test_vendored_ctypes_refuses_a_top_level_name(dlgen, tmp_path):
    """The ctypes module generated for a package refuses to be imported as the
    top-level dlpack_ctypes, in the Cython module's words; imported as
    generated it works, and a top-level ctypes module imports under any name
    (the conformance kit carries one inside its package)."""
    subprocess.run([dlgen, "-lang", "python", "-python-package", "mypkg._vendor.python", "-out", str(tmp_path / "mypkg" / "_vendor")],
                   check=True, capture_output=True, text=True)
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    top = subprocess.run([sys.executable, "-c", "import dlpack_ctypes"], cwd=tmp_path / "mypkg" / "_vendor" / "python",
                         capture_output=True, text=True, env=env, timeout=120)
    assert top.returncode != 0
    assert top.stderr.strip().splitlines()[-1] == (
        "ImportError: dlpack_ctypes was generated as mypkg._vendor.python.dlpack_ctypes but imported as the "
        "top-level module dlpack_ctypes, a name that is not its own: import it as "
        "mypkg._vendor.python.dlpack_ctypes, or generate top-level modules: dlgen -lang python -out ."), top.stderr
    ok = subprocess.run([sys.executable, "-c", "from mypkg._vendor.python import dlpack_ctypes as dl; print(dl.__name__)"],
                        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0 and ok.stdout.strip() == "mypkg._vendor.python.dlpack_ctypes", ok.stderr
    plain = tmp_path / "plain"
    subprocess.run([dlgen, "-lang", "python", "-out", str(plain / "carrier")], check=True, capture_output=True, text=True)
    (plain / "carrier" / "__init__.py").write_text("")
    carried = subprocess.run([sys.executable, "-c", "from carrier.python import dlpack_ctypes"], cwd=plain,
                             capture_output=True, text=True, env=env, timeout=120)
    assert carried.returncode == 0, carried.stderr
