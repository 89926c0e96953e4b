"""The conformance corpus (conformance/corpus/corpus.json, docs/corpus.md)
against both Python modules, as the Go runtime runs it: each case becomes a
real managed tensor in C memory, versioned or legacy as the case says, whose
deleter (a C function pointer) counts its calls. It goes through from_dlpack
in a capsule and through from_managed, and gets the verdict, the exception
type and the words the corpus says; the deleter runs exactly once either way,
for an accepted tensor at close() and not before."""
import ctypes
import json
import os

import pytest

import dlpack_ctypes as ct
from harness import ROOT

with open(os.path.join(ROOT, "conformance", "corpus", "corpus.json")) as f:
    CORPUS = json.load(f)
POINTER_BITS = 8 * ctypes.sizeof(ctypes.c_void_p)
CASES = [case for case in CORPUS["cases"] if case.get("pointer_bits", POINTER_BITS) == POINTER_BITS]
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Made:
    """A case's managed tensor, in memory that lives as long as this object,
    and the number of times its deleter ran."""

    def __init__(self, tensor):
        self.calls = 0
        self.versioned = tensor["version"] is not None
        self.managed = ct.DLManagedTensorVersioned() if self.versioned else ct.DLManagedTensor()
        m = self.managed
        deleter_type = dict(type(m)._fields_)["deleter"]
        self.deleter = deleter_type(self._count)
        m.deleter = self.deleter
        if self.versioned:
            m.version.major, m.version.minor = tensor["version"]
            m.flags = tensor["flags"]
        else:
            assert tensor["flags"] == 0, "a legacy tensor has no flags"
        dl = m.dl_tensor
        dl.device.device_type, dl.device.device_id = tensor["device"]
        dl.dtype.code, dl.dtype.bits, dl.dtype.lanes = tensor["dtype"]
        dl.ndim = tensor["ndim"]
        dl.byte_offset = tensor["byte_offset"]
        self.dims = []  # at least one entry each: an empty list is still a pointer
        for name in ("shape", "strides"):
            values = tensor[name]
            if values is not None:
                assert len(values) <= 64
                array = (ctypes.c_int64 * max(len(values), 1))(*values)
                self.dims.append(array)
                setattr(dl, name, ctypes.cast(array, ctypes.POINTER(ctypes.c_int64)))
        data = tensor["data"]
        if data == "buffer":
            self.buffer = ctypes.create_string_buffer(tensor["buffer_bytes"])
            dl.data = ctypes.addressof(self.buffer)
        elif data is not None:
            assert data >= 4096, "addresses below 4096 are reserved"
            dl.data = data

    def _count(self, _):
        self.calls += 1

    @property
    def address(self):
        return ctypes.addressof(self.managed)

    def capsule(self):
        name = b"dltensor_versioned" if self.versioned else b"dltensor"
        return _new_capsule(self.address, name, None)


def tensor_of(case):
    return {**CORPUS["defaults"], **case["tensor"]}


