/* bench/devices.c — peer copies (accel_queue_copy with a buffer of another device, DESIGN 7.2) next to
   what a program does without them, in one run, 64 MiB each, GB/s (median of RUNS):

     1 CPU queue, another CPU device's buffer     (direct: memmove)        | raw memcpy
     2 Vulkan queue, within its device            (vkCmdCopyBuffer: the device's own copy, a reference)
     3 Vulkan queue, a CPU device's buffer        (direct: the Vulkan buffer written from host memory)
                                                                            | accel_buffer_write
     4 CPU queue, a Vulkan device's buffer        (direct: read into host memory) | accel_buffer_read
     5 Vulkan queue, another Vulkan device's buffer (direct: its memory imported, vkCmdCopyBuffer)
                                                                            | raw imported vkCmdCopyBuffer
     6 the same, ACCEL_VULKAN_NO_EXTERNAL_MEMORY=1, both mapped (staged on the queue's worker: memmove)
                                                                            | read + write through the host
     7 the same with ACCEL_VULKAN_NO_MAP_DEVICE=1 too (staged through the queue's two slots, 4 MiB
       chunks, double-buffered: core: several devices, the staged pipeline)
                                              | the same double-buffered: two host buffers, a thread
                                                reading chunk k + 1 while another writes chunk k
     8 CUDA queue, a Vulkan device's buffer on the same GPU (direct: the Vulkan memory imported with
       cuImportExternalMemory, cuMemcpyAsync)  | raw: the same fd imported, cuMemcpyAsync on a stream
     9 Vulkan queue, a CUDA device's buffer on the same GPU (direct: its cuMemCreate memory exported as a
       POSIX fd and imported; staged where the driver cannot)
                                              | raw: cuMemCreate memory exported, imported, vkCmdCopyBuffer
    10 a CUDA buffer of 4 MiB made and freed while that Vulkan device is open (exportable memory), in us
                                              | raw: cuMemCreate, reserve, map, access, zero, and back;
                                                the plain cuMemAlloc pair printed beside it
   and the factor imported (5) / staged (6, 7), in time. Row 5's baseline is the raw floor: a minimal
   Vulkan program of its own (two VkDevices, memory exported as an opaque fd and imported, one
   vkCmdCopyBuffer recorded once, a submit and a fence wait per copy). Each row warms both sides up,
   then alternates them round by round; the last column is the median of the rounds' paired ratios.
   Rows 2-7 need the Vulkan backend (built with -DBENCH_HAVE_VULKAN; lavapipe in CI: a CPU driver, so
   the figures say what the host paths cost, not what a GPU's DMA engines do). Rows 8-10 need a CUDA
   device with the Vulkan device's uuid: a GPU's (bench/gpu_check.sh runs them with the NVIDIA Vulkan
   driver), or the mock CUDA driver beside lavapipe (ACCEL_CUDA_LIBRARY=build/mock/libcuda_mock.so: the
   bench then sets MOCK_CUDA_UUID to lavapipe's uuid; memcpy on both sides there, so row 8's figure is
   only a sanity check of the path, not a bandwidth). Row 8's raw program imports row 5's raw exported
   memory (another fd of it) into CUDA itself. Every copy's bytes are
   checked (the raw program's where its memory is host-visible). Prints a table and a BENCH line a row; exits 1 when a check fails.

   make bench-devices   (BENCH_ARGS=--quick: 3 runs) */
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#ifdef BENCH_HAVE_VULKAN
#  define ACCEL_VULKAN_IMPLEMENTATION
#  include "accel_vulkan.h"
#  define ACCEL_CUDA_IMPLEMENTATION
#  include "accel_cuda.h"
#  include "bench/raw_gpu.h"
#  include <unistd.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#define BYTES ((size_t)64 << 20)
static int runs = 7, failures = 0;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int cmp_d(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}
static double median(double* v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_d); return v[n / 2]; }

/* What one side of a row does once: returns seconds, or a negative number when a call failed. */
typedef double (*side_fn)(void* ctx);
typedef struct copy_ctx {
    accel_queue* q;
    accel_buffer *dst, *src;
    unsigned char* host;           /* raw sides: the program's own memory */
    int raw;                       /* 1: memcpy; 2: accel_buffer_write(dst, host); 3: read(src, host);
                                      4: read + write through host, 4 MiB at a time; 5: the same,
                                      double-buffered: two host buffers, a thread reading chunk k + 1
                                      while this one writes chunk k (raw_double) */
} copy_ctx;
/* raw side 5: the reader thread fills host buffer k % 2 with chunk k once chunk k - 2 left it */
#define RAW_CHUNK ((size_t)4 << 20)
typedef struct raw_pipe {
    copy_ctx* c;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t filled, drained;        /* chunks read / written */
    int failed;
} raw_pipe;
static void* raw_reader(void* p) {
    raw_pipe* rp = (raw_pipe*)p;
    for (size_t k = 0; k * RAW_CHUNK < BYTES; k++) {
        accel_result r;
        pthread_mutex_lock(&rp->lock);
        while (rp->drained + 2 <= k && !rp->failed) pthread_cond_wait(&rp->cond, &rp->lock);
        pthread_mutex_unlock(&rp->lock);
        if (rp->failed) break;
        r = accel_buffer_read(rp->c->src, k * RAW_CHUNK, rp->c->host + (k % 2) * RAW_CHUNK, RAW_CHUNK);
        pthread_mutex_lock(&rp->lock);
        if (r != ACCEL_OK) rp->failed = 1; else rp->filled = k + 1;
        pthread_cond_broadcast(&rp->cond);
        pthread_mutex_unlock(&rp->lock);
    }
    return NULL;
}
static accel_result raw_double(copy_ctx* c) {
    raw_pipe rp;
    pthread_t t;
    memset(&rp, 0, sizeof rp);
    rp.c = c;
    pthread_mutex_init(&rp.lock, NULL);
    pthread_cond_init(&rp.cond, NULL);
    if (pthread_create(&t, NULL, raw_reader, &rp) != 0) return ACCEL_ERROR_BACKEND;
    for (size_t k = 0; k * RAW_CHUNK < BYTES && !rp.failed; k++) {
        accel_result r;
        pthread_mutex_lock(&rp.lock);
        while (rp.filled <= k && !rp.failed) pthread_cond_wait(&rp.cond, &rp.lock);
        pthread_mutex_unlock(&rp.lock);
        if (rp.failed) break;
        r = accel_buffer_write(c->dst, k * RAW_CHUNK, c->host + (k % 2) * RAW_CHUNK, RAW_CHUNK);
        pthread_mutex_lock(&rp.lock);
        if (r != ACCEL_OK) rp.failed = 1; else rp.drained = k + 1;
        pthread_cond_broadcast(&rp.cond);
        pthread_mutex_unlock(&rp.lock);
    }
    pthread_join(t, NULL);
    pthread_mutex_destroy(&rp.lock);
    pthread_cond_destroy(&rp.cond);
    return rp.failed ? ACCEL_ERROR_BACKEND : ACCEL_OK;
}

