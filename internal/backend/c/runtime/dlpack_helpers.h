/* The hand-written part of dlgen's C helper header, dlpack_helpers.h: the
 * same for every release. dlgen writes it into the header after the
 * release's macros and dlgen_rule (internal/backend/c/templates/dlpack_helpers.h.tmpl) and
 * before the release's tables, which the prototypes below declare; it
 * names no fact of a release. Where releases differ it asks the macros
 * (DLGEN_HAS_VERSIONED, DLGEN_HAS_PADDED_FLAG, DLGEN_MANAGED_TENSOR, ...).
 * tests/chelpers compiles the header of every release, and this file where
 * it lies, between the newest release's macros and tables
 * (TestHandWrittenHelpersCompileInPlace).
 */

#if defined(__cplusplus) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#define DLGEN_INLINE static inline
#elif defined(_MSC_VER)
#define DLGEN_INLINE static __inline
#elif defined(__GNUC__)
#define DLGEN_INLINE static __inline__
#else
#define DLGEN_INLINE static
#endif

/*!
 * P, the width of a pointer in bits, the one parameter of the limits of
 * the address space.
 */
#define DLGEN_POINTER_BITS (sizeof(void *) * 8)

/*! 2^(P-1): every count, byte offset and extent stays below it. */
#define DLGEN_BOUND ((uint64_t)1 << (DLGEN_POINTER_BITS - 1))

/*! 2^P - 1, the highest address. */
#define DLGEN_MAX_ADDRESS (DLGEN_BOUND + (DLGEN_BOUND - 1))

/*! What a parameter of a message holds. */
typedef enum {
  DLGEN_ARG_SIGNED = 0,
  DLGEN_ARG_UNSIGNED = 1,
  DLGEN_ARG_TEXT = 2
} dlgen_arg_kind;

/*! One parameter of a message. */
typedef struct {
  dlgen_arg_kind kind;
  /*! The integer, as two's complement for DLGEN_ARG_SIGNED. */
  uint64_t value;
  /*! For DLGEN_ARG_TEXT: a string that lives as long as the program. */
  const char *text;
} dlgen_arg;

/*!
 * Why a tensor was refused: the check, and the parameters of its message
 * in the order of docs/rules.md.
 */
typedef struct {
  dlgen_rule rule;
  dlgen_arg args[DLGEN_MAX_PARAMS];
} dlgen_error;

/*! The id of a check, as the conformance corpus and every language name it. */
DLGEN_INLINE const char *dlgen_rule_id(dlgen_rule rule);

/*! The message of a check, with {param} placeholders. */
DLGEN_INLINE const char *dlgen_rule_text(dlgen_rule rule);

/* The message of a check as dlgen_format_error writes it: its text, each
 * parameter a byte below ' ' (parameter k as the byte k + 1). */
DLGEN_INLINE const char *dlgen_rule_format_(dlgen_rule rule);

/*! The name of a type code the release defines, NULL for any other. */
DLGEN_INLINE const char *dlgen_type_code_name(uint8_t code);

/*! Whether elements of a type code can be addressed (known, not opaque). */
DLGEN_INLINE int dlgen_type_code_addressable(uint8_t code);

/*! The only width DLPack allows for a type code, in bits; 0: any. */
DLGEN_INLINE unsigned dlgen_type_code_fixed_bits(uint8_t code);

/*!
 * Whether the CPU reads memory of a device type directly; memory of any
 * other type, known or not, may be held and passed on but never read.
 */
DLGEN_INLINE int dlgen_host_readable(int32_t device_type);

/*! Whether a device type has no streams (__dlpack__ then takes none). */
DLGEN_INLINE int dlgen_streamless(int32_t device_type);

/* The table of dtype names: name, code, bits (one lane each). */
typedef struct {
  const char *name;
  uint8_t code, bits;
} dlgen_dtype_name_;

DLGEN_INLINE const dlgen_dtype_name_ *dlgen_dtype_names_(size_t *count);

/* Appends to a caller's buffer, counting what does not fit. */
typedef struct {
  char *buf;
  size_t size, len;
} dlgen_writer_;

DLGEN_INLINE void dlgen_write_(dlgen_writer_ *w, const char *s, size_t n) {
  if (w->len + 1 < w->size) {
    size_t room = w->size - 1 - w->len;
    memcpy(w->buf + w->len, s, n < room ? n : room);
  }
  w->len += n;
}

DLGEN_INLINE void dlgen_write_text_(dlgen_writer_ *w, const char *s) {
  dlgen_write_(w, s, strlen(s));
}

DLGEN_INLINE void dlgen_write_unsigned_(dlgen_writer_ *w, uint64_t v) {
  char digits[20];
  size_t i = sizeof digits;
  do {
    digits[--i] = (char)('0' + (int)(v % 10));
    v /= 10;
  } while (v != 0);
  dlgen_write_(w, digits + i, sizeof digits - i);
}

DLGEN_INLINE void dlgen_write_arg_(dlgen_writer_ *w, const dlgen_arg *a) {
  if (a->kind == DLGEN_ARG_TEXT) {
    dlgen_write_text_(w, a->text ? a->text : "");
  } else if (a->kind == DLGEN_ARG_SIGNED && (a->value >> 63) != 0) {
    dlgen_write_(w, "-", 1);
    dlgen_write_unsigned_(w, 0 - a->value);
  } else {
    dlgen_write_unsigned_(w, a->value);
  }
}

DLGEN_INLINE size_t dlgen_writer_end_(dlgen_writer_ *w) {
  if (w->size > 0) {
    w->buf[w->len < w->size ? w->len : w->size - 1] = '\0';
  }
  return w->len;
}

/*!
 * Renders the message of err into buf, of size bytes, as snprintf does:
 * truncated to fit and NUL-terminated (when size > 0), returning the
 * length of the whole message. The words are those of every language.
 */
DLGEN_INLINE size_t dlgen_format_error(const dlgen_error *err, char *buf, size_t size) {
  const char *format = dlgen_rule_format_(err->rule);
  dlgen_writer_ w;
  w.buf = buf;
  w.size = size;
  w.len = 0;
  while (*format != '\0') {
    size_t n = 0;
    if ((unsigned char)*format < ' ') {
      dlgen_write_arg_(&w, &err->args[(unsigned char)*format - 1]);
      format++;
      continue;
    }
    while ((unsigned char)format[n] >= ' ') {
      n++;
    }
    dlgen_write_(&w, format, n);
    format += n;
  }
  return dlgen_writer_end_(&w);
}

/* Records a refusal: kinds has one letter per argument (s: signed, u:
 * unsigned, t: text); integers come from values, texts from texts. */
DLGEN_INLINE dlgen_rule dlgen_refuse_(dlgen_error *err, dlgen_rule rule, const char *kinds,
                                      const uint64_t *values, const char *const *texts) {
  int i;
  if (err == NULL) {
    return rule;
  }
  memset(err, 0, sizeof *err);
  err->rule = rule;
  for (i = 0; kinds[i] != '\0' && i < DLGEN_MAX_PARAMS; i++) {
    if (kinds[i] == 't') {
      err->args[i].kind = DLGEN_ARG_TEXT;
      err->args[i].text = *texts++;
    } else {
      err->args[i].kind = kinds[i] == 's' ? DLGEN_ARG_SIGNED : DLGEN_ARG_UNSIGNED;
      err->args[i].value = values[i];
    }
  }
  return rule;
}

/*! When a pointer field may be NULL (dlgen's nullable rules). */
typedef enum {
  DLGEN_NULL_NEVER = 0,
  DLGEN_NULL_ALWAYS = 1,
  DLGEN_NULL_IF_NDIM_ZERO = 2,
  DLGEN_NULL_IF_NO_ELEMENTS = 3
} dlgen_null_when;

/* Whether a field may be NULL in a tensor of version (major, minor), or of
 * none (versioned 0: a legacy tensor, older than every versioned one). */
