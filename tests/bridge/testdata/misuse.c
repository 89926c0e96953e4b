/* Drives every function of the gobridge example with bad handles and bad
 * arguments: each must answer with a DLGEN_E* code, and the process must
 * survive to print its verdict. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlpack/dlpack.h>
#include "libdlgen.h"

static int failures;
#define EXPECT(call, want)                                                        \
  do {                                                                            \
    int got_ = (call);                                                            \
    if (got_ != (want)) {                                                         \
      fprintf(stderr, "%s:%d: %s returned %d, want %d\n", __FILE__, __LINE__, #call, \
              got_, (want));                                                      \
      failures++;                                                                 \
    }                                                                             \
  } while (0)

static int deleted;
static void count_delete(DLManagedTensorVersioned* self) { (void)self; deleted++; }

int main(void) {
  const uintptr_t bad[] = {0, 1u << 20, (uintptr_t)-1};
  DLManagedTensorVersioned* m = NULL;
  DLManagedTensor* legacy = NULL;
  void* p = NULL;
  uintptr_t h = 0, g = 0;
  char err[128];
  size_t i;

  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    EXPECT(dlgen_export(bad[i], &m), DLGEN_EHANDLE);
    EXPECT(dlgen_export_legacy(bad[i], &legacy), DLGEN_EHANDLE);
    EXPECT(dlgen_data(bad[i], &p), DLGEN_EHANDLE);
    EXPECT(dlgen_scale_f32(bad[i], 2.0f), DLGEN_EHANDLE);
    EXPECT(dlgen_close(bad[i]), DLGEN_EHANDLE);
  }
  if (m != NULL || legacy != NULL || p != NULL) {
    fprintf(stderr, "a failed call wrote its out pointer\n");
    failures++;
  }

  EXPECT(dlgen_arange_f32(-1, &h), DLGEN_EINVAL);
  EXPECT(dlgen_arange_f32((int64_t)1 << 62, &h), DLGEN_EINVAL);
  EXPECT(dlgen_arange_f32(4, NULL), DLGEN_EINVAL);
  EXPECT(dlgen_arange_f32(4, &h), DLGEN_OK);
  EXPECT(dlgen_export(h, NULL), DLGEN_EINVAL);
  EXPECT(dlgen_export_legacy(h, NULL), DLGEN_EINVAL);
  EXPECT(dlgen_data(h, NULL), DLGEN_EINVAL);

  /* A handle used after its close. */
  EXPECT(dlgen_close(h), DLGEN_OK);
  EXPECT(dlgen_close(h), DLGEN_EHANDLE);
  EXPECT(dlgen_export(h, &m), DLGEN_EHANDLE);
  EXPECT(dlgen_data(h, &p), DLGEN_EHANDLE);
  EXPECT(dlgen_scale_f32(h, 2.0f), DLGEN_EHANDLE);

  /* Imports: NULL, malformed (deleted once), and the same pointer twice. */
  EXPECT(dlgen_import(NULL, &g, err, sizeof err), DLGEN_EMALFORMED);
  EXPECT(dlgen_import_legacy(NULL, &g, NULL, 0), DLGEN_EMALFORMED);
  {
    DLManagedTensorVersioned t;
    int64_t shape = 4, stride = 1;
    float data[4] = {0, 1, 2, 3};
    memset(&t, 0, sizeof t);
    t.version.major = DLPACK_MAJOR_VERSION;
    t.version.minor = DLPACK_MINOR_VERSION;
    t.deleter = count_delete;
    t.dl_tensor.data = data;
    t.dl_tensor.device.device_type = kDLCPU;
    t.dl_tensor.ndim = 1;
    t.dl_tensor.dtype.code = kDLFloat;
    t.dl_tensor.dtype.bits = 32;
    t.dl_tensor.dtype.lanes = 1;
    t.dl_tensor.shape = &shape;
    t.dl_tensor.strides = &stride;

    EXPECT(dlgen_import(&t, &g, err, sizeof err), DLGEN_OK);
    EXPECT(dlgen_import(&t, &h, err, sizeof err), DLGEN_EIMPORTED);
    EXPECT(deleted, 0);
    EXPECT(dlgen_close(g), DLGEN_OK);
    EXPECT(deleted, 1);

    EXPECT(dlgen_import(&t, NULL, err, sizeof err), DLGEN_EINVAL); /* imported, then given back */
    EXPECT(deleted, 2);

    t.dl_tensor.data = NULL;
    EXPECT(dlgen_import(&t, &g, err, sizeof err), DLGEN_EMALFORMED);
    EXPECT(deleted, 3);
    t.deleter = NULL; /* an err_len no buffer has: only the message's bytes are written */
    EXPECT(dlgen_import(&t, &g, err, (size_t)-1), DLGEN_EMALFORMED);
    EXPECT(err[0] != 0, 1);
    t.deleter = count_delete;
    t.dl_tensor.data = data;

    t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    EXPECT(dlgen_import(&t, &g, err, sizeof err), DLGEN_OK);
    EXPECT(dlgen_scale_f32(g, 2.0f), DLGEN_EREFUSED);
    EXPECT(dlgen_export_legacy(g, &legacy), DLGEN_EREFUSED);
    EXPECT(dlgen_close(g), DLGEN_OK);
    EXPECT(deleted, 4);
    EXPECT(data[3] == 3.0f, 1);
  }

  EXPECT((int)dlgen_live_tensors(), 0);
  EXPECT((int)dlgen_live_exports(), 0);
  if (failures) {
    fprintf(stderr, "%d misuse checks failed\n", failures);
    return 1;
  }
  printf("bridge misuse: every call answered with an error code\n");
  return 0;
}
