/* pipeline.c — a producer/consumer pipeline: upload chunk i+1 while chunk i is being computed.

   A stream of CHUNKS chunks sits in a HOST (staging) buffer. A COPY queue uploads each chunk into one
   of SLOTS device buffers (a ring); a COMPUTE queue crunches the chunk in that slot and writes its
   result into a big output buffer. Nothing but timeline signal values orders the two queues:

       copy queue, chunk i:     wait computed >= i+1-SLOTS    (the slot's previous chunk is done with it)
                                copy staging[i] -> slot[i % SLOTS]
                                signal uploaded = i+1
       compute queue, chunk i:  wait uploaded >= i+1          (chunk i has arrived)
                                exec crunch(slot[i % SLOTS], out)
                                signal computed = i+1

   So while chunk i is computed, chunks i+1 .. i+SLOTS-1 may already be uploading. On a GPU backend
   both waits are taken by the GPU itself (the value each waits for was already promised by a submitted
   batch of the other queue when the wait is submitted): no host thread wakes between the two queues.
   The example times the uploads alone, the computes alone and the pipeline, RUNS times in a row, and
   prints how much of the shorter stage the pipeline hid: the median over the runs of each run's
   (uploads + computes - pipelined) / shorter stage, so that one noisy run does not decide it. Then it
   checks every output word against the host. (On the CPU backend a copy is work for a CPU thread too,
   so the compute pool gets all cores but one; see main. On a device where the copy and compute queues
   share one hardware queue, such as lavapipe, nothing can overlap: the figure is then noise around 0%.)

   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/pipeline.c -o build/pipeline -lpthread -lm && ./build/pipeline [cpu|any]

   The kernel: examples/crunch.h (crunch_cpu, examples/kernels/crunch.comp in GLSL, crunch_cuda in CUDA C);
   buffers { src slot, out }, constants { chunk index, chunk elements, rounds }. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"
#include "crunch.h"

#include <stdlib.h>

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}
/* The median of v[0..n-1] (sorts v). */
static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define CHUNKS       16u
#define CHUNK_ELEMS  (1u << 18)          /* 1 MiB of uint32 per chunk */
#define SLOTS        3u
#define ROUNDS       4u                  /* hash rounds per element at least: the "work" of the compute
                                            stage. With one round the compute is as memory-bound as the
                                            upload, and on a small machine the two then share memory
                                            bandwidth instead of overlapping */
#define MAX_ROUNDS   4096u               /* main raises the rounds until the computes take about as long
                                            as the uploads (a GPU hashes 4 rounds far faster than it
                                            uploads): "how much of the shorter stage was hidden" is only
                                            a stable figure when the shorter stage is not a sliver of the
                                            run, else the noise of the longer one decides it */
#define GROUP_SIZE   256u
#define RUNS         7                   /* the figures are medians over this many runs */

typedef struct pipeline {
    accel_device* dev;
    accel_queue *copy_q, *compute_q;
    accel_buffer *staging, *slot[SLOTS], *out;
    accel_program* crunch;
    uint32_t rounds;                     /* hash rounds per element, ROUNDS .. MAX_ROUNDS */
} pipeline;

static const size_t chunk_bytes = (size_t)CHUNK_ELEMS * sizeof(uint32_t);

static void record_upload(pipeline* p, uint32_t i) {
    accel_queue_copy(p->copy_q, p->slot[i % SLOTS], 0, p->staging, (size_t)i * chunk_bytes, chunk_bytes);
}

static void record_compute(pipeline* p, uint32_t i) {
    const uint32_t constants[3] = { i, CHUNK_ELEMS, p->rounds };
    accel_queue_exec(p->compute_q, p->crunch, (accel_buffer*[]){ p->slot[i % SLOTS], p->out }, 2,
                     constants, 3, accel_exec_1d(CHUNK_ELEMS, GROUP_SIZE));
}

/* Stage timings without overlap: all uploads on their own, then all computes on their own. */
static accel_result time_stages(pipeline* p, double* upload_s, double* compute_s) {
    accel_result r;
    double t0 = ex_seconds();
    for (uint32_t i = 0; i < CHUNKS; i++) record_upload(p, i);
    if ((r = accel_queue_finish(p->copy_q, ACCEL_WAIT_FOREVER)) != ACCEL_OK) return r;
    double t1 = ex_seconds();
    for (uint32_t i = 0; i < CHUNKS; i++) record_compute(p, i);
    if ((r = accel_queue_finish(p->compute_q, ACCEL_WAIT_FOREVER)) != ACCEL_OK) return r;
    double t2 = ex_seconds();
    *upload_s = t1 - t0;
    *compute_s = t2 - t1;
    return ACCEL_OK;
}