DLGEN_INLINE int dlgen_null_allowed_(dlgen_null_when when, dlgen_null_when before, uint32_t in_major,
                                     uint32_t in_minor, int versioned, uint32_t major, uint32_t minor,
                                     int32_t ndim, int empty) {
  if (!versioned || major < in_major || (major == in_major && minor < in_minor)) {
    when = before;
  }
  switch (when) {
  case DLGEN_NULL_NEVER:
    return 0;
  case DLGEN_NULL_ALWAYS:
    return 1;
  case DLGEN_NULL_IF_NDIM_ZERO:
    return ndim == 0;
  case DLGEN_NULL_IF_NO_ELEMENTS:
    return empty;
  }
  return 0;
}

/*!
 * Whether DLTensor.data may be NULL in a tensor of version (major,
 * minor) (versioned 0: a legacy tensor) with ndim dimensions, empty when
 * it has no elements.
 */
DLGEN_INLINE int dlgen_data_may_be_null(int versioned, uint32_t major, uint32_t minor, int32_t ndim, int empty) {
  return dlgen_null_allowed_(DLGEN_DATA_NULL, DLGEN_DATA_NULL_BEFORE, DLGEN_DATA_NULL_CHANGED_MAJOR,
                             DLGEN_DATA_NULL_CHANGED_MINOR, versioned, major, minor, ndim, empty);
}

/*!
 * Whether DLTensor.shape may be NULL in a tensor of version (major,
 * minor) (versioned 0: a legacy tensor) with ndim dimensions, empty when
 * it has no elements.
 */
DLGEN_INLINE int dlgen_shape_may_be_null(int versioned, uint32_t major, uint32_t minor, int32_t ndim, int empty) {
  return dlgen_null_allowed_(DLGEN_SHAPE_NULL, DLGEN_SHAPE_NULL_BEFORE, DLGEN_SHAPE_NULL_CHANGED_MAJOR,
                             DLGEN_SHAPE_NULL_CHANGED_MINOR, versioned, major, minor, ndim, empty);
}

/*!
 * Whether DLTensor.strides may be NULL in a tensor of version (major,
 * minor) (versioned 0: a legacy tensor) with ndim dimensions, empty when
 * it has no elements.
 */
DLGEN_INLINE int dlgen_strides_may_be_null(int versioned, uint32_t major, uint32_t minor, int32_t ndim, int empty) {
  return dlgen_null_allowed_(DLGEN_STRIDES_NULL, DLGEN_STRIDES_NULL_BEFORE, DLGEN_STRIDES_NULL_CHANGED_MAJOR,
                             DLGEN_STRIDES_NULL_CHANGED_MINOR, versioned, major, minor, ndim, empty);
}

/*! The name of a dtype of one lane, such as "float32"; NULL if it has none. */
DLGEN_INLINE const char *dlgen_dtype_name(DLDataType dtype) {
  size_t i, count;
  const dlgen_dtype_name_ *names = dlgen_dtype_names_(&count);
  for (i = 0; i < count; i++) {
    if (names[i].code == dtype.code && names[i].bits == dtype.bits) {
      return names[i].name;
    }
  }
  return NULL;
}

/*!
 * Renders a dtype as every dlgen language shows it into buf (as
 * dlgen_format_error does): "float32", "float32x4" with lanes,
 * "DataType(code=C, bits=B, lanes=L)" for a dtype without a name.
 */
DLGEN_INLINE size_t dlgen_format_dtype(DLDataType dtype, char *buf, size_t size) {
  dlgen_writer_ w;
  const char *name = dtype.lanes != 0 ? dlgen_dtype_name(dtype) : NULL;
  w.buf = buf;
  w.size = size;
  w.len = 0;
  if (name == NULL) {
    dlgen_write_text_(&w, "DataType(code=");
    dlgen_write_unsigned_(&w, dtype.code);
    dlgen_write_text_(&w, ", bits=");
    dlgen_write_unsigned_(&w, dtype.bits);
    dlgen_write_text_(&w, ", lanes=");
    dlgen_write_unsigned_(&w, dtype.lanes);
    dlgen_write_text_(&w, ")");
  } else {
    dlgen_write_text_(&w, name);
    if (dtype.lanes != 1) {
      dlgen_write_text_(&w, "x");
      dlgen_write_unsigned_(&w, dtype.lanes);
    }
  }
  return dlgen_writer_end_(&w);
}

/*!
 * Reads a dtype name ("float32", "float32x4": what dlgen_format_dtype
 * shows for named types) into *dtype; DLGEN_RULE_DTYPE_NAME for any other
 * text.
 */
DLGEN_INLINE dlgen_rule dlgen_parse_dtype(const char *text, DLDataType *dtype, dlgen_error *err) {
  size_t i, count, n;
  const dlgen_dtype_name_ *names = dlgen_dtype_names_(&count);
  for (i = 0; i < count; i++) {
    const char *rest;
    uint32_t lanes = 1;
    n = strlen(names[i].name);
    if (strncmp(text, names[i].name, n) != 0) {
      continue;
    }
    rest = text + n;
    if (*rest != '\0') {
      if (rest[0] != 'x' || rest[1] < '1' || rest[1] > '9') {
        continue;
      }
      for (lanes = 0, rest++; *rest >= '0' && *rest <= '9' && lanes <= 65535; rest++) {
        lanes = lanes * 10 + (uint32_t)(*rest - '0');
      }
      if (*rest != '\0' || lanes > 65535) {
        continue;
      }
    }
    dtype->code = names[i].code;
    dtype->bits = names[i].bits;
    dtype->lanes = (uint16_t)lanes;
    return DLGEN_OK;
  }
  {
    const char *texts[2];
    texts[0] = text;
    texts[1] = DLGEN_KNOWN_DTYPE_NAMES;
    return dlgen_refuse_(err, DLGEN_RULE_DTYPE_NAME, "tt", NULL, texts);
  }
}

/* The arithmetic of the limits, on 64-bit unsigned integers, never
 * wrapping. */
#define DLGEN_U64_MAX (~(uint64_t)0)

/* The bytes n consecutive elements of width bits occupy (packed: sharing
 * bytes); 0 when they reach 2^64. */
DLGEN_INLINE int dlgen_bytes_(uint64_t n, uint64_t width, int packed, uint64_t *bytes) {
  uint64_t item = (width + 7) / 8;
  if (packed) {
    /* ceil(n * width / 8), without forming n * width */
    *bytes = (n / 8) * width + ((n % 8) * width + 7) / 8;
    return 1;
  }
  if (n != 0 && item > DLGEN_U64_MAX / n) {
    return 0;
  }
  *bytes = n * item;
  return 1;
}

/* Whether n elements, and their bytes, stay below 2^(P-1). */
DLGEN_INLINE int dlgen_fits_(uint64_t n, uint64_t width, int packed) {
  uint64_t bytes;
  return n < DLGEN_BOUND && dlgen_bytes_(n, width, packed, &bytes) && bytes < DLGEN_BOUND;
}

