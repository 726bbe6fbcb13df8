/* examples/common.h — what every accel example shares: the backend argument, error checks, a clock.
   Include it after `#define ACCEL_IMPLEMENTATION` + `#include "accel.h"`.

   Usage of every example:   ./build/NAME [cpu|vulkan|cuda|any] [--trace FILE]     (default: cpu)
   --trace FILE writes a Chrome trace-event JSON file of the run: open it in ui.perfetto.dev.
   The GPU backends are compiled in with -DACCEL_EXAMPLE_HAVE_VULKAN / -DACCEL_EXAMPLE_HAVE_CUDA. */
#ifndef ACCEL_EXAMPLE_COMMON_H
#define ACCEL_EXAMPLE_COMMON_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__EMSCRIPTEN__)
#  include <emscripten/emscripten.h>
#endif

#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
#  define ACCEL_VULKAN_IMPLEMENTATION
#  include "accel_vulkan.h"
/* The SPIR-V of examples/kernels/NAME.comp, compiled by the build (`make run-vulkan`:
   glslc -mfmt=c into build/examples/kernels/NAME.spv.inc; add -Ibuild/examples/kernels). Use
   EX_SPIRV(name) inside an accel_program_desc; without Vulkan it adds nothing. */
#  define EX_SPIRV(name) .spirv = ex_##name##_spv, .spirv_size = sizeof ex_##name##_spv,
#else
#  define EX_SPIRV(name)
#endif
#ifdef ACCEL_EXAMPLE_HAVE_CUDA
#  define ACCEL_CUDA_IMPLEMENTATION
#  include "accel_cuda.h"
#endif

/* Evaluates an accel call; on failure prints where, what and why, and jumps to the `done:` label of
   the calling function (which destroys the device, and with it everything still alive on it). */
#define EX_CHECK(call)                                                                             \
    do {                                                                                           \
        accel_result ex_r_ = (call);                                                               \
        if (ex_r_ != ACCEL_OK) {                                                                   \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call,                       \
                    accel_result_string(ex_r_));                                                   \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* The FILE of `--trace FILE` on the command line, else NULL: set it as accel_device_desc.trace_path. */
static inline const char* ex_trace_path(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--trace")) return argv[i + 1];
    return NULL;
}

/* Creates the device named by the first argument ("cpu" when absent; `--trace FILE` may come before or
   after it) with `desc` (may be NULL) and fills *info. Returns 0 on success, else the exit code for
   main: 2 for a bad argument or a backend that is not compiled into this binary, 1 when the device
   cannot be created. */
static int ex_open_device(int argc, char** argv, const accel_device_desc* desc, accel_device** dev,
                          accel_device_info* info) {
    const char* want = NULL;
    const accel_backend* list[3];
    uint32_t count = 0;
    accel_device_desc d = desc ? *desc : (accel_device_desc){ 0 };
    accel_result r;
    bool bad = false;

    *dev = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trace")) bad |= ++i == argc;   /* its FILE: see ex_trace_path */
        else if (want) bad = true;
        else want = argv[i];
    }
    if (!want) want = "cpu";
    if (bad || !strcmp(want, "-h") || !strcmp(want, "--help")) {
        fprintf(stderr, "usage: %s [cpu|vulkan|cuda|any] [--trace FILE]   (default: cpu)\n", argv[0]);
        return 2;
    }
    d.trace_path = ex_trace_path(argc, argv);
    if (!strcmp(want, "cpu")) {
        list[count++] = accel_cpu_backend();
    } else if (!strcmp(want, "vulkan")) {
#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
        list[count++] = accel_vulkan_backend();
#endif
    } else if (!strcmp(want, "cuda")) {
#ifdef ACCEL_EXAMPLE_HAVE_CUDA
        list[count++] = accel_cuda_backend();
#endif
    } else if (!strcmp(want, "any")) {
#ifdef ACCEL_EXAMPLE_HAVE_CUDA
        list[count++] = accel_cuda_backend();
#endif
#ifdef ACCEL_EXAMPLE_HAVE_VULKAN
        list[count++] = accel_vulkan_backend();
#endif
        list[count++] = accel_cpu_backend();
    } else {
        fprintf(stderr, "%s: unknown backend '%s' (expected cpu, vulkan, cuda or any)\n", argv[0], want);
        return 2;
    }
    if (count == 0) {
        fprintf(stderr, "%s: the %s backend is not built into this binary (%s)\n", argv[0], want,
                !strcmp(want, "cuda") ? "rebuild with -DACCEL_EXAMPLE_HAVE_CUDA"
                                      : "make examples-vulkan builds it: -DACCEL_EXAMPLE_HAVE_VULKAN and the kernels compiled by glslc, see examples/common.h");
        return 2;
    }
    if (!strcmp(want, "any")) {
        r = accel_device_create_any(list, count, &d, dev);   /* the log says why each one was skipped */
    } else {
        d.backend = list[0];
        r = accel_device_create(&d, dev);
    }
    if (r != ACCEL_OK) {
        fprintf(stderr, "%s: no %s device: %s\n", argv[0], want, accel_result_string(r));
        return 1;
    }
    if (d.trace_path) printf("trace: %s (written when the device is destroyed; open it in ui.perfetto.dev)\n", d.trace_path);
    r = accel_device_info_get(*dev, info);
    if (r != ACCEL_OK) {
        fprintf(stderr, "%s: accel_device_info_get -> %s\n", argv[0], accel_result_string(r));
        accel_device_destroy(*dev);
        *dev = NULL;
        return 1;
    }
    return 0;
}

/* Seconds from an arbitrary origin (C11 timespec_get, good to a microsecond or so; under Emscripten,
   where that clock moves in milliseconds, performance.now). */
static inline double ex_seconds(void) {
#if defined(__EMSCRIPTEN__)
    return emscripten_get_now() * 1e-3;
#else
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
}

/* A small integer hash, written the same way in the C, GLSL and CUDA kernels so that every backend
   produces bit-identical results that the host can check exactly. */
static inline uint32_t ex_hash(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

#endif /* ACCEL_EXAMPLE_COMMON_H */
