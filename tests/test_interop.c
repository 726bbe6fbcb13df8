/* tests/test_interop.c — accel beside code that owns its own GPU objects (DESIGN §6.3):
   - accel_queue_host_call on every backend: host calls run in queue order between commands, see the
     writes of the commands before them, and what they write is seen by the commands after them;
     a NULL fn is a recording error; a host call behind a failed wait is dropped;
   - CUDA (on the mock driver, or a GPU): the native handles, a raw driver-API kernel launched on
     accel's stream, and memory borrowed from cuMemAlloc (accel never frees it);
   - Vulkan (lavapipe, validation on): a small raw-Vulkan "engine" (its own instance, device, buffers,
     timeline semaphores) hands accel its device, buffer and semaphore: the engine's submit signals its
     semaphore and an accel queue waiting on the wrapped signal runs after it; accel writes into the
     wrapped buffer and the engine's submit waits on accel's exported semaphore (on the GPU) and reads
     the result; failing an accel signal raises its exported semaphore; lifetimes.
   The GPU parts build where the backend is compiled in (-DACCEL_TEST_HAVE_CUDA / _VULKAN) and skip
   unless ACCEL_TEST_BACKEND names it; the host-call tests run in every configuration. */
#if !defined(_WIN32) && !defined(__wasi__) && !defined(__EMSCRIPTEN__)
#  define _POSIX_C_SOURCE 200809L   /* nanosleep */
#endif
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

#if (defined(ACCEL_TEST_HAVE_CUDA) || defined(ACCEL_TEST_HAVE_VULKAN)) && defined(__linux__) && TEST_HAVE_THREADS
#  include <dlfcn.h>
#  define TEST_RAW_DRIVERS 1
#else
#  define TEST_RAW_DRIVERS 0
#endif
#if TEST_HAVE_THREADS && !defined(_WIN32)
#  include <time.h>
#endif

enum { HC_N = 4096 };

/* Lets other threads run for about `ms` (threaded builds; a no-op without threads). */
static void test_pause_ms(unsigned ms) {
#if TEST_HAVE_THREADS && defined(_WIN32)
    Sleep(ms);
#elif TEST_HAVE_THREADS && defined(_POSIX_C_SOURCE)
    struct timespec ts = { 0, (long)ms * 1000000L };
    nanosleep(&ts, NULL);
#else
    (void)ms;
#endif
}

/* Interim, until the core's host steps (issue 12) run host calls on the GPU backends. */
#define HOST_CALLS_HERE(r) do { if ((r) == ACCEL_ERROR_UNSUPPORTED && !test_backend_is_cpu()) \
    SKIP("accel_queue_host_call on this backend comes with the core's host steps (issue 12)"); } while (0)

/* ==== host calls ==== */
/* What a host call saw: the smallest and largest word of the buffer, and its place among the calls. */
typedef struct hc_log { accel_buffer* buf; atomic_int calls; int order[8]; uint32_t lo[8], hi[8]; } hc_log;
typedef struct hc_probe { hc_log* log; int id; } hc_probe;

static void hc_look(void* user) {
    hc_probe* p = (hc_probe*)user;
    const uint32_t* w = (const uint32_t*)accel_buffer_map(p->log->buf);
    uint32_t lo = UINT32_MAX, hi = 0;
    int k = atomic_fetch_add(&p->log->calls, 1);
    for (uint32_t i = 0; w && i < HC_N; i++) { lo = w[i] < lo ? w[i] : lo; hi = w[i] > hi ? w[i] : hi; }
    if (k < 8) { p->log->order[k] = p->id; p->log->lo[k] = lo; p->log->hi[k] = hi; }
}
static void hc_count(void* user) { atomic_fetch_add((atomic_int*)user, 1); }

/* fill 1, host call 0, +1, host call 1, +1, host call 2 | wait gate, host call 3, +1: each call sees
   exactly the writes before it, and the calls run in order, the last one only once the gate opens. */
