/* bench/cuda.c — the CUDA backend of accel next to raw CUDA driver calls, measured in the same run.

   Build and run (Linux; no CUDA headers, no -lcuda: the driver is loaded at run time):
       gcc -std=c11 -O2 -I. bench/cuda.c -o build/bench_cuda -lpthread -lm -ldl
       ./build/bench_cuda            # full run
       ./build/bench_cuda --quick    # a few seconds (CI smoke run)
   Without a driver it prints why and exits 0.

   Figures (accel | raw driver baseline, the same loaded driver and the same primary context):
     1. launch+sync round trip of an empty kernel: exec + signal + submit + host wait |
        cuLaunchKernel + cuStreamSynchronize                                     target ratio <= 1.05
     2. 10,000 launches of the empty kernel in one batch, launches per second |
        10,000 cuLaunchKernel + cuStreamSynchronize                              target ratio >= 0.95
     3. device-to-device copy bandwidth (256 MiB): accel_queue_copy | cuMemcpyDtoDAsync  >= 0.95
        (and, for information, raw cuMemcpyAsync on the same pointers)
     4. pinned host-to-device bandwidth (256 MiB): accel_queue_copy from a HOST buffer |
        cuMemcpyHtoDAsync from cuMemHostAlloc memory                             target ratio >= 0.95
     5. host -> GPU -> host signal ping-pong: the host sets s1 = i, a queue waits s1 >= i and signals
        s2 = i, the host waits s2 >= i | a stream loaded with cuStreamWaitValue64(w1 >= i) +
        cuStreamWriteValue64(w2, i) on pinned words, the host writes w1 and spins on w2 (each side
        keeps 32 rounds enqueued ahead: a blocked stream takes only so much before enqueueing blocks)
                                                                                 target ratio <= 1.05
        (figure 5 needs 64-bit stream memory operations for its raw baseline.)
     6. a recorded list of 1,000 one-block kernels replayed (accel_queue_replay + signal + submit +
        wait), kernels per second, in both native forms: 6 a CUDA graph, 6b pre-resolved launches
        (ACCEL_CUDA_REPLAY=launches) | cuGraphLaunch of the same 1,000-node graph + sync  >= 0.95
     7. the same with one constant patched per replay (graph form) | cuGraphExecKernelNodeSetParams
        on one node + cuGraphLaunch + sync                                     target ratio <= 1.10
     8. a one-kernel list replayed, round trip: 8 graph, 8b launches | cuLaunchKernel + sync (which
        form wins for short lists)                                             target ratio <= 1.05
     9. dependent chain of empty kernels on one queue, time per step: each step signals its own value,
        one submit per step (the queue's order makes a step wait for the one before, as the stream's
        does: neither side records a wait) | cuLaunchKernel + cuEventRecord per step on one stream
                                                                                 target ratio <= 1.10
    10. the chain alternating two queues, each step waiting for the previous one | two streams, per
        step cuStreamWaitEvent on the other stream's event, cuLaunchKernel, cuEventRecord
                                                                                 target ratio <= 1.15
    11. host set -> GPU wait -> done: a queue waits on a signal only the host sets, launches the empty
        kernel and signals; the host sets it and waits for the signal | cuStreamWaitValue64 on a
        pinned word + cuLaunchKernel, the host writes the word, cuStreamSynchronize
                                                                                 target ratio <= 1.10
        (needs 64-bit stream memory operations for its raw baseline)
    12. a pipeline over two queues behind a host gate, submitted whole before the gate opens: producer
        step k waits for consumer step k - 4 (the first for the gate), runs the empty kernel, signals;
        consumer step k waits for producer step k, runs it, signals; timed from the host opening the
        gate to the last step, per step | cuStreamWaitValue64 on a pinned word for the gate, events in
        rings of 4 between the streams (cuStreamWaitEvent), the host writes the word, sync
                                                                                 target ratio <= 1.15
        (needs 64-bit stream memory operations for its raw baseline)
    13. an indirect exec (accel_queue_exec_indirect, counts (1, 1, 1) in device memory) after a direct
        one, + signal + submit + wait | the same batch with both execs direct. Both sides are accel: the
        figure is the cost of CUDA's form of an indirect exec (a host step: the queue drains, the host
        reads the counts, then launches); no target (it costs a device round trip by design)
    14. a chain of kernel -> native step -> kernel on one queue, the native step a 256-byte
        cuMemcpyDtoDAsync that accel_queue_native's fn enqueues on the stream it gets, 50 (--quick) or
        200 steps in one batch, then a signal | cuLaunchKernel, cuMemcpyDtoDAsync, cuLaunchKernel per
        step on one stream, then cuEventRecord; time per step
                                                            target ratio <= 1.10 (<= 1.15 on the mock)
        14b: the same chain with the copy from accel_queue_host_call (a host round trip per step) |
        the native chain: the factor native saves (information, no target)
    15. a chain of 1024^3 SGEMMs by cuBLAS (libcublas loaded at run time; skipped with the reason where it
        cannot be loaded or started, e.g. on tests/mock_cuda.c), each a native step + signal + submit |
        cublasSgemm + cuEventRecord on one stream, time per GEMM                target ratio <= 1.05
    16. queue-ordered memory: a step (fill a 1 MiB scratch, the empty kernel, copy its first word to a
        pinned HOST buffer, signal, submit, wait) whose scratch comes from accel_queue_alloc and goes
        back with accel_queue_free | the same step with the scratch made once    target ratio <= 1.10
        16c, for information: the same without the fill (mostly the round trip). 16b: what the alloc
        and free add to 16c's step (its two sides' difference) | what cuMemAlloc and cuMemFree add to
        the same step in raw calls (cuLaunchKernel, cuMemcpyDtoHAsync of the word, cuStreamSynchronize;
        the scratch from cuMemAlloc / cuMemFree per step against one made once, run as a pair the same
        way)                                                     target ratio <= 0.10 (10x cheaper)
    17. figure 10 with its second queue and signal on a second accel device on the same GPU: each step
        waits on the other device's signal (DESIGN 7.2) | the same raw streams and events
                                                                                 target ratio <= 1.15
    18. for information, what one driver call costs the host (a chain's step is host-bound: its
        figures are these costs plus accel's own work): cuLaunchKernel, cuStreamWaitEvent,
        cuStreamWriteValue64, cuStreamBatchMemOp of two writes (accel's signal point, where a signal has
        a mirror word), cuStreamWaitValue64 on a reached word, each issued 1,000 times in a row, host ns
        per call | cuEventRecord (the raw chains' signal)
   --native runs figures 14 and 15 only (make gpu-check's `native` step); --figures 5,9,10 runs the steps
   that measure those figures only (with --quick too: e.g. to repeat one figure on a noisy machine).
   Figures 9-11 also report, in their BENCH lines, the wake-ups (voluntary context switches) per step of
   the threads that accel_queue_create started (the queues' workers; on tests/mock_cuda.c also the
   mock's stream threads, which are its "GPU"), and the chains each side's host time to issue a step.
   Figures 5 and 9-12 report, for each side, per step (figure 5: per round trip, 11: per round): the
   driver calls and, among them, the enqueue calls, the context calls and the queries and synchronizes
   (on tests/mock_cuda.c, which counts them; n/a on a real driver), the wake-ups of accel's queue
   workers (the mock's stream threads left out) and of the calling thread; in their BENCH lines and in
   a table after the report.
   Method: the two sides alternate in rounds after a warm-up; each reports its median (figures 9-11:
   bench_pair_run of bench.h, rounds of sample blocks, with the paired ratio). Results are checked
   (copied data, signal values); the bench exits 1 when a check fails, 0 otherwise.
   cuStreamWaitEvent comes from accel_cuda.h's entry-point table (an optional entry). */
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#define ACCEL_CUDA_IMPLEMENTATION
#include "accel_cuda.h"
#include "bench/bench.h"
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENCH_ROUNDS_MAX 64
#define BENCH_WAIT_NS    ((uint64_t)20000000000ull)   /* 20 s: a wait that takes longer is a failure */

static const char bench_empty_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry empty()\n"
    "{\n"
    "    ret;\n"
    "}\n"
    ".visible .entry bench_const(.param .u32 bench_const_param_0)\n"   /* figure 7: a constant to patch */
    "{\n"
    "    ret;\n"
    "}\n";

typedef struct bench_cuda {
    bool quick;
    int rounds;
    accel_device* dev;
    accel_queue *q, *copy_q;
    accel_signal* s;
    uint64_t s_value;
    accel_program* empty;
    bench_threads workers;         /* threads accel_queue_create started (figures 9-11) */
    bench_threads accel_workers;   /* of those, accel's own (the queues' workers; not the mock's streams) */
    /* raw side */
    accel_cu_context ctx;
    accel_cu_stream stream;
    accel_cu_module module;
    accel_cu_function fn, fn_const;
    accel_program* konst;
} bench_cuda;

static int bench_cu_ok(accel_cu_result r, const char* what) {
    if (r == ACCEL_CU_SUCCESS) return 1;
    bench_fail("%s: %s (%d)", what, accel_i_cu_error_name(r), r);
    return 0;
}
static int bench_accel_ok(accel_result r, const char* what) {
    if (r == ACCEL_OK) return 1;
    bench_fail("%s: %s", what, accel_result_string(r));
    return 0;
}

/* ==== counts: driver calls and worker wake-ups, per step, on both sides ==== */
/* Driver calls come from tests/mock_cuda.c's counter (mock_cuda_calls, looked up in the loaded driver;
   a real driver has none: n/a). Wake-ups are voluntary context switches (/proc) of accel's queue
   workers (the threads accel_queue_create started, less the mock's stream threads, which it names
   "mock-stream": they are the "GPU") and of the bench's own thread, the caller. */
typedef unsigned long long (*bench_mock_calls_fn)(int kind);
static bench_mock_calls_fn bench_mock_calls;
static pid_t bench_caller_tid;
enum { BENCH_C_CALLS, BENCH_C_ENQUEUES, BENCH_C_WORKER, BENCH_C_CALLER, BENCH_C_CONTEXT, BENCH_C_POLLS };
/* tests/mock_cuda.c's kinds: launches, memory operations, events, copies (the enqueues); context calls;
   queries; synchronizes */
enum { BENCH_MOCK_CONTEXT = 4, BENCH_MOCK_QUERY = 5, BENCH_MOCK_SYNC = 6 };
static void bench_counts_init(void) {
    void* f = accel_i_dl_sym(accel_i_cu_g.handle, "mock_cuda_calls");
    memcpy(&bench_mock_calls, &f, sizeof f);
    bench_caller_tid = (pid_t)syscall(SYS_gettid);
}
/* The counters now: driver calls (all; enqueues: launches, memory operations, event records and
   waits, copies and fills; context calls; queries and synchronizes), wake-ups of accel's workers and of
   the caller. */