def contiguous(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= max(extent, 1)
    return tuple(strides)


def test_the_corpus_is_for_this_release(dl):
    assert CORPUS["format"] == "dlgen-conformance 1"
    assert CORPUS["consumer"] == [dl.DLPACK_MAJOR_VERSION, dl.DLPACK_MINOR_VERSION], \
        "the corpus is written for another DLPack release than generated/python's"
    assert len({case["name"] for case in CORPUS["cases"]}) == len(CORPUS["cases"])
    assert CASES, f"no case for {POINTER_BITS}-bit pointers"


@pytest.mark.parametrize("path", ["from_dlpack", "from_managed"])
@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_corpus_case(dl, case, path):
    """docs/corpus.md's runner in a few lines, made real: Made is its
    make_capsule, dl.from_dlpack (or from_managed) its from_dlpack."""
    tensor = tensor_of(case)
    made = Made(tensor)
    if path == "from_dlpack":
        adopt = lambda: dl.from_dlpack(made.capsule())  # noqa: E731
    else:
        adopt = lambda: dl.from_managed(made.address, versioned=made.versioned)  # noqa: E731
    if case["verdict"] == "refuse":
        with pytest.raises(Exception) as caught:
            adopt()
        assert type(caught.value) is BufferError, caught.value
        assert str(caught.value) == case["message"]
        assert case["rule"] in dl._RULES
        assert made.calls == 1, "the deleter runs exactly once, at the refusal"
        return
    assert case["verdict"] == "accept"
    t = adopt()
    assert made.calls == 0, "the deleter ran before close()"
    ndim = tensor["ndim"]
    assert t.shape == (tuple(tensor["shape"]) if ndim else ())
    strides = tensor["strides"]
    assert t.strides == (contiguous(t.shape) if strides is None else tuple(strides[:ndim]))
    assert tuple(t.dtype) == tuple(tensor["dtype"]) and tuple(t.device) == tuple(tensor["device"])
    assert t.byte_offset == tensor["byte_offset"]
    assert t.readonly == bool(tensor["flags"] & dl.DLPACK_FLAG_BITMASK_READ_ONLY)
    bits, lanes = tensor["dtype"][1:]
    packed = bits * lanes < 8 and not tensor["flags"] & dl._SUBBYTE_PADDED
    if (tensor["data"] == "buffer" and t.device[0] in dl._HOST_READABLE and t.size <= 4096
            and (t.is_contiguous() or not packed)):
        copied = t.tobytes()  # reads every element from the buffer
        assert len(copied) == t.nbytes
    t.close()
    assert made.calls == 1, "the deleter runs exactly once, at close()"


def test_every_refusal_is_a_rule_of_the_table(dl):
    """The words come from the message table: each refused case's message is
    its rule's text with the parameters filled in."""
    for case in CASES:
        if case["verdict"] == "refuse":
            assert dl._RULES[case["rule"]][0] is BufferError
            assert rule_of(dl, case["message"]) == case["rule"], case["name"]


# Values on both sides of every bound the checks draw, for random tensors.
EXTENTS = [0, 1, 2, 3, 7, 1 << 31, 1 << 40, (1 << 59) + 1, (1 << 61) - 1, 1 << 61, 1 << 62, (1 << 63) - 1,
           -1, -(1 << 63)]
OFFSETS = [0, 4, 12, 1 << 31, 1 << 62, (1 << 63) - 25, (1 << 63) - 8, 1 << 63, (1 << 64) - 1]
ADDRESSES = [None, 4096, 1 << 47, (1 << 63) - 64, 1 << 63, (1 << 64) - 16, (1 << 64) - 1]


def int64(v):
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def random_tensor(rng):
    ndim = rng.choice([0, 1, 1, 1, 2, 2, 2, 3, 4] * 4 + [-1, 65])
    n = ndim if 0 <= ndim <= 64 else 1
    tensor = {
        "version": rng.choice([None, [1, 0], [1, 1], [1, 2], [1, 3], [1, 9]] * 4 + [[2, 0], [0, 5]]),
        "flags": rng.choice([0, 1, 4, 5]),
        "device": rng.choice([[1, 0], [2, 0], [99, 0], [-1, 0]]),
        "dtype": [*rng.choice(list(ct._DTYPES.values()) + [(0, 4), (1, 1), (0, 10)]), rng.choice([1, 1, 1, 2, 3])]
        if rng.random() < 0.8 else [rng.randrange(21), rng.choice([0, 1, 4, 6, 8, 10, 16, 32, 64, 128, 255]),
                                    rng.choice([0, 1, 1, 1, 2, 4, 65535])],
        "ndim": ndim,
        "shape": None if rng.random() < 0.05 else [rng.choice(EXTENTS[:5] * 6 + EXTENTS) for _ in range(n)],
        "strides": None if rng.random() < 0.15 else [int64(rng.choice([1, -1]) * rng.choice(EXTENTS[:5] * 4 + EXTENTS))
                                                      for _ in range(n)],
        "byte_offset": rng.choice(OFFSETS[:3] * 4 + OFFSETS),
        "data": rng.choice(ADDRESSES[1:3] * 4 + ADDRESSES),
    }
    if tensor["version"] is None:
        tensor["flags"] = 0
    return tensor


def rule_of(dl, message):
    """The rule whose words message is."""
    import re
    for rule, (_, text, params) in dl._RULES.items():
        pattern = re.escape(text)
        for p in params:
            pattern = pattern.replace(re.escape("{" + p + "}"), "(.+)")
        if re.fullmatch(pattern, message):
            return rule
    raise AssertionError(f"no rule says {message!r}")


def rules_verdict(dl, tensor):
    """What rules.py says of a tensor, called directly."""
    version, ndim, shape, strides = tensor["version"], tensor["ndim"], tensor["shape"], tensor["strides"]
    try:
        if version is not None:
            dl._check_version(*version)
        version = dl._LEGACY_VERSION if version is None else tuple(version)
        dl._check_pointers(version, ndim, shape is None, strides is None)
        shape = tuple(shape) if ndim and shape is not None else ()
        strides = tuple(strides) if ndim and strides is not None else dl._contiguous_strides(shape)
        dl._check_layout(version, shape, strides, *tensor["dtype"], tensor["byte_offset"], tensor["data"] or 0,
                         bool(tensor["flags"] & dl._SUBBYTE_PADDED))
    except BufferError as e:
        return str(e)
    return "accept"


def module_verdict(dl, tensor):
    """What an import through from_managed says, the deleter counted."""
    made = Made(tensor)
    try:
        t = dl.from_managed(made.address, versioned=made.versioned)
    except BufferError as e:
        assert made.calls == 1
        return str(e)
    assert made.calls == 0
    t.close()
    assert made.calls == 1
    return "accept"


@pytest.mark.skipif(POINTER_BITS != 64, reason="the random values are 64-bit ones")
def test_fast_paths_agree_with_the_rules(dl):
    """Random tensors around every bound: each module's import (the ctypes
    fast path, Cython's checks in C) gives rules.py's verdict and words."""
    import random
    rng = random.Random(19)
    verdicts = set()
    for _ in range(5000):
        tensor = random_tensor(rng)
        expected = rules_verdict(dl, tensor)
        assert module_verdict(dl, tensor) == expected, tensor
        verdicts.add(expected if expected == "accept" else rule_of(dl, expected))
    assert len(verdicts) >= 15, verdicts  # the random tensors reach most rules, and acceptance
