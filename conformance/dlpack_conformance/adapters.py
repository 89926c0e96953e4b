"""How the kit drives a library: an Adapter spells, as Python source, how the
library makes an array, views it, makes it read-only, exports it and
imports a tensor. Cases are that source, so each case's reproducer is the
very code the kit ran.

The default Adapter drives any array-API namespace (asarray, from_dlpack,
permute_dims, reshape, broadcast_to, indexing with steps, __dlpack__,
__dlpack_device__). Built-in adapters below cover the libraries whose
spelling differs. For another library, write an adapter file (a .py file
that defines ADAPTER, an instance of a subclass of Adapter) and name the file
instead of a module: `python -m dlpack_conformance ./mylib_adapter.py`
(docs: README.md beside this package)."""

import importlib
import importlib.util
import itertools
import os

from .reference import DTYPES

DTYPE_NAMES = tuple(DTYPES)

# Every dtype name the kit knows (reference.DTYPES) that an array-API
# library has; an adapter lists fewer or more.
ARRAY_API_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
# Those without the complex ones, which many libraries lack.
REAL_DTYPES = tuple(d for d in ARRAY_API_DTYPES if not d.startswith("complex"))
# pyarrow's primitive types that DLPack can carry (a bool array is bit-packed).
PYARROW_DTYPES = (*(d for d in REAL_DTYPES if d != "bool"), "float16")

# The float8 types PyTorch (2.x) and JAX (ml_dtypes) share.
FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")


def release_of(distribution):
    """The installed release of a distribution as a tuple of its leading
    numbers ((2, 6, 2) for 2.6.2), without importing it; () where none is
    installed."""
    import importlib.metadata

    try:
        version = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ()
    numbers = []
    for part in version.split("."):
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers)


