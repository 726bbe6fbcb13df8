/* tests/test_recover.c — device generations (accel_device_recover, DESIGN.md 7.4): a recover of a healthy
   device and of a lost one (where the backend can lose one: the mock driver's out-of-bounds kernel on
   CUDA, the test-only loss hook on Vulkan; a CPU device is never lost), every object kind stale for
   every call that takes it, batches and signals pending at the recover, waiters / recorders / callers on
   other threads during it and two recovers at once (run it under TSan too), two devices on one native
   device (on CUDA one primary context: a recover of one recovers both), another GPU's peer copies with
   a recovered device's buffer (behind waits, behind long work, racing the recover), 100 recovers without
   growth of host memory (the counting allocator) or of driver objects (the mock's live counts and
   stale releases; on Vulkan the validation layer's object tracker, which reports any object left at
   each recover's vkDestroyDevice), no-threads builds. A backend that cannot recover (UNSUPPORTED)
   changes nothing; the other tests skip there with the reason. */
#if (defined(ACCEL_TEST_HAVE_VULKAN) || defined(ACCEL_TEST_HAVE_CUDA)) && defined(__linux__) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L   /* setenv, unsetenv: the Vulkan loss hook, the CUDA mock's knob */
#endif
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

#if defined(ACCEL_TEST_HAVE_CUDA) && defined(__linux__) && TEST_HAVE_THREADS
#  include <dlfcn.h>
#  define RECOVER_MOCK 1
#else
#  define RECOVER_MOCK 0
#endif

enum { RN = 256 };

/* ==== helpers ==== */
/* A device of the backend under test that can recover; NULL (the test skips) when it cannot. */
static accel_device* recover_device(test_alloc_state* st) {
    accel_device_desc d;
    accel_device* dev = NULL;
    accel_result r;
    memset(&d, 0, sizeof d);
    d.label = "recover";
    if (st) d.allocator = test_allocator(st);
    if (test_device_create_desc(d, &dev) != ACCEL_OK) return NULL;
    r = accel_device_recover(dev);
    if (r == ACCEL_ERROR_UNSUPPORTED) { accel_device_destroy(dev); return NULL; }
    if (!CHECK_OK(r)) { accel_device_destroy(dev); return NULL; }
    test_log_reset();
    return dev;
}
static uint64_t recover_generation(accel_device* dev) {
    accel_device_info info;
    memset(&info, 0, sizeof info);
    if (!CHECK_OK(accel_device_info_get(dev, &info))) return 0;
    return info.generation;
}
/* A CPU device with the test logger (another device beside the one under test). */
static accel_result recover_cpu_device(accel_device** out) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.backend = accel_cpu_backend();
    return test_device_create_desc(d, out);
}
static uint64_t lost_value(void) { return ACCEL_SIGNAL_MAX + 1 - (uint64_t)(int64_t)ACCEL_ERROR_DEVICE_LOST; }

/* y = 2 * x + y over RN floats (x = i, y = 1) on a fresh set of objects: the work a program rebuilds
   after a recover. Returns 1 when y came out right. */
static int recover_saxpy(accel_device* dev) {
    accel_buffer *bx = NULL, *by = NULL, *args[2];
    accel_program* p = NULL;
    accel_queue* q = NULL;
    accel_signal* done = NULL;
    accel_buffer_desc bd;
    float x[RN], y[RN], a = 2.0f;
    uint32_t k[2];
    int ok = 0;
    memset(&bd, 0, sizeof bd);
    bd.size = sizeof x;
    for (int i = 0; i < RN; i++) { x[i] = (float)i; y[i] = 1.0f; }
    memcpy(&k[0], &a, 4);
    k[1] = RN;
    if (CHECK_OK(accel_buffer_create(dev, &bd, &bx)) && CHECK_OK(accel_buffer_create(dev, &bd, &by)) &&
        CHECK_OK(test_program_create(dev, TK_SAXPY, &p)) && CHECK_OK(accel_signal_create(dev, 0, &done)) &&
        CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(accel_buffer_write(bx, 0, x, sizeof x)) &&
        CHECK_OK(accel_buffer_write(by, 0, y, sizeof y))) {
        args[0] = by;
        args[1] = bx;
        accel_queue_exec(q, p, args, 2, k, 2, accel_exec_1d(RN, 64));
        accel_queue_signal(q, done, 1);
        if (CHECK_OK(accel_queue_submit(q)) && CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER)) &&
            CHECK_OK(accel_buffer_read(by, 0, y, sizeof y))) {
            ok = 1;
            for (int i = 0; i < RN; i++) ok &= y[i] == 2.0f * (float)i + 1.0f;
            CHECK(ok);
        }
    }
    accel_queue_destroy(q);
    accel_signal_destroy(done);
    accel_program_destroy(p);
    accel_buffer_destroy(bx);
    accel_buffer_destroy(by);
    return ok;
}

/* dev is lost and its recover said that the CUDA driver keeps the sticky error (NVIDIA's drivers, and the
   mock with MOCK_CUDA_STICKY_SURVIVES=1): a recover again says the same, and the device stays lost. */
static int recover_driver_keeps_the_error(accel_device* dev) {
    int said = test_log_contains("the driver keeps the sticky error");
    if (!said) return 0;
    test_log_reset();
    CHECK_RESULT(accel_device_recover(dev), ACCEL_ERROR_DEVICE_LOST);
    CHECK(test_log_contains("the driver keeps the sticky error"));
    CHECK_RESULT(accel_device_info_get(dev, &(accel_device_info){ 0 }), ACCEL_ERROR_DEVICE_LOST);
    return 1;
}

#if defined(ACCEL_TEST_HAVE_CUDA)
/* A native step's accel_cuda_stream_signal: a host function the failed context never runs. */
static void recover_stream_signal(const accel_native* n, void* user) {
    CHECK_OK(accel_cuda_stream_signal(n->cuda_stream, (accel_signal*)user, 1));
}
#endif
/* Makes dev lost the way its backend can (see the top), with a GPU wait pending on another queue (CUDA:
   behind it, a host function of accel_cuda_stream_signal on a signal whose handle then goes); 0 when
   this backend is never lost. */
static int recover_lose(accel_device* dev) {
    int lost = 0;
#if defined(ACCEL_TEST_HAVE_CUDA)
    if (test_g.backend == accel_cuda_backend()) {
        accel_program_desc pd;
        accel_program* p = NULL;
        accel_buffer* buf = NULL;
        accel_queue *q = NULL, *q2 = NULL;
        accel_signal *done = NULL, *gate = NULL, *after = NULL, *raised = NULL;
        accel_buffer_desc bd;
        memset(&pd, 0, sizeof pd);
        pd.name = "oob";
        pd.ptx = test_oob_ptx();
        pd.buffer_count = 1;
        memset(&bd, 0, sizeof bd);
        bd.size = 4096;
        if (CHECK_OK(accel_program_create(dev, &pd, &p)) && CHECK_OK(accel_buffer_create(dev, &bd, &buf)) &&
            CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q)) &&
            CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2)) &&
            CHECK_OK(accel_signal_create(dev, 0, &done)) && CHECK_OK(accel_signal_create(dev, 0, &gate)) &&
            CHECK_OK(accel_signal_create(dev, 0, &after)) && CHECK_OK(accel_signal_create(dev, 0, &raised))) {
            accel_queue_wait(q2, gate, 1);   /* a GPU wait nobody releases */
            accel_queue_native(q2, recover_stream_signal, raised);
            accel_queue_fill(q2, buf, 0, 64, 2);
            accel_queue_signal(q2, after, 1);
            CHECK_OK(accel_queue_submit(q2));
            accel_queue_exec(q, p, &buf, 1, NULL, 0, accel_exec_1d(1, 1));
            accel_queue_signal(q, done, 1);
            CHECK_OK(accel_queue_submit(q));
            lost = CHECK_RESULT(accel_signal_wait(done, 1, 30000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
            CHECK_EQ_U64(accel_signal_value(after), lost_value());
        }
        accel_queue_destroy(q);   /* lost: they finish at once */
        accel_queue_destroy(q2);
        accel_signal_destroy(done);
        accel_signal_destroy(gate);
        accel_signal_destroy(after);
        accel_signal_destroy(raised);
        accel_buffer_destroy(buf);
        accel_program_destroy(p);
    }
#endif
#if defined(ACCEL_TEST_HAVE_VULKAN) && defined(__linux__)
    if (test_g.backend == accel_vulkan_backend()) {   /* the device was made with the hook armed */
        accel_queue* q = NULL;
        accel_buffer* buf = NULL;
        accel_signal *done = NULL, *other = NULL;
        accel_buffer_desc bd;
        memset(&bd, 0, sizeof bd);
        bd.size = 4096;
        if (CHECK_OK(accel_buffer_create(dev, &bd, &buf)) &&
            CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q)) &&
            CHECK_OK(accel_signal_create(dev, 0, &done)) && CHECK_OK(accel_signal_create(dev, 0, &other))) {
            accel_queue_fill(q, buf, 0, 64, 2);
            accel_queue_signal(q, done, 1);
            lost = CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_DEVICE_LOST);
            CHECK_EQ_U64(accel_signal_value(other), lost_value());   /* every signal of the device */
        }
        accel_queue_destroy(q);
        accel_signal_destroy(done);
        accel_signal_destroy(other);
        accel_buffer_destroy(buf);
    }
#endif
    (void)dev;
    return lost;
}
/* Vulkan: the test-only loss hook (accel_vulkan.h, "Recovery"): the device's first vkQueueSubmit says
   VK_ERROR_DEVICE_LOST. Armed for the devices made between the two calls. */
static void recover_arm_loss(int on) {
#if defined(ACCEL_TEST_HAVE_VULKAN) && defined(__linux__)
    if (on) setenv("ACCEL_VULKAN_TEST_DEVICE_LOST", "1", 1);
    else unsetenv("ACCEL_VULKAN_TEST_DEVICE_LOST");
#else
    (void)on;
#endif
}

/* The mock driver's counts (tests/mock_cuda.c): live driver objects, releases of dead handles; -1
   where the backend under test is not the mock. */
static long long recover_mock_count(const char* name) {
#if RECOVER_MOCK
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void* lib;
    void* sym;
    long long (*fn)(void);
    if (test_g.backend != accel_cuda_backend() || !path || !strstr(path, "mock")) return -1;
    if (!(lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) || !(sym = dlsym(lib, name))) return -1;
    memcpy(&fn, &sym, sizeof sym);
    return fn();
#else
    (void)name;
    return -1;
#endif
}

