"""The generated Python is code people read and vendor: for every release it
passes ruff with pycodestyle, Pyflakes, bugbear, pyupgrade, simplify and
ruff's own rules (E,F,W,B,UP,SIM,RUF) and a 100-column limit, and so do the
hand-written sources it is made of, each on its own, with no rule turned off.
The stubs of the default build match both modules (mypy's stubtest;
test_releases.py checks every release), and each module's __all__ lists
exactly its public names."""
import ast
import importlib
import os
import re
import subprocess

import pytest

from conftest import CYTHON_DIR, GENERATED, MODULES, RELEASES, ROOT, stubtest, tool

# The rules of runtime/python/ruff.toml, for output that has no config.
RUFF_OUTPUT = ["check", "--no-cache", "--isolated", "--line-length", "100", "--target-version", "py310",
               "--select", "E,F,W,B,UP,SIM,RUF"]
PROTOCOL = os.path.join(ROOT, "runtime", "python")


def ruff(*args, cwd=ROOT):
    r = subprocess.run(tool("ruff") + list(args), cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.parametrize("package", [None, "mylib._vendor.python"])
@pytest.mark.parametrize("release", RELEASES)
def test_generated_python_passes_ruff(dlgen, tmp_path, release, package):
    vendored = ["-python-package", package] if package else []
    subprocess.run([dlgen, "-lang", "python", "-dlpack-version", release, *vendored, "-out", str(tmp_path)],
                   check=True)
    pydir = tmp_path / "python"
    files = sorted(str(p) for p in pydir.iterdir() if p.suffix in (".py", ".pyi"))
    assert files
    status, report = ruff(*RUFF_OUTPUT, *files)
    assert status == 0, report


def bound(tree):
    """The names a module binds at its top level, in conditional blocks too."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try)):
            names |= bound(ast.Module(body=node.body + node.orelse, type_ignores=[]))
    return names


@pytest.mark.parametrize("name", sorted(n for n in os.listdir(PROTOCOL) if n.endswith((".py", ".pyi"))))
def test_protocol_source_passes_ruff(name):
    """A hand-written source alone, undefined names included (F821): what it
    may take from elsewhere is what the generated files it is copied into
    bind, the generated declarations (internal/backend/python/handover.go lists
    those) and the other sources there; it is told those, and nothing else."""
    path = os.path.join(PROTOCOL, name)
    with open(path) as f:
        text = f.read()
    copied = re.sub(r"^import [\w.]+\n", "", text, flags=re.M).rstrip("\n")
    hosts = []
    for generated in sorted(os.listdir(GENERATED)):
        if generated.endswith((".py", ".pyi")):
            with open(os.path.join(GENERATED, generated)) as f:
                host = f.read()
            if copied in host:
                hosts.append(host)
    assert hosts, f"{name} is copied into no file of {GENERATED}"
    given = set().union(*(bound(ast.parse(h)) for h in hosts)) - bound(ast.parse(text))
    builtins = "builtins = [" + ", ".join(f'"{n}"' for n in sorted(given)) + "]"
    status, report = ruff("check", "--no-cache", "--config", builtins, path)
    assert status == 0, report


def test_protocol_ruff_config_turns_no_rule_off():
    with open(os.path.join(PROTOCOL, "ruff.toml")) as f:
        config = f.read()
    assert not re.search(r"^\s*(ignore|extend-ignore|builtins|per-file-ignores)\b", config, re.M), config


def test_stubs_match_the_modules():
    assert stubtest(GENERATED, "dlpack_ctypes") == ""
    if "dlpack_cython" in MODULES:
        assert stubtest(CYTHON_DIR, "dlpack_cython") == ""


@pytest.mark.parametrize("module", MODULES)
def test_all_lists_exactly_the_public_names(module):
    """__all__ has one source (the declarations' names and internal/backend/python/
    handover.go's public ones): each exists, once, and every public name the
    module defines, its imports aside, is in it."""
    m = importlib.import_module(module)
    assert len(set(m.__all__)) == len(m.__all__)
    assert [n for n in m.__all__ if not hasattr(m, n)] == []
    defined = {n for n, v in vars(m).items()
               if not n.startswith("_") and not isinstance(v, type(os))
               and getattr(v, "__module__", module) == module}
    assert defined - set(m.__all__) == set()


def test_conformance_kit_passes_ruff(dlgen, tmp_path):
    """The conformance kit as dlgen writes it (its own sources, the corpus
    module) under the kit's ruff settings: E, F, W, B, UP, SIM, RUF and
    isort. Its dlpack_ctypes.py is the Python backend's, linted above."""
    subprocess.run([dlgen, "-lang", "conformance", "-out", str(tmp_path)], check=True)
    config = os.path.join(ROOT, "runtime", "conformance", "ruff.toml")
    status, report = ruff("check", "--no-cache", "--config", config, "--extend-exclude", "dlpack_ctypes.py",
                          str(tmp_path / "conformance"))
    assert status == 0, report
