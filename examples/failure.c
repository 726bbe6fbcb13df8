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
   4. Recovery (accel_device_recover): the device is lost with work pending, a recover makes it anew
      (accel_device_info.generation goes up), the old objects are stale (DEVICE_LOST, with a log line
      naming them) and the program rebuilds its own and finishes the work. CUDA: an out-of-bounds
      store loses the context for real. CPU and Vulkan: the loss is simulated by a recover of the
      healthy device while a batch waits on a gate nobody opens (what a recover does to pending work
      is the same; tests/test_recover.c loses a Vulkan device through a test-only hook). It must all
      take less than 5 s (bench/gpu_check.sh runs it on a GPU). On NVIDIA's drivers the out-of-bounds
      store's error outlives the context's reset, for the rest of the process: there the recover
      returns ACCEL_ERROR_DEVICE_LOST and says so, and the example says that the device stayed lost.
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

#ifdef ACCEL_EXAMPLE_HAVE_CUDA
/* An out-of-bounds store: a CUDA context that runs it is lost (sticky), as after a real bug. */
static const char oob_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry oob(.param .u64 p)\n{\n"
    "    .reg .u64 %a;\n    .reg .u32 %v;\n"
    "    ld.param.u64 %a, [p];\n    cvta.to.global.u64 %a, %a;\n"
    "    add.u64 %a, %a, 0x100000000000;\n    mov.u32 %v, 7;\n    st.global.u32 [%a], %v;\n    ret;\n}\n";
#endif

/* The failed value of a signal, decoded back into the reason it was failed with. */
static accel_result failure_reason(const accel_signal* s) {
    uint64_t v = accel_signal_value(s);
    return v > ACCEL_SIGNAL_MAX ? (accel_result)-(int)(v - ACCEL_SIGNAL_MAX - 1) : ACCEL_OK;
}

/* 4's loss on CUDA: an out-of-bounds store. Its program is made before the batch that waits on the
   gate: a module load may wait for the context's streams, and behind a gate the host opens later that
   would never return. NULL elsewhere (the loss is simulated). */
static accel_program* loss_program(accel_device* dev, const accel_device_info* info) {
    accel_program* oob = NULL;
#ifdef ACCEL_EXAMPLE_HAVE_CUDA
    accel_program_desc pd = { .name = "oob", .ptx = oob_ptx, .buffer_count = 1 };
    if (!strcmp(info->backend, "cuda") && accel_program_create(dev, &pd, &oob) != ACCEL_OK) oob = NULL;
#endif
    (void)dev; (void)info;
    return oob;
}
/* 4. The device's work goes wrong for real (CUDA: oob from loss_program) or a recover comes with work
   pending (elsewhere): another queue has a batch waiting on a gate nobody opens. Returns how the device
   was lost, for the printout. */
static const char* lose_device(accel_device* dev, accel_program* oob, accel_queue* q, accel_buffer* buf) {
    accel_signal* hit = NULL;
    if (!oob) return "simulated: a recover of the healthy device with a batch pending";
    if (accel_signal_create(dev, 0, &hit) == ACCEL_OK) {
        accel_queue_exec(q, oob, &buf, 1, NULL, 0, accel_exec_1d(1, 1));
        accel_queue_signal(q, hit, 1);
        if (accel_queue_submit(q) == ACCEL_OK) accel_signal_wait(hit, 1, 30000000000ull);
    }
    return "an out-of-bounds store: the CUDA context is lost";
}

/* 4. Rebuilds what the program needs on the recovered device and runs saxpy: y = 2 * x + 1 for x = i.
   Returns 1 when y is right. */
static int rebuild_and_finish(accel_device* dev, const uint32_t constants[2]) {
    static float host_x[N], host_y[N];
    accel_buffer *x = NULL, *y = NULL;
    accel_program* prog = NULL;
    accel_queue* q = NULL;
    accel_signal* done = NULL;
    int ok = 0;
    for (uint32_t i = 0; i < N; i++) { host_x[i] = (float)i; host_y[i] = 1.0f; }
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N * 4, .label = "x2" }, &x));
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N * 4, .label = "y2" }, &y));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){
        .name = "saxpy", .cpu = saxpy_cpu, EX_SPIRV(saxpy) .cuda_source = saxpy_cuda,
        .buffer_count = 2, .constant_count = 2 }, &prog));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));
    EX_CHECK(accel_signal_create(dev, 0, &done));
    EX_CHECK(accel_buffer_write(x, 0, host_x, sizeof host_x));
    EX_CHECK(accel_buffer_write(y, 0, host_y, sizeof host_y));
    accel_queue_exec(q, prog, (accel_buffer*[]){ y, x }, 2, constants, 2, accel_exec_1d(N, 256));
    accel_queue_signal(q, done, 1);
    EX_CHECK(accel_queue_submit(q));
    EX_CHECK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));
    EX_CHECK(accel_buffer_read(y, 0, host_y, sizeof host_y));
    ok = 1;
    for (uint32_t i = 0; i < N; i++) ok &= host_y[i] == 2.0f * (float)i + 1.0f;