TEST(host_calls_run_in_queue_order_between_commands) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *gate, *s;
    accel_program* p;
    hc_log log;
    hc_probe probes[4];
    uint32_t n = HC_N;
    accel_result r;
    memset(&log, 0, sizeof log);
    if (!test_queue_scene(HC_N * 4, &dev, &q, &buf, &gate, &s)) { accel_device_destroy(dev); return; }
    REQUIRE(accel_buffer_map(buf) != NULL);
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &p));
    log.buf = buf;
    for (int i = 0; i < 4; i++) { probes[i].log = &log; probes[i].id = i; }
    accel_queue_fill(q, buf, 0, HC_N * 4, 1);
    accel_queue_host_call(q, hc_look, &probes[0]);
    accel_queue_exec(q, p, &buf, 1, &n, 1, accel_exec_1d(HC_N, 64));
    accel_queue_host_call(q, hc_look, &probes[1]);
    accel_queue_exec(q, p, &buf, 1, &n, 1, accel_exec_1d(HC_N, 64));
    accel_queue_host_call(q, hc_look, &probes[2]);
    accel_queue_signal(q, s, 1);
    r = accel_queue_submit(q);
    if (r != ACCEL_OK) accel_device_destroy(dev);
    HOST_CALLS_HERE(r);
    REQUIRE_OK(r);
    accel_queue_wait(q, gate, 1);
    accel_queue_host_call(q, hc_look, &probes[3]);
    accel_queue_exec(q, p, &buf, 1, &n, 1, accel_exec_1d(HC_N, 64));
    accel_queue_signal(q, s, 2);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER));
    test_pause_ms(20);
    CHECK_EQ_INT(atomic_load(&log.calls), 3);          /* the fourth waits for the gate */
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(s, 2, ACCEL_WAIT_FOREVER));
    REQUIRE_EQ_INT(atomic_load(&log.calls), 4);
    for (int k = 0; k < 4; k++) {
        uint32_t want = (uint32_t)(k < 3 ? k + 1 : 3);
        CHECK_EQ_INT(log.order[k], k);
        CHECK_EQ_U64(log.lo[k], want);
        CHECK_EQ_U64(log.hi[k], want);
    }
    CHECK_EQ_U64(test_buffer_u32(buf, HC_N - 1), 4);
    accel_device_destroy(dev);
}

/* What a host call writes (through a mapping) is what the commands after it read: on a compute queue
   (a kernel) and on a copy queue (a copy). */
typedef struct hc_write { accel_buffer* buf; uint32_t value; } hc_write;
static void hc_store(void* user) {
    hc_write* w = (hc_write*)user;
    uint32_t* m = (uint32_t*)accel_buffer_map(w->buf);
    for (uint32_t i = 0; m && i < HC_N; i++) m[i] = w->value + i;
}
TEST(host_call_side_effects_are_seen_by_later_commands) {
    accel_device* dev;
    accel_queue *q, *c;
    accel_buffer *buf, *dst;
    accel_signal *gate, *s;
    accel_program* p;
    uint32_t n = HC_N;
    hc_write w1, w2;
    accel_result r;
    if (!test_queue_scene(HC_N * 4, &dev, &q, &buf, &gate, &s)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &c));
    REQUIRE_OK(test_buffer_create(dev, HC_N * 4, ACCEL_MEMORY_DEVICE, &dst));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &p));
    w1.buf = buf; w1.value = 41;
    w2.buf = buf; w2.value = 1000;
    accel_queue_fill(q, buf, 0, HC_N * 4, 7);
    accel_queue_host_call(q, hc_store, &w1);           /* overwrites the fill */
    accel_queue_exec(q, p, &buf, 1, &n, 1, accel_exec_1d(HC_N, 64));
    accel_queue_signal(q, s, 1);
    r = accel_queue_submit(q);
    if (r != ACCEL_OK) accel_device_destroy(dev);
    HOST_CALLS_HERE(r);
    REQUIRE_OK(r);
    CHECK_OK(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(buf, 0), 42);
    CHECK_EQ_U64(test_buffer_u32(buf, HC_N - 1), 41 + HC_N);
    /* a copy queue: host call, then a copy of what it wrote */
    accel_queue_wait(c, s, 1);
    accel_queue_host_call(c, hc_store, &w2);
    accel_queue_copy(c, dst, 0, buf, 0, HC_N * 4);
    accel_queue_signal(c, s, 2);
    CHECK_OK(accel_queue_submit(c));
    CHECK_OK(accel_signal_wait(s, 2, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(dst, 0), 1000);
    CHECK_EQ_U64(test_buffer_u32(dst, HC_N - 1), 1000 + HC_N - 1);
    accel_device_destroy(dev);
}