class Adapter:
    """The array-API spelling. Override attributes or methods to adapt."""

    #: the module the library is imported as (`import MODULE as xp`)
    module = None
    #: the dtype names the library has
    dtypes = ARRAY_API_DTYPES
    #: the dtype layouts are tried with (one the library has)
    layout_dtype = "float32"
    #: what the library cannot do: "negative-step", "broadcast", "keywords"
    #: (__dlpack__ takes no max_version, dl_device, copy), "readonly" (no
    #: read-only arrays); the cases that need it are skipped. None (the
    #: default): "readonly" where the adapter defines no make_readonly,
    #: nothing else; a set without "readonly" gets it where the adapter
    #: defines no make_readonly
    lacks = None
    #: the imports a script needs before `xp` is used
    imports = ()
    #: what the library is: ("producer", "consumer") exports and imports;
    #: ("producer",) only exports (its arrays have __dlpack__, it has no
    #: from_dlpack), ("consumer",) only imports. The other side's cases are
    #: skipped as declared; an undeclared missing side fails the run.
    sides = ("producer", "consumer")
    #: the dimension counts of the arrays the library makes, such as (1,) for
    #: a library of vectors, or None: any. Without 2, producer cases start
    #: from a vector of 24 instead of a 4x6 array; cases needing another
    #: count are skipped as declared.
    ndims = None
    #: the device types besides the CPU that a CPU array exports to when
    #: __dlpack__(dl_device=...) asks (3: kDLCUDAHost, 13: kDLCUDAManaged);
    #: a refusal to export there is then a warning
    host_devices = ()
    #: whether from_dlpack takes stream= (the stream the import is for),
    #: which it passes to the producer's __dlpack__
    stream_keyword = False
    #: the library's name in reports and the matrix, where the module's is
    #: not it (jax for jax.numpy)
    label = None
    #: the releases of the library this adapter was tried on (the built-in
    #: adapters: those of dlgen's conformance matrix, docs/conformance-matrix.md)
    tried_on = ()

    def __init__(self, module=None):
        if module is not None:
            self.module = module
        self.name = type(self).label or self.module
        own = type(self).make_readonly is not Adapter.make_readonly
        if self.lacks is None:
            self.lacks = frozenset() if own else frozenset({"readonly"})
        elif not own and not isinstance(self.lacks, str):  # no read-only arrays without a way to make one
            self.lacks = frozenset(self.lacks) | {"readonly"}

    # -- spelling -----------------------------------------------------------
    def dtype(self, name):
        return f"xp.{name}"

    def asarray(self, values, dtype):
        return f"xp.asarray({values!r}, dtype={self.dtype(dtype)})"

    def permute(self, x, axes):
        return f"xp.permute_dims({x}, {axes!r})"

    def reshape(self, x, shape):
        return f"xp.reshape({x}, {shape!r})"

    def broadcast(self, x, shape):
        return f"xp.broadcast_to({x}, {shape!r})"

    def make_readonly(self, x):
        """A statement that makes x read-only, or None."""
        return None  # noqa: RET501 - the default: no read-only arrays

    def conj(self, x):
        """An expression: the complex conjugate of x (a view where the
        library has conjugated views)."""
        return f"xp.conj({x})"

    def dtype_of(self, x):
        """An expression: x's dtype object (the dtype exchange protocol's)."""
        return f"{x}.dtype"

    def device_of(self, x):
        """An expression: x's device object (the device exchange protocol's)."""
        return f"{x}.device"

    def exchange_inputs(self):
        """Arrays of the library's own kinds on which __dlpack_c_exchange_api__
        must answer as __dlpack__ does: (name, setup lines making x, its
        values as nested lists or None)."""
        return []

    def export(self, x, keywords):
        args = ", ".join(f"{k}={v!r}" for k, v in keywords.items())
        return f"{x}.__dlpack__({args})"

    def from_dlpack(self, producer, stream=None):
        """An expression importing producer (on stream, where the adapter
        says from_dlpack takes one)."""
        if stream is not None:
            return f"xp.from_dlpack({producer}, stream={stream!r})"
        return f"xp.from_dlpack({producer})"

    def write(self, y, index, value):
        """A statement that writes value at index of y."""
        return f"{y}[{index!r}] = {value!r}"

    def operate(self, y):
        """An expression computing on an imported array y (a sum), run in
        every consumer case whose tensor the kit reads; None: the library
        computes nothing (a ViaNumPy library). The default: the array API's
        sum (a library whose sum refuses bool, as array_api_strict's,
        spells its own)."""
        return f"xp.sum({y})"

    def read(self):
        """An expression of y giving its values as nested lists."""
        return "reference.values_of(y)"

    # -- loading ------------------------------------------------------------
    def load(self):
        """Imports the library; the namespace scripts call xp."""
        return importlib.import_module(self.module)

    def header(self):
        """A script's first lines."""
        return [
            *self.imports,
            f"import {self.module} as xp",
            "from dlpack_conformance import reference",
        ]


class NumPy(Adapter):
    """NumPy, spelled as both 1.x and 2.x have it (transpose, bool_: 1.x has
    no permute_dims, and its numpy.bool is deprecated). Tried on NumPy 1.22.0
    (from_dlpack is _from_dlpack), 1.26.4 (__dlpack__ takes stream only,
    from_dlpack asks for legacy capsules) and 2.4.6."""

    def read(self):
        return "y.tolist()"

    module = "numpy"
    tried_on = ("1.22.0", "1.26.4", "2.4.6")
    dtypes = (*ARRAY_API_DTYPES, "float16")

    def __init__(self, module=None):
        super().__init__(module)
        # NumPy 1.22, the first with DLPack, spells from_dlpack _from_dlpack
        self.underscored = release_of("numpy")[:2] == (1, 22)

    def from_dlpack(self, producer, stream=None):
        if self.underscored:
            return f"xp._from_dlpack({producer})"
        return super().from_dlpack(producer, stream)

    def dtype(self, name):
        return f"xp.{numpy_dtype(name)}"

    def permute(self, x, axes):
        return f"xp.transpose({x}, {axes!r})"

    def make_readonly(self, x):
        return f"{x}.flags.writeable = False"

    def operate(self, y):
        return f"{y}.sum()"


def numpy_dtype(name):
    """A dtype's name in every NumPy release (bool_, where 2.x also has bool)."""
    return "bool_" if name == "bool" else name