DLGEN_INLINE uint64_t dlgen_magnitude_(int64_t v) {
  return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

DLGEN_INLINE uint64_t dlgen_saturating_add_(uint64_t a, uint64_t b) {
  return a > DLGEN_U64_MAX - b ? DLGEN_U64_MAX : a + b;
}

/* How many elements the strides reach below the first element and above
 * it, saturated at 2^64 - 1, for a shape with no 0 and no negative extent. */
DLGEN_INLINE void dlgen_reach_(const int64_t *shape, const int64_t *strides, int32_t ndim, uint64_t *low,
                               uint64_t *high) {
  int32_t k;
  *low = 0;
  *high = 0;
  for (k = 0; k < ndim; k++) {
    uint64_t extent = (uint64_t)shape[k] - 1, step = dlgen_magnitude_(strides[k]), r;
    r = step != 0 && extent > DLGEN_U64_MAX / step ? DLGEN_U64_MAX : extent * step;
    if (strides[k] < 0) {
      *low = dlgen_saturating_add_(*low, r);
    } else {
      *high = dlgen_saturating_add_(*high, r);
    }
  }
}

/* Reads n int64_t at from, which may be misaligned. */
DLGEN_INLINE void dlgen_read_dims_(const int64_t *from, int64_t *to, int32_t n) {
  if (n > 0) {
    memcpy(to, (const void *)from, (size_t)n * sizeof *to);
  }
}

/* Whether a versioned tensor's flags say its sub-byte elements are padded
 * (never where the release has no such flag). */
DLGEN_INLINE int dlgen_padded_(uint64_t flags) {
#if DLGEN_HAS_PADDED_FLAG
  return (flags & DLGEN_PADDED_FLAG) != 0;
#else
  (void)flags;
  return 0;
#endif
}

/* dlgen:checker c-import (docs/rules.md lists every checker) */
/*!
 * The checks that follow version_major, in order, on a copy of a
 * DLTensor's description: of a versioned tensor of version (major, minor),
 * or of a legacy one (versioned 0); its sub-byte elements padded or
 * packed. The import checks of a managed tensor call it. A producer
 * API that reads NULL strides as row-major in any release (dlgen's
 * from_pointer) passes producer 1: strides_null is then not checked.
 */
DLGEN_INLINE dlgen_rule dlgen_check_dltensor(const DLTensor *t, int versioned, uint32_t major, uint32_t minor,
                                             int padded, int producer, dlgen_error *err) {
  int64_t shape[DLGEN_MAX_NDIM], strides[DLGEN_MAX_NDIM];
  uint64_t v[DLGEN_MAX_PARAMS];
  const char *texts[1];
  int32_t ndim = (int32_t)t->ndim, k;
  uint8_t code = t->dtype.code, bits = t->dtype.bits;
  uint16_t lanes = t->dtype.lanes;
  uint64_t width = (uint64_t)bits * lanes, byte_offset = t->byte_offset, count = 1, low = 0, high = 0, end = 0;
  uint64_t log2 = DLGEN_POINTER_BITS - 1, fixed = dlgen_type_code_fixed_bits(code);
  int packed = width < 8 && !padded, empty = 0;
  if (ndim < 0 || ndim > DLGEN_MAX_NDIM) {
    v[0] = (uint64_t)(int64_t)ndim;
    v[1] = DLGEN_MAX_NDIM;
    return dlgen_refuse_(err, DLGEN_RULE_NDIM_RANGE, "ss", v, NULL);
  }
  if (t->shape == NULL && !dlgen_shape_may_be_null(versioned, major, minor, ndim, 0)) {
    v[0] = (uint64_t)(int64_t)ndim;
    return dlgen_refuse_(err, DLGEN_RULE_SHAPE_NULL, "s", v, NULL);
  }
  if (t->strides == NULL && !producer && !dlgen_strides_may_be_null(versioned, major, minor, ndim, 0)) {
    v[0] = (uint64_t)(int64_t)ndim;
    v[1] = major;
    v[2] = minor;
    v[3] = DLGEN_STRIDES_NULL_CHANGED_MAJOR;
    v[4] = DLGEN_STRIDES_NULL_CHANGED_MINOR;
    return dlgen_refuse_(err, DLGEN_RULE_STRIDES_NULL, "suuuu", v, NULL);
  }
  if (t->shape != NULL) {
    dlgen_read_dims_(t->shape, shape, ndim);
  } else {
    for (k = 0; k < ndim; k++) {
      shape[k] = 0;
    }
  }
  if (t->strides != NULL) {
    dlgen_read_dims_(t->strides, strides, ndim);
  } else {
    /* Row-major, as NULL meant; an overflowing product is refused below
     * (size_limit) before a stride is read. */
    uint64_t step = 1;
    for (k = ndim - 1; k >= 0; k--) {
      uint64_t extent = shape[k] > 1 ? (uint64_t)shape[k] : 1;
      strides[k] = step < DLGEN_BOUND ? (int64_t)step : 0;
      step = extent > DLGEN_U64_MAX / step ? DLGEN_U64_MAX : step * extent;
    }
  }
  if (dlgen_type_code_name(code) == NULL) {
    v[0] = code;
    return dlgen_refuse_(err, DLGEN_RULE_DTYPE_UNKNOWN, "u", v, NULL);
  }
  texts[0] = dlgen_type_code_name(code);
  if (!dlgen_type_code_addressable(code)) {
    v[0] = code;
    return dlgen_refuse_(err, DLGEN_RULE_DTYPE_OPAQUE, "ut", v, texts);
  }
  if (bits == 0 || lanes == 0) {
    v[0] = bits;
    v[1] = lanes;
    return dlgen_refuse_(err, DLGEN_RULE_DTYPE_ZERO, "uu", v, NULL);
  }
  if (fixed != 0 && fixed != bits) {
    v[0] = code;
    v[2] = bits;
    v[3] = fixed;
    return dlgen_refuse_(err, DLGEN_RULE_DTYPE_BITS, "utuu", v, texts);
  }
  for (k = 0; k < ndim; k++) {
    if (shape[k] < 0) {
      v[0] = (uint64_t)shape[k];
      v[1] = (uint64_t)k;
      return dlgen_refuse_(err, DLGEN_RULE_SHAPE_NEGATIVE, "su", v, NULL);
    }
    empty = empty || shape[k] == 0;
  }
  if (byte_offset >= DLGEN_BOUND) {
    v[0] = byte_offset;
    v[1] = log2;
    return dlgen_refuse_(err, DLGEN_RULE_BYTE_OFFSET_LIMIT, "uu", v, NULL);
  }
  /* Every 0 extent read as 1: the verdict never depends on where a 0 sits. */
  for (k = 0; k < ndim; k++) {
    uint64_t extent = shape[k] > 1 ? (uint64_t)shape[k] : 1;
    if (count > DLGEN_U64_MAX / extent || count * extent >= DLGEN_BOUND) {
      v[0] = log2;
      return dlgen_refuse_(err, DLGEN_RULE_SIZE_LIMIT, "u", v, NULL);
    }
    count *= extent;
  }
  if (!dlgen_fits_(count, width, packed)) {
    v[0] = log2;
    return dlgen_refuse_(err, DLGEN_RULE_SIZE_LIMIT, "u", v, NULL);
  }
  for (k = 0; k < ndim; k++) {
    if (!dlgen_fits_(dlgen_magnitude_(strides[k]), width, packed)) {
      v[0] = (uint64_t)strides[k];
      v[1] = (uint64_t)k;
      v[2] = log2;
      return dlgen_refuse_(err, DLGEN_RULE_STRIDE_LIMIT, "suu", v, NULL);
    }
  }
  if (!empty) {
    dlgen_reach_(shape, strides, ndim, &low, &high);
    /* high may be saturated: the span is then past 2^64 */
    if (high == DLGEN_U64_MAX || low > DLGEN_U64_MAX - high - 1 || !dlgen_fits_(low + high + 1, width, packed)) {
      v[0] = log2;
      return dlgen_refuse_(err, DLGEN_RULE_SPAN_LIMIT, "u", v, NULL);
    }
    /* high + 1 fits, so its bytes do, and byte_offset is below 2^(P-1). */
    dlgen_bytes_(high + 1, width, packed, &end);
    if (byte_offset + end >= DLGEN_BOUND) {
      v[0] = byte_offset;
      v[1] = log2;
      return dlgen_refuse_(err, DLGEN_RULE_OFFSET_LIMIT, "uu", v, NULL);
    }
  }
  if (t->data == NULL && !dlgen_data_may_be_null(versioned, major, minor, ndim, empty)) {
    v[0] = empty ? 0 : count;
    return dlgen_refuse_(err, DLGEN_RULE_DATA_NULL, "u", v, NULL);
  }
  if (!empty) {
    uint64_t below = 0, address = (uint64_t)(uintptr_t)t->data;
    dlgen_bytes_(low, width, packed, &below);
    if ((below > byte_offset && address < below - byte_offset) ||
        address > DLGEN_MAX_ADDRESS - (byte_offset + end)) {
      v[0] = address;
      v[1] = byte_offset;
      return dlgen_refuse_(err, DLGEN_RULE_ADDRESS_LIMIT, "uu", v, NULL);
    }
  }
  return DLGEN_OK;
}
#if DLGEN_HAS_VERSIONED

/*!
 * Whether a versioned managed tensor may be imported: the import checks of
 * this release, in order, on the tensor's description (its deleter is not
 * called; after a refusal the consumer calls it once). A tensor of another
 * major version is refused before anything else is read.
 */
DLGEN_INLINE dlgen_rule dlgen_check_versioned(const DLGEN_MANAGED_TENSOR_VERSIONED *managed, dlgen_error *err) {
  uint64_t v[4];
  if (managed->version.major != DLGEN_MAJOR_VERSION) {
    v[0] = managed->version.major;
    v[1] = managed->version.minor;
    v[2] = DLGEN_MAJOR_VERSION;
    v[3] = DLGEN_MINOR_VERSION;
    return dlgen_refuse_(err, DLGEN_RULE_VERSION_MAJOR, "uuuu", v, NULL);
  }
  return dlgen_check_dltensor(&managed->dl_tensor, 1, managed->version.major, managed->version.minor,
                              dlgen_padded_(managed->flags), 0, err);
}
#endif /* DLGEN_HAS_VERSIONED */

/*!
 * Whether a legacy managed tensor may be imported: judged as older than
 * every versioned release, without flags (its deleter is not called).
 */
DLGEN_INLINE dlgen_rule dlgen_check_legacy(const DLGEN_MANAGED_TENSOR *managed, dlgen_error *err) {
  return dlgen_check_dltensor(&managed->dl_tensor, 0, 0, 0, 0, 0, err);
}
#if DLGEN_HAS_VERSIONED

/*! Calls a versioned tensor's deleter, if it has one: once per tensor. */
DLGEN_INLINE void dlgen_release_versioned(DLGEN_MANAGED_TENSOR_VERSIONED *managed) {
  if (managed != NULL && managed->deleter != NULL) {
    managed->deleter(managed);
  }
}
#endif /* DLGEN_HAS_VERSIONED */

/*! Calls a legacy tensor's deleter, if it has one: once per tensor. */
DLGEN_INLINE void dlgen_release_legacy(DLGEN_MANAGED_TENSOR *managed) {
  if (managed != NULL && managed->deleter != NULL) {
    managed->deleter(managed);
  }
}

/* Packed sub-byte elements: flags are a versioned tensor's (0 for a
 * legacy one). */
DLGEN_INLINE int dlgen_packed_(DLDataType dtype, uint64_t flags) {
  return (uint32_t)dtype.bits * dtype.lanes < 8 && !dlgen_padded_(flags);
}

/*!
 * The stride of dimension k of a checked tensor, in elements: its own, or
 * the row-major one when strides is NULL (legacy tensors, and any tensor
 * before v1.2, may say row-major so).
 */
DLGEN_INLINE int64_t dlgen_stride(const DLTensor *t, int32_t k) {
  int64_t step = 1;
  int32_t j;
  if (t->strides != NULL) {
    return t->strides[k];
  }
  for (j = (int32_t)t->ndim - 1; j > k; j--) {
    step *= t->shape[j] > 1 ? t->shape[j] : 1;
  }
  return step;
}

/*! The number of elements of a checked tensor (1 for ndim 0). */
DLGEN_INLINE int64_t dlgen_element_count(const DLTensor *t) {
  int64_t count = 1;
  int32_t k;
  for (k = 0; k < (int32_t)t->ndim; k++) {
    count *= t->shape[k];
  }
  return count;
}

/*!
 * The bytes the elements of a checked tensor occupy when compact: packed
 * sub-byte elements share bytes unless flags (a versioned tensor's, 0 for
 * a legacy one) say they are padded.
 */
DLGEN_INLINE int64_t dlgen_byte_size(const DLTensor *t, uint64_t flags) {
  uint64_t bytes = 0;
  dlgen_bytes_((uint64_t)dlgen_element_count(t), (uint64_t)t->dtype.bits * t->dtype.lanes,
               dlgen_packed_(t->dtype, flags), &bytes);
  return (int64_t)bytes;
}

/*!
 * The bytes the elements of a checked tensor reach, relative to data:
 * [*first, *end), byte_offset included, for a bounds check against the
 * allocation behind data. Returns 0, and sets nothing, for a tensor
 * without elements.
 */
DLGEN_INLINE int dlgen_byte_range(const DLTensor *t, uint64_t flags, int64_t *first, int64_t *end) {
  uint64_t low = 0, high = 0, below = 0, above = 0, width = (uint64_t)t->dtype.bits * t->dtype.lanes;
  int packed = dlgen_packed_(t->dtype, flags);
  int32_t k;
  if (dlgen_element_count(t) == 0) {
    return 0;
  }
  for (k = 0; k < (int32_t)t->ndim; k++) {
    int64_t stride = dlgen_stride(t, k);
    uint64_t reach = (uint64_t)(t->shape[k] - 1) * dlgen_magnitude_(stride);
    if (stride < 0) {
      low += reach;
    } else {
      high += reach;
    }
  }
  dlgen_bytes_(low, width, packed, &below);
  dlgen_bytes_(high + 1, width, packed, &above);
  *first = (int64_t)t->byte_offset - (int64_t)below;
  *end = (int64_t)t->byte_offset + (int64_t)above;
  return 1;
}

/* Whether the elements are compact in the given order, dimension k from
 * last to first (row-major) or first to last; extents of 1 may have any
 * stride, and a tensor without elements is contiguous. */
DLGEN_INLINE int dlgen_compact_(const DLTensor *t, int row_major) {
  int64_t expected = 1;
  int32_t i, n = (int32_t)t->ndim;
  if (dlgen_element_count(t) == 0) {
    return 1;
  }
  for (i = 0; i < n; i++) {
    int32_t k = row_major ? n - 1 - i : i;
    if (t->shape[k] != 1 && dlgen_stride(t, k) != expected) {
      return 0;
    }
    expected *= t->shape[k];
  }
  return 1;
}

/*! Whether a checked tensor is compact in row-major (C) order. */
DLGEN_INLINE int dlgen_is_row_major(const DLTensor *t) {
  return dlgen_compact_(t, 1);
}

/*! Whether a checked tensor is compact in column-major (Fortran) order. */
DLGEN_INLINE int dlgen_is_column_major(const DLTensor *t) {
  return dlgen_compact_(t, 0);
}

/*!
 * The address of the element at index (ndim indices, each in [0,
 * extent)) of a checked tensor: data + byte_offset + its offset. For
 * packed sub-byte elements, the byte that holds the element's first bit,
 * whose position in it (counted in element widths from the byte's start,
 * as DLPack packs them) *bit receives when bit is not NULL.
 */
DLGEN_INLINE void *dlgen_element_address(const DLTensor *t, uint64_t flags, const int64_t *index,
                                         unsigned *bit) {
  int64_t offset = 0, width = (int64_t)t->dtype.bits * t->dtype.lanes, bits, quotient, remainder;
  int32_t k;
  for (k = 0; k < (int32_t)t->ndim; k++) {
    offset += index[k] * dlgen_stride(t, k);
  }
  if (!dlgen_packed_(t->dtype, flags)) {
    if (bit != NULL) {
      *bit = 0;
    }
    return (char *)t->data + t->byte_offset + offset * ((width + 7) / 8);
  }
  /* floor(offset * width / 8), without forming offset * width, which
   * may pass 2^63: offset = 8q + r with r in [0, 8) */
  quotient = offset / 8;
  remainder = offset % 8;
  if (remainder < 0) {
    remainder += 8;
    quotient -= 1;
  }
  bits = remainder * width;
  if (bit != NULL) {
    *bit = (unsigned)(bits % 8);
  }
  return (char *)t->data + t->byte_offset + quotient * width + bits / 8;
}
#if DLGEN_HAS_VERSIONED

/*!
 * A legacy managed tensor seen as a versioned one, in storage the caller
 * owns (no allocation): hand &tensor over. Its deleter forwards to the
 * legacy tensor's deleter once, then calls release (if not NULL), which
 * may free the storage (the forwarded deleter may free it too, when the
 * storage lives in the producer's allocation); a second call does nothing.
 */
typedef struct dlgen_legacy_as_versioned {
  DLGEN_MANAGED_TENSOR_VERSIONED tensor;
  DLGEN_MANAGED_TENSOR *legacy;
  void (*release)(struct dlgen_legacy_as_versioned *self);
} dlgen_legacy_as_versioned;

DLGEN_INLINE void dlgen_legacy_as_versioned_deleter_(DLGEN_MANAGED_TENSOR_VERSIONED *tensor) {
  dlgen_legacy_as_versioned *w = (dlgen_legacy_as_versioned *)tensor->manager_ctx;
  DLGEN_MANAGED_TENSOR *legacy = w->legacy;
  void (*release)(struct dlgen_legacy_as_versioned *) = w->release;
  if (legacy == NULL) {
    return;
  }
  w->legacy = NULL;
  /* w may live in memory the forwarded deleter frees: not read after it */
  dlgen_release_legacy(legacy);
  if (release != NULL) {
    release(w);
  }
}

/*!
 * Wraps legacy into storage as a versioned tensor of this release with
 * flags (say DLPACK_FLAG_BITMASK_READ_ONLY if the legacy producer lends
 * read-only memory, which a legacy tensor cannot say), and returns it.
 */
DLGEN_INLINE DLGEN_MANAGED_TENSOR_VERSIONED *dlgen_wrap_legacy(dlgen_legacy_as_versioned *storage, DLGEN_MANAGED_TENSOR *legacy,
                                                         uint64_t flags,
                                                         void (*release)(dlgen_legacy_as_versioned *)) {
  memset(storage, 0, sizeof *storage);
  storage->tensor.version.major = DLGEN_MAJOR_VERSION;
  storage->tensor.version.minor = DLGEN_MINOR_VERSION;
  storage->tensor.manager_ctx = storage;
  storage->tensor.deleter = dlgen_legacy_as_versioned_deleter_;
  storage->tensor.flags = flags;
  storage->tensor.dl_tensor = legacy->dl_tensor;
  storage->legacy = legacy;
  storage->release = release;
  return &storage->tensor;
}

/*!
 * A versioned managed tensor seen as a legacy one, in storage the caller
 * owns: as dlgen_legacy_as_versioned, the other way. A legacy tensor has
 * no flags: refuse to wrap a read-only one for a consumer that writes.
 */
typedef struct dlgen_versioned_as_legacy {
  DLGEN_MANAGED_TENSOR tensor;
  DLGEN_MANAGED_TENSOR_VERSIONED *versioned;
  void (*release)(struct dlgen_versioned_as_legacy *self);
} dlgen_versioned_as_legacy;

DLGEN_INLINE void dlgen_versioned_as_legacy_deleter_(DLGEN_MANAGED_TENSOR *tensor) {
  dlgen_versioned_as_legacy *w = (dlgen_versioned_as_legacy *)tensor->manager_ctx;
  DLGEN_MANAGED_TENSOR_VERSIONED *versioned = w->versioned;
  void (*release)(struct dlgen_versioned_as_legacy *) = w->release;
  if (versioned == NULL) {
    return;
  }
  w->versioned = NULL;
  /* w may live in memory the forwarded deleter frees: not read after it */
  dlgen_release_versioned(versioned);
  if (release != NULL) {
    release(w);
  }
}

/*! Wraps versioned into storage as a legacy tensor, and returns it. */
DLGEN_INLINE DLGEN_MANAGED_TENSOR *dlgen_wrap_versioned(dlgen_versioned_as_legacy *storage,
                                                   DLGEN_MANAGED_TENSOR_VERSIONED *versioned,
                                                   void (*release)(dlgen_versioned_as_legacy *)) {
  memset(storage, 0, sizeof *storage);
  storage->tensor.manager_ctx = storage;
  storage->tensor.deleter = dlgen_versioned_as_legacy_deleter_;
  storage->tensor.dl_tensor = versioned->dl_tensor;
  storage->versioned = versioned;
  storage->release = release;
  return &storage->tensor;
}
#endif /* DLGEN_HAS_VERSIONED */

#ifdef Py_PYTHON_H
/*
 * The capsule protocol, when Python.h is included before this header.
 *
 * The GIL: every function here must be called with the GIL held. A
 * capsule's destructor runs with it held too, and so does the deleter it
 * calls; but a consumer may call a deleter from any thread, with or
 * without the GIL, even after the interpreter finalized: a producer's
 * deleter that touches Python objects returns early when
 * !Py_IsInitialized(), and else takes the GIL with PyGILState_Ensure.
 *
 * Ownership: a DLPack capsule owns its tensor until a consumer takes it,
 * renaming the capsule to its used_ name (DLGEN_USED_CAPSULE for
 * DLGEN_CAPSULE); from then on the consumer calls the deleter, once, and
 * the capsule's destructor does not.
 */

/* The Python exception of a check, as dlgen's Python modules raise it. */
DLGEN_INLINE PyObject *dlgen_rule_exception_(dlgen_rule rule);

/* A pending exception put aside while a deleter runs, and set back after
 * (a consumer may drop a capsule while raising). */
#if PY_VERSION_HEX >= 0x030C0000
#define DLGEN_SAVE_EXCEPTION_ PyObject *pending_ = PyErr_GetRaisedException()
#define DLGEN_RESTORE_EXCEPTION_ PyErr_SetRaisedException(pending_)
#else
#define DLGEN_SAVE_EXCEPTION_ \
  PyObject *pending_type_, *pending_value_, *pending_traceback_; \
  PyErr_Fetch(&pending_type_, &pending_value_, &pending_traceback_)
#define DLGEN_RESTORE_EXCEPTION_ PyErr_Restore(pending_type_, pending_value_, pending_traceback_)
#endif

/* A release on a failure path: the deleter (which may run Python code)
 * runs with the failure's exception put aside, and it stays pending. */
#if DLGEN_HAS_VERSIONED
DLGEN_INLINE void dlgen_release_versioned_keeping_error_(DLGEN_MANAGED_TENSOR_VERSIONED *managed) {
  DLGEN_SAVE_EXCEPTION_;
  dlgen_release_versioned(managed);
  DLGEN_RESTORE_EXCEPTION_;
}
#endif
DLGEN_INLINE void dlgen_release_legacy_keeping_error_(DLGEN_MANAGED_TENSOR *managed) {
  DLGEN_SAVE_EXCEPTION_;
  dlgen_release_legacy(managed);
  DLGEN_RESTORE_EXCEPTION_;
}

/* A capsule's destructor: runs the deleter of the tensor it holds while its
 * name is legacy or versioned (the capsule still owns it), else nothing. */
DLGEN_INLINE void dlgen_release_capsule_(PyObject *capsule, const char *legacy, const char *versioned) {
  DLGEN_SAVE_EXCEPTION_;
  if (PyCapsule_IsValid(capsule, legacy)) {
    dlgen_release_legacy((DLGEN_MANAGED_TENSOR *)PyCapsule_GetPointer(capsule, legacy));
  }
#if DLGEN_HAS_VERSIONED
  else if (PyCapsule_IsValid(capsule, versioned)) {
    dlgen_release_versioned((DLGEN_MANAGED_TENSOR_VERSIONED *)PyCapsule_GetPointer(capsule, versioned));
  }
#else
  (void)versioned;
#endif
  DLGEN_RESTORE_EXCEPTION_;
}

DLGEN_INLINE void dlgen_capsule_destructor_(PyObject *capsule) {
#if DLGEN_HAS_VERSIONED
  dlgen_release_capsule_(capsule, DLGEN_CAPSULE, DLGEN_VERSIONED_CAPSULE);
#else
  dlgen_release_capsule_(capsule, DLGEN_CAPSULE, NULL);
#endif
}
#if DLGEN_HAS_VERSIONED

/*!
 * A new capsule named DLGEN_VERSIONED_CAPSULE that owns managed. It takes
 * managed in every case: when it cannot be made, the deleter has run and
 * NULL is returned with the exception set.
 */
DLGEN_INLINE PyObject *dlgen_capsule_versioned(DLGEN_MANAGED_TENSOR_VERSIONED *managed) {
  PyObject *capsule = PyCapsule_New(managed, DLGEN_VERSIONED_CAPSULE, dlgen_capsule_destructor_);
  if (capsule == NULL) {
    dlgen_release_versioned_keeping_error_(managed);
  }
  return capsule;
}
#endif /* DLGEN_HAS_VERSIONED */

/*! A new capsule named DLGEN_CAPSULE that owns managed, as above. */
DLGEN_INLINE PyObject *dlgen_capsule_legacy(DLGEN_MANAGED_TENSOR *managed) {
  PyObject *capsule = PyCapsule_New(managed, DLGEN_CAPSULE, dlgen_capsule_destructor_);
  if (capsule == NULL) {
    dlgen_release_legacy_keeping_error_(managed);
  }
  return capsule;
}

/*!
 * Takes the tensor out of a DLPack capsule, exactly once: renames the
 * capsule used_*, so that its destructor leaves the tensor to the caller,
 * who calls its deleter once. Sets the tensor pointer the capsule's name
 * calls for (and the other to NULL, where the release has two kinds).
 * Returns 0, or -1 with a ValueError set, in the words of dlgen's Python
 * modules, for a consumed capsule or another object.
 */
#if DLGEN_HAS_VERSIONED
DLGEN_INLINE int dlgen_consume_capsule(PyObject *capsule, DLGEN_MANAGED_TENSOR_VERSIONED **versioned,
                                       DLGEN_MANAGED_TENSOR **legacy) {
#else
DLGEN_INLINE int dlgen_consume_capsule(PyObject *capsule, DLGEN_MANAGED_TENSOR **legacy) {
#endif
  const char *name = PyCapsule_CheckExact(capsule) ? PyCapsule_GetName(capsule) : NULL;
  void *pointer;
  *legacy = NULL;
#if DLGEN_HAS_VERSIONED
  *versioned = NULL;
  if (name != NULL && strcmp(name, DLGEN_VERSIONED_CAPSULE) == 0) {
    pointer = PyCapsule_GetPointer(capsule, name);
    if (pointer == NULL || PyCapsule_SetName(capsule, DLGEN_USED_VERSIONED_CAPSULE) != 0) {
      return -1;
    }
    *versioned = (DLGEN_MANAGED_TENSOR_VERSIONED *)pointer;
    return 0;
  }
  if (name != NULL && strcmp(name, DLGEN_USED_VERSIONED_CAPSULE) == 0) {
    PyErr_SetString(PyExc_ValueError, "this DLPack capsule was already consumed");
    return -1;
  }
#endif
  if (name != NULL && strcmp(name, DLGEN_CAPSULE) == 0) {
    pointer = PyCapsule_GetPointer(capsule, name);
    if (pointer == NULL || PyCapsule_SetName(capsule, DLGEN_USED_CAPSULE) != 0) {
      return -1;
    }
    *legacy = (DLGEN_MANAGED_TENSOR *)pointer;
    return 0;
  }
  if (name != NULL && strcmp(name, DLGEN_USED_CAPSULE) == 0) {
    PyErr_SetString(PyExc_ValueError, "this DLPack capsule was already consumed");
    return -1;
  }
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError, "expected a DLPack capsule, not %.200s", Py_TYPE(capsule)->tp_name);
    return -1;
  }
  {
    PyObject *shown = name == NULL ? Py_None : PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
    if (shown == NULL) {
      return -1;
    }
    if (shown == Py_None) {
      Py_INCREF(shown);
    }
#if DLGEN_HAS_VERSIONED
    PyErr_Format(PyExc_ValueError, "a capsule named %R is not a DLPack capsule ('%s' or '%s')", shown,
                 DLGEN_VERSIONED_CAPSULE, DLGEN_CAPSULE);
#else
    PyErr_Format(PyExc_ValueError, "a capsule named %R is not a DLPack capsule ('%s')", shown, DLGEN_CAPSULE);
#endif
    Py_DECREF(shown);
    return -1;
  }
}

