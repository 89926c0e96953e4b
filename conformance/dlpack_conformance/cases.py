"""The cases: for one adapter, every producer case (arrays the library makes,
exported with every keyword combination of the release, read from inside
the capsule) and every consumer case (tensors the kit makes, good and
malformed, handed to the library's from_dlpack).

A case is a script: `setup` lines make the array or the tensor (an error
there means the library cannot make it: the case is skipped), `body` lines
export or import it and call the reference checks. The body's first `act`
lines call the library; the script wraps them in a try whose except hands
the library's exception to reference.refused with the case's `refusal`
policy, so the reproducer of a case (its header, setup and body) judges a
refusal exactly as the kit does. The policies (reference.refused):
  - "ok": the library may refuse (the case passes, with the exception);
  - "export-legacy": __dlpack__() without max_version may refuse with
    BufferError; another exception type is a warning (export-error-type);
  - "export": refusing a valid array is a warning (export-refused), with
    another exception type than BufferError too (export-error-type);
  - a requirement id: refusing breaks it (its strength decides fail or warn);
  - ("raise", spec): the body must raise BufferError; returning breaks spec,
    another exception type breaks spec too."""

import inspect
import math
from dataclasses import dataclass, field

from . import reference
from .reference import ABSENT_DEVICE, CPU, CUDA_HOST, CUDA_MANAGED, DTYPES, VERSION


@dataclass
class Case:
    id: str
    side: str
    setup: list
    body: list  # body[:act] calls the library; the rest checks
    refusal: object = "ok"
    about: str = ""
    needs: frozenset = field(default_factory=frozenset)
    act: int = 1
    # the dimension counts of the arrays or tensors the case makes (an
    # adapter's ndims declares which its library can make)
    ndims: frozenset = field(default_factory=frozenset)
    # a tensor DLPack or dlgen's rules call malformed (its crash is
    # crash-malformed, a class of its own)
    malformed: bool = False
    # where a valid tensor's elements lie at addresses the kit names but has
    # no memory at (the corpus's data 4096): a consumer that reads them (a
    # copying one) dies there, which is no verdict on it (its crash is a skip)
    unbacked: str = ""

    def body_text(self):
        """The body, its library calls wrapped in the refusal policy."""
        if not self.act:
            return "\n".join(self.body)
        producer = ", producer" if self.side == "consumer" else ""
        lines = ["try:", *("    " + line for line in self.body[: self.act])]
        lines += [
            "except Exception as error:",
            f"    reference.refused(error, {self.refusal!r}{producer})",
        ]
        return "\n".join(lines + self.body[self.act :])

    def script(self, adapter):
        return "\n".join([*adapter.header(), *self.setup, self.body_text()]) + "\n"


# ---- values -----------------------------------------------------------------


def base_values(dtype, shape):
    """Distinct values of dtype, exact in every format of it, nested to shape."""
    n = math.prod(shape)
    if dtype == "bool":
        flat = [i % 3 != 1 for i in range(n)]
    elif dtype.startswith(("uint", "int")):
        flat = list(range(1, n + 1))
    elif dtype.startswith("complex"):
        flat = [complex(i * 0.5 - 3, 1 - i * 0.25) for i in range(n)]
    elif DTYPES[dtype][0] in reference.MINIFLOAT_CODES:
        flat = [reference.small_float(DTYPES[dtype][0], i) for i in range(n)]
    else:
        flat = [i * 0.5 - 3 for i in range(n)]
    return nest(flat, shape)


