/* tests/soak.c — soak test: random pipelines across several queues and host threads, with random
   accel_signal_fail injections, for a bounded time.

       SOAK_SECONDS=60 build/soak/soak        (make soak; make soak-tsan runs it under ThreadSanitizer)

   Each of SOAK_WORKERS host threads (default 3) owns three queues (two compute, one copy) and loops over
   rounds until the time is up. A round is a random pipeline of 4..15 stages; a stage is one batch on a
   random queue of its worker:
       [wait gate g]  [wait stage j]...  work on its own buffer  signal(S_i, v_i)
   where the waited stages come earlier (so no pipeline can deadlock), and the work is: on a compute
   queue, copy the first waited stage's buffer (or fill a base value) then add one with a kernel; on the
   copy queue, fill a base value then copy the first waited stage's buffer over it. Gates are signals
   released by a shared injector thread at random moments, in random order across workers: each gate
   is either set or failed with a random reason; just before a gate is released, the injector may fail
   the signal of a stage still blocked on that gate (a direct injection).

   The model predicts, for every stage, the exact final value of its signal (v_i, or the failed value
   carrying the reason of the first failed wait in batch order, or the directly injected reason) and the
   exact contents of its buffer (untouched when a wait failed). On a GPU backend a wait may have been
   handed to the device before its signal failed (DESIGN 6.1): the work behind it may then run, and its
   signals fail with the reason of any failure that reached them first. There a failed stage's value
   must carry one of the reasons that could reach it (its gate's, its direct injection's, those its
   failed predecessors could carry) and its buffer is not checked; a stage that succeeds is exact. The worker checks both, with bounded
   waits; the queues must finish. A watchdog thread fails the run when nothing progresses for
   SOAK_WATCHDOG seconds (default 60) and prints what every worker was waiting for. At the end the
   device is destroyed and the counting allocator must have nothing outstanding.

   v0.3's calls ride along without changing what the model predicts: a compute stage may do its work in
   a scratch buffer from accel_queue_alloc (input copied or filled in, add one, copied out to its own
   buffer, accel_queue_free), may add one with accel_queue_exec_indirect (counts written by
   accel_queue_update earlier in the batch, into queue memory too) or add one to three by as many execs
   in a row (a repeated exec records by a shorter path), and a copy stage's buffer may live
   on a second device (a CPU device beside the one under test, same allocator), so that later stages
   copy from it across devices (peer copies: direct on the CPU, staged or direct on a GPU queue).

   Env: SOAK_SECONDS (default 10), SOAK_SEED (default: from the clock; printed), SOAK_WORKERS,
   SOAK_WATCHDOG, SOAK_NO_FAIL (1: no failure injection), ACCEL_TEST_BACKEND (the device; default cpu).
   The last line is the usual "N passed, N failed, N skipped": one per worker, one for the leak check, one for the watchdog, and on
   the CPU backend one for the pool checker: a thread that runs tests/pool_check.h's exactly-once rounds
   (every work group once, each exec complete before the next) on the soak device's 5-lane pool while
   the workers use it too. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test.h"
#include "kernels.h"
#include "pool_check.h"

#if !TEST_HAVE_THREADS
int main(void) {
    printf("soak: needs threads\n0 passed, 0 failed, 1 skipped\n");
    return 77;
}
#else

#define SK_MAX_STAGES 16
#define SK_MAX_GATES 4
#define SK_MAX_WORKERS 8
#define SK_QUEUES 3          /* per worker: compute, compute, copy */
#define SK_WORDS 64u
#define SK_WAIT_NS (30ull * 1000000000ull)

typedef struct sk_rng { uint64_t s; } sk_rng;
static uint32_t sk_next(sk_rng* r) {
    r->s ^= r->s << 13; r->s ^= r->s >> 7; r->s ^= r->s << 17;
    return (uint32_t)(r->s >> 16);
}
static uint32_t sk_below(sk_rng* r, uint32_t n) { return n ? sk_next(r) % n : 0; }
static accel_result sk_reason(sk_rng* r) { return (accel_result)(-1 - (int)sk_below(r, 9)); }
static uint64_t sk_failed_value(accel_result reason) { return ACCEL_SIGNAL_MAX + 1u + (uint64_t)(-(int)reason); }

