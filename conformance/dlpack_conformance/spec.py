"""What the kit holds libraries to, and where each requirement is written.

Each requirement has an id (the `spec` of a result), the document and place
that states it, what it asks in a sentence, and its strength:
  - "must": the text requires it; breaking it is a failure;
  - "should": the text recommends it, or only implies it; breaking it is
    reported as a warning, never a failure.
The ids in POLICY are the kit's own policy, not a text's words; reports say
so.
The sentences are the kit's summaries; the places are where to read the
words themselves."""


class Violation(Exception):
    """A requirement a library broke: spec is an id of REQUIREMENTS."""

    def __init__(self, spec, message):
        super().__init__(message)
        self.spec = spec


class Skip(Exception):
    """A check that does not apply to the library (it lacks the feature)."""


class Refused(Exception):
    """The library refused, as it may: the case passes, with these words."""


ARRAY_API = "Python array API standard 2024.12"
ARRAY_API_DLPACK = ARRAY_API + ", array.__dlpack__"
PYTHON_SPEC = "DLPack Python specification (dmlc/dlpack docs/source/python_spec.rst)"
HEADER = "DLPack C header (dlpack.h)"
PROTOCOL_RFC = (
    "the dtype and device exchange protocol, an RFC (data-apis/array-api#972, dmlc/dlpack#172; "
    "Paddle and tvm-ffi ship it)"
)

