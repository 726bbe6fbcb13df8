/* tests/test_native.c — native steps (accel_queue_native, DESIGN.md 7.1): foreign work in a queue's order.
   A "native fill" stands for a library call: on the CPU backend fn writes the buffer's host memory (the
   commands before it completed); on Vulkan it records vkCmdFillBuffer into the command buffer it gets;
   on CUDA it enqueues cuMemsetD32Async on the stream it gets. Every backend must then give the same
   buffer contents. Also: fn's pointers per backend, many steps per batch (each runs once), a NULL fn,
   a native step in a command list, failure before the step was enqueued, destroy with steps pending,
   no-threads builds (fn runs inside submit). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

#if (defined(ACCEL_TEST_HAVE_CUDA) || defined(ACCEL_TEST_HAVE_VULKAN)) && defined(__linux__) && TEST_HAVE_THREADS
#  include <dlfcn.h>
#  define NATIVE_RAW 1
#else
#  define NATIVE_RAW 0
#endif

enum { NN = 256 };

/* ==== the native fill on each backend ==== */
typedef struct native_fill { accel_buffer* buf; uint32_t value, n; atomic_int runs; int bad; } native_fill;
#if NATIVE_RAW && defined(ACCEL_TEST_HAVE_VULKAN)
typedef void (*native_vk_fill_fn)(void* cb, uint64_t buffer, uint64_t offset, uint64_t size, uint32_t data);
static native_vk_fill_fn native_vk_fill;
#endif
#if NATIVE_RAW && defined(ACCEL_TEST_HAVE_CUDA)
typedef int (*native_cu_memset_fn)(uint64_t dptr, unsigned value, size_t n, void* stream);
static native_cu_memset_fn native_cu_memset;
#endif
/* Looks up the driver calls the native steps make (the backend under test's); false: not here. */
static bool native_raw_open(void) {
    if (test_backend_is_cpu()) return true;
#if NATIVE_RAW && defined(ACCEL_TEST_HAVE_VULKAN)
    if (test_g.backend == accel_vulkan_backend()) {
        void* lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        void* sym = lib ? dlsym(lib, "vkCmdFillBuffer") : NULL;   /* the loader's trampoline */
        memcpy(&native_vk_fill, &sym, sizeof sym);
        return sym != NULL;
    }
#endif
#if NATIVE_RAW && defined(ACCEL_TEST_HAVE_CUDA)
    if (test_g.backend == accel_cuda_backend()) {
        const char* path = getenv("ACCEL_CUDA_LIBRARY");
        void* lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        void* get = lib ? dlsym(lib, "cuGetProcAddress_v2") : NULL;
        void* sym = NULL;
        int (*getproc)(const char*, void**, int, unsigned long long, int*);
        int status = 0;
        memcpy(&getproc, &get, sizeof get);
        if (!get || getproc("cuMemsetD32Async", &sym, 12000, 0, &status) != 0) return false;
        memcpy(&native_cu_memset, &sym, sizeof sym);
        return sym != NULL;
    }
#endif
    return false;
}
/* The step: fills f->buf with f->value through the backend's native queue, and checks n's pointers. */
static void native_fill_fn(const accel_native* n, void* user) {
    native_fill* f = (native_fill*)user;
    atomic_fetch_add(&f->runs, 1);
    if (!n->queue) f->bad = 1;
    if (test_backend_is_cpu()) {
        uint32_t* p = (uint32_t*)accel_buffer_map(f->buf);
        if (n->cuda_stream || n->vulkan_command_buffer || n->vulkan_queue || n->vulkan_queue_family) f->bad = 2;
        for (uint32_t i = 0; p && i < f->n; i++) p[i] = f->value;
        return;
    }
#if NATIVE_RAW && defined(ACCEL_TEST_HAVE_VULKAN)
    if (test_g.backend == accel_vulkan_backend()) {
        uint32_t family = 99;
        void* vq = (void*)accel_vulkan_queue_handle(n->queue, &family);
        if (!n->vulkan_command_buffer || n->cuda_stream || n->vulkan_queue != vq || n->vulkan_queue_family != family)
            f->bad = 3;
        native_vk_fill(n->vulkan_command_buffer, (uint64_t)(uintptr_t)accel_vulkan_buffer_handle(f->buf), 0,
                       (uint64_t)f->n * 4u, f->value);
        return;
    }
#endif
#if NATIVE_RAW && defined(ACCEL_TEST_HAVE_CUDA)
    if (test_g.backend == accel_cuda_backend()) {
        if (!n->cuda_stream || n->cuda_stream != accel_cuda_queue_stream(n->queue) || n->vulkan_command_buffer)
            f->bad = 4;
        if (native_cu_memset(accel_cuda_buffer_pointer(f->buf), f->value, f->n, n->cuda_stream) != 0) f->bad = 5;
        return;
    }
#endif
    f->bad = 6;
}
/* Is the backend under test CUDA? (A CUDA native step waits for the host-released GPU waits before it.) */
static bool native_on_cuda(void) {
#if defined(ACCEL_TEST_HAVE_CUDA)
    return test_g.backend == accel_cuda_backend();
#else
    return false;
#endif
}
/* Counts its runs only. */
static void native_count_fn(const accel_native* n, void* user) {
    (void)n;
    atomic_fetch_add((atomic_int*)user, 1);
}

