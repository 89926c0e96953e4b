/* C side of the runtime: deleters that call back into Go, and calls of
 * foreign deleters, which Go cannot call through a function pointer. */
#ifndef DLGEN_RUNTIME_TRAMPOLINE_H_
#define DLGEN_RUNTIME_TRAMPOLINE_H_
#include <stdint.h>
#include <dlpack/dlpack.h>

/* An exported tensor: the managed struct, then shape and strides, in one
 * malloc block that the deleter frees. */
DLManagedTensorVersioned* dlgen_alloc_versioned(int32_t ndim, uintptr_t id);
DLManagedTensor* dlgen_alloc_legacy(int32_t ndim, uintptr_t id);
int64_t* dlgen_dims_versioned(DLManagedTensorVersioned* m);
int64_t* dlgen_dims_legacy(DLManagedTensor* m);

void dlgen_call_versioned_deleter(DLManagedTensorVersioned* m);
void dlgen_call_legacy_deleter(DLManagedTensor* m);

/* Whether m->deleter is dlgen's own, i.e. the tensor came from this runtime. */
int dlgen_is_own_versioned(DLManagedTensorVersioned* m);
#endif
