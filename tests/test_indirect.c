/* tests/test_indirect.c — indirect execs (accel_queue_exec_indirect, DESIGN.md 7.5): the group counts are
   read from a buffer when the command runs. Most tests run add_one (local size 64, n = NN) indirectly:
   counts (x, y, z) add y * z to each of the first 64 * x words, so the buffer tells how many groups ran.
   Counts written by a kernel of the same batch (set_counts), the grid a kernel sees, counts of 0, counts
   over the limits (skipped; a debug device says so), recording errors, patched counts in command lists,
   many indirect execs on two queues (each runs once, in order), counts written after submit. Runs on
   every backend (Vulkan: vkCmdDispatchIndirect under the validation layer; CUDA: a host step) and in
   the no-threads build. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

enum { NN = 512, CW = 16 };   /* words of the data buffer; of the counts buffer */
static const uint32_t local64[3] = { 64, 1, 1 };

typedef struct ind_rig {
    accel_device* dev;
    accel_queue* q;
    accel_program *add, *set;
    accel_buffer *buf, *counts;
    accel_signal* s;
} ind_rig;
static bool ind_rig_open_desc(ind_rig* r, accel_device_desc desc) {
    memset(r, 0, sizeof *r);
    if (!CHECK_OK(test_device_create_desc(desc, &r->dev))) return false;
    if (!CHECK_OK(accel_queue_create(r->dev, ACCEL_QUEUE_COMPUTE, &r->q))) return false;
    if (!CHECK_OK(test_program_create(r->dev, TK_ADD_ONE, &r->add))) return false;
    if (!CHECK_OK(test_program_create(r->dev, TK_SET_COUNTS, &r->set))) return false;
    if (!CHECK_OK(test_buffer_create(r->dev, NN * 4, ACCEL_MEMORY_DEVICE, &r->buf))) return false;
    if (!CHECK_OK(test_buffer_create(r->dev, CW * 4, ACCEL_MEMORY_DEVICE, &r->counts))) return false;
    if (!CHECK_OK(test_buffer_set_u32(r->buf, NN, 0))) return false;
    if (!CHECK_OK(test_buffer_set_u32(r->counts, CW, 0))) return false;
    return CHECK_OK(accel_signal_create(r->dev, 0, &r->s));
}
static bool ind_rig_open(ind_rig* r) {
    accel_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.label = "test";
    return ind_rig_open_desc(r, desc);
}
/* set_counts on the device: counts[word..word+2] = x, y, z. */
static void ind_set(ind_rig* r, accel_queue* q, uint32_t word, uint32_t x, uint32_t y, uint32_t z) {
    uint32_t c[4] = { word, x, y, z };
    accel_queue_exec(q, r->set, &r->counts, 1, c, 4, accel_exec_1d(1, 1));
}
/* The indirect add_one on counts + offset. */
static void ind_add(ind_rig* r, accel_queue* q, accel_buffer* counts, size_t offset) {
    uint32_t n = NN;
    accel_queue_exec_indirect(q, r->add, &r->buf, 1, &n, 1, local64, counts, offset);
}
/* Writes counts (x, y, z) at word `word` of the counts buffer from the host. */
static bool ind_host_counts(accel_buffer* counts, uint32_t word, uint32_t x, uint32_t y, uint32_t z) {
    uint32_t c[3] = { x, y, z };
    return CHECK_OK(accel_buffer_write(counts, (size_t)word * 4, c, sizeof c));
}
/* buf[i] == va for i < a, == vb for a <= i < b, 0 from there on (read at once; the first wrong word is
   reported). */
static bool ind_expect2(accel_buffer* buf, uint32_t a, uint32_t va, uint32_t b, uint32_t vb) {
    static uint32_t words[NN];
    if (!CHECK_OK(accel_buffer_read(buf, 0, words, sizeof words))) return false;
    for (uint32_t i = 0; i < NN; i++) {
        uint32_t want = i < a ? va : i < b ? vb : 0;
        if (words[i] == want) continue;
        fprintf(stderr, "    word %u of %u:\n", i, (unsigned)NN);
        return CHECK_EQ_U64(words[i], want);
    }
    return true;
}
static bool ind_expect(accel_buffer* buf, uint32_t upto, uint32_t want) {
    return ind_expect2(buf, upto, want, upto, 0);
}
static accel_result ind_run(ind_rig* r, accel_queue* q, uint64_t v) {
    accel_result sr;
    accel_queue_signal(q, r->s, v);
    sr = accel_queue_submit(q);
    if (sr != ACCEL_OK) return sr;
    return accel_signal_wait(r->s, v, ACCEL_WAIT_FOREVER);
}

