/* failure.c — when something goes wrong: a failed signal flowing down a pipeline, and what a device
   created with `.debug = true` tells you about waits that cannot end.

   1. A two-stage pipeline on two queues, ordered only by signals:
          host "loader" --input--> queue 'decode' (saxpy) --decoded--> queue 'render' (saxpy) --rendered-->
      The loader cannot deliver and calls accel_signal_fail(input, ACCEL_ERROR_UNAVAILABLE). Nothing
      else is needed: 'decode' fails `decoded`, 'render' fails `rendered`, every host wait returns
      ACCEL_ERROR_SIGNAL_FAILED, and the failed value carries the reason:
      reason = -(int)(value - ACCEL_SIGNAL_MAX - 1).
   2. The forgotten submit: a queue records `signal(done, 1)` but nobody calls accel_queue_submit. A
      host wait on a debug device reports it at once, naming the queue.
   3. A wait that times out on a debug device logs which queue is blocked on which (signal, value).
   Labels (accel_queue_set_label, accel_signal_set_label) name everything in these reports. The
   example's logger prints what the library logs, prefixed "  log: ", so you can read it below.

   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/failure.c -o build/failure -lpthread -lm && ./build/failure [cpu|any]

   The kernel is saxpy (examples/saxpy.c; examples/kernels/saxpy.comp for Vulkan). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
static const uint32_t ex_saxpy_spv[] =
#include "saxpy.spv.inc"
;
#endif

#define N 4096u

static void saxpy_cpu(const accel_dispatch* d) {
    float* y = (float*)d->buffers[0];
    const float* x = (const float*)d->buffers[1];
    float a;
    memcpy(&a, &d->constants[0], sizeof a);
    uint32_t end = d->group_id[0] * d->group_size[0] + d->group_size[0];
    if (end > d->constants[1]) end = d->constants[1];
    for (uint32_t i = d->group_id[0] * d->group_size[0]; i < end; i++) y[i] = a * x[i] + y[i];
}
static const char saxpy_cuda[] =
    "extern \"C\" __global__ void saxpy(float* y, const float* x, unsigned a_bits, unsigned n) {\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = __uint_as_float(a_bits) * x[i] + y[i];\n"
    "}\n";

/* The logger: everything the library says (errors, warnings, info) goes to stdout; the example
   counts the lines and looks for the forgotten-submit report it promises. */
static int log_lines, saw_forgotten_submit;
static void print_log(accel_log_level level, const char* message, void* user) {
    static const char* const names[] = { "error", "warning", "info", "debug" };
    (void)user;
    printf("  log: %s: %s\n", (unsigned)level < 4 ? names[level] : "?", message);
    if (strstr(message, "'decode' holds an unsubmitted accel_queue_signal(1)")) saw_forgotten_submit = 1;
    log_lines++;
}

/* The failed value of a signal, decoded back into the reason it was failed with. */
static accel_result failure_reason(const accel_signal* s) {
    uint64_t v = accel_signal_value(s);
    return v > ACCEL_SIGNAL_MAX ? (accel_result)-(int)(v - ACCEL_SIGNAL_MAX - 1) : ACCEL_OK;
}

