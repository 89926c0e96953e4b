# The Cython module's last word at import: it refuses to be imported under a
# name it was not generated for. Cython names a compiled module after the
# __init__.py files around its .pyx; a vendored copy built without them
# becomes a module such as python.dlpack_cython, which imports, and then
# claims top-level names, the clash vendoring avoids. dlgen ships this file as
# dlpack_cython_module_name.pxi, included last.
import os


def _name_mistake(built, imported, generated, file):
    """What is wrong with this module, generated as generated, built as
    built (by Cython, its Tensor's __module__) and imported as imported from
    file: the words of its ImportError, or None."""
    if built == generated == imported:
        return None
    parts = generated.split(".")
    if built != generated and len(parts) > 1:
        here, dirs = os.path.dirname(os.path.abspath(file)), []
        for _ in parts[:-1]:
            dirs.append(here)
            here = os.path.dirname(here)
        missing = [os.path.relpath(os.path.join(d, "__init__.py"), here) for d in reversed(dirs)
                   if not os.path.exists(os.path.join(d, "__init__.py"))]
        create = f"create {' and '.join(missing)}, then " if missing else ""
        return (f"dlpack_cython was generated as {generated} but built as {built}: Cython names a "
                f"module after the __init__.py files around its .pyx; {create}rebuild it from the "
                f"directory holding {parts[0]}: cythonize -f -i {'/'.join(parts[:-1])}/dlpack_cython.pyx")
    if built != generated:
        return (f"dlpack_cython was generated as the top-level module dlpack_cython but built as "
                f"{built}: build it inside its own directory, with no __init__.py there "
                f"(cythonize -f -i dlpack_cython.pyx), or generate it for a package with dlgen "
                f"-python-package")
    package = imported.rpartition(".")[0]
    if len(parts) == 1:
        return (f"dlpack_cython was generated as the top-level module dlpack_cython but imported as "
                f"{imported}: a copy inside a package must be generated for it, or it claims "
                f"top-level names: dlgen -python-package {package}, then rebuild")
    return (f"dlpack_cython was generated as {generated} but imported as {imported}: import it as "
            f"{generated}, or generate it with dlgen -python-package {package} and rebuild")


_mistake = _name_mistake(Tensor.__module__, __name__, _GENERATED_NAME, __file__)
if _mistake is not None:
    raise ImportError(_mistake)
del _mistake
