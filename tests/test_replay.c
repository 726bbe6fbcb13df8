/* tests/test_replay.c — recorded command lists (DESIGN §6.2): record once, replay with patched
   constants and buffers; replays between waits and signals, on two queues at once; every recording
   error and bad patch; lifetime (the list and its objects destroyed while replays are pending);
   failure through a replay; 10,000 replays without memory growth. Every backend. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

enum { N = 256, RING = 3 };

/* The scene: a device, a compute queue, the two kernels, a ring of buffers and the list
     0: fill_index(out = ring[0], c = 0, n = N)      out[i] = i + c
     1: add_one(buf = ring[0], n = N)                 out[i] += 1
     2: copy(dst = sink[0..N), src = ring[0])
     3: fill(small[4..12), pattern 0x1111)
     4: update(small[0..4), 0xABCD)
     5: barrier */
typedef struct scene {
    accel_device* dev;
    accel_queue* q;
    accel_program *fill, *add;
    accel_buffer *ring[RING], *sink, *small;
    accel_commands* list;
} scene;

static int record_list(scene* s, accel_queue* q, accel_commands** out) {
    uint32_t fc[2] = { 0, N }, ac[1] = { N }, word = 0xABCDu;
    if (!CHECK_OK(accel_queue_record_begin(q))) return 0;
    accel_queue_exec(q, s->fill, &s->ring[0], 1, fc, 2, accel_exec_1d(N, 64));
    accel_queue_exec(q, s->add, &s->ring[0], 1, ac, 1, accel_exec_1d(N, 64));
    accel_queue_copy(q, s->sink, 0, s->ring[0], 0, N * 4);
    accel_queue_fill(q, s->small, 4, 8, 0x1111u);
    accel_queue_update(q, s->small, 0, &word, 4);
    accel_queue_barrier(q);
    return CHECK_OK(accel_queue_record_end(q, out)) && CHECK(*out != NULL);
}
static int scene_make_desc(scene* s, accel_device_desc desc) {
    memset(s, 0, sizeof *s);
    if (!CHECK_OK(test_device_create_desc(desc, &s->dev)) || !CHECK_OK(accel_queue_create(s->dev, ACCEL_QUEUE_COMPUTE, &s->q)) ||
        !CHECK_OK(test_program_create(s->dev, TK_FILL_INDEX, &s->fill)) || !CHECK_OK(test_program_create(s->dev, TK_ADD_ONE, &s->add)) ||
        !CHECK_OK(test_buffer_create(s->dev, N * 4, ACCEL_MEMORY_HOST, &s->sink)) ||
        !CHECK_OK(test_buffer_create(s->dev, 16, ACCEL_MEMORY_HOST, &s->small)))
        return 0;
    for (int i = 0; i < RING; i++)
        if (!CHECK_OK(test_buffer_create(s->dev, N * 4, ACCEL_MEMORY_DEVICE, &s->ring[i]))) return 0;
    return record_list(s, s->q, &s->list);
}
static int scene_make(scene* s) {
    accel_device_desc desc;
    memset(&desc, 0, sizeof desc);
    return scene_make_desc(s, desc);
}
/* 1 when buf holds i + c + 1 at every i of the first N words. */
static int check_ramp(accel_buffer* buf, uint32_t c) {
    uint32_t got[N];
    if (!CHECK_OK(accel_buffer_read(buf, 0, got, sizeof got))) return 0;
    for (uint32_t i = 0; i < N; i++)
        if (!CHECK_EQ_U64(got[i], i + c + 1)) return 0;
    return 1;
}
static int check_small(accel_buffer* small, uint32_t pattern) {
    return CHECK_EQ_U64(test_buffer_u32(small, 0), 0xABCDu) && CHECK_EQ_U64(test_buffer_u32(small, 1), pattern) &&
           CHECK_EQ_U64(test_buffer_u32(small, 2), pattern) && CHECK_EQ_U64(test_buffer_u32(small, 3), 0);
}
/* The patches of one decoder-like step: step counter c, ring slot r (all three uses), fill pattern. */
static uint32_t step_patches(scene* s, accel_patch* p, uint32_t c, uint32_t r, uint32_t pattern) {
    accel_patch all[5] = {
        { 0, 0, NULL, c }, { 0, 0, s->ring[r], 0 }, { 1, 0, s->ring[r], 0 }, { 2, 1, s->ring[r], 0 }, { 3, 0, NULL, pattern }
    };
    memcpy(p, all, sizeof all);
    return 5;
}

TEST(replay_runs_the_recorded_commands) {
    scene s;
    if (scene_make(&s)) {
        accel_queue_replay(s.q, s.list, NULL, 0);
        CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        check_ramp(s.ring[0], 0);
        check_ramp(s.sink, 0);
        check_small(s.small, 0x1111u);
        accel_commands_destroy(s.list);
        accel_commands_destroy(NULL);
    }
    accel_device_destroy(s.dev);
}

