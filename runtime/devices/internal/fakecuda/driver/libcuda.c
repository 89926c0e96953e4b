/*
 * A fake CUDA driver (libcuda.so.1) for dlgen's tests: the few driver API
 * calls the copy engine's CUDA backend makes, over host memory, each one
 * recorded in a log the tests read. It proves the backend's logic (which
 * calls, with which pitches, extents and streams, in which order), not any
 * hardware.
 *
 * Streams are modelled: a copy or memset is queued on its stream and runs
 * only when something waits for it (cuStreamSynchronize, cuCtxSynchronize,
 * cuMemFree, a stream waiting for an event recorded after it), so a
 * backend that reads device memory without waiting reads stale bytes.
 * Each device has its primary context, a current-context stack per
 * thread, a memory limit, and allocations named d<device>:<n> in the log.
 *
 * Control (for the tests, through dlsym): fakecuda_fail makes a call fail,
 * fakecuda_log takes the log, fakecuda_set_devices sets the device count,
 * fakecuda_hold_sync makes the next cuStreamSynchronize wait, before it
 * does anything, until fakecuda_release_sync (fakecuda_held_sync: one waits).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h" /* internal/cudaabi/cuda.h, beside this file when built */

enum {
	OK = 0,
	INVALID_VALUE = 1,
	OUT_OF_MEMORY = 2,
	NOT_INITIALIZED = 3,
	NO_DEVICE = 100,
	INVALID_DEVICE = 101,
	INVALID_CONTEXT = 201,
	INVALID_HANDLE = 400,
	NOT_FOUND = 500
};
enum { HOST = 1, DEVICE = 2 };
enum { MAX_DEVICES = 8, MAX_DEPTH = 16 };
#define MEMORY_LIMIT ((size_t)1 << 30) /* per device */
#define MAX_PITCH ((size_t)1 << 21)    /* small, so that tests reach it */

struct CUctx_st {
	int dev;
	int retained;
};

enum { OP_COPY, OP_SET, OP_WAIT };
struct op {
	int kind;
	unsigned char *dst;
	const unsigned char *src;
	size_t width, height, depth, dpitch, dslice, spitch, sslice;
	struct CUstream_st *waits; /* OP_WAIT: for this stream's ops up to */
	size_t upto;
};

struct CUstream_st {
	char name[24];
	int dev;
	struct op *ops;
	size_t len, cap, done;
	struct CUstream_st *next;
};

struct CUevent_st {
	int id;
	struct CUstream_st *stream; /* of the last record; NULL before */
	size_t upto;
};