static double run_accel(void* p) {
    copy_ctx* c = (copy_ctx*)p;
    double t0 = now_s();
    accel_queue_copy(c->q, c->dst, 0, c->src, 0, BYTES);
    if (accel_queue_finish(c->q, ACCEL_WAIT_FOREVER) != ACCEL_OK) return -1;
    return now_s() - t0;
}
static double run_raw(void* p) {
    copy_ctx* c = (copy_ctx*)p;
    double t0 = now_s();
    accel_result r = ACCEL_OK;
    switch (c->raw) {
    case 1: memcpy(accel_buffer_map(c->dst), accel_buffer_map(c->src), BYTES); break;
    case 2: r = accel_buffer_write(c->dst, 0, c->host, BYTES); break;
    case 3: r = accel_buffer_read(c->src, 0, c->host, BYTES); break;
    case 5: r = raw_double(c); break;
    default:
        for (size_t at = 0; at < BYTES && r == ACCEL_OK; at += (size_t)4 << 20) {
            r = accel_buffer_read(c->src, at, c->host, (size_t)4 << 20);
            if (r == ACCEL_OK) r = accel_buffer_write(c->dst, at, c->host, (size_t)4 << 20);
        }
    }
    return r == ACCEL_OK ? now_s() - t0 : -1;
}
/* A warm-up of each side (pages touched first), then rounds that alternate the two sides (who goes
   first alternates too); *ta, *tr: each side's median, *paired: the median over rounds of raw time /
   accel time. Negative: a call failed. */
static void alternate(side_fn accel, void* actx, side_fn raw, void* rctx, double* ta, double* tr, double* paired) {
    double a[16], r[16], q[16];
    if (accel(actx) < 0 || (raw && raw(rctx) < 0)) { *ta = *tr = *paired = -1; return; }   /* warm-up: first touch */
    for (int i = 0; i < runs; i++) {
        if (i & 1) { r[i] = raw ? raw(rctx) : 0; a[i] = accel(actx); }
        else { a[i] = accel(actx); r[i] = raw ? raw(rctx) : 0; }
        if (a[i] < 0 || r[i] < 0) { *ta = *tr = *paired = -1; return; }
        q[i] = raw ? r[i] / a[i] : 0;
    }
    *ta = median(a, runs);
    *tr = median(r, runs);
    *paired = median(q, runs);
}
/* Checks dst against the pattern written into src (word i = i * 2654435761). */
static void check(accel_buffer* dst, const char* row) {
    uint32_t* got = (uint32_t*)malloc(BYTES);
    size_t bad = 0;
    if (!got || accel_buffer_read(dst, 0, got, BYTES) != ACCEL_OK) bad = 1;
    for (size_t i = 0; got && !bad && i < BYTES / 4; i++) bad += got[i] != (uint32_t)(i * 2654435761u);
    if (bad) { printf("bench_devices: row %s: WRONG bytes\n", row); failures++; }
    free(got);
}
static void fill_pattern(accel_buffer* b, unsigned char* host) {
    uint32_t* w = (uint32_t*)(void*)host;
    for (size_t i = 0; i < BYTES / 4; i++) w[i] = (uint32_t)(i * 2654435761u);
    if (accel_buffer_write(b, 0, host, BYTES) != ACCEL_OK) failures++;
}

/* One row: q on qdev copies from a buffer of `from` into one of `to` (one of them is qdev); the raw
   side is `raw` (0: none; a copy_ctx kind, see run_raw), or rawfn(rawctx) where rawfn is given.
   Returns accel's seconds (negative: failed). */