TEST(replay_many_times_with_different_patches) {
    scene s;
    accel_patch p[5];
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    for (uint32_t step = 1; step <= 40 && !TEST_FAILED_SO_FAR(); step++) {
        uint32_t r = step % RING;
        accel_queue_replay(s.q, s.list, p, step_patches(&s, p, step * 10u, r, step));
        REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        check_ramp(s.ring[r], step * 10u);
        check_ramp(s.sink, step * 10u);
        check_small(s.small, step);
    }
    /* three replays in one batch, each into its own slot; then one without patches: nothing stuck */
    for (uint32_t r = 0; r < RING; r++) {
        uint32_t n = step_patches(&s, p, 1000u + r, r, 7);
        accel_queue_replay(s.q, s.list, p, n - 2);   /* not the copy's source, nor the pattern */
    }
    REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
    for (uint32_t r = 0; r < RING; r++) check_ramp(s.ring[r], 1000u + r);
    check_ramp(s.sink, 1000u);                         /* the copy read the recorded ring[0] */
    accel_queue_replay(s.q, s.list, NULL, 0);
    REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
    check_ramp(s.ring[0], 0);
    check_small(s.small, 0x1111u);
    accel_device_destroy(s.dev);                       /* with the list alive: the device frees it */
}

TEST(later_patch_of_a_slot_wins_and_order_does_not_matter) {
    scene s;
    if (scene_make(&s)) {
        accel_patch p[4] = { { 3, 0, NULL, 5 }, { 0, 0, NULL, 1 }, { 0, 0, NULL, 2 }, { 3, 0, NULL, 6 } };
        accel_queue_replay(s.q, s.list, p, 4);
        CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        check_ramp(s.ring[0], 2);
        check_small(s.small, 6);
    }
    accel_device_destroy(s.dev);
}

/* 400 fills, one word each, patched in reverse order, twice each: the later patch of a slot wins
   whatever the order (patches out of order are sorted by command and place, in place, since the insertion
   sort was quadratic, 6.5 s for 100,000 reversed patches), and a replay of sorted patches finds a command's own
   by a binary search (copies scanned every patch for each: 3.9-7.5 s for 100,000). */