typedef struct native_rig { accel_device* dev; accel_queue* q; accel_program* add; accel_buffer* buf; accel_signal* s; } native_rig;
static bool native_rig_open(native_rig* r) {
    memset(r, 0, sizeof *r);
    if (!CHECK_OK(test_device_create(&r->dev))) return false;
    if (!CHECK_OK(accel_queue_create(r->dev, ACCEL_QUEUE_COMPUTE, &r->q))) return false;
    if (!CHECK_OK(test_program_create(r->dev, TK_ADD_ONE, &r->add))) return false;
    if (!CHECK_OK(test_buffer_create(r->dev, NN * 4, ACCEL_MEMORY_DEVICE, &r->buf))) return false;
    if (!CHECK_OK(test_buffer_set_u32(r->buf, NN, 0))) return false;
    return CHECK_OK(accel_signal_create(r->dev, 0, &r->s));
}
static void native_add(native_rig* r) {
    uint32_t n = NN;
    accel_queue_exec(r->q, r->add, &r->buf, 1, &n, 1, accel_exec_1d(NN, 64));
}

/* fill 1; native fill 5; add one; native fill 7 and add one twice: 9 everywhere, on every backend. Any
   other order gives another number. fn's pointers are the backend's. */
TEST(native_steps_run_in_queue_order) {
    native_rig r;
    native_fill f5, f7;
    if (!native_raw_open()) SKIP("the driver's own calls for the native step are not reachable here");
    if (!native_rig_open(&r)) return;
    memset(&f5, 0, sizeof f5);
    f5.buf = r.buf; f5.value = 5; f5.n = NN;
    f7 = f5;
    f7.value = 7;
    accel_queue_fill(r.q, r.buf, 0, NN * 4, 1);
    accel_queue_native(r.q, native_fill_fn, &f5);
    native_add(&r);
    accel_queue_native(r.q, native_fill_fn, &f7);
    native_add(&r);
    native_add(&r);
    accel_queue_signal(r.q, r.s, 1);
    CHECK_OK(accel_queue_submit(r.q));
    CHECK_OK(accel_signal_wait(r.s, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&f5.runs), 1);
    CHECK_EQ_INT(atomic_load(&f7.runs), 1);
    CHECK_EQ_INT(f5.bad, 0);
    CHECK_EQ_INT(f7.bad, 0);
    for (uint32_t i = 0; i < NN; i += 37) if (!CHECK_EQ_INT(test_buffer_u32(r.buf, i), 9)) break;
    CHECK_EQ_INT(test_buffer_u32(r.buf, NN - 1), 9);
    accel_device_destroy(r.dev);
}