/*!
 * Raises the Python exception of a refusal: the class dlgen's Python
 * modules raise for its check (BufferError for an import check), with its
 * words. Returns -1, for `return dlgen_raise(&err);`.
 */
DLGEN_INLINE int dlgen_raise(const dlgen_error *err) {
  char stack[256], *text = stack;
  size_t length = dlgen_format_error(err, stack, sizeof stack);
  if (length >= sizeof stack) {
    text = (char *)PyMem_Malloc(length + 1);
    if (text == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    dlgen_format_error(err, text, length + 1);
  }
  PyErr_SetString(dlgen_rule_exception_(err->rule), text);
  if (text != stack) {
    PyMem_Free(text);
  }
  return -1;
}

/*
 * A C extension's DLPack in a few lines: __dlpack__, __dlpack_device__ and
 * from_dlpack over memory the extension describes with a DLTensor.
 *
 * The GIL: call these with it held. The deleter of an export may run on any
 * thread, held or not: it takes the GIL (PyGILState_Ensure) to drop its
 * reference, and after the interpreter finalized it does nothing (the
 * owner and a small allocation are then left, as NumPy leaves them).
 *
 * Ownership: an export keeps a reference to owner, and its own copy of the
 * shape and strides, until the consumer's deleter runs; an import returns a
 * new reference to an owner object whose destruction runs the producer's
 * deleter once, and the view points into the producer's tensor as long as
 * the caller holds that owner.
 */

/* The words of dlgen's Python modules for the same mistakes. */
#define DLGEN_PY_LEGACY_READ_ONLY_ \
  "a read-only tensor cannot be exported as an unversioned capsule, which has no read-only flag"
#define DLGEN_PY_LEGACY_PADDED_ \
  "padded sub-byte elements cannot be exported as an unversioned capsule, which has no flag to say so"

#if DLGEN_HAS_VERSIONED
#define DLGEN_PY_READ_ONLY_ DLGEN_READ_ONLY_FLAG
#else
#define DLGEN_PY_READ_ONLY_ 0 /* a legacy tensor says nothing of it */
#endif

/* An export: the tensor a capsule hands over, the owner it keeps, and the
 * shape and strides after it, in one allocation. */
typedef struct {
#if DLGEN_HAS_VERSIONED
  DLGEN_MANAGED_TENSOR_VERSIONED versioned;
  dlgen_versioned_as_legacy legacy; /* for a consumer that asks for no version */
#else
  DLGEN_MANAGED_TENSOR legacy;
#endif
  PyObject *owner;
} dlgen_py_export_;

DLGEN_INLINE void dlgen_py_export_free_(dlgen_py_export_ *e) {
  if (Py_IsInitialized()) { /* after finalisation the owner is gone with the interpreter */
    PyGILState_STATE gil = PyGILState_Ensure();
    Py_DECREF(e->owner);
    PyGILState_Release(gil);
  }
  PyMem_RawFree(e); /* the raw allocator is malloc's: safe without the GIL, and after */
}

#if DLGEN_HAS_VERSIONED
DLGEN_INLINE void dlgen_py_export_deleter_(DLGEN_MANAGED_TENSOR_VERSIONED *tensor) {
  dlgen_py_export_free_((dlgen_py_export_ *)tensor->manager_ctx);
}
#else
DLGEN_INLINE void dlgen_py_export_deleter_(DLGEN_MANAGED_TENSOR *tensor) {
  dlgen_py_export_free_((dlgen_py_export_ *)tensor->manager_ctx);
}
#endif

/* Reads a (major, minor) or (device_type, device_id) pair of Python ints;
 * -1 with the exception set. */
DLGEN_INLINE int dlgen_py_pair_(PyObject *pair, long *first, long *second) {
  if ((*first = PyLong_AsLong(PyTuple_GET_ITEM(pair, 0))) == -1 && PyErr_Occurred()) {
    return -1; /* before the second item's __index__ runs */
  }
  *second = PyLong_AsLong(PyTuple_GET_ITEM(pair, 1));
  return PyErr_Occurred() ? -1 : 0;
}

/* dlgen:checker c-stream (docs/rules.md lists every checker) */
/*!
 * A complete __dlpack__(*, stream=None, max_version=None, dl_device=None,
 * copy=None) (args and kwargs as METH_VARARGS | METH_KEYWORDS gives them)
 * for memory the producer lends as it is: view describes it (strides NULL:
 * row-major), flags its tensor flags where the release has them (read-only
 * memory, padded sub-byte elements); other bits, IS_COPIED among them, are
 * not exported. Returns a new capsule, versioned
 * when max_version >= (1, 0) (where the release has one), else legacy; its
 * tensor holds a copy of view's shape and strides and a reference to owner
 * (the object that keeps the memory alive) until its deleter runs. Refuses
 * what dlgen's Python modules refuse, in their words: a stream on a device
 * without streams (ValueError), a copy (copy=True, or a dl_device the memory
 * is not on: BufferError), a read-only or padded export as a legacy capsule.
 */
DLGEN_INLINE PyObject *dlgen_py_dlpack(PyObject *owner, const DLTensor *view, uint64_t flags, PyObject *args,
                                       PyObject *kwargs) {
  static const char *keywords[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
  long major = 0, minor = 0, device_type = view->device.device_type, device_id = view->device.device_id;
  int versioned, copied, here;
  int32_t k, ndim = view->ndim;
  int64_t *dims;
  dlgen_py_export_ *e;
  DLGEN_MANAGED_TENSOR *legacy;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", (char **)keywords, &stream, &max_version,
                                   &dl_device, &copy)) {
    return NULL;
  }
  if (max_version != Py_None && (!PyTuple_CheckExact(max_version) || PyTuple_GET_SIZE(max_version) != 2)) {
    return PyErr_Format(PyExc_TypeError, "max_version must be a (major, minor) tuple, not %R", max_version);
  }
  if (max_version != Py_None && dlgen_py_pair_(max_version, &major, &minor) != 0) {
    return NULL;
  }
  if (dl_device != Py_None) {
    if (!PyTuple_Check(dl_device) || PyTuple_GET_SIZE(dl_device) != 2) {
      PyErr_SetString(PyExc_TypeError, "dl_device must be a (device_type, device_id) tuple");
      return NULL;
    }
    if (dlgen_py_pair_(dl_device, &device_type, &device_id) != 0) {
      return NULL;
    }
  }
  if (stream != Py_None && dlgen_streamless((int32_t)device_type)) {
    dlgen_error err;
    uint64_t v[2];
    v[0] = (uint64_t)(int64_t)device_type;
    v[1] = (uint64_t)(int64_t)device_id;
    dlgen_refuse_(&err, DLGEN_RULE_STREAM_REFUSED, "ss", v, NULL);
    dlgen_raise(&err);
    return NULL;
  }
  here = (device_type == view->device.device_type && device_id == view->device.device_id) ||
         (device_type == kDLCPU && device_id == 0 && dlgen_host_readable(view->device.device_type));
  if (!here && copy == Py_False) {
    return PyErr_Format(PyExc_BufferError,
                        "a tensor on device (%d, %d) cannot be exported to device (%ld, %ld) without a copy, "
                        "and copy=False was asked",
                        (int)view->device.device_type, (int)view->device.device_id, device_type, device_id);
  }
  versioned = DLGEN_HAS_VERSIONED && major >= 1;
  if (!versioned && (flags & DLGEN_PY_READ_ONLY_) != 0) {
    PyErr_SetString(PyExc_BufferError, DLGEN_PY_LEGACY_READ_ONLY_);
    return NULL;
  }
  if (!versioned && dlgen_padded_(flags)) {
    PyErr_SetString(PyExc_BufferError, DLGEN_PY_LEGACY_PADDED_);
    return NULL;
  }
  if ((copied = PyObject_IsTrue(copy)) != 0 || !here) {
    if (copied < 0) {
      return NULL;
    }
    if (here) { /* copy=True onto the tensor's own device */
      return PyErr_Format(PyExc_BufferError,
                          "cannot copy a tensor on device (%d, %d), as copy=True asks: its producer lends its "
                          "memory as it is (dlgen_py_dlpack) and makes no copy",
                          (int)view->device.device_type, (int)view->device.device_id);
    }
    return PyErr_Format(PyExc_BufferError,
                        "cannot copy a tensor on device (%d, %d) to device (%ld, %ld): its producer "
                        "lends its memory as it is (dlgen_py_dlpack) and makes no copy",
                        (int)view->device.device_type, (int)view->device.device_id, device_type, device_id);
  }
  if (ndim < 0 || ndim > DLGEN_MAX_NDIM) { /* the same words as an import's check */
    dlgen_error err;
    uint64_t v[2];
    v[0] = (uint64_t)(int64_t)ndim;
    v[1] = DLGEN_MAX_NDIM;
    dlgen_refuse_(&err, DLGEN_RULE_NDIM_RANGE, "ss", v, NULL);
    dlgen_raise(&err);
    return NULL;
  }
  e = (dlgen_py_export_ *)PyMem_RawCalloc(1, sizeof *e + 2 * (size_t)ndim * sizeof(int64_t));
  if (e == NULL) {
    return PyErr_NoMemory();
  }
  dims = (int64_t *)(void *)(e + 1);
  for (k = 0; k < ndim; k++) {
    dims[k] = view->shape[k];
    dims[ndim + k] = dlgen_stride(view, k);
  }
  Py_INCREF(owner);
  e->owner = owner;
#if DLGEN_HAS_VERSIONED
  e->versioned.version.major = DLGEN_MAJOR_VERSION;
  e->versioned.version.minor = DLGEN_MINOR_VERSION;
  e->versioned.manager_ctx = e;
  e->versioned.deleter = dlgen_py_export_deleter_;
  /* The memory's own flags only: an export is never a private copy, even of
   * an import that was one (IS_COPIED). */
  e->versioned.flags = flags & (DLGEN_READ_ONLY_FLAG
#if DLGEN_HAS_PADDED_FLAG
                                | DLGEN_PADDED_FLAG
#endif
                               );
  e->versioned.dl_tensor = *view;
  e->versioned.dl_tensor.shape = dims;
  e->versioned.dl_tensor.strides = dims + ndim;
  if (versioned) {
    return dlgen_capsule_versioned(&e->versioned);
  }
  legacy = dlgen_wrap_versioned(&e->legacy, &e->versioned, NULL);
#else
  e->legacy.manager_ctx = e;
  e->legacy.deleter = dlgen_py_export_deleter_;
  e->legacy.dl_tensor = *view;
  e->legacy.dl_tensor.shape = dims;
  e->legacy.dl_tensor.strides = dims + ndim;
  legacy = &e->legacy;
#endif
  return dlgen_capsule_legacy(legacy);
}

