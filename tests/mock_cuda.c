/* tests/mock_cuda.c — a fake CUDA driver (and NVRTC) on the CPU, so that CI without a GPU can run the
   conformance suite through the CUDA backend's host-side machinery: run-time loading through
   cuGetProcAddress, executor threads, host-gated waits, signal points (progress word or event ring),
   reaping, object lifetimes, failure propagation and device loss.

   Built as a shared library (gcc -shared -fPIC -pthread) and loaded with
       ACCEL_CUDA_LIBRARY=build/mock/libcuda_mock.so ACCEL_NVRTC_LIBRARY=build/mock/libcuda_mock.so
   Each stream is a worker thread that runs its operations in order, asynchronously to the caller; it
   takes them from a queue the host appends to with no lock between the two (see mock_stream), so that
   the host's cost of an enqueue is about the same whether the stream keeps pace or not (not quite: see
   MOCK_CUDA_OP_NS).
   MOCK_CUDA_GPU_CPU=1 (bench/cuda.c sets it) gives the streams' threads a CPU of their own.
   Device memory is host memory (device pointer = host address). "Compiling" keeps the source text; a
   module finds its kernels by name in a table of C twins of the CUDA C kernels of tests/kernels.h and
   of the examples, run block by block and thread by thread. The kernel "oob" makes the context fail
   with CUDA_ERROR_ILLEGAL_ADDRESS (sticky), like an out-of-bounds store on a GPU.
   cuLaunchHostFunc runs its function on the stream's own thread, in stream order, as one operation.
   cuLaunchKernel with no context current on the calling thread fails with CUDA_ERROR_INVALID_CONTEXT.
   The driver calls a test makes itself (cuMemAlloc_v2, cuLaunchKernel, ...) are exported by name too.
   Where a real driver makes the host wait for the GPU, so does the mock (measured on an H100 with
   bench/cuda_blocking.c): cuMemFree, cuMemFreeHost and cuModuleUnload wait until every stream is idle,
   holding the driver's lock (stream creation and destruction wait meanwhile); a copy with host memory
   on both sides, a graph's at launch too, waits until its stream is idle; an enqueue waits while its
   stream holds 1,024 operations not started (MOCK_CUDA_STREAM_DEPTH). Behind a stream wait the host
   has yet to release, each is a hang, as on a GPU.
   The primary context's objects (allocations, pinned blocks, streams, events, modules, graphs) are
   listed: mock_cuda_live() counts them, a release of one that is not live (freed already, or made
   before a reset) fails with CUDA_ERROR_INVALID_VALUE and counts in mock_cuda_stale_uses(), and
   cuDevicePrimaryCtxReset waits (as the driver) for the context's streams to go idle, up to 5 s (then
   it says so, and the process's CUDA is dead: a GPU hangs there), frees every object and clears a
   sticky error, as the driver destroys the context's resources: the context works again
   (accel_device_recover). MOCK_CUDA_STICKY_SURVIVES=1 keeps the sticky error, as NVIDIA's drivers do.
   As the driver's, the objects, the sticky error and the reset are one device's (its primary
   context's): an object belongs to the context current at its creation (device 0's when none), a
   stream's operations see its own context's sticky error only (a wait on a word that another device's
   work writes goes on when that device fails), and a reset ends that device's objects alone. Host
   calls that wait for the whole GPU (cuMemFree and the like) still wait for every device's streams.
   Vulkan memory of the same GPU imports as an opaque fd (cuImportExternalMemory: see "external
   memory"); MOCK_CUDA_UUID makes device 0 that GPU (see mDeviceGetUuid). Its VMM memory (cuMemCreate,
   cuMemMap, ...) exports as an opaque fd that lavapipe imports (see "virtual memory management").
   A Vulkan timeline semaphore imports as an opaque fd through a provider that a test registers, and a
   stream waits on it and raises it in order (cuImportExternalSemaphore: see "external semaphores").
   MOCK_CUDA_ATTR_FAILS=N makes cuDeviceGetAttribute of attribute N fail (CUDA_ERROR_INVALID_VALUE),
   read at each call; while MOCK_CUDA_SYNC_FAILS is set, cuStreamSynchronize fails at once
   (CUDA_ERROR_UNKNOWN) and the stream runs on. mock_cuda_set_memory_limit gives the GPU a size, so
   that a test sees what a full one does (see mMemAlloc).
   It proves nothing about a real GPU: only that the backend's host side keeps the contract. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ctype.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOCK_API __attribute__((visibility("default")))
typedef int CUresult;
typedef unsigned long long dptr_t;

#define MOCK_MAX_DEVICES 4
static atomic_int mock_sticky[MOCK_MAX_DEVICES];   /* each context's sticky error, 0 when none */
static atomic_int mock_hung;   /* a reset found a stream that never went idle: the "GPU" hangs */
static int mock_ctx_token[MOCK_MAX_DEVICES];
static _Thread_local int* mock_current;   /* the calling thread's current context */
static _Thread_local int mock_running;    /* a stream's thread: its context's device */
/* The device of a context (device 0 for none), of the calling thread's current one. */
static int mock_ctx_dev(const int* ctx) { return ctx ? (int)(ctx - mock_ctx_token) : 0; }
static int mock_cur_dev(void) { return mock_ctx_dev(mock_current); }
/* Device d's sticky error (999 for every device once the GPU hangs), 0 when none. */
static int mock_dead(int d) { return atomic_load(&mock_hung) ? 999 : atomic_load(&mock_sticky[d]); }

/* Driver calls by kind, counted where a caller enters the mock (calls it makes itself are not):
   bench/cuda.c reads them through mock_cuda_calls (looked up with dlsym) to print driver calls per
   step on both sides. Relaxed: a count, not a synchronisation. */
enum { MOCK_CALL_LAUNCH, MOCK_CALL_MEMOP, MOCK_CALL_EVENT, MOCK_CALL_COPY, MOCK_CALL_CONTEXT, MOCK_CALL_QUERY,
       MOCK_CALL_SYNC, MOCK_CALL_OTHER, MOCK_CALL_KINDS };
static atomic_ullong mock_calls[MOCK_CALL_KINDS];
#define MOCK_COUNT(kind) atomic_fetch_add_explicit(&mock_calls[kind], 1ull, memory_order_relaxed)

/* ==== kernels ==== */
typedef struct mock_thread_ctx { uint32_t tid[3], bid[3], bdim[3], gdim[3]; } mock_thread_ctx;
typedef void (*mock_kernel_fn)(const mock_thread_ctx* t, void* const* bufs, const uint32_t* c);
typedef struct mock_kernel { const char* name; uint32_t buffers, constants; mock_kernel_fn fn; } mock_kernel;

static uint32_t gx(const mock_thread_ctx* t) { return t->bid[0] * t->bdim[0] + t->tid[0]; }
static void k_saxpy(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t); float a;
    memcpy(&a, &c[0], 4);
    if (i < c[1]) ((float*)b[0])[i] += a * ((const float*)b[1])[i];
}
static void k_fill_index(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[1]) ((uint32_t*)b[0])[i] = i + c[0];
}
static void k_add_one(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[0]) ((uint32_t*)b[0])[i] += 1u;
}
static void k_copy_u32(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[0]) ((uint32_t*)b[0])[i] = ((const uint32_t*)b[1])[i];
}
static void k_group_ids(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t x = gx(t), y = t->bid[1] * t->bdim[1] + t->tid[1], z = t->bid[2] * t->bdim[2] + t->tid[2];
    if (x >= c[0] || y >= c[1] || z >= c[2]) return;
    ((uint32_t*)b[0])[(z * c[1] + y) * c[0] + x] = 0x80000000u | t->bid[0] | (t->bid[1] << 10) | (t->bid[2] << 20);
}
static void k_slow(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t), x;
    if (i >= c[0]) return;
    x = i ^ c[2];
    for (uint32_t k = 0; k < c[1]; k++) { x = x * 1664525u + 1013904223u; x ^= x >> 13; }
    ((uint32_t*)b[0])[i] = x;
}
static void k_probe(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t* out = (uint32_t*)b[0], g;
    if (t->tid[0] + t->tid[1] + t->tid[2] != 0) return;
    g = (t->bid[2] * t->gdim[1] + t->bid[1]) * t->gdim[0] + t->bid[0];
    if (g == 0) {
        for (int k = 0; k < 3; k++) { out[k] = t->gdim[k]; out[3 + k] = t->bdim[k]; }
        out[13] = c[0];
    }
    out[16 + g] = 1;
}
static void k_set_counts(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t* out = (uint32_t*)b[0];
    if (t->bid[0] + t->bid[1] + t->bid[2] + t->tid[0] + t->tid[1] + t->tid[2] != 0) return;
    out[c[0]] = c[1]; out[c[0] + 1] = c[2]; out[c[0] + 2] = c[3];
}
static uint32_t ex_hash(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
}
static void k_crunch(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t), v;
    if (i >= c[1]) return;
    v = ((const uint32_t*)b[0])[i];
    for (uint32_t r = 0; r < c[2]; r++) v = ex_hash(v + r);
    ((uint32_t*)b[1])[(size_t)c[0] * c[1] + i] = v;
}
typedef struct particle { int32_t x, y, vx, vy; } particle;
static int32_t clamp_speed(int32_t v) { return v > 4096 ? 4096 : v < -4096 ? -4096 : v; }
static void k_simulate(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    particle* ps = (particle*)b[0];
    const int32_t* fp = (const int32_t*)b[1];   /* frame, gravity, wind, pad */
    particle p;
    if (i >= c[0]) return;
    p = ps[i];
    p.vx = clamp_speed(p.vx + fp[2]);
    p.vy = clamp_speed(p.vy + fp[1]);
    p.x += p.vx; p.y += p.vy;
    if (p.x < 0) { p.x = -p.x; p.vx = -p.vx; } else if (p.x >= (1 << 20)) { p.x = 2 * ((1 << 20) - 1) - p.x; p.vx = -p.vx; }
    if (p.y < 0) { p.y = -p.y; p.vy = -p.vy; } else if (p.y >= (1 << 20)) { p.y = 2 * ((1 << 20) - 1) - p.y; p.vy = -p.vy; }
    ps[i] = p;
    atomic_fetch_add((_Atomic uint32_t*)&((uint32_t*)b[2])[t->bid[0]],
                     (uint32_t)p.x * 7u + (uint32_t)p.y * 13u + (uint32_t)p.vx * 17u + (uint32_t)p.vy * 19u);
}
/* examples/nccl_allreduce.c: produce and consume; mock_sgemm is tests/mock_nccl.c's stand-in for
   cublasSgemm (column-major C = A * B, square, alpha 1, beta 0; one thread per element of C) */
static void k_produce(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[1]) ((float*)b[0])[i] = (float)((c[0] + 1u) * (i % 7u + 1u));
}
static void k_consume(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[0]) ((float*)b[0])[i] = ((const float*)b[1])[i] * 0.5f + 1.0f;
}
/* tests/mock_nccl.c's cublasSgemm_v2: column-major C = A B, c = { m, n, k, lda, ldb, ldc }, one item per
   element of C */
