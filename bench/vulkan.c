/* bench/vulkan.c — the accel Vulkan backend next to raw Vulkan code doing the same work, on the same
   physical device, in one run:

     1 dispatch + wait round trip        (latency: accel <= 1.10x raw)
     2 1,000 dispatches in one batch     (throughput, dispatches/s: accel >= 0.95x raw)
     3 SAXPY over 16M floats             (throughput, GB/s: accel >= 0.95x raw)
     4 host set -> GPU wait -> done      (latency from the host setting a signal that a queue waits on
                                          to the host seeing that queue's work done: accel <= 1.10x raw,
                                          lavapipe <= 1.15x)
     5 replay round trip, 1 dispatch      (a recorded list replayed + wait: accel <= 1.05x raw
                                          re-submission of a pre-recorded VkCommandBuffer)
     6 replay of a 1,000-dispatch list    (dispatches/s: accel >= 0.95x raw pre-recorded)
     7 the same, one constant patched     (ns per list: accel <= 1.10x raw pre-recorded)
     8 design rows, raw only (no target): what the ways of replaying with patches cost on this driver
                                          next to re-submitting the pre-recorded 1,000 dispatches:
                                          a secondary command buffer run by vkCmdExecuteCommands; the
                                          list as 32-command secondaries with the chunk holding the
                                          patched command re-recorded; recording all 1,000 anew
     9 dependent chain, one queue        (per step: a small dispatch that waits for the step before and
                                          signals its own value, one submit per step: <= 1.10x raw,
                                          lavapipe <= 1.25x; also the host thread wake-ups of accel's
                                          queue workers per step, which should be 0: DESIGN §6.1)
    10 the chain alternating two queues  (each step waits for the previous one, on the other queue:
                                          <= 1.15x raw)
    11 indirect dispatch round trip      (accel_queue_exec_indirect, vkCmdDispatchIndirect on counts a
                                          kernel of the same batch wrote, + wait | the same two
                                          dispatches with the size given, accel_queue_exec: <= 1.05x;
                                          both sides accel, the baseline is not raw Vulkan)
    12 queue-ordered memory              (a step: fill a 1 MiB scratch, add_one on 64 words of it, copy
                                          them out, signal, submit, wait; its scratch from
                                          accel_queue_alloc / accel_queue_free | the scratch made once:
                                          <= 1.10x; both sides accel. 12c, for information: the same
                                          without the fill)

   The raw side is the minimal program a Vulkan programmer writes by hand: its own VkInstance/VkDevice,
   timeline semaphores, push descriptors. accel runs on that same VkDevice and VkQueue, adopted with
   accel_vulkan_device_adopt (figures 4 and 10: a device of its own where the family has two VkQueues),
   so both sides share the driver's queue and threads. Figures 1, 4, 9, 10 use command buffers recorded once, before
   timing, and per sample exactly one vkQueueSubmit per step (its timeline wait, if any, and its
   timeline signal in the VkSubmitInfo) and one vkWaitSemaphores for the end (figure 4: plus the
   vkSignalSemaphore that releases the wait). Figures 2 and 3 record a command buffer per submission, as
   accel records one per batch. Figure 10 uses two VkQueues where the queue family has two, else one
   (as accel's two queues then share one VkQueue too). Rounds alternate accel and raw (who goes first
   alternates too; a round is a block of samples of one side; the latency figures 1 and 4 run 48
   rounds of 10 samples, so that a slow spell of a shared machine falls on both sides alike); each
   side's figure is the median of its samples, the ratio is accel / raw of those, and "paired_ratio"
   in the BENCH line is the median over rounds of the ratio of the two sides' medians in the same
   round (figure 5: of each sample over the raw one right after it). The chain figures' BENCH lines also carry the wake-ups per
   step of accel's queue workers (the threads accel_queue_create started; voluntary context switches
   from /proc) and of the whole process on each side, and each side's host time to issue a step
   (record + submit, before the final wait).

     make bench-vulkan                      (pins lavapipe where it is installed)
     ./build/bench_vulkan [--quick]         (--quick: small sizes, a few seconds; the CI smoke run)
     ./build/bench_vulkan --only 4 --rounds 64   (one figure, more rounds: to study it)

   Prints the table of bench.h and one BENCH {...} line per figure. Exit status 1 when a result was
   wrong (the targets are reported, not enforced). Linux only (dlopen, /proc for the wake-up count). */
#include "bench.h"            /* first: it asks for the POSIX clocks */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#define ACCEL_VULKAN_IMPLEMENTATION
#include "accel_vulkan.h"
#include <dlfcn.h>

static const uint32_t k_saxpy_spv[] =
#include "saxpy.spv.inc"
;
static const uint32_t k_add_one_spv[] =
#include "add_one.spv.inc"
;

typedef struct cfg_t { bool quick; const char* only; int rounds_arg; int rounds; int latency_iters; int lat_rounds, lat_block; uint32_t batch; size_t saxpy_n; int chain_steps, chain_samples; } cfg_t;
static cfg_t cfg;

static void check(accel_result r, const char* what) {
    if (r != ACCEL_OK) { fprintf(stderr, "bench: %s -> %s\n", what, accel_result_string(r)); exit(1); }
}
static void vcheck(VkResult r, const char* what) {
    if (r != VK_SUCCESS) { fprintf(stderr, "bench: raw %s -> VkResult %d\n", what, (int)r); exit(1); }
}

/* ==== raw Vulkan ==== */
#define RAW_FUNCS(X) \
    X(CreateInstance) X(DestroyInstance) X(EnumeratePhysicalDevices) X(GetPhysicalDeviceQueueFamilyProperties) \
    X(GetPhysicalDeviceMemoryProperties) X(EnumerateDeviceExtensionProperties) X(CreateDevice) X(GetDeviceProcAddr) \
    X(DestroyDevice) X(GetDeviceQueue) X(QueueSubmit) X(DeviceWaitIdle) X(CreateBuffer) X(DestroyBuffer) \
    X(GetBufferMemoryRequirements) X(AllocateMemory) X(FreeMemory) X(BindBufferMemory) X(MapMemory) \
    X(CreateShaderModule) X(DestroyShaderModule) X(CreateDescriptorSetLayout) X(DestroyDescriptorSetLayout) \
    X(CreatePipelineLayout) X(DestroyPipelineLayout) X(CreateComputePipelines) X(DestroyPipeline) \
    X(CreateCommandPool) X(DestroyCommandPool) X(AllocateCommandBuffers) X(BeginCommandBuffer) X(EndCommandBuffer) \
    X(CmdPipelineBarrier) X(CmdBindPipeline) X(CmdPushConstants) X(CmdDispatch) X(CmdPushDescriptorSetKHR) \
    X(CreateSemaphore) X(DestroySemaphore) X(WaitSemaphores) X(SignalSemaphore) X(CmdExecuteCommands) X(FreeCommandBuffers)
typedef struct raw_t {
    void* lib;
    PFN_vkGetInstanceProcAddr gipa;
#define RAW_MEMBER(n) PFN_vk##n n;
    RAW_FUNCS(RAW_MEMBER)
    VkInstance inst;
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue, queue2;     /* queue2: a second VkQueue of the family, else queue */
    uint32_t family;
    VkPhysicalDeviceMemoryProperties mem;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkSemaphore done, gate;
    uint64_t done_val, gate_val;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline saxpy, add_one;
} raw_t;