/* ==== recover: healthy and lost ==== */
TEST(generation_counts_recovers) {
    accel_device* dev = recover_device(NULL);
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    CHECK_EQ_U64(recover_generation(dev), 2);   /* recover_device recovered once */
    CHECK(recover_saxpy(dev));
    CHECK_OK(accel_device_recover(dev));
    CHECK_EQ_U64(recover_generation(dev), 3);
    CHECK(recover_saxpy(dev));
    accel_device_destroy(dev);
    /* a fresh device starts at 1 */
    REQUIRE_OK(test_device_create(&dev));
    CHECK_EQ_U64(recover_generation(dev), 1);
    CHECK_RESULT(accel_device_recover(NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_device_destroy(dev);
}

TEST(recover_of_a_lost_device) {
    accel_device* dev;
    accel_signal* s = NULL;
    test_alloc_state st;
    test_alloc_init(&st);
    recover_arm_loss(1);
    dev = recover_device(&st);
    recover_arm_loss(0);
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    if (!test_backend_is_cpu() && TEST_FAILED_SO_FAR()) { accel_device_destroy(dev); return; }
    if (!recover_lose(dev)) {
        accel_signal_destroy(s);
        accel_device_destroy(dev);
        SKIP("this backend is never lost (the CPU backend): see generation_counts_recovers");
    }
    {
        accel_device_info info;
        accel_signal* t = NULL;
        CHECK_RESULT(accel_device_info_get(dev, &info), ACCEL_ERROR_DEVICE_LOST);   /* sticky until ... */
        CHECK_RESULT(accel_signal_create(dev, 0, &t), ACCEL_ERROR_DEVICE_LOST);
        CHECK_EQ_U64(accel_signal_value(s), lost_value());
    }
    {
        uint64_t t0 = test_now_ns();
        accel_result r = accel_device_recover(dev);                                /* ... the recover */
        if (r == ACCEL_ERROR_DEVICE_LOST && recover_driver_keeps_the_error(dev)) {
            accel_signal_destroy(s);
            accel_device_destroy(dev);
            SKIP("the CUDA driver keeps the sticky error after the primary context's reset: this process "
                 "cannot use the GPU again (accel_cuda.h \"Recovery\"; checked: DEVICE_LOST, said, twice)");
        }
        CHECK_OK(r);
        CHECK_EQ_U64(recover_generation(dev), 3);
        CHECK_RESULT(accel_signal_wait(s, 1, 0), ACCEL_ERROR_DEVICE_LOST);
        CHECK(recover_saxpy(dev));
        CHECK(test_now_ns() - t0 < 5000000000ull);   /* DESIGN 7.4 on a GPU: back within 5 s */
    }
    accel_signal_destroy(s);
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);   /* what the lost work held went too */
}

#if RECOVER_MOCK
/* tests/mock_cuda.c with MOCK_CUDA_STICKY_SURVIVES=1 does as NVIDIA's driver: a sticky error outlives the
   primary context's reset. The recover says so (DEVICE_LOST, a log line), the device stays lost, its
   objects and itself go; with the mock's default (the reset clears it) the next recover works. */
TEST(driver_that_keeps_a_sticky_error) {
    accel_device* dev;
    accel_signal* s = NULL;
    if (test_g.backend != accel_cuda_backend() || recover_mock_count("mock_cuda_live") < 0)
        SKIP("the CUDA mock driver only (MOCK_CUDA_STICKY_SURVIVES)");
    if (!(dev = recover_device(NULL))) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    setenv("MOCK_CUDA_STICKY_SURVIVES", "1", 1);
    if (CHECK(recover_lose(dev))) {
        CHECK_RESULT(accel_device_recover(dev), ACCEL_ERROR_DEVICE_LOST);
        CHECK(recover_driver_keeps_the_error(dev));   /* said, twice, and the device stays lost */
        CHECK_EQ_U64(accel_signal_value(s), lost_value());
    }
    unsetenv("MOCK_CUDA_STICKY_SURVIVES");
    CHECK_OK(accel_device_recover(dev));   /* the mock's own way: the reset clears it */
    CHECK(recover_saxpy(dev));
    accel_signal_destroy(s);
    accel_device_destroy(dev);
}
#endif

/* A backend that cannot recover says UNSUPPORTED and changes nothing: same generation, objects live. */
TEST(unsupported_changes_nothing) {
    accel_device* dev = NULL;
    accel_signal* s = NULL;
    accel_result r;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    r = accel_device_recover(dev);
    if (r != ACCEL_ERROR_UNSUPPORTED) {
        CHECK_OK(r);
        accel_device_destroy(dev);
        SKIP("this backend recovers its devices (see the other tests)");
    }
    CHECK(test_log_contains("accel_device_recover"));
    CHECK_EQ_U64(recover_generation(dev), 1);
    CHECK_OK(accel_signal_set(s, 2));
    CHECK_EQ_U64(accel_signal_value(s), 2);
    CHECK(recover_saxpy(dev));
    accel_signal_destroy(s);
    accel_device_destroy(dev);
}

/* ==== stale objects ==== */
static void recover_host_fn(void* user) { atomic_fetch_add((atomic_int*)user, 1); }
static void recover_native_fn(const accel_native* n, void* user) { (void)n; recover_host_fn(user); }
/* Records and submits on q: a wait for gate >= 1, a host call that counts in *calls, signal out = 1. */
static accel_result recover_gated(accel_queue* q, accel_signal* gate, atomic_int* calls, accel_signal* out) {
    accel_queue_wait(q, gate, 1);
    accel_queue_host_call(q, recover_host_fn, calls);
    accel_queue_signal(q, out, 1);
    return accel_queue_submit(q);
}

/* Each object kind, made before the recover, in every call that takes it. */
TEST(stale_objects_are_refused_everywhere) {
    accel_device* dev = recover_device(NULL);
    accel_buffer *buf = NULL, *view = NULL, *fresh = NULL, *fresh2 = NULL, *v2 = NULL, *args[1];
    accel_program *prog = NULL, *fresh_prog = NULL;
    accel_signal *sig = NULL, *fresh_sig = NULL;
    accel_queue *q = NULL, *nq = NULL;
    accel_commands *list = NULL, *fresh_list = NULL, *l2 = NULL;
    accel_buffer_desc bd;
    accel_patch patch;
    uint32_t data[4] = { 1, 2, 3, 4 }, k[2] = { 5, 16 };
    atomic_int calls;
    uint32_t first = 99;
    uint64_t one = 1;
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    atomic_init(&calls, 0);
    memset(&bd, 0, sizeof bd);
    bd.size = 64;
    bd.label = "old";
    REQUIRE_OK(accel_buffer_create(dev, &bd, &buf));
    REQUIRE_OK(accel_buffer_view_create(buf, 0, 32, &view));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &prog));
    REQUIRE_OK(accel_signal_create(dev, 3, &sig));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    args[0] = buf;
    REQUIRE_OK(accel_queue_record_begin(q));
    accel_queue_exec(q, prog, args, 1, k, 2, accel_exec_1d(16, 16));
    REQUIRE_OK(accel_queue_record_end(q, &list));
    accel_queue_barrier(q);   /* an unsubmitted batch at the recover */

    REQUIRE_OK(accel_device_recover(dev));
    CHECK(test_log_contains("generation 3"));
    test_log_reset();

    /* buffers and views */
    CHECK_RESULT(accel_buffer_write(buf, 0, data, sizeof data), ACCEL_ERROR_DEVICE_LOST);
    CHECK(test_log_contains("accel_buffer_write: buffer") && test_log_contains("'old' is stale"));
    CHECK(test_log_contains("made in generation 2"));
    CHECK_RESULT(accel_buffer_read(buf, 0, data, sizeof data), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_buffer_read(view, 0, data, sizeof data), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_buffer_view_create(buf, 0, 16, &v2), ACCEL_ERROR_DEVICE_LOST);
    CHECK(v2 == NULL);
    CHECK(accel_buffer_map(buf) == NULL);
    CHECK(accel_buffer_map(view) == NULL);
    CHECK_EQ_U64(accel_buffer_size(buf), 64);
    /* signals: the recover failed it (it was at 3) */
    CHECK_EQ_U64(accel_signal_value(sig), lost_value());
    CHECK_RESULT(accel_signal_set(sig, 5), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_signal_fail(sig, ACCEL_ERROR_BACKEND), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_signal_wait(sig, 1, 0), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_signal_wait(sig, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_signal_wait_many(&sig, &one, 1, false, 1000, &first), ACCEL_ERROR_DEVICE_LOST);
    CHECK_EQ_U64(first, 99);
    CHECK_RESULT(accel_signal_set_label(sig, "x"), ACCEL_ERROR_DEVICE_LOST);
    /* the stale queue: every recording call records it, submit / finish / record return it */
    accel_queue_barrier(q);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_DEVICE_LOST);
    accel_queue_host_call(q, recover_host_fn, &calls);
    CHECK_RESULT(accel_queue_finish(q, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEVICE_LOST);
    accel_queue_native(q, recover_native_fn, &calls);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_DEVICE_LOST);   /* empty batch */
    CHECK_RESULT(accel_queue_record_begin(q), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_queue_set_label(q, "x"), ACCEL_ERROR_DEVICE_LOST);
    CHECK(test_log_contains("queue") && test_log_contains("is stale"));

    /* stale objects in the calls of a fresh queue: each one a recording error of its batch */
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &nq));
    REQUIRE_OK(accel_buffer_create(dev, &bd, &fresh));
    REQUIRE_OK(accel_buffer_create(dev, &bd, &fresh2));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &fresh_prog));
    REQUIRE_OK(accel_signal_create(dev, 0, &fresh_sig));
#if defined(ACCEL_TEST_HAVE_VULKAN)
    if (test_g.backend == accel_vulkan_backend()) {   /* the native handles: none for a stale object */
        uint32_t family = 7;
        CHECK(accel_vulkan_queue_handle(q, &family) == VK_NULL_HANDLE && family == 0);
        CHECK(accel_vulkan_buffer_handle(buf) == VK_NULL_HANDLE);
        CHECK(accel_vulkan_signal_semaphore(sig) == VK_NULL_HANDLE);
        CHECK(accel_vulkan_queue_handle(nq, NULL) != VK_NULL_HANDLE);
        CHECK(accel_vulkan_buffer_handle(fresh) != VK_NULL_HANDLE);
        CHECK(accel_vulkan_signal_semaphore(fresh_sig) != VK_NULL_HANDLE);
    }
#endif
#if defined(ACCEL_TEST_HAVE_CUDA)
    if (test_g.backend == accel_cuda_backend()) {   /* the same: the old context's handles are gone */
        CHECK(accel_cuda_queue_stream(q) == NULL);
        CHECK(accel_cuda_buffer_pointer(buf) == 0 && accel_cuda_buffer_pointer(view) == 0);
        CHECK(accel_cuda_queue_stream(nq) != NULL);
        CHECK(accel_cuda_buffer_pointer(fresh) != 0);
    }
#endif
#define STALE_IN(record) \
    do { record; CHECK_RESULT(accel_queue_submit(nq), ACCEL_ERROR_DEVICE_LOST); } while (0)
    args[0] = buf;
    STALE_IN(accel_queue_exec(nq, fresh_prog, args, 1, k, 2, accel_exec_1d(16, 16)));
    args[0] = view;
    STALE_IN(accel_queue_exec(nq, fresh_prog, args, 1, k, 2, accel_exec_1d(16, 16)));
    args[0] = fresh;
    STALE_IN(accel_queue_exec(nq, prog, args, 1, k, 2, accel_exec_1d(16, 16)));
    STALE_IN(accel_queue_copy(nq, fresh, 0, buf, 0, 16));
    STALE_IN(accel_queue_copy(nq, buf, 0, fresh, 0, 16));
    STALE_IN(accel_queue_fill(nq, view, 0, 16, 7));
    STALE_IN(accel_queue_update(nq, buf, 0, data, sizeof data));
    STALE_IN(accel_queue_timestamp(nq, buf, 0));
    STALE_IN(accel_queue_wait(nq, sig, 1));
    STALE_IN(accel_queue_signal(nq, sig, 9));
    STALE_IN(accel_queue_replay(nq, list, NULL, 0));
    /* a fresh list patched with a stale buffer */
    args[0] = fresh;
    REQUIRE_OK(accel_queue_record_begin(nq));
    accel_queue_exec(nq, fresh_prog, args, 1, k, 2, accel_exec_1d(16, 16));
    REQUIRE_OK(accel_queue_record_end(nq, &fresh_list));
    memset(&patch, 0, sizeof patch);
    patch.buffer = buf;
    STALE_IN(accel_queue_replay(nq, fresh_list, &patch, 1));
    /* a stale object in a list being recorded: record_end returns it */
    REQUIRE_OK(accel_queue_record_begin(nq));
    accel_queue_copy(nq, fresh, 0, view, 0, 16);
    CHECK_RESULT(accel_queue_record_end(nq, &l2), ACCEL_ERROR_DEVICE_LOST);
    CHECK(l2 == NULL);
#undef STALE_IN
    /* the fresh queue and objects work, and none of the stale batches ran */
    patch.buffer = fresh2;
    accel_queue_replay(nq, fresh_list, &patch, 1);
    accel_queue_signal(nq, fresh_sig, 1);
    REQUIRE_OK(accel_queue_submit(nq));
    REQUIRE_OK(accel_signal_wait(fresh_sig, 1, ACCEL_WAIT_FOREVER));
    REQUIRE_OK(accel_buffer_read(fresh2, 0, data, sizeof data));
    CHECK_EQ_U64(data[0], 5);
    CHECK_EQ_U64(data[3], 8);
    REQUIRE_OK(accel_buffer_read(fresh, 0, data, sizeof data));
    CHECK_EQ_U64(data[0], 0);
    CHECK_EQ_INT(atomic_load(&calls), 0);
    /* destroying stale objects works (in any order) */
    accel_buffer_destroy(buf);
    accel_commands_destroy(list);
    accel_queue_destroy(q);
    accel_buffer_destroy(view);
    accel_program_destroy(prog);
    accel_signal_destroy(sig);
    accel_commands_destroy(fresh_list);
    accel_device_destroy(dev);
}

/* ==== work pending at the recover ==== */
/* A batch gated on a signal nobody sets, one gated on another device's signal, and a wait on its last
   signal: the recover fails the signals, nothing behind the gates runs, a new queue is not held up,
   and the other device's signal, set later, lets the stale batch go (it drops its rest). */
TEST(pending_batches_and_signals) {
    accel_device *dev = recover_device(NULL), *other = NULL;
    accel_signal *gate = NULL, *done = NULL, *foreign = NULL, *done2 = NULL;
    accel_queue *q = NULL, *q2 = NULL;
    atomic_int calls;
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    atomic_init(&calls, 0);
    REQUIRE_OK(recover_cpu_device(&other));   /* a CPU device: its signals gate on the host */
    REQUIRE_OK(accel_signal_create(other, 0, &foreign));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_signal_create(dev, 0, &done2));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(recover_gated(q, gate, &calls, done));
    REQUIRE_OK(recover_gated(q2, foreign, &calls, done2));
    CHECK_RESULT(accel_signal_wait(done, 1, 0), ACCEL_TIMEOUT);

    REQUIRE_OK(accel_device_recover(dev));
    CHECK_EQ_U64(accel_signal_value(done), lost_value());
    CHECK_EQ_U64(accel_signal_value(done2), lost_value());
    CHECK_RESULT(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEVICE_LOST);
    CHECK(recover_saxpy(dev));   /* the new generation is not held up by q2's wait */
    CHECK_OK(accel_signal_set(foreign, 1));
    accel_queue_destroy(q);      /* q2 drops its rest once its wait ended */
    accel_queue_destroy(q2);
    CHECK_EQ_INT(atomic_load(&calls), 0);
    accel_signal_destroy(gate);
    accel_signal_destroy(done);
    accel_signal_destroy(done2);
    accel_device_destroy(dev);
    accel_device_destroy(other);
}

/* A batch of a queue made stale while it waits on another device's signal: when that wait ends, failed
   with another reason or set, the batch is dropped, and its signal on the other device reads
   DEVICE_LOST either way (its queue was recovered), not the wait's reason (helper 92 saw either,
   depending on timing). 24 rounds, half failed, half set; the fail or set at once or a little later. */
TEST(a_stale_batch_drops_with_device_lost) {
    accel_device *dev = recover_device(NULL), *other = NULL;
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(recover_cpu_device(&other));
    for (int i = 0; i < 24 && !TEST_FAILED_SO_FAR(); i++) {
        accel_signal *g = NULL, *out = NULL;
        accel_queue* q = NULL;
        if (!CHECK_OK(accel_signal_create(other, 0, &g)) || !CHECK_OK(accel_signal_create(other, 0, &out)) ||
            !CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q))) {
            accel_signal_destroy(g);
            accel_signal_destroy(out);
            break;
        }
        accel_queue_wait(q, g, 1);
        accel_queue_signal(q, out, 1);
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_device_recover(dev));
        if (TEST_HAVE_THREADS && i % 4 >= 2)   /* 1 ms later (no-threads builds: a wait would be DEADLOCK) */
            CHECK_RESULT(accel_signal_wait(g, 1, 1000000), ACCEL_TIMEOUT);
        if (i % 2) CHECK_OK(accel_signal_set(g, 1));
        else CHECK_OK(accel_signal_fail(g, ACCEL_ERROR_BACKEND));
        CHECK_RESULT(accel_signal_wait(out, 1, 10000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(out), lost_value());
        accel_queue_destroy(q);
        accel_signal_destroy(g);
        accel_signal_destroy(out);
    }
    accel_device_destroy(dev);
    accel_device_destroy(other);
}

/* A queue of another device waits on a signal of dev and signals one of dev: the recover fails both,
   so the other device's queue drops its rest instead of waiting for ever. */
