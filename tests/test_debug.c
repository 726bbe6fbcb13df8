/* tests/test_debug.c — hang diagnostics of debug devices (accel_device_desc.debug = true):
   - a host wait that times out (threads) or deadlocks (no threads) logs which queues are blocked on
     which (signal, value), for accel_signal_wait and accel_queue_finish alike;
   - a host wait for a value that nothing submitted can reach is reported when it starts;
   - the waits return exactly what they return without debug;
   - without debug none of these messages appear. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__))
#  define DBG_THREADS 0
#  define DBG_STUCK ACCEL_ERROR_DEADLOCK     /* what a wait that nothing can satisfy returns */
#  define DBG_ENDED ": deadlock"               /* how its report says it ended (at once) */
#else
#  define DBG_THREADS 1
#  define DBG_STUCK ACCEL_TIMEOUT
#  define DBG_ENDED ": gave up after "
#endif
#define DBG_MS 1000000ull

static accel_result dbg_device(bool debug, accel_device** dev) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.debug = debug;
    d.cpu_threads = 2;
    return test_device_create_desc(d, dev);
}
/* "signal 0x..." as the library prints it */
static const char* dbg_ptr(const char* prefix, const void* p, char* buf, size_t cap) {
    snprintf(buf, cap, "%s%p", prefix, p);
    return buf;
}

/* A queue blocked on gate >= 5 before signalling out = 1. */
typedef struct dbg_scene { accel_device* dev; accel_queue* q; accel_signal *gate, *out; } dbg_scene;
static int dbg_scene_open(dbg_scene* sc, bool debug) {
    memset(sc, 0, sizeof *sc);
    if (!CHECK_OK(dbg_device(debug, &sc->dev))) return 0;
    if (!CHECK_OK(accel_queue_create(sc->dev, ACCEL_QUEUE_COMPUTE, &sc->q))) return 0;
    if (!CHECK_OK(accel_signal_create(sc->dev, 0, &sc->gate))) return 0;
    if (!CHECK_OK(accel_signal_create(sc->dev, 0, &sc->out))) return 0;
    accel_queue_wait(sc->q, sc->gate, 5);
    accel_queue_signal(sc->q, sc->out, 1);
    return CHECK_OK(accel_queue_submit(sc->q));
}
static void dbg_scene_close(dbg_scene* sc) {
    CHECK_OK(accel_signal_set(sc->gate, 5));
    CHECK_OK(accel_signal_wait(sc->out, 1, 10000 * DBG_MS));
    CHECK_OK(accel_queue_finish(sc->q, 10000 * DBG_MS));
    accel_device_destroy(sc->dev);
}

TEST(debug_wait_timeout_names_blocked_queue) {
    TEST_NEEDS_DEBUG();
    dbg_scene sc;
    char want_q[64], want_s[64];
    if (!dbg_scene_open(&sc, true)) { accel_device_destroy(sc.dev); return; }
    /* the executor may not have reached the wait yet (thread start-up on WASM takes a while): the
       report then says so; try again, up to 100 times */
    dbg_ptr("waits for signal ", (void*)sc.gate, want_s, sizeof want_s);
    for (int tries = 0; tries < 100; tries++) {
        test_log_reset();
        uint64_t t0 = test_now_ns();
        CHECK_RESULT(accel_signal_wait(sc.out, 1, 20 * DBG_MS), DBG_STUCK);
        if (DBG_THREADS) CHECK(test_now_ns() - t0 >= 15 * DBG_MS);   /* it still waited */
        CHECK(test_log_contains("accel_signal_wait" DBG_ENDED));
        if (!DBG_THREADS) CHECK(!test_log_contains("gave up after"));
        CHECK(test_log_contains(dbg_ptr("blocked: queue ", (void*)sc.q, want_q, sizeof want_q)));
        if (test_log_contains(want_s) || TEST_FAILED_SO_FAR()) break;
        CHECK(test_log_contains("has not reached a wait"));
    }
    CHECK(test_log_contains(want_s));
    CHECK(test_log_contains(" 'signal' >= 5 (it is at 0)"));
    CHECK_EQ_U64(accel_signal_value(sc.out), 0);
    dbg_scene_close(&sc);
}

TEST(debug_finish_timeout_names_blocked_queue) {
    TEST_NEEDS_DEBUG();
    dbg_scene sc;
    char want_s[64];
    if (!dbg_scene_open(&sc, true)) { accel_device_destroy(sc.dev); return; }
    dbg_ptr("waits for signal ", (void*)sc.gate, want_s, sizeof want_s);
    for (int tries = 0; tries < 100; tries++) {   /* see above */
        test_log_reset();
        CHECK_RESULT(accel_queue_finish(sc.q, 5 * DBG_MS), DBG_STUCK);
        CHECK(test_log_contains("accel_queue_finish" DBG_ENDED));
        if (!DBG_THREADS) CHECK(!test_log_contains("gave up after"));
        if (test_log_contains(want_s) || TEST_FAILED_SO_FAR()) break;
    }
    CHECK(test_log_contains(want_s));
    CHECK(test_log_contains("(it is at 0)"));
    dbg_scene_close(&sc);
}