def nest(flat, shape):
    if not shape:
        return flat[0]
    step = math.prod(shape[1:])
    return [nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def transpose(v):
    return [list(r) for r in zip(*v, strict=False)]


# ---- producer layouts -------------------------------------------------------


@dataclass
class Layout:
    name: str
    lines: object  # adapter -> lines transforming x
    expected: object  # base values (4x6) -> expected values
    shape: tuple  # the shape of the result
    needs: frozenset = frozenset()
    base: tuple = (4, 6)
    via: tuple = ()  # the shapes of the steps between (3-d permuted)

    @property
    def ndims(self):
        return frozenset({len(self.base), len(self.shape), *(len(s) for s in self.via)})


LAYOUTS = [
    Layout("contiguous", lambda a: [], lambda v: v, (4, 6)),
    Layout("transposed", lambda a: [f"x = {a.permute('x', (1, 0))}"], transpose, (6, 4)),
    Layout("stepped", lambda a: ["x = x[::2, 1::3]"], lambda v: [r[1::3] for r in v[::2]], (2, 2)),
    Layout(
        "negative step",
        lambda a: ["x = x[::-1, :]"],
        lambda v: v[::-1],
        (4, 6),
        frozenset({"negative-step"}),
    ),
    Layout(
        "negative steps in both dimensions",
        lambda a: ["x = x[::-2, ::-1]"],
        lambda v: [r[::-1] for r in v[::-2]],
        (2, 6),
        frozenset({"negative-step"}),
    ),
    Layout(
        "offset view", lambda a: ["x = x[1:3, 2:5]"], lambda v: [r[2:5] for r in v[1:3]], (2, 3)
    ),
    Layout(
        "size-1 dimension",
        lambda a: [f"x = {a.reshape('x', (4, 1, 6))}"],
        lambda v: [[r] for r in v],
        (4, 1, 6),
    ),
    Layout("size-1 row slice", lambda a: ["x = x[2:3, :]"], lambda v: v[2:3], (1, 6)),
    Layout(
        "size-1 column slice", lambda a: ["x = x[:, 4:5]"], lambda v: [r[4:5] for r in v], (4, 1)
    ),
    Layout(
        "broadcast row",
        lambda a: [f"x = {a.broadcast('x[1, :]', (3, 6))}"],
        lambda v: [v[1]] * 3,
        (3, 6),
        frozenset({"broadcast"}),
    ),
    Layout("0-d", lambda a: [], lambda v: v, (), base=()),
    Layout("size-0 rows", lambda a: ["x = x[4:, :]"], lambda v: [], (0, 6)),
    Layout("size-0 columns", lambda a: ["x = x[:, 6:]"], lambda v: [[] for _ in v], (4, 0)),
    Layout(
        "1-d",
        lambda a: [f"x = {a.reshape('x', (24,))}"],
        lambda v: [e for r in v for e in r],
        (24,),
    ),
    Layout(
        "3-d permuted",
        lambda a: [f"x = {a.reshape('x', (2, 3, 4))}", f"x = {a.permute('x', (2, 0, 1))}"],
        lambda v: _permute3(nest([e for r in v for e in r], (2, 3, 4))),
        (4, 2, 3),
        via=((2, 3, 4),),
    ),
]

# For a library whose arrays are 1-d only (its adapter's ndims lacks 2):
# the same layouts, made from a vector of 24.
LAYOUTS_1D = [
    Layout("contiguous", lambda a: [], lambda v: v, (24,), base=(24,)),
    Layout("stepped", lambda a: ["x = x[1::3]"], lambda v: v[1::3], (8,), base=(24,)),
    Layout(
        "negative step",
        lambda a: ["x = x[::-1]"],
        lambda v: v[::-1],
        (24,),
        frozenset({"negative-step"}),
        base=(24,),
    ),
    Layout("offset view", lambda a: ["x = x[5:11]"], lambda v: v[5:11], (6,), base=(24,)),
    Layout("size-1 slice", lambda a: ["x = x[7:8]"], lambda v: v[7:8], (1,), base=(24,)),
    Layout(
        "broadcast",
        lambda a: [f"x = {a.broadcast('x[2:3]', (5,))}"],
        lambda v: v[2:3] * 5,
        (5,),
        frozenset({"broadcast"}),
        base=(24,),
    ),
    Layout("0-d", lambda a: [], lambda v: v, (), base=()),
    Layout("size-0", lambda a: ["x = x[24:]"], lambda v: [], (0,), base=(24,)),
]


def layouts_for(adapter):
    """The producer layouts: 2-d based, or 1-d based for an adapter whose
    ndims (the dimension counts its library makes) lacks 2."""
    ndims = getattr(adapter, "ndims", None)
    return LAYOUTS if ndims is None or 2 in ndims else LAYOUTS_1D


def _permute3(v):
    # result[k][i][j] = v[i][j][k]
    return [[[v[i][j][k] for j in range(3)] for i in range(2)] for k in range(4)]


def _array_setup(adapter, dtype, layout=LAYOUTS[0], readonly=False, then=()):
    values = base_values(dtype, layout.base)
    lines = [f"x = {adapter.asarray(values, dtype)}", *list(layout.lines(adapter)), *then]
    if readonly:
        lines.append(adapter.make_readonly("x"))
    if hasattr(adapter, "adopt"):
        lines.append(adapter.adopt("x"))
    return lines, layout.expected(values), layout.shape


def dtypes_of(adapter):
    """The adapter's dtypes this release has (float8 and the sub-byte floats
    entered in DLPack 1.1: an older kit has no code for them)."""
    return [d for d in adapter.dtypes if d in DTYPES]


def _export_policy(basic, max_version):
    """How a refusal of __dlpack__(max_version=...) is judged: without a
    max_version (or below 1.0) BufferError is allowed, above the release a
    refusal breaks the recommended logic, and a plain array (contiguous, the
    default dtype) must export for a consumer of the release."""
    if max_version is None or max_version[0] < 1:
        return "export-legacy"
    if max_version > VERSION:
        return "max-version-accepted"
    return "export-basic" if basic else "export"


def _own_reading(adapter):
    """How the library reads its own array (None for an adapter whose arrays
    are NumPy's, adopted: the layout is the kit's own spelling)."""
    return None if hasattr(adapter, "adopt") else adapter.read()


def _check(adapter, expected, shape, dtype, **keywords):
    """The check of an export, in every producer case whose array the
    adapter makes: first that the library made the array the case asks for,
    read by the library itself (the adapter's read())."""
    args = "".join(f", {k}={v!r}" for k, v in keywords.items() if v is not None)
    made = _own_reading(adapter)
    if made:
        args += f", made=lambda y: {made}"
    return f"reference.check_export(x, capsule, expected={expected!r}, shape={shape!r}, dtype={dtype!r}{args})"


class _Producer:
    """What the producer cases of one adapter share."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.keywords = "keywords" not in adapter.lacks  # its __dlpack__ takes them
        self.releases = list(dict.fromkeys([(1, 0), VERSION]))  # 1.0 and this release, once each
        self.versions = [None, *self.releases, (2, 0)] if self.keywords else [None]
        self.dtype = adapter.layout_dtype
        self.layouts = layouts_for(adapter)
        self.plain = self.layouts[0]
        self.size = "x".join(map(str, self.plain.base))


def producer_cases(adapter):
    p = _Producer(adapter)
    cases = [
        *_layout_cases(p),
        *_dtype_cases(p),
        *_protocol_cases(p),
        *_keyword_cases(p),
        *_deleter_cases(p),
        *_read_only_cases(p),
        *_exchange_api_cases(p),
    ]
    for c in cases:  # the others make the plain array
        c.ndims = c.ndims or p.plain.ndims
    return cases + _exchange_input_cases(p)


def _layout_cases(p):
    """Each layout exported, at each max_version."""
    adapter = p.adapter
    versions = p.versions
    dtype = p.dtype
    layouts = p.layouts
    plain = p.plain
    cases = []
    for layout in layouts:
        for mv in versions:
            setup, expected, shape = _array_setup(adapter, dtype, layout)
            kw = {} if mv is None else {"max_version": mv}
            body = [
                f"capsule = {adapter.export('x', kw)}",
                _check(adapter, expected, shape, dtype, max_version=mv),
            ]
            refusal = _export_policy(layout is plain, mv)
            cases.append(
                Case(
                    f"producer/layout/{slug(layout.name)}/max_version={_v(mv)}",
                    "producer",
                    setup,
                    body,
                    refusal,
                    f"{layout.name} {dtype} array, __dlpack__({_kw(kw)})",
                    layout.needs,
                    ndims=layout.ndims,
                )
            )
    return cases


def _dtype_cases(p):
    """Each dtype exported, without and with max_version."""
    adapter = p.adapter
    keywords = p.keywords
    dtype = p.dtype
    plain = p.plain
    size = p.size
    cases = []
    for dt in dtypes_of(adapter):
        for mv in [None, VERSION] if keywords else [None]:
            setup, expected, shape = _array_setup(adapter, dt, plain)
            kw = {} if mv is None else {"max_version": mv}
            body = [
                f"capsule = {adapter.export('x', kw)}",
                _check(adapter, expected, shape, dt, max_version=mv),
            ]
            cases.append(
                Case(
                    f"producer/dtype/{dt}/max_version={_v(mv)}",
                    "producer",
                    setup,
                    body,
                    _export_policy(dt == dtype, mv),
                    f"{size} {dt} array, __dlpack__({_kw(kw)})",
                )
            )
    return cases


def _protocol_cases(p):
    """The dtype and device objects' protocol, a conjugated view, __dlpack_device__."""
    adapter = p.adapter
    keywords = p.keywords
    dtype = p.dtype
    plain = p.plain
    size = p.size
    cases = []
    # The dtype and device exchange protocol (an RFC): each dtype object's
    # __dlpack_data_type__, the device object's __dlpack_device__.
    mv = VERSION if keywords else None
    kw = {} if mv is None else {"max_version": mv}
    for dt in dtypes_of(adapter):
        setup, _, _ = _array_setup(adapter, dt, plain)
        cases.append(
            Case(
                f"producer/dtype-protocol/{dt}",
                "producer",
                setup,
                [
                    f"capsule = {adapter.export('x', kw)}",
                    f"reference.check_dtype_protocol(capsule, lambda: {adapter.dtype_of('x')})",
                ],
                "precondition",
                f"the {dt} dtype object's __dlpack_data_type__() against the capsule",
            )
        )
    setup, _, _ = _array_setup(adapter, dtype, plain)
    cases.append(
        Case(
            "producer/device-protocol",
            "producer",
            setup,
            [
                f"capsule = {adapter.export('x', kw)}",
                f"reference.check_device_protocol(x, capsule, lambda: {adapter.device_of('x')})",
            ],
            "precondition",
            "the device object's __dlpack_device__() against the capsule",
        )
    )
    if "complex64" in dtypes_of(adapter):
        # A conjugated view (PyTorch's conj() sets a bit and keeps the
        # memory): the capsule must hold the conjugated values.
        mv = VERSION if keywords else None
        kw = {} if mv is None else {"max_version": mv}
        setup, values, shape = _array_setup(
            adapter, "complex64", plain, then=[f"x = {adapter.conj('x')}"]
        )
        conjugated = reference.map_nested(lambda v: v.conjugate(), values)
        cases.append(
            Case(
                "producer/dtype/complex64-conjugate",
                "producer",
                setup,
                [
                    f"capsule = {adapter.export('x', kw)}",
                    _check(adapter, conjugated, shape, "complex64", max_version=mv),
                ],
                "export",
                f"{size} complex64 array conjugated ({adapter.conj('x')}), __dlpack__({_kw(kw)})",
            )
        )
    setup, _, _ = _array_setup(adapter, dtype, plain)
    cases.append(
        Case(
            "producer/__dlpack_device__",
            "producer",
            setup,
            ["reference.check_dlpack_device(x)"],
            "ok",
            "x.__dlpack_device__()",
            act=0,
        )
    )
    return cases


def _keyword_cases(p):
    """__dlpack__'s keywords: each taken, and each request's answer."""
    adapter = p.adapter
    keywords = p.keywords
    dtype = p.dtype
    plain = p.plain
    size = p.size
    cases = []
    if not keywords:
        return []
    setup, expected, shape = _array_setup(adapter, dtype, plain)
    # Whether __dlpack__ takes each keyword at all: the one case that
    # reports a keyword it does not take (the others that pass it skip).
    for keyword, value in zip(reference.KEYWORDS, (VERSION, CPU, None), strict=True):
        kw = {"max_version": VERSION, keyword: value}
        body = [f"capsule = {adapter.export('x', kw)}", _check(adapter, expected, shape, dtype, **kw)]
        cases.append(
            Case(
                f"producer/keywords/takes-{keyword}",
                "producer",
                setup,
                body,
                ("keyword", keyword),
                f"{size} {dtype} array, __dlpack__({_kw(kw)}): the keyword is taken",
            )
        )
    for name, kw, refusal in [
        ("copy=True", {"max_version": VERSION, "copy": True}, "export"),
        ("copy=False", {"max_version": VERSION, "copy": False}, "export"),
        ("max_version=(0, 8)", {"max_version": (0, 8)}, "export"),
    ]:
        body = [
            f"capsule = {adapter.export('x', kw)}",
            _check(adapter, expected, shape, dtype, max_version=kw["max_version"], copy=kw.get("copy")),
        ]
        cases.append(
            Case(
                f"producer/keywords/{slug(name)}",
                "producer",
                setup,
                body,
                refusal,
                f"{size} {dtype} array, __dlpack__({_kw(kw)})",
            )
        )
    for copy in (None, False, True):
        kw = {"max_version": VERSION, "dl_device": CPU, "copy": copy}
        if copy is None:
            del kw["copy"]
        body = [
            (
                f"reference.check_to_cpu(x, lambda: {adapter.export('x', kw)}, copy={copy!r}, "
                f"expected={expected!r}, shape={shape!r}, dtype={dtype!r})"
            )
        ]
        name = "dl_device=CPU" + ("" if copy is None else f" copy={copy}")
        cases.append(
            Case(
                f"producer/keywords/{slug(name)}",
                "producer",
                setup,
                body,
                "export",
                f"{size} {dtype} array, __dlpack__({_kw(kw)})",
                act=0,
            )
        )
    for name, kw, spec in [
        (
            "dl_device=kDLVPI",
            {"max_version": VERSION, "dl_device": ABSENT_DEVICE},
            "dl-device-unsupported",
        ),
        (
            "dl_device=kDLVPI copy=False",
            {"max_version": VERSION, "dl_device": ABSENT_DEVICE, "copy": False},
            "copy-needed",
        ),
    ]:
        body = [
            f"capsule = {adapter.export('x', kw)}",
            f"reference.exported_anyway(capsule, {spec!r}, {kw['dl_device']!r})",
        ]
        cases.append(
            Case(
                f"producer/keywords/{slug(name)}",
                "producer",
                setup,
                body,
                ("raise", spec),
                f"an array, __dlpack__({_kw(kw)}): a device no library has",
            )
        )
    for name, device in (("kDLCUDAHost", CUDA_HOST), ("kDLCUDAManaged", CUDA_MANAGED)):
        kw = {"max_version": VERSION, "dl_device": device}
        declared = device[0] in getattr(adapter, "host_devices", ())
        body = [
            (
                f"reference.check_to_device(x, lambda: {adapter.export('x', kw)}, device={device!r}, "
                f"declared={declared!r}, expected={expected!r}, shape={shape!r}, dtype={dtype!r})"
            )
        ]
        cases.append(
            Case(
                f"producer/keywords/dl_device={name}",
                "producer",
                setup,
                body,
                "export",
                f"a CPU array, __dlpack__({_kw(kw)}): memory the CPU reads, of a device with streams",
                act=0,
            )
        )
    export = adapter.export("x", {"max_version": VERSION})
    body = [
        f"capsule = {export}",
        f"capsule2 = {export}",
        "reference.check_copied_flag(capsule, capsule2)",
    ]
    cases.append(
        Case(
            "producer/keywords/is-copied-exactly-when-copied",
            "producer",
            setup,
            body,
            "export",
            "two exports of one array: IS_COPIED only if they are copies",
        )
    )
    body = [
        f"capsule = {adapter.export('x', {'max_version': VERSION, 'stream': 1})}",
        "reference.accepted_stream_on_cpu(x)",
    ]
    cases.append(
        Case(
            "producer/keywords/stream-on-cpu",
            "producer",
            setup,
            body,
            "ok",
            "a CPU array, __dlpack__(stream=1)",
        )
    )
    return cases


def _deleter_cases(p):
    """A capsule dropped unconsumed, and consumed."""
    adapter = p.adapter
    keywords = p.keywords
    releases = p.releases
    dtype = p.dtype
    plain = p.plain
    cases = []
    setup, _, _ = _array_setup(adapter, dtype, plain)
    for mv in [None, *releases] if keywords else [None]:
        kw = {} if mv is None else {"max_version": mv}
        cases.append(
            Case(
                f"producer/deleter/unconsumed/max_version={_v(mv)}",
                "producer",
                setup,
                [
                    f"capsule = {adapter.export('x', kw)}",
                    "counter = reference.count_deleter(capsule)",
                    "del capsule",
                    "reference.check_deleter_calls(counter, 'deleter-unconsumed')",
                ],
                _export_policy(True, mv),
                "a capsule nobody consumes is dropped",
            )
        )
        cases.append(
            Case(
                f"producer/deleter/consumed/max_version={_v(mv)}",
                "producer",
                setup,
                [
                    f"capsule = {adapter.export('x', kw)}",
                    "counter = reference.count_deleter(capsule)",
                    "reference.consume(capsule)",
                    "del capsule",
                    "reference.check_deleter_calls(counter, 'deleter-consumed')",
                ],
                _export_policy(True, mv),
                "a capsule consumed as a consumer does, then dropped",
            )
        )
    return cases


def _read_only_cases(p):
    """A read-only array exported."""
    adapter = p.adapter
    keywords = p.keywords
    releases = p.releases
    dtype = p.dtype
    plain = p.plain
    cases = []
    if "readonly" not in adapter.lacks:
        ro_setup, ro_expected, ro_shape = _array_setup(adapter, dtype, plain, readonly=True)
        for mv in releases if keywords else []:
            kw = {"max_version": mv}
            cases.append(
                Case(
                    f"producer/read-only/max_version={_v(mv)}",
                    "producer",
                    ro_setup,
                    [
                        f"capsule = {adapter.export('x', kw)}",
                        _check(adapter, ro_expected, ro_shape, dtype, max_version=mv, readonly=True),
                    ],
                    "export",
                    "a read-only array, versioned export",
                )
            )
        cases.append(
            Case(
                "producer/read-only/legacy",
                "producer",
                ro_setup,
                [
                    f"capsule = {adapter.export('x', {})}",
                    "reference.exported_read_only_legacy(capsule)",
                ],
                "ok",
                "a read-only array, legacy export",
            )
        )
    return cases


def _exchange_api_cases(p):
    """__dlpack_c_exchange_api__ against __dlpack__."""
    adapter = p.adapter
    keywords = p.keywords
    dtype = p.dtype
    layouts = p.layouts
    plain = p.plain
    cases = []
    if keywords and reference.EXCHANGE:
        export = f"lambda: {adapter.export('x', {'max_version': VERSION})}"
        for prefix, check, about in [
            ("", "check_exchange_api", "__dlpack_c_exchange_api__ against __dlpack__"),
            (
                "dltensor/",
                "check_exchange_dltensor",
                "dltensor_from_py_object_no_sync against __dlpack__",
            ),
        ]:
            for layout in layouts:
                setup, _, _ = _array_setup(adapter, dtype, layout)
                cases.append(
                    Case(
                        f"producer/exchange-api/{prefix}{slug(layout.name)}",
                        "producer",
                        setup,
                        [f"reference.{check}(x, {export})"],
                        "export",
                        about,
                        layout.needs,
                        act=0,
                        ndims=layout.ndims,
                    )
                )
        setup, _, _ = _array_setup(adapter, dtype, plain)
        values = base_values("float32", (2, 3))
        for name, check, about in [
            ("table", "reference.check_exchange_table(x)", "the table's entries"),
            (
                "managed-tensor-allocator",
                "reference.check_exchange_allocator(x)",
                "managed_tensor_allocator of a 2x3 float32 CPU prototype",
            ),
            (
                "managed-tensor-allocator/kDLVPI",
                f"reference.check_exchange_allocator(x, device={ABSENT_DEVICE!r})",
                "managed_tensor_allocator on a device no library has: it fails through SetError",
            ),
            (
                "managed-tensor-to-py-object",
                f"reference.check_exchange_to_py(x, {values!r})",
                "managed_tensor_to_py_object_no_sync of a tensor the kit made",
            ),
            (
                "current-work-stream",
                "reference.check_exchange_stream(x)",
                "current_work_stream(kDLCPU, 0)",
            ),
        ]:
            cases.append(
                Case(f"producer/exchange-api/{name}", "producer", setup, [check], "ok", about, act=0)
            )
    return cases


def _exchange_input_cases(p):
    """The adapter's own inputs of the C exchange API."""
    adapter = p.adapter
    keywords = p.keywords
    cases = []
    export = f"lambda: {adapter.export('x', {'max_version': VERSION})}"
    if keywords and reference.EXCHANGE:
        for name, lines, values in adapter.exchange_inputs():
            cases.append(
                Case(
                    f"producer/exchange-api/{slug(name)}",
                    "producer",
                    lines,
                    [f"reference.check_exchange_api(x, {export}, expected={values!r})"],
                    "export",
                    f"__dlpack_c_exchange_api__ against __dlpack__: {name}",
                    act=0,
                )
            )
    return cases


# ---- consumer tensors -------------------------------------------------------


@dataclass
class Tensor:
    name: str
    keywords: dict  # Producer's keywords
    must_refuse: str = ""  # a requirement id refusing it meets
    write: bool = False  # try a write (read-only tensors)
    requests: bool = False  # check what the consumer asked
    held: bool = False  # may be refused, or held but never read as host memory
    refusal: object = "consumer-refused-valid"  # what refusing it means (reference.refused)


def _tensors(dtype):
    code = (*DTYPES[dtype], 1)
    v23 = base_values(dtype, (2, 3))
    v6 = base_values(dtype, (6,))
    tensors = [
        Tensor(
            "contiguous", {"shape": (2, 3), "values": v23}, requests=True, refusal="consumer-basic"
        ),
        Tensor(
            "transposed strides", {"shape": (3, 2), "strides": (1, 3), "values": transpose(v23)}
        ),
        Tensor(
            "negative strides with byte_offset",
            {"shape": (2, 3), "strides": (-3, 1), "byte_offset": 3 * _size(code), "values": v23},
        ),
        Tensor(
            "reversed both dimensions",
            {"shape": (2, 3), "strides": (-3, -1), "byte_offset": 5 * _size(code), "values": v23},
        ),
        Tensor("odd strides", {"shape": (2, 3), "strides": (7, 2), "values": v23}),
        Tensor("byte_offset", {"shape": (2, 3), "byte_offset": 4 * _size(code), "values": v23}),
        Tensor(
            "size-1 dimension with an odd stride",
            {"shape": (2, 1, 3), "strides": (3, 12345, 1), "values": [[r] for r in v23]},
        ),
        Tensor(
            "size-1 dimension with stride 0",
            {"shape": (1, 3), "strides": (0, 1), "values": v23[:1]},
        ),
        Tensor("broadcast: stride 0", {"shape": (3, 3), "strides": (0, 1), "values": [v23[0]] * 3}),
        Tensor(
            "0-d with NULL shape and strides",
            {
                "shape": None,
                "strides": None,
                "ndim": 0,
                "values": v6[0],
                "buffer_bytes": _size(code),
            },
        ),
        Tensor(
            "0-d with empty shape",
            {"shape": (), "strides": (), "values": v6[0], "buffer_bytes": _size(code)},
        ),
        Tensor("size-0 with NULL data", {"shape": (0, 3), "data": None}),
        Tensor(
            "size-0 with NULL data and a byte_offset",
            {"shape": (3, 0), "data": None, "byte_offset": 64},
        ),
        Tensor("1-d", {"shape": (6,), "values": v6}),
        Tensor("size-0", {"shape": (0, 3)}),
        # The traits DLPack allows that real producers' tensors lack
        # (reference.Producer has those of NumPy's by default), one a case:
        Tensor("manager_ctx NULL", {"shape": (2, 3), "values": v23, "manager_ctx": None}),
        Tensor("a capsule without destructor", {"shape": (2, 3), "values": v23, "destructor": False}),
        Tensor(
            "data aligned to the element size only",
            {"shape": (2, 3), "values": v23, "align": "element"},
        ),
        Tensor("data aligned to 64 bytes", {"shape": (2, 3), "values": v23, "align": 64}),
        Tensor("deleter NULL", {"shape": (2, 3), "values": v23, "deleter": False}),
        # Memory the CPU reads, of a device with streams: imported (the
        # values right, no stream 0 asked for) or refused with BufferError.
        Tensor(
            "on kDLCUDAHost memory",
            {"shape": (2, 3), "values": v23, "device": CUDA_HOST},
            requests=True,
            refusal="refuse-with-buffer-error",
        ),
        Tensor(
            "on kDLCUDAManaged memory",
            {"shape": (2, 3), "values": v23, "device": CUDA_MANAGED},
            requests=True,
            refusal="refuse-with-buffer-error",
        ),
    ]
    return tensors


def _size(dtype):
    return max(dtype[1] * dtype[2] // 8, 1)


def consumer_cases(adapter):
    cases = []
    dtype = adapter.layout_dtype
    code = (*DTYPES[dtype], 1)
    read = adapter.read()
    for versioned in (True, False):
        form = "versioned" if versioned else "legacy"
        malformed = versioned and not reference.NULLABLE.get("strides")
        null_strides = "NULL strides" + (" (DLPack 1.2 and later: malformed)" if malformed else "")
        tensors = [
            *_tensors(dtype),
            Tensor(
                null_strides,
                {"shape": (2, 3), "strides": None, "values": base_values(dtype, (2, 3))},
                refusal="ok" if malformed else "consumer-refused-valid",
            ),
        ]
        if versioned:
            tensors += [
                Tensor(
                    "read-only flag",
                    {
                        "shape": (2, 3),
                        "flags": reference.READ_ONLY,
                        "values": base_values(dtype, (2, 3)),
                    },
                    write=True,
                ),
                Tensor(
                    "is-copied flag",
                    {
                        "shape": (2, 3),
                        "flags": reference.IS_COPIED,
                        "values": base_values(dtype, (2, 3)),
                    },
                ),
                Tensor(
                    "a newer minor version",
                    {
                        "shape": (2, 3),
                        "version": (VERSION[0], 99),
                        "values": base_values(dtype, (2, 3)),
                    },
                ),
                Tensor(
                    "major version 2",
                    {"shape": (2, 3), "version": (2, 0), "data": 4096},
                    "consumer-major-version",
                ),
            ]
        else:
            tensors += [
                Tensor(
                    "a producer without keywords",
                    {"shape": (2, 3), "values": base_values(dtype, (2, 3)), "keywords": False},
                )
            ]
        tensors += [
            Tensor(
                "unknown dtype code 99",
                {"shape": (2, 3), "dtype": (99, 32, 1)},
                "consumer-unknown-dtype",
            ),
            Tensor(
                "vector lanes",
                {"shape": (2, 3), "dtype": (code[0], code[1], 4)},
                held=True,
            ),
            Tensor(
                "memory on a device the library lacks (kDLVPI)",
                {"shape": (2, 3), "device": ABSENT_DEVICE, "data": 4096},
                held=True,
            ),
            Tensor(
                "unknown device type 99",
                {"shape": (2, 3), "device": (99, 0), "data": 4096},
                held=True,
            ),
        ]
        for t in tensors:
            kw = dict(t.keywords, versioned=versioned)
            kw.setdefault("dtype", code)
            case = _consumer_case(adapter, f"consumer/{form}/{slug(t.name)}", kw, t, read)
            case.malformed = malformed and t.name == null_strides
            cases.append(case)
    for dt in dtypes_of(adapter):
        t = Tensor(
            dt,
            {"shape": (2, 3), "values": base_values(dt, (2, 3)), "dtype": (*DTYPES[dt], 1)},
            refusal="consumer-basic" if dt == dtype else "consumer-refused-valid",
        )
        for versioned in (True, False):
            form = "versioned" if versioned else "legacy"
            cases.append(
                _consumer_case(
                    adapter,
                    f"consumer/{form}/dtype/{dt}",
                    dict(t.keywords, versioned=versioned),
                    t,
                    read,
                )
            )
    for dt in dtypes_of(adapter):
        if not reference.subbyte((*DTYPES[dt], 1)) or not reference.SUBBYTE_PADDED:
            continue
        # The same values one a byte, the flag saying so (versioned only: a
        # legacy capsule has no flags).
        t = Tensor(
            f"{dt} padded",
            {
                "shape": (2, 3),
                "values": base_values(dt, (2, 3)),
                "dtype": (*DTYPES[dt], 1),
                "flags": reference.SUBBYTE_PADDED,
            },
        )
        cases.append(
            _consumer_case(
                adapter,
                f"consumer/versioned/dtype/{slug(t.name)}",
                dict(t.keywords, versioned=True),
                t,
                read,
            )
        )
    if adapter.from_dlpack("producer") == "xp.from_dlpack(producer)":
        cases.append(_raw_capsule_case(adapter, dtype, code, read))
    if getattr(adapter, "stream_keyword", False):
        cases += _stream_cases(adapter, code)
    cases += corpus_cases(adapter)
    return cases


def _raw_capsule_case(adapter, dtype, code, read):
    """from_dlpack handed a legacy capsule itself, not an object."""
    values = base_values(dtype, (2, 3))
    setup = [
        f"producer = reference.Producer(versioned=False, dtype={code!r}, shape=(2, 3), values={values!r})"
    ]
    body = [
        "y = xp.from_dlpack(producer.capsule)",
        *_operating(adapter),
        f"reference.check_values(producer, y, lambda y: {read}, {values!r})",
        "del y",
        "reference.check_released(producer)",
    ]
    return Case(
        "consumer/legacy/raw-capsule",
        "consumer",
        setup,
        body,
        "ok",
        "from_dlpack(capsule): a raw legacy capsule",
        ndims=frozenset({2}),
    )


def _stream_cases(adapter, code):
    """A from_dlpack that takes stream= passes the stream it was asked for
    to a producer on CUDA host memory (-1, no synchronisation, too). (Its
    values are the other kDLCUDAHost cases': read on another stream, an
    import may rightly refuse to hand them over.)"""
    values = base_values(adapter.layout_dtype, (2, 3))
    cases = []
    for stream in (5, -1):
        made = f"shape=(2, 3), dtype={code!r}, device={CUDA_HOST!r}, values={values!r}"
        setup = [f"producer = reference.Producer({made})"]
        body = [
            f"y = {adapter.from_dlpack('producer', stream)}",
            f"reference.check_stream_passed(producer, {stream!r})",
            "del y",
            "reference.check_released(producer)",
        ]
        cases.append(
            Case(
                f"consumer/versioned/stream={stream}-on-kdlcudahost",
                "consumer",
                setup,
                body,
                "refuse-with-buffer-error",
                f"from_dlpack(producer on {CUDA_HOST}, stream={stream}): the stream reaches __dlpack__",
                ndims=frozenset({2}),
            )
        )
    return cases


def _consumer_case(adapter, id, kw, t, read):
    case = _consumer_case_of(adapter, id, kw, t, read)
    case.ndims = _tensor_ndims(kw)
    return case


def _tensor_ndims(kw):
    shape, ndim = kw.get("shape"), kw.get("ndim")
    return frozenset({len(shape) if ndim is None and shape is not None else ndim or 0})


def importing(adapter, producer, dtype):
    """The adapter's import of producer, a tensor of dtype (code, bits,
    lanes); an adapter whose from_dlpack takes dtype= (a typed importer, one
    from_dlpack per dtype) is told the dtype's name (None for one the kit
    has no name for)."""
    if "dtype" not in inspect.signature(adapter.from_dlpack).parameters:
        return adapter.from_dlpack(producer)
    names = {(*code, 1): name for name, code in DTYPES.items()}
    return adapter.from_dlpack(producer, dtype=names.get(tuple(dtype)))


def _consumer_case_of(adapter, id, kw, t, read):
    values = kw.pop("values", None)
    keywords = kw.pop("keywords", True)
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    if values is not None:
        args += f", values={values!r}"
    if not keywords:
        args += ", keywords=False"
    setup = [f"producer = reference.Producer({args})"]
    body = [f"y = {importing(adapter, 'producer', kw['dtype'])}"]
    if t.must_refuse:
        body += [f"reference.accepted(producer, y, {t.must_refuse!r})"]
        return Case(id, "consumer", setup, body, "ok", t.name)
    if t.held:
        spec = (
            "consumer-unsupported-device"
            if kw.get("device", CPU) != CPU
            else "consumer-refusal-type"
        )
        body += [
            f"reference.check_held(producer, y, lambda y: {read})",
            "del y",
            "reference.check_released(producer)",
        ]
        return Case(id, "consumer", setup, body, ("raise", spec), t.name)
    if values is None:
        values = [[] for _ in range(kw["shape"][0])] if kw.get("shape") and kw["shape"][0] else []
    body += [*_operating(adapter), f"reference.check_values(producer, y, lambda y: {read}, {values!r})"]
    if t.write:
        stmt = adapter.write("y", (0,) * len(kw["shape"]), _other(values))
        if stmt:
            body += [
                "def write():",
                f"    {stmt}",
                f"reference.check_read_only(producer, write, {values!r})",
            ]
    if t.requests:
        body += ["reference.check_requests(producer)"]
    body += ["del y", "reference.check_released(producer)"]
    refusal = "consumer-legacy-producer" if not keywords else t.refusal
    return Case(id, "consumer", setup, body, refusal, t.name)


def _operating(adapter):
    """The line running the adapter's operation on the imported y, if any."""
    operation = adapter.operate("y")
    return [f"reference.check_usable(lambda: {operation})"] if operation else []


def _other(values):
    v = values
    while isinstance(v, list):
        v = v[0]
    if isinstance(v, bool):
        return not v
    return v + 1


def corpus_cases(adapter):
    """The corpus (corpus.py, shipped when it is written for this release):
    the tensors dlgen's own rules judge, handed to the library."""
    try:
        from .corpus import CORPUS as corpus
    except ImportError:
        return []
    if tuple(corpus["consumer"]) != VERSION:
        return []
    cases = []
    bits = reference.POINTER_BITS
    read = adapter.read()
    for c in corpus["cases"]:
        if c.get("pointer_bits", bits) != bits:
            continue
        t = {**corpus["defaults"], **c["tensor"]}
        kw = {
            "versioned": t["version"] is not None,
            "flags": t["flags"],
            "device": tuple(t["device"]),
            "dtype": tuple(t["dtype"]),
            "shape": None if t["shape"] is None else tuple(t["shape"]),
            "strides": None if t["strides"] is None else tuple(t["strides"]),
            "byte_offset": t["byte_offset"],
            "data": t["data"],
            "buffer_bytes": t["buffer_bytes"],
            "ndim": t["ndim"],
        }
        if kw["versioned"]:
            kw["version"] = tuple(t["version"])
        args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
        setup = [f"producer = reference.Producer({args})"]
        id = f"consumer/corpus/{slug(c['name'])}"
        if c["verdict"] == "refuse":
            spec = {
                "version_major": "consumer-major-version",
                "dtype_unknown": "consumer-unknown-dtype",
            }.get(c["rule"], "consumer-malformed")
            body = [
                f"y = {importing(adapter, 'producer', kw['dtype'])}",
                f"reference.accepted(producer, y, {spec!r})",
            ]
            cases.append(
                Case(
                    id,
                    "consumer",
                    setup,
                    body,
                    "ok",
                    f"{c['name']} (dlgen's rules: {c['rule']})",
                    ndims=_tensor_ndims(kw),
                    malformed=spec == "consumer-malformed",
                )
            )
            continue
        readable = (
            t["data"] == "buffer"
            and t["device"][0] in reference.HOST_READABLE
            and reference.decodable(tuple(t["dtype"]))
            and t["ndim"] <= 8
            and t["shape"] is not None
            and math.prod(t["shape"]) <= 4096
        )
        if readable:
            setup.append("expected = producer.fill()")
            body = [
                f"y = {importing(adapter, 'producer', kw['dtype'])}",
                *_operating(adapter),
                f"reference.check_values(producer, y, lambda y: {read}, expected)",
                "del y",
                "reference.check_released(producer)",
            ]
        else:
            body = [
                f"y = {importing(adapter, 'producer', kw['dtype'])}",
                "del y",
                "reference.check_released(producer)",
            ]
        case = Case(id, "consumer", setup, body, "ok", c["name"], ndims=_tensor_ndims(kw))
        if t["data"] != "buffer" and t["shape"] is not None and math.prod(t["shape"]) > 0:
            case.unbacked = (
                f"the tensor is valid, but its elements lie at addresses the kit has no memory at "
                f"(data {t['data']}, byte_offset {t['byte_offset']}): a consumer that reads them, "
                f"as one that copies does, dies there, so the kit cannot judge it"
            )
        cases.append(case)
    return cases


def all_cases(adapter):
    cases = producer_cases(adapter) + consumer_cases(adapter)
    out, seen = [], set()
    for c in cases:
        if c.id in seen:
            raise AssertionError(f"two cases are called {c.id}")
        seen.add(c.id)
        out.append(c)
    return out


def slug(text):
    """A case id's part: lower case, spaces as '-', only [a-z0-9-=.^_+]."""
    keep = set("abcdefghijklmnopqrstuvwxyz0123456789-=.^_+")
    return "".join(ch for ch in text.lower().replace(" ", "-").replace(":", "") if ch in keep)


def _v(mv):
    return "none" if mv is None else f"{mv[0]}.{mv[1]}"


def _kw(kw):
    return ", ".join(f"{k}={v!r}" for k, v in kw.items())