static void raw_load(raw_t* r) {
#define RAW_LOAD(n) { PFN_vkVoidFunction f_ = r->dev && r->GetDeviceProcAddr && strcmp(#n, "GetDeviceProcAddr") ? r->GetDeviceProcAddr(r->dev, "vk" #n) : NULL; \
                      if (!f_) { f_ = r->gipa(r->inst, "vk" #n); } \
                      memcpy(&r->n, &f_, sizeof f_); }
    RAW_FUNCS(RAW_LOAD)
}
static VkPipeline raw_pipeline(raw_t* r, const uint32_t* spv, size_t size, uint32_t local) {
    VkShaderModuleCreateInfo mi = { VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, size, spv };
    VkShaderModule m;
    vcheck(r->CreateShaderModule(r->dev, &mi, NULL, &m), "vkCreateShaderModule");
    VkSpecializationMapEntry e = { 0, 0, 4 };
    VkSpecializationInfo si = { 1, &e, 4, &local };
    VkComputePipelineCreateInfo ci;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = m;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &si;
    ci.layout = r->layout;
    VkPipeline p;
    vcheck(r->CreateComputePipelines(r->dev, VK_NULL_HANDLE, 1, &ci, NULL, &p), "vkCreateComputePipelines");
    r->DestroyShaderModule(r->dev, m, NULL);
    return p;
}
static VkSemaphore raw_timeline(raw_t* r) {
    VkSemaphoreTypeCreateInfo t = { VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, NULL, VK_SEMAPHORE_TYPE_TIMELINE, 0 };
    VkSemaphoreCreateInfo ci = { VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &t, 0 };
    VkSemaphore s;
    vcheck(r->CreateSemaphore(r->dev, &ci, NULL, &s), "vkCreateSemaphore");
    return s;
}
static int raw_open(raw_t* r) {
    memset(r, 0, sizeof *r);
    const char* path = getenv("ACCEL_VULKAN_LIBRARY");
    r->lib = dlopen(path && path[0] ? path : "libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!r->lib) return 0;
    void* sym = dlsym(r->lib, "vkGetInstanceProcAddr");
    memcpy(&r->gipa, &sym, sizeof sym);
    raw_load(r);
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "raw", 1, "raw", 1, VK_API_VERSION_1_2 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL };
    vcheck(r->CreateInstance(&ici, NULL, &r->inst), "vkCreateInstance");
    raw_load(r);
    uint32_t n = 1;
    r->EnumeratePhysicalDevices(r->inst, &n, &r->phys);
    if (n == 0) return 0;
    VkQueueFamilyProperties fam[16];
    uint32_t nf = 16;
    r->GetPhysicalDeviceQueueFamilyProperties(r->phys, &nf, fam);
    for (r->family = 0; r->family < nf && !(fam[r->family].queueFlags & VK_QUEUE_COMPUTE_BIT); r->family++) {}
    r->GetPhysicalDeviceMemoryProperties(r->phys, &r->mem);
    float prio[2] = { 1.0f, 1.0f };
    uint32_t nq = r->family < nf && fam[r->family].queueCount >= 2 ? 2u : 1u;
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, r->family, nq, prio };
    VkPhysicalDeviceVulkan12Features f12;
    memset(&f12, 0, sizeof f12);
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.timelineSemaphore = VK_TRUE;
    const char* ext = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f12, 0, 1, &qci, 0, NULL, 1, &ext, NULL };
    vcheck(r->CreateDevice(r->phys, &dci, NULL, &r->dev), "vkCreateDevice (needs VK_KHR_push_descriptor)");
    raw_load(r);
    r->GetDeviceQueue(r->dev, r->family, 0, &r->queue);
    r->queue2 = r->queue;
    if (nq == 2) r->GetDeviceQueue(r->dev, r->family, 1, &r->queue2);
    VkCommandPoolCreateInfo pci = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, r->family };
    vcheck(r->CreateCommandPool(r->dev, &pci, NULL, &r->pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, r->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1 };
    vcheck(r->AllocateCommandBuffers(r->dev, &ai, &r->cb), "vkAllocateCommandBuffers");
    VkDescriptorSetLayoutBinding b[2];
    for (uint32_t i = 0; i < 2; i++) {
        b[i].binding = i; b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT; b[i].pImmutableSamplers = NULL;
    }
    VkDescriptorSetLayoutCreateInfo dl = { VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL,
                                           VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR, 2, b };
    vcheck(r->CreateDescriptorSetLayout(r->dev, &dl, NULL, &r->dsl), "vkCreateDescriptorSetLayout");
    VkPushConstantRange pcr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, 8 };
    VkPipelineLayoutCreateInfo pl = { VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &r->dsl, 1, &pcr };
    vcheck(r->CreatePipelineLayout(r->dev, &pl, NULL, &r->layout), "vkCreatePipelineLayout");
    r->saxpy = raw_pipeline(r, k_saxpy_spv, sizeof k_saxpy_spv, 512);   /* 16M / 512 groups fit the 65535 limit */
    r->add_one = raw_pipeline(r, k_add_one_spv, sizeof k_add_one_spv, 64);
    r->done = raw_timeline(r);
    r->gate = raw_timeline(r);
    return 1;
}
typedef struct raw_buf { VkBuffer b; VkDeviceMemory m; void* p; } raw_buf;
static raw_buf raw_buffer(raw_t* r, size_t size) {
    raw_buf rb;
    VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size,
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
    vcheck(r->CreateBuffer(r->dev, &bi, NULL, &rb.b), "vkCreateBuffer");
    VkMemoryRequirements req;
    r->GetBufferMemoryRequirements(r->dev, rb.b, &req);
    /* mapped memory, device-local where the GPU offers such a type (a discrete GPU's BAR: what accel's
       DEVICE buffers are on the GPU side), else host memory */
    VkMemoryPropertyFlags mapped = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags wants[2] = { mapped | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, mapped };
    VkResult vr = VK_ERROR_OUT_OF_DEVICE_MEMORY;
    for (int w = 0; w < 2 && vr != VK_SUCCESS; w++) {
        for (uint32_t i = 0; i < r->mem.memoryTypeCount && vr != VK_SUCCESS; i++) {
            if (!(req.memoryTypeBits & (1u << i)) || (r->mem.memoryTypes[i].propertyFlags & wants[w]) != wants[w]) continue;
            VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, i };
            vr = r->AllocateMemory(r->dev, &ai, NULL, &rb.m);
        }
    }
    vcheck(vr, "vkAllocateMemory");
    vcheck(r->BindBufferMemory(r->dev, rb.b, rb.m, 0), "vkBindBufferMemory");
    vcheck(r->MapMemory(r->dev, rb.m, 0, VK_WHOLE_SIZE, 0, &rb.p), "vkMapMemory");
    return rb;
}
static void raw_buffer_free(raw_t* r, raw_buf* b) { r->DestroyBuffer(r->dev, b->b, NULL); r->FreeMemory(r->dev, b->m, NULL); }

static void raw_barrier(raw_t* r, VkCommandBuffer cb) {
    VkMemoryBarrier mb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT };
    r->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}
/* Records `count` dispatches of `pipe` over buffers into cb (with barriers between); dispatch
   `patch_at` (if < count) gets constant word 0 = patch instead of k[0]. */