/* A kernel writes the counts, the next command runs on them: twice in one batch, so the second exec
   must see the second write, and the fill before the first must not be what it reads. */
TEST(counts_written_by_the_previous_command) {
    ind_rig r;
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    accel_queue_fill(r.q, r.counts, 0, CW * 4, 7);
    /* groups that write the same words would race (add_one is a plain +=, and a pool runs groups at
       once: 2 x 3 x 1 lost an increment in a CI run), so the grids here are along x only; the y and z
       counts are the_grid_is_the_counts' */
    ind_set(&r, r.q, 1, 6, 1, 1);          /* 6 x 1 x 1 at byte 4 */
    ind_add(&r, r.q, r.counts, 4);
    ind_set(&r, r.q, 1, 1, 1, 1);
    ind_add(&r, r.q, r.counts, 4);
    CHECK_OK(ind_run(&r, r.q, 1));
    ind_expect2(r.buf, 64, 2, 384, 1);      /* words 0..63: 1 + 1; 64..383: 1 */
    accel_device_destroy(r.dev);
}

/* The kernel sees the grid of the counts: group count and size, one run per group. */
TEST(the_grid_is_the_counts) {
    ind_rig r;
    accel_program* probe = NULL;
    accel_buffer* out = NULL;
    uint32_t c0 = 99;
    const uint32_t one[3] = { 1, 1, 1 };
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    if (!CHECK_OK(test_program_create(r.dev, TK_PROBE, &probe)) ||
        !CHECK_OK(test_buffer_create(r.dev, 64 * 4, ACCEL_MEMORY_DEVICE, &out)) ||
        !CHECK_OK(test_buffer_set_u32(out, 64, 0))) {
        accel_device_destroy(r.dev);
        return;
    }
    ind_set(&r, r.q, 4, 3, 2, 2);
    accel_queue_exec_indirect(r.q, probe, &out, 1, &c0, 1, one, r.counts, 16);
    CHECK_OK(ind_run(&r, r.q, 1));
    CHECK_EQ_U64(test_buffer_u32(out, 0), 3);
    CHECK_EQ_U64(test_buffer_u32(out, 1), 2);
    CHECK_EQ_U64(test_buffer_u32(out, 2), 2);
    CHECK_EQ_U64(test_buffer_u32(out, 3), 1);
    CHECK_EQ_U64(test_buffer_u32(out, 13), 99);
    if (test_backend_is_cpu()) {   /* the CPU kernel sees global = count x local */
        CHECK_EQ_U64(test_buffer_u32(out, 6), 3);
        CHECK_EQ_U64(test_buffer_u32(out, 7), 2);
    }
    for (uint32_t g = 0; g < 12; g++) CHECK(test_buffer_u32(out, 16 + g) != 0);
    CHECK_EQ_U64(test_buffer_u32(out, 16 + 12), 0);
    accel_device_destroy(r.dev);
}

/* A count of 0 in any dimension runs nothing; the commands around it run. */
TEST(a_zero_count_runs_nothing) {
    ind_rig r;
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    CHECK(ind_host_counts(r.counts, 0, 0, 4, 4));
    CHECK(ind_host_counts(r.counts, 3, 4, 0, 4));
    CHECK(ind_host_counts(r.counts, 6, 4, 4, 0));
    CHECK(ind_host_counts(r.counts, 9, 1, 1, 1));
    for (uint32_t k = 0; k < 4; k++) ind_add(&r, r.q, r.counts, 12u * k);
    ind_set(&r, r.q, 0, 0, 0, 0);
    ind_add(&r, r.q, r.counts, 0);
    CHECK_OK(ind_run(&r, r.q, 1));
    ind_expect(r.buf, 64, 1);
    accel_device_destroy(r.dev);
}

/* Counts above max_group_count, or whose items overflow 32 bits: skipped, and a debug device logs it
   (the CPU and CUDA read the counts on the host; Vulkan's must be within the limits). */
