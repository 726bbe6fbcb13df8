/* bench/shared_waits.c — waits across two devices of one GPU through a shared timeline semaphore
   (DESIGN 7.2; accel.h, "Waits across devices") next to the raw program that does the same, in one
   run. A step: a Vulkan queue signals s = i, a queue of another device waits for s >= i and signals
   t = i, the host waits for t >= i (one step in flight). Rows (median ns per step over RUNS runs of
   STEPS steps):

     1 accel, Vulkan -> CUDA: the CUDA queue waits on s's semaphore imported into CUDA
       (cuWaitExternalSemaphoresAsync), where the Vulkan driver exports timeline semaphores
     2 raw: a VkDevice's exportable timeline semaphore, signalled by an empty vkQueueSubmit, imported
       with cuImportExternalSemaphore; cuWaitExternalSemaphoresAsync, then cuStreamWriteValue64 of a
       pinned word the host spins on                                          target: row 1 <= 1.2x
     3 accel, Vulkan -> Vulkan: a queue of a second accel device on the GPU waits on s's semaphore
       imported into its VkDevice (a wait operation of its vkQueueSubmit)
     4 raw: two VkDevices, the first one's exportable timeline semaphore imported into the second;
       per step an empty submit signals it, the second device's submit waits for it and signals its
       own, the host waits for that with vkWaitSemaphores
     5 accel, CUDA -> Vulkan, the other way: a CUDA queue signals s = i, and the Vulkan queue waits
       for it on the GPU through a semaphore it lends CUDA (a relay: a stream of the CUDA device
       waits for the point's progress word, then cuSignalExternalSemaphoresAsync), where the Vulkan
       driver exports timeline semaphores; the host waits for the Vulkan queue's signal
     6 raw: the VkDevice's exportable timeline semaphore imported into CUDA; per step
       cuSignalExternalSemaphoresAsync on a stream, a vkQueueSubmit that waits for it and signals a
       semaphore of its own, the host waits for that with vkWaitSemaphores     target: row 5 <= 1.2x

   Rounds alternate accel and raw (who goes first rotating); "paired" is the median over rounds of each
   round's ratio. Where the Vulkan driver exports no timeline semaphores (lavapipe 22.3), there is no
   raw program and accel's waits are gated on the host (peer_info.device_waits 0): the accel rows run
   for information and say so. The CUDA rows need a CUDA device with the Vulkan device's uuid (a GPU;
   on the mock, ACCEL_CUDA_LIBRARY=build/mock/libcuda_mock.so, the bench sets MOCK_CUDA_UUID to the
   Vulkan device's). Exits 77 without a Vulkan device, 1 when a step read a wrong value.

   make bench-shared-waits   (BENCH_ARGS=--quick: 3 runs of 200 steps) */
#define _GNU_SOURCE 1
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#define ACCEL_VULKAN_IMPLEMENTATION
#include "accel_vulkan.h"
#define ACCEL_CUDA_IMPLEMENTATION
#include "accel_cuda.h"
#include "bench/bench.h"
#include "bench/raw_gpu.h"
#include <sched.h>
#include <unistd.h>

static int runs = 7, steps = 2000, failures = 0;

