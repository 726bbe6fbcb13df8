/* bench/raw_gpu.h — what the raw baselines of the GPU benches (devices.c, shared_waits.c) share: the
   driver libraries opened by hand and their entry points looked up the way a program without accel
   does it. No accel code runs on the raw side. */
#ifndef BENCH_RAW_GPU_H
#define BENCH_RAW_GPU_H
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* CUDA: the driver accel loaded (ACCEL_CUDA_LIBRARY, else libcuda.so.1) and its cuGetProcAddress_v2;
   NULL where either is missing (*lib: the handle to dlclose, NULL when none). */
typedef int (*bench_cu_gpa)(const char* name, void** fn, int version, unsigned long long flags, int* status);
static inline bench_cu_gpa bench_cu_open(void** lib) {
    const char* path = getenv("ACCEL_CUDA_LIBRARY");
    bench_cu_gpa gpa = NULL;
    void* sym;
    if ((*lib = dlopen(path && path[0] ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL) return NULL;
    sym = dlsym(*lib, "cuGetProcAddress_v2");
    memcpy(&gpa, &sym, sizeof sym);
    return gpa;
}
/* Inside a function returning int: c->n = cuN (CUDA 12 entry points), else return 0. */
#define BENCH_CU_LOAD(gpa, c, n) \
    { void* f_ = NULL; if ((gpa)("cu" #n, &f_, 12000, 0, NULL) != 0 || !f_) return 0; memcpy(&(c)->n, &f_, sizeof f_); }

#ifdef VK_VERSION_1_0
/* Vulkan: the loader (ACCEL_VULKAN_LIBRARY, else libvulkan.so.1) and its vkGetInstanceProcAddr; NULL
   where either is missing. */
static inline PFN_vkGetInstanceProcAddr bench_vk_open(void** lib) {
    const char* path = getenv("ACCEL_VULKAN_LIBRARY");
    PFN_vkGetInstanceProcAddr gipa = NULL;
    void* sym;
    if ((*lib = dlopen(path && path[0] ? path : "libvulkan.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL) return NULL;
    sym = dlsym(*lib, "vkGetInstanceProcAddr");
    memcpy(&gipa, &sym, sizeof sym);
    return gipa;
}
/* r->n = vkN: the device's entry point where d (and r->GetDeviceProcAddr), else the instance's; left as
   it is where neither has it. r: a struct with gipa, inst, GetDeviceProcAddr and member n. */
#define BENCH_VK_LOAD(r, d, n) \
    { PFN_vkVoidFunction f_ = (d) && (r)->GetDeviceProcAddr ? (r)->GetDeviceProcAddr((d), "vk" #n) : NULL; \
      if (!f_) f_ = (r)->gipa((r)->inst, "vk" #n); \
      if (f_) memcpy(&(r)->n, &f_, sizeof f_); }
#endif
#endif
