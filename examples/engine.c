/* engine.c — accel inside an engine that owns its Vulkan objects.

   A small raw-Vulkan "engine" (its own VkInstance, VkDevice, buffer and timeline semaphores, the way a
   game engine or renderer has them) lends them to accel, and the two hand work to each other on the GPU:

     engine  vkQueueSubmit: fill its buffer y with the frame number, signal `uploaded` = frame
     accel   wait(uploaded, frame)            <- the engine's semaphore, wrapped: accel_vulkan_signal_wrap
             exec saxpy: y = 2 * x + y        <- the engine's buffer, wrapped: accel_vulkan_buffer_wrap
             signal(done, frame)
     engine  vkQueueSubmit: wait accel's `done` semaphore >= frame on the GPU
             (accel_vulkan_signal_semaphore: no host wait in between), copy y to its readback buffer,
             signal `read` = frame; then it waits for its own `read` and checks y[i] == 2 i + frame.

   accel is built on the engine's device with accel_vulkan_device_adopt. The engine keeps ownership of
   everything it lent: destroying accel's wrappers (or the accel device) never destroys its objects.

   Run: make run-vulkan (lavapipe where installed), or ./build/vulkan/engine vulkan. On any other backend
   (`make run` runs it on the CPU) it says that it needs Vulkan and exits 0.
   Build and run (from the repository root):
     mkdir -p build && cc -std=gnu11 -O2 -I. examples/engine.c -o build/engine -lpthread -lm -ldl && ./build/engine [cpu|vulkan]
   (that build has no Vulkan: it prints what the example needs; make run-vulkan builds the real one)

   Both hand-overs stay on the GPU: accel's queue waits on the engine's semaphore in its own
   vkQueueSubmit (the engine submitted the signal operation first), and the engine's submit waits on
   accel's. No thread waits in between; the engine waits only for its own `read` at the end of a frame.

   One queue or two: on a device whose compute family has two queues the engine submits to its own
   VkQueue. On one with a single queue (lavapipe) accel and the engine share it; then the engine must not
   call vkQueueSubmit while accel may (accel's lock is invisible to it), and, as Vulkan requires of one
   queue, a signal operation must be submitted before a wait that needs it. Here both hold by
   construction: everything is submitted from this one thread, in frame order, and accel_queue_submit
   makes its vkQueueSubmit before it returns (its wait goes to the device, its signal is a native
   signal operation of increasing value). */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "common.h"

#include <stdlib.h>

#define N_ELEMENTS 65536u
#define FRAMES 3u

#if defined(ACCEL_EXAMPLE_HAVE_VULKAN) && !defined(_WIN32)
#include <dlfcn.h>

static const uint32_t ex_saxpy_spv[] =
#include "saxpy.spv.inc"
;

/* ==== the engine: plain Vulkan, nothing of accel ==== */
#define ENG_FUNCS(X) X(DestroyDevice) X(GetDeviceQueue) X(CreateBuffer) X(DestroyBuffer) X(GetBufferMemoryRequirements) \
    X(AllocateMemory) X(FreeMemory) X(BindBufferMemory) X(MapMemory) X(CreateSemaphore) X(DestroySemaphore)            \
    X(WaitSemaphores) X(CreateCommandPool) X(DestroyCommandPool) X(AllocateCommandBuffers) X(ResetCommandBuffer)        \
    X(BeginCommandBuffer) X(EndCommandBuffer) X(CmdFillBuffer) X(CmdCopyBuffer) X(CmdPipelineBarrier) X(QueueSubmit)   \
    X(DeviceWaitIdle)