/* ==== accel's side ==== */
typedef struct acc {
    accel_queue *vq, *oq;          /* the queue that signals (Vulkan; row 5: CUDA), the other's that waits */
    accel_signal *s, *t;
    uint64_t v;
    bool device_waits;
} acc;
/* from's queue signals, other's waits (rows 1 and 3: from is the Vulkan device; row 5: the CUDA one) */
static int acc_open(acc* a, accel_device* from, accel_device* other) {
    accel_peer_info pi;
    memset(a, 0, sizeof *a);
    if (accel_queue_create(from, ACCEL_QUEUE_COMPUTE, &a->vq) != ACCEL_OK ||
        accel_queue_create(other, ACCEL_QUEUE_COMPUTE, &a->oq) != ACCEL_OK ||
        accel_signal_create(from, 0, &a->s) != ACCEL_OK || accel_signal_create(other, 0, &a->t) != ACCEL_OK ||
        accel_device_peer_info(other, from, &pi) != ACCEL_OK)
        return 0;
    a->device_waits = pi.device_waits;
    return 1;
}
static void acc_close(acc* a) {
    if (a->vq) accel_queue_finish(a->vq, ACCEL_WAIT_FOREVER);
    if (a->oq) accel_queue_finish(a->oq, ACCEL_WAIT_FOREVER);
    accel_queue_destroy(a->vq);
    accel_queue_destroy(a->oq);
    accel_signal_destroy(a->s);
    accel_signal_destroy(a->t);
}
static double acc_run(void* p) {
    acc* a = (acc*)p;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < steps; i++) {
        uint64_t v = ++a->v;
        accel_queue_signal(a->vq, a->s, v);
        accel_queue_wait(a->oq, a->s, v);
        accel_queue_signal(a->oq, a->t, v);
        if (accel_queue_submit(a->vq) != ACCEL_OK || accel_queue_submit(a->oq) != ACCEL_OK ||
            accel_signal_wait(a->t, v, ACCEL_WAIT_FOREVER) != ACCEL_OK || accel_signal_value(a->t) != v) {
            failures++;
            return -1;
        }
    }
    return (double)(bench_now_ns() - t0) / steps;
}

/* ==== the raw programs ==== */
#define RVK_FUNCS(X) X(CreateInstance) X(DestroyInstance) X(EnumeratePhysicalDevices) \
    X(GetPhysicalDeviceQueueFamilyProperties) X(GetPhysicalDeviceExternalSemaphoreProperties) X(CreateDevice) \
    X(DestroyDevice) X(GetDeviceProcAddr) X(GetDeviceQueue) X(CreateSemaphore) X(DestroySemaphore) \
    X(GetSemaphoreFdKHR) X(ImportSemaphoreFdKHR) X(QueueSubmit) X(WaitSemaphores) X(DeviceWaitIdle)
typedef struct rvk {
    void* lib;
    PFN_vkGetInstanceProcAddr gipa;
#define RVK_MEMBER(n) PFN_vk##n n;
    RVK_FUNCS(RVK_MEMBER)
    VkInstance inst;
    VkPhysicalDevice phys;
    VkDevice da, db;
    VkQueue qa, qb;
    VkSemaphore sa, imp, sb, sa2;  /* A's exported; its import into B; B's own; A's own */
    uint64_t v;
} rvk;
static void rvk_load(rvk* r, VkDevice d) {
#define RVK_LOAD(n) BENCH_VK_LOAD(r, d, n)
    RVK_FUNCS(RVK_LOAD)
}
static VkSemaphore rvk_timeline(rvk* r, VkDevice d, int exportable) {
    VkExportSemaphoreCreateInfo ex = { VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO, NULL,
                                       VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkSemaphoreTypeCreateInfo ty = { VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, exportable ? &ex : NULL,
                                     VK_SEMAPHORE_TYPE_TIMELINE, 0 };
    VkSemaphoreCreateInfo ci = { VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &ty, 0 };
    VkSemaphore s = VK_NULL_HANDLE;
    return r->CreateSemaphore(d, &ci, NULL, &s) == VK_SUCCESS ? s : VK_NULL_HANDLE;
}
/* A new fd of A's semaphore (-1: none). */
static int rvk_fd(rvk* r) {
    VkSemaphoreGetFdInfoKHR gi = { VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, NULL, r->sa,
                                   VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    int fd = -1;
    return r->GetSemaphoreFdKHR(r->da, &gi, &fd) == VK_SUCCESS ? fd : -1;
}
static VkDevice rvk_device(rvk* r, uint32_t family, VkQueue* q) {
    float prio = 1.0f;
    const char* ext[1] = { VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME };
    VkPhysicalDeviceTimelineSemaphoreFeatures tf = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
                                                     NULL, VK_TRUE };
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, family, 1, &prio };
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &tf, 0, 1, &qci, 0, NULL, 1, ext, NULL };
    VkDevice d = VK_NULL_HANDLE;
    if (r->CreateDevice(r->phys, &dci, NULL, &d) != VK_SUCCESS) return VK_NULL_HANDLE;
    rvk_load(r, d);
    r->GetDeviceQueue(d, family, 0, q);
    return d;
}
static void rvk_close(rvk* r) {
    if (r->da) r->DeviceWaitIdle(r->da);
    if (r->db) r->DeviceWaitIdle(r->db);
    if (r->imp) r->DestroySemaphore(r->db, r->imp, NULL);
    if (r->sb) r->DestroySemaphore(r->db, r->sb, NULL);
    if (r->sa2) r->DestroySemaphore(r->da, r->sa2, NULL);
    if (r->sa) r->DestroySemaphore(r->da, r->sa, NULL);
    if (r->db) r->DestroyDevice(r->db, NULL);
    if (r->da) r->DestroyDevice(r->da, NULL);
    if (r->inst) r->DestroyInstance(r->inst, NULL);
    if (r->lib) dlclose(r->lib);
    memset(r, 0, sizeof *r);
}
/* Two VkDevices on the first physical device, A's semaphore exported and imported into B: 0 where the
   driver exports no timeline semaphores (*why says so). */
