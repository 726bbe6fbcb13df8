/* tests/test_errors.c — result codes, bad arguments everywhere, all-or-nothing batches,
   allocation failure injection, device creation errors. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

TEST(result_strings) {
    static const struct { accel_result r; const char* name; } all[] = {
        { ACCEL_OK, "ACCEL_OK" },
        { ACCEL_TIMEOUT, "ACCEL_TIMEOUT" },
        { ACCEL_ERROR_INVALID_ARGUMENT, "ACCEL_ERROR_INVALID_ARGUMENT" },
        { ACCEL_ERROR_OUT_OF_MEMORY, "ACCEL_ERROR_OUT_OF_MEMORY" },
        { ACCEL_ERROR_UNAVAILABLE, "ACCEL_ERROR_UNAVAILABLE" },
        { ACCEL_ERROR_UNSUPPORTED, "ACCEL_ERROR_UNSUPPORTED" },
        { ACCEL_ERROR_SIGNAL_FAILED, "ACCEL_ERROR_SIGNAL_FAILED" },
        { ACCEL_ERROR_DEVICE_LOST, "ACCEL_ERROR_DEVICE_LOST" },
        { ACCEL_ERROR_DEADLOCK, "ACCEL_ERROR_DEADLOCK" },
        { ACCEL_ERROR_COMPILE, "ACCEL_ERROR_COMPILE" },
        { ACCEL_ERROR_BACKEND, "ACCEL_ERROR_BACKEND" },
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) CHECK_EQ_STR(accel_result_string(all[i].r), all[i].name);
    CHECK_EQ_INT(ACCEL_OK, 0);
    CHECK_EQ_INT(ACCEL_TIMEOUT, 1);
    CHECK_EQ_INT(ACCEL_ERROR_BACKEND, -9);
    CHECK_EQ_STR(accel_result_string((accel_result)2), "unknown accel_result");
    CHECK_EQ_STR(accel_result_string((accel_result)-10), "unknown accel_result");
    CHECK_EQ_STR(accel_result_string((accel_result)12345), "unknown accel_result");
    CHECK_EQ_STR(accel_result_string((accel_result)-1000000), "unknown accel_result");
}

/* Every result code the CPU backend can produce, reached on purpose. */
TEST(result_codes_reached_on_purpose) {
    if (!test_backend_is_cpu()) SKIP("CPU backend specific");
    accel_device* dev = NULL;
    accel_signal* s = NULL;
    accel_program* p = NULL;
    REQUIRE_OK(test_device_create(&dev));                                        /* OK */
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    CHECK_RESULT(accel_signal_wait(s, 1, 0), ACCEL_TIMEOUT);                      /* TIMEOUT */
    CHECK_RESULT(accel_signal_wait(NULL, 1, 0), ACCEL_ERROR_INVALID_ARGUMENT);    /* INVALID_ARGUMENT */
    {                                                                            /* OUT_OF_MEMORY */
        test_alloc_state st;
        test_alloc_init(&st);
        atomic_store(&st.fail_after, 0);
        accel_device_desc d;
        memset(&d, 0, sizeof d);
        d.allocator = test_allocator(&st);
        accel_device* none = (accel_device*)&st;
        CHECK_RESULT(test_device_create_desc(d, &none), ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK(none == NULL);
        CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
        CHECK(atomic_load(&st.failures) > 0);
    }
    {                                                                            /* UNAVAILABLE */
        accel_device_desc d;
        memset(&d, 0, sizeof d);
        d.device_index = 1;
        accel_device* none = dev;
        CHECK_RESULT(test_device_create_desc(d, &none), ACCEL_ERROR_UNAVAILABLE);
        CHECK(none == NULL);
    }
    {                                                                            /* UNSUPPORTED */
        static const uint32_t spirv[5] = { 0x07230203u, 0x00010000u, 0, 1, 0 };
        accel_program_desc d;
        memset(&d, 0, sizeof d);
        d.name = "x";
        d.spirv = spirv;
        d.spirv_size = sizeof spirv;
        d.ptx = "// ptx\n";
        CHECK_RESULT(accel_program_create(dev, &d, &p), ACCEL_ERROR_UNSUPPORTED);
    }
    CHECK_OK(accel_signal_fail(s, ACCEL_ERROR_BACKEND));                         /* SIGNAL_FAILED */
    CHECK_RESULT(accel_signal_wait(s, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
#ifdef ACCEL_NO_THREADS                                                          /* DEADLOCK */
    accel_signal* t;
    REQUIRE_OK(accel_signal_create(dev, 0, &t));
    CHECK_RESULT(accel_signal_wait(t, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_DEADLOCK);
#endif
    accel_device_destroy(dev);
}

TEST(device_create_errors) {
    accel_device* dev = NULL;
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    CHECK_RESULT(test_device_create_desc(d, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_device_create(NULL, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    test_log_reset();
    d.device_index = 1000;
    dev = (accel_device*)&d;
    CHECK_RESULT(test_device_create_desc(d, &dev), ACCEL_ERROR_UNAVAILABLE);
    CHECK(dev == NULL);
    CHECK(test_log_count(ACCEL_LOG_ERROR) + test_log_count(ACCEL_LOG_WARN) > 0);   /* the reason is logged */
    /* an allocator with only one of its two functions is a bad desc */
    test_alloc_state st;
    test_alloc_init(&st);
    memset(&d, 0, sizeof d);
    d.allocator.alloc_fn = test_alloc_fn;
    d.allocator.user = &st;
    dev = (accel_device*)&d;
    CHECK_RESULT(test_device_create_desc(d, &dev), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(dev == NULL);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    memset(&d, 0, sizeof d);
    d.allocator.free_fn = test_free_fn;
    d.allocator.user = &st;
    CHECK_RESULT(test_device_create_desc(d, &dev), ACCEL_ERROR_INVALID_ARGUMENT);
}

TEST(device_create_any) {
    const accel_backend* list[2] = { accel_cpu_backend(), accel_cpu_backend() };
    accel_device* dev = NULL;
    accel_device_info info;
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.logger = test_logger();
    REQUIRE_OK(accel_device_create_any(list, 1, &d, &dev));
    CHECK_OK(accel_device_info_get(dev, &info));
    CHECK_EQ_STR(info.backend, "cpu");
    accel_device_destroy(dev);
    dev = NULL;
    REQUIRE_OK(accel_device_create_any(list, 2, NULL, &dev));                /* NULL desc: defaults */
    accel_device_destroy(dev);
    const accel_result E = ACCEL_ERROR_INVALID_ARGUMENT;
    dev = (accel_device*)&d;
    CHECK_RESULT(accel_device_create_any(NULL, 1, &d, &dev), E);
    CHECK(dev == NULL);
    CHECK_RESULT(accel_device_create_any(list, 0, &d, &dev), E);
    CHECK_RESULT(accel_device_create_any(list, 1, &d, NULL), E);
    /* every backend unavailable: UNAVAILABLE, and the log says why */
    test_log_reset();
    d.device_index = 1;
    dev = (accel_device*)&d;
    CHECK_RESULT(accel_device_create_any(list, 2, &d, &dev), ACCEL_ERROR_UNAVAILABLE);
    CHECK(dev == NULL);
    CHECK(test_log_count(ACCEL_LOG_ERROR) + test_log_count(ACCEL_LOG_WARN) + test_log_count(ACCEL_LOG_INFO) > 0);
#ifdef ACCEL_TEST_HAVE_VULKAN
    {
        const accel_backend* vk_then_cpu[2] = { accel_vulkan_backend(), accel_cpu_backend() };
        d.device_index = 0;
        dev = NULL;
        CHECK_OK(accel_device_create_any(vk_then_cpu, 2, &d, &dev));          /* one of them works */
        accel_device_destroy(dev);
    }
#endif
}

/* ==== bad recording calls: all-or-nothing batches ==== */
typedef struct bad_ctx {
    accel_device* dev;
    accel_queue* q;            /* the queue the case records on */
    accel_buffer *buf, *other; /* 64 bytes each */
    accel_program* fill;       /* TK_FILL_INDEX: 1 buffer, 2 constants */
    accel_signal* s;
    accel_device_info info;
} bad_ctx;
typedef struct bad_case {
    const char* name;
    void (*record)(bad_ctx* c);
    int on_copy_queue;
} bad_case;

static const uint32_t bad_k2[3] = { 1, 4, 9 };
static void bad_wait_null(bad_ctx* c) { accel_queue_wait(c->q, NULL, 1); }
static void bad_wait_too_big(bad_ctx* c) { accel_queue_wait(c->q, c->s, ACCEL_SIGNAL_MAX + 1); }
static void bad_wait_max(bad_ctx* c) { accel_queue_wait(c->q, c->s, UINT64_MAX); }
static void bad_signal_null(bad_ctx* c) { accel_queue_signal(c->q, NULL, 1); }
static void bad_signal_too_big(bad_ctx* c) { accel_queue_signal(c->q, c->s, ACCEL_SIGNAL_MAX + 1); }
static void bad_exec_null_program(bad_ctx* c) { accel_queue_exec(c->q, NULL, &c->buf, 1, bad_k2, 2, accel_exec_1d(4, 1)); }
static void bad_exec_null_buffers(bad_ctx* c) { accel_queue_exec(c->q, c->fill, NULL, 1, bad_k2, 2, accel_exec_1d(4, 1)); }
static void bad_exec_null_buffer_entry(bad_ctx* c) {
    accel_buffer* none[1] = { NULL };
    accel_queue_exec(c->q, c->fill, none, 1, bad_k2, 2, accel_exec_1d(4, 1));
}
static void bad_exec_too_few_buffers(bad_ctx* c) { accel_queue_exec(c->q, c->fill, &c->buf, 0, bad_k2, 2, accel_exec_1d(4, 1)); }
static void bad_exec_too_many_buffers(bad_ctx* c) {
    accel_buffer* two[2] = { c->buf, c->other };
    accel_queue_exec(c->q, c->fill, two, 2, bad_k2, 2, accel_exec_1d(4, 1));
}
static void bad_exec_too_few_constants(bad_ctx* c) { accel_queue_exec(c->q, c->fill, &c->buf, 1, bad_k2, 1, accel_exec_1d(4, 1)); }
static void bad_exec_too_many_constants(bad_ctx* c) { accel_queue_exec(c->q, c->fill, &c->buf, 1, bad_k2, 3, accel_exec_1d(4, 1)); }
static void bad_exec_null_constants(bad_ctx* c) { accel_queue_exec(c->q, c->fill, &c->buf, 1, NULL, 2, accel_exec_1d(4, 1)); }
static void bad_exec_group_too_large(bad_ctx* c) {
    uint32_t local = c->info.max_group_invocations + 1;
    if (c->info.max_group_invocations == UINT32_MAX) local = UINT32_MAX;   /* cannot exceed: fall back */
    accel_queue_exec(c->q, c->fill, &c->buf, 1, bad_k2, 2, accel_exec_1d(4, local));
}
static void bad_exec_on_copy_queue(bad_ctx* c) { accel_queue_exec(c->q, c->fill, &c->buf, 1, bad_k2, 2, accel_exec_1d(4, 1)); }
static void bad_copy_null_dst(bad_ctx* c) { accel_queue_copy(c->q, NULL, 0, c->other, 0, 4); }
static void bad_copy_null_src(bad_ctx* c) { accel_queue_copy(c->q, c->other, 0, NULL, 0, 4); }
static void bad_copy_size_zero(bad_ctx* c) { accel_queue_copy(c->q, c->other, 0, c->buf, 0, 0); }
static void bad_copy_dst_range(bad_ctx* c) { accel_queue_copy(c->q, c->other, 60, c->buf, 0, 8); }
static void bad_copy_src_range(bad_ctx* c) { accel_queue_copy(c->q, c->other, 0, c->buf, 57, 8); }
static void bad_copy_too_big(bad_ctx* c) { accel_queue_copy(c->q, c->other, 0, c->buf, 0, 65); }
static void bad_copy_dst_offset_overflow(bad_ctx* c) { accel_queue_copy(c->q, c->other, SIZE_MAX, c->buf, 0, 1); }
static void bad_copy_src_offset_overflow(bad_ctx* c) { accel_queue_copy(c->q, c->other, 0, c->buf, SIZE_MAX, 2); }
static void bad_copy_size_overflow(bad_ctx* c) { accel_queue_copy(c->q, c->other, 8, c->buf, 8, SIZE_MAX); }
static void bad_copy_overlap(bad_ctx* c) { accel_queue_copy(c->q, c->other, 8, c->other, 0, 16); }
static void bad_copy_overlap_same(bad_ctx* c) { accel_queue_copy(c->q, c->other, 4, c->other, 4, 4); }
static void bad_fill_null(bad_ctx* c) { accel_queue_fill(c->q, NULL, 0, 4, 1); }
static void bad_fill_size_zero(bad_ctx* c) { accel_queue_fill(c->q, c->other, 0, 0, 1); }
static void bad_fill_offset_unaligned(bad_ctx* c) { accel_queue_fill(c->q, c->other, 2, 4, 1); }
static void bad_fill_size_unaligned(bad_ctx* c) { accel_queue_fill(c->q, c->other, 0, 6, 1); }
static void bad_fill_range(bad_ctx* c) { accel_queue_fill(c->q, c->other, 60, 8, 1); }
static void bad_fill_offset_overflow(bad_ctx* c) { accel_queue_fill(c->q, c->other, SIZE_MAX - 3, 8, 1); }
static void bad_fill_size_overflow(bad_ctx* c) { accel_queue_fill(c->q, c->other, 8, SIZE_MAX - 3, 1); }
static const uint32_t bad_data[4] = { 1, 2, 3, 4 };
static void bad_update_null_dst(bad_ctx* c) { accel_queue_update(c->q, NULL, 0, bad_data, 4); }
static void bad_update_null_data(bad_ctx* c) { accel_queue_update(c->q, c->other, 0, NULL, 4); }
static void bad_update_size_zero(bad_ctx* c) { accel_queue_update(c->q, c->other, 0, bad_data, 0); }
static void bad_update_range(bad_ctx* c) { accel_queue_update(c->q, c->other, 56, bad_data, 16); }
static void bad_update_offset_overflow(bad_ctx* c) { accel_queue_update(c->q, c->other, SIZE_MAX, bad_data, 1); }
static void bad_two_errors(bad_ctx* c) { bad_fill_null(c); bad_wait_null(c); }

static const bad_case bad_cases[] = {
    { "wait NULL signal", bad_wait_null, 0 },
    { "wait value > ACCEL_SIGNAL_MAX", bad_wait_too_big, 0 },
    { "wait value UINT64_MAX", bad_wait_max, 1 },
    { "signal NULL", bad_signal_null, 0 },
    { "signal value > ACCEL_SIGNAL_MAX", bad_signal_too_big, 1 },
    { "exec NULL program", bad_exec_null_program, 0 },
    { "exec NULL buffers", bad_exec_null_buffers, 0 },
    { "exec NULL buffer entry", bad_exec_null_buffer_entry, 0 },
    { "exec too few buffers", bad_exec_too_few_buffers, 0 },
    { "exec too many buffers", bad_exec_too_many_buffers, 0 },
    { "exec too few constants", bad_exec_too_few_constants, 0 },
    { "exec too many constants", bad_exec_too_many_constants, 0 },
    { "exec NULL constants", bad_exec_null_constants, 0 },
    { "exec group too large", bad_exec_group_too_large, 0 },
    { "exec on COPY queue", bad_exec_on_copy_queue, 1 },
    { "copy NULL dst", bad_copy_null_dst, 0 },
    { "copy NULL src", bad_copy_null_src, 1 },
    { "copy size 0", bad_copy_size_zero, 0 },
    { "copy dst range", bad_copy_dst_range, 0 },
    { "copy src range", bad_copy_src_range, 1 },
    { "copy larger than buffer", bad_copy_too_big, 0 },
    { "copy dst offset SIZE_MAX", bad_copy_dst_offset_overflow, 0 },
    { "copy src offset SIZE_MAX", bad_copy_src_offset_overflow, 0 },
    { "copy size SIZE_MAX", bad_copy_size_overflow, 0 },
    { "copy overlapping in one buffer", bad_copy_overlap, 0 },
    { "copy onto itself", bad_copy_overlap_same, 1 },
    { "fill NULL", bad_fill_null, 0 },
    { "fill size 0", bad_fill_size_zero, 0 },
    { "fill offset not multiple of 4", bad_fill_offset_unaligned, 0 },
    { "fill size not multiple of 4", bad_fill_size_unaligned, 1 },
    { "fill range", bad_fill_range, 0 },
    { "fill offset overflow", bad_fill_offset_overflow, 0 },
    { "fill size overflow", bad_fill_size_overflow, 0 },
    { "update NULL dst", bad_update_null_dst, 0 },
    { "update NULL data", bad_update_null_data, 0 },
    { "update size 0", bad_update_size_zero, 0 },
    { "update range", bad_update_range, 1 },
    { "update offset SIZE_MAX", bad_update_offset_overflow, 0 },
    { "two errors", bad_two_errors, 0 },
};

/* For each bad call: a batch of [signal s=n, fill, BAD, fill, update, signal t=n] must return
   INVALID_ARGUMENT from submit, log an error, run nothing and signal nothing; the queue then works. */
TEST(bad_record_discards_whole_batch) {
    bad_ctx c;
    accel_queue *compute, *copyq;
    accel_signal *t, *ok;
    memset(&c, 0, sizeof c);
    REQUIRE_OK(test_device_create(&c.dev));
    REQUIRE_OK(accel_device_info_get(c.dev, &c.info));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COMPUTE, &compute));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COPY, &copyq));
    REQUIRE_OK(test_buffer_create(c.dev, 64, ACCEL_MEMORY_HOST, &c.buf));
    REQUIRE_OK(test_buffer_create(c.dev, 64, ACCEL_MEMORY_HOST, &c.other));
    REQUIRE_OK(test_program_create(c.dev, TK_FILL_INDEX, &c.fill));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &c.s));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &t));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &ok));
    uint64_t n_ok = 0;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case* bc = &bad_cases[i];
        uint64_t n = i + 1;
        c.q = bc->on_copy_queue ? copyq : compute;
        test_log_reset();
        accel_queue_signal(c.q, c.s, n);
        accel_queue_fill(c.q, c.buf, 0, 16, 0x1111u);
        bc->record(&c);
        accel_queue_fill(c.q, c.buf, 16, 16, 0x2222u);
        accel_queue_update(c.q, c.buf, 32, bad_data, 16);
        accel_queue_signal(c.q, t, n);
        accel_result r = accel_queue_submit(c.q);
        int fails = 0;
        fails += !CHECK_RESULT(r, ACCEL_ERROR_INVALID_ARGUMENT);
        fails += !CHECK(test_log_count(ACCEL_LOG_ERROR) > 0);
        /* nothing ran: wait on the queue (bounded: a wrongly accepted wait could block forever), then look */
        if (!CHECK_OK(accel_queue_finish(c.q, 5000000000ull))) {
            fprintf(stderr, "    ^ case: %s: the batch ran or hangs; failing its signal to unblock it\n", bc->name);
            accel_signal_fail(c.s, ACCEL_ERROR_BACKEND);
            break;
        }
        fails += !CHECK_EQ_U64(accel_signal_value(c.s), 0);
        fails += !CHECK_EQ_U64(accel_signal_value(t), 0);
        uint32_t got[16];
        fails += !CHECK_OK(accel_buffer_read(c.buf, 0, got, sizeof got));
        for (int w = 0; w < 16; w++) fails += !CHECK_EQ_U64(got[w], 0);
        fails += !CHECK_OK(accel_buffer_read(c.other, 0, got, sizeof got));
        for (int w = 0; w < 16; w++) fails += !CHECK_EQ_U64(got[w], 0);
        /* the error does not stick: the same queue runs the next batch */
        accel_queue_fill(c.q, c.other, 48, 4, (uint32_t)n);
        accel_queue_signal(c.q, ok, ++n_ok);
        fails += !CHECK_OK(accel_queue_submit(c.q));
        fails += !CHECK_OK(accel_signal_wait(ok, n_ok, ACCEL_WAIT_FOREVER));
        fails += !CHECK_EQ_U64(test_buffer_u32(c.other, 12), n);
        uint32_t zero = 0;
        CHECK_OK(accel_buffer_write(c.other, 48, &zero, 4));
        if (fails) fprintf(stderr, "    ^ case: %s (%s queue)\n", bc->name, bc->on_copy_queue ? "COPY" : "COMPUTE");
    }
    accel_device_destroy(c.dev);
}