static void raw_record(raw_t* r, VkCommandBuffer cb, VkPipeline pipe, const raw_buf* bufs, uint32_t nbufs, const uint32_t* k,
                       uint32_t groups, uint32_t count, uint32_t patch_at, uint32_t patch) {
    VkDescriptorBufferInfo info[2];
    VkWriteDescriptorSet w[2];
    for (uint32_t i = 0; i < nbufs; i++) {
        info[i].buffer = bufs[i].b; info[i].offset = 0; info[i].range = VK_WHOLE_SIZE;
        memset(&w[i], 0, sizeof w[i]);
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET; w[i].dstBinding = i; w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; w[i].pBufferInfo = &info[i];
    }
    for (uint32_t c = 0; c < count; c++) {
        uint32_t kc[2] = { c == patch_at ? patch : k[0], k[1] };
        if (c) raw_barrier(r, cb);
        r->CmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
        r->CmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, r->layout, 0, nbufs, w);
        r->CmdPushConstants(cb, r->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, kc);
        r->CmdDispatch(cb, groups, 1, 1);
    }
}
static void raw_begin(raw_t* r, VkCommandBuffer cb, VkCommandBufferUsageFlags flags) {
    VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, flags, NULL };
    vcheck(r->BeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
}
/* The host-visibility barrier and vkEndCommandBuffer. */
static void raw_end(raw_t* r, VkCommandBuffer cb) {
    VkMemoryBarrier hb = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT };
    r->CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb, 0, NULL, 0, NULL);
    vcheck(r->EndCommandBuffer(cb), "vkEndCommandBuffer");
}
/* One vkQueueSubmit of cb: waits on wait_sem >= wait_val when wait_sem is not null, signals sig_sem = sig_val. */
static void raw_submit_on(raw_t* r, VkQueue queue, VkCommandBuffer cb, VkSemaphore wait_sem, uint64_t wait_val,
                          VkSemaphore sig_sem, uint64_t sig_val) {
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    uint32_t nw = wait_sem != VK_NULL_HANDLE ? 1u : 0u;
    VkTimelineSemaphoreSubmitInfo ti = { VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, NULL, nw, &wait_val, 1, &sig_val };
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti, nw, &wait_sem, &stage, 1, &cb, 1, &sig_sem };
    vcheck(r->QueueSubmit(queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
}
/* Submits cb; waits on gate >= gate_wait when gate_wait != 0 and signals done. Returns the done value. */
static uint64_t raw_submit_cb(raw_t* r, VkCommandBuffer cb, uint64_t gate_wait) {
    uint64_t value = ++r->done_val;
    raw_submit_on(r, r->queue, cb, gate_wait ? r->gate : VK_NULL_HANDLE, gate_wait, r->done, value);
    return value;
}
/* Records `count` dispatches of `pipe` over buffers (with barriers between) into the per-submission
   command buffer and submits it. Returns the done value. */
static uint64_t raw_submit(raw_t* r, VkPipeline pipe, const raw_buf* bufs, uint32_t nbufs, const uint32_t* k,
                           uint32_t groups, uint32_t count, uint64_t gate_wait) {
    raw_begin(r, r->cb, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    raw_record(r, r->cb, pipe, bufs, nbufs, k, groups, count, UINT32_MAX, 0);
    raw_end(r, r->cb);
    return raw_submit_cb(r, r->cb, gate_wait);
}
static VkCommandBuffer raw_cb(raw_t* r, VkCommandBufferLevel level) {
    VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, r->pool, level, 1 };
    VkCommandBuffer cb;
    vcheck(r->AllocateCommandBuffers(r->dev, &ai, &cb), "vkAllocateCommandBuffers");
    return cb;
}
/* A primary command buffer recorded once with `count` add_one dispatches, for re-submission. */
static VkCommandBuffer raw_prerecorded(raw_t* r, const raw_buf* b, uint32_t count) {
    uint32_t k[2] = { 64, 0 };
    VkCommandBuffer cb = raw_cb(r, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    raw_begin(r, cb, 0);
    raw_record(r, cb, r->add_one, b, 1, k, 1, count, UINT32_MAX, 0);
    raw_end(r, cb);
    return cb;
}
/* A secondary command buffer with `count` add_one dispatches, after a barrier (so that secondaries
   run back to back by one vkCmdExecuteCommands stay in order). */
static VkCommandBuffer raw_secondary(raw_t* r, const raw_buf* b, uint32_t count) {
    uint32_t k[2] = { 64, 0 };
    VkCommandBuffer cb = raw_cb(r, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    VkCommandBufferInheritanceInfo ii = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO, NULL, VK_NULL_HANDLE, 0, VK_NULL_HANDLE,
                                          VK_FALSE, 0, 0 };
    VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, &ii };
    vcheck(r->BeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer (secondary)");
    raw_barrier(r, cb);
    raw_record(r, cb, r->add_one, b, 1, k, 1, count, UINT32_MAX, 0);
    vcheck(r->EndCommandBuffer(cb), "vkEndCommandBuffer (secondary)");
    return cb;
}
/* n command buffers, each recorded once with one add_one dispatch over b. */
static VkCommandBuffer* raw_prerecord(raw_t* r, const raw_buf* b, uint32_t n) {
    VkCommandBuffer* cbs = calloc(n, sizeof *cbs);
    if (!cbs) { fprintf(stderr, "bench: out of memory\n"); exit(1); }
    for (uint32_t i = 0; i < n; i++) cbs[i] = raw_prerecorded(r, b, 1);
    return cbs;
}
static void raw_prerecord_free(raw_t* r, VkCommandBuffer* cbs, uint32_t n) {
    r->FreeCommandBuffers(r->dev, r->pool, n, cbs);
    free(cbs);
}
static void raw_wait_sem(raw_t* r, VkSemaphore sem, uint64_t value) {
    VkSemaphoreWaitInfo wi = { VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, NULL, 0, 1, &sem, &value };
    vcheck(r->WaitSemaphores(r->dev, &wi, UINT64_MAX), "vkWaitSemaphores");
}
static void raw_wait(raw_t* r, uint64_t value) { raw_wait_sem(r, r->done, value); }

/* ==== the accel side ==== */
typedef struct acc_t {
    accel_device* dev;
    accel_queue* q;
    accel_program *saxpy, *add_one;
    accel_signal *done, *gate;
    uint64_t done_val, gate_val;
    bool lavapipe;                  /* the software device: the looser targets of DESIGN §6.1 apply */
    bench_threads workers;          /* threads that accel_queue_create started (the queues' workers) */
} acc_t;
static accel_program* acc_program(accel_device* dev, const uint32_t* spv, size_t size, uint32_t nb, uint32_t nc) {
    accel_program* p;
    check(accel_program_create(dev, &(accel_program_desc){ .name = "main", .spirv = spv, .spirv_size = size,
                                                           .buffer_count = nb, .constant_count = nc }, &p), "accel_program_create");
    return p;
}

static accel_queue* acc_queue(acc_t* a, accel_queue_type type);
/* The accel side's queue, signals and programs on a->dev. */
static void acc_setup(acc_t* a, const char* device_name) {
    a->lavapipe = strstr(device_name, "llvmpipe") != NULL;
    a->q = acc_queue(a, ACCEL_QUEUE_COMPUTE);
    check(accel_signal_create(a->dev, 0, &a->done), "signal");
    check(accel_signal_create(a->dev, 0, &a->gate), "signal");
    a->saxpy = acc_program(a->dev, k_saxpy_spv, sizeof k_saxpy_spv, 2, 2);
    a->add_one = acc_program(a->dev, k_add_one_spv, sizeof k_add_one_spv, 1, 1);
}
/* accel_queue_create, remembering the threads it started (the queue's worker) for the wake-up count. */
static accel_queue* acc_queue(acc_t* a, accel_queue_type type) {
    bench_threads_snapshot before, after;
    accel_queue* q;
    bench_threads_started(&before, NULL, NULL);
    check(accel_queue_create(a->dev, type, &q), "accel_queue_create");
    bench_threads_started(&after, &before, &a->workers);
    return q;
}

/* ==== figures ==== */
#define MAX_ROUNDS 64
static double ns_since(uint64_t t0) { return (double)(bench_now_ns() - t0); }

/* What a paired figure measures: sample(f, side) runs one sample (side 0 accel, 1 raw) and returns
   its figure (ns, or ns per step). */
typedef struct fig_t fig_t;
struct fig_t {
    acc_t* a;
    raw_t* r;
    double (*sample)(void* f, int side);
    int per_round;                   /* samples per side per round */
    int rounds;                      /* rounds (0: cfg.rounds) */
    int steps;                       /* chain steps per sample (figures 9 and 10) */
    accel_buffer* ab;
    accel_buffer* counts;            /* figure 11: the indirect dispatch's counts */
    raw_buf rb;
    VkCommandBuffer* cbs;            /* the raw side's pre-recorded command buffers */
    uint32_t ncb;
    accel_queue* q[2];
    accel_signal* s[2];
    VkSemaphore sem[2];
    VkQueue vq[2];
    uint64_t acc_v, raw_v;           /* the chains' last values */
    uint64_t acc_total, raw_total;   /* add_one dispatches each side ran, for the check */
    double issue_ns[2];              /* chains: host time spent issuing the steps (before the wait), per side */
    bench_pair res;
};
static int fig_rounds(const fig_t* f) { return f->rounds ? f->rounds : cfg.rounds; }
static void fig_run(fig_t* f) { bench_pair_run(fig_rounds(f), f->per_round, f->sample, f, &f->a->workers, &f->res); }
/* The row of a paired latency figure (lower is better). */
static bench_row* fig_row(const fig_t* f, const char* figure, const char* title, double target, double target_gpu) {
    bench_row* row = bench_row_add(figure, title, "ns", f->res.accel, "raw vulkan", f->res.baseline, BENCH_TARGET_RATIO, BENCH_LE, target);
    bench_row_extra(row, "paired_ratio", f->res.paired);
    bench_row_extra(row, "target_gpu", target_gpu);
    bench_row_extra(row, "samples", (double)(f->per_round * fig_rounds(f)));
    return row;
}
/* The shared buffers of figures 1, 4, 9, 10 (64 counters each side) and ncb pre-recorded command buffers. */
static void fig_buffers(fig_t* f, uint32_t ncb) {
    check(accel_buffer_create(f->a->dev, &(accel_buffer_desc){ .size = 256 }, &f->ab), "buffer");
    check(accel_buffer_write(f->ab, 0, (uint32_t[64]){ 0 }, 256), "buffer write");
    f->rb = raw_buffer(f->r, 256);
    memset(f->rb.p, 0, 256);
    f->ncb = ncb;
    f->cbs = raw_prerecord(f->r, &f->rb, ncb);
}
/* Checks both sides' counters against the dispatches they ran, then frees what fig_buffers made. */
static void fig_done(fig_t* f, const char* name) {
    uint32_t got = 0;
    check(accel_buffer_read(f->ab, 0, &got, 4), "read");
    if (got != (uint32_t)f->acc_total) bench_fail("%s: accel buffer holds %u, expected %llu", name, got, (unsigned long long)f->acc_total);
    if (((uint32_t*)f->rb.p)[63] != (uint32_t)f->raw_total)
        bench_fail("%s: raw buffer holds %u, expected %llu", name, ((uint32_t*)f->rb.p)[63], (unsigned long long)f->raw_total);
    f->r->DeviceWaitIdle(f->r->dev);
    raw_prerecord_free(f->r, f->cbs, f->ncb);
    raw_buffer_free(f->r, &f->rb);
    accel_buffer_destroy(f->ab);
}
static void acc_add_one(accel_queue* q, acc_t* a, accel_buffer* b) {
    uint32_t n = 64;
    accel_queue_exec(q, a->add_one, &b, 1, &n, 1, accel_exec_1d(64, 64));
}

/* Figure 1: one dispatch, one signal, one submit, one host wait | one vkQueueSubmit of a pre-recorded
   command buffer signalling a timeline, one vkWaitSemaphores. */
static double rt_sample(void* ctx, int side) {
    fig_t* f = (fig_t*)ctx;
    uint64_t t0 = bench_now_ns();
    if (side == 0) {
        acc_add_one(f->a->q, f->a, f->ab);
        accel_queue_signal(f->a->q, f->a->done, ++f->a->done_val);
        check(accel_queue_submit(f->a->q), "submit");
        check(accel_signal_wait(f->a->done, f->a->done_val, ACCEL_WAIT_FOREVER), "wait");
        f->acc_total++;
    } else {
        raw_submit_on(f->r, f->r->queue, f->cbs[0], VK_NULL_HANDLE, 0, f->r->done, ++f->r->done_val);
        raw_wait(f->r, f->r->done_val);
        f->raw_total++;
    }
    return ns_since(t0);
}
static void fig_roundtrip(acc_t* a, raw_t* r) {
    fig_t f = { .a = a, .r = r, .sample = rt_sample, .per_round = cfg.lat_block, .rounds = cfg.lat_rounds };
    fig_buffers(&f, 1);
    fig_run(&f);
    fig_done(&f, "roundtrip");
    bench_row* row = fig_row(&f, "roundtrip", "1 dispatch + wait round trip", 1.10, 1.10);
    bench_row_extra(row, "accel_process_wakeups_per_sample", f.res.accel_process_wakeups);
    bench_row_extra(row, "raw_process_wakeups_per_sample", f.res.baseline_process_wakeups);
}

static void fig_batch(acc_t* a, raw_t* r) {
    uint32_t N = cfg.batch, n = 64, k[2] = { 64, 0 };
    accel_buffer* ab;
    check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = 256 }, &ab), "buffer");
    raw_buf rb = raw_buffer(r, 256);
    memset(rb.p, 0, 256);
    double as[MAX_ROUNDS], rs[MAX_ROUNDS];
    for (int i = 0; i < cfg.rounds; i++) {
        uint64_t t0 = bench_now_ns();
        for (uint32_t c = 0; c < N; c++) accel_queue_exec(a->q, a->add_one, &ab, 1, &n, 1, accel_exec_1d(64, 64));
        accel_queue_signal(a->q, a->done, ++a->done_val);
        check(accel_queue_submit(a->q), "submit");
        check(accel_signal_wait(a->done, a->done_val, ACCEL_WAIT_FOREVER), "wait");
        as[i] = (double)N / (ns_since(t0) / 1e9);
        t0 = bench_now_ns();
        raw_wait(r, raw_submit(r, r->add_one, &rb, 1, k, 1, N, 0));
        rs[i] = (double)N / (ns_since(t0) / 1e9);
    }
    uint32_t got = 0, want = N * (uint32_t)cfg.rounds;
    check(accel_buffer_read(ab, 0, &got, 4), "read");
    if (got != want) bench_fail("batch: accel buffer holds %u, expected %u", got, want);
    if (((uint32_t*)rb.p)[63] != want) bench_fail("batch: raw buffer holds %u, expected %u", ((uint32_t*)rb.p)[63], want);
    double am = bench_median(as, (size_t)cfg.rounds), rm = bench_median(rs, (size_t)cfg.rounds);
    bench_row* row = bench_row_add("batch_dispatch", "2 1000 dispatches in a batch, /s", "/s", am, "raw vulkan", rm,
                                   BENCH_TARGET_RATIO, BENCH_GE, 0.95);
    bench_row_extra(row, "dispatches", N);
    accel_buffer_destroy(ab);
    raw_buffer_free(r, &rb);
}

