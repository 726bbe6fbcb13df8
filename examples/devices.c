/* devices.c — two devices in one program: a producer on one, a consumer on the other, data moved by
   peer copies (accel_queue_copy with a buffer of the other device), ordered by timeline signals.

       producer (device P), step i:  wait copied >= i-1           (the consumer took slot i%2 before)
                                     exec crunch(src -> slot[i%2], rounds = i+1)
                                     signal produced = i+1
       consumer (device C), step i:  wait produced >= i+1
                                     copy slot[i%2] (P's buffer) -> in[i%2] (C's buffer)   <- a peer copy
                                     signal copied = i+1
                                     exec crunch(in[i%2] -> results chunk i, rounds = 2)
       at the end, on C:             copy results -> P's `back` buffer                     <- and back

   The program prints which copies were direct (no staging through a host buffer) and which waits ran
   on the device (no host thread gating them: accel_device_peer_info), then checks every word of the
   results, and of the copy back, against the host's own computation.

   Usage:  ./build/devices [P [C]] [--trace FILE]     P, C: cpu | vulkan | cuda | any
   Default: P cpu; C vulkan where this binary has Vulkan and a device opens (make run-vulkan builds
   it so), else a second CPU device. Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/devices.c -o build/devices -lpthread -lm && ./build/devices [cpu|any]

   The kernel is examples/crunch.h's (CPU, GLSL, CUDA C): out[chunk*n + i] = rounds x hash(src[i]). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"
#include "crunch.h"

#include <stdlib.h>

#define STEPS  8u
#define N      (1u << 16)                /* elements per step: 256 KiB */
#define GROUP  256u

/* One side: a device, a queue, the crunch program. */
typedef struct side {
    accel_device* dev;
    accel_device_info info;
    accel_queue* q;
    accel_program* crunch;
} side;

static accel_result side_setup(side* s) {
    accel_result r = accel_queue_create(s->dev, ACCEL_QUEUE_COMPUTE, &s->q);
    if (r != ACCEL_OK) return r;
    return accel_program_create(s->dev, &(accel_program_desc){
        .name = "crunch", .cpu = crunch_cpu, EX_SPIRV(crunch) .cuda_source = crunch_cuda,
        .buffer_count = 2, .constant_count = 3 }, &s->crunch);
}
static void crunch(side* s, accel_buffer* src, accel_buffer* out, uint32_t chunk, uint32_t rounds) {
    const uint32_t constants[3] = { chunk, N, rounds };
    accel_queue_exec(s->q, s->crunch, (accel_buffer*[]){ src, out }, 2, constants, 3,
                     accel_exec_1d(N, GROUP));
}

/* The consumer's device: `want` (NULL: the default, see the top) with the producer's trace path. */
static int open_consumer(int argc, char** argv, const char* want, const char* producer, side* c) {
    char* args[4] = { argv[0], NULL, NULL, NULL };
    int n = 1;
    const char* trace = ex_trace_path(argc, argv);
#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
    if (!want && strcmp(producer, "vulkan") != 0) {   /* the default: Vulkan where it opens */
        accel_device_desc d = { .backend = accel_vulkan_backend(), .trace_path = trace };
        if (accel_device_create(&d, &c->dev) == ACCEL_OK)
            return accel_device_info_get(c->dev, &c->info) == ACCEL_OK ? 0 : 1;
        printf("no Vulkan device: the consumer is a second CPU device\n");
    }
#endif
    (void)producer;
    args[n++] = (char*)(want ? want : "cpu");
    if (trace) { args[n++] = (char*)"--trace"; args[n++] = (char*)trace; }
    return ex_open_device(n, args, NULL, &c->dev, &c->info);
}

/* Splits the arguments: up to two backend names, and --trace FILE (passed on to both devices). */
static int parse(int argc, char** argv, const char** p, const char** c) {
    *p = *c = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trace")) { if (++i == argc) return 0; }
        else if (!*p) *p = argv[i];
        else if (!*c) *c = argv[i];
        else return 0;
    }
    return 1;
}

static void print_paths(const side* from, const side* to, const char* what) {
    accel_peer_info pi;
    if (accel_device_peer_info(to->dev, from->dev, &pi) != ACCEL_OK) return;
    printf("  %-34s copies %s, waits %s\n", what, pi.direct_copy ? "direct" : "staged through host memory",
           pi.device_waits ? "on the device" : "gated on the host");
}