/* A wait for more than any submitted work signals is reported at once; a reachable one is not. */
TEST(debug_unreachable_wait_reported) {
    TEST_NEEDS_DEBUG();
    dbg_scene sc;
    char want[64];
    if (!dbg_scene_open(&sc, true)) { accel_device_destroy(sc.dev); return; }
    test_log_reset();
    /* out = 1 is submitted (behind the gate): reachable, no report */
    CHECK_RESULT(accel_signal_wait(sc.out, 1, 1 * DBG_MS), DBG_STUCK);
    CHECK(!test_log_contains("nothing submitted can reach signal"));
    /* out = 2: nothing submitted signals it that far */
    test_log_reset();
    CHECK_RESULT(accel_signal_wait(sc.out, 2, 1 * DBG_MS), DBG_STUCK);
    CHECK(test_log_contains(dbg_ptr("nothing submitted can reach signal ", (void*)sc.out, want, sizeof want)));
    CHECK(test_log_contains(">= 2: it is at 0 and the highest value submitted work signals it to is 1"));
    /* a poll is not a wait: no report */
    test_log_reset();
    CHECK_RESULT(accel_signal_wait(sc.out, 2, 0), ACCEL_TIMEOUT);
    CHECK(!test_log_contains("nothing submitted can reach signal"));
    /* wait any: one reachable entry is enough to stay quiet; all unreachable is reported */
    {
        accel_signal* two[2] = { sc.out, sc.gate };
        uint64_t reachable[2] = { 1, 7 }, neither[2] = { 2, 7 };
        test_log_reset();
        CHECK_RESULT(accel_signal_wait_many(two, reachable, 2, false, 1 * DBG_MS, NULL), DBG_STUCK);
        CHECK(!test_log_contains("nothing submitted can reach signal"));
        test_log_reset();
        CHECK_RESULT(accel_signal_wait_many(two, neither, 2, false, 1 * DBG_MS, NULL), DBG_STUCK);
        CHECK(test_log_contains(dbg_ptr("nothing submitted can reach signal ", (void*)sc.gate, want, sizeof want)));
        CHECK(test_log_contains("accel_signal_wait_many: nothing submitted can reach"));
        CHECK(!test_log_contains("accel_signal_wait: "));   /* every line names the call it comes from */
    }
    /* many unreachable signals: eight lines and a count, and the timeout still holds */
    {
        enum { MANY = 300 };
        accel_signal* many[MANY];
        uint64_t ones[MANY];
        uint64_t t0;
        for (int i = 0; i < MANY; i++) { REQUIRE_OK(accel_signal_create(sc.dev, 0, &many[i])); ones[i] = 1; }
        test_log_reset();
        t0 = test_now_ns();
        CHECK_RESULT(accel_signal_wait_many(many, ones, MANY, false, 5 * DBG_MS, NULL), DBG_STUCK);
        CHECK(test_now_ns() - t0 < 2000 * DBG_MS);
        CHECK(test_log_contains("accel_signal_wait_many: nothing submitted can reach 292 more of the signals waited for"));
        CHECK(test_log_count(ACCEL_LOG_WARN) <= 12);
        for (int i = 0; i < MANY; i++) accel_signal_destroy(many[i]);
    }
    /* a host set makes it reachable after all: the wait ends as usual */
    CHECK_OK(accel_signal_set(sc.out, 2));
    CHECK_OK(accel_signal_wait(sc.out, 2, 1 * DBG_MS));
    dbg_scene_close(&sc);
}

/* A wait for all of several signals that times out (or deadlocks) names the first one not reached, not
   the first one waited for: here the gate waited for is at its value, out is not. */
TEST(debug_wait_all_names_the_signal_not_reached) {
    TEST_NEEDS_DEBUG();
    dbg_scene sc;
    char want[96];
    accel_signal* two[2];
    uint64_t values[2] = { 5, 2 };
    if (!dbg_scene_open(&sc, true)) { accel_device_destroy(sc.dev); return; }
    CHECK_OK(accel_signal_set(sc.gate, 5));
    CHECK_OK(accel_signal_wait(sc.out, 1, 10000 * DBG_MS));
    two[0] = sc.gate;
    two[1] = sc.out;
    test_log_reset();
    CHECK_RESULT(accel_signal_wait_many(two, values, 2, true, 2 * DBG_MS, NULL), DBG_STUCK);
    CHECK(test_log_contains("accel_signal_wait_many" DBG_ENDED));
    snprintf(want, sizeof want, "waiting for signal %p 'signal' >= 2 (it is at 1) and others", (void*)sc.out);
    CHECK(test_log_contains(want));
    snprintf(want, sizeof want, "waiting for signal %p", (void*)sc.gate);
    CHECK(!test_log_contains(want));
    if (!DBG_THREADS) {   /* the deadlock's own line, debug or not */
        snprintf(want, sizeof want, "reach value 2 on signal %p 'signal' (and others): deadlock",
                 (void*)sc.out);
        CHECK(test_log_contains(want));
    }
    dbg_scene_close(&sc);
}