static void fig_saxpy(acc_t* a, raw_t* r) {
    size_t n = cfg.saxpy_n, bytes = n * 4;
    accel_buffer *ax, *ay;
    check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = bytes }, &ax), "buffer x");
    check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = bytes }, &ay), "buffer y");
    raw_buf rb[2] = { raw_buffer(r, bytes), raw_buffer(r, bytes) };   /* y, x */
    float* hx = malloc(bytes);
    float* hy = malloc(bytes);
    for (size_t i = 0; i < n; i++) { hx[i] = (float)(i & 1023); hy[i] = 1.0f; }
    check(accel_buffer_write(ax, 0, hx, bytes), "write x");
    check(accel_buffer_write(ay, 0, hy, bytes), "write y");
    memcpy(rb[1].p, hx, bytes);
    memcpy(rb[0].p, hy, bytes);
    float alpha = 0.5f;
    uint32_t k[2];
    memcpy(&k[0], &alpha, 4);
    k[1] = (uint32_t)n;
    uint32_t groups = (uint32_t)((n + 511) / 512);
    double as[MAX_ROUNDS], rs[MAX_ROUNDS];
    for (int i = 0; i < cfg.rounds; i++) {
        uint64_t t0 = bench_now_ns();
        accel_queue_exec(a->q, a->saxpy, (accel_buffer*[]){ ay, ax }, 2, k, 2, accel_exec_1d((uint32_t)n, 512));
        accel_queue_signal(a->q, a->done, ++a->done_val);
        check(accel_queue_submit(a->q), "submit");
        check(accel_signal_wait(a->done, a->done_val, ACCEL_WAIT_FOREVER), "wait");
        as[i] = 12.0 * (double)n / ns_since(t0);
        t0 = bench_now_ns();
        raw_wait(r, raw_submit(r, r->saxpy, rb, 2, k, groups, 1, 0));
        rs[i] = 12.0 * (double)n / ns_since(t0);
    }
    check(accel_buffer_read(ay, 0, hy, bytes), "read y");
    size_t bad = 0;
    for (size_t i = 0; i < n; i += 997) {
        float want = 1.0f + (float)cfg.rounds * 0.5f * (float)(i & 1023);
        bad += hy[i] != want || ((float*)rb[0].p)[i] != want;
    }
    if (bad) bench_fail("saxpy: %zu sampled elements wrong", bad);
    double am = bench_median(as, (size_t)cfg.rounds), rm = bench_median(rs, (size_t)cfg.rounds);
    bench_row* row = bench_row_add("saxpy", "3 SAXPY, GB/s (12 B/elem)", "GB/s", am, "raw vulkan", rm,
                                   BENCH_TARGET_RATIO, BENCH_GE, 0.95);
    bench_row_extra(row, "elements", (double)n);
    free(hx); free(hy);
    accel_buffer_destroy(ax); accel_buffer_destroy(ay);
    raw_buffer_free(r, &rb[0]); raw_buffer_free(r, &rb[1]);
}

