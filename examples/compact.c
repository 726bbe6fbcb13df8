/* compact.c — stream compaction, step after step, where the device decides how much work comes next.

   Each step keeps the items of its input with value % k != 0 (k = 2, 3, 4, 2, ...) and writes them,
   hashed, in their order, to its output, which is the next step's input. How many survive is known
   only on the device, so nothing after the first step is sized by the host:

       count   (indirect on meta[4..6])   part[c] = survivors of chunk c (CHUNK items each)
       scan    (one invocation)           part[c] = first output slot of chunk c (exclusive prefix);
                                          next = { gather groups, 1, 1, survivors,
                                                   next step's count groups, 1, 1, this step's n }
       gather  (indirect on next[0..2])   one invocation per survivor j: dst[j] = hash(src[i] + step)

   meta is the step's input description (item count meta[3]); the first one is written by an
   accel_queue_update, every later one by the previous step's scan. The two indirect execs take their
   group counts from those words when they run (accel_queue_exec_indirect, 3 words at an offset).
   Each step's scratch (part: one word a chunk; next: 8 words) comes from accel_queue_alloc and goes
   back with accel_queue_free after the gather, in queue order: the next step's allocs take the same
   memory again with no host wait. Every step is submitted on its own and the host waits once, at the
   end; then it checks the survivor count of every step and the final items, exactly, against a plain
   C loop doing the same compaction.

   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/compact.c -o build/compact -lpthread -lm && ./build/compact [cpu|vulkan|cuda|any]

   The kernels: compact_*_cpu below, examples/kernels/compact_*.comp (GLSL), compact_cuda below (CUDA C;
   the mock CUDA driver of the tests has CPU twins of them). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static const uint32_t ex_compact_count_spv[] =
#include "compact_count.spv.inc"
;
static const uint32_t ex_compact_scan_spv[] =
#include "compact_scan.spv.inc"
;
static const uint32_t ex_compact_gather_spv[] =
#include "compact_gather.spv.inc"
;
#endif

#include <stdlib.h>

#define N      (1u << 16)   /* items of the first step's input */
#define GROUP  64u          /* the group size of the indirect execs */
#define CHUNK  64u          /* items per chunk of the count step */
#define STEPS  8u
#define META_WORDS 8u

static uint32_t step_k(uint32_t step) { return 2u + step % 3u; }
static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1u) / b; }

/* ---- the kernels on the CPU backend: one call per work group; the item count is read from meta ---- */
static void compact_count_cpu(const accel_dispatch* d) {
    const uint32_t* src = (const uint32_t*)d->buffers[0];
    uint32_t* part = (uint32_t*)d->buffers[1];
    const uint32_t* meta = (const uint32_t*)d->buffers[2];
    uint32_t k = d->constants[0], chunk = d->constants[1], n = meta[3], chunks = div_up(n, chunk);
    uint32_t begin = d->group_id[0] * d->group_size[0], end = begin + d->group_size[0];
    for (uint32_t c = begin; c < end && c < chunks; c++) {
        uint32_t count = 0, last = (c + 1u) * chunk < n ? (c + 1u) * chunk : n;
        for (uint32_t i = c * chunk; i < last; i++) count += src[i] % k != 0u;
        part[c] = count;
    }
}

static void compact_scan_cpu(const accel_dispatch* d) {
    uint32_t* part = (uint32_t*)d->buffers[0];
    const uint32_t* meta = (const uint32_t*)d->buffers[1];
    uint32_t* next = (uint32_t*)d->buffers[2];
    uint32_t* survivors = (uint32_t*)d->buffers[3];
    uint32_t step = d->constants[0], group = d->constants[1], chunk = d->constants[2];
    uint32_t n = meta[3], chunks = div_up(n, chunk), sum = 0;
    for (uint32_t c = 0; c < chunks; c++) {
        uint32_t count = part[c];
        part[c] = sum;
        sum += count;
    }
    next[0] = div_up(sum, group); next[1] = 1u; next[2] = 1u;
    next[3] = sum;
    next[4] = div_up(div_up(sum, chunk), group); next[5] = 1u; next[6] = 1u;
    next[7] = n;
    survivors[step] = sum;
}

/* survivor j: the last chunk whose first slot is <= j holds it; walk that chunk to it */
static void compact_gather_cpu(const accel_dispatch* d) {
    uint32_t* dst = (uint32_t*)d->buffers[0];
    const uint32_t* src = (const uint32_t*)d->buffers[1];
    const uint32_t* part = (const uint32_t*)d->buffers[2];
    const uint32_t* next = (const uint32_t*)d->buffers[3];
    uint32_t k = d->constants[0], chunk = d->constants[1], salt = d->constants[2], n = next[7];
    uint32_t begin = d->group_id[0] * d->group_size[0], end = begin + d->group_size[0];
    for (uint32_t j = begin; j < end && j < next[3]; j++) {
        uint32_t lo = 0, hi = div_up(n, chunk) - 1u;
        while (lo < hi) {
            uint32_t mid = (lo + hi + 1u) / 2u;
            if (part[mid] <= j) lo = mid;
            else hi = mid - 1u;
        }
        uint32_t rank = j - part[lo], last = (lo + 1u) * chunk < n ? (lo + 1u) * chunk : n;
        for (uint32_t i = lo * chunk; i < last; i++) {
            if (src[i] % k == 0u) continue;
            if (rank-- == 0u) { dst[j] = ex_hash(src[i] + salt); break; }
        }
    }
}

