/* tests/test_profiling.c — accel_queue_timestamp (monotonic in queue order, between host readings,
   bracketing a kernel of known duration, recording errors) and the trace (Chrome trace-event JSON: a
   two-queue pipeline's file parsed here by a small JSON reader and checked for structure; a trace
   longer than the event buffer; allocation failures while opening it). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

#if defined(ACCEL_TEST_HAVE_CUDA) && defined(__linux__) && TEST_HAVE_THREADS
#  include <dlfcn.h>
#  define PROFILING_MOCK 1   /* the mock driver's hooks (tests/mock_cuda.c) */
#else
#  define PROFILING_MOCK 0
#endif

static uint64_t host_ns(void) { return accel_host_time_ns(); }

/* A CPU kernel of known duration: spins until constants[0] microseconds have passed on the host clock. */
static void k_spin(const accel_dispatch* d) {
    uint64_t end = host_ns() + (uint64_t)d->constants[0] * 1000u;
    while (host_ns() < end) { }
}

static uint64_t read_u64(accel_buffer* b, size_t offset) {
    uint64_t v = 0;
    CHECK_OK(accel_buffer_read(b, offset, &v, sizeof v));
    return v;
}

/* Timestamps need the backend to translate them; where it does not yet, the submit says UNSUPPORTED. */
static bool stamps_supported(accel_device* dev) {
    accel_queue* q;
    accel_buffer* b;
    accel_result r;
    if (accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q) != ACCEL_OK) return false;
    if (test_buffer_create(dev, 8, ACCEL_MEMORY_HOST, &b) != ACCEL_OK) { accel_queue_destroy(q); return false; }
    accel_queue_timestamp(q, b, 0);
    r = accel_queue_finish(q, ACCEL_WAIT_FOREVER);
    accel_buffer_destroy(b);
    accel_queue_destroy(q);
    return r == ACCEL_OK;
}

TEST(timestamps_monotonic_between_host_readings) {
    accel_device* dev;
    accel_queue *q, *k;
    accel_buffer *b, *d;
    accel_signal* s;
    REQUIRE_OK(test_device_create(&dev));
    if (!stamps_supported(dev)) { accel_device_destroy(dev); SKIP("timestamps are not on this backend yet"); }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &k));
    REQUIRE_OK(test_buffer_create(dev, 8 * 17, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(test_buffer_create(dev, 16, ACCEL_MEMORY_DEVICE, &d));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    uint64_t before = host_ns();
    for (int i = 0; i < 8; i++) accel_queue_timestamp(q, b, 8u * (unsigned)i);   /* compute queue: 0..7 */
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    accel_queue_wait(k, s, 1);                                                  /* copy queue: 8..15, after */
    for (int i = 8; i < 16; i++) accel_queue_timestamp(k, b, 8u * (unsigned)i);
    accel_queue_timestamp(k, d, 8);                                             /* 16: into DEVICE memory, */
    accel_queue_signal(k, s, 2);
    CHECK_OK(accel_queue_submit(k));
    accel_queue_wait(q, s, 2);
    accel_queue_copy(q, b, 8 * 16, d, 8, 8);                                    /* there before the signal after it */
    CHECK_OK(accel_queue_finish(k, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    uint64_t after = host_ns();
    uint64_t prev = before;
    for (int i = 0; i < 17; i++) {
        uint64_t t = read_u64(b, 8u * (unsigned)i);
        if (!CHECK(t >= prev)) fprintf(stderr, "    timestamp %d: %llu < %llu\n", i, (unsigned long long)t, (unsigned long long)prev);
        prev = t;
    }
    CHECK(prev <= after);
    accel_device_destroy(dev);
}

/* CUDA: a timestamp's time is read from its timing event after its point left the queue's ring, while the
   queue may already take that slot again for a newer timestamp: the newer one must not record the event the
   older one is being read from (it did: the read found the new record not reached, logged
   cuEventElapsedTime's NOT_READY, and gave the older timestamp the read's host time). The mock's hook runs
   inside the read: four more timestamps, each behind a gate not set yet, which take the ring's free slots,
   the one just read from last (14 points in its first 16 slots: a segment keeps two free). */
#if PROFILING_MOCK
/* A device of the backend under test when that is CUDA on the mock driver, and the mock's hook into
   cuEventElapsedTime (mock_cuda_on_elapsed) in *on; NULL elsewhere. */
typedef void (*mock_on_elapsed_fn)(void (*fn)(void* user), void* user);
static accel_device* mock_device(mock_on_elapsed_fn* on) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    accel_device* dev = NULL;
    void *lib, *sym = NULL;
    if (test_g.backend != accel_cuda_backend() || !path || !strstr(path, "mock")) return NULL;
    if (!CHECK_OK(test_device_create(&dev))) return NULL;   /* the driver loaded */
    if ((lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) != NULL) sym = dlsym(lib, "mock_cuda_on_elapsed");
    if (!sym) { accel_device_destroy(dev); return NULL; }
    memcpy(on, &sym, sizeof sym);
    return dev;
}
typedef struct stamp_reuse {
    accel_queue* q;
    accel_buffer* b;
    accel_signal* later;   /* the gate of the four: set once the read is over */
    atomic_int entered;    /* the first read runs the hook */
    atomic_int fired;      /* ... and its four are submitted (the test then finishes the queue) */
} stamp_reuse;
static void stamp_reuse_hook(void* user) {
    stamp_reuse* r = (stamp_reuse*)user;
    if (atomic_fetch_add(&r->entered, 1) != 0) return;
    for (unsigned i = 14; i < 18; i++) {
        accel_queue_wait(r->q, r->later, 1);
        accel_queue_timestamp(r->q, r->b, 8u * i);
        CHECK_OK(accel_queue_submit(r->q));
    }
    atomic_store(&r->fired, 1);
}
#endif
TEST(timestamp_event_kept_until_its_time_is_read) {
#if PROFILING_MOCK
    mock_on_elapsed_fn on_elapsed;
    accel_device* dev;
    accel_signal* first;
    stamp_reuse r;
    if (!(dev = mock_device(&on_elapsed))) SKIP("needs the CUDA backend on tests/mock_cuda.c");
    memset(&r, 0, sizeof r);
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &r.q));
    REQUIRE_OK(test_buffer_create(dev, 8 * 18, ACCEL_MEMORY_HOST, &r.b));
    REQUIRE_OK(accel_signal_create(dev, 0, &first));
    REQUIRE_OK(accel_signal_create(dev, 0, &r.later));
    uint64_t before = host_ns();
    for (unsigned i = 0; i < 14; i++) {   /* one point each, the first behind the gate */
        if (i == 0) accel_queue_wait(r.q, first, 1);
        accel_queue_timestamp(r.q, r.b, 8u * i);
        CHECK_OK(accel_queue_submit(r.q));
    }
    test_log_reset();
    on_elapsed(stamp_reuse_hook, &r);
    accel_signal_set(first, 1);
    for (int i = 0; i < 100000 && !atomic_load(&r.fired); i++)   /* 10 s at most */
        accel_signal_wait(first, 2, 100000);
    on_elapsed(NULL, NULL);
    CHECK(atomic_load(&r.fired) >= 1);   /* the four were submitted */
    accel_signal_set(r.later, 1);
    CHECK_OK(accel_queue_finish(r.q, ACCEL_WAIT_FOREVER));
    uint64_t after = host_ns(), prev = before;
    if (!CHECK(test_log_count(ACCEL_LOG_ERROR) == 0)) test_log_print_last();
    for (unsigned i = 0; i < 18; i++) {
        uint64_t t = read_u64(r.b, 8u * i);
        if (!CHECK(t >= prev)) fprintf(stderr, "    timestamp %u: %llu < %llu\n", i, (unsigned long long)t, (unsigned long long)prev);
        prev = t;
    }
    CHECK(prev <= after);
    accel_device_destroy(dev);
#else
    SKIP("needs the CUDA backend on tests/mock_cuda.c");
#endif
}