/* Figure 4: the queue waits on a signal only the host sets, runs a dispatch and signals; the host sets,
   then waits for the signal | a submit of a pre-recorded command buffer waiting on a timeline value,
   vkSignalSemaphore, vkWaitSemaphores. Timed from the set; the queue had 20 us to reach its wait. */
static double host_sample(void* ctx, int side) {
    fig_t* f = (fig_t*)ctx;
    uint64_t t0;
    if (side == 0) {
        acc_t* a = f->a;
        accel_queue_wait(a->q, a->gate, ++a->gate_val);
        acc_add_one(a->q, a, f->ab);
        accel_queue_signal(a->q, a->done, ++a->done_val);
        check(accel_queue_submit(a->q), "submit");
        bench_sleep_ns(20000);
        t0 = bench_now_ns();
        check(accel_signal_set(a->gate, a->gate_val), "set");
        check(accel_signal_wait(a->done, a->done_val, ACCEL_WAIT_FOREVER), "wait");
        f->acc_total++;
    } else {
        raw_t* r = f->r;
        raw_submit_on(r, r->queue, f->cbs[0], r->gate, ++r->gate_val, r->done, ++r->done_val);
        bench_sleep_ns(20000);
        t0 = bench_now_ns();
        VkSemaphoreSignalInfo si = { VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, r->gate, r->gate_val };
        vcheck(r->SignalSemaphore(r->dev, &si), "vkSignalSemaphore");
        raw_wait(r, r->done_val);
        f->raw_total++;
    }
    return ns_since(t0);
}
static void fig_host_signal(acc_t* a, raw_t* r) {
    fig_t f = { .a = a, .r = r, .sample = host_sample, .per_round = cfg.lat_block, .rounds = cfg.lat_rounds };
    fig_buffers(&f, 1);
    fig_run(&f);
    fig_done(&f, "host signal");
    bench_row* row = fig_row(&f, "host_signal_gpu_wait", "4 host set -> GPU wait -> done", a->lavapipe ? 1.15 : 1.10, 1.10);
    bench_row_extra(row, "accel_worker_wakeups_per_sample", f.res.watched_wakeups);
    bench_row_extra(row, "accel_process_wakeups_per_sample", f.res.accel_process_wakeups);
    bench_row_extra(row, "raw_process_wakeups_per_sample", f.res.baseline_process_wakeups);
}

/* Figures 9 and 10: `steps` dispatches, step i on queue i % nq, each waiting for the step before (on
   its signal, or semaphore) and signalling its own value; then the host waits for the last one.
   Returns ns per step. */
static double chain_sample(fig_t* f, int side, int nq) {
    uint64_t t0 = bench_now_ns();
    if (side == 0) {
        for (int i = 0; i < f->steps; i++) {
            accel_queue* q = f->q[i % nq];
            accel_queue_wait(q, f->s[(i + 1) % nq], f->acc_v);
            acc_add_one(q, f->a, f->ab);
            accel_queue_signal(q, f->s[i % nq], ++f->acc_v);
            check(accel_queue_submit(q), "submit");
        }
        f->issue_ns[0] += ns_since(t0);
        check(accel_signal_wait(f->s[(f->steps - 1) % nq], f->acc_v, ACCEL_WAIT_FOREVER), "wait");
        f->acc_total += (uint64_t)f->steps;
    } else {
        for (int i = 0; i < f->steps; i++) {
            raw_submit_on(f->r, f->vq[i % nq], f->cbs[i], f->sem[(i + 1) % nq], f->raw_v, f->sem[i % nq], f->raw_v + 1);
            f->raw_v++;
        }
        f->issue_ns[1] += ns_since(t0);
        raw_wait_sem(f->r, f->sem[(f->steps - 1) % nq], f->raw_v);
        f->raw_total += (uint64_t)f->steps;
    }
    return ns_since(t0) / f->steps;
}
static double chain1_sample(void* f, int side) { return chain_sample((fig_t*)f, side, 1); }
static double chain2_sample(void* f, int side) { return chain_sample((fig_t*)f, side, 2); }
static void fig_chain(acc_t* a, raw_t* r, int nq) {
    fig_t f = { .a = a, .r = r, .sample = nq == 1 ? chain1_sample : chain2_sample, .per_round = cfg.chain_samples,
                .steps = cfg.chain_steps };
    bench_threads saved = a->workers;
    if (nq == 2) a->workers.count = 0;   /* count the two new queues' workers only */
    fig_buffers(&f, (uint32_t)f.steps);
    for (int i = 0; i < nq; i++) {
        f.q[i] = nq == 1 ? a->q : acc_queue(a, ACCEL_QUEUE_COMPUTE);
        check(accel_signal_create(a->dev, 0, &f.s[i]), "signal");
        f.sem[i] = raw_timeline(r);
        f.vq[i] = i == 0 ? r->queue : r->queue2;
    }
    fig_run(&f);
    bench_row* row;
    if (nq == 1) {
        row = fig_row(&f, "chain_1q", "9 dependent chain, 1 queue, /step", a->lavapipe ? 1.25 : 1.10, 1.10);
    } else {
        row = fig_row(&f, "chain_2q", "10 chain over 2 queues, /step", 1.15, 1.15);
        bench_row_extra(row, "raw_vkqueues", r->queue2 != r->queue ? 2 : 1);
    }
    bench_row_extra(row, "steps", f.steps);
    bench_row_extra(row, "accel_worker_wakeups_per_step", f.res.watched_wakeups / f.steps);
    bench_row_extra(row, "workers_watched", a->workers.count);
    {   /* host time to issue a step (record + submit), over every sample, warm-ups included */
        double samples = (double)(f.acc_total / (uint64_t)f.steps);
        bench_row_extra(row, "accel_issue_ns_per_step", f.issue_ns[0] / (samples * f.steps));
        bench_row_extra(row, "raw_issue_ns_per_step", f.issue_ns[1] / (samples * f.steps));
    }
    if (a->workers.count == 0) printf("bench_vulkan: accel_queue_create started no thread that this bench could see: wake-ups not counted\n");
    bench_row_extra(row, "accel_process_wakeups_per_step", f.res.accel_process_wakeups / f.steps);
    bench_row_extra(row, "raw_process_wakeups_per_step", f.res.baseline_process_wakeups / f.steps);
    if (nq == 1) {
        bench_row* w = bench_row_add("chain_worker_wakeups", "9 queue-worker wake-ups per step", "/step", f.res.watched_wakeups / f.steps,
                                     "none", 0, BENCH_TARGET_VALUE, BENCH_LE, 0.05);
        bench_row_extra(w, "accel_process_wakeups_per_step", f.res.accel_process_wakeups / f.steps);
        bench_row_extra(w, "raw_process_wakeups_per_step", f.res.baseline_process_wakeups / f.steps);
    }
    fig_done(&f, nq == 1 ? "chain" : "two-queue chain");
    for (int i = 0; i < nq; i++) {
        if (nq == 2) accel_queue_destroy(f.q[i]);
        accel_signal_destroy(f.s[i]);
        r->DestroySemaphore(r->dev, f.sem[i], NULL);
    }
    a->workers = saved;
}