static void k_mock_sgemm(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    const float *a = (const float*)b[0], *bm = (const float*)b[1];
    uint32_t i = gx(t), m = c[0], row, col;
    float sum = 0.0f;
    if (i >= m * c[1]) return;
    row = i % m;
    col = i / m;
    for (uint32_t k = 0; k < c[2]; k++) sum += a[row + k * c[3]] * bm[k + col * c[4]];
    ((float*)b[2])[row + col * c[5]] = sum;
}
/* examples/replay.c: one decoder step */
static void k_decode_mix(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[1]) ((uint32_t*)b[1])[i] = ex_hash(((const uint32_t*)b[0])[i] ^ (c[0] * 0x9E3779B9u) ^ i);
}
static void k_decode_scale(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[0]) ((uint32_t*)b[0])[i] = ((uint32_t*)b[0])[i] * 3u + ((const uint32_t*)b[1])[i];
}
static void k_decode_reduce(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    if (i < c[1]) atomic_fetch_add((_Atomic uint32_t*)&((uint32_t*)b[1])[c[0]], ((const uint32_t*)b[0])[i]);
}
/* examples/native.c: a two-layer MLP's GEMM (C += A*B, row-major; x = column, y = row) and bias + ReLU */
static void k_mlp_matmul(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t col = gx(t), row = t->bid[1] * t->bdim[1] + t->tid[1];
    float sum = 0.0f;
    if (row >= c[0] || col >= c[1]) return;
    for (uint32_t i = 0; i < c[2]; i++) sum += ((const float*)b[1])[row * c[2] + i] * ((const float*)b[2])[i * c[1] + col];
    ((float*)b[0])[row * c[1] + col] += sum;
}
static void k_mlp_bias_act(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t i = gx(t);
    float v;
    if (i >= c[0]) return;
    v = ((float*)b[0])[i] + ((const float*)b[1])[i % c[1]];
    ((float*)b[0])[i] = c[2] && v < 0.0f ? 0.0f : v;
}
/* examples/compact.c: a stream-compaction step (count per chunk, one-thread scan, gather per survivor) */
static uint32_t mock_div_up(uint32_t a, uint32_t b) { return (a + b - 1u) / b; }
static void k_compact_count(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    const uint32_t *src = (const uint32_t*)b[0], *meta = (const uint32_t*)b[2];
    uint32_t ch = gx(t), n = meta[3], count = 0, end;
    if (ch >= mock_div_up(n, c[1])) return;
    end = (ch + 1u) * c[1] < n ? (ch + 1u) * c[1] : n;
    for (uint32_t i = ch * c[1]; i < end; i++) count += src[i] % c[0] != 0u;
    ((uint32_t*)b[1])[ch] = count;
}
static void k_compact_scan(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    uint32_t *part = (uint32_t*)b[0], *next = (uint32_t*)b[2], n = ((const uint32_t*)b[1])[3], sum = 0;
    if (gx(t) != 0) return;
    for (uint32_t ch = 0, k; ch < mock_div_up(n, c[2]); ch++) { k = part[ch]; part[ch] = sum; sum += k; }
    next[0] = mock_div_up(sum, c[1]); next[1] = 1; next[2] = 1; next[3] = sum;
    next[4] = mock_div_up(mock_div_up(sum, c[2]), c[1]); next[5] = 1; next[6] = 1; next[7] = n;
    ((uint32_t*)b[3])[c[0]] = sum;
}
static void k_compact_gather(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    const uint32_t *src = (const uint32_t*)b[1], *part = (const uint32_t*)b[2], *next = (const uint32_t*)b[3];
    uint32_t j = gx(t), n = next[7], lo = 0, hi, rank, end;
    if (j >= next[3]) return;
    hi = mock_div_up(n, c[1]) - 1u;
    while (lo < hi) { uint32_t mid = (lo + hi + 1u) / 2u; if (part[mid] <= j) lo = mid; else hi = mid - 1u; }
    rank = j - part[lo];
    end = (lo + 1u) * c[1] < n ? (lo + 1u) * c[1] : n;
    for (uint32_t i = lo * c[1]; i < end; i++)
        if (src[i] % c[0] != 0u && rank-- == 0u) { ((uint32_t*)b[0])[j] = ex_hash(src[i] + c[2]); return; }
}
static void k_empty(const mock_thread_ctx* t, void* const* b, const uint32_t* c) { (void)t; (void)b; (void)c; }
static void k_copy_bytes(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {   /* accel's host-to-host copies */
    for (uint32_t i = gx(t); i < c[0]; i += t->gdim[0] * t->bdim[0]) ((unsigned char*)b[0])[i] = ((const unsigned char*)b[1])[i];
}
static void k_oob(const mock_thread_ctx* t, void* const* b, const uint32_t* c) {
    (void)t; (void)b; (void)c;
    int zero = 0;
    atomic_compare_exchange_strong(&mock_sticky[mock_running], &zero, 700);   /* CUDA_ERROR_ILLEGAL_ADDRESS */
}
static const mock_kernel mock_kernels[] = {
    { "saxpy", 2, 2, k_saxpy }, { "fill_index", 1, 2, k_fill_index }, { "add_one", 1, 1, k_add_one },
    { "copy_u32", 2, 1, k_copy_u32 }, { "group_ids", 1, 3, k_group_ids }, { "slow", 1, 3, k_slow },
    { "probe", 1, 1, k_probe }, { "set_counts", 1, 4, k_set_counts }, { "crunch", 2, 3, k_crunch }, { "simulate", 3, 1, k_simulate },
    { "empty", 0, 0, k_empty }, { "oob", 1, 0, k_oob }, { "accel_i_copy", 2, 1, k_copy_bytes }, { "bench_const", 0, 1, k_empty },
    { "produce", 1, 2, k_produce }, { "consume", 2, 1, k_consume }, { "mock_sgemm", 3, 6, k_mock_sgemm },
    { "decode_mix", 2, 2, k_decode_mix }, { "decode_scale", 2, 1, k_decode_scale }, { "decode_reduce", 2, 2, k_decode_reduce },
    { "mlp_matmul", 3, 3, k_mlp_matmul }, { "mlp_bias_act", 2, 3, k_mlp_bias_act },
    { "compact_count", 3, 2, k_compact_count }, { "compact_scan", 4, 3, k_compact_scan },
    { "compact_gather", 4, 3, k_compact_gather },
};

/* ==== streams: a worker thread running operations in order ==== */
typedef enum { OP_COPY, OP_SET8, OP_SET32, OP_LAUNCH, OP_WRITE64, OP_WAIT64, OP_BATCH, OP_EVENT, OP_WAIT_EVENT,
               OP_HOST, OP_POOL_FREE, OP_SEM_WAIT, OP_SEM_SIGNAL } op_kind;
/* at_ns: when it last completed. One cuEventCreate made (owned) lives until cuEventDestroy and every
   operation recorded on it or waiting for it went (refs), as the driver keeps a destroyed event that a
   stream still waits for: a queue of one accel device may wait for an event of another one's queue
   that is destroyed meanwhile. A graph's own is not counted. */
/* The host writes `recorded` (a record), the stream's thread `completed` and `at_ns` (its run), both
   `refs`: on lines of their own (mock_alloc64), as a GPU writes an event's completion to memory of its
   own. */
typedef struct mock_event {
    atomic_ullong recorded; int owned; int dev;   /* dev: its context's */
    _Alignas(64) atomic_ullong completed, at_ns;
    _Alignas(64) atomic_int refs;
} mock_event;
/* The arrays come last and only a launch writes them, as many as its kernel takes: new_op clears the
   head alone, so that an operation moves a line or two between the host and its stream's thread, as
   a command in a GPU's push buffer is tens of bytes, not the whole ~900. */
typedef struct op {
    struct op* next;                                 /* the free lists, a graph's ops */
    struct op* _Atomic snext;                        /* the stream's queue (push, stream_main) */
    op_kind kind;
    void* dst; const void* src; size_t n; uint32_t value; uint64_t v64;
    const mock_kernel* k; uint32_t grid[3], block[3];
    mock_event* ev; unsigned long long ev_gen;
    void (*host_fn)(void* user); void* host_user;   /* OP_HOST */
    unsigned nmemops;                                /* OP_BATCH: its memops follow the op */
    int pooled;                                      /* from the operations' free list (new_op) */
    int ev_ref;                                      /* holds a reference of ev (op_on_event) */
    struct mock_sem* sem;                            /* OP_SEM_*: its import, a reference held */
    void* bufs[64]; uint32_t consts[64];             /* OP_LAUNCH: k->buffers and k->constants of them */
} op;
/* A stream's operations are a queue the host appends to and the stream's thread takes from with no lock
   between the two, as a GPU reads the push buffer the host writes. With one lock shared by both (and the
   counters, the operations' free list and the events' fields on lines both wrote), each push and each
   take moved lines between the two cores once the stream kept pace with the host: a raw launch + event
   record chain ran at ~1 us or ~0.3 us a step from one run to the next, as the two threads fell into
   step or not, and so did every figure measured against it. `head` is the node the thread took last (the
   stub at first): the next operation is head->snext; a node is freed once the thread took the one after
   it, into the thread's spares (mock_spare_flush).
   Pushes take push_lock (host threads only). Host-written, thread-written and shared fields lie on
   lines of their own (mock_alloc64). */
enum { MOCK_SPARES = 32 };
typedef struct mock_stream {
    pthread_mutex_t push_lock;
    op* tail;                 /* the last node pushed (push_lock) */
    unsigned seen_started;    /* `started` as a push last read it (push_lock) */
    const int* ctx;           /* the context current at its creation (device 0's when none) */
    int dev;                  /* its device */
    pthread_t thread;
    _Alignas(64) atomic_uint pushes;   /* operations pushed so far (the host's) */
    _Alignas(64) atomic_uint started;  /* taken by the stream's thread, */
    atomic_uint done;                  /* and run (in order): a synchronize waits for `pushes` at its call */
    op* head;                          /* the thread's own */
    op* spare; unsigned nspare;
    _Alignas(64) pthread_mutex_t lock; /* the thread's sleep (`sleeping`) and `stop` */
    pthread_cond_t cond;
    atomic_int sleeping;
    int stop;
    _Alignas(64) op stub;
} mock_stream;
/* Zeroed memory on 64-byte lines, for the structs whose fields lie on lines of their own (their
   alignment is 64; calloc promises 16). Freed with free(). */
static void* mock_alloc64(size_t n) {
    void* p = aligned_alloc(64, (n + 63u) & ~(size_t)63u);
    if (p) memset(p, 0, n);
    return p;
}
/* A GPU's stream holds so much work not yet started, and an enqueue blocks the caller while it is full
   (a launch queue of about a thousand entries on NVIDIA's drivers): 1024 here, MOCK_CUDA_STREAM_DEPTH
   to change it, 0 for no bound. Behind a wait the host has yet to release, a full stream is a hang. */
static long long mock_env_number(atomic_llong* cache, const char* name, long long fallback) {
    long long d = atomic_load(cache);   /* -1: not read yet */
    if (d < 0) {
        const char* e = getenv(name);
        d = e && *e ? atoll(e) : fallback;
        atomic_store(cache, d < 0 ? 0 : d);
    }
    return d < 0 ? 0 : d;
}
static size_t mock_depth(void) {
    static atomic_llong depth = -1;
    return (size_t)mock_env_number(&depth, "MOCK_CUDA_STREAM_DEPTH", 1024);
}

static void mock_pool_freed(void* block, unsigned gen);
static void mock_wait64(void* word, uint64_t v) {
    while ((int64_t)(atomic_load((_Atomic uint64_t*)word) - v) < 0 && !mock_dead(mock_running)) sched_yield();
}
static void mock_write64(void* word, uint64_t v) {
    atomic_thread_fence(memory_order_seq_cst);
    atomic_store((_Atomic uint64_t*)word, v);
}
/* Operations come from one free list, not from malloc: a stream's thread frees what the host
   allocated, and glibc's arena lock, contended by two streams' threads and the host, put a thread to
   sleep (about 35 us to wake on a VM) often enough to make a figure of two streams bimodal from one
   run to the next, on either side. A spin lock held for two pointer moves; room for a batch of up to
   MOCK_OP_MEMOPS memory operations after each (OP_BATCH); up to 4,096 kept. */
enum { MOCK_OP_MEMOPS = 4, MOCK_OPS_KEPT = 4096 };
static atomic_flag mock_ops_lock = ATOMIC_FLAG_INIT;
static op* mock_ops_free;
static size_t mock_ops_kept;
static size_t mock_op_bytes(unsigned memops);   /* an op with room for memops memory operations */
static void mock_ops_take(void) {
    while (atomic_flag_test_and_set_explicit(&mock_ops_lock, memory_order_acquire)) sched_yield();
}
static void mock_ops_give(void) { atomic_flag_clear_explicit(&mock_ops_lock, memory_order_release); }
static op* new_op_sized(op_kind k, unsigned memops) {
    op* o = NULL;
    if (memops <= MOCK_OP_MEMOPS) {
        mock_ops_take();
        if ((o = mock_ops_free) != NULL) { mock_ops_free = o->next; mock_ops_kept--; }
        mock_ops_give();
        if (o) memset(o, 0, offsetof(op, bufs));   /* the head (see op) */
        else o = (op*)calloc(1, mock_op_bytes(MOCK_OP_MEMOPS));
        if (o) o->pooled = 1;
    } else {
        o = (op*)calloc(1, mock_op_bytes(memops));
    }
    if (o) o->kind = k;
    return o;
}
static op* new_op(op_kind k) { return new_op_sized(k, 0); }
static void mock_event_put(mock_event* e) {
    if (e && e->owned && atomic_fetch_sub(&e->refs, 1) == 1) free(e);
}
static void mock_sem_put(struct mock_sem* m);
/* An operation's import goes once it ran (or was skipped): a stream's last node stays (see mock_stream). */
static void op_sem_drop(op* o) {
    if (o->sem) mock_sem_put(o->sem);
    o->sem = NULL;
}
static void op_refs_drop(op* o) {   /* what an operation that goes held */
    if (o->ev_ref) mock_event_put(o->ev);
    op_sem_drop(o);
}
static op* op_on_event(op_kind k, mock_event* e) {   /* OP_EVENT, OP_WAIT_EVENT: e stays until it goes */
    op* o = new_op(k);
    if (!o) return NULL;
    if ((o->ev_ref = e->owned) != 0) atomic_fetch_add(&e->refs, 1);
    o->ev = e;
    return o;
}
/* Gives pooled operations back (linked through next), their event references dropped: kept up to
   MOCK_OPS_KEPT, the rest freed; the free list's lock once for the lot. */
static void mock_ops_back(op* list) {
    for (op* o = list; o; o = o->next) op_refs_drop(o);
    mock_ops_take();
    while (list && mock_ops_kept < MOCK_OPS_KEPT) {
        op* o = list;
        list = o->next;
        o->next = mock_ops_free;
        mock_ops_free = o;
        mock_ops_kept++;
    }
    mock_ops_give();
    while (list) {
        op* o = list;
        list = o->next;
        free(o);
    }
}
static void op_free(op* o) {
    if (!o) return;
    if (o->pooled) {
        o->next = NULL;
        mock_ops_back(o);
        return;
    }
    op_refs_drop(o);
    free(o);
}
/* A stream's thread frees into its spares, given back MOCK_SPARES at a time and whenever it runs dry:
   the host's own lines (the free list, the events' counts) move once a batch, not at every operation. */
static void mock_spare_flush(mock_stream* s) {
    mock_ops_back(s->spare);
    s->spare = NULL;
    s->nspare = 0;
}
static void mock_stream_free(mock_stream* s, op* o) {
    if (!o->pooled) { op_free(o); return; }
    o->next = s->spare;
    s->spare = o;
    if (++s->nspare == MOCK_SPARES) mock_spare_flush(s);
}
static void mock_batch_run(const op* o);
static void mock_sem_run(const op* o);
static long long mock_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}
static void run_op(op* o) {
    if (mock_dead(mock_running)) return;   /* a dead context runs nothing more */
    switch (o->kind) {
    case OP_COPY: memmove(o->dst, o->src, o->n); break;
    case OP_SET8: memset(o->dst, (int)o->value, o->n); break;
    case OP_SET32:   /* a word at a time, each store whole (a host poll of one is no data race) */
        for (size_t i = 0; i < o->n; i++)
            atomic_store_explicit((_Atomic uint32_t*)((unsigned char*)o->dst + 4 * i), o->value, memory_order_relaxed);
        break;
    case OP_LAUNCH: {
        mock_thread_ctx t;
        memcpy(t.gdim, o->grid, sizeof t.gdim);
        memcpy(t.bdim, o->block, sizeof t.bdim);
        for (t.bid[2] = 0; t.bid[2] < o->grid[2]; t.bid[2]++)
        for (t.bid[1] = 0; t.bid[1] < o->grid[1]; t.bid[1]++)
        for (t.bid[0] = 0; t.bid[0] < o->grid[0]; t.bid[0]++)
        for (t.tid[2] = 0; t.tid[2] < o->block[2]; t.tid[2]++)
        for (t.tid[1] = 0; t.tid[1] < o->block[1]; t.tid[1]++)
        for (t.tid[0] = 0; t.tid[0] < o->block[0]; t.tid[0]++) o->k->fn(&t, o->bufs, o->consts);
        break;
    }
    case OP_WRITE64: mock_write64(o->dst, o->v64); break;
    case OP_WAIT64: mock_wait64(o->dst, o->v64); break;
    case OP_BATCH: mock_batch_run(o); break;
    case OP_EVENT: {
        atomic_store(&o->ev->at_ns, (unsigned long long)mock_now_ns());
        atomic_store(&o->ev->completed, o->ev_gen);
        break;
    }
    case OP_WAIT_EVENT:   /* the event's record that was the latest when the wait was enqueued */
        while (atomic_load(&o->ev->completed) < o->ev_gen && !mock_dead(mock_running)) sched_yield();
        break;
    case OP_HOST: o->host_fn(o->host_user); break;   /* cuLaunchHostFunc: on the stream's thread, in order */
    case OP_POOL_FREE: mock_pool_freed(o->dst, (unsigned)o->v64); break;   /* cuMemFreeAsync's point */
    case OP_SEM_WAIT: case OP_SEM_SIGNAL: mock_sem_run(o); break;
    }
}
/* A stream that ran dry looks for more for MOCK_IDLE_SPIN_NS before its thread sleeps, as a GPU's
   front end keeps fetching: waking a sleeping thread costs tens of microseconds on a VM, and a host that
   enqueues a step every microsecond or two (a chain) would otherwise pay for it at every step whenever
   it was a little slower than the stream, and not when a little faster (figures that flipped between
   two speeds from run to run). With a CPU of its own (MOCK_CUDA_GPU_CPU=1) it looks for 2 ms, as a GPU
   never sleeps: a benchmark's rounds then find their stream awake, not one that slept through the other
   side's round (a wake-up at every round's start cost a 200-step chain ~130 ns a step). */
#define MOCK_IDLE_SPIN_NS 5000u
#define MOCK_IDLE_SPIN_OWN_CPU_NS 2000000u
static int mock_gpu_cpu = -1;   /* the streams' CPU (MOCK_CUDA_GPU_CPU=1), else -1 */
static op* mock_next(mock_stream* s) { return atomic_load_explicit(&s->head->snext, memory_order_acquire); }
/* Looks for the next operation for a while (above), yielding (a GPU's front end takes no host CPU: a
   host thread that shares this core runs first), then sleeps until a push wakes it or the stream stops. */
static op* mock_idle_wait(mock_stream* s) {
    long long spin = mock_gpu_cpu >= 0 ? MOCK_IDLE_SPIN_OWN_CPU_NS : MOCK_IDLE_SPIN_NS, t0;
    op* n;
    mock_spare_flush(s);
    t0 = mock_now_ns();
    do {
        if ((n = mock_next(s)) != NULL) return n;
        sched_yield();
    } while (mock_now_ns() - t0 < spin);
    pthread_mutex_lock(&s->lock);
    for (;;) {   /* `sleeping`, then look again: a push that missed the node sees it (push), and takes it */
        atomic_store(&s->sleeping, 1);
        if ((n = atomic_load(&s->head->snext)) != NULL || s->stop) break;
        pthread_cond_wait(&s->cond, &s->lock);
    }
    atomic_store(&s->sleeping, 0);
    pthread_mutex_unlock(&s->lock);
    return n;
}
/* MOCK_CUDA_OP_NS=n: every operation takes at least n ns on its stream, as a GPU's kernel takes its run
   time (0 by default). For benchmarks: streams that run behind the host never wait for its next
   enqueue, so a chain's issue time is the host's own cost per step, whichever side issues faster (with
   a stream that keeps pace, the slower side's enqueues also meet the stream's look for them). */
static long long mock_op_ns(void) {
    static atomic_llong ns = -1;
    return mock_env_number(&ns, "MOCK_CUDA_OP_NS", 0);
}
static void mock_op_time(long long ns) {   /* the stream's thread is busy meanwhile, as a GPU */
    long long t0;
    if (ns <= 0) return;
    for (t0 = mock_now_ns(); mock_now_ns() - t0 < ns;) { }
}
static void* stream_main(void* arg) {
    mock_stream* s = (mock_stream*)arg;
    mock_running = s->dev;
    for (;;) {
        op* o = mock_next(s);
        if (!o && (o = mock_idle_wait(s)) == NULL) break;   /* stopped, and nothing left */
        atomic_fetch_add_explicit(&s->started, 1u, memory_order_relaxed);
        if (s->head != &s->stub) mock_stream_free(s, s->head);
        s->head = o;
        mock_op_time(mock_op_ns());
        run_op(o);
        op_sem_drop(o);
        atomic_fetch_add_explicit(&s->done, 1u, memory_order_release);
    }
    if (s->head != &s->stub) op_free(s->head);
    mock_spare_flush(s);
    return NULL;
}
static CUresult push(mock_stream* s, op* o) {
    if (mock_dead(s->dev)) { op_free(o); return mock_dead(s->dev); }
    atomic_store_explicit(&o->snext, NULL, memory_order_relaxed);
    pthread_mutex_lock(&s->push_lock);
    /* full: as the driver, the enqueue waits for room (`started` read again only then: its line is the
       thread's) */
    while (mock_depth() && atomic_load_explicit(&s->pushes, memory_order_relaxed) - s->seen_started >= mock_depth()) {
        unsigned now = atomic_load_explicit(&s->started, memory_order_relaxed);
        if (now == s->seen_started) sched_yield();
        s->seen_started = now;
    }
    atomic_store_explicit(&s->tail->snext, o, memory_order_release);
    s->tail = o;
    atomic_fetch_add_explicit(&s->pushes, 1u, memory_order_relaxed);
    pthread_mutex_unlock(&s->push_lock);
    atomic_thread_fence(memory_order_seq_cst);   /* against mock_idle_wait's store of `sleeping` */
    /* one push wakes the thread: the pushes while it wakes up (tens of microseconds on a VM) do not
       each take its lock to signal it again, which a GPU's doorbell never costs */
    if (atomic_load_explicit(&s->sleeping, memory_order_relaxed) && atomic_exchange(&s->sleeping, 0)) {
        pthread_mutex_lock(&s->lock);
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
    }
    return 0;
}
/* Whether the stream holds operations not run yet (or one running). */
static int stream_busy(mock_stream* s) {
    return atomic_load_explicit(&s->done, memory_order_acquire) != atomic_load_explicit(&s->pushes, memory_order_acquire);
}

/* ==== where the host waits for the GPU (see the top) ==== */
static pthread_mutex_t mock_driver_lock = PTHREAD_MUTEX_INITIALIZER;   /* the lists below */
static mock_stream** mock_streams;
static size_t mock_nstreams, mock_streams_cap;
typedef struct mock_block { const char* p; size_t n; int dev; } mock_block;
static mock_block* mock_hosts;                                        /* cuMemHostAlloc's blocks */
static size_t mock_nhosts, mock_hosts_cap;

static int mock_grow(void** a, size_t* cap, size_t need, size_t size) {
    void* m;
    if (need <= *cap) return 1;
    if (!(m = realloc(*a, (need * 2) * size))) return 0;
    *a = m;
    *cap = need * 2;
    return 1;
}
/* ==== the context's objects (see the top), under mock_driver_lock ==== */
enum { MOCK_OBJ_MEM, MOCK_OBJ_HOST, MOCK_OBJ_STREAM, MOCK_OBJ_EVENT, MOCK_OBJ_MODULE, MOCK_OBJ_GRAPH,
       MOCK_OBJ_POOL, MOCK_OBJ_EXTMEM, MOCK_OBJ_VMM, MOCK_OBJ_VRANGE, MOCK_OBJ_VMAP, MOCK_OBJ_EXTSEM };