TEST(many_patches_in_any_order) {
    enum { WORDS = 400 };
    accel_device* dev = NULL;
    accel_queue* q = NULL;
    accel_buffer* b = NULL;
    accel_commands* list = NULL;
    static accel_patch p[2 * WORDS];
    uint32_t got[WORDS];
    REQUIRE_OK(test_device_create(&dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(test_buffer_create(dev, 4 * WORDS, ACCEL_MEMORY_HOST, &b));
    REQUIRE_OK(accel_queue_record_begin(q));
    for (uint32_t i = 0; i < WORDS; i++) accel_queue_fill(q, b, 4u * i, 4, 0);
    REQUIRE_OK(accel_queue_record_end(q, &list));
    for (int sorted = 0; sorted < 2; sorted++) {
        for (uint32_t k = 0; k < WORDS; k++) {
            uint32_t i = sorted ? k : WORDS - 1 - k;
            p[sorted ? 2 * k : k] = (accel_patch){ i, 0, NULL, 1000u + i };
            p[sorted ? 2 * k + 1 : WORDS + k] = (accel_patch){ i, 0, NULL, 2000u + i + 10000u * (uint32_t)sorted };
        }
        accel_queue_replay(q, list, p, 2 * WORDS);
        REQUIRE_OK(accel_queue_finish(q, ACCEL_WAIT_FOREVER));
        REQUIRE_OK(accel_buffer_read(b, 0, got, sizeof got));
        for (uint32_t i = 0; i < WORDS && !TEST_FAILED_SO_FAR(); i++)
            CHECK_EQ_U64(got[i], 2000u + i + 10000u * (uint32_t)sorted);
    }
    accel_commands_destroy(list);
    accel_device_destroy(dev);
}

/* 100 commands (native forms split long lists: Vulkan into 32-command chunks): patches in the
   middle, unpatched runs around them, patches gone at the next replay. */
TEST(long_list_patched_in_the_middle) {
    scene s;
    accel_commands* list = NULL;
    uint32_t n = N, got[N];
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_queue_record_begin(s.q));
    for (int i = 0; i < 100; i++) accel_queue_exec(s.q, s.add, &s.ring[0], 1, &n, 1, accel_exec_1d(N, 64));
    REQUIRE_OK(accel_queue_record_end(s.q, &list));
    accel_queue_replay(s.q, list, (accel_patch[]){ { 50, 0, s.ring[1], 0 }, { 70, 0, NULL, 16 }, { 99, 0, s.ring[2], 0 } }, 3);
    accel_queue_replay(s.q, list, (accel_patch[]){ { 31, 0, s.ring[1], 0 }, { 32, 0, s.ring[1], 0 } }, 2);
    accel_queue_replay(s.q, list, NULL, 0);
    REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
    REQUIRE_OK(accel_buffer_read(s.ring[0], 0, got, sizeof got));
    for (uint32_t i = 0; i < N && !TEST_FAILED_SO_FAR(); i++)   /* CPU kernels bound by global_size, not by n */
        CHECK_EQ_U64(got[i], 98u - (i >= 16 && !test_backend_is_cpu()) + 98u + 100u);
    REQUIRE_OK(accel_buffer_read(s.ring[1], 0, got, sizeof got));
    for (uint32_t i = 0; i < N && !TEST_FAILED_SO_FAR(); i++) CHECK_EQ_U64(got[i], 3);
    CHECK_EQ_U64(test_buffer_u32(s.ring[2], N - 1), 1);
    accel_commands_destroy(list);
    accel_device_destroy(s.dev);
}

/* A replay alone in its segment, without patches (Vulkan submits the list's own primary then), of a
   list longer than a chunk whose last command is observable: every command runs, every time. */
TEST(unpatched_replay_alone_runs_every_command) {
    scene s;
    accel_commands* list = NULL;
    accel_signal* done = NULL;
    uint32_t n = N, word = 77;
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_signal_create(s.dev, 0, &done));
    REQUIRE_OK(accel_queue_record_begin(s.q));
    for (int i = 0; i < 40; i++) accel_queue_exec(s.q, s.add, &s.ring[1], 1, &n, 1, accel_exec_1d(N, 64));
    accel_queue_update(s.q, s.small, 8, &word, 4);
    REQUIRE_OK(accel_queue_record_end(s.q, &list));
    for (uint64_t round = 1; round <= 3; round++) {
        accel_queue_replay(s.q, list, NULL, 0);
        accel_queue_signal(s.q, done, round);
        REQUIRE_OK(accel_queue_submit(s.q));
        CHECK_OK(accel_signal_wait(done, round, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(s.ring[1], N - 1), 40 * round);
        CHECK_EQ_U64(test_buffer_u32(s.small, 2), 77);
        REQUIRE_OK(test_buffer_set_u32(s.small, 4, 0));
    }
    accel_commands_destroy(list);
    accel_device_destroy(s.dev);
}

/* The core's generic form, for a backend without commands_build: the CPU backend's table with those
   slots cleared (only where this file compiles accel.h's implementation, which declares the table). */
TEST(generic_form_of_a_backend_without_native_lists) {
#if defined(ACCEL_I_CPU_MAX_BUFFERS)
    static accel_backend generic;
    scene s;
    accel_device_desc desc;
    accel_patch p[5];
    if (!test_backend_is_cpu()) SKIP("the generic form is checked through a copy of the CPU backend's table");
    generic = *accel_cpu_backend();
    generic.commands_build = NULL;
    generic.commands_free = NULL;
    memset(&desc, 0, sizeof desc);
    desc.backend = &generic;
    if (scene_make_desc(&s, desc)) {
        CHECK(s.list->native == NULL);
        for (uint32_t step = 1; step <= 6 && !TEST_FAILED_SO_FAR(); step++) {
            accel_queue_replay(s.q, s.list, p, step_patches(&s, p, step * 3u, step % RING, step));
            REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
            check_ramp(s.ring[step % RING], step * 3u);
            check_ramp(s.sink, step * 3u);
            check_small(s.small, step);
        }
        accel_queue_replay(s.q, s.list, (accel_patch[]){ { 4, 0, NULL, 1 } }, 1);   /* still validated */
        CHECK_RESULT(accel_queue_submit(s.q), ACCEL_ERROR_INVALID_ARGUMENT);
        accel_queue_replay(s.q, s.list, NULL, 0);
        REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        check_ramp(s.ring[0], 0);
        /* an exec over no work stays in the list (it keeps its index) and is built as nothing: the
           commands after it run, and their patches apply */
        accel_commands* idle = NULL;
        uint32_t fc[2] = { 0, N };
        REQUIRE_OK(accel_queue_record_begin(s.q));
        accel_queue_exec(s.q, s.fill, &s.ring[0], 1, fc, 2, accel_exec_1d(0, 64));
        accel_queue_fill(s.q, s.small, 4, 8, 0x77u);
        REQUIRE_OK(accel_queue_record_end(s.q, &idle));
        accel_queue_replay(s.q, idle, NULL, 0);
        REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(s.small, 1), 0x77u);
        accel_queue_replay(s.q, idle, (accel_patch[]){ { 0, 0, NULL, 9 }, { 1, 0, NULL, 0x99u } }, 2);
        REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(test_buffer_u32(s.small, 2), 0x99u);
        accel_commands_destroy(idle);
    }
    accel_device_destroy(s.dev);
#else
    SKIP("accel.h's implementation is compiled elsewhere in this configuration");
#endif
}