/* CUDA: the reference a stamp's event is converted with is taken again each second, each time off by up
   to half its bracket: two stamps either side of a new one must still come out in queue order. The mock's
   hook moves the reference 1 ms back halfway through the reads of 32 stamps enqueued before a gate (so
   their enqueue times do not bound them): the later ones came out up to 1 ms before the earlier ones. */
#if PROFILING_MOCK
typedef struct stamp_jump { accel_device* dev; atomic_int reads; } stamp_jump;
static void stamp_jump_hook(void* user) {   /* inside the conversion: its lock is held */
    stamp_jump* j = (stamp_jump*)user;
    if (atomic_fetch_add(&j->reads, 1) == 16) accel_i_cu_dev(j->dev)->cal_host -= 1000000u;
}
#endif
TEST(timestamps_stay_in_order_across_a_new_reference) {
#if PROFILING_MOCK
    mock_on_elapsed_fn on_elapsed;
    accel_queue* q;
    accel_buffer* b;
    accel_signal* gate;
    stamp_jump j;
    memset(&j, 0, sizeof j);
    if (!(j.dev = mock_device(&on_elapsed))) SKIP("needs the CUDA backend on tests/mock_cuda.c");
    REQUIRE_OK(accel_queue_create(j.dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(j.dev, 8 * 32, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(accel_signal_create(j.dev, 0, &gate));
    accel_queue_timestamp(q, b, 0);   /* the first reference, before the hook counts */
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_queue_wait(q, gate, 1);
    for (unsigned i = 0; i < 32; i++) accel_queue_timestamp(q, b, 8u * i);
    CHECK_OK(accel_queue_submit(q));
    on_elapsed(stamp_jump_hook, &j);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    on_elapsed(NULL, NULL);
    CHECK(atomic_load(&j.reads) >= 17);
    uint64_t prev = 0;
    for (unsigned i = 0; i < 32; i++) {
        uint64_t t = read_u64(b, 8u * i);
        if (!CHECK(t >= prev)) fprintf(stderr, "    timestamp %u: %llu < %llu\n", i, (unsigned long long)t, (unsigned long long)prev);
        prev = t;
    }
    accel_device_destroy(j.dev);
#else
    SKIP("needs the CUDA backend on tests/mock_cuda.c");
#endif
}

/* CPU: a kernel that spins a known time. GPU: the slow kernel, whose duration the host brackets from
   outside: the stamps around it lie within the host readings around the whole submission, and the span
   between them is much longer than the span between two stamps with nothing in between. Its iteration
   count grows tenfold until the stamps around it lie 0.5 ms apart (4,000 iterations take milliseconds on
   lavapipe and the mock, 37-47 us on an H100); a stamp that does not follow the kernel never gets there. */
static void bracket_run(accel_queue* q, accel_buffer* b, accel_program* spin, accel_buffer* out, const uint32_t* consts,
                        uint32_t count, uint32_t groups, uint64_t* before, uint64_t* after) {
    *before = host_ns();
    accel_queue_timestamp(q, b, 0);
    if (out) accel_queue_exec(q, spin, &out, 1, consts, count, accel_exec_1d(groups, 64));
    else accel_queue_exec(q, spin, NULL, 0, consts, count, accel_exec_1d(1, 1));
    accel_queue_timestamp(q, b, 8);
    accel_queue_timestamp(q, b, 16);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    *after = host_ns();
}
TEST(timestamps_bracket_a_kernel_of_known_duration) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer *b, *out = NULL;
    accel_program* spin;
    const uint32_t us = 20000;   /* 20 ms */
    uint32_t slow[3] = { 4096, 4000, 7 };   /* n, iters, seed */
    uint64_t before, after;
    bool cpu = test_backend_is_cpu();
    REQUIRE_OK(test_device_create(&dev));
    if (!stamps_supported(dev)) { accel_device_destroy(dev); SKIP("timestamps are not on this backend yet"); }
    if (cpu) {
        accel_program_desc pd;
        memset(&pd, 0, sizeof pd);
        pd.name = "spin"; pd.cpu = k_spin; pd.constant_count = 1;
        REQUIRE_OK(accel_program_create(dev, &pd, &spin));
    } else {
        REQUIRE_OK(test_program_create(dev, TK_SLOW, &spin));
        REQUIRE_OK(test_buffer_create(dev, 4 * 4096, ACCEL_MEMORY_DEVICE, &out));
    }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 24, ACCEL_MEMORY_HOST, &b));
    if (cpu) bracket_run(q, b, spin, NULL, &us, 1, 1, &before, &after);
    else
        for (;;) {
            bracket_run(q, b, spin, out, slow, 3, slow[0], &before, &after);
            if (read_u64(b, 8) - read_u64(b, 0) >= 500000u || slow[1] >= 40000000u) break;
            slow[1] *= 10;
        }
    uint64_t t0 = read_u64(b, 0), t1 = read_u64(b, 8), t2 = read_u64(b, 16);
    if (!CHECK(before <= t0 && t0 <= t1 && t1 <= t2 && t2 <= after))
        fprintf(stderr, "    before %llu, stamps %llu %llu %llu, after %llu\n", (unsigned long long)before, (unsigned long long)t0,
                (unsigned long long)t1, (unsigned long long)t2, (unsigned long long)after);
    if (cpu) {
        CHECK(t1 - t0 >= (uint64_t)us * 1000u);            /* the kernel ran between them */
        CHECK(t1 - t0 < (uint64_t)us * 1000u + 2000000000u);  /* and they are nanoseconds, not ticks */
        CHECK(t2 - t1 < (uint64_t)us * 1000u);              /* nothing ran between the last two */
    } else {
        if (!CHECK(t1 - t0 > 10 * (t2 - t1) && t1 - t0 >= 500000u))   /* the kernel (ms), then nothing (us) */
            fprintf(stderr, "    kernel %llu ns (%u iterations), empty %llu ns\n", (unsigned long long)(t1 - t0), slow[1],
                    (unsigned long long)(t2 - t1));
        uint32_t v = 0;
        CHECK_OK(accel_buffer_read(out, 4 * 4095, &v, 4));
        CHECK_EQ_U64(v, test_slow_hash(4095u ^ slow[2], slow[1]));
    }
    accel_device_destroy(dev);
}

TEST(timestamp_recording_errors) {
    accel_device *dev, *other;
    accel_queue* q;
    accel_buffer *b, *b2;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_device_create(&other));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 16, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(test_buffer_create(other, 16, ACCEL_MEMORY_HOST, &b2));
    accel_queue_timestamp(NULL, b, 0);                  /* a no-op */
    accel_queue_timestamp(q, NULL, 0);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_queue_timestamp(q, b, 4);                     /* not a multiple of 8 */
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_queue_timestamp(q, b, 16);                    /* offset + 8 beyond the buffer */
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_queue_timestamp(q, b, SIZE_MAX - 7);          /* offset + 8 wraps */
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    if (test_backend_is_cpu()) {
        accel_queue_timestamp(q, b2, 0);                /* the CPU backend shares host memory: fine */
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    } else {
        accel_queue_timestamp(q, b2, 0);                /* another device's buffer */
        CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    }
    accel_device_destroy(dev);
    accel_device_destroy(other);
}