/*! A complete __dlpack_device__ for memory view describes: (device_type, device_id). */
DLGEN_INLINE PyObject *dlgen_py_dlpack_device(const DLTensor *view) {
  return Py_BuildValue("(ii)", (int)view->device.device_type, (int)view->device.device_id);
}

/*!
 * DLGEN_PY_EXPORT(TYPE, VIEW, FLAGS); defines TYPE_dlpack and
 * TYPE_dlpack_device, __dlpack__ and __dlpack_device__ (dlgen_py_dlpack and
 * dlgen_py_dlpack_device) for objects of the C type TYPE (a struct that
 * begins with PyObject_HEAD) whose member VIEW, a DLTensor, describes memory
 * the object keeps alive (an export keeps a reference to the object),
 * with the tensor flags in member FLAGS (read-only memory, where the release
 * has flags). DLGEN_PY_EXPORT_METHODS(TYPE) is their two entries in the
 * type's PyMethodDef table.
 */
#define DLGEN_PY_EXPORT(TYPE, VIEW, FLAGS) \
  static PyObject *TYPE##_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) { \
    return dlgen_py_dlpack(self, &((TYPE *)self)->VIEW, ((TYPE *)self)->FLAGS, args, kwargs); \
  } \
  static PyObject *TYPE##_dlpack_device(PyObject *self, PyObject *unused) { \
    (void)unused; \
    return dlgen_py_dlpack_device(&((TYPE *)self)->VIEW); \
  } \
  struct TYPE##_dlgen_export_ /* takes the caller's ';' */