done:
    accel_queue_destroy(q);
    accel_signal_destroy(done);
    accel_program_destroy(prog);
    accel_buffer_destroy(x);
    accel_buffer_destroy(y);
    return ok;
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
    int ok = 1, came_back = 1;   /* came_back: 4. the device came back after the loss */

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

    /* 4. Recovery: work pending on a gate, the device lost, accel_device_recover, rebuild, finish. */
    {
        accel_signal *gate = NULL, *out = NULL;
        accel_program* oob = loss_program(dev, &info);
        const char* how;
        uint64_t t0;
        float probe = 0;
        EX_CHECK(accel_signal_create(dev, 0, &gate));
        EX_CHECK(accel_signal_create(dev, 0, &out));
        EX_CHECK(accel_signal_set_label(gate, "gate"));
        EX_CHECK(accel_signal_set_label(out, "out"));
        accel_queue_wait(decode, gate, 1);
        accel_queue_exec(decode, prog, (accel_buffer*[]){ y, x }, 2, constants, 2, accel_exec_1d(N, 256));
        accel_queue_signal(decode, out, 1);
        EX_CHECK(accel_queue_submit(decode));
        t0 = accel_host_time_ns();
        how = lose_device(dev, oob, render, z);
        printf("\n4. the device is lost (%s), then accel_device_recover:\n", how);
        r = accel_device_recover(dev);
        printf("   accel_device_recover -> %s\n", accel_result_string(r));
        if (r == ACCEL_ERROR_UNSUPPORTED) {
            printf("   (this device cannot be recovered: skipped)\n");
        } else if (r == ACCEL_ERROR_DEVICE_LOST && oob) {
            /* NVIDIA's drivers keep a sticky error for the rest of the process (accel_cuda.h "Recovery") */
            came_back = 0;
            ok &= failure_reason(out) == ACCEL_ERROR_DEVICE_LOST;
            printf("   the CUDA driver keeps the error: the device stays lost in this process (a new "
                   "process can use the GPU); the pending batch's signal: %s\n",
                   accel_result_string(failure_reason(out)));
        } else {
            accel_device_info after;
            ok &= r == ACCEL_OK && accel_device_info_get(dev, &after) == ACCEL_OK && after.generation == 2;
            printf("   generation %llu; the pending batch's signal: %s; the old buffer y: read -> %s\n",
                   (unsigned long long)after.generation, accel_result_string(failure_reason(out)),
                   accel_result_string(accel_buffer_read(y, 0, &probe, 4)));
            ok &= failure_reason(out) == ACCEL_ERROR_DEVICE_LOST;
            ok &= rebuild_and_finish(dev, constants);
            double s = (double)(accel_host_time_ns() - t0) / 1e9;
            printf("   rebuilt (buffers, program, queue, signal), saxpy again: %s, %.3f s after the loss\n",
                   ok ? "right" : "WRONG", s);
            ok &= s < 5.0;
        }
    }

    printf("\nfailure: %s%s\n", ok ? "OK (the failure reached the end of the pipeline; debug named the "
                                     "culprits; " : "WRONG",
           !ok ? "" : came_back ? "the device came back)" : "the driver kept the device lost)");
    exit_code = ok ? 0 : 1;

done:
    accel_device_destroy(dev);   /* releases every object still alive on it */
    return exit_code;
}