TEST(other_devices_queues_are_released) {
    accel_device *dev = recover_device(NULL), *other = NULL;
    accel_signal *s = NULL, *mine = NULL, *after = NULL;
    accel_queue* oq = NULL;
    atomic_int calls;
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    atomic_init(&calls, 0);
    REQUIRE_OK(recover_cpu_device(&other));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_signal_create(dev, 0, &mine));
    REQUIRE_OK(accel_signal_create(other, 0, &after));
    REQUIRE_OK(accel_queue_create(other, ACCEL_QUEUE_COMPUTE, &oq));
    REQUIRE_OK(recover_gated(oq, s, &calls, after));
    REQUIRE_OK(accel_device_recover(dev));
    CHECK_RESULT(accel_signal_wait(after, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_EQ_U64(accel_signal_value(after), lost_value());
    CHECK_EQ_INT(atomic_load(&calls), 0);
    /* the other device's queue is live: it refuses the stale signal, then works */
    accel_queue_signal(oq, mine, 1);
    CHECK_RESULT(accel_queue_submit(oq), ACCEL_ERROR_DEVICE_LOST);
    CHECK_OK(accel_queue_finish(oq, ACCEL_WAIT_FOREVER));
    accel_queue_destroy(oq);
    accel_signal_destroy(after);
    accel_device_destroy(dev);
    accel_device_destroy(other);
}

/* A copy between a lost device's buffer and another device's, on the other device's queue (DESIGN 7.2
   with §4's sticky loss): it does not run, and says DEVICE_LOST, whichever way the copy goes (a mapped
   buffer, the backend's io, another Vulkan device's import or its staged path), plain or in a list
   recorded before the loss: the submit returns it, or the batch's signal fails with it. Before, a CPU
   queue's copy between two mapped buffers (lavapipe maps DEVICE memory) and a Vulkan device's copy or
   list replay over its import of the lost device's memory ran. The other device: a CPU device, and
   (Vulkan) a second Vulkan device. Not on CUDA: a lost context stays lost for the rest of the process
   on NVIDIA's drivers (recover_of_a_lost_device runs last), and its DEVICE memory is never mapped
   (test_devices cuda_copy_with_a_lost_vulkan_devices_buffer has CUDA's own copies). */
typedef struct lost_side {
    accel_device* o;
    const char* what;
    accel_queue* q;
    accel_buffer* ob;
    accel_commands* list;   /* recorded before the loss: ob's first 64 bytes from the lost buffer */
} lost_side;
static bool lost_side_make(lost_side* x, accel_buffer* lb) {
    unsigned char want[64];
    memset(want, 0x5a, sizeof want);
    if (!CHECK_OK(accel_queue_create(x->o, ACCEL_QUEUE_COMPUTE, &x->q)) ||
        !CHECK_OK(test_buffer_create(x->o, 4096, ACCEL_MEMORY_DEVICE, &x->ob)) ||
        !CHECK_OK(accel_buffer_write(x->ob, 0, want, sizeof want)) ||
        !CHECK_OK(accel_queue_record_begin(x->q)))
        return false;
    accel_queue_copy(x->q, x->ob, 0, lb, 0, 64);
    return CHECK_OK(accel_queue_record_end(x->q, &x->list));
}
static void lost_side_free(lost_side* x) {
    accel_queue_destroy(x->q);
    accel_commands_destroy(x->list);
    accel_buffer_destroy(x->ob);
}
/* The submit's result, or the signal's failure: DEVICE_LOST; ob untouched. */
static void lost_side_expect(lost_side* x, accel_signal* s, const char* how) {
    unsigned char want[64], got[64];
    memset(want, 0x5a, sizeof want);
    if (!test_submit_lost(x->q, s)) fprintf(stderr, "    %s, %s\n", x->what, how);
    if (CHECK_OK(accel_buffer_read(x->ob, 0, got, sizeof got)) && !CHECK(memcmp(got, want, sizeof got) == 0))
        fprintf(stderr, "    %s, %s: the bytes moved\n", x->what, how);
}
static void lost_side_run(lost_side* x, accel_buffer* lb) {
    static const char* how[3] = { "a copy out of the lost device's buffer", "a copy into it",
                                  "a list recorded before the loss, replayed" };
    accel_signal* s[4] = { NULL, NULL, NULL, NULL };
    for (int i = 0; i < 4; i++)
        if (!CHECK_OK(accel_signal_create(x->o, 0, &s[i]))) goto out;
    for (int k = 0; k < 3; k++) {
        if (k == 0) accel_queue_copy(x->q, x->ob, 0, lb, 0, 64);
        else if (k == 1) accel_queue_copy(x->q, lb, 0, x->ob, 0, 64);
        else accel_queue_replay(x->q, x->list, NULL, 0);
        accel_queue_signal(x->q, s[k], 1);
        lost_side_expect(x, s[k], how[k]);
    }
    accel_queue_fill(x->q, x->ob, 0, 64, 7u);   /* the queue goes on */
    accel_queue_signal(x->q, s[3], 1);
    CHECK_OK(accel_queue_submit(x->q));
    CHECK_OK(accel_signal_wait(s[3], 1, 10000000000ull));
out:
    for (int i = 0; i < 4; i++) accel_signal_destroy(s[i]);
}
TEST(peer_copies_with_a_lost_devices_buffer) {
    accel_device *dev = NULL, *cpu = NULL, *twin = NULL;
    accel_buffer* lb = NULL;
    lost_side side[2];
    uint32_t n = 0;
#if defined(ACCEL_TEST_HAVE_VULKAN) && defined(__linux__)   /* the loss hook: recover_arm_loss */
    if (test_g.backend != accel_vulkan_backend())
#endif
        SKIP("Vulkan only: the CPU backend is never lost; on CUDA a lost context stays lost for the process");
    memset(side, 0, sizeof side);
    recover_arm_loss(1);
    dev = recover_device(NULL);
    recover_arm_loss(0);
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    /* lb after the twin: its memory is exportable, and the twin's list copies over an import (native) */
    if (CHECK_OK(recover_cpu_device(&cpu)) && CHECK_OK(test_device_create(&twin)) &&
        CHECK_OK(test_buffer_create(dev, 4096, ACCEL_MEMORY_DEVICE, &lb))) {
        side[0].o = cpu;
        side[0].what = "a CPU device's queue";
        side[1].o = twin;
        side[1].what = "a second Vulkan device's queue";
        for (n = 0; n < 2 && lost_side_make(&side[n], lb); n++) {}
        if (n == 2 && recover_lose(dev))
            for (uint32_t i = 0; i < 2 && !TEST_FAILED_SO_FAR(); i++) lost_side_run(&side[i], lb);
        else
            CHECK(!"the sides were made and the device lost");
    }
    for (uint32_t i = 0; i < 2; i++) lost_side_free(&side[i]);
    accel_buffer_destroy(lb);
    accel_device_destroy(twin);
    accel_device_destroy(cpu);
    accel_device_destroy(dev);
}

/* DESIGN 6.2 ("A patch may use any buffer that an exec or copy recorded at that moment could use"): a
   list that copies another device's buffers replays with patches in their place after that device was
   recovered (its buffers stale, the list not). Without the patches the replay says DEVICE_LOST; with
   them it runs, both copies' bytes right. Pairs (list's device <- recovered one): the device under test
   <- a CPU device; a CPU device <- the device under test; on Vulkan also a second Vulkan device <- the
   device under test, whose list copies over an import of its memory (the native form). Before, the
   generic form recorded the list's buffers before it patched them (a recording error), and the native
   form's check looked at the list's buffers even where a patch replaced them. */
static void stale_patch_case(accel_device* o, accel_device* r, const char* what) {
    accel_queue* q = NULL;
    accel_buffer *ob = NULL, *x = NULL, *y = NULL;
    accel_commands* list = NULL;
    accel_signal *lost = NULL, *done = NULL;
    unsigned char pat[64], got[64];
    for (int i = 0; i < 64; i++) pat[i] = (unsigned char)(i * 3 + 1);
    if (!CHECK_OK(accel_queue_create(o, ACCEL_QUEUE_COMPUTE, &q)) ||
        !CHECK_OK(test_buffer_create(o, 4096, ACCEL_MEMORY_DEVICE, &ob)) ||
        !CHECK_OK(test_buffer_create(r, 4096, ACCEL_MEMORY_DEVICE, &x)) ||
        !CHECK_OK(accel_signal_create(o, 0, &lost)) || !CHECK_OK(accel_signal_create(o, 0, &done)) ||
        !CHECK_OK(accel_queue_record_begin(q)))
        goto out;
    accel_queue_copy(q, ob, 0, x, 0, 64);    /* command 0: into ob out of x */
    accel_queue_copy(q, x, 64, ob, 0, 64);   /* command 1: out of ob into x */
    if (!CHECK_OK(accel_queue_record_end(q, &list)) || !CHECK_OK(accel_device_recover(r)) ||
        !CHECK_OK(test_buffer_create(r, 4096, ACCEL_MEMORY_DEVICE, &y)) ||
        !CHECK_OK(accel_buffer_write(y, 0, pat, sizeof pat)))
        goto out;
    accel_queue_replay(q, list, NULL, 0);
    accel_queue_signal(q, lost, 1);
    if (!test_submit_lost(q, lost)) fprintf(stderr, "    %s: the replay without patches\n", what);
    {
        accel_patch p[2] = { { 0, 1, y, 0 }, { 1, 0, y, 0 } };   /* x's place in both copies */
        accel_queue_replay(q, list, p, 2);
        accel_queue_signal(q, done, 1);
    }
    if (!CHECK_OK(accel_queue_submit(q)) || !CHECK_OK(accel_signal_wait(done, 1, 10000000000ull))) {
        fprintf(stderr, "    %s: the replay with x's place patched\n", what);
        goto out;
    }
    if (CHECK_OK(accel_buffer_read(ob, 0, got, sizeof got)) && !CHECK(memcmp(got, pat, sizeof got) == 0))
        fprintf(stderr, "    %s: command 0 did not copy the patch's bytes\n", what);
    if (CHECK_OK(accel_buffer_read(y, 64, got, sizeof got)) && !CHECK(memcmp(got, pat, sizeof got) == 0))
        fprintf(stderr, "    %s: command 1 did not copy into the patch\n", what);
out:
    if (q) CHECK_OK(accel_queue_finish(q, 10000000000ull));
    accel_commands_destroy(list);
    accel_signal_destroy(lost);
    accel_signal_destroy(done);
    accel_buffer_destroy(y);
    accel_buffer_destroy(x);
    accel_buffer_destroy(ob);
    accel_queue_destroy(q);
}
/* The same on the CPU backend for an exec and a fill, which may bind another CPU device's buffer: a CPU
   list (its native form) whose exec and fill write into x of a CPU device recovered since. Before, the
   native form ran both over the stale x (only its copies were checked). And a list that runs that
   device's program (pr) over its own buffer: the replay says DEVICE_LOST too (a patch cannot replace a
   program; before, it ran the stale program). */
static void stale_exec_write(const accel_dispatch* d) { ((uint32_t*)d->buffers[0])[1] = d->constants[0]; }
static void stale_exec_case(accel_device* o, accel_device* r) {
    accel_queue* q = NULL;
    accel_program *p = NULL, *pr = NULL;
    accel_buffer *x = NULL, *y = NULL, *ob = NULL;
    accel_commands *list = NULL, *runs_pr = NULL;
    accel_signal *lost = NULL, *lost2 = NULL, *done = NULL;
    accel_program_desc pd;
    uint32_t seven = 7, got[2] = { 0, 0 };
    memset(&pd, 0, sizeof pd);
    pd.name = "stale_exec_write";
    pd.cpu = stale_exec_write;
    pd.buffer_count = 1;
    pd.constant_count = 1;
    if (!CHECK_OK(accel_queue_create(o, ACCEL_QUEUE_COMPUTE, &q)) ||
        !CHECK_OK(accel_program_create(o, &pd, &p)) || !CHECK_OK(accel_program_create(r, &pd, &pr)) ||
        !CHECK_OK(test_buffer_create(r, 64, ACCEL_MEMORY_DEVICE, &x)) ||
        !CHECK_OK(test_buffer_create(o, 64, ACCEL_MEMORY_DEVICE, &ob)) ||
        !CHECK_OK(accel_signal_create(o, 0, &lost)) || !CHECK_OK(accel_signal_create(o, 0, &done)) ||
        !CHECK_OK(accel_signal_create(o, 0, &lost2)) || !CHECK_OK(accel_queue_record_begin(q)))
        goto out;
    accel_queue_exec(q, pr, &ob, 1, &seven, 1, accel_exec_1d(1, 1));
    if (!CHECK_OK(accel_queue_record_end(q, &runs_pr)) || !CHECK_OK(accel_queue_record_begin(q)))
        goto out;
    accel_queue_fill(q, x, 0, 4, 0x01020304u);                          /* command 0 */
    accel_queue_exec(q, p, &x, 1, &seven, 1, accel_exec_1d(1, 1));    /* command 1 */
    if (!CHECK_OK(accel_queue_record_end(q, &list)) || !CHECK_OK(accel_device_recover(r)) ||
        !CHECK_OK(test_buffer_create(r, 64, ACCEL_MEMORY_DEVICE, &y)))
        goto out;
    accel_queue_replay(q, list, NULL, 0);
    accel_queue_signal(q, lost, 1);
    if (!test_submit_lost(q, lost))
        fprintf(stderr, "    a CPU list's exec and fill: the replay without patches\n");
    accel_queue_replay(q, runs_pr, NULL, 0);
    accel_queue_signal(q, lost2, 1);
    if (!test_submit_lost(q, lost2))
        fprintf(stderr, "    a CPU list that runs the recovered device's program\n");
    {
        accel_patch pt[2] = { { 0, 0, y, 0 }, { 1, 0, y, 0 } };   /* x's place in both */
        accel_queue_replay(q, list, pt, 2);
        accel_queue_signal(q, done, 1);
    }
    if (CHECK_OK(accel_queue_submit(q)) && CHECK_OK(accel_signal_wait(done, 1, 10000000000ull)) &&
        CHECK_OK(accel_buffer_read(y, 0, got, sizeof got))) {
        CHECK_EQ_U64(got[0], 0x01020304u);
        CHECK_EQ_U64(got[1], 7);
    }
out:
    if (q) CHECK_OK(accel_queue_finish(q, 10000000000ull));
    accel_commands_destroy(list);
    accel_commands_destroy(runs_pr);
    accel_signal_destroy(lost);
    accel_signal_destroy(lost2);
    accel_signal_destroy(done);
    accel_buffer_destroy(y);
    accel_buffer_destroy(x);
    accel_buffer_destroy(ob);
    accel_program_destroy(p);
    accel_program_destroy(pr);
    accel_queue_destroy(q);
}
TEST(patch_replaces_a_stale_peer_buffer) {
    accel_device *dev = recover_device(NULL), *cpu = NULL, *cpu2 = NULL, *twin = NULL;
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    if (CHECK_OK(recover_cpu_device(&cpu))) {
        stale_patch_case(dev, cpu, "the device under test's list <- a CPU device");
        stale_patch_case(cpu, dev, "a CPU device's list <- the device under test");
        if (CHECK_OK(recover_cpu_device(&cpu2))) stale_exec_case(cpu, cpu2);
    }
#if defined(ACCEL_TEST_HAVE_VULKAN)
    if (test_g.backend == accel_vulkan_backend() && CHECK_OK(test_device_create(&twin)))
        stale_patch_case(twin, dev, "a second Vulkan device's list <- the device under test");
#endif
    accel_device_destroy(twin);
    accel_device_destroy(cpu2);
    accel_device_destroy(cpu);
    accel_device_destroy(dev);
}

/* ==== 100 recovers ==== */
/* Each round builds a set of objects, runs saxpy, recovers with work pending and the old objects alive,
   then destroys them: host memory (the counting allocator) must not grow from round 2 on. */
TEST(hundred_recovers_without_growth) {
    test_alloc_state st;
    accel_device* dev;
    long after_first = 0;
    long long live_first = -1;
    test_alloc_init(&st);
    dev = recover_device(&st);
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    for (int round = 0; round < 100 && !TEST_FAILED_SO_FAR(); round++) {
        accel_queue* q = NULL;
        accel_signal *gate = NULL, *done = NULL;
        accel_buffer* b = NULL;
        accel_buffer_desc bd;
        uint32_t v = 1;
        memset(&bd, 0, sizeof bd);
        bd.size = 256;
        CHECK(recover_saxpy(dev));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(accel_signal_create(dev, 0, &gate));
        REQUIRE_OK(accel_signal_create(dev, 0, &done));
        REQUIRE_OK(accel_buffer_create(dev, &bd, &b));
        accel_queue_wait(q, gate, 1);
        accel_queue_update(q, b, 0, &v, 4);
        accel_queue_signal(q, done, 1);
        REQUIRE_OK(accel_queue_submit(q));
        REQUIRE_OK(accel_device_recover(dev));
        CHECK_RESULT(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEVICE_LOST);
        accel_queue_destroy(q);
        accel_signal_destroy(gate);
        accel_signal_destroy(done);
        accel_buffer_destroy(b);
        if (round == 1) {
            after_first = atomic_load(&st.outstanding);
            live_first = recover_mock_count("mock_cuda_live");
        }
        if (round > 1) {
            CHECK_EQ_INT(atomic_load(&st.outstanding), after_first);
            CHECK_EQ_INT(recover_mock_count("mock_cuda_live"), live_first);
        }
    }
    if (live_first >= 0) CHECK_EQ_INT(recover_mock_count("mock_cuda_stale_uses"), 0);
    CHECK_EQ_U64(recover_generation(dev), 102);
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
}

/* ==== other threads during the recover ==== */
#if TEST_HAVE_THREADS
typedef struct recover_side {
    accel_device* dev;
    accel_signal* s;
    accel_queue* q;
    accel_program* p;
    accel_buffer* b;
    atomic_int stop, result, rounds;
} recover_side;
static void recover_waiter(void* arg) {
    recover_side* t = (recover_side*)arg;
    atomic_store(&t->result, (int)accel_signal_wait(t->s, 1, ACCEL_WAIT_FOREVER));
}
/* Records and submits on a queue of the old generation until a submit says DEVICE_LOST. */
static void recover_recorder(void* arg) {
    recover_side* t = (recover_side*)arg;
    uint32_t k[2] = { 1, 64 };
    accel_buffer* args[1];
    args[0] = t->b;
    for (;;) {
        accel_result r;
        accel_queue_exec(t->q, t->p, args, 1, k, 2, accel_exec_1d(64, 64));
        r = accel_queue_submit(t->q);
        atomic_fetch_add(&t->rounds, 1);
        if (r != ACCEL_OK) { atomic_store(&t->result, (int)r); return; }
    }
}
/* Makes and destroys objects on the device (the new generation's, or refused ones) until told to stop. */
static void recover_caller(void* arg) {
    recover_side* t = (recover_side*)arg;
    accel_buffer_desc bd;
    memset(&bd, 0, sizeof bd);
    bd.size = 64;
    while (!atomic_load(&t->stop)) {
        accel_buffer* b = NULL;
        accel_signal* s = NULL;
        uint32_t v = 7, got = 0;
        if (accel_buffer_create(t->dev, &bd, &b) == ACCEL_OK) {
            accel_result r = accel_buffer_write(b, 0, &v, 4);
            if (r == ACCEL_OK) r = accel_buffer_read(b, 0, &got, 4);
            if (r == ACCEL_OK && got != 7) atomic_store(&t->result, -100);
            if (r != ACCEL_OK && r != ACCEL_ERROR_DEVICE_LOST) atomic_store(&t->result, (int)r);
            accel_buffer_destroy(b);
        }
        if (accel_signal_create(t->dev, 0, &s) == ACCEL_OK) {
            accel_result r = accel_signal_set(s, 1);
            if (r != ACCEL_OK && r != ACCEL_ERROR_DEVICE_LOST) atomic_store(&t->result, (int)r);
            accel_signal_destroy(s);
        }
        atomic_fetch_add(&t->rounds, 1);
    }
}
#endif

/* ==== creates and copies caught across a recover ==== */
#if TEST_HAVE_THREADS
#  if defined(__cplusplus)
#    define RECOVER_TLS thread_local
#  else
#    define RECOVER_TLS _Thread_local
#  endif
/* The allocator of recover_catch_device: the next allocation of a thread that armed it waits until the
   test lets it go (a create caught inside it while another thread recovers the device). */
static RECOVER_TLS int recover_arm;
static atomic_int recover_held, recover_go;
static accel_signal* recover_nap;   /* a CPU signal nobody sets: 1 ms sleeps */
static void* recover_hold_alloc(size_t size, size_t align, void* user) {
    if (recover_arm) {
        recover_arm = 0;
        atomic_store(&recover_held, 1);
        while (!atomic_load(&recover_go)) accel_signal_wait(recover_nap, 1, 1000000);
    }
    return test_alloc_fn(size, align, user);
}
typedef struct recover_catch {
    test_alloc_state st;
    accel_device *dev, *napdev;
    accel_buffer *root, *view;
    accel_result r;
} recover_catch;
/* A device of the backend under test on the holding allocator, recovered once (false: it cannot be). */
static bool recover_catch_device(recover_catch* c) {
    accel_device_desc d;
    accel_result r;
    memset(c, 0, sizeof *c);
    test_alloc_init(&c->st);
    atomic_store(&recover_held, 0);
    atomic_store(&recover_go, 0);
    memset(&d, 0, sizeof d);
    d.label = "recover";
    d.allocator = test_allocator(&c->st);
    d.allocator.alloc_fn = recover_hold_alloc;
    if (!CHECK_OK(test_device_create_desc(d, &c->dev))) return false;
    if ((r = accel_device_recover(c->dev)) != ACCEL_OK) {
        CHECK_RESULT(r, ACCEL_ERROR_UNSUPPORTED);
        accel_device_destroy(c->dev);
        return false;
    }
    return CHECK_OK(recover_cpu_device(&c->napdev)) && CHECK_OK(accel_signal_create(c->napdev, 0, &recover_nap));
}
static void recover_catch_end(recover_catch* c) {
    accel_device_destroy(c->dev);
    CHECK_EQ_INT((int)atomic_load(&c->st.outstanding), 0);   /* nothing of the caught create left */
    accel_signal_destroy(recover_nap);
    accel_device_destroy(c->napdev);
}
static void recover_nap_until(atomic_int* flag) {
    while (!atomic_load(flag)) accel_signal_wait(recover_nap, 1, 1000000);
}
static void recover_view_maker(void* arg) {
    recover_catch* c = (recover_catch*)arg;
    recover_arm = 1;
    c->r = accel_buffer_view_create(c->root, 0, 64, &c->view);
}
static void recover_signal_maker(void* arg) {
    recover_catch* c = (recover_catch*)arg;
    accel_signal* s = NULL;
    recover_arm = 1;
    c->r = accel_signal_create(c->dev, 0, &s);
    accel_signal_destroy(s);
}
static void recover_list_maker(void* arg) {   /* an empty list: record_end takes a batch, held */
    recover_catch* c = (recover_catch*)arg;
    accel_queue* q = NULL;
    accel_commands* list = NULL;
    c->r = accel_queue_create(c->dev, ACCEL_QUEUE_COMPUTE, &q);
    if (c->r == ACCEL_OK) c->r = accel_queue_record_begin(q);
    recover_arm = 1;
    if (c->r == ACCEL_OK) c->r = accel_queue_record_end(q, &list);
    else atomic_store(&recover_held, 1);
    accel_commands_destroy(list);
    accel_queue_destroy(q);
}
static void recover_recoverer(void* arg) {
    recover_catch* c = (recover_catch*)arg;
    c->r = accel_device_recover(c->dev);
}
/* fn(c) on a thread, held in its allocation while this thread recovers the device; then let go. */
static void recover_across(recover_catch* c, void (*fn)(void*)) {
    test_thread t;
    if (!CHECK(test_thread_start(&t, fn, c))) return;
    recover_nap_until(&recover_held);
    CHECK_OK(accel_device_recover(c->dev));
    atomic_store(&recover_go, 1);
    test_thread_join(&t);
}
#endif
/* A view create that passed its entry check before a recover and makes its view after it: the view of a
   stale root is no view of the new generation (it was: map gave the old memory, freed on CUDA; its
   commands ran on a destroyed VkBuffer on lavapipe). */
TEST(a_view_made_across_a_recover) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    recover_catch c;
    if (!recover_catch_device(&c)) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(test_buffer_create(c.dev, 256, ACCEL_MEMORY_HOST, &c.root));
    recover_across(&c, recover_view_maker);   /* held inside the view's allocation */
    CHECK_RESULT(c.r, ACCEL_ERROR_DEVICE_LOST);
    CHECK(c.view == NULL);
    if (c.view) {
        CHECK(accel_buffer_map(c.view) == NULL);
        accel_buffer_destroy(c.view);
    }
    accel_buffer_destroy(c.root);
    recover_catch_end(&c);
#endif
}
/* A list ended across a recover (record_end held in its batch's allocation while the device recovers):
   DEVICE_LOST, no list of the new generation over the stale queue's commands. */