#define DLGEN_PY_EXPORT_METHODS(TYPE) \
  {"__dlpack__", (PyCFunction)(void (*)(void))TYPE##_dlpack, METH_VARARGS | METH_KEYWORDS, \
   "A DLPack capsule of the memory, lent as it is."}, \
  {"__dlpack_device__", TYPE##_dlpack_device, METH_NOARGS, "(device_type, device_id) of the memory."}

/* The owner of an imported tensor: a capsule of its own name, whose
 * destructor runs the tensor's deleter, once. */
#define DLGEN_PY_OWNER_ "dlgen.imported_dltensor"
#define DLGEN_PY_OWNER_VERSIONED_ "dlgen.imported_dltensor_versioned"

DLGEN_INLINE void dlgen_py_owner_destructor_(PyObject *owner) {
  dlgen_release_capsule_(owner, DLGEN_PY_OWNER_, DLGEN_PY_OWNER_VERSIONED_);
}

/* x.__dlpack__(max_version=this release's, copy=copy unless None); on a
 * TypeError (a producer older than max_version) once more without
 * keywords, as dlgen's Python modules ask. */
DLGEN_INLINE PyObject *dlgen_py_request_(PyObject *x, PyObject *copy) {
  PyObject *dlpack = PyObject_GetAttrString(x, "__dlpack__"), *none = NULL, *kwargs, *capsule = NULL;
  if (dlpack == NULL) {
    PyObject *name;
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
      return NULL;
    }
    PyErr_Clear();
    name = PyObject_GetAttrString((PyObject *)Py_TYPE(x), "__name__");
    if (name != NULL) {
      PyErr_Format(PyExc_TypeError,
                   "from_dlpack(x): %U does not support the DLPack protocol: pass an object with __dlpack__() "
                   "(a NumPy, PyTorch, JAX or CuPy array) or a DLPack capsule; a list needs an array first "
                   "(numpy.asarray(x))",
                   name);
      Py_DECREF(name);
    }
    return NULL;
  }
#if DLGEN_HAS_VERSIONED
  kwargs = Py_BuildValue("{s(ii)}", "max_version", DLGEN_MAJOR_VERSION, DLGEN_MINOR_VERSION);
#else
  kwargs = PyDict_New();
#endif
  if (kwargs != NULL && (copy == Py_None || PyDict_SetItemString(kwargs, "copy", copy) == 0) &&
      (none = PyTuple_New(0)) != NULL) {
    capsule = PyObject_Call(dlpack, none, kwargs);
    if (capsule == NULL && PyDict_Size(kwargs) > 0 && PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      capsule = PyObject_Call(dlpack, none, NULL);
    }
  }
  Py_XDECREF(none);
  Py_XDECREF(kwargs);
  Py_DECREF(dlpack);
  return capsule;
}

