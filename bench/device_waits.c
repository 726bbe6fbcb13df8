/* bench/device_waits.c — a CUDA queue's wait on a CPU signal (DESIGN 7.2, accel_cuda.h "cuda: CPU
   signals on the GPU") next to the raw program that does the same, in one run. A step is a round trip:
   the host raises a CPU signal to i, a CUDA queue that waits for it signals a CUDA signal i, the host
   waits for that. Rows (median ns per step over RUNS runs of STEPS steps, and wake-ups per step of the
   CUDA queue's worker thread, the voluntary context switches /proc counts):

     1 accel, stream memory operations: the wait on the GPU (cuStreamWaitValue64 on the CPU signal's
       device word; no worker wakes: target 0 per step)
     2 accel, ACCEL_CUDA_NO_MEMOPS=1 (the ring mode): the wait gated on the host by the queue's worker
     3 raw: a pinned, device-mapped word the host writes; the stream waits on it (cuStreamWaitValue64)
       and writes another that the host polls (cuStreamWriteValue64): the floor

   Each step is submitted just before its raise (one step in flight, as a pipeline's next stage would
   be). Rounds run the three rows in turn (who goes first rotates); "paired" is the median over rounds
   of each round's ratio to the raw row. On tests/mock_cuda.c (ACCEL_CUDA_LIBRARY=build/mock/libcuda_mock.so) the "GPU" is a CPU thread,
   so times say what the host paths cost, and the wake-ups are the figure; on a GPU (make gpu-check)
   both are real. Exits 77 without a CUDA device, 1 when a step read a wrong value.

   make bench-device-waits   (BENCH_ARGS=--quick: 3 runs of 200 steps) */
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#define ACCEL_CUDA_IMPLEMENTATION
#include "accel_cuda.h"
#include "bench/bench.h"
#include <sched.h>

static int runs = 7, steps = 2000, failures = 0;

/* One accel run: ns per step, and the worker's wake-ups per step in *wake. */
static double run_accel(accel_device* gpu, accel_device* cpu, double* wake) {
    bench_threads_snapshot before, after;
    bench_threads started = { { 0 }, 0 }, worker;
    accel_queue* q = NULL;
    accel_signal *in = NULL, *out = NULL;
    double ns = -1;
    bench_threads_started(&before, NULL, NULL);
    if (accel_queue_create(gpu, ACCEL_QUEUE_COMPUTE, &q) == ACCEL_OK &&
        accel_signal_create(cpu, 0, &in) == ACCEL_OK && accel_signal_create(gpu, 0, &out) == ACCEL_OK) {
        uint64_t w0, t0;
        bench_threads_started(&after, &before, &started);
        bench_threads_not_mock(&started, &worker);   /* the queue's worker */
        w0 = bench_threads_wakeups(&worker);
        t0 = bench_now_ns();
        for (int i = 1; i <= steps; i++) {
            accel_queue_wait(q, in, (uint64_t)i);
            accel_queue_signal(q, out, (uint64_t)i);
            if (accel_queue_submit(q) != ACCEL_OK || accel_signal_set(in, (uint64_t)i) != ACCEL_OK ||
                accel_signal_wait(out, (uint64_t)i, ACCEL_WAIT_FOREVER) != ACCEL_OK ||
                accel_signal_value(out) != (uint64_t)i) {
                failures++;
                break;
            }
        }
        ns = (double)(bench_now_ns() - t0) / steps;
        *wake = worker.count ? (double)(bench_threads_wakeups(&worker) - w0) / steps : -1;
        accel_queue_finish(q, ACCEL_WAIT_FOREVER);
    }
    accel_queue_destroy(q);
    accel_signal_destroy(in);
    accel_signal_destroy(out);
    return ns;
}
/* The raw program on gpu's context: ns per step. */
static double run_raw(accel_device* gpu) {
    void* mem = NULL;
    accel_cu_deviceptr d = 0;
    accel_cu_stream st = NULL;
    double ns = -1;
    unsigned flags = ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP;
    accel_i_cu.CtxSetCurrent((accel_cu_context)accel_cuda_device_context(gpu));
    if (accel_i_cu.MemHostAlloc(&mem, 128, flags) == ACCEL_CU_SUCCESS &&
        accel_i_cu.MemHostGetDevicePointer(&d, mem, 0) == ACCEL_CU_SUCCESS &&
        accel_i_cu.StreamCreate(&st, ACCEL_CU_STREAM_NON_BLOCKING) == ACCEL_CU_SUCCESS) {
        _Atomic uint64_t* in = (_Atomic uint64_t*)mem;
        _Atomic uint64_t* out = in + 8;   /* another cache line */
        uint64_t t0;
        atomic_store(in, 0);
        atomic_store(out, 0);
        t0 = bench_now_ns();
        for (int i = 1; i <= steps; i++) {
            if (accel_i_cu.StreamWaitValue64(st, d, (uint64_t)i, ACCEL_CU_STREAM_WAIT_VALUE_GEQ) != 0 ||
                accel_i_cu.StreamWriteValue64(st, d + 64, (uint64_t)i, ACCEL_CU_STREAM_WRITE_VALUE_DEFAULT) !=
                    0) {
                failures++;
                break;
            }
            atomic_store(in, (uint64_t)i);
            /* spins, yielding now and then (the mock's "GPU" is a thread that needs a CPU too) */
            for (uint32_t n = 1; atomic_load(out) < (uint64_t)i; n++)
                if (n % 64u == 0) sched_yield(); else bench_cpu_relax();
        }
        ns = (double)(bench_now_ns() - t0) / steps;
        accel_i_cu.StreamSynchronize(st);
    }
    if (st) accel_i_cu.StreamDestroy(st);
    if (mem) accel_i_cu.MemFreeHost(mem);
    return ns;
}

