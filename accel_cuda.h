/* accel_cuda.h — the CUDA backend of accel: NVIDIA GPUs through the CUDA driver API, loaded at run time.
   Single-header C library; needs accel.h. Version 0.2.0. MIT license (end of file).

   ==== Quick start =============================================================================

   accel.h's quick start with the CUDA backend tried first; what differs: the include, the CUDA C
   source, the device by accel_device_create_any, .cuda_source in the program desc.

   ---- begin quickstart_cuda.c (tests/check_quickstart.sh compiles and runs it as C and C++) ----
       #define ACCEL_IMPLEMENTATION           // in exactly one .c or .cpp file
       #include "accel.h"
       #define ACCEL_CUDA_IMPLEMENTATION      // the same file, after accel.h
       #include "accel_cuda.h"
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

       // The same kernel in CUDA C, compiled at run time by NVRTC (no toolkit needed to build).
       static const char saxpy_cuda[] =
           "extern \"C\" __global__ void saxpy(float* y, const float* x, unsigned a_bits, unsigned n) {\n"
           "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    if (i < n) y[i] = __uint_as_float(a_bits) * x[i] + y[i];\n"
           "}\n";

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
           const accel_backend* order[2] = { accel_cuda_backend(), accel_cpu_backend() };

           for (int i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f; }
           memcpy(&constants[0], &a, sizeof a);
           constants[1] = n;

           memset(&dd, 0, sizeof dd);
           dd.debug = true;                          // while developing: hang reports, checks (see below)
           CHECK(accel_device_create_any(order, 2, &dd, &dev));     // CUDA, else the CPU (the log says why)
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
           pd.cuda_source = saxpy_cuda;              // or .ptx / .cubin
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
   ---- end quickstart_cuda.c ----

   Build: cc -std=gnu11 -I. app.c -o app -lpthread -lm -ldl (C++: c++ -std=c++11 -I. -x c++ app.c -o app
   -lpthread -ldl). No CUDA toolkit, no CUDA headers and no -lcuda are needed: the driver (libcuda.so.1 /
   nvcuda.dll) is opened at run time, and NVRTC (libnvrtc.so.*) only when a program brings CUDA C source.
   Without a driver the CUDA backend reports ACCEL_ERROR_UNAVAILABLE with the reason in the log (a
   warning), and accel_device_create_any goes on to the CPU: one binary runs with or without a GPU.

   ==== What it does NOT do =====================================================================
   - Without stream memory operations (the event-ring mode, see "Signals and signal points") a queue
     waits on the GPU only for a point of its own device's queues (cuStreamWaitEvent on its event);
     for anything else not reached at submit time (a host raise, another device's signal) it waits on
     the host.
   - No registration of CPU-backend signal words with cuMemHostRegister: waits on foreign signals are
     host waits.
   - No GPU waits between two GPUs: a queue's wait on a signal of another CUDA device (not the same GPU)
     is gated on the host (copies between them go GPU to GPU where peer access is on, else staged: see
     accel.h, "Several devices").
   - No host_ptr wrapping (ACCEL_ERROR_UNSUPPORTED), no mapping of DEVICE buffers.
   - No ACCEL_NO_THREADS, WASI or Emscripten support: there the backend reports UNAVAILABLE.

   ==== Config ==================================================================================
   | macro / variable            | effect                                                            |
   |-----------------------------|-------------------------------------------------------------------|
   | ACCEL_CUDA_IMPLEMENTATION   | compile the backend into this translation unit (with             |
   |                             | ACCEL_IMPLEMENTATION, after accel.h)                             |
   | env ACCEL_CUDA_LIBRARY      | path of the driver library to open instead of the default search |
   | env ACCEL_NVRTC_LIBRARY     | path of the NVRTC library to open instead of the default search  |
   | env ACCEL_CUDA_NO_MEMOPS=1  | use the event ring for queue signal points even where the device |
   |                             | has 64-bit stream memory operations (to test the fallback)       |
   | env ACCEL_CUDA_NO_EXPORT=1  | buffers never take exportable memory (cuMemCreate): a Vulkan     |
   |                             | queue's copies of them are staged (read at device create)        |
   | env ACCEL_CUDA_REPLAY=launches | recorded lists replay as pre-resolved launches, not as CUDA    |
   |                             | graphs (read when a list is recorded; bench/cuda.c compares both) |
   | accel_cuda_set_library()    | the same overrides from code (take precedence over the env)      |
   | ACCEL_CUDA_MIN_DRIVER       | oldest driver accepted, as CUDA_VERSION (default 11070: CUDA 11.7) |
   | ACCEL_CUDA_POLL_MAX_NS      | longest pause between two polls of in-flight work, and the       |
   |                             | queue worker's first backstop period (default 250 us; it doubles  |
   |                             | up to 8 times that while the worker is only the backstop)         |
   | ACCEL_CUDA_MAX_BEHIND       | stream operations a queue enqueues behind a GPU wait that the     |
   |                             | host has yet to release (default 768; see accel_i_cu_behind)      |

   Default search: Linux libcuda.so.1, then libcuda.so (a library found under a `stubs/` directory is
   refused: that is the toolkit's link stub, not a driver); Windows nvcuda.dll. NVRTC: libnvrtc.so.13,
   .12, .11.2, libnvrtc.so, then /usr/local/cuda/lib64/libnvrtc.so (Windows nvrtc64_130_0.dll, ...).

   ==== Run-time loading ========================================================================
   The driver is loaded once per process, under a lock, and kept while any CUDA device lives (and after:
   libcuda is never unloaded, it does not support it). Only cuGetProcAddress is looked up by name
   (cuGetProcAddress_v2 of CUDA 12, else the 11.3 one); every other entry point is resolved through it
   at the ABI version that the ACCEL_I_CU_FUNCS X-macro table records, into members of one struct
   (cu.Init, cu.LaunchKernel, ...). Asking by base name and version is what keeps the versioned
   functions right: e.g. cuStreamWriteValue64 at 11070 is the "_v2" memory operation that CUDA 11.7
   added under the name cuStreamWriteValue64_v2 and CUDA 12.0 renamed to cuStreamWriteValue64.
   Not available, each with its own log message and ACCEL_ERROR_UNAVAILABLE:
     - the library is missing (or the override path cannot be opened);
     - the library is the toolkit's stub (found under stubs/, or cuInit returns 34,
       CUDA_ERROR_STUB_LIBRARY);
     - the driver is too old (cuDriverGetVersion below ACCEL_CUDA_MIN_DRIVER, or an entry point is
       missing);
     - no device (cuInit returns CUDA_ERROR_NO_DEVICE, the count is 0, or device_index is too high).

   ==== Devices and memory ======================================================================
   A device is the primary context of one CUDA device (shared with the CUDA runtime and other libraries
   in the process). accel_device_info: name, total memory, compute capability (90 for sm_90), group
   limits from the device attributes, GPU_INTEGRATED / GPU_DISCRETE, separate_copy_queue = true,
   formats PTX | CUBIN, plus CUDA_SOURCE when NVRTC can be loaded.
   ACCEL_MEMORY_DEVICE = cuMemAlloc (zeroed at create); ACCEL_MEMORY_HOST = pinned, device-mapped host
   memory (cuMemHostAlloc PORTABLE | DEVICEMAP): accel_buffer_map returns it, kernels use it through its
   device pointer, and it stays mapped for the buffer's life. accel_buffer_read/write on DEVICE buffers
   copy through a private stream of the device and wait for it.
   Queue-ordered memory (accel_queue_alloc / accel_queue_free) is taken where the alloc's point is
   enqueued on the queue's stream and given back where the free's point is: DEVICE memory by
   cuMemAllocFromPoolAsync / cuMemFreeAsync from a pool of accel's own where the device has memory
   pools (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED; the pool keeps freed memory, release threshold
   UINT64_MAX), else (and HOST memory) from accel's own pool of cuMemAlloc'd / pinned buffers. Freed
   memory is reused at once by later allocs on the same queue; another queue reuses it once the free
   has run on the device (the driver cannot see accel's stream waits), so two queues that free each
   other's memory far ahead of the device hold more of it. Host access (read, write, map) is refused
   until the walk enqueued the alloc's point, not until the stream passed it: where a wait before the
   point runs on the GPU, order host access after the point with a signal, as the contract asks (before
   it, the memory may still be an earlier buffer's of the queue).

   ==== Programs ================================================================================
   A program desc may carry cubin/fatbin, PTX and CUDA C source; they are tried in that order and the
   first that loads wins. PTX is JIT-compiled by the driver (its error log goes to the logger).
   CUDA C is compiled by NVRTC for the device's own architecture (a cubin for sm_XY when NVRTC knows
   it, else PTX for the newest compute_XY it knows below the device), with the compiler log in the
   logger and ACCEL_ERROR_COMPILE on failure; the result is cached per device by source text, so the
   same source compiles once per device. The kernel is looked up by desc->name: declare it
   `extern "C"`. Its parameters are the buffers' device pointers in exec order, then the 32-bit
   constants (4 bytes each). accel_cuda_compile_source() runs the same NVRTC path without a device.

   ==== Queues ==================================================================================
   Each queue owns one non-blocking CUDA stream (COPY queues too, so they overlap with compute on the
   copy engines) and one worker thread (accel.h's, "Waits on the device"). accel_queue_submit turns the
   batch into stream work on the calling thread, segment by segment, as far as its waits allow (all of
   it, unless a wait is gated or the queue's worker already holds earlier work):
     exec    -> cuLaunchKernel (grid = ceil(global / local))
     copy    -> cuMemcpyDtoDAsync, cuMemcpyHtoDAsync or cuMemcpyDtoHAsync by the buffers' memory (a
                HOST buffer's pinned pointer); host to host, a small copy kernel of accel's (PTX, loaded
                at the first such copy) that reads and writes both through unified addressing: the
                driver runs a host-to-host cuMemcpy*Async on the CPU once the stream gets there, so the
                call blocks until then, for ever behind a GPU wait the host has yet to release
     fill    -> cuMemsetD32Async
     update  -> the data (copied at record time) goes into pinned staging memory owned by the batch,
                then cuMemcpyHtoDAsync (into a HOST buffer: the copy kernel); the staging lives until
                the batch completes (then the queue keeps one block for the next batch's updates)
     barrier -> nothing: a stream runs each command after the previous one completed, and the signal
                points below fence the stream's writes for the host and other queues
     signal  -> a signal point (below)
     wait    -> nothing when the signal is already reached; when it is failed the rest of the batch is
                dropped and every signal it would have signalled fails with the same value. A wait on
                a CUDA signal of the same device, where the device has stream memory operations, runs
                on the GPU: cuStreamWaitValue64 (GEQ) on the progress word of the queue whose signal
                point first promised the value (GPU to GPU, no host involved; nothing when that is the
                queue's own point, earlier in its stream), or else on the signal's mirror word, which
                every host raise of the signal reaches (accel_signal_set, a failure, a point the host
                reaped), and which the GPU writes itself at a point that is behind a wait for the host
                (GPU to GPU again: see "Signals and signal points"). Without stream memory
                operations (the event ring) such a wait runs on the GPU when a signal point of the
                device's queues promised the value, or of another accel device's queues on the same
                CUDA device: cuStreamWaitEvent on that point's event (nothing when it is the queue's
                own). Any other wait (another GPU's or backend's signal, a host-raised value in the
                event-ring mode) is gated: the queue's worker waits on the host, then enqueues the
                rest.
   A stream holds only so much work not started (a GPU's launch queue, about a thousand entries),
   and the work behind a GPU wait that the host must release does not start before the host does:
   once ACCEL_CUDA_MAX_BEHIND (768) stream operations (launches, copies, fills, waits, signal
   points' memory writes: each enqueuing driver call, a batch of writes once) wait behind the oldest
   such wait not known released, the rest (of the batch, and later batches) goes to the worker, so
   accel_queue_submit does not block in the driver however long the batch. A native step
   (accel_queue_native) may enqueue any number of operations, so it waits for no such wait to be
   pending (on the worker, which then runs it). A wait on a Vulkan device's semaphore (cuda: waits on
   Vulkan signals) is not tracked as one: work behind such a wait whose value the host has yet to set
   may block the caller in the driver once the stream is full. Such waits are tracked
   one by one, up to 64 of them; past that the newest entry takes in the later ones and is released
   with the point after the last it took in, so in a long pipeline of them the budget frees as the
   GPU passes each (not only once the stream has drained). The worker does not block there either:
   it reaps the queue's points (which may be exactly what releases the wait: a pipeline of two
   queues whose waits watch each other's mirrors) and enqueues more as the waits are released. A
   replay is one command, so a list replayed as launches (below) of more than about a thousand
   commands may still block the caller there. Failure after hand-off follows accel.h: the work
   behind a GPU wait runs even when its signal fails meanwhile, and what it signals reads failed
   with the same reason.
   Releases that wait for the whole device (cuMemFree, cuMemFreeHost, cuModuleUnload; graph
   destruction too) are held in a list while any GPU wait is pending on ANY CUDA device of the process
   (whether a release in one context waits for another context's streams is not known; pinned host
   memory is every context's), and run when the last one's point is reached (or when the last accel
   device of a CUDA device is destroyed, with nothing pending): each of them blocks while another stream
   sits in cuStreamWaitValue64, holding a driver lock that stops other threads' enqueues meanwhile. So
   in a pipeline that always has a GPU wait pending (a frame loop that submits frame n + 1, whose first
   command waits for the host, before it opens frame n) the memory of buffers destroyed meanwhile comes
   back only when the pipeline drains: destroy them after a point where no such wait is pending (a
   finish), or keep and reuse them (accel_queue_alloc's pool reuses its memory without any release).
   A thread that waits for a signal (accel_signal_wait*) never runs such a release itself, even where
   it is what finds the work done: the last reference to a buffer destroyed while in use goes with the
   batch, and its cuMemFree would keep the waiter until the whole device is idle, long after the value
   it waited for. A worker runs it at the end of its next reap (within about 2 ms while its queue has
   work in flight), accel_queue_finish runs it before it returns (unless a GPU wait is pending, as
   above), and a buffer create that finds the device out of memory runs such held releases first and
   tries again.

   ==== Recorded command lists ==================================================================
   accel_queue_record_end makes a CUDA graph of the list: kernel, memset and memcpy nodes (unified
   pointers, so a patched buffer may be of either memory kind), chained in recording order, and one
   instance of it. A replay sets the parameters of the nodes it patches, and of the nodes the
   instance's previous launch patched (to restore them), with cuGraphExec*NodeSetParams, then calls
   cuGraphLaunch on the queue's stream. The driver orders each launch of an instance behind its
   previous launch, on whichever stream that was, so an instance belongs to one queue (up to 4 per
   list, made when first needed; a queue's instance goes to another once that queue is destroyed):
   shared, a replay waiting on the device for a later replay on another queue would hang both. A queue
   that finds all 4 owned by live queues issues the pre-resolved launches below. A replay that
   copies host to host (an update into a HOST buffer, a copy between two) while a GPU wait is pending
   on the device issues the pre-resolved launches below instead: such a memcpy node runs on the CPU
   once the stream gets there, so cuGraphLaunch would block behind the wait; the launches copy with
   accel's copy kernel. Updates read their data from pinned memory the list owns. Without the graph
   entry points (they are optional), or with ACCEL_CUDA_REPLAY=launches, a replay issues the list's
   pre-resolved launches and copies instead.
   Why graphs by default: one cuGraphLaunch of 1,000 kernels costs about a quarter of a launch loop's
   time per kernel; the GPU figures of bench/cuda.c 6-8 decide for short lists.

   ==== Indirect execs ==========================================================================
   CUDA has no indirect launch: accel_queue_exec_indirect reads the counts on the host where the
   command's turn comes. It is a host step of the batch walk, like accel_queue_host_call: the segment
   before it ends, the queue's worker waits until the queue's work drained (its last signal point
   reached), reads the 12 bytes (device memory: a copy on the device's I/O stream and its synchronize;
   HOST memory: directly), checks them against the limits, and launches the kernel with that grid as the
   first command of the next segment (nothing when a count is 0 or the counts are over the limits). So
   each costs a device round trip and a worker wake-up, as a host-gated wait does, and the stream idles
   meanwhile. The other forms are not correct for every program or need what accel does not load: a
   launch of the largest grid that returns early past the counts changes gridDim and needs the kernel's
   cooperation; a device-side launch or graph update needs the device runtime (cudadevrt) linked into
   the program's module; conditional graph nodes gate on a value but cannot size a grid. A command list
   holding an indirect exec replays in the core's generic form (its commands recorded anew per replay),
   not as a graph. bench/cuda.c figure 13 measures an indirect exec against a direct one.

   ==== Signals and signal points ===============================================================
   A CUDA signal is accel.h's host signal (a 64-bit timeline word with the wake-up machinery: spin, then
   sleep on a condition variable): host set and fail are atomic max / final failure, exactly as on the
   CPU. The GPU never writes a signal word, because a stream memory write stores a value instead of a
   max: a late GPU write could lower a signal that the host raised, or overwrite a failure. Instead:
   - each queue has a progress word in pinned, device-mapped host memory. A signal point writes the
     queue's next sequence number into it with cuStreamWriteValue64 (which fences all earlier work of
     the stream), and the host turns reached points into signal raises in order. When the device lacks
     64-bit stream memory operations (CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 0) a signal
     point records an event instead, from a ring of events keyed by sequence number (the host writes
     into the progress word what it found reached, and a point's apply what the stream waited for
     before it: see "cuda: GPU waits in the event-ring mode"). A signal point with
     no GPU work since the previous one shares its sequence number (no GPU round trip);
   - each signal keeps its last 16 points (progress word, sequence number, value): a GPU wait for v
     watches the first of them with a value >= v (waiting for a later one could wait on work that itself
     waits for the waiting queue); when that one left the ring, or sits behind a GPU wait for a
     host-raised value not reached yet (v may then come by another route first: a host set, another
     queue's point; the host may wait for the waiter before it releases the point), it watches the
     mirror (so a failure of the signal releases it at once: after a failure upstream of that point,
     the work behind the wait may then run beside the held work, not after it; on Vulkan it runs after);
   - each signal has a mirror word (pinned, device-mapped) that every host raise raises to the maximum; a
     failure writes ACCEL_SIGNAL_MAX (cuStreamWaitValue64's GEQ compares (int64_t)(*addr - value) >= 0, so a
     word with bit 63 set would read as below every value). A signal point enqueued behind a GPU wait for a
     host-raised value (so its waiters watch the mirror, above) also has the GPU write the mirror, just before
     the point's progress write (both in one cuStreamBatchMemOp where the driver has it: one driver call per
     point, as a raw stream's event record), so that a pipeline behind a host gate (a frame loop whose first
     queue waits for the host) runs queue to queue on the GPU instead of a host round trip per hop (a wait for
     a point that left the ring still goes through the host). So does a point of a signal that a GPU wait on
     its mirror may still wait for (the signal's mirror_wanted, the largest value such a wait asked for, above
     the mirror): a wait enqueued before any point promised its value (another thread's queue promises it
     later) is released GPU to GPU too. The wait sets mirror_wanted and reads the marks, the point is noted
     and reads mirror_wanted, both under the signal's point_lock, so one sees the other; a point whose mark
     such a wait missed gets the mirror write after its progress write, and a second progress write after
     that. That write stores: where the host raised the signal past it meanwhile, the host raises the mirror
     again when it applies the point (a waiter that read the lower value waits until then). Not while
     timestamps are pending or the device is traced (the host must go first there).
   Progress and mirror words come from blocks of 512, a 64-byte line each (32 KiB of pinned memory a
   block), kept until the device is destroyed (a stream may still read a word after its queue or signal
   is gone; a reused progress word counts on from its value, and only queues reuse progress words).
   Reached points are applied (reaped) by every thread that waits on a CUDA signal or finishes a queue,
   so a waiter sees its value as soon as it polls: while work is in flight it polls every 1/32 of the
   time waited so far (at least 0.25 us, at most ACCEL_CUDA_POLL_MAX_NS), so noticing a completion late
   adds at most ~3% to a wait; in between it reads its signals' host words and mirrors (a value the GPU
   wrote to a mirror is settled into the host word at once), after 5 us yielding its CPU between reads
   (what it waits for may need that CPU, as on a host with few cores), and after 2 ms
   (ACCEL_I_CU_YIELD_NS) it sleeps through each slice instead (a wait for a long kernel takes a few
   percent of a core, not all of it). Reaping reads words and makes no driver call (the event ring's
   queries, a timestamp, a release excepted). The
   queue's worker is the backstop (for releases, threads that only read accel_signal_value, a lost
   device): with points in flight it reaps after ACCEL_CUDA_POLL_MAX_NS,
   then after twice the last pause each time, up to 8 times ACCEL_CUDA_POLL_MAX_NS (2 ms by default:
   at 250 us, a two-queue chain woke the two workers once every 30 steps on the mock), and keeps
   reaping so until nothing was enqueued for 16 ACCEL_CUDA_POLL_MAX_NS before it sleeps until the next
   batch (a worker that slept wakes for it: so a steady stream of batches wakes it once); at the
   waiters' pace only while a GPU wait needs the host to apply a point (a wait for a value whose point
   left the ring; points while timestamps are pending or the device is traced: the device's
   reap_needed count) or the stream is full, and from ACCEL_CUDA_POLL_MAX_NS again after that or a
   sleep. So a chain of batches wakes no thread per batch, and its workers rarely.
   accel_signal_value also reads what the GPU reached before anyone applied it (the signal's mirror, and
   its recent points' progress words), so a value awaited on one queue and the value that queue waited
   for read in causal order: a host that saw the later one sees the earlier one too (a foreign stream
   that waited on a point's event, in the event-ring mode, excepted). A batch's
   object references (buffers, programs, signals, the staging memory) are released when its last point
   is reached, so destroying objects still used by submitted work is legal.
   A single-signal wait for a point still far down its stream sleeps meanwhile: after 20 us it estimates
   from how fast the point's progress word moves when the point will be reached, and sleeps half that
   time, less a timer's slack, while that is 0.1 ms or more; a host raise wakes it (see cuda: naps in
   long waits). On a host with few cores the polling took a core from what the wait waits for.
   Foreign signals: a CUDA queue may wait on a signal of any backend (gated); any backend may wait on a
   CUDA signal. Several devices (accel.h, "Several devices"): the signal of another accel device on the
   same CUDA device is waited for on the GPU like one of its own (its words are pinned and portable,
   both devices share the primary context and its release domain); peer copies with other CUDA
   devices' buffers are cuMemcpyAsync in the queue's stream (one context, or peer access, turned on
   with cuCtxEnablePeerAccess the first time a pair meets; without it the core stages them). Copies
   with buffers of a Vulkan device on the same GPU (the same uuid) are cuMemcpyAsync in the stream too:
   the Vulkan memory (exported as an opaque fd) is imported with cuImportExternalMemory and mapped once
   per 32 MiB block or large buffer, and kept until that memory goes or this device is destroyed; the
   Vulkan device exports the memory it makes while such a CUDA device is open, so buffers made before
   are staged. A Vulkan queue's copies with CUDA buffers are vkCmdCopyBuffer in its command buffer
   where the CUDA memory exports (cuda: exported memory): while a Vulkan device of the same GPU is open,
   DEVICE buffers of at least half the driver's granularity (1 MiB on current GPUs) are made with
   cuMemCreate, exportable as a POSIX fd, and rounded up to the granularity; the Vulkan device imports
   each once. Smaller buffers, and those made while no such Vulkan device was open, are cuMemAlloc's,
   and a Vulkan queue's copies of them are staged.
   A Vulkan signal of the same GPU whose semaphore exports (accel_vulkan.h, "Peer copies between Vulkan
   devices") is waited for on the GPU too, imported with cuImportExternalSemaphore and waited on with
   cuWaitExternalSemaphoresAsync (cuda: waits on Vulkan signals). A CUDA signal is a word, not a
   semaphore, so a Vulkan queue's wait on one goes to the GPU the other way round: the Vulkan queue
   lends this device a timeline semaphore, imported the same way, and a stream of its own raises it
   (cuSignalExternalSemaphoresAsync) once the signal point that promised the value ran, where that
   point's progress word is one the GPU writes by itself (with stream memory operations; else, and
   where the Vulkan device exports no semaphores, the wait is gated on the host): cuda: Vulkan waits
   on CUDA signals. A loss or recover of this device releases such waits (the semaphore fails).

   ==== Timestamps and the trace ================================================================
   accel_queue_timestamp records a timing event on the stream (cuEventRecord), then a signal point of
   its own; the reaper that reaches the point converts the event's time to the host clock and writes it
   (a HOST buffer through its pinned mapping, a DEVICE buffer by a copy on the io stream) before it
   applies any later point of the queue, so every signal after the timestamp is raised after the value
   is there. A signal point that follows a timestamp not yet written is not one a GPU wait may watch (the
   wait watches the signal's mirror, which the host raises after the write). Commands of the same queue
   after the timestamp may run before the host wrote it: read the value after a signal that follows it
   (on the host, or on a queue that waits for that signal); the value lands over what such a command
   wrote to its bytes. Conversion: cuEventElapsedTime from a reference event recorded on the idle io
   stream between two host readings (their middle; recorded again, up to 3 times, while they are 20 us or
   more apart; taken again once a second), clamped to [when the timestamp was enqueued, when the host saw
   it reached] and to no earlier than the queue's timestamp before it (a new reference moves the
   conversion by up to its error). Accuracy: half the reference's bracket (a few us on a GPU; tens of
   us on the mock under load) plus the events' resolution (~0.5 us).
   Traced (accel_device_desc.trace_path / ACCEL_TRACE), every command and every wait of a segment gets
   such a timing event and point after it, and the reaper records its span (from where the queue's last
   span ended, or its enqueueing, to its end) and a signal's span and mark before raising it; while
   traced points are pending, GPU waits watch the signals' mirrors (so a flow's source is recorded before
   the wait it releases). Cost: one event record and one point per command; waits between queues go
   through the host.

   ==== Device loss =============================================================================
   A sticky context error (illegal address, launch failure, misaligned address, ECC, ...) from any
   call, from a stream query or from an event query makes the device lost: accel's lost flag is set
   (every later call returns ACCEL_ERROR_DEVICE_LOST), every signal of the device is failed with
   ACCEL_ERROR_DEVICE_LOST, queued batches are dropped (their signals fail) and in-flight ones are
   released, so every wait returns; so do other devices' queues waiting on the GPU for its signals
   (their later signals read failed first). Errors that are not sticky (e.g. a launch with too many resources)
   are logged with the call name and the driver's error name, fail the rest of that batch with
   ACCEL_ERROR_BACKEND, and leave the device usable.

   ==== Recovery (accel_device_recover, see accel.h "Device generations") ======================
   A recover resets the primary context: cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxReset (which
   destroys every resource of the context, and with it a sticky error), cuDevicePrimaryCtxRetain; then
   the device's own stream and pinned word blocks are made anew (the copy kernel and the timestamps'
   reference event again when first needed). Before the reset, every queue of the old generation is
   settled: its walks end (segments not handed to the stream are dropped) and its signal points apply
   at once, as failed, releasing their batches; a walk gated on the host drops its batch when the wait
   ends. Stale objects never call the driver again (their handles went with the context): destroying one
   frees its host memory only. The primary context is the CUDA device's, shared by every accel device
   on it (and by other code of the process that retains it, whose objects die with it): so a recover of
   one accel device recovers every accel device on the same CUDA device, with one reset. Each gets a new
   generation (its objects are stale, its signals not reached fail with ACCEL_ERROR_DEVICE_LOST) and
   new native state, as if it had been recovered itself; recovers of two of them at once share one
   reset. Creating or destroying an accel device on that CUDA device while such a recover runs is not
   supported (the create may fail with ACCEL_ERROR_UNAVAILABLE). The driver tears the context down only
   once its streams are idle, so first every pinned word of the device is raised to ACCEL_SIGNAL_MAX
   (repeatedly, for up to 2 s, while a stream still runs): a stream waiting on the GPU for a value that
   no stale object will raise goes on, and the work behind it runs on the old context's memory before
   the reset frees it (a wait on another device's word, or a long kernel, still holds the reset: a
   warning says so after 2 s). A queue of another GPU (peer access) that copies with a buffer of this
   device (peer_frees) builds that copy only once every wait before it is reached: the waits of its
   segment go to the host, and its worker first drains the queue where a wait handed to that GPU may
   not be reached yet (an earlier segment or batch); the copy fails with DEVICE_LOST where this device
   was recovered meanwhile (core: several devices). A copy built is counted on this device
   (peer_copies) before that check, and its recover waits for the copy's batch to complete, for up to
   the same 2 s (a copy behind long work; a batch that waits for later work after its copy holds the
   recover that long, unless a host call comes between, before which the queue drained): then a
   warning says that a copy not run yet would run on freed memory
   (tests/mock_cuda.c crashes; a GPU would fault). A recover of the copying GPU meanwhile keeps its
   copies counted until its own reset (its stale batches complete before its streams are idle:
   accel_i_peer_hold). The same holds for such a copy in a command list,
   replayed in either form (a native replay is checked where it is built).
   A device lost to a sticky error: on NVIDIA's driver (580, H200, measured by `make gpu-check`) the
   error outlives the reset, as NVIDIA documents for such errors ("the process must be terminated and
   relaunched"): cuDevicePrimaryCtxRetain returns it again, and accel_device_recover returns
   ACCEL_ERROR_DEVICE_LOST with a log line that says so; the device stays lost (destroy it; its objects'
   destroys work). A recover of a device that is not lost (a reset) works there. tests/mock_cuda.c
   clears a sticky error at the reset, and does as NVIDIA's driver with MOCK_CUDA_STICKY_SURVIVES=1.

   ==== Interop =================================================================================
   Code that also calls the driver or libraries on CUDA streams (cuBLAS, cuDNN, a framework) gets the
   native handles: accel_cuda_device_context (the primary context), accel_cuda_queue_stream (the
   queue's stream: work launched on it runs in stream order with accel's), accel_cuda_buffer_pointer
   (a buffer's CUdeviceptr); and lends accel its memory with accel_cuda_buffer_wrap (accel never frees
   it). No CUDA type appears in the public part: pointers are uint64_t, the context and stream void*.
   accel_queue_native (accel.h) runs a library's enqueue (cuBLAS, NCCL, cuFFT) on the queue's stream in
   the queue's order with no host round trip. A stream accel does not own takes accel signals with
   accel_cuda_stream_wait (one cuStreamWaitValue64 on the word of "Signals and signal points" that
   will reach the value; without stream memory operations a cuLaunchHostFunc that waits on the host)
   and accel_cuda_stream_signal (one cuLaunchHostFunc that raises the signal: the GPU cannot store a
   maximum, and host waiters must wake). Until the signal reaches what such waits wait for, releases
   that wait for the whole device are held back, as behind accel's own GPU waits.

   ==== Thread safety, errors, allocation =======================================================
   As in accel.h: objects from any thread, one recording thread per queue. Nothing aborts; every driver
   error is logged with the CUDA call, the error name and code; every host allocation of the backend
   goes through the device allocator (pinned memory comes from the driver), except what the accel
   devices on one CUDA device share, which may outlive any one of them: that CUDA device's record
   (its primary context's recover state), the deferred releases (cuda: releases) and the library
   paths accel_cuda_set_library saves come from malloc.

   ==== Testing =================================================================================
   Without a GPU (make test): the unavailable paths, NVRTC compiling the suite's kernels, and the whole
   conformance suite through tests/mock_cuda.c, a CPU fake of the driver and NVRTC loaded with
   ACCEL_CUDA_LIBRARY (also under ASan and TSan). That proves the host side, not a GPU: on a machine
   with an NVIDIA GPU run `make gpu-check` (bench/gpu_check.sh): the suite on the real driver in both
   signal-point modes, the out-of-bounds kernel that must end in DEVICE_LOST, compute-sanitizer, the
   examples with `cuda`, and bench/cuda.c.
*/
#ifndef ACCEL_CUDA_H_INCLUDED
#define ACCEL_CUDA_H_INCLUDED

#include "accel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA backend. Always returns the table; devices report UNAVAILABLE where there is no driver. */
ACCEL_API const accel_backend* accel_cuda_backend(void);

/* Overrides the library paths: cuda_path for the driver, nvrtc_path for NVRTC; NULL restores the default
   (env ACCEL_CUDA_LIBRARY / ACCEL_NVRTC_LIBRARY, then the default search). The strings are copied.
   Applies to the next load: a driver or NVRTC that has already been loaded stays. Call it before
   creating CUDA devices, not concurrently with them. */
ACCEL_API void accel_cuda_set_library(const char* cuda_path, const char* nvrtc_path);

/* Compiles CUDA C `source` with NVRTC to PTX, through the path the backend uses, without a device.
   compute_capability: e.g. 90 for compute_90; 0 = NVRTC's default architecture. name: the program's
   name in the compiler's messages (NULL: "accel.cu"). On success *ptx is a NUL-terminated PTX text of
   *ptx_size bytes (NUL included), allocated with `allocator` (NULL: malloc); release it with
   accel_cuda_free_ptx. The compiler log goes to `logger` (NULL: stderr). Returns OK, INVALID_ARGUMENT
   (NULL source/ptx/ptx_size), UNAVAILABLE (NVRTC cannot be loaded: reason logged), COMPILE (the log
   carries the compiler output), OUT_OF_MEMORY. Any thread. */
ACCEL_API accel_result accel_cuda_compile_source(const char* source, const char* name,
                                                 uint32_t compute_capability,
                                                 const accel_allocator* allocator, const accel_logger* logger,
                                                 char** ptx, size_t* ptx_size);
/* Frees what accel_cuda_compile_source returned (same allocator; NULL ptx is a no-op). */
ACCEL_API void accel_cuda_free_ptx(const accel_allocator* allocator, char* ptx, size_t ptx_size);

/* ==== interop: native handles and borrowed memory ====
   For code that also calls the CUDA driver or runtime, or libraries on CUDA streams (cuBLAS, cuDNN).
   No CUDA type is declared here: a CUdeviceptr comes as uint64_t, a CUstream and a CUcontext as void*
   (cast them: `(CUstream)accel_cuda_queue_stream(q)`). The getters return 0 / NULL for NULL and for an
   object of another backend; they never fail otherwise and may be called from any thread. */

/* The CUdeviceptr of b's memory (for a HOST buffer: the device address of its pinned mapping; for a
   view: where the view starts); 0 if b is NULL, not a CUDA buffer, or stale (made before a recover).
   Valid until b is released or the device recovered. A DEVICE buffer made while a Vulkan device of the
   same GPU is open may be cuMemCreate memory ("cuda: exported memory"): kernels, copies and libraries
   take it as they take cuMemAlloc's; cuIpcGetMemHandle does not (legacy IPC takes cuMemAlloc's alone). */
ACCEL_API uint64_t accel_cuda_buffer_pointer(accel_buffer* b);
/* The CUstream q's commands run on (one non-blocking stream per queue, for the queue's life). Work the
   caller launches on it runs in stream order with accel's: after the commands accel has already put on
   the stream, before the ones it puts later. Which accel commands are on the stream at a given moment
   depends on waits that gate the rest of a batch on the host: to put work between two accel commands,
   use accel_queue_host_call (from it, the stream holds exactly the commands recorded before it).
   NULL if q is NULL, not a CUDA queue, or stale (made before a recover). */
ACCEL_API void* accel_cuda_queue_stream(accel_queue* q);
/* The CUcontext of d: the device's primary context (shared with the CUDA runtime in the process). Make it
   current (cuCtxSetCurrent) before driver calls on accel's memory or streams. accel makes it current on the
   threads that enqueue its work (accel_queue_submit's, an accel_signal_set's that submits the work it
   releases, the queue's worker) and leaves it current there; another context (or none) made current on such a
   thread since costs accel a second try of the call that needed it. accel retains it while d lives and
   releases it in accel_device_destroy: when no one else holds it (the CUDA runtime does once used), that
   destroys the context and everything allocated in it. Memory you allocate in it to outlive d needs a retain
   of your own (cuDevicePrimaryCtxRetain). NULL if d is NULL or not a CUDA device. */
ACCEL_API void* accel_cuda_device_context(accel_device* d);
/* Borrows `size` bytes of device memory at device_pointer, allocated elsewhere (cuMemAlloc, cudaMalloc, a
   framework's allocator) in d's context, as an ACCEL_MEMORY_DEVICE buffer: *out works wherever an accel
   buffer does (exec, copy, fill, update, read/write, destroy while work uses it). accel never frees the
   memory: the caller keeps ownership and keeps it alive until the buffer is released, i.e. destroyed
   and no submitted work uses it any more (accel_queue_finish, or a signal the last user signals).
   Returns INVALID_ARGUMENT (NULL d/out, d not a CUDA device, device_pointer 0 or not a multiple of 4:
   a fill writes 32-bit words, as a kernel's loads do (allocators give 256), size 0) with *out NULL,
   OUT_OF_MEMORY (host), DEVICE_LOST. Any thread. */
ACCEL_API accel_result accel_cuda_buffer_wrap(accel_device* d, uint64_t device_pointer, size_t size,
                                              accel_buffer** out);

/* ==== interop: accel signals on streams accel does not own ====
   A framework's or a library's CUstream (PyTorch, CuPy, cuBLAS's, one made with cuStreamCreate) in the
   order of accel's signals. Each call enqueues ONE operation on `stream` and returns; errors are
   returned (with a log line), not recorded. s must be a signal of a CUDA device and `stream` a stream in
   a context on that CUDA device (the primary context accel uses, the CUDA runtime's, or another: the
   words involved are portable, device-mapped pinned memory). Any thread; the calls do not change the
   thread's current context. Both return INVALID_ARGUMENT for a NULL stream or signal, a signal of
   another backend, value > ACCEL_SIGNAL_MAX; DEVICE_LOST; SIGNAL_FAILED, enqueuing nothing, when s is
   already failed; BACKEND (or OUT_OF_MEMORY) when the driver refuses the operation. See "Signals and
   signal points" in the documentation above for the words. */

/* The stream waits, on the GPU, until s >= value: work enqueued on it after this call starts only then.
   Nothing is enqueued when s already reached value. With stream memory operations: one
   cuStreamWaitValue64 (GEQ) on the progress word of the accel queue whose signal point promised value,
   already enqueued and held up by no wait for the host (GPU to GPU: the point's work runs whatever
   happens to s), or else on s's mirror word, which every raise reaches: accel_signal_set, a queue's
   signal (the GPU writes the mirror there), accel_cuda_stream_signal, and a failure (ACCEL_SIGNAL_MAX),
   so a failed signal releases the stream, whose work then runs (as accel's own GPU waits do, DESIGN
   6.1; fail what it signals yourself). Without them (the event-ring mode, ACCEL_CUDA_NO_MEMOPS=1): a
   cuStreamWaitEvent on the event of the accel queue's signal point that promised value, already
   enqueued; else one cuLaunchHostFunc whose function waits on the host until s reaches value or
   fails; it holds the driver's host-function thread meanwhile, so the value must come from the host, an
   accel queue or another device, not from a host function (accel_cuda_stream_signal) behind it.
   Destroying s while a stream still waits on it releases the stream: the event-ring mode's host
   function returns within a millisecond; with stream memory operations the mirror reads
   ACCEL_SIGNAL_MAX once the last holder of s lets go, and until then the stream waits: an
   accel_cuda_stream_signal of s not run yet, on any stream (it holds s until it ran), or a submitted
   batch that waits on or signals s and is not done yet. Fail s first to release every waiter at once.
   Destroy the device only after such streams passed the wait (cuStreamSynchronize). `stream` must not be
   an accel queue's own (accel_cuda_queue_stream, a native step's cuda_stream): accel's signal points on
   it would wait behind a wait for the host that accel does not know of, and GPU waits elsewhere that
   watch those points with them; record accel_queue_wait on that queue instead. */
ACCEL_API accel_result accel_cuda_stream_wait(void* stream, accel_signal* s, uint64_t value);
/* When the stream gets there (everything enqueued on it before has completed), s = max(s, value), as
   accel_signal_set: host waiters wake, accel queues of any backend waiting for it go on, and a failed s
   stays failed. One cuLaunchHostFunc (a GPU cannot store a maximum; the host function makes no driver
   call); accel queues of s's device waiting on the GPU are released when it has raised the mirror.
   Nothing is enqueued when s already reached value. s is kept alive until the function ran; destroy the
   device only after the stream passed it. A driver never runs the host functions of a failed context:
   once the device's context failed (the device is lost), accel_device_destroy and accel_device_recover
   drop the references of those not run yet on streams of that context (cuStreamGetCtx; a stream of
   another context keeps its function's, which runs as usual), and so for the event-ring mode's host
   function of accel_cuda_stream_wait. UNSUPPORTED where the driver lacks cuLaunchHostFunc. */
ACCEL_API accel_result accel_cuda_stream_signal(void* stream, accel_signal* s, uint64_t value);

#ifdef __cplusplus
}
#endif
#endif /* ACCEL_CUDA_H_INCLUDED */

/* ============================================================================================== */
/*                                       IMPLEMENTATION                                           */
/* ============================================================================================== */
#if defined(ACCEL_CUDA_IMPLEMENTATION) && !defined(ACCEL_CUDA_IMPLEMENTATION_INCLUDED)
#define ACCEL_CUDA_IMPLEMENTATION_INCLUDED
/* Map (grep for "==== name ===="). accel.h's core walks the batches ("core: batch walk"); this header
   turns segments into stream work and reports completion through signal points:
     cuda: driver declarations     - the driver types and constants, under accel_cu_* names
     cuda: process-wide library state - the loaded driver and NVRTC (refcounted, once-flag)
     cuda: NVRTC compilation, objects
     cuda: the current context on the enqueue path - trusted per thread, made current on a refusal
     cuda: releases, device loss, pinned words
     cuda: devices, buffers, programs
     cuda: signal points and reaping - timestamps and the trace; the ring, reaping, the gates
     cuda: naps in long waits      - a waiter sleeps while the point it waits for is far off
     cuda: signals                 - host words with a device-mapped mirror
     cuda: commands                - exec, copy, fill, update into stream work (staging, copy kernel)
     cuda: recorded command lists  - CUDA graphs, or pre-resolved launches
     cuda: queue segments          - segment_submit, drain, poll (the walk's slots); queues
     cuda: recovery                - accel_device_recover: the primary context reset and made anew
     cuda: several devices, imported memory - peer access; a Vulkan device's memory on the same GPU
                                     imported (cuImportExternalMemory) for a queue's copies
     cuda: waits on Vulkan signals - a Vulkan signal's semaphore imported, waited on in the stream
     cuda: backend table, interop
     cuda: foreign streams         - accel_cuda_stream_wait / _signal on streams accel does not own
     cuda: unavailable build */

#if !defined(ACCEL_IMPLEMENTATION_INCLUDED)
#  error "accel_cuda.h: define ACCEL_IMPLEMENTATION and include accel.h before ACCEL_CUDA_IMPLEMENTATION"
#endif

#ifndef ACCEL_CUDA_MIN_DRIVER
#  define ACCEL_CUDA_MIN_DRIVER 11070
#endif
#ifndef ACCEL_CUDA_POLL_MAX_NS
#  define ACCEL_CUDA_POLL_MAX_NS 250000u
#endif
#ifndef ACCEL_CUDA_MAX_BEHIND
#  define ACCEL_CUDA_MAX_BEHIND 768u
#endif
#if (ACCEL_CUDA_POLL_MAX_NS) < 1 || (ACCEL_CUDA_MAX_BEHIND) < 1
#  error "accel_cuda.h: ACCEL_CUDA_POLL_MAX_NS and ACCEL_CUDA_MAX_BEHIND must be at least 1"
#endif

/* how long a queue's worker keeps its backstop pace after the last enqueue (accel_i_cu_queue_poll) */
#define ACCEL_I_CU_LINGER_NS (16u * (uint64_t)ACCEL_CUDA_POLL_MAX_NS)

#if defined(ACCEL_NO_THREADS) || defined(__wasi__) || defined(__EMSCRIPTEN__)
#  define ACCEL_I_CU_NO_LOADER
#endif
#if !defined(ACCEL_I_CU_NO_LOADER) && !defined(_WIN32)
#  include <dlfcn.h>
#endif
#if defined(_WIN32)
#  define ACCEL_I_CUDAAPI __stdcall
#else
#  define ACCEL_I_CUDAAPI
#endif

/* ==== cuda: driver declarations ==== */
/* The few driver types and constants the backend uses, declared here under accel_cu_* names (values
   from the CUDA driver API reference). */
typedef int accel_cu_result;
typedef int accel_cu_device;
#if defined(_WIN64) || defined(__LP64__) || defined(_LP64)
typedef unsigned long long accel_cu_deviceptr;
#else
typedef unsigned int accel_cu_deviceptr;
#endif
typedef struct accel_cu_context_s* accel_cu_context;
typedef struct accel_cu_module_s*  accel_cu_module;
typedef struct accel_cu_function_s* accel_cu_function;
typedef struct accel_cu_stream_s*  accel_cu_stream;
typedef struct accel_cu_event_s*   accel_cu_event;
typedef struct accel_cu_graph_s*   accel_cu_graph;         /* CUDA graphs (recorded lists) */
typedef struct accel_cu_graph_exec_s* accel_cu_graph_exec;
typedef struct accel_cu_graph_node_s* accel_cu_graph_node;
typedef void (ACCEL_I_CUDAAPI* accel_cu_host_fn)(void* user);   /* CUhostFn (cuLaunchHostFunc) */
typedef struct accel_cu_mempool_s* accel_cu_mempool;   /* CUmemoryPool (queue-ordered memory) */
typedef struct accel_cu_mempool_props {   /* CUmemPoolProps: pinned device memory of one device */
    int alloc_type, handle_types;          /* CU_MEM_ALLOCATION_TYPE_PINNED (1), none (0) */
    int location_type, location_id;        /* CU_MEM_LOCATION_TYPE_DEVICE (1), the device's ordinal */
    void* win32_security_attributes;
    unsigned char reserved[64];            /* 0 (later drivers' maxSize and usage: their defaults) */
} accel_cu_mempool_props;
typedef struct accel_cu_extmem_s* accel_cu_extmem;   /* CUexternalMemory (cuda: several devices) */
typedef struct accel_cu_extmem_desc {      /* CUDA_EXTERNAL_MEMORY_HANDLE_DESC */
    int type;                              /* CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD (1) */
    union { int fd; struct { void* handle; const void* name; } win32; } handle;
    unsigned long long size;
    unsigned int flags;
    unsigned int reserved[16];
} accel_cu_extmem_desc;
#define ACCEL_CU_EXTMEM_OPAQUE_FD 1
typedef struct accel_cu_extmem_buffer_desc {   /* CUDA_EXTERNAL_MEMORY_BUFFER_DESC */
    unsigned long long offset, size;
    unsigned int flags;
    unsigned int reserved[16];
} accel_cu_extmem_buffer_desc;
typedef struct accel_cu_extsem_s* accel_cu_extsem;   /* CUexternalSemaphore (cuda: signals of Vulkan) */
typedef struct accel_cu_extsem_desc {      /* CUDA_EXTERNAL_SEMAPHORE_HANDLE_DESC */
    int type;                              /* CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD (9) */
    union { int fd; struct { void* handle; const void* name; } win32; const void* sci; } handle;
    unsigned int flags;
    unsigned int reserved[16];
} accel_cu_extsem_desc;
#define ACCEL_CU_EXTSEM_TIMELINE_FD 9
typedef struct accel_cu_extsem_wait {      /* CUDA_EXTERNAL_SEMAPHORE_WAIT_PARAMS */
    struct {
        struct { unsigned long long value; } fence;
        union { void* fence; unsigned long long reserved; } sci;
        struct { unsigned long long key; unsigned int timeout_ms; } keyed_mutex;
        unsigned int reserved[10];
    } params;
    unsigned int flags;
    unsigned int reserved[16];
} accel_cu_extsem_wait;
typedef struct accel_cu_extsem_signal {    /* CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS */
    struct {
        struct { unsigned long long value; } fence;
        union { void* fence; unsigned long long reserved; } sci;
        struct { unsigned long long key; } keyed_mutex;
        unsigned int reserved[12];
    } params;
    unsigned int flags;
    unsigned int reserved[16];
} accel_cu_extsem_signal;
typedef struct accel_cu_kernel_node_params {   /* CUDA_KERNEL_NODE_PARAMS (v1) */
    accel_cu_function func;
    unsigned int grid[3], block[3], shared_bytes;
    void** params;
    void** extra;
} accel_cu_kernel_node_params;
typedef struct accel_cu_memset_node_params {   /* CUDA_MEMSET_NODE_PARAMS */
    accel_cu_deviceptr dst;
    size_t pitch;
    unsigned int value, element_size;
    size_t width, height;
} accel_cu_memset_node_params;
typedef struct accel_cu_memcpy3d {             /* CUDA_MEMCPY3D; accel uses unified pointers only */
    size_t src_x, src_y, src_z, src_lod;
    int src_type;
    const void* src_host; accel_cu_deviceptr src_device; void* src_array; void* reserved0;
    size_t src_pitch, src_height;
    size_t dst_x, dst_y, dst_z, dst_lod;
    int dst_type;
    void* dst_host; accel_cu_deviceptr dst_device; void* dst_array; void* reserved1;
    size_t dst_pitch, dst_height;
    size_t width, height, depth;
} accel_cu_memcpy3d;

enum {
    ACCEL_CU_SUCCESS = 0, ACCEL_CU_ERROR_INVALID_VALUE = 1, ACCEL_CU_ERROR_OUT_OF_MEMORY = 2, ACCEL_CU_ERROR_DEINITIALIZED = 4,
    ACCEL_CU_ERROR_STUB_LIBRARY = 34, ACCEL_CU_ERROR_NO_DEVICE = 100, ACCEL_CU_ERROR_NO_BINARY_FOR_GPU = 209,
    ACCEL_CU_ERROR_ECC_UNCORRECTABLE = 214, ACCEL_CU_ERROR_INVALID_PTX = 218,
    ACCEL_CU_ERROR_UNSUPPORTED_PTX_VERSION = 222, ACCEL_CU_ERROR_NOT_FOUND = 500,
    ACCEL_CU_ERROR_NOT_READY = 600, ACCEL_CU_ERROR_ILLEGAL_ADDRESS = 700, ACCEL_CU_ERROR_LAUNCH_TIMEOUT = 702,
    ACCEL_CU_ERROR_CONTEXT_IS_DESTROYED = 709, ACCEL_CU_ERROR_ASSERT = 710,
    ACCEL_CU_ERROR_HARDWARE_STACK_ERROR = 714, ACCEL_CU_ERROR_LAUNCH_FAILED = 719
};
enum {
    ACCEL_CU_ATTR_MAX_THREADS_PER_BLOCK = 1, ACCEL_CU_ATTR_MAX_BLOCK_DIM_X = 2,
    ACCEL_CU_ATTR_MAX_GRID_DIM_X = 5, ACCEL_CU_ATTR_INTEGRATED = 18, ACCEL_CU_ATTR_CAN_MAP_HOST_MEMORY = 19,
    ACCEL_CU_ATTR_CC_MAJOR = 75, ACCEL_CU_ATTR_CC_MINOR = 76,
    ACCEL_CU_ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
    /* several devices: where the GPU sits, and whether one address space spans host and devices */
    ACCEL_CU_ATTR_PCI_BUS_ID = 33, ACCEL_CU_ATTR_PCI_DEVICE_ID = 34, ACCEL_CU_ATTR_UNIFIED_ADDRESSING = 41,
    ACCEL_CU_ATTR_PCI_DOMAIN_ID = 50,
    ACCEL_CU_ATTR_MEMORY_POOLS_SUPPORTED = 115,  /* cuMemAllocFromPoolAsync / cuMemFreeAsync */
    /* cuMemCreate and its kin, and their memory exported as a POSIX fd (cuda: exported memory) */
    ACCEL_CU_ATTR_VMM_SUPPORTED = 102, ACCEL_CU_ATTR_POSIX_FD_SUPPORTED = 103
};
/* CUmemAllocationProp (pinned device memory, exportable as a POSIX fd) and CUmemAccessDesc */
typedef struct accel_cu_mem_location { int type; int id; } accel_cu_mem_location;
typedef struct accel_cu_mem_prop {
    int type;                      /* CU_MEM_ALLOCATION_TYPE_PINNED */
    int handle_types;              /* CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR */
    accel_cu_mem_location location;
    void* win32_meta;
    unsigned char compression, rdma;
    unsigned short usage;
    unsigned char reserved[4];
} accel_cu_mem_prop;
typedef struct accel_cu_mem_access { accel_cu_mem_location location; int flags; } accel_cu_mem_access;
typedef unsigned long long accel_cu_mem_handle;   /* CUmemGenericAllocationHandle */
enum {
    ACCEL_CU_MEM_PINNED = 1, ACCEL_CU_MEM_HANDLE_POSIX_FD = 1, ACCEL_CU_MEM_LOCATION_DEVICE = 1,
    ACCEL_CU_MEM_ACCESS_READWRITE = 3, ACCEL_CU_MEM_GRANULARITY_MINIMUM = 0
};
enum {   /* CUmemPool_attribute */
    ACCEL_CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3, ACCEL_CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4
};
enum { ACCEL_CU_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704 };
/* CUstreamBatchMemOpParams (48 bytes), the form of a 64-bit write (CU_STREAM_MEM_OP_WRITE_VALUE_64) */
typedef union accel_cu_batch_memop {
    unsigned int operation;
    struct {
        unsigned int operation;
        accel_cu_deviceptr address;
        uint64_t value64;
        unsigned int flags;
        accel_cu_deviceptr alias;   /* the driver's */
    } write_value;
    uint64_t pad[6];
} accel_cu_batch_memop;
enum { ACCEL_CU_STREAM_MEM_OP_WRITE_VALUE_64 = 5 };
typedef char accel_i_cu_memop_layout[sizeof(void*) != 8 ||   /* 64-bit drivers only (a 32-bit build: stub) */
                                     (sizeof(accel_cu_batch_memop) == 48 &&
                                      offsetof(accel_cu_batch_memop, write_value.value64) == 16) ? 1 : -1];
typedef struct accel_cu_uuid { unsigned char bytes[16]; } accel_cu_uuid;   /* CUuuid */
enum {
    ACCEL_CU_STREAM_NON_BLOCKING = 1, ACCEL_CU_EVENT_DISABLE_TIMING = 2,
    ACCEL_CU_MEMHOSTALLOC_PORTABLE = 1, ACCEL_CU_MEMHOSTALLOC_DEVICEMAP = 2,
    ACCEL_CU_STREAM_WAIT_VALUE_GEQ = 0, ACCEL_CU_STREAM_WRITE_VALUE_DEFAULT = 0,
    ACCEL_CU_JIT_ERROR_LOG_BUFFER = 5, ACCEL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    ACCEL_CU_MEMORYTYPE_UNIFIED = 4
};

/* The driver entry points: X(member, ABI version to resolve at, parameters). All return a result code.
   Optional ones (may be missing without making the driver unusable) are listed in accel_i_cu_optional. */
#define ACCEL_I_CU_FUNCS(X) \
    X(Init, 2000, (unsigned int flags)) \
    X(DriverGetVersion, 2020, (int* version)) \
    X(GetErrorName, 6000, (accel_cu_result error, const char** name)) \
    X(DeviceGetCount, 2000, (int* count)) \
    X(DeviceGet, 2000, (accel_cu_device* device, int ordinal)) \
    X(DeviceGetName, 2000, (char* name, int len, accel_cu_device device)) \
    X(DeviceGetAttribute, 2000, (int* value, int attribute, accel_cu_device device)) \
    X(DeviceTotalMem, 3020, (size_t* bytes, accel_cu_device device)) \
    X(DevicePrimaryCtxRetain, 7000, (accel_cu_context* ctx, accel_cu_device device)) \
    X(DevicePrimaryCtxRelease, 11000, (accel_cu_device device)) \
    X(DevicePrimaryCtxReset, 11000, (accel_cu_device device)) \
    X(CtxSetCurrent, 4000, (accel_cu_context ctx)) \
    X(MemAlloc, 3020, (accel_cu_deviceptr* ptr, size_t bytes)) \
    X(MemFree, 3020, (accel_cu_deviceptr ptr)) \
    X(MemHostAlloc, 2020, (void** ptr, size_t bytes, unsigned int flags)) \
    X(MemFreeHost, 2000, (void* ptr)) \
    X(MemHostGetDevicePointer, 3020, (accel_cu_deviceptr* dptr, void* host, unsigned int flags)) \
    X(MemcpyHtoDAsync, 3020, (accel_cu_deviceptr dst, const void* src, size_t bytes, \
                              accel_cu_stream stream)) \
    X(MemcpyDtoHAsync, 3020, (void* dst, accel_cu_deviceptr src, size_t bytes, accel_cu_stream stream)) \
    X(MemcpyDtoDAsync, 3020, (accel_cu_deviceptr dst, accel_cu_deviceptr src, size_t bytes, \
                              accel_cu_stream stream)) \
    X(MemcpyAsync, 4000, (accel_cu_deviceptr dst, accel_cu_deviceptr src, size_t bytes, \
                          accel_cu_stream stream)) \
    X(MemsetD8Async, 3020, (accel_cu_deviceptr dst, unsigned char value, size_t count, \
                            accel_cu_stream stream)) \
    X(MemsetD32Async, 3020, (accel_cu_deviceptr dst, unsigned int value, size_t count, \
                             accel_cu_stream stream)) \
    X(ModuleLoadDataEx, 2010, (accel_cu_module* module, const void* image, unsigned int n, int* options, \
                               void** values)) \
    X(ModuleUnload, 2000, (accel_cu_module module)) \
    X(ModuleGetFunction, 2000, (accel_cu_function* fn, accel_cu_module module, const char* name)) \
    X(LaunchKernel, 4000, (accel_cu_function fn, unsigned int gx, unsigned int gy, unsigned int gz, \
                           unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared, \
                           accel_cu_stream stream, void** params, void** extra)) \
    X(StreamCreate, 2000, (accel_cu_stream* stream, unsigned int flags)) \
    X(StreamDestroy, 4000, (accel_cu_stream stream)) \
    X(StreamQuery, 2000, (accel_cu_stream stream)) \
    X(StreamGetCtx, 9020, (accel_cu_stream stream, accel_cu_context* ctx)) \
    X(StreamSynchronize, 2000, (accel_cu_stream stream)) \
    X(EventCreate, 2000, (accel_cu_event* event, unsigned int flags)) \
    X(EventDestroy, 4000, (accel_cu_event event)) \
    X(EventRecord, 2000, (accel_cu_event event, accel_cu_stream stream)) \
    X(EventQuery, 2000, (accel_cu_event event)) \
    X(EventSynchronize, 2000, (accel_cu_event event)) \
    X(EventElapsedTime, 2000, (float* ms, accel_cu_event start, accel_cu_event end)) \
    X(StreamWriteValue64, 11070, (accel_cu_stream stream, accel_cu_deviceptr addr, uint64_t value, \
                                  unsigned int flags)) \
    X(StreamWaitValue64, 11070, (accel_cu_stream stream, accel_cu_deviceptr addr, uint64_t value, \
                                 unsigned int flags)) \
    X(StreamBatchMemOp, 11070, (accel_cu_stream stream, unsigned int count, accel_cu_batch_memop* ops, \
                                unsigned int flags)) \
    X(GraphCreate, 10000, (accel_cu_graph* graph, unsigned int flags)) \
    X(GraphDestroy, 10000, (accel_cu_graph graph)) \
    X(GraphAddKernelNode, 10000, (accel_cu_graph_node* node, accel_cu_graph graph, \
                                  const accel_cu_graph_node* deps, size_t n, \
                                  const accel_cu_kernel_node_params* params)) \
    X(GraphAddMemsetNode, 10000, (accel_cu_graph_node* node, accel_cu_graph graph, \
                                  const accel_cu_graph_node* deps, size_t n, \
                                  const accel_cu_memset_node_params* params, accel_cu_context ctx)) \
    X(GraphAddMemcpyNode, 10000, (accel_cu_graph_node* node, accel_cu_graph graph, \
                                  const accel_cu_graph_node* deps, size_t n, \
                                  const accel_cu_memcpy3d* params, accel_cu_context ctx)) \
    X(GraphInstantiateWithFlags, 11040, (accel_cu_graph_exec* exec, accel_cu_graph graph, \
                                         unsigned long long flags)) \
    X(GraphExecDestroy, 10000, (accel_cu_graph_exec exec)) \
    X(GraphExecKernelNodeSetParams, 10010, (accel_cu_graph_exec exec, accel_cu_graph_node node, \
                                            const accel_cu_kernel_node_params* params)) \
    X(GraphExecMemsetNodeSetParams, 10020, (accel_cu_graph_exec exec, accel_cu_graph_node node, \
                                            const accel_cu_memset_node_params* params, \
                                            accel_cu_context ctx)) \
    X(GraphExecMemcpyNodeSetParams, 10020, (accel_cu_graph_exec exec, accel_cu_graph_node node, \
                                            const accel_cu_memcpy3d* params, accel_cu_context ctx)) \
    X(GraphLaunch, 10000, (accel_cu_graph_exec exec, accel_cu_stream stream)) \
    X(LaunchHostFunc, 10000, (accel_cu_stream stream, accel_cu_host_fn fn, void* user)) \
    X(StreamWaitEvent, 3020, (accel_cu_stream stream, accel_cu_event event, unsigned int flags)) \
    X(DeviceGetUuid, 9020, (accel_cu_uuid* uuid, accel_cu_device device)) \
    X(DeviceCanAccessPeer, 4000, (int* can, accel_cu_device device, accel_cu_device peer)) \
    X(CtxEnablePeerAccess, 4000, (accel_cu_context peer, unsigned int flags)) \
    X(MemPoolCreate, 11020, (accel_cu_mempool* pool, const accel_cu_mempool_props* props)) \
    X(MemPoolDestroy, 11020, (accel_cu_mempool pool)) \
    X(MemPoolSetAttribute, 11020, (accel_cu_mempool pool, int attr, void* value)) \
    X(MemAllocFromPoolAsync, 11020, (accel_cu_deviceptr* ptr, size_t bytes, accel_cu_mempool pool, \
                                     accel_cu_stream stream)) \
    X(MemFreeAsync, 11020, (accel_cu_deviceptr ptr, accel_cu_stream stream)) \
    X(ImportExternalMemory, 10000, (accel_cu_extmem* mem, const accel_cu_extmem_desc* desc)) \
    X(ExternalMemoryGetMappedBuffer, 10000, (accel_cu_deviceptr* ptr, accel_cu_extmem mem, \
                                             const accel_cu_extmem_buffer_desc* desc)) \
    X(DestroyExternalMemory, 10000, (accel_cu_extmem mem)) \
    X(ImportExternalSemaphore, 10000, (accel_cu_extsem* sem, const accel_cu_extsem_desc* desc)) \
    X(WaitExternalSemaphoresAsync, 10000, (const accel_cu_extsem* sems, const accel_cu_extsem_wait* params, \
                                           unsigned int n, accel_cu_stream stream)) \
    X(DestroyExternalSemaphore, 10000, (accel_cu_extsem sem)) \
    X(SignalExternalSemaphoresAsync, 10000, (const accel_cu_extsem* sems, \
                                             const accel_cu_extsem_signal* params, unsigned int n, \
                                             accel_cu_stream stream)) \
    X(MemGetAllocationGranularity, 10020, (size_t* bytes, const accel_cu_mem_prop* prop, int option)) \
    X(MemCreate, 10020, (accel_cu_mem_handle* handle, size_t bytes, const accel_cu_mem_prop* prop, \
                         unsigned long long flags)) \
    X(MemRelease, 10020, (accel_cu_mem_handle handle)) \
    X(MemAddressReserve, 10020, (accel_cu_deviceptr* ptr, size_t bytes, size_t align, accel_cu_deviceptr at, \
                                 unsigned long long flags)) \
    X(MemAddressFree, 10020, (accel_cu_deviceptr ptr, size_t bytes)) \
    X(MemMap, 10020, (accel_cu_deviceptr ptr, size_t bytes, size_t offset, accel_cu_mem_handle handle, \
                      unsigned long long flags)) \
    X(MemUnmap, 10020, (accel_cu_deviceptr ptr, size_t bytes)) \
    X(MemSetAccess, 10020, (accel_cu_deviceptr ptr, size_t bytes, const accel_cu_mem_access* desc, \
                            size_t n)) \
    X(MemRetainAllocationHandle, 11000, (accel_cu_mem_handle* handle, void* addr)) \
    X(MemExportToShareableHandle, 10020, (void* out, accel_cu_mem_handle handle, int type, \
                                          unsigned long long flags))

typedef struct accel_i_cu_lib {
#define ACCEL_I_CU_MEMBER(name, version, params) accel_cu_result (ACCEL_I_CUDAAPI *name) params;
    ACCEL_I_CU_FUNCS(ACCEL_I_CU_MEMBER)
#undef ACCEL_I_CU_MEMBER
} accel_i_cu_lib;
static const char* const accel_i_cu_optional[] = {
    "GetErrorName", "StreamWriteValue64", "StreamWaitValue64", "StreamBatchMemOp",
    /* CUDA graphs: without them recorded lists replay as pre-resolved launches */
    "GraphCreate", "GraphDestroy", "GraphAddKernelNode", "GraphAddMemsetNode", "GraphAddMemcpyNode",
    "GraphInstantiateWithFlags", "GraphExecDestroy", "GraphExecKernelNodeSetParams",
    "GraphExecMemsetNodeSetParams", "GraphExecMemcpyNodeSetParams", "GraphLaunch",
    /* foreign streams (accel_cuda_stream_signal; stream_wait without memops): UNSUPPORTED without it;
       a stream's context (without it: not taken as the device's, see accel_i_cu_foreign_drop) */
    "LaunchHostFunc", "StreamWaitEvent", "StreamGetCtx",
    /* several devices: identity and peer access (without them: uuid zero, copies staged) */
    "DeviceGetUuid", "DeviceCanAccessPeer", "CtxEnablePeerAccess",
    /* queue-ordered memory from a stream-ordered pool (without them: accel's own pool) */
    "MemPoolCreate", "MemPoolDestroy", "MemPoolSetAttribute", "MemAllocFromPoolAsync", "MemFreeAsync",
    /* several devices: Vulkan memory of the same GPU imported (without them: such copies staged) */
    "ImportExternalMemory", "ExternalMemoryGetMappedBuffer", "DestroyExternalMemory",
    /* several devices: waits on Vulkan signals of the same GPU on the GPU (without them: gated) */
    "ImportExternalSemaphore", "WaitExternalSemaphoresAsync", "DestroyExternalSemaphore",
    /* several devices: a Vulkan queue's waits on CUDA signals of the same GPU on the GPU (else gated) */
    "SignalExternalSemaphoresAsync",
    /* several devices: memory a Vulkan device of the same GPU imports (without them: such copies staged) */
    "MemGetAllocationGranularity", "MemCreate", "MemRelease", "MemAddressReserve", "MemAddressFree", "MemMap",
    "MemUnmap", "MemSetAccess", "MemRetainAllocationHandle", "MemExportToShareableHandle"
};

/* NVRTC, looked up by name (it has no versioned lookup). */
typedef struct accel_i_nvrtc_program_s* accel_i_nvrtc_program;
#define ACCEL_I_NVRTC_FUNCS(X) \
    X(CreateProgram, (accel_i_nvrtc_program* prog, const char* src, const char* name, int n_headers, \
                      const char* const* headers, const char* const* include_names)) \
    X(DestroyProgram, (accel_i_nvrtc_program* prog)) \
    X(CompileProgram, (accel_i_nvrtc_program prog, int n_options, const char* const* options)) \
    X(GetProgramLogSize, (accel_i_nvrtc_program prog, size_t* size)) \
    X(GetProgramLog, (accel_i_nvrtc_program prog, char* log)) \
    X(GetPTXSize, (accel_i_nvrtc_program prog, size_t* size)) \
    X(GetPTX, (accel_i_nvrtc_program prog, char* ptx)) \
    X(GetCUBINSize, (accel_i_nvrtc_program prog, size_t* size)) \
    X(GetCUBIN, (accel_i_nvrtc_program prog, char* cubin)) \
    X(Version, (int* major, int* minor)) \
    X(GetNumSupportedArchs, (int* n)) \
    X(GetSupportedArchs, (int* archs))
typedef struct accel_i_nvrtc_lib {
#define ACCEL_I_NVRTC_MEMBER(name, params) int (*name) params;
    ACCEL_I_NVRTC_FUNCS(ACCEL_I_NVRTC_MEMBER)
#undef ACCEL_I_NVRTC_MEMBER
    const char* (*GetErrorString)(int result);
} accel_i_nvrtc_lib;
#define ACCEL_I_NVRTC_ERROR_COMPILATION 6

#if !defined(ACCEL_I_CU_NO_LOADER)
/* ==== cuda: process-wide library state ==== */
/* One driver and one NVRTC per process, loaded under a lock on first use and kept (libcuda must not be
   unloaded). A failed attempt is not remembered: the next one tries again (the override may change). */
typedef struct accel_i_cu_state {
    accel_i_a32 lock;
    bool loaded, nvrtc_loaded;
    uint32_t refs;                 /* live CUDA devices */
    int driver_version;
    void* handle;
    void* nvrtc_handle;
    char* path;                    /* overrides from accel_cuda_set_library (default allocator); NULL: none */
    char* nvrtc_path;
    size_t path_bytes, nvrtc_path_bytes;
    /* an override could not be stored (out of memory): loads fail and say so */
    bool path_lost;
    struct accel_i_cu_domain* domains;   /* one per CUDA device in use (see cuda: releases) */
    /* cuda: releases: made at the first load and kept; it guards the two after it */
    accel_i_mutex release_lock;
    bool release_lock_made;
    uint32_t waits_all;            /* GPU waits pending in the process (and recovers under way) */
    struct accel_i_cu_grave* graves;   /* the releases held back */
    /* releases that a host waiter held back (cuda: releases), listed under held_lock alone (never held
       across a driver call), and joined to `graves` under release_lock (accel_i_cu_graves_gather) */
    accel_i_a32 held_lock;
    struct accel_i_cu_grave* held;
    accel_i_a32 graves_held;       /* graves are due at the next reap's end (accel_i_cu_graves_settle) */
} accel_i_cu_state;
static accel_i_cu_state accel_i_cu_g;
static accel_i_cu_lib accel_i_cu;      /* the driver's entry points: accel_i_cu.Init, ... */
static accel_i_nvrtc_lib accel_i_nvrtc;

/* Replaces *dst (bytes long) with a copy of src (NULL or "": none); false when out of memory. */
static bool accel_i_cu_keep_path(char** dst, size_t* bytes, const char* src) {
    size_t n = src && src[0] ? strlen(src) + 1 : 0;
    accel_i_default_free(*dst, *bytes, NULL);
    *dst = n ? (char*)accel_i_default_alloc(n, 1, NULL) : NULL;
    *bytes = *dst ? n : 0;
    if (*dst) memcpy(*dst, src, n);
    return *dst || !n;
}

ACCEL_API void accel_cuda_set_library(const char* cuda_path, const char* nvrtc_path) {
    bool ok;
    accel_i_spin_lock(&accel_i_cu_g.lock);
    ok = accel_i_cu_keep_path(&accel_i_cu_g.path, &accel_i_cu_g.path_bytes, cuda_path);
    ok = accel_i_cu_keep_path(&accel_i_cu_g.nvrtc_path, &accel_i_cu_g.nvrtc_path_bytes, nvrtc_path) && ok;
    accel_i_cu_g.path_lost = !ok;
    accel_i_spin_unlock(&accel_i_cu_g.lock);
}

/* The driver's name for a result ("CUDA_ERROR_ILLEGAL_ADDRESS"), or "CUDA error". */
static const char* accel_i_cu_error_name(accel_cu_result r) {
    const char* s = NULL;
    if (accel_i_cu.GetErrorName && accel_i_cu.GetErrorName(r, &s) == ACCEL_CU_SUCCESS && s) return s;
    return r == ACCEL_CU_SUCCESS ? "CUDA_SUCCESS" : "CUDA error";
}

#if defined(_WIN32)
static void* accel_i_dl_open(const char* path) { return (void*)LoadLibraryA(path); }
static void* accel_i_dl_sym(void* h, const char* name) {
    FARPROC p = GetProcAddress((HMODULE)h, name);
    void* v;
    memcpy(&v, &p, sizeof v);
    return v;
}
static void accel_i_dl_close(void* h) { FreeLibrary((HMODULE)h); }
static const char* accel_i_dl_error(void) { return "LoadLibrary failed"; }
#else
static void* accel_i_dl_open(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void* accel_i_dl_sym(void* h, const char* name) { return dlsym(h, name); }
static void accel_i_dl_close(void* h) { dlclose(h); }
static const char* accel_i_dl_error(void) { const char* e = dlerror(); return e ? e : "unknown error"; }
#endif

/* Whether the file a loaded symbol comes from lies in a stubs/ directory (Linux: its line of
   /proc/self/maps, read in pieces so that a path of any length is seen whole), to refuse the toolkit's
   stub. */
static bool accel_i_dl_is_stub(const void* sym) {
#  if defined(__linux__)
    char piece[256], seen[sizeof piece + 8];
    size_t kept = 0;                 /* the end of the previous piece of the symbol's line, in seen */
    bool line_start = true, in = false, stub = false;
    FILE* f = fopen("/proc/self/maps", "r");
    if (!f) return false;
    while (!stub && fgets(piece, sizeof piece, f)) {
        size_t n = strlen(piece);
        bool line_end = n > 0 && piece[n - 1] == '\n';
        if (line_start) {
            unsigned long long lo, hi;
            if (in) break;                                   /* the symbol's line is over */
            in = sscanf(piece, "%llx-%llx", &lo, &hi) == 2 && (uintptr_t)sym >= lo && (uintptr_t)sym < hi;
            kept = 0;
        }
        if (in) {
            memcpy(seen + kept, piece, n + 1);
            stub = strstr(seen, "/stubs/") != NULL;
            n += kept;
            kept = n < 6 ? n : 6;                             /* "/stubs" may straddle two pieces */
            memmove(seen, seen + n - kept, kept);
        }
        line_start = line_end;
    }
    fclose(f);
    return stub;
#  else
    (void)sym;
    return false;
#  endif
}

typedef accel_cu_result (ACCEL_I_CUDAAPI *accel_i_cu_gpa2_fn)(const char*, void**, int, uint64_t, int*);
typedef accel_cu_result (ACCEL_I_CUDAAPI *accel_i_cu_gpa1_fn)(const char*, void**, int, uint64_t);

/* Opens the driver library: the override, else the default search. Logs why on failure. */
static void* accel_i_cu_open(const accel_logger* lg, const char* override_path) {
#if defined(_WIN32)
    static const char* const names[] = { "nvcuda.dll" };
#else
    static const char* const names[] = { "libcuda.so.1", "libcuda.so" };
#endif
    bool refused = false;
    void* h;
    if (override_path && override_path[0]) {
        h = accel_i_dl_open(override_path);
        if (!h)
            accel_i_log_to(lg, ACCEL_LOG_WARN,
                           "accel_cuda: unavailable: the CUDA driver library '%s' (override) "
                           "cannot be loaded: %s",
                           override_path, accel_i_dl_error());
        return h;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if ((h = accel_i_dl_open(names[i])) == NULL) continue;
        if (accel_i_dl_is_stub(accel_i_dl_sym(h, "cuGetProcAddress"))) {
            accel_i_log_to(lg, ACCEL_LOG_WARN,
                           "accel_cuda: refusing %s: it is a file under /stubs/, "
                           "the CUDA toolkit's link stub, not a driver", names[i]);
            accel_i_dl_close(h);
            refused = true;
            continue;
        }
        return h;
    }
    if (refused)
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: only the CUDA toolkit's stub library was found "
                       "(under stubs/): no NVIDIA driver is installed");
    else
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: the CUDA driver library (%s) was not found: "
                       "no NVIDIA driver is installed "
                       "(set ACCEL_CUDA_LIBRARY to its path if it is elsewhere)", names[0]);
    return NULL;
}

/* Resolves every entry point through cuGetProcAddress. Returns the first failing code; *missing names
   a required entry point that the driver lacks. */
static accel_cu_result accel_i_cu_resolve(void* gpa, bool v2, const char** missing) {
    static const struct { const char* name; const char* member; int version; size_t offset; } table[] = {
#define ACCEL_I_CU_ENTRY(name, version, params) \
    { "cu" #name, #name, version, offsetof(accel_i_cu_lib, name) },
        ACCEL_I_CU_FUNCS(ACCEL_I_CU_ENTRY)
#undef ACCEL_I_CU_ENTRY
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        void* fn = NULL;
        int status = 0;
        accel_cu_result r;
        bool optional = false;
        if (v2) {
            accel_i_cu_gpa2_fn f;
            memcpy(&f, &gpa, sizeof f);
            r = f(table[i].name, &fn, table[i].version, 0, &status);
        } else {
            accel_i_cu_gpa1_fn f;
            memcpy(&f, &gpa, sizeof f);
            r = f(table[i].name, &fn, table[i].version, 0);
        }
        if (r == ACCEL_CU_ERROR_STUB_LIBRARY) return r;
        for (size_t k = 0; k < sizeof accel_i_cu_optional / sizeof accel_i_cu_optional[0]; k++)
            if (strcmp(accel_i_cu_optional[k], table[i].member) == 0) optional = true;
        if ((r != ACCEL_CU_SUCCESS || !fn) && !optional) {
            *missing = table[i].name;
            return r != ACCEL_CU_SUCCESS ? r : ACCEL_CU_ERROR_NOT_FOUND;
        }
        memcpy((unsigned char*)&accel_i_cu + table[i].offset, &fn, sizeof fn);
    }
    return ACCEL_CU_SUCCESS;
}

/* Loads and initialises the driver (lock held). Logs the precise reason on failure. */
static accel_result accel_i_cu_load_locked(const accel_logger* lg) {
    const char* override_path = accel_i_cu_g.path ? accel_i_cu_g.path : getenv("ACCEL_CUDA_LIBRARY");
    const char* missing = NULL;
    void *h, *gpa;
    bool v2 = true;
    accel_cu_result r;
    int version = 0;
    if (accel_i_cu_g.path_lost) {
        accel_i_log_to(lg, ACCEL_LOG_ERROR,
                       "accel_cuda: unavailable: accel_cuda_set_library ran out of memory "
                       "keeping a library path");
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if ((h = accel_i_cu_open(lg, override_path)) == NULL) return ACCEL_ERROR_UNAVAILABLE;
    gpa = accel_i_dl_sym(h, "cuGetProcAddress_v2");
    if (!gpa) { v2 = false; gpa = accel_i_dl_sym(h, "cuGetProcAddress"); }
    if (!gpa) {
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: the CUDA driver is too old (no cuGetProcAddress; "
                       "CUDA 11.3 or newer is needed, %d.%d for this build)",
                       ACCEL_CUDA_MIN_DRIVER / 1000, ACCEL_CUDA_MIN_DRIVER % 1000 / 10);
        accel_i_dl_close(h);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    memset(&accel_i_cu, 0, sizeof accel_i_cu);
    r = accel_i_cu_resolve(gpa, v2, &missing);
    if (r == ACCEL_CU_SUCCESS) r = accel_i_cu.Init(0);
    if (r == ACCEL_CU_ERROR_STUB_LIBRARY) {
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: %s is the CUDA toolkit's stub library "
                       "(cuInit returned CUDA_ERROR_STUB_LIBRARY, 34), not a driver",
                       override_path && override_path[0] ? override_path : "the loaded libcuda");
    } else if (missing) {
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: the CUDA driver is too old: it lacks %s "
                       "(cuGetProcAddress returned %d)", missing, r);
    } else if (r == ACCEL_CU_ERROR_NO_DEVICE) {
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: no CUDA device (cuInit returned CUDA_ERROR_NO_DEVICE)");
    } else if (r != ACCEL_CU_SUCCESS) {
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: cuInit failed: %s (%d)", accel_i_cu_error_name(r), r);
    } else if ((r = accel_i_cu.DriverGetVersion(&version)) != ACCEL_CU_SUCCESS) {
        accel_i_log_to(lg, ACCEL_LOG_WARN, "accel_cuda: unavailable: cuDriverGetVersion failed: %s (%d)",
                       accel_i_cu_error_name(r), r);
    } else if (version < ACCEL_CUDA_MIN_DRIVER) {
        accel_i_log_to(lg, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: the CUDA driver is too old: it supports CUDA %d.%d, "
                       "accel_cuda needs %d.%d",
                       version / 1000, version % 1000 / 10,
                       ACCEL_CUDA_MIN_DRIVER / 1000, ACCEL_CUDA_MIN_DRIVER % 1000 / 10);
        r = -1;
    }
    if (r != ACCEL_CU_SUCCESS) {
        memset(&accel_i_cu, 0, sizeof accel_i_cu);
        accel_i_dl_close(h);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    accel_i_cu_g.handle = h;
    accel_i_cu_g.driver_version = version;
    accel_i_cu_g.loaded = true;
    return ACCEL_OK;
}

/* Takes a reference on the driver, loading it on first use. */
static accel_result accel_i_cu_acquire(const accel_logger* lg) {
    accel_result r = ACCEL_OK;
    accel_i_spin_lock(&accel_i_cu_g.lock);
    if (!accel_i_cu_g.loaded) r = accel_i_cu_load_locked(lg);
    if (r == ACCEL_OK && !accel_i_cu_g.release_lock_made &&
        !(accel_i_cu_g.release_lock_made = accel_i_mutex_init(&accel_i_cu_g.release_lock)))
        r = ACCEL_ERROR_OUT_OF_MEMORY;
    if (r == ACCEL_OK) accel_i_cu_g.refs++;
    accel_i_spin_unlock(&accel_i_cu_g.lock);
    return r;
}
static void accel_i_cu_release_lib(void) {
    accel_i_spin_lock(&accel_i_cu_g.lock);
    accel_i_cu_g.refs--;   /* the library stays loaded: libcuda does not support being unloaded */
    accel_i_spin_unlock(&accel_i_cu_g.lock);
}

/* Loads NVRTC on first use (any thread). UNAVAILABLE with the reason logged when it cannot. */
static accel_result accel_i_nvrtc_load(const accel_logger* lg) {
    accel_result r = ACCEL_OK;
    accel_i_spin_lock(&accel_i_cu_g.lock);
    if (!accel_i_cu_g.nvrtc_loaded) {
#if defined(_WIN32)
        static const char* const names[] = { "nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll" };
#else
        static const char* const names[] = { "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                              "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so" };
#endif
        const char* over = accel_i_cu_g.nvrtc_path ? accel_i_cu_g.nvrtc_path : getenv("ACCEL_NVRTC_LIBRARY");
        void* h = NULL;
        if (over && over[0]) h = accel_i_dl_open(over);
        else for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++) h = accel_i_dl_open(names[i]);
        if (!h) {
            accel_i_log_to(lg, ACCEL_LOG_WARN,
                           "accel_cuda: NVRTC unavailable: %s%s cannot be loaded "
                           "(set ACCEL_NVRTC_LIBRARY): %s",
                           over && over[0] ? over : names[0],
                           over && over[0] ? "" : " and the other known names", accel_i_dl_error());
            r = ACCEL_ERROR_UNAVAILABLE;
        } else {
            memset(&accel_i_nvrtc, 0, sizeof accel_i_nvrtc);
#define ACCEL_I_NVRTC_SYM(name, params) \
            { void* p = accel_i_dl_sym(h, "nvrtc" #name); memcpy(&accel_i_nvrtc.name, &p, sizeof p); }
            ACCEL_I_NVRTC_FUNCS(ACCEL_I_NVRTC_SYM)
#undef ACCEL_I_NVRTC_SYM
            {
                void* p = accel_i_dl_sym(h, "nvrtcGetErrorString");
                memcpy(&accel_i_nvrtc.GetErrorString, &p, sizeof p);
            }
            if (!accel_i_nvrtc.CreateProgram || !accel_i_nvrtc.DestroyProgram ||
                !accel_i_nvrtc.CompileProgram || !accel_i_nvrtc.GetProgramLogSize ||
                !accel_i_nvrtc.GetProgramLog || !accel_i_nvrtc.GetPTXSize ||
                !accel_i_nvrtc.GetPTX || !accel_i_nvrtc.Version) {
                accel_i_log_to(lg, ACCEL_LOG_WARN,
                               "accel_cuda: NVRTC unavailable: the loaded library lacks "
                               "nvrtcCreateProgram/nvrtcCompileProgram/nvrtcGetPTX");
                accel_i_dl_close(h);
                r = ACCEL_ERROR_UNAVAILABLE;
            } else {
                accel_i_cu_g.nvrtc_handle = h;
                accel_i_cu_g.nvrtc_loaded = true;
            }
        }
    }
    accel_i_spin_unlock(&accel_i_cu_g.lock);
    return r;
}

/* ==== cuda: NVRTC compilation ==== */
/* Sends a multi-line text to the logger one line at a time (the logger truncates long messages). */
static void accel_i_cu_log_lines(const accel_logger* lg, accel_log_level level, const char* prefix,
                                 const char* text) {
    int lines = 0;
    while (text && *text && lines < 100) {
        size_t n = strcspn(text, "\n");
        if (n > 0) { accel_i_log_to(lg, level, "%s%.*s", prefix, (int)n, text); lines++; }
        text += n;
        if (*text == '\n') text++;
    }
}

/* The architecture NVRTC should target for compute capability cc: the newest it supports <= cc
   (0 when it knows none; cc itself when it cannot tell). *exact: cc itself is supported. */
static uint32_t accel_i_nvrtc_arch(uint32_t cc, bool* exact) {
    int n = 0, archs[128];
    uint32_t best = 0;
    *exact = false;
    if (!accel_i_nvrtc.GetNumSupportedArchs || !accel_i_nvrtc.GetSupportedArchs ||
        accel_i_nvrtc.GetNumSupportedArchs(&n) != 0 || n <= 0 || n > 128 ||
        accel_i_nvrtc.GetSupportedArchs(archs) != 0)
        return cc;
    for (int i = 0; i < n; i++) {
        if ((uint32_t)archs[i] == cc) *exact = true;
        if ((uint32_t)archs[i] <= cc && (uint32_t)archs[i] > best) best = (uint32_t)archs[i];
    }
    return best;
}

/* Compiles source; cc 0 = NVRTC's default target. want_cubin: a cubin for sm_cc when NVRTC supports
   exactly cc (else PTX). The image (PTX NUL-terminated) is allocated with a; *is_cubin says which. */
static accel_result accel_i_nvrtc_compile(const char* source, const char* name, uint32_t cc, bool want_cubin,
                                          const accel_allocator* a, const accel_logger* lg,
                                          char** image, size_t* image_size, bool* is_cubin) {
    accel_i_nvrtc_program prog = NULL;
    char opt[64], prefix[160];
    const char* opts[1];
    int nopts = 0, rc;
    bool exact = false;
    size_t size = 0, log_size = 0;
    accel_result r;
    *image = NULL; *image_size = 0; *is_cubin = false;
    if ((r = accel_i_nvrtc_load(lg)) != ACCEL_OK) return r;
    if (!name) name = "accel.cu";
    if (cc) {
        uint32_t arch = accel_i_nvrtc_arch(cc, &exact);
        if (arch == 0) {
            int major = 0, minor = 0;
            accel_i_nvrtc.Version(&major, &minor);
            accel_i_log_to(lg, ACCEL_LOG_ERROR,
                           "accel_cuda: NVRTC %d.%d cannot target compute capability %u.%u: "
                           "'%s' not compiled", major, minor, cc / 10, cc % 10, name);
            return ACCEL_ERROR_COMPILE;
        }
        *is_cubin = want_cubin && exact && accel_i_nvrtc.GetCUBINSize && accel_i_nvrtc.GetCUBIN;
        snprintf(opt, sizeof opt, "--gpu-architecture=%s_%u", *is_cubin ? "sm" : "compute", arch);
        opts[nopts++] = opt;
    }
    if ((rc = accel_i_nvrtc.CreateProgram(&prog, source, name, 0, NULL, NULL)) != 0) {
        accel_i_log_to(lg, ACCEL_LOG_ERROR, "accel_cuda: nvrtcCreateProgram('%s') failed: %s (%d)", name,
                       accel_i_nvrtc.GetErrorString ? accel_i_nvrtc.GetErrorString(rc) : "NVRTC error", rc);
        return rc == 1 ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_BACKEND;
    }
    rc = accel_i_nvrtc.CompileProgram(prog, nopts, opts);
    snprintf(prefix, sizeof prefix, "accel_cuda: nvrtc %s: ", name);
    if (accel_i_nvrtc.GetProgramLogSize(prog, &log_size) == 0 && log_size > 1) {
        char* log = (char*)accel_i_alloc(a, log_size, 1);
        if (log && accel_i_nvrtc.GetProgramLog(prog, log) == 0) {
            log[log_size - 1] = '\0';
            accel_i_cu_log_lines(lg, rc == 0 ? ACCEL_LOG_WARN : ACCEL_LOG_ERROR, prefix, log);
        }
        accel_i_free(a, log, log_size);
    }
    if (rc != 0) {
        accel_i_log_to(lg, ACCEL_LOG_ERROR,
                       "accel_cuda: nvrtcCompileProgram('%s'%s%s) failed: %s (%d)",
                       name, nopts ? ", " : "", nopts ? opt : "",
                       accel_i_nvrtc.GetErrorString ? accel_i_nvrtc.GetErrorString(rc) : "NVRTC error", rc);
        accel_i_nvrtc.DestroyProgram(&prog);
        return rc == ACCEL_I_NVRTC_ERROR_COMPILATION ? ACCEL_ERROR_COMPILE
             : rc == 1 ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_BACKEND;
    }
    rc = *is_cubin ? accel_i_nvrtc.GetCUBINSize(prog, &size) : accel_i_nvrtc.GetPTXSize(prog, &size);
    if (rc == 0 && size > 0) {
        *image = (char*)accel_i_alloc(a, size, 16);   /* NVRTC's PTX size counts its NUL */
        if (!*image) r = ACCEL_ERROR_OUT_OF_MEMORY;
        else if ((rc = *is_cubin ? accel_i_nvrtc.GetCUBIN(prog, *image)
                                 : accel_i_nvrtc.GetPTX(prog, *image)) != 0)
            r = ACCEL_ERROR_BACKEND;
        else { if (!*is_cubin) (*image)[size - 1] = '\0'; *image_size = size; }
    } else {
        r = ACCEL_ERROR_BACKEND;
    }
    if (r != ACCEL_OK) {
        accel_i_log_to(lg, ACCEL_LOG_ERROR,
                       "accel_cuda: fetching the compiled '%s' from NVRTC failed (%s)",
                       name, accel_result_string(r));
        if (*image) accel_i_free(a, *image, size);
        *image = NULL;
    }
    accel_i_nvrtc.DestroyProgram(&prog);
    return r;
}

static const accel_allocator* accel_i_cu_allocator_or_default(const accel_allocator* a,
                                                              accel_allocator* tmp) {
    if (a && a->alloc_fn && a->free_fn) return a;
    tmp->alloc_fn = accel_i_default_alloc;
    tmp->free_fn = accel_i_default_free;
    tmp->user = NULL;
    return tmp;
}

ACCEL_API accel_result accel_cuda_compile_source(const char* source, const char* name,
                                                 uint32_t compute_capability,
                                                 const accel_allocator* allocator, const accel_logger* logger,
                                                 char** ptx, size_t* ptx_size) {
    accel_allocator tmp;
    bool is_cubin = false;
    accel_logger none;
    if (ptx) *ptx = NULL;
    if (ptx_size) *ptx_size = 0;
    if (!source || !ptx || !ptx_size) {
        accel_i_log_to(logger, ACCEL_LOG_ERROR, "accel_cuda_compile_source: %s is NULL",
                       !source ? "source" : !ptx ? "ptx" : "ptx_size");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    memset(&none, 0, sizeof none);
    return accel_i_nvrtc_compile(source, name, compute_capability, false,
                                 accel_i_cu_allocator_or_default(allocator, &tmp),
                                 logger ? logger : &none, ptx, ptx_size, &is_cubin);
}
ACCEL_API void accel_cuda_free_ptx(const accel_allocator* allocator, char* ptx, size_t ptx_size) {
    accel_allocator tmp;
    if (ptx) accel_i_free(accel_i_cu_allocator_or_default(allocator, &tmp), ptx, ptx_size);
}

/* ==== cuda: objects ==== */
typedef struct accel_i_cu_queue accel_i_cu_queue;
typedef struct accel_i_cu_cache_entry accel_i_cu_cache_entry;
struct accel_i_cu_cache_entry {    /* a compiled CUDA C source */
    accel_i_cu_cache_entry* next;
    char* source; size_t source_size;
    char* image; size_t image_size;
};
typedef struct accel_i_cu_device {
    accel_device base;
    accel_cu_device cudev;
    accel_cu_context ctx;
    uint32_t cc;                   /* compute capability, 90 for sm_90 */
    bool memops;                   /* signal points by cuStreamWriteValue64 (else the event ring) */
    accel_cu_stream io;            /* blocking buffer reads/writes and create-time fills */
    accel_i_mutex io_lock;
    accel_i_a32 queues_lock;       /* guards the queue list (reapers walk it) */
    accel_i_cu_queue* queues;
    accel_i_mutex cache_lock;
    /* shared with the other accel devices on cudev (see cuda: releases) */
    struct accel_i_cu_domain* domain;
    accel_cu_module copy_mod;      /* accel_i_copy_ptx, loaded at the first host-to-host copy (cache_lock) */
    accel_cu_function copy_fn;
    accel_i_cu_cache_entry* cache;
    accel_i_a32 words_lock;        /* guards blocks (see cuda: pinned words) */
    /* points in flight whose GPU waiters need the host to apply them (see accel_i_cu_queue_poll): the
       queues' workers poll at the waiters' pace while it is not 0, else only as a backstop */
    accel_i_a32 reap_needed;
    accel_i_a32 losing;            /* accel_i_cu_lose ran (once a generation) */
    accel_i_a32 foreign_lock;      /* guards foreign and dropped (see cuda: foreign streams) */
    struct accel_i_cu_foreign *foreign, *dropped;
    struct accel_i_cu_block* blocks;
    /* timestamps (io_lock): an event recorded on the idle io stream at host time cal_host (taken at
       cal_at), the reference the timestamps' events are measured from */
    accel_cu_event cal_ev;
    uint64_t cal_host, cal_at;
    /* several devices: bit n: peer access to CUDA device n was tried / is on (see accel_i_cu_peer_copy) */
    accel_i_a32 peers_tried, peers_on;
    bool unified;                  /* unified addressing (peer copies need it) */
    size_t vmm_grain;              /* exportable memory's granularity; 0: none (cuda: exported memory) */
    uint32_t vmm_peers;            /* bit n: CUDA device n may copy this one's memory by peer access */
    /* CPU signals holding a word of this device's mirror pool (cuda: CPU signals on the GPU), each
       holding a reference to the device (cpu_lock guards the array) */
    accel_i_a32 cpu_lock;
    accel_signal** cpu_sigs;
    uint32_t cpu_n, cpu_cap;
    accel_cu_mempool mempool;      /* queue-ordered DEVICE memory's pool; NULL: accel's own (cuda: queue-
                                      ordered memory) */
    /* a point's mirror and progress writes go in one cuStreamBatchMemOp (cleared if the driver refuses it:
       separate writes from then on; see accel_i_cu_mirror_point) */
    accel_i_a32 batch_memops;
    /* cuda: recovery: the next accel device of the domain (its recover_lock), the domain's epoch when
       this device's native state was made; under recover_lock: the epoch of the last reset that a
       recover of another accel device made (its group recover took this one in too: its remake of
       this one may have failed), 0 once a recover of this one shared it, and the result of the last
       group recover's remake of this one */
    struct accel_i_cu_device* domain_next;
    uint64_t epoch, grouped_at;
    accel_result group_result;
    accel_i_inside users;          /* host reads of its memory under way (accel_i_cu_use) */
} accel_i_cu_device;
/* An 8-byte word in pinned, device-mapped host memory: the host reads and writes it at `host`, a stream
   at `dptr` (cuStreamWaitValue64 / cuStreamWriteValue64). */
typedef struct accel_i_cu_word { accel_i_a64* host; accel_cu_deviceptr dptr; } accel_i_cu_word;
/* A signal: the host word (accel.h's host signal, first), a copy of it the GPU can watch (`mirror`:
   host raises and failures, kept at the maximum), and its last signal points (the progress word and
   sequence number a GPU wait can watch instead, for a value GPU work promised: see
   accel_i_cu_device_wait). */
#define ACCEL_I_CU_POINTS 16u
/* event ring mode: other queues' points a point may imply (past it, a point of its own goes between) */
#define ACCEL_I_CU_IMPLIED 2u
/* past it, the newest entry takes in the newer ones (see accel_i_cu_gate_add) */
#define ACCEL_I_CU_GATES 64u
/* A signal point as GPU waits see it: the progress word and sequence number that reach `value`, and
   what the point may be held up by on its stream: a GPU wait for a host-raised value (`gate` >=
   gate_value) not known reached when the point was enqueued (`opaque`: more than one). A GPU wait
   elsewhere watches the point only when nothing holds it up: else the value may come by another route
   first (a host set, another queue's point) while the point waits for a host that waits for the
   waiter (see accel_i_cu_device_wait). */
typedef struct accel_i_cu_mark {
    accel_cu_deviceptr word;
    const accel_i_a64* progress;   /* the word as the host reads it (cuda: naps in long waits) */
    uint64_t seq, value;
    const accel_i_a64* gate; uint64_t gate_value;
    bool opaque;
} accel_i_cu_mark;
typedef struct accel_i_cu_signal {
    accel_i_host_signal host;
    accel_i_cu_word mirror;
    accel_i_a32 point_lock;        /* guards the rest */
    accel_i_cu_mark points[ACCEL_I_CU_POINTS];   /* a ring, oldest at points_head */
    uint32_t points_head, points_count;
    uint32_t descents;             /* neighbours in the ring whose values fall (accel_i_cu_first_mark) */
    uint64_t evicted;              /* the largest value of a point that left the ring */
    accel_i_a64 marked;            /* the largest value of a mark (written under point_lock) */
    /* the largest value a GPU wait on the mirror waits for (written under point_lock) */
    accel_i_a64 mirror_wanted;
    /* GPU waits of streams accel does not own, not retired yet (cuda: foreign streams), and the largest
       value they wait for (point_lock) */
    accel_i_a32 foreign_waits;
    uint64_t foreign_max;
    /* signal points enqueued on it: a host waiter that found none in flight sleeps until this moves (the
       enqueuer then notifies the host event), and then reaps (see accel_i_cu_signal_wait_many) */
    accel_i_a64 pointed;
    /* cuda: device loss: the lost device's signals to fail across devices, and what each had reached */
    struct accel_i_cu_signal* lost_next;
    uint64_t lost_before;
} accel_i_cu_signal;
typedef struct accel_i_cu_buffer {
    accel_buffer base;
    accel_cu_deviceptr dptr;
    size_t vmm_size;               /* exportable memory's bytes (cuda: exported memory); 0: cuMemAlloc's */
    uint32_t vmm_access;           /* ... bit n: CUDA device n was given access to it (cuMemSetAccess) */
    bool borrowed;                 /* accel_cuda_buffer_wrap: the caller's memory, never freed here */
} accel_i_cu_buffer;
typedef struct accel_i_cu_program {
    accel_program base;
    accel_cu_module module;
    accel_cu_function fn;
} accel_i_cu_program;
/* A buffer's device pointer; a view's: its root's plus its offset. */
static accel_cu_deviceptr accel_i_cu_dptr(const accel_buffer* b) {
    return ((const accel_i_cu_buffer*)(b->root ? b->root : b))->dptr + b->offset;
}

/* A signal point: the GPU reaches it when the queue's progress word reaches seq (or its event
   completes); then the host raises the signal and/or releases the finished batch. */
typedef struct accel_i_cu_point {
    uint64_t seq;
    accel_signal* signal; uint64_t value;
    accel_i_batch* batch;          /* set on a batch's last point */
    void* staging; size_t staging_size;   /* the batch's pinned update data */
    accel_cu_event ev;             /* event ring mode: this slot's event (kept for reuse) */
    bool recorded;                 /* event ring mode: ev was recorded for this point */
    const accel_i_cmd* stamp;      /* a timestamp, or (traced) any command: its end, which sev marks, */
    uint64_t stamp_enq;            /* no earlier than when it was enqueued (see accel_i_cu_stamp_apply;
                                      set where it has a stamp or the device traces) */
    accel_cu_event sev;            /* its timing event (this slot's, kept for reuse) */
    bool stamp_recorded;           /* sev was recorded for this point */
    bool mirrored;                 /* the GPU writes the signal's mirror here (accel_i_cu_mirror_by_gpu) */
    uint32_t waits;                /* GPU waits enqueued before it (since the point before): retired
                                      with it */
    uint32_t holds;                /* its count in the device's reap_needed, dropped when it is applied */
    /* event ring mode: the points of other queues whose events this queue's stream waited for before
       it (cuda: GPU waits in the event-ring mode): reached when it is, their progress words raised to
       their seq as it applies */
    uint32_t nimplied;
    struct { accel_i_a64* word; uint64_t seq; } implied[ACCEL_I_CU_IMPLIED];
} accel_i_cu_point;

struct accel_i_cu_queue {
    accel_queue base;
    accel_i_cu_queue* next_queue;  /* the device's list */
    accel_cu_stream stream;
    uint64_t epoch;                /* its device's epoch at its create: the context its stream is of */
    accel_i_cu_word progress;      /* the last sequence number the GPU passed (cuda: pinned words) */
    /* the enqueuer (whoever walks the queue's batches: one thread at a time, see core: batch walk) */
    uint64_t issued;               /* last sequence number written to the stream */
    bool dirty;                    /* GPU work (or a GPU wait) enqueued since the last point */
    uint32_t waits;                /* GPU waits enqueued since the last point (see cuda: releases) */
    uint32_t holds;                /* reap_needed counts taken since the last point (its `holds`) */
    uint32_t nimplied;             /* event ring mode: the waits' points since the last point (`implied`) */
    struct { accel_i_a64* word; uint64_t seq; } implied[ACCEL_I_CU_IMPLIED];
    /* the GPU waits on host-raised values (mirrors) enqueued and not known released, oldest first
       (pruned by accel_i_cu_gates_prune), with `at`: the stream work enqueued before each, and `after`:
       the sequence number of the first point after it (reached, the wait was passed, whatever its word
       reads now: the signal may be gone and its mirror word another signal's). With the list full, the
       newest entry takes in the newer waits: its word NULL, it is passed with the point after the
       newest it took in (accel_i_cu_gate_add) */
    struct { const accel_i_a64* word; uint64_t value, at, after; } gates[ACCEL_I_CU_GATES];
    uint32_t ngates;
    bool gates_one_word;           /* the listed gates wait on one word, values not decreasing */
    uint64_t enqueued;             /* stream operations enqueued so far (commands, waits, points) */
    void* staging; size_t staging_size, staging_used;   /* the running batch's update staging */
    /* one finished batch's staging, kept for reuse (ring_lock) */
    void* staging_cache; size_t staging_cache_size;
    /* a timing event given back once its time was read, for the next stamp's slot (ring_lock; see
       accel_i_cu_ring_take) */
    accel_cu_event sev_spare;
    accel_i_a32 ring_lock;         /* guards ring, ring_cap, ring_head, ring_count */
    accel_i_cu_point* ring;
    uint32_t ring_cap, ring_head, ring_count;
    /* the enqueuer's own look at the ring (accel_i_cu_ring_mine): the slot after the newest point, and
       how many slots are free at least (the reaper only frees them): no ring_lock to find a slot */
    uint32_t ring_tail, ring_free;
    accel_i_a32 reap_lock;         /* one reaper at a time, so points apply in order */
    uint64_t reached;              /* event ring mode: highest completed seq (reaper only) */
    accel_i_event done;            /* batches finished */
    accel_i_a64 submitted;         /* batches submitted */
    accel_i_a64 poll_mark;         /* moved by the walking thread per segment (accel_i_cu_enqueued) */
    /* the worker's alone (only it polls): when it saw poll_mark move last (accel_i_cu_poll_since), and
       its next backstop pause, 0: ACCEL_CUDA_POLL_MAX_NS (accel_i_cu_backstop) */
    uint64_t poll_seen, poll_since, backstop;
    /* the stream had no room (accel_i_cu_stream_full): the worker waits for room */
    accel_i_a32 full;
    /* timestamp (or traced) points not applied yet: later points are not GPU-watchable */
    accel_i_a32 stamps_pending;
    uint64_t trace_t;              /* traced: where the queue's last span ended (reaper only) */
    uint64_t stamp_t;              /* the time of its last stamp point (timestamp or traced; reaper only) */
};

static accel_i_cu_device* accel_i_cu_dev(accel_device* d) { return (accel_i_cu_device*)d; }
/* ==== cuda: the current context on the enqueue path ====
   A one-queue chain step is a launch and a progress write, as a raw stream's launch and event record;
   making the context current for each segment was a third driver call per step. So the thread that
   enqueues remembers the context accel last made current on it (accel_i_cu_current) and trusts it for
   the enqueues that do not depend on it being right (accel_i_cu_enter_cached): a launch, a stream
   wait or write on accel's stream, an event record. Code outside accel may have made another context
   current since, or none (cudaSetDevice, a library, the caller, a host call's or native step's fn): such
   a call then fails with one of accel_i_cu_context_error's codes, enqueuing nothing, and
   accel_i_cu_retry makes accel's context current and issues it once more. Calls that would act in the
   wrong context instead of failing (creating an event, allocating, loading a module, a copy or fill
   whose pointers decide the context) and native steps (fn is promised accel's context) make it current
   first, once per segment (accel_i_cu_enter_sure: accel_i_cu_entered says it was made current since
   the segment started). */
static ACCEL_I_THREAD_LOCAL accel_cu_context accel_i_cu_current;
static ACCEL_I_THREAD_LOCAL bool accel_i_cu_entered;
static void accel_i_cu_enter(accel_i_cu_device* dev) {
    accel_i_cu.CtxSetCurrent(dev->ctx);
    accel_i_cu_current = dev->ctx;
    accel_i_cu_entered = true;
}
/* A segment (or another enqueue entry of the walk) starts: the context is trusted, not known. */
static void accel_i_cu_enter_cached(accel_i_cu_device* dev) {
    accel_i_cu_entered = false;
    if (accel_i_cu_current != dev->ctx) accel_i_cu_enter(dev);
}
static void accel_i_cu_enter_sure(accel_i_cu_device* dev) {
    if (!accel_i_cu_entered || accel_i_cu_current != dev->ctx) accel_i_cu_enter(dev);
}
/* What a call returns that needed accel's context current and found none, another, or a destroyed one. */
static bool accel_i_cu_context_error(accel_cu_result r) {
    return r == 201 /* INVALID_CONTEXT */ || r == 400 /* INVALID_HANDLE */ ||
           r == ACCEL_CU_ERROR_CONTEXT_IS_DESTROYED;
}
/* After a call failed: true when it may have failed for a trusted context (call it again: the context is
   current now), false when the failure is the call's own. */
static bool accel_i_cu_retry_slow(accel_i_cu_device* dev, accel_cu_result r) {
    if (!accel_i_cu_context_error(r) || accel_i_cu_entered) return false;   /* the thread-local last */
    accel_i_cu_enter(dev);
    return true;
}
static inline bool accel_i_cu_retry(accel_i_cu_device* dev, accel_cu_result r) {   /* a success: no call */
    return r != ACCEL_CU_SUCCESS && accel_i_cu_retry_slow(dev, r);
}
/* The queue's native work is over: its device is lost, or the queue is stale (accel_device_recover: its
   stream and events went with the old context, see cuda: recovery). Such a queue's points apply at once,
   as failed, and it makes no driver call any more. */
static bool accel_i_cu_gone(accel_i_cu_queue* q) {
    return accel_i_lost(q->base.obj.device) || accel_i_stale(&q->base.obj);
}

/* ==== cuda: releases ====
   cuMemFree, cuMemFreeHost and cuModuleUnload wait for the whole device to be idle (they block while
   another stream sits in cuStreamWaitValue64), and hold a driver lock meanwhile that stops other
   threads' enqueues. With a GPU wait pending for a value the host (or work a blocked thread would
   enqueue) has yet to provide, that is a deadlock. So these releases, and graph destruction, wait in a
   list (`graves`) while any GPU wait is pending and run when the last such wait's point is reaped.
   The rule is the process's, not a CUDA device's: a release waits while a GPU wait is pending on ANY
   CUDA device. Whether a driver's release in one context waits for another context's streams is not
   measured (pinned host memory is mapped into every context, so cuMemFreeHost plausibly does; the mock
   waits for every stream), and a release that waits for a stream whose value a blocked host thread
   has yet to set is a hang. So one process-wide lock (accel_i_cu_g.release_lock) guards the count of
   GPU waits pending (waits_all) and the one list of graves; it orders every release against every new
   GPU wait (a wait is not enqueued while a release runs), and is the only lock the count and the list
   need: no lock order between CUDA devices. A grave keeps its context (the CUDA device's primary
   context, which every accel device on it shares), made current for it when the list runs (then the
   caller's again), on whatever thread retires the last wait.
   Each CUDA device in use has a domain (made by the first accel device on it, freed by the last,
   under accel_i_cu_g.lock) that counts its own share of waits_all: a recover forgets it (cuda:
   recovery), a domain's last accel device takes it out (none of its streams is left to wait), and a
   retire the count no longer holds (forgotten by a recover) is ignored. The last accel device of a
   domain runs the graves when no wait is pending; else its context's graves each keep the primary
   context retained until they run. The domain's lock keeps its releases out while a recover resets the
   context (domain lock, then release_lock). Graves are in the process's memory (the default allocator),
   not a device's: an accel device may be destroyed while another's wait keeps its releases waiting.
   No release runs inside a reap, GPU wait or not: a batch it completes may drop the last reference of
   a buffer destroyed while in use, and cuMemFree would hold the run's later raises (and the reap lock)
   until the device is idle, long after those values (a later kernel of any queue). The reap lists the
   grave on a list of its own (`held`, under a spin lock no driver call is made under, so it never
   waits for the locks a running release holds either) and marks the graves due (graves_held); so does
   the retire of the last GPU wait in a reap, a wait's failed enqueue, and a host function's raise. The
   reap runs the due graves at its end (accel_i_cu_reap_end, accel_i_cu_graves_settle), except a host
   waiter's (accel_signal_wait*, which holds back whatever its reaps and raises release), whose value
   would still wait for the device: its graves run at the end of a worker's next reap. The reaped
   queue's worker reaps again, since it sleeps for good only once its own reap found nothing (a waiter
   marks the graves while it holds the reap lock that reap takes; not for a foreign wait its raise
   retired: those wait for the next reap's end, release, finish or device destroy). A finish (the
   queue's drain) runs the due graves, after a run under way elsewhere, so the memory is back when it
   returns; an allocation that finds the device out of memory does the same and tries again. The
   worker is then the thread a driver's release holds up (and, on a driver whose release holds a lock
   that other threads' enqueues take, them meanwhile). In a pipeline whose GPU waits leave only brief
   gaps between them, the graves may miss every gap and wait for a finish, as in one that always has
   a wait pending (above).
   bench/cuda_blocking.c (make cuda-blocking) measures which calls block, on the driver at hand. */
typedef enum accel_i_cu_release_kind {
    ACCEL_I_CU_MEM, ACCEL_I_CU_HOST_MEM, ACCEL_I_CU_MODULE, ACCEL_I_CU_GRAPH_EXEC, ACCEL_I_CU_GRAPH,
    ACCEL_I_CU_EXT_MEM,  /* an import (cuda: several devices): its mapped buffer, then the memory */
    ACCEL_I_CU_EXT_SEM,  /* an imported semaphore (cuda: signals of Vulkan) */
    ACCEL_I_CU_VMM,      /* exportable memory (cuda: exported memory): unmapped, freed (bytes in handle) */
    ACCEL_I_CU_RELAY     /* a relay (cuda: Vulkan waits): its stream (handle) run and destroyed, then its
                            semaphore (in dptr) */
} accel_i_cu_release_kind;
typedef struct accel_i_cu_grave {
    struct accel_i_cu_grave* next;
    accel_i_cu_release_kind kind;
    void* handle;
    accel_cu_deviceptr dptr;
    accel_cu_device cudev;         /* whose primary context ctx is */
    accel_cu_context ctx;
    bool retained;                 /* holds a retain of the primary context (its domain is gone) */
} accel_i_cu_grave;
typedef struct accel_i_cu_domain {
    struct accel_i_cu_domain* next;   /* accel_i_cu_g.domains */
    accel_cu_device cudev;
    uint32_t refs;                 /* accel devices on it (accel_i_cu_g.lock) */
    accel_i_mutex lock;            /* its releases wait while a recover resets the context */
    /* its share of accel_i_cu_g.waits_all (release_lock): GPU waits enqueued whose queue has not reaped
       the point after them, and a recover under way (accel_i_cu_group_recover) */
    uint32_t waits_pending;
    /* cuda: recovery: one recover at a time resets the primary context, which adds 1 to epoch (under
       recover_lock; read without it where a recover begins); the accel devices on it, once made (a list
       through domain_next) */
    accel_i_mutex recover_lock;
    accel_i_a64 epoch;
    struct accel_i_cu_device* members;
} accel_i_cu_domain;

static void accel_i_cu_release_now(accel_i_cu_release_kind kind, void* handle, accel_cu_deviceptr dptr) {
    switch (kind) {
    case ACCEL_I_CU_MEM: accel_i_cu.MemFree(dptr); break;
    case ACCEL_I_CU_HOST_MEM: accel_i_cu.MemFreeHost(handle); break;
    case ACCEL_I_CU_MODULE: accel_i_cu.ModuleUnload((accel_cu_module)handle); break;
    case ACCEL_I_CU_GRAPH_EXEC: accel_i_cu.GraphExecDestroy((accel_cu_graph_exec)handle); break;
    case ACCEL_I_CU_GRAPH: accel_i_cu.GraphDestroy((accel_cu_graph)handle); break;
    case ACCEL_I_CU_EXT_MEM:
        accel_i_cu.MemFree(dptr);
        accel_i_cu.DestroyExternalMemory((accel_cu_extmem)handle);
        break;
    case ACCEL_I_CU_EXT_SEM: accel_i_cu.DestroyExternalSemaphore((accel_cu_extsem)handle); break;
    case ACCEL_I_CU_VMM:
        accel_i_cu.MemUnmap(dptr, (size_t)(uintptr_t)handle);
        accel_i_cu.MemAddressFree(dptr, (size_t)(uintptr_t)handle);
        break;
    case ACCEL_I_CU_RELAY:   /* the raises it enqueued run before their semaphore goes */
        accel_i_cu.StreamSynchronize((accel_cu_stream)handle);
        accel_i_cu.StreamDestroy((accel_cu_stream)handle);
        accel_i_cu.DestroyExternalSemaphore((accel_cu_extsem)(uintptr_t)dptr);
        break;
    }
}
/* Runs the held releases (release_lock held; no GPU wait pending in the process), each with its
   context current; then dev's context is current again (dev NULL: the last grave's stays). */
/* Runs one grave, unlinked by the caller, with its context current (*cur: the one current now). */
static void accel_i_cu_grave_run(accel_i_cu_grave* g, accel_cu_context* cur) {
    if (g->ctx != *cur) accel_i_cu.CtxSetCurrent(*cur = g->ctx);
    accel_i_cu_current = *cur;   /* the thread's cache (cuda: the current context on the enqueue path) */
    accel_i_cu_entered = true;
    accel_i_cu_release_now(g->kind, g->handle, g->dptr);
    if (g->retained) accel_i_cu.DevicePrimaryCtxRelease(g->cudev);
    accel_i_default_free(g, sizeof *g, NULL);
}
/* The graves waiters held back join the list (release_lock held). */
static void accel_i_cu_graves_gather(void) {
    accel_i_cu_grave* h;
    accel_i_spin_lock(&accel_i_cu_g.held_lock);
    h = accel_i_cu_g.held;
    accel_i_cu_g.held = NULL;
    accel_i_spin_unlock(&accel_i_cu_g.held_lock);
    while (h) {
        accel_i_cu_grave* next = h->next;
        h->next = accel_i_cu_g.graves;
        accel_i_cu_g.graves = h;
        h = next;
    }
}
static void accel_i_cu_graves_run(accel_i_cu_device* dev) {
    accel_cu_context cur = NULL;
    accel_i_cu_graves_gather();
    if (!accel_i_cu_g.graves) return;
    while (accel_i_cu_g.graves) {
        accel_i_cu_grave* g = accel_i_cu_g.graves;
        accel_i_cu_g.graves = g->next;
        accel_i_cu_grave_run(g, &cur);
    }
    if (dev && cur != dev->ctx) accel_i_cu_enter(dev);
}
/* Adds n (< 0: takes away, no more than it holds) to dom's share of the waits pending (release_lock). */
static void accel_i_cu_waits_count(accel_i_cu_domain* dom, int64_t n) {
    if (n < 0 && (uint64_t)-n > dom->waits_pending) n = -(int64_t)dom->waits_pending;
    dom->waits_pending = (uint32_t)((int64_t)dom->waits_pending + n);
    accel_i_cu_g.waits_all = (uint32_t)((int64_t)accel_i_cu_g.waits_all + n);
}
/* Joins (or makes) the domain of dev->cudev; false when out of memory. */
static bool accel_i_cu_domain_join(accel_i_cu_device* dev) {
    accel_i_cu_domain* dom;
    accel_i_spin_lock(&accel_i_cu_g.lock);
    for (dom = accel_i_cu_g.domains; dom && dom->cudev != dev->cudev; dom = dom->next) {}
    if (!dom && (dom = (accel_i_cu_domain*)accel_i_default_alloc(sizeof *dom, 16, NULL)) != NULL) {
        memset((void*)dom, 0, sizeof *dom);
        dom->cudev = dev->cudev;
        if (!accel_i_mutex_init(&dom->lock)) {
            accel_i_default_free(dom, sizeof *dom, NULL);
            dom = NULL;
        } else if (!accel_i_mutex_init(&dom->recover_lock)) {
            accel_i_mutex_destroy(&dom->lock);
            accel_i_default_free(dom, sizeof *dom, NULL);
            dom = NULL;
        } else {
            dom->next = accel_i_cu_g.domains;
            accel_i_cu_g.domains = dom;
        }
    }
    if (dom) dom->refs++;
    accel_i_spin_unlock(&accel_i_cu_g.lock);
    dev->domain = dom;
    if (dom) {   /* the epoch its native state is made in (see accel_i_cu_domain_enlist) */
        accel_i_mutex_lock(&dom->recover_lock);
        dev->epoch = atomic_load(&dom->epoch);
        accel_i_mutex_unlock(&dom->recover_lock);
    }
    return dom != NULL;
}
/* The end of a create: dev joins the domain's list, unless a recover of another accel device on the
   CUDA device reset the context since its native state was made (false: the create fails). */
static bool accel_i_cu_domain_enlist(accel_i_cu_device* dev) {
    accel_i_cu_domain* dom = dev->domain;
    bool fresh;
    accel_i_mutex_lock(&dom->recover_lock);
    if ((fresh = dev->epoch == atomic_load(&dom->epoch))) {
        dev->domain_next = dom->members;
        dom->members = dev;
    }
    accel_i_mutex_unlock(&dom->recover_lock);
    return fresh;
}
/* dev leaves the list (where it joined it), once no recover of the domain is under way. */
static void accel_i_cu_domain_delist(accel_i_cu_device* dev) {
    accel_i_cu_domain* dom = dev->domain;
    accel_i_mutex_lock(&dom->recover_lock);
    for (accel_i_cu_device** p = &dom->members; *p; p = &(*p)->domain_next)
        if (*p == dev) { *p = dev->domain_next; break; }
    accel_i_mutex_unlock(&dom->recover_lock);
}
/* The graves of cudev's primary context keep it retained (its last accel device leaves while a GPU wait
   of another CUDA device holds them: release_lock held). One the retain fails for is released now. */
static void accel_i_cu_graves_keep(accel_cu_device cudev) {
    accel_i_cu_graves_gather();
    for (accel_i_cu_grave **p = &accel_i_cu_g.graves, *g; (g = *p) != NULL;) {
        accel_cu_context ctx = NULL;
        if (g->cudev != cudev || g->retained) { p = &g->next; continue; }
        if ((g->retained = accel_i_cu.DevicePrimaryCtxRetain(&ctx, cudev) == ACCEL_CU_SUCCESS)) {
            p = &g->next;
            continue;
        }
        *p = g->next;   /* may wait for the pending GPU waits */
        accel_i_cu_grave_run(g, &ctx);
    }
}
/* Leaves the domain (the device's queues are gone); the last device out takes out its count (none of
   its streams is left), runs the graves or keeps its context's retained (cuda: releases), and frees it. */
static void accel_i_cu_domain_leave(accel_i_cu_device* dev) {
    accel_i_cu_domain *dom = dev->domain, **p;
    bool last;
    if (!dom) return;
    accel_i_spin_lock(&accel_i_cu_g.lock);
    last = --dom->refs == 0;
    if (last) {
        for (p = &accel_i_cu_g.domains; *p != dom; p = &(*p)->next) {}
        *p = dom->next;
    }
    accel_i_spin_unlock(&accel_i_cu_g.lock);
    dev->domain = NULL;
    if (!last) return;
    accel_i_mutex_lock(&accel_i_cu_g.release_lock);
    accel_i_cu_waits_count(dom, -(int64_t)dom->waits_pending);
    if (accel_i_cu_g.waits_all == 0) accel_i_cu_graves_run(NULL);
    else accel_i_cu_graves_keep(dom->cudev);
    accel_i_mutex_unlock(&accel_i_cu_g.release_lock);
    accel_i_mutex_destroy(&dom->recover_lock);
    accel_i_mutex_destroy(&dom->lock);
    accel_i_default_free(dom, sizeof *dom, NULL);
}
/* This thread is a host waiter (accel_i_cu_signal_wait_many), or it reaps (a release then waits for the
   reap's end: accel_i_cu_reap): its releases are held back (see above). */
static ACCEL_I_THREAD_LOCAL bool accel_i_cu_waiting, accel_i_cu_reaping;
/* A grave for a release of dev's context; NULL when out of host memory. */
static accel_i_cu_grave* accel_i_cu_grave_new(accel_i_cu_device* dev, accel_i_cu_release_kind kind,
                                              void* handle, accel_cu_deviceptr dptr) {
    accel_i_cu_grave* g = (accel_i_cu_grave*)accel_i_default_alloc(sizeof *g, 16, NULL);
    if (!g) return NULL;
    g->kind = kind; g->handle = handle; g->dptr = dptr;
    g->cudev = dev->cudev; g->ctx = dev->ctx; g->retained = false;
    return g;
}
/* Releases now, or once no GPU wait is pending in the process (the device's context is current); in a
   reap, at its end, and on a waiter, at a worker's next reap (see above). */
static void accel_i_cu_release(accel_i_cu_device* dev, accel_i_cu_release_kind kind, void* handle,
                               accel_cu_deviceptr dptr) {
    accel_i_cu_grave* g = NULL;
    bool now, later = accel_i_cu_waiting || accel_i_cu_reaping;
    if (later && (g = accel_i_cu_grave_new(dev, kind, handle, dptr)) != NULL) {
        accel_i_spin_lock(&accel_i_cu_g.held_lock);
        g->next = accel_i_cu_g.held;
        accel_i_cu_g.held = g;
        accel_i_spin_unlock(&accel_i_cu_g.held_lock);
        atomic_store(&accel_i_cu_g.graves_held, 1u);   /* under the reap lock: see above */
        return;
    }
    accel_i_mutex_lock(&dev->domain->lock);
    accel_i_mutex_lock(&accel_i_cu_g.release_lock);
    if ((now = accel_i_cu_g.waits_all == 0)) {
        accel_i_cu_graves_run(dev);   /* any held back by foreign waits (cuda: foreign streams) */
        accel_i_cu_release_now(kind, handle, dptr);
    } else if ((g = accel_i_cu_grave_new(dev, kind, handle, dptr)) != NULL) {
        g->next = accel_i_cu_g.graves;
        accel_i_cu_g.graves = g;
    }
    accel_i_mutex_unlock(&accel_i_cu_g.release_lock);
    accel_i_mutex_unlock(&dev->domain->lock);
    if (!now && !g) {   /* out of host memory for a grave: release now, which may wait for the GPU waits */
        accel_i_log(&dev->base, ACCEL_LOG_WARN,
                    "accel_cuda: out of host memory to defer a release: it waits for the device");
        accel_i_cu_release_now(kind, handle, dptr);
    }
}
/* Is a GPU wait (or a recover) pending on the CUDA device? */
static bool accel_i_cu_waits_now(accel_i_cu_device* dev) {
    bool pending;
    accel_i_mutex_lock(&accel_i_cu_g.release_lock);
    pending = dev->domain->waits_pending != 0;
    accel_i_mutex_unlock(&accel_i_cu_g.release_lock);
    return pending;
}
/* The count of GPU waits pending in the process fell (release_lock held): at 0, the graves are due at
   the end of the next reap but a waiter's (see cuda: releases), or run here where `here` (a raise on
   the host, outside a reap, a waiter and a host function). */
static void accel_i_cu_graves_due(accel_i_cu_device* dev, bool here) {
    if (accel_i_cu_g.waits_all != 0) return;
    if (here && !accel_i_cu_waiting && !accel_i_cu_reaping) accel_i_cu_graves_run(dev);
    else if (accel_i_cu_g.graves) atomic_store(&accel_i_cu_g.graves_held, 1u);
}
/* `n` GPU waits enqueued (n > 0), not enqueued after all (-1), or retired (n < 0, their point reaped):
   the last one pending in the process gone, the graves are due (not run here: a reap runs them after
   its raises, an enqueuer never blocks in a release). */
static void accel_i_cu_waits_add(accel_i_cu_device* dev, int n) {
    accel_i_mutex_lock(&accel_i_cu_g.release_lock);
    accel_i_cu_waits_count(dev->domain, n);
    if (n < 0) accel_i_cu_graves_due(dev, false);
    accel_i_mutex_unlock(&accel_i_cu_g.release_lock);
}
/* Runs the due graves (the end of a reap but a waiter's), unless a GPU wait is pending:
   its retire makes them due again. `sure` (an allocation out of memory, a finish): whatever the mark
   says, and after a run under way on another thread ended. True when it ran some, or `sure`: the
   allocation then tries again, whatever ran. */
static bool accel_i_cu_graves_settle(accel_i_cu_device* dev, bool sure) {
    bool ran = sure;
    if (!sure && !atomic_load(&accel_i_cu_g.graves_held)) return false;
    accel_i_mutex_lock(&dev->domain->lock);
    accel_i_mutex_lock(&accel_i_cu_g.release_lock);
    atomic_store(&accel_i_cu_g.graves_held, 0u);   /* before the gather: a waiter marks after it lists */
    accel_i_cu_graves_gather();
    if (accel_i_cu_g.waits_all == 0) {
        ran |= accel_i_cu_g.graves != NULL;
        accel_i_cu_graves_run(dev);
    }
    accel_i_mutex_unlock(&accel_i_cu_g.release_lock);
    accel_i_mutex_unlock(&dev->domain->lock);
    return ran;
}
/* A reap begins: the releases it makes wait for its end (after its raises). Returns whether this thread
   reaped already (an outer reap ends it). */
static bool accel_i_cu_reap_begin(void) {
    bool reaping = accel_i_cu_reaping;
    accel_i_cu_reaping = true;
    return reaping;
}
/* A reap ends: the due graves run now, but on a waiter (a worker's next reap runs them: a waiter marks
   them while it holds the reap lock that reap takes) or inside an outer reap. */
static void accel_i_cu_reap_end(accel_i_cu_device* dev, bool reaping) {
    accel_i_cu_reaping = reaping;
    if (!reaping && !accel_i_cu_waiting) accel_i_cu_graves_settle(dev, false);
}

static bool accel_i_cu_sticky(accel_cu_result r) {
    return r == ACCEL_CU_ERROR_ILLEGAL_ADDRESS || r == ACCEL_CU_ERROR_LAUNCH_TIMEOUT ||
           r == ACCEL_CU_ERROR_CONTEXT_IS_DESTROYED ||
           (r >= ACCEL_CU_ERROR_ASSERT && r <= ACCEL_CU_ERROR_LAUNCH_FAILED &&
            r != 711 && r != 712 && r != 713) ||
           r == ACCEL_CU_ERROR_ECC_UNCORRECTABLE || r == ACCEL_CU_ERROR_DEINITIALIZED;
}

/* ==== cuda: device loss ==== */
static void accel_i_cu_signal_publish(accel_signal* s, uint64_t v);
/* Marks the device lost (once), logs why, and fails every signal of the device so that waits return. */
static uint64_t accel_i_cu_reached(accel_signal* s);
static void accel_i_cu_lose(accel_i_cu_device* dev, accel_cu_result r, const char* call) {
    accel_device* d = &dev->base;
    uint64_t failed = accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST);
    accel_i_cu_signal* lost = NULL;
    if (atomic_exchange(&dev->losing, 1u)) return;
    accel_i_log(d, ACCEL_LOG_ERROR,
                "accel_cuda: device lost: %s returned %s (%d); every pending signal of the device fails",
                call, accel_i_cu_error_name(r), r);
    /* every signal fails before the lost flag shows: a reap that sees it applies its points as failed,
       and a waiter woken by one of them must find the device's other signals failed already */
    accel_i_spin_lock(&d->objects_lock);
    for (accel_i_object* o = d->objects; o; o = o->next)
        if (o->kind == ACCEL_I_SIGNAL) {   /* the mirror too: no stream waits on a lost device */
            accel_i_cu_signal* cs = (accel_i_cu_signal*)o;
            uint64_t before = accel_i_cu_reached((accel_signal*)o);
            bool walk = !accel_i_failed(accel_i_host_signal_raise((accel_signal*)o, failed));
            if (!walk || !accel_i_try_retain(o)) {
                accel_i_cu_signal_publish((accel_signal*)o, failed);
                continue;
            }
            cs->lost_before = before;
            cs->lost_next = lost;
            lost = cs;
        }
    atomic_store(&d->lost, 1u);
    accel_i_spin_unlock(&d->objects_lock);
    /* then batches (of other devices too) whose GPU waits watch them fail what they signal, before the
       failures are published (core: failure after hand-off), outside the lock (a last reference dropped
       there unlists its object) */
    while (lost) {
        accel_i_cu_signal* cs = lost;
        lost = cs->lost_next;
        if (!accel_i_fail_handed_off((accel_signal*)cs, cs->lost_before, failed))
            accel_i_cu_signal_publish((accel_signal*)cs, failed);
        accel_i_release(cs);
    }
    accel_i_relays_end(d);   /* what Vulkan queues wait on that its streams would have raised */
}
/* Maps a failed driver call to an accel_result, logging it; sticky errors lose the device. */
static accel_result accel_i_cu_check(accel_i_cu_device* dev, accel_cu_result r, const char* call) {
    if (r == ACCEL_CU_SUCCESS) return ACCEL_OK;
    if (accel_i_cu_sticky(r)) { accel_i_cu_lose(dev, r, call); return ACCEL_ERROR_DEVICE_LOST; }
    accel_i_log(&dev->base, ACCEL_LOG_ERROR,
                "accel_cuda: %s failed: %s (%d)", call, accel_i_cu_error_name(r), r);
    return r == ACCEL_CU_ERROR_OUT_OF_MEMORY ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_BACKEND;
}
/* An operation enqueued on the io stream (cr), then the stream synchronized (io_lock held); *call names
   the one that failed for accel_i_cu_check. A failed synchronize may leave the operation running (a copy
   into the caller's memory): the stream is queried until it is idle or its context failed. */
static accel_cu_result accel_i_cu_io_sync(accel_i_cu_device* dev, accel_cu_result cr, const char** call) {
    if (cr == ACCEL_CU_SUCCESS && (cr = accel_i_cu.StreamSynchronize(dev->io)) != ACCEL_CU_SUCCESS) {
        accel_cu_result q = ACCEL_CU_ERROR_NOT_READY;
        *call = "cuStreamSynchronize (the io stream)";
        while (!accel_i_cu_sticky(cr) && (q = accel_i_cu.StreamQuery(dev->io)) == ACCEL_CU_ERROR_NOT_READY)
            accel_i_yield();
        if (accel_i_cu_sticky(q)) cr = q;   /* the context failed meanwhile: the device is lost */
    }
    return cr;
}

/* ==== cuda: pinned words ==== */
/* Words in blocks of 512 (one cuMemHostAlloc each), handed out with a bitmap and kept until the device
   is destroyed. A progress word goes back to the pool with its value: a stream may still wait on it
   (for a value it already reached, enqueued before the queue went and run after), and the next queue
   that takes it counts on from there, so a word never goes down. So progress words and signals'
   mirrors (which start at the signal's initial value) come from blocks of their own: a mirror never
   takes a progress word (a new signal's mirror on a destroyed queue's word left a stream that waited
   on it for ever). Each word has a 64-byte line of its own: a stream writing its queue's word then does
   not take the line from a stream that writes another word or polls one (tests/mock_cuda.c's streams
   are CPU threads: two queues' words on one line made a two-queue pipeline ~10% slower there), and a
   host thread polling a word misses its cache only when that word moves. */
#define ACCEL_I_CU_BLOCK_WORDS 512u
#define ACCEL_I_CU_WORD_BYTES 64u
#define ACCEL_I_CU_BLOCK_BYTES (ACCEL_I_CU_BLOCK_WORDS * ACCEL_I_CU_WORD_BYTES)
typedef struct accel_i_cu_block {
    struct accel_i_cu_block* next;
    void* mem;                     /* pinned, device-mapped: ACCEL_I_CU_BLOCK_WORDS words, a line each */
    accel_cu_deviceptr dptr;
    uint64_t used[ACCEL_I_CU_BLOCK_WORDS / 64];
    bool progress;                 /* progress words (true) or signals' mirrors */
} accel_i_cu_block;
/* Word i of block k, as the host reads it. */
static accel_i_a64* accel_i_cu_block_word(const accel_i_cu_block* k, uint32_t i) {
    return (accel_i_a64*)(void*)((unsigned char*)k->mem + (size_t)i * ACCEL_I_CU_WORD_BYTES);
}
/* A new block of words, linked into the device's pool; NULL when out of memory. */
static accel_i_cu_block* accel_i_cu_block_new(accel_i_cu_device* dev, bool progress) {
    accel_i_cu_block* k = (accel_i_cu_block*)accel_i_dev_alloc(&dev->base, sizeof *k);
    if (!k) return NULL;
    memset(k, 0, sizeof *k);
    k->progress = progress;
    if (accel_i_cu_check(dev, accel_i_cu.MemHostAlloc(&k->mem, ACCEL_I_CU_BLOCK_BYTES,
                                                      ACCEL_CU_MEMHOSTALLOC_PORTABLE |
                                                      ACCEL_CU_MEMHOSTALLOC_DEVICEMAP),
                         "cuMemHostAlloc") != ACCEL_OK) {
        accel_i_dev_free(&dev->base, k, sizeof *k);
        return NULL;
    }
    memset(k->mem, 0, ACCEL_I_CU_BLOCK_BYTES);
    if (accel_i_cu_check(dev, accel_i_cu.MemHostGetDevicePointer(&k->dptr, k->mem, 0),
                         "cuMemHostGetDevicePointer") != ACCEL_OK) {
        accel_i_cu_release(dev, ACCEL_I_CU_HOST_MEM, k->mem, 0);
        accel_i_dev_free(&dev->base, k, sizeof *k);
        return NULL;
    }
    accel_i_spin_lock(&dev->words_lock);   /* in the pool from here */
    k->next = dev->blocks;
    dev->blocks = k;
    accel_i_spin_unlock(&dev->words_lock);
    return k;
}
/* A free word of a block (words_lock held); false when the block is full. */
static bool accel_i_cu_block_take(accel_i_cu_block* k, accel_i_cu_word* out) {
    for (uint32_t i = 0; i < ACCEL_I_CU_BLOCK_WORDS / 64; i++) {
        if (k->used[i] == UINT64_MAX) continue;
        for (uint32_t j = 0; j < 64; j++) {
            uint32_t at = i * 64u + j;
            if (k->used[i] & ((uint64_t)1 << j)) continue;
            k->used[i] |= (uint64_t)1 << j;
            out->host = accel_i_cu_block_word(k, at);
            out->dptr = k->dptr + (accel_cu_deviceptr)at * ACCEL_I_CU_WORD_BYTES;
            return true;
        }
    }
    return false;
}
/* A free word: a queue's progress word (progress true) or a signal's mirror. */
static accel_result accel_i_cu_word_take(accel_i_cu_device* dev, accel_i_cu_word* out, bool progress) {
    accel_i_cu_block* k;
    accel_i_spin_lock(&dev->words_lock);
    for (k = dev->blocks; k; k = k->next) if (k->progress == progress && accel_i_cu_block_take(k, out)) break;
    accel_i_spin_unlock(&dev->words_lock);
    if (k) return ACCEL_OK;
    if ((k = accel_i_cu_block_new(dev, progress)) == NULL) return ACCEL_ERROR_OUT_OF_MEMORY;
    accel_i_spin_lock(&dev->words_lock);
    accel_i_cu_block_take(k, out);
    accel_i_spin_unlock(&dev->words_lock);
    return ACCEL_OK;
}
static void accel_i_cu_word_give(accel_i_cu_device* dev, const accel_i_cu_word* w) {
    accel_i_spin_lock(&dev->words_lock);
    for (accel_i_cu_block* k = dev->blocks; k; k = k->next) {
        const unsigned char* word = (const unsigned char*)(void*)w->host;
        const unsigned char* mem = (const unsigned char*)k->mem;
        size_t at = (size_t)(word - mem) / ACCEL_I_CU_WORD_BYTES;
        if (word < mem || at >= ACCEL_I_CU_BLOCK_WORDS) continue;
        k->used[at / 64] &= ~((uint64_t)1 << (at % 64));
        break;
    }
    accel_i_spin_unlock(&dev->words_lock);
}
/* One block of each kind, made with the device (so that no object's create grows the pool and then
   fails, leaving it grown); false when out of memory. */
static bool accel_i_cu_words_init(accel_i_cu_device* dev) {
    return accel_i_cu_block_new(dev, true) && accel_i_cu_block_new(dev, false);
}
static void accel_i_cu_words_free(accel_i_cu_device* dev) {
    while (dev->blocks) {
        accel_i_cu_block* k = dev->blocks;
        dev->blocks = k->next;
        accel_i_cu_release(dev, ACCEL_I_CU_HOST_MEM, k->mem, 0);
        accel_i_dev_free(&dev->base, k, sizeof *k);
    }
}

/* ==== cuda: queue-ordered memory ====
   The memory of accel_queue_alloc is taken where the alloc's point is enqueued on the queue's stream
   (the walk runs the points: accel.h, "core: queue-ordered memory at its point"), and given back where
   the free's point is: a handle is an accel_i_cu_buffer of the core's whose dptr (and, HOST memory,
   mapped) the alloc point fills. DEVICE memory, where the device has memory pools
   (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED): cuMemAllocFromPoolAsync from a pool of accel's own
   (pinned device memory, release threshold UINT64_MAX so that a synchronize does not hand the pool's
   memory back to the system, and no reuse through dependencies the driver inserts itself, which could
   make a stream wait for another that waits for it through accel's signals) at the alloc point,
   cuMemFreeAsync at the free point, both on the queue's stream: the driver reuses freed memory at once
   on that stream, and on another stream once the free has run there (it cannot follow accel's stream
   memory-op waits). A command of another queue built after the free point but ordered before it (by
   the signals the free's queue waited for) still finds the handle's pointer. HOST memory, or a device
   without pools: a root of the core's pool lent at the alloc point (made by cuMemAlloc /
   cuMemHostAlloc when none is free) and given back at the free point, reused at once on the same
   stream and by another queue once the free's batch completed. A handle whose free point never ran
   (destroyed instead, or its batch failed), or a shared one (another queue used it, or its queue
   waited between its points: accel_i_qmem_shared; its free point keeps the memory, since a failed
   signal may release the stream before that use ran), gives
   pool memory back at its last reference with cuMemFreeAsync on the device's io stream (its work is
   done). */
static void accel_i_cu_qmem_drop(accel_buffer* r) {
    accel_i_cu_device* dev = accel_i_cu_dev(r->obj.device);
    accel_i_cu_buffer* b = (accel_i_cu_buffer*)r;
    if (!b->dptr || accel_i_stale(&r->obj)) return;   /* the old context's: gone with it */
    accel_i_cu_enter(dev);
    accel_i_mutex_lock(&dev->io_lock);
    if (dev->io) accel_i_cu.MemFreeAsync(b->dptr, dev->io);
    accel_i_mutex_unlock(&dev->io_lock);
    b->dptr = 0;
}
static const accel_i_qmem_ops accel_i_cu_qmem_ops = { sizeof(accel_i_cu_buffer), accel_i_cu_qmem_drop };
static int accel_i_cu_attr(accel_i_cu_device* dev, int attr);   /* cuda: devices */
/* The device's pool for DEVICE memory (device create, recover): none where the driver or the device
   has no pools, or it cannot be made (accel's own pool serves then). */
static void accel_i_cu_mempool_make(accel_i_cu_device* dev) {
    accel_cu_mempool_props props;
    accel_cu_mempool pool = NULL;
    uint64_t keep = UINT64_MAX;
    int no = 0;
    dev->mempool = NULL;
    if (!accel_i_cu.MemPoolCreate || !accel_i_cu.MemPoolDestroy || !accel_i_cu.MemPoolSetAttribute ||
        !accel_i_cu.MemAllocFromPoolAsync || !accel_i_cu.MemFreeAsync ||
        !accel_i_cu_attr(dev, ACCEL_CU_ATTR_MEMORY_POOLS_SUPPORTED))
        return;
    memset(&props, 0, sizeof props);
    props.alloc_type = 1;
    props.location_type = 1;
    props.location_id = (int)dev->cudev;
    if (accel_i_cu.MemPoolCreate(&pool, &props) != ACCEL_CU_SUCCESS) return;
    if (accel_i_cu.MemPoolSetAttribute(pool, ACCEL_CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep) !=
        ACCEL_CU_SUCCESS ||
        accel_i_cu.MemPoolSetAttribute(pool, ACCEL_CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, &no) !=
        ACCEL_CU_SUCCESS) {
        accel_i_cu.MemPoolDestroy(pool);
        return;
    }
    dev->mempool = pool;
}
/* Point c of a batch flagged qmem, enqueued on q's stream; 0, or the failed value that drops the rest
   of the batch. */
static uint64_t accel_i_cu_qmem_point(accel_i_cu_queue* q, accel_i_cmd* c) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_buffer* r = c->u.qmem.buf;
    accel_i_cu_buffer* b = (accel_i_cu_buffer*)r;
    accel_buffer* lent;
    accel_cu_result cr;
    uint64_t failed = 0;
    if (c->u.qmem.free) {   /* dptr stays: another queue's command built later may come before it */
        bool own = atomic_load_explicit(&r->qhas, memory_order_relaxed) == 1u && !r->qroot;   /* the pool's */
        if (!own || accel_i_qmem_shared(r)) {   /* a root lent (or none), or kept to the last reference */
            accel_i_qmem_give_back(&q->base, c);
            return 0;
        }
        atomic_store_explicit(&r->qhas, 2u, memory_order_release);
        q->dirty = true;
        cr = accel_i_cu.MemFreeAsync(b->dptr, q->stream);
        return cr == ACCEL_CU_SUCCESS ? 0 : accel_i_failed_value(accel_i_cu_check(dev, cr, "cuMemFreeAsync"));
    }
    if (accel_i_qmem_has(r)) return 0;
    if (r->memory == ACCEL_MEMORY_DEVICE && dev->mempool) {
        cr = accel_i_cu.MemAllocFromPoolAsync(&b->dptr, r->size, dev->mempool, q->stream);
        if (cr != ACCEL_CU_SUCCESS) {
            b->dptr = 0;
            return accel_i_qmem_point_failed(&q->base, r,
                                             accel_i_cu_check(dev, cr, "cuMemAllocFromPoolAsync"));
        }
        q->dirty = true;
    } else {
        if ((lent = accel_i_qmem_lend(&q->base, r, &failed)) == NULL) return failed;
        b->dptr = ((accel_i_cu_buffer*)lent)->dptr;
        r->mapped = lent->mapped;
    }
    atomic_store_explicit(&r->qhas, 1u, memory_order_release);
    return 0;
}

/* ==== cuda: devices ==== */
static accel_result accel_i_cu_device_count(const accel_backend* b, uint32_t* count) {
    accel_logger lg;
    int n = 0;
    accel_cu_result r;
    (void)b;
    memset(&lg, 0, sizeof lg);
    if (accel_i_cu_acquire(&lg) != ACCEL_OK) return ACCEL_ERROR_UNAVAILABLE;
    r = accel_i_cu.DeviceGetCount(&n);
    accel_i_cu_release_lib();
    if (r != ACCEL_CU_SUCCESS) {
        accel_i_log_to(&lg, ACCEL_LOG_ERROR,
                       "accel_cuda: cuDeviceGetCount failed: %s (%d)", accel_i_cu_error_name(r), r);
        return ACCEL_ERROR_BACKEND;
    }
    *count = n > 0 ? (uint32_t)n : 0;
    return ACCEL_OK;
}

static int accel_i_cu_attr(accel_i_cu_device* dev, int attr) {
    int v = 0;
    if (accel_i_cu.DeviceGetAttribute(&v, attr, dev->cudev) != ACCEL_CU_SUCCESS) v = 0;
    return v;
}

/* uuid and PCI location (see "Several devices"): unknown stays zero / UINT32_MAX */
static void accel_i_cu_fill_identity(accel_i_cu_device* dev, accel_device_info* info) {
    accel_cu_uuid id;
    int v = 0;
    if (accel_i_cu.DeviceGetUuid && accel_i_cu.DeviceGetUuid(&id, dev->cudev) == ACCEL_CU_SUCCESS)
        memcpy(info->uuid, id.bytes, sizeof info->uuid);
    info->pci_domain = accel_i_cu.DeviceGetAttribute(&v, ACCEL_CU_ATTR_PCI_DOMAIN_ID, dev->cudev) ==
                       ACCEL_CU_SUCCESS ? (uint32_t)v : UINT32_MAX;
    info->pci_bus = accel_i_cu.DeviceGetAttribute(&v, ACCEL_CU_ATTR_PCI_BUS_ID, dev->cudev) ==
                    ACCEL_CU_SUCCESS ? (uint32_t)v : UINT32_MAX;
    info->pci_device = accel_i_cu.DeviceGetAttribute(&v, ACCEL_CU_ATTR_PCI_DEVICE_ID, dev->cudev) ==
                       ACCEL_CU_SUCCESS ? (uint32_t)v : UINT32_MAX;
}

/* A limit the validation needs (block and grid sizes): 0 when the driver cannot say, logged. */
static uint32_t accel_i_cu_limit(accel_i_cu_device* dev, int attr) {
    int v = 0;
    accel_cu_result cr = accel_i_cu.DeviceGetAttribute(&v, attr, dev->cudev);
    if (cr == ACCEL_CU_SUCCESS && v > 0) return (uint32_t)v;
    accel_i_log(&dev->base, ACCEL_LOG_ERROR, "accel_device_create: cuDeviceGetAttribute(attribute %d) "
                "gave no limit: %s (%d), value %d", attr, accel_i_cu_error_name(cr), cr, v);
    return 0;
}
/* Fills the device info; false when a limit is unknown (every exec would be refused). */
static bool accel_i_cu_fill_info(accel_i_cu_device* dev, bool nvrtc) {
    accel_device_info* info = &dev->base.info;
    size_t mem = 0;
    bool ok = true;
    memset((void*)info, 0, sizeof *info);
    info->backend = "cuda";
    if (accel_i_cu.DeviceGetName(info->name, (int)sizeof info->name, dev->cudev) != ACCEL_CU_SUCCESS)
        snprintf(info->name, sizeof info->name, "CUDA device");
    info->name[sizeof info->name - 1] = '\0';
    info->type = accel_i_cu_attr(dev, ACCEL_CU_ATTR_INTEGRATED) ? ACCEL_DEVICE_GPU_INTEGRATED
                                                                 : ACCEL_DEVICE_GPU_DISCRETE;
    if (accel_i_cu.DeviceTotalMem(&mem, dev->cudev) == ACCEL_CU_SUCCESS) info->memory_bytes = mem;
    for (int d = 0; d < 3; d++) {
        ok = (info->max_group_size[d] = accel_i_cu_limit(dev, ACCEL_CU_ATTR_MAX_BLOCK_DIM_X + d)) && ok;
        ok = (info->max_group_count[d] = accel_i_cu_limit(dev, ACCEL_CU_ATTR_MAX_GRID_DIM_X + d)) && ok;
    }
    ok = (info->max_group_invocations = accel_i_cu_limit(dev, ACCEL_CU_ATTR_MAX_THREADS_PER_BLOCK)) && ok;
    info->max_buffers = 64;
    info->max_constants = 64;
    info->formats = (uint32_t)ACCEL_FORMAT_PTX | (uint32_t)ACCEL_FORMAT_CUBIN |
                    (nvrtc ? (uint32_t)ACCEL_FORMAT_CUDA_SOURCE : 0u);
    info->separate_copy_queue = true;
    info->host_mapped_device_memory = false;
    info->compute_capability = dev->cc;   /* 0 x 10 + minor: the major is unknown (logged) */
    ok = dev->cc >= 10u && ok;
    /* cuMemAlloc's alignment: any kernel argument type stays aligned */
    info->buffer_offset_alignment = 256;
    accel_i_cu_fill_identity(dev, info);
    return ok;
}

static void accel_i_cu_foreign_forget(accel_i_cu_device* dev);   /* cuda: foreign streams */
static void accel_i_cu_device_free(accel_i_cu_device* dev, bool ctx, bool io, bool locks) {
    accel_allocator a = dev->base.allocator;
    if (dev->domain) accel_i_cu_domain_delist(dev);   /* first: a recover of the domain may be using it */
    accel_i_cu_words_free(dev);
    accel_i_cu_foreign_forget(dev);
    while (dev->cache) {
        accel_i_cu_cache_entry* e = dev->cache;
        dev->cache = e->next;
        accel_i_free(&a, e->source, e->source_size);
        accel_i_free(&a, e->image, e->image_size);
        accel_i_free(&a, e, sizeof *e);
    }
    if (io && dev->cal_ev) accel_i_cu.EventDestroy(dev->cal_ev);
    if (dev->mempool) accel_i_cu.MemPoolDestroy(dev->mempool);
    if (dev->copy_mod) accel_i_cu_release(dev, ACCEL_I_CU_MODULE, dev->copy_mod, 0);
    if (io && dev->io) accel_i_cu.StreamDestroy(dev->io);   /* none after a recover that failed */
    accel_i_cu_domain_leave(dev);   /* with the context still retained: the last one out runs its releases */
    if (ctx) accel_i_cu.DevicePrimaryCtxRelease(dev->cudev);
    if (locks) { accel_i_mutex_destroy(&dev->io_lock); accel_i_mutex_destroy(&dev->cache_lock); }
    accel_i_free(&a, dev, sizeof *dev);
    accel_i_cu_release_lib();
}

static bool accel_i_cu_can_import_any(const accel_i_cu_device* dev);   /* cuda: imported memory */
static void accel_i_cu_vmm_init(accel_i_cu_device* dev);                 /* cuda: exported memory */
static void accel_i_cu_forget_native(accel_i_cu_device* dev);             /* cuda: recovery */
static void accel_i_cu_foreign_drop(accel_i_cu_device* dev, bool failed); /* cuda: foreign streams */
static void accel_i_cu_device_close(accel_device* d);                      /* cuda: foreign streams */
static accel_result accel_i_cu_device_create(const accel_backend* b, const accel_device_desc* d,
                                            accel_device** out) {
    accel_i_cu_device* dev;
    accel_cu_device cudev = 0;
    accel_cu_result cr;
    int n = 0;
    bool nvrtc;
    const char* no_memops = getenv("ACCEL_CUDA_NO_MEMOPS");
    if (accel_i_cu_acquire(&d->logger) != ACCEL_OK) return ACCEL_ERROR_UNAVAILABLE;
    if ((cr = accel_i_cu.DeviceGetCount(&n)) != ACCEL_CU_SUCCESS || n <= 0 ||
        d->device_index >= (uint32_t)n) {
        if (cr != ACCEL_CU_SUCCESS)
            accel_i_log_to(&d->logger, ACCEL_LOG_WARN,
                           "accel_cuda: unavailable: cuDeviceGetCount failed: %s (%d)",
                           accel_i_cu_error_name(cr), cr);
        else
            accel_i_log_to(&d->logger, ACCEL_LOG_WARN,
                           "accel_cuda: unavailable: no CUDA device %u (the driver reports %d)",
                           d->device_index, n);
        accel_i_cu_release_lib();
        return ACCEL_ERROR_UNAVAILABLE;
    }
    accel_i_cu.DeviceGet(&cudev, (int)d->device_index);
    dev = (accel_i_cu_device*)accel_i_alloc(&d->allocator, sizeof *dev, 64);
    if (!dev) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "accel_device_create: out of host memory");
        accel_i_cu_release_lib();
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    memset((void*)dev, 0, sizeof *dev);
    accel_i_device_init(&dev->base, b, d);
    atomic_init(&dev->queues_lock, 0u);
    atomic_init(&dev->words_lock, 0u);
    atomic_init(&dev->reap_needed, 0u);
    atomic_init(&dev->losing, 0u);
    atomic_init(&dev->foreign_lock, 0u);
    atomic_init(&dev->peers_tried, 0u);
    atomic_init(&dev->peers_on, 0u);
    dev->cudev = cudev;
    if ((cr = accel_i_cu.DevicePrimaryCtxRetain(&dev->ctx, cudev)) != ACCEL_CU_SUCCESS) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR,
                       "accel_cuda: cuDevicePrimaryCtxRetain(device %u) failed: %s (%d)",
                       d->device_index, accel_i_cu_error_name(cr), cr);
        accel_i_cu_device_free(dev, false, false, false);
        return cr == ACCEL_CU_ERROR_OUT_OF_MEMORY ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_UNAVAILABLE;
    }
    accel_i_cu_enter(dev);
    if (!accel_i_cu_domain_join(dev)) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "accel_device_create: out of host memory");
        accel_i_cu_device_free(dev, true, false, false);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    n = 0;   /* whether it maps host memory */
    cr = accel_i_cu.DeviceGetAttribute(&n, ACCEL_CU_ATTR_CAN_MAP_HOST_MEMORY, cudev);
    if (cr != ACCEL_CU_SUCCESS || !n) {
        accel_i_log_to(&d->logger, ACCEL_LOG_WARN,
                       "accel_cuda: unavailable: device %u cannot map host memory "
                       "(cuDeviceGetAttribute: %s (%d))",
                       d->device_index, accel_i_cu_error_name(cr), cr);
        accel_i_cu_device_free(dev, true, false, false);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if ((cr = accel_i_cu.StreamCreate(&dev->io, ACCEL_CU_STREAM_NON_BLOCKING)) != ACCEL_CU_SUCCESS) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR,
                       "accel_cuda: cuStreamCreate failed: %s (%d)", accel_i_cu_error_name(cr), cr);
        accel_i_cu_device_free(dev, true, false, false);
        return cr == ACCEL_CU_ERROR_OUT_OF_MEMORY ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_BACKEND;
    }
    if (!accel_i_mutex_init(&dev->io_lock)) {
        accel_i_cu_device_free(dev, true, true, false);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    if (!accel_i_mutex_init(&dev->cache_lock)) {
        accel_i_mutex_destroy(&dev->io_lock);
        accel_i_cu_device_free(dev, true, true, false);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    if (!accel_i_cu_words_init(dev)) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR,
                       "accel_device_create: out of memory for the device's pinned words");
        accel_i_cu_device_free(dev, true, true, true);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    dev->cc = accel_i_cu_limit(dev, ACCEL_CU_ATTR_CC_MAJOR) * 10u +
              (uint32_t)accel_i_cu_attr(dev, ACCEL_CU_ATTR_CC_MINOR);
    dev->memops = accel_i_cu.StreamWriteValue64 &&
                  accel_i_cu_attr(dev, ACCEL_CU_ATTR_CAN_USE_64_BIT_STREAM_MEM_OPS) &&
                  !(no_memops && no_memops[0] && strcmp(no_memops, "0") != 0);
    dev->unified = accel_i_cu_attr(dev, ACCEL_CU_ATTR_UNIFIED_ADDRESSING) != 0;
    accel_i_cu_mempool_make(dev);
    dev->base.qmem_ops = &accel_i_cu_qmem_ops;   /* queue memory at its point (cuda: queue-ordered memory) */
    atomic_init(&dev->batch_memops, dev->memops && accel_i_cu.StreamBatchMemOp ? 1u : 0u);
    nvrtc = accel_i_nvrtc_load(&d->logger) == ACCEL_OK;
    if (!accel_i_cu_fill_info(dev, nvrtc)) {
        accel_i_cu_device_free(dev, true, true, true);
        return ACCEL_ERROR_BACKEND;
    }
    if (!accel_i_cu_domain_enlist(dev)) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "accel_device_create: a recover of another accel device "
                       "on CUDA device %u reset its primary context meanwhile; create the device again",
                       d->device_index);
        accel_i_cu_forget_native(dev);   /* its stream, words and pool went with the context */
        dev->mempool = NULL;
        accel_i_cu_device_free(dev, true, false, true);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    accel_i_cu_vmm_init(dev);
    if (accel_i_cu_can_import_any(dev) || dev->vmm_grain)   /* an importer, an exporter (cuda: imported */
        accel_i_sharers_update(&dev->base, true);           /* memory, exported memory) */
    accel_i_log(&dev->base, ACCEL_LOG_INFO,
                "accel_cuda: device %u: %s, sm_%u, driver CUDA %d.%d, signal points by %s%s",
                d->device_index, dev->base.info.name, dev->cc,
                accel_i_cu_g.driver_version / 1000, accel_i_cu_g.driver_version % 1000 / 10,
                dev->memops ? "cuStreamWriteValue64" : "an event ring",
                nvrtc ? ", NVRTC loaded" : ", no NVRTC (CUDA C source unsupported)");
    *out = &dev->base;
    return ACCEL_OK;
}
static void accel_i_cu_device_destroy(accel_device* d) {
    accel_i_cu_device* dev = accel_i_cu_dev(d);
    accel_i_cu_enter(dev);
    accel_i_sharers_update(d, false);    /* cuda: imported memory: no longer an importer, */
    accel_i_imports_drop_into(d);        /* and its imports go (released while the context lives) */
    accel_i_cu_device_free(dev, true, true, true);
}

/* ==== cuda: buffers ==== */
static accel_cu_result accel_i_cu_memory_new(accel_i_cu_device* dev, accel_i_cu_buffer* buf, size_t size,
                                             const char** call);   /* cuda: exported memory */
static void accel_i_cu_memory_release(accel_i_cu_device* dev, accel_i_cu_buffer* buf);
static accel_result accel_i_cu_buffer_create(accel_device* d, const accel_buffer_desc* desc,
                                             accel_buffer** out) {
    accel_i_cu_device* dev = accel_i_cu_dev(d);
    accel_i_cu_buffer* buf;
    accel_cu_result cr;
    accel_result r;
    if (desc->host_ptr)
        return accel_i_fail(d, ACCEL_ERROR_UNSUPPORTED,
                            "accel_buffer_create: the cuda backend cannot wrap host_ptr memory");
    buf = (accel_i_cu_buffer*)accel_i_dev_alloc(d, sizeof *buf);
    if (!buf) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_buffer_create: out of host memory");
    memset((void*)buf, 0, sizeof *buf);
    accel_i_cu_enter(dev);
    if (desc->memory == ACCEL_MEMORY_HOST) {
        void* p = NULL;
        const unsigned int flags = ACCEL_CU_MEMHOSTALLOC_PORTABLE | ACCEL_CU_MEMHOSTALLOC_DEVICEMAP;
        cr = accel_i_cu.MemHostAlloc(&p, desc->size, flags);
        if (cr == ACCEL_CU_ERROR_OUT_OF_MEMORY && accel_i_cu_graves_settle(dev, true))
            cr = accel_i_cu.MemHostAlloc(&p, desc->size, flags);
        if ((r = accel_i_cu_check(dev, cr, "cuMemHostAlloc")) == ACCEL_OK) {
            cr = accel_i_cu.MemHostGetDevicePointer(&buf->dptr, p, 0);
            if ((r = accel_i_cu_check(dev, cr, "cuMemHostGetDevicePointer")) != ACCEL_OK)
                accel_i_cu_release(dev, ACCEL_I_CU_HOST_MEM, p, 0);
            else { memset(p, 0, desc->size); buf->base.mapped = p; }
        }
    } else {
        const char* call;
        cr = accel_i_cu_memory_new(dev, buf, desc->size, &call);
        if ((r = accel_i_cu_check(dev, cr, call)) == ACCEL_OK) {
            call = "cuMemsetD8Async";
            accel_i_mutex_lock(&dev->io_lock);
            cr = accel_i_cu_io_sync(dev, accel_i_cu.MemsetD8Async(buf->dptr, 0, desc->size, dev->io), &call);
            accel_i_mutex_unlock(&dev->io_lock);
            if ((r = accel_i_cu_check(dev, cr, call)) != ACCEL_OK) accel_i_cu_memory_release(dev, buf);
        }
    }
    if (r != ACCEL_OK) {
        accel_i_dev_free(d, buf, sizeof *buf);
        if (r == ACCEL_ERROR_OUT_OF_MEMORY)
            accel_i_log(d, ACCEL_LOG_ERROR, "accel_buffer_create: out of %s memory for %zu bytes",
                        desc->memory == ACCEL_MEMORY_HOST ? "pinned host" : "device", desc->size);
        return r;
    }
    buf->base.size = desc->size;
    buf->base.memory = desc->memory;
    accel_i_object_init(&buf->base.obj, d, ACCEL_I_BUFFER, desc->label);
    *out = &buf->base;
    return ACCEL_OK;
}
/* A buffer read, write or free that passed the entry check may still be under way when a recover begins
   (waiting for the io lock, say), and a host thread reading a signal's words (a wait, accel_signal_value,
   a raise) may be preempted between its look at the generation and the read: each enters here, and
   goes on only if its object is not stale, while the recover, once the objects are stale, waits until
   none is in before the reset frees their memory (accel_i_cu_group_recover): an accel_i_inside whose
   bar is the device's generation. */
static bool accel_i_cu_use(accel_i_cu_device* dev, const accel_i_object* o) {
    return accel_i_inside_enter(&dev->users, &dev->base.generation, o->generation);
}
static void accel_i_cu_unuse(accel_i_cu_device* dev) { accel_i_inside_leave(&dev->users); }
static void accel_i_cu_buffer_free(accel_buffer* b) {
    accel_i_cu_buffer* buf = (accel_i_cu_buffer*)b;
    accel_i_cu_device* dev = accel_i_cu_dev(b->obj.device);
    accel_i_cu_enter(dev);
    if (!buf->borrowed && accel_i_cu_use(dev, &b->obj)) {   /* else the caller's memory, or the old context's */
        if (b->mapped) accel_i_cu_release(dev, ACCEL_I_CU_HOST_MEM, b->mapped, 0);
        else accel_i_cu_memory_release(dev, buf);
        accel_i_cu_unuse(dev);
    }
    if (buf->vmm_size) accel_i_imports_evict(buf);   /* a recovered one's too: the key is about to go */
    accel_i_dev_free(&dev->base, buf, sizeof *buf);
}
static accel_result accel_i_cu_buffer_io(accel_buffer* b, size_t offset, void* host, size_t size,
                                         bool write) {
    accel_i_cu_buffer* buf = (accel_i_cu_buffer*)b;
    accel_i_cu_device* dev = accel_i_cu_dev(b->obj.device);
    accel_cu_result cr;
    const char* call;
    if (!accel_i_cu_use(dev, &b->obj))
        return accel_i_fail(&dev->base, ACCEL_ERROR_DEVICE_LOST, "accel_buffer_%s: buffer%s%s%s: the device "
                            "was recovered meanwhile", write ? "write" : "read", ACCEL_I_LABEL(&b->obj));
    if (b->mapped) {
        unsigned char* p = (unsigned char*)b->mapped + offset;
        if (write) memmove(p, host, size); else memmove(host, p, size);
        accel_i_cu_unuse(dev);
        return ACCEL_OK;
    }
    accel_i_cu_enter(dev);
    accel_i_mutex_lock(&dev->io_lock);
    cr = write ? accel_i_cu.MemcpyHtoDAsync(buf->dptr + offset, host, size, dev->io)
               : accel_i_cu.MemcpyDtoHAsync(host, buf->dptr + offset, size, dev->io);
    call = write ? "accel_buffer_write: cuMemcpyHtoDAsync" : "accel_buffer_read: cuMemcpyDtoHAsync";
    cr = accel_i_cu_io_sync(dev, cr, &call);
    accel_i_mutex_unlock(&dev->io_lock);
    accel_i_cu_unuse(dev);
    return accel_i_cu_check(dev, cr, call);
}

/* ==== cuda: programs ==== */
/* Loads a module image (cubin, fatbin or PTX) and finds the kernel. PTX JIT errors go to the log. */
static accel_result accel_i_cu_module_load(accel_i_cu_device* dev, const void* image, const char* what,
                                           const char* name, accel_i_cu_program* p) {
    char log[4096];
    int options[2] = { ACCEL_CU_JIT_ERROR_LOG_BUFFER, ACCEL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
    void* values[2];
    accel_cu_result cr;
    log[0] = '\0';
    values[0] = log;
    values[1] = (void*)(uintptr_t)sizeof log;
    cr = accel_i_cu.ModuleLoadDataEx(&p->module, image, 2, options, values);
    if (cr != ACCEL_CU_SUCCESS) {
        log[sizeof log - 1] = '\0';
        accel_i_cu_log_lines(&dev->base.logger, ACCEL_LOG_ERROR, "accel_cuda: JIT: ", log);
        if (accel_i_cu_sticky(cr)) {
            accel_i_cu_lose(dev, cr, "cuModuleLoadDataEx");
            return ACCEL_ERROR_DEVICE_LOST;
        }
        accel_i_log(&dev->base, ACCEL_LOG_ERROR,
                    "accel_program_create '%s': cuModuleLoadDataEx(%s) failed: %s (%d)%s",
                    name, what, accel_i_cu_error_name(cr), cr,
                    cr == ACCEL_CU_ERROR_UNSUPPORTED_PTX_VERSION
                        ? " (the PTX is newer than the driver: use an NVRTC/toolkit no newer than the driver)"
                        : "");
        return cr == ACCEL_CU_ERROR_OUT_OF_MEMORY ? ACCEL_ERROR_OUT_OF_MEMORY :
               cr == ACCEL_CU_ERROR_NO_BINARY_FOR_GPU ? ACCEL_ERROR_UNSUPPORTED : ACCEL_ERROR_COMPILE;
    }
    cr = accel_i_cu.ModuleGetFunction(&p->fn, p->module, name);
    if (cr != ACCEL_CU_SUCCESS) {
        accel_i_cu_release(dev, ACCEL_I_CU_MODULE, p->module, 0);
        p->module = NULL;
        accel_i_log(&dev->base, ACCEL_LOG_ERROR,
                    "accel_program_create: no kernel '%s' in the %s (cuModuleGetFunction: %s; "
                    "declare it extern \"C\")", name, what, accel_i_cu_error_name(cr));
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    return ACCEL_OK;
}

/* The compiled image of a CUDA C source: from the device's cache, or compiled now and cached. */
static accel_result accel_i_cu_source_image(accel_i_cu_device* dev, const char* source, const char* name,
                                            const char** image) {
    accel_i_cu_cache_entry* e;
    accel_result r = ACCEL_OK;
    size_t n = strlen(source) + 1;
    bool cubin;
    accel_i_mutex_lock(&dev->cache_lock);
    for (e = dev->cache; e; e = e->next)
        if (e->source_size == n && memcmp(e->source, source, n) == 0) break;
    if (!e) {
        e = (accel_i_cu_cache_entry*)accel_i_dev_alloc(&dev->base, sizeof *e);
        if (!e) r = ACCEL_ERROR_OUT_OF_MEMORY;
        else {
            memset((void*)e, 0, sizeof *e);
            e->source = (char*)accel_i_dev_alloc(&dev->base, n);
            if (!e->source) r = ACCEL_ERROR_OUT_OF_MEMORY;
            else {
                memcpy(e->source, source, n);
                e->source_size = n;
                r = accel_i_nvrtc_compile(source, name, dev->cc, true, &dev->base.allocator,
                                          &dev->base.logger, &e->image, &e->image_size, &cubin);
            }
            if (r == ACCEL_OK) { e->next = dev->cache; dev->cache = e; }
            else {
                accel_i_dev_free(&dev->base, e->source, e->source_size);
                accel_i_dev_free(&dev->base, e, sizeof *e);
                e = NULL;
            }
        }
        if (r == ACCEL_ERROR_OUT_OF_MEMORY)
            accel_i_log(&dev->base, ACCEL_LOG_ERROR, "accel_program_create '%s': out of host memory", name);
    }
    accel_i_mutex_unlock(&dev->cache_lock);
    *image = e ? e->image : NULL;
    return r;
}

static accel_result accel_i_cu_program_create(accel_device* d, const accel_program_desc* desc,
                                              accel_program** out) {
    accel_i_cu_device* dev = accel_i_cu_dev(d);
    accel_i_cu_program* p;
    accel_result r = ACCEL_ERROR_UNSUPPORTED;
    if (!desc->cubin && !desc->ptx && !desc->cuda_source)
        return accel_i_fail(d, ACCEL_ERROR_UNSUPPORTED,
                            "accel_program_create '%s': no cubin, PTX or CUDA C source in the desc "
                            "(the cuda backend runs no other format)", desc->name ? desc->name : "");
    if (!desc->name || !desc->name[0])
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_program_create: the cuda backend needs desc->name, "
                            "the kernel's entry point");
    p = (accel_i_cu_program*)accel_i_dev_alloc(d, sizeof *p);
    if (!p) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_program_create: out of host memory");
    memset((void*)p, 0, sizeof *p);
    accel_i_cu_enter(dev);
    if (desc->cubin) r = accel_i_cu_module_load(dev, desc->cubin, "cubin", desc->name, p);
    if (!p->module && desc->ptx && r != ACCEL_ERROR_DEVICE_LOST)
        r = accel_i_cu_module_load(dev, desc->ptx, "PTX", desc->name, p);
    if (!p->module && desc->cuda_source && r != ACCEL_ERROR_DEVICE_LOST) {
        const char* image = NULL;
        if ((r = accel_i_cu_source_image(dev, desc->cuda_source, desc->name, &image)) == ACCEL_OK)
            r = accel_i_cu_module_load(dev, image, "compiled CUDA C", desc->name, p);
        else if (r == ACCEL_ERROR_UNAVAILABLE) {
            accel_i_log(d, ACCEL_LOG_ERROR,
                        "accel_program_create '%s': CUDA C source needs NVRTC, which is unavailable",
                        desc->name);
            r = ACCEL_ERROR_UNSUPPORTED;
        }
    }
    if (!p->module) { accel_i_dev_free(d, p, sizeof *p); return r; }
    p->base.buffer_count = desc->buffer_count;
    p->base.constant_count = desc->constant_count;
    accel_i_object_init(&p->base.obj, d, ACCEL_I_PROGRAM, desc->name);
    *out = &p->base;
    return ACCEL_OK;
}
static void accel_i_cu_program_free(accel_program* prog) {
    accel_i_cu_program* p = (accel_i_cu_program*)prog;
    accel_i_cu_device* dev = accel_i_cu_dev(prog->obj.device);
    accel_i_cu_enter(dev);
    if (!accel_i_stale(&prog->obj)) accel_i_cu_release(dev, ACCEL_I_CU_MODULE, p->module, 0);
    accel_i_dev_free(&dev->base, p, sizeof *p);
}

/* ==== cuda: signal points and reaping ==== */
/* ---- timestamps and the trace (see "Timestamps and the trace" in the header) ---- */
/* The reference event (io_lock held): recorded on the idle io stream between two host readings, at
   their middle (recorded again, up to 3 times, while they are 20 us or more apart); taken again once a
   second (cuEventElapsedTime's float keeps ~0.1 us over a few seconds). */
static accel_result accel_i_cu_calibrate(accel_i_cu_device* dev) {
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    if (dev->cal_ev && accel_i_now_ns() - dev->cal_at < 1000000000u) return ACCEL_OK;
    if (!dev->cal_ev) cr = accel_i_cu.EventCreate(&dev->cal_ev, 0);
    if (cr != ACCEL_CU_SUCCESS) {
        dev->cal_ev = NULL;
        return accel_i_cu_check(dev, cr, "cuEventCreate (timestamps)");
    }
    for (int i = 0; i < 3; i++) {
        uint64_t t0 = accel_i_now_ns(), t1;
        cr = accel_i_cu.EventRecord(dev->cal_ev, dev->io);
        if (cr == ACCEL_CU_SUCCESS) cr = accel_i_cu.EventSynchronize(dev->cal_ev);
        t1 = accel_i_now_ns();
        if (cr != ACCEL_CU_SUCCESS) {
            dev->cal_at = 0;
            return accel_i_cu_check(dev, cr, "cuEventRecord/cuEventSynchronize (timestamps)");
        }
        dev->cal_host = t0 + (t1 - t0) / 2;
        dev->cal_at = t1;
        if (t1 - t0 < 20000u) break;
    }
    return ACCEL_OK;
}
/* A reached timestamp point: its event's time on the host clock, within [enqueued, now] (where the truth
   is). Without a recorded event (the fallback of accel_i_cu_point_add, after a stream synchronize): now. */
static uint64_t accel_i_cu_stamp_ns(accel_i_cu_device* dev, const accel_i_cu_point* e) {
    uint64_t ns = accel_i_now_ns();
    float ms = 0;
    accel_cu_result cr;
    accel_i_mutex_lock(&dev->io_lock);
    if (e->stamp_recorded && accel_i_cu_calibrate(dev) == ACCEL_OK) {
        cr = accel_i_cu.EventElapsedTime(&ms, dev->cal_ev, e->sev);
        if (cr == ACCEL_CU_SUCCESS) {
            double d = (double)ms * 1e6;
            uint64_t t = d >= 0 ? dev->cal_host + (uint64_t)(d + 0.5) : dev->cal_host - (uint64_t)(-d + 0.5);
            ns = t < e->stamp_enq ? e->stamp_enq : t < ns ? t : ns;
        } else {
            accel_i_cu_check(dev, cr, "cuEventElapsedTime (timestamps)");
        }
    }
    accel_i_mutex_unlock(&dev->io_lock);
    return ns;
}
/* Writes a timestamp's value into its buffer (HOST: the pinned mapping; DEVICE: a copy on the io stream). */
static void accel_i_cu_stamp_write(accel_i_cu_device* dev, const accel_i_cmd* c, uint64_t ns) {
    accel_buffer* dst = c->u.stamp.dst;
    const char* call = "accel_queue_timestamp (cuMemcpyHtoDAsync)";
    accel_cu_result cr;
    if (dst->memory == ACCEL_MEMORY_HOST) {
        memcpy((unsigned char*)dst->mapped + c->u.stamp.offset, &ns, 8);
        return;
    }
    accel_i_mutex_lock(&dev->io_lock);
    cr = accel_i_cu_io_sync(dev, accel_i_cu.MemcpyHtoDAsync(accel_i_cu_dptr(dst) + c->u.stamp.offset, &ns, 8,
                                                            dev->io), &call);
    accel_i_mutex_unlock(&dev->io_lock);
    if (cr != ACCEL_CU_SUCCESS) accel_i_cu_check(dev, cr, call);
}
/* A reached point's timestamp (before any later point of the queue raises its signal) and trace: the
   command's span from where the queue's last one ended (or its enqueueing) to its end; a signal's span
   at that end, before the raise (its mark must be there for the waits it releases); none for a signal
   that failed meanwhile (a failed wait the device was handed). A time no earlier than the queue's last:
   the reference a conversion uses is taken again each second (accel_i_cu_calibrate), and two stamps
   either side of that, ns apart on the device, could come out in the wrong order by up to the half
   brackets of the two references. */
static void accel_i_cu_stamp_apply(accel_i_cu_queue* q, const accel_i_cu_point* e, bool lost) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    bool traced = dev->base.trace != NULL && !lost;
    if (e->stamp) {
        uint64_t t = lost ? 0 : accel_i_cu_stamp_ns(dev, e);
        if (!lost && t < q->stamp_t) t = q->stamp_t;
        if (!lost) q->stamp_t = t;
        if (!lost && e->stamp->kind == ACCEL_I_CMD_TIMESTAMP) accel_i_cu_stamp_write(dev, e->stamp, t);
        if (traced) {
            uint64_t t0 = q->trace_t > e->stamp_enq ? q->trace_t : e->stamp_enq;
            /* ended before t0: empty at t0 */
            q->trace_t = accel_i_trace_cmd(&q->base, e->stamp, t0, t > t0 ? t : t0);
        }
        atomic_fetch_sub(&q->stamps_pending, 1u);
    }
    if (traced && e->signal && !accel_i_failed(accel_i_signal_value(e->signal))) {
        accel_i_cmd c;
        memset(&c, 0, sizeof c);
        c.kind = ACCEL_I_CMD_SIGNAL;
        c.u.sig.signal = e->signal;
        c.u.sig.value = e->value;
        if (q->trace_t < e->stamp_enq) q->trace_t = e->stamp_enq;   /* after a host call, say */
        q->trace_t = accel_i_trace_cmd(&q->base, &c, q->trace_t, q->trace_t);
    }
}
/* ---- signal points: the ring, reaping, the gates a queue's waits watch ---- */
/* A reached point, but for its batch: its timestamp and trace, then raise its signal (failed when the
   device is lost). */
static void accel_i_cu_point_reach(accel_i_cu_queue* q, accel_i_cu_point* e, bool lost) {
    for (uint32_t i = 0; i < e->nimplied && !lost; i++)   /* lost: the words may be gone with a context */
        accel_i_atomic_max(e->implied[i].word, e->implied[i].seq);
    accel_i_cu_stamp_apply(q, e, lost);
    /* a stale queue's waits stay counted, reached or not: its stream may sit in one until the recover
       releases the words, and the recover forgets the count after the reset (cuda: recovery) */
    if (e->waits && !accel_i_stale(&q->base.obj))
        accel_i_cu_waits_add(accel_i_cu_dev(q->base.obj.device), -(int)e->waits);
    if (e->holds) atomic_fetch_sub(&accel_i_cu_dev(q->base.obj.device)->reap_needed, e->holds);
    if (e->signal) accel_i_raise(e->signal, lost ? accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST) : e->value);
    if (e->mirrored)   /* the GPU's store may have lowered the mirror below a host raise */
        accel_i_cu_signal_publish(e->signal, accel_i_host_signal_value(e->signal));
    if (e->staging && !accel_i_stale(&q->base.obj)) {   /* keep the larger of it and the cached one */
        void* drop = e->staging;
        accel_i_spin_lock(&q->ring_lock);
        if (e->staging_size > q->staging_cache_size) {
            drop = q->staging_cache;
            q->staging_cache = e->staging;
            q->staging_cache_size = e->staging_size;
        }
        accel_i_spin_unlock(&q->ring_lock);
        if (drop) accel_i_cu_release(accel_i_cu_dev(q->base.obj.device), ACCEL_I_CU_HOST_MEM, drop, 0);
    }
}
/* Then its batch completes (its references go: a release may wait for the device, see cuda: releases);
   returns 1 if it had one, for the caller to count in q->done (a reap counts a run's batches at once:
   one atomic add, not one a point). */
static uint32_t accel_i_cu_point_done(accel_i_cu_queue* q, accel_i_cu_point* e) {
    if (!e->batch) return 0;
    accel_i_batch_complete(&q->base, e->batch);
    return 1;
}
/* Applies one reached point: its timestamp and trace, then raise its signal, release its batch. */
static void accel_i_cu_point_apply(accel_i_cu_queue* q, accel_i_cu_point* e, bool lost) {
    accel_i_cu_point_reach(q, e, lost);
    if (accel_i_cu_point_done(q, e)) accel_i_event_add(&q->done, 1);
}

/* A poller of in-flight work: the core's pace (accel_i_poll_slice), at least 0.25 us, at most
   ACCEL_CUDA_POLL_MAX_NS. */
static uint64_t accel_i_cu_poll_slice(uint64_t since) {
    return accel_i_poll_slice(since, 250u, ACCEL_CUDA_POLL_MAX_NS);
}

/* Slot i of q's ring, 0 the oldest point (ring_lock held, or the enqueuer beyond the count). The ring's
   capacity is a power of two (16, then doubling: accel_i_cu_ring_grow), so a mask, not a division (a
   step of a chain indexes it three or four times). */
static accel_i_cu_point* accel_i_cu_ring_at(const accel_i_cu_queue* q, uint32_t i) {
    return &q->ring[(q->ring_head + i) & (q->ring_cap - 1u)];
}
/* The sequence number up to which q's oldest points are reached: all for a gone queue; the progress
   word in the memops mode; in the event-ring mode the oldest point's event, asked outside ring_lock (a
   driver call; *entered: the context was made current for it). */
static uint64_t accel_i_cu_reached_upto(accel_i_cu_queue* q, bool* entered) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    uint64_t seq;
    bool recorded;
    accel_cu_event ev;
    accel_cu_result cr;
    if (accel_i_cu_gone(q)) return UINT64_MAX;
    if (dev->memops) return atomic_load_explicit(q->progress.host, memory_order_acquire);
    accel_i_spin_lock(&q->ring_lock);
    if (q->ring_count == 0) { accel_i_spin_unlock(&q->ring_lock); return q->reached; }
    seq = accel_i_cu_ring_at(q, 0)->seq;
    recorded = accel_i_cu_ring_at(q, 0)->recorded;
    ev = accel_i_cu_ring_at(q, 0)->ev;
    accel_i_spin_unlock(&q->ring_lock);
    if (seq <= q->reached || !recorded) return q->reached;
    if (!accel_i_cu_use(dev, &q->base.obj)) return seq;   /* stale since the look above: applied as lost */
    if (!*entered) { accel_i_cu_enter(dev); *entered = true; }
    cr = accel_i_cu.EventQuery(ev);
    accel_i_cu_unuse(dev);
    if (cr == ACCEL_CU_SUCCESS) {   /* the progress word reads it, as the GPU's writes do */
        q->reached = seq;
        accel_i_atomic_max(q->progress.host, seq);
    } else if (cr == ACCEL_CU_ERROR_NOT_READY ||
               accel_i_cu_check(dev, cr, "cuEventQuery") == ACCEL_ERROR_DEVICE_LOST) {
        /* a loss: its points apply as failed once it shows (gone). Not yet: another thread's
           accel_i_cu_lose may still be failing the signals, lost not shown (the point read success) */
        return q->reached;
    }
    return seq;
}
/* Takes up to `max` of the oldest points reached by `upto` out of the ring into run[] (their slots keep
   only their events), under one ring_lock. Returns how many. A point with a timestamp (or traced)
   goes alone, first in its run, and takes its timing event with it: its apply reads the event after
   the slot is free, and the enqueuer may take the slot for a new stamp at once (a full ring), which
   must not record the event being read. The slot gets the queue's spare instead (NULL: it makes one),
   and the apply gives the event back (accel_i_cu_sev_give). */
static uint32_t accel_i_cu_ring_take(accel_i_cu_queue* q, uint64_t upto, accel_i_cu_point* run, uint32_t max) {
    uint32_t n = 0;
    accel_i_spin_lock(&q->ring_lock);
    while (n < max && n < q->ring_count) {
        accel_i_cu_point* slot = accel_i_cu_ring_at(q, 0);
        if (slot->seq > upto || (n && slot->stamp)) break;
        run[n++] = *slot;   /* now: a batch may have joined it (accel_i_cu_batch_joins) */
        if (slot->stamp) {
            slot->sev = q->sev_spare;
            q->sev_spare = NULL;
        }
        slot->signal = NULL;
        slot->batch = NULL;
        slot->staging = NULL;
        slot->recorded = false;
        slot->stamp = NULL;
        slot->stamp_recorded = false;
        q->ring_head = (q->ring_head + 1) & (q->ring_cap - 1u);
        q->ring_count--;
        if (run[n - 1].stamp) break;
    }
    accel_i_spin_unlock(&q->ring_lock);
    return n;
}
/* A taken stamp's timing event, its time read: the queue's spare again. The take emptied the spare and
   a run holds one stamp at most, and reaps of a queue go one at a time (reap_lock): none is there. */
static void accel_i_cu_sev_give(accel_i_cu_queue* q, accel_cu_event ev) {
    accel_i_spin_lock(&q->ring_lock);
    q->sev_spare = ev;
    accel_i_spin_unlock(&q->ring_lock);
}
/* Does point e's raise fold into the next one's (`next`, applied right after it in the same reap)? When
   both raise one signal, the next to at least e's value: a chain's signal is raised once a reap, not
   once a point (what the raise wakes sees the larger value). Only where nothing can make the folded
   raise late: neither has a timestamp (the trace neither), e no mirror write to publish again, no GPU
   wait's hold and no staging to release, the next no GPU waits to retire (a release may wait for the
   device), and e's batch completes only after the raise (accel_i_cu_reap). Its signal stays alive
   meanwhile: the next point's command holds it until that point applies. */
static bool accel_i_cu_raise_folds(const accel_i_cu_queue* q, const accel_i_cu_point* e,
                                   const accel_i_cu_point* next) {
    return e->signal && e->signal == next->signal && next->value >= e->value && !e->stamp && !next->stamp &&
           !e->mirrored && !e->holds && !e->staging && !next->waits && !q->base.obj.device->trace;
}
/* Applies the queue's reached points in order, a run of them at a time. Returns true while points
   remain in flight. */
#define ACCEL_I_CU_REAP_RUN 16u
static bool accel_i_cu_reap(accel_i_cu_queue* q) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    bool pending;
    /* the context, made current only for a driver call (reaping reads words) */
    bool entered = false, reaping;
    if (atomic_exchange_explicit(&q->reap_lock, 1u, memory_order_acquire)) return true;
    reaping = accel_i_cu_reap_begin();
    for (;;) {
        accel_i_cu_point run[ACCEL_I_CU_REAP_RUN];   /* the oldest points, copied out once reached */
        uint32_t n = accel_i_cu_ring_take(q, accel_i_cu_reached_upto(q, &entered), run, ACCEL_I_CU_REAP_RUN),
                 batches = 0;
        if (n == 0) break;
        atomic_thread_fence(memory_order_acquire);
        for (uint32_t i = 0, done = 0; i < n; i++) {
            bool lost = accel_i_cu_gone(q), folds;
            if (!entered && (run[i].staging || run[i].stamp)) {   /* a release, a timestamp */
                accel_i_cu_enter(dev);
                entered = true;
            }
            folds = i + 1 < n && !lost && accel_i_cu_raise_folds(q, &run[i], &run[i + 1]);
            if (folds) run[i].signal = NULL;
            accel_i_cu_point_reach(q, &run[i], lost);
            if (run[i].stamp && run[i].sev) accel_i_cu_sev_give(q, run[i].sev);
            if (folds) continue;   /* its batch completes after the raise it folded into */
            for (; done <= i; done++) batches += accel_i_cu_point_done(q, &run[done]);
        }
        if (batches) accel_i_event_add(&q->done, batches);
    }
    accel_i_spin_lock(&q->ring_lock);
    pending = q->ring_count > 0;
    accel_i_spin_unlock(&q->ring_lock);
    atomic_store_explicit(&q->reap_lock, 0u, memory_order_release);
    accel_i_cu_reap_end(dev, reaping);
    return pending;
}
/* Reaps every queue of the device (waiters do this so that they see values as soon as they poll). */
static bool accel_i_cu_reap_device(accel_i_cu_device* dev) {
    bool pending = false, reaping = accel_i_cu_reap_begin();   /* the releases after queues_lock */
    accel_i_spin_lock(&dev->queues_lock);
    for (accel_i_cu_queue* q = dev->queues; q; q = q->next_queue) pending |= accel_i_cu_reap(q);
    accel_i_spin_unlock(&dev->queues_lock);
    accel_i_cu_reap_end(dev, reaping);
    return pending;
}

/* Grows the ring (the enqueuer, ring_lock held). Keeps every slot's event for reuse. */
static bool accel_i_cu_ring_grow(accel_i_cu_queue* q) {
    accel_device* d = q->base.obj.device;
    uint32_t cap = q->ring_cap ? q->ring_cap * 2 : 16;
    accel_i_cu_point* n = (accel_i_cu_point*)accel_i_dev_alloc(d, (size_t)cap * sizeof *n);
    if (!n) return false;
    memset(n, 0, (size_t)cap * sizeof *n);
    for (uint32_t i = 0; i < q->ring_cap; i++) n[i] = *accel_i_cu_ring_at(q, i);
    accel_i_dev_free(d, q->ring, (size_t)q->ring_cap * sizeof *q->ring);
    q->ring = n;
    q->ring_head = 0;
    q->ring_cap = cap;
    return true;
}

/* The enqueuer's look at the ring (ring_lock held): ring_tail and ring_free hold until it adds a point. */
static void accel_i_cu_ring_mine(accel_i_cu_queue* q) {
    q->ring_tail = (q->ring_head + q->ring_count) & (q->ring_cap - 1u);
    q->ring_free = q->ring_cap - q->ring_count;
}
/* Room in the ring for n more points (the enqueuer); false when out of host memory. */
static bool accel_i_cu_ring_room(accel_i_cu_queue* q, uint32_t n) {
    bool room = true;
    if (q->ring_free >= n) return true;
    accel_i_spin_lock(&q->ring_lock);
    while (room && q->ring_cap - q->ring_count < n) room = accel_i_cu_ring_grow(q);
    accel_i_cu_ring_mine(q);
    accel_i_spin_unlock(&q->ring_lock);
    return room;
}

/* Drops the queue's listed host-raised GPU waits that are reached (all, when nothing is in flight;
   adding: a point is enqueued that is not in the ring yet, so something is). */
static bool accel_i_cu_gate_held(const accel_i_cu_queue* q, uint32_t i, uint64_t passed) {
    const accel_i_a64* word = q->gates[i].word;
    /* the word only while the point after it is not passed: until then the batch of the wait holds its
       signal, and the signal its device's words (afterwards they may be gone with another device) */
    return passed < q->gates[i].after && (!word || atomic_load(word) < q->gates[i].value);
}
/* Gates on one word with values in order (a host gate raised step by step, the common case) are
   released in list order (`after` grows with the list too): the released ones are a prefix, and the
   first one held ends the look, so a queue running ahead of its gate by many steps does not read every
   gate's word at every point. */
static void accel_i_cu_gates_prune(accel_i_cu_queue* q, bool adding) {
    uint32_t n = 0, i = 0;
    uint64_t passed;
    bool idle;
    if (q->ngates == 0) return;
    accel_i_spin_lock(&q->ring_lock);
    idle = q->ring_count == 0 && !q->dirty && !adding;
    accel_i_spin_unlock(&q->ring_lock);
    if (idle) { q->ngates = 0; return; }
    passed = atomic_load_explicit(q->progress.host, memory_order_acquire);
    if (q->gates_one_word) {
        while (i < q->ngates && !accel_i_cu_gate_held(q, i, passed)) i++;
        if (i) memmove(q->gates, q->gates + i, (q->ngates - i) * sizeof q->gates[0]);
        q->ngates -= i;
        return;
    }
    for (; i < q->ngates; i++)
        if (accel_i_cu_gate_held(q, i, passed)) q->gates[n++] = q->gates[i];
    q->ngates = n;
    q->gates_one_word = n == 0 || q->gates[0].word;
    for (i = 1; i < n && q->gates_one_word; i++)
        q->gates_one_word = q->gates[i].word == q->gates[0].word && q->gates[i].value >= q->gates[i - 1].value;
}
/* A GPU wait for a host-raised value goes into the stream: a new entry at the list's end (oldest first),
   or, with the list full, into the newest entry, which then holds from its own wait to the point after
   this one (word NULL: only passing that point releases it). Once the older entries are released,
   newer waits get entries of their own again, so the work counted behind the oldest follows the GPU
   through a long pipeline of such waits. */
static void accel_i_cu_gate_add(accel_i_cu_queue* q, const accel_i_a64* word, uint64_t value) {
    uint32_t n;
    accel_i_cu_gates_prune(q, false);
    if ((n = q->ngates) == ACCEL_I_CU_GATES) {
        q->gates[n - 1].word = NULL;
        q->gates[n - 1].after = q->issued + 1;
        q->gates_one_word = false;
        return;
    }
    q->gates_one_word = n == 0 ? true : q->gates_one_word && word == q->gates[n - 1].word &&
                                        value >= q->gates[n - 1].value;
    q->gates[n].word = word;
    q->gates[n].value = value;
    q->gates[n].after = q->issued + 1;   /* the point after the wait: passed it */
    q->gates[n].at = q->enqueued;
    q->ngates = n + 1;
}
/* Is a GPU wait on s's mirror possibly waiting (it asked for more than the mirror holds)? A point of s
   then has the GPU write the mirror too (see accel_i_cu_mirror_by_gpu), or is one the host must apply. */
static bool accel_i_cu_mirror_waited(accel_i_cu_signal* cs) {   /* a hint without point_lock, exact with it */
    return atomic_load_explicit(&cs->mirror_wanted, memory_order_relaxed) > atomic_load(cs->mirror.host);
}
/* Mark i of cs's ring, 0 the oldest. */
static const accel_i_cu_mark* accel_i_cu_mark_at(const accel_i_cu_signal* cs, uint32_t i) {
    return &cs->points[(cs->points_head + i) % ACCEL_I_CU_POINTS];
}
/* The oldest mark of cs's ring whose value reaches v, NULL when none (point_lock held). Values mostly
   rise along the ring: with no descent in it, the marks that reach v are its newest ones, and the
   look goes from the newest back (a chain's wait for the step before: one or two marks, not sixteen). */
static const accel_i_cu_mark* accel_i_cu_first_mark(const accel_i_cu_signal* cs, uint64_t v) {
    const accel_i_cu_mark* found = NULL;
    if (cs->evicted >= v) return NULL;
    if (cs->descents == 0) {
        for (uint32_t i = cs->points_count; i-- > 0 && accel_i_cu_mark_at(cs, i)->value >= v;)
            found = accel_i_cu_mark_at(cs, i);
        return found;
    }
    for (uint32_t i = 0; i < cs->points_count; i++)
        if (accel_i_cu_mark_at(cs, i)->value >= v) return accel_i_cu_mark_at(cs, i);
    return NULL;
}
/* Remembers the newest point of a CUDA signal of this device: a GPU wait for a value up to `value` can
   watch this queue's progress word reach `seq` (cuda: queue segments), unless a host-raised wait holds
   the point up (accel_i_cu_mark). Returns whether a GPU wait on the mirror may wait for the point: one
   enqueued since the caller looked (accel_i_cu_point_add), which missed the point's mark. Under the
   signal's point_lock, as the waits' look at the marks and their mirror_wanted: one of the two sees
   the other. */
static bool accel_i_cu_point_note(accel_i_cu_queue* q, accel_signal* s, uint64_t value, uint64_t seq) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    accel_i_cu_mark* m;
    bool stamps = atomic_load(&q->stamps_pending) != 0, waited;
    if (!stamps) accel_i_cu_gates_prune(q, true);
    accel_i_spin_lock(&cs->point_lock);
    waited = accel_i_cu_mirror_waited(cs);
    if (stamps) {   /* no mark: a GPU wait would pass before the host wrote the timestamp */
        accel_i_spin_unlock(&cs->point_lock);
        return waited;
    }
    if (cs->points_count == ACCEL_I_CU_POINTS) {   /* the oldest goes */
        uint64_t v = cs->points[cs->points_head].value;
        if (v > cs->evicted) cs->evicted = v;
        cs->points_head = (cs->points_head + 1) % ACCEL_I_CU_POINTS;
        cs->descents -= accel_i_cu_mark_at(cs, 0)->value < v;
        cs->points_count--;
    }
    if (cs->points_count) cs->descents += value < accel_i_cu_mark_at(cs, cs->points_count - 1)->value;
    m = &cs->points[(cs->points_head + cs->points_count++) % ACCEL_I_CU_POINTS];
    m->word = q->progress.dptr;
    m->progress = q->progress.host;
    m->seq = seq;
    m->value = value;
    m->opaque = q->ngates > 1 || (q->ngates == 1 && !q->gates[0].word);
    m->gate = !m->opaque && q->ngates == 1 ? q->gates[0].word : NULL;
    m->gate_value = m->gate ? q->gates[0].value : 0;
    if (value > atomic_load_explicit(&cs->marked, memory_order_relaxed))
        atomic_store_explicit(&cs->marked, value, memory_order_relaxed);
    accel_i_spin_unlock(&cs->point_lock);
    return waited;
}
/* A point of s enqueued behind a GPU wait that the host releases is one that GPU waits elsewhere watch
   through s's mirror (see accel_i_cu_mark), so the GPU writes the mirror there too, before the point's
   progress write: those waits are then released GPU to GPU, when the work before the point is done,
   instead of when the host has reaped the point and raised the mirror (a host round trip per hop, and
   up to 1/32 of the time waited before the reaper notices, for every hop of a pipeline behind a host
   gate). The write stores a value (the larger of v and the mirror now), so it may lower a mirror that
   the host raised meanwhile (a host set, a failure): the host raises it to the signal's value again
   when it applies the point (accel_i_cu_point_apply), and a waiter that read the lower value waits
   until then. Not while the queue's timestamps are pending or the device is traced: a value must then
   reach GPU waiters through the host, after the timestamp or the trace's flow source. */
static bool accel_i_cu_mirror_allowed(accel_i_cu_queue* q, const accel_signal* s) {
    const accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    if (!dev->memops || dev->base.trace || s->obj.device != q->base.obj.device) return false;
    return atomic_load(&q->stamps_pending) == 0;
}
/* The same holds for a point of s that a GPU wait on s's mirror may wait for (a wait enqueued before
   any point promised its value, e.g. on another thread: accel_i_cu_mirror_waited): the GPU writes the
   mirror, and that waiter is released GPU to GPU instead of when some thread applies the point.
   `allowed`: accel_i_cu_mirror_allowed, which the caller looked at once for the point. */
static bool accel_i_cu_mirror_by_gpu(accel_i_cu_queue* q, accel_signal* s, bool allowed) {
    if (!allowed) return false;
    /* not pruned: one already released only costs a needless write */
    if (q->ngates) return true;
    /* a wait that comes meanwhile: accel_i_cu_point_note's look */
    return accel_i_cu_mirror_waited((accel_i_cu_signal*)s);
}
/* A point the host must apply before a GPU wait can go on (the GPU cannot write the mirror there):
   the device's workers poll at the waiters' pace until it is applied. */
static void accel_i_cu_hold(accel_i_cu_queue* q) {
    q->holds++;
    atomic_fetch_add(&accel_i_cu_dev(q->base.obj.device)->reap_needed, 1u);
}
/* cuStreamWriteValue64 of value to addr on q's stream (again where the trusted context was not current). */
static accel_cu_result accel_i_cu_write(accel_i_cu_queue* q, accel_cu_deviceptr addr, uint64_t value) {
    const unsigned int flags = ACCEL_CU_STREAM_WRITE_VALUE_DEFAULT;
    accel_cu_result cr = accel_i_cu.StreamWriteValue64(q->stream, addr, value, flags);
    if (accel_i_cu_retry(accel_i_cu_dev(q->base.obj.device), cr))
        cr = accel_i_cu.StreamWriteValue64(q->stream, addr, value, flags);
    return cr;
}
static accel_cu_result accel_i_cu_mirror_write(accel_i_cu_queue* q, accel_signal* s, uint64_t value) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    uint64_t now = atomic_load(cs->mirror.host);
    accel_cu_result cr = accel_i_cu_write(q, cs->mirror.dptr, now > value ? now : value);
    if (cr == ACCEL_CU_SUCCESS) { q->dirty = true; q->enqueued++; }   /* the progress write goes after it */
    return cr;
}
/* A point of s whose mirror the GPU writes: the mirror write, then the progress write of seq (the point
   applies after both: accel_i_cu_point_apply). One cuStreamBatchMemOp where the driver takes it, which
   enqueues its operations in their order (a point behind a host gate is then one driver call, as a raw
   stream's event record); else, or once the driver refused one (not for a lost device), two writes. */
static accel_cu_result accel_i_cu_mirror_point(accel_i_cu_queue* q, accel_signal* s, uint64_t value,
                                               uint64_t seq) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    accel_cu_result cr;
    if (atomic_load_explicit(&dev->batch_memops, memory_order_relaxed)) {
        accel_cu_batch_memop ops[2];
        uint64_t now = atomic_load(cs->mirror.host);
        memset(ops, 0, sizeof ops);
        ops[0].write_value.operation = ops[1].write_value.operation = ACCEL_CU_STREAM_MEM_OP_WRITE_VALUE_64;
        ops[0].write_value.address = cs->mirror.dptr;
        ops[0].write_value.value64 = now > value ? now : value;
        ops[1].write_value.address = q->progress.dptr;
        ops[1].write_value.value64 = seq;
        cr = accel_i_cu.StreamBatchMemOp(q->stream, 2, ops, 0);
        if (accel_i_cu_retry(dev, cr)) cr = accel_i_cu.StreamBatchMemOp(q->stream, 2, ops, 0);
        if (cr == ACCEL_CU_SUCCESS) {
            q->enqueued++;   /* one enqueue, as a launch (accel_i_cu_stream_full) */
            q->issued = seq;
            q->dirty = false;
            return cr;
        }
        if (accel_i_cu_sticky(cr) || accel_i_lost(&dev->base)) return cr;
        if (atomic_exchange(&dev->batch_memops, 0u))
            accel_i_log(&dev->base, ACCEL_LOG_WARN, "accel_cuda: cuStreamBatchMemOp failed: %s (%d); "
                        "signal points write the mirror and the progress word in two calls",
                        accel_i_cu_error_name(cr), cr);
    }
    cr = accel_i_cu_mirror_write(q, s, value);
    if (cr == ACCEL_CU_SUCCESS) cr = accel_i_cu_write(q, q->progress.dptr, seq);
    if (cr == ACCEL_CU_SUCCESS) { q->issued = seq; q->dirty = false; q->enqueued++; }
    return cr;
}
/* A point of s is in flight now: host waiters that slept for want of one wake up and reap. */
static void accel_i_cu_pointed(accel_signal* s) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    atomic_fetch_add(&cs->pointed, 1u);
    accel_i_event_notify(accel_i_host_signal_event(s));
}
/* The point takes what the queue's stream waited for since the last point: the waits it retires, the
   holds it drops, the points it implies (event ring mode). */
static void accel_i_cu_point_takes(accel_i_cu_queue* q, accel_i_cu_point* e) {
    e->waits = q->waits;
    e->holds = q->holds;
    e->nimplied = q->nimplied;
    if (q->nimplied) memcpy(e->implied, q->implied, sizeof e->implied);   /* the memops mode has none */
    q->waits = q->holds = q->nimplied = 0;
}
/* Every field of point e but its events (a slot keeps those for reuse), for a point of s reaching
   value (NULL: none) that completes batch (NULL: none) or ends command stamp (NULL: none). */
static void accel_i_cu_point_init(accel_i_cu_point* e, accel_signal* s, uint64_t value, accel_i_batch* batch,
                                  const accel_i_cmd* stamp) {
    e->seq = 0;
    e->signal = s;
    e->value = value;
    e->batch = batch;
    e->staging = NULL;
    e->staging_size = 0;
    e->recorded = e->stamp_recorded = e->mirrored = false;
    e->stamp = stamp;
    e->stamp_enq = 0;
    e->waits = e->holds = e->nimplied = 0;   /* implied[] is read up to nimplied */
}
/* Adds a point after everything enqueued so far: a progress write (or an event) when GPU work was
   enqueued since the last point, else the last point's sequence number. When the ring cannot grow or
   the point cannot be enqueued, waits for the stream and applies the point at once (from its uncounted
   slot: nothing that fallback runs adds a point, which would take the same slot). */
static void accel_i_cu_point_add(accel_i_cu_queue* q, accel_signal* s, uint64_t value, accel_i_batch* batch,
                                 const accel_i_cmd* stamp) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_i_cu_point local, *e = &local;   /* the ring's next slot, filled in place, where there is one */
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    bool gone = accel_i_cu_gone(q), slot = !gone && accel_i_cu_ring_room(q, 1);
    /* s of this device, and whether the GPU may write its mirror: looked at once (a stamp only rises
       on this thread, so a later look could only allow what this one did not: a hold covers that) */
    bool mine = s && s->obj.device == q->base.obj.device, allowed;
    uint64_t seq;
    if (slot) e = &q->ring[q->ring_tail];   /* only the enqueuer touches slots beyond the count */
    else local.ev = local.sev = NULL;
    accel_i_cu_point_init(e, s, value, batch, stamp);
    if (stamp) atomic_fetch_add(&q->stamps_pending, 1u);
    if (stamp || dev->base.trace) e->stamp_enq = accel_i_now_ns();
    if (gone && accel_i_stale(&q->base.obj)) q->waits = q->holds = 0;   /* the recover dropped them */
    if (batch && !accel_i_stale(&q->base.obj)) {   /* a stale queue's went with the old context */
        e->staging = q->staging;
        e->staging_size = q->staging_size;
        q->staging = NULL;
        q->staging_size = q->staging_used = 0;
    }
    allowed = mine && accel_i_cu_mirror_allowed(q, s);
    if (slot) {
        if (stamp) {   /* its timing event, then a point of its own after it */
            accel_i_cu_enter_sure(dev);
            if (!e->sev) cr = accel_i_cu.EventCreate(&e->sev, 0);
            if (cr == ACCEL_CU_SUCCESS) cr = accel_i_cu.EventRecord(e->sev, q->stream);
            e->stamp_recorded = cr == ACCEL_CU_SUCCESS;
            q->dirty = true;
            q->enqueued++;
        }
        /* e->mirrored once a mirror write may be enqueued: the apply publishes the host's value again */
        if (cr == ACCEL_CU_SUCCESS && accel_i_cu_mirror_by_gpu(q, s, allowed)) {
            e->mirrored = true;
            cr = accel_i_cu_mirror_point(q, s, value, q->issued + 1);
        } else if (cr == ACCEL_CU_SUCCESS && mine && dev->memops && !allowed) {
            accel_i_cu_hold(q);   /* traced or timestamps pending: GPU waits on s go through the host */
        }
        e->seq = q->issued;
        if (q->dirty) {
            e->seq = q->issued + 1;
            if (dev->memops) {
                cr = accel_i_cu_write(q, q->progress.dptr, e->seq);
            } else {
                if (!e->ev) {
                    accel_i_cu_enter_sure(dev);
                    cr = accel_i_cu.EventCreate(&e->ev, ACCEL_CU_EVENT_DISABLE_TIMING);
                }
                if (cr == ACCEL_CU_SUCCESS) cr = accel_i_cu.EventRecord(e->ev, q->stream);
                if (accel_i_cu_retry(dev, cr)) cr = accel_i_cu.EventRecord(e->ev, q->stream);
                e->recorded = cr == ACCEL_CU_SUCCESS;
            }
            if (cr == ACCEL_CU_SUCCESS) { q->issued = e->seq; q->dirty = false; q->enqueued++; }
        }
        /* a GPU wait on s's mirror enqueued since the look above missed the mark: the mirror write,
           and a point after it (the point applies after the write, see accel_i_cu_point_apply) */
        if (cr == ACCEL_CU_SUCCESS && mine && dev->memops && accel_i_cu_point_note(q, s, value, e->seq) &&
            !e->mirrored && allowed) {
            e->mirrored = true;
            cr = accel_i_cu_mirror_point(q, s, value, q->issued + 1);
            if (cr == ACCEL_CU_SUCCESS) e->seq = q->issued;
        }
        if (cr == ACCEL_CU_SUCCESS) {
            accel_i_cu_point_takes(q, e);
            seq = e->seq;   /* once counted, the slot is the reaper's */
            accel_i_spin_lock(&q->ring_lock);
            q->ring_count++;
            accel_i_spin_unlock(&q->ring_lock);
            q->ring_tail = (q->ring_tail + 1) & (q->ring_cap - 1u);
            q->ring_free--;
            /* the event ring's mark once the ring holds the point: a GPU wait that finds the mark finds
               the point's event there, or the point reached (cuda: GPU waits in the event-ring mode) */
            if (mine && !dev->memops) accel_i_cu_point_note(q, s, value, seq);
            if (mine) accel_i_cu_pointed(s);
            return;
        }
        accel_i_cu_check(dev, cr, !dev->memops ? "cuEventRecord"
                                  : atomic_load(&dev->batch_memops) ? "cuStreamBatchMemOp (a point)"
                                  : "cuStreamWriteValue64");
    }
    /* fallback (an uncounted slot keeps its events): everything before the point completes first (or
       the device is lost) */
    if (!gone) accel_i_cu_enter(dev);
    while (accel_i_cu_reap(q)) accel_i_yield();
    if (!gone) {
        cr = accel_i_cu.StreamSynchronize(q->stream);
        if (cr != ACCEL_CU_SUCCESS) accel_i_cu_check(dev, cr, "cuStreamSynchronize");
    }
    accel_i_cu_point_takes(q, e);
    accel_i_cu_point_apply(q, e, accel_i_cu_gone(q));
}

/* ==== cuda: naps in long waits ====
   A thread that waits for a value a signal point far down a stream promises polls for nothing until the
   stream gets near it, and on a host with few cores the polling takes a core from threads that need it
   (tests/mock_cuda.c's streams, which are its GPU; the caller's other threads). So a waiter that has
   polled for ACCEL_I_CU_NAP_LOOK estimates when the point will be reached, from the fastest pace the
   point's progress word has moved at from one move to the next (not from the first look: the stream
   may have stood still before it, behind a host gate or a queue's worker catching up, which would make
   the estimate far too long, and the sleep end far past the point), and sleeps for half that time
   less a timer's slack while that is at least ACCEL_I_CU_NAP_MIN; the last stretch is polled as
   before, so the wait ends when it would have (a host raise, or a failure, wakes the sleeper at once:
   the signal's host event). A point
   held up (behind a host gate, its word not moving) or none known (no mark: see accel_i_cu_point_note)
   gives no estimate: no nap. A point not enqueued yet at the first look (the rest of a batch that a
   full stream handed to the queue's worker) is looked for again at the next. */
#define ACCEL_I_CU_NAP_LOOK 20000u
#define ACCEL_I_CU_NAP_MIN 100000u
#define ACCEL_I_CU_NAP_SLACK 60000u    /* a timed sleep may end this much late (Linux: 50 us slack) */
typedef struct accel_i_cu_nap {
    const accel_i_a64* word;       /* the progress word of the first point that promises the value */
    uint64_t seq, p0, t0;          /* its sequence number; the word and the time when it last moved */
    uint64_t per;                  /* the fastest pace seen from one move to the next, ns a point */
    bool moved;                    /* it moved since the first look (p0, t0 are a move's) */
} accel_i_cu_nap;
/* How long to sleep now (0: poll on). Calls look for the point, until one finds it and reads its word. */
static uint64_t accel_i_cu_nap_ns(accel_i_cu_nap* n, accel_signal* s, uint64_t v, uint64_t now) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    uint64_t p, left;
    if (!n->word) {
        const accel_i_cu_mark* m;
        accel_i_spin_lock(&cs->point_lock);
        if ((m = accel_i_cu_first_mark(cs, v)) != NULL) { n->word = m->progress; n->seq = m->seq; }
        accel_i_spin_unlock(&cs->point_lock);
        if (n->word) { n->p0 = atomic_load(n->word); n->t0 = now; }
        return 0;
    }
    if ((p = atomic_load(n->word)) <= n->p0 || p >= n->seq || n->seq - p > (1u << 20)) return 0;
    left = (now - n->t0) / (p - n->p0);
    if (n->moved && (n->per == 0 || left < n->per)) n->per = left;
    n->moved = true;
    n->p0 = p;
    n->t0 = now;
    if (n->per == 0) return 0;
    left = (n->seq - p) * n->per;
    return left / 2 >= ACCEL_I_CU_NAP_MIN + ACCEL_I_CU_NAP_SLACK ? left / 2 - ACCEL_I_CU_NAP_SLACK : 0;
}

/* ==== cuda: signals ==== */
static void accel_i_cu_foreign_retire(accel_signal* s, uint64_t v);   /* cuda: foreign streams */
static bool accel_i_cu_foreign_orphan(accel_signal* s);
/* Signals are accel.h's host signals (see the header's design notes) plus a mirror word the GPU can
   watch; a wait also reaps the points of the signals' devices, polling in slices of
   accel_i_cu_poll_slice while work is in flight. */
static accel_result accel_i_cu_signal_create(accel_device* d, uint64_t initial, accel_signal** out) {
    accel_i_cu_signal* cs;
    accel_result r = accel_i_host_signal_make(d, initial, sizeof(accel_i_cu_signal), out);
    if (r != ACCEL_OK) return r;
    cs = (accel_i_cu_signal*)*out;   /* the rest is zero (the make's memset) */
    accel_i_cu_enter(accel_i_cu_dev(d));
    if ((r = accel_i_cu_word_take(accel_i_cu_dev(d), &cs->mirror, false)) != ACCEL_OK) {
        accel_i_host_signal_unmake(d, *out, sizeof(accel_i_cu_signal));
        *out = NULL;
        return accel_i_fail(d, r,
                            "accel_signal_create: no pinned memory for the signal's device-visible word");
    }
    atomic_store(cs->mirror.host, initial);
    /* whole now: a device loss raises every listed signal's mirror (accel_i_cu_lose) */
    accel_i_host_signal_list(d, *out);
    return ACCEL_OK;
}
static void accel_i_cu_signal_free(accel_signal* s) {
    accel_i_cu_device* dev = accel_i_cu_dev(s->obj.device);
    /* a stale one's word went with the old context's blocks; one foreign streams may still read stays */
    if (accel_i_cu_use(dev, &s->obj)) {
        if (!accel_i_cu_foreign_orphan(s)) accel_i_cu_word_give(dev, &((accel_i_cu_signal*)s)->mirror);
        accel_i_cu_unuse(dev);
    }
    accel_i_host_signal_destroy(s, sizeof(accel_i_cu_signal));
}
/* signal_publish: the mirror takes the maximum. A failure writes ACCEL_SIGNAL_MAX, at or above every
   value a GPU waits for: cuStreamWaitValue64's GEQ compares as (int64_t)(*addr - value) >= 0, so a word
   with bit 63 set would read as below every value. */
static void accel_i_cu_signal_publish(accel_signal* s, uint64_t v) {
    accel_i_cu_device* dev = accel_i_cu_dev(s->obj.device);
    accel_i_a64* m = ((accel_i_cu_signal*)s)->mirror.host;
    uint64_t old;
    if (!accel_i_cu_use(dev, &s->obj)) return;   /* its word went with the old context (no GPU waits on it) */
    old = atomic_load(m);
    if (accel_i_failed(v)) v = ACCEL_SIGNAL_MAX;
    while (old < v && !atomic_compare_exchange_weak(m, &old, v)) {}
    if (atomic_load(&((accel_i_cu_signal*)s)->foreign_waits)) accel_i_cu_foreign_retire(s, v);
    accel_i_cu_unuse(dev);
}
/* signal_settle (accel_signal_value): the host word is raised to what the GPU already reached: the
   mirror's value, and the value of each mark whose progress word passed its point (only while a mark
   promises more than the host word: `marked`). A GPU wait elsewhere is released by a point's mirror
   write or progress word before any thread applied the point (even before the point is in its queue's
   ring), and the work behind it may signal a value the host sees first: what that work waited for then
   reads reached too. Both hold only values a stream reached or the host published (a failure reads
   failed in the host word first), so the raise is one the point's apply makes later anyway. Not for
   accel's own reads (a chain's walk reads the value it waits for every step). */
static uint64_t accel_i_cu_reached_mark(accel_i_cu_signal* cs, uint64_t v) {
    accel_i_spin_lock(&cs->point_lock);
    for (uint32_t i = 0; i < cs->points_count; i++) {
        const accel_i_cu_mark* m = accel_i_cu_mark_at(cs, i);
        if (m->value > v && atomic_load_explicit(m->progress, memory_order_acquire) >= m->seq) v = m->value;
    }
    accel_i_spin_unlock(&cs->point_lock);
    return v;
}
static uint64_t accel_i_cu_mirror_value(accel_signal* s);
/* What s reached on the GPU (signal_settle; and a loss's failure after hand-off, for which a batch of
   another device whose wait the GPU passed completed fine): the host word, the mirror, the marks whose
   progress word passed (pinned memory, read after a loss too); the host word of a stale signal. */
static uint64_t accel_i_cu_reached(accel_signal* s) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    uint64_t v = accel_i_host_signal_value(s), m;
    if (accel_i_failed(v) || accel_i_stale(&s->obj)) return v;
    if ((m = accel_i_cu_mirror_value(s)) > v) v = m;
    return atomic_load_explicit(&cs->marked, memory_order_relaxed) > v ? accel_i_cu_reached_mark(cs, v) : v;
}
static void accel_i_cu_signal_settle(accel_signal* s) {
    accel_i_cu_device* dev = accel_i_cu_dev(s->obj.device);
    uint64_t v = accel_i_host_signal_value(s), r;
    if (accel_i_failed(v) || !accel_i_cu_use(dev, &s->obj)) return;
    r = accel_i_cu_reached(s);
    accel_i_cu_unuse(dev);
    if (r > v) accel_i_raise(s, r);
}
/* s's mirror: what the GPU wrote there (a point whose mirror it writes reaches the value before any thread
   applies the point) or the host published; 0 for a stale signal, whose word went with the old context.
   The caller is in (accel_i_cu_signals_use). */
static uint64_t accel_i_cu_mirror_value(accel_signal* s) {
    if (accel_i_stale(&s->obj)) return 0;
    return atomic_load_explicit(((accel_i_cu_signal*)s)->mirror.host, memory_order_acquire);
}
/* A waiter's check: the host words, then (where they are short) the mirrors: a value the GPU wrote there
   is settled into the host word at once (accel_i_cu_signal_settle), not when some thread applies its
   point after the next slice. */
static accel_result accel_i_cu_wait_check(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                          uint32_t* first) {
    accel_result r = accel_i_wait_check(s, v, n, all, first);
    bool settled = false;
    if (r != ACCEL_TIMEOUT) return r;
    for (uint32_t i = 0; i < n; i++) {
        if (accel_i_host_signal_value(s[i]) >= v[i] || accel_i_cu_mirror_value(s[i]) < v[i]) continue;
        accel_i_cu_signal_settle(s[i]);
        settled = true;
    }
    return settled ? accel_i_wait_check(s, v, n, all, first) : r;
}
/* Polls the host words and the mirrors until one of them reaches its value (a host raise, a reap by
   another thread, a mirror the GPU wrote) or the clock reaches `until`. Not accel.h's event spin: that one
   reads the clock only every 64 pauses (~1.5-3 us), and a poll slice of a wait whose points are in flight
   is a few hundred ns in its first microseconds (the points' words are read by the reap after it): a host
   -> GPU -> host round trip then costs one slice more than the GPU's, not 64 pauses. `yield`: each poll
   gives the CPU to whoever else is ready first (a yield with nothing else ready costs ~0.3 us), as a
   context made with CU_CTX_SCHED_YIELD synchronizes (the driver's default spins without yielding while it
   has fewer contexts than cores). The event spin yields only every 64 pauses: a waiter that shared a core
   with what it waited for (tests/mock_cuda.c's streams are CPU threads; so may be the caller's threads
   that feed the GPU) held it ~2 us at each turn, and a pipeline over two streams on two cores ran at
   0.55-0.65x its speed in one run of three. */
static void accel_i_cu_poll_host(accel_signal* const* s, const uint64_t* v, uint32_t n, uint64_t until,
                                 bool yield) {
    do {
        for (uint32_t i = 0; i < n; i++)
            if (accel_i_host_signal_value(s[i]) >= v[i] || accel_i_cu_mirror_value(s[i]) >= v[i]) return;
        if (yield) {
            accel_i_yield();
        } else {
            ACCEL_I_RELAX();
            ACCEL_I_RELAX();
        }
    } while (accel_i_now_ns() < until);
}
/* How long a wait with points in flight polls (yielding) before its slices sleep: a pipeline's round of
   a few hundred steps (~0.2 ms on the mock, ~1 ms on a GPU) stays on the poll; a wait for work that takes
   longer sleeps through each slice (1/32 of the time waited: it notices the end at most ~3% late)
   instead of taking a core for the whole wait. */
#define ACCEL_I_CU_YIELD_NS 2000000u
/* One slice of a wait with points in flight (the caller reaps and checks after it): it polls the host
   words, the first 5 us on the clock, then yielding between polls until ACCEL_I_CU_YIELD_NS, then
   sleeps on the first word not reached yet (without the event spin: a slice is at most
   ACCEL_CUDA_POLL_MAX_NS, about the spin's budget); a long wait for one value naps sooner (cuda: naps in
   long waits). */
static void accel_i_cu_wait_slice(accel_signal* const* s, const uint64_t* v, uint32_t n, uint64_t since,
                                  uint64_t now, uint64_t step, uint64_t deadline, accel_i_cu_nap* nap) {
    bool slept = false;
    uint32_t i = 0;
    if (n == 1 && now - since >= ACCEL_I_CU_NAP_LOOK) {
        uint64_t ns = accel_i_cu_nap_ns(nap, s[0], v[0], now);
        if (ns && deadline - now > ns) {
            accel_i_event_block(accel_i_host_signal_event(s[0]), v[0], now + ns, &slept);
            return;
        }
    }
    if (now - since < ACCEL_I_CU_YIELD_NS) {
        accel_i_cu_poll_host(s, v, n, now + step, now - since > 5000u);
        return;
    }
    while (i < n && accel_i_host_signal_value(s[i]) >= v[i]) i++;
    if (i < n) accel_i_event_block(accel_i_host_signal_event(s[i]), v[i], now + step, &slept);
}
/* Applies the reached points of the devices of s[0..n) (each once); true while points remain in flight. */
static bool accel_i_cu_reap_devices(accel_signal* const* s, uint32_t n) {
    bool pending = false;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || s[i]->obj.device != s[i - 1]->obj.device)
            pending |= accel_i_cu_reap_device(accel_i_cu_dev(s[i]->obj.device));
    return pending;
}
/* A wait about to time out (or a poll) looks once more, at what the GPU reached but no thread applied
   yet (accel_i_cu_signal_settle): it returns OK wherever accel_signal_value would read the value. */
static accel_result accel_i_cu_wait_last(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                         uint32_t* first) {
    for (uint32_t i = 0; i < n; i++) accel_i_cu_signal_settle(s[i]);
    return accel_i_wait_check(s, v, n, all, first);
}
/* The devices of s[0..n) entered for each signal (accel_i_cu_use): their words stay until
   accel_i_cu_signals_unuse. False, with none entered, where one is stale (a recover is under way). */
static void accel_i_cu_signals_unuse(accel_signal* const* s, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) accel_i_cu_unuse(accel_i_cu_dev(s[i]->obj.device));
}
static bool accel_i_cu_signals_use(accel_signal* const* s, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (!accel_i_cu_use(accel_i_cu_dev(s[i]->obj.device), &s[i]->obj)) {
            accel_i_cu_signals_unuse(s, i);
            return false;
        }
    return true;
}
/* A wait reads the signals' words only while it is in (a slice at most: a recover waits for it). */
static accel_result accel_i_cu_signal_wait_loop(accel_signal* const* s, const uint64_t* v, uint32_t n,
                                                bool all, uint64_t timeout_ns, uint32_t* first) {
    uint64_t deadline = accel_i_deadline(timeout_ns), since = accel_i_now_ns();
    accel_i_cu_nap nap;
    memset(&nap, 0, sizeof nap);
    for (;;) {
        bool pending;
        uint64_t now, step, slice = accel_i_cu_poll_slice(since);
        uint64_t seen = atomic_load(&((accel_i_cu_signal*)s[0])->pointed);   /* before the reap */
        accel_result r;
        if (!accel_i_cu_signals_use(s, n)) {   /* a recover under way fails the signals */
            now = accel_i_now_ns();
            return accel_i_host_signal_wait(s, v, n, all, now >= deadline ? 0 : deadline - now, first);
        }
        pending = accel_i_cu_reap_devices(s, n);
        r = accel_i_cu_wait_check(s, v, n, all, first);
        now = timeout_ns == 0 ? deadline : accel_i_now_ns();
        if (r == ACCEL_TIMEOUT && now >= deadline) r = accel_i_cu_wait_last(s, v, n, all, first);
        if (r != ACCEL_TIMEOUT || now >= deadline) {
            accel_i_cu_signals_unuse(s, n);
            return r;
        }
        step = deadline == ACCEL_I_FOREVER && !pending ? ACCEL_WAIT_FOREVER : deadline - now;
        if (pending && step > slice) step = slice;
        if (pending) {
            accel_i_cu_wait_slice(s, v, n, since, now, step, deadline, &nap);
            accel_i_cu_signals_unuse(s, n);
            continue;
        }
        accel_i_cu_signals_unuse(s, n);
        if (n == 1) {   /* a host raise, or a point enqueued meanwhile (then a reap) */
            accel_i_event_wait_or(accel_i_host_signal_event(s[0]), v[0], &((accel_i_cu_signal*)s[0])->pointed,
                                  seen, step, since);
        } else if ((r = accel_i_host_signal_wait(s, v, n, all, step, first)) != ACCEL_TIMEOUT) {
            return r;   /* the host words */
        }
    }
}

/* A host wait: what its reaps and raises release (a batch's buffer, a foreign wait's held releases) is
   held back for a worker, so the wait returns at its values, not once the device is idle (cuda:
   releases). */
static accel_result accel_i_cu_signal_wait_many(accel_signal* const* s, const uint64_t* v, uint32_t n,
                                                bool all, uint64_t timeout_ns, uint32_t* first) {
    bool waiting = accel_i_cu_waiting;
    accel_result r;
    accel_i_cu_waiting = true;
    r = accel_i_cu_signal_wait_loop(s, v, n, all, timeout_ns, first);
    accel_i_cu_waiting = waiting;
    return r;
}
/* ==== cuda: commands ==== */
/* cuLaunchKernel on q's stream (again where the trusted context was not current: accel_i_cu_retry). */
static accel_cu_result accel_i_cu_launch(accel_i_cu_queue* q, accel_cu_function fn, const uint32_t grid[3],
                                         const uint32_t block[3], void** params) {
    accel_cu_result cr = accel_i_cu.LaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                                 q->stream, params, NULL);
    if (accel_i_cu_retry(accel_i_cu_dev(q->base.obj.device), cr))
        cr = accel_i_cu.LaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, q->stream,
                                     params, NULL);
    return cr;
}
/* Pinned staging for the batch's updates, sized for all of them at the first update. */
static accel_result accel_i_cu_staging(accel_i_cu_queue* q, const accel_i_batch* b, uint32_t at) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    size_t need = 0;
    if (q->staging) return ACCEL_OK;
    for (uint32_t i = at; i < b->count; i++)
        if (b->cmds[i].kind == ACCEL_I_CMD_UPDATE) need += (b->cmds[i].u.update.size + 15u) & ~(size_t)15u;
    q->staging_used = 0;
    accel_i_spin_lock(&q->ring_lock);
    if (q->staging_cache && q->staging_cache_size >= need) {
        q->staging = q->staging_cache;
        q->staging_size = q->staging_cache_size;
        q->staging_cache = NULL;
        q->staging_cache_size = 0;
    }
    accel_i_spin_unlock(&q->ring_lock);
    if (q->staging) return ACCEL_OK;
    if (accel_i_cu_check(dev, accel_i_cu.MemHostAlloc(&q->staging, need, ACCEL_CU_MEMHOSTALLOC_PORTABLE),
                         "cuMemHostAlloc (update staging)") != ACCEL_OK) {
        q->staging = NULL;
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    q->staging_size = need;
    return ACCEL_OK;
}

static accel_cu_result accel_i_cu_exec(accel_i_cu_queue* q, accel_i_batch* b, const accel_i_cmd* c) {
    accel_buffer* const* bufs = (accel_buffer* const*)(void*)(b->arena + c->u.exec.buffers);
    uint32_t* constants = (uint32_t*)(void*)(b->arena + c->u.exec.constants);
    const accel_exec_params* p = &c->u.exec.params;
    accel_cu_deviceptr ptrs[64];
    void* params[128];
    uint32_t grid[3];
    uint32_t nb = c->u.exec.buffer_count, nc = c->u.exec.constant_count;
    for (uint32_t i = 0; i < nb; i++) {   /* a view: its root's pointer + the view's offset */
        ptrs[i] = accel_i_cu_dptr(bufs[i]);
        params[i] = &ptrs[i];
    }
    for (uint32_t i = 0; i < nc; i++) params[nb + i] = &constants[i];
    for (int d = 0; d < 3; d++)
        grid[d] = (uint32_t)accel_i_groups_along(p, d);
    if (!grid[0] || !grid[1] || !grid[2]) return ACCEL_CU_SUCCESS;   /* an indirect exec read no work */
    return accel_i_cu_launch(q, ((accel_i_cu_program*)c->u.exec.program)->fn, grid, p->local_size, params);
}

/* Copies between two pieces of host memory run as a kernel that reads and writes them through unified
   addressing (pinned host memory has the same address on the device). The driver does such a copy
   (cuMemcpy*Async with host memory on both sides) on the CPU once the stream gets there, so the call
   blocks until then: behind a GPU wait for a value the host has yet to set, for ever (device-side
   copies, fills and kernels behind the same wait return at once). */
static const char accel_i_copy_ptx[] =
    ".version 6.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry accel_i_copy(.param .u64 accel_i_copy_dst, .param .u64 accel_i_copy_src, "
    ".param .u32 accel_i_copy_n)\n"
    "{\n"
    "    .reg .pred %p;\n    .reg .b16 %h;\n    .reg .b32 %r<6>;\n    .reg .b64 %rd<6>;\n"
    "    ld.param.u64 %rd1, [accel_i_copy_dst];\n    ld.param.u64 %rd2, [accel_i_copy_src];\n"
    "    ld.param.u32 %r1, [accel_i_copy_n];\n"
    "    mov.u32 %r2, %ctaid.x;\n    mov.u32 %r3, %ntid.x;\n    mov.u32 %r4, %tid.x;\n"
    "    mad.lo.u32 %r4, %r2, %r3, %r4;\n"
    "    mov.u32 %r5, %nctaid.x;\n    mul.lo.u32 %r5, %r5, %r3;\n"
    "COPY:\n    setp.ge.u32 %p, %r4, %r1;\n    @%p bra DONE;\n"
    "    cvt.u64.u32 %rd3, %r4;\n    add.u64 %rd4, %rd2, %rd3;\n"
    "    ld.global.u8 %h, [%rd4];\n    add.u64 %rd5, %rd1, %rd3;\n    st.global.u8 [%rd5], %h;\n"
    "    add.u32 %r4, %r4, %r5;\n    bra COPY;\n"
    "DONE:\n    ret;\n}\n";
static accel_cu_result accel_i_cu_host_copy(accel_i_cu_queue* q, accel_cu_deviceptr d, accel_cu_deviceptr s,
                                            size_t n, const char** call) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    accel_i_mutex_lock(&dev->cache_lock);
    if (!dev->copy_fn) {
        *call = "cuModuleLoadDataEx (accel's host-to-host copy kernel)";
        cr = accel_i_cu.ModuleLoadDataEx(&dev->copy_mod, accel_i_copy_ptx, 0, NULL, NULL);
        if (cr == ACCEL_CU_SUCCESS) {
            *call = "cuModuleGetFunction (accel's host-to-host copy kernel)";
            cr = accel_i_cu.ModuleGetFunction(&dev->copy_fn, dev->copy_mod, "accel_i_copy");
        }
    }
    accel_i_mutex_unlock(&dev->cache_lock);
    for (size_t done = 0; cr == ACCEL_CU_SUCCESS && done < n;) {
        size_t part = n - done < ((size_t)1 << 30) ? n - done : ((size_t)1 << 30);
        accel_cu_deviceptr dp = d + done, sp = s + done;
        uint32_t count = (uint32_t)part, blocks = (uint32_t)((part + 255u) / 256u);
        void* params[3] = { &dp, &sp, &count };
        *call = "cuLaunchKernel (accel's host-to-host copy kernel)";
        cr = accel_i_cu.LaunchKernel(dev->copy_fn, blocks < 1024u ? blocks : 1024u, 1, 1, 256, 1, 1, 0,
                                     q->stream, params, NULL);
        done += part;
    }
    return cr;
}
/* An update's data (pinned: the batch's staging or the list's) into dst: cuMemcpyHtoDAsync, or the copy
   kernel into a HOST buffer (pinned memory's address is its device address). */
static accel_cu_result accel_i_cu_update(accel_i_cu_queue* q, const accel_buffer* dst, size_t offset,
                                         const void* data, size_t size, const char** call) {
    accel_cu_deviceptr d = accel_i_cu_dptr(dst) + offset;
    if (dst->memory == ACCEL_MEMORY_HOST)
        return accel_i_cu_host_copy(q, d, (accel_cu_deviceptr)(uintptr_t)data, size, call);
    *call = "cuMemcpyHtoDAsync";
    return accel_i_cu.MemcpyHtoDAsync(d, data, size, q->stream);
}

static accel_cu_result accel_i_cu_copy_imported(accel_i_cu_queue* q, const accel_buffer* dst,
                                                size_t dst_offset, const accel_buffer* src, size_t src_offset,
                                                size_t n, const char** call);   /* cuda: imported memory */
static accel_cu_deviceptr accel_i_cu_ptr(accel_i_cu_device* dev, const accel_buffer* b);
/* A copy through the call that names both sides, as a program calling the driver itself would
   write it (bench/cuda.c measures exactly these calls as the baseline; cuMemcpyAsync on the same
   pointers gives the same bandwidth). A HOST buffer's side is its pinned host pointer. */
static accel_cu_result accel_i_cu_copy_bufs(accel_i_cu_queue* q, const accel_buffer* dst, size_t dst_offset,
                                            const accel_buffer* src, size_t src_offset, size_t n,
                                            const char** call) {
    accel_cu_deviceptr d = accel_i_cu_dptr(dst) + dst_offset;
    accel_cu_deviceptr s = accel_i_cu_dptr(src) + src_offset;
    bool dst_host = dst->memory == ACCEL_MEMORY_HOST, src_host = src->memory == ACCEL_MEMORY_HOST;
    if (dst->obj.device->backend != q->base.obj.device->backend ||
        src->obj.device->backend != q->base.obj.device->backend)   /* cuda: imported memory */
        return accel_i_cu_copy_imported(q, dst, dst_offset, src, src_offset, n, call);
    if (src_host && !dst_host) {
        *call = "cuMemcpyHtoDAsync";
        return accel_i_cu.MemcpyHtoDAsync(d, (const unsigned char*)src->mapped + src_offset, n, q->stream);
    }
    if (dst_host && !src_host) {
        *call = "cuMemcpyDtoHAsync";
        return accel_i_cu.MemcpyDtoHAsync((unsigned char*)dst->mapped + dst_offset, s, n, q->stream);
    }
    if (!dst_host && dst->obj.device != src->obj.device) {   /* a peer copy (see accel_i_cu_peer_copy) */
        *call = "cuMemcpyAsync";
        return accel_i_cu.MemcpyAsync(d, s, n, q->stream);
    }
    if (!dst_host) {
        *call = "cuMemcpyDtoDAsync";
        return accel_i_cu.MemcpyDtoDAsync(d, s, n, q->stream);
    }
    return accel_i_cu_host_copy(q, d, s, n, call);
}
static accel_cu_result accel_i_cu_copy(accel_i_cu_queue* q, const accel_i_cmd* c, const char** call) {
    return accel_i_cu_copy_bufs(q, c->u.copy.dst, c->u.copy.dst_offset, c->u.copy.src, c->u.copy.src_offset,
                                c->u.copy.size, call);
}

/* ==== cuda: recorded command lists ==== */
/* A list's native form: an op per command, resolved at record_end (function, grid, device pointers,
   constants and their kernel-parameter array; the updates' data in pinned memory the list owns) and,
   where the driver has CUDA graphs, a graph of the same ops chained in order, with one instance made
   at record_end. A replay sets the params of the nodes it patches (and of those the instance's last
   launch patched, to restore them) and launches the instance (cuGraphLaunch); without graphs
   (ACCEL_CUDA_REPLAY=launches, or a driver without them) it issues the ops as pre-resolved launches
   and copies. The driver orders each launch of an instance behind its previous launch, on any
   stream, so an instance belongs to one queue (its owner) until that queue is destroyed (its stream
   is idle then): up to ACCEL_I_CU_EXECS per list, made when first needed; a queue that finds them all
   owned by live queues issues the ops. */
#define ACCEL_I_CU_EXECS 4u
typedef struct accel_i_cu_op {
    accel_i_cmd_kind kind;
    accel_cu_function fn;              /* exec */
    uint32_t grid[3], block[3], nb, nc;
    void** params;                     /* exec: nb + nc pointers to ptrs and consts */
    accel_cu_deviceptr* ptrs;
    uint32_t* consts;
    const accel_buffer *dst, *src;     /* copy, fill, update */
    size_t dst_offset, src_offset, size;
    uint32_t pattern;
    const unsigned char* data;         /* update: the list's pinned copy */
    accel_cu_graph_node node;          /* graph mode; NULL for a barrier */
} accel_i_cu_op;
typedef struct accel_i_cu_instance {
    accel_cu_graph_exec exec;
    bool busy;                         /* taken by a queue's translation (list lock) */
    const accel_queue* owner;          /* the queue it belongs to (NULL: none yet; list lock) */
    unsigned char* patched;            /* per op: its node carries patched params now */
} accel_i_cu_instance;
typedef struct accel_i_cu_list {
    accel_i_cu_op* ops; uint32_t count; size_t bytes;
    void* pinned;                      /* the updates' data */
    bool host_copy;                    /* an op copies host to host unpatched (accel_i_cu_op_host_to_host) */
    accel_i_a32 refused;               /* a patch was refused once (accel_i_cu_refused): said */
    accel_cu_graph graph;              /* NULL: pre-resolved launches */
    accel_i_a32 lock;                  /* guards inst[].busy / owner / exec creation */
    accel_i_cu_instance inst[ACCEL_I_CU_EXECS];
} accel_i_cu_list;

static bool accel_i_cu_graphs_usable(void) {
    const char* e = getenv("ACCEL_CUDA_REPLAY");
    if (e && strcmp(e, "launches") == 0) return false;
    return accel_i_cu.GraphCreate && accel_i_cu.GraphDestroy && accel_i_cu.GraphAddKernelNode &&
           accel_i_cu.GraphAddMemsetNode && accel_i_cu.GraphAddMemcpyNode &&
           accel_i_cu.GraphInstantiateWithFlags && accel_i_cu.GraphExecDestroy &&
           accel_i_cu.GraphExecKernelNodeSetParams && accel_i_cu.GraphExecMemsetNodeSetParams &&
           accel_i_cu.GraphExecMemcpyNodeSetParams && accel_i_cu.GraphLaunch;
}

/* Resolves command c into op, taking its arrays from *ptrs / *consts / *params and update data from
   *data. */
static void accel_i_cu_op_build(accel_i_cu_op* op, const accel_i_batch* l, const accel_i_cmd* c,
                                accel_cu_deviceptr** ptrs, uint32_t** consts, void*** params,
                                unsigned char** data) {
    op->kind = c->kind;
    if (c->kind == ACCEL_I_CMD_EXEC) {
        const accel_exec_params* p = &c->u.exec.params;
        accel_buffer* const* bufs = (accel_buffer* const*)(const void*)(l->arena + c->u.exec.buffers);
        op->fn = ((accel_i_cu_program*)c->u.exec.program)->fn;
        op->nb = c->u.exec.buffer_count; op->nc = c->u.exec.constant_count;
        op->ptrs = *ptrs; op->consts = *consts; op->params = *params;
        for (int d = 0; d < 3; d++) {
            op->grid[d] = (uint32_t)accel_i_groups_along(p, d);
            op->block[d] = p->local_size[d];
        }
        for (uint32_t i = 0; i < op->nb; i++) {
            op->ptrs[i] = accel_i_cu_dptr(bufs[i]);
            op->params[i] = &op->ptrs[i];
        }
        if (op->nc) memcpy(op->consts, l->arena + c->u.exec.constants, 4u * (size_t)op->nc);
        for (uint32_t i = 0; i < op->nc; i++) op->params[op->nb + i] = &op->consts[i];
        *ptrs += op->nb; *consts += op->nc; *params += op->nb + op->nc;
        /* no work (a list keeps its index) */
        if (!op->grid[0] || !op->grid[1] || !op->grid[2]) op->kind = ACCEL_I_CMD_BARRIER;
    } else if (c->kind == ACCEL_I_CMD_COPY) {
        op->dst = c->u.copy.dst; op->src = c->u.copy.src; op->size = c->u.copy.size;
        op->dst_offset = c->u.copy.dst_offset; op->src_offset = c->u.copy.src_offset;
    } else if (c->kind == ACCEL_I_CMD_FILL) {
        op->dst = c->u.fill.dst; op->dst_offset = c->u.fill.offset;
        op->size = c->u.fill.size; op->pattern = c->u.fill.pattern;
    } else if (c->kind == ACCEL_I_CMD_UPDATE) {
        op->dst = c->u.update.dst; op->dst_offset = c->u.update.offset; op->size = c->u.update.size;
        memcpy(*data, l->arena + c->u.update.data, op->size);
        op->data = *data;
        *data += (op->size + 15u) & ~(size_t)15u;
    }
}

/* Where a copy/fill/update op reads and writes, with its patches (roots and offsets in them). */
typedef struct accel_i_cu_ends {
    const accel_buffer *dst, *src;
    size_t dst_offset, src_offset;
    uint32_t pattern;
} accel_i_cu_ends;
/* An op's operands with its patches: kernel parameters (into ptrs/consts/params; *use points at
   the op's own when unpatched), copy/fill buffers, offsets and pattern. */
static void accel_i_cu_op_patch(const accel_i_cu_op* op, const accel_i_patch* p, uint32_t n,
                                accel_cu_deviceptr* ptrs, uint32_t* consts, void** params, void*** use,
                                accel_i_cu_ends* e) {
    *use = op->params;
    e->dst = op->dst; e->src = op->src;
    e->dst_offset = op->dst_offset; e->src_offset = op->src_offset; e->pattern = op->pattern;
    if (n == 0) return;
    if (op->kind == ACCEL_I_CMD_EXEC) {
        memcpy(ptrs, op->ptrs, (size_t)op->nb * sizeof *ptrs);
        memcpy(consts, op->consts, (size_t)op->nc * 4u);
        for (uint32_t i = 0; i < op->nb; i++) params[i] = &ptrs[i];
        for (uint32_t i = 0; i < op->nc; i++) params[op->nb + i] = &consts[i];
        *use = params;
    }
    for (uint32_t k = 0; k < n; k++) {
        if (op->kind == ACCEL_I_CMD_EXEC && p[k].buffer)
            ptrs[p[k].index] = accel_i_cu_dptr(p[k].buffer) + p[k].offset;
        else if (op->kind == ACCEL_I_CMD_EXEC) consts[p[k].index] = p[k].value;
        else if (!p[k].buffer) e->pattern = p[k].value;
        else if (p[k].index == 0) { e->dst = p[k].buffer; e->dst_offset = p[k].offset; }
        else { e->src = p[k].buffer; e->src_offset = p[k].offset; }
    }
}

/* Does op, with its patches, copy host to host (an update into a HOST buffer, a copy between two)? */
static bool accel_i_cu_op_host_to_host(const accel_i_cu_op* op, const accel_i_patch* p, uint32_t n) {
    accel_i_cu_ends e;
    void** use;
    if (op->kind != ACCEL_I_CMD_COPY && op->kind != ACCEL_I_CMD_UPDATE) return false;
    accel_i_cu_op_patch(op, p, n, NULL, NULL, NULL, &use, &e);   /* not an exec: no arrays */
    return e.dst->memory == ACCEL_MEMORY_HOST &&
           (op->kind == ACCEL_I_CMD_UPDATE || e.src->memory == ACCEL_MEMORY_HOST);
}

/* Pre-resolved launches: one op with its patches onto the queue's stream. */
static accel_cu_result accel_i_cu_op_issue(accel_i_cu_queue* q, const accel_i_cu_op* op,
                                           const accel_i_patch* p, uint32_t n, const char** call) {
    accel_cu_deviceptr ptrs[64];
    uint32_t consts[64];
    void* params[128];
    void** use;
    accel_i_cu_ends e;
    accel_i_cu_op_patch(op, p, n, ptrs, consts, params, &use, &e);
    switch (op->kind) {
    case ACCEL_I_CMD_EXEC:
        *call = "cuLaunchKernel";
        return accel_i_cu.LaunchKernel(op->fn, op->grid[0], op->grid[1], op->grid[2],
                                       op->block[0], op->block[1], op->block[2], 0, q->stream, use, NULL);
    case ACCEL_I_CMD_COPY:
        return accel_i_cu_copy_bufs(q, e.dst, e.dst_offset, e.src, e.src_offset, op->size, call);
    case ACCEL_I_CMD_FILL:
        *call = "cuMemsetD32Async";
        return accel_i_cu.MemsetD32Async(accel_i_cu_dptr(e.dst) + e.dst_offset, e.pattern, op->size / 4,
                                         q->stream);
    case ACCEL_I_CMD_UPDATE: return accel_i_cu_update(q, e.dst, e.dst_offset, op->data, op->size, call);
    default: return ACCEL_CU_SUCCESS;
    }
}

/* Graph mode: adds op's node after dep (exec NULL), or sets its params in instance exec. */
static accel_cu_result accel_i_cu_op_node(accel_i_cu_device* dev, accel_cu_graph graph,
                                          accel_cu_graph_exec exec, accel_i_cu_op* op,
                                          accel_cu_graph_node dep, const accel_i_patch* p, uint32_t n,
                                          const char** call) {
    accel_cu_deviceptr ptrs[64];
    uint32_t consts[64];
    void* params[128];
    void** use;
    accel_i_cu_ends e;
    size_t ndep = dep ? 1 : 0;
    accel_i_cu_op_patch(op, p, n, ptrs, consts, params, &use, &e);
    if (op->kind == ACCEL_I_CMD_EXEC) {
        accel_cu_kernel_node_params kp;
        memset(&kp, 0, sizeof kp);
        kp.func = op->fn;
        for (int d = 0; d < 3; d++) { kp.grid[d] = op->grid[d]; kp.block[d] = op->block[d]; }
        kp.params = use;
        *call = exec ? "cuGraphExecKernelNodeSetParams" : "cuGraphAddKernelNode";
        return exec ? accel_i_cu.GraphExecKernelNodeSetParams(exec, op->node, &kp)
                    : accel_i_cu.GraphAddKernelNode(&op->node, graph, &dep, ndep, &kp);
    }
    if (op->kind == ACCEL_I_CMD_FILL) {
        accel_cu_memset_node_params mp;
        memset(&mp, 0, sizeof mp);
        mp.dst = accel_i_cu_dptr(e.dst) + e.dst_offset;
        mp.value = e.pattern; mp.element_size = 4; mp.width = op->size / 4; mp.height = 1;
        *call = exec ? "cuGraphExecMemsetNodeSetParams" : "cuGraphAddMemsetNode";
        return exec ? accel_i_cu.GraphExecMemsetNodeSetParams(exec, op->node, &mp, dev->ctx)
                    : accel_i_cu.GraphAddMemsetNode(&op->node, graph, &dep, ndep, &mp, dev->ctx);
    }
    /* unified pointers: buffers of any memory kind */
    if (op->kind == ACCEL_I_CMD_COPY || op->kind == ACCEL_I_CMD_UPDATE) {
        accel_cu_memcpy3d m;
        memset(&m, 0, sizeof m);
        m.src_type = m.dst_type = ACCEL_CU_MEMORYTYPE_UNIFIED;
        m.src_device = op->data ? (accel_cu_deviceptr)(uintptr_t)op->data
                                : accel_i_cu_ptr(dev, e.src) + e.src_offset;   /* or imported */
        m.dst_device = accel_i_cu_ptr(dev, e.dst) + e.dst_offset;
        m.width = op->size; m.height = 1; m.depth = 1;
        *call = exec ? "cuGraphExecMemcpyNodeSetParams" : "cuGraphAddMemcpyNode";
        return exec ? accel_i_cu.GraphExecMemcpyNodeSetParams(exec, op->node, &m, dev->ctx)
                    : accel_i_cu.GraphAddMemcpyNode(&op->node, graph, &dep, ndep, &m, dev->ctx);
    }
    return ACCEL_CU_SUCCESS;   /* a barrier: stream order within the graph's chain gives it */
}

/* native false: the list is stale, its graphs and pinned block went with the old context */
static void accel_i_cu_list_free(accel_i_cu_device* dev, accel_i_cu_list* l, bool native) {
    if (native) accel_i_cu_enter(dev);
    for (uint32_t i = 0; i < ACCEL_I_CU_EXECS; i++) {
        if (l->inst[i].exec && native) accel_i_cu_release(dev, ACCEL_I_CU_GRAPH_EXEC, l->inst[i].exec, 0);
        accel_i_dev_free(&dev->base, l->inst[i].patched, l->count);
    }
    if (l->graph && native) accel_i_cu_release(dev, ACCEL_I_CU_GRAPH, l->graph, 0);
    if (l->pinned && native) accel_i_cu_release(dev, ACCEL_I_CU_HOST_MEM, l->pinned, 0);
    accel_i_dev_free(&dev->base, l, l->bytes);
}
static void accel_i_cu_commands_free(accel_commands* c) {
    accel_i_cu_list_free(accel_i_cu_dev(c->obj.device), (accel_i_cu_list*)c->native, !accel_i_stale(&c->obj));
}

/* Makes instance i (taken by the caller). */
static accel_result accel_i_cu_instantiate(accel_i_cu_device* dev, accel_i_cu_list* l, uint32_t i) {
    accel_i_cu_instance* in = &l->inst[i];
    if (l->count && (in->patched = (unsigned char*)accel_i_dev_alloc(&dev->base, l->count)) == NULL)
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_cuda: out of host memory for a command list instance");
    if (l->count) memset(in->patched, 0, l->count);
    return accel_i_cu_check(dev, accel_i_cu.GraphInstantiateWithFlags(&in->exec, l->graph, 0),
                            "cuGraphInstantiateWithFlags");
}
static accel_result accel_i_cu_graph_build(accel_i_cu_device* dev, accel_i_cu_list* l) {
    accel_cu_graph_node dep = NULL;
    const char* call = "cuGraphCreate";
    accel_cu_result cr = accel_i_cu.GraphCreate(&l->graph, 0);
    for (uint32_t i = 0; i < l->count && cr == ACCEL_CU_SUCCESS; i++) {
        cr = accel_i_cu_op_node(dev, l->graph, NULL, &l->ops[i], dep, NULL, 0, &call);
        if (l->ops[i].node) dep = l->ops[i].node;
    }
    if (cr != ACCEL_CU_SUCCESS) return accel_i_cu_check(dev, cr, call);
    return accel_i_cu_instantiate(dev, l, 0);
}

static accel_result accel_i_cu_commands_build(accel_queue* q, accel_commands* c) {
    accel_i_cu_device* dev = accel_i_cu_dev(c->obj.device);
    const accel_i_batch* b = c->list;
    uint64_t nb = 0, nc = 0, data = 0, bytes;
    accel_i_cu_list* l;
    accel_cu_deviceptr* ptrs; uint32_t* consts; void** params; unsigned char* pinned;
    accel_result r = ACCEL_OK;
    (void)q;
    if (c->has_indirect) return ACCEL_OK;   /* host steps inside: the core's generic form (native NULL) */
    for (uint32_t i = 0; i < b->count; i++) {
        const accel_i_cmd* cmd = &b->cmds[i];
        if (cmd->kind == ACCEL_I_CMD_EXEC) {
            nb += cmd->u.exec.buffer_count;
            nc += cmd->u.exec.constant_count;
        }
        if (cmd->kind == ACCEL_I_CMD_UPDATE) data += (cmd->u.update.size + 15u) & ~(size_t)15u;
    }
    bytes = sizeof *l + (uint64_t)b->count * sizeof(accel_i_cu_op) + (nb + nc) * sizeof(void*) +
            nb * sizeof(accel_cu_deviceptr) + nc * 4u;
    l = bytes <= SIZE_MAX ? (accel_i_cu_list*)accel_i_dev_alloc(&dev->base, (size_t)bytes) : NULL;
    if (!l)
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_queue_record_end: out of host memory for the replay form");
    memset((void*)l, 0, (size_t)bytes);
    atomic_init(&l->lock, 0u);
    atomic_init(&l->refused, 0u);
    l->bytes = (size_t)bytes;
    l->count = b->count;
    l->ops = (accel_i_cu_op*)(void*)(l + 1);
    params = (void**)(void*)(l->ops + b->count);
    ptrs = (accel_cu_deviceptr*)(void*)(params + nb + nc);
    consts = (uint32_t*)(void*)(ptrs + nb);
    accel_i_cu_enter(dev);
    if (data && (r = accel_i_cu_check(dev, accel_i_cu.MemHostAlloc(&l->pinned, (size_t)data,
                                                                   ACCEL_CU_MEMHOSTALLOC_PORTABLE),
                                      "cuMemHostAlloc (command list updates)")) != ACCEL_OK) {
        l->pinned = NULL;
        accel_i_cu_list_free(dev, l, true);
        return r;
    }
    pinned = (unsigned char*)l->pinned;
    for (uint32_t i = 0; i < b->count; i++) {
        accel_i_cu_op_build(&l->ops[i], b, &b->cmds[i], &ptrs, &consts, &params, &pinned);
        l->host_copy = l->host_copy || accel_i_cu_op_host_to_host(&l->ops[i], NULL, 0);
    }
    if (accel_i_cu_graphs_usable() && (r = accel_i_cu_graph_build(dev, l)) != ACCEL_OK) {
        accel_i_cu_list_free(dev, l, true);
        return r;
    }
    c->native = l;
    return ACCEL_OK;
}

/* Is q one of dev's queues? A queue is taken off the list once its stream is idle (queue destroy). */
static bool accel_i_cu_queue_live(accel_i_cu_device* dev, const accel_queue* q) {
    bool live = false;
    accel_i_spin_lock(&dev->queues_lock);
    for (const accel_i_cu_queue* it = dev->queues; it && !live; it = it->next_queue) live = &it->base == q;
    accel_i_spin_unlock(&dev->queues_lock);
    return live;
}
/* List lock held: the instance for q: its own, else one never used, else (gone: a destroyed queue's,
   found by accel_i_cu_queue_live outside the lock) none; -1 when none. */
static int accel_i_cu_pick(const accel_i_cu_list* l, const accel_queue* q, const accel_queue* gone) {
    int fresh = -1;
    for (uint32_t i = 0; i < ACCEL_I_CU_EXECS; i++) {
        const accel_i_cu_instance* in = &l->inst[i];
        if (in->owner == q && !in->busy) return (int)i;
        if (fresh < 0 && !in->busy && (!in->owner || (gone && in->owner == gone))) fresh = (int)i;
    }
    return fresh;
}
/* Takes q's instance of l (*out; made when first needed); *out NULL (OK) when every instance belongs
   to another live queue: the caller issues the ops. Errors: a new instance cannot be made (logged). */
static accel_result accel_i_cu_take(accel_i_cu_device* dev, accel_i_cu_list* l, const accel_queue* q,
                                    accel_i_cu_instance** out) {
    const accel_queue* owners[ACCEL_I_CU_EXECS];
    const accel_queue* gone = NULL;
    int pick;
    accel_result r = ACCEL_OK;
    accel_i_spin_lock(&l->lock);
    pick = accel_i_cu_pick(l, q, NULL);
    for (uint32_t i = 0; i < ACCEL_I_CU_EXECS; i++) owners[i] = l->inst[i].owner;
    accel_i_spin_unlock(&l->lock);
    for (uint32_t i = 0; pick < 0 && !gone && i < ACCEL_I_CU_EXECS; i++)
        if (owners[i] && owners[i] != q && !accel_i_cu_queue_live(dev, owners[i])) gone = owners[i];
    accel_i_spin_lock(&l->lock);
    if (pick < 0 || l->inst[pick].busy || l->inst[pick].owner != owners[pick])
        pick = accel_i_cu_pick(l, q, gone);
    if (pick >= 0) { l->inst[pick].busy = true; l->inst[pick].owner = q; }
    accel_i_spin_unlock(&l->lock);
    *out = pick >= 0 ? &l->inst[pick] : NULL;
    if (pick >= 0 && !l->inst[pick].exec &&
        (r = accel_i_cu_instantiate(dev, l, (uint32_t)pick)) != ACCEL_OK) {
        accel_i_spin_lock(&l->lock);
        l->inst[pick].busy = false;
        l->inst[pick].owner = NULL;
        accel_i_spin_unlock(&l->lock);
        *out = NULL;
    }
    return r;
}
/* Does a replay of l with patches p (n, sorted) copy host to host? */
static bool accel_i_cu_replay_host_to_host(const accel_i_cu_list* l, const accel_i_patch* p, uint32_t n) {
    if (l->host_copy) return true;
    for (uint32_t k = 0; k < n;) {
        uint32_t first = k;
        while (k < n && p[k].command == p[first].command) k++;
        if (accel_i_cu_op_host_to_host(&l->ops[p[first].command], p + first, k - first)) return true;
    }
    return false;
}
/* The list's ops launched one by one, with the (sorted) patches. */
static accel_cu_result accel_i_cu_replay_ops(accel_i_cu_queue* q, const accel_i_cu_list* l,
                                             const accel_i_patch* p, uint32_t n, const char** call) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < l->count; i++) {
        uint32_t first = k;
        accel_cu_result cr;
        while (k < n && p[k].command == i) k++;
        if ((cr = accel_i_cu_op_issue(q, &l->ops[i], p ? p + first : NULL, k - first,
                                      call)) != ACCEL_CU_SUCCESS) return cr;
        if (i) q->enqueued++;   /* each op is stream work (the command itself counts once) */
    }
    return ACCEL_CU_SUCCESS;
}
/* The driver refuses to set a copy's or a fill's node to memory of another kind than it was made
   with (CUDA_ERROR_INVALID_VALUE, "the memory operands' mappings changed": an H200 refused a copy
   recorded from an accel_buffer_create buffer and patched to one from accel_queue_alloc, which comes
   from a memory pool): that replay issues the list's ops instead, said once a list. */
static void accel_i_cu_refused(accel_i_cu_device* dev, accel_i_cu_list* l, const char* call) {
    if (atomic_exchange(&l->refused, 1u)) return;
    accel_i_log(&dev->base, ACCEL_LOG_INFO, "accel_queue_replay: %s refused a patch (CUDA_ERROR_INVALID_VALUE: "
                "memory of another kind than recorded); such replays of this list launch its commands one by "
                "one", call);
}
/* A graph launch; the ops instead when the replay copies host to host while a GPU wait is pending on
   the device: such a copy's memcpy node runs on the CPU once the stream gets there (see the copy
   kernel above), so cuGraphLaunch would block behind the wait; the ops copy with the kernel. */
static accel_cu_result accel_i_cu_replay_graph(accel_i_cu_queue* q, accel_i_cu_list* l,
                                               const accel_i_patch* p, uint32_t n, const char** call) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_i_cu_instance* in;
    if (accel_i_cu_replay_host_to_host(l, p, n) && accel_i_cu_waits_now(dev))
        return accel_i_cu_replay_ops(q, l, p, n, call);
    if (accel_i_cu_take(dev, l, &q->base, &in) != ACCEL_OK) {
        *call = "cuGraphInstantiateWithFlags";
        return ACCEL_CU_ERROR_OUT_OF_MEMORY;
    }
    if (!in) return accel_i_cu_replay_ops(q, l, p, n, call);   /* every instance is another live queue's */
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    uint32_t k = 0;
    bool refused = false;
    for (uint32_t i = 0; i < l->count && cr == ACCEL_CU_SUCCESS && !refused; i++) {
        uint32_t first = k;
        while (k < n && p[k].command == i) k++;
        if (k == first && !in->patched[i]) continue;
        cr = accel_i_cu_op_node(dev, l->graph, in->exec, &l->ops[i], NULL, p ? p + first : NULL, k - first,
                                call);
        refused = cr == ACCEL_CU_ERROR_INVALID_VALUE;   /* the node keeps what it had: set it next time */
        if (cr == ACCEL_CU_SUCCESS || refused) in->patched[i] = k > first || refused;
    }
    if (cr == ACCEL_CU_SUCCESS) { *call = "cuGraphLaunch"; cr = accel_i_cu.GraphLaunch(in->exec, q->stream); }
    accel_i_spin_lock(&l->lock);
    in->busy = false;
    accel_i_spin_unlock(&l->lock);
    if (refused) accel_i_cu_refused(dev, l, *call);
    return refused ? accel_i_cu_replay_ops(q, l, p, n, call) : cr;
}
/* The replay command: graph launch or pre-resolved launches, with the (sorted) patches. */
static accel_cu_result accel_i_cu_replay(accel_i_cu_queue* q, const accel_i_batch* b, const accel_i_cmd* c,
                                         const char** call) {
    accel_i_cu_list* l = (accel_i_cu_list*)c->u.replay.list->native;
    uint32_t n = c->u.replay.patch_count;
    const accel_i_patch* p = n ? (const accel_i_patch*)(const void*)(b->arena + c->u.replay.patches) : NULL;
    if (l->graph) return accel_i_cu_replay_graph(q, l, p, n, call);
    return accel_i_cu_replay_ops(q, l, p, n, call);
}

/* ==== cuda: queue segments ==== */
/* A native step: fn enqueues on the queue's stream, with accel's context current (made current again
   after fn, which may change it). */
static void accel_i_cu_native(accel_i_cu_queue* q, const accel_i_cmd* c) {
    accel_native n;
    accel_i_call call;
    memset(&n, 0, sizeof n);
    n.queue = &q->base;
    n.cuda_stream = (void*)q->stream;
    accel_i_call_enter(&call, &q->base);
    c->u.native.fn(&n, c->u.native.user);
    accel_i_call_leave(&call);
    accel_i_cu_enter(accel_i_cu_dev(q->base.obj.device));
}
/* One command into stream work; returns the failed value that drops the rest of the batch, or 0. */
static uint64_t accel_i_cu_cmd(accel_i_cu_queue* q, accel_i_batch* b, uint32_t pc) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_i_cmd* c = &b->cmds[pc];
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    const char* call = NULL;
    uint64_t failed;
    /* a launch or a point trusts the context (cuda: the current context on the enqueue path) */
    if (c->kind != ACCEL_I_CMD_EXEC && c->kind != ACCEL_I_CMD_SIGNAL && c->kind != ACCEL_I_CMD_WAIT)
        accel_i_cu_enter_sure(dev);
    if (b->qmem) {   /* queue-ordered memory: a point, or a use checked (cuda: queue-ordered memory) */
        if (c->flags & ACCEL_I_CMD_QMEM_POINT) return accel_i_cu_qmem_point(q, c);
        if ((failed = accel_i_qmem_use_failed(&q->base, b, c)) != 0) return failed;
    }
    switch (c->kind) {
    case ACCEL_I_CMD_WAIT: return 0;   /* the walk already took care of it (accel_i_cu_device_wait) */
    case ACCEL_I_CMD_SIGNAL: accel_i_cu_point_add(q, c->u.sig.signal, c->u.sig.value, NULL, NULL); return 0;
    case ACCEL_I_CMD_EXEC: cr = accel_i_cu_exec(q, b, c); call = "cuLaunchKernel"; break;
    case ACCEL_I_CMD_COPY:
        /* a buffer of another device recovered (its memory is gone; imported memory: the import is not
           looked up any more) or lost since: DEVICE_LOST */
        if (accel_i_copy_side_gone(c->u.copy.dst) || accel_i_copy_side_gone(c->u.copy.src))
            return accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST);
        cr = accel_i_cu_copy(q, c, &call);
        break;
    case ACCEL_I_CMD_FILL:
        cr = accel_i_cu.MemsetD32Async(accel_i_cu_dptr(c->u.fill.dst) + c->u.fill.offset, c->u.fill.pattern,
                                       c->u.fill.size / 4, q->stream);
        call = "cuMemsetD32Async";
        break;
    case ACCEL_I_CMD_UPDATE: {
        unsigned char* stage;
        if (accel_i_cu_staging(q, b, pc) != ACCEL_OK) return accel_i_failed_value(ACCEL_ERROR_OUT_OF_MEMORY);
        stage = (unsigned char*)q->staging + q->staging_used;
        memcpy(stage, b->arena + c->u.update.data, c->u.update.size);
        q->staging_used += (c->u.update.size + 15u) & ~(size_t)15u;
        cr = accel_i_cu_update(q, c->u.update.dst, c->u.update.offset, stage, c->u.update.size, &call);
        break;
    }
    case ACCEL_I_CMD_REPLAY:
        /* a native list's copy with another GPU's memory, recovered since: as at a copy */
        if ((c->flags & ACCEL_I_CMD_PEER_HOST) && accel_i_replay_gone(b, c))
            return accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST);
        cr = accel_i_cu_replay(q, b, c, &call);
        break;
    case ACCEL_I_CMD_BARRIER:   /* stream order, and the points' fences, already give it */
        if (dev->base.trace) accel_i_cu_point_add(q, NULL, 0, NULL, c);
        return 0;
    case ACCEL_I_CMD_TIMESTAMP:   /* the reaper writes it */
        accel_i_cu_point_add(q, NULL, 0, NULL, c);
        return 0;
    case ACCEL_I_CMD_HOST_CALL: return 0;   /* a host step: the core's walk runs it, never a segment */
    case ACCEL_I_CMD_NATIVE: accel_i_cu_native(q, c); break;
    }
    if (cr == ACCEL_CU_SUCCESS) {
        q->dirty = true;
        q->enqueued++;   /* stream work (a point counts its own writes) */
        if (dev->base.trace) accel_i_cu_point_add(q, NULL, 0, NULL, c);   /* its end, for its span */
        return 0;
    }
    if (c->kind == ACCEL_I_CMD_EXEC)
        accel_i_log(&dev->base, ACCEL_LOG_ERROR,
                    "accel_cuda: launching '%s' on %s failed; the rest of the batch is dropped",
                    c->u.exec.program->obj.label, accel_i_label(&q->base.obj));
    return accel_i_failed_value(accel_i_cu_check(dev, cr, call));
}

/* Does the GPU reach mark m's point by itself: it is not held up by a host-raised wait (see
   accel_i_cu_mark)? Another stream may then watch its progress word. */
static bool accel_i_cu_mark_free(const accel_i_cu_mark* m) {
    return !m->opaque && !(m->gate && atomic_load(m->gate) < m->gate_value);
}
/* The word and value a GPU wait for s >= v watches (s's point_lock held; see accel_i_cu_device_wait):
   a promising point's progress word and sequence number, else the mirror (and v goes into
   mirror_wanted: later points write it). `own`: the waiting stream's progress word (0: a stream of no
   queue). Returns whether a point that left the ring may be what reaches v (only the host's apply of
   it raises the mirror then). */
static bool accel_i_cu_wait_target(accel_i_cu_signal* cs, uint64_t v, accel_cu_deviceptr own,
                                   accel_cu_deviceptr* addr, uint64_t* value) {
    const accel_i_cu_mark* m = accel_i_cu_first_mark(cs, v);
    *addr = cs->mirror.dptr;
    *value = v;
    /* unless held up by a host-raised wait (not this stream's: stream order): the mirror then, which
       the host raises however v comes (a host set, any queue's point reaped, a failure) */
    if (m && (m->word == own || accel_i_cu_mark_free(m))) {
        *addr = m->word;
        *value = m->seq;
    }
    if (*addr == cs->mirror.dptr && v > atomic_load_explicit(&cs->mirror_wanted, memory_order_relaxed))
        atomic_store_explicit(&cs->mirror_wanted, v, memory_order_relaxed);   /* later points write it */
    return cs->evicted >= v;
}
/* A GPU wait for s >= v (a CUDA signal of this device). On the progress word of the queue of the FIRST
   signal point that promised v (waiting for a later one could wait on work that itself waits for this
   queue: a deadlock), when the ring of recent points still holds it; else on the signal's mirror, which
   the host raises when it reaps that point (or sets or fails the signal). None when that point is this
   queue's own: it is earlier in the same stream, which runs in order (a one-queue chain step is then a
   launch and a progress write, as a raw stream's launch and event record). */
static accel_cu_result accel_i_cu_word_wait(accel_i_cu_queue* q, accel_cu_deviceptr addr, uint64_t value);
static accel_cu_result accel_i_cu_event_wait(accel_i_cu_queue* q, accel_signal* s, uint64_t v);
static accel_cu_result accel_i_cu_cpu_wait(accel_i_cu_queue* q, accel_signal* s, uint64_t v);
static accel_cu_result accel_i_cu_sem_wait(accel_i_cu_queue* q, accel_signal* s, uint64_t v);
static accel_cu_result accel_i_cu_device_wait(accel_i_cu_queue* q, accel_signal* s, uint64_t v) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    accel_cu_deviceptr addr;
    uint64_t value;
    bool hold;
    if (s->obj.device->backend == accel_cpu_backend()) return accel_i_cu_cpu_wait(q, s, v);   /* its word */
    if (s->obj.device->backend != q->base.obj.device->backend) return accel_i_cu_sem_wait(q, s, v);
    if (!accel_i_cu_dev(q->base.obj.device)->memops) return accel_i_cu_event_wait(q, s, v);
    accel_i_spin_lock(&cs->point_lock);
    hold = accel_i_cu_wait_target(cs, v, q->progress.dptr, &addr, &value);
    accel_i_spin_unlock(&cs->point_lock);
    /* a point enqueued earlier on this stream: stream order */
    if (addr == q->progress.dptr) return ACCEL_CU_SUCCESS;
    if (addr == cs->mirror.dptr) accel_i_cu_gate_add(q, cs->mirror.host, v);
    if (addr == cs->mirror.dptr && hold) accel_i_cu_hold(q);
    return accel_i_cu_word_wait(q, addr, value);
}
/* The stream waits for the word at addr >= value (cyclic, as the driver compares), or for the imported
   semaphore sem >= value; the wait retires with the queue's next point. */
static accel_cu_result accel_i_cu_wait_call(accel_i_cu_queue* q, accel_cu_deviceptr addr, uint64_t value,
                                            accel_cu_extsem sem) {
    accel_cu_extsem_wait w;
    if (!sem) return accel_i_cu.StreamWaitValue64(q->stream, addr, value, ACCEL_CU_STREAM_WAIT_VALUE_GEQ);
    memset(&w, 0, sizeof w);
    w.params.fence.value = value;
    return accel_i_cu.WaitExternalSemaphoresAsync(&sem, &w, 1, q->stream);
}
static accel_cu_result accel_i_cu_gpu_wait(accel_i_cu_queue* q, accel_cu_deviceptr addr, uint64_t value,
                                           accel_cu_extsem sem) {
    accel_cu_result cr;
    q->dirty = true;   /* a point after the wait must come after it */
    q->enqueued++;
    /* no release runs from here until it retires */
    accel_i_cu_waits_add(accel_i_cu_dev(q->base.obj.device), 1);
    cr = accel_i_cu_wait_call(q, addr, value, sem);
    if (accel_i_cu_retry(accel_i_cu_dev(q->base.obj.device), cr))
        cr = accel_i_cu_wait_call(q, addr, value, sem);
    if (cr == ACCEL_CU_SUCCESS) q->waits++;
    else accel_i_cu_waits_add(accel_i_cu_dev(q->base.obj.device), -1);
    return cr;
}
static accel_cu_result accel_i_cu_word_wait(accel_i_cu_queue* q, accel_cu_deviceptr addr, uint64_t value) {
    return accel_i_cu_gpu_wait(q, addr, value, NULL);
}
/* ==== cuda: GPU waits in the event-ring mode ====
   Without stream memory operations a queue still waits on the GPU for a signal of its own device whose
   value a point of one of its queues promised: cuStreamWaitEvent on the event of the first such point
   (its mark, as the memops mode's waits find theirs; the in-flight one with the smallest such value
   where its mark has left the signal's ring), none for a point of the queue's own (earlier in the same
   stream). Ring points never wait for the host (the ring mode gates those waits before the stream), so
   the event completes by itself. Everything else (a value no point promised yet, a host-raised one,
   another device's signal) waits on the host. A point that left its ring is reached: nothing to wait
   for (a point's mark is noted once its ring holds it, and the reaper takes a point out only after it
   found it reached). Points behind a timestamp not applied yet are not watched (the host writes the
   timestamp first).
   What the awaited work waited for reads reached (accel_i_cu_signal_settle), as in the memops mode,
   where the GPU writes the progress words: the reaper writes into a queue's progress word the seq it
   found reached, and the waiting queue's next point implies the points it waited for: its apply raises
   their progress words first (two a point; a third wait gets a point of its own before it). So a
   host that saw the waiting queue's signal reads the awaited one too, even while another thread is
   still applying that one's queue (a reaper skips a queue whose reap lock is taken). */
/* Has a point of the device's own queues promised s >= v (a mark, or one that left the marks)? */
static bool accel_i_cu_promised(accel_signal* s, uint64_t v) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    bool found;
    accel_i_spin_lock(&cs->point_lock);
    found = accel_i_cu_first_mark(cs, v) != NULL || cs->evicted >= v;
    accel_i_spin_unlock(&cs->point_lock);
    return found;
}
/* The in-flight point of s with the smallest value reaching v, not behind a timestamp: its queue (NULL
   when there is none) and seq (queues_lock held). */
static accel_i_cu_queue* accel_i_cu_ring_promise(accel_i_cu_device* dev, accel_signal* s, uint64_t v,
                                                 uint64_t* seq) {
    accel_i_cu_queue* found = NULL;
    uint64_t best = UINT64_MAX;
    for (accel_i_cu_queue* o = dev->queues; o; o = o->next_queue) {
        accel_i_spin_lock(&o->ring_lock);
        for (uint32_t i = 0; i < o->ring_count; i++) {
            const accel_i_cu_point* e = accel_i_cu_ring_at(o, i);
            if (e->stamp) break;
            if (e->signal == s && e->value >= v && e->value < best) {
                best = e->value;
                found = o;
                *seq = e->seq;
            }
        }
        accel_i_spin_unlock(&o->ring_lock);
    }
    return found;
}
/* The queue of dev whose progress word is `word` (a mark's), NULL when it is gone (queues_lock held). */
static accel_i_cu_queue* accel_i_cu_queue_at(accel_i_cu_device* dev, accel_cu_deviceptr word) {
    accel_i_cu_queue* o = dev->queues;
    while (o && o->progress.dptr != word) o = o->next_queue;
    return o;
}
/* The event recorded for o's point `seq` while that point is in o's ring (a point with no event of its
   own shares the one recorded before it); NULL once it left the ring: reached (o's ring_lock held, which
   keeps the event from being recorded again meanwhile). */
static accel_cu_event accel_i_cu_point_event(const accel_i_cu_queue* o, uint64_t seq) {
    for (uint32_t i = o->ring_count; i-- > 0;) {
        const accel_i_cu_point* e = accel_i_cu_ring_at(o, i);
        if (e->seq < seq) break;
        if (e->seq == seq && e->recorded) return e->ev;
    }
    return NULL;
}
/* q's stream waits for o's point `seq` (queues_lock held); the point is one q's next point implies. */
static accel_cu_result accel_i_cu_event_wait_at(accel_i_cu_queue* q, accel_i_cu_queue* o, uint64_t seq) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    accel_cu_event ev;
    accel_i_spin_lock(&o->ring_lock);
    if ((ev = accel_i_cu_point_event(o, seq)) != NULL) {
        q->dirty = true;   /* a point after the wait must come after it */
        q->enqueued++;
        cr = accel_i_cu.StreamWaitEvent(q->stream, ev, 0);
        if (accel_i_cu_retry(dev, cr)) cr = accel_i_cu.StreamWaitEvent(q->stream, ev, 0);
        if (cr == ACCEL_CU_SUCCESS) {   /* room: accel_i_cu_event_wait */
            q->implied[q->nimplied].word = o->progress.host;
            q->implied[q->nimplied++].seq = seq;
        }
    }
    accel_i_spin_unlock(&o->ring_lock);
    return cr;
}
static accel_cu_result accel_i_cu_event_wait(accel_i_cu_queue* q, accel_signal* s, uint64_t v) {
    accel_i_cu_device* dev = accel_i_cu_dev(s->obj.device);   /* whose queues promised v */
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    const accel_i_cu_mark* m;
    accel_i_cu_queue* o;
    accel_cu_deviceptr word = 0;
    uint64_t seq = 0;
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    accel_i_spin_lock(&cs->point_lock);
    if ((m = accel_i_cu_first_mark(cs, v)) != NULL) { word = m->word; seq = m->seq; }
    accel_i_spin_unlock(&cs->point_lock);
    if (word == q->progress.dptr) return ACCEL_CU_SUCCESS;
    if (q->nimplied == ACCEL_I_CU_IMPLIED) accel_i_cu_point_add(q, NULL, 0, NULL, NULL);   /* room */
    accel_i_spin_lock(&dev->queues_lock);
    o = word ? accel_i_cu_queue_at(dev, word) : accel_i_cu_ring_promise(dev, s, v, &seq);
    if (o && o != q) cr = accel_i_cu_event_wait_at(q, o, seq);
    accel_i_spin_unlock(&dev->queues_lock);
    return cr;
}
/* wait_on_device: a CUDA signal of this device, where the device has stream memory operations, or of
   another accel device on the same CUDA device (accel_i_cu_peer_waits; in the event-ring mode, a value
   a point of its queues promised: accel_i_cu_peer_events), or a CPU signal whose device word this CUDA
   device can watch (cuda: CPU signals on the GPU). */
static bool accel_i_cu_peer_waits(accel_device* d, accel_device* o);
static bool accel_i_cu_peer_events(accel_device* d, accel_signal* s, uint64_t v);
static bool accel_i_cu_sems(void);
static bool accel_i_cu_cpu_word(accel_i_cu_device* dev, accel_signal* s, accel_i_a64** word,
                                accel_cu_deviceptr* addr);
static bool accel_i_cu_wait_on_device(accel_queue* q, accel_signal* s, uint64_t v) {
    accel_i_a64* word;
    accel_cu_deviceptr addr;
    (void)v;
    if (s->obj.device->backend == accel_cpu_backend())
        return accel_i_cu_peer_waits(q->obj.device, s->obj.device) &&
               accel_i_cu_cpu_word(accel_i_cu_dev(q->obj.device), s, &word, &addr);
    if (s->obj.device->backend != q->obj.device->backend)   /* cuda: waits on Vulkan signals */
        return accel_i_cu_sems() && accel_i_signal_import(q->obj.device, s, v) != NULL;
    if (s->obj.device != q->obj.device)
        return accel_i_cu_peer_waits(q->obj.device, s->obj.device) ||
               accel_i_cu_peer_events(q->obj.device, s, v);
    return accel_i_cu_dev(q->obj.device)->memops || (accel_i_cu.StreamWaitEvent && accel_i_cu_promised(s, v));
}
/* Would enqueuing more block the caller? A stream holds only so much work not started (a GPU's launch
   queue: about a thousand entries a stream; a full one blocks the enqueuing call in the driver), and
   the work behind a GPU wait that the host must release does not start before the host does. Once
   ACCEL_CUDA_MAX_BEHIND stream operations (launches, copies, fills, waits, memory writes: each enqueuing
   driver call counts once, a cuStreamBatchMemOp too, as the driver's launch queue takes it and as a
   raw program's event record would) wait behind the oldest such wait not known released, the stream
   is full: inside accel_queue_submit the rest goes to the queue's worker; the
   worker reaps (which may be what releases the wait) until there is room (see the core's
   accel_i_walker_wait_room). Neither blocks in the driver. */
static uint64_t accel_i_cu_behind(const accel_i_cu_queue* q) {
    return q->ngates ? q->enqueued - q->gates[0].at : 0;
}
/* more: operations the caller enqueues before it looks again (a traced segment's wait points) */
static bool accel_i_cu_stream_full(accel_i_cu_queue* q, uint64_t more) {
    if (accel_i_cu_behind(q) + more < ACCEL_CUDA_MAX_BEHIND) return false;
    accel_i_cu_gates_prune(q, false);
    return accel_i_cu_behind(q) + more >= ACCEL_CUDA_MAX_BEHIND;
}
/* The stream is full: the rest goes to the worker. A point goes after what was enqueued since the last
   one (mid-batch: after a command or a wait), so that passing it tells the worker that the waits before
   it were passed, those a list entry took in too (accel_i_cu_gates_prune): else nothing would, and the
   queue would stay full for ever. Only with room in the ring: a point without room waits for the stream
   (accel_i_cu_point_add), which here is behind a wait the host has yet to release, perhaps by this
   very thread (out of host memory then, the point is left out and the queue frees its budget once
   idle, as before). */
static int accel_i_cu_hand_back(accel_i_cu_queue* q) {
    if (q->dirty && !accel_i_cu_gone(q)) {
        if (accel_i_cu_ring_room(q, 1)) {
            accel_i_cu_enter_cached(accel_i_cu_dev(q->base.obj.device));
            accel_i_cu_point_add(q, NULL, 0, NULL, NULL);
        }
    }
    atomic_store(&q->full, 1u);
    return ACCEL_I_WOULD_BLOCK;
}
/* The walking thread enqueued a segment: it moves poll_mark (one walking thread at a time, so a relaxed
   load and store), and the worker's poll notes when it saw the mark move (accel_i_cu_poll_since),
   instead of a clock read and a locked store on the enqueue path every segment. */
static void accel_i_cu_enqueued(accel_i_cu_queue* q) {
    uint64_t m = atomic_load_explicit(&q->poll_mark, memory_order_relaxed);
    atomic_store_explicit(&q->poll_mark, m + 1u, memory_order_relaxed);
}
/* When work was last enqueued, as the worker saw it: at most one poll slice late. */
static uint64_t accel_i_cu_poll_since(accel_i_cu_queue* q, uint64_t now) {
    uint64_t m = atomic_load_explicit(&q->poll_mark, memory_order_relaxed);
    if (m != q->poll_seen) {
        q->poll_seen = m;
        q->poll_since = now;
    }
    return q->poll_since;
}
/* A native step's fn enqueues what it likes, one operation or thousands: behind a GPU wait the host has
   yet to release, that could fill the stream and block the thread in the driver (the submitting thread,
   perhaps the one that would release the wait). So it runs only once no such wait is pending: until
   then the rest of the batch goes to the worker, which reaps and tries again (as for a full stream).
   Not a queue-memory point (a NATIVE command too): that is one operation, counted as any. */
static bool accel_i_cu_native_held(accel_i_cu_queue* q, const accel_i_cmd* c) {
    if (c->kind != ACCEL_I_CMD_NATIVE || (c->flags & ACCEL_I_CMD_QMEM_POINT)) return false;
    if (q->ngates) accel_i_cu_gates_prune(q, false);
    return q->ngates != 0;
}
/* Waits wfrom..to of b went to the stream: on a traced device, a point after them for each (its span). */
static void accel_i_cu_waits_traced(accel_i_cu_queue* q, accel_i_batch* b, uint32_t wfrom, uint32_t to) {
    for (uint32_t i = wfrom; i < to && q->base.obj.device->trace; i++)
        accel_i_cu_point_add(q, NULL, 0, NULL, &b->cmds[i]);
}
/* segment_submit: the segment's GPU waits, then its commands, into the queue's stream. A stream that
   fills up among the waits (a batch of more waits for the host than the stream holds) or among the
   commands hands the rest to the worker (b->pc: the next wait or command). */
static int accel_i_cu_segment_submit(accel_queue* base, accel_i_batch* b, const accel_i_segment* sg,
                                     bool may_block) {
    accel_i_cu_queue* q = (accel_i_cu_queue*)base;
    accel_i_cu_device* dev = accel_i_cu_dev(base->obj.device);
    uint64_t failed = 0;
    uint32_t points = (sg->to - sg->wfrom) * (dev->base.trace ? 2u : 1u) + 2u;
    uint64_t enqueued = q->enqueued;
    (void)may_block;   /* inside accel_queue_submit or on the worker, a full stream is handed back alike */
    if (accel_i_cu_stream_full(q, 0)) return accel_i_cu_hand_back(q);   /* the worker reaps, then again */
    /* ring room for every point the segment can add, and the batch's last (or a host step's): a point
       with no room makes the enqueuer wait for the stream, which a GPU wait may hold for ever */
    if (!accel_i_cu_ring_room(q, points))
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_queue_submit: out of host memory for the signal points of %s",
                            accel_i_label(&q->base.obj));
    accel_i_cu_enter_cached(dev);
    for (uint32_t i = sg->wfrom; i < sg->from && !failed; i++) {
        accel_i_cmd* c = &b->cmds[i];
        accel_cu_result cr;
        if (!(c->flags & ACCEL_I_CMD_ON_DEVICE)) continue;
        /* the rest of the waits to the worker, or later (traced: each wait's point is two operations) */
        if (i > sg->wfrom && accel_i_cu_stream_full(q, dev->base.trace ? 2u * (i - sg->wfrom) : 0u)) {
            accel_i_cu_waits_traced(q, b, sg->wfrom, i);
            accel_i_cu_enqueued(q);
            b->pc = i;
            return accel_i_cu_hand_back(q);
        }
        cr = accel_i_cu_device_wait(q, c->u.sig.signal, c->u.sig.value);
        if (cr != ACCEL_CU_SUCCESS) {   /* the rest of the batch drops, its signals fail with the reason */
            failed = accel_i_failed_value(accel_i_cu_check(dev, cr, "cuStreamWaitValue64"));
            accel_i_fail_rest(b, i + 1, failed);
        }
    }
    if (!failed) accel_i_cu_waits_traced(q, b, sg->wfrom, sg->from);
    for (uint32_t pc = sg->from; pc < sg->to && !failed; pc++) {
        /* the rest to the worker, or later: a full stream, or a native step held */
        if ((pc > sg->from && accel_i_cu_stream_full(q, 0)) || accel_i_cu_native_held(q, &b->cmds[pc])) {
            if (q->enqueued != enqueued) accel_i_cu_enqueued(q);   /* else the worker's poll backs off */
            b->pc = pc;
            return accel_i_cu_hand_back(q);
        }
        /* losing, not lost: a loss fails the signals (releasing a held step's gates) before lost shows */
        if (atomic_load(&dev->losing)) failed = accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST);
        else failed = accel_i_cu_cmd(q, b, pc);
        if (failed) accel_i_fail_rest(b, pc + 1, failed);   /* drop the rest, pass the failure on */
    }
    accel_i_cu_enqueued(q);
    if (atomic_load_explicit(&q->full, memory_order_relaxed)) atomic_store(&q->full, 0u);
    if (failed) b->pc = b->count;
    return ACCEL_OK;
}
/* Does b join the newest point in the ring? It may when nothing was enqueued since that point (a batch
   that ends with a signal: one point a step, not two), when the point carries no batch yet, and b
   leaves no staging memory and no waits to retire. Under ring_lock, as the reaper takes the point. */
static bool accel_i_cu_batch_joins(accel_i_cu_queue* q, accel_i_batch* b) {
    bool joined = false;
    if (q->dirty || q->staging || q->waits || q->holds || accel_i_cu_gone(q)) return false;
    accel_i_spin_lock(&q->ring_lock);
    if (q->ring_count) {
        accel_i_cu_point* last = accel_i_cu_ring_at(q, q->ring_count - 1);
        if (!last->batch && last->seq == q->issued) { last->batch = b; joined = true; }
    }
    accel_i_spin_unlock(&q->ring_lock);
    return joined;
}
/* batch_submitted: its last point releases it; the worker watches the points. */
static void accel_i_cu_batch_submitted(accel_queue* base, accel_i_batch* b) {
    accel_i_cu_queue* q = (accel_i_cu_queue*)base;
    if (!accel_i_cu_batch_joins(q, b)) {
        /* else the point makes no driver call */
        if (q->dirty && !accel_i_cu_gone(q)) accel_i_cu_enter_cached(accel_i_cu_dev(base->obj.device));
        accel_i_cu_point_add(q, NULL, 0, b, NULL);
    }
    accel_i_walker_poke(base);
}
/* queue_poll (the queue's worker, idle): applies reached points; in flight, polls again after
   accel_i_cu_poll_slice while a GPU wait needs the host to apply a point (reap_needed), else after
   accel_i_cu_backstop: the threads that wait for a value apply the points themselves, GPU waits go
   GPU to GPU, so the worker is only the backstop (releases, accel_signal_value pollers, device loss)
   and wakes once per backstop pause, not per batch. With everything reached it keeps that pace until
   nothing was enqueued for ACCEL_I_CU_LINGER_NS, then sleeps for good: a batch
   submitted to a worker that sleeps for good wakes it (accel_i_walker_poke), so sleeping as soon as
   the work completes (work that completes as fast as it is submitted: a chain a host step apart) was a
   wake-up per batch. Checks the stream once the waits grow past a millisecond. */
#define ACCEL_I_CU_BACKSTOP_MAX_NS (8u * (uint64_t)ACCEL_CUDA_POLL_MAX_NS)
/* The worker's next backstop pause (see cuda: signal points): ACCEL_CUDA_POLL_MAX_NS, then twice the
   last, up to ACCEL_I_CU_BACKSTOP_MAX_NS; from the start again after a poll at the waiters' pace or a
   sleep for good (q->backstop = 0). Only the worker polls the queue: a plain field. */
static uint64_t accel_i_cu_backstop(accel_i_cu_queue* q) {
    uint64_t b = q->backstop ? q->backstop : ACCEL_CUDA_POLL_MAX_NS;
    q->backstop = accel_i_backoff(b, ACCEL_I_CU_BACKSTOP_MAX_NS);
    return b;
}
static uint64_t accel_i_cu_queue_poll(accel_queue* base) {
    accel_i_cu_queue* q = (accel_i_cu_queue*)base;
    accel_i_cu_device* dev = accel_i_cu_dev(base->obj.device);
    uint64_t slice, now = accel_i_now_ns(), since = accel_i_cu_poll_since(q, now);
    if (!accel_i_cu_reap(q)) {   /* everything reached (the reap ran the due graves) */
        if (now - since < ACCEL_I_CU_LINGER_NS) return accel_i_cu_backstop(q);
        q->backstop = 0;
        return 0;
    }
    slice = accel_i_cu_poll_slice(since);
    /* waits over 1 ms: notice a dead device; not a stale queue's stream (a recover on another thread
       may be resetting its context: its error would lose the new generation) */
    if (slice >= 32000u && !accel_i_lost(&dev->base) && accel_i_cu_use(dev, &q->base.obj)) {
        accel_cu_result cr;
        accel_i_cu_enter(dev);
        cr = accel_i_cu.StreamQuery(q->stream);
        if (cr != ACCEL_CU_SUCCESS && cr != ACCEL_CU_ERROR_NOT_READY)
            accel_i_cu_check(dev, cr, "cuStreamQuery");
        accel_i_cu_unuse(dev);
    }
    if (atomic_load_explicit(&dev->reap_needed, memory_order_relaxed) == 0 &&
        !atomic_load_explicit(&q->full, memory_order_relaxed))
        return accel_i_cu_backstop(q);
    q->backstop = 0;
    return slice;
}

static accel_result accel_i_cu_queue_submit(accel_queue* base, accel_i_batch* b) {
    accel_i_cu_queue* q = (accel_i_cu_queue*)base;
    accel_result r = accel_i_replays_live(b);   /* a native list's stale peer buffers */
    if (r != ACCEL_OK) { accel_i_batch_recycle(base, b); return r; }
    /* one thread submits to a queue at a time (accel.h: thread safety): a store, not a locked add */
    atomic_store_explicit(&q->submitted, atomic_load_explicit(&q->submitted, memory_order_relaxed) + 1u,
                          memory_order_release);
    return accel_i_walker_submit(base, b);
}

/* queue_drain: everything enqueued so far completed and its points applied. From accel_queue_finish (the
   worker idle): every batch submitted so far finished. From a host step (the walking thread, mid-batch):
   a point goes behind the commands enqueued since the last one, and the drain ends when no point is left
   in flight (the batch itself finishes later, so `done` cannot be the test there). */
static accel_result accel_i_cu_queue_drain(accel_queue* base, uint64_t timeout_ns) {
    accel_i_cu_queue* q = (accel_i_cu_queue*)base;
    uint64_t submitted = atomic_load(&q->submitted), deadline = accel_i_deadline(timeout_ns),
             since = accel_i_now_ns();
    /* made current: a host step's fn runs next on this thread, with accel's context current as before the
       enqueue path trusted it (cuda: the current context on the enqueue path) */
    if (!accel_i_cu_gone(q)) accel_i_cu_enter(accel_i_cu_dev(base->obj.device));
    /* mid-batch only: a walked batch ends with a point */
    if (q->dirty) accel_i_cu_point_add(q, NULL, 0, NULL, NULL);
    for (;;) {
        bool pending = accel_i_cu_reap(q);
        uint64_t now, slice;
        if (!pending || accel_i_event_value(&q->done) >= submitted) {
            /* what the batches released is freed too (a reap on another thread may have listed it, or
               be running it: `sure` waits for that), as the header promises of a finish */
            accel_i_cu_graves_settle(accel_i_cu_dev(base->obj.device), true);
            return accel_i_lost(base->obj.device) ? ACCEL_ERROR_DEVICE_LOST : ACCEL_OK;
        }
        now = accel_i_now_ns();
        if (timeout_ns == 0 || now >= deadline) return ACCEL_TIMEOUT;
        slice = accel_i_cu_poll_slice(since);
        accel_i_event_wait(&q->done, submitted, pending && deadline - now > slice ? now + slice : deadline);
    }
}

/* native false: the queue is stale, its stream, events, word and staging went with the old context */
static void accel_i_cu_queue_free(accel_i_cu_queue* q, bool events, bool native) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_device* d = &dev->base;
    for (uint32_t i = 0; i < q->ring_cap && native; i++) {
        if (q->ring[i].ev) accel_i_cu.EventDestroy(q->ring[i].ev);
        if (q->ring[i].sev) accel_i_cu.EventDestroy(q->ring[i].sev);
    }
    if (q->sev_spare && native) accel_i_cu.EventDestroy(q->sev_spare);
    accel_i_dev_free(d, q->ring, (size_t)q->ring_cap * sizeof *q->ring);
    if (q->stream && native) accel_i_cu.StreamDestroy(q->stream);
    /* keeps its value: see cuda: pinned words */
    if (q->progress.host && native) accel_i_cu_word_give(dev, &q->progress);
    if (q->staging_cache && native) accel_i_cu_release(dev, ACCEL_I_CU_HOST_MEM, q->staging_cache, 0);
    if (events) accel_i_event_destroy(&q->done);
    accel_i_dev_free(d, q, sizeof *q);
}

static accel_result accel_i_cu_queue_create(accel_device* d, accel_queue_type type, accel_queue** out) {
    accel_i_cu_device* dev = accel_i_cu_dev(d);
    accel_i_cu_queue* q = (accel_i_cu_queue*)accel_i_dev_alloc(d, sizeof *q);
    accel_result r;
    if (!q) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: out of host memory");
    memset((void*)q, 0, sizeof *q);
    q->base.obj.device = d;
    atomic_init(&q->submitted, 0u);
    atomic_init(&q->poll_mark, 0u);
    atomic_init(&q->full, 0u);
    atomic_init(&q->stamps_pending, 0u);
    accel_i_cu_enter(dev);
    r = accel_i_cu_check(dev, accel_i_cu.StreamCreate(&q->stream, ACCEL_CU_STREAM_NON_BLOCKING),
                         "cuStreamCreate");
    if (r == ACCEL_OK) r = accel_i_cu_word_take(dev, &q->progress, true);
    if (r != ACCEL_OK) { accel_i_cu_queue_free(q, false, true); return r; }
    q->issued = atomic_load(q->progress.host);   /* a reused word counts on */
    q->reached = q->issued;
    q->epoch = dev->epoch;
    if (!accel_i_event_init(&q->done, 0)) {
        accel_i_cu_queue_free(q, false, true);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    accel_i_queue_init(&q->base, d, type);
    if ((r = accel_i_walker_start(&q->base)) != ACCEL_OK) {
        accel_i_object_undo(&q->base.obj);
        accel_i_queue_fini(&q->base);
        accel_i_cu_queue_free(q, true, true);
        return r;
    }
    accel_i_spin_lock(&dev->queues_lock);
    q->next_queue = dev->queues;
    dev->queues = q;
    accel_i_spin_unlock(&dev->queues_lock);
    *out = &q->base;
    return ACCEL_OK;
}

static void accel_i_cu_queue_destroy(accel_queue* base) {
    accel_i_cu_queue* q = (accel_i_cu_queue*)base;
    accel_i_cu_device* dev = accel_i_cu_dev(base->obj.device);
    accel_i_walker_stop(base);    /* waits for everything submitted */
    accel_i_spin_lock(&dev->queues_lock);
    for (accel_i_cu_queue** p = &dev->queues; *p; p = &(*p)->next_queue)
        if (*p == q) { *p = q->next_queue; break; }
    accel_i_spin_unlock(&dev->queues_lock);
    if (!accel_i_stale(&base->obj)) accel_i_cu_enter(dev);
    while (accel_i_cu_reap(q)) accel_i_yield();   /* nothing is left (the due graves ran); makes sure of it */
    accel_i_queue_fini(base);
    accel_i_cu_queue_free(q, true, !accel_i_stale(&base->obj));
}

/* ==== cuda: recovery ==== */
/* accel_device_recover (see "Recovery" in the header), for every accel device of the domain (one
   primary context). Every object made stale, then the signals failed and the walks settled (the core's
   part, done here for all of them: accel_i_cu_group_recover); the old context's points apply (as
   failed: no driver call), each
   device's native state is forgotten (it goes with the context: nothing is released), the context is
   reset and retained anew, and each device's stream and pinned blocks are made again. */
static void accel_i_cu_cpu_forget(accel_i_cu_device* dev);
static void accel_i_cu_forget_native(accel_i_cu_device* dev) {
    accel_i_cu_block* k;
    accel_i_cu_cpu_forget(dev);   /* before the blocks go: CPU signals' raises store no more into them */
    accel_i_spin_lock(&dev->words_lock);
    k = dev->blocks;
    dev->blocks = NULL;
    accel_i_spin_unlock(&dev->words_lock);
    while (k) {
        accel_i_cu_block* next = k->next;
        accel_i_dev_free(&dev->base, k, sizeof *k);
        k = next;
    }
    dev->io = NULL;
    dev->cal_ev = NULL;
    dev->cal_at = 0;
    dev->copy_mod = NULL;
    dev->copy_fn = NULL;
    atomic_store(&dev->reap_needed, 0u);
}
/* After the reset: the releases held back of dom's context (its handles went with it: nothing runs;
   a retain a grave kept goes) and dom's count, the recover's own included, are forgotten; the graves of
   other CUDA devices run if that was the last wait pending (dom's lock held). */
static void accel_i_cu_graves_forget(accel_i_cu_domain* dom) {
    accel_i_mutex_lock(&accel_i_cu_g.release_lock);
    accel_i_cu_graves_gather();
    for (accel_i_cu_grave **p = &accel_i_cu_g.graves, *g; (g = *p) != NULL;) {
        if (g->cudev != dom->cudev) { p = &g->next; continue; }
        *p = g->next;
        if (g->retained) accel_i_cu.DevicePrimaryCtxRelease(g->cudev);
        accel_i_default_free(g, sizeof *g, NULL);
    }
    accel_i_cu_waits_count(dom, -(int64_t)dom->waits_pending);
    if (accel_i_cu_g.waits_all == 0) accel_i_cu_graves_run(NULL);
    accel_i_mutex_unlock(&accel_i_cu_g.release_lock);
}
/* Resets the primary context (dev's retain released first: the last one gone, the context goes; if
   others retain it, the reset takes it down) and retains it again: *ctx. */
static accel_result accel_i_cu_context_reset(accel_i_cu_device* dev, accel_cu_context* ctx) {
    accel_cu_result cr;
    accel_i_cu.DevicePrimaryCtxRelease(dev->cudev);
    cr = accel_i_cu.DevicePrimaryCtxReset(dev->cudev);
    if (cr != ACCEL_CU_SUCCESS)
        accel_i_log(&dev->base, ACCEL_LOG_WARN, "accel_device_recover: cuDevicePrimaryCtxReset: %s (%d)",
                    accel_i_cu_error_name(cr), cr);
    cr = accel_i_cu.DevicePrimaryCtxRetain(ctx, dev->cudev);
    if (accel_i_cu_sticky(cr))   /* NVIDIA's drivers: the error outlives the context (see "Recovery") */
        return accel_i_fail(&dev->base, ACCEL_ERROR_DEVICE_LOST,
                            "accel_device_recover: CUDA device %s: the driver keeps the sticky error %s (%d) "
                            "after the primary context's reset: this process cannot use the GPU again "
                            "(end it and start a new one); destroy the device",
                            dev->base.info.name, accel_i_cu_error_name(cr), cr);
    if (cr != ACCEL_CU_SUCCESS)
        return accel_i_fail(&dev->base, ACCEL_ERROR_BACKEND,
                            "accel_device_recover: cuDevicePrimaryCtxRetain failed: %s (%d)",
                            accel_i_cu_error_name(cr), cr);
    return ACCEL_OK;
}
/* dev's native state anew in the reset context ctx: its stream, its pinned blocks, its pool. */
static accel_result accel_i_cu_native_make(accel_i_cu_device* dev, accel_cu_context ctx) {
    accel_cu_result cr;
    /* the same handle on the drivers seen so far: then nobody sees a write (stale queues' threads may
       still read it, for calls their gone state then skips) */
    if (ctx != dev->ctx) dev->ctx = ctx;
    accel_i_cu_enter(dev);
    cr = accel_i_cu.StreamCreate(&dev->io, ACCEL_CU_STREAM_NON_BLOCKING);
    if (cr != ACCEL_CU_SUCCESS) {
        dev->io = NULL;
        return accel_i_fail(&dev->base, ACCEL_ERROR_BACKEND, "accel_device_recover: cuStreamCreate: %s (%d)",
                            accel_i_cu_error_name(cr), cr);
    }
    if (!accel_i_cu_words_init(dev))
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_device_recover: out of memory for the device's pinned words");
    accel_i_cu_mempool_make(dev);
    dev->epoch = atomic_load(&dev->domain->epoch);
    atomic_store(&dev->losing, 0u);   /* the new generation can be lost again */
    accel_i_log(&dev->base, ACCEL_LOG_INFO,
                "accel_device_recover: CUDA device %s: the primary context is new", dev->base.info.name);
    return ACCEL_OK;
}
/* Is a stream of dev (a queue's, the device's own) still running work? A lost context's read idle; the
   streams of queues made before an earlier reset are not asked (their handles went with it). */
static bool accel_i_cu_streams_busy(accel_i_cu_device* dev) {
    bool busy = dev->io && accel_i_cu.StreamQuery(dev->io) == ACCEL_CU_ERROR_NOT_READY;
    accel_i_spin_lock(&dev->queues_lock);
    for (accel_i_cu_queue* q = dev->queues; q && !busy; q = q->next_queue)
        busy = q->stream && q->epoch == dev->epoch &&
               accel_i_cu.StreamQuery(q->stream) == ACCEL_CU_ERROR_NOT_READY;
    accel_i_spin_unlock(&dev->queues_lock);
    return busy;
}
/* Does a queue of another GPU hold a copy with dev's memory (core: several devices, peer_copies)? The
   driver's reset of dev's context waits for no other context's stream. */
static bool accel_i_cu_peer_copying(accel_i_cu_device* dev) {
    return atomic_load(&dev->base.peer_copies) != 0;
}
/* The driver tears a context down only once its streams are idle, and a stream that waits on the GPU
   for a word no stale object will raise again (its signal failed: a stale mirror is not written) waits
   for ever: the reset would hang. So every word of the domain's devices (dev's context: a stream of one
   may wait on another's word) reads ACCEL_SIGNAL_MAX, at or above every value a GPU waits for, again
   while a stream still runs (the work a released wait lets through writes its points' words lower),
   for up to ACCEL_I_CU_DRAIN_NS; the work left runs on the old context's memory, which the reset then
   frees. */
#define ACCEL_I_CU_DRAIN_NS 2000000000ull
/* What still runs after ACCEL_I_CU_DRAIN_NS: a stream of the domain (the reset waits for it) or another
   GPU's copy with the domain's memory (which the reset frees under it). */
static void accel_i_cu_drain_warn(accel_i_cu_device* dev) {
    bool streams = false, peers = false;
    for (accel_i_cu_device* m = dev->domain->members; m; m = m->domain_next) {
        if (m->epoch != dev->epoch) continue;
        streams = streams || accel_i_cu_streams_busy(m);
        peers = peers || accel_i_cu_peer_copying(m);
    }
    if (streams)
        accel_i_log(&dev->base, ACCEL_LOG_WARN, "accel_device_recover: a stream of CUDA device %s still runs "
                    "after %llu ms (a long kernel, or a wait on another device's word): the reset waits for "
                    "it",
                    dev->base.info.name, (unsigned long long)(ACCEL_I_CU_DRAIN_NS / 1000000u));
    if (peers)
        accel_i_log(&dev->base, ACCEL_LOG_WARN, "accel_device_recover: a batch of another GPU's queue that "
                    "copies with memory of CUDA device %s has not completed after %llu ms (long work, or a "
                    "wait after the copy): the reset goes on; a copy not run yet would run on freed memory",
                    dev->base.info.name, (unsigned long long)(ACCEL_I_CU_DRAIN_NS / 1000000u));
}
static void accel_i_cu_words_release(accel_i_cu_device* dev) {
    uint64_t until = accel_i_now_ns() + ACCEL_I_CU_DRAIN_NS;
    accel_i_cu_enter(dev);
    for (;;) {
        bool busy = false;
        for (accel_i_cu_device* m = dev->domain->members; m; m = m->domain_next) {
            if (m->epoch != dev->epoch) continue;   /* its remake failed at an earlier reset: drained then */
            accel_i_spin_lock(&m->words_lock);
            for (accel_i_cu_block* k = m->blocks; k; k = k->next)
                for (uint32_t i = 0; i < ACCEL_I_CU_BLOCK_WORDS; i++)
                    atomic_store(accel_i_cu_block_word(k, i), (uint64_t)ACCEL_SIGNAL_MAX);
            accel_i_spin_unlock(&m->words_lock);
        }
        for (accel_i_cu_device* m = dev->domain->members; m && !busy; m = m->domain_next)
            busy = m->epoch == dev->epoch && (accel_i_cu_streams_busy(m) || accel_i_cu_peer_copying(m));
        if (!busy) return;
        if (accel_i_now_ns() > until) break;
        accel_i_yield();
    }
    accel_i_cu_drain_warn(dev);
}
/* Before the reset (accel_i_cu_group_recover made the devices' objects stale): their stale queues'
   points apply (as failed: no driver call), then the words of every device of the domain are raised
   until its streams are idle (a stream of one may wait on another's word), and the calls under way
   (accel_i_cu_use: buffer calls, a relay's enqueue) return; then the relays end (cuda: Vulkan waits on
   CUDA signals: their streams wait on words raised now, so each synchronize is brief) and the imports
   go, none made since. */
static void accel_i_cu_natives_drain(accel_i_cu_device* dev) {
    accel_i_cu_device* m;
    for (m = dev->domain->members; m; m = m->domain_next)
        while (accel_i_cu_reap_device(m)) accel_i_yield();
    accel_i_cu_words_release(dev);
    for (m = dev->domain->members; m; m = m->domain_next) accel_i_inside_drain(&m->users);
    for (m = dev->domain->members; m; m = m->domain_next) accel_i_relays_end(&m->base);
    for (m = dev->domain->members; m; m = m->domain_next) accel_i_imports_drop_into(&m->base);
}
/* The io and cache locks keep buffer reads and writes and the copy kernel's loading out while dev's
   native state goes (and the domain's lock releases, taken after these). */
static void accel_i_cu_native_lock(accel_i_cu_device* dev, bool lock) {
    if (lock) { accel_i_mutex_lock(&dev->io_lock); accel_i_mutex_lock(&dev->cache_lock); }
    else { accel_i_mutex_unlock(&dev->cache_lock); accel_i_mutex_unlock(&dev->io_lock); }
}
/* The reset of the primary context takes down the native state of every accel device on the CUDA
   device: so every one of them recovers (see "Recovery" in the header), one reset for all. All of them
   are made stale before any signal of one fails (the core's part of a recover, done here: the backend's
   recover_whole): a failure that reaches a queue of another one finds it stale, and its waiters return
   DEVICE_LOST as the header says, not SIGNAL_FAILED. Every recover of a CUDA device closes creates
   under the domain's recover_lock, and ends (accel_i_recover_end) before it lets the lock go. */
/* The core's end of a recover, which clears the lost flag: a loss of the new context that began since
   its remake (losing set again: accel_i_cu_native_make cleared it) shows still, and the recover says so. */
static accel_result accel_i_cu_recover_end(accel_i_cu_device* dev, accel_result r) {
    accel_i_peer_release_held(&dev->base);   /* its old streams are gone (core: several devices) */
    r = accel_i_recover_end(&dev->base, r);
    if (r != ACCEL_OK || !atomic_load(&dev->losing)) return r;
    atomic_store(&dev->base.lost, 1u);
    return ACCEL_ERROR_DEVICE_LOST;
}
static accel_result accel_i_cu_group_recover(accel_i_cu_device* dev) {
    accel_i_cu_domain* dom = dev->domain;
    accel_cu_context ctx = NULL;
    accel_i_cu_device* m;
    accel_result r;
    for (m = dom->members; m; m = m->domain_next) accel_i_peer_hold(&m->base);
    for (m = dom->members; m; m = m->domain_next) accel_i_recover_stale(&m->base);
    for (m = dom->members; m; m = m->domain_next) accel_i_recover_fail(&m->base);
    /* the recover counts as a GPU wait of the domain until the reset: the stale points apply before
       their streams are released (accel_i_cu_natives_drain), and no release may wait for those */
    accel_i_cu_waits_add(dev, 1);
    accel_i_cu_natives_drain(dev);
    for (m = dom->members; m; m = m->domain_next) accel_i_cu_native_lock(m, true);
    accel_i_mutex_lock(&dom->lock);
    for (m = dom->members; m; m = m->domain_next) {
        if (m->mempool) accel_i_cu.MemPoolDestroy(m->mempool);   /* its memory goes with the context's */
        m->mempool = NULL;
        accel_i_cu_forget_native(m);
    }
    r = accel_i_cu_context_reset(dev, &ctx);
    accel_i_cu_graves_forget(dom);
    if (r == ACCEL_OK) atomic_fetch_add(&dom->epoch, 1u);   /* else the next recover resets again */
    for (m = dom->members; m; m = m->domain_next) {
        m->group_result = r == ACCEL_OK ? accel_i_cu_native_make(m, ctx) : r;
        if (m != dev && r == ACCEL_OK) m->grouped_at = atomic_load(&dom->epoch);
    }
    accel_i_mutex_unlock(&dom->lock);
    for (m = dom->members; m; m = m->domain_next) accel_i_cu_native_lock(m, false);
    for (m = dom->members; m; m = m->domain_next)
        if (m != dev) m->group_result = accel_i_cu_recover_end(m, m->group_result);
    return dev->group_result;
}
/* The whole recover (the backend's recover_whole). A recover of another accel device on the CUDA
   device that reset the context after this one began recovered dev too: the two share it (its result;
   one sharer only: a second recover of dev from another thread makes its own). One whose remake of dev
   failed at the last reset (dev is lost, of an older epoch) remakes dev only. Else a group recover. */
static accel_result accel_i_cu_device_recover(accel_device* d) {
    accel_i_cu_device* dev = accel_i_cu_dev(d);
    accel_i_cu_domain* dom = dev->domain;
    uint64_t began = atomic_load(&dom->epoch);
    accel_result r;
    accel_i_mutex_lock(&dom->recover_lock);
    if (dev->grouped_at > began) {
        dev->grouped_at = 0;
        r = dev->group_result;
    } else if (dev->epoch == atomic_load(&dom->epoch)) {
        r = accel_i_cu_group_recover(dev);
    } else {
        accel_i_peer_hold(d);
        accel_i_recover_stale(d);
        accel_i_recover_fail(d);
        accel_i_cu_native_lock(dev, true);
        r = accel_i_cu_native_make(dev, dev->ctx);
        accel_i_cu_native_lock(dev, false);
    }
    r = accel_i_cu_recover_end(dev, r);
    accel_i_mutex_unlock(&dom->recover_lock);
    accel_i_cu_foreign_drop(dev, false);   /* the reset context never runs its host functions */
    return r;
}

/* ==== cuda: backend table ==== */
/* The batch walk's slots, in the order of accel_i_walk_ops. */
static const accel_i_walk_ops accel_i_cu_walk = {
    accel_i_cu_wait_on_device,          /* wait_on_device */
    accel_i_cu_segment_submit,          /* segment_submit */
    accel_i_cu_batch_submitted,         /* batch_submitted */
    accel_i_cu_queue_drain,             /* queue_drain */
    accel_i_cu_signal_publish,          /* signal_publish: the mirror word */
    accel_i_cu_queue_poll,              /* queue_poll: the worker reaps signal points */
    true,                               /* indirect_on_host: no indirect launch (see "Indirect execs") */
    accel_i_cu_signal_settle            /* signal_settle: the mirror's and the marks' reached values */
};
/* ==== cuda: several devices ==== */
/* peer_copy: does a queue of d copy to and from o's buffers in its own stream (cuMemcpyAsync, the kind
   inferred from unified addresses)? Another accel device on the same GPU shares the primary context:
   yes. Another GPU: where peer access can be turned on (from d's context, once per pair and kept:
   the copy then goes GPU to GPU); else no, and the core stages it on the host. */
static bool accel_i_cu_peer_on(accel_i_cu_device* dev, accel_i_cu_device* other) {
    uint32_t bit = 1u << (uint32_t)other->cudev;
    int can = 0;
    accel_cu_result cr;
    if (atomic_load(&dev->peers_tried) & bit) return (atomic_load(&dev->peers_on) & bit) != 0;
    if (accel_i_cu.DeviceCanAccessPeer && accel_i_cu.CtxEnablePeerAccess &&
        accel_i_cu.DeviceCanAccessPeer(&can, dev->cudev, other->cudev) == ACCEL_CU_SUCCESS && can) {
        accel_i_cu_enter(dev);
        cr = accel_i_cu.CtxEnablePeerAccess(other->ctx, 0);
        if (cr == ACCEL_CU_SUCCESS || cr == ACCEL_CU_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            atomic_fetch_or(&dev->peers_on, bit);
        else
            accel_i_log(&dev->base, ACCEL_LOG_WARN,
                        "accel_cuda: cuCtxEnablePeerAccess(device %d) failed: %s (%d); copies with it are "
                        "staged on the host", other->cudev, accel_i_cu_error_name(cr), cr);
    }
    atomic_fetch_or(&dev->peers_tried, bit);
    return (atomic_load(&dev->peers_on) & bit) != 0;
}
static bool accel_i_cu_peer_copy(accel_device* d, accel_device* o, const accel_buffer* buf) {
    accel_i_cu_device *dev = accel_i_cu_dev(d), *other;
    if (o->backend != d->backend) return accel_i_imports_from(d, o, buf);   /* cuda: imported memory */
    other = accel_i_cu_dev(o);
    if (!dev->unified || !other->unified) return false;
    if (other->cudev == dev->cudev) return true;
    if (buf && ((const accel_i_cu_buffer*)buf)->vmm_size &&   /* exportable memory: where given access */
        (dev->cudev < 0 || dev->cudev >= 32 ||
         !(((const accel_i_cu_buffer*)buf)->vmm_access & (1u << (uint32_t)dev->cudev))))
        return false;
    return other->cudev >= 0 && other->cudev < 32 && accel_i_cu_peer_on(dev, other);
}

/* peer_waits: a queue of d waits on the GPU for o's signals (their points' progress words and their
   mirrors are pinned, portable words, like d's own) where both are accel devices on one CUDA device
   with stream memory operations: one context, so the GPU waits and the releases that must wait for
   them (cuda: releases) share the CUDA device's domain, and a lost context is lost for both. Another
   GPU: gated on the host (its releases could not see this device's waits). */
static bool accel_i_cu_peer_waits(accel_device* d, accel_device* o) {
    if (o->backend == accel_cpu_backend()) return accel_i_cu_dev(d)->memops;   /* cuda: CPU signals */
    if (o->backend != d->backend) return accel_i_cu_sems() && accel_i_signal_shared(d, o);   /* Vulkan's */
    return accel_i_cu_dev(o)->cudev == accel_i_cu_dev(d)->cudev && accel_i_cu_dev(d)->memops &&
           accel_i_cu_dev(o)->memops;
}
/* peer_frees: a direct copy of d's queue with o's buffer where o is another GPU: o's recover resets
   its own primary context, which frees the buffer's memory while d's stream may still hold the copy
   (cuda: recovery). Two accel devices on one CUDA device share the context and recover together. */
static bool accel_i_cu_peer_frees(accel_device* d, accel_device* o) {
    return o->backend == d->backend && accel_i_cu_dev(o)->cudev != accel_i_cu_dev(d)->cudev;
}
/* In the event-ring mode (both devices), the same CUDA device: a value of o's signal that a point of o's
   queues promised is waited for on the GPU as the device's own are (cuda: GPU waits in the event-ring
   mode): cuStreamWaitEvent on that point's event, found among o's queues (a destroyed event that a
   stream still waits for stays with the driver until it completed). The waiting queue's next point
   raises o's progress word when applied (causal reads): that point is its batch's, which holds the
   awaited signal, and so o, until the batch completes, after the raise. A value no point promised yet
   waits on the host. peer_info's device_waits stays false: not every wait runs on the GPU. */
static bool accel_i_cu_peer_events(accel_device* d, accel_signal* s, uint64_t v) {
    accel_device* o = s->obj.device;
    return o->backend == d->backend && accel_i_cu_dev(o)->cudev == accel_i_cu_dev(d)->cudev &&
           !accel_i_cu_dev(d)->memops && !accel_i_cu_dev(o)->memops && accel_i_cu.StreamWaitEvent &&
           accel_i_cu_promised(s, v);
}

/* ==== cuda: imported memory ====
   A CUDA queue's copy with a buffer of another backend's device on the same GPU (the same uuid: a
   Vulkan device, whose memory exports as an opaque fd) runs in the queue's stream: that buffer's memory
   (its block, or its own) is imported once with cuImportExternalMemory (CU_EXTERNAL_MEMORY_HANDLE_TYPE_
   OPAQUE_FD) and mapped whole with cuExternalMemoryGetMappedBuffer, and the copy is a cuMemcpyAsync
   between unified addresses. The import is accel.h's (core: imported memory of other devices): made at
   the copy's record (accel_i_imports_from; a copy whose import fails, or whose memory was not made
   exportable, is staged), found again where the copy is issued, freed (cuMemFree of the mapping, then
   cuDestroyExternalMemory, as a release: cuda: releases) when the Vulkan memory goes, or when this
   device is destroyed or recovered. A CUDA device joins the sharers where the driver has the three
   calls and unified addressing, so that a Vulkan device of its GPU allocates exportable memory.
   The other way (a Vulkan queue with a CUDA buffer): cuda: exported memory. */
typedef struct accel_i_cu_import {
    accel_i_import base;
    accel_cu_extmem mem;
    accel_cu_deviceptr dptr;       /* the whole memory, mapped */
    accel_cu_extsem sem;           /* or a signal's semaphore (cuda: waits on Vulkan signals) */
    accel_cu_stream stream;        /* a relay's (cuda: Vulkan waits on CUDA signals) */
} accel_i_cu_import;
static bool accel_i_cu_can_import_any(const accel_i_cu_device* dev) {
    return dev->unified && accel_i_cu.ImportExternalMemory && accel_i_cu.ExternalMemoryGetMappedBuffer &&
           accel_i_cu.DestroyExternalMemory;
}
/* share->can_import: another backend's device of the same GPU that exports */
static bool accel_i_cu_can_import(const accel_device* to, const accel_device* from) {
    return accel_i_exports_to(to, from) && accel_i_cu_can_import_any((const accel_i_cu_device*)to);
}
/* An import the driver refused: fd closed (the driver takes it only on success; -1: none), a warning
   naming the call, what it imported and what happens instead. */
static accel_result accel_i_cu_import_refused(accel_device* to, int fd, const char* call, const char* what,
                                              accel_cu_result cr, const char* instead) {
#if !defined(_WIN32)
    if (fd >= 0) close(fd);
#else
    (void)fd;
#endif
    accel_i_log(to, ACCEL_LOG_WARN, "%s (%s) failed: %s (%d); %s", call, what, accel_i_cu_error_name(cr), cr,
                instead);
    return ACCEL_ERROR_BACKEND;
}
static accel_result accel_i_cu_memory_import(accel_device* to, const accel_i_export* ex, int fd,
                                             accel_i_import* base) {
    accel_i_cu_device* dev = accel_i_cu_dev(to);
    accel_i_cu_import* im = (accel_i_cu_import*)base;
    accel_cu_extmem_desc md;
    accel_cu_extmem_buffer_desc bd;
    accel_cu_result cr;
    memset(&md, 0, sizeof md);
    md.type = ACCEL_CU_EXTMEM_OPAQUE_FD;
    md.handle.fd = fd;
    md.size = ex->size;
    accel_i_cu_enter(dev);
    if ((cr = accel_i_cu.ImportExternalMemory(&im->mem, &md)) != ACCEL_CU_SUCCESS)
        return accel_i_cu_import_refused(to, fd, "accel_queue_copy: cuImportExternalMemory",
                                         "a block of Vulkan memory", cr, "the copy is staged");
    memset(&bd, 0, sizeof bd);
    bd.size = ex->size;
    if ((cr = accel_i_cu.ExternalMemoryGetMappedBuffer(&im->dptr, im->mem, &bd)) != ACCEL_CU_SUCCESS) {
        accel_i_cu.DestroyExternalMemory(im->mem);
        return accel_i_cu_import_refused(to, -1, "accel_queue_copy: cuExternalMemoryGetMappedBuffer",
                                         "a block of Vulkan memory", cr, "the copy is staged");
    }
    return ACCEL_OK;
}
static void accel_i_cu_import_free(accel_i_import* base) {
    accel_i_cu_import* im = (accel_i_cu_import*)base;
    accel_i_cu_device* dev = accel_i_cu_dev(base->to);
    accel_i_cu_enter(dev);
    if (im->stream)
        accel_i_cu_release(dev, ACCEL_I_CU_RELAY, im->stream, (accel_cu_deviceptr)(uintptr_t)im->sem);
    else if (im->sem) accel_i_cu_release(dev, ACCEL_I_CU_EXT_SEM, im->sem, 0);
    else accel_i_cu_release(dev, ACCEL_I_CU_EXT_MEM, im->mem, im->dptr);
}
static accel_result accel_i_cu_signal_import(accel_device* to, accel_signal* s, int fd, accel_i_import* base);
static bool accel_i_cu_exports(const accel_device* d);   /* cuda: exported memory */
static bool accel_i_cu_memory_of(const accel_buffer* root, accel_i_export* out);
static accel_result accel_i_cu_memory_export(const accel_buffer* root, int* fd);
static bool accel_i_cu_relays(const accel_device* d, const accel_device* to);
static bool accel_i_cu_relay(accel_signal* s, uint64_t v, accel_signal* r, uint64_t ticket);
static void accel_i_cu_relay_settle(accel_i_import* im);
static const accel_i_share_ops accel_i_cu_share = {
    sizeof(accel_i_cu_import), accel_i_cu_exports, accel_i_cu_memory_of, accel_i_cu_memory_export,
    accel_i_cu_can_import, accel_i_cu_memory_import, accel_i_cu_import_free,
    NULL, NULL, NULL,                              /* nor signals (their words are not semaphores) */
    accel_i_cu_signal_import,
    accel_i_cu_relays, accel_i_cu_relay, accel_i_cu_relay_settle   /* but it raises lent ones */
};
/* The device pointer of b for a command of dev: its own, or in the import of another backend's memory
   (0 where that cannot be made: the command fails) */
static accel_cu_deviceptr accel_i_cu_ptr(accel_i_cu_device* dev, const accel_buffer* b) {
    const accel_buffer* root = b->root ? b->root : b;
    accel_i_import* im;
    uint64_t at = 0;
    if (root->obj.device->backend == dev->base.backend) return accel_i_cu_dptr(b);
    if (accel_i_import_get(&dev->base, root, &im, &at) != ACCEL_OK) return 0;
    return ((accel_i_cu_import*)im)->dptr + (accel_cu_deviceptr)at + (accel_cu_deviceptr)b->offset;
}
/* A copy with another backend's buffer: cuMemcpyAsync between unified addresses, one side imported. */
static accel_cu_result accel_i_cu_copy_imported(accel_i_cu_queue* q, const accel_buffer* dst,
                                                size_t dst_offset, const accel_buffer* src, size_t src_offset,
                                                size_t n, const char** call) {
    accel_i_cu_device* dev = accel_i_cu_dev(q->base.obj.device);
    accel_cu_deviceptr d = accel_i_cu_ptr(dev, dst), s = accel_i_cu_ptr(dev, src);
    *call = "cuMemcpyAsync (imported memory)";
    if (!d || !s) return 1;   /* CUDA_ERROR_INVALID_VALUE: the import is gone */
    return accel_i_cu.MemcpyAsync(d + dst_offset, s + src_offset, n, q->stream);
}

/* ==== cuda: exported memory ====
   A Vulkan queue's copy with a CUDA buffer of the same GPU runs in its own command buffer (DESIGN 7.2)
   where that buffer's memory exports: made with cuMemCreate (pinned device memory that exports as a
   POSIX fd), mapped at an address of its own (cuMemAddressReserve, cuMemMap, cuMemSetAccess) and
   exported with cuMemExportToShareableHandle for the Vulkan device to import (accel_vulkan.h, "Peer
   copies between Vulkan devices"; the import is accel.h's, keyed by the buffer, evicted when the buffer
   goes). A device makes its buffers so only while a device that could import them is open (the
   sharers' `exporting`, as Vulkan does), and only those of at least half the driver's granularity
   (which is 2 MiB on current GPUs): the memory is rounded up to it, and where the rounded size does not
   fit (out of memory) the buffer is cuMemAlloc's after all. Others, buffers made while the device was
   alone, and all with ACCEL_CUDA_NO_EXPORT=1 (at create), are cuMemAlloc's, and such copies are staged
   (making exportable memory takes four driver
   calls where cuMemAlloc takes one; its cost on a GPU is unmeasured). Such memory is usable only by
   the GPUs cuMemSetAccess names (peer access does not reach it): its own, and those that could copy
   it by peer access (vmm_peers), or its own alone where the driver refuses them (vmm_access; another
   GPU's copies of it are then staged). An import holds the memory by itself: after a recover of this
   device (the reset frees the mapping) a stale buffer's copies built since fail with DEVICE_LOST (a
   native list's too, where the walk builds its segment: accel_i_walk); one the Vulkan queue had already
   built runs on the old memory, which the import keeps alive until the buffer and its import go. */
static bool accel_i_cu_exports(const accel_device* d) {
    return accel_i_cu_dev((accel_device*)d)->vmm_grain != 0;
}
static void accel_i_cu_vmm_prop(const accel_i_cu_device* dev, accel_cu_mem_prop* prop) {
    memset(prop, 0, sizeof *prop);
    prop->type = ACCEL_CU_MEM_PINNED;
    prop->handle_types = ACCEL_CU_MEM_HANDLE_POSIX_FD;
    prop->location.type = ACCEL_CU_MEM_LOCATION_DEVICE;
    prop->location.id = (int)dev->cudev;
}
/* At create: vmm_grain where the driver has the calls, and the device the two attributes */
static void accel_i_cu_vmm_init(accel_i_cu_device* dev) {
    accel_cu_mem_prop prop;
    size_t grain = 0;
#if !defined(_WIN32)
    const char* off = getenv("ACCEL_CUDA_NO_EXPORT");
    if ((off && off[0] && strcmp(off, "0") != 0) || !dev->unified ||
        !accel_i_cu.MemGetAllocationGranularity || !accel_i_cu.MemCreate ||
        !accel_i_cu.MemRelease || !accel_i_cu.MemAddressReserve || !accel_i_cu.MemAddressFree ||
        !accel_i_cu.MemMap || !accel_i_cu.MemUnmap || !accel_i_cu.MemSetAccess ||
        !accel_i_cu.MemRetainAllocationHandle || !accel_i_cu.MemExportToShareableHandle ||
        !accel_i_cu_attr(dev, ACCEL_CU_ATTR_VMM_SUPPORTED) ||
        !accel_i_cu_attr(dev, ACCEL_CU_ATTR_POSIX_FD_SUPPORTED))
        return;
    accel_i_cu_vmm_prop(dev, &prop);
    if (accel_i_cu.MemGetAllocationGranularity(&grain, &prop, ACCEL_CU_MEM_GRANULARITY_MINIMUM) ==
        ACCEL_CU_SUCCESS)
        dev->vmm_grain = grain;
    /* peer access (cuCtxEnablePeerAccess) does not reach cuMemCreate memory: the GPUs that could copy
       it so are named at each allocation (accel_i_cu_vmm_access) */
    if (dev->vmm_grain && accel_i_cu.DeviceCanAccessPeer) {
        int n = 0, can;
        if (accel_i_cu.DeviceGetCount(&n) != ACCEL_CU_SUCCESS) n = 0;
        for (int i = 0; i < n && i < 32; i++)
            if (i != (int)dev->cudev && accel_i_cu.DeviceCanAccessPeer(&can, i, dev->cudev) ==
                ACCEL_CU_SUCCESS && can)
                dev->vmm_peers |= 1u << i;
    }
#else
    (void)dev; (void)prop; (void)grain;
#endif
}
/* Access to exportable memory for its own GPU and, with `peers`, for those that may copy it by peer
   access: the descriptors (a), their count, and the GPUs given it (*granted) */
static size_t accel_i_cu_vmm_access(const accel_i_cu_device* dev, bool peers, accel_cu_mem_access* a,
                                    uint32_t* granted) {
    size_t n = 0;
    *granted = 0;
    for (int i = -1; i < 32; i++) {   /* -1: its own */
        if (i == (int)dev->cudev || (i >= 0 && !(peers && (dev->vmm_peers & (1u << i))))) continue;
        a[n].location.type = ACCEL_CU_MEM_LOCATION_DEVICE;
        a[n].location.id = i < 0 ? (int)dev->cudev : i;
        a[n++].flags = ACCEL_CU_MEM_ACCESS_READWRITE;
        if (a[n - 1].location.id >= 0 && a[n - 1].location.id < 32) *granted |= 1u << a[n - 1].location.id;
    }
    return n;
}
/* size bytes, rounded up to the granularity (*bytes), of exportable memory mapped at *dptr, which the
   GPUs in *granted may use (its own, and those with peer access where the driver takes them) */
static accel_cu_result accel_i_cu_vmm_alloc(accel_i_cu_device* dev, size_t size, accel_cu_deviceptr* dptr,
                                            size_t* bytes, uint32_t* granted) {
    accel_cu_mem_prop prop;
    accel_cu_mem_access access[33];   /* its own, and 32 others at most */
    accel_cu_mem_handle h;
    accel_cu_result cr;
    size_t n = size + (dev->vmm_grain - 1), na;
    if (n < size) return ACCEL_CU_ERROR_OUT_OF_MEMORY;
    n -= n % dev->vmm_grain;
    accel_i_cu_vmm_prop(dev, &prop);
    if ((cr = accel_i_cu.MemCreate(&h, n, &prop, 0)) != ACCEL_CU_SUCCESS) return cr;
    if ((cr = accel_i_cu.MemAddressReserve(dptr, n, 0, 0, 0)) == ACCEL_CU_SUCCESS) {
        if ((cr = accel_i_cu.MemMap(*dptr, n, 0, h, 0)) == ACCEL_CU_SUCCESS) {
            na = accel_i_cu_vmm_access(dev, true, access, granted);
            if ((cr = accel_i_cu.MemSetAccess(*dptr, n, access, na)) != ACCEL_CU_SUCCESS && dev->vmm_peers) {
                na = accel_i_cu_vmm_access(dev, false, access, granted);   /* other GPUs' copies: staged */
                cr = accel_i_cu.MemSetAccess(*dptr, n, access, na);
            }
            if (cr != ACCEL_CU_SUCCESS) accel_i_cu.MemUnmap(*dptr, n);
        }
        if (cr != ACCEL_CU_SUCCESS) accel_i_cu.MemAddressFree(*dptr, n);
    }
    accel_i_cu.MemRelease(h);   /* the mapping holds the memory from here on */
    *bytes = cr == ACCEL_CU_SUCCESS ? n : 0;
    return cr;
}
static accel_cu_result accel_i_cu_memory_try(accel_i_cu_device* dev, accel_i_cu_buffer* buf, size_t size,
                                             bool vmm) {
    if (vmm) return accel_i_cu_vmm_alloc(dev, size, &buf->dptr, &buf->vmm_size, &buf->vmm_access);
    return accel_i_cu.MemAlloc(&buf->dptr, size);
}
/* A DEVICE buffer's memory: exportable where a device that could import it is open and it is large
   enough, else (or where the driver refuses it, with a warning) cuMemAlloc's; out of memory, once more
   after the graves settled. *call: the call that failed. */
static accel_cu_result accel_i_cu_memory_new(accel_i_cu_device* dev, accel_i_cu_buffer* buf, size_t size,
                                             const char** call) {
    bool vmm = dev->vmm_grain && size >= dev->vmm_grain / 2 && accel_i_exporting(&dev->base);
    accel_cu_result cr = accel_i_cu_memory_try(dev, buf, size, vmm);
    if (vmm && cr != ACCEL_CU_SUCCESS && cr != ACCEL_CU_ERROR_OUT_OF_MEMORY) {
        accel_i_log(&dev->base, ACCEL_LOG_WARN, "accel_buffer_create: exportable memory (cuMemCreate and its "
                    "mapping) failed: %s (%d); the buffer is cuMemAlloc's, and a Vulkan queue's copies of it "
                    "are staged", accel_i_cu_error_name(cr), cr);
        cr = accel_i_cu_memory_try(dev, buf, size, vmm = false);
    }
    if (cr == ACCEL_CU_ERROR_OUT_OF_MEMORY && accel_i_cu_graves_settle(dev, true))
        cr = accel_i_cu_memory_try(dev, buf, size, vmm);
    if (vmm && cr == ACCEL_CU_ERROR_OUT_OF_MEMORY && size % dev->vmm_grain)   /* what the rounding added */
        cr = accel_i_cu_memory_try(dev, buf, size, vmm = false);
    *call = vmm ? "cuMemCreate and its mapping" : "cuMemAlloc";
    return cr;
}
static void accel_i_cu_memory_release(accel_i_cu_device* dev, accel_i_cu_buffer* buf) {
    if (buf->vmm_size) accel_i_cu_release(dev, ACCEL_I_CU_VMM, (void*)(uintptr_t)buf->vmm_size, buf->dptr);
    else accel_i_cu_release(dev, ACCEL_I_CU_MEM, NULL, buf->dptr);
}
/* share: the exporter's side. memory_of: a live buffer's exportable memory, all of it its own. */
static bool accel_i_cu_memory_of(const accel_buffer* root, accel_i_export* out) {
    const accel_i_cu_buffer* b = (const accel_i_cu_buffer*)root;
    if (!b->vmm_size || accel_i_stale(&root->obj)) return false;
    out->key = b;
    out->size = b->vmm_size;
    out->offset = 0;
    out->type = ACCEL_I_TYPE_ANY;
    return true;
}
static accel_result accel_i_cu_memory_export(const accel_buffer* root, int* fd) {
    const accel_i_cu_buffer* b = (const accel_i_cu_buffer*)root;
    accel_i_cu_device* dev = accel_i_cu_dev(root->obj.device);
    accel_cu_mem_handle h;
    accel_cu_result cr;
    accel_i_cu_enter(dev);
    if (!accel_i_cu_use(dev, &root->obj)) return ACCEL_ERROR_DEVICE_LOST;   /* recovered: its memory went */
    if ((cr = accel_i_cu.MemRetainAllocationHandle(&h, (void*)(uintptr_t)b->dptr)) == ACCEL_CU_SUCCESS) {
        cr = accel_i_cu.MemExportToShareableHandle(fd, h, ACCEL_CU_MEM_HANDLE_POSIX_FD, 0);
        accel_i_cu.MemRelease(h);
    }
    accel_i_cu_unuse(dev);
    if (cr == ACCEL_CU_SUCCESS) return ACCEL_OK;
    return accel_i_cu_import_refused(&dev->base, -1, "accel_queue_copy: cuMemExportToShareableHandle",
                                     "a CUDA buffer for a Vulkan device", cr, "the copy is staged");
}

/* ==== cuda: waits on Vulkan signals ====
   A CUDA queue's wait on a signal of a Vulkan device of the same GPU runs on the GPU (DESIGN 7.2): the
   signal's timeline semaphore, exported by the Vulkan device as an opaque fd, is imported once with
   cuImportExternalSemaphore (CU_EXTERNAL_SEMAPHORE_HANDLE_TYPE_TIMELINE_SEMAPHORE_FD) and waited on with
   cuWaitExternalSemaphoresAsync in the queue's stream, counted as the GPU waits on words are (cuda:
   releases). The import is accel.h's (core: signals waited on by other devices): made where the wait is
   classified, for a value the Vulkan device was already handed work to reach (else the wait is gated on
   the host, as before); freed (cuDestroyExternalSemaphore, as a release) when the signal goes, or when
   this device is destroyed or recovered. A failed Vulkan signal's semaphore is raised past every wait
   (accel_vulkan.h, "Signals: design"), which releases the stream; the core fails what the batch signals
   (core: failure after hand-off). The other way: cuda: Vulkan waits on CUDA signals. */
static bool accel_i_cu_sems(void) {
    return accel_i_cu.ImportExternalSemaphore && accel_i_cu.WaitExternalSemaphoresAsync &&
           accel_i_cu.DestroyExternalSemaphore;
}
/* share->signal_import: fd (a Vulkan timeline semaphore's) imported into `to`'s context. */
static accel_result accel_i_cu_signal_import(accel_device* to, accel_signal* s, int fd,
                                             accel_i_import* base) {
    accel_i_cu_import* im = (accel_i_cu_import*)base;
    accel_cu_extsem_desc sd;
    accel_cu_result cr;
    memset(&sd, 0, sizeof sd);
    sd.type = ACCEL_CU_EXTSEM_TIMELINE_FD;
    sd.handle.fd = fd;
    accel_i_cu_enter(accel_i_cu_dev(to));
    if ((cr = accel_i_cu.ImportExternalSemaphore(&im->sem, &sd)) == ACCEL_CU_SUCCESS) return ACCEL_OK;
    im->sem = NULL;
    return accel_i_cu_import_refused(to, fd, "accel_queue_submit: cuImportExternalSemaphore",
                                     accel_i_label(&s->obj), cr, "waits on it are gated on the host");
}
/* The stream waits for s >= v, a Vulkan signal's semaphore, imported (accel_i_cu_wait_on_device made the
   import; CUDA_ERROR_INVALID_VALUE where it is gone: the batch's rest fails). */
static accel_cu_result accel_i_cu_sem_wait(accel_i_cu_queue* q, accel_signal* s, uint64_t v) {
    accel_i_import* im = accel_i_import_of(s, q->base.obj.device);
    if (!im) return 1;
    return accel_i_cu_gpu_wait(q, 0, v, ((accel_i_cu_import*)im)->sem);
}

/* ==== cuda: Vulkan waits on CUDA signals ====
   A Vulkan queue's wait on a CUDA signal of the same GPU runs on the GPU where the Vulkan device lends
   a semaphore (core: relays; accel_vulkan.h, "vulkan: waits on CUDA signals"): imported once as a
   Vulkan signal is (cuda: waits on Vulkan signals), with a stream of its own, in which each wait
   enqueues cuStreamWaitValue64 on the progress word of the CUDA point that first promised the value
   (as a GPU wait of another queue of this device would: cuda: signal points) and then
   cuSignalExternalSemaphoresAsync to the wait's ticket. Only in the memops mode, and only where that
   point's word is one the GPU writes by itself (not behind a wait the host must release, whose release
   a driver call of the host could then wait for: cuda: releases): else the wait is gated on the host.
   The stream's waits are not counted as the queues' are: the point they watch comes without the host.
   The enqueue runs under the imports' lock (accel_i_imports_hold), so that a recover's drop of the
   import waits for it. The import goes as the others do (the relay's signal goes with its queue; this
   device's destroy or recover), as a release that lets the stream run first (ACCEL_I_CU_RELAY). A loss
   or a recover ends the relays first (accel_i_relays_end: the stream synchronized, which returns at
   once on a lost context; then the Vulkan signal fails, which releases what its raise would have). */
static bool accel_i_cu_relays(const accel_device* d, const accel_device* to) {
    (void)to;   /* the core checked that it imports to's signals */
    return accel_i_cu_dev((accel_device*)(uintptr_t)d)->memops && accel_i_cu.SignalExternalSemaphoresAsync &&
           accel_i_cu_sems();
}
/* The progress word and seq of the point that first promised s >= v, where the GPU writes it by itself
   (0: none). */
static accel_cu_deviceptr accel_i_cu_gpu_promise(accel_i_cu_signal* cs, uint64_t v, uint64_t* seq) {
    const accel_i_cu_mark* m;
    accel_cu_deviceptr word = 0;
    accel_i_spin_lock(&cs->point_lock);
    m = accel_i_cu_first_mark(cs, v);
    if (m && accel_i_cu_mark_free(m)) {   /* as another queue's GPU wait would watch it */
        word = m->word;
        *seq = m->seq;
    }
    accel_i_spin_unlock(&cs->point_lock);
    return word;
}
/* The relay's stream waits for word >= seq, then raises its semaphore to ticket (imports' lock held: no
   accel_i_cu_check here, whose loss would take it). */
static accel_cu_result accel_i_cu_relay_enqueue(accel_i_cu_import* im, accel_cu_deviceptr word, uint64_t seq,
                                                uint64_t ticket) {
    accel_cu_extsem_signal sp;
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    if (!im->stream) cr = accel_i_cu.StreamCreate(&im->stream, ACCEL_CU_STREAM_NON_BLOCKING);
    if (cr != ACCEL_CU_SUCCESS) {
        im->stream = NULL;
        return cr;
    }
    memset(&sp, 0, sizeof sp);
    sp.params.fence.value = ticket;
    cr = accel_i_cu.StreamWaitValue64(im->stream, word, seq, ACCEL_CU_STREAM_WAIT_VALUE_GEQ);
    if (cr != ACCEL_CU_SUCCESS) return cr;
    return accel_i_cu.SignalExternalSemaphoresAsync(&im->sem, &sp, 1, im->stream);
}
/* share->relay */
static bool accel_i_cu_relay(accel_signal* s, uint64_t v, accel_signal* r, uint64_t ticket) {
    accel_i_cu_device* dev = accel_i_cu_dev(s->obj.device);
    accel_i_import* im;
    accel_cu_deviceptr word;
    accel_cu_result cr = ACCEL_CU_ERROR_NOT_READY;
    uint64_t seq = 0;
    if (!accel_i_cu_use(dev, &s->obj)) return false;   /* recovered meanwhile */
    word = accel_i_cu_gpu_promise((accel_i_cu_signal*)s, v, &seq);
    if (word && accel_i_relay_import(&dev->base, r)) {
        accel_i_cu_enter(dev);
        accel_i_imports_hold(true);
        if ((im = accel_i_import_find(r, &dev->base)) != NULL && !im->relay_ended)
            cr = accel_i_cu_relay_enqueue((accel_i_cu_import*)im, word, seq, ticket);
        accel_i_imports_hold(false);
        if (cr != ACCEL_CU_SUCCESS && cr != ACCEL_CU_ERROR_NOT_READY)
            accel_i_cu_check(dev, cr, "a relay's cuStreamWaitValue64 + cuSignalExternalSemaphoresAsync (a "
                             "Vulkan queue's wait: gated on the host instead)");
    }
    accel_i_cu_unuse(dev);
    return cr == ACCEL_CU_SUCCESS;
}
/* share->relay_settle (imports' lock held) */
static void accel_i_cu_relay_settle(accel_i_import* base) {
    accel_i_cu_import* im = (accel_i_cu_import*)base;
    if (!im->stream) return;
    accel_i_cu_enter(accel_i_cu_dev(base->to));
    accel_i_cu.StreamSynchronize(im->stream);
}

/* ==== cuda: CPU signals on the GPU ====
   A queue's wait on a CPU signal goes to the GPU (DESIGN 7.2) as a cuStreamWaitValue64 on the signal's
   device word (core: device words): a word of the mirror pool (pinned, device-mapped) of the first CUDA
   device that waits on the signal on the GPU, attached at that wait and kept with the signal, which
   holds a reference to the device meanwhile (its pool stays). Every raise of the CPU signal stores
   the word (a CPU queue's signal command, a host set, a failure: ACCEL_SIGNAL_MAX, so the failure
   releases the stream and the core's failure flow, which fails the waiting batch's later signals
   first, holds as for a GPU signal), so the stream goes on with no host thread of this device
   involved. Accel devices on the same CUDA device share the word (one context); a stream of another
   CUDA device waits on the host (its context may not map the word). A recover of the owner forgets
   the words (they went with the old context: accel_i_cu_cpu_forget); the next wait attaches a new one.
   The signal's free gives the word back to the pool (no stream waits on it then: a batch waiting on
   the signal holds it until the point after its wait is reaped) and drops the reference. */
static void accel_i_cu_cpu_drop(accel_signal* s) {
    accel_i_dword* d = accel_i_dword_of(s);
    accel_i_cu_device* dev = (accel_i_cu_device*)d->owner;
    accel_i_spin_lock(&dev->cpu_lock);
    for (uint32_t i = 0; i < dev->cpu_n; i++)
        if (dev->cpu_sigs[i] == s) { dev->cpu_sigs[i] = dev->cpu_sigs[--dev->cpu_n]; break; }
    if (d->word) {
        accel_i_cu_word w;
        w.host = d->word; w.dptr = (accel_cu_deviceptr)d->addr;
        accel_i_cu_word_give(dev, &w);
    }
    if (dev->cpu_n == 0) {
        accel_i_dev_free(&dev->base, dev->cpu_sigs, (size_t)dev->cpu_cap * sizeof *dev->cpu_sigs);
        dev->cpu_sigs = NULL;
        dev->cpu_cap = 0;
    }
    accel_i_spin_unlock(&dev->cpu_lock);
    d->word = NULL; d->owner = NULL; d->drop = NULL;
    accel_i_device_release(&dev->base);
}
/* Attaches word w to s (dev's cpu_lock and s's lock held); false when out of host memory. */
static bool accel_i_cu_cpu_attach(accel_i_cu_device* dev, accel_signal* s, const accel_i_cu_word* w) {
    accel_i_dword* d = accel_i_dword_of(s);
    if (!d->owner) {   /* the first: s joins dev's list and holds the device */
        if (dev->cpu_n == dev->cpu_cap) {
            size_t bytes = (size_t)dev->cpu_cap * sizeof *dev->cpu_sigs;
            if (!accel_i_grow(&dev->base, (void**)&dev->cpu_sigs, &bytes, bytes + 8 * sizeof *dev->cpu_sigs))
                return false;
            dev->cpu_cap = (uint32_t)(bytes / sizeof *dev->cpu_sigs);
        }
        dev->cpu_sigs[dev->cpu_n++] = s;
        accel_i_device_retain(&dev->base);
        d->owner = dev;
        d->drop = accel_i_cu_cpu_drop;
    }
    atomic_store(w->host, 0u);
    d->word = w->host;
    d->addr = (uint64_t)w->dptr;
    atomic_store(&d->on, 1u);   /* seq_cst, a fence, then the value: the pairing of accel_i_dword */
    atomic_thread_fence(memory_order_seq_cst);
    accel_i_dword_store(d, accel_i_signal_value(s));
    return true;
}
/* The device word of CPU signal s that dev's streams can watch (attached now if s has none): *word,
   *addr. False when it is another CUDA device's, or none could be had (out of memory): the wait is
   gated on the host then. */
static bool accel_i_cu_cpu_word(accel_i_cu_device* dev, accel_signal* s, accel_i_a64** word,
                                accel_cu_deviceptr* addr) {
    accel_i_dword* d = accel_i_dword_of(s);
    accel_i_cu_word w;
    bool ok, fresh = false;
    accel_i_spin_lock(&d->lock);
    ok = d->word != NULL;
    if (ok) { *word = d->word; *addr = (accel_cu_deviceptr)d->addr; }
    if (d->owner) ok = ok && accel_i_cu_dev((accel_device*)d->owner)->cudev == dev->cudev;
    fresh = !d->word && (!d->owner || d->owner == dev);
    accel_i_spin_unlock(&d->lock);
    if (!fresh) return ok;
    accel_i_cu_enter(dev);   /* the pool may grow (cuMemHostAlloc) */
    if (accel_i_cu_word_take(dev, &w, false) != ACCEL_OK) return false;
    accel_i_spin_lock(&dev->cpu_lock);
    accel_i_spin_lock(&d->lock);
    fresh = !d->word && (!d->owner || d->owner == dev);
    ok = fresh && accel_i_cu_cpu_attach(dev, s, &w);
    if (ok) { *word = d->word; *addr = (accel_cu_deviceptr)d->addr; }
    accel_i_spin_unlock(&d->lock);
    accel_i_spin_unlock(&dev->cpu_lock);
    if (!ok) accel_i_cu_word_give(dev, &w);   /* another thread attached one meanwhile, or no memory */
    return ok || (!fresh && accel_i_cu_cpu_word(dev, s, word, addr));
}
/* A GPU wait for CPU signal s >= v: on its device word; a wait for a host-raised value, listed as the
   mirrors' are (accel_i_cu_gate_add). No word (out of memory, or the owner was recovered and then
   another device's): an error, which fails the batch (wait_on_device said yes a moment ago). */
static accel_cu_result accel_i_cu_cpu_wait(accel_i_cu_queue* q, accel_signal* s, uint64_t v) {
    accel_i_a64* word;
    accel_cu_deviceptr addr;
    if (!accel_i_cu_cpu_word(accel_i_cu_dev(q->base.obj.device), s, &word, &addr))
        return ACCEL_CU_ERROR_OUT_OF_MEMORY;
    accel_i_cu_gate_add(q, word, v);
    return accel_i_cu_word_wait(q, addr, v);
}
/* A recover: the device's words went with the old context; the CPU signals keep their place in the
   list (and their reference) and take a new word at their next wait. */
static void accel_i_cu_cpu_forget(accel_i_cu_device* dev) {
    accel_i_spin_lock(&dev->cpu_lock);
    for (uint32_t i = 0; i < dev->cpu_n; i++) {
        accel_i_dword* d = accel_i_dword_of(dev->cpu_sigs[i]);
        accel_i_spin_lock(&d->lock);
        d->word = NULL;
        accel_i_spin_unlock(&d->lock);
    }
    accel_i_spin_unlock(&dev->cpu_lock);
}

/* Slots in the order of struct accel_backend (positional: designated initialisers need C++20). */
static const accel_backend accel_i_cu_backend_table = {
    "cuda",                             /* name */
    false,                              /* shares_host_memory */
    false,                              /* fills_any_byte: cuMemsetD32Async */
    true,                               /* pinned_host_buffers: cuMemHostAlloc, portable */
    accel_i_cu_device_count,            /* device_count */
    accel_i_cu_device_create,           /* device_create */
    accel_i_cu_device_destroy,          /* device_destroy */
    accel_i_cu_buffer_create,           /* buffer_create */
    accel_i_cu_buffer_free,             /* buffer_free */
    accel_i_cu_buffer_io,               /* buffer_io */
    accel_i_cu_program_create,          /* program_create */
    accel_i_cu_program_free,            /* program_free */
    accel_i_cu_signal_create,           /* signal_create */
    accel_i_cu_signal_free,             /* signal_free */
    accel_i_host_signal_value,          /* signal_value: the host word (see signal_settle) */
    accel_i_host_signal_raise,          /* signal_raise: the host word */
    accel_i_cu_signal_wait_many,        /* signal_wait_many */
    accel_i_cu_queue_create,            /* queue_create */
    accel_i_cu_queue_destroy,           /* queue_destroy */
    accel_i_cu_queue_submit,            /* queue_submit: the core's walk */
    accel_i_walker_wait_idle,           /* queue_wait_idle: the core's worker, then queue_drain */
    accel_i_walker_describe,            /* queue_describe */
    &accel_i_cu_walk,                   /* walk */
    accel_i_cu_commands_build,          /* commands_build: a CUDA graph (or pre-resolved launches) */
    accel_i_cu_commands_free,           /* commands_free */
    accel_i_cu_device_recover,          /* device_recover: the primary context reset (cuda: recovery) */
    true,                               /* recover_whole: every accel device of one primary context */
    accel_i_cu_peer_copy,               /* peer_copy: one context, or peer access */
    accel_i_cu_peer_waits,              /* peer_waits: accel devices on one CUDA device */
    accel_i_cu_peer_frees,              /* peer_frees: another GPU (its own primary context) */
    &accel_i_cu_share,                  /* share: imports another backend's memory (cuda: imported memory) */
    accel_i_cu_device_close             /* device_close: a lost context's host functions (foreign streams) */
};
ACCEL_API const accel_backend* accel_cuda_backend(void) { return &accel_i_cu_backend_table; }

/* ==== cuda: interop ==== */
static bool accel_i_cu_is(const accel_device* d) { return d && d->backend == &accel_i_cu_backend_table; }
/* A stale object's handles went with the old context (cuda: recovery): none is handed out. */
ACCEL_API uint64_t accel_cuda_buffer_pointer(accel_buffer* b) {
    return b && accel_i_cu_is(b->obj.device) && !accel_i_stale(&b->obj) ? (uint64_t)accel_i_cu_dptr(b) : 0;
}
ACCEL_API void* accel_cuda_queue_stream(accel_queue* q) {
    return q && accel_i_cu_is(q->obj.device) && !accel_i_stale(&q->obj) ? (void*)((accel_i_cu_queue*)q)->stream
                                                                          : NULL;
}
ACCEL_API void* accel_cuda_device_context(accel_device* d) {
    return accel_i_cu_is(d) ? (void*)accel_i_cu_dev(d)->ctx : NULL;
}
ACCEL_API accel_result accel_cuda_buffer_wrap(accel_device* d, uint64_t device_pointer, size_t size,
                                              accel_buffer** out) {
    accel_i_cu_buffer* buf;
    if (out) *out = NULL;
    if (!d || !out) return accel_i_invalid(d, "accel_cuda_buffer_wrap", !d ? "d is NULL" : "out is NULL");
    if (!accel_i_cu_is(d))
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_cuda_buffer_wrap: device %p%s%s%s is not a CUDA device",
                            ACCEL_I_DEVICE_LABEL(d));
    if (accel_i_lost(d)) return ACCEL_ERROR_DEVICE_LOST;
    if (device_pointer == 0 || size == 0 || (accel_cu_deviceptr)device_pointer != device_pointer ||
        device_pointer % 4u != 0)
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_cuda_buffer_wrap: device_pointer 0x%llx / size %zu (the pointer must be "
                            "a multiple of 4)", (unsigned long long)device_pointer, size);
    buf = (accel_i_cu_buffer*)accel_i_dev_alloc(d, sizeof *buf);
    if (!buf) return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "accel_cuda_buffer_wrap: out of host memory");
    memset((void*)buf, 0, sizeof *buf);
    buf->dptr = (accel_cu_deviceptr)device_pointer;
    buf->borrowed = true;
    buf->base.size = size;
    buf->base.memory = ACCEL_MEMORY_DEVICE;
    accel_i_object_init(&buf->base.obj, d, ACCEL_I_BUFFER, "wrapped buffer");
    *out = &buf->base;
    return ACCEL_OK;
}

/* ==== cuda: foreign streams ====
   accel_cuda_stream_wait / accel_cuda_stream_signal: one operation on a stream accel does not own.
   A wait is a GPU wait as a queue's is (accel_i_cu_wait_target: the progress word of the point that
   promised the value, else the mirror, which later points then write on the GPU); without stream
   memory operations, a cuStreamWaitEvent on the event of a point in a queue's ring that promised the
   value (accel_i_cu_foreign_event: needs no host, so it is not counted below), else a host function
   that waits on the host word. The GPU waits on words and the host functions count in the domain's
   waits_pending (no release blocks behind it: see cuda: releases) until a raise of the signal reaches
   the largest value such waits of it ask for (accel_i_cu_foreign_retire, from signal_publish). A signal
   is a host function that raises s as accel_signal_set does: host waiters wake, the mirror goes up
   (GPU waiters go on), failure stays sticky. Host functions hold a reference to s. Unlike a queue's
   wait, a foreign one takes no `hold` (it has no point to retire it): a wait for a value whose point
   left s's ring watches the mirror, which the host raises when it applies that point (at the latest
   the queue worker's backstop poll, 8 ACCEL_CUDA_POLL_MAX_NS apart at most).
   A host function's record stays on its device's list (foreign_lock) until the function takes it. A
   driver never runs the host functions of a context that failed (a lost device) or was reset (a recover):
   accel_device_destroy and accel_device_recover take those of streams of the device's context
   (accel_i_cu_foreign_drop), dropping their references, else the signal and the device were never
   freed; their records move to the dropped list, freed with the device (a function that still runs
   finds its record taken). */
typedef struct accel_i_cu_foreign {
    accel_signal* s;
    uint64_t value;
    bool own;                                  /* its stream is of the device's context */
    accel_i_a32 taken;                         /* by the host function, or by accel_i_cu_foreign_drop */
    struct accel_i_cu_foreign *prev, *next;    /* the device's list (foreign or dropped) */
} accel_i_cu_foreign;

/* Set while one of accel's host functions (below) runs on the driver's host-function thread, where no
   driver call may be made. */
static ACCEL_I_THREAD_LOCAL bool accel_i_cu_in_host_fn;
/* n foreign waits retired by a raise: the last wait pending in the process gone, the releases they held
   back run here, unless the raise runs in a host function, a reap or a waiter (then they are due at the
   end of the next reap but a waiter's). */
static void accel_i_cu_waits_drop(accel_i_cu_device* dev, uint32_t n) {
    accel_i_mutex_lock(&accel_i_cu_g.release_lock);
    accel_i_cu_waits_count(dev->domain, -(int64_t)n);
    accel_i_cu_graves_due(dev, !accel_i_cu_in_host_fn);
    accel_i_mutex_unlock(&accel_i_cu_g.release_lock);
}
/* s reached v (or failed): its foreign waits are retired once v reaches the largest they wait for (a
   wait for less is retired late: a release waits a little longer, nothing waits for ever). */
static void accel_i_cu_foreign_retire(accel_signal* s, uint64_t v) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    uint32_t n = 0;
    accel_i_spin_lock(&cs->point_lock);
    if (accel_i_failed(v) || v >= cs->foreign_max) {
        n = atomic_exchange(&cs->foreign_waits, 0u);
        cs->foreign_max = 0;
    }
    accel_i_spin_unlock(&cs->point_lock);
    if (n) accel_i_cu_waits_drop(accel_i_cu_dev(s->obj.device), n);
}
/* A signal freed while foreign streams may still wait on its mirror: the mirror reads
   ACCEL_SIGNAL_MAX (released, as by a failure) and its word never returns to the pool. Returns whether
   there were such waits (the word is then kept). */
static bool accel_i_cu_foreign_orphan(accel_signal* s) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    uint32_t n = atomic_exchange(&cs->foreign_waits, 0u);
    if (!n) return false;
    atomic_store(cs->mirror.host, ACCEL_SIGNAL_MAX);
    accel_i_cu_waits_drop(accel_i_cu_dev(s->obj.device), n);
    return true;
}

/* The calls' checks; OK with *pending false when s already reached value (nothing to enqueue);
   SIGNAL_FAILED when s is failed. */
static accel_result accel_i_cu_foreign_check(const char* fn, void* stream, accel_signal* s, uint64_t value,
                                             bool* pending) {
    accel_device* d;
    uint64_t now;
    if (!s) {
        accel_i_log_to(NULL, ACCEL_LOG_ERROR, "%s: signal is NULL", fn);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    d = s->obj.device;
    if (!accel_i_cu_is(d))
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                            "%s: signal %p%s%s%s is not a CUDA signal (its device's backend is %s)",
                            fn, (void*)s, ACCEL_I_LABEL(&s->obj), d->backend->name);
    if (!stream) return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT, "%s: stream is NULL", fn);
    if (value > ACCEL_SIGNAL_MAX)
        return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                            "%s: value %llu is above ACCEL_SIGNAL_MAX on signal %p%s%s%s",
                            fn, (unsigned long long)value, (void*)s, ACCEL_I_LABEL(&s->obj));
    if (accel_i_stale(&s->obj))
        return accel_i_fail(d, ACCEL_ERROR_DEVICE_LOST,
                            "%s: signal %p%s%s%s is of a generation before accel_device_recover",
                            fn, (void*)s, ACCEL_I_LABEL(&s->obj));
    if (accel_i_lost(d)) return ACCEL_ERROR_DEVICE_LOST;
    now = accel_i_host_signal_value(s);
    if (accel_i_failed(now)) return ACCEL_ERROR_SIGNAL_FAILED;
    *pending = now < value;
    return ACCEL_OK;
}
/* The device goes: the records left were taken by accel_i_cu_foreign_drop (no driver runs them). */
static void accel_i_cu_foreign_forget(accel_i_cu_device* dev) {
    while (dev->dropped) {
        accel_i_cu_foreign* f = dev->dropped;
        dev->dropped = f->next;
        accel_i_dev_free(&dev->base, f, sizeof *f);
    }
}
/* Takes f off the device's list (foreign_lock held). */
static void accel_i_cu_foreign_unlist(accel_i_cu_device* dev, accel_i_cu_foreign* f) {
    if (f->prev) f->prev->next = f->next; else dev->foreign = f->next;
    if (f->next) f->next->prev = f->prev;
}
/* A host function takes its record (false: accel_i_cu_foreign_drop did, nothing to do): off the list and
   freed, s and the value in *s, *v. */
static bool accel_i_cu_foreign_take(accel_i_cu_foreign* f, accel_signal** s, uint64_t* v) {
    accel_i_cu_device* dev;
    if (atomic_exchange(&f->taken, 1u)) return false;
    *s = f->s;
    *v = f->value;
    dev = accel_i_cu_dev(f->s->obj.device);
    accel_i_spin_lock(&dev->foreign_lock);
    accel_i_cu_foreign_unlist(dev, f);
    accel_i_spin_unlock(&dev->foreign_lock);
    accel_i_dev_free(&dev->base, f, sizeof *f);
    return true;
}
/* The records of host functions no driver will run drop their references (see the section's top): on
   streams of the device's context, when that context failed (the io stream's query said so: a device
   marked lost by a call on another context's stream may still run them) or their signal is stale (a
   recover reset the context since). */
static void accel_i_cu_foreign_drop(accel_i_cu_device* dev, bool failed) {
    for (;;) {
        accel_i_cu_foreign* f;
        accel_i_spin_lock(&dev->foreign_lock);
        for (f = dev->foreign; f; f = f->next)
            if (f->own && (failed || accel_i_stale(&f->s->obj)) && !atomic_exchange(&f->taken, 1u)) break;
        if (f) {
            accel_i_cu_foreign_unlist(dev, f);
            f->prev = NULL;
            f->next = dev->dropped;
            dev->dropped = f;
        }
        accel_i_spin_unlock(&dev->foreign_lock);
        if (!f) return;
        accel_i_release(f->s);
    }
}
/* device_close: whether the device's context failed, from the io stream's query (a loss no call noticed
   yet loses the device now); then the records of host functions that will never run drop their
   references. */
static void accel_i_cu_device_close(accel_device* d) {
    accel_i_cu_device* dev = accel_i_cu_dev(d);
    accel_cu_result cr = ACCEL_CU_SUCCESS;
    accel_i_mutex_lock(&dev->io_lock);   /* a recover remakes the io stream under it */
    if (dev->io) {
        accel_i_cu_enter(dev);
        cr = accel_i_cu.StreamQuery(dev->io);
    }
    accel_i_mutex_unlock(&dev->io_lock);
    if (accel_i_cu_sticky(cr)) accel_i_cu_lose(dev, cr, "cuStreamQuery (accel_device_destroy)");   /* once */
    accel_i_cu_foreign_drop(dev, accel_i_cu_sticky(cr));
}
/* The host functions: raise s (accel_cuda_stream_signal); wait on the host word (a wait without
   stream memory operations). Neither makes a driver call. */
static void ACCEL_I_CUDAAPI accel_i_cu_foreign_raise(void* user) {
    accel_signal* s;
    uint64_t v;
    if (!accel_i_cu_foreign_take((accel_i_cu_foreign*)user, &s, &v)) return;
    accel_i_cu_in_host_fn = true;
    accel_i_raise(s, v);
    accel_i_release(s);
    accel_i_cu_in_host_fn = false;
}
/* The wait also ends once s's handle is destroyed (looked at every millisecond): that releases the
   stream, as the mirror's ACCEL_SIGNAL_MAX does in the memops mode (accel_i_cu_foreign_orphan). */
#define ACCEL_I_CU_HOLD_LOOK_NS 1000000u
static void ACCEL_I_CUDAAPI accel_i_cu_foreign_hold(void* user) {
    accel_signal* s;
    uint64_t v;
    uint32_t first = 0;
    if (!accel_i_cu_foreign_take((accel_i_cu_foreign*)user, &s, &v)) return;
    while (accel_i_host_signal_wait(&s, &v, 1, true, ACCEL_I_CU_HOLD_LOOK_NS, &first) == ACCEL_TIMEOUT &&
           atomic_load(&s->obj.handle)) { }   /* reached, failed, or destroyed */
    accel_i_cu_in_host_fn = true;   /* the release may free s (accel_i_cu_foreign_orphan) */
    accel_i_release(s);
    accel_i_cu_in_host_fn = false;
}
/* Enqueues fn(s, value) on stream, holding a reference to s until it ran. */
static accel_result accel_i_cu_foreign_call(void* stream, accel_signal* s, uint64_t value,
                                            accel_cu_host_fn fn, const char* call) {
    accel_device* d = s->obj.device;
    accel_i_cu_device* dev = accel_i_cu_dev(d);
    accel_i_cu_foreign* f;
    accel_cu_context ctx = NULL;
    accel_cu_result cr;
    if (!accel_i_cu.LaunchHostFunc)
        return accel_i_fail(d, ACCEL_ERROR_UNSUPPORTED, "%s: the driver has no cuLaunchHostFunc", call);
    if ((f = (accel_i_cu_foreign*)accel_i_dev_alloc(d, sizeof *f)) == NULL)
        return accel_i_fail(d, ACCEL_ERROR_OUT_OF_MEMORY, "%s: out of host memory", call);
    memset((void*)f, 0, sizeof *f);
    atomic_init(&f->taken, 0u);
    f->s = s;
    f->value = value;
    /* unknown: not the device's (kept: a leak at worst, never a free too soon) */
    f->own = accel_i_cu.StreamGetCtx &&
             accel_i_cu.StreamGetCtx((accel_cu_stream)stream, &ctx) == ACCEL_CU_SUCCESS && ctx == dev->ctx;
    accel_i_retain(s);
    accel_i_spin_lock(&dev->foreign_lock);
    if ((f->next = dev->foreign) != NULL) f->next->prev = f;
    dev->foreign = f;
    accel_i_spin_unlock(&dev->foreign_lock);
    cr = accel_i_cu.LaunchHostFunc((accel_cu_stream)stream, fn, f);
    if (cr == ACCEL_CU_SUCCESS) return ACCEL_OK;
    if (accel_i_cu_foreign_take(f, &s, &value)) accel_i_release(s);   /* never to run (unless dropped) */
    return accel_i_cu_check(dev, cr, call);
}
/* Without stream memory operations: when a point of a queue promised v, the stream waits for that
   point's event, as a queue's wait does (cuda: GPU waits in the event-ring mode), or for nothing when it
   is reached. False when no point in flight promised v. */
static bool accel_i_cu_foreign_event(accel_i_cu_device* dev, void* stream, accel_signal* s, uint64_t v,
                                     accel_result* r) {
    accel_i_cu_queue* o;
    accel_cu_event ev;
    uint64_t seq = 0;
    if (!accel_i_cu.StreamWaitEvent) return false;
    accel_i_spin_lock(&dev->queues_lock);
    if ((o = accel_i_cu_ring_promise(dev, s, v, &seq)) != NULL) {
        accel_i_spin_lock(&o->ring_lock);
        if ((ev = accel_i_cu_point_event(o, seq)) != NULL)
            *r = accel_i_cu_check(dev, accel_i_cu.StreamWaitEvent((accel_cu_stream)stream, ev, 0),
                                  "cuStreamWaitEvent (accel_cuda_stream_wait)");
        accel_i_spin_unlock(&o->ring_lock);
    }
    accel_i_spin_unlock(&dev->queues_lock);
    return o != NULL;
}
/* The wait, counted (see the section's top) from before it is enqueued: a release that comes meanwhile
   is held back. A raise that reached v before the count retires it here. */
static accel_result accel_i_cu_foreign_wait(void* stream, accel_signal* s, uint64_t v) {
    accel_i_cu_signal* cs = (accel_i_cu_signal*)s;
    accel_i_cu_device* dev = accel_i_cu_dev(s->obj.device);
    accel_cu_deviceptr addr = 0;
    uint64_t value = 0;
    accel_result r = ACCEL_OK;
    accel_i_cu_waits_add(dev, 1);
    accel_i_spin_lock(&cs->point_lock);
    if (dev->memops) accel_i_cu_wait_target(cs, v, 0, &addr, &value);
    atomic_fetch_add(&cs->foreign_waits, 1u);
    if (v > cs->foreign_max) cs->foreign_max = v;
    accel_i_spin_unlock(&cs->point_lock);
    if (dev->memops)
        r = accel_i_cu_check(dev, accel_i_cu.StreamWaitValue64((accel_cu_stream)stream, addr, value,
                                                               ACCEL_CU_STREAM_WAIT_VALUE_GEQ),
                             "cuStreamWaitValue64 (accel_cuda_stream_wait)");
    else
        r = accel_i_cu_foreign_call(stream, s, v, accel_i_cu_foreign_hold,
                                    "cuLaunchHostFunc (accel_cuda_stream_wait)");
    /* a failed enqueue stays counted until s reaches v: releases wait longer, never for ever. The
       count (seq_cst) before this read, a raise's host word (seq_cst) before signal_publish's read of
       the count: one of the two sees the other */
    atomic_thread_fence(memory_order_seq_cst);
    accel_i_cu_foreign_retire(s, accel_i_host_signal_value(s));
    return r;
}
ACCEL_API accel_result accel_cuda_stream_wait(void* stream, accel_signal* s, uint64_t value) {
    bool pending = false;
    accel_result r = accel_i_cu_foreign_check("accel_cuda_stream_wait", stream, s, value, &pending);
    accel_i_cu_device* dev;
    if (r != ACCEL_OK || !pending) return r;
    dev = accel_i_cu_dev(s->obj.device);
    if (!dev->memops && accel_i_cu_foreign_event(dev, stream, s, value, &r)) return r;
    return accel_i_cu_foreign_wait(stream, s, value);
}
ACCEL_API accel_result accel_cuda_stream_signal(void* stream, accel_signal* s, uint64_t value) {
    bool pending = false;
    accel_result r = accel_i_cu_foreign_check("accel_cuda_stream_signal", stream, s, value, &pending);
    if (r != ACCEL_OK || !pending) return r;
    return accel_i_cu_foreign_call(stream, s, value, accel_i_cu_foreign_raise,
                                   "cuLaunchHostFunc (accel_cuda_stream_signal)");
}

#else /* ACCEL_I_CU_NO_LOADER: no threads or no dynamic loading; the backend is always unavailable */
/* ==== cuda: unavailable build ==== */
static accel_result accel_i_cu_device_count(const accel_backend* b, uint32_t* count) {
    accel_logger lg;
    (void)b; (void)count;
    memset(&lg, 0, sizeof lg);
    accel_i_log_to(&lg, ACCEL_LOG_WARN,
                   "accel_cuda: unavailable: this build has no threads or no dynamic loading "
                   "(WASI, Emscripten, ACCEL_NO_THREADS)");
    return ACCEL_ERROR_UNAVAILABLE;
}
static accel_result accel_i_cu_device_create(const accel_backend* b, const accel_device_desc* d,
                                            accel_device** out) {
    (void)b; (void)out;
    accel_i_log_to(&d->logger, ACCEL_LOG_WARN,
                   "accel_cuda: unavailable: this build has no threads or no dynamic loading "
                   "(WASI, Emscripten, ACCEL_NO_THREADS)");
    return ACCEL_ERROR_UNAVAILABLE;
}
/* no device is ever created, so the other entries are never called */
static const accel_backend accel_i_cu_backend_table = {
    "cuda", false, false, false, accel_i_cu_device_count, accel_i_cu_device_create,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
    false, NULL, NULL, NULL, NULL, NULL   /* recover_whole, peer_copy, _waits, _frees, share, device_close */
};
ACCEL_API const accel_backend* accel_cuda_backend(void) { return &accel_i_cu_backend_table; }
ACCEL_API void accel_cuda_set_library(const char* cuda_path, const char* nvrtc_path) {
    (void)cuda_path; (void)nvrtc_path;
}
ACCEL_API accel_result accel_cuda_compile_source(const char* source, const char* name,
                                                 uint32_t compute_capability,
                                                 const accel_allocator* allocator, const accel_logger* logger,
                                                 char** ptx, size_t* ptx_size) {
    accel_logger none;
    (void)name; (void)compute_capability; (void)allocator;
    if (ptx) *ptx = NULL;
    if (ptx_size) *ptx_size = 0;
    if (!source || !ptx || !ptx_size) {
        accel_i_log_to(logger, ACCEL_LOG_ERROR, "accel_cuda_compile_source: %s is NULL",
                       !source ? "source" : !ptx ? "ptx" : "ptx_size");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    memset(&none, 0, sizeof none);
    accel_i_log_to(logger ? logger : &none, ACCEL_LOG_WARN,
                   "accel_cuda: NVRTC unavailable: this build has no threads or no dynamic loading");
    return ACCEL_ERROR_UNAVAILABLE;
}
ACCEL_API void accel_cuda_free_ptx(const accel_allocator* allocator, char* ptx, size_t ptx_size) {
    if (ptx && allocator && allocator->free_fn) allocator->free_fn(ptx, ptx_size, allocator->user);
    else if (ptx) accel_i_default_free(ptx, ptx_size, NULL);
}
/* no object here is ever a CUDA one */
ACCEL_API uint64_t accel_cuda_buffer_pointer(accel_buffer* b) { (void)b; return 0; }
ACCEL_API void* accel_cuda_queue_stream(accel_queue* q) { (void)q; return NULL; }
ACCEL_API void* accel_cuda_device_context(accel_device* d) { (void)d; return NULL; }
ACCEL_API accel_result accel_cuda_buffer_wrap(accel_device* d, uint64_t device_pointer, size_t size,
                                              accel_buffer** out) {
    (void)device_pointer; (void)size;
    if (out) *out = NULL;
    if (!d) return accel_i_invalid(NULL, "accel_cuda_buffer_wrap", "d is NULL");
    return accel_i_fail(d, ACCEL_ERROR_INVALID_ARGUMENT,
                        "accel_cuda_buffer_wrap: device %p%s%s%s is not a CUDA device "
                        "(this build has no CUDA backend)", ACCEL_I_DEVICE_LABEL(d));
}
static accel_result accel_i_cu_no_stream(const char* fn, const accel_signal* s) {
    accel_i_log_to(s ? &s->obj.device->logger : NULL, ACCEL_LOG_ERROR,
                   "%s: the signal is not a CUDA signal (this build has no CUDA backend)", fn);
    return ACCEL_ERROR_INVALID_ARGUMENT;
}
ACCEL_API accel_result accel_cuda_stream_wait(void* stream, accel_signal* s, uint64_t value) {
    (void)stream; (void)value;
    return accel_i_cu_no_stream("accel_cuda_stream_wait", s);
}
ACCEL_API accel_result accel_cuda_stream_signal(void* stream, accel_signal* s, uint64_t value) {
    (void)stream; (void)value;
    return accel_i_cu_no_stream("accel_cuda_stream_signal", s);
}
#endif /* ACCEL_I_CU_NO_LOADER */

#endif /* ACCEL_CUDA_IMPLEMENTATION */

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
