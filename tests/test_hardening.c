/* tests/test_hardening.c — regression tests for what the hardening work (allocation sweep, API fuzzer,
   soak; see tests/test_alloc.c, tests/fuzz_api.c, tests/soak.c) found in accel.h. One test per finding,
   named after it; the fuzzer's input that found it is kept as tests/fuzz_corpus/regress-NN too. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include <limits.h>

/* fuzz_corpus/regress-02: accel_signal_fail(s, INT_MIN) negated the reason as an int (undefined
   behaviour, caught by UBSan). Any negative reason is valid; the failed value carries -reason. */
TEST(signal_fail_any_negative_reason) {
    static const int reasons[] = { INT_MIN, INT_MIN + 1, -1000000, -10, -9, -5, -1 };
    accel_device* dev;
    accel_queue* q;
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        accel_signal *s, *next;
        uint64_t want = ACCEL_SIGNAL_MAX + 1u + (uint64_t)(0u - (uint32_t)reasons[i]);
        REQUIRE_OK(accel_signal_create(dev, 3, &s));
        REQUIRE_OK(accel_signal_create(dev, 0, &next));
        accel_queue_wait(q, s, 4);
        accel_queue_signal(q, next, 1);                  /* failed through the queue: the same value */
        CHECK_OK(accel_queue_submit(q));
        CHECK_OK(accel_signal_fail(s, (accel_result)reasons[i]));
        CHECK_EQ_U64(accel_signal_value(s), want);
        CHECK(accel_signal_value(s) > ACCEL_SIGNAL_MAX);
        CHECK_RESULT(accel_signal_wait(s, 1, 0), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_RESULT(accel_signal_wait(next, 1, 10000000000ull), ACCEL_ERROR_SIGNAL_FAILED);
        CHECK_EQ_U64(accel_signal_value(next), want);
        CHECK_OK(accel_signal_fail(s, ACCEL_ERROR_BACKEND));   /* the first reason stays */
        CHECK_EQ_U64(accel_signal_value(s), want);
        accel_signal_destroy(s);
        accel_signal_destroy(next);
    }
    CHECK_RESULT(accel_signal_fail(NULL, (accel_result)INT_MIN), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_OK(accel_queue_finish(q, 10000000000ull));
    accel_device_destroy(dev);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(signal_fail_any_negative_reason);
    return test_end();
}