/* n: cuMemAlloc's size (a reservation's, a mapping's, a VMM allocation's); mapped: a buffer mapped
   from external memory (1) or a VMM mapping given access (2): cuMemFree frees nothing; of a VMM
   mapping (MOCK_OBJ_VMAP), the devices given access (a bit each) and `of` its allocation */
typedef struct mock_obj { void* h; int kind; size_t n; int mapped; int dev; void* of; } mock_obj;
static mock_obj* mock_objs;
static size_t mock_nobjs, mock_objs_cap;
static atomic_llong mock_stale;   /* releases of handles that were not live */
static int mock_pool_dev(const void* pool);   /* a pool's device (its location's, not the current one) */
static int mock_obj_add_locked(void* h, int kind) {
    if (!mock_grow((void**)&mock_objs, &mock_objs_cap, mock_nobjs + 1, sizeof *mock_objs)) return 0;
    mock_objs[mock_nobjs].h = h;
    mock_objs[mock_nobjs].n = 0;
    mock_objs[mock_nobjs].mapped = 0;
    mock_objs[mock_nobjs].of = NULL;
    mock_objs[mock_nobjs].dev = kind == MOCK_OBJ_STREAM ? ((mock_stream*)h)->dev
                                : kind == MOCK_OBJ_POOL ? mock_pool_dev(h) : mock_cur_dev();
    mock_objs[mock_nobjs++].kind = kind;
    return 1;
}
static int mock_obj_add(void* h, int kind) {
    int ok;
    pthread_mutex_lock(&mock_driver_lock);
    ok = mock_obj_add_locked(h, kind);
    pthread_mutex_unlock(&mock_driver_lock);
    return ok;
}
/* Takes h off the list; 0 (counted as a stale use) when it is not live. */
static int mock_obj_remove_locked(void* h, int kind) {
    for (size_t i = 0; i < mock_nobjs; i++)
        if (mock_objs[i].h == h && mock_objs[i].kind == kind) { mock_objs[i] = mock_objs[--mock_nobjs]; return 1; }
    atomic_fetch_add(&mock_stale, 1);
    return 0;
}
static int mock_obj_remove(void* h, int kind) {
    int ok;
    pthread_mutex_lock(&mock_driver_lock);
    ok = mock_obj_remove_locked(h, kind);
    pthread_mutex_unlock(&mock_driver_lock);
    return ok;
}
static int mock_is_host(const void* p) {
    int found = 0;
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nhosts && !found; i++)
        found = (const char*)p >= mock_hosts[i].p && (const char*)p < mock_hosts[i].p + mock_hosts[i].n;
    pthread_mutex_unlock(&mock_driver_lock);
    return found;
}
static CUresult stream_sync(mock_stream* s);
/* The whole device idle (mock_driver_lock held). */
static void mock_device_sync(void) {
    for (size_t i = 0; i < mock_nstreams; i++) stream_sync(mock_streams[i]);
}
/* A release that waits for the whole device, holding the driver's lock meanwhile. */
static void mock_release_wait(void) {
    pthread_mutex_lock(&mock_driver_lock);
    mock_device_sync();
    pthread_mutex_unlock(&mock_driver_lock);
}

/* ==== stream-ordered memory pools (cuMemPoolCreate, cuMemAllocFromPoolAsync, cuMemFreeAsync) ====
   A pool keeps blocks (256-aligned host memory, as cuMemAlloc's). cuMemAllocFromPoolAsync returns at
   once a block of the pool that is free for its stream: freed by cuMemFreeAsync on the same stream (its
   order puts the new use after the free), or freed on another stream whose free has run (the stream
   reached it: the driver's opportunistic reuse; it cannot see accel's stream memory-op waits, so it
   follows no dependency of those); else a new block (a larger allocation than cuDeviceTotalMem is
   CUDA_ERROR_OUT_OF_MEMORY); a block its stream freed is preferred. A block serves requests of its size
   up to half of it. cuMemFreeAsync gives
   the block back at once for its stream and enqueues the point where it is free for all. At a
   synchronize (stream, event), free blocks above the pool's release threshold (0 unless set, as the
   driver's) go back to the system. MOCK_CUDA_NO_POOLS=1: the device says it has no pools (the attribute
   is 0). Pools are context objects: a reset frees them with their blocks. */
#define MOCK_TOTAL_MEM ((size_t)1 << 30)   /* what cuDeviceTotalMem says: a larger allocation is refused */
static int mock_devices(void);
typedef struct mock_pool mock_pool;
typedef struct mock_pool_block {
    struct mock_pool_block* next;
    void* p; size_t n;
    int used;                    /* handed out, not freed yet */
    mock_stream* freed_on;       /* the stream of its last cuMemFreeAsync */
    unsigned free_gen;           /* cuMemFreeAsync calls on it so far (the pool's lock) */
    atomic_uint done_gen;        /* ... of which the last whose point has run (free for all once equal) */
    unsigned orphan_gen;         /* its pool is gone: the point of this free frees it (0: no); orphans lock */
    int dev;                     /* its pool's device */
    struct mock_pool_block* orphan_next;
} mock_pool_block;
struct mock_pool {
    pthread_mutex_t lock;
    mock_pool_block* blocks;
    uint64_t threshold;
    size_t bytes;                /* all its blocks */
    int dev;                     /* the device it is made on */
};
static atomic_llong mock_pool_blocks_made, mock_big_live, mock_big_peak;   /* big: blocks of 1 MiB or more */
static int mock_no_pools(void) {
    const char* e = getenv("MOCK_CUDA_NO_POOLS");
    return e && e[0] && strcmp(e, "0") != 0;
}
static int mock_env_set(const char* name) {   /* a switch read at each call: set, and not "0" */
    const char* e = getenv(name);
    return e && e[0] && strcmp(e, "0") != 0;
}
static void mock_big(size_t n, int add) {
    long long v, peak;
    if (n < ((size_t)1 << 20)) return;
    v = atomic_fetch_add(&mock_big_live, add) + add;
    peak = atomic_load(&mock_big_peak);
    while (v > peak && !atomic_compare_exchange_weak(&mock_big_peak, &peak, v)) {}
}
static void mock_block_drop(mock_pool* pool, mock_pool_block* b) {
    pool->bytes -= b->n;
    mock_big(b->n, -1);
    free(b->p);
    free(b);
}
/* Blocks whose pool was destroyed while their cuMemFreeAsync had not run: the free's point frees
   them (a reset, which drops that point, frees them instead). Own lock: the point runs on a stream's
   thread, which mock_device_sync waits for holding the driver's lock. */
static pthread_mutex_t mock_orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static mock_pool_block* mock_orphans;
static void mock_orphan_drop_locked(mock_pool_block* b) {
    for (mock_pool_block** l = &mock_orphans; *l; l = &(*l)->orphan_next)
        if (*l == b) { *l = b->orphan_next; break; }
    mock_big(b->n, -1);
    free(b->p);
    free(b);
}
/* The point of free number gen of the block has run; an orphan's last free drops it (under the
   orphans' lock, which mock_pool_free decides under). */
static void mock_pool_freed(void* block, unsigned gen) {
    mock_pool_block* b = (mock_pool_block*)block;
    pthread_mutex_lock(&mock_orphans_lock);
    atomic_store(&b->done_gen, gen);
    if (b->orphan_gen == gen) mock_orphan_drop_locked(b);
    pthread_mutex_unlock(&mock_orphans_lock);
}
static void mock_orphans_free(int d) {   /* device d's reset: no free's point of its runs any more */
    pthread_mutex_lock(&mock_orphans_lock);
    for (mock_pool_block *b = mock_orphans, *next; b; b = next) {
        next = b->orphan_next;
        if (b->dev == d) mock_orphan_drop_locked(b);
    }
    pthread_mutex_unlock(&mock_orphans_lock);
}
/* Frees a pool and its blocks (the pool's lock not held); cuMemPoolDestroy, as the driver, waits for
   no stream: a block whose free has yet to run goes when it runs; one still allocated ("released once
   there are no more outstanding allocations") at the context's reset, which drains the streams first
   (accel's recover destroys its pool with buffers of the old generation alive, their work in flight). */
static void mock_pool_free(mock_pool* pool) {
    while (pool->blocks) {
        mock_pool_block* b = pool->blocks;
        int orphan;
        pool->blocks = b->next;
        pthread_mutex_lock(&mock_orphans_lock);
        if ((orphan = b->used || atomic_load(&b->done_gen) != b->free_gen) != 0) {   /* in use, or freed later */
            b->orphan_gen = b->used ? UINT_MAX : b->free_gen;   /* used: no free finds it any more */
            b->orphan_next = mock_orphans;
            mock_orphans = b;
            pool->bytes -= b->n;
        }
        pthread_mutex_unlock(&mock_orphans_lock);
        if (!orphan) mock_block_drop(pool, b);
    }
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}
/* Free blocks above the threshold go back (at a synchronize). */
static void mock_pool_trim(mock_pool* pool) {
    pthread_mutex_lock(&pool->lock);
    for (mock_pool_block** l = &pool->blocks; *l && pool->bytes > pool->threshold;) {
        mock_pool_block* b = *l;
        if (b->used || atomic_load(&b->done_gen) != b->free_gen) { l = &b->next; continue; }
        *l = b->next;
        mock_block_drop(pool, b);
    }
    pthread_mutex_unlock(&pool->lock);
}
static void mock_pools_trim(void) {
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nobjs; i++)
        if (mock_objs[i].kind == MOCK_OBJ_POOL) mock_pool_trim((mock_pool*)mock_objs[i].h);
    pthread_mutex_unlock(&mock_driver_lock);
}
typedef struct mock_pool_props { int alloc_type, handle_types, location_type, location_id; } mock_pool_props;
static int mock_pool_dev(const void* pool) { return ((const mock_pool*)pool)->dev; }
static CUresult mMemPoolCreate(mock_pool** out, const mock_pool_props* props) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    mock_pool* pool;
    if (!out || !props || props->alloc_type != 1 || props->location_type != 1 || props->location_id < 0 ||
        props->location_id >= mock_devices() || mock_no_pools())
        return 1;   /* CUDA_ERROR_INVALID_VALUE (pinned device memory of a device is all it makes) */
    if (!(pool = (mock_pool*)calloc(1, sizeof *pool))) return 2;
    pthread_mutex_init(&pool->lock, NULL);
    pool->dev = props->location_id;
    if (!mock_obj_add(pool, MOCK_OBJ_POOL)) { mock_pool_free(pool); return 2; }
    *out = pool;
    return 0;
}
static CUresult mMemPoolDestroy(mock_pool* pool) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (!mock_obj_remove(pool, MOCK_OBJ_POOL)) return 1;
    mock_pool_free(pool);
    return 0;
}
static CUresult mMemPoolSetAttribute(mock_pool* pool, int attr, void* value) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (!pool || !value) return 1;
    if (attr >= 1 && attr <= 3) return 0;   /* the reuse policies: the mock's is fixed (see above) */
    if (attr != 4) return 1;                /* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD */
    pthread_mutex_lock(&pool->lock);
    memcpy(&pool->threshold, value, sizeof pool->threshold);
    pthread_mutex_unlock(&pool->lock);
    return 0;
}
static CUresult mMemAllocFromPoolAsync(dptr_t* out, size_t n, mock_pool* pool, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    mock_pool_block* b = NULL;
    if (!out || !pool || !s || n == 0) return 1;
    if (mock_dead(s->dev)) return mock_dead(s->dev);
    if (n > MOCK_TOTAL_MEM) return 2;   /* CUDA_ERROR_OUT_OF_MEMORY */
    pthread_mutex_lock(&pool->lock);
    for (int pass = 0; pass < 2 && !b; pass++)   /* one its stream freed first, then one free for all */
        for (b = pool->blocks; b; b = b->next)
            if (!b->used && b->n >= n && b->n / 2 <= n &&
                (pass ? atomic_load(&b->done_gen) == b->free_gen : b->freed_on == s))
                break;
    if (!b && (b = (mock_pool_block*)calloc(1, sizeof *b)) != NULL) {
        size_t size = (n + 255u) & ~(size_t)255u;
        if (posix_memalign(&b->p, 256, size) != 0) { free(b); b = NULL; }
        else {
            b->n = size;
            b->dev = pool->dev;
            b->next = pool->blocks;
            pool->blocks = b;
            pool->bytes += size;
            atomic_fetch_add(&mock_pool_blocks_made, 1);
            mock_big(size, 1);
        }
    }
    if (b) b->used = 1;
    pthread_mutex_unlock(&pool->lock);
    if (!b) return 2;
    *out = (dptr_t)(uintptr_t)b->p;
    return 0;
}
static CUresult mMemFreeAsync(dptr_t p, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    mock_pool_block* b = NULL;
    op* o;
    if (!s) return 1;
    if (!(o = new_op(OP_POOL_FREE))) return 2;
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nobjs && !b; i++) {
        mock_pool* pool = (mock_pool*)mock_objs[i].h;
        if (mock_objs[i].kind != MOCK_OBJ_POOL) continue;
        pthread_mutex_lock(&pool->lock);
        for (b = pool->blocks; b && !(b->used && (dptr_t)(uintptr_t)b->p == p); b = b->next) {}
        if (b) {
            b->used = 0;
            b->freed_on = s;
            o->v64 = ++b->free_gen;   /* for all once this one's point ran (not an earlier one's) */
        }
        pthread_mutex_unlock(&pool->lock);
    }
    pthread_mutex_unlock(&mock_driver_lock);
    if (!b) { op_free(o); return 1; }   /* not a live allocation of a pool */
    o->dst = (void*)b;
    return push(s, o);
}

/* ==== the driver API ==== */
/* MOCK_CUDA_GPU_CPU=1: the "GPU" gets a CPU of its own, as a real one runs beside the host's cores: the
   streams' threads run on the last CPU of the process's set, and cuInit's caller (and the threads it makes
   afterwards) on the others. Without it the scheduler may put a stream's thread and the thread that feeds
   it on one core, and keep them there while both poll (a launch + sync round trip then took 1.5 or 9 us
   from one run to the next). For benchmarks; the tests leave the scheduler alone. */
static void mock_gpu_cpu_take(void) {
    cpu_set_t all;
    int last = -1;
    const char* e = getenv("MOCK_CUDA_GPU_CPU");
    if (mock_gpu_cpu >= 0 || !e || strcmp(e, "1") != 0) return;
    if (pthread_getaffinity_np(pthread_self(), sizeof all, &all) != 0 || CPU_COUNT(&all) < 2) return;
    for (int c = 0; c < CPU_SETSIZE; c++) if (CPU_ISSET(c, &all)) last = c;
    CPU_CLR(last, &all);
    if (pthread_setaffinity_np(pthread_self(), sizeof all, &all) == 0) mock_gpu_cpu = last;
}
static CUresult mInit(unsigned f) { MOCK_COUNT(MOCK_CALL_OTHER); (void)f; mock_gpu_cpu_take(); return 0; }
static CUresult mDriverGetVersion(int* v) { MOCK_COUNT(MOCK_CALL_OTHER); *v = 12040; return 0; }
static CUresult mGetErrorName(CUresult r, const char** s) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    *s = r == 0 ? "CUDA_SUCCESS" : r == 600 ? "CUDA_ERROR_NOT_READY" : r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" :
         r == 218 ? "CUDA_ERROR_INVALID_PTX" : r == 500 ? "CUDA_ERROR_NOT_FOUND" : r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" :
         r == 201 ? "CUDA_ERROR_INVALID_CONTEXT" : r == 801 ? "CUDA_ERROR_NOT_SUPPORTED" :
         r == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
    return 0;
}
/* Devices: one, or MOCK_CUDA_DEVICES (1..4) for tests of several devices (tests/test_devices.c). Each
   has its own primary context, a uuid of 15 bytes 0xA0.. then its ordinal, PCI location 0:(0x10 +
   ordinal):0, unified addressing, and peer access to every other one (cuDeviceCanAccessPeer 1;
   cuCtxEnablePeerAccess once per pair, then CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, as the driver), or
   none with MOCK_CUDA_NO_PEER=1 (cuDeviceCanAccessPeer 0: GPUs without it, whose copies are staged). */
static int mock_devices(void) {
    const char* e = getenv("MOCK_CUDA_DEVICES");
    int n = e ? atoi(e) : 1;
    return n < 1 ? 1 : n > MOCK_MAX_DEVICES ? MOCK_MAX_DEVICES : n;
}
static CUresult mDeviceGetCount(int* n) { MOCK_COUNT(MOCK_CALL_OTHER); *n = mock_devices(); return 0; }
static CUresult mDeviceGet(int* d, int i) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    *d = i;
    return i >= 0 && i < mock_devices() ? 0 : 101;
}
/* MOCK_CUDA_UUID=<32 hex digits>: device 0's uuid instead (a GPU that a Vulkan device sees too: set it
   to that device's deviceUUID, as tests/test_devices.c does with lavapipe's, so that the mock and the
   Vulkan device are one GPU and copies between them go through imported memory) */
