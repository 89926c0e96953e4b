/* libfill: a small C library that allocates buffers and fills them, the
 * kind of code whose output a Python framework wants without a copy. */
#ifndef FILL_H
#define FILL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n float32 elements, zeroed; NULL when out of memory. Free with fill_free. */
float* fill_alloc(int64_t n);
void fill_free(void* p);
/* out[i] = start + i * step, for i in [0, n). */
void fill_ramp(float* out, int64_t n, float start, float step);
/* Sum of n elements spaced stride elements apart (reads what others wrote). */
double fill_sum(const float* in, int64_t n, int64_t stride);
/* How many buffers are allocated now (for tests). */
int64_t fill_live(void);

#ifdef __cplusplus
}
#endif

#endif