typedef struct engine {
    void* lib;
    PFN_vkGetInstanceProcAddr get_proc;
    PFN_vkDestroyInstance DestroyInstance;
    VkInstance instance;
    VkPhysicalDevice phys;
    VkPhysicalDeviceMemoryProperties mem;
    VkDevice device;
    uint32_t family, queue_count;   /* the engine uses queue queue_count - 1; accel gets queue 0 */
    VkQueue queue;
    VkCommandPool pool;
    VkCommandBuffer upload_cb, readback_cb;
    VkBuffer y, readback;           /* y: where accel computes; readback: host-visible copy of it */
    VkDeviceMemory y_mem, readback_mem;
    float* readback_map;
    VkSemaphore uploaded, read;     /* timeline semaphores */
#define ENG_MEMBER(name) PFN_vk##name name;
    ENG_FUNCS(ENG_MEMBER)
#undef ENG_MEMBER
} engine;

#define VK_CHECK(call) do { VkResult vr_ = (call); if (vr_ != VK_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s -> VkResult %d\n", __FILE__, __LINE__, #call, (int)vr_); return 0; } } while (0)

static void* eng_proc(engine* e, const char* name) {
    PFN_vkVoidFunction f = e->get_proc(e->instance, name);
    void* p;
    memcpy(&p, &f, sizeof p);
    return p;
}

/* Instance, the first physical device with a compute family, a device with timeline semaphores. */
static int eng_create_device(engine* e) {
    VkApplicationInfo app = { VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "engine", 1, "engine", 1, VK_API_VERSION_1_2 };
    VkInstanceCreateInfo ici = { VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL };
    PFN_vkCreateInstance CreateInstance;
    PFN_vkEnumeratePhysicalDevices EnumeratePhysicalDevices;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties GetFamilies;
    PFN_vkGetPhysicalDeviceMemoryProperties GetMemory;
    PFN_vkCreateDevice CreateDevice;
    PFN_vkGetDeviceProcAddr GetDeviceProcAddr;
    VkQueueFamilyProperties families[16];
    uint32_t n = 1, nf = 16;
    float priorities[2] = { 1.0f, 1.0f };
    void* sym = (e->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL)) ? dlsym(e->lib, "vkGetInstanceProcAddr") : NULL;
    if (!sym) { fprintf(stderr, "engine: no Vulkan loader (libvulkan.so.1)\n"); return 0; }
    memcpy(&e->get_proc, &sym, sizeof sym);
#define ENG_GET(var, name) sym = eng_proc(e, name); memcpy(&var, &sym, sizeof sym); if (!sym) return 0;
    ENG_GET(CreateInstance, "vkCreateInstance")
    VK_CHECK(CreateInstance(&ici, NULL, &e->instance));
    ENG_GET(e->DestroyInstance, "vkDestroyInstance")
    ENG_GET(EnumeratePhysicalDevices, "vkEnumeratePhysicalDevices")
    ENG_GET(GetFamilies, "vkGetPhysicalDeviceQueueFamilyProperties")
    ENG_GET(GetMemory, "vkGetPhysicalDeviceMemoryProperties")
    ENG_GET(CreateDevice, "vkCreateDevice")
    ENG_GET(GetDeviceProcAddr, "vkGetDeviceProcAddr")
#undef ENG_GET
    if (EnumeratePhysicalDevices(e->instance, &n, &e->phys) < 0 || n == 0) { fprintf(stderr, "engine: no Vulkan device\n"); return 0; }
    GetMemory(e->phys, &e->mem);
    GetFamilies(e->phys, &nf, families);
    for (e->family = 0; e->family < nf && !(families[e->family].queueFlags & VK_QUEUE_COMPUTE_BIT); e->family++) {}
    if (e->family == nf) { fprintf(stderr, "engine: no compute queue family\n"); return 0; }
    e->queue_count = families[e->family].queueCount < 2 ? 1 : 2;
    VkDeviceQueueCreateInfo qci = { VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, e->family, e->queue_count, priorities };
    VkPhysicalDeviceVulkan12Features f12;
    memset(&f12, 0, sizeof f12);
    f12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    f12.timelineSemaphore = VK_TRUE;
    VkDeviceCreateInfo dci = { VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &f12, 0, 1, &qci, 0, NULL, 0, NULL, NULL };
    VK_CHECK(CreateDevice(e->phys, &dci, NULL, &e->device));