static double row_with(const char* name, accel_device* qdev, accel_device* to, accel_device* from, int raw,
                       side_fn rawfn, void* rawctx, const char* raw_name) {
    copy_ctx c;
    accel_buffer_desc d = { .size = BYTES, .memory = ACCEL_MEMORY_DEVICE };
    double ta = -1, tr = 0, paired = 0;
    int has_raw = raw || rawfn;
    memset(&c, 0, sizeof c);
    c.host = (unsigned char*)malloc(BYTES);
    if (!c.host || accel_queue_create(qdev, ACCEL_QUEUE_COMPUTE, &c.q) != ACCEL_OK ||
        accel_buffer_create(to, &d, &c.dst) != ACCEL_OK ||
        accel_buffer_create(from, &d, &c.src) != ACCEL_OK) {
        printf("bench_devices: row %s: setup failed\n", name);
        failures++;
        goto done;
    }
    fill_pattern(c.src, c.host);
    c.raw = raw;
    if (raw == 1 && (!accel_buffer_map(c.dst) || !accel_buffer_map(c.src))) ta = tr = -1;
    else alternate(run_accel, &c, rawfn ? rawfn : raw ? run_raw : NULL, rawfn ? rawctx : &c, &ta, &tr, &paired);
    check(c.dst, name);
    if (ta < 0 || tr < 0) {
        printf("bench_devices: row %s: a call failed\n", name);
        failures++;
        ta = -1;
        goto done;
    }
    printf("%-52s | %7.2f GB/s | %-26s %7.2f GB/s | %5.2f | %5.2f\n", name, (double)BYTES / ta / 1e9,
           has_raw ? raw_name : "-", has_raw ? (double)BYTES / tr / 1e9 : 0.0, has_raw ? tr / ta : 0.0, paired);
    printf("BENCH {\"figure\":\"%s\",\"accel_gbps\":%.3f,\"baseline\":\"%s\",\"baseline_gbps\":%.3f,"
           "\"ratio\":%.3f,\"paired_ratio\":%.3f}\n", name, (double)BYTES / ta / 1e9, has_raw ? raw_name : "none",
           has_raw ? (double)BYTES / tr / 1e9 : 0.0, has_raw ? tr / ta : 0.0, paired);
done:
    accel_queue_destroy(c.q);
    accel_buffer_destroy(c.dst);
    accel_buffer_destroy(c.src);
    free(c.host);
    return ta;
}
static double row(const char* name, accel_device* qdev, accel_device* to, accel_device* from, int raw,
                  const char* raw_name) {
    return row_with(name, qdev, to, from, raw, NULL, NULL, raw_name);
}
#ifdef BENCH_HAVE_VULKAN
/* ==== the raw floor of row 5: what a Vulkan programmer writes by hand ====
   Two VkDevices on the first physical device; device B allocates 64 MiB exportable as an opaque fd,
   device A imports it and copies it into a buffer of its own with vkCmdCopyBuffer, recorded once;
   one vkQueueSubmit and one fence wait per copy. */
#define RVK_FUNCS(X) X(CreateInstance) X(DestroyInstance) X(EnumeratePhysicalDevices) \
    X(GetPhysicalDeviceQueueFamilyProperties) X(GetPhysicalDeviceMemoryProperties) X(CreateDevice) X(DestroyDevice) \
    X(GetDeviceProcAddr) X(GetDeviceQueue) X(CreateBuffer) X(DestroyBuffer) X(GetBufferMemoryRequirements) \
    X(AllocateMemory) X(FreeMemory) X(BindBufferMemory) X(MapMemory) X(UnmapMemory) X(GetMemoryFdKHR) \
    X(CreateCommandPool) X(DestroyCommandPool) X(AllocateCommandBuffers) X(BeginCommandBuffer) X(EndCommandBuffer) \
    X(CmdCopyBuffer) X(CreateFence) X(DestroyFence) X(QueueSubmit) X(WaitForFences) X(ResetFences)