static void bench_counts_read(const bench_threads* workers, double out[BENCH_COUNTS]) {
    bench_threads caller;
    caller.count = 1;
    caller.tid[0] = bench_caller_tid;
    out[BENCH_C_CALLS] = bench_mock_calls ? (double)bench_mock_calls(-1) : 0;
    out[BENCH_C_ENQUEUES] = 0;
    for (int k = 0; k < 4 && bench_mock_calls; k++) out[BENCH_C_ENQUEUES] += (double)bench_mock_calls(k);
    out[BENCH_C_WORKER] = (double)bench_threads_wakeups(workers);
    out[BENCH_C_CALLER] = (double)bench_threads_wakeups(&caller);
    out[BENCH_C_CONTEXT] = bench_mock_calls ? (double)bench_mock_calls(BENCH_MOCK_CONTEXT) : 0;
    out[BENCH_C_POLLS] = bench_mock_calls ?
        (double)(bench_mock_calls(BENCH_MOCK_QUERY) + bench_mock_calls(BENCH_MOCK_SYNC)) : 0;
}
/* One figure's counts per step, accel [0] and raw [1], for the table after the report. */
typedef struct bench_count_row { char title[48]; double c[2][BENCH_COUNTS]; } bench_count_row;
static bench_count_row bench_count_rows[8];
static int bench_count_row_n;
static void bench_counts_add(bench_row* row, const char* title, double c[2][BENCH_COUNTS]) {
    static const char* const side[2] = { "accel", "raw" };
    bench_count_row* r;
    for (int s2 = 0; s2 < 2; s2++) {
        char key[64];
        if (bench_mock_calls) {
            snprintf(key, sizeof key, "%s_driver_calls_per_step", side[s2]);
            bench_row_extra(row, key, c[s2][BENCH_C_CALLS]);
            snprintf(key, sizeof key, "%s_enqueue_calls_per_step", side[s2]);
            bench_row_extra(row, key, c[s2][BENCH_C_ENQUEUES]);
            snprintf(key, sizeof key, "%s_context_calls_per_step", side[s2]);
            bench_row_extra(row, key, c[s2][BENCH_C_CONTEXT]);
            snprintf(key, sizeof key, "%s_query_sync_calls_per_step", side[s2]);
            bench_row_extra(row, key, c[s2][BENCH_C_POLLS]);
        }
        snprintf(key, sizeof key, "%s_worker_wakeups_per_step", side[s2]);
        bench_row_extra(row, key, c[s2][BENCH_C_WORKER]);
        snprintf(key, sizeof key, "%s_caller_wakeups_per_step", side[s2]);
        bench_row_extra(row, key, c[s2][BENCH_C_CALLER]);
    }
    if (bench_count_row_n == (int)(sizeof bench_count_rows / sizeof bench_count_rows[0])) return;
    r = &bench_count_rows[bench_count_row_n++];
    snprintf(r->title, sizeof r->title, "%s", title);
    memcpy(r->c, c, sizeof r->c);
}
static void bench_counts_print(void) {
    if (!bench_count_row_n) return;
    printf("per step, accel | raw: driver calls (of them enqueues / context calls / queries and "
           "synchronizes%s),\nwake-ups of accel's queue workers, of the caller\n",
           bench_mock_calls ? "" : "; n/a: not the mock driver");
    for (int i = 0; i < bench_count_row_n; i++) {
        const bench_count_row* r = &bench_count_rows[i];
        char calls[96];
        if (bench_mock_calls)
            snprintf(calls, sizeof calls, "%5.2f (%4.2f/%4.2f/%4.2f) | %5.2f (%4.2f/%4.2f/%4.2f)",
                     r->c[0][BENCH_C_CALLS], r->c[0][BENCH_C_ENQUEUES], r->c[0][BENCH_C_CONTEXT],
                     r->c[0][BENCH_C_POLLS], r->c[1][BENCH_C_CALLS], r->c[1][BENCH_C_ENQUEUES],
                     r->c[1][BENCH_C_CONTEXT], r->c[1][BENCH_C_POLLS]);
        else
            snprintf(calls, sizeof calls, "n/a | n/a");
        printf("%-38s | calls %s | workers %5.3f | %5.3f | caller %5.3f | %5.3f\n", r->title, calls,
               r->c[0][BENCH_C_WORKER], r->c[1][BENCH_C_WORKER], r->c[0][BENCH_C_CALLER], r->c[1][BENCH_C_CALLER]);
    }
    printf("\n");
}