int main(int argc, char** argv) {
    accel_device* dev = NULL;
    accel_device_info info;
    accel_buffer *x = NULL, *y = NULL, *z = NULL;
    accel_program* prog = NULL;
    accel_queue *decode = NULL, *render = NULL;
    accel_signal *input = NULL, *decoded = NULL, *rendered = NULL, *done = NULL;
    const float a = 2.0f;
    uint32_t constants[2];
    int exit_code;
    int ok = 1;

    exit_code = ex_open_device(argc, argv, &(accel_device_desc){
        .debug = true, .logger = { .log_fn = print_log } }, &dev, &info);
    if (exit_code != 0) goto done;
    exit_code = 1;
    printf("failure: on %s (%s), debug = true\n", info.name, info.backend);
    memcpy(&constants[0], &a, sizeof a);
    constants[1] = N;

    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N * 4, .label = "x" }, &x));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N * 4, .label = "y" }, &y));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N * 4, .label = "z" }, &z));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){
        .name = "saxpy", .cpu = saxpy_cpu, EX_SPIRV(saxpy) .cuda_source = saxpy_cuda,
        .buffer_count = 2, .constant_count = 2 }, &prog));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &decode));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &render));
    EX_CHECK(accel_signal_create(dev, 0, &input));
    EX_CHECK(accel_signal_create(dev, 0, &decoded));
    EX_CHECK(accel_signal_create(dev, 0, &rendered));
    EX_CHECK(accel_signal_create(dev, 0, &done));
    EX_CHECK(accel_queue_set_label(decode, "decode"));
    EX_CHECK(accel_queue_set_label(render, "render"));
    EX_CHECK(accel_signal_set_label(input, "input"));
    EX_CHECK(accel_signal_set_label(decoded, "decoded"));
    EX_CHECK(accel_signal_set_label(rendered, "rendered"));
    EX_CHECK(accel_signal_set_label(done, "done"));

    /* 1. The pipeline, then the loader's failure. */
    printf("\n1. accel_signal_fail(input, ACCEL_ERROR_UNAVAILABLE) flows down decode -> render\n");
    accel_queue_wait(decode, input, 1);
    accel_queue_exec(decode, prog, (accel_buffer*[]){ y, x }, 2, constants, 2, accel_exec_1d(N, 256));
    accel_queue_signal(decode, decoded, 1);
    EX_CHECK(accel_queue_submit(decode));
    accel_queue_wait(render, decoded, 1);
    accel_queue_exec(render, prog, (accel_buffer*[]){ z, y }, 2, constants, 2, accel_exec_1d(N, 256));
    accel_queue_signal(render, rendered, 1);
    EX_CHECK(accel_queue_submit(render));
    EX_CHECK(accel_signal_fail(input, ACCEL_ERROR_UNAVAILABLE));
    accel_result r = accel_signal_wait(rendered, 1, ACCEL_WAIT_FOREVER);
    printf("   wait(rendered >= 1) -> %s\n", accel_result_string(r));
    printf("   reasons: input %s, decoded %s, rendered %s\n", accel_result_string(failure_reason(input)),
           accel_result_string(failure_reason(decoded)), accel_result_string(failure_reason(rendered)));
    ok &= r == ACCEL_ERROR_SIGNAL_FAILED && failure_reason(rendered) == ACCEL_ERROR_UNAVAILABLE &&
          failure_reason(decoded) == ACCEL_ERROR_UNAVAILABLE;
    EX_CHECK(accel_queue_finish(decode, ACCEL_WAIT_FOREVER));
    EX_CHECK(accel_queue_finish(render, ACCEL_WAIT_FOREVER));

    /* 2. The forgotten submit: the debug device names the queue holding the signal. */
    printf("\n2. decode records signal(done, 1), nobody submits, the host waits 10 ms:\n");
    accel_queue_signal(decode, done, 1);
    log_lines = 0;
    r = accel_signal_wait(done, 1, 10000000u);
    printf("   wait(done >= 1, 10 ms) -> %s\n", accel_result_string(r));
    ok &= (r == ACCEL_TIMEOUT || r == ACCEL_ERROR_DEADLOCK) && saw_forgotten_submit;
    EX_CHECK(accel_queue_submit(decode));
    EX_CHECK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    printf("   after accel_queue_submit(decode): done = %llu\n", (unsigned long long)accel_signal_value(done));

    /* 3. A queue blocked on a gate the host has not opened yet: a timed-out wait reports it. */
    printf("\n3. render waits for done >= 2 (the host's gate) before signalling rendered2; the host waits 20 ms:\n");
    accel_signal* rendered2 = NULL;
    EX_CHECK(accel_signal_create(dev, 0, &rendered2));
    EX_CHECK(accel_signal_set_label(rendered2, "rendered2"));
    accel_queue_wait(render, done, 2);
    accel_queue_signal(render, rendered2, 1);
    EX_CHECK(accel_queue_submit(render));
    log_lines = 0;
    r = accel_signal_wait(rendered2, 1, 20000000u);
    printf("   wait(rendered2 >= 1, 20 ms) -> %s\n", accel_result_string(r));
    ok &= (r == ACCEL_TIMEOUT || r == ACCEL_ERROR_DEADLOCK) && log_lines > 0;
    EX_CHECK(accel_signal_set(done, 2));                      /* open the gate */
    EX_CHECK(accel_signal_wait(rendered2, 1, ACCEL_WAIT_FOREVER));
    printf("   after accel_signal_set(done, 2): rendered2 = %llu\n", (unsigned long long)accel_signal_value(rendered2));
    accel_signal_destroy(rendered2);

    printf("\nfailure: %s\n", ok ? "OK (the failure reached the end of the pipeline; debug named the culprits)"
                                 : "WRONG");
    exit_code = ok ? 0 : 1;

done:
    accel_device_destroy(dev);   /* releases every object still alive on it */
    return exit_code;
}
