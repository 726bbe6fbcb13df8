/* tests/pool_check.h — the CPU pool's exactly-once check, shared by tests/test_pool.c and tests/soak.c.
   One queue records rounds of POOL_EXECS execs of pool_tick with varying 1D/2D global and local sizes
   (and tiny grids that run inline), submits and waits each round, and checks that every item was run
   exactly as often as the execs covering it, that no exec ran an item twice, that every group of the
   earlier execs had completed when a group of the next one started, and that the group count adds up.
   Include after accel.h and test.h. */
#ifndef ACCEL_TEST_POOL_CHECK_H_INCLUDED
#define ACCEL_TEST_POOL_CHECK_H_INCLUDED

/* ==== the kernel: counts itself, per item and per group ==== */
/* buffers: items (n words, +1 per run), stamps (n words: the serial of the last exec that ran the
   item), stats (words: 0 = items run twice by one exec, 1 = groups completed, 2 = groups that started
   before every group of the earlier execs had completed; 3-7: the first of those: the serial of its
   exec, the groups completed it saw, those it expected, its group id x + 1, its worker). constants: serial (unique per exec, > 0),
   before (groups completed by the earlier execs of this queue), n. 2D: item = y * global_x + x. */
static inline void pool_tick(const accel_dispatch* d) {
    uint32_t* items = (uint32_t*)d->buffers[0];
    uint32_t* stamps = (uint32_t*)d->buffers[1];
    atomic_uint* stats = (atomic_uint*)d->buffers[2];
    uint32_t serial = d->constants[0], before = d->constants[1], n = d->constants[2];
    uint32_t seen = atomic_load(&stats[1]), none = 0;
    /* the counts wrap at 2^32 (a long soak gets there): compared as a difference */
    if ((int32_t)(seen - before) < 0 && atomic_fetch_add(&stats[2], 1) == 0 &&
        atomic_compare_exchange_strong(&stats[3], &none, serial)) {
        atomic_store(&stats[4], seen);   /* the first such group: its exec, what it saw, what it expected */
        atomic_store(&stats[5], before);
        atomic_store(&stats[6], d->group_id[0] + 1u);
        atomic_store(&stats[7], (uint32_t)d->worker);
    }
    for (uint32_t ly = 0; ly < d->group_size[1]; ly++) {
        uint32_t y = d->group_id[1] * d->group_size[1] + ly;
        if (y >= d->global_size[1]) break;
        for (uint32_t lx = 0; lx < d->group_size[0]; lx++) {
            uint32_t x = d->group_id[0] * d->group_size[0] + lx, i = y * d->global_size[0] + x;
            if (x >= d->global_size[0] || i >= n) break;
            if (stamps[i] == serial) atomic_fetch_add(&stats[0], 1);
            stamps[i] = serial;
            items[i] += 1;
        }
    }
    atomic_fetch_add(&stats[1], 1);
}

/* ==== one queue's driver ==== */
#define POOL_ITEMS 4096u
#define POOL_EXECS 100u
typedef struct pool_lane_run {
    accel_device* dev;
    accel_program* prog;
    accel_queue* q;
    accel_signal* s;
    accel_buffer* bufs[3];       /* items, stamps, stats */
    uint32_t index, rounds, serial, groups_total, done_rounds;
    uint64_t until_ns;           /* 0: run `rounds` rounds */
    uint32_t expect[POOL_ITEMS];
    uint32_t bad_items, bad_stats, bad_waits;
    uint32_t seen_stats[9];      /* the first bad round's stats words and the groups it expected */
    uint32_t seen_round, seen_serial0;   /* ... that round, and the serial of its first exec */
} pool_lane_run;

/* The shape of exec k of round r of queue q: 1D or 2D, local sizes that do and do not divide. */
static inline accel_exec_params pool_shape(const pool_lane_run* a, uint32_t r, uint32_t k) {
    uint32_t v = k + r * 7u + a->index * 13u;
    uint32_t lx = 1u + (k % 7u) * 16u, gx = POOL_ITEMS - (v % 5u) * 611u;
    if (v % 4u == 3u) return accel_exec_2d(64u - (v % 3u), 64u - (v % 5u), 1u + v % 9u, 1u + v % 4u);
    if (v % 11u == 5u) return accel_exec_1d(1u + v % 3u, lx);        /* a tiny grid: runs inline */
    return accel_exec_1d(gx, lx);
}
static inline uint32_t pool_groups(accel_exec_params p) {
    uint32_t g = 1;
    for (int d = 0; d < 3; d++) {
        uint32_t gs = p.global_size[d] ? p.global_size[d] : 1u, ls = p.local_size[d] ? p.local_size[d] : 1u;
        g *= (gs + ls - 1u) / ls;
    }
    return g;
}
/* Adds one exec's coverage to the expected item counts. */
static inline void pool_expect(pool_lane_run* a, accel_exec_params p) {
    uint32_t gx = p.global_size[0], gy = p.global_size[1] ? p.global_size[1] : 1u;
    for (uint32_t y = 0; y < gy; y++)
        for (uint32_t x = 0; x < gx && y * gx + x < POOL_ITEMS; x++) a->expect[y * gx + x]++;
}