static int mock_uuid_override(unsigned char* uuid) {
    const char* e = getenv("MOCK_CUDA_UUID");
    unsigned v;
    if (!e || strlen(e) != 32) return 0;
    for (int i = 0; i < 16; i++) {
        char two[3] = { e[2 * i], e[2 * i + 1], 0 };
        if (!isxdigit((unsigned char)two[0]) || !isxdigit((unsigned char)two[1])) return 0;
        if (sscanf(two, "%x", &v) != 1) return 0;
        uuid[i] = (unsigned char)v;
    }
    return 1;
}
static CUresult mDeviceGetUuid(unsigned char* uuid, int d) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (d < 0 || d >= mock_devices()) return 101;
    if (d == 0 && mock_uuid_override(uuid)) return 0;
    for (int i = 0; i < 15; i++) uuid[i] = (unsigned char)(0xA0 + i);
    uuid[15] = (unsigned char)d;
    return 0;
}
static CUresult mDeviceCanAccessPeer(int* can, int d, int peer) {
    const char* no = getenv("MOCK_CUDA_NO_PEER");   /* GPUs without peer access: staged copies */
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (d < 0 || d >= mock_devices() || peer < 0 || peer >= mock_devices()) return 101;
    *can = d != peer && !(no && no[0] && strcmp(no, "0") != 0);
    return 0;
}
static CUresult mDeviceGetName(char* name, int len, int d) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    (void)d;
    snprintf(name, (size_t)len, "accel mock GPU (CPU)");
    return 0;
}
static CUresult mDeviceGetAttribute(int* v, int a, int d) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (d < 0 || d >= mock_devices()) return 101;
    if (getenv("MOCK_CUDA_ATTR_FAILS") && atoi(getenv("MOCK_CUDA_ATTR_FAILS")) == a) return 1;
    switch (a) {
    case 1: *v = 1024; break; case 2: *v = 1024; break; case 3: *v = 1024; break; case 4: *v = 64; break;
    case 5: *v = 2147483647; break; case 6: *v = 65535; break; case 7: *v = 65535; break;
    case 18: *v = 0; break; case 19: *v = 1; break; case 75: *v = 9; break; case 76: *v = 0; break;
    case 122: *v = 1; break;
    case 33: *v = 0x10 + d; break; case 34: *v = 0; break; case 50: *v = 0; break;   /* PCI bus, device, */
                                                                                     /* domain */
    case 41: *v = 1; break;                                                          /* unified addressing */
    case 115: *v = !mock_no_pools(); break;                                          /* memory pools */
    case 102: case 103: *v = !mock_env_set("MOCK_CUDA_NO_VMM"); break;            /* VMM, as a POSIX fd */
    default: *v = 0; break;
    }
    return 0;
}
static CUresult mDeviceTotalMem(size_t* b, int d) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    (void)d;
    *b = MOCK_TOTAL_MEM;
    return 0;
}
static atomic_uint mock_peer_enabled[MOCK_MAX_DEVICES];       /* bit p of [c]: context c reaches p */
/* MOCK_CUDA_STICKY_SURVIVES=1: a sticky error outlives the reset, and cuDevicePrimaryCtxRetain returns
   it, as NVIDIA's driver does (580 on an H200: "the process must be terminated and relaunched"). */
static int mock_sticky_survives(void) {
    const char* e = getenv("MOCK_CUDA_STICKY_SURVIVES");
    return e && e[0] == '1';
}
static CUresult mPrimaryCtxRetain(void** ctx, int d) {
    MOCK_COUNT(MOCK_CALL_CONTEXT);
    int sticky;
    if (d < 0 || d >= mock_devices()) return 101;
    if (atomic_load(&mock_hung)) return 999;
    sticky = atomic_load(&mock_sticky[d]);
    if (sticky && sticky != 709 && mock_sticky_survives()) return sticky;   /* NVIDIA's drivers */
    *ctx = &mock_ctx_token[d];
    return 0;
}
static CUresult mPrimaryCtxRelease(int d) { MOCK_COUNT(MOCK_CALL_CONTEXT); (void)d; return 0; }
static CUresult mCtxSetCurrent(void* ctx) {
    MOCK_COUNT(MOCK_CALL_CONTEXT);
    mock_current = (int*)ctx;
    return 0;
}
static CUresult mCtxEnablePeerAccess(void* peer, unsigned f) {
    int c, p;
    MOCK_COUNT(MOCK_CALL_CONTEXT);
    if (!mock_current || !peer || f != 0) return 1;   /* CUDA_ERROR_INVALID_VALUE */
    c = (int)(mock_current - mock_ctx_token);
    p = (int)((int*)peer - mock_ctx_token);
    if (c == p) return 1;
    if (atomic_fetch_or(&mock_peer_enabled[c], 1u << p) & (1u << p)) return 704;
    return 0;
}
/* A memory limit (mock_cuda_set_memory_limit; 0, the default: none): cuMemAlloc refuses, with
   CUDA_ERROR_OUT_OF_MEMORY as a full GPU does, an allocation that would take the bytes of its device's
   live allocations (cuMemCreate's too, and cuMemCreate likewise) past it (each device has that size),
   and cuMemHostAlloc likewise with all pinned memory (mapped imports and pools' blocks do not count).
   Each refusal counts in mock_cuda_out_of_memory(). Under the driver's lock. */
static atomic_llong mock_mem_limit, mock_oom;
static size_t mock_vmm_bytes[MOCK_MAX_DEVICES];   /* each device's live cuMemCreate memory (the lock) */
static int mock_over_limit_locked(int kind, size_t n) {
    long long limit = atomic_load(&mock_mem_limit), used = (long long)n;
    if (limit <= 0) return 0;
    if (kind == MOCK_OBJ_MEM) used += (long long)mock_vmm_bytes[mock_cur_dev()];
    for (size_t i = 0; i < mock_nhosts && kind == MOCK_OBJ_HOST; i++) used += (long long)mock_hosts[i].n;
    for (size_t i = 0; i < mock_nobjs && kind == MOCK_OBJ_MEM; i++)
        if (mock_objs[i].kind == MOCK_OBJ_MEM && !mock_objs[i].mapped && mock_objs[i].dev == mock_cur_dev())
            used += (long long)mock_objs[i].n;
    if (used <= limit) return 0;
    atomic_fetch_add(&mock_oom, 1);
    return 1;
}
static CUresult mMemAlloc(dptr_t* p, size_t n) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    void* m = NULL;
    if (n > MOCK_TOTAL_MEM || posix_memalign(&m, 256, n ? n : 1) != 0) return 2;   /* OUT_OF_MEMORY */
    pthread_mutex_lock(&mock_driver_lock);
    if (mock_over_limit_locked(MOCK_OBJ_MEM, n) || !mock_obj_add_locked(m, MOCK_OBJ_MEM)) {
        pthread_mutex_unlock(&mock_driver_lock);
        free(m);
        return 2;
    }
    mock_objs[mock_nobjs - 1].n = n;
    pthread_mutex_unlock(&mock_driver_lock);
    mock_big(n, 1);
    *p = (dptr_t)(uintptr_t)m;
    return 0;
}
static CUresult mMemFree(dptr_t p) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    int live, mapped = 0, dev = mock_cur_dev();
    pthread_mutex_lock(&mock_driver_lock);
    mock_device_sync();
    for (size_t i = 0; i < mock_nobjs; i++)
        if (mock_objs[i].h == (void*)(uintptr_t)p && mock_objs[i].kind == MOCK_OBJ_MEM) {
            mapped = mock_objs[i].mapped;
            dev = mock_objs[i].dev;
            if (!mapped) mock_big(mock_objs[i].n, -1);
        }
    if (mapped == 2) {   /* a VMM mapping: cuMemUnmap's, not cuMemFree's (the driver refuses it) */
        pthread_mutex_unlock(&mock_driver_lock);
        return 1;
    }
    live = mock_obj_remove_locked((void*)(uintptr_t)p, MOCK_OBJ_MEM);
    pthread_mutex_unlock(&mock_driver_lock);
    if (!live) return 1;   /* CUDA_ERROR_INVALID_VALUE */
    if (!mapped) free((void*)(uintptr_t)p);
    return mock_dead(dev);
}
static CUresult mMemHostAlloc(void** p, size_t n, unsigned f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    (void)f;
    if (n > MOCK_TOTAL_MEM || posix_memalign(p, 4096, n ? n : 1) != 0) return 2;   /* pinned: page-aligned */
    pthread_mutex_lock(&mock_driver_lock);
    if (mock_over_limit_locked(MOCK_OBJ_HOST, n ? n : 1) ||
        !mock_grow((void**)&mock_hosts, &mock_hosts_cap, mock_nhosts + 1, sizeof *mock_hosts) ||
        !mock_obj_add_locked(*p, MOCK_OBJ_HOST)) {
        pthread_mutex_unlock(&mock_driver_lock);
        free(*p);
        return 2;
    }
    mock_hosts[mock_nhosts].dev = mock_cur_dev();
    mock_hosts[mock_nhosts].p = (const char*)*p;
    mock_hosts[mock_nhosts++].n = n ? n : 1;
    pthread_mutex_unlock(&mock_driver_lock);
    memset(*p, 0, n ? n : 1);
    return 0;
}
static CUresult mMemFreeHost(void* p) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    int live;
    pthread_mutex_lock(&mock_driver_lock);
    mock_device_sync();
    for (size_t i = 0; i < mock_nhosts; i++)
        if (mock_hosts[i].p == (const char*)p) { mock_hosts[i] = mock_hosts[--mock_nhosts]; break; }
    live = mock_obj_remove_locked(p, MOCK_OBJ_HOST);
    pthread_mutex_unlock(&mock_driver_lock);
    if (!live) return 1;
    free(p);
    return 0;
}
static CUresult mMemHostGetDevicePointer(dptr_t* d, void* h, unsigned f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    (void)f;
    *d = (dptr_t)(uintptr_t)h;
    return 0;
}
/* ==== external memory (cuImportExternalMemory: a Vulkan device's memory on the same GPU) ====
   An opaque fd (the only handle type taken) is what the Vulkan driver of the same GPU exported. An
   opaque fd is read only by a driver of that GPU: the mock stands for the CUDA driver of lavapipe's
   device (the CPU), so it reads the fd as Mesa lays it out (util/os_memory_fd.c: a memfd that starts
   with the mapping's whole size and the data's offset, two size_t; the data at that offset). The
   import maps the whole memfd (MAP_SHARED: the Vulkan side's pages themselves) and takes the fd, as
   the driver does on success (it stays the caller's on failure); cuExternalMemoryGetMappedBuffer
   hands out a range of the data as a device pointer, a live allocation until cuMemFree (which frees
   nothing); cuDestroyExternalMemory unmaps it, so that a mapped buffer used after it faults, as the
   driver says it must not be used. An fd not laid out so, a size larger than its data, a range past
   the memory, flags or another handle type fail with CUDA_ERROR_INVALID_VALUE; so does every import
   while MOCK_CUDA_IMPORT_FAILS=1 (read at each call: a driver that refuses the memory). A context reset
   destroys the imports as it frees the rest. */
typedef struct mock_extmem { void* base; size_t size; char* data; size_t data_size; } mock_extmem;
typedef struct mock_extmem_desc {   /* CUDA_EXTERNAL_MEMORY_HANDLE_DESC */
    int type;
    union { int fd; struct { void* handle; const void* name; } win32; const void* sci; } handle;
    unsigned long long size;
    unsigned flags, reserved[16];
} mock_extmem_desc;
typedef struct mock_extmem_buffer_desc {   /* CUDA_EXTERNAL_MEMORY_BUFFER_DESC */
    unsigned long long offset, size;
    unsigned flags, reserved[16];
} mock_extmem_buffer_desc;
static void mock_extmem_free(mock_extmem* m) {
    munmap(m->base, m->size);
    free(m);
}
static CUresult mImportExternalMemory(mock_extmem** out, const mock_extmem_desc* d) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    struct stat st;
    size_t head[2];   /* Mesa's memfd header: the whole size, the data's offset */
    mock_extmem* m;
    void* base;
    const char* refuse = getenv("MOCK_CUDA_IMPORT_FAILS");
    if (!out || !d || d->type != 1 /* OPAQUE_FD */ || d->handle.fd < 0 || !d->size || d->flags) return 1;
    if (refuse && refuse[0] && strcmp(refuse, "0") != 0) return 1;
    if (fstat(d->handle.fd, &st) != 0 || pread(d->handle.fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
        head[0] != (size_t)st.st_size || head[1] < sizeof head || head[1] > head[0] ||
        head[0] - head[1] < d->size)
        return 1;
    base = mmap(NULL, head[0], PROT_READ | PROT_WRITE, MAP_SHARED, d->handle.fd, 0);
    if (base == MAP_FAILED) return 2;
    if (!(m = (mock_extmem*)malloc(sizeof *m)) || !mock_obj_add(m, MOCK_OBJ_EXTMEM)) {
        munmap(base, head[0]);
        free(m);
        return 2;
    }
    m->base = base;
    m->size = head[0];
    m->data = (char*)base + head[1];
    m->data_size = (size_t)d->size;
    close(d->handle.fd);   /* the driver's now: the mapping keeps the pages */
    *out = m;
    return 0;
}
static CUresult mExternalMemoryGetMappedBuffer(dptr_t* p, mock_extmem* m, const mock_extmem_buffer_desc* d) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    int live = 0;
    if (!p || !d || d->flags) return 1;
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nobjs && !live; i++)
        live = mock_objs[i].h == m && mock_objs[i].kind == MOCK_OBJ_EXTMEM;
    if (!live || !d->size || d->offset > m->data_size || d->size > m->data_size - d->offset ||
        !mock_obj_add_locked(m->data + d->offset, MOCK_OBJ_MEM)) {
        pthread_mutex_unlock(&mock_driver_lock);
        return 1;
    }
    mock_objs[mock_nobjs - 1].n = (size_t)d->size;
    mock_objs[mock_nobjs - 1].mapped = 1;
    pthread_mutex_unlock(&mock_driver_lock);
    *p = (dptr_t)(uintptr_t)(m->data + d->offset);
    return 0;
}
static CUresult mDestroyExternalMemory(mock_extmem* m) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (!mock_obj_remove(m, MOCK_OBJ_EXTMEM)) return 1;
    mock_extmem_free(m);
    return 0;
}
/* ==== external semaphores (cuImportExternalSemaphore: a Vulkan timeline semaphore's opaque fd) ====
   Only a driver of the GPU that exported an opaque fd reads what semaphore it is: a test registers a
   provider instead (mock_cuda_sem_provider, a copy kept; NULL, or one without resolve or reached, takes
   it away) that resolves an fd to a handle of its own and answers for it (mock_cuda_sem_ops). Only
   CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD (9) is taken; another type, or no provider,
   is CUDA_ERROR_NOT_SUPPORTED; an fd the provider refuses, CUDA_ERROR_INVALID_HANDLE; on a failure the
   fd stays the caller's, on success the driver takes it (closed: the handle names the semaphore). An
   import is the current context's device's object (none current: CUDA_ERROR_INVALID_CONTEXT), listed
   with the rest (mock_cuda_live; mock_cuda_live_sems counts them alone). cuWaitExternalSemaphoresAsync
   enqueues an operation a semaphore that waits on its stream until the provider says the semaphore
   reached the fence value (asked again and again, for up to MOCK_SEM_SLICE_NS each time, yielding
   between) or the context dies, as a wait on a word does; cuSignalExternalSemaphoresAsync one that has
   the provider raise it. An operation holds its import until it ran or was skipped (before its stream
   counts it done): the provider's release (once an import) runs when the import is destroyed and no
   operation holds it any more, on whichever thread lets it go last, so that one destroyed with
   operations queued is not freed under them. A destroy, wait or signal of a
   handle that is not live (destroyed, made before a reset, never made) fails with
   CUDA_ERROR_INVALID_HANDLE, enqueues nothing and counts in mock_cuda_sem_misuse() (and, as other
   objects' stale uses, in mock_cuda_stale_uses()). A reset destroys its device's imports with the rest
   of the context's objects, as the driver does (the provider's release then, under the driver's lock);
   a sticky error alone destroys none: their operations are skipped and a pending wait gives up.
   mock_cuda_sem_waits() and mock_cuda_sem_signals() count the operations that ran (a wait from its
   start). The provider is called from streams' threads and the host at once. */