/* ==== recorded lists (replay) ==== */
/* A list of `count` add_one(buf, n = 64) dispatches. */
static accel_commands* acc_list(acc_t* a, accel_buffer* buf, uint32_t count) {
    accel_commands* list;
    uint32_t n = 64;
    check(accel_queue_record_begin(a->q), "accel_queue_record_begin");
    for (uint32_t c = 0; c < count; c++) accel_queue_exec(a->q, a->add_one, &buf, 1, &n, 1, accel_exec_1d(64, 64));
    check(accel_queue_record_end(a->q, &list), "accel_queue_record_end");
    return list;
}
/* One replay (patch NULL: unpatched) and its wait; ns. */
static double acc_replay(acc_t* a, accel_commands* list, const accel_patch* patch) {
    uint64_t t0 = bench_now_ns();
    accel_queue_replay(a->q, list, patch, patch ? 1 : 0);
    accel_queue_signal(a->q, a->done, ++a->done_val);
    check(accel_queue_submit(a->q), "submit");
    check(accel_signal_wait(a->done, a->done_val, ACCEL_WAIT_FOREVER), "wait");
    return ns_since(t0);
}
static void check_counts(accel_buffer* ab, const raw_buf* rb, uint32_t a0, uint32_t a63, uint32_t r0, uint32_t r63, const char* fig) {
    uint32_t got[64];
    check(accel_buffer_read(ab, 0, got, sizeof got), "read");
    if (got[0] != a0 || got[63] != a63) bench_fail("%s: accel buffer holds %u / %u, expected %u / %u", fig, got[0], got[63], a0, a63);
    if (((uint32_t*)rb->p)[0] != r0 || ((uint32_t*)rb->p)[63] != r63)
        bench_fail("%s: raw buffer holds %u / %u, expected %u / %u", fig, ((uint32_t*)rb->p)[0], ((uint32_t*)rb->p)[63], r0, r63);
}

static void fig_replay_roundtrip(acc_t* a, raw_t* r) {
    accel_buffer* ab;
    check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = 256 }, &ab), "buffer");
    raw_buf rb = raw_buffer(r, 256);
    memset(rb.p, 0, 256);
    accel_commands* list = acc_list(a, ab, 1);
    VkCommandBuffer pre = raw_prerecorded(r, &rb, 1);
    int total = cfg.latency_iters * cfg.rounds;
    double* as = calloc((size_t)total, sizeof *as);
    double* rs = calloc((size_t)total, sizeof *rs);
    for (int i = 0; i < total; i++) {
        as[i] = acc_replay(a, list, NULL);
        uint64_t t0 = bench_now_ns();
        raw_wait(r, raw_submit_cb(r, pre, 0));
        rs[i] = ns_since(t0);
    }
    check_counts(ab, &rb, (uint32_t)total, (uint32_t)total, (uint32_t)total, (uint32_t)total, "replay round trip");
    double* pr = calloc((size_t)total, sizeof *pr);   /* each sample over the raw one right after it */
    for (int i = 0; pr && i < total; i++) pr[i] = rs[i] > 0 ? as[i] / rs[i] : 0;
    double paired = pr ? bench_median(pr, (size_t)total) : 0;
    free(pr);
    double am = bench_median(as, (size_t)total), rm = bench_median(rs, (size_t)total);
    bench_row* row = bench_row_add("replay_roundtrip", "5 replay 1 dispatch + wait", "ns", am, "raw pre-recorded", rm,
                                   BENCH_TARGET_RATIO, BENCH_LE, 1.05);
    bench_row_extra(row, "paired_ratio", paired);
    bench_row_extra(row, "samples", total);
    free(as); free(rs);
    accel_commands_destroy(list);
    accel_buffer_destroy(ab);
    raw_buffer_free(r, &rb);
}

/* The raw design rows of figure 8: the list as secondaries of `size` dispatches run by
   vkCmdExecuteCommands, the chunk holding dispatch `patch_at` (if < count) recorded directly instead,
   its constant patched. */
