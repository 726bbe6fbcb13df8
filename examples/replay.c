/* replay.c — a decoder-style loop, recorded anew every step vs recorded once and replayed.

   A decoder (a language model producing tokens, a codec producing frames) runs the same few kernels
   every step; only a step counter and which slot of a ring of state buffers it reads and writes
   change. Here one step s is three kernels on a ring of RING state buffers of N words:

       exec mix(ring[(s-1) % RING] -> ring[s % RING], step = s)     dst[i] = hash(src[i] ^ s*K ^ i)
       exec scale(ring[s % RING], weights)                          buf[i] = buf[i] * 3 + w[i]
       exec reduce(ring[s % RING] -> tokens[s], step = s)           tokens[s] += sum of buf
       signal(step_done, s + 1); submit
   and then either the host waits for the step (it needs each token, as a sampler would: the round
   trip through the device dominates), or it goes on at once and submits every BURST steps (steps
   back to back: the cost of recording, validating and running the commands shows).

   Run "anew" records the three execs every step: each is validated, its objects retained, its
   native form built. Run "replay" records them once between accel_queue_record_begin and
   accel_queue_record_end, then replays the list every step with six patches (accel_patch): the step
   constant of mix and reduce, and the ring slots of all three. Both start from the same state; their
   tokens must equal each other and the host's own computation. It prints steps/s of both, both ways.

   Build and run (from the repository root):
     mkdir -p build && cc -std=c11 -O2 -I. examples/replay.c -o build/replay -lpthread -lm && ./build/replay [cpu|vulkan|cuda|any]

   The kernels: decode_*_cpu below, examples/kernels/decode_*.comp (GLSL), decode_cuda below (CUDA C). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static const uint32_t ex_decode_mix_spv[] =
#include "decode_mix.spv.inc"
;
static const uint32_t ex_decode_scale_spv[] =
#include "decode_scale.spv.inc"
;
static const uint32_t ex_decode_reduce_spv[] =
#include "decode_reduce.spv.inc"
;
#endif

#include <stdatomic.h>
#include <stdlib.h>

#define RING  4u
#define N     256u       /* words per state buffer: one work group, so the step is all overhead */
#define GROUP 256u
#define STEPS 2000u
#define BURST 100u       /* steps back to back: steps per submit */

static uint32_t mix_value(uint32_t v, uint32_t step, uint32_t i) { return ex_hash(v ^ (step * 0x9E3779B9u) ^ i); }

/* The CPU kernels: one work group per call; items at or past n do nothing. */
static void decode_mix_cpu(const accel_dispatch* d) {
    const uint32_t* src = (const uint32_t*)d->buffers[0];
    uint32_t* dst = (uint32_t*)d->buffers[1];
    uint32_t begin = d->group_id[0] * d->group_size[0], end = begin + d->group_size[0];
    if (end > d->constants[1]) end = d->constants[1];
    for (uint32_t i = begin; i < end; i++) dst[i] = mix_value(src[i], d->constants[0], i);
}
static void decode_scale_cpu(const accel_dispatch* d) {
    uint32_t* buf = (uint32_t*)d->buffers[0];
    const uint32_t* w = (const uint32_t*)d->buffers[1];
    uint32_t begin = d->group_id[0] * d->group_size[0], end = begin + d->group_size[0];
    if (end > d->constants[0]) end = d->constants[0];
    for (uint32_t i = begin; i < end; i++) buf[i] = buf[i] * 3u + w[i];
}
static void decode_reduce_cpu(const accel_dispatch* d) {   /* groups may run at once: add atomically */
    const uint32_t* buf = (const uint32_t*)d->buffers[0];
    _Atomic uint32_t* tokens = (_Atomic uint32_t*)d->buffers[1];
    uint32_t begin = d->group_id[0] * d->group_size[0], end = begin + d->group_size[0], sum = 0;
    if (end > d->constants[1]) end = d->constants[1];
    for (uint32_t i = begin; i < end; i++) sum += buf[i];
    atomic_fetch_add(&tokens[d->constants[0]], sum);
}