/* 200 native steps between 200 execs, over 4 batches: each step runs exactly once, the execs all ran. */
TEST(many_native_steps_per_batch_each_run_once) {
    native_rig r;
    atomic_int runs;
    atomic_init(&runs, 0);
    if (!native_rig_open(&r)) return;
    for (int b = 0; b < 4; b++) {
        for (int i = 0; i < 50; i++) {
            native_add(&r);
            accel_queue_native(r.q, native_count_fn, &runs);
        }
        CHECK_OK(accel_queue_submit(r.q));
    }
    CHECK_OK(accel_queue_finish(r.q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&runs), 200);
    CHECK_EQ_INT(test_buffer_u32(r.buf, 0), 200);
    CHECK_EQ_INT(test_buffer_u32(r.buf, NN - 1), 200);
    accel_device_destroy(r.dev);
}

/* A NULL fn is a recording error: the submit returns INVALID_ARGUMENT and nothing of the batch runs; so
   is a native step in a command list (record_end returns it); a NULL queue is logged. */
TEST(native_recording_errors) {
    native_rig r;
    atomic_int runs;
    accel_commands* list = NULL;
    atomic_init(&runs, 0);
    if (!native_rig_open(&r)) return;
    native_add(&r);
    accel_queue_native(r.q, NULL, NULL);
    accel_queue_native(r.q, native_count_fn, &runs);
    CHECK_RESULT(accel_queue_submit(r.q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains("accel_queue_native: fn is NULL"));
    CHECK_OK(accel_queue_finish(r.q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&runs), 0);
    CHECK_EQ_INT(test_buffer_u32(r.buf, 0), 0);
    REQUIRE_OK(accel_queue_record_begin(r.q));
    native_add(&r);
    accel_queue_native(r.q, native_count_fn, &runs);
    CHECK_RESULT(accel_queue_record_end(r.q, &list), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(list == NULL);
    CHECK(test_log_contains("accel_queue_native"));
    accel_queue_native(NULL, native_count_fn, &runs);   /* no device to log to: stderr */
    CHECK_EQ_INT(atomic_load(&runs), 0);
    accel_device_destroy(r.dev);
}

/* A failure that comes before the step was enqueued drops it with the rest of its batch: a wait on a
   signal of a CPU device, failed; the step never runs, the batch's signal fails. Then, with the queue
   destroyed while such a batch is pending (its gate failed first), the step never runs either. Where
   the queue waits on the CPU signal on the device (accel_device_peer_info: device_waits, a CUDA queue
   with stream memory operations), the step may run once the failure released that wait (DESIGN 6.1 and
   7.1: the commands before it were handed to the device), and the batch's signal still reads failed. */
TEST(failure_before_the_step_drops_it) {
    native_rig r;
    accel_device* host;
    accel_signal* gate;
    accel_peer_info pi;
    atomic_int runs;
    int may_run;
    atomic_init(&runs, 0);
    if (!native_rig_open(&r)) return;
    REQUIRE_OK(accel_device_create(NULL, &host));
    REQUIRE_OK(accel_signal_create(host, 0, &gate));
    REQUIRE_OK(accel_device_peer_info(r.dev, host, &pi));
    may_run = pi.device_waits && !test_backend_is_cpu();
    accel_queue_wait(r.q, gate, 1);
    accel_queue_native(r.q, native_count_fn, &runs);
    accel_queue_signal(r.q, r.s, 1);
    CHECK_OK(accel_queue_submit(r.q));
    CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(r.s, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_OK(accel_queue_finish(r.q, ACCEL_WAIT_FOREVER));
    CHECK(atomic_load(&runs) == 0 || (may_run && atomic_load(&runs) == 1));
    atomic_store(&runs, 0);
    {   /* destroy with a step pending behind a gate that fails */
        accel_queue* q2;
        accel_signal* gate2;
        REQUIRE_OK(accel_queue_create(r.dev, ACCEL_QUEUE_COMPUTE, &q2));
        REQUIRE_OK(accel_signal_create(host, 0, &gate2));
        for (int i = 0; i < 5; i++) {
            accel_queue_wait(q2, gate2, 1);
            accel_queue_native(q2, native_count_fn, &runs);
            CHECK_OK(accel_queue_submit(q2));
        }
        CHECK_OK(accel_signal_fail(gate2, ACCEL_ERROR_BACKEND));
        accel_queue_destroy(q2);
        CHECK(atomic_load(&runs) == 0 || (may_run && atomic_load(&runs) <= 5));
    }
    accel_device_destroy(r.dev);
    accel_device_destroy(host);
}

/* A step after a gate the host sets later runs once the gate is set (on a GPU, by the queue's worker
   that releases the gate), after the commands before it. Where the queue waits on the CPU signal on
   the device (device_waits), the wait is on the device: a Vulkan queue's fn runs when it is recorded,
   behind the wait (the work it records still lands after the gate); a CUDA queue's once the gate is
   released (its fn may enqueue more than the stream holds). */
TEST(native_step_behind_a_host_gate) {
    native_rig r;
    accel_device* host;
    accel_signal* gate;
    accel_peer_info pi;
    native_fill f;
    if (!native_raw_open()) SKIP("the driver's own calls for the native step are not reachable here");
    if (!native_rig_open(&r)) return;
    REQUIRE_OK(accel_device_create(NULL, &host));
    REQUIRE_OK(accel_signal_create(host, 0, &gate));
    REQUIRE_OK(accel_device_peer_info(r.dev, host, &pi));
    memset(&f, 0, sizeof f);
    f.buf = r.buf; f.value = 3; f.n = NN;
    native_add(&r);
    accel_queue_wait(r.q, gate, 1);
    accel_queue_native(r.q, native_fill_fn, &f);
    native_add(&r);
    accel_queue_signal(r.q, r.s, 1);
    CHECK_OK(accel_queue_submit(r.q));
#if TEST_HAVE_THREADS
    CHECK_RESULT(accel_signal_wait(r.s, 1, 20000000u), ACCEL_TIMEOUT);
#endif
    if (!pi.device_waits || test_backend_is_cpu() || native_on_cuda()) CHECK_EQ_INT(atomic_load(&f.runs), 0);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(r.s, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&f.runs), 1);
    CHECK_EQ_INT(f.bad, 0);
    CHECK_EQ_INT(test_buffer_u32(r.buf, 0), 4);
    CHECK_EQ_INT(test_buffer_u32(r.buf, NN - 1), 4);
    accel_device_destroy(r.dev);
    accel_device_destroy(host);
}

#if TEST_HAVE_THREADS
/* The native fill k times over: many driver calls for one step. */
typedef struct native_many { native_fill f; uint32_t k; } native_many;
static void native_many_fn(const accel_native* n, void* user) {
    native_many* m = (native_many*)user;
    for (uint32_t i = 0; i < m->k; i++) native_fill_fn(n, &m->f);
}
/* Sets gate unless done is set within 5 s (so that a submit that blocks cannot hang the test). */
typedef struct native_watch { accel_signal *gate, *done; atomic_int fired; } native_watch;
static void native_watch_fn(void* p) {
    native_watch* w = (native_watch*)p;
    if (accel_signal_wait(w->done, 1, 5000000000ull) == ACCEL_OK) return;
    atomic_store(&w->fired, 1);
    accel_signal_set(w->gate, 1);
}
#endif
/* A native step that enqueues more than a stream holds (1,100 fills; the CUDA mock's stream takes 1,024
   operations) behind a GPU wait the host has yet to release: accel_queue_submit returns at once, and
   the step runs once the wait is released. CUDA counted a step as one operation of its budget, so the
   step's own driver call blocked the submitting thread, the one that would release the wait (here a
   watchdog released it after 5 s). */
TEST(a_native_step_that_fills_the_stream_behind_a_host_gate) {
#if !TEST_HAVE_THREADS
    SKIP("needs threads (a watchdog)");
#else
    native_rig r;
    accel_signal *gate, *done;
    native_many m;
    native_watch w;
    test_thread t;
    if (!native_raw_open()) SKIP("the driver's own calls for the native step are not reachable here");
    if (!native_rig_open(&r)) return;
    REQUIRE_OK(accel_signal_create(r.dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(r.dev, 0, &done));
    memset(&m, 0, sizeof m);
    m.f.buf = r.buf; m.f.value = 3; m.f.n = NN; m.k = 1100;
#if defined(ACCEL_TEST_HAVE_VULKAN)
    /* fills of one buffer in one command buffer need barriers between them (fn's own to record) */
    if (test_g.backend == accel_vulkan_backend()) m.k = 1;
#endif
    w.gate = gate;
    w.done = done;
    atomic_init(&w.fired, 0);
    REQUIRE(test_thread_start(&t, native_watch_fn, &w));
    accel_queue_wait(r.q, gate, 1);
    native_add(&r);   /* on CUDA the step is then handed on mid-segment */
    accel_queue_native(r.q, native_many_fn, &m);
    native_add(&r);
    accel_queue_signal(r.q, r.s, 1);
    CHECK_OK(accel_queue_submit(r.q));
    CHECK_EQ_INT(atomic_load(&w.fired), 0);   /* the submit returned before the watchdog set the gate */
    if (test_backend_is_cpu() || native_on_cuda()) CHECK_EQ_INT(atomic_load(&m.f.runs), 0);
    CHECK_OK(accel_signal_set(done, 1));
    test_thread_join(&t);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(r.s, 1, ACCEL_WAIT_FOREVER));
    CHECK_EQ_INT(atomic_load(&m.f.runs), (int)m.k);
    CHECK_EQ_INT(m.f.bad, 0);
    CHECK_EQ_INT(test_buffer_u32(r.buf, 0), 4);
    CHECK_EQ_INT(test_buffer_u32(r.buf, NN - 1), 4);
    accel_device_destroy(r.dev);
#endif
}

/* What a native step's fn may do besides enqueueing: call accel on its own device (not on its queue). */
typedef struct native_caller {
    accel_device* dev;
    accel_queue* other;   /* another queue of the device */
    accel_signal *set, *failed, *by_other;
    atomic_int runs;
    int bad;
} native_caller;
static void native_calls_fn(const accel_native* n, void* user) {
    native_caller* c = (native_caller*)user;
    accel_signal* s = NULL;
    accel_queue* q = NULL;
    (void)n;
    if (accel_signal_set(c->set, 1) != ACCEL_OK) c->bad++;
    if (accel_signal_fail(c->failed, ACCEL_ERROR_BACKEND) != ACCEL_OK) c->bad++;
    if (accel_signal_create(c->dev, 0, &s) != ACCEL_OK) c->bad++;
    accel_signal_destroy(s);
    if (accel_queue_create(c->dev, ACCEL_QUEUE_COMPUTE, &q) != ACCEL_OK) c->bad++;
    accel_queue_destroy(q);
    accel_queue_signal(c->other, c->by_other, 1);
    if (accel_queue_submit(c->other) != ACCEL_OK) c->bad++;
    atomic_fetch_add(&c->runs, 1);
}
/* fn sets and fails signals of the device, makes and destroys a signal and a queue, and submits to
   another queue of it (Vulkan held its device's submit lock while fn ran: each of these hung). */
TEST(native_fn_calls_accel_on_its_device) {
    native_caller c;
    accel_queue* q = NULL;
    accel_signal* done = NULL;
    memset(&c, 0, sizeof c);
    REQUIRE_OK(test_device_create(&c.dev));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COMPUTE, &c.other));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &c.set));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &c.failed));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &c.by_other));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &done));
    for (uint64_t round = 1; round <= 3; round++) {   /* the first one alone in its batch */
        if (round > 1) accel_queue_barrier(q);
        accel_queue_native(q, native_calls_fn, &c);
        accel_queue_signal(q, done, round);
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_wait(done, round, 10000000000ull));
    }
    CHECK_EQ_INT(atomic_load(&c.runs), 3);
    CHECK_EQ_INT(c.bad, 0);
    CHECK_EQ_U64(accel_signal_value(c.set), 1);
    CHECK_RESULT(accel_signal_wait(c.failed, 1, 0), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_OK(accel_signal_wait(c.by_other, 1, 10000000000ull));
    accel_device_destroy(c.dev);
}