#define ENG_LOAD(name) { PFN_vkVoidFunction f_ = GetDeviceProcAddr(e->device, "vk" #name); memcpy(&e->name, &f_, sizeof f_); if (!f_) return 0; }
    ENG_FUNCS(ENG_LOAD)
#undef ENG_LOAD
    e->GetDeviceQueue(e->device, e->family, e->queue_count - 1, &e->queue);
    return 1;
}

/* A storage + transfer buffer with its own memory: a type with all of `need`, preferring DEVICE_LOCAL. */
static int eng_buffer(engine* e, VkDeviceSize size, VkMemoryPropertyFlags need, VkBuffer* buf, VkDeviceMemory* mem) {
    VkBufferCreateInfo bi = { VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size,
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              VK_SHARING_MODE_EXCLUSIVE, 0, NULL };
    VkMemoryRequirements req;
    uint32_t type = UINT32_MAX;
    VK_CHECK(e->CreateBuffer(e->device, &bi, NULL, buf));
    e->GetBufferMemoryRequirements(e->device, *buf, &req);
    for (uint32_t i = 0; i < e->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = e->mem.memoryTypes[i].propertyFlags;
        if (!(req.memoryTypeBits & (1u << i)) || (f & need) != need) continue;
        if (type == UINT32_MAX || (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) type = i;
        if (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) break;
    }
    if (type == UINT32_MAX) { fprintf(stderr, "engine: no suitable memory type\n"); return 0; }
    VkMemoryAllocateInfo ai = { VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type };
    VK_CHECK(e->AllocateMemory(e->device, &ai, NULL, mem));
    VK_CHECK(e->BindBufferMemory(e->device, *buf, *mem, 0));
    return 1;
}
static int eng_timeline(engine* e, VkSemaphore* s) {
    VkSemaphoreTypeCreateInfo type = { VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, NULL, VK_SEMAPHORE_TYPE_TIMELINE, 0 };
    VkSemaphoreCreateInfo ci = { VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type, 0 };
    VK_CHECK(e->CreateSemaphore(e->device, &ci, NULL, s));
    return 1;
}
/* The engine's resources: y (device-local), its readback (host-visible), two timelines, command buffers. */
static int eng_create_resources(engine* e) {
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkCommandPoolCreateInfo pci = { VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                    VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, e->family };
    VkCommandBuffer cbs[2];
    void* map;
    if (!eng_buffer(e, N_ELEMENTS * 4, 0, &e->y, &e->y_mem)) return 0;
    if (!eng_buffer(e, N_ELEMENTS * 4, host, &e->readback, &e->readback_mem)) return 0;
    VK_CHECK(e->MapMemory(e->device, e->readback_mem, 0, VK_WHOLE_SIZE, 0, &map));
    e->readback_map = (float*)map;
    if (!eng_timeline(e, &e->uploaded) || !eng_timeline(e, &e->read)) return 0;
    VK_CHECK(e->CreateCommandPool(e->device, &pci, NULL, &e->pool));
    VkCommandBufferAllocateInfo ai = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, e->pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY, 2 };
    VK_CHECK(e->AllocateCommandBuffers(e->device, &ai, cbs));
    e->upload_cb = cbs[0];
    e->readback_cb = cbs[1];
    return 1;
}

/* One vkQueueSubmit: wait `wait` >= wait_value (unless wait is VK_NULL_HANDLE), run cb, signal
   `signal` = signal_value. */
