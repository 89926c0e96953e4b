"""The words a user reads: each mistake gets an error that says what is wrong
and what is expected, with the same exception type and words from both
modules; a closed Tensor says so; dtypes show as their names, as Go's
DataType.String shows them, and dtype arguments take any object named by
one."""
import ctypes
import importlib
import sys

import numpy as np
import pytest
import required

from harness import MODULES


def outcome(action):
    """What action does: ("ok", result) or (exception type, words)."""
    try:
        return "ok", action()
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return type(e), str(e)


def every_module(action):
    """action's outcome in each module, which must be the same: the outcome."""
    outcomes = {name: outcome(lambda: action(importlib.import_module(name))) for name in MODULES}
    first = next(iter(outcomes.values()))
    assert all(o == first for o in outcomes.values()), outcomes
    return first


# --- A closed Tensor ------------------------------------------------------------

READERS = ["shape", "strides", "dtype", "device", "ndim", "size", "nbytes", "data_ptr", "byte_offset",
           "readonly", "copied", "__array_interface__"]


@pytest.mark.parametrize("reader", READERS + ["is_contiguous()", "tobytes()", "__dlpack__()",
                                              "__dlpack_device__()", "memoryview", "np.asarray"])
def test_a_closed_tensor_refuses_every_read(dl, reader):
    """Whatever reads a closed Tensor raises ValueError("the tensor is
    closed"), as Go's dltensor answers ErrClosed: never the freed address."""
    t = dl.from_dlpack(np.arange(4.0))
    t.close()
    assert t.closed
    read = {"memoryview": memoryview, "np.asarray": np.asarray}.get(reader)
    if read is None and reader.endswith("()"):
        read = lambda t: getattr(t, reader[:-2])()  # noqa: E731
    elif read is None:
        read = lambda t: getattr(t, reader)  # noqa: E731
    if reader == "memoryview" and sys.version_info < (3, 12) and dl.__name__ == "dlpack_ctypes":
        pytest.skip("the ctypes module has a buffer on Python 3.12+ (__buffer__)")
    with pytest.raises(ValueError) as caught:
        read(t)
    assert str(caught.value) == "the tensor is closed"
    assert repr(t) == "Tensor(closed)"
    t.close()  # still idempotent


# --- Arguments ------------------------------------------------------------------

NO_DEVICE = ("device {} is not a DLPack device: pass (device_type, device_id), such as "
             "(DLDeviceType.kDLCUDA, 0), an object with __dlpack_device__(), or 'cpu'")


class Place:
    """An object that says which DLPack device it is."""

    def __dlpack_device__(self):
        return (1, 0)


@pytest.mark.parametrize("device", ["cpu", (1, 0), Place()], ids=["cpu", "pair", "__dlpack_device__"])
def test_devices_a_user_may_name(device):
    kind, t = every_module(lambda dl: dl.from_dlpack(np.arange(3.0), device=device).device)
    assert kind == "ok" and t == (1, 0)


def test_framework_device_objects():
    torch = required.module("torch")
    assert every_module(lambda dl: dl.from_dlpack(np.arange(3.0), device=torch.device("cpu")).device) \
        == ("ok", (1, 0))
    cuda = torch.device("cuda:0")  # CUDA or ROCm memory? torch.device does not say
    assert every_module(lambda dl: dl.from_dlpack(np.arange(3.0), device=cuda)) \
        == (TypeError, NO_DEVICE.format(repr(cuda)))


def test_jax_devices():
    jax = required.module("jax")
    cpu = jax.devices("cpu")[0]
    assert every_module(lambda dl: dl.from_dlpack(np.arange(3.0), device=cpu).device) == ("ok", (1, 0))


@pytest.mark.parametrize("device", ["cuda", [1, 0], (1,), 1.5])
def test_devices_that_say_nothing_are_refused_in_words(device):
    assert every_module(lambda dl: dl.from_dlpack(np.arange(3.0), device=device)) \
        == (TypeError, NO_DEVICE.format(repr(device)))


@pytest.mark.parametrize("max_version", [1, "1.3", (1,)])
def test_max_version_must_be_a_pair(max_version):
    assert every_module(lambda dl: dl.from_dlpack(np.arange(3.0)).__dlpack__(max_version=max_version)) \
        == (TypeError, f"max_version must be a (major, minor) tuple, not {max_version!r}")


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


@pytest.mark.parametrize("name", [b"my_tensor", None])
def test_a_capsule_of_another_name_is_named(name):
    storage = ctypes.create_string_buffer(8)
    shown = repr(name.decode()) if name else "None"
    assert every_module(lambda dl: dl.from_dlpack(_new_capsule(ctypes.addressof(storage), name, None))) \
        == (ValueError, f"a capsule named {shown} is not a DLPack capsule ('dltensor_versioned' or 'dltensor')")


def test_a_consumed_capsule_says_so():
    def twice(dl):
        capsule = np.arange(3.0).__dlpack__(max_version=(1, 0))
        dl.from_dlpack(capsule)
        return dl.from_dlpack(capsule)
    assert every_module(twice) == (ValueError, "this DLPack capsule was already consumed")


