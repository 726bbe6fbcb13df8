/* mpi_halo.c — a 1-D heat diffusion split over MPI ranks, with the halo exchange in accel's queue order.

   Each rank owns n cells of a rod of size*n cells (Dirichlet 0 at both ends) and one CPU accel device
   with a COMPUTE and a COPY queue. Step s reads u[s % 2] and writes u[(s + 1) % 2]:

       compute queue, step s:  wait halo >= s                (nothing to wait for: keeps a failure short)
                               native step: MPI_Irecv x2 into `recv`, MPI_Isend x2 of the edge cells
                               exec interior                 (cells 1 .. n-2: needs no halo) ...
                               native step: MPI_Testall      ... while the exchange was in flight
                               wait halo >= s + 1
                               exec boundary                 (cells 0 and n-1, from `recv`)
                               signal done = s + 1
       copy queue, every K:    wait done >= s + 1            (and after the last step, K or not)
                               native step: checksum of u[(s + 1) % 2], MPI_Iallreduce (a sum)
                               signal summed                 (step s + 2 overwrites that u: it waits)
       compute queue, the end: wait reduced >= the all-reduces; signal finished
       main thread:            MPI progress: MPI_Test* the requests the native steps posted; on
                               completion, accel_signal_set(halo, s + 1) (and `reduced` for the sums)

   So the interior of each step overlaps its exchange; only the two boundary cells wait for MPI. The
   signal `halo` is set by whoever sees the exchange complete first: the native step after the
   interior (no thread hop when the neighbours were on time) or the main thread's progress loop. The
   checksums run on the copy queue beside the next step's interior. Every batch is submitted before the
   first step runs: after that the host does nothing but MPI progress. (Why the compute queue posts and
   tests itself: with one core per rank, as under mpirun's default binding on a small machine, another
   thread woken to post or test would mostly get the core only when the interior ends, and nothing
   would overlap.)

   Threads: the native steps run on accel's queue threads and call MPI while the main thread tests
   requests, so this needs MPI_THREAD_MULTIPLE (Open MPI 4 provides it; the program says so and stops
   where the MPI does not). A funneled variant would have the native steps hand the posts to the main
   thread, which then makes every MPI call: one more hop per message.

   Failure: `--fail signal:R:S` makes rank R fail its halo signal (accel_signal_fail) in step S instead
   of posting the exchange; `--fail mpi:R:S` makes it post an MPI_Isend to a rank that does not exist
   (the communicator returns errors: MPI_ERRORS_RETURN), and the error fails the signal. The failed
   signal drops the rest of the compute queue's batch, which fails `done`, which drops the copy queue's
   batches: the rank's queues stop at once. Its main thread sees the failed signal and sends an abort
   message (a point-to-point message with its own tag, no MPI_Abort) to every other rank, where a
   receive is always posted; each rank that gets it fails its own signals, so every rank's waiting
   queues end with ACCEL_ERROR_SIGNAL_FAILED within milliseconds. No rank can finish before the abort
   message reaches it: the run ends with an all-reduce (the checksum after the last step, K or not),
   which a failed rank posts only after the agreement below, which each rank joins only once its own
   queues stopped: so every rank's end waits on every other rank. Then each rank cancels its pending
   receives, posts the all-reduces it did not reach (so that every collective is matched), agrees with
   the others on the outcome (an all-reduce on a second communicator), finalizes MPI and exits 1 with a
   message naming the rank and step that failed. A watchdog (--timeout SEC, default 10) fails the
   signals of a rank that sees no progress for that long, so no rank hangs even if a message is lost;
   and a rank whose agreement with the others does not complete within twice that time (a rank stopped
   or gone) says so and calls MPI_Abort, which ends every rank. --timeout inf (or anything from 2^63
   ns, about 292 years) turns both off: a rank then waits for the others as long as it takes.

   It checks every cell and every checksum against a serial computation of the whole rod (skip with
   --no-check), and prints how much of the exchange the interior hid.

   Build and run (from the repository root):
     mkdir -p build && mpicc -std=gnu11 -O2 -I. examples/mpi_halo.c -o build/mpi_halo -lpthread -lm && mpirun -np 2 --oversubscribe ./build/mpi_halo [cpu] [OPTIONS]

   (as root, mpirun wants --allow-run-as-root, or the environment OMPI_ALLOW_RUN_AS_ROOT=1
   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1). OPTIONS: --cells N cells per rank (default 65536), --steps S
   (100), --every K: the all-reduce period (10; the last step always has one), --threads T accel lanes
   per rank (1: ranks share the machine's cores), --fail signal|mpi:RANK:STEP (RANK < the ranks, STEP <
   S), --no-check, --timeout SEC (10; inf: none), --quiet: rank 0 prints one line, "mpi_halo accel
   wall_ms W exch_us E hidden_pct H wait_us B checksum C" (C: after the last step). Exit 0 when every
   check passed, 1 on a failure, 2 on bad usage. */
#define ACCEL_CPU_SPIN_NS 20000u   /* ranks share the cores: an idle executor spins 20 us, not 200 */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include <mpi.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA 0.25
enum { TAG_TO_RIGHT = 1, TAG_TO_LEFT = 2, TAG_ABORT = 3, GROUP = 1024 };