static int eng_submit(engine* e, VkCommandBuffer cb, VkSemaphore wait, uint64_t wait_value, VkSemaphore signal, uint64_t signal_value) {
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkTimelineSemaphoreSubmitInfo ti = { VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, NULL, wait ? 1u : 0u, &wait_value, 1, &signal_value };
    VkSubmitInfo si = { VK_STRUCTURE_TYPE_SUBMIT_INFO, &ti, wait ? 1u : 0u, &wait, &stage, 1, &cb, 1, &signal };
    VK_CHECK(e->QueueSubmit(e->queue, 1, &si, VK_NULL_HANDLE));
    return 1;
}
static int eng_wait(engine* e, VkSemaphore s, uint64_t value) {
    VkSemaphoreWaitInfo wi = { VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, NULL, 0, 1, &s, &value };
    VK_CHECK(e->WaitSemaphores(e->device, &wi, 10000000000ull));
    return 1;
}
/* The engine's part of a frame before accel: y = frame (as floats), then `uploaded` = frame. */
static int eng_upload(engine* e, uint32_t frame) {
    VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
    VkMemoryBarrier after = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT };
    float value = (float)frame;
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    VK_CHECK(e->ResetCommandBuffer(e->upload_cb, 0));
    VK_CHECK(e->BeginCommandBuffer(e->upload_cb, &bi));
    e->CmdFillBuffer(e->upload_cb, e->y, 0, VK_WHOLE_SIZE, bits);
    e->CmdPipelineBarrier(e->upload_cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &after, 0, NULL, 0, NULL);
    VK_CHECK(e->EndCommandBuffer(e->upload_cb));
    return eng_submit(e, e->upload_cb, VK_NULL_HANDLE, 0, e->uploaded, frame);
}
/* The engine's part after accel: wait on accel's semaphore on the GPU, copy y to the readback buffer. */
static int eng_readback(engine* e, VkSemaphore accel_done, uint32_t frame) {
    VkCommandBufferBeginInfo bi = { VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL };
    VkMemoryBarrier before = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_MEMORY_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT };
    VkMemoryBarrier to_host = { VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT };
    VkBufferCopy region = { 0, 0, N_ELEMENTS * 4 };
    VK_CHECK(e->ResetCommandBuffer(e->readback_cb, 0));
    VK_CHECK(e->BeginCommandBuffer(e->readback_cb, &bi));
    e->CmdPipelineBarrier(e->readback_cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
    e->CmdCopyBuffer(e->readback_cb, e->y, e->readback, 1, &region);
    e->CmdPipelineBarrier(e->readback_cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0, NULL);
    VK_CHECK(e->EndCommandBuffer(e->readback_cb));
    return eng_submit(e, e->readback_cb, accel_done, frame, e->read, frame);
}
static void eng_destroy(engine* e) {
    if (e->device) {
        e->DeviceWaitIdle(e->device);
        if (e->pool) e->DestroyCommandPool(e->device, e->pool, NULL);
        if (e->uploaded) e->DestroySemaphore(e->device, e->uploaded, NULL);
        if (e->read) e->DestroySemaphore(e->device, e->read, NULL);
        if (e->y) e->DestroyBuffer(e->device, e->y, NULL);
        if (e->readback) e->DestroyBuffer(e->device, e->readback, NULL);
        if (e->y_mem) e->FreeMemory(e->device, e->y_mem, NULL);
        if (e->readback_mem) e->FreeMemory(e->device, e->readback_mem, NULL);
        e->DestroyDevice(e->device, NULL);
    }
    if (e->instance) e->DestroyInstance(e->instance, NULL);
    if (e->lib) dlclose(e->lib);
}