/* ==== a small JSON reader (enough to check a trace) ==== */
typedef enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jtype;
typedef struct jval {
    jtype type;
    char* str;                 /* J_STR */
    double num;                /* J_NUM */
    uint64_t ns;               /* J_NUM: microseconds with up to 3 decimals, exactly, in ns */
    int n;                     /* J_ARR / J_OBJ: items */
    struct jval* items;
    char** keys;               /* J_OBJ */
} jval;
typedef struct jreader { const char* p; const char* end; } jreader;

static void jfree(jval* v) {
    for (int i = 0; i < v->n; i++) { jfree(&v->items[i]); if (v->keys) free(v->keys[i]); }
    free(v->items); free(v->keys); free(v->str);
}
static void jws(jreader* r) { while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t')) r->p++; }
static int jvalue(jreader* r, jval* v, int depth);
static int jstring(jreader* r, char** out) {
    size_t cap = 16, n = 0;
    char* s;
    if (r->p >= r->end || *r->p != '"') return 0;
    r->p++;
    s = (char*)malloc(cap);
    while (r->p < r->end && *r->p != '"') {
        char ch = *r->p++;
        if ((unsigned char)ch < 0x20) { free(s); return 0; }
        if (ch == '\\') {
            if (r->p >= r->end) { free(s); return 0; }
            ch = *r->p++;
            if (ch == 'u') {
                if (r->end - r->p < 4) { free(s); return 0; }
                for (int i = 0; i < 4; i++) if (!strchr("0123456789abcdefABCDEF", r->p[i])) { free(s); return 0; }
                r->p += 4; ch = '?';
            } else if (!strchr("\"\\/bfnrt", ch)) { free(s); return 0; }
        }
        if (n + 2 > cap) s = (char*)realloc(s, cap *= 2);
        s[n++] = ch;
    }
    if (r->p >= r->end) { free(s); return 0; }
    r->p++;
    s[n] = '\0';
    *out = s;
    return 1;
}
static int jnumber(jreader* r, jval* v) {
    const char* start = r->p;
    uint64_t ip = 0, frac = 0;
    int fd = 0;
    if (r->p < r->end && *r->p == '-') r->p++;
    if (r->p >= r->end || *r->p < '0' || *r->p > '9') return 0;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') ip = ip * 10 + (uint64_t)(*r->p++ - '0');
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9') return 0;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') { if (fd < 3) { frac = frac * 10 + (uint64_t)(*r->p - '0'); fd++; } r->p++; }
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-')) r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9') return 0;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    }
    while (fd < 3) { frac *= 10; fd++; }
    v->type = J_NUM;
    v->num = strtod(start, NULL);
    v->ns = ip * 1000u + frac;
    return 1;
}
static int jlist(jreader* r, jval* v, int depth, char close, int obj) {
    int cap = 0;
    r->p++;
    v->type = obj ? J_OBJ : J_ARR;
    jws(r);
    if (r->p < r->end && *r->p == close) { r->p++; return 1; }
    for (;;) {
        char* key = NULL;
        if (v->n == cap) {
            cap = cap ? cap * 2 : 8;
            v->items = (jval*)realloc(v->items, (size_t)cap * sizeof *v->items);
            if (obj) v->keys = (char**)realloc(v->keys, (size_t)cap * sizeof *v->keys);
        }
        jws(r);
        if (obj) {
            if (!jstring(r, &key)) return 0;
            jws(r);
            if (r->p >= r->end || *r->p != ':') { free(key); return 0; }
            r->p++;
            v->keys[v->n] = key;
        }
        memset(&v->items[v->n], 0, sizeof v->items[0]);
        v->n++;
        if (!jvalue(r, &v->items[v->n - 1], depth + 1)) return 0;
        jws(r);
        if (r->p < r->end && *r->p == ',') { r->p++; continue; }
        if (r->p < r->end && *r->p == close) { r->p++; return 1; }
        return 0;
    }
}
static int jvalue(jreader* r, jval* v, int depth) {
    jws(r);
    if (depth > 64 || r->p >= r->end) return 0;
    switch (*r->p) {
    case '{': return jlist(r, v, depth, '}', 1);
    case '[': return jlist(r, v, depth, ']', 0);
    case '"': v->type = J_STR; return jstring(r, &v->str);
    case 't': if (r->end - r->p >= 4 && !memcmp(r->p, "true", 4)) { r->p += 4; v->type = J_BOOL; v->num = 1; return 1; } return 0;
    case 'f': if (r->end - r->p >= 5 && !memcmp(r->p, "false", 5)) { r->p += 5; v->type = J_BOOL; return 1; } return 0;
    case 'n': if (r->end - r->p >= 4 && !memcmp(r->p, "null", 4)) { r->p += 4; v->type = J_NULL; return 1; } return 0;
    default: return jnumber(r, v);
    }
}
/* Parses a whole file; 0 when it is not exactly one JSON value. */
static int jparse_file(const char* path, jval* out) {
    FILE* f = fopen(path, "rb");
    long size;
    char* text;
    jreader r;
    int ok;
    memset(out, 0, sizeof *out);
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = (char*)malloc((size_t)size + 1);
    ok = fread(text, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    r.p = text; r.end = text + size;
    ok = ok && jvalue(&r, out, 0);
    jws(&r);
    ok = ok && r.p == r.end;
    free(text);
    return ok;
}
static const jval* jget(const jval* o, const char* key) {
    if (!o || o->type != J_OBJ) return NULL;
    for (int i = 0; i < o->n; i++) if (strcmp(o->keys[i], key) == 0) return &o->items[i];
    return NULL;
}
static const char* jstr(const jval* o, const char* key) {
    const jval* v = jget(o, key);
    return v && v->type == J_STR ? v->str : "";
}
static uint64_t jns(const jval* o, const char* key) {   /* a µs field, in ns */
    const jval* v = jget(o, key);
    return v && v->type == J_NUM ? v->ns : UINT64_MAX;
}
static long long jint(const jval* o, const char* key) {
    const jval* v = jget(o, key);
    return v && v->type == J_NUM ? (long long)v->num : -1;
}
static uint64_t jarg(const jval* e, const char* key) {
    const jval* v = jget(jget(e, "args"), key);
    return v && v->type == J_NUM ? (uint64_t)v->num : UINT64_MAX;
}

/* ==== trace checks ==== */
static void trace_path(char* out, size_t cap, const char* what) {
    snprintf(out, cap, "accel_test_trace_%s_%llu.json", what, (unsigned long long)(test_now_ns() % 1000000007u));
}

/* A traced device writing to a fresh path ("what" in its name), and a COMPUTE queue on it. */
static int trace_device(char* path, size_t cap, const char* what, accel_device** dev, accel_queue** q) {
    accel_device_desc desc;
    trace_path(path, cap, what);
    memset(&desc, 0, sizeof desc);
    desc.trace_path = path;
    return CHECK_OK(test_device_create_desc(desc, dev)) &&
           CHECK_OK(accel_queue_create(*dev, ACCEL_QUEUE_COMPUTE, q));
}
/* The events of one track (pid, tid) with phase ph, sorted by ts (stable). */
static int track_events(const jval* evs, long long pid, long long tid, char ph, const jval** out, int cap) {
    int n = 0;
    for (int i = 0; i < evs->n; i++) {
        const jval* e = &evs->items[i];
        if (jstr(e, "ph")[0] != ph || jint(e, "pid") != pid || jint(e, "tid") != tid) continue;
        if (n == cap) return -1;
        int j = n++;
        while (j > 0 && jns(out[j - 1], "ts") > jns(e, "ts")) { out[j] = out[j - 1]; j--; }
        out[j] = e;
    }
    return n;
}
static long long track_named(const jval* evs, long pid, const char* name) {
    for (int i = 0; i < evs->n; i++) {
        const jval* e = &evs->items[i];
        if (strcmp(jstr(e, "ph"), "M") == 0 && strcmp(jstr(e, "name"), "thread_name") == 0 && jint(e, "pid") == pid &&
            strcmp(jstr(jget(e, "args"), "name"), name) == 0) return jint(e, "tid");
    }
    return -1;
}
/* Spans of a track: in submission order (names as expected) and never overlapping. */
static void check_track(const jval* evs, long long tid, const char* const* want, int n_want) {
    const jval* spans[256];
    int n = track_events(evs, 2, tid, 'X', spans, 256);
    CHECK_EQ_INT(n, n_want);
    for (int i = 0; i < n && i < n_want; i++) {
        if (!CHECK_EQ_STR(jstr(spans[i], "name"), want[i])) fprintf(stderr, "    track %lld, span %d\n", tid, i);
        if (i > 0) CHECK(jns(spans[i - 1], "ts") + jns(spans[i - 1], "dur") <= jns(spans[i], "ts"));
    }
}
/* Every wait span (queue or host) has a flow ending inside it, from the start of the span that
   signalled the value it waited for, never backwards in time (at the later of the two starts); every
   flow has both ends. Returns the number of flows (the caller checks it is one per wait). */
static int flow_ends_in(const jval* f, const jval* span) {
    return jns(span, "ts") <= jns(f, "ts") && jns(f, "ts") <= jns(span, "ts") + jns(span, "dur");
}
static int check_flows(const jval* evs) {
    int flows = 0;
    for (int i = 0; i < evs->n; i++) {
        const jval* f = &evs->items[i];
        const jval* s = NULL;
        if (strcmp(jstr(f, "ph"), "f") != 0) continue;
        flows++;
        for (int j = 0; j < evs->n && !s; j++)
            if (strcmp(jstr(&evs->items[j], "ph"), "s") == 0 && jint(&evs->items[j], "id") == jint(f, "id")) s = &evs->items[j];
        if (!CHECK(s != NULL)) continue;
        CHECK_EQ_STR(jstr(f, "bp"), "e");
        /* a wait span starts where the flow ends, and the span that reached the value it waited for
           (same signal, same value) starts where the flow starts. A coarse clock (WASI) may start
           several spans at one ts: any pair that fits counts. */
        int pairs = 0, forward = 0;
        for (int j = 0; j < evs->n; j++) {
            const jval* to = &evs->items[j];
            if (strcmp(jstr(to, "ph"), "X") != 0 || strncmp(jstr(to, "name"), "wait ", 5) != 0) continue;
            if (jint(to, "pid") != jint(f, "pid") || jint(to, "tid") != jint(f, "tid") || !flow_ends_in(f, to)) continue;
            /* forward in time, or at the wait's end where the clock cannot tell (coarse: WASM) */
            forward += jns(f, "ts") >= jns(s, "ts") || jns(f, "ts") == jns(to, "ts") + jns(to, "dur");
            for (int k = 0; k < evs->n; k++) {
                const jval* from = &evs->items[k];
                const char* fn = jstr(from, "name");
                if (strcmp(jstr(from, "ph"), "X") != 0 || (strncmp(fn, "signal ", 7) != 0 && strncmp(fn, "set ", 4) != 0)) continue;
                if (jint(from, "pid") != jint(s, "pid") || jint(from, "tid") != jint(s, "tid") || jns(from, "ts") != jns(s, "ts")) continue;
                pairs += strcmp(strchr(fn, ' ') + 1, jstr(to, "name") + 5) == 0 && jarg(from, "value") == jarg(to, "value");
            }
        }
        if (!CHECK(pairs >= 1)) fprintf(stderr, "    flow %lld\n", jint(f, "id"));
        if (!CHECK(forward >= 1)) fprintf(stderr, "    flow %lld ends before it starts\n", jint(f, "id"));
    }
    for (int i = 0; i < evs->n; i++) {   /* every wait got its flow */
        const jval* w = &evs->items[i];
        int in = 0;
        if (strcmp(jstr(w, "ph"), "X") != 0 || strncmp(jstr(w, "name"), "wait ", 5) != 0) continue;
        for (int j = 0; j < evs->n; j++) {
            const jval* f = &evs->items[j];
            in += strcmp(jstr(f, "ph"), "f") == 0 && jint(f, "pid") == jint(w, "pid") && jint(f, "tid") == jint(w, "tid") &&
                  flow_ends_in(f, w);
        }
        if (!CHECK(in >= 1)) fprintf(stderr, "    wait span '%s'\n", jstr(w, "name"));   /* (the caller counts them) */
    }
    return flows;
}

#define FRAMES 3
TEST(trace_of_a_two_queue_pipeline) {
    TEST_NEEDS_TRACE();
    char path[96];
    accel_device* dev;
    accel_device_desc desc;
    accel_queue *compute, *copy;
    accel_buffer *data, *staging;
    accel_program* add;
    accel_signal *uploaded, *computed;
    uint32_t host[64];
    trace_path(path, sizeof path, "pipeline");
    memset(&desc, 0, sizeof desc);
    desc.label = "test";
    desc.trace_path = path;
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &compute));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &copy));
    REQUIRE_OK(test_buffer_create(dev, sizeof host, ACCEL_MEMORY_DEVICE, &data));
    REQUIRE_OK(test_buffer_create(dev, sizeof host, ACCEL_MEMORY_HOST, &staging));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    REQUIRE_OK(accel_signal_create(dev, 0, &uploaded));
    REQUIRE_OK(accel_signal_create(dev, 0, &computed));
    CHECK_OK(accel_signal_set_label(uploaded, "uploaded"));
    CHECK_OK(accel_signal_set_label(computed, "computed"));
    CHECK_OK(accel_queue_set_label(copy, "uploads"));   /* the track takes the new name */
    memset(host, 0, sizeof host);
    for (uint32_t i = 1; i <= FRAMES; i++) {
        uint32_t n = 64;
        if (i > 1) accel_queue_wait(copy, computed, i - 1);
        accel_queue_update(copy, data, 0, host, sizeof host);
        accel_queue_signal(copy, uploaded, i);
        CHECK_OK(accel_queue_submit(copy));
        accel_queue_wait(compute, uploaded, i);
        accel_queue_exec(compute, add, &data, 1, &n, 1, accel_exec_1d(64, 16));
        accel_queue_copy(compute, staging, 0, data, 0, sizeof host);
        accel_queue_signal(compute, computed, i);
        CHECK_OK(accel_queue_submit(compute));
    }
    CHECK_OK(accel_signal_wait(computed, FRAMES, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(copy, ACCEL_WAIT_FOREVER));
    uint32_t out[64];
    CHECK_OK(accel_buffer_read(staging, 0, out, sizeof out));
    CHECK_EQ_U64(out[63], 1);
    accel_device_destroy(dev);   /* writes the file */

    jval root;
    int ok = jparse_file(path, &root);
    if (!CHECK(ok)) { jfree(&root); remove(path); return; }
    const jval* evs = jget(&root, "traceEvents");
    REQUIRE(evs && evs->type == J_ARR);
    long long tc = track_named(evs, 2, "compute queue 1"), tk = track_named(evs, 2, "copy queue 2");
    CHECK(tc > 0 && tk > 0 && tc != tk);
    CHECK_EQ_INT(track_named(evs, 2, "uploads 2"), tk);
    long long tids[8];
    int tracks = 0;
    for (int i = 0; i < evs->n; i++) {   /* one track per queue */
        const jval* e = &evs->items[i];
        bool seen = false;
        if (strcmp(jstr(e, "name"), "thread_name") != 0 || jint(e, "pid") != 2) continue;
        for (int j = 0; j < tracks; j++) seen |= tids[j] == jint(e, "tid");
        if (!seen && tracks < 8) tids[tracks++] = jint(e, "tid");
    }
    CHECK_EQ_INT(tracks, 2);
    const char* want_c[4 * FRAMES];
    const char* want_k[3 * FRAMES];
    int nc = 0, nk = 0;
    for (int i = 1; i <= FRAMES; i++) {
        if (i > 1) want_k[nk++] = "wait computed";
        want_k[nk++] = "update"; want_k[nk++] = "signal uploaded";
        want_c[nc++] = "wait uploaded"; want_c[nc++] = "add_one"; want_c[nc++] = "copy"; want_c[nc++] = "signal computed";
    }
    check_track(evs, tc, want_c, nc);
    check_track(evs, tk, want_k, nk);
    const jval* inst[64];
    CHECK_EQ_INT(track_events(evs, 2, tc, 'i', inst, 64), FRAMES);   /* an instant per value reached */
    CHECK_EQ_INT(track_events(evs, 2, tk, 'i', inst, 64), FRAMES);
    for (int i = 0; i < FRAMES; i++) { CHECK_EQ_STR(jstr(inst[i], "name"), "uploaded"); CHECK_EQ_U64(jarg(inst[i], "value"), (uint64_t)i + 1); }
    int submits = 0, host_waits = 0;
    for (int i = 0; i < evs->n; i++) {
        const jval* e = &evs->items[i];
        if (jint(e, "pid") != 1 || strcmp(jstr(e, "ph"), "X") != 0) continue;
        submits += strncmp(jstr(e, "name"), "submit ", 7) == 0;
        host_waits += strcmp(jstr(e, "name"), "wait computed") == 0;
    }
    CHECK_EQ_INT(submits, 2 * FRAMES);
    CHECK_EQ_INT(host_waits, 1);
    /* queue waits: (FRAMES - 1) + FRAMES, and the host's wait */
    CHECK_EQ_INT(check_flows(evs), 2 * FRAMES);
    jfree(&root);
    remove(path);
}

