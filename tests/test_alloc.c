/* tests/test_alloc.c — the allocation-failure sweep.

   For each scenario (device create; buffer / view / program / signal / queue create; a submit whose batch holds
   every command kind, on a fresh queue and on one with recycled batches; a batch that parks behind an
   unset signal (no-threads parking; a blocked executor with threads); a host wait_many that registers
   waiters) the sweep first counts the host allocations the scenario makes, then runs it again once for
   every N from 1 to that count with an allocator that refuses the Nth allocation — once in "one-shot"
   mode (only the Nth fails) and once in "from-N" mode (the Nth and every later one fail). After each
   run it checks:
     - the call returned ACCEL_ERROR_OUT_OF_MEMORY (or what the scenario documents, e.g. the host wait
       falls back to polling and still times out / completes as usual);
     - nothing of a failed batch ran (its signal is not signalled, its buffers are untouched);
     - nothing leaked: the counting allocator's outstanding count is back to where it was (and
       LeakSanitizer checks the rest in the asan configurations);
     - the device is still usable: a real batch (fill + exec + signal) runs and its result is checked,
       and the scenario itself then succeeds.
   At the end it prints how many failure points it injected and, on the CPU backend, which of the
   allocation call sites of accel.h they hit.

   ACCEL_TEST_BACKEND picks the backend as everywhere; the sweep counts that backend's allocations
   (only accel's own host allocations go through the allocator). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"

#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__))
#  define SW_NO_THREADS 1
#else
#  define SW_NO_THREADS 0
#endif

/* ==== the sweep allocator: counts allocations, refuses the Nth (or the Nth and all later) ==== */
typedef struct sweep_alloc {
    test_alloc_state st;          /* the counting allocator behind it (outstanding, size checks) */
    atomic_long count;            /* allocations since arming */
    atomic_long fail_at;          /* 0: refuse nothing */
    int persistent;               /* refuse every allocation from fail_at on */
    uint32_t threads;             /* cpu_threads of the device scenario */
    atomic_int site;              /* the site the refused allocation came from (CPU backend) */
    const char* scenario;
} sweep_alloc;

/* ==== allocation sites of the CPU backend (for the report) ==== */
enum {
    SITE_UNKNOWN, SITE_DEVICE, SITE_LANES, SITE_WORKERS, SITE_BUFFER, SITE_BUFFER_MEMORY, SITE_PROGRAM,
    SITE_SIGNAL, SITE_QUEUE, SITE_BATCH, SITE_BATCH_GROW, SITE_WAIT_MANY, SITE_VIEW, SITE_COUNT
};
static const char* const sweep_site_names[SITE_COUNT] = {
    "other", "cpu device", "device lanes", "device workers", "buffer object", "buffer memory",
    "program object", "signal object", "queue object", "batch", "batch command/arena growth",
    "wait_many waiters", "buffer view"
};
static int sweep_sites_hit[SITE_COUNT];
static long sweep_points_total;

/* Which accel.h call site made an allocation of this size and alignment. The private struct sizes are
   visible because this file compiles the implementation; in the C++ configurations (implementation
   in another translation unit) every site reads "other". */
static int sweep_site_of(const sweep_alloc* s, size_t size, size_t align) {
#if defined(ACCEL_I_FAILED_BIT)
    if (!test_backend_is_cpu()) return SITE_UNKNOWN;
    if (align == 64 && size == sizeof(accel_i_cpu_device)) return SITE_DEVICE;
    if (strcmp(s->scenario, "device") == 0) {
        uint32_t lanes = SW_NO_THREADS ? 1u : s->threads;
        if (align == 64 && size == (size_t)lanes * sizeof(accel_i_cpu_lane)) return SITE_LANES;
        if (lanes > 1 && size == (size_t)(lanes - 1) * sizeof(accel_i_cpu_worker)) return SITE_WORKERS;
        return SITE_UNKNOWN;
    }
    /* host signals are 64-aligned too (their word shares a line with the trace marks) */
    if (strcmp(s->scenario, "signal") == 0 && size == sizeof(accel_i_cpu_signal)) return SITE_SIGNAL;
    if (align == 64) return SITE_BUFFER_MEMORY;
    if (strcmp(s->scenario, "wait_many") == 0) return SITE_WAIT_MANY;
    if (strcmp(s->scenario, "buffer_view") == 0 && size == sizeof(accel_buffer)) return SITE_VIEW;
    /* object sizes may coincide (no-threads: a signal is as big as a buffer): ask the scenario first */
    if (strncmp(s->scenario, "buffer", 6) == 0 && size == sizeof(accel_i_cpu_buffer)) return SITE_BUFFER;
    if (strcmp(s->scenario, "program") == 0 && size == sizeof(accel_i_cpu_program)) return SITE_PROGRAM;
    if (strcmp(s->scenario, "signal") == 0 && size == sizeof(accel_i_cpu_signal)) return SITE_SIGNAL;
    if (strncmp(s->scenario, "queue", 5) == 0 && size == sizeof(accel_i_cpu_queue)) return SITE_QUEUE;
    if (size == sizeof(accel_i_batch)) return SITE_BATCH;
    if (size >= 256 && (size & (size - 1)) == 0) return SITE_BATCH_GROW;
#else
    (void)s; (void)size; (void)align;
#endif
    return SITE_UNKNOWN;
}