/* ==== shared state ==== */
static accel_device* sk_dev;
static int sk_no_fail;                  /* SOAK_NO_FAIL=1: gates are set, never failed (a race hunt where
                                           DESIGN 6.1 lets failed work run on GPU backends) */
static accel_device* sk_dev2;           /* the other device of peer copies (a CPU device) */
static accel_program* sk_add_one;
static atomic_long sk_heartbeat;        /* bumped on every bit of progress */
static atomic_int sk_stop;
static atomic_long sk_rounds, sk_stages, sk_failed_stages, sk_injections, sk_mismatches;

/* ==== the injector: a shared list of gate jobs, served in random order ==== */
typedef struct sk_gate_job {
    accel_signal* gate;
    int fail;
    accel_result reason;
    uint64_t value;
    uint32_t direct_n;
    accel_signal* direct[SK_MAX_STAGES];    /* fail these first (their stages are blocked on this gate) */
    accel_result direct_reason[SK_MAX_STAGES];
} sk_gate_job;
#define SK_JOBS (SK_MAX_WORKERS * SK_MAX_GATES)
static atomic_flag sk_jobs_lock = ATOMIC_FLAG_INIT;
static sk_gate_job sk_jobs[SK_JOBS];
static int sk_jobs_n;
static accel_signal* sk_jobs_pushed;    /* counts pushed jobs: the injector waits on it */

static void sk_lock(void) { while (atomic_flag_test_and_set(&sk_jobs_lock)) { } }
static void sk_unlock(void) { atomic_flag_clear(&sk_jobs_lock); }
static uint64_t sk_pushed_total;        /* guarded by the lock */

static void sk_push_job(const sk_gate_job* j) {
    uint64_t total;
    for (;;) {
        sk_lock();
        if (sk_jobs_n < SK_JOBS) break;
        sk_unlock();   /* full: the injector is behind; try again */
    }
    sk_jobs[sk_jobs_n++] = *j;
    total = ++sk_pushed_total;
    sk_unlock();
    accel_signal_set(sk_jobs_pushed, total);
}

static void sk_injector(void* arg) {
    sk_rng rng = { *(uint64_t*)arg };
    uint64_t seen = 0;
    for (;;) {
        sk_gate_job job;
        int have = 0, left;
        sk_lock();
        if (sk_jobs_n > 0 && (sk_jobs_n > 1 || sk_below(&rng, 4) != 0)) {   /* now and then, let a second one arrive */
            int k = (int)sk_below(&rng, (uint32_t)sk_jobs_n);
            job = sk_jobs[k];
            sk_jobs[k] = sk_jobs[--sk_jobs_n];
            have = 1;
        }
        left = sk_jobs_n;
        sk_unlock();
        if (!have) {
            if (atomic_load(&sk_stop) && left == 0) return;
            /* wait for a push, briefly: a timeout here is normal */
            accel_result r = accel_signal_wait(sk_jobs_pushed, seen + 1, 200000);
            if (r == ACCEL_OK) seen = accel_signal_value(sk_jobs_pushed);
            else if (r != ACCEL_TIMEOUT) { fprintf(stderr, "soak: injector wait: %s\n", accel_result_string(r)); atomic_fetch_add(&sk_mismatches, 1); }
            continue;
        }
        for (uint32_t i = 0; i < job.direct_n; i++) {
            if (accel_signal_fail(job.direct[i], job.direct_reason[i]) != ACCEL_OK) atomic_fetch_add(&sk_mismatches, 1);
            atomic_fetch_add(&sk_injections, 1);
        }
        for (uint32_t spin = sk_below(&rng, 2000); spin; spin--) atomic_fetch_add(&sk_heartbeat, 0);   /* a random moment */
        if (job.fail) {
            if (accel_signal_fail(job.gate, job.reason) != ACCEL_OK) atomic_fetch_add(&sk_mismatches, 1);
            atomic_fetch_add(&sk_injections, 1);
        } else if (accel_signal_set(job.gate, job.value) != ACCEL_OK) {
            atomic_fetch_add(&sk_mismatches, 1);
        }
        accel_signal_destroy(job.gate);   /* the injector's reference; queues may still use it */
        atomic_fetch_add(&sk_heartbeat, 1);
    }
}