#define MOCK_SEM_SLICE_NS 1000000ull
typedef struct mock_cuda_sem_ops {   /* a test's provider (it copies the declaration) */
    void* user;
    int (*resolve)(void* user, int fd, void** handle);     /* 0: ok; the fd's semaphore */
    /* 1: the semaphore's value >= value; 0: not yet (after waiting up to timeout_ns, or at once) */
    int (*reached)(void* user, void* handle, uint64_t value, uint64_t timeout_ns);
    void (*signal)(void* user, void* handle, uint64_t value);
    void (*release)(void* user, void* handle);
} mock_cuda_sem_ops;
/* An import: the provider that resolved it, its handle; refs: the list's (until destroyed) and ops'. */
typedef struct mock_sem { mock_cuda_sem_ops ops; void* handle; atomic_int refs; } mock_sem;
typedef struct mock_extsem_desc {   /* CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC */
    int type;
    union { int fd; struct { void* handle; const void* name; } win32; const void* sci; } handle;
    unsigned flags, reserved[16];
} mock_extsem_desc;
typedef struct mock_extsem_params {   /* CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS; _WAIT_PARAMS alike */
    struct {
        struct { unsigned long long value; } fence;
        unsigned long long sci, key;   /* nvSciSync, keyedMutex: not the mock's */
        unsigned reserved[12];
    } params;
    unsigned flags, reserved[16];
} mock_extsem_params;
_Static_assert(sizeof(mock_extsem_params) == 144, "CUDA_EXTERNAL_SEMAPHORE_*_PARAMS are 144 bytes");
static mock_cuda_sem_ops mock_sem_provider_ops;   /* resolve NULL: none (mock_driver_lock) */
static atomic_llong mock_sem_waits, mock_sem_signals, mock_sem_misuses;
static void mock_sem_put(mock_sem* m) {
    if (atomic_fetch_sub(&m->refs, 1) != 1) return;
    if (m->ops.release) m->ops.release(m->ops.user, m->handle);
    free(m);
}
static CUresult mock_sem_misused(void) {
    atomic_fetch_add(&mock_sem_misuses, 1);
    return 400;   /* CUDA_ERROR_INVALID_HANDLE */
}
static int mock_sem_live_locked(const mock_sem* m) {   /* 0 (a stale use) when not live */
    for (size_t i = 0; i < mock_nobjs; i++)
        if (mock_objs[i].h == m && mock_objs[i].kind == MOCK_OBJ_EXTSEM) return 1;
    atomic_fetch_add(&mock_stale, 1);
    return 0;
}
static CUresult mImportExternalSemaphore(mock_sem** out, const mock_extsem_desc* d) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    mock_sem* m;
    void* handle = NULL;
    if (!out || !d) return 1;
    if (d->type != 9) return 801;   /* CUDA_ERROR_NOT_SUPPORTED */
    if (!mock_current) return 201;  /* CUDA_ERROR_INVALID_CONTEXT */
    if (mock_dead(mock_cur_dev())) return mock_dead(mock_cur_dev());
    if (!(m = (mock_sem*)calloc(1, sizeof *m))) return 2;
    pthread_mutex_lock(&mock_driver_lock);
    m->ops = mock_sem_provider_ops;
    pthread_mutex_unlock(&mock_driver_lock);
    if (!m->ops.resolve || m->ops.resolve(m->ops.user, d->handle.fd, &handle) != 0) {
        CUresult r = m->ops.resolve ? 400 : 801;   /* refused; no provider */
        free(m);
        return r;
    }
    m->handle = handle;
    atomic_init(&m->refs, 1);
    if (!mock_obj_add(m, MOCK_OBJ_EXTSEM)) {
        mock_sem_put(m);
        return 2;
    }
    close(d->handle.fd);   /* the driver's now */
    *out = m;
    return 0;
}
/* One operation a semaphore, each holding its import, in the array's order; all or none enqueued. */
static CUresult mock_sems_enqueue(op_kind k, mock_sem* const* sems, const mock_extsem_params* p, unsigned n,
                                  mock_stream* s) {
    op* list = NULL;
    CUresult r = 0;
    MOCK_COUNT(MOCK_CALL_MEMOP);
    if (!s || (n && (!sems || !p))) return 1;
    pthread_mutex_lock(&mock_driver_lock);
    for (unsigned i = 0; i < n && !r; i++)
        if (!mock_sem_live_locked(sems[i])) r = mock_sem_misused();
    for (unsigned i = n; i-- > 0 && !r;) {   /* last to first: the list in order */
        op* o = new_op(k);
        if (!o) { r = 2; break; }
        o->sem = sems[i];
        atomic_fetch_add(&o->sem->refs, 1);
        o->v64 = p[i].params.fence.value;
        o->next = list;
        list = o;
    }
    pthread_mutex_unlock(&mock_driver_lock);
    while (list) {
        op* o = list;
        list = o->next;
        if (r) op_free(o);
        else r = push(s, o);
    }
    return r;
}
static CUresult mWaitExternalSemaphoresAsync(mock_sem* const* sems, const mock_extsem_params* p, unsigned n,
                                             mock_stream* s) {
    return mock_sems_enqueue(OP_SEM_WAIT, sems, p, n, s);
}
static CUresult mSignalExternalSemaphoresAsync(mock_sem* const* sems, const mock_extsem_params* p, unsigned n,
                                               mock_stream* s) {
    return mock_sems_enqueue(OP_SEM_SIGNAL, sems, p, n, s);
}
static void mock_sem_run(const op* o) {   /* on the stream's thread */
    const mock_sem* m = o->sem;
    if (o->kind == OP_SEM_SIGNAL) {
        atomic_fetch_add(&mock_sem_signals, 1);
        if (m->ops.signal) m->ops.signal(m->ops.user, m->handle, o->v64);
        return;
    }
    atomic_fetch_add(&mock_sem_waits, 1);
    while (!m->ops.reached(m->ops.user, m->handle, o->v64, MOCK_SEM_SLICE_NS) && !mock_dead(mock_running))
        sched_yield();
}
static CUresult mDestroyExternalSemaphore(mock_sem* m) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (!mock_obj_remove(m, MOCK_OBJ_EXTSEM)) return mock_sem_misused();
    mock_sem_put(m);
    return 0;
}
/* ==== virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess, ...) ====
   The driver's VMM calls split an allocation in three: physical memory (cuMemCreate: a handle), a
   range of addresses (cuMemAddressReserve) and the mapping of one into the other (cuMemMap), usable
   once cuMemSetAccess gives a device access. The physical memory is exportable as a POSIX fd
   (cuMemExportToShareableHandle, when cuMemCreate asked for that handle type) that a Vulkan driver of
   the same GPU imports (VK_KHR_external_memory_fd, opaque fd). The mock stands for the GPU of
   lavapipe's device (the CPU): its physical memory is a memfd laid out as Mesa lays out its own
   (util/os_memory_fd.c: the whole size and the data's offset, two size_t, then the first 16 bytes of
   the SHA-1 of "llvmpipe", the offset again just before the data; the data at 4096), so that
   lavapipe's vkAllocateMemory imports the fd (a memfd without the fd handle type has no header: the
   mock's alone). A reservation is PROT_NONE anonymous memory; cuMemMap maps the memfd's data over
   part of it (MAP_SHARED: an importer's pages themselves), with no access; cuMemSetAccess READWRITE
   makes it readable and writable and a device allocation (copies, fills, kernels take it like
   cuMemAlloc's; cuMemFree refuses it); cuMemUnmap waits for the device (as cuMemFree), puts PROT_NONE
   anonymous memory back over it, so that a use after it faults, as on a GPU. A handle holds its
   memory while the caller holds it (cuMemCreate, cuMemRetainAllocationHandle; each cuMemRelease drops
   one) or a mapping uses it, as the driver documents; an exported fd is the caller's and keeps the
   pages by itself. The granularity is 2 MiB; sizes, alignments, ranges, locations, handle types and
   flags that the driver refuses fail with CUDA_ERROR_INVALID_VALUE; a release (cuMemRelease,
   cuMemUnmap, cuMemAddressFree) or a use of a handle that is not live counts in
   mock_cuda_stale_uses(). MOCK_CUDA_NO_VMM=1: the device has no
   VMM (attributes 102, 103 are 0; cuMemCreate, cuMemAddressReserve, cuMemGetAllocationGranularity fail
   with CUDA_ERROR_NOT_SUPPORTED); MOCK_CUDA_EXPORT_FAILS=1: every export fails (a driver that
   refuses); both read at each call. The handles, reservations and mappings are the current context's
   device's objects (a mapping its reservation's), listed with the rest (mock_cuda_live; a handle and
   a mapping given access count in mock_cuda_live_memory, not as imports): its reset unmaps, frees and
   releases them. */
#define MOCK_VMM_GRAIN ((size_t)2 << 20)
#define MOCK_VMM_HEAD ((size_t)4096)   /* the memfd's header page; the data after it */
typedef struct mock_vmm { int fd; int exportable; size_t size; int held; int maps; int dev; } mock_vmm;
typedef struct mock_mem_location { int type, id; } mock_mem_location;   /* CUmemLocation */
typedef unsigned long long mock_handle;                                 /* CUmemGenericAllocationHandle */
typedef struct mock_mem_prop {                                          /* CUmemAllocationProp */
    int type, handle_types;
    mock_mem_location location;
    void* win32_metadata;
    struct { unsigned char compression, rdma; unsigned short usage; unsigned char reserved[4]; } flags;
} mock_mem_prop;
/* CUmemAccessDesc */
typedef struct mock_mem_access { mock_mem_location location; int flags; } mock_mem_access;
/* PINNED memory on a device, with no handle type or a POSIX fd */
static int mock_vmm_prop_ok(const mock_mem_prop* p) {
    return p && p->type == 1 && p->location.type == 1 && p->location.id >= 0 &&
           p->location.id < mock_devices() && (p->handle_types == 0 || p->handle_types == 1);
}
/* The list's index of the live object of that kind whose range holds [p, p + n) (exactly, when exact),
   or -1. Under the driver's lock. */
static long mock_vmm_find_locked(int kind, const void* p, size_t n, int exact) {
    for (size_t i = 0; i < mock_nobjs; i++) {
        const char *h = (const char*)mock_objs[i].h, *at = (const char*)p;
        size_t hn = mock_objs[i].n;
        if (mock_objs[i].kind != kind) continue;
        if (exact ? h == at && hn == n : at >= h && n <= hn && (size_t)(at - h) <= hn - n) return (long)i;
    }
    return -1;
}
static long mock_vmm_handle_locked(mock_handle handle) {   /* a live handle's index, or -1 */
    for (size_t i = 0; i < mock_nobjs; i++)
        if (mock_objs[i].kind == MOCK_OBJ_VMM && mock_objs[i].h == (void*)(uintptr_t)handle) return (long)i;
    return -1;
}
static void mock_obj_take_locked(long i) { mock_objs[i] = mock_objs[--mock_nobjs]; }
/* Whether a mapping lies (in part) in [p, p + n). */
static int mock_vmap_in_locked(const char* p, size_t n) {
    for (size_t i = 0; i < mock_nobjs; i++)
        if (mock_objs[i].kind == MOCK_OBJ_VMAP && (const char*)mock_objs[i].h < p + n &&
            p < (const char*)mock_objs[i].h + mock_objs[i].n)
            return 1;
    return 0;
}
/* The memory goes once nobody holds or maps it (its memfd closed: exported fds keep their pages). */
static void mock_vmm_put_locked(mock_vmm* v) {
    if (v->held || v->maps) return;
    close(v->fd);
    mock_vmm_bytes[v->dev] -= v->size;
    mock_big(v->size, -1);
    free(v);
}
/* A mapping goes: its addresses PROT_NONE again (still reserved), its allocation one use less. */
static void mock_vmap_free_locked(const mock_obj* o) {
    mock_vmm* v = (mock_vmm*)o->of;
    mmap(o->h, o->n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    v->maps--;
    mock_vmm_put_locked(v);
}
static CUresult mMemGetAllocationGranularity(size_t* g, const mock_mem_prop* prop, int option) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (mock_env_set("MOCK_CUDA_NO_VMM")) return 801;   /* CUDA_ERROR_NOT_SUPPORTED */
    if (!g || !mock_vmm_prop_ok(prop) || (option != 0 && option != 1)) return 1;
    *g = MOCK_VMM_GRAIN;   /* minimum and recommended alike */
    return 0;
}
static CUresult mMemCreate(mock_handle* out, size_t size, const mock_mem_prop* prop, unsigned long long fl) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    static const unsigned char llvmpipe_uuid[16] = {   /* SHA-1("llvmpipe")[0..15]: Mesa's driver id */
        0x6c, 0xb9, 0xee, 0x07, 0x4a, 0x0b, 0xad, 0x7b, 0x01, 0x2e, 0x1b, 0xe9, 0x69, 0x7e, 0x53, 0x0f };
    struct { size_t total, offset; unsigned char uuid[16]; } head =
        { MOCK_VMM_HEAD + size, MOCK_VMM_HEAD, {0} };
    size_t tail = MOCK_VMM_HEAD;   /* just before the data: Mesa's os_free_fd finds the header by it */
    mock_vmm* v;
    int fd;
    if (mock_env_set("MOCK_CUDA_NO_VMM")) return 801;
    if (!out || !mock_vmm_prop_ok(prop) || !size || size % MOCK_VMM_GRAIN || fl) return 1;
    if (size > MOCK_TOTAL_MEM) return 2;   /* CUDA_ERROR_OUT_OF_MEMORY */
    memcpy(head.uuid, llvmpipe_uuid, sizeof head.uuid);
    if ((fd = memfd_create("mock_cuda_vmm", MFD_CLOEXEC)) < 0) return 2;
    if (ftruncate(fd, (off_t)(MOCK_VMM_HEAD + size)) != 0 ||
        (prop->handle_types == 1 &&
         (pwrite(fd, &head, sizeof head, 0) != (ssize_t)sizeof head ||
          pwrite(fd, &tail, sizeof tail, (off_t)(MOCK_VMM_HEAD - sizeof tail)) != (ssize_t)sizeof tail)) ||
        !(v = (mock_vmm*)malloc(sizeof *v))) {
        close(fd);
        return 2;
    }
    v->fd = fd;
    v->exportable = prop->handle_types == 1;
    v->size = size;
    v->held = 1;
    v->maps = 0;
    v->dev = mock_cur_dev();
    pthread_mutex_lock(&mock_driver_lock);
    if (mock_over_limit_locked(MOCK_OBJ_MEM, size) || !mock_obj_add_locked(v, MOCK_OBJ_VMM)) {
        pthread_mutex_unlock(&mock_driver_lock);
        close(fd);
        free(v);
        return 2;
    }
    mock_objs[mock_nobjs - 1].n = size;
    mock_vmm_bytes[v->dev] += size;
    pthread_mutex_unlock(&mock_driver_lock);
    mock_big(size, 1);
    *out = (mock_handle)(uintptr_t)v;
    return 0;
}
static CUresult mMemRelease(mock_handle handle) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    long i;
    mock_vmm* v;
    pthread_mutex_lock(&mock_driver_lock);
    if ((i = mock_vmm_handle_locked(handle)) < 0) {
        pthread_mutex_unlock(&mock_driver_lock);
        atomic_fetch_add(&mock_stale, 1);
        return 1;
    }
    v = (mock_vmm*)mock_objs[i].h;
    if (--v->held == 0) mock_obj_take_locked(i);   /* no longer the caller's: its mappings may hold it */
    mock_vmm_put_locked(v);
    pthread_mutex_unlock(&mock_driver_lock);
    return 0;
}
static CUresult mMemAddressReserve(dptr_t* p, size_t size, size_t align, dptr_t addr, unsigned long long f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    char *m, *at;
    (void)addr;   /* a hint: the mock takes what mmap gives */
    if (mock_env_set("MOCK_CUDA_NO_VMM")) return 801;
    if (!p || !size || size % MOCK_VMM_GRAIN || (align & (align - 1)) || f) return 1;
    if (align < MOCK_VMM_GRAIN) align = MOCK_VMM_GRAIN;
    if (size > SIZE_MAX - align) return 2;
    m = (char*)mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return 2;
    at = (char*)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));   /* aligned: the rest let go */
    if (at > m) munmap(m, (size_t)(at - m));
    if (at + size < m + size + align) munmap(at + size, (size_t)(m + size + align - (at + size)));
    pthread_mutex_lock(&mock_driver_lock);
    if (!mock_obj_add_locked(at, MOCK_OBJ_VRANGE)) {
        pthread_mutex_unlock(&mock_driver_lock);
        munmap(at, size);
        return 2;
    }
    mock_objs[mock_nobjs - 1].n = size;
    pthread_mutex_unlock(&mock_driver_lock);
    *p = (dptr_t)(uintptr_t)at;
    return 0;
}
static CUresult mMemAddressFree(dptr_t p, size_t size) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    long i;
    char* at = (char*)(uintptr_t)p;
    pthread_mutex_lock(&mock_driver_lock);
    if ((i = mock_vmm_find_locked(MOCK_OBJ_VRANGE, at, size, 1)) < 0 || mock_vmap_in_locked(at, size)) {
        pthread_mutex_unlock(&mock_driver_lock);   /* a whole reservation, nothing mapped in it */
        if (i < 0) atomic_fetch_add(&mock_stale, 1);
        return 1;
    }
    mock_obj_take_locked(i);
    munmap(at, size);
    pthread_mutex_unlock(&mock_driver_lock);
    return 0;
}
static CUresult mMemMap(dptr_t p, size_t size, size_t offset, mock_handle handle, unsigned long long f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    long r, h;
    char* at = (char*)(uintptr_t)p;
    mock_vmm* v;
    if (offset || f || !size) return 1;
    pthread_mutex_lock(&mock_driver_lock);
    r = mock_vmm_find_locked(MOCK_OBJ_VRANGE, at, size, 0);   /* in one reservation, not mapped yet */
    h = mock_vmm_handle_locked(handle);
    v = h < 0 ? NULL : (mock_vmm*)mock_objs[h].h;
    if (r < 0 || !v || mock_vmap_in_locked(at, size) || size != v->size ||
        mmap(at, size, PROT_NONE, MAP_SHARED | MAP_FIXED, v->fd, (off_t)MOCK_VMM_HEAD) == MAP_FAILED) {
        pthread_mutex_unlock(&mock_driver_lock);
        if (h < 0) atomic_fetch_add(&mock_stale, 1);
        return 1;
    }
    if (!mock_obj_add_locked(at, MOCK_OBJ_VMAP)) {
        mmap(at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        pthread_mutex_unlock(&mock_driver_lock);
        return 2;
    }
    mock_objs[mock_nobjs - 1].n = size;
    mock_objs[mock_nobjs - 1].of = v;
    mock_objs[mock_nobjs - 1].dev = mock_objs[r].dev;   /* its reservation's: one reset ends both */
    v->maps++;
    pthread_mutex_unlock(&mock_driver_lock);
    return 0;
}
/* The devices given access: READWRITE for one of them makes the range readable and writable (the
   mock's one memory), device memory from then on; none of them, PROT_NONE again and not device memory. */
static CUresult mMemSetAccess(dptr_t p, size_t size, const mock_mem_access* desc, size_t count) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    long m, mem;
    int access;
    char* at = (char*)(uintptr_t)p;
    if (!desc || !count) return 1;
    for (size_t k = 0; k < count; k++)   /* READWRITE or none (read-only is not for a device) */
        if (desc[k].location.type != 1 || desc[k].location.id < 0 || desc[k].location.id >= mock_devices() ||
            (desc[k].flags != 0 && desc[k].flags != 3))
            return 1;
    pthread_mutex_lock(&mock_driver_lock);
    if ((m = mock_vmm_find_locked(MOCK_OBJ_VMAP, at, size, 1)) < 0) {   /* exactly a mapping */
        pthread_mutex_unlock(&mock_driver_lock);
        return 1;
    }
    access = mock_objs[m].mapped;
    for (size_t k = 0; k < count; k++)
        access = desc[k].flags ? access | 1 << desc[k].location.id : access & ~(1 << desc[k].location.id);
    mem = mock_vmm_find_locked(MOCK_OBJ_MEM, at, size, 1);
    if (access && mem < 0) {
        if (!mock_obj_add_locked(at, MOCK_OBJ_MEM)) {
            pthread_mutex_unlock(&mock_driver_lock);
            return 2;
        }
        mock_objs[mock_nobjs - 1].n = size;
        mock_objs[mock_nobjs - 1].mapped = 2;
        mock_objs[mock_nobjs - 1].dev = mock_objs[m].dev;
    } else if (!access && mem >= 0) {
        mock_obj_take_locked(mem);
    }
    mock_objs[m].mapped = access;
    mprotect(at, size, access ? PROT_READ | PROT_WRITE : PROT_NONE);
    pthread_mutex_unlock(&mock_driver_lock);
    return 0;
}
static CUresult mMemUnmap(dptr_t p, size_t size) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    long m, mem;
    mock_obj o;
    char* at = (char*)(uintptr_t)p;
    pthread_mutex_lock(&mock_driver_lock);
    mock_device_sync();   /* as cuMemFree: no stream uses it any more */
    if ((m = mock_vmm_find_locked(MOCK_OBJ_VMAP, at, size, 1)) < 0) {   /* exactly a mapping */
        pthread_mutex_unlock(&mock_driver_lock);
        atomic_fetch_add(&mock_stale, 1);
        return 1;
    }
    o = mock_objs[m];
    mock_obj_take_locked(m);
    if ((mem = mock_vmm_find_locked(MOCK_OBJ_MEM, at, size, 1)) >= 0) mock_obj_take_locked(mem);
    mock_vmap_free_locked(&o);
    pthread_mutex_unlock(&mock_driver_lock);
    return 0;
}
static CUresult mMemRetainAllocationHandle(mock_handle* handle, void* addr) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    long m;
    mock_vmm* v;
    if (!handle) return 1;
    pthread_mutex_lock(&mock_driver_lock);
    if ((m = mock_vmm_find_locked(MOCK_OBJ_VMAP, addr, 1, 0)) < 0) {   /* an address in a mapping */
        pthread_mutex_unlock(&mock_driver_lock);
        return 1;
    }
    v = (mock_vmm*)mock_objs[m].of;
    if (!v->held) {   /* released while mapped: the caller's again */
        if (!mock_obj_add_locked(v, MOCK_OBJ_VMM)) {
            pthread_mutex_unlock(&mock_driver_lock);
            return 2;
        }
        mock_objs[mock_nobjs - 1].n = v->size;
        mock_objs[mock_nobjs - 1].dev = v->dev;
    }
    v->held++;
    pthread_mutex_unlock(&mock_driver_lock);
    *handle = (mock_handle)(uintptr_t)v;
    return 0;
}
/* A VMM mapping is reachable only from the devices cuMemSetAccess named (peer access, cuCtxEnablePeerAccess,
   does not reach cuMemCreate memory): a copy on another device's stream fails with
   CUDA_ERROR_ILLEGAL_ADDRESS (700), counted in mock_cuda_vmm_denials(). */