/* The pipeline proper: one batch per chunk on each queue, ordered only by the two signals. */
static accel_result run_pipeline(pipeline* p, double* seconds) {
    accel_signal *uploaded = NULL, *computed = NULL;
    accel_result r;
    if ((r = accel_signal_create(p->dev, 0, &uploaded)) != ACCEL_OK) return r;
    if ((r = accel_signal_create(p->dev, 0, &computed)) != ACCEL_OK) goto out;
    double t0 = ex_seconds();
    for (uint32_t i = 0; i < CHUNKS; i++) {
        if (i >= SLOTS) accel_queue_wait(p->copy_q, computed, i + 1 - SLOTS);
        record_upload(p, i);
        accel_queue_signal(p->copy_q, uploaded, i + 1);
        if ((r = accel_queue_submit(p->copy_q)) != ACCEL_OK) goto out;

        accel_queue_wait(p->compute_q, uploaded, i + 1);
        record_compute(p, i);
        accel_queue_signal(p->compute_q, computed, i + 1);
        if ((r = accel_queue_submit(p->compute_q)) != ACCEL_OK) goto out;
    }
    r = accel_signal_wait(computed, CHUNKS, ACCEL_WAIT_FOREVER);
    *seconds = ex_seconds() - t0;
out:
    accel_signal_destroy(uploaded);
    accel_signal_destroy(computed);
    return r;
}