/* A host call may set signals: one queue's host call releases another queue. */
static void hc_set(void* user) { accel_signal_set((accel_signal*)user, 1); }
TEST(host_call_releases_another_queue) {
    accel_device* dev;
    accel_queue *q, *q2;
    accel_buffer* buf;
    accel_signal *gate, *s;
    accel_result r;
    if (!test_queue_scene(HC_N * 4, &dev, &q, &buf, &gate, &s)) { accel_device_destroy(dev); return; }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    accel_queue_wait(q2, gate, 1);
    accel_queue_fill(q2, buf, 0, HC_N * 4, 9);
    accel_queue_signal(q2, s, 2);
    CHECK_OK(accel_queue_submit(q2));
    accel_queue_host_call(q, hc_set, gate);
    r = accel_queue_submit(q);
    if (r != ACCEL_OK) { accel_signal_set(gate, 1); accel_device_destroy(dev); }
    HOST_CALLS_HERE(r);
    REQUIRE_OK(r);
    CHECK_OK(accel_signal_wait(s, 2, 3000000000ull));
    CHECK_EQ_U64(test_buffer_u32(buf, HC_N - 1), 9);
    accel_signal_set(gate, 1);                         /* (a failed run must not hang the destroy) */
    accel_device_destroy(dev);
}

/* NULL fn: a recording error; the whole batch is discarded, its good host call included. */
TEST(host_call_null_fn_is_a_recording_error) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *gate, *s;
    atomic_int calls;
    atomic_init(&calls, 0);
    if (!test_queue_scene(HC_N * 4, &dev, &q, &buf, &gate, &s)) { accel_device_destroy(dev); return; }
    accel_queue_host_call(NULL, hc_count, &calls);     /* no queue: ignored */
    accel_queue_host_call(q, hc_count, &calls);
    accel_queue_fill(q, buf, 0, HC_N * 4, 5);
    accel_queue_host_call(q, NULL, &calls);
    accel_queue_signal(q, s, 1);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains("accel_queue_host_call: fn is NULL"));
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&calls), 0);
    CHECK_EQ_U64(accel_signal_value(s), 0);
    CHECK_EQ_U64(test_buffer_u32(buf, 0), 0);
    accel_device_destroy(dev);
}

/* A host call behind a wait that fails is dropped with the rest of the batch. */
TEST(host_call_behind_a_failed_wait_is_dropped) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *gate, *s;
    atomic_int calls;
    accel_result r;
    atomic_init(&calls, 0);
    if (!test_queue_scene(HC_N * 4, &dev, &q, &buf, &gate, &s)) { accel_device_destroy(dev); return; }
    accel_queue_wait(q, gate, 1);
    accel_queue_host_call(q, hc_count, &calls);
    accel_queue_signal(q, s, 1);
    r = accel_queue_submit(q);
    if (r != ACCEL_OK) accel_device_destroy(dev);
    HOST_CALLS_HERE(r);
    REQUIRE_OK(r);
    CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(s, 1, 10000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&calls), 0);
    accel_device_destroy(dev);
}

#if !TEST_HAVE_THREADS
/* No threads: a host call runs inline, inside the submit that runs its batch, or inside the
   accel_signal_set that unblocks it. */
TEST(nothreads_host_call_runs_inside_submit_or_set) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* buf;
    accel_signal *gate, *s;
    atomic_int calls;
    atomic_init(&calls, 0);
    if (!test_queue_scene(HC_N * 4, &dev, &q, &buf, &gate, &s)) { accel_device_destroy(dev); return; }
    accel_queue_host_call(q, hc_count, &calls);
    CHECK_OK(accel_queue_submit(q));
    CHECK_EQ_INT(atomic_load(&calls), 1);
    accel_queue_wait(q, gate, 1);
    accel_queue_host_call(q, hc_count, &calls);
    CHECK_OK(accel_queue_submit(q));
    CHECK_EQ_INT(atomic_load(&calls), 1);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_EQ_INT(atomic_load(&calls), 2);
    accel_device_destroy(dev);
}
#endif