/* Without debug: the same waits, the same results, none of the diagnostics. */
TEST(debug_off_is_quiet) {
    dbg_scene sc;
    if (!dbg_scene_open(&sc, false)) { accel_device_destroy(sc.dev); return; }
    test_log_reset();
    CHECK_RESULT(accel_signal_wait(sc.out, 1, 2 * DBG_MS), DBG_STUCK);
    CHECK_RESULT(accel_signal_wait(sc.out, 2, 2 * DBG_MS), DBG_STUCK);
    CHECK_RESULT(accel_queue_finish(sc.q, 2 * DBG_MS), DBG_STUCK);
    CHECK(!test_log_contains("gave up after"));
    CHECK(!test_log_contains("nothing submitted can reach signal"));
    if (DBG_THREADS) CHECK_EQ_INT(test_log_count(ACCEL_LOG_WARN), 0);
    dbg_scene_close(&sc);
}

/* Debug devices run the same work: a pipeline across two queues gives the same results. */
TEST(debug_device_runs_pipelines) {
    accel_device* dev;
    accel_queue *a, *b;
    accel_signal* s;
    accel_buffer* buf;
    REQUIRE_OK(dbg_device(true, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &a));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COPY, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &buf));
    test_log_reset();
    for (uint32_t i = 1; i <= 50; i++) {
        accel_queue_wait(b, s, 2 * i - 1);
        accel_queue_fill(b, buf, 0, 64, i);
        accel_queue_signal(b, s, 2 * i);
        CHECK_OK(accel_queue_submit(b));
        accel_queue_signal(a, s, 2 * i - 1);
        CHECK_OK(accel_queue_submit(a));
        CHECK_OK(accel_signal_wait(s, 2 * i, 10000 * DBG_MS));
        CHECK_EQ_U64(test_buffer_u32(buf, 15), i);
    }
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_WARN) + test_log_count(ACCEL_LOG_ERROR), 0);
    accel_device_destroy(dev);
}

/* An exec whose global size is 0 in some dimension (zeroed params with only x set) does nothing, and a
   debug device says so; a device without debug stays quiet. */
TEST(debug_warns_about_an_exec_with_no_work) {
    TEST_NEEDS_DEBUG();
    for (int debug = 0; debug <= 1; debug++) {
        accel_device* dev;
        accel_queue* q;
        accel_program* add;
        accel_buffer* b;
        accel_exec_params params;
        uint32_t n = 64;
        REQUIRE_OK(dbg_device(debug != 0, &dev));
        REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
        REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &add));
        REQUIRE_OK(test_buffer_create(dev, 64 * 4, ACCEL_MEMORY_DEVICE, &b));
        REQUIRE_OK(test_buffer_set_u32(b, 64, 7));
        memset(&params, 0, sizeof params);
        params.global_size[0] = 64;
        params.local_size[0] = 64;
        test_log_reset();
        accel_queue_exec(q, add, &b, 1, &n, 1, params);
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(b, 0), 7);
        CHECK_EQ_INT(test_log_contains("accel_queue_exec: global size 64 x 0 x 0"), debug);
        accel_queue_exec(q, add, &b, 1, &n, 1, accel_exec_1d(64, 64));
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(b, 63), 8);
        accel_device_destroy(dev);
    }
}

/* ACCEL_NO_DEBUG: debug = true is a warning, not an error, and a wait that times out reports nothing. */
TEST(debug_is_a_warning_in_a_no_debug_build) {
#if !defined(ACCEL_NO_DEBUG)
    SKIP("needs a build with ACCEL_NO_DEBUG");
#else
    accel_device_desc desc;
    accel_device* dev;
    accel_signal* s;
    memset(&desc, 0, sizeof desc);
    desc.debug = true;
    test_log_reset();
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_WARN), 1);
    CHECK(test_log_contains("ACCEL_NO_DEBUG"));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    test_log_reset();
    CHECK(accel_signal_wait(s, 1, 1000000) != ACCEL_OK);   /* TIMEOUT; DEADLOCK without threads */
    CHECK(!test_log_contains("blocked:"));
    CHECK(!test_log_contains("nothing submitted can reach signal"));
    accel_signal_destroy(s);
    accel_device_destroy(dev);
#endif
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(debug_warns_about_an_exec_with_no_work);
    RUN(debug_is_a_warning_in_a_no_debug_build);
    /* every backend: the reports are the core's, each backend describes what its queues wait for */
    RUN(debug_wait_timeout_names_blocked_queue);
    RUN(debug_finish_timeout_names_blocked_queue);
    RUN(debug_unreachable_wait_reported);
    RUN(debug_wait_all_names_the_signal_not_reached);
    RUN(debug_off_is_quiet);
    RUN(debug_device_runs_pipelines);
    return test_end();
}