static atomic_llong mock_vmm_denials;
static int mock_vmm_denied(const void* p, int dev) {
    long m;
    int denied = 0;
    pthread_mutex_lock(&mock_driver_lock);
    if ((m = mock_vmm_find_locked(MOCK_OBJ_VMAP, p, 1, 0)) >= 0) denied = !(mock_objs[m].mapped & (1 << dev));
    pthread_mutex_unlock(&mock_driver_lock);
    if (denied) atomic_fetch_add(&mock_vmm_denials, 1);
    return denied;
}
MOCK_API long long mock_cuda_vmm_denials(void);
MOCK_API long long mock_cuda_vmm_denials(void) { return atomic_load(&mock_vmm_denials); }
static CUresult mMemExportToShareableHandle(void* out, mock_handle handle, int type, unsigned long long f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    long h;
    int fd = -1, ok = 0;
    if (!out || type != 1 || f || mock_env_set("MOCK_CUDA_EXPORT_FAILS")) return 1;
    pthread_mutex_lock(&mock_driver_lock);
    if ((h = mock_vmm_handle_locked(handle)) < 0) atomic_fetch_add(&mock_stale, 1);
    else if ((ok = ((mock_vmm*)mock_objs[h].h)->exportable)) fd = dup(((mock_vmm*)mock_objs[h].h)->fd);
    pthread_mutex_unlock(&mock_driver_lock);
    if (!ok) return 1;   /* no such handle, or made without the POSIX fd handle type */
    if (fd < 0) return 2;
    *(int*)out = fd;   /* the caller's: it keeps the pages by itself */
    return 0;
}
static int mock_vmm_denied(const void* p, int dev);
static CUresult copy_op(void* dst, const void* src, size_t n, mock_stream* s) {
    op* o;
    if (mock_vmm_denied(dst, s->dev) || mock_vmm_denied(src, s->dev)) return 700;   /* no access */
    if (mock_is_host(dst) && mock_is_host(src)) {   /* done on the CPU once the stream gets there */
        stream_sync(s);
        memmove(dst, src, n);
        return mock_dead(s->dev);
    }
    if (!(o = new_op(OP_COPY))) return 2;
    o->dst = dst; o->src = src; o->n = n;
    return push(s, o);
}
static CUresult mMemcpyHtoDAsync(dptr_t d, const void* h, size_t n, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_COPY);
    return copy_op((void*)(uintptr_t)d, h, n, s);
}
static CUresult mMemcpyDtoHAsync(void* h, dptr_t d, size_t n, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_COPY);
    return copy_op(h, (const void*)(uintptr_t)d, n, s);
}
static CUresult mMemcpyDtoDAsync(dptr_t d, dptr_t sr, size_t n, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_COPY);
    return copy_op((void*)(uintptr_t)d, (const void*)(uintptr_t)sr, n, s);
}
static CUresult mMemsetD8Async(dptr_t d, unsigned char v, size_t n, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_COPY);
    op* o = new_op(OP_SET8);
    if (!o) return 2;
    o->dst = (void*)(uintptr_t)d; o->value = v; o->n = n;
    return push(s, o);
}
static CUresult mMemsetD32Async(dptr_t d, unsigned v, size_t n, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_COPY);
    if (d % 4u) return 1;   /* CUDA_ERROR_INVALID_VALUE, as the driver's: the words are 4-byte aligned */
    op* o = new_op(OP_SET32);
    if (!o) return 2;
    o->dst = (void*)(uintptr_t)d; o->value = v; o->n = n;
    return push(s, o);
}
typedef struct mock_module { char* text; } mock_module;
static CUresult mModuleLoadDataEx(mock_module** m, const void* image, unsigned n, int* opts, void** vals) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    const char* text = (const char*)image;
    if (strstr(text, "this_is_not_ptx")) {
        for (unsigned i = 0; i < n; i++)
            if (opts[i] == 5) snprintf((char*)vals[i], 4096, "ptxas application ptx input, line 5; error   : Unknown modifier 'this_is_not_ptx'");
        return 218;
    }
    *m = (mock_module*)calloc(1, sizeof **m);
    if (!*m) return 2;
    if (!mock_obj_add(*m, MOCK_OBJ_MODULE)) { free(*m); return 2; }
    if (memcmp(text, "\177ELF", 4) == 0) {   /* a cubin (from a real NVRTC): its names, NULs made newlines */
        const unsigned char* e = (const unsigned char*)image;
        uint64_t shoff;
        uint16_t shentsize, shnum;
        size_t size;
        memcpy(&shoff, e + 0x28, 8); memcpy(&shentsize, e + 0x3A, 2); memcpy(&shnum, e + 0x3C, 2);
        size = (size_t)shoff + (size_t)shentsize * shnum;
        (*m)->text = (char*)malloc(size + 1);
        if (!(*m)->text) { mock_obj_remove(*m, MOCK_OBJ_MODULE); free(*m); return 2; }
        for (size_t i = 0; i < size; i++) (*m)->text[i] = e[i] ? (char)e[i] : '\n';
        (*m)->text[size] = '\0';
        return 0;
    }
    (*m)->text = strdup(text);
    return 0;
}
static CUresult mModuleUnload(mock_module* m) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    mock_release_wait();
    if (!mock_obj_remove(m, MOCK_OBJ_MODULE)) return 1;
    free(m->text);
    free(m);
    return 0;
}
static CUresult mModuleGetFunction(const mock_kernel** f, mock_module* m, const char* name) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    for (size_t i = 0; i < sizeof mock_kernels / sizeof mock_kernels[0]; i++)
        if (strcmp(mock_kernels[i].name, name) == 0 && strstr(m->text, name)) { *f = &mock_kernels[i]; return 0; }
    return 500;
}
static CUresult mLaunchKernel(const mock_kernel* k, unsigned gx_, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                              unsigned shared, mock_stream* s, void** params, void** extra) {
    op* o;
    MOCK_COUNT(MOCK_CALL_LAUNCH);
    (void)shared; (void)extra;
    if (!mock_current) return 201;   /* CUDA_ERROR_INVALID_CONTEXT: a function needs its context current */
    if (bx * by * bz > 1024 || bx == 0 || by == 0 || bz == 0) return 1;
    if (!(o = new_op(OP_LAUNCH))) return 2;
    o->k = k;
    o->grid[0] = gx_; o->grid[1] = gy; o->grid[2] = gz; o->block[0] = bx; o->block[1] = by; o->block[2] = bz;
    for (uint32_t i = 0; i < k->buffers; i++) { dptr_t d; memcpy(&d, params[i], 8); o->bufs[i] = (void*)(uintptr_t)d; }
    for (uint32_t i = 0; i < k->constants; i++) memcpy(&o->consts[i], params[k->buffers + i], 4);
    return push(s, o);
}
static CUresult mStreamCreate(mock_stream** ps, unsigned f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    mock_stream* s = (mock_stream*)mock_alloc64(sizeof *s);
    (void)f;
    if (!s) return 2;
    pthread_mutex_init(&s->push_lock, NULL); pthread_mutex_init(&s->lock, NULL); pthread_cond_init(&s->cond, NULL);
    s->head = s->tail = &s->stub;
    s->ctx = mock_current ? mock_current : &mock_ctx_token[0];
    s->dev = mock_ctx_dev(s->ctx);
    if (pthread_create(&s->thread, NULL, stream_main, s) != 0) { free(s); return 2; }
    if (mock_gpu_cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(mock_gpu_cpu, &one);
        pthread_setaffinity_np(s->thread, sizeof one, &one);
    }
    pthread_setname_np(s->thread, "mock-stream");   /* the mock's "GPU": bench/cuda.c tells it from accel's threads */
    pthread_mutex_lock(&mock_driver_lock);
    if (mock_grow((void**)&mock_streams, &mock_streams_cap, mock_nstreams + 1, sizeof *mock_streams)) mock_streams[mock_nstreams++] = s;
    mock_obj_add_locked(s, MOCK_OBJ_STREAM);   /* out of memory: uncounted, like a leak in the count */
    pthread_mutex_unlock(&mock_driver_lock);
    *ps = s;
    return 0;
}
static CUresult stream_sync(mock_stream* s) {
    while (stream_busy(s)) sched_yield();
    return mock_dead(s->dev);
}
/* Stops the stream's thread once it ran (or, on a dead context, skipped) what it holds; frees it. */
static void stream_end(mock_stream* s) {
    stream_sync(s);
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    free(s);
}
static CUresult mStreamDestroy(mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    int live;
    pthread_mutex_lock(&mock_driver_lock);
    live = mock_obj_remove_locked(s, MOCK_OBJ_STREAM);
    for (size_t i = 0; live && i < mock_nstreams; i++)
        if (mock_streams[i] == s) { mock_streams[i] = mock_streams[--mock_nstreams]; break; }
    pthread_mutex_unlock(&mock_driver_lock);
    if (!live) return 1;
    stream_end(s);
    return 0;
}
static CUresult mStreamGetCtx(mock_stream* s, void** ctx) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    *ctx = (void*)(uintptr_t)s->ctx;
    return 0;
}
static CUresult mStreamQuery(mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_QUERY);
    int busy;
    if (mock_dead(s->dev)) return mock_dead(s->dev);
    busy = stream_busy(s);
    return busy ? 600 : 0;
}
static CUresult mEventCreate(mock_event** e, unsigned f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    (void)f;
    *e = (mock_event*)mock_alloc64(sizeof **e);
    if (!*e) return 2;
    (*e)->owned = 1;
    (*e)->dev = mock_cur_dev();
    atomic_init(&(*e)->refs, 1);
    if (!mock_obj_add(*e, MOCK_OBJ_EVENT)) { free(*e); return 2; }
    return 0;
}
static CUresult mEventDestroy(mock_event* e) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (!mock_obj_remove(e, MOCK_OBJ_EVENT)) return 1;
    mock_event_put(e);
    return 0;
}
static CUresult event_record(mock_event* e, mock_stream* s) {
    op* o = op_on_event(OP_EVENT, e);
    if (!o) return 2;
    o->ev_gen = atomic_fetch_add(&e->recorded, 1) + 1;
    return push(s, o);
}
static CUresult event_query(mock_event* e) {
    if (mock_dead(e->dev)) return mock_dead(e->dev);
    return atomic_load(&e->completed) >= atomic_load(&e->recorded) ? 0 : 600;
}
static CUresult mEventSynchronize(mock_event* e) {
    MOCK_COUNT(MOCK_CALL_SYNC);
    while (atomic_load(&e->completed) < atomic_load(&e->recorded) && !mock_dead(e->dev)) sched_yield();
    mock_pools_trim();
    return mock_dead(e->dev);
}
/* Both recorded and completed (else CUDA_ERROR_NOT_READY, 600); milliseconds between them. */
/* A test's hook, run at the start of every cuEventElapsedTime (mock_cuda_on_elapsed): what the host does
   while a thread reads an event's time (tests/test_profiling.c records more work meanwhile). */
static void (*_Atomic mock_elapsed_hook)(void* user);
static void* _Atomic mock_elapsed_user;
static CUresult mEventElapsedTime(float* ms, mock_event* a, mock_event* b) {
    void (*hook)(void*) = atomic_load(&mock_elapsed_hook);
    MOCK_COUNT(MOCK_CALL_QUERY);
    if (hook) hook(atomic_load(&mock_elapsed_user));
    if (mock_dead(a->dev)) return mock_dead(a->dev);
    if (!atomic_load(&a->recorded) || !atomic_load(&b->recorded) || event_query(a) || event_query(b)) return 600;
    *ms = (float)(((double)atomic_load(&b->at_ns) - (double)atomic_load(&a->at_ns)) / 1e6);
    return 0;
}
/* cuStreamWaitEvent: the stream waits for the event's latest record at the time of the call (none:
   nothing to wait for). An event destroyed meanwhile stays until the wait ran (mock_event_put), as the
   driver keeps it. */
static CUresult stream_wait_event(mock_stream* s, mock_event* e, unsigned f) {
    op* o = op_on_event(OP_WAIT_EVENT, e);
    (void)f;
    if (!o) return 2;
    o->ev_gen = atomic_load(&e->recorded);
    return push(s, o);
}
static CUresult mStreamWriteValue64(mock_stream* s, dptr_t a, uint64_t v, unsigned f) {
    MOCK_COUNT(MOCK_CALL_MEMOP);
    op* o = new_op(OP_WRITE64);
    (void)f;
    if (!o) return 2;
    o->dst = (void*)(uintptr_t)a; o->v64 = v;
    return push(s, o);
}
static CUresult mStreamWaitValue64(mock_stream* s, dptr_t a, uint64_t v, unsigned f) {
    MOCK_COUNT(MOCK_CALL_MEMOP);
    op* o = new_op(OP_WAIT64);
    (void)f;
    if (!o) return 2;
    o->dst = (void*)(uintptr_t)a; o->v64 = v;
    return push(s, o);
}

/* cuStreamBatchMemOp: CUstreamBatchMemOpParams (48 bytes each), the 64-bit waits and writes (the mock has
   no 32-bit operations, flushes or barriers: CUDA_ERROR_NOT_SUPPORTED), run in the array's order as one
   stream operation (one command of the driver's, not one per entry); an operation it lacks is refused
   before any is enqueued. */
typedef union mock_memop {
    unsigned operation;
    struct { unsigned operation; dptr_t address; uint64_t value64; unsigned flags; dptr_t alias; } value;
    uint64_t pad[6];
} mock_memop;
static size_t mock_op_bytes(unsigned memops) { return sizeof(op) + memops * sizeof(mock_memop); }
static CUresult mStreamBatchMemOp(mock_stream* s, unsigned count, const mock_memop* ops, unsigned f) {
    op* o;
    MOCK_COUNT(MOCK_CALL_MEMOP);
    if (f != 0 || count == 0 || count > 256 || !ops) return 1;   /* CUDA_ERROR_INVALID_VALUE */
    for (unsigned i = 0; i < count; i++)
        if (ops[i].operation != 4 && ops[i].operation != 5) return 801;   /* CUDA_ERROR_NOT_SUPPORTED */
    if (!(o = new_op_sized(OP_BATCH, count))) return 2;
    o->nmemops = count;
    memcpy(o + 1, ops, count * sizeof *ops);
    return push(s, o);
}
static void mock_batch_run(const op* o) {
    const mock_memop* m = (const mock_memop*)(o + 1);
    for (unsigned i = 0; i < o->nmemops; i++) {
        void* word = (void*)(uintptr_t)m[i].value.address;
        if (m[i].operation == 4) mock_wait64(word, m[i].value.value64);
        else mock_write64(word, m[i].value.value64);
    }
}

