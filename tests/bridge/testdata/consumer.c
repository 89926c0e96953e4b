/* A C consumer and producer of Go tensors through libdlgen (the c-shared
 * bridge), written against dlgen's generated dlpack.h. Built with
 * -fsanitize=address,undefined and run under valgrind by bridge_test.go:
 * every path must end with no leak, no error and every deleter run once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <dlpack/dlpack.h>
#include "libdlgen.h"

static int failures;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

/* A C producer: malloc'd data and struct, a deleter that frees and counts. */
static int c_deleted;
static void c_deleter(DLManagedTensorVersioned* self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
  c_deleted++;
}

static DLManagedTensorVersioned* c_tensor(int64_t n, int32_t ndim) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)calloc(1, sizeof(*m));
  int64_t* dims = (int64_t*)calloc(2, sizeof(int64_t));
  float* data = (float*)calloc((size_t)n, sizeof(float));
  int64_t i;
  for (i = 0; i < n; i++) data[i] = (float)(2 * i);
  dims[0] = n;
  dims[1] = 1;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->deleter = c_deleter;
  m->dl_tensor.data = data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.ndim = ndim;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = dims;
  m->dl_tensor.strides = dims + 1;
  return m;
}

static void* data_of(uintptr_t h) {
  void* p = NULL;
  CHECK(dlgen_data(h, &p) == DLGEN_OK);
  return p;
}

static void* delete_in_thread(void* arg) {
  DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)arg;
  m->deleter(m);
  return NULL;
}

int main(void) {
  char err[256];
  int i;

  /* Go produces, C consumes: zero-copy both ways. */
  uintptr_t h = 0;
  DLManagedTensorVersioned* m = NULL;
  float* data;
  CHECK(dlgen_arange_f32(1000, &h) == DLGEN_OK);
  CHECK(dlgen_export(h, &m) == DLGEN_OK);
  CHECK(m != NULL);
  CHECK(m->version.major == DLPACK_MAJOR_VERSION);
  CHECK(m->dl_tensor.ndim == 1 && m->dl_tensor.shape[0] == 1000 && m->dl_tensor.strides[0] == 1);
  data = (float*)m->dl_tensor.data;
  CHECK(data[999] == 999.0f);
  data[3] = 42.0f; /* C writes, Go sees */
  CHECK(((float*)data_of(h))[3] == 42.0f);
  CHECK(dlgen_scale_f32(h, 2.0f) == 0); /* Go writes, C sees */
  CHECK(data[3] == 84.0f);

  /* Order 1: Go closes first; the memory lives until the deleter. */
  dlgen_close(h);
  dlgen_collect();
  CHECK(data[999] == 1998.0f);
  CHECK(dlgen_live_exports() == 1);
  m->deleter(m);
  CHECK(dlgen_live_exports() == 0);
  CHECK(dlgen_live_tensors() == 0);

  /* Order 2: the consumer deletes first, from another thread. */
  CHECK(dlgen_arange_f32(10, &h) == DLGEN_OK);
  CHECK(dlgen_export(h, &m) == DLGEN_OK);
  {
    pthread_t th;
    pthread_create(&th, NULL, delete_in_thread, m);
    pthread_join(th, NULL);
  }
  CHECK(dlgen_live_exports() == 0);
  CHECK(((float*)data_of(h))[9] == 9.0f);
  dlgen_close(h);
  CHECK(dlgen_live_tensors() == 0);

  /* Legacy export. */
  CHECK(dlgen_arange_f32(4, &h) == DLGEN_OK);
  {
    DLManagedTensor* legacy = NULL;
    CHECK(dlgen_export_legacy(h, &legacy) == DLGEN_OK);
    CHECK(legacy != NULL && ((float*)legacy->dl_tensor.data)[2] == 2.0f);
    legacy->deleter(legacy);
  }
  dlgen_close(h);

  /* C produces, Go consumes: the deleter runs once, on close. */
  {
    DLManagedTensorVersioned* mine = c_tensor(16, 1);
    float* cdata = (float*)mine->dl_tensor.data;
    uintptr_t g = 0;
    CHECK(dlgen_import(mine, &g, err, sizeof err) == DLGEN_OK);
    CHECK(g != 0);
    CHECK(data_of(g) == (void*)cdata);
    CHECK(dlgen_scale_f32(g, 0.5f) == 0);
    CHECK(cdata[4] == 4.0f);
    /* Re-export of the import: C's deleter waits for both. */
    CHECK(dlgen_export(g, &m) == DLGEN_OK);
    dlgen_close(g);
    CHECK(c_deleted == 0);
    m->deleter(m);
    CHECK(c_deleted == 1);
  }

  /* A malformed tensor is refused and still deleted exactly once. */
  {
    DLManagedTensorVersioned* bad = c_tensor(4, 1);
    bad->dl_tensor.shape[0] = -4;
    uintptr_t g = 0;
    CHECK(dlgen_import(bad, &g, err, sizeof err) == DLGEN_EMALFORMED);
    CHECK(g == 0);
    CHECK(strstr(err, "negative extent") != NULL);
    CHECK(c_deleted == 2);
    bad = c_tensor(4, 1);
    bad->version.major = 9;
    CHECK(dlgen_import(bad, &g, err, sizeof err) == DLGEN_EMALFORMED);
    CHECK(c_deleted == 3);
  }

  /* Many exchanges: nothing accumulates. */
  for (i = 0; i < 10000; i++) {
    uintptr_t t = 0, back = 0;
    DLManagedTensorVersioned* e = NULL;
    CHECK(dlgen_arange_f32(8, &t) == DLGEN_OK);
    CHECK(dlgen_export(t, &e) == DLGEN_OK);
    CHECK(dlgen_import(e, &back, err, sizeof err) == DLGEN_OK);
    dlgen_close(t);
    dlgen_close(back);
  }
  dlgen_collect();
  CHECK(dlgen_live_exports() == 0);
  CHECK(dlgen_live_tensors() == 0);
  CHECK(dlgen_leaked_imports() == 0);

#ifdef DLGEN_LEAK_ONE
  /* For the test of the test: an export nobody deletes must be reported. */
  CHECK(dlgen_arange_f32(4, &h) == DLGEN_OK);
  CHECK(dlgen_export(h, &m) == DLGEN_OK);
  m = NULL;
  dlgen_close(h);
#endif

  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("bridge consumer: all checks passed\n");
  return 0;
}