/* A host call or native step that destroys or finishes its own queue, or destroys its device: with
   threads each would wait for the very call it runs in (they hung); they are refused with an error
   line and change nothing (accel.h: accel_queue_host_call). Another queue of the device is fine. */
#if TEST_HAVE_THREADS
typedef struct native_self {
    accel_device* dev;
    accel_queue *q, *other;
    int mode;
    accel_result finish, poll;
} native_self;
static void native_self_calls(native_self* x) {
    if (x->mode == 0) accel_queue_destroy(x->q);
    else if (x->mode == 1) accel_device_destroy(x->dev);
    else if (x->mode == 2) {
        x->finish = accel_queue_finish(x->q, ACCEL_WAIT_FOREVER);
        x->poll = accel_queue_finish(x->q, 0);   /* a poll: TIMEOUT (q runs this call), not refused */
    }
    else { accel_queue_destroy(x->other); x->other = NULL; }   /* not refused: it has no work */
}
static void native_self_host(void* user) { native_self_calls((native_self*)user); }
static void native_self_native(const accel_native* n, void* user) { (void)n; native_self_calls((native_self*)user); }
#endif
TEST(a_call_that_destroys_its_own_queue_or_device_is_refused) {
#if TEST_HAVE_THREADS
    native_self x;
    accel_signal* done = NULL;
    uint64_t v = 0;
    memset(&x, 0, sizeof x);
    REQUIRE_OK(test_device_create(&x.dev));
    REQUIRE_OK(accel_queue_create(x.dev, ACCEL_QUEUE_COMPUTE, &x.q));
    REQUIRE_OK(accel_signal_create(x.dev, 0, &done));
    for (int native = 0; native < 2; native++) {
        for (x.mode = 0; x.mode < 4; x.mode++) {
            if (x.mode == 3) REQUIRE_OK(accel_queue_create(x.dev, ACCEL_QUEUE_COMPUTE, &x.other));
            x.finish = ACCEL_OK;
            test_log_reset();
            if (native) accel_queue_native(x.q, native_self_native, &x);
            else accel_queue_host_call(x.q, native_self_host, &x);
            accel_queue_signal(x.q, done, ++v);
            CHECK_OK(accel_queue_submit(x.q));
            if (!CHECK_OK(accel_signal_wait(done, v, 10000000000ull))) {
                fprintf(stderr, "    ^ %s, mode %d\n", native ? "native step" : "host call", x.mode);
                return;   /* hung: leave the device */
            }
            CHECK_EQ_INT(test_log_contains("from a host call or native step of queue"), x.mode < 3);
            if (x.mode == 2) CHECK_RESULT(x.finish, ACCEL_ERROR_DEADLOCK);
            if (x.mode == 2) CHECK_RESULT(x.poll, ACCEL_TIMEOUT);
            if (x.mode == 3) CHECK(x.other == NULL);
        }
    }
    CHECK_OK(accel_queue_finish(x.q, 10000000000ull));   /* the queue still works, from here */
    accel_queue_destroy(x.q);
    accel_device_destroy(x.dev);
#else
    SKIP("no-threads builds define these calls (test_nothreads)");
#endif
}