static double raw_run_secondaries(raw_t* r, const raw_buf* rb, VkCommandBuffer* chunks, uint32_t nchunks, uint32_t size,
                                  uint32_t count, uint32_t patch_at) {
    uint32_t k[2] = { 64, 0 }, pc = patch_at / size;
    uint64_t t0 = bench_now_ns();
    raw_begin(r, r->cb, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    if (patch_at >= count) {
        r->CmdExecuteCommands(r->cb, nchunks, chunks);
    } else {
        uint32_t n = count - pc * size < size ? count - pc * size : size;
        if (pc) r->CmdExecuteCommands(r->cb, pc, chunks);
        raw_barrier(r, r->cb);
        raw_record(r, r->cb, r->add_one, rb, 1, k, 1, n, patch_at % size, 32);
        if (pc + 1 < nchunks) r->CmdExecuteCommands(r->cb, nchunks - pc - 1, chunks + pc + 1);
    }
    raw_end(r, r->cb);
    raw_wait(r, raw_submit_cb(r, r->cb, 0));
    return ns_since(t0);
}

enum { REPLAY_ITERS = 5 };
static void fig_replay_list(acc_t* a, raw_t* r) {
    uint32_t N = cfg.batch, nchunks = (N + 31) / 32, k[2] = { 64, 0 };
    enum { WAYS = 8 };
    uint32_t a0 = 0, a63 = 0, r0 = 0, r63 = 0;
    accel_buffer* ab;
    check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = 256 }, &ab), "buffer");
    raw_buf rb = raw_buffer(r, 256);
    memset(rb.p, 0, 256);
    accel_commands* list = acc_list(a, ab, N);
    VkCommandBuffer pre = raw_prerecorded(r, &rb, N), whole = raw_secondary(r, &rb, N);
    VkCommandBuffer* chunks = calloc(nchunks, sizeof *chunks);
    VkCommandBuffer* singles = calloc(N, sizeof *singles);
    for (uint32_t c = 0; c < nchunks; c++) chunks[c] = raw_secondary(r, &rb, N - c * 32 < 32 ? N - c * 32 : 32);
    for (uint32_t c = 0; c < N; c++) singles[c] = raw_secondary(r, &rb, 1);
    double t[WAYS][MAX_ROUNDS], it[REPLAY_ITERS];
    for (int round = 0; round < cfg.rounds; round++) {
        for (int w = 0; w < WAYS; w++) {
            for (int i = 0; i < REPLAY_ITERS; i++) {
                uint32_t at = (uint32_t)(round * REPLAY_ITERS + i) * 37u % N;
                accel_patch p = { at, 0, NULL, 32 };
                uint64_t t0 = bench_now_ns();
                switch (w) {
                case 0: it[i] = acc_replay(a, list, NULL); a0 += N; a63 += N; break;
                case 1: it[i] = acc_replay(a, list, &p); a0 += N; a63 += N - 1; break;
                case 2: raw_wait(r, raw_submit_cb(r, pre, 0)); it[i] = ns_since(t0); r0 += N; r63 += N; break;
                case 3: it[i] = raw_run_secondaries(r, &rb, &whole, 1, N, N, UINT32_MAX); r0 += N; r63 += N; break;
                case 4: it[i] = raw_run_secondaries(r, &rb, chunks, nchunks, 32, N, at); r0 += N; r63 += N - 1; break;
                case 6: it[i] = raw_run_secondaries(r, &rb, singles, N, 1, N, UINT32_MAX); r0 += N; r63 += N; break;
                case 7: it[i] = raw_run_secondaries(r, &rb, singles, N, 1, N, at); r0 += N; r63 += N - 1; break;
                case 5: raw_wait(r, raw_submit(r, r->add_one, &rb, 1, k, 1, N, 0)); it[i] = ns_since(t0); r0 += N; r63 += N; break;
                }
            }
            t[w][round] = bench_median(it, REPLAY_ITERS);
        }
    }
    check_counts(ab, &rb, a0, a63, r0, r63, "replay list");
    double m[WAYS];
    for (int w = 0; w < WAYS; w++) m[w] = bench_median(t[w], (size_t)cfg.rounds);
    bench_row* row = bench_row_add("replay_list", "6 replay 1000-dispatch list, /s", "/s", N / (m[0] / 1e9), "raw pre-recorded",
                                   N / (m[2] / 1e9), BENCH_TARGET_RATIO, BENCH_GE, 0.95);
    bench_row_extra(row, "dispatches", N);
    bench_row_add("replay_list_patched", "7 same, 1 constant patched, ns", "ns", m[1], "raw pre-recorded", m[2],
                  BENCH_TARGET_RATIO, BENCH_LE, 1.10);
    bench_row_add("design_secondary", "8 raw: the list as 1 secondary CB", "ns", m[3], "raw pre-recorded", m[2], BENCH_TARGET_NONE, BENCH_LE, 0);
    bench_row_add("design_chunk_patched", "8 raw: 32-cmd secondaries, 1 re-recorded", "ns", m[4], "raw pre-recorded", m[2],
                  BENCH_TARGET_NONE, BENCH_LE, 0);
    bench_row_add("design_singles", "8 raw: 1000 1-cmd secondaries", "ns", m[6], "raw pre-recorded", m[2], BENCH_TARGET_NONE, BENCH_LE, 0);
    bench_row_add("design_single_patched", "8 raw: 1-cmd secondaries, 1 re-recorded", "ns", m[7], "raw pre-recorded", m[2],
                  BENCH_TARGET_NONE, BENCH_LE, 0);
    bench_row_add("design_record_anew", "8 raw: all 1000 recorded anew", "ns", m[5], "raw pre-recorded", m[2], BENCH_TARGET_NONE, BENCH_LE, 0);
    free(chunks);
    free(singles);
    accel_commands_destroy(list);
    accel_buffer_destroy(ab);
    raw_buffer_free(r, &rb);
}

/* Figure 11: a batch of a fill and a dispatch that make the counts (1, 1, 1), then an indirect dispatch
   on them | the same batch with the last dispatch's size given. Both sides are accel: the figure is
   what reading the counts on the device costs next to the same work. */
static double indirect_sample(void* ctx, int side) {
    fig_t* f = (fig_t*)ctx;
    static const uint32_t local[3] = { 64, 1, 1 };
    uint32_t n = 64, three = 3;
    uint64_t t0 = bench_now_ns();
    accel_queue_fill(f->a->q, f->counts, 0, 12, 0);
    accel_queue_exec(f->a->q, f->a->add_one, &f->counts, 1, &three, 1, accel_exec_1d(3, 64));
    if (side == 0) accel_queue_exec_indirect(f->a->q, f->a->add_one, &f->ab, 1, &n, 1, local, f->counts, 0);
    else acc_add_one(f->a->q, f->a, f->ab);
    accel_queue_signal(f->a->q, f->a->done, ++f->a->done_val);
    check(accel_queue_submit(f->a->q), "submit");
    check(accel_signal_wait(f->a->done, f->a->done_val, ACCEL_WAIT_FOREVER), "wait");
    f->acc_total++;
    return ns_since(t0);
}
static void fig_indirect(acc_t* a, raw_t* r) {
    fig_t f = { .a = a, .r = r, .sample = indirect_sample, .per_round = cfg.lat_block, .rounds = cfg.lat_rounds };
    fig_buffers(&f, 1);
    check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = 16 }, &f.counts), "buffer");
    fig_run(&f);
    fig_done(&f, "indirect");
    accel_buffer_destroy(f.counts);
    bench_row* row = bench_row_add("indirect", "11 indirect dispatch round trip", "ns", f.res.accel, "direct dispatch",
                                   f.res.baseline, BENCH_TARGET_RATIO, BENCH_LE, 1.05);
    bench_row_extra(row, "paired_ratio", f.res.paired);
    bench_row_extra(row, "samples", (double)(f.per_round * fig_rounds(&f)));
}

/* Figure 12: queue-ordered memory. One step on a's queue: [alloc the scratch,] fill it (when fill),
   add_one on its first 64 words, copy them to f->ab, [free it,] signal, submit, wait. Side 0 allocates
   the scratch per step, side 1 uses f->once. Checks the copied word. */
typedef struct qmem_fig { fig_t f; accel_buffer* once; bool fill; uint32_t v; } qmem_fig;
enum { QMEM_BYTES = 1 << 20 };
static double qmem_sample(void* ctx, int side) {
    qmem_fig* m = (qmem_fig*)ctx;
    acc_t* a = m->f.a;
    accel_buffer* scratch = m->once;
    uint32_t got = 0, want_v = m->fill ? ++m->v + 1u : 0u;
    uint64_t t0 = bench_now_ns();
    if (side == 0) check(accel_queue_alloc(a->q, QMEM_BYTES, ACCEL_MEMORY_DEVICE, &scratch), "accel_queue_alloc");
    if (m->fill) accel_queue_fill(a->q, scratch, 0, QMEM_BYTES, m->v);
    acc_add_one(a->q, a, scratch);
    accel_queue_copy(a->q, m->f.ab, 0, scratch, 0, 256);
    if (side == 0) accel_queue_free(a->q, scratch);
    accel_queue_signal(a->q, a->done, ++a->done_val);
    check(accel_queue_submit(a->q), "submit");
    check(accel_signal_wait(a->done, a->done_val, ACCEL_WAIT_FOREVER), "wait");
    double t = ns_since(t0);
    check(accel_buffer_read(m->f.ab, 0, &got, 4), "read");
    if (m->fill && got != want_v) bench_fail("qmem: word 0 is %u, expected %u", got, want_v);
    return t;
}
static void fig_qmem(acc_t* a, raw_t* r) {
    qmem_fig m;
    for (int fill = 1; fill >= 0; fill--) {
        memset(&m, 0, sizeof m);
        m.f.a = a; m.f.r = r; m.f.sample = qmem_sample; m.f.per_round = cfg.lat_block; m.f.rounds = cfg.lat_rounds;
        m.fill = fill != 0;
        check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = QMEM_BYTES }, &m.once), "buffer");
        check(accel_buffer_create(a->dev, &(accel_buffer_desc){ .size = 256 }, &m.f.ab), "buffer");
        bench_pair_run(fig_rounds(&m.f), m.f.per_round, qmem_sample, &m, &a->workers, &m.f.res);
        bench_row* row = bench_row_add(fill ? "qmem_step" : "qmem_tiny_step", fill ? "12 1 MiB scratch step, queue_alloc"
                                       : "12c same without the fill", "ns", m.f.res.accel, "scratch made once",
                                       m.f.res.baseline, fill ? BENCH_TARGET_RATIO : BENCH_TARGET_NONE, BENCH_LE, fill ? 1.10 : 0);
        bench_row_extra(row, "paired_ratio", m.f.res.paired);
        bench_row_extra(row, "extra_ns", m.f.res.accel - m.f.res.baseline);
        accel_buffer_destroy(m.once);
        accel_buffer_destroy(m.f.ab);
    }
}