static int rvk_open(rvk* r, const char** why) {
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "shared_waits", 1, NULL, 0,
                              VK_API_VERSION_1_2 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL };
    VkSemaphoreTypeCreateInfo ty = { VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, NULL,
                                     VK_SEMAPHORE_TYPE_TIMELINE, 0 };
    VkPhysicalDeviceExternalSemaphoreInfo si = { VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO, &ty,
                                                 VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT };
    VkExternalSemaphoreProperties sp = { VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES, NULL, 0, 0, 0 };
    VkQueueFamilyProperties fam[16];
    uint32_t n = 1, nf = 16, family = UINT32_MAX;
    int fd;
    memset(r, 0, sizeof *r);
    *why = "no Vulkan loader";
    if ((r->gipa = bench_vk_open(&r->lib)) == NULL) return 0;
    rvk_load(r, VK_NULL_HANDLE);
    *why = "no Vulkan device";
    if (r->CreateInstance(&ici, NULL, &r->inst) != VK_SUCCESS) return 0;
    rvk_load(r, VK_NULL_HANDLE);
    if (r->EnumeratePhysicalDevices(r->inst, &n, &r->phys) < 0 || n == 0) return 0;
    *why = "the Vulkan driver exports no timeline semaphores as opaque fds";
    if (!r->GetPhysicalDeviceExternalSemaphoreProperties) return 0;
    r->GetPhysicalDeviceExternalSemaphoreProperties(r->phys, &si, &sp);
    if (!(sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT) ||
        !(sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT))
        return 0;
    r->GetPhysicalDeviceQueueFamilyProperties(r->phys, &nf, fam);
    for (uint32_t i = 0; i < nf && family == UINT32_MAX; i++)
        if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
    *why = "a raw device, semaphore or import failed";
    if (family == UINT32_MAX || !(r->da = rvk_device(r, family, &r->qa)) || !(r->db = rvk_device(r, family, &r->qb)))
        return 0;
    if (!(r->sa = rvk_timeline(r, r->da, 1)) || !(r->sb = rvk_timeline(r, r->db, 0)) ||
        !(r->sa2 = rvk_timeline(r, r->da, 0)) ||
        !(r->imp = rvk_timeline(r, r->db, 0)) || (fd = rvk_fd(r)) < 0)
        return 0;
    {
        VkImportSemaphoreFdInfoKHR ii = { VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR, NULL, r->imp, 0,
                                          VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT, fd };
        if (r->ImportSemaphoreFdKHR(r->db, &ii) != VK_SUCCESS) { close(fd); return 0; }
    }
    return 1;
}
/* One empty submission on q: waits for wait >= wv (wait VK_NULL_HANDLE: none), signals sig = sv. */
static int rvk_submit(rvk* r, VkQueue q, VkSemaphore wait, uint64_t wv, VkSemaphore sig, uint64_t sv) {
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo ti = { VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, NULL, wait ? 1u : 0u, &wv,
                                         1, &sv };
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti, wait ? 1u : 0u, &wait, &stage, 0, NULL, 1, &sig };
    return r->QueueSubmit(q, 1, &si, VK_NULL_HANDLE) == VK_SUCCESS;
}
/* Row 4's raw step, steps times. */
static double rvk_run(void* p) {
    rvk* r = (rvk*)p;
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < steps; i++) {
        uint64_t v = ++r->v;
        VkSemaphoreWaitInfo wi = { VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, NULL, 0, 1, &r->sb, &v };
        if (!rvk_submit(r, r->qa, VK_NULL_HANDLE, 0, r->sa, v) || !rvk_submit(r, r->qb, r->imp, v, r->sb, v) ||
            r->WaitSemaphores(r->db, &wi, UINT64_MAX) != VK_SUCCESS) {
            failures++;
            return -1;
        }
    }
    return (double)(bench_now_ns() - t0) / steps;
}

