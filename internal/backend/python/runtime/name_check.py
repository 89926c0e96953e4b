# The name check of both modules: each refuses to be imported under a name it
# was not generated for, in the same words. A module generated for a package
# (dlgen -python-package) and imported under another name, a top-level one
# above all, claims a name that is not its own, the clash vendoring avoids
# (docs/python-vendoring.md). Cython also names a compiled module after the
# __init__.py files around its .pyx, so a copy built without them is refused
# too. Every command a refusal suggests is one dlgen accepts (tests/python's
# test_vendoring runs each).
#
# dlgen copies it into dlpack_ctypes.py and includes it in dlpack_cython.pyx
# (as dlpack_cython_name_check.pxi); each module calls _check_name last, after
# the generated _GENERATED_NAME it reads.
import os


def _dlgen_for(package):
    """The dlgen command, run from the directory that holds package's first
    part, that generates the modules as package.dlpack_cython and
    package.dlpack_ctypes: package is the python/ directory dlgen writes, so
    a package of another name gets one below it."""
    if not package:
        package = "python"
    elif package != "python" and not package.endswith(".python"):
        package += ".python"
    out = "/".join(package.split(".")[:-1]) or "."
    return f"dlgen -lang python -python-package {package} -out {out}"


def _name_mistake(module, built, imported, generated, file):
    """What is wrong with module (dlpack_cython or dlpack_ctypes), generated
    as generated, built as built (by Cython, its Tensor's __module__; the
    generated name for the ctypes module, which is not built) and imported
    as imported from file: the words of its ImportError, or None."""
    if built == generated == imported:
        return None
    parts = generated.split(".")
    rebuild = " and rebuild" if module == "dlpack_cython" else ""
    if built != generated and len(parts) > 1:
        here, dirs = os.path.dirname(os.path.abspath(file)), []
        for _ in parts[:-1]:
            dirs.append(here)
            here = os.path.dirname(here)
        missing = [os.path.relpath(os.path.join(d, "__init__.py"), here) for d in reversed(dirs)
                   if not os.path.exists(os.path.join(d, "__init__.py"))]
        create = f"create {' and '.join(missing)}, then " if missing else ""
        return (f"{module} was generated as {generated} but built as {built}: Cython names a "
                f"module after the __init__.py files around its .pyx; {create}rebuild it from the "
                f"directory holding {parts[0]}: "
                f"cythonize -f -i {'/'.join(parts[:-1])}/{module}.pyx")
    if built != generated:
        package = built.rpartition(".")[0]
        return (f"{module} was generated as the top-level module {module} but built as "
                f"{built}: build it inside its own directory, with no __init__.py there "
                f"(cythonize -f -i {module}.pyx), or generate it for its package from the "
                f"directory holding {package.split('.')[0]}: {_dlgen_for(package)}, and build that")
    package = imported.rpartition(".")[0]
    if len(parts) == 1:
        return (f"{module} was generated as the top-level module {module} but imported as "
                f"{imported}: a copy inside a package must be generated for it, or it claims "
                f"top-level names: {_dlgen_for(package)}{rebuild}")
    if not package:
        return (f"{module} was generated as {generated} but imported as the top-level module "
                f"{imported}, a name that is not its own: import it as {generated}, or generate "
                f"top-level modules: dlgen -lang python -out .{rebuild}")
    return (f"{module} was generated as {generated} but imported as {imported}: import it as "
            f"{generated}, or generate it for {package}: {_dlgen_for(package)}{rebuild}")


def _check_name(module, built):
    """Raises the ImportError of _name_mistake for this module, imported as
    __name__ from __file__."""
    mistake = _name_mistake(module, built, __name__, _GENERATED_NAME, __file__)
    if mistake is not None:
        raise ImportError(mistake)