/* The bad execs once more, each right after a good exec of the same program, buffer and params on the
   same queue (in a batch that ran): the queue holds them and knows the params then, and an exec that
   repeats them skips the checks of both (accel.h, accel_i_exec_held, accel_i_params_known): what changed
   is still refused. */
TEST(bad_exec_after_a_good_one_still_fails) {
    static void (*const execs[])(bad_ctx*) = {
        bad_exec_null_buffers, bad_exec_null_buffer_entry, bad_exec_too_few_buffers, bad_exec_too_many_buffers,
        bad_exec_too_few_constants, bad_exec_too_many_constants, bad_exec_null_constants, bad_exec_group_too_large,
    };
    bad_ctx c;
    accel_signal* done;
    uint64_t n = 0;
    memset(&c, 0, sizeof c);
    REQUIRE_OK(test_device_create(&c.dev));
    REQUIRE_OK(accel_device_info_get(c.dev, &c.info));
    REQUIRE_OK(accel_queue_create(c.dev, ACCEL_QUEUE_COMPUTE, &c.q));
    REQUIRE_OK(test_buffer_create(c.dev, 64, ACCEL_MEMORY_HOST, &c.buf));
    REQUIRE_OK(test_buffer_create(c.dev, 64, ACCEL_MEMORY_HOST, &c.other));
    REQUIRE_OK(test_program_create(c.dev, TK_FILL_INDEX, &c.fill));
    REQUIRE_OK(accel_signal_create(c.dev, 0, &done));
    for (size_t i = 0; i < sizeof execs / sizeof execs[0]; i++) {
        accel_queue_exec(c.q, c.fill, &c.buf, 1, bad_k2, 2, accel_exec_1d(4, 1));   /* good: 4 words */
        accel_queue_signal(c.q, done, ++n);
        if (!CHECK_OK(accel_queue_submit(c.q)) || !CHECK_OK(accel_signal_wait(done, n, 10000000000ull))) break;
        test_log_reset();
        execs[i](&c);
        accel_queue_signal(c.q, done, n + 1);
        if (!CHECK_RESULT(accel_queue_submit(c.q), ACCEL_ERROR_INVALID_ARGUMENT) ||
            !CHECK(test_log_count(ACCEL_LOG_ERROR) > 0))
            fprintf(stderr, "    ^ bad exec %u after a good one\n", (unsigned)i);
        CHECK_OK(accel_queue_finish(c.q, 10000000000ull));
        CHECK_EQ_U64(accel_signal_value(done), n);
    }
    /* and the good one again, still right */
    accel_queue_exec(c.q, c.fill, &c.buf, 1, bad_k2, 2, accel_exec_1d(4, 1));
    accel_queue_signal(c.q, done, ++n);
    CHECK_OK(accel_queue_submit(c.q));
    CHECK_OK(accel_signal_wait(done, n, 10000000000ull));
    accel_device_destroy(c.dev);
}