/* Row 2's CUDA side: A's semaphore imported into CUDA device 0's primary context. The driver's calls
   through cuGetProcAddress_v2, from the library accel loaded (ACCEL_CUDA_LIBRARY, else libcuda.so.1). */
typedef unsigned long long rcu_ptr;   /* CUdeviceptr */
#define RCU_FUNCS(X) X(Init, (unsigned)) X(DeviceGet, (int*, int)) X(DevicePrimaryCtxRetain, (void**, int)) \
    X(DevicePrimaryCtxRelease, (int)) X(CtxSetCurrent, (void*)) X(StreamCreate, (void**, unsigned)) \
    X(StreamDestroy, (void*)) X(StreamSynchronize, (void*)) X(MemHostAlloc, (void**, size_t, unsigned)) \
    X(MemHostGetDevicePointer, (rcu_ptr*, void*, unsigned)) X(MemFreeHost, (void*)) \
    X(StreamWriteValue64, (void*, rcu_ptr, unsigned long long, unsigned)) \
    X(ImportExternalSemaphore, (void**, const accel_cu_extsem_desc*)) \
    X(WaitExternalSemaphoresAsync, (void* const*, const accel_cu_extsem_wait*, unsigned, void*)) \
    X(SignalExternalSemaphoresAsync, (void* const*, const accel_cu_extsem_signal*, unsigned, void*)) \
    X(DestroyExternalSemaphore, (void*))