/* ==== a worker ==== */
typedef struct sk_stage {
    int queue;
    int gate;                      /* -1: none; else waits on it first */
    int waits[2], waits_n;         /* earlier stages */
    uint64_t value;
    uint32_t base;
    int scratch, indirect;         /* compute stage: work in queue memory; add one by an indirect exec */
    uint32_t adds;                 /* ... else add this many (1-3) by as many execs in a row */
    int peer;                      /* copy stage: its buffer is sk_dev2's */
    int direct;                    /* directly failed by the injector before its gate opens */
    accel_result direct_reason;
    /* prediction */
    int ran;
    uint64_t expect_value;
    uint32_t reasons;              /* GPU backends: bit -r for each reason r its failure may carry */
    uint32_t expect_word;
    accel_signal* s;
    accel_buffer* buf;
    int buf_dropped;               /* handle destroyed right after submit (in use): not checked */
} sk_stage;
typedef struct sk_worker {
    int id;
    uint64_t seed;
    accel_queue* q[SK_QUEUES];
    int ok;                        /* no mismatch seen */
    long rounds;
    /* what it is doing, for the watchdog */
    atomic_int round_stage;
    atomic_int phase;              /* 0 building, 1 waiting for stages, 2 finishing queues */
} sk_worker;

static void sk_mismatch(sk_worker* w, const char* what, int stage, unsigned long long got, unsigned long long want) {
    fprintf(stderr, "soak: worker %d round %ld stage %d: %s: got %llu (0x%llx), expected %llu (0x%llx)\n",
            w->id, w->rounds, stage, what, got, got, want, want);
    w->ok = 0;
    atomic_fetch_add(&sk_mismatches, 1);
}

static uint32_t sk_reason_bit(accel_result r) { return 1u << (-(int)r & 31); }
static void sk_predict(sk_stage* st, int n, const int* gate_fail, const accel_result* gate_reason) {
    for (int i = 0; i < n; i++) {
        sk_stage* s = &st[i];
        uint64_t failed = 0;
        s->reasons = s->direct ? sk_reason_bit(s->direct_reason) : 0;
        if (s->gate >= 0 && gate_fail[s->gate]) {
            failed = sk_failed_value(gate_reason[s->gate]);
            s->reasons |= sk_reason_bit(gate_reason[s->gate]);
        }
        for (int k = 0; k < s->waits_n; k++) {
            const sk_stage* p = &st[s->waits[k]];
            if (p->expect_value > ACCEL_SIGNAL_MAX && !failed) failed = p->expect_value;
            if (p->expect_value > ACCEL_SIGNAL_MAX) s->reasons |= p->reasons;
        }
        s->ran = failed == 0;
        s->expect_value = s->direct ? sk_failed_value(s->direct_reason) : failed ? failed : s->value;
        if (!s->ran) s->expect_word = 0;
        else if (s->queue == SK_QUEUES - 1) s->expect_word = s->waits_n ? st[s->waits[0]].expect_word : s->base;
        else s->expect_word = (s->waits_n ? st[s->waits[0]].expect_word : s->base) + s->adds;
    }
}

/* The CPU backend gates every wait on the host: exact. A GPU backend: see the top of the file. */
static int sk_value_ok(const sk_stage* s, uint64_t v) {
    if (v == s->expect_value) return 1;
    if (test_backend_is_cpu() || s->expect_value <= ACCEL_SIGNAL_MAX || v <= ACCEL_SIGNAL_MAX) return 0;
    return v - ACCEL_SIGNAL_MAX - 1u < 32u && (s->reasons & (1u << (v - ACCEL_SIGNAL_MAX - 1u))) != 0;
}