TEST(a_list_ended_across_a_recover) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    recover_catch c;
    if (!recover_catch_device(&c)) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    recover_across(&c, recover_list_maker);
    CHECK_RESULT(c.r, ACCEL_ERROR_DEVICE_LOST);
    recover_catch_end(&c);
#endif
}
/* CPU: a copy that runs after a recover closed creates (it waits for a create under way) but before it
   moved the generation is refused: it waits for the generation to move, so the signals after it fail as
   the recover's work (a wait returns DEVICE_LOST); it failed them at once, while they were current, and
   the wait returned SIGNAL_FAILED. */
TEST(a_copy_refused_by_a_recover_under_way) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    recover_catch c, m;
    test_thread tc, tr;
    accel_buffer *a, *b;
    accel_queue* q;
    accel_signal* s;
    if (!test_backend_is_cpu()) SKIP("the CPU executor's copies (a GPU queue's copy is the device's)");
    if (!recover_catch_device(&c)) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(test_buffer_create(c.dev, 256, ACCEL_MEMORY_HOST, &a));
    REQUIRE_OK(test_buffer_create(c.dev, 256, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &s));
    memset(&m, 0, sizeof m);
    m.dev = c.dev;
    REQUIRE(test_thread_start(&tc, recover_signal_maker, &m));   /* held inside its create */
    recover_nap_until(&recover_held);
    REQUIRE(test_thread_start(&tr, recover_recoverer, &c));      /* closes creates, waits for it */
    for (;;) {   /* until the recover closed creates: a create on this thread is refused */
        accel_signal* probe = NULL;
        if (accel_signal_create(c.dev, 0, &probe) != ACCEL_OK) break;
        accel_signal_destroy(probe);
        accel_signal_wait(recover_nap, 1, 1000000);
    }
    accel_queue_copy(q, b, 0, a, 0, 64);
    accel_queue_signal(q, s, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_RESULT(accel_signal_wait(s, 1, 50000000), ACCEL_TIMEOUT);   /* the copy waits for the recover */
    atomic_store(&recover_go, 1);
    test_thread_join(&tc);
    test_thread_join(&tr);
    CHECK_OK(c.r);
    CHECK_RESULT(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEVICE_LOST);
    accel_queue_destroy(q);
    accel_signal_destroy(s);
    accel_buffer_destroy(a);
    accel_buffer_destroy(b);
    recover_catch_end(&c);
#endif
}

TEST(waiters_recorders_and_callers_during_the_recover) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    enum { WAITERS = 3 };
    accel_device* dev = recover_device(NULL);
    recover_side w[WAITERS], rec, call;
    test_thread tw[WAITERS], tr, tc;
    accel_signal *s = NULL, *nap = NULL;   /* nap: a CPU signal nobody sets, to sleep 1 ms on */
    accel_device* napdev = NULL;
    accel_buffer_desc bd;
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(recover_cpu_device(&napdev));
    REQUIRE_OK(accel_signal_create(napdev, 0, &nap));
    memset(&bd, 0, sizeof bd);
    bd.size = 256;
    memset(&rec, 0, sizeof rec);
    memset(&call, 0, sizeof call);
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    for (int i = 0; i < WAITERS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].s = s;
        atomic_store(&w[i].result, 1000);
        REQUIRE(test_thread_start(&tw[i], recover_waiter, &w[i]));
    }
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &rec.q));
    REQUIRE_OK(test_program_create(dev, TK_FILL_INDEX, &rec.p));
    REQUIRE_OK(accel_buffer_create(dev, &bd, &rec.b));
    atomic_store(&rec.result, 1000);
    call.dev = dev;
    REQUIRE(test_thread_start(&tr, recover_recorder, &rec));
    REQUIRE(test_thread_start(&tc, recover_caller, &call));
    while (atomic_load(&rec.rounds) < 20 || atomic_load(&call.rounds) < 5) accel_signal_wait(nap, 1, 1000000);
    REQUIRE_OK(accel_device_recover(dev));
    for (int i = 0; i < WAITERS; i++) {
        test_thread_join(&tw[i]);
        CHECK_RESULT((accel_result)atomic_load(&w[i].result), ACCEL_ERROR_DEVICE_LOST);
    }
    test_thread_join(&tr);
    CHECK_RESULT((accel_result)atomic_load(&rec.result), ACCEL_ERROR_DEVICE_LOST);
    {   /* the caller goes on in the new generation */
        int seen = atomic_load(&call.rounds);
        while (atomic_load(&call.rounds) < seen + 5) accel_signal_wait(nap, 1, 1000000);
    }
    atomic_store(&call.stop, 1);
    test_thread_join(&tc);
    CHECK_EQ_INT(atomic_load(&call.result), 0);
    CHECK(recover_saxpy(dev));
    accel_queue_destroy(rec.q);
    accel_program_destroy(rec.p);
    accel_buffer_destroy(rec.b);
    accel_signal_destroy(s);
    accel_device_destroy(dev);
    accel_device_destroy(napdev);