/* A CUDA device (ring: the ring mode) and a CPU device; 0 when the CUDA one cannot be opened. */
static int open_pair(bool ring, accel_device** gpu, accel_device** cpu) {
    accel_device_desc desc;
    accel_result r;
    memset(&desc, 0, sizeof desc);
    if (ring) setenv("ACCEL_CUDA_NO_MEMOPS", "1", 1); else unsetenv("ACCEL_CUDA_NO_MEMOPS");
    desc.backend = accel_cuda_backend();
    if ((r = accel_device_create(&desc, gpu)) != ACCEL_OK) return 0;
    desc.backend = accel_cpu_backend();
    return accel_device_create(&desc, cpu) == ACCEL_OK;
}

int main(int argc, char** argv) {
    static const char* const names[3] = { "accel, wait on the GPU", "accel, ring mode (host gate)",
                                          "raw cuStreamWaitValue64" };
    accel_device *gpu[2] = { NULL, NULL }, *cpu[2] = { NULL, NULL };
    double t[3][16], w[3][16], ratio[2][16], med[3], wake[3] = { 0, 0, -1 }, paired[2];
    int ok = 1;
    if (argc > 1 && strcmp(argv[1], "--quick") == 0) { runs = 3; steps = 200; }
    /* both pairs first (the ring mode is read at device create), then rounds that run the three rows in
       turn, who goes first rotating, so that a slow spell of a shared machine falls on all of them */
    for (int m = 0; m < 2 && ok; m++) {
        accel_peer_info pi;
        ok = open_pair(m == 1, &gpu[m], &cpu[m]);
        if (ok && accel_device_peer_info(gpu[m], cpu[m], &pi) == ACCEL_OK && pi.device_waits != (m == 0))
            printf("note: row %d: device_waits %d\n", m + 1, (int)pi.device_waits);
    }
    unsetenv("ACCEL_CUDA_NO_MEMOPS");
    if (!ok) {
        for (int m = 0; m < 2; m++) { accel_device_destroy(gpu[m]); accel_device_destroy(cpu[m]); }
        printf("device_waits: no CUDA device\n");
        return 77;
    }
    for (int r = 0; r < runs; r++) {
        for (int k = 0; k < 3; k++) {
            int row = (r + k) % 3;
            w[row][r] = -1;
            t[row][r] = row < 2 ? run_accel(gpu[row], cpu[row], &w[row][r]) : run_raw(gpu[0]);
        }
        for (int row = 0; row < 2; row++) ratio[row][r] = t[row][r] / t[2][r];
    }
    for (int row = 0; row < 3; row++) {
        med[row] = bench_median(t[row], (size_t)runs);
        if (row < 2) wake[row] = bench_median(w[row], (size_t)runs);
        if (row < 2) paired[row] = bench_median(ratio[row], (size_t)runs);
    }
    for (int m = 0; m < 2; m++) { accel_device_destroy(gpu[m]); accel_device_destroy(cpu[m]); }
    printf("%-34s %12s %14s %10s %8s\n", "a CPU signal -> CUDA queue -> host", "ns/step", "worker wakes",
           "vs raw", "paired");
    for (int row = 0; row < 3; row++) {
        double pr = row < 2 ? paired[row] : 1.0;
        printf("%d %-32s %12.0f %14.2f %10.2f %8.2f\n", row + 1, names[row], med[row], wake[row],
               med[row] / med[2], pr);
        printf("BENCH device_waits row=%d ns_per_step=%.0f worker_wakeups_per_step=%.2f vs_raw=%.3f "
               "paired_ratio=%.3f\n", row + 1, med[row], wake[row], med[row] / med[2], pr);
    }
    if (failures) printf("device_waits: %d runs read a wrong value\n", failures);
    return failures ? 1 : 0;
}