class Torch(Adapter):
    def read(self):
        return "y.tolist()"

    module = "torch"
    tried_on = ("1.11.0", "1.13.0", "2.15.0")
    dtypes = (*ARRAY_API_DTYPES, "float16", "bfloat16", *FLOAT8)
    lacks = frozenset({"negative-step", "readonly"})

    def dtype(self, name):
        return "xp.bool" if name == "bool" else f"xp.{name}"

    def asarray(self, values, dtype):
        return f"xp.tensor({values!r}, dtype={self.dtype(dtype)})"

    def permute(self, x, axes):
        return f"{x}.permute({axes!r})"

    def conj(self, x):
        return f"{x}.conj()"

    def operate(self, y):
        # a sum in complex128: torch sums no float8 ("sum_cpu" not implemented)
        return f"{y}.to(xp.complex128).sum()"

    def exchange_inputs(self):
        values = [[1 + 2j, -3j, 0.5 + 0j], [2.5 - 1j, 4 + 0j, -1 + 1j]]
        base = f"xp.tensor({values!r}, dtype=xp.complex64)"
        return [
            (
                "conjugate view",
                [f"x = {base}.conj()"],
                [[v.conjugate() for v in r] for r in values],
            ),
            ("negative view", [f"x = {base}.conj().imag"], [[-v.imag for v in r] for r in values]),
            ("requires_grad", ["x = xp.ones((2, 3), requires_grad=True)"], [[1.0] * 3] * 2),
        ]


class Jax(Adapter):
    """jax.numpy. JAX 0.4 lacks the float8_e3m4, float8_e4m3, float8_e8m0fnu
    and float4_e2m1fn arrays of later releases (their cases skip: it cannot
    make the input), and its from_dlpack asks for legacy capsules only."""

    def read(self):
        return "y.tolist()"

    module = "jax.numpy"
    tried_on = ("0.4.18", "0.4.30", "0.10.2")
    # ml_dtypes' float8 types, and float4 (XLA has no float6 arrays: it
    # refuses to make them)
    dtypes = (
        *ARRAY_API_DTYPES,
        "float16",
        "bfloat16",
        *FLOAT8,
        "float8_e3m4",
        "float8_e4m3",
        "float8_e4m3b11fnuz",
        "float4_e2m1fn",
    )
    lacks = frozenset({"readonly"})
    imports = ("import jax", "jax.config.update('jax_enable_x64', True)")

    label = "jax"


class TensorFlow(Adapter):
    module = "tensorflow"
    tried_on = ("2.12.0", "2.21.0")
    dtypes = (*ARRAY_API_DTYPES, "float16", "bfloat16")
    lacks = frozenset({"readonly", "keywords"})
    layout_dtype = "float32"

    def asarray(self, values, dtype):
        return f"xp.constant({values!r}, dtype={self.dtype(dtype)})"

    def permute(self, x, axes):
        return f"xp.transpose({x}, {axes!r})"

    def conj(self, x):
        return f"xp.math.conj({x})"

    def from_dlpack(self, producer):
        return f"xp.experimental.dlpack.from_dlpack({producer}.__dlpack__())"

    def operate(self, y):
        # a sum, in float64 (reduce_sum takes no bool; complex keeps its real part)
        return f"xp.reduce_sum(xp.cast({y}, xp.float64))"

    def export(self, x, keywords):
        if keywords:
            return super().export(x, keywords)
        return f"xp.experimental.dlpack.to_dlpack({x})"

    def read(self):
        return "y.numpy().tolist()"