# id: (strength, source, what it asks)
REQUIREMENTS = {
    "capsule-name": (
        "must",
        PYTHON_SPEC + ", Implementation",
        (
            "__dlpack__ returns a PyCapsule named 'dltensor' (legacy) or 'dltensor_versioned' holding a "
            "non-NULL managed tensor."
        ),
    ),
    "legacy-when-no-max-version": (
        "should",
        ARRAY_API_DLPACK + ", max_version and Notes",
        (
            "without max_version the consumer only reads DLPack 0.x: the producer returns a "
            "legacy 'dltensor' capsule (or raises BufferError)."
        ),
    ),
    "legacy-for-old-consumer": (
        "should",
        ARRAY_API_DLPACK + ", Notes (the producer's recommended logic)",
        (
            "for a max_version whose major version is below the producer's, return a legacy "
            "capsule if the producer still can, else raise BufferError."
        ),
    ),
    "major-version": (
        "must",
        HEADER + ", DLPackVersion",
        (
            "a consumer may not read past the version of a tensor whose major version differs from its "
            "own; a producer answers a consumer with a major version it can read."
        ),
    ),
    "max-version-accepted": (
        "should",
        ARRAY_API_DLPACK + ", Notes (the producer's recommended logic)",
        (
            "a producer asked with a max_version at or above its own returns a capsule of its own "
            "version instead of raising."
        ),
    ),
    "device": (
        "must",
        ARRAY_API + ", array.__dlpack_device__ and array.__dlpack__ dl_device",
        "the capsule's device is what __dlpack_device__ returns, or the dl_device the consumer asked for.",
    ),
    "dlpack-device": (
        "should",
        PYTHON_SPEC + ", Syntax; " + ARRAY_API + ", array.__dlpack_device__",
        (
            "an array that speaks DLPack has __dlpack_device__, which returns (device_type, device_id). A "
            "library older than the method (a to_dlpack function of its own) is reported, not failed."
        ),
    ),
    "ndim": (
        "must",
        HEADER + ", DLTensor ndim",
        "ndim is a dimension count, in [0, 64] as every peer limits it.",
    ),
    "export-keywords": (
        "should",
        ARRAY_API_DLPACK + ", max_version, dl_device, copy and Notes",
        (
            "__dlpack__ takes the keywords the array API added in 2023.12 (max_version, dl_device, copy). "
            "A recommendation, not a must: the text tells consumers to retry without them on TypeError "
            "('except TypeError: x.__dlpack__(...)') because 'producers may implement the support at a "
            "different point in time'. A producer without one gets this one entry; the cases that pass it "
            "are skipped, naming it."
        ),
    ),
    "consumer-max-version": (
        "should",
        ARRAY_API_DLPACK + ", Notes (the consumer's recommended logic)",
        (
            "from_dlpack asks for a versioned capsule first ('x.__dlpack__(max_version=(1, 0), ...)', "
            "falling back to a legacy one on TypeError), so that it imports versioned tensors. A "
            "recommendation: a consumer that asks for legacy capsules only gets this one entry, and the "
            "versioned cases it cannot take are skipped."
        ),
    ),
    "consumer-usable": (
        "should",
        HEADER + ", DLTensor data",
        (
            "a tensor a consumer imports can be computed on (the adapter's operation, a sum, runs): the "
            "header says data 'is always aligned to 256 bytes' and then that libraries do not do so, and 'it "
            "is recommended to not rely on the data pointer being correctly aligned'. The kit's tensors are "
            "aligned as NumPy's small arrays are (16 bytes), one case's to 64. A consumer that dies there "
            "crashes."
        ),
    ),
    "export-basic": (
        "must",
        ARRAY_API_DLPACK,
        (
            "__dlpack__ exports the library's plain arrays: a contiguous array of its default dtype, "
            "for a consumer of the release (max_version 1.0 or the release)."
        ),
    ),
    "export-refused": (
        "should",
        ARRAY_API_DLPACK + ", Raises",
        (
            "__dlpack__ exports every array DLPack can describe (any strides, offsets, size-0 and size-1 "
            "dimensions, 0-d); BufferError is for what it cannot."
        ),
    ),
    "consumer-basic": (
        "must",
        ARRAY_API + ", from_dlpack",
        "from_dlpack imports a contiguous CPU tensor of a dtype the library has.",
    ),
    "consumer-refused-valid": (
        "should",
        HEADER + ", DLTensor; " + ARRAY_API + ", from_dlpack",
        (
            "from_dlpack imports every layout DLPack allows (negative, zero and odd strides, byte offsets, "
            "size-1 and size-0 dimensions, 0-d), or refuses it with BufferError."
        ),
    ),
    "dtype": (
        "must",
        HEADER + ", DLDataType",
        "the capsule's (code, bits, lanes) is the array's element type.",
    ),
    "shape": ("must", HEADER + ", DLTensor ndim and shape", "ndim and shape are the array's."),
    "strides-null": (
        "must",
        HEADER + ", DLTensor strides (DLPack 1.2 and later)",
        "strides is NULL only when ndim is 0; before DLPack 1.2 NULL meant row-major.",
    ),
    "elements": (
        "must",
        HEADER + ", DLTensor data, byte_offset and strides",
        (
            "element i is at data + byte_offset + sum(i[k] * strides[k]) * itemsize, strides counted in "
            "elements, and holds the array's value."
        ),
    ),
    "subbyte-padded": (
        "must",
        HEADER + ", DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
        (
            "sub-byte elements (float4, float6) are packed, DLPack's default, unless the flags say "
            "IS_SUBBYTE_TYPE_PADDED (one element a byte): a producer that stores them one a byte sets "
            "the flag (a legacy capsule, which has no flags, cannot carry them), and a consumer reads "
            "them as the flag says, or refuses the tensor."
        ),
    ),
    "subbyte-order": (
        "should",
        HEADER + ", DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED and DLDataType",
        (
            "packed sub-byte elements fill each byte from its low bits (element 0 in bits 0-3 of a "
            "float4 byte), as JAX packs them. The header says packed, not in which order: the kit "
            "warns, saying so, when only the order differs."
        ),
    ),
    "data-null": (
        "must",
        HEADER + ", DLTensor data",
        "a tensor with elements has a non-NULL data pointer.",
    ),
    "read-only-flag": (
        "should",
        HEADER + ", DLPACK_FLAG_BITMASK_READ_ONLY; " + ARRAY_API_DLPACK + ", Notes",
        "a read-only array is exported with the READ_ONLY flag, so that no consumer writes to it.",
    ),
    "read-only-legacy": (
        "should",
        ARRAY_API_DLPACK + ", Notes (read-only arrays)",
        (
            "a legacy capsule cannot say read-only: exporting a read-only array in one lets a consumer "
            "write to it. The spec says nothing here; NumPy raises BufferError."
        ),
    ),
    "is-copied-flag": (
        "must",
        ARRAY_API_DLPACK + ", copy; " + PYTHON_SPEC + ", Semantics",
        "when the producer copies (copy=True always does), the capsule carries IS_COPIED.",
    ),
    "copy-false": (
        "must",
        ARRAY_API_DLPACK + ", copy",
        "copy=False never copies: the capsule does not say IS_COPIED, or BufferError is raised.",
    ),
    "copied-when-not": (
        "must",
        HEADER + ", DLPACK_FLAG_BITMASK_IS_COPIED",
        (
            "IS_COPIED says the tensor is a copy the consumer owns alone: a capsule over the array's own "
            "memory does not carry it."
        ),
    ),
    "dl-device-cpu": (
        "should",
        ARRAY_API_DLPACK + ", dl_device",
        (
            "a library offers a way to export an array to the CPU, (kDLCPU, 0): a CPU array exports "
            "with dl_device=(kDLCPU, 0), with or without copy."
        ),
    ),
    "dl-device-unsupported": (
        "must",
        ARRAY_API_DLPACK + ", dl_device",
        "a dl_device the producer cannot handle raises BufferError.",
    ),
    "copy-needed": (
        "must",
        ARRAY_API_DLPACK + ", copy",
        "copy=False when a copy is needed (another device) raises BufferError.",
    ),
    "stream-cpu": (
        "should",
        ARRAY_API_DLPACK + ", stream",
        "on the CPU and other devices without streams only stream=None is accepted.",
    ),
    "deleter-unconsumed": (
        "must",
        PYTHON_SPEC + ", Implementation",
        "the capsule's destructor calls the deleter of an unconsumed capsule, exactly once.",
    ),
    "deleter-field-unused": (
        "should",
        PYTHON_SPEC + ", Implementation",
        (
            "the capsule's destructor calls the deleter the managed tensor names. One that frees "
            "the tensor by calling its own function directly frees it all the same, which the kit "
            "cannot see: the specification's example calls managed->deleter."
        ),
    ),
    "deleter-consumed": (
        "must",
        PYTHON_SPEC + ", Implementation",
        (
            "the capsule's destructor does not call the deleter once the capsule is renamed "
            "'used_dltensor[_versioned]': the consumer calls it, exactly once."
        ),
    ),
    "consumer-values": (
        "must",
        HEADER + ", DLTensor data, byte_offset and strides",
        (
            "an imported array holds the values at data + byte_offset + strides, for every layout the "
            "release allows (negative, zero and odd strides; size-1 and size-0 dimensions; 0-d)."
        ),
    ),
    "consumer-deleter-once": (
        "must",
        HEADER + ", DLManagedTensor(Versioned) deleter; " + PYTHON_SPEC,
        (
            "a consumer that took the tensor (renamed the capsule) calls the deleter exactly once, "
            "when it no longer needs the tensor; one that leaves the capsule owning the tensor (its "
            "name and destructor as they were) does not call it, as the capsule's destructor will."
        ),
    ),
    "consumer-deleter-early": (
        "must",
        HEADER + ", DLManagedTensor(Versioned) deleter",
        (
            "the producer's memory stays valid until the deleter runs: a consumer whose array "
            "views that memory calls the deleter only after the array is gone."
        ),
    ),
    "consumer-major-version": (
        "must",
        HEADER + ", DLPackVersion",
        (
            "a tensor whose major version differs from the consumer's is not read: the consumer "
            "calls its deleter and refuses it."
        ),
    ),
    "consumer-unknown-dtype": (
        "should",
        HEADER + ", DLPackVersion (minor versions)",
        (
            "a consumer uses a tensor only if it understands every field: an unknown type code "
            "is refused, not reinterpreted. A consumer that only holds the tensor (a container) "
            "may keep it; the text does not say."
        ),
    ),
    "consumer-unsupported-device": (
        "should",
        PYTHON_SPEC + ", Semantics",
        ("a tensor on a device the consumer does not support is refused with BufferError."),
    ),
    "consumer-refusal-type": (
        "should",
        ARRAY_API + ", from_dlpack (Raises); " + PYTHON_SPEC + ", Semantics",
        (
            "a consumer refuses a tensor it cannot import (a dtype or layout it lacks) with BufferError, as "
            "the array API's from_dlpack and __dlpack__ name it."
        ),
    ),
    "consumer-malformed": (
        "should",
        "dlgen's import rules (docs/rules.md of dlgen)",
        (
            "a tensor the rules refuse (negative extents, NULL shape, sizes past the address space, "
            "...) is refused. DLPack does not say what a consumer does with a malformed tensor."
        ),
    ),
    "consumer-read-only": (
        "should",
        ARRAY_API_DLPACK + ", Notes (read-only arrays)",
        (
            "a consumer honours READ_ONLY or copies. The array API prefers ignoring the flag to raising, "
            "leaving the user responsible: the kit warns because such a write changes the producer's "
            "read-only memory."
        ),
    ),
    "consumer-legacy-producer": (
        "should",
        ARRAY_API_DLPACK + ", Notes (the consumer's recommended logic)",
        (
            "a consumer retries __dlpack__ without max_version, dl_device and copy when the "
            "producer raises TypeError on them."
        ),
    ),
    "consumer-stream-cpu": (
        "should",
        ARRAY_API_DLPACK + ", stream",
        "a consumer passes stream=None to a producer on the CPU.",
    ),
    "consumer-stream-zero": (
        "should",
        ARRAY_API_DLPACK + ", stream",
        (
            "a consumer never passes stream=0 for CUDA, where 0 is disallowed as ambiguous. The text "
            "says so of CUDA; that CUDA's host and managed memory (kDLCUDAHost, kDLCUDAManaged) follow "
            "CUDA's rules it does not say: a warning."
        ),
    ),
    "consumer-stream-passed": (
        "should",
        ARRAY_API_DLPACK + ", stream",
        (
            "a consumer asked to import on a stream (a from_dlpack that takes one) passes that stream to "
            "__dlpack__(stream=...), which the producer orders its work on; the text says what the stream "
            "means, not in a 'must' that a consumer passes it on."
        ),
    ),
    "exchange-api-refusal": (
        "should",
        HEADER + ", DLPackExchangeAPI (the table answers for __dlpack__)",
        (
            "managed_tensor_from_py_object_no_sync and dltensor_from_py_object_no_sync refuse what "
            "__dlpack__ refuses and take what it takes; the header does not say so in words, but a "
            "consumer that takes the table is told it exchanges as __dlpack__ does."
        ),
    ),
    "exchange-api": (
        "must",
        HEADER + ", DLPackExchangeAPI",
        (
            "managed_tensor_from_py_object_no_sync exports the same tensor as __dlpack__ "
            "(same version, flags, dtype, device, shape, elements), holding the array's values."
        ),
    ),
    "exchange-api-table": (
        "must",
        HEADER + ", DLPackExchangeAPI",
        (
            "the table's managed_tensor_allocator, managed_tensor_from_py_object_no_sync, "
            "managed_tensor_to_py_object_no_sync and current_work_stream are never NULL; "
            "dltensor_from_py_object_no_sync may be."
        ),
    ),
    "exchange-api-allocator": (
        "must",
        HEADER + ", DLPackManagedTensorAllocator",
        (
            "managed_tensor_allocator returns 0 and a tensor like the prototype (its dtype, ndim, shape and "
            "device), or returns -1 after calling SetError; SetError is called exactly when the call fails."
        ),
    ),
    "exchange-api-allocate-cpu": (
        "should",
        HEADER + ", DLPackManagedTensorAllocator",
        (
            "a library whose arrays live on the CPU allocates a plain CPU tensor (2x3 float32). The header "
            "lets any call fail: a refusal is reported, not failed."
        ),
    ),
    "exchange-api-to-py-object": (
        "must",
        HEADER + ", DLPackManagedTensorToPyObjectNoSync",
        (
            "managed_tensor_to_py_object_no_sync wraps the tensor in an object of the producer's type, "
            "holding its values, and takes ownership of it: the deleter runs once, when the object is gone. "
            "It returns 0, or -1 with a Python exception set."
        ),
    ),
    "exchange-api-to-py-refused": (
        "should",
        HEADER + ", DLPackManagedTensorToPyObjectNoSync",
        (
            "managed_tensor_to_py_object_no_sync takes a plain CPU tensor (2x3 float32) of a library whose "
            "arrays live on the CPU. The header names no refusal, nor who owns a refused tensor: a refusal "
            "is reported, not failed."
        ),
    ),
    "exchange-api-dltensor": (
        "must",
        HEADER + ", DLPackDLTensorFromPyObjectNoSync",
        (
            "dltensor_from_py_object_no_sync, where the table has it, fills a DLTensor that views what "
            "__dlpack__ exports (device, dtype, shape, strides, first element, elements), and returns 0, "
            "or -1 with a Python exception set."
        ),
    ),
    "exchange-api-stream": (
        "must",
        HEADER + ", DLPackCurrentWorkStream",
        "current_work_stream returns 0, or -1 with a Python exception set.",
    ),
    "exchange-api-stream-cpu": (
        "should",
        HEADER + ", DLPackCurrentWorkStream",
        (
            "on kDLCPU current_work_stream reports NULL or a stream (a CPU-only framework may always "
            "report NULL). The header says a consumer need not ask there, not that the producer may "
            "fail: ambiguous, so a failure is a warning."
        ),
    ),
    "dtype-protocol": (
        "should",
        PROTOCOL_RFC,
        (
            "a dtype object that publishes __dlpack_data_type__() returns the tuple (code, bits, lanes) of "
            "the DLDataType its arrays' capsules carry. The protocol is an RFC, not yet in a standard: a "
            "library without it is skipped, a wrong answer warned."
        ),
    ),
    "device-protocol": (
        "should",
        PROTOCOL_RFC,
        (
            "a device object that publishes __dlpack_device__() returns the tuple (device_type, device_id) "
            "its arrays' capsules carry, as the arrays' own __dlpack_device__() does. The protocol is an "
            "RFC: a library without it is skipped, a wrong answer warned."
        ),
    ),
    "export-error-type": (
        "should",
        ARRAY_API_DLPACK + ", Raises",
        "__dlpack__ raises BufferError when it cannot export the data (dtype, strides, device).",
    ),
    "consumer-rename": (
        "should",
        PYTHON_SPEC + ", Implementation; " + ARRAY_API_DLPACK + ", Notes",
        (
            "a consumer takes the tensor over by renaming the capsule 'used_dltensor[_versioned]'. The "
            "Python specification's 'must' is on taking ownership ('The consumer must transfer ownership ... "
            "from the capsule to its own object'); renaming is how it says that is done ('It does so by "
            "renaming the capsule ... to ensure that PyCapsule_Destructor will not get called'), and the array "
            "API's words for it are in the consumer logic it recommends ('need to set the name to "
            "used_dltensor_versioned when we're done'): a recommendation, so a consumer that takes the tensor "
            "another way (clearing the capsule's destructor, which meets the rename's stated purpose with "
            "every producer that sets the destructor the specification requires) is warned, not failed. The "
            "warning is about real harm: the capsule still reads as unconsumed, so a second from_dlpack of it "
            "takes a freed tensor, and a producer that tells a consumed capsule by its name alone (one "
            "without a destructor that frees an unrenamed, unreferenced capsule's tensor itself) frees the "
            "tensor while this consumer still uses it."
        ),
    ),
    "crash": (
        "must",
        "the kit's policy (no DLPack text is about crashes)",
        (
            "a library answers every input with a result or an exception: it does not kill or hang the "
            "process that called it."
        ),
    ),
    "crash-malformed": (
        "must",
        "the kit's policy (no DLPack text says what a consumer does with a malformed tensor)",
        (
            "a library answers a malformed tensor with a result or an exception: it does not kill or hang "
            "the process. Reported on its own; --malformed-crashes report keeps these crashes from failing "
            "the run."
        ),
    ),
    "producer-exists": (
        "must",
        ARRAY_API_DLPACK + " and array.__dlpack_device__",
        (
            "a library's arrays export: they have __dlpack__ (and __dlpack_device__), which exports a plain "
            "array (one that refuses every plain array has the name, not the side). A library that only "
            "imports declares it in its adapter (sides = ('consumer',))."
        ),
    ),
    "consumer-exists": (
        "must",
        ARRAY_API + ", from_dlpack",
        (
            "a library imports DLPack tensors: it has from_dlpack, which imports a plain tensor (one that "
            "refuses every plain tensor has the name, not the side). A library that only exports declares "
            "it in its adapter (sides = ('producer',))."
        ),
    ),
    "xfail-stale": (
        "must",
        "the kit's policy (your xfail file)",
        "a case the xfail file names fails: one that passes is reported, so that the file shrinks.",
    ),
}

# The requirements that are the kit's own policy rather than words of a
# DLPack or array-API text: reports say so next to the strength.
POLICY = frozenset({"crash", "crash-malformed", "consumer-malformed", "subbyte-order", "xfail-stale"})


def basis(spec):
    """'must', 'should', or either followed by ", the kit's policy"."""
    strength = REQUIREMENTS[spec][0]
    return f"{strength}, the kit's policy" if spec in POLICY else strength