#endif
}

#if TEST_HAVE_THREADS
static void recover_twice(void* arg) {
    recover_side* t = (recover_side*)arg;
    for (int i = 0; i < 3; i++) if (accel_device_recover(t->dev) != ACCEL_OK) atomic_store(&t->result, -1);
}
/* Two threads recover a and b (maybe the same device) three times each, at once; each recover says OK. */
static void recover_pair(accel_device* a, accel_device* b) {
    recover_side x, y;
    test_thread tx, ty;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    x.dev = a;
    y.dev = b;
    if (!CHECK(test_thread_start(&tx, recover_twice, &x))) return;
    if (CHECK(test_thread_start(&ty, recover_twice, &y))) test_thread_join(&ty);
    test_thread_join(&tx);
    CHECK_EQ_INT(atomic_load(&x.result), 0);
    CHECK_EQ_INT(atomic_load(&y.result), 0);
}
#endif
/* Recovers from two threads at once: one at a time, each adds 1. */
TEST(concurrent_recovers) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    accel_device* dev = recover_device(NULL);
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    recover_pair(dev, dev);
    CHECK_EQ_U64(recover_generation(dev), 8);
    CHECK(recover_saxpy(dev));
    accel_device_destroy(dev);
#endif
}

#if TEST_HAVE_THREADS && defined(ACCEL_TEST_HAVE_CUDA)
typedef struct grouped_waiter { accel_signal* s; accel_result r; } grouped_waiter;
static void grouped_wait(void* arg) {
    grouped_waiter* w = (grouped_waiter*)arg;
    w->r = accel_signal_wait(w->s, 1, 10000000000ull);
}
#endif
/* accel_cuda.h ("Recovery"): a recover of one accel device recovers every one on the same CUDA device,
   and each one's signals not reached fail with ACCEL_ERROR_DEVICE_LOST (accel.h: threads waiting on
   them return DEVICE_LOST). A queue of b waits for a's signal h, then signals s; a thread waits for s;
   a is recovered. Before, a's signals failed before b was made stale, and h's failure could reach s
   through b's queue first: the waiter returned SIGNAL_FAILED now and then (20 rounds, each with fresh
   devices: it showed in a process's first recovers, most in the event-ring mode). CUDA only:
   elsewhere b is a device of its own, which a's recover leaves current (SIGNAL_FAILED is right). */
TEST(waiter_on_a_recovered_sibling_sees_device_lost) {
#if !TEST_HAVE_THREADS || !defined(ACCEL_TEST_HAVE_CUDA)
    SKIP("CUDA with threads only");
#else
    accel_device_desc d;
    if (test_g.backend != accel_cuda_backend()) SKIP("CUDA only: elsewhere b is not recovered with a");
    memset(&d, 0, sizeof d);
    for (int round = 0; round < 20 && !TEST_FAILED_SO_FAR(); round++) {   /* fresh devices: a first recover */
        accel_device *a = NULL, *b = NULL;
        accel_queue* q = NULL;
        accel_signal* h = NULL;
        grouped_waiter w = { NULL, ACCEL_OK };
        test_thread t;
        d.label = "a";
        if (!CHECK_OK(test_device_create_desc(d, &a))) break;
        d.label = "b, on a's CUDA device";
        if (CHECK_OK(test_device_create_desc(d, &b)) &&
            CHECK_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &q)) && CHECK_OK(accel_signal_create(a, 0, &h)) &&
            CHECK_OK(accel_signal_create(b, 0, &w.s))) {
            accel_queue_wait(q, h, 1);
            accel_queue_signal(q, w.s, 1);
            if (CHECK_OK(accel_queue_submit(q)) && CHECK(test_thread_start(&t, grouped_wait, &w))) {
                CHECK_OK(accel_device_recover(a));
                test_thread_join(&t);
                if (!CHECK_RESULT(w.r, ACCEL_ERROR_DEVICE_LOST))
                    fprintf(stderr, "    round %d: the waiter on b's signal\n", round);
                CHECK_EQ_U64(accel_signal_value(w.s), lost_value());
            }
        }
        accel_queue_destroy(q);
        accel_signal_destroy(h);
        accel_signal_destroy(w.s);
        accel_device_destroy(b);
        accel_device_destroy(a);
    }
#endif
}

/* Two accel devices on one native device (device 0 twice). On CUDA they share the CUDA device's primary
   context, which a recover resets: a recover of one recovers the other too (accel_cuda.h, "Recovery"):
   its generation moves on, its objects are stale (calls refused with DEVICE_LOST, no crash: their
   native memory went with the context), its pending batch fails, and it works on with new objects.
   Elsewhere the other device is untouched. Then recovers of both from two threads at once. */
TEST(two_devices_on_one_native_device) {
    accel_device *a = recover_device(NULL), *b = NULL;
    accel_device_desc d;
    accel_queue *qb = NULL, *qb2 = NULL;
    accel_signal *gate = NULL, *done = NULL, *of_a = NULL;
    accel_buffer* buf = NULL;
    uint32_t word = 0;
    uint64_t t0;
    bool shared;
    if (!a) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
#if defined(ACCEL_TEST_HAVE_CUDA)
    shared = test_g.backend == accel_cuda_backend();
#else
    shared = false;
#endif
    memset(&d, 0, sizeof d);
    d.label = "second on device 0";
    REQUIRE_OK(test_device_create_desc(d, &b));
    REQUIRE_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &qb));
    REQUIRE_OK(accel_signal_create(b, 0, &gate));
    REQUIRE_OK(accel_signal_create(b, 0, &done));
    REQUIRE_OK(test_buffer_create(b, 4096, ACCEL_MEMORY_HOST, &buf));
    accel_queue_fill(qb, buf, 0, 4096, 7);
    accel_queue_wait(qb, gate, 1);
    accel_queue_fill(qb, buf, 0, 4096, 9);
    accel_queue_signal(qb, done, 1);
    CHECK_OK(accel_queue_submit(qb));
    /* a queue of b waits for a signal of a (on CUDA on the GPU, on a's word): the recover raises every
       device's words before it waits for their streams (one at a time, b's stream held it 2 s) */
    REQUIRE_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &qb2));
    REQUIRE_OK(accel_signal_create(a, 0, &of_a));
    accel_queue_wait(qb2, of_a, 1);
    accel_queue_fill(qb2, buf, 0, 4, 5);
    CHECK_OK(accel_queue_submit(qb2));
    CHECK_RESULT(accel_signal_wait(done, 1, 0), ACCEL_TIMEOUT);
    t0 = test_now_ns();
    CHECK_OK(accel_device_recover(a));
    if (!CHECK(test_now_ns() - t0 < 1000000000ull))
        fprintf(stderr, "    the recover took %.2f s\n", (double)(test_now_ns() - t0) / 1e9);
    CHECK_EQ_U64(recover_generation(a), 3);
    if (shared) {
        CHECK_EQ_U64(recover_generation(b), 2);
        CHECK_RESULT(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEVICE_LOST);   /* stale */
        CHECK_EQ_U64(accel_signal_value(done), lost_value());
        CHECK_RESULT(accel_signal_set(gate, 1), ACCEL_ERROR_DEVICE_LOST);
        CHECK_RESULT(accel_buffer_read(buf, 0, &word, 4), ACCEL_ERROR_DEVICE_LOST);
        accel_queue_fill(qb, buf, 0, 4, 1);
        CHECK_RESULT(accel_queue_submit(qb), ACCEL_ERROR_DEVICE_LOST);
    } else {
        CHECK_EQ_U64(recover_generation(b), 1);
        CHECK_OK(accel_signal_set(gate, 1));
        CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
        CHECK_OK(accel_buffer_read(buf, 4092, &word, 4));
        CHECK_EQ_U64(word, 9);
    }
    accel_queue_destroy(qb);
    accel_queue_destroy(qb2);
    accel_signal_destroy(gate);
    accel_signal_destroy(done);
    accel_signal_destroy(of_a);
    accel_buffer_destroy(buf);
    CHECK(recover_saxpy(a));
    CHECK(recover_saxpy(b));
#if TEST_HAVE_THREADS
    {
        uint64_t ga = recover_generation(a), gb = recover_generation(b);
        recover_pair(a, b);
        CHECK(recover_generation(a) >= ga + 3);   /* shared: also the other's recovers, some of them */
        CHECK(recover_generation(b) >= gb + 3);
        if (!shared) { CHECK_EQ_U64(recover_generation(a), ga + 3); CHECK_EQ_U64(recover_generation(b), gb + 3); }
        CHECK(recover_saxpy(a));
        CHECK(recover_saxpy(b));
    }
#endif
    accel_device_destroy(b);
    accel_device_destroy(a);
}

/* Two accel devices on one native device: a queue of b waits on the GPU for a host-set signal, and
   buffers of a destroyed meanwhile are held back (on CUDA: accel_cuda.h, "cuda: releases"). Then a
   recover, of a and of b. On CUDA it applies b's stale points before it releases the word the stream
   waits on: they must not retire the wait and run the held releases, which would wait for that stream
   (the recover would hang). The recover returns promptly (the releases go with the old context), and
   both devices work on. */
#if TEST_HAVE_THREADS
typedef struct recover_call { accel_device* dev; accel_signal* returned; accel_result r; } recover_call;
static void recover_and_say(void* p) {
    recover_call* c = (recover_call*)p;
    c->r = accel_device_recover(c->dev);
    accel_signal_set(c->returned, 1);
}
static void held_release_case(accel_device* a, accel_device* b, accel_device* cpu, bool of_b) {
    accel_queue* q = NULL;
    accel_signal *gate = NULL, *done = NULL;
    accel_buffer *x = NULL, *h1 = NULL, *h2 = NULL;
    recover_call call;
    test_thread t;
    uint64_t t0;
    memset(&call, 0, sizeof call);
    if (!CHECK_OK(accel_queue_create(b, ACCEL_QUEUE_COMPUTE, &q)) ||
        !CHECK_OK(accel_signal_create(b, 0, &gate)) || !CHECK_OK(accel_signal_create(b, 0, &done)) ||
        !CHECK_OK(accel_signal_create(cpu, 0, &call.returned)) ||
        !CHECK_OK(test_buffer_create(b, 4096, ACCEL_MEMORY_DEVICE, &x)) ||
        !CHECK_OK(test_buffer_create(a, 4096, ACCEL_MEMORY_HOST, &h1)) ||
        !CHECK_OK(test_buffer_create(a, 4096, ACCEL_MEMORY_DEVICE, &h2)))
        goto out;
    accel_queue_wait(q, gate, 1);   /* on CUDA a GPU wait on gate's word */
    accel_queue_fill(q, x, 0, 4096, 7);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    CHECK_RESULT(accel_signal_wait(done, 1, 200000000ull), ACCEL_TIMEOUT);   /* the wait reaches the GPU */
    accel_buffer_destroy(h1);   /* held back */
    accel_buffer_destroy(h2);
    h1 = h2 = NULL;
    call.dev = of_b ? b : a;
    t0 = test_now_ns();
    if (!CHECK(test_thread_start(&t, recover_and_say, &call))) goto out;
    if (accel_signal_wait(call.returned, 1, 10000000000ull) != ACCEL_OK) {
        fprintf(stderr, "    the recover of %s hangs (a held release waits for a stale stream)\n",
                of_b ? "b" : "a");
        CHECK(!"the recover returns");
        fflush(NULL);
        _Exit(1);   /* the recover thread cannot be joined */
    }
    test_thread_join(&t);
    CHECK_OK(call.r);
    if (!CHECK(test_now_ns() - t0 < 5000000000ull))
        fprintf(stderr, "    the recover took %.2f s\n", (double)(test_now_ns() - t0) / 1e9);
    accel_signal_set(gate, 1);   /* stale where the recover took b along: DEVICE_LOST */
    accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER);
    CHECK(recover_saxpy(a));
    CHECK(recover_saxpy(b));
out:
    accel_buffer_destroy(h1);
    accel_buffer_destroy(h2);
    accel_buffer_destroy(x);
    accel_queue_destroy(q);
    accel_signal_destroy(gate);
    accel_signal_destroy(done);
    accel_signal_destroy(call.returned);
}
#endif
TEST(held_release_and_a_gpu_wait_at_the_recover) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    for (int of_b = 0; of_b < 2 && !TEST_FAILED_SO_FAR(); of_b++) {
        accel_device *a = recover_device(NULL), *b = NULL, *cpu = NULL;
        accel_device_desc d;
        if (!a) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
        memset(&d, 0, sizeof d);
        d.label = "second on device 0";
        if (CHECK_OK(test_device_create_desc(d, &b)) && CHECK_OK(recover_cpu_device(&cpu)))
            held_release_case(a, b, cpu, of_b == 1);
        accel_device_destroy(b);
        accel_device_destroy(a);
        accel_device_destroy(cpu);
    }
#endif
}

/* Buffer reads and writes under way when a recover begins: one long read holds the device's transfer
   stream, three short ones queue behind it (past their entry check), then the recover, of that device
   and of another on the same native device (on CUDA it recovers both). Each returns OK (it ran before
   the reset) or DEVICE_LOST, and none touches the old context's memory after the reset (the sanitizer
   configurations; on the mock, no release of a dead handle either). */