class Paddle(Adapter):
    """Paddle. Paddle 2.x has no __dlpack__ and its from_dlpack takes
    capsules only: there it exports through paddle.utils.dlpack.to_dlpack
    and imports the capsule a producer's __dlpack__() gives, and the
    keyword cases skip (the release is read from the installed
    distribution, so the kit's cases agree before and after the import)."""

    def __init__(self, module=None):
        super().__init__(module)
        self.capsules_only = (release_of("paddlepaddle") or release_of("paddlepaddle-gpu"))[:1] == (2,)
        if self.capsules_only:
            self.lacks = self.lacks | {"keywords"}

    def read(self):
        # Paddle's tolist() gives a bfloat16 or float8 tensor's bits as
        # integers (Paddle 2.x has no float8).
        if self.capsules_only:
            return "(y.astype('float32') if y.dtype == xp.bfloat16 else y).tolist()"
        return (
            "(y.astype('float32') if y.dtype in (xp.bfloat16, xp.float8_e4m3fn, xp.float8_e5m2) "
            "else y).tolist()"
        )

    module = "paddle"
    tried_on = ("2.6.2", "3.3.1")
    # paddle.uint16 is paddle.bfloat16 (Paddle 3.3): to_tensor(..., dtype="uint16")
    # makes a bfloat16 tensor, which Paddle exports, rightly, as bfloat16.
    dtypes = (
        *(d for d in ARRAY_API_DTYPES if d != "uint16"),
        "float16",
        "bfloat16",
        "float8_e4m3fn",
        "float8_e5m2",
    )
    lacks = frozenset({"readonly"})

    def dtype(self, name):
        return f"{name!r}"

    def asarray(self, values, dtype):
        if dtype.startswith("float8"):  # to_tensor does not make float8 from numbers
            return f"xp.to_tensor({values!r}, dtype='float32').astype({self.dtype(dtype)})"
        return f"xp.to_tensor({values!r}, dtype={self.dtype(dtype)})"

    def permute(self, x, axes):
        return f"xp.transpose({x}, {list(axes)!r})"

    def reshape(self, x, shape):
        return f"xp.reshape({x}, {list(shape)!r})"

    def broadcast(self, x, shape):
        return f"xp.broadcast_to({x}, {list(shape)!r})"

    def export(self, x, keywords):
        if self.capsules_only and not keywords:
            return f"xp.utils.dlpack.to_dlpack({x})"
        return super().export(x, keywords)

    def from_dlpack(self, producer):
        if self.capsules_only:
            return f"xp.utils.dlpack.from_dlpack({producer}.__dlpack__())"
        return f"xp.utils.dlpack.from_dlpack({producer})"

    def operate(self, y):
        return f"xp.sum({y}.astype('complex128'))"

    def device_of(self, x):
        return f"{x}.place"


class MXNet(Adapter):
    module = "mxnet"
    tried_on = ("1.4.0", "1.9.1")
    dtypes = ("int8", "int32", "int64", "uint8", "float16", "float32", "float64")
    lacks = frozenset({"readonly", "keywords", "negative-step"})

    def dtype(self, name):
        return f"{name!r}"

    def asarray(self, values, dtype):
        return f"xp.nd.array({values!r}, dtype={self.dtype(dtype)})"

    def permute(self, x, axes):
        return f"xp.nd.transpose({x}, axes={axes!r})"

    def reshape(self, x, shape):
        return f"xp.nd.reshape({x}, shape={shape!r})"

    def broadcast(self, x, shape):
        return f"xp.nd.broadcast_to({x}, shape={shape!r})"

    def export(self, x, keywords):
        if keywords:
            return super().export(x, keywords)
        return f"xp.nd.to_dlpack_for_read({x})"

    def from_dlpack(self, producer):
        return f"xp.nd.from_dlpack({producer}.__dlpack__())"

    def operate(self, y):
        # MXNet 1.x (legacy shape semantics) sums none of its own 0-d or
        # size-0 arrays: no operation there
        return f"xp.nd.sum({y}.astype('float64')).asscalar() if {y}.ndim and {y}.size else None"

    def read(self):
        return "y.asnumpy().tolist()"