/* ==== the kernels (double precision; the serial check runs the same expression) ==== */
static double heat(double l, double c, double r) { return c + ALPHA * (l - 2.0 * c + r); }

/* buffers { src, dst }, constants { n }: cells 1 .. n-2, which need no halo */
static void interior_cpu(const accel_dispatch* d) {
    const double* src = (const double*)d->buffers[0];
    double* dst = (double*)d->buffers[1];
    uint32_t i0 = d->group_id[0] * d->group_size[0], end = d->global_size[0];
    uint32_t i1 = i0 + d->group_size[0] < end ? i0 + d->group_size[0] : end;
    for (uint32_t i = i0 + 1; i < i1 + 1; i++) dst[i] = heat(src[i - 1], src[i], src[i + 1]);
}
/* buffers { src, dst, recv }, constants { n }: cells 0 and n-1, from the neighbours' cells in recv */
static void boundary_cpu(const accel_dispatch* d) {
    const double* src = (const double*)d->buffers[0];
    double* dst = (double*)d->buffers[1];
    const double* recv = (const double*)d->buffers[2];
    uint32_t n = d->constants[0];
    dst[0] = heat(recv[0], src[0], src[1]);
    dst[n - 1] = heat(src[n - 2], src[n - 1], recv[1]);
}

/* ==== the options ==== */
typedef struct options {
    uint32_t cells, steps, every, threads, fail_rank, fail_step;
    int fail_kind;                     /* 0 none, 1 signal, 2 mpi */
    int check, quiet;
    double timeout_s;
} options;

static int parse_u32(const char* s, uint32_t* out) {
    char* end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > 0xffffffffu) return 0;
    *out = (uint32_t)v;
    return 1;
}
static int parse_fail(const char* s, options* o) {
    const char* rest = !strncmp(s, "signal:", 7) ? s + 7 : !strncmp(s, "mpi:", 4) ? s + 4 : NULL;
    char rank[16];
    const char* colon = rest ? strchr(rest, ':') : NULL;
    if (!colon || (size_t)(colon - rest) >= sizeof rank) return 0;
    memcpy(rank, rest, (size_t)(colon - rest));
    rank[colon - rest] = 0;
    o->fail_kind = s[0] == 's' ? 1 : 2;
    return parse_u32(rank, &o->fail_rank) && parse_u32(colon + 1, &o->fail_step);
}
/* A positive number of seconds (inf allowed): 1 when good */
static int parse_seconds(const char* s, double* out) {
    char* end;
    double v = strtod(s, &end);
    if (!*s || *end || !(v > 0)) return 0;
    *out = v;
    return 1;
}
/* 1 when argv is good (and *o filled), else 0 */
static int parse_options(int argc, char** argv, options* o) {
    memset(o, 0, sizeof *o);
    o->cells = 65536; o->steps = 100; o->every = 10; o->threads = 1; o->check = 1; o->timeout_s = 10;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(a, "cpu")) continue;
        else if (!strcmp(a, "--no-check")) o->check = 0;
        else if (!strcmp(a, "--quiet")) o->quiet = 1;
        else if (!v) ok = 0;
        else if (!strcmp(a, "--cells")) ok = parse_u32(v, &o->cells);
        else if (!strcmp(a, "--steps")) ok = parse_u32(v, &o->steps);
        else if (!strcmp(a, "--every")) ok = parse_u32(v, &o->every);
        else if (!strcmp(a, "--threads")) ok = parse_u32(v, &o->threads);
        else if (!strcmp(a, "--fail")) ok = parse_fail(v, o);
        else if (!strcmp(a, "--timeout")) ok = parse_seconds(v, &o->timeout_s);
        else ok = 0;
        if (!ok) return 0;
        if (strcmp(a, "--no-check") && strcmp(a, "--quiet")) i++;
    }
    return o->cells >= 4 && o->cells <= (1u << 28) && o->steps >= 1 && o->every >= 1 && o->threads >= 1;
}

/* ==== one rank's state, shared by the native steps (accel's queue threads) and the main thread ==== */
typedef struct reduction { MPI_Request req; double local, global; uint64_t step; } reduction;
typedef struct rank_state {
    options opt;
    MPI_Comm comm, ctl;                /* the data communicator (errors return); a second one for control */
    int rank, size, left, right;       /* left/right: MPI_PROC_NULL at the rod's ends */
    accel_device* dev;
    accel_queue *compute, *copy;
    accel_program *interior, *boundary;
    accel_buffer *u[2], *recv, *ts;
    accel_signal *halo, *done, *summed, *reduced, *finished, *posted;
    double send[2];                    /* the edge cells in flight (MPI_Isend) */
    /* the exchange in flight (one at a time: step s+1 is posted after step s's boundary, which waited
       for step s's exchange): requests, the step, and when it was posted and seen complete */
    MPI_Request xreq[4];
    int xn;
    atomic_uint_fast64_t xposted;      /* steps posted (published after xreq, xn) */
    atomic_uint_fast64_t xdone;        /* steps seen complete (under `testing`) */
    atomic_flag testing;               /* held while a thread tests xreq (one at a time, as MPI wants) */
    uint64_t *xpost_ns, *xdone_ns;
    char xerror[MPI_MAX_ERROR_STRING + 64];
    /* the all-reduces of the checksum */
    reduction* red;
    uint32_t nred;                     /* steps / every, rounded up (the last step has one) */
    atomic_uint nred_posted;
    uint32_t nred_done;                /* the prefix seen complete (main thread) */
    atomic_uint_fast64_t wakes;        /* posts so far: the native steps set `posted` to it */
    /* failure */
    MPI_Request abort_req;
    long long abort_in[3];             /* the abort message received: { rank, step, monotonic ns } */
    long long origin[3];               /* the same for the failure this rank knows of (own or told) */
    int failed_here, told;
} rank_state;