int main(int argc, char** argv) {
    pipeline p = { 0 };
    accel_device_info info;
    uint32_t* check = malloc(chunk_bytes);
    int exit_code = 1;

    if (!check) { fprintf(stderr, "pipeline: out of host memory\n"); goto done; }
    exit_code = ex_open_device(argc, argv, NULL, &p.dev, &info);
    if (exit_code != 0) goto done;
    exit_code = 1;

    /* On the CPU backend an upload is a memcpy done by the copy queue's own thread: it can only run
       beside the compute if the compute leaves it a core (with every core computing, the copy just
       preempts a compute lane and the pipeline ends up slower than no overlap at all). So take one
       lane off the compute pool; accel_device_info.cpu_threads says how many a default CPU device has
       (it is 0 on GPU backends). A GPU's copy queue needs no such care. */
    uint32_t lanes = info.cpu_threads;
    if (lanes > 1) {
        accel_device_destroy(p.dev);
        p.dev = NULL;
        EX_CHECK(accel_device_create(&(accel_device_desc){ .backend = accel_cpu_backend(), .cpu_threads = lanes - 1,
                                                            .trace_path = ex_trace_path(argc, argv) }, &p.dev));
        EX_CHECK(accel_device_info_get(p.dev, &info));
    }

    EX_CHECK(accel_queue_create(p.dev, ACCEL_QUEUE_COPY, &p.copy_q));
    EX_CHECK(accel_queue_create(p.dev, ACCEL_QUEUE_COMPUTE, &p.compute_q));
    EX_CHECK(accel_buffer_create(p.dev, &(accel_buffer_desc){
        .size = CHUNKS * chunk_bytes, .memory = ACCEL_MEMORY_HOST, .label = "staging" }, &p.staging));
    for (uint32_t s = 0; s < SLOTS; s++)
        EX_CHECK(accel_buffer_create(p.dev, &(accel_buffer_desc){ .size = chunk_bytes, .label = "slot" },
                                     &p.slot[s]));
    EX_CHECK(accel_buffer_create(p.dev, &(accel_buffer_desc){ .size = CHUNKS * chunk_bytes, .label = "out" },
                                 &p.out));
    EX_CHECK(accel_program_create(p.dev, &(accel_program_desc){
        .name = "crunch", .cpu = crunch_cpu, EX_SPIRV(crunch) .cuda_source = crunch_cuda,
        .buffer_count = 2, .constant_count = 3 }, &p.crunch));

    /* The producer's data: written straight into the host-visible staging buffer. */
    uint32_t* staging = accel_buffer_map(p.staging);
    if (!staging) { fprintf(stderr, "pipeline: the HOST staging buffer cannot be mapped\n"); goto done; }
    for (uint32_t k = 0; k < CHUNKS * CHUNK_ELEMS; k++) staging[k] = ex_hash(k);

    /* Warm up once (first touches of fresh memory are slow everywhere), then RUNS runs, each timing the
       stages alone and then the pipeline, and what the pipeline hid in that run. */
    double upload[RUNS], compute[RUNS], pipelined[RUNS], hid[RUNS], t;
    p.rounds = ROUNDS;
    EX_CHECK(run_pipeline(&p, &t));
    EX_CHECK(time_stages(&p, &upload[0], &compute[0]));   /* then balance the stages (see MAX_ROUNDS) */
    double want_rounds = (double)ROUNDS * upload[0] / compute[0];
    p.rounds = want_rounds >= MAX_ROUNDS ? MAX_ROUNDS : want_rounds > ROUNDS ? (uint32_t)want_rounds : ROUNDS;
    for (int run = 0; run < RUNS; run++) {
        EX_CHECK(time_stages(&p, &upload[run], &compute[run]));
        EX_CHECK(run_pipeline(&p, &pipelined[run]));     /* the last run's output is what gets checked below */
        double shorter = upload[run] < compute[run] ? upload[run] : compute[run];
        double h = (upload[run] + compute[run] - pipelined[run]) / shorter;
        hid[run] = h < 0.0 ? 0.0 : h > 1.0 ? 1.0 : h;
    }

    /* Check every output word against the host. */
    uint64_t checksum = 0, wrong = 0;
    for (uint32_t i = 0; i < CHUNKS; i++) {
        EX_CHECK(accel_buffer_read(p.out, (size_t)i * chunk_bytes, check, chunk_bytes));
        for (uint32_t e = 0; e < CHUNK_ELEMS; e++) {
            uint32_t want = crunch_value(ex_hash(i * CHUNK_ELEMS + e), p.rounds);
            if (check[e] != want && wrong++ == 0)
                fprintf(stderr, "pipeline: chunk %u element %u is %08x, expected %08x\n", i, e, check[e], want);
            checksum = checksum * 31u + check[e];
        }
    }

    double hidden = median(hid, RUNS), lo = hid[0], hi = hid[RUNS - 1];   /* median sorted hid */
    double upload_s = median(upload, RUNS), compute_s = median(compute, RUNS), pipelined_s = median(pipelined, RUNS);
    double serial_s = upload_s + compute_s;
    printf("pipeline: %u chunks of %zu KiB through %u slots, %u hash rounds per element, on %s (%s)%s\n", CHUNKS,
           chunk_bytes >> 10, SLOTS, p.rounds, info.name, info.backend,
           info.separate_copy_queue ? ", copy queue on its own engine"
           : lanes > 1 ? " + the copy queue's own thread" : "");
    printf("pipeline: uploads alone %.2f ms, computes alone %.2f ms, one after the other %.2f ms (medians of %d runs)\n",
           upload_s * 1e3, compute_s * 1e3, serial_s * 1e3, RUNS);
    printf("pipeline: pipelined %.2f ms: overlap hid %.0f%% of the %s time (median of %d runs; %.0f%% to %.0f%%)\n",
           pipelined_s * 1e3, hidden * 100.0, upload_s < compute_s ? "upload" : "compute", RUNS, lo * 100.0, hi * 100.0);
    double shorter_s = upload_s < compute_s ? upload_s : compute_s;
    if (shorter_s < 0.1 * serial_s)
        printf("pipeline: (the %s is %.0f%% of the serial time: the overlap figure is within the timing noise here)\n",
               upload_s < compute_s ? "upload" : "compute", 100.0 * shorter_s / serial_s);
#if defined(ACCEL_NO_THREADS)
    printf("pipeline: (no-threads build: each batch runs inside its submit, so nothing can overlap)\n");
#endif
    printf("pipeline: checksum %016llx, %llu of %u words wrong, %s\n", (unsigned long long)checksum,
           (unsigned long long)wrong, CHUNKS * CHUNK_ELEMS, wrong ? "WRONG" : "OK");
    exit_code = wrong ? 1 : 0;

done:
    accel_device_destroy(p.dev);     /* waits for both queues, then releases everything on the device */
    free(check);
    return exit_code;
}