class Dpnp(Adapter):
    """dpnp on a SYCL device (Intel's OpenCL runtime gives one on a CPU).
    Before 0.16 dpnp has no permute_dims (the adapter transposes) and its
    __dlpack__ takes stream alone (the keyword cases skip); before 0.17 it
    names no int8, int16 or unsigned dtype (the adapter names every dtype
    by its string) and its from_dlpack imports no CPU tensor (0.15 refuses
    the device, 0.16 the NumPy array dpctl makes of it): there it is a
    producer alone, the kit's tensors being CPU memory. The release is read
    from the installed distribution."""

    def __init__(self, module=None):
        super().__init__(module)
        release = release_of("dpnp")
        self.before_0_16 = (0,) < release < (0, 16)
        self.before_0_17 = (0,) < release < (0, 17)
        if self.before_0_16:
            self.lacks = self.lacks | {"keywords"}
        if self.before_0_17:
            self.sides = ("producer",)

    module = "dpnp"
    tried_on = ("0.15.0", "0.16.0", "0.20.0")
    dtypes = (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "complex64",
    )
    lacks = frozenset({"readonly"})

    def dtype(self, name):
        if self.before_0_17:
            return f"{name!r}"
        return super().dtype(name)

    def permute(self, x, axes):
        if self.before_0_16:
            return f"xp.transpose({x}, {axes!r})"
        return super().permute(x, axes)

    def operate(self, y):
        # from_dlpack gives a NumPy array for host memory, which dpnp.sum refuses
        return f"{y}.sum()"

    def read(self):
        return "xp.asnumpy(y).tolist()"


class CuPy(Adapter):
    """CuPy: arrays on a CUDA device, read back through the host."""

    module = "cupy"
    dtypes = (*ARRAY_API_DTYPES, "float16")
    lacks = frozenset({"readonly"})

    def read(self):
        return "y.get().tolist()"


class ViaNumPy(Adapter):
    """A library that makes no arrays of its own (tvm_ffi, dlgen's modules):
    the array is NumPy's, with its layout, imported by the library's
    from_dlpack; the kit tests the library's export of it and reads the
    library's imports back through the reference consumer."""

    dtypes = (*ARRAY_API_DTYPES, "float16")
    lacks = frozenset({"readonly"})
    imports = ("import numpy",)

    def header(self):
        return [
            "import numpy",
            f"import {self.module} as xp",
            "from dlpack_conformance import reference",
        ]

    def asarray(self, values, dtype):
        return f"numpy.asarray({values!r}, dtype=numpy.{numpy_dtype(dtype)})"

    def permute(self, x, axes):
        return f"numpy.transpose({x}, {axes!r})"

    def reshape(self, x, shape):
        return f"numpy.reshape({x}, {shape!r})"

    def broadcast(self, x, shape):
        return f"numpy.broadcast_to({x}, {shape!r})"

    def conj(self, x):
        return f"numpy.conj({x})"

    def make_readonly(self, x):
        return f"{x}.flags.writeable = False"

    def adopt(self, x):
        """The statement that hands the NumPy array x to the library."""
        return f"x = xp.from_dlpack({x})"

    def read(self):
        return "reference.Capsule(y.__dlpack__(max_version=reference.VERSION)).elements()"

    def write(self, y, index, value):
        return None

    def operate(self, y):
        return None  # the library computes nothing on what it imports


class TvmFfi(ViaNumPy):
    """apache-tvm-ffi. 0.1.0, its first release, imports legacy capsules
    only (its read-only cases skip: NumPy exports no read-only array so)."""

    module = "tvm_ffi"
    tried_on = ("0.1.0", "0.1.15.post2")


class DlgenModule(ViaNumPy):
    """dlgen's own ctypes or Cython module (dlpack_ctypes, dlpack_cython).
    It holds any DLPack dtype: the small floats NumPy lacks (float8, float6,
    float4) it takes from the kit's own producer."""

    stream_keyword = True
    dtypes = (*ViaNumPy.dtypes, *(d for d in DTYPE_NAMES if d.startswith(("float8_", "float6_", "float4_"))))

    def asarray(self, values, dtype):
        if dtype in ViaNumPy.dtypes:
            return super().asarray(values, dtype)
        shape, v = [], values
        while isinstance(v, list):
            shape.append(len(v))
            v = v[0] if v else None
        made = f"shape={tuple(shape)!r}, dtype={(*DTYPES[dtype], 1)!r}, values={values!r}"
        return f"reference.Producer({made})"

    lacks = frozenset()