/* A host set releases a queue's wait (the flow starts on the host thread's track); a wait_many gets a
   flow from each signal; a failed signal's wait is a span with no flow, and the file stays whole. */
TEST(trace_of_host_sets_and_failures) {
    TEST_NEEDS_TRACE();
    char path[96];
    accel_device* dev;
    accel_queue* q;
    accel_signal *gate, *bad, *done;
    REQUIRE(trace_device(path, sizeof path, "sets", &dev, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));   /* #1 */
    REQUIRE_OK(accel_signal_create(dev, 0, &bad));    /* #2 */
    REQUIRE_OK(accel_signal_create(dev, 0, &done));   /* #3 */
    accel_queue_wait(q, gate, 1);
    accel_queue_signal(q, done, 1);
    accel_queue_wait(q, bad, 1);
    accel_queue_signal(q, done, 2);                   /* never: the failure passes on */
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    accel_signal* both[2] = { done, gate };
    uint64_t values[2] = { 1, 1 };
    CHECK_OK(accel_signal_wait_many(both, values, 2, true, ACCEL_WAIT_FOREVER, NULL));
    CHECK_OK(accel_signal_fail(bad, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(done, 2, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    accel_device_destroy(dev);

    jval root;
    if (!CHECK(jparse_file(path, &root))) { jfree(&root); remove(path); return; }
    const jval* evs = jget(&root, "traceEvents");
    REQUIRE(evs && evs->type == J_ARR);
    long long tq = track_named(evs, 2, "compute queue 1");
    const jval* spans[16];
    int n = track_events(evs, 2, tq, 'X', spans, 16);
    REQUIRE_EQ_INT(n, 3);                             /* the rest of the batch was dropped */
    CHECK_EQ_STR(jstr(spans[0], "name"), "wait #1");
    CHECK_EQ_STR(jstr(spans[1], "name"), "signal #3");
    CHECK_EQ_STR(jstr(spans[2], "name"), "wait #2");
    int from_host = 0, into_queue = 0, into_host = 0;
    for (int i = 0; i < evs->n; i++) {
        const jval* f = &evs->items[i];
        if (strcmp(jstr(f, "ph"), "f") != 0) continue;
        into_queue += jint(f, "pid") == 2 && jint(f, "tid") == tq;
        into_host += jint(f, "pid") == 1;
        for (int j = 0; j < evs->n; j++) {
            const jval* s = &evs->items[j];
            from_host += strcmp(jstr(s, "ph"), "s") == 0 && jint(s, "id") == jint(f, "id") && jint(s, "pid") == 1 &&
                         jint(f, "pid") == 2 && flow_ends_in(f, spans[0]);
        }
    }
    CHECK_EQ_INT(from_host, 1);                       /* set #1 (host) -> wait #1 (queue) */
    CHECK_EQ_INT(into_queue, 1);                      /* none into the failed wait */
    CHECK_EQ_INT(into_host, 3);                       /* wait #3 (done >= 1), and wait many: #3 and #1 */
    int many = 0;
    for (int i = 0; i < evs->n; i++) many += strcmp(jstr(&evs->items[i], "name"), "wait many") == 0 && jarg(&evs->items[i], "signals") == 2;
    CHECK_EQ_INT(many, 1);
    int sets = 0;
    for (int i = 0; i < evs->n; i++) sets += strcmp(jstr(&evs->items[i], "name"), "set #1") == 0 && jint(&evs->items[i], "pid") == 1;
    CHECK_EQ_INT(sets, 1);
    jfree(&root);
    remove(path);
}

/* A host call, and a copy from another device's buffer (staged through the host on a GPU), is a span of
   its queue's track on every backend (the GPU backends' batch walk ran both untraced), between the
   commands around it. */
static void trace_host_fn(void* user) { atomic_fetch_add((atomic_int*)user, 1); }
TEST(trace_of_host_calls) {
    TEST_NEEDS_TRACE();
    char path[96];
    accel_device* dev;
    accel_device* other;
    accel_queue* q;
    accel_signal* done;
    accel_buffer *dst, *src;
    atomic_int calls;
    static const char* const want[] = { "host call", "signal #1", "copy", "host call", "signal #1" };
    atomic_init(&calls, 0);
    REQUIRE(trace_device(path, sizeof path, "hostcall", &dev, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));   /* #1 */
    REQUIRE_OK(accel_device_create(NULL, &other));    /* a CPU device */
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_DEVICE, &dst));
    REQUIRE_OK(test_buffer_create(other, 64, ACCEL_MEMORY_HOST, &src));
    for (uint64_t v = 1; v <= 2; v++) {
        if (v == 2) accel_queue_copy(q, dst, 0, src, 0, 64);
        accel_queue_host_call(q, trace_host_fn, &calls);
        accel_queue_signal(q, done, v);
    }
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(done, 2, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&calls), 2);
    accel_device_destroy(dev);
    accel_device_destroy(other);
    jval root;
    if (!CHECK(jparse_file(path, &root))) { jfree(&root); remove(path); return; }
    const jval* evs = jget(&root, "traceEvents");
    REQUIRE(evs && evs->type == J_ARR);
    check_track(evs, track_named(evs, 2, "compute queue 1"), want, 5);
    jfree(&root);
    remove(path);
}