static const char compact_cuda[] =
    "__device__ unsigned ex_hash(unsigned x) {\n"
    "    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x;\n"
    "}\n"
    "extern \"C\" __global__ void compact_count(const unsigned* src, unsigned* part, const unsigned* meta,\n"
    "                                          unsigned k, unsigned chunk) {\n"
    "    unsigned c = blockIdx.x * blockDim.x + threadIdx.x, n = meta[3], count = 0;\n"
    "    if (c >= (n + chunk - 1) / chunk) return;\n"
    "    unsigned end = min(n, (c + 1) * chunk);\n"
    "    for (unsigned i = c * chunk; i < end; i++) count += src[i] % k != 0;\n"
    "    part[c] = count;\n"
    "}\n"
    "extern \"C\" __global__ void compact_scan(unsigned* part, const unsigned* meta, unsigned* next,\n"
    "                                         unsigned* survivors, unsigned step, unsigned group,\n"
    "                                         unsigned chunk) {\n"
    "    if (blockIdx.x + threadIdx.x != 0) return;\n"
    "    unsigned n = meta[3], chunks = (n + chunk - 1) / chunk, sum = 0;\n"
    "    for (unsigned c = 0; c < chunks; c++) { unsigned count = part[c]; part[c] = sum; sum += count; }\n"
    "    unsigned next_chunks = (sum + chunk - 1) / chunk;\n"
    "    next[0] = (sum + group - 1) / group; next[1] = 1; next[2] = 1; next[3] = sum;\n"
    "    next[4] = (next_chunks + group - 1) / group; next[5] = 1; next[6] = 1; next[7] = n;\n"
    "    survivors[step] = sum;\n"
    "}\n"
    "extern \"C\" __global__ void compact_gather(unsigned* dst, const unsigned* src, const unsigned* part,\n"
    "                                           const unsigned* next, unsigned k, unsigned chunk,\n"
    "                                           unsigned salt) {\n"
    "    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (j >= next[3]) return;\n"
    "    unsigned n = next[7], lo = 0, hi = (n + chunk - 1) / chunk - 1;\n"
    "    while (lo < hi) {\n"
    "        unsigned mid = (lo + hi + 1) / 2;\n"
    "        if (part[mid] <= j) lo = mid; else hi = mid - 1;\n"
    "    }\n"
    "    unsigned rank = j - part[lo], end = min(n, (lo + 1) * chunk);\n"
    "    for (unsigned i = lo * chunk; i < end; i++) {\n"
    "        if (src[i] % k == 0) continue;\n"
    "        if (rank-- == 0) { dst[j] = ex_hash(src[i] + salt); return; }\n"
    "    }\n"
    "}\n";

/* The same steps as a plain C loop: keeps items % k != 0 in order, hashed. Returns the final count. */
static uint32_t reference(uint32_t* items, uint32_t n, uint32_t* survivors) {
    for (uint32_t step = 0; step < STEPS; step++) {
        uint32_t kept = 0;
        for (uint32_t i = 0; i < n; i++)
            if (items[i] % step_k(step) != 0u) items[kept++] = ex_hash(items[i] + step);
        survivors[step] = n = kept;
    }
    return n;
}

typedef struct compactor {
    accel_queue* q;
    accel_program *count, *scan, *gather;
    accel_buffer *data[2], *survivors;
} compactor;

/* Records step `step` reading *meta (the step's item count and count groups) and submits it; *meta
   becomes the step's output description, for the next step. The step's scratch is queue-ordered. */
static accel_result compact_step(compactor* cp, uint32_t step, accel_buffer** meta) {
    static const uint32_t local[3] = { GROUP, 1, 1 };
    accel_buffer *src = cp->data[step % 2u], *dst = cp->data[(step + 1u) % 2u], *part = NULL, *next = NULL;
    uint32_t count_c[2] = { step_k(step), CHUNK }, scan_c[3] = { step, GROUP, CHUNK };
    uint32_t gather_c[3] = { step_k(step), CHUNK, step };
    accel_result r = accel_queue_alloc(cp->q, (size_t)div_up(N, CHUNK) * 4u, ACCEL_MEMORY_DEVICE, &part);
    if (r == ACCEL_OK) r = accel_queue_alloc(cp->q, META_WORDS * 4u, ACCEL_MEMORY_DEVICE, &next);
    if (r != ACCEL_OK) return r;   /* a recording error: the submit below would return it too */
    accel_queue_exec_indirect(cp->q, cp->count, (accel_buffer*[]){ src, part, *meta }, 3, count_c, 2, local,
                              *meta, 16);
    accel_queue_exec(cp->q, cp->scan, (accel_buffer*[]){ part, *meta, next, cp->survivors }, 4, scan_c, 3,
                     accel_exec_1d(1, 1));
    accel_queue_exec_indirect(cp->q, cp->gather, (accel_buffer*[]){ dst, src, part, next }, 4, gather_c, 3,
                              local, next, 0);
    accel_queue_free(cp->q, part);
    accel_queue_free(cp->q, *meta);
    *meta = next;
    return accel_queue_submit(cp->q);
}