class Nanobind(ViaNumPy):
    """A nanobind extension whose from_dlpack takes an nb::ndarray<> (or
    nb::ndarray<nb::ro>, for read-only memory) and returns a view of it as
    nb::ndarray<nb::array_api>, nanobind's own ndarray object: the test
    suite's dlpack_nanobind (tests/nanobind). Both sides are nanobind's.
    Before 2.10 nanobind has no ndarray object of its own (nb::array_api
    came in 2.10.1): the extension returns a bare "dltensor" capsule, which
    the kit reads back, and the adapter is a consumer alone (the release is
    that of the installed nanobind, the one the extension is built with)."""

    def __init__(self, module=None):
        super().__init__(module)
        self.capsules_only = (0,) < release_of("nanobind") < (2, 10)
        if self.capsules_only:
            self.sides = ("consumer",)

    module = "dlpack_nanobind"
    tried_on = (
        "0.0.3",
        "0.0.9",
        "0.1.0",
        "0.2.0",
        "1.0.0",
        "1.4.0",
        "1.5.0",
        "1.9.2",
        "2.0.0",
        "2.10.1",
        "3.1.0",
    )
    lacks = frozenset()

    def read(self):
        if self.capsules_only:
            return "reference.Capsule(y).elements()"
        return super().read()


class OnnxRuntime(ViaNumPy):
    """onnxruntime's OrtValue: made from a NumPy array with the layout (a
    contiguous one is shared, another copied), exported by
    OrtValue.__dlpack__(stream=None) alone (legacy capsules), imported by
    OrtValue.from_dlpack, which asks for a legacy capsule."""

    module = "onnxruntime"
    tried_on = ("1.26.0", "1.32.0")
    dtypes = (*REAL_DTYPES, "float16")
    lacks = frozenset({"readonly", "keywords"})

    def adopt(self, x):
        return f"x = xp.OrtValue.ortvalue_from_numpy({x})"

    def from_dlpack(self, producer):
        return f"xp.OrtValue.from_dlpack({producer})"

    def read(self):
        return "y.numpy().tolist()"


class ArrayApiStrict(Adapter):
    """array-api-strict. 1.0, its first release, exports and imports legacy
    capsules only (its __dlpack__ takes no max_version)."""

    module = "array_api_strict"
    tried_on = ("1.0", "2.6.1")
    lacks = frozenset({"readonly", "negative-step"})

    def operate(self, y):
        # its sum takes numeric dtypes only
        return f"xp.sum(xp.astype({y}, xp.int64) if {y}.dtype == xp.bool else {y})"


class NdOnnx(Adapter):
    """ndonnx: an array-API namespace of ONNX graphs, without complex dtypes.
    Its __dlpack__ and from_dlpack exist and refuse every array: the kit
    finds it has neither side."""

    module = "ndonnx"
    tried_on = ("0.23.0",)
    dtypes = (*REAL_DTYPES, "float16")


class PyArrow(Adapter):
    """pyarrow's Array: a producer of vectors (Array has no from_dlpack;
    pyarrow imports into a Tensor, the pyarrow.Tensor adapter), of primitive
    types (a bool array is bit-packed: pyarrow refuses to export it). Arrays
    are immutable, so every array is a read-only one."""

    module = "pyarrow"
    tried_on = ("15.0.0", "26.0.1")
    sides = ("producer",)
    ndims = (1,)
    dtypes = PYARROW_DTYPES
    lacks = frozenset({"broadcast"})

    def dtype(self, name):
        return f"xp.{name}()"

    def asarray(self, values, dtype):
        return f"xp.array({values!r}, type={self.dtype(dtype)})"

    def make_readonly(self, x):
        return "pass  # a pyarrow array is immutable: every one is read-only"