/* No-threads builds: the step runs inside accel_queue_submit, after the commands before it. */
TEST(nothreads_step_runs_inside_submit) {
#if !TEST_HAVE_THREADS
    native_rig r;
    native_fill f;
    if (!test_backend_is_cpu()) SKIP("the CPU backend's no-threads build");
    if (!native_rig_open(&r)) return;
    memset(&f, 0, sizeof f);
    f.buf = r.buf; f.value = 11; f.n = NN;
    native_add(&r);
    accel_queue_native(r.q, native_fill_fn, &f);
    CHECK_OK(accel_queue_submit(r.q));
    CHECK_EQ_INT(atomic_load(&f.runs), 1);
    CHECK_EQ_INT(test_buffer_u32(r.buf, 0), 11);
    accel_device_destroy(r.dev);
#else
    SKIP("a threaded build");
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(native_steps_run_in_queue_order);
    RUN(many_native_steps_per_batch_each_run_once);
    RUN(native_recording_errors);
    RUN(failure_before_the_step_drops_it);
    RUN(native_step_behind_a_host_gate);
    RUN(a_native_step_that_fills_the_stream_behind_a_host_gate);
    RUN(native_fn_calls_accel_on_its_device);
    RUN(a_call_that_destroys_its_own_queue_or_device_is_refused);
    RUN(nothreads_step_runs_inside_submit);
    return test_end();
}