TEST(counts_over_the_limits_are_skipped) {
    ind_rig r;
    accel_device_info info;
    accel_device_desc desc;
    if (test_g.backend_name && strcmp(test_g.backend_name, "vulkan") == 0)
        SKIP("Vulkan reads the counts on the device: there they must be within the limits");
    TEST_NEEDS_DEBUG();
    memset(&desc, 0, sizeof desc);
    desc.label = "test";
    desc.debug = true;
    if (!ind_rig_open_desc(&r, desc)) { accel_device_destroy(r.dev); return; }
    REQUIRE_OK(accel_device_info_get(r.dev, &info));
    CHECK(ind_host_counts(r.counts, 0, 1u << 31, 1, 1));             /* 2^37 items at local size 64 */
    CHECK(ind_host_counts(r.counts, 3, 1, 1, 1));
    ind_add(&r, r.q, r.counts, 0);
    if (info.max_group_count[1] < UINT32_MAX) {
        CHECK(ind_host_counts(r.counts, 6, 1, info.max_group_count[1] + 1, 1));
        ind_add(&r, r.q, r.counts, 24);
    }
    ind_add(&r, r.q, r.counts, 12);
    test_log_reset();
    CHECK_OK(ind_run(&r, r.q, 1));
    ind_expect(r.buf, 64, 1);
    CHECK(test_log_contains("over the device limits"));
    CHECK(test_log_contains("accel_queue_exec_indirect"));
    accel_device_destroy(r.dev);
}

/* Bad arguments are recording errors: the batch is discarded (its fill does not run) and the log
   names the call. */
static void ind_expect_refused(accel_queue* q, const char* why) {
    CHECK_RESULT(accel_queue_submit(q), ACCEL_ERROR_INVALID_ARGUMENT);
    if (!CHECK(test_log_contains("accel_queue_exec_indirect")) || !CHECK(test_log_contains(why)))
        fprintf(stderr, "    (case: %s)\n", why);
    test_log_reset();
}
TEST(recording_errors) {
    ind_rig r;
    accel_queue* copyq = NULL;
    accel_buffer* view = NULL;
    uint32_t n = NN;
    const uint32_t big[3] = { 4096, 1, 1 };
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    REQUIRE_OK(accel_queue_create(r.dev, ACCEL_QUEUE_COPY, &copyq));
    accel_queue_fill(r.q, r.buf, 0, NN * 4, 5);
    ind_add(&r, r.q, NULL, 0);
    ind_expect_refused(r.q, "counts is NULL");
    accel_queue_fill(r.q, r.buf, 0, NN * 4, 5);
    ind_add(&r, r.q, r.counts, 2);
    ind_expect_refused(r.q, "not a multiple of 4");
    ind_add(&r, r.q, r.counts, CW * 4 - 8);                      /* 12 bytes from there: past the end */
    ind_expect_refused(r.q, "accel_queue_exec_indirect:");
    accel_queue_exec_indirect(r.q, r.add, &r.buf, 1, &n, 1, big, r.counts, 0);
    ind_expect_refused(r.q, "local size");
    accel_queue_exec_indirect(r.q, NULL, &r.buf, 1, &n, 1, local64, r.counts, 0);
    ind_expect_refused(r.q, "program is NULL");
    accel_queue_exec_indirect(r.q, r.add, &r.buf, 1, NULL, 0, local64, r.counts, 0);
    ind_expect_refused(r.q, "takes 1 buffers and 1 constants");
    accel_queue_exec_indirect(copyq, r.add, &r.buf, 1, &n, 1, local64, r.counts, 0);
    ind_expect_refused(copyq, "COPY queue");
    /* a view whose start in its root is not a multiple of 4 (views start at any byte on the CPU) */
    if (accel_buffer_view_create(r.counts, 2, 32, &view) == ACCEL_OK) {
        ind_add(&r, r.q, view, 0);
        ind_expect_refused(r.q, "in its root buffer");
        accel_buffer_destroy(view);
    }
    CHECK_EQ_U64(test_buffer_u32(r.buf, 0), 0);                  /* no fill ran */
    /* another device's counts: refused on a GPU; another CPU device's memory is this one's too */
    {
        accel_device* other = NULL;
        accel_buffer* oc = NULL;
        if (CHECK_OK(test_device_create(&other)) &&
            CHECK_OK(test_buffer_create(other, CW * 4, ACCEL_MEMORY_HOST, &oc)) &&
            ind_host_counts(oc, 0, 1, 1, 1)) {
            ind_add(&r, r.q, oc, 0);
            if (test_backend_is_cpu()) {
                CHECK_OK(ind_run(&r, r.q, 1));
                ind_expect(r.buf, 64, 1);
            } else {   /* the line names the buffer by its address (accel.h: log lines name objects so) */
                char at[64];
                snprintf(at, sizeof at, "buffer %p", (void*)oc);
                CHECK(test_log_contains(at));
                ind_expect_refused(r.q, "belongs to another device");
            }
        }
        accel_device_destroy(other);
    }
    accel_device_destroy(r.dev);
}