/* More events than the buffer holds: written out as it fills (a "trace flush" span), still one valid
   file with every command in it. */
TEST(trace_longer_than_its_buffer) {
    TEST_NEEDS_TRACE();
    char path[96];
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    const int batches = 1500;   /* 3 events each: submit (host), fill and barrier (queue) */
    REQUIRE(trace_device(path, sizeof path, "long", &dev, &q));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &b));
    for (int i = 0; i < batches; i++) {
        accel_queue_fill(q, b, 0, 64, (uint32_t)i);
        accel_queue_barrier(q);
        CHECK_OK(accel_queue_submit(q));
    }
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
    jval root;
    if (!CHECK(jparse_file(path, &root))) { jfree(&root); remove(path); return; }
    const jval* evs = jget(&root, "traceEvents");
    REQUIRE(evs && evs->type == J_ARR);
    int fills = 0, flushes = 0, submits = 0;
    for (int i = 0; i < evs->n; i++) {
        const char* name = jstr(&evs->items[i], "name");
        fills += strcmp(name, "fill") == 0;
        submits += strncmp(name, "submit", 6) == 0;
        flushes += strcmp(name, "trace flush") == 0;
    }
    {
        static const jval* spans[4 * 1500];
        int n = track_events(evs, 2, 1, 'X', spans, 4 * 1500);
        CHECK_EQ_INT(fills, batches);
        CHECK(n >= 2 * batches);   /* fill, barrier, and the write-outs of the queue's buffer */
        for (int i = 1; i < n; i++)   /* a write-out delays the next command: never overlaps it */
            if (!CHECK(jns(spans[i - 1], "ts") + jns(spans[i - 1], "dur") <= jns(spans[i], "ts"))) break;
    }
    CHECK_EQ_INT(submits, batches);
    CHECK(flushes >= 1);
    jfree(&root);
    remove(path);
}