#if TEST_HAVE_THREADS
#  if defined(__EMSCRIPTEN__)
enum { RB_BIG = 4u << 20 };     /* a WebAssembly heap of its own: the CPU backend's race is not the CUDA one */
#  else
enum { RB_BIG = 128u << 20 };
#  endif
typedef struct recover_io { accel_buffer *big, *small; void* host; accel_result r[4]; } recover_io;
static recover_io rio;
static void recover_io_big(void* arg) {
    (void)arg;
    rio.r[0] = accel_buffer_read(rio.big, 0, rio.host, RB_BIG);
}
static void recover_io_small(void* arg) {
    int i = (int)(intptr_t)arg;
    uint32_t w[4] = { 1, 2, 3, 4 };
    size_t at = 16u * (size_t)i;   /* bytes of its own: the calls do not race each other */
    rio.r[i] = (i & 1) ? accel_buffer_write(rio.small, at, w, sizeof w) : accel_buffer_read(rio.small, at, w, sizeof w);
}
#endif
TEST(buffer_calls_under_way_at_the_recover) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    accel_device *dev = recover_device(NULL), *other = NULL;
    long long stale = recover_mock_count("mock_cuda_stale_uses");
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(test_device_create(&other));
    memset(&rio, 0, sizeof rio);
    rio.host = malloc(RB_BIG);
    REQUIRE(rio.host != NULL);
    for (int round = 0; round < 2; round++) {   /* the recovered device's buffers, then the other's */
        accel_device* owner = round == 0 ? dev : other;
        accel_signal* nap = NULL;   /* never set: its timed waits sleep */
        test_thread big, small[3];
        REQUIRE_OK(accel_signal_create(dev, 0, &nap));
        REQUIRE_OK(test_buffer_create(owner, RB_BIG, ACCEL_MEMORY_DEVICE, &rio.big));
        REQUIRE_OK(test_buffer_create(owner, 4096, ACCEL_MEMORY_DEVICE, &rio.small));
        REQUIRE(test_thread_start(&big, recover_io_big, NULL));
        CHECK_RESULT(accel_signal_wait(nap, 1, 5000000u), ACCEL_TIMEOUT);   /* the long read is under way */
        for (int i = 0; i < 3; i++)
            REQUIRE(test_thread_start(&small[i], recover_io_small, (void*)(intptr_t)(i + 1)));
        CHECK_RESULT(accel_signal_wait(nap, 1, 2000000u), ACCEL_TIMEOUT);   /* the short ones wait for it */
        CHECK_OK(accel_device_recover(dev));
        test_thread_join(&big);
        for (int i = 0; i < 3; i++) test_thread_join(&small[i]);
        for (int i = 0; i < 4; i++)
            if (!CHECK(rio.r[i] == ACCEL_OK || rio.r[i] == ACCEL_ERROR_DEVICE_LOST))
                fprintf(stderr, "    call %d: %s\n", i, accel_result_string(rio.r[i]));
        accel_buffer_destroy(rio.big);
        accel_buffer_destroy(rio.small);
        accel_signal_destroy(nap);
        if (stale >= 0) CHECK_EQ_INT(recover_mock_count("mock_cuda_stale_uses"), stale);
    }
    CHECK(recover_saxpy(dev));
    CHECK(recover_saxpy(other));
    accel_device_destroy(other);
    accel_device_destroy(dev);
    free(rio.host);
#endif
}

#if TEST_HAVE_THREADS
/* Reads, polls and sets a signal of the current generation (and reads its native handles and a queue's)
   until told to stop; a new signal after each DEVICE_LOST. rounds: the signals lost. */
static void recover_reader(void* arg) {
    recover_side* t = (recover_side*)arg;
    accel_signal* s = NULL;
    accel_queue* q = NULL;
    uint64_t k = 0;
    while (!atomic_load(&t->stop)) {
        accel_result r;
        if (!q && accel_queue_create(t->dev, ACCEL_QUEUE_COMPUTE, &q) != ACCEL_OK) q = NULL;
        if (!s && accel_signal_create(t->dev, 0, &s) != ACCEL_OK) { s = NULL; k = 0; continue; }
#if defined(ACCEL_TEST_HAVE_VULKAN)
        (void)accel_vulkan_signal_semaphore(s);
        (void)accel_vulkan_queue_handle(q, NULL);
#endif
        (void)accel_signal_value(s);
        r = accel_signal_wait(s, k + 2, 0);
        if (r == ACCEL_TIMEOUT) r = accel_signal_set(s, ++k);
        if (r == ACCEL_ERROR_DEVICE_LOST) {
            accel_signal_destroy(s);
            accel_queue_destroy(q);
            s = NULL;
            q = NULL;
            k = 0;
            atomic_fetch_add(&t->rounds, 1);
        } else if (r != ACCEL_OK) {
            atomic_store(&t->result, (int)r);
        }
    }
    accel_signal_destroy(s);
    accel_queue_destroy(q);
}
#endif
/* Threads (more than cores) read, poll and set signals while the device recovers again and again: a read
   that passed its check on a live signal may be preempted until the recover frees its words (CUDA: the
   reset frees the pinned mirrors; asan-cuda saw it as a heap-use-after-free; Vulkan: a queue's VkQueue
   read while the recover took it, a crash). */
TEST(host_reads_race_the_recover) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    enum { READERS = 6 };
    accel_device* dev = recover_device(NULL);
    recover_side t[READERS];
    test_thread th[READERS];
    int lost = 0, started = 0;
    accel_device* napdev = NULL;   /* nap: a CPU signal nobody sets, to sleep 1 ms on */
    accel_signal* nap = NULL;
    uint64_t t0 = test_now_ns();
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(recover_cpu_device(&napdev));
    REQUIRE_OK(accel_signal_create(napdev, 0, &nap));
    for (int i = 0; i < READERS; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].dev = dev;
        if (!CHECK(test_thread_start(&th[i], recover_reader, &t[i]))) break;
        started++;
    }
    while (test_now_ns() - t0 < 1500000000ull) {   /* a millisecond between: the readers make signals */
        CHECK_OK(accel_device_recover(dev));
        CHECK_RESULT(accel_signal_wait(nap, 1, 1000000u), ACCEL_TIMEOUT);
    }
    for (int i = 0; i < started; i++) {
        atomic_store(&t[i].stop, 1);
        test_thread_join(&th[i]);
        CHECK_EQ_INT(atomic_load(&t[i].result), 0);
        lost += atomic_load(&t[i].rounds);
    }
    CHECK(lost > 0);
    CHECK(recover_saxpy(dev));
    accel_device_destroy(dev);
    accel_device_destroy(napdev);
#endif
}

#if TEST_HAVE_THREADS
/* Makes a queue, runs a few batches on it (queue memory, a fill, a copy, an exec, a signal) and destroys
   it, again and again until told to stop: many of its destroys come while a recover is under way.
   result: the first result that is neither OK nor the recover's. */
static void recover_churner(void* arg) {
    recover_side* t = (recover_side*)arg;
    while (!atomic_load(&t->stop)) {
        accel_queue* q = NULL;
        accel_signal* s = NULL;
        accel_buffer* b = NULL;
        accel_program* p = NULL;
        accel_result r = accel_queue_create(t->dev, ACCEL_QUEUE_COMPUTE, &q);
        if (r == ACCEL_OK) r = test_program_create(t->dev, TK_FILL_INDEX, &p);
        if (r == ACCEL_OK) r = accel_signal_create(t->dev, 0, &s);
        if (r == ACCEL_OK) r = test_buffer_create(t->dev, 1024, ACCEL_MEMORY_DEVICE, &b);
        for (uint64_t it = 1; r == ACCEL_OK && it <= 8; it++) {
            uint32_t k[2] = { 1, 64 };
            accel_buffer* m = NULL;
            if ((r = accel_queue_alloc(q, 512, ACCEL_MEMORY_DEVICE, &m)) != ACCEL_OK) break;
            accel_queue_fill(q, m, 0, 512, (uint32_t)it);
            accel_queue_copy(q, b, 4, m, 0, 256);
            accel_queue_free(q, m);
            accel_queue_exec(q, p, &b, 1, k, 2, accel_exec_1d(64, 64));
            accel_queue_signal(q, s, it);
            if ((r = accel_queue_submit(q)) == ACCEL_OK && it % 4 == 0) r = accel_signal_wait(s, it, 5000000000u);
        }
        if (r != ACCEL_OK && r != ACCEL_ERROR_DEVICE_LOST && r != ACCEL_ERROR_SIGNAL_FAILED)
            atomic_store(&t->result, (int)r);
        accel_queue_destroy(q);   /* with its last batches maybe still running */
        accel_signal_destroy(s);
        accel_buffer_destroy(b);
        accel_program_destroy(p);
        atomic_fetch_add(&t->rounds, 1);
    }
}
#endif
/* Queues destroyed, their work still running, while the device recovers: each destroy releases its work
   whether or not the recover took the queue (Vulkan: a destroy between the recover's start and its look
   at the object list released nothing: 70-270 host allocations leaked, and a command pool was destroyed
   with its command buffers pending). Nothing leaks, the objects made after are whole. */
TEST(queues_destroyed_during_recovers) {
#if !TEST_HAVE_THREADS
    SKIP("no threads in this build");
#else
    enum { CHURNERS = 3 };
    test_alloc_state st;
    accel_device *dev, *napdev = NULL;
    accel_signal* nap = NULL;   /* a CPU signal nobody sets, to sleep on */
    recover_side t[CHURNERS];
    test_thread th[CHURNERS];
    int started = 0;
    test_alloc_init(&st);
    dev = recover_device(&st);
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    REQUIRE_OK(recover_cpu_device(&napdev));
    REQUIRE_OK(accel_signal_create(napdev, 0, &nap));
    for (int i = 0; i < CHURNERS; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].dev = dev;
    }
    for (int i = 0; i < CHURNERS && CHECK(test_thread_start(&th[i], recover_churner, &t[i])); i++) started++;
    for (int k = 0; k < 12; k++) {
        CHECK_RESULT(accel_signal_wait(nap, 1, 40000000u), ACCEL_TIMEOUT);
        CHECK_OK(accel_device_recover(dev));
    }
    for (int i = 0; i < started; i++) {
        atomic_store(&t[i].stop, 1);
        test_thread_join(&th[i]);
        CHECK_EQ_INT(atomic_load(&t[i].result), 0);
        CHECK(atomic_load(&t[i].rounds) > 0);
    }
    CHECK_EQ_U64(recover_generation(dev), 14);
    CHECK(recover_saxpy(dev));
    accel_device_destroy(dev);
    accel_device_destroy(napdev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
#endif
}

/* ==== no-threads builds ==== */
/* Without threads a batch parks on its wait; the recover's failure of the signal runs it (inline), and
   it drops its rest. */