/* In a list the counts buffer is patch index buffer_count (1 here), at the offset recorded; a list that
   writes its own counts takes them from a patched constant. */
TEST(patched_counts_in_a_list) {
    ind_rig r;
    accel_commands *list = NULL, *own = NULL;
    accel_buffer *other = NULL, *small = NULL, *view = NULL;
    accel_patch p;
    accel_device_info info;
    uint32_t n = NN;
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    REQUIRE_OK(accel_device_info_get(r.dev, &info));
    REQUIRE_OK(test_buffer_create(r.dev, CW * 4, ACCEL_MEMORY_DEVICE, &other));
    REQUIRE_OK(test_buffer_create(r.dev, 24, ACCEL_MEMORY_DEVICE, &small));
    CHECK(ind_host_counts(r.counts, 4, 2, 1, 1));                   /* at byte 16 */
    REQUIRE(ind_host_counts(other, 4, 1, 1, 1));
    REQUIRE_OK(accel_queue_record_begin(r.q));
    ind_add(&r, r.q, r.counts, 16);
    REQUIRE_OK(accel_queue_record_end(r.q, &list));
    memset(&p, 0, sizeof p);
    p.command = 0;
    p.index = 1;
    p.buffer = other;
    accel_queue_replay(r.q, list, NULL, 0);                         /* 2 groups */
    accel_queue_replay(r.q, list, &p, 1);                           /* 1 group */
    CHECK_OK(ind_run(&r, r.q, 1));
    ind_expect2(r.buf, 64, 2, 128, 1);
    /* a view as the patch: the offset counts from the view's start */
    {
        size_t at = info.buffer_offset_alignment > 16 ? info.buffer_offset_alignment : 16;
        accel_buffer* big = NULL;
        if (CHECK_OK(test_buffer_create(r.dev, at + CW * 4, ACCEL_MEMORY_DEVICE, &big)) &&
            CHECK_OK(test_buffer_set_u32(big, (at + CW * 4) / 4, 0)) &&
            ind_host_counts(big, (uint32_t)(at / 4) + 4, 3, 1, 1) &&
            CHECK_OK(accel_buffer_view_create(big, at, CW * 4, &view))) {
            p.buffer = view;
            CHECK_OK(test_buffer_set_u32(r.buf, NN, 0));
            accel_queue_replay(r.q, list, &p, 1);                   /* 3 groups */
            CHECK_OK(ind_run(&r, r.q, 2));
            ind_expect(r.buf, 192, 1);
        }
        accel_buffer_destroy(view);
        accel_buffer_destroy(big);
    }
    /* bad patches: too small for offset 16 + 12; an index past the counts */
    p.buffer = small;
    accel_queue_replay(r.q, list, &p, 1);
    CHECK_RESULT(accel_queue_submit(r.q), ACCEL_ERROR_INVALID_ARGUMENT);
    p.buffer = other;
    p.index = 2;
    accel_queue_replay(r.q, list, &p, 1);
    CHECK_RESULT(accel_queue_submit(r.q), ACCEL_ERROR_INVALID_ARGUMENT);
    CHECK(test_log_contains("no such binding"));
    /* a list that decides its own counts: set_counts with a patched x, then the indirect exec */
    REQUIRE_OK(test_buffer_set_u32(r.buf, NN, 0));
    REQUIRE_OK(accel_queue_record_begin(r.q));
    ind_set(&r, r.q, 8, 1, 1, 1);
    accel_queue_exec_indirect(r.q, r.add, &r.buf, 1, &n, 1, local64, r.counts, 32);
    REQUIRE_OK(accel_queue_record_end(r.q, &own));
    p.command = 0;
    p.index = 1;                                                    /* constant 1: x */
    p.buffer = NULL;
    p.value = 5;
    accel_queue_replay(r.q, own, &p, 1);
    accel_queue_replay(r.q, own, NULL, 0);
    CHECK_OK(ind_run(&r, r.q, 3));
    ind_expect2(r.buf, 64, 2, 320, 1);
    accel_commands_destroy(list);
    accel_commands_destroy(own);
    accel_device_destroy(r.dev);
}