int main(int argc, char** argv) {
    side p = { 0 }, c = { 0 };
    accel_buffer *src = NULL, *slot[2] = { NULL, NULL }, *in[2] = { NULL, NULL };
    accel_buffer *results = NULL, *back = NULL;
    accel_signal *produced = NULL, *copied = NULL, *done_sig = NULL;
    const char *pw, *cw;
    char* pargs[4] = { argv[0], NULL, NULL, NULL };
    int pn = 1, rc = 1;
    uint32_t* host = NULL;
    size_t bytes = (size_t)N * 4u;

    if (!parse(argc, argv, &pw, &cw)) {
        fprintf(stderr, "usage: %s [P [C]] [--trace FILE]   (P, C: cpu | vulkan | cuda | any)\n", argv[0]);
        return 2;
    }
    pargs[pn++] = (char*)(pw ? pw : "cpu");
    if (ex_trace_path(argc, argv)) {
        pargs[pn++] = (char*)"--trace";
        pargs[pn++] = (char*)ex_trace_path(argc, argv);
    }
    if ((rc = ex_open_device(pn, pargs, NULL, &p.dev, &p.info)) != 0) return rc;
    if ((rc = open_consumer(argc, argv, cw, pargs[1], &c)) != 0) { accel_device_destroy(p.dev); return rc; }
    rc = 1;
    printf("producer: %s (%s)\n", p.info.name, p.info.backend);
    printf("consumer: %s (%s)\n", c.info.name, c.info.backend);
    print_paths(&p, &c, "consumer queue with producer data:");
    print_paths(&c, &p, "producer queue with consumer data:");

    EX_CHECK(side_setup(&p));
    EX_CHECK(side_setup(&c));
    EX_CHECK(accel_buffer_create(p.dev, &(accel_buffer_desc){ .size = bytes, .label = "src" }, &src));
    for (int k = 0; k < 2; k++) {
        EX_CHECK(accel_buffer_create(p.dev, &(accel_buffer_desc){ .size = bytes, .label = "slot" },
                                     &slot[k]));
        EX_CHECK(accel_buffer_create(c.dev, &(accel_buffer_desc){ .size = bytes, .label = "in" }, &in[k]));
    }
    EX_CHECK(accel_buffer_create(c.dev, &(accel_buffer_desc){ .size = bytes * STEPS, .label = "results" },
                                 &results));
    EX_CHECK(accel_buffer_create(p.dev, &(accel_buffer_desc){ .size = bytes * STEPS, .label = "back" },
                                 &back));
    EX_CHECK(accel_signal_create(p.dev, 0, &produced));
    EX_CHECK(accel_signal_create(c.dev, 0, &copied));
    EX_CHECK(accel_signal_create(c.dev, 0, &done_sig));
    if ((host = (uint32_t*)malloc(bytes * STEPS)) == NULL) {
        fprintf(stderr, "devices: out of memory\n");
        goto done;
    }
    for (uint32_t k = 0; k < N; k++) host[k] = ex_hash(k ^ 0x5eed);
    EX_CHECK(accel_buffer_write(src, 0, host, bytes));

    for (uint32_t i = 0; i < STEPS; i++) {
        if (i >= 2) accel_queue_wait(p.q, copied, i - 1);          /* slot i%2 is free again */
        crunch(&p, src, slot[i % 2], 0, i + 1);
        accel_queue_signal(p.q, produced, i + 1);
        EX_CHECK(accel_queue_submit(p.q));

        accel_queue_wait(c.q, produced, i + 1);
        accel_queue_copy(c.q, in[i % 2], 0, slot[i % 2], 0, bytes);  /* the peer copy: P's buffer -> C's */
        accel_queue_signal(c.q, copied, i + 1);
        crunch(&c, in[i % 2], results, i, 2);
        EX_CHECK(accel_queue_submit(c.q));
    }
    accel_queue_copy(c.q, back, 0, results, 0, bytes * STEPS);       /* and back: C's buffer -> P's */
    accel_queue_signal(c.q, done_sig, 1);
    EX_CHECK(accel_queue_submit(c.q));
    EX_CHECK(accel_signal_wait(done_sig, 1, ACCEL_WAIT_FOREVER));

    {   /* check: the host computes what both devices did */
        uint32_t* got = (uint32_t*)malloc(bytes * STEPS);
        size_t bad = 0;
        for (uint32_t i = 0; i < STEPS; i++)
            for (uint32_t k = 0; k < N; k++)
                host[(size_t)i * N + k] = crunch_value(crunch_value(ex_hash(k ^ 0x5eed), i + 1), 2);
        if (!got) { fprintf(stderr, "devices: out of memory\n"); goto done; }
        EX_CHECK(accel_buffer_read(back, 0, got, bytes * STEPS));
        for (size_t k = 0; k < (size_t)N * STEPS; k++) bad += got[k] != host[k];
        free(got);
        printf("%u steps of %u words, produced on %s, consumed on %s, copied back: %s\n", STEPS, N,
               p.info.backend, c.info.backend, bad ? "WRONG" : "OK");
        if (bad) { fprintf(stderr, "devices: %zu wrong words\n", bad); goto done; }
    }
    rc = 0;
done:
    free(host);
    accel_device_destroy(c.dev);   /* each destroy waits for its queues and frees what is left on it */
    accel_device_destroy(p.dev);
    return rc;
}