@pytest.mark.parametrize("kwargs, expected", [
    (dict(shape=(2, -3)), (ValueError, "negative extent -3 in dimension 1")),
    (dict(address=0), (ValueError, "data is NULL for a tensor with elements (6)")),
    (dict(shape=(1 << 64, 2)), (ValueError, "the tensor holds too many elements: their count and bytes must "
                                            f"stay below 2^{8 * ctypes.sizeof(ctypes.c_void_p) - 1}")),
])
def test_from_pointer_mistakes_in_the_words_of_imports(kwargs, expected):
    """The words of the message table, those every dlgen module and Go use
    for the same tensor (an oversized shape too: Cython said "too large to
    convert to C long")."""
    args = {"address": 64, "shape": (2, 3), "dtype": "float32", **kwargs}
    assert every_module(lambda dl: dl.from_pointer(args["address"], args["shape"], args["dtype"])) == expected


@pytest.mark.parametrize("kwargs, expected", [
    (dict(shape=None), (TypeError, "shape must be a sequence of ints, not NoneType")),
    (dict(shape=[2, 3], strides=3), (TypeError, "strides must be a sequence of ints, not int")),
    (dict(shape=[2, 3], strides=[3]), (ValueError, "1 strides for 2 dimensions")),
    (dict(address=-1), (ValueError, "address -1 is not a pointer")),
])
def test_from_pointer_arguments_of_the_wrong_kind(kwargs, expected):
    """Lists as well as tuples; anything else is named."""
    args = {"address": 64, "shape": (2, 3), "dtype": "float32", **kwargs}
    assert every_module(lambda dl: dl.from_pointer(args["address"], args["shape"], args["dtype"],
                                                   strides=args.get("strides"))) == expected


@pytest.mark.parametrize("address, expected", [
    (-1, (ValueError, "address -1 is not a pointer")),
    (1 << 64, (ValueError, f"address {1 << 64} is not a pointer")),
    (0, (ValueError, "from_managed of a NULL pointer")),
    ("0x10", (TypeError, "address must be an int, not str: pass the address of a DLManagedTensorVersioned "
                         "(a DLManagedTensor with versioned=False) as an int, such as to_managed returns")),
])
def test_from_managed_takes_only_a_pointer(address, expected):
    """An address no pointer can have is refused before anything is read
    (the ctypes module read address -1 and crashed)."""
    assert every_module(lambda dl: dl.from_managed(address)) == expected


NOT_DLPACK = ("{}(x): {} does not support the DLPack protocol: pass an object with __dlpack__() (a NumPy, "
              "PyTorch, JAX or CuPy array) or a DLPack capsule; from_buffer takes buffer-protocol objects "
              "(bytearray, array.array, memoryview), and a list needs an array first (numpy.asarray(x))")


def test_to_managed_of_an_object_without_dlpack():
    assert every_module(lambda dl: dl.to_managed(5)) == (TypeError, NOT_DLPACK.format("to_managed", "int"))


@pytest.mark.parametrize("x", [[1, 2], b"ab", None])
def test_from_dlpack_of_an_object_without_dlpack_says_what_to_pass(x):
    assert every_module(lambda dl: dl.from_dlpack(x)) == (TypeError, NOT_DLPACK.format("from_dlpack", type(x).__name__))


DATA_ADDRESS = ("pass the data's address as an int: ctypes.addressof(buf) for a ctypes array, p.value for a "
                "c_void_p, a.ctypes.data for a NumPy array; or pass a buffer to from_buffer")


@pytest.mark.parametrize("address, shown", [
    (None, "None"), ((ctypes.c_float * 3)(), "c_float_Array_3"), (ctypes.c_void_p(64), "c_void_p"),
    ("0x40", "str"), (64.0, "float"),
])
def test_from_pointer_of_no_address_says_what_to_pass(address, shown):
    """None, a ctypes array or pointer: Python's own words ("cannot be
    interpreted as an integer") said neither what was wrong nor what to do."""
    assert every_module(lambda dl: dl.from_pointer(address, (3,), "float32")) \
        == (TypeError, f"address must be an int, not {shown}: {DATA_ADDRESS}")


def test_from_pointer_takes_numpy_strides_as_byte_strides():
    a = np.arange(24.0, dtype=np.float32).reshape(4, 6)[:, ::2]
    def seen(dl):
        t = dl.from_pointer(a.ctypes.data, a.shape, a.dtype, byte_strides=a.strides, owner=a)
        return t.strides, np.from_dlpack(t).tolist()
    assert every_module(seen) == ("ok", ((6, 2), a.tolist()))