static void sk_record(sk_worker* w, sk_stage* st, int i, accel_signal* const* gates, const uint64_t* gate_value) {
    sk_stage* s = &st[i];
    accel_queue* q = w->q[s->queue];
    uint32_t n = SK_WORDS;
    if (s->gate >= 0) accel_queue_wait(q, gates[s->gate], gate_value[s->gate]);
    for (int k = 0; k < s->waits_n; k++) accel_queue_wait(q, st[s->waits[k]].s, st[s->waits[k]].value);
    if (s->queue == SK_QUEUES - 1 && s->peer) {   /* copy queue, the buffer another device's: copies only */
        accel_buffer* base = NULL;
        if (s->waits_n) accel_queue_copy(q, s->buf, 0, st[s->waits[0]].buf, 0, SK_WORDS * 4);
        else if (accel_queue_alloc(q, SK_WORDS * 4, ACCEL_MEMORY_DEVICE, &base) == ACCEL_OK) {
            accel_queue_fill(q, base, 0, SK_WORDS * 4, s->base);
            accel_queue_copy(q, s->buf, 0, base, 0, SK_WORDS * 4);
            accel_queue_free(q, base);
        } else sk_mismatch(w, "accel_queue_alloc (base)", i, 0, 0);
    } else if (s->queue == SK_QUEUES - 1) {   /* copy queue */
        accel_queue_fill(q, s->buf, 0, SK_WORDS * 4, s->base);
        if (s->waits_n) accel_queue_copy(q, s->buf, 0, st[s->waits[0]].buf, 0, SK_WORDS * 4);
    } else {
        accel_buffer *work = s->buf, *counts = NULL;
        if (s->scratch && accel_queue_alloc(q, SK_WORDS * 4, ACCEL_MEMORY_DEVICE, &work) != ACCEL_OK) {
            sk_mismatch(w, "accel_queue_alloc", i, 0, 0);
            work = s->buf;
        }
        if (s->waits_n) accel_queue_copy(q, work, 0, st[s->waits[0]].buf, 0, SK_WORDS * 4);
        else accel_queue_fill(q, work, 0, SK_WORDS * 4, s->base);
        if (s->indirect && accel_queue_alloc(q, 16, ACCEL_MEMORY_DEVICE, &counts) == ACCEL_OK) {
            static const uint32_t groups[4] = { SK_WORDS / 16, 1, 1, 0 };
            static const uint32_t local[3] = { 16, 1, 1 };
            accel_queue_update(q, counts, 0, groups, sizeof groups);
            accel_queue_exec_indirect(q, sk_add_one, &work, 1, &n, 1, local, counts, 0);
            accel_queue_free(q, counts);
        } else {
            if (s->indirect) sk_mismatch(w, "accel_queue_alloc (counts)", i, 0, 0);
            for (uint32_t k = 0; k < s->adds; k++)
                accel_queue_exec(q, sk_add_one, &work, 1, &n, 1, accel_exec_1d(SK_WORDS, 16));
        }
        if (work != s->buf) {
            accel_queue_copy(q, s->buf, 0, work, 0, SK_WORDS * 4);
            accel_queue_free(q, work);
        }
    }
    accel_queue_signal(q, s->s, s->value);
}

