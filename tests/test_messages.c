/* tests/test_messages.c — what the library tells a developer, read through a capturing logger:
   - every ACCEL_ERROR_INVALID_ARGUMENT logs one error line naming the call and the argument (create
     calls included: accel_buffer_create(dev, NULL, &b) is not silent);
   - labels set with accel_queue_set_label / accel_signal_set_label appear in recording errors and hang
     reports; they are copies (through the device allocator; out of memory keeps the old label); an
     object without a label is never printed as '';
   - a debug device's "nothing submitted can reach" report names the queue that holds the unsubmitted
     signal (the forgotten accel_queue_submit);
   - accel_device_create_any logs an unavailable backend as a warning or info, never as an error;
   - accel_device_info.cpu_threads is the CPU backend's lane count (0 elsewhere). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"

#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__))
#  define MSG_STUCK ACCEL_ERROR_DEADLOCK
#else
#  define MSG_STUCK ACCEL_TIMEOUT
#endif
#define MSG_MS 1000000ull

/* Calls that must fail with INVALID_ARGUMENT and log exactly one error line containing `want`. */
static void msg_expect_invalid(accel_result r, const char* want, const char* call) {
    if (!CHECK_RESULT(r, ACCEL_ERROR_INVALID_ARGUMENT) || !CHECK_EQ_INT(test_log_count(ACCEL_LOG_ERROR), 1) ||
        !CHECK(test_log_contains(want)))
        fprintf(stderr, "    call: %s; wanted a line with \"%s\"\n", call, want);
    test_log_reset();
}
#define EXPECT_INVALID(call, want) do { test_log_reset(); msg_expect_invalid((call), (want), #call); } while (0)

static accel_result msg_device(bool debug, accel_device** dev) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.debug = debug;
    return test_device_create_desc(d, dev);
}

/* Do the messages kept hold only whole UTF-8 characters (none cut at its end or inside)? */
static bool msg_logged_is_utf8(void) {
    for (int k = 0; k < TEST_LOG_KEEP; k++) {
        const unsigned char* m = (const unsigned char*)test_log_g.messages[k];
        while (*m) {
            size_t len = *m < 0x80u ? 1u : *m >= 0xF0u ? 4u : *m >= 0xE0u ? 3u : *m >= 0xC0u ? 2u : 0u;
            if (len == 0) return false;   /* a continuation byte where a character starts */
            for (size_t i = 1; i < len; i++) if ((m[i] & 0xC0u) != 0x80u) return false;
            m += len;
        }
    }
    return true;
}
/* label: n bytes of U+00E9 (2 bytes each) after `off` bytes of 'a' */
static void msg_wide_label(char* label, size_t n, size_t off) {
    memset(label, 'a', off);
    for (size_t i = off; i + 2 <= n; i += 2) memcpy(label + i, "\xC3\xA9", 2);
    label[off + (n - off) / 2 * 2] = '\0';
}

