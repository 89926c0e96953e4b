// dlpack_nanobind: a small nanobind extension for dlgen's conformance matrix
// (conformance/matrix.py builds it, conformance/tests/test_conformance_kit.py
// runs the kit against it). Everything DLPack here is nanobind's own:
// nb::ndarray's type caster imports any object with __dlpack__ (or a
// capsule), and an nb::ndarray<nb::array_api> returned to Python is
// nanobind's ndarray object, whose __dlpack__ and __dlpack_device__ export
// it. The module copies nothing: what it returns views what it was given,
// through nanobind's importer and then its exporter.
//
// The matrix script builds it with g++ against nanobind from pip, no CMake:
// this file and nanobind's single-file source (nanobind.source_dir()'s
// nb_combined.cpp) with nanobind.include_dir() and ext/robin_map/include
// beside it on the include path, -std=c++17 -shared -fPIC. It builds against
// every nanobind from 0.0.3, the first with DLPack (older releases tried:
// docs/conformance-kit.md); before 2.10 what it returns is a bare capsule.

#include <nanobind/nanobind.h>

#define NB_AT_LEAST(major, minor) \
    (NB_VERSION_MAJOR > (major) || (NB_VERSION_MAJOR == (major) && NB_VERSION_MINOR >= (minor)))
#if NB_AT_LEAST(0, 2)
#include <nanobind/ndarray.h>
#else
// nanobind before 0.2 names its ndarray nb::tensor (the same fields and
// constructor).
#include <nanobind/tensor.h>
namespace nanobind {
template <typename... Args>
using ndarray = tensor<Args...>;
}  // namespace nanobind
#endif

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

// A view of `a` as a new nanobind ndarray, owned by a capsule that keeps the
// imported one alive (its deleter runs when the last view is gone). Built
// from the fields, not from `a` itself: an ndarray that still knows the
// Python object it came from is returned as that object, and nanobind's own
// export would never run.
template <typename Out, typename In>
Out view(const In &a) {
    auto *kept = new In(a);
    nb::capsule owner(kept, [](void *p) noexcept { delete static_cast<In *>(p); });
    std::vector<size_t> shape(a.ndim());
    std::vector<int64_t> strides(a.ndim());
    for (size_t i = 0; i < a.ndim(); ++i) {
        shape[i] = a.shape(i);
        strides[i] = a.stride(i);
    }
#if NB_VERSION_MAJOR >= 3
    return Out(a.data_handle(), a.ndim(), shape.data(), owner, strides.data(), a.dtype(),
               a.device_type(), a.device_id(), 0, a.byte_offset());
#else
    // nanobind before 3 keeps no byte_offset of its own: data() is the
    // address with the imported byte_offset added, exported with byte_offset 0.
    return Out(const_cast<void *>(static_cast<const void *>(a.data())), a.ndim(), shape.data(), owner,
               strides.data(), a.dtype(), a.device_type(), a.device_id());
#endif
}

// What the module returns: nanobind's own ndarray object (nb::array_api,
// from nanobind 2.10.1); before it, nanobind's only export of its own is a
// bare "dltensor" capsule (an nb::ndarray without a framework).
#if NB_AT_LEAST(2, 10)
using Exported = nb::ndarray<nb::array_api>;
using ExportedReadOnly = nb::ndarray<nb::array_api, nb::ro>;
#elif NB_AT_LEAST(1, 5)
using Exported = nb::ndarray<>;
using ExportedReadOnly = nb::ndarray<nb::ro>;
#else
using Exported = nb::ndarray<>;
#endif

// Writable memory: exported again as writable.
Exported adopt(nb::ndarray<> a) {
    return view<Exported>(a);
}

#if NB_AT_LEAST(1, 5)
// Read-only memory (a read-only NumPy array, a READ_ONLY tensor): the
// second overload, which nanobind tries when the first refuses; exported
// again as read-only. nanobind before 1.5 has no nb::ro (and its DLPack
// import, legacy capsules only, carries no read-only flag).
ExportedReadOnly adopt_read_only(nb::ndarray<nb::ro> a) {
    return view<ExportedReadOnly>(a);
}
#endif

}  // namespace

NB_MODULE(dlpack_nanobind, m) {
    m.attr("__doc__") = "nanobind's nb::ndarray imports a DLPack tensor and exports it again";
    // The version of the code under test, nanobind's (what the kit reports).
    std::string version = std::to_string(NB_VERSION_MAJOR) + "." + std::to_string(NB_VERSION_MINOR) + "." +
                          std::to_string(NB_VERSION_PATCH);
    m.attr("__version__") = nb::str(version.c_str());
    m.def("from_dlpack", &adopt, nb::arg("x"),
          "Imports x (an object with __dlpack__, or a DLPack capsule) as nanobind's ndarray, a view.");
#if NB_AT_LEAST(1, 5)
    m.def("from_dlpack", &adopt_read_only, nb::arg("x"));
#endif
}