int main(int argc, char** argv) {
    accel_device* dev = NULL;
    accel_device_info info;
    accel_signal* done = NULL;
    accel_buffer* meta = NULL;
    compactor cp = { 0 };
    uint32_t* host = malloc((size_t)N * sizeof *host);
    uint32_t* want = malloc((size_t)N * sizeof *want);
    uint32_t got_survivors[STEPS], want_survivors[STEPS];
    int exit_code = 1;

    if (!host || !want) {
        fprintf(stderr, "compact: out of host memory\n");
        goto done;
    }
    exit_code = ex_open_device(argc, argv, NULL, &dev, &info);
    if (exit_code != 0) goto done;
    exit_code = 1;

    for (uint32_t i = 0; i < N; i++) host[i] = want[i] = ex_hash(i);
    uint32_t want_n = reference(want, N, want_survivors);

    for (int b = 0; b < 2; b++)
        EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = (size_t)N * 4u, .label = "data" },
                                     &cp.data[b]));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = STEPS * 4u, .label = "survivors" },
                                 &cp.survivors));
    EX_CHECK(accel_buffer_write(cp.data[0], 0, host, (size_t)N * 4u));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){ .name = "compact_count",
        .cpu = compact_count_cpu, EX_SPIRV(compact_count) .cuda_source = compact_cuda, .buffer_count = 3,
        .constant_count = 2 }, &cp.count));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){ .name = "compact_scan",
        .cpu = compact_scan_cpu, EX_SPIRV(compact_scan) .cuda_source = compact_cuda, .buffer_count = 4,
        .constant_count = 3 }, &cp.scan));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){ .name = "compact_gather",
        .cpu = compact_gather_cpu, EX_SPIRV(compact_gather) .cuda_source = compact_cuda, .buffer_count = 4,
        .constant_count = 3 }, &cp.gather));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &cp.q));
    EX_CHECK(accel_signal_create(dev, 0, &done));

    /* The first step's description, from the host: N items, their chunk groups. */
    const uint32_t first[META_WORDS] = { 0, 1, 1, N, div_up(div_up(N, CHUNK), GROUP), 1, 1, 0 };
    EX_CHECK(accel_queue_alloc(cp.q, META_WORDS * 4u, ACCEL_MEMORY_DEVICE, &meta));
    accel_queue_update(cp.q, meta, 0, first, sizeof first);

    double t0 = ex_seconds();
    for (uint32_t step = 0; step < STEPS; step++) EX_CHECK(compact_step(&cp, step, &meta));
    accel_queue_free(cp.q, meta);   /* the last step's description: its survivors are in cp.survivors */
    meta = NULL;
    accel_queue_signal(cp.q, done, 1);
    EX_CHECK(accel_queue_submit(cp.q));
    EX_CHECK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    double seconds = ex_seconds() - t0;

    EX_CHECK(accel_buffer_read(cp.survivors, 0, got_survivors, sizeof got_survivors));
    uint32_t got_n = got_survivors[STEPS - 1u];
    int ok = !memcmp(got_survivors, want_survivors, sizeof got_survivors);
    if (ok && got_n > 0) {
        EX_CHECK(accel_buffer_read(cp.data[STEPS % 2u], 0, host, (size_t)got_n * 4u));
        ok = !memcmp(host, want, (size_t)got_n * 4u);
    }
    printf("compact: %u steps on %s (%s): count + scan + gather each, the groups of the gather and\n"
           "compact: of the next count decided on the device; scratch from accel_queue_alloc, freed in\n"
           "compact: queue order; no host wait between steps\n", STEPS, info.name, info.backend);
    printf("compact: items %u", N);
    for (uint32_t s = 0; s < STEPS; s++) printf(" -> %u", got_survivors[s]);
    printf(" (keeping %% 2, 3, 4, ... != 0)\n");
    printf("compact: %.3f ms for all steps, %u items left; C reference: %u items: %s\n", seconds * 1e3,
           got_n, want_n, ok ? "OK" : "WRONG");
    for (uint32_t s = 0; !ok && s < STEPS; s++)
        if (got_survivors[s] != want_survivors[s])
            fprintf(stderr, "compact: step %u kept %u items, expected %u\n", s, got_survivors[s],
                    want_survivors[s]);
    for (uint32_t i = 0; !ok && got_n == want_n && i < got_n; i++)
        if (host[i] != want[i]) {
            fprintf(stderr, "compact: item %u is %08x, expected %08x\n", i, host[i], want[i]);
            break;
        }
    exit_code = ok ? 0 : 1;

done:
    /* the device's destroy releases everything still alive, queue-ordered buffers included */
    accel_device_destroy(dev);
    free(host);
    free(want);
    return exit_code;
}