static uint64_t now_ns(void) { return accel_host_time_ns(); }
/* --timeout in ns; from 2^63 ns (about 292 years, inf included) UINT64_MAX: no time limit */
static uint64_t limit_ns(const options* o) {
    return o->timeout_s * 1e9 >= 0x1p63 ? UINT64_MAX : (uint64_t)(o->timeout_s * 1e9);
}
/* 1 when the time since `since` is past the limit (never for UINT64_MAX) */
static int past(uint64_t since, uint64_t limit) { return limit != UINT64_MAX && now_ns() - since > limit; }
/* Step s is followed by an all-reduce: every K steps, and after the last step (so that the run ends
   with a collective: no rank finishes while another has failed). Its index is s / K. */
static int reduces_after(const options* o, uint32_t s) {
    return (s + 1) % o->every == 0 || s + 1 == o->steps;
}
static int failed(accel_signal* s) { return accel_signal_value(s) > ACCEL_SIGNAL_MAX; }
/* Wakes the main thread after a post: `posted` counts the posts. */
static void wake(rank_state* st) { accel_signal_set(st->posted, atomic_fetch_add(&st->wakes, 1) + 1); }

/* The compute queue's native step: post step s's exchange (or, for --fail, fail the halo signal / make
   MPI return an error). Runs on the compute queue's thread once step s-1 completed. */
typedef struct post_arg { rank_state* st; uint64_t step; } post_arg;
static void post_exchange(const accel_native* nat, void* user) {
    post_arg* a = (post_arg*)user;
    rank_state* st = a->st;
    const double* u = (const double*)accel_buffer_map(st->u[a->step % 2]);
    double* send = st->send;
    double* recv = (double*)accel_buffer_map(st->recv);
    int inject = st->opt.fail_kind && st->opt.fail_rank == (uint32_t)st->rank && st->opt.fail_step == a->step;
    int rc = MPI_SUCCESS;
    MPI_Comm c = st->comm;
    MPI_Request* q = st->xreq;
    (void)nat;
    if (inject && st->opt.fail_kind == 1) {
        snprintf(st->xerror, sizeof st->xerror, "failed its halo signal in step %llu (--fail signal:%d:%llu)",
                 (unsigned long long)a->step, st->rank,
                 (unsigned long long)a->step);
        accel_signal_fail(st->halo, ACCEL_ERROR_BACKEND);
        return;
    }
    st->xn = 0;
    st->xpost_ns[a->step] = now_ns();
    send[0] = u[0];                    /* the previous step's writes are complete: stage the edges */
    send[1] = u[st->opt.cells - 1];
    if (rc == MPI_SUCCESS) rc = MPI_Irecv(&recv[0], 1, MPI_DOUBLE, st->left, TAG_TO_RIGHT, c, &q[st->xn++]);
    if (rc == MPI_SUCCESS) rc = MPI_Irecv(&recv[1], 1, MPI_DOUBLE, st->right, TAG_TO_LEFT, c, &q[st->xn++]);
    if (rc == MPI_SUCCESS) rc = MPI_Isend(&send[0], 1, MPI_DOUBLE, st->left, TAG_TO_LEFT, c, &q[st->xn++]);
    if (rc == MPI_SUCCESS)   /* --fail mpi: a rank that does not exist */
        rc = MPI_Isend(&send[1], 1, MPI_DOUBLE, inject ? st->size + 7 : st->right, TAG_TO_RIGHT, c,
                       &q[st->xn++]);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        st->xn--;                      /* the failed call made no request */
        MPI_Error_string(rc, msg, &len);
        snprintf(st->xerror, sizeof st->xerror, "MPI error posting step %llu's exchange: %s",
                 (unsigned long long)a->step, msg);
        accel_signal_fail(st->halo, ACCEL_ERROR_BACKEND);
    }
    atomic_store_explicit(&st->xposted, a->step + 1, memory_order_release);
    wake(st);
}

/* Tests step `step`'s exchange, if it is the one in flight and no other thread is testing it; sets
   `halo` when it completed. 1 when something moved. Any thread (MPI_THREAD_MULTIPLE). */
