/* saxpy.c — the accel quick start: y = a*x + y over a million floats, timed warm, best of RUNS.

   One device, two buffers, one kernel, one queue, one signal:
     write x and y -> record exec + signal -> submit -> wait on the signal -> read y back -> check it.
   The exec runs 1 + RUNS times (one warm-up, then RUNS timed runs, signal values 1 .. 1+RUNS); the
   best time and its bandwidth (3 floats moved per element: read x, read y, write y) are printed.

   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/saxpy.c -o build/saxpy -lpthread -lm && ./build/saxpy [cpu|any]
   It needs accel.h and examples/common.h (backend argument, EX_CHECK, a clock): copy both with it.
   With the CUDA backend: add -DACCEL_EXAMPLE_HAVE_CUDA -ldl and run `./build/saxpy cuda`; with Vulkan
   see `make run-vulkan` (the GLSL kernel is compiled by glslc into build/examples/kernels/).

   The kernel exists three times, once per program format a backend may run:
     - saxpy_cpu below (CPU backend: one call per work group),
     - examples/kernels/saxpy.comp (GLSL -> SPIR-V for Vulkan: set 0, bindings 0..1, push constants),
     - saxpy_cuda below (CUDA C, compiled at run time with NVRTC by the CUDA backend).
   All three take the same arguments: buffers { y, x }, constants { bits of a, n }. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static const uint32_t ex_saxpy_spv[] =
#include "saxpy.spv.inc"
;
#endif

#include <math.h>
#include <stdlib.h>

#define N_ELEMENTS (1u << 20)
#define GROUP_SIZE 256u
#define RUNS       5u      /* timed runs after one warm-up */

/* One work group: items group_id*group_size .. +group_size, skipping those past global_size. */
static void saxpy_cpu(const accel_dispatch* d) {
    float* y = (float*)d->buffers[0];
    const float* x = (const float*)d->buffers[1];
    float a;
    memcpy(&a, &d->constants[0], sizeof a);                 /* a travels as the bits of a float */
    uint32_t n = d->constants[1];
    uint32_t begin = d->group_id[0] * d->group_size[0];
    uint32_t end = begin + d->group_size[0];
    if (end > n) end = n;
    for (uint32_t i = begin; i < end; i++) y[i] = a * x[i] + y[i];
}

static const char saxpy_cuda[] =
    "extern \"C\" __global__ void saxpy(float* y, const float* x, unsigned a_bits, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = __uint_as_float(a_bits) * x[i] + y[i];\n"
    "}\n";

int main(int argc, char** argv) {
    accel_device* dev = NULL;
    accel_device_info info;
    accel_buffer *x = NULL, *y = NULL;
    accel_program* prog = NULL;
    accel_queue* queue = NULL;
    accel_signal* done = NULL;
    const size_t bytes = (size_t)N_ELEMENTS * sizeof(float);
    float* host_x = malloc(bytes);
    float* host_y = malloc(bytes);
    float* result = malloc(bytes);
    const float a = 2.5f;
    uint32_t constants[2];
    int exit_code = 1;

    if (!host_x || !host_y || !result) {
        fprintf(stderr, "saxpy: out of host memory\n");
        goto done;
    }
    exit_code = ex_open_device(argc, argv, NULL, &dev, &info);
    if (exit_code != 0) goto done;
    exit_code = 1;

    for (uint32_t i = 0; i < N_ELEMENTS; i++) {
        host_x[i] = (float)(i % 1000u) * 0.5f;
        host_y[i] = (float)(i % 77u) - 10.0f;
    }
    memcpy(&constants[0], &a, sizeof a);
    constants[1] = N_ELEMENTS;

    /* 1. Buffers on the device, filled from the host (blocking writes). */
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = bytes, .label = "x" }, &x));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = bytes, .label = "y" }, &y));
    EX_CHECK(accel_buffer_write(x, 0, host_x, bytes));
    EX_CHECK(accel_buffer_write(y, 0, host_y, bytes));

    /* 2. The kernel, in every format we have; the device picks the one it runs. */
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){
        .name = "saxpy", .cpu = saxpy_cpu, EX_SPIRV(saxpy) .cuda_source = saxpy_cuda,
        .buffer_count = 2, .constant_count = 2 }, &prog));

    /* 3. Record, submit (returns at once), wait on the signal the batch raises at its end. */
    EX_CHECK(accel_signal_create(dev, 0, &done));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &queue));
    double best = 1e30, cold = 0.0;
    for (uint32_t run = 1; run <= 1 + RUNS; run++) {
        double t0 = ex_seconds();
        accel_queue_exec(queue, prog, (accel_buffer*[]){ y, x }, 2, constants, 2,
                         accel_exec_1d(N_ELEMENTS, GROUP_SIZE));
        accel_queue_signal(queue, done, run);
        EX_CHECK(accel_queue_submit(queue));
        EX_CHECK(accel_signal_wait(done, run, ACCEL_WAIT_FOREVER));
        double t = ex_seconds() - t0;
        if (run == 1) cold = t;
        else if (t < best) best = t;
    }

    /* 4. Read back and check every element against the same computation on the host (applied as
          many times as the device ran it). */
    EX_CHECK(accel_buffer_read(y, 0, result, bytes));
    double max_error = 0.0;
    uint32_t worst = 0;
    for (uint32_t i = 0; i < N_ELEMENTS; i++) {
        float want = host_y[i];
        for (uint32_t run = 0; run < 1 + RUNS; run++) want = a * host_x[i] + want;
        host_y[i] = want;
        double err = fabs((double)result[i] - (double)want) / fmax(1.0, fabs((double)want));
        if (!(err <= max_error)) { max_error = err; worst = i; }   /* NaN counts as worst */
    }
    /* The CPU backend computes exactly what the host does; a GPU may fuse a*x+y into one rounding. */
    const double tolerance = 1e-5;
    int ok = max_error <= tolerance;
    printf("saxpy: y = %.1f*x + y on %s (%s)\n", (double)a, info.name, info.backend);
    printf("saxpy: %u elements, best of %u warm runs %.3f ms = %.1f GB/s (first run %.3f ms; submit to "
           "signal), max relative error %g, %s\n", N_ELEMENTS, RUNS, best * 1e3,
           3.0 * (double)bytes / best * 1e-9, cold * 1e3, max_error, ok ? "OK" : "WRONG");
    if (!ok)
        fprintf(stderr, "saxpy: y[%u] = %.9g, expected %.9g\n", worst, (double)result[worst],
                (double)host_y[worst]);
    exit_code = ok ? 0 : 1;

done:
    /* Destroying each object is good manners; accel_device_destroy alone would release them too. */
    accel_queue_destroy(queue);
    accel_signal_destroy(done);
    accel_program_destroy(prog);
    accel_buffer_destroy(x);
    accel_buffer_destroy(y);
    accel_device_destroy(dev);
    free(host_x);
    free(host_y);
    free(result);
    return exit_code;
}