static void sk_round(sk_worker* w, sk_rng* rng) {
    sk_stage st[SK_MAX_STAGES];
    accel_signal* gates[SK_MAX_GATES];
    uint64_t gate_value[SK_MAX_GATES];
    int gate_fail[SK_MAX_GATES];
    accel_result gate_reason[SK_MAX_GATES];
    sk_gate_job jobs[SK_MAX_GATES];
    int n = 4 + (int)sk_below(rng, SK_MAX_STAGES - 4), g = 1 + (int)sk_below(rng, SK_MAX_GATES);
    atomic_store(&w->phase, 0);
    memset(st, 0, sizeof st);
    memset(jobs, 0, sizeof jobs);
    for (int k = 0; k < g; k++) {
        gate_value[k] = 1 + sk_below(rng, 100);
        gate_fail[k] = !sk_no_fail && sk_below(rng, 10) < 3;
        gate_reason[k] = sk_reason(rng);
        if (accel_signal_create(sk_dev, 0, &gates[k]) != ACCEL_OK) { sk_mismatch(w, "gate create", -1, 0, 0); return; }
        jobs[k].gate = gates[k];
        jobs[k].fail = gate_fail[k];
        jobs[k].reason = gate_reason[k];
        jobs[k].value = gate_value[k] + sk_below(rng, 3);   /* set may overshoot: waits are >= */
    }
    for (int i = 0; i < n; i++) {
        sk_stage* s = &st[i];
        s->queue = (int)sk_below(rng, SK_QUEUES);
        s->gate = sk_below(rng, 10) < 4 ? (int)sk_below(rng, (uint32_t)g) : -1;
        s->waits_n = i == 0 ? 0 : (int)sk_below(rng, 3);
        for (int k = 0; k < s->waits_n; k++) s->waits[k] = (int)sk_below(rng, (uint32_t)i);
        s->value = 1 + sk_below(rng, 1000);
        s->base = 0x100u * (uint32_t)(i + 1) + sk_below(rng, 0x100);
        s->direct = !sk_no_fail && s->gate >= 0 && sk_below(rng, 6) == 0;
        s->direct_reason = sk_reason(rng);
        s->scratch = sk_below(rng, 2) == 0;
        s->indirect = sk_below(rng, 3) == 0;
        s->adds = s->indirect ? 1u : 1u + sk_below(rng, 3);
        /* one buffer of a copy may be another device's: not when the stage it copies from has one */
        s->peer = s->queue == SK_QUEUES - 1 && sk_below(rng, 3) == 0 && !(s->waits_n && st[s->waits[0]].peer);
        if (accel_signal_create(sk_dev, 0, &s->s) != ACCEL_OK ||
            test_buffer_create(s->peer ? sk_dev2 : sk_dev, SK_WORDS * 4, ACCEL_MEMORY_DEVICE, &s->buf) != ACCEL_OK) {
            sk_mismatch(w, "create", i, 0, 0);
            return;
        }
        if (s->direct) {
            sk_gate_job* j = &jobs[s->gate];
            j->direct[j->direct_n] = s->s;
            j->direct_reason[j->direct_n++] = s->direct_reason;
        }
    }
    sk_predict(st, n, gate_fail, gate_reason);
    /* record and submit, stage by stage */
    for (int i = 0; i < n; i++) {
        accel_result r;
        sk_record(w, st, i, gates, gate_value);
        r = accel_queue_submit(w->q[st[i].queue]);
        if (r != ACCEL_OK) sk_mismatch(w, "submit", i, (unsigned long long)r, 0);
    }
    /* leaves whose buffer nobody reads: drop the handle while the work may still use it */
    for (int i = 0; i < n; i++) {
        int used = 0;
        for (int k = i + 1; k < n; k++) used |= st[k].waits_n && st[k].waits[0] == i;
        if (!used && sk_below(rng, 4) == 0) { accel_buffer_destroy(st[i].buf); st[i].buf_dropped = 1; }
    }
    /* hand the gates to the injector (it releases them in random order among all workers) */
    for (int k = 0; k < g; k++) {
        sk_push_job(&jobs[k]);   /* the injector destroys its gate handle when done */
    }
    /* check every stage: bounded waits, exact values */
    atomic_store(&w->phase, 1);
    for (int i = 0; i < n; i++) {
        sk_stage* s = &st[i];
        accel_result r, want = s->expect_value > ACCEL_SIGNAL_MAX ? ACCEL_ERROR_SIGNAL_FAILED : ACCEL_OK;
        atomic_store(&w->round_stage, i);
        r = (i & 1) ? accel_signal_wait(s->s, s->value, SK_WAIT_NS)
                    : accel_signal_wait_many(&s->s, &s->value, 1, (i & 2) != 0, SK_WAIT_NS, NULL);
        if (r == ACCEL_TIMEOUT) sk_mismatch(w, "wait timed out (hang)", i, 0, 0);
        else if (r != want) sk_mismatch(w, "wait result", i, (unsigned long long)(long long)r, (unsigned long long)(long long)want);
        if (!sk_value_ok(s, accel_signal_value(s->s)))
            sk_mismatch(w, "signal value", i, accel_signal_value(s->s), s->expect_value);
        atomic_fetch_add(&sk_heartbeat, 1);
        atomic_fetch_add(&sk_stages, 1);
        if (!s->ran) atomic_fetch_add(&sk_failed_stages, 1);
    }
    atomic_store(&w->phase, 2);
    for (int k = 0; k < SK_QUEUES; k++) {
        accel_result r = accel_queue_finish(w->q[k], SK_WAIT_NS);
        if (r != ACCEL_OK) sk_mismatch(w, "queue finish", k, (unsigned long long)(long long)r, 0);
    }
    for (int i = 0; i < n; i++) {
        sk_stage* s = &st[i];
        if (!s->buf_dropped && !s->ran && !test_backend_is_cpu()) accel_buffer_destroy(s->buf);   /* may have run */
        else if (!s->buf_dropped) {
            uint32_t a = test_buffer_u32(s->buf, 0), b = test_buffer_u32(s->buf, SK_WORDS - 1);
            if (a != s->expect_word || b != s->expect_word) sk_mismatch(w, "buffer word", i, a != s->expect_word ? a : b, s->expect_word);
            accel_buffer_destroy(s->buf);
        }
        accel_signal_destroy(s->s);
    }
    w->rounds++;
    atomic_fetch_add(&sk_rounds, 1);
}