class PyArrowTensor(ViaNumPy):
    """pyarrow's Tensor, pyarrow's one importer: made from a NumPy array with
    the layout (Tensor.from_numpy views it; a read-only array makes an
    immutable tensor), imported by Tensor.from_dlpack. No negative strides,
    no bool."""

    module = "pyarrow"
    tried_on = ("26.0.0", "26.0.1")
    dtypes = PYARROW_DTYPES
    lacks = frozenset({"negative-step"})

    label = "pyarrow.Tensor"

    def adopt(self, x):
        return f"x = xp.Tensor.from_numpy({x})"

    def from_dlpack(self, producer):
        return f"xp.Tensor.from_dlpack({producer})"

    def read(self):
        return "y.to_numpy().tolist()"


class Mlx(Adapter):
    """mlx.core (`pip install "mlx[cpu]"` on Linux): arrays on the CPU.
    Before 0.32 mlx has no from_dlpack and its __dlpack__ takes no
    keywords: there it is a producer alone and the keyword cases skip (the
    release is read from the installed distribution)."""

    def __init__(self, module=None):
        super().__init__(module)
        if (0,) < release_of("mlx") < (0, 32):
            self.sides = ("producer",)
            self.lacks = self.lacks | {"keywords"}

    module = "mlx.core"
    tried_on = ("0.21.1", "0.32.4")
    dtypes = (
        *(d for d in ARRAY_API_DTYPES if d != "complex128"),
        "float16",
        "bfloat16",
    )

    label = "mlx"

    def dtype(self, name):
        return "xp.bool_" if name == "bool" else f"xp.{name}"

    def asarray(self, values, dtype):
        return f"xp.array({values!r}, dtype={self.dtype(dtype)})"

    def permute(self, x, axes):
        return f"xp.transpose({x}, {axes!r})"

    def operate(self, y):
        return f"xp.sum({y}.astype(xp.complex64)).item()"

    def read(self):
        return "y.tolist()"


class Warp(Adapter):
    """NVIDIA Warp (warp-lang) on its CPU device: arrays of 1 to 4
    dimensions, legacy capsules only (__dlpack__ takes stream alone)."""

    module = "warp"
    tried_on = ("1.0.0", "1.19.0")
    dtypes = (*REAL_DTYPES, "float16")
    lacks = frozenset({"readonly", "keywords", "negative-step", "broadcast"})
    ndims = (1, 2, 3, 4)
    imports = ("import warp", "warp.config.quiet = True", "warp.init()")

    def asarray(self, values, dtype):
        return f"xp.array({values!r}, dtype={self.dtype(dtype)}, device='cpu')"

    def permute(self, x, axes):
        return f"{x}.transpose({axes!r})"

    def reshape(self, x, shape):
        return f"{x}.reshape({shape!r})"

    def write(self, y, index, value):
        return None  # a Warp array takes no item assignment

    def operate(self, y):
        # array_sum sums float32 and float64 arrays only
        return f"xp.utils.array_sum({y}) if {y}.dtype in (xp.float32, xp.float64) else None"

    def read(self):
        return "y.numpy().tolist()"


class Open3D(Adapter):
    """open3d.core.Tensor (the open3d-cpu wheel): __dlpack__(stream) alone
    (legacy capsules), Tensor.from_dlpack; no float16, no broadcast, and a
    transpose of two dimensions only (Tensor.T()). Open3D 0.18 has no
    __dlpack__ and its from_dlpack takes capsules only: there the adapter
    exports by Tensor.to_dlpack() and imports a producer's capsule."""

    module = "open3d.core"
    tried_on = ("0.18.0", "0.20.0")
    dtypes = REAL_DTYPES
    lacks = frozenset({"readonly", "keywords", "broadcast"})

    label = "open3d"

    def __init__(self, module=None):
        super().__init__(module)
        release = release_of("open3d-cpu") or release_of("open3d")
        self.capsules_only = bool(release) and release[:2] < (0, 19)

    def export(self, x, keywords):
        if self.capsules_only and not keywords:
            return f"{x}.to_dlpack()"
        return super().export(x, keywords)

    def asarray(self, values, dtype):
        return f"xp.Tensor({values!r}, dtype={self.dtype(dtype)})"

    def permute(self, x, axes):
        if tuple(axes) == (1, 0):
            return f"{x}.T()"
        return f"{x}.permute({axes!r})  # Open3D 0.20 has none: the case is skipped"

    def reshape(self, x, shape):
        return f"{x}.reshape({shape!r})"

    def from_dlpack(self, producer):
        if self.capsules_only:
            return f"xp.Tensor.from_dlpack({producer}.__dlpack__())"
        return f"xp.Tensor.from_dlpack({producer})"

    def operate(self, y):
        return f"{y}.to(xp.float64).sum().item()"

    def read(self):
        return "y.numpy().tolist()"


