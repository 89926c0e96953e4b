#include <stdlib.h>
#include "trampoline.h"

/* Implemented in Go (export.go). */
extern void dlgenExportReleased(uintptr_t id);

static void versioned_deleter(DLManagedTensorVersioned* self) {
  uintptr_t id = (uintptr_t)self->manager_ctx;
  free(self);
  dlgenExportReleased(id);
}

static void legacy_deleter(DLManagedTensor* self) {
  uintptr_t id = (uintptr_t)self->manager_ctx;
  free(self);
  dlgenExportReleased(id);
}

DLManagedTensorVersioned* dlgen_alloc_versioned(int32_t ndim, uintptr_t id) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof(*m) + 2 * (size_t)ndim * sizeof(int64_t));
  if (m == NULL) return NULL;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = (void*)id;
  m->deleter = versioned_deleter;
  return m;
}

DLManagedTensor* dlgen_alloc_legacy(int32_t ndim, uintptr_t id) {
  DLManagedTensor* m = (DLManagedTensor*)calloc(1, sizeof(*m) + 2 * (size_t)ndim * sizeof(int64_t));
  if (m == NULL) return NULL;
  m->manager_ctx = (void*)id;
  m->deleter = legacy_deleter;
  return m;
}

int64_t* dlgen_dims_versioned(DLManagedTensorVersioned* m) { return (int64_t*)(m + 1); }
int64_t* dlgen_dims_legacy(DLManagedTensor* m) { return (int64_t*)(m + 1); }

void dlgen_call_versioned_deleter(DLManagedTensorVersioned* m) {
  if (m->deleter != NULL) m->deleter(m);
}

void dlgen_call_legacy_deleter(DLManagedTensor* m) {
  if (m->deleter != NULL) m->deleter(m);
}

int dlgen_is_own_versioned(DLManagedTensorVersioned* m) { return m->deleter == versioned_deleter; }