static void* sweep_alloc_fn(size_t size, size_t align, void* user) {
    sweep_alloc* s = (sweep_alloc*)user;
    long n = atomic_fetch_add(&s->count, 1) + 1;
    long f = atomic_load(&s->fail_at);
    if (f > 0 && (n == f || (s->persistent && n > f))) {
        if (n == f) atomic_store(&s->site, sweep_site_of(s, size, align));
        atomic_fetch_add(&s->st.failures, 1);
        return NULL;
    }
    return test_alloc_fn(size, align, &s->st);
}
static void sweep_free_fn(void* ptr, size_t size, void* user) { test_free_fn(ptr, size, &((sweep_alloc*)user)->st); }

static void sweep_init(sweep_alloc* s, const char* scenario) {
    memset(s, 0, sizeof *s);
    test_alloc_init(&s->st);
    atomic_store(&s->count, 0);
    atomic_store(&s->fail_at, 0);
    atomic_store(&s->site, -1);
    s->scenario = scenario;
}
static void sweep_arm(sweep_alloc* s, long fail_at, int persistent) {
    s->persistent = persistent;
    atomic_store(&s->site, -1);
    atomic_store(&s->count, 0);
    atomic_store(&s->fail_at, fail_at);
}
static long sweep_disarm(sweep_alloc* s) {
    atomic_store(&s->fail_at, 0);
    return atomic_load(&s->count);
}
static accel_device_desc sweep_desc(sweep_alloc* s, uint32_t threads) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.allocator.alloc_fn = sweep_alloc_fn;
    d.allocator.free_fn = sweep_free_fn;
    d.allocator.user = s;
    d.cpu_threads = threads;
    d.label = "sweep";
    return d;
}
static void sweep_note(sweep_alloc* s) {
    int site = atomic_load(&s->site);
    sweep_points_total++;
    if (site >= 0 && site < SITE_COUNT) sweep_sites_hit[site]++;
}

/* ==== the context: a device and the objects every scenario uses ==== */
#define SW_WORDS 256u
typedef struct sweep_ctx {
    sweep_alloc alloc;
    accel_device* dev;
    accel_queue* work_q;          /* proves the device works after each failure */
    accel_buffer* work_buf;
    accel_signal* work_sig;
    uint64_t work_val;
    accel_program* add_one;
    accel_buffer *src, *dst;      /* the every-kind batch */
    accel_signal *in, *out, *gate;
    uint64_t out_val;
    /* made by the scenario under test */
    accel_queue* q;
    accel_queue* parked_q;
    accel_signal* parked_sig;
    accel_buffer* obj_buf;
    accel_program* obj_prog;
    accel_signal* obj_sig;
    accel_signal* many[9];
    uint32_t host_words[SW_WORDS];
} sweep_ctx;

static uint32_t sweep_word(accel_buffer* b, size_t i) { return test_buffer_u32(b, i); }

/* A real batch: fill the work buffer with `pattern`, add one to every word, signal; check the result.
   Also creates and destroys a signal (an allocation) to show creation works again. */
static void sweep_device_works(sweep_ctx* c, uint32_t pattern) {
    uint32_t n = SW_WORDS;
    accel_signal* s = NULL;
    CHECK_OK(accel_signal_create(c->dev, 7, &s));
    CHECK_EQ_U64(accel_signal_value(s), 7);
    accel_signal_destroy(s);
    accel_queue_fill(c->work_q, c->work_buf, 0, SW_WORDS * 4, pattern);
    accel_queue_exec(c->work_q, c->add_one, &c->work_buf, 1, &n, 1, accel_exec_1d(SW_WORDS, 32));
    accel_queue_signal(c->work_q, c->work_sig, ++c->work_val);
    /* finish, not a signal wait: once it returns the batch is recycled, so the queue's allocations
       are the same every time (the sweep compares outstanding counts) */
    CHECK_OK(accel_queue_finish(c->work_q, 10ull * 1000000000ull));
    CHECK_EQ_U64(accel_signal_value(c->work_sig), c->work_val);
    CHECK_EQ_U64(sweep_word(c->work_buf, 0), pattern + 1u);
    CHECK_EQ_U64(sweep_word(c->work_buf, SW_WORDS - 1), pattern + 1u);
}

