/* frames.c — an engine-style frame loop with FRAMES_IN_FLIGHT frames in flight.

   Each frame f = 1..FRAMES owns slot f % FRAMES_IN_FLIGHT: a small params buffer (this frame's wind,
   gravity, number) and a HOST stats buffer the simulation kernel writes a summary into. Per frame:

       host:  wait frame_done >= f - FRAMES_IN_FLIGHT   (only then is the slot free again)
              read the slot's stats: the summary of frame f - FRAMES_IN_FLIGHT; check it
              do the host's own frame work (here: a mirror simulation used for checking)
       queue: update params[slot]; fill stats[slot] with 0; exec simulate; signal frame_done = f
              submit (returns at once)

   The host never waits for the frame it has just submitted, only for one FRAMES_IN_FLIGHT frames
   older, so up to FRAMES_IN_FLIGHT frames are queued or running while it prepares the next. The wait
   first polls (timeout 0); the example counts how often the poll said TIMEOUT, i.e. how often the
   host really had to block. At the end the particle state is read back and compared to the host.

   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/frames.c -o build/frames -lpthread -lm && ./build/frames [cpu|any]

   The kernel: simulate_cpu below, examples/kernels/simulate.comp (GLSL), simulate_cuda below (CUDA C);
   buffers { particles, params, stats }, constants { particle count }. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static const uint32_t ex_simulate_spv[] =
#include "simulate.spv.inc"
;
#endif

#include <stdlib.h>

#define FRAMES_IN_FLIGHT 3u
#define FRAMES           300u
#define PARTICLES        (1u << 16)
#define GROUP_SIZE       256u
#define GROUPS           (PARTICLES / GROUP_SIZE)   /* one stats word per work group */
#define WORLD            (1 << 20)                  /* positions live in [0, WORLD) on both axes */
#define MAX_SPEED        4096

typedef struct particle { int32_t x, y, vx, vy; } particle;
typedef struct frame_params { uint32_t frame; int32_t gravity, wind, pad; } frame_params;

/* The frame's inputs: different every frame, so a frame that read another slot's params shows. */
static frame_params params_for(uint32_t frame) {
    frame_params fp = { frame, -3 - (int32_t)(frame % 3u), (int32_t)(ex_hash(frame) % 33u) - 16, 0 };
    return fp;
}

static int32_t clamp_speed(int32_t v) { return v > MAX_SPEED ? MAX_SPEED : v < -MAX_SPEED ? -MAX_SPEED : v; }

/* One particle, one frame: accelerate, move, bounce off the walls. Integer math: exact everywhere. */
static void step(particle* p, const frame_params* fp) {
    p->vx = clamp_speed(p->vx + fp->wind);
    p->vy = clamp_speed(p->vy + fp->gravity);
    p->x += p->vx;
    p->y += p->vy;
    if (p->x < 0) { p->x = -p->x; p->vx = -p->vx; }
    else if (p->x >= WORLD) { p->x = 2 * (WORLD - 1) - p->x; p->vx = -p->vx; }
    if (p->y < 0) { p->y = -p->y; p->vy = -p->vy; }
    else if (p->y >= WORLD) { p->y = 2 * (WORLD - 1) - p->y; p->vy = -p->vy; }
}

/* What the stats summarise: a wrapping sum of this over all particles. */
static uint32_t signature(const particle* p) {
    return (uint32_t)p->x * 7u + (uint32_t)p->y * 13u + (uint32_t)p->vx * 17u + (uint32_t)p->vy * 19u;
}

/* One work group: step its particles, add their signatures into stats[group] (zeroed by a fill). */
static void simulate_cpu(const accel_dispatch* d) {
    particle* particles = (particle*)d->buffers[0];
    const frame_params* fp = (const frame_params*)d->buffers[1];
    uint32_t* stats = (uint32_t*)d->buffers[2];
    uint32_t count = d->constants[0];
    uint32_t begin = d->group_id[0] * d->group_size[0];
    uint32_t end = begin + d->group_size[0];
    uint32_t sum = 0;
    if (end > count) end = count;
    for (uint32_t i = begin; i < end; i++) {
        step(&particles[i], fp);
        sum += signature(&particles[i]);
    }
    stats[d->group_id[0]] += sum;
}

