/* tests/fuzz_spirv.c — libFuzzer target for the SPIR-V checks of accel_program_create (accel_vulkan.h,
   accel_i_spv_read): each input is a module, its bytes taken as host-order words (a trailing partial word
   dropped). The checks must refuse it or read it without a crash, a read outside the module (ASan: the
   words sit in an allocation of exactly their size) or undefined behaviour (UBSan). What they accept must
   have the structure they promise, verified here on its own terms: the header (magic, SPIR-V 1.0 to
   1.6), word counts that end exactly at the end of the module, an entry-point name inside the module and
   NUL-terminated, an OpFunction defining the entry point's id. A violation traps.
   When a Vulkan device can be created (`make fuzz` pins lavapipe where it is installed) each accepted
   module is also handed to accel_program_create on it with the counts the checks read, and the program
   destroyed: the driver must take it without a crash.

   Build (see `make fuzz`): clang -fsanitize=fuzzer,address,undefined tests/fuzz_spirv.c. Seeds:
   tests/fuzz_spirv_corpus/ (glslc output of tests/kernels/ and the smallest hand-written module). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#define ACCEL_VULKAN_IMPLEMENTATION
#include "accel_vulkan.h"
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static accel_device* fs_cpu;   /* the device the checks log to (a CPU device, silent) */
static accel_device* fs_vk;    /* a Vulkan device when there is one */

static void fs_quiet(accel_log_level level, const char* message, void* user) { (void)level; (void)message; (void)user; }

static void fs_init(void) {
    accel_device_desc d;
    memset(&d, 0, sizeof d);
    d.logger.log_fn = fs_quiet;
    d.cpu_threads = 1;
    d.backend = accel_cpu_backend();
    if (accel_device_create(&d, &fs_cpu) != ACCEL_OK) __builtin_trap();
    d.backend = accel_vulkan_backend();
    if (accel_device_create(&d, &fs_vk) != ACCEL_OK) fs_vk = NULL;
    if (fs_vk) fprintf(stderr, "fuzz_spirv: the checks, then accel_program_create on %s\n", fs_vk->info.name);
    else fprintf(stderr, "fuzz_spirv: the checks only (no Vulkan device)\n");
}

/* The promises of an accepted module, checked without the checker's code. */
static void fs_verify(const uint32_t* w, size_t words, const accel_i_spv_info* info) {
    const char* begin = (const char*)(const void*)w;
    size_t i = 5;
    bool defined = false;
    if (words < 5 || w[0] != 0x07230203u || (w[1] & 0xffff00ffu) != 0x00010000u || ((w[1] >> 8) & 0xffu) > 6) __builtin_trap();
    for (; i < words; i += w[i] >> 16) {
        if ((w[i] >> 16) == 0 || (w[i] >> 16) > words - i) __builtin_trap();
        if ((w[i] & 0xffffu) == 54 && (w[i] >> 16) >= 5 && w[i + 2] == info->entry_id) defined = true;
    }
    if (i != words || !defined) __builtin_trap();
    if (info->entry < begin || info->entry + info->entry_len >= begin + words * 4 || info->entry[info->entry_len] != '\0') __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static bool inited;
    size_t words = size / 4;
    uint32_t* w;
    accel_i_spv_info info;
    if (!inited) { fs_init(); inited = true; }
    w = (uint32_t*)malloc(words ? words * 4 : 1);
    if (!w) return 0;
    memcpy(w, data, words * 4);
    if (accel_i_spv_read(fs_cpu, w, words, 6, "main", &info) == ACCEL_OK) {
        fs_verify(w, words, &info);
        if (fs_vk && info.buffers <= fs_vk->info.max_buffers && info.push_bytes <= 4ull * fs_vk->info.max_constants) {
            accel_program_desc pd;
            accel_program* p = NULL;
            memset(&pd, 0, sizeof pd);
            pd.name = "main";
            pd.spirv = w;
            pd.spirv_size = words * 4;
            pd.buffer_count = (uint32_t)info.buffers;
            pd.constant_count = (uint32_t)((info.push_bytes + 3) / 4);
            if (accel_program_create(fs_vk, &pd, &p) == ACCEL_OK) accel_program_destroy(p);
        }
    }
    free(w);
    return 0;
}
