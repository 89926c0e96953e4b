"""The ctypes module's import-time layout check: it picks the C data model
from the interpreter's own pointer size and int64 alignment, and refuses to
import when a ctypes struct disagrees with that model."""
import ctypes
import os
import re
import types

import pytest

from harness import GENERATED

SOURCE = open(os.path.join(GENERATED, "dlpack_ctypes.py")).read()


def load(source):
    module = types.ModuleType("dlpack_ctypes_under_test")
    exec(compile(source, "dlpack_ctypes_under_test", "exec"), module.__dict__)
    return module


def branches():
    """(condition, DLTensor size) of each model the module checks."""
    conds = re.findall(r"^\s*(?:if|elif) (_POINTER_SIZE == .*?):(?:\s+#.*)?$", SOURCE, re.M)
    sizes = re.findall(r"\(DLTensor, None, (\d+)\)", SOURCE)
    assert len(conds) == len(sizes) == 3
    return list(zip(conds, map(int, sizes)))


def test_exactly_one_model_matches_this_interpreter():
    env = {"_POINTER_SIZE": ctypes.sizeof(ctypes.c_void_p), "ctypes": ctypes}
    matching = [size for cond, size in branches() if eval(cond, env)]
    assert matching == [ctypes.sizeof(load(SOURCE).DLTensor)]


@pytest.mark.parametrize("model", range(3))
def test_a_wrong_size_refuses_to_import_only_on_its_own_model(model):
    cond, size = branches()[model]
    wrong = SOURCE.replace("(DLTensor, None, %d)" % size, "(DLTensor, None, %d)" % (size + 4), 1)
    env = {"_POINTER_SIZE": ctypes.sizeof(ctypes.c_void_p), "ctypes": ctypes}
    if eval(cond, env):
        with pytest.raises(ImportError, match="DLTensor is %d bytes" % size):
            load(wrong)
    else:
        load(wrong)