static double sk_seconds;
static uint64_t sk_t0;
static void sk_worker_main(void* arg) {
    sk_worker* w = (sk_worker*)arg;
    sk_rng rng = { w->seed };
    w->ok = 1;
    for (int k = 0; k < SK_QUEUES; k++) {
        if (accel_queue_create(sk_dev, k == SK_QUEUES - 1 ? ACCEL_QUEUE_COPY : ACCEL_QUEUE_COMPUTE, &w->q[k]) != ACCEL_OK) {
            sk_mismatch(w, "queue create", k, 0, 0);
            return;
        }
    }
    while ((double)(test_now_ns() - sk_t0) / 1e9 < sk_seconds && w->ok) sk_round(w, &rng);
    for (int k = 0; k < SK_QUEUES; k++) accel_queue_destroy(w->q[k]);
}

/* ==== the pool checker (CPU backend): exactly-once rounds on the soak device, beside the workers ==== */
static pool_lane_run sk_pool;
static accel_program* sk_pool_prog;
static void sk_pool_main(void* arg) {
    pool_lane_run* a = (pool_lane_run*)arg;
    uint64_t until = a->until_ns;
    while (test_now_ns() < until && !a->bad_items && !a->bad_stats && !a->bad_waits) {
        uint64_t next = test_now_ns() + 100000000ull;    /* 0.1 s a slice, then a heartbeat */
        a->until_ns = next < until ? next : until;
        pool_drive(a);
        atomic_fetch_add(&sk_heartbeat, 1);
    }
}

/* ==== watchdog ==== */
static sk_worker sk_workers[SK_MAX_WORKERS];
static int sk_nworkers;
static accel_signal* sk_done;           /* set when the run ends: wakes the watchdog */
static double sk_watchdog_s;
static void sk_watchdog(void* arg) {
    long last = -1;
    uint64_t since = test_now_ns();
    (void)arg;
    for (;;) {
        long hb;
        if (accel_signal_wait(sk_done, 1, 1000000000ull) == ACCEL_OK) return;
        hb = atomic_load(&sk_heartbeat);
        if (hb != last) { last = hb; since = test_now_ns(); continue; }
        if ((double)(test_now_ns() - since) / 1e9 < sk_watchdog_s) continue;
        fprintf(stderr, "soak: WATCHDOG: no progress for %.0f s: a hang\n", sk_watchdog_s);
        for (int i = 0; i < sk_nworkers; i++)
            fprintf(stderr, "  worker %d: round %ld, %s, stage %d\n", i, sk_workers[i].rounds,
                    atomic_load(&sk_workers[i].phase) == 0 ? "building" : atomic_load(&sk_workers[i].phase) == 1 ? "waiting for a stage" : "finishing its queues",
                    atomic_load(&sk_workers[i].round_stage));
        sk_lock();
        fprintf(stderr, "  injector: %d gate jobs pending\n", sk_jobs_n);
        sk_unlock();
        printf("0 passed, 1 failed, 0 skipped\n");
        fflush(stdout);
        _Exit(1);
    }
}

static double sk_env(const char* name, double def) {
    const char* v = getenv(name);
    return v && v[0] ? atof(v) : def;
}