/* ==== accel on the engine's objects ==== */
static int run_frames(engine* e) {
    accel_device* dev = NULL;
    accel_vulkan_adopt_desc adopt;
    accel_buffer *y = NULL, *x = NULL;
    accel_signal *uploaded = NULL, *done = NULL;
    accel_program* saxpy = NULL;
    accel_queue* queue = NULL;
    float* host_x = (float*)malloc(N_ELEMENTS * sizeof(float));
    const float a = 2.0f;
    uint32_t constants[2], bad = 0, frame;
    int ok = 0;
    memset(&adopt, 0, sizeof adopt);
    adopt.instance = e->instance;
    adopt.physical_device = e->phys;
    adopt.device = e->device;
    adopt.queue_family = e->family;
    adopt.queue_index = 0;
    adopt.get_instance_proc_addr = e->get_proc;
    adopt.api_version = VK_API_VERSION_1_2;
    if (!host_x) goto done;
    EX_CHECK(accel_vulkan_device_adopt(NULL, &adopt, &dev));
    EX_CHECK(accel_vulkan_buffer_wrap(dev, e->y, N_ELEMENTS * 4, &y));          /* the engine's buffer */
    EX_CHECK(accel_vulkan_signal_wrap(dev, e->uploaded, &uploaded));           /* the engine's semaphore */
    EX_CHECK(accel_signal_create(dev, 0, &done));                               /* accel's, exported below */
    EX_CHECK(accel_buffer_create(dev, &(accel_buffer_desc){ .size = N_ELEMENTS * 4 }, &x));
    for (uint32_t i = 0; i < N_ELEMENTS; i++) host_x[i] = (float)i;
    EX_CHECK(accel_buffer_write(x, 0, host_x, N_ELEMENTS * sizeof(float)));
    EX_CHECK(accel_program_create(dev, &(accel_program_desc){ .name = "saxpy", EX_SPIRV(saxpy)
                                                               .buffer_count = 2, .constant_count = 2 }, &saxpy));
    EX_CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &queue));
    memcpy(&constants[0], &a, sizeof a);
    constants[1] = N_ELEMENTS;
    printf("engine: %s, %s VkQueue for the engine and accel\n", e->queue_count > 1 ? "two queues" : "one queue",
           e->queue_count > 1 ? "a" : "the same");
    for (frame = 1; frame <= FRAMES; frame++) {
        if (!eng_upload(e, frame)) goto done;
        accel_queue_wait(queue, uploaded, frame);
        accel_queue_exec(queue, saxpy, (accel_buffer*[]){ y, x }, 2, constants, 2, accel_exec_1d(N_ELEMENTS, 256));
        accel_queue_signal(queue, done, frame);
        EX_CHECK(accel_queue_submit(queue));
        if (!eng_readback(e, accel_vulkan_signal_semaphore(done), frame)) goto done;   /* GPU waits on accel */
        if (!eng_wait(e, e->read, frame)) goto done;
        for (uint32_t i = 0; i < N_ELEMENTS; i++) bad += e->readback_map[i] != a * (float)i + (float)frame;
        printf("engine: frame %u: y[1000] = %.1f (expected %.1f), %u wrong values so far\n", frame,
               (double)e->readback_map[1000], (double)(a * 1000.0f + (float)frame), bad);
    }
    ok = bad == 0;
done:
    accel_device_destroy(dev);   /* waits for accel's work; the engine's buffer and semaphore stay the engine's */
    free(host_x);
    return ok;
}

static int engine_main(void) {
    engine e;
    int ok;
    memset(&e, 0, sizeof e);
    ok = eng_create_device(&e) && eng_create_resources(&e) && run_frames(&e);
    eng_destroy(&e);
    printf("engine: %s\n", ok ? "ok: accel computed into the engine's buffer, the engine waited for it on the GPU" : "FAILED");
    return ok ? 0 : 1;
}
#endif /* ACCEL_EXAMPLE_HAVE_VULKAN */

int main(int argc, char** argv) {
    accel_device* dev = NULL;
    accel_device_info info;
    int rc;
#if defined(ACCEL_EXAMPLE_HAVE_VULKAN) && !defined(_WIN32)
    if (argc == 2 && !strcmp(argv[1], "vulkan")) return engine_main();
#endif
    if ((rc = ex_open_device(argc, argv, NULL, &dev, &info)) != 0) return rc;
    printf("engine: this example lends an engine's VkDevice, buffer and timeline semaphore to accel, so it\n"
           "        needs the Vulkan backend (make run-vulkan, or ./build/vulkan/engine vulkan); nothing to do on %s\n",
           info.backend);
    accel_device_destroy(dev);
    return 0;
}