/* Two live devices asked for one trace path: each writes a whole file of its own (the second to
   "<stem>.2.json", said in an info line), both valid JSON, each with its device's commands only; a third
   device made after they are gone writes the path anew. */
/* Events named `name` in a parsed trace, and flow starts ("s") in it. */
static int trace_count(const jval* evs, const char* name) {
    int n = 0;
    for (int i = 0; i < evs->n; i++) n += strcmp(jstr(&evs->items[i], "name"), name) == 0;
    return n;
}
static int trace_flows(const jval* evs) {
    int n = 0;
    for (int i = 0; i < evs->n; i++) n += strcmp(jstr(&evs->items[i], "ph"), "s") == 0;
    return n;
}
/* Device a's queue signals b's signal, which b's queue waits for: each device writes its own file, so
   neither has an arrow (b's used to start one on its own track with a's track number: an idle queue of
   b's here), and a names b's signal "on another device" (it took b's "#1", which is a's own first signal
   too; and "#0" for c's, whose device is not traced). */
TEST(trace_of_a_signal_of_another_device) {
    TEST_NEEDS_TRACE();
    char pa[96], pb[96];
    accel_device *a, *b, *c;
    accel_queue *qa, *qb, *idle;
    accel_signal *sa, *sb, *sc;
    accel_buffer* buf;
    REQUIRE(trace_device(pa, sizeof pa, "other_a", &a, &qa));
    REQUIRE(trace_device(pb, sizeof pb, "other_b", &b, &idle));
    REQUIRE_OK(test_device_create(&c));                  /* not traced */
    REQUIRE_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &qb));
    REQUIRE_OK(accel_signal_create(a, 0, &sa));          /* a's #1 */
    REQUIRE_OK(accel_signal_create(b, 0, &sb));          /* b's #1 */
    REQUIRE_OK(accel_signal_create(c, 0, &sc));
    REQUIRE_OK(test_buffer_create(b, 64, ACCEL_MEMORY_HOST, &buf));
    accel_queue_wait(qb, sb, 1);
    accel_queue_fill(qb, buf, 0, 64, 7);
    CHECK_OK(accel_queue_submit(qb));
    accel_queue_signal(qa, sa, 1);
    accel_queue_signal(qa, sb, 1);
    accel_queue_signal(qa, sc, 1);
    CHECK_OK(accel_queue_submit(qa));
    CHECK_OK(accel_queue_finish(qb, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_queue_finish(qa, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(sc), 1);
    accel_device_destroy(a);
    accel_device_destroy(b);
    accel_device_destroy(c);
    jval ra, rb;
    if (CHECK(jparse_file(pa, &ra))) {
        const jval* evs = jget(&ra, "traceEvents");
        if (CHECK(evs && evs->type == J_ARR)) {
            CHECK_EQ_INT(trace_count(evs, "signal #1"), 1);                  /* a's own */
            CHECK_EQ_INT(trace_count(evs, "signal on another device"), 2);   /* b's and c's */
            CHECK_EQ_INT(trace_flows(evs), 0);
        }
    }
    if (CHECK(jparse_file(pb, &rb))) {
        const jval* evs = jget(&rb, "traceEvents");
        if (CHECK(evs && evs->type == J_ARR)) {
            CHECK_EQ_INT(trace_count(evs, "wait #1"), 1);
            CHECK_EQ_INT(trace_flows(evs), 0);   /* its releaser is in a's file */
        }
    }
    jfree(&ra);
    jfree(&rb);
    remove(pa);
    remove(pb);
}
/* A signal that reached 5 and then failed: a host wait and a queue wait for 3 both fail, and neither is
   drawn as released by the set (both were). */
TEST(trace_of_waits_that_failed_has_no_arrow) {
    TEST_NEEDS_TRACE();
    char path[96];
    accel_device* dev;
    accel_queue* q;
    accel_signal* s;
    accel_buffer* buf;
    REQUIRE(trace_device(path, sizeof path, "failed_waits", &dev, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &buf));
    CHECK_OK(accel_signal_set(s, 5));
    CHECK_OK(accel_signal_fail(s, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(s, 3, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    accel_queue_wait(q, s, 3);
    accel_queue_fill(q, buf, 0, 64, 7);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
    jval root;
    if (CHECK(jparse_file(path, &root))) {
        const jval* evs = jget(&root, "traceEvents");
        if (CHECK(evs && evs->type == J_ARR)) {
            CHECK_EQ_INT(trace_count(evs, "set #1"), 1);
            CHECK_EQ_INT(trace_count(evs, "wait #1"), 2);   /* the host's, the queue's */
            CHECK_EQ_INT(trace_count(evs, "fill"), 0);      /* dropped */
            CHECK_EQ_INT(trace_flows(evs), 0);
        }
    }
    jfree(&root);
    remove(path);
}
TEST(trace_two_devices_one_path) {
    TEST_NEEDS_TRACE();
    char path[96], second[112];
    accel_device *a, *b, *c;
    accel_device_desc desc;
    accel_queue *qa, *qb;
    accel_buffer *ba, *bb;
    int fills[2] = { 0, 0 };
    trace_path(path, sizeof path, "shared");
    snprintf(second, sizeof second, "%.*s.2.json", (int)(strlen(path) - 5), path);
    memset(&desc, 0, sizeof desc);
    desc.trace_path = path;
    test_log_reset();
    REQUIRE_OK(test_device_create_desc(desc, &a));
#if !defined(_WIN32) && !defined(__wasi__)
    char dotted[112];   /* where files have an identity (POSIX), another name of the same file counts too */
    snprintf(dotted, sizeof dotted, "./%s", path);
    desc.trace_path = dotted;
#endif
    REQUIRE_OK(test_device_create_desc(desc, &b));
    desc.trace_path = path;
    CHECK(test_log_contains(second));
    REQUIRE_OK(accel_queue_create(a, ACCEL_QUEUE_COMPUTE, &qa));
    REQUIRE_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &qb));
    REQUIRE_OK(test_buffer_create(a, 64, ACCEL_MEMORY_HOST, &ba));
    REQUIRE_OK(test_buffer_create(b, 64, ACCEL_MEMORY_HOST, &bb));
    for (int i = 0; i < 300; i++) {   /* the first device's trace is the longer one */
        accel_queue_fill(qa, ba, 0, 64, (uint32_t)i);
        CHECK_OK(accel_queue_submit(qa));
    }
    accel_queue_fill(qb, bb, 0, 64, 1);
    CHECK_OK(accel_queue_submit(qb));
    accel_device_destroy(a);   /* the longer one first: the shorter must not write over its start */
    accel_device_destroy(b);
    for (int f = 0; f < 2; f++) {
        jval root;
        const jval* evs;
        if (!CHECK(jparse_file(f == 0 ? path : second, &root))) { jfree(&root); continue; }
        evs = jget(&root, "traceEvents");
        if (CHECK(evs && evs->type == J_ARR))
            for (int i = 0; i < evs->n; i++) fills[f] += strcmp(jstr(&evs->items[i], "name"), "fill") == 0;
        jfree(&root);
    }
    CHECK_EQ_INT(fills[0], 300);
    CHECK_EQ_INT(fills[1], 1);
    remove(second);
    REQUIRE_OK(test_device_create_desc(desc, &c));   /* the path is free again */
    accel_device_destroy(c);
    {
        jval root;
        if (CHECK(jparse_file(path, &root))) CHECK(jget(&root, "traceEvents") != NULL);
        jfree(&root);
    }
    remove(path);
    CHECK(fopen(second, "r") == NULL);
    {   /* a name whose only dot leads it has no extension: ".<name>.2" (it was ".2.<name>") */
        char dot[112], dot2[120];
        snprintf(dot, sizeof dot, ".%.*s", (int)(strlen(path) - 5), path);
        snprintf(dot2, sizeof dot2, "%s.2", dot);
        desc.trace_path = dot;
        REQUIRE_OK(test_device_create_desc(desc, &a));
        test_log_reset();
        REQUIRE_OK(test_device_create_desc(desc, &b));
        CHECK(test_log_contains(dot2));
        accel_device_destroy(b);
        accel_device_destroy(a);
        FILE* f = fopen(dot2, "r");
        if (CHECK(f != NULL)) fclose(f);
        remove(dot);
        remove(dot2);
    }
}

/* JSON text is UTF-8: a label's valid UTF-8 goes in as it is, a byte that is not UTF-8 as \ufffd (strict
   parsers refused the file). */
TEST(trace_labels_are_utf8) {
    TEST_NEEDS_TRACE();
    char path[96], text[8192];
    accel_device* dev;
    accel_queue* q;
    FILE* f;
    size_t n;
    REQUIRE(trace_device(path, sizeof path, "utf8", &dev, &q));
    /* valid, two stray bytes, an overlong form, a surrogate, past U+10FFFF, the last valid 3-byte form
       before the surrogates and the first 4-byte one, a cut sequence */
    CHECK_OK(accel_queue_set_label(q, "caf\xc3\xa9 \xff\xfe end \xe0\x80\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|"
                                      "\xed\x9f\xbf\xf0\x90\x80\x80|\xe2\x82"));
    accel_queue_barrier(q);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    accel_device_destroy(dev);
    REQUIRE((f = fopen(path, "rb")) != NULL);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    CHECK(strstr(text, "caf\xc3\xa9 \\ufffd\\ufffd end \\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
                       "\\ufffd\\ufffd\\ufffd\\ufffd|\xed\x9f\xbf\xf0\x90\x80\x80|\\ufffd\\ufffd") != NULL);
    CHECK(strchr(text, '\xff') == NULL);
    remove(path);
}

/* Names are whole in the trace, however long: a queue's track name keeps its number, a long program
   name (CPU: the program's name is its label) and a long signal label are not cut (an event holds 39
   bytes of a name; the rest is kept once per name); a signal labelled "signal" is not taken for an
   unlabelled one; host threads past the 64th get their track names too. */
static void k_nothing(const accel_dispatch* d) { (void)d; }
#if TEST_HAVE_THREADS
typedef struct { accel_queue* q; accel_signal* s; uint64_t v; } host_thread_job;
static void host_thread_submit(void* p) {
    host_thread_job* j = (host_thread_job*)p;
    accel_queue_signal(j->q, j->s, j->v);
    CHECK_OK(accel_queue_submit(j->q));
    CHECK_OK(accel_signal_wait(j->s, j->v, ACCEL_WAIT_FOREVER));
}
#endif
TEST(trace_names_are_whole) {
    TEST_NEEDS_TRACE();
    static const char qlabel[] = "render_thread_upload_queue_for_streaming_textures_and_meshes";
    static const char plabel[] = "physics_step_integrate_positions_and_velocities_v2";
    char path[96], slabel[80], want[96];
    accel_device* dev;
    accel_queue* q;
    accel_signal *s, *plain;
    accel_program* prog = NULL;
    int host_threads = 0;
    REQUIRE(trace_device(path, sizeof path, "names", &dev, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_signal_create(dev, 0, &plain));
    strcpy(slabel, "xx");
    for (int i = 0; i < 30; i++) strcat(slabel, "\xc3\xa9");   /* 62 bytes: a cut would split an é */
    CHECK_OK(accel_queue_set_label(q, qlabel));
    CHECK_OK(accel_signal_set_label(s, slabel));
    CHECK_OK(accel_signal_set_label(plain, "signal"));
    if (test_backend_is_cpu()) {
        accel_program_desc pd;
        memset(&pd, 0, sizeof pd);
        pd.cpu = k_nothing;
        pd.name = plabel;
        REQUIRE_OK(accel_program_create(dev, &pd, &prog));
        accel_queue_exec(q, prog, NULL, 0, NULL, 0, accel_exec_1d(4, 4));
    }
    for (uint64_t v = 1; v <= 3; v++) {   /* the same long names many times: kept once each */
        accel_queue_signal(q, s, v);
        accel_queue_signal(q, plain, v);
        CHECK_OK(accel_queue_submit(q));
    }
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
#if TEST_HAVE_THREADS
    for (uint64_t v = 4; v < 4 + 70; v++) {   /* 70 host threads, one after another */
        host_thread_job job = { q, s, v };
        test_thread th;
        if (!test_thread_start(&th, host_thread_submit, &job)) break;
        test_thread_join(&th);
        host_threads++;
    }
#endif
    accel_program_destroy(prog);
    accel_device_destroy(dev);

    jval root;
    if (!CHECK(jparse_file(path, &root))) { jfree(&root); remove(path); return; }
    const jval* evs = jget(&root, "traceEvents");
    REQUIRE(evs && evs->type == J_ARR);
    snprintf(want, sizeof want, "%s 1", qlabel);
    CHECK(track_named(evs, 2, want) > 0);
    bool prog_seen = false, s_seen = false, plain_seen = false;
    int host_named = 0, host_tids = 0;
    long long tids[512];
    for (int i = 0; i < evs->n; i++) {
        const jval* e = &evs->items[i];
        const char* name = jstr(e, "name");
        prog_seen |= strcmp(name, plabel) == 0;
        s_seen |= strcmp(jstr(e, "ph"), "i") == 0 && strcmp(name, slabel) == 0;
        plain_seen |= strcmp(jstr(e, "ph"), "i") == 0 && strcmp(name, "signal") == 0;
        if (jint(e, "pid") != 1 || strcmp(jstr(e, "ph"), "M") == 0) continue;
        bool seen = false;   /* a host thread's track: named? */
        for (int k = 0; k < host_tids; k++) seen |= tids[k] == jint(e, "tid");
        if (seen || host_tids == 512) continue;
        tids[host_tids++] = jint(e, "tid");
        for (int k = 0; k < evs->n; k++) {
            const jval* m = &evs->items[k];
            if (strcmp(jstr(m, "ph"), "M") == 0 && strcmp(jstr(m, "name"), "thread_name") == 0 && jint(m, "pid") == 1 &&
                jint(m, "tid") == tids[host_tids - 1]) { host_named++; break; }
        }
    }
    CHECK(prog_seen || !test_backend_is_cpu());
    CHECK(s_seen);
    CHECK(plain_seen);
    CHECK(host_tids >= 1 + host_threads);
    CHECK_EQ_INT(host_named, host_tids);
    jfree(&root);
    remove(path);
}

/* Allocation failures while opening the trace: OUT_OF_MEMORY, nothing leaked; a path that will not open
   is a warning and an untraced device. */
TEST(trace_open_failures) {
    TEST_NEEDS_TRACE();
    char path[96];
    accel_device_desc desc;
    accel_device* dev = NULL;
    test_alloc_state st;
    accel_result r = ACCEL_ERROR_OUT_OF_MEMORY;
    trace_path(path, sizeof path, "oom");
    for (long n = 0; n < 200 && r == ACCEL_ERROR_OUT_OF_MEMORY; n++) {
        test_alloc_init(&st);
        atomic_store(&st.fail_after, n);
        memset(&desc, 0, sizeof desc);
        desc.allocator = test_allocator(&st);
        desc.trace_path = path;
        r = test_device_create_desc(desc, &dev);
        if (r == ACCEL_OK) accel_device_destroy(dev);
        CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    }
    CHECK_OK(r);
    remove(path);
    memset(&desc, 0, sizeof desc);
    desc.trace_path = "no/such/directory/trace.json";
    test_log_reset();
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    CHECK(test_log_contains("trace file"));
    accel_device_destroy(dev);
}

/* ACCEL_NO_TRACE: a trace_path is ignored with one warning, and no file appears. */
TEST(trace_path_is_a_warning_in_a_no_trace_build) {
#if !defined(ACCEL_NO_TRACE)
    SKIP("needs a build with ACCEL_NO_TRACE");
#else
    char path[96];
    accel_device_desc desc;
    accel_device* dev;
    accel_queue* q;
    accel_signal* s;
    FILE* f;
    trace_path(path, sizeof path, "notrace");
    remove(path);
    memset(&desc, 0, sizeof desc);
    desc.trace_path = path;
    test_log_reset();
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_WARN), 1);
    CHECK(test_log_contains("ACCEL_NO_TRACE"));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER));
    CHECK_OK(accel_signal_set(s, 2));
    accel_device_destroy(dev);
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_WARN), 1);
    f = fopen(path, "r");
    CHECK(f == NULL);
    if (f) fclose(f);