static const char simulate_cuda[] =
    "struct particle { int x, y, vx, vy; };\n"
    "struct frame_params { unsigned frame; int gravity, wind, pad; };\n"
    "#define WORLD (1 << 20)\n"
    "#define MAX_SPEED 4096\n"
    "__device__ int clamp_speed(int v) { return v > MAX_SPEED ? MAX_SPEED : v < -MAX_SPEED ? -MAX_SPEED : v; }\n"
    "extern \"C\" __global__ void simulate(particle* particles, const frame_params* fp, unsigned* stats,\n"
    "                                     unsigned count) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i >= count) return;\n"
    "    particle p = particles[i];\n"
    "    p.vx = clamp_speed(p.vx + fp->wind);\n"
    "    p.vy = clamp_speed(p.vy + fp->gravity);\n"
    "    p.x += p.vx;\n"
    "    p.y += p.vy;\n"
    "    if (p.x < 0) { p.x = -p.x; p.vx = -p.vx; }\n"
    "    else if (p.x >= WORLD) { p.x = 2 * (WORLD - 1) - p.x; p.vx = -p.vx; }\n"
    "    if (p.y < 0) { p.y = -p.y; p.vy = -p.vy; }\n"
    "    else if (p.y >= WORLD) { p.y = 2 * (WORLD - 1) - p.y; p.vy = -p.vy; }\n"
    "    particles[i] = p;\n"
    "    atomicAdd(&stats[blockIdx.x], (unsigned)p.x * 7u + (unsigned)p.y * 13u\n"
    "                                + (unsigned)p.vx * 17u + (unsigned)p.vy * 19u);\n"
    "}\n";