int main(int argc, char** argv) {
    test_alloc_state st;
    accel_device_desc desc;
    test_thread workers[SK_MAX_WORKERS], injector, watchdog, pool_thread;
    uint64_t seed = (uint64_t)sk_env("SOAK_SEED", 0);
    int passed = 0, failed = 0;
    test_begin(argc, argv);
    if (test_g.all_skip) { printf("soak: %s\n0 passed, 0 failed, 1 skipped\n", test_g.all_skip_reason); return 77; }
    if (seed == 0) seed = test_now_ns() | 1u;
    sk_seconds = sk_env("SOAK_SECONDS", 10);
    sk_watchdog_s = sk_env("SOAK_WATCHDOG", 60);
    sk_nworkers = (int)sk_env("SOAK_WORKERS", 3);
    sk_no_fail = sk_env("SOAK_NO_FAIL", 0) != 0;
    if (sk_nworkers < 1) sk_nworkers = 1;
    if (sk_nworkers > SK_MAX_WORKERS) sk_nworkers = SK_MAX_WORKERS;
    printf("soak: %.0f s, %d workers x %d queues + injector + watchdog, SOAK_SEED=%llu, backend %s\n",
           sk_seconds, sk_nworkers, SK_QUEUES, (unsigned long long)seed, test_g.backend_name);
    fflush(stdout);

    test_alloc_init(&st);
    memset(&desc, 0, sizeof desc);
    desc.allocator = test_allocator(&st);
    desc.cpu_threads = 5;   /* several lanes, above the core count of small machines */
    desc.debug = true;
    desc.label = "soak";
    if (test_device_create_desc(desc, &sk_dev) != ACCEL_OK || test_program_create(sk_dev, TK_ADD_ONE, &sk_add_one) != ACCEL_OK ||
        accel_signal_create(sk_dev, 0, &sk_jobs_pushed) != ACCEL_OK || accel_signal_create(sk_dev, 0, &sk_done) != ACCEL_OK ||
        accel_device_create(&(accel_device_desc){ .backend = accel_cpu_backend(), .allocator = desc.allocator,
                                                  .cpu_threads = 2, .logger = test_logger(), .label = "soak peer" },
                            &sk_dev2) != ACCEL_OK) {
        printf("soak: setup failed\n0 passed, 1 failed, 0 skipped\n");
        return 1;
    }
    sk_t0 = test_now_ns();
    uint64_t inj_seed = seed * 0x9E3779B97F4A7C15ull + 1u;
    if (!test_thread_start(&watchdog, sk_watchdog, NULL) || !test_thread_start(&injector, sk_injector, &inj_seed)) {
        printf("soak: thread start failed\n0 passed, 1 failed, 0 skipped\n");
        return 1;
    }
    for (int i = 0; i < sk_nworkers; i++) {
        sk_workers[i].id = i;
        sk_workers[i].seed = (seed + (uint64_t)i * 0x2545F4914F6CDD1Dull) | 1u;
        if (!test_thread_start(&workers[i], sk_worker_main, &sk_workers[i])) { printf("soak: thread start failed\n0 passed, 1 failed, 0 skipped\n"); return 1; }
    }
    if (test_backend_is_cpu() && (pool_program_create(sk_dev, &sk_pool_prog) != ACCEL_OK ||
                                  !pool_lane_setup(&sk_pool, sk_dev, sk_pool_prog, 0, 0) ||
                                  (sk_pool.until_ns = sk_t0 + (uint64_t)(sk_seconds * 1e9),
                                   !test_thread_start(&pool_thread, sk_pool_main, &sk_pool)))) {
        printf("soak: pool checker setup failed\n0 passed, 1 failed, 0 skipped\n");
        return 1;
    }
    for (int i = 0; i < sk_nworkers; i++) {
        test_thread_join(&workers[i]);
        if (sk_workers[i].ok) passed++; else failed++;
    }
    if (test_backend_is_cpu()) {
        test_thread_join(&pool_thread);
        if (!sk_pool.bad_items && !sk_pool.bad_stats && !sk_pool.bad_waits) passed++;
        else {
            failed++;
            pool_report(&sk_pool, "soak: pool checker");
        }
    }
    atomic_store(&sk_stop, 1);
    test_thread_join(&injector);
    accel_signal_set(sk_done, 1);
    test_thread_join(&watchdog);
    passed++;   /* no hang: the watchdog never fired */

    accel_device_destroy(sk_dev);
    accel_device_destroy(sk_dev2);
    if (atomic_load(&st.outstanding) == 0 && atomic_load(&st.size_mismatch) == 0 && atomic_load(&sk_mismatches) == 0) passed++;
    else {
        failed++;
        fprintf(stderr, "soak: after device destroy: %ld allocations outstanding, %ld size mismatches, %ld mismatches\n",
                atomic_load(&st.outstanding), atomic_load(&st.size_mismatch), atomic_load(&sk_mismatches));
    }
    printf("soak: %.1f s, %ld rounds, %ld stages (%ld failed by injection, as predicted), %ld injections, %ld host allocations, %ld mismatches\n",
           (double)(test_now_ns() - sk_t0) / 1e9, atomic_load(&sk_rounds), atomic_load(&sk_stages), atomic_load(&sk_failed_stages),
           atomic_load(&sk_injections), atomic_load(&st.allocs), atomic_load(&sk_mismatches));
    printf("%d passed, %d failed, 0 skipped\n", passed, failed);
    return failed ? 1 : 0;
}
#endif