/* accel: exec(s) + signal + submit + wait. Returns ns. */
static double bench_accel_launches(bench_cuda* b, uint32_t n) {
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < n; i++) accel_queue_exec(b->q, b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(b->q, b->s, ++b->s_value);
    if (!bench_accel_ok(accel_queue_submit(b->q), "accel_queue_submit")) return 0;
    if (!bench_accel_ok(accel_signal_wait(b->s, b->s_value, BENCH_WAIT_NS), "accel_signal_wait")) return 0;
    return (double)(bench_now_ns() - t0);
}
static double bench_raw_launches(bench_cuda* b, uint32_t n) {
    uint64_t t0 = bench_now_ns();
    for (uint32_t i = 0; i < n; i++)
        if (!bench_cu_ok(accel_i_cu.LaunchKernel(b->fn, 1, 1, 1, 1, 1, 1, 0, b->stream, NULL, NULL), "cuLaunchKernel")) return 0;
    if (!bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize")) return 0;
    return (double)(bench_now_ns() - t0);
}
/* Figure 1 and 2: medians over rounds of (iters round trips) or (one batch of n launches). */
static void bench_launch_figures(bench_cuda* b) {
    double a[BENCH_ROUNDS_MAX], r[BENCH_ROUNDS_MAX];
    uint32_t iters = b->quick ? 20 : 200, batch = 10000;
    bench_accel_launches(b, 10);
    bench_raw_launches(b, 10);
    for (int k = 0; k < b->rounds; k++) {
        double ta = 0, tr = 0;
        for (uint32_t i = 0; i < iters; i++) ta += bench_accel_launches(b, 1);
        for (uint32_t i = 0; i < iters; i++) tr += bench_raw_launches(b, 1);
        a[k] = ta / iters;
        r[k] = tr / iters;
    }
    bench_row_add("launch_sync_latency", "1 launch+sync round trip", "ns", bench_median(a, (size_t)b->rounds), "cuLaunchKernel+sync",
                  bench_median(r, (size_t)b->rounds), BENCH_TARGET_RATIO, BENCH_LE, 1.05);
    for (int k = 0; k < b->rounds; k++) {
        a[k] = (double)batch / bench_accel_launches(b, batch) * 1e3;   /* million launches per second */
        r[k] = (double)batch / bench_raw_launches(b, batch) * 1e3;
    }
    bench_row_add("batch_10k_launches", "2 10,000 launches in one batch", "Mlps", bench_median(a, (size_t)b->rounds),
                  "cuLaunchKernel loop", bench_median(r, (size_t)b->rounds), BENCH_TARGET_RATIO, BENCH_GE, 0.95);
}

/* ==== figures 6-8: recorded lists ==== */
/* A list of n one-block kernels (konst: the one with a constant), in the form ACCEL_CUDA_REPLAY picks. */
static accel_commands* bench_list(bench_cuda* b, uint32_t n, bool konst, const char* form) {
    accel_commands* c = NULL;
    uint32_t zero = 0;
    setenv("ACCEL_CUDA_REPLAY", form, 1);
    if (!bench_accel_ok(accel_queue_record_begin(b->q), "accel_queue_record_begin")) return NULL;
    for (uint32_t i = 0; i < n; i++)
        accel_queue_exec(b->q, konst ? b->konst : b->empty, NULL, 0, konst ? &zero : NULL, konst ? 1 : 0, accel_exec_1d(1, 1));
    bench_accel_ok(accel_queue_record_end(b->q, &c), "accel_queue_record_end");
    unsetenv("ACCEL_CUDA_REPLAY");
    return c;
}
static double bench_accel_replay(bench_cuda* b, accel_commands* c, const accel_patch* p) {
    uint64_t t0 = bench_now_ns();
    accel_queue_replay(b->q, c, p, p ? 1 : 0);
    accel_queue_signal(b->q, b->s, ++b->s_value);
    if (!bench_accel_ok(accel_queue_submit(b->q), "accel_queue_submit")) return 0;
    if (!bench_accel_ok(accel_signal_wait(b->s, b->s_value, BENCH_WAIT_NS), "accel_signal_wait")) return 0;
    return (double)(bench_now_ns() - t0);
}
/* The raw graph: n kernel nodes chained; nodes[] gets them. */
static accel_cu_graph_exec bench_raw_graph(bench_cuda* b, uint32_t n, accel_cu_graph* g, accel_cu_graph_node* nodes) {
    accel_cu_graph_exec e = NULL;
    uint32_t zero = 0;
    void* params[1] = { &zero };
    accel_cu_kernel_node_params kp;
    memset(&kp, 0, sizeof kp);
    kp.func = b->fn_const;
    kp.grid[0] = kp.grid[1] = kp.grid[2] = kp.block[0] = kp.block[1] = kp.block[2] = 1;
    kp.params = params;
    if (!bench_cu_ok(accel_i_cu.GraphCreate(g, 0), "cuGraphCreate")) return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!bench_cu_ok(accel_i_cu.GraphAddKernelNode(&nodes[i], *g, i ? &nodes[i - 1] : NULL, i ? 1 : 0, &kp), "cuGraphAddKernelNode")) return NULL;
    bench_cu_ok(accel_i_cu.GraphInstantiateWithFlags(&e, *g, 0), "cuGraphInstantiateWithFlags");
    return e;
}
static double bench_raw_graph_launch(bench_cuda* b, accel_cu_graph_exec e, accel_cu_graph_node node, uint32_t value) {
    uint64_t t0 = bench_now_ns();
    if (node) {
        void* params[1] = { &value };
        accel_cu_kernel_node_params kp;
        memset(&kp, 0, sizeof kp);
        kp.func = b->fn_const;
        kp.grid[0] = kp.grid[1] = kp.grid[2] = kp.block[0] = kp.block[1] = kp.block[2] = 1;
        kp.params = params;
        if (!bench_cu_ok(accel_i_cu.GraphExecKernelNodeSetParams(e, node, &kp), "cuGraphExecKernelNodeSetParams")) return 0;
    }
    if (!bench_cu_ok(accel_i_cu.GraphLaunch(e, b->stream), "cuGraphLaunch")) return 0;
    if (!bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize")) return 0;
    return (double)(bench_now_ns() - t0);
}
static void bench_replay_figures(bench_cuda* b) {
    enum { LIST = 1000 };
    double t[6][BENCH_ROUNDS_MAX];
    accel_cu_graph g = NULL;
    accel_cu_graph_node* nodes = calloc(LIST, sizeof *nodes);
    accel_commands *graph = bench_list(b, LIST, true, "graph"), *launches = bench_list(b, LIST, true, "launches");
    accel_commands *one_graph = bench_list(b, 1, false, "graph"), *one_launches = bench_list(b, 1, false, "launches");
    accel_cu_graph_exec e;
    accel_i_cu.CtxSetCurrent(b->ctx);
    e = nodes ? bench_raw_graph(b, LIST, &g, nodes) : NULL;
    if (!graph || !launches || !one_graph || !one_launches || !e) { bench_fail("replay figures: setup failed"); goto done; }
    for (int k = 0; k < b->rounds; k++) {
        accel_patch p = { (uint32_t)k * 37u % LIST, 0, NULL, (uint32_t)k + 1 };
        uint32_t iters = b->quick ? 10 : 100;
        t[0][k] = bench_accel_replay(b, graph, NULL);
        t[1][k] = bench_accel_replay(b, launches, NULL);
        t[2][k] = bench_accel_replay(b, graph, &p);
        accel_i_cu.CtxSetCurrent(b->ctx);
        t[3][k] = bench_raw_graph_launch(b, e, NULL, 0);
        t[4][k] = bench_raw_graph_launch(b, e, nodes[p.command], p.value);
        t[5][k] = 0;
        for (uint32_t i = 0; i < iters; i++) t[5][k] += bench_accel_replay(b, one_graph, NULL) / iters;
    }
    double m[6];
    for (int w = 0; w < 6; w++) m[w] = bench_median(t[w], (size_t)b->rounds);
    bench_row_add("replay_graph", "6 1000-kernel list, graph form", "Mkps", LIST / m[0] * 1e3, "cuGraphLaunch", LIST / m[3] * 1e3,
                  BENCH_TARGET_RATIO, BENCH_GE, 0.95);
    bench_row_add("replay_launches", "6b same, pre-resolved launches", "Mkps", LIST / m[1] * 1e3, "cuGraphLaunch", LIST / m[3] * 1e3,
                  BENCH_TARGET_RATIO, BENCH_GE, 0.95);
    bench_row_add("replay_graph_patched", "7 same, 1 constant patched", "ns", m[2], "set params+launch", m[4],
                  BENCH_TARGET_RATIO, BENCH_LE, 1.10);
    {
        double a[BENCH_ROUNDS_MAX], l[BENCH_ROUNDS_MAX], r[BENCH_ROUNDS_MAX];
        uint32_t iters = b->quick ? 20 : 200;
        for (int k = 0; k < b->rounds; k++) {
            double ta = 0, tl = 0, tr = 0;
            for (uint32_t i = 0; i < iters; i++) ta += bench_accel_replay(b, one_graph, NULL);
            for (uint32_t i = 0; i < iters; i++) tl += bench_accel_replay(b, one_launches, NULL);
            accel_i_cu.CtxSetCurrent(b->ctx);
            for (uint32_t i = 0; i < iters; i++) tr += bench_raw_launches(b, 1);
            a[k] = ta / iters; l[k] = tl / iters; r[k] = tr / iters;
        }
        bench_row_add("replay_one_graph", "8 1-kernel list round trip, graph", "ns", bench_median(a, (size_t)b->rounds),
                      "cuLaunchKernel+sync", bench_median(r, (size_t)b->rounds), BENCH_TARGET_RATIO, BENCH_LE, 1.05);
        bench_row_add("replay_one_launches", "8b same, pre-resolved launch", "ns", bench_median(l, (size_t)b->rounds),
                      "cuLaunchKernel+sync", bench_median(r, (size_t)b->rounds), BENCH_TARGET_RATIO, BENCH_LE, 1.05);
    }
done:
    if (e) accel_i_cu.GraphExecDestroy(e);
    if (g) accel_i_cu.GraphDestroy(g);
    free(nodes);
    accel_commands_destroy(graph); accel_commands_destroy(launches);
    accel_commands_destroy(one_graph); accel_commands_destroy(one_launches);
}

/* One copy through accel (copy + signal + submit + wait), GB/s; 0 when a call failed. */
static double bench_accel_copy_gbps(bench_cuda* b, accel_queue* q, accel_buffer* dst, accel_buffer* src, size_t bytes) {
    uint64_t t0 = bench_now_ns();
    accel_queue_copy(q, dst, 0, src, 0, bytes);
    accel_queue_signal(q, b->s, ++b->s_value);
    accel_queue_submit(q);
    if (!bench_accel_ok(accel_signal_wait(b->s, b->s_value, BENCH_WAIT_NS), "copy wait")) return 0;
    return (double)bytes / (double)(bench_now_ns() - t0);
}
/* A raw copy enqueued at t0 (its result cr), then cuStreamSynchronize: GB/s; 0 when a call failed. */
static double bench_raw_copy_gbps(bench_cuda* b, uint64_t t0, accel_cu_result cr, const char* what, size_t bytes) {
    if (!bench_cu_ok(cr, what) || !bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize")) return 0;
    return (double)bytes / (double)(bench_now_ns() - t0);
}

/* Figures 3 and 4: bandwidth of one big copy, accel vs raw, GB/s (bytes copied / time). */
static void bench_copy_figures(bench_cuda* b) {
    size_t bytes = b->quick ? ((size_t)32 << 20) : ((size_t)256 << 20);
    accel_buffer *src = NULL, *dst = NULL, *host = NULL;
    accel_cu_deviceptr rsrc = 0, rdst = 0;
    void* rhost = NULL;
    double a[BENCH_ROUNDS_MAX], r[BENCH_ROUNDS_MAX], u[BENCH_ROUNDS_MAX];
    uint32_t probe = 0;
    if (!bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = bytes, .label = "src" }, &src), "buffer src") ||
        !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = bytes, .label = "dst" }, &dst), "buffer dst") ||
        !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = bytes, .memory = ACCEL_MEMORY_HOST, .label = "host" }, &host), "buffer host") ||
        !bench_cu_ok(accel_i_cu.MemAlloc(&rsrc, bytes), "cuMemAlloc") || !bench_cu_ok(accel_i_cu.MemAlloc(&rdst, bytes), "cuMemAlloc") ||
        !bench_cu_ok(accel_i_cu.MemHostAlloc(&rhost, bytes, ACCEL_CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc"))
        goto out;
    memset(accel_buffer_map(host), 0x5a, bytes);
    memset(rhost, 0x5a, bytes);
    accel_queue_fill(b->q, src, 0, bytes, 0xC0FFEE00u);
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    /* the raw side's memory written too, as accel's is (its source filled, its destination zeroed at
       create): on tests/mock_cuda.c device memory is host memory, and a copy from pages never written
       (the kernel's shared zero page) ran 2-3x faster than from written ones, which made accel's copy
       read 0.4x raw there; a GPU's memory has no such pages */
    if (!bench_cu_ok(accel_i_cu.MemsetD32Async(rsrc, 0xC0FFEE00u, bytes / 4, b->stream), "cuMemsetD32Async") ||
        !bench_cu_ok(accel_i_cu.MemsetD32Async(rdst, 0, bytes / 4, b->stream), "cuMemsetD32Async") ||
        !bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize"))
        goto out;
    for (int k = 0; k < b->rounds; k++) {
        uint64_t t0;
        if ((a[k] = bench_accel_copy_gbps(b, b->q, dst, src, bytes)) == 0) goto out;
        t0 = bench_now_ns();
        if ((r[k] = bench_raw_copy_gbps(b, t0, accel_i_cu.MemcpyDtoDAsync(rdst, rsrc, bytes, b->stream), "cuMemcpyDtoDAsync", bytes)) == 0) goto out;
        t0 = bench_now_ns();
        if ((u[k] = bench_raw_copy_gbps(b, t0, accel_i_cu.MemcpyAsync(rdst, rsrc, bytes, b->stream), "cuMemcpyAsync", bytes)) == 0) goto out;
    }
    if (accel_buffer_read(dst, bytes - 4, &probe, 4) != ACCEL_OK || probe != 0xC0FFEE00u) bench_fail("d2d copy: last word %08x", probe);
    probe = 0;
    if (!bench_cu_ok(accel_i_cu.MemcpyDtoHAsync(&probe, rdst + bytes - 4, 4, b->stream), "cuMemcpyDtoHAsync") ||
        !bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize") || probe != 0xC0FFEE00u)
        bench_fail("raw d2d copy: last word %08x", probe);
    bench_row_add("d2d_bandwidth", "3 device-to-device copy", "GB/s", bench_median(a, (size_t)b->rounds), "cuMemcpyDtoDAsync",
                  bench_median(r, (size_t)b->rounds), BENCH_TARGET_RATIO, BENCH_GE, 0.95);
    bench_row_add("d2d_memcpyasync", "3 raw cuMemcpyAsync (unified)", "GB/s", bench_median(u, (size_t)b->rounds), "cuMemcpyDtoDAsync",
                  bench_median(r, (size_t)b->rounds), BENCH_TARGET_NONE, BENCH_GE, 0);
    for (int k = 0; k < b->rounds; k++) {
        uint64_t t0;
        if ((a[k] = bench_accel_copy_gbps(b, b->copy_q, dst, host, bytes)) == 0) goto out;
        t0 = bench_now_ns();
        if ((r[k] = bench_raw_copy_gbps(b, t0, accel_i_cu.MemcpyHtoDAsync(rdst, rhost, bytes, b->stream), "cuMemcpyHtoDAsync", bytes)) == 0) goto out;
    }
    if (accel_buffer_read(dst, 0, &probe, 4) != ACCEL_OK || probe != 0x5a5a5a5au) bench_fail("h2d copy: first word %08x", probe);
    bench_row_add("h2d_pinned_bandwidth", "4 pinned host-to-device copy", "GB/s", bench_median(a, (size_t)b->rounds), "cuMemcpyHtoDAsync",
                  bench_median(r, (size_t)b->rounds), BENCH_TARGET_RATIO, BENCH_GE, 0.95);
out:
    accel_buffer_destroy(src);
    accel_buffer_destroy(dst);
    accel_buffer_destroy(host);
    if (rsrc) accel_i_cu.MemFree(rsrc);
    if (rdst) accel_i_cu.MemFree(rdst);
    if (rhost) accel_i_cu.MemFreeHost(rhost);
}

/* Figure 5's round i on each side: a queue waits s1 >= v and signals s2 = v | the raw stream waits for
   word 1 >= v and writes v to word 2 (64 bytes further). */
#define BENCH_PINGPONG_AHEAD 32u
static void bench_pingpong_accel_enqueue(bench_cuda* b, accel_signal* s1, accel_signal* s2, uint64_t v) {
    accel_queue_wait(b->q, s1, v);
    accel_queue_signal(b->q, s2, v);
    accel_queue_submit(b->q);
}
static int bench_pingpong_raw_enqueue(bench_cuda* b, accel_cu_deviceptr words, uint64_t v) {
    return bench_cu_ok(accel_i_cu.StreamWaitValue64(b->stream, words, v, ACCEL_CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64") &&
           bench_cu_ok(accel_i_cu.StreamWriteValue64(b->stream, words + 64, v, ACCEL_CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue64");
}

/* Figure 5: host -> GPU -> host ping-pong, round trip ns. */
static void bench_pingpong(bench_cuda* b) {
    uint32_t iters = b->quick ? 200 : 2000;
    accel_signal *s1 = NULL, *s2 = NULL;
    void* words = NULL;
    volatile uint64_t *w1, *w2;
    accel_cu_deviceptr d1 = 0;
    double a[BENCH_ROUNDS_MAX], r[BENCH_ROUNDS_MAX], c[2][BENCH_COUNTS], c0[BENCH_COUNTS], c1[BENCH_COUNTS];
    uint64_t base = 0;
    bool raw = accel_i_cu.StreamWaitValue64 && accel_i_cu_dev(b->dev)->memops;
    memset(c, 0, sizeof c);
    if (!raw) { printf("bench_cuda: figure 5 skipped: the device has no 64-bit stream memory operations for the raw baseline\n"); return; }
    if (!bench_accel_ok(accel_signal_create(b->dev, 0, &s1), "signal") || !bench_accel_ok(accel_signal_create(b->dev, 0, &s2), "signal") ||
        !bench_cu_ok(accel_i_cu.MemHostAlloc(&words, 128, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc") ||
        !bench_cu_ok(accel_i_cu.MemHostGetDevicePointer(&d1, words, 0), "cuMemHostGetDevicePointer"))
        goto out;
    w1 = (volatile uint64_t*)words;
    w2 = (volatile uint64_t*)words + 8;
    *w1 = 0; *w2 = 0;
    for (int k = 0; k < b->rounds; k++) {
        uint64_t t0;
        /* both sides keep BENCH_PINGPONG_AHEAD rounds enqueued ahead of the host: a stream blocked in a
           wait takes only so many more operations before the call that enqueues one blocks too */
        for (uint32_t i = 1; i <= BENCH_PINGPONG_AHEAD; i++) bench_pingpong_accel_enqueue(b, s1, s2, base + i);
        bench_counts_read(&b->accel_workers, c0);
        t0 = bench_now_ns();
        for (uint32_t i = 1; i <= iters; i++) {
            accel_signal_set(s1, base + i);
            if (accel_signal_wait(s2, base + i, BENCH_WAIT_NS) != ACCEL_OK) {
                bench_fail("ping-pong: accel wait");
                accel_signal_fail(s1, ACCEL_ERROR_BACKEND);   /* release the batches still queued */
                goto out;
            }
            if (i + BENCH_PINGPONG_AHEAD <= iters) bench_pingpong_accel_enqueue(b, s1, s2, base + i + BENCH_PINGPONG_AHEAD);
        }
        a[k] = (double)(bench_now_ns() - t0) / iters;
        bench_counts_read(&b->accel_workers, c1);
        for (int j = 0; j < BENCH_COUNTS; j++) c[0][j] += (c1[j] - c0[j]) / iters;
        for (uint32_t i = 1; i <= BENCH_PINGPONG_AHEAD; i++)
            if (!bench_pingpong_raw_enqueue(b, d1, base + i)) goto out;
        bench_counts_read(&b->accel_workers, c0);
        t0 = bench_now_ns();
        for (uint32_t i = 1; i <= iters; i++) {
            uint64_t spin_start = bench_now_ns();
            *w1 = base + i;
            while (*w2 < base + i) {
                bench_cpu_relax();
                if (bench_now_ns() - spin_start > BENCH_WAIT_NS) {
                    bench_fail("ping-pong: raw wait");
                    *w1 = UINT64_MAX;   /* release the stream's remaining waits, so the synchronize below returns */
                    goto out;
                }
            }
            if (i + BENCH_PINGPONG_AHEAD <= iters && !bench_pingpong_raw_enqueue(b, d1, base + i + BENCH_PINGPONG_AHEAD)) {
                *w1 = UINT64_MAX;
                goto out;
            }
        }
        r[k] = (double)(bench_now_ns() - t0) / iters;
        bench_counts_read(&b->accel_workers, c1);
        for (int j = 0; j < BENCH_COUNTS; j++) c[1][j] += (c1[j] - c0[j]) / iters;
        base += iters;
    }
    for (int j = 0; j < BENCH_COUNTS; j++) { c[0][j] /= b->rounds; c[1][j] /= b->rounds; }
    if (accel_signal_value(s2) != base) bench_fail("ping-pong: s2 = %llu, expected %llu", (unsigned long long)accel_signal_value(s2), (unsigned long long)base);
    {
        bench_row* row = bench_row_add("signal_pingpong", "5 host->GPU->host ping-pong", "ns", bench_median(a, (size_t)b->rounds),
                                       "WaitValue64+WriteValue64", bench_median(r, (size_t)b->rounds), BENCH_TARGET_RATIO, BENCH_LE, 1.05);
        bench_counts_add(row, "5 host->GPU->host ping-pong (/round trip)", c);
    }
out:
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    if (words) { accel_i_cu.StreamSynchronize(b->stream); accel_i_cu.MemFreeHost(words); }
    accel_signal_destroy(s1);
    accel_signal_destroy(s2);
}

/* ==== figures 9-11: chains and host set -> GPU wait, through bench_pair_run ==== */
typedef accel_cu_result (ACCEL_I_CUDAAPI* bench_cu_wait_event_fn)(accel_cu_stream stream, accel_cu_event event, unsigned int flags);
static bench_cu_wait_event_fn bench_cu_StreamWaitEvent;   /* NULL when the driver lacks it */
/* cuStreamWaitEvent from accel's driver table (an optional entry: NULL when the driver lacks it). */
static void bench_cu_resolve_wait_event(void) { bench_cu_StreamWaitEvent = accel_i_cu.StreamWaitEvent; }
/* accel_queue_create, remembering the threads it started. */
static accel_queue* bench_queue_on(accel_device* dev, accel_queue_type type, bench_threads* watch) {
    bench_threads_snapshot before, after;
    accel_queue* q = NULL;
    bench_threads_started(&before, NULL, NULL);
    if (!bench_accel_ok(accel_queue_create(dev, type, &q), "accel_queue_create")) return NULL;
    bench_threads_started(&after, &before, watch);
    return q;
}
static accel_queue* bench_queue(bench_cuda* b, accel_queue_type type, bench_threads* watch) {
    return bench_queue_on(b->dev, type, watch);
}

typedef struct bench_fig {
    bench_cuda* b;
    int steps, nq;
    bool failed;                     /* a call failed: the remaining samples do nothing */
    accel_queue* q[2];
    accel_program* empty[2];         /* chains: the empty kernel of each queue's device */
    accel_signal *s[2], *gate;
    uint64_t acc_v, gate_v;
    accel_cu_stream st[2];
    accel_cu_event ev[2];
    accel_cu_event ring[2][4];       /* figure 12's events, per stream */
    volatile uint64_t* word;         /* figure 11's pinned word, and its device address */
    accel_cu_deviceptr dword;
    uint64_t raw_v;
    double issue_ns[2];              /* chains: host time spent issuing steps (before the wait), per side */
    uint64_t issued[2];              /* and how many steps */
    bench_threads workers;           /* accel's queue workers (counts) */
} bench_fig;
static void bench_fig_count(void* ctx, double out[BENCH_COUNTS]) {
    bench_counts_read(&((bench_fig*)ctx)->workers, out);
}

/* accel: steps batches, step i on queue i % nq: (two queues) wait for the step before, the empty
   kernel, signal. One queue waits for nothing, as the raw stream: its order is the dependency. */
static void bench_chain_accel(bench_fig* f) {
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < f->steps; i++) {
        accel_queue* q = f->q[i % f->nq];
        if (f->nq == 2) accel_queue_wait(q, f->s[(i + 1) % f->nq], f->acc_v);
        accel_queue_exec(q, f->empty[i % f->nq], NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(q, f->s[i % f->nq], ++f->acc_v);
        if (!bench_accel_ok(accel_queue_submit(q), "accel_queue_submit")) { f->failed = true; return; }
    }
    f->issue_ns[0] += (double)(bench_now_ns() - t0);
    f->issued[0] += (uint64_t)f->steps;
    if (!bench_accel_ok(accel_signal_wait(f->s[(f->steps - 1) % f->nq], f->acc_v, BENCH_WAIT_NS), "accel_signal_wait")) f->failed = true;
}
/* raw: step i on stream i % nq: (two streams) wait for the other stream's event, launch, record. */
static void bench_chain_raw(bench_fig* f) {
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < f->steps && !f->failed; i++) {
        int x = i % f->nq;
        if (f->nq == 2 && !bench_cu_ok(bench_cu_StreamWaitEvent(f->st[x], f->ev[1 - x], 0), "cuStreamWaitEvent")) f->failed = true;
        else if (!bench_cu_ok(accel_i_cu.LaunchKernel(f->b->fn, 1, 1, 1, 1, 1, 1, 0, f->st[x], NULL, NULL), "cuLaunchKernel")) f->failed = true;
        else if (!bench_cu_ok(accel_i_cu.EventRecord(f->ev[x], f->st[x]), "cuEventRecord")) f->failed = true;
    }
    f->issue_ns[1] += (double)(bench_now_ns() - t0);
    f->issued[1] += (uint64_t)f->steps;
    if (!f->failed && !bench_cu_ok(accel_i_cu.StreamSynchronize(f->st[(f->steps - 1) % f->nq]), "cuStreamSynchronize")) f->failed = true;
}
static double bench_chain_sample(void* ctx, int side) {
    bench_fig* f = (bench_fig*)ctx;
    uint64_t t0 = bench_now_ns();
    if (f->failed) return 0;
    if (side == 0) bench_chain_accel(f); else bench_chain_raw(f);
    return (double)(bench_now_ns() - t0) / f->steps;
}
/* Figure 11's sample: the queue / stream reaches its wait (20 us), then the timed set -> done. */
static double bench_host_set_sample(void* ctx, int side) {
    bench_fig* f = (bench_fig*)ctx;
    bench_cuda* b = f->b;
    uint64_t t0;
    if (f->failed) return 0;
    if (side == 0) {
        accel_queue_wait(b->q, f->gate, ++f->gate_v);
        accel_queue_exec(b->q, b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(b->q, b->s, ++b->s_value);
        if (!bench_accel_ok(accel_queue_submit(b->q), "accel_queue_submit")) { f->failed = true; return 0; }
        bench_sleep_ns(20000);
        t0 = bench_now_ns();
        accel_signal_set(f->gate, f->gate_v);
        if (!bench_accel_ok(accel_signal_wait(b->s, b->s_value, BENCH_WAIT_NS), "accel_signal_wait")) f->failed = true;
    } else {
        if (!bench_cu_ok(accel_i_cu.StreamWaitValue64(b->stream, f->dword, ++f->raw_v, ACCEL_CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64") ||
            !bench_cu_ok(accel_i_cu.LaunchKernel(b->fn, 1, 1, 1, 1, 1, 1, 0, b->stream, NULL, NULL), "cuLaunchKernel")) {
            *f->word = UINT64_MAX;   /* release the stream */
            f->failed = true;
            return 0;
        }
        bench_sleep_ns(20000);
        t0 = bench_now_ns();
        *f->word = f->raw_v;
        if (!bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize")) f->failed = true;
    }
    return (double)(bench_now_ns() - t0);
}
/* Figure 12's sides: the whole pipeline issued behind the closed gate, then timed from its opening. */
enum { BENCH_PIPE_RING = 4 };
static uint64_t bench_pipe_accel(bench_fig* f) {
    uint64_t base = f->acc_v, t0;
    for (int k = 1; k <= f->steps; k++) {
        if (k == 1) accel_queue_wait(f->q[0], f->gate, f->gate_v + 1);
        else if (k > BENCH_PIPE_RING) accel_queue_wait(f->q[0], f->s[1], base + (uint64_t)(k - BENCH_PIPE_RING));
        accel_queue_exec(f->q[0], f->b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(f->q[0], f->s[0], base + (uint64_t)k);
        accel_queue_wait(f->q[1], f->s[0], base + (uint64_t)k);
        accel_queue_exec(f->q[1], f->b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(f->q[1], f->s[1], base + (uint64_t)k);
        if (!bench_accel_ok(accel_queue_submit(f->q[0]), "accel_queue_submit") ||
            !bench_accel_ok(accel_queue_submit(f->q[1]), "accel_queue_submit")) { f->failed = true; break; }
    }
    f->acc_v = base + (uint64_t)f->steps;
    t0 = bench_now_ns();
    accel_signal_set(f->gate, ++f->gate_v);   /* opened even after a failure: nothing stays parked */
    if (!f->failed && !bench_accel_ok(accel_signal_wait(f->s[1], f->acc_v, BENCH_WAIT_NS), "accel_signal_wait")) f->failed = true;
    return t0;
}
static uint64_t bench_pipe_raw(bench_fig* f) {
    uint64_t t0;
    bool ok = bench_cu_ok(accel_i_cu.StreamWaitValue64(f->st[0], f->dword, f->raw_v + 1, ACCEL_CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64");
    for (int k = 1; k <= f->steps && ok; k++) {
        int slot = k % BENCH_PIPE_RING;
        ok = (k <= BENCH_PIPE_RING || bench_cu_ok(bench_cu_StreamWaitEvent(f->st[0], f->ring[1][slot], 0), "cuStreamWaitEvent")) &&
             bench_cu_ok(accel_i_cu.LaunchKernel(f->b->fn, 1, 1, 1, 1, 1, 1, 0, f->st[0], NULL, NULL), "cuLaunchKernel") &&
             bench_cu_ok(accel_i_cu.EventRecord(f->ring[0][slot], f->st[0]), "cuEventRecord") &&
             bench_cu_ok(bench_cu_StreamWaitEvent(f->st[1], f->ring[0][slot], 0), "cuStreamWaitEvent") &&
             bench_cu_ok(accel_i_cu.LaunchKernel(f->b->fn, 1, 1, 1, 1, 1, 1, 0, f->st[1], NULL, NULL), "cuLaunchKernel") &&
             bench_cu_ok(accel_i_cu.EventRecord(f->ring[1][slot], f->st[1]), "cuEventRecord");
    }
    t0 = bench_now_ns();
    *f->word = ++f->raw_v;   /* opened even after a failure */
    if (!ok || !bench_cu_ok(accel_i_cu.StreamSynchronize(f->st[1]), "cuStreamSynchronize")) f->failed = true;
    return t0;
}
static double bench_pipe_sample(void* ctx, int side) {
    bench_fig* f = (bench_fig*)ctx;
    uint64_t start = bench_now_ns(), t0;
    if (f->failed) return 0;
    t0 = side == 0 ? bench_pipe_accel(f) : bench_pipe_raw(f);
    f->issue_ns[side] += (double)(t0 - start);
    f->issued[side] += (uint64_t)f->steps;
    return (double)(bench_now_ns() - t0) / f->steps;
}
static bench_row* bench_fig_row(const bench_fig* f, const bench_pair* p, const char* figure, const char* title,
                                const char* baseline, double target, const bench_threads* watch) {
    bench_row* row = bench_row_add(figure, title, "ns", p->accel, baseline, p->baseline, BENCH_TARGET_RATIO, BENCH_LE, target);
    double per = f->steps ? (double)f->steps : 1.0;
    bench_row_extra(row, "paired_ratio", p->paired);
    if (f->steps) {
        bench_row_extra(row, "steps", f->steps);
        bench_row_extra(row, "accel_issue_ns_per_step", f->issued[0] ? f->issue_ns[0] / (double)f->issued[0] : 0);
        bench_row_extra(row, "raw_issue_ns_per_step", f->issued[1] ? f->issue_ns[1] / (double)f->issued[1] : 0);
    }
    bench_row_extra(row, f->steps ? "accel_queue_thread_wakeups_per_step" : "accel_queue_thread_wakeups_per_sample", p->watched_wakeups / per);
    bench_row_extra(row, "threads_watched", watch->count);
    /* every thread's sleeps, the mock's stream threads too: a stream that drains sleeps, and the next
       enqueue pays its wake-up (a slower issuer drains it more often: the mock's cost, not a GPU's) */
    bench_row_extra(row, f->steps ? "accel_process_wakeups_per_step" : "accel_process_wakeups_per_sample",
                    p->accel_process_wakeups / per);
    bench_row_extra(row, f->steps ? "raw_process_wakeups_per_step" : "raw_process_wakeups_per_sample",
                    p->baseline_process_wakeups / per);
    bench_row_extra(row, "memops", accel_i_cu_dev(f->b->dev)->memops);
    {
        double c[2][BENCH_COUNTS];
        for (int s2 = 0; s2 < 2; s2++)
            for (int j = 0; j < BENCH_COUNTS; j++) c[s2][j] = p->counts[s2][j] / per;
        bench_counts_add(row, title, c);
    }
    return row;
}

/* Figures 9 (nq 1), 10 (nq 2) and 17 (nq 2, the second queue and its signal on dev2: another accel
   device on the same GPU, so that each step waits on the other device's signal). */
static void bench_chain(bench_cuda* b, int nq, accel_device* dev2) {
    bench_fig f;
    bench_pair p;
    bench_threads watch;
    memset(&f, 0, sizeof f);
    watch = b->workers;   /* and, for two queues, the second queue's threads */
    f.b = b;
    f.nq = nq;
    f.steps = b->quick ? 50 : 200;   /* even: a two-queue chain's next sample starts on the queue after the last step's */
    if (nq == 2 && !bench_cu_StreamWaitEvent) { printf("bench_cuda: figure 10 skipped: the driver has no cuStreamWaitEvent\n"); return; }
    for (int i = 0; i < nq && !f.failed; i++) {
        accel_device* d = i > 0 && dev2 ? dev2 : b->dev;
        f.q[i] = i == 0 ? b->q : bench_queue_on(d, ACCEL_QUEUE_COMPUTE, &watch);
        f.st[i] = i == 0 ? b->stream : NULL;
        f.empty[i] = b->empty;
        f.failed = !f.q[i] || !bench_accel_ok(accel_signal_create(d, 0, &f.s[i]), "signal") ||
                   (i > 0 && !bench_cu_ok(accel_i_cu.StreamCreate(&f.st[i], ACCEL_CU_STREAM_NON_BLOCKING), "cuStreamCreate")) ||
                   !bench_cu_ok(accel_i_cu.EventCreate(&f.ev[i], ACCEL_CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        if (!f.failed && d != b->dev) {   /* figure 17: the second device's own kernel */
            accel_program_desc pd = { .name = "empty", .ptx = bench_empty_ptx };
            f.failed = !bench_accel_ok(accel_program_create(d, &pd, &f.empty[i]), "program");
        }
    }
    if (!f.failed) {
        bench_threads_not_mock(&watch, &f.workers);
        bench_pair_run_counted(b->rounds, b->quick ? 3 : 5, bench_chain_sample, &f, &watch, bench_fig_count, &p);
        if (!f.failed && nq == 1)
            bench_fig_row(&f, &p, "chain_1q", "9 dependent chain, 1 queue, /step", "LaunchKernel+EventRecord", 1.10, &watch);
        else if (!f.failed && dev2)
            bench_fig_row(&f, &p, "chain_2dev", "17 chain over 2 devices on 1 GPU, /step", "+StreamWaitEvent",
                          1.15, &watch);
        else if (!f.failed)
            bench_fig_row(&f, &p, "chain_2q", "10 chain over 2 queues, /step", "+StreamWaitEvent", 1.15, &watch);
    }
    if (f.q[0]) accel_queue_finish(f.q[0], BENCH_WAIT_NS);
    if (f.q[1]) accel_queue_destroy(f.q[1]);
    for (int i = 0; i < nq; i++) {
        accel_signal_destroy(f.s[i]);
        if (f.st[i]) accel_i_cu.StreamSynchronize(f.st[i]);
        if (f.ev[i]) accel_i_cu.EventDestroy(f.ev[i]);
        if (i > 0 && f.st[i]) accel_i_cu.StreamDestroy(f.st[i]);
    }
}

/* Figure 17: figure 10 with its second queue and signal on a second accel device on the same GPU
   (DESIGN 7.2: the waits across the two devices go to the GPU where peer_info says device_waits). */
static void bench_chain_devices(bench_cuda* b) {
    accel_device* dev2 = NULL;
    accel_peer_info pi;
    accel_device_desc desc = { .backend = accel_cuda_backend(), .label = "bench 2" };
    desc.device_index = (uint32_t)accel_i_cu_dev(b->dev)->cudev;
    if (!bench_accel_ok(accel_device_create(&desc, &dev2), "second device")) return;
    if (accel_device_peer_info(dev2, b->dev, &pi) == ACCEL_OK)
        printf("bench_cuda: figure 17: waits across the two devices %s\n",
               pi.device_waits ? "on the GPU (peer_info.device_waits)" : "gated on the host");
    bench_chain(b, 2, dev2);
    accel_device_destroy(dev2);
}

/* Figure 11. */
static void bench_host_set(bench_cuda* b) {
    bench_fig f;
    bench_pair p;
    void* words = NULL;
    memset(&f, 0, sizeof f);
    f.b = b;
    if (!accel_i_cu.StreamWaitValue64 || !accel_i_cu_dev(b->dev)->memops) {
        printf("bench_cuda: figure 11 skipped: the device has no 64-bit stream memory operations for the raw baseline\n");
        return;
    }
    if (!bench_accel_ok(accel_signal_create(b->dev, 0, &f.gate), "signal") ||
        !bench_cu_ok(accel_i_cu.MemHostAlloc(&words, 64, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc") ||
        !bench_cu_ok(accel_i_cu.MemHostGetDevicePointer(&f.dword, words, 0), "cuMemHostGetDevicePointer"))
        goto out;
    f.word = (volatile uint64_t*)words;
    *f.word = 0;
    f.workers = b->accel_workers;
    bench_pair_run_counted(b->rounds, b->quick ? 20 : 100, bench_host_set_sample, &f, &b->workers, bench_fig_count, &p);
    if (!f.failed) bench_fig_row(&f, &p, "host_signal_gpu_wait", "11 host set -> GPU wait -> done", "StreamWaitValue64", 1.10, &b->workers);
out:
    if (f.failed && f.gate) accel_signal_fail(f.gate, ACCEL_ERROR_BACKEND);   /* release what still waits */
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    if (words) { *f.word = UINT64_MAX; accel_i_cu.StreamSynchronize(b->stream); accel_i_cu.MemFreeHost(words); }
    accel_signal_destroy(f.gate);
}

/* Figure 13: [empty kernel, empty kernel indirect on (1, 1, 1)] | [empty kernel x 2], round trip. */
typedef struct bench_ind { bench_cuda* b; accel_buffer* counts; bool failed; } bench_ind;
static double bench_indirect_sample(void* ctx, int side) {
    bench_ind* f = (bench_ind*)ctx;
    bench_cuda* b = f->b;
    uint64_t t0 = bench_now_ns();
    if (f->failed) return 0;
    accel_queue_exec(b->q, b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    if (side == 0) accel_queue_exec_indirect(b->q, b->empty, NULL, 0, NULL, 0, NULL, f->counts, 0);
    else accel_queue_exec(b->q, b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_signal(b->q, b->s, ++b->s_value);
    f->failed = !bench_accel_ok(accel_queue_submit(b->q), "accel_queue_submit") ||
                !bench_accel_ok(accel_signal_wait(b->s, b->s_value, BENCH_WAIT_NS), "accel_signal_wait");
    return (double)(bench_now_ns() - t0);
}
static void bench_indirect(bench_cuda* b) {
    bench_ind f;
    bench_pair p;
    const uint32_t one[3] = { 1, 1, 1 };
    memset(&f, 0, sizeof f);
    f.b = b;
    f.failed = !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = 12 }, &f.counts), "buffer") ||
               !bench_accel_ok(accel_buffer_write(f.counts, 0, one, sizeof one), "accel_buffer_write");
    if (!f.failed) bench_pair_run(b->rounds, b->quick ? 20 : 100, bench_indirect_sample, &f, NULL, &p);
    if (!f.failed) {
        bench_row* row = bench_row_add("indirect", "13 indirect exec (host step), batch", "ns", p.accel, "direct exec",
                                       p.baseline, BENCH_TARGET_NONE, BENCH_LE, 0);
        bench_row_extra(row, "paired_ratio", p.paired);
        bench_row_extra(row, "extra_ns", p.accel - p.baseline);
    }
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    accel_buffer_destroy(f.counts);
}

/* Figure 12. */
static void bench_gated_pipeline(bench_cuda* b) {
    bench_fig f;
    bench_pair p;
    bench_threads watch = b->workers;
    void* words = NULL;
    memset(&f, 0, sizeof f);
    f.b = b;
    f.steps = b->quick ? 50 : 200;
    if (!accel_i_cu.StreamWaitValue64 || !accel_i_cu_dev(b->dev)->memops || !bench_cu_StreamWaitEvent) {
        printf("bench_cuda: figure 12 skipped: no 64-bit stream memory operations or no cuStreamWaitEvent for the raw baseline\n");
        return;
    }
    f.q[0] = b->q;
    f.st[0] = b->stream;
    f.failed = !(f.q[1] = bench_queue(b, ACCEL_QUEUE_COMPUTE, &watch)) ||
               !bench_accel_ok(accel_signal_create(b->dev, 0, &f.gate), "signal") ||
               !bench_accel_ok(accel_signal_create(b->dev, 0, &f.s[0]), "signal") ||
               !bench_accel_ok(accel_signal_create(b->dev, 0, &f.s[1]), "signal") ||
               !bench_cu_ok(accel_i_cu.StreamCreate(&f.st[1], ACCEL_CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
               !bench_cu_ok(accel_i_cu.MemHostAlloc(&words, 64, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc") ||
               !bench_cu_ok(accel_i_cu.MemHostGetDevicePointer(&f.dword, words, 0), "cuMemHostGetDevicePointer");
    for (int i = 0; i < 2 * BENCH_PIPE_RING && !f.failed; i++)
        f.failed = !bench_cu_ok(accel_i_cu.EventCreate(&f.ring[i / BENCH_PIPE_RING][i % BENCH_PIPE_RING], ACCEL_CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (!f.failed) {
        f.word = (volatile uint64_t*)words;
        *f.word = 0;
        bench_threads_not_mock(&watch, &f.workers);
        bench_pair_run_counted(b->rounds, b->quick ? 3 : 5, bench_pipe_sample, &f, &watch, bench_fig_count, &p);
        if (!f.failed) bench_fig_row(&f, &p, "gated_pipeline_2q", "12 pipeline behind a host gate, /step", "WaitValue64+StreamWaitEvent", 1.15, &watch);
    }
    if (f.gate) accel_signal_fail(f.gate, ACCEL_ERROR_BACKEND);   /* release what may still wait */
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    if (f.q[1]) accel_queue_destroy(f.q[1]);
    if (f.word) *f.word = UINT64_MAX;
    if (f.st[1]) { accel_i_cu.StreamSynchronize(f.st[1]); accel_i_cu.StreamDestroy(f.st[1]); }
    accel_i_cu.StreamSynchronize(b->stream);
    for (int i = 0; i < 2 * BENCH_PIPE_RING; i++) {
        accel_cu_event ev = f.ring[i / BENCH_PIPE_RING][i % BENCH_PIPE_RING];
        if (ev) accel_i_cu.EventDestroy(ev);
    }
    if (words) accel_i_cu.MemFreeHost(words);
    accel_signal_destroy(f.gate);
    accel_signal_destroy(f.s[0]);
    accel_signal_destroy(f.s[1]);
}

/* ==== figure 16: queue-ordered memory ==== */
enum { BENCH_QMEM_BYTES = 1 << 20 };
typedef struct bench_qmem {
    bench_cuda* b;
    accel_buffer *once, *out;
    accel_cu_deviceptr raw_once;     /* the raw side's scratch made once */
    uint32_t* pinned;                /* the raw side's result word (cuMemHostAlloc) */
    bool raw;                        /* the raw pair: cuMemAlloc/cuMemFree per step | made once */
    bool fill;                       /* the step fills its 1 MiB scratch (else it only reads a word of it) */
    bool failed;
    uint32_t v;
} bench_qmem;
/* The accel step; alloc: its scratch from accel_queue_alloc (else m->once). Checks the copied word. */
static double bench_qmem_accel(bench_qmem* m, bool alloc) {
    bench_cuda* b = m->b;
    accel_buffer* scratch = m->once;
    uint32_t v = ++m->v;
    uint64_t t0 = bench_now_ns();
    if (alloc && !bench_accel_ok(accel_queue_alloc(b->q, BENCH_QMEM_BYTES, ACCEL_MEMORY_DEVICE, &scratch),
                                 "accel_queue_alloc"))
        return m->failed = true, 0;
    if (m->fill) accel_queue_fill(b->q, scratch, 0, BENCH_QMEM_BYTES, v);
    accel_queue_exec(b->q, b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    accel_queue_copy(b->q, m->out, 0, scratch, 0, 4);
    if (alloc) accel_queue_free(b->q, scratch);
    accel_queue_signal(b->q, b->s, ++b->s_value);
    if (!bench_accel_ok(accel_queue_submit(b->q), "accel_queue_submit") ||
        !bench_accel_ok(accel_signal_wait(b->s, b->s_value, BENCH_WAIT_NS), "accel_signal_wait"))
        return m->failed = true, 0;
    double t = (double)(bench_now_ns() - t0);
    uint32_t got = *(volatile uint32_t*)accel_buffer_map(m->out);
    if (m->fill && got != v) bench_fail("qmem: word %u, expected %u", got, v);
    return t;
}
/* The same step in raw driver calls; alloc: its scratch from cuMemAlloc, freed by cuMemFree. */
static double bench_qmem_raw(bench_qmem* m, bool alloc) {
    bench_cuda* b = m->b;
    accel_cu_deviceptr p = m->raw_once;
    uint32_t v = ++m->v;
    uint64_t t0 = bench_now_ns();
    if (alloc && !bench_cu_ok(accel_i_cu.MemAlloc(&p, BENCH_QMEM_BYTES), "cuMemAlloc")) return m->failed = true, 0;
    bool ok = (!m->fill ||
               bench_cu_ok(accel_i_cu.MemsetD32Async(p, v, BENCH_QMEM_BYTES / 4, b->stream), "cuMemsetD32Async")) &&
              bench_cu_ok(accel_i_cu.LaunchKernel(b->fn, 1, 1, 1, 1, 1, 1, 0, b->stream, NULL, NULL), "cuLaunchKernel") &&
              bench_cu_ok(accel_i_cu.MemcpyDtoHAsync(m->pinned, p, 4, b->stream), "cuMemcpyDtoHAsync");
    if (alloc) ok = bench_cu_ok(accel_i_cu.MemFree(p), "cuMemFree") && ok;
    ok = ok && bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize");
    double t = (double)(bench_now_ns() - t0);
    if (!ok) m->failed = true;
    else if (m->fill && *(volatile uint32_t*)m->pinned != v) bench_fail("qmem raw: word %u, expected %u", *m->pinned, v);
    return t;
}
static double bench_qmem_sample(void* ctx, int side) {
    bench_qmem* m = (bench_qmem*)ctx;
    if (m->failed) return 0;
    return m->raw ? bench_qmem_raw(m, side == 0) : bench_qmem_accel(m, side == 0);
}
/* 16: the accel step with queue memory | with the scratch made once. 16c: the same without the fill
   (the step is then mostly the round trip). 16b: what allocating and freeing add to 16c's step (its
   two sides' difference) | what cuMemAlloc + cuMemFree add to the same step in raw calls (the
   difference of the raw pair, run the same way): target <= 0.10, 10x cheaper. */
static void bench_qmem_figure(bench_cuda* b) {
    bench_qmem m;
    bench_pair p[3];
    void* pinned = NULL;
    memset(&m, 0, sizeof m);
    m.b = b;
    if (!bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = BENCH_QMEM_BYTES }, &m.once), "buffer") ||
        !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = 64, .memory = ACCEL_MEMORY_HOST }, &m.out),
                        "buffer") ||
        !bench_cu_ok(accel_i_cu.MemAlloc(&m.raw_once, BENCH_QMEM_BYTES), "cuMemAlloc") ||
        !bench_cu_ok(accel_i_cu.MemHostAlloc(&pinned, 64, 0), "cuMemHostAlloc"))
        goto out;
    m.pinned = (uint32_t*)pinned;
    for (int i = 0; i < 3 && !m.failed; i++) {   /* accel with the fill, accel without, raw without */
        m.fill = i == 0;
        m.raw = i == 2;
        bench_pair_run(b->rounds, b->quick ? 10 : 50, bench_qmem_sample, &m, NULL, &p[i]);
    }
    if (!m.failed) {
        double extra = p[1].accel - p[1].baseline, raw_extra = p[2].accel - p[2].baseline;
        bench_row* row = bench_row_add("qmem_step", "16 1 MiB scratch step, queue_alloc", "ns", p[0].accel,
                                       "scratch made once", p[0].baseline, BENCH_TARGET_RATIO, BENCH_LE, 1.10);
        bench_row_extra(row, "paired_ratio", p[0].paired);
        row = bench_row_add("qmem_tiny_step", "16c same without the fill", "ns", p[1].accel, "scratch made once",
                            p[1].baseline, BENCH_TARGET_NONE, BENCH_LE, 0);
        bench_row_extra(row, "paired_ratio", p[1].paired);
        row = bench_row_add("qmem_vs_cumemalloc", "16b 16c's alloc+free, per step", "ns", extra, "cuMemAlloc+cuMemFree",
                            raw_extra, BENCH_TARGET_RATIO, BENCH_LE, 0.10);
        bench_row_extra(row, "raw_step_ns", p[2].accel);
        bench_row_extra(row, "raw_step_once_ns", p[2].baseline);
    }
out:
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    accel_i_cu.StreamSynchronize(b->stream);
    if (m.raw_once) accel_i_cu.MemFree(m.raw_once);
    if (pinned) accel_i_cu.MemFreeHost(pinned);
    accel_buffer_destroy(m.once);
    accel_buffer_destroy(m.out);
}

/* ==== figure 14: a native step between two kernels (accel_queue_native, DESIGN 7.1) ==== */
/* Each step: the empty kernel, a 256-byte cuMemcpyDtoDAsync that the step enqueues itself, the empty
   kernel; a sample is one batch of `steps` steps, then a signal (the per-submit cost is figure 9's) |
   cuLaunchKernel, cuMemcpyDtoDAsync, cuLaunchKernel per step on one stream, then cuEventRecord. 14b: the
   same chain with the copy from accel_queue_host_call (fn enqueues on the queue's stream once the GPU
   drained what came before) against the native one. */
enum { BENCH_NATIVE_BYTES = 256 };
typedef struct bench_nat {
    bench_fig f;                     /* steps, failed, issue times, the workers to count */
    accel_cu_deviceptr dst, src;     /* the copy's words (accel buffers: both sides copy the same) */
    int pair;                        /* 0: native | raw, 1: host_call | native */
    accel_signal* s;
    uint64_t v;
    accel_cu_event ev;
    int errors;                      /* copies the driver refused inside fn */
} bench_nat;
static void bench_nat_copy(bench_nat* n, accel_cu_stream stream) {
    if (accel_i_cu.MemcpyDtoDAsync(n->dst, n->src, BENCH_NATIVE_BYTES, stream) != ACCEL_CU_SUCCESS) n->errors++;
}
static void bench_nat_native_fn(const accel_native* an, void* user) {
    bench_nat_copy((bench_nat*)user, (accel_cu_stream)an->cuda_stream);
}
static void bench_nat_host_fn(void* user) {   /* a library thread: make the context current first */
    bench_nat* n = (bench_nat*)user;
    accel_i_cu.CtxSetCurrent(n->f.b->ctx);
    bench_nat_copy(n, (accel_cu_stream)accel_cuda_queue_stream(n->f.b->q));
}
static void bench_nat_accel(bench_nat* n, bool host_call) {
    bench_cuda* b = n->f.b;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < n->f.steps; i++) {
        accel_queue_exec(b->q, b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
        if (host_call) accel_queue_host_call(b->q, bench_nat_host_fn, n);
        else accel_queue_native(b->q, bench_nat_native_fn, n);
        accel_queue_exec(b->q, b->empty, NULL, 0, NULL, 0, accel_exec_1d(1, 1));
    }
    accel_queue_signal(b->q, n->s, ++n->v);
    if (!bench_accel_ok(accel_queue_submit(b->q), "accel_queue_submit")) { n->f.failed = true; return; }
    n->f.issue_ns[host_call ? 1 : 0] += (double)(bench_now_ns() - t0);
    n->f.issued[host_call ? 1 : 0] += (uint64_t)n->f.steps;
    if (!bench_accel_ok(accel_signal_wait(n->s, n->v, BENCH_WAIT_NS), "accel_signal_wait")) n->f.failed = true;
}
static void bench_nat_raw(bench_nat* n) {
    bench_cuda* b = n->f.b;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < n->f.steps && !n->f.failed; i++)
        n->f.failed = !bench_cu_ok(accel_i_cu.LaunchKernel(b->fn, 1, 1, 1, 1, 1, 1, 0, b->stream, NULL, NULL), "cuLaunchKernel") ||
                      !bench_cu_ok(accel_i_cu.MemcpyDtoDAsync(n->dst, n->src, BENCH_NATIVE_BYTES, b->stream), "cuMemcpyDtoDAsync") ||
                      !bench_cu_ok(accel_i_cu.LaunchKernel(b->fn, 1, 1, 1, 1, 1, 1, 0, b->stream, NULL, NULL), "cuLaunchKernel");
    if (!n->f.failed) n->f.failed = !bench_cu_ok(accel_i_cu.EventRecord(n->ev, b->stream), "cuEventRecord");
    n->f.issue_ns[1] += (double)(bench_now_ns() - t0);
    n->f.issued[1] += (uint64_t)n->f.steps;
    if (!n->f.failed && !bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize")) n->f.failed = true;
}
static double bench_nat_sample(void* ctx, int side) {
    bench_nat* n = (bench_nat*)ctx;
    uint64_t t0 = bench_now_ns();
    if (n->f.failed) return 0;
    if (n->pair == 0 && side == 1) {
        accel_i_cu.CtxSetCurrent(n->f.b->ctx);
        bench_nat_raw(n);
    } else {
        bench_nat_accel(n, n->pair == 1 && side == 0);
    }
    return (double)(bench_now_ns() - t0) / n->f.steps;
}
static void bench_native_chain(bench_cuda* b) {
    bench_nat n;
    bench_pair p;
    accel_buffer *src = NULL, *dst = NULL;
    uint32_t got[BENCH_NATIVE_BYTES / 4];
    memset(&n, 0, sizeof n);
    n.f.b = b;
    n.f.steps = b->quick ? 50 : 200;
    n.f.workers = b->accel_workers;
    n.f.failed = !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = BENCH_NATIVE_BYTES }, &src), "buffer") ||
                 !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = BENCH_NATIVE_BYTES }, &dst), "buffer") ||
                 !bench_accel_ok(accel_signal_create(b->dev, 0, &n.s), "signal") ||
                 !bench_cu_ok(accel_i_cu.EventCreate(&n.ev, ACCEL_CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (!n.f.failed) {
        accel_queue_fill(b->q, src, 0, BENCH_NATIVE_BYTES, 0x5eed5eedu);
        n.f.failed = !bench_accel_ok(accel_queue_finish(b->q, BENCH_WAIT_NS), "fill");
        n.src = (accel_cu_deviceptr)accel_cuda_buffer_pointer(src);
        n.dst = (accel_cu_deviceptr)accel_cuda_buffer_pointer(dst);
    }
    if (!n.f.failed) {
        double target = bench_mock_calls ? 1.15 : 1.10;   /* DESIGN 7.1's targets: the mock, a GPU */
        bench_pair_run_counted(b->rounds, b->quick ? 3 : 5, bench_nat_sample, &n, &b->workers, bench_fig_count, &p);
        if (!n.f.failed) bench_fig_row(&n.f, &p, "native_step_chain", "14 kernel->native copy->kernel, /step", "raw stream order", target, &b->workers);
        memset(n.f.issue_ns, 0, sizeof n.f.issue_ns);
        memset(n.f.issued, 0, sizeof n.f.issued);
        n.pair = 1;
        n.f.steps = b->quick ? 20 : 50;   /* a host round trip per step */
        if (!n.f.failed) bench_pair_run_counted(b->rounds, b->quick ? 3 : 5, bench_nat_sample, &n, &b->workers, bench_fig_count, &p);
        if (!n.f.failed) {
            bench_row* row = bench_row_add("native_vs_host_call", "14b same chain by accel_queue_host_call", "ns", p.accel,
                                           "accel_queue_native", p.baseline, BENCH_TARGET_NONE, BENCH_LE, 0);
            bench_row_extra(row, "paired_ratio", p.paired);
            bench_row_extra(row, "steps", n.f.steps);
        }
    }
    if (n.errors) bench_fail("figure 14: %d copies refused by the driver inside fn", n.errors);
    if (!n.f.failed && (accel_buffer_read(dst, 0, got, sizeof got) != ACCEL_OK || got[0] != 0x5eed5eedu ||
                        got[BENCH_NATIVE_BYTES / 4 - 1] != 0x5eed5eedu))
        bench_fail("figure 14: the copies did not land (%08x)", got[0]);
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    if (n.ev) { accel_i_cu.StreamSynchronize(b->stream); accel_i_cu.EventDestroy(n.ev); }
    accel_signal_destroy(n.s);
    accel_buffer_destroy(src);
    accel_buffer_destroy(dst);
}

/* ==== figure 15: cuBLAS in queue order (libcublas loaded at run time, as examples/native.c does) ==== */
typedef int (*bench_cublas_create_fn)(void** handle);
typedef int (*bench_cublas_stream_fn)(void* handle, void* stream);
typedef int (*bench_cublas_sgemm_fn)(void* handle, int ta, int tb, int m, int n, int k, const float* alpha,
                                     const float* a, int lda, const float* b, int ldb, const float* beta, float* c,
                                     int ldc);
typedef struct bench_gemm {
    bench_cuda* b;
    void *handle, *raw_handle;   /* one per side: cublasSetStream may swap a handle's workspace */
    bench_cublas_stream_fn set_stream;
    bench_cublas_sgemm_fn sgemm;
    int (*destroy)(void* handle);
    accel_cu_deviceptr a, bm, c;
    int steps, errors;
    bool failed;
    accel_signal* s;
    uint64_t v;
    accel_cu_event ev;
} bench_gemm;
enum { BENCH_GEMM_N = 1024 };
/* libcublas and a handle in the device's primary context; false (why: the reason) when there is none. */
static bool bench_cublas_open(bench_gemm* g, char* why, size_t cap) {
    static const char* const libs[] = { "libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so" };
    void *lib = NULL, *f[4];
    bench_cublas_create_fn create;
    int r;
    for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !lib; i++) lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { snprintf(why, cap, "no libcublas.so.13/.12/.11 can be loaded"); return false; }
    f[0] = dlsym(lib, "cublasCreate_v2"); f[1] = dlsym(lib, "cublasSetStream_v2");
    f[2] = dlsym(lib, "cublasSgemm_v2"); f[3] = dlsym(lib, "cublasDestroy_v2");
    if (!f[0] || !f[1] || !f[2] || !f[3]) { snprintf(why, cap, "libcublas lacks cublasCreate_v2/SetStream_v2/Sgemm_v2"); return false; }
    memcpy(&create, &f[0], sizeof create);
    memcpy(&g->set_stream, &f[1], sizeof f[1]);
    memcpy(&g->sgemm, &f[2], sizeof f[2]);
    memcpy(&g->destroy, &f[3], sizeof f[3]);
    accel_i_cu.CtxSetCurrent(g->b->ctx);
    if ((r = create(&g->handle)) != 0) g->handle = NULL;
    else if ((r = create(&g->raw_handle)) != 0) g->raw_handle = NULL;
    else r = g->set_stream(g->raw_handle, g->b->stream);
    if (r == 0) return true;
    if (g->handle) g->destroy(g->handle);
    if (g->raw_handle) g->destroy(g->raw_handle);
    g->handle = g->raw_handle = NULL;
    snprintf(why, cap, "cuBLAS could not start: status %d (its CUDA runtime found no GPU: e.g. the mock driver)", r);
    return false;
}
/* C = A B, column-major, N^3; stream NULL: the raw side's handle, already on the raw stream */
static void bench_gemm_on(bench_gemm* g, accel_cu_stream stream) {
    const float one = 1.0f, zero = 0.0f;
    void* h = stream ? g->handle : g->raw_handle;
    if ((stream && g->set_stream(h, stream) != 0) ||
        g->sgemm(h, 0, 0, BENCH_GEMM_N, BENCH_GEMM_N, BENCH_GEMM_N, &one, (const float*)(uintptr_t)g->a, BENCH_GEMM_N,
                 (const float*)(uintptr_t)g->bm, BENCH_GEMM_N, &zero, (float*)(uintptr_t)g->c, BENCH_GEMM_N) != 0)
        g->errors++;
}
static void bench_gemm_native_fn(const accel_native* n, void* user) {
    bench_gemm_on((bench_gemm*)user, (accel_cu_stream)n->cuda_stream);
}
/* accel: per GEMM a native step, a signal and a submit | the GEMM and an event record on one stream. */
static double bench_gemm_sample(void* ctx, int side) {
    bench_gemm* g = (bench_gemm*)ctx;
    bench_cuda* b = g->b;
    uint64_t t0 = bench_now_ns();
    if (g->failed) return 0;
    for (int i = 0; i < g->steps && !g->failed; i++) {
        if (side == 0) {
            accel_queue_native(b->q, bench_gemm_native_fn, g);
            accel_queue_signal(b->q, g->s, ++g->v);
            g->failed = !bench_accel_ok(accel_queue_submit(b->q), "accel_queue_submit");
        } else {
            bench_gemm_on(g, NULL);
            g->failed = !bench_cu_ok(accel_i_cu.EventRecord(g->ev, b->stream), "cuEventRecord");
        }
    }
    if (side == 0 && !g->failed) g->failed = !bench_accel_ok(accel_signal_wait(g->s, g->v, BENCH_WAIT_NS), "accel_signal_wait");
    if (side == 1 && !g->failed) g->failed = !bench_cu_ok(accel_i_cu.StreamSynchronize(b->stream), "cuStreamSynchronize");
    return (double)(bench_now_ns() - t0) / g->steps;
}
static void bench_cublas_chain(bench_cuda* b) {
    bench_gemm g;
    bench_pair p;
    accel_buffer *a = NULL, *bm = NULL, *c = NULL;
    size_t bytes = (size_t)BENCH_GEMM_N * BENCH_GEMM_N * sizeof(float);
    float one = 1.0f, two = 2.0f, got[2] = { 0, 0 };
    uint32_t one_bits, two_bits;
    char why[160];
    memset(&g, 0, sizeof g);
    g.b = b;
    g.steps = b->quick ? 5 : 20;
    if (!bench_cublas_open(&g, why, sizeof why)) {
        printf("bench_cuda: figure 15 skipped: %s\n", why);
        return;
    }
    memcpy(&one_bits, &one, 4);
    memcpy(&two_bits, &two, 4);
    g.failed = !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = bytes, .label = "A" }, &a), "buffer") ||
               !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = bytes, .label = "B" }, &bm), "buffer") ||
               !bench_accel_ok(accel_buffer_create(b->dev, &(accel_buffer_desc){ .size = bytes, .label = "C" }, &c), "buffer") ||
               !bench_accel_ok(accel_signal_create(b->dev, 0, &g.s), "signal") ||
               !bench_cu_ok(accel_i_cu.EventCreate(&g.ev, ACCEL_CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (!g.failed) {
        accel_queue_fill(b->q, a, 0, bytes, one_bits);
        accel_queue_fill(b->q, bm, 0, bytes, two_bits);
        g.failed = !bench_accel_ok(accel_queue_finish(b->q, BENCH_WAIT_NS), "fill");
        g.a = (accel_cu_deviceptr)accel_cuda_buffer_pointer(a);
        g.bm = (accel_cu_deviceptr)accel_cuda_buffer_pointer(bm);
        g.c = (accel_cu_deviceptr)accel_cuda_buffer_pointer(c);
    }
    if (!g.failed) {
        bench_pair_run(b->rounds, b->quick ? 2 : 5, bench_gemm_sample, &g, &b->workers, &p);
        if (!g.failed) {
            bench_row* row = bench_row_add("cublas_sgemm_chain", "15 cuBLAS 1024^3 SGEMM chain, /GEMM", "ns", p.accel,
                                           "raw stream order", p.baseline, BENCH_TARGET_RATIO, BENCH_LE, 1.05);
            bench_row_extra(row, "paired_ratio", p.paired);
            bench_row_extra(row, "steps", g.steps);
        }
    }
    accel_queue_finish(b->q, BENCH_WAIT_NS);
    if (g.errors) bench_fail("figure 15: cuBLAS refused %d calls", g.errors);
    if (!g.failed && (accel_buffer_read(c, 0, &got[0], 4) != ACCEL_OK || accel_buffer_read(c, bytes - 4, &got[1], 4) != ACCEL_OK ||
                      got[0] != 2.0f * BENCH_GEMM_N || got[1] != 2.0f * BENCH_GEMM_N))
        bench_fail("figure 15: C[0] = %g, C[last] = %g, expected %d", (double)got[0], (double)got[1], 2 * BENCH_GEMM_N);
    if (g.ev) { accel_i_cu.StreamSynchronize(b->stream); accel_i_cu.EventDestroy(g.ev); }
    if (g.handle) g.destroy(g.handle);
    if (g.raw_handle) g.destroy(g.raw_handle);
    accel_signal_destroy(g.s);
    accel_buffer_destroy(a);
    accel_buffer_destroy(bm);
    accel_buffer_destroy(c);
}

/* ==== figure 18: what one driver call costs the host ==== */
/* The calls a chain step makes, each issued n times in a row on the raw stream (the work is trivial, so
   the stream keeps up), host ns per call; the stream is synchronized outside the timing. The event
   waited for was recorded once on a second stream (a chain over two queues waits on the other one's
   event: a driver may take a wait on its own stream's event as stream order). */
enum { BENCH_CALL_LAUNCH, BENCH_CALL_RECORD, BENCH_CALL_WAIT_EVENT, BENCH_CALL_WRITE, BENCH_CALL_BATCH2,
       BENCH_CALL_WAIT_VALUE, BENCH_CALLS };
static const char* const bench_call_names[BENCH_CALLS][2] = {
    { "call_launch", "18 cuLaunchKernel (empty)" }, { "call_event_record", "18 cuEventRecord" },
    { "call_wait_event", "18 cuStreamWaitEvent (other stream, reached)" }, { "call_write_value", "18 cuStreamWriteValue64" },
    { "call_batch_memop", "18 cuStreamBatchMemOp, 2 writes" }, { "call_wait_value", "18 cuStreamWaitValue64 (reached)" },
};
typedef struct bench_calls {
    bench_cuda* b;
    accel_cu_event ev, other_ev;   /* recorded on the raw stream; recorded once on `other` */
    accel_cu_stream other;
    accel_cu_deviceptr word;
} bench_calls;
static accel_cu_result bench_call(const bench_calls* c, int kind, uint64_t v) {
    accel_cu_stream st = c->b->stream;
    accel_cu_batch_memop ops[2];
    switch (kind) {
    case BENCH_CALL_LAUNCH: return accel_i_cu.LaunchKernel(c->b->fn, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL);
    case BENCH_CALL_RECORD: return accel_i_cu.EventRecord(c->ev, st);
    case BENCH_CALL_WAIT_EVENT: return bench_cu_StreamWaitEvent(st, c->other_ev, 0);
    case BENCH_CALL_WRITE: return accel_i_cu.StreamWriteValue64(st, c->word, v, ACCEL_CU_STREAM_WRITE_VALUE_DEFAULT);
    case BENCH_CALL_WAIT_VALUE: return accel_i_cu.StreamWaitValue64(st, c->word, 1, ACCEL_CU_STREAM_WAIT_VALUE_GEQ);
    default:
        memset(ops, 0, sizeof ops);
        ops[0].write_value.operation = ops[1].write_value.operation = ACCEL_CU_STREAM_MEM_OP_WRITE_VALUE_64;
        ops[0].write_value.address = c->word + 64;
        ops[1].write_value.address = c->word;
        ops[0].write_value.value64 = ops[1].write_value.value64 = v;
        return accel_i_cu.StreamBatchMemOp(st, 2, ops, 0);
    }
}
/* One sample: n calls of `kind`, host ns per call; 0 when a call fails. */
static double bench_call_sample(const bench_calls* c, int kind, uint32_t n) {
    uint64_t t0 = bench_now_ns();
    double ns;
    for (uint32_t i = 0; i < n; i++)
        if (!bench_cu_ok(bench_call(c, kind, i + 1), bench_call_names[kind][1] + 3)) return 0;
    ns = (double)(bench_now_ns() - t0) / n;
    return bench_cu_ok(accel_i_cu.StreamSynchronize(c->b->stream), "cuStreamSynchronize") ? ns : 0;
}
/* Figure 18: rounds alternate the kinds; each row beside cuEventRecord, a raw chain's signal. Where the
   chains' accel / raw ratios come from on a GPU: accel's point is a memory write (a batch of two where
   it also writes a signal's mirror), raw's an event. */
static void bench_call_costs(bench_cuda* b) {
    double m[BENCH_CALLS][BENCH_ROUNDS_MAX];
    uint32_t n = b->quick ? 100 : 1000;
    int kinds = accel_i_cu_dev(b->dev)->memops && accel_i_cu.StreamWriteValue64 && accel_i_cu.StreamWaitValue64
                    ? (accel_i_cu.StreamBatchMemOp ? BENCH_CALLS : BENCH_CALL_BATCH2) : BENCH_CALL_WRITE;
    bench_calls c = { b, NULL, NULL, NULL, 0 };
    void* words = NULL;
    if (!bench_cu_StreamWaitEvent) { printf("bench_cuda: figure 18 skipped: the driver has no cuStreamWaitEvent\n"); return; }
    if (!bench_cu_ok(accel_i_cu.EventCreate(&c.ev, ACCEL_CU_EVENT_DISABLE_TIMING), "cuEventCreate") ||
        !bench_cu_ok(accel_i_cu.EventCreate(&c.other_ev, ACCEL_CU_EVENT_DISABLE_TIMING), "cuEventCreate") ||
        !bench_cu_ok(accel_i_cu.StreamCreate(&c.other, ACCEL_CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
        !bench_cu_ok(accel_i_cu.EventRecord(c.other_ev, c.other), "cuEventRecord") ||
        !bench_cu_ok(accel_i_cu.StreamSynchronize(c.other), "cuStreamSynchronize") ||
        (kinds > BENCH_CALL_WRITE &&
         (!bench_cu_ok(accel_i_cu.MemHostAlloc(&words, 128, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc") ||
          !bench_cu_ok(accel_i_cu.MemHostGetDevicePointer(&c.word, words, 0), "cuMemHostGetDevicePointer"))))
        goto out;
    if (words) memset(words, 0, 128);
    if (!bench_cu_ok(accel_i_cu.EventRecord(c.ev, b->stream), "cuEventRecord")) goto out;
    for (int k = 0; k < kinds; k++)
        if (!bench_call_sample(&c, k, 10)) goto out;   /* warm-up */
    for (int r = 0; r < b->rounds; r++)
        for (int k = 0; k < kinds; k++)
            if ((m[k][r] = bench_call_sample(&c, k, n)) == 0) goto out;
    for (int k = 0; k < kinds; k++)
        if (k != BENCH_CALL_RECORD)
            bench_row_add(bench_call_names[k][0], bench_call_names[k][1], "ns", bench_median(m[k], (size_t)b->rounds),
                          "cuEventRecord", bench_median(m[BENCH_CALL_RECORD], (size_t)b->rounds), BENCH_TARGET_NONE, BENCH_LE, 0);
    if (kinds < BENCH_CALLS) printf("bench_cuda: figure 18: no %s here (the driver's or ACCEL_CUDA_NO_MEMOPS): those rows are left out\n",
                                    kinds == BENCH_CALL_WRITE ? "64-bit stream memory operations" : "cuStreamBatchMemOp");
out:
    accel_i_cu.StreamSynchronize(b->stream);
    if (words) accel_i_cu.MemFreeHost(words);
    if (c.ev) accel_i_cu.EventDestroy(c.ev);
    if (c.other_ev) accel_i_cu.EventDestroy(c.other_ev);
    if (c.other) accel_i_cu.StreamDestroy(c.other);
}

/* The figures in the order they run; `native`: also with --native. */
static void bench_chain_1q(bench_cuda* b) { bench_chain(b, 1, NULL); }
static void bench_chain_2q(bench_cuda* b) { bench_chain(b, 2, NULL); }
/* ids: the figures a step measures (--figures picks steps by them). */
static const struct {
    const char* what;
    const char* ids;
    void (*run)(bench_cuda* b);
    bool native;
} bench_steps[] = {
    { "figures 1-2 (launches)", "1,2", bench_launch_figures, false },
    { "figures 3-4 (copies)", "3,4", bench_copy_figures, false },
    { "figure 5 (ping-pong)", "5", bench_pingpong, false },
    { "figures 6-8 (recorded lists)", "6,7,8", bench_replay_figures, false },
    { "figure 9 (a chain on one queue)", "9", bench_chain_1q, false },
    { "figure 10 (a chain over two queues)", "10", bench_chain_2q, false },
    { "figure 17 (a chain over two accel devices on one GPU)", "17", bench_chain_devices, false },
    { "figure 11 (host set -> GPU wait -> done)", "11", bench_host_set, false },
    { "figure 12 (a pipeline behind a host gate)", "12", bench_gated_pipeline, false },
    { "figure 13 (indirect exec)", "13", bench_indirect, false },
    { "figure 16 (queue-ordered memory)", "16", bench_qmem_figure, false },
    { "figure 14 (kernel -> native step -> kernel)", "14", bench_native_chain, true },
    { "figure 15 (cuBLAS SGEMM chain in queue order)", "15", bench_cublas_chain, true },
    { "figure 18 (the host cost of one driver call)", "18", bench_call_costs, false },
};
/* Does the comma-separated list `pick` (NULL: every figure) name one of `ids`? */
static bool bench_picked(const char* pick, const char* ids) {
    char want[64], have[32];
    if (!pick) return true;
    snprintf(have, sizeof have, ",%s,", ids);
    for (const char* p = pick; *p;) {
        size_t n = strcspn(p, ",");
        if (n > 0 && n < 8) {
            snprintf(want, sizeof want, ",%.*s,", (int)n, p);
            if (strstr(have, want)) return true;
        }
        p += n + (p[n] == ',');
    }
    return false;
}

int main(int argc, char** argv) {
    bench_cuda b;
    accel_device_info info;
    accel_result r;
    bool native_only = false;   /* --native: figures 14-15 only (make gpu-check's native step) */
    const char* pick = NULL;    /* --figures 9,10: those figures only */
    uint64_t start = bench_now_ns();
    memset(&b, 0, sizeof b);
    /* on tests/mock_cuda.c, its "GPU" gets a CPU of its own, as a real one does (the driver ignores it):
       else a stream's thread and the thread feeding it may share a core, and a figure flips between two
       speeds from run to run (MOCK_CUDA_GPU_CPU=0 to see that) */
    setenv("MOCK_CUDA_GPU_CPU", "1", 0);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) b.quick = true;
        else if (strcmp(argv[i], "--native") == 0) native_only = true;
        else if (strcmp(argv[i], "--figures") == 0 && i + 1 < argc) pick = argv[++i];
        else { fprintf(stderr, "usage: %s [--quick] [--native] [--figures N,N,...]\n", argv[0]); return 2; }
    }
    b.rounds = b.quick ? 3 : 15;
    setvbuf(stdout, NULL, _IOLBF, 0);   /* a run cut off by a time limit still shows what it printed */
    r = accel_device_create(&(accel_device_desc){ .backend = accel_cuda_backend(), .label = "bench" }, &b.dev);
    if (r != ACCEL_OK) {
        printf("bench_cuda: no CUDA device (%s; the reason is logged above): nothing to measure\n", accel_result_string(r));
        return 0;
    }
    accel_device_info_get(b.dev, &info);
    bench_counts_init();
    if ((b.q = bench_queue(&b, ACCEL_QUEUE_COMPUTE, &b.workers)) == NULL ||
        !bench_accel_ok(accel_queue_create(b.dev, ACCEL_QUEUE_COPY, &b.copy_q), "copy queue") ||
        !bench_accel_ok(accel_signal_create(b.dev, 0, &b.s), "signal") ||
        !bench_accel_ok(accel_program_create(b.dev, &(accel_program_desc){ .name = "empty", .ptx = bench_empty_ptx }, &b.empty), "program") ||
        !bench_accel_ok(accel_program_create(b.dev, &(accel_program_desc){ .name = "bench_const", .ptx = bench_empty_ptx, .constant_count = 1 },
                                             &b.konst), "program"))
        goto done;
    bench_threads_not_mock(&b.workers, &b.accel_workers);
    /* the raw side: the same driver, the primary context, its own stream and module */
    if (!bench_cu_ok(accel_i_cu.DevicePrimaryCtxRetain(&b.ctx, accel_i_cu_dev(b.dev)->cudev), "cuDevicePrimaryCtxRetain")) goto done;
    accel_i_cu.CtxSetCurrent(b.ctx);
    if (!bench_cu_ok(accel_i_cu.StreamCreate(&b.stream, ACCEL_CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
        !bench_cu_ok(accel_i_cu.ModuleLoadDataEx(&b.module, bench_empty_ptx, 0, NULL, NULL), "cuModuleLoadDataEx") ||
        !bench_cu_ok(accel_i_cu.ModuleGetFunction(&b.fn, b.module, "empty"), "cuModuleGetFunction") ||
        !bench_cu_ok(accel_i_cu.ModuleGetFunction(&b.fn_const, b.module, "bench_const"), "cuModuleGetFunction"))
        goto done;
    bench_cu_resolve_wait_event();
    for (size_t i = 0; i < sizeof bench_steps / sizeof bench_steps[0]; i++) {
        if ((native_only && !bench_steps[i].native) || !bench_picked(pick, bench_steps[i].ids)) continue;
        accel_i_cu.CtxSetCurrent(b.ctx);   /* each step starts with the raw side's context current */
        fprintf(stderr, "bench_cuda: %s\n", bench_steps[i].what);
        bench_steps[i].run(&b);
    }
    {
        char heading[256];
        snprintf(heading, sizeof heading, "accel CUDA backend vs raw driver calls on %s (sm_%u)%s, %.1f s", info.name,
                 info.compute_capability, b.quick ? ", --quick" : "", (double)(bench_now_ns() - start) / 1e9);
        int missed = bench_report(heading);
        bench_counts_print();
        printf("%d target(s) missed, %d verification failure(s)\n", missed, bench_failures());
    }
done:
    if (b.module) accel_i_cu.ModuleUnload(b.module);
    if (b.stream) accel_i_cu.StreamDestroy(b.stream);
    if (b.ctx) accel_i_cu.DevicePrimaryCtxRelease(accel_i_cu_dev(b.dev)->cudev);
    accel_device_destroy(b.dev);
    return bench_failures() ? 1 : 0;
}