TEST(empty_list_and_copy_only_list_on_a_copy_queue) {
    scene s;
    accel_queue* cq = NULL;
    accel_commands *empty = NULL, *copies = NULL;
    accel_signal* done = NULL;
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_queue_create(s.dev, ACCEL_QUEUE_COPY, &cq));
    REQUIRE_OK(accel_signal_create(s.dev, 0, &done));
    REQUIRE_OK(accel_queue_record_begin(cq));
    REQUIRE_OK(accel_queue_record_end(cq, &empty));
    REQUIRE_OK(accel_queue_record_begin(cq));
    accel_queue_copy(cq, s.ring[1], 0, s.ring[0], 0, N * 4);
    accel_queue_fill(cq, s.small, 0, 16, 9);
    REQUIRE_OK(accel_queue_record_end(cq, &copies));
    accel_queue_replay(s.q, s.list, NULL, 0);
    accel_queue_signal(s.q, done, 1);
    REQUIRE_OK(accel_queue_submit(s.q));
    accel_queue_wait(cq, done, 1);
    accel_queue_replay(cq, empty, NULL, 0);
    accel_queue_replay(cq, copies, (accel_patch[]){ { 0, 0, s.ring[2], 0 } }, 1);
    accel_queue_replay(cq, empty, NULL, 0);
    CHECK_OK(accel_queue_finish(cq, ACCEL_WAIT_FOREVER));
    check_ramp(s.ring[2], 0);
    CHECK_EQ_U64(test_buffer_u32(s.small, 3), 9);
    accel_queue_replay(cq, s.list, NULL, 0);            /* execs on a COPY queue */
    CHECK_RESULT(accel_queue_submit(cq), ACCEL_ERROR_INVALID_ARGUMENT);
    accel_commands_destroy(empty);
    accel_commands_destroy(copies);
    accel_device_destroy(s.dev);
}

TEST(replays_between_waits_and_signals) {
    scene s;
    accel_signal *gate = NULL, *done = NULL;
    accel_patch p[5];
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_signal_create(s.dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(s.dev, 0, &done));
    accel_queue_wait(s.q, gate, 1);
    accel_queue_replay(s.q, s.list, p, step_patches(&s, p, 5, 1, 5));
    accel_queue_signal(s.q, done, 1);
    accel_queue_wait(s.q, gate, 2);
    accel_queue_replay(s.q, s.list, p, step_patches(&s, p, 7, 2, 7));
    accel_queue_signal(s.q, done, 2);
    REQUIRE_OK(accel_queue_submit(s.q));
    CHECK_RESULT(accel_signal_wait(done, 1, TEST_HAVE_THREADS ? 20000000u : 0), ACCEL_TIMEOUT);
    CHECK_EQ_U64(test_buffer_u32(s.small, 0), 0);       /* nothing ran before the gate */
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    check_ramp(s.ring[1], 5);
    check_small(s.small, 5);
    CHECK_RESULT(accel_signal_wait(done, 2, 0), ACCEL_TIMEOUT);
    CHECK_OK(accel_signal_set(gate, 2));
    CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(accel_signal_value(done), 2);
    check_ramp(s.ring[2], 7);
    check_ramp(s.ring[1], 5);
    check_small(s.small, 7);
    accel_device_destroy(s.dev);
}

/* Two queues replay one list (fill_index, add_one) at once, each into its own buffer (threads where
   there are). */
typedef struct replayer { accel_commands* list; accel_queue* q; accel_buffer* out; uint32_t base; int ok; } replayer;
static void replayer_main(void* arg) {
    replayer* r = (replayer*)arg;
    accel_patch p[3] = { { 0, 0, r->out, 0 }, { 1, 0, r->out, 0 }, { 0, 0, NULL, 0 } };
    r->ok = 1;
    for (uint32_t i = 0; i < 100 && r->ok; i++) {
        p[2].value = r->base + i;
        accel_queue_replay(r->q, r->list, p, 3);
        accel_queue_replay(r->q, r->list, p, 3);
        r->ok = accel_queue_finish(r->q, ACCEL_WAIT_FOREVER) == ACCEL_OK && test_buffer_u32(r->out, 17) == 17 + r->base + i + 1;
    }
}
TEST(replay_on_two_queues_at_once) {
    scene s;
    accel_queue* q2 = NULL;
    accel_commands* two = NULL;
    uint32_t fc[2] = { 0, N }, ac[1] = { N };
    replayer r[2];
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_queue_create(s.dev, ACCEL_QUEUE_COMPUTE, &q2));
    REQUIRE_OK(accel_queue_record_begin(s.q));
    accel_queue_exec(s.q, s.fill, &s.ring[0], 1, fc, 2, accel_exec_1d(N, 64));
    accel_queue_exec(s.q, s.add, &s.ring[0], 1, ac, 1, accel_exec_1d(N, 64));
    REQUIRE_OK(accel_queue_record_end(s.q, &two));
    r[0] = (replayer){ two, s.q, s.ring[1], 0, 0 };
    r[1] = (replayer){ two, q2, s.ring[2], 5000, 0 };