typedef struct rcu {
    void* lib;
#define RCU_MEMBER(n, params) int (*n) params;
    RCU_FUNCS(RCU_MEMBER)
    int dev;
    void *ctx, *stream, *sem, *host;
    rcu_ptr word;
    rvk* vk;
} rcu;
static int rcu_open(rcu* c, rvk* r) {
    accel_cu_extsem_desc sd;
    bench_cu_gpa gpa;
    int fd;
    memset(c, 0, sizeof *c);
    c->vk = r;
    if ((gpa = bench_cu_open(&c->lib)) == NULL) return 0;
#define RCU_LOAD(n, params) BENCH_CU_LOAD(gpa, c, n)
    RCU_FUNCS(RCU_LOAD)
    if (c->Init(0) != 0 || c->DeviceGet(&c->dev, 0) != 0 || c->DevicePrimaryCtxRetain(&c->ctx, c->dev) != 0 ||
        c->CtxSetCurrent(c->ctx) != 0 || c->StreamCreate(&c->stream, 1u) != 0 ||
        c->MemHostAlloc(&c->host, 64, ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP) != 0 ||
        c->MemHostGetDevicePointer(&c->word, c->host, 0) != 0 || (fd = rvk_fd(r)) < 0)
        return 0;
    *(volatile uint64_t*)c->host = 0;
    memset(&sd, 0, sizeof sd);
    sd.type = ACCEL_CU_EXTSEM_TIMELINE_FD;
    sd.handle.fd = fd;
    if (c->ImportExternalSemaphore(&c->sem, &sd) != 0) { close(fd); return 0; }
    return 1;
}
static void rcu_close(rcu* c) {
    if (c->ctx) {
        c->CtxSetCurrent(c->ctx);
        if (c->stream) c->StreamSynchronize(c->stream);
        if (c->sem) c->DestroyExternalSemaphore(c->sem);
        if (c->host) c->MemFreeHost(c->host);
        if (c->stream) c->StreamDestroy(c->stream);
        c->DevicePrimaryCtxRelease(c->dev);
    }
    if (c->lib) dlclose(c->lib);
    memset(c, 0, sizeof *c);
}
/* Row 2's raw step, steps times. */
static double rcu_run(void* p) {
    rcu* c = (rcu*)p;
    rvk* r = c->vk;
    volatile uint64_t* word = (volatile uint64_t*)c->host;
    uint64_t t0 = bench_now_ns();
    c->CtxSetCurrent(c->ctx);
    for (int i = 0; i < steps; i++) {
        uint64_t v = ++r->v;
        accel_cu_extsem_wait w;
        memset(&w, 0, sizeof w);
        w.params.fence.value = v;
        if (!rvk_submit(r, r->qa, VK_NULL_HANDLE, 0, r->sa, v) ||
            c->WaitExternalSemaphoresAsync(&c->sem, &w, 1, c->stream) != 0 ||
            c->StreamWriteValue64(c->stream, c->word, v, 0) != 0) {
            failures++;
            return -1;
        }
        for (uint32_t n = 1; *word < v; n++)
            if (n % 64u == 0) sched_yield(); else bench_cpu_relax();
    }
    return (double)(bench_now_ns() - t0) / steps;
}

/* Row 6's raw step, steps times: CUDA raises A's semaphore, A's queue waits for it and signals its own. */
static double rcu_raise_run(void* p) {
    rcu* c = (rcu*)p;
    rvk* r = c->vk;
    uint64_t t0 = bench_now_ns();
    c->CtxSetCurrent(c->ctx);
    for (int i = 0; i < steps; i++) {
        uint64_t v = ++r->v;
        VkSemaphoreWaitInfo wi = { VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, NULL, 0, 1, &r->sa2, &v };
        accel_cu_extsem_signal sg;
        memset(&sg, 0, sizeof sg);
        sg.params.fence.value = v;
        if (c->SignalExternalSemaphoresAsync(&c->sem, &sg, 1, c->stream) != 0 ||
            !rvk_submit(r, r->qa, r->sa, v, r->sa2, v) ||
            r->WaitSemaphores(r->da, &wi, UINT64_MAX) != VK_SUCCESS) {
            failures++;
            return -1;
        }
    }
    return (double)(bench_now_ns() - t0) / steps;
}