/* ==== CUDA: native handles, a raw kernel on accel's stream, borrowed cuMemAlloc memory ==== */
#if defined(ACCEL_TEST_HAVE_CUDA) && TEST_RAW_DRIVERS && !defined(ACCEL_I_CU_NO_LOADER)
/* The driver calls the test makes itself, by their exported names (the real libcuda's and the mock's). */
typedef struct raw_cu {
    void* lib;
    int (*MemAlloc)(uint64_t* p, size_t n);
    int (*MemFree)(uint64_t p);
    int (*CtxSetCurrent)(void* ctx);
    int (*ModuleLoadData)(void** m, const void* image);
    int (*ModuleUnload)(void* m);
    int (*ModuleGetFunction)(void** f, void* m, const char* name);
    int (*LaunchKernel)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void* stream, void** params, void** extra);
} raw_cu;
static int raw_cu_sym(raw_cu* c, const char* name, void* fn_ptr) {
    void* sym = dlsym(c->lib, name);
    memcpy(fn_ptr, &sym, sizeof sym);
    return sym != NULL;
}
static int raw_cu_open(raw_cu* c) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    memset(c, 0, sizeof *c);
    c->lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return c->lib && raw_cu_sym(c, "cuMemAlloc_v2", &c->MemAlloc) && raw_cu_sym(c, "cuMemFree_v2", &c->MemFree) &&
           raw_cu_sym(c, "cuCtxSetCurrent", &c->CtxSetCurrent) && raw_cu_sym(c, "cuModuleLoadData", &c->ModuleLoadData) &&
           raw_cu_sym(c, "cuModuleUnload", &c->ModuleUnload) && raw_cu_sym(c, "cuModuleGetFunction", &c->ModuleGetFunction) &&
           raw_cu_sym(c, "cuLaunchKernel", &c->LaunchKernel);
}