/* copy=True asked of a producer that lent its memory as it is. */
DLGEN_INLINE PyObject *dlgen_py_no_copy_(void) {
  PyErr_SetString(PyExc_BufferError, "copy=True was asked, and the producer lent its memory without a copy "
                                     "(no IS_COPIED flag); dlgen_py_from_dlpack makes no copy of its own");
  return NULL;
}

/*!
 * A complete from_dlpack(x, copy=copy) for a C extension: asks x (a DLPack
 * object, or a capsule as it is) for a versioned capsule (legacy from an
 * older producer), takes its tensor exactly once and makes the import checks
 * of its version; a refused tensor's deleter runs at once and the refusal is
 * raised as dlgen_raise raises it. Else fills *view with the tensor as the
 * producer describes it (data, byte_offset, shape and strides pointing into
 * the producer's tensor; strides may be NULL in a legacy or pre-1.2 tensor:
 * dlgen_stride reads both) and *flags (0 for a legacy tensor), and returns a
 * new reference to the tensor's owner: keep it as long as view is used; its
 * destruction runs the producer's deleter, once. NULL with an exception set
 * on failure. copy (Py_None, or a Python truth value) goes to the producer;
 * copy=True takes only a tensor the producer flagged IS_COPIED (a legacy
 * one cannot say so), else BufferError: this helper makes no copy itself.
 * What the extension itself accepts (dtype, device) is its own check, after
 * this one.
 */