TEST(parked_batch_at_the_recover) {
    accel_device* dev = recover_device(NULL);
    accel_signal *gate = NULL, *done = NULL;
    accel_queue* q = NULL;
    atomic_int calls;
    if (!dev) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    atomic_init(&calls, 0);
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(recover_gated(q, gate, &calls, done));
    CHECK_RESULT(accel_queue_finish(q, 0), ACCEL_TIMEOUT);
    REQUIRE_OK(accel_device_recover(dev));
    CHECK_EQ_U64(accel_signal_value(done), lost_value());
    /* the stale queue's finish still tells whether its work is over: it is (dropped) */
    CHECK_RESULT(accel_queue_finish(q, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEVICE_LOST);
    CHECK_EQ_INT(atomic_load(&calls), 0);
    accel_queue_destroy(q);
    accel_signal_destroy(gate);
    accel_signal_destroy(done);
    CHECK(recover_saxpy(dev));
    accel_device_destroy(dev);
}

#if RECOVER_MOCK
/* Two GPUs (the mock's two devices: main sets MOCK_CUDA_DEVICES=2 where it is unset), one lost. As the
   driver keeps a sticky error, a reset and the objects per primary context (per device), the loss of
   device 0 and its recover leave device 1 alone: its objects made before keep their contents and work
   on, a GPU wait of its own pending across both is neither released nor dropped (it runs once the host
   raises its signal), its generation stays 1. A queue of device 1 gated on a signal of device 0 (another
   GPU: gated on the host, accel_cuda.h "What it does NOT do") is released with the failure (DESIGN 6.1
   and 7.2: failure flows across devices; nothing behind a host-gated wait runs) and works on after it.
   Device 0 reports the loss (DEVICE_LOST, its signals failed) and recovers (generation 3, one reset,
   stale signals refused). The mock kept all three process-wide before: device 1 read lost, and the
   reset ended its streams. */
enum { BESIDE_WORDS = 64 };
/* q fills b's BESIDE_WORDS words with v and raises s to at; 1 when the wait says so. */
static int beside_fill(accel_queue* q, accel_buffer* b, uint32_t v, accel_signal* s, uint64_t at) {
    accel_queue_fill(q, b, 0, BESIDE_WORDS * 4, v);
    accel_queue_signal(q, s, at);
    return CHECK_OK(accel_queue_submit(q)) && CHECK_OK(accel_signal_wait(s, at, 10000000000ull));
}
/* Every word of b is v. */
static int beside_holds(accel_buffer* b, uint32_t v, const char* when) {
    uint32_t got[BESIDE_WORDS];
    int bad = -1;
    memset(got, 0, sizeof got);
    if (!CHECK_OK(accel_buffer_read(b, 0, got, sizeof got))) return 0;
    for (int i = 0; i < BESIDE_WORDS && bad < 0; i++)
        if (got[i] != v) bad = i;
    if (bad < 0) return 1;
    CHECK_EQ_U64(got[bad], v);
    fprintf(stderr, "    word %d of device 1's buffer %s\n", bad, when);
    return 0;
}
TEST(a_lost_device_beside_a_healthy_one) {
    accel_device *d0 = NULL, *d1 = NULL;
    accel_device_desc dd;
    accel_device_info info;
    accel_buffer *b1 = NULL, *bg = NULL, *bh = NULL, *more = NULL;
    accel_queue *q1 = NULL, *qg = NULL, *qh = NULL;
    accel_signal *s1 = NULL, *after = NULL, *gate = NULL, *held = NULL, *x0 = NULL, *t = NULL;
    long long stale, resets;
    uint32_t n = 0;
    if (test_g.backend != accel_cuda_backend() || recover_mock_count("mock_cuda_live") < 0)
        SKIP("the CUDA mock driver only (a lost GPU recovers there; on NVIDIA's drivers it stays lost)");
    if (accel_backend_device_count(accel_cuda_backend(), &n) != ACCEL_OK || n < 2)
        SKIP("fewer than two CUDA devices (the mock's MOCK_CUDA_DEVICES, 2 unless set otherwise)");
    if (!(d0 = recover_device(NULL))) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    memset(&dd, 0, sizeof dd);
    dd.backend = accel_cuda_backend();
    dd.device_index = 1;
    dd.label = "beside";
    if (!CHECK_OK(test_device_create_desc(dd, &d1))) { accel_device_destroy(d0); return; }
    stale = recover_mock_count("mock_cuda_stale_uses");
    resets = recover_mock_count("mock_cuda_resets");
    if (!CHECK_OK(test_buffer_create(d1, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &b1)) ||
        !CHECK_OK(test_buffer_create(d1, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &bg)) ||
        !CHECK_OK(test_buffer_create(d1, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &bh)) ||
        !CHECK_OK(accel_queue_create(d1, ACCEL_QUEUE_COMPUTE, &q1)) ||
        !CHECK_OK(accel_queue_create(d1, ACCEL_QUEUE_COMPUTE, &qg)) ||
        !CHECK_OK(accel_queue_create(d1, ACCEL_QUEUE_COMPUTE, &qh)) ||
        !CHECK_OK(accel_signal_create(d1, 0, &s1)) || !CHECK_OK(accel_signal_create(d1, 0, &after)) ||
        !CHECK_OK(accel_signal_create(d1, 0, &gate)) || !CHECK_OK(accel_signal_create(d1, 0, &held)) ||
        !CHECK_OK(accel_signal_create(d0, 0, &x0)))
        goto out;
    /* before the loss: device 1's work, a GPU wait of its own that the host releases at the end (the
       device watches the signal's word; in the event-ring mode a host-gated wait), and a wait on
       device 0's signal (gated on the host) with a fill behind it that must never run */
    if (!beside_fill(q1, b1, 0x11111111u, s1, 1) || !beside_fill(q1, bg, 0x22222222u, s1, 2) ||
        !beside_fill(q1, bh, 0x01010101u, s1, 3))
        goto out;
    accel_queue_wait(qh, gate, 1);
    accel_queue_fill(qh, bh, 0, BESIDE_WORDS * 4, 0x66666666u);
    accel_queue_signal(qh, held, 1);
    CHECK_OK(accel_queue_submit(qh));
    accel_queue_wait(qg, x0, 1);
    accel_queue_fill(qg, bg, 0, BESIDE_WORDS * 4, 0x33333333u);
    accel_queue_signal(qg, after, 1);
    CHECK_OK(accel_queue_submit(qg));

    if (!CHECK(recover_lose(d0))) goto out;   /* the mock's out-of-bounds kernel: a sticky error */
    /* device 0 reports it (accel.h "Device loss"; accel_cuda.h "Errors") */
    CHECK_RESULT(accel_device_info_get(d0, &info), ACCEL_ERROR_DEVICE_LOST);
    CHECK_RESULT(accel_signal_create(d0, 0, &t), ACCEL_ERROR_DEVICE_LOST);
    CHECK(t == NULL);
    CHECK_RESULT(test_buffer_create(d0, 64, ACCEL_MEMORY_DEVICE, &more), ACCEL_ERROR_DEVICE_LOST);
    CHECK(more == NULL);
    CHECK_EQ_U64(accel_signal_value(x0), lost_value());
    CHECK_RESULT(accel_signal_wait(x0, 1, 0), ACCEL_ERROR_SIGNAL_FAILED);
    /* the wait of device 1 on it is released with the failure, and nothing behind it ran */
    CHECK_RESULT(accel_signal_wait(after, 1, 10000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_EQ_U64(accel_signal_value(after), lost_value());
    /* device 1 is not lost: its objects keep their contents and work */
    CHECK_OK(accel_device_info_get(d1, &info));
    CHECK_EQ_U64(info.generation, 1);
    CHECK(beside_holds(b1, 0x11111111u, "after device 0's loss"));
    CHECK(beside_holds(bg, 0x22222222u, "behind the failed wait on device 0's signal"));
    CHECK(beside_holds(bh, 0x01010101u, "behind its own GPU wait, not released yet"));
    CHECK_EQ_U64(accel_signal_value(held), 0);   /* the other GPU's loss released no wait of its own */
    CHECK_RESULT(accel_signal_wait(held, 1, 20000000ull), ACCEL_TIMEOUT);
    CHECK(beside_fill(q1, b1, 0x44444444u, s1, 4));
    CHECK(beside_holds(b1, 0x44444444u, "filled after device 0's loss"));
    CHECK(beside_fill(qg, bg, 0x55555555u, s1, 5));   /* the released queue works on */
    CHECK(beside_holds(bg, 0x55555555u, "filled by the queue released with the failure"));
    CHECK(recover_saxpy(d1));
    CHECK_EQ_U64(accel_signal_value(s1), 5);

    /* device 0 recovers (DESIGN 7.4): one reset, of its own primary context */
    CHECK_OK(accel_device_recover(d0));
    CHECK_EQ_U64(recover_generation(d0), 3);   /* recover_device recovered once */
    CHECK_EQ_INT((int)(recover_mock_count("mock_cuda_resets") - resets), 1);
    CHECK_RESULT(accel_signal_wait(x0, 1, 0), ACCEL_ERROR_DEVICE_LOST);   /* stale */
    CHECK(recover_saxpy(d0));
    /* device 1 went on through it: the same objects, the same pending wait, the same generation */
    CHECK_OK(accel_device_info_get(d1, &info));
    CHECK_EQ_U64(info.generation, 1);
    CHECK_EQ_U64(accel_signal_value(held), 0);
    CHECK(beside_holds(b1, 0x44444444u, "after device 0's recover"));
    CHECK(beside_holds(bh, 0x01010101u, "behind its own GPU wait, after device 0's recover"));
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(held, 1, 10000000000ull));
    CHECK_EQ_U64(accel_signal_value(held), 1);
    CHECK(beside_holds(bh, 0x66666666u, "behind its own GPU wait, released"));
    CHECK(beside_fill(q1, b1, 0x77777777u, s1, 6));
    CHECK(beside_holds(b1, 0x77777777u, "filled after device 0's recover"));
    CHECK_EQ_U64(accel_signal_value(s1), 6);
    CHECK(recover_saxpy(d1));
out:
    if (gate) accel_signal_set(gate, 1);   /* whatever failed above, qh's wait must end */
    accel_queue_destroy(q1);
    accel_queue_destroy(qg);
    accel_queue_destroy(qh);
    accel_signal_destroy(s1);
    accel_signal_destroy(after);
    accel_signal_destroy(gate);
    accel_signal_destroy(held);
    accel_signal_destroy(x0);
    accel_buffer_destroy(b1);
    accel_buffer_destroy(bg);
    accel_buffer_destroy(bh);
    accel_device_destroy(d0);
    accel_device_destroy(d1);
    /* no release of device 1's objects found them gone (a reset of the other device ended none) */
    CHECK_EQ_INT((int)(recover_mock_count("mock_cuda_stale_uses") - stale), 0);
}

/* Two GPUs with peer access: a queue of device 1 copies from or to a buffer of device 0 (a direct peer
   copy, in its own stream) while device 0 recovers, whose primary context's reset frees that buffer's
   memory (accel_cuda.h "Recovery"; core: several devices). Rounds (peer_round):
   - OWN_WAIT: the copy's segment waits for a signal of device 1 (a GPU wait, were it alone): its waits
     go to the host, the copy is built only after them;
   - EARLIER_BATCH / EARLIER_SEGMENT: the wait (on the GPU in the memory-op mode) is in an earlier batch,
     or an earlier segment of the copy's batch: the worker drains the queue before it builds the copy;
   so in these the signal is set after the recover, the copy's side check finds the buffer stale, its
   batch fails with DEVICE_LOST and device 1's buffers keep their words;
   - LONG_WORK: no wait, the copy sits in the stream behind a slow kernel at the recover: the recover
     waits for it (device 0's peer_copies), so it copies device 0's words before the reset;
   - LIST_WAIT, LIST_LONG_WORK, PATCHED_WAIT: the copy replayed from a native list (recorded with it,
     or with a copy on device 1 that patches turn into it), as OWN_WAIT and LONG_WORK;
   - COPIER_RECOVERS: as EARLIER_BATCH, but device 1 recovers while its worker drains the queue;
   - HOST_CALL_RECOVERS: a host call after the copy recovers device 0: the copy completed before the call
     (a host step drains the queue), so the recover does not wait for the call's batch;
   and (after the rounds) a queue and device destroyed with a counted copy pending, and the copying GPU
   recovering while device 0 does (helper 107).
   Before, each copy ran after the reset, on freed memory (ASan: heap-use-after-free in the mock). Then
   device 1 works on. Two accel devices on one CUDA device (one context, recovered together) keep the
   wait on the GPU: the copy is in the stream at submit (the mock's count of copies). */
static unsigned long long peer_mock_copies(void) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    void *lib, *sym;
    unsigned long long (*fn)(int);
    if (!path || !(lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD)) || !(sym = dlsym(lib, "mock_cuda_calls")))
        return 0;
    memcpy(&fn, &sym, sizeof sym);
    return fn(3);   /* MOCK_CALL_COPY: copies and fills enqueued */
}
static bool peer_memops(void) {
    const char* ring = getenv("ACCEL_CUDA_NO_MEMOPS");
    return !(ring && ring[0] && strcmp(ring, "0") != 0);
}
enum { PEER_OWN_WAIT, PEER_EARLIER_BATCH, PEER_EARLIER_SEGMENT, PEER_LONG_WORK, PEER_LIST_WAIT,
       PEER_LIST_LONG_WORK, PEER_PATCHED_WAIT, PEER_COPIER_RECOVERS, PEER_HOST_CALL_RECOVERS, PEER_ROUNDS };
static bool peer_long(int how) { return how == PEER_LONG_WORK || how == PEER_LIST_LONG_WORK; }
typedef struct peer_ctx {
    accel_device *d0, *d1;
    accel_buffer *a0, *own, *out;
    accel_queue* q;
    accel_program* slow;
    accel_signal *gate, *mid, *one, *done;
    accel_commands* list;
} peer_ctx;
/* The copy of round `how`: a0's words into own (to_own) or own's into a0, recorded in place, or replayed
   from a list recorded with it (native on the mock), or from a list recorded with a copy on device 1
   alone (own into out) that patches turn into it. A list is recorded first
   (list true: a queue records one only between batches). */
static void peer_copy(peer_ctx* x, int how, bool to_own, bool list) {
    size_t n = BESIDE_WORDS * 4;
    accel_patch p[2];
    bool patched = how == PEER_PATCHED_WAIT;
    if (list && !patched && how != PEER_LIST_WAIT && how != PEER_LIST_LONG_WORK) return;
    if (list && !CHECK_OK(accel_queue_record_begin(x->q))) return;
    if (list || !x->list) {
        if (patched) accel_queue_copy(x->q, x->out, 0, x->own, 0, n);
        else if (to_own) accel_queue_copy(x->q, x->own, 0, x->a0, 0, n);
        else accel_queue_copy(x->q, x->a0, 0, x->own, 0, n);
    }
    if (list) { CHECK_OK(accel_queue_record_end(x->q, &x->list)); return; }
    memset(p, 0, sizeof p);
    p[1].index = 1;
    p[0].buffer = to_own ? x->own : x->a0;
    p[1].buffer = to_own ? x->a0 : x->own;
    if (x->list) accel_queue_replay(x->q, x->list, patched ? p : NULL, patched ? 2 : 0);
}
/* HOST_CALL_RECOVERS: a host call of q after its copy recovers device 0 (its queues' host calls may);
   how long that took, in ns. */