/* cuLaunchHostFunc: the function runs on a host thread once the work before it completed, and the
   work after it waits for it to return (here: the stream's own thread, as one operation). */
static CUresult mLaunchHostFunc(mock_stream* s, void (*fn)(void*), void* user) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    op* o = new_op(OP_HOST);
    if (!o) return 2;
    o->host_fn = fn; o->host_user = user;
    return push(s, o);
}
/* The host waits for what the stream holds as the driver's default (CU_CTX_SCHED_AUTO with fewer
   contexts than cores) does: it spins, yielding, as cuEventSynchronize does here; not asleep, which on
   the mock's two-core CI gave a raw program's waiting thread's core to the streams (its "GPU") while an
   accel waiter, which polls, kept its own. */
static CUresult mStreamSynchronize(mock_stream* s) {
    unsigned target;
    MOCK_COUNT(MOCK_CALL_SYNC);
    if (getenv("MOCK_CUDA_SYNC_FAILS")) return 999;   /* CUDA_ERROR_UNKNOWN, at once: the stream runs on */
    target = atomic_load_explicit(&s->pushes, memory_order_acquire);
    while ((int)(atomic_load_explicit(&s->done, memory_order_acquire) - target) < 0 && !mock_dead(s->dev))
        sched_yield();
    mock_pools_trim();
    return mock_dead(s->dev);
}
static CUresult mEventRecord(mock_event* e, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_EVENT);
    return event_record(e, s);
}
static CUresult mEventQuery(mock_event* e) { MOCK_COUNT(MOCK_CALL_QUERY); return event_query(e); }
static CUresult mStreamWaitEvent(mock_stream* s, mock_event* e, unsigned f) {
    MOCK_COUNT(MOCK_CALL_EVENT);
    return stream_wait_event(s, e, f);
}

/* ==== graphs: a graph is its nodes' ops in order (accel chains every node on the previous one);
   an instance is a copy; a launch pushes copies of its ops onto the stream. As the driver documents,
   "each launch is ordered behind ... any previous launches of hGraphExec", on whichever stream: a
   launch on another stream than the last waits for the instance's `done` event first. ==== */
typedef struct mock_graph { op* ops; size_t n, cap; mock_event done; mock_stream* last; } mock_graph;
typedef struct { void* func; unsigned grid[3], block[3], shared; void** params; void** extra; } mock_kparams;
typedef struct { dptr_t dst; size_t pitch; unsigned value, esize; size_t width, height; } mock_mparams;
typedef struct {
    size_t sx, sy, sz, slod; int stype; const void* shost; dptr_t sdev; void* sarr; void* r0; size_t spitch, sheight;
    size_t dx, dy, dz, dlod; int dtype; void* dhost; dptr_t ddev; void* darr; void* r1; size_t dpitch, dheight;
    size_t width, height, depth;
} mock_copy3d;
static CUresult kparams_op(op* o, const mock_kparams* p) {
    const mock_kernel* k = (const mock_kernel*)p->func;
    if (p->block[0] * p->block[1] * p->block[2] > 1024 || !p->block[0] || !p->block[1] || !p->block[2]) return 1;
    memset(o, 0, sizeof *o);
    o->kind = OP_LAUNCH; o->k = k;
    memcpy(o->grid, p->grid, sizeof o->grid); memcpy(o->block, p->block, sizeof o->block);
    for (uint32_t i = 0; i < k->buffers; i++) { dptr_t d; memcpy(&d, p->params[i], 8); o->bufs[i] = (void*)(uintptr_t)d; }
    for (uint32_t i = 0; i < k->constants; i++) memcpy(&o->consts[i], p->params[k->buffers + i], 4);
    return 0;
}
static CUresult mparams_op(op* o, const mock_mparams* p) {
    if (p->esize != 4 || p->height != 1) return 1;
    memset(o, 0, sizeof *o);
    o->kind = OP_SET32; o->dst = (void*)(uintptr_t)p->dst; o->value = p->value; o->n = p->width;
    return 0;
}
static CUresult copy3d_op(op* o, const mock_copy3d* p) {
    if (p->stype != 4 || p->dtype != 4 || p->height != 1 || p->depth != 1) return 1;   /* accel uses unified 1D copies */
    memset(o, 0, sizeof *o);
    o->kind = OP_COPY; o->dst = (void*)(uintptr_t)p->ddev; o->src = (const void*)(uintptr_t)p->sdev; o->n = p->width;
    return 0;
}
static CUresult graph_add(mock_graph* g, size_t* node, const op* o) {
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        op* n = (op*)realloc(g->ops, cap * sizeof *n);
        if (!n) return 2;
        g->ops = n; g->cap = cap;
    }
    g->ops[g->n++] = *o;
    *node = g->n;   /* node handle: index + 1 */
    return 0;
}
static CUresult mGraphCreate(mock_graph** g, unsigned f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    (void)f;
    *g = (mock_graph*)mock_alloc64(sizeof **g);
    if (*g) (*g)->done.dev = mock_cur_dev();
    if (*g && !mock_obj_add(*g, MOCK_OBJ_GRAPH)) { free(*g); return 2; }
    return *g ? 0 : 2;
}
static CUresult mGraphDestroy(mock_graph* g) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    if (!mock_obj_remove(g, MOCK_OBJ_GRAPH)) return 1;
    free(g->ops);
    free(g);
    return 0;
}
static CUresult mGraphAddKernelNode(size_t* node, mock_graph* g, const size_t* deps, size_t nd, const mock_kparams* p) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    op o; CUresult r;
    (void)deps; (void)nd;
    return (r = kparams_op(&o, p)) != 0 ? r : graph_add(g, node, &o);
}
static CUresult mGraphAddMemsetNode(size_t* node, mock_graph* g, const size_t* deps, size_t nd, const mock_mparams* p, void* ctx) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    op o; CUresult r;
    (void)deps; (void)nd; (void)ctx;
    return (r = mparams_op(&o, p)) != 0 ? r : graph_add(g, node, &o);
}
static CUresult mGraphAddMemcpyNode(size_t* node, mock_graph* g, const size_t* deps, size_t nd, const mock_copy3d* p, void* ctx) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    op o; CUresult r;
    (void)deps; (void)nd; (void)ctx;
    return (r = copy3d_op(&o, p)) != 0 ? r : graph_add(g, node, &o);
}
static CUresult mGraphInstantiateWithFlags(mock_graph** e, mock_graph* g, unsigned long long f) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    (void)f;
    if (!(*e = (mock_graph*)mock_alloc64(sizeof **e))) return 2;
    (*e)->done.dev = mock_cur_dev();
    if ((g->n && !((*e)->ops = (op*)malloc(g->n * sizeof(op)))) || !mock_obj_add(*e, MOCK_OBJ_GRAPH)) {
        free((*e)->ops);
        free(*e);
        return 2;
    }
    if (g->n) memcpy((*e)->ops, g->ops, g->n * sizeof(op));
    (*e)->n = (*e)->cap = g->n;
    return 0;
}
static CUresult mGraphExecKernelNodeSetParams(mock_graph* e, size_t node, const mock_kparams* p) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    return node && node <= e->n && e->ops[node - 1].kind == OP_LAUNCH ? kparams_op(&e->ops[node - 1], p) : 1;
}
/* What kind of memory p is in: 2 pinned host memory, 1 a memory pool's block, 0 else (cuMemAlloc). */
static int mock_mem_kind(const void* p) {
    int kind = 0;
    if (!p) return 0;
    if (mock_is_host(p)) return 2;
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nobjs && !kind; i++) {
        mock_pool* pool = (mock_pool*)mock_objs[i].h;
        if (mock_objs[i].kind != MOCK_OBJ_POOL) continue;
        pthread_mutex_lock(&pool->lock);
        for (mock_pool_block* b = pool->blocks; b && !kind; b = b->next)
            kind = (const char*)p >= (const char*)b->p && (const char*)p < (const char*)b->p + b->n;
        pthread_mutex_unlock(&pool->lock);
    }
    pthread_mutex_unlock(&mock_driver_lock);
    return kind;
}
/* An exec node's copy or fill takes memory of the kinds it was made with only: the driver refuses
   another (CUDA_ERROR_INVALID_VALUE, "the memory operands' mappings changed"; an H200 refused a copy
   made from cuMemAlloc memory and set to a pool's), and the node keeps what it had. */
static CUresult mock_exec_node_set(op* node, const op* o) {
    if (mock_mem_kind(node->dst) != mock_mem_kind(o->dst) || mock_mem_kind(node->src) != mock_mem_kind(o->src))
        return 1;
    *node = *o;
    return 0;
}
static CUresult mGraphExecMemsetNodeSetParams(mock_graph* e, size_t node, const mock_mparams* p, void* ctx) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    op o;
    CUresult r;
    (void)ctx;
    if (!node || node > e->n || e->ops[node - 1].kind != OP_SET32) return 1;
    return (r = mparams_op(&o, p)) != 0 ? r : mock_exec_node_set(&e->ops[node - 1], &o);
}
static CUresult mGraphExecMemcpyNodeSetParams(mock_graph* e, size_t node, const mock_copy3d* p, void* ctx) {
    MOCK_COUNT(MOCK_CALL_OTHER);
    op o;
    CUresult r;
    (void)ctx;
    if (!node || node > e->n || e->ops[node - 1].kind != OP_COPY) return 1;
    return (r = copy3d_op(&o, p)) != 0 ? r : mock_exec_node_set(&e->ops[node - 1], &o);
}
static CUresult mGraphLaunch(mock_graph* e, mock_stream* s) {
    MOCK_COUNT(MOCK_CALL_LAUNCH);
    CUresult r;
    if (e->last && e->last != s && (r = stream_wait_event(s, &e->done, 0)) != 0) return r;   /* behind its last launch */
    for (size_t i = 0; i < e->n; i++)   /* a host-to-host copy node: the launch waits for the stream */
        if (e->ops[i].kind == OP_COPY && mock_is_host(e->ops[i].dst) && mock_is_host(e->ops[i].src)) { stream_sync(s); break; }
    for (size_t i = 0; i < e->n; i++) {
        op* o = new_op(OP_COPY);
        int pooled;
        if (!o) return 2;
        pooled = o->pooled;
        *o = e->ops[i];
        o->pooled = pooled;   /* where its block goes back to */
        if ((r = push(s, o)) != 0) return r;
    }
    e->last = s;
    return event_record(&e->done, s);
}

/* ==== the context: reset ==== */
static atomic_llong mock_resets;
/* Frees one of the context's objects (a reset; mock_driver_lock held, streams ended before). */
static void mock_pool_free(mock_pool* pool);
static void mock_obj_free(const mock_obj* o) {
    switch (o->kind) {
    case MOCK_OBJ_POOL: mock_pool_free((mock_pool*)o->h); break;
    case MOCK_OBJ_MEM: if (!o->mapped) { mock_big(o->n, -1); free(o->h); } break;
    case MOCK_OBJ_EXTMEM: mock_extmem_free((mock_extmem*)o->h); break;
    case MOCK_OBJ_EXTSEM: mock_sem_put((mock_sem*)o->h); break;   /* gone once no operation holds it */
    case MOCK_OBJ_VMAP: mock_vmap_free_locked(o); break;   /* before its reservation: see the reset */
    case MOCK_OBJ_VRANGE: munmap(o->h, o->n); break;
    case MOCK_OBJ_VMM: ((mock_vmm*)o->h)->held = 0; mock_vmm_put_locked((mock_vmm*)o->h); break;
    case MOCK_OBJ_HOST: free(o->h); break;
    case MOCK_OBJ_EVENT: mock_event_put((mock_event*)o->h); break;
    case MOCK_OBJ_MODULE: free(((mock_module*)o->h)->text); free(o->h); break;
    case MOCK_OBJ_GRAPH: free(((mock_graph*)o->h)->ops); free(o->h); break;
    default: break;
    }
}
/* The driver destroys a context once its streams are idle: a stream that waits for a word nobody
   writes holds the reset for ever (seen on an H200). The mock waits up to 5 s for the streams made in
   device d's context, then says so on stderr and the process's CUDA is dead from then on (999,
   CUDA_ERROR_UNKNOWN, from every call that checks): a test fails instead of hanging. */
static int mock_streams_drain(int d) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int busy = 0;
        pthread_mutex_lock(&mock_driver_lock);
        for (size_t i = 0; i < mock_nstreams; i++) {
            mock_stream* st = mock_streams[i];
            if (st->ctx != &mock_ctx_token[d]) continue;
            busy |= stream_busy(st);
        }
        pthread_mutex_unlock(&mock_driver_lock);
        if (!busy) return 1;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec >= 5) return 0;
        sched_yield();
    }
}
/* Destroys every resource of the context: first its streams go idle (see above); then streams end
   (their work is dropped: the context reads dead meanwhile), the rest is freed; then the context works
   again, with no sticky error (unless MOCK_CUDA_STICKY_SURVIVES). Handles made before are no longer
   live. Only device d's: the other devices' contexts, streams and objects go on. */
static CUresult mPrimaryCtxReset(int d) {
    MOCK_COUNT(MOCK_CALL_CONTEXT);
    int kept;
    if (d < 0 || d >= mock_devices()) return 101;
    kept = atomic_load(&mock_sticky[d]);
    if (!mock_streams_drain(d)) {
        fprintf(stderr, "mock_cuda: cuDevicePrimaryCtxReset(%d): a stream of the context is still busy after "
                "5 s (a GPU hangs here: a stream waits for a word nobody writes); CUDA is dead from now on\n", d);
        atomic_store(&mock_hung, 1);
        return 999;
    }
    atomic_store(&mock_sticky[d], 709);   /* CUDA_ERROR_CONTEXT_IS_DESTROYED while it goes */
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nstreams;)
        if (mock_streams[i]->dev == d) {
            stream_end(mock_streams[i]);
            mock_streams[i] = mock_streams[--mock_nstreams];
        } else {
            i++;
        }
    for (size_t i = 0; i < mock_nhosts;)
        if (mock_hosts[i].dev == d) mock_hosts[i] = mock_hosts[--mock_nhosts]; else i++;
    for (int vmaps = 1; vmaps >= 0; vmaps--)   /* VMM mappings first, then their reservations with the rest */
        for (size_t i = 0; i < mock_nobjs;)
            if (mock_objs[i].dev == d && (!vmaps || mock_objs[i].kind == MOCK_OBJ_VMAP)) {
                mock_obj_free(&mock_objs[i]);
                mock_objs[i] = mock_objs[--mock_nobjs];
            } else {
                i++;
            }
    mock_orphans_free(d);
    atomic_store(&mock_peer_enabled[d], 0u);   /* the new context has enabled no peer yet */
    pthread_mutex_unlock(&mock_driver_lock);
    atomic_store(&mock_sticky[d], kept && kept != 709 && mock_sticky_survives() ? kept : 0);
    atomic_fetch_add(&mock_resets, 1);
    return 0;
}