static int sweep_ctx_open(sweep_ctx* c, const char* scenario) {
    memset(c, 0, sizeof *c);
    sweep_init(&c->alloc, scenario);
    if (!CHECK_OK(test_device_create_desc(sweep_desc(&c->alloc, 2), &c->dev))) return 0;
    if (!CHECK_OK(accel_queue_create(c->dev, ACCEL_QUEUE_COMPUTE, &c->work_q))) return 0;
    if (!CHECK_OK(test_buffer_create(c->dev, SW_WORDS * 4, ACCEL_MEMORY_HOST, &c->work_buf))) return 0;
    if (!CHECK_OK(accel_signal_create(c->dev, 0, &c->work_sig))) return 0;
    if (!CHECK_OK(test_program_create(c->dev, TK_ADD_ONE, &c->add_one))) return 0;
    if (!CHECK_OK(test_buffer_create(c->dev, SW_WORDS * 4, ACCEL_MEMORY_DEVICE, &c->src))) return 0;
    if (!CHECK_OK(test_buffer_create(c->dev, SW_WORDS * 4, ACCEL_MEMORY_DEVICE, &c->dst))) return 0;
    if (!CHECK_OK(accel_signal_create(c->dev, 1, &c->in))) return 0;
    if (!CHECK_OK(accel_signal_create(c->dev, 0, &c->out))) return 0;
    for (uint32_t i = 0; i < SW_WORDS; i++) c->host_words[i] = 0x1000u + i;
    if (!CHECK_OK(accel_buffer_write(c->src, 0, c->host_words, sizeof c->host_words))) return 0;
    sweep_device_works(c, 1);
    return !TEST_FAILED_SO_FAR();
}
static void sweep_ctx_close(sweep_ctx* c) {
    accel_device_destroy(c->dev);
    CHECK_EQ_INT(atomic_load(&c->alloc.st.outstanding), 0);
    CHECK_EQ_INT(atomic_load(&c->alloc.st.size_mismatch), 0);
    CHECK_EQ_INT(atomic_load(&c->alloc.st.bad_align), 0);
}

/* ==== the sweep driver ==== */
typedef struct sweep_case {
    const char* name;
    void (*setup)(sweep_ctx* c);                    /* unarmed: what the scenario needs first */
    accel_result (*action)(sweep_ctx* c);           /* armed: the calls under test */
    /* unarmed: checks after the action (failed: refused >= 1 allocation), releases what it made */
    void (*after)(sweep_ctx* c, accel_result r, int failed);
    accel_result on_failure;                        /* what the action returns when an allocation fails */
    accel_result on_success;                        /* ... and when none does */
} sweep_case;

/* Runs the case unarmed to count its allocations, then once per N in each mode. Returns the count. */
static long sweep_run(sweep_ctx* c, const sweep_case* k) {
    long total, before;
    accel_result r;
    c->alloc.scenario = k->name;
    before = atomic_load(&c->alloc.st.outstanding);
    if (k->setup) k->setup(c);
    sweep_arm(&c->alloc, 0, 0);
    r = k->action(c);
    total = sweep_disarm(&c->alloc);
    k->after(c, r, 0);
    CHECK_RESULT(r, k->on_success);
    CHECK_EQ_INT(atomic_load(&c->alloc.st.outstanding), before);
    for (int persistent = 0; persistent < 2; persistent++) {
        for (long n = 1; n <= total; n++) {
            if (k->setup) k->setup(c);
            sweep_arm(&c->alloc, n, persistent);
            r = k->action(c);
            sweep_disarm(&c->alloc);
            if (!persistent) sweep_note(&c->alloc);
            k->after(c, r, 1);
            if (!CHECK_RESULT(r, k->on_failure) ||
                !CHECK_EQ_INT(atomic_load(&c->alloc.st.outstanding), before)) {
                fprintf(stderr, "    scenario %s: allocation %ld of %ld refused (%s)\n", k->name, n, total,
                        persistent ? "and every later one" : "only that one");
            }
            sweep_device_works(c, (uint32_t)n * 16u + (uint32_t)persistent);
            if (TEST_FAILED_SO_FAR()) {
                fprintf(stderr, "    scenario %s: stopped at allocation %ld of %ld (%s)\n", k->name, n, total,
                        persistent ? "from-N" : "one-shot");
                return total;
            }
        }
    }
    if (test_g.verbose) fprintf(stderr, "  scenario %-22s %ld allocations swept\n", k->name, total);
    return total;
}