#endif
}

/* An indirect exec's trace event: its grid as read on the host (4 groups of 16), or "groups":"indirect"
   where it was read where the exec ran (the CPU executor, a GPU). Before, the second showed the
   recorded placeholder, 1 group and 1 invocation. A direct exec beside it keeps its numbers. */
static const jval* trace_exec_args(const jval* evs, uint64_t buffers, int nth) {
    for (int i = 0; i < evs->n; i++) {
        const jval* a = jget(&evs->items[i], "args");
        if (strcmp(jstr(&evs->items[i], "ph"), "X") == 0 && jarg(&evs->items[i], "buffers") == buffers &&
            nth-- == 0)
            return a;
    }
    return NULL;
}
TEST(trace_of_an_indirect_exec) {
    TEST_NEEDS_TRACE();
    char path[96];
    accel_device* dev;
    accel_queue* q;
    accel_buffer *data, *counts;
    accel_program* add;
    uint32_t n = 64, grid[3] = { 4, 1, 1 }, local[3] = { 16, 1, 1 };
    REQUIRE(trace_device(path, sizeof path, "indirect", &dev, &q));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &data));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_DEVICE, &counts));
    REQUIRE_OK(test_buffer_set_u32(data, 64, 0));
    REQUIRE_OK(accel_buffer_write(counts, 0, grid, sizeof grid));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
    accel_queue_exec_indirect(q, add, &data, 1, &n, 1, local, counts, 0);
    accel_queue_exec(q, add, &data, 1, &n, 1, accel_exec_1d(64, 16));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(data, 63), 2);
    accel_device_destroy(dev);   /* writes the file */
    {
        jval root;
        const jval *evs, *ind, *dir, *g;
        if (!CHECK(jparse_file(path, &root))) { jfree(&root); remove(path); return; }
        evs = jget(&root, "traceEvents");
        ind = evs ? trace_exec_args(evs, 1, 0) : NULL;
        dir = evs ? trace_exec_args(evs, 1, 1) : NULL;
        if (CHECK(ind != NULL && dir != NULL)) {
            g = jget(ind, "groups");
            CHECK(g != NULL && ((g->type == J_STR && strcmp(g->str, "indirect") == 0) ||
                                (g->type == J_NUM && g->num == 4)));
            if (g && g->type == J_NUM) CHECK(jget(ind, "invocations") && jget(ind, "invocations")->num == 64);
            CHECK(jget(dir, "groups") && jget(dir, "groups")->type == J_NUM && jget(dir, "groups")->num == 4);
            CHECK(jget(dir, "invocations") && jget(dir, "invocations")->num == 64);
        }
        jfree(&root);
        remove(path);
    }
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(timestamps_monotonic_between_host_readings);
    RUN(timestamps_bracket_a_kernel_of_known_duration);
    RUN(timestamp_event_kept_until_its_time_is_read);
    RUN(timestamps_stay_in_order_across_a_new_reference);
    RUN(timestamp_recording_errors);
    RUN(trace_of_a_two_queue_pipeline);
    RUN(trace_of_host_sets_and_failures);
    RUN(trace_longer_than_its_buffer);
    RUN(trace_of_a_signal_of_another_device);
    RUN(trace_of_waits_that_failed_has_no_arrow);
    RUN(trace_two_devices_one_path);
    RUN(trace_labels_are_utf8);
    RUN(trace_names_are_whole);
    RUN(trace_open_failures);
    RUN(trace_of_host_calls);
    RUN(trace_of_an_indirect_exec);
    RUN(trace_path_is_a_warning_in_a_no_trace_build);
    return test_end();
}