static const struct { const char* name; void* fn; } mock_table[] = {
    { "cuInit", (void*)mInit }, { "cuDriverGetVersion", (void*)mDriverGetVersion }, { "cuGetErrorName", (void*)mGetErrorName },
    { "cuDeviceGetCount", (void*)mDeviceGetCount }, { "cuDeviceGet", (void*)mDeviceGet }, { "cuDeviceGetName", (void*)mDeviceGetName },
    { "cuDeviceGetAttribute", (void*)mDeviceGetAttribute }, { "cuDeviceTotalMem", (void*)mDeviceTotalMem },
    { "cuDevicePrimaryCtxRetain", (void*)mPrimaryCtxRetain }, { "cuDevicePrimaryCtxRelease", (void*)mPrimaryCtxRelease },
    { "cuDevicePrimaryCtxReset", (void*)mPrimaryCtxReset },
    { "cuCtxSetCurrent", (void*)mCtxSetCurrent }, { "cuMemAlloc", (void*)mMemAlloc }, { "cuMemFree", (void*)mMemFree },
    { "cuMemHostAlloc", (void*)mMemHostAlloc }, { "cuMemFreeHost", (void*)mMemFreeHost },
    { "cuMemHostGetDevicePointer", (void*)mMemHostGetDevicePointer }, { "cuMemcpyHtoDAsync", (void*)mMemcpyHtoDAsync },
    { "cuMemcpyDtoHAsync", (void*)mMemcpyDtoHAsync }, { "cuMemcpyDtoDAsync", (void*)mMemcpyDtoDAsync },
    { "cuMemcpyAsync", (void*)mMemcpyDtoDAsync }, { "cuMemsetD8Async", (void*)mMemsetD8Async },
    { "cuMemsetD32Async", (void*)mMemsetD32Async }, { "cuModuleLoadDataEx", (void*)mModuleLoadDataEx },
    { "cuModuleUnload", (void*)mModuleUnload }, { "cuModuleGetFunction", (void*)mModuleGetFunction },
    { "cuLaunchKernel", (void*)mLaunchKernel },
    { "cuGraphCreate", (void*)mGraphCreate }, { "cuGraphDestroy", (void*)mGraphDestroy },
    { "cuGraphAddKernelNode", (void*)mGraphAddKernelNode }, { "cuGraphAddMemsetNode", (void*)mGraphAddMemsetNode },
    { "cuGraphAddMemcpyNode", (void*)mGraphAddMemcpyNode }, { "cuGraphInstantiateWithFlags", (void*)mGraphInstantiateWithFlags },
    { "cuGraphExecDestroy", (void*)mGraphDestroy }, { "cuGraphExecKernelNodeSetParams", (void*)mGraphExecKernelNodeSetParams },
    { "cuGraphExecMemsetNodeSetParams", (void*)mGraphExecMemsetNodeSetParams },
    { "cuGraphExecMemcpyNodeSetParams", (void*)mGraphExecMemcpyNodeSetParams }, { "cuGraphLaunch", (void*)mGraphLaunch }, { "cuStreamCreate", (void*)mStreamCreate }, { "cuStreamDestroy", (void*)mStreamDestroy },
    { "cuStreamGetCtx", (void*)mStreamGetCtx },
    { "cuStreamQuery", (void*)mStreamQuery }, { "cuStreamSynchronize", (void*)mStreamSynchronize },
    { "cuEventCreate", (void*)mEventCreate }, { "cuEventDestroy", (void*)mEventDestroy }, { "cuEventRecord", (void*)mEventRecord },
    { "cuEventQuery", (void*)mEventQuery }, { "cuEventSynchronize", (void*)mEventSynchronize },
    { "cuEventElapsedTime", (void*)mEventElapsedTime }, { "cuStreamWriteValue64", (void*)mStreamWriteValue64 },
    { "cuStreamBatchMemOp", (void*)mStreamBatchMemOp },
    { "cuStreamWaitValue64", (void*)mStreamWaitValue64 }, { "cuStreamWaitEvent", (void*)mStreamWaitEvent },
    { "cuDeviceGetUuid", (void*)mDeviceGetUuid }, { "cuDeviceCanAccessPeer", (void*)mDeviceCanAccessPeer },
    { "cuCtxEnablePeerAccess", (void*)mCtxEnablePeerAccess },
    { "cuLaunchHostFunc", (void*)mLaunchHostFunc },
    { "cuMemPoolCreate", (void*)mMemPoolCreate }, { "cuMemPoolDestroy", (void*)mMemPoolDestroy },
    { "cuMemPoolSetAttribute", (void*)mMemPoolSetAttribute },
    { "cuMemAllocFromPoolAsync", (void*)mMemAllocFromPoolAsync }, { "cuMemFreeAsync", (void*)mMemFreeAsync },
    { "cuImportExternalMemory", (void*)mImportExternalMemory },
    { "cuExternalMemoryGetMappedBuffer", (void*)mExternalMemoryGetMappedBuffer },
    { "cuDestroyExternalMemory", (void*)mDestroyExternalMemory },
    { "cuImportExternalSemaphore", (void*)mImportExternalSemaphore },
    { "cuWaitExternalSemaphoresAsync", (void*)mWaitExternalSemaphoresAsync },
    { "cuSignalExternalSemaphoresAsync", (void*)mSignalExternalSemaphoresAsync },
    { "cuDestroyExternalSemaphore", (void*)mDestroyExternalSemaphore },
    { "cuMemGetAllocationGranularity", (void*)mMemGetAllocationGranularity },
    { "cuMemCreate", (void*)mMemCreate }, { "cuMemRelease", (void*)mMemRelease },
    { "cuMemAddressReserve", (void*)mMemAddressReserve }, { "cuMemAddressFree", (void*)mMemAddressFree },
    { "cuMemMap", (void*)mMemMap }, { "cuMemUnmap", (void*)mMemUnmap },
    { "cuMemSetAccess", (void*)mMemSetAccess },
    { "cuMemRetainAllocationHandle", (void*)mMemRetainAllocationHandle },
    { "cuMemExportToShareableHandle", (void*)mMemExportToShareableHandle },
};
MOCK_API CUresult cuGetProcAddress_v2(const char* name, void** fn, int version, unsigned long long flags, int* status);
MOCK_API CUresult cuGetProcAddress_v2(const char* name, void** fn, int version, unsigned long long flags, int* status) {
    (void)version; (void)flags;
    for (size_t i = 0; i < sizeof mock_table / sizeof mock_table[0]; i++)
        if (strcmp(mock_table[i].name, name) == 0) { *fn = mock_table[i].fn; if (status) *status = 0; return 0; }
    *fn = NULL;
    if (status) *status = 1;
    return 500;
}

/* ==== plain exports, as libcuda has them: for tests that call the driver themselves beside accel
   (tests/test_interop.c: borrow cuMemAlloc memory, launch a raw kernel on accel's stream) ==== */
MOCK_API CUresult cuMemAlloc_v2(dptr_t* p, size_t n);
MOCK_API CUresult cuMemAlloc_v2(dptr_t* p, size_t n) { return mMemAlloc(p, n); }
MOCK_API CUresult cuMemFree_v2(dptr_t p);
MOCK_API CUresult cuMemFree_v2(dptr_t p) { return mMemFree(p); }
MOCK_API CUresult cuCtxSetCurrent(void* ctx);
MOCK_API CUresult cuCtxSetCurrent(void* ctx) { return mCtxSetCurrent(ctx); }
MOCK_API CUresult cuCtxGetDevice(int* d);
MOCK_API CUresult cuCtxGetDevice(int* d) { *d = mock_cur_dev(); return 0; }
MOCK_API CUresult cuDevicePrimaryCtxRetain(void** ctx, int d);
MOCK_API CUresult cuDevicePrimaryCtxRetain(void** ctx, int d) { return mPrimaryCtxRetain(ctx, d); }
MOCK_API CUresult cuDevicePrimaryCtxRelease_v2(int d);
MOCK_API CUresult cuDevicePrimaryCtxRelease_v2(int d) { return mPrimaryCtxRelease(d); }
MOCK_API CUresult cuModuleLoadData(mock_module** m, const void* image);
MOCK_API CUresult cuModuleLoadData(mock_module** m, const void* image) { return mModuleLoadDataEx(m, image, 0, NULL, NULL); }
MOCK_API CUresult cuModuleUnload(mock_module* m);
MOCK_API CUresult cuModuleUnload(mock_module* m) { return mModuleUnload(m); }
MOCK_API CUresult cuModuleGetFunction(const mock_kernel** f, mock_module* m, const char* name);
MOCK_API CUresult cuModuleGetFunction(const mock_kernel** f, mock_module* m, const char* name) { return mModuleGetFunction(f, m, name); }
MOCK_API CUresult cuLaunchKernel(const mock_kernel* k, unsigned gx_, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 unsigned shared, mock_stream* s, void** params, void** extra);
MOCK_API CUresult cuLaunchKernel(const mock_kernel* k, unsigned gx_, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 unsigned shared, mock_stream* s, void** params, void** extra) {
    return mLaunchKernel(k, gx_, gy, gz, bx, by, bz, shared, s, params, extra);
}
MOCK_API CUresult cuStreamSynchronize(mock_stream* s);
MOCK_API CUresult cuStreamSynchronize(mock_stream* s) { return mStreamSynchronize(s); }
MOCK_API CUresult cuStreamCreate(mock_stream** ps, unsigned flags);   /* examples/nccl_allreduce.c's raw stream */
MOCK_API CUresult cuStreamCreate(mock_stream** ps, unsigned flags) { return mStreamCreate(ps, flags); }
MOCK_API CUresult cuStreamDestroy_v2(mock_stream* s);
MOCK_API CUresult cuStreamDestroy_v2(mock_stream* s) { return mStreamDestroy(s); }
MOCK_API CUresult cuImportExternalSemaphore(mock_sem** out, const mock_extsem_desc* d);
MOCK_API CUresult cuImportExternalSemaphore(mock_sem** out, const mock_extsem_desc* d) {
    return mImportExternalSemaphore(out, d);
}
MOCK_API CUresult cuWaitExternalSemaphoresAsync(mock_sem* const* sems, const mock_extsem_params* p,
                                                unsigned n, mock_stream* s);
MOCK_API CUresult cuWaitExternalSemaphoresAsync(mock_sem* const* sems, const mock_extsem_params* p,
                                                unsigned n, mock_stream* s) {
    return mWaitExternalSemaphoresAsync(sems, p, n, s);
}
MOCK_API CUresult cuSignalExternalSemaphoresAsync(mock_sem* const* sems, const mock_extsem_params* p,
                                                  unsigned n, mock_stream* s);
MOCK_API CUresult cuSignalExternalSemaphoresAsync(mock_sem* const* sems, const mock_extsem_params* p,
                                                  unsigned n, mock_stream* s) {
    return mSignalExternalSemaphoresAsync(sems, p, n, s);
}
MOCK_API CUresult cuDestroyExternalSemaphore(mock_sem* m);
MOCK_API CUresult cuDestroyExternalSemaphore(mock_sem* m) { return mDestroyExternalSemaphore(m); }

/* Driver calls so far: kind 0 launches (cuLaunchKernel, cuGraphLaunch), 1 stream memory operations,
   2 event records and stream waits on events, 3 copies and fills, 4 context calls, 5 queries, 6
   synchronizes, 7 the rest; -1 all of them. Enqueue calls (work on a stream) are kinds 0-3. */
MOCK_API unsigned long long mock_cuda_calls(int kind);
MOCK_API unsigned long long mock_cuda_calls(int kind) {
    unsigned long long n = 0;
    if (kind >= 0) return kind < MOCK_CALL_KINDS ? atomic_load_explicit(&mock_calls[kind], memory_order_relaxed) : 0;
    for (int k = 0; k < MOCK_CALL_KINDS; k++) n += atomic_load_explicit(&mock_calls[k], memory_order_relaxed);
    return n;
}

/* The context's live objects (see the top), releases of handles that were not live, resets so far. */
MOCK_API long long mock_cuda_live(void);
MOCK_API long long mock_cuda_live(void) {
    long long n;
    pthread_mutex_lock(&mock_driver_lock);
    n = (long long)mock_nobjs;
    pthread_mutex_unlock(&mock_driver_lock);
    return n;
}
/* Of those, imports of external memory (which 0) and buffers mapped from them (which 1):
   tests/test_devices.c checks that every import is destroyed and every mapping freed. */
MOCK_API long long mock_cuda_live_imports(int which);
MOCK_API long long mock_cuda_live_imports(int which) {
    long long n = 0;
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nobjs; i++)
        n += which ? mock_objs[i].kind == MOCK_OBJ_MEM && mock_objs[i].mapped == 1
                   : mock_objs[i].kind == MOCK_OBJ_EXTMEM;
    pthread_mutex_unlock(&mock_driver_lock);
    return n;
}
/* Of those, device and pinned memory (cuMemAlloc, cuMemHostAlloc; cuMemCreate's handles and their
   mappings given access, each one): tests/test_queue_memory.c counts them over 10,000 steps (events
   come and go with the ring of signal points). */
MOCK_API long long mock_cuda_live_memory(void);
MOCK_API long long mock_cuda_live_memory(void) {
    long long n = 0;
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nobjs; i++) {
        n += mock_objs[i].kind == MOCK_OBJ_MEM || mock_objs[i].kind == MOCK_OBJ_HOST ||
             mock_objs[i].kind == MOCK_OBJ_VMM;
        if (mock_objs[i].kind == MOCK_OBJ_POOL) {   /* and the pools' blocks */
            mock_pool* pool = (mock_pool*)mock_objs[i].h;
            pthread_mutex_lock(&pool->lock);
            for (mock_pool_block* b = pool->blocks; b; b = b->next) n++;
            pthread_mutex_unlock(&pool->lock);
        }
    }
    pthread_mutex_unlock(&mock_driver_lock);
    return n;
}
/* Allocations of 1 MiB or more alive (cuMemAlloc's, cuMemCreate's and the pools' blocks), and the
   most at once since the last reset of the peak (mock_cuda_big_reset); blocks the pools made so far. */
MOCK_API void mock_cuda_on_elapsed(void (*fn)(void* user), void* user);
MOCK_API void mock_cuda_on_elapsed(void (*fn)(void* user), void* user) {
    atomic_store(&mock_elapsed_user, user);
    atomic_store(&mock_elapsed_hook, fn);
}
MOCK_API long long mock_cuda_big_live(void);
MOCK_API long long mock_cuda_big_live(void) { return atomic_load(&mock_big_live); }
MOCK_API long long mock_cuda_big_peak(void);
MOCK_API long long mock_cuda_big_peak(void) { return atomic_load(&mock_big_peak); }
MOCK_API void mock_cuda_big_reset(void);
MOCK_API void mock_cuda_big_reset(void) { atomic_store(&mock_big_peak, atomic_load(&mock_big_live)); }
MOCK_API long long mock_cuda_pool_blocks_made(void);
MOCK_API long long mock_cuda_pool_blocks_made(void) { return atomic_load(&mock_pool_blocks_made); }
/* The memory limit (see mMemAlloc; 0: none), and the allocations it refused so far. */
MOCK_API void mock_cuda_set_memory_limit(long long bytes);
MOCK_API void mock_cuda_set_memory_limit(long long bytes) { atomic_store(&mock_mem_limit, bytes); }
MOCK_API long long mock_cuda_out_of_memory(void);
MOCK_API long long mock_cuda_out_of_memory(void) { return atomic_load(&mock_oom); }
MOCK_API long long mock_cuda_stale_uses(void);
MOCK_API long long mock_cuda_stale_uses(void) { return atomic_load(&mock_stale); }
MOCK_API long long mock_cuda_resets(void);
MOCK_API long long mock_cuda_resets(void) { return atomic_load(&mock_resets); }
/* External semaphores (see "external semaphores"): the provider a test hands the mock (NULL: none);
   imports live; wait and signal operations that ran; destroys and uses of handles that were not live. */
MOCK_API void mock_cuda_sem_provider(const mock_cuda_sem_ops* ops);
MOCK_API void mock_cuda_sem_provider(const mock_cuda_sem_ops* ops) {
    pthread_mutex_lock(&mock_driver_lock);
    memset(&mock_sem_provider_ops, 0, sizeof mock_sem_provider_ops);
    if (ops && ops->resolve && ops->reached) mock_sem_provider_ops = *ops;
    pthread_mutex_unlock(&mock_driver_lock);
}
MOCK_API long long mock_cuda_live_sems(void);
MOCK_API long long mock_cuda_live_sems(void) {
    long long n = 0;
    pthread_mutex_lock(&mock_driver_lock);
    for (size_t i = 0; i < mock_nobjs; i++) n += mock_objs[i].kind == MOCK_OBJ_EXTSEM;
    pthread_mutex_unlock(&mock_driver_lock);
    return n;
}
MOCK_API long long mock_cuda_sem_waits(void);
MOCK_API long long mock_cuda_sem_waits(void) { return atomic_load(&mock_sem_waits); }
MOCK_API long long mock_cuda_sem_signals(void);
MOCK_API long long mock_cuda_sem_signals(void) { return atomic_load(&mock_sem_signals); }
MOCK_API long long mock_cuda_sem_misuse(void);
MOCK_API long long mock_cuda_sem_misuse(void) { return atomic_load(&mock_sem_misuses); }

/* ==== NVRTC: "compiles" by keeping the source; fails on sources that mention undeclared_thing ==== */
typedef struct mock_prog { char* src; char* name; int failed; } mock_prog;
MOCK_API int nvrtcCreateProgram(mock_prog** p, const char* src, const char* name, int nh, const char* const* h, const char* const* in);
MOCK_API int nvrtcCreateProgram(mock_prog** p, const char* src, const char* name, int nh, const char* const* h, const char* const* in) {
    (void)nh; (void)h; (void)in;
    *p = (mock_prog*)calloc(1, sizeof **p);
    (*p)->src = strdup(src);
    (*p)->name = strdup(name ? name : "prog");
    return 0;
}
MOCK_API int nvrtcDestroyProgram(mock_prog** p);
MOCK_API int nvrtcDestroyProgram(mock_prog** p) { free((*p)->src); free((*p)->name); free(*p); *p = NULL; return 0; }
MOCK_API int nvrtcCompileProgram(mock_prog* p, int n, const char* const* o);
MOCK_API int nvrtcCompileProgram(mock_prog* p, int n, const char* const* o) {
    (void)n; (void)o;
    p->failed = strstr(p->src, "undeclared_thing") != NULL;
    return p->failed ? 6 : 0;
}
static void mock_log(mock_prog* p, char* out, size_t cap) {
    if (p->failed) snprintf(out, cap, "%s(2): error: identifier \"undeclared_thing\" is undefined\n\n1 error detected in the compilation of \"%s\".\n", p->name, p->name);
    else if (cap) out[0] = '\0';
}
MOCK_API int nvrtcGetProgramLogSize(mock_prog* p, size_t* n);
MOCK_API int nvrtcGetProgramLogSize(mock_prog* p, size_t* n) { char buf[512]; mock_log(p, buf, sizeof buf); *n = strlen(buf) + 1; return 0; }
MOCK_API int nvrtcGetProgramLog(mock_prog* p, char* log);
MOCK_API int nvrtcGetProgramLog(mock_prog* p, char* log) { char buf[512]; mock_log(p, buf, sizeof buf); memcpy(log, buf, strlen(buf) + 1); return 0; }
MOCK_API int nvrtcGetPTXSize(mock_prog* p, size_t* n);
MOCK_API int nvrtcGetPTXSize(mock_prog* p, size_t* n) { *n = strlen(p->src) + 1; return 0; }
MOCK_API int nvrtcGetPTX(mock_prog* p, char* out);
MOCK_API int nvrtcGetPTX(mock_prog* p, char* out) { memcpy(out, p->src, strlen(p->src) + 1); return 0; }
MOCK_API int nvrtcVersion(int* major, int* minor);
MOCK_API int nvrtcVersion(int* major, int* minor) { *major = 12; *minor = 4; return 0; }
