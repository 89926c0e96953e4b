#include "fill.h"

#include <stdlib.h>

static int64_t live;

float* fill_alloc(int64_t n) {
  float* p = (float*)calloc(n > 0 ? (size_t)n : 1, sizeof(float));
  if (p != NULL) {
    __atomic_add_fetch(&live, 1, __ATOMIC_SEQ_CST);
  }
  return p;
}

void fill_free(void* p) {
  if (p != NULL) {
    __atomic_sub_fetch(&live, 1, __ATOMIC_SEQ_CST);
    free(p);
  }
}

void fill_ramp(float* out, int64_t n, float start, float step) {
  for (int64_t i = 0; i < n; i++) {
    out[i] = start + (float)i * step;
  }
}

double fill_sum(const float* in, int64_t n, int64_t stride) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) {
    s += in[i * stride];
  }
  return s;
}

int64_t fill_live(void) { return __atomic_load_n(&live, __ATOMIC_SEQ_CST); }