/* ==== rows ==== */
typedef double (*side_fn)(void* ctx);
/* accel's row and, where raw is not NULL, the raw row, alternating round by round. */
static void pair_rows(const char* name, side_fn a, void* actx, bool device_waits, side_fn raw, void* rctx,
                      const char* raw_name, int id) {
    double ta[16], tr[16], ratio[16], ma, mr = -1, paired = -1;
    for (int k = 0; k < runs; k++) {
        bool raw_first = raw && k % 2;
        if (raw_first) tr[k] = raw(rctx);
        ta[k] = a(actx);
        if (raw && !raw_first) tr[k] = raw(rctx);
        ratio[k] = raw ? ta[k] / tr[k] : 0;
    }
    ma = bench_median(ta, (size_t)runs);
    if (raw) { mr = bench_median(tr, (size_t)runs); paired = bench_median(ratio, (size_t)runs); }
    printf("%d %-44s %10.0f  %s\n", id, name, ma,
           device_waits ? "(waits on the device)" : "(device_waits 0: gated on the host, information only)");
    if (raw) {
        printf("%d %-44s %10.0f  vs raw %.2f, paired %.2f\n", id + 1, raw_name, mr, ma / mr, paired);
        printf("BENCH shared_waits row=%d ns_per_step=%.0f raw_ns_per_step=%.0f vs_raw=%.3f paired_ratio=%.3f "
               "device_waits=%d\n", id, ma, mr, ma / mr, paired, (int)device_waits);
    } else {
        printf("BENCH shared_waits row=%d ns_per_step=%.0f device_waits=%d\n", id, ma, (int)device_waits);
    }
}
/* A CUDA device on vk's GPU (the mock claims vk's uuid), or NULL. */
static accel_device* cuda_beside(accel_device* vk) {
    accel_device_desc cd = { .backend = accel_cuda_backend() };
    accel_device* cu = NULL;
    accel_device_info vi, ci;
    const char* lib = getenv("ACCEL_CUDA_LIBRARY");
    char hex[33];
    accel_device_info_get(vk, &vi);
    if (lib && strstr(lib, "mock") && !getenv("MOCK_CUDA_UUID")) {
        for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", vi.uuid[i]);
        setenv("MOCK_CUDA_UUID", hex, 1);
    }
    if (accel_device_create(&cd, &cu) != ACCEL_OK || accel_device_info_get(cu, &ci) != ACCEL_OK ||
        memcmp(ci.uuid, vi.uuid, 16) != 0) {
        accel_device_destroy(cu);
        return NULL;
    }
    return cu;
}

int main(int argc, char** argv) {
    accel_device_desc vd = { .backend = accel_vulkan_backend() };
    accel_device *vk = NULL, *vk2 = NULL, *cu = NULL;
    rvk r;
    rcu c;
    acc a;
    const char* why = NULL;
    int raw_ok, cu_ok = 0;
    if (argc > 1 && strcmp(argv[1], "--quick") == 0) { runs = 3; steps = 200; }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (accel_device_create(&vd, &vk) != ACCEL_OK || accel_device_create(&vd, &vk2) != ACCEL_OK) {
        accel_device_destroy(vk);
        printf("shared_waits: no Vulkan device\n");
        return 77;
    }
    cu = cuda_beside(vk);   /* before the signals: they are made exportable while it is open */
    raw_ok = rvk_open(&r, &why);
    if (!raw_ok) printf("shared_waits: no raw program here: %s\n", why);
    memset(&c, 0, sizeof c);
    if (raw_ok && cu && !(cu_ok = rcu_open(&c, &r)))
        printf("shared_waits: the raw CUDA import of the semaphore failed here: row 2 skipped\n");
    printf("%-46s %10s\n", "a Vulkan signal -> other device's queue -> host", "ns/step");
    if (!cu) printf("shared_waits: no CUDA device with the Vulkan device's uuid: rows 1-2 and 5-6 skipped\n");
    else if (acc_open(&a, vk, cu)) pair_rows("accel, Vulkan -> CUDA", acc_run, &a, a.device_waits,
                                             cu_ok ? rcu_run : NULL, &c, "raw cuWaitExternalSemaphoresAsync", 1);
    if (cu) acc_close(&a);
    if (cu && acc_open(&a, cu, vk))   /* the other way: the Vulkan queue lends CUDA a semaphore */
        pair_rows("accel, CUDA -> Vulkan", acc_run, &a, a.device_waits, cu_ok ? rcu_raise_run : NULL, &c,
                  "raw cuSignalExternalSemaphoresAsync", 5);
    if (cu) acc_close(&a);
    if (acc_open(&a, vk, vk2)) pair_rows("accel, Vulkan -> Vulkan (another VkDevice)", acc_run, &a, a.device_waits,
                                         raw_ok ? rvk_run : NULL, &r, "raw imported timeline semaphore", 3);
    acc_close(&a);
    if (cu_ok || c.lib) rcu_close(&c);
    rvk_close(&r);
    accel_device_destroy(cu);
    accel_device_destroy(vk2);
    accel_device_destroy(vk);
    if (failures) printf("shared_waits: %d runs failed or read a wrong value\n", failures);
    return failures ? 1 : 0;
}