TEST(invalid_arguments_name_the_call_and_the_argument) {
    accel_device *dev, *other = NULL;
    accel_buffer* b = NULL;
    accel_program* p = NULL;
    accel_signal* s = NULL;
    accel_queue* q = NULL;
    accel_device_info info;
    accel_buffer_desc bd;
    accel_program_desc pd;
    accel_device_desc dd;
    const accel_backend* none[1] = { NULL };
    uint64_t big = ACCEL_SIGNAL_MAX + 1;
    char host[16];
    REQUIRE_OK(msg_device(false, &dev));
    memset(&bd, 0, sizeof bd);
    memset(&pd, 0, sizeof pd);
    memset(&dd, 0, sizeof dd);
    dd.logger = test_logger();
    bd.size = 16;
    EXPECT_INVALID(accel_buffer_create(dev, NULL, &b), "accel_buffer_create: desc is NULL");
    EXPECT_INVALID(accel_buffer_create(dev, &bd, NULL), "accel_buffer_create: out is NULL");
    EXPECT_INVALID(accel_program_create(dev, NULL, &p), "accel_program_create: desc is NULL");
    EXPECT_INVALID(accel_program_create(dev, &pd, NULL), "accel_program_create: out is NULL");
    EXPECT_INVALID(accel_program_create(dev, &pd, &p), "accel_program_create");   /* no format at all */
    EXPECT_INVALID(accel_signal_create(dev, 0, NULL), "accel_signal_create: out is NULL");
    EXPECT_INVALID(accel_signal_create(dev, big, &s), "accel_signal_create: initial value");
    EXPECT_INVALID(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, NULL), "accel_queue_create: out is NULL");
    EXPECT_INVALID(accel_queue_create(dev, (accel_queue_type)7, &q), "accel_queue_create: unknown queue type 7");
    EXPECT_INVALID(accel_device_info_get(dev, NULL), "accel_device_info_get: out is NULL");
    EXPECT_INVALID(accel_device_create(&dd, NULL), "accel_device_create: out is NULL");
    EXPECT_INVALID(accel_device_create_any(none, 0, &dd, &other), "accel_device_create_any: count is 0");
    EXPECT_INVALID(accel_device_create_any(none, 1, &dd, &other), "accel_device_create_any: backends[0] is NULL");
    bd.size = 0;
    EXPECT_INVALID(accel_buffer_create(dev, &bd, &b), "accel_buffer_create: size is 0");
    bd.size = 16;
    REQUIRE_OK(accel_buffer_create(dev, &bd, &b));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    EXPECT_INVALID(accel_buffer_read(b, 0, NULL, 4), "accel_buffer_read: host pointer is NULL");
    EXPECT_INVALID(accel_buffer_write(b, 8, host, 16), "accel_buffer_write: offset 8 + size 16 outside buffer");
    EXPECT_INVALID(accel_signal_set(s, big), "accel_signal_set: value");
    EXPECT_INVALID(accel_signal_fail(s, ACCEL_OK), "accel_signal_fail: reason 0 is not an error");
    EXPECT_INVALID(accel_signal_wait(s, big, 0), "accel_signal_wait: value");
    {   /* wait_many names itself, and logs to the first signal's device */
        accel_signal* two[2] = { s, NULL };
        uint64_t vals[2] = { 0, 0 };
        EXPECT_INVALID(accel_signal_wait_many(two, vals, 2, true, 0, NULL), "accel_signal_wait_many: signals[1] is NULL");
        two[1] = s;
        vals[1] = big;
        EXPECT_INVALID(accel_signal_wait_many(two, vals, 2, false, 0, NULL), "accel_signal_wait_many: value");
    }
    CHECK_OK(accel_device_info_get(dev, &info));
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_ERROR), 0);
    accel_device_destroy(dev);
}

