"""The generated Python is code people read and vendor: for every release it
passes ruff with pycodestyle, Pyflakes, bugbear, pyupgrade, simplify and
ruff's own rules (E,F,W,B,UP,SIM,RUF) and a 100-column limit, and so do the
hand-written sources it is made of, each on its own, with no rule turned off.
The stubs of the default build match both modules (mypy's stubtest;
test_releases.py checks every release), and each module's __all__ lists
exactly its public names."""
import ast
import glob
import importlib
import os
import re
import subprocess

import pytest

from harness import CYTHON_DIR, GENERATED, MODULES, RELEASES, ROOT, stubtest, tool

# The rules of internal/backend/python/runtime/ruff.toml, for output that has no config.
RUFF_OUTPUT = ["check", "--no-cache", "--isolated", "--line-length", "100", "--target-version", "py310",
               "--select", "E,F,W,B,UP,SIM,RUF"]
PROTOCOL = os.path.join(ROOT, "internal", "backend", "python", "runtime")


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
    config = os.path.join(ROOT, "conformance", "ruff.toml")
    status, report = ruff("check", "--no-cache", "--config", config, "--extend-exclude", "dlpack_ctypes.py",
                          str(tmp_path / "conformance"))
    assert status == 0, report


# --- Taking a capsule, and a Tensor's state, under threads ------------------------
# (tests/python/test_thread_stress.py races threads for one capsule; these
# keep every path that renames a capsule or changes a Tensor's state inside
# the lock or critical section that makes it one step, so that a new path
# cannot forget it.)

def _calls(statement, name):
    """Whether statement is the expression name()."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name) and statement.value.func.id == name)


def _turns(tree):
    """The try statements of tree that hold ctypes_protocol's lock: right
    after _take_turn(), with _end_turn() as their finally."""
    found = []
    for node in ast.walk(tree):
        for body in (getattr(node, field, None) for field in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            for before, statement in zip(body, body[1:]):
                if (_calls(before, "_take_turn") and isinstance(statement, ast.Try)
                        and len(statement.finalbody) == 1 and _calls(statement.finalbody[0], "_end_turn")):
                    found.append(statement)
    return found


def test_ctypes_renames_capsules_only_holding_the_lock():
    with open(os.path.join(PROTOCOL, "ctypes_protocol.py")) as f:
        tree = ast.parse(f.read())
    probe = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_capsule_layout_holds")
    in_probe = {id(n) for n in ast.walk(probe)}  # its own probe capsule, which no one else sees
    turns = _turns(tree)
    in_turn = {id(n) for turn in turns for block in (turn.body, turn.handlers, turn.orelse)
               for statement in block for n in ast.walk(statement)}
    renames = [n for n in ast.walk(tree)
               if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_capsule_set_name")
               or (isinstance(n, ast.Assign) and any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                                                     and t.value.id == "_WORDS" for t in n.targets))]
    assert len(renames) >= 3  # the in-place path's write and _take's two calls, at least
    outside = [n.lineno for n in renames if id(n) not in in_probe and id(n) not in in_turn]
    assert not outside, f"ctypes_protocol.py renames a capsule without holding _taking at lines {outside}"


def _pxi_lines_outside(pattern, allowed_functions=()):
    """Lines of the Cython sources matching pattern that no `with
    cython.critical_section(...)` block encloses (by indentation), but in
    allowed_functions."""
    found = []
    for name in sorted(os.listdir(PROTOCOL)):
        if not name.endswith(".pxi"):
            continue
        with open(os.path.join(PROTOCOL, name)) as f:
            lines = f.read().splitlines()
        for i, line in enumerate(lines):
            if not re.search(pattern, line) or line.lstrip().startswith("#"):
                continue
            indent = len(line) - len(line.lstrip())
            enclosing = []
            for above in reversed(lines[:i]):
                stripped = above.lstrip()
                if stripped and not stripped.startswith("#") and len(above) - len(stripped) < indent:
                    enclosing.append(stripped)
                    indent = len(above) - len(stripped)
            if any(e.startswith("with cython.critical_section(") for e in enclosing):
                continue
            functions = "|".join(allowed_functions)
            if functions and any(re.match(rf"(cdef|def) [\w* ]*\b({functions})\(", e) for e in enclosing):
                continue
            found.append(f"{name}:{i + 1}: {line.strip()}")
    return found


def test_cython_renames_capsules_in_a_critical_section():
    assert not _pxi_lines_outside(r"PyCapsule_SetName\(")


def test_cython_changes_a_tensors_state_in_a_critical_section():
    # __dealloc__ runs when no other thread can hold the Tensor.
    assert not _pxi_lines_outside(r"\._exports\s*[-+]?=|\._closed\s*=|\._free\(\)", ("__dealloc__",))


def test_no_kit_function_is_long():
    """No function of the conformance kit (its package and matrix script) is
    over 150 lines, so that each reads as one thing."""
    kit = os.path.join(ROOT, "conformance")
    long = []
    for path in sorted(glob.glob(os.path.join(kit, "dlpack_conformance", "*.py")) + [os.path.join(kit, "matrix.py")]):
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 150:
                long.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {node.name} is "
                            f"{node.end_lineno - node.lineno + 1} lines (150 at most)")
    assert not long, "\n".join(long)