static const char decode_cuda[] =
    "__device__ unsigned ex_hash(unsigned x) {\n"
    "    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16; return x;\n"
    "}\n"
    "extern \"C\" __global__ void decode_mix(const unsigned* src, unsigned* dst, unsigned step, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) dst[i] = ex_hash(src[i] ^ (step * 0x9E3779B9u) ^ i);\n"
    "}\n"
    "extern \"C\" __global__ void decode_scale(unsigned* buf, const unsigned* w, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) buf[i] = buf[i] * 3u + w[i];\n"
    "}\n"
    "extern \"C\" __global__ void decode_reduce(const unsigned* buf, unsigned* tokens, unsigned step, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) atomicAdd(&tokens[step], buf[i]);\n"
    "}\n";

typedef struct decoder {
    accel_queue* q;
    accel_signal* step_done;
    uint64_t value;
    accel_program *mix, *scale, *reduce;
    accel_buffer *ring[RING], *weights, *tokens;
} decoder;

static uint32_t prev_slot(uint32_t s) { return (s + RING - 1u) % RING; }

/* The three execs of step s, recorded anew. */
static void record_step(decoder* d, uint32_t s) {
    uint32_t mc[2] = { s, N }, sc[1] = { N };
    accel_queue_exec(d->q, d->mix, (accel_buffer*[]){ d->ring[prev_slot(s)], d->ring[s % RING] }, 2, mc, 2, accel_exec_1d(N, GROUP));
    accel_queue_exec(d->q, d->scale, (accel_buffer*[]){ d->ring[s % RING], d->weights }, 2, sc, 1, accel_exec_1d(N, GROUP));
    accel_queue_exec(d->q, d->reduce, (accel_buffer*[]){ d->ring[s % RING], d->tokens }, 2, mc, 2, accel_exec_1d(N, GROUP));
}

/* Ends step s: with `wait`, submits it and waits for it (the host would sample the token now); else
   submits every BURST steps. */
static accel_result finish_step(decoder* d, uint32_t s, bool wait) {
    accel_result r;
    accel_queue_signal(d->q, d->step_done, ++d->value);
    if (!wait && (s + 1) % BURST != 0 && s + 1 != STEPS) return ACCEL_OK;
    r = accel_queue_submit(d->q);
    return r != ACCEL_OK || !wait ? r : accel_signal_wait(d->step_done, d->value, ACCEL_WAIT_FOREVER);
}

/* The start state: the slot before step 0 holds the "prompt", no tokens yet. */
static accel_result reset(decoder* d, const uint32_t* prompt) {
    uint32_t* zero = (uint32_t*)calloc(STEPS, 4);
    accel_result r = zero ? accel_buffer_write(d->tokens, 0, zero, STEPS * 4) : ACCEL_ERROR_OUT_OF_MEMORY;
    free(zero);
    return r != ACCEL_OK ? r : accel_buffer_write(d->ring[prev_slot(0)], 0, prompt, N * 4);
}

/* STEPS steps; list NULL: recorded anew, else replayed with the step's patches. */
static accel_result run(decoder* d, accel_commands* list, bool wait, double* seconds) {
    double t0 = ex_seconds();
    for (uint32_t s = 0; s < STEPS; s++) {
        accel_result r;
        if (!list) {
            record_step(d, s);
        } else {
            accel_buffer *prev = d->ring[prev_slot(s)], *cur = d->ring[s % RING];
            accel_patch p[6] = {
                { 0, 0, prev, 0 }, { 0, 1, cur, 0 }, { 0, 0, NULL, s },   /* mix: src, dst, step */
                { 1, 0, cur, 0 },                                          /* scale: buf */
                { 2, 0, cur, 0 }, { 2, 0, NULL, s },                       /* reduce: buf, step */
            };
            accel_queue_replay(d->q, list, p, 6);
        }
        if ((r = finish_step(d, s, wait)) != ACCEL_OK) return r;
    }
    if (!wait) {
        accel_result r = accel_signal_wait(d->step_done, d->value, ACCEL_WAIT_FOREVER);
        if (r != ACCEL_OK) return r;
    }
    *seconds = ex_seconds() - t0;
    return ACCEL_OK;
}

/* The host's own decoder: expected[s] for every step. */
static void host_tokens(const uint32_t* prompt, const uint32_t* w, uint32_t* expected) {
    uint32_t state[N];
    memcpy(state, prompt, sizeof state);
    for (uint32_t s = 0; s < STEPS; s++) {
        uint32_t sum = 0;
        for (uint32_t i = 0; i < N; i++) {
            state[i] = mix_value(state[i], s, i) * 3u + w[i];
            sum += state[i];
        }
        expected[s] = sum;
    }
}
static uint32_t count_wrong(accel_buffer* tokens, const uint32_t* expected, uint32_t* got, const char* what) {
    uint32_t wrong = 0;
    if (accel_buffer_read(tokens, 0, got, STEPS * 4) != ACCEL_OK) return STEPS;
    for (uint32_t s = 0; s < STEPS; s++)
        if (got[s] != expected[s] && wrong++ == 0)
            fprintf(stderr, "replay: %s: step %u token %08x, expected %08x\n", what, s, got[s], expected[s]);
    return wrong;
}

