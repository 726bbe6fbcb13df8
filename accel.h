/* accel.h — one small shape for CPUs and GPUs: devices, buffers, programs, timeline signals, queues.
   Single-header C library. Core API + CPU backend. Version 0.2.0. MIT license (end of file).

   ==== Quick start =============================================================================

   A complete program: y = a*x + y on the CPU backend, every return code checked.

   ---- begin quickstart.c (tests/check_quickstart.sh compiles and runs it as C and C++) ----
       #define ACCEL_IMPLEMENTATION           // in exactly one .c or .cpp file
       #include "accel.h"
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

           for (int i = 0; i < n; i++) { x[i] = (float)i; y[i] = 1.0f; }
           memcpy(&constants[0], &a, sizeof a);
           constants[1] = n;

           memset(&dd, 0, sizeof dd);
           dd.debug = true;                          // while developing: hang reports, checks (see below)
           CHECK(accel_device_create(&dd, &dev));    // the CPU backend, a lane per CPU it may use
           CHECK(accel_device_info_get(dev, &info));
           memset(&bd, 0, sizeof bd);
           bd.size = sizeof x;
           CHECK(accel_buffer_create(dev, &bd, &bx));
           CHECK(accel_buffer_create(dev, &bd, &by));
           CHECK(accel_buffer_write(bx, 0, x, sizeof x));
           CHECK(accel_buffer_write(by, 0, y, sizeof y));
           memset(&pd, 0, sizeof pd);
           pd.name = "saxpy";
           pd.cpu = saxpy;
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
   ---- end quickstart.c ----

   Build (C, or C++ with the same file):
       cc  -std=gnu11 -I. app.c -o app -lpthread -lm -ldl      # or -std=c11 -D_POSIX_C_SOURCE=199309L
       c++ -std=c++11 -I. -x c++ app.c -o app -lpthread -ldl
   -std=gnu11 (or _POSIX_C_SOURCE) gives timeouts the monotonic clock; a strict -std=c11 uses the wall
   clock. The implementation needs C11 (atomics, threads) or C++11; the declarations alone compile as C99.

   While developing, create the device with `.debug = true` (as above). Then a host wait that cannot
   end says why, for example for a recorded but never submitted batch:
       accel: warning: accel_signal_wait: nothing submitted can reach signal 0x5581... 'done' >= 1 (it is
       at 0): queue 0x5581... 'main' holds an unsubmitted accel_queue_signal(1) on it (forgotten
       accel_queue_submit?)
   and a wait that times out names every blocked queue and the (signal, value) it waits for. Label queues
   and signals (accel_queue_set_label, accel_signal_set_label) to read names instead of addresses.
   Every invalid argument is logged too (the call and the argument), debug or not.
   examples/failure.c shows a failed signal flowing down a pipeline and these reports.

   ==== What accel does NOT do ==================================================================
   - No graphics, no images/textures, no shader compiler (CPU kernels are C functions; GPU backends
     take SPIR-V / PTX / cubin / CUDA C).
   - No automatic dependency tracking between queues: order them with signals.
   - No hidden global state: everything hangs off a device.

   ==== Config macros (define before including the implementation) ==============================
   | macro                     | effect                                                              |
   |---------------------------|---------------------------------------------------------------------|
   | ACCEL_IMPLEMENTATION      | compile the implementation into this translation unit (once)        |
   | ACCEL_STATIC              | every function `static` (two copies may live in one program)        |
   | ACCEL_API                 | decoration of public declarations (default `extern`)                |
   | ACCEL_NO_THREADS          | no threads at all (automatic on __wasi__ and on Emscripten without   |
   |                           | pthreads): batches run inside submit or when a signal unblocks them |
   | ACCEL_USE_PTHREADS        | use the pthread shim instead of C11 <threads.h> (automatic where     |
   |                           | <threads.h> is missing, e.g. macOS; use it for ThreadSanitizer)     |
   | ACCEL_NO_TRACE            | compile the trace recorder out: a trace_path (or ACCEL_TRACE) is    |
   |                           | then ignored with one warning                                       |
   | ACCEL_NO_DEBUG            | compile the debug checks and hang reports out: `debug = true` is    |
   |                           | then a warning, not an error. With both, a minimal CPU program is   |
   |                           | about a quarter smaller (x86-64, -Os, stripped: 87 KB -> 67 KB)     |
   | ACCEL_CPU_SPIN_NS         | how long idle CPU-backend threads and host waits spin before they   |
   |                           | sleep (default 200000 ns; 0 sleeps at once). Keep it above the cost |
   |                           | of waking a sleeping thread (tens to hundreds of us on virtual      |
   |                           | machines), or a host thread that sleeps is woken onto the CPU of    |
   |                           | the executor that woke it and the two share one CPU from then on    |
   | ACCEL_CPU_INLINE_GROUPS   | an exec with at most this many work groups runs on the queue's own  |
   |                           | thread with no hand-off to the pool (default 1)                     |
   | ACCEL_CPU_MOVE_OFF        | 1 (default): on Linux an executor or worker that shares a CPU with  |
   |                           | the thread it hands work to steps off it, where a CPU without a     |
   |                           | busy lane is left to go to (see Queues); 0: accel never moves them  |

   ==== Devices =================================================================================
   A device is one backend instance on one physical device. `accel_device_create(NULL, &dev)` makes a
   CPU device with one lane per CPU the process may use. `accel_device_create_any` tries a list of
   backends in order (e.g. { accel_vulkan_backend(), accel_cpu_backend() }) and logs why each skipped
   one failed.
   Destroying a device waits for all its queues, then releases every object still alive on it (the
   handles become invalid). An object that another device's batches still hold (a signal a queue of
   device A waits on or signals, a CPU buffer another CPU device copies from) outlives the destroy, with
   what it needs of its device, until those batches are released (see Memory and ownership).

   ==== Queues and batches ======================================================================
   A queue is an in-order stream. Recording calls (wait, signal, exec, copy, fill, update, barrier)
   append to the current batch and return nothing; `accel_queue_submit` hands the batch to the device
   and returns at once. A bad argument while recording is logged, remembered, and returned by the next
   submit, which then discards the whole batch: nothing of it runs, nothing it would signal is
   signalled. Each command starts after the previous one completed and its writes are visible (one
   exception on GPUs: a timestamp's value is written by the host, see Profiling).
   ACCEL_QUEUE_COPY queues take every command but `exec` and run concurrently with compute queues.
   `accel_queue_host_call(q, fn, user)` records a call of fn on a library thread between two commands:
   after the ones before it completed, before the ones after it start (a point to hand results to
   host code, or to launch foreign GPU work on a queue's native stream, see accel_cuda.h).

   Limits (CPU backend; see accel_device_info): 64 buffers and 64 constants per exec, at most 1024
   invocations per group (1024 x 1024 x 64), group counts up to 2^32-1 x 65535 x 65535.
   A batch that waits forever on a signal nobody sets keeps its queue (and a destroy of that queue or
   device) waiting: fail (or set) the signal from another thread to unblock it. Such a destroy is never
   silent: in every threaded build, after 1 s it logs a warning naming the queue, the signal and value it
   waits for and that remedy, and again after 3, 7, 15, 31 s and every 32 s from then on.
   An exec with a global size of 0 in any dimension is a no-op on every backend: a zero global size
   is no work, not 1 (set unused dimensions to 1, as accel_exec_1d and accel_exec_2d do; a debug
   device warns about it). Its arguments are still checked, and in a command list it keeps its place,
   so the indices of the commands after it are as recorded. A local size of 0 counts as 1.

   On the CPU backend each queue has its own executor thread; `exec` splits the work groups across
   the device's pool of `cpu_threads` lanes (the executor takes part); a kernel receives one work group
   per call and must skip items with id >= global_size. `accel_dispatch.worker` is a lane index in
   0..cpu_threads-1, unique among the kernel calls running at the same moment on that device, so it can
   index per-worker scratch.
   Waits that help: a thread of yours that waits without a timeout (ACCEL_WAIT_FOREVER) in
   accel_signal_wait for one CPU signal, or in accel_queue_finish of a CPU queue, may run batches of that
   queue itself (for a signal: the queue of the signal's device that last submitted a signal command on it)
   while its executor is not running them, instead of waiting for the executor to wake up: so a kernel
   may run on the thread that waits, taking a lane as an executor does. Exactly one thread runs a queue's
   batches at a time, in order. A helping wait stops right after the signal command that reached its
   value, and never waits inside a batch: a batch that waits for a signal not reached, and a host call
   (it may wait for what your thread does after its wait), go back to the executor. A kernel it runs
   returns first, though the value may come meanwhile from another queue: a kernel must not wait for what
   a thread that waits for its queue's signals does afterwards. An exec of more groups than
   ACCEL_CPU_INLINE_GROUPS that it runs goes to the pool as the executor's would, the waiting thread
   working on it as one of the lanes. A wait with a timeout, a wait on several signals, and any wait
   inside a kernel or host call never runs work: those return when the executor has done it (an exec
   needs a lane: while every lane is held by kernels that wait for other queues' execs, those waits end
   only at their timeouts). Once waiting threads run a queue's batches, its executor leaves new batches
   to them and is not woken by submits; it looks at the queue every quarter of a millisecond (less often,
   down to once a millisecond, while waiting threads run every batch) and runs a batch that no one took
   since its last look, so a batch that no thread waits for at once (submitted to overlap with the host's
   own work, or only polled with accel_signal_value) starts up to about 1.25 ms late (the executor then
   runs batches as they come again, until waits help again). A
   helper that leaves work behind wakes the executor at once, and so do a wait that does not help (a
   timeout of 0 too) and a wait command of another queue, on a signal that waits have helped for
   before.
   Idle executors and workers spin for ACCEL_CPU_SPIN_NS, then sleep. On Linux an executor or worker
   that finds itself sharing a CPU with the thread it hands work to (a woken thread is often placed on
   its waker's CPU, and two threads that yield to each other are never separated by the scheduler)
   moves itself off that CPU once, by setting its affinity away and back, when the work it was handed
   took less than ACCEL_CPU_SPIN_NS (the handing thread then still spins for the result; after longer
   work it sleeps, and the CPU is no longer shared); your threads are never moved.
   It does so only where a CPU without a busy lane is left to go to: on a device with fewer lanes than
   the process may use CPUs, always; with one lane per allowed CPU, only an executor, and only while
   every pool worker sleeps (a one-group exec's round trip: the executor leaves your waiting thread's
   CPU for a sleeping worker's). A move onto a busy lane's CPU would stack two busy lanes on one core.
   ACCEL_CPU_MOVE_OFF 0 switches moves off altogether. `cpu_threads = 0` means one lane per CPU in the
   process's affinity mask (`taskset`, `sched_setaffinity`, a Win32 process affinity mask), read when
   the device is created; without a mask, one per online core.

   ==== Recorded command lists ==================================================================
   Work that repeats (a frame, a decoder step) can be recorded once and replayed with a few numbers
   changed: `accel_queue_record_begin(q)`, then exec/copy/fill/update/barrier as usual, then
   `accel_queue_record_end(q, &list)` validates them once and builds the device's native form.
   `accel_queue_replay(q, list, patches, n)` appends one run of the list to a batch like any command,
   between the batch's waits and signals; each accel_patch replaces one buffer or one 32-bit constant
   of one command for that replay only. A list is immutable: replay it on several queues and threads
   at once. It keeps its programs and buffers alive; destroying it while replays are pending is legal.
   On the CPU a replay runs a pre-resolved op array: no validation but the patches', no allocation.

   ==== Several devices =========================================================================
   A program may open any number of devices, of any backends, also several on one physical device
   (two accel devices on one GPU are two devices for everything below). accel_device_info.uuid and
   pci_* say which physical device each is (the same GPU under CUDA and Vulkan has the same uuid), so
   a program can avoid using one GPU twice. accel_device_peer_info(a, b) says what a's queues do with
   b's objects:
   - Peer copies. accel_queue_copy(q, dst, ..., src, ...) takes ONE buffer (or view) of another device
     or backend; the other is q's device's. It runs in q's order like any copy; the other device's
     writes must be ordered before it with a signal, as always (q waits on the other device's signal),
     and whoever reads what it wrote waits on a signal q signals after it. Direct (direct_copy) where
     no host buffer of accel's is in between: a CPU queue copies any device's buffer itself (memmove
     where both sides are host-visible, else the other backend's read/write straight into or out of
     the CPU memory); a GPU queue copies a CPU device's buffer (host memory) with its backend's
     read/write, on its worker thread when the queue gets there (a host step, as below, without the
     bounce); CUDA queues copy other CUDA devices' buffers in their stream (one context, or peer
     access, which accel turns on the first time); Vulkan queues copy buffers of other Vulkan devices
     on the same physical device and driver in their command buffers, through memory exported as an
     opaque fd and imported once (buffers made while both devices are open: accel_vulkan.h, "Peer
     copies between Vulkan devices"); CUDA queues copy buffers of a Vulkan device on the same GPU (the
     same uuid) in their stream, through that memory imported once with cuImportExternalMemory (buffers
     made while both devices are open: accel_cuda.h, "Signals and signal points"), and Vulkan queues
     copy CUDA buffers of the same GPU through that CUDA memory imported once (buffers of at least 1
     MiB made while both are open). Otherwise (other Vulkan devices, smaller CUDA buffers, CUDA
     devices without peer access) the copy is staged: the queue's worker thread runs it when the
     queue gets there (after the commands before it completed), through host memory in chunks of at
     most 4 MiB, and the queue goes on after it; no caller waits on the host for it. Where neither
     buffer is mapped, the chunks go through two slots of 4 MiB that the queue keeps for its later
     staged copies (ACCEL_MEMORY_HOST buffers of its device, or of the other where only that one is
     CUDA: pinned memory), double-buffered: a helper thread writes one chunk while the worker reads
     the next, so both devices' transfers overlap. Recorded lists
     take peer copies (and patches bring other devices' buffers to copies) on every backend; on a
     GPU backend a list whose copy is staged, or a replay whose patch makes a copy staged, replays in
     the core's generic form (its commands recorded anew each time); so does a CPU list whose exec,
     fill or update uses another CPU device's buffer or program (a replay checks them as a recording
     would).
     A copy that fails on the host (a lost device, out of memory) drops the rest of its batch and
     fails what it would signal, with that reason. A copy whose turn comes after its buffer's device was
     lost never runs (mapped memory, imports, staged copies and replayed lists alike): DEVICE_LOST, from
     the submit or as the failure of its batch's signals.
   - Waits across devices. A queue waits on any device's signals (see Signals). On the device
     (device_waits): a CUDA queue waiting on the signal of another accel device on the same CUDA
     device (the GPU watches the signal's pinned words, as for its own device's), a CUDA queue
     waiting on a CPU signal with stream memory operations (the GPU watches the signal's device word:
     pinned, device-mapped memory of that CUDA device, attached at the first such wait and stored by
     every raise, ACCEL_SIGNAL_MAX once failed; the signal keeps the CUDA device's state until it is
     destroyed; a queue of another GPU waits on the host), a CPU queue waiting on another CPU
     device's signal (as on its own), and a queue waiting on a Vulkan signal of the same physical
     device through its timeline semaphore, exported as an opaque fd and imported once (another
     Vulkan device of the same driver, with VK_KHR_external_semaphore_fd: a wait operation of its
     submission, on a queue that owns its VkQueue; a CUDA device of the same GPU:
     cuWaitExternalSemaphoresAsync), for a value already promised by work handed to the signal's
     device (a value only a later host set could bring is gated), on signals made while both devices
     are open; and a Vulkan queue that owns its VkQueue waiting on a CUDA signal of the same GPU the
     other way round: it lends the CUDA device a timeline semaphore of its own, which a stream of the
     CUDA device raises (cuSignalExternalSemaphoresAsync) once the CUDA signal point that promised the
     value ran, for a value such a point already promised and the GPU reaches by itself (CUDA with
     stream memory operations; accel_vulkan.h, "vulkan: waits on CUDA signals"). Everything else
     (other GPUs, Vulkan drivers without exportable timeline semaphores such as lavapipe) is gated
     on the host by the queue's worker thread, as before. The
     failure rule of "Waits on the device" holds across devices: a batch whose waits went to the
     device watching another device's signals is listed with that device, so a failure there fails
     the rest of its signals (with the same reason) before the waits are released. The signals of
     one batch's device waits all belong to one device; a wait on a third device's is gated.
   - Lifetimes. A buffer that a peer copy of another device's queue still holds outlives its device's
     destroy (as a signal does, see Devices); either device may be destroyed first.

   ==== Signals =================================================================================
   A signal is a monotonic 64-bit counter (0..ACCEL_SIGNAL_MAX). `set` and a queue's `signal` store
   max(current, value). A wait returns ACCEL_OK once value >= v, ACCEL_TIMEOUT when the timeout (ns;
   0 polls, ACCEL_WAIT_FOREVER never) passes first, ACCEL_ERROR_SIGNAL_FAILED once the signal is failed
   (also for a value it had reached before: a failed signal fails every wait). A lost device fails its
   signals with reason ACCEL_ERROR_DEVICE_LOST: their waits return SIGNAL_FAILED, the value reads it.
   `accel_signal_fail` is sticky and poisons every wait; a queue blocked on a failed signal drops the
   rest of its batch and fails every signal the rest of that batch would have signalled, so failure
   flows down a pipeline. A failed signal's value reads ACCEL_SIGNAL_MAX + 1 + (-reason), i.e. above
   ACCEL_SIGNAL_MAX, and the reason travels with it down the pipeline.
   Host waits spin for ACCEL_CPU_SPIN_NS, then sleep. Timeouts use a monotonic clock where the
   platform exposes one (POSIX with _POSIX_C_SOURCE >= 199309L or _GNU_SOURCE, Win32); under a strict
   -std=c11 on glibc the C11 wall clock is used instead.
   Release/acquire: everything a queue wrote before `signal(s, v)` is visible to whoever observes
   s >= v. A queue may wait on a signal of another device or backend.
   Waits on the device (GPU backends). The core walks every GPU batch the same way: it splits it into
   segments (waits, then commands up to the next wait) and looks at each wait. One already reached
   costs nothing; one already failed follows the rule above. A wait the device can watch by itself is
   handed to the device with the segment, which is submitted at once: a value that a signal operation
   submitted earlier on the same device promised (GPU to GPU: pipelines, frame loops), or a signal
   the host raises where the device can see it (CUDA: a pinned, device-mapped word and
   cuStreamWaitValue64; Vulkan: the signal's timeline semaphore, which accel_signal_set raises too, on
   a queue with its own VkQueue). Anything else (a value nobody promised on a signal the device cannot
   watch; another device's or backend's signal) is gated: the queue's worker thread waits on the host,
   then submits the rest, and the queue's later batches stay behind it. A GPU-to-GPU chain between queues
   of one device does not go through a host thread (Vulkan: where the producer's signal operation is
   on the waiting queue's VkQueue, or that queue has a VkQueue to itself; see accel_vulkan.h).
   Failure after hand-off: once a wait was handed to the device, failing its signal can no
   longer stop the work behind it. That work may still run, and every signal it (the rest of its batch)
   signals reads failed with the same reason, before any waiter it releases can see otherwise; host
   waits, wait_many and later queue waits see the failure as usual. Failing a signal releases every
   device-side waiter: a waiter on a host-raised value at once (the failure raises what the device
   watches: Vulkan to ACCEL_SIGNAL_MAX, or as far as maxTimelineSemaphoreValueDifference allows; CUDA
   to ACCEL_SIGNAL_MAX), a waiter on a value GPU work promised when that work runs (it always runs: device
   commands behind a device wait are never dropped; host calls are, and a lost device drops everything).
   A gated wait keeps the rule of every failed wait: nothing behind it runs. So does every wait on the
   CPU backend, whose executor is its device. A segment whose waits are both handed to the device and
   gated is submitted once the gated ones are reached: until then a failure of a handed one does not end
   the batch (the CPU backend, which waits in order, drops it at that failed wait).
   Hang diagnostics (device desc `debug = true`): a host wait (accel_signal_wait*, accel_queue_finish)
   that times out, or ends in ACCEL_ERROR_DEADLOCK, logs a warning naming the queues of the device that
   are blocked and the (signal, value) each waits for (as many as fit in about 1,000 bytes: a few
   queues, cut on a whole character); a host wait for a value that no queue (of a debug
   device) has been submitted to signal, and the signal has not reached, logs a warning when it starts.
   Neither changes what the wait returns. Without debug none of this costs anything but a branch.
   Every backend reports (CPU: the executor's wait; CUDA, Vulkan: the gated wait the queue's worker
   holds on the host, or else the first wait handed to the device that is not reached, where its signal
   is the queue's device's: one handed over on another device's signal is not named).

   ==== Memory and ownership ====================================================================
   Every create call hands the caller one reference; destroy drops it. Objects that recorded or submitted
   work still uses (buffers, programs, signals) are freed when that work is released (completed, or
   discarded), so destroying them early is legal. This holds across devices: when a batch of device A
   holds a signal or buffer of device B, destroying that object and then B frees neither; the object,
   and the part of B it needs, go when A's batch is released (by whichever thread releases it). A
   signal of B that other devices' batches wait on for a value it has not reached, with no signal
   command of another device's queue left to reach it (none recorded with such a value, or none whose
   batch is still to run), can no longer be set by anyone once B is destroyed: B's destroy fails it
   (reason ACCEL_ERROR_DEVICE_LOST, with a warning), or, where such a command was left, the release of
   the last one (its batch discarded, or run without reaching the value) does. The waiting queue then
   drops the rest of its batch and fails what it would signal instead of hanging.
   `host_ptr` buffers wrap caller memory (CPU backend only): the caller keeps ownership and must keep
   it alive until the buffer is released. `accel_queue_update` copies its data at record time.
   With `read_only = true` the wrapped memory may be const (a model file mapped read-only): accel never
   writes it (copy/fill/update into it, and accel_buffer_write, are refused), kernels must not either.
   A view (`accel_buffer_view_create(buf, offset, size, &view)`) is a buffer that aliases a range of
   another: one weight tensor of a packed file, one row of a KV cache, bound without a buffer per slice
   or offset constants. It works everywhere a buffer does, with offsets relative to the view; a view
   of a view aliases the root buffer; a view holds a reference on its root, so the root's memory lives
   until its last view (and the work using them) is gone. Offsets must be multiples of
   accel_device_info.buffer_offset_alignment (CPU 1, Vulkan the device's storage-buffer offset
   alignment, CUDA 256); a view out of range or misaligned is refused with a log line.
   Queue-ordered memory (`accel_queue_alloc(q, size, memory, &buf)` ... `accel_queue_free(q, buf)`) is
   a buffer whose memory belongs to a stretch of q's order: a step's scratch, taken from and given back
   to a device pool with no host wait (see "queue-ordered memory" below the buffer calls).

   ==== Thread safety ===========================================================================
   Devices, buffers, programs and signals may be used from any thread. A queue is recorded by one thread
   at a time (external synchronisation): every accel_queue_* call that takes the queue counts, submit
   and accel_queue_finish (which submits first) too; different queues on different threads need nothing.
   Destroys: while accel_device_destroy or accel_queue_destroy waits for a queue, other threads may call
   accel_signal_set, accel_signal_fail and accel_signal_value on the signals that queue waits for (that
   is how one unblocks it), and anything on other devices' objects. Each set or fail holds its own
   reference to the signal while it runs, so the destroy may free the signal as soon as the call has
   raised it. No other call may use an object the destroy releases (the device's objects, or the queue)
   once the destroy has started, and a signal handle must not be used after its device's destroy
   returned.

   ==== Errors and logging ======================================================================
   Functions return accel_result; nothing aborts on user input, driver failure or out-of-memory. The
   detail (which call, which argument, which driver code) goes to the device's logger; the default
   logger prints errors and warnings to stderr. Every ACCEL_ERROR_INVALID_ARGUMENT logs one error line
   naming the call and the argument (a NULL handle that leaves no device to log to goes to stderr). Out
   of memory is ACCEL_ERROR_OUT_OF_MEMORY with nothing leaked. Log lines and hang reports name objects by
   address and label: buffers take `.label` in their desc, programs their `.name`, queues and signals
   accel_queue_set_label / accel_signal_set_label (copied); an object without a label shows its address
   and its kind ('signal', 'compute queue', ...), except a buffer in an offset or size error, which shows
   its label where it has one and its size. accel_device_create_any logs an unavailable backend as
   a warning (the backend's reason) and an info line, never as an error: falling back is normal.

   ==== Device generations ======================================================================
   A lost device (a CUDA context that hit an illegal address, a Vulkan VK_ERROR_DEVICE_LOST) need not be
   destroyed (unless the driver keeps the loss for the process, as NVIDIA's CUDA drivers do after an
   illegal address: then the recover returns DEVICE_LOST and says so): accel_device_recover(dev) makes
   its native device anew and adds 1 to its generation
   (accel_device_info.generation: 1 at create). The handle stays valid, so whoever holds it compares the
   generation with the one it built its objects in, and rebuilds only those. Objects created before the
   recover (buffers and views, programs, signals, queues, command lists) are stale: every call that
   takes one returns ACCEL_ERROR_DEVICE_LOST (recording calls record it: the next submit or record_end
   returns it) with a log line naming the object and its generation; destroying one works and frees
   what is left of it. accel_signal_value of a stale signal reads it failed (reason DEVICE_LOST, unless
   it failed before), accel_buffer_size still answers, accel_buffer_map returns NULL.
   What a recover does with the work: every signal of the device not failed yet fails with reason
   ACCEL_ERROR_DEVICE_LOST, before anything else (threads waiting on them return: accel_signal_wait
   with ACCEL_ERROR_DEVICE_LOST); queues are objects too, so the device's queues are stale: a batch
   never starts a command after the recover (the rest of each batch is dropped and its signals fail),
   and nothing of the old generation blocks the new one (a stale queue that waits on another device's
   signal drops its batch when that wait ends; destroying it waits for that, as ever). Record on a new
   queue. Per backend: CPU, nothing native is lost or made anew (the pool's threads serve both
   generations; a kernel or host call that is running when the recover comes finishes, after the
   recover returned); a recover of a CPU device is how a program tests its recovery path there. CUDA
   and Vulkan: see their headers.

   ==== Profiling ===============================================================================
   accel_queue_timestamp records a command that writes the moment the commands before it completed, in
   nanoseconds on the host clock accel uses for timeouts and traces, which accel_host_time_ns reads:
   CLOCK_MONOTONIC on POSIX where <time.h> declares it at the implementation's compile (gnu modes,
   _POSIX_C_SOURCE, C++ on glibc), QueryPerformanceCounter on Windows, else timespec_get(TIME_UTC) (strict
   -std=c11 on glibc, WASI: a wall clock, which an NTP step can move). Compare timestamps with
   accel_host_time_ns readings, not with a clock of your own.
   The trace: set accel_device_desc.trace_path (or the environment variable ACCEL_TRACE=path) and the
   device writes a Chrome trace-event JSON file that ui.perfetto.dev and chrome://tracing open:
     - process "host": a track per host thread, with its submit, finish and wait spans and its
       accel_signal_set calls;
     - process "<backend> device": a track per queue, with each command's execution span, named by the
       program (exec) or the command (copy, fill, update, barrier, timestamp, wait, signal, replay, host
       call), args with groups, invocations and bytes (an indirect exec whose counts were read where
       it ran, the device or the CPU executor: "groups":"indirect", no invocations);
     - an instant per signal value reached (args: value), and a flow arrow from the signal that reached
       a value to every wait (queue or host) it released: none to a wait that failed or timed out. A
       signal keeps its last two raises for the arrows: a wait that wakes after more raises than that
       links to the older of the two.
   Signals without a label are named "#n" (n: creation order on the device). Each device writes a file
   of its own: a command or wait on another device's signal is a span without an arrow, named "signal
   on another device" / "wait on another device" when that signal has no label, and a wait on its own
   signal that another device's queue raised has none either. Times are microseconds of
   the clock above (3 decimals: nanoseconds). Events wait in fixed buffers (4096 for the host threads,
   1024 per queue, 120 bytes each); a full buffer is copied out raw to a temporary file (tmpfile()),
   and accel_device_destroy turns that file into the JSON (about 0.25 us an event, so a run of a
   million events adds a quarter of a second to the destroy). Where no temporary file can be made
   (WASI), a full buffer is written as JSON at once. Either way a long run never grows memory, and a
   "trace flush" span on the track that filled a buffer shows what writing it out cost. A trace file
   that cannot be opened is a warning, and the device runs untraced. Two live devices never share a
   file: one whose path another device is writing (ACCEL_TRACE with two devices; on POSIX also another
   name of the same file, such as "./t.json" beside "t.json") writes
   "<path without extension>.2<extension>" (.3, ...; a name's leading dot starts no extension: ".t"
   gives ".t.2") instead and says so in an info line; a device
   created after the first one was destroyed writes the path anew. (Two ACCEL_STATIC copies of the
   implementation in one program, and two processes, do not see each other's paths: give each its own
   path, e.g. each MPI rank an ACCEL_TRACE of its own.)
   Off, tracing costs a branch per command and per host call. On, a command costs a clock reading and
   an append to its queue's buffer (a signal command no reading: it is an instant at the end of the
   command before it), a host call two readings and an append; a wait also reads where its signal was
   reached, for the flow. On a CPU queue a command's span is appended after the raise of the signal
   that follows it, so the waiter it releases does not wait for the trace. The cheapest CPU round trip
   (one-group exec + signal, submit, wait) takes about 0.3 us more traced (bench/cpu.c, figure 2t); a
   dispatch with work in it, or a GPU round trip, hides the cost in its noise.
   GPU backends: device times (Vulkan timestamp queries, CUDA events) are converted to this clock by
   the host once the work completed, and written (timestamps) or recorded (the trace's spans) before
   any signal after them is raised; a command of the same queue right after a timestamp may run before
   the value is written (read it after a signal that follows it), and the value lands over what such a
   command wrote to the same bytes (give a timestamp bytes of its own). Per command spans on both; tracing a
   GPU queue makes it complete each segment (Vulkan) or each command (CUDA) on the host before the next
   signal is raised, which costs host round trips. How accurate the conversion is, and what each costs:
   accel_vulkan.h and accel_cuda.h, "Timestamps and the trace".

   ==== Backends and run-time loading ===========================================================
   The CPU backend is always here. accel_cuda.h and accel_vulkan.h add GPU backends that load their
   drivers with dlopen/LoadLibrary at run time; where the driver is missing they return
   ACCEL_ERROR_UNAVAILABLE with the reason in the log, so one binary runs with or without a GPU.
   A backend is a table of functions (struct accel_backend, in the implementation section): the core
   validates every argument and records batches; the backend runs them. Backend implementations
   (ACCEL_CUDA_IMPLEMENTATION, ACCEL_VULKAN_IMPLEMENTATION) go in the translation unit that defines
   ACCEL_IMPLEMENTATION.

   ==== No-threads and WASM builds ==============================================================
   With ACCEL_NO_THREADS the CPU backend runs a batch inside `submit` when its waits are satisfied,
   otherwise parks it; setting a signal runs the parked batches it unblocks. Runnable queues go on
   their device's list and one loop runs them, so a chain of queues that unblock one another (of any
   length) runs without nesting, and a signal set inside a kernel runs the batches it unblocks on that
   kernel's device after the kernel's batch has finished or parked (on another device, at once: a
   chain of kernels that each set the next device's signal nests a level of the stack per device, about
   70 devices deep in wasm-ld's default 64 KiB stack; link with -Wl,-z,stack-size=N for deeper ones).
   A host wait (timeout > 0) that nothing can satisfy returns ACCEL_ERROR_DEADLOCK at once instead of
   hanging; a poll returns ACCEL_TIMEOUT; accel_queue_finish likewise (also a finish or a wait, from
   inside a kernel, on work of another queue of the kernel's device: that batch runs only after the
   kernel's, so the kernel cannot see it done). Inside a host call (or a kernel), a wait, finish or
   destroy that cannot end yet first runs what can run on every device whose loop it is called from
   or that a raise further up the stack woke and has not looped yet (but not a device inside that
   kernel), since a queue of the call's own device may set what another device's queue waits for, and
   only then gives up. It runs those queues one at a time, and only until it can end: a host call it
   runs whose own wait needs the outer one to return first gets ACCEL_ERROR_DEADLOCK (order such steps
   with queue waits). Such a wait nests what it runs on the stack: a chain of host calls, each
   waiting for a signal that the next queue sets after its own host call, takes about 1 KiB a level:
   about 70 levels in wasm-ld's default stack, some ten thousand in a native main thread's; link with a
   larger stack for deeper chains, or order such steps with queue waits instead. Destroying a
   queue whose batch is still parked drops it and fails the signals it would have signalled (reason
   ACCEL_ERROR_DEADLOCK). Destroying a device runs its queues' work first, dropping parked batches one
   at a time in the same way (with what each drop releases running), and only then releases any queue,
   so a host call that runs meanwhile may still use the device's objects. cpu_threads is always 1.
   A host call (accel_queue_host_call) runs inline when its batch reaches it: inside accel_queue_submit,
   or inside the accel_signal_set / accel_signal_fail that unblocks the batch. One that destroys a queue
   whose batch is running further up the stack (its own queue, or one whose host call or kernel set the
   signal that released it), or that queue's device, takes the handle at once; the queue goes when that
   batch returns, after the rest of it and what else of the queue can run (parked batches dropped as
   above), and the device with it. A finish of such a queue there returns ACCEL_ERROR_DEADLOCK.
   Build for WASI with: clang --target=wasm32-wasi (no threads, no dlopen: the CPU backend only).
   Build with Emscripten with -sALLOW_MEMORY_GROWTH=1 (or an -sINITIAL_MEMORY that holds every buffer):
   without growth, Emscripten's own allocator aborts the program when its heap is full, before
   accel could return ACCEL_ERROR_OUT_OF_MEMORY.

   ==== Allocators ==============================================================================
   `accel_device_desc.allocator` receives every host allocation the library makes for that device, with
   size and alignment; free receives the size back. Zero means malloc/free. What belongs to the process
   rather than to one device comes from malloc: a trace file's name on the process's list of the
   names being written, and in accel_cuda.h what the accel devices on one CUDA device share. alloc_fn
   and free_fn may be called from any thread, also while the library holds a lock of the device: they
   must not call accel functions on that device (nor on another device of the same CUDA device; other
   devices are fine), as with Vulkan's VkAllocationCallbacks.

   ==== Versioning ==============================================================================
   ACCEL_VERSION_MAJOR/MINOR/PATCH. Within a major version, new desc fields mean "old behaviour" at zero.
*/
#ifndef ACCEL_H_INCLUDED
#define ACCEL_H_INCLUDED

/* automatic here, so that every file of a program (not only the implementation's) sees it */
#if !defined(ACCEL_NO_THREADS) && \
    (defined(__wasi__) || (defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)))
#  define ACCEL_NO_THREADS
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define ACCEL_VERSION_MAJOR 0
#define ACCEL_VERSION_MINOR 2
#define ACCEL_VERSION_PATCH 0

#ifndef ACCEL_API
#  if defined(ACCEL_STATIC) && defined(__GNUC__)
#    define ACCEL_API static __attribute__((unused))
#  elif defined(ACCEL_STATIC)
#    define ACCEL_API static
#  else
#    define ACCEL_API extern
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ==== results ==== */
typedef enum accel_result {
    ACCEL_OK = 0,
    ACCEL_TIMEOUT = 1,                    /* a wait ended before the value was reached; not an error */
    ACCEL_ERROR_INVALID_ARGUMENT = -1,
    ACCEL_ERROR_OUT_OF_MEMORY = -2,       /* host or device memory */
    ACCEL_ERROR_UNAVAILABLE = -3,         /* driver/library not found, stub driver, or no such device */
    ACCEL_ERROR_UNSUPPORTED = -4,         /* the device cannot do this (format, feature, queue type) */
    ACCEL_ERROR_SIGNAL_FAILED = -5,       /* the awaited signal was failed with accel_signal_fail */
    ACCEL_ERROR_DEVICE_LOST = -6,         /* sticky: the device is unusable; recreate it, or recover it
                                             (accel_device_recover); also: a stale object (see Device
                                             generations) */
    ACCEL_ERROR_DEADLOCK = -7,            /* the wait can never complete (nothing submitted will signal it) */
    ACCEL_ERROR_COMPILE = -8,             /* program build failed; the log carries the compiler output */
    ACCEL_ERROR_BACKEND = -9              /* a driver call failed; the log names the call and its code */
} accel_result;

/* A static string naming r ("ACCEL_OK", ...); "unknown accel_result" for other values. Any thread. */
ACCEL_API const char* accel_result_string(accel_result r);

/* ==== opaque objects ==== */
typedef struct accel_backend accel_backend;   /* a backend's function table */
typedef struct accel_device  accel_device;
typedef struct accel_buffer  accel_buffer;
typedef struct accel_program accel_program;
typedef struct accel_signal  accel_signal;
typedef struct accel_queue   accel_queue;

/* ==== backends ==== */
/* The CPU backend (always available). */
ACCEL_API const accel_backend* accel_cpu_backend(void);
/* "cpu", "cuda", "vulkan"; NULL for NULL. */
ACCEL_API const char* accel_backend_name(const accel_backend* b);
/* Number of devices the backend can open. ACCEL_ERROR_UNAVAILABLE (count = 0) when the driver is
   missing, with the reason logged to stderr; ACCEL_ERROR_INVALID_ARGUMENT for NULL arguments. */
ACCEL_API accel_result accel_backend_device_count(const accel_backend* b, uint32_t* count);

/* ==== devices ==== */
typedef enum accel_log_level {
    ACCEL_LOG_ERROR, ACCEL_LOG_WARN, ACCEL_LOG_INFO, ACCEL_LOG_DEBUG
} accel_log_level;
typedef struct accel_logger {
    void (*log_fn)(accel_log_level level, const char* message, void* user);  /* any thread */
    void* user;
} accel_logger;
typedef struct accel_allocator {
    void* (*alloc_fn)(size_t size, size_t align, void* user);   /* NULL on failure; any thread */
    void  (*free_fn)(void* ptr, size_t size, void* user);
    void* user;
} accel_allocator;
typedef struct accel_device_desc {
    const accel_backend* backend;   /* NULL: the CPU backend */
    uint32_t device_index;          /* which device of that backend */
    uint32_t cpu_threads;           /* CPU backend: worker lanes, 0 = one per CPU the process may use
                                       (its affinity mask; 1 without threads); above 4096: INVALID_ARGUMENT */
    accel_allocator allocator;      /* zero: malloc/free. Host-side allocations only */
    accel_logger logger;            /* zero: errors and warnings to stderr */
    bool debug;                     /* extra checks (Vulkan: the validation layer), hang diagnostics,
                                       and warnings about valid but suspect calls (an exec with no
                                       work); see Hang diagnostics */
    const char* label;
    /* Chrome trace-event JSON written here (see "Profiling" above); NULL: the environment variable
       ACCEL_TRACE if set, else no trace. The string is read at create only. */
    const char* trace_path;
} accel_device_desc;

/* Creates a device. desc NULL = all defaults. Errors: INVALID_ARGUMENT (out NULL, bad desc),
   OUT_OF_MEMORY, UNAVAILABLE (no such device / driver missing), BACKEND. *out is NULL on failure. */
ACCEL_API accel_result accel_device_create(const accel_device_desc* desc, accel_device** out);
/* Tries backends[0..count-1] in order with desc (its backend field is ignored); the first that yields
   a device wins, and the log says why each one before it was skipped. Returns the last error when all
   fail (UNAVAILABLE when every one was unavailable). */
ACCEL_API accel_result accel_device_create_any(const accel_backend* const* backends, uint32_t count,
                                               const accel_device_desc* desc, accel_device** out);
/* Waits for all queues of the device (logging what a blocked one waits for after 1 s, then at a growing
   interval), then releases it and every object still alive on it; objects that other devices' batches
   still hold, and the device state they need, are freed when those batches are released. NULL is a
   no-op. Any thread; concurrently with it, only accel_signal_set / _fail / _value on the signals its
   queues wait for (the remedy for a blocked queue; see Thread safety), not other calls on its objects.
   With threads, from a host call or native step of one of its queues (it would wait for that call):
   refused with an error line, nothing changes (see accel_queue_host_call). */
ACCEL_API void accel_device_destroy(accel_device* dev);

typedef enum accel_device_type {
    ACCEL_DEVICE_CPU, ACCEL_DEVICE_GPU_DISCRETE, ACCEL_DEVICE_GPU_INTEGRATED, ACCEL_DEVICE_OTHER
} accel_device_type;
typedef enum accel_program_format {
    ACCEL_FORMAT_CPU = 1u << 0, ACCEL_FORMAT_SPIRV = 1u << 1, ACCEL_FORMAT_PTX = 1u << 2,
    ACCEL_FORMAT_CUBIN = 1u << 3, ACCEL_FORMAT_CUDA_SOURCE = 1u << 4
} accel_program_format;
typedef struct accel_device_info {
    const char* backend;            /* "cpu", "cuda", "vulkan" */
    char name[128];                 /* "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)", "cpu: 16 threads" */
    accel_device_type type;
    uint64_t memory_bytes;          /* device memory (CPU: physical RAM; 0 when unknown, as on WebAssembly) */
    uint32_t max_group_size[3], max_group_invocations, max_group_count[3];
    uint32_t max_buffers, max_constants;     /* per exec */
    uint32_t formats;               /* accel_program_format bits this device runs */
    bool separate_copy_queue;       /* ACCEL_QUEUE_COPY is a real DMA engine */
    bool host_mapped_device_memory; /* ACCEL_MEMORY_DEVICE buffers can be mapped (CPU, unified memory) */
    uint32_t compute_capability;    /* CUDA: 90 for sm_90; else 0 */
    uint32_t cpu_threads;           /* CPU backend: worker lanes an exec is split across
                                       (accel_dispatch.worker runs 0..cpu_threads-1; 1 without
                                       threads); 0 on other backends */
    uint32_t buffer_offset_alignment; /* accel_buffer_view_create offsets: 1 on the CPU, the device's
                                       minStorageBufferOffsetAlignment on Vulkan, 256 on CUDA */
    /* Which physical device this is (see "Several devices"): the same GPU opened through CUDA and
       through Vulkan reports the same uuid, so a program can tell it is one GPU */
    uint8_t uuid[16];               /* CUDA cuDeviceGetUuid, Vulkan deviceUUID; CPU: all zero */
    uint32_t pci_domain, pci_bus, pci_device;   /* UINT32_MAX where unknown (CPU; Vulkan without
                                                   VK_EXT_pci_bus_info) */
    uint64_t generation;            /* 1 at create, +1 per accel_device_recover (see Device generations) */
} accel_device_info;
/* Fills *out. INVALID_ARGUMENT for NULL; DEVICE_LOST when lost. Any thread. */
ACCEL_API accel_result accel_device_info_get(accel_device* dev, accel_device_info* out);

/* ==== buffers ==== */
typedef enum accel_memory { ACCEL_MEMORY_DEVICE = 0, ACCEL_MEMORY_HOST = 1 } accel_memory;
typedef struct accel_buffer_desc {
    size_t size;                    /* bytes, > 0 */
    accel_memory memory;
    const void* host_ptr;           /* CPU backend only: wrap caller memory (no copy); caller keeps ownership.
                                       Any address works; kernels get it as is, so align it for the types
                                       they read (accel's own buffers are 64-byte aligned). `memory` is
                                       not used with it (the memory is the caller's) */
    const char* label;
    bool read_only;                 /* with host_ptr: the memory may be const (an mmap'd read-only file);
                                       copy/fill/update into it (or a view of it) and accel_buffer_write
                                       are refused; kernels bound to it must not write it, and
                                       accel_buffer_map's pointer is for reading only */
} accel_buffer_desc;
/* Errors: INVALID_ARGUMENT (NULL, size 0, bad memory kind, read_only without host_ptr), OUT_OF_MEMORY,
   UNSUPPORTED (host_ptr on a backend that cannot wrap), DEVICE_LOST. Contents are zero unless host_ptr
   is given. */
ACCEL_API accel_result accel_buffer_create(accel_device* dev, const accel_buffer_desc* desc,
                                           accel_buffer** out);
/* Drops the caller's reference; memory is freed once no submitted work uses it. NULL is a no-op. */
ACCEL_API void   accel_buffer_destroy(accel_buffer* buf);
ACCEL_API size_t accel_buffer_size(const accel_buffer* buf);   /* 0 for NULL */
/* Host pointer, or NULL when not host-visible (or buf is NULL). Valid until the buffer is released. */
ACCEL_API void*  accel_buffer_map(accel_buffer* buf);
/* Blocking copies between host memory and the buffer, at call time (not ordered with queues: order
   them with signals). INVALID_ARGUMENT for NULL, size 0, or offset+size beyond the buffer. */
ACCEL_API accel_result accel_buffer_write(accel_buffer* buf, size_t offset, const void* src, size_t size);
ACCEL_API accel_result accel_buffer_read(accel_buffer* buf, size_t offset, void* dst, size_t size);
/* A buffer that aliases bytes [offset, offset + size) of buf: usable wherever a buffer is (exec
   bindings, copy, fill, update, read/write, map; offsets are relative to the view). A view of a view
   is a view of the root buffer. The view holds a reference on the root: destroying the root's handle
   first is fine, its memory lives until the last view and the work using them are gone. Destroy it
   with accel_buffer_destroy. offset must be a multiple of accel_device_info.buffer_offset_alignment
   (counted in the root buffer). A view of a read_only buffer is read_only. Bound to a kernel, a view
   sets where the binding starts (CPU: accel_dispatch.buffers[i], with buffer_sizes[i] the view's
   size; CUDA: the pointer; Vulkan: the descriptor offset, range to the end of the root); the
   kernel's bounds come from its constants as with any buffer. Errors: INVALID_ARGUMENT
   (NULL, size 0, the range outside buf, a misaligned offset; logged), OUT_OF_MEMORY, DEVICE_LOST; a
   handle of accel_queue_alloc without memory: its reason (see there). Any thread. */
ACCEL_API accel_result accel_buffer_view_create(accel_buffer* buf, size_t offset, size_t size,
                                                accel_buffer** out);

/* ==== queue-ordered memory ==== */
/* A buffer whose memory belongs to a stretch of a queue's order (CUDA's cuMemAllocAsync, IREE's
   queue_alloca): per-step scratch and activations without a host wait and without keeping them all.
   accel_queue_alloc is a recording call of q: *out is a buffer handle at once, usable wherever a buffer
   is but as a timestamp's destination (exec bindings, indirect counts, copy, fill, update, views, patches;
   read/write, and map with memory HOST, once its point is reached: order them with signals), of exactly
   `size` bytes, contents undefined. Its memory is the buffer's from this point of q's order until the point
   of accel_queue_free: commands recorded on q between the two may use it, and so may another queue's
   commands between a wait on a signal q signals after the alloc and a signal that q waits for before
   the free (the caller orders them, as with any memory shared by two queues). Freed memory goes back
   to the device's pool (keyed by size class and memory kind) and a later accel_queue_alloc takes it
   with no host wait: at once on q itself (q's order puts it after the free), on another queue once no
   submitted command uses it. On a GPU, memory that another queue used (or freed) goes back once no
   submitted command uses it, for q too: the free's queue may pass its point early (see
   accel_queue_free).
   When the memory is taken: at the alloc's point of q's order, on every backend: on the CPU the
   executor takes it from the pool when it gets there, and the free's point gives it back; on CUDA
   where the point is enqueued on the queue's stream (cuMemAllocFromPoolAsync / cuMemFreeAsync where
   the device has memory pools, see accel_cuda.h); on Vulkan where the point's segment is built for
   vkQueueSubmit (ranges of memory blocks, see accel_vulkan.h). So batches of alloc / use / free
   submitted ahead hold one step's memory, not all of theirs; read/write/map before the point fail
   (INVALID_ARGUMENT; map NULL) where the point was not taken yet (a GPU queue takes it where it
   enqueues it, which may be before the device ran a GPU wait ahead of it: order host access after
   the point with a signal, as for any memory the device uses). The pools keep memory until the device
   is destroyed, and give idle memory back when a new allocation does not fit. A command list that uses
   such a buffer itself (not through a patch) replays as its commands recorded anew. Errors: NULL q
   (logged, returned), NULL out, size 0, an unknown memory
   kind, a call while q records a command list, a lost device, out of host memory for the handle:
   recording errors (logged, returned here and by the next submit; *out NULL). Out of device memory is
   not an error of the call: the handle is returned with no memory behind it, and every batch that
   uses it fails where it does (its own batch at the alloc), as a batch behind a failed wait does: its
   signals fail with the reason (OUT_OF_MEMORY, or the backend's error); read/write of the handle,
   and a view of it, return that error, and map returns NULL. That error is found at the point (logged
   there); an alloc point a failed batch never reached (or one that submit discarded) leaves the handle
   without memory the same way, with that batch's reason (on a GPU a point behind a wait that the
   device watches is built before that wait's failure is known: it gets its memory). Recording thread. */
ACCEL_API accel_result accel_queue_alloc(accel_queue* q, size_t size, accel_memory memory,
                                        accel_buffer** out);
/* Ends buf (an accel_queue_alloc handle) at this point of q's order: its memory returns to the pool and its
   handle goes with it (do not destroy it afterwards; views of it must not be used past this point either:
   work ordered after it that uses the memory, a replayed list say, is undefined; the CPU backend fails such
   a batch, GPU backends do not look). Commands recorded before it, on q or ordered before it, still see the
   memory, failures or not: on a GPU a free behind a wait that the device watches (see Signals) is passed
   when that wait's signal fails (the failure releases the device), so where another queue recorded a use (or
   the alloc; a command list that uses it counts as another queue, and keeps the memory until it is
   destroyed), or q a wait between the alloc and the free, the memory stays until no submitted command uses
   it (a use recorded later, ordered before the free by that wait, included); a handle used only on q with no
   wait between its alloc and its free goes back in q's order. q may be another queue of buf's device than
   the one that allocated it. accel_buffer_destroy instead of accel_queue_free is a free at no queue point:
   the memory returns once no submitted work uses the buffer. Recording errors (INVALID_ARGUMENT at the next
   submit, nothing freed): NULL buf, a buffer not from accel_queue_alloc, one freed already (found for sure
   until that free completed; see below), another device's, a call while q records a command list. The handle
   ends when the free is recorded: where submit then discards the batch (a recording error of another
   command), the buffer goes as by accel_buffer_destroy. An ended handle, like a destroyed object, must not
   be passed again: once its free completed, a later accel_queue_alloc may return the same pointer (a second
   free would then end the new buffer), or its memory may be gone. Recording thread. */
ACCEL_API void accel_queue_free(accel_queue* q, accel_buffer* buf);

/* ==== programs ==== */
typedef struct accel_dispatch {      /* what a CPU kernel sees: one work group */
    uint32_t group_id[3], group_count[3], group_size[3];
    uint32_t global_size[3];         /* items with id >= global_size must be skipped */
    void* const* buffers;            /* base pointers, in binding order */
    const size_t* buffer_sizes;
    const uint32_t* constants;
    uint32_t buffer_count, constant_count;
    uint32_t worker;                 /* 0 .. cpu_threads-1, for per-worker scratch */
} accel_dispatch;
typedef void (*accel_cpu_kernel)(const accel_dispatch* d);

typedef struct accel_program_desc {
    const char* name;                /* entry point (SPIR-V, PTX, cubin, CUDA C); label for CPU */
    accel_cpu_kernel cpu;
    const uint32_t* spirv; size_t spirv_size;          /* bytes */
    const char* ptx;                                   /* NUL-terminated */
    const void* cubin; size_t cubin_size;
    const char* cuda_source;                           /* compiled at run time with NVRTC */
    uint32_t buffer_count;           /* Vulkan: set 0, storage buffers at bindings 0..n-1;
                                        CUDA: first n params (pointers) */
    uint32_t constant_count;         /* 32-bit words. Vulkan: push constants; CUDA: the next params,
                                        4 bytes each */
} accel_program_desc;
/* Picks the format this device runs. Errors: INVALID_ARGUMENT (NULL, no format at all, counts above the
   device limits; Vulkan: a malformed SPIR-V module, or a shader that uses a binding at or above
   buffer_count or more than constant_count words of push constants — fewer is fine), UNSUPPORTED (only
   formats this device cannot run), COMPILE, OUT_OF_MEMORY. Names (the entry point) of any length.
   An exec must pass exactly buffer_count buffers and constant_count constants. */
ACCEL_API accel_result accel_program_create(accel_device* dev, const accel_program_desc* desc,
                                            accel_program** out);
ACCEL_API void accel_program_destroy(accel_program* prog);     /* NULL is a no-op; freed after its work */

/* ==== signals ==== */
/* values are 0 .. ACCEL_SIGNAL_MAX (2^63-1); the top half is reserved for failure */
#define ACCEL_SIGNAL_MAX   ((uint64_t)0x7fffffffffffffffull)
#define ACCEL_WAIT_FOREVER UINT64_MAX          /* timeout_ns: 0 polls, UINT64_MAX never times out */
/* INVALID_ARGUMENT for NULL or initial > ACCEL_SIGNAL_MAX; OUT_OF_MEMORY; DEVICE_LOST. */
ACCEL_API accel_result accel_signal_create(accel_device* dev, uint64_t initial, accel_signal** out);
ACCEL_API void     accel_signal_destroy(accel_signal* s);     /* NULL is a no-op; freed after its work */
/* Current value; above ACCEL_SIGNAL_MAX once failed; 0 for NULL. */
ACCEL_API uint64_t accel_signal_value(const accel_signal* s);
/* Host signal: value = max(value, v). INVALID_ARGUMENT for NULL or v > ACCEL_SIGNAL_MAX;
   SIGNAL_FAILED when the signal is failed (it stays failed). Where a GPU queue's worker waits on the
   host for this value (a wait its device cannot watch), the calling thread submits the device work
   the raise releases itself, without blocking (what would block stays with the worker). */
ACCEL_API accel_result accel_signal_set(accel_signal* s, uint64_t value);
/* OK once value >= v; TIMEOUT when timeout_ns passes first; SIGNAL_FAILED once failed; DEADLOCK in a
   no-threads build when nothing can reach v; INVALID_ARGUMENT for NULL or v > ACCEL_SIGNAL_MAX. Without a
   timeout, on a CPU signal, the waiting thread may run the work that reaches v (see Queues: waits that
   help). */
ACCEL_API accel_result accel_signal_wait(accel_signal* s, uint64_t value, uint64_t timeout_ns);
/* Waits for all (wait_all) or any of signals[i] >= values[i]. Wait any: OK when one is reached
   (*first_reached = lowest such index), SIGNAL_FAILED when none is reached and one is failed
   (*first_reached = its index). Wait all: OK when all are reached, SIGNAL_FAILED as soon as one is
   failed (*first_reached = the lowest failed index; with OK, the lowest index). *first_reached is left
   as it was on TIMEOUT, DEADLOCK and INVALID_ARGUMENT, which are as for accel_signal_wait (count 0 is
   invalid). */
ACCEL_API accel_result accel_signal_wait_many(accel_signal* const* signals, const uint64_t* values,
                                              uint32_t count, bool wait_all, uint64_t timeout_ns,
                                              uint32_t* first_reached /* may be NULL */);
/* Names s in log lines and hang reports (default: its kind, "signal" or "wrapped signal"). The text is copied
   through the device allocator; NULL or "" removes the label, and the default shows again. OUT_OF_MEMORY
   keeps the old label; INVALID_ARGUMENT for a NULL signal. Call it before other threads use s (log lines read
   the label). */
ACCEL_API accel_result accel_signal_set_label(accel_signal* s, const char* label);
/* Poisons s: every wait on it fails, now and later. reason must be an error (< 0); the first reason
   wins (failing a failed signal again returns OK and changes nothing). INVALID_ARGUMENT for NULL or
   reason >= 0. Any thread, also while a destroy waits for a queue
   blocked on s (set and fail hold their own reference to s while they run). */
ACCEL_API accel_result accel_signal_fail(accel_signal* s, accel_result reason);

/* ==== queues ==== */
typedef enum accel_queue_type { ACCEL_QUEUE_COMPUTE = 0, ACCEL_QUEUE_COPY = 1 } accel_queue_type;
/* Items per dimension (global) and per work group (local). A local size of 0 counts as 1; a global size
   of 0 in any dimension makes the exec a no-op on every backend (nothing runs; its arguments are still
   checked and an error is still returned by the next submit). */
typedef struct accel_exec_params { uint32_t global_size[3], local_size[3]; } accel_exec_params;
ACCEL_API accel_exec_params accel_exec_1d(uint32_t global, uint32_t local);
ACCEL_API accel_exec_params accel_exec_2d(uint32_t gx, uint32_t gy, uint32_t lx, uint32_t ly);
ACCEL_API accel_exec_params accel_exec_3d(const uint32_t global[3], const uint32_t local[3]);

/* INVALID_ARGUMENT (NULL, bad type), UNSUPPORTED, OUT_OF_MEMORY, BACKEND (thread creation), DEVICE_LOST. */
ACCEL_API accel_result accel_queue_create(accel_device* dev, accel_queue_type type, accel_queue** out);
/* Names q in log lines and hang reports (default: "compute queue" / "copy queue"), like
   accel_signal_set_label: copied through the device allocator, NULL or "" removes it (the default shows
   again), OUT_OF_MEMORY keeps the old one. From the thread that records q, before other threads wait on its
   work. */
ACCEL_API accel_result accel_queue_set_label(accel_queue* q, const char* label);
/* Discards the unsubmitted batch, finishes submitted work (logging what it waits for after 1 s, then at
   a growing interval, as accel_device_destroy does), releases the queue. NULL is a no-op. No-threads
   builds: what can run runs; a batch parked on a signal nothing can set any more is dropped and what it
   would signal fails (reason DEADLOCK): there is no other thread to wait for. With threads, from a host
   call or native step of q: refused with an error line, nothing changes (see accel_queue_host_call). */
ACCEL_API void accel_queue_destroy(accel_queue* q);
/* Recording calls: append to the current batch; errors are returned by the next submit.
   wait/signal: v <= ACCEL_SIGNAL_MAX. exec: COMPUTE queues only, exact buffer and constant counts,
   local_size within the device limits. copy: non-overlapping when src == dst. fill: offset and size
   multiples of 4. Sizes > 0 and offset+size within the buffer everywhere. Buffers and programs are
   the queue's device's (a CPU device may also use another CPU device's: they share host memory),
   except that a copy may take ONE buffer (or view) of any other device or backend: a peer copy (see
   "Several devices"). wait and signal take any device's or backend's signals (see Signals). */
ACCEL_API void accel_queue_wait(accel_queue* q, accel_signal* s, uint64_t value);
ACCEL_API void accel_queue_signal(accel_queue* q, accel_signal* s, uint64_t value);
ACCEL_API void accel_queue_exec(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                                uint32_t buffer_count, const uint32_t* constants, uint32_t constant_count,
                                accel_exec_params params);
/* Indirect exec: like accel_queue_exec with `local_size` (NULL: 1 x 1 x 1; a 0 counts as 1), but the
   group counts (3 x uint32_t: x, y, z) are read from counts + offset when the command runs, after the
   commands before it completed (a kernel of the same batch may write them). A count of 0 in any
   dimension runs nothing. Counts above accel_device_info.max_group_count, or whose items (count x
   local size) do not fit 32 bits, are over the limits: the exec is skipped and a debug device logs it
   (CPU, CUDA; Vulkan reads the counts on the device and cannot check them: there they must be within
   the limits, as in Vulkan). Recording errors, besides accel_queue_exec's: counts NULL or another
   device's buffer (a CPU queue may take another CPU device's, as above), offset not a multiple of 4
   (in counts and in a view's root), offset + 12 beyond counts. In a command list the counts buffer is
   patch index buffer_count (after the bindings; the offset stays as recorded). Where it runs: CPU, the
   executor reads the counts; Vulkan, vkCmdDispatchIndirect; CUDA, which has no indirect launch, reads
   them on the host at the command's turn (a device round trip: see accel_cuda.h). Recording thread. */
ACCEL_API void accel_queue_exec_indirect(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                                         uint32_t buffer_count, const uint32_t* constants,
                                         uint32_t constant_count, const uint32_t local_size[3],
                                         accel_buffer* counts, size_t offset);
ACCEL_API void accel_queue_copy(accel_queue* q, accel_buffer* dst, size_t dst_offset,
                                accel_buffer* src, size_t src_offset, size_t size);
ACCEL_API void accel_queue_fill(accel_queue* q, accel_buffer* dst, size_t offset, size_t size,
                                uint32_t pattern);
/* data is copied now */
ACCEL_API void accel_queue_update(accel_queue* q, accel_buffer* dst, size_t offset,
                                  const void* data, size_t size);
ACCEL_API void accel_queue_barrier(accel_queue* q);
/* Records a host call: fn(user) runs on a library thread once the commands recorded before it on q
   have completed (their writes visible to fn), and the commands after it start when fn returns (they
   see what fn wrote to host-visible memory). Works on every queue type and backend; runs at most once,
   and not at all when the batch is discarded or dropped (a recording error, a failed wait before it, a
   lost device). fn must not block on this queue (a wait for a signal that this queue signals later, or
   accel_queue_finish of q) and must not record on q; it may submit to other queues and set signals.
   With threads, accel_queue_finish(q, ACCEL_WAIT_FOREVER), accel_queue_destroy(q) or
   accel_device_destroy of q's device from fn (or from a native step's fn) would wait for fn itself: each
   is refused with an error line (finish returns ACCEL_ERROR_DEADLOCK) and changes nothing (a finish with
   a timeout returns TIMEOUT, as before); no-threads builds allow the destroys (see "No-threads and WASM
   builds").
   Where it runs: CPU backend, the queue's executor thread; no-threads builds, inline when the batch
   reaches it, which is inside accel_queue_submit or inside the accel_signal_set / accel_signal_fail
   that unblocks the batch; CUDA and Vulkan, the queue's worker thread, once the device finished the
   commands before it (their work ends there; a GPU wait before it whose signal failed drops it, as on
   the CPU). Costs on a GPU queue: one device round trip and a host thread wake-up, like a host-gated
   wait. A NULL fn is a recording error (INVALID_ARGUMENT at submit); so is a host call while q records
   a command list (accel_queue_record_begin: record_end returns it). */
ACCEL_API void accel_queue_host_call(accel_queue* q, void (*fn)(void* user), void* user);
/* What a native step's fn receives (see accel_queue_native): the queue, and its backend's native queue. */
typedef struct accel_native {
    accel_queue* queue;
    void* cuda_stream;              /* CUDA: the CUstream the queue's commands run on; else NULL */
    void* vulkan_command_buffer;    /* Vulkan: a VkCommandBuffer in the recording state; else NULL */
    void* vulkan_queue;             /* Vulkan: the VkQueue it will be submitted to; else NULL */
    uint32_t vulkan_queue_family;   /* Vulkan: that VkQueue's family; else 0 */
} accel_native;
/* Records a native step: foreign work in q's order without a host round trip (cuBLAS, NCCL, cuFFT,
   a few vkCmd* of your own). fn(n, user) runs once the commands before it are *enqueued* on the native
   queue (not completed): what fn enqueues on n->cuda_stream, or records into n->vulkan_command_buffer,
   runs after those commands and before the ones after it (on Vulkan, between the same barriers accel
   puts between two of its own commands). fn may call any driver or library function that only
   enqueues; it must not wait for the queue's own work, submit the command buffer, or call accel on q
   (the rest of the device is fine: set or fail a signal, submit to another queue, create, destroy;
   but not the device itself: as for a host call, that destroy is refused with threads).
   Where it runs: CUDA, on the thread that puts the segment on the stream: accel_queue_submit's; the
   queue's worker after a host-gated wait, and while a GPU wait enqueued before it on the queue, for a
   value the host sets or applies, is not known released (fn may enqueue more than the stream holds;
   see accel_cuda.h for the waits this covers); or the thread whose accel_signal_set released a
   host-gated wait (see there). accel calls of fn that enqueue on another CUDA device (a
   submit, or a set that releases that device's work) leave that device's context current: make
   accel_cuda_device_context(n->queue's device) current again before enqueuing more. Vulkan, on the
   queue's worker, which records the segment;
   CPU backend, which has no native queue, once the commands before it have completed (on the executor: a
   thread that helps hands a batch back to it there), with the native pointers NULL; no-threads builds, where
   the batch runs. Runs at most once, and not at all when the batch is discarded or a failure
   comes before it was enqueued (a failed wait before it, a lost device): once the commands before it
   were handed to the device it runs, since it only enqueues. Any queue type. A NULL fn, or a native step
   while q records a command list (fn runs at enqueue time, a list is replayed later), is a recording
   error (INVALID_ARGUMENT at submit; record_end returns it). Recording thread. */
ACCEL_API void accel_queue_native(accel_queue* q, void (*fn)(const accel_native* n, void* user), void* user);
/* Records a command that writes, when the commands before it have completed, a uint64_t: that moment in
   nanoseconds on accel's host clock (monotonic where the platform has one: see "Profiling"; device
   clocks converted), at dst + offset.
   Any queue type. offset must be a multiple of 8, in dst and in a view's root (GPUs write the value
   as one 64-bit store), and offset + 8 within dst; dst a buffer this queue's device can use. Errors
   (NULL, range, alignment, another device's buffer, a buffer of accel_queue_alloc: a GPU's value is
   written from the host after the segment completed, when a free after it may have handed the memory
   to another buffer) are recording errors, returned by the next submit; a Vulkan queue whose family
   has no timestamps refuses it at submit (UNSUPPORTED). On GPUs the value is there once a signal
   recorded after it is reached (see "Profiling"). Recording thread (as every recording call). */
ACCEL_API void accel_queue_timestamp(accel_queue* q, accel_buffer* dst, size_t offset);
/* Now, in nanoseconds on the clock of timestamps and traces (see "Profiling"). Any thread. */
ACCEL_API uint64_t accel_host_time_ns(void);
/* Hands the batch to the device and returns at once. Returns the first recording error (and discards
   the batch: nothing of it runs), OUT_OF_MEMORY, DEVICE_LOST, or OK (also for an empty batch). */
ACCEL_API accel_result accel_queue_submit(accel_queue* q);
/* Submits, then waits for everything submitted to this queue. Returns the submit error if any (after the wait
   for what was submitted before), else OK / TIMEOUT / DEADLOCK (no-threads: a parked batch that nothing can
   unblock; with threads, ACCEL_WAIT_FOREVER from a host call or native step of q, refused with an error line:
   it would wait for that call) / DEVICE_LOST. A batch whose rest was dropped behind a failed wait counts as
   finished (OK): its failure shows in the signals it would have signalled. Without a timeout, on a CPU queue,
   the waiting thread may run the queue's batches itself (see Queues: waits that help). */
ACCEL_API accel_result accel_queue_finish(accel_queue* q, uint64_t timeout_ns);

/* ==== recorded command lists ==== */
typedef struct accel_commands accel_commands;   /* an immutable, replayable list of commands */
/* From here, exec/copy/fill/update/barrier on q go into a new command list instead of the batch.
   wait, signal, replay, host_call and timestamp while recording are recording errors (returned by
   record_end: a list holds device work only; time a replay with timestamps around it); submit (and
   finish) while recording returns INVALID_ARGUMENT at once and fails the recording. Returns
   INVALID_ARGUMENT for NULL, when q is already recording, or when the current batch is not empty
   (a command or a recording error since the last submit; an exec with no work outside a list adds
   nothing to the batch); DEVICE_LOST. The recording thread. */
ACCEL_API accel_result accel_queue_record_begin(accel_queue* q);
/* Ends recording: returns the first recording error of the list (nothing is built: all or nothing,
   as submit), else builds the device's native replay form (CPU: a pre-validated op array) and hands
   the caller one reference in *out. *out is NULL on error. Errors: INVALID_ARGUMENT (NULL, q not
   recording, a recording error), OUT_OF_MEMORY, BACKEND, DEVICE_LOST. The queue's batch is empty
   and ready for ordinary recording afterwards, whatever the result. */
ACCEL_API accel_result accel_queue_record_end(accel_queue* q, accel_commands** out);
/* Drops the caller's reference; the list (and the programs and buffers it keeps alive) is freed
   after its pending replays. NULL is a no-op. Any thread. */
ACCEL_API void accel_commands_destroy(accel_commands* c);

typedef struct accel_patch {
    uint32_t command;       /* index of the command in the list, in recording order, from 0 */
    uint32_t index;         /* exec: buffer binding / constant index (an indirect exec's counts: buffer
                               buffer_count); copy: buffer 0 = dst, 1 = src; fill: buffer 0 = dst,
                               constant 0 = the pattern */
    accel_buffer* buffer;   /* non-NULL: replace that buffer for this replay */
    uint32_t value;         /* buffer NULL: replace that 32-bit constant for this replay */
} accel_patch;
/* A recording call like exec: appends one replay of c to the current batch, with the patches applied
   to this replay only (the patch array is copied now; a later patch of the same slot wins, but every
   patch is checked, one that a later one replaces too). Waits and signals go around it. Recording
   errors: c NULL, c of another device, a list with execs on a COPY queue, and a bad patch: a command
   index out of range, an index the command does not have (update, barrier and timestamp take no
   patches, copy no constants), a buffer an exec or copy on q could not use (another device's, except
   another CPU device's on a CPU device: they share memory, as in exec and copy), a read_only buffer
   as a copy's or fill's destination, or a copy / fill buffer that does not hold the recorded offset +
   size (offsets stay where they were recorded: within a view, from its start; or a copy that would
   then overlap itself). A list may be replayed by several queues and threads at once, any number of
   times. */
ACCEL_API void accel_queue_replay(accel_queue* q, accel_commands* c, const accel_patch* patches,
                                  uint32_t patch_count);

/* ==== several devices ==== */
/* What a queue of device a can do with device b's objects (see "Several devices"). */
typedef struct accel_peer_info {
    bool copy;               /* accel_queue_copy between buffers of the two devices works (always true) */
    bool direct_copy;        /* ... without staging through a host buffer of accel's: the same device,
                                CPU buffers (host memory), CUDA peer access or one context, Vulkan
                                memory imported from the same physical device and driver (b's
                                buffers made while both are open) */
    bool device_waits;       /* a queue of a waits on b's signals on the device, no host thread gating
                                it (a and b the same device; a CPU device waiting on another CPU
                                device's signal, exactly as on its own; two CUDA devices on one GPU
                                with stream memory operations; a CUDA device with them waiting on a
                                CPU device's signals, but for a signal that a queue of another GPU
                                waited on first: its device word is that GPU's; a Vulkan or CUDA
                                device waiting on a Vulkan device's signals through shared timeline
                                semaphores, where the drivers export them: see "Waits across
                                devices" for the values) */
} accel_peer_info;
/* Fills *out for a's queues using b's buffers and signals (a == b is fine: all true). INVALID_ARGUMENT
   for NULL; DEVICE_LOST when either is lost. Any thread. */
ACCEL_API accel_result accel_device_peer_info(accel_device* a, accel_device* b, accel_peer_info* out);
/* ==== device generations ==== */
/* Recreates the native device (CPU: nothing native, see Device generations; CUDA: the primary context;
   Vulkan: the VkDevice) and adds 1 to accel_device_info.generation. First every signal of the device
   that is not failed is failed with ACCEL_ERROR_DEVICE_LOST (so every waiter returns and every batch
   that waits on one drops its rest), and every object of the device becomes stale: queues drop what
   they have not started (what it would signal, on other devices too, fails with DEVICE_LOST, also
   where a wait on another device's signal holds it until that signal is set or fails for another
   reason). Works on a lost device (its lost state is cleared for the new generation) and
   on a healthy one (a reset). Returns OK; INVALID_ARGUMENT (NULL); UNSUPPORTED (a backend or device
   accel cannot recreate, e.g. an adopted Vulkan device: nothing changed); or the backend's error when
   the new native device cannot be made (the device stays lost: try again, or destroy it);
   DEVICE_LOST where the driver keeps the loss for the rest of the process (NVIDIA's CUDA drivers after
   a sticky error such as an illegal address: accel_cuda.h "Recovery"; destroy the device). Any thread,
   also while other threads wait on the device's signals, record on its queues or call its functions:
   those calls return (or record) ACCEL_ERROR_DEVICE_LOST. Not from a host call, native step or kernel
   of the device's queues (on CUDA: of any accel device on the same CUDA device, which recovers with
   it): a GPU device's recover waits until no queue runs any of them (from one, it never returns); a
   CPU device's returns at once, and a kernel or host call running then finishes. */
ACCEL_API accel_result accel_device_recover(accel_device* dev);

#ifdef __cplusplus
}
#endif
#endif /* ACCEL_H_INCLUDED */

/* ============================================================================================== */
/*                                       IMPLEMENTATION                                           */
/* ============================================================================================== */
#if defined(ACCEL_IMPLEMENTATION) && !defined(ACCEL_IMPLEMENTATION_INCLUDED)
#define ACCEL_IMPLEMENTATION_INCLUDED
/* Map (grep for "==== name ===="). The main flow first, the optional parts after it:
     config; platform: time and spinning, threads, cpu placement
     core: events               - a growing 64-bit word to wait on: signals, executors, the pool
     core: backend interface    - objects' shared state, batches, the backend table, the GPU walk's slots
     core: backend kit          - what accel_cuda.h / accel_vulkan.h may call from here
     core: allocation and logging
     core: optional parts: entry points  - the calls into the trace and the debug reports
     core: objects, results and backends, devices
     core: device generations   - stale objects (the one entry check), accel_device_recover
     core: buffers, programs
     core: signals              - create, set, fail, the public waits
     core: host signals         - a host word with waiters: the CPU backend's signals, CUDA's core
     core: raising signals      - every raise: host word, failure flow, device side
     core: queue reports        - what a queue waits for, for a destroy that waits and hang reports
     core: recording, recorded command lists          - batches, all-or-nothing recording errors
     core: indirect execs       - group counts read when the command runs (between the two above)
     core: several devices, imported memory of other devices - peer copies (direct or staged); the
                                imports of other devices' memory (one cache, the backends' share slots)
     core: signals waited on by other devices         - a signal's semaphore imported by another
                                device (on the imports' list) where its waits go to the device
     core: failure after hand-off                     - DESIGN 6.1's rule, and its one protocol
     core: batch walk (GPU backends)                  - segments, wait classes, the queue's worker
     cpu: device and worker pool; buffers, programs and signals; queue commands; recorded command
          lists; queue executor; waits that help (a waiting thread runs batches); no-threads; queues;
          backend table
     debug: hang reports        - debug devices only (ACCEL_NO_DEBUG compiles it out)
     trace: the recorder        - Chrome trace JSON (ACCEL_NO_TRACE compiles it out) */

/* ==== config ==== */
#if defined(__TINYC__) && !defined(__cplusplus)
#  error "accel.h: tcc can compile the declarations, not the implementation (ACCEL_IMPLEMENTATION \
needs C11 atomics, which tcc lacks): implement it in a file built by gcc, clang or MSVC"
#endif
#if defined(__cplusplus) ? (__cplusplus < 201103L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201103L)) \
                         : (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
/* C99 and older: say what is needed instead of failing on C11 names (TIME_UTC, _Atomic, threads) */
#  error "accel.h: the implementation (ACCEL_IMPLEMENTATION) needs C11 or C++11: use -std=gnu11 or -std=c11"
#endif
#if !defined(__cplusplus) && defined(__STDC_NO_ATOMICS__)
#  error "accel.h: the implementation needs C11 atomics; this compiler has none (__STDC_NO_ATOMICS__): \
use C++11"
#endif
#if !defined(ACCEL_NO_THREADS)
#  if defined(_WIN32)
#    define ACCEL_I_WIN32_THREADS
#  elif defined(ACCEL_USE_PTHREADS) || defined(__STDC_NO_THREADS__) || defined(__APPLE__)
#    define ACCEL_I_PTHREADS
#  else
#    define ACCEL_I_C11_THREADS
#  endif
#endif
#ifndef ACCEL_CPU_SPIN_NS
#  define ACCEL_CPU_SPIN_NS 200000u
#endif
#ifndef ACCEL_CPU_INLINE_GROUPS
#  define ACCEL_CPU_INLINE_GROUPS 1u
#endif
#ifndef ACCEL_CPU_MOVE_OFF
#  define ACCEL_CPU_MOVE_OFF 1
#endif
#define ACCEL_I_CPU_MAX_BUFFERS   64u
#define ACCEL_I_CPU_MAX_CONSTANTS 64u
#define ACCEL_I_FAILED_BIT ((uint64_t)1 << 63)
#define ACCEL_I_FOREVER    UINT64_MAX

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <time.h>
#if defined(__cplusplus)
#  include <atomic>
#else
#  include <stdatomic.h>
#endif
#if defined(_WIN32)
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  include <windows.h>
#elif !defined(__wasi__)
#  include <unistd.h>
#  include <sys/stat.h>   /* stat: a trace file's identity */
#endif
#if defined(__EMSCRIPTEN__)
#  include <emscripten/emscripten.h>   /* emscripten_get_now: a fine clock in -std=c11 builds too */
#endif
#if defined(ACCEL_I_C11_THREADS)
#  include <threads.h>
#elif defined(ACCEL_I_PTHREADS)
#  include <pthread.h>
#  include <sched.h>
#endif

#if defined(__cplusplus)
/* C++ translation units (engines without C files): the same atomics through <atomic>. The C11 generic
   functions have std:: twins with the same names and arguments. */
typedef std::atomic<uint32_t> accel_i_a32;
typedef std::atomic<uint64_t> accel_i_a64;
using std::atomic_init; using std::atomic_load; using std::atomic_store; using std::atomic_exchange;
using std::atomic_fetch_add; using std::atomic_fetch_sub; using std::atomic_compare_exchange_weak;
using std::atomic_compare_exchange_strong;
using std::atomic_load_explicit; using std::atomic_store_explicit; using std::atomic_exchange_explicit;
using std::atomic_fetch_add_explicit; using std::atomic_fetch_sub_explicit;
using std::atomic_compare_exchange_weak_explicit; using std::atomic_thread_fence;
using std::memory_order_relaxed; using std::memory_order_acquire; using std::memory_order_release;
using std::memory_order_acq_rel; using std::memory_order_seq_cst;
#else
typedef _Atomic(uint32_t) accel_i_a32;
typedef _Atomic(uint64_t) accel_i_a64;
#endif
/* a count of the host threads inside a section, a slot per cache line (core: host threads) */
#define ACCEL_I_INSIDE_SLOTS 16u
typedef struct accel_i_inside_slot { accel_i_a32 n; char pad[60]; } accel_i_inside_slot;
typedef struct accel_i_inside { accel_i_inside_slot slot[ACCEL_I_INSIDE_SLOTS]; } accel_i_inside;

/* ==== platform: time and spinning ==== */
/* Monotonic nanoseconds where the platform exposes a monotonic clock (POSIX with CLOCK_MONOTONIC
   visible, Win32, Emscripten's performance.now); else the C11 wall clock. */
static uint64_t accel_i_now_ns(void) {
#if defined(_WIN32)
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f); QueryPerformanceCounter(&c);
    return (uint64_t)((double)c.QuadPart * (1e9 / (double)f.QuadPart));
#elif defined(__EMSCRIPTEN__)
    return (uint64_t)(emscripten_get_now() * 1e6);   /* milliseconds, fractional (performance.now) */
#else
    struct timespec ts;
#  if defined(CLOCK_MONOTONIC) && !defined(__wasi__)
    clock_gettime(CLOCK_MONOTONIC, &ts);
#  else
    timespec_get(&ts, TIME_UTC);
#  endif
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* ACCEL_CPU_SPIN_NS as a value, not a literal: 0 is a valid setting, and comparing an unsigned with a
   literal 0 is what -Wtype-limits (in -Wextra) reports. */
#if !defined(ACCEL_NO_THREADS)
static uint64_t accel_i_spin_ns(void) { return ACCEL_CPU_SPIN_NS; }
#endif

/* now + timeout, saturating; ACCEL_I_FOREVER stays forever. */
static uint64_t accel_i_deadline(uint64_t timeout_ns) {
    uint64_t now;
    if (timeout_ns == ACCEL_I_FOREVER) return ACCEL_I_FOREVER;
    now = accel_i_now_ns();
    return timeout_ns > ACCEL_I_FOREVER - 1 - now ? ACCEL_I_FOREVER - 1 : now + timeout_ns;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#  define ACCEL_I_RELAX() __builtin_ia32_pause()
#elif defined(__GNUC__) && (defined(__aarch64__) || defined(__arm__))
#  define ACCEL_I_RELAX() __asm__ __volatile__("yield" ::: "memory")
#elif defined(_WIN32)
#  define ACCEL_I_RELAX() YieldProcessor()
#else
#  define ACCEL_I_RELAX() ((void)0)
#endif

/* ==== platform: threads ==== */
/* A mutex, a condition variable and a thread, with one implementation per platform: C11 <threads.h>,
   pthreads (macOS, ThreadSanitizer builds) and Win32; no-threads builds get inert stand-ins. */
typedef struct accel_i_thread accel_i_thread;
typedef void (*accel_i_thread_fn)(void* arg);
#if !defined(ACCEL_NO_THREADS)
#  if defined(__cplusplus)
#    define ACCEL_I_THREAD_LOCAL thread_local
#  elif defined(_MSC_VER)
#    define ACCEL_I_THREAD_LOCAL __declspec(thread)
#  else
#    define ACCEL_I_THREAD_LOCAL _Thread_local
#  endif
#endif

#if defined(ACCEL_I_C11_THREADS)
typedef mtx_t accel_i_mutex;
typedef cnd_t accel_i_cond;
struct accel_i_thread { thrd_t handle; accel_i_thread_fn fn; void* arg; };
static bool accel_i_mutex_init(accel_i_mutex* m) { return mtx_init(m, mtx_plain) == thrd_success; }
static void accel_i_mutex_destroy(accel_i_mutex* m) { mtx_destroy(m); }
static void accel_i_mutex_lock(accel_i_mutex* m) { mtx_lock(m); }
static void accel_i_mutex_unlock(accel_i_mutex* m) { mtx_unlock(m); }
static bool accel_i_cond_init(accel_i_cond* c) { return cnd_init(c) == thrd_success; }
static void accel_i_cond_destroy(accel_i_cond* c) { cnd_destroy(c); }
static void accel_i_cond_wait(accel_i_cond* c, accel_i_mutex* m) { cnd_wait(c, m); }
static void accel_i_cond_broadcast(accel_i_cond* c) { cnd_broadcast(c); }
static void accel_i_cond_timedwait(accel_i_cond* c, accel_i_mutex* m, uint64_t ns) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    ns += (uint64_t)ts.tv_nsec;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    cnd_timedwait(c, m, &ts);
}
static int accel_i_thread_entry(void* p) { accel_i_thread* t = (accel_i_thread*)p; t->fn(t->arg); return 0; }
static accel_result accel_i_thread_start(accel_i_thread* t, accel_i_thread_fn fn, void* arg) {
    int r;
    t->fn = fn; t->arg = arg;
    r = thrd_create(&t->handle, accel_i_thread_entry, t);
    return r == thrd_success ? ACCEL_OK : r == thrd_nomem ? ACCEL_ERROR_OUT_OF_MEMORY : ACCEL_ERROR_BACKEND;
}
static void accel_i_thread_join(accel_i_thread* t) { thrd_join(t->handle, NULL); }
static void accel_i_yield(void) { thrd_yield(); }

#elif defined(ACCEL_I_PTHREADS)
typedef pthread_mutex_t accel_i_mutex;
typedef pthread_cond_t accel_i_cond;
struct accel_i_thread { pthread_t handle; accel_i_thread_fn fn; void* arg; };
static bool accel_i_mutex_init(accel_i_mutex* m) { return pthread_mutex_init(m, NULL) == 0; }
static void accel_i_mutex_destroy(accel_i_mutex* m) { pthread_mutex_destroy(m); }
static void accel_i_mutex_lock(accel_i_mutex* m) { pthread_mutex_lock(m); }
static void accel_i_mutex_unlock(accel_i_mutex* m) { pthread_mutex_unlock(m); }
static bool accel_i_cond_init(accel_i_cond* c) { return pthread_cond_init(c, NULL) == 0; }
static void accel_i_cond_destroy(accel_i_cond* c) { pthread_cond_destroy(c); }
static void accel_i_cond_wait(accel_i_cond* c, accel_i_mutex* m) { pthread_cond_wait(c, m); }
static void accel_i_cond_broadcast(accel_i_cond* c) { pthread_cond_broadcast(c); }
static void accel_i_cond_timedwait(accel_i_cond* c, accel_i_mutex* m, uint64_t ns) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    ns += (uint64_t)ts.tv_nsec;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(c, m, &ts);
}
static void* accel_i_thread_entry(void* p) {
    accel_i_thread* t = (accel_i_thread*)p;
    t->fn(t->arg);
    return NULL;
}
static accel_result accel_i_thread_start(accel_i_thread* t, accel_i_thread_fn fn, void* arg) {
    int r;
    t->fn = fn; t->arg = arg;
    r = pthread_create(&t->handle, NULL, accel_i_thread_entry, t);
    return r == 0 ? ACCEL_OK : ACCEL_ERROR_OUT_OF_MEMORY;
}
static void accel_i_thread_join(accel_i_thread* t) { pthread_join(t->handle, NULL); }
static void accel_i_yield(void) { sched_yield(); }

#elif defined(ACCEL_I_WIN32_THREADS)
typedef SRWLOCK accel_i_mutex;
typedef CONDITION_VARIABLE accel_i_cond;
struct accel_i_thread { HANDLE handle; accel_i_thread_fn fn; void* arg; };
static bool accel_i_mutex_init(accel_i_mutex* m) { InitializeSRWLock(m); return true; }
static void accel_i_mutex_destroy(accel_i_mutex* m) { (void)m; }
static void accel_i_mutex_lock(accel_i_mutex* m) { AcquireSRWLockExclusive(m); }
static void accel_i_mutex_unlock(accel_i_mutex* m) { ReleaseSRWLockExclusive(m); }
static bool accel_i_cond_init(accel_i_cond* c) { InitializeConditionVariable(c); return true; }
static void accel_i_cond_destroy(accel_i_cond* c) { (void)c; }
static void accel_i_cond_wait(accel_i_cond* c, accel_i_mutex* m) {
    SleepConditionVariableSRW(c, m, INFINITE, 0);
}
static void accel_i_cond_broadcast(accel_i_cond* c) { WakeAllConditionVariable(c); }
static void accel_i_cond_timedwait(accel_i_cond* c, accel_i_mutex* m, uint64_t ns) {
    uint64_t ms = (ns + 999999u) / 1000000u;
    SleepConditionVariableSRW(c, m, ms >= INFINITE ? INFINITE - 1 : (DWORD)ms, 0);
}
static DWORD WINAPI accel_i_thread_entry(LPVOID p) {
    accel_i_thread* t = (accel_i_thread*)p;
    t->fn(t->arg);
    return 0;
}
static accel_result accel_i_thread_start(accel_i_thread* t, accel_i_thread_fn fn, void* arg) {
    t->fn = fn; t->arg = arg;
    t->handle = CreateThread(NULL, 0, accel_i_thread_entry, t, 0, NULL);
    return t->handle ? ACCEL_OK : ACCEL_ERROR_OUT_OF_MEMORY;
}
static void accel_i_thread_join(accel_i_thread* t) {
    WaitForSingleObject(t->handle, INFINITE);
    CloseHandle(t->handle);
}
static void accel_i_yield(void) { SwitchToThread(); }

#else /* ACCEL_NO_THREADS: one thread; locks are inert */
typedef struct accel_i_mutex { int unused; } accel_i_mutex;
typedef struct accel_i_cond { int unused; } accel_i_cond;
struct accel_i_thread { int unused; };
static bool accel_i_mutex_init(accel_i_mutex* m) { (void)m; return true; }
static void accel_i_mutex_destroy(accel_i_mutex* m) { (void)m; }
static void accel_i_mutex_lock(accel_i_mutex* m) { (void)m; }
static void accel_i_mutex_unlock(accel_i_mutex* m) { (void)m; }
static bool accel_i_cond_init(accel_i_cond* c) { (void)c; return true; }
static void accel_i_cond_destroy(accel_i_cond* c) { (void)c; }
static void accel_i_yield(void) { }
#endif

/* ==== platform: cpu placement ==== */
/* On Linux, a woken thread is often placed on the CPU of the thread that woke it, even when another
   CPU is idle; once there, two threads that hand work back and forth (a host thread and a queue's
   executor) stay there, because each runs whenever the other yields, and a pair of always-hot threads
   is never moved by the load balancer. Every hand-off then costs a context switch (~2 us on virtual
   machines) instead of a cache-line transfer. accel's own threads (executors, pool workers) therefore
   step off a shared CPU when they notice one: after a sleep, when they woke up on the waker's CPU,
   and while spinning, when a yield switched to another thread and the awaited value was there when
   it came back. The move waits for the end of the work the thread was handed (a batch, a pool
   worker's share of an exec) and happens only if that work took less than ACCEL_CPU_SPIN_NS: after
   longer work the thread that handed it has stopped spinning and sleeps, so the CPU is no longer
   shared, and on 2 CPUs "off" may well mean beside another process's busy thread. The kernel keeps
   a woken thread on its previous CPU when that CPU is idle, so one move is usually enough; moves are
   at most one per millisecond per thread. User threads are never moved; the original affinity mask
   is restored at once. Moves happen only where a CPU without a busy lane is left (accel_i_own;
   ACCEL_CPU_MOVE_OFF 0: never): on devices with fewer lanes than allowed CPUs, always; when every
   allowed CPU has a lane, only an executor while every pool worker sleeps (pool workers that left the
   CPU of the job's owner too made a 2-thread transformer decode 16% slower, bench/decode.c). Otherwise
   "off" can only mean onto another busy lane's CPU, which halves the speed of a 2-lane device on 2
   allowed CPUs;
   and never moving at all leaves a one-group exec's executor on the CPU of the host thread spinning
   for its result (a round trip about 5x slower on 2 CPUs). Raw system calls, because glibc hides
   sched_getcpu and sched_setaffinity under a strict -std=c11. Elsewhere these are no-ops, and the
   allowed-CPU count comes from the process affinity mask (Win32) or the online cores. */
#if defined(__linux__) && !defined(ACCEL_NO_THREADS)
#  include <sys/syscall.h>
#  if !defined(__cplusplus)
long syscall(long number, ...);   /* <unistd.h> declares it only with _DEFAULT_SOURCE / _GNU_SOURCE */
#  endif
#  define ACCEL_I_CPU_MASK_WORDS 16   /* 1024 CPUs */
static uint32_t accel_i_cpu_id(void) {   /* the calling thread's CPU + 1; 0 when unknown */
    unsigned cpu = 0;
    return syscall(SYS_getcpu, &cpu, (void*)0, (void*)0) == 0 ? cpu + 1u : 0u;
}
/* Moves the calling thread off CPU cpu_id (as returned by accel_i_cpu_id) if it runs there and may
   run elsewhere. */
static void accel_i_cpu_leave(uint32_t cpu_id) {
    unsigned long mask[ACCEL_I_CPU_MASK_WORDS], away[ACCEL_I_CPU_MASK_WORDS];
    const unsigned bits = 8u * sizeof mask[0];
    unsigned cpu = cpu_id - 1u, allowed = 0;
    long n;
    if (cpu_id == 0 || cpu >= ACCEL_I_CPU_MASK_WORDS * bits || accel_i_cpu_id() != cpu_id) return;
    memset(mask, 0, sizeof mask);
    n = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (n <= 0) return;
    memcpy(away, mask, sizeof away);
    away[cpu / bits] &= ~(1ul << (cpu % bits));
    for (unsigned i = 0; i < ACCEL_I_CPU_MASK_WORDS; i++)
        for (unsigned long w = away[i]; w; w &= w - 1) allowed++;
    if (allowed == 0) return;   /* pinned to this one CPU: stay */
    if (syscall(SYS_sched_setaffinity, 0, (size_t)n, away) == 0)
        syscall(SYS_sched_setaffinity, 0, (size_t)n, mask);
}
/* The number of CPUs in the calling thread's affinity mask; 0 when unknown. */
static uint32_t accel_i_cpu_mask_count(void) {
    unsigned long mask[ACCEL_I_CPU_MASK_WORDS];
    uint32_t n = 0;
    memset(mask, 0, sizeof mask);
    if (syscall(SYS_sched_getaffinity, 0, sizeof mask, mask) <= 0) return 0;
    for (unsigned i = 0; i < ACCEL_I_CPU_MASK_WORDS; i++)
        for (unsigned long w = mask[i]; w; w &= w - 1) n++;
    return n;
}
#elif !defined(ACCEL_NO_THREADS)
static uint32_t accel_i_cpu_id(void) { return 0; }
static void accel_i_cpu_leave(uint32_t cpu_id) { (void)cpu_id; }
#endif
#if defined(_WIN32) && !defined(ACCEL_NO_THREADS)
static uint32_t accel_i_cpu_mask_count(void) {   /* the process's mask (its processor group) */
    DWORD_PTR proc = 0, sys = 0;
    uint32_t n = 0;
    if (!GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys)) return 0;
    for (; proc; proc &= proc - 1) n++;
    return n;
}
#elif !defined(__linux__) && !defined(ACCEL_NO_THREADS)
static uint32_t accel_i_cpu_mask_count(void) { return 0; }
#endif
/* An accel-owned thread's placement state: whether it may move (ACCEL_CPU_MOVE_OFF, and a CPU without
   a busy lane is left to go to), when it last moved (0: never), and, when it may move only while a
   pool sleeps (one lane per allowed CPU: "off this CPU" would otherwise mean onto a busy lane's CPU),
   that pool's sleeper count and how many sleepers make it idle. NULL for user threads. */
typedef struct accel_i_own {
    uint64_t moved_ns;
    uint64_t asked_ns;            /* a move off asked_cpu is due once the work at hand ends; 0: none */
    uint32_t asked_cpu;
    bool moves;
    const accel_i_a32* idle_sleepers;   /* NULL: no such condition */
    uint32_t idle_need;
} accel_i_own;
#if !defined(ACCEL_NO_THREADS)
#  define ACCEL_I_CPU_HERE UINT32_MAX   /* for accel_i_own_leave: the CPU the caller runs on */
/* Asks for a move of an own thread off cpu_id (or ACCEL_I_CPU_HERE), at most once per millisecond;
   the CPU is only looked up (a system call) once the rate limit lets the move happen. The move itself
   waits for the end of the work at hand (accel_i_own_settle). */
static void accel_i_own_leave(accel_i_own* own, uint32_t cpu_id, uint64_t now) {
    if (!own || !own->moves || cpu_id == 0 || own->asked_ns ||
        (own->moved_ns && now - own->moved_ns < 1000000u))
        return;
    own->asked_ns = now;
    own->asked_cpu = cpu_id == ACCEL_I_CPU_HERE ? accel_i_cpu_id() : cpu_id;
}
/* The work the thread was handed is done: it moves if it was asked to, that work took less than
   ACCEL_CPU_SPIN_NS (the thread that handed it still spins on this CPU for the result, and will for
   the next; after longer work that thread sleeps and the CPU is no longer shared), and a CPU without
   a busy lane is left now (the idle condition is read here, when the move happens). */
static void accel_i_own_settle(accel_i_own* own) {
    uint64_t now;
    if (!own->asked_ns) return;
    now = accel_i_now_ns();
    if (now - own->asked_ns < accel_i_spin_ns() &&
        (!own->idle_sleepers ||
         atomic_load_explicit(own->idle_sleepers, memory_order_relaxed) >= own->idle_need)) {
        own->moved_ns = now;
        accel_i_cpu_leave(own->asked_cpu);
    }
    own->asked_ns = 0;
}
#endif

/* A short critical section: an atomic flag, spinning then yielding. */
static void accel_i_spin_lock_held(accel_i_a32* l) {   /* the lock was held: spin until it is ours */
    uint32_t n = 0;
    do {
        while (atomic_load_explicit(l, memory_order_relaxed)) {
            if ((++n & 63u) != 0) ACCEL_I_RELAX(); else accel_i_yield();
        }
    } while (atomic_exchange_explicit(l, 1u, memory_order_acquire));
}
static inline void accel_i_spin_lock(accel_i_a32* l) {
    if (atomic_exchange_explicit(l, 1u, memory_order_acquire)) accel_i_spin_lock_held(l);
}
static void accel_i_spin_unlock(accel_i_a32* l) { atomic_store_explicit(l, 0u, memory_order_release); }
static void accel_i_atomic_max(accel_i_a64* a, uint64_t v) {
    uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
    while (old < v && !atomic_compare_exchange_weak(a, &old, v)) {}
}

/* ==== core: events ==== */
/* An event is a 64-bit word that only grows, which threads wait on until it reaches a target:
   spin first (cheap wake-up), then sleep on a condition variable. It backs CPU signals, queue
   executors (word = batches submitted), queue completion, and the worker pool. Waiters are callbacks
   run when the word changes: wait_many uses them, and no-threads builds use them to run parked
   batches. The sleepers count lets a raise skip the lock when nobody sleeps (seq_cst on both sides:
   the raiser stores the word then reads sleepers; a sleeper counts itself then re-reads the word).
   A raise that wakes sleepers uncounts them (they re-count if they must sleep again): a woken thread
   may wait long for a CPU (it is often queued behind its waker, on the waker's CPU), and raises
   meanwhile would each pay the lock and a futex wake for a thread that is awake already. */
typedef struct accel_i_waiter accel_i_waiter;
struct accel_i_waiter { accel_i_waiter* next; void (*wake)(accel_i_waiter* w); };

typedef struct accel_i_event {
    accel_i_a64 word;
    accel_i_a32 sleepers;        /* sleeping threads not woken yet + registered waiters */
    accel_i_a32 waker_cpu;       /* CPU (+1) of the last raise that woke sleepers; 0 unknown */
    accel_i_mutex lock;
    accel_i_cond cond;
    accel_i_waiter* waiters;     /* guarded by lock */
    uint32_t blocked;            /* guarded by lock: sleeping threads counted and not woken yet */
    accel_i_a32 inside;          /* threads in accel_i_event_block (asleep, or woken and not back) */
    uint32_t wakes;              /* guarded by lock: raises that woke sleepers (a sleeper's snapshot) */
} accel_i_event;

static bool accel_i_event_init(accel_i_event* ev, uint64_t value) {
    atomic_init(&ev->word, value);
    atomic_init(&ev->sleepers, 0u);
    atomic_init(&ev->waker_cpu, 0u);
    ev->waiters = NULL;
    ev->blocked = 0;
    ev->wakes = 0;
    atomic_init(&ev->inside, 0u);
    if (!accel_i_mutex_init(&ev->lock)) return false;
    if (!accel_i_cond_init(&ev->cond)) { accel_i_mutex_destroy(&ev->lock); return false; }
    return true;
}
static void accel_i_event_destroy(accel_i_event* ev) {
    accel_i_cond_destroy(&ev->cond);
    accel_i_mutex_destroy(&ev->lock);
}
static uint64_t accel_i_event_value(const accel_i_event* ev) {
    return atomic_load_explicit((accel_i_a64*)&ev->word, memory_order_acquire);
}

#if defined(ACCEL_NO_THREADS)
static void accel_i_cpu_unpark(accel_i_event* ev);
#endif
static void accel_i_event_notify(accel_i_event* ev) {
    if (atomic_load(&ev->sleepers) == 0) return;
#if defined(ACCEL_NO_THREADS)
    accel_i_cpu_unpark(ev);   /* one thread: the waiters are parked queues (see cpu: no-threads) */
#else
    atomic_store_explicit(&ev->waker_cpu, accel_i_cpu_id(), memory_order_relaxed);
    accel_i_mutex_lock(&ev->lock);
    if (ev->blocked) {   /* woken from here on: uncounted (see above) */
        atomic_fetch_sub(&ev->sleepers, ev->blocked);
        ev->blocked = 0;
        ev->wakes++;
    }
    accel_i_cond_broadcast(&ev->cond);
    for (accel_i_waiter* w = ev->waiters; w; w = w->next) w->wake(w);
    accel_i_mutex_unlock(&ev->lock);
#endif
}

/* word = max(word, v), except that a word with the failed bit never changes again. Returns the
   previous word. The first compare-exchange guesses that the word is v - 1 (timelines mostly count
   up by one) instead of loading it first: a load would fetch the cache line shared from the waiter
   that spins on it and the exchange would then have to upgrade it, two transfers instead of one. A
   wrong guess costs one more exchange on a line we already own. */
static uint64_t accel_i_event_raise(accel_i_event* ev, uint64_t v) {
    uint64_t old = v - 1;
    if (v == 0 || (v & ACCEL_I_FAILED_BIT)) old = atomic_load_explicit(&ev->word, memory_order_relaxed);
    else if (atomic_compare_exchange_strong(&ev->word, &old, v)) { accel_i_event_notify(ev); return old; }
    /* old is the current word now */
    while (old < v && !(old & ACCEL_I_FAILED_BIT)) {
        if (atomic_compare_exchange_weak(&ev->word, &old, v)) { accel_i_event_notify(ev); break; }
    }
    return old;
}
static void accel_i_event_add(accel_i_event* ev, uint64_t n) {
    atomic_fetch_add(&ev->word, n);
    accel_i_event_notify(ev);
}

static void accel_i_waiter_add(accel_i_event* ev, accel_i_waiter* w) {
    accel_i_mutex_lock(&ev->lock);
    w->next = ev->waiters;
    ev->waiters = w;
    atomic_fetch_add(&ev->sleepers, 1u);
    accel_i_mutex_unlock(&ev->lock);
}
static void accel_i_waiter_remove(accel_i_event* ev, accel_i_waiter* w) {
    accel_i_mutex_lock(&ev->lock);
    for (accel_i_waiter** p = &ev->waiters; *p; p = &(*p)->next) {
        if (*p == w) { *p = w->next; atomic_fetch_sub(&ev->sleepers, 1u); break; }
    }
    accel_i_mutex_unlock(&ev->lock);
}

#if !defined(ACCEL_NO_THREADS)
/* Spins until word >= target (or, with `other`, until *other differs from seen), for at most
   ACCEL_CPU_SPIN_NS or until the deadline. The first stretch is a pure spin with no clock reads (a
   partner on another core answers within it); after that each round also yields, because on an
   oversubscribed or virtual machine the thread we wait for is often queued behind us on the same
   core, and a pure spin would keep it off for the whole spin budget. */
static bool accel_i_event_spin(const accel_i_event* ev, uint64_t target, uint64_t deadline,
                               accel_i_own* own, const accel_i_a64* other, uint64_t seen) {
    uint64_t start = 0;
    for (uint32_t i = 1;; i++) {
        if (accel_i_event_value(ev) >= target || (other && atomic_load(other) != seen)) return true;
        ACCEL_I_RELAX();
        if ((i & 63u) == 0) {
            uint64_t now = accel_i_now_ns();
            if (start == 0) start = now;
            else if (now - start >= accel_i_spin_ns()) return false;
            if (now >= deadline) return false;
            if (i >= 128u) {
                accel_i_yield();
                /* the yield ran another thread (a no-op yield is ~0.3 us) and that thread raised the
                   word: whoever we wait for shares our CPU */
                if (own && accel_i_event_value(ev) >= target) {
                    uint64_t after = accel_i_now_ns();
                    if (after - now > 1000u) accel_i_own_leave(own, ACCEL_I_CPU_HERE, after);
                    return true;
                }
            }
        }
    }
}
#endif

/* Waits until word >= target or the deadline (absolute, accel_i_now_ns) passes. Without threads
   nothing can change the word while we wait, so it only checks. `own`: the caller is one of accel's
   threads, which steps off a CPU it shares with the thread it waits for (see platform: cpu
   placement); NULL for user threads. */
#if !defined(ACCEL_NO_THREADS)
/* A sleeper's three steps, with ev->lock held: count itself (if a raise uncounted it or it has not
   yet), then re-read what it waits for, then sleep once (ns: ACCEL_I_FOREVER or a timeout); a raise
   that woke it uncounted it (*counted false); at the end it uncounts itself if no raise did. */
static void accel_i_event_count(accel_i_event* ev, bool* counted) {
    if (*counted) return;
    ev->blocked++;
    atomic_fetch_add(&ev->sleepers, 1u);
    *counted = true;
}
static void accel_i_event_nap(accel_i_event* ev, uint64_t ns, bool* counted) {
    uint32_t wakes = ev->wakes;
    if (ns == ACCEL_I_FOREVER) accel_i_cond_wait(&ev->cond, &ev->lock);
    else accel_i_cond_timedwait(&ev->cond, &ev->lock, ns);
    if (ev->wakes != wakes) *counted = false;   /* a raise woke us (it changes wakes only while we sleep) */
}
static void accel_i_event_uncount(accel_i_event* ev, bool* counted) {
    if (!*counted) return;
    ev->blocked--;
    atomic_fetch_sub(&ev->sleepers, 1u);
    *counted = false;
}
/* The sleeping part: on the condition variable until word >= target or the deadline. *slept: it did. */
static bool accel_i_event_block(accel_i_event* ev, uint64_t target, uint64_t deadline, bool* slept) {
    bool reached = false, counted = false;
    atomic_fetch_add_explicit(&ev->inside, 1u, memory_order_relaxed);
    accel_i_mutex_lock(&ev->lock);
    for (;;) {
        uint64_t now;
        accel_i_event_count(ev, &counted);
        if (atomic_load(&ev->word) >= target) { reached = true; break; }
        now = accel_i_now_ns();
        if (now >= deadline) break;
        accel_i_event_nap(ev, deadline == ACCEL_I_FOREVER ? ACCEL_I_FOREVER : deadline - now, &counted);
        *slept = true;
    }
    accel_i_event_uncount(ev, &counted);
    accel_i_mutex_unlock(&ev->lock);
    atomic_fetch_sub_explicit(&ev->inside, 1u, memory_order_relaxed);
    return reached;
}
#endif
static bool accel_i_event_sleep(accel_i_event* ev, uint64_t target, uint64_t deadline, accel_i_own* own) {
    if (accel_i_event_value(ev) >= target) return true;
#if defined(ACCEL_NO_THREADS)
    (void)deadline; (void)own;
    return false;
#else
    bool reached, slept = false;
    if (accel_i_event_spin(ev, target, deadline, own, NULL, 0)) return true;
    reached = accel_i_event_block(ev, target, deadline, &slept);
    if (own && slept && reached)
        accel_i_own_leave(own, atomic_load_explicit(&ev->waker_cpu, memory_order_relaxed), accel_i_now_ns());
    return reached;
#endif
}
#if !defined(ACCEL_NO_THREADS)
/* A user's thread waiting (never moved). */
static bool accel_i_event_wait(accel_i_event* ev, uint64_t target, uint64_t deadline) {
    return accel_i_event_sleep(ev, target, deadline, NULL);
}
#endif
/* An executor or pool worker waiting, with no deadline. */
static void accel_i_event_wait_own(accel_i_event* ev, uint64_t target, accel_i_own* own) {
    accel_i_event_sleep(ev, target, ACCEL_I_FOREVER, own);
}

/* ==== core: backend interface ==== */
/* A backend is a table of functions. The core validates every argument once (so backends trust
   them), keeps the objects' shared state (below), and records commands into batches; a backend turns
   a submitted batch into work. Backend objects embed these base structs as their first member. */
typedef enum accel_i_kind {
    ACCEL_I_BUFFER, ACCEL_I_PROGRAM, ACCEL_I_SIGNAL, ACCEL_I_QUEUE, ACCEL_I_COMMANDS
} accel_i_kind;

typedef struct accel_i_object accel_i_object;
struct accel_i_object {
    /* The counts come first and `device` last, at least 64 bytes apart, so that wherever the object
       lies the counts never share a cache line with `device` or with what follows the header (a
       buffer's pointer and size): a host accel_signal_set holds a reference while it raises, and with
       the counts beside `device` each set would move the line every waiter of the signal reads first
       back to the setter (more than doubling a two-thread signal ping-pong); recording, which takes
       references, would do the same to an executor reading a buffer's pointer. */
    accel_i_a32 refs;              /* the caller's handle + its queue's hold + one per other command */
    accel_i_a32 handle;            /* 1 while the caller's handle holds its reference */
    /* core: queue holds: the seq that the last batch using the object has or will have (its holder's
       recording thread writes it), and that queue (its address; 0: none) */
    accel_i_a64 held_until, holder;
    accel_i_kind kind;
    accel_i_object *prev, *next;   /* the device's live objects */
    char label[32];                /* the desc's label, or a default (a longer one is in label_set) */
    char* label_set;               /* accel_*_set_label's copy (device allocator); wins over label */
    uint64_t generation;           /* the device's generation at create (see core: device generations) */
    accel_device* device;
    /* core: queue holds: its links in its holder's held list, or (next) in its last holder's unheld list */
    accel_i_object *hold_prev, *hold_next;
};
typedef char accel_i_counts_apart_from_device[
    offsetof(accel_i_object, device) >= offsetof(accel_i_object, handle) + 67 ? 1 : -1];

typedef enum accel_i_cmd_kind {
    ACCEL_I_CMD_WAIT, ACCEL_I_CMD_SIGNAL, ACCEL_I_CMD_EXEC, ACCEL_I_CMD_COPY,
    ACCEL_I_CMD_FILL, ACCEL_I_CMD_UPDATE, ACCEL_I_CMD_BARRIER, ACCEL_I_CMD_TIMESTAMP,
    ACCEL_I_CMD_REPLAY,            /* only for backends with commands_build; else the core expands it */
    ACCEL_I_CMD_HOST_CALL,         /* a host step: needs the host after the commands before it completed */
    ACCEL_I_CMD_NATIVE             /* a native step: fn enqueues foreign work in the queue's order */
} accel_i_cmd_kind;

/* accel_i_cmd.flags: ON_DEVICE, a wait the core handed to the device (core: batch walk); FOREIGN, a
   signal command of a queue of another device than its signal's; INDIRECT, an exec whose group counts
   are read when it runs (accel_i_exec_counts: its params hold the local size, global 1 x 1 x 1);
   HOST_READ, an indirect exec whose counts the walk reads on the host (a host step: see "core: indirect
   execs"), cleared once its params hold the grid read */
#define ACCEL_I_CMD_ON_DEVICE 1u
#define ACCEL_I_CMD_FOREIGN   2u
/* STAGED: a copy with a buffer of another device that a GPU queue's backend does not do itself: a host
   step (core: several devices) */
#define ACCEL_I_CMD_INDIRECT  4u
#define ACCEL_I_CMD_HOST_READ 8u
#define ACCEL_I_CMD_STAGED    16u
/* QMEM_POINT: a NATIVE command that is an accel_queue_alloc / accel_queue_free point (u.qmem; core:
   queue-ordered memory at its point): the CPU executor runs it, a GPU walk where it builds it */
#define ACCEL_I_CMD_QMEM_POINT 32u
/* SHARED: a command that holds no references of its own: an exec with the program and buffers of an
   earlier exec of its batch, whose references hold them for both (accel_i_rec_exec), or a command whose
   objects its queue holds (core: queue holds). */
#define ACCEL_I_CMD_SHARED     64u
/* GRID_READ: an INDIRECT exec whose params hold the grid its HOST_READ step read (a trace shows it) */
#define ACCEL_I_CMD_GRID_READ  128u
/* PEER_HOST: a copy that q's device does itself with a buffer of another device whose recover frees that
   memory (backend->peer_frees): the waits of its segment go to the host (core: several devices) */
#define ACCEL_I_CMD_PEER_HOST  256u
/* PEER_COUNTED: a PEER_HOST copy counted in its other device's peer_copies since the walk built it,
   until it is known done (accel_i_peer_count, accel_i_peer_uncount); PEER_SEEN: a replay of a native
   list whose copies the walk looked at for PEER_HOST (accel_i_peer_waits_on_host) */
#define ACCEL_I_CMD_PEER_COUNTED 512u
#define ACCEL_I_CMD_PEER_SEEN  1024u
typedef struct accel_i_cmd {
    accel_i_cmd_kind kind;
    uint32_t flags;
    union {
        struct { accel_signal* signal; uint64_t value; } sig;                 /* wait, signal */
        /* buffers, constants: arena offsets; an indirect exec's counts buffer and offset follow the
           bindings (accel_i_exec_counts) */
        struct { accel_program* program; size_t buffers, constants;
                 uint32_t buffer_count, constant_count; accel_exec_params params; } exec;
        /* copy: dst and src are roots, the offsets in them; the _rel offsets as recorded (in a view:
           from its start) */
        struct { accel_buffer* dst; accel_buffer* src; size_t dst_offset, src_offset, size;
                 size_t dst_rel, src_rel; } copy;
        struct { accel_buffer* dst; size_t offset, size; uint32_t pattern; size_t rel; } fill;
        struct { accel_buffer* dst; size_t offset, size, data; } update;   /* data: arena offset */
        struct { accel_buffer* dst; size_t offset; } stamp;                  /* timestamp */
        /* replay: patches is the arena offset of accel_i_patch[patch_count], sorted by command */
        struct { accel_commands* list; size_t patches; uint32_t patch_count; } replay;
        struct { void (*fn)(void* user); void* user; } host;               /* host call */
        struct { void (*fn)(const accel_native* n, void* user); void* user; } native;   /* native step */
        /* a queue-memory point (a NATIVE command flagged ACCEL_I_CMD_QMEM_POINT): core: queue-ordered
           memory at its point */
        struct { accel_buffer* buf; accel_buffer* held; bool free; } qmem;   /* held: see the point */
    } u;
} accel_i_cmd;
/* A replay's patch as backends see it (accel_queue_replay makes them from the caller's, checked and
   sorted by command): a buffer patch names the ROOT buffer (views resolved, as copy/fill commands are)
   and where the slot now points in it: an exec binding the view's offset and size (a root: 0 and its
   size), a copy or fill the command's offset in the root. The patch holds a reference on the root. */
typedef struct accel_i_patch {
    uint32_t command, index;
    accel_buffer* buffer;          /* a root; NULL: a constant patch */
    size_t offset, size;
    uint32_t value;                /* a constant patch's value */
    uint32_t order;                /* its place among the caller's patches (their sort keeps it) */
} accel_i_patch;

typedef struct accel_i_batch accel_i_batch;
struct accel_i_batch {
    accel_i_batch* next;           /* FIFO / free-list link */
    accel_i_cmd* cmds; uint32_t count; size_t cmds_bytes;   /* cmds_bytes: allocated size */
    unsigned char* arena; size_t arena_used, arena_cap;   /* exec bindings, constants, update data */
    uint32_t pc;                   /* next command to run (a parked batch resumes here) */
    uint32_t host_checked;         /* GPU walk: device waits before this were checked by a host step */
    bool qmem;                     /* uses memory taken at its point (core: queue-ordered memory at ...) */
    bool replays;                  /* holds a replay (accel_i_replays_live) */
    bool peer_host;                /* holds a copy flagged ACCEL_I_CMD_PEER_HOST */
    uint32_t last_exec;            /* the last direct exec recorded, + 1 (0: none) */
    uint64_t seq;                  /* its queue's submits when a backend accepted it (0: not accepted) */
    /* GPU backends (core: batch walk): in the device's list of batches with waits on the device */
    accel_i_batch *dnext, *dprev;
    accel_queue* dqueue;           /* the queue it was submitted on (hang reports) */
    accel_device* ddev;            /* whose list: the queue's device, or the one device whose signals its
                                      device waits watch when they are another device's (several devices) */
    bool dlisted;
};
/* waits [wfrom, from), commands [from, to) */
typedef struct accel_i_segment { uint32_t wfrom, from, to; } accel_i_segment;
typedef struct accel_i_walker accel_i_walker;

/* What a GPU backend provides to the core's batch walk ("core: batch walk"), beside its backend table
   (which points to it): the core splits a batch into segments and classifies its waits; the backend
   turns one segment at a time into native work and reports completion. The CPU backend has none: its
   executor is the device. (IREE keeps its deferred work queue apart from the device the same way.) */
typedef struct accel_i_walk_ops {
    /* can q's device itself wait for s >= v (s not reached, not failed)? true: the wait goes into the
       segment as a device wait (flagged ACCEL_I_CMD_ON_DEVICE); false: the core gates it on the host */
    bool (*wait_on_device)(accel_queue* q, accel_signal* s, uint64_t v);
    /* turns a segment into native work; returns an accel_result, or ACCEL_I_WOULD_BLOCK (an int, never
       an accel_result): the backend cannot take the segment, or the rest of it from b->pc where it set
       that to the first command it did not take, without blocking (may_block false: it must not block
       at all; may_block true: the device already holds as much work not started as it takes without
       blocking the caller in the driver). The walk decides what follows (see accel_i_walk). */
    int (*segment_submit)(accel_queue* q, accel_i_batch* b, const accel_i_segment* seg, bool may_block);
    /* b has no segment left to submit: call accel_i_batch_complete(q, b) once the device finished it */
    void (*batch_submitted)(accel_queue* q, accel_i_batch* b);
    /* waits until everything submitted on q so far completed on the device (host steps, finish) */
    accel_result (*queue_drain)(accel_queue* q, uint64_t timeout_ns);
    /* the device side of a raise (after the host word took v): what the device watches reaches v
       (Vulkan: the timeline semaphore; CUDA: the signal's device-mapped word) */
    void (*signal_publish)(accel_signal* s, uint64_t v);
    /* the queue's worker, idle: reap completed work; returns 0 when nothing is in flight, else how long
       to sleep before polling again (ns). May be NULL (completion found lazily) */
    uint64_t (*queue_poll)(accel_queue* q);
    /* true: the device cannot read an indirect exec's counts itself (CUDA): each is recorded HOST_READ,
       a host step where the walk reads the counts after a drain (see "core: indirect execs") */
    bool indirect_on_host;
    /* accel_signal_value (the caller's read, not accel's own): raise s's host word to what the device
       already reached but no thread applied yet. May be NULL (the host word is always current) */
    void (*signal_settle)(accel_signal* s);
} accel_i_walk_ops;

struct accel_backend {
    const char* name;
    bool shares_host_memory;       /* buffers/programs of any device of this backend work on any other */
    bool fills_any_byte;           /* a fill may start at any byte of a root (else at a multiple of 4) */
    bool pinned_host_buffers;      /* ACCEL_MEMORY_HOST buffers are pinned memory that other devices'
                                      transfers reach (the staged pipeline's slots: core: several devices) */
    accel_result (*device_count)(const accel_backend* b, uint32_t* count);
    accel_result (*device_create)(const accel_backend* b, const accel_device_desc* desc, accel_device** out);
    void (*device_destroy)(accel_device* dev);
    accel_result (*buffer_create)(accel_device* dev, const accel_buffer_desc* desc, accel_buffer** out);
    void (*buffer_free)(accel_buffer* buf);
    accel_result (*buffer_io)(accel_buffer* buf, size_t offset, void* host, size_t size, bool write);
    accel_result (*program_create)(accel_device* dev, const accel_program_desc* desc, accel_program** out);
    void (*program_free)(accel_program* prog);
    accel_result (*signal_create)(accel_device* dev, uint64_t initial, accel_signal** out);
    void (*signal_free)(accel_signal* s);
    uint64_t (*signal_value)(const accel_signal* s);
    /* max; a failed value is final; returns the old value */
    uint64_t (*signal_raise)(accel_signal* s, uint64_t value);
    /* all signals of this backend; returns OK / TIMEOUT / SIGNAL_FAILED / DEADLOCK
       (see accel_i_wait_check) */
    accel_result (*signal_wait_many)(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                     uint64_t timeout_ns, uint32_t* first);
    accel_result (*queue_create)(accel_device* dev, accel_queue_type type, accel_queue** out);
    void (*queue_destroy)(accel_queue* q);                        /* finishes submitted work, frees */
    accel_result (*queue_submit)(accel_queue* q, accel_i_batch* b);  /* takes the batch */
    accel_result (*queue_wait_idle)(accel_queue* q, uint64_t timeout_ns);
    /* debug hang reports: appends what q is blocked on to out (at most cap bytes, NUL-terminated) and
       returns the length appended; NULL when the backend does not describe its queues */
    size_t (*queue_describe)(accel_queue* q, char* out, size_t cap);
    /* GPU backends: the slots of the core's batch walk (accel_i_walk_ops); NULL on the CPU backend */
    const accel_i_walk_ops* walk;
    /* recorded lists: builds c->native, the backend's replay form of c->list (validated commands);
       commands_free releases it. NULL (both): the core's generic form, which records each replay's
       commands into the batch anew, so the backend never sees ACCEL_I_CMD_REPLAY. */
    accel_result (*commands_build)(accel_queue* q, accel_commands* c);   /* q: the queue that recorded c */
    void (*commands_free)(accel_commands* c);
    /* accel_device_recover, after the core made the device's objects stale and failed its signals: makes
       the native device anew (see core: device generations). NULL: the backend cannot (UNSUPPORTED) */
    accel_result (*device_recover)(accel_device* dev);
    /* device_recover recovers several accel devices together (CUDA: one primary context) and does the
       whole recover itself, the core's parts included, under a lock of its own: all of them stale, then
       their signals failed (kit: accel_i_recover_stale, _fail), so that no failure reaches a queue of
       one still current; then each one's end (accel_i_recover_end) before the lock goes */
    bool recover_whole;
    /* several devices (core: several devices): does a queue of dev copy to and from `buf` (a root),
       a buffer of `other` (another device), itself, in its own order on the device (CUDA: peer access
       or one context; Vulkan: imported memory)? buf NULL: other's buffers in general (peer_info).
       NULL or false: the core stages such copies on the host (a GPU queue's host step) */
    bool (*peer_copy)(accel_device* dev, accel_device* other, const accel_buffer* buf);
    /* several devices: does a queue of dev take waits on `other`'s signals on the device (its
       walk->wait_on_device says yes to them)? NULL: never (they are gated on the host) */
    bool (*peer_waits)(accel_device* dev, accel_device* other);
    /* several devices: may a recover of `other` free the memory of its buffers that a queue of dev copies
       itself (peer_copy yes) while dev still holds the copy (CUDA: another GPU's context)? Then the
       waits of such a copy's segment go to the host (ACCEL_I_CMD_PEER_HOST). NULL: never */
    bool (*peer_frees)(accel_device* dev, accel_device* other);
    /* several devices: exporting memory as opaque fds and importing other devices' (core: imported
       memory of other devices). NULL: the backend does neither */
    const struct accel_i_share_ops* share;
    /* accel_device_destroy, before the handles go: drops the references held by work the driver will
       never run (CUDA: host functions of a lost context). NULL: nothing to drop */
    void (*device_close)(accel_device* dev);
};

/* Tracing (see "core: trace"): where a signal last reached a value, so that a wait can draw its flow
   arrow from there. Atomics: a waiter reads them without a lock (see accel_i_trace_mark_of). */
typedef struct accel_i_trace accel_i_trace;
typedef struct accel_i_trace_mark { accel_i_a64 value, t; accel_i_a32 track; } accel_i_trace_mark;
/* A GPU backend whose walk runs queue-memory points (core: queue-ordered memory at its point) sets
   accel_device.qmem_ops at create: its handles are `handle_bytes` each (its buffer struct, zeroed, whose
   native fields its points fill), and drop gives back the memory of its own that a handle still holds
   at its last reference (its free point never ran; its work is done). */
typedef struct accel_i_qmem_ops {
    size_t handle_bytes;
    void (*drop)(accel_buffer* r);
} accel_i_qmem_ops;
/* a mark, read */
typedef struct accel_i_trace_spot { uint64_t value, t; uint32_t track; } accel_i_trace_spot;
#define ACCEL_I_TRACE_MARKS 2u   /* with the sequence word, the 56 bytes before a host signal's word */

struct accel_device {
    const accel_backend* backend;
    accel_allocator allocator;
    accel_logger logger;
    bool debug;
    char label[64];
    accel_device_info info;        /* filled by the backend at create; validation reads the limits */
    accel_i_a32 lost;
    accel_i_a64 generation;        /* 1 at create, +1 per recover (core: device generations) */
    accel_i_a32 creates_in, creates_closed;   /* creates under way; a recover refuses new ones */
    accel_i_a32 freeing;           /* object frees under way (accel_i_objects_hold) */
    bool no_recover;               /* set by the backend at create: accel_device_recover is UNSUPPORTED */
    accel_i_a32 destroyed;         /* accel_device_destroy dropped the handles (see accel_i_orphan_check) */
    accel_i_a32 refs;              /* the caller's handle + one per live object (see core: objects) */
    accel_i_a32 objects_lock;
    accel_i_object* objects;
    /* batches in flight that handed a wait to the device (core: failure after hand-off) */
    accel_i_a32 dwait_lock, dwait_count;
    accel_i_batch* dwaits;
    /* copies of other devices' queues with this device's memory that a recover of it frees (flagged
       ACCEL_I_CMD_PEER_HOST), built and not yet done: its recover waits for them (core: several devices) */
    accel_i_a32 peer_copies;
    /* a recover of this device under way (recover_stale .. recover_end): a stale queue's batch that
       completes meanwhile leaves its copies counted on their other devices until the end, in
       peer_held (under peer_lock): this device's streams may still run them (accel_i_peer_defer) */
    accel_i_a32 peer_lock;
    bool recovering;
    struct accel_i_peer_held* peer_held;
    /* queue workers gated on the host for one of this device's signals (core: batch walk), and what a
       raise of one calls (accel_i_gate_release, set by the first gate: a program without GPU backends
       then links no walk) */
    accel_i_a32 gate_lock, gate_count;
    accel_i_walker* gated;
    void (*gate_release)(accel_signal* s);
    accel_i_trace* trace;          /* NULL: not tracing (the one branch tracing costs when off) */
    accel_i_a64 qmem;              /* accel_queue_alloc's pool (a pointer), made at the first alloc */
    const accel_i_qmem_ops* qmem_ops;   /* a GPU backend's, where its walk runs the points; else NULL */
    /* core: imported memory of other devices: the sharers' list (under its lock), whether another
       device of it can import this one's memory (the backend then allocates it exportable), and how
       many imports of other devices' memory this one holds */
    accel_device* next_sharer;
    accel_i_a32 exporting, imports;
};
/* A view (root != NULL) aliases [offset, offset + size) of its root, holds one reference on it, and
   is never seen by a backend's buffer_create/buffer_free/buffer_io; exec bindings may be views
   (resolve them with accel_i_buffer_root + offset), copy/fill/update commands never are (the core
   records the root and the offset within it). */
struct accel_buffer  {
    accel_i_object obj; size_t size; accel_memory memory; void* mapped;
    accel_buffer* root; size_t offset;   /* views: the root buffer and the offset in it; roots: NULL, 0 */
    bool read_only;                       /* wraps const memory: nothing accel runs writes it */
    /* queue-ordered memory (see "core: queue-ordered memory"): an accel_queue_alloc handle (qmem flags),
       lent a pooled root between its points (qroot); pool_next, pool_owner: a root while it lies in the
       pool (a kept handle: pool_next) */
    unsigned char qmem;
    accel_buffer* pool_next;
    accel_queue* pool_owner;
    uint64_t qfail;                       /* memory at its point: why it has none (a failed value), or 0 */
    /* ... 1: it has memory now (between its points; release-stored); 2 (GPU walks): its free point gave
       it back, the native fields stay for commands built later but ordered before that point */
    accel_i_a32 qhas;
    accel_buffer* qroot;                  /* ... a root of the core's pool lends it (a reference) */
    /* ... the queue of its alloc (compared, never used), and whether another queue (or a command list)
       recorded a use or the free, or its queue a wait between its points (accel_i_qmem_shared) */
    accel_queue* qowner;
    accel_i_a32 qshared;
    uint64_t qwaits;                      /* ... qowner's qmem_waits when the alloc was recorded */
};
/* accel_buffer.qmem: an accel_queue_alloc handle that is a root of the core's whose memory is taken at
   its point (see "core: queue-ordered memory at its point"); its `mapped` is NULL until then */
#define ACCEL_I_QMEM_LATE 4u
/* The buffer that owns the memory: buf itself, or a view's root. */
static accel_buffer* accel_i_buffer_root(accel_buffer* buf) { return buf->root ? buf->root : buf; }
struct accel_program { accel_i_object obj; uint32_t buffer_count, constant_count; };
/* promised: debug only, see accel_i_debug_promise. wanted / recorded: the highest value a wait / signal
   command recorded on another device's queue asks for / sets; foreign: how many of those signal
   commands are held by batches now (see accel_i_next_orphan) */
#define ACCEL_I_SIGNAL_FIELDS \
    accel_i_object obj; \
    accel_i_a64 promised, wanted, recorded, foreign; \
    accel_signal* fail_next;       /* core: failure after hand-off (under the device's dwait_lock) */ \
    accel_signal* foreign_next;    /* ... on another device's fail list (while foreign_held is 1) */ \
    accel_i_a32 foreign_held; \
    uint64_t fail_before;          /* its value just before that failure */ \
    uint64_t trace_id;             /* tracing: "#n" names an unlabelled signal (64-bit: no tail padding) */
/* for the padding below */
typedef struct accel_i_signal_shape { ACCEL_I_SIGNAL_FIELDS } accel_i_signal_shape;
/* Tracing's marks are the last 56 bytes, from a multiple of 64: a host signal (CPU, CUDA; allocated
   64-aligned) has its word right after them, in the same cache line, which each raise moves to the
   raising core anyway; on their own line they cost a traced round trip two more line transfers. */
struct accel_signal {
    ACCEL_I_SIGNAL_FIELDS
    char mark_align[64 - sizeof(accel_i_signal_shape) % 64];
    accel_i_a32 mark_seq;          /* tracing: even when stable; a writer makes it odd (CAS) while it
                                      writes marks[seq / 2 % ACCEL_I_TRACE_MARKS], then even again */
    uint32_t mark_pad;
    accel_i_trace_mark marks[ACCEL_I_TRACE_MARKS];   /* tracing: the last values reached */
};
struct accel_commands {            /* refs: the caller's handle + one per recorded replay */
    accel_i_object obj;
    accel_i_batch* list;           /* the commands, holding references to their objects; never changes */
    bool has_exec;                 /* cannot replay on a COPY queue */
    bool has_indirect;             /* holds an indirect exec (Vulkan: its barriers cover the counts' reads) */
    bool has_copy;                 /* holds a copy (accel_i_replays_live looks at those of a native list) */
    void* native;                  /* the backend's replay form (commands_build); NULL in the generic form */
};
struct accel_queue {
    accel_i_object obj;
    accel_queue_type type;
    accel_i_batch* rec;            /* batch being recorded (NULL until the first command) */
    accel_result rec_error;        /* first recording error since the last submit */
    bool recording;                /* record_begin .. record_end: rec is the command list */
    /* core: waits recorded on q so far (the recording thread's; a list holds none): accel_queue_free
       compares it with the handle's qwaits */
    uint64_t qmem_waits;
    accel_i_a32 dlisted;           /* GPU walk: its batches in a dwaits list (core: failure after hand-off) */
    bool replay_stages;            /* accel_queue_replay's checks: a patch makes a copy of a native list
                                      staged (the replay takes the generic form) */
    bool replay_sorted;            /* accel_queue_replay: its patches come sorted by command */
    accel_i_a32 free_lock;
    accel_i_batch* free_batches;   /* recycled batches, capacity kept */
    uint32_t free_count;
    /* core: queue holds: batches accepted so far (the recording thread's), the highest seq of a batch
       recycled, the objects held (under the device's object lock) and those whose handle went while a
       batch used them (under free_lock too) */
    uint64_t submits, completed;
    accel_i_object *held, *unheld;
    /* core: recording: the (normalised) params of the last exec that passed accel_i_exec_params_ok on q,
       with work (known_params: false until then); see accel_i_params_known */
    accel_exec_params known;
    bool known_params;
    uint32_t trace_track;          /* tracing: the queue's track in the trace */
    struct accel_i_trace_buf* trace_buf;   /* tracing: where the queue's events go (NULL: the host's) */
    /* debug devices: the last signal commands recorded since the last submit, for the forgotten-submit
       report of other threads' waits (which must not read `rec`); the signals are only compared */
    accel_i_a32 unsubmitted_lock;
    uint32_t unsubmitted_n;
    accel_signal* unsubmitted_s[4];
    uint64_t unsubmitted_v[4];
    accel_i_walker* walker;        /* GPU backends: the core's batch walk and worker thread */
    /* GPU backends: the pinned slots of its staged copies between two other devices, kept for the next
       (core: several devices, the staged pipeline); each holds a reference */
    accel_buffer* stage[2];
    /* queue memory points alone recorded before record_begin: the batch again at record_end (core:
       queue-ordered memory at its point) */
    accel_i_batch* rec_aside;
};

/* ==== core: backend kit ==== */
/* What a backend header (accel_cuda.h, accel_vulkan.h) may use of the core; nothing else of accel.h's
   implementation, and no accel_i_cpu_*.
   - The platform layer: accel_i_mutex_*, accel_i_cond_*, accel_i_thread_*, accel_i_now_ns,
     accel_i_deadline, accel_i_yield, accel_i_spin_lock/unlock, accel_i_event_* (core: events), and the
     atomics accel_i_a32 / accel_i_a64.
   - The types of "core: backend interface": accel_i_object (a backend object's first member),
     accel_i_batch, accel_i_cmd, accel_i_patch, accel_i_segment, accel_i_walk_ops, and
     accel_i_host_signal (CUDA's signals embed one).
   - Fields a backend reads: an object's `device`; a device's `backend`, `allocator`, `logger`, `info`
     (which the backend fills at create), `trace` (NULL: no trace), `generation` (device generations);
     a batch's `cmds`, `count`, `arena` and `pc`; a command list's `list`, `has_exec` and
     `has_indirect`; a buffer's size, memory, mapped, root and offset; a queue's `type`. Fields a
     backend writes: a batch's `pc` (segment_submit: the first command it did not take), a command
     list's `native` (commands_build / commands_free) and a device's `no_recover` (at create: a device
     accel did not make, which it cannot make anew). Everything else is the core's.
   - The functions below. */
#if defined(__MINGW32__)
#  define ACCEL_I_PRINTF(f, a) __attribute__((format(gnu_printf, f, a), unused))
#elif defined(__GNUC__)
#  define ACCEL_I_PRINTF(f, a) __attribute__((format(printf, f, a), unused))
#else
#  define ACCEL_I_PRINTF(f, a)
#endif
#if defined(__GNUC__)
#  define ACCEL_I_KIT static __attribute__((unused))
#else
#  define ACCEL_I_KIT static
#endif
/* A backoff's next pause: twice the last, up to max (a destroy's hang warnings, the CPU executor's looks,
   the CUDA workers' backstop polls). */
ACCEL_I_KIT uint64_t accel_i_backoff(uint64_t pause, uint64_t max) {
    return pause < max / 2u ? 2u * pause : max;
}
/* How long a poller pauses before it polls again, after waiting since `since`: 1/32 of the time waited
   so far (so noticing late adds at most ~3% to any wait), within [min, max]. A pause that doubles each
   time may notice late by as long as it has already waited (the GPU backends' waits and workers). */
ACCEL_I_KIT uint64_t accel_i_poll_slice(uint64_t since, uint64_t min, uint64_t max) {
    uint64_t s = (accel_i_now_ns() - since) / 32u;
    return s < min ? min : s > max ? max : s;
}
#if !defined(ACCEL_NO_THREADS)
/* events: a wait with a second condition (used by backends only) */
/* Waits until ev's word reaches v, *other moves off `seen`, or ns pass: spin first (yielding: a raise in
   the next few microseconds is caught without a sleep), then one nap that ends when the ns do (not ns
   after the spin). `other` is a backend's "something to do instead" counter (a GPU operation now promises
   the value, so the caller should watch it there), whose writer calls accel_i_event_notify(ev) after
   moving it. A backend's wait calls this once per slice; `since` (accel_i_now_ns) is when that wait
   began, and only its first ACCEL_CPU_SPIN_NS spin: a spin in every slice would burn a CPU share for as
   long as the wait lasts. */
ACCEL_I_KIT void accel_i_event_wait_or(accel_i_event* ev, uint64_t v, const accel_i_a64* other, uint64_t seen,
                                       uint64_t ns, uint64_t since) {
    uint64_t deadline = accel_i_deadline(ns), spin_end = since + accel_i_spin_ns(), now = accel_i_now_ns();
    bool counted = false;
    if (now < spin_end) {
        if (accel_i_event_spin(ev, v, deadline < spin_end ? deadline : spin_end, NULL, other, seen)) return;
        now = accel_i_now_ns();
    }
    if (now >= deadline) return;
    accel_i_mutex_lock(&ev->lock);
    accel_i_event_count(ev, &counted);
    if (atomic_load(&ev->word) < v && atomic_load(other) == seen)
        accel_i_event_nap(ev, deadline == ACCEL_I_FOREVER ? ACCEL_I_FOREVER : deadline - now, &counted);
    accel_i_event_uncount(ev, &counted);
    accel_i_mutex_unlock(&ev->lock);
}
#endif
/* threads: a small number per host thread (a trace's host track, a slot of an accel_i_inside) */
ACCEL_I_KIT uint32_t accel_i_host_thread(void);
/* threads: the host threads inside a section that a recover waits out (core: host threads) */
ACCEL_I_KIT bool accel_i_inside_enter(accel_i_inside* in, const accel_i_a64* bar, uint64_t mine);
ACCEL_I_KIT void accel_i_inside_leave(accel_i_inside* in);
ACCEL_I_KIT void accel_i_inside_drain(accel_i_inside* in);
/* objects: the base part of a backend's object, and its release */
ACCEL_I_KIT void accel_i_device_init(accel_device* dev, const accel_backend* b, const accel_device_desc* d);
ACCEL_I_KIT void accel_i_object_init(accel_i_object* o, accel_device* dev, accel_i_kind kind,
                                     const char* label);
ACCEL_I_KIT void accel_i_object_undo(accel_i_object* o);    /* a create that fails after object_init */
/* a device made (by fn) with debug = true in an ACCEL_NO_DEBUG build: one warning, the flag no effect */
ACCEL_I_KIT void accel_i_debug_off(accel_device* dev, const char* fn);
ACCEL_I_KIT void accel_i_objects_hold(accel_device* dev);   /* device_recover: the object list, whole */
/* a recover's parts (core: device generations), for a backend whose native device several accel
   devices share (recover_whole): stale closes creates (after a recover of dev under way) and moves
   the generation on; fail then fails the signals of the old generation and settles its walks; end
   (accel_i_recover_end) follows the backend's remake */
ACCEL_I_KIT void accel_i_recover_stale(accel_device* dev);
ACCEL_I_KIT void accel_i_recover_fail(accel_device* dev);
/* around a call that makes native objects outside a create (Vulkan's pipelines at submit): false, and
   logged as fn's, while a recover remakes the native device (core: device generations) */
ACCEL_I_KIT bool accel_i_creates_enter(accel_device* dev, const char* fn);
ACCEL_I_KIT void accel_i_creates_leave(accel_device* dev);
ACCEL_I_KIT accel_result accel_i_recover_end(accel_device* dev, accel_result r);
/* several devices: a recover's hold on the counts of its stale batches' peer copies, and its end */
ACCEL_I_KIT void accel_i_peer_hold(accel_device* dev);
ACCEL_I_KIT void accel_i_peer_release_held(accel_device* dev);
ACCEL_I_KIT bool accel_i_try_retain(accel_i_object* o);     /* a reference to a listed object (list held) */
/* a reference to an object (a backend's callback that outlives the call that made it) */
ACCEL_I_KIT void accel_i_retain(void* obj);
ACCEL_I_KIT void accel_i_release(void* obj);                /* drops one (frees the object at 0) */
/* the queue's recording state */
ACCEL_I_KIT void accel_i_queue_init(accel_queue* q, accel_device* dev, accel_queue_type type);
ACCEL_I_KIT void accel_i_queue_fini(accel_queue* q);        /* drops unsubmitted batches */
/* memory and logging: every host allocation through the device's allocator; errors logged and returned */
ACCEL_I_KIT void* accel_i_dev_alloc(accel_device* dev, size_t size);
ACCEL_I_KIT void  accel_i_dev_free(accel_device* dev, void* p, size_t size);
ACCEL_I_KIT bool  accel_i_grow(accel_device* dev, void** p, size_t* cap_bytes, size_t need_bytes);
/* before a device exists */
ACCEL_I_KIT void* accel_i_alloc(const accel_allocator* a, size_t size, size_t align);
ACCEL_I_KIT void  accel_i_free(const accel_allocator* a, void* ptr, size_t size);
/* malloc-backed defaults */
ACCEL_I_KIT void* accel_i_default_alloc(size_t size, size_t align, void* user);
ACCEL_I_KIT void  accel_i_default_free(void* ptr, size_t size, void* user);
ACCEL_I_KIT accel_result accel_i_desc_allocator(accel_device_desc* d, const char* fn);    /* device create */
ACCEL_I_KIT void  accel_i_copy_label(char* dst, size_t cap, const char* src);   /* bounded, NUL-terminated */
ACCEL_I_KIT void  accel_i_log_to(const accel_logger* lg, accel_log_level level,
                                 const char* fmt, ...) ACCEL_I_PRINTF(3, 4);
ACCEL_I_KIT void  accel_i_log(accel_device* dev, accel_log_level level,
                              const char* fmt, ...) ACCEL_I_PRINTF(3, 4);
ACCEL_I_KIT accel_result accel_i_fail(accel_device* dev, accel_result r,
                                      const char* fmt, ...) ACCEL_I_PRINTF(3, 4);
ACCEL_I_KIT bool accel_i_lost(accel_device* dev);                     /* the sticky device-lost flag */
/* an object created before its device's last recover (core: device generations) */
ACCEL_I_KIT bool accel_i_stale(const accel_i_object* o);
/* for log lines: the label, quoted, or empty */
ACCEL_I_KIT const char* accel_i_label(const accel_i_object* o);
/* signals: values, failure encoding, raising (host word, then device side, then failure flow) */
ACCEL_I_KIT bool     accel_i_failed(uint64_t v);
ACCEL_I_KIT uint64_t accel_i_failed_value(accel_result reason);
ACCEL_I_KIT uint64_t accel_i_raise(accel_signal* s, uint64_t v);      /* every raise of a signal */
ACCEL_I_KIT void     accel_i_fail_rest(accel_i_batch* b, uint32_t from, uint64_t failed_value);
ACCEL_I_KIT accel_result accel_i_wait_check(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                            uint32_t* first);
ACCEL_I_KIT accel_result accel_i_wait_mixed(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                            uint64_t timeout_ns, uint32_t* first);
/* host signals: a 64-bit host word with accel.h's event machinery (the CPU backend's signals; CUDA's,
   with `size` bytes of its own around them). The make leaves the signal off the device's object list:
   the backend sets its own part, then lists it (accel_i_host_signal_list), so that whoever walks the
   list (a device loss, a queue's destroy) sees only whole signals; one that fails before it is listed
   goes with accel_i_host_signal_unmake. */
ACCEL_I_KIT accel_result accel_i_host_signal_make(accel_device* dev, uint64_t initial, size_t size,
                                                  accel_signal** out);
ACCEL_I_KIT void     accel_i_host_signal_list(accel_device* dev, accel_signal* s);
ACCEL_I_KIT void     accel_i_host_signal_unmake(accel_device* dev, accel_signal* s, size_t size);
ACCEL_I_KIT void     accel_i_host_signal_destroy(accel_signal* s, size_t size);
ACCEL_I_KIT uint64_t accel_i_host_signal_value(const accel_signal* s);
ACCEL_I_KIT uint64_t accel_i_host_signal_raise(accel_signal* s, uint64_t v);
/* device words of CPU signals (core: device words, accel_i_dword): a backend attaches one, under its
   lock, and stores into it with accel_i_dword_store; the core's raises keep it up to date */
typedef struct accel_i_dword accel_i_dword;
ACCEL_I_KIT accel_i_dword* accel_i_dword_of(accel_signal* s);
ACCEL_I_KIT void     accel_i_dword_store(accel_i_dword* d, uint64_t v);
/* devices: a reference that keeps a device (its backend state) until released (the handle's aside) */
ACCEL_I_KIT void     accel_i_device_retain(accel_device* dev);
ACCEL_I_KIT void     accel_i_device_release(accel_device* dev);
ACCEL_I_KIT accel_result accel_i_host_signal_wait(accel_signal* const* s, const uint64_t* v, uint32_t n,
                                                  bool all, uint64_t timeout_ns, uint32_t* first);
/* buffers: accel_i_buffer_root(buf), a view's root (defined with struct accel_buffer above; views are
   resolved to root + offset where a backend binds them) */
/* queue-ordered memory at its point (a backend that sets accel_device.qmem_ops; see "core: queue-ordered
   memory at its point"): where its walk builds command c of a batch flagged qmem, a point is the
   backend's to run (ACCEL_I_CMD_QMEM_POINT: its memory of its own, or a root of the core's pool lent
   and given back below; it publishes the handle's qhas after its native fields, and reports an alloc
   point without memory with accel_i_qmem_point_failed; a free point of a handle accel_i_qmem_shared
   keeps the memory, which the handle's last reference gives back: give_back does nothing then); any
   other command is checked first with accel_i_qmem_use_failed (0, or the failed value that drops the
   rest of the batch) */
ACCEL_I_KIT bool accel_i_qmem_has(const accel_buffer* r);
ACCEL_I_KIT bool accel_i_qmem_shared(const accel_buffer* r);
ACCEL_I_KIT uint64_t accel_i_qmem_use_failed(accel_queue* q, const accel_i_batch* b, const accel_i_cmd* c);
ACCEL_I_KIT uint64_t accel_i_qmem_point_failed(accel_queue* q, accel_buffer* r, accel_result why);
ACCEL_I_KIT accel_buffer* accel_i_qmem_lend(accel_queue* q, accel_buffer* r, uint64_t* failed);
ACCEL_I_KIT void accel_i_qmem_give_back(accel_queue* q, accel_i_cmd* c);
/* batches: the walk (core: batch walk) and completion */
ACCEL_I_KIT void accel_i_batch_complete(accel_queue* q, accel_i_batch* b);   /* the device finished b */
ACCEL_I_KIT void accel_i_batch_recycle(accel_queue* q, accel_i_batch* b);    /* a batch refused at submit */
/* trace: a command's span on its queue's track (device times on the host clock); returns when the next
   command may start */
ACCEL_I_KIT uint64_t accel_i_trace_cmd(accel_queue* q, const accel_i_cmd* c, uint64_t t0, uint64_t t1);
/* execs: the work groups along dimension d of a recorded exec's params */
ACCEL_I_KIT uint64_t accel_i_groups_along(const accel_exec_params* p, int d);
/* indirect execs (ACCEL_I_CMD_INDIRECT): the counts buffer as recorded (a view or a root: resolve it like
   a binding) and the offset in it; the params for the counts read when it runs (the local size as
   recorded), false when it runs nothing (a count of 0; over the limits: logged on a debug device) */
ACCEL_I_KIT accel_buffer* accel_i_exec_counts(const accel_i_batch* b, const accel_i_cmd* c, size_t* offset);
ACCEL_I_KIT bool accel_i_indirect_params(accel_queue* q, const accel_program* p, const uint32_t counts[3],
                                         accel_exec_params* params);
/* imported memory of other devices (core: imported memory of other devices): a device that exports or
   imports joins the sharers at create and leaves at destroy; an exporter evicts the imports of memory
   it frees; an importer takes an import of another device's buffer, and drops its own at destroy and
   recover */
typedef struct accel_i_export accel_i_export;
typedef struct accel_i_import accel_i_import;
ACCEL_I_KIT void accel_i_sharers_update(accel_device* dev, bool join);
ACCEL_I_KIT bool accel_i_exporting(const accel_device* dev);
ACCEL_I_KIT void accel_i_imports_evict(const void* key);
ACCEL_I_KIT void accel_i_imports_drop_into(accel_device* to);
ACCEL_I_KIT accel_result accel_i_import_get(accel_device* to, const accel_buffer* root, accel_i_import** out,
                                            uint64_t* at);
ACCEL_I_KIT bool accel_i_exports_to(const accel_device* to, const accel_device* from);   /* another driver */
ACCEL_I_KIT bool accel_i_imports_from(accel_device* to, accel_device* from, const accel_buffer* buf);
ACCEL_I_KIT bool accel_i_signal_shared(const accel_device* to, const accel_device* from);
ACCEL_I_KIT accel_i_import* accel_i_signal_import(accel_device* to, accel_signal* s, uint64_t v);
ACCEL_I_KIT accel_i_import* accel_i_import_of(const void* key, const accel_device* to);
ACCEL_I_KIT bool accel_i_relays_to(const accel_device* to, const accel_device* from);
ACCEL_I_KIT accel_i_import* accel_i_relay_import(accel_device* to, accel_signal* r);
ACCEL_I_KIT void accel_i_relays_end(accel_device* from);
ACCEL_I_KIT void accel_i_imports_hold(bool take);
ACCEL_I_KIT accel_i_import* accel_i_import_find(const void* key, const accel_device* to);   /* held */
#if !defined(ACCEL_NO_THREADS)
ACCEL_I_KIT bool accel_i_cmd_is_host_step(const accel_i_cmd* c);          /* ends a segment (host_call) */
ACCEL_I_KIT accel_i_segment accel_i_segment_at(const accel_i_batch* b, uint32_t at);   /* the segment rule */
ACCEL_I_KIT accel_result accel_i_walker_start(accel_queue* q);               /* queue create: its worker */
ACCEL_I_KIT void accel_i_walker_stop(accel_queue* q);                     /* queue destroy: finishes, stops */
ACCEL_I_KIT accel_result accel_i_walker_submit(accel_queue* q, accel_i_batch* b);        /* queue_submit */
ACCEL_I_KIT accel_result accel_i_walker_wait_idle(accel_queue* q, uint64_t timeout_ns); /* queue_wait_idle */
ACCEL_I_KIT size_t accel_i_walker_describe(accel_queue* q, char* out, size_t cap);       /* queue_describe */
ACCEL_I_KIT void accel_i_walker_poke(accel_queue* q);       /* new in-flight work for queue_poll to watch */
#endif
/* kit: a host call's or native step's fn runs between these (core: calls on this thread) */
typedef struct accel_i_call { accel_queue* q; struct accel_i_call* up; } accel_i_call;
ACCEL_I_KIT void accel_i_call_enter(accel_i_call* c, accel_queue* q);
ACCEL_I_KIT void accel_i_call_leave(const accel_i_call* c);

/* ==== core: host threads ==== */
/* kit: a small number per host thread (1, 2, ...; 1 in no-threads builds), process-wide as threads are:
   a thread's host track in a trace, its slot in a sharded counter (the one piece of global state). */
#if defined(ACCEL_NO_THREADS)
static uint32_t accel_i_host_thread(void) { return 1; }
#else
static uint32_t accel_i_host_thread(void) {
    static accel_i_a32 next;
    static ACCEL_I_THREAD_LOCAL uint32_t mine;
    if (!mine) mine = atomic_fetch_add(&next, 1u) + 1u;
    return mine;
}
#endif
/* kit: an accel_i_inside counts the host threads inside a section that a recover must wait out before it
   takes the native state away (CUDA's reads of pinned words and buffer io, Vulkan's native calls: every
   signal value, wait and raise). enter counts the thread in, then goes on only while *bar is at most
   `mine` (the caller's object is of the native device's generation), else counts it out: false. The
   recover raises *bar, then drains: waits until no thread is inside. seq_cst on both sides (the count,
   then the bar; the bar, then the count): one sees the other. A slot per cache line, by host thread, so
   that threads on several cores do not contend on one line. (The creates of core: device generations
   follow the same protocol on one counter: creates are rare, and the CPU-only builds stay smaller.) */
ACCEL_I_KIT accel_i_a32* accel_i_inside_mine(accel_i_inside* in) {
    return &in->slot[accel_i_host_thread() % ACCEL_I_INSIDE_SLOTS].n;
}
static bool accel_i_inside_enter(accel_i_inside* in, const accel_i_a64* bar, uint64_t mine) {
    accel_i_a32* n = accel_i_inside_mine(in);
    atomic_fetch_add(n, 1u);
    if (atomic_load(bar) <= mine) return true;
    atomic_fetch_sub(n, 1u);
    return false;
}
static void accel_i_inside_leave(accel_i_inside* in) { atomic_fetch_sub(accel_i_inside_mine(in), 1u); }
static void accel_i_inside_drain(accel_i_inside* in) {
    for (uint32_t i = 0; i < ACCEL_I_INSIDE_SLOTS; i++)
        while (atomic_load(&in->slot[i].n) != 0) accel_i_yield();
}

/* ==== core: allocation and logging ==== */
static void* accel_i_default_alloc(size_t size, size_t align, void* user) {
    unsigned char* raw;
    uintptr_t p;
    (void)user;
    if (size > SIZE_MAX - align - sizeof(void*)) return NULL;
    raw = (unsigned char*)malloc(size + align + sizeof(void*));
    if (!raw) return NULL;
    p = ((uintptr_t)(raw + sizeof(void*)) + align - 1) & ~(uintptr_t)(align - 1);
    memcpy((void*)(p - sizeof(void*)), &raw, sizeof raw);
    return (void*)p;
}
static void accel_i_default_free(void* ptr, size_t size, void* user) {
    void* raw;
    (void)size; (void)user;
    if (!ptr) return;
    memcpy(&raw, (unsigned char*)ptr - sizeof(void*), sizeof raw);
    free(raw);
}
static void* accel_i_alloc(const accel_allocator* a, size_t size, size_t align) {
    if (align < sizeof(void*)) align = sizeof(void*);
    return a->alloc_fn(size, align, a->user);
}
static void accel_i_free(const accel_allocator* a, void* ptr, size_t size) {
    if (ptr) a->free_fn(ptr, size, a->user);
}

static void accel_i_default_log(accel_log_level level, const char* message, void* user) {
    (void)user;
    if (level <= ACCEL_LOG_WARN)
        fprintf(stderr, "accel: %s: %s\n", level == ACCEL_LOG_ERROR ? "error" : "warning", message);
}
/* mingw-w64: msvcrt's vsnprintf knows no %zu (and returns -1 when it truncates); use mingw's C99 one. */
#if defined(__MINGW32__)
#  define ACCEL_I_VSNPRINTF __mingw_vsnprintf
#else
#  define ACCEL_I_VSNPRINTF vsnprintf
#endif
/* out (cap bytes) after a printf of n characters into it: a text cut at cap ends at a character's start,
   not inside a UTF-8 sequence (labels are the user's text), and is terminated (a C library that returns
   -1 may leave it so). */
static void accel_i_cut(char* out, size_t cap, int n) {
    size_t end, lead;
    if (cap == 0 || (n >= 0 && (size_t)n < cap)) return;
    end = lead = cap - 1;
    out[end] = '\0';
    while (lead > 0 && ((unsigned char)out[lead - 1] & 0xC0u) == 0x80u) lead--;   /* the last one's start */
    if (lead > 0 && (unsigned char)out[lead - 1] >= 0xC0u) {   /* a lead byte: its length, from its bits */
        unsigned char c = (unsigned char)out[lead - 1];
        size_t len = c >= 0xF0u ? 4u : c >= 0xE0u ? 3u : 2u;
        if (lead - 1 + len > end) out[lead - 1] = '\0';
    }
}
/* A line names objects by their labels, which may be long: the facts around a label fit in a line
   (and in ACCEL_I_WHY, the parts built before it) while the label is under about 750 bytes. */
#define ACCEL_I_LINE 2048
#define ACCEL_I_WHY 1024
static void accel_i_vlog(const accel_logger* lg, accel_log_level level, const char* fmt, va_list ap) {
    char msg[ACCEL_I_LINE];
    accel_i_cut(msg, sizeof msg, ACCEL_I_VSNPRINTF(msg, sizeof msg, fmt, ap));
    if (lg && lg->log_fn) lg->log_fn(level, msg, lg->user);
    else accel_i_default_log(level, msg, NULL);
}
static void accel_i_log_to(const accel_logger* lg, accel_log_level level,
                           const char* fmt, ...) ACCEL_I_PRINTF(3, 4);
static void accel_i_log_to(const accel_logger* lg, accel_log_level level, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    accel_i_vlog(lg, level, fmt, ap);
    va_end(ap);
}
static void accel_i_log(accel_device* dev, accel_log_level level, const char* fmt, ...) ACCEL_I_PRINTF(3, 4);
static void accel_i_log(accel_device* dev, accel_log_level level, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    accel_i_vlog(&dev->logger, level, fmt, ap);
    va_end(ap);
}
/* Logs an error and returns it: `return accel_i_fail(dev, ACCEL_ERROR_..., "...", ...);` */
static accel_result accel_i_fail(accel_device* dev, accel_result r,
                                 const char* fmt, ...) ACCEL_I_PRINTF(3, 4);
static accel_result accel_i_fail(accel_device* dev, accel_result r, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    accel_i_vlog(&dev->logger, ACCEL_LOG_ERROR, fmt, ap);
    va_end(ap);
    return r;
}

/* Logs "fn: what" as an error (to stderr when there is no device) and returns INVALID_ARGUMENT: every
   invalid argument is named in the log, also the NULL handles that leave no device to log to. */
static accel_result accel_i_invalid(accel_device* dev, const char* fn, const char* what) {
    accel_i_log_to(dev ? &dev->logger : NULL, ACCEL_LOG_ERROR, "%s: %s", fn, what);
    return ACCEL_ERROR_INVALID_ARGUMENT;
}

static void accel_i_copy_label(char* dst, size_t cap, const char* src) {   /* cut at a character's start */
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) for (n = cap - 1; n > 0 && ((unsigned char)src[n] & 0xC0u) == 0x80u; n--) {}
    if (n) memcpy(dst, src, n);
    dst[n] = '\0';
}
/* An object's label: the one set by accel_*_set_label, else the desc's; "" when it has none. */
static const char* accel_i_label(const accel_i_object* o) { return o->label_set ? o->label_set : o->label; }
/* printf arguments for "%s%s%s": " 'label'", or nothing for an object without a label (never "''"). */
#define ACCEL_I_LABEL(o) (accel_i_label(o)[0] ? " '" : ""), accel_i_label(o), (accel_i_label(o)[0] ? "'" : "")
/* A device for "%p%s%s%s": its address, then its label in quotes where it has one. */
#define ACCEL_I_DEVICE_LABEL(d) \
    (void*)(d), ((d)->label[0] ? " '" : ""), (d)->label, ((d)->label[0] ? "'" : "")

/* ==== core: optional parts: entry points ==== */
/* The trace recorder ("trace: the recorder") and the debug hang reports ("debug: hang reports") stand
   at the end of the implementation; the main flow reaches them only through the calls below, each
   behind `ACCEL_I_TRACING(dev)` or `ACCEL_I_DEBUGGING(dev)`. ACCEL_NO_TRACE / ACCEL_NO_DEBUG compile
   them out: the tests become constant false and the calls empty. */
#if !defined(ACCEL_NO_TRACE)
#  define ACCEL_I_TRACING(dev) ((dev)->trace != NULL)
static accel_result accel_i_trace_open(accel_device* dev, const accel_device_desc* d);   /* device create */
static void accel_i_trace_close(accel_device* dev);                                    /* device destroy */
static void accel_i_trace_queue(accel_queue* q);        /* queue create: its track (and buffer) */
static void accel_i_trace_queue_name(accel_queue* q);   /* its label changed */
static void accel_i_trace_queue_fini(accel_queue* q);
static void accel_i_trace_signal(accel_signal* s);      /* signal create: its number */
static void accel_i_trace_host_span(accel_device* dev, const char* what, const char* label,
                                    uint64_t t0, uint64_t t1, const char* key, uint64_t value);
static void accel_i_trace_host_set(accel_signal* s, uint64_t value);   /* accel_signal_set, pre-raise */
static void accel_i_trace_host_wait(accel_signal* const* s, const uint64_t* v, uint32_t n, uint64_t t0,
                                    bool released);
static uint64_t accel_i_trace_cmd_at(accel_queue* q, const accel_i_cmd* c, uint64_t t0, uint64_t t1,
                                     bool mark);
static void accel_i_trace_mark_set(accel_device* dev, accel_signal* s, uint64_t v, uint64_t t,
                                   uint32_t track);
#  if !defined(ACCEL_NO_THREADS)
static void accel_i_trace_waits_failed(accel_queue* q, const accel_i_batch* b, const accel_i_segment* sg);
#  endif
#else
#  define ACCEL_I_TRACING(dev) ((void)(dev), false)
static accel_result accel_i_trace_open(accel_device* dev, const accel_device_desc* d) {
    const char* path = d->trace_path ? d->trace_path : getenv("ACCEL_TRACE");
    if (path && path[0])
        accel_i_log(dev, ACCEL_LOG_WARN,
                    "accel_device_create: built with ACCEL_NO_TRACE; no trace is written to '%s'", path);
    return ACCEL_OK;
}
static void accel_i_trace_close(accel_device* dev) { (void)dev; }
static void accel_i_trace_queue(accel_queue* q) { (void)q; }
static void accel_i_trace_queue_name(accel_queue* q) { (void)q; }
static void accel_i_trace_queue_fini(accel_queue* q) { (void)q; }
static void accel_i_trace_signal(accel_signal* s) { (void)s; }
static void accel_i_trace_host_span(accel_device* dev, const char* what, const char* label,
                                    uint64_t t0, uint64_t t1, const char* key, uint64_t value) {
    (void)dev; (void)what; (void)label; (void)t0; (void)t1; (void)key; (void)value;
}
static void accel_i_trace_host_set(accel_signal* s, uint64_t value) { (void)s; (void)value; }
static void accel_i_trace_host_wait(accel_signal* const* s, const uint64_t* v, uint32_t n, uint64_t t0,
                                    bool released) {
    (void)s; (void)v; (void)n; (void)t0; (void)released;
}
static uint64_t accel_i_trace_cmd_at(accel_queue* q, const accel_i_cmd* c, uint64_t t0, uint64_t t1,
                                     bool mark) {
    (void)q; (void)c; (void)t0; (void)mark;
    return t1;
}
static uint64_t accel_i_trace_cmd(accel_queue* q, const accel_i_cmd* c, uint64_t t0, uint64_t t1) {
    (void)q; (void)c; (void)t0;
    return t1;
}
static void accel_i_trace_mark_set(accel_device* dev, accel_signal* s, uint64_t v, uint64_t t,
                                   uint32_t track) {
    (void)dev; (void)s; (void)v; (void)t; (void)track;
}
#  if !defined(ACCEL_NO_THREADS)
static void accel_i_trace_waits_failed(accel_queue* q, const accel_i_batch* b, const accel_i_segment* sg) {
    (void)q; (void)b; (void)sg;
}
#  endif
#endif
#if !defined(ACCEL_NO_DEBUG)
#  define ACCEL_I_DEBUGGING(dev) ((dev)->debug)
static void accel_i_debug_promise(const accel_i_batch* b);                          /* submit */
static void accel_i_debug_recorded(accel_queue* q, accel_signal* s, uint64_t v);    /* a signal command */
static void accel_i_debug_unreachable(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                      const char* fn);
static void accel_i_debug_hang(accel_device* dev, const char* what, accel_signal* const* s, const uint64_t* v,
                               uint32_t n, uint64_t timeout_ns, accel_result r);
#else
#  define ACCEL_I_DEBUGGING(dev) ((void)(dev), false)
static void accel_i_debug_promise(const accel_i_batch* b) { (void)b; }
static void accel_i_debug_recorded(accel_queue* q, accel_signal* s, uint64_t v) { (void)q; (void)s; (void)v; }
static void accel_i_debug_unreachable(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                      const char* fn) {
    (void)s; (void)v; (void)n; (void)all; (void)fn;
}
static void accel_i_debug_hang(accel_device* dev, const char* what, accel_signal* const* s, const uint64_t* v,
                               uint32_t n, uint64_t timeout_ns, accel_result r) {
    (void)dev; (void)what; (void)s; (void)v; (void)n; (void)timeout_ns; (void)r;
}
#endif

/* ==== core: objects ==== */
#if defined(ACCEL_NO_DEBUG)
static void accel_i_debug_off(accel_device* dev, const char* fn) {
    if (dev->debug)
        accel_i_log(dev, ACCEL_LOG_WARN, "%s: built with ACCEL_NO_DEBUG; debug = true has no effect", fn);
}
#else
static void accel_i_debug_off(accel_device* dev, const char* fn) { (void)dev; (void)fn; }
#endif
static void accel_i_device_init(accel_device* dev, const accel_backend* b, const accel_device_desc* d) {
    memset((void*)dev, 0, sizeof *dev);
    dev->backend = b;
    dev->allocator = d->allocator;
    dev->logger = d->logger;
    dev->debug = d->debug;
    accel_i_copy_label(dev->label, sizeof dev->label, d->label);
    atomic_init(&dev->lost, 0u);
    atomic_init(&dev->generation, 1u);
    atomic_init(&dev->creates_in, 0u);
    atomic_init(&dev->creates_closed, 0u);
    atomic_init(&dev->freeing, 0u);
    atomic_init(&dev->destroyed, 0u);
    atomic_init(&dev->refs, 1u);
    atomic_init(&dev->objects_lock, 0u);
    atomic_init(&dev->dwait_lock, 0u);
    atomic_init(&dev->dwait_count, 0u);
    atomic_init(&dev->peer_copies, 0u);
    atomic_init(&dev->peer_lock, 0u);
    atomic_init(&dev->qmem, 0u);
    atomic_init(&dev->exporting, 0u);
    atomic_init(&dev->imports, 0u);
    atomic_init(&dev->gate_lock, 0u);
    atomic_init(&dev->gate_count, 0u);
}
static void* accel_i_dev_alloc(accel_device* dev, size_t size) {
    return accel_i_alloc(&dev->allocator, size, 16);
}
static void accel_i_dev_free(accel_device* dev, void* p, size_t size) {
    accel_i_free(&dev->allocator, p, size);
}

/* Lifetimes. An object holds one reference for the caller's handle, one for the queue that holds it
   (see "core: queue holds") and one per other recorded command that uses it, so work keeps alive what it
   uses, across devices too: a batch of device A may hold a signal or buffer of device B. A device holds
   one reference for its handle and one per live object, so B's backend state outlives
   accel_device_destroy(B) until the last object that A's work holds is released, by whichever thread
   releases it. */
static void accel_i_object_init(accel_i_object* o, accel_device* dev, accel_i_kind kind, const char* label) {
    o->device = dev;
    atomic_init(&o->refs, 1u);
    atomic_init(&o->handle, 1u);
    atomic_init(&o->holder, 0u);
    atomic_init(&o->held_until, 0u);
    o->hold_prev = o->hold_next = NULL;
    o->kind = kind;
    o->label_set = NULL;
    accel_i_copy_label(o->label, sizeof o->label, label);
    if (label && strlen(label) >= sizeof o->label) {   /* too long for the inline copy: keep it whole */
        size_t n = strlen(label) + 1;
        if ((o->label_set = (char*)accel_i_alloc(&dev->allocator, n, 1)) != NULL)
            memcpy(o->label_set, label, n);
    }
    atomic_fetch_add_explicit(&dev->refs, 1u, memory_order_relaxed);
    accel_i_spin_lock(&dev->objects_lock);
    /* under the lock a recover bumps it under: listed before the bump, or of the new generation */
    o->generation = atomic_load_explicit(&dev->generation, memory_order_relaxed);
    o->prev = NULL;
    o->next = dev->objects;
    if (dev->objects) dev->objects->prev = o;
    dev->objects = o;
    accel_i_spin_unlock(&dev->objects_lock);
}
static void accel_i_qmem_close(accel_device* dev, bool free_pool);
static void accel_i_device_retain(accel_device* dev) {
    atomic_fetch_add_explicit(&dev->refs, 1u, memory_order_relaxed);
}
static void accel_i_device_release(accel_device* dev) {
    if (atomic_fetch_sub_explicit(&dev->refs, 1u, memory_order_acq_rel) == 1u) {
        accel_i_qmem_close(dev, true);
        dev->backend->device_destroy(dev);
    }
}
/* Takes o off its device's list. A create that fails after accel_i_object_init undoes it with this and
   accel_i_device_release(dev). */
static void accel_i_object_unlist(accel_i_object* o) {
    accel_device* dev = o->device;
    accel_i_spin_lock(&dev->objects_lock);
    if (o->prev) o->prev->next = o->next; else dev->objects = o->next;
    if (o->next) o->next->prev = o->prev;
    accel_i_spin_unlock(&dev->objects_lock);
}
static void accel_i_commands_free(accel_commands* c);
static void accel_i_object_undo(accel_i_object* o) {
    accel_device* dev = o->device;
    accel_i_object_unlist(o);
    accel_i_device_release(dev);
}
static void accel_i_release(void* obj);
static bool accel_i_qmem_late_keep(accel_buffer* r);
static size_t accel_i_qmem_bytes(const accel_device* dev);
static void accel_i_view_free(accel_buffer* view) {
    accel_buffer* root = view->root;
    accel_i_dev_free(view->obj.device, view, sizeof *view);
    accel_i_release(root);
}
static void accel_i_object_free(accel_i_object* o) {
    accel_device* dev = o->device;
    const accel_backend* b = dev->backend;
    if (o->kind == ACCEL_I_BUFFER && ((accel_buffer*)o)->qmem && accel_i_qmem_late_keep((accel_buffer*)o))
        return;   /* a queue memory handle kept for reuse */
    atomic_fetch_add(&dev->freeing, 1u);   /* while listed: see accel_i_objects_hold */
    accel_i_object_unlist(o);
    if (o->label_set) accel_i_free(&dev->allocator, o->label_set, strlen(o->label_set) + 1);
    switch (o->kind) {
    case ACCEL_I_BUFFER:
        if (((accel_buffer*)o)->root) accel_i_view_free((accel_buffer*)o);
        else if (((accel_buffer*)o)->qmem & ACCEL_I_QMEM_LATE)
            accel_i_dev_free(dev, o, accel_i_qmem_bytes(dev));
        else b->buffer_free((accel_buffer*)o);
        break;
    case ACCEL_I_PROGRAM: b->program_free((accel_program*)o); break;
    case ACCEL_I_SIGNAL:  b->signal_free((accel_signal*)o); break;
    case ACCEL_I_QUEUE:   b->queue_destroy((accel_queue*)o); break;
    case ACCEL_I_COMMANDS: accel_i_commands_free((accel_commands*)o); break;
    }
    atomic_fetch_sub(&dev->freeing, 1u);
    accel_i_device_release(dev);
}
static void accel_i_retain(void* obj) {
    atomic_fetch_add_explicit(&((accel_i_object*)obj)->refs, 1u, memory_order_relaxed);
}
/* A reference to an object found on its device's list, unless its last one is being dropped. */
static bool accel_i_try_retain(accel_i_object* o) {
    uint32_t n = atomic_load_explicit(&o->refs, memory_order_relaxed);
    while (n != 0)
        if (atomic_compare_exchange_weak_explicit(&o->refs, &n, n + 1u, memory_order_relaxed,
                                                  memory_order_relaxed))
            return true;
    return false;
}
static void accel_i_release(void* obj) {
    accel_i_object* o = (accel_i_object*)obj;
    if (atomic_fetch_sub_explicit(&o->refs, 1u, memory_order_acq_rel) == 1u) accel_i_object_free(o);
}
/* kit (a backend's device_recover): returns with dev's object list locked and no object free under
   way, so that every object the backend finds on the list is whole and stays (a free that starts
   meanwhile waits to unlist it; accel_i_spin_unlock(&dev->objects_lock) lets it go). A free counts
   itself before it unlists its object, so one that is under way is waited for, never missed. */
static void accel_i_objects_hold(accel_device* dev) {
    for (;;) {
        accel_i_spin_lock(&dev->objects_lock);
        if (atomic_load(&dev->freeing) == 0) return;
        accel_i_spin_unlock(&dev->objects_lock);
        accel_i_yield();
    }
}
/* ---- core: queue holds ----
   A command's objects must live until its batch is done. Instead of a reference per command (two atomic
   counts, taken where it records and dropped where it completes, most often on two threads), a queue
   holds one reference to each object of its device it records with, for as long as the caller's handle
   lives: the first command claims the object (accel_i_hold_claim), and every command after it only
   stamps it with the seq that its batch will have (held_until). A batch that a backend accepts takes the
   queue's next seq (accel_i_batch_accepted); a recycled batch raises the queue's `completed` to its seq.
   Every backend recycles a batch only once the device is done with it and with all the queue's batches
   before it (a refused one has seq 0), so an object stamped at or below `completed` is no batch's any
   more. When the caller's handle goes (accel_i_handle_gone), the hold goes too: its reference is
   dropped at once if the object is no batch's any more, else when the batch of its stamp is recycled
   (the queue's unheld list). The queue drops what it still holds at its teardown (accel_i_queue_fini),
   once its work is done. An object the queue cannot hold (one of another device, used by another
   queue first, queue memory, or recorded into a command list) takes references per command as before.
   `holder` and the held list change only under the device's object lock, the unheld list only under
   the queue's free_lock as well. */
/* The caller's handle of o went: so does its queue's hold (see above). */
static void accel_i_unhold(accel_i_object* o) {
    accel_device* dev = o->device;
    accel_queue* q;
    bool now = false;
    accel_i_spin_lock(&dev->objects_lock);
    q = (accel_queue*)(uintptr_t)atomic_load_explicit(&o->holder, memory_order_relaxed);
    if (q) {   /* q lives: its teardown clears `holder` under this lock first */
        atomic_store_explicit(&o->holder, 0u, memory_order_relaxed);
        if (o->hold_prev) o->hold_prev->hold_next = o->hold_next; else q->held = o->hold_next;
        if (o->hold_next) o->hold_next->hold_prev = o->hold_prev;
        o->hold_prev = o->hold_next = NULL;
        accel_i_spin_lock(&q->free_lock);
        now = atomic_load_explicit(&o->held_until, memory_order_relaxed) <= q->completed;
        if (!now) {
            o->hold_next = q->unheld;
            q->unheld = o;
        }
        accel_i_spin_unlock(&q->free_lock);
    }
    accel_i_spin_unlock(&dev->objects_lock);
    if (now) accel_i_release(o);
}
/* The caller's reference of o goes (its handle taken): its queue's hold too. */
static void accel_i_handle_gone(accel_i_object* o) {
    accel_i_unhold(o);
    accel_i_release(o);
}
/* A caller's destroy: drops the handle's reference (once). */
static void accel_i_handle_drop(void* obj) {
    accel_i_object* o = (accel_i_object*)obj;
    if (atomic_exchange(&o->handle, 0u)) accel_i_handle_gone(o);
}
static bool accel_i_lost(accel_device* dev) {
    return atomic_load_explicit(&dev->lost, memory_order_relaxed) != 0;
}
static bool accel_i_stale(const accel_i_object* o) {
    return o->generation != atomic_load_explicit(&o->device->generation, memory_order_relaxed);
}
/* in core: device generations: the entry check of every call that takes an object */
static accel_result accel_i_live(const accel_i_object* o, const char* fn);

/* ==== core: results and backends ==== */
ACCEL_API const char* accel_result_string(accel_result r) {
    switch (r) {
    case ACCEL_OK: return "ACCEL_OK";
    case ACCEL_TIMEOUT: return "ACCEL_TIMEOUT";
    case ACCEL_ERROR_INVALID_ARGUMENT: return "ACCEL_ERROR_INVALID_ARGUMENT";
    case ACCEL_ERROR_OUT_OF_MEMORY: return "ACCEL_ERROR_OUT_OF_MEMORY";
    case ACCEL_ERROR_UNAVAILABLE: return "ACCEL_ERROR_UNAVAILABLE";
    case ACCEL_ERROR_UNSUPPORTED: return "ACCEL_ERROR_UNSUPPORTED";
    case ACCEL_ERROR_SIGNAL_FAILED: return "ACCEL_ERROR_SIGNAL_FAILED";
    case ACCEL_ERROR_DEVICE_LOST: return "ACCEL_ERROR_DEVICE_LOST";
    case ACCEL_ERROR_DEADLOCK: return "ACCEL_ERROR_DEADLOCK";
    case ACCEL_ERROR_COMPILE: return "ACCEL_ERROR_COMPILE";
    case ACCEL_ERROR_BACKEND: return "ACCEL_ERROR_BACKEND";
    }
    return "unknown accel_result";
}

ACCEL_API const char* accel_backend_name(const accel_backend* b) { return b ? b->name : NULL; }

ACCEL_API accel_result accel_backend_device_count(const accel_backend* b, uint32_t* count) {
    if (count) *count = 0;
    if (!b || !count)
        return accel_i_invalid(NULL, "accel_backend_device_count", !b ? "backend is NULL" : "count is NULL");
    return b->device_count(b, count);
}

/* ==== core: devices ==== */
/* kit: a desc's allocator, both functions or neither (then the defaults); INVALID_ARGUMENT, logged as
   fn's, when only one is set. */
static accel_result accel_i_desc_allocator(accel_device_desc* d, const char* fn) {
    if (!d->allocator.alloc_fn != !d->allocator.free_fn) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "%s: the allocator needs both alloc_fn and free_fn", fn);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    if (!d->allocator.alloc_fn) {
        d->allocator.alloc_fn = accel_i_default_alloc;
        d->allocator.free_fn = accel_i_default_free;
        d->allocator.user = NULL;
    }
    return ACCEL_OK;
}
ACCEL_API accel_result accel_device_create(const accel_device_desc* desc, accel_device** out) {
    accel_device_desc d;
    accel_result r;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    if (!out) {
        accel_i_log_to(&d.logger, ACCEL_LOG_ERROR, "accel_device_create: out is NULL");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    *out = NULL;
    if (!d.backend) d.backend = accel_cpu_backend();
    if (accel_i_desc_allocator(&d, "accel_device_create") != ACCEL_OK) return ACCEL_ERROR_INVALID_ARGUMENT;
    r = d.backend->device_create(d.backend, &d, out);
    if (r == ACCEL_OK) accel_i_debug_off(*out, "accel_device_create");   /* once: not per backend tried */
    if (r == ACCEL_OK && (r = accel_i_trace_open(*out, &d)) != ACCEL_OK) {
        accel_device_destroy(*out);
        *out = NULL;
    }
    return r;
}

ACCEL_API accel_result accel_device_create_any(const accel_backend* const* backends, uint32_t count,
                                               const accel_device_desc* desc, accel_device** out) {
    accel_device_desc d;
    accel_result last = ACCEL_ERROR_UNAVAILABLE;
    bool all_unavailable = true;
    if (out) *out = NULL;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    if (!backends || count == 0 || !out) {
        accel_i_log_to(&d.logger, ACCEL_LOG_ERROR, "accel_device_create_any: %s",
                       !backends ? "backends is NULL" : count == 0 ? "count is 0" : "out is NULL");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < count; i++) {
        accel_result r;
        if (!backends[i]) {
            accel_i_log_to(&d.logger, ACCEL_LOG_ERROR, "accel_device_create_any: backends[%u] is NULL", i);
            last = ACCEL_ERROR_INVALID_ARGUMENT;
            all_unavailable = false;
            continue;
        }
        d.backend = backends[i];
        r = accel_device_create(&d, out);
        if (r == ACCEL_OK) return ACCEL_OK;
        accel_i_log_to(&d.logger, r == ACCEL_ERROR_UNAVAILABLE ? ACCEL_LOG_INFO : ACCEL_LOG_WARN,
                       "accel_device_create_any: skipping backend '%s': %s",
                       backends[i]->name, accel_result_string(r));
        if (r != ACCEL_ERROR_UNAVAILABLE) all_unavailable = false;
        last = r;
    }
    return all_unavailable ? ACCEL_ERROR_UNAVAILABLE : last;
}

/* Takes the handle's reference of the first object whose handle the caller has not destroyed; NULL
   when none is left. */
static accel_i_object* accel_i_take_handle(accel_device* dev) {
    accel_i_object* o;
    accel_i_spin_lock(&dev->objects_lock);
    for (o = dev->objects; o; o = o->next) if (atomic_exchange(&o->handle, 0u)) break;
    accel_i_spin_unlock(&dev->objects_lock);
    return o;
}
/* Can nobody set s any more to the value other devices' waits ask of it? Its device is destroyed (so
   no handle, and its own batches are done or discarded), it is below that value, and no signal command
   of another device's queue that could reach it is left: none was recorded with such a value, or none
   is held by a batch any more (`foreign`, which the caller read). */
static bool accel_i_orphaned(accel_signal* s, uint64_t foreign) {
    uint64_t cur = s->obj.device->backend->signal_value(s), wanted = atomic_load(&s->wanted);
    return !(cur & ACCEL_I_FAILED_BIT) && cur < wanted &&
           (atomic_load(&s->recorded) < wanted || foreign == 0);
}
static void accel_i_orphan_fail(accel_signal* s) {
    accel_i_log(s->obj.device, ACCEL_LOG_WARN,
                "accel_device_destroy: signal %p%s%s%s is still held by another device's "
                "queue, which waits for %llu; it is at %llu and nothing can set it now: failing it with "
                "ACCEL_ERROR_DEVICE_LOST",
                (void*)s, ACCEL_I_LABEL(&s->obj), (unsigned long long)atomic_load(&s->wanted),
                (unsigned long long)s->obj.device->backend->signal_value(s));
    accel_i_raise(s, accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST));
}
/* A batch released its signal command of s (foreign: how many are left) from another device's queue:
   when s's device is destroyed already and that was the last one able to set s (its batch discarded,
   or run with a lower value), s is an orphan now (see accel_i_fail_orphans). With the destroy's scan
   (destroyed, then foreign) one of the two sees the other (seq_cst). */
static void accel_i_orphan_check(accel_signal* s, uint64_t foreign) {
    if (foreign == 0 && atomic_load(&s->obj.device->destroyed) && accel_i_orphaned(s, 0))
        accel_i_orphan_fail(s);
}
/* A signal of dev that other devices' batches still hold once the destroy dropped every handle, and
   that nobody can set any more (accel_i_orphaned); retained. NULL when none is left. */
static accel_signal* accel_i_next_orphan(accel_device* dev) {
    accel_i_object* o;
    accel_i_spin_lock(&dev->objects_lock);
    for (o = dev->objects; o; o = o->next) {
        accel_signal* s = (accel_signal*)(void*)o;
        if (o->kind == ACCEL_I_SIGNAL && accel_i_orphaned(s, atomic_load(&s->foreign)) &&
            accel_i_try_retain(o))
            break;
    }
    accel_i_spin_unlock(&dev->objects_lock);
    return (accel_signal*)(void*)o;
}
/* Nobody can set those signals any more (their handles went with the device): fail them, so that
   the queues waiting on them go on instead of hanging. */
static void accel_i_fail_orphans(accel_device* dev) {
    accel_signal* s;
    atomic_store(&dev->destroyed, 1u);
    while ((s = accel_i_next_orphan(dev)) != NULL) {
        accel_i_orphan_fail(s);
        accel_i_release(s);
    }
}
static void accel_i_queue_settle(accel_queue* q, const char* fn);
#if defined(ACCEL_NO_THREADS)
static void accel_i_cpu_device_settle(accel_device* dev);
static bool accel_i_cpu_orphans_later(accel_device* dev);
#endif
/* ---- core: calls on this thread ----
   The host calls and native steps whose fn runs on this thread, innermost first (a fn may set a signal
   whose waiters run another queue's batch here, with its own host calls). With threads, a fn that
   destroys or finishes its own queue, or destroys that queue's device, would wait for the very call
   it runs in: accel_queue_destroy, accel_queue_finish and accel_device_destroy refuse it
   (accel_i_called_from). No-threads builds define those calls (see "No-threads and WASM builds"). */
#if !defined(ACCEL_NO_THREADS)
static ACCEL_I_THREAD_LOCAL accel_i_call* accel_i_calls;
#endif
ACCEL_I_KIT void accel_i_call_enter(accel_i_call* c, accel_queue* q) {
    c->q = q;
#if !defined(ACCEL_NO_THREADS)
    c->up = accel_i_calls;
    accel_i_calls = c;
#endif
}
ACCEL_I_KIT void accel_i_call_leave(const accel_i_call* c) {
#if !defined(ACCEL_NO_THREADS)
    accel_i_calls = c->up;
#else
    (void)c;
#endif
}
/* Is a fn of q (q: not NULL), or of a queue of dev (dev: not NULL), running on this thread? Then fn's
   call is logged as refused, and the caller returns. */
static bool accel_i_called_from(const accel_queue* q, const accel_device* dev, const char* fn) {
#if !defined(ACCEL_NO_THREADS)
    for (const accel_i_call* c = accel_i_calls; c; c = c->up) {
        if (c->q != q && (!dev || c->q->obj.device != dev)) continue;
        accel_i_log(c->q->obj.device, ACCEL_LOG_ERROR,
                    "%s: called from a host call or native step of queue %p%s%s%s, which it would wait "
                    "for (a deadlock): refused, nothing changes", fn, (void*)c->q, ACCEL_I_LABEL(&c->q->obj));
        return true;
    }
#else
    (void)q; (void)dev; (void)fn;
#endif
    return false;
}
ACCEL_API void accel_device_destroy(accel_device* dev) {
    accel_i_object* o;
    if (!dev || accel_i_called_from(NULL, dev, "accel_device_destroy")) return;
#if defined(ACCEL_NO_THREADS)
    accel_i_cpu_device_settle(dev);   /* every queue, before the first is released */
#endif
    accel_i_qmem_close(dev, false);   /* its roots go with the other handles below */
    /* every queue finished before the first one goes (a host call of one may use another): each
       queue whose handle lives, in list order, held while it is waited for (so it stays listed even
       if a host call destroys it meanwhile) */
    for (accel_i_object* prev = NULL;; prev = o) {
        accel_i_spin_lock(&dev->objects_lock);
        o = prev ? prev->next : dev->objects;
        while (o && (o->kind != ACCEL_I_QUEUE || !atomic_load(&o->handle))) o = o->next;
        if (o) accel_i_retain(o);
        accel_i_spin_unlock(&dev->objects_lock);
        if (prev) accel_i_release(prev);
        if (!o) break;
        accel_i_queue_settle((accel_queue*)(void*)o, "accel_device_destroy");
    }
    if (dev->backend->device_close) dev->backend->device_close(dev);
    while ((o = accel_i_take_handle(dev)) != NULL) accel_i_handle_gone(o);   /* queues too */
#if defined(ACCEL_NO_THREADS)
    if (!accel_i_cpu_orphans_later(dev))
#endif
        accel_i_fail_orphans(dev);
    accel_i_trace_close(dev);      /* its queues are gone, their events written */
    accel_i_device_release(dev);   /* now, or when other devices' work releases its last object */
}

ACCEL_API accel_result accel_device_info_get(accel_device* dev, accel_device_info* out) {
    if (!dev || !out)
        return accel_i_invalid(dev, "accel_device_info_get", !dev ? "dev is NULL" : "out is NULL");
    if (accel_i_lost(dev)) return ACCEL_ERROR_DEVICE_LOST;
    *out = dev->info;
    out->generation = atomic_load(&dev->generation);
    return ACCEL_OK;
}

/* The handles every create call needs: dev, desc (when it takes one) and out. */
static accel_result accel_i_create_args(accel_device* dev, bool desc_ok, void* out, const char* fn) {
    if (!dev) return accel_i_invalid(NULL, fn, "dev is NULL");
    if (!desc_ok) return accel_i_invalid(dev, fn, "desc is NULL");
    if (!out) return accel_i_invalid(dev, fn, "out is NULL");
    return accel_i_lost(dev) ? ACCEL_ERROR_DEVICE_LOST : ACCEL_OK;
}

/* ==== core: device generations ==== */
/* DESIGN 7.4. A device counts generations (1 at create); accel_device_recover adds 1 under the object
   lock, and every object records the generation it was made in (accel_i_object_init, under the same
   lock). An object of an older generation is stale: the entry check below (accel_i_live, or for
   recording calls accel_i_rec_live) is the only place that refuses it, with ACCEL_ERROR_DEVICE_LOST
   and a log line; every public call that takes an object passes through one of the two. Destroys skip
   it. The executors of stale queues see it too (a batch starts no command once its queue is stale). */
static const char* accel_i_kind_name(accel_i_kind k) {
    switch (k) {
    case ACCEL_I_BUFFER: return "buffer";
    case ACCEL_I_PROGRAM: return "program";
    case ACCEL_I_SIGNAL: return "signal";
    case ACCEL_I_QUEUE: return "queue";
    case ACCEL_I_COMMANDS: return "command list";
    }
    return "object";
}
/* The log line of a stale object, for fn. */
static const char* accel_i_stale_why(const accel_i_object* o, const char* fn, char* out, size_t cap) {
    const accel_device* d = o->device;
    accel_i_cut(out, cap, snprintf(out, cap,
             "%s: %s %p%s%s%s is stale: made in generation %llu of device %p%s%s%s, which "
             "accel_device_recover took to generation %llu (destroy it and make it anew)",
             fn, accel_i_kind_name(o->kind), (const void*)o, ACCEL_I_LABEL(o),
             (unsigned long long)o->generation, ACCEL_I_DEVICE_LABEL(d),
             (unsigned long long)atomic_load(&o->device->generation)));
    return out;
}
/* The entry check of a call that takes object o: DEVICE_LOST for a stale object (logged as fn's) or a
   lost device, else OK. */
static accel_result accel_i_live(const accel_i_object* o, const char* fn) {
    char why[ACCEL_I_WHY];
    if (accel_i_stale(o))
        return accel_i_fail(o->device, ACCEL_ERROR_DEVICE_LOST, "%s",
                            accel_i_stale_why(o, fn, why, sizeof why));
    return accel_i_lost(o->device) ? ACCEL_ERROR_DEVICE_LOST : ACCEL_OK;
}

/* Creates against a recover: it makes the native device anew while no create is under way, so that an
   object's native part is always of its generation's native device. A create enters (false, logged as
   fn's: a recover is under way, the create returns DEVICE_LOST) and leaves around the backend's create;
   a recover closes creates (creates_closed) and waits for those under way. Refusing instead of
   waiting: a create inside a host call that the recover waits for must not wait for the recover.
   accel_i_inside's protocol (core: host threads) on one counter. No threads: nothing runs beside a
   recover. */
static bool accel_i_creates_enter(accel_device* dev, const char* fn) {
    atomic_fetch_add(&dev->creates_in, 1u);
    if (!atomic_load(&dev->creates_closed)) return true;
    atomic_fetch_sub(&dev->creates_in, 1u);
    accel_i_log(dev, ACCEL_LOG_ERROR, "%s: device %p%s%s%s is being recovered (accel_device_recover)",
                fn, ACCEL_I_DEVICE_LABEL(dev));
    return false;
}
static void accel_i_creates_leave(accel_device* dev) { atomic_fetch_sub(&dev->creates_in, 1u); }
/* Also one recover at a time: a second one waits here until the first opened creates again. */
static void accel_i_creates_close(accel_device* dev) {
    while (atomic_exchange(&dev->creates_closed, 1u)) accel_i_yield();
    while (atomic_load(&dev->creates_in) != 0) accel_i_yield();
}

/* A signal of dev made before generation g that is not failed, retained; NULL when none is left. */
static accel_signal* accel_i_next_unfailed(accel_device* dev, uint64_t g) {
    accel_i_object* o;
    accel_i_spin_lock(&dev->objects_lock);
    for (o = dev->objects; o; o = o->next)
        if (o->kind == ACCEL_I_SIGNAL && o->generation < g &&
            !accel_i_failed(dev->backend->signal_value((accel_signal*)(void*)o)) && accel_i_try_retain(o))
            break;
    accel_i_spin_unlock(&dev->objects_lock);
    return (accel_signal*)(void*)o;
}
#if !defined(ACCEL_NO_THREADS)
/* The next queue of dev made before generation g after `after` (NULL: the first), retained; NULL past
   the last. The caller holds `after`, so it is still listed (an object leaves the list when it is freed),
   and a queue destroyed meanwhile skips nothing (an index into the list would). */
static accel_queue* accel_i_stale_queue(accel_device* dev, uint64_t g, accel_queue* after) {
    accel_i_object* o;
    accel_i_spin_lock(&dev->objects_lock);
    for (o = after ? after->obj.next : dev->objects; o; o = o->next)
        if (o->kind == ACCEL_I_QUEUE && o->generation < g && accel_i_try_retain(o)) break;
    accel_i_spin_unlock(&dev->objects_lock);
    return (accel_queue*)(void*)o;
}
static void accel_i_walker_settle(accel_queue* q);   /* core: batch walk */
#endif
static void accel_i_qmem_recover(accel_device* dev);   /* core: queue-ordered memory */
/* GPU backends: no thread walks a stale queue's batch into the native device any more (each walk drops
   what is left once its queue is stale; one that is gated on the host waits there, holding nothing
   native, and drops its batch when the wait ends), and no gated wait looks at a signal of dev any more
   (they are failed: every such wait ends; a GPU backend's wait reads the signal's native word). Then
   the backend may take the native device down. */
static void accel_i_walkers_settle(accel_device* dev, uint64_t g) {
#if !defined(ACCEL_NO_THREADS)
    accel_queue *q = NULL, *next;
    if (!dev->backend->walk) return;
    for (;; q = next) {
        next = accel_i_stale_queue(dev, g, q);
        if (q) accel_i_release(q);
        if (!next) break;
        if (next->walker) accel_i_walker_settle(next);
    }
    while (atomic_load(&dev->gate_count) != 0) accel_i_yield();
#else
    (void)dev; (void)g;
#endif
}
ACCEL_I_KIT void accel_i_recover_stale(accel_device* dev) {
    uint64_t g;
    accel_i_creates_close(dev);
    accel_i_spin_lock(&dev->objects_lock);   /* every object from here on is of the new generation */
    g = atomic_fetch_add(&dev->generation, 1u) + 1u;
    accel_i_spin_unlock(&dev->objects_lock);
    accel_i_log(dev, ACCEL_LOG_WARN,
                "accel_device_recover: device %p%s%s%s: generation %llu; the objects made before are stale "
                "and every signal of theirs not failed fails with ACCEL_ERROR_DEVICE_LOST",
                ACCEL_I_DEVICE_LABEL(dev), (unsigned long long)g);
}
ACCEL_I_KIT void accel_i_recover_fail(accel_device* dev) {
    accel_signal* s;
    uint64_t g = atomic_load(&dev->generation);   /* creates closed: only this recover moves it */
    /* outside the lock: a raise runs what it releases (no-threads builds run batches inline) */
    while ((s = accel_i_next_unfailed(dev, g)) != NULL) {
        accel_i_raise(s, accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST));
        accel_i_release(s);
    }
    accel_i_walkers_settle(dev, g);
    accel_i_qmem_recover(dev);
}
ACCEL_I_KIT accel_result accel_i_recover_end(accel_device* dev, accel_result r) {
    atomic_store(&dev->lost, r == ACCEL_OK ? 0u : 1u);   /* the new generation is not lost */
    atomic_store(&dev->creates_closed, 0u);
    if (r != ACCEL_OK)
        accel_i_log(dev, ACCEL_LOG_ERROR, "accel_device_recover: %s; the device is lost (recover it again, "
                    "or destroy it)", accel_result_string(r));
    return r;
}
ACCEL_API accel_result accel_device_recover(accel_device* dev) {
    if (!dev) return accel_i_invalid(NULL, "accel_device_recover", "dev is NULL");
    if (!dev->backend->device_recover || dev->no_recover)
        return accel_i_fail(dev, ACCEL_ERROR_UNSUPPORTED,
                            "accel_device_recover: the %s backend cannot recreate this device%s",
                            dev->backend->name, dev->no_recover ? " (it is not accel's own)" : "");
    if (dev->backend->recover_whole) return dev->backend->device_recover(dev);   /* all of it, locked */
    accel_i_recover_stale(dev);
    accel_i_recover_fail(dev);
    return accel_i_recover_end(dev, dev->backend->device_recover(dev));
}

/* ==== core: buffers ==== */
static bool accel_i_range_ok(size_t total, size_t offset, size_t size) {
    return size > 0 && offset <= total && size <= total - offset;
}
/* Why [offset, offset + size) is not a range of buf (accel_i_range_ok said no), for a log line: "size
   is 0", or the range and the buffer (a view as a view: its size, where it starts in its root, and the
   root's label and size). */
static const char* accel_i_range_why(const accel_buffer* buf, size_t offset, size_t size, char* out,
                                     size_t cap) {
    const accel_buffer* root = buf->root ? buf->root : buf;
    if (size == 0) return "size is 0";
    if (buf->root)
        accel_i_cut(out, cap, snprintf(out, cap,
                 "offset %zu + size %zu outside a view of %zu bytes (at %zu in buffer%s%s%s of %zu bytes)",
                 offset, size, buf->size, buf->offset, ACCEL_I_LABEL(&root->obj), root->size));
    else
        accel_i_cut(out, cap, snprintf(out, cap, "offset %zu + size %zu outside buffer%s%s%s of %zu bytes",
                 offset, size, ACCEL_I_LABEL(&buf->obj), buf->size));
    return out;
}

ACCEL_API accel_result accel_buffer_create(accel_device* dev, const accel_buffer_desc* desc,
                                           accel_buffer** out) {
    accel_result r;
    if (out) *out = NULL;
    if ((r = accel_i_create_args(dev, desc != NULL, out, "accel_buffer_create")) != ACCEL_OK) return r;
    if (desc->size == 0)
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT, "accel_buffer_create: size is 0");
    if (desc->memory != ACCEL_MEMORY_DEVICE && desc->memory != ACCEL_MEMORY_HOST)
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_buffer_create: unknown memory kind %d", (int)desc->memory);
    if (desc->read_only && !desc->host_ptr)
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_buffer_create: read_only without host_ptr");
    if (!accel_i_creates_enter(dev, "accel_buffer_create")) return ACCEL_ERROR_DEVICE_LOST;
    r = dev->backend->buffer_create(dev, desc, out);
    accel_i_creates_leave(dev);
    if (r == ACCEL_OK) (*out)->read_only = desc->read_only;
    return r;
}

static bool accel_i_view_args_ok(accel_buffer* buf, size_t offset, size_t size) {
    accel_device* dev = buf->obj.device;
    size_t align = dev->info.buffer_offset_alignment ? dev->info.buffer_offset_alignment : 1u;
    char why[ACCEL_I_WHY];
    if (!accel_i_range_ok(buf->size, offset, size)) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                    "accel_buffer_view_create: %s", accel_i_range_why(buf, offset, size, why, sizeof why));
        return false;
    }
    if ((buf->offset + offset) % align != 0) {
        accel_i_log(dev, ACCEL_LOG_ERROR,
                    "accel_buffer_view_create: offset %zu (%zu in the root buffer) is not a multiple "
                    "of buffer_offset_alignment %zu", offset, buf->offset + offset, align);
        return false;
    }
    return true;
}
/* A new view of bytes [offset, offset + size) of root, holding a reference on it, with the caller's
   handle; NULL when out of host memory. */
static accel_buffer* accel_i_view_make(accel_buffer* root, size_t offset, size_t size, const char* label) {
    accel_buffer* view = (accel_buffer*)accel_i_dev_alloc(root->obj.device, sizeof *view);
    if (!view) return NULL;
    memset((void*)view, 0, sizeof *view);
    accel_i_retain(root);
    view->root = root;
    view->offset = offset;
    view->size = size;
    view->memory = root->memory;
    view->read_only = root->read_only;
    /* memory taken at its point: none here, resolved through the root (accel_i_qmem_host) */
    view->mapped = !(root->qmem & ACCEL_I_QMEM_LATE) && root->mapped ? (unsigned char*)root->mapped + offset
                                                                     : NULL;
    accel_i_object_init(&view->obj, root->obj.device, ACCEL_I_BUFFER, label);
    accel_i_spin_lock(&root->obj.device->objects_lock);   /* as init wrote it */
    view->obj.generation = root->obj.generation;   /* its memory's: stale with it (a recover meanwhile) */
    accel_i_spin_unlock(&root->obj.device->objects_lock);
    return view;
}
static accel_result accel_i_qmem_no_memory(accel_buffer* buf, const char* fn);
/* core: queue-ordered memory at its point */
static void* accel_i_qmem_host(const accel_buffer* buf);
static bool accel_i_qmem_none(const accel_buffer* buf);
static accel_result accel_i_qmem_io_none(accel_buffer* buf, const char* fn);
static bool accel_i_qmem_late_use(accel_queue* q, accel_buffer* buf, const char* fn);
static void accel_i_qmem_skipped(const accel_i_cmd* c, uint64_t failed);
static bool accel_i_qmem_points_only(const accel_i_batch* b);
ACCEL_API accel_result accel_buffer_view_create(accel_buffer* buf, size_t offset, size_t size,
                                                accel_buffer** out) {
    accel_buffer* view;
    if (out) *out = NULL;
    if (!buf) return accel_i_invalid(NULL, "accel_buffer_view_create", "buffer is NULL");
    if (!out) return accel_i_invalid(buf->obj.device, "accel_buffer_view_create", "out is NULL");
    if (accel_i_live(&buf->obj, "accel_buffer_view_create") != ACCEL_OK) return ACCEL_ERROR_DEVICE_LOST;
    if (accel_i_buffer_root(buf)->qfail) return accel_i_qmem_no_memory(buf, "accel_buffer_view_create");
    if (!accel_i_view_args_ok(buf, offset, size)) return ACCEL_ERROR_INVALID_ARGUMENT;
    view = accel_i_view_make(accel_i_buffer_root(buf), buf->offset + offset, size, accel_i_label(&buf->obj));
    if (!view)
        return accel_i_fail(buf->obj.device, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_buffer_view_create: out of host memory");
    if (accel_i_stale(&view->obj)) {   /* a recover since the check above: none of a stale root */
        accel_i_handle_drop(view);
        return accel_i_live(&buf->obj, "accel_buffer_view_create");
    }
    *out = view;
    return ACCEL_OK;
}
ACCEL_API void accel_buffer_destroy(accel_buffer* buf) { if (buf) accel_i_handle_drop(buf); }
ACCEL_API size_t accel_buffer_size(const accel_buffer* buf) { return buf ? buf->size : 0; }
ACCEL_API void* accel_buffer_map(accel_buffer* buf) {
    if (buf && accel_i_stale(&buf->obj)) { accel_i_live(&buf->obj, "accel_buffer_map"); return NULL; }
    return buf ? (buf->mapped ? buf->mapped : accel_i_qmem_host(buf)) : NULL;
}

static accel_result accel_i_buffer_io(accel_buffer* buf, size_t offset, void* host, size_t size, bool write) {
    const char* fn = write ? "accel_buffer_write" : "accel_buffer_read";
    char why[ACCEL_I_WHY];
    if (!buf) return accel_i_invalid(NULL, fn, "buffer is NULL");
    if (!host)
        return accel_i_fail(buf->obj.device, ACCEL_ERROR_INVALID_ARGUMENT, "%s: host pointer is NULL", fn);
    if (!accel_i_range_ok(buf->size, offset, size))
        return accel_i_fail(buf->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                            "%s: %s", fn, accel_i_range_why(buf, offset, size, why, sizeof why));
    if (write && buf->read_only)
        return accel_i_fail(buf->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                            "%s: buffer%s%s%s is read_only", fn, ACCEL_I_LABEL(&buf->obj));
    if (accel_i_live(&buf->obj, fn) != ACCEL_OK) return ACCEL_ERROR_DEVICE_LOST;
    if (accel_i_qmem_none(buf)) return accel_i_qmem_io_none(buf, fn);
    return buf->obj.device->backend->buffer_io(accel_i_buffer_root(buf), buf->offset + offset, host, size,
                                               write);
}
ACCEL_API accel_result accel_buffer_write(accel_buffer* buf, size_t offset, const void* src, size_t size) {
    return accel_i_buffer_io(buf, offset, (void*)(uintptr_t)src, size, true);
}
ACCEL_API accel_result accel_buffer_read(accel_buffer* buf, size_t offset, void* dst, size_t size) {
    return accel_i_buffer_io(buf, offset, dst, size, false);
}

/* ==== core: programs ==== */
ACCEL_API accel_result accel_program_create(accel_device* dev, const accel_program_desc* desc,
                                            accel_program** out) {
    accel_result r;
    if (out) *out = NULL;
    if ((r = accel_i_create_args(dev, desc != NULL, out, "accel_program_create")) != ACCEL_OK) return r;
    if (!desc->cpu && !desc->spirv && !desc->ptx && !desc->cubin && !desc->cuda_source)
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_program_create '%s': the desc carries no program format",
                            desc->name ? desc->name : "");
    if ((desc->spirv && desc->spirv_size == 0) || (desc->cubin && desc->cubin_size == 0))
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_program_create: spirv/cubin given with size 0");
    if (desc->buffer_count > dev->info.max_buffers || desc->constant_count > dev->info.max_constants)
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_program_create: %u buffers / %u constants exceed the device limits "
                            "(%u / %u)",
                            desc->buffer_count, desc->constant_count, dev->info.max_buffers,
                            dev->info.max_constants);
    if (!accel_i_creates_enter(dev, "accel_program_create")) return ACCEL_ERROR_DEVICE_LOST;
    r = dev->backend->program_create(dev, desc, out);
    accel_i_creates_leave(dev);
    return r;
}
ACCEL_API void accel_program_destroy(accel_program* prog) { if (prog) accel_i_handle_drop(prog); }

/* ==== core: signals ==== */
static bool accel_i_failed(uint64_t v) { return (v & ACCEL_I_FAILED_BIT) != 0; }

ACCEL_API accel_result accel_signal_create(accel_device* dev, uint64_t initial, accel_signal** out) {
    accel_result r;
    if (out) *out = NULL;
    if ((r = accel_i_create_args(dev, true, out, "accel_signal_create")) != ACCEL_OK) return r;
    if (initial > ACCEL_SIGNAL_MAX)
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_signal_create: initial value %llu is above ACCEL_SIGNAL_MAX",
                            (unsigned long long)initial);
    if (!accel_i_creates_enter(dev, "accel_signal_create")) return ACCEL_ERROR_DEVICE_LOST;
    r = dev->backend->signal_create(dev, initial, out);
    accel_i_creates_leave(dev);
    if (r == ACCEL_OK) {
        atomic_init(&(*out)->promised, initial);
        atomic_init(&(*out)->wanted, 0u);
        atomic_init(&(*out)->recorded, 0u);
        atomic_init(&(*out)->foreign, 0u);
        atomic_init(&(*out)->foreign_held, 0u);
        accel_i_trace_signal(*out);
    }
    return r;
}
ACCEL_API void accel_signal_destroy(accel_signal* s) { if (s) accel_i_handle_drop(s); }
/* The value as the host word holds it (accel's own reads: the walk's, the waits'). */
static uint64_t accel_i_signal_value(const accel_signal* s) {
    return s ? s->obj.device->backend->signal_value(s) : 0;
}
/* The caller's read: first raised to what the device already reached, where the backend can tell
   (signal_settle), so that values read in causal order (accel_cuda.h: signals). */
ACCEL_API uint64_t accel_signal_value(const accel_signal* s) {
    const accel_i_walk_ops* w = s ? s->obj.device->backend->walk : NULL;
    if (w && w->signal_settle) w->signal_settle((accel_signal*)(uintptr_t)s);
    return accel_i_signal_value(s);
}
/* A host set or fail may be what lets a destroy of the signal's queue or device go on (the documented
   remedy for a queue blocked on a signal nobody sets): the destroy may then drop the signal's last
   other reference while the raise still wakes its waiters. The raise holds its own reference. */
static uint64_t accel_i_signal_raise_held(accel_signal* s, uint64_t value) {
    uint64_t old;
    void (*gates)(accel_signal*);
    accel_i_retain(s);
    old = accel_i_raise(s, value);
    /* workers gated on s's device: a raise walks what it released (core: batch walk; the count first:
       it orders the read after the one write of gate_release) */
    if (!accel_i_failed(value) && !accel_i_failed(old) && old < value &&
        atomic_load(&s->obj.device->gate_count) != 0 && (gates = s->obj.device->gate_release) != NULL)
        gates(s);
    accel_i_release(s);
    return old;
}
ACCEL_API accel_result accel_signal_set(accel_signal* s, uint64_t value) {
    if (!s) return accel_i_invalid(NULL, "accel_signal_set", "signal is NULL");
    if (accel_i_stale(&s->obj)) return accel_i_live(&s->obj, "accel_signal_set");
    if (value > ACCEL_SIGNAL_MAX)
        return accel_i_fail(s->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_signal_set: value %llu is above ACCEL_SIGNAL_MAX on signal %p%s%s%s",
                            (unsigned long long)value, (void*)s, ACCEL_I_LABEL(&s->obj));
    if (ACCEL_I_TRACING(s->obj.device)) accel_i_trace_host_set(s, value);
    if (!accel_i_failed(accel_i_signal_raise_held(s, value))) return ACCEL_OK;
    /* failed: by a recover that came meanwhile, stale now (as a wait that a recover ends) */
    return accel_i_stale(&s->obj) ? accel_i_live(&s->obj, "accel_signal_set") : ACCEL_ERROR_SIGNAL_FAILED;
}
/* Replaces an object's label with a copy of `label` (device allocator); NULL or "" removes it, and
   the label given at creation (a queue's or signal's kind) shows again. */
static accel_result accel_i_set_label(accel_i_object* o, const char* label, const char* fn) {
    char* copy = NULL;
    size_t n = label ? strlen(label) + 1 : 0;
    if (n > 1) {
        if ((copy = (char*)accel_i_alloc(&o->device->allocator, n, 1)) == NULL)
            return accel_i_fail(o->device, ACCEL_ERROR_OUT_OF_MEMORY,
                                "%s: out of host memory for a label of %zu bytes", fn, n);
        memcpy(copy, label, n);
    }
    if (o->label_set) accel_i_free(&o->device->allocator, o->label_set, strlen(o->label_set) + 1);
    o->label_set = copy;
    return ACCEL_OK;
}
ACCEL_API accel_result accel_signal_set_label(accel_signal* s, const char* label) {
    if (!s) return accel_i_invalid(NULL, "accel_signal_set_label", "signal is NULL");
    if (accel_i_stale(&s->obj)) return accel_i_live(&s->obj, "accel_signal_set_label");
    return accel_i_set_label(&s->obj, label, "accel_signal_set_label");
}
/* The failed value encodes the reason: ACCEL_SIGNAL_MAX + 1 + (-reason). Negated as unsigned: any
   negative reason, INT_MIN included, is defined behaviour. */
static uint64_t accel_i_failed_value(accel_result reason) {
    return ACCEL_I_FAILED_BIT | (uint64_t)(0u - (uint32_t)reason);
}
ACCEL_API accel_result accel_signal_fail(accel_signal* s, accel_result reason) {
    if (!s) return accel_i_invalid(NULL, "accel_signal_fail", "signal is NULL");
    if (accel_i_stale(&s->obj)) return accel_i_live(&s->obj, "accel_signal_fail");
    if ((int)reason >= 0)
        return accel_i_fail(s->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_signal_fail: reason %d is not an error (signal %p%s%s%s)",
                            (int)reason, (void*)s, ACCEL_I_LABEL(&s->obj));
    accel_i_signal_raise_held(s, accel_i_failed_value(reason));
    return ACCEL_OK;
}

/* Where a wait on these signals stands: OK (all / any reached), SIGNAL_FAILED (all: one failed; any:
   none reached and one failed), TIMEOUT (not yet). *first gets the deciding index. */
static accel_result accel_i_wait_check(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                       uint32_t* first) {
    uint32_t failed = UINT32_MAX, reached = UINT32_MAX, pending = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t cur = s[i]->obj.device->backend->signal_value(s[i]);
        if (accel_i_failed(cur)) { if (failed == UINT32_MAX) failed = i; }
        else if (cur >= v[i]) { if (reached == UINT32_MAX) reached = i; }
        else pending++;
    }
    if (all) {
        if (failed != UINT32_MAX) { *first = failed; return ACCEL_ERROR_SIGNAL_FAILED; }
        if (pending == 0) { *first = 0; return ACCEL_OK; }
        return ACCEL_TIMEOUT;
    }
    if (reached != UINT32_MAX) { *first = reached; return ACCEL_OK; }
    if (failed != UINT32_MAX) { *first = failed; return ACCEL_ERROR_SIGNAL_FAILED; }
    return ACCEL_TIMEOUT;
}

/* Signals of several backends: poll, backing off from spinning to short sleeps. */
static accel_result accel_i_wait_mixed(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                       uint64_t timeout_ns, uint32_t* first) {
    uint64_t deadline = accel_i_deadline(timeout_ns), pause_ns = 1000;
    for (;;) {
        accel_result r = accel_i_wait_check(s, v, n, all, first);
        if (r != ACCEL_TIMEOUT || accel_i_now_ns() >= deadline) return r;
        for (uint32_t i = 0; i < n; i++) {   /* give each backend a short blocking wait */
            uint32_t f;
            if (!accel_i_failed(accel_i_signal_value(s[i])) && accel_i_signal_value(s[i]) < v[i]) {
                s[i]->obj.device->backend->signal_wait_many(&s[i], &v[i], 1, true, pause_ns, &f);
                break;
            }
        }
        if (pause_ns < 1000000) pause_ns *= 2;
    }
}

#if !defined(ACCEL_NO_THREADS)
/* A wait inside the library (an executor waiting for a wait command's signal): the signal's backend
   wait, without the public wait's debug reports, which are about the user's waits. */
static accel_result accel_i_wait_internal(accel_signal* s, uint64_t v, uint64_t timeout_ns) {
    uint32_t first;
    return s->obj.device->backend->signal_wait_many(&s, &v, 1, true, timeout_ns, &first);
}
#endif

/* fn: the public call, for the log line (which goes to the first signal's device where there is one). */
static accel_result accel_i_check_wait_args(accel_signal* const* s, const uint64_t* v, uint32_t n,
                                            const char* fn) {
    char what[64];
    accel_device* dev = s && n && s[0] ? s[0]->obj.device : NULL;
    if (!s || !v || n == 0)
        return accel_i_invalid(dev, fn, !s ? "signals is NULL" : !v ? "values is NULL" : "count is 0");
    for (uint32_t i = 0; i < n; i++) {
        if (!s[i]) {
            if (n > 1) snprintf(what, sizeof what, "signals[%u] is NULL", i);
            return accel_i_invalid(dev, fn, n > 1 ? what : "signal is NULL");
        }
        if (v[i] > ACCEL_SIGNAL_MAX)
            return accel_i_fail(s[i]->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                                "%s: value %llu is above ACCEL_SIGNAL_MAX on signal %p%s%s%s",
                                fn, (unsigned long long)v[i], (void*)s[i], ACCEL_I_LABEL(&s[i]->obj));
        if (accel_i_stale(&s[i]->obj)) return accel_i_live(&s[i]->obj, fn);
    }
    return ACCEL_OK;
}

static accel_result accel_i_signal_wait_many(accel_signal* const* signals, const uint64_t* values,
                                             uint32_t count, bool wait_all, uint64_t timeout_ns,
                                             uint32_t* first_reached, const char* fn) {
    uint32_t first = 0;
    accel_result r = accel_i_check_wait_args(signals, values, count, fn);
    const accel_backend* b;
    uint64_t t0;
    if (r != ACCEL_OK) return r;
    t0 = ACCEL_I_TRACING(signals[0]->obj.device) ? accel_i_now_ns() : 0;
    b = signals[0]->obj.device->backend;
    for (uint32_t i = 1; i < count; i++) if (signals[i]->obj.device->backend != b) b = NULL;
    if (timeout_ns != 0 && ACCEL_I_DEBUGGING(signals[0]->obj.device))
        accel_i_debug_unreachable(signals, values, count, wait_all, fn);
    r = b ? b->signal_wait_many(signals, values, count, wait_all, timeout_ns, &first)
          : accel_i_wait_mixed(signals, values, count, wait_all, timeout_ns, &first);
    /* a recover came while it waited (it failed the signal): stale now */
    if (r == ACCEL_ERROR_SIGNAL_FAILED && accel_i_stale(&signals[first]->obj))
        r = accel_i_live(&signals[first]->obj, fn);
    if (first_reached && (r == ACCEL_OK || r == ACCEL_ERROR_SIGNAL_FAILED)) *first_reached = first;
    if (t0) accel_i_trace_host_wait(signals, values, count, t0, r == ACCEL_OK);
    if (r == ACCEL_TIMEOUT || r == ACCEL_ERROR_DEADLOCK) {   /* named: the first signal not reached */
        uint32_t u = 0;
        while (u + 1 < count && accel_i_signal_value(signals[u]) >= values[u]) u++;
#if defined(ACCEL_NO_THREADS)
        if (r == ACCEL_ERROR_DEADLOCK)   /* no-threads builds only: nothing submitted can end the wait */
            accel_i_log(signals[u]->obj.device, ACCEL_LOG_WARN,
                        "%s: no-threads build and nothing submitted can reach value %llu"
                        " on signal %p%s%s%s%s: deadlock",
                        fn, (unsigned long long)values[u], (void*)signals[u], ACCEL_I_LABEL(&signals[u]->obj),
                        count > 1 ? " (and others)" : "");
#endif
        if ((r == ACCEL_ERROR_DEADLOCK || timeout_ns != 0) && ACCEL_I_DEBUGGING(signals[u]->obj.device))
            /* it reads the first of s and v only; count says whether the wait had others */
            accel_i_debug_hang(signals[u]->obj.device, fn, signals + u, values + u, count, timeout_ns, r);
    }
    return r;
}
ACCEL_API accel_result accel_signal_wait_many(accel_signal* const* signals, const uint64_t* values,
                                              uint32_t count, bool wait_all, uint64_t timeout_ns,
                                              uint32_t* first_reached) {
    return accel_i_signal_wait_many(signals, values, count, wait_all, timeout_ns, first_reached,
                                    "accel_signal_wait_many");
}
ACCEL_API accel_result accel_signal_wait(accel_signal* s, uint64_t value, uint64_t timeout_ns) {
    return accel_i_signal_wait_many(&s, &value, 1, true, timeout_ns, NULL, "accel_signal_wait");
}

/* ==== core: host signals ==== */
/* A host signal is a 64-bit host word with the event machinery (spin, then sleep; waiters): the CPU
   backend's signals, and the CUDA backend's (which put `size` bytes of their own around it). */
/* A device word (core: device words): a copy of a host signal's value kept where another backend's
   device can watch it (CUDA: a word of the pinned, device-mapped pool of a CUDA device that waits on a
   CPU signal on the GPU). `word` holds the signal's value, kept at the maximum, and ACCEL_SIGNAL_MAX
   once the signal failed (a device's compare cannot read failed values: cuStreamWaitValue64's GEQ is
   cyclic); each raise of the signal stores it (accel_i_dword_raise). The owner (the backend that
   attached it) reads `addr`, its address on the device, and gets drop(s) when the signal goes. `lock`
   guards word, addr, owner, drop; `on` says a word was ever attached. The pairing: a raise changes the
   host word with a seq_cst compare-exchange (accel_i_event_raise), then loads `on` (seq_cst); the attach
   stores `on` (seq_cst), then a seq_cst fence, then reads the host word. A raise that reads 0 comes
   before the attach in the total order, whose read after its fence then sees the raised value; the
   fence is the attach's (rare), not every raise's. */
struct accel_i_dword {
    accel_i_a32 on, lock;
    accel_i_a64* word;             /* NULL: none now */
    uint64_t addr;
    void* owner;
    void (*drop)(accel_signal* s);
};
typedef struct accel_i_host_signal {
    accel_signal base; accel_i_event ev; accel_i_dword dword;
} accel_i_host_signal;
static accel_i_event* accel_i_host_signal_event(accel_signal* s) { return &((accel_i_host_signal*)s)->ev; }
static accel_result accel_i_host_signal_make(accel_device* dev, uint64_t initial, size_t size,
                                             accel_signal** out) {
    /* 64-aligned: the word shares its cache line with the trace marks (see accel_signal) */
    accel_i_host_signal* s = (accel_i_host_signal*)accel_i_alloc(&dev->allocator, size, 64);
    if (!s) return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_signal_create: out of host memory");
    memset((void*)s, 0, size);
    if (!accel_i_event_init(&s->ev, initial)) {
        accel_i_dev_free(dev, s, size);
        return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_signal_create: mutex/condition init failed");
    }
    *out = &s->base;
    return ACCEL_OK;
}
static void accel_i_host_signal_list(accel_device* dev, accel_signal* s) {
    accel_i_object_init(&s->obj, dev, ACCEL_I_SIGNAL, "signal");
}
static void accel_i_host_signal_unmake(accel_device* dev, accel_signal* s, size_t size) {
    accel_i_event_destroy(accel_i_host_signal_event(s));
    accel_i_dev_free(dev, s, size);
}
static void accel_i_host_signal_destroy(accel_signal* s, size_t size) {
    accel_i_dword* d = &((accel_i_host_signal*)s)->dword;
    if (d->drop) d->drop(s);   /* its device word goes back to its owner */
    accel_i_event_destroy(accel_i_host_signal_event(s));
    accel_i_dev_free(s->obj.device, s, size);
}
static uint64_t accel_i_host_signal_value(const accel_signal* s) {
    return accel_i_event_value(&((const accel_i_host_signal*)s)->ev);
}
static uint64_t accel_i_host_signal_raise(accel_signal* s, uint64_t v) {
    return accel_i_event_raise(accel_i_host_signal_event(s), v);
}
/* ---- core: device words (see accel_i_dword) ---- */
/* kit: s's device word (s a host signal: CPU or CUDA; only CPU signals get one) */
static accel_i_dword* accel_i_dword_of(accel_signal* s) { return &((accel_i_host_signal*)s)->dword; }
/* kit: word takes max(word, v), ACCEL_SIGNAL_MAX for a failed v (d's lock held, or d not yet shared) */
static void accel_i_dword_store(accel_i_dword* d, uint64_t v) {
    uint64_t old;
    if (!d->word) return;
    if (accel_i_failed(v)) v = ACCEL_SIGNAL_MAX;
    old = atomic_load(d->word);
    while (old < v && !atomic_compare_exchange_weak(d->word, &old, v)) {}
}
/* The device side of a raise of a host signal of a backend without a walk (CPU): its device word, if
   one was ever attached (s's host word took v before, by a seq_cst compare-exchange: see accel_i_dword). */
static void accel_i_dword_raise(accel_signal* s, uint64_t v) {
    accel_i_dword* d = accel_i_dword_of(s);
    if (!atomic_load(&d->on)) return;
    accel_i_spin_lock(&d->lock);
    accel_i_dword_store(d, v);
    accel_i_spin_unlock(&d->lock);
}

#if !defined(ACCEL_NO_THREADS)
/* wait_many over several CPU signals: a waiter on each signal bumps one local event. */
typedef struct accel_i_multi_waiter { accel_i_waiter w; accel_i_event* target; } accel_i_multi_waiter;
static void accel_i_multi_wake(accel_i_waiter* w) {
    accel_i_event_add(((accel_i_multi_waiter*)w)->target, 1);
}

static accel_result accel_i_cpu_wait_multi(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                           uint64_t deadline, uint32_t* first) {
    accel_i_multi_waiter local_w[8], *w = local_w;
    accel_device* dev = s[0]->obj.device;
    accel_i_event local;
    accel_result r;
    if (n > 8) w = (accel_i_multi_waiter*)accel_i_dev_alloc(dev, (size_t)n * sizeof *w);
    if (!w || !accel_i_event_init(&local, 0)) {   /* cannot register: fall back to polling */
        if (w && w != local_w) accel_i_dev_free(dev, w, (size_t)n * sizeof *w);
        uint64_t now = accel_i_now_ns();
        return accel_i_wait_mixed(s, v, n, all,
                                  deadline == ACCEL_I_FOREVER ? ACCEL_I_FOREVER
                                  : deadline > now ? deadline - now : 0, first);
    }
    for (uint32_t i = 0; i < n; i++) {
        w[i].w.wake = accel_i_multi_wake;
        w[i].target = &local;
        accel_i_waiter_add(accel_i_host_signal_event(s[i]), &w[i].w);
    }
    for (;;) {
        uint64_t seen = accel_i_event_value(&local);
        r = accel_i_wait_check(s, v, n, all, first);
        if (r != ACCEL_TIMEOUT || !accel_i_event_wait(&local, seen + 1, deadline)) break;
    }
    if (r == ACCEL_TIMEOUT) r = accel_i_wait_check(s, v, n, all, first);
    for (uint32_t i = 0; i < n; i++) accel_i_waiter_remove(accel_i_host_signal_event(s[i]), &w[i].w);
    accel_i_event_destroy(&local);
    if (w != local_w) accel_i_dev_free(dev, w, (size_t)n * sizeof *w);
    return r;
}
#endif

static accel_result accel_i_host_signal_wait(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                             uint64_t timeout_ns, uint32_t* first) {
    accel_result r = accel_i_wait_check(s, v, n, all, first);
    if (r != ACCEL_TIMEOUT || timeout_ns == 0) return r;
#if defined(ACCEL_NO_THREADS)
    r = ACCEL_ERROR_DEADLOCK;   /* the public wait logs it */
#else
    if (n == 1) {
        accel_i_event_wait(accel_i_host_signal_event(s[0]), v[0], accel_i_deadline(timeout_ns));
        r = accel_i_wait_check(s, v, n, all, first);
    } else {
        r = accel_i_cpu_wait_multi(s, v, n, all, accel_i_deadline(timeout_ns), first);
    }
#endif
    return r;
}

/* ==== core: raising signals ==== */
/* Every raise goes through accel_i_raise: the backend's host word first (readers and host waiters see
   the value at once), then the device side (signal_publish: what device-side waiters watch). A raise
   that fails a signal first fails the work that handed a wait on it to the device (DESIGN 6.1: that
   work may still run, and every signal it signals reads failed with the same reason), and only then
   publishes the failure to the device, so no device waiter is released before what it releases
   reads failed. */
/* in core: failure after hand-off */
static bool accel_i_fail_handed_off(accel_signal* s, uint64_t before, uint64_t failed);
static uint64_t accel_i_raise(accel_signal* s, uint64_t v) {
    accel_device* dev = s->obj.device;
    const accel_backend* be = dev->backend;
    uint64_t before = 0, old;
    bool fail = accel_i_failed(v);
    if (fail) before = be->signal_value(s);
    old = be->signal_raise(s, v);
    if (accel_i_failed(old) || (!fail && old >= v)) return old;   /* nothing changed */
    if (fail && accel_i_fail_handed_off(s, before, v)) return old;   /* it published the failure */
    if (be->walk) be->walk->signal_publish(s, v);
    else accel_i_dword_raise(s, v);
    return old;
}
/* A batch stopped by a failed wait (or an error): fail every signal the rest of it would have signalled. */
static void accel_i_fail_rest(accel_i_batch* b, uint32_t from, uint64_t failed_value) {
    for (uint32_t i = from; i < b->count; i++) {
        accel_i_cmd* c = &b->cmds[i];
        if (c->kind == ACCEL_I_CMD_SIGNAL) accel_i_raise(c->u.sig.signal, failed_value);
        else if (c->flags & ACCEL_I_CMD_QMEM_POINT) accel_i_qmem_skipped(c, failed_value);
    }
}

/* ==== core: queue reports ==== */
/* One queue's part of a hang report: the (signal, value) it is blocked on (s: NULL when none) and how
   many of its batches are unfinished. Returns the length written (at most cap - 1). Backends call it
   from their queue_describe. */
static size_t accel_i_describe_queue(char* out, size_t cap, const accel_queue* q, uint64_t pending,
                                     accel_signal* s, uint64_t v) {
    out[0] = '\0';
    if (s)
        accel_i_cut(out, cap, snprintf(out, cap,
                       " queue %p%s%s%s (%llu unfinished batches) waits for signal %p%s%s%s >= %llu "
                       "(it is at %llu);",
                       (const void*)q, ACCEL_I_LABEL(&q->obj), (unsigned long long)pending,
                       (void*)s, ACCEL_I_LABEL(&s->obj),
                       (unsigned long long)v, (unsigned long long)accel_i_signal_value(s)));
    else if (pending)
        accel_i_cut(out, cap, snprintf(out, cap,
                                       " queue %p%s%s%s (%llu unfinished batches) has not reached a wait;",
                                       (const void*)q, ACCEL_I_LABEL(&q->obj), (unsigned long long)pending));
    return strlen(out);
}

#if !defined(ACCEL_NO_THREADS)
/* What a queue's executor (or worker) is blocked on, published on debug devices for the hang report.
   The executor clears it before its batch can release the signal, and the report reads it under the
   same lock, so the signal it names is alive while it is read. */
typedef struct accel_i_blocked { accel_i_a32 lock; accel_signal* s; uint64_t v; } accel_i_blocked;
static void accel_i_blocked_set(accel_i_blocked* b, accel_signal* s, uint64_t v) {
    accel_i_spin_lock(&b->lock);
    b->s = s;
    b->v = v;
    accel_i_spin_unlock(&b->lock);
}
static size_t accel_i_blocked_describe(accel_i_blocked* b, char* out, size_t cap, const accel_queue* q,
                                       uint64_t pending) {
    size_t len;
    accel_i_spin_lock(&b->lock);
    len = accel_i_describe_queue(out, cap, q, pending, b->s, b->v);
    accel_i_spin_unlock(&b->lock);
    return len;
}
#endif

/* ==== core: recording ==== */
static accel_i_batch* accel_i_batch_new(accel_device* dev) {
    accel_i_batch* b = (accel_i_batch*)accel_i_dev_alloc(dev, sizeof *b);
    if (b) memset(b, 0, sizeof *b);
    return b;
}
static void accel_i_batch_free(accel_device* dev, accel_i_batch* b) {
    accel_i_dev_free(dev, b->cmds, b->cmds_bytes);
    accel_i_dev_free(dev, b->arena, b->arena_cap);
    accel_i_dev_free(dev, b, sizeof *b);
}
/* q's first command with o: q holds o from now on if it may (see "core: queue holds"). */
static bool accel_i_hold_claim(accel_queue* q, accel_i_object* o) {
    accel_device* dev = q->obj.device;
    bool took = false;
    if (o->device != dev || atomic_load_explicit(&o->holder, memory_order_relaxed) != 0 ||
        !atomic_load_explicit(&o->handle, memory_order_relaxed) ||   /* e.g. a view's root: no lock */
        (o->kind == ACCEL_I_BUFFER && accel_i_buffer_root((accel_buffer*)o)->qmem))
        return false;
    accel_i_spin_lock(&dev->objects_lock);
    if (atomic_load_explicit(&o->handle, memory_order_relaxed) &&   /* a handle to end the hold */
        atomic_load_explicit(&o->holder, memory_order_relaxed) == 0) {
        atomic_store_explicit(&o->holder, (uint64_t)(uintptr_t)q, memory_order_relaxed);
        accel_i_retain(o);
        o->hold_prev = NULL;
        o->hold_next = q->held;
        if (q->held) q->held->hold_prev = o;
        q->held = o;
        took = true;
    }
    accel_i_spin_unlock(&dev->objects_lock);
    return took;
}
/* Does q hold o for a command of the batch it records (then stamped with that batch's seq)? */
static bool accel_i_hold(accel_queue* q, void* obj) {
    accel_i_object* o = (accel_i_object*)obj;
    if (atomic_load_explicit(&o->holder, memory_order_relaxed) != (uint64_t)(uintptr_t)q &&
        !accel_i_hold_claim(q, o))
        return false;
    atomic_store_explicit(&o->held_until, q->submits + 1u, memory_order_relaxed);
    return true;
}
/* Does q hold a, b (unless NULL) and the n buffers for a command of the batch it records? */
static bool accel_i_holds(accel_queue* q, void* a, void* b, accel_buffer* const* bufs, uint32_t n) {
    if (q->recording) return false;   /* a command list keeps references of its own */
    if (!accel_i_hold(q, a) || (b && !accel_i_hold(q, b))) return false;
    for (uint32_t i = 0; i < n; i++) if (!accel_i_hold(q, bufs[i])) return false;
    return true;
}
/* One reference each to a, b (unless NULL) and the n buffers. */
static void accel_i_retain_all(void* a, void* b, accel_buffer* const* bufs, uint32_t n) {
    accel_i_retain(a);
    if (b) accel_i_retain(b);
    for (uint32_t i = 0; i < n; i++) accel_i_retain(bufs[i]);
}
/* A command's references to its objects (a, b unless NULL, the n buffers): q's holds (the command is
   flagged SHARED: it holds none of its own), else one each. */
static void accel_i_rec_refs(accel_queue* q, accel_i_cmd* c, void* a, void* b, accel_buffer* const* bufs,
                             uint32_t n) {
    if (accel_i_holds(q, a, b, bufs, n)) c->flags |= ACCEL_I_CMD_SHARED;
    else accel_i_retain_all(a, b, bufs, n);
}
/* A backend takes b (not to refuse it): b gets q's next seq. */
static void accel_i_batch_accepted(accel_queue* q, accel_i_batch* b) { b->seq = ++q->submits; }
/* Releases the objects of a held or unheld list (linked through hold_next). */
static void accel_i_holds_release(accel_i_object* list) {
    for (accel_i_object* next; list; list = next) {
        next = list->hold_next;
        list->hold_prev = list->hold_next = NULL;
        accel_i_release(list);
    }
}
/* q's teardown, its work done: drops every hold left, and the unheld list. The held ones one at a time
   under the lock: once its `holder` is 0, another queue may claim an object and link it into its own
   list, so q's list is not followed after the lock is let go. */
static void accel_i_holds_drop(accel_queue* q) {
    accel_device* dev = q->obj.device;
    accel_i_object* o;
    do {
        accel_i_spin_lock(&dev->objects_lock);
        if ((o = q->held) != NULL) {
            if ((q->held = o->hold_next) != NULL) q->held->hold_prev = NULL;
            o->hold_next = NULL;
            atomic_store_explicit(&o->holder, 0u, memory_order_relaxed);
        }
        accel_i_spin_unlock(&dev->objects_lock);
        if (o) accel_i_release(o);
    } while (o);
    accel_i_holds_release(q->unheld);   /* no unhold reaches q any more; nobody claims these */
    q->unheld = NULL;
}
/* Recycling a batch of seq s: q's completed rises to s; returns the unheld objects now no batch's
   (linked through hold_next), for accel_i_holds_release (q's free_lock held). */
static accel_i_object* accel_i_holds_done(accel_queue* q, uint64_t s) {
    accel_i_object **at = &q->unheld, *done = NULL;
    if (s <= q->completed) return NULL;
    q->completed = s;
    while (*at) {
        accel_i_object* o = *at;
        if (atomic_load_explicit(&o->held_until, memory_order_relaxed) > s) {
            at = &o->hold_next;
            continue;
        }
        *at = o->hold_next;
        o->hold_next = done;
        done = o;
    }
    return done;
}

/* Drops the references the batch's commands hold. */
static void accel_i_batch_release(accel_i_batch* b) {
    for (uint32_t i = 0; i < b->count; i++) {
        accel_i_cmd* c = &b->cmds[i];
        if (c->flags & ACCEL_I_CMD_SHARED) continue;   /* an earlier exec's references, or q's holds */
        switch (c->kind) {
        case ACCEL_I_CMD_SIGNAL:
            if (c->flags & ACCEL_I_CMD_FOREIGN)
                accel_i_orphan_check(c->u.sig.signal, atomic_fetch_sub(&c->u.sig.signal->foreign, 1u) - 1u);
            accel_i_release(c->u.sig.signal);
            break;
        case ACCEL_I_CMD_WAIT: accel_i_release(c->u.sig.signal); break;
        case ACCEL_I_CMD_EXEC: {
            accel_buffer** bufs = (accel_buffer**)(void*)(b->arena + c->u.exec.buffers);
            uint32_t n = c->u.exec.buffer_count + ((c->flags & ACCEL_I_CMD_INDIRECT) != 0);   /* + counts */
            for (uint32_t j = 0; j < n; j++) accel_i_release(bufs[j]);
            accel_i_release(c->u.exec.program);
            break;
        }
        case ACCEL_I_CMD_COPY: accel_i_release(c->u.copy.dst); accel_i_release(c->u.copy.src); break;
        case ACCEL_I_CMD_FILL: accel_i_release(c->u.fill.dst); break;
        case ACCEL_I_CMD_UPDATE: accel_i_release(c->u.update.dst); break;
        case ACCEL_I_CMD_TIMESTAMP: accel_i_release(c->u.stamp.dst); break;
        case ACCEL_I_CMD_BARRIER: case ACCEL_I_CMD_HOST_CALL: break;
        case ACCEL_I_CMD_NATIVE:
            if (!(c->flags & ACCEL_I_CMD_QMEM_POINT)) break;
            if (c->u.qmem.held) accel_i_release(c->u.qmem.held);
            accel_i_release(c->u.qmem.buf);
            break;
        case ACCEL_I_CMD_REPLAY: {
            uint32_t n = c->u.replay.patch_count;
            const accel_i_patch* p =
                n ? (const accel_i_patch*)(const void*)(b->arena + c->u.replay.patches) : NULL;
            for (uint32_t j = 0; j < n; j++) if (p[j].buffer) accel_i_release(p[j].buffer);
            accel_i_release(c->u.replay.list);
            break;
        }
        }
    }
    b->count = 0;
    b->pc = 0;
    b->host_checked = 0;
    b->qmem = b->replays = b->peer_host = false;
    b->last_exec = 0;
    b->arena_used = 0;
    b->seq = 0;
}

/* Releases what the batch holds and keeps it for reuse, else frees it: 4 of up to 1 MiB of arena,
   up to 64 small ones (4 KiB of commands and of arena at most: 0.5 MiB a queue), and up to 512 tiny
   ones (1 KiB in all at most: 0.5 MiB a queue). Batches come back in bursts, as many as were in
   flight (a GPU queue's points are applied by whoever waits, often for the last of many batches):
   with only 4 kept, a chain of one-kernel batches would allocate 2-3 times a step. Any thread:
   executors recycle while the recording thread takes. */
static void accel_i_batch_recycle(accel_queue* q, accel_i_batch* b) {
    accel_device* dev = q->obj.device;
    uint64_t seq = b->seq;
    bool small = b->arena_cap <= 4096u && b->cmds_bytes <= 4096u;
    bool tiny = b->arena_cap + b->cmds_bytes <= 1024u;
    accel_i_object* done;
    accel_i_batch_release(b);
    accel_i_spin_lock(&q->free_lock);
    done = accel_i_holds_done(q, seq);
    if (b->arena_cap <= ((size_t)1 << 20) &&
        (q->free_count < 4 || (small && q->free_count < 64) || (tiny && q->free_count < 512))) {
        b->next = q->free_batches;
        q->free_batches = b;
        q->free_count++;
        b = NULL;
    }
    accel_i_spin_unlock(&q->free_lock);
    if (b) accel_i_batch_free(dev, b);
    accel_i_holds_release(done);   /* no batch's any more (core: queue holds) */
}
static accel_i_batch* accel_i_batch_take(accel_queue* q) {
    accel_i_batch* b;
    accel_i_spin_lock(&q->free_lock);
    b = q->free_batches;
    if (b) { q->free_batches = b->next; q->free_count--; }
    accel_i_spin_unlock(&q->free_lock);
    if (!b) b = accel_i_batch_new(q->obj.device);
    if (b) b->next = NULL;
    return b;
}

/* A queue's submitted batches, oldest first, for backends whose executor takes them in order. Push
   and pop from any thread; `lock` also guards whatever else a backend keeps beside the batches. */
typedef struct accel_i_fifo { accel_i_a32 lock; accel_i_batch *head, *tail; } accel_i_fifo;
static void accel_i_fifo_init(accel_i_fifo* f) {
    atomic_init(&f->lock, 0u);
    f->head = f->tail = NULL;
}
static void accel_i_fifo_push(accel_i_fifo* f, accel_i_batch* b) {
    b->next = NULL;
    accel_i_spin_lock(&f->lock);
    if (f->tail) f->tail->next = b; else f->head = b;
    f->tail = b;
    accel_i_spin_unlock(&f->lock);
}
static accel_i_batch* accel_i_fifo_pop(accel_i_fifo* f) {
    accel_i_batch* b;
    accel_i_spin_lock(&f->lock);
    b = f->head;
    if (b && (f->head = b->next) == NULL) f->tail = NULL;
    accel_i_spin_unlock(&f->lock);
    return b;
}

/* Remembers the first recording error of the batch and logs every one. */
static void accel_i_rec_error(accel_queue* q, accel_result r, const char* fmt, ...) ACCEL_I_PRINTF(3, 4);
static void accel_i_rec_error(accel_queue* q, accel_result r, const char* fmt, ...) {
    char msg[ACCEL_I_WHY];
    va_list ap;
    va_start(ap, fmt);
    accel_i_cut(msg, sizeof msg, ACCEL_I_VSNPRINTF(msg, sizeof msg, fmt, ap));
    va_end(ap);
    accel_i_log(q->obj.device, ACCEL_LOG_ERROR,
                "%s (queue %p%s%s%s; %s returns %s)", msg, (void*)q, ACCEL_I_LABEL(&q->obj),
                q->recording ? "accel_queue_record_end" : "the next accel_queue_submit",
                accel_result_string(r));
    if (q->rec_error == ACCEL_OK) q->rec_error = r;
}
/* The recording calls' entry check of object o (accel_i_live's, see core: device generations): a stale
   one is a recording error (DEVICE_LOST). */
static bool accel_i_rec_live(accel_queue* q, const accel_i_object* o, const char* fn) {
    char why[ACCEL_I_WHY];
    if (!accel_i_stale(o)) return true;
    accel_i_rec_error(q, ACCEL_ERROR_DEVICE_LOST, "%s", accel_i_stale_why(o, fn, why, sizeof why));
    return false;
}

/* While q records a command list only exec, copy, fill, update and barrier may be recorded: any other
   command (wait, signal, replay, and kinds added later) is a recording error of the list. */
static bool accel_i_rec_listable(accel_i_cmd_kind kind) {
    return kind == ACCEL_I_CMD_EXEC || kind == ACCEL_I_CMD_COPY || kind == ACCEL_I_CMD_FILL ||
           kind == ACCEL_I_CMD_UPDATE || kind == ACCEL_I_CMD_BARRIER;
}
static bool accel_i_rec_not_recording(accel_queue* q, const char* fn) {
    if (!q->recording) return true;
    accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: not allowed while recording a command list", fn);
    return false;
}

/* Grows an array through the device allocator (which has no realloc). */
static bool accel_i_grow(accel_device* dev, void** p, size_t* cap_bytes, size_t need_bytes) {
    size_t cap = *cap_bytes ? *cap_bytes : 256;
    void* n;
    while (cap < need_bytes) { if (cap > SIZE_MAX / 2) return false; cap *= 2; }
    if (cap == *cap_bytes) return true;
    n = accel_i_dev_alloc(dev, cap);
    if (!n) return false;
    if (*p) { memcpy(n, *p, *cap_bytes); accel_i_dev_free(dev, *p, *cap_bytes); }
    *p = n;
    *cap_bytes = cap;
    return true;
}

/* Appends a command (and `arena` bytes of arena space, offset in *arena_off); NULL on OOM. */
static accel_i_cmd* accel_i_rec_push(accel_queue* q, accel_i_cmd_kind kind, size_t arena, size_t* arena_off,
                                     const char* fn) {
    accel_device* dev = q->obj.device;
    accel_i_batch* b = q->rec;
    accel_i_cmd* c;
    if (!accel_i_rec_live(q, &q->obj, fn)) return NULL;
    if (q->recording && !accel_i_rec_listable(kind) && !accel_i_rec_not_recording(q, fn)) return NULL;
    if (!b && (b = q->rec = accel_i_batch_take(q)) == NULL) goto oom;
    if (((size_t)b->count + 1) * sizeof *b->cmds > b->cmds_bytes) {
        if (b->count >= UINT32_MAX / 2 ||
            !accel_i_grow(dev, (void**)&b->cmds, &b->cmds_bytes, ((size_t)b->count + 1) * sizeof *b->cmds))
            goto oom;
    }
    if (arena) {
        size_t off = (b->arena_used + 15u) & ~(size_t)15u;
        if (arena > SIZE_MAX - off ||
            (off + arena > b->arena_cap && !accel_i_grow(dev, (void**)&b->arena, &b->arena_cap, off + arena)))
            goto oom;
        *arena_off = off;
        b->arena_used = off + arena;
    }
    c = &b->cmds[b->count++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    return c;
oom:
    accel_i_rec_error(q, ACCEL_ERROR_OUT_OF_MEMORY, "%s: out of host memory while recording", fn);
    return NULL;
}

/* Can this queue's device use an object of `other`? */
static bool accel_i_same_device(accel_queue* q, accel_device* other) {
    accel_device* dev = q->obj.device;
    return other == dev || (other->backend == dev->backend && dev->backend->shares_host_memory);
}
/* buf is not NULL and holds [offset, offset + size) (any device's: see accel_i_rec_buffer_ok) */
static bool accel_i_rec_range_ok(accel_queue* q, accel_buffer* buf, size_t offset, size_t size,
                                 const char* fn) {
    if (!buf) { accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: buffer is NULL", fn); return false; }
    if (!accel_i_rec_live(q, &buf->obj, fn)) return false;
    if (!accel_i_range_ok(buf->size, offset, size)) {
        char why[ACCEL_I_WHY];
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: %s", fn, accel_i_range_why(buf, offset, size, why, sizeof why));
        return false;
    }
    return !(accel_i_buffer_root(buf)->qmem & ACCEL_I_QMEM_LATE) || accel_i_qmem_late_use(q, buf, fn);
}
static bool accel_i_rec_buffer_ok(accel_queue* q, accel_buffer* buf, size_t offset, size_t size,
                                  const char* fn) {
    if (buf && !accel_i_same_device(q, buf->obj.device)) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: buffer %p%s%s%s belongs to another device", fn, (void*)buf,
                          ACCEL_I_LABEL(&buf->obj));
        return false;
    }
    return accel_i_rec_range_ok(q, buf, offset, size, fn);
}
/* core: several devices: a copy's buffers (at most one of another device), and its flags */
static bool accel_i_peer_rec_ok(accel_queue* q, accel_buffer* dst, accel_buffer* src, const char* fn);
static uint32_t accel_i_peer_flags(accel_queue* q, const accel_buffer* dst, const accel_buffer* src);
static void accel_i_rec_signal(accel_queue* q, accel_i_cmd_kind kind, accel_signal* s, uint64_t value,
                               const char* fn) {
    accel_i_cmd* c;
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    if (!s) { accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: signal is NULL", fn); return; }
    if (!accel_i_rec_live(q, &s->obj, fn)) return;
    if (value > ACCEL_SIGNAL_MAX) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: value %llu on signal %p%s%s%s is above ACCEL_SIGNAL_MAX",
                          fn, (unsigned long long)value, (void*)s, ACCEL_I_LABEL(&s->obj));
        return;
    }
    if ((c = accel_i_rec_push(q, kind, 0, NULL, fn)) == NULL) return;
    accel_i_rec_refs(q, c, s, NULL, NULL, 0);
    q->qmem_waits += kind == ACCEL_I_CMD_WAIT;
    if (s->obj.device != q->obj.device) {   /* only other devices' batches outlive the signal's device */
        accel_i_atomic_max(kind == ACCEL_I_CMD_WAIT ? &s->wanted : &s->recorded, value);
        if (kind == ACCEL_I_CMD_SIGNAL) {
            atomic_fetch_add(&s->foreign, 1u);
            c->flags |= ACCEL_I_CMD_FOREIGN;
        }
    }
    c->u.sig.signal = s;
    c->u.sig.value = value;
    if (kind == ACCEL_I_CMD_SIGNAL && ACCEL_I_DEBUGGING(q->obj.device)) accel_i_debug_recorded(q, s, value);
}
ACCEL_API void accel_queue_wait(accel_queue* q, accel_signal* s, uint64_t value) {
    accel_i_rec_signal(q, ACCEL_I_CMD_WAIT, s, value, "accel_queue_wait");
}
ACCEL_API void accel_queue_signal(accel_queue* q, accel_signal* s, uint64_t value) {
    accel_i_rec_signal(q, ACCEL_I_CMD_SIGNAL, s, value, "accel_queue_signal");
}

/* kit: the work groups along dimension d of normalised params (local sizes at least 1, as recorded). */
static uint64_t accel_i_groups_along(const accel_exec_params* p, int d) {
    if (p->local_size[d] == 1) return p->global_size[d];   /* no division: a tiny exec's cost (CPU) */
    return ((uint64_t)p->global_size[d] + p->local_size[d] - 1) / p->local_size[d];
}
/* Normalises params (a local size of 0 counts as 1) and checks them against the device limits. A global
   size of 0 gives 0 groups in that dimension (the exec is a no-op) and is checked like any other. */
static bool accel_i_exec_params_ok(accel_queue* q, accel_exec_params* p, const char* fn) {
    const accel_device_info* info = &q->obj.device->info;
    uint64_t invocations = 1;
    for (int d = 0; d < 3; d++) {
        uint64_t groups;
        if (p->local_size[d] == 0) p->local_size[d] = 1;
        groups = accel_i_groups_along(p, d);
        invocations *= p->local_size[d];
        if (p->local_size[d] > info->max_group_size[d] || groups > info->max_group_count[d]) {
            accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                              "%s: dimension %d: local size %u (max %u), %llu groups (max %u)",
                              fn, d, p->local_size[d], info->max_group_size[d], (unsigned long long)groups,
                              info->max_group_count[d]);
            return false;
        }
    }
    if (invocations > info->max_group_invocations) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: %llu invocations per group (max %u)",
                          fn, (unsigned long long)invocations, info->max_group_invocations);
        return false;
    }
    return true;
}
static bool accel_i_exec_args_ok(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                                 uint32_t buffer_count, const uint32_t* constants, uint32_t constant_count,
                                 const char* fn) {
    if (q->type != ACCEL_QUEUE_COMPUTE) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: exec on a COPY queue", fn);
        return false;
    }
    if (!p) { accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: program is NULL", fn); return false; }
    if (!accel_i_same_device(q, p->obj.device)) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: program %p%s%s%s belongs to another device", fn, (void*)p,
                          ACCEL_I_LABEL(&p->obj));
        return false;
    }
    if (!accel_i_rec_live(q, &p->obj, fn)) return false;
    if (buffer_count != p->buffer_count || constant_count != p->constant_count) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: program%s%s%s takes %u buffers and %u constants, got %u and %u",
                          fn, ACCEL_I_LABEL(&p->obj), p->buffer_count, p->constant_count, buffer_count,
                          constant_count);
        return false;
    }
    if ((buffer_count && !buffers) || (constant_count && !constants)) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: buffers or constants array is NULL", fn);
        return false;
    }
    for (uint32_t i = 0; i < buffer_count; i++)
        if (!accel_i_rec_buffer_ok(q, buffers[i], 0, buffers[i] ? buffers[i]->size : 1, fn)) return false;
    return true;
}
/* An exec over no work items (a global size of 0 in some dimension). */
static bool accel_i_no_work(const accel_exec_params* p) {
    return !p->global_size[0] || !p->global_size[1] || !p->global_size[2];
}
/* Does the last direct exec of batch b (its twin) bind program p and these buffers? Its references then
   hold them for a new exec too (ACCEL_I_CMD_SHARED), so a chain or a loop of one kernel over the same
   buffers takes no atomic reference count an exec (four, with the releases). */
static bool accel_i_exec_twin(const accel_i_batch* b, const accel_program* p, accel_buffer* const* buffers,
                              uint32_t buffer_count) {
    const accel_i_cmd* l;
    accel_buffer* const* had;
    if (!b || b->last_exec == 0 || (buffer_count && !buffers)) return false;
    l = &b->cmds[b->last_exec - 1];
    if (l->u.exec.program != p || l->u.exec.buffer_count != buffer_count) return false;
    had = (accel_buffer* const*)(const void*)(b->arena + l->u.exec.buffers);
    for (uint32_t i = 0; i < buffer_count; i++) if (had[i] != buffers[i]) return false;   /* no memcmp */
    return true;
}
/* Is o held by q (see "core: queue holds")? Then o is of q's device, its handle lives, it is no queue
   memory, and a command of q recorded it after its checks: an exec's checks of it hold again but for its
   generation (checked apart). */
static bool accel_i_held_by(const accel_queue* q, const void* o) {
    return atomic_load_explicit(&((const accel_i_object*)o)->holder, memory_order_relaxed) ==
           (uint64_t)(uintptr_t)q;
}
/* May an exec skip accel_i_exec_args_ok? Where q holds its program and every buffer, as many as the
   program takes, the objects' checks hold again (accel_i_held_by), and only their generations, the
   counts and the arrays are checked: a loop of submits of the same kernels (a chain a batch a step, a
   decode loop) records each exec at a lower cost. */
static bool accel_i_exec_held(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                              uint32_t buffer_count, const uint32_t* constants, uint32_t constant_count) {
    if (!p || q->type != ACCEL_QUEUE_COMPUTE || !accel_i_held_by(q, p) || buffer_count != p->buffer_count ||
        constant_count != p->constant_count || (buffer_count && !buffers) || (constant_count && !constants) ||
        accel_i_stale(&p->obj))
        return false;
    for (uint32_t i = 0; i < buffer_count; i++)
        if (!buffers[i] || !accel_i_held_by(q, buffers[i]) || accel_i_stale(&buffers[i]->obj)) return false;
    return true;
}
/* May an exec skip accel_i_exec_params_ok? Where its params, normalised (as that does), are those of
   the last exec that passed it on q with work: the device's limits do not change. */
static bool accel_i_params_known(accel_queue* q, accel_exec_params* params) {
    for (int d = 0; d < 3; d++) if (params->local_size[d] == 0) params->local_size[d] = 1;
    return q->known_params && memcmp(&q->known, params, sizeof *params) == 0;
}
/* Records a checked exec: its bindings, for an indirect exec (counts non-NULL) the counts buffer and
   offset after them (accel_i_exec_counts), then its constants; shared: it has a twin (accel_i_exec_twin). */
static void accel_i_rec_exec(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                             uint32_t buffer_count, const uint32_t* constants, uint32_t constant_count,
                             const accel_exec_params* params, accel_buffer* counts, size_t offset,
                             bool shared, const char* fn) {
    size_t bytes_b = (size_t)buffer_count * sizeof(accel_buffer*), bytes_c = (size_t)constant_count * 4u,
           bytes_i = counts ? sizeof(accel_buffer*) + sizeof(size_t) : 0, off = 0;
    accel_i_cmd* c;
    if ((c = accel_i_rec_push(q, ACCEL_I_CMD_EXEC, bytes_b + bytes_i + bytes_c + 1, &off, fn)) == NULL)
        return;
    for (uint32_t i = 0; i < buffer_count; i++)   /* a few: no memcpy */
        ((accel_buffer**)(void*)(q->rec->arena + off))[i] = buffers[i];
    if (counts) {
        const accel_i_walk_ops* walk = q->obj.device->backend->walk;
        memcpy(q->rec->arena + off + bytes_b, &counts, sizeof counts);
        memcpy(q->rec->arena + off + bytes_b + sizeof counts, &offset, sizeof offset);
        c->flags = ACCEL_I_CMD_INDIRECT | (walk && walk->indirect_on_host ? ACCEL_I_CMD_HOST_READ : 0u);
    }
    if (bytes_c) memcpy(q->rec->arena + off + bytes_b + bytes_i, constants, bytes_c);
    if (shared && !counts) c->flags |= ACCEL_I_CMD_SHARED;
    else accel_i_rec_refs(q, c, p, counts, buffers, buffer_count);
    if (!counts) q->rec->last_exec = q->rec->count;   /* this one, + 1 */
    c->u.exec.program = p;
    c->u.exec.buffers = off;
    c->u.exec.constants = off + bytes_b + bytes_i;
    c->u.exec.buffer_count = buffer_count;
    c->u.exec.constant_count = constant_count;
    c->u.exec.params = *params;
}
/* The full checks of an exec (false: a recording error, or no work outside a list: nothing to record). */
static bool accel_i_exec_checked(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                                 uint32_t buffer_count, const uint32_t* constants, uint32_t constant_count,
                                 accel_exec_params* params, const char* fn) {
    if (!accel_i_exec_held(q, p, buffers, buffer_count, constants, constant_count) &&
        !accel_i_exec_args_ok(q, p, buffers, buffer_count, constants, constant_count, fn))
        return false;
    if (accel_i_params_known(q, params)) return true;
    if (!accel_i_exec_params_ok(q, params, fn)) return false;
    if (!accel_i_no_work(params)) {   /* accel_i_params_known's from now on */
        q->known = *params;
        q->known_params = true;
    } else {   /* no work: a no-op, left out of a batch; a list keeps it (its commands' indices are the
                  patches' addresses, and its patches are still checked): every backend builds it as
                  nothing */
        if (ACCEL_I_DEBUGGING(q->obj.device))
            accel_i_log(q->obj.device, ACCEL_LOG_WARN,
                        "accel_queue_exec: global size %u x %u x %u of program%s%s%s is no work, nothing "
                        "runs (an unused dimension takes 1)",
                        params->global_size[0], params->global_size[1], params->global_size[2],
                        ACCEL_I_LABEL(&p->obj));
        return q->recording;
    }
    return true;
}
ACCEL_API void accel_queue_exec(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                                uint32_t buffer_count, const uint32_t* constants, uint32_t constant_count,
                                accel_exec_params params) {
    const char* fn = "accel_queue_exec";
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    if (accel_i_exec_checked(q, p, buffers, buffer_count, constants, constant_count, &params, fn))
        accel_i_rec_exec(q, p, buffers, buffer_count, constants, constant_count, &params, NULL, 0,
                         accel_i_exec_twin(q->rec, p, buffers, buffer_count), fn);
}
/* A view as its root and the offset in it: what copy/fill/update commands record. */
static void accel_i_rec_resolve(accel_buffer** buf, size_t* offset) {
    *offset += (*buf)->offset;
    *buf = accel_i_buffer_root(*buf);
}
/* The same for a command's destination, which must not be read_only. */
static bool accel_i_rec_target(accel_queue* q, accel_buffer** buf, size_t* offset, const char* fn) {
    if ((*buf)->read_only) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: buffer%s%s%s is read_only", fn, ACCEL_I_LABEL(&(*buf)->obj));
        return false;
    }
    accel_i_rec_resolve(buf, offset);
    return true;
}
ACCEL_API void accel_queue_copy(accel_queue* q, accel_buffer* dst, size_t dst_offset,
                                accel_buffer* src, size_t src_offset, size_t size) {
    const char* fn = "accel_queue_copy";
    size_t dst_rel = dst_offset, src_rel = src_offset;
    accel_i_cmd* c;
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    if (!accel_i_rec_range_ok(q, dst, dst_offset, size, fn) ||
        !accel_i_rec_range_ok(q, src, src_offset, size, fn) || !accel_i_peer_rec_ok(q, dst, src, fn))
        return;
    if (!accel_i_rec_target(q, &dst, &dst_offset, fn)) return;
    accel_i_rec_resolve(&src, &src_offset);
    if (dst == src && dst_offset < src_offset + size && src_offset < dst_offset + size) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: overlapping ranges in buffer%s%s%s", fn, ACCEL_I_LABEL(&dst->obj));
        return;
    }
    if ((c = accel_i_rec_push(q, ACCEL_I_CMD_COPY, 0, NULL, fn)) == NULL) return;
    if ((c->flags = accel_i_peer_flags(q, dst, src)) & ACCEL_I_CMD_PEER_HOST) q->rec->peer_host = true;
    accel_i_rec_refs(q, c, dst, src, NULL, 0);
    c->u.copy.dst = dst; c->u.copy.src = src;
    c->u.copy.dst_offset = dst_offset; c->u.copy.src_offset = src_offset; c->u.copy.size = size;
    c->u.copy.dst_rel = dst_rel; c->u.copy.src_rel = src_rel;
}
/* A fill's offset (in the buffer as given) and size must be multiples of 4; so must its offset in the
   root where the backend does not fill at any byte (a view's offset may be odd on the CPU backend). */
static bool accel_i_fill_aligned(accel_queue* q, size_t rel, size_t root_offset, size_t size,
                                 const char* fn) {
    if ((rel | size) & 3u) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: offset %zu and size %zu must be multiples of 4", fn, rel, size);
        return false;
    }
    if ((root_offset & 3u) && !q->obj.device->backend->fills_any_byte) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: offset %zu is at %zu in the view's root buffer, not a multiple of 4",
                          fn, rel, root_offset);
        return false;
    }
    return true;
}
ACCEL_API void accel_queue_fill(accel_queue* q, accel_buffer* dst, size_t offset, size_t size,
                                uint32_t pattern) {
    const char* fn = "accel_queue_fill";
    size_t rel = offset;
    accel_i_cmd* c;
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    if (!accel_i_rec_buffer_ok(q, dst, offset, size, fn) || !accel_i_rec_target(q, &dst, &offset, fn)) return;
    if (!accel_i_fill_aligned(q, rel, offset, size, fn)) return;
    if ((c = accel_i_rec_push(q, ACCEL_I_CMD_FILL, 0, NULL, fn)) == NULL) return;
    accel_i_rec_refs(q, c, dst, NULL, NULL, 0);
    c->u.fill.dst = dst; c->u.fill.offset = offset; c->u.fill.size = size;
    c->u.fill.pattern = pattern; c->u.fill.rel = rel;
}
ACCEL_API void accel_queue_update(accel_queue* q, accel_buffer* dst, size_t offset,
                                  const void* data, size_t size) {
    const char* fn = "accel_queue_update";
    size_t off = 0;
    accel_i_cmd* c;
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    if (!accel_i_rec_buffer_ok(q, dst, offset, size, fn) || !accel_i_rec_target(q, &dst, &offset, fn)) return;
    if (!data) { accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: data is NULL", fn); return; }
    if ((c = accel_i_rec_push(q, ACCEL_I_CMD_UPDATE, size, &off, fn)) == NULL) return;
    memcpy(q->rec->arena + off, data, size);
    accel_i_rec_refs(q, c, dst, NULL, NULL, 0);
    c->u.update.dst = dst; c->u.update.offset = offset; c->u.update.size = size; c->u.update.data = off;
}
ACCEL_API void accel_queue_barrier(accel_queue* q) {
    if (!q) accel_i_invalid(NULL, "accel_queue_barrier", "queue is NULL");
    else accel_i_rec_push(q, ACCEL_I_CMD_BARRIER, 0, NULL, "accel_queue_barrier");
}
/* A native step or host call: recording errors for a NULL queue or fn, else the recorded command. */
static accel_i_cmd* accel_i_rec_call(accel_queue* q, accel_i_cmd_kind kind, bool has_fn, const char* fn) {
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return NULL; }
    if (!has_fn) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: fn is NULL", fn);
        return NULL;
    }
    return accel_i_rec_push(q, kind, 0, NULL, fn);
}
ACCEL_API void accel_queue_native(accel_queue* q, void (*fn)(const accel_native* n, void* user), void* user) {
    accel_i_cmd* c = accel_i_rec_call(q, ACCEL_I_CMD_NATIVE, fn != NULL, "accel_queue_native");
    if (!c) return;
    c->u.native.fn = fn;
    c->u.native.user = user;
}
ACCEL_API void accel_queue_host_call(accel_queue* q, void (*fn)(void* user), void* user) {
    accel_i_cmd* c = accel_i_rec_call(q, ACCEL_I_CMD_HOST_CALL, fn != NULL, "accel_queue_host_call");
    if (!c) return;
    c->u.host.fn = fn;
    c->u.host.user = user;
}

ACCEL_API uint64_t accel_host_time_ns(void) { return accel_i_now_ns(); }
ACCEL_API void accel_queue_timestamp(accel_queue* q, accel_buffer* dst, size_t offset) {
    const char* fn = "accel_queue_timestamp";
    accel_i_cmd* c;
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    size_t rel = offset;
    if (!accel_i_rec_buffer_ok(q, dst, offset, 8, fn)) return;
    if (!accel_i_rec_target(q, &dst, &offset, fn)) return;   /* a view: its root and the offset in it */
    if (dst->qmem) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: dst is queue memory (accel_queue_alloc)", fn);
        return;
    }
    if ((rel | offset) & 7u) {   /* a view may start at any byte of its root on the CPU */
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: offset %zu (%zu in its root) is not a "
                          "multiple of 8", fn, rel, offset);
        return;
    }
    if ((c = accel_i_rec_push(q, ACCEL_I_CMD_TIMESTAMP, 0, NULL, fn)) == NULL) return;
    accel_i_rec_refs(q, c, dst, NULL, NULL, 0);
    c->u.stamp.dst = dst; c->u.stamp.offset = offset;
}

/* Submit with a host span (the batch is the backend's once handed over: its size is read before).
   No threads: the batch runs inside the submit, and a host call of it may destroy q or its device
   (which closes the trace): q is held over the submit, and the span written only to a trace still open. */
static accel_result accel_i_submit_traced(accel_queue* q, accel_i_batch* b) {
    accel_device* dev = q->obj.device;
    uint32_t count = b->count;
    uint64_t t0 = accel_i_now_ns();
    accel_result r;
#if defined(ACCEL_NO_THREADS)
    accel_i_retain(q);
    r = dev->backend->queue_submit(q, b);
    if (ACCEL_I_TRACING(dev))
        accel_i_trace_host_span(dev, "submit", accel_i_label(&q->obj), t0, accel_i_now_ns(), "commands",
                                count);
    accel_i_release(q);
#else
    r = dev->backend->queue_submit(q, b);
    accel_i_trace_host_span(dev, "submit", accel_i_label(&q->obj), t0, accel_i_now_ns(), "commands", count);
#endif
    return r;
}
ACCEL_API accel_result accel_queue_submit(accel_queue* q) {
    accel_i_batch* b;
    accel_result r;
    if (!q) return accel_i_invalid(NULL, "accel_queue_submit", "queue is NULL");
    if (q->recording) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "accel_queue_submit: the queue is recording a command list "
                          "(call accel_queue_record_end)");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    b = q->rec;
    r = q->rec_error;
    q->rec = NULL;
    q->rec_error = ACCEL_OK;
    if (ACCEL_I_DEBUGGING(q->obj.device)) accel_i_debug_recorded(q, NULL, 0);
    if (accel_i_stale(&q->obj)) r = accel_i_live(&q->obj, "accel_queue_submit");
    else if (r == ACCEL_OK && accel_i_lost(q->obj.device)) r = ACCEL_ERROR_DEVICE_LOST;
    if (r != ACCEL_OK || !b || b->count == 0) {   /* all or nothing: a bad batch runs nothing */
        for (uint32_t i = 0; r != ACCEL_OK && b && b->qmem && i < b->count; i++)   /* its alloc points */
            if (b->cmds[i].flags & ACCEL_I_CMD_QMEM_POINT)
                accel_i_qmem_skipped(&b->cmds[i], accel_i_failed_value(r));
        if (b) accel_i_batch_recycle(q, b);
        return r;
    }
    if (ACCEL_I_DEBUGGING(q->obj.device)) accel_i_debug_promise(b);
    if (ACCEL_I_TRACING(q->obj.device)) return accel_i_submit_traced(q, b);
    return q->obj.device->backend->queue_submit(q, b);
}
static accel_result accel_i_queue_finish(accel_queue* q, uint64_t timeout_ns) {
    accel_result r, w;
    uint64_t t0;
    r = accel_queue_submit(q);
    t0 = ACCEL_I_TRACING(q->obj.device) ? accel_i_now_ns() : 0;
    w = q->obj.device->backend->queue_wait_idle(q, timeout_ns);
    if (t0 && ACCEL_I_TRACING(q->obj.device))   /* still traced: see accel_queue_finish */
        accel_i_trace_host_span(q->obj.device, "finish", accel_i_label(&q->obj), t0, accel_i_now_ns(),
                                NULL, 0);
    if (((w == ACCEL_TIMEOUT && timeout_ns != 0) || w == ACCEL_ERROR_DEADLOCK) &&
        ACCEL_I_DEBUGGING(q->obj.device))
        accel_i_debug_hang(q->obj.device, "accel_queue_finish", NULL, NULL, 0, timeout_ns, w);
    return r != ACCEL_OK ? r : w;
}
ACCEL_API accel_result accel_queue_finish(accel_queue* q, uint64_t timeout_ns) {
    if (!q) return accel_i_invalid(NULL, "accel_queue_finish", "queue is NULL");
    if (timeout_ns == ACCEL_WAIT_FOREVER && accel_i_called_from(q, NULL, "accel_queue_finish"))
        return ACCEL_ERROR_DEADLOCK;
#if defined(ACCEL_NO_THREADS)
    {   /* q's work runs here, and a host call of it may destroy q or its device (which closes the
           trace): q, and so its device, held over the finish (see No-threads and WASM builds) */
        accel_result r;
        accel_i_retain(q);
        r = accel_i_queue_finish(q, timeout_ns);
        accel_i_release(q);
        return r;
    }
#else
    return accel_i_queue_finish(q, timeout_ns);
#endif
}

ACCEL_API accel_result accel_queue_set_label(accel_queue* q, const char* label) {
    accel_result r;
    if (!q) return accel_i_invalid(NULL, "accel_queue_set_label", "queue is NULL");
    if (accel_i_stale(&q->obj)) return accel_i_live(&q->obj, "accel_queue_set_label");
    r = accel_i_set_label(&q->obj, label, "accel_queue_set_label");
    /* its track's new name */
    if (r == ACCEL_OK && ACCEL_I_TRACING(q->obj.device)) accel_i_trace_queue_name(q);
    return r;
}
ACCEL_API accel_result accel_queue_create(accel_device* dev, accel_queue_type type, accel_queue** out) {
    accel_result r;
    if (out) *out = NULL;
    if ((r = accel_i_create_args(dev, true, out, "accel_queue_create")) != ACCEL_OK) return r;
    if (type != ACCEL_QUEUE_COMPUTE && type != ACCEL_QUEUE_COPY)
        return accel_i_fail(dev, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_queue_create: unknown queue type %d", (int)type);
    if (!accel_i_creates_enter(dev, "accel_queue_create")) return ACCEL_ERROR_DEVICE_LOST;
    r = dev->backend->queue_create(dev, type, out);
    accel_i_creates_leave(dev);
    return r;
}
/* Core part of a backend's queue creation: the recording state. */
static void accel_i_queue_init(accel_queue* q, accel_device* dev, accel_queue_type type) {
    q->type = type;
    q->rec = NULL;
    q->rec_aside = NULL;
    q->rec_error = ACCEL_OK;
    q->recording = q->replay_stages = q->replay_sorted = false;
    atomic_init(&q->free_lock, 0u);
    atomic_init(&q->dlisted, 0u);
    q->free_batches = NULL;
    q->free_count = 0;
    q->submits = q->completed = 0;
    q->held = q->unheld = NULL;
    q->known_params = false;
    atomic_init(&q->unsubmitted_lock, 0u);
    q->unsubmitted_n = 0;
    q->stage[0] = q->stage[1] = NULL;
    accel_i_object_init(&q->obj, dev, ACCEL_I_QUEUE,
                        type == ACCEL_QUEUE_COPY ? "copy queue" : "compute queue");
    accel_i_trace_queue(q);
}
static void accel_i_stage_drop(accel_queue* q);   /* core: several devices */
/* Core part of a backend's queue teardown: drops the unsubmitted batch and the recycled ones. */
static void accel_i_queue_fini(accel_queue* q) {
    accel_device* dev = q->obj.device;
    if (q->rec) { accel_i_batch_release(q->rec); accel_i_batch_free(dev, q->rec); q->rec = NULL; }
    if (q->rec_aside) {
        accel_i_batch_release(q->rec_aside);
        accel_i_batch_free(dev, q->rec_aside);
        q->rec_aside = NULL;
    }
    while (q->free_batches) {
        accel_i_batch* b = q->free_batches;
        q->free_batches = b->next;
        accel_i_batch_free(dev, b);
    }
    q->free_count = 0;
    accel_i_holds_drop(q);
    accel_i_stage_drop(q);
    accel_i_trace_queue_fini(q);
}
/* A destroy waits for the queue's submitted work; a batch blocked on a signal that nobody sets keeps
   it waiting forever. Never silently: after a second, then at doubling intervals (up to 32 s),
   log what the queue waits for and the remedy. No-threads builds never wait here (the backend drops
   parked batches and says so). */
static void accel_i_queue_settle(accel_queue* q, const char* fn) {
#if defined(ACCEL_NO_THREADS)
    (void)q; (void)fn;
#else
    accel_device* dev = q->obj.device;
    uint64_t step = 1000000000u, waited = 0;
    while (dev->backend->queue_wait_idle(q, step) == ACCEL_TIMEOUT) {
        char what[1536];
        size_t n = dev->backend->queue_describe ? dev->backend->queue_describe(q, what, sizeof what) : 0;
        waited += step;
        if (n == 0)
            accel_i_cut(what, sizeof what, snprintf(what, sizeof what, " queue %p%s%s%s has unfinished work",
                           (void*)q, ACCEL_I_LABEL(&q->obj)));
        accel_i_log(dev, ACCEL_LOG_WARN,
                    "%s: still waiting after %llu s; fail (accel_signal_fail) or set from another "
                    "thread the signal it waits for:%s",
                    fn, (unsigned long long)(waited / 1000000000u), what);
        step = accel_i_backoff(step, 32000000000u);
    }
#endif
}
ACCEL_API void accel_queue_destroy(accel_queue* q) {
    if (!q || accel_i_called_from(q, NULL, "accel_queue_destroy")) return;
    accel_i_queue_settle(q, "accel_queue_destroy");
    accel_i_handle_drop(q);
}

ACCEL_API accel_exec_params accel_exec_1d(uint32_t global, uint32_t local) {
    accel_exec_params p = { { global, 1, 1 }, { local, 1, 1 } };
    return p;
}
ACCEL_API accel_exec_params accel_exec_2d(uint32_t gx, uint32_t gy, uint32_t lx, uint32_t ly) {
    accel_exec_params p = { { gx, gy, 1 }, { lx, ly, 1 } };
    return p;
}
ACCEL_API accel_exec_params accel_exec_3d(const uint32_t global[3], const uint32_t local[3]) {
    accel_exec_params p = { { 1, 1, 1 }, { 1, 1, 1 } };
    for (int d = 0; d < 3; d++) {
        if (global) p.global_size[d] = global[d];
        if (local) p.local_size[d] = local[d];
    }
    return p;
}

/* ==== core: queue-ordered memory ==== */
/* The device's pool of roots: buffers of the backend's ordinary buffer_create at a size class (4 a
   doubling, at least 256 bytes), keyed by class and memory kind. An accel_queue_alloc handle takes its
   memory from the pool at its alloc's point of the queue's order and gives it back at its free's point
   (see "core: queue-ordered memory at its point" below; every backend). A root given back is owned by
   the freeing queue: a later alloc point on that queue comes after the free in the queue's order,
   after every command that used it (or that the queue waited for), so it may take the root whatever is
   still pending. Another queue takes a root only when idle: no command holds it (references; the
   pool's is the root's handle). No host wait anywhere; the pool keeps its roots until the device goes
   (idle ones are given back when a new root does not fit). Released handles are kept for reuse (up to
   ACCEL_I_QMEM_VIEWS): an alloc / free pair then costs no host allocation, one pool lock each, and the
   handle's and root's reference counts. */
#define ACCEL_I_QMEM_HANDLE 1u    /* an accel_queue_alloc handle */
#define ACCEL_I_QMEM_CLASSES 210u   /* 0: up to 256 bytes; 1..208: 4 a doubling; 209: above 2^60 */
#define ACCEL_I_QMEM_VIEWS 64u      /* released handles kept for reuse */
typedef struct accel_i_qmem_pool {
    accel_i_a32 lock;
    bool closed;                    /* the device is going: roots are not put back */
    accel_buffer* free[2][ACCEL_I_QMEM_CLASSES];   /* [memory kind][class]: free roots, newest first */
    /* released handles (linked by pool_next): still on the device's object list and holding their
       device reference, with refs 0 and no handle, so that reusing one needs no allocation, no list
       update and no device reference */
    accel_buffer* views;
    uint32_t nviews;
} accel_i_qmem_pool;

/* The size class of size, and the size of its roots. */
static uint32_t accel_i_qmem_class(size_t size, size_t* rounded) {
    uint64_t m = (uint64_t)size - 1u, q;
    uint32_t bits = 0;
    if (size <= 256u) { *rounded = 256u; return 0; }
    while (bits < 64u && (m >> bits) != 0) bits++;   /* 9 .. 64 */
    if (bits > 60u || size > SIZE_MAX / 2u) { *rounded = size; return ACCEL_I_QMEM_CLASSES - 1u; }
    q = (m >> (bits - 3u)) + 1u;                     /* 5 .. 8 */
    *rounded = (size_t)(q << (bits - 3u));
    return (bits - 9u) * 4u + (uint32_t)(q - 5u) + 1u;
}
static accel_i_qmem_pool* accel_i_qmem_pool_get(accel_device* dev) {
    return (accel_i_qmem_pool*)(uintptr_t)atomic_load_explicit(&dev->qmem, memory_order_acquire);
}
/* The device's pool, made at the first call (by whichever thread gets there first); NULL when out of
   host memory. */
static accel_i_qmem_pool* accel_i_qmem_pool_of(accel_device* dev) {
    accel_i_qmem_pool* p = accel_i_qmem_pool_get(dev);
    uint64_t none = 0;
    if (p) return p;
    if ((p = (accel_i_qmem_pool*)accel_i_dev_alloc(dev, sizeof *p)) == NULL) return NULL;
    memset((void*)p, 0, sizeof *p);
    atomic_init(&p->lock, 0u);
    if (atomic_compare_exchange_strong_explicit(&dev->qmem, &none, (uint64_t)(uintptr_t)p,
                                                memory_order_acq_rel, memory_order_acquire))
        return p;
    accel_i_dev_free(dev, p, sizeof *p);   /* another thread made it first */
    return (accel_i_qmem_pool*)(uintptr_t)none;
}
/* Puts a root back, to be taken by owner's later allocs at once and by anyone's once idle. A stale
   root (made before a recover) goes instead; so does one of a closing pool, at the device's destroy. */
static void accel_i_qmem_put(accel_buffer* root, accel_queue* owner) {
    accel_i_qmem_pool* p = accel_i_qmem_pool_get(root->obj.device);
    size_t rounded;
    accel_buffer** head = &p->free[root->memory][accel_i_qmem_class(root->size, &rounded)];
    bool keep = !accel_i_stale(&root->obj);
    accel_i_spin_lock(&p->lock);
    if ((keep = keep && !p->closed)) {
        root->pool_owner = owner;
        root->pool_next = *head;
        *head = root;
    }
    accel_i_spin_unlock(&p->lock);
    /* a stale root, or one a no-threads batch made after its device's destroy closed the pool */
    if (!keep) accel_i_handle_drop(root);
}
/* Takes a free root of the class for q, at least size bytes, off the pool: the newest that q freed,
   else the newest idle one (so that each queue keeps to its own roots); NULL when none may be. */
static accel_buffer* accel_i_qmem_take(accel_i_qmem_pool* p, accel_queue* q, uint32_t cls, accel_memory mem,
                                       size_t size) {
    accel_buffer **link, **idle = NULL, *b;
    accel_i_spin_lock(&p->lock);
    for (link = &p->free[mem][cls]; (b = *link) != NULL; link = &b->pool_next) {
        if (b->size < size) continue;
        if (b->pool_owner == q) break;
        if (!idle && atomic_load_explicit(&b->obj.refs, memory_order_acquire) == 1u) idle = link;
    }
    if (!b && idle) b = *(link = idle);
    if (b) *link = b->pool_next;
    accel_i_spin_unlock(&p->lock);
    return b;
}
/* Keeps a released handle for reuse; false when the pool keeps enough (or is closing). */
static bool accel_i_qmem_view_put(accel_i_qmem_pool* p, accel_buffer* view) {
    bool keep;
    accel_i_spin_lock(&p->lock);
    keep = !p->closed && !view->obj.label_set && p->nviews < ACCEL_I_QMEM_VIEWS &&
           !accel_i_stale(&view->obj);
    if (keep) {
        view->pool_next = p->views;
        p->views = view;
        p->nviews++;
    }
    accel_i_spin_unlock(&p->lock);
    return keep;
}
/* Gives the idle roots back to the backend (before a new root is tried again). */
static void accel_i_qmem_trim(accel_i_qmem_pool* p) {
    accel_buffer* idle = NULL;
    accel_i_spin_lock(&p->lock);
    for (uint32_t i = 0; i < 2u * ACCEL_I_QMEM_CLASSES; i++) {
        accel_buffer **link = &p->free[i / ACCEL_I_QMEM_CLASSES][i % ACCEL_I_QMEM_CLASSES], *b;
        while ((b = *link) != NULL) {
            if (atomic_load_explicit(&b->obj.refs, memory_order_acquire) != 1u) {
                link = &b->pool_next;
                continue;
            }
            *link = b->pool_next;
            b->pool_next = idle;
            idle = b;
        }
    }
    accel_i_spin_unlock(&p->lock);
    while (idle) {
        accel_buffer* b = idle;
        idle = b->pool_next;
        accel_i_handle_drop(b);
    }
}
/* A root for q of at least size bytes: from the pool, else a new one (the pool's idle roots given back
   first when that fails). */
static accel_result accel_i_qmem_root(accel_queue* q, accel_i_qmem_pool* p, size_t size, accel_memory mem,
                                      accel_buffer** out) {
    accel_device* dev = q->obj.device;
    accel_buffer_desc d;
    accel_result r;
    size_t rounded;
    uint32_t cls = accel_i_qmem_class(size, &rounded);
    if ((*out = accel_i_qmem_take(p, q, cls, mem, size)) != NULL) return ACCEL_OK;
    memset(&d, 0, sizeof d);
    d.size = rounded;
    d.memory = mem;
    d.label = "accel_queue_alloc";
    if ((r = dev->backend->buffer_create(dev, &d, out)) == ACCEL_OK) return r;
    accel_i_qmem_trim(p);
    return dev->backend->buffer_create(dev, &d, out);
}
/* ---- core: queue-ordered memory at its point ----
   On every backend the memory is taken when the alloc's point of the queue's order is reached, not
   when the alloc records, and given back at the free's point: N batches of alloc / use / free
   submitted ahead hold one root, not N. The handle is a root of the core's with no memory of its own
   (qmem ACCEL_I_QMEM_LATE; never seen by buffer_create / buffer_free / buffer_io), whose `mapped` is
   NULL but between its points. accel_queue_alloc and
   accel_queue_free each record a point: a NATIVE command flagged ACCEL_I_CMD_QMEM_POINT holding a
   reference on the handle, which the CPU executor runs in its turn (accel_i_qmem_step). The alloc point
   is lent a root of the pool (its size class and memory kind; made by buffer_create when none is
   free, idle roots given back first when that fails: accel_i_qmem_lend); the free point gives it back
   (accel_i_qmem_give_back); on the CPU idle at once: every use completed by then, on other queues too
   (the contract orders them before a signal the queue waited for).
   A batch that uses such a buffer (b->qmem, set where it records the use) checks each command's
   buffers where it runs: one with no memory (its alloc point failed or was dropped with its batch, or
   its free point passed) fails the rest of the batch with the reason (qfail: out of memory, or the
   failure that dropped the alloc point; else INVALID_ARGUMENT). A list that uses such a buffer replays
   in the generic form (its commands are checked and resolved where they run); a patch takes one as
   it takes any buffer (the executor reads the root's memory when the replay runs). Views of such a
   buffer have `mapped` NULL and reach the memory through the root (accel_i_qmem_host). A handle
   destroyed instead of freed, or whose free point never ran, gives its root back with its last
   reference. The handle's qmem and size are written only while nobody else holds it (reads need no
   lock); `mapped` and qfail are written at its points, ordered for every reader as its uses are; qhas
   (it has memory) is published with release after them.
   A GPU backend's walk runs the points (accel_device.qmem_ops, set at create: CUDA, Vulkan); it makes
   the same handles at its own buffer struct's size, and runs each point where its walk builds the
   command (its stream or submission order is the queue's): the memory of its own (CUDA's
   stream-ordered pool) or a root of the core's pool lent (accel_i_qmem_lend / accel_i_qmem_give_back;
   another queue takes it once the batch of the free completed on the device). Its free point leaves
   the handle's native fields in place (qhas 2): a command of another queue built after that point may
   still be ordered before it on the device, so a use after the free is not caught there (undefined,
   as any use of freed memory). A handle another queue used keeps its memory past its free point there,
   to its last reference (accel_i_qmem_shared).
   A segment that uses a handle whose alloc point its queue's walk has not reached yet (another queue
   submitted first, its waits watched by the device) has its waits gated on the host instead
   (accel_i_classify, accel_i_qmem_waits_on_host): they are reached only after that point. */
/* kit: does handle r have memory now (or its free point passed on a GPU walk: qhas 2)? (acquire: its
   native fields, written before, are there) */
static bool accel_i_qmem_has(const accel_buffer* r) {
    return atomic_load_explicit(&r->qhas, memory_order_acquire) != 0;
}
/* kit: did a queue other than handle r's alloc's (or a command list) record a use or the free of r, or
   its own queue a wait between its points (accel_i_qmem_note_queue)? A GPU walk's free point of
   such a handle keeps the memory, which goes back with the handle's last reference instead (every batch
   that used it holds it until it completed): the other queue's use is ordered before the free by a
   signal only, and a failure of that signal releases the free's queue on the device (6.1) before that
   use ran; memory reused or trimmed then would be under it. A handle of one queue with no wait between
   its points keeps the stream order: its uses come before the free in that queue's own order. */
static bool accel_i_qmem_shared(const accel_buffer* r) {
    return atomic_load_explicit(&r->qshared, memory_order_relaxed) != 0;
}
/* The bytes of a handle of dev's (a GPU backend's buffer struct where its walk runs the points). */
static size_t accel_i_qmem_bytes(const accel_device* dev) {
    return dev->qmem_ops ? dev->qmem_ops->handle_bytes : sizeof(accel_buffer);
}

/* A handle of size bytes with no memory yet: a kept one made anew, else a new one; NULL when out of
   host memory. */
static accel_buffer* accel_i_qmem_late_new(accel_device* dev, accel_i_qmem_pool* p, size_t size,
                                           accel_memory memory) {
    size_t bytes = accel_i_qmem_bytes(dev);
    accel_buffer* r;
    accel_i_spin_lock(&p->lock);
    if ((r = p->views) != NULL) {
        p->views = r->pool_next;
        p->nviews--;
    }
    accel_i_spin_unlock(&p->lock);
    if (r) {
        r->obj.generation = atomic_load(&dev->generation);   /* creates are open: it stays */
        atomic_store_explicit(&r->obj.handle, 1u, memory_order_relaxed);
        atomic_store_explicit(&r->obj.refs, 1u, memory_order_relaxed);   /* published by handing it out */
        memset((void*)(r + 1), 0, bytes - sizeof *r);   /* the backend's part */
    } else {
        if ((r = (accel_buffer*)accel_i_dev_alloc(dev, bytes)) == NULL) return NULL;
        memset((void*)r, 0, bytes);
        accel_i_object_init(&r->obj, dev, ACCEL_I_BUFFER, "accel_queue_alloc");
    }
    r->size = size;
    r->memory = memory;
    r->mapped = NULL;
    r->root = NULL;
    r->offset = 0;
    r->read_only = false;
    r->pool_next = NULL;
    r->qfail = 0;
    atomic_store_explicit(&r->qhas, 0u, memory_order_relaxed);
    r->qroot = NULL;
    r->qowner = NULL;
    atomic_store_explicit(&r->qshared, 0u, memory_order_relaxed);
    r->qmem = ACCEL_I_QMEM_HANDLE | ACCEL_I_QMEM_LATE;
    return r;
}
/* Records handle r's alloc or free point on q; false on a recording error (recorded). */
static bool accel_i_qmem_point_rec(accel_queue* q, accel_buffer* r, bool is_free, const char* fn) {
    accel_i_cmd* c = accel_i_rec_push(q, ACCEL_I_CMD_NATIVE, 0, NULL, fn);
    if (!c) return false;
    c->flags = ACCEL_I_CMD_QMEM_POINT;
    c->u.qmem.buf = r;
    c->u.qmem.free = is_free;
    accel_i_retain(r);
    q->rec->qmem = true;
    return true;
}
/* accel_queue_alloc's handle and its alloc point (arguments checked); a result for its recording error. */
static accel_result accel_i_qmem_late_alloc(accel_queue* q, size_t size, accel_memory memory,
                                            accel_buffer** out) {
    accel_i_qmem_pool* p = accel_i_qmem_pool_of(q->obj.device);
    accel_buffer* r = p ? accel_i_qmem_late_new(q->obj.device, p, size, memory) : NULL;
    if (!r) return ACCEL_ERROR_OUT_OF_MEMORY;
    r->qowner = q;
    r->qwaits = q->qmem_waits;
    if (!accel_i_qmem_point_rec(q, r, false, "accel_queue_alloc")) {
        accel_i_handle_drop(r);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    *out = r;
    return ACCEL_OK;
}
/* A use or the free of handle r recorded on q (or into a list q records): is it another queue's than
   the alloc's, or a free on the alloc's queue with a wait between the two points? Then r is shared
   (accel_i_qmem_shared): through that wait's signal alone, another queue's work may be ordered before
   the free and yet be recorded after it was built (a use of the handle, or of a view). */
static void accel_i_qmem_note_queue(accel_queue* q, accel_buffer* r, bool at_free) {
    bool other = q->recording || q != r->qowner || (at_free && q->qmem_waits != r->qwaits);
    if (other && !atomic_load_explicit(&r->qshared, memory_order_relaxed))
        atomic_store_explicit(&r->qshared, 1u, memory_order_relaxed);
}
/* A use of buf (memory at its point) recorded on q: the batch checks its commands where they run. */
static bool accel_i_qmem_late_use(accel_queue* q, accel_buffer* buf, const char* fn) {
    accel_i_qmem_note_queue(q, accel_i_buffer_root(buf), false);
    if (q->recording && accel_i_buffer_root(buf)->qfail) {   /* known to have none: the list's error */
        accel_i_rec_error(q, ACCEL_ERROR_OUT_OF_MEMORY, "%s: the buffer's accel_queue_alloc found no memory",
                          fn);
        return false;
    }
    if (!q->rec && (q->rec = accel_i_batch_take(q)) == NULL) {
        accel_i_rec_error(q, ACCEL_ERROR_OUT_OF_MEMORY, "%s: out of host memory while recording", fn);
        return false;
    }
    q->rec->qmem = true;
    return true;
}
/* Where buf's memory is now when it is memory taken at its point (a view: from its offset); NULL when
   it has none, or buf is no such buffer. */
static void* accel_i_qmem_host(const accel_buffer* buf) {
    const accel_buffer* r = buf->root ? buf->root : buf;
    if (!(r->qmem & ACCEL_I_QMEM_LATE) || !r->mapped) return NULL;
    return (unsigned char*)r->mapped + buf->offset;
}
/* Is buf (or its root) memory taken at its point, with none now? */
static bool accel_i_qmem_none(const accel_buffer* buf) {
    const accel_buffer* r = buf->root ? buf->root : buf;
    return (r->qmem & ACCEL_I_QMEM_LATE) && !accel_i_qmem_has(r);
}
static accel_result accel_i_qmem_io_none(accel_buffer* buf, const char* fn) {
    if (accel_i_buffer_root(buf)->qfail) return accel_i_qmem_no_memory(buf, fn);
    return accel_i_fail(buf->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                        "%s: the buffer's accel_queue_alloc point is not reached, or its free point passed "
                        "(order host access after them with signals)", fn);
}
/* A batch dropped from before alloc point c on (fail_rest): the handle never gets memory, and every use
   of it fails with the same reason. */
static void accel_i_qmem_skipped(const accel_i_cmd* c, uint64_t failed) {
    accel_buffer* r = c->u.qmem.buf;
    if (!c->u.qmem.free && !accel_i_qmem_has(r) && !r->qfail) r->qfail = failed;
}
/* kit: alloc point of handle r on q found no memory (why): the handle fails every use with why, and the
   rest of the batch drops (returns the failed value). */
static uint64_t accel_i_qmem_point_failed(accel_queue* q, accel_buffer* r, accel_result why) {
    r->qfail = accel_i_failed_value(why);
    accel_i_log(q->obj.device, ACCEL_LOG_ERROR,
                "accel_queue_alloc: no memory for %zu bytes where its point of queue %p%s%s%s was reached "
                "(%s): the batches that use the buffer fail from there", r->size, (void*)q,
                ACCEL_I_LABEL(&q->obj), accel_result_string(why));
    return r->qfail;
}
/* The CPU executor runs point c on q: 0, or the failed value that drops the rest of the batch (out of
   memory). The memory is a root of the pool lent at the alloc point and given back at the free point
   (accel_i_qmem_lend / accel_i_qmem_give_back, as a GPU walk's without memory of its own); past the
   free point the handle has none (a use there is caught: the CPU runs every command where it is). */
static uint64_t accel_i_qmem_point_run(accel_queue* q, accel_i_cmd* c) {
    accel_buffer* r = c->u.qmem.buf;
    accel_buffer* lent;
    uint64_t failed = 0;
    if (c->u.qmem.free) {
        accel_i_qmem_give_back(q, c);
        if (c->u.qmem.held) {   /* every use completed (on other queues too: the contract orders them
                                   before this point): idle, anyone's at once */
            accel_i_release(c->u.qmem.held);
            c->u.qmem.held = NULL;
        }
        r->mapped = NULL;
        atomic_store_explicit(&r->qhas, 0u, memory_order_relaxed);
        return 0;
    }
    if (accel_i_qmem_has(r)) return 0;
    if ((lent = accel_i_qmem_lend(q, r, &failed)) == NULL) return failed;
    r->mapped = lent->mapped;
    atomic_store_explicit(&r->qhas, 1u, memory_order_release);
    return 0;
}
/* buf's root when it is memory at its point with none now, else NULL. */
static const accel_buffer* accel_i_qmem_none_of(const accel_buffer* buf) {
    return accel_i_qmem_none(buf) ? (buf->root ? buf->root : buf) : NULL;
}
/* The first buffer command c uses (a root) that is memory at its point with none now, else NULL. */
static const accel_buffer* accel_i_qmem_cmd_none(const accel_i_batch* b, const accel_i_cmd* c) {
    const accel_buffer* r = NULL;
    switch (c->kind) {
    case ACCEL_I_CMD_EXEC: {
        accel_buffer* const* bufs = (accel_buffer* const*)(const void*)(b->arena + c->u.exec.buffers);
        uint32_t n = c->u.exec.buffer_count + ((c->flags & ACCEL_I_CMD_INDIRECT) != 0);   /* + counts */
        for (uint32_t i = 0; i < n && !r; i++) r = accel_i_qmem_none_of(bufs[i]);
        return r;
    }
    case ACCEL_I_CMD_COPY:
        return (r = accel_i_qmem_none_of(c->u.copy.dst)) != NULL ? r : accel_i_qmem_none_of(c->u.copy.src);
    case ACCEL_I_CMD_FILL: return accel_i_qmem_none_of(c->u.fill.dst);
    case ACCEL_I_CMD_UPDATE: return accel_i_qmem_none_of(c->u.update.dst);
    case ACCEL_I_CMD_TIMESTAMP: return accel_i_qmem_none_of(c->u.stamp.dst);
    case ACCEL_I_CMD_REPLAY: {   /* no patches: maybe no arena either */
        const accel_i_patch* p = c->u.replay.patch_count
                                     ? (const accel_i_patch*)(const void*)(b->arena + c->u.replay.patches)
                                     : NULL;
        for (uint32_t i = 0; i < c->u.replay.patch_count && !r; i++)
            if (p[i].buffer) r = accel_i_qmem_none_of(p[i].buffer);
        return r;
    }
    default: return NULL;
    }
}
/* kit: command c (no point) of a batch flagged qmem, where it runs or is built: 0, or the failed value
   that drops the rest of the batch (a buffer with no memory there: the reason its alloc point gave,
   else a use before its alloc point or after its free point, logged). */
static uint64_t accel_i_qmem_use_failed(accel_queue* q, const accel_i_batch* b, const accel_i_cmd* c) {
    const accel_buffer* r = accel_i_qmem_cmd_none(b, c);
    if (!r) return 0;
    if (r->qfail) return r->qfail;
    accel_i_log(q->obj.device, ACCEL_LOG_ERROR,
                "queue %p%s%s%s: a command uses buffer %p of accel_queue_alloc before its alloc point or "
                "after its free point: the rest of its batch fails", (void*)q, ACCEL_I_LABEL(&q->obj),
                (const void*)r);
    return accel_i_failed_value(ACCEL_ERROR_INVALID_ARGUMENT);
}
/* The CPU executor, at command c of a batch flagged qmem: runs a point, or checks the buffers the
   command uses. Returns 0, or the failed value that drops the rest of the batch. */
static uint64_t accel_i_qmem_step(accel_queue* q, const accel_i_batch* b, accel_i_cmd* c) {
    if (c->flags & ACCEL_I_CMD_QMEM_POINT) return accel_i_qmem_point_run(q, c);
    return accel_i_qmem_use_failed(q, b, c);
}
#if !defined(ACCEL_NO_THREADS)
/* The GPU walk: does segment sg of a batch flagged qmem use a handle with no memory now before any
   alloc point of it in the segment? Its waits then go to the host (accel_i_classify): a use on
   another queue is ordered after a signal the allocating queue signals after the alloc point, so once
   they are reached that queue's walk has passed the point; a use still without memory then fails
   where the backend builds it (accel_i_qmem_use_failed). */
static bool accel_i_qmem_waits_on_host(const accel_i_batch* b, const accel_i_segment* sg) {
    for (uint32_t i = sg->from; i < sg->to; i++) {
        const accel_buffer* r = accel_i_qmem_cmd_none(b, &b->cmds[i]);
        bool made = false;
        for (uint32_t k = sg->from; r && k < i && !made; k++)
            made = (b->cmds[k].flags & ACCEL_I_CMD_QMEM_POINT) && !b->cmds[k].u.qmem.free &&
                   b->cmds[k].u.qmem.buf == r;
        if (r && !made) return true;
    }
    return false;
}
#endif
/* kit: alloc point c of handle r on q, served by a root of the core's pool (made by buffer_create
   when none is free): the root, lent to r (r->qroot, a reference; the backend copies its native
   fields into r, then publishes qhas), or NULL with *failed the failed value (logged). */
static accel_buffer* accel_i_qmem_lend(accel_queue* q, accel_buffer* r, uint64_t* failed) {
    accel_buffer* m = NULL;
    accel_result res = accel_i_qmem_root(q, accel_i_qmem_pool_get(r->obj.device), r->size, r->memory, &m);
    if (res != ACCEL_OK) { *failed = accel_i_qmem_point_failed(q, r, res); return NULL; }
    accel_i_retain(m);
    r->qroot = m;
    return m;
}
/* kit: free point c of a handle a root lends: the root back to the pool (q's: its later allocs take
   it in stream order), the handle's reference on it held by the command until its batch completes
   (another queue takes the root only once idle). The handle keeps its native fields (qhas 2): a
   command of another queue built after this point may still be ordered before it. */
static void accel_i_qmem_give_back(accel_queue* q, accel_i_cmd* c) {
    accel_buffer* r = c->u.qmem.buf;
    if (atomic_load_explicit(&r->qhas, memory_order_relaxed) != 1u || !r->qroot ||
        (q->obj.device->qmem_ops && accel_i_qmem_shared(r)))   /* a GPU walk's: kept (see there) */
        return;
    accel_i_qmem_put(r->qroot, q);
    c->u.qmem.held = r->qroot;
    r->qroot = NULL;
    atomic_store_explicit(&r->qhas, 2u, memory_order_release);
}
/* Does b (not empty) hold alloc / free points alone? Such a batch is kept aside while q records a list
   (an alloc adds a point to the batch, and record_begin wants none but those). */
static bool accel_i_qmem_points_only(const accel_i_batch* b) {
    for (uint32_t i = 0; i < b->count; i++)
        if (!(b->cmds[i].flags & ACCEL_I_CMD_QMEM_POINT)) return false;
    return b->count != 0;
}
/* A handle's last reference is gone: its memory (a free point that never ran) goes back; the handle is
   kept for reuse (true) or freed by the caller (false: accel_i_object_free frees such a root itself). */
static bool accel_i_qmem_late_keep(accel_buffer* r) {
    accel_device* dev = r->obj.device;
    accel_i_qmem_pool* p = accel_i_qmem_pool_get(dev);
    bool has = atomic_load_explicit(&r->qhas, memory_order_acquire) == 1u;   /* still its own */
    if (has && r->qroot) {   /* a root of the pool lent it: back, idle once its work is done */
        accel_i_qmem_put(r->qroot, NULL);
        accel_i_release(r->qroot);
    } else if (has && dev->qmem_ops) {
        dev->qmem_ops->drop(r);
    }
    r->mapped = NULL;
    atomic_store_explicit(&r->qhas, 0u, memory_order_relaxed);
    r->qroot = NULL;
    return accel_i_qmem_view_put(p, r);
}
ACCEL_API accel_result accel_queue_alloc(accel_queue* q, size_t size, accel_memory memory,
                                        accel_buffer** out) {
    const char* fn = "accel_queue_alloc";
    accel_buffer* view = NULL;
    accel_result r;
    if (out) *out = NULL;
    if (!q) return accel_i_invalid(NULL, fn, "queue is NULL");
    if (!out || size == 0 || (memory != ACCEL_MEMORY_DEVICE && memory != ACCEL_MEMORY_HOST)) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: %s", fn,
                          !out ? "out is NULL" : size == 0 ? "size is 0" : "unknown memory kind");
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
    if (!accel_i_rec_not_recording(q, fn)) return ACCEL_ERROR_INVALID_ARGUMENT;
    if (!accel_i_rec_live(q, &q->obj, fn)) return ACCEL_ERROR_DEVICE_LOST;
    if (accel_i_lost(q->obj.device) || !accel_i_creates_enter(q->obj.device, fn)) {
        accel_i_rec_error(q, ACCEL_ERROR_DEVICE_LOST, "%s: the device is lost or being recovered", fn);
        return ACCEL_ERROR_DEVICE_LOST;
    }
    if (!accel_i_rec_live(q, &q->obj, fn)) {   /* a recover between the look above and the enter */
        accel_i_creates_leave(q->obj.device);
        return ACCEL_ERROR_DEVICE_LOST;
    }
    r = accel_i_qmem_late_alloc(q, size, memory, &view);
    accel_i_creates_leave(q->obj.device);
    if (r != ACCEL_OK) {
        accel_i_rec_error(q, r, "%s: out of memory for the handle of %zu bytes", fn, size);
        return r;
    }
    *out = view;
    return ACCEL_OK;
}
ACCEL_API void accel_queue_free(accel_queue* q, accel_buffer* buf) {
    const char* fn = "accel_queue_free";
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    bool freed = buf && !atomic_load(&buf->obj.handle);
    if (!buf || !(buf->qmem & ACCEL_I_QMEM_HANDLE) || freed || buf->obj.device != q->obj.device) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: %s", fn,
                          !buf ? "buffer is NULL"
                          : !(buf->qmem & ACCEL_I_QMEM_HANDLE) ? "the buffer is not from accel_queue_alloc"
                          : freed ? "the buffer was freed already"
                          : "the buffer belongs to another device");
        return;
    }
    if (!accel_i_rec_not_recording(q, fn) || !accel_i_rec_live(q, &q->obj, fn) ||
        !accel_i_rec_live(q, &buf->obj, fn))
        return;
    /* its point (the handle's qmem stays as it is: see there) */
    accel_i_qmem_note_queue(q, buf, true);
    if (accel_i_qmem_point_rec(q, buf, true, fn)) accel_i_handle_drop(buf);
}
/* Its root's qfail is set: the reason in it (out of memory, or the failed batch's reason). */
static accel_result accel_i_qmem_no_memory(accel_buffer* buf, const char* fn) {
    accel_result why = (accel_result)(int32_t)(0u - (uint32_t)accel_i_buffer_root(buf)->qfail);
    return accel_i_fail(buf->obj.device, why, "%s: the buffer's accel_queue_alloc has no memory (its "
                        "point failed, or a failure before it dropped it)", fn);
}
/* Kept handles (a list linked by pool_next): freed as accel_i_object_free frees a view. */
static void accel_i_qmem_views_free(accel_device* dev, accel_buffer* views) {
    while (views) {
        accel_buffer* v = views;
        views = v->pool_next;
        accel_i_object_unlist(&v->obj);
        accel_i_dev_free(dev, v, accel_i_qmem_bytes(dev));
        accel_i_device_release(dev);
    }
}
/* accel_device_recover, with the generation raised and creates closed: the pool's roots and kept
   handles are stale; they go (the roots as any stale object's destroy), and the pool starts empty. */
static void accel_i_qmem_recover(accel_device* dev) {
    accel_i_qmem_pool* p = accel_i_qmem_pool_get(dev);
    accel_buffer *roots = NULL, *views;
    if (!p) return;
    accel_i_spin_lock(&p->lock);
    for (uint32_t i = 0; i < 2u * ACCEL_I_QMEM_CLASSES; i++) {
        accel_buffer** head = &p->free[i / ACCEL_I_QMEM_CLASSES][i % ACCEL_I_QMEM_CLASSES];
        while (*head) {
            accel_buffer* b = *head;
            *head = b->pool_next;
            b->pool_next = roots;
            roots = b;
        }
    }
    views = p->views;
    p->views = NULL;
    p->nviews = 0;
    accel_i_spin_unlock(&p->lock);
    while (roots) {
        accel_buffer* b = roots;
        roots = b->pool_next;
        accel_i_handle_drop(b);
    }
    accel_i_qmem_views_free(dev, views);
}
/* The device is going (free_pool false: its handles are dropped next; the roots go with them) or gone. */
static void accel_i_qmem_close(accel_device* dev, bool free_pool) {
    accel_i_qmem_pool* p = accel_i_qmem_pool_get(dev);
    accel_buffer* views;
    if (!p) return;
    accel_i_spin_lock(&p->lock);
    p->closed = true;
    memset((void*)p->free, 0, sizeof p->free);
    views = p->views;
    p->views = NULL;
    p->nviews = 0;
    accel_i_spin_unlock(&p->lock);
    accel_i_qmem_views_free(dev, views);
    if (free_pool) {
        atomic_store_explicit(&dev->qmem, 0u, memory_order_relaxed);
        accel_i_dev_free(dev, p, sizeof *p);
    }
}

/* ==== core: indirect execs ==== */
/* accel_queue_exec_indirect records an exec flagged ACCEL_I_CMD_INDIRECT: its params hold the local size
   (global 1 x 1 x 1, so every check of a recorded exec holds), and the counts buffer (as given: a view
   or a root) with the offset in it follow the bindings in the arena, so that a patch of binding index
   buffer_count replaces it as it would a binding. The backend reads the counts when the command runs:
   the CPU executor, Vulkan's vkCmdDispatchIndirect. A backend whose device cannot (walk->indirect_on_host:
   CUDA) gets a HOST_READ exec, a host step of the walk: once the queue drained, the walk reads the
   counts (buffer_io) and leaves in its place a direct exec of that grid (no work: nothing launches). */
static accel_buffer* accel_i_exec_counts(const accel_i_batch* b, const accel_i_cmd* c, size_t* offset) {
    const unsigned char* at =
        b->arena + c->u.exec.buffers + (size_t)c->u.exec.buffer_count * sizeof(accel_buffer*);
    accel_buffer* buf;
    memcpy(&buf, at, sizeof buf);
    memcpy(offset, at + sizeof buf, sizeof *offset);
    return buf;
}
static bool accel_i_indirect_params(accel_queue* q, const accel_program* p, const uint32_t counts[3],
                                    accel_exec_params* params) {
    const accel_device_info* info = &q->obj.device->info;
    bool over = false;
    if (!counts[0] || !counts[1] || !counts[2]) return false;
    for (int d = 0; d < 3; d++) {
        uint64_t items = (uint64_t)counts[d] * params->local_size[d];
        over |= counts[d] > info->max_group_count[d] || items > UINT32_MAX;
        params->global_size[d] = (uint32_t)items;
    }
    if (over && ACCEL_I_DEBUGGING(q->obj.device))
        accel_i_log(q->obj.device, ACCEL_LOG_WARN,
                    "accel_queue_exec_indirect: counts %u x %u x %u of program%s%s%s on queue %p%s%s%s are "
                    "over the device limits (%u x %u x %u groups, 2^32-1 items a dimension at local size "
                    "%u x %u x %u): the exec is skipped",
                    counts[0], counts[1], counts[2], ACCEL_I_LABEL(&p->obj), (void*)q, ACCEL_I_LABEL(&q->obj),
                    info->max_group_count[0], info->max_group_count[1], info->max_group_count[2],
                    params->local_size[0], params->local_size[1], params->local_size[2]);
    return !over;
}
/* An indirect exec's counts: 12 bytes of a buffer q can use, at a multiple of 4 (in a view's root too). */
static bool accel_i_counts_ok(accel_queue* q, accel_buffer* counts, size_t offset, const char* fn) {
    if (!counts) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: counts is NULL", fn);
        return false;
    }
    if (!accel_i_rec_buffer_ok(q, counts, offset, 12, fn)) return false;
    if (((offset | (counts->offset + offset)) & 3u) == 0) return true;
    accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                      "%s: counts offset %zu (%zu in its root buffer) is not a multiple of 4",
                      fn, offset, counts->offset + offset);
    return false;
}
ACCEL_API void accel_queue_exec_indirect(accel_queue* q, accel_program* p, accel_buffer* const* buffers,
                                         uint32_t buffer_count, const uint32_t* constants,
                                         uint32_t constant_count, const uint32_t local_size[3],
                                         accel_buffer* counts, size_t offset) {
    const char* fn = "accel_queue_exec_indirect";
    accel_exec_params params = { { 1, 1, 1 }, { 1, 1, 1 } };
    if (!q) { accel_i_invalid(NULL, fn, "queue is NULL"); return; }
    if (local_size) memcpy(params.local_size, local_size, sizeof params.local_size);
    if (!accel_i_exec_args_ok(q, p, buffers, buffer_count, constants, constant_count, fn)) return;
    if (!accel_i_exec_params_ok(q, &params, fn) || !accel_i_counts_ok(q, counts, offset, fn)) return;
    accel_i_rec_exec(q, p, buffers, buffer_count, constants, constant_count, &params, counts, offset, false,
                     fn);
}
#if !defined(ACCEL_NO_THREADS)
/* The host step of HOST_READ exec c (the queue drained: its counts are final): reads them and leaves a
   direct exec of that grid for the walk's next segment. Returns 0, or the failed value of a read error
   (which drops the rest of the batch). */
static uint64_t accel_i_indirect_read(accel_queue* q, accel_i_batch* b, accel_i_cmd* c) {
    size_t offset;
    accel_buffer* buf = accel_i_exec_counts(b, c, &offset);
    uint32_t counts[3];
    accel_result r = q->obj.device->backend->buffer_io(accel_i_buffer_root(buf), buf->offset + offset, counts,
                                                       sizeof counts, false);
    if (r != ACCEL_OK) return accel_i_failed_value(r);
    if (!accel_i_indirect_params(q, c->u.exec.program, counts, &c->u.exec.params))
        memset(c->u.exec.params.global_size, 0, sizeof c->u.exec.params.global_size);
    c->flags = (c->flags & ~ACCEL_I_CMD_HOST_READ) | ACCEL_I_CMD_GRID_READ;
    return 0;
}
#endif

/* ==== core: recorded command lists ==== */
/* record_begin turns the queue's batch into the list being recorded (the recording calls append to
   q->rec as usual; wait/signal/replay refuse). record_end takes that batch as the list, with the
   references its commands hold, and asks the backend for its native form. A replay is one batch
   command holding the list and a sorted copy of its patches, validated here once; the generic form
   (backends without commands_build) records the list's commands into the batch instead. */
ACCEL_API accel_result accel_queue_record_begin(accel_queue* q) {
    if (!q) return accel_i_invalid(NULL, "accel_queue_record_begin", "queue is NULL");
    if (q->recording)
        return accel_i_fail(q->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_queue_record_begin: the %s is already recording",
                            accel_i_label(&q->obj));
    if (q->rec && q->rec_error == ACCEL_OK && accel_i_qmem_points_only(q->rec)) {   /* kept aside */
        q->rec_aside = q->rec;
        q->rec = NULL;
    }
    if ((q->rec && q->rec->count) || q->rec_error != ACCEL_OK)
        return accel_i_fail(q->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_queue_record_begin: the %s has an unsubmitted batch (submit it first)",
                            accel_i_label(&q->obj));
    if (accel_i_live(&q->obj, "accel_queue_record_begin") != ACCEL_OK) return ACCEL_ERROR_DEVICE_LOST;
    q->recording = true;
    return ACCEL_OK;
}

static void accel_i_commands_free(accel_commands* c) {
    accel_device* dev = c->obj.device;
    if (c->native && dev->backend->commands_free) dev->backend->commands_free(c);
    accel_i_batch_release(c->list);
    accel_i_batch_free(dev, c->list);
    accel_i_dev_free(dev, c, sizeof *c);
}

static bool accel_i_peer_staged_any(const accel_i_batch* b);   /* core: several devices */
/* Makes the list from the recorded batch b (taken, also on failure). */
static accel_result accel_i_commands_make(accel_queue* q, accel_i_batch* b, accel_commands** out) {
    accel_device* dev = q->obj.device;
    accel_commands* c = (accel_commands*)accel_i_dev_alloc(dev, sizeof *c);
    accel_result r = ACCEL_OK;
    if (!c) {
        accel_i_batch_recycle(q, b);
        return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_record_end: out of host memory");
    }
    memset((void*)c, 0, sizeof *c);
    c->obj.device = dev;
    c->list = b;
    for (uint32_t i = 0; i < b->count; i++) {
        c->has_exec |= b->cmds[i].kind == ACCEL_I_CMD_EXEC;
        c->has_indirect |= (b->cmds[i].flags & ACCEL_I_CMD_INDIRECT) != 0;
        c->has_copy |= b->cmds[i].kind == ACCEL_I_CMD_COPY;
    }
    /* a staged copy between devices is a host step: such a list replays in the generic form; so does one
       that uses memory taken at its point (its commands resolve it where they run) */
    if (dev->backend->commands_build && !accel_i_peer_staged_any(b) && !b->qmem)
        r = dev->backend->commands_build(q, c);
    if (r != ACCEL_OK) {
        accel_i_batch_recycle(q, b);
        accel_i_dev_free(dev, c, sizeof *c);
        return r;
    }
    accel_i_object_init(&c->obj, dev, ACCEL_I_COMMANDS, "command list");
    *out = c;
    return ACCEL_OK;
}

ACCEL_API accel_result accel_queue_record_end(accel_queue* q, accel_commands** out) {
    accel_i_batch* b;
    accel_result r;
    if (out) *out = NULL;
    if (!q) return accel_i_invalid(NULL, "accel_queue_record_end", "queue is NULL");
    if (!q->recording)
        return accel_i_fail(q->obj.device, ACCEL_ERROR_INVALID_ARGUMENT,
                            "accel_queue_record_end: the %s is not recording",
                            accel_i_label(&q->obj));
    b = q->rec;
    r = q->rec_error;
    q->rec = q->rec_aside;   /* the points recorded before record_begin, if any */
    q->rec_aside = NULL;
    q->rec_error = ACCEL_OK;
    q->recording = false;
    if (r == ACCEL_OK && !out)
        r = accel_i_fail(q->obj.device, ACCEL_ERROR_INVALID_ARGUMENT, "accel_queue_record_end: out is NULL");
    if (r == ACCEL_OK) r = accel_i_live(&q->obj, "accel_queue_record_end");
    if (r == ACCEL_OK && !b && (b = accel_i_batch_take(q)) == NULL)
        r = accel_i_fail(q->obj.device, ACCEL_ERROR_OUT_OF_MEMORY,
                         "accel_queue_record_end: out of host memory");
    if (r == ACCEL_OK && !accel_i_creates_enter(q->obj.device, "accel_queue_record_end"))
        r = ACCEL_ERROR_DEVICE_LOST;
    else if (r == ACCEL_OK && (r = accel_i_live(&q->obj, "accel_queue_record_end")) != ACCEL_OK)
        accel_i_creates_leave(q->obj.device);   /* a recover since the look above: its objects are stale */
    if (r != ACCEL_OK) {   /* all or nothing */
        if (b) accel_i_batch_recycle(q, b);
        return r;
    }
    r = accel_i_commands_make(q, b, out);
    accel_i_creates_leave(q->obj.device);
    return r;
}
ACCEL_API void accel_commands_destroy(accel_commands* c) { if (c) accel_i_handle_drop(c); }

static bool accel_i_bad_patch(accel_queue* q, uint32_t k, const accel_patch* p, const char* why) {
    accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                      "accel_queue_replay: patch %u (command %u, index %u, %s): %s",
                      k, p->command, p->index, p->buffer ? "buffer" : "constant", why);
    return false;
}
/* Where slot `index` (0 = dst, 1 = src) of a copy, or a fill's dst, points with patch buffer pb (NULL:
   as recorded): the root and the offset in it. A patch keeps the command's offset within the buffer
   as recorded (a view's from its start), now within pb. */
static void accel_i_slot_at(const accel_i_cmd* cmd, uint32_t index, accel_buffer* pb, accel_buffer** root,
                            size_t* offset) {
    bool copy = cmd->kind == ACCEL_I_CMD_COPY;
    *root = copy ? (index == 0 ? cmd->u.copy.dst : cmd->u.copy.src) : cmd->u.fill.dst;
    *offset = copy ? (index == 0 ? cmd->u.copy.dst_offset : cmd->u.copy.src_offset) : cmd->u.fill.offset;
    if (!pb) return;
    *offset = pb->offset +
              (copy ? (index == 0 ? cmd->u.copy.dst_rel : cmd->u.copy.src_rel) : cmd->u.fill.rel);
    *root = accel_i_buffer_root(pb);
}
/* Where a replay's loops over its patches start for `command` (they stop at a later command when
   `sorted`): the first of its patches where they come sorted by command (a binary search: a replay with
   a patch per command stays linear), else 0 (they look at every patch). */
static uint32_t accel_i_patches_of(const accel_patch* all, uint32_t n, uint32_t command, bool sorted) {
    uint32_t lo = 0, hi = n;
    while (sorted && lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (all[mid].command < command) lo = mid + 1; else hi = mid;
    }
    return lo;
}
#define ACCEL_I_PATCHES_OF(J, ALL, N, CMD, SORTED) \
    for (uint32_t J = accel_i_patches_of(ALL, N, CMD, SORTED); \
         J < (N) && (!(SORTED) || (ALL)[J].command == (CMD)); J++)
/* Where a copy's two slots point with all these patches (the last of a slot wins). */
static void accel_i_copy_patched(const accel_i_cmd* cmd, uint32_t command, const accel_patch* all, uint32_t n,
                                 bool sorted, accel_buffer** dst, size_t* d, accel_buffer** src, size_t* s) {
    accel_buffer *pd = NULL, *ps = NULL;
    ACCEL_I_PATCHES_OF(j, all, n, command, sorted) {
        if (all[j].command != command || !all[j].buffer) continue;
        if (all[j].index == 0) pd = all[j].buffer; else ps = all[j].buffer;
    }
    accel_i_slot_at(cmd, 0, pd, dst, d);
    accel_i_slot_at(cmd, 1, ps, src, s);
}
/* A patch of a copy's or fill's buffer: holds the range as recorded; a destination is not read_only. */
static bool accel_i_range_patch_ok(accel_queue* q, const accel_patch* p, uint32_t k, size_t rel,
                                   size_t size) {
    if (!accel_i_rec_buffer_ok(q, p->buffer, rel, size, "accel_queue_replay")) return false;
    if (p->index == 0 && p->buffer->read_only) return accel_i_bad_patch(q, k, p, "the buffer is read_only");
    return true;
}
/* A copy's patch may bring a buffer of another device (a peer copy: core: several devices); one that a
   native list of a GPU backend would have to stage on the host (a list replays as one piece of device
   work there) makes the replay take the generic form (q->replay_stages). */
static bool accel_i_copy_patch_ok(accel_queue* q, const accel_commands* c, const accel_i_cmd* cmd,
                                  const accel_patch* all, uint32_t n, uint32_t k) {
    const accel_patch* p = &all[k];
    accel_buffer *dst, *src;
    size_t d, s, size = cmd->u.copy.size;
    if (!p->buffer || p->index > 1)
        return accel_i_bad_patch(q, k, p, "a copy takes buffer 0 (dst) or 1 (src) only");
    if (!accel_i_rec_range_ok(q, p->buffer, p->index == 0 ? cmd->u.copy.dst_rel : cmd->u.copy.src_rel, size,
                              "accel_queue_replay"))
        return false;
    if (p->index == 0 && p->buffer->read_only) return accel_i_bad_patch(q, k, p, "the buffer is read_only");
    accel_i_copy_patched(cmd, p->command, all, n, q->replay_sorted, &dst, &d, &src, &s);
    if (!accel_i_peer_rec_ok(q, dst, src, "accel_queue_replay")) return false;
    if (c->native && (accel_i_peer_flags(q, dst, src) & ACCEL_I_CMD_STAGED)) q->replay_stages = true;
    if (dst == src && d < s + size && s < d + size)
        return accel_i_bad_patch(q, k, p, "the copy would overlap itself");
    return true;
}
/* Is patch k a valid patch of list c for a replay on q? Logs and records the error when not. */
static bool accel_i_patch_ok(accel_queue* q, const accel_commands* c, const accel_patch* all, uint32_t n,
                             uint32_t k) {
    const accel_patch* p = &all[k];
    const accel_i_cmd* cmd;
    if (p->command >= c->list->count) return accel_i_bad_patch(q, k, p, "no such command in the list");
    cmd = &c->list->cmds[p->command];
    if (p->buffer && cmd->kind != ACCEL_I_CMD_COPY &&
        !accel_i_rec_buffer_ok(q, p->buffer, 0, p->buffer->size, "accel_queue_replay"))
        return false;
    switch (cmd->kind) {
    case ACCEL_I_CMD_EXEC: {
        bool counts = p->buffer && (cmd->flags & ACCEL_I_CMD_INDIRECT) &&
                      p->index == cmd->u.exec.buffer_count;
        size_t offset;
        if (counts) {   /* an indirect exec's counts buffer, at the offset recorded */
            accel_i_exec_counts(c->list, cmd, &offset);
            return accel_i_counts_ok(q, p->buffer, offset, "accel_queue_replay");
        }
        if (p->index >= (p->buffer ? cmd->u.exec.buffer_count : cmd->u.exec.constant_count))
            return accel_i_bad_patch(q, k, p, "the exec has no such binding");
        return true;
    }
    case ACCEL_I_CMD_COPY: return accel_i_copy_patch_ok(q, c, cmd, all, n, k);
    case ACCEL_I_CMD_FILL: {
        accel_buffer* root;
        size_t at;
        if (p->index != 0)
            return accel_i_bad_patch(q, k, p, "a fill takes buffer 0 (dst) or constant 0 (the pattern)");
        if (!p->buffer) return true;
        if (!accel_i_range_patch_ok(q, p, k, cmd->u.fill.rel, cmd->u.fill.size)) return false;
        accel_i_slot_at(cmd, 0, p->buffer, &root, &at);
        return accel_i_fill_aligned(q, cmd->u.fill.rel, at, cmd->u.fill.size, "accel_queue_replay");
    }
    default: return accel_i_bad_patch(q, k, p, "this command (update, barrier, timestamp) takes no patches");
    }
}
/* The backends' form of a checked patch p of list l (see accel_i_patch); holds a reference on the root. */
static accel_i_patch accel_i_patch_resolve(const accel_i_batch* l, const accel_patch* p) {
    accel_i_patch r;
    const accel_i_cmd* cmd = &l->cmds[p->command];
    r.command = p->command;
    r.index = p->index;
    r.value = p->value;
    r.buffer = NULL;
    r.offset = 0;
    r.size = 0;
    if (!p->buffer) return r;
    if (cmd->kind == ACCEL_I_CMD_EXEC) {
        r.buffer = accel_i_buffer_root(p->buffer);
        r.offset = p->buffer->offset;
        r.size = p->buffer->size;
    } else {
        accel_i_slot_at(cmd, p->index, p->buffer, &r.buffer, &r.offset);
        r.size = cmd->kind == ACCEL_I_CMD_COPY ? cmd->u.copy.size : cmd->u.fill.size;
    }
    accel_i_retain(r.buffer);
    return r;
}
static bool accel_i_replay_ok(accel_queue* q, accel_commands* c, const accel_patch* patches, uint32_t n) {
    const char* fn = "accel_queue_replay";
    if (!accel_i_rec_not_recording(q, fn)) return false;
    if (!c) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: command list is NULL", fn);
        return false;
    }
    if (!accel_i_rec_live(q, &c->obj, fn)) return false;
    if (n && !patches) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: patches is NULL", fn);
        return false;
    }
    if (c->obj.device != q->obj.device) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                          "%s: the command list belongs to another device", fn);
        return false;
    }
    if (c->has_exec && q->type != ACCEL_QUEUE_COMPUTE) {
        accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT, "%s: a list with execs on a COPY queue", fn);
        return false;
    }
    for (uint32_t k = 0; k < n; k++) if (!accel_i_patch_ok(q, c, patches, n, k)) return false;
    return true;
}

/* Records command i of the list anew (it was validated when the list was recorded), with the buffers
   and the fill pattern of these patches in place (the last of a slot wins), so that a patch may replace
   a buffer that went stale since (the patch's is checked instead, as one recorded now); an exec's
   constant patches go in after (accel_i_replay_generic). */
static void accel_i_rerecord(accel_queue* q, const accel_i_batch* l, uint32_t i, const accel_patch* all,
                             uint32_t n) {
    const accel_i_cmd* c = &l->cmds[i];
    switch (c->kind) {
    case ACCEL_I_CMD_EXEC: {   /* every backend's max_buffers is at most 64: the patched bindings fit */
        accel_buffer* bufs[64];
        accel_buffer* const* use = (accel_buffer* const*)(const void*)(l->arena + c->u.exec.buffers);
        const uint32_t* consts = (const uint32_t*)(const void*)(l->arena + c->u.exec.constants);
        uint32_t nb = c->u.exec.buffer_count;
        size_t offset = 0;
        accel_buffer* counts = (c->flags & ACCEL_I_CMD_INDIRECT) ? accel_i_exec_counts(l, c, &offset) : NULL;
        if (nb <= 64) {
            memcpy(bufs, use, (size_t)nb * sizeof *bufs);
            ACCEL_I_PATCHES_OF(k, all, n, i, q->replay_sorted) {
                if (all[k].command != i || !all[k].buffer) continue;
                if (all[k].index == nb) counts = all[k].buffer; else bufs[all[k].index] = all[k].buffer;
            }
            use = bufs;
        }
        if (counts)
            accel_queue_exec_indirect(q, c->u.exec.program, use, nb, consts, c->u.exec.constant_count,
                                      c->u.exec.params.local_size, counts, offset);
        else
            accel_queue_exec(q, c->u.exec.program, use, nb, consts, c->u.exec.constant_count,
                             c->u.exec.params);
        break;
    }
    case ACCEL_I_CMD_COPY: {
        accel_buffer *dst, *src;
        size_t d, s;
        accel_i_copy_patched(c, i, all, n, q->replay_sorted, &dst, &d, &src, &s);
        accel_queue_copy(q, dst, d, src, s, c->u.copy.size);
        break;
    }
    case ACCEL_I_CMD_FILL: {
        accel_buffer *dst = NULL, *root;
        uint32_t pattern = c->u.fill.pattern;
        size_t at;
        ACCEL_I_PATCHES_OF(k, all, n, i, q->replay_sorted) {
            if (all[k].command != i) continue;
            if (all[k].buffer) dst = all[k].buffer; else pattern = all[k].value;
        }
        accel_i_slot_at(c, 0, dst, &root, &at);
        accel_queue_fill(q, root, at, c->u.fill.size, pattern);
        break;
    }
    case ACCEL_I_CMD_UPDATE:
        accel_queue_update(q, c->u.update.dst, c->u.update.offset, l->arena + c->u.update.data,
                           c->u.update.size);
        break;
    case ACCEL_I_CMD_BARRIER: accel_queue_barrier(q); break;
    default: break;
    }
}
/* The generic form: the list's commands recorded into the batch with their patches (an exec's
   constants written into what it recorded; an exec over no work is left out, as outside a list: built
   as nothing). */
static void accel_i_replay_generic(accel_queue* q, const accel_commands* c, const accel_patch* patches,
                                   uint32_t n) {
    const accel_i_batch* l = c->list;
    for (uint32_t i = 0; i < l->count; i++) {
        uint32_t before = q->rec ? q->rec->count : 0;
        if (l->cmds[i].kind == ACCEL_I_CMD_EXEC && accel_i_no_work(&l->cmds[i].u.exec.params)) continue;
        accel_i_rerecord(q, l, i, patches, n);
        /* out of memory, or a buffer stale: recorded as the batch's error */
        if (!q->rec || q->rec->count == before) return;
        if (l->cmds[i].kind != ACCEL_I_CMD_EXEC) continue;
        ACCEL_I_PATCHES_OF(k, patches, n, i, q->replay_sorted)
            if (patches[k].command == i && !patches[k].buffer)
                memcpy(q->rec->arena + q->rec->cmds[q->rec->count - 1].u.exec.constants +
                       4u * (size_t)patches[k].index, &patches[k].value, 4);
    }
}
/* By command, then as the caller gave them (`order`: the last of a slot still wins). */
static bool accel_i_patch_before(const accel_i_patch* x, const accel_i_patch* y) {
    return x->command != y->command ? x->command < y->command : x->order < y->order;
}
/* Sorts p in place with no allocation (qsort may malloc, past the device allocator): a heap sort, which
   needs no stability, the keys being unique. */
static void accel_i_patches_sort(accel_i_patch* p, uint32_t n) {
    for (uint32_t end = n, start = n / 2, root, child; end > 1;) {
        accel_i_patch x;
        if (start > 0) {
            root = --start;   /* the heap built first, from the last parent up */
        } else {
            x = p[--end]; p[end] = p[0]; p[0] = x;   /* then the largest goes last, one at a time */
            root = 0;
        }
        for (; (child = 2 * root + 1) < end; root = child) {   /* sift down */
            if (child + 1 < end && accel_i_patch_before(&p[child], &p[child + 1])) child++;
            if (!accel_i_patch_before(&p[root], &p[child])) break;
            x = p[root]; p[root] = p[child]; p[child] = x;
        }
    }
}
ACCEL_API void accel_queue_replay(accel_queue* q, accel_commands* c, const accel_patch* patches,
                                  uint32_t patch_count) {
    size_t bytes = (size_t)patch_count * sizeof(accel_i_patch), off = 0;
    accel_i_patch* copy;
    accel_i_cmd* cmd;
    if (!q) { accel_i_invalid(NULL, "accel_queue_replay", "queue is NULL"); return; }
    q->replay_stages = false;
    q->replay_sorted = patches != NULL;
    for (uint32_t k = 1; k < patch_count && q->replay_sorted; k++)
        q->replay_sorted = patches[k - 1].command <= patches[k].command;
    if (!accel_i_replay_ok(q, c, patches, patch_count)) return;
    if (!c->native || q->replay_stages) { accel_i_replay_generic(q, c, patches, patch_count); return; }
    if ((cmd = accel_i_rec_push(q, ACCEL_I_CMD_REPLAY, bytes, &off, "accel_queue_replay")) == NULL) return;
    if (bytes) {
        copy = (accel_i_patch*)(void*)(q->rec->arena + off);
        for (uint32_t k = 0; k < patch_count; k++) {
            copy[k] = accel_i_patch_resolve(c->list, &patches[k]);
            copy[k].order = k;
        }
        if (!q->replay_sorted) accel_i_patches_sort(copy, patch_count);
    }
    accel_i_retain(c);
    q->rec->replays = true;
    cmd->u.replay.list = c;
    cmd->u.replay.patches = off;
    cmd->u.replay.patch_count = patch_count;
}

/* kit (a GPU backend's copy, where its turn comes): x's device was recovered since x was made (x is
   stale: its memory is gone) or is lost: the copy does not run, DEVICE_LOST (the CPU executor's copies:
   accel_i_peer_copy_run). */
ACCEL_I_KIT bool accel_i_copy_side_gone(const accel_buffer* x) {
    return accel_i_stale(&x->obj) || accel_i_lost(x->obj.device);
}
/* Side `index` of a replayed copy: the buffer of the last of the n patches of that copy (p, in order)
   that replaces the side, else the list's own (a patch may replace one that went stale). */
static const accel_buffer* accel_i_replay_side(const accel_i_patch* p, uint32_t n, uint32_t index,
                                               const accel_buffer* own) {
    for (uint32_t j = n; j-- > 0;)
        if (p[j].index == index && p[j].buffer) return p[j].buffer;
    return own;
}
/* Calls fn(x, dst, src) for each copy of the native list that command r of b replays, with the buffers
   its patches put there; stops at the first true, and returns it. */
typedef bool (*accel_i_copy_visit)(void* x, const accel_buffer* dst, const accel_buffer* src);
static bool accel_i_replay_copies(const accel_i_batch* b, const accel_i_cmd* r, accel_i_copy_visit fn,
                                  void* x) {
    const accel_commands* l = r->u.replay.list;
    uint32_t n = r->u.replay.patch_count, j = 0;   /* sorted by command; none: maybe no arena either */
    const accel_i_patch* p = n ? (const accel_i_patch*)(const void*)(b->arena + r->u.replay.patches) : NULL;
    for (uint32_t k = 0; k < l->list->count; k++) {
        const accel_i_cmd* c = &l->list->cmds[k];
        uint32_t from = j;   /* sorted: the patches of commands before k were passed already */
        const accel_i_patch* mine;
        while (j < n && p[j].command == k) j++;
        mine = j > from ? p + from : NULL;
        if (c->kind == ACCEL_I_CMD_COPY &&
            fn(x, accel_i_replay_side(mine, j - from, 0, c->u.copy.dst),
               accel_i_replay_side(mine, j - from, 1, c->u.copy.src)))
            return true;
    }
    return false;
}
static bool accel_i_copy_gone(void* x, const accel_buffer* dst, const accel_buffer* src) {
    (void)x;
    return accel_i_copy_side_gone(dst) || accel_i_copy_side_gone(src);
}
/* kit: command r of b replays a native list that copies a buffer accel_i_copy_side_gone refuses (its
   own, unless a patch replaces it, or a patch's). A GPU backend looks where it builds the replay too
   (as at a copy), where the list copies with another GPU's memory (ACCEL_I_CMD_PEER_HOST: its waits
   went to the host, and a recover may have come meanwhile). */
ACCEL_I_KIT bool accel_i_replay_gone(const accel_i_batch* b, const accel_i_cmd* r) {
    const accel_commands* l = r->kind == ACCEL_I_CMD_REPLAY ? r->u.replay.list : NULL;
    return l && l->native && l->has_copy && accel_i_replay_copies(b, r, accel_i_copy_gone, NULL);
}
/* The first replay among commands [from, to) of b of a native list that copies a buffer
   accel_i_replay_gone refuses (NULL: none): the native form would copy over an import the old or lost
   memory; a generic list's copy is refused where it runs. A batch without a replay, a list without a
   copy: no look. */
static const accel_i_cmd* accel_i_replays_gone(const accel_i_batch* b, uint32_t from, uint32_t to) {
    for (uint32_t i = from; i < to && b->replays; i++)
        if (accel_i_replay_gone(b, &b->cmds[i])) return &b->cmds[i];
    return NULL;
}
static accel_result accel_i_replay_lost(const accel_i_cmd* r, const char* when) {
    return accel_i_fail(r->u.replay.list->obj.device, ACCEL_ERROR_DEVICE_LOST, "accel_queue_replay: a buffer "
                        "the list copies is stale or its device lost (recovered or lost %s)", when);
}
/* kit (a GPU backend's submit): DEVICE_LOST where a native list replayed in b copies a buffer that
   accel_i_replay_gone refuses (the walk looks again at a segment it builds later: accel_i_walk) */
ACCEL_I_KIT accel_result accel_i_replays_live(const accel_i_batch* b) {
    const accel_i_cmd* r = accel_i_replays_gone(b, 0, b->count);
    return r ? accel_i_replay_lost(r, "since") : ACCEL_OK;
}

/* ==== core: several devices ==== */
/* DESIGN 7.2. A copy may take one buffer of another device (a peer copy). It runs in q's order, one of
   two ways, decided when it is recorded:
   - by q's device itself: a CPU queue's executor is a host thread, and copies any buffer (memmove
     between host-visible ones, else the other backend's buffer_io straight into or out of the
     host-visible side, else through a bounce buffer: accel_i_peer_copy_run); a GPU backend whose
     peer_copy says so (CUDA: peer access or one context) copies in its own stream;
   - staged (ACCEL_I_CMD_STAGED): on a GPU queue otherwise, the copy is a host step (core: batch walk):
     the queue's worker runs accel_i_peer_copy_run once the commands before it completed, then the
     queue goes on. No caller waits on the host for it; the queue's own order is gated there (the
     honest fallback, reported by accel_device_peer_info.direct_copy / device_waits).
   Waits on another device's signals keep the rule of core: batch walk (host-gated on GPU queues,
   unless the backend's peer_waits says yes: CUDA devices on one GPU; a CUDA queue on a CPU signal,
   through the signal's device word, core: device words). A copy of the first kind whose other buffer
   a recover of its device frees (peer_frees: CUDA, another GPU) is flagged ACCEL_I_CMD_PEER_HOST, so
   that it is never left in q's stream behind a GPU wait across that reset: the waits of its segment go
   to the host (accel_i_peer_waits_on_host), and q's worker drains q first where a wait handed to the
   device before them may not be reached (accel_i_peer_ready). Then the copy is counted in the other
   device's peer_copies until its batch completes (or q drained past it), before the backend checks
   its side (accel_i_copy_side_gone): the check sees a recover, or the recover (which raised the
   generation first) sees the count and waits for it (CUDA: accel_i_cu_words_release). A replay of a
   native list with such a copy (as patched) is flagged too, where the walk meets it (CPU-only programs
   keep none of this): its copies are counted, and the backend looks at their sides where it builds the
   replay (accel_i_replay_gone); a generic replay records the copies. */
/* A device whose buffers are all host memory that any thread may read and write (the CPU backend). */
static bool accel_i_host_memory(const accel_device* d) { return d->backend->shares_host_memory; }
/* The device of a copy's buffer that is not q's (NULL: none). */
static accel_device* accel_i_peer_of(accel_queue* q, const accel_buffer* dst, const accel_buffer* src) {
    if (!accel_i_same_device(q, dst->obj.device)) return dst->obj.device;
    if (!accel_i_same_device(q, src->obj.device)) return src->obj.device;
    return NULL;
}
static bool accel_i_peer_rec_ok(accel_queue* q, accel_buffer* dst, accel_buffer* src, const char* fn) {
    if (accel_i_same_device(q, dst->obj.device) || accel_i_same_device(q, src->obj.device)) return true;
    accel_i_rec_error(q, ACCEL_ERROR_INVALID_ARGUMENT,
                      "%s: both buffers belong to other devices (one must be the queue's device's)", fn);
    return false;
}
/* The other device of a copy by q whose recover frees that buffer's memory while q's device may still
   hold the copy (backend->peer_frees: then a direct copy is flagged ACCEL_I_CMD_PEER_HOST); else NULL. */
static accel_device* accel_i_peer_freed(accel_queue* q, const accel_buffer* dst, const accel_buffer* src) {
    accel_device *dev = q->obj.device, *other = accel_i_peer_of(q, dst, src);
    return other && dev->backend->peer_frees && dev->backend->peer_frees(dev, other) ? other : NULL;
}
/* A copy's count left on other until the recover of dev, whose stale queue's batch held it, ends. */
typedef struct accel_i_peer_held { accel_device* other; struct accel_i_peer_held* next; } accel_i_peer_held;
/* Does a recover of dev hold the count of a copy with other's memory (accel_device.recovering)? The
   recover's reap completes a stale queue's batches before dev's streams are idle (CUDA: the stale
   points apply at once), so the copy may not have run yet: its count stays until the recover's end
   (accel_i_peer_release_held), and a recover of other meanwhile still waits for it. False (the caller
   uncounts now): no recover under way (accel_i_peer_hold), or no host memory for the note (logged). */
static bool accel_i_peer_defer(accel_device* dev, accel_device* other) {
    accel_i_peer_held* h = NULL;
    bool want;
    accel_i_spin_lock(&dev->peer_lock);
    if ((want = dev->recovering) && (h = (accel_i_peer_held*)accel_i_dev_alloc(dev, sizeof *h)) != NULL) {
        accel_i_device_retain(other);
        h->other = other;
        h->next = dev->peer_held;
        dev->peer_held = h;
    }
    accel_i_spin_unlock(&dev->peer_lock);
    if (want && !h)
        accel_i_log(dev, ACCEL_LOG_WARN, "accel_device_recover: out of host memory: a copy with another "
                    "GPU's memory is uncounted before this device's streams are idle");
    return h != NULL;
}
/* kit (a backend whose peer_frees says yes, at its recover of dev): from before the recover makes dev's
   objects stale (accel_i_recover_stale) to after dev's old streams are gone, a stale queue's batch
   that completes leaves its copies counted (accel_i_peer_defer); the end lets the counts go. */
ACCEL_I_KIT void accel_i_peer_hold(accel_device* dev) {
    accel_i_spin_lock(&dev->peer_lock);
    dev->recovering = true;
    accel_i_spin_unlock(&dev->peer_lock);
}
ACCEL_I_KIT void accel_i_peer_release_held(accel_device* dev) {
    accel_i_peer_held* h;
    accel_i_spin_lock(&dev->peer_lock);
    h = dev->peer_held;
    dev->peer_held = NULL;
    dev->recovering = false;
    accel_i_spin_unlock(&dev->peer_lock);
    while (h) {
        accel_i_peer_held* next = h->next;
        atomic_fetch_sub(&h->other->peer_copies, 1u);
        accel_i_device_release(h->other);
        accel_i_dev_free(dev, h, sizeof *h);
        h = next;
    }
}
/* Counts (add) or uncounts the copies of command c of b in the peer_copies of their other devices
   (accel_i_peer_freed): a PEER_HOST copy, or a replay of a native list (its copies, as patched). */
typedef struct accel_i_peer_tally { accel_queue* q; bool add; } accel_i_peer_tally;
static bool accel_i_peer_tally_copy(void* x, const accel_buffer* dst, const accel_buffer* src) {
    accel_i_peer_tally* t = (accel_i_peer_tally*)x;
    accel_device* other = accel_i_peer_freed(t->q, dst, src);
    if (other && t->add) atomic_fetch_add(&other->peer_copies, 1u);
    else if (other && !accel_i_peer_defer(t->q->obj.device, other)) atomic_fetch_sub(&other->peer_copies, 1u);
    return false;
}
static void accel_i_peer_tally_cmd(accel_queue* q, const accel_i_batch* b, const accel_i_cmd* c, bool add) {
    accel_i_peer_tally t;
    t.q = q;
    t.add = add;
    if (c->kind == ACCEL_I_CMD_REPLAY) accel_i_replay_copies(b, c, accel_i_peer_tally_copy, &t);
    else accel_i_peer_tally_copy(&t, c->u.copy.dst, c->u.copy.src);
}
/* The counted copies among b's first n commands completed: they leave their devices' peer_copies (the
   batch completed, accel_i_batch_complete; or the walk drained q before command n). */
static void accel_i_peer_uncount(accel_queue* q, accel_i_batch* b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        if (!(b->cmds[i].flags & ACCEL_I_CMD_PEER_COUNTED)) continue;
        accel_i_peer_tally_cmd(q, b, &b->cmds[i], false);
        b->cmds[i].flags &= ~ACCEL_I_CMD_PEER_COUNTED;
    }
}
static uint32_t accel_i_peer_flags(accel_queue* q, const accel_buffer* dst, const accel_buffer* src) {
    accel_device* dev = q->obj.device;
    accel_device* other = accel_i_peer_of(q, dst, src);
    const accel_buffer* ob = other == dst->obj.device ? dst : src;   /* the other device's buffer */
    if (!other || !dev->backend->walk) return 0;   /* the CPU executor copies itself */
    if (!dev->backend->peer_copy || !dev->backend->peer_copy(dev, other, ob->root ? ob->root : ob))
        return ACCEL_I_CMD_STAGED;
    return accel_i_peer_freed(q, dst, src) ? ACCEL_I_CMD_PEER_HOST : 0;
}
static bool accel_i_peer_staged_any(const accel_i_batch* b) {
    for (uint32_t i = 0; i < b->count; i++) if (b->cmds[i].flags & ACCEL_I_CMD_STAGED) return true;
    return false;
}

/* The host's part of a copy (dst, src: roots), on the thread whose turn it is: a memmove where both
   sides are mapped, the unmapped side's buffer_io straight into or out of the other's mapping, else
   through a bounce buffer of dev's (ACCEL_I_PEER_CHUNK at most), chunk by chunk. */
#define ACCEL_I_PEER_CHUNK ((size_t)4 << 20)
static accel_result accel_i_peer_copy_run(accel_device* dev, accel_buffer* dst, size_t doff,
                                          accel_buffer* src, size_t soff, size_t size) {
    accel_device *dd = dst->obj.device, *sd = src->obj.device;
    size_t chunk = size < ACCEL_I_PEER_CHUNK ? size : ACCEL_I_PEER_CHUNK;
    unsigned char* bounce;
    accel_result r = ACCEL_OK;
    if (accel_i_lost(dd) || accel_i_lost(sd)) return ACCEL_ERROR_DEVICE_LOST;   /* mapped or not */
    if (dst->mapped && src->mapped) {
        memmove((unsigned char*)dst->mapped + doff, (const unsigned char*)src->mapped + soff, size);
        return ACCEL_OK;
    }
    if (src->mapped)
        return dd->backend->buffer_io(dst, doff, (unsigned char*)src->mapped + soff, size, true);
    if (dst->mapped)
        return sd->backend->buffer_io(src, soff, (unsigned char*)dst->mapped + doff, size, false);
    if ((bounce = (unsigned char*)accel_i_dev_alloc(dev, chunk)) == NULL)
        return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_queue_copy: out of host memory for a copy between devices (%zu bytes)",
                            chunk);
    for (size_t at = 0; at < size && r == ACCEL_OK; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        r = sd->backend->buffer_io(src, soff + at, bounce, n, false);
        if (r == ACCEL_OK) r = dd->backend->buffer_io(dst, doff + at, bounce, n, true);
    }
    accel_i_dev_free(dev, bounce, chunk);
    return r;
}
/* A copy command run on the host (the CPU executor's copies; a GPU queue's staged ones): 0, or the
   failed value that drops the rest of the batch. */
static uint64_t accel_i_peer_copy_fails(accel_device* dev, accel_result r) {
    if (r == ACCEL_OK) return 0;
    accel_i_log(dev, ACCEL_LOG_ERROR, "accel_queue_copy: a copy failed (%s); the rest of its batch is dropped "
                "and its signals fail", accel_result_string(r));
    return accel_i_failed_value(r);
}
static uint64_t accel_i_peer_copy_cmd(accel_device* dev, const accel_i_cmd* c) {
    accel_buffer *dst = c->u.copy.dst, *src = c->u.copy.src;
    accel_device *dd = dst->obj.device, *sd = src->obj.device;
    accel_result r = ACCEL_ERROR_INVALID_ARGUMENT;
    /* CPU queue memory out of its stretch (core: queue-ordered memory at its point): refused, not read
       through a NULL mapping. Else inside both devices' creates windows (core: device generations): a
       recover of either waits until the copy is over before it frees the memory that the copy reads or
       writes through a mapping (a look at the generations alone could pass just before it starts), and
       one under way refuses it; so does a recover since the copy was recorded (its memory is gone). */
    if (!accel_i_qmem_none(dst) && !accel_i_qmem_none(src)) {
        bool in_d = accel_i_creates_enter(dd, "accel_queue_copy");
        bool in_s = in_d && accel_i_creates_enter(sd, "accel_queue_copy");
        r = !in_s || accel_i_stale(&dst->obj) || accel_i_stale(&src->obj)
            ? ACCEL_ERROR_DEVICE_LOST
            : accel_i_peer_copy_run(dev, dst, c->u.copy.dst_offset, src, c->u.copy.src_offset,
                                    c->u.copy.size);
        if (in_s) accel_i_creates_leave(sd);
        if (in_d) accel_i_creates_leave(dd);
        if (!in_s) {   /* refused by a recover under way: it makes the refusing side's buffer stale once
                          the creates in it left (this copy's too); what fails next fails as its work */
            const accel_i_object* o = in_d ? &src->obj : &dst->obj;
            while (!accel_i_stale(o) && atomic_load(&o->device->creates_closed)) accel_i_yield();
        }
    }
    return accel_i_peer_copy_fails(dev, r);
}

/* ---- core: several devices: the staged pipeline ----
   A GPU queue's staged copy between two devices that map neither buffer goes through the queue's two
   slots: ACCEL_MEMORY_HOST buffers of ACCEL_I_PEER_CHUNK bytes (pinned, portable memory on CUDA: the
   slots are the queue's device's, or the other's where only that one is CUDA), made at the first copy
   and kept with the queue (anew when the copy needs another device's, or theirs was recovered or
   destroyed). Double-buffered: a helper thread writes chunk k into dst from one slot while the queue's
   worker reads chunk k + 1 from src into the other, so the two devices' transfers overlap, as a raw
   program's two streams and two pinned buffers do. One chunk: read, then written, on the worker. No
   slots (out of memory): accel_i_peer_copy_run's bounce buffer, one chunk at a time. */
#if !defined(ACCEL_NO_THREADS)
typedef struct accel_i_stage_run {
    accel_buffer *dst, *src;
    size_t doff, soff, size;
    unsigned char* slot[2];
    accel_i_event filled, drained;   /* chunks read into a slot / written out of one */
    accel_i_a32 failed;              /* -(accel_result) of the first side that failed; 0: none */
} accel_i_stage_run;
#define ACCEL_I_STAGE_END ((uint64_t)1 << 40)   /* added to an event: the other side goes no further */
static size_t accel_i_stage_n(const accel_i_stage_run* s, size_t at) {
    return s->size - at < ACCEL_I_PEER_CHUNK ? s->size - at : ACCEL_I_PEER_CHUNK;
}
static void accel_i_stage_fail(accel_i_stage_run* s, accel_result r, accel_i_event* other) {
    uint32_t none = 0;
    atomic_compare_exchange_strong(&s->failed, &none, (uint32_t)-(int)r);
    accel_i_event_add(other, ACCEL_I_STAGE_END);
}
/* The helper thread: chunk k goes into dst once it is in its slot. */
static void accel_i_stage_writer(void* p) {
    accel_i_stage_run* s = (accel_i_stage_run*)p;
    const accel_backend* be = s->dst->obj.device->backend;
    uint64_t k = 0;
    for (size_t at = 0; at < s->size; at += ACCEL_I_PEER_CHUNK, k++) {
        accel_result r;
        accel_i_event_wait(&s->filled, k + 1, ACCEL_I_FOREVER);
        if (atomic_load(&s->failed)) return;
        r = be->buffer_io(s->dst, s->doff + at, s->slot[k % 2], accel_i_stage_n(s, at), true);
        if (r != ACCEL_OK) { accel_i_stage_fail(s, r, &s->drained); return; }
        accel_i_event_add(&s->drained, 1);
    }
}
/* Chunk by chunk through slot 0, on this thread: a copy of one chunk, or no helper thread. */
static accel_result accel_i_stage_serial(accel_i_stage_run* s) {
    accel_result r = ACCEL_OK;
    for (size_t at = 0; at < s->size && r == ACCEL_OK; at += ACCEL_I_PEER_CHUNK) {
        r = s->src->obj.device->backend->buffer_io(s->src, s->soff + at, s->slot[0], accel_i_stage_n(s, at),
                                                   false);
        if (r == ACCEL_OK)
            r = s->dst->obj.device->backend->buffer_io(s->dst, s->doff + at, s->slot[0],
                                                       accel_i_stage_n(s, at), true);
    }
    return r;
}
/* The queue's thread: chunk k into its slot once chunk k - 2 left it; the writer alongside. */
static accel_result accel_i_stage_pipe(accel_i_stage_run* s) {
    const accel_backend* be = s->src->obj.device->backend;
    accel_i_thread t;
    uint64_t k = 0;
    accel_result r;
    if (s->size <= ACCEL_I_PEER_CHUNK || !accel_i_event_init(&s->filled, 0)) return accel_i_stage_serial(s);
    if (!accel_i_event_init(&s->drained, 0)) {
        accel_i_event_destroy(&s->filled);
        return accel_i_stage_serial(s);
    }
    atomic_init(&s->failed, 0u);
    if (accel_i_thread_start(&t, accel_i_stage_writer, s) != ACCEL_OK) {
        r = accel_i_stage_serial(s);
    } else {
        for (size_t at = 0; at < s->size; at += ACCEL_I_PEER_CHUNK, k++) {
            if (k >= 2) accel_i_event_wait(&s->drained, k - 1, ACCEL_I_FOREVER);
            if (atomic_load(&s->failed)) break;
            r = be->buffer_io(s->src, s->soff + at, s->slot[k % 2], accel_i_stage_n(s, at), false);
            if (r != ACCEL_OK) { accel_i_stage_fail(s, r, &s->filled); break; }
            accel_i_event_add(&s->filled, 1);
        }
        accel_i_thread_join(&t);
        r = atomic_load(&s->failed) ? (accel_result)-(int)atomic_load(&s->failed) : ACCEL_OK;
    }
    accel_i_event_destroy(&s->filled);
    accel_i_event_destroy(&s->drained);
    return r;
}
#endif
/* Drops q's slots (its teardown; a copy that needs others). */
static void accel_i_stage_drop(accel_queue* q) {
    for (int i = 0; i < 2; i++) {
        if (!q->stage[i]) continue;
        accel_buffer_destroy(q->stage[i]);
        accel_i_release(q->stage[i]);
        q->stage[i] = NULL;
    }
}
#if !defined(ACCEL_NO_THREADS)
/* q's slots on `dev` (made now if q has none there that still work); false when they cannot be made. */
static bool accel_i_stage_slots(accel_queue* q, accel_device* dev) {
    accel_buffer_desc desc;
    accel_buffer* b = q->stage[0];
    if (b && b->obj.device == dev && !accel_i_stale(&b->obj) && !atomic_load(&dev->destroyed)) return true;
    accel_i_stage_drop(q);
    memset(&desc, 0, sizeof desc);
    desc.size = ACCEL_I_PEER_CHUNK;
    desc.memory = ACCEL_MEMORY_HOST;
    desc.label = "staged copy slot";
    for (int i = 0; i < 2; i++) {
        if (accel_buffer_create(dev, &desc, &q->stage[i]) != ACCEL_OK) {
            accel_i_stage_drop(q);
            return false;
        }
        accel_i_retain(q->stage[i]);   /* the slot outlives a destroy of its device's handles */
        if (!q->stage[i]->mapped) { accel_i_stage_drop(q); return false; }
    }
    return true;
}
/* A GPU queue's staged copy (a host step, core: batch walk): through the slots where neither side is
   mapped, else as the CPU executor's copies. */
static uint64_t accel_i_peer_staged_cmd(accel_queue* q, const accel_i_cmd* c) {
    accel_buffer *dst = c->u.copy.dst, *src = c->u.copy.src;
    accel_device *dd = dst->obj.device, *sd = src->obj.device;
    accel_device* other = dd == q->obj.device ? sd : dd;
    /* the queue's device's, unless only the other one's host buffers are pinned (CUDA) */
    bool pin = other->backend->pinned_host_buffers && !q->obj.device->backend->pinned_host_buffers;
    accel_device* slots = pin ? other : q->obj.device;
    accel_i_stage_run s;
    if (dst->mapped || src->mapped || accel_i_stale(&dst->obj) || accel_i_stale(&src->obj) ||
        accel_i_qmem_none(dst) || accel_i_qmem_none(src) ||   /* refused there (queue memory at its point) */
        accel_i_lost(dd) || accel_i_lost(sd) || !accel_i_stage_slots(q, slots))
        return accel_i_peer_copy_cmd(q->obj.device, c);
    s.dst = dst; s.doff = c->u.copy.dst_offset;
    s.src = src; s.soff = c->u.copy.src_offset;
    s.size = c->u.copy.size;
    s.slot[0] = (unsigned char*)q->stage[0]->mapped;
    s.slot[1] = (unsigned char*)q->stage[1]->mapped;
    return accel_i_peer_copy_fails(q->obj.device, accel_i_stage_pipe(&s));
}
#endif

ACCEL_API accel_result accel_device_peer_info(accel_device* a, accel_device* b, accel_peer_info* out) {
    bool same;
    if (!a || !b || !out) return accel_i_invalid(a ? a : b, "accel_device_peer_info", "a, b or out is NULL");
    if (accel_i_lost(a) || accel_i_lost(b)) return ACCEL_ERROR_DEVICE_LOST;
    same = a == b || (a->backend == b->backend && accel_i_host_memory(a));
    out->copy = true;
    out->direct_copy = same || accel_i_host_memory(a) || accel_i_host_memory(b) ||
                       (a->backend->peer_copy && a->backend->peer_copy(a, b, NULL));
    out->device_waits = same || (a->backend->peer_waits && a->backend->peer_waits(a, b));
    return ACCEL_OK;
}

/* ==== core: imported memory of other devices ====
   A GPU queue's direct copy with a buffer of another device whose memory it cannot name itself (Vulkan
   to Vulkan; a CUDA queue with a Vulkan buffer of the same GPU) goes through an import: the memory
   that buffer lies in (a block it is a range of, or its own) exported as an opaque fd by its device
   (share->memory_export) and imported into the queue's (share->memory_import), once per memory and
   importer. The imports of the process are one list under one spin lock (short sections), keyed by
   the exported memory's owner (accel_i_export.key) and the importer. An import goes when its memory
   goes (the exporter calls accel_i_imports_evict as it frees a buffer's memory or drops a block:
   nothing in flight uses it then, as the core keeps a peer copy's buffers until it completed) or
   when its importer goes (accel_i_imports_drop_into at its destroy or recover); both under the lock,
   so that neither runs beside the other.
   Exportable memory costs (lavapipe: memfd pages, about 1.4x the time to make and clear a buffer), so
   a device allocates it only while another device of the process could import it: devices that
   export or import join the sharers' list at create (accel_i_sharers_update) and leave it at destroy;
   each one's `exporting` says whether another's share->can_import says yes to it (recounted at each
   join and leave). Memory made while a device was alone stays unexported: copies of it are staged. */
struct accel_i_export {
    const void* key;     /* the exported memory's owner on its device (a block, a buffer) */
    uint64_t size;       /* the memory's bytes */
    uint64_t offset;     /* where the buffer (a root) lies in it */
    uint32_t type;       /* the exporter's memory type (Vulkan: its index, which the same driver takes);
                            ACCEL_I_TYPE_ANY: another driver's memory, the importer picks one that holds it */
};
#define ACCEL_I_TYPE_ANY UINT32_MAX
/* An import: a backend's (share->import_bytes) embeds this as its first member. */
struct accel_i_import {
    struct accel_i_import* next;
    const void* key;
    accel_device* to;    /* the importer */
    /* a relay's semaphore (core: relays), and whether `to` ended it (under the lock) */
    bool relay, relay_ended;
};
typedef struct accel_i_share_ops {
    size_t import_bytes;   /* the importer's struct (accel_i_import first) */
    /* exporter: can dev export memory at all? does root's memory export (then *out says which)? */
    bool (*exports)(const accel_device* dev);
    bool (*memory_of)(const accel_buffer* root, accel_i_export* out);
    /* exporter: a new opaque fd of root's memory (the caller's) */
    accel_result (*memory_export)(const accel_buffer* root, int* fd);
    /* importer: could `to` import memory `from` exports (both sharers; under the lock: no driver call) */
    bool (*can_import)(const accel_device* to, const accel_device* from);
    /* importer: imports fd (always taken: the driver's on success, closed on failure) as im, whole on
       success, with nothing left on failure; import_free releases it (its device's context made current
       where the backend needs one) */
    accel_result (*memory_import)(accel_device* to, const accel_i_export* ex, int fd, accel_i_import* im);
    void (*import_free)(accel_i_import* im);
    /* signals (core: signals waited on by other devices). Exporter: does dev make signals another
       device can import? may another device wait for s >= v on its own device (s exported, and v
       promised by work already handed to s's device, so that the wait holds up nothing that must come
       after it)? a new opaque fd of s's semaphore (the caller's). Importer: imports fd (always taken,
       as memory_import) as im, which import_free releases */
    bool (*signals_export)(const accel_device* dev);
    bool (*signal_waitable)(accel_signal* s, uint64_t v);
    accel_result (*signal_export)(accel_signal* s, int* fd);
    accel_result (*signal_import)(accel_device* to, accel_signal* s, int fd, accel_i_import* im);
    /* relays (core: relays), the signal's device's side: can dev raise another device's semaphore at
       all (with `to` of the same GPU)? raise r (a signal of the waiting device, imported here as a
       signal) to `ticket` on s's device once s >= v: true where it enqueued that, false where it cannot
       for v (the wait is gated on the host) */
    bool (*relays)(const accel_device* dev, const accel_device* to);
    bool (*relay)(accel_signal* s, uint64_t v, accel_signal* r, uint64_t ticket);
    /* the import of a relay im ends (accel_i_relays_end, under the lock): what s's device enqueued to
       raise it has run, or never will */
    void (*relay_settle)(accel_i_import* im);
} accel_i_share_ops;

static accel_i_import* accel_i_imports;
static accel_device* accel_i_sharers;
static accel_i_a32 accel_i_imports_lock;   /* the imports and the sharers */

static bool accel_i_can_import(const accel_device* to, const accel_device* from) {
    return to != from && to->backend->share && to->backend->share->can_import &&
           to->backend->share->can_import(to, from);
}
/* joining (at create) or leaving (at destroy): every sharer counts again */
static void accel_i_sharers_update(accel_device* dev, bool join) {
    accel_device **link = &accel_i_sharers, *o, *i;
    accel_i_spin_lock(&accel_i_imports_lock);
    while (*link && *link != dev) link = &(*link)->next_sharer;
    if (!join && *link) *link = dev->next_sharer;
    if (join && !*link) { dev->next_sharer = accel_i_sharers; accel_i_sharers = dev; }
    for (o = accel_i_sharers; o; o = o->next_sharer) {
        uint32_t n = 0;
        for (i = accel_i_sharers; i; i = i->next_sharer) n += accel_i_can_import(i, o);
        atomic_store(&o->exporting, n ? 1u : 0u);
    }
    accel_i_spin_unlock(&accel_i_imports_lock);
}
static bool accel_i_exporting(const accel_device* dev) { return atomic_load(&dev->exporting) != 0; }
/* Is root memory taken at its point (core: queue-ordered memory at its point)? Which memory it is is
   known only where a command runs: an import made when a copy is recorded would name another use's. */
static bool accel_i_import_late(const accel_buffer* root) { return (root->qmem & ACCEL_I_QMEM_LATE) != 0; }
static void accel_i_import_free(accel_i_import* im) {
    accel_device* to = im->to;
    to->backend->share->import_free(im);
    atomic_fetch_sub(&to->imports, 1u);
    accel_i_dev_free(to, im, to->backend->share->import_bytes);
}
/* Frees every import whose memory is key's, or, key NULL, every import into `to`. */
static void accel_i_imports_drop(const void* key, const accel_device* to) {
    accel_i_import **link = &accel_i_imports, *im;
    accel_i_spin_lock(&accel_i_imports_lock);
    while ((im = *link) != NULL) {
        if (key ? im->key == key : im->to == to) { *link = im->next; accel_i_import_free(im); }
        else link = &im->next;
    }
    accel_i_spin_unlock(&accel_i_imports_lock);
}
static void accel_i_imports_evict(const void* key) { if (key) accel_i_imports_drop(key, NULL); }
static void accel_i_imports_drop_into(accel_device* to) { accel_i_imports_drop(NULL, to); }
static accel_i_import* accel_i_import_find(const void* key, const accel_device* to) {
    accel_i_import* im = accel_i_imports;
    while (im && (im->key != key || im->to != to)) im = im->next;
    return im;
}
/* The import of key into `to` made before (NULL: none). */
static accel_i_import* accel_i_import_of(const void* key, const accel_device* to) {
    accel_i_import* im;
    accel_i_spin_lock(&accel_i_imports_lock);
    im = accel_i_import_find(key, to);
    accel_i_spin_unlock(&accel_i_imports_lock);
    return im;
}
/* The import of key (another device's memory, ex of root; or else signal s) into `to`, made the first
   time: exported by its device and imported by `to` outside the lock; a thread that came first wins. */
static accel_result accel_i_import_keyed(accel_device* to, const void* key, const accel_buffer* root,
                                         const accel_i_export* ex, accel_signal* s, bool relay,
                                         accel_i_import** out) {
    const accel_i_share_ops* fs = (root ? root->obj.device : s->obj.device)->backend->share;
    const accel_i_share_ops* ts = to->backend->share;
    accel_i_import *im, *fresh;
    accel_result r;
    int fd = -1;
    if ((im = accel_i_import_of(key, to)) != NULL) { *out = im; return ACCEL_OK; }
    if ((fresh = (accel_i_import*)accel_i_dev_alloc(to, ts->import_bytes)) == NULL)
        return accel_i_fail(to, ACCEL_ERROR_OUT_OF_MEMORY, "%s: out of host memory for an import",
                            root ? "accel_queue_copy" : "accel_queue_submit");
    memset((void*)fresh, 0, ts->import_bytes);
    fresh->key = key;
    fresh->to = to;
    fresh->relay = relay;   /* listed with it (core: relays) */
    r = root ? fs->memory_export(root, &fd) : fs->signal_export(s, &fd);
    if (r == ACCEL_OK) r = root ? ts->memory_import(to, ex, fd, fresh) : ts->signal_import(to, s, fd, fresh);
    if (r != ACCEL_OK) { accel_i_dev_free(to, fresh, ts->import_bytes); return r; }
    atomic_fetch_add(&to->imports, 1u);
    accel_i_spin_lock(&accel_i_imports_lock);
    if ((im = accel_i_import_find(key, to)) == NULL) {   /* else another thread's came first */
        fresh->next = accel_i_imports;
        accel_i_imports = im = fresh;
        fresh = NULL;
    }
    accel_i_spin_unlock(&accel_i_imports_lock);
    if (fresh) accel_i_import_free(fresh);
    *out = im;
    return ACCEL_OK;
}
/* The import into `to` of the memory of root (another device's buffer), made the first time; *at: where
   root lies in it. It stays while root's memory lives. UNSUPPORTED (not logged) where that memory is
   not exportable. */
static accel_result accel_i_import_get(accel_device* to, const accel_buffer* root, accel_i_import** out,
                                       uint64_t* at) {
    const accel_i_share_ops* fs = root->obj.device->backend->share;
    const accel_i_share_ops* ts = to->backend->share;
    accel_i_export ex;
    *out = NULL;
    if (!fs || !ts || !fs->memory_of || !ts->memory_import || !fs->memory_of(root, &ex))
        return ACCEL_ERROR_UNSUPPORTED;
    *at = ex.offset;
    return accel_i_import_keyed(to, ex.key, root, &ex, NULL, false, out);
}
/* Another backend's device whose memory `to` could import: it exports, on the same GPU (the same
   non-zero uuid; two drivers of one GPU, CUDA's and Vulkan's). */
static bool accel_i_exports_to(const accel_device* to, const accel_device* from) {
    static const uint8_t zero[16] = { 0 };
    const accel_i_share_ops* fs = from->backend->share;
    return from->backend != to->backend && fs && fs->exports && fs->exports(from) &&
           memcmp(to->info.uuid, zero, 16) != 0 && memcmp(to->info.uuid, from->info.uuid, 16) == 0;
}
/* A backend's peer_copy with another backend's device: buf NULL, could `to` import from it (peer_info);
   else does buf's memory import (made now, so that a copy that cannot import is staged, as is one of
   memory taken at its point, whose memory is known only where the copy runs). */
static bool accel_i_imports_from(accel_device* to, accel_device* from, const accel_buffer* buf) {
    accel_i_import* im;
    uint64_t at;
    if (!accel_i_can_import(to, from)) return false;
    if (!buf) return true;
    return !accel_i_import_late(buf) && accel_i_import_get(to, buf, &im, &at) == ACCEL_OK;
}

/* ==== core: signals waited on by other devices ====
   A queue's wait on another backend's (or another VkDevice's) signal goes to the device where the two
   share a semaphore: the signal's timeline semaphore exported as an opaque fd by its device
   (share->signal_export) and imported by the waiting one (share->signal_import: Vulkan, another
   VkDevice of the same device and driver; CUDA, a Vulkan device of the same GPU, through
   cuImportExternalSemaphore), once per signal and importer, in the imports' list above (keyed by the
   signal; evicted when the signal goes, which the exporter does at its destroy: no batch that waits on
   it is unfinished then, as each holds the signal; dropped when the importer goes). Only for a value
   the signal's device was already handed work to reach (share->signal_waitable): a wait for a value
   only a later host raise could bring stays gated on the host, so a device's queue never waits on
   another device for something its own later work might have to cause. Whether two devices can do it
   at all: accel_i_signal_shared (their backends' peer_waits use it). */
static bool accel_i_signal_shared(const accel_device* to, const accel_device* from) {
    const accel_i_share_ops *fs = from->backend->share, *ts = to->backend->share;
    return to != from && fs && ts && fs->signals_export && fs->signals_export(from) && ts->signal_import &&
           accel_i_can_import(to, from);
}
/* The import of s (another device's signal) into `to`, made the first time, where `to`'s queues may wait
   for s >= v on the device (NULL: they gate on the host). */
static accel_i_import* accel_i_signal_import(accel_device* to, accel_signal* s, uint64_t v) {
    const accel_i_share_ops* fs = s->obj.device->backend->share;
    accel_i_import* im = NULL;
    if (!accel_i_signal_shared(to, s->obj.device) || !fs->signal_waitable(s, v)) return NULL;
    return accel_i_import_keyed(to, s, NULL, NULL, s, false, &im) == ACCEL_OK ? im : NULL;
}

/* ==== core: relays ====
   The other way, where the signal's device has no semaphore to export (a CUDA signal is a word): the
   waiting device lends one. A queue of it that waits on the device for s >= v keeps a signal of its own
   per device it waits on this way (a relay: accel_vulkan.h, "vulkan: waits on CUDA signals"), which
   s's device imports once as it imports any signal of that device (the imports' list, keyed by the
   relay: accel_i_relay_import) and raises to a ticket once s >= v (share->relay, which enqueues under
   the imports' lock, so that the import stays meanwhile: accel_i_imports_hold). Whether two devices
   can: accel_i_relays_to. When s's device recovers or is lost, accel_i_relays_end settles the relays
   imported there (share->relay_settle: what was enqueued has run, or never will) and fails them (their
   semaphores go past every wait, which releases whatever a dead stream will not), once; the queue
   makes a new relay for its next wait. */
static bool accel_i_relays_to(const accel_device* to, const accel_device* from) {
    const accel_i_share_ops* fs = from->backend->share;
    return fs && fs->relays && fs->relay && fs->relays(from, to) && accel_i_signal_shared(from, to);
}
/* The import of relay r (a signal of another device) into `to`, made the first time (NULL: none). */
static accel_i_import* accel_i_relay_import(accel_device* to, accel_signal* r) {
    accel_i_import* im = NULL;
    return accel_i_import_keyed(to, r, NULL, NULL, r, true, &im) == ACCEL_OK ? im : NULL;
}
/* The imports' lock, taken (true) or given back, for a backend's short use of an import it found. */
static void accel_i_imports_hold(bool take) {
    if (take) accel_i_spin_lock(&accel_i_imports_lock);
    else accel_i_spin_unlock(&accel_i_imports_lock);
}
/* `from` recovers or is lost: every relay imported into it settles and fails, once. */
static void accel_i_relays_end(accel_device* from) {
    for (;;) {
        accel_signal* r = NULL;
        bool found = false;
        accel_i_spin_lock(&accel_i_imports_lock);
        for (accel_i_import* im = accel_i_imports; im && !found; im = im->next)
            if (im->to == from && im->relay && !im->relay_ended) {
                found = im->relay_ended = true;
                from->backend->share->relay_settle(im);
                if (accel_i_try_retain((accel_i_object*)(void*)(uintptr_t)im->key))   /* not being freed */
                    r = (accel_signal*)(void*)(uintptr_t)im->key;
            }
        accel_i_spin_unlock(&accel_i_imports_lock);
        if (!found) return;
        if (r) {
            if (!accel_i_stale(&r->obj))   /* else its semaphore went with a recover, which released them */
                accel_i_signal_raise_held(r, accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST));
            accel_i_release(r);
        }
    }
}

/* ==== core: failure after hand-off ==== */
/* DESIGN 6.1: work behind a wait the core handed to the device may run after the wait's signal failed;
   every signal that work signals must read failed, with the same reason, before any device-side waiter
   is released by it. A batch whose segment handed a wait to the device stays in a `dwaits` list until
   it completes: its device's, or, when its device waits watch another device's signals (several
   devices: all of one device, see accel_i_classify), that device's. Failing a signal walks that list:
   every listed batch with a device wait on the signal for a value it had not reached before the
   failure gets the rest of its signals failed (host words only, under the lock), and so on for the
   signals of this device failed that way (a work list through accel_signal.fail_next, no recursion, no
   allocation); then, outside the lock, other devices' signals get the whole raise, and each failure
   is published to the device.

   The protocol, stated here once: a thread that fails a signal and a walk that hands a wait on it to
   the device meet through one store / seq_cst fence / load pairing on each side.
   - The failer (accel_i_fail_handed_off, from accel_i_raise): stores the failed host word, fences,
     then loads the device's dwait_count.
   - The walk (accel_i_ready): accel_i_dwait_add stores the batch into the list (count + 1) and fences,
     then accel_i_recheck loads its waits' signals.
   With both fences at least one side sees the other's store: the failer finds the batch in the list
   and fails its rest, or the walk sees the failed value and classifies the segment again. */
#if !defined(ACCEL_NO_THREADS)   /* only the batch walk adds */
static void accel_i_dwait_add(accel_i_batch* b, accel_queue* q, accel_device* dev) {
    if (b->dlisted) return;
    b->dqueue = q;
    b->ddev = dev;
    accel_i_spin_lock(&dev->dwait_lock);
    b->dprev = NULL;
    b->dnext = dev->dwaits;
    if (dev->dwaits) dev->dwaits->dprev = b;
    dev->dwaits = b;
    b->dlisted = true;
    atomic_fetch_add(&dev->dwait_count, 1u);
    atomic_fetch_add(&q->dlisted, 1u);
    accel_i_spin_unlock(&dev->dwait_lock);
    atomic_thread_fence(memory_order_seq_cst);   /* the protocol (above): then accel_i_recheck */
}
/* The walk's half, after accel_i_dwait_add: a failure of one of the segment's waits that came before
   the batch joined the list is seen here (one that comes later finds the batch in the list). */
static uint64_t accel_i_recheck(accel_i_batch* b, const accel_i_segment* sg) {
    for (uint32_t i = sg->wfrom; i < sg->from; i++) {
        uint64_t cur = accel_i_signal_value(b->cmds[i].u.sig.signal);
        if (accel_i_failed(cur)) return cur;
    }
    return 0;
}
#endif
static void accel_i_dwait_remove(accel_i_batch* b, accel_device* dev) {
    if (!b->dlisted) return;
    accel_i_spin_lock(&dev->dwait_lock);
    if (b->dprev) b->dprev->dnext = b->dnext; else dev->dwaits = b->dnext;
    if (b->dnext) b->dnext->dprev = b->dprev;
    b->dlisted = false;
    atomic_fetch_sub(&dev->dwait_count, 1u);
    atomic_fetch_sub(&b->dqueue->dlisted, 1u);
    accel_i_spin_unlock(&dev->dwait_lock);
}
/* The first command of b after a device wait on s that s had not reached at `before`; b->count if none. */
static uint32_t accel_i_dwait_hit(const accel_i_batch* b, const accel_signal* s, uint64_t before) {
    for (uint32_t i = 0; i < b->count; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        if (c->kind == ACCEL_I_CMD_WAIT && (c->flags & ACCEL_I_CMD_ON_DEVICE) && c->u.sig.signal == s &&
            c->u.sig.value > before)
            return i + 1;
    }
    return b->count;
}
/* The signals failed by one failure: todo / done on this device (through fail_next, under dwait_lock);
   foreign: other devices' signals, raised once the lock is released (through foreign_next, claimed by
   foreign_held so that a signal is on one list at a time; a signal another failure already holds is
   raised by that one). Neither list allocates, however many signals the failed batches hold. */
typedef struct accel_i_fail_list { accel_signal *todo, *done, *foreign; } accel_i_fail_list;
/* Fails (host word) the signals of b from command `from` on; queues the newly failed ones (dwait_lock
   held). */
static void accel_i_dwait_fail_batch(accel_device* dev, accel_i_batch* b, uint32_t from, uint64_t failed,
                                     accel_i_fail_list* l) {
    for (uint32_t i = from; i < b->count; i++) {
        accel_signal* u = b->cmds[i].u.sig.signal;
        uint64_t before;
        if (b->cmds[i].kind != ACCEL_I_CMD_SIGNAL) continue;
        if (u->obj.device != dev) {   /* another device's lock: raised after ours is released */
            if (atomic_exchange(&u->foreign_held, 1u) == 0u) {
                accel_i_retain(u);
                u->foreign_next = l->foreign;
                l->foreign = u;
            }
            continue;
        }
        before = dev->backend->signal_value(u);
        if (accel_i_failed(dev->backend->signal_raise(u, failed))) continue;   /* failed already */
        accel_i_retain(u);
        u->fail_before = before;
        u->fail_next = l->todo;
        l->todo = u;
    }
}
static void accel_i_fail_device_waiters(accel_signal* s, uint64_t before, uint64_t failed) {
    accel_device* dev = s->obj.device;
    accel_i_fail_list l;
    l.todo = l.done = l.foreign = NULL;
    accel_i_retain(s);
    s->fail_before = before;
    s->fail_next = NULL;
    l.todo = s;
    accel_i_spin_lock(&dev->dwait_lock);
    while (l.todo) {
        accel_signal* t = l.todo;
        l.todo = t->fail_next;
        t->fail_next = l.done;
        l.done = t;
        for (accel_i_batch* b = dev->dwaits; b; b = b->dnext) {
            uint32_t from = accel_i_dwait_hit(b, t, t->fail_before);
            if (from < b->count) accel_i_dwait_fail_batch(dev, b, from, failed, &l);
        }
    }
    accel_i_spin_unlock(&dev->dwait_lock);
    /* other devices' signals first (the whole raise: host word, failure flow and device side on their
       device): a batch of another device listed here (its device waits watch this device's signals)
       is released by what is published below, and its signals must read failed before that */
    while (l.foreign) {
        accel_signal* u = l.foreign;
        l.foreign = u->foreign_next;
        atomic_store(&u->foreign_held, 0u);
        accel_i_raise(u, failed);
        accel_i_release(u);
    }
    while (l.done) {   /* now the device may see the failures (and release its waiters) */
        accel_signal* t = l.done;
        l.done = t->fail_next;
        if (dev->backend->walk) dev->backend->walk->signal_publish(t, failed);
        else accel_i_dword_raise(t, failed);
        accel_i_release(t);
    }
}

/* The failer's half of the protocol (above): s's host word already reads failed. Returns true when
   batches are listed: then the list was walked and the failure published (else the caller publishes). */
static bool accel_i_fail_handed_off(accel_signal* s, uint64_t before, uint64_t failed) {
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&s->obj.device->dwait_count) == 0) return false;
    accel_i_fail_device_waiters(s, before, failed);
    return true;
}

/* ==== core: batch walk (GPU backends) ==== */
/* The core decides, for every GPU backend, how a batch runs; the backend only turns segments into
   native work. A segment is a run of waits followed by commands up to the next wait. Each wait is
   - reached: nothing to do (the backend may still add a native dependency for memory order);
   - failed: the v1 rule: nothing more of the batch runs, and what it would signal fails;
   - on the device: the backend says its device can watch the signal reach the value itself (a value a
     GPU signal operation already promised, or a signal the host raises where the device can see it):
     the wait goes into the segment, flagged ACCEL_I_CMD_ON_DEVICE, and the segment is submitted at once;
   - gated: anything else (a value nobody promised on a signal the device cannot watch, another
     device's or backend's signal): the queue's worker thread waits on the host, then goes on.
   accel_queue_submit walks on the caller's thread until a gated wait is not reached (or the backend
   needs to block), then hands the rest to the queue's worker; later batches queue behind it, so the
   queue stays in order. No host thread wakes for a batch whose waits all go to the device.
   Host steps (accel_i_cmd_is_host_step: host_call, HOST_READ execs, a staged peer copy) need the host
   once the commands before them completed: a segment ends before one, and the walk runs it on the
   queue's worker after backend->queue_drain (a walk inside accel_queue_submit hands off there), then
   goes on. */
/* segment_submit and the walk: "cannot go on without blocking" (an int: accel_result cannot hold it in
   C++, where an enum holds only the values its enumerators span) */
#define ACCEL_I_WOULD_BLOCK 1000
#define ACCEL_I_TAKEN 1001         /* accel_i_walk (the worker): a raiser took the batch at a gate */

#if !defined(ACCEL_NO_THREADS)   /* GPU backends need threads: no-threads builds have none to walk */
/* The one list of host-step command kinds (segment splitting here and in backends' plans uses it). */
static bool accel_i_cmd_is_host_step(const accel_i_cmd* c) {
    return c->kind == ACCEL_I_CMD_HOST_CALL || (c->flags & (ACCEL_I_CMD_HOST_READ | ACCEL_I_CMD_STAGED));
}
/* kit: the segment rule, the one place it is stated. The segment of b that starts at command `at`
   (not a host step): its waits, then its commands up to the next wait or host step. */
static accel_i_segment accel_i_segment_at(const accel_i_batch* b, uint32_t at) {
    accel_i_segment sg;
    sg.wfrom = sg.from = at;
    while (sg.from < b->count && b->cmds[sg.from].kind == ACCEL_I_CMD_WAIT) sg.from++;
    for (sg.to = sg.from; sg.to < b->count; sg.to++) {
        const accel_i_cmd* c = &b->cmds[sg.to];
        if (c->kind == ACCEL_I_CMD_WAIT || accel_i_cmd_is_host_step(c)) break;
    }
    return sg;
}
/* The walking thread (may_block) waits until everything q enqueued so far completed (backend
   queue_drain): before a host step, the rest of a failed segment, a PEER_HOST copy with device waits
   ahead. Then b's counted copies before b->pc are done (core: several devices): a recover need not wait
   for them. Returns 0, or the failed value of the drain's error. */
static uint64_t accel_i_drained(accel_queue* q, accel_i_batch* b) {
    accel_result r = q->obj.device->backend->walk->queue_drain(q, ACCEL_WAIT_FOREVER);
    if (r != ACCEL_OK) return accel_i_failed_value(r);
    if (b->peer_host) accel_i_peer_uncount(q, b, b->pc);
    return 0;
}
/* Runs the host step at b->pc once backend->queue_drain says everything before it completed. Returns 0,
   or the failed value that drops the rest of the batch: a drain error, or a wait before it that the
   device passed because its signal failed (device work behind such a wait may run; a host step is
   host work, and keeps the rule of failed waits). Only the waits since the last host step are read:
   those before it had completed then, reached before any later failure. */
static uint64_t accel_i_host_step(accel_queue* q, accel_i_batch* b) {
    uint64_t t0, failed = accel_i_drained(q, b);
    accel_i_cmd* c = &b->cmds[b->pc];
    if (!failed && accel_i_stale(&q->obj)) failed = accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST);
    if (failed) return failed;   /* a drain error, or recovered meanwhile */
    for (uint32_t i = b->host_checked; i < b->pc; i++) {
        uint64_t cur;
        if (b->cmds[i].kind != ACCEL_I_CMD_WAIT || !(b->cmds[i].flags & ACCEL_I_CMD_ON_DEVICE)) continue;
        if (accel_i_failed(cur = accel_i_signal_value(b->cmds[i].u.sig.signal))) return cur;
    }
    b->host_checked = b->pc;
    /* a queue-memory handle it reads or copies with no memory: the batch fails as where it is built */
    if (b->qmem && (failed = accel_i_qmem_use_failed(q, b, c)) != 0) return failed;
    if (c->kind == ACCEL_I_CMD_EXEC) return accel_i_indirect_read(q, b, c);   /* stays at b->pc, direct */
    t0 = ACCEL_I_TRACING(q->obj.device) ? accel_i_now_ns() : 0;
    if (c->kind == ACCEL_I_CMD_COPY) {
        failed = accel_i_peer_staged_cmd(q, c);
    } else {
        accel_i_call call;
        accel_i_call_enter(&call, q);
        c->u.host.fn(c->u.host.user);
        accel_i_call_leave(&call);
    }
    if (t0) accel_i_trace_cmd(q, c, t0, accel_i_now_ns());   /* its span, as on the CPU backend */
    return failed;
}

/* TAKEN: while the worker waited at a gate, a host raise took the batch (accel_i_gate_open) */
enum { ACCEL_I_SEG_READY, ACCEL_I_SEG_GATED, ACCEL_I_SEG_FAILED, ACCEL_I_SEG_TAKEN };
/* Sets or clears wait c's ACCEL_I_CMD_ON_DEVICE; under the device's dwait_lock once b is in the dwaits
   list, where a failure on another thread reads the flags (accel_i_dwait_hit). The walking thread is
   the only writer. */
static void accel_i_wait_flag(accel_queue* q, accel_i_batch* b, accel_i_cmd* c, bool on) {
    uint32_t f = on ? (c->flags | ACCEL_I_CMD_ON_DEVICE) : (c->flags & ~ACCEL_I_CMD_ON_DEVICE);
    if (f == c->flags) return;
    (void)q;
    if (!b->dlisted) { c->flags = f; return; }
    accel_i_spin_lock(&b->ddev->dwait_lock);
    c->flags = f;
    accel_i_spin_unlock(&b->ddev->dwait_lock);
}
/* Does a copy by q (x) have a buffer whose recover frees it under q (accel_i_peer_freed)? */
static bool accel_i_peer_freed_any(void* x, const accel_buffer* dst, const accel_buffer* src) {
    return accel_i_peer_freed((accel_queue*)x, dst, src) != NULL;
}
/* Does segment sg of b copy with a buffer of another device whose recover frees that memory (a copy
   flagged ACCEL_I_CMD_PEER_HOST at its recording, or a replay of a native list whose copies, as
   patched, do: flagged here, the first time, with b->peer_host)? Its waits then go to the host
   (accel_i_classify): the copy is built only once they are reached, where its side check
   (accel_i_copy_side_gone) sees a recover of that device meanwhile; a GPU wait would hold the copy in
   q's stream across the other's reset. */
static bool accel_i_peer_waits_on_host(accel_queue* q, accel_i_batch* b, const accel_i_segment* sg) {
    bool any = false, lists = b->replays && q->obj.device->backend->peer_frees;
    if (!b->peer_host && !lists) return false;
    for (uint32_t i = sg->from; i < sg->to; i++) {
        accel_i_cmd* c = &b->cmds[i];
        const accel_commands* l = c->kind == ACCEL_I_CMD_REPLAY ? c->u.replay.list : NULL;
        if (lists && l && l->native && l->has_copy && !(c->flags & ACCEL_I_CMD_PEER_SEEN))
            c->flags |= ACCEL_I_CMD_PEER_SEEN |
                        (accel_i_replay_copies(b, c, accel_i_peer_freed_any, q) ? ACCEL_I_CMD_PEER_HOST : 0u);
        any = any || (c->flags & ACCEL_I_CMD_PEER_HOST) != 0;
    }
    b->peer_host = b->peer_host || any;
    return any;
}
/* The first wait among b's first n commands handed to the device whose signal is below its value (not
   failed); NULL if none. */
static const accel_i_cmd* accel_i_dwait_unreached(const accel_i_batch* b, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        uint64_t cur;
        if (c->kind != ACCEL_I_CMD_WAIT || !(c->flags & ACCEL_I_CMD_ON_DEVICE)) continue;
        cur = accel_i_signal_value(c->u.sig.signal);
        if (!accel_i_failed(cur) && cur < c->u.sig.value) return c;
    }
    return NULL;
}
/* Does q hold, ahead of segment sg of b, a wait handed to the device that may not be reached: an
   earlier wait of b on the device whose signal is below its value, or another batch of q in a dwaits
   list (in flight: its waits may be reached, then the answer is only cautious)? */
static bool accel_i_dwaits_ahead(accel_queue* q, const accel_i_batch* b, const accel_i_segment* sg) {
    return atomic_load(&q->dlisted) > (b->dlisted ? 1u : 0u) || accel_i_dwait_unreached(b, sg->wfrom);
}
/* Counts the PEER_HOST copies of segment sg in their other devices' peer_copies before the backend
   builds them (once each: a segment may be built again after ACCEL_I_WOULD_BLOCK). The count, a fence,
   then the backend's side check (accel_i_copy_side_gone) against a recover's generation raise, a fence,
   then its look at the count: the copy sees the buffer stale, or the recover waits for it. */
static void accel_i_peer_count(accel_queue* q, accel_i_batch* b, const accel_i_segment* sg) {
    for (uint32_t i = sg->from; i < sg->to; i++) {
        accel_i_cmd* c = &b->cmds[i];
        uint32_t f = c->flags & (ACCEL_I_CMD_PEER_HOST | ACCEL_I_CMD_PEER_COUNTED);
        if (f != ACCEL_I_CMD_PEER_HOST) continue;
        accel_i_peer_tally_cmd(q, b, c, true);
        c->flags |= ACCEL_I_CMD_PEER_COUNTED;
    }
    atomic_thread_fence(memory_order_seq_cst);
}
/* A segment with a PEER_HOST copy, its waits reached (accel_i_classify took them to the host): a wait
   of q ahead still on the device (accel_i_dwaits_ahead) could hold the copy in q's stream across the
   other device's reset, so the worker first drains q (as before a host step), then the copies are
   counted (accel_i_peer_count). Returns READY, GATED (may_block false: the worker goes on) or FAILED. */
static int accel_i_peer_ready(accel_queue* q, accel_i_batch* b, const accel_i_segment* sg, bool may_block,
                              uint64_t* failed) {
    if (!accel_i_peer_waits_on_host(q, b, sg)) return ACCEL_I_SEG_READY;
    if (accel_i_dwaits_ahead(q, b, sg)) {
        if (!may_block) return ACCEL_I_SEG_GATED;
        if ((*failed = accel_i_drained(q, b)) != 0) return ACCEL_I_SEG_FAILED;
    }
    accel_i_peer_count(q, b, sg);
    return ACCEL_I_SEG_READY;
}
/* Classifies the segment's waits in order (see above). READY: every wait reached or on the device
   (*device: any on the device); GATED: wait *at is neither, or it is the first wait not reached before
   a failed one (the queue reaches the failure only after it: waited for on the host, so that nothing
   of the queue runs early); FAILED: *failed holds the failed value, every wait before it reached.
   *list: the device whose dwaits list the batch joins (core: failure after hand-off): the device of
   the signals its device waits watch, which must be one device for the whole batch (a wait on
   another one is gated), so that a failure of any of them finds the batch in that device's list. */
static int accel_i_classify(accel_queue* q, accel_i_batch* b, const accel_i_segment* sg, bool* device,
                            uint32_t* at, uint64_t* failed, accel_device** list) {
    const accel_backend* be = q->obj.device->backend;
    uint32_t unreached = sg->from;
    /* the waits go to the host (accel_i_qmem_waits_on_host, accel_i_peer_waits_on_host); -1: unknown */
    int host = -1;
    *device = false;
    *list = b->dlisted ? b->ddev : NULL;
    for (uint32_t i = sg->wfrom; i < sg->from; i++) {
        accel_i_cmd* c = &b->cmds[i];
        accel_signal* s = c->u.sig.signal;
        uint64_t cur = accel_i_signal_value(s);
        bool on = false;
        if (accel_i_failed(cur) && unreached < i) { *at = unreached; return ACCEL_I_SEG_GATED; }
        if (accel_i_failed(cur)) {
            accel_i_wait_flag(q, b, c, false);
            *failed = cur;
            return ACCEL_I_SEG_FAILED;
        }
        if (cur < c->u.sig.value) {
            if (host < 0)
                host = (b->qmem && accel_i_qmem_waits_on_host(b, sg)) ||
                       accel_i_peer_waits_on_host(q, b, sg);
            if (host || (*list && *list != s->obj.device) ||
                !be->walk->wait_on_device(q, s, c->u.sig.value)) {
                accel_i_wait_flag(q, b, c, false);
                *at = i;
                return ACCEL_I_SEG_GATED;
            }
            *list = s->obj.device;
            on = *device = true;
            if (unreached == sg->from) unreached = i;
        }
        accel_i_wait_flag(q, b, c, on);
    }
    return ACCEL_I_SEG_READY;
}

/* A queue's worker: the batches handed to it, oldest first, and who is walking. */
struct accel_i_walker {
    accel_queue* q;
    accel_i_mutex lock;
    accel_i_cond cond;              /* hand-offs, the end of a walk, stop */
    accel_i_batch *head, *tail;
    /* state: ACCEL_I_W_* bits (below); poke: the walk put work in flight for queue_poll to watch
       (accel_i_walker_poke: the walking thread's) */
    accel_i_a32 state;
    bool stop, poke;
    bool poked;                     /* a walk ended with a poke while SLEEP was up: the worker polls again
                                       (under the lock) */
    accel_i_thread thread;
    accel_i_blocked blocked;        /* debug devices: the gated wait the worker is in */
    /* the gated wait the worker waits for on the host with its batch handed back (accel_i_gate_open),
       while it is on the gated list of gate_s's device (gate_next, under that device's gate_lock);
       taken once a raiser took the batch */
    accel_signal* gate_s;
    uint64_t gate_v;
    bool gate_taken;
    accel_i_walker* gate_next;
};

/* A worker's state word. ACTIVE: a thread walks a batch of the queue; HEAD: head is not NULL; SLEEP:
   the worker polls, or sleeps untimed; above them, in units of ACCEL_I_W_WAITER, the threads that wait
   for the worker to be idle (accel_i_walker_idle, _settle). Changed under the lock, except that a
   submit claims ACTIVE without it when neither ACTIVE nor HEAD is set (accel_i_walker_submit), and a
   walk that ends with no HEAD, no waiter and no poke for a polling or sleeping worker drops it without
   it (accel_i_walker_leave): a batch walked inside accel_queue_submit takes no lock. HEAD goes up only
   while ACTIVE is (or under the lock), so a walk's lock-free end and a batch queued behind it cannot
   miss each other. */
enum { ACCEL_I_W_ACTIVE = 1u, ACCEL_I_W_HEAD = 2u, ACCEL_I_W_SLEEP = 4u, ACCEL_I_W_WAITER = 8u };
#define ACCEL_I_W_WAITERS (~(uint32_t)(ACCEL_I_W_WAITER - 1u))
static uint32_t accel_i_w_state(accel_i_walker* w) { return atomic_load(&w->state); }
static bool accel_i_w_has(accel_i_walker* w, uint32_t bits) { return (accel_i_w_state(w) & bits) != 0; }
static void accel_i_w_set(accel_i_walker* w, uint32_t bits, bool on) {
    if (on) atomic_fetch_or(&w->state, bits);
    else atomic_fetch_and(&w->state, ~bits);
}
/* head changed (the lock held): HEAD follows it */
static void accel_i_w_head(accel_i_walker* w) { accel_i_w_set(w, ACCEL_I_W_HEAD, w->head != NULL); }
/* The batch at the head leaves the list, walked by the caller from here (the lock held): ACTIVE goes up
   before HEAD may go down, so that no submit claims the walk between the two. */
static accel_i_batch* accel_i_walker_take(accel_i_walker* w) {
    accel_i_batch* b = w->head;
    if ((w->head = b->next) == NULL) w->tail = NULL;
    b->next = NULL;
    accel_i_w_set(w, ACCEL_I_W_ACTIVE, true);
    accel_i_w_head(w);
    return b;
}
/* b goes back to the front of the list, for the worker (the lock held; the caller drops ACTIVE next). */
static void accel_i_walker_give_back(accel_i_walker* w, accel_i_batch* b) {
    if ((b->next = w->head) == NULL) w->tail = b;
    w->head = b;
    accel_i_w_head(w);
}

/* Waits on the host for a gated wait (the worker only), published for the hang reports. */
static uint64_t accel_i_gate(accel_queue* q, accel_signal* s, uint64_t v) {
    accel_result r;
    uint64_t cur;
    const accel_backend* be = q->obj.device->backend;
    accel_i_blocked_set(&q->walker->blocked, s, v);   /* every build: a destroy that waits reports it */
    do {   /* meanwhile the worker still reaps its queue's work (the value may come from it) */
        uint64_t poll = be->walk->queue_poll ? be->walk->queue_poll(q) : 0;
        r = accel_i_wait_internal(s, v, poll ? poll : ACCEL_WAIT_FOREVER);
    } while (r == ACCEL_TIMEOUT);
    accel_i_blocked_set(&q->walker->blocked, NULL, 0);
    cur = accel_i_signal_value(s);
    if (r != ACCEL_OK && r != ACCEL_ERROR_SIGNAL_FAILED && !accel_i_failed(cur))
        cur = accel_i_failed_value(r);
    return accel_i_failed(cur) ? cur : 0;
}

/* The worker's gated wait, during which the batch goes back to the front of the queue's batches and
   the wait is published on s's device: the thread whose accel_signal_set reaches v walks the batch
   itself (accel_i_gate_release), so no worker wake-up stands between a host raise and the device work
   it releases. Afterwards the worker takes the batch back, unless a raiser took it (*taken: the walk
   is the raiser's now). The worker holds s meanwhile: a raiser's walk may complete the batch, whose
   command was what kept s alive. Returns accel_i_gate's result. */
static void accel_i_gate_release(accel_signal* s);
static uint64_t accel_i_gate_open(accel_queue* q, accel_i_batch* b, accel_signal* s, uint64_t v,
                                  bool* taken) {
    accel_i_walker* w = q->walker;
    accel_device* sd = s->obj.device;
    uint64_t failed;
    accel_i_retain(s);
    accel_i_mutex_lock(&w->lock);
    accel_i_walker_give_back(w, b);
    accel_i_w_set(w, ACCEL_I_W_ACTIVE, false);
    w->gate_s = s;
    w->gate_v = v;
    accel_i_mutex_unlock(&w->lock);
    accel_i_spin_lock(&sd->gate_lock);
    w->gate_next = sd->gated;
    sd->gated = w;
    if (!sd->gate_release) sd->gate_release = accel_i_gate_release;   /* once; before the count */
    atomic_fetch_add(&sd->gate_count, 1u);
    accel_i_spin_unlock(&sd->gate_lock);
    failed = accel_i_gate(q, s, v);
    accel_i_spin_lock(&sd->gate_lock);
    for (accel_i_walker** p = &sd->gated; *p; p = &(*p)->gate_next)
        if (*p == w) { *p = w->gate_next; break; }
    atomic_fetch_sub(&sd->gate_count, 1u);
    accel_i_spin_unlock(&sd->gate_lock);
    accel_i_mutex_lock(&w->lock);
    if ((*taken = w->gate_taken) == false) accel_i_walker_take(w);   /* b, still at the front: ours again */
    w->gate_taken = false;
    accel_i_mutex_unlock(&w->lock);
    accel_i_release(s);
    return *taken ? 0 : failed;
}

/* The worker, when the backend has no room for more (segment_submit returned ACCEL_I_WOULD_BLOCK with
   may_block true): reaps the queue's work for one poll slice, then the walk goes on from b->pc. Never
   blocking in the driver is what keeps the worker a reaper: the GPU wait that holds the device's work
   up may be released only by a host raise of a point that this worker reaps (a two-queue pipeline
   whose waits watch the signals' mirrors hung with the worker parked in a full stream). */
static void accel_i_walker_wait_room(accel_queue* q) {
    accel_i_walker* w = q->walker;
    const accel_backend* be = q->obj.device->backend;
    uint64_t poll = be->walk->queue_poll ? be->walk->queue_poll(q) : 0;
    accel_i_mutex_lock(&w->lock);
    accel_i_cond_timedwait(&w->cond, &w->lock, poll ? poll : 100000u);
    accel_i_mutex_unlock(&w->lock);
}

/* Makes a segment ready: classifies its waits, gating on the host when allowed. Returns READY,
   GATED (may_block false: hand off), FAILED (*failed) or TAKEN (a raiser walks b now). */
static int accel_i_ready(accel_queue* q, accel_i_batch* b, const accel_i_segment* sg, bool may_block,
                         uint64_t* failed) {
    for (;;) {
        bool device, taken;
        uint32_t at = 0;
        accel_device* list = NULL;
        int k = accel_i_classify(q, b, sg, &device, &at, failed, &list);
        if (k == ACCEL_I_SEG_READY && device) {
            accel_i_dwait_add(b, q, list);
            /* a failure came meanwhile: classified again, in order */
            if (accel_i_recheck(b, sg) != 0) continue;
        }
        if (k != ACCEL_I_SEG_GATED) return k;
        if (!may_block) return k;
        if ((*failed = accel_i_gate_open(q, b, b->cmds[at].u.sig.signal, b->cmds[at].u.sig.value,
                                         &taken)) != 0)
            return ACCEL_I_SEG_FAILED;
        if (taken) return ACCEL_I_SEG_TAKEN;
    }
}

/* Walks b from b->pc, segment by segment (see above). may_block false: inside accel_queue_submit or a
   raiser's accel_signal_set; at a gated wait, a host step, or a backend that would block, returns
   ACCEL_I_WOULD_BLOCK with b->pc at the segment the queue's worker must go on with. may_block true: the
   worker; where the backend would block, it reaps a while (accel_i_walker_wait_room) and calls again.
   submitting: b's own accel_queue_submit, where an error before anything of the batch went to the
   device drops it and is returned (all or nothing); elsewhere (the batch was accepted), and for a later
   one, the error fails the rest's signals. */
static int accel_i_walk(accel_queue* q, accel_i_batch* b, bool may_block, bool submitting) {
    accel_device* d = q->obj.device;
    int r = ACCEL_OK;
    while (b->pc < b->count) {
        accel_i_segment sg;
        const accel_i_cmd* gone = NULL;   /* a replay of a stale buffer's list */
        uint64_t failed = 0;
        int k;
        if (accel_i_cmd_is_host_step(&b->cmds[b->pc])) {   /* on the worker, after the device drained */
            if (!may_block) return ACCEL_I_WOULD_BLOCK;
            if ((failed = accel_i_host_step(q, b)) != 0) { accel_i_fail_rest(b, b->pc + 1, failed); break; }
            /* an indirect exec is now direct, and runs next; a host call or a staged copy is done */
            b->pc += b->cmds[b->pc].kind != ACCEL_I_CMD_EXEC;
            continue;
        }
        sg = accel_i_segment_at(b, b->pc);
        k = accel_i_ready(q, b, &sg, may_block, &failed);
        if (k == ACCEL_I_SEG_READY) k = accel_i_peer_ready(q, b, &sg, may_block, &failed);
        if (k == ACCEL_I_SEG_GATED) return ACCEL_I_WOULD_BLOCK;
        if (k == ACCEL_I_SEG_TAKEN) return ACCEL_I_TAKEN;
        /* built after the submit looked (accel_i_replays_live): a recover may have come meanwhile */
        if (k == ACCEL_I_SEG_READY && !submitting &&
            (gone = accel_i_replays_gone(b, sg.from, sg.to)) != NULL) {
            k = ACCEL_I_SEG_FAILED;
            failed = accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST);
        }
        /* the queue gets there once all before it completed (a lost device, or a stale queue, never) */
        if (k == ACCEL_I_SEG_FAILED && !accel_i_lost(d) && !accel_i_stale(&q->obj)) {
            uint64_t dr;
            if (!may_block) return ACCEL_I_WOULD_BLOCK;
            if ((dr = accel_i_drained(q, b)) != 0) failed = dr;
        }
        /* a stale queue drops the rest with DEVICE_LOST, whatever ended its wait (core: device
           generations); a lost device too, where no wait failed */
        if (accel_i_stale(&q->obj) || (k == ACCEL_I_SEG_READY && accel_i_lost(d))) {
            k = ACCEL_I_SEG_FAILED;
            failed = accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST);
        }
        if (k == ACCEL_I_SEG_FAILED) {
            if (gone) accel_i_replay_lost(gone, "after the submit");
            if (ACCEL_I_TRACING(d)) accel_i_trace_waits_failed(q, b, &sg);
            accel_i_fail_rest(b, sg.from, failed);
            break;
        }
        r = d->backend->walk->segment_submit(q, b, &sg, may_block);
        if (r == ACCEL_I_WOULD_BLOCK && may_block) { accel_i_walker_wait_room(q); continue; }
        if (r == ACCEL_I_WOULD_BLOCK) return r;
        if (r != ACCEL_OK) {
            if (submitting && sg.wfrom == 0) break;     /* nothing ran: accel_queue_submit reports it */
            accel_i_log(d, ACCEL_LOG_ERROR, "%s: %s while submitting the rest of a batch; its signals fail",
                        d->backend->name, accel_result_string((accel_result)r));
            accel_i_fail_rest(b, sg.from, accel_i_failed_value((accel_result)r));
            r = ACCEL_OK;
            break;
        }
        /* a command of it failed and the backend dropped the rest (b->pc = b->count; its signals failed):
           nothing more of the batch runs (an alloc point without memory: core: queue-ordered memory) */
        if (b->pc == b->count) break;
        b->pc = sg.to;
    }
    b->pc = b->count;
    d->backend->walk->batch_submitted(q, b);
    return r;
}

#endif

/* The device finished b (or b never reached it): its references go, and it leaves the dwaits list. */
static void accel_i_batch_complete(accel_queue* q, accel_i_batch* b) {
    if (b->peer_host) accel_i_peer_uncount(q, b, b->count);   /* core: several devices */
    accel_i_dwait_remove(b, b->ddev);
    accel_i_batch_recycle(q, b);
}

#if !defined(ACCEL_NO_THREADS)
/* ---- the queue's worker thread ---- */
static void accel_i_walker_main(void* arg) {
    accel_i_walker* w = (accel_i_walker*)arg;
    const accel_backend* be = w->q->obj.device->backend;
    accel_i_mutex_lock(&w->lock);
    for (;;) {
        accel_i_batch* b;
        bool active = accel_i_w_has(w, ACCEL_I_W_ACTIVE);
        if (!w->head || active) {
            uint64_t poll = 0;
            if (w->stop && !active) break;
            /* SLEEP from before the poll: a walk that ends meanwhile with work in flight tells us (poked),
               else we could sleep untimed with work the poll did not see */
            accel_i_w_set(w, ACCEL_I_W_SLEEP, true);
            if (be->walk->queue_poll) {   /* reap completed work outside the lock */
                bool again;
                accel_i_mutex_unlock(&w->lock);
                poll = be->walk->queue_poll(w->q);
                accel_i_mutex_lock(&w->lock);
                active = accel_i_w_has(w, ACCEL_I_W_ACTIVE);
                /* a poll that returned a pause polls again after it anyway */
                again = (w->poked && poll == 0) || (w->head && !active);
                w->poked = false;
                if (again) { accel_i_w_set(w, ACCEL_I_W_SLEEP, false); continue; }
                /* a stop (the queue idle: accel_i_walker_stop) heard during the poll: not after its pause */
                if (w->stop && !active) break;   /* SLEEP stays: it only costs a walk a lock */
            }
            if (poll) {
                accel_i_w_set(w, ACCEL_I_W_SLEEP, false);
                accel_i_cond_timedwait(&w->cond, &w->lock, poll);
            } else {
                accel_i_cond_wait(&w->cond, &w->lock);
                accel_i_w_set(w, ACCEL_I_W_SLEEP, false);
                w->poked = false;   /* the next poll sees that work */
            }
            continue;
        }
        b = accel_i_walker_take(w);
        accel_i_mutex_unlock(&w->lock);
        if (accel_i_walk(w->q, b, true, false) == ACCEL_I_TAKEN) {   /* the walk is the raiser's now */
            accel_i_mutex_lock(&w->lock);
            continue;
        }
        accel_i_mutex_lock(&w->lock);
        w->poke = false;   /* the worker itself polls next */
        accel_i_w_set(w, ACCEL_I_W_ACTIVE, false);
        if (accel_i_w_has(w, ACCEL_I_W_WAITERS)) accel_i_cond_broadcast(&w->cond);
    }
    accel_i_mutex_unlock(&w->lock);
}

/* The end of a walk with nothing for the worker or a waiter: ACTIVE dropped without the lock (see
   ACCEL_I_W_ACTIVE); false when the worker must hear of it (a batch behind, an idle waiter, a poke
   while it polls or sleeps untimed). */
static bool accel_i_walker_leave(accel_i_walker* w) {
    uint32_t st = accel_i_w_state(w);
    bool poke = w->poke;
    w->poke = false;   /* before ACTIVE goes: from then on the queue may be destroyed */
    while (!(st & (ACCEL_I_W_HEAD | ACCEL_I_W_WAITERS)) && !(poke && (st & ACCEL_I_W_SLEEP)))
        if (atomic_compare_exchange_weak(&w->state, &st, st & ~(uint32_t)ACCEL_I_W_ACTIVE)) return true;
    w->poke = poke;
    return false;
}
/* Walks b, q's oldest batch (the caller set ACCEL_I_W_ACTIVE), on this thread without blocking: what
   would block goes back to the front for the worker. submitting: see accel_i_walk. */
static accel_result accel_i_walker_run(accel_queue* q, accel_i_batch* b, bool submitting) {
    accel_i_walker* w = q->walker;
    int r = accel_i_walk(q, b, false, submitting);
    uint32_t st;
    bool poke;
    if (r != ACCEL_I_WOULD_BLOCK && accel_i_walker_leave(w)) return (accel_result)r;
    accel_i_mutex_lock(&w->lock);
    if (r == ACCEL_I_WOULD_BLOCK) {   /* the oldest work of the queue: to the front */
        accel_i_walker_give_back(w, b);
        r = ACCEL_OK;
    }
    poke = w->poke;   /* before ACTIVE goes: a lock-free submit may claim the walk then */
    w->poke = false;
    st = atomic_fetch_and(&w->state, ~(uint32_t)ACCEL_I_W_ACTIVE);
    poke = poke && (st & ACCEL_I_W_SLEEP);
    if (w->head || (st & ACCEL_I_W_WAITERS) || poke) accel_i_cond_broadcast(&w->cond);
    if (poke) w->poked = true;   /* the worker may be polling: again */
    accel_i_mutex_unlock(&w->lock);
    return (accel_result)r;   /* ACCEL_I_WOULD_BLOCK went to the worker */
}
/* accel_queue_submit for GPU backends, after the backend checked the batch: walks it here when the
   queue's worker holds nothing, else queues it behind the worker's batches. Wakes the worker only
   when it is handed the walk (behind the worker's own batches it is not: the worker never sleeps with
   one it has not taken, and one that waits for room in the device's queue would wake for nothing).
   With no batch queued and no walk, the walk is claimed without the lock (see ACCEL_I_W_ACTIVE). */
static accel_result accel_i_walker_submit(accel_queue* q, accel_i_batch* b) {
    accel_i_walker* w = q->walker;
    const uint32_t busy = ACCEL_I_W_ACTIVE | ACCEL_I_W_HEAD;
    uint32_t st = accel_i_w_state(w);
    accel_i_batch_accepted(q, b);
    b->next = NULL;
    while (!(st & busy))
        if (atomic_compare_exchange_weak(&w->state, &st, st | ACCEL_I_W_ACTIVE))
            return accel_i_walker_run(q, b, true);
    accel_i_mutex_lock(&w->lock);
    for (;;) {   /* no wake-up: a worker with a head or a walk takes it when it is done */
        st = accel_i_w_state(w);
        if ((st & ACCEL_I_W_HEAD) ||   /* HEAD goes down only under the lock */
            ((st & ACCEL_I_W_ACTIVE) &&
             atomic_compare_exchange_strong(&w->state, &st, st | ACCEL_I_W_HEAD))) {
            if (w->tail) w->tail->next = b; else w->head = b;
            w->tail = b;
            accel_i_mutex_unlock(&w->lock);
            return ACCEL_OK;
        }
        if (!(st & busy) && atomic_compare_exchange_strong(&w->state, &st, st | ACCEL_I_W_ACTIVE)) break;
    }
    accel_i_mutex_unlock(&w->lock);
    return accel_i_walker_run(q, b, true);
}
/* accel_signal_set reached a value: walks here the batches of workers gated on s at a value now
   reached (accel_i_gate_open). Claimed under s's device's gate lock, which the worker takes to leave
   the list (so a listed worker's walker lives; once claimed, `active` keeps its queue alive); walked
   after it, like a submit. */
static void accel_i_gate_release(accel_signal* s) {
    accel_device* dev = s->obj.device;
    accel_i_walker* took[4];
    accel_i_batch* tb[4];
    uint32_t n = 0;
    uint64_t cur;
    if (atomic_load(&dev->gate_count) == 0 || accel_i_failed(cur = accel_i_signal_value(s))) return;
    accel_i_spin_lock(&dev->gate_lock);
    for (accel_i_walker* w = dev->gated; w && n < 4; w = w->gate_next) {
        if (w->gate_s != s || w->gate_v > cur) continue;
        accel_i_mutex_lock(&w->lock);
        /* listed: the batch is at the head and nobody walks (unless a raiser took it already) */
        if (!w->gate_taken) {
            w->gate_taken = true;
            tb[n] = accel_i_walker_take(w);
            took[n++] = w;
        }
        accel_i_mutex_unlock(&w->lock);
    }
    accel_i_spin_unlock(&dev->gate_lock);
    for (uint32_t i = 0; i < n; i++) accel_i_walker_run(took[i]->q, tb[i], false);   /* errors: failed */
}
/* Wakes the worker when it sleeps with nothing to poll and the backend just put work in flight that
   it must watch (queue_poll backends): at the end of the walk (accel_i_walker_run), which takes the
   worker's lock for it only while the worker polls or sleeps untimed (SLEEP: a polling worker polls
   again, `poked`); a worker's own walk polls next, awake. */
static void accel_i_walker_poke(accel_queue* q) {
    q->walker->poke = true;   /* the walk's end wakes it (accel_i_walker_run, accel_i_walker_leave) */
}
/* accel_device_recover (core: device generations): waits until no thread walks q's batches. A worker
   gated on the host is not walking (accel_i_gate_open handed its batch back: it holds nothing native);
   a walk that starts from here on finds q stale and drops what is left. Polled each millisecond: not
   every end of a walk broadcasts. */
static void accel_i_walker_settle(accel_queue* q) {
    accel_i_walker* w = q->walker;
    accel_i_mutex_lock(&w->lock);
    atomic_fetch_add(&w->state, ACCEL_I_W_WAITER);   /* before the look at ACTIVE: a walk's end sees one */
    while (accel_i_w_has(w, ACCEL_I_W_ACTIVE)) accel_i_cond_timedwait(&w->cond, &w->lock, 1000000u);
    atomic_fetch_sub(&w->state, ACCEL_I_W_WAITER);
    accel_i_mutex_unlock(&w->lock);
}
/* Waits until no batch of q is held or walked; TIMEOUT when the deadline passes first. */
static accel_result accel_i_walker_idle(accel_queue* q, uint64_t deadline) {
    accel_i_walker* w = q->walker;
    accel_result r = ACCEL_OK;
    accel_i_mutex_lock(&w->lock);
    atomic_fetch_add(&w->state, ACCEL_I_W_WAITER);
    while (w->head || accel_i_w_has(w, ACCEL_I_W_ACTIVE)) {
        uint64_t now = accel_i_now_ns();
        if (now >= deadline) { r = ACCEL_TIMEOUT; break; }
        if (deadline == ACCEL_I_FOREVER) accel_i_cond_wait(&w->cond, &w->lock);
        else accel_i_cond_timedwait(&w->cond, &w->lock, deadline - now);
    }
    atomic_fetch_sub(&w->state, ACCEL_I_W_WAITER);
    accel_i_mutex_unlock(&w->lock);
    return r;
}
/* queue_wait_idle of GPU backends: the worker first, then the device. */
static accel_result accel_i_walker_wait_idle(accel_queue* q, uint64_t timeout_ns) {
    uint64_t deadline = accel_i_deadline(timeout_ns), now;
    accel_result r = accel_i_walker_idle(q, deadline);
    if (r != ACCEL_OK) return r;
    now = accel_i_now_ns();
    return q->obj.device->backend->walk->queue_drain(q, deadline == ACCEL_I_FOREVER ? ACCEL_WAIT_FOREVER
                                                        : deadline > now ? deadline - now : 0);
}
/* The first device wait of q's batches in flight that is not reached yet (dwait_lock held). */
static const accel_i_cmd* accel_i_dwait_pending(accel_device* dev, const accel_queue* q) {
    for (const accel_i_batch* b = dev->dwaits; b; b = b->dnext) {
        const accel_i_cmd* c = b->dqueue == q ? accel_i_dwait_unreached(b, b->count) : NULL;
        if (c) return c;
    }
    return NULL;
}
/* Hang report of GPU queues: the worker's gated wait and the batches it holds, or else a wait handed to
   the device that is not reached. */
static size_t accel_i_walker_describe(accel_queue* q, char* out, size_t cap) {
    accel_i_walker* w = q->walker;   /* the hang report holds the object list: set (or not yet) */
    accel_device* dev = q->obj.device;
    const accel_i_cmd* c;
    uint64_t held = 0;
    size_t len;
    if (!w) return 0;   /* a queue being made */
    accel_i_mutex_lock(&w->lock);
    for (const accel_i_batch* b = w->head; b; b = b->next) held++;
    held += accel_i_w_has(w, ACCEL_I_W_ACTIVE);
    accel_i_mutex_unlock(&w->lock);
    len = accel_i_blocked_describe(&w->blocked, out, cap, q, held);
    if (len) return len;
    accel_i_spin_lock(&dev->dwait_lock);
    if ((c = accel_i_dwait_pending(dev, q)) != NULL)
        len = accel_i_describe_queue(out, cap, q, 1, c->u.sig.signal, c->u.sig.value);
    accel_i_spin_unlock(&dev->dwait_lock);
    return len;
}
static void accel_i_walker_free(accel_device* dev, accel_i_walker* w) {
    accel_i_cond_destroy(&w->cond);
    accel_i_mutex_destroy(&w->lock);
    accel_i_dev_free(dev, w, sizeof *w);
}
/* q is on its device's object list already (accel_i_queue_init), where a debug device's hang report
   finds it (accel_i_walker_describe): its worker is set under that list's lock. */
static void accel_i_walker_publish(accel_queue* q, accel_i_walker* w) {
    accel_i_spin_lock(&q->obj.device->objects_lock);
    q->walker = w;
    accel_i_spin_unlock(&q->obj.device->objects_lock);
}
/* Starts q's worker (GPU backends, at queue creation, after accel_i_queue_init). */
static accel_result accel_i_walker_start(accel_queue* q) {
    accel_device* dev = q->obj.device;
    accel_i_walker* w = (accel_i_walker*)accel_i_dev_alloc(dev, sizeof *w);
    accel_result r;
    if (!w) return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: out of host memory");
    memset((void*)w, 0, sizeof *w);
    w->q = q;
    atomic_init(&w->blocked.lock, 0u);
    atomic_init(&w->state, 0u);
    if (!accel_i_mutex_init(&w->lock)) {
        accel_i_dev_free(dev, w, sizeof *w);
        return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: mutex init failed");
    }
    if (!accel_i_cond_init(&w->cond)) {
        accel_i_mutex_destroy(&w->lock);
        accel_i_dev_free(dev, w, sizeof *w);
        return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: condition init failed");
    }
    accel_i_walker_publish(q, w);
    if ((r = accel_i_thread_start(&w->thread, accel_i_walker_main, w)) != ACCEL_OK) {
        accel_i_walker_publish(q, NULL);
        accel_i_walker_free(dev, w);
        return accel_i_fail(dev, r, "accel_queue_create: starting the queue's worker thread failed");
    }
    return ACCEL_OK;
}
/* Stops q's worker once everything submitted finished (queue destroy). */
static void accel_i_walker_stop(accel_queue* q) {
    accel_i_walker* w = q->walker;
    if (!w) return;
    accel_i_walker_wait_idle(q, ACCEL_WAIT_FOREVER);
    accel_i_mutex_lock(&w->lock);
    w->stop = true;
    accel_i_cond_broadcast(&w->cond);
    accel_i_mutex_unlock(&w->lock);
    accel_i_thread_join(&w->thread);
    q->walker = NULL;
    accel_i_walker_free(q->obj.device, w);
}
#endif

/* ==== cpu: device and worker pool ==== */
/* A CPU device has `cpu_threads` lanes: whoever runs kernel groups (a pool worker or a queue's
   executor) holds one, so `accel_dispatch.worker` (the lane) is unique among concurrent kernel calls
   and at most cpu_threads groups run at once. The pool has cpu_threads-1 workers and one job slot;
   the executor that takes the slot publishes a job and works on it too. A job is cut into up to 16
   chunks of groups per lane, and each lane gets a contiguous range of them in a word of its own
   cache line (generation << 32 | next chunk << 16 | end chunk): a lane claims its own chunks with an
   uncontended CAS, then steals from the other lanes' words, so an exec costs a few cache-line
   transfers per lane instead of two contended atomics per chunk, and a lane that is descheduled
   still has its range finished by the others. A word carries its generation and
   its bound, so a late worker can never claim a chunk of a newer job, and the job cannot change while
   a claimed chunk is uncounted. An executor that finds the slot taken runs its grid alone. */
typedef struct accel_i_cpu_job {
    accel_cpu_kernel fn;
    accel_dispatch tmpl;          /* everything but group_id and worker */
    uint64_t groups, chunk;       /* total groups; groups per chunk */
} accel_i_cpu_job;
typedef struct accel_i_cpu_lane {  /* one cache line per lane */
    accel_i_a32 taken;            /* 1 = a thread holds the lane */
    accel_i_a64 work;             /* the lane's range of the current job's chunks (see above) */
    unsigned char pad[64 - 16];
} accel_i_cpu_lane;
#define ACCEL_I_CPU_MAX_CHUNKS 65535u   /* chunk indices are 16-bit fields of accel_i_cpu_lane.work */

typedef struct accel_i_cpu_device accel_i_cpu_device;
typedef struct accel_i_cpu_worker {
    accel_i_thread thread;
    accel_i_cpu_device* dev;
    accel_i_own own;
} accel_i_cpu_worker;
struct accel_i_cpu_device {
    accel_device base;
    uint32_t lanes_n;
    accel_i_cpu_lane* lanes;      /* lanes_n of them, 64-byte aligned */
    uint32_t workers_n;           /* started */
    accel_i_cpu_worker* workers;
    accel_i_a32 pool_owner;       /* the job slot: 1 = an executor is running a job */
    accel_i_a32 stop;
    accel_i_event gen;            /* job generation: workers wait on it */
    accel_i_event done;           /* chunks finished in the current job */
    accel_i_event lanes_given;    /* lanes given back while a thread slept for one (its sleepers) */
    accel_i_cpu_job job;
    accel_i_a32 next_hint;        /* spreads queues over lanes */
    bool moves;                   /* own threads may step off a shared CPU (see cpu placement) */
#if defined(ACCEL_NO_THREADS)
    struct accel_i_cpu_queue *ready_head, *ready_tail;   /* queues that may run (see cpu: no-threads) */
    bool draining;                /* a loop is running the ready list */
    uint32_t pumps;               /* queues of it running batches (accel_i_cpu_pump) */
    bool orphans_later;           /* its destroy came from one: the last pump fails the orphans */
    bool unpark;                  /* on a raise's list of loops to run (accel_i_cpu_unpark) */
    struct accel_i_cpu_device* unpark_next;
    struct accel_i_cpu_device* loop_next;   /* the loop below its own on the stack (accel_i_cpu_loops) */
#endif
};
typedef struct accel_i_cpu_buffer  { accel_buffer base; bool owned; } accel_i_cpu_buffer;
typedef struct accel_i_cpu_program { accel_program base; accel_cpu_kernel fn; } accel_i_cpu_program;

static accel_i_cpu_device* accel_i_cpu_dev(accel_device* d) { return (accel_i_cpu_device*)d; }
static bool accel_i_is_cpu_signal(const accel_signal* s) {
    return s->obj.device->backend == accel_cpu_backend();
}
#if !defined(ACCEL_NO_THREADS)
/* 1 on accel's own threads (executors, pool workers) and on a thread that helps (see "cpu: waits that
   help"): such a thread never helps. */
static ACCEL_I_THREAD_LOCAL uint32_t accel_i_cpu_no_help;
#endif

#if !defined(ACCEL_NO_THREADS)
static uint32_t accel_i_cpu_online(void) {
#  if defined(_WIN32)
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors ? (uint32_t)si.dwNumberOfProcessors : 1u;
#  else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1u;
#  endif
}
#endif
/* The CPUs the process may use: its affinity mask (Linux, Win32), else the online cores. */
static uint32_t accel_i_cpu_cores(void) {
#if defined(ACCEL_NO_THREADS)
    return 1;
#else
    uint32_t n = accel_i_cpu_mask_count();
    return n ? n : accel_i_cpu_online();
#endif
}
static uint64_t accel_i_cpu_memory(void) {
#if defined(_WIN32)
    MEMORYSTATUSEX ms;
    ms.dwLength = sizeof ms;
    return GlobalMemoryStatusEx(&ms) ? (uint64_t)ms.ullTotalPhys : 0;
#elif defined(__wasi__) || defined(__wasm__)
    return 0;   /* unknown: the linear memory's size now is not what the host has */
#elif defined(_SC_PHYS_PAGES)
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
#else
    return 0;
#endif
}

static bool accel_i_cpu_lane_try(accel_i_cpu_device* dev, uint32_t hint, uint32_t* lane) {
    for (uint32_t k = 0; k < dev->lanes_n; k++) {
        uint32_t i = (hint + k) % dev->lanes_n;
        if (!atomic_load_explicit(&dev->lanes[i].taken, memory_order_relaxed) &&
            !atomic_exchange_explicit(&dev->lanes[i].taken, 1u, memory_order_acquire)) {
            *lane = i;
            return true;
        }
    }
    return false;
}
#if !defined(ACCEL_NO_THREADS)
/* A thread that found no free lane (more queues than lanes) for ACCEL_CPU_SPIN_NS (since *start)
   sleeps until a lane is given back, in slices of a millisecond: the giver raises lanes_given only when
   the event counts sleepers (a relaxed read, no fence on its path), so a wake it missed costs a slice,
   not a hang; the caller tries the lanes again after each, and sleeps again at once when none is free
   (it spun 255 times between two slices: 4% of a CPU a waiting queue, 45% for 15), for twice as long
   up to 8 slices (*slice: 0 at first). Before that it yields. Returns whether it is past its spin. */
#define ACCEL_I_CPU_LANE_SLICE_NS 1000000u
static bool accel_i_cpu_lane_sleep(accel_i_cpu_device* dev, uint64_t* start, uint64_t* slice) {
    uint64_t now = accel_i_now_ns();
    bool slept = false;
    if (!*start) *start = now;
    if (now - *start < accel_i_spin_ns()) { accel_i_yield(); return false; }
    *slice = *slice ? accel_i_backoff(*slice, 8u * ACCEL_I_CPU_LANE_SLICE_NS) : ACCEL_I_CPU_LANE_SLICE_NS;
    accel_i_event_block(&dev->lanes_given, accel_i_event_value(&dev->lanes_given) + 1u, now + *slice,
                        &slept);
    return true;
}
#endif
static uint32_t accel_i_cpu_lane_take(accel_i_cpu_device* dev, uint32_t hint) {
    uint32_t lane = 0;
    uint64_t start = 0, slice = 0;
    bool sleeping = false;
    for (uint32_t n = 1; !accel_i_cpu_lane_try(dev, hint, &lane); n++) {
#if !defined(ACCEL_NO_THREADS)
        if (sleeping || (n & 255u) == 0) { sleeping = accel_i_cpu_lane_sleep(dev, &start, &slice); continue; }
#endif
        if ((n & 15u) != 0) ACCEL_I_RELAX();
        else accel_i_yield();
    }
    (void)start; (void)slice; (void)sleeping;
    return lane;
}
static void accel_i_cpu_lane_give(accel_i_cpu_device* dev, uint32_t lane) {
    atomic_store_explicit(&dev->lanes[lane].taken, 0u, memory_order_release);
    if (atomic_load_explicit(&dev->lanes_given.sleepers, memory_order_relaxed))
        accel_i_event_add(&dev->lanes_given, 1);
}

/* Runs groups [first, first+count) of a job, in linear order (x fastest). */
static void accel_i_cpu_run_groups(const accel_i_cpu_job* job, uint64_t first, uint64_t count,
                                   uint32_t lane) {
    accel_dispatch d = job->tmpl;
    uint64_t cx = d.group_count[0], cy = d.group_count[1], row = first < cx ? 0 : first / cx;
    d.worker = lane;   /* no division where none is needed (a whole one-group exec: most of its cost) */
    d.group_id[0] = (uint32_t)(first - row * cx);
    d.group_id[1] = (uint32_t)(row < cy ? row : row % cy);
    d.group_id[2] = (uint32_t)(row < cy ? 0 : row / cy);
    for (uint64_t i = 0; i < count; i++) {
        job->fn(&d);
        if (++d.group_id[0] == cx) {
            d.group_id[0] = 0;
            if (++d.group_id[1] == cy) { d.group_id[1] = 0; d.group_id[2]++; }
        }
    }
}

/* Claims the next chunk of job `gen` from lane `slot`'s range. */
static bool accel_i_cpu_claim(accel_i_cpu_device* dev, uint32_t slot, uint32_t gen, uint64_t* chunk) {
    accel_i_a64* w = &dev->lanes[slot].work;
    uint64_t v = atomic_load_explicit(w, memory_order_acquire);
    for (;;) {
        uint32_t next = (uint32_t)(v >> 16) & 0xffffu, end = (uint32_t)v & 0xffffu;
        if ((uint32_t)(v >> 32) != gen || next >= end) return false;
        if (atomic_compare_exchange_weak_explicit(w, &v, v + 0x10000u, memory_order_acq_rel,
                                                  memory_order_acquire)) {
            *chunk = next;
            return true;
        }
    }
}
/* Runs chunks of job `gen`, its own lane's range first, then the others', and counts them done in
   one add (one atomic per worker and job, not per chunk). */
static void accel_i_cpu_job_work(accel_i_cpu_device* dev, uint32_t gen, uint32_t lane) {
    uint64_t ran = 0, c;
    for (uint32_t k = 0; k < dev->lanes_n; k++) {
        uint32_t slot = lane + k < dev->lanes_n ? lane + k : lane + k - dev->lanes_n;
        while (accel_i_cpu_claim(dev, slot, gen, &c)) {
            uint64_t first = c * dev->job.chunk, left = dev->job.groups - first;
            accel_i_cpu_run_groups(&dev->job, first, left < dev->job.chunk ? left : dev->job.chunk, lane);
            ran++;
        }
    }
    if (ran) accel_i_event_add(&dev->done, ran);
}

#if !defined(ACCEL_NO_THREADS)
static void accel_i_cpu_worker_main(void* arg) {
    accel_i_cpu_worker* w = (accel_i_cpu_worker*)arg;
    accel_i_cpu_device* dev = w->dev;
    uint32_t hint = (uint32_t)(w - dev->workers) + 1u;
    uint64_t seen = 0;
    accel_i_cpu_no_help = 1;
    for (;;) {
        uint32_t lane;
        accel_i_event_wait_own(&dev->gen, seen + 1, &w->own);
        seen = accel_i_event_value(&dev->gen);
        if (atomic_load(&dev->stop)) return;
        if (accel_i_cpu_lane_try(dev, hint, &lane)) {
            accel_i_cpu_job_work(dev, (uint32_t)seen, lane);
            accel_i_cpu_lane_give(dev, lane);
        }
        accel_i_own_settle(&w->own);
    }
}
#endif

/* Publishes the job to the pool (the caller owns the slot): the job first, then each lane's range of
   chunks with release (a claim acquires it); works on it on `lane`, gives the lane back once no chunk is
   left to claim (another queue's exec may take it: a chunk of the job that waits for that exec would
   otherwise wait for ever with the lanes all held), then waits for the rest. A worker woken for an
   earlier job that has not run yet is not woken again (see core: events); a worker that sleeps through
   a job only leaves its chunks to the others, the owner first, which claims every chunk left. */
static void accel_i_cpu_pool_run(accel_i_cpu_device* dev, const accel_i_cpu_job* job, uint32_t lane,
                                 accel_i_own* own) {
    uint64_t target = (uint64_t)dev->lanes_n * 16u;
    uint64_t chunk, chunks, gen = accel_i_event_value(&dev->gen) + 1, tag = (uint64_t)(uint32_t)gen << 32;
    if (target > ACCEL_I_CPU_MAX_CHUNKS) target = ACCEL_I_CPU_MAX_CHUNKS;
    chunk = (job->groups + target - 1) / target;
    chunks = (job->groups + chunk - 1) / chunk;
    dev->job = *job;
    dev->job.chunk = chunk;
    atomic_store_explicit(&dev->done.word, 0u, memory_order_relaxed);
    for (uint32_t i = 0; i < dev->lanes_n; i++) {
        uint64_t from = chunks * i / dev->lanes_n, to = chunks * (i + 1u) / dev->lanes_n;
        atomic_store_explicit(&dev->lanes[i].work, tag | from << 16 | to, memory_order_release);
    }
    atomic_store(&dev->gen.word, gen);   /* only the slot's owner raises it (and a destroy, with no job) */
    accel_i_event_notify(&dev->gen);
    accel_i_cpu_job_work(dev, (uint32_t)gen, lane);
    accel_i_cpu_lane_give(dev, lane);
    accel_i_event_wait_own(&dev->done, chunks, own);
}

/* Runs the one group of a job of the caller's own, whose template is the group's dispatch (group ids 0):
   no copy of the template and no walk over group ids (accel_i_cpu_run_groups), which were most of the
   cost of a chain's tiny kernel or a host's round trip. On the lane *held (taken first if none): a batch
   keeps it over a run of such execs and gives it back before anything else (accel_i_cpu_run_batch),
   one exchange for the run instead of one an exec. */
#define ACCEL_I_CPU_NO_LANE UINT32_MAX
static void accel_i_cpu_run_one(accel_i_cpu_device* dev, accel_i_cpu_job* job, uint32_t hint,
                                uint32_t* held) {
    if (*held == ACCEL_I_CPU_NO_LANE) *held = accel_i_cpu_lane_take(dev, hint);
    job->tmpl.worker = *held;
    job->fn(&job->tmpl);
}
static void accel_i_cpu_lane_drop(accel_i_cpu_device* dev, uint32_t* held) {
    if (*held == ACCEL_I_CPU_NO_LANE) return;
    accel_i_cpu_lane_give(dev, *held);
    *held = ACCEL_I_CPU_NO_LANE;
}
/* Runs a whole grid: inline when tiny or when the pool is busy, else across the pool. */
static void accel_i_cpu_run_grid(accel_i_cpu_device* dev, const accel_i_cpu_job* job, uint32_t hint,
                                 accel_i_own* own) {
    uint32_t lane;
    if (job->groups == 0) return;   /* a list's exec of global size 0 */
    lane = accel_i_cpu_lane_take(dev, hint);
    if (job->groups <= ACCEL_CPU_INLINE_GROUPS || dev->workers_n == 0 ||
        atomic_exchange_explicit(&dev->pool_owner, 1u, memory_order_acquire)) {
        accel_i_cpu_run_groups(job, 0, job->groups, lane);
        accel_i_cpu_lane_give(dev, lane);
    } else {
        accel_i_cpu_pool_run(dev, job, lane, own);   /* gives the lane back */
        atomic_store_explicit(&dev->pool_owner, 0u, memory_order_release);
    }
}

static void accel_i_cpu_fill_info(accel_i_cpu_device* dev) {
    accel_device_info* info = &dev->base.info;
    memset(info, 0, sizeof *info);
    info->backend = "cpu";
    snprintf(info->name, sizeof info->name, "cpu: %u thread%s", dev->lanes_n, dev->lanes_n == 1 ? "" : "s");
    info->type = ACCEL_DEVICE_CPU;
    info->memory_bytes = accel_i_cpu_memory();
    info->max_group_size[0] = 1024; info->max_group_size[1] = 1024; info->max_group_size[2] = 64;
    info->max_group_invocations = 1024;
    info->max_group_count[0] = UINT32_MAX; info->max_group_count[1] = 65535; info->max_group_count[2] = 65535;
    info->max_buffers = ACCEL_I_CPU_MAX_BUFFERS;
    info->max_constants = ACCEL_I_CPU_MAX_CONSTANTS;
    info->formats = ACCEL_FORMAT_CPU;
    info->separate_copy_queue = false;
    info->host_mapped_device_memory = true;
    info->cpu_threads = dev->lanes_n;
    info->buffer_offset_alignment = 1;
    info->pci_domain = info->pci_bus = info->pci_device = UINT32_MAX;   /* uuid: all zero */
}

/* Stops the started workers and frees what was made; also the failure path of create. */
static void accel_i_cpu_device_free(accel_i_cpu_device* dev, bool events_ok) {
    accel_allocator a = dev->base.allocator;
#if !defined(ACCEL_NO_THREADS)
    if (dev->workers_n) {
        atomic_store(&dev->stop, 1u);
        accel_i_event_add(&dev->gen, 1);
        for (uint32_t i = 0; i < dev->workers_n; i++) accel_i_thread_join(&dev->workers[i].thread);
    }
#endif
    if (dev->workers) accel_i_free(&a, dev->workers, (size_t)(dev->lanes_n - 1u) * sizeof *dev->workers);
    if (dev->lanes) accel_i_free(&a, dev->lanes, (size_t)dev->lanes_n * sizeof *dev->lanes);
    if (events_ok) {
        accel_i_event_destroy(&dev->gen);
        accel_i_event_destroy(&dev->done);
        accel_i_event_destroy(&dev->lanes_given);
    }
    accel_i_free(&a, dev, sizeof *dev);
}

static accel_result accel_i_cpu_start_workers(accel_i_cpu_device* dev) {
#if defined(ACCEL_NO_THREADS)
    (void)dev;
    return ACCEL_OK;
#else
    uint32_t n = dev->lanes_n - 1u;
    if (n == 0) return ACCEL_OK;
    dev->workers = (accel_i_cpu_worker*)accel_i_dev_alloc(&dev->base, (size_t)n * sizeof *dev->workers);
    if (!dev->workers)
        return accel_i_fail(&dev->base, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_device_create: out of memory for %u workers", n);
    for (uint32_t i = 0; i < n; i++) {
        accel_result r;
        dev->workers[i].dev = dev;
        /* no idle condition: workers move freely */
        memset(&dev->workers[i].own, 0, sizeof dev->workers[i].own);
        dev->workers[i].own.moves = dev->moves;
        r = accel_i_thread_start(&dev->workers[i].thread, accel_i_cpu_worker_main, &dev->workers[i]);
        if (r != ACCEL_OK)
            return accel_i_fail(&dev->base, r, "accel_device_create: starting worker thread %u failed", i);
        dev->workers_n = i + 1;
    }
    return ACCEL_OK;
#endif
}

static accel_result accel_i_cpu_device_create(const accel_backend* b, const accel_device_desc* d,
                                              accel_device** out) {
    uint32_t lanes = d->cpu_threads ? d->cpu_threads : accel_i_cpu_cores();
    accel_i_cpu_device* dev;
    accel_result r;
    if (d->device_index != 0) {
        accel_i_log_to(&d->logger, ACCEL_LOG_WARN,
                       "accel_device_create: the cpu backend has one device; no device %u", d->device_index);
        return ACCEL_ERROR_UNAVAILABLE;
    }
    if (lanes > 4096) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR,
                       "accel_device_create: cpu_threads %u is above 4096", lanes);
        return ACCEL_ERROR_INVALID_ARGUMENT;
    }
#if defined(ACCEL_NO_THREADS)
    lanes = 1;
#endif
    dev = (accel_i_cpu_device*)accel_i_alloc(&d->allocator, sizeof *dev, 64);
    if (!dev) {
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "accel_device_create: out of host memory");
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    memset((void*)dev, 0, sizeof *dev);
    accel_i_device_init(&dev->base, b, d);
    dev->lanes_n = lanes;
    dev->moves = ACCEL_CPU_MOVE_OFF && lanes < accel_i_cpu_cores();
    atomic_init(&dev->pool_owner, 0u); atomic_init(&dev->stop, 0u); atomic_init(&dev->next_hint, 0u);
    if (!accel_i_event_init(&dev->gen, 0)) {
        accel_i_cpu_device_free(dev, false);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    if (!accel_i_event_init(&dev->done, 0)) {
        accel_i_event_destroy(&dev->gen);
        accel_i_cpu_device_free(dev, false);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    if (!accel_i_event_init(&dev->lanes_given, 0)) {
        accel_i_event_destroy(&dev->gen);
        accel_i_event_destroy(&dev->done);
        accel_i_cpu_device_free(dev, false);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    dev->lanes = (accel_i_cpu_lane*)accel_i_alloc(&dev->base.allocator,
                                                  (size_t)lanes * sizeof *dev->lanes, 64);
    if (!dev->lanes) {
        accel_i_cpu_device_free(dev, true);
        accel_i_log_to(&d->logger, ACCEL_LOG_ERROR, "accel_device_create: out of host memory");
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < lanes; i++) {
        atomic_init(&dev->lanes[i].taken, 0u);
        atomic_init(&dev->lanes[i].work, 0u);
    }
    accel_i_cpu_fill_info(dev);
    if ((r = accel_i_cpu_start_workers(dev)) != ACCEL_OK) { accel_i_cpu_device_free(dev, true); return r; }
    *out = &dev->base;
    return ACCEL_OK;
}
static void accel_i_cpu_device_destroy(accel_device* d) { accel_i_cpu_device_free(accel_i_cpu_dev(d), true); }
static accel_result accel_i_cpu_device_count(const accel_backend* b, uint32_t* count) {
    (void)b;
    *count = 1;
    return ACCEL_OK;
}

/* ==== cpu: buffers, programs and signals ==== */
static accel_result accel_i_cpu_buffer_create(accel_device* dev, const accel_buffer_desc* desc,
                                              accel_buffer** out) {
    accel_i_cpu_buffer* buf = (accel_i_cpu_buffer*)accel_i_dev_alloc(dev, sizeof *buf);
    if (!buf) return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_buffer_create: out of host memory");
    memset((void*)buf, 0, sizeof *buf);
    buf->owned = desc->host_ptr == NULL;
    /* const cast away: a read_only host_ptr is never written by accel */
    buf->base.mapped = desc->host_ptr ? (void*)(uintptr_t)desc->host_ptr
                                      : accel_i_alloc(&dev->allocator, desc->size, 64);
    if (!buf->base.mapped) {
        accel_i_dev_free(dev, buf, sizeof *buf);
        return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_buffer_create: out of memory for %zu bytes", desc->size);
    }
    if (buf->owned) memset(buf->base.mapped, 0, desc->size);
    buf->base.size = desc->size;
    buf->base.memory = desc->memory;
    accel_i_object_init(&buf->base.obj, dev, ACCEL_I_BUFFER, desc->label);
    *out = &buf->base;
    return ACCEL_OK;
}
static void accel_i_cpu_buffer_free(accel_buffer* b) {
    accel_i_cpu_buffer* buf = (accel_i_cpu_buffer*)b;
    accel_device* dev = b->obj.device;
    if (buf->owned) accel_i_free(&dev->allocator, b->mapped, b->size);
    accel_i_dev_free(dev, buf, sizeof *buf);
}
static accel_result accel_i_cpu_buffer_io(accel_buffer* b, size_t offset, void* host, size_t size,
                                          bool write) {
    unsigned char* p = (unsigned char*)b->mapped + offset;
    if (write) memmove(p, host, size); else memmove(host, p, size);
    return ACCEL_OK;
}

static accel_result accel_i_cpu_program_create(accel_device* dev, const accel_program_desc* desc,
                                               accel_program** out) {
    accel_i_cpu_program* p;
    if (!desc->cpu)
        return accel_i_fail(dev, ACCEL_ERROR_UNSUPPORTED,
                            "accel_program_create '%s': no CPU function in the desc,"
                            " and the cpu backend runs no other format",
                            desc->name ? desc->name : "");
    p = (accel_i_cpu_program*)accel_i_dev_alloc(dev, sizeof *p);
    if (!p) return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_program_create: out of host memory");
    memset((void*)p, 0, sizeof *p);
    p->fn = desc->cpu;
    p->base.buffer_count = desc->buffer_count;
    p->base.constant_count = desc->constant_count;
    accel_i_object_init(&p->base.obj, dev, ACCEL_I_PROGRAM, desc->name);
    *out = &p->base;
    return ACCEL_OK;
}
static void accel_i_cpu_program_free(accel_program* p) {
    accel_i_dev_free(p->obj.device, p, sizeof(accel_i_cpu_program));
}

/* A CPU signal: a host signal, and the queue of its device that last submitted a signal command on it
   (0: none, or that queue is gone), which a waiting thread may help (see "cpu: waits that help"). */
typedef struct accel_i_cpu_signal {
    accel_i_host_signal host;
    accel_i_a64 setter;
    accel_i_a32 helped;   /* 1: a wait on it helped: waits that do not help look for its setter too */
} accel_i_cpu_signal;
static accel_result accel_i_cpu_signal_create(accel_device* dev, uint64_t initial, accel_signal** out) {
    accel_result r = accel_i_host_signal_make(dev, initial, sizeof(accel_i_cpu_signal), out);
    if (r != ACCEL_OK) return r;
    atomic_init(&((accel_i_cpu_signal*)*out)->setter, 0u);
    atomic_init(&((accel_i_cpu_signal*)*out)->helped, 0u);
    accel_i_host_signal_list(dev, *out);   /* whole now: a queue's destroy reads every signal's setter */
    return ACCEL_OK;
}
static void accel_i_cpu_signal_free(accel_signal* s) {
    accel_i_host_signal_destroy(s, sizeof(accel_i_cpu_signal));
}

/* ==== cpu: queue commands ==== */
/* Each queue runs its batches in order: on its own executor thread, or (no threads) inside submit and
   inside the accel_signal_set that unblocks a parked batch. Both paths share accel_i_cpu_run_batch. */
typedef struct accel_i_cpu_queue {
    accel_queue base;
    accel_i_fifo fifo;            /* submitted, not finished */
    accel_i_event work;           /* batches submitted */
    accel_i_event done;           /* batches finished */
    uint32_t lane_hint;
    accel_i_own own;              /* the executor thread's placement */
    const struct accel_i_cpu_help* help;   /* the helper that holds the turn (NULL: the executor) */
#if defined(ACCEL_NO_THREADS)
    accel_i_waiter park;          /* registered on the signal the head batch waits for */
    accel_i_event* parked_on;
    struct accel_i_cpu_queue* ready_next;   /* on the device's ready list */
    bool ready;
    bool pumping;                 /* its batches are running (a host call of its own may be under way) */
#else
    accel_i_a32 stop;
    accel_i_thread thread;
    accel_i_blocked blocked;      /* debug devices: what the executor waits for */
    accel_i_a32 turn;             /* 1: a thread (the executor or a helper) runs the batches */
    accel_i_event turned;         /* its lock and condition only: the executor dozes there */
    accel_i_a32 helped;           /* 1: waiting threads run q's batches (accel_i_cpu_executor_wait) */
#endif
} accel_i_cpu_queue;
/* What a helping thread waits for (see "cpu: waits that help"): s >= v (or failed), or, with s NULL,
   its queue's finished batches >= v. */
typedef struct accel_i_cpu_help { accel_signal* s; uint64_t v; } accel_i_cpu_help;
static bool accel_i_cpu_helped(const accel_i_cpu_queue* q, const accel_i_cpu_help* h) {
    uint64_t cur;
    if (!h->s) return accel_i_event_value(&q->done) >= h->v;
    cur = accel_i_host_signal_value(h->s);
    return accel_i_failed(cur) || cur >= h->v;
}



#if !defined(ACCEL_NO_THREADS)
static void accel_i_cpu_help_signal(accel_signal* s, uint64_t v, bool help);
#endif
/* The wait command: ACCEL_OK when reached, ACCEL_ERROR_SIGNAL_FAILED when failed, ACCEL_TIMEOUT
   when the batch must park (no-threads) or go back to the executor (a helper). */
static accel_result accel_i_cpu_wait_cmd(accel_i_cpu_queue* q, accel_signal* s, uint64_t v) {
    uint64_t cur;
#if defined(ACCEL_NO_THREADS)
    cur = accel_i_signal_value(s);
    if (!accel_i_failed(cur) && cur < v) {
        if (accel_i_is_cpu_signal(s)) {
            q->parked_on = accel_i_host_signal_event(s);
            accel_i_waiter_add(q->parked_on, &q->park);
        }
        return ACCEL_TIMEOUT;
    }
#else
    cur = accel_i_signal_value(s);
    if (!accel_i_failed(cur) && cur < v) {   /* published in every build: a destroy that waits reports it */
        if (accel_i_is_cpu_signal(s)) accel_i_cpu_help_signal(s, v, false);   /* its setter runs now */
        if (q->help) return ACCEL_TIMEOUT;   /* a helper never waits here: the batch is the executor's */
        accel_i_blocked_set(&q->blocked, s, v);
        if (accel_i_is_cpu_signal(s)) accel_i_event_wait_own(accel_i_host_signal_event(s), v, &q->own);
        else accel_i_wait_internal(s, v, ACCEL_WAIT_FOREVER);
        accel_i_blocked_set(&q->blocked, NULL, 0);
        cur = accel_i_signal_value(s);
    }
#endif
    return accel_i_failed(cur) ? ACCEL_ERROR_SIGNAL_FAILED : ACCEL_OK;
}

/* A job's grid: its sizes and group counts for params p. */
static void accel_i_cpu_job_grid(accel_i_cpu_job* job, const accel_exec_params* p) {
    job->groups = 1;
    for (int d = 0; d < 3; d++) {
        job->tmpl.group_size[d] = p->local_size[d];
        job->tmpl.global_size[d] = p->global_size[d];
        job->tmpl.group_count[d] = (uint32_t)accel_i_groups_along(p, d);
        job->groups *= job->tmpl.group_count[d];
    }
}
/* The grid of exec command c over resolved buffer addresses, sizes and constants. */
static void accel_i_cpu_job_init(accel_i_cpu_job* job, const accel_i_cmd* c, void* const* ptrs,
                                 const size_t* sizes, const uint32_t* constants) {
    /* every field set (a memset of the whole job was a string store, a tenth of a tiny exec's time) */
    job->fn = ((accel_i_cpu_program*)c->u.exec.program)->fn;
    job->chunk = 0;
    job->tmpl.group_id[0] = job->tmpl.group_id[1] = job->tmpl.group_id[2] = 0;
    job->tmpl.worker = 0;
    accel_i_cpu_job_grid(job, &c->u.exec.params);
    job->tmpl.buffers = ptrs;
    job->tmpl.buffer_sizes = sizes;
    job->tmpl.constants = constants;
    job->tmpl.buffer_count = c->u.exec.buffer_count;
    job->tmpl.constant_count = c->u.exec.constant_count;
}
/* Resolves the exec's buffers into ptrs/sizes (buffer_count entries each). */
static void accel_i_cpu_resolve(const accel_i_batch* b, const accel_i_cmd* c, void** ptrs, size_t* sizes) {
    accel_buffer* const* bufs = (accel_buffer* const*)(const void*)(b->arena + c->u.exec.buffers);
    for (uint32_t i = 0; i < c->u.exec.buffer_count; i++) {
        ptrs[i] = bufs[i]->mapped ? bufs[i]->mapped : accel_i_qmem_host(bufs[i]);   /* memory at its point */
        sizes[i] = bufs[i]->size;
    }
}
/* Where indirect exec c's counts are (a view's memory is its root's). */
static const unsigned char* accel_i_cpu_counts_at(const accel_i_batch* b, const accel_i_cmd* c) {
    static const unsigned char none[12] = { 0 };   /* memory at its point not there yet: no work */
    size_t offset;
    const accel_buffer* buf = accel_i_exec_counts(b, c, &offset);
    const unsigned char* m = (const unsigned char*)(buf->mapped ? buf->mapped : accel_i_qmem_host(buf));
    return m ? m + offset : none;
}
/* An indirect exec's grid from the counts at `at`, read now: the commands before it completed (their
   kernels joined). False: it runs nothing (see accel_i_indirect_params). */
static bool accel_i_cpu_indirect(accel_i_cpu_queue* q, const accel_program* prog, const unsigned char* at,
                                 accel_i_cpu_job* job) {
    uint32_t counts[3];
    accel_exec_params p;
    memcpy(counts, at, sizeof counts);
    memcpy(p.local_size, job->tmpl.group_size, sizeof p.local_size);
    if (!accel_i_indirect_params(&q->base, prog, counts, &p)) return false;
    job->groups = 1;
    for (int d = 0; d < 3; d++) {   /* the group counts are given: no division (accel_i_cpu_job_grid) */
        job->tmpl.global_size[d] = p.global_size[d];
        job->tmpl.group_count[d] = counts[d];
        job->groups *= counts[d];
    }
    return true;
}
/* Runs exec command c; a one-group one on the lane *held (see accel_i_cpu_run_one), a grid on a lane of
   its own (the held one given back first). */
static void accel_i_cpu_exec(accel_i_cpu_queue* q, accel_i_batch* b, const accel_i_cmd* c, uint32_t* held) {
    void* ptrs[ACCEL_I_CPU_MAX_BUFFERS];
    size_t sizes[ACCEL_I_CPU_MAX_BUFFERS];
    accel_i_cpu_job job;
    accel_i_cpu_device* dev = accel_i_cpu_dev(q->base.obj.device);
    accel_i_cpu_resolve(b, c, ptrs, sizes);
    accel_i_cpu_job_init(&job, c, ptrs, sizes,
                         (const uint32_t*)(const void*)(b->arena + c->u.exec.constants));
    if ((c->flags & ACCEL_I_CMD_INDIRECT) &&
        !accel_i_cpu_indirect(q, c->u.exec.program, accel_i_cpu_counts_at(b, c), &job))
        return;
    if (job.groups == 1 && ACCEL_CPU_INLINE_GROUPS >= 1u) {
        accel_i_cpu_run_one(dev, &job, q->lane_hint, held);
        return;
    }
    accel_i_cpu_lane_drop(dev, held);
    accel_i_cpu_run_grid(dev, &job, q->lane_hint, q->help ? NULL : &q->own);
}

/* size is a multiple of 4 (accel_i_fill_aligned), so the pattern repeats every 4 bytes from dst. A byte
   repeated is a memset; else the first 4 KiB take 64-byte stores of a block the compiler keeps in
   registers, and the rest is copied from them a page at a time (libc's widest stores). Copies of a
   small block on the stack, as before, ran 60% slower into memory at some page offsets (4K aliasing:
   the block's loads wait for stores to the same page offset), which is how bench/cpu.c figure 11 read
   1.25 after figure 9 and 1.02 alone (the heap had moved its buffers). */
static void accel_i_cpu_fill(unsigned char* dst, size_t size, uint32_t pattern) {
    uint32_t block[16];
    size_t head = size < 4096u ? size : 4096u, i = 0;
    if (pattern == (pattern & 0xffu) * 0x01010101u) { memset(dst, (int)(pattern & 0xffu), size); return; }
    for (int k = 0; k < 16; k++) block[k] = pattern;
    for (; i + sizeof block <= head; i += sizeof block) memcpy(dst + i, block, sizeof block);
    for (; i < head; i += 4u) memcpy(dst + i, &pattern, 4);
    for (; i < size; i += head) memcpy(dst + i, dst, size - i < head ? size - i : head);
}

/* ==== cpu: recorded command lists ==== */
/* A list's native form is an op per command, resolved at record_end: an exec's grid with its buffer
   addresses, sizes and constants in arrays of the form itself, a copy/fill/update's addresses. A
   replay runs the ops; a patched op is copied to the stack and patched there (the form is shared by
   concurrent replays and never written). No validation (done at record time) and no allocation. */
typedef struct accel_i_cpu_op {
    accel_i_cpu_job job;                 /* exec */
    unsigned char* dst;                  /* fill, update: resolved addresses */
    const unsigned char* src;
    accel_buffer *dbuf, *sbuf;           /* copy: the roots (one may be another device's) */
    size_t dst_offset, src_offset, size;
    uint32_t pattern;
    accel_i_cmd_kind kind;
    const unsigned char* counts;         /* an indirect exec: where its counts are (NULL: a direct one) */
    size_t counts_offset;                /* ... the offset recorded (a counts patch keeps it) */
    const accel_program* prog;           /* ... its program (for the log) */
} accel_i_cpu_op;
typedef struct accel_i_cpu_list { accel_i_cpu_op* ops; uint32_t count; size_t bytes; } accel_i_cpu_list;

static void accel_i_cpu_op_build(accel_i_cpu_op* op, const accel_i_batch* l, const accel_i_cmd* c,
                                 void*** ptrs, size_t** sizes, uint32_t** consts) {
    op->kind = c->kind;
    switch (c->kind) {
    case ACCEL_I_CMD_EXEC:
        accel_i_cpu_resolve(l, c, *ptrs, *sizes);
        if (c->u.exec.constant_count)
            memcpy(*consts, l->arena + c->u.exec.constants, 4u * (size_t)c->u.exec.constant_count);
        accel_i_cpu_job_init(&op->job, c, *ptrs, *sizes, *consts);
        if (c->flags & ACCEL_I_CMD_INDIRECT) {
            op->counts = accel_i_cpu_counts_at(l, c);
            accel_i_exec_counts(l, c, &op->counts_offset);
            op->prog = c->u.exec.program;
        }
        *ptrs += c->u.exec.buffer_count;
        *sizes += c->u.exec.buffer_count;
        *consts += c->u.exec.constant_count;
        break;
    case ACCEL_I_CMD_COPY:
        op->dst_offset = c->u.copy.dst_offset;
        op->src_offset = c->u.copy.src_offset;
        op->size = c->u.copy.size;
        op->dbuf = c->u.copy.dst;
        op->sbuf = c->u.copy.src;
        break;
    case ACCEL_I_CMD_FILL:
        op->dst_offset = c->u.fill.offset; op->size = c->u.fill.size; op->pattern = c->u.fill.pattern;
        op->dst = (unsigned char*)c->u.fill.dst->mapped + op->dst_offset;
        break;
    case ACCEL_I_CMD_UPDATE:
        op->size = c->u.update.size;
        op->dst = (unsigned char*)c->u.update.dst->mapped + c->u.update.offset;
        op->src = l->arena + c->u.update.data;
        break;
    default: break;
    }
}
/* A list whose exec, fill or update uses another CPU device's buffer (or an exec its program) is left in
   the generic form (c->native NULL): each replay records it anew, so that an object gone stale since
   (that device recovered) is refused as in any recording. A copy's buffers are checked where it runs
   (accel_i_cpu_op_copy). */
static accel_result accel_i_cpu_commands_build(accel_queue* q, accel_commands* c) {
    const accel_i_batch* l = c->list;
    uint64_t nb = 0, nc = 0, bytes;
    accel_i_cpu_list* nat;
    void** ptrs; size_t* sizes; uint32_t* consts;
    for (uint32_t i = 0; i < l->count; i++) {
        const accel_i_cmd* x = &l->cmds[i];
        bool exec = x->kind == ACCEL_I_CMD_EXEC;
        accel_buffer* const* use =
            exec ? (accel_buffer* const*)(const void*)(l->arena + x->u.exec.buffers) : NULL;   /* n: 0 */
        /* an exec's program, then its buffers (and an indirect one's counts); a fill's or an update's
           dst (the first member of both: a common initial sequence of the union's structs) */
        uint32_t n = exec ? x->u.exec.buffer_count + ((x->flags & ACCEL_I_CMD_INDIRECT) != 0) : 0;
        bool dst = x->kind == ACCEL_I_CMD_FILL || x->kind == ACCEL_I_CMD_UPDATE;
        const accel_i_object* o = exec ? &x->u.exec.program->obj : dst ? &x->u.fill.dst->obj : NULL;
        for (uint32_t k = 0; o; o = k < n ? &use[k++]->obj : NULL)
            if (o->device != q->obj.device) return ACCEL_OK;
        if (!exec) continue;
        nb += x->u.exec.buffer_count;
        nc += x->u.exec.constant_count;
    }
    bytes = sizeof *nat + (uint64_t)l->count * sizeof(accel_i_cpu_op) +
            nb * (sizeof(void*) + sizeof(size_t)) + nc * 4u;
    nat = bytes <= SIZE_MAX ? (accel_i_cpu_list*)accel_i_dev_alloc(c->obj.device, (size_t)bytes) : NULL;
    if (!nat)
        return accel_i_fail(c->obj.device, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_queue_record_end: out of host memory for the op array");
    memset((void*)nat, 0, (size_t)bytes);
    nat->ops = (accel_i_cpu_op*)(void*)(nat + 1);
    nat->count = l->count;
    nat->bytes = (size_t)bytes;
    ptrs = (void**)(void*)(nat->ops + l->count);
    sizes = (size_t*)(void*)(ptrs + nb);
    consts = (uint32_t*)(void*)(sizes + nb);
    for (uint32_t i = 0; i < l->count; i++)
        accel_i_cpu_op_build(&nat->ops[i], l, &l->cmds[i], &ptrs, &sizes, &consts);
    c->native = nat;
    return ACCEL_OK;
}
static void accel_i_cpu_commands_free(accel_commands* c) {
    accel_i_dev_free(c->obj.device, c->native, ((accel_i_cpu_list*)c->native)->bytes);
}

/* An exec op with patches, or an indirect one: its arrays and grid copied to the stack, patched (an
   indirect exec's grid from its counts), run. */
static void accel_i_cpu_exec_patched(accel_i_cpu_queue* q, const accel_i_cpu_op* op, const accel_i_patch* p,
                                     uint32_t n) {
    void* ptrs[ACCEL_I_CPU_MAX_BUFFERS];
    size_t sizes[ACCEL_I_CPU_MAX_BUFFERS];
    uint32_t consts[ACCEL_I_CPU_MAX_CONSTANTS];
    accel_i_cpu_job job;
    const accel_dispatch* t = &op->job.tmpl;
    const unsigned char* counts = op->counts;
    memcpy(ptrs, t->buffers, (size_t)t->buffer_count * sizeof *ptrs);
    memcpy(sizes, t->buffer_sizes, (size_t)t->buffer_count * sizeof *sizes);
    memcpy(consts, t->constants, (size_t)t->constant_count * 4u);
    for (uint32_t k = 0; k < n; k++) {
        if (p[k].buffer && p[k].index == t->buffer_count)   /* an indirect exec's counts */
            counts = (const unsigned char*)p[k].buffer->mapped + p[k].offset + op->counts_offset;
        else if (p[k].buffer) {
            ptrs[p[k].index] = (unsigned char*)p[k].buffer->mapped + p[k].offset;
            sizes[p[k].index] = p[k].size;
        }
        else consts[p[k].index] = p[k].value;
    }
    memset((void*)&job, 0, sizeof job);
    job.fn = op->job.fn;
    job.groups = op->job.groups;
    job.tmpl = *t;
    job.tmpl.buffers = ptrs;
    job.tmpl.buffer_sizes = sizes;
    job.tmpl.constants = consts;
    if (counts && !accel_i_cpu_indirect(q, op->prog, counts, &job)) return;
    accel_i_cpu_run_grid(accel_i_cpu_dev(q->base.obj.device), &job, q->lane_hint, q->help ? NULL : &q->own);
}
/* A copy op with its patches: the command it stands for, patched, run by the core (any device's
   buffers: core: several devices). Returns 0 or the failed value that drops the rest. */
static uint64_t accel_i_cpu_op_copy(accel_i_cpu_queue* q, const accel_i_cpu_op* op, const accel_i_patch* p,
                                    uint32_t n) {
    accel_i_cmd c;
    memset(&c, 0, sizeof c);
    c.kind = ACCEL_I_CMD_COPY;
    c.u.copy.dst = op->dbuf; c.u.copy.dst_offset = op->dst_offset;
    c.u.copy.src = op->sbuf; c.u.copy.src_offset = op->src_offset;
    c.u.copy.size = op->size;
    for (uint32_t k = 0; k < n; k++) {
        if (p[k].index == 0) { c.u.copy.dst = p[k].buffer; c.u.copy.dst_offset = p[k].offset; }
        else { c.u.copy.src = p[k].buffer; c.u.copy.src_offset = p[k].offset; }
    }
    return accel_i_peer_copy_cmd(q->base.obj.device, &c);
}
/* Runs one op with its n patches (validated at record time). Returns 0 or the failed value that drops
   the rest (a copy between devices that failed). */
static uint64_t accel_i_cpu_op_run(accel_i_cpu_queue* q, const accel_i_cpu_op* op, const accel_i_patch* p,
                                   uint32_t n) {
    unsigned char* dst = op->dst;
    const unsigned char* src = op->src;
    uint32_t pattern = op->pattern;
    if (op->kind == ACCEL_I_CMD_EXEC) {
        if (n == 0 && !op->counts)
            accel_i_cpu_run_grid(accel_i_cpu_dev(q->base.obj.device), &op->job, q->lane_hint,
                                 q->help ? NULL : &q->own);
        else accel_i_cpu_exec_patched(q, op, p, n);
        return 0;
    }
    if (op->kind == ACCEL_I_CMD_COPY) return accel_i_cpu_op_copy(q, op, p, n);
    for (uint32_t k = 0; k < n; k++) {
        if (!p[k].buffer) pattern = p[k].value;
        else dst = (unsigned char*)p[k].buffer->mapped + p[k].offset;
    }
    switch (op->kind) {
    case ACCEL_I_CMD_FILL: accel_i_cpu_fill(dst, op->size, pattern); break;
    case ACCEL_I_CMD_UPDATE: memcpy(dst, src, op->size); break;
    case ACCEL_I_CMD_BARRIER: atomic_thread_fence(memory_order_seq_cst); break;
    default: break;
    }
    return 0;
}
/* The replay command: the list's ops in order, each with its run of the (sorted) patches. Returns 0 or
   the failed value of an op that failed (the rest of the list and of the batch is dropped). */
static uint64_t accel_i_cpu_replay(accel_i_cpu_queue* q, const accel_i_batch* b, const accel_i_cmd* c) {
    const accel_i_cpu_list* nat = (const accel_i_cpu_list*)c->u.replay.list->native;
    uint32_t n = c->u.replay.patch_count, k = 0;
    const accel_i_patch* p = n ? (const accel_i_patch*)(const void*)(b->arena + c->u.replay.patches) : NULL;
    for (uint32_t i = 0; i < nat->count; i++) {
        uint32_t first = k;
        uint64_t failed;
        while (k < n && p[k].command == i) k++;
        failed = accel_i_cpu_op_run(q, &nat->ops[i], p ? p + first : NULL, k - first);
        if (failed) return failed;
    }
    return 0;
}

/* ==== cpu: queue executor ==== */
/* Tracing on a CPU queue: a command's span and a signal's instant are recorded AFTER the raise of the
   signal that follows them (only its mark goes before, for the waits it releases), so a waiter is
   released without waiting for the appends. The clock readings and the mark stay on the path: a
   traced one-group round trip costs up to 0.44 us more (bench/cpu.c). */
typedef struct accel_i_cpu_trace { const accel_i_cmd* held; uint64_t t0, t1; } accel_i_cpu_trace;
/* A command that ran from t0 to now: its span now, or held back when a signal comes next. Returns
   when the next command starts. */
static uint64_t accel_i_cpu_traced(accel_i_cpu_queue* q, const accel_i_batch* b, const accel_i_cmd* c,
                                   uint64_t t0, accel_i_cpu_trace* tr) {
    uint64_t t1 = accel_i_now_ns();
    if (b->pc + 1 < b->count && b->cmds[b->pc + 1].kind == ACCEL_I_CMD_SIGNAL) {
        tr->held = c; tr->t0 = t0; tr->t1 = t1;
        return t1;
    }
    return accel_i_trace_cmd(&q->base, c, t0, t1);
}
/* A signal command at t0: its mark, the raise, then what was held back and its instant. */
static uint64_t accel_i_cpu_traced_signal(accel_i_cpu_queue* q, const accel_i_cmd* c, uint64_t t0,
                                          accel_i_cpu_trace* tr) {
    uint64_t t = t0;
    accel_i_trace_mark_set(q->base.obj.device, c->u.sig.signal, c->u.sig.value, t0, q->base.trace_track);
    accel_i_raise(c->u.sig.signal, c->u.sig.value);
    if (tr->held) {
        t = accel_i_trace_cmd(&q->base, tr->held, tr->t0, tr->t1);
        tr->held = NULL;
    }
    accel_i_trace_cmd_at(&q->base, c, t0, t0, false);
    return t > t0 ? t : t0;   /* later when the trace was written out meanwhile */
}
/* A command that ran and failed (failed != 0: a copy between devices, a replay of one) drops the rest
   of the batch: what it would signal fails. Returns whether it failed. */
static bool accel_i_cpu_failed_at(accel_i_cpu_queue* q, accel_i_batch* b, const accel_i_cmd* c, bool trace,
                                  uint64_t t0, uint64_t failed) {
    if (!failed) return false;
    if (trace) accel_i_trace_cmd(&q->base, c, t0, accel_i_now_ns());
    accel_i_fail_rest(b, b->pc + 1, failed);
    b->pc = b->count;
    return true;
}
/* Runs the batch from b->pc (accel_i_cpu_run_batch). With a trace, each command's span is its start
   and end on the host clock (the CPU device's clock). */
static bool accel_i_cpu_run_cmds(accel_i_cpu_queue* q, accel_i_batch* b, uint32_t* held) {
    bool trace = ACCEL_I_TRACING(q->base.obj.device);
    uint64_t t0 = trace ? accel_i_now_ns() : 0;   /* a command starts where the one before ended */
    accel_i_cpu_trace tr = { NULL, 0, 0 };
    for (; b->pc < b->count; b->pc++) {
        accel_i_cmd* c = &b->cmds[b->pc];
        /* a lane is held over a run of execs only: nothing else (a wait above all) keeps one */
        if (c->kind != ACCEL_I_CMD_EXEC || b->qmem)
            accel_i_cpu_lane_drop(accel_i_cpu_dev(q->base.obj.device), held);
        if (accel_i_stale(&q->base.obj)) {   /* recovered: start nothing more (core: device generations) */
            accel_i_fail_rest(b, b->pc, accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST));
            b->pc = b->count;
            return true;
        }
        /* a helper leaves a host call (or native step) to the executor: it may wait for what the helping
           thread does once its wait returns */
        if (q->help && (c->kind == ACCEL_I_CMD_HOST_CALL || c->kind == ACCEL_I_CMD_NATIVE)) return false;
        if (b->qmem) {   /* queue-ordered memory at its point: a point runs here; a use of none fails */
            if (accel_i_cpu_failed_at(q, b, c, trace, t0, accel_i_qmem_step(&q->base, b, c))) return true;
            if (c->flags & ACCEL_I_CMD_QMEM_POINT) continue;
        }
        switch (c->kind) {
        case ACCEL_I_CMD_WAIT: {
            accel_result r = accel_i_cpu_wait_cmd(q, c->u.sig.signal, c->u.sig.value);
            if (r == ACCEL_TIMEOUT) return false;
            if (r != ACCEL_OK) {   /* drop the rest, pass the failure on (recovered: DEVICE_LOST) */
                if (trace) accel_i_trace_cmd(&q->base, c, t0, accel_i_now_ns());
                accel_i_fail_rest(b, b->pc + 1, accel_i_stale(&q->base.obj)
                                                    ? accel_i_failed_value(ACCEL_ERROR_DEVICE_LOST)
                                                    : accel_i_signal_value(c->u.sig.signal));
                b->pc = b->count;
                return true;
            }
            break;
        }
        case ACCEL_I_CMD_SIGNAL:   /* an instant: a clock reading is a sixth of a small dispatch's cost */
            if (trace) t0 = accel_i_cpu_traced_signal(q, c, t0, &tr);
            else accel_i_raise(c->u.sig.signal, c->u.sig.value);
            if (q->help && b->pc + 1 < b->count && accel_i_cpu_helped(q, q->help)) { b->pc++; return false; }
            continue;
        case ACCEL_I_CMD_EXEC:
            accel_i_cpu_exec(q, b, c, held);
            break;
        case ACCEL_I_CMD_COPY:   /* another device's buffer too (core: several devices) */
            if (accel_i_cpu_failed_at(q, b, c, trace, t0, accel_i_peer_copy_cmd(q->base.obj.device, c)))
                return true;
            break;
        case ACCEL_I_CMD_FILL:
            accel_i_cpu_fill((unsigned char*)c->u.fill.dst->mapped + c->u.fill.offset, c->u.fill.size,
                             c->u.fill.pattern);
            break;
        case ACCEL_I_CMD_UPDATE:
            memcpy((unsigned char*)c->u.update.dst->mapped + c->u.update.offset, b->arena + c->u.update.data,
                   c->u.update.size);
            break;
        case ACCEL_I_CMD_BARRIER:
            atomic_thread_fence(memory_order_seq_cst);
            break;
        case ACCEL_I_CMD_TIMESTAMP: {
            uint64_t now = accel_i_now_ns();
            memcpy((unsigned char*)c->u.stamp.dst->mapped + c->u.stamp.offset, &now, sizeof now);
            break;
        }
        case ACCEL_I_CMD_REPLAY:
            if (accel_i_cpu_failed_at(q, b, c, trace, t0, accel_i_cpu_replay(q, b, c))) return true;
            break;
        case ACCEL_I_CMD_HOST_CALL:   /* the commands before it ran on this thread (kernels: joined) */
        case ACCEL_I_CMD_NATIVE: {    /* no native queue: the commands before it completed */
            accel_native n;
            accel_i_call call;
            memset(&n, 0, sizeof n);
            n.queue = &q->base;
            accel_i_call_enter(&call, &q->base);
            if (c->kind == ACCEL_I_CMD_HOST_CALL) c->u.host.fn(c->u.host.user);
            else c->u.native.fn(&n, c->u.native.user);
            accel_i_call_leave(&call);
            break;
        }
        }
        if (trace) t0 = accel_i_cpu_traced(q, b, c, t0, &tr);
        /* a helper stops after a kernel once what it waits for came meanwhile (another queue, the host):
           the executor runs the rest */
        if (q->help && c->kind == ACCEL_I_CMD_EXEC && b->pc + 1 < b->count && !tr.held &&
            accel_i_cpu_helped(q, q->help)) {
            b->pc++;
            return false;
        }
    }
    return true;
}
/* Runs b from b->pc: true when it ran to its end (or failed there), false when it parked on an
   unreached signal (no threads) or a helper handed it back (b->pc at what is left). */
static bool accel_i_cpu_run_batch(accel_i_cpu_queue* q, accel_i_batch* b) {
    uint32_t held = ACCEL_I_CPU_NO_LANE;
    bool done = accel_i_cpu_run_cmds(q, b, &held);
    accel_i_cpu_lane_drop(accel_i_cpu_dev(q->base.obj.device), &held);
    return done;
}

/* A finished batch: release what it held, count it, wake whoever waits for the queue. */
static void accel_i_cpu_batch_done(accel_i_cpu_queue* q, accel_i_batch* b) {
    accel_i_batch_recycle(&q->base, b);
    accel_i_event_add(&q->done, 1);
}

#if !defined(ACCEL_NO_THREADS)
/* The oldest batch of q not finished (only the thread that holds q's turn takes batches off). */
static accel_i_batch* accel_i_cpu_head(accel_i_cpu_queue* q) {
    accel_i_batch* b;
    accel_i_spin_lock(&q->fifo.lock);
    b = q->fifo.head;
    accel_i_spin_unlock(&q->fifo.lock);
    return b;
}
/* The executor of a helped queue looks at it every ACCEL_I_CPU_LOOK_NS (a batch no one waits for starts
   at most two looks late: a submit meant to overlap the host's own work keeps most of that overlap; at
   4 ms looks it kept none), twice as far apart after each look that found a helper running the batch
   or nothing left, up to ACCEL_I_CPU_LOOK_MAX_NS (on 2 cores, a look every 0.25 ms through a decode
   loop's helped batches took a lane's core 4,000 times a second: bench/decode.c at 2 threads 0.89-0.95x
   OpenMP, 0.96-1.01x with these looks),
   and sleeps until a submit after ACCEL_I_CPU_LOOK_IDLE_NS with nothing to run (see
   accel_i_cpu_executor_wait). */
#define ACCEL_I_CPU_LOOK_NS 250000u
#define ACCEL_I_CPU_LOOK_MAX_NS 1000000u
#define ACCEL_I_CPU_LOOK_IDLE_NS 5000000u
/* Sleeps for ns, or until q stops: on `turned`'s condition variable without counting as its sleeper, so
   that neither a submit nor a helper giving the turn back pays a wake-up for it. */
static void accel_i_cpu_doze(accel_i_cpu_queue* q, uint64_t ns) {
    accel_i_mutex_lock(&q->turned.lock);
    if (!atomic_load(&q->stop) && atomic_load_explicit(&q->helped, memory_order_relaxed))
        accel_i_cond_timedwait(&q->turned.cond, &q->turned.lock, ns);
    accel_i_mutex_unlock(&q->turned.lock);
}
/* A wait that does not help (see "cpu: waits that help") for work of a helped queue: the executor
   leaves its doze and runs the batches at once (plain again). */
static void accel_i_cpu_unhelp(accel_i_cpu_queue* q) {
    if (!atomic_load_explicit(&q->helped, memory_order_relaxed)) return;
    atomic_store_explicit(&q->helped, 0u, memory_order_relaxed);
    accel_i_mutex_lock(&q->turned.lock);
    accel_i_cond_broadcast(&q->turned.cond);
    accel_i_mutex_unlock(&q->turned.lock);
}
/* The doze before the executor's next look: ACCEL_I_CPU_LOOK_NS where a batch waits unfinished with the
   turn free (the next look takes it if no one helps meanwhile) or after a sleep; else (a helper runs the
   batch, or nothing is left) twice the last, up to ACCEL_I_CPU_LOOK_MAX_NS. */
static uint64_t accel_i_cpu_look_next(accel_i_cpu_queue* q, uint64_t look, uint64_t work, uint64_t done,
                                      bool slept) {
    if (slept || (done != work && !atomic_load(&q->turn))) return ACCEL_I_CPU_LOOK_NS;
    return accel_i_backoff(look, ACCEL_I_CPU_LOOK_MAX_NS);
}
/* The executor waits for batches to run and takes q's turn for them; false: q stops.
   Plain (q->helped 0): it waits for a submit (spin, then sleep) and takes the turn at once.
   Helped (a waiting thread ran a batch of q, or found the executor running one): the submitting thread
   will likely wait and run its batches itself, with no hand-off at all, so the executor leaves them to
   it and stays out of its way: it is no one's sleeper (neither a submit nor a helper giving the turn back
   pays a wake-up for it; on a busy machine a woken thread may not run for long, and every submit meanwhile
   would). It dozes and looks at q's counters every ACCEL_I_CPU_LOOK_NS (further apart while helpers run
   every batch: accel_i_cpu_look_next), and takes the turn for a batch that stayed unfinished with the
   turn free for a whole look (no one came to help: plain again). A helper that leaves work behind, a
   wait that does not help and a wait command wake it at once (accel_i_cpu_unhelp). After
   ACCEL_I_CPU_LOOK_IDLE_NS with nothing to run it sleeps until a submit. */
static bool accel_i_cpu_executor_wait(accel_i_cpu_queue* q, uint64_t* seen) {
    uint64_t last = UINT64_MAX, last_work = 0, since = accel_i_now_ns(), look = ACCEL_I_CPU_LOOK_NS;
    for (;;) {
        uint64_t work, done, now;
        bool slept = false;
        if (!atomic_load_explicit(&q->helped, memory_order_relaxed)) {   /* no wait for a batch seen */
            if (accel_i_event_value(&q->done) >= *seen &&
                !accel_i_event_spin(&q->work, *seen + 1, ACCEL_I_FOREVER, &q->own, NULL, 0)) {
                if (atomic_load_explicit(&q->helped, memory_order_relaxed)) continue;   /* doze instead */
                if (accel_i_event_block(&q->work, *seen + 1, ACCEL_I_FOREVER, &slept) && slept)
                    accel_i_own_leave(&q->own, atomic_load_explicit(&q->work.waker_cpu, memory_order_relaxed),
                                      accel_i_now_ns());   /* as accel_i_event_sleep */
            }
            *seen = accel_i_event_value(&q->work);
            if (atomic_load(&q->stop)) return false;
            if (!atomic_exchange(&q->turn, 1u)) return true;
            atomic_store_explicit(&q->helped, 1u, memory_order_relaxed);   /* a helper has it */
            since = accel_i_now_ns();
            continue;
        }
        work = accel_i_event_value(&q->work);
        done = accel_i_event_value(&q->done);
        if (atomic_load(&q->stop)) return false;
        now = accel_i_now_ns();
        if (done != work && done == last && last != last_work && !atomic_load(&q->turn)) {
            if (!atomic_exchange(&q->turn, 1u)) {   /* left alone for a whole look */
                atomic_store_explicit(&q->helped, 0u, memory_order_relaxed);
                *seen = work;
                return true;
            }
        } else if (done == work && now - since >= ACCEL_I_CPU_LOOK_IDLE_NS) {
            accel_i_event_block(&q->work, work + 1, ACCEL_I_FOREVER, &slept);
        }
        if (done != work || done != last || slept) since = accel_i_now_ns();
        last = done;
        last_work = work;
        look = accel_i_cpu_look_next(q, look, work, done, slept);
        if (!slept) accel_i_cpu_doze(q, look);
    }
}
/* Each submit adds to `work`; the executor then runs every batch there is, in order, while it holds
   the queue's turn. A batch a helper ran is gone from the fifo; one it left at a wait resumes at pc. */
static void accel_i_cpu_executor_main(void* arg) {
    accel_i_cpu_queue* q = (accel_i_cpu_queue*)arg;
    uint64_t seen = 0;
    accel_i_cpu_no_help = 1;
    while (accel_i_cpu_executor_wait(q, &seen)) {
        accel_i_batch* b;
        while ((b = accel_i_cpu_head(q)) != NULL) {
            accel_i_cpu_run_batch(q, b);
            accel_i_cpu_batch_done(q, accel_i_fifo_pop(&q->fifo));
        }
        atomic_store_explicit(&q->turn, 0u, memory_order_release);
        accel_i_own_settle(&q->own);
    }
}

/* ==== cpu: waits that help ==== */
/* A host thread that waits without a timeout (ACCEL_WAIT_FOREVER) for one CPU signal, or finishes a CPU
   queue, runs batches itself instead of waiting for an executor to wake: the batches of the queue that
   last submitted a signal command on that signal (of the signal's device), or of the finished queue, while
   that queue's executor is not running them. Whoever takes the queue's turn runs its batches, so exactly
   one thread runs them, oldest first. A helper stops once what it waits for is reached (also within a
   batch, right after the signal command that reached it), and never waits inside a batch: at a wait
   command not reached, and at a host call (which may wait for what the waiting thread does after its
   wait), it leaves the batch to the executor (b->pc there). Its kernels take a lane as
   an executor's do (accel_dispatch.worker stays unique per concurrent kernel), an exec of many groups goes
   to the pool from it as from an executor, and it never moves (a user thread). While threads help, the
   executor keeps out of their way (accel_i_cpu_executor_wait). accel's own threads never
   help, nor does a thread that is helping already (a host call or kernel it runs waits as on the
   executor), so nothing recurses and a kernel never runs other work on its stack. A wait with a timeout
   never helps: it returns on time whatever the work does. */
/* Runs q's batches on this thread while q's turn is free and h is not reached. */
static void accel_i_cpu_help_queue(accel_i_cpu_queue* q, const accel_i_cpu_help* h) {
    accel_i_batch* b;
    if (!atomic_load_explicit(&q->helped, memory_order_relaxed))   /* the executor leaves batches to us */
        atomic_store_explicit(&q->helped, 1u, memory_order_relaxed);
    if (atomic_load_explicit(&q->turn, memory_order_relaxed) || atomic_exchange(&q->turn, 1u)) return;
    accel_i_cpu_no_help = 1;
    q->help = h;
    while (!accel_i_cpu_helped(q, h) && (b = accel_i_cpu_head(q)) != NULL) {
        if (!accel_i_cpu_run_batch(q, b)) break;   /* left to the executor */
        accel_i_cpu_batch_done(q, accel_i_fifo_pop(&q->fifo));
    }
    q->help = NULL;
    accel_i_cpu_no_help = 0;
    atomic_store_explicit(&q->turn, 0u, memory_order_release);   /* a dozing executor looks at it */
    if (accel_i_event_value(&q->done) != accel_i_event_value(&q->work))
        accel_i_cpu_unhelp(q);   /* batches left: the executor's, now */
}
/* A wait for s >= v: helps the queue that last submitted a signal command on s (help), else has its
   executor run it at once (accel_i_cpu_unhelp). The queue is read under the device's object lock, which
   its destroy takes to clear it, and kept by a reference. */
static void accel_i_cpu_help_signal(accel_signal* s, uint64_t v, bool help) {
    accel_i_cpu_signal* cs = (accel_i_cpu_signal*)s;
    accel_device* dev = s->obj.device;
    accel_i_cpu_queue* q;
    accel_i_cpu_help h;
    uint64_t cur = accel_i_host_signal_value(s);
    h.s = s;
    h.v = v;
    if (accel_i_failed(cur) || cur >= v || !atomic_load_explicit(&cs->setter, memory_order_relaxed) ||
        (!help && !atomic_load_explicit(&cs->helped, memory_order_relaxed)))
        return;   /* nothing to help with (or no helped queue to wake): no lock, no reference */
    if (help && !atomic_load_explicit(&cs->helped, memory_order_relaxed))
        atomic_store_explicit(&cs->helped, 1u, memory_order_relaxed);
    accel_i_spin_lock(&dev->objects_lock);
    q = (accel_i_cpu_queue*)(uintptr_t)atomic_load_explicit(&cs->setter, memory_order_relaxed);
    if (q && !accel_i_try_retain(&q->base.obj)) q = NULL;
    accel_i_spin_unlock(&dev->objects_lock);
    if (!q) return;
    if (help) accel_i_cpu_help_queue(q, &h);
    else accel_i_cpu_unhelp(q);
    accel_i_release(q);
}
/* Submit: s's setter is q, for the waits that help. Stored only when it changes. */
static void accel_i_cpu_note_setters(accel_i_cpu_queue* q, const accel_i_batch* b) {
    uint64_t me = (uint64_t)(uintptr_t)q;
    for (uint32_t i = 0; i < b->count; i++) {
        accel_signal* s = b->cmds[i].u.sig.signal;
        accel_i_cpu_signal* cs = (accel_i_cpu_signal*)s;
        if (b->cmds[i].kind != ACCEL_I_CMD_SIGNAL || s->obj.device != q->base.obj.device) continue;
        if (atomic_load_explicit(&cs->setter, memory_order_relaxed) != me)
            atomic_store_explicit(&cs->setter, me, memory_order_relaxed);
    }
}
/* Destroy: no signal names q as its setter any more (under the object lock, see above). */
static void accel_i_cpu_forget_setters(accel_i_cpu_queue* q) {
    accel_device* dev = q->base.obj.device;
    uint64_t me = (uint64_t)(uintptr_t)q;
    accel_i_spin_lock(&dev->objects_lock);
    for (accel_i_object* o = dev->objects; o; o = o->next) {
        accel_i_cpu_signal* cs = (accel_i_cpu_signal*)(void*)o;
        if (o->kind == ACCEL_I_SIGNAL && atomic_load_explicit(&cs->setter, memory_order_relaxed) == me)
            atomic_store_explicit(&cs->setter, 0u, memory_order_relaxed);
    }
    accel_i_spin_unlock(&dev->objects_lock);
}
/* The CPU backend's signal_wait_many: helps first where it may (one signal, no timeout); a wait that
   may not help (a poll too) has the executors run the work at once. */
static accel_result accel_i_cpu_signal_wait(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                            uint64_t timeout_ns, uint32_t* first) {
    bool help = n == 1 && timeout_ns == ACCEL_WAIT_FOREVER && !accel_i_cpu_no_help;
    for (uint32_t i = 0; i < n; i++)
        if (accel_i_is_cpu_signal(s[i])) accel_i_cpu_help_signal(s[i], v[i], help);
    return accel_i_host_signal_wait(s, v, n, all, timeout_ns, first);
}
#else
/* ==== cpu: no-threads ==== */
/* Waits run parked work already (accel_i_cpu_ready): nothing to help. A wait inside a host call (the
   device's loop runs it) first runs the queues that became ready meanwhile (see accel_i_cpu_drain). */
static void accel_i_cpu_drain(accel_i_cpu_device* dev);
static void accel_i_cpu_drain_one(accel_i_cpu_device* dev);
/* Inside a kernel of dev (its one lane taken)? Then none of dev's queues may run here: an exec would wait
   for ever for the lane that kernel holds. */
static bool accel_i_cpu_in_kernel(accel_i_cpu_device* dev) {
    return atomic_load_explicit(&dev->lanes[0].taken, memory_order_relaxed) != 0;
}
/* What a nested drain runs until (accel_i_cpu_drain_loops): a wait's values reached, a queue run. */
typedef struct accel_i_cpu_until {
    accel_signal* const* s;
    const uint64_t* v;
    uint32_t n;
    bool all;
    uint32_t* first;
    accel_i_cpu_queue* q;          /* else: until q is neither parked nor ready */
} accel_i_cpu_until;
static bool accel_i_cpu_drain_loops(const accel_i_cpu_until* until);
static accel_result accel_i_cpu_signal_wait(accel_signal* const* s, const uint64_t* v, uint32_t n, bool all,
                                            uint64_t timeout_ns, uint32_t* first) {
    /* only a wait that cannot end yet runs other work, and only until it can end: a queue run nested
       inside it whose own wait finds its releaser behind it (this frame) gets DEADLOCK */
    accel_i_cpu_until until = { s, v, n, all, first, NULL };
    accel_i_cpu_drain_loops(&until);
    return accel_i_host_signal_wait(s, v, n, all, timeout_ns, first);
}
/* Runs the queue's batches until one parks (its signal will call back). A host call or kernel it runs
   may destroy q or its device (inline, through a signal it sets): the pump holds a reference to q, and
   so to its device, and the destroy only drops the handle; the last release, here, tears q down once
   its batches ran or parked (accel_i_cpu_queue_destroy drops the parked ones). No reference is taken
   in that teardown itself (none is left to take): its own pump is the last frame that uses q. */
static void accel_i_cpu_pump(accel_i_cpu_queue* q) {
    accel_i_cpu_device* dev = accel_i_cpu_dev(q->base.obj.device);   /* lives while q does */
    bool held;
    if (q->pumping) return;   /* a host call of q recorded on q or waits for it: misuse, never a re-entry */
    q->pumping = true;
    dev->pumps++;
    held = accel_i_try_retain(&q->base.obj);
    while (!q->parked_on && q->fifo.head) {
        if (!accel_i_cpu_run_batch(q, q->fifo.head)) break;
        accel_i_cpu_batch_done(q, accel_i_fifo_pop(&q->fifo));
    }
    q->pumping = false;
    if (--dev->pumps == 0 && dev->orphans_later) {   /* what the rest of the batches signalled counts */
        dev->orphans_later = false;
        accel_i_fail_orphans(&dev->base);
    }
    if (held) accel_i_release(q);
}
/* accel_device_destroy from a batch of dev's own (a host call, or a signal its kernel set): the rest of
   that batch may still signal what other devices wait for, so the orphans fail after it (true). */
static bool accel_i_cpu_orphans_later(accel_device* base) {
    accel_i_cpu_device* dev = accel_i_cpu_dev(base);
    if (base->backend != accel_cpu_backend() || dev->pumps == 0) return false;
    dev->orphans_later = true;
    return true;
}
/* A queue that may run (submitted to, or its parked batch unblocked) goes on its device's ready list,
   and one loop per device runs the list. So a chain of queues that unblock one another runs in that
   loop, not in nested calls one deep per queue (20,000 queues overflow the stack), and a kernel that
   sets a signal releasing another queue of its device does not run that queue's exec inside itself,
   where it would wait forever for the device's one lane, which the kernel holds: the loop takes the
   queue once the kernel's batch is done or parked. Nesting only goes as deep as the number of devices
   a chain crosses. */
static void accel_i_cpu_enlist(accel_i_cpu_queue* q) {
    accel_i_cpu_device* dev = accel_i_cpu_dev(q->base.obj.device);
    if (q->ready) return;
    q->ready = true;
    q->ready_next = NULL;
    if (dev->ready_tail) dev->ready_tail->ready_next = q; else dev->ready_head = q;
    dev->ready_tail = q;
}
/* The devices whose loops are on the stack, the innermost first: a wait, finish or destroy inside a host
   call runs their ready queues (accel_i_cpu_drain_loops), since one of them may be what the call waits
   for. The one thread of a no-threads build is the only user: the list is frames of its stack. */
static accel_i_cpu_device* accel_i_cpu_loops;
/* Runs dev's loop, unless one is running already (it takes what was added to the list). The loop holds
   dev: a pump's release may be the last of dev's queues (a host call destroyed dev meanwhile). A loop
   of a nested drain runs one queue (accel_i_cpu_drain_loops). */
static void accel_i_cpu_loop_run(accel_i_cpu_device* dev, void (*drain)(accel_i_cpu_device*)) {
    if (dev->draining) return;
    accel_i_device_retain(&dev->base);
    dev->draining = true;
    dev->loop_next = accel_i_cpu_loops;
    accel_i_cpu_loops = dev;
    drain(dev);
    accel_i_cpu_loops = dev->loop_next;
    dev->draining = false;
    accel_i_device_release(&dev->base);
}
static void accel_i_cpu_loop(accel_i_cpu_device* dev) { accel_i_cpu_loop_run(dev, accel_i_cpu_drain); }
static void accel_i_cpu_ready(accel_i_cpu_queue* q) {
    accel_i_cpu_enlist(q);
    accel_i_cpu_loop(accel_i_cpu_dev(q->base.obj.device));
}
/* Runs the first queue of the device's ready list (a nested drain's step). */
static void accel_i_cpu_drain_one(accel_i_cpu_device* dev) {
    accel_i_cpu_queue* q = dev->ready_head;
    if ((dev->ready_head = q->ready_next) == NULL) dev->ready_tail = NULL;
    q->ready = false;
    accel_i_cpu_pump(q);
}
/* Runs the device's ready list: its loop, and a wait inside a host call the loop runs (a queue the host
   call submitted to or released goes on, as accel_queue_finish's settle runs it). */
static void accel_i_cpu_drain(accel_i_cpu_device* dev) {
    while (dev->ready_head) accel_i_cpu_drain_one(dev);
}
static accel_i_cpu_device* accel_i_cpu_unparked;   /* see accel_i_cpu_unpark */
static bool accel_i_cpu_until_met(const accel_i_cpu_until* u) {
    if (u->q) return !u->q->parked_on && !u->q->ready;   /* ran (or mid-run up the stack: no help) */
    return accel_i_wait_check(u->s, u->v, u->n, u->all, u->first) != ACCEL_TIMEOUT;
}
/* The next device whose ready queue a nested drain runs: the waited signals' own devices first, then
   the loops on the stack (the innermost first), then the devices a raise up the stack woke and has
   not looped yet (accel_i_cpu_unparked); never one inside a kernel (the lane it holds). */
static accel_i_cpu_device* accel_i_cpu_drain_next(const accel_i_cpu_until* u) {
    accel_i_cpu_device* d;
    for (uint32_t i = 0; i < u->n; i++) {
        d = accel_i_is_cpu_signal(u->s[i]) ? accel_i_cpu_dev(u->s[i]->obj.device) : NULL;
        if (d && d->ready_head && !accel_i_cpu_in_kernel(d)) return d;
    }
    for (d = accel_i_cpu_loops; d; d = d->loop_next)
        if (d->ready_head && !accel_i_cpu_in_kernel(d)) return d;
    for (d = accel_i_cpu_unparked; d; d = d->unpark_next)
        if (d->ready_head && !d->draining && !accel_i_cpu_in_kernel(d)) return d;
    return NULL;
}
/* Inside a host call (a loop runs it), before a wait, finish or destroy that cannot end yet concludes
   that nothing can end it: runs ready queues one at a time (accel_i_cpu_drain_next) until what it
   waits for is met (`until`) or none is left. A queue the call's own device runs later may set what
   another device waits for. Returns whether it ran any. Each queue it runs may nest another such
   wait one level deeper, so it runs no more than the wait needs: a host call run here whose wait
   needs this frame to return first gets DEADLOCK, even where a queue run before it would have
   satisfied this wait. */
static bool accel_i_cpu_drain_loops(const accel_i_cpu_until* until) {
    bool any = false;
    accel_i_cpu_device* d;
    while (!accel_i_cpu_until_met(until) && (d = accel_i_cpu_drain_next(until)) != NULL) {
        if (d->draining) accel_i_cpu_drain_one(d);   /* its loop is up the stack */
        else accel_i_cpu_loop_run(d, accel_i_cpu_drain_one);
        any = true;
    }
    return any;
}
/* A raise of ev: the queues parked on it (one-shot waiters) all go on their devices' ready lists first,
   and only then do those devices' loops run. A loop runs host calls, which may destroy a queue or wait
   for its work: every woken queue must be where the destroy (accel_i_cpu_unready) and the wait's drain
   find it by then, not on a list that only this raise holds (a freed queue's waiter, or a DEADLOCK for
   work that could run, depending on which queue parked first). A woken queue that parks on ev again
   registers anew, after the list was detached. The devices to run are referenced (a host call may
   destroy one) and pushed on accel_i_cpu_unparked (through `unpark_next`), a stack of every raise's
   devices still to run: a wait inside one of their host calls runs the others' ready queues too
   (accel_i_cpu_drain_loops: one may set what it waits for, with no loop of its on the stack yet).
   Each raise pops its own. */
static void accel_i_cpu_unpark(accel_i_event* ev) {
    accel_i_cpu_device *below = accel_i_cpu_unparked, *dev;
    accel_i_waiter* w = ev->waiters;
    ev->waiters = NULL;
    for (accel_i_waiter* next; w; w = next) {
        accel_i_cpu_queue* q =
            (accel_i_cpu_queue*)(void*)((unsigned char*)w - offsetof(accel_i_cpu_queue, park));
        next = w->next;
        atomic_fetch_sub(&ev->sleepers, 1u);
        w->next = NULL;
        q->parked_on = NULL;
        accel_i_cpu_enlist(q);
        dev = accel_i_cpu_dev(q->base.obj.device);
        if (!dev->draining && !dev->unpark) {
            dev->unpark = true;
            dev->unpark_next = accel_i_cpu_unparked;
            accel_i_cpu_unparked = dev;
            accel_i_device_retain(&dev->base);
        }
    }
    while ((dev = accel_i_cpu_unparked) != below) {
        accel_i_cpu_unparked = dev->unpark_next;
        dev->unpark = false;
        accel_i_cpu_loop(dev);
        accel_i_device_release(&dev->base);
    }
}
/* Runs what of q can run now, here: a finish or destroy of q from inside another queue's host call
   (which the device's loop is running, so q waits on the ready list behind it). Not from inside a
   kernel of q's device: q's exec would wait for ever for the device's one lane, which that kernel
   holds; q stays on the ready list (the finish reports DEADLOCK; the loop runs q after the kernel). */
/* The loops up the stack may release q (parked, or ready behind its device's lane), and then run it:
   a nested drain until q is neither. Returns whether it ran any queue. */
static bool accel_i_cpu_settle_drain(accel_i_cpu_queue* q) {
    accel_i_cpu_until until = { NULL, NULL, 0, false, NULL, q };
    return accel_i_cpu_drain_loops(&until);
}
static void accel_i_cpu_settle(accel_i_cpu_queue* q) {
    accel_i_cpu_device* dev = accel_i_cpu_dev(q->base.obj.device);
    if (q->ready && !accel_i_cpu_in_kernel(dev)) accel_i_cpu_pump(q);   /* the loop's later pump: a no-op */
    accel_i_cpu_settle_drain(q);
}
/* Takes q off its device's ready list (it is being destroyed). */
static void accel_i_cpu_unready(accel_i_cpu_queue* q) {
    accel_i_cpu_device* dev = accel_i_cpu_dev(q->base.obj.device);
    accel_i_cpu_queue* prev = NULL;
    if (!q->ready) return;
    for (accel_i_cpu_queue* at = dev->ready_head; at && at != q; at = at->ready_next) prev = at;
    if (prev) prev->ready_next = q->ready_next; else dev->ready_head = q->ready_next;
    if (dev->ready_tail == q) dev->ready_tail = prev;
    q->ready = false;
}
/* accel_device_destroy waits for all queues before it releases any, since the work that still runs
   (host calls) may use every object of the device: what can run runs, then, while a queue is parked
   on a signal that nothing can set now, its parked batch is dropped (its signals fail, as a destroy of
   the queue would fail them) and what that releases runs (the queue's later batches too), until no
   queue is parked. From a host call that dev's loop runs, the queues run in a drain (as in a wait's);
   not from inside a kernel of dev (a queue's exec would wait for ever for the lane the kernel holds):
   then each queue's teardown settles it alone. */
static void accel_i_cpu_run_ready(accel_i_cpu_device* dev) {
    if (dev->draining) accel_i_cpu_drain(dev); else accel_i_cpu_loop(dev);
}
static void accel_i_cpu_device_settle(accel_device* base) {
    accel_i_cpu_device* dev = accel_i_cpu_dev(base);
    accel_i_object* o;
    if (base->backend != accel_cpu_backend()) return;
    if (accel_i_cpu_in_kernel(dev)) return;
    accel_i_cpu_run_ready(dev);
    for (;;) {
        accel_i_cpu_queue* q;
        accel_i_batch* b;
        accel_i_spin_lock(&base->objects_lock);
        for (o = base->objects; o; o = o->next) {
            q = (accel_i_cpu_queue*)(void*)o;
            if (o->kind == ACCEL_I_QUEUE && q->parked_on && accel_i_try_retain(o)) break;
        }
        accel_i_spin_unlock(&base->objects_lock);
        if (!o) return;
        q = (accel_i_cpu_queue*)(void*)o;
        if (accel_i_cpu_settle_drain(q)) {   /* a loop up the stack may release it: look again */
            accel_i_release(q);
            continue;
        }
        accel_i_waiter_remove(q->parked_on, &q->park);
        q->parked_on = NULL;
        accel_i_log(base, ACCEL_LOG_WARN,
                    "accel_device_destroy: dropping a batch of queue %p%s%s%s parked on a signal nothing "
                    "can set; its signals fail", (void*)q, ACCEL_I_LABEL(o));
        b = accel_i_fifo_pop(&q->fifo);
        accel_i_fail_rest(b, b->pc, accel_i_failed_value(ACCEL_ERROR_DEADLOCK));
        accel_i_cpu_batch_done(q, b);
        accel_i_cpu_enlist(q);
        accel_i_cpu_run_ready(dev);
        accel_i_release(q);
    }
}
/* Destroying a queue whose batches can never run: drop them and fail what they would signal. */
static void accel_i_cpu_drop_parked(accel_i_cpu_queue* q) {
    accel_i_batch* b;
    if (q->parked_on) { accel_i_waiter_remove(q->parked_on, &q->park); q->parked_on = NULL; }
    if (q->fifo.head)
        accel_i_log(q->base.obj.device, ACCEL_LOG_WARN,
                    "accel_queue_destroy: dropping batches parked on signals nothing can set;"
                    " their signals fail");
    while ((b = accel_i_fifo_pop(&q->fifo)) != NULL) {
        accel_i_fail_rest(b, b->pc, accel_i_failed_value(ACCEL_ERROR_DEADLOCK));
        accel_i_cpu_batch_done(q, b);
    }
}
#endif

static accel_result accel_i_cpu_queue_submit(accel_queue* base, accel_i_batch* b) {
    accel_i_cpu_queue* q = (accel_i_cpu_queue*)base;
    accel_i_batch_accepted(base, b);
#if !defined(ACCEL_NO_THREADS)
    accel_i_cpu_note_setters(q, b);   /* before the push: from then on b is the executor's */
#endif
    accel_i_fifo_push(&q->fifo, b);
    accel_i_event_add(&q->work, 1);
#if defined(ACCEL_NO_THREADS)
    accel_i_cpu_ready(q);
#endif
    return ACCEL_OK;
}

static accel_result accel_i_cpu_queue_wait_idle(accel_queue* base, uint64_t timeout_ns) {
    accel_i_cpu_queue* q = (accel_i_cpu_queue*)base;
    uint64_t submitted = accel_i_event_value(&q->work);
#if defined(ACCEL_NO_THREADS)
    if (timeout_ns != 0) accel_i_cpu_settle(q);
    if (accel_i_event_value(&q->done) >= submitted) return ACCEL_OK;
    if (timeout_ns == 0) return ACCEL_TIMEOUT;
    accel_i_log(base->obj.device, ACCEL_LOG_WARN,
                "accel_queue_finish: a batch waits on a signal that nothing submitted can reach: deadlock");
    return ACCEL_ERROR_DEADLOCK;
#else
    if (accel_i_event_value(&q->done) >= submitted) return ACCEL_OK;
    if (timeout_ns == 0) { accel_i_cpu_unhelp(q); return ACCEL_TIMEOUT; }
    if (timeout_ns == ACCEL_WAIT_FOREVER && !accel_i_cpu_no_help) {   /* see "cpu: waits that help" */
        accel_i_cpu_help h;
        h.s = NULL;
        h.v = submitted;
        accel_i_cpu_help_queue(q, &h);
    } else accel_i_cpu_unhelp(q);
    if (accel_i_event_wait(&q->done, submitted, accel_i_deadline(timeout_ns))) return ACCEL_OK;
    return ACCEL_TIMEOUT;
#endif
}

/* ==== cpu: queues ==== */
/* Appends to out what one queue is blocked on (the executor's published wait; without threads, the
   parked batch's wait command) and how many of its batches are unfinished. */
static size_t accel_i_cpu_queue_describe(accel_queue* base, char* out, size_t cap) {
    accel_i_cpu_queue* q = (accel_i_cpu_queue*)base;
    uint64_t pending = accel_i_event_value(&q->work) - accel_i_event_value(&q->done);
#if defined(ACCEL_NO_THREADS)
    accel_signal* s = NULL;
    uint64_t v = 0;
    size_t len;
    accel_i_spin_lock(&q->fifo.lock);
    if (q->parked_on && q->fifo.head && q->fifo.head->pc < q->fifo.head->count &&
        q->fifo.head->cmds[q->fifo.head->pc].kind == ACCEL_I_CMD_WAIT) {
        s = q->fifo.head->cmds[q->fifo.head->pc].u.sig.signal;
        v = q->fifo.head->cmds[q->fifo.head->pc].u.sig.value;
    }
    len = accel_i_describe_queue(out, cap, base, pending, s, v);
    accel_i_spin_unlock(&q->fifo.lock);
    return len;
#else
    return accel_i_blocked_describe(&q->blocked, out, cap, base, pending);
#endif
}

static void accel_i_cpu_queue_free(accel_i_cpu_queue* q) {
    accel_device* dev = q->base.obj.device;
#if !defined(ACCEL_NO_THREADS)
    accel_i_event_destroy(&q->turned);
#endif
    accel_i_event_destroy(&q->work);
    accel_i_event_destroy(&q->done);
    accel_i_dev_free(dev, q, sizeof *q);
}

static accel_result accel_i_cpu_queue_create(accel_device* dev, accel_queue_type type, accel_queue** out) {
    accel_i_cpu_queue* q = (accel_i_cpu_queue*)accel_i_dev_alloc(dev, sizeof *q);
    if (!q) return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY, "accel_queue_create: out of host memory");
    memset((void*)q, 0, sizeof *q);
    q->base.obj.device = dev;
    accel_i_fifo_init(&q->fifo);
    if (!accel_i_event_init(&q->work, 0)) {
        accel_i_dev_free(dev, q, sizeof *q);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    if (!accel_i_event_init(&q->done, 0)) {
        accel_i_event_destroy(&q->work);
        accel_i_dev_free(dev, q, sizeof *q);
        return ACCEL_ERROR_OUT_OF_MEMORY;
    }
    q->lane_hint = atomic_fetch_add(&accel_i_cpu_dev(dev)->next_hint, 1u);
#if !defined(ACCEL_NO_THREADS)
    {
        accel_result r;
        atomic_init(&q->stop, 0u);
        atomic_init(&q->blocked.lock, 0u);
        atomic_init(&q->turn, 0u);
        atomic_init(&q->helped, 0u);
        if (!accel_i_event_init(&q->turned, 0)) {
            accel_i_event_destroy(&q->work);
            accel_i_event_destroy(&q->done);
            accel_i_dev_free(dev, q, sizeof *q);
            return ACCEL_ERROR_OUT_OF_MEMORY;
        }
        accel_i_cpu_device* cd = accel_i_cpu_dev(dev);
        q->own.moves = ACCEL_CPU_MOVE_OFF != 0;
        if (!cd->moves) {   /* a lane per allowed CPU: free CPUs are those of sleeping workers */
            q->own.idle_sleepers = &cd->gen.inside;   /* a worker woken and not running yet counts */
            q->own.idle_need = cd->lanes_n - 1u;
        }
        r = accel_i_thread_start(&q->thread, accel_i_cpu_executor_main, q);
        if (r != ACCEL_OK) {
            accel_i_cpu_queue_free(q);
            return accel_i_fail(dev, r, "accel_queue_create: starting the executor thread failed");
        }
    }
#endif
    accel_i_queue_init(&q->base, dev, type);
    *out = &q->base;
    return ACCEL_OK;
}

static void accel_i_cpu_queue_destroy(accel_queue* base) {
    accel_i_cpu_queue* q = (accel_i_cpu_queue*)base;
#if defined(ACCEL_NO_THREADS)
    accel_i_cpu_settle(q);   /* what can run runs (a destroy from another queue's host call) */
    accel_i_cpu_unready(q);
    accel_i_cpu_drop_parked(q);
#else
    accel_i_cpu_queue_wait_idle(base, ACCEL_WAIT_FOREVER);
    atomic_store(&q->stop, 1u);
    accel_i_event_add(&q->work, 1);
    accel_i_mutex_lock(&q->turned.lock);   /* a dozing executor (accel_i_cpu_doze) */
    accel_i_cond_broadcast(&q->turned.cond);
    accel_i_mutex_unlock(&q->turned.lock);
    accel_i_thread_join(&q->thread);
    accel_i_cpu_forget_setters(q);
#endif
    accel_i_queue_fini(base);
    accel_i_cpu_queue_free(q);
}

/* accel_device_recover: nothing native to make anew. The core made the queues stale and failed the
   signals, so the executors start no command of the old generation (accel_i_cpu_run_batch); the pool's
   threads and lanes serve both generations. */
static accel_result accel_i_cpu_device_recover(accel_device* dev) {
    (void)dev;
    return ACCEL_OK;
}

/* ==== cpu: backend table ==== */
/* Slots in the order of struct accel_backend (positional: designated initialisers need C++20). */
static const accel_backend accel_i_cpu_backend_table = {
    "cpu",                              /* name */
    true,                               /* shares_host_memory */
    true,                               /* fills_any_byte */
    false,                              /* pinned_host_buffers: plain host memory */
    accel_i_cpu_device_count,           /* device_count */
    accel_i_cpu_device_create,          /* device_create */
    accel_i_cpu_device_destroy,         /* device_destroy */
    accel_i_cpu_buffer_create,          /* buffer_create */
    accel_i_cpu_buffer_free,            /* buffer_free */
    accel_i_cpu_buffer_io,              /* buffer_io */
    accel_i_cpu_program_create,         /* program_create */
    accel_i_cpu_program_free,           /* program_free */
    accel_i_cpu_signal_create,          /* signal_create */
    accel_i_cpu_signal_free,            /* signal_free */
    accel_i_host_signal_value,          /* signal_value */
    accel_i_host_signal_raise,          /* signal_raise */
    accel_i_cpu_signal_wait,            /* signal_wait_many: helps (see "cpu: waits that help") */
    accel_i_cpu_queue_create,           /* queue_create */
    accel_i_cpu_queue_destroy,          /* queue_destroy */
    accel_i_cpu_queue_submit,           /* queue_submit */
    accel_i_cpu_queue_wait_idle,        /* queue_wait_idle */
    accel_i_cpu_queue_describe,         /* queue_describe */
    NULL,                               /* walk: the executor is the device (no batch walk) */
    accel_i_cpu_commands_build,         /* commands_build */
    accel_i_cpu_commands_free,          /* commands_free */
    accel_i_cpu_device_recover,         /* device_recover */
    false,                              /* recover_whole: each CPU device recovers alone */
    NULL,                               /* peer_copy: the executor copies any buffer itself */
    NULL,                               /* peer_waits: the executor is the device (see peer_info) */
    NULL,                               /* peer_frees: the executor copies where its turn comes */
    NULL,                               /* share: buffers are host memory */
    NULL                                /* device_close */
};
ACCEL_API const accel_backend* accel_cpu_backend(void) { return &accel_i_cpu_backend_table; }

/* ==== debug: hang reports (ACCEL_NO_DEBUG compiles this out) ==== */
#if !defined(ACCEL_NO_DEBUG)
/* With debug on, submit records in each signal the highest value a submitted batch will signal it to
   (`promised`; it never goes down, and a dropped batch fails the signal anyway). A host wait for more
   than both the current and the promised value can only end through accel_signal_set, work submitted
   later, or the timeout: worth a warning, since it is the usual shape of a hang. */
static void accel_i_debug_promise(const accel_i_batch* b) {
    for (uint32_t i = 0; i < b->count; i++) {
        const accel_i_cmd* c = &b->cmds[i];
        if (c->kind == ACCEL_I_CMD_SIGNAL) accel_i_atomic_max(&c->u.sig.signal->promised, c->u.sig.value);
    }
}
/* kept out of line: the hot path only tests dev->debug (and inlining it trips a gcc 12 -O2
   -Wstringop-overflow false positive on the atomic load) */
#if defined(__GNUC__)
#  define ACCEL_I_COLD __attribute__((noinline, cold))
#else
#  define ACCEL_I_COLD
#endif
/* Debug devices: remembers (the last four) signal commands of the batch being recorded, for
   accel_i_debug_unsubmitted; a submit (or a discarded batch) forgets them (s NULL). */
static void accel_i_debug_recorded(accel_queue* q, accel_signal* s, uint64_t v) {
    accel_i_spin_lock(&q->unsubmitted_lock);
    if (!s) q->unsubmitted_n = 0;
    else {
        q->unsubmitted_s[q->unsubmitted_n % 4] = s;
        q->unsubmitted_v[q->unsubmitted_n % 4] = v;
        q->unsubmitted_n++;
    }
    accel_i_spin_unlock(&q->unsubmitted_lock);
}
/* The forgotten submit: names a queue of s's device with a recorded, unsubmitted signal of s to >= v
   (out: "" when none). Any thread: reads what accel_i_debug_recorded kept, never the recordings. */
static void accel_i_debug_unsubmitted(accel_signal* s, uint64_t v, char* out, size_t cap) {
    accel_device* dev = s->obj.device;
    out[0] = '\0';
    accel_i_spin_lock(&dev->objects_lock);   /* a queue is unlinked before it is freed */
    for (accel_i_object* o = dev->objects; o && !out[0]; o = o->next) {
        accel_queue* q = (accel_queue*)(void*)o;
        if (o->kind != ACCEL_I_QUEUE) continue;
        accel_i_spin_lock(&q->unsubmitted_lock);
        for (uint32_t i = 0; i < q->unsubmitted_n && i < 4 && !out[0]; i++)
            if (q->unsubmitted_s[i] == s && q->unsubmitted_v[i] >= v)
                accel_i_cut(out, cap, snprintf(out, cap, "queue %p%s%s%s holds an unsubmitted "
                                               "accel_queue_signal(%llu) on it (forgotten "
                                               "accel_queue_submit?)",
                               (void*)o, ACCEL_I_LABEL(o), (unsigned long long)q->unsubmitted_v[i]));
        accel_i_spin_unlock(&q->unsubmitted_lock);
    }
    accel_i_spin_unlock(&dev->objects_lock);
}
static ACCEL_I_COLD void accel_i_debug_unreachable(accel_signal* const* s, const uint64_t* v, uint32_t n,
                                                   bool all, const char* fn) {
    uint32_t pending = 0, unreachable = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t cur = accel_i_signal_value(s[i]);
        if (accel_i_failed(cur) || cur >= v[i]) { if (!all) return; continue; }
        pending++;
        if (atomic_load(&s[i]->promised) < v[i]) unreachable++;
    }
    if (unreachable == 0 || (!all && unreachable < pending)) return;
    for (uint32_t i = 0, logged = 0; i < n; i++) {   /* the first 8 of them, then a count */
        uint64_t cur = accel_i_signal_value(s[i]), promised = atomic_load(&s[i]->promised);
        if (accel_i_failed(cur) || cur >= v[i] || promised >= v[i]) continue;
        if (logged++ == 8) {
            accel_i_log(s[i]->obj.device, ACCEL_LOG_WARN,
                        "%s: nothing submitted can reach %u more of the signals waited for",
                        fn, unreachable > 8 ? unreachable - 8 : 1u);
            return;
        }
        char held[ACCEL_I_WHY];
        accel_i_debug_unsubmitted(s[i], v[i], held, sizeof held);
        if (held[0])
            accel_i_log(s[i]->obj.device, ACCEL_LOG_WARN,
                        "%s: nothing submitted can reach signal %p%s%s%s >= %llu "
                        "(it is at %llu): %s",
                        fn, (void*)s[i], ACCEL_I_LABEL(&s[i]->obj), (unsigned long long)v[i],
                        (unsigned long long)cur, held);
        else
            accel_i_log(s[i]->obj.device, ACCEL_LOG_WARN,
                        "%s: nothing submitted can reach signal %p%s%s%s >= %llu: it is at %llu and the "
                        "highest value submitted work signals it to is %llu; only accel_signal_set or "
                        "later work can end this wait",
                        fn, (void*)s[i], ACCEL_I_LABEL(&s[i]->obj), (unsigned long long)v[i],
                        (unsigned long long)cur, (unsigned long long)promised);
    }
}

/* A host wait on `dev` timed out (r: ACCEL_TIMEOUT) or deadlocked (ACCEL_ERROR_DEADLOCK, returned at
   once): log which queues are blocked on which (signal, value), as far as the backend describes its
   queues. The device's object list is held while reading: a queue is unlinked from it before it is freed. */
static ACCEL_I_COLD void accel_i_debug_hang(accel_device* dev, const char* what, accel_signal* const* s,
                                            const uint64_t* v, uint32_t n, uint64_t timeout_ns,
                                            accel_result r) {
    char blocked[ACCEL_I_WHY], ended[64];
    size_t used = 0;
    if (r == ACCEL_ERROR_DEADLOCK) snprintf(ended, sizeof ended, "deadlock");
    else snprintf(ended, sizeof ended, "gave up after %llu ns", (unsigned long long)timeout_ns);
    blocked[0] = '\0';
    if (!dev->backend->queue_describe)
        used = (size_t)snprintf(blocked, sizeof blocked, " (the %s backend does not describe its queues)",
                                dev->backend->name);
    accel_i_spin_lock(&dev->objects_lock);
    for (accel_i_object* o = dev->objects; dev->backend->queue_describe && o && used + 1 < sizeof blocked;
         o = o->next)
        if (o->kind == ACCEL_I_QUEUE)
            used += dev->backend->queue_describe((accel_queue*)(void*)o, blocked + used,
                                                 sizeof blocked - used);
    accel_i_spin_unlock(&dev->objects_lock);
    if (s)
        accel_i_log(dev, ACCEL_LOG_WARN,
                    "%s: %s waiting for signal %p%s%s%s >= %llu (it is at %llu)%s; blocked:%s",
                    what, ended, (void*)s[0], ACCEL_I_LABEL(&s[0]->obj), (unsigned long long)v[0],
                    (unsigned long long)accel_i_signal_value(s[0]), n > 1 ? " and others" : "",
                    used ? blocked : " no queue of this device");
    else
        accel_i_log(dev, ACCEL_LOG_WARN,
                    "%s: %s; blocked:%s", what, ended, used ? blocked : " no queue of this device");
}

#endif /* !ACCEL_NO_DEBUG */

/* ==== trace: the recorder (ACCEL_NO_TRACE compiles this out) ==== */
#if !defined(ACCEL_NO_TRACE)
/* The trace recorder, shared by every backend (the functions marked "kit" are for backends too).
   Chrome trace-event JSON: {"traceEvents":[...]} with complete spans ("X"), thread-scoped instants
   ("i"), flows ("s" and "f" with an id; "f" binds to the enclosing slice, "bp":"e") and thread names
   ("M"). Process 1 is the host (a track per host thread that calls accel), process 2 the device (a
   track per queue). Recording is cheap and formats nothing: an event keeps raw values (and a copy of
   the name: the object may be gone when it is written), and the writer expands it. Each queue records
   into a buffer of its own (its executor is the only writer, so no line of it moves between the
   executor's core and the host thread's) and the host threads into the device's; a full buffer is
   written out at once, so memory stays bounded: 4096 + 1024 per queue events of 120 bytes (and one
   copy of each name too long for an event). */
#define ACCEL_I_TRACE_HOST_EVENTS  4096u
#define ACCEL_I_TRACE_QUEUE_EVENTS 1024u
#define ACCEL_I_TRACE_HOST 0x80000000u   /* track bit: a host thread's track, else a queue's */

typedef enum accel_i_tev {
    ACCEL_I_TEV_NAME,     /* a track's name: label */
    ACCEL_I_TEV_SPAN,     /* "what label"; key: the name of arg a[0], NULL: no args */
    ACCEL_I_TEV_EXEC,     /* program label; a: global and local sizes, 2 per word; aux: buffers (top
                             bit: an indirect exec whose grid is not known here) */
    ACCEL_I_TEV_SIGNAL,   /* signal reached a[0]: the span "what <signal>" and the instant "<signal>" */
    ACCEL_I_TEV_WAIT,     /* the span "what <signal>" for a[0], and (a[2] != 0) a flow as FLOW's */
    ACCEL_I_TEV_FLOW      /* a flow with id a[2] from (from, a[1]) to the slice (track, t0 .. t1) */
} accel_i_tev;
typedef struct accel_i_trace_event {
    uint64_t t0, t1, a[3];            /* ns on the host clock */
    const char* what;                 /* static */
    const char* key;                  /* static */
    uint32_t track, from, aux;        /* aux: a signal's number ("#n" when unlabelled), EXEC's (above) */
    uint8_t ev;
    char label[40];                   /* the name, when it fits (else cut, at a character's start) */
    /* NULL, or the whole name when it does not fit (accel_i_trace_intern) */
    const char* name;
} accel_i_trace_event;
typedef struct accel_i_trace_buf {
    accel_i_a32 lock;                 /* spin: a few stores per event; the rare write-out under it */
    uint32_t count, cap, index;       /* index: flow ids are index << 40 | n */
    uint64_t flows;
    accel_i_a64 flushed;              /* when the last write-out ended (read without the lock) */
    accel_i_trace_event* events;
} accel_i_trace_buf;
struct accel_i_trace {
    FILE* file;
    struct accel_i_trace_path* path;  /* the file's name, claimed in this process (accel_i_trace_claim) */
    FILE* spill;                      /* full buffers, raw, until the device is destroyed (tmpfile); NULL:
                                         none could be made (or a write to it failed): written as JSON */
    accel_i_a32 file_lock;            /* the files, out, out_len and `written` */
    bool written;                     /* an event is in the file: a comma goes before the next */
    char* out;                        /* ACCEL_I_TRACE_OUT bytes of JSON on their way to the file */
    size_t out_len;
    accel_i_trace_buf host;           /* host threads' events (and a queue's whose buffer was refused) */
    accel_i_a32 queues, signals;      /* tracks and signal numbers handed out */
    accel_i_a64 host_named;           /* host threads 1..64 named so far (bits) */
    uint64_t* host_more;              /* host threads 65.. named so far (bits; under host.lock) */
    size_t host_more_words;
    accel_device* dev;                /* whose allocator the names below come from */
    accel_i_a32 names_lock;
    struct accel_i_trace_name** names;   /* ACCEL_I_TRACE_NAMES buckets, made at the first long name */
};

/* ---- writing ---- */
/* The writer formats into t->out (no stdio formatting: fprintf costs ~600 ns an event, 5x the
   dispatch it describes) and hands full blocks to fwrite. Under the file lock. */
#define ACCEL_I_TRACE_OUT 16384u
static void accel_i_trace_drain(accel_i_trace* t) {
    if (t->out_len) fwrite(t->out, 1, t->out_len, t->file);
    t->out_len = 0;
}
static void accel_i_trace_raw(accel_i_trace* t, const char* s, size_t n) {
    if (t->out_len + n > ACCEL_I_TRACE_OUT) accel_i_trace_drain(t);
    if (n > ACCEL_I_TRACE_OUT) { fwrite(s, 1, n, t->file); return; }
    memcpy(t->out + t->out_len, s, n);
    t->out_len += n;
}
static void accel_i_trace_put_s(accel_i_trace* t, const char* s) { accel_i_trace_raw(t, s, strlen(s)); }
static void accel_i_trace_put_u(accel_i_trace* t, uint64_t v) {
    char d[24];
    size_t n = sizeof d;
    do { d[--n] = (char)('0' + v % 10u); v /= 10u; } while (v);
    accel_i_trace_raw(t, d + n, sizeof d - n);
}
/* The length of the UTF-8 sequence at s (2 to 4), 0 when it is not one (JSON text must be UTF-8). */
static size_t accel_i_utf8_len(const unsigned char* s) {
    size_t n = s[0] >= 0xC2 && s[0] <= 0xDF ? 2
             : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
             : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    /* the second byte's range: no overlong form (E0, F0), no surrogate (ED), nothing past U+10FFFF (F4) */
    unsigned lo = s[0] == 0xE0 ? 0xA0u : s[0] == 0xF0 ? 0x90u : 0x80u;
    unsigned hi = s[0] == 0xED ? 0x9Fu : s[0] == 0xF4 ? 0x8Fu : 0xBFu;
    if (n && (s[1] < lo || s[1] > hi)) return 0;
    for (size_t i = 2; i < n; i++) if ((s[i] & 0xC0) != 0x80) return 0;
    return n;
}
static void accel_i_trace_str(accel_i_trace* t, const char* s) {   /* a JSON string body */
    while (*s) {
        unsigned char ch = (unsigned char)*s;
        size_t n = 1;
        char esc[8];
        if (ch == '"' || ch == '\\') { esc[0] = '\\'; esc[1] = (char)ch; accel_i_trace_raw(t, esc, 2); }
        else if (ch < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", ch); accel_i_trace_raw(t, esc, 6); }
        else if (ch < 0x80) accel_i_trace_raw(t, s, 1);
        else if ((n = accel_i_utf8_len((const unsigned char*)s)) != 0) accel_i_trace_raw(t, s, n);
        else { accel_i_trace_raw(t, "\\ufffd", 6); n = 1; }   /* not UTF-8: the replacement character */
        s += n;
    }
}
static void accel_i_trace_us(accel_i_trace* t, const char* key, uint64_t ns) {   /* ,"key":us.nnn exactly */
    char frac[4] = {
        '.', (char)('0' + ns / 100u % 10u), (char)('0' + ns / 10u % 10u), (char)('0' + ns % 10u)
    };
    accel_i_trace_put_s(t, key);
    accel_i_trace_put_u(t, ns / 1000u);
    accel_i_trace_raw(t, frac, 4);
}
static void accel_i_trace_pid_tid(accel_i_trace* t, uint32_t track) {
    accel_i_trace_put_s(t, (track & ACCEL_I_TRACE_HOST) ? ",\"pid\":1,\"tid\":" : ",\"pid\":2,\"tid\":");
    accel_i_trace_put_u(t, track & ~ACCEL_I_TRACE_HOST);
}
/* Opens one JSON event: {"name":"what label","cat":"accel","ph":"P","pid":..,"tid":..,"ts":t */
static void accel_i_trace_head(accel_i_trace* t, const char* what, const char* label, char ph, uint32_t track,
                               uint64_t ts) {
    char p[] = "\",\"cat\":\"accel\",\"ph\":\"?\"";
    accel_i_trace_put_s(t, t->written ? ",\n{\"name\":\"" : "{\"name\":\"");
    t->written = true;
    if (what) accel_i_trace_put_s(t, what);
    if (what && label[0]) accel_i_trace_raw(t, " ", 1);
    accel_i_trace_str(t, label);
    p[sizeof p - 3] = ph;
    accel_i_trace_raw(t, p, sizeof p - 1);
    accel_i_trace_pid_tid(t, track);
    accel_i_trace_us(t, ",\"ts\":", ts);
}
static void accel_i_trace_arg1(accel_i_trace* t, const char* key, uint64_t v) {   /* ,"args":{"key":v} */
    accel_i_trace_put_s(t, ",\"args\":{\"");
    accel_i_trace_put_s(t, key);
    accel_i_trace_put_s(t, "\":");
    accel_i_trace_put_u(t, v);
    accel_i_trace_raw(t, "}", 1);
}
/* The flow's end binds to the wait's span (t0, t1): at the moment the value was reached where that is
   inside it (the wait was released then), at its start when reached before the wait began, at its
   end when the clock is too coarse to tell (the mark reads later than the wait's end). */
static void accel_i_trace_flow_out(accel_i_trace* t, const accel_i_trace_event* e) {
    uint64_t at = e->a[1] > e->t0 ? e->a[1] : e->t0;
    if (at > e->t1) at = e->t1;
    accel_i_trace_head(t, "flow", "", 's', e->from, e->a[1]);
    accel_i_trace_put_s(t, ",\"id\":");
    accel_i_trace_put_u(t, e->a[2]);
    accel_i_trace_raw(t, "}", 1);
    accel_i_trace_head(t, "flow", "", 'f', e->track, at);
    accel_i_trace_put_s(t, ",\"id\":");
    accel_i_trace_put_u(t, e->a[2]);
    accel_i_trace_put_s(t, ",\"bp\":\"e\"}");
}
static void accel_i_trace_exec_out(accel_i_trace* t, const accel_i_trace_event* e, const char* name) {
    uint64_t groups = 1, items = 1;
    for (int d = 0; d < 3; d++) {   /* a: gx gy | gz lx | ly lz */
        uint64_t g = (e->a[d / 2] >> (32 * (d % 2))) & 0xffffffffu;
        uint64_t l = (e->a[1 + (d + 1) / 2] >> (32 * ((d + 1) % 2))) & 0xffffffffu;
        groups *= (g + l - 1) / l;
        items *= g;
    }
    accel_i_trace_head(t, name[0] ? NULL : "exec", name, 'X', e->track, e->t0);
    accel_i_trace_us(t, ",\"dur\":", e->t1 - e->t0);
    accel_i_trace_put_s(t, ",\"args\":{\"groups\":");
    if (e->aux >> 31) {
        accel_i_trace_put_s(t, "\"indirect\"");   /* read where it ran: not known here */
    } else {
        accel_i_trace_put_u(t, groups);
        accel_i_trace_put_s(t, ",\"invocations\":");
        accel_i_trace_put_u(t, items);
    }
    accel_i_trace_put_s(t, ",\"buffers\":");
    accel_i_trace_put_u(t, e->aux & 0x7fffffffu);
    accel_i_trace_put_s(t, "}}");
}
static void accel_i_trace_write(accel_i_trace* t, const accel_i_trace_event* e) {
    char sig[16];
    const char* name = e->name ? e->name : e->label;
    if ((e->ev == ACCEL_I_TEV_SIGNAL || e->ev == ACCEL_I_TEV_WAIT) && !name[0]) {
        snprintf(sig, sizeof sig, "#%u", (unsigned)e->aux);   /* an unlabelled signal */
        name = sig;
    }
    switch ((accel_i_tev)e->ev) {
    case ACCEL_I_TEV_NAME:
        accel_i_trace_put_s(t, t->written ? ",\n{\"name\":\"thread_name\",\"ph\":\"M\""
                                          : "{\"name\":\"thread_name\",\"ph\":\"M\"");
        t->written = true;
        accel_i_trace_pid_tid(t, e->track);
        accel_i_trace_put_s(t, ",\"args\":{\"name\":\"");
        accel_i_trace_str(t, name);
        accel_i_trace_put_s(t, "\"}}");
        return;
    case ACCEL_I_TEV_FLOW: accel_i_trace_flow_out(t, e); return;
    case ACCEL_I_TEV_EXEC: accel_i_trace_exec_out(t, e, name); return;
    default: break;
    }
    accel_i_trace_head(t, e->what, name, 'X', e->track, e->t0);
    accel_i_trace_us(t, ",\"dur\":", e->t1 - e->t0);
    if (e->key) accel_i_trace_arg1(t, e->key, e->a[0]);
    accel_i_trace_raw(t, "}", 1);
    if (e->ev == ACCEL_I_TEV_SIGNAL) {
        accel_i_trace_head(t, NULL, name, 'i', e->track, e->t0);
        accel_i_trace_put_s(t, ",\"s\":\"t\"");
        accel_i_trace_arg1(t, "value", e->a[0]);
        accel_i_trace_raw(t, "}", 1);
    }
    if (e->ev == ACCEL_I_TEV_WAIT && e->a[2]) accel_i_trace_flow_out(t, e);
}
/* Lock of b held: writes its events out: raw into the spill file (a copy, ~20 ns an event: formatting
   JSON costs ~250, and a full queue buffer would stall the queue for a quarter of a millisecond), else
   as JSON. A spill write that fails sends the rest, now and later, to the JSON file. */
static void accel_i_trace_flush(accel_i_trace* t, accel_i_trace_buf* b) {
    uint32_t done = 0;
    accel_i_spin_lock(&t->file_lock);
    if (t->spill) {
        done = (uint32_t)fwrite(b->events, sizeof *b->events, b->count, t->spill);
        if (done != b->count) { fclose(t->spill); t->spill = NULL; done = 0; }   /* what it held: lost */
    }
    for (uint32_t i = done; i < b->count; i++) accel_i_trace_write(t, &b->events[i]);
    accel_i_trace_drain(t);
    accel_i_spin_unlock(&t->file_lock);
    b->count = 0;
}
/* Device destroy: the spilled events, as JSON, read back through buf's memory. False when the spill
   cannot be read back. */
static bool accel_i_trace_unspill(accel_i_trace* t, accel_i_trace_buf* buf) {
    size_t n;
    bool ok;
    if (!t->spill) return true;
    ok = fflush(t->spill) == 0 && fseek(t->spill, 0, SEEK_SET) == 0;
    while (ok && (n = fread(buf->events, sizeof *buf->events, buf->cap, t->spill)) > 0)
        for (size_t i = 0; i < n; i++) accel_i_trace_write(t, &buf->events[i]);
    ok = ok && !ferror(t->spill);
    fclose(t->spill);
    t->spill = NULL;
    return ok;
}

/* ---- recording ---- */
/* Names too long for an event's copy (long program or queue labels): kept whole, once each, until the
   trace is written. NULL when out of memory (the event keeps its cut copy). */
typedef struct accel_i_trace_name {
    struct accel_i_trace_name* next;
    size_t bytes;
    char* s;
} accel_i_trace_name;
#define ACCEL_I_TRACE_NAMES 64u
static const char* accel_i_trace_intern(accel_i_trace* t, const char* s, size_t n) {
    uint32_t h = 2166136261u;   /* FNV-1a */
    accel_i_trace_name* p = NULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    accel_i_spin_lock(&t->names_lock);
    if (!t->names &&
        (t->names = (accel_i_trace_name**)accel_i_dev_alloc(t->dev, ACCEL_I_TRACE_NAMES * sizeof *t->names))
            != NULL)
        memset((void*)t->names, 0, ACCEL_I_TRACE_NAMES * sizeof *t->names);
    if (t->names) {
        accel_i_trace_name** at = &t->names[h % ACCEL_I_TRACE_NAMES];
        for (p = *at; p && strcmp(p->s, s) != 0; p = p->next) {}
        if (!p && (p = (accel_i_trace_name*)accel_i_dev_alloc(t->dev, sizeof *p + n + 1)) != NULL) {
            p->bytes = sizeof *p + n + 1;
            p->s = (char*)(void*)(p + 1);
            memcpy(p->s, s, n + 1);
            p->next = *at;
            *at = p;
        }
    }
    accel_i_spin_unlock(&t->names_lock);
    return p ? p->s : NULL;
}
static void accel_i_trace_names_free(accel_i_trace* t) {
    if (!t->names) return;
    for (uint32_t i = 0; i < ACCEL_I_TRACE_NAMES; i++)
        for (accel_i_trace_name* p = t->names[i], *next; p; p = next) {
            next = p->next;
            accel_i_dev_free(t->dev, p, p->bytes);
        }
    accel_i_dev_free(t->dev, t->names, ACCEL_I_TRACE_NAMES * sizeof *t->names);
}
/* Lock of b held: a new event, [t0, t1] on a track. A full b is written out first; a "trace flush" span
   right after the new event then shows what that cost, and b->flushed when it ended. */
static accel_i_trace_event* accel_i_trace_put(accel_i_trace* t, accel_i_trace_buf* b, accel_i_tev ev,
                                              uint32_t track, const char* what, const char* label,
                                              uint64_t t0, uint64_t t1) {
    accel_i_trace_event* e;
    accel_i_trace_event* flush = NULL;
    uint64_t f0 = 0;
    if (b->count == b->cap) {
        f0 = accel_i_now_ns();
        accel_i_trace_flush(t, b);
    }
    e = &b->events[b->count++];
    if (f0) {   /* after the event that found the buffer full, in the buffer's order too */
        flush = &b->events[b->count++];
        memset(flush, 0, sizeof *flush);
        flush->ev = ACCEL_I_TEV_SPAN; flush->track = track; flush->what = "trace flush";
        flush->t0 = f0 > t1 ? f0 : t1; flush->t1 = accel_i_now_ns();
        atomic_store_explicit(&b->flushed, flush->t1, memory_order_relaxed);
    }
    e->ev = (uint8_t)ev; e->track = track; e->what = what; e->key = NULL;
    e->t0 = t0; e->t1 = t1 > t0 ? t1 : t0;
    accel_i_copy_label(e->label, sizeof e->label, label);
    e->name = label && strlen(label) >= sizeof e->label ? accel_i_trace_intern(t, label, strlen(label))
                                                        : NULL;
    return e;
}
/* When what ended at t1 lets the next command start: after a write-out that came between. */
static uint64_t accel_i_trace_end(accel_i_trace_buf* b, uint64_t t1) {
    uint64_t f = atomic_load_explicit(&b->flushed, memory_order_relaxed);
    return f > t1 ? f : t1;
}

/* Host lock held: true the first time host thread n shows (its track is to be named then). Threads
   1..64 in one word, read without the lock too; later ones in words that grow (out of memory: the
   track stays unnamed). */
static bool accel_i_trace_host_first(accel_i_trace* t, uint32_t n) {
    uint64_t bit = (uint64_t)1 << ((n - 1) % 64u);
    size_t w;
    if (n <= 64) {
        uint64_t named = atomic_load_explicit(&t->host_named, memory_order_relaxed);
        atomic_store_explicit(&t->host_named, named | bit, memory_order_relaxed);
        return !(named & bit);
    }
    w = (n - 1) / 64u - 1u;
    if (w >= t->host_more_words) {
        size_t words = w + 1 > 2 * t->host_more_words ? w + 1 : 2 * t->host_more_words;
        uint64_t* more = (uint64_t*)accel_i_dev_alloc(t->dev, words * sizeof *more);
        if (!more) return false;
        memset((void*)more, 0, words * sizeof *more);
        if (t->host_more_words) memcpy(more, t->host_more, t->host_more_words * sizeof *more);
        accel_i_dev_free(t->dev, t->host_more, t->host_more_words * sizeof *more);
        t->host_more = more;
        t->host_more_words = words;
    }
    if (t->host_more[w] & bit) return false;
    t->host_more[w] |= bit;
    return true;
}
/* kit: the calling host thread's track (named in the trace the first time it shows). */
static uint32_t accel_i_trace_host(accel_device* dev) {
    accel_i_trace* t = dev->trace;
    uint32_t n = accel_i_host_thread();
    if (n > 64 || !(atomic_load_explicit(&t->host_named, memory_order_relaxed) & ((uint64_t)1 << (n - 1)))) {
        char name[32];
        snprintf(name, sizeof name, "host thread %u", (unsigned)n);
        accel_i_spin_lock(&t->host.lock);
        if (accel_i_trace_host_first(t, n))
            accel_i_trace_put(t, &t->host, ACCEL_I_TEV_NAME, ACCEL_I_TRACE_HOST | n, NULL, name, 0, 0);
        accel_i_spin_unlock(&t->host.lock);
    }
    return ACCEL_I_TRACE_HOST | n;
}
/* kit: a span [t0, t1] named "what label" (either may be empty; label NULL too) on the calling host
   thread's track, with one arg (key NULL: none). */
static void accel_i_trace_host_span(accel_device* dev, const char* what, const char* label,
                                    uint64_t t0, uint64_t t1, const char* key, uint64_t value) {
    accel_i_trace* t = dev->trace;
    uint32_t track = accel_i_trace_host(dev);
    accel_i_trace_event* e;
    accel_i_spin_lock(&t->host.lock);
    e = accel_i_trace_put(t, &t->host, ACCEL_I_TEV_SPAN, track, what, label, t0, t1);
    e->key = key; e->a[0] = value;
    accel_i_spin_unlock(&t->host.lock);
}
/* Lock of b held: an event of dev's trace about s reaching or waiting for v (the writer names it by the
   label the user gave s, else by its number: "signal" is only the logs' default; another device's signal
   without a label: "on another device", its number being that device's). */
static accel_i_trace_event* accel_i_trace_put_signal(accel_device* dev, accel_i_trace_buf* b, accel_i_tev ev,
                                                     uint32_t track, const char* what, const accel_signal* s,
                                                     uint64_t v, uint64_t t0, uint64_t t1) {
    const char* name = s->obj.label_set ? s->obj.label_set : s->obj.device != dev ? "on another device" : "";
    accel_i_trace_event* e = accel_i_trace_put(dev->trace, b, ev, track, what, name, t0, t1);
    /* aux: "#n", n past 2^32 wraps */
    e->key = "value"; e->a[0] = v; e->a[2] = 0; e->aux = (uint32_t)s->trace_id;
    return e;
}
/* s reaches v at t on a track of dev: the mark the waits it releases link to. Call it BEFORE the raise is
   visible: a wait it releases looks for the mark as soon as it wakes. A writer claims the marks by
   making the sequence word odd; readers take nothing (they retry while it is odd or moved), so a
   waiter's look-up does not pull the line away from the thread that raises next. None for a signal of
   another device: its waits are in its own device's file, where dev's track numbers name other tracks. */
static void accel_i_trace_mark_set(accel_device* dev, accel_signal* s, uint64_t v, uint64_t t,
                                   uint32_t track) {
    uint32_t seq = atomic_load_explicit(&s->mark_seq, memory_order_relaxed);
    accel_i_trace_mark* m;
    if (s->obj.device != dev) return;
    for (uint32_t n = 1;; n++) {
        if (!(seq & 1u) &&
            atomic_compare_exchange_weak_explicit(&s->mark_seq, &seq, seq + 1u, memory_order_acquire,
                                                  memory_order_relaxed))
            break;
        if ((n & 63u) == 0) accel_i_yield(); else ACCEL_I_RELAX();
        seq = atomic_load_explicit(&s->mark_seq, memory_order_relaxed);
    }
    atomic_thread_fence(memory_order_release);   /* the odd count before the marks (seqlock writer) */
    m = &s->marks[seq / 2u % ACCEL_I_TRACE_MARKS];
    atomic_store_explicit(&m->value, v, memory_order_relaxed);
    atomic_store_explicit(&m->t, t, memory_order_relaxed);
    atomic_store_explicit(&m->track, track, memory_order_relaxed);
    atomic_store_explicit(&s->mark_seq, seq + 2u, memory_order_release);
}
/* s reaches v at t0 on a track (buffer b): the span [t0, t1] of what raises it ("signal": a queue's
   command, "set": accel_signal_set), its instant, and its mark (mark: false when the caller set it
   already). Call it BEFORE the raise is visible when it sets the mark. */
static void accel_i_trace_reached(accel_device* dev, accel_i_trace_buf* b, uint32_t track, const char* what,
                                  accel_signal* s, uint64_t v, uint64_t t0, uint64_t t1, bool mark) {
    accel_i_spin_lock(&b->lock);
    accel_i_trace_put_signal(dev, b, ACCEL_I_TEV_SIGNAL, track, what, s, v, t0, t1);
    accel_i_spin_unlock(&b->lock);
    if (mark) accel_i_trace_mark_set(dev, s, v, t0, track);
}
/* The mark of the lowest value >= v that s reached on dev (false: none; s reached it untraced: its
   initial value, a set before the trace began, a signal of another device; s failed since, so the wait
   it released may not have been; or writers kept changing the marks for a few tries: no arrow then). */
static bool accel_i_trace_mark_of(accel_device* dev, accel_signal* s, uint64_t v, accel_i_trace_spot* out) {
    if (s->obj.device != dev || accel_i_failed(accel_i_signal_value(s))) return false;
    for (int attempt = 0; attempt < 8; attempt++) {
        uint32_t seq = atomic_load_explicit(&s->mark_seq, memory_order_acquire);
        bool found = false;
        if (seq & 1u) { ACCEL_I_RELAX(); continue; }
        for (uint32_t i = 0; i < ACCEL_I_TRACE_MARKS; i++) {
            const accel_i_trace_mark* m = &s->marks[i];
            uint64_t mv = atomic_load_explicit(&m->value, memory_order_relaxed),
                     mt = atomic_load_explicit(&m->t, memory_order_relaxed);
            if (mt && mv >= v && (!found || mv < out->value)) {
                out->value = mv; out->t = mt;
                out->track = atomic_load_explicit(&m->track, memory_order_relaxed);
                found = true;
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->mark_seq, memory_order_relaxed) == seq) return found;
    }
    return false;
}
/* A wait for s >= v from t0 to t1 on a track (buffer b): its span, with the flow arrow from the mark
   when the value released it (released: false for a wait that failed or timed out, or whose signal
   failed: no arrow, though s may have reached v before the failure). */
static void accel_i_trace_waited(accel_device* dev, accel_i_trace_buf* b, uint32_t track, const char* what,
                                 accel_signal* s, uint64_t v, uint64_t t0, uint64_t t1, bool released) {
    accel_i_trace_spot m;
    bool linked = released && accel_i_trace_mark_of(dev, s, v, &m);
    accel_i_trace_event* e;
    accel_i_spin_lock(&b->lock);
    e = accel_i_trace_put_signal(dev, b, ACCEL_I_TEV_WAIT, track, what, s, v, t0, t1);
    if (linked) { e->from = m.track; e->a[1] = m.t; e->a[2] = ((uint64_t)b->index << 40) | ++b->flows; }
    accel_i_spin_unlock(&b->lock);
}
/* A host wait on signals[0..n) of the first one's device, from t0 to now: one span, a flow per signal
   (none unless the wait returned OK: released). */
static void accel_i_trace_host_wait(accel_signal* const* s, const uint64_t* v, uint32_t n, uint64_t t0,
                                    bool released) {
    accel_device* dev = s[0]->obj.device;
    accel_i_trace* t = dev->trace;
    uint32_t track = accel_i_trace_host(dev);
    uint64_t t1 = accel_i_now_ns();
    if (n == 1) { accel_i_trace_waited(dev, &t->host, track, "wait", s[0], v[0], t0, t1, released); return; }
    accel_i_trace_host_span(dev, "wait many", NULL, t0, t1, "signals", n);
    for (uint32_t i = 0; i < n; i++) {
        accel_i_trace_spot m;
        if (!released || !accel_i_trace_mark_of(dev, s[i], v[i], &m)) continue;
        accel_i_spin_lock(&t->host.lock);
        accel_i_trace_event* e = accel_i_trace_put(t, &t->host, ACCEL_I_TEV_FLOW, track, NULL, NULL, t0, t1);
        e->from = m.track; e->a[1] = m.t; e->a[2] = ++t->host.flows;
        accel_i_spin_unlock(&t->host.lock);
    }
}
/* A command of q that ran from t0 to t1 (see accel_i_trace_cmd); a signal's mark only when `mark`. */
static uint64_t accel_i_trace_cmd_at(accel_queue* q, const accel_i_cmd* c, uint64_t t0, uint64_t t1,
                                     bool mark) {
    accel_device* dev = q->obj.device;
    accel_i_trace_buf* b = q->trace_buf ? q->trace_buf : &dev->trace->host;
    const char* what = NULL;
    const char* key = NULL;
    uint64_t value = 0;
    accel_i_trace_event* e;
    switch (c->kind) {
    case ACCEL_I_CMD_WAIT:
        accel_i_trace_waited(dev, b, q->trace_track, "wait", c->u.sig.signal, c->u.sig.value, t0, t1, true);
        break;
    case ACCEL_I_CMD_SIGNAL:
        accel_i_trace_reached(dev, b, q->trace_track, "signal", c->u.sig.signal, c->u.sig.value, t0, t1,
                              mark);
        break;
    case ACCEL_I_CMD_EXEC: break;
    case ACCEL_I_CMD_COPY: what = "copy"; key = "bytes"; value = c->u.copy.size; break;
    case ACCEL_I_CMD_FILL: what = "fill"; key = "bytes"; value = c->u.fill.size; break;
    case ACCEL_I_CMD_UPDATE: what = "update"; key = "bytes"; value = c->u.update.size; break;
    case ACCEL_I_CMD_BARRIER: what = "barrier"; break;
    case ACCEL_I_CMD_TIMESTAMP: what = "timestamp"; key = "offset"; value = c->u.stamp.offset; break;
    case ACCEL_I_CMD_REPLAY: what = "replay"; key = "commands"; value = c->u.replay.list->list->count; break;
    case ACCEL_I_CMD_HOST_CALL: what = "host call"; break;
    case ACCEL_I_CMD_NATIVE: what = "native"; break;
    }
    if (what || c->kind == ACCEL_I_CMD_EXEC) {
        accel_i_spin_lock(&b->lock);
        if (what) {
            e = accel_i_trace_put(dev->trace, b, ACCEL_I_TEV_SPAN, q->trace_track, what, NULL, t0, t1);
            e->key = key; e->a[0] = value;
        } else {   /* named by the program; the writer works out groups and invocations */
            const accel_exec_params* p = &c->u.exec.params;
            e = accel_i_trace_put(dev->trace, b, ACCEL_I_TEV_EXEC, q->trace_track, NULL,
                                  accel_i_label(&c->u.exec.program->obj), t0, t1);
            e->a[0] = p->global_size[0] | (uint64_t)p->global_size[1] << 32;
            e->a[1] = p->global_size[2] | (uint64_t)p->local_size[0] << 32;
            e->a[2] = p->local_size[1] | (uint64_t)p->local_size[2] << 32;
            e->aux = c->u.exec.buffer_count;
            if ((c->flags & (ACCEL_I_CMD_INDIRECT | ACCEL_I_CMD_GRID_READ)) == ACCEL_I_CMD_INDIRECT)
                e->aux |= 1u << 31;   /* its grid read where it ran: params hold none */
        }
        accel_i_spin_unlock(&b->lock);
    }
    return accel_i_trace_end(b, t1);
}
/* kit: a command of q that ran on the device from t0 to t1 (device times converted to the host clock).
   Waits and signals get their flows and marks; a signal is recorded before it is raised (see
   accel_i_trace_reached). Returns when the next command may start: t1, or later when the trace was
   written out meanwhile. */
static uint64_t accel_i_trace_cmd(accel_queue* q, const accel_i_cmd* c, uint64_t t0, uint64_t t1) {
    return accel_i_trace_cmd_at(q, c, t0, t1, true);
}

#if !defined(ACCEL_NO_THREADS)
/* GPU backends: the waits of a segment the batch walk drops (one failed) end now, on the queue's track. */
static void accel_i_trace_waits_failed(accel_queue* q, const accel_i_batch* b, const accel_i_segment* sg) {
    uint64_t t = accel_i_now_ns();
    for (uint32_t i = sg->wfrom; i < sg->from; i++) t = accel_i_trace_cmd(q, &b->cmds[i], t, t);
}
#endif

/* ---- lifetime ---- */
static bool accel_i_trace_buf_init(accel_device* dev, accel_i_trace_buf* b, uint32_t cap, uint32_t index) {
    atomic_init(&b->lock, 0u);
    b->count = 0; b->cap = cap; b->index = index; b->flows = 0;
    atomic_init(&b->flushed, 0u);
    b->events = (accel_i_trace_event*)accel_i_dev_alloc(dev, (size_t)cap * sizeof *b->events);
    return b->events != NULL;
}
static void accel_i_trace_buf_fini(accel_device* dev, accel_i_trace_buf* b) {
    accel_i_spin_lock(&b->lock);
    accel_i_trace_flush(dev->trace, b);
    accel_i_spin_unlock(&b->lock);
    accel_i_dev_free(dev, b->events, (size_t)b->cap * sizeof *b->events);
}
/* The names of the trace files being written in this process, so that two devices asked for one path
   (ACCEL_TRACE and two devices, say) write two whole files, not one over the other: a later device
   whose path is taken writes "<path without extension>.2<extension>" (.3, ...; a name's leading dot
   starts no extension) and says so in an info line. The one piece of process state in the core; names
   in the default allocator. */
typedef struct accel_i_trace_path {
    struct accel_i_trace_path* next;
    size_t bytes;
    char* name;
    uint64_t id[2];   /* the file's device and inode, where known (ided) */
    bool ided;
} accel_i_trace_path;
static struct { accel_i_a32 lock; accel_i_trace_path* head; } accel_i_trace_paths;
/* A file's identity, where the platform gives one (POSIX stat; not Windows, whose st_ino is 0, nor WASI):
   two names of one file (a relative and an absolute path, a link) are then one path here. */
static bool accel_i_trace_file_id(const char* name, uint64_t id[2]) {
#if defined(_WIN32) || defined(__wasi__)
    (void)name; (void)id;
    return false;
#else
    struct stat st;
    if (stat(name, &st) != 0) return false;
    id[0] = (uint64_t)st.st_dev;
    id[1] = (uint64_t)st.st_ino;
    return true;
#endif
}
static bool accel_i_trace_path_taken(const char* name) {
    uint64_t id[2];
    bool known = accel_i_trace_file_id(name, id);
    for (accel_i_trace_path* p = accel_i_trace_paths.head; p; p = p->next)
        if (strcmp(p->name, name) == 0 || (known && p->ided && p->id[0] == id[0] && p->id[1] == id[1]))
            return true;
    return false;
}
/* Claims path, or its first free numbered variant, and opens it for writing (*file; NULL: it would not
   open, and nothing is claimed); NULL when out of memory. Opened under the lock, so that a device that
   names the same file otherwise at the same time finds it taken. */
static accel_i_trace_path* accel_i_trace_claim(const char* path, FILE** file) {
    size_t len = strlen(path), stem = len, bytes = sizeof(accel_i_trace_path) + len + 12;
    accel_i_trace_path* p = (accel_i_trace_path*)accel_i_default_alloc(bytes, 16, NULL);
    if (!p) return NULL;
    p->bytes = bytes;
    p->name = (char*)(void*)(p + 1);
    for (size_t i = len; i > 1 && path[i - 2] != '/' && path[i - 2] != '\\'; i--)   /* not a name's 1st dot */
        if (path[i - 1] == '.') { stem = i - 1; break; }
    memcpy(p->name, path, len + 1);
    accel_i_spin_lock(&accel_i_trace_paths.lock);
    for (unsigned n = 2; accel_i_trace_path_taken(p->name); n++)
        snprintf(p->name, len + 12, "%.*s.%u%s", (int)stem, path, n, path + stem);
    if ((*file = fopen(p->name, "w")) != NULL) {
        p->ided = accel_i_trace_file_id(p->name, p->id);
        p->next = accel_i_trace_paths.head;
        accel_i_trace_paths.head = p;
    }
    accel_i_spin_unlock(&accel_i_trace_paths.lock);
    return p;
}
static void accel_i_trace_unclaim(accel_i_trace_path* p) {
    accel_i_spin_lock(&accel_i_trace_paths.lock);
    for (accel_i_trace_path** at = &accel_i_trace_paths.head; *at; at = &(*at)->next)
        if (*at == p) { *at = p->next; break; }
    accel_i_spin_unlock(&accel_i_trace_paths.lock);
    accel_i_default_free(p, p->bytes, NULL);
}
/* Device create: opens the trace when asked for (desc, then ACCEL_TRACE). OUT_OF_MEMORY; a file that
   will not open is a warning and no trace. */
static accel_result accel_i_trace_open(accel_device* dev, const accel_device_desc* d) {
    const char* path = d->trace_path ? d->trace_path : getenv("ACCEL_TRACE");
    accel_i_trace* t;
    if (!path || !path[0]) return ACCEL_OK;
    t = (accel_i_trace*)accel_i_dev_alloc(dev, sizeof *t);
    if (t) memset((void*)t, 0, sizeof *t);
    if (t && (t->out = (char*)accel_i_dev_alloc(dev, ACCEL_I_TRACE_OUT)) == NULL) {
        accel_i_dev_free(dev, t, sizeof *t);
        t = NULL;
    }
    if (!t || !accel_i_trace_buf_init(dev, &t->host, ACCEL_I_TRACE_HOST_EVENTS, 0)) {
        if (t) accel_i_dev_free(dev, t->out, ACCEL_I_TRACE_OUT);
        accel_i_dev_free(dev, t, sizeof *t);
        return accel_i_fail(dev, ACCEL_ERROR_OUT_OF_MEMORY,
                            "accel_device_create: out of host memory for the trace");
    }
    atomic_init(&t->file_lock, 0u); atomic_init(&t->queues, 0u); atomic_init(&t->signals, 0u);
    atomic_init(&t->host_named, 0u); atomic_init(&t->names_lock, 0u);
    t->dev = dev;
    if ((t->path = accel_i_trace_claim(path, &t->file)) == NULL || t->file == NULL) {
        accel_i_log(dev, ACCEL_LOG_WARN, "accel_device_create: cannot open the trace file '%s'%s; tracing is off",
                    t->path ? t->path->name : path, t->path ? "" : " (out of host memory for its name)");
        if (t->path) accel_i_default_free(t->path, t->path->bytes, NULL);   /* never listed */
        accel_i_dev_free(dev, t->host.events, (size_t)t->host.cap * sizeof *t->host.events);
        accel_i_dev_free(dev, t->out, ACCEL_I_TRACE_OUT);
        accel_i_dev_free(dev, t, sizeof *t);
        return ACCEL_OK;
    }
    if (strcmp(t->path->name, path) != 0)
        accel_i_log(dev, ACCEL_LOG_INFO,
                    "accel_device_create: another device traces to '%s'; this one to '%s'",
                    path, t->path->name);
#if defined(__wasi__)
    t->spill = NULL;        /* WASI has no temporary files: buffers are written as JSON */
#else
    t->spill = tmpfile();   /* NULL (no temporary files here): buffers are written as JSON */
#endif
    accel_i_trace_put_s(t, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                           "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
                           "\"args\":{\"name\":\"host\"}},\n"
                           "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"");
    accel_i_trace_put_s(t, dev->backend->name);
    accel_i_trace_put_s(t, dev->label[0] ? " device " : " device");
    accel_i_trace_str(t, dev->label);
    accel_i_trace_put_s(t, "\"}}");
    t->written = true;
    dev->trace = t;
    return ACCEL_OK;
}
/* Device destroy (every queue is gone, its buffer written): writes the rest and closes the file. */
static void accel_i_trace_close(accel_device* dev) {
    accel_i_trace* t = dev->trace;
    bool spill_ok;
    if (!t) return;
    accel_i_spin_lock(&t->host.lock);
    accel_i_trace_flush(t, &t->host);
    accel_i_spin_unlock(&t->host.lock);
    spill_ok = accel_i_trace_unspill(t, &t->host);
    accel_i_dev_free(dev, t->host.events, (size_t)t->host.cap * sizeof *t->host.events);
    accel_i_trace_put_s(t, "\n]}\n");
    accel_i_trace_drain(t);
    accel_i_trace_names_free(t);
    accel_i_dev_free(dev, t->host_more, t->host_more_words * sizeof *t->host_more);
    if ((ferror(t->file) | fclose(t->file)) || !spill_ok)
        accel_i_log(dev, ACCEL_LOG_WARN,
                    "accel_device_destroy: writing the trace file failed; it is incomplete");
    accel_i_trace_unclaim(t->path);
    accel_i_dev_free(dev, t->out, ACCEL_I_TRACE_OUT);
    accel_i_dev_free(dev, t, sizeof *t);
    dev->trace = NULL;
}
/* Signal create: its number in the trace ("#n" names it while it has no label). */
static void accel_i_trace_signal(accel_signal* s) {
    accel_i_trace* t = s->obj.device->trace;
    atomic_init(&s->mark_seq, 0u);
    for (uint32_t i = 0; i < ACCEL_I_TRACE_MARKS; i++) {
        atomic_init(&s->marks[i].value, 0u);
        atomic_init(&s->marks[i].t, 0u);
        atomic_init(&s->marks[i].track, 0u);
    }
    s->trace_id = t ? atomic_fetch_add(&t->signals, 1u) + 1u : 0;
}
/* The queue's track name, "<label> <n>" (again after accel_queue_set_label: the last one counts). */
static void accel_i_trace_queue_name(accel_queue* q) {
    accel_i_trace* t = q->obj.device->trace;
    accel_i_trace_buf* b = q->trace_buf ? q->trace_buf : &t->host;
    char small[64];
    size_t bytes = strlen(accel_i_label(&q->obj)) + 12;
    char* name = bytes > sizeof small ? (char*)accel_i_dev_alloc(t->dev, bytes) : NULL;
    if (!name) { name = small; bytes = sizeof small; }   /* out of memory for a long label: cut */
    snprintf(name, bytes, "%s %u", accel_i_label(&q->obj), (unsigned)q->trace_track);
    accel_i_spin_lock(&b->lock);
    accel_i_trace_put(t, b, ACCEL_I_TEV_NAME, q->trace_track, NULL, name, 0, 0);
    accel_i_spin_unlock(&b->lock);
    if (name != small) accel_i_dev_free(t->dev, name, bytes);
}
/* Queue create: the queue's track and its buffer (refused: NULL, the host's is used). */
static void accel_i_trace_queue(accel_queue* q) {
    accel_device* dev = q->obj.device;
    accel_i_trace* t = dev->trace;
    accel_i_trace_buf* b;
    q->trace_track = 0;
    q->trace_buf = NULL;
    if (!t) return;
    q->trace_track = atomic_fetch_add(&t->queues, 1u) + 1u;
    b = (accel_i_trace_buf*)accel_i_dev_alloc(dev, sizeof *b);
    if (b && !accel_i_trace_buf_init(dev, b, ACCEL_I_TRACE_QUEUE_EVENTS, q->trace_track)) {
        accel_i_dev_free(dev, b, sizeof *b);
        b = NULL;
    }
    if (!b)
        accel_i_log(dev, ACCEL_LOG_WARN,
                    "accel_queue_create: out of host memory for a trace buffer; "
                    "this queue shares the host's");
    q->trace_buf = b;
    accel_i_trace_queue_name(q);
}
/* Queue teardown (its work done): writes its buffer out and frees it. */
static void accel_i_trace_queue_fini(accel_queue* q) {
    accel_device* dev = q->obj.device;
    if (!q->trace_buf) return;
    /* else: q outlived the trace, and its events are lost */
    if (dev->trace) accel_i_trace_buf_fini(dev, q->trace_buf);
    else accel_i_dev_free(dev, q->trace_buf->events,
                          (size_t)q->trace_buf->cap * sizeof *q->trace_buf->events);
    accel_i_dev_free(dev, q->trace_buf, sizeof *q->trace_buf);
    q->trace_buf = NULL;
}

/* accel_signal_set on a traced device: the "set" span and the signal's mark, before the raise. */
static void accel_i_trace_host_set(accel_signal* s, uint64_t value) {
    accel_device* dev = s->obj.device;
    uint64_t t0 = accel_i_now_ns();
    accel_i_trace_reached(dev, &dev->trace->host, accel_i_trace_host(dev), "set", s, value,
                          t0, accel_i_now_ns(), true);
}
#endif /* !ACCEL_NO_TRACE */

#endif /* ACCEL_IMPLEMENTATION */

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