#if TEST_HAVE_THREADS
    test_thread t[2];
    for (int i = 0; i < 2; i++) REQUIRE(test_thread_start(&t[i], replayer_main, &r[i]));
    for (int i = 0; i < 2; i++) test_thread_join(&t[i]);
#else
    replayer_main(&r[0]);
    replayer_main(&r[1]);
#endif
    CHECK(r[0].ok && r[1].ok);
    check_ramp(s.ring[1], 99);
    check_ramp(s.ring[2], 5099);
    accel_commands_destroy(two);
    accel_commands_destroy(s.list);
    accel_device_destroy(s.dev);
}

/* Replays of one list on many queues, each waiting for the next queue's later replay: nothing orders
   them but the signals, so each must run as soon as its wait is met (CUDA orders launches of one graph
   instance behind each other on any stream: shared instances would hang here; the mock does the
   same). More queues than a list has instances; then queues destroyed and new ones in their place. */
enum { CROSS = 6 };
static void cross_round(scene* s, accel_commands* list, accel_queue* const* qs, int n, accel_buffer* const* bufs, uint32_t pattern) {
    accel_signal* sig[CROSS + 1];
    for (int i = 0; i <= n; i++) REQUIRE_OK(accel_signal_create(s->dev, 0, &sig[i]));
    for (int i = 0; i < n; i++) {   /* queue i: wait for queue i + 1, replay into its buffer, signal */
        if (i + 1 < n) accel_queue_wait(qs[i], sig[i + 1], 1);
        accel_queue_replay(qs[i], list, (accel_patch[]){ { 0, 0, bufs[i], 0 }, { 1, 0, bufs[i], 0 }, { 0, 0, NULL, pattern + (uint32_t)i } }, 3);
        accel_queue_signal(qs[i], sig[i], 1);
        CHECK_OK(accel_queue_submit(qs[i]));
    }
    accel_result r = accel_signal_wait(sig[0], 1, 10000000000ull);
    CHECK_OK(r);
    if (r != ACCEL_OK) for (int i = 0; i < n; i++) accel_signal_fail(sig[i], ACCEL_ERROR_BACKEND);   /* to tear down */
    for (int i = 0; i < n; i++) CHECK_OK(accel_queue_finish(qs[i], ACCEL_WAIT_FOREVER));
    for (int i = 0; i < n && r == ACCEL_OK; i++) check_ramp(bufs[i], pattern + (uint32_t)i);   /* fill, then add one */
    for (int i = 0; i <= n; i++) accel_signal_destroy(sig[i]);
}
TEST(replays_on_queues_that_wait_for_each_other) {
    scene s;
    accel_queue* qs[CROSS];
    accel_buffer* bufs[CROSS];
    accel_commands* two = NULL;
    uint32_t fc[2] = { 0, N }, ac[1] = { N };
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_queue_record_begin(s.q));   /* fill, add one */
    accel_queue_exec(s.q, s.fill, &s.ring[0], 1, fc, 2, accel_exec_1d(N, 64));
    accel_queue_exec(s.q, s.add, &s.ring[0], 1, ac, 1, accel_exec_1d(N, 64));
    REQUIRE_OK(accel_queue_record_end(s.q, &two));
    for (int i = 0; i < CROSS; i++) {
        REQUIRE_OK(accel_queue_create(s.dev, ACCEL_QUEUE_COMPUTE, &qs[i]));
        REQUIRE_OK(test_buffer_create(s.dev, N * 4, ACCEL_MEMORY_DEVICE, &bufs[i]));
    }
    for (uint32_t round = 0; round < 3 && !TEST_FAILED_SO_FAR(); round++) cross_round(&s, two, qs, CROSS, bufs, 100u * round);
    for (int i = 0; i < CROSS - 2; i++) {   /* new queues where the first ones were */
        accel_queue_destroy(qs[i]);
        REQUIRE_OK(accel_queue_create(s.dev, ACCEL_QUEUE_COMPUTE, &qs[i]));
    }
    for (uint32_t round = 3; round < 6 && !TEST_FAILED_SO_FAR(); round++) cross_round(&s, two, qs, CROSS, bufs, 100u * round);
    accel_device_destroy(s.dev);
}

