# The Cython module's check at import that it was built from the sources
# beside it. dlgen writes one fingerprint (the release and a hash of every
# file under python/) into dlpack_cython.pyx and dlpack_ctypes.py, and the
# .pyx compiles it in as _BUILT_FINGERPRINT. Regenerated for another release
# (or by another dlgen) and not rebuilt, the compiled module would speak
# the old release beside a ctypes module and sources of the new one: it
# refuses to import instead, and names the rebuild (docs/python.md's
# command; dlgen -check reports the same). Where no source is beside it (a
# wheel holding the compiled module alone), there is nothing to compare.
# dlgen ships this file as dlpack_cython_fingerprint.pxi.
import os
import re


def _check_fingerprint(built, generated, file):
    """Raises ImportError when a source beside file (the compiled module,
    generated as the module generated) carries another fingerprint than
    built, the one it was compiled with."""
    here = os.path.dirname(os.path.abspath(file))
    for source in ("dlpack_cython.pyx", "dlpack_ctypes.py"):
        try:
            with open(os.path.join(here, source), encoding="utf-8") as f:
                found = re.search(r"dlgen fingerprint: DLPack [0-9a-z.]+, sources [0-9a-f]{16}", f.read())
        except OSError:
            continue
        if found is None:
            continue
        if found.group(0) == built:
            return
        parts = generated.split(".")
        top = os.path.normpath(os.path.join(here, *[".."] * (len(parts) - 1)))
        pyx = "/".join(parts[:-1] + ["dlpack_cython.pyx"])
        raise ImportError(
            f"{os.path.basename(file)} is stale: it was built from {built.removeprefix('dlgen fingerprint: ')}, "
            f"but {source} beside it is {found.group(0).removeprefix('dlgen fingerprint: ')}; "
            f"rebuild it: cd {top} && cythonize -i {pyx}")


_check_fingerprint(_BUILT_FINGERPRINT, _GENERATED_NAME, __file__)