TEST(cuda_getters_and_wrap_errors) {
    if (test_g.backend != accel_cuda_backend()) SKIP("CUDA backend only (ACCEL_TEST_BACKEND=cuda)");
    accel_device *dev, *cpu;
    accel_queue *q, *cq;
    accel_buffer *b, *hb, *cb, *w = (accel_buffer*)&w;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_device_create(&(accel_device_desc){ .logger = test_logger() }, &cpu));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &q));
    REQUIRE_OK(accel_queue_create(cpu, ACCEL_QUEUE_COMPUTE, &cq));
    REQUIRE_OK(test_buffer_create(dev, 1024, ACCEL_MEMORY_DEVICE, &b));
    REQUIRE_OK(test_buffer_create(dev, 1024, ACCEL_MEMORY_HOST, &hb));
    REQUIRE_OK(test_buffer_create(cpu, 1024, ACCEL_MEMORY_DEVICE, &cb));
    CHECK(accel_cuda_buffer_pointer(b) != 0);
    CHECK(accel_cuda_buffer_pointer(hb) != 0);
    CHECK(accel_cuda_buffer_pointer(b) != accel_cuda_buffer_pointer(hb));
    CHECK(accel_cuda_queue_stream(q) != NULL);
    CHECK(accel_cuda_device_context(dev) != NULL);
    CHECK(accel_cuda_buffer_pointer(NULL) == 0 && accel_cuda_buffer_pointer(cb) == 0);
    CHECK(accel_cuda_queue_stream(NULL) == NULL && accel_cuda_queue_stream(cq) == NULL);
    CHECK(accel_cuda_device_context(NULL) == NULL && accel_cuda_device_context(cpu) == NULL);
    CHECK_RESULT(accel_cuda_buffer_wrap(cpu, accel_cuda_buffer_pointer(b), 1024, &w), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK(test_log_contains("not a CUDA device"));
    w = (accel_buffer*)&w;
    CHECK_RESULT(accel_cuda_buffer_wrap(dev, 0, 1024, &w), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK_RESULT(accel_cuda_buffer_wrap(dev, accel_cuda_buffer_pointer(b), 0, &w), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_cuda_buffer_wrap(NULL, accel_cuda_buffer_pointer(b), 16, &w), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_cuda_buffer_wrap(dev, accel_cuda_buffer_pointer(b), 16, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_device_destroy(cpu);
    accel_device_destroy(dev);
}

/* accel fill 5 -> raw add_one on accel's stream -> accel copy: the copy sees 6 (stream order), in
   memory accel borrowed from cuMemAlloc. The wrapper is destroyed while work still uses it; the memory
   stays the caller's (a second wrap reads it; cuMemFree at the end frees it once). */
TEST(cuda_raw_kernel_on_accel_stream_in_borrowed_memory) {
    enum { N = 1000 };
    if (test_g.backend != accel_cuda_backend()) SKIP("CUDA backend only (ACCEL_TEST_BACKEND=cuda)");
    accel_device* dev;
    accel_queue* q;
    accel_buffer *w, *w2, *out;
    accel_program* p;
    accel_signal* s;
    accel_device_info info;
    raw_cu cu;
    uint64_t mem = 0;
    void *mod = NULL, *fn = NULL;
    char* ptx = NULL;
    size_t ptx_size = 0;
    uint32_t n = N;
    accel_logger lg = test_logger();
    if (!raw_cu_open(&cu)) { if (cu.lib) dlclose(cu.lib); SKIP("the driver library does not export the plain entry points"); }
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &p));
    REQUIRE_OK(test_buffer_create(dev, N * 4, ACCEL_MEMORY_HOST, &out));
    REQUIRE(cu.CtxSetCurrent(accel_cuda_device_context(dev)) == 0);
    REQUIRE(cu.MemAlloc(&mem, N * 4) == 0);
    REQUIRE_OK(accel_cuda_buffer_wrap(dev, mem, N * 4, &w));
    CHECK_EQ_U64(accel_cuda_buffer_pointer(w), mem);
    CHECK_EQ_U64(accel_buffer_size(w), N * 4);
    CHECK(accel_buffer_map(w) == NULL);
    accel_queue_fill(q, w, 0, N * 4, 5);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_OK(accel_signal_wait(s, 1, 10000000000ull));
    /* the raw kernel, on accel's stream: after the fill, before what accel records next */
    REQUIRE_OK(accel_cuda_compile_source(test_k_add_one_cuda, "add_one", info.compute_capability, NULL, &lg, &ptx, &ptx_size));
    CHECK(cu.ModuleLoadData(&mod, ptx) == 0);
    accel_cuda_free_ptx(NULL, ptx, ptx_size);
    REQUIRE(mod != NULL);
    CHECK(cu.ModuleGetFunction(&fn, mod, "add_one") == 0);
    void* params[2] = { &mem, &n };
    CHECK(cu.LaunchKernel(fn, (N + 127) / 128, 1, 1, 128, 1, 1, 0, accel_cuda_queue_stream(q), params, NULL) == 0);
    accel_queue_copy(q, out, 0, w, 0, N * 4);
    accel_queue_exec(q, p, &w, 1, &n, 1, accel_exec_1d(N, 128));
    accel_queue_signal(q, s, 2);
    CHECK_OK(accel_queue_submit(q));
    accel_buffer_destroy(w);                           /* work still uses it: released when done */
    CHECK_OK(accel_signal_wait(s, 2, 10000000000ull));
    CHECK_EQ_U64(test_buffer_u32(out, 0), 6);
    CHECK_EQ_U64(test_buffer_u32(out, N - 1), 6);
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    REQUIRE_OK(accel_cuda_buffer_wrap(dev, mem, N * 4, &w2));   /* the memory is still there */
    CHECK_EQ_U64(test_buffer_u32(w2, 0), 7);
    CHECK_EQ_U64(test_buffer_u32(w2, N - 1), 7);
    cu.ModuleUnload(mod);
    accel_device_destroy(dev);                         /* releases w2: still not freed */
    CHECK(cu.MemFree(mem) == 0);
    dlclose(cu.lib);
}
#endif

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(host_calls_run_in_queue_order_between_commands);
    RUN(host_call_side_effects_are_seen_by_later_commands);
    RUN(host_call_releases_another_queue);
    RUN(host_call_null_fn_is_a_recording_error);
    RUN(host_call_behind_a_failed_wait_is_dropped);
#if !TEST_HAVE_THREADS
    RUN(nothreads_host_call_runs_inside_submit_or_set);
#endif
#if defined(ACCEL_TEST_HAVE_CUDA) && TEST_RAW_DRIVERS && !defined(ACCEL_I_CU_NO_LOADER)
    RUN(cuda_getters_and_wrap_errors);
    RUN(cuda_raw_kernel_on_accel_stream_in_borrowed_memory);
#endif
    return test_end();
}