static bool want(const char* figure) { return !cfg.only || strcmp(cfg.only, figure) == 0; }

int main(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) cfg.quick = true;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) cfg.only = argv[++i];
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) cfg.rounds_arg = atoi(argv[++i]);
        else {
            printf("usage: %s [--quick] [--only N] [--rounds R]\n"
                   "  --only N    run figure N only (1-12; 6 runs 6-8): to study one figure, e.g. under perf\n"
                   "  --rounds R  rounds per paired figure (default 7, --quick 5; at most 64)\n", argv[0]);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    /* chain_steps must be even: a two-queue chain's next sample starts on the queue after the last step's */
    if (cfg.quick) { cfg.rounds = 5; cfg.latency_iters = 30; cfg.batch = 1000; cfg.saxpy_n = (size_t)1 << 20; cfg.chain_steps = 50; cfg.chain_samples = 4; }
    else { cfg.rounds = 7; cfg.latency_iters = 100; cfg.batch = 1000; cfg.saxpy_n = (size_t)16 << 20; cfg.chain_steps = 200; cfg.chain_samples = 5; }
    /* latency figures 1 and 4: many short blocks, so that a slow spell of a shared machine (lavapipe
       on a VM swings by +-40% over seconds) falls on both sides alike */
    cfg.lat_block = cfg.quick ? 5 : 10;
    cfg.lat_rounds = cfg.quick ? 6 : 48;
    if (cfg.rounds_arg) cfg.rounds = cfg.lat_rounds = cfg.rounds_arg > MAX_ROUNDS ? MAX_ROUNDS : cfg.rounds_arg;
    uint64_t start = bench_now_ns();
    acc_t own, adopted;
    memset(&own, 0, sizeof own);
    memset(&adopted, 0, sizeof adopted);
    accel_result res = accel_device_create(&(accel_device_desc){ .backend = accel_vulkan_backend(), .label = "bench" }, &own.dev);
    if (res == ACCEL_ERROR_UNAVAILABLE) { printf("bench_vulkan: no Vulkan device here (see the log above); nothing to measure\n"); return 0; }
    check(res, "accel_device_create(vulkan)");
    raw_t r;
    if (!raw_open(&r)) { fprintf(stderr, "bench: raw Vulkan setup failed\n"); return 1; }
    /* accel on the raw side's own VkDevice and VkQueue (accel_vulkan_device_adopt): both sides share
       the driver's threads and queue, so a figure is the API's cost, not where two devices' threads
       landed (on lavapipe two VkDevices side by side read 0.6x-1.2x of each other for identical work).
       Figures 4 and 10 keep an accel device of its own where the family has two VkQueues: an adopted
       device puts every accel queue on the engine's one VkQueue, and where device memory is not
       host-mappable (NVIDIA) accel_buffer_read/write share it, so accel waits on the host there for a
       value only the host raises (a read queued behind a device wait for it would never run). */
    accel_vulkan_adopt_desc ad;
    memset(&ad, 0, sizeof ad);
    ad.instance = r.inst; ad.physical_device = r.phys; ad.device = r.dev; ad.queue_family = r.family; ad.queue_index = 0;
    memcpy(&ad.get_instance_proc_addr, &r.gipa, sizeof r.gipa);
    ad.api_version = VK_API_VERSION_1_2; ad.push_descriptors = true;
    res = accel_vulkan_device_adopt(&(accel_device_desc){ .label = "bench (adopted)" }, &ad, &adopted.dev);
    if (res != ACCEL_OK) printf("bench_vulkan: accel_vulkan_device_adopt -> %s; accel runs on a VkDevice of its own\n", accel_result_string(res));
    acc_t* ap = res == ACCEL_OK ? &adopted : &own;
    acc_t* a2 = r.queue2 != r.queue ? &own : ap;
    accel_device_info info;
    check(accel_device_info_get(ap->dev, &info), "info");
    printf("accel %d.%d.%d Vulkan benchmark%s on %s, %d rounds%s\n", ACCEL_VERSION_MAJOR, ACCEL_VERSION_MINOR, ACCEL_VERSION_PATCH,
           cfg.quick ? " (--quick)" : "", info.name, cfg.rounds, ap == &adopted ? ", accel on the raw side's VkDevice" : "");
    acc_setup(ap, info.name);
    if (a2 != ap && (want("10") || want("4"))) acc_setup(a2, info.name);
    if (a2 != &own) { accel_device_destroy(own.dev); own.dev = NULL; }
    acc_t a = *ap;
    if (want("1")) { printf("1 round trip ...\n"); fflush(stdout); fig_roundtrip(&a, &r); }
    if (want("2")) { printf("2 batch ...\n"); fflush(stdout); fig_batch(&a, &r); }
    if (want("3")) { printf("3 saxpy ...\n"); fflush(stdout); fig_saxpy(&a, &r); }
    if (want("4")) { printf("4 host signal -> GPU wait ...\n"); fflush(stdout); fig_host_signal(a2 == ap ? &a : a2, &r); }
    if (want("5")) { printf("5 replay round trip ...\n"); fflush(stdout); fig_replay_roundtrip(&a, &r); }
    if (want("6")) { printf("6-8 replay of a list ...\n"); fflush(stdout); fig_replay_list(&a, &r); }
    if (want("9")) { printf("9 chain, one queue ...\n"); fflush(stdout); fig_chain(&a, &r, 1); }
    if (want("10")) { printf("10 chain, two queues ...\n"); fflush(stdout); fig_chain(a2 == ap ? &a : a2, &r, 2); }
    if (want("11")) { printf("11 indirect dispatch ...\n"); fflush(stdout); fig_indirect(&a, &r); }
    if (want("12")) { printf("12 queue memory ...\n"); fflush(stdout); fig_qmem(&a, &r); }
    accel_device_destroy(a.dev);
    if (own.dev) accel_device_destroy(own.dev);
    r.DeviceWaitIdle(r.dev);
    r.DestroyPipeline(r.dev, r.saxpy, NULL);
    r.DestroyPipeline(r.dev, r.add_one, NULL);
    r.DestroyPipelineLayout(r.dev, r.layout, NULL);
    r.DestroyDescriptorSetLayout(r.dev, r.dsl, NULL);
    r.DestroySemaphore(r.dev, r.done, NULL);
    r.DestroySemaphore(r.dev, r.gate, NULL);
    r.DestroyCommandPool(r.dev, r.pool, NULL);
    r.DestroyDevice(r.dev, NULL);
    r.DestroyInstance(r.inst, NULL);
    char heading[200];
    snprintf(heading, sizeof heading, "accel Vulkan backend vs raw Vulkan on %s (%s%.1f s)", info.name,
             cfg.quick ? "--quick, " : "", (double)(bench_now_ns() - start) / 1e9);
    int missed = bench_report(heading);
    printf("%d target(s) missed, %d verification failure(s)\n", missed, bench_failures());
    return bench_failures() ? 1 : 0;
}
