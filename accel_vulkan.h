/* accel_vulkan.h — the Vulkan backend of accel: the whole accel API on any Vulkan 1.2 device (or 1.1 with
   VK_KHR_timeline_semaphore), with the loader opened at run time (no -lvulkan). Version 0.2.0. MIT license
   (end of file). Needs accel.h; the implementation lives in the same translation unit as accel.h's.

   ==== Quick start =============================================================================

   accel.h's quick start with the Vulkan backend tried first: the include, the SPIR-V of the same kernel
   (examples/kernels/saxpy.comp), the device by accel_device_create_any, .spirv in the program desc.

   ---- begin quickstart_vulkan.c (tests/check_quickstart.sh compiles and runs it as C and C++) ----
       #define ACCEL_IMPLEMENTATION           // in exactly one .c or .cpp file
       #include "accel.h"
       #define ACCEL_VULKAN_IMPLEMENTATION    // the same file, after accel.h (needs the Vulkan headers)
       #include "accel_vulkan.h"
       #include <stdio.h>
       #include <string.h>

       // y = a*x + y. A CPU kernel is called once per work group; constants are 32-bit words,
       // so the float a travels as its bits: constants = { a_bits, n }.
       static void saxpy(const accel_dispatch* d) {
           float* y = (float*)d->buffers[0];
           const float* x = (const float*)d->buffers[1];
           float a;
           memcpy(&a, &d->constants[0], sizeof a);
           uint32_t i0 = d->group_id[0] * d->group_size[0];
           for (uint32_t i = i0; i < i0 + d->group_size[0] && i < d->constants[1]; i++)
               y[i] = a * x[i] + y[i];
       }

       // The same kernel in GLSL (examples/kernels/saxpy.comp), compiled to SPIR-V as a C array by
       //   glslc -fshader-stage=compute --target-env=vulkan1.2 -mfmt=c -o saxpy.spv.inc examples/kernels/saxpy.comp
       static const uint32_t saxpy_spv[] =
       #include "saxpy.spv.inc"
       ;

       #define CHECK(call) do { accel_result r_ = (call); if (r_ != ACCEL_OK) { \
           fprintf(stderr, "%s -> %s\n", #call, accel_result_string(r_)); goto done; } } while (0)

       int main(void) {
           enum { n = 1000 };
           float x[n], y[n], a = 2.0f;
           uint32_t constants[2];                    // { a_bits, n }
           accel_device* dev = NULL;
           accel_buffer *bx = NULL, *by = NULL, *args[2];
           accel_program* prog = NULL;
           accel_queue* q = NULL;
           accel_signal* done = NULL;
           accel_device_desc dd;                     // every desc is valid zeroed (C and C++ alike)
           accel_buffer_desc bd;
           accel_program_desc pd;
           accel_device_info info;
           int ok = 0;
           const accel_backend* order[2] = { accel_vulkan_backend(), accel_cpu_backend() };

           for (int i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f; }
           memcpy(&constants[0], &a, sizeof a);
           constants[1] = n;

           memset(&dd, 0, sizeof dd);
           dd.debug = true;                          // while developing: hang reports, checks (see below)
           CHECK(accel_device_create_any(order, 2, &dd, &dev));     // Vulkan, else the CPU (the log says why)
           CHECK(accel_device_info_get(dev, &info));
           memset(&bd, 0, sizeof bd);
           bd.size = sizeof x;
           CHECK(accel_buffer_create(dev, &bd, &bx));
           CHECK(accel_buffer_create(dev, &bd, &by));
           CHECK(accel_buffer_write(bx, 0, x, sizeof x));
           CHECK(accel_buffer_write(by, 0, y, sizeof y));
           memset(&pd, 0, sizeof pd);
           pd.name = "saxpy";
           pd.cpu = saxpy;                           // for the CPU fallback
           pd.spirv = saxpy_spv;                     // set 0, bindings 0..1; constants as push constants
           pd.spirv_size = sizeof saxpy_spv;
           pd.buffer_count = 2;
           pd.constant_count = 2;
           CHECK(accel_program_create(dev, &pd, &prog));
           CHECK(accel_signal_create(dev, 0, &done));
           CHECK(accel_queue_create(dev, ACCEL_QUEUE_COMPUTE, &q));

           args[0] = by;                             // binding 0 = y, binding 1 = x
           args[1] = bx;
           accel_queue_exec(q, prog, args, 2, constants, 2, accel_exec_1d(n, 256));
           accel_queue_signal(q, done, 1);
           CHECK(accel_queue_submit(q));             // returns at once (or the first recording error)
           CHECK(accel_signal_wait(done, 1, ACCEL_WAIT_FOREVER));   // y is ready
           CHECK(accel_buffer_read(by, 0, y, sizeof y));
           ok = 1;
           for (int i = 0; i < n; i++) ok &= y[i] == a * (float)i + 1.0f;
           printf("saxpy on %s (%s): %s\n", info.name, info.backend, ok ? "OK" : "WRONG");
       done:
           accel_device_destroy(dev);                // waits, then releases everything created on it
           return ok ? 0 : 1;
       }
   ---- end quickstart_vulkan.c ----

   Build: first the kernel, then the program (it needs the Vulkan headers, libvulkan-dev, not the library):
       glslc -fshader-stage=compute --target-env=vulkan1.2 -mfmt=c -o saxpy.spv.inc examples/kernels/saxpy.comp
       cc -std=gnu11 -I. app.c -o app -lpthread -lm -ldl       # C++: c++ -std=c++11 -I. -x c++ app.c ...
   No -lvulkan: the program runs where there is no Vulkan at all; accel_device_create returns
   ACCEL_ERROR_UNAVAILABLE with the reason in the log (library not found, no driver, no device with
   timeline semaphores and a compute queue) and accel_device_create_any goes on to the CPU.

   ==== What it does NOT do =====================================================================
   - No shader compilation: programs are SPIR-V (compile GLSL/HLSL with glslc or dxc at build time).
   - No images, samplers, uniform buffers, or more than one descriptor set: a program sees storage buffers
     at set 0, bindings 0..buffer_count-1, and `constant_count` 32-bit words of push constants.
   - No general memory allocator for the engine's use: buffers (accel_buffer_create and the pool of
     accel_queue_alloc) take ranges of 32 MiB VkDeviceMemory blocks, one memory type each, so that tens
     of thousands of live buffers stay far under maxMemoryAllocationCount; a buffer above 8 MiB has a
     VkDeviceMemory of its own, and one empty block is kept as a spare. Host-visible blocks are mapped
     once.
   - No no-threads build: with ACCEL_NO_THREADS, on WASI and on Emscripten the backend is a stub whose
     every device is ACCEL_ERROR_UNAVAILABLE (and nothing is dlopen'ed there).

   ==== Config macros and environment ===========================================================
   | ACCEL_VULKAN_IMPLEMENTATION | compile the implementation (after accel.h's, same .c file)       |
   | ACCEL_VULKAN_MAX_QUEUES     | VkQueues taken from the compute family (default 4)               |
   | env ACCEL_VULKAN_LIBRARY    | path or name of the loader to open instead of the default names  |
   | env ACCEL_VULKAN_VALIDATION | 1: enable VK_LAYER_KHRONOS_validation (as `debug = true` does)   |
   | env ACCEL_VULKAN_NO_PUSH_DESCRIPTORS | 1: use descriptor pools even where push descriptors exist |
   | env ACCEL_VULKAN_NO_MAP_DEVICE | 1: never map ACCEL_MEMORY_DEVICE (read/write use staging)     |
   | ACCEL_VULKAN_REPLAY_CHUNK   | commands per reusable secondary command buffer of a recorded list |
   |                             | (default 32; 1: a patched replay re-records only patched commands) |
   | env ACCEL_VULKAN_NO_CALIBRATED_TIMESTAMPS | 1: timestamps use the paired reading (see Profiling) |
   | env ACCEL_VULKAN_NO_EXTERNAL_MEMORY | 1: copies between Vulkan devices are staged (see Peer copies) |
   | env ACCEL_VULKAN_NO_EXTERNAL_SEMAPHORE | 1: waits on other devices' Vulkan signals are host-gated |
   | env ACCEL_VULKAN_TEST_DEVICE_LOST | TEST ONLY. N: the N-th vkQueueSubmit of a queue's segment, |
   |                             | counted from the device's create (read then), fails as if the driver |
   |                             | said VK_ERROR_DEVICE_LOST (nothing is submitted): a device loss on  |
   |                             | any driver, for the recovery path (see Recovery). Never set it else |
   The five ACCEL_VULKAN_NO_* variables exist to test fallback paths on drivers that would not take them.

   ==== Devices =================================================================================
   `device_index` counts the physical devices that can run the backend (Vulkan 1.2 or 1.1 +
   VK_KHR_timeline_semaphore, timeline semaphores enabled, a compute queue family), in the loader's order.
   Loaders tried: $ACCEL_VULKAN_LIBRARY, then libvulkan.so.1, libvulkan.so (Linux/BSD), vulkan-1.dll
   (Windows), libvulkan.1.dylib, libvulkan.dylib, libMoltenVK.dylib (macOS). The loader is opened by
   the first device and stays loaded for the life of the process (unloading it with the last device
   and loading it again made NVIDIA's driver stop loading after some dozens of cycles). With
   `debug = true` (not in an ACCEL_NO_DEBUG build) or ACCEL_VULKAN_VALIDATION=1 the validation layer is
   enabled when it is installed; VK_EXT_debug_utils messages go to the device's logger, validation ones
   prefixed with "[vulkan-validation]" (errors at ACCEL_LOG_ERROR, warnings at ACCEL_LOG_WARN). Layers
   enabled from the environment (VK_INSTANCE_LAYERS) report the same way.
   accel_vulkan_device_adopt builds a device on an engine's own VkInstance / VkDevice / VkQueue.

   ==== Memory ==================================================================================
   ACCEL_MEMORY_DEVICE takes a DEVICE_LOCAL memory type; when that type is also HOST_VISIBLE + COHERENT
   (integrated GPUs, lavapipe, resizable BAR) the buffer is mapped too and accel_buffer_map returns it
   (info.host_mapped_device_memory says so). ACCEL_MEMORY_HOST takes HOST_VISIBLE + COHERENT memory
   (HOST_CACHED where offered), mapped for its whole life. accel_buffer_read/write copy through the mapping
   where there is one, else through a staging buffer and a copy (blocking) on a VkQueue of their own
   where the compute family has two or more, else on the first (see "Queues").
   Queue-ordered memory (accel_queue_alloc / accel_queue_free) is taken where the queue's worker, or
   accel_queue_submit, builds the segment of the alloc, not when the alloc is recorded: a buffer of the
   device's pool (a range of a 32 MiB block) is lent to the handle there and given back where the free's
   segment is built; the queue's own later allocs reuse it at once (its segments run in order), another
   queue's once the free's batch completed. Batches of alloc / use / free submitted ahead of a wait hold
   one such buffer, not one each; accel_vulkan_buffer_handle of the handle is VK_NULL_HANDLE until its
   alloc's segment was built. Out of memory there fails the batch's signals from the alloc on. Host
   access (read, write, map) is refused until that segment was built, not until the device ran it: on a
   device whose queue waits on the GPU for a signal before the alloc (not lavapipe, which gates such
   waits on the host), order host access after the point with a signal, as the contract asks.

   ==== Programs ================================================================================
   SPIR-V only. The entry point is `name` when the module has one of that name, else its only GLCompute
   entry point; names of any length are kept whole. accel_program_create checks the module before any of
   it reaches the driver (drivers crash on malformed modules) and refuses, with a log line naming the
   word and opcode:
   - ACCEL_ERROR_INVALID_ARGUMENT: a bad header (magic, a version that is not SPIR-V 1.0 to 1.6, id bound
     0 or above 4194304, schema not 0), an instruction whose word count is 0 or runs past the end, an
     opcode accel does not know (the core opcodes of SPIR-V 1.6 plus the KHR/AMD ones a compute shader
     uses: subgroup, integer dot product, cooperative matrix, shader clock, DecorateString) or with fewer
     operands than it requires, a result id of 0 or not below the bound (also a result type, the target of
     a debug name, decoration or execution mode, an entry point's function or interface), the sections of the
     module out of the spec's order (2.4: capabilities ... types and globals, then functions, each closed by
     OpFunctionEnd, exactly one OpMemoryModel), an entry-point name without its NUL, no GLCompute entry point,
     or one naming an id that is not an OpFunction with a body. This is a structural check, not spirv-val: a
     well-formed module whose instructions mean nothing can still fail at submit (ACCEL_ERROR_COMPILE there),
     and one that breaks SPIR-V's validation rules (a BuiltIn decoration on the wrong object, a struct member
     index out of range, ...) is undefined behaviour in Vulkan, which drivers need not survive (lavapipe
     crashes on some): run spirv-val on modules from elsewhere.
   - ACCEL_ERROR_COMPILE: SPIR-V newer than the device takes (1.3 on Vulkan 1.1, 1.5 on 1.2, which accel
     creates its devices with; an adopted device: by accel_vulkan_adopt_desc.api_version, 1.3 -> 1.6).
   - ACCEL_ERROR_INVALID_ARGUMENT when the shader needs more than the desc gives: a storage-buffer binding
     of set 0 at or above buffer_count, or a push-constant block (from its first byte to the end of its
     last member) larger than constant_count * 4 bytes; the log names both numbers. Fewer is fine: a
     shader may leave bindings unused and read fewer constants than the exec passes (the layout declares
     buffer_count bindings and constant_count words; Vulkan allows a layout larger than the shader). What
     the shader "uses" is every such variable of the module (SPIR-V before 1.4), or those in the entry
     point's interface (1.4 and later). A descriptor accel cannot bind is refused the same way: a uniform
     buffer, an image or sampler, a set other than 0, an array of buffers at one binding.
   The work-group size comes from the shader: a dimension declared with a specialization
   constant (GLSL `local_size_x_id = 0` etc., which makes gl_WorkGroupSize a spec-constant composite) is
   specialised to the exec's local size (one VkPipeline per program and local size, cached); a fixed
   dimension runs at the shader's size, and an exec whose local size there is neither that size nor 1 (0
   counts as 1 and means "the shader's") is ACCEL_ERROR_INVALID_ARGUMENT at submit. The group count is
   ceil(global / local) per dimension. Descriptors are pushed (VK_KHR_push_descriptor) where the device has
   it, else allocated from a descriptor pool per submission.

   ==== Queues ==================================================================================
   ACCEL_QUEUE_COMPUTE takes the VkQueue of a compute family with the fewest accel queues (of up to
   ACCEL_VULKAN_MAX_QUEUES);
   ACCEL_QUEUE_COPY a transfer-only family's queue where the device has one (separate_copy_queue), else
   another queue of the compute family, else the same VkQueue. Every VkQueue has a mutex around
   vkQueueSubmit. A batch becomes one command buffer per segment (a `wait` in the middle of a batch starts a
   new segment). Its vkQueueSubmit waits on the queue's own completion timeline for the queue's earlier
   segments still running (a full memory dependency on them and nothing else; left out when they have
   all completed, or when one of the segment's waits can only be released by the queue's last segment:
   a chain step waiting for the step before); every command after the first gets a barrier over the
   stages the segment uses (compute shader and/or transfer: write -> read/write), so
   commands of a queue run in order, each seeing the writes of the ones before, across batches as well;
   each segment ends with a barrier to the host. A queue's batch of dispatches runs at about 0.94x the
   rate of the same dispatches recorded by hand (bench/vulkan.c figure 2 measures it). Commands of one
   segment end in one vkQueueSubmit whose signal operations carry the segment's queue signals (so a
   `signal` fires when its segment is done, not earlier: a command recorded after a signal but before
   the next wait delays it).

   ==== Recorded command lists ==================================================================
   accel_queue_record_end records the list into reusable secondary command buffers of
   ACCEL_VULKAN_REPLAY_CHUNK (32) commands each (simultaneous use; each opens with the in-order
   barrier), and a list of more than one chunk once more whole, with its pipelines made, its bindings
   pushed (or in descriptor sets of the list's own pool) and its updates' data in a staging buffer of
   its own, and once more as a primary command buffer. A segment whose only command is a replay without
   patches (on the list's queue family, untraced) submits that primary as it is: nothing is recorded per
   replay, as a raw program re-submits a command buffer recorded once. Another replay without patches
   runs the whole secondary (separate chunks take about 1.10x its time). A replay with patches runs the
   chunks without patches with one vkCmdExecuteCommands per run, and records the chunks that hold a
   patched command directly, patched (push constants and bindings cannot change inside a recorded
   command buffer, and SPIR-V reads its constants as push constants). Replaying secondaries costs about
   what re-submitting a pre-recorded command buffer does; re-recording a chunk or the whole list costs
   more (bench/vulkan.c figure 8 measures the options). A list whose every command is patched at each
   replay (examples/replay.c) costs about what recording anew does, less the validation. A queue of
   another family re-records every chunk.

   ==== Signals: design =========================================================================
   A signal is a timeline VkSemaphore plus a 64-bit host word. Its value is max(host word, semaphore
   counter), unless the host word holds a failed value (bit 63 set; accel.h's encoding), which then wins.
   Every way a signal reaches a value reaches the semaphore too (so device waits, and an engine's own
   waits on the semaphore, see it): a queue signal is a signal operation of its segment's vkQueueSubmit;
   a host raise (accel_signal_set, a failure, a value the host applies after GPU work) takes the host
   word at once (host waiters see it) and then the semaphore. Vulkan wants each signal of a timeline
   above its current value and below every pending signal operation, while accel's raises are a max;
   the device-wide submit lock keeps, per signal, the largest value the semaphore was promised (`hi`)
   and the VkQueue of its pending operations, and the rules are:
   - a queue signal is a native signal operation when its value is above `hi`, and the pending ones (if
     any) are on the same VkQueue (so they complete in order), and no device wait watches the semaphore
     for a value only the host can raise (below). Otherwise the queue's worker raises it from the host
     once the segment completed (other devices' and backends' signals always go that way);
   - a host raise above `hi` is vkSignalSemaphore when nothing is pending, else an empty submit on the
     pending operations' VkQueue (it lands right after them); a raise at or below `hi` is signalled
     from the host when it is below every pending operation's value (so a device wait for it is
     released now, even while the operation that promised more is held up), else left to the operation
     that promised it (host waiters see the value at once; the device when that operation runs); a
     value the semaphore reached is left alone (an engine may raise a wrapped one). A failure raises the
     semaphore to ACCEL_SIGNAL_MAX, or to its counter plus maxTimelineSemaphoreValueDifference where that is
     smaller (no valid wait can be for more).
   - Host wait (accel_signal_wait / wait_many): while a GPU signal operation is pending on an unreached
     signal, vkWaitSemaphores on those semaphores (WAIT_ANY for wait-any; all in one call for wait-all
     when the signals share a device); otherwise on the signal's host event, which a host set, a
     failure, or the submission of a GPU signal operation to that signal wakes. Every wait is cut into
     slices of 2 ms (up to 8 ms as a wait lasts) with a re-check in between (Mesa 22.3's lavapipe misses
     some wake-ups of vkWaitSemaphores, and polls when WAIT_ANY spans semaphores). Known limit under the
     Khronos validation layer 1.3.239: a vkWaitSemaphores for a value below the pending operation's (5
     while 7 is pending) returns from the driver, then the layer holds it until its own bookkeeping marks
     the value reached: at the device's next submission, else after its 10 s limit (its false positive
     UNASSIGNED-VkSemaphore-state-timeout). Seen where a queue's worker waits on the host for another
     queue's pending value and nothing else is submitted (tests/test_queues.c,
     wait_takes_the_first_point_that_reaches_it); the slices do not help there, lavapipe alone is fine.
   - A queue `wait` (see accel.h, "Waits on the device"): reached at submit, it costs nothing (when a GPU
     producer reached it, it is still put in the submit's wait operations, for the memory dependency).
     Otherwise it goes into the segment's vkQueueSubmit as a timeline wait when the device can watch it
     without holding up anything that does not already come after it: a VkQueue runs its submissions in
     order, so a wait holds up everything submitted to that VkQueue later, other accel queues' work too.
     That is the case for a value promised by signal operations pending on the queue's own VkQueue (they
     run first: the chain and frame-loop case, also on lavapipe's single VkQueue), and, when the accel
     queue owns its VkQueue, for any promised value and for a value only the host can raise (then
     the host raise is signalled at once); for an engine's semaphore (accel_vulkan_signal_wrap) on any
     VkQueue, since the engine raises it. Everything else (another device's or backend's signal, a
     host-raised value on a shared VkQueue) is gated: the queue's worker waits on the host, then submits.
     Several devices (accel.h, "Several devices"): a copy with another device's buffer is direct
     where memory exports between the two VkDevices ("Peer copies between Vulkan devices" below), else
     staged on the queue's worker (a host step: the other device's read/write, or a memmove between
     mapped memory); a wait on another Vulkan device's signal runs on the GPU where the two share its
     timeline semaphore (see the end of "Peer copies between Vulkan devices"), else it is gated as above.
     A COMPUTE queue owns a compute VkQueue that no other accel queue uses, for as long as it lives
     (another queue joining it later would be held up behind such a wait), while one is free; one
     compute VkQueue (the one COPY queues use, else the last; on lavapipe the only one) is never owned,
     and the queues that find no free one share it or another unowned one, the one with the fewest
     accel queues (up to ACCEL_VULKAN_MAX_QUEUES VkQueues).
     accel_buffer_read/write of memory the host cannot map (and the zero fill of a new buffer) copy
     through staging on a VkQueue of their own where the compute family has two or more (NVIDIA: 16),
     so that a queue waiting on the device for a host-raised value never holds them up; where it has
     one, they share it and accel queues on it gate such waits on the host.
   - Failure (accel.h, "Failure after hand-off"): the work behind a device wait may run after its signal
     failed; what it signals reads failed (the host word) before the failure reaches the semaphore.
   - Device loss (VK_ERROR_DEVICE_LOST from any call) sets the core's sticky lost flag and fails every
     signal of the device with ACCEL_ERROR_DEVICE_LOST; host waits return (vkWaitSemaphores reports the
     loss, or the next slice sees the flag).
   Lifetime: a submitted segment keeps its batch (and through it the buffers, programs and signals it
   uses) until the queue's completion timeline shows the GPU finished it; completed work is reclaimed at
   the next submit or finish. A queue keeps up to 16 command buffers and 64 segment records for reuse
   and frees the rest, so a burst does not grow its memory for good.

   ==== Peer copies between Vulkan devices ======================================================
   accel_queue_copy between buffers of two Vulkan devices on one physical device and driver (the same
   deviceUUID and driverUUID: two accel devices on one GPU, or two on lavapipe) is direct
   (accel_device_peer_info.direct_copy): the other device's memory is exported as an opaque fd
   (VK_KHR_external_memory_fd, enabled at create where the device can export and import buffer memory
   so) and imported into the queue's VkDevice once per 32 MiB block (or large buffer), and the copy is a
   vkCmdCopyBuffer in the queue's own command buffer. A device allocates exportable memory only while
   such a second device is open (exportable memory costs: on lavapipe about 1.4x the time to make and
   clear a buffer), so this holds for buffers made while both devices are open; a buffer made before
   is copied staged. Otherwise (other GPUs or drivers, adopted devices,
   wrapped buffers, ACCEL_VULKAN_NO_EXTERNAL_MEMORY) it is staged through host memory by the queue's
   worker (accel.h, "Several devices").
   A CUDA device of the same GPU (the same uuid) counts as such a second device: its queues copy this
   device's buffers through the memory imported into CUDA (accel_cuda.h); this device's queues copy
   CUDA buffers through the CUDA memory imported here where the driver exports it (cuMemCreate memory
   as a POSIX fd: buffers of at least 1 MiB made while both devices are open, accel_cuda.h "Several
   devices"), others staged.
   Waits on another Vulkan device's signals go to the device where both export and import timeline
   semaphores as opaque fds (VK_KHR_external_semaphore_fd): the signal's semaphore, made exportable
   while such a device is open, is imported once and waited on in the segment's vkQueueSubmit, for a
   value already promised there, on a queue that owns its VkQueue (a CUDA queue of the same GPU imports
   it as well); elsewhere (lavapipe 22.3 exports none, ACCEL_VULKAN_NO_EXTERNAL_SEMAPHORE) they stay
   host-gated. Waits on signals of a CUDA device of the same GPU go to the device the other way round:
   the queue lends the CUDA device a timeline semaphore of its own, which CUDA raises once the CUDA
   work that promised the value ran (accel_cuda.h, "Signals and signal points"), under the same
   conditions (an exporting driver, a promised value, an owned VkQueue); else they are host-gated.

   ==== Interop: an engine's buffers and semaphores =============================================
   For an engine that owns its Vulkan objects (examples/engine.c does all of this): build accel on its
   VkDevice (accel_vulkan_device_adopt), hand accel its buffers (accel_vulkan_buffer_wrap) and timeline
   semaphores (accel_vulkan_signal_wrap), and take accel's semaphores into its own submits
   (accel_vulkan_signal_semaphore; accel_vulkan_buffer_handle for accel's buffers). The engine keeps
   ownership of what it wrapped: destroying a wrapper, or the accel device, never destroys the engine's
   object. A wrapped signal's value is max(its host word, the semaphore's counter); host waits on it
   watch the semaphore itself (in slices of 2 to 8 ms), since the engine may signal it at any time.
   The public part of this header does not need the Vulkan headers (see "Vulkan types in the public
   part" below): code that only passes handles through can include it without them.

   ==== Timestamps and the trace ================================================================
   accel_queue_timestamp becomes vkCmdWriteTimestamp (BOTTOM_OF_PIPE: when every earlier command of the
   queue completed) into a query pool of the segment. A segment with timestamps raises all its signals
   from the host: the queue's worker waits for the segment, reads the queries, converts them to the host
   clock, writes them into their buffers (through the mapping, or a staging copy), and only then raises
   the signals; so any signal after a timestamp is observed after the value is there. The queue's next
   segment is submitted after that too, but a command of the SAME segment after the timestamp may run
   before the host wrote it: read the value after a signal that follows it. The cost: the queue's
   device idles between that segment and the next (a host round trip); other queues run on. A queue
   whose family has timestampValidBits 0 (some transfer-only families) refuses the command at submit
   with ACCEL_ERROR_UNSUPPORTED and a log line. Conversion: ticks * timestampPeriod from a pair of
   readings, VK_EXT_calibrated_timestamps (DEVICE + CLOCK_MONOTONIC, taken again for every segment; its
   error is the driver's maxDeviation, nanoseconds on lavapipe) where the device has it and accel's
   clock is CLOCK_MONOTONIC; else one paired reading taken at the first timestamp (a timestamp written
   by a one-command submission, matched to the middle of the host readings around it, the narrowest of
   3: half that bracket, typically 5-50 us, plus drift between the clocks since then). Either way the
   value is clamped to [the segment's submission, when the host saw it complete], where the truth is.
   ACCEL_VULKAN_NO_CALIBRATED_TIMESTAMPS=1 forces the paired reading (to test it).
   Traced (accel_device_desc.trace_path / ACCEL_TRACE), every segment is written so: a timestamp at its
   start and after every command, converted by the worker into a span per command (waits from the
   submission to the first command's start, signals at the end, recorded before they are raised so
   that the flows of the waits they release find them). Tracing thus serializes each queue with its
   host worker (a round trip per segment): the spans show the device's work, the gaps between a queue's
   segments are the tracing's.

   ==== Thread safety ===========================================================================
   As in accel.h. Internally: a mutex per VkQueue around vkQueueSubmit, a mutex per program around its
   pipeline cache, a device-wide mutex around semaphore bookkeeping (native operations, host raises) +
   vkQueueSubmit, the core's mutex per queue around its worker hand-off, accel.h's event (mutex +
   condition variable) per signal. accel_vulkan_device_adopt: the engine must not submit to the adopted
   VkQueue while accel may
   (accel takes its own lock, which the engine cannot see).

   ==== Recovery (accel_device_recover, see accel.h "Device generations") ======================
   A recover makes a new VkDevice on the same physical device, with the same queues and extensions,
   and its VkQueues, io pool and semaphore anew; the old VkDevice is destroyed in the same call, so
   nothing of the old generation lives on: once no native call on an old object is under way (value
   reads, waits and raises of signals' semaphores, a queue's completion checks, each counted), with the
   device's object list held (no destroy under way; one that starts waits), the old VkDevice is waited
   idle (every device wait on a failed signal's semaphore was released by its failure; a lost device
   returns at once), and every native object of the old generation (buffers' memory, pipelines and
   layouts, semaphores, command pools and lists, descriptor and query pools, the queues' in-flight
   segments) is destroyed before vkDestroyDevice: the validation layer checks that none is left, which
   is how tests/test_recover.c counts Vulkan objects over 100 recovers. A stale object's destroy then
   frees host memory only. accel_buffer_map pointers of the old generation are invalid after the
   recover. A device made by accel_vulkan_device_adopt is the engine's: ACCEL_ERROR_UNSUPPORTED, and
   nothing changes. ACCEL_VULKAN_TEST_DEVICE_LOST (above) loses a device on purpose, so that the whole
   path runs on lavapipe in the tests.

   ==== Errors ==================================================================================
   Every failing Vulkan call is logged with its name and VkResult. VK_ERROR_OUT_OF_{HOST,DEVICE}_MEMORY ->
   ACCEL_ERROR_OUT_OF_MEMORY, VK_ERROR_DEVICE_LOST -> ACCEL_ERROR_DEVICE_LOST (sticky), anything else ->
   ACCEL_ERROR_BACKEND. A driver error in a part of a batch that is submitted after accel_queue_submit
   returned (behind a gated wait) fails the signals that part would have signalled. Nothing aborts.
*/
#ifndef ACCEL_VULKAN_H_INCLUDED
#define ACCEL_VULKAN_H_INCLUDED

#include "accel.h"
/* ==== Vulkan types in the public part ====
   The declarations below use accel_vk_* names for the Vulkan types they take and return:
   - where <vulkan/vulkan_core.h> (or vulkan.h, volk.h, ...) was included BEFORE this header, and always in
     the translation unit that defines ACCEL_VULKAN_IMPLEMENTATION (which includes vulkan_core.h itself,
     with VK_NO_PROTOTYPES), they are Vulkan's own types: accel_vk_buffer is VkBuffer, accel_vk_semaphore
     VkSemaphore, accel_vk_device VkDevice, and so on;
   - otherwise the Vulkan headers are not needed and not included: dispatchable handles (instance,
     physical device, device) are void*, non-dispatchable ones (buffer, semaphore) are void* on 64-bit
     targets and uint64_t on 32-bit ones (the same representation vulkan_core.h gives them, so both views
     link to the same functions), VkDeviceSize is uint64_t, and VK_NULL_HANDLE is 0 / NULL.
   The implementation must see the Vulkan types: in its translation unit, define ACCEL_VULKAN_IMPLEMENTATION
   (or include vulkan_core.h) before the first #include of this header. */
#if defined(ACCEL_VULKAN_IMPLEMENTATION) && !defined(VULKAN_CORE_H_)
#  ifndef VK_NO_PROTOTYPES
#    define VK_NO_PROTOTYPES
#  endif
#  include <vulkan/vulkan_core.h>
#endif
#if defined(VULKAN_CORE_H_)
typedef VkInstance accel_vk_instance;
typedef VkPhysicalDevice accel_vk_physical_device;
typedef VkDevice accel_vk_device;
typedef VkBuffer accel_vk_buffer;
typedef VkSemaphore accel_vk_semaphore;
typedef VkQueue accel_vk_queue;
typedef VkDeviceSize accel_vk_device_size;
typedef PFN_vkGetInstanceProcAddr accel_vk_get_instance_proc_addr;
#else
#  define ACCEL_I_VK_PUBLIC_OPAQUE 1
#  if defined(_WIN32) && !defined(_WIN64)
#    define ACCEL_I_VKAPI_PTR __stdcall    /* vk_platform.h's VKAPI_PTR on 32-bit Windows */
#  else
#    define ACCEL_I_VKAPI_PTR
#  endif
typedef void* accel_vk_instance;
typedef void* accel_vk_physical_device;
typedef void* accel_vk_device;
typedef void* accel_vk_queue;
#  if UINTPTR_MAX > 0xffffffffu
typedef void* accel_vk_buffer;
typedef void* accel_vk_semaphore;
#  else
typedef uint64_t accel_vk_buffer;
typedef uint64_t accel_vk_semaphore;
#  endif
typedef uint64_t accel_vk_device_size;
typedef void (ACCEL_I_VKAPI_PTR* accel_vk_void_function)(void);
typedef accel_vk_void_function (ACCEL_I_VKAPI_PTR* accel_vk_get_instance_proc_addr)(
    accel_vk_instance instance, const char* name);
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The Vulkan backend's table, for accel_device_desc.backend / accel_device_create_any. Never NULL (in
   builds without threads or dlopen it is a stub whose devices are all ACCEL_ERROR_UNAVAILABLE). */
ACCEL_API const accel_backend* accel_vulkan_backend(void);

/* What accel_vulkan_device_adopt needs to know about an engine's Vulkan objects. accel does not take
   ownership of any of them: they must outlive the accel device, and the engine destroys them. */
typedef struct accel_vulkan_adopt_desc {
    accel_vk_instance instance;
    accel_vk_physical_device physical_device;
    accel_vk_device device;          /* created with timeline semaphores enabled (Vulkan 1.2 feature or
                                        KHR) */
    uint32_t queue_family;           /* a family with VK_QUEUE_COMPUTE_BIT */
    uint32_t queue_index;            /* accel's queues (COMPUTE and COPY) all submit to this VkQueue */
    accel_vk_get_instance_proc_addr get_instance_proc_addr;   /* required */
    uint32_t api_version;            /* the device's Vulkan version as created (VK_API_VERSION_1_x);
                                        0: 1.2; sets the newest SPIR-V programs may use */
    bool push_descriptors;           /* VK_KHR_push_descriptor was enabled on the device */
} accel_vulkan_adopt_desc;

/* Builds an accel device on the engine's VkDevice. `desc` (may be NULL) gives the allocator, logger,
   label, debug flag and trace (trace_path, else ACCEL_TRACE, as accel_device_create); its backend and
   device_index are ignored. Returns ACCEL_ERROR_INVALID_ARGUMENT for
   a missing handle, ACCEL_ERROR_UNSUPPORTED when the device lacks timeline semaphores or the family lacks
   compute, ACCEL_ERROR_OUT_OF_MEMORY / ACCEL_ERROR_BACKEND as their names say; *out is NULL on failure.
   accel_device_destroy on the result waits for accel's work and destroys only what accel created; when
   another device's batches still hold one of its signals, that signal (and the device state it needs)
   is destroyed when those batches are released, so finish them before destroying the VkDevice.
   Any thread. */
ACCEL_API accel_result accel_vulkan_device_adopt(const accel_device_desc* desc,
                                                 const accel_vulkan_adopt_desc* vk, accel_device** out);

/* ==== interop: native handles, an engine's buffers and timeline semaphores ====
   The getters return 0 / NULL (VK_NULL_HANDLE) for NULL and for an object of another backend, never fail
   otherwise, and may be called from any thread. A wrap call on a device of another backend returns
   ACCEL_ERROR_INVALID_ARGUMENT with *out NULL. Wrapped buffers and signals obey every rule of accel's own
   (validation, lifetime: destroying one that submitted work still uses is legal, failure); accel never
   destroys the engine's object: the engine keeps ownership and destroys it after accel released the
   wrapper (destroyed, and no submitted work uses it: accel_queue_finish on the queues that used it, or a
   signal they signal after it). */

/* The VkBuffer behind b (whole size, offset 0; for a view, its root's: the view starts at the offset it
   was made with, within the root's). 0 if b is NULL, not a Vulkan buffer or stale (made before a
   recover), and for a buffer of accel_queue_alloc before its alloc's point was reached (then the one lent
   to it: see "Memory"). */
ACCEL_API accel_vk_buffer accel_vulkan_buffer_handle(accel_buffer* b);
/* The VkQueue q's work is submitted to (fixed for q's life; other accel queues, and an adopting engine,
   may submit to it too), and its family in *family (if not NULL). VK_NULL_HANDLE (and family 0) if q is
   NULL, not a Vulkan queue or stale (made before a recover). A native step (accel_queue_native) receives
   the same. Any thread, also while another thread recovers the device. */
ACCEL_API accel_vk_queue accel_vulkan_queue_handle(accel_queue* q, uint32_t* family);
/* An engine's VkBuffer as an ACCEL_MEMORY_DEVICE accel buffer of `size` bytes (at most the VkBuffer's
   size). It must be a buffer of d's VkDevice (so d is normally an adopted device), bound to memory, with
   usage STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST (+ INDIRECT_BUFFER to hold an indirect exec's
   counts; accel's own buffers have it), and usable by accel's queue families (EXCLUSIVE
   sharing is fine on an adopted device: all its queues use the adopted family; on a device accel created
   with a separate copy family, use CONCURRENT over both). accel_buffer_map returns NULL for it (accel does
   not know its memory); read/write go through staging copies. Returns INVALID_ARGUMENT (NULL d/out, no
   buffer, size 0, a size above the buffer's memory requirement (Vulkan tells no buffer's size: a size
   between the two is the caller's to get right), d not a Vulkan device), OUT_OF_MEMORY (host),
   DEVICE_LOST. Any thread. */
ACCEL_API accel_result accel_vulkan_buffer_wrap(accel_device* d, accel_vk_buffer buffer,
                                                accel_vk_device_size size, accel_buffer** out);
/* The timeline VkSemaphore behind s (for a wrapped signal, the engine's own). An engine's vkQueueSubmit
   may wait on it for a value v: it reaches v however s reaches v (a queue signal, accel_signal_set, or a
   failure: a failed signal raises its semaphore to ACCEL_SIGNAL_MAX, at or above every value anyone can
   wait for, or as far toward it as the device's maxTimelineSemaphoreValueDifference allows, beyond which
   no valid wait can be; so an engine waiting on it is never stuck, while accel_signal_value reads the
   failed value). 0 if s is NULL, not a Vulkan signal or stale (made before a recover). */
ACCEL_API accel_vk_semaphore accel_vulkan_signal_semaphore(accel_signal* s);
/* An engine's own timeline semaphore (created on d's VkDevice) as an accel signal: its value is the
   semaphore's counter (at least its current value now); accel queues wait on it on the GPU, signal it,
   and host waits on it work, as for any accel signal. The engine keeps ownership: accel_signal_destroy
   never destroys the semaphore. Who signals it: Vulkan requires every signal of a timeline to be above
   its current value and every pending signal operation; when both the engine and accel signal it, the
   engine must keep to that (e.g. disjoint, increasing values); accel_signal_set on a wrapped signal
   signals the semaphore from the host, which Vulkan allows only below every pending signal operation of
   it, so do it when no engine signal operation on it is pending. A failure (accel_signal_fail, a failed
   wait upstream, device loss) raises the engine's semaphore as for accel's own (see
   accel_vulkan_signal_semaphore): the engine cannot signal it any further afterwards; it makes a new
   one. A destroy of d does not fail it (the engine may still signal it: another device's queue waiting
   on it waits for the engine). A queue wait on it goes to the GPU where
   accel's rules allow (also on a shared VkQueue, such as the one VkQueue of an adopted device: the engine
   raises it; accel queues sharing that VkQueue wait behind such a wait until it does), so on a
   VkQueue the engine shares with accel (an adopted device with one queue), submit the engine's signal
   operation before the accel work that waits for it, as Vulkan requires of one queue's submissions
   (accel's buffer reads, writes and staged creates use that VkQueue too, and wait behind it as well).
   Returns INVALID_ARGUMENT (NULL d/out, no
   semaphore, d not a Vulkan device), BACKEND (not a timeline semaphore: its counter cannot be read),
   OUT_OF_MEMORY, DEVICE_LOST. Any thread. */
ACCEL_API accel_result accel_vulkan_signal_wrap(accel_device* d, accel_vk_semaphore timeline,
                                                accel_signal** out);

#ifdef __cplusplus
}
#endif
#endif /* ACCEL_VULKAN_H_INCLUDED */

/* ============================================================================================== */
/*                                       IMPLEMENTATION                                           */
/* ============================================================================================== */
#if defined(ACCEL_VULKAN_IMPLEMENTATION) && !defined(ACCEL_VULKAN_IMPLEMENTATION_INCLUDED)
#define ACCEL_VULKAN_IMPLEMENTATION_INCLUDED
/* Map (grep for "==== name ===="). accel.h's core walks the batches ("core: batch walk"); this header
   turns segments into command buffers and queue submits:
     vulkan: stub                  - no threads or no dlopen: a backend that makes no device
     vulkan: entry points, loader library, objects
     vulkan: errors                - VkResult to accel_result; device loss; validation-layer messages
     vulkan: signals               - timeline semaphores; which waits go to the device
     vulkan: memory and buffers    - buffers, their 32 MiB blocks
     vulkan: peer copies           - memory exported as opaque fds (the core's imports' share slots)
     vulkan: signals waited on by other devices - timeline semaphores exported and imported
     vulkan: SPIR-V checks, programs
     vulkan: queue bookkeeping, queue-ordered memory (taken at its point), recording, recorded
             command lists
     vulkan: submission            - a segment's semaphores; timestamps and the trace; the host's part
                                     of a segment, and segment_submit
     vulkan: queues, devices
     vulkan: recovery              - accel_device_recover: the old VkDevice's objects, then a new one
     vulkan: backend table, interop
   Vulkan structs with an sType are zeroed with memset and filled by name: C++11 has no designated
   initialisers, and a positional list must name every member (-Wmissing-field-initializers), which
   the nested ones (VkPhysicalDeviceFeatures2) cannot do in a form both C and C++ accept. */
#if !defined(ACCEL_IMPLEMENTATION_INCLUDED)
#  error "accel_vulkan.h: the implementation needs accel.h's implementation first, in the same file (#define ACCEL_IMPLEMENTATION, #include \"accel.h\")"
#endif
#if defined(ACCEL_I_VK_PUBLIC_OPAQUE)
#  error "accel_vulkan.h: its declarations were read without the Vulkan types: in the implementation's file, define ACCEL_VULKAN_IMPLEMENTATION (or include <vulkan/vulkan_core.h>) before the first #include \"accel_vulkan.h\""
#endif

#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || defined(__EMSCRIPTEN__)
/* ==== vulkan: stub (no threads, no dlopen) ==== */
static accel_result accel_i_vk_stub_count(const accel_backend* b, uint32_t* count) {
    (void)b;
    *count = 0;
    accel_i_log_to(NULL, ACCEL_LOG_WARN,
                   "vulkan: not available in this build (no threads or no dynamic loading)");
    return ACCEL_ERROR_UNAVAILABLE;
}
static accel_result accel_i_vk_stub_create(const accel_backend* b, const accel_device_desc* d,
                                           accel_device** out) {
    (void)b;
    *out = NULL;
    accel_i_log_to(&d->logger, ACCEL_LOG_WARN,
                   "vulkan: not available in this build (no threads or no dynamic loading)");
    return ACCEL_ERROR_UNAVAILABLE;
}
static const accel_backend accel_i_vk_backend_table = {
    "vulkan", false, false, false, accel_i_vk_stub_count, accel_i_vk_stub_create,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL,  /* a stub makes no device: nothing past device_create is called */
    false, NULL, NULL, NULL, NULL, NULL   /* recover_whole, peer_copy, _waits, _frees, share, device_close */
};
ACCEL_API const accel_backend* accel_vulkan_backend(void) { return &accel_i_vk_backend_table; }
ACCEL_API accel_result accel_vulkan_device_adopt(const accel_device_desc* desc,
                                                 const accel_vulkan_adopt_desc* vk, accel_device** out) {
    (void)vk;
    if (out) *out = NULL;
    accel_i_log_to(desc ? &desc->logger : NULL, ACCEL_LOG_WARN, "vulkan: not available in this build");
    return ACCEL_ERROR_UNAVAILABLE;
}
/* no object here is ever a Vulkan one */
ACCEL_API accel_vk_buffer accel_vulkan_buffer_handle(accel_buffer* b) { (void)b; return VK_NULL_HANDLE; }
ACCEL_API accel_vk_queue accel_vulkan_queue_handle(accel_queue* q, uint32_t* family) {
    (void)q;
    if (family) *family = 0;
    return VK_NULL_HANDLE;
}
ACCEL_API accel_vk_semaphore accel_vulkan_signal_semaphore(accel_signal* s) {
    (void)s;
    return VK_NULL_HANDLE;
}
static accel_result accel_i_vk_stub_wrap(accel_device* d, const char* fn) {
    if (!d) return accel_i_invalid(NULL, fn, "d is NULL");
    return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                        "%s: device %p%s%s%s is not a Vulkan device (this build has no Vulkan backend)", fn,
                        ACCEL_I_DEVICE_LABEL(d));
}
ACCEL_API accel_result accel_vulkan_buffer_wrap(accel_device* d, accel_vk_buffer buffer,
                                                accel_vk_device_size size, accel_buffer** out) {
    (void)buffer; (void)size;
    if (out) *out = NULL;
    return accel_i_vk_stub_wrap(d, "accel_vulkan_buffer_wrap");
}
ACCEL_API accel_result accel_vulkan_signal_wrap(accel_device* d, accel_vk_semaphore timeline,
                                                accel_signal** out) {
    (void)timeline;
    if (out) *out = NULL;
    return accel_i_vk_stub_wrap(d, "accel_vulkan_signal_wrap");
}
#else

#if defined(_WIN32)
#  define ACCEL_I_VK_DLOPEN(name) ((void*)LoadLibraryA(name))
#  define ACCEL_I_VK_DLSYM(h, name) ((void*)(uintptr_t)GetProcAddress((HMODULE)(h), name))
#  define ACCEL_I_VK_DLCLOSE(h) FreeLibrary((HMODULE)(h))
#else
#  include <dlfcn.h>
#  define ACCEL_I_VK_DLOPEN(name) dlopen(name, RTLD_NOW | RTLD_LOCAL)
#  define ACCEL_I_VK_DLSYM(h, name) dlsym(h, name)
#  define ACCEL_I_VK_DLCLOSE(h) dlclose(h)
#endif
#ifndef ACCEL_VULKAN_MAX_QUEUES
#  define ACCEL_VULKAN_MAX_QUEUES 4
#endif
#if (ACCEL_VULKAN_MAX_QUEUES) < 1
#  error "accel_vulkan.h: ACCEL_VULKAN_MAX_QUEUES must be at least 1"
#endif
#define ACCEL_I_VK_MAX_BUFFERS 32u
#define ACCEL_I_VK_PREFIX "[vulkan-validation]"
/* Every blocking vkWaitSemaphores is cut into slices of this length and the values re-checked in
   between: Mesa 22.3's lavapipe misses about 1% of wake-ups when several threads wait on timelines, and
   a wait must not hang on a driver's lost wake-up. A wait that lasts takes longer slices, 1/32 of the time
   waited up to ACCEL_I_VK_SLICE_MAX_NS (accel_i_vk_slice): a wake-up every 2 ms kept an idle waiter's CPU
   ~1.8% busy (lavapipe, a 2 s wait), and a lost wake-up then costs at most ~3% of the wait. */
#define ACCEL_I_VK_SLICE_NS 2000000u
#define ACCEL_I_VK_SLICE_MAX_NS 8000000u

/* ==== vulkan: entry points ==== */
/* One list: G = global (loader), I = instance, D = device. The tables hold them as members (vk.Name). */
#define ACCEL_I_VK_FUNCS(G, I, D) \
    G(EnumerateInstanceVersion) G(EnumerateInstanceExtensionProperties) G(EnumerateInstanceLayerProperties) \
    G(CreateInstance) \
    I(DestroyInstance) I(EnumeratePhysicalDevices) I(GetPhysicalDeviceProperties) \
    I(GetPhysicalDeviceProperties2) I(GetPhysicalDeviceFeatures2) I(GetPhysicalDeviceQueueFamilyProperties) \
    I(GetPhysicalDeviceMemoryProperties) \
    I(EnumerateDeviceExtensionProperties) I(CreateDevice) I(GetDeviceProcAddr) \
    I(CreateDebugUtilsMessengerEXT) I(DestroyDebugUtilsMessengerEXT) \
    I(GetPhysicalDeviceCalibrateableTimeDomainsEXT) I(GetPhysicalDeviceExternalBufferProperties) \
    I(GetPhysicalDeviceExternalSemaphoreProperties) \
    D(DestroyDevice) D(GetDeviceQueue) D(DeviceWaitIdle) D(QueueSubmit) \
    D(CreateBuffer) D(DestroyBuffer) D(GetBufferMemoryRequirements) D(AllocateMemory) D(FreeMemory) \
    D(BindBufferMemory) D(MapMemory) D(UnmapMemory) \
    D(CreateShaderModule) D(DestroyShaderModule) D(CreateDescriptorSetLayout) D(DestroyDescriptorSetLayout) \
    D(CreatePipelineLayout) D(DestroyPipelineLayout) D(CreateComputePipelines) D(DestroyPipeline) \
    D(CreateDescriptorPool) D(DestroyDescriptorPool) D(AllocateDescriptorSets) D(UpdateDescriptorSets) \
    D(CreateCommandPool) D(DestroyCommandPool) D(AllocateCommandBuffers) D(FreeCommandBuffers) \
    D(BeginCommandBuffer) D(EndCommandBuffer) D(CmdPipelineBarrier) D(CmdBindPipeline) \
    D(CmdBindDescriptorSets) D(CmdPushConstants) D(CmdDispatch) D(CmdDispatchIndirect) D(CmdCopyBuffer) \
    D(CmdFillBuffer) \
    D(CmdPushDescriptorSetKHR) D(CmdExecuteCommands) \
    D(CreateSemaphore) D(DestroySemaphore) D(GetSemaphoreCounterValue) D(WaitSemaphores) D(SignalSemaphore) \
    D(CreateQueryPool) D(DestroyQueryPool) D(CmdResetQueryPool) D(CmdWriteTimestamp) D(GetQueryPoolResults) \
    D(GetCalibratedTimestampsEXT) D(GetMemoryFdKHR) D(GetSemaphoreFdKHR) D(ImportSemaphoreFdKHR)

#define ACCEL_I_VK_MEMBER(name) PFN_vk##name name;
#define ACCEL_I_VK_NONE(name)
typedef struct accel_i_vk_itab {   /* global + instance level */
    PFN_vkGetInstanceProcAddr GetInstanceProcAddr;
    ACCEL_I_VK_FUNCS(ACCEL_I_VK_MEMBER, ACCEL_I_VK_MEMBER, ACCEL_I_VK_NONE)
} accel_i_vk_itab;
typedef struct accel_i_vk_dtab {   /* device level */
    ACCEL_I_VK_FUNCS(ACCEL_I_VK_NONE, ACCEL_I_VK_NONE, ACCEL_I_VK_MEMBER)
} accel_i_vk_dtab;

static void accel_i_vk_load_global(accel_i_vk_itab* t) {
#define ACCEL_I_VK_LOAD_G(name) \
    t->name = (PFN_vk##name)(void (*)(void))t->GetInstanceProcAddr(VK_NULL_HANDLE, "vk" #name);
    ACCEL_I_VK_FUNCS(ACCEL_I_VK_LOAD_G, ACCEL_I_VK_NONE, ACCEL_I_VK_NONE)
#undef ACCEL_I_VK_LOAD_G
}
static void accel_i_vk_load_instance(accel_i_vk_itab* t, VkInstance inst) {
#define ACCEL_I_VK_LOAD_I(name) \
    t->name = (PFN_vk##name)(void (*)(void))t->GetInstanceProcAddr(inst, "vk" #name);
    ACCEL_I_VK_FUNCS(ACCEL_I_VK_NONE, ACCEL_I_VK_LOAD_I, ACCEL_I_VK_NONE)
#undef ACCEL_I_VK_LOAD_I
    if (!t->GetPhysicalDeviceProperties2)
        t->GetPhysicalDeviceProperties2 = (PFN_vkGetPhysicalDeviceProperties2)(void (*)(void))
                t->GetInstanceProcAddr(inst, "vkGetPhysicalDeviceProperties2KHR");
    if (!t->GetPhysicalDeviceFeatures2)
        t->GetPhysicalDeviceFeatures2 = (PFN_vkGetPhysicalDeviceFeatures2)(void (*)(void))
                t->GetInstanceProcAddr(inst, "vkGetPhysicalDeviceFeatures2KHR");
}
/* Returns the name of the first required device entry point that is missing, or NULL. */
static const char* accel_i_vk_load_device(const accel_i_vk_itab* it, accel_i_vk_dtab* t, VkDevice device) {
#define ACCEL_I_VK_LOAD_D(name) \
    t->name = (PFN_vk##name)(void (*)(void))it->GetDeviceProcAddr(device, "vk" #name);
    ACCEL_I_VK_FUNCS(ACCEL_I_VK_NONE, ACCEL_I_VK_NONE, ACCEL_I_VK_LOAD_D)
#undef ACCEL_I_VK_LOAD_D
    if (!t->GetSemaphoreCounterValue)
        t->GetSemaphoreCounterValue = (PFN_vkGetSemaphoreCounterValue)(void (*)(void))
                it->GetDeviceProcAddr(device, "vkGetSemaphoreCounterValueKHR");
    if (!t->WaitSemaphores)
        t->WaitSemaphores =
                (PFN_vkWaitSemaphores)(void (*)(void))it->GetDeviceProcAddr(device, "vkWaitSemaphoresKHR");
    if (!t->SignalSemaphore)
        t->SignalSemaphore =
                (PFN_vkSignalSemaphore)(void (*)(void))it->GetDeviceProcAddr(device, "vkSignalSemaphoreKHR");
#define ACCEL_I_VK_REQ_D(name) \
    if (!t->name && strcmp(#name, "CmdPushDescriptorSetKHR") != 0 && \
        strcmp(#name, "GetCalibratedTimestampsEXT") != 0 && strcmp(#name, "GetMemoryFdKHR") != 0 && \
        strcmp(#name, "GetSemaphoreFdKHR") != 0 && strcmp(#name, "ImportSemaphoreFdKHR") != 0) \
        return "vk" #name;
    ACCEL_I_VK_FUNCS(ACCEL_I_VK_NONE, ACCEL_I_VK_NONE, ACCEL_I_VK_REQ_D)
#undef ACCEL_I_VK_REQ_D
    return NULL;
}

/* ==== vulkan: loader library ==== */
/* The default loader: one process-wide handle, opened by the first device. A loader, once opened,
   stays loaded for the life of the process (an override path, ACCEL_VULKAN_LIBRARY, too: opening it
   again only counts a reference): NVIDIA's driver, unloaded with the loader when the last device went
   and loaded again by the next, stopped loading after some dozens of cycles on an H100
   (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER), as libcuda is never unloaded either. */
typedef struct accel_i_vk_lib_slot { accel_i_a32 lock; void* handle; } accel_i_vk_lib_slot;
static accel_i_vk_lib_slot accel_i_vk_lib_g;

static void* accel_i_vk_open_default(char* tried, size_t cap) {
    static const char* const names[] = {
#if defined(_WIN32)
        "vulkan-1.dll",
#elif defined(__APPLE__)
        "libvulkan.1.dylib", "libvulkan.dylib", "libMoltenVK.dylib",
#else
        "libvulkan.so.1", "libvulkan.so",
#endif
    };
    size_t used = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void* h = ACCEL_I_VK_DLOPEN(names[i]);
        if (h) return h;
        used += (size_t)snprintf(tried + used, used < cap ? cap - used : 0, "%s%s", i ? ", " : "", names[i]);
        if (used >= cap) used = cap - 1;
    }
    return NULL;
}
/* Opens the loader (see above: it stays loaded) and finds vkGetInstanceProcAddr. */
static accel_result accel_i_vk_lib_open(const accel_logger* lg, PFN_vkGetInstanceProcAddr* gipa) {
    const char* path = getenv("ACCEL_VULKAN_LIBRARY");
    char tried[256] = { 0 };
    bool shared = !(path && path[0]);
    void* h;
    *gipa = NULL;
    if (shared) {
        accel_i_spin_lock(&accel_i_vk_lib_g.lock);
        if (!accel_i_vk_lib_g.handle) accel_i_vk_lib_g.handle = accel_i_vk_open_default(tried, sizeof tried);
        h = accel_i_vk_lib_g.handle;
        accel_i_spin_unlock(&accel_i_vk_lib_g.lock);
    } else {
        h = ACCEL_I_VK_DLOPEN(path);
        snprintf(tried, sizeof tried, "%s (from ACCEL_VULKAN_LIBRARY)", path);
    }
    if (!h) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: the Vulkan loader library was not found (tried %s)",
                       tried);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    {   /* object pointer -> function pointer without a cast ISO C forbids */
        void* sym = ACCEL_I_VK_DLSYM(h, "vkGetInstanceProcAddr");
        memcpy(gipa, &sym, sizeof sym < sizeof *gipa ? sizeof sym : sizeof *gipa);
    }
    if (!*gipa) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: %s has no vkGetInstanceProcAddr: not a Vulkan loader",
                       shared ? "the loader" : path);
        if (!shared) ACCEL_I_VK_DLCLOSE(h);   /* not a loader: nothing of it is in use */
        return ACCEL_ERROR_UNAVAILABLE;
    }
    return ACCEL_OK;
}

/* ==== vulkan: objects ==== */
/* A VkQueue, how many accel queues submit to it (`users`) and whether one has it to itself for as long
   as it lives (`owned`; both under the device's submit_lock): a device wait that only the host can
   release is put on a VkQueue only when it is owned, since it holds up everything submitted to that
   VkQueue after it (see accel_i_vk_wait_on_device), also the work of a queue that would join later. */
typedef struct accel_i_vk_hwq {
    VkQueue queue; uint32_t family; accel_i_mutex lock; uint32_t users; bool owned;
    uint32_t stamp_bits;          /* the family's timestampValidBits (0: no timestamps on it) */
    /* vulkan: semaphore retirement (submit_lock): the flush timeline and the value of the last flush */
    VkSemaphore flush;
    uint64_t flush_to;
} accel_i_vk_hwq;

typedef struct accel_i_vk_device {
    accel_device base;
    accel_i_vk_itab vki;
    accel_i_vk_dtab vk;
    VkInstance instance; bool own_instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkDevice device; bool own_device;
    VkPhysicalDeviceMemoryProperties mem;
    uint32_t compute_family, copy_family;
    accel_i_vk_hwq hwq[ACCEL_VULKAN_MAX_QUEUES + 2];
    uint32_t hwq_count, hwq_inited, copy_hwq;
    uint32_t io_hwq;              /* the VkQueue of accel_buffer_read/write: one of its own where the
                                     family has one */
    accel_i_a32 next_hwq;
    bool push_desc, map_device;
    uint32_t spirv_minor;         /* the newest SPIR-V 1.x the device takes: 3 (Vulkan 1.1), 5 (1.2),
                                     6 (1.3) */
    uint64_t max_diff;            /* maxTimelineSemaphoreValueDifference */
    accel_i_mutex io_lock;
    accel_i_mutex submit_lock;    /* native wait/signal operations, host raises of semaphores,
                                     vkQueueSubmit */
    uint64_t stamp;               /* segment building (submit_lock): see accel_i_vk_signal.mark */
    accel_i_a64 queue_uids;       /* accel_i_vk_queue.uid handed out */
    bool locks_inited;
    VkCommandPool io_pool;        /* staging copies of accel_buffer_read/write (io_lock) */
    VkSemaphore io_sem;
    uint64_t io_val;
    /* semaphores waiting to be destroyed (see vulkan: semaphore retirement; submit_lock): the first
       nflushing are covered by the flush in flight; room for `retirable` (the semaphores accel owns,
       live or retired: reserved when each is made, so that retiring one never allocates) */
    VkSemaphore* retired;
    uint32_t nretired, retired_cap, nflushing, retirable;
    /* timestamps (see "Timestamps"): ticks to ns, and how device ticks meet the host clock */
    double stamp_period;          /* timestampPeriod: ns per tick */
    /* buffers' memory (see "vulkan: memory blocks"; mem_lock) */
    accel_i_mutex mem_lock;
    struct accel_i_vk_block* blocks;
    uint32_t empty_blocks;
    accel_i_a32 memory_objects;   /* VkDeviceMemory objects of buffers now: blocks and large buffers' own */
    bool cal_ext;                 /* VK_EXT_calibrated_timestamps with DEVICE + CLOCK_MONOTONIC domains */
    bool pci_known, pci_ext;      /* VK_EXT_pci_bus_info offered (known: from create's extension list) */
    bool cal_done;                /* paired calibration taken (io_lock): cal_host ns <-> cal_raw ticks */
    uint64_t cal_host, cal_raw, cal_error;
    /* vulkan: recovery. What vkCreateDevice was given (to make it again); the generation whose VkDevice
       is current (objects older than it have no native part any more); threads in a native call on an
       object of that VkDevice outside the object lock (accel_i_vk_enter); a recover under way */
    uint32_t open_compute_n, open_copy_family, open_next;
    bool open_io_own, open_copy_own;
    const char* open_ext[6];
    accel_i_a64 vk_gen;
    accel_i_inside native_users;   /* threads in a native call outside the object lock (accel_i_vk_enter) */
    accel_i_a32 recovering;
    uint32_t lose_at;             /* test only: ACCEL_VULKAN_TEST_DEVICE_LOST (which vkQueueSubmit fails) */
    accel_i_a32 submits;
    /* vulkan: peer copies: VK_KHR_external_memory_fd enabled (new buffer memory is allocated exportable
       while base.exporting says so); the driver's UUID (imports need the same device and driver) */
    bool ext_mem;
    uint8_t driver_uuid[VK_UUID_SIZE];
    bool ext_sem;                 /* vulkan: signals waited on by other devices (timeline opaque fds) */
    accel_i_a32 imports_closing;  /* its imports are dropped at destroy or recover (accel_i_vk_import_free) */
} accel_i_vk_device;

typedef struct accel_i_vk_buffer {
    accel_buffer base;
    VkBuffer buffer;
    VkDeviceMemory memory;        /* its own memory; VK_NULL_HANDLE in a block (or borrowed) */
    struct accel_i_vk_block* block;   /* the block its memory is a range of */
    struct accel_i_vk_range* range;
    bool borrowed;                /* accel_vulkan_buffer_wrap: the engine's buffer, never destroyed here */
    VkDeviceSize memory_size;     /* its own memory: the allocation's size and type (to import it), */
    uint32_t memory_type;
    bool exportable;              /* and whether it was allocated exportable (vulkan: peer copies) */
} accel_i_vk_buffer;

typedef struct accel_i_vk_pipe { uint32_t size[3]; VkPipeline pipeline; } accel_i_vk_pipe;
typedef struct accel_i_vk_program {
    accel_program base;
    VkShaderModule module;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    char* entry;                  /* the entry point's name, NUL-terminated (device allocator, entry_bytes) */
    size_t entry_bytes;
    uint32_t fixed[3];            /* the shader's size per dimension */
    bool spec[3];                 /* dimension set by a specialization constant */
    uint32_t spec_id[3];
    accel_i_mutex lock;           /* the pipeline cache */
    accel_i_vk_pipe* pipes;
    size_t pipes_bytes;
    uint32_t pipe_count;
} accel_i_vk_program;

#define ACCEL_I_VK_PEND 4u
typedef struct accel_i_vk_signal {
    accel_signal base;
    VkSemaphore sem;
    bool owned;                   /* accel created sem (else an engine's, see accel_vulkan_signal_wrap) */
    accel_i_event host;           /* host-set maximum, or the failed value (accel.h's event: max, failure
                                     final) */
    /* The rest is written under the device's submit_lock (see "Signals: design"): */
    accel_i_a64 submitted;        /* hi: the largest value the semaphore was promised (GPU signal operations
                                     submitted, host raises published); host-event waiters are woken when
                                     it grows */
    accel_i_vk_hwq* hi_hwq;       /* the VkQueue of the pending GPU signal operations (NULL: none pending) */
    uint64_t hwait;               /* the largest unpromised value a device wait watches for */
    uint64_t pend[ACCEL_I_VK_PEND];   /* the values of its pending GPU signal operations, lowest first */
    uint32_t npend;               /* above ACCEL_I_VK_PEND: not all listed (until the semaphore reaches hi) */
    /* hi_q: the accel queue (uid) whose segment hi_seg (its timeline value) made the last native
       promise; hi_prev: the promise before it (see seg_after_queue) */
    uint64_t hi_q;
    uint64_t hi_seg, hi_prev;
    uint64_t mark;                /* segment building: stamp of the segment that saw this signal last, */
    uint32_t slot;                /* and its index in that segment's wait or signal operations */
    bool exportable;              /* sem exports as an opaque fd (vulkan: signals waited on by others) */
} accel_i_vk_signal;

/* One submitted segment, kept until the queue's timeline reaches `value`. */
typedef struct accel_i_vk_entry accel_i_vk_entry;
struct accel_i_vk_entry {
    accel_i_vk_entry* next;
    uint64_t value;
    VkCommandBuffer cb;
    bool cb_lent;                 /* cb is a recorded list's primary (accel_i_vk_lone_replay): not the
                                     queue's */
    VkBuffer staging; VkDeviceMemory staging_mem;
    VkDescriptorPool pool;
    VkQueryPool stamps;           /* the segment's timestamps, one query each (nstamps), */
    uint32_t nstamps;
    uint64_t stamp_t0;            /* no earlier than its submission */
    accel_i_batch* batches;       /* batches that end with this segment */
};

typedef struct accel_i_vk_queue {
    accel_queue base;
    accel_i_vk_hwq* hwq;
    VkCommandPool pool;           /* used only by whoever is `active` */
    VkSemaphore done;             /* completion timeline: one value per submitted segment */
    accel_i_a32 list_lock;        /* entries, spare entries, free command buffers, last */
    accel_i_vk_entry *first, *last_entry, *spare;
    uint32_t spare_count;
    VkCommandBuffer* free_cbs; size_t free_cbs_bytes; uint32_t free_cb_count;
    uint64_t last;                /* last value submitted on `done` */
    uint64_t uid;                 /* never reused on its device (accel_i_vk_signal.hi_q) */
    /* a recover's (vulkan: recovery): the batches of the entries it took (list_lock), completed by it
       or by the queue's destroy; its list of the queues it holds */
    accel_i_batch* forgotten;
    struct accel_i_vk_queue* recover_next;
    struct accel_i_vk_relay* relays;   /* vulkan: waits on CUDA signals (the walking thread's) */
} accel_i_vk_queue;

/* What a submitted batch needs to run to its end, set aside by accel_queue_submit before anything of
   it runs (so that the worker, which runs the rest of a batch that waits on the host, never allocates:
   an allocation failure there could not be reported by the submit that already returned). It lives
   in the batch's arena, after the recorded data; the arrays follow it. */
typedef struct accel_i_vk_plan {
    accel_i_vk_entry* reserved;   /* one entry per segment not yet submitted */
    uint32_t cap;                 /* semaphore operations per segment: the arrays of accel_i_vk_ops */
} accel_i_vk_plan;
/* A segment's semaphore operations (arrays of plan->cap, in the batch's arena after the plan): wait
   operations [0, nw), signal operations [nw, nw + ns) (the last one: the queue's completion timeline),
   and the signals the host raises once the segment completed. */
typedef struct accel_i_vk_ops {
    VkSemaphore* sems; uint64_t* vals; VkPipelineStageFlags* stages; accel_i_vk_signal** sigs;
    accel_signal** later; uint64_t* later_vals;
    uint32_t nw, ns, nlater;
    bool after_last;              /* a wait operation implies the queue's last segment completed */
    bool lost_import;             /* another device's signal waited on here has no import (cannot be) */
} accel_i_vk_ops;
#define ACCEL_I_VK_OP_BYTES \
    (sizeof(VkSemaphore) + 2 * sizeof(uint64_t) + sizeof(VkPipelineStageFlags) + 2 * sizeof(void*))

static accel_i_vk_device* accel_i_vk_dev(accel_device* d) { return (accel_i_vk_device*)d; }
/* A native call on object o outside the object lock (a signal's semaphore: value, wait, raise; a
   queue's completion and entries): false when o's VkDevice is gone or going (accel_device_recover:
   vulkan: recovery), then the caller skips it. An accel_i_inside whose bar is vk_gen: the recover
   stores vk_gen, then waits until no caller is inside. */
static bool accel_i_vk_enter(accel_i_vk_device* dev, const accel_i_object* o) {
    return accel_i_inside_enter(&dev->native_users, &dev->vk_gen, o->generation);
}
static void accel_i_vk_leave(accel_i_vk_device* dev) { accel_i_inside_leave(&dev->native_users); }

/* ==== vulkan: errors ==== */
static const char* accel_i_vk_result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    default: return "VkResult";
    }
}
/* Device loss: sticky flag, every signal of the device failed, every waiter woken. */
static void accel_i_vk_mark_lost(accel_i_vk_device* dev) {
    /* a recover makes the VkDevice anew: its own calls on the old one say nothing about the new one */
    if (atomic_load(&dev->recovering)) return;
    if (atomic_exchange(&dev->base.lost, 1u) != 0) return;
    accel_i_log(&dev->base, ACCEL_LOG_ERROR,
                "vulkan: device lost; every call on this device now returns ACCEL_ERROR_DEVICE_LOST");
    accel_i_spin_lock(&dev->base.objects_lock);
    for (accel_i_object* o = dev->base.objects; o; o = o->next) {
        if (o->kind == ACCEL_I_SIGNAL) {
            accel_i_event_raise(&((accel_i_vk_signal*)o)->host,
                                accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST));
        }
    }
    /* waiters: vkWaitSemaphores returns DEVICE_LOST, or a slice ends */
    accel_i_spin_unlock(&dev->base.objects_lock);
}
/* Logs a failed call and maps its VkResult to an accel_result. */
static accel_result accel_i_vk_fail(accel_i_vk_device* dev, VkResult vr, const char* call, const char* what) {
    accel_result r = vr == VK_ERROR_OUT_OF_HOST_MEMORY || vr == VK_ERROR_OUT_OF_DEVICE_MEMORY
                         ? ACCEL_ERROR_OUT_OF_MEMORY
                   : vr == VK_ERROR_DEVICE_LOST ? ACCEL_ERROR_DEVICE_LOST : ACCEL_ERROR_BACKEND;
    accel_i_log(&dev->base, ACCEL_LOG_ERROR, "vulkan: %s: %s failed: %s (%d)", what, call,
                accel_i_vk_result_name(vr), (int)vr);
    if (r == ACCEL_ERROR_DEVICE_LOST) accel_i_vk_mark_lost(dev);
    return r;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL accel_i_vk_debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                          VkDebugUtilsMessageTypeFlagsEXT types,
                                                          const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                          void* user) {
    accel_i_vk_device* dev = (accel_i_vk_device*)user;
    accel_log_level level =
            (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? ACCEL_LOG_ERROR : ACCEL_LOG_WARN;
    const char* msg = data && data->pMessage ? data->pMessage : "(no message)";
    const char* id = data && data->pMessageIdName ? data->pMessageIdName : "";
    if (!strcmp(id, "UNASSIGNED-VkSemaphore-state-timeout")) {
        /* the 1.3.239 layer's own state tracker timing out under load ("most likely a validation bug",
           it says): reported, but not as a validation error of the application */
        accel_i_log(&dev->base, ACCEL_LOG_WARN,
                    "vulkan validation layer (its known tracker timeout, not an application error): %s", msg);
        return VK_FALSE;
    }
    if (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT))
        accel_i_log(&dev->base, level, ACCEL_I_VK_PREFIX " %s", msg);
    else   /* loader chatter (layers enabled from the environment, ...): errors stay errors, except while the
              instance is being created: "no drivers" there is the normal fallback of accel_device_create_any,
              reported as UNAVAILABLE with a warning */
        accel_i_log(&dev->base,
                    level == ACCEL_LOG_ERROR && dev->instance ? ACCEL_LOG_ERROR
                    : level == ACCEL_LOG_ERROR                ? ACCEL_LOG_WARN
                                                              : ACCEL_LOG_INFO,
                    "vulkan loader: %s", msg);
    return VK_FALSE;
}

/* ==== vulkan: signals ==== */
static bool accel_i_vk_retire_reserve(accel_i_vk_device* dev);   /* vulkan: semaphore retirement */
static void accel_i_vk_retire_unreserve(accel_i_vk_device* dev);
/* A timeline semaphore at `initial`; exportable: as an opaque fd (vulkan: signals waited on by other
   devices). */
static VkResult accel_i_vk_timeline_made(accel_i_vk_device* dev, uint64_t initial, bool exportable,
                                         VkSemaphore* out) {
    VkSemaphoreTypeCreateInfo type;
    VkSemaphoreCreateInfo ci;
    VkExportSemaphoreCreateInfo ei;
    memset(&type, 0, sizeof type);
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = initial;
    memset(&ei, 0, sizeof ei);
    ei.sType = VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO;
    ei.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    if (exportable) type.pNext = &ei;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
    ci.pNext = &type;
    return dev->vk.CreateSemaphore(dev->device, &ci, NULL, out);
}
static VkResult accel_i_vk_timeline(accel_i_vk_device* dev, uint64_t initial, VkSemaphore* out) {
    return accel_i_vk_timeline_made(dev, initial, false, out);
}
static uint64_t accel_i_vk_counter(accel_i_vk_device* dev, VkSemaphore sem) {
    uint64_t v = 0;
    VkResult vr = dev->vk.GetSemaphoreCounterValue(dev->device, sem, &v);
    if (vr != VK_SUCCESS) {
        accel_i_vk_fail(dev, vr, "vkGetSemaphoreCounterValue", "signal value");
        return 0;
    }
    return v;
}
/* The longest slice of a blocking wait that began at `since` (ACCEL_I_VK_SLICE_NS). */
static uint64_t accel_i_vk_slice(uint64_t since) {
    return accel_i_poll_slice(since, ACCEL_I_VK_SLICE_NS, ACCEL_I_VK_SLICE_MAX_NS);
}
/* Waits until the timeline `sem` reaches `value` (sliced, see ACCEL_I_VK_SLICE_NS). */
static VkResult accel_i_vk_wait_sem(accel_i_vk_device* dev, VkSemaphore sem, uint64_t value,
                                    uint64_t timeout_ns) {
    uint64_t deadline = accel_i_deadline(timeout_ns), since = accel_i_now_ns();
    VkSemaphoreWaitInfo wi;
    memset(&wi, 0, sizeof wi);
    wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
    wi.semaphoreCount = 1;
    wi.pSemaphores = &sem;
    wi.pValues = &value;
    for (;;) {
        uint64_t now = accel_i_now_ns(), slice = deadline > now ? deadline - now : 0;
        uint64_t most = accel_i_vk_slice(since);
        VkResult vr = dev->vk.WaitSemaphores(dev->device, &wi, slice < most ? slice : most);
        if (vr != VK_TIMEOUT) return vr;
        if (accel_i_now_ns() >= deadline) return VK_TIMEOUT;
    }
}
static uint64_t accel_i_vk_signal_value(const accel_signal* base) {
    accel_i_vk_signal* s = (accel_i_vk_signal*)(uintptr_t)base;
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    uint64_t h = accel_i_event_value(&s->host), c;
    if (accel_i_failed(h) || !accel_i_vk_enter(dev, &base->obj)) return h;   /* stale: failed already */
    c = accel_i_vk_counter(dev, s->sem);
    accel_i_vk_leave(dev);
    h = accel_i_event_value(&s->host);   /* a failure (e.g. device loss) may have landed meanwhile */
    if (accel_i_failed(h)) return h;
    return c > h ? c : h;
}
/* Host set / fail: the host word takes the value (max; a failed value is final) and wakes its host
   waiters. The semaphore is never signalled from the host (see "Signals: design"). */
static uint64_t accel_i_vk_signal_raise(accel_signal* base, uint64_t v) {
    return accel_i_event_raise(&((accel_i_vk_signal*)base)->host, v);
}
static accel_result accel_i_vk_signal_create(accel_device* d, uint64_t initial, accel_signal** out) {
    accel_i_vk_device* dev = accel_i_vk_dev(d);
    accel_i_vk_signal* s = (accel_i_vk_signal*)accel_i_dev_alloc(d, sizeof *s);
    VkResult vr;
    if (!s) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_signal_create: out of host memory");
    memset((void*)s, 0, sizeof *s);
    atomic_init(&s->submitted, initial);
    s->owned = true;
    if (!accel_i_event_init(&s->host, initial)) {
        accel_i_dev_free(d, s, sizeof *s);
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_signal_create: mutex/condition init failed");
    }
    if (!accel_i_vk_retire_reserve(dev)) {
        accel_i_event_destroy(&s->host);
        accel_i_dev_free(d, s, sizeof *s);
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_signal_create: out of host memory");
    }
    s->exportable = dev->ext_sem && accel_i_exporting(&dev->base);
    vr = accel_i_vk_timeline_made(dev, initial, s->exportable, &s->sem);
    if (vr != VK_SUCCESS) {
        accel_i_vk_retire_unreserve(dev);
        accel_i_event_destroy(&s->host);
        accel_i_dev_free(d, s, sizeof *s);
        return accel_i_vk_fail(dev, vr, "vkCreateSemaphore", "accel_signal_create");
    }
    accel_i_object_init(&s->base.obj, d, ACCEL_I_SIGNAL, "signal");
    *out = &s->base;
    return ACCEL_OK;
}
/* ==== vulkan: semaphore retirement ====
   A semaphore that went into a submission is not destroyed when accel is done with it, but retired and
   destroyed one step later. Mesa's threaded queues (lavapipe) signal a submission's semaphores before
   their submit thread releases the submission's timeline points, so a value observed does not prove
   the driver is done with every semaphore of that submission: destroying one then is a use after free
   in the driver's thread (seen as a crash in lavapipe's queue thread at device destroy, where the
   memory had been reused). A VkQueue runs its submissions in order, one after the other, so once an
   empty submission made after the retire (a flush: it signals the VkQueue's flush timeline) has
   signalled on every VkQueue, the driver is done with the semaphores retired before it, and with any
   signal operation still pending on them when they were retired (a host raise submitted behind GPU
   work: accel_i_vk_signal_publish), which that VkQueue runs before the flush. A flush starts
   once ACCEL_I_VK_RETIRE_BATCH wait; each retire checks the one in flight without blocking; device
   destroy and recover end with a flush waited for. */
#define ACCEL_I_VK_RETIRE_BATCH 16u
static VkResult accel_i_vk_submit_signal(accel_i_vk_device* dev, accel_i_vk_hwq* hwq, VkCommandBuffer cb,
                                         VkSemaphore sem, uint64_t value);
static bool accel_i_vk_flush_start(accel_i_vk_device* dev) {
    for (uint32_t i = 0; i < dev->hwq_inited; i++) {
        accel_i_vk_hwq* h = &dev->hwq[i];
        if (!h->flush && accel_i_vk_timeline(dev, 0, &h->flush) != VK_SUCCESS) return false;
        if (accel_i_vk_submit_signal(dev, h, VK_NULL_HANDLE, h->flush, h->flush_to + 1) != VK_SUCCESS)
            return false;
        h->flush_to++;
    }
    return true;
}
static bool accel_i_vk_flush_done(accel_i_vk_device* dev) {
    for (uint32_t i = 0; i < dev->hwq_inited; i++) {
        const accel_i_vk_hwq* h = &dev->hwq[i];
        if (h->flush && accel_i_vk_counter(dev, h->flush) < h->flush_to) return false;
    }
    return true;
}
/* Destroys the first n retired semaphores (submit_lock held). */
static void accel_i_vk_retired_destroy(accel_i_vk_device* dev, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) dev->vk.DestroySemaphore(dev->device, dev->retired[i], NULL);
    if (dev->nretired > n)   /* never memmove(NULL, ...) (an empty list may have no array yet) */
        memmove(dev->retired, dev->retired + n, (size_t)(dev->nretired - n) * sizeof *dev->retired);
    dev->nretired -= n;
    dev->retirable -= n;
    dev->nflushing = 0;
}
/* Room on the list for one more semaphore of accel's (before it is made); false: out of host memory.
   accel_i_vk_retire_unreserve when it is not made after all, or destroyed without retiring. */
static bool accel_i_vk_retire_reserve(accel_i_vk_device* dev) {
    bool ok = true;
    accel_i_mutex_lock(&dev->submit_lock);
    if (dev->retirable == dev->retired_cap) {
        uint32_t cap = dev->retired_cap ? dev->retired_cap * 2u : 32u;
        VkSemaphore* m = (VkSemaphore*)accel_i_dev_alloc(&dev->base, (size_t)cap * sizeof *m);
        ok = m != NULL;
        if (ok && dev->nretired) memcpy(m, dev->retired, (size_t)dev->nretired * sizeof *m);
        if (ok && dev->retired)
            accel_i_dev_free(&dev->base, dev->retired, (size_t)dev->retired_cap * sizeof *m);
        if (ok) { dev->retired = m; dev->retired_cap = cap; }
    }
    if (ok) dev->retirable++;
    accel_i_mutex_unlock(&dev->submit_lock);
    return ok;
}
static void accel_i_vk_retire_unreserve(accel_i_vk_device* dev) {
    accel_i_mutex_lock(&dev->submit_lock);
    dev->retirable--;
    accel_i_mutex_unlock(&dev->submit_lock);
}
/* Retires sem, one of accel's, reserved when it was made (see above; submit_lock held). */
static void accel_i_vk_sem_retire_locked(accel_i_vk_device* dev, VkSemaphore sem) {
    dev->retired[dev->nretired++] = sem;
    if (dev->nflushing && accel_i_vk_flush_done(dev)) accel_i_vk_retired_destroy(dev, dev->nflushing);
    if (!dev->nflushing && dev->nretired >= ACCEL_I_VK_RETIRE_BATCH && !accel_i_lost(&dev->base) &&
        accel_i_vk_flush_start(dev))
        dev->nflushing = dev->nretired;
}
static void accel_i_vk_sem_retire(accel_i_vk_device* dev, VkSemaphore sem) {
    accel_i_mutex_lock(&dev->submit_lock);
    accel_i_vk_sem_retire_locked(dev, sem);
    accel_i_mutex_unlock(&dev->submit_lock);
}
/* Device destroy and recover (the device idle, submit_lock held, no VkQueue's lock): a last flush,
   waited for, then every retired semaphore and the flush timelines go. */
static void accel_i_vk_retired_free_locked(accel_i_vk_device* dev) {
    if (!accel_i_lost(&dev->base) && accel_i_vk_flush_start(dev))
        for (uint32_t i = 0; i < dev->hwq_inited; i++)
            accel_i_vk_wait_sem(dev, dev->hwq[i].flush, dev->hwq[i].flush_to, 1000000000u);
    dev->nflushing = 0;
    accel_i_vk_retired_destroy(dev, dev->nretired);
    for (uint32_t i = 0; i < dev->hwq_inited; i++) {
        if (dev->hwq[i].flush) dev->vk.DestroySemaphore(dev->device, dev->hwq[i].flush, NULL);
        dev->hwq[i].flush = VK_NULL_HANDLE;
        dev->hwq[i].flush_to = 0;
    }
}

static void accel_i_vk_signal_free(accel_signal* base) {
    accel_i_vk_signal* s = (accel_i_vk_signal*)base;
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    /* retired, not destroyed: also a host raise published behind GPU work (accel_i_vk_signal_publish)
       may still be pending on its VkQueue, behind other queues' work that may wait for anything, and
       the flush that frees it comes after that on the same VkQueue. No semaphore: a recover took it
       (vulkan: recovery) */
    if (s->exportable) accel_i_imports_evict(s);   /* its imports (vulkan: signals waited on by ...) */
    if (s->owned && s->sem) accel_i_vk_sem_retire(dev, s->sem);
    accel_i_event_destroy(&s->host);
    accel_i_dev_free(&dev->base, s, sizeof *s);
}

/* The semaphore value a failure raises it to: at or above every value anyone can wait for
   (ACCEL_SIGNAL_MAX), or as far as maxTimelineSemaphoreValueDifference lets it go from `counter`
   (no valid wait can be for more). */
static uint64_t accel_i_vk_fail_target(const accel_i_vk_device* dev, uint64_t counter) {
    return dev->max_diff >= ACCEL_SIGNAL_MAX - counter ? ACCEL_SIGNAL_MAX : counter + dev->max_diff;
}
/* One vkQueueSubmit on hwq of cb (may be VK_NULL_HANDLE) that signals the timeline `sem` to `value`. */
static VkResult accel_i_vk_submit_signal(accel_i_vk_device* dev, accel_i_vk_hwq* hwq, VkCommandBuffer cb,
                                         VkSemaphore sem, uint64_t value) {
    VkTimelineSemaphoreSubmitInfo ti;
    VkSubmitInfo si;
    VkResult vr;
    memset(&ti, 0, sizeof ti);
    ti.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    ti.signalSemaphoreValueCount = 1;
    ti.pSignalSemaphoreValues = &value;
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.pNext = &ti;
    si.commandBufferCount = cb ? 1 : 0;
    si.pCommandBuffers = &cb;
    si.signalSemaphoreCount = 1;
    si.pSignalSemaphores = &sem;
    accel_i_mutex_lock(&hwq->lock);
    vr = dev->vk.QueueSubmit(hwq->queue, 1, &si, VK_NULL_HANDLE);
    accel_i_mutex_unlock(&hwq->lock);
    return vr;
}
/* Signals `sem` to `value` on `hwq` after everything submitted to it: a host raise that must land
   after GPU signal operations still pending there (submit_lock held). */
static VkResult accel_i_vk_signal_behind(accel_i_vk_device* dev, accel_i_vk_hwq* hwq, VkSemaphore sem,
                                         uint64_t value) {
    return accel_i_vk_submit_signal(dev, hwq, VK_NULL_HANDLE, sem, value);
}
/* The pending values list (submit_lock held): add v (above every value listed); the lowest value still
   pending above the counter c (UINT64_MAX: none; 0: not all are listed). */
static void accel_i_vk_pend_add(accel_i_vk_signal* s, uint64_t v) {
    if (s->npend < ACCEL_I_VK_PEND) s->pend[s->npend] = v;
    if (s->npend <= ACCEL_I_VK_PEND) s->npend++;
}
static uint64_t accel_i_vk_pend_low(accel_i_vk_signal* s, uint64_t c) {
    uint32_t n = 0;
    if (s->npend > ACCEL_I_VK_PEND) {
        if (c < atomic_load(&s->submitted)) return 0;
        s->npend = 0;
    }
    for (uint32_t i = 0; i < s->npend; i++) if (s->pend[i] > c) s->pend[n++] = s->pend[i];
    s->npend = n;
    return n ? s->pend[0] : UINT64_MAX;
}
/* The device side of a host raise (set, fail, or a value the host applies after GPU work): the
   semaphore reaches it too, so device waits and an engine's waits on the semaphore see it. Vulkan wants
   every signal of a timeline above its current value and below every pending signal operation, and
   accel's raises are a max; so a value the semaphore has reached (an engine may raise its own wrapped
   semaphore) is left alone; one above what it was promised (`hi`) is signalled from the host when
   nothing is pending, else submitted behind the pending operations on their VkQueue (they are all on
   one: accel_i_vk_native_ok); one below every pending operation's value is signalled from the host
   at once; anything else is left to the promise. */
static void accel_i_vk_signal_publish(accel_signal* base, uint64_t v) {
    accel_i_vk_signal* s = (accel_i_vk_signal*)base;
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    uint64_t c, target;
    VkResult vr = VK_SUCCESS;
    if (accel_i_lost(&dev->base) || !accel_i_vk_enter(dev, &base->obj)) return;
    accel_i_mutex_lock(&dev->submit_lock);
    c = accel_i_vk_counter(dev, s->sem);
    target = accel_i_failed(v) ? accel_i_vk_fail_target(dev, c) : v;
    /* c: an engine may raise it */
    if (target > c && target > atomic_load(&s->submitted) && target - c <= dev->max_diff) {
        if (c >= atomic_load(&s->submitted) || !s->hi_hwq) {
            VkSemaphoreSignalInfo si;
            memset(&si, 0, sizeof si);
            si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
            si.semaphore = s->sem;
            si.value = target;
            vr = dev->vk.SignalSemaphore(dev->device, &si);
            s->hi_hwq = NULL;
        } else {
            vr = accel_i_vk_signal_behind(dev, s->hi_hwq, s->sem, target);
            if (vr == VK_SUCCESS) accel_i_vk_pend_add(s, target);
        }
        if (vr == VK_SUCCESS) atomic_store(&s->submitted, target);
    } else if (target > c && target < accel_i_vk_pend_low(s, c) && target - c <= dev->max_diff) {
        /* below a pending GPU signal operation: Vulkan lets the host signal it now, which releases the
           device waits for it (a value that comes by another route than the promise: a held-up
           promise would hold them up too, where the host may wait for them first) */
        VkSemaphoreSignalInfo si;
        memset(&si, 0, sizeof si);
        si.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
        si.semaphore = s->sem;
        si.value = target;
        vr = dev->vk.SignalSemaphore(dev->device, &si);
    }
    accel_i_mutex_unlock(&dev->submit_lock);
    accel_i_vk_leave(dev);
    if (vr != VK_SUCCESS) accel_i_vk_fail(dev, vr, "vkSignalSemaphore", "signal raise");
}
/* Can the device wait for s >= v itself? Only for a signal of this device, and only where the wait
   cannot hold up anything that does not already come after it: a VkQueue runs its submissions in order,
   so a wait there holds up everything submitted to that VkQueue later, other accel queues' work too.
   - v promised by GPU signal operations pending on this queue's own VkQueue: they were submitted
     before, so they run first, and the wait holds up nothing (the chain and frame-loop case, also on
     a device with one VkQueue, such as lavapipe);
   - this queue owns its VkQueue (accel_i_vk_hwq_take: no other accel queue submits to it while this
     one lives, now or later): anything promised (on any VkQueue), and a value only the host
     can raise when nothing is pending on the semaphore, so that the raise is signalled at once (the
     wait is remembered in hwait: until the semaphore passes it, no GPU signal operation goes onto it
     natively, so host raises stay immediate). What it holds up is this queue's later work, which an
     in-order queue holds up anyway.
   - an engine's semaphore (accel_vulkan_signal_wrap), on any VkQueue, under the same conditions as on
     an owned one: the engine raises it (its signal operation comes first where it shares the VkQueue,
     as accel_vulkan_signal_wrap asks), and an engine sharing accel's VkQueue needs accel_queue_submit
     to make its vkQueueSubmit before it returns (examples/engine.c); accel queues sharing that VkQueue
     wait behind it until the engine's value comes.
   Another Vulkan device's signal: see "vulkan: signals waited on by other devices". Anything else, and
   other backends' signals, is gated on the host (v1). */
static bool accel_i_vk_wait_foreign(accel_i_vk_queue* q, accel_signal* s, uint64_t v);
static bool accel_i_vk_wait_on_device(accel_queue* qb, accel_signal* base, uint64_t v) {
    accel_i_vk_device* dev = accel_i_vk_dev(qb->obj.device);
    accel_i_vk_queue* q = (accel_i_vk_queue*)qb;
    accel_i_vk_signal* s = (accel_i_vk_signal*)base;
    const accel_i_vk_hwq* hwq;
    uint64_t c, hi;
    bool ok;
    accel_i_mutex_lock(&dev->submit_lock);   /* a recover takes q's VkQueue under it */
    hwq = q->hwq;
    if (!hwq || base->obj.device != &dev->base) {
        bool owned = hwq && hwq->owned;   /* read under the lock: a queue destroy gives VkQueues back */
        accel_i_mutex_unlock(&dev->submit_lock);
        if (!hwq) return true;   /* a recover took it (q is stale): the walk fails the segment */
        return owned && accel_i_vk_wait_foreign(q, base, v);
    }
    c = accel_i_vk_counter(dev, s->sem);
    hi = atomic_load(&s->submitted);
    ok = v <= hi && s->hi_hwq == q->hwq;
    if (!ok && (q->hwq->owned || !s->owned)) {   /* owned VkQueue, or an engine's semaphore (see above) */
        ok = v <= hi || (c >= hi && v - c <= dev->max_diff);
        if (ok && v > hi && v > s->hwait) s->hwait = v;
    }
    accel_i_mutex_unlock(&dev->submit_lock);
    return ok;
}
/* May the segment signal s = v with a native signal operation on hwq? (submit_lock held) Only above
   every value promised so far, behind pending operations of the same VkQueue only (so they complete in
   order of value), and not while a device wait watches for an unpromised value (see above). */
static bool accel_i_vk_native_ok(accel_i_vk_device* dev, accel_i_vk_signal* s, uint64_t v,
                                 const accel_i_vk_hwq* hwq) {
    uint64_t hi = atomic_load(&s->submitted), c;
    if (v <= hi) return false;
    c = accel_i_vk_counter(dev, s->sem);   /* above hi when an engine raised its own semaphore (a wrap) */
    return v > c && (s->hi_hwq == hwq || c >= hi) && s->hwait <= c && v - c <= dev->max_diff;
}

/* Sleeps on the signal's host event until its word reaches v, a GPU signal operation is submitted to
   it (submitted grows past `seen`: the caller then waits on the semaphore), or `ns` pass; it spins first
   only within ACCEL_CPU_SPIN_NS of `since`, when the wait began (one spin per wait, not per slice). */
static void accel_i_vk_host_wait(accel_i_vk_signal* s, uint64_t v, uint64_t seen, uint64_t ns,
                                 uint64_t since) {
    accel_i_event_wait_or(&s->host, v, &s->submitted, seen, ns, since);
}

/* How long a wait watches one part of its signals (a host event, or the GPU's semaphores) while another
   unreached signal can move without waking it (a host set of a second host-only signal rings an event the
   wait does not sleep on), so it polls at the core's pace (accel_i_poll_slice): 200 us at first, at most
   ACCEL_I_VK_SLICE_NS. A 200 us poll for as long as the wait lasts kept a CPU ~10% busy. */
static uint64_t accel_i_vk_poll_slice(uint64_t since) {
    return accel_i_poll_slice(since, 200000u, ACCEL_I_VK_SLICE_NS);
}

/* accel_i_vk_enter for every signal of a wait (one count). */
static bool accel_i_vk_enter_all(accel_i_vk_device* dev, accel_signal* const* s, uint32_t n) {
    uint64_t oldest = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (s[i]->obj.generation < oldest) oldest = s[i]->obj.generation;
    return accel_i_inside_enter(&dev->native_users, &dev->vk_gen, oldest);
}
/* Host wait over signals of one device, in slices (accel_i_vk_slice), re-checking the
   values after each: while a GPU signal operation is pending on an unreached signal, vkWaitSemaphores on
   those semaphores (WAIT_ANY for wait-any; all of them for wait-all: one call); otherwise only the host
   can move the value, and the wait is on the first unreached signal's host event (spin, then condition
   variable; a host set or failure wakes it at once). */
static accel_result accel_i_vk_wait(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                    uint64_t timeout_ns, uint32_t* first) {
    accel_i_vk_device* dev = accel_i_vk_dev(s[0]->obj.device);
    VkSemaphore local_s[8], *sems = local_s;
    uint64_t local_v[8], *vals = local_v, deadline = accel_i_deadline(timeout_ns), since = accel_i_now_ns();
    accel_result r = ACCEL_TIMEOUT;
    if (n > 8) {
        sems = (VkSemaphore*)accel_i_dev_alloc(&dev->base, n * sizeof *sems);
        vals = (uint64_t*)accel_i_dev_alloc(&dev->base, n * sizeof *vals);
        if (!sems || !vals) {   /* fall back to polling */
            accel_i_dev_free(&dev->base, sems, n * sizeof *sems);
            accel_i_dev_free(&dev->base, vals, n * sizeof *vals);
            return accel_i_wait_mixed(s, v, n, all, timeout_ns, first);
        }
    }
    for (;;) {
        uint64_t now, slice, poll;
        uint32_t k = 0, host_only = UINT32_MAX, unreached = 0;
        uint64_t host_sub = 0;
        VkSemaphoreWaitInfo wi;
        VkResult vr;
        r = accel_i_wait_check(s, v, n, all, first);
        if (r != ACCEL_TIMEOUT) break;
        if (accel_i_lost(&dev->base)) { r = ACCEL_ERROR_DEVICE_LOST; break; }
        now = accel_i_now_ns();
        if (now >= deadline) break;
        if (!accel_i_vk_enter_all(dev, s, n)) { accel_i_yield(); continue; }   /* stale: failed soon */
        slice = deadline == ACCEL_I_FOREVER ? ACCEL_I_FOREVER : deadline - now;
        if (slice > (poll = accel_i_vk_slice(since))) slice = poll;
        for (uint32_t i = 0; i < n; i++) {   /* submitted is read before the counter: no false "pending" */
            accel_i_vk_signal* vs = (accel_i_vk_signal*)s[i];
            uint64_t sub = atomic_load(&vs->submitted), h = accel_i_event_value(&vs->host), c;
            if (h >= v[i]) continue;
            /* nothing promised above the host's value: an owned semaphore is not above it either (only
               accel signals it; a signal operation that landed before its promise was stored wakes the
               host event right after it), so no driver call: under a validation layer each one takes a
               lock every waiter of the device shares */
            c = vs->owned && sub <= h ? h : accel_i_vk_counter(dev, vs->sem);
            if (c >= v[i]) continue;
            unreached++;
            /* an engine's semaphore (wrapped) may be signalled by the engine at any time: watch it */
            if ((sub > c || !vs->owned) && v[i] - c <= dev->max_diff) { sems[k] = vs->sem; vals[k++] = v[i]; }
            else if (host_only == UINT32_MAX) { host_only = i; host_sub = sub; }
        }
        if (k == 0 && host_only == UINT32_MAX) { accel_i_vk_leave(dev); continue; }   /* reached meanwhile */
        if (host_only != UINT32_MAX && (k == 0 || all)) {
            /* wait-all: this one must be reached anyway; wait-any with nothing pending on the GPU */
            accel_i_vk_leave(dev);
            if ((k != 0 || unreached > 1) && slice > (poll = accel_i_vk_poll_slice(since))) slice = poll;
            accel_i_vk_host_wait((accel_i_vk_signal*)s[host_only], v[host_only], host_sub, slice, since);
            continue;
        }
        /* any: the host may move one meanwhile */
        if (host_only != UINT32_MAX && slice > (poll = accel_i_vk_poll_slice(since))) slice = poll;
        memset(&wi, 0, sizeof wi);
        wi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO;
        wi.flags = all ? 0 : VK_SEMAPHORE_WAIT_ANY_BIT;
        wi.semaphoreCount = k;
        wi.pSemaphores = sems;
        wi.pValues = vals;
        vr = dev->vk.WaitSemaphores(dev->device, &wi, slice);
        accel_i_vk_leave(dev);
        if (vr != VK_SUCCESS && vr != VK_TIMEOUT) {
            r = accel_i_vk_fail(dev, vr, "vkWaitSemaphores", "accel_signal_wait");
            if (r == ACCEL_ERROR_DEVICE_LOST) break;
            r = accel_i_wait_check(s, v, n, all, first);
            if (r == ACCEL_TIMEOUT) r = ACCEL_ERROR_BACKEND;
            break;
        }
    }
    if (sems != local_s) {
        accel_i_dev_free(&dev->base, sems, n * sizeof *sems);
        accel_i_dev_free(&dev->base, vals, n * sizeof *vals);
    }
    return r;
}
static accel_result accel_i_vk_signal_wait_many(accel_signal* const* s, const uint64_t* v, uint32_t n,
                                                bool all, uint64_t timeout_ns, uint32_t* first) {
    for (uint32_t i = 1; i < n; i++)
        if (s[i]->obj.device != s[0]->obj.device) return accel_i_wait_mixed(s, v, n, all, timeout_ns, first);
    return accel_i_vk_wait(s, v, n, all, timeout_ns, first);
}

/* ==== vulkan: memory and buffers ==== */
/* The memory type among `bits` with all of `need`, preferring one with all of `want`; -1 if none. */
static int accel_i_vk_mem_type(const accel_i_vk_device* dev, uint32_t bits, VkMemoryPropertyFlags need,
                               VkMemoryPropertyFlags want) {
    int fallback = -1;
    for (uint32_t i = 0; i < dev->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = dev->mem.memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & need) != need) continue;
        if ((f & want) == want) return (int)i;
        if (fallback < 0) fallback = (int)i;
    }
    return fallback;
}

/* A VkBuffer of size bytes, its memory requirements and the memory type for it (host: host-visible and
   coherent, cached where there is such; else device-local where there is such). */
static accel_result accel_i_vk_buffer_new(accel_i_vk_device* dev, VkDeviceSize size, bool host,
                                          const char* what, VkBuffer* buf, VkMemoryRequirements* req,
                                          uint32_t* type) {
    const VkMemoryPropertyFlags hv =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t families[2] = { dev->compute_family, dev->copy_family };
    VkBufferCreateInfo bi;
    VkExternalMemoryBufferCreateInfo ei;   /* its memory may be exportable (vulkan: peer copies) */
    VkResult vr;
    int t;
    *buf = VK_NULL_HANDLE;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    memset(&ei, 0, sizeof ei);
    ei.sType = VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO;
    ei.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    if (dev->ext_mem) bi.pNext = &ei;
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;   /* indirect counts */
    if (dev->copy_family != dev->compute_family) {
        bi.sharingMode = VK_SHARING_MODE_CONCURRENT;
        bi.queueFamilyIndexCount = 2;
        bi.pQueueFamilyIndices = families;
    }
    vr = dev->vk.CreateBuffer(dev->device, &bi, NULL, buf);
    if (vr != VK_SUCCESS) return accel_i_vk_fail(dev, vr, "vkCreateBuffer", what);
    dev->vk.GetBufferMemoryRequirements(dev->device, *buf, req);
    t = host ? accel_i_vk_mem_type(dev, req->memoryTypeBits, hv, VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
             : accel_i_vk_mem_type(dev, req->memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (t < 0) {
        dev->vk.DestroyBuffer(dev->device, *buf, NULL);
        *buf = VK_NULL_HANDLE;
        return accel_i_fail(&dev->base, ACCEL_ERROR_UNSUPPORTED, "vulkan: %s: no suitable memory type", what);
    }
    *type = (uint32_t)t;
    return ACCEL_OK;
}
/* size bytes of memory of `type`, mapped (*mapped) when host-visible and coherent and `map` is asked;
   with `shared`, exportable as an opaque fd where the device exports now (*shared says whether: vulkan:
   peer copies). */
static VkResult accel_i_vk_memory_new(accel_i_vk_device* dev, VkDeviceSize size, uint32_t type, bool map,
                                      bool* shared, VkDeviceMemory* mem, void** mapped) {
    const VkMemoryPropertyFlags hv =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo ai;
    VkExportMemoryAllocateInfo ei;
    VkResult vr;
    *mapped = NULL;
    memset(&ai, 0, sizeof ai);
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    memset(&ei, 0, sizeof ei);
    ei.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO;
    ei.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    if (shared && (*shared = dev->ext_mem && accel_i_exporting(&dev->base))) ai.pNext = &ei;
    ai.allocationSize = size;
    ai.memoryTypeIndex = type;
    vr = dev->vk.AllocateMemory(dev->device, &ai, NULL, mem);
    if (vr != VK_SUCCESS) { *mem = VK_NULL_HANDLE; return vr; }
    if (map && (dev->mem.memoryTypes[type].propertyFlags & hv) == hv &&
        (vr = dev->vk.MapMemory(dev->device, *mem, 0, VK_WHOLE_SIZE, 0, mapped)) != VK_SUCCESS) {
        dev->vk.FreeMemory(dev->device, *mem, NULL);
        *mem = VK_NULL_HANDLE;
        *mapped = NULL;
    }
    return vr;
}
/* A VkBuffer with its own memory; *mapped set when the memory is host-visible and coherent and
   `map` is asked. */
static accel_result accel_i_vk_make_buffer(accel_i_vk_device* dev, VkDeviceSize size, bool host, bool map,
                                           const char* what, VkBuffer* buf, VkDeviceMemory* mem,
                                           void** mapped) {
    VkMemoryRequirements req;
    uint32_t type;
    VkResult vr;
    accel_result r = accel_i_vk_buffer_new(dev, size, host, what, buf, &req, &type);
    *mem = VK_NULL_HANDLE; *mapped = NULL;
    if (r != ACCEL_OK) return r;
    vr = accel_i_vk_memory_new(dev, req.size, type, map, NULL, mem, mapped);
    if (vr == VK_SUCCESS) vr = dev->vk.BindBufferMemory(dev->device, *buf, *mem, 0);
    if (vr != VK_SUCCESS) {
        r = accel_i_vk_fail(dev, vr, "vkAllocateMemory/vkBindBufferMemory/vkMapMemory", what);
        dev->vk.DestroyBuffer(dev->device, *buf, NULL);
        if (*mem) dev->vk.FreeMemory(dev->device, *mem, NULL);
        *buf = VK_NULL_HANDLE; *mem = VK_NULL_HANDLE; *mapped = NULL;
        return r;
    }
    return ACCEL_OK;
}
static void accel_i_vk_drop_buffer(accel_i_vk_device* dev, VkBuffer buf, VkDeviceMemory mem) {
    if (buf) dev->vk.DestroyBuffer(dev->device, buf, NULL);
    if (mem) dev->vk.FreeMemory(dev->device, mem, NULL);   /* unmaps implicitly */
}

/* ==== vulkan: memory blocks ==== */
/* Buffers take their memory from large VkDeviceMemory blocks (ACCEL_I_VK_BLOCK bytes, one memory type
   each), so that the count of VkDeviceMemory objects stays far under maxMemoryAllocationCount (4096 on
   many drivers) however many buffers a program makes: accel_buffer_create's and the roots of
   accel_queue_alloc's pool alike. A buffer above a quarter of a block gets memory of its own. Ranges are
   taken first fit (a range holds its alignment padding) and coalesced when given back. A range is given
   back when its buffer is freed, which the core does once no submitted work uses it: no timeline is
   needed here (the queue-ordered reuse is the core pool's: accel.h, "core: queue-ordered memory"). One
   empty block is kept as a spare; host-visible blocks are mapped once. */
#define ACCEL_I_VK_BLOCK ((VkDeviceSize)32 << 20)
typedef struct accel_i_vk_range {
    VkDeviceSize offset, size;    /* in the block, alignment padding included */
    VkDeviceSize at;              /* a buffer's range: where the buffer is bound */
    struct accel_i_vk_range* next;
} accel_i_vk_range;
typedef struct accel_i_vk_block {
    struct accel_i_vk_block* next;
    VkDeviceMemory memory;
    void* mapped;
    uint32_t type;
    bool exportable;              /* allocated exportable (vulkan: peer copies) */
    accel_i_vk_range* free;       /* sorted by offset */
    /* a recover's: the stale buffers still in it. Its memory went with the old VkDevice, but it stays,
       out of the list, as the key of its imports into other devices until the last of them is freed:
       their work and lists hold those buffers, and run over the imports (vulkan: recovery) */
    uint32_t stale;
} accel_i_vk_block;

static bool accel_i_vk_block_empty(const accel_i_vk_block* k) {
    return k->free && !k->free->next && k->free->size == ACCEL_I_VK_BLOCK;
}
/* Carves `mine` (size bytes at `align`) out of k's first free range that holds it; false if none
   does (mem_lock held). */
static bool accel_i_vk_block_take(accel_i_vk_device* dev, accel_i_vk_block* k, VkDeviceSize size,
                                  VkDeviceSize align, accel_i_vk_range* mine) {
    accel_i_vk_range **link, *n;
    bool was_empty = accel_i_vk_block_empty(k);
    for (link = &k->free; (n = *link) != NULL; link = &n->next) {
        VkDeviceSize at = (n->offset + align - 1) / align * align, need = at - n->offset + size;
        if (need > n->size) continue;
        mine->offset = n->offset;
        mine->size = need;
        mine->at = at;
        n->offset += need;
        n->size -= need;
        if (n->size == 0) {
            *link = n->next;
            accel_i_dev_free(&dev->base, n, sizeof *n);
        }
        if (was_empty) dev->empty_blocks--;
        return true;
    }
    return false;
}
/* Gives r back to k, merged with its free neighbours (mem_lock held). */
static void accel_i_vk_block_give(accel_i_vk_device* dev, accel_i_vk_block* k, accel_i_vk_range* r) {
    accel_i_vk_range **link = &k->free, *prev = NULL, *n;
    while ((n = *link) != NULL && n->offset < r->offset) { prev = n; link = &n->next; }
    r->next = n;
    *link = r;
    if (n && r->offset + r->size == n->offset) {
        r->size += n->size;
        r->next = n->next;
        accel_i_dev_free(&dev->base, n, sizeof *n);
    }
    if (prev && prev->offset + prev->size == r->offset) {
        prev->size += r->size;
        prev->next = r->next;
        accel_i_dev_free(&dev->base, r, sizeof *r);
    }
}
/* Its imports into other devices (vulkan: peer copies) and k. */
static void accel_i_vk_block_gone(accel_i_vk_device* dev, accel_i_vk_block* k) {
    accel_i_imports_evict(k);
    accel_i_dev_free(&dev->base, k, sizeof *k);
}
/* Frees k's memory, and k unless stale buffers are still in it (see accel_i_vk_block.stale). */
static void accel_i_vk_block_drop(accel_i_vk_device* dev, accel_i_vk_block* k) {
    while (k->free) {
        accel_i_vk_range* n = k->free;
        k->free = n->next;
        accel_i_dev_free(&dev->base, n, sizeof *n);
    }
    dev->vk.FreeMemory(dev->device, k->memory, NULL);   /* unmaps implicitly */
    k->memory = VK_NULL_HANDLE;
    atomic_fetch_sub(&dev->memory_objects, 1u);
    if (!k->stale) accel_i_vk_block_gone(dev, k);
}
/* A new empty block of `type`, mapped where host-visible; NULL when out of memory (logged by the caller:
   a buffer then gets memory of its own). */
static accel_i_vk_block* accel_i_vk_block_new(accel_i_vk_device* dev, uint32_t type) {
    accel_i_vk_block* k = (accel_i_vk_block*)accel_i_dev_alloc(&dev->base, sizeof *k);
    accel_i_vk_range* all = (accel_i_vk_range*)accel_i_dev_alloc(&dev->base, sizeof *all);
    if (k && all &&
        accel_i_vk_memory_new(dev, ACCEL_I_VK_BLOCK, type, true, &k->exportable, &k->memory,
                              &k->mapped) == VK_SUCCESS) {
        atomic_fetch_add(&dev->memory_objects, 1u);
        memset(all, 0, sizeof *all);
        all->size = ACCEL_I_VK_BLOCK;
        k->free = all;
        k->type = type;
        k->next = NULL;
        k->stale = 0;
        return k;
    }
    if (k) accel_i_dev_free(&dev->base, k, sizeof *k);
    if (all) accel_i_dev_free(&dev->base, all, sizeof *all);
    return NULL;
}
static void accel_i_vk_block_release(accel_i_vk_device* dev, accel_i_vk_buffer* b);
/* Binds b->buffer to a range of a block of `type` (a new block if none has room); *mapped: where the
   range is mapped, if the block is. UNSUPPORTED (not an error: the caller gives b memory of its own)
   when req is too large for blocks or no block can be had; else OK, OUT_OF_MEMORY or the bind's error. */
static accel_result accel_i_vk_block_bind(accel_i_vk_device* dev, accel_i_vk_buffer* b,
                                          const VkMemoryRequirements* req, uint32_t type, void** mapped) {
    accel_i_vk_range* mine;
    accel_i_vk_block *k, *fresh = NULL;
    VkResult vr;
    VkDeviceSize align = req->alignment ? req->alignment : 1u;
    bool shared = dev->ext_mem && accel_i_exporting(&dev->base);   /* exportable blocks only */
    if (req->size > ACCEL_I_VK_BLOCK / 4u || align > ACCEL_I_VK_BLOCK / 4u) return ACCEL_ERROR_UNSUPPORTED;
    if ((mine = (accel_i_vk_range*)accel_i_dev_alloc(&dev->base, sizeof *mine)) == NULL)
        return ACCEL_ERROR_OUT_OF_MEMORY;
    for (;;) {
        accel_i_mutex_lock(&dev->mem_lock);
        if (fresh) { fresh->next = dev->blocks; dev->blocks = fresh; dev->empty_blocks++; }
        for (k = dev->blocks; k; k = k->next)
            if (k->type == type && (k->exportable || !shared) &&
                accel_i_vk_block_take(dev, k, req->size, align, mine))
                break;
        accel_i_mutex_unlock(&dev->mem_lock);
        if (k || fresh) break;
        if ((fresh = accel_i_vk_block_new(dev, type)) == NULL) break;
    }
    if (!k) { accel_i_dev_free(&dev->base, mine, sizeof *mine); return ACCEL_ERROR_UNSUPPORTED; }
    b->block = k;
    b->range = mine;
    if ((vr = dev->vk.BindBufferMemory(dev->device, b->buffer, k->memory, mine->at)) != VK_SUCCESS) {
        accel_i_vk_block_release(dev, b);
        return accel_i_vk_fail(dev, vr, "vkBindBufferMemory", "accel_buffer_create");
    }
    *mapped = k->mapped ? (unsigned char*)k->mapped + mine->at : NULL;
    return ACCEL_OK;
}
/* Gives b's range back; a block left empty goes when another empty one is kept already. */
static void accel_i_vk_block_release(accel_i_vk_device* dev, accel_i_vk_buffer* b) {
    accel_i_vk_block *k = b->block, *gone = NULL, **link;
    accel_i_mutex_lock(&dev->mem_lock);
    accel_i_vk_block_give(dev, k, b->range);
    if (accel_i_vk_block_empty(k) && dev->empty_blocks++ >= 1u) {
        for (link = &dev->blocks; *link != k; link = &(*link)->next) {}
        *link = k->next;
        dev->empty_blocks--;
        gone = k;
    }
    accel_i_mutex_unlock(&dev->mem_lock);
    if (gone) accel_i_vk_block_drop(dev, gone);
    b->block = NULL;
    b->range = NULL;
}
/* At device destroy, every buffer gone: the blocks left (the spare). */
static void accel_i_vk_blocks_free(accel_i_vk_device* dev) {
    while (dev->blocks) {
        accel_i_vk_block* k = dev->blocks;
        dev->blocks = k->next;
        accel_i_vk_block_drop(dev, k);
    }
    dev->empty_blocks = 0;
}

static accel_result accel_i_vk_io_copy(accel_i_vk_device* dev, VkBuffer src, VkDeviceSize src_off,
                                       VkBuffer dst, VkDeviceSize dst_off, VkDeviceSize size);

/* b's VkBuffer and its memory: a range of a block, else memory of its own (see "vulkan: memory blocks");
   mapped where host-visible and host memory or map_device. */
static accel_result accel_i_vk_buffer_memory(accel_i_vk_device* dev, accel_i_vk_buffer* b, VkDeviceSize size,
                                             bool host) {
    const char* what = "accel_buffer_create";
    bool map = host || dev->map_device;
    VkMemoryRequirements req;
    uint32_t type;
    void* mapped = NULL;
    accel_result r = accel_i_vk_buffer_new(dev, size, host, what, &b->buffer, &req, &type);
    if (r != ACCEL_OK) return r;
    if ((r = accel_i_vk_block_bind(dev, b, &req, type, &mapped)) == ACCEL_ERROR_UNSUPPORTED) {
        VkResult vr = accel_i_vk_memory_new(dev, req.size, type, map, &b->exportable, &b->memory,
                                            &mapped);
        b->memory_size = req.size;
        b->memory_type = type;
        if (vr == VK_SUCCESS &&
            (vr = dev->vk.BindBufferMemory(dev->device, b->buffer, b->memory, 0)) != VK_SUCCESS) {
            dev->vk.FreeMemory(dev->device, b->memory, NULL);
            b->memory = VK_NULL_HANDLE;
        }
        if (vr == VK_SUCCESS) atomic_fetch_add(&dev->memory_objects, 1u);
        r = ACCEL_OK;
        if (vr != VK_SUCCESS)
            r = accel_i_vk_fail(dev, vr, "vkAllocateMemory/vkBindBufferMemory/vkMapMemory", what);
    }
    if (r != ACCEL_OK) {
        dev->vk.DestroyBuffer(dev->device, b->buffer, NULL);
        b->buffer = VK_NULL_HANDLE;
        return r;
    }
    b->base.mapped = map ? mapped : NULL;
    return ACCEL_OK;
}
/* Destroys b's VkBuffer and gives its memory back; a recover's (forget) keeps b's range taken in its
   block (see accel_i_vk_block.stale). The imports of memory of b's own go at b's free. */
static void accel_i_vk_buffer_drop(accel_i_vk_device* dev, accel_i_vk_buffer* b, bool forget) {
    dev->vk.DestroyBuffer(dev->device, b->buffer, NULL);
    if (b->block && forget) {
        b->block->stale++;   /* no other thread: creates and frees wait for the recover */
        accel_i_dev_free(&dev->base, b->range, sizeof *b->range);
        b->range = NULL;
    } else if (b->block) {
        accel_i_vk_block_release(dev, b);
    } else if (b->memory) {
        dev->vk.FreeMemory(dev->device, b->memory, NULL);   /* unmaps implicitly */
        atomic_fetch_sub(&dev->memory_objects, 1u);
    }
}

/* New buffers read as zeros, as on the CPU backend. Its VkBuffer is the size rounded up to a multiple of
   4: the zero fill without mapping is vkCmdFillBuffer with VK_WHOLE_SIZE, which fills whole words only,
   so a size's last 1-3 bytes would keep what a freed buffer left in a reused range of a block. The
   rounded VkBuffer's memory requirements cover those bytes, so the fill stays within b's own range. */
static accel_result accel_i_vk_buffer_create(accel_device* d, const accel_buffer_desc* desc,
                                             accel_buffer** out) {
    accel_i_vk_device* dev = accel_i_vk_dev(d);
    accel_i_vk_buffer* b;
    accel_result r;
    VkDeviceSize words = ((VkDeviceSize)desc->size + 3u) & ~(VkDeviceSize)3u;
    if (desc->host_ptr)
        return accel_i_fail(d, ACCEL_ERROR_UNSUPPORTED,
                            "accel_buffer_create: host_ptr wrapping is a CPU backend feature");
    if (words < desc->size)   /* within 3 of 2^64: no device has that much */
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_buffer_create: %zu bytes", desc->size);
    b = (accel_i_vk_buffer*)accel_i_dev_alloc(d, sizeof *b);
    if (!b) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_buffer_create: out of host memory");
    memset((void*)b, 0, sizeof *b);
    r = accel_i_vk_buffer_memory(dev, b, words, desc->memory == ACCEL_MEMORY_HOST);
    if (r == ACCEL_OK && b->base.mapped) memset(b->base.mapped, 0, desc->size);
    else if (r == ACCEL_OK) {
        accel_i_mutex_lock(&dev->io_lock);
        r = accel_i_vk_io_copy(dev, VK_NULL_HANDLE, 0, b->buffer, 0, desc->size);
        accel_i_mutex_unlock(&dev->io_lock);
        if (r != ACCEL_OK) accel_i_vk_buffer_drop(dev, b, false);
    }
    if (r != ACCEL_OK) { accel_i_dev_free(d, b, sizeof *b); return r; }
    b->base.size = desc->size;
    b->base.memory = desc->memory;
    accel_i_object_init(&b->base.obj, d, ACCEL_I_BUFFER, desc->label ? desc->label : "buffer");
    *out = &b->base;
    return ACCEL_OK;
}
static void accel_i_vk_buffer_free(accel_buffer* base) {
    accel_i_vk_buffer* b = (accel_i_vk_buffer*)base;
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    accel_i_vk_block* k = b->range ? NULL : b->block;   /* stale: its range went with a recover */
    bool last = false;
    if (k) {
        accel_i_mutex_lock(&dev->mem_lock);
        last = --k->stale == 0;
        accel_i_mutex_unlock(&dev->mem_lock);
        if (last) accel_i_vk_block_gone(dev, k);
    } else if (!b->borrowed) {
        /* its memory's imports into other devices (vulkan: peer copies), kept while b lives even
           after a recover freed that memory, for the same reason as a block's */
        if (b->exportable) accel_i_imports_evict(b);
        accel_i_vk_buffer_drop(dev, b, false);
    }
    accel_i_dev_free(&dev->base, b, sizeof *b);
}

/* Ends cb (of `pool`, a pool of hq's family), submits it to hq and waits for it (on io_sem); frees it
   (io_lock held). *t0 / *t1 (may be NULL): the host clock just before the submit and just after the
   wait returned. accel_buffer_read/write run on the io VkQueue with io_pool: one no accel queue uses
   where the compute family has a VkQueue to spare, so that a queue waiting on the device for a signal
   not yet set cannot hold a read up (the first VkQueue otherwise); a queue's worker runs on its own
   VkQueue with its pool (nothing another queue hands the device can hold that up). */
static accel_result accel_i_vk_io_run(accel_i_vk_device* dev, accel_i_vk_hwq* hq, VkCommandPool pool,
                                      VkCommandBuffer cb, const char* what, uint64_t* t0, uint64_t* t1) {
    uint64_t value, before;
    VkResult vr = dev->vk.EndCommandBuffer(cb);
    if (vr != VK_SUCCESS) {
        dev->vk.FreeCommandBuffers(dev->device, pool, 1, &cb);
        return accel_i_vk_fail(dev, vr, "vkEndCommandBuffer", what);
    }
    value = ++dev->io_val;
    before = accel_i_now_ns();
    vr = accel_i_vk_submit_signal(dev, hq, cb, dev->io_sem, value);
    if (vr == VK_SUCCESS) {
        vr = accel_i_vk_wait_sem(dev, dev->io_sem, value, ACCEL_WAIT_FOREVER);
        if (t1) *t1 = accel_i_now_ns();
        if (t0) *t0 = before;
        if (vr == VK_SUCCESS) { dev->vk.FreeCommandBuffers(dev->device, pool, 1, &cb); return ACCEL_OK; }
        return accel_i_vk_fail(dev, vr, "vkWaitSemaphores", what);   /* cb leaks with a lost device only */
    }
    dev->io_val--;
    dev->vk.FreeCommandBuffers(dev->device, pool, 1, &cb);
    return accel_i_vk_fail(dev, vr, "vkQueueSubmit", what);
}
/* A new command buffer of `pool`, begun (io_lock held). */
static accel_result accel_i_vk_io_begin(accel_i_vk_device* dev, VkCommandPool pool, const char* what,
                                        VkCommandBuffer* cb) {
    VkCommandBufferAllocateInfo ai;
    VkCommandBufferBeginInfo bi;
    memset(&ai, 0, sizeof ai);
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VkResult vr = dev->vk.AllocateCommandBuffers(dev->device, &ai, cb);
    if (vr != VK_SUCCESS) return accel_i_vk_fail(dev, vr, "vkAllocateCommandBuffers", what);
    dev->vk.BeginCommandBuffer(*cb, &bi);
    return ACCEL_OK;
}
/* A copy (src NULL: a zero fill of dst from dst_off to its end, whole words: see accel_i_vk_buffer_create)
   on hq with pool, waited for (io_lock held). */
static accel_result accel_i_vk_copy_run(accel_i_vk_device* dev, accel_i_vk_hwq* hq, VkCommandPool pool,
                                        VkBuffer src, VkDeviceSize src_off, VkBuffer dst,
                                        VkDeviceSize dst_off, VkDeviceSize size) {
    VkMemoryBarrier mb;
    VkMemoryBarrier hb;
    VkBufferCopy region = { src_off, dst_off, size };
    VkCommandBuffer cb = VK_NULL_HANDLE;
    memset(&mb, 0, sizeof mb);
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    memset(&hb, 0, sizeof hb);
    hb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    hb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    hb.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT;
    accel_result r = accel_i_vk_io_begin(dev, pool, "buffer read/write", &cb);
    if (r != ACCEL_OK) return r;
    dev->vk.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                               1, &mb, 0, NULL, 0, NULL);
    if (src) dev->vk.CmdCopyBuffer(cb, src, dst, 1, &region);
    else dev->vk.CmdFillBuffer(cb, dst, dst_off, VK_WHOLE_SIZE, 0);
    dev->vk.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &hb,
                               0, NULL, 0, NULL);
    return accel_i_vk_io_run(dev, hq, pool, cb, "buffer read/write", NULL, NULL);
}
/* A one-off copy between a buffer and a staging buffer (or, src == NULL, a zero fill), on the io
   VkQueue, waited for. Callers hold io_lock. */
static accel_result accel_i_vk_io_copy(accel_i_vk_device* dev, VkBuffer src, VkDeviceSize src_off,
                                       VkBuffer dst, VkDeviceSize dst_off, VkDeviceSize size) {
    return accel_i_vk_copy_run(dev, &dev->hwq[dev->io_hwq], dev->io_pool, src, src_off, dst, dst_off, size);
}

/* Inside accel_i_vk_enter: a read or write that passed its entry check before a recover began (waiting
   for the io lock, say) goes on only on the VkDevice its buffer is of, and the recover waits for it. */
static accel_result accel_i_vk_buffer_io_in(accel_buffer* base, size_t offset, void* host, size_t size,
                                            bool write);
static accel_result accel_i_vk_buffer_io(accel_buffer* base, size_t offset, void* host, size_t size,
                                         bool write) {
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    accel_result r;
    if (!accel_i_vk_enter(dev, &base->obj))
        return accel_i_fail(&dev->base, ACCEL_ERROR_DEVICE_LOST, "accel_buffer_%s: buffer%s%s%s: the device "
                            "was recovered meanwhile", write ? "write" : "read", ACCEL_I_LABEL(&base->obj));
    r = accel_i_vk_buffer_io_in(base, offset, host, size, write);
    accel_i_vk_leave(dev);
    return r;
}
static accel_result accel_i_vk_buffer_io_in(accel_buffer* base, size_t offset, void* host, size_t size,
                                            bool write) {
    accel_i_vk_buffer* b = (accel_i_vk_buffer*)base;
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    const size_t chunk_max = (size_t)64 << 20;
    VkBuffer st; VkDeviceMemory sm; void* sp;
    size_t chunk = size < chunk_max ? size : chunk_max;
    accel_result r;
    if (base->mapped) {
        if (write) memcpy((unsigned char*)base->mapped + offset, host, size);
        else memcpy(host, (const unsigned char*)base->mapped + offset, size);
        return ACCEL_OK;
    }
    r = accel_i_vk_make_buffer(dev, chunk, true, true,
                               write ? "accel_buffer_write (staging)" : "accel_buffer_read (staging)", &st,
                               &sm, &sp);
    if (r != ACCEL_OK) return r;
    if (!sp) {
        accel_i_vk_drop_buffer(dev, st, sm);
        return accel_i_fail(&dev->base, ACCEL_ERROR_UNSUPPORTED, "vulkan: staging memory is not mappable");
    }
    accel_i_mutex_lock(&dev->io_lock);
    for (size_t done = 0; done < size && r == ACCEL_OK; done += chunk) {
        size_t n = size - done < chunk ? size - done : chunk;
        if (write) {
            memcpy(sp, (const unsigned char*)host + done, n);
            r = accel_i_vk_io_copy(dev, st, 0, b->buffer, offset + done, n);
        } else {
            r = accel_i_vk_io_copy(dev, b->buffer, offset + done, st, 0, n);
            if (r == ACCEL_OK) memcpy((unsigned char*)host + done, sp, n);
        }
    }
    accel_i_mutex_unlock(&dev->io_lock);
    accel_i_vk_drop_buffer(dev, st, sm);
    return r;
}

/* ==== vulkan: peer copies ==== */
/* A copy between buffers of two Vulkan devices on one physical device and driver (the same deviceUUID
   and driverUUID: two accel devices on one GPU, or on lavapipe) runs in the queue's own command buffer,
   not staged on the host (accel.h, "core: several devices"): the other device's memory (the block its
   buffer is a range of, or its buffer's own memory) is exported as an opaque fd and imported into the
   queue's VkDevice once, as a VkBuffer over all of it; the copy names that VkBuffer at the range's
   offset. It needs VK_KHR_external_memory_fd, enabled at create where the device has it and can export
   and import buffer memory as opaque fds without a dedicated allocation (not on adopted devices, nor
   with ACCEL_VULKAN_NO_EXTERNAL_MEMORY). A device allocates buffers' memory exportable (staging never)
   only while another device of the process can import it (accel.h's sharers: another Vulkan device of
   the same device and driver, or a CUDA device of the same GPU, which imports it with
   cuImportExternalMemory: accel_cuda.h, "cuda: several devices"), and then takes ranges of exportable
   blocks only; a buffer whose memory is not exportable is copied staged. The other way, a CUDA buffer's
   memory (accel_cuda.h, "cuda: exported memory") is imported as well, into a memory type the buffer
   over it takes (another driver's types are not ours to name).
   The imports are accel.h's (core: imported memory of other devices: one list for the process, keyed by
   the exported memory's owner, a block or a buffer with memory of its own, and the importer; evicted
   when that memory goes, dropped when the importer goes); this section is the share slots: what the
   memory of a buffer is, its export, its import into another device. Wrapped buffers
   (accel_vulkan_buffer_wrap: memory not accel's) keep the staged path. */
typedef struct accel_i_vk_import {
    accel_i_import base;
    VkDeviceMemory memory;
    VkBuffer buffer;              /* over all of memory, on the importer */
    VkSemaphore sem;              /* or another device's signal's (vulkan: signals waited on by others) */
} accel_i_vk_import;

/* Can device dev import buffer memory that `other` exports? (both with ext_mem, one device and driver) */
static bool accel_i_vk_shares_memory(const accel_i_vk_device* dev, const accel_i_vk_device* other) {
    return dev->ext_mem && other->ext_mem && !memcmp(dev->base.info.uuid, other->base.info.uuid, 16) &&
           !memcmp(dev->driver_uuid, other->driver_uuid, VK_UUID_SIZE);
}
/* peer_copy: a queue of d copies o's buffer buf (NULL: o's buffers made by accel) itself: another Vulkan
   device's, imported; a CUDA device's of the same GPU, imported where it exports (accel_cuda.h, "cuda:
   exported memory"; checked, and the import made, now, as the CUDA backend does the other way). */
static bool accel_i_vk_peer_copy(accel_device* d, accel_device* o, const accel_buffer* buf) {
    const accel_i_vk_buffer* b;
    if (o->backend != d->backend) return accel_i_imports_from(d, o, buf);
    if (!accel_i_vk_shares_memory(accel_i_vk_dev(d), accel_i_vk_dev(o))) return false;
    if (!buf) return true;
    b = (const accel_i_vk_buffer*)buf;
    return !b->borrowed && (b->block ? b->block->exportable : b->exportable);
}
/* share: the exporter's side */
static bool accel_i_vk_exports(const accel_device* d) { return accel_i_vk_dev((accel_device*)d)->ext_mem; }
/* Both look inside accel_i_vk_enter: a stale buffer's memory is gone (or going: vulkan: recovery). What
   memory_of gives stays valid after a recover, as the key's imports do (see accel_i_vk_block.stale). */
static bool accel_i_vk_memory_of(const accel_buffer* root, accel_i_export* out) {
    const accel_i_vk_buffer* b = (const accel_i_vk_buffer*)root;
    accel_i_vk_device* from = accel_i_vk_dev(root->obj.device);
    bool ok;
    if (b->borrowed || !accel_i_vk_enter(from, &root->obj)) return false;
    ok = b->block ? b->block->exportable : b->exportable;
    out->key = b->block ? (const void*)b->block : (const void*)b;
    out->size = b->block ? ACCEL_I_VK_BLOCK : b->memory_size;
    out->offset = b->block && ok ? b->range->at : 0;
    out->type = b->block ? b->block->type : b->memory_type;
    accel_i_vk_leave(from);
    return ok;
}
static accel_result accel_i_vk_memory_export(const accel_buffer* root, int* fd) {
    const accel_i_vk_buffer* b = (const accel_i_vk_buffer*)root;
    accel_i_vk_device* from = accel_i_vk_dev(root->obj.device);
    VkMemoryGetFdInfoKHR gi;
    VkResult vr;
    if (!accel_i_vk_enter(from, &root->obj)) return ACCEL_ERROR_DEVICE_LOST;
    memset(&gi, 0, sizeof gi);
    gi.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR;
    gi.memory = b->block ? b->block->memory : b->memory;
    gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    vr = from->vk.GetMemoryFdKHR(from->device, &gi, fd);
    accel_i_vk_leave(from);
    if (vr != VK_SUCCESS)
        return accel_i_vk_fail(from, vr, "vkGetMemoryFdKHR", "accel_queue_copy (a peer copy's export)");
    return ACCEL_OK;
}
/* share: the importer's side (another Vulkan device of the same device and driver; another driver's of
   the same GPU that exports: CUDA's) */
static bool accel_i_vk_can_import(const accel_device* to, const accel_device* from) {
    const accel_i_vk_device* dev = accel_i_vk_dev((accel_device*)to);
    if (from->backend != to->backend) return dev->ext_mem && accel_i_exports_to(to, from);
    return accel_i_vk_shares_memory(dev, accel_i_vk_dev((accel_device*)from));
}
static void accel_i_vk_import_free(accel_i_import* base) {
    accel_i_vk_import* im = (accel_i_vk_import*)base;
    accel_i_vk_device* to = accel_i_vk_dev(base->to);
    if (im->buffer) to->vk.DestroyBuffer(to->device, im->buffer, NULL);
    if (im->memory) to->vk.FreeMemory(to->device, im->memory, NULL);
    if (im->sem && atomic_load(&to->imports_closing)) {   /* destroy, recover: idle, submit_lock held */
        to->vk.DestroySemaphore(to->device, im->sem, NULL);
        to->retirable--;   /* the room reserved at the import */
    } else if (im->sem) {
        accel_i_vk_sem_retire(to, im->sem);
    }
}
#if !defined(_WIN32)
#  include <unistd.h>
#endif
static void accel_i_vk_fd_close(int fd) {
#if !defined(_WIN32)
    close(fd);
#else
    (void)fd;
#endif
}
/* Imports fd (ex: its size and memory type; another driver's: the device-local type the buffer takes)
   into `to` as im's memory and a buffer over all of it. */
static accel_result accel_i_vk_import_make(accel_i_vk_device* to, const accel_i_export* ex, int fd,
                                           accel_i_vk_import* im) {
    const char* what = "accel_queue_copy (a peer copy's import)";
    VkImportMemoryFdInfoKHR ii;
    VkMemoryAllocateInfo ai;
    VkMemoryRequirements req;
    uint32_t t;
    VkResult vr;
    accel_result r = accel_i_vk_buffer_new(to, ex->size, false, what, &im->buffer, &req, &t);
    if (r != ACCEL_OK) { accel_i_vk_fd_close(fd); return r; }
    if (ex->type != ACCEL_I_TYPE_ANY) t = ex->type;
    if (t >= 32 || !(req.memoryTypeBits & (1u << t)) || req.size > ex->size) {
        accel_i_vk_fd_close(fd);
        return accel_i_fail(&to->base, ACCEL_ERROR_UNSUPPORTED,
                            "vulkan: %s: memory type %u does not hold the buffer", what, t);
    }
    memset(&ii, 0, sizeof ii);
    ii.sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR;
    ii.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    ii.fd = fd;
    memset(&ai, 0, sizeof ai);
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.pNext = &ii;
    ai.allocationSize = ex->size;
    ai.memoryTypeIndex = t;
    if ((vr = to->vk.AllocateMemory(to->device, &ai, NULL, &im->memory)) != VK_SUCCESS) {
        im->memory = VK_NULL_HANDLE;
        accel_i_vk_fd_close(fd);   /* a failed import leaves the fd to the caller */
        return accel_i_vk_fail(to, vr, "vkAllocateMemory (import)", what);
    }
    if ((vr = to->vk.BindBufferMemory(to->device, im->buffer, im->memory, 0)) != VK_SUCCESS)
        return accel_i_vk_fail(to, vr, "vkBindBufferMemory (import)", what);
    return ACCEL_OK;
}
static accel_result accel_i_vk_memory_import(accel_device* to, const accel_i_export* ex, int fd,
                                             accel_i_import* im) {
    accel_result r = accel_i_vk_import_make(accel_i_vk_dev(to), ex, fd, (accel_i_vk_import*)im);
    if (r != ACCEL_OK) accel_i_vk_import_free(im);   /* what was made of it */
    return r;
}
static bool accel_i_vk_signals_export(const accel_device* d);   /* vulkan: signals waited on by ... */
static bool accel_i_vk_signal_waitable(accel_signal* base, uint64_t v);
static accel_result accel_i_vk_signal_export(accel_signal* base, int* fd);
static accel_result accel_i_vk_signal_import(accel_device* to, accel_signal* s, int fd, accel_i_import* base);
static const accel_i_share_ops accel_i_vk_share = {
    sizeof(accel_i_vk_import), accel_i_vk_exports, accel_i_vk_memory_of, accel_i_vk_memory_export,
    accel_i_vk_can_import, accel_i_vk_memory_import, accel_i_vk_import_free,
    accel_i_vk_signals_export, accel_i_vk_signal_waitable, accel_i_vk_signal_export, accel_i_vk_signal_import,
    NULL, NULL, NULL                               /* nor relays (its signals are semaphores) */
};
/* The VkBuffer that a command of dev's queue names for buffer base (a root), and *off moved to where
   base is in it: base's own where dev's, else the import of its memory into dev (made the first time;
   it stays while base lives, as its memory does). */
static accel_result accel_i_vk_copy_side(accel_i_vk_device* dev, accel_buffer* base, VkBuffer* out,
                                         VkDeviceSize* off) {
    accel_i_import* im;
    uint64_t at = 0;
    accel_result r;
    if (base->obj.device == &dev->base) { *out = ((accel_i_vk_buffer*)base)->buffer; return ACCEL_OK; }
    *out = VK_NULL_HANDLE;   /* base may be another backend's (a CUDA buffer: cuda: exported memory) */
    if (accel_i_copy_side_gone(base)) return ACCEL_ERROR_DEVICE_LOST;   /* recovered or lost since */
    /* a recover since the look: its memory is gone, not unexportable */
    if ((r = accel_i_import_get(&dev->base, base, &im, &at)) != ACCEL_OK)
        return accel_i_stale(&base->obj) ? ACCEL_ERROR_DEVICE_LOST : r;
    *off += at;
    *out = ((accel_i_vk_import*)im)->buffer;
    return ACCEL_OK;
}
#if !defined(_WIN32)   /* opaque fds: POSIX only (their create-time checks below too) */
/* At create: can buffers' memory be exported and imported as opaque fds (no dedicated allocation)? */
static bool accel_i_vk_ext_mem_ok(accel_i_vk_device* dev) {
    VkPhysicalDeviceExternalBufferInfo bi;
    VkExternalBufferProperties bp;
    VkExternalMemoryFeatureFlags has, need =
            VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_MEMORY_FEATURE_IMPORTABLE_BIT;
    if (!dev->vki.GetPhysicalDeviceExternalBufferProperties) return false;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_BUFFER_INFO;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
    bi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    memset(&bp, 0, sizeof bp);
    bp.sType = VK_STRUCTURE_TYPE_EXTERNAL_BUFFER_PROPERTIES;
    dev->vki.GetPhysicalDeviceExternalBufferProperties(dev->phys, &bi, &bp);
    has = bp.externalMemoryProperties.externalMemoryFeatures;
    return (has & need) == need && !(has & VK_EXTERNAL_MEMORY_FEATURE_DEDICATED_ONLY_BIT);
}
#endif

/* ==== vulkan: signals waited on by other devices ====
   A queue's wait on another VkDevice's signal (two accel devices on one GPU, both with
   VK_KHR_external_semaphore_fd and timeline semaphores that export and import as opaque fds: not
   lavapipe 22.3, which keeps the host path) goes into the segment's vkQueueSubmit as a timeline wait on
   the signal's semaphore imported into this VkDevice; a CUDA queue of the same GPU imports it as well
   (accel_cuda.h, "cuda: waits on Vulkan signals"). The import is accel.h's (core: signals waited on by
   other devices). A signal's semaphore is made exportable while another device of the process could
   import it (base.exporting, as for buffer memory); one made while its device was alone is waited on
   from the host. The wait goes to the device only for a value the signal's device was handed work to
   reach (signal_waitable: promised by a signal operation or a host raise already submitted there,
   which needs nothing of this device's later work), and only on a queue that owns its VkQueue (a wait
   there holds up this queue's later work alone, as in "Signals: design"); anything else gates on the
   host. A failure raises the signal's semaphore past every wait (accel_i_vk_fail_target), which
   releases this queue; the core fails what it signals (core: failure after hand-off). Both devices are
   on one physical device: a loss of it before the promise runs loses both (as for two CUDA devices on
   one GPU), and their recovers release what waits. */
#if !defined(_WIN32)
static bool accel_i_vk_ext_sem_ok(accel_i_vk_device* dev) {
    VkPhysicalDeviceExternalSemaphoreInfo si;
    VkSemaphoreTypeCreateInfo type;
    VkExternalSemaphoreProperties sp;
    VkExternalSemaphoreFeatureFlags need =
            VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT | VK_EXTERNAL_SEMAPHORE_FEATURE_IMPORTABLE_BIT;
    if (!dev->vki.GetPhysicalDeviceExternalSemaphoreProperties) return false;
    memset(&type, 0, sizeof type);
    type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO;
    si.pNext = &type;
    si.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    memset(&sp, 0, sizeof sp);
    sp.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES;
    dev->vki.GetPhysicalDeviceExternalSemaphoreProperties(dev->phys, &si, &sp);
    return (sp.externalSemaphoreFeatures & need) == need;
}
#endif
/* share: the exporter's side */
static bool accel_i_vk_signals_export(const accel_device* d) {
    const accel_i_vk_device* dev = accel_i_vk_dev((accel_device*)d);
    return dev->ext_sem && dev->vk.GetSemaphoreFdKHR;
}
static bool accel_i_vk_signal_waitable(accel_signal* base, uint64_t v) {
    const accel_i_vk_signal* s = (const accel_i_vk_signal*)base;
    return s->exportable && s->owned && v <= atomic_load(&s->submitted);
}
static accel_result accel_i_vk_signal_export(accel_signal* base, int* fd) {
    const accel_i_vk_signal* s = (const accel_i_vk_signal*)base;
    accel_i_vk_device* from = accel_i_vk_dev(base->obj.device);
    VkSemaphoreGetFdInfoKHR gi;
    VkResult vr;
    if (!accel_i_vk_enter(from, &base->obj)) return ACCEL_ERROR_DEVICE_LOST;   /* recovered meanwhile */
    memset(&gi, 0, sizeof gi);
    gi.sType = VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR;
    gi.semaphore = s->sem;
    gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
    vr = from->vk.GetSemaphoreFdKHR(from->device, &gi, fd);
    accel_i_vk_leave(from);
    if (vr != VK_SUCCESS)
        return accel_i_vk_fail(from, vr, "vkGetSemaphoreFdKHR",
                               "accel_queue_submit (a wait of another device)");
    return ACCEL_OK;
}
/* share: the importer's side: fd into a timeline semaphore of `to` (retired as accel's own) */
static accel_result accel_i_vk_signal_import(accel_device* to, accel_signal* s, int fd,
                                             accel_i_import* base) {
    accel_i_vk_device* dev = accel_i_vk_dev(to);
    accel_i_vk_import* im = (accel_i_vk_import*)base;
    VkImportSemaphoreFdInfoKHR ii;
    VkResult vr = VK_ERROR_FEATURE_NOT_PRESENT;
    (void)s;
    if (!dev->ext_sem || !dev->vk.ImportSemaphoreFdKHR) {   /* accel_i_vk_peer_waits said no before */
        accel_i_vk_fd_close(fd);
        return ACCEL_ERROR_UNSUPPORTED;
    }
    if (!accel_i_vk_retire_reserve(dev)) {
        accel_i_vk_fd_close(fd);
        return accel_i_fail(to, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_submit: out of host memory for an "
                            "imported semaphore");
    }
    if ((vr = accel_i_vk_timeline(dev, 0, &im->sem)) == VK_SUCCESS) {
        memset(&ii, 0, sizeof ii);
        ii.sType = VK_STRUCTURE_TYPE_IMPORT_SEMAPHORE_FD_INFO_KHR;
        ii.semaphore = im->sem;
        ii.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
        ii.fd = fd;
        if ((vr = dev->vk.ImportSemaphoreFdKHR(dev->device, &ii)) == VK_SUCCESS) return ACCEL_OK;
        dev->vk.DestroySemaphore(dev->device, im->sem, NULL);
        im->sem = VK_NULL_HANDLE;
    }
    accel_i_vk_fd_close(fd);   /* the driver takes it only on success */
    accel_i_vk_retire_unreserve(dev);
    return accel_i_vk_fail(dev, vr, "vkImportSemaphoreFdKHR",
                           "accel_queue_submit (a wait on another device)");
}

/* ==== vulkan: waits on CUDA signals ====
   DESIGN 7.2, the CUDA to Vulkan way: a CUDA signal is a word, not a semaphore, so the waiting queue
   lends the CUDA device one (core: relays). Per CUDA device it waits on this way, the queue keeps a
   relay: a signal of this device (its semaphore made exportable: made while the CUDA device is open)
   and a count of tickets. A wait the walk hands to the device takes the next ticket, and the CUDA
   device enqueues, in a stream of that relay's own, a wait for the CUDA point that promised the value
   and then the semaphore's raise to the ticket (share->relay: cuStreamWaitValue64 on the point's
   progress word, cuSignalExternalSemaphoresAsync); it says no where it cannot (the value is not yet
   promised by a point the GPU will reach by itself: gated on the host). The segment waits for the
   relay's latest ticket: a segment is classified and then built on the walking thread, one at a time,
   and the relay stream raises tickets in order, so the latest covers this segment's waits and every
   earlier one's. Tickets taken by a classification that gated or failed afterwards are raised in
   their turn and waited for by nobody. Only on a queue that owns its VkQueue, as for other devices'
   signals (a relay's semaphore is raised by CUDA alone). A failure of the CUDA signal fails what the
   batch signals (core: failure after hand-off), and its ticket still comes once the CUDA point ran; a
   loss of the CUDA device fails its relays (accel_i_relays_end: their semaphores go past every
   wait), and the queue then makes a new one. The relays go with the queue. */
typedef struct accel_i_vk_relay {
    struct accel_i_vk_relay* next;
    const accel_device* from;   /* the CUDA device (compared, never read: it may be gone) */
    accel_signal* sem;          /* this device's signal it raises (the queue holds a reference) */
    uint64_t ticket;            /* the latest ticket taken */
    uint64_t seen;              /* the semaphore's value when last read (accel_i_vk_relay_room) */
} accel_i_vk_relay;
/* At most ACCEL_I_VK_RELAY_AHEAD tickets not yet raised: a relay's two stream operations each, so that
   the CUDA stream never fills (its enqueue would then block the walk in the driver); past that the
   wait is gated on the host until the stream caught up. */
#define ACCEL_I_VK_RELAY_AHEAD 256u
static bool accel_i_vk_relay_room(accel_i_vk_device* dev, accel_i_vk_relay* r) {
    if (r->ticket - r->seen < ACCEL_I_VK_RELAY_AHEAD) return true;
    r->seen = accel_i_vk_counter(dev, ((accel_i_vk_signal*)r->sem)->sem);
    return r->seen >= r->ticket || r->ticket - r->seen < ACCEL_I_VK_RELAY_AHEAD;
}
static const accel_i_vk_relay* accel_i_vk_relay_of(const accel_i_vk_queue* q, const accel_device* from) {
    const accel_i_vk_relay* r = q->relays;
    while (r && r->from != from) r = r->next;
    return r;
}
static void accel_i_vk_relay_point(const accel_i_vk_relay* r, VkSemaphore* sem, uint64_t* v) {
    *sem = ((const accel_i_vk_signal*)r->sem)->sem;
    *v = r->ticket;
}
static void accel_i_vk_relay_free(accel_i_vk_queue* q, accel_i_vk_relay* r) {
    accel_signal_destroy(r->sem);   /* once: a device destroy may have taken the handle first */
    accel_i_release(r->sem);
    accel_i_dev_free(q->base.obj.device, r, sizeof *r);
}
/* q's relay for `from`: a failed one (its device was lost) is replaced; NULL where none can be made. */
static accel_i_vk_relay* accel_i_vk_relay_take(accel_i_vk_queue* q, const accel_device* from) {
    accel_i_vk_relay **link = &q->relays, *r;
    while ((r = *link) != NULL && r->from != from) link = &r->next;
    if (r && !accel_i_failed(accel_i_signal_value(r->sem))) return r;
    if (r) {
        *link = r->next;
        accel_i_vk_relay_free(q, r);
    }
    if ((r = (accel_i_vk_relay*)accel_i_dev_alloc(q->base.obj.device, sizeof *r)) == NULL) return NULL;
    memset(r, 0, sizeof *r);
    if (accel_signal_create(q->base.obj.device, 0, &r->sem) != ACCEL_OK ||
        !((accel_i_vk_signal*)r->sem)->exportable) {
        if (r->sem) accel_signal_destroy(r->sem);
        accel_i_dev_free(q->base.obj.device, r, sizeof *r);
        return NULL;
    }
    accel_i_retain(r->sem);
    r->from = from;
    r->next = q->relays;
    q->relays = r;
    return r;
}
static bool accel_i_vk_relay_wait(accel_i_vk_queue* q, accel_signal* s, uint64_t v) {
    accel_device* from = s->obj.device;
    accel_i_vk_relay* r;
    if (!accel_i_relays_to(q->base.obj.device, from) || (r = accel_i_vk_relay_take(q, from)) == NULL ||
        !accel_i_vk_relay_room(accel_i_vk_dev(q->base.obj.device), r) ||
        !from->backend->share->relay(s, v, r->sem, r->ticket + 1u))
        return false;
    r->ticket++;
    return true;
}
static void accel_i_vk_relays_free(accel_i_vk_queue* q) {
    while (q->relays) {
        accel_i_vk_relay* r = q->relays;
        q->relays = r->next;
        accel_i_vk_relay_free(q, r);
    }
}

/* peer_waits: o's signals, imported (another VkDevice of the same device and driver), or raised by o in
   a semaphore lent to it (vulkan: waits on CUDA signals) */
static bool accel_i_vk_peer_waits(accel_device* d, accel_device* o) {
    return accel_i_vk_dev(d)->ext_sem && (accel_i_signal_shared(d, o) || accel_i_relays_to(d, o));
}
/* wait_on_device for another device's signal s >= v, on a queue that owns its VkQueue (the caller
   checked): for a value promised there (see above); the import made here, or a relay's ticket taken */
static bool accel_i_vk_wait_foreign(accel_i_vk_queue* q, accel_signal* s, uint64_t v) {
    accel_device* d = q->base.obj.device;
    if (!accel_i_vk_dev(d)->ext_sem) return false;
    if (accel_i_signal_shared(d, s->obj.device)) return accel_i_signal_import(d, s, v) != NULL;
    return accel_i_vk_relay_wait(q, s, v);
}
/* seg_waits: the wait operation of c (another device's signal, on the device) on its import, or on the
   relay's semaphore for its latest ticket (one operation a semaphore) */
static void accel_i_vk_seg_wait_foreign(accel_i_vk_queue* q, const accel_i_cmd* c, accel_i_vk_ops* o) {
    accel_i_import* im = accel_i_import_of(c->u.sig.signal, q->base.obj.device);
    const accel_i_vk_relay* r = im ? NULL : accel_i_vk_relay_of(q, c->u.sig.signal->obj.device);
    VkSemaphore sem;
    uint64_t v = c->u.sig.value;
    if (im) sem = ((accel_i_vk_import*)im)->sem;
    else if (r) accel_i_vk_relay_point(r, &sem, &v);
    else { o->lost_import = true; return; }
    for (uint32_t i = 0; i < o->nw; i++)
        if (o->sems[i] == sem) { if (o->vals[i] < v) o->vals[i] = v; return; }
    o->sems[o->nw] = sem;
    o->vals[o->nw] = v;
    o->stages[o->nw++] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
}


/* ==== vulkan: SPIR-V checks ==== */
/* No module reaches the driver before these pass (a driver may crash on a malformed one): the header
   (magic, a version the device takes, schema 0), every instruction's word count, a known opcode with at
   least its required operands, result ids (and the ids accel_i_spv_ids_ok reads) below the bound, the
   logical layout of the SPIR-V spec (section 2.4: capabilities, extensions, imports, one memory model, entry
   points, execution modes, debug, annotations, types / constants / global variables, then functions, each
   closed by OpFunctionEnd), and an entry point that is a GLCompute OpEntryPoint naming an OpFunction with a
   body. Then it reads what accel needs: the entry point's name, its work-group size, the storage-buffer
   bindings of set 0 and the size of its push-constant block. */

/* Per core opcode (0..403): the fewest words the instruction takes (0: no such opcode), plus whether it
   has a result id (R: word 1) or a result type and id (T: words 1 and 2). From the SPIR-V 1.6 spec, 3.52. */
#define ACCEL_I_SPV_R(n) ((n) | 0x10)
#define ACCEL_I_SPV_T(n) ((n) | 0x20)
#define ACCEL_I_SPV_T4x5 \
    ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4)
#define ACCEL_I_SPV_T5x5 \
    ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5)
#define ACCEL_I_SPV_T6x4 ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6)
static const uint8_t accel_i_spv_ops[404] = {
    /*   0 */ 1, ACCEL_I_SPV_T(3), 2, 3, 2, 3, 4, ACCEL_I_SPV_R(3), 4, 0,
    /*  10 */ 2, ACCEL_I_SPV_R(3), ACCEL_I_SPV_T(5), 0, 3, 4, 3, 2, 0, ACCEL_I_SPV_R(2),
    /*  20 */ ACCEL_I_SPV_R(2), ACCEL_I_SPV_R(4), ACCEL_I_SPV_R(3), ACCEL_I_SPV_R(4), ACCEL_I_SPV_R(4),
              ACCEL_I_SPV_R(9), ACCEL_I_SPV_R(2), ACCEL_I_SPV_R(3), ACCEL_I_SPV_R(4), ACCEL_I_SPV_R(3),
    /*  30 */ ACCEL_I_SPV_R(2), ACCEL_I_SPV_R(3), ACCEL_I_SPV_R(4), ACCEL_I_SPV_R(3), ACCEL_I_SPV_R(2),
              ACCEL_I_SPV_R(2), ACCEL_I_SPV_R(2), ACCEL_I_SPV_R(2), ACCEL_I_SPV_R(3), 3,
    /*  40 */ 0, ACCEL_I_SPV_T(3), ACCEL_I_SPV_T(3), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(3), ACCEL_I_SPV_T(6),
              ACCEL_I_SPV_T(3), 0, ACCEL_I_SPV_T(3), ACCEL_I_SPV_T(3),
    /*  50 */ ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(3), ACCEL_I_SPV_T(4), 0, ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(3), 1,
              ACCEL_I_SPV_T(4), 0, ACCEL_I_SPV_T(4),
    /*  60 */ ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(4), 3, 3, 4, ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4),
              ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(4),
    /*  70 */ ACCEL_I_SPV_T(5), 3, 4, ACCEL_I_SPV_R(2), 2, 2, 0, ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6),
              ACCEL_I_SPV_T(5),
    /*  80 */ ACCEL_I_SPV_T(3), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), 0,
              ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6),
    /*  90 */ ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6),
              ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(5), 4,
    /* 100 */ ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(4),
              ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), 0, ACCEL_I_SPV_T(4),
    /* 110 */ ACCEL_I_SPV_T4x5, ACCEL_I_SPV_T4x5,
    /* 120 */ ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(4), 0,
              ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5),
    /* 130 */ ACCEL_I_SPV_T5x5, ACCEL_I_SPV_T5x5,
    /* 140 */ ACCEL_I_SPV_T5x5, ACCEL_I_SPV_T5x5,
    /* 150 */ ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), 0, ACCEL_I_SPV_T(4), ACCEL_I_SPV_T4x5,
    /* 160 */ ACCEL_I_SPV_T(4), ACCEL_I_SPV_T5x5, ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(4),
              ACCEL_I_SPV_T(6),
    /* 170 */ ACCEL_I_SPV_T5x5, ACCEL_I_SPV_T5x5,
    /* 180 */ ACCEL_I_SPV_T5x5, ACCEL_I_SPV_T5x5,
    /* 190 */ ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), 0, 0, ACCEL_I_SPV_T(5), ACCEL_I_SPV_T5x5,
    /* 200 */ ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(4),
              ACCEL_I_SPV_T(4), 0, ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(4),
    /* 210 */ ACCEL_I_SPV_T4x5, ACCEL_I_SPV_T(4), 0, 0, 1, 1,
    /* 220 */ 2, 2, 0, 0, 4, 3, 0, ACCEL_I_SPV_T(6), 5, ACCEL_I_SPV_T(7),
    /* 230 */ ACCEL_I_SPV_T(9), ACCEL_I_SPV_T(9), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(7),
              ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7),
    /* 240 */ ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7), 0, 0, ACCEL_I_SPV_T(3), 4, 3,
              ACCEL_I_SPV_R(2), 2,
    /* 250 */ 4, 3, 1, 1, 2, 1, 3, 3, 0, ACCEL_I_SPV_T(9),
    /* 260 */ 4, ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T6x4, ACCEL_I_SPV_T(6),
              ACCEL_I_SPV_T(6),
    /* 270 */ ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), 0, 0, ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(9),
              ACCEL_I_SPV_T(9), ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(7),
    /* 280 */ 5, 5, ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(8), ACCEL_I_SPV_T(8),
              6, 6, 0,
    /* 290 */ 0, ACCEL_I_SPV_T(7), ACCEL_I_SPV_T(13), ACCEL_I_SPV_T(8), ACCEL_I_SPV_T(8), ACCEL_I_SPV_T(7),
              ACCEL_I_SPV_T(7), 2, 2, ACCEL_I_SPV_T(3),
    /* 300 */ ACCEL_I_SPV_T(4), 3, 4, ACCEL_I_SPV_T(3), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6),
              ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(5),
    /* 310 */ ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6),
              ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(4), 1, ACCEL_I_SPV_T(6), 4,
    /* 320 */ ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(4), ACCEL_I_SPV_R(2), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(4),
              ACCEL_I_SPV_T(8), ACCEL_I_SPV_T(7), ACCEL_I_SPV_R(2), ACCEL_I_SPV_T(4), 4,
    /* 330 */ 2, 3, 3, ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5),
              ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5),
    /* 340 */ ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5),
              ACCEL_I_SPV_T6x4, ACCEL_I_SPV_T(6),
    /* 350 */ ACCEL_I_SPV_T6x4, ACCEL_I_SPV_T6x4, ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6),
    /* 360 */ ACCEL_I_SPV_T6x4, ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), ACCEL_I_SPV_T(6), 0, 0, 0,
    /* 370 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 390 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 400 */ ACCEL_I_SPV_T(4), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5), ACCEL_I_SPV_T(5)
};
/* Extension opcodes accel knows (KHR / AMD ones a compute shader uses), { opcode, as above }. */
static const uint16_t accel_i_spv_ext_ops[][2] = {
    { 4416, 1 }, { 4421, ACCEL_I_SPV_T(4) }, { 4422, ACCEL_I_SPV_T(4) }, { 4428, ACCEL_I_SPV_T(4) },
    { 4429, ACCEL_I_SPV_T(4) }, { 4430, ACCEL_I_SPV_T(4) }, { 4431, ACCEL_I_SPV_T(6) },
    { 4432, ACCEL_I_SPV_T(5) }, { 4450, ACCEL_I_SPV_T(5) }, { 4451, ACCEL_I_SPV_T(5) },
    { 4452, ACCEL_I_SPV_T(5) }, { 4453, ACCEL_I_SPV_T(6) }, { 4454, ACCEL_I_SPV_T(6) },
    { 4455, ACCEL_I_SPV_T(6) }, { 4456, ACCEL_I_SPV_R(7) }, { 4457, ACCEL_I_SPV_T(5) }, { 4458, 4 },
    { 4459, ACCEL_I_SPV_T(6) }, { 4460, ACCEL_I_SPV_T(4) }, { 5000, ACCEL_I_SPV_T(6) },
    { 5001, ACCEL_I_SPV_T(6) }, { 5002, ACCEL_I_SPV_T(6) }, { 5003, ACCEL_I_SPV_T(6) },
    { 5004, ACCEL_I_SPV_T(6) }, { 5005, ACCEL_I_SPV_T(6) }, { 5006, ACCEL_I_SPV_T(6) },
    { 5007, ACCEL_I_SPV_T(6) }, { 5056, ACCEL_I_SPV_T(4) }, { 5632, 4 }, { 5633, 5 }
};
#undef ACCEL_I_SPV_T4x5
#undef ACCEL_I_SPV_T5x5
#undef ACCEL_I_SPV_T6x4
#undef ACCEL_I_SPV_R
#undef ACCEL_I_SPV_T

/* The table entry of an opcode (0: unknown). */
static unsigned accel_i_spv_op(uint32_t op) {
    if (op < sizeof accel_i_spv_ops) return accel_i_spv_ops[op];
    for (size_t i = 0; i < sizeof accel_i_spv_ext_ops / sizeof accel_i_spv_ext_ops[0]; i++)
        if (accel_i_spv_ext_ops[i][0] == op) return accel_i_spv_ext_ops[i][1];
    return 0;
}
/* The result id of instruction w (0: none); w's word count was checked against the table. */
static uint32_t accel_i_spv_result(const uint32_t* w) {
    unsigned e = accel_i_spv_op(w[0] & 0xffffu);
    return (e & 0x20) ? w[2] : (e & 0x10) ? w[1] : 0;
}

/* The section of the logical layout an opcode belongs to: 1 capability, 2 extension, 3 import, 4 memory
   model, 5 entry point, 6 execution mode, 7 debug, 8 annotation, 9 type / constant / global, 10 function
   body; 0: allowed anywhere (OpNop, OpLine, OpNoLine). */
static int accel_i_spv_section(uint32_t op) {
    switch (op) {
    case 0: case 8: case 317: return 0;
    case 17: return 1;
    case 10: return 2;
    case 11: return 3;
    case 14: return 4;
    case 15: return 5;
    case 16: case 331: return 6;
    case 2: case 3: case 4: case 5: case 6: case 7: case 330: return 7;
    case 71: case 72: case 73: case 74: case 75: case 332: case 5632: case 5633: return 8;
    case 1: case 12: case 59: case 322: case 323: case 327: case 4456: return 9;
    default: return (op >= 19 && op <= 52 && op != 40 && op != 47) ? 9 : 10;
    }
}
/* OpUndef OpExtInst OpVariable */
static bool accel_i_spv_also_in_function(uint32_t op) { return op == 1 || op == 12 || op == 59; }

static accel_result accel_i_spv_bad(accel_device* dev, size_t at, const char* what, uint32_t op) {
    accel_i_log(dev, ACCEL_LOG_ERROR, "accel_program_create: invalid SPIR-V at word %zu (opcode %u): %s", at,
                op, what);
    return ACCEL_ERROR_INVALID_ARGUMENT;
}

/* The header: magic, version 1.0 .. 1.max_minor, a bound, schema 0. */
static accel_result accel_i_spv_check_header(accel_device* dev, const uint32_t* w, size_t words,
                                             uint32_t max_minor) {
    uint32_t major, minor;
    if (words < 5 || w[0] != 0x07230203u) {
        accel_i_log(dev, ACCEL_LOG_ERROR, "accel_program_create: not a SPIR-V module (%s)",
                    words < 5 ? "shorter than its header" : "bad magic");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    major = (w[1] >> 16) & 0xffu;
    minor = (w[1] >> 8) & 0xffu;
    if ((w[1] & 0xff0000ffu) != 0 || major != 1 || minor > 6) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                    "accel_program_create: SPIR-V version word 0x%08x is not a SPIR-V version (1.0 to 1.6)",
                    w[1]);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    if (minor > max_minor) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                    "accel_program_create: the module is SPIR-V 1.%u; this device takes SPIR-V 1.0 to 1.%u",
                    minor, max_minor);
        return ACCEL_ERROR_COMPILE;
    }
    if (w[3] == 0 || w[3] > 0x400000u || w[4] != 0) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                "accel_program_create: SPIR-V header: id bound %u (1 to 4194304) or schema %u (0) is wrong",
                w[3], w[4]);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    return ACCEL_OK;
}

/* The ids an instruction names that accel can tell from literals without a table of every operand's
   kind: its result type, the target of a debug name, decoration or execution mode, an entry point's
   function and interface. Each must be below the bound: drivers index their tables by ids (lavapipe
   crashed in vkCreateComputePipelines on an OpName of id 0xffffffff). The ids of function-body operands
   are left to the driver's own parser. */
/* The bytes of the OpEntryPoint name at &w[3] before its NUL (len - 3 words hold it; all of them when
   it has none). */
static size_t accel_i_spv_entry_name_len(const uint32_t* w, uint32_t len) {
    const char* name = (const char*)(const void*)&w[3];
    size_t n = 0, max = (size_t)(len - 3) * 4;
    while (n < max && name[n]) n++;
    return n;
}
static bool accel_i_spv_id_ok(uint32_t id, uint32_t bound) { return id != 0 && id < bound; }
static bool accel_i_spv_ids_ok(const uint32_t* w, uint32_t len, unsigned e, uint32_t bound) {
    uint32_t op = w[0] & 0xffffu, first = 1, last = 1, step = 1;
    if ((e & 0x20) && !accel_i_spv_id_ok(w[1], bound)) return false;
    switch (op) {
    /* OpName OpMemberName OpExecutionMode(Id) OpDecorate(Id) OpMemberDecorate */
    case 5: case 6: case 16: case 71: case 72: case 331: case 332: last = 2; break;
    /* OpGroupDecorate: the group, its targets */
    case 74: last = len; break;
    /* OpGroupMemberDecorate: group, (type, member) pairs */
    case 75: if (!accel_i_spv_id_ok(w[1], bound)) return false;
             first = 2; last = len; step = 2; break;
    /* OpEntryPoint: function, name, interface */
    case 15: if (!accel_i_spv_id_ok(w[2], bound)) return false;
             first = 3u + (uint32_t)((accel_i_spv_entry_name_len(w, len) + 4) / 4); last = len; break;
    default: break;
    }
    for (uint32_t k = first; k < last; k += step) if (!accel_i_spv_id_ok(w[k], bound)) return false;
    return true;
}
/* Every instruction: word count, known opcode with its operands, result id below the bound, the ids
   accel_i_spv_ids_ok checks, the layout. */
static accel_result accel_i_spv_check_layout(accel_device* dev, const uint32_t* w, size_t words) {
    int last = 1, in_function = 0, models = 0;
    bool functions = false;
    for (size_t i = 5; i < words; i += w[i] >> 16) {
        uint32_t op = w[i] & 0xffffu, len = w[i] >> 16, res;
        unsigned e = accel_i_spv_op(op);
        int sec = accel_i_spv_section(op);
        if (len == 0 || len > words - i)
            return accel_i_spv_bad(dev, i,
                                   len ? "its word count runs past the end of the module" : "word count 0",
                                   op);
        if (e == 0) return accel_i_spv_bad(dev, i, "unknown opcode", op);
        if (len < (e & 0xfu)) return accel_i_spv_bad(dev, i, "fewer operands than the opcode requires", op);
        res = accel_i_spv_result(&w[i]);
        if ((e & 0x30) && !accel_i_spv_id_ok(res, w[3]))
            return accel_i_spv_bad(dev, i, "result id 0 or not below the header's bound", op);
        if (!accel_i_spv_ids_ok(&w[i], len, e, w[3]))
            return accel_i_spv_bad(dev, i, "an id 0 or not below the header's bound", op);
        if (op == 54) {                                   /* OpFunction */
            if (in_function) return accel_i_spv_bad(dev, i, "OpFunction inside a function", op);
            in_function = 1;
            functions = true;
        } else if (op == 56) {                            /* OpFunctionEnd */
            if (!in_function) return accel_i_spv_bad(dev, i, "OpFunctionEnd outside a function", op);
            in_function = 0;
        } else if (in_function) {
            if (sec != 0 && sec != 10 && !accel_i_spv_also_in_function(op))
                return accel_i_spv_bad(dev, i, "a module-level instruction inside a function", op);
        } else if (sec != 0) {
            if (sec == 10 || functions)
                return accel_i_spv_bad(dev, i, "a function instruction outside a function", op);
            if (sec < last) return accel_i_spv_bad(dev, i, "out of the order of the module's sections", op);
            last = sec;
            models += op == 14;
        }
    }
    if (in_function) return accel_i_spv_bad(dev, words, "the last function has no OpFunctionEnd", 54);
    if (models != 1)
        return accel_i_spv_bad(dev, 5, models ? "more than one OpMemoryModel" : "no OpMemoryModel", 14);
    return ACCEL_OK;
}

/* What accel reads from a module: the entry point (its name points into the module), per dimension the
   work-group size and whether a specialization constant sets it, the storage buffers of set 0 (1 + the
   highest binding), the bytes of the push-constant block. */
typedef struct accel_i_spv_info {
    const char* entry;
    size_t entry_len;
    uint32_t entry_id;
    size_t iface, iface_end;       /* the entry point's interface ids: words [iface, iface_end) */
    uint32_t size[3];
    bool spec[3];
    uint32_t spec_id[3];
    uint64_t buffers, push_bytes;
} accel_i_spv_info;

/* The entry point: the GLCompute OpEntryPoint named `want`, else the only GLCompute one. */
static accel_result accel_i_spv_entry(accel_device* dev, const uint32_t* w, size_t words, const char* want,
                                      accel_i_spv_info* out) {
    uint32_t entries = 0;
    size_t want_len = want ? strlen(want) : 0;
    bool by_name = false;
    for (size_t i = 5; i < words; i += w[i] >> 16) {
        uint32_t op = w[i] & 0xffffu, len = w[i] >> 16;
        const char* name = (const char*)(const void*)&w[i + 3];
        size_t nlen, max = (size_t)(len - 3) * 4;
        bool named;
        if (op != 15) continue;
        nlen = accel_i_spv_entry_name_len(&w[i], len);
        if (nlen == max) return accel_i_spv_bad(dev, i, "the OpEntryPoint name is not NUL-terminated", op);
        if (w[i + 1] != 5) continue;                                     /* not GLCompute */
        named = want && nlen == want_len && memcmp(name, want, nlen) == 0;
        if (by_name || (++entries > 1 && !named)) continue;
        by_name = named;
        out->entry = name;
        out->entry_len = nlen;
        out->entry_id = w[i + 2];
        out->iface = i + 3 + (nlen + 4) / 4;
        out->iface_end = i + len;
    }
    if (entries == 0) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                    "accel_program_create: the SPIR-V module has no GLCompute entry point");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    if (entries > 1 && !by_name) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                "accel_program_create: the SPIR-V module has %u compute entry points and none is named '%s'",
                entries, want ? want : "");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    return ACCEL_OK;
}

/* Whether id is an OpFunction whose body starts (after its parameters) with an OpLabel. */
static bool accel_i_spv_has_body(const uint32_t* w, size_t words, uint32_t id) {
    for (size_t i = 5; i < words; i += w[i] >> 16) {
        if ((w[i] & 0xffffu) != 54 || w[i + 2] != id) continue;
        for (i += w[i] >> 16; i < words; i += w[i] >> 16) {
            uint32_t op = w[i] & 0xffffu;
            /* past OpFunctionParameter / OpLine / OpNoLine */
            if (op != 55 && op != 8 && op != 317) return op == 248;
        }
        return false;
    }
    return false;
}

/* The index of the instruction defining id (0: none). */
static size_t accel_i_spv_def(const uint32_t* w, size_t words, uint32_t id) {
    for (size_t i = 5; i < words; i += w[i] >> 16)
        if (accel_i_spv_result(&w[i]) == id) return i;
    return 0;
}
/* OpDecorate id dec (member == UINT32_MAX) or OpMemberDecorate id member dec: found, and its first
   literal. */
static bool accel_i_spv_decoration(const uint32_t* w, size_t words, uint32_t id, uint32_t member,
                                   uint32_t dec, uint32_t* value) {
    for (size_t i = 5; i < words; i += w[i] >> 16) {
        uint32_t op = w[i] & 0xffffu, len = w[i] >> 16;
        if (member == UINT32_MAX && op == 71 && w[i + 1] == id && w[i + 2] == dec) {
            if (value) *value = len >= 4 ? w[i + 3] : 0;
            return true;
        }
        if (member != UINT32_MAX && op == 72 && w[i + 1] == id && w[i + 2] == member && w[i + 3] == dec) {
            if (value) *value = len >= 5 ? w[i + 4] : 0;
            return true;
        }
    }
    return false;
}

/* Bytes a value of type id spans, from its first byte to the end of its last element (a matrix laid out
   with `stride` between columns, or rows when row_major; 0: packed). False: no size (runtime array,
   opaque type, a type nested deeper than 8 or not a type). */
static bool accel_i_spv_size(const uint32_t* w, size_t words, uint32_t id, uint32_t stride, bool row_major,
                             int depth, uint64_t* out);
static bool accel_i_spv_struct_size(const uint32_t* w, size_t words, size_t at, int depth, uint64_t* out) {
    *out = 0;
    for (uint32_t m = 0; m + 2 < (w[at] >> 16); m++) {
        uint32_t off = 0, ms = 0;
        uint64_t size;
        accel_i_spv_decoration(w, words, w[at + 1], m, 35, &off);                 /* Offset */
        accel_i_spv_decoration(w, words, w[at + 1], m, 7, &ms);                   /* MatrixStride */
        if (!accel_i_spv_size(w, words, w[at + 2 + m], ms,
                              accel_i_spv_decoration(w, words, w[at + 1], m, 4, NULL), depth + 1, &size))
            return false;
        if (off + size > *out) *out = off + size;
    }
    return true;
}
static bool accel_i_spv_size(const uint32_t* w, size_t words, uint32_t id, uint32_t stride, bool row_major,
                             int depth, uint64_t* out) {
    size_t at = depth > 8 ? 0 : accel_i_spv_def(w, words, id), len_at;
    uint32_t op = at ? w[at] & 0xffffu : 0, n = 0, astride = 0;
    uint64_t inner, rows;
    switch (op) {
    case 21: case 22:   /* OpTypeInt / OpTypeFloat */
        *out = w[at + 2] / 8u;
        return w[at + 2] % 8u == 0 && *out > 0;
    case 32: *out = 8; return true;   /* a pointer (PhysicalStorageBuffer) */
    case 23:   /* OpTypeVector */
        if (!accel_i_spv_size(w, words, w[at + 2], 0, false, depth + 1, &inner)) return false;
        *out = inner * w[at + 3];
        return *out > 0;
    case 24:   /* OpTypeMatrix: columns of vectors */
        if (!accel_i_spv_size(w, words, w[at + 2], 0, false, depth + 1, &inner) || w[at + 3] == 0)
            return false;
        if (!stride) { *out = inner * w[at + 3]; return true; }
        len_at = accel_i_spv_def(w, words, w[at + 2]);
        rows = (len_at && (w[len_at] & 0xffffu) == 23 && w[len_at + 3]) ? w[len_at + 3] : 1;
        *out = row_major ? (rows - 1) * stride + inner / rows * w[at + 3]
                         : (uint64_t)(w[at + 3] - 1) * stride + inner;
        return true;
    case 28:   /* OpTypeArray */
        len_at = accel_i_spv_def(w, words, w[at + 3]);
        if (!len_at || ((w[len_at] & 0xffffu) != 43 && (w[len_at] & 0xffffu) != 50)) return false;
        n = w[len_at + 3];
        if (n == 0 || !accel_i_spv_size(w, words, w[at + 2], stride, row_major, depth + 1, &inner))
            return false;
        accel_i_spv_decoration(w, words, id, UINT32_MAX, 6, &astride);   /* ArrayStride */
        *out = astride ? (uint64_t)(n - 1) * astride + inner : inner * n;
        return true;
    case 30: return accel_i_spv_struct_size(w, words, at, depth, out);   /* OpTypeStruct */
    default: return false;
    }
}

/* Whether the entry point can use global variable var: any before SPIR-V 1.4 (the interface lists
   only inputs and outputs there), else the ones its interface lists. */
static bool accel_i_spv_uses(const uint32_t* w, const accel_i_spv_info* info, uint32_t var) {
    if (((w[1] >> 8) & 0xffu) < 4) return true;
    for (size_t i = info->iface; i < info->iface_end; i++)
        if (w[i] == var) return true;
    return false;
}

/* One global variable: a storage buffer of set 0 counts its binding, a push-constant block its size;
   other descriptors (uniform buffers, images, samplers, other sets, arrays of buffers) are refused. */
static accel_result accel_i_spv_variable(accel_device* dev, const uint32_t* w, size_t words, size_t at,
                                         accel_i_spv_info* out) {
    uint32_t var = w[at + 2], sc = w[at + 3], set = 0, binding = 0, pointee;
    const char* what;
    size_t ptr = accel_i_spv_def(w, words, w[at + 1]), ty;
    uint64_t size;
    /* not UniformConstant / Uniform / PushConstant / StorageBuffer */
    if (sc != 0 && sc != 2 && sc != 9 && sc != 12) return ACCEL_OK;
    if (!ptr || (w[ptr] & 0xffffu) != 32)
        return accel_i_spv_bad(dev, at, "the type of an OpVariable is not an OpTypePointer", 59);
    pointee = w[ptr + 3];
    if (sc == 9) {
        if (!accel_i_spv_size(w, words, pointee, 0, false, 0, &size))
            return accel_i_spv_bad(dev, at, "the push-constant block has a type accel cannot size", 59);
        if (size > out->push_bytes) out->push_bytes = size;
        return ACCEL_OK;
    }
    accel_i_spv_decoration(w, words, var, UINT32_MAX, 34, &set);                      /* DescriptorSet */
    accel_i_spv_decoration(w, words, var, UINT32_MAX, 33, &binding);                  /* Binding */
    ty = accel_i_spv_def(w, words, pointee);
    /* Uniform (2) without BufferBlock: a uniform buffer */
    what = sc == 0 ? "an image, sampler or other opaque resource"
         : sc == 2 && !accel_i_spv_decoration(w, words, pointee, UINT32_MAX, 3, NULL) ? "a uniform buffer"
         : ty && ((w[ty] & 0xffffu) == 28 || (w[ty] & 0xffffu) == 29) ? "an array of storage buffers"
         : set != 0 ? "a storage buffer" : NULL;
    if (what) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                "accel_program_create: the shader declares %s at set %u, binding %u; "
                "a program takes storage buffers at set 0 only",
                what, set, binding);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    if (binding + 1ull > out->buffers) out->buffers = binding + 1ull;
    return ACCEL_OK;
}

/* The work-group size: LocalSize / LocalSizeId of the entry point, or the WorkgroupSize builtin's
   composite (which wins), each component resolved to its value and, for a spec constant, its SpecId. */
static void accel_i_spv_group_size(const uint32_t* w, size_t words, accel_i_spv_info* out) {
    uint32_t ids[3] = { 0, 0, 0 }, builtin = 0;
    size_t def;
    for (size_t i = 5; i < words; i += w[i] >> 16) {
        uint32_t op = w[i] & 0xffffu, len = w[i] >> 16;
        if (op == 16 && len >= 6 && w[i + 1] == out->entry_id && w[i + 2] == 17) {
            /* LocalSize x y z */
            for (size_t d = 0; d < 3; d++) out->size[d] = w[i + 3 + d];
        } else if (op == 331 && len >= 6 && w[i + 1] == out->entry_id && w[i + 2] == 38) {
            /* LocalSizeId */
            for (size_t d = 0; d < 3; d++) ids[d] = w[i + 3 + d];
        } else if (op == 71 && len >= 4 && w[i + 2] == 11 && w[i + 3] == 25) {
            /* BuiltIn WorkgroupSize */
            builtin = w[i + 1];
        }
    }
    def = builtin ? accel_i_spv_def(w, words, builtin) : 0;
    if (def && ((w[def] & 0xffffu) == 51 || (w[def] & 0xffffu) == 44) && (w[def] >> 16) >= 6)
        for (size_t d = 0; d < 3; d++) ids[d] = w[def + 3 + d];
    for (int d = 0; d < 3; d++) {
        def = ids[d] ? accel_i_spv_def(w, words, ids[d]) : 0;
        if (def && ((w[def] & 0xffffu) == 43 || (w[def] & 0xffffu) == 50) && (w[def] >> 16) >= 4)
            out->size[d] = w[def + 3];
        /* SpecId */
        out->spec[d] = def && accel_i_spv_decoration(w, words, ids[d], UINT32_MAX, 1, &out->spec_id[d]);
    }
}

/* Checks module w (words long, for a device taking SPIR-V 1.0 .. 1.max_minor) and reads it into out.
   INVALID_ARGUMENT for a malformed module or one accel cannot bind, COMPILE for a version the device lacks;
   every refusal is logged. */
static accel_result accel_i_spv_read(accel_device* dev, const uint32_t* w, size_t words, uint32_t max_minor,
                                     const char* want, accel_i_spv_info* out) {
    accel_result r;
    memset((void*)out, 0, sizeof *out);
    out->size[0] = out->size[1] = out->size[2] = 1;
    if ((r = accel_i_spv_check_header(dev, w, words, max_minor)) != ACCEL_OK) return r;
    if ((r = accel_i_spv_check_layout(dev, w, words)) != ACCEL_OK) return r;
    if ((r = accel_i_spv_entry(dev, w, words, want, out)) != ACCEL_OK) return r;
    if (!accel_i_spv_has_body(w, words, out->entry_id)) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                "accel_program_create: the entry point '%.*s' names id %u, "
                "which is not an OpFunction with a body",
                out->entry_len > 200 ? 200 : (int)out->entry_len, out->entry, out->entry_id);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    accel_i_spv_group_size(w, words, out);
    /* global variables, before the functions */
    for (size_t i = 5; i < words && (w[i] & 0xffffu) != 54; i += w[i] >> 16)
        if ((w[i] & 0xffffu) == 59 && accel_i_spv_uses(w, out, w[i + 2]) &&
            (r = accel_i_spv_variable(dev, w, words, i, out)) != ACCEL_OK)
            return r;
    return ACCEL_OK;
}

/* ==== vulkan: programs ==== */
static void accel_i_vk_program_release(accel_i_vk_device* dev, accel_i_vk_program* p) {
    for (uint32_t i = 0; i < p->pipe_count; i++)
        if (p->pipes[i].pipeline) dev->vk.DestroyPipeline(dev->device, p->pipes[i].pipeline, NULL);
    accel_i_dev_free(&dev->base, p->pipes, p->pipes_bytes);
    accel_i_dev_free(&dev->base, p->entry, p->entry_bytes);
    if (p->layout) dev->vk.DestroyPipelineLayout(dev->device, p->layout, NULL);
    if (p->set_layout) dev->vk.DestroyDescriptorSetLayout(dev->device, p->set_layout, NULL);
    if (p->module) dev->vk.DestroyShaderModule(dev->device, p->module, NULL);
    accel_i_mutex_destroy(&p->lock);
    accel_i_dev_free(&dev->base, p, sizeof *p);
}

/* The desc's buffer_count / constant_count against what the shader declares: every storage-buffer
   binding the shader has must be below buffer_count and its push-constant block must fit in
   constant_count words; fewer bindings or a smaller block are fine (the exec binds the rest unused). */
static accel_result accel_i_vk_program_counts(accel_device* d, const accel_program_desc* desc,
                                              const accel_i_spv_info* info) {
    const char* name = desc->name ? desc->name : "";
    if (info->buffers > desc->buffer_count)
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                "accel_program_create '%.200s': the shader uses storage-buffer binding %llu (%llu buffers) "
                "and buffer_count is %u",
                name, (unsigned long long)info->buffers - 1, (unsigned long long)info->buffers,
                desc->buffer_count);
    if (info->push_bytes > 4ull * desc->constant_count)
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                "accel_program_create '%.200s': the shader's push-constant block is %llu bytes "
                "(%llu constants) and constant_count is %u",
                name, (unsigned long long)info->push_bytes, (unsigned long long)(info->push_bytes + 3) / 4,
                desc->constant_count);
    return ACCEL_OK;
}

static accel_result accel_i_vk_program_create(accel_device* d, const accel_program_desc* desc,
                                              accel_program** out) {
    accel_i_vk_device* dev = accel_i_vk_dev(d);
    VkDescriptorSetLayoutBinding binds[ACCEL_I_VK_MAX_BUFFERS];
    VkDescriptorSetLayoutCreateInfo dl;
    VkPushConstantRange pcr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, desc->constant_count * 4u };
    VkPipelineLayoutCreateInfo pl;
    VkShaderModuleCreateInfo mi;
    accel_i_spv_info info;
    accel_i_vk_program* p;
    accel_result r;
    VkResult vr;
    if (!desc->spirv)
        return accel_i_fail(d, ACCEL_ERROR_UNSUPPORTED,
                            "accel_program_create '%s': the Vulkan backend runs SPIR-V and the desc has none",
                            desc->name ? desc->name : "");
    if (desc->spirv_size % 4 != 0)
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_program_create '%s': spirv_size %zu is not a multiple of 4",
                            desc->name ? desc->name : "", desc->spirv_size);
    if ((r = accel_i_spv_read(d, desc->spirv, desc->spirv_size / 4, dev->spirv_minor, desc->name,
                              &info)) != ACCEL_OK)
        return r;
    if ((r = accel_i_vk_program_counts(d, desc, &info)) != ACCEL_OK) return r;
    p = (accel_i_vk_program*)accel_i_dev_alloc(d, sizeof *p);
    if (!p) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_program_create: out of host memory");
    memset((void*)p, 0, sizeof *p);
    if (!accel_i_mutex_init(&p->lock)) {
        accel_i_dev_free(d, p, sizeof *p);
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_program_create: mutex init failed");
    }
    p->entry = (char*)accel_i_dev_alloc(d, info.entry_len + 1);
    if (!p->entry) {
        accel_i_vk_program_release(dev, p);
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_program_create: out of host memory");
    }
    p->entry_bytes = info.entry_len + 1;
    memcpy(p->entry, info.entry, info.entry_len);
    p->entry[info.entry_len] = '\0';
    for (int k = 0; k < 3; k++) {
        p->fixed[k] = info.size[k];
        p->spec[k] = info.spec[k];
        p->spec_id[k] = info.spec_id[k];
    }
    memset(&mi, 0, sizeof mi);
    mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    mi.codeSize = desc->spirv_size;
    mi.pCode = desc->spirv;
    vr = dev->vk.CreateShaderModule(dev->device, &mi, NULL, &p->module);
    if (vr != VK_SUCCESS) {
        accel_i_vk_program_release(dev, p);
        return accel_i_vk_fail(dev, vr, "vkCreateShaderModule", "accel_program_create");
    }
    for (uint32_t i = 0; i < desc->buffer_count; i++) {
        binds[i].binding = i;
        binds[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        binds[i].descriptorCount = 1;
        binds[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
        binds[i].pImmutableSamplers = NULL;
    }
    memset(&dl, 0, sizeof dl);
    dl.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    dl.flags = dev->push_desc ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
    dl.bindingCount = desc->buffer_count;
    dl.pBindings = binds;
    vr = dev->vk.CreateDescriptorSetLayout(dev->device, &dl, NULL, &p->set_layout);
    if (vr != VK_SUCCESS) {
        accel_i_vk_program_release(dev, p);
        return accel_i_vk_fail(dev, vr, "vkCreateDescriptorSetLayout", "accel_program_create");
    }
    memset(&pl, 0, sizeof pl);
    pl.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &p->set_layout;
    pl.pushConstantRangeCount = desc->constant_count ? 1 : 0;
    pl.pPushConstantRanges = &pcr;
    vr = dev->vk.CreatePipelineLayout(dev->device, &pl, NULL, &p->layout);
    if (vr != VK_SUCCESS) {
        accel_i_vk_program_release(dev, p);
        return accel_i_vk_fail(dev, vr, "vkCreatePipelineLayout", "accel_program_create");
    }
    p->base.buffer_count = desc->buffer_count;
    p->base.constant_count = desc->constant_count;
    accel_i_object_init(&p->base.obj, d, ACCEL_I_PROGRAM, desc->name ? desc->name : "program");
    *out = &p->base;
    return ACCEL_OK;
}
static void accel_i_vk_program_free(accel_program* base) {
    accel_i_vk_program_release(accel_i_vk_dev(base->obj.device), (accel_i_vk_program*)base);
}

/* The work-group size an exec runs with: the exec's where the shader lets it be specialised, else
   the shader's (an exec local size of 1 — or 0 — takes it); false on a real mismatch. */
static bool accel_i_vk_group_size(const accel_i_vk_program* p, const accel_exec_params* e, uint32_t size[3]) {
    for (int d = 0; d < 3; d++) {
        if (p->spec[d]) size[d] = e->local_size[d];
        else if (e->local_size[d] == p->fixed[d] || e->local_size[d] == 1) size[d] = p->fixed[d];
        else return false;
    }
    return true;
}

/* The pipeline of program p for a work-group size, created on first use. */
static accel_result accel_i_vk_pipeline(accel_i_vk_device* dev, accel_i_vk_program* p, const uint32_t size[3],
                                        VkPipeline* out) {
    VkSpecializationMapEntry map[3];
    uint32_t data[3], n = 0;
    VkSpecializationInfo spec;
    VkComputePipelineCreateInfo ci;
    accel_result r = ACCEL_OK;
    VkResult vr;
    accel_i_mutex_lock(&p->lock);
    for (uint32_t i = 0; i < p->pipe_count; i++) {
        if (!memcmp(p->pipes[i].size, size, sizeof p->pipes[i].size)) {
            *out = p->pipes[i].pipeline;
            accel_i_mutex_unlock(&p->lock);
            return ACCEL_OK;
        }
    }
    if (!accel_i_grow(&dev->base, (void**)&p->pipes, &p->pipes_bytes,
                      (p->pipe_count + 1) * sizeof *p->pipes)) {
        accel_i_mutex_unlock(&p->lock);
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_queue_submit: out of host memory (pipeline cache)");
    }
    for (int d = 0; d < 3; d++) {
        if (!p->spec[d]) continue;
        map[n].constantID = p->spec_id[d];
        map[n].offset = n * 4u;
        map[n].size = 4;
        data[n++] = size[d];
    }
    spec.mapEntryCount = n;
    spec.pMapEntries = map;
    spec.dataSize = n * 4u;
    spec.pData = data;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = p->module;
    ci.stage.pName = p->entry;
    ci.stage.pSpecializationInfo = n ? &spec : NULL;
    ci.layout = p->layout;
    ci.basePipelineIndex = -1;
    vr = dev->vk.CreateComputePipelines(dev->device, VK_NULL_HANDLE, 1, &ci, NULL, out);
    if (vr != VK_SUCCESS) {
        r = accel_i_vk_fail(dev, vr, "vkCreateComputePipelines", "accel_queue_submit");
        if (r == ACCEL_ERROR_BACKEND) r = ACCEL_ERROR_COMPILE;
    } else {
        memcpy(p->pipes[p->pipe_count].size, size, sizeof p->pipes[0].size);
        p->pipes[p->pipe_count++].pipeline = *out;
    }
    accel_i_mutex_unlock(&p->lock);
    return r;
}

/* ==== vulkan: queue bookkeeping ==== */
#define ACCEL_I_VK_HANDOFF ((accel_result)1000)   /* private: the rest of the batch goes to the worker */

/* A spare entry of the queue, or a new one (NULL: out of memory). */
static accel_i_vk_entry* accel_i_vk_entry_new(accel_i_vk_queue* q) {
    accel_i_vk_entry* e;
    accel_i_spin_lock(&q->list_lock);
    e = q->spare;
    if (e) { q->spare = e->next; q->spare_count--; }
    accel_i_spin_unlock(&q->list_lock);
    if (!e) e = (accel_i_vk_entry*)accel_i_dev_alloc(q->base.obj.device, sizeof *e);
    if (e) memset((void*)e, 0, sizeof *e);
    return e;
}
/* Keeps an entry for reuse, at most 64 (a burst's entries are freed afterwards). */
static void accel_i_vk_entry_spare(accel_i_vk_queue* q, accel_i_vk_entry* e) {
    accel_i_spin_lock(&q->list_lock);
    if (q->spare_count < 64) { e->next = q->spare; q->spare = e; q->spare_count++; e = NULL; }
    accel_i_spin_unlock(&q->list_lock);
    if (e) accel_i_dev_free(q->base.obj.device, e, sizeof *e);
}
static VkCommandBuffer accel_i_vk_cb_take(accel_i_vk_queue* q) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkResult vr;
    VkCommandBufferAllocateInfo ai;
    memset(&ai, 0, sizeof ai);
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = q->pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer surplus[8];
    uint32_t ns = 0;
    accel_i_spin_lock(&q->list_lock);
    while (q->free_cb_count > 16u && ns < 8u) surplus[ns++] = q->free_cbs[--q->free_cb_count];
    if (q->free_cb_count) cb = q->free_cbs[--q->free_cb_count];
    accel_i_spin_unlock(&q->list_lock);
    if (ns) dev->vk.FreeCommandBuffers(dev->device, q->pool, ns, surplus);   /* the burst's, here */
    if (cb) return cb;
    vr = dev->vk.AllocateCommandBuffers(dev->device, &ai, &cb);
    if (vr != VK_SUCCESS) {
        accel_i_vk_fail(dev, vr, "vkAllocateCommandBuffers", "accel_queue_submit");
        return VK_NULL_HANDLE;
    }
    return cb;
}
/* Gives a command buffer back for reuse. It never frees one: the pool is the walking thread's, which
   records into it meanwhile (a free from the retiring thread raced that: the validation layer's
   UNASSIGNED-Threading-MultipleThreads, vkFreeCommandBuffers against vkBeginCommandBuffer). The list
   grows past the 16 set aside at queue creation in a burst; the walking thread frees what is over 16
   when it takes the next one (accel_i_vk_cb_take). Out of host memory to grow: freed here, as before. */
static void accel_i_vk_cb_give(accel_i_vk_queue* q, VkCommandBuffer cb) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    for (;;) {
        size_t have;
        void* grown;
        bool swapped = false;
        accel_i_spin_lock(&q->list_lock);
        if ((q->free_cb_count + 1) * sizeof cb <= q->free_cbs_bytes) {
            q->free_cbs[q->free_cb_count++] = cb;
            accel_i_spin_unlock(&q->list_lock);
            return;
        }
        have = q->free_cbs_bytes;
        accel_i_spin_unlock(&q->list_lock);
        if ((grown = accel_i_dev_alloc(&dev->base, 2 * have)) == NULL) break;
        accel_i_spin_lock(&q->list_lock);
        if (q->free_cbs_bytes == have) {   /* else another thread grew it meanwhile: try again */
            memcpy(grown, q->free_cbs, q->free_cb_count * sizeof cb);
            { void* old = q->free_cbs; q->free_cbs = (VkCommandBuffer*)grown; grown = old; }
            q->free_cbs_bytes = 2 * have;
            swapped = true;
        }
        accel_i_spin_unlock(&q->list_lock);
        accel_i_dev_free(&dev->base, grown, swapped ? have : 2 * have);   /* the old array, or ours */
    }
    dev->vk.FreeCommandBuffers(dev->device, q->pool, 1, &cb);
}
/* Releases the native objects an entry holds (its GPU work is complete, or the device is gone, or it
   was never submitted), clears it and returns its batches (linked through next), which the caller
   completes: apart, since their release may free objects (a recover takes the natives with the object
   lock held, see vulkan: recovery). */
static accel_i_batch* accel_i_vk_entry_empty(accel_i_vk_queue* q, accel_i_vk_entry* e) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    accel_i_batch* b = e->batches;
    if (e->cb && !e->cb_lent) accel_i_vk_cb_give(q, e->cb);
    accel_i_vk_drop_buffer(dev, e->staging, e->staging_mem);
    if (e->pool) dev->vk.DestroyDescriptorPool(dev->device, e->pool, NULL);
    if (e->stamps) dev->vk.DestroyQueryPool(dev->device, e->stamps, NULL);
    memset((void*)e, 0, sizeof *e);
    return b;
}
static void accel_i_vk_batches_complete(accel_i_vk_queue* q, accel_i_batch* b) {
    while (b) {
        accel_i_batch* next = b->next;
        accel_i_batch_complete(&q->base, b);
        b = next;
    }
}
/* Completes the batches a recover took from q's entries (the recover, or q's destroy). */
static void accel_i_vk_forgotten_complete(accel_i_vk_queue* q) {
    accel_i_batch* b;
    accel_i_spin_lock(&q->list_lock);
    b = q->forgotten;
    q->forgotten = NULL;
    accel_i_spin_unlock(&q->list_lock);
    accel_i_vk_batches_complete(q, b);
}
/* Appends list `more` to *list. */
static void accel_i_vk_batches_join(accel_i_batch** list, accel_i_batch* more) {
    while (*list) list = &(*list)->next;
    *list = more;
}
static void accel_i_vk_entry_clear(accel_i_vk_queue* q, accel_i_vk_entry* e) {
    accel_i_vk_batches_complete(q, accel_i_vk_entry_empty(q, e));
}
/* Releases every entry the GPU finished. Nothing once a recover takes the queue's VkDevice: it releases
   them (vulkan: recovery). force: q's destroy (q unlisted), all of them once q's work is done: stale q's
   drain did not wait, but a recover that has not taken q waits for this free (accel_i_objects_hold). */
static void accel_i_vk_reclaim(accel_i_vk_queue* q, bool force) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    uint64_t done = force ? UINT64_MAX : 0;
    accel_i_vk_entry *list = NULL, **tail = &list;
    accel_i_batch* batches = NULL;
    if (force && q->first && !accel_i_lost(&dev->base))
        accel_i_vk_wait_sem(dev, q->done, q->last, ACCEL_WAIT_FOREVER);
    if (!force && !accel_i_vk_enter(dev, &q->base.obj)) return;
    if (!force) {
        bool any;
        accel_i_spin_lock(&q->list_lock);
        any = q->first != NULL;
        accel_i_spin_unlock(&q->list_lock);
        if (!any) { accel_i_vk_leave(dev); return; }
        done = accel_i_vk_counter(dev, q->done);
        if (accel_i_lost(&dev->base)) done = UINT64_MAX;
    }
    accel_i_spin_lock(&q->list_lock);
    while (q->first && q->first->value <= done) {
        accel_i_vk_entry* e = q->first;
        q->first = e->next;
        if (!q->first) q->last_entry = NULL;
        e->next = NULL;
        *tail = e;
        tail = &e->next;
    }
    accel_i_spin_unlock(&q->list_lock);
    while (list) {
        accel_i_vk_entry* e = list;
        list = e->next;
        accel_i_vk_batches_join(&batches, accel_i_vk_entry_empty(q, e));
        accel_i_vk_entry_spare(q, e);
    }
    if (!force) accel_i_vk_leave(dev);
    accel_i_vk_batches_complete(q, batches);
}
/* The batch's plan (see accel_i_vk_plan), at the 16-byte boundary after its recorded data. */
static accel_i_vk_plan* accel_i_vk_plan_of(const accel_i_batch* b) {
    return (accel_i_vk_plan*)(void*)(b->arena + ((b->arena_used + 15u) & ~(size_t)15u));
}
/* The plan's entry for the next segment (set aside at submit), and its way back when that segment
   was not submitted after all (handed to the worker, or failed). */
static accel_i_vk_entry* accel_i_vk_entry_take(accel_i_batch* b) {
    accel_i_vk_plan* plan = accel_i_vk_plan_of(b);
    accel_i_vk_entry* e = plan->reserved;
    if (e) plan->reserved = e->next;
    if (e) e->next = NULL;
    return e;
}
static void accel_i_vk_entry_untake(accel_i_vk_queue* q, accel_i_batch* b, accel_i_vk_entry* e) {
    accel_i_vk_plan* plan = accel_i_vk_plan_of(b);
    accel_i_vk_entry_clear(q, e);
    e->next = plan->reserved;
    plan->reserved = e;
}
/* Sets aside, before anything of b runs, the entries and the semaphore arrays its segments need.
   On failure the entries it took wait in the queue's spare list. */
static accel_result accel_i_vk_plan_make(accel_i_vk_queue* q, accel_i_batch* b) {
    accel_device* d = q->base.obj.device;
    size_t at = (b->arena_used + 15u) & ~(size_t)15u, cap = 1;
    uint32_t segments = 0;
    accel_i_vk_plan* plan;
    for (uint32_t i = 0; i < b->count;) {   /* the walk's segments (accel_i_segment_at) */
        accel_i_segment sg;
        size_t sems = 2;   /* its waits and signals, + the queue's own completion: wait and signal */
        if (accel_i_cmd_is_host_step(&b->cmds[i])) { i++; continue; }
        sg = accel_i_segment_at(b, i);
        sems += sg.from - sg.wfrom;
        for (uint32_t k = sg.from; k < sg.to; k++) sems += b->cmds[k].kind == ACCEL_I_CMD_SIGNAL;
        if (sems > cap) cap = sems;
        segments++;
        i = sg.to;
    }
    if (!accel_i_grow(d, (void**)&b->arena, &b->arena_cap,
                      at + sizeof *plan + cap * ACCEL_I_VK_OP_BYTES + 16))
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_submit: out of host memory");
    plan = accel_i_vk_plan_of(b);
    plan->reserved = NULL;
    plan->cap = (uint32_t)cap;
    for (uint32_t k = 0; k < segments; k++) {
        accel_i_vk_entry* e = accel_i_vk_entry_new(q);
        if (!e) {
            while ((e = accel_i_vk_entry_take(b)) != NULL) accel_i_vk_entry_spare(q, e);
            return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_submit: out of host memory");
        }
        e->next = plan->reserved;
        plan->reserved = e;
    }
    return ACCEL_OK;
}

/* A batch that is done being submitted: its references go when its last segment completes. */
static void accel_i_vk_retire(accel_i_vk_queue* q, accel_i_batch* b) {
    accel_i_vk_entry* e;
    while ((e = accel_i_vk_entry_take(b)) != NULL) accel_i_vk_entry_spare(q, e);
    accel_i_spin_lock(&q->list_lock);
    if (q->last_entry) {
        b->next = q->last_entry->batches;
        q->last_entry->batches = b;
        b = NULL;
    }
    accel_i_spin_unlock(&q->list_lock);
    if (b) accel_i_batch_complete(&q->base, b);
}
static void accel_i_vk_batch_submitted(accel_queue* base, accel_i_batch* b) {
    accel_i_vk_retire((accel_i_vk_queue*)base, b);
}

/* ==== vulkan: queue-ordered memory ====
   accel_queue_alloc's memory is taken at the alloc's point of the queue's order, not when the alloc is
   recorded (accel.h, "core: queue-ordered memory at its point"): the walk runs the points where it
   builds a segment, once it knows the segment goes to the device now (segment_submit, under the
   submit lock, before the segment is recorded). A handle is an accel_i_vk_buffer of the core's with no
   memory of its own; its alloc point is lent a root of the core's pool (a buffer of buffer_create: a
   range of a 32 MiB memory block, or memory of its own above 8 MiB) and copies the root's VkBuffer
   (whole, offset 0) and mapping into the handle; the free point gives the root back. Commands read the
   handle's VkBuffer where their segment is recorded, after the points before them: descriptors,
   copies, fills, indirect counts and patches of a replay name the lent root then. A point records
   nothing into the command buffer (accel_i_vk_no_record). Reuse follows the queue's timeline: the
   queue's own later allocs take a freed root at once (its segments run in order: each waits for the
   one before on the queue's completion timeline, and the commands of one segment are separated by
   memory barriers over all the memory they touch), another queue's once the batch of the free
   completed there (the free command holds the root until then). A shared handle (another queue used
   it, or its queue waited between its points: accel_i_qmem_shared) keeps its root past the free
   point, to its last reference: a failed signal may release the queue on the device before that use
   ran. An alloc point without memory (or a use of a handle without memory) cuts its segment there:
   the commands before it go to the device, the rest of the batch is dropped and its signals fail with
   the reason. */
static void accel_i_vk_qmem_drop(accel_buffer* r) {   /* a handle's memory is always a lent root's */
    ((accel_i_vk_buffer*)r)->buffer = VK_NULL_HANDLE;
}
static const accel_i_qmem_ops accel_i_vk_qmem_ops = { sizeof(accel_i_vk_buffer), accel_i_vk_qmem_drop };
/* Does c put nothing into a command buffer (a signal or wait: semaphore operations; a queue-memory
   point: run where the segment is built)? */
static bool accel_i_vk_no_record(const accel_i_cmd* c) {
    return c->kind == ACCEL_I_CMD_SIGNAL || c->kind == ACCEL_I_CMD_WAIT ||
           (c->flags & ACCEL_I_CMD_QMEM_POINT) != 0;
}
/* Point c of q (submit_lock held): 0, or the failed value that drops the rest of the batch. */
static uint64_t accel_i_vk_qmem_point(accel_i_vk_queue* q, accel_i_cmd* c) {
    accel_buffer *r = c->u.qmem.buf, *lent;
    uint64_t failed = 0;
    if (c->u.qmem.free) {   /* the VkBuffer stays: another queue's command built later may come first */
        accel_i_qmem_give_back(&q->base, c);
        return 0;
    }
    if (accel_i_qmem_has(r)) return 0;   /* run already (the segment was handed on: see the submit) */
    if ((lent = accel_i_qmem_lend(&q->base, r, &failed)) == NULL) return failed;
    ((accel_i_vk_buffer*)r)->buffer = ((accel_i_vk_buffer*)lent)->buffer;
    r->mapped = lent->mapped;
    atomic_store_explicit(&r->qhas, 1u, memory_order_release);
    return 0;
}
/* The commands of segment sg of b (a batch flagged qmem) in order: each point run, each other command's
   buffers checked. Returns the first that failed (*failed: its failed value), else sg->to. */
static uint32_t accel_i_vk_qmem_run(accel_i_vk_queue* q, accel_i_batch* b, const accel_i_segment* sg,
                                    uint64_t* failed) {
    for (uint32_t i = sg->from; i < sg->to; i++) {
        accel_i_cmd* c = &b->cmds[i];
        *failed = (c->flags & ACCEL_I_CMD_QMEM_POINT) ? accel_i_vk_qmem_point(q, c)
                                                      : accel_i_qmem_use_failed(&q->base, b, c);
        if (*failed) return i;
    }
    return sg->to;
}

/* ==== vulkan: recording ==== */
static void accel_i_vk_barrier(accel_i_vk_device* dev, VkCommandBuffer cb, VkPipelineStageFlags dst_stage,
                               VkAccessFlags dst_access) {
    VkMemoryBarrier mb;
    memset(&mb, 0, sizeof mb);
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    mb.dstAccessMask = dst_access;
    dev->vk.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, dst_stage, 0, 1, &mb, 0, NULL, 0,
                               NULL);
}
/* A binding's descriptor: buffer b (a view: its root, from the view's offset on) from `offset` more on.
   The range stays VK_WHOLE_SIZE, as a kernel's bounds come from its constants on every GPU backend (CUDA
   sees a bare pointer): lavapipe (Mesa 22.3) drops the offset of a descriptor-set write that gives an
   explicit range. */
static void accel_i_vk_bind(VkDescriptorBufferInfo* info, const accel_buffer* b, VkDeviceSize offset) {
    info->buffer = ((const accel_i_vk_buffer*)(b->root ? b->root : b))->buffer;
    info->offset = (VkDeviceSize)b->offset + offset;
    info->range = VK_WHOLE_SIZE;
}
/* A copy between roots, one of them possibly another Vulkan device's (vulkan: peer copies). */
static accel_result accel_i_vk_record_copy(accel_i_vk_device* dev, VkCommandBuffer cb, accel_buffer* dst,
                                           VkDeviceSize dst_off, accel_buffer* src, VkDeviceSize src_off,
                                           VkDeviceSize size) {
    VkBufferCopy region = { src_off, dst_off, size };
    VkBuffer from, to;
    accel_result r = accel_i_vk_copy_side(dev, src, &from, &region.srcOffset);
    if (r == ACCEL_OK) r = accel_i_vk_copy_side(dev, dst, &to, &region.dstOffset);
    if (r == ACCEL_OK) dev->vk.CmdCopyBuffer(cb, from, to, 1, &region);
    return r;
}
/* The barrier between two commands of one segment: in order, earlier writes visible. Its scopes are
   the stages the segment's commands use (compute shaders, transfers), not all commands: each barrier's
   first scope holds every earlier command of those stages, so the chain orders and shows everything
   before it. It is the barrier a program calling Vulkan itself would write between dependent
   dispatches; a full (ALL_COMMANDS) barrier there cost 42% of the dispatch rate on an H100. */
/* A native step: the engine's commands recorded into cb, between accel's barriers (see the scope). */
static void accel_i_vk_native(accel_i_vk_queue* q, VkCommandBuffer cb, const accel_i_cmd* c) {
    accel_native n;
    accel_i_call call;
    memset(&n, 0, sizeof n);
    n.queue = &q->base;
    n.vulkan_command_buffer = (void*)cb;
    n.vulkan_queue = (void*)q->hwq->queue;
    n.vulkan_queue_family = q->hwq->family;
    accel_i_call_enter(&call, &q->base);
    c->u.native.fn(&n, c->u.native.user);
    accel_i_call_leave(&call);
}
typedef struct accel_i_vk_scope {
    VkPipelineStageFlags stages;
    VkAccessFlags writes, access;
} accel_i_vk_scope;
static accel_i_vk_scope accel_i_vk_scope_of(const accel_i_batch* b, uint32_t from, uint32_t to) {
    accel_i_vk_scope sc = { 0, 0, 0 };
    for (uint32_t i = from; i < to; i++) {
        accel_i_cmd_kind k = b->cmds[i].kind;
        if (b->cmds[i].flags & ACCEL_I_CMD_QMEM_POINT) continue;   /* records nothing */
        if (k == ACCEL_I_CMD_EXEC) {
            sc.stages |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
            sc.writes |= VK_ACCESS_SHADER_WRITE_BIT;
            sc.access |= VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        }
        /* an indirect exec's counts: read by the indirect-command stage (a replay's too, beside the
           stages of its other commands, below) */
        if ((k == ACCEL_I_CMD_EXEC && (b->cmds[i].flags & ACCEL_I_CMD_INDIRECT)) ||
            (k == ACCEL_I_CMD_REPLAY && b->cmds[i].u.replay.list->has_indirect)) {
            sc.stages |= VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT;
            sc.access |= VK_ACCESS_INDIRECT_COMMAND_READ_BIT;
        }
        if (k == ACCEL_I_CMD_COPY || k == ACCEL_I_CMD_FILL || k == ACCEL_I_CMD_UPDATE) {
            sc.stages |= VK_PIPELINE_STAGE_TRANSFER_BIT;
            sc.writes |= VK_ACCESS_TRANSFER_WRITE_BIT;
            sc.access |= VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        } else if (k == ACCEL_I_CMD_NATIVE) {   /* the engine's own commands: anything */
            sc.stages |= VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
            sc.writes |= VK_ACCESS_MEMORY_WRITE_BIT;
            sc.access |= VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
        } else if (k == ACCEL_I_CMD_REPLAY) {   /* the stages of the list's commands */
            sc.stages |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
            sc.writes |= VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
            sc.access |= VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                         VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        }
    }
    return sc;
}
static void accel_i_vk_barrier_within(accel_i_vk_device* dev, VkCommandBuffer cb,
                                      const accel_i_vk_scope* sc) {
    VkMemoryBarrier mb;
    memset(&mb, 0, sizeof mb);
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = sc->writes;
    mb.dstAccessMask = sc->access;
    dev->vk.CmdPipelineBarrier(cb, sc->stages, sc->stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* An exec's dispatch: its groups, or (counts non-NULL: a root) an indirect exec's counts at offset. */
static void accel_i_vk_dispatch(accel_i_vk_device* dev, VkCommandBuffer cb, const uint32_t groups[3],
                                const accel_buffer* counts, VkDeviceSize offset) {
    if (counts) dev->vk.CmdDispatchIndirect(cb, ((const accel_i_vk_buffer*)counts)->buffer, offset);
    else dev->vk.CmdDispatch(cb, groups[0], groups[1], groups[2]);
}
static accel_result accel_i_vk_record_exec(accel_i_vk_queue* q, accel_i_vk_entry* e, VkDescriptorPool pool,
                                           const accel_i_batch* b, const accel_i_cmd* c) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    accel_i_vk_program* p = (accel_i_vk_program*)c->u.exec.program;
    accel_buffer* const* bufs = (accel_buffer* const*)(const void*)(b->arena + c->u.exec.buffers);
    const accel_exec_params* ep = &c->u.exec.params;
    VkDescriptorBufferInfo infos[ACCEL_I_VK_MAX_BUFFERS];
    VkWriteDescriptorSet writes[ACCEL_I_VK_MAX_BUFFERS];
    uint32_t size[3], n = c->u.exec.buffer_count, groups[3];
    VkPipeline pipe;
    accel_result r;
    (void)e;
    accel_i_vk_group_size(p, ep, size);   /* validated at submit */
    if ((r = accel_i_vk_pipeline(dev, p, size, &pipe)) != ACCEL_OK) return r;
    for (uint32_t i = 0; i < n; i++) {
        accel_i_vk_bind(&infos[i], bufs[i], 0);
        memset(&writes[i], 0, sizeof writes[i]);
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    dev->vk.CmdBindPipeline(e->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    if (n && dev->push_desc) {
        dev->vk.CmdPushDescriptorSetKHR(e->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, n, writes);
    } else if (n) {
        VkDescriptorSet set;
        VkDescriptorSetAllocateInfo ai;
        memset(&ai, 0, sizeof ai);
        ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
        ai.descriptorPool = pool;
        ai.descriptorSetCount = 1;
        ai.pSetLayouts = &p->set_layout;
        VkResult vr = dev->vk.AllocateDescriptorSets(dev->device, &ai, &set);
        if (vr != VK_SUCCESS)
            return accel_i_vk_fail(dev, vr, "vkAllocateDescriptorSets", "accel_queue_submit");
        for (uint32_t i = 0; i < n; i++) writes[i].dstSet = set;
        dev->vk.UpdateDescriptorSets(dev->device, n, writes, 0, NULL);
        dev->vk.CmdBindDescriptorSets(e->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, NULL);
    }
    if (c->u.exec.constant_count)
        dev->vk.CmdPushConstants(e->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                 c->u.exec.constant_count * 4u, b->arena + c->u.exec.constants);
    for (int d = 0; d < 3; d++)
        groups[d] = (uint32_t)(((uint64_t)ep->global_size[d] + size[d] - 1) / size[d]);
    if (c->flags & ACCEL_I_CMD_INDIRECT) {
        size_t at;
        accel_buffer* counts = accel_i_exec_counts(b, c, &at);
        accel_i_vk_dispatch(dev, e->cb, groups, accel_i_buffer_root(counts), counts->offset + at);
    } else accel_i_vk_dispatch(dev, e->cb, groups, NULL, 0);
    return ACCEL_OK;
}

static accel_result accel_i_vk_record_replay(accel_i_vk_queue* q, accel_i_vk_entry* e, const accel_i_batch* b,
                                             const accel_i_cmd* c);
static void accel_i_vk_list_sizes(const accel_commands* c, uint32_t* execs, uint32_t* bindings);
/* Records commands [from, to) of b into e->cb (with what they need: staging, descriptor pool). */
static accel_result accel_i_vk_record(accel_i_vk_queue* q, accel_i_vk_entry* e, const accel_i_batch* b,
                                      uint32_t from, uint32_t to) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    VkCommandBufferBeginInfo bi;
    size_t update_bytes = 0, update_off = 0;
    uint32_t execs = 0, bindings = 0, stamp = 0;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    /* a family without timestamps: host times (accel_i_vk_query_ns) */
    bool traced = dev->base.trace != NULL && q->hwq->stamp_bits;
    unsigned char* staging = NULL;
    accel_i_vk_scope scope = accel_i_vk_scope_of(b, from, to);
    bool first = true;
    accel_result r = ACCEL_OK;
    VkResult vr;
    for (uint32_t i = from; i < to; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        if (c->kind == ACCEL_I_CMD_UPDATE) update_bytes += (c->u.update.size + 15u) & ~(size_t)15u;
        if (c->kind == ACCEL_I_CMD_EXEC) { execs++; bindings += c->u.exec.buffer_count; }
        if (c->kind == ACCEL_I_CMD_REPLAY) accel_i_vk_list_sizes(c->u.replay.list, &execs, &bindings);
        e->nstamps += c->kind == ACCEL_I_CMD_TIMESTAMP || (traced && !accel_i_vk_no_record(c));
    }
    e->nstamps += traced;   /* traced: the start, then the end of every command */
    if (update_bytes) {
        r = accel_i_vk_make_buffer(dev, update_bytes, true, true, "accel_queue_update (staging)", &e->staging,
                                   &e->staging_mem, (void**)&staging);
        if (r != ACCEL_OK) return r;
        if (!staging)
            return accel_i_fail(&dev->base, ACCEL_ERROR_UNSUPPORTED,
                                "vulkan: staging memory is not mappable");
    }
    if (!dev->push_desc && bindings) {
        VkDescriptorPoolSize ps = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, bindings };
        VkDescriptorPoolCreateInfo pi;
        memset(&pi, 0, sizeof pi);
        pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
        pi.maxSets = execs;
        pi.poolSizeCount = 1;
        pi.pPoolSizes = &ps;
        vr = dev->vk.CreateDescriptorPool(dev->device, &pi, NULL, &e->pool);
        if (vr != VK_SUCCESS) return accel_i_vk_fail(dev, vr, "vkCreateDescriptorPool", "accel_queue_submit");
    }
    if (e->nstamps) {
        VkQueryPoolCreateInfo qi;
        memset(&qi, 0, sizeof qi);
        qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = e->nstamps;
        vr = dev->vk.CreateQueryPool(dev->device, &qi, NULL, &e->stamps);
        if (vr != VK_SUCCESS) return accel_i_vk_fail(dev, vr, "vkCreateQueryPool", "accel_queue_timestamp");
    }
    if ((e->cb = accel_i_vk_cb_take(q)) == VK_NULL_HANDLE) return ACCEL_ERROR_OUT_OF_MEMORY;
    vr = dev->vk.BeginCommandBuffer(e->cb, &bi);
    if (vr != VK_SUCCESS) return accel_i_vk_fail(dev, vr, "vkBeginCommandBuffer", "accel_queue_submit");
    if (e->nstamps) dev->vk.CmdResetQueryPool(e->cb, e->stamps, 0, e->nstamps);
    if (traced) dev->vk.CmdWriteTimestamp(e->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, e->stamps, stamp++);
    for (uint32_t i = from; i < to && r == ACCEL_OK; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        if (accel_i_vk_no_record(c)) continue;
        /* the first command: the submit already waits for the queue's earlier segments
           (accel_i_vk_seg_after_queue) */
        if (!first && c->kind != ACCEL_I_CMD_BARRIER && c->kind != ACCEL_I_CMD_TIMESTAMP)
            accel_i_vk_barrier_within(dev, e->cb, &scope);   /* in order, writes visible */
        first = false;
        switch (c->kind) {
        case ACCEL_I_CMD_EXEC:
            r = accel_i_vk_record_exec(q, e, e->pool, b, c);
            break;
        case ACCEL_I_CMD_COPY:
            r = accel_i_vk_record_copy(dev, e->cb, c->u.copy.dst, c->u.copy.dst_offset, c->u.copy.src,
                                       c->u.copy.src_offset, c->u.copy.size);
            break;
        case ACCEL_I_CMD_FILL:
            dev->vk.CmdFillBuffer(e->cb, ((accel_i_vk_buffer*)c->u.fill.dst)->buffer, c->u.fill.offset,
                                  c->u.fill.size, c->u.fill.pattern);
            break;
        case ACCEL_I_CMD_UPDATE: {
            VkBufferCopy region = { update_off, c->u.update.offset, c->u.update.size };
            memcpy(staging + update_off, b->arena + c->u.update.data, c->u.update.size);
            dev->vk.CmdCopyBuffer(e->cb, e->staging, ((accel_i_vk_buffer*)c->u.update.dst)->buffer, 1,
                                  &region);
            update_off += (c->u.update.size + 15u) & ~(size_t)15u;
            break;
        }
        case ACCEL_I_CMD_REPLAY:
            r = accel_i_vk_record_replay(q, e, b, c);
            break;
        case ACCEL_I_CMD_NATIVE:
            accel_i_vk_native(q, e->cb, c);
            break;
        case ACCEL_I_CMD_BARRIER:   /* a full barrier that the host and other queues see too */
            accel_i_vk_barrier(dev, e->cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                               VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT |
                                       VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
            break;
        default: break;   /* a timestamp: the reading below */
        }
        /* when every earlier command completed; the host converts it (accel_i_vk_seg_host) */
        if (c->kind == ACCEL_I_CMD_TIMESTAMP || traced)
            dev->vk.CmdWriteTimestamp(e->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, e->stamps, stamp++);
    }
    accel_i_vk_barrier(dev, e->cb, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
    vr = dev->vk.EndCommandBuffer(e->cb);
    if (r == ACCEL_OK && vr != VK_SUCCESS)
        r = accel_i_vk_fail(dev, vr, "vkEndCommandBuffer", "accel_queue_submit");
    return r;
}

/* ==== vulkan: recorded command lists ==== */
/* A list's native form: its commands resolved at record_end (pipelines made, the recorded bindings'
   descriptor sets written where the device has no push descriptors, the updates' data in a staging
   buffer of the list's own) and recorded into reusable secondary command buffers of ACCEL_I_VK_CHUNK
   commands each (simultaneous use: several queues may run them at once), each chunk opening with the
   list's in-order barrier. A replay, recorded into its segment's command buffer, runs the chunks
   without patches by one vkCmdExecuteCommands per run and records the chunks that hold a patched
   command directly, patched. Why re-record: push constants and bindings cannot change inside a
   recorded command buffer, and user SPIR-V reads its constants as push constants (reading them from
   a device buffer would need other shaders). bench/vulkan.c figure 8 measures the options (see the
   header's "Recorded command lists"). A replay on a queue of another family than the recording
   queue's re-records every chunk. */
#ifndef ACCEL_VULKAN_REPLAY_CHUNK
#  define ACCEL_VULKAN_REPLAY_CHUNK 32u
#endif
#define ACCEL_I_VK_CHUNK ((uint32_t)(ACCEL_VULKAN_REPLAY_CHUNK) ? (uint32_t)(ACCEL_VULKAN_REPLAY_CHUNK) : 1u)
typedef struct accel_i_vk_op {
    accel_i_cmd_kind kind;
    accel_i_vk_program* prog;          /* exec */
    VkPipeline pipe;
    VkDescriptorSet set;               /* without push descriptors: the recorded bindings */
    uint32_t nb, nc, groups[3];
    accel_buffer* const* bufs;         /* exec: in the list's arena */
    const uint32_t* consts;
    accel_buffer *dst, *src;           /* copy, fill, update (src: none, the list's staging) */
    VkDeviceSize dst_offset, src_offset, size;
    uint32_t pattern;
    accel_buffer* counts;              /* an indirect exec: its counts' root (NULL: a direct exec), */
    VkDeviceSize counts_at, counts_offset;   /* the offset in it, the offset recorded (patches keep it) */
} accel_i_vk_op;
typedef struct accel_i_vk_list {
    accel_i_vk_op* ops; uint32_t count; size_t bytes;
    uint32_t family, execs, bindings;  /* execs, bindings: for re-recording without push descriptors */
    accel_i_vk_scope scope;
    VkCommandPool pool;
    VkCommandBuffer* chunks; uint32_t nchunks;
    VkCommandBuffer whole;             /* the list in one secondary, for replays without patches (2+
                                          chunks) */
    VkCommandBuffer primary;           /* the list as a segment of its own: see accel_i_vk_lone_replay */
    VkDescriptorPool dpool;
    VkBuffer staging; VkDeviceMemory staging_mem;
} accel_i_vk_list;

/* An exec op with its patches into cb: bindings from op->set when unpatched, else pushed (or a set
   from pool). */
static accel_result accel_i_vk_op_exec(accel_i_vk_device* dev, VkCommandBuffer cb, VkDescriptorPool pool,
                                       const accel_i_vk_op* op, const accel_i_patch* p, uint32_t n) {
    const accel_buffer* bufs[ACCEL_I_VK_MAX_BUFFERS];
    VkDeviceSize offs[ACCEL_I_VK_MAX_BUFFERS];
    uint32_t consts[ACCEL_I_VK_MAX_BUFFERS + 64];
    VkDescriptorBufferInfo infos[ACCEL_I_VK_MAX_BUFFERS];
    VkWriteDescriptorSet writes[ACCEL_I_VK_MAX_BUFFERS];
    VkDescriptorSet set = op->set;
    const accel_buffer* counts = op->counts;
    VkDeviceSize counts_at = op->counts_at;
    memcpy((void*)bufs, op->bufs, (size_t)op->nb * sizeof *bufs);
    memset(offs, 0, sizeof offs);
    if (op->nc) memcpy(consts, op->consts, (size_t)op->nc * 4u);
    for (uint32_t k = 0; k < n; k++) {   /* a patched binding: a root and the offset in it */
        if (p[k].buffer && p[k].index == op->nb) {   /* an indirect exec's counts */
            counts = p[k].buffer;
            counts_at = p[k].offset + op->counts_offset;
        } else if (p[k].buffer) {
            bufs[p[k].index] = p[k].buffer;
            offs[p[k].index] = p[k].offset;
            set = VK_NULL_HANDLE;
        } else consts[p[k].index] = p[k].value;
    }
    dev->vk.CmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, op->pipe);
    for (uint32_t i = 0; i < op->nb && !set; i++) {
        accel_i_vk_bind(&infos[i], bufs[i], offs[i]);
        memset(&writes[i], 0, sizeof writes[i]);
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; writes[i].pBufferInfo = &infos[i];
    }
    if (op->nb && !set && dev->push_desc) {
        dev->vk.CmdPushDescriptorSetKHR(cb, VK_PIPELINE_BIND_POINT_COMPUTE, op->prog->layout, 0, op->nb,
                                        writes);
    } else if (op->nb) {
        if (!set) {
            VkDescriptorSetAllocateInfo ai;
            memset(&ai, 0, sizeof ai);
            ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
            ai.descriptorPool = pool;
            ai.descriptorSetCount = 1;
            ai.pSetLayouts = &op->prog->set_layout;
            VkResult vr = dev->vk.AllocateDescriptorSets(dev->device, &ai, &set);
            if (vr != VK_SUCCESS)
                return accel_i_vk_fail(dev, vr, "vkAllocateDescriptorSets", "accel_queue_replay");
            for (uint32_t i = 0; i < op->nb; i++) writes[i].dstSet = set;
            dev->vk.UpdateDescriptorSets(dev->device, op->nb, writes, 0, NULL);
        }
        dev->vk.CmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, op->prog->layout, 0, 1, &set, 0,
                                      NULL);
    }
    if (op->nc)
        dev->vk.CmdPushConstants(cb, op->prog->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, op->nc * 4u, consts);
    accel_i_vk_dispatch(dev, cb, op->groups, counts, counts_at);
    return ACCEL_OK;
}
/* One op with its patches into cb. */
static accel_result accel_i_vk_op_record(accel_i_vk_device* dev, const accel_i_vk_list* l, VkCommandBuffer cb,
                                         VkDescriptorPool pool, const accel_i_vk_op* op,
                                         const accel_i_patch* p, uint32_t n) {
    accel_buffer *dst = op->dst, *src = op->src;
    uint32_t pattern = op->pattern;
    VkBufferCopy region = { op->src_offset, op->dst_offset, op->size };
    if (op->kind == ACCEL_I_CMD_EXEC) return accel_i_vk_op_exec(dev, cb, pool, op, p, n);
    for (uint32_t k = 0; k < n; k++) {   /* a patched buffer: a root and the offset in it */
        if (!p[k].buffer) pattern = p[k].value;
        else if (p[k].index == 0) { dst = p[k].buffer; region.dstOffset = p[k].offset; }
        else { src = p[k].buffer; region.srcOffset = p[k].offset; }
    }
    if (op->kind == ACCEL_I_CMD_COPY)
        return accel_i_vk_record_copy(dev, cb, dst, region.dstOffset, src, region.srcOffset, op->size);
    if (op->kind == ACCEL_I_CMD_UPDATE)
        dev->vk.CmdCopyBuffer(cb, l->staging, ((accel_i_vk_buffer*)dst)->buffer, 1, &region);
    else if (op->kind == ACCEL_I_CMD_FILL)
        dev->vk.CmdFillBuffer(cb, ((accel_i_vk_buffer*)dst)->buffer, region.dstOffset, op->size, pattern);
    else if (op->kind == ACCEL_I_CMD_BARRIER)
        accel_i_vk_barrier(dev, cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                           VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_HOST_READ_BIT |
                                   VK_ACCESS_HOST_WRITE_BIT);
    return ACCEL_OK;
}
/* Ops [from, to) into cb, each after the list's in-order barrier; p: their sorted patches. */
static accel_result accel_i_vk_ops_record(accel_i_vk_device* dev, const accel_i_vk_list* l,
                                          VkCommandBuffer cb, VkDescriptorPool pool, uint32_t from,
                                          uint32_t to, const accel_i_patch* p, uint32_t n) {
    uint32_t k = 0;
    accel_result r = ACCEL_OK;
    for (uint32_t i = from; i < to && r == ACCEL_OK; i++) {
        uint32_t first;
        while (k < n && p[k].command < i) k++;
        first = k;
        while (k < n && p[k].command == i) k++;
        if (l->ops[i].kind != ACCEL_I_CMD_BARRIER && l->scope.stages)
            accel_i_vk_barrier_within(dev, cb, &l->scope);
        r = accel_i_vk_op_record(dev, l, cb, pool, &l->ops[i], p ? p + first : NULL, k - first);
    }
    return r;
}

static void accel_i_vk_commands_free(accel_commands* c) {
    accel_i_vk_device* dev = accel_i_vk_dev(c->obj.device);
    accel_i_vk_list* l = (accel_i_vk_list*)c->native;
    if (l->pool) dev->vk.DestroyCommandPool(dev->device, l->pool, NULL);   /* frees the chunks */
    if (l->dpool) dev->vk.DestroyDescriptorPool(dev->device, l->dpool, NULL);
    if (l->staging) accel_i_vk_drop_buffer(dev, l->staging, l->staging_mem);
    accel_i_dev_free(&dev->base, l, l->bytes);
    c->native = NULL;
}

/* Resolves command c into op (pipeline made by accel_i_vk_validate); update data into the staging. */
static accel_result accel_i_vk_op_build(accel_i_vk_device* dev, const accel_i_batch* b, const accel_i_cmd* c,
                                        accel_i_vk_op* op, unsigned char* staging, VkDeviceSize* staged) {
    op->kind = c->kind;
    if (c->kind == ACCEL_I_CMD_EXEC) {
        uint32_t size[3];
        op->prog = (accel_i_vk_program*)c->u.exec.program;
        op->nb = c->u.exec.buffer_count; op->nc = c->u.exec.constant_count;
        op->bufs = (accel_buffer* const*)(const void*)(b->arena + c->u.exec.buffers);
        op->consts = (const uint32_t*)(const void*)(b->arena + c->u.exec.constants);
        accel_i_vk_group_size(op->prog, &c->u.exec.params, size);
        for (int d = 0; d < 3; d++)
            op->groups[d] = (uint32_t)(((uint64_t)c->u.exec.params.global_size[d] + size[d] - 1) / size[d]);
        if (c->flags & ACCEL_I_CMD_INDIRECT) {
            size_t at;
            accel_buffer* counts = accel_i_exec_counts(b, c, &at);
            op->counts = accel_i_buffer_root(counts);
            op->counts_at = counts->offset + at;
            op->counts_offset = at;
        }
        return accel_i_vk_pipeline(dev, op->prog, size, &op->pipe);
    }
    if (c->kind == ACCEL_I_CMD_COPY) {
        op->dst = c->u.copy.dst; op->src = c->u.copy.src; op->size = c->u.copy.size;
        op->dst_offset = c->u.copy.dst_offset; op->src_offset = c->u.copy.src_offset;
    } else if (c->kind == ACCEL_I_CMD_FILL) {
        op->dst = c->u.fill.dst;
        op->dst_offset = c->u.fill.offset;
        op->size = c->u.fill.size;
        op->pattern = c->u.fill.pattern;
    } else if (c->kind == ACCEL_I_CMD_UPDATE) {
        op->dst = c->u.update.dst; op->dst_offset = c->u.update.offset; op->size = c->u.update.size;
        op->src_offset = *staged;
        memcpy(staging + *staged, b->arena + c->u.update.data, c->u.update.size);
        *staged += (c->u.update.size + 15u) & ~(VkDeviceSize)15u;
    }
    return ACCEL_OK;
}
/* Without push descriptors: a set per exec with the recorded bindings, from the list's own pool. */
static accel_result accel_i_vk_list_sets(accel_i_vk_device* dev, accel_i_vk_list* l) {
    VkDescriptorPoolSize ps = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, l->bindings };
    VkResult vr;
    VkDescriptorPoolCreateInfo pi;
    memset(&pi, 0, sizeof pi);
    pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pi.maxSets = l->execs;
    pi.poolSizeCount = 1;
    pi.pPoolSizes = &ps;
    if (dev->push_desc || !l->bindings) return ACCEL_OK;
    if ((vr = dev->vk.CreateDescriptorPool(dev->device, &pi, NULL, &l->dpool)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkCreateDescriptorPool", "accel_queue_record_end");
    for (uint32_t i = 0; i < l->count; i++) {
        accel_i_vk_op* op = &l->ops[i];
        VkDescriptorBufferInfo infos[ACCEL_I_VK_MAX_BUFFERS];
        VkWriteDescriptorSet writes[ACCEL_I_VK_MAX_BUFFERS];
        VkDescriptorSetAllocateInfo ai;
        memset(&ai, 0, sizeof ai);
        ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
        ai.descriptorPool = l->dpool;
        ai.descriptorSetCount = 1;
        if (op->kind != ACCEL_I_CMD_EXEC || !op->nb) continue;
        ai.pSetLayouts = &op->prog->set_layout;
        if ((vr = dev->vk.AllocateDescriptorSets(dev->device, &ai, &op->set)) != VK_SUCCESS)
            return accel_i_vk_fail(dev, vr, "vkAllocateDescriptorSets", "accel_queue_record_end");
        for (uint32_t j = 0; j < op->nb; j++) {
            accel_i_vk_bind(&infos[j], op->bufs[j], 0);
            memset(&writes[j], 0, sizeof writes[j]);
            writes[j].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
            writes[j].dstSet = op->set;
            writes[j].dstBinding = j;
            writes[j].descriptorCount = 1;
            writes[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            writes[j].pBufferInfo = &infos[j];
        }
        dev->vk.UpdateDescriptorSets(dev->device, op->nb, writes, 0, NULL);
    }
    return ACCEL_OK;
}
/* Records ops [from, to) of l into secondary cb, for simultaneous use. */
static accel_result accel_i_vk_list_secondary(accel_i_vk_device* dev, accel_i_vk_list* l, VkCommandBuffer cb,
                                              uint32_t from, uint32_t to) {
    VkCommandBufferInheritanceInfo ii;
    VkResult vr;
    accel_result r;
    VkCommandBufferBeginInfo bi;
    memset(&ii, 0, sizeof ii);
    ii.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    bi.pInheritanceInfo = &ii;
    if ((vr = dev->vk.BeginCommandBuffer(cb, &bi)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkBeginCommandBuffer", "accel_queue_record_end");
    if ((r = accel_i_vk_ops_record(dev, l, cb, l->dpool, from, to, NULL, 0)) != ACCEL_OK) return r;
    if ((vr = dev->vk.EndCommandBuffer(cb)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkEndCommandBuffer", "accel_queue_record_end");
    return ACCEL_OK;
}
/* The list as a primary command buffer that is a whole segment (simultaneous use), ending as every
   segment does with the barrier that makes its writes visible to the host. */
static accel_result accel_i_vk_list_primary(accel_i_vk_device* dev, accel_i_vk_list* l) {
    VkResult vr;
    accel_result r;
    VkCommandBufferBeginInfo bi;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    if ((vr = dev->vk.BeginCommandBuffer(l->primary, &bi)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkBeginCommandBuffer", "accel_queue_record_end");
    if ((r = accel_i_vk_ops_record(dev, l, l->primary, l->dpool, 0, l->count, NULL, 0)) != ACCEL_OK) return r;
    accel_i_vk_barrier(dev, l->primary, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
    if ((vr = dev->vk.EndCommandBuffer(l->primary)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkEndCommandBuffer", "accel_queue_record_end");
    return ACCEL_OK;
}
/* The chunks, the list as a primary, and the whole list in one more secondary where it spans several
   chunks: command buffers of the recording queue's family. A replay without patches runs the whole
   one: it runs as fast as a primary recorded by hand, where separate chunks take about 1.10x its time
   (bench/vulkan.c figure 8). */
static accel_result accel_i_vk_list_chunks(accel_i_vk_device* dev, accel_i_vk_list* l) {
    VkCommandPoolCreateInfo pi;
    VkResult vr;
    accel_result r;
    VkCommandBufferAllocateInfo ai;
    memset(&pi, 0, sizeof pi);
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.queueFamilyIndex = l->family;
    memset(&ai, 0, sizeof ai);
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    ai.commandBufferCount = l->nchunks;
    if (!l->nchunks) return ACCEL_OK;
    if ((vr = dev->vk.CreateCommandPool(dev->device, &pi, NULL, &l->pool)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkCreateCommandPool", "accel_queue_record_end");
    ai.commandPool = l->pool;
    if ((vr = dev->vk.AllocateCommandBuffers(dev->device, &ai, l->chunks)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkAllocateCommandBuffers", "accel_queue_record_end");
    for (uint32_t c = 0; c < l->nchunks; c++) {
        uint32_t from = c * ACCEL_I_VK_CHUNK,
                 to = from + ACCEL_I_VK_CHUNK < l->count ? from + ACCEL_I_VK_CHUNK : l->count;
        if ((r = accel_i_vk_list_secondary(dev, l, l->chunks[c], from, to)) != ACCEL_OK) return r;
    }
    ai.commandBufferCount = 1;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    if ((vr = dev->vk.AllocateCommandBuffers(dev->device, &ai, &l->primary)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkAllocateCommandBuffers", "accel_queue_record_end");
    if ((r = accel_i_vk_list_primary(dev, l)) != ACCEL_OK) return r;
    if (l->nchunks == 1) return ACCEL_OK;
    ai.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
    if ((vr = dev->vk.AllocateCommandBuffers(dev->device, &ai, &l->whole)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkAllocateCommandBuffers", "accel_queue_record_end");
    return accel_i_vk_list_secondary(dev, l, l->whole, 0, l->count);
}
static accel_result accel_i_vk_validate(accel_i_vk_queue* q, const accel_i_batch* b);
static accel_result accel_i_vk_list_fill(accel_i_vk_device* dev, accel_i_vk_queue* q, accel_commands* c,
                                         accel_i_vk_list* l) {
    const accel_i_batch* b = c->list;
    VkDeviceSize data = 0, staged = 0;
    unsigned char* staging = NULL;
    accel_result r;
    if ((r = accel_i_vk_validate(q, b)) != ACCEL_OK) return r;
    for (uint32_t i = 0; i < b->count; i++)
        if (b->cmds[i].kind == ACCEL_I_CMD_UPDATE)
            data += (b->cmds[i].u.update.size + 15u) & ~(VkDeviceSize)15u;
    if (data) {
        r = accel_i_vk_make_buffer(dev, data, true, true, "accel_queue_record_end (update data)", &l->staging,
                                   &l->staging_mem, (void**)&staging);
        if (r != ACCEL_OK) return r;
        if (!staging)
            return accel_i_fail(&dev->base, ACCEL_ERROR_UNSUPPORTED,
                                "vulkan: staging memory is not mappable");
    }
    for (uint32_t i = 0; i < b->count; i++) {
        if ((r = accel_i_vk_op_build(dev, b, &b->cmds[i], &l->ops[i], staging, &staged)) != ACCEL_OK)
            return r;
        if (l->ops[i].kind == ACCEL_I_CMD_EXEC) { l->execs++; l->bindings += l->ops[i].nb; }
    }
    l->scope = accel_i_vk_scope_of(b, 0, b->count);
    if ((r = accel_i_vk_list_sets(dev, l)) != ACCEL_OK) return r;
    return accel_i_vk_list_chunks(dev, l);
}
static accel_result accel_i_vk_commands_build(accel_queue* qb, accel_commands* c) {
    accel_i_vk_device* dev = accel_i_vk_dev(c->obj.device);
    accel_i_vk_queue* q = (accel_i_vk_queue*)qb;
    uint32_t count = c->list->count, nchunks = (count + ACCEL_I_VK_CHUNK - 1) / ACCEL_I_VK_CHUNK;
    size_t bytes = sizeof(accel_i_vk_list) + (size_t)count * sizeof(accel_i_vk_op) +
                   (size_t)nchunks * sizeof(VkCommandBuffer);
    accel_i_vk_list* l = (accel_i_vk_list*)accel_i_dev_alloc(&dev->base, bytes);
    accel_result r;
    if (!l)
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_queue_record_end: out of host memory for the replay form");
    memset((void*)l, 0, bytes);
    l->bytes = bytes;
    l->count = count;
    l->ops = (accel_i_vk_op*)(void*)(l + 1);
    l->chunks = (VkCommandBuffer*)(void*)(l->ops + count);
    l->nchunks = nchunks;
    l->family = q->hwq->family;
    c->native = l;
    if ((r = accel_i_vk_list_fill(dev, q, c, l)) != ACCEL_OK) accel_i_vk_commands_free(c);
    return r;
}

/* A replay may re-record every exec of its list: the descriptor sets its segment's pool must hold. */
static void accel_i_vk_list_sizes(const accel_commands* c, uint32_t* execs, uint32_t* bindings) {
    const accel_i_vk_list* l = (const accel_i_vk_list*)c->native;
    *execs += l->execs;
    *bindings += l->bindings;
}
/* The replay command, recorded into e->cb: without patches the whole list's secondary; else unpatched
   chunks by vkCmdExecuteCommands, a chunk with patches (or every chunk on a queue of another family)
   recorded directly. */
static accel_result accel_i_vk_record_replay(accel_i_vk_queue* q, accel_i_vk_entry* e, const accel_i_batch* b,
                                             const accel_i_cmd* c) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    const accel_i_vk_list* l = (const accel_i_vk_list*)c->u.replay.list->native;
    uint32_t n = c->u.replay.patch_count, k = 0, run = 0;
    const accel_i_patch* p = n ? (const accel_i_patch*)(const void*)(b->arena + c->u.replay.patches) : NULL;
    bool own = q->hwq->family == l->family;
    accel_result r = ACCEL_OK;
    if (own && n == 0 && l->whole) {
        dev->vk.CmdExecuteCommands(e->cb, 1, &l->whole);
        return ACCEL_OK;
    }
    for (uint32_t ch = 0; ch < l->nchunks && r == ACCEL_OK; ch++) {
        uint32_t from = ch * ACCEL_I_VK_CHUNK,
                 to = from + ACCEL_I_VK_CHUNK < l->count ? from + ACCEL_I_VK_CHUNK : l->count, first = k;
        while (k < n && p[k].command < to) k++;
        if (own && k == first) continue;   /* joins the run of unpatched chunks */
        if (ch > run) dev->vk.CmdExecuteCommands(e->cb, ch - run, l->chunks + run);
        run = ch + 1;
        r = accel_i_vk_ops_record(dev, l, e->cb, e->pool, from, to, p ? p + first : NULL, k - first);
    }
    if (r == ACCEL_OK && own && l->nchunks > run)
        dev->vk.CmdExecuteCommands(e->cb, l->nchunks - run, l->chunks + run);
    return r;
}

/* A segment whose only command is a replay without patches, on a queue of the list's family, untraced:
   it submits the list's primary as is, as a raw program re-submits a command buffer recorded once
   (nothing recorded per replay). Returns that primary, or VK_NULL_HANDLE. */
static VkCommandBuffer accel_i_vk_lone_replay(const accel_i_vk_queue* q, const accel_i_batch* b,
                                              const accel_i_segment* sg) {
    const accel_i_cmd* lone = NULL;
    const accel_i_vk_list* l;
    for (uint32_t i = sg->from; i < sg->to; i++) {
        if (accel_i_vk_no_record(&b->cmds[i])) continue;
        if (lone) return VK_NULL_HANDLE;
        lone = &b->cmds[i];
    }
    if (!lone || lone->kind != ACCEL_I_CMD_REPLAY || lone->u.replay.patch_count) return VK_NULL_HANDLE;
    l = (const accel_i_vk_list*)lone->u.replay.list->native;
    return l->family == q->hwq->family ? l->primary : VK_NULL_HANDLE;
}

/* ==== vulkan: submission ==== */
/* The segment's semaphore arrays, in the batch's arena after its plan. */
static accel_i_vk_ops accel_i_vk_ops_of(const accel_i_batch* b) {
    accel_i_vk_plan* plan = accel_i_vk_plan_of(b);
    unsigned char* at = (unsigned char*)(plan + 1);
    uint32_t cap = plan->cap;
    accel_i_vk_ops o;
    memset(&o, 0, sizeof o);
    o.vals = (uint64_t*)(void*)at;                       at += 2 * (size_t)cap * sizeof(uint64_t);
    o.later_vals = o.vals + cap;
    o.sigs = (accel_i_vk_signal**)(void*)at;             at += (size_t)cap * sizeof(void*);
    o.later = (accel_signal**)(void*)at;                 at += (size_t)cap * sizeof(void*);
    o.sems = (VkSemaphore*)(void*)at;                    at += (size_t)cap * sizeof(VkSemaphore);
    o.stages = (VkPipelineStageFlags*)(void*)at;
    return o;
}
/* Wait operations: every device wait, and every wait a GPU signal operation of this device already
   reached (its memory order); one per semaphore, with the largest value. Linear: a signal remembers
   the segment (stamp) and slot it went into. A wait for more than what the semaphore was promised
   before this queue's last segment promised it becomes a wait for all that segment promised, which
   only its signal operation (or a host raise submitted behind it) releases: after_last. Another
   device's signal waited on the device: its imported semaphore (lost_import where there is none).
   submit_lock held. */
static void accel_i_vk_seg_wait_foreign(accel_i_vk_queue* q, const accel_i_cmd* c, accel_i_vk_ops* o);
static void accel_i_vk_seg_waits(accel_i_vk_queue* q, const accel_i_batch* b, const accel_i_segment* sg,
                                 accel_i_vk_ops* o) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    uint64_t stamp = ++dev->stamp;
    for (uint32_t i = sg->wfrom; i < sg->from; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        accel_i_vk_signal* vs = (accel_i_vk_signal*)c->u.sig.signal;
        uint64_t v = c->u.sig.value;
        if (c->u.sig.signal->obj.device != &dev->base) {   /* on the device: an imported semaphore */
            if (c->flags & ACCEL_I_CMD_ON_DEVICE) accel_i_vk_seg_wait_foreign(q, c, o);
            continue;
        }
        /* reached by a host raise */
        if (!(c->flags & ACCEL_I_CMD_ON_DEVICE) && accel_i_vk_counter(dev, vs->sem) < v) continue;
        if (vs->hi_q == q->uid && q->last != 0 && vs->hi_seg == q->last && v > vs->hi_prev) {
            /* for all that segment promised: a host raise below it is signalled at once (publish), and
               would release a wait for less before the segment completed */
            o->after_last = true;
            if (v < atomic_load(&vs->submitted)) v = atomic_load(&vs->submitted);
        }
        if (vs->mark == stamp) { if (o->vals[vs->slot] < v) o->vals[vs->slot] = v; continue; }
        vs->mark = stamp;
        vs->slot = o->nw;
        o->sems[o->nw] = vs->sem;
        o->vals[o->nw] = v;
        o->stages[o->nw++] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    }
}
/* In order after the queue's earlier segments still running: a wait on the queue's own completion
   timeline (a full memory dependency on them, and on nothing else of a shared VkQueue). It replaces a
   full pipeline barrier at the start of the command buffer, which also waited for other accel queues'
   work on the same VkQueue (and costs a flush of the whole device on lavapipe). Not needed when a wait
   of the segment already implies that the last segment completed (after_last: a chain step waiting
   for the step before, one semaphore operation less per step). submit_lock held. */
static void accel_i_vk_seg_after_queue(accel_i_vk_queue* q, accel_i_vk_ops* o) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    uint64_t last;
    if (o->after_last) return;
    accel_i_spin_lock(&q->list_lock);
    last = q->last;
    accel_i_spin_unlock(&q->list_lock);
    if (last == 0 || accel_i_vk_counter(dev, q->done) >= last) return;
    o->sems[o->nw] = q->done;
    o->vals[o->nw] = last;
    o->stages[o->nw++] = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
}
/* Signal operations: one per semaphore of this device with the segment's largest value for it, native
   when accel_i_vk_native_ok; the rest (other devices' signals too) the host raises once the segment
   completed, unless the value is reached already. submit_lock held. */
static void accel_i_vk_seg_signals(accel_i_vk_queue* q, const accel_i_batch* b, const accel_i_segment* sg,
                                   accel_i_vk_ops* o) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    uint64_t stamp = ++dev->stamp;
    uint32_t n = 0;
    for (uint32_t i = sg->from; i < sg->to; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        accel_i_vk_signal* vs = (accel_i_vk_signal*)c->u.sig.signal;
        if (c->kind != ACCEL_I_CMD_SIGNAL) continue;
        if (c->u.sig.signal->obj.device != &dev->base) {
            o->later[o->nlater] = c->u.sig.signal;
            o->later_vals[o->nlater++] = c->u.sig.value;
            continue;
        }
        if (vs->mark == stamp) {
            if (o->vals[o->nw + vs->slot] < c->u.sig.value) o->vals[o->nw + vs->slot] = c->u.sig.value;
            continue;
        }
        vs->mark = stamp;
        vs->slot = n;
        o->sigs[n] = vs;
        o->vals[o->nw + n++] = c->u.sig.value;
    }
    for (uint32_t k = 0; k < n; k++) {
        accel_i_vk_signal* vs = o->sigs[k];
        uint64_t v = o->vals[o->nw + k], cur;
        if (accel_i_vk_native_ok(dev, vs, v, q->hwq)) {
            o->sigs[o->ns] = vs;
            o->sems[o->nw + o->ns] = vs->sem;
            o->vals[o->nw + o->ns++] = v;
            continue;
        }
        cur = accel_i_vk_signal_value(&vs->base);
        if (accel_i_failed(cur) || cur >= v) continue;
        o->later[o->nlater] = &vs->base;
        o->later_vals[o->nlater++] = v;
    }
}
/* Submits the segment's command buffer with its operations and the queue's completion value. */
static VkResult accel_i_vk_seg_submit(accel_i_vk_queue* q, accel_i_vk_entry* e, accel_i_vk_ops* o,
                                      uint64_t value) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    VkTimelineSemaphoreSubmitInfo ti;
    VkSubmitInfo si;
    VkResult vr;
    o->sems[o->nw + o->ns] = q->done;
    o->vals[o->nw + o->ns] = value;
    memset(&ti, 0, sizeof ti);
    ti.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
    ti.waitSemaphoreValueCount = o->nw;
    ti.pWaitSemaphoreValues = o->vals;
    ti.signalSemaphoreValueCount = o->ns + 1;
    ti.pSignalSemaphoreValues = o->vals + o->nw;
    memset(&si, 0, sizeof si);
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.pNext = &ti;
    si.waitSemaphoreCount = o->nw;
    si.pWaitSemaphores = o->sems;
    si.pWaitDstStageMask = o->stages;
    si.commandBufferCount = e->cb ? 1 : 0;
    si.pCommandBuffers = &e->cb;
    si.signalSemaphoreCount = o->ns + 1;
    si.pSignalSemaphores = o->sems + o->nw;
    accel_i_mutex_lock(&q->hwq->lock);
    vr = dev->lose_at && atomic_fetch_add(&dev->submits, 1u) + 1u == dev->lose_at
             ? VK_ERROR_DEVICE_LOST   /* test only: see ACCEL_VULKAN_TEST_DEVICE_LOST */
             : dev->vk.QueueSubmit(q->hwq->queue, 1, &si, VK_NULL_HANDLE);
    accel_i_mutex_unlock(&q->hwq->lock);
    if (vr != VK_SUCCESS) return vr;
    for (uint32_t k = 0; k < o->ns; k++) {   /* what each semaphore is promised now, and by whom */
        o->sigs[k]->hi_prev = atomic_load(&o->sigs[k]->submitted);
        o->sigs[k]->hi_q = q->uid;
        o->sigs[k]->hi_seg = value;
        atomic_store(&o->sigs[k]->submitted, o->vals[o->nw + k]);
        accel_i_vk_pend_add(o->sigs[k], o->vals[o->nw + k]);
        o->sigs[k]->hi_hwq = q->hwq;
        accel_i_event_notify(&o->sigs[k]->host);   /* host-event waiters move to the semaphore */
    }
    return VK_SUCCESS;
}
/* ---- timestamps and the trace (see "Timestamps and the trace" in the header) ---- */
/* A pair of readings, host ns <-> device ticks: VK_EXT_calibrated_timestamps at every call where the
   device has it; else one paired reading, taken once (io_lock held): a timestamp written by a tiny
   submission, matched to the middle of the host readings around it (best of 3, error half the
   narrowest bracket). */
static accel_result accel_i_vk_calibrate(accel_i_vk_queue* q, uint64_t* host, uint64_t* raw) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    if (dev->cal_ext) {
        VkCalibratedTimestampInfoEXT ci[2];
        uint64_t ts[2], dev_max = 0;
        memset(ci, 0, sizeof ci);
        ci[0].sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
        ci[0].timeDomain = VK_TIME_DOMAIN_DEVICE_EXT;
        ci[1].sType = VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT;
        ci[1].timeDomain = VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT;
        VkResult vr = dev->vk.GetCalibratedTimestampsEXT(dev->device, 2, ci, ts, &dev_max);
        if (vr != VK_SUCCESS)
            return accel_i_vk_fail(dev, vr, "vkGetCalibratedTimestampsEXT", "accel_queue_timestamp");
        *raw = ts[0]; *host = ts[1];
        return ACCEL_OK;
    }
    for (int i = 0; i < 3 && !dev->cal_done; i++) {
        VkQueryPool pool;
        VkQueryPoolCreateInfo qi;
        VkCommandBuffer cb = VK_NULL_HANDLE;
        uint64_t t0 = 0, t1 = 0, tick = 0;
        accel_result r;
        memset(&qi, 0, sizeof qi);
        qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = 1;
        VkResult vr = dev->vk.CreateQueryPool(dev->device, &qi, NULL, &pool);
        if (vr != VK_SUCCESS)
            return accel_i_vk_fail(dev, vr, "vkCreateQueryPool", "accel_queue_timestamp (calibration)");
        r = accel_i_vk_io_begin(dev, q->pool, "accel_queue_timestamp (calibration)", &cb);
        if (r == ACCEL_OK) {
            dev->vk.CmdResetQueryPool(cb, pool, 0, 1);
            dev->vk.CmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool, 0);
            r = accel_i_vk_io_run(dev, q->hwq, q->pool, cb, "accel_queue_timestamp (calibration)", &t0, &t1);
        }
        if (r == ACCEL_OK && (vr = dev->vk.GetQueryPoolResults(dev->device, pool, 0, 1, 8, &tick, 8,
                                                               VK_QUERY_RESULT_64_BIT)) != VK_SUCCESS)
            r = accel_i_vk_fail(dev, vr, "vkGetQueryPoolResults", "accel_queue_timestamp (calibration)");
        dev->vk.DestroyQueryPool(dev->device, pool, NULL);
        if (r != ACCEL_OK) return r;
        if (i == 0 || (t1 - t0) / 2 < dev->cal_error) {
            dev->cal_error = (t1 - t0) / 2;
            dev->cal_host = t0 + (t1 - t0) / 2;
            dev->cal_raw = tick;
        }
    }
    dev->cal_done = true;
    *host = dev->cal_host; *raw = dev->cal_raw;
    return ACCEL_OK;
}
/* A device reading (valid `bits` of it) on the host clock, from the pair (host, raw). */
static uint64_t accel_i_vk_stamp_ns(const accel_i_vk_device* dev, uint64_t tick, uint32_t bits, uint64_t host,
                                    uint64_t raw) {
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1u;
    uint64_t ahead = (tick - raw) & mask, behind = (raw - tick) & mask;   /* the nearer way round */
    if (ahead <= behind) return host + (uint64_t)((double)ahead * dev->stamp_period + 0.5);
    behind = (uint64_t)((double)behind * dev->stamp_period + 0.5);
    return behind < host ? host - behind : 0;
}
/* The segment's clock readings, converted: (host, raw) the calibration, [t0, now] where the truth lies
   (its submission, its completion seen by the host). */
typedef struct accel_i_vk_clock { uint64_t host, raw, t0, now; } accel_i_vk_clock;
static accel_result accel_i_vk_query_ns(accel_i_vk_queue* q, const accel_i_vk_entry* e, uint32_t k,
                                        const accel_i_vk_clock* ck, uint64_t* ns) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    uint64_t tick = 0, t;
    VkResult vr;
    /* traced on a family without timestamps: the host's view */
    if (!e->stamps) { *ns = ck->now; return ACCEL_OK; }
    vr = dev->vk.GetQueryPoolResults(dev->device, e->stamps, k, 1, 8, &tick, 8, VK_QUERY_RESULT_64_BIT);
    if (vr != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkGetQueryPoolResults", "accel_queue_timestamp / trace");
    t = accel_i_vk_stamp_ns(dev, tick, q->hwq->stamp_bits, ck->host, ck->raw);
    *ns = t < ck->t0 ? ck->t0 : t > ck->now ? ck->now : t;
    return ACCEL_OK;
}
/* A timestamp's value into its buffer: through the mapping, else by a copy from staging on the queue's
   own VkQueue (the worker's: nothing only a host raise releases can wait there ahead of it, see
   accel_i_vk_wait_on_device; the first VkQueue of accel_buffer_write could hold such a wait). */
static accel_result accel_i_vk_stamp_put(accel_i_vk_queue* q, const accel_i_cmd* c, uint64_t ns) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    accel_buffer* dst = c->u.stamp.dst;
    VkBuffer st; VkDeviceMemory sm; void* sp;
    accel_result r;
    if (dst->mapped) { memcpy((unsigned char*)dst->mapped + c->u.stamp.offset, &ns, 8); return ACCEL_OK; }
    r = accel_i_vk_make_buffer(dev, 8, true, true, "accel_queue_timestamp (staging)", &st, &sm, &sp);
    if (r != ACCEL_OK) return r;
    if (!sp) r = accel_i_fail(&dev->base, ACCEL_ERROR_UNSUPPORTED, "vulkan: staging memory is not mappable");
    if (r == ACCEL_OK) {
        memcpy(sp, &ns, 8);
        accel_i_mutex_lock(&dev->io_lock);
        r = accel_i_vk_copy_run(dev, q->hwq, q->pool, st, 0, ((accel_i_vk_buffer*)dst)->buffer,
                                c->u.stamp.offset, 8);
        accel_i_mutex_unlock(&dev->io_lock);
    }
    accel_i_vk_drop_buffer(dev, st, sm);
    return r;
}
/* ---- the host's part of a segment (waits and signals it gates), and segment_submit ---- */
/* The segment completed (the worker, before it raises the signals after it): its timestamps, converted,
   into their buffers; traced, every command's span on the queue's track (waits from the submission to
   the first command's start, each command between the readings around it, signals at the end: their
   marks before the raises, for the flows of the waits they release; a signal failed meanwhile, by a
   failed wait the device was handed, has none). */
static accel_result accel_i_vk_seg_host(accel_i_vk_queue* q, const accel_i_vk_entry* e,
                                        const accel_i_batch* b, const accel_i_segment* sg) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    bool traced = dev->base.trace != NULL;
    accel_i_vk_clock ck;
    uint64_t t = 0, t1 = 0;
    uint32_t k = traced ? 1u : 0u;
    accel_result r;
    ck.t0 = e->stamp_t0;
    ck.now = accel_i_now_ns();
    accel_i_mutex_lock(&dev->io_lock);
    r = accel_i_vk_calibrate(q, &ck.host, &ck.raw);
    accel_i_mutex_unlock(&dev->io_lock);
    if (r == ACCEL_OK && traced) r = accel_i_vk_query_ns(q, e, 0, &ck, &t);
    for (uint32_t i = sg->wfrom; i < sg->from && r == ACCEL_OK && traced; i++)
        accel_i_trace_cmd(&q->base, &b->cmds[i], ck.t0, t);
    for (uint32_t i = sg->from; i < sg->to && r == ACCEL_OK; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        if (accel_i_vk_no_record(c) || (!traced && c->kind != ACCEL_I_CMD_TIMESTAMP)) continue;
        if ((r = accel_i_vk_query_ns(q, e, k++, &ck, &t1)) != ACCEL_OK) break;
        if (c->kind == ACCEL_I_CMD_TIMESTAMP) r = accel_i_vk_stamp_put(q, c, t1);
        /* ended before t (a write-out): empty at t */
        if (traced) t = accel_i_trace_cmd(&q->base, c, t, t1 > t ? t1 : t);
    }
    /* failed meanwhile: never reached */
    for (uint32_t i = sg->from; i < sg->to && r == ACCEL_OK && traced; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        if (c->kind == ACCEL_I_CMD_SIGNAL && !accel_i_failed(accel_i_signal_value(c->u.sig.signal)))
            t = accel_i_trace_cmd(&q->base, c, t, t);
    }
    return r;
}

/* The worker: waits for the segment, writes its timestamps and trace, then raises what its signal
   operations could not. */
static void accel_i_vk_seg_later(accel_i_vk_queue* q, const accel_i_vk_entry* e, const accel_i_batch* b,
                                 const accel_i_segment* sg, const accel_i_vk_ops* o, bool host) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    VkResult vr = accel_i_vk_wait_sem(dev, q->done, e->value, ACCEL_WAIT_FOREVER);
    accel_result r =
            vr == VK_SUCCESS ? ACCEL_OK : accel_i_vk_fail(dev, vr, "vkWaitSemaphores", "queue signal");
    if (r == ACCEL_OK && host) r = accel_i_vk_seg_host(q, e, b, sg);
    for (uint32_t k = 0; k < o->nlater; k++)
        accel_i_raise(o->later[k], r == ACCEL_OK ? o->later_vals[k] : accel_i_failed_value(r));
}
/* The segment's commands that go into its command buffer, and its timestamps (+1 traced: the start). */
static void accel_i_vk_seg_count(const accel_i_vk_device* dev, const accel_i_batch* b,
                                 const accel_i_segment* sg, uint32_t* ncmd, uint32_t* nstamps) {
    *ncmd = 0;
    *nstamps = dev->base.trace != NULL;
    for (uint32_t i = sg->from; i < sg->to; i++) {
        *ncmd += !accel_i_vk_no_record(&b->cmds[i]);
        *nstamps += b->cmds[i].kind == ACCEL_I_CMD_TIMESTAMP;
    }
}
/* Has the segment a native step? Its fn may call accel on this device (another queue's submit, a signal
   set, a create): so it is recorded without the submit_lock, on the queue's worker (see
   accel_i_vk_segment_submit). */
static bool accel_i_vk_seg_native(const accel_i_batch* b, const accel_i_segment* sg) {
    for (uint32_t i = sg->from; i < sg->to; i++)
        if (b->cmds[i].kind == ACCEL_I_CMD_NATIVE) return true;
    return false;
}
/* The segment's semaphore operations into o (submit_lock held); true when the host must raise some of
   its signals once it completed (the worker's: accel_queue_submit cannot wait for that). */
static bool accel_i_vk_seg_ops(accel_i_vk_queue* q, const accel_i_batch* b, const accel_i_segment* sg,
                               accel_i_vk_ops* o, uint32_t nstamps) {
    accel_i_vk_seg_waits(q, b, sg, o);
    accel_i_vk_seg_after_queue(q, o);
    accel_i_vk_seg_signals(q, b, sg, o);
    if (nstamps) {   /* every signal after the host wrote the timestamps (and the trace) */
        for (uint32_t k = 0; k < o->ns; k++) {
            o->later[o->nlater] = &o->sigs[k]->base;
            o->later_vals[o->nlater++] = o->vals[o->nw + k];
        }
        o->ns = 0;
    }
    return o->nlater || nstamps;
}
/* A wait of the operations on another device's signal without an imported semaphore: made where the
   wait was classified; never dropped before. */
static accel_result accel_i_vk_ops_check(accel_i_vk_device* dev, const accel_i_vk_ops* o) {
    if (!o->lost_import) return ACCEL_OK;
    return accel_i_fail(&dev->base, ACCEL_ERROR_BACKEND,
                        "accel_queue_submit: a wait on another device's signal has no imported semaphore");
}
/* segment_submit (core: batch walk): one vkQueueSubmit with the segment's command buffer, its waits
   (device waits and reached GPU waits) and its signals. Signals that cannot be native operations are
   raised by the host once the segment completed: the worker does that (ACCEL_I_WOULD_BLOCK inside
   accel_queue_submit, which must not block). A segment with timestamps (every segment, traced) has all
   its signals raised so, after the host wrote the timestamps (and the trace); its entry joins the
   queue's list only then (a reclaim would free its query pool). Queue memory (vulkan: queue-ordered
   memory): once the segment is known to go now, its points run; one that fails (or a use of a handle
   without memory) cuts the segment there: the part before it is submitted (its operations made anew;
   in the rare case that part has a signal the host must raise where the whole had none, it goes to
   the worker, which finds its points run already), and the rest of the batch is dropped. A segment
   with a native step is the worker's too: it records it with the submit_lock let go (an fn that calls
   accel on this device took it again: a deadlock), then makes the operations anew (others' submits
   may have moved the signals meanwhile; the worker may then wait for some, as always). */
static int accel_i_vk_segment_submit(accel_queue* base, accel_i_batch* b, const accel_i_segment* sg,
                                     bool may_block) {
    accel_i_vk_queue* q = (accel_i_vk_queue*)base;
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    accel_i_vk_ops o = accel_i_vk_ops_of(b);
    accel_i_vk_entry* e;
    accel_i_segment part = *sg;   /* the segment, cut at a queue-memory failure */
    uint32_t ncmd, nstamps;
    uint64_t value, failed = 0;
    int r = ACCEL_OK;   /* or ACCEL_I_WOULD_BLOCK */
    bool later, native = accel_i_vk_seg_native(b, sg);
    VkResult vr;
    if (native && !may_block) return ACCEL_I_WOULD_BLOCK;
    accel_i_vk_seg_count(dev, b, sg, &ncmd, &nstamps);
    if ((e = accel_i_vk_entry_take(b)) == NULL)   /* cannot happen: the plan holds one per segment */
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_queue_submit: no entry set aside for a segment");
    accel_i_mutex_lock(&dev->submit_lock);
    later = accel_i_vk_seg_ops(q, b, sg, &o, nstamps);
    if (later && !may_block) r = ACCEL_I_WOULD_BLOCK;
    else if (b->qmem && (part.to = accel_i_vk_qmem_run(q, b, sg, &failed)) < sg->to) {
        accel_i_vk_seg_count(dev, b, &part, &ncmd, &nstamps);
        o = accel_i_vk_ops_of(b);
        later = accel_i_vk_seg_ops(q, b, &part, &o, nstamps);
        if (later && !may_block) r = ACCEL_I_WOULD_BLOCK;
    }
    if (r == ACCEL_OK) r = accel_i_vk_ops_check(dev, &o);
    if (r == ACCEL_OK && !nstamps && (e->cb = accel_i_vk_lone_replay(q, b, &part)) != VK_NULL_HANDLE)
        e->cb_lent = true;
    else if (r == ACCEL_OK && (ncmd || nstamps)) {
        if (native) accel_i_mutex_unlock(&dev->submit_lock);
        r = accel_i_vk_record(q, e, b, part.from, part.to);
        if (native) {
            accel_i_mutex_lock(&dev->submit_lock);
            o = accel_i_vk_ops_of(b);
            later = accel_i_vk_seg_ops(q, b, &part, &o, nstamps);
            if (r == ACCEL_OK) r = accel_i_vk_ops_check(dev, &o);
        }
    }
    if (r != ACCEL_OK) {
        accel_i_mutex_unlock(&dev->submit_lock);
        accel_i_vk_entry_untake(q, b, e);
        return r;
    }
    value = q->last + 1;
    if (nstamps) e->stamp_t0 = accel_i_now_ns();
    vr = accel_i_vk_seg_submit(q, e, &o, value);
    accel_i_mutex_unlock(&dev->submit_lock);
    if (vr != VK_SUCCESS) {
        accel_i_vk_entry_untake(q, b, e);
        return accel_i_vk_fail(dev, vr, "vkQueueSubmit", "accel_queue_submit");
    }
    e->value = value;
    accel_i_spin_lock(&q->list_lock);
    q->last = value;
    accel_i_spin_unlock(&q->list_lock);
    if (later) accel_i_vk_seg_later(q, e, b, &part, &o, nstamps != 0);
    accel_i_spin_lock(&q->list_lock);
    if (q->last_entry) q->last_entry->next = e; else q->first = e;
    q->last_entry = e;
    accel_i_spin_unlock(&q->list_lock);
    if (failed) {   /* the rest of the batch drops, its signals fail (vulkan: queue-ordered memory) */
        accel_i_fail_rest(b, part.to + 1, failed);
        b->pc = b->count;
    }
    return ACCEL_OK;
}

/* ==== vulkan: queues ==== */
/* Checks what only the backend can check before anything of the batch runs: work-group sizes against
   the shaders, and the pipelines (created here, so that a compile failure fails the submit); a native
   list's stale peer buffers (accel_i_replays_live). */
static accel_result accel_i_vk_validate(accel_i_vk_queue* q, const accel_i_batch* b) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    const accel_device_info* info = &dev->base.info;
    accel_result lr = accel_i_replays_live(b);
    if (lr != ACCEL_OK) return lr;
    for (uint32_t i = 0; i < b->count; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        accel_i_vk_program* p;
        const accel_exec_params* ep;
        uint32_t size[3];
        uint64_t inv = 1;
        VkPipeline pipe;
        accel_result r;
        if (c->kind == ACCEL_I_CMD_TIMESTAMP && !q->hwq->stamp_bits)
            return accel_i_fail(&dev->base, ACCEL_ERROR_UNSUPPORTED,
                    "accel_queue_timestamp: the queue family (%u) of %s has no timestamps "
                    "(timestampValidBits 0)",
                    q->hwq->family, accel_i_label(&q->base.obj));
        if (c->kind != ACCEL_I_CMD_EXEC) continue;
        p = (accel_i_vk_program*)c->u.exec.program;
        ep = &c->u.exec.params;
        if (!accel_i_vk_group_size(p, ep, size))
            return accel_i_fail(&dev->base, ACCEL_ERROR_INVALID_ARGUMENT,
                    "accel_queue_submit: exec of '%s' with local size %u x %u x %u, "
                    "but the shader's work-group size is fixed at %u x %u x %u",
                    p->base.obj.label, ep->local_size[0], ep->local_size[1], ep->local_size[2], p->fixed[0],
                    p->fixed[1], p->fixed[2]);
        for (int d = 0; d < 3; d++) {
            uint64_t groups = ((uint64_t)ep->global_size[d] + size[d] - 1) / size[d];
            inv *= size[d];
            if (size[d] > info->max_group_size[d] || groups > info->max_group_count[d])
                return accel_i_fail(&dev->base, ACCEL_ERROR_INVALID_ARGUMENT,
                        "accel_queue_submit: exec of '%s': work-group size %u or %llu groups in dimension %d "
                        "exceed the device limits",
                        p->base.obj.label, size[d], (unsigned long long)groups, d);
        }
        if (inv > info->max_group_invocations)
            return accel_i_fail(&dev->base, ACCEL_ERROR_INVALID_ARGUMENT,
                                "accel_queue_submit: exec of '%s': %llu invocations per group (max %u)",
                                p->base.obj.label, (unsigned long long)inv, info->max_group_invocations);
        if ((r = accel_i_vk_pipeline(dev, p, size, &pipe)) != ACCEL_OK) return r;
    }
    return ACCEL_OK;
}

static accel_result accel_i_vk_queue_submit(accel_queue* base, accel_i_batch* b) {
    accel_i_vk_queue* q = (accel_i_vk_queue*)base;
    accel_result r = ACCEL_ERROR_DEVICE_LOST;
    /* pipelines and plans are made on the VkDevice: not while a recover makes it anew (a submit that
       passed its entry check before the recover began is stale when it gets here after it) */
    if (accel_i_creates_enter(base->obj.device, "accel_queue_submit")) {
        if (!accel_i_stale(&base->obj)) r = accel_i_vk_validate(q, b);
        if (r == ACCEL_OK) r = accel_i_vk_plan_make(q, b);
        accel_i_creates_leave(base->obj.device);
    }
    if (r != ACCEL_OK) { accel_i_batch_recycle(base, b); return r; }
    accel_i_vk_reclaim(q, false);
    return accel_i_walker_submit(base, b);
}

/* queue_drain: everything submitted to the GPU so far completed; then its entries are reclaimed. */
static accel_result accel_i_vk_queue_drain(accel_queue* base, uint64_t timeout_ns) {
    accel_i_vk_queue* q = (accel_i_vk_queue*)base;
    accel_i_vk_device* dev = accel_i_vk_dev(base->obj.device);
    uint64_t target;
    VkResult vr;
    accel_i_spin_lock(&q->list_lock);
    target = q->last;
    accel_i_spin_unlock(&q->list_lock);
    if (accel_i_lost(&dev->base)) return ACCEL_ERROR_DEVICE_LOST;
    if (!accel_i_vk_enter(dev, &base->obj)) return ACCEL_OK;   /* a recover took its work (it is over) */
    vr = accel_i_vk_wait_sem(dev, q->done, target, timeout_ns);
    accel_i_vk_leave(dev);
    if (vr == VK_TIMEOUT) return ACCEL_TIMEOUT;
    if (vr != VK_SUCCESS) return accel_i_vk_fail(dev, vr, "vkWaitSemaphores", "accel_queue_finish");
    accel_i_vk_reclaim(q, false);
    return ACCEL_OK;
}

/* A COPY queue takes the copy VkQueue. A COMPUTE queue takes a compute VkQueue that nobody uses and
   owns it (no other accel queue joins it while the queue lives, so that the queue may wait there on
   the device for what only the host raises: a later queue would be held up behind such a wait, or
   deadlock where that queue's work is what raises it); else the compute VkQueue, not owned, with the
   fewest users. One compute VkQueue is never owned (the copy queues', else the last; on a device with
   one, such as lavapipe, the only one), so there is always one to share. */
static accel_i_vk_hwq* accel_i_vk_hwq_take(accel_i_vk_device* dev, accel_queue_type type) {
    accel_i_vk_hwq* h = &dev->hwq[dev->copy_hwq];
    accel_i_mutex_lock(&dev->submit_lock);
    if (type != ACCEL_QUEUE_COPY) {
        const accel_i_vk_hwq* shared =
                &dev->hwq[dev->copy_hwq < dev->hwq_count ? dev->copy_hwq : dev->hwq_count - 1];
        uint32_t start = atomic_fetch_add(&dev->next_hwq, 1u);
        h = NULL;
        for (uint32_t i = 0; i < dev->hwq_count; i++) {
            accel_i_vk_hwq* c = &dev->hwq[(start + i) % dev->hwq_count];
            if (c->owned) continue;
            if (c->users == 0 && c != shared) { h = c; h->owned = true; break; }
            if (!h || c->users < h->users) h = c;
        }
    }
    h->users++;
    accel_i_mutex_unlock(&dev->submit_lock);
    return h;
}
static void accel_i_vk_hwq_give(accel_i_vk_device* dev, accel_i_vk_hwq* h) {
    accel_i_mutex_lock(&dev->submit_lock);
    h->users--;
    h->owned = false;   /* an owned one had this queue only */
    accel_i_mutex_unlock(&dev->submit_lock);
}
static void accel_i_vk_queue_release(accel_i_vk_queue* q) {
    accel_i_vk_device* dev = accel_i_vk_dev(q->base.obj.device);
    accel_device* d = &dev->base;
    if (q->hwq) accel_i_vk_hwq_give(dev, q->hwq);   /* NULL: a recover took it (vulkan: recovery) */
    while (q->spare) {
        accel_i_vk_entry* e = q->spare;
        q->spare = e->next;
        accel_i_dev_free(d, e, sizeof *e);
    }
    if (q->pool) dev->vk.DestroyCommandPool(dev->device, q->pool, NULL);   /* frees its command buffers */
    if (q->done) accel_i_vk_sem_retire(dev, q->done);
    accel_i_dev_free(d, q->free_cbs, q->free_cbs_bytes);
    accel_i_dev_free(d, q, sizeof *q);
}

static accel_result accel_i_vk_queue_create(accel_device* d, accel_queue_type type, accel_queue** out) {
    accel_i_vk_device* dev = accel_i_vk_dev(d);
    accel_i_vk_queue* q = (accel_i_vk_queue*)accel_i_dev_alloc(d, sizeof *q);
    VkCommandPoolCreateInfo pi;
    accel_result r;
    VkResult vr;
    if (!q) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: out of host memory");
    memset((void*)q, 0, sizeof *q);
    q->base.obj.device = d;
    atomic_init(&q->list_lock, 0u);
    q->uid = atomic_fetch_add(&dev->queue_uids, 1u) + 1u;
    q->hwq = accel_i_vk_hwq_take(dev, type);
    /* room for a few recycled command buffers */
    if (!accel_i_grow(d, (void**)&q->free_cbs, &q->free_cbs_bytes, 16 * sizeof(VkCommandBuffer))) {
        accel_i_vk_queue_release(q);
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: out of host memory");
    }
    memset(&pi, 0, sizeof pi);
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = q->hwq->family;
    if (!accel_i_vk_retire_reserve(dev)) {
        accel_i_vk_queue_release(q);
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: out of host memory");
    }
    vr = dev->vk.CreateCommandPool(dev->device, &pi, NULL, &q->pool);
    if (vr == VK_SUCCESS) vr = accel_i_vk_timeline(dev, 0, &q->done);
    if (vr != VK_SUCCESS) {
        if (!q->done) accel_i_vk_retire_unreserve(dev);   /* a done made is retired by the release */
        accel_i_vk_queue_release(q);
        return accel_i_vk_fail(dev, vr, "vkCreateCommandPool/vkCreateSemaphore", "accel_queue_create");
    }
    accel_i_queue_init(&q->base, d, type);
    if ((r = accel_i_walker_start(&q->base)) != ACCEL_OK) {
        accel_i_object_undo(&q->base.obj);
        accel_i_queue_fini(&q->base);
        accel_i_vk_queue_release(q);
        return r;
    }
    *out = &q->base;
    return ACCEL_OK;
}

static void accel_i_vk_queue_destroy(accel_queue* base) {
    accel_i_vk_queue* q = (accel_i_vk_queue*)base;
    accel_i_walker_stop(base);     /* waits for everything submitted */
    accel_i_vk_reclaim(q, true);   /* everything completed (or the device is lost) */
    accel_i_vk_forgotten_complete(q);   /* a recover took its entries (vulkan: recovery) */
    accel_i_vk_relays_free(q);          /* nothing waits on them now */
    accel_i_queue_fini(base);
    accel_i_vk_queue_release(q);
}

/* ==== vulkan: devices ==== */
static bool accel_i_vk_env_on(const char* name) {
    const char* v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}
static uint32_t accel_i_vk_env_u32(const char* name) {
    const char* v = getenv(name);
    return v ? (uint32_t)strtoul(v, NULL, 10) : 0u;
}
static bool accel_i_vk_has_ext(const VkExtensionProperties* e, uint32_t n, const char* name) {
    for (uint32_t i = 0; i < n; i++) if (!strcmp(e[i].extensionName, name)) return true;
    return false;
}

/* Instance (with validation and debug utils when asked / available). */
static accel_result accel_i_vk_make_instance(accel_i_vk_device* dev, const accel_logger* lg,
                                             bool validation) {
    accel_i_vk_itab* t = &dev->vki;
    VkApplicationInfo app;
    VkInstanceCreateInfo ci;
    VkDebugUtilsMessengerCreateInfoEXT mi;
    VkExtensionProperties* exts = NULL;
    VkLayerProperties* layers = NULL;
    uint32_t next = 0, nlay = 0, version = VK_API_VERSION_1_0;
    const char* enabled_ext[2];
    const char* enabled_layer[1];
    uint32_t ne = 0, nl = 0;
    bool debug_utils = false;
    accel_result r = ACCEL_OK;
    VkResult vr;
    accel_i_vk_load_global(t);
    if (!t->CreateInstance || !t->EnumerateInstanceExtensionProperties) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: the loader lacks vkCreateInstance");
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if (t->EnumerateInstanceVersion) t->EnumerateInstanceVersion(&version);
    if (version < VK_API_VERSION_1_1) {
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "vulkan: the loader supports Vulkan %u.%u only (1.1 or newer needed)",
                       VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if (t->EnumerateInstanceExtensionProperties(NULL, &next, NULL) == VK_SUCCESS && next) {
        exts = (VkExtensionProperties*)accel_i_dev_alloc(&dev->base, next * sizeof *exts);
        if (!exts) return ACCEL_ERROR_OUT_OF_MEMORY;
        if (t->EnumerateInstanceExtensionProperties(NULL, &next, exts) != VK_SUCCESS) next = 0;
        debug_utils = accel_i_vk_has_ext(exts, next, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        accel_i_dev_free(&dev->base, exts, next * sizeof *exts);
    }
    if (validation && t->EnumerateInstanceLayerProperties &&
        t->EnumerateInstanceLayerProperties(&nlay, NULL) == VK_SUCCESS && nlay) {
        bool found = false;
        layers = (VkLayerProperties*)accel_i_dev_alloc(&dev->base, nlay * sizeof *layers);
        if (!layers) return ACCEL_ERROR_OUT_OF_MEMORY;
        if (t->EnumerateInstanceLayerProperties(&nlay, layers) == VK_SUCCESS)
            for (uint32_t i = 0; i < nlay; i++)
                found = found || !strcmp(layers[i].layerName, "VK_LAYER_KHRONOS_validation");
        accel_i_dev_free(&dev->base, layers, nlay * sizeof *layers);
        if (found) { enabled_layer[nl++] = "VK_LAYER_KHRONOS_validation"; debug_utils = true; }
        else accel_i_log_to(lg, ACCEL_LOG_WARN,
                            "vulkan: validation asked for, but VK_LAYER_KHRONOS_validation is not installed");
    } else if (validation) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: validation asked for, but no layer is installed");
    }
    if (debug_utils) enabled_ext[ne++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    memset(&app, 0, sizeof app);
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = dev->base.label[0] ? dev->base.label : "accel";
    app.pEngineName = "accel";
    app.apiVersion = version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;
    /* lowered in device create for a 1.1 device */
    dev->spirv_minor = version >= VK_API_VERSION_1_2 ? 5u : 3u;
    memset(&mi, 0, sizeof mi);
    mi.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    mi.messageSeverity =
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = accel_i_vk_debug_cb;
    mi.pUserData = dev;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pNext = debug_utils ? &mi : NULL;
    ci.pApplicationInfo = &app;
    ci.enabledLayerCount = nl;
    ci.ppEnabledLayerNames = enabled_layer;
    ci.enabledExtensionCount = ne;
    ci.ppEnabledExtensionNames = enabled_ext;
    vr = t->CreateInstance(&ci, NULL, &dev->instance);
    if (vr != VK_SUCCESS) {
        dev->instance = VK_NULL_HANDLE;
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "vulkan: no usable Vulkan driver: vkCreateInstance failed: %s (%d)",
                       accel_i_vk_result_name(vr), (int)vr);
        return vr == VK_ERROR_OUT_OF_HOST_MEMORY ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_UNAVAILABLE;
    }
    dev->own_instance = true;
    accel_i_vk_load_instance(t, dev->instance);
    if (!t->EnumeratePhysicalDevices || !t->CreateDevice || !t->GetDeviceProcAddr ||
        !t->GetPhysicalDeviceFeatures2 || !t->GetPhysicalDeviceProperties2) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: the instance lacks Vulkan 1.1 entry points");
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if (debug_utils && t->CreateDebugUtilsMessengerEXT &&
        t->CreateDebugUtilsMessengerEXT(dev->instance, &mi, NULL, &dev->messenger) != VK_SUCCESS)
        dev->messenger = VK_NULL_HANDLE;
    return r;
}

/* Can the backend run on this physical device? Fills the compute family; *why says why not. */
static bool accel_i_vk_suitable(accel_i_vk_device* dev, VkPhysicalDevice pd, uint32_t* compute,
                                const char** why) {
    accel_i_vk_itab* t = &dev->vki;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceTimelineSemaphoreFeatures tl;
    VkQueueFamilyProperties fam[32];
    VkPhysicalDeviceFeatures2 f2;
    uint32_t nfam = 32;
    memset(&tl, 0, sizeof tl);
    tl.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
    memset((void*)&f2, 0, sizeof f2);
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &tl;
    t->GetPhysicalDeviceProperties(pd, &props);
    if (props.apiVersion < VK_API_VERSION_1_1) { *why = "Vulkan 1.0 only"; return false; }
    t->GetPhysicalDeviceFeatures2(pd, &f2);
    if (!tl.timelineSemaphore) { *why = "no timeline semaphores"; return false; }
    t->GetPhysicalDeviceQueueFamilyProperties(pd, &nfam, NULL);
    if (nfam > 32) nfam = 32;
    t->GetPhysicalDeviceQueueFamilyProperties(pd, &nfam, fam);
    for (uint32_t i = 0; i < nfam; i++) {
        if (fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) { *compute = i; return true; }
    }
    *why = "no compute queue family";
    return false;
}

/* The index-th suitable physical device, or UNAVAILABLE (with the reason logged). */
static accel_result accel_i_vk_pick(accel_i_vk_device* dev, const accel_logger* lg, uint32_t index,
                                    uint32_t* count, uint32_t* compute) {
    VkPhysicalDevice local[16];
    uint32_t n = 16, found = 0;
    const char* why = NULL;
    VkResult vr = dev->vki.EnumeratePhysicalDevices(dev->instance, &n, local);
    if (vr != VK_SUCCESS && vr != VK_INCOMPLETE) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: vkEnumeratePhysicalDevices failed: %s (%d)",
                       accel_i_vk_result_name(vr), (int)vr);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t fam;
        if (!accel_i_vk_suitable(dev, local[i], &fam, &why)) continue;
        if (found == index && compute) { dev->phys = local[i]; *compute = fam; }
        found++;
    }
    if (count) *count = found;
    if (n == 0) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: the driver reports no physical device");
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if (found == 0) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: no device can run accel (%s)", why ? why : "?");
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if (compute && index >= found) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "vulkan: device_index %u, but only %u device(s)", index, found);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    return ACCEL_OK;
}

/* Does the physical device offer extension `name`? *has; false: out of host memory to ask */
static bool accel_i_vk_phys_has_ext(accel_i_vk_device* dev, const char* name, bool* has) {
    uint32_t n = 0;
    VkExtensionProperties* e;
    *has = false;
    if (dev->vki.EnumerateDeviceExtensionProperties(dev->phys, NULL, &n, NULL) != VK_SUCCESS || !n)
        return true;
    if ((e = (VkExtensionProperties*)accel_i_dev_alloc(&dev->base, n * sizeof *e)) == NULL) return false;
    if (dev->vki.EnumerateDeviceExtensionProperties(dev->phys, NULL, &n, e) == VK_SUCCESS)
        *has = accel_i_vk_has_ext(e, n, name);
    accel_i_dev_free(&dev->base, e, n * sizeof *e);
    return true;
}
/* uuid (Vulkan 1.1's VkPhysicalDeviceIDProperties) and PCI location (VK_EXT_pci_bus_info, which needs
   no enabling to be queried; UINT32_MAX without it) */
static bool accel_i_vk_fill_identity(accel_i_vk_device* dev, accel_device_info* info) {
    VkPhysicalDeviceIDProperties id;
    VkPhysicalDevicePCIBusInfoPropertiesEXT pci;
    VkPhysicalDeviceProperties2 p2;
    bool has_pci;
    has_pci = dev->pci_ext;
    if (!dev->pci_known && !accel_i_vk_phys_has_ext(dev, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME, &has_pci))
        return false;
    memset(&id, 0, sizeof id);
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    memset(&pci, 0, sizeof pci);
    pci.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
    id.pNext = has_pci ? &pci : NULL;
    memset((void*)&p2, 0, sizeof p2);
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &id;
    dev->vki.GetPhysicalDeviceProperties2(dev->phys, &p2);
    memcpy(info->uuid, id.deviceUUID, sizeof info->uuid);
    memcpy(dev->driver_uuid, id.driverUUID, VK_UUID_SIZE);
    info->pci_domain = has_pci ? pci.pciDomain : UINT32_MAX;
    info->pci_bus = has_pci ? pci.pciBus : UINT32_MAX;
    info->pci_device = has_pci ? pci.pciDevice : UINT32_MAX;
    return true;
}

/* false: out of host memory */
static bool accel_i_vk_fill_info(accel_i_vk_device* dev) {
    accel_device_info* info = &dev->base.info;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceTimelineSemaphoreProperties tp;
    VkPhysicalDevicePushDescriptorPropertiesKHR pp;
    VkPhysicalDeviceProperties2 p2;
    uint64_t heap = 0;
    memset(&tp, 0, sizeof tp);
    tp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_PROPERTIES;
    memset(&pp, 0, sizeof pp);
    pp.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR;
    pp.pNext = &tp;
    memset((void*)&p2, 0, sizeof p2);
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &pp;
    dev->vki.GetPhysicalDeviceProperties2(dev->phys, &p2);
    props = p2.properties;
    dev->vki.GetPhysicalDeviceMemoryProperties(dev->phys, &dev->mem);
    memset((void*)info, 0, sizeof *info);
    info->backend = "vulkan";
    accel_i_copy_label(info->name, sizeof info->name, props.deviceName);
    info->type = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ? ACCEL_DEVICE_GPU_DISCRETE
               : props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? ACCEL_DEVICE_GPU_INTEGRATED
               : props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? ACCEL_DEVICE_CPU : ACCEL_DEVICE_OTHER;
    for (uint32_t i = 0; i < dev->mem.memoryHeapCount; i++)
        if ((dev->mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
            dev->mem.memoryHeaps[i].size > heap)
            heap = dev->mem.memoryHeaps[i].size;
    info->memory_bytes = heap;
    for (int d = 0; d < 3; d++) {
        info->max_group_size[d] = props.limits.maxComputeWorkGroupSize[d];
        info->max_group_count[d] = props.limits.maxComputeWorkGroupCount[d];
    }
    info->max_group_invocations = props.limits.maxComputeWorkGroupInvocations;
    info->max_buffers = props.limits.maxPerStageDescriptorStorageBuffers;
    if (dev->push_desc && pp.maxPushDescriptors && info->max_buffers > pp.maxPushDescriptors)
        info->max_buffers = pp.maxPushDescriptors;
    if (info->max_buffers > ACCEL_I_VK_MAX_BUFFERS) info->max_buffers = ACCEL_I_VK_MAX_BUFFERS;
    info->max_constants = props.limits.maxPushConstantsSize / 4u;
    info->formats = ACCEL_FORMAT_SPIRV;
    info->separate_copy_queue = dev->copy_family != dev->compute_family;
    {
        const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        int first_local = accel_i_vk_mem_type(dev, ~0u, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
        dev->map_device = !accel_i_vk_env_on("ACCEL_VULKAN_NO_MAP_DEVICE") && first_local >= 0 &&
                          (dev->mem.memoryTypes[first_local].propertyFlags & want) == want;
    }
    info->host_mapped_device_memory = dev->map_device;
    info->buffer_offset_alignment = props.limits.minStorageBufferOffsetAlignment
                                    ? (uint32_t)props.limits.minStorageBufferOffsetAlignment : 1u;
    dev->max_diff =
            tp.maxTimelineSemaphoreValueDifference ? tp.maxTimelineSemaphoreValueDifference : UINT64_MAX;
    return accel_i_vk_fill_identity(dev, info);
}

/* Timestamps: each VkQueue's valid bits, the tick period, and whether VK_EXT_calibrated_timestamps (when
   enabled: cal_ext on entry) pairs the device's clock with the host clock accel reads (CLOCK_MONOTONIC;
   elsewhere the paired reading of accel_i_vk_calibrate). */
static void accel_i_vk_stamps_setup(accel_i_vk_device* dev) {
    VkQueueFamilyProperties fam[32];
    VkPhysicalDeviceProperties props;
    VkTimeDomainEXT domains[8];
    uint32_t nfam = 32, nd = 8, found = 0;
    dev->vki.GetPhysicalDeviceProperties(dev->phys, &props);
    dev->stamp_period = props.limits.timestampPeriod > 0 ? (double)props.limits.timestampPeriod : 1.0;
    dev->vki.GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nfam, NULL);
    if (nfam > 32) nfam = 32;
    dev->vki.GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nfam, fam);
    for (uint32_t i = 0; i < dev->hwq_inited; i++)
        dev->hwq[i].stamp_bits = dev->hwq[i].family < nfam ? fam[dev->hwq[i].family].timestampValidBits : 0;
#if defined(_WIN32) || !defined(CLOCK_MONOTONIC) || defined(__wasi__)
    dev->cal_ext = false;   /* accel's clock is not CLOCK_MONOTONIC here */
#endif
    if (dev->cal_ext &&
        (!dev->vk.GetCalibratedTimestampsEXT || !dev->vki.GetPhysicalDeviceCalibrateableTimeDomainsEXT ||
         dev->vki.GetPhysicalDeviceCalibrateableTimeDomainsEXT(dev->phys, &nd, domains) < 0))
        nd = 0;
    for (uint32_t i = 0; dev->cal_ext && i < nd; i++)
        found |= domains[i] == VK_TIME_DOMAIN_DEVICE_EXT ? 1u
                 : domains[i] == VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT ? 2u : 0u;
    dev->cal_ext = dev->cal_ext && found == 3u;
}

/* The io semaphore and command pool (accel_buffer_read/write through staging, create-time fills). */
static accel_result accel_i_vk_io_make(accel_i_vk_device* dev) {
    VkCommandPoolCreateInfo pi;
    VkResult vr;
    if ((vr = accel_i_vk_timeline(dev, 0, &dev->io_sem)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkCreateSemaphore", "accel_device_create");
    memset(&pi, 0, sizeof pi);
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pi.queueFamilyIndex = dev->hwq[dev->io_hwq].family;
    if ((vr = dev->vk.CreateCommandPool(dev->device, &pi, NULL, &dev->io_pool)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkCreateCommandPool", "accel_device_create");
    return ACCEL_OK;
}
/* Device-level state shared by the create and adopt paths: entry points, queues, internal objects. */
/* VkQueues: compute_queues of the compute family (accel queues take them round robin), then an io
   VkQueue of the same family (io_own_queue), then the copy family's (copy_own_queue). */
static accel_result accel_i_vk_device_setup(accel_i_vk_device* dev, uint32_t compute_queues,
                                            bool io_own_queue, uint32_t copy_family, bool copy_own_queue) {
    uint32_t n = compute_queues + (io_own_queue ? 1u : 0u) + (copy_own_queue ? 1u : 0u);
    const char* missing = accel_i_vk_load_device(&dev->vki, &dev->vk, dev->device);
    if (missing)
        return accel_i_fail(&dev->base, ACCEL_ERROR_UNAVAILABLE, "vulkan: the device lacks %s", missing);
    if (dev->push_desc && !dev->vk.CmdPushDescriptorSetKHR) dev->push_desc = false;
    if (!accel_i_mutex_init(&dev->io_lock)) return ACCEL_ERROR_OUT_OF_MEMORY;
    if (!accel_i_mutex_init(&dev->submit_lock)) {
        accel_i_mutex_destroy(&dev->io_lock);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    if (!accel_i_mutex_init(&dev->mem_lock)) {
        accel_i_mutex_destroy(&dev->io_lock);
        accel_i_mutex_destroy(&dev->submit_lock);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    dev->locks_inited = true;
    dev->hwq_count = compute_queues;
    for (uint32_t i = 0; i < n; i++) {
        accel_i_vk_hwq* h = &dev->hwq[i];
        bool copy = copy_own_queue && i == n - 1u;
        h->family = copy ? copy_family : dev->compute_family;
        dev->vk.GetDeviceQueue(dev->device, h->family, copy ? 0 : i, &h->queue);
        if (!accel_i_mutex_init(&h->lock)) return ACCEL_ERROR_OUT_OF_MEMORY;
        dev->hwq_inited++;
    }
    accel_i_vk_stamps_setup(dev);
    dev->copy_family = copy_family;
    dev->copy_hwq = copy_own_queue ? n - 1u : (compute_queues > 1 ? compute_queues - 1 : 0);
    dev->io_hwq = io_own_queue ? compute_queues : 0;
    if (copy_own_queue && copy_family == dev->compute_family) dev->copy_family = dev->compute_family;
    atomic_init(&dev->next_hwq, 0u);
    if (!accel_i_vk_fill_info(dev)) return ACCEL_ERROR_OUT_OF_MEMORY;
    /* reads and writes through staging share hwq[0]: an accel queue there is never alone on it, so it
       never waits on the device for a value only the host raises (a read would wait behind that) */
    if (!io_own_queue && !dev->map_device) dev->hwq[0].users = 1;
    return accel_i_vk_io_make(dev);
}

/* vkCreateDevice with what accel_i_vk_device_create chose (dev->open_*), again at a recover. */
static VkResult accel_i_vk_device_open(accel_i_vk_device* dev) {
    float prio[ACCEL_VULKAN_MAX_QUEUES + 1];
    VkDeviceQueueCreateInfo qci[2];
    VkPhysicalDeviceTimelineSemaphoreFeatures tl;
    VkPhysicalDeviceFeatures2 f2;
    VkDeviceCreateInfo ci;
    memset(prio, 0, sizeof prio);
    memset(&tl, 0, sizeof tl);
    tl.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
    tl.timelineSemaphore = VK_TRUE;
    memset((void*)&f2, 0, sizeof f2);
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &tl;
    memset(qci, 0, sizeof qci);
    qci[0].sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qci[0].queueFamilyIndex = dev->compute_family;
    qci[0].queueCount = dev->open_compute_n + (dev->open_io_own ? 1u : 0u);
    qci[0].pQueuePriorities = prio;
    qci[1] = qci[0];
    qci[1].queueFamilyIndex = dev->open_copy_family;
    qci[1].queueCount = 1;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    ci.pNext = &f2;
    ci.queueCreateInfoCount = dev->open_copy_own ? 2 : 1;
    ci.pQueueCreateInfos = qci;
    ci.enabledExtensionCount = dev->open_next;
    ci.ppEnabledExtensionNames = dev->open_ext;
    return dev->vki.CreateDevice(dev->phys, &ci, NULL, &dev->device);
}

/* Releases whatever the device got so far (every create failure path, and destroy). */
static void accel_i_vk_blocks_free(accel_i_vk_device* dev);
static void accel_i_vk_device_free(accel_i_vk_device* dev) {
    accel_i_sharers_update(&dev->base, false);   /* vulkan: peer copies */
    if (dev->device) {
        if (dev->vk.DeviceWaitIdle) dev->vk.DeviceWaitIdle(dev->device);
        atomic_store(&dev->imports_closing, 1u);   /* other devices' memory and signals imported here */
        accel_i_imports_drop_into(&dev->base);
        if (dev->locks_inited) accel_i_vk_retired_free_locked(dev);   /* one thread left */
        accel_i_vk_blocks_free(dev);
        if (dev->io_pool) dev->vk.DestroyCommandPool(dev->device, dev->io_pool, NULL);
        if (dev->io_sem) dev->vk.DestroySemaphore(dev->device, dev->io_sem, NULL);
        if (dev->own_device && dev->vk.DestroyDevice) dev->vk.DestroyDevice(dev->device, NULL);
    }
    for (uint32_t i = 0; i < dev->hwq_inited; i++) accel_i_mutex_destroy(&dev->hwq[i].lock);
    if (dev->locks_inited) {
        accel_i_mutex_destroy(&dev->io_lock);
        accel_i_mutex_destroy(&dev->submit_lock);
        accel_i_mutex_destroy(&dev->mem_lock);
    }
    if (dev->messenger && dev->vki.DestroyDebugUtilsMessengerEXT)
        dev->vki.DestroyDebugUtilsMessengerEXT(dev->instance, dev->messenger, NULL);
    if (dev->instance && dev->own_instance) dev->vki.DestroyInstance(dev->instance, NULL);
    if (dev->retired)
        accel_i_dev_free(&dev->base, dev->retired, (size_t)dev->retired_cap * sizeof *dev->retired);
    accel_i_dev_free(&dev->base, dev, sizeof *dev);
}

static accel_result accel_i_vk_device_create(const accel_backend* b, const accel_device_desc* d,
                                             accel_device** out) {
    accel_i_vk_device* dev = (accel_i_vk_device*)accel_i_alloc(&d->allocator, sizeof *dev, 16);
    VkQueueFamilyProperties fam[32];
    VkExtensionProperties* exts = NULL;
    uint32_t nfam = 32, next = 0, compute_n, copy_family, ne = 0;
    bool copy_own = false, io_own;
    const char** enabled;
    VkPhysicalDeviceProperties props;
    accel_result r;
    VkResult vr;
    if (!dev) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "accel_device_create: out of host memory");
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    memset((void*)dev, 0, sizeof *dev);
    accel_i_device_init(&dev->base, b, d);
    dev->base.qmem_ops = &accel_i_vk_qmem_ops;   /* queue memory at its point (vulkan: queue-ordered ...) */
    enabled = dev->open_ext;
    r = accel_i_vk_lib_open(&dev->base.logger, &dev->vki.GetInstanceProcAddr);
    if (r == ACCEL_OK)
        r = accel_i_vk_make_instance(dev, &dev->base.logger, ACCEL_I_DEBUGGING(&dev->base) ||
                                                             accel_i_vk_env_on("ACCEL_VULKAN_VALIDATION"));
    if (r == ACCEL_OK)
        r = accel_i_vk_pick(dev, &dev->base.logger, d->device_index, NULL, &dev->compute_family);
    if (r != ACCEL_OK) { accel_i_vk_device_free(dev); return r; }
    dev->vki.GetPhysicalDeviceProperties(dev->phys, &props);
    if (props.apiVersion < VK_API_VERSION_1_2) dev->spirv_minor = 3;
    dev->vki.GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nfam, NULL);
    if (nfam > 32) nfam = 32;
    dev->vki.GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nfam, fam);
    compute_n = fam[dev->compute_family].queueCount < ACCEL_VULKAN_MAX_QUEUES
                    ? fam[dev->compute_family].queueCount : ACCEL_VULKAN_MAX_QUEUES;
    copy_family = dev->compute_family;
    for (uint32_t i = 0; i < nfam; i++) {
        if ((fam[i].queueFlags & VK_QUEUE_TRANSFER_BIT) &&
            !(fam[i].queueFlags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)) && fam[i].queueCount) {
            copy_family = i;
            copy_own = true;
            break;
        }
    }
    if (dev->vki.EnumerateDeviceExtensionProperties(dev->phys, NULL, &next, NULL) == VK_SUCCESS && next) {
        exts = (VkExtensionProperties*)accel_i_dev_alloc(&dev->base, next * sizeof *exts);
        if (!exts) {
            accel_i_vk_device_free(dev);
            accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "accel_device_create: out of host memory");
            return ACCEL_ERROR_OUT_OF_MEMORY;
        }
        if (dev->vki.EnumerateDeviceExtensionProperties(dev->phys, NULL, &next, exts) != VK_SUCCESS) next = 0;
        dev->pci_known = true;
        dev->pci_ext = accel_i_vk_has_ext(exts, next, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
        dev->push_desc = accel_i_vk_has_ext(exts, next, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) &&
                         !accel_i_vk_env_on("ACCEL_VULKAN_NO_PUSH_DESCRIPTORS");
        if (props.apiVersion < VK_API_VERSION_1_2 &&
            accel_i_vk_has_ext(exts, next, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME))
            enabled[ne++] = VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME;
        dev->cal_ext = accel_i_vk_has_ext(exts, next, VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME) &&
                       !accel_i_vk_env_on("ACCEL_VULKAN_NO_CALIBRATED_TIMESTAMPS");
        if (dev->cal_ext) enabled[ne++] = VK_EXT_CALIBRATED_TIMESTAMPS_EXTENSION_NAME;
#if !defined(_WIN32)
        dev->ext_mem = accel_i_vk_has_ext(exts, next, VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME) &&
                       !accel_i_vk_env_on("ACCEL_VULKAN_NO_EXTERNAL_MEMORY") && accel_i_vk_ext_mem_ok(dev);
        if (dev->ext_mem) enabled[ne++] = VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME;   /* peer copies */
        dev->ext_sem = accel_i_vk_has_ext(exts, next, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME) &&
                       !accel_i_vk_env_on("ACCEL_VULKAN_NO_EXTERNAL_SEMAPHORE") && accel_i_vk_ext_sem_ok(dev);
        if (dev->ext_sem) enabled[ne++] = VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME;   /* waits across */
#endif
        accel_i_dev_free(&dev->base, exts, next * sizeof *exts);
    }
    if (dev->push_desc) enabled[ne++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    /* one of its own for reads/writes */
    io_own = fam[dev->compute_family].queueCount > compute_n || compute_n > 1;
    if (io_own && fam[dev->compute_family].queueCount <= compute_n) compute_n--;
    dev->open_compute_n = compute_n;
    dev->open_io_own = io_own;
    dev->open_copy_family = copy_family;
    dev->open_copy_own = copy_own;
    dev->open_next = ne;
    dev->lose_at = accel_i_vk_env_u32("ACCEL_VULKAN_TEST_DEVICE_LOST");
    vr = accel_i_vk_device_open(dev);
    if (vr != VK_SUCCESS) {
        dev->device = VK_NULL_HANDLE;
        r = accel_i_vk_fail(dev, vr, "vkCreateDevice", "accel_device_create");
        accel_i_vk_device_free(dev);
        return r;
    }
    dev->own_device = true;
    r = accel_i_vk_device_setup(dev, compute_n, io_own, copy_family, copy_own);
    if (r != ACCEL_OK) {
        if (r == ACCEL_ERROR_OUT_OF_MEMORY)
            accel_i_log(&dev->base, ACCEL_LOG_ERROR, "accel_device_create: out of host memory");
        accel_i_vk_device_free(dev);
        return r;
    }
    if (dev->ext_mem) accel_i_sharers_update(&dev->base, true);   /* vulkan: peer copies */
    *out = &dev->base;
    return ACCEL_OK;
}

static void accel_i_vk_device_destroy(accel_device* d) { accel_i_vk_device_free(accel_i_vk_dev(d)); }

static accel_result accel_i_vk_device_count(const accel_backend* b, uint32_t* count) {
    accel_device_desc d;
    accel_i_vk_device* dev;
    accel_result r;
    memset(&d, 0, sizeof d);
    d.allocator.alloc_fn = accel_i_default_alloc;
    d.allocator.free_fn = accel_i_default_free;
    dev = (accel_i_vk_device*)accel_i_alloc(&d.allocator, sizeof *dev, 16);
    if (!dev) return ACCEL_ERROR_OUT_OF_MEMORY;
    memset((void*)dev, 0, sizeof *dev);
    accel_i_device_init(&dev->base, b, &d);
    r = accel_i_vk_lib_open(NULL, &dev->vki.GetInstanceProcAddr);
    if (r == ACCEL_OK) r = accel_i_vk_make_instance(dev, NULL, false);
    if (r == ACCEL_OK) r = accel_i_vk_pick(dev, NULL, 0, count, NULL);
    accel_i_vk_device_free(dev);
    return r;
}

ACCEL_API accel_result accel_vulkan_device_adopt(const accel_device_desc* desc,
                                                 const accel_vulkan_adopt_desc* vk, accel_device** out) {
    accel_device_desc d;
    accel_i_vk_device* dev;
    VkQueueFamilyProperties fam[32];
    uint32_t nfam = 32;
    accel_result r;
    const char* missing;
    if (out) *out = NULL;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    if (accel_i_desc_allocator(&d, "accel_vulkan_device_adopt") != ACCEL_OK)
        return ACCEL_ERROR_INVALID_ARGUMENT;
    missing = !vk ? "vk" : !out ? "out" : !vk->instance ? "vk->instance" : !vk->physical_device ?
              "vk->physical_device" : !vk->device ? "vk->device" : !vk->get_instance_proc_addr ?
              "vk->get_instance_proc_addr" : NULL;
    if (missing) {
        accel_i_log_to(&d.logger, ACCEL_LOG_ERROR, "accel_vulkan_device_adopt: %s is NULL (instance, "
                       "physical_device, device, get_instance_proc_addr and out are required)", missing);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    dev = (accel_i_vk_device*)accel_i_alloc(&d.allocator, sizeof *dev, 16);
    if (!dev) {
        accel_i_log_to(&d.logger, ACCEL_LOG_ERROR, "accel_vulkan_device_adopt: out of host memory");
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    memset((void*)dev, 0, sizeof *dev);
    accel_i_device_init(&dev->base, accel_vulkan_backend(), &d);
    dev->base.qmem_ops = &accel_i_vk_qmem_ops;   /* queue memory at its point (vulkan: queue-ordered ...) */
    dev->base.no_recover = true;   /* the engine's VkDevice: accel cannot make it anew */
    dev->vki.GetInstanceProcAddr = vk->get_instance_proc_addr;
    dev->instance = vk->instance;
    dev->phys = vk->physical_device;
    dev->device = vk->device;
    dev->compute_family = vk->queue_family;
    dev->push_desc = vk->push_descriptors && !accel_i_vk_env_on("ACCEL_VULKAN_NO_PUSH_DESCRIPTORS");
    dev->spirv_minor = vk->api_version == 0 ? 5u : vk->api_version >= VK_MAKE_API_VERSION(0, 1, 3, 0) ? 6u
                     : vk->api_version >= VK_API_VERSION_1_2 ? 5u : 3u;
    accel_i_vk_load_global(&dev->vki);
    accel_i_vk_load_instance(&dev->vki, dev->instance);
    if (!dev->vki.GetDeviceProcAddr || !dev->vki.GetPhysicalDeviceQueueFamilyProperties ||
        !dev->vki.GetPhysicalDeviceProperties2) {
        dev->device = VK_NULL_HANDLE;
        accel_i_vk_device_free(dev);
        accel_i_log_to(&d.logger, ACCEL_LOG_ERROR,
                "accel_vulkan_device_adopt: get_instance_proc_addr does not resolve the instance's "
                "entry points");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    dev->vki.GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nfam, NULL);
    if (nfam > 32) nfam = 32;
    dev->vki.GetPhysicalDeviceQueueFamilyProperties(dev->phys, &nfam, fam);
    if (vk->queue_family >= nfam || !(fam[vk->queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT) ||
        vk->queue_index >= fam[vk->queue_family].queueCount) {
        dev->device = VK_NULL_HANDLE;
        accel_i_vk_device_free(dev);
        accel_i_log_to(&d.logger, ACCEL_LOG_ERROR,
                "accel_vulkan_device_adopt: queue family %u / index %u is not a compute queue of the device",
                vk->queue_family, vk->queue_index);
        return ACCEL_ERROR_UNSUPPORTED;
    }
    /* one VkQueue, the engine's: hwq[0] is it (compute and copy) */
    r = accel_i_vk_device_setup(dev, 1, false, vk->queue_family, false);
    if (r == ACCEL_OK && vk->queue_index != 0)
        dev->vk.GetDeviceQueue(dev->device, vk->queue_family, vk->queue_index, &dev->hwq[0].queue);
    if (r != ACCEL_OK) { accel_i_vk_device_free(dev); return r; }
    accel_i_debug_off(&dev->base, "accel_vulkan_device_adopt");
    if ((r = accel_i_trace_open(&dev->base, &d)) != ACCEL_OK) {   /* as accel_device_create */
        accel_device_destroy(&dev->base);
        return r;
    }
    *out = &dev->base;
    return ACCEL_OK;
}

/* ==== vulkan: recovery ==== */
/* accel_device_recover (see "Recovery" in the header). The core made every object stale, failed the
   signals (which released every device wait on their semaphores) and settled the walks. Here:
   1. vk_gen moves to the new generation, so no native call on an old object starts any more
      (accel_i_vk_enter), and those under way end;
   2. with the object list held (no free under way or starting, accel_i_objects_hold), the VkDevice
      goes idle (vkDeviceWaitIdle; at once when lost) and every native object of the old generation is
      destroyed and its handle cleared, so that a destroy of a stale object frees host memory only
      (and the imports of its buffer's memory into other devices, which other devices' work and lists
      may still run over: they go with the last stale buffer of that memory, accel_i_vk_block.stale);
   3. vkDestroyDevice, then a VkDevice made as the first was, its VkQueues and io objects.
   The batches that the old queues' entries held complete after the list is let go (their release may
   free objects, which waits for the list). */
static void accel_i_vk_buffer_forget(accel_i_vk_device* dev, accel_i_vk_buffer* b) {
    /* a view: the core's, no native part; a queue-memory handle: neither a range nor memory of its own
       (its VkBuffer is a lent root's: vulkan: queue-ordered memory), and its last release may be giving
       it back to the pool meanwhile (accel_i_qmem_late_keep, which stays listed): not touched */
    if (b->base.root || b->base.qmem) return;
    /* its memory freed (its block's next), its range kept taken (see accel_i_vk_block.stale) */
    if (!b->borrowed && (b->range || b->memory)) accel_i_vk_buffer_drop(dev, b, true);
    b->buffer = VK_NULL_HANDLE;
    b->memory = VK_NULL_HANDLE;
    b->base.mapped = NULL;
}
static void accel_i_vk_program_forget(accel_i_vk_device* dev, accel_i_vk_program* p) {
    for (uint32_t i = 0; i < p->pipe_count; i++)
        dev->vk.DestroyPipeline(dev->device, p->pipes[i].pipeline, NULL);
    p->pipe_count = 0;
    if (p->layout) dev->vk.DestroyPipelineLayout(dev->device, p->layout, NULL);
    if (p->set_layout) dev->vk.DestroyDescriptorSetLayout(dev->device, p->set_layout, NULL);
    if (p->module) dev->vk.DestroyShaderModule(dev->device, p->module, NULL);
    p->layout = VK_NULL_HANDLE;
    p->set_layout = VK_NULL_HANDLE;
    p->module = VK_NULL_HANDLE;
}
static void accel_i_vk_signal_forget(accel_i_vk_device* dev, accel_i_vk_signal* s) {
    if (s->owned && s->sem) {
        dev->vk.DestroySemaphore(dev->device, s->sem, NULL);
        dev->retirable--;   /* its room on the retirement list (submit_lock held) */
    }
    s->sem = VK_NULL_HANDLE;
}
static void accel_i_vk_list_forget(accel_i_vk_device* dev, accel_commands* c) {
    accel_i_vk_list* l = (accel_i_vk_list*)c->native;
    if (!l) return;
    if (l->pool) dev->vk.DestroyCommandPool(dev->device, l->pool, NULL);   /* its command buffers too */
    if (l->dpool) dev->vk.DestroyDescriptorPool(dev->device, l->dpool, NULL);
    if (l->staging) accel_i_vk_drop_buffer(dev, l->staging, l->staging_mem);
    l->pool = VK_NULL_HANDLE;
    l->dpool = VK_NULL_HANDLE;
    l->staging = VK_NULL_HANDLE;
    l->staging_mem = VK_NULL_HANDLE;
}
/* A queue's entries (their batches wait in q->forgotten), command buffers, pool and completion
   semaphore. */
static void accel_i_vk_queue_forget(accel_i_vk_device* dev, accel_i_vk_queue* q) {
    accel_i_batch* batches = NULL;
    accel_i_vk_entry* e;
    accel_i_spin_lock(&q->list_lock);
    e = q->first;
    q->first = q->last_entry = NULL;
    accel_i_spin_unlock(&q->list_lock);
    while (e) {
        accel_i_vk_entry* next = e->next;
        accel_i_vk_batches_join(&batches, accel_i_vk_entry_empty(q, e));
        accel_i_vk_entry_spare(q, e);
        e = next;
    }
    accel_i_spin_lock(&q->list_lock);
    q->free_cb_count = 0;   /* they go with the pool */
    accel_i_vk_batches_join(&q->forgotten, batches);
    accel_i_spin_unlock(&q->list_lock);
    if (q->pool) dev->vk.DestroyCommandPool(dev->device, q->pool, NULL);
    if (q->done) accel_i_vk_sem_retire_locked(dev, q->done);   /* recover: submit_lock held */
    q->pool = VK_NULL_HANDLE;
    q->done = VK_NULL_HANDLE;
    q->hwq = NULL;   /* the VkQueues' users are counted anew */
}
/* Step 2 for every object of the old generation (the list held); returns the queues it holds a
   reference to (through recover_next), whose forgotten batches it completes once the list is let go
   (a queue it cannot hold is being destroyed: its destroy completes them). */
static accel_i_vk_queue* accel_i_vk_forget_all(accel_i_vk_device* dev) {
    accel_i_vk_queue* held = NULL;
    for (accel_i_object* o = dev->base.objects; o; o = o->next) {
        switch (o->kind) {
        case ACCEL_I_BUFFER: accel_i_vk_buffer_forget(dev, (accel_i_vk_buffer*)(void*)o); break;
        case ACCEL_I_PROGRAM: accel_i_vk_program_forget(dev, (accel_i_vk_program*)(void*)o); break;
        case ACCEL_I_SIGNAL: accel_i_vk_signal_forget(dev, (accel_i_vk_signal*)(void*)o); break;
        case ACCEL_I_COMMANDS: accel_i_vk_list_forget(dev, (accel_commands*)(void*)o); break;
        case ACCEL_I_QUEUE: {
            accel_i_vk_queue* q = (accel_i_vk_queue*)(void*)o;
            accel_i_vk_queue_forget(dev, q);
            if (accel_i_try_retain(o)) { q->recover_next = held; held = q; }
            break;
        }
        }
    }
    atomic_store(&dev->imports_closing, 1u);   /* other devices' memory and signals imported here */
    accel_i_imports_drop_into(&dev->base);
    atomic_store(&dev->imports_closing, 0u);
    accel_i_vk_blocks_free(dev);   /* the buffers gave their ranges back above */
    accel_i_vk_retired_free_locked(dev);
    if (dev->io_pool) dev->vk.DestroyCommandPool(dev->device, dev->io_pool, NULL);
    if (dev->io_sem) dev->vk.DestroySemaphore(dev->device, dev->io_sem, NULL);
    dev->io_pool = VK_NULL_HANDLE;
    dev->io_sem = VK_NULL_HANDLE;
    dev->io_val = 0;
    return held;
}
/* Step 3 after vkCreateDevice: the entry points, the VkQueues (their locks and families stay, their
   users start from none, as at create), the io objects. */
static accel_result accel_i_vk_device_reopen(accel_i_vk_device* dev) {
    uint32_t n = dev->open_compute_n + (dev->open_io_own ? 1u : 0u) + (dev->open_copy_own ? 1u : 0u);
    const char* missing = accel_i_vk_load_device(&dev->vki, &dev->vk, dev->device);
    if (missing)
        return accel_i_fail(&dev->base, ACCEL_ERROR_UNAVAILABLE, "vulkan: the device lacks %s", missing);
    for (uint32_t i = 0; i < n; i++) {
        accel_i_vk_hwq* h = &dev->hwq[i];
        bool copy = dev->open_copy_own && i == n - 1u;
        dev->vk.GetDeviceQueue(dev->device, h->family, copy ? 0 : i, &h->queue);
        h->users = 0;
        h->owned = false;
    }
    if (!dev->open_io_own && !dev->map_device) dev->hwq[0].users = 1;
    return accel_i_vk_io_make(dev);
}
/* Every VkQueue's lock held: vkDeviceWaitIdle's external synchronization. */
static void accel_i_vk_idle(accel_i_vk_device* dev) {
    for (uint32_t i = 0; i < dev->hwq_inited; i++) accel_i_mutex_lock(&dev->hwq[i].lock);
    dev->vk.DeviceWaitIdle(dev->device);
    for (uint32_t i = 0; i < dev->hwq_inited; i++) accel_i_mutex_unlock(&dev->hwq[i].lock);
}
static accel_result accel_i_vk_device_recover(accel_device* d) {
    accel_i_vk_device* dev = accel_i_vk_dev(d);
    accel_i_vk_queue* held;
    accel_result r;
    VkResult vr;
    atomic_store(&dev->recovering, 1u);
    atomic_store(&dev->vk_gen, atomic_load(&d->generation));
    accel_i_inside_drain(&dev->native_users);
    accel_i_objects_hold(d);
    accel_i_mutex_lock(&dev->io_lock);
    accel_i_mutex_lock(&dev->submit_lock);
    accel_i_vk_idle(dev);
    held = accel_i_vk_forget_all(dev);
    dev->vk.DestroyDevice(dev->device, NULL);
    dev->device = VK_NULL_HANDLE;
    vr = accel_i_vk_device_open(dev);
    if (vr != VK_SUCCESS) r = accel_i_vk_fail(dev, vr, "vkCreateDevice", "accel_device_recover");
    else r = accel_i_vk_device_reopen(dev);
    accel_i_mutex_unlock(&dev->submit_lock);
    accel_i_mutex_unlock(&dev->io_lock);
    accel_i_spin_unlock(&d->objects_lock);
    while (held) {   /* the old queues' work: released (its signals read failed) */
        accel_i_vk_queue* q = held;
        held = q->recover_next;
        accel_i_vk_forgotten_complete(q);
        accel_i_release(q);
    }
    atomic_store(&dev->recovering, 0u);
    if (r == ACCEL_OK)
        accel_i_log(d, ACCEL_LOG_INFO, "accel_device_recover: Vulkan device %s: a new VkDevice",
                    d->info.name);
    return r;
}

/* ==== vulkan: backend table ==== */
/* The batch walk's slots, in the order of accel_i_walk_ops. */
static const accel_i_walk_ops accel_i_vk_walk = {
    accel_i_vk_wait_on_device,          /* wait_on_device */
    accel_i_vk_segment_submit,          /* segment_submit */
    accel_i_vk_batch_submitted,         /* batch_submitted */
    accel_i_vk_queue_drain,             /* queue_drain */
    accel_i_vk_signal_publish,          /* signal_publish: the timeline semaphore */
    NULL,                               /* queue_poll: completed segments are reclaimed at submit and
                                           finish */
    false,                              /* indirect_on_host: vkCmdDispatchIndirect reads the counts */
    NULL                                /* signal_settle: the value is the timeline semaphore's */
};
/* Slots in the order of struct accel_backend (positional: designated initialisers need C++20). */
static const accel_backend accel_i_vk_backend_table = {
    "vulkan",                           /* name */
    false,                              /* shares_host_memory */
    false,                              /* fills_any_byte: vkCmdFillBuffer */
    false,                              /* pinned_host_buffers: host-visible memory, not pinned for
                                           other devices */
    accel_i_vk_device_count,            /* device_count */
    accel_i_vk_device_create,           /* device_create */
    accel_i_vk_device_destroy,          /* device_destroy */
    accel_i_vk_buffer_create,           /* buffer_create */
    accel_i_vk_buffer_free,             /* buffer_free */
    accel_i_vk_buffer_io,               /* buffer_io */
    accel_i_vk_program_create,          /* program_create */
    accel_i_vk_program_free,            /* program_free */
    accel_i_vk_signal_create,           /* signal_create */
    accel_i_vk_signal_free,             /* signal_free */
    accel_i_vk_signal_value,            /* signal_value */
    accel_i_vk_signal_raise,            /* signal_raise: the host word */
    accel_i_vk_signal_wait_many,        /* signal_wait_many */
    accel_i_vk_queue_create,            /* queue_create */
    accel_i_vk_queue_destroy,           /* queue_destroy */
    accel_i_vk_queue_submit,            /* queue_submit: checks, plan, then the core's walk */
    accel_i_walker_wait_idle,           /* queue_wait_idle: the core's worker, then queue_drain */
    accel_i_walker_describe,            /* queue_describe */
    &accel_i_vk_walk,                   /* walk */
    accel_i_vk_commands_build,          /* commands_build: secondary command buffers */
    accel_i_vk_commands_free,           /* commands_free */
    accel_i_vk_device_recover,          /* device_recover: a new VkDevice (vulkan: recovery) */
    false,                              /* recover_whole: each VkDevice recovers alone */
    accel_i_vk_peer_copy,               /* peer_copy: imported memory (vulkan: peer copies) */
    accel_i_vk_peer_waits,              /* peer_waits: another VkDevice's signals, imported */
    NULL,                               /* peer_frees: an import keeps the memory past its owner's recover */
    &accel_i_vk_share,                  /* share: memory exported as opaque fds, imported (peer copies) */
    NULL                                /* device_close */
};
ACCEL_API const accel_backend* accel_vulkan_backend(void) { return &accel_i_vk_backend_table; }

/* ==== vulkan: interop ==== */
static bool accel_i_vk_is(const accel_device* d) { return d && d->backend == &accel_i_vk_backend_table; }
/* A getter's look at o's native handles, which a recover takes away (on another thread, maybe): o's
   device, entered (accel_i_vk_leave after the look), where o is a live Vulkan object; else NULL. */
static accel_i_vk_device* accel_i_vk_look(const accel_i_object* o) {
    accel_i_vk_device* dev = o && accel_i_vk_is(o->device) ? accel_i_vk_dev(o->device) : NULL;
    return dev && accel_i_vk_enter(dev, o) ? dev : NULL;
}
ACCEL_API accel_vk_buffer accel_vulkan_buffer_handle(accel_buffer* b) {
    accel_i_vk_device* dev = accel_i_vk_look(b ? &b->obj : NULL);
    accel_vk_buffer h = dev ? ((accel_i_vk_buffer*)accel_i_buffer_root(b))->buffer : VK_NULL_HANDLE;
    if (dev) accel_i_vk_leave(dev);
    return h;
}
ACCEL_API accel_vk_semaphore accel_vulkan_signal_semaphore(accel_signal* s) {
    accel_i_vk_device* dev = accel_i_vk_look(s ? &s->obj : NULL);
    accel_vk_semaphore h = dev ? ((accel_i_vk_signal*)s)->sem : VK_NULL_HANDLE;
    if (dev) accel_i_vk_leave(dev);
    return h;
}
ACCEL_API accel_vk_queue accel_vulkan_queue_handle(accel_queue* q, uint32_t* family) {
    accel_i_vk_device* dev = accel_i_vk_look(q ? &q->obj : NULL);
    const accel_i_vk_hwq* h = dev ? ((accel_i_vk_queue*)q)->hwq : NULL;
    accel_vk_queue vq = h ? h->queue : VK_NULL_HANDLE;
    if (family) *family = h ? h->family : 0;
    if (dev) accel_i_vk_leave(dev);
    return vq;
}
/* The checks both wrap calls share; ACCEL_OK when d can take the engine's object. */
static accel_result accel_i_vk_wrap_ok(accel_device* d, bool handle, void* out, const char* fn) {
    if (!d || !out) return accel_i_invalid(d, fn, !d ? "d is NULL" : "out is NULL");
    if (!accel_i_vk_is(d))
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT, "%s: device %p%s%s%s is not a Vulkan device", fn,
                            ACCEL_I_DEVICE_LABEL(d));
    if (accel_i_lost(d)) return ACCEL_ERROR_DEVICE_LOST;
    if (!handle) return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT, "%s: the handle is VK_NULL_HANDLE", fn);
    return ACCEL_OK;
}
ACCEL_API accel_result accel_vulkan_buffer_wrap(accel_device* d, accel_vk_buffer buffer,
                                                accel_vk_device_size size, accel_buffer** out) {
    accel_i_vk_buffer* b;
    accel_result r;
    if (out) *out = NULL;
    VkMemoryRequirements req;
    if ((r = accel_i_vk_wrap_ok(d, buffer != VK_NULL_HANDLE, out, "accel_vulkan_buffer_wrap")) != ACCEL_OK)
        return r;
    if (size == 0 || size > (accel_vk_device_size)SIZE_MAX)
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT, "accel_vulkan_buffer_wrap: size %llu",
                            (unsigned long long)size);
    /* Vulkan cannot tell a buffer's size; its memory requirement is that size rounded up to an
       alignment: a size above it is surely wrong (a command would run past the buffer) */
    accel_i_vk_dev(d)->vk.GetBufferMemoryRequirements(accel_i_vk_dev(d)->device, buffer, &req);
    if (size > req.size)
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                "accel_vulkan_buffer_wrap: size %llu is larger than the VkBuffer (%llu bytes of memory)",
                (unsigned long long)size, (unsigned long long)req.size);
    b = (accel_i_vk_buffer*)accel_i_dev_alloc(d, sizeof *b);
    if (!b) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_vulkan_buffer_wrap: out of host memory");
    memset((void*)b, 0, sizeof *b);
    b->buffer = buffer;
    b->borrowed = true;
    b->base.size = (size_t)size;
    b->base.memory = ACCEL_MEMORY_DEVICE;
    accel_i_object_init(&b->base.obj, d, ACCEL_I_BUFFER, "wrapped buffer");
    *out = &b->base;
    return ACCEL_OK;
}
ACCEL_API accel_result accel_vulkan_signal_wrap(accel_device* d, accel_vk_semaphore timeline,
                                                accel_signal** out) {
    accel_i_vk_device* dev;
    accel_i_vk_signal* s;
    uint64_t now = 0;
    VkResult vr;
    accel_result r;
    if (out) *out = NULL;
    if ((r = accel_i_vk_wrap_ok(d, timeline != VK_NULL_HANDLE, out, "accel_vulkan_signal_wrap")) != ACCEL_OK)
        return r;
    dev = accel_i_vk_dev(d);
    if ((vr = dev->vk.GetSemaphoreCounterValue(dev->device, timeline, &now)) != VK_SUCCESS)
        return accel_i_vk_fail(dev, vr, "vkGetSemaphoreCounterValue",
                               "accel_vulkan_signal_wrap (a timeline semaphore?)");
    s = (accel_i_vk_signal*)accel_i_dev_alloc(d, sizeof *s);
    if (!s) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_vulkan_signal_wrap: out of host memory");
    memset((void*)s, 0, sizeof *s);
    atomic_init(&s->submitted, now);   /* the engine promised at least what it reached */
    if (!accel_i_event_init(&s->host, 0)) {
        accel_i_dev_free(d, s, sizeof *s);
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_vulkan_signal_wrap: mutex/condition init failed");
    }
    s->sem = timeline;
    s->owned = false;
    /* the engine may signal any value: debug hang reports must not call a wait on it unreachable, and
       a destroy of d must not fail it as an orphan that nobody can set (core: several devices): that
       raised the engine's semaphore under it; other devices' queues waiting on it wait for the engine */
    atomic_init(&s->base.promised, ACCEL_SIGNAL_MAX);
    atomic_init(&s->base.recorded, ACCEL_SIGNAL_MAX);
    atomic_init(&s->base.foreign, 1u);
    accel_i_object_init(&s->base.obj, d, ACCEL_I_SIGNAL, "wrapped signal");
    *out = &s->base;
    return ACCEL_OK;
}

#endif /* threads and dlopen */
#endif /* ACCEL_VULKAN_IMPLEMENTATION */

/*
------------------------------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the accel authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction, including
without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is furnished to do so, subject to the
following conditions:

The above copyright notice and this permission notice shall be included in all copies or substantial
portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT NOT
LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO
EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER
IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE
USE OR OTHER DEALINGS IN THE SOFTWARE.
------------------------------------------------------------------------------------------------------
*/