TEST(recording_errors) {
    scene s;
    accel_commands* c = (accel_commands*)&s;   /* must come back NULL */
    accel_signal* sig = NULL;
    uint32_t one = 1;
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_signal_create(s.dev, 0, &sig));
    CHECK_RESULT(accel_queue_record_begin(NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_queue_record_end(NULL, &c), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(c == NULL);
    CHECK_RESULT(accel_queue_record_end(s.q, &c), ACCEL_ERROR_INVALID_ARGUMENT);   /* not recording */
    accel_queue_barrier(s.q);                                                     /* a non-empty batch */
    CHECK_RESULT(accel_queue_record_begin(s.q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_OK(accel_queue_submit(s.q));
    accel_queue_signal(s.q, sig, ACCEL_SIGNAL_MAX + 1);                           /* a pending error */
    CHECK_RESULT(accel_queue_record_begin(s.q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_RESULT(accel_queue_submit(s.q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_OK(accel_queue_record_begin(s.q));
    CHECK_RESULT(accel_queue_record_begin(s.q), ACCEL_ERROR_INVALID_ARGUMENT);    /* already recording */
    CHECK_OK(accel_queue_record_end(s.q, &c));                                    /* ... and still fine */
    accel_commands_destroy(c);
    /* each of these fails the recording; the queue records ordinary batches afterwards */
    for (int k = 0; k < 6; k++) {
        c = (accel_commands*)&s;
        REQUIRE_OK(accel_queue_record_begin(s.q));
        accel_queue_fill(s.q, s.small, 0, 16, 0xBAD);
        switch (k) {
        case 0: accel_queue_wait(s.q, sig, 1); break;
        case 1: accel_queue_signal(s.q, sig, 1); break;
        case 2: accel_queue_replay(s.q, s.list, NULL, 0); break;
        case 3: CHECK_RESULT(accel_queue_submit(s.q), ACCEL_ERROR_INVALID_ARGUMENT); break;
        case 4: accel_queue_exec(s.q, s.add, s.ring, 2, &one, 1, accel_exec_1d(N, 64)); break;   /* wrong count */
        case 5: accel_queue_copy(s.q, s.small, 0, s.small, 4, 8); break;                          /* overlap */
        }
        CHECK_RESULT(accel_queue_record_end(s.q, &c), ACCEL_ERROR_INVALID_ARGUMENT);
        CHECK(c == NULL);
        CHECK_RESULT(accel_queue_record_end(s.q, &c), ACCEL_ERROR_INVALID_ARGUMENT);  /* recording is over */
        accel_queue_signal(s.q, sig, (uint64_t)k + 1);
        CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(accel_signal_value(sig), (uint64_t)k + 1);
        CHECK(test_buffer_u32(s.small, 0) != 0xBADu);                             /* the list never ran */
    }
    REQUIRE_OK(accel_queue_record_begin(s.q));
    CHECK_RESULT(accel_queue_record_end(s.q, NULL), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));                       /* not recording any more */
    accel_device_destroy(s.dev);
}

/* Each bad replay fails its batch: nothing of it runs, its signal is not signalled. */
static void expect_bad_replay(scene* s, accel_commands* list, const accel_patch* p, uint32_t n, accel_signal* sig, const char* what) {
    test_buffer_set_u32(s->sink, 1, 0x5EED);
    accel_queue_fill(s->q, s->sink, 0, 4, 1);
    accel_queue_replay(s->q, list, p, n);
    accel_queue_signal(s->q, sig, 1);
    if (!CHECK_RESULT(accel_queue_submit(s->q), ACCEL_ERROR_INVALID_ARGUMENT)) fprintf(stderr, "    bad replay: %s\n", what);
    CHECK_OK(accel_queue_finish(s->q, ACCEL_WAIT_FOREVER));
    CHECK_EQ_U64(test_buffer_u32(s->sink, 0), 0x5EED);
    CHECK_EQ_U64(accel_signal_value(sig), 0);
}
TEST(bad_patches_are_recording_errors) {
    scene s;
    accel_device* other = NULL;
    accel_buffer *tiny = NULL, *foreign = NULL;
    accel_signal* sig = NULL;
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_signal_create(s.dev, 0, &sig));
    REQUIRE_OK(test_buffer_create(s.dev, 8, ACCEL_MEMORY_HOST, &tiny));
    REQUIRE_OK(test_device_create(&other));
    REQUIRE_OK(test_buffer_create(other, N * 4, ACCEL_MEMORY_HOST, &foreign));
    struct { accel_patch p; const char* what; } bad[] = {
        { { 6, 0, NULL, 1 }, "command out of range" },
        { { 0, 1, s.ring[1], 0 }, "exec binding out of range" },
        { { 0, 2, NULL, 1 }, "exec constant out of range" },
        { { 2, 0, NULL, 1 }, "copy constant" },
        { { 2, 2, s.ring[1], 0 }, "copy buffer 2" },
        { { 2, 0, tiny, 0 }, "copy dst too small" },
        { { 2, 1, tiny, 0 }, "copy src too small" },
        { { 3, 0, tiny, 0 }, "fill dst too small" },
        { { 3, 1, NULL, 1 }, "fill constant 1" },
        { { 4, 0, NULL, 1 }, "update constant" },
        { { 4, 0, s.small, 0 }, "update buffer" },
        { { 5, 0, NULL, 1 }, "barrier" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) expect_bad_replay(&s, s.list, &bad[i].p, 1, sig, bad[i].what);
    expect_bad_replay(&s, NULL, NULL, 0, sig, "NULL list");
    expect_bad_replay(&s, s.list, NULL, 1, sig, "patches NULL with a count");
    /* a bad patch after good ones still fails the whole batch */
    expect_bad_replay(&s, s.list, (accel_patch[]){ { 0, 1, NULL, 3 }, { 1, 0, s.ring[2], 0 }, { 9, 0, NULL, 0 } }, 3, sig, "third patch bad");
    /* patching the copy's dst to its src (recorded ranges overlap then) */
    {
        accel_commands* c2 = NULL;
        REQUIRE_OK(accel_queue_record_begin(s.q));
        accel_queue_copy(s.q, s.ring[1], 0, s.ring[0], 8, 64);
        REQUIRE_OK(accel_queue_record_end(s.q, &c2));
        expect_bad_replay(&s, c2, (accel_patch[]){ { 0, 0, s.ring[0], 0 } }, 1, sig, "copy overlaps itself");
        accel_commands_destroy(c2);
    }
    /* another device's objects: a list never; a patch buffer only where the backend shares memory */
    {
        accel_queue* oq = NULL;
        accel_commands* oc = NULL;
        REQUIRE_OK(accel_queue_create(other, ACCEL_QUEUE_COMPUTE, &oq));
        REQUIRE_OK(accel_queue_record_begin(oq));
        accel_queue_fill(oq, foreign, 0, 16, 3);
        REQUIRE_OK(accel_queue_record_end(oq, &oc));
        expect_bad_replay(&s, oc, NULL, 0, sig, "list of another device");
        accel_commands_destroy(oc);
    }
    if (!test_backend_is_cpu()) {
        expect_bad_replay(&s, s.list, (accel_patch[]){ { 0, 0, foreign, 0 } }, 1, sig, "buffer of another device");
    } else {   /* CPU devices share host memory: v1 lets them use each other's buffers */
        accel_queue_replay(s.q, s.list, (accel_patch[]){ { 0, 0, foreign, 0 }, { 1, 0, foreign, 0 } }, 2);
        CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        check_ramp(foreign, 0);
    }
    accel_device_destroy(other);
    accel_device_destroy(s.dev);
}

TEST(destroy_the_list_and_its_objects_while_replays_are_pending) {
    scene s;
    accel_signal* gate = NULL;
    accel_buffer *patched = NULL, *out = NULL;
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_signal_create(s.dev, 0, &gate));
    REQUIRE_OK(test_buffer_create(s.dev, N * 4, ACCEL_MEMORY_DEVICE, &patched));
    out = s.sink;
    accel_queue_wait(s.q, gate, 1);
    accel_queue_replay(s.q, s.list, (accel_patch[]){ { 0, 0, patched, 0 }, { 1, 0, patched, 0 }, { 2, 1, patched, 0 }, { 0, 0, NULL, 40 } }, 4);
    accel_queue_replay(s.q, s.list, (accel_patch[]){ { 0, 0, NULL, 50 } }, 1);
    REQUIRE_OK(accel_queue_submit(s.q));
    accel_commands_destroy(s.list);
    accel_buffer_destroy(patched);
    accel_program_destroy(s.fill);
    accel_program_destroy(s.add);
    for (int i = 0; i < RING; i++) accel_buffer_destroy(s.ring[i]);
    accel_buffer_destroy(s.small);
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
    check_ramp(out, 50);
    accel_device_destroy(s.dev);
}

TEST(failure_flows_through_a_replay) {
    scene s;
    accel_signal *gate = NULL, *done = NULL;
    if (!scene_make(&s)) { accel_device_destroy(s.dev); return; }
    REQUIRE_OK(accel_signal_create(s.dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(s.dev, 0, &done));
    accel_queue_wait(s.q, gate, 1);
    accel_queue_replay(s.q, s.list, NULL, 0);
    accel_queue_signal(s.q, done, 1);
    REQUIRE_OK(accel_queue_submit(s.q));
    CHECK_OK(accel_signal_fail(gate, ACCEL_ERROR_BACKEND));
    CHECK_RESULT(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER), ACCEL_ERROR_SIGNAL_FAILED);
    CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
    if (test_backend_is_cpu()) {   /* v1: nothing behind a failed wait runs; GPU backends that handed the
                                      wait to the device may run it (DESIGN 6.1), its signals read failed */
        CHECK_EQ_U64(test_buffer_u32(s.small, 0), 0);
        CHECK_EQ_U64(test_buffer_u32(s.sink, 5), 0);
    }
    CHECK(accel_signal_value(done) > ACCEL_SIGNAL_MAX);
    accel_device_destroy(s.dev);
}

TEST(ten_thousand_replays_without_memory_growth) {
    scene s;
    test_alloc_state st;
    accel_device_desc desc;
    accel_patch p[5];
    long before;
    test_alloc_init(&st);
    memset(&desc, 0, sizeof desc);
    desc.allocator = test_allocator(&st);
    if (!scene_make_desc(&s, desc)) { accel_device_destroy(s.dev); return; }
    /* warm up until a block of 50 replays allocates nothing more: the queue keeps a few recycled
       batches (how many depends on timing); a leak grows every block */
    before = -1;
    for (uint32_t block = 0; block < 20 && before != atomic_load(&st.outstanding); block++) {
        before = atomic_load(&st.outstanding);
        for (uint32_t i = 0; i < 50; i++) {
            accel_queue_replay(s.q, s.list, p, step_patches(&s, p, i, i % RING, i));
            if (i % 10 == 9) REQUIRE_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        }
    }
    before = atomic_load(&st.outstanding);
    for (uint32_t i = 0; i < 10000 && !TEST_FAILED_SO_FAR(); i++) {
        accel_queue_replay(s.q, s.list, p, step_patches(&s, p, i, i % RING, i));
        if (i % 10 == 9) CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
    }
    CHECK_EQ_INT(atomic_load(&st.outstanding), before);
    check_ramp(s.ring[9999 % RING], 9999);
    check_small(s.small, 9999);
    accel_device_destroy(s.dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&st.size_mismatch), 0);
}

TEST(record_end_out_of_memory_leaks_nothing) {
    int ok = 0;
    for (long k = 0; k < 200 && !ok && !TEST_FAILED_SO_FAR(); k++) {
        scene s;
        test_alloc_state st;
        accel_device_desc desc;
        accel_commands* c = NULL;
        accel_result r;
        test_alloc_init(&st);
        memset(&desc, 0, sizeof desc);
        desc.allocator = test_allocator(&st);
        if (!scene_make_desc(&s, desc)) { accel_device_destroy(s.dev); return; }
        accel_commands_destroy(s.list);
        atomic_store(&st.fail_after, k);
        REQUIRE_OK(accel_queue_record_begin(s.q));
        accel_queue_exec(s.q, s.add, &s.ring[1], 1, (uint32_t[]){ N }, 1, accel_exec_1d(N, 64));
        accel_queue_update(s.q, s.small, 0, "abcd", 4);
        r = accel_queue_record_end(s.q, &c);
        atomic_store(&st.fail_after, -1);
        CHECK(r == ACCEL_OK || r == ACCEL_ERROR_OUT_OF_MEMORY);
        CHECK(r == ACCEL_OK ? c != NULL : c == NULL);
        if (r == ACCEL_OK) {
            ok = 1;
            accel_queue_replay(s.q, c, NULL, 0);
            CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
            CHECK_EQ_U64(test_buffer_u32(s.ring[1], 3), 1);
            accel_commands_destroy(c);
        }
        CHECK_OK(accel_queue_finish(s.q, ACCEL_WAIT_FOREVER));
        accel_device_destroy(s.dev);
        CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
    }
    CHECK(ok);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(replay_runs_the_recorded_commands);
    RUN(replay_many_times_with_different_patches);
    RUN(later_patch_of_a_slot_wins_and_order_does_not_matter);
    RUN(many_patches_in_any_order);
    RUN(long_list_patched_in_the_middle);
    RUN(unpatched_replay_alone_runs_every_command);
    RUN(generic_form_of_a_backend_without_native_lists);
    RUN(empty_list_and_copy_only_list_on_a_copy_queue);
    RUN(replays_between_waits_and_signals);
    RUN(replay_on_two_queues_at_once);
    RUN(replays_on_queues_that_wait_for_each_other);
    RUN(recording_errors);
    RUN(bad_patches_are_recording_errors);
    RUN(destroy_the_list_and_its_objects_while_replays_are_pending);
    RUN(failure_flows_through_a_replay);
    RUN(ten_thousand_replays_without_memory_growth);
    RUN(record_end_out_of_memory_leaks_nothing);
    return test_end();
}