TEST(recording_errors_name_the_queue_and_submit_returns_them) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_buffer_desc bd;
    char want[96];
    REQUIRE_OK(msg_device(false, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_set_label(q, "uploader"));
    memset(&bd, 0, sizeof bd);
    bd.size = 64;
    bd.label = "weights";
    REQUIRE_OK(accel_buffer_create(dev, &bd, &b));
    test_log_reset();
    accel_queue_fill(q, b, 0, 128, 0u);
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_ERROR), 1);
    CHECK(test_log_contains("accel_queue_fill: offset 0 + size 128 outside buffer"));
    CHECK(test_log_contains("of 64 bytes"));
    snprintf(want, sizeof want, "queue %p 'uploader'", (void*)q);
    CHECK(test_log_contains(want));
    CHECK(test_log_contains("the next accel_queue_submit returns ACCEL_ERROR_INVALID_ARGUMENT"));
    CHECK(!test_log_contains("''"));
    accel_queue_signal(q, NULL, 1);
    CHECK(test_log_contains("accel_queue_signal: signal is NULL"));
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    /* a view is named as a view of its root; a size of 0 as such */
    {
        accel_buffer* v;
        REQUIRE_OK(accel_buffer_view_create(b, 0, 16, &v));   /* offset 0: every alignment */
        test_log_reset();
        accel_queue_fill(q, v, 8, 16, 0u);
        CHECK(test_log_contains("accel_queue_fill: offset 8 + size 16 outside a view of 16 bytes (at 0 in buffer 'weights' of 64 bytes)"));
        CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
        test_log_reset();
        CHECK_RESULT(accel_buffer_view_create(b, 0, 0, &v), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(test_log_contains("accel_buffer_view_create: size is 0"));
        accel_buffer_destroy(v);
    }
    /* while recording a list, the error is record_end's */
    test_log_reset();
    REQUIRE_OK(accel_queue_record_begin(q));
    accel_queue_fill(q, b, 2, 4, 0u);
    CHECK(test_log_contains("accel_queue_record_end returns ACCEL_ERROR_INVALID_ARGUMENT"));
    CHECK(!test_log_contains("accel_queue_submit"));
    {
        accel_commands* c = NULL;
        CHECK_RESULT(accel_queue_record_end(q, &c), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(c == NULL);
    }
    CHECK_OK(accel_queue_submit(q));
    accel_device_destroy(dev);
}

TEST(labels_are_copies_and_can_be_removed) {
    accel_device* dev;
    accel_signal* s;
    char name[32];
    char want[96];
    uint64_t big = ACCEL_SIGNAL_MAX + 1;
    REQUIRE_OK(msg_device(false, &dev));
    REQUIRE_OK(accel_signal_create(dev, 0, &s));
    REQUIRE_OK(accel_signal_set_label(s, "a label longer than the forty-eight bytes kept inline by the core"));
    snprintf(name, sizeof name, "frame done");
    REQUIRE_OK(accel_signal_set_label(s, name));
    memset(name, 'x', sizeof name - 1);                       /* the library holds its own copy */
    test_log_reset();
    CHECK_RESULT(accel_signal_set(s, big), ACCEL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "signal %p 'frame done'", (void*)s);
    CHECK(test_log_contains(want));
    REQUIRE_OK(accel_signal_set_label(s, NULL));
    test_log_reset();
    CHECK_RESULT(accel_signal_set(s, big), ACCEL_ERROR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "signal %p 'signal'", (void*)s);   /* its kind again (accel.h: Errors) */
    CHECK(test_log_contains(want));
    CHECK(!test_log_contains("frame done"));
    test_log_reset();
    CHECK_RESULT(accel_signal_set_label(NULL, "x"), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_queue_set_label(NULL, "x"), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_device_destroy(dev);
}

TEST(set_label_out_of_memory_keeps_the_old_label) {
    test_alloc_state st;
    accel_device_desc d;
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_buffer_desc bd;
    char want[96];
    test_alloc_init(&st);
    memset(&d, 0, sizeof d);
    d.allocator = test_allocator(&st);
    REQUIRE_OK(test_device_create_desc(d, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_set_label(q, "first"));
    REQUIRE_OK(accel_queue_set_label(q, "second"));          /* replaces (and frees) "first" */
    atomic_store(&st.fail_after, 0);
    test_log_reset();
    CHECK_RESULT(accel_queue_set_label(q, "third"), ACCEL_ERROR_OUT_OF_MEMORY);
    CHECK(test_log_contains("accel_queue_set_label: out of host memory"));
    atomic_store(&st.fail_after, -1);
    memset(&bd, 0, sizeof bd);
    bd.size = 4;
    REQUIRE_OK(accel_buffer_create(dev, &bd, &b));
    test_log_reset();
    accel_queue_fill(q, b, 0, 8, 0u);
    snprintf(want, sizeof want, "queue %p 'second'", (void*)q);
    CHECK(test_log_contains(want));
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
}

/* A debug device: a host wait that times out names the labelled queue and signal it is blocked on. */
TEST(hang_report_uses_labels) {
    TEST_NEEDS_DEBUG();
    accel_device* dev;
    accel_queue* q;
    accel_signal *gate, *out;
    REQUIRE_OK(msg_device(true, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &out));
    REQUIRE_OK(accel_queue_set_label(q, "physics"));
    REQUIRE_OK(accel_signal_set_label(gate, "input ready"));
    REQUIRE_OK(accel_signal_set_label(out, "physics done"));
    accel_queue_wait(q, gate, 1);
    accel_queue_signal(q, out, 1);
    REQUIRE_OK(accel_queue_submit(q));
    for (int tries = 0; tries < 100; tries++) {   /* until the executor reached its wait */
        test_log_reset();
        CHECK_RESULT(accel_signal_wait(out, 1, 20 * MSG_MS), MSG_STUCK);
        if (test_log_contains("'physics'") && test_log_contains("waits for signal")) break;
    }
    CHECK(test_log_contains("waiting for signal"));
    CHECK(test_log_contains("'physics done' >= 1"));
    CHECK(test_log_contains("'physics'"));
    CHECK(test_log_contains("'input ready' >= 1"));
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(out, 1, 10000 * MSG_MS));
    accel_device_destroy(dev);
}

TEST(forgotten_submit_is_named) {
    TEST_NEEDS_DEBUG();
    accel_device* dev;
    accel_queue* q;
    accel_signal* done;
    char want[128];
    REQUIRE_OK(msg_device(true, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_queue_set_label(q, "main"));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    accel_queue_signal(q, done, 3);                              /* ... and no accel_queue_submit */
    test_log_reset();
    CHECK_RESULT(accel_signal_wait(done, 2, 5 * MSG_MS), MSG_STUCK);
    CHECK(test_log_contains("nothing submitted can reach signal"));
    snprintf(want, sizeof want, "queue %p 'main' holds an unsubmitted accel_queue_signal(3)", (void*)q);
    CHECK(test_log_contains(want));
    for (size_t off = 0; off < 2; off++) {   /* a long label: the hang report's parts keep their ends */
        static char label[301];
        msg_wide_label(label, 300, off);
        REQUIRE_OK(accel_queue_set_label(q, label));
        test_log_reset();
        CHECK_RESULT(accel_signal_wait(done, 2, MSG_MS), MSG_STUCK);
        CHECK(test_log_contains("(forgotten accel_queue_submit?)"));
        CHECK(msg_logged_is_utf8());
    }
    CHECK_OK(accel_queue_submit(q));
    /* 3, not 2: the Vulkan validation layer (1.3.239) holds a wait below the value signalled for 10 s */
    CHECK_OK(accel_signal_wait(done, 3, 10000 * MSG_MS));
    test_log_reset();
    CHECK_RESULT(accel_signal_wait(done, 4, 0), ACCEL_TIMEOUT);     /* a poll reports nothing */
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_WARN), 0);
    accel_device_destroy(dev);
}

/* An unavailable backend in accel_device_create_any is the normal fallback: no error lines. */
TEST(create_any_fallback_logs_no_error) {
    accel_device_desc d;
    accel_device* dev = NULL;
    const accel_backend* order[2];
    order[0] = accel_cpu_backend();
    order[1] = accel_cpu_backend();
    memset(&d, 0, sizeof d);
    d.logger = test_logger();
    d.device_index = 1;                            /* the CPU backend has one device: unavailable */
    test_log_reset();
    CHECK_RESULT(accel_device_create_any(order, 2, &d, &dev), ACCEL_ERROR_UNAVAILABLE);
    CHECK(dev == NULL);
    CHECK_EQ_INT(test_log_count(ACCEL_LOG_ERROR), 0);
    CHECK(test_log_count(ACCEL_LOG_WARN) + test_log_count(ACCEL_LOG_INFO) >= 2);
    CHECK(test_log_contains("skipping backend 'cpu': ACCEL_ERROR_UNAVAILABLE"));
}

TEST(device_info_cpu_threads) {
    accel_device_desc d;
    accel_device* dev;
    accel_device_info info;
    memset(&d, 0, sizeof d);
    d.cpu_threads = 3;
    REQUIRE_OK(test_device_create_desc(d, &dev));
    REQUIRE_OK(accel_device_info_get(dev, &info));
#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__))
    CHECK_EQ_INT(info.cpu_threads, test_backend_is_cpu() ? 1 : 0);
#else
    CHECK_EQ_INT(info.cpu_threads, test_backend_is_cpu() ? 3 : 0);
#endif
    accel_device_destroy(dev);
}

/* A label given at creation longer than the core's inline copy is kept whole (issue 9, item 3: no
   fixed-size name buffers), and freed with its object (the counting allocator of the suite's ASan
   and valgrind runs would see a leak). */
TEST(long_create_label_is_kept_whole) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_buffer_desc d;
    char label[160];
    memset(label, 0, sizeof label);
    for (size_t i = 0; i < sizeof label - 2; i++) label[i] = (char)('a' + i % 26);
    label[sizeof label - 2] = 'Z';
    REQUIRE_OK(msg_device(false, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    memset(&d, 0, sizeof d);
    d.size = 64;
    d.label = label;
    REQUIRE_OK(accel_buffer_create(dev, &d, &b));
    test_log_reset();
    accel_queue_fill(q, b, 0, 128, 0);   /* out of range: the recording error names the buffer */
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains(label));
    accel_buffer_destroy(b);
    accel_device_destroy(dev);
}

/* Long labels: the facts after a label of 800 bytes are in the line (a range error builds its part in
   a buffer of its own first), and a line cut at 2,047 bytes ends on a whole character. */
TEST(long_labels_keep_the_facts_and_whole_characters) {
    accel_device* dev;
    accel_queue* q;
    accel_buffer* b;
    accel_buffer_desc d;
    static char label[3001];
    REQUIRE_OK(msg_device(false, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    for (size_t i = 0; i < 800; i += 2) memcpy(label + i, "\xC3\xA9", 2);   /* 400 x U+00E9 */
    label[800] = '\0';
    memset(&d, 0, sizeof d);
    d.size = 64;
    d.label = label;
    REQUIRE_OK(accel_buffer_create(dev, &d, &b));
    test_log_reset();
    accel_queue_fill(q, b, 0, 128, 0);
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains(label));
    CHECK(test_log_contains("' of 64 bytes (queue"));
    CHECK(test_log_contains("the next accel_queue_submit returns"));
    CHECK(msg_logged_is_utf8());
    for (size_t off = 0; off < 3; off++) {   /* the cut at each byte of a 3-byte character */
        memset(label, 'a', off);
        for (size_t i = off; i + 3 <= 3000; i += 3) memcpy(label + i, "\xE2\x82\xAC", 3);   /* U+20AC */
        label[off + (3000 - off) / 3 * 3] = '\0';
        REQUIRE_OK(accel_queue_set_label(q, label));
        test_log_reset();
        accel_queue_fill(q, b, 0, 128, 0);
        CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(test_log_g.next > 0 && strlen(test_log_g.messages[0]) > 2000);
        CHECK(msg_logged_is_utf8());
    }
    accel_buffer_destroy(b);
    accel_queue_destroy(q);
    accel_device_destroy(dev);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(invalid_arguments_name_the_call_and_the_argument);
    RUN(recording_errors_name_the_queue_and_submit_returns_them);
    RUN(labels_are_copies_and_can_be_removed);
    RUN(set_label_out_of_memory_keeps_the_old_label);
    RUN(hang_report_uses_labels);
    RUN(forgotten_submit_is_named);
    RUN(create_any_fallback_logs_no_error);
    RUN(device_info_cpu_threads);
    RUN(long_create_label_is_kept_whole);
    RUN(long_labels_keep_the_facts_and_whole_characters);
    return test_end();
}