/* The recording calls take a NULL queue without crashing; submit/finish report it. */
TEST(null_queue_recording_does_not_crash) {
    accel_device* dev;
    accel_buffer* b;
    accel_signal* s;
    accel_program* p;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(test_buffer_create(dev, 64, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &p));
    uint32_t n = 4;
    accel_queue_wait(NULL, s, 1);
    accel_queue_signal(NULL, s, 1);
    accel_queue_exec(NULL, p, &b, 1, &n, 1, accel_exec_1d(4, 1));
    accel_queue_copy(NULL, b, 0, b, 32, 4);
    accel_queue_fill(NULL, b, 0, 4, 1);
    accel_queue_update(NULL, b, 0, &n, 4);
    accel_queue_barrier(NULL);
    CHECK_RESULT(accel_queue_submit(NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_queue_finish(NULL, ACCEL_WAIT_FOREVER), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_EQ_U64(accel_signal_value(s), 0);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 0);
    accel_device_destroy(dev);
}

/* ==== allocation failure injection: every site, nothing leaked ==== */
TEST(out_of_memory_device_create) {
    test_alloc_state st;
    test_alloc_init(&st);
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.allocator = test_allocator(&st);
    d.cpu_threads = 2;
    int k;
    for (k = 0; k < 500; k++) {
        atomic_store(&st.fail_after, k);
        accel_device* dev = (accel_device*)&st;
        accel_result r = test_device_create_desc(d, &dev);
        atomic_store(&st.fail_after, -1);
        if (r == ACCEL_OK) {
            accel_device_destroy(dev);
            break;
        }
        CHECK_RESULT(r, ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK(dev == NULL);
        CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
        if (TEST_FAILED_SO_FAR()) { fprintf(stderr, "    at allocation %d\n", k); break; }
    }
    CHECK(k < 500);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
    CHECK_EQ_INT(atomic_load(&st.bad_align), 0);
}

typedef enum oom_kind { OOM_SIGNAL, OOM_BUFFER, OOM_PROGRAM, OOM_QUEUE_COMPUTE, OOM_QUEUE_COPY, OOM_KINDS } oom_kind;

TEST(out_of_memory_object_create) {
    test_alloc_state st;
    test_alloc_init(&st);
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.allocator = test_allocator(&st);
    accel_device* dev;
    REQUIRE_OK(test_device_create_desc(d, &dev));
    for (int kind = 0; kind < OOM_KINDS; kind++) {
        int k;
        for (k = 0; k < 200; k++) {
            long before = atomic_load(&st.outstanding);
            accel_signal* sig = NULL;
            accel_buffer* buf = NULL;
            accel_program* prog = NULL;
            accel_queue* queue = NULL;
            accel_result r;
            atomic_store(&st.fail_after, k);
            switch ((oom_kind)kind) {
            case OOM_SIGNAL: r = accel_signal_create(dev, 0, &sig); break;
            case OOM_BUFFER: r = test_buffer_create(dev, 4096, ACCEL_MEMORY_DEVICE, &buf); break;
            case OOM_PROGRAM: r = test_program_create(dev, TK_ADD_ONE, &prog); break;
            case OOM_QUEUE_COMPUTE: r = accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &queue); break;
            default: r = accel_queue_create(dev, ACCEL_QUEUE_COPY, &queue); break;
            }
            atomic_store(&st.fail_after, -1);
            if (r == ACCEL_OK) {
                accel_signal_destroy(sig);
                accel_buffer_destroy(buf);
                accel_program_destroy(prog);
                accel_queue_destroy(queue);
                break;
            }
            if (!CHECK_RESULT(r, ACCEL_ERROR_OUT_OF_MEMORY) || !CHECK_EQ_INT(atomic_load(&st.outstanding), before)) {
                fprintf(stderr, "    object kind %d, allocation %d\n", kind, k);
                break;
            }
        }
        CHECK(k < 200);
    }
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
}

/* Allocation failures while recording and submitting: submit returns OUT_OF_MEMORY, nothing of the
   batch ran, and the queue works afterwards. */
TEST(out_of_memory_record_and_submit) {
    test_alloc_state st;
    test_alloc_init(&st);
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.allocator = test_allocator(&st);
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_program* p;
    accel_signal* s;
    REQUIRE_OK(test_device_create_desc(d, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 256, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(test_program_create(dev, TK_ADD_ONE, &p));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    static uint32_t big[1024];                      /* a large update, so recording must allocate */
    for (int i = 0; i < 1024; i++) big[i] = (uint32_t)i;
    accel_buffer* big_buf;
    REQUIRE_OK(test_buffer_create(dev, sizeof big, ACCEL_MEMORY_HOST, &big_buf));
    int k, failures = 0;
    for (k = 0; k < 200; k++) {
        uint32_t n = 64;
        atomic_store(&st.fail_after, k);
        accel_queue_fill(q, b, 0, 64, (uint32_t)k + 1);
        accel_queue_exec(q, p, &b, 1, &n, 1, accel_exec_1d(64, 8));
        accel_queue_update(q, big_buf, 0, big, sizeof big);
        accel_queue_barrier(q);
        accel_queue_signal(q, s, (uint64_t)k + 1);
        accel_result r = accel_queue_submit(q);
        atomic_store(&st.fail_after, -1);
        if (r == ACCEL_OK) {
            CHECK_OK(accel_signal_wait(s, (uint64_t)k + 1, ACCEL_WAIT_FOREVER));
            CHECK_EQ_U64(test_buffer_u32(b, 5), (uint32_t)k + 2);
            CHECK_EQ_U64(test_buffer_u32(big_buf, 1000), 1000);
            break;
        }
        failures++;
        if (!CHECK_RESULT(r, ACCEL_ERROR_OUT_OF_MEMORY)) break;
        CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(accel_signal_value(s), 0);
        CHECK_EQ_U64(test_buffer_u32(b, 5), 0);
        CHECK_EQ_U64(test_buffer_u32(big_buf, 1000), 0);
        if (TEST_FAILED_SO_FAR()) { fprintf(stderr, "    at allocation %d\n", k); break; }
    }
    CHECK(k < 200);
    CHECK(failures > 0);            /* recording 4 KiB of update data must allocate something */
    /* and the queue is fine */
    accel_queue_fill(q, b, 0, 4, 99);
    accel_queue_signal(q, s, 1000);
    CHECK_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(s), 1000);
    CHECK_EQ_U64(test_buffer_u32(b, 0), 99);
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(result_strings);
    RUN(result_codes_reached_on_purpose);
    RUN(device_create_errors);
    RUN(device_create_any);
    RUN(bad_record_discards_whole_batch);
    RUN(bad_exec_after_a_good_one_still_fails);
    RUN(null_queue_recording_does_not_crash);
    RUN(out_of_memory_device_create);
    RUN(out_of_memory_object_create);
    RUN(out_of_memory_record_and_submit);
    return test_end();
}