typedef struct rvk {
    void* lib;
    PFN_vkGetInstanceProcAddr gipa;
#define RVK_MEMBER(n) PFN_vk##n n;
    RVK_FUNCS(RVK_MEMBER)
    VkInstance inst;
    VkPhysicalDevice phys;
    VkPhysicalDeviceMemoryProperties props;
    uint32_t family;
    VkDevice da, db;
    VkQueue qa;
    VkBuffer src_b, src_a, dst_a;          /* B's buffer; its memory imported into A; A's own */
    VkDeviceMemory mem_b, mem_imp, mem_a;
    VkDeviceSize size_b;                   /* mem_b's allocation size */
    uint32_t type_b, type_a;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    VkBuffer src_c;                        /* row 9: CUDA memory imported into A, and its copy */
    VkDeviceMemory mem_c;
    VkCommandBuffer cb_c;
} rvk;
static void rvk_load(rvk* r, VkDevice d) {
#define RVK_LOAD(n) BENCH_VK_LOAD(r, d, n)
    RVK_FUNCS(RVK_LOAD)
}
static uint32_t rvk_type(const rvk* r, uint32_t bits, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < r->props.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (r->props.memoryTypes[i].propertyFlags & want) == want) return i;
    return UINT32_MAX;
}
static VkDevice rvk_device(rvk* r) {
    float prio = 1.0f;
    const char* ext[2] = { VK_KHR_EXTERNAL_MEMORY_EXTENSION_NAME, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME };
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, r->family, 1, &prio };
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci, 0, NULL, 2, ext, NULL };
    VkDevice d = VK_NULL_HANDLE;
    return r->CreateDevice(r->phys, &dci, NULL, &d) == VK_SUCCESS ? d : VK_NULL_HANDLE;
}
/* A 64 MiB transfer buffer on d, with memory (exportable, imported from fd, or plain): 0 on failure. */
static int rvk_buffer(rvk* r, VkDevice d, int export_it, int fd, VkBuffer* b, VkDeviceMemory* m, uint32_t* type) {
    VkExternalMemoryBufferCreateInfo eb = { VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, NULL,
                                            VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, export_it || fd >= 0 ? &eb : NULL, 0, BYTES,
                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
    VkExportMemoryAllocateInfo ex = { VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, NULL,
                                      VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkImportMemoryFdInfoKHR im = { VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR, NULL,
                                   VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT, fd };
    VkMemoryRequirements req;
    VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, 0, 0 };
    if (r->CreateBuffer(d, &bi, NULL, b) != VK_SUCCESS) return 0;
    r->GetBufferMemoryRequirements(d, *b, &req);
    if (fd < 0 || *type == UINT32_MAX)   /* made here, or another driver's import: device-local */
        *type = rvk_type(r, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (*type == UINT32_MAX) return 0;
    ai.pNext = export_it ? (const void*)&ex : fd >= 0 ? (const void*)&im : NULL;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = *type;
    if (export_it) r->size_b = req.size;
    if (r->AllocateMemory(d, &ai, NULL, m) != VK_SUCCESS) return 0;
    return r->BindBufferMemory(d, *b, *m, 0) == VK_SUCCESS;
}
/* Writes the pattern into B's memory where it is host-visible (lavapipe); elsewhere the copy is timed
   unchecked (the accel side of the row is checked). */
static void rvk_fill(rvk* r) {
    void* p = NULL;
    if (!(r->props.memoryTypes[r->type_b].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ||
        r->MapMemory(r->db, r->mem_b, 0, BYTES, 0, &p) != VK_SUCCESS)
        return;
    for (size_t i = 0; i < BYTES / 4; i++) ((uint32_t*)p)[i] = (uint32_t)(i * 2654435761u);
    r->UnmapMemory(r->db, r->mem_b);
}
static int rvk_check(rvk* r) {
    void* p = NULL;
    size_t bad = 0;
    if (!(r->props.memoryTypes[r->type_a].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ||
        !(r->props.memoryTypes[r->type_b].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ||
        r->MapMemory(r->da, r->mem_a, 0, BYTES, 0, &p) != VK_SUCCESS)
        return 1;
    for (size_t i = 0; i < BYTES / 4; i++) bad += ((uint32_t*)p)[i] != (uint32_t)(i * 2654435761u);
    r->UnmapMemory(r->da, r->mem_a);
    return bad == 0;
}
static void rvk_close(rvk* r) {
    if (r->da) {
        if (r->fence) r->DestroyFence(r->da, r->fence, NULL);
        if (r->pool) r->DestroyCommandPool(r->da, r->pool, NULL);
        if (r->dst_a) r->DestroyBuffer(r->da, r->dst_a, NULL);
        if (r->src_c) r->DestroyBuffer(r->da, r->src_c, NULL);
        if (r->mem_c) r->FreeMemory(r->da, r->mem_c, NULL);
        if (r->src_a) r->DestroyBuffer(r->da, r->src_a, NULL);
        if (r->mem_a) r->FreeMemory(r->da, r->mem_a, NULL);
        if (r->mem_imp) r->FreeMemory(r->da, r->mem_imp, NULL);
        r->DestroyDevice(r->da, NULL);
    }
    if (r->db) {
        if (r->src_b) r->DestroyBuffer(r->db, r->src_b, NULL);
        if (r->mem_b) r->FreeMemory(r->db, r->mem_b, NULL);
        r->DestroyDevice(r->db, NULL);
    }
    if (r->inst) r->DestroyInstance(r->inst, NULL);
    if (r->lib) dlclose(r->lib);
    memset(r, 0, sizeof *r);
}
/* Sets up the raw program; 0 (and why, on stdout) where the driver cannot. */
static int rvk_open(rvk* r) {
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "raw", 1, "raw", 1, VK_API_VERSION_1_2 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL };
    VkQueueFamilyProperties fam[16];
    VkMemoryGetFdInfoKHR gi = { VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, NULL, VK_NULL_HANDLE,
                                VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkCommandPoolCreateInfo pci = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, 0 };
    VkCommandBufferAllocateInfo cai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, VK_NULL_HANDLE,
                                        VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, NULL };
    VkFenceCreateInfo fci = { VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0 };
    VkBufferCopy region = { 0, 0, BYTES };
    uint32_t n = 1, nf = 16;
    int fd = -1;
    memset(r, 0, sizeof *r);
    if ((r->gipa = bench_vk_open(&r->lib)) == NULL) return 0;
    rvk_load(r, VK_NULL_HANDLE);
    if (r->CreateInstance(&ici, NULL, &r->inst) != VK_SUCCESS) return 0;
    rvk_load(r, VK_NULL_HANDLE);
    if (r->EnumeratePhysicalDevices(r->inst, &n, &r->phys) < 0 || n == 0) return 0;
    r->GetPhysicalDeviceQueueFamilyProperties(r->phys, &nf, fam);
    for (r->family = 0; r->family < nf && !(fam[r->family].queueFlags & VK_QUEUE_COMPUTE_BIT); r->family++) { }
    r->GetPhysicalDeviceMemoryProperties(r->phys, &r->props);
    if (r->family == nf || !(r->da = rvk_device(r)) || !(r->db = rvk_device(r))) return 0;
    rvk_load(r, r->da);   /* device-level entry points of A; B's are the same driver's (one physical device) */
    r->GetDeviceQueue(r->da, r->family, 0, &r->qa);
    if (!rvk_buffer(r, r->db, 1, -1, &r->src_b, &r->mem_b, &r->type_b)) return 0;
    gi.memory = r->mem_b;
    if (!r->GetMemoryFdKHR || r->GetMemoryFdKHR(r->db, &gi, &fd) != VK_SUCCESS) return 0;
    r->type_a = r->type_b;   /* an import takes the exporter's memory type (one physical device) */
    if (!rvk_buffer(r, r->da, 0, fd, &r->src_a, &r->mem_imp, &r->type_a)) { close(fd); return 0; }
    if (!rvk_buffer(r, r->da, 0, -1, &r->dst_a, &r->mem_a, &r->type_a)) return 0;
    pci.queueFamilyIndex = r->family;
    if (r->CreateCommandPool(r->da, &pci, NULL, &r->pool) != VK_SUCCESS) return 0;
    cai.commandPool = r->pool;
    if (r->AllocateCommandBuffers(r->da, &cai, &r->cb) != VK_SUCCESS) return 0;
    r->BeginCommandBuffer(r->cb, &bi);
    r->CmdCopyBuffer(r->cb, r->src_a, r->dst_a, 1, &region);
    if (r->EndCommandBuffer(r->cb) != VK_SUCCESS || r->CreateFence(r->da, &fci, NULL, &r->fence) != VK_SUCCESS)
        return 0;
    rvk_fill(r);
    return 1;
}
/* Row 9's raw floor, the Vulkan side: fd (CUDA memory of the same GPU, BYTES) imported on A into the
   device-local type its buffer takes, and a command buffer recorded once that copies it into A's own
   buffer (cleared first, where it is host-visible, so that rvk_check sees this copy's bytes). */
static int rvk_import_cuda(rvk* r, int fd) {
    VkCommandBufferAllocateInfo cai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, r->pool,
                                        VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, NULL };
    VkBufferCopy region = { 0, 0, BYTES };
    uint32_t type = UINT32_MAX;
    void* p = NULL;
    if (!rvk_buffer(r, r->da, 0, fd, &r->src_c, &r->mem_c, &type)) {
        if (!r->mem_c) close(fd);   /* the driver's once imported */
        return 0;
    }
    if (r->AllocateCommandBuffers(r->da, &cai, &r->cb_c) != VK_SUCCESS) return 0;
    r->BeginCommandBuffer(r->cb_c, &bi);
    r->CmdCopyBuffer(r->cb_c, r->src_c, r->dst_a, 1, &region);
    if (r->EndCommandBuffer(r->cb_c) != VK_SUCCESS) return 0;
    if ((r->props.memoryTypes[r->type_a].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
        r->MapMemory(r->da, r->mem_a, 0, BYTES, 0, &p) == VK_SUCCESS) {
        memset(p, 0, BYTES);
        r->UnmapMemory(r->da, r->mem_a);
    }
    return 1;
}
/* One copy: submit a recorded command buffer (row 5's, or row 9's), wait for the fence. */
static double rvk_submit(rvk* r, VkCommandBuffer cb) {
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cb, 0, NULL };
    double t0 = now_s();
    if (r->QueueSubmit(r->qa, 1, &si, r->fence) != VK_SUCCESS ||
        r->WaitForFences(r->da, 1, &r->fence, VK_TRUE, UINT64_MAX) != VK_SUCCESS)
        return -1;
    t0 = now_s() - t0;
    r->ResetFences(r->da, 1, &r->fence);
    return t0;
}
static double rvk_copy(void* p) { return rvk_submit((rvk*)p, ((rvk*)p)->cb); }
static double rvk_copy_cuda(void* p) { return rvk_submit((rvk*)p, ((rvk*)p)->cb_c); }
#endif

/* ==== the raw floor of row 8: the same exported memory imported into CUDA by hand ====
   Another fd of row 5's exported memory (device B's) imported with cuImportExternalMemory and mapped
   whole, a cuMemAlloc'ed destination on the primary context of CUDA device 0, one cuMemcpyAsync and a
   cuStreamSynchronize per copy. The driver's calls through cuGetProcAddress_v2, from the library accel
   loaded (ACCEL_CUDA_LIBRARY, else libcuda.so.1). */
typedef unsigned long long rcu_ptr;   /* CUdeviceptr */
#define RCU_FUNCS(X) X(Init, (unsigned)) X(DeviceGet, (int*, int)) X(DevicePrimaryCtxRetain, (void**, int)) \
    X(DevicePrimaryCtxRelease, (int)) X(CtxSetCurrent, (void*)) X(StreamCreate, (void**, unsigned)) \
    X(StreamDestroy, (void*)) X(StreamSynchronize, (void*)) X(MemAlloc, (rcu_ptr*, size_t)) X(MemFree, (rcu_ptr)) \
    X(MemcpyAsync, (rcu_ptr, rcu_ptr, size_t, void*)) X(MemcpyDtoHAsync, (void*, rcu_ptr, size_t, void*)) \
    X(ImportExternalMemory, (void**, const void*)) X(ExternalMemoryGetMappedBuffer, (rcu_ptr*, void*, const void*)) \
    X(DestroyExternalMemory, (void*)) X(MemcpyHtoDAsync, (rcu_ptr, const void*, size_t, void*)) \
    X(MemCreate, (unsigned long long*, size_t, const accel_cu_mem_prop*, unsigned long long)) \
    X(MemRelease, (unsigned long long)) X(MemAddressFree, (rcu_ptr, size_t)) \
    X(MemAddressReserve, (rcu_ptr*, size_t, size_t, rcu_ptr, unsigned long long)) \
    X(MemMap, (rcu_ptr, size_t, size_t, unsigned long long, unsigned long long)) \
    X(MemUnmap, (rcu_ptr, size_t)) X(MemSetAccess, (rcu_ptr, size_t, const accel_cu_mem_access*, size_t)) \
    X(MemExportToShareableHandle, (void*, unsigned long long, int, unsigned long long)) \
    X(MemsetD8Async, (rcu_ptr, unsigned char, size_t, void*))
typedef struct rcu {
    void* lib;
#define RCU_MEMBER(n, params) int (*n) params;
    RCU_FUNCS(RCU_MEMBER)
    int dev;
    void *ctx, *stream, *ext;
    rcu_ptr src, dst;              /* the mapped import; cuMemAlloc's */
    rcu_ptr vmm;                   /* row 9: exportable memory (cuMemCreate), mapped */
} rcu;
static int rcu_load(rcu* c) {
    bench_cu_gpa gpa = bench_cu_open(&c->lib);
    if (!gpa) return 0;
#define RCU_LOAD(n, params) BENCH_CU_LOAD(gpa, c, n)
    RCU_FUNCS(RCU_LOAD)
    return 1;
}
static void rcu_close(rcu* c) {
    if (c->ctx) {
        c->CtxSetCurrent(c->ctx);
        if (c->dst) c->MemFree(c->dst);
        if (c->src) c->MemFree(c->src);
        if (c->vmm) { c->MemUnmap(c->vmm, BYTES); c->MemAddressFree(c->vmm, BYTES); }
        if (c->ext) c->DestroyExternalMemory(c->ext);
        if (c->stream) c->StreamDestroy(c->stream);
        c->DevicePrimaryCtxRelease(c->dev);
    }
    if (c->lib) dlclose(c->lib);
    memset(c, 0, sizeof *c);
}
/* Sets up the raw side over r's exported memory; 0 where it cannot (then row 8 has no raw side). */
static int rcu_open(rcu* c, rvk* r) {
    struct { int type; union { int fd; struct { void* h; const void* n; } w; } handle;
             unsigned long long size; unsigned flags, reserved[16]; } md;
    struct { unsigned long long offset, size; unsigned flags, reserved[16]; } bd;
    VkMemoryGetFdInfoKHR gi = { VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, NULL, r->mem_b,
                                VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT };
    int fd = -1;
    memset(c, 0, sizeof *c);
    if (!rcu_load(c) || c->Init(0) != 0 || c->DeviceGet(&c->dev, 0) != 0 ||
        c->DevicePrimaryCtxRetain(&c->ctx, c->dev) != 0)
        return 0;
    if (c->CtxSetCurrent(c->ctx) != 0 || c->StreamCreate(&c->stream, 1u) != 0 || c->MemAlloc(&c->dst, BYTES) != 0)
        return 0;
    if (r->GetMemoryFdKHR(r->db, &gi, &fd) != VK_SUCCESS) return 0;
    memset(&md, 0, sizeof md);
    md.type = 1;   /* CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD */
    md.handle.fd = fd;
    md.size = r->size_b;
    if (c->ImportExternalMemory(&c->ext, &md) != 0) { close(fd); return 0; }
    memset(&bd, 0, sizeof bd);
    bd.size = BYTES;
    return c->ExternalMemoryGetMappedBuffer(&c->src, c->ext, &bd) == 0;
}
/* Pinned memory of c's device, exportable as a POSIX fd, and read-write access to it for that device */
static void rcu_vmm_desc(const rcu* c, accel_cu_mem_prop* prop, accel_cu_mem_access* acc) {
    memset(prop, 0, sizeof *prop);
    prop->type = ACCEL_CU_MEM_PINNED;
    prop->handle_types = ACCEL_CU_MEM_HANDLE_POSIX_FD;
    prop->location.type = ACCEL_CU_MEM_LOCATION_DEVICE;
    prop->location.id = c->dev;
    acc->location = prop->location;
    acc->flags = ACCEL_CU_MEM_ACCESS_READWRITE;
}
/* Row 9's raw floor, the CUDA side: 64 MiB of cuMemCreate memory (exportable as a POSIX fd) mapped and
   holding the pattern; *fd: its export (-1 where the driver cannot). */
static int rcu_export(rcu* c, int* fd) {
    accel_cu_mem_prop prop;
    accel_cu_mem_access acc;
    unsigned long long h = 0;
    uint32_t* w = (uint32_t*)malloc(BYTES);
    int ok;
    *fd = -1;
    rcu_vmm_desc(c, &prop, &acc);
    ok = w && c->MemCreate && c->MemCreate(&h, BYTES, &prop, 0) == 0;
    if (ok && c->MemAddressReserve(&c->vmm, BYTES, 0, 0, 0) != 0) c->vmm = 0;
    if (ok && c->vmm && (c->MemMap(c->vmm, BYTES, 0, h, 0) != 0 ||
                         c->MemSetAccess(c->vmm, BYTES, &acc, 1) != 0))
        ok = 0;   /* rcu_close unmaps and frees the range */
    ok = ok && c->vmm && c->MemExportToShareableHandle(fd, h, ACCEL_CU_MEM_HANDLE_POSIX_FD, 0) == 0;
    for (size_t i = 0; ok && i < BYTES / 4; i++) w[i] = (uint32_t)(i * 2654435761u);
    ok = ok && c->MemcpyHtoDAsync(c->vmm, w, BYTES, c->stream) == 0 && c->StreamSynchronize(c->stream) == 0;
    if (h) c->MemRelease(h);
    free(w);
    if (!ok && *fd >= 0) { close(*fd); *fd = -1; }
    return ok;
}
static double rcu_copy(void* p) {
    rcu* c = (rcu*)p;
    double t0 = now_s();
    c->CtxSetCurrent(c->ctx);
    if (c->MemcpyAsync(c->dst, c->src, BYTES, c->stream) != 0 || c->StreamSynchronize(c->stream) != 0) return -1;
    return now_s() - t0;
}
/* the raw copy's bytes, where B's memory took the pattern (host-visible: rvk_fill) */
static int rcu_check(rcu* c, rvk* r) {
    uint32_t* got;
    size_t bad = 0;
    if (!(r->props.memoryTypes[r->type_b].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) return 1;
    if (!(got = (uint32_t*)malloc(BYTES))) return 0;
    if (c->MemcpyDtoHAsync(got, c->dst, BYTES, c->stream) != 0 || c->StreamSynchronize(c->stream) != 0) bad = 1;
    for (size_t i = 0; !bad && i < BYTES / 4; i++) bad += got[i] != (uint32_t)(i * 2654435761u);
    free(got);
    return bad == 0;
}

/* Row 10: what a CUDA buffer costs to make and free while a Vulkan device of its GPU is open (4 MiB,
   exportable: cuMemCreate memory, mapped, zeroed), beside a raw program's own exportable allocation
   (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess, a zeroing cuMemsetD8Async and its
   sync, then cuMemUnmap, cuMemAddressFree, cuMemRelease); the plain cuMemAlloc pair, zeroed the same
   way, is printed beside it (what the device costs alone). Times per buffer, 20 a round. */
#define ALLOC_BYTES ((size_t)4 << 20)
typedef struct alloc_ctx { accel_device* cu; rcu* c; int exportable; } alloc_ctx;
static double alloc_accel(void* p) {
    alloc_ctx* x = (alloc_ctx*)p;
    accel_buffer_desc d = { .size = ALLOC_BYTES, .memory = ACCEL_MEMORY_DEVICE };
    double t0 = now_s();
    for (int i = 0; i < 20; i++) {
        accel_buffer* b = NULL;
        if (accel_buffer_create(x->cu, &d, &b) != ACCEL_OK) return -1;
        accel_buffer_destroy(b);
    }
    return (now_s() - t0) / 20;
}
static int alloc_raw_one(rcu* c, int exportable) {
    accel_cu_mem_prop prop;
    accel_cu_mem_access acc;
    unsigned long long h = 0;
    rcu_ptr p = 0;
    int ok;
    if (!exportable) {
        if (c->MemAlloc(&p, ALLOC_BYTES) != 0) return 0;
        ok = c->MemsetD8Async(p, 0, ALLOC_BYTES, c->stream) == 0 && c->StreamSynchronize(c->stream) == 0;
        return c->MemFree(p) == 0 && ok;
    }
    rcu_vmm_desc(c, &prop, &acc);
    if (c->MemCreate(&h, ALLOC_BYTES, &prop, 0) != 0) return 0;
    ok = c->MemAddressReserve(&p, ALLOC_BYTES, 0, 0, 0) == 0;
    if (ok && c->MemMap(p, ALLOC_BYTES, 0, h, 0) == 0) {   /* unmapped whatever failed after the map */
        ok = c->MemSetAccess(p, ALLOC_BYTES, &acc, 1) == 0 &&
             c->MemsetD8Async(p, 0, ALLOC_BYTES, c->stream) == 0 && c->StreamSynchronize(c->stream) == 0;
        ok = c->MemUnmap(p, ALLOC_BYTES) == 0 && ok;
    } else {
        ok = 0;
    }
    if (p) c->MemAddressFree(p, ALLOC_BYTES);
    c->MemRelease(h);
    return ok;
}
static double alloc_raw(void* p) {
    alloc_ctx* x = (alloc_ctx*)p;
    double t0 = now_s();
    x->c->CtxSetCurrent(x->c->ctx);
    for (int i = 0; i < 20; i++)
        if (!alloc_raw_one(x->c, x->exportable)) return -1;
    return (now_s() - t0) / 20;
}
static void alloc_row(accel_device* cu, rcu* c) {
    alloc_ctx a = { cu, c, 1 }, plain = { cu, c, 0 };
    double ta, tr, paired, tp, tq, pq;
    accel_buffer_desc d = { .size = ALLOC_BYTES, .memory = ACCEL_MEMORY_DEVICE };
    accel_buffer* b = NULL;
    if (!c || accel_buffer_create(cu, &d, &b) != ACCEL_OK) {
        printf("bench_devices: row 10: no raw side\n");
        return;
    }
    if (((accel_i_cu_buffer*)b)->vmm_size == 0)
        printf("bench_devices: row 10: the buffer is not exportable\n");
    accel_buffer_destroy(b);
    alternate(alloc_accel, &a, alloc_raw, &a, &ta, &tr, &paired);
    alternate(alloc_raw, &plain, NULL, NULL, &tp, &tq, &pq);
    if (ta < 0 || tr < 0 || tp < 0) { printf("bench_devices: row 10: a call failed\n"); failures++; return; }
    printf("%-52s | %7.1f us   | %-26s %7.1f us   | %5.2f | %5.2f\n",
           "10 cuda buffer make+free, 4 MiB, exportable", ta * 1e6, "raw cuMemCreate+map+zero", tr * 1e6,
           tr / ta, paired);
    printf("   (raw cuMemAlloc+zero+cuMemFree: %.1f us)\n", tp * 1e6);
    printf("BENCH {\"figure\":\"10 cuda buffer make+free, exportable\",\"accel_us\":%.2f,\"baseline\":"
           "\"raw cuMemCreate+map+zero\",\"baseline_us\":%.2f,\"ratio\":%.3f,\"paired_ratio\":%.3f,"
           "\"raw_cuMemAlloc_us\":%.2f}\n", ta * 1e6, tr * 1e6, tr / ta, paired, tp * 1e6);
}
/* Row 9: a Vulkan queue copies a CUDA buffer: imported where the CUDA device exports its memory (beside
   the raw program's own import: rcu_export, rvk_import_cuda), else staged (beside a double-buffered
   copy through the host). */
static void cuda_to_vulkan_row(accel_device* vk, accel_device* cu, rvk* raw, rcu* c) {
    accel_peer_info pi;
    int fd = -1, raw_ok = c && rcu_export(c, &fd) && rvk_import_cuda(raw, fd);
    if (raw_ok && (rvk_copy_cuda(raw) < 0 || !rvk_check(raw))) {
        printf("bench_devices: the raw Vulkan import of CUDA memory: WRONG bytes\n");
        failures++;
    }
    if (accel_device_peer_info(vk, cu, &pi) != ACCEL_OK || !pi.direct_copy) {
        printf("bench_devices: row 9: direct_copy 0 (the CUDA device exports no memory): staged\n");
        row("9 vulkan queue <- cuda device, one GPU (staged)", vk, vk, cu, 5, "double-buffered via host");
        return;
    }
    if (!raw_ok)
        printf("bench_devices: no raw import of CUDA memory here: row 9 without a raw side\n");
    row_with("9 vulkan queue <- cuda device, one GPU (imported)", vk, vk, cu, 0,
             raw_ok ? rvk_copy_cuda : NULL, raw, "raw imported vkCmdCopyBuffer");
}
/* CUDA and Vulkan on one GPU: rows 8 (a CUDA queue, the Vulkan buffer imported) and 9 (a Vulkan queue,
   the CUDA buffer). On the mock, it is made to claim the Vulkan device's uuid first. */
static void cuda_vulkan_pairs(accel_device* vk, rvk* raw, int raw_ok) {
    accel_device_desc cd = { .backend = accel_cuda_backend() };
    accel_device* cu = NULL;
    accel_device_info vi, ci;
    accel_peer_info pi;
    const char* lib = getenv("ACCEL_CUDA_LIBRARY");
    char hex[33];
    rcu c;
    int c_ok = 0;
    memset(&c, 0, sizeof c);
    accel_device_info_get(vk, &vi);
    if (lib && strstr(lib, "mock") && !getenv("MOCK_CUDA_UUID")) {
        for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", vi.uuid[i]);
        setenv("MOCK_CUDA_UUID", hex, 1);
    }
    if (accel_device_create(&cd, &cu) != ACCEL_OK || accel_device_info_get(cu, &ci) != ACCEL_OK ||
        memcmp(ci.uuid, vi.uuid, 16) != 0) {
        printf("bench_devices: no CUDA device on the Vulkan device's GPU: rows 8-9 skipped\n");
        accel_device_destroy(cu);
        return;
    }
    printf("cuda: %s (the Vulkan device's uuid)\n", ci.name);
    if (accel_device_peer_info(cu, vk, &pi) == ACCEL_OK && !pi.direct_copy)
        printf("bench_devices: row 8: direct_copy 0 (the Vulkan device exports no memory)\n");
    if (raw_ok && (c_ok = rcu_open(&c, raw)) != 0 && (rcu_copy(&c) < 0 || !rcu_check(&c, raw))) {
        printf("bench_devices: the raw CUDA import: WRONG bytes\n");
        failures++;
    }
    if (!c_ok) printf("bench_devices: the raw CUDA import could not be set up here: row 8 without a raw side\n");
    row_with("8 cuda queue <- vulkan device, one GPU (imported)", cu, cu, vk, 0, c_ok ? rcu_copy : NULL, &c,
             "raw imported cuMemcpyAsync");
    cuda_to_vulkan_row(vk, cu, raw, c_ok ? &c : NULL);
    alloc_row(cu, c_ok ? &c : NULL);
    if (c_ok || c.lib) rcu_close(&c);
    accel_device_destroy(cu);
}

/* Vulkan to Vulkan, three ways: imported memory (rows 5), staged with memmove (6), staged through the
   bounce buffer (7); the environment is read at device create. */
static void vulkan_pairs(const accel_device_desc* d, accel_device* vk) {
    static const char* const env[3][2] = {
        { NULL, NULL }, { "ACCEL_VULKAN_NO_EXTERNAL_MEMORY", NULL },
        { "ACCEL_VULKAN_NO_EXTERNAL_MEMORY", "ACCEL_VULKAN_NO_MAP_DEVICE" } };
    static const char* const names[3] = { "5 vulkan queue <- other vulkan device (imported)",
                                          "6 the same, staged (no external memory)",
                                          "7 the same, staged, not mapped (bounce)" };
    double t[3] = { -1, -1, -1 };
    rvk raw;
    int raw_ok = rvk_open(&raw);
    if (!raw_ok) printf("bench_devices: the raw imported copy could not be set up here: row 5 against the host\n");
    else if (rvk_copy(&raw) < 0 || !rvk_check(&raw)) {
        printf("bench_devices: the raw imported copy: WRONG bytes\n");
        failures++;
    }
    for (int k = 0; k < 3; k++) {
        accel_device *x = NULL, *y = NULL;
        accel_peer_info pi;
        for (int e = 0; e < 2; e++) if (env[k][e]) setenv(env[k][e], "1", 1);
        if (accel_device_create(d, &x) == ACCEL_OK && accel_device_create(d, &y) == ACCEL_OK &&
            accel_device_peer_info(x, y, &pi) == ACCEL_OK) {
            if (pi.direct_copy != (k == 0)) printf("bench_devices: row %s: direct_copy %d\n", names[k],
                                                   (int)pi.direct_copy);
            if (k == 0 && raw_ok) t[k] = row_with(names[k], x, x, y, 0, rvk_copy, &raw, "raw imported vkCmdCopyBuffer");
            else if (k == 2) t[k] = row(names[k], x, x, y, 5, "double-buffered via host");
            else t[k] = row(names[k], x, x, y, 4, "read+write via host");
        }
        for (int e = 0; e < 2; e++) if (env[k][e]) unsetenv(env[k][e]);
        accel_device_destroy(x);
        accel_device_destroy(y);
    }
    cuda_vulkan_pairs(vk, &raw, raw_ok);
    rvk_close(&raw);
    if (t[0] > 0 && t[1] > 0 && t[2] > 0) {
        printf("vulkan to vulkan: imported is %.2fx staged (memmove), %.2fx staged (bounce), in time\n",
               t[1] / t[0], t[2] / t[0]);
        printf("BENCH {\"figure\":\"vulkan imported vs staged\",\"factor_memmove\":%.3f,"
               "\"factor_bounce\":%.3f}\n", t[1] / t[0], t[2] / t[0]);
    }
}

int main(int argc, char** argv) {
    accel_device *cpu = NULL, *cpu2 = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) runs = 3;
        else { fprintf(stderr, "usage: %s [--quick]\n", argv[0]); return 2; }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (accel_device_create(NULL, &cpu) != ACCEL_OK || accel_device_create(NULL, &cpu2) != ACCEL_OK) return 1;
    printf("peer copies of %zu MiB, median of %d, GB/s       | accel          | raw (the same data moved)"
           "          | ratio raw time / accel time | paired\n", BYTES >> 20, runs);
    row("1 cpu queue <- other cpu device", cpu, cpu, cpu2, 1, "memcpy");
#ifdef BENCH_HAVE_VULKAN
    {
        accel_device *vk = NULL;
        accel_device_desc d = { .backend = accel_vulkan_backend() };
        accel_device_info info;
        if (accel_device_create(&d, &vk) == ACCEL_OK) {
            accel_device_info_get(vk, &info);
            printf("vulkan: %s\n", info.name);
            row("2 vulkan queue, within its device", vk, vk, vk, 0, NULL);
            row("3 vulkan queue <- cpu device (direct)", vk, vk, cpu, 2, "accel_buffer_write");
            row("4 cpu queue <- vulkan device (direct)", cpu, cpu, vk, 3, "accel_buffer_read");
            vulkan_pairs(&d, vk);
        } else {
            printf("bench_devices: no Vulkan device: rows 2-7 skipped\n");
        }
        accel_device_destroy(vk);
    }
#else
    printf("bench_devices: built without Vulkan (-DBENCH_HAVE_VULKAN): rows 2-7 skipped\n");
#endif
    accel_device_destroy(cpu);
    accel_device_destroy(cpu2);
    printf("%d verification failure(s)\n", failures);
    return failures ? 1 : 0;
}