BUILTIN = {
    "numpy": NumPy,
    "torch": Torch,
    "jax": Jax,
    "jax.numpy": Jax,
    "tensorflow": TensorFlow,
    "paddle": Paddle,
    "mxnet": MXNet,
    "dpnp": Dpnp,
    "cupy": CuPy,
    "tvm_ffi": TvmFfi,
    "array_api_strict": ArrayApiStrict,
    "pyarrow": PyArrow,
    "pyarrow.Tensor": PyArrowTensor,
    "mlx": Mlx,
    "mlx.core": Mlx,
    "warp": Warp,
    "open3d": Open3D,
    "open3d.core": Open3D,
    "onnxruntime": OnnxRuntime,
    "ndonnx": NdOnnx,
    "dlpack_nanobind": Nanobind,
    "dlpack_ctypes": DlgenModule,
    "dlpack_cython": DlgenModule,
}


#: what an adapter's lacks may name
LACKS = frozenset({"negative-step", "broadcast", "keywords", "readonly"})


class AdapterError(Exception):
    """An adapter file the kit cannot use, with what to change."""


def adapter_for(library):
    """The Adapter for a library name, or for an adapter file (a path ending
    in .py that defines ADAPTER)."""
    if library.endswith(".py"):
        path = os.path.abspath(library)
        if not os.path.exists(path):
            raise AdapterError(f"no adapter file {library}")
        spec = importlib.util.spec_from_file_location("dlpack_conformance_adapter", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise AdapterError(f"{library} does not load: {type(e).__name__}: {e}") from e
        adapter = getattr(module, "ADAPTER", None)
        if not isinstance(adapter, Adapter):
            raise AdapterError(
                f"{library} must define ADAPTER = an instance of a subclass of dlpack_conformance.Adapter, "
                f"not {type(adapter).__name__}"
            )
        if not isinstance(adapter.module, str) or not adapter.module:
            raise AdapterError(
                f"{library}: the adapter's module must name the library to import, such as 'mylib'"
            )
        if isinstance(adapter.dtypes, str) or not all(d in DTYPE_NAMES for d in adapter.dtypes):
            raise AdapterError(
                f"{library}: the adapter's dtypes must be a tuple of names of {', '.join(DTYPE_NAMES)}"
            )
        sides = getattr(adapter, "sides", Adapter.sides)
        if isinstance(sides, str) or not sides or not set(sides) <= set(Adapter.sides):
            raise AdapterError(
                f"{library}: the adapter's sides must be ('producer',), ('consumer',) or both, "
                f"not {sides!r}"
            )
        if isinstance(adapter.lacks, str):
            raise AdapterError(
                f"{library}: the adapter's lacks must be a set, such as frozenset({{{adapter.lacks!r}}})"
            )
        unknown = sorted(set(adapter.lacks) - LACKS)
        if unknown:
            raise AdapterError(
                f"{library}: the adapter's lacks names {', '.join(map(repr, unknown))}, which the kit does not "
                f"know: lacks is a set of {', '.join(sorted(LACKS))}"
            )
        ndims = getattr(adapter, "ndims", None)
        if ndims is not None and (
            isinstance(ndims, (str, int)) or not all(isinstance(n, int) and n >= 0 for n in ndims)
        ):
            raise AdapterError(
                f"{library}: the adapter's ndims must be None or a tuple of dimension counts, "
                f"such as (1,), not {ndims!r}"
            )
        adapter.name = adapter.name or adapter.module
        return adapter
    cls = BUILTIN.get(library, Adapter)
    return cls(library if cls in (Adapter, DlgenModule) else None)