typedef struct peer_call { accel_device* d0; accel_result r; uint64_t ns; } peer_call;
static peer_call peer_call_g;
static void peer_call_recover(void* user) {
    peer_call* c = (peer_call*)user;
    uint64_t t0 = test_now_ns();
    c->r = accel_device_recover(c->d0);
    c->ns = test_now_ns() - t0;
}
/* q (device 1) does round `how`'s copy (peer_copy) behind what the round says, then signals done 1. */
static void peer_copy_behind(peer_ctx* x, int how, bool to_own) {
    uint32_t k[3] = { 2048, 50000, 5 };   /* ~0.2 s on the mock */
    peer_copy(x, how, to_own, true);
    if (peer_long(how)) accel_queue_exec(x->q, x->slow, &x->out, 1, k, 3, accel_exec_1d(2048, 32));
    else accel_queue_wait(x->q, x->gate, 1);
    if (how == PEER_EARLIER_BATCH || how == PEER_EARLIER_SEGMENT || how == PEER_COPIER_RECOVERS)
        accel_queue_signal(x->q, x->mid, 1);
    if (how == PEER_EARLIER_BATCH || how == PEER_COPIER_RECOVERS) CHECK_OK(accel_queue_submit(x->q));
    if (how == PEER_EARLIER_SEGMENT) accel_queue_wait(x->q, x->one, 1);   /* set already */
    peer_copy(x, how, to_own, false);
    if (how == PEER_HOST_CALL_RECOVERS) {
        peer_call_g.d0 = x->d0;
        peer_call_g.r = ACCEL_ERROR_BACKEND;
        accel_queue_host_call(x->q, peer_call_recover, &peer_call_g);
    }
    accel_queue_signal(x->q, x->done, 1);
    CHECK_OK(accel_queue_submit(x->q));
}
static void peer_round_run(peer_ctx* x, int how, bool to_own) {
    uint32_t w[BESIDE_WORDS];
    unsigned long long copies;
    for (int i = 0; i < BESIDE_WORDS; i++) w[i] = 0xa0a0a0a0u;
    if (!CHECK_OK(accel_buffer_write(x->a0, 0, w, sizeof w)) ||
        !beside_fill(x->q, x->own, 0x11111111u, x->one, 1))
        return;
    copies = peer_mock_copies();
    peer_copy_behind(x, how, to_own);
    if (!peer_long(how)) {   /* gated on the host, or held by the worker: nothing in the stream */
        CHECK_EQ_U64(peer_mock_copies() - copies, 0);
        CHECK_RESULT(accel_signal_wait(x->done, 1, 0), ACCEL_TIMEOUT);
    }
    if (how == PEER_HOST_CALL_RECOVERS) {   /* the copy completed before the call: no wait for it */
        test_log_reset();
        CHECK_OK(accel_signal_set(x->gate, 1));
        CHECK_OK(accel_signal_wait(x->done, 1, 10000000000ull));
        CHECK_OK(peer_call_g.r);
        CHECK(peer_call_g.ns < 1000000000ull);   /* the recover waited 2 s for the call's batch before */
        CHECK(!test_log_contains("copies with memory"));
        if (to_own) CHECK(beside_holds(x->own, 0xa0a0a0a0u, "copied before the host call"));
        return;
    }
    if (how == PEER_COPIER_RECOVERS) {   /* its worker drains q for the copy: the recover ends that */
        CHECK_OK(accel_device_recover(x->d1));
        CHECK_RESULT(accel_signal_wait(x->done, 1, 10000000000ull), ACCEL_ERROR_DEVICE_LOST);
        return;
    }
    CHECK_OK(accel_device_recover(x->d0));
    if (peer_long(how)) {   /* ran before the reset */
        CHECK_OK(accel_signal_wait(x->done, 1, 0));
        if (to_own) CHECK(beside_holds(x->own, 0xa0a0a0a0u, "copied before the reset"));
        else CHECK(beside_holds(x->own, 0x11111111u, "the source of the copy"));
    } else {
        CHECK_OK(accel_signal_set(x->gate, 1));
        CHECK_RESULT(accel_signal_wait(x->done, 1, 10000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(x->done), lost_value());
        CHECK(beside_holds(x->own, 0x11111111u, to_own ? "behind the copy from the recovered buffer"
                                                       : "the source of the copy to the recovered buffer"));
    }
    CHECK(beside_fill(x->q, x->own, 0x33333333u, x->one, 2));   /* device 1 works on */
    CHECK(beside_holds(x->own, 0x33333333u, "filled after the copy"));
}
/* The mock's second GPU, as an accel device. */
static accel_result peer_gpu1(accel_device** out) {
    accel_device_desc dd;
    memset(&dd, 0, sizeof dd);
    dd.backend = accel_cuda_backend();
    dd.device_index = 1;
    dd.label = "peer";
    return test_device_create_desc(dd, out);
}
/* Devices 0 (recovers) and 1 (peer), device 0's buffer a0, device 1's own and out, a slow program, a
   queue and four signals of device 1; false (checked) if any is missing. */
static bool peer_ctx_make(peer_ctx* x) {
    accel_signal** sigs[4];
    memset(x, 0, sizeof *x);
    sigs[0] = &x->gate; sigs[1] = &x->mid; sigs[2] = &x->one; sigs[3] = &x->done;
    if ((x->d0 = recover_device(NULL)) == NULL || !CHECK_OK(peer_gpu1(&x->d1)) ||
        !CHECK_OK(test_buffer_create(x->d0, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &x->a0)) ||
        !CHECK_OK(test_buffer_create(x->d1, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &x->own)) ||
        !CHECK_OK(test_buffer_create(x->d1, 2048 * 4, ACCEL_MEMORY_DEVICE, &x->out)) ||
        !CHECK_OK(test_program_create(x->d1, TK_SLOW, &x->slow)) ||
        !CHECK_OK(accel_queue_create(x->d1, ACCEL_QUEUE_COMPUTE, &x->q)))
        return false;
    for (int i = 0; i < 4; i++)
        if (!CHECK_OK(accel_signal_create(x->d1, 0, sigs[i]))) return false;
    return true;
}
/* Destroys what x holds: device 1's objects first, so that a destroy with work pending waits for it. */
static void peer_ctx_free(peer_ctx* x) {
    if (x->gate) accel_signal_set(x->gate, 1);
    accel_commands_destroy(x->list);
    accel_queue_destroy(x->q);
    accel_signal_destroy(x->gate);
    accel_signal_destroy(x->mid);
    accel_signal_destroy(x->one);
    accel_signal_destroy(x->done);
    accel_program_destroy(x->slow);
    accel_buffer_destroy(x->own);
    accel_buffer_destroy(x->out);
    accel_device_destroy(x->d1);
    accel_buffer_destroy(x->a0);
    accel_device_destroy(x->d0);
    memset(x, 0, sizeof *x);
}
static void peer_round(int how, bool to_own) {
    peer_ctx x;
    if (peer_ctx_make(&x)) {
        peer_round_run(&x, how, to_own);
        if (x.gate) accel_signal_set(x.gate, 1);
        accel_queue_finish(x.q, 10000000000ull);
        if (!TEST_FAILED_SO_FAR()) CHECK(recover_saxpy(x.d1));
    }
    peer_ctx_free(&x);
}
/* Two accel devices on one CUDA device: the wait stays on the GPU, the copy is in the stream at submit. */
static void peer_one_context(void) {
    accel_device *d0 = NULL, *d0b = NULL;
    accel_device_desc dd;
    accel_buffer *a0 = NULL, *ab = NULL;
    accel_queue* q = NULL;
    accel_signal *g = NULL, *done = NULL;
    memset(&dd, 0, sizeof dd);
    dd.backend = accel_cuda_backend();
    dd.label = "second on device 0";
    if (CHECK_OK(test_device_create_desc(dd, &d0)) && CHECK_OK(test_device_create_desc(dd, &d0b)) &&
        CHECK_OK(test_buffer_create(d0, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &a0)) &&
        CHECK_OK(test_buffer_create(d0b, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &ab)) &&
        CHECK_OK(accel_queue_create(d0b, ACCEL_QUEUE_COMPUTE, &q)) &&
        CHECK_OK(accel_signal_create(d0b, 0, &g)) && CHECK_OK(accel_signal_create(d0b, 0, &done)) &&
        CHECK_OK(test_buffer_set_u32(a0, BESIDE_WORDS, 0xa0a0a0a0u))) {
        unsigned long long copies = peer_mock_copies();
        accel_queue_wait(q, g, 1);
        accel_queue_copy(q, ab, 0, a0, 0, BESIDE_WORDS * 4);
        accel_queue_signal(q, done, 1);
        CHECK_OK(accel_queue_submit(q));
        if (peer_memops()) CHECK_EQ_U64(peer_mock_copies() - copies, 1);
        CHECK_RESULT(accel_signal_wait(done, 1, 0), ACCEL_TIMEOUT);
        CHECK_OK(accel_signal_set(g, 1));
        CHECK_OK(accel_signal_wait(done, 1, 10000000000ull));
        CHECK(beside_holds(ab, 0xa0a0a0a0u, "copied from the other accel device on its CUDA device"));
    }
    if (g) accel_signal_set(g, 1);
    accel_queue_destroy(q);
    accel_signal_destroy(g);
    accel_signal_destroy(done);
    accel_buffer_destroy(a0);
    accel_buffer_destroy(ab);
    accel_device_destroy(d0b);
    accel_device_destroy(d0);
}
/* The race of the count and the check: a thread submits copies from device 0's buffer into device 1's,
   one batch each, while this thread recovers device 0. Each copy completes before the reset (device 0's
   words) or fails with DEVICE_LOST (its check saw the recover); one that ran on freed memory is found by
   ASan, or reads other words. 24 rounds, a fresh buffer of device 0 each. */
typedef struct peer_race {
    accel_device* d1;
    accel_queue* q;
    accel_buffer *own, *a0;
    accel_signal* done;
    atomic_int stop, submits;
    uint64_t n;
} peer_race;
static void peer_racer(void* arg) {
    peer_race* r = (peer_race*)arg;
    while (!atomic_load(&r->stop) && r->n < 100000) {
        accel_queue_copy(r->q, r->own, 0, r->a0, 0, BESIDE_WORDS * 4);
        accel_queue_signal(r->q, r->done, ++r->n);
        if (accel_queue_submit(r->q) != ACCEL_OK) break;   /* a0 is stale: the recover came */
        atomic_fetch_add(&r->submits, 1);
    }
}
static void peer_race_round(accel_device* d0, peer_race* r) {
    test_thread t;
    uint64_t v;
    r->n = 0;
    atomic_store(&r->stop, 0);
    atomic_store(&r->submits, 0);
    if (!CHECK_OK(test_buffer_create(d0, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &r->a0)) ||
        !CHECK_OK(test_buffer_set_u32(r->a0, BESIDE_WORDS, 0xa0a0a0a0u)) ||
        !CHECK_OK(accel_signal_create(r->d1, 0, &r->done)) ||
        !CHECK(test_thread_start(&t, peer_racer, r)))
        goto out;
    while (atomic_load(&r->submits) < 3) accel_i_yield();
    CHECK_OK(accel_device_recover(d0));
    atomic_store(&r->stop, 1);
    test_thread_join(&t);
    accel_queue_finish(r->q, 10000000000ull);
    v = accel_signal_value(r->done);
    CHECK(v >= 3 || v == lost_value());
    CHECK(beside_holds(r->own, 0xa0a0a0a0u, "copied before the reset"));
out:
    accel_signal_destroy(r->done);
    accel_buffer_destroy(r->a0);
    r->done = NULL;
    r->a0 = NULL;
}
static void peer_race_rounds(void) {
    accel_device *d0 = recover_device(NULL), *d1 = NULL;
    peer_race r;
    memset(&r, 0, sizeof r);
    if (d0 && CHECK_OK(peer_gpu1(&d1)) && (r.d1 = d1) != NULL &&
        CHECK_OK(test_buffer_create(d1, BESIDE_WORDS * 4, ACCEL_MEMORY_DEVICE, &r.own)) &&
        CHECK_OK(accel_queue_create(d1, ACCEL_QUEUE_COMPUTE, &r.q)))
        for (int i = 0; i < 24 && !TEST_FAILED_SO_FAR(); i++) peer_race_round(d0, &r);
    accel_queue_destroy(r.q);
    accel_buffer_destroy(r.own);
    accel_device_destroy(d0);
    accel_device_destroy(d1);
}
/* A queue of device 1 with a counted copy of device 0's memory behind a slow kernel is destroyed at
   once, then device 1 itself: the copies leave device 0's count with their batches, so a recover of
   device 0 afterwards neither waits nor warns. */
static void peer_destroyed_then_recover(void) {
    peer_ctx x;
    uint32_t k[3] = { 2048, 50000, 5 };
    if (peer_ctx_make(&x)) {
        accel_device* d0 = x.d0;
        accel_buffer* a0 = x.a0;
        uint64_t t0;
        accel_queue_exec(x.q, x.slow, &x.out, 1, k, 3, accel_exec_1d(2048, 32));
        accel_queue_copy(x.q, x.own, 0, x.a0, 0, BESIDE_WORDS * 4);
        CHECK_OK(accel_queue_submit(x.q));
        x.d0 = NULL;   /* kept; the rest goes, device 1 with it */
        x.a0 = NULL;
        peer_ctx_free(&x);
        x.d0 = d0;
        x.a0 = a0;
        test_log_reset();
        t0 = test_now_ns();
        CHECK_OK(accel_device_recover(d0));
        CHECK(test_now_ns() - t0 < 1000000000ull);
        CHECK(!test_log_contains("copies with memory"));
    }
    peer_ctx_free(&x);
}
/* helper 107's case: device 1 (with a counted copy of device 0's memory behind a slow kernel) recovers
   on a thread while this thread recovers device 0. Device 1's recover completes its stale batches
   before its stream is idle; the copy stays counted on device 0 until device 1's reset (it was
   uncounted there, device 0's recover did not wait, the copy ran on freed memory: ASan). */
static void peer_recover_thread(void* arg) {
    peer_call* c = (peer_call*)arg;
    c->r = accel_device_recover(c->d0);
}
static void peer_recovers_at_once(void) {
    peer_ctx x;
    uint32_t k[3] = { 2048, 50000, 5 };
    peer_call c;
    test_thread t;
    if (peer_ctx_make(&x)) {
        c.d0 = x.d1;   /* the copier */
        c.r = ACCEL_ERROR_BACKEND;
        accel_queue_exec(x.q, x.slow, &x.out, 1, k, 3, accel_exec_1d(2048, 32));
        accel_queue_copy(x.q, x.own, 0, x.a0, 0, BESIDE_WORDS * 4);
        CHECK_OK(accel_queue_submit(x.q));
        if (CHECK(test_thread_start(&t, peer_recover_thread, &c))) {
            (void)accel_signal_wait(x.gate, 1, 20000000);   /* 20 ms (DEVICE_LOST once device 1 is stale) */
            CHECK_OK(accel_device_recover(x.d0));
            test_thread_join(&t);
            CHECK_OK(c.r);
        }
    }
    peer_ctx_free(&x);
}
TEST(a_peer_copy_at_the_recover_of_its_other_gpu) {
    uint32_t n = 0;
    accel_device* probe;
    if (test_g.backend != accel_cuda_backend() || recover_mock_count("mock_cuda_live") < 0)
        SKIP("the CUDA mock driver only (two GPUs with peer access)");
    if (accel_backend_device_count(accel_cuda_backend(), &n) != ACCEL_OK || n < 2)
        SKIP("fewer than two CUDA devices (the mock's MOCK_CUDA_DEVICES, 2 unless set otherwise)");
    if (!(probe = recover_device(NULL))) SKIP("this backend cannot recover its devices (UNSUPPORTED)");
    accel_device_destroy(probe);
    peer_one_context();
    for (int how = 0; how < PEER_ROUNDS && !TEST_FAILED_SO_FAR(); how++) {
        peer_round(how, true);
        peer_round(how, false);
    }
    if (!TEST_FAILED_SO_FAR()) peer_race_rounds();
    if (!TEST_FAILED_SO_FAR()) peer_destroyed_then_recover();
    if (!TEST_FAILED_SO_FAR()) peer_recovers_at_once();
}
#endif

int main(int argc, char** argv) {
#if RECOVER_MOCK
    /* the mock's second GPU for a_lost_device_beside_a_healthy_one, set before any driver call reads it
       (a real driver ignores it); a run that sets it keeps its own */
    if (!getenv("MOCK_CUDA_DEVICES")) setenv("MOCK_CUDA_DEVICES", "2", 1);
#endif
    test_begin(argc, argv);
    RUN(generation_counts_recovers);
    RUN(unsupported_changes_nothing);
    RUN(stale_objects_are_refused_everywhere);
    RUN(pending_batches_and_signals);
    RUN(a_stale_batch_drops_with_device_lost);
    RUN(other_devices_queues_are_released);
    RUN(peer_copies_with_a_lost_devices_buffer);
    RUN(patch_replaces_a_stale_peer_buffer);
    RUN(hundred_recovers_without_growth);
    RUN(a_view_made_across_a_recover);
    RUN(a_copy_refused_by_a_recover_under_way);
    RUN(a_list_ended_across_a_recover);
    RUN(waiters_recorders_and_callers_during_the_recover);
    RUN(concurrent_recovers);
    RUN(two_devices_on_one_native_device);
    RUN(waiter_on_a_recovered_sibling_sees_device_lost);
    RUN(buffer_calls_under_way_at_the_recover);
    RUN(host_reads_race_the_recover);
    RUN(queues_destroyed_during_recovers);
    RUN(parked_batch_at_the_recover);
    RUN(held_release_and_a_gpu_wait_at_the_recover);
#if RECOVER_MOCK
    RUN(driver_that_keeps_a_sticky_error);
    RUN(a_lost_device_beside_a_healthy_one);
    RUN(a_peer_copy_at_the_recover_of_its_other_gpu);
#endif
    RUN(recover_of_a_lost_device);   /* last: on NVIDIA's drivers the process cannot use the GPU after it */
    return test_end();
}