int main(int argc, char** argv) {
    accel_device* dev = NULL;
    accel_device_info info;
    decoder d = { 0 };
    accel_commands* list = NULL;
    uint32_t prompt[N], w[N], *expected = malloc(STEPS * 4), *got = malloc(STEPS * 4), wrong = 0;
    double best[2][2] = { { 1e30, 1e30 }, { 1e30, 1e30 } };   /* [waits per step][replayed] */
    const char* way[2] = { "steps back to back", "host waits per step" };
    int exit_code = 1;

    if (!expected || !got) { fprintf(stderr, "replay: out of host memory\n"); goto done; }
    exit_code = ex_open_device(argc, argv, NULL, &dev, &info);
    if (exit_code != 0) goto done;
    exit_code = 1;
    for (uint32_t i = 0; i < N; i++) { prompt[i] = ex_hash(i + 1u); w[i] = ex_hash(i + 7777u) & 0xFFFFu; }
    host_tokens(prompt, w, expected);

    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &d.q));
    EX_CHECK(accel_signal_create(dev, 0, &d.step_done));
    for (uint32_t i = 0; i < RING; i++)
        EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N * 4, .label = "state" }, &d.ring[i]));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N * 4, .label = "weights" }, &d.weights));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = STEPS * 4, .memory = ACCEL_MEMORY_HOST, .label = "tokens" },
                                 &d.tokens));
    EX_CHECK(accel_buffer_write(d.weights, 0, w, sizeof w));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){ .name = "decode_mix", .cpu = decode_mix_cpu, EX_SPIRV(decode_mix)
                                  .cuda_source = decode_cuda, .buffer_count = 2, .constant_count = 2 }, &d.mix));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){ .name = "decode_scale", .cpu = decode_scale_cpu, EX_SPIRV(decode_scale)
                                  .cuda_source = decode_cuda, .buffer_count = 2, .constant_count = 1 }, &d.scale));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){ .name = "decode_reduce", .cpu = decode_reduce_cpu, EX_SPIRV(decode_reduce)
                                  .cuda_source = decode_cuda, .buffer_count = 2, .constant_count = 2 }, &d.reduce));

    /* Record one step once (step 0's constants and slots); replays patch them. */
    EX_CHECK(accel_queue_record_begin(d.q));
    record_step(&d, 0);
    EX_CHECK(accel_queue_record_end(d.q, &list));

    for (int round = 0; round < 3; round++) {   /* alternate, keep each side's best: the machine may be busy */
        for (int wait = 0; wait < 2; wait++) {
            for (int replayed = 0; replayed < 2; replayed++) {
                double t;
                EX_CHECK(reset(&d, prompt));
                EX_CHECK(run(&d, replayed ? list : NULL, wait != 0, &t));
                wrong += count_wrong(d.tokens, expected, got, replayed ? "replayed" : "recorded anew");
                if (t < best[wait][replayed]) best[wait][replayed] = t;
            }
        }
    }
    printf("replay: a decoder loop of %u steps, 3 kernels of %u items per step, on %s (%s)\n", STEPS, N, info.name, info.backend);
    for (int wait = 0; wait < 2; wait++)
        printf("replay: %-20s recorded anew %8.0f steps/s, replayed %8.0f steps/s (%.2fx)\n", way[wait],
               STEPS / best[wait][0], STEPS / best[wait][1], best[wait][0] / best[wait][1]);
    printf("replay: (each the best of 3 alternating runs; on a busy or virtual machine the ratio still moves by tens of %%)\n");
    printf("replay: 6 patches per replayed step (2 step constants, 4 ring slots); %u of %u tokens wrong, %s\n",
           wrong, 12 * STEPS, wrong == 0 ? "OK" : "WRONG");
    exit_code = wrong == 0 ? 0 : 1;

done:
    accel_commands_destroy(list);
    accel_device_destroy(dev);
    free(expected);
    free(got);
    return exit_code;
}