static int try_complete(rank_state* st, uint64_t step) {
    int flag = 0;
    if (atomic_load_explicit(&st->xposted, memory_order_acquire) != step + 1 ||
        atomic_load(&st->xdone) > step || failed(st->halo) || atomic_flag_test_and_set(&st->testing))
        return 0;
    if (atomic_load(&st->xdone) <= step) {   /* (not completed by the other thread meanwhile) */
        if (MPI_Testall(st->xn, st->xreq, &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            snprintf(st->xerror, sizeof st->xerror, "MPI_Testall failed in step %llu's exchange",
                     (unsigned long long)step);
            accel_signal_fail(st->halo, ACCEL_ERROR_BACKEND);
        } else if (flag) {
            st->xdone_ns[step] = now_ns();
            atomic_store(&st->xdone, step + 1);
            accel_signal_set(st->halo, step + 1);
        }
    }
    atomic_flag_clear(&st->testing);
    return flag;
}
/* The compute queue's native step after the interior: completes the exchange here when the neighbours'
   cells already arrived, so that the boundary does not wait for the main thread to wake. */
static void test_exchange(const accel_native* nat, void* user) {
    post_arg* a = (post_arg*)user;
    (void)nat;
    try_complete(a->st, a->step);
}

/* The copy queue's native step every K steps: the checksum of the cells just written, all-reduced. */
typedef struct reduce_arg { rank_state* st; uint32_t index; } reduce_arg;
static void post_reduction(const accel_native* nat, void* user) {
    reduce_arg* a = (reduce_arg*)user;
    rank_state* st = a->st;
    reduction* r = &st->red[a->index];
    const double* u = (const double*)accel_buffer_map(st->u[(r->step + 1) % 2]);
    double sum = 0;
    (void)nat;
    for (uint32_t i = 0; i < st->opt.cells; i++) sum += u[i];
    r->local = sum;
    if (MPI_Iallreduce(&r->local, &r->global, 1, MPI_DOUBLE, MPI_SUM, st->comm, &r->req) != MPI_SUCCESS) {
        snprintf(st->xerror, sizeof st->xerror, "MPI_Iallreduce failed at step %llu",
                 (unsigned long long)r->step);
        r->req = MPI_REQUEST_NULL;
        accel_signal_fail(st->reduced, ACCEL_ERROR_BACKEND);
    }
    atomic_store_explicit(&st->nred_posted, a->index + 1, memory_order_release);
    wake(st);
}

/* ==== setup: device, buffers, programs, and every batch of the run ==== */
static double initial(uint64_t global_index) {   /* a bumpy start that diffuses */
    return (double)((global_index * 2654435761u) % 1000u) / 1000.0;
}

static accel_result make_buffer(rank_state* st, size_t size, const char* label, accel_buffer** out) {
    accel_buffer_desc bd;
    memset(&bd, 0, sizeof bd);
    bd.size = size;
    bd.label = label;
    return accel_buffer_create(st->dev, &bd, out);
}
static accel_result make_program(rank_state* st, const char* name, accel_cpu_kernel fn, uint32_t nbuf,
                                 accel_program** out) {
    accel_program_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.name = name;
    pd.cpu = fn;
    pd.buffer_count = nbuf;
    pd.constant_count = 1;
    return accel_program_create(st->dev, &pd, out);
}

#define TRY(call) do { accel_result r_ = (call); if (r_ != ACCEL_OK) { \
    fprintf(stderr, "rank %d: %s -> %s\n", st->rank, #call, accel_result_string(r_)); return r_; } } while (0)

static accel_result setup(rank_state* st) {
    accel_device_desc dd;
    size_t bytes = (size_t)st->opt.cells * sizeof(double);
    double* host;
    memset(&dd, 0, sizeof dd);
    dd.cpu_threads = st->opt.threads;
    TRY(accel_device_create(&dd, &st->dev));
    TRY(accel_queue_create(st->dev, ACCEL_QUEUE_COMPUTE, &st->compute));
    TRY(accel_queue_create(st->dev, ACCEL_QUEUE_COPY, &st->copy));
    accel_queue_set_label(st->compute, "compute");
    accel_queue_set_label(st->copy, "halo copy");
    TRY(make_program(st, "interior", interior_cpu, 2, &st->interior));
    TRY(make_program(st, "boundary", boundary_cpu, 3, &st->boundary));
    TRY(make_buffer(st, bytes, "u0", &st->u[0]));
    TRY(make_buffer(st, bytes, "u1", &st->u[1]));
    TRY(make_buffer(st, 2 * sizeof(double), "recv", &st->recv));
    TRY(make_buffer(st, (size_t)st->opt.steps * 3 * sizeof(uint64_t), "timestamps", &st->ts));
    TRY(accel_signal_create(st->dev, 0, &st->halo));
    TRY(accel_signal_create(st->dev, 0, &st->done));
    TRY(accel_signal_create(st->dev, 0, &st->summed));
    TRY(accel_signal_create(st->dev, 0, &st->reduced));
    TRY(accel_signal_create(st->dev, 0, &st->finished));
    TRY(accel_signal_create(st->dev, 0, &st->posted));
    accel_signal_set_label(st->halo, "halo");
    accel_signal_set_label(st->done, "done");
    host = (double*)accel_buffer_map(st->u[0]);
    for (uint32_t i = 0; i < st->opt.cells; i++) host[i] = initial((uint64_t)st->rank * st->opt.cells + i);
    memset(accel_buffer_map(st->recv), 0, 2 * sizeof(double));   /* the rod's ends stay 0 (MPI_PROC_NULL) */
    return ACCEL_OK;
}

/* Records and submits step s on both queues (ra: the all-reduce's argument, when step s has one). */
static accel_result submit_step(rank_state* st, uint32_t s, post_arg* pa, reduce_arg* ra) {
    uint32_t n = st->opt.cells, every = st->opt.every;
    accel_buffer* bind[3] = { st->u[s % 2], st->u[(s + 1) % 2], st->recv };
    size_t ts = (size_t)s * 3 * sizeof(uint64_t);

    pa->st = st;
    pa->step = s;
    if (s > 0) accel_queue_wait(st->compute, st->halo, s);
    if (s >= 2 && (s - 1) % every == 0) accel_queue_wait(st->compute, st->summed, (s - 1) / every);
    accel_queue_native(st->compute, post_exchange, pa);
    accel_queue_timestamp(st->compute, st->ts, ts);
    accel_queue_exec(st->compute, st->interior, bind, 2, &n, 1, accel_exec_1d(n - 2, GROUP));
    accel_queue_timestamp(st->compute, st->ts, ts + 8);
    accel_queue_native(st->compute, test_exchange, pa);
    accel_queue_wait(st->compute, st->halo, (uint64_t)s + 1);
    accel_queue_timestamp(st->compute, st->ts, ts + 16);
    accel_queue_exec(st->compute, st->boundary, bind, 3, &n, 1, accel_exec_1d(1, 1));
    accel_queue_signal(st->compute, st->done, (uint64_t)s + 1);
    if (s + 1 == st->opt.steps) {
        accel_queue_wait(st->compute, st->reduced, st->nred);
        accel_queue_signal(st->compute, st->finished, 1);
    }
    TRY(accel_queue_submit(st->compute));
    if (reduces_after(&st->opt, s)) {  /* the checksum of u[(s + 1) % 2], beside step s + 1 */
        ra->st = st;
        ra->index = s / every;
        st->red[ra->index].step = s;
        accel_queue_wait(st->copy, st->done, (uint64_t)s + 1);
        accel_queue_native(st->copy, post_reduction, ra);
        accel_queue_signal(st->copy, st->summed, ra->index + 1);
        TRY(accel_queue_submit(st->copy));
    }
    return ACCEL_OK;
}

/* ==== the main thread: MPI progress, failure, and the end ==== */

/* Fails every signal of this rank (the queues behind them drop their batches at once). */
static void fail_signals(rank_state* st) {
    accel_signal_fail(st->halo, ACCEL_ERROR_BACKEND);
    accel_signal_fail(st->summed, ACCEL_ERROR_BACKEND);
    accel_signal_fail(st->reduced, ACCEL_ERROR_BACKEND);
    accel_signal_fail(st->done, ACCEL_ERROR_BACKEND);
    accel_signal_fail(st->finished, ACCEL_ERROR_BACKEND);
}

/* This rank failed: tell every other rank (eager messages: the sends complete at once). */
static void tell_others(rank_state* st, uint64_t step) {
    static long long msg[3];
    MPI_Request req;
    msg[0] = st->rank;
    msg[1] = (long long)step;
    msg[2] = (long long)now_ns();
    memcpy(st->origin, msg, sizeof msg);
    for (int r = 0; r < st->size; r++) {
        if (r == st->rank) continue;
        if (MPI_Isend(msg, 3, MPI_LONG_LONG, r, TAG_ABORT, st->ctl, &req) == MPI_SUCCESS)
            MPI_Request_free(&req);
    }
}

/* A signal of ours failed and no other rank told us of a failure: ours came first, tell the others
   and fail the rest of our signals. 1 when it did. */
static int note_local_failure(rank_state* st) {
    if (st->failed_here || st->told) return 0;
    if (!failed(st->halo) && !failed(st->reduced) && !failed(st->done) && !failed(st->finished)) return 0;
    st->failed_here = 1;
    tell_others(st, atomic_load(&st->xdone));
    fail_signals(st);
    return 1;
}

/* One round of progress: 1 when something moved. */
static int progress(rank_state* st) {
    int moved = 0, flag = 0;
    uint64_t posted = atomic_load_explicit(&st->xposted, memory_order_acquire);
    uint32_t nposted = atomic_load_explicit(&st->nred_posted, memory_order_acquire);
    if (!st->told && MPI_Test(&st->abort_req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
        st->told = 1;                  /* another rank failed: fail ours */
        memcpy(st->origin, st->abort_in, sizeof st->origin);
        fail_signals(st);
        return 1;
    }
    if (posted > atomic_load(&st->xdone)) moved |= try_complete(st, posted - 1);
    while (st->nred_done < nposted) {
        reduction* r = &st->red[st->nred_done];
        if (MPI_Test(&r->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag) break;
        accel_signal_set(st->reduced, ++st->nred_done);
        moved = 1;
    }
    return note_local_failure(st) || moved;
}

/* Runs MPI progress until this rank's run finished or failed (or the watchdog fired). While a request
   is in flight it polls, backing off from 10 us to 200 us while nothing moves; otherwise it sleeps in
   a wait on `posted` (0.5 ms at most, for the abort message). A post wakes it either way. */
static void drive(rank_state* st) {
    uint64_t last = now_ns(), limit = limit_ns(&st->opt), pause = 10000;
    while (accel_signal_value(st->finished) < 1) {   /* a failed signal reads above it */
        uint64_t seen = accel_signal_value(st->posted);
        int busy;
        if (progress(st)) {
            last = now_ns();
            pause = 10000;
            continue;
        }
        if (past(last, limit)) {
            snprintf(st->xerror, sizeof st->xerror, "no progress for %.1f s (watchdog)", st->opt.timeout_s);
            fail_signals(st);
            continue;
        }
        busy = atomic_load(&st->xposted) > atomic_load(&st->xdone) ||
               atomic_load(&st->nred_posted) > st->nred_done;
        accel_signal_wait(st->posted, seen + 1, busy ? pause : 500000);
        if (busy && pause < 200000) pause *= 2;
    }
    note_local_failure(st);            /* the queues may have failed `finished` before progress saw it */
}

/* After a failure: no request of ours may stay pending at MPI_Finalize. */
static void cancel_pending(rank_state* st) {
    uint64_t posted = atomic_load(&st->xposted);
    if (posted > atomic_load(&st->xdone))
        for (int i = 0; i < st->xn; i++) {
            if (st->xreq[i] == MPI_REQUEST_NULL) continue;
            MPI_Cancel(&st->xreq[i]);
            MPI_Request_free(&st->xreq[i]);
        }
}

/* Polls a request until it completes (or MPI returns an error) or `since` is past `limit` (then 0); in
   between it sleeps in a wait on `posted`, 0.2 ms at most. */
static int complete_by(rank_state* st, MPI_Request* req, uint64_t since, uint64_t limit) {
    int flag = 0;
    while (MPI_Test(req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag) {
        if (past(since, limit)) return 0;
        if (st->posted)   /* else setup failed before it was made: MPI_Test alone polls */
            accel_signal_wait(st->posted, accel_signal_value(st->posted) + 1, 200000);
    }
    return 1;
}

/* Every rank: agree on the outcome, then match every all-reduce (post those this rank did not reach).
   out[0] = all-reduces posted by the furthest rank, out[1] = 1 when some rank failed, out[2..3] = the
   rank and step of a failure that happened: the highest step any rank heard of, and the highest rank
   that failed at it (one key, step * size + rank, so that the pair is never mixed from two failures).
   Nonblocking with a deadline, twice --timeout from now (a rank whose abort message was lost arrives
   one watchdog later): 0 when the others did not take part by then (a rank stopped or gone). */
static int agree(rank_state* st, long long out[4]) {
    uint64_t t0 = now_ns(), limit = limit_ns(&st->opt);
    long long in[3] = { (long long)atomic_load(&st->nred_posted), st->failed_here || st->told,
                        st->origin[0] < 0 ? -1 : st->origin[1] * st->size + st->origin[0] };
    long long all[3];
    MPI_Request req;
    limit = limit > UINT64_MAX / 2 ? UINT64_MAX : 2 * limit;
    if (MPI_Iallreduce(in, all, 3, MPI_LONG_LONG, MPI_MAX, st->ctl, &req) != MPI_SUCCESS ||
        !complete_by(st, &req, t0, limit))
        return 0;
    out[0] = all[0];
    out[1] = all[1];
    out[2] = all[2] < 0 ? -1 : all[2] % st->size;
    out[3] = all[2] < 0 ? -1 : all[2] / st->size;
    for (uint32_t i = (uint32_t)in[0]; i < (uint32_t)out[0] && i < st->nred; i++) {
        reduction* r = &st->red[i];
        r->local = 0;
        if (MPI_Iallreduce(&r->local, &r->global, 1, MPI_DOUBLE, MPI_SUM, st->comm, &r->req) != MPI_SUCCESS)
            r->req = MPI_REQUEST_NULL;
    }
    for (uint32_t i = 0; i < (uint32_t)out[0] && i < st->nred; i++)
        if (!complete_by(st, &st->red[i].req, t0, limit)) return 0;
    return 1;
}

/* ==== the check: the whole rod, serially ==== */
static int check(rank_state* st, double* max_diff) {
    uint32_t n = st->opt.cells, N = n * (uint32_t)st->size, bad = 0;
    double *a = (double*)malloc((size_t)N * sizeof(double)), *b = (double*)malloc((size_t)N * sizeof(double));
    const double* mine = (const double*)accel_buffer_map(st->u[st->opt.steps % 2]);
    uint32_t k = 0;
    *max_diff = 0;
    if (!a || !b) {
        free(a);
        free(b);
        fprintf(stderr, "rank %d: no memory for the check\n", st->rank);
        return 0;
    }
    for (uint32_t i = 0; i < N; i++) a[i] = initial(i);
    for (uint32_t s = 0; s < st->opt.steps; s++) {
        for (uint32_t i = 0; i < N; i++) b[i] = heat(i ? a[i - 1] : 0.0, a[i], i + 1 < N ? a[i + 1] : 0.0);
        double* t = a; a = b; b = t;
        if (reduces_after(&st->opt, s)) {   /* the checksum: per rank's cells, then the ranks' sums */
            double sum = 0, want = 0;
            for (int r = 0; r < st->size; r++) {
                double part = 0;
                for (uint32_t i = 0; i < n; i++) part += a[(size_t)r * n + i];
                want += part;
            }
            sum = st->red[k++].global;
            if (fabs(sum - want) > 1e-9 * (fabs(want) + 1)) {
                if (!bad++)
                    fprintf(stderr, "rank %d: checksum after step %u: %.17g, serial %.17g\n", st->rank, s,
                            sum, want);
            }
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        double d = fabs(mine[i] - a[(size_t)st->rank * n + i]);
        if (d > *max_diff) *max_diff = d;
    }
    if (*max_diff > 1e-12) {
        fprintf(stderr, "rank %d: cells differ from the serial computation by up to %g\n", st->rank,
                *max_diff);
        bad++;
    }
    free(a);
    free(b);
    return bad == 0;
}

/* The exchange (post to completion) per step, and how much of it the interior covered. */
static void overlap(rank_state* st, double* exch_us, double* hidden_pct, double* wait_us) {
    const uint64_t* ts = (const uint64_t*)accel_buffer_map(st->ts);
    double total = 0, hidden = 0, waited = 0;
    for (uint32_t s = 0; s < st->opt.steps; s++) {
        uint64_t x0 = st->xpost_ns[s], x1 = st->xdone_ns[s], i0 = ts[3 * s], i1 = ts[3 * s + 1];
        uint64_t lo = x0 > i0 ? x0 : i0, hi = x1 < i1 ? x1 : i1;
        total += (double)(x1 - x0);
        if (hi > lo) hidden += (double)(hi - lo);
        waited += (double)(ts[3 * s + 2] - ts[3 * s + 1]);
    }
    *exch_us = total / st->opt.steps / 1e3;
    *hidden_pct = total > 0 ? 100.0 * hidden / total : 100.0;
    *wait_us = waited / st->opt.steps / 1e3;
}

/* ==== main ==== */
/* After the run: the report of a rank whose queues saw the failure. */
static void report_failure(rank_state* st, accel_result fin, uint64_t seen) {
    if (st->failed_here)
        fprintf(stderr, "rank %d: %s: told the other ranks\n", st->rank,
                st->xerror[0] ? st->xerror : "a signal failed");
    fprintf(stderr, "rank %d: %s: the queues stopped after %llu of %u steps (rank %lld failed at step %lld; "
            "seen here %.1f ms later)\n", st->rank, accel_result_string(fin),
            (unsigned long long)atomic_load(&st->xdone), st->opt.steps, st->origin[0], st->origin[1],
            (double)(seen - (uint64_t)st->origin[2]) / 1e6);
}

/* Rank 0 prints the figures and the check; returns 1 when every rank's check passed. */
static int report_success(rank_state* st, double wall_ms) {
    double exch_us, hidden_pct, wait_us, all[3], mine[3], diff = 0;
    int good = !st->opt.check || check(st, &diff), all_good = 0;
    overlap(st, &exch_us, &hidden_pct, &wait_us);
    mine[0] = wall_ms; mine[1] = exch_us; mine[2] = wait_us;
    MPI_Reduce(mine, all, 3, MPI_DOUBLE, MPI_MAX, 0, st->ctl);
    MPI_Allreduce(&good, &all_good, 1, MPI_INT, MPI_LAND, st->ctl);
    if (st->rank != 0) return all_good;
    if (st->opt.quiet) {
        printf("mpi_halo accel wall_ms %.3f exch_us %.1f hidden_pct %.1f wait_us %.1f checksum %.17g\n",
               all[0], all[1], hidden_pct, all[2], st->nred ? st->red[st->nred - 1].global : 0.0);
        return all_good;
    }
    printf("mpi_halo: %d ranks x %u cells, %u steps, one CPU device per rank (%u lane(s)): %.1f ms\n",
           st->size, st->opt.cells, st->opt.steps, st->opt.threads, all[0]);
    printf("  exchange: %.1f us per step from post to completion, %.0f%% of it hidden behind the interior "
           "(rank 0); the boundary waited %.1f us per step (slowest rank)\n", all[1], hidden_pct, all[2]);
    if (st->opt.check)
        printf("  checked against the serial computation: cells %s, %u all-reduced checksums %s\n",
               all_good ? "match" : "DIFFER", st->nred, all_good ? "match" : "(see above)");
    printf("%s\n", all_good ? "OK" : "WRONG");
    return all_good;
}

static int run(rank_state* st) {
    post_arg* pa = (post_arg*)calloc(st->opt.steps, sizeof *pa);
    reduce_arg* ra = (reduce_arg*)calloc(st->nred + 1, sizeof *ra);
    long long outcome[4] = { 0, 0, 0, 0 };
    double t0, t1;
    int ready = pa && ra && st->red && st->xpost_ns && st->xdone_ns && setup(st) == ACCEL_OK, ok = ready;
    accel_result fin = ACCEL_ERROR_BACKEND;

    MPI_Irecv(st->abort_in, 3, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_ABORT, st->ctl, &st->abort_req);
    MPI_Barrier(st->ctl);
    t0 = MPI_Wtime();
    if (!ready) {                      /* out of memory, or no device: the others must not wait for us */
        snprintf(st->xerror, sizeof st->xerror, "setup failed");
        st->failed_here = 1;
        tell_others(st, 0);
    } else {
        for (uint32_t s = 0; s < st->opt.steps && ok; s++)
            ok = submit_step(st, s, &pa[s], &ra[s / st->opt.every]) == ACCEL_OK;
        if (!ok) snprintf(st->xerror, sizeof st->xerror, "recording the steps failed (see above)");
        if (!ok) fail_signals(st);
        drive(st);
        fin = accel_signal_wait(st->finished, 1, 0);
    }
    t1 = MPI_Wtime();
    if (fin != ACCEL_OK) {
        uint64_t seen = now_ns();
        accel_queue_finish(st->compute, 5000000000ull);   /* the dropped batches drain at once */
        accel_queue_finish(st->copy, 5000000000ull);
        cancel_pending(st);
        report_failure(st, fin, seen);
    }
    if (!st->told) MPI_Cancel(&st->abort_req);
    MPI_Wait(&st->abort_req, MPI_STATUS_IGNORE);
    if (!agree(st, outcome)) {          /* a rank stopped or gone: MPI_Finalize would wait for it */
        fprintf(stderr, "rank %d: the other ranks did not agree on the outcome within %.1f s (a rank stopped "
                "or gone): MPI_Abort, exit 1\n", st->rank, 2 * st->opt.timeout_s);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (outcome[1]) {
        if (st->origin[2] > 0)         /* (the monotonic clock of the rank that failed: one machine) */
            fprintf(stderr, "rank %d: every request settled %.1f ms after the failure: exit 1\n", st->rank,
                    (double)(now_ns() - (uint64_t)st->origin[2]) / 1e6);
        if (st->rank == 0)
            fprintf(stderr, "mpi_halo: FAILED: rank %lld failed at step %lld (see above); every rank "
                    "stopped, exit 1\n", outcome[2], outcome[3]);
        ok = 0;
    } else {
        ok = report_success(st, (t1 - t0) * 1e3);
    }
    free(pa);
    free(ra);
    return ok ? 0 : 1;
}

/* --fail must name a rank and a step of this run (else it would do nothing): 1 when it does, else rank 0
   says why (every rank decides alike, from the same arguments) */
static int fail_in_run(const rank_state* st) {
    const options* o = &st->opt;
    if (!o->fail_kind || (o->fail_rank < (uint32_t)st->size && o->fail_step < o->steps)) return 1;
    if (st->rank == 0)
        fprintf(stderr, "mpi_halo: --fail %s:%u:%u is not in this run (ranks 0 .. %d, steps 0 .. %u)\n",
                o->fail_kind == 1 ? "signal" : "mpi", o->fail_rank, o->fail_step, st->size - 1, o->steps - 1);
    return 0;
}

int main(int argc, char** argv) {
    rank_state st;
    int provided = 0, code;
    memset(&st, 0, sizeof st);
    atomic_flag_clear(&st.testing);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &st.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &st.size);
    if (!parse_options(argc, argv, &st.opt)) {
        if (st.rank == 0)
            fprintf(stderr, "usage: mpirun -np N %s [cpu] [--cells N>=4] [--steps S] [--every K] "
                    "[--threads T] [--fail signal|mpi:RANK:STEP] [--no-check] [--timeout SEC|inf] "
                    "[--quiet]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    if (!fail_in_run(&st)) {
        MPI_Finalize();
        return 2;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (st.rank == 0)
            fprintf(stderr, "mpi_halo: needs MPI_THREAD_MULTIPLE (native steps post MPI calls from accel's "
                    "queue threads while the main thread tests requests); this MPI provides level %d\n",
                    provided);
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &st.comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &st.ctl);
    MPI_Comm_set_errhandler(st.comm, MPI_ERRORS_RETURN);
    st.left = st.rank > 0 ? st.rank - 1 : MPI_PROC_NULL;
    st.right = st.rank + 1 < st.size ? st.rank + 1 : MPI_PROC_NULL;
    st.nred = (uint32_t)(((uint64_t)st.opt.steps + st.opt.every - 1) / st.opt.every);
    st.red = (reduction*)calloc(st.nred + 1, sizeof *st.red);
    st.xpost_ns = (uint64_t*)calloc(st.opt.steps, sizeof(uint64_t));
    st.xdone_ns = (uint64_t*)calloc(st.opt.steps, sizeof(uint64_t));
    st.origin[0] = st.origin[1] = -1;
    for (uint32_t i = 0; st.red && i <= st.nred; i++) st.red[i].req = MPI_REQUEST_NULL;
    code = run(&st);
    accel_device_destroy(st.dev);
    free(st.red);
    free(st.xpost_ns);
    free(st.xdone_ns);
    MPI_Comm_free(&st.comm);
    MPI_Comm_free(&st.ctl);
    MPI_Finalize();
    return code;
}