@pytest.mark.parametrize("order", ["C", "F"])
def test_numpy_strides_passed_as_strides_are_named(order):
    """A contiguous array's .strides (bytes) as strides= (elements) would
    reach four times too far: refused, with both right spellings."""
    a = np.zeros((2, 3), dtype=np.float32, order=order)
    elements = tuple(s // 4 for s in a.strides)
    assert every_module(lambda dl: dl.from_pointer(a.ctypes.data, a.shape, "float32", strides=a.strides)) \
        == (ValueError, f"strides {a.strides!r} are a contiguous float32 array's strides in bytes (NumPy's "
                        f".strides), and strides count elements: pass byte_strides={a.strides!r}, or "
                        f"strides={elements!r}")
    assert every_module(lambda dl: dl.from_pointer(a.ctypes.data, a.shape, "float32", strides=elements).strides) \
        == ("ok", elements)


@pytest.mark.parametrize("kwargs, expected", [
    (dict(strides=(3, 1), byte_strides=(12, 4)), (TypeError, "pass strides (in elements) or byte_strides "
                                                             "(in bytes), not both")),
    (dict(byte_strides=(12, 6)), (ValueError, "byte_strides (12, 6): 6 bytes is not a whole number of "
                                              "4-byte float32 elements")),
    (dict(byte_strides=(3, 1), dtype="float4_e2m1fn"), (ValueError, "byte_strides cannot place float4_e2m1fn "
                                                                    "elements, which are not whole bytes: pass "
                                                                    "strides, in elements")),
    (dict(byte_strides=None), ("ok", (3, 1))),
])
def test_byte_strides_mistakes(kwargs, expected):
    dtype = kwargs.pop("dtype", "float32")
    assert every_module(lambda dl: dl.from_pointer(64, (2, 3), dtype, **kwargs).strides) == expected


# --- dtypes: names from the schema ----------------------------------------------

@pytest.mark.parametrize("dtype, shown", [
    ((2, 32, 1), "float32"), ((2, 32, 4), "float32x4"), ((0, 8, 1), "int8"), ((6, 8, 1), "bool"),
    ((4, 16, 1), "bfloat16"), ((10, 8, 1), "float8_e4m3fn"), ((17, 4, 2), "float4_e2m1fnx2"),
    ((2, 33, 1), "DataType(code=2, bits=33, lanes=1)"), ((2, 32, 0), "DataType(code=2, bits=32, lanes=0)"),
    ((0, 4, 1), "DataType(code=0, bits=4, lanes=1)"), ((99, 8, 1), "DataType(code=99, bits=8, lanes=1)"),
])
def test_a_dtype_shows_as_its_name(dl, dtype, shown):
    """As Go's dlpack.DataType.String shows it (dltensor's tests pin the same
    strings): the schema's name, x and the lanes, or the fields."""
    d = dl.DataType(*dtype)
    assert repr(d) == str(d) == d.name == shown
    if not shown.startswith("DataType("):
        assert dl.from_pointer(64, (1,), shown).dtype == d  # a name shown is a name taken


def test_a_tensor_shows_its_dtype_by_name(dl):
    assert "dtype=float32," in repr(dl.from_pointer(64, (2,), "float32"))


def test_a_device_shows_its_type_by_name(dl):
    """As Go's dltensor shows a tensor (its tests pin the same string)."""
    t = dl.from_pointer(64, (2, 3), "float32")
    assert repr(t) == ("Tensor(shape=(2, 3), strides=(3, 1), dtype=float32, "
                       "device=Device(device_type=kDLCPU, device_id=0), readonly=False)")
    assert repr(dl.Device(99, 3)) == "Device(device_type=99, device_id=3)"
    assert dl.Device(1, 0) == (1, 0)  # still the tuple it shows


def test_dtype_arguments_take_objects_named_by_a_dtype_name(dl):
    assert dl.from_pointer(64, (1,), np.dtype("float16")).dtype == (2, 16, 1)  # .name
    assert dl.from_pointer(64, (1,), np.complex64).dtype == (5, 64, 1)  # __name__ of a type
    assert dl.from_pointer(64, (1,), np.dtype(bool)).dtype == (6, 8, 1)
    ml_dtypes = required.module("ml_dtypes")
    assert dl.from_pointer(64, (1,), ml_dtypes.bfloat16).dtype == (4, 16, 1)
    assert dl.from_pointer(64, (1,), np.dtype(ml_dtypes.float8_e4m3fn)).dtype == (10, 8, 1)


def test_torch_dtypes_are_taken_by_name(dl):
    torch = required.module("torch")
    assert dl.from_pointer(64, (1,), torch.float32).dtype == (2, 32, 1)  # str: torch.float32
    assert dl.from_pointer(64, (1,), torch.bfloat16).dtype == (4, 16, 1)


@pytest.mark.parametrize("dtype, expected", [
    (np.dtype(">f4" if np.little_endian else "<f4"), ValueError),
    (np.dtype([("a", "i4")]), ValueError),
    (None, TypeError),
    (32, TypeError),
])
def test_dtype_arguments_that_name_nothing(dtype, expected):
    kind, words = every_module(lambda dl: dl.from_pointer(64, (1,), dtype))
    assert kind is expected, words
    if expected is ValueError and dtype.byteorder != "|":
        assert words == f"dtype {dtype!r} is not in this machine's byte order"
    elif expected is ValueError:
        assert words.startswith(f"unknown dtype name '{dtype.name}'; known: int8, ")
