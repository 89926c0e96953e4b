#include <stdlib.h>
#include "trampoline.h"

/* Implemented in Go (export.go): 1 if self is a live export, now released;
 * 0 if it is not (deleted already), in which case nothing is freed. */
extern int dlgenExportReleased(void* self);

static void versioned_deleter(DLManagedTensorVersioned* self) {
  if (dlgenExportReleased(self)) free(self);
}

static void legacy_deleter(DLManagedTensor* self) {
  if (dlgenExportReleased(self)) free(self);
}

DLManagedTensorVersioned* dlgen_alloc_versioned(int32_t ndim) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof(*m) + 2 * (size_t)ndim * sizeof(int64_t));
  if (m == NULL) return NULL;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->deleter = versioned_deleter;
  return m;
}

DLManagedTensor* dlgen_alloc_legacy(int32_t ndim) {
  DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof(*m) + 2 * (size_t)ndim * sizeof(int64_t));
  if (m == NULL) return NULL;
  m->deleter = legacy_deleter;
  return m;
}

void dlgen_call_versioned_deleter(DLManagedTensorVersioned* m) {
  if (m->deleter != NULL) m->deleter(m);
}

void dlgen_call_legacy_deleter(DLManagedTensor* m) {
  if (m->deleter != NULL) m->deleter(m);
}
