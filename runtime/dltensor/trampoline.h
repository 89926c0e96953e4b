/* C side of the runtime: deleters that call back into Go, and calls of
 * foreign deleters, which Go cannot call through a function pointer. */
#ifndef DLGEN_DLTENSOR_TRAMPOLINE_H_
#define DLGEN_DLTENSOR_TRAMPOLINE_H_
#include <stdint.h>
#include <dlpack/dlpack.h>

/* An exported tensor: the managed struct, then shape and strides, in one
 * calloc block that the deleter frees after Go has released the export. */
DLManagedTensorVersioned* dlgen_alloc_versioned(int32_t ndim);
DLManagedTensor* dlgen_alloc_legacy(int32_t ndim);

void dlgen_call_versioned_deleter(DLManagedTensorVersioned* m);
void dlgen_call_legacy_deleter(DLManagedTensor* m);
#endif