/* Many indirect execs on two queues, each step waiting for the one before on the other queue: every
   exec runs once, in order (each batch: counts 2, 0 and 1 groups). */
TEST(many_indirect_execs_across_queues) {
    enum { STEPS = 120 };
    ind_rig r;
    accel_queue* q2 = NULL;
    accel_queue* qs[2];
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    REQUIRE_OK(accel_queue_create(r.dev, ACCEL_QUEUE_COMPUTE, &q2));
    qs[0] = r.q;
    qs[1] = q2;
    CHECK(ind_host_counts(r.counts, 0, 2, 1, 1));
    CHECK(ind_host_counts(r.counts, 3, 0, 1, 1));
    CHECK(ind_host_counts(r.counts, 6, 1, 1, 1));
    for (uint64_t k = 0; k < STEPS; k++) {
        accel_queue* q = qs[k % 2];
        if (k) accel_queue_wait(q, r.s, k);
        ind_add(&r, q, r.counts, 0);
        ind_add(&r, q, r.counts, 12);
        ind_add(&r, q, r.counts, 24);
        accel_queue_signal(q, r.s, k + 1);
        if (!CHECK_OK(accel_queue_submit(q))) break;
    }
    CHECK_OK(accel_signal_wait(r.s, STEPS, ACCEL_WAIT_FOREVER));
    ind_expect2(r.buf, 64, 2 * STEPS, 128, STEPS);
    accel_device_destroy(r.dev);
}

/* The counts are read when the command runs, not at submit: written by the host after the submit,
   before the signal the batch waits for (no-threads: the batch parks, and the set runs it). */
TEST(counts_read_when_the_command_runs) {
    ind_rig r;
    accel_buffer* hc = NULL;
    accel_signal* gate = NULL;
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    REQUIRE_OK(test_buffer_create(r.dev, CW * 4, ACCEL_MEMORY_HOST, &hc));
    REQUIRE_OK(accel_signal_create(r.dev, 0, &gate));
    REQUIRE(ind_host_counts(hc, 0, 0, 0, 0));
    accel_queue_wait(r.q, gate, 1);
    ind_add(&r, r.q, hc, 0);
    accel_queue_signal(r.q, r.s, 1);
    REQUIRE_OK(accel_queue_submit(r.q));
    CHECK(ind_host_counts(hc, 0, 3, 1, 1));
    CHECK_OK(accel_signal_set(gate, 1));
    CHECK_OK(accel_signal_wait(r.s, 1, ACCEL_WAIT_FOREVER));
    ind_expect(r.buf, 192, 1);
    accel_device_destroy(r.dev);
}

/* A replay of a list that ends with an indirect exec, then a copy of what it wrote, in one batch: the
   copy sees the exec's writes (Vulkan: the barrier after the replay covered only the counts' read, so
   the copy read the exec's output unordered; sync validation reports it, the vulkan-sync run). */
TEST(a_copy_after_a_replayed_indirect_exec) {
    ind_rig r;
    accel_commands* list = NULL;
    accel_buffer* out = NULL;
    if (!ind_rig_open(&r)) { accel_device_destroy(r.dev); return; }
    REQUIRE_OK(test_buffer_create(r.dev, NN * 4, ACCEL_MEMORY_HOST, &out));
    REQUIRE(ind_host_counts(r.counts, 0, 4, 1, 1));
    REQUIRE_OK(accel_queue_record_begin(r.q));
    ind_add(&r, r.q, r.counts, 0);
    REQUIRE_OK(accel_queue_record_end(r.q, &list));
    for (uint32_t k = 1; k <= 4; k++) {
        accel_queue_replay(r.q, list, NULL, 0);
        accel_queue_copy(r.q, out, 0, r.buf, 0, NN * 4);
        if (!CHECK_OK(ind_run(&r, r.q, k)) || !ind_expect(out, 256, k)) break;
    }
    accel_commands_destroy(list);
    accel_device_destroy(r.dev);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(counts_written_by_the_previous_command);
    RUN(the_grid_is_the_counts);
    RUN(a_zero_count_runs_nothing);
    RUN(counts_over_the_limits_are_skipped);
    RUN(recording_errors);
    RUN(patched_counts_in_a_list);
    RUN(many_indirect_execs_across_queues);
    RUN(counts_read_when_the_command_runs);
    RUN(a_copy_after_a_replayed_indirect_exec);
    return test_end();
}