/* ==== scenarios: object creation ==== */
static accel_result sc_buffer_action(sweep_ctx* c) { return test_buffer_create(c->dev, 4096, ACCEL_MEMORY_DEVICE, &c->obj_buf); }
static accel_result sc_buffer_wrap_action(sweep_ctx* c) {
    accel_buffer_desc d;
    memset(&d, 0, sizeof d);
    d.size = sizeof c->host_words;
    d.host_ptr = c->host_words;
    d.memory = ACCEL_MEMORY_HOST;
    return accel_buffer_create(c->dev, &d, &c->obj_buf);
}
static void sc_buffer_after(sweep_ctx* c, accel_result r, int failed) {
    if (failed && r != ACCEL_OK) CHECK(c->obj_buf == NULL);
    if (r == ACCEL_OK) {   /* it works: write, read back */
        uint32_t v = 0xABCD1234u, got = 0;
        CHECK_OK(accel_buffer_write(c->obj_buf, 16, &v, 4));
        CHECK_OK(accel_buffer_read(c->obj_buf, 16, &got, 4));
        CHECK_EQ_U64(got, v);
        if (c->host_words[4] == v) c->host_words[4] = 0x1004u;
    }
    accel_buffer_destroy(c->obj_buf);
    c->obj_buf = NULL;
}
/* a view of a view of src (both creates are swept); the inner one outlives the outer handle */
static accel_result sc_view_action(sweep_ctx* c) {
    accel_buffer* outer = NULL;
    accel_result r = accel_buffer_view_create(c->src, 256, 512, &outer);   /* 256: every backend's alignment */
    if (r == ACCEL_OK) r = accel_buffer_view_create(outer, 256, 128, &c->obj_buf);
    accel_buffer_destroy(outer);
    return r;
}
static void sc_view_after(sweep_ctx* c, accel_result r, int failed) {
    if (failed && r != ACCEL_OK) CHECK(c->obj_buf == NULL);
    if (r == ACCEL_OK) {   /* it reads src from word 128 on */
        uint32_t got = 0;
        CHECK_OK(accel_buffer_read(c->obj_buf, 4, &got, 4));
        CHECK_EQ_U64(got, 0x1081u);
    }
    accel_buffer_destroy(c->obj_buf);
    c->obj_buf = NULL;
}
static accel_result sc_program_action(sweep_ctx* c) { return test_program_create(c->dev, TK_FILL_INDEX, &c->obj_prog); }
static void sc_program_after(sweep_ctx* c, accel_result r, int failed) {
    if (failed && r != ACCEL_OK) CHECK(c->obj_prog == NULL);
    if (r == ACCEL_OK) {
        uint32_t k[2] = { 5, SW_WORDS };
        accel_queue_exec(c->work_q, c->obj_prog, &c->work_buf, 1, k, 2, accel_exec_1d(SW_WORDS, 64));
        CHECK_OK(accel_queue_finish(c->work_q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(sweep_word(c->work_buf, 10), 15);
    }
    accel_program_destroy(c->obj_prog);
    c->obj_prog = NULL;
}
static accel_result sc_signal_action(sweep_ctx* c) { return accel_signal_create(c->dev, 41, &c->obj_sig); }
static void sc_signal_after(sweep_ctx* c, accel_result r, int failed) {
    if (failed && r != ACCEL_OK) CHECK(c->obj_sig == NULL);
    if (r == ACCEL_OK) {
        CHECK_OK(accel_signal_set(c->obj_sig, 42));
        CHECK_OK(accel_signal_wait(c->obj_sig, 42, 0));
    }
    accel_signal_destroy(c->obj_sig);
    c->obj_sig = NULL;
}
static accel_result sc_queue_action_type(sweep_ctx* c, accel_queue_type t) { return accel_queue_create(c->dev, t, &c->q); }
static accel_result sc_queue_compute_action(sweep_ctx* c) { return sc_queue_action_type(c, ACCEL_QUEUE_COMPUTE); }
static accel_result sc_queue_copy_action(sweep_ctx* c) { return sc_queue_action_type(c, ACCEL_QUEUE_COPY); }
static void sc_queue_after(sweep_ctx* c, accel_result r, int failed) {
    if (failed && r != ACCEL_OK) CHECK(c->q == NULL);
    if (r == ACCEL_OK) {
        accel_queue_fill(c->q, c->dst, 0, 16, 0x77u);
        CHECK_OK(accel_queue_finish(c->q, ACCEL_WAIT_FOREVER));
        CHECK_EQ_U64(sweep_word(c->dst, 3), 0x77u);
    }
    accel_queue_destroy(c->q);
    c->q = NULL;
}

/* ==== scenarios: a batch with every command kind ==== */
#define SW_EXTRA_FILLS 40u     /* enough commands that the command array grows several times */
static void sw_record_every_kind(sweep_ctx* c, accel_queue* q, uint64_t out_value) {
    static uint32_t update_data[1024];
    uint32_t n = SW_WORDS;
    for (uint32_t i = 0; i < 1024; i++) update_data[i] = 0x5000u + i;
    accel_queue_wait(q, c->in, 1);                                          /* already reached */
    accel_queue_fill(q, c->dst, 0, SW_WORDS * 4, 0x10u);
    accel_queue_exec(q, c->add_one, &c->dst, 1, &n, 1, accel_exec_1d(SW_WORDS, 16));    /* 0x11 */
    accel_queue_copy(q, c->dst, 64, c->src, 64, 64);                       /* words 16..31 = src */
    accel_queue_update(q, c->dst, 128, update_data, 64);                   /* words 32..47 */
    accel_queue_barrier(q);
    for (uint32_t i = 0; i < SW_EXTRA_FILLS; i++) accel_queue_fill(q, c->dst, 256 + 4u * i, 4, 0x9000u + i);
    accel_queue_update(q, c->dst, 512, update_data, sizeof update_data / 8u);  /* a large one: the arena grows */
    accel_queue_signal(q, c->out, out_value);
}
static void sw_check_every_kind(sweep_ctx* c) {
    CHECK_EQ_U64(sweep_word(c->dst, 0), 0x11u);
    CHECK_EQ_U64(sweep_word(c->dst, 16), 0x1010u);
    CHECK_EQ_U64(sweep_word(c->dst, 33), 0x5001u);
    CHECK_EQ_U64(sweep_word(c->dst, 64 + 3), 0x9003u);
    CHECK_EQ_U64(sweep_word(c->dst, 128 + 10), 0x500Au);
}
static void sw_clear_dst(sweep_ctx* c) {
    static const uint32_t zero[SW_WORDS];
    CHECK_OK(accel_buffer_write(c->dst, 0, zero, sizeof zero));
}
static void sc_submit_setup(sweep_ctx* c) {
    REQUIRE_OK(accel_queue_create(c->dev, ACCEL_QUEUE_COMPUTE, &c->q));
    sw_clear_dst(c);
}
/* A queue that already ran a small batch: the next batch reuses (and grows) a recycled one. */
static void sc_submit_recycled_setup(sweep_ctx* c) {
    sc_submit_setup(c);
    accel_queue_fill(c->q, c->dst, 0, 4, 0);
    CHECK_OK(accel_queue_finish(c->q, ACCEL_WAIT_FOREVER));
}
static accel_result sc_submit_action(sweep_ctx* c) {
    sw_record_every_kind(c, c->q, c->out_val + 1);
    return accel_queue_submit(c->q);
}
static void sc_submit_after(sweep_ctx* c, accel_result r, int failed) {
    CHECK_OK(accel_queue_finish(c->q, ACCEL_WAIT_FOREVER));
    if (r != ACCEL_OK) {   /* all or nothing: nothing of the batch ran */
        CHECK_EQ_U64(accel_signal_value(c->out), c->out_val);
        CHECK_EQ_U64(sweep_word(c->dst, 0), 0);
        CHECK_EQ_U64(sweep_word(c->dst, 33), 0);
        /* the same queue records and runs the batch now */
        sw_record_every_kind(c, c->q, c->out_val + 1);
        CHECK_OK(accel_queue_finish(c->q, ACCEL_WAIT_FOREVER));
    }
    (void)failed;
    c->out_val++;
    CHECK_EQ_U64(accel_signal_value(c->out), c->out_val);
    sw_check_every_kind(c);
    accel_queue_destroy(c->q);
    c->q = NULL;
}

/* ==== scenario: parking (no threads) / a blocked executor (threads) ==== */
/* Another queue's batch is parked behind `gate`; the batch under test also parks behind it (after
   running its first half). A failure must leave the parked batch alone; setting the gate runs both. */
static void sc_park_setup(sweep_ctx* c) {
    sc_submit_setup(c);
    REQUIRE_OK(accel_queue_create(c->dev, ACCEL_QUEUE_COPY, &c->parked_q));
    REQUIRE_OK(accel_signal_create(c->dev, 0, &c->parked_sig));
    REQUIRE_OK(accel_signal_create(c->dev, 0, &c->gate));
    accel_queue_wait(c->parked_q, c->gate, 1);
    accel_queue_fill(c->parked_q, c->work_buf, 0, 8, 0xFEEDu);
    accel_queue_signal(c->parked_q, c->parked_sig, 1);
    CHECK_OK(accel_queue_submit(c->parked_q));
    CHECK_RESULT(accel_signal_wait(c->parked_sig, 1, 0), ACCEL_TIMEOUT);
}
static accel_result sc_park_action(sweep_ctx* c) {
    accel_queue_fill(c->q, c->dst, 0, 4, 0xAAu);
    accel_queue_wait(c->q, c->gate, 1);
    sw_record_every_kind(c, c->q, c->out_val + 1);
    return accel_queue_submit(c->q);
}
static void sc_park_after(sweep_ctx* c, accel_result r, int failed) {
    (void)failed;
    if (r == ACCEL_OK) {   /* first half ran (or runs), second half waits for the gate */
        CHECK_RESULT(accel_signal_wait(c->out, c->out_val + 1, 0), ACCEL_TIMEOUT);
    } else {
        CHECK_EQ_U64(sweep_word(c->dst, 0), 0);
    }
    CHECK_OK(accel_signal_set(c->gate, 1));
    CHECK_OK(accel_signal_wait(c->parked_sig, 1, 10ull * 1000000000ull));   /* the parked batch ran */
    CHECK_EQ_U64(sweep_word(c->work_buf, 1), 0xFEEDu);
    CHECK_OK(accel_queue_finish(c->q, 10ull * 1000000000ull));
    if (r != ACCEL_OK) {
        CHECK_EQ_U64(accel_signal_value(c->out), c->out_val);
        sw_record_every_kind(c, c->q, c->out_val + 1);
        CHECK_OK(accel_queue_finish(c->q, ACCEL_WAIT_FOREVER));
    }
    c->out_val++;
    CHECK_EQ_U64(accel_signal_value(c->out), c->out_val);
    sw_check_every_kind(c);
    accel_queue_destroy(c->q);
    accel_queue_destroy(c->parked_q);
    accel_signal_destroy(c->parked_sig);
    accel_signal_destroy(c->gate);
    c->q = c->parked_q = NULL;
    c->parked_sig = c->gate = NULL;
}

/* ==== scenario: a host wait on more signals than fit on the stack ==== */
static void sc_many_setup(sweep_ctx* c) {
    for (int i = 0; i < 9; i++) REQUIRE_OK(accel_signal_create(c->dev, i < 8 ? 1 : 0, &c->many[i]));
}
static accel_result sc_many_action(sweep_ctx* c) {
    uint64_t v[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    /* all: one is missing, so it times out after 1 ms (no-threads: deadlock, without allocating) */
    return accel_signal_wait_many(c->many, v, 9, true, 1000000, NULL);
}
static void sc_many_after(sweep_ctx* c, accel_result r, int failed) {
    uint64_t v[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    uint32_t first = 99;
    (void)r; (void)failed;
    CHECK_OK(accel_signal_set(c->many[8], 1));
    CHECK_OK(accel_signal_wait_many(c->many, v, 9, true, 0, NULL));
    CHECK_OK(accel_signal_wait_many(c->many, v, 9, false, 1000, &first));
    CHECK_EQ_INT(first, 0);
    for (int i = 0; i < 9; i++) { accel_signal_destroy(c->many[i]); c->many[i] = NULL; }
}

/* ==== the tests ==== */
static long sweep_case_run(const char* name, void (*setup)(sweep_ctx*), accel_result (*action)(sweep_ctx*),
                           void (*after)(sweep_ctx*, accel_result, int), accel_result on_failure,
                           accel_result on_success) {
    static sweep_ctx ctx;
    sweep_case k;
    long total;
    k.name = name; k.setup = setup; k.action = action; k.after = after; k.on_failure = on_failure; k.on_success = on_success;
    if (!sweep_ctx_open(&ctx, name)) { sweep_ctx_close(&ctx); return 0; }
    total = sweep_run(&ctx, &k);
    sweep_ctx_close(&ctx);
    return total;
}

TEST(alloc_sweep_device_create) {
    static const uint32_t threads[] = { 1, 3 };
    for (int t = 0; t < 2; t++) {
        sweep_alloc s;
        accel_device* dev = NULL;
        long total;
        sweep_init(&s, "device");
        s.threads = threads[t];
        sweep_arm(&s, 0, 0);
        REQUIRE_OK(test_device_create_desc(sweep_desc(&s, threads[t]), &dev));
        total = sweep_disarm(&s);
        accel_device_destroy(dev);
        CHECK(total >= 1);
        for (int persistent = 0; persistent < 2; persistent++) {
            for (long n = 1; n <= total; n++) {
                accel_device* bad = (accel_device*)&s;
                accel_result r;
                sweep_arm(&s, n, persistent);
                r = test_device_create_desc(sweep_desc(&s, threads[t]), &bad);
                sweep_disarm(&s);
                if (!persistent) sweep_note(&s);
                CHECK_RESULT(r, ACCEL_ERROR_OUT_OF_MEMORY);
                CHECK(bad == NULL);
                if (r == ACCEL_OK) accel_device_destroy(bad);
                CHECK_EQ_INT(atomic_load(&s.st.outstanding), 0);
                {   /* the next create works and the device runs a batch */
                    sweep_ctx* c = (sweep_ctx*)calloc(1, sizeof *c);
                    REQUIRE(c != NULL);
                    if (sweep_ctx_open(c, "device")) sweep_device_works(c, (uint32_t)n);
                    sweep_ctx_close(c);
                    free(c);
                }
                if (TEST_FAILED_SO_FAR()) {
                    fprintf(stderr, "    device create (%u threads): allocation %ld of %ld (%s)\n", threads[t], n, total,
                            persistent ? "from-N" : "one-shot");
                    return;
                }
            }
        }
        if (test_g.verbose) fprintf(stderr, "  device create, %u threads: %ld allocations swept\n", threads[t], total);
    }
}

TEST(alloc_sweep_object_create) {
    CHECK(sweep_case_run("buffer", NULL, sc_buffer_action, sc_buffer_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 1);
    if (test_backend_is_cpu())
        CHECK(sweep_case_run("buffer_wrap", NULL, sc_buffer_wrap_action, sc_buffer_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 1);
    CHECK(sweep_case_run("buffer_view", NULL, sc_view_action, sc_view_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 1);
    CHECK(sweep_case_run("program", NULL, sc_program_action, sc_program_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 1);
    CHECK(sweep_case_run("signal", NULL, sc_signal_action, sc_signal_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 1);
    CHECK(sweep_case_run("queue_compute", NULL, sc_queue_compute_action, sc_queue_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 1);
    CHECK(sweep_case_run("queue_copy", NULL, sc_queue_copy_action, sc_queue_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 1);
}

TEST(alloc_sweep_submit_every_kind) {
    CHECK(sweep_case_run("submit", sc_submit_setup, sc_submit_action, sc_submit_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 3);
    CHECK(sweep_case_run("submit_recycled", sc_submit_recycled_setup, sc_submit_action, sc_submit_after,
                         ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 2);
}

TEST(alloc_sweep_parking) {
    CHECK(sweep_case_run("park", sc_park_setup, sc_park_action, sc_park_after, ACCEL_ERROR_OUT_OF_MEMORY, ACCEL_OK) >= 3);
}

/* The host wait allocates its waiters for more than 8 signals; when that fails it polls instead, so
   the result is the same as without the failure (TIMEOUT here). No-threads builds do not allocate. */
TEST(alloc_sweep_wait_many) {
    long total = sweep_case_run("wait_many", sc_many_setup, sc_many_action, sc_many_after,
                                SW_NO_THREADS ? ACCEL_ERROR_DEADLOCK : ACCEL_TIMEOUT,
                                SW_NO_THREADS ? ACCEL_ERROR_DEADLOCK : ACCEL_TIMEOUT);
    if (SW_NO_THREADS) CHECK_EQ_INT(total, 0);
    else if (test_backend_is_cpu()) CHECK_EQ_INT(total, 1);
}

TEST(alloc_sweep_report) {
    int distinct = 0;
    fprintf(stderr, "allocation sweep: %ld failure points injected (each also in from-N mode)\n", sweep_points_total);
    for (int i = 0; i < SITE_COUNT; i++) {
        if (!sweep_sites_hit[i]) continue;
        if (i != SITE_UNKNOWN) distinct++;
        fprintf(stderr, "  %-28s %d\n", sweep_site_names[i], sweep_sites_hit[i]);
    }
    fprintf(stderr, "allocation sweep: %d distinct allocation call sites of the CPU backend hit\n", distinct);
    CHECK(sweep_points_total > 0);
#if defined(ACCEL_I_FAILED_BIT)
    if (test_backend_is_cpu() && test_g.filter == NULL) {
        /* every allocation call site of accel.h (SITE_WORKERS needs threads, SITE_WAIT_MANY too) */
        CHECK_EQ_INT(distinct, SW_NO_THREADS ? SITE_COUNT - 3 : SITE_COUNT - 1);
    }
#endif
}

/* A batch waits for a host signal; by the time the signal is set, a GPU queue's worker waits for it on
   the host, and the raising thread walks the batch (accel_signal_set). When that walk runs out of host
   memory (the CUDA ring mode: the signal points of 200 commands), the batch's signal fails: its submit
   returned OK, so it must not be dropped unsignalled (its waiters, and a device destroy that waits for a
   queue behind it, would wait for ever). Every backend: where nothing is allocated there, it runs. */
TEST(alloc_failure_in_a_walk_a_raise_makes_fails_the_batch) {
    test_alloc_state st;
    accel_device_desc desc;
    accel_device* dev = NULL;
    accel_queue* q = NULL;
    accel_signal *gate = NULL, *done = NULL;
    accel_buffer* buf = NULL;
    accel_result w;
    test_alloc_init(&st);
    memset(&desc, 0, sizeof desc);
    desc.allocator = test_allocator(&st);
    REQUIRE_OK(test_device_create_desc(desc, &dev));
    REQUIRE_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    REQUIRE_OK(accel_signal_create(dev, 0, &gate));
    REQUIRE_OK(accel_signal_create(dev, 0, &done));
    REQUIRE_OK(test_buffer_create(dev, 4096, ACCEL_MEMORY_HOST, &buf));
    accel_queue_wait(q, gate, 1);
    for (uint32_t i = 0; i < 200; i++) accel_queue_fill(q, buf, 4u * (i % 1024u), 4, i);
    accel_queue_signal(q, done, 1);
    CHECK_OK(accel_queue_submit(q));
    /* 20 ms: the worker took the batch and waits for the gate */
    CHECK_RESULT(accel_signal_wait(done, 1, SW_NO_THREADS ? 0u : 20000000u), ACCEL_TIMEOUT);
    atomic_store(&st.fail_after, 0);
    CHECK_OK(accel_signal_set(gate, 1));
    atomic_store(&st.fail_after, -1);
    w = accel_signal_wait(done, 1, 10ull * 1000000000ull);
    if (!CHECK(w == ACCEL_OK || w == ACCEL_ERROR_SIGNAL_FAILED))
        fprintf(stderr, "    the released batch's signal: %s, value %#llx (%ld allocations refused)\n",
                accel_result_string(w), (unsigned long long)accel_signal_value(done),
                (long)atomic_load(&st.failures));
    if (w == ACCEL_OK) CHECK_EQ_U64(test_buffer_u32(buf, 199), 199);
    if (test_g.verbose)
        fprintf(stderr, "  released batch: %s, %ld allocations refused\n", accel_result_string(w),
                (long)atomic_load(&st.failures));
    CHECK(accel_queue_finish(q, 10ull * 1000000000ull) != ACCEL_TIMEOUT);
    accel_queue_fill(q, buf, 0, 16, 0x77u);   /* the queue works on */
    CHECK_OK(accel_queue_finish(q, 10ull * 1000000000ull));
    CHECK_EQ_U64(test_buffer_u32(buf, 3), 0x77u);
    accel_buffer_destroy(buf);
    accel_signal_destroy(done);
    accel_signal_destroy(gate);
    accel_queue_destroy(q);
    accel_device_destroy(dev);
    CHECK_EQ_INT(atomic_load(&st.outstanding), 0);
}

int main(int argc, char** argv) {
    test_begin(argc, argv);
    RUN(alloc_failure_in_a_walk_a_raise_makes_fails_the_batch);
    /* the sweep, on the CPU and Vulkan: every allocation of a call happens inside it (Vulkan sets
       aside at submit what its worker needs for a batch that waits on the host). CUDA keeps per-device caches (NVRTC results)
       and its GPU-side allocations are the driver's, so the sweep's counts do not apply there. */
    test_only_backends("cpu vulkan", "the sweep expects every allocation of a call inside it (see test_alloc.c main)");
    RUN(alloc_sweep_device_create);
    RUN(alloc_sweep_object_create);
    RUN(alloc_sweep_submit_every_kind);
    RUN(alloc_sweep_parking);
    RUN(alloc_sweep_wait_many);
    RUN(alloc_sweep_report);
    return test_end();
}