static inline void pool_round(pool_lane_run* a, uint32_t r) {
    uint32_t stats[8];
    const uint32_t* items;
    for (uint32_t k = 0; k < POOL_EXECS; k++) {
        accel_exec_params p = pool_shape(a, r, k);
        uint32_t c[3] = { ++a->serial, a->groups_total, POOL_ITEMS };
        accel_queue_exec(a->q, a->prog, a->bufs, 3, c, 3, p);
        a->groups_total += pool_groups(p);
        pool_expect(a, p);
    }
    accel_queue_signal(a->q, a->s, r + 1u);
    if (accel_queue_submit(a->q) != ACCEL_OK || accel_signal_wait(a->s, r + 1u, ACCEL_WAIT_FOREVER) != ACCEL_OK) {
        a->bad_waits++;
        return;
    }
    items = (const uint32_t*)accel_buffer_map(a->bufs[0]);
    if (!items || accel_buffer_read(a->bufs[2], 0, stats, sizeof stats) != ACCEL_OK) { a->bad_waits++; return; }
    for (uint32_t i = 0; i < POOL_ITEMS; i++) a->bad_items += items[i] != a->expect[i];
    if ((stats[0] != 0 || stats[1] != a->groups_total || stats[2] != 0) && a->bad_stats++ == 0) {
        memcpy(a->seen_stats, stats, sizeof stats);
        a->seen_stats[8] = a->groups_total;
        a->seen_round = r;
        a->seen_serial0 = a->serial - POOL_EXECS + 1u;
    }
}
/* Says what a run found wrong (stderr). */
static inline void pool_report(const pool_lane_run* a, const char* who) {
    fprintf(stderr, "%s: %u items off, %u bad stats, %u failed waits", who, a->bad_items, a->bad_stats,
            a->bad_waits);
    if (a->bad_stats)
        fprintf(stderr, " (first: round %u, %u items run twice by one exec, %u of %u groups completed, %u groups "
                "started before the earlier execs completed; the first of them: exec %u of the round, group %u, "
                "worker %u, saw %u groups completed of %u)", a->seen_round, a->seen_stats[0], a->seen_stats[1],
                a->seen_stats[8], a->seen_stats[2], a->seen_stats[3] - a->seen_serial0, a->seen_stats[6] - 1u,
                a->seen_stats[7], a->seen_stats[4], a->seen_stats[5]);
    fprintf(stderr, "\n");
}
/* Runs rounds (a->rounds of them, or until a->until_ns when set) until one goes wrong. */
static inline void pool_drive(void* p) {
    pool_lane_run* a = (pool_lane_run*)p;
    while (!a->bad_items && !a->bad_stats && !a->bad_waits &&
           (a->until_ns ? test_now_ns() < a->until_ns : a->done_rounds < a->rounds))
        pool_round(a, a->done_rounds++);
}

static inline int pool_lane_setup(pool_lane_run* a, accel_device* dev, accel_program* prog, uint32_t index, uint32_t rounds) {
    memset(a, 0, sizeof *a);
    a->dev = dev; a->prog = prog; a->index = index; a->rounds = rounds;
    if (!CHECK_OK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &a->q)) || !CHECK_OK(accel_signal_create(dev, 0, &a->s)))
        return 0;
    for (int b = 0; b < 3; b++) {
        if (!CHECK_OK(test_buffer_create(dev, POOL_ITEMS * 4u, ACCEL_MEMORY_HOST, &a->bufs[b]))) return 0;
        if (!CHECK_OK(test_buffer_set_u32(a->bufs[b], POOL_ITEMS, 0))) return 0;
    }
    return 1;
}

/* A program of pool_tick on dev. */
static inline accel_result pool_program_create(accel_device* dev, accel_program** out) {
    accel_program_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.name = "pool_tick"; pd.cpu = pool_tick; pd.buffer_count = 3; pd.constant_count = 3;
    return accel_program_create(dev, &pd, out);
}

#endif /* ACCEL_TEST_POOL_CHECK_H_INCLUDED */