int main(int argc, char** argv) {
    accel_device* dev = NULL;
    accel_device_info info;
    accel_queue* queue = NULL;
    accel_signal* frame_done = NULL;
    accel_buffer *particles = NULL, *params[FRAMES_IN_FLIGHT] = { 0 }, *stats[FRAMES_IN_FLIGHT] = { 0 };
    accel_program* simulate = NULL;
    particle* mirror = malloc(PARTICLES * sizeof(particle));     /* the host's copy, for checking */
    particle* result = malloc(PARTICLES * sizeof(particle));
    uint32_t expected[FRAMES_IN_FLIGHT] = { 0 };                 /* per slot: its frame's summary */
    uint32_t stats_words[GROUPS];
    const uint32_t count = PARTICLES;
    uint32_t blocked = 0, wrong_stats = 0, checked_stats = 0;
    double blocked_s = 0.0;
    int exit_code = 1;

    if (!mirror || !result) { fprintf(stderr, "frames: out of host memory\n"); goto done; }
    exit_code = ex_open_device(argc, argv, NULL, &dev, &info);
    if (exit_code != 0) goto done;
    exit_code = 1;

    for (uint32_t i = 0; i < PARTICLES; i++) {
        mirror[i].x = (int32_t)(ex_hash(i) % (uint32_t)WORLD);
        mirror[i].y = (int32_t)(ex_hash(i + PARTICLES) % (uint32_t)WORLD);
        mirror[i].vx = (int32_t)(ex_hash(i + 2 * PARTICLES) % 2001u) - 1000;
        mirror[i].vy = (int32_t)(ex_hash(i + 3 * PARTICLES) % 2001u) - 1000;
    }
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){
        .size = PARTICLES * sizeof(particle), .label = "particles" }, &particles));
    EX_CHECK(accel_buffer_write(particles, 0, mirror, PARTICLES * sizeof(particle)));
    for (uint32_t s = 0; s < FRAMES_IN_FLIGHT; s++) {
        EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){
            .size = sizeof(frame_params), .label = "params" }, &params[s]));
        EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){
            .size = sizeof stats_words, .memory = ACCEL_MEMORY_HOST, .label = "stats" }, &stats[s]));
    }
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){
        .name = "simulate", .cpu = simulate_cpu, EX_SPIRV(simulate) .cuda_source = simulate_cuda,
        .buffer_count = 3, .constant_count = 1 }, &simulate));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &queue));
    EX_CHECK(accel_signal_create(dev, 0, &frame_done));

    double t0 = ex_seconds();
    for (uint32_t f = 1; f <= FRAMES + FRAMES_IN_FLIGHT; f++) {
        uint32_t slot = f % FRAMES_IN_FLIGHT;

        /* 1. Free the slot: frame f - FRAMES_IN_FLIGHT used it last. Poll first to see whether the
              device is keeping up; block only when it is not. The last FRAMES_IN_FLIGHT rounds only
              drain: they wait for the final frames and record nothing. */
        if (f > FRAMES_IN_FLIGHT) {
            uint64_t old = f - FRAMES_IN_FLIGHT;
            accel_result r = accel_signal_wait(frame_done, old, 0);
            if (r == ACCEL_TIMEOUT) {
                double b0 = ex_seconds();
                if (f <= FRAMES) blocked++;
                r = accel_signal_wait(frame_done, old, ACCEL_WAIT_FOREVER);
                if (f <= FRAMES) blocked_s += ex_seconds() - b0;
            }
            EX_CHECK(r);

            /* 2. Frame `old` is complete: its summary in stats[slot] is final. */
            uint32_t sum = 0;
            EX_CHECK(accel_buffer_read(stats[slot], 0, stats_words, sizeof stats_words));
            for (uint32_t g = 0; g < GROUPS; g++) sum += stats_words[g];
            checked_stats++;
            if (sum != expected[slot] && wrong_stats++ == 0)
                fprintf(stderr, "frames: frame %llu summary %08x, expected %08x\n",
                        (unsigned long long)old, sum, expected[slot]);
        }
        if (f > FRAMES) continue;

        /* 3. The host's own work for frame f: here, the mirror simulation the result is checked with. */
        frame_params fp = params_for(f);
        uint32_t sum = 0;
        for (uint32_t i = 0; i < PARTICLES; i++) {
            step(&mirror[i], &fp);
            sum += signature(&mirror[i]);
        }
        expected[slot] = sum;

        /* 4. Record and submit frame f. accel_queue_update copies fp now and writes it in queue order;
              the stats slot is why the wait above is needed: the host reads it directly. */
        accel_queue_update(queue, params[slot], 0, &fp, sizeof fp);
        accel_queue_fill(queue, stats[slot], 0, sizeof stats_words, 0);
        accel_queue_exec(queue, simulate, (accel_buffer*[]){ particles, params[slot], stats[slot] }, 3,
                         &count, 1, accel_exec_1d(PARTICLES, GROUP_SIZE));
        accel_queue_signal(queue, frame_done, f);
        EX_CHECK(accel_queue_submit(queue));
    }
    double elapsed = ex_seconds() - t0;

    /* The final state, against the host's mirror. */
    EX_CHECK(accel_buffer_read(particles, 0, result, PARTICLES * sizeof(particle)));
    uint32_t wrong_particles = 0;
    for (uint32_t i = 0; i < PARTICLES; i++) {
        const particle *a = &result[i], *b = &mirror[i];
        if ((a->x != b->x || a->y != b->y || a->vx != b->vx || a->vy != b->vy) && wrong_particles++ == 0)
            fprintf(stderr, "frames: particle %u is (%d,%d v %d,%d), expected (%d,%d v %d,%d)\n", i,
                    (int)a->x, (int)a->y, (int)a->vx, (int)a->vy, (int)b->x, (int)b->y, (int)b->vx, (int)b->vy);
    }

    int ok = wrong_stats == 0 && wrong_particles == 0 && checked_stats == FRAMES &&
             accel_signal_value(frame_done) == FRAMES;
    printf("frames: %u frames of %u particles, %u in flight, on %s (%s)\n", FRAMES, PARTICLES,
           FRAMES_IN_FLIGHT, info.name, info.backend);
    printf("frames: %.1f ms in all (%.0f frames/s); the host blocked on %u of %u frames (%.1f ms in all), "
           "never on the frame it had just submitted\n",
           elapsed * 1e3, FRAMES / elapsed, blocked, FRAMES, blocked_s * 1e3);
    printf("frames: %u/%u frame summaries right, %u of %u particles wrong at the end, %s\n",
           checked_stats - wrong_stats, FRAMES, wrong_particles, PARTICLES, ok ? "OK" : "WRONG");
    exit_code = ok ? 0 : 1;

done:
    accel_device_destroy(dev);     /* waits for the queue, then releases everything on the device */
    free(mirror);
    free(result);
    return exit_code;
}
