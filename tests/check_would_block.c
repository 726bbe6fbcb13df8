/* The batch walk's private "would block" code never travels as an accel_result: built as C++ with
   -fsanitize=enum (accel_result holds -16..15 there), on the CUDA mock driver. A wait on a CPU device's
   signal is gated: submit hands the batch to the queue's worker (`make test`: check would-block-c++). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#define ACCEL_CUDA_IMPLEMENTATION
#include "accel_cuda.h"
#include <stdio.h>
int main(void) {
    accel_device *cpu = NULL, *gpu = NULL;
    accel_queue* q = NULL;
    accel_signal *gate = NULL, *out = NULL;
    accel_device_desc d;
    accel_result r = ACCEL_OK;
    memset(&d, 0, sizeof d);
    d.backend = accel_cuda_backend();
    if (accel_device_create(NULL, &cpu) != ACCEL_OK) return 1;
    if (accel_device_create(&d, &gpu) != ACCEL_OK) { printf("no CUDA device\n"); return 77; }
    if (accel_signal_create(cpu, 0, &gate) != ACCEL_OK || accel_signal_create(gpu, 0, &out) != ACCEL_OK ||
        accel_queue_create(gpu, ACCEL_QUEUE_COMPUTE, &q) != ACCEL_OK) return 1;
    for (uint64_t i = 1; i <= 200 && r == ACCEL_OK; i++) {
        accel_queue_wait(q, gate, i);
        accel_queue_signal(q, out, i);
        r = accel_queue_submit(q);
        if (r == ACCEL_OK) r = accel_signal_set(gate, i);
        if (r == ACCEL_OK) r = accel_signal_wait(out, i, ACCEL_WAIT_FOREVER);
    }
    accel_device_destroy(gpu);
    accel_device_destroy(cpu);
    printf("%s\n", accel_result_string(r));
    return r == ACCEL_OK ? 0 : 1;
}