struct alloc {
	unsigned char *base;
	size_t size;
	int dev, id;
	struct alloc *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized, device_count = 2, next_alloc = 1, next_stream = 1, next_event = 1;
static size_t used[MAX_DEVICES];
static struct CUctx_st contexts[MAX_DEVICES];
static struct CUstream_st legacy[MAX_DEVICES], per_thread[MAX_DEVICES];
static struct CUstream_st *streams;
static struct alloc *allocs;
static char *log_text;
static size_t log_len, log_cap;
static struct {
	char call[64];
	CUresult result;
	int skip, times;
} failure;
static pthread_key_t stack_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

struct ctx_stack {
	int depth;
	CUcontext ctx[MAX_DEPTH];
};

static void logf_(const char *format, ...) {
	char line[512];
	va_list args;
	int n;
	va_start(args, format);
	n = vsnprintf(line, sizeof line - 1, format, args);
	va_end(args);
	if (n < 0) {
		return;
	}
	if ((size_t)n > sizeof line - 2) {
		n = (int)(sizeof line - 2);
	}
	line[n++] = '\n';
	if (log_len + (size_t)n + 1 > log_cap) {
		size_t cap = (log_cap + (size_t)n + 1) * 2;
		char *grown = (char *)realloc(log_text, cap);
		if (grown == NULL) {
			return;
		}
		log_text = grown;
		log_cap = cap;
	}
	memcpy(log_text + log_len, line, (size_t)n);
	log_len += (size_t)n;
	log_text[log_len] = '\0';
}

/* failing reports whether call must fail now, and with what. */
static CUresult failing(const char *call) {
	if (failure.times == 0 || strcmp(failure.call, call) != 0) {
		return OK;
	}
	if (failure.skip > 0) {
		failure.skip--;
		return OK;
	}
	if (failure.times > 0) {
		failure.times--;
	}
	return failure.result;
}

static void make_key(void) { pthread_key_create(&stack_key, free); }

static struct ctx_stack *stack(void) {
	struct ctx_stack *s;
	pthread_once(&key_once, make_key);
	s = (struct ctx_stack *)pthread_getspecific(stack_key);
	if (s == NULL) {
		s = (struct ctx_stack *)calloc(1, sizeof *s);
		pthread_setspecific(stack_key, s);
	}
	return s;
}

static CUcontext current(void) {
	struct ctx_stack *s = stack();
	return s != NULL && s->depth > 0 ? s->ctx[s->depth - 1] : NULL;
}

static struct alloc *find(const void *p) {
	struct alloc *a;
	for (a = allocs; a != NULL; a = a->next) {
		if ((const unsigned char *)p >= a->base && (const unsigned char *)p < a->base + a->size) {
			return a;
		}
	}
	return NULL;
}

/* where names a pointer for the log: d<dev>:<alloc>+<offset>, or host. */
static const char *where(const void *p, char *buf, size_t n) {
	struct alloc *a = find(p);
	if (a == NULL) {
		snprintf(buf, n, "host");
	} else {
		snprintf(buf, n, "d%d:%d+%lu", a->dev, a->id, (unsigned long)((const unsigned char *)p - a->base));
	}
	return buf;
}

static void run(struct op *o);

/* flush runs the stream's ops up to (not including) upto. */
static void flush(struct CUstream_st *s, size_t upto) {
	while (s->done < upto) {
		struct op o = s->ops[s->done++];
		run(&o);
	}
}

static void flush_device(int dev) {
	struct CUstream_st *s;
	flush(&legacy[dev], legacy[dev].len);
	flush(&per_thread[dev], per_thread[dev].len);
	for (s = streams; s != NULL; s = s->next) {
		if (s->dev == dev) {
			flush(s, s->len);
		}
	}
}

static void run(struct op *o) {
	size_t z, y;
	switch (o->kind) {
	case OP_WAIT:
		flush(o->waits, o->upto);
		break;
	case OP_SET:
		memset(o->dst, 0, o->width);
		break;
	default:
		for (z = 0; z < o->depth; z++) {
			for (y = 0; y < o->height; y++) {
				memcpy(o->dst + z * o->dslice + y * o->dpitch, o->src + z * o->sslice + y * o->spitch, o->width);
			}
		}
	}
}

static CUresult enqueue(struct CUstream_st *s, struct op o) {
	if (s->len == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct op *grown = (struct op *)realloc(s->ops, cap * sizeof *grown);
		if (grown == NULL) {
			return OUT_OF_MEMORY;
		}
		s->ops = grown;
		s->cap = cap;
	}
	s->ops[s->len++] = o;
	return OK;
}

/* stream resolves a handle in the current context: NULL and 0x1 are its
 * legacy default stream, 0x2 its per-thread default stream. */
static struct CUstream_st *stream(CUstream h) {
	CUcontext c = current();
	if (c == NULL) {
		return NULL;
	}
	if (h == NULL || (uintptr_t)h == 1) {
		return &legacy[c->dev];
	}
	if ((uintptr_t)h == 2) {
		return &per_thread[c->dev];
	}
	return (struct CUstream_st *)h;
}

/* begin takes the lock, counts a call and decides its failure. */
#define BEGIN(name, needs_ctx) \
	CUresult r; \
	const char *call_ = name; \
	pthread_mutex_lock(&mu); \
	r = failing(name); \
	if (r == OK && !initialized && strcmp(name, "cuInit") != 0 && strcmp(name, "cuGetErrorName") != 0) { \
		r = NOT_INITIALIZED; \
	} \
	if (r == OK && (needs_ctx) && current() == NULL) { \
		r = INVALID_CONTEXT; \
	}
#define END(format, ...) \
	logf_("%s(" format ") = %d", call_, __VA_ARGS__, r); \
	pthread_mutex_unlock(&mu); \
	return r;

CUresult cuInit(unsigned int flags) {
	BEGIN("cuInit", 0)
	if (r == OK) {
		initialized = 1;
	}
	END("%u", flags)
}

CUresult cuGetErrorName(CUresult code, const char **name) {
	static const struct {
		CUresult code;
		const char *name;
	} names[] = {{OK, "CUDA_SUCCESS"}, {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"}, {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
		{NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"}, {NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
		{INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"}, {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
		{INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"}, {NOT_FOUND, "CUDA_ERROR_NOT_FOUND"}};
	size_t i;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (names[i].code == code) {
			*name = names[i].name;
			return OK;
		}
	}
	*name = NULL;
	return INVALID_VALUE;
}

CUresult cuDeviceGetCount(int *n) {
	BEGIN("cuDeviceGetCount", 0)
	*n = r == OK ? device_count : 0;
	END("%d", *n)
}

CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	BEGIN("cuDeviceGet", 0)
	if (r == OK && (ordinal < 0 || ordinal >= device_count)) {
		r = INVALID_DEVICE;
	}
	*d = ordinal;
	END("%d", ordinal)
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	BEGIN("cuDeviceGetName", 0)
	if (r == OK) {
		snprintf(name, (size_t)len, "dlgen fake CUDA device %d", d);
	}
	END("%d", d)
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice d) {
	BEGIN("cuDeviceGetAttribute", 0)
	*value = attribute == CU_DEVICE_ATTRIBUTE_MAX_PITCH ? (int)MAX_PITCH : 0;
	END("%d, %d", attribute, d)
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
	BEGIN("cuDevicePrimaryCtxRetain", 0)
	if (r == OK && (d < 0 || d >= device_count)) {
		r = INVALID_DEVICE;
	}
	if (r == OK) {
		contexts[d].dev = d;
		contexts[d].retained++;
		legacy[d].dev = per_thread[d].dev = d;
		snprintf(legacy[d].name, sizeof legacy[d].name, "legacy%d", d);
		snprintf(per_thread[d].name, sizeof per_thread[d].name, "per-thread%d", d);
		*c = &contexts[d];
	}
	END("%d", d)
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	BEGIN("cuDevicePrimaryCtxRelease_v2", 0)
	if (r == OK && (d < 0 || d >= device_count || contexts[d].retained == 0)) {
		r = INVALID_CONTEXT;
	}
	if (r == OK) {
		contexts[d].retained--;
	}
	END("%d", d)
}

CUresult cuCtxPushCurrent_v2(CUcontext c) {
	struct ctx_stack *s;
	BEGIN("cuCtxPushCurrent_v2", 0)
	s = stack();
	if (r == OK && (c == NULL || c->retained == 0 || s == NULL || s->depth == MAX_DEPTH)) {
		r = INVALID_CONTEXT;
	}
	if (r == OK) {
		s->ctx[s->depth++] = c;
	}
	/* Not logged: every call of the backend is wrapped in a push and a pop. */
	(void)call_;
	pthread_mutex_unlock(&mu);
	return r;
}

CUresult cuCtxPopCurrent_v2(CUcontext *c) {
	struct ctx_stack *s;
	BEGIN("cuCtxPopCurrent_v2", 0)
	s = stack();
	if (r == OK && (s == NULL || s->depth == 0)) {
		r = INVALID_CONTEXT;
	}
	if (r == OK) {
		*c = s->ctx[--s->depth];
	}
	(void)call_;
	pthread_mutex_unlock(&mu);
	return r;
}

CUresult cuCtxSynchronize(void) {
	BEGIN("cuCtxSynchronize", 1)
	if (r == OK) {
		flush_device(current()->dev);
	}
	END("%s", "")
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	struct alloc *a = NULL;
	int dev = 0;
	BEGIN("cuMemAlloc_v2", 1)
	if (r == OK) {
		dev = current()->dev;
		if (n == 0) {
			r = INVALID_VALUE;
		} else if (n > MEMORY_LIMIT - used[dev]) {
			r = OUT_OF_MEMORY;
		}
	}
	if (r == OK && ((a = (struct alloc *)malloc(sizeof *a)) == NULL || (a->base = (unsigned char *)malloc(n)) == NULL)) {
		free(a);
		r = OUT_OF_MEMORY;
	}
	if (r == OK) {
		memset(a->base, 0xA5, n); /* not zeroed: the backend must clear it */
		a->size = n;
		a->dev = dev;
		a->id = next_alloc++;
		a->next = allocs;
		allocs = a;
		used[dev] += n;
		*p = (CUdeviceptr)(uintptr_t)a->base;
		logf_("%s(%lu) = %d d%d:%d", call_, (unsigned long)n, r, dev, a->id);
	} else {
		logf_("%s(%lu) = %d", call_, (unsigned long)n, r);
	}
	pthread_mutex_unlock(&mu);
	return r;
}

CUresult cuMemFree_v2(CUdeviceptr p) {
	struct alloc **a, *gone = NULL;
	char name[64];
	BEGIN("cuMemFree_v2", 1)
	where((void *)(uintptr_t)p, name, sizeof name);
	for (a = &allocs; r == OK && *a != NULL; a = &(*a)->next) {
		if ((*a)->base == (unsigned char *)(uintptr_t)p) {
			gone = *a;
			break;
		}
	}
	if (r == OK && gone == NULL) {
		r = INVALID_VALUE;
	}
	if (r == OK) {
		flush_device(gone->dev); /* freeing waits for the device */
		*a = gone->next;
		used[gone->dev] -= gone->size;
		free(gone->base);
		free(gone);
	}
	END("%s", name)
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
	struct alloc *a;
	char name[64];
	BEGIN("cuMemGetAddressRange_v2", 1)
	a = find((void *)(uintptr_t)p);
	if (r == OK && a == NULL) {
		r = NOT_FOUND;
	}
	if (r == OK) {
		*base = (CUdeviceptr)(uintptr_t)a->base;
		*size = a->size;
	}
	END("%s", where((void *)(uintptr_t)p, name, sizeof name))
}

CUresult cuStreamCreate(CUstream *h, unsigned int flags) {
	struct CUstream_st *s = NULL;
	BEGIN("cuStreamCreate", 1)
	if (r == OK && (s = (struct CUstream_st *)calloc(1, sizeof *s)) == NULL) {
		r = OUT_OF_MEMORY;
	}
	if (r == OK) {
		s->dev = current()->dev;
		snprintf(s->name, sizeof s->name, "s%d", next_stream++);
		s->next = streams;
		streams = s;
		*h = s;
	}
	logf_("%s(%u) = %d %s", call_, flags, r, s != NULL ? s->name : "-");
	pthread_mutex_unlock(&mu);
	return r;
}

static pthread_cond_t hold_cv = PTHREAD_COND_INITIALIZER;
static int hold_armed, holding;

CUresult cuStreamSynchronize(CUstream h) {
	struct CUstream_st *s;
	pthread_mutex_lock(&mu);
	if (hold_armed) {
		hold_armed = 0;
		holding = 1;
		pthread_cond_broadcast(&hold_cv);
		while (holding) {
			pthread_cond_wait(&hold_cv, &mu);
		}
	}
	pthread_mutex_unlock(&mu);
	BEGIN("cuStreamSynchronize", 1)
	s = stream(h);
	if (r == OK) {
		flush(s, s->len);
	}
	END("%s", s != NULL ? s->name : "-")
}

CUresult cuEventCreate(CUevent *e, unsigned int flags) {
	struct CUevent_st *ev = NULL;
	BEGIN("cuEventCreate", 1)
	if (r == OK && (ev = (struct CUevent_st *)calloc(1, sizeof *ev)) == NULL) {
		r = OUT_OF_MEMORY;
	}
	if (r == OK) {
		ev->id = next_event++;
		*e = ev;
	}
	logf_("%s(%u) = %d e%d", call_, flags, r, ev != NULL ? ev->id : 0);
	pthread_mutex_unlock(&mu);
	return r;
}

CUresult cuEventRecord(CUevent e, CUstream h) {
	struct CUstream_st *s;
	BEGIN("cuEventRecord", 1)
	s = stream(h);
	if (r == OK) {
		e->stream = s;
		e->upto = s->len;
	}
	END("e%d, %s", e->id, s != NULL ? s->name : "-")
}

CUresult cuStreamWaitEvent(CUstream h, CUevent e, unsigned int flags) {
	struct CUstream_st *s;
	struct op o;
	BEGIN("cuStreamWaitEvent", 1)
	s = stream(h);
	memset(&o, 0, sizeof o);
	o.kind = OP_WAIT;
	o.waits = e->stream;
	o.upto = e->upto;
	if (r == OK && e->stream != NULL) {
		r = enqueue(s, o);
	}
	END("%s, e%d, %u", s != NULL ? s->name : "-", e->id, flags)
}

CUresult cuEventDestroy_v2(CUevent e) {
	int id = e->id;
	BEGIN("cuEventDestroy_v2", 1)
	if (r == OK) {
		free(e);
	}
	END("e%d", id)
}

/* copy queues a 3-D copy of host or device memory and logs it. */
static CUresult copy(const char *call, CUresult r, CUstream h, struct op o) {
	char dst[64], src[64];
	struct CUstream_st *s = stream(h);
	if (r == OK) {
		r = enqueue(s, o);
	}
	logf_("%s(dst %s pitch %lu height %lu, src %s pitch %lu height %lu, %lux%lux%lu bytes, %s) = %d", call,
		where(o.dst, dst, sizeof dst), (unsigned long)o.dpitch, (unsigned long)(o.dpitch ? o.dslice / o.dpitch : 0),
		where(o.src, src, sizeof src), (unsigned long)o.spitch, (unsigned long)(o.spitch ? o.sslice / o.spitch : 0),
		(unsigned long)o.width, (unsigned long)o.height, (unsigned long)o.depth, s != NULL ? s->name : "-", r);
	pthread_mutex_unlock(&mu);
	return r;
}

static struct op linear(void *dst, const void *src, size_t n) {
	struct op o;
	memset(&o, 0, sizeof o);
	o.kind = OP_COPY;
	o.dst = (unsigned char *)dst;
	o.src = (const unsigned char *)src;
	o.width = n;
	o.height = o.depth = 1;
	return o;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream h) {
	BEGIN("cuMemcpyHtoDAsync_v2", 1)
	return copy(call_, r, h, linear((void *)(uintptr_t)dst, src, n));
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream h) {
	BEGIN("cuMemcpyDtoHAsync_v2", 1)
	return copy(call_, r, h, linear(dst, (void *)(uintptr_t)src, n));
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h) {
	BEGIN("cuMemcpyDtoDAsync_v2", 1)
	return copy(call_, r, h, linear((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n));
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream h) {
	BEGIN("cuMemcpyPeerAsync", 1)
	if (r == OK && (dc == NULL || sc == NULL || dc->retained == 0 || sc->retained == 0)) {
		r = INVALID_CONTEXT;
	}
	return copy(call_, r, h, linear((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n));
}

/* The synchronous copies the GPU check measures the backend against. */
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
	BEGIN("cuMemcpyHtoD_v2", 1)
	if (r == OK) {
		flush_device(current()->dev);
		memcpy((void *)(uintptr_t)dst, src, n);
	}
	END("%lu", (unsigned long)n)
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
	BEGIN("cuMemcpyDtoH_v2", 1)
	if (r == OK) {
		flush_device(current()->dev);
		memcpy(dst, (void *)(uintptr_t)src, n);
	}
	END("%lu", (unsigned long)n)
}

static const void *side(int type, const void *host, CUdeviceptr dev) {
	return type == HOST ? host : (const void *)(uintptr_t)dev;
}

CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream h) {
	struct op o;
	BEGIN("cuMemcpy2DAsync_v2", 1)
	o = linear((void *)side(p->dstMemoryType, p->dstHost, p->dstDevice), side(p->srcMemoryType, p->srcHost, p->srcDevice),
		p->WidthInBytes);
	o.dst += p->dstXInBytes + p->dstY * p->dstPitch;
	o.src += p->srcXInBytes + p->srcY * p->srcPitch;
	o.height = p->Height;
	o.dpitch = p->dstPitch;
	o.spitch = p->srcPitch;
	o.dslice = p->dstPitch * p->Height;
	o.sslice = p->srcPitch * p->Height;
	if (r == OK && (p->dstPitch < p->WidthInBytes || p->srcPitch < p->WidthInBytes || p->dstPitch > MAX_PITCH ||
			       p->srcPitch > MAX_PITCH || p->srcArray != NULL || p->dstArray != NULL)) {
		r = INVALID_VALUE;
	}
	return copy(call_, r, h, o);
}

CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream h) {
	struct op o;
	BEGIN("cuMemcpy3DAsync_v2", 1)
	o = linear((void *)side(p->dstMemoryType, p->dstHost, p->dstDevice), side(p->srcMemoryType, p->srcHost, p->srcDevice),
		p->WidthInBytes);
	o.height = p->Height;
	o.depth = p->Depth;
	o.dpitch = p->dstPitch;
	o.spitch = p->srcPitch;
	o.dslice = p->dstPitch * p->dstHeight;
	o.sslice = p->srcPitch * p->srcHeight;
	o.dst += p->dstXInBytes + p->dstY * p->dstPitch + p->dstZ * o.dslice;
	o.src += p->srcXInBytes + p->srcY * p->srcPitch + p->srcZ * o.sslice;
	if (r == OK && (p->dstPitch < p->WidthInBytes || p->srcPitch < p->WidthInBytes || p->dstHeight < p->Height ||
			       p->srcHeight < p->Height || p->dstPitch > MAX_PITCH || p->srcPitch > MAX_PITCH ||
			       p->reserved0 != NULL || p->reserved1 != NULL || p->srcLOD != 0 || p->dstLOD != 0)) {
		r = INVALID_VALUE;
	}
	return copy(call_, r, h, o);
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char value, size_t n, CUstream h) {
	struct op o;
	struct CUstream_st *s;
	char name[64];
	BEGIN("cuMemsetD8Async", 1)
	memset(&o, 0, sizeof o);
	o.kind = OP_SET;
	o.dst = (unsigned char *)(uintptr_t)p;
	o.width = n;
	s = stream(h);
	if (r == OK && value != 0) {
		r = INVALID_VALUE; /* the fake clears only */
	}
	if (r == OK) {
		r = enqueue(s, o);
	}
	END("%s, %u, %lu, %s", where(o.dst, name, sizeof name), value, (unsigned long)n, s != NULL ? s->name : "-")
}

/* Control, for the tests. */

/* fakecuda_fail makes the call named fail with result times times (-1:
 * always, 0: never again) after skip calls of it that succeed. */
void fakecuda_fail(const char *call, int result, int skip, int times) {
	pthread_mutex_lock(&mu);
	snprintf(failure.call, sizeof failure.call, "%s", call);
	failure.result = result;
	failure.skip = skip;
	failure.times = times;
	pthread_mutex_unlock(&mu);
}

/* fakecuda_log copies the log since the last call (at most n-1 bytes and
 * a NUL) to buf, empties it, and returns its length. */
size_t fakecuda_log(char *buf, size_t n) {
	size_t len;
	pthread_mutex_lock(&mu);
	len = log_len;
	if (buf != NULL && n > 0) {
		size_t k = len < n - 1 ? len : n - 1;
		if (k > 0) {
			memcpy(buf, log_text, k);
		}
		buf[k] = '\0';
		log_len = 0;
	}
	pthread_mutex_unlock(&mu);
	return len;
}

/* fakecuda_set_devices sets how many devices cuDeviceGetCount reports. */
void fakecuda_hold_sync(void) {
	pthread_mutex_lock(&mu);
	hold_armed = 1;
	pthread_mutex_unlock(&mu);
}

/* fakecuda_held_sync waits until a cuStreamSynchronize is held. */
void fakecuda_held_sync(void) {
	pthread_mutex_lock(&mu);
	while (!holding) {
		pthread_cond_wait(&hold_cv, &mu);
	}
	pthread_mutex_unlock(&mu);
}

void fakecuda_release_sync(void) {
	pthread_mutex_lock(&mu);
	holding = 0;
	pthread_cond_broadcast(&hold_cv);
	pthread_mutex_unlock(&mu);
}

void fakecuda_set_devices(int n) {
	pthread_mutex_lock(&mu);
	device_count = n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : n;
	pthread_mutex_unlock(&mu);
}