DLGEN_INLINE PyObject *dlgen_py_from_dlpack(PyObject *x, PyObject *copy, DLTensor *view, uint64_t *flags) {
  PyObject *capsule = PyCapsule_CheckExact(x) ? (Py_INCREF(x), x) : dlgen_py_request_(x, copy), *owner;
  DLGEN_MANAGED_TENSOR *legacy;
  dlgen_error err;
  int copied;
#if DLGEN_HAS_VERSIONED
  DLGEN_MANAGED_TENSOR_VERSIONED *versioned;
  int taken = capsule != NULL ? dlgen_consume_capsule(capsule, &versioned, &legacy) : -1;
#else
  int taken = capsule != NULL ? dlgen_consume_capsule(capsule, &legacy) : -1;
#endif
  Py_XDECREF(capsule);
  if (taken != 0) {
    return NULL;
  }
#if DLGEN_HAS_VERSIONED
  if (versioned != NULL) {
    if (dlgen_check_versioned(versioned, &err) != DLGEN_OK) {
      dlgen_release_versioned(versioned);
      dlgen_raise(&err);
      return NULL;
    }
    if (copy != Py_None && (copied = PyObject_IsTrue(copy)) != 0 &&
        (copied < 0 || (versioned->flags & DLGEN_IS_COPIED_FLAG) == 0)) {
      dlgen_release_versioned_keeping_error_(versioned);
      return copied < 0 ? NULL : dlgen_py_no_copy_();
    }
    if ((owner = PyCapsule_New(versioned, DLGEN_PY_OWNER_VERSIONED_, dlgen_py_owner_destructor_)) == NULL) {
      dlgen_release_versioned_keeping_error_(versioned);
      return NULL;
    }
    *view = versioned->dl_tensor;
    *flags = versioned->flags;
    return owner;
  }
#endif
  if (dlgen_check_legacy(legacy, &err) != DLGEN_OK) {
    dlgen_release_legacy(legacy);
    dlgen_raise(&err);
    return NULL;
  }
  if (copy != Py_None && (copied = PyObject_IsTrue(copy)) != 0) { /* a legacy tensor cannot say it */
    dlgen_release_legacy_keeping_error_(legacy);
    return copied < 0 ? NULL : dlgen_py_no_copy_();
  }
  if ((owner = PyCapsule_New(legacy, DLGEN_PY_OWNER_, dlgen_py_owner_destructor_)) == NULL) {
    dlgen_release_legacy_keeping_error_(legacy);
    return NULL;
  }
  *view = legacy->dl_tensor;
  *flags = 0;
  return owner;
}
#endif /* Py_PYTHON_H */
