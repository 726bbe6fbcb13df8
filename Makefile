# accel — build and test (GNU make).
#
#   make help        this list
#   make run         build the examples (cc -std=c11 -O2) and run each on the CPU backend: needs only make
#                    and a C compiler (examples/mpi_halo.c on 2 MPI ranks too where mpicc and mpirun are)
#   make test        the test suite in every configuration below, summed up into one line, then the
#                    skipped tests by reason. First installs what it needs (.ci/packages, through
#                    .ci/deps.sh: apt-get as root or with sudo; otherwise it prints the install line and
#                    stops; ACCEL_NO_INSTALL=1 skips this and the tests whose tools are missing), then
#                    runs the suite in a second make that finds the tools just installed (test-run).
#                    Its footprint check takes ACCEL_SIZE_DEFAULT_MAX= / ACCEL_SIZE_SMALL_MAX= (bytes)
#   make run-wasm    the examples as wasm32-wasi modules under node (clang --target=wasm32-wasi)
#   make test-asan   the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-tsan   the suite under ThreadSanitizer (pthread shim: TSan crashes in C11 thrd_create)
#   make bench       build and run bench/cpu.c (gcc -O2 -fopenmp; BENCH_ARGS=--quick for a short run)
#   make bench-decode  bench/decode.c: a transformer decode loop, accel vs OpenMP (tokens/s, ratio)
#   make bench-mpi   bench/mpi.sh: examples/mpi_halo.c on 2 MPI ranks vs plain MPI + OpenMP (needs mpicc)
#   make test-vulkan the suite on the Vulkan backend only (validation layer on, then sync validation)
#   make run-vulkan  the examples on the Vulkan backend (built with -DACCEL_EXAMPLE_HAVE_VULKAN)
#   make examples / examples-vulkan  build the examples only (build/NAME; build/vulkan/NAME)
#   make bench-vulkan  bench/vulkan.c: accel vs raw Vulkan on the same device (BENCH_ARGS=--quick)
#   make bench-devices bench/devices.c: peer copies between devices, direct and staged (BENCH_ARGS=--quick)
#   make bench-shared-waits bench/shared_waits.c: waits across two devices of one GPU through a shared semaphore
#   make bench-device-waits bench/device_waits.c: a CUDA queue's wait on a CPU signal, on the GPU vs gated
#   make bench-cuda  build and run bench/cuda.c (the CUDA backend next to raw driver calls; needs a GPU,
#                    prints why and exits 0 without one)
#   make cuda-blocking  bench/cuda_blocking.c: which driver calls block while a stream waits on the GPU
#   make gpu-check   everything a machine with an NVIDIA GPU should run (bench/gpu_check.sh; builds what it
#                    runs, from a fresh clone too; exit 77 where no CUDA device can be opened)
#   make test-valgrind  the failure-path tests under valgrind memcheck
#   make fuzz        the API fuzzer (FUZZ_SECONDS=60)
#   make soak / soak-tsan / soak-gpu  random pipelines (SOAK_SECONDS): ASan, TSan, lavapipe + mock CUDA
#   make deps        install what `make test` needs (the first step of `make test`)
#   make clean
#
# Everything goes to build/, one sub-directory per configuration; `-j` is safe. The test targets build
# with `make -k` first and then run what was built: a test program that failed to build counts as one
# failed test, so one broken configuration does not hide the results of the others.
# ACCEL_TEST_BACKEND (cpu|vulkan|cuda, default cpu) picks the backend the tests run on.
# The vulkan configurations (part of `make test`) build the same tests with -DACCEL_TEST_HAVE_VULKAN plus
# tests/test_vulkan.c and run them with ACCEL_TEST_BACKEND=vulkan on lavapipe (VK_DRIVER_FILES pinned
# to it where it is installed; override with LVP_ICD=), the validation layer on, then once more with
# synchronization validation. They skip when the Vulkan headers or glslc are missing.

GCC      ?= gcc
GXX      ?= g++
CLANG    ?= clang
NODE     ?= node
GLSLC    ?= glslc
SPIRVVAL ?= spirv-val

BUILD    := build
WARN     := -Wall -Wextra -Wpedantic -Werror -Wstrict-prototypes -Wmissing-prototypes -Wshadow
TESTFLAGS := -std=c11 -O1 -g $(WARN) -I. -I$(BUILD)/kernels
LIBS     := -lpthread -lm -ldl
SAN_ASAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SAN_TSAN := -fsanitize=thread

# wasm32-wasi: Debian's lld-14 installs the wasm linker as wasm-ld-14; clang takes an absolute path.
WASI_SYSROOT ?= /usr
ifndef WASM_LD
WASM_LD  := $(shell for p in wasm-ld wasm-ld-14 wasm-ld-15 wasm-ld-16; do command -v $$p && break; done)
endif
WASMFLAGS = --target=wasm32-wasi -nostdlibinc -isystem $(WASI_SYSROOT)/include/wasm32-wasi \
            -std=c11 -O1 $(WARN) -I. -I$(BUILD)/kernels
WASMLIBS  = $(if $(WASM_LD),-fuse-ld=$(WASM_LD)) -lm
NODE_WASI  = $(NODE) --no-warnings $(shell $(NODE) --experimental-wasi-unstable-preview1 -e 0 >/dev/null 2>&1 \
             && echo --experimental-wasi-unstable-preview1) tests/wasi_run.mjs

HEADERS  := $(wildcard accel*.h) $(wildcard tests/*.h) tests/fuzz_api.c   # test_fuzz_replay.c includes fuzz_api.c
TESTS    := $(filter-out test_vulkan,$(basename $(notdir $(wildcard tests/test_*.c))))
VK_TESTS := $(filter-out test_cuda,$(TESTS)) test_vulkan
# the suite without the GPU backends' own programs: for configurations that link the core alone (C++)
# or run the CPU suite on another platform (mingw + wine)
CORE_TESTS := $(filter-out test_cuda,$(TESTS))
KERNELS  := $(basename $(notdir $(wildcard tests/kernels/*.comp)))
# Without glslc the tests build with ACCEL_TEST_NO_SPIRV (CPU kernels only) and the SPIR-V checks skip.
HAVE_GLSLC := $(shell command -v $(GLSLC) >/dev/null 2>&1 && echo 1)
ifeq ($(HAVE_GLSLC),1)
KERNEL_INCS := $(KERNELS:%=$(BUILD)/kernels/%.spv.inc)
else
KERNEL_INCS :=
TESTFLAGS += -DACCEL_TEST_NO_SPIRV
endif
# examples/mpi_halo.c (MPI) and examples/nccl_allreduce.c (CUDA + NCCL) are built and run apart from the
# examples every backend runs: see "more than one machine" below
EXAMPLES_APART := mpi_halo nccl_allreduce
EXAMPLES := $(filter-out $(EXAMPLES_APART),$(basename $(notdir $(wildcard examples/*.c))))
# the suite built with the CUDA backend (-DACCEL_TEST_HAVE_CUDA) and run with ACCEL_TEST_BACKEND=cuda:
# without a driver every program skips (exit 77); test_cuda.c runs in the other configurations
CUDA_SUITE := $(filter-out test_cuda,$(TESTS))
# tests/mock_cuda.c: a fake CUDA driver + NVRTC on the CPU. The cuda suite runs through it as
# `cuda-mock` (signal points by the progress word) and `cuda-mock-ring` (the event ring), and
# test_cuda.c's GPU-only tests (JIT error log, out-of-bounds kernel -> DEVICE_LOST) too: this checks
# the backend's host side (loading, executors, waits, signal points, lifetimes, failures) without a GPU.
MOCK_LIB := $(BUILD)/mock/libcuda_mock.so
MOCK_ENV  = env ACCEL_TEST_BACKEND=cuda ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB)
cuda-mock_BINS = $(cuda_BINS)
cuda-mock-ring_BINS = $(cuda_BINS)
$(MOCK_LIB): tests/mock_cuda.c
	@mkdir -p $(@D)
	$(GCC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -shared -fPIC -pthread -o $@ $<
# cuda-mock-2dev: tests/test_devices.c and test_device_waits.c once more with the mock's two devices (MOCK_CUDA_DEVICES=2), so
# that its second CUDA device is another GPU (peer access) instead of a second accel device on the first;
# cuda-mock-2dev-nopeer: the same without peer access (MOCK_CUDA_NO_PEER=1): copies between them staged;
# cuda-mock-2dev-ring: the same two in the event-ring mode (ACCEL_CUDA_NO_MEMOPS=1)
# the mock instrumented for ThreadSanitizer (clang: gcc's libtsan cannot be dlopen'ed), so that its
# stream threads' writes and atomics are seen by the TSan run of the CUDA backend
MOCK_TSAN_LIB := $(BUILD)/mock/libcuda_mock_tsan.so
$(MOCK_TSAN_LIB): tests/mock_cuda.c
	@mkdir -p $(@D)
	$(CLANG) -std=gnu11 -O1 -g -Wall -Wextra -Werror $(SAN_TSAN) -shared -fPIC -pthread -o $@ $<
# the threaded tests that `make test-tsan` runs (override: make test-tsan TSAN_TESTS="test_signals")
TSAN_TESTS ?= $(filter-out test_nothreads%,$(TESTS))

export ACCEL_TEST_BACKEND ?= cpu

# when make was started without -j, the build step still uses every core
NPROC    := $(shell nproc 2>/dev/null || echo 2)
SUBMAKE   = $(MAKE) --no-print-directory -k $(if $(filter -j%,$(MAKEFLAGS))$(findstring jobserver,$(MAKEFLAGS)),,-j$(NPROC))

.PHONY: all help deps run-wasm examples-wasm run test test-run test-asan test-tsan bench bench-mpi bench-cuda cuda-blocking gpu-check gpu-check-list clean examples build-test build-asan build-tsan FORCE \
        fuzz build-fuzz soak soak-tsan soak-gpu bench-decode test-valgrind test-vulkan build-vulkan run-vulkan bench-vulkan examples-vulkan bench-devices bench-shared-waits \
        bench-device-waits
.DELETE_ON_ERROR:

all: examples build-test

# ---- test kernels: GLSL compute -> SPIR-V (validated) -> C initialiser list -------------------
$(BUILD)/kernels/%.spv: tests/kernels/%.comp
	@mkdir -p $(@D)
	$(GLSLC) -fshader-stage=compute --target-env=vulkan1.2 -o $@ $<
	$(SPIRVVAL) --target-env vulkan1.2 $@

$(BUILD)/kernels/%.spv.inc: tests/kernels/%.comp $(BUILD)/kernels/%.spv
	@mkdir -p $(@D)
	$(GLSLC) -fshader-stage=compute --target-env=vulkan1.2 -mfmt=c -o $@ $<

.SECONDARY: $(KERNEL_INCS) $(KERNEL_INCS:.inc=)

# ---- test configurations ------------------------------------------------------------------------
# $(call test_config,NAME,COMPILER AND FLAGS,LIBS,SUFFIX,TESTS[,IMPL]): rules for build/NAME/test_*SUFFIX
# build/NAME/flags holds the command line; it changes (and everything rebuilds) when the flags change.
# The implementation is compiled once a configuration: IMPL (default build/NAME/impl.o, tests/impl.c with
# the configuration's flags), linked into its programs, which are compiled with TEST_APART (they read
# only the declarations). The programs of TESTS_OWN_IMPL compile it in, as a single-file program does
# (with IMPL given, none does): they look inside it (its sizes, structs, macros), or they define
# _POSIX_C_SOURCE / _GNU_SOURCE first, which the implementation sees too (clock_gettime's monotonic
# clock, Vulkan's calibrated timestamps), so that both clocks keep running in the suite (tests/impl.c
# is strict C11: timespec_get).
TEST_APART := -DACCEL_IMPLEMENTATION_INCLUDED -DACCEL_VULKAN_IMPLEMENTATION_INCLUDED \
              -DACCEL_CUDA_IMPLEMENTATION_INCLUDED
TESTS_OWN_IMPL := test_alloc test_cuda test_device_waits test_devices test_help test_interop test_pool \
                  test_profiling test_queue_memory test_queues test_recover test_replay test_signals \
                  test_views test_vulkan
define test_config
$(1)_BINS := $$(patsubst %,$(BUILD)/$(1)/%$(4),$(5))
$(1)_IMPL := $(if $(6),$(6),$(BUILD)/$(1)/impl.o)
$(BUILD)/$(1)/flags: FORCE
	@mkdir -p $$(@D)
	@line='$(2) $(3) $(6) own: $(TESTS_OWN_IMPL)'; echo "$$$$line" | cmp -s - $$@ || echo "$$$$line" > $$@
$(if $(6),,$(BUILD)/$(1)/impl.o: tests/impl.c tests/test_backends.h $$(wildcard accel*.h) $(BUILD)/$(1)/flags
	@mkdir -p $$(@D)
	$(2) -c -o $$@ $$<)
$(BUILD)/$(1)/%$(4): tests/%.c $$(HEADERS) $$(KERNEL_INCS) $(BUILD)/$(1)/flags $$($(1)_IMPL)
	@mkdir -p $$(@D)
	@rm -f $$@
	$(2) $$(if $(6)$$(filter-out $(TESTS_OWN_IMPL),$$*),$(TEST_APART) -o $$@ $$< $$($(1)_IMPL),-o $$@ $$<) $(3)
endef
FORCE:

$(eval $(call test_config,gcc,$(GCC) $(TESTFLAGS),$(LIBS),,$(TESTS)))
$(eval $(call test_config,clang,$(CLANG) $(TESTFLAGS),$(LIBS),,$(TESTS)))
$(eval $(call test_config,pthreads,$(GCC) $(TESTFLAGS) -DACCEL_USE_PTHREADS,$(LIBS),,$(TESTS)))
$(eval $(call test_config,nothreads,$(GCC) $(TESTFLAGS) -DACCEL_NO_THREADS,$(LIBS),,$(TESTS)))
# the small builds: the optional parts (trace writer, debug reports) compiled out; their tests skip there
SMALL_FLAGS := -DACCEL_NO_TRACE -DACCEL_NO_DEBUG
$(eval $(call test_config,small,$(GCC) $(TESTFLAGS) $(SMALL_FLAGS),$(LIBS),,$(TESTS)))
$(eval $(call test_config,small-nothreads,$(GCC) $(TESTFLAGS) -DACCEL_NO_THREADS $(SMALL_FLAGS),$(LIBS),,$(TESTS)))
$(eval $(call test_config,cuda,$(GCC) $(TESTFLAGS) -DACCEL_TEST_HAVE_CUDA,$(LIBS),,$(CUDA_SUITE)))
$(eval $(call test_config,asan-cuda,$(GCC) $(TESTFLAGS) $(SAN_ASAN) -DACCEL_TEST_HAVE_CUDA,$(LIBS),,$(CUDA_SUITE)))
$(eval $(call test_config,wasm,$(CLANG) $(WASMFLAGS),$(WASMLIBS),.wasm,$(TESTS)))
$(eval $(call test_config,asan,$(GCC) $(TESTFLAGS) $(SAN_ASAN),$(LIBS),,$(TESTS)))
$(eval $(call test_config,asan-nothreads,$(CLANG) $(TESTFLAGS) $(SAN_ASAN) -DACCEL_NO_THREADS,$(LIBS),,$(TESTS)))
$(eval $(call test_config,tsan,$(CLANG) $(TESTFLAGS) $(SAN_TSAN) -DACCEL_USE_PTHREADS,$(LIBS),,$(TSAN_TESTS)))
$(eval $(call test_config,tsan-cuda,$(CLANG) $(TESTFLAGS) $(SAN_TSAN) -DACCEL_USE_PTHREADS -DACCEL_TEST_HAVE_CUDA,$(LIBS),,$(filter-out test_cuda,$(TSAN_TESTS))))
$(eval $(call test_config,vulkan,$(GCC) $(TESTFLAGS) -DACCEL_TEST_HAVE_VULKAN,$(LIBS) -ldl,,$(VK_TESTS)))

# ---- Vulkan: what is here, and how the tests run -------------------------------------------------
HAVE_VK_HEADERS := $(shell printf '\043include <vulkan/vulkan_core.h>\n' | $(GCC) -E -x c - >/dev/null 2>&1 && echo 1)
HAVE_VULKAN := $(if $(and $(HAVE_VK_HEADERS),$(HAVE_GLSLC)),1)
LVP_ICD  ?= $(firstword $(wildcard /usr/share/vulkan/icd.d/lvp_icd.*.json))
VK_LAYER := $(firstword $(wildcard /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json))
VK_ENV    = env ACCEL_TEST_BACKEND=vulkan $(if $(LVP_ICD),VK_DRIVER_FILES=$(LVP_ICD)) \
            $(if $(VK_LAYER),VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation)
VK_SYNC_ENV = $(VK_ENV) $(if $(VK_LAYER),VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT)
# cuda-vulkan: tests/test_devices.c built with both GPU backends (ASan+UBSan), CUDA and Vulkan on one GPU: the
# mock CUDA driver claims lavapipe's uuid (ACCEL_TEST_PEER=vulkan), so that a CUDA queue's copies import the
# Vulkan memory (cuImportExternalMemory); validation with synchronization validation on. Leak checks off:
# lavapipe's own allocations at exit are not accel's (the test counts the imports and the driver's mappings).
CUVK_BIN := $(BUILD)/asan-cuda-vulkan/test_devices
# and under TSan (make test-tsan: the pthread shim, the mock built for TSan; lavapipe is not instrumented)
CUVK_TSAN_BIN := $(BUILD)/tsan-cuda-vulkan/test_devices
CUVK_TSAN_ENV  = env ACCEL_TEST_BACKEND=cuda ACCEL_TEST_PEER=vulkan $(VK_RUN_ENV) \
                 ACCEL_CUDA_LIBRARY=$(MOCK_TSAN_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_TSAN_LIB)
$(CUVK_TSAN_BIN): tests/test_devices.c $(HEADERS) $(KERNEL_INCS)
	@mkdir -p $(@D)
	$(CLANG) $(TESTFLAGS) $(SAN_TSAN) -DACCEL_USE_PTHREADS -DACCEL_TEST_HAVE_VULKAN -DACCEL_TEST_HAVE_CUDA \
	  -o $@ $< $(LIBS)
# the same without sanitizers, for bench/gpu_check.sh on a GPU (NVIDIA's Vulkan driver beside CUDA)
$(BUILD)/cuda-vulkan/test_devices: tests/test_devices.c $(HEADERS) $(KERNEL_INCS)
	@mkdir -p $(@D)
	$(GCC) $(TESTFLAGS) -DACCEL_TEST_HAVE_VULKAN -DACCEL_TEST_HAVE_CUDA -o $@ $< $(LIBS)
CUVK_ENV  = $(VK_SYNC_ENV) ASAN_OPTIONS=detect_leaks=0 ACCEL_TEST_BACKEND=cuda ACCEL_TEST_PEER=vulkan \
            ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB)
$(CUVK_BIN): tests/test_devices.c $(HEADERS) $(KERNEL_INCS)
	@mkdir -p $(@D)
	$(GCC) $(TESTFLAGS) $(SAN_ASAN) -DACCEL_TEST_HAVE_VULKAN -DACCEL_TEST_HAVE_CUDA -o $@ $< $(LIBS)
# cuda-vulkan-sems: the same with the test's stand-in for a Vulkan driver that exports timeline semaphores
# (lavapipe 22.3 exports none; tests/test_devices.c, ACCEL_TEST_VK_SEM_EXPORT): a CUDA queue's waits on
# Vulkan signals go to the mock's streams, through its cuWaitExternalSemaphoresAsync
CUVK_SEMS = ACCEL_TEST_VK_SEM_EXPORT=1
ifeq ($(HAVE_VULKAN),1)
VK_BUILD := $(vulkan_BINS) $(CUVK_BIN) $(MOCK_LIB)
# vulkan-nomap: tests/test_devices.c with device memory not mapped and no external memory, so that copies
# between two Vulkan devices go through the core's bounce buffer and both devices' reads and writes (staged
# peer copies; elsewhere they go through imported memory)
VK_NOMAP  = ACCEL_VULKAN_NO_MAP_DEVICE=1 ACCEL_VULKAN_NO_EXTERNAL_MEMORY=1
VK_RUNS   = $(call config_args,vulkan,$(VK_ENV)) --config vulkan-sync --runner "$(VK_SYNC_ENV)" $(vulkan_BINS) \
            --config vulkan-nomap --runner "$(VK_SYNC_ENV) $(VK_NOMAP)" $(BUILD)/vulkan/test_devices \
            --config cuda-vulkan --runner "$(CUVK_ENV)" $(CUVK_BIN) \
            --config cuda-vulkan-sems --runner "$(CUVK_ENV) $(CUVK_SEMS)" $(CUVK_BIN)
else
VK_BUILD :=
VK_RUNS   = --config vulkan --skip vulkan-suite 'no Vulkan headers or no glslc' \
            --config vulkan-sync --skip vulkan-sync-suite 'no Vulkan headers or no glslc' \
            --config cuda-vulkan --skip cuda-vulkan-one-gpu 'no Vulkan headers or no glslc' \
            --config cuda-vulkan-sems --skip cuda-vulkan-shared-semaphores 'no Vulkan headers or no glslc'
endif

# C++: the implementation compiled as C++17 (g++ / clang++, <atomic>), the C test programs linked against
# it (they include accel.h with ACCEL_IMPLEMENTATION_INCLUDED, so only their declarations are used).
CXX_IMPL_FLAGS := -x c++ -std=c++17 -O1 -g -Wall -Wextra -Wpedantic -Werror -I.
$(eval $(call test_config,cxx,$(GCC) $(TESTFLAGS),$(LIBS) -lstdc++,,$(CORE_TESTS),$(BUILD)/cxx/accel_impl.o))
$(eval $(call test_config,clangxx,$(CLANG) $(TESTFLAGS),$(LIBS) -lstdc++,,$(CORE_TESTS),$(BUILD)/clangxx/accel_impl.o))
# Windows: mingw-w64 cross build (Win32 thread shim), run under wine. Emscripten with -pthread (the
# threaded CPU backend on Web Workers), run under node. Each is skipped when its tools are missing.
MINGW_CC ?= x86_64-w64-mingw32-gcc
WINE     ?= wine
EMCC     ?= emcc
HAVE_MINGW := $(shell command -v $(MINGW_CC) >/dev/null 2>&1 && command -v $(WINE) >/dev/null 2>&1 && echo 1)
HAVE_EMCC  := $(shell command -v $(EMCC) >/dev/null 2>&1 && echo 1)
# each mingw program through tests/wine_run.sh: a wineserver kept up 30 s past its last client
WINE_RUN   := env WINEPREFIX=$(abspath $(BUILD))/wine WINEDEBUG=-all tests/wine_run.sh $(WINE)
# emscripten 3.1.6 finds its acorn module through NODE_PATH with a non-Debian node; a node with fetch()
# (>= 18) makes its loader fetch the .wasm by path, which fails: --no-experimental-fetch
EMCC_ENV   := env NODE_PATH=$${NODE_PATH:-/usr/share/nodejs}
# (the -s settings are the linker's: the implementation object is compiled with EMFLAGS alone)
EMFLAGS    := -pthread
EMLDFLAGS  := -pthread -sPROXY_TO_PTHREAD -sEXIT_RUNTIME=1 -sNODERAWFS=1 -sINITIAL_MEMORY=268435456
EM_RUN      = $(NODE) $(shell $(NODE) --no-experimental-fetch -e 0 >/dev/null 2>&1 && echo --no-experimental-fetch)
$(eval $(call test_config,mingw,$(MINGW_CC) $(TESTFLAGS) -D_WIN32_WINNT=0x0600,-static-libgcc,.exe,$(CORE_TESTS) test_cuda))
$(eval $(call test_config,emscripten,$(EMCC_ENV) $(EMCC) $(TESTFLAGS) $(EMFLAGS),$(EMLDFLAGS),.js,$(TESTS)))

$(BUILD)/cxx/accel_impl.o: $(BUILD)/checks/impl.c accel.h $(BUILD)/cxx/flags
	$(GXX) $(CXX_IMPL_FLAGS) -c -o $@ $<
$(BUILD)/clangxx/accel_impl.o: $(BUILD)/checks/impl.c accel.h $(BUILD)/clangxx/flags
	$(CLANG)++ $(CXX_IMPL_FLAGS) -c -o $@ $<

# ---- compile checks: public header as C99 / C++11 / C++17, implementation as C17, ACCEL_STATIC x2 --
CHK := $(BUILD)/checks
$(CHK)/header.c:
	@mkdir -p $(@D)
	printf '#include "accel.h"\n#include "accel.h"\n' > $@
$(CHK)/impl.c:
	@mkdir -p $(@D)
	printf '#include "accel.h"\n#define ACCEL_IMPLEMENTATION\n#include "accel.h"\n#include "accel.h"\n' > $@
$(CHK)/static_%.c:
	@mkdir -p $(@D)
	printf '#define ACCEL_STATIC\n#define ACCEL_IMPLEMENTATION\n#include "accel.h"\nconst char* check_$*(void);\nconst char* check_$*(void) { return accel_result_string(ACCEL_OK); }\n' > $@
$(CHK)/static_main.c:
	@mkdir -p $(@D)
	printf 'const char* check_a(void);\nconst char* check_b(void);\nint main(void) { return check_a()[0] && check_b()[0] ? 0 : 1; }\n' > $@
$(CHK)/vk_header.c:
	@mkdir -p $(@D)
	printf '#include "accel.h"\n#include "accel_vulkan.h"\n#include "accel_vulkan.h"\n' > $@
$(CHK)/vk_impl.c:
	@mkdir -p $(@D)
	printf '#define ACCEL_IMPLEMENTATION\n#include "accel.h"\n#define ACCEL_VULKAN_IMPLEMENTATION\n#include "accel_vulkan.h"\n#include "accel_vulkan.h"\n' > $@
$(CHK)/cuda_header.c:
	@mkdir -p $(@D)
	printf '#include "accel.h"\n#include "accel_cuda.h"\n#include "accel_cuda.h"\n' > $@
$(CHK)/cuda_impl.c:
	@mkdir -p $(@D)
	printf '#define ACCEL_IMPLEMENTATION\n#include "accel.h"\n#define ACCEL_CUDA_IMPLEMENTATION\n#include "accel_cuda.h"\n#include "accel_cuda.h"\n' > $@
# a vulkan/vulkan_core.h that cannot be included: the public part of accel_vulkan.h must not need it
$(CHK)/novulkan/vulkan/vulkan_core.h:
	@mkdir -p $(@D)
	printf '#error "no Vulkan headers here: accel_vulkan.h must not include them"\n' > $@
# every header of the library implemented in one translation unit (the GPU backend headers where present)
ALL_HEADERS := $(wildcard accel.h accel_vulkan.h accel_cuda.h)
$(CHK)/all_in_one.c: FORCE
	@mkdir -p $(@D)
	@{ echo '#define ACCEL_IMPLEMENTATION'; echo '#define ACCEL_VULKAN_IMPLEMENTATION'; echo '#define ACCEL_CUDA_IMPLEMENTATION'; \
	   for h in $(ALL_HEADERS); do echo "#include \"$$h\""; done; \
	   echo 'int main(void) { return accel_backend_name(accel_cpu_backend())[0] == 99 ? 0 : 1; }'; } > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp
CHECK_SRCS := $(CHK)/header.c $(CHK)/impl.c $(CHK)/static_a.c $(CHK)/static_b.c $(CHK)/static_main.c $(CHK)/all_in_one.c \
              $(CHK)/cuda_header.c $(CHK)/cuda_impl.c $(CHK)/vk_header.c $(CHK)/vk_impl.c $(CHK)/novulkan/vulkan/vulkan_core.h
CMAKE    ?= cmake
HAVE_CMAKE := $(shell command -v $(CMAKE) >/dev/null 2>&1 && echo 1)
HAVE_WASI  := $(if $(and $(WASM_LD),$(wildcard $(WASI_SYSROOT)/include/wasm32-wasi/stdio.h)),1)
TCC      ?= tcc
HAVE_TCC := $(shell command -v $(TCC) >/dev/null 2>&1 && echo 1)
VULKAN_INC_OK := $(if $(wildcard accel_vulkan.h),$(shell printf '\043include <vulkan/vulkan_core.h>\n' | $(GCC) -E -x c - >/dev/null 2>&1 && echo 1),1)

# tools-of-.ci/packages: with every package of .ci/packages installed, each tool variable above must be
# set (a make that parsed this file before the install would have them empty). The check applies only
# where dpkg-query says every package is in (not under ACCEL_NO_INSTALL=1 with some missing, nor off
# Debian). LVP_ICD counts only when not set by the user (LVP_ICD= runs on the machine's own driver).
TOOL_VARS = HAVE_GLSLC=$(HAVE_GLSLC) HAVE_VK_HEADERS=$(HAVE_VK_HEADERS) VULKAN_INC_OK=$(VULKAN_INC_OK) \
            HAVE_VULKAN=$(HAVE_VULKAN) $(if $(filter file,$(origin LVP_ICD)),LVP_ICD=$(LVP_ICD)) \
            VK_LAYER=$(VK_LAYER) HAVE_MINGW=$(HAVE_MINGW) HAVE_EMCC=$(HAVE_EMCC) WASM_LD=$(WASM_LD) \
            HAVE_WASI=$(HAVE_WASI) HAVE_TCC=$(HAVE_TCC) HAVE_CMAKE=$(HAVE_CMAKE) HAVE_TBB=$(HAVE_TBB) \
            HAVE_MPI=$(HAVE_MPI)
TOOLS_WHY_NOT = $(shell tests/check_tools.sh --why-not)
# footprint: a minimal CPU program's stripped -Os size, default and small build (x86-64 limits)
GCC_X86_64 = $(filter x86_64-%,$(shell $(GCC) -dumpmachine 2>/dev/null))

EXAMPLE_KERNELS := $(wildcard examples/kernels/*.comp)
CHECKS = \
  $(foreach k,$(EXAMPLE_KERNELS),$(if $(HAVE_GLSLC),--cmd $(notdir $(k)) \
    '$(GLSLC) -fshader-stage=compute --target-env=vulkan1.2 -o $(CHK)/$(notdir $(k)).spv $(k) && $(SPIRVVAL) --target-env vulkan1.2 $(CHK)/$(notdir $(k)).spv',\
    --skip $(notdir $(k)) '$(GLSLC) not found')) \
  $(foreach e,$(EXAMPLES),--cmd $(e).c-warnings '$(GCC) -std=c11 -O2 -c -o $(CHK)/scratch.o $(WARN) -I. examples/$(e).c && $(CLANG) -std=c11 -fsyntax-only $(WARN) -I. examples/$(e).c && $(GCC) -std=c11 -O2 -c -o $(CHK)/scratch.o $(WARN) -DACCEL_EXAMPLE_HAVE_CUDA -I. examples/$(e).c && $(CLANG) -std=c11 -fsyntax-only $(WARN) -DACCEL_EXAMPLE_HAVE_CUDA -I. examples/$(e).c') \
  --cmd c99-header   '$(GCC) -std=c99 -fsyntax-only $(WARN) -I. $(CHK)/header.c' \
  --cmd c++11-header '$(GXX) -std=c++11 -x c++ -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I. $(CHK)/header.c' \
  --cmd c++17-header '$(GXX) -std=c++17 -x c++ -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I. $(CHK)/header.c' \
  --cmd c17-impl     '$(GCC) -std=c17 -O2 -c $(WARN) -I. $(CHK)/impl.c -o $(CHK)/impl.o' \
  --cmd clang-c17-impl '$(CLANG) -std=c17 -O2 -c $(WARN) -I. $(CHK)/impl.c -o $(CHK)/impl-clang.o' \
  $(if $(HAVE_VK_HEADERS),\
    --cmd vk-c99-header '$(GCC) -std=c99 -fsyntax-only $(WARN) -I. $(CHK)/vk_header.c' \
    --cmd vk-clang-c99-header '$(CLANG) -std=c99 -fsyntax-only $(WARN) -I. $(CHK)/vk_header.c' \
    --cmd vk-c++11-header '$(GXX) -std=c++11 -x c++ -fsyntax-only $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) -I. $(CHK)/vk_header.c' \
    --cmd vk-clang-c++11-header '$(CLANG) -std=c++11 -x c++ -fsyntax-only $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) -I. $(CHK)/vk_header.c' \
    --cmd vk-c11-impl '$(GCC) -std=c11 -O2 -c $(WARN) -I. $(CHK)/vk_impl.c -o $(CHK)/vk_impl.o' \
    --cmd vk-clang-c11-impl '$(CLANG) -std=c11 -O2 -c $(WARN) -I. $(CHK)/vk_impl.c -o $(CHK)/vk_impl-clang.o' \
    --cmd vk-pthreads-impl '$(GCC) -std=c11 -O2 -c $(WARN) -DACCEL_USE_PTHREADS -I. $(CHK)/vk_impl.c -o $(CHK)/vk_impl-pt.o' \
    --cmd vk-nothreads-stub '$(GCC) -std=c11 -O2 -c $(WARN) -DACCEL_NO_THREADS -I. $(CHK)/vk_impl.c -o $(CHK)/vk_impl-nt.o',\
    --skip vk-headers 'no <vulkan/vulkan_core.h>') \
  --cmd vk-public-without-vulkan-headers '$(GCC) -std=c99 -fsyntax-only $(WARN) -I$(CHK)/novulkan -I. tests/check_vulkan_public.c && $(CLANG) -std=c99 -fsyntax-only $(WARN) -I$(CHK)/novulkan -I. tests/check_vulkan_public.c && $(GXX) -std=c++11 -x c++ -fsyntax-only $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) -I$(CHK)/novulkan -I. tests/check_vulkan_public.c' \
  $(if $(HAVE_VK_HEADERS),\
    --cmd vk-public-with-vulkan-headers '$(GCC) -std=c99 -fsyntax-only $(WARN) -DCHECK_WITH_VULKAN_HEADERS -I. tests/check_vulkan_public.c && $(CLANG)++ -std=c++11 -x c++ -fsyntax-only $(filter-out -Wstrict-prototypes -Wmissing-prototypes,$(WARN)) -DCHECK_WITH_VULKAN_HEADERS -I. tests/check_vulkan_public.c',\
    --skip vk-public-with-vulkan-headers 'no <vulkan/vulkan_core.h>') \
  $(if $(HAVE_VK_HEADERS),\
    --cmd bench-shared-waits-on-lavapipe '$(MAKE) --no-print-directory -s $(BUILD)/bench_shared_waits $(MOCK_LIB) && { $(VK_RUN_ENV) ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB) $(BUILD)/bench_shared_waits --quick; rc=$$?; test $$rc = 0 -o $$rc = 77; }',\
    --skip bench-shared-waits-on-lavapipe 'no <vulkan/vulkan_core.h>') \
  --cmd cuda-c99-header       '$(GCC) -std=c99 -fsyntax-only $(WARN) -I. $(CHK)/cuda_header.c && $(CLANG) -std=c99 -fsyntax-only $(WARN) -I. $(CHK)/cuda_header.c' \
  --cmd cuda-c++11-header     '$(GXX) -std=c++11 -x c++ -fsyntax-only -Wall -Wextra -Wpedantic -Werror -Wshadow -I. $(CHK)/cuda_header.c && $(CLANG) -std=c++11 -x c++ -fsyntax-only -Wall -Wextra -Wpedantic -Werror -Wshadow -I. $(CHK)/cuda_header.c' \
  --cmd cuda-c11-impl         '$(GCC) -std=c11 -O2 -c $(WARN) -I. $(CHK)/cuda_impl.c -o $(CHK)/cuda_impl.o && $(GCC) -std=c11 -O2 -c $(WARN) -DACCEL_USE_PTHREADS -I. $(CHK)/cuda_impl.c -o $(CHK)/cuda_impl_pt.o' \
  --cmd clang-cuda-c11-impl   '$(CLANG) -std=c11 -O2 -c $(WARN) -I. $(CHK)/cuda_impl.c -o $(CHK)/cuda_impl_clang.o && $(CLANG) -std=c11 -O2 -c $(WARN) -DACCEL_NO_THREADS -I. $(CHK)/cuda_impl.c -o $(CHK)/cuda_impl_nt.o' \
  --cmd bench-cuda-builds-and-smoke-runs '$(MAKE) --no-print-directory -s $(BUILD)/bench_cuda && $(BUILD)/bench_cuda --quick' \
  --cmd bench-cuda-on-mock '$(MAKE) --no-print-directory -s $(BUILD)/bench_cuda $(MOCK_LIB) && ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB) $(BUILD)/bench_cuda --quick' \
  --cmd cuda-blocking-on-mock '$(MAKE) --no-print-directory -s $(BUILD)/cuda_blocking $(MOCK_LIB) && ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB) $(BUILD)/cuda_blocking | tail -n 1 | grep -qx "cuda_blocking: 5 calls block"' \
  --cmd cuda-blocking-contexts-on-mock '$(MAKE) --no-print-directory -s $(BUILD)/cuda_blocking $(MOCK_LIB) && MOCK_CUDA_DEVICES=2 ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB) $(BUILD)/cuda_blocking --contexts | tail -n 1 | grep -qx "cuda_blocking: across contexts: 3 calls block"' \
  --cmd examples-cuda-without-driver '$(MAKE) --no-print-directory -s examples && for e in $(EXAMPLES); do ACCEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1 $(BUILD)/$$e cuda >$(CHK)/$$e.cuda.out 2>&1; rc=$$?; [ $$rc = 1 ] && grep -q "no cuda device: ACCEL_ERROR_UNAVAILABLE" $(CHK)/$$e.cuda.out && grep -q "accel_cuda: unavailable" $(CHK)/$$e.cuda.out || { echo "$$e cuda: exit $$rc"; cat $(CHK)/$$e.cuda.out; exit 1; }; done' \
  --cmd examples-cuda-on-mock '$(MAKE) --no-print-directory -s examples $(MOCK_LIB) && for e in $(EXAMPLES); do ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB) $(BUILD)/$$e cuda || exit 1; done' \
  --cmd static-twice '$(GCC) -std=c11 -O1 $(WARN) -I. $(CHK)/static_a.c $(CHK)/static_b.c $(CHK)/static_main.c -o $(CHK)/static_twice $(LIBS) && $(CHK)/static_twice' \
  --cmd clang-c99-header '$(CLANG) -std=c99 -fsyntax-only $(WARN) -I. $(CHK)/header.c' \
  --cmd c11-impl     '$(GCC) -std=c11 -O2 -c $(WARN) -I. $(CHK)/impl.c -o $(CHK)/scratch.o' \
  --cmd clang-c11-impl '$(CLANG) -std=c11 -O2 -c $(WARN) -I. $(CHK)/impl.c -o $(CHK)/scratch.o' \
  --cmd c11-impl-pthreads-nothreads '$(GCC) -std=c11 -c $(WARN) -DACCEL_USE_PTHREADS -I. $(CHK)/impl.c -o $(CHK)/scratch.o && $(CLANG) -std=c17 -c $(WARN) -DACCEL_NO_THREADS -I. $(CHK)/impl.c -o $(CHK)/scratch.o' \
  --cmd c++17-impl   '$(GXX) -x c++ -std=c++17 -O2 -c -Wall -Wextra -Wpedantic -Werror -Wshadow -I. $(CHK)/impl.c -o $(CHK)/scratch.o && $(GXX) -x c++ -std=c++17 -c -Wall -Wextra -Werror -DACCEL_NO_THREADS -I. $(CHK)/impl.c -o $(CHK)/scratch.o' \
  --cmd clang++17-impl '$(CLANG)++ -x c++ -std=c++17 -O2 -c -Wall -Wextra -Wpedantic -Werror -Wshadow -I. $(CHK)/impl.c -o $(CHK)/scratch.o && $(CLANG)++ -x c++ -std=c++17 -c -Wall -Wextra -Werror -DACCEL_USE_PTHREADS -I. $(CHK)/impl.c -o $(CHK)/scratch.o' \
  --cmd c++11-impl   '$(GXX) -x c++ -std=c++11 -c -Wall -Wextra -Wpedantic -Werror -I. $(CHK)/impl.c -o $(CHK)/scratch.o' \
  --cmd spin-0-impl  '$(GCC) -std=c11 -c $(WARN) -DACCEL_CPU_SPIN_NS=0 -I. $(CHK)/impl.c -o $(CHK)/scratch.o && $(GXX) -x c++ -std=c++17 -c -Wall -Wextra -Werror -DACCEL_CPU_SPIN_NS=0 -I. $(CHK)/impl.c -o $(CHK)/scratch.o' \
  $(if $(VULKAN_INC_OK),--cmd all-in-one-tu '$(GCC) -std=c11 -O1 $(WARN) -I. $(CHK)/all_in_one.c -o $(CHK)/all_in_one $(LIBS) -ldl && $(CHK)/all_in_one',--skip all-in-one-tu 'vulkan/vulkan_core.h not found') \
  $(if $(VULKAN_INC_OK),--cmd all-in-one-tu-wconversion '$(GCC) -std=c11 -O1 $(WARN) -Wconversion -c -I. $(CHK)/all_in_one.c -o $(CHK)/scratch.o && $(CLANG) -std=c11 -fsyntax-only $(WARN) -Wconversion -I. $(CHK)/all_in_one.c',--skip all-in-one-tu-wconversion 'vulkan/vulkan_core.h not found') \
  $(if $(VULKAN_INC_OK),--cmd all-in-one-tu-c++17 '$(GXX) -x c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -Wshadow -c -I. $(CHK)/all_in_one.c -o $(CHK)/scratch.o && $(CLANG)++ -x c++ -std=c++11 -Wall -Wextra -Wpedantic -Werror -Wshadow -c -I. $(CHK)/all_in_one.c -o $(CHK)/scratch.o',--skip all-in-one-tu-c++17 'vulkan/vulkan_core.h not found') \
  --cmd nm-exports-only-accel 'tests/check_exports.sh "$(GCC) -std=c11 -O2 $(WARN) -I." $(CHK)/impl.c $(CHK)/exports.o' \
  $(if $(HAVE_TCC),--cmd tcc-header '$(TCC) -I. -c $(CHK)/header.c -o $(CHK)/scratch.o',--skip tcc-header '$(TCC) not found') \
  $(if $(HAVE_MINGW),--cmd mingw-c++17-and-nothreads-impl '$(MINGW_CC:gcc=g++) -x c++ -std=c++17 -c -Wall -Wextra -Wpedantic -Werror -I. $(CHK)/impl.c -o $(CHK)/scratch.o && $(MINGW_CC) -std=c11 -c $(WARN) -DACCEL_NO_THREADS -I. $(CHK)/impl.c -o $(CHK)/scratch.o',--skip mingw-c++17-and-nothreads-impl '$(MINGW_CC) not found') \
  $(if $(and $(HAVE_MINGW),$(VULKAN_INC_OK)),--cmd mingw-all-in-one-tu 'mkdir -p $(CHK)/mingw_vk && ln -sfn /usr/include/vulkan $(CHK)/mingw_vk/vulkan && ln -sfn /usr/include/vk_video $(CHK)/mingw_vk/vk_video && $(MINGW_CC) -std=c11 -c $(WARN) -I. -I$(CHK)/mingw_vk $(CHK)/all_in_one.c -o $(CHK)/scratch.o && $(MINGW_CC:gcc=g++) -x c++ -std=c++17 -c -Wall -Wextra -Wpedantic -Werror -I. -I$(CHK)/mingw_vk $(CHK)/all_in_one.c -o $(CHK)/scratch.o',--skip mingw-all-in-one-tu '$(MINGW_CC) or vulkan/vulkan_core.h not found') \
  --cmd quickstart-c-and-c++ 'tests/check_quickstart.sh $(CHK)/quickstart same c c++' \
  --cmd would-block-c++ '$(MAKE) --no-print-directory -s $(MOCK_LIB) && $(CLANG)++ -x c++ -std=c++17 -O1 -g -fsanitize=enum -fno-sanitize-recover=enum -Wall -Wextra -Werror -I. tests/check_would_block.c -o $(CHK)/would_block $(LIBS) && ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB) $(CHK)/would_block' \
  --cmd quickstart-cuda '$(MAKE) --no-print-directory -s $(MOCK_LIB) && MOCK_LIB=$(MOCK_LIB) tests/check_quickstart.sh $(CHK)/quickstart cuda' \
  $(if $(HAVE_VULKAN),--cmd quickstart-vulkan 'LVP_ICD=$(LVP_ICD) tests/check_quickstart.sh $(CHK)/quickstart vulkan',--skip quickstart-vulkan 'no Vulkan headers or no glslc') \
  $(if $(HAVE_CMAKE),--cmd cmake-c-c++-mixed-fetchcontent 'CMAKE=$(CMAKE) tests/check_cmake.sh $(CHK)/cmake',--skip cmake-c-c++-mixed-fetchcontent '$(CMAKE) not found') \
  --cmd c99-impl-stops-with-a-clear-error '! $(GCC) -std=c99 -c -I. $(CHK)/impl.c -o $(CHK)/scratch.o 2>$(CHK)/c99.err && grep -q "the implementation (ACCEL_IMPLEMENTATION) needs C11 or C++11: use -std=gnu11" $(CHK)/c99.err && ! $(CLANG) -std=c99 -c -I. $(CHK)/impl.c -o $(CHK)/scratch.o 2>$(CHK)/c99.err && grep -q "needs C11 or C++11" $(CHK)/c99.err' \
  --cmd example-build-lines-in-a-fresh-copy 'tests/check_build_lines.sh $(CHK)/fresh' \
  $(if $(HAVE_WASI),--cmd run-wasm '$(MAKE) --no-print-directory -s run-wasm',--skip run-wasm 'no wasi-libc or no wasm-ld') \
  $(if $(HAVE_EMCC),--cmd emscripten-example-by-the-readme '$(EMCC_ENV) $(EMCC) -std=gnu11 -O2 -I. examples/saxpy.c -o $(CHK)/saxpy_em.js -sALLOW_MEMORY_GROWTH=1 && $(EM_RUN) $(CHK)/saxpy_em.js | grep "OK$$"',--skip emscripten-example-by-the-readme '$(EMCC) not found') \
  --cmd deps-script 'printf "make\naccel-no-such-package\n" > $(CHK)/packages.test && { env -u ACCEL_NO_INSTALL ACCEL_DEPS_PACKAGES=$(CHK)/packages.test ACCEL_DEPS_AS_USER=1 .ci/deps.sh --ensure > $(CHK)/deps.out; test $$? = 1; } && grep -qx "sudo apt-get install -y --no-install-recommends accel-no-such-package" $(CHK)/deps.out && .ci/deps.sh --list | grep -qx cmake' \
  --cmd readme-apt-line-is-.ci/packages 'tests/check_readme.sh' \
  --cmd make-run-builds-mpi-halo-from-scratch '[ -z "$(HAVE_MPI)" ] || $(MAKE) --no-print-directory -n run BUILD=$(CHK)/fresh-run | grep -q "$(MPICC) .*mpi_halo"' \
  --cmd make-help '$(MAKE) --no-print-directory help | grep -q "make run-wasm"' \
  $(if $(HAVE_EMCC),--cmd emscripten-no-pthreads-impl '$(EMCC_ENV) $(EMCC) -std=c11 -c $(WARN) -I. $(CHK)/impl.c -o $(CHK)/scratch.o',--skip emscripten-no-pthreads-impl '$(EMCC) not found') \
  $(if $(TOOLS_WHY_NOT),--skip tools-of-.ci/packages '$(TOOLS_WHY_NOT)',--cmd tools-of-.ci/packages 'SPIRVVAL=$(SPIRVVAL) VALGRIND=$(VALGRIND) CLANG=$(CLANG) SCRATCH=$(CHK) tests/check_tools.sh $(TOOL_VARS)') \
  $(MPI_CHECKS) \
  $(if $(GCC_X86_64),--cmd footprint 'GCC=$(GCC) tests/check_size.sh $(CHK)/size',--skip footprint '$(GCC) does not target x86-64: the limits are x86-64 sizes')


# ---- the test targets ---------------------------------------------------------------------------
TEST_CONFIGS := gcc clang pthreads nothreads small small-nothreads cuda wasm cxx clangxx $(if $(HAVE_MINGW),mingw) $(if $(HAVE_EMCC),emscripten)
build-test: $(foreach c,$(TEST_CONFIGS),$($(c)_BINS)) $(CHECK_SRCS) $(MOCK_LIB) $(VK_BUILD)
build-vulkan: $(VK_BUILD) $(CHECK_SRCS)
build-asan: $(asan_BINS) $(asan-nothreads_BINS) $(asan-cuda_BINS) $(MOCK_LIB)
# test_cuda.c itself too, on the mock only (its loader tests choose their own libraries)
TSAN_CUDA_OWN := $(BUILD)/tsan-cuda/test_cuda
build-tsan: $(tsan_BINS) $(tsan-cuda_BINS) $(TSAN_CUDA_OWN) $(MOCK_TSAN_LIB) $(if $(HAVE_VULKAN),$(CUVK_TSAN_BIN))

RUN_TESTS = tests/run.sh
config_args = --config $(1) --runner "$(2)" $($(1)_BINS)

deps:
	@.ci/deps.sh --ensure

# make test in two makes: this one installs what is missing (deps), then test-run runs in a second make,
# which parses this file again, so that every HAVE_* (and WASM_LD, VK_LAYER, ...) sees the tools just
# installed. test-run alone is make test without the install step.
test: deps
	@$(MAKE) --no-print-directory test-run

test-run:
	-@$(SUBMAKE) build-test
	@echo "==== running the tests (ACCEL_TEST_BACKEND=$(ACCEL_TEST_BACKEND))"
	@$(RUN_TESTS) $(call config_args,gcc,) $(call config_args,clang,) $(call config_args,pthreads,) \
	  $(call config_args,nothreads,) $(call config_args,small,) $(call config_args,small-nothreads,) \
	  $(call config_args,cuda,env ACCEL_TEST_BACKEND=cuda) \
	  $(call config_args,cuda-mock,$(MOCK_ENV)) --runner "env ACCEL_CUDA_LIBRARY=$(MOCK_LIB)" $(BUILD)/gcc/test_cuda \
	  $(call config_args,cuda-mock-ring,$(MOCK_ENV) ACCEL_CUDA_NO_MEMOPS=1) \
	  --config cuda-mock-2dev --runner "$(MOCK_ENV) MOCK_CUDA_DEVICES=2" $(BUILD)/cuda/test_devices \
	    $(BUILD)/cuda/test_device_waits \
	  --config cuda-mock-2dev-nopeer --runner "$(MOCK_ENV) MOCK_CUDA_DEVICES=2 MOCK_CUDA_NO_PEER=1" \
	    $(BUILD)/cuda/test_devices $(BUILD)/cuda/test_device_waits \
	  --config cuda-mock-2dev-ring --runner "$(MOCK_ENV) MOCK_CUDA_DEVICES=2 ACCEL_CUDA_NO_MEMOPS=1" \
	    $(BUILD)/cuda/test_devices $(BUILD)/cuda/test_device_waits \
	  --config cuda-mock-nopools --runner "$(MOCK_ENV) MOCK_CUDA_NO_POOLS=1" $(BUILD)/cuda/test_queue_memory \
	  $(call config_args,wasm,$(NODE_WASI)) \
	  $(call config_args,cxx,) $(call config_args,clangxx,) \
	  $(if $(HAVE_MINGW),$(call config_args,mingw,$(WINE_RUN)),--config mingw --skip mingw-wine '$(MINGW_CC) or $(WINE) not found') \
	  $(if $(HAVE_EMCC),$(call config_args,emscripten,$(EM_RUN)),--config emscripten --skip emscripten-pthreads '$(EMCC) not found') \
	  $(VK_RUNS) --config checks --runner "" $(CHECKS)

test-vulkan:
	-@$(SUBMAKE) build-vulkan
	@echo "==== running the tests on the Vulkan backend (LVP_ICD=$(LVP_ICD))"
	@$(RUN_TESTS) $(VK_RUNS)

test-asan:
	-@$(SUBMAKE) build-asan
	@echo "==== running the tests under ASan+UBSan (ACCEL_TEST_BACKEND=$(ACCEL_TEST_BACKEND))"
	@ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1} \
	 UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1} \
	 $(RUN_TESTS) $(call config_args,asan,) $(call config_args,asan-nothreads,) $(call config_args,asan-cuda,$(MOCK_ENV)) \
	   --config asan-cuda-mock --runner "env ACCEL_CUDA_LIBRARY=$(MOCK_LIB)" $(BUILD)/asan/test_cuda

# TSan of clang 14 cannot handle the mmap randomisation of newer kernels; run without it where allowed.
# The CUDA mock's event-ring mode too, for the programs whose queues wait on each other's points (its GPU
# waits are events there: accel_cuda.h, "cuda: GPU waits in the event-ring mode"), and the recover, whose
# gated waits on the host read the signals' words.
TSAN_RING_BINS := $(addprefix $(BUILD)/tsan-cuda/,test_ordering test_queues test_signals test_stress test_teardown test_recover)
test-tsan:
	-@$(SUBMAKE) build-tsan
	@echo "==== running the threaded tests under TSan, pthread shim (ACCEL_TEST_BACKEND=$(ACCEL_TEST_BACKEND))"
	@if setarch "$$(uname -m)" -R true 2>/dev/null; then norand="setarch $$(uname -m) -R"; else norand=""; fi; \
	 TSAN_OPTIONS=$${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1:history_size=4} \
	 $(RUN_TESTS) --config tsan --runner "$$norand" $(tsan_BINS) \
	   --config tsan-cuda --runner "$$norand env ACCEL_TEST_BACKEND=cuda ACCEL_CUDA_LIBRARY=$(MOCK_TSAN_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_TSAN_LIB)" $(tsan-cuda_BINS) \
	   --config tsan-cuda-ring --runner "$$norand env ACCEL_TEST_BACKEND=cuda ACCEL_CUDA_NO_MEMOPS=1 ACCEL_CUDA_LIBRARY=$(MOCK_TSAN_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_TSAN_LIB)" $(TSAN_RING_BINS) \
	   --config tsan-cuda-mock --runner "$$norand env ACCEL_CUDA_LIBRARY=$(MOCK_TSAN_LIB)" $(TSAN_CUDA_OWN) \
	   $(if $(HAVE_VULKAN),--config tsan-cuda-vulkan --runner "$$norand $(CUVK_TSAN_ENV)" $(CUVK_TSAN_BIN) \
	     --config tsan-cuda-vulkan-sems --runner "$$norand $(CUVK_TSAN_ENV) $(CUVK_SEMS)" $(CUVK_TSAN_BIN))

# ---- valgrind memcheck: the failure-path tests (allocation sweep, fuzz replay, regressions, hang
# diagnostics) with the pthread shim and without threads; a memcheck error or a definite leak fails.
VALGRIND ?= valgrind
VALGRIND_TESTS ?= test_alloc test_fuzz_replay test_hardening test_debug
VALGRIND_RUN := $(VALGRIND) -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite,indirect
test-valgrind:
	@if command -v $(VALGRIND) >/dev/null 2>&1; then \
	   $(SUBMAKE) $(VALGRIND_TESTS:%=$(BUILD)/pthreads/%) $(VALGRIND_TESTS:%=$(BUILD)/nothreads/%); \
	   echo "==== the failure-path tests under valgrind memcheck (ACCEL_TEST_BACKEND=$(ACCEL_TEST_BACKEND))"; \
	   $(RUN_TESTS) --config valgrind-pthreads --runner "$(VALGRIND_RUN)" $(VALGRIND_TESTS:%=$(BUILD)/pthreads/%) \
	     --config valgrind-nothreads --runner "$(VALGRIND_RUN)" $(VALGRIND_TESTS:%=$(BUILD)/nothreads/%); \
	 else echo "==== $(VALGRIND) not found: skipped"; echo "0 passed, 0 failed, 1 skipped"; fi

# ---- fuzzers (libFuzzer, clang): make fuzz FUZZ_SECONDS=60 ------------------------------------------
# tests/fuzz_api.c with ASan+UBSan, threaded and ACCEL_NO_THREADS, from the seed corpus tests/fuzz_corpus/;
# tests/fuzz_spirv.c (the SPIR-V checks of accel_program_create, and lavapipe's accel_program_create where
# installed) from tests/fuzz_spirv_corpus/, built where the Vulkan headers are. Each runs FUZZ_SECONDS.
# Without libFuzzer (clang's compiler-rt) each counts as skipped.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -std=c11 -g -O1 $(WARN) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. -Itests
FUZZ_BINS := $(BUILD)/fuzz/fuzz_api $(BUILD)/fuzz/fuzz_api_nothreads $(if $(HAVE_VK_HEADERS),$(BUILD)/fuzz/fuzz_spirv)
$(BUILD)/fuzz/fuzz_spirv: tests/fuzz_spirv.c $(HEADERS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(LIBS)
$(BUILD)/fuzz/fuzz_api: tests/fuzz_api.c $(HEADERS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(LIBS)
$(BUILD)/fuzz/fuzz_api_nothreads: tests/fuzz_api.c $(HEADERS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) -DACCEL_NO_THREADS -o $@ $< $(LIBS)
build-fuzz: $(FUZZ_BINS)

fuzz:
	@mkdir -p $(BUILD)/fuzz
	@if printf 'int LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char* d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
	     | $(CLANG) -fsanitize=fuzzer -x c - -o $(BUILD)/fuzz/probe >/dev/null 2>&1; then \
	   $(SUBMAKE) build-fuzz; \
	   echo "==== fuzzing for $(FUZZ_SECONDS)s per build (ACCEL_TEST_BACKEND=$(ACCEL_TEST_BACKEND))"; \
	   $(if $(LVP_ICD),VK_DRIVER_FILES=$(LVP_ICD)) tests/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BINS); \
	 else echo "==== $(CLANG) cannot link -fsanitize=fuzzer (libclang-rt-14-dev): fuzzing skipped"; \
	   echo "0 passed, 0 failed, $(words $(FUZZ_BINS)) skipped"; fi

# ---- soak: random pipelines, several queues and host threads, signal failure injection --------------
# make soak SOAK_SECONDS=60 (ASan+UBSan build, C11 threads); make soak-tsan SOAK_SECONDS=30 (TSan, pthread
# shim). tests/soak.c prints its seed (SOAK_SEED=... reproduces a run) and its own summary line.
SOAK_SECONDS ?= 60
$(BUILD)/soak/soak: tests/soak.c $(HEADERS) $(KERNEL_INCS)
	@mkdir -p $(@D)
	$(GCC) $(TESTFLAGS) $(SAN_ASAN) -o $@ $< $(LIBS)
$(BUILD)/soak/soak-tsan: tests/soak.c $(HEADERS) $(KERNEL_INCS)
	@mkdir -p $(@D)
	$(CLANG) $(TESTFLAGS) $(SAN_TSAN) -DACCEL_USE_PTHREADS -o $@ $< $(LIBS)

# make soak-gpu SOAK_SECONDS=30: the soak built with the GPU backends (ASan+UBSan), on lavapipe (no
# validation layer: the soak wants its speed; lavapipe's own allocations at exit are not accel's, so no
# leak report: the soak's counting allocator checks accel's) and on the mock CUDA driver in both signal
# modes. On a GPU backend the model allows what DESIGN 6.1 allows after a hand-off (see tests/soak.c).
$(BUILD)/soak/soak-gpu: tests/soak.c $(HEADERS) $(KERNEL_INCS)
	@mkdir -p $(@D)
	$(GCC) $(TESTFLAGS) $(SAN_ASAN) $(if $(HAVE_VULKAN),-DACCEL_TEST_HAVE_VULKAN) -DACCEL_TEST_HAVE_CUDA -o $@ $< $(LIBS)
# and under TSan on the mock (pthread shim), without failure injection: work that a failure released
# after its wait went to the GPU may run beside what it waited for (DESIGN 6.1), which TSan reports
$(BUILD)/soak/soak-tsan-cuda: tests/soak.c $(HEADERS) $(KERNEL_INCS)
	@mkdir -p $(@D)
	$(CLANG) $(TESTFLAGS) $(SAN_TSAN) -DACCEL_USE_PTHREADS -DACCEL_TEST_HAVE_CUDA -o $@ $< $(LIBS)
SOAK_GPU_ENV = env SOAK_SECONDS=$(SOAK_SECONDS) ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=0}
SOAK_TSAN_MOCK = env SOAK_SECONDS=$(SOAK_SECONDS) SOAK_NO_FAIL=1 ACCEL_TEST_BACKEND=cuda \
  ACCEL_CUDA_LIBRARY=$(MOCK_TSAN_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_TSAN_LIB) \
  TSAN_OPTIONS=$${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:history_size=4}
soak-gpu: $(BUILD)/soak/soak-gpu $(BUILD)/soak/soak-tsan-cuda $(MOCK_LIB) $(MOCK_TSAN_LIB)
	@echo "==== soak for $(SOAK_SECONDS)s each on lavapipe and the mock CUDA driver (ASan+UBSan; TSan on the mock)"
	@$(RUN_TESTS) $(if $(HAVE_VULKAN),--config soak-vulkan --runner "$(SOAK_GPU_ENV) ACCEL_TEST_BACKEND=vulkan \
	    $(if $(LVP_ICD),VK_DRIVER_FILES=$(LVP_ICD))" $(BUILD)/soak/soak-gpu,--config soak-vulkan --skip soak \
	    'no Vulkan headers or no glslc') \
	  --config soak-cuda-mock --runner "$(SOAK_GPU_ENV) $(MOCK_ENV)" $(BUILD)/soak/soak-gpu \
	  --config soak-cuda-mock-ring --runner "$(SOAK_GPU_ENV) $(MOCK_ENV) ACCEL_CUDA_NO_MEMOPS=1" $(BUILD)/soak/soak-gpu \
	  --config soak-tsan-cuda-mock --runner "$$(setarch $$(uname -m) -R true 2>/dev/null && echo setarch $$(uname -m) -R) \
	    $(SOAK_TSAN_MOCK)" $(BUILD)/soak/soak-tsan-cuda

soak: $(BUILD)/soak/soak
	@echo "==== soak for $(SOAK_SECONDS)s under ASan+UBSan (ACCEL_TEST_BACKEND=$(ACCEL_TEST_BACKEND))"
	@ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1} \
	 SOAK_SECONDS=$(SOAK_SECONDS) $(BUILD)/soak/soak
soak-tsan: $(BUILD)/soak/soak-tsan
	@echo "==== soak for $(SOAK_SECONDS)s under TSan, pthread shim (ACCEL_TEST_BACKEND=$(ACCEL_TEST_BACKEND))"
	@if setarch "$$(uname -m)" -R true 2>/dev/null; then norand="setarch $$(uname -m) -R"; else norand=""; fi; \
	 TSAN_OPTIONS=$${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:history_size=4} \
	 SOAK_SECONDS=$(SOAK_SECONDS) $$norand $(BUILD)/soak/soak-tsan

# ---- examples and bench ---------------------------------------------------------------------------
# the examples document themselves as ./build/NAME
EXAMPLE_BINS := $(EXAMPLES:%=$(BUILD)/%)
$(EXAMPLE_BINS): $(BUILD)/%: examples/%.c $(wildcard accel*.h) $(wildcard examples/*.h) Makefile
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -Wall -Wextra -DACCEL_EXAMPLE_HAVE_CUDA -I. -o $@ $< $(LIBS)

examples: $(EXAMPLE_BINS)

# Open MPI (see mpi_halo below), defined before `run:`: a rule's prerequisites expand where it is read
MPICC  ?= mpicc
MPIRUN ?= mpirun
HAVE_MPI := $(shell command -v $(MPICC) >/dev/null 2>&1 && command -v $(MPIRUN) >/dev/null 2>&1 && echo 1)
MPI_ROOT := $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

run: examples $(if $(HAVE_MPI),$(BUILD)/mpi_halo)
	@set -e; for e in $(EXAMPLES); do \
	  echo "==== $(BUILD)/$$e cpu"; \
	  $(BUILD)/$$e cpu || { echo "==== $$e FAILED (exit $$?)"; exit 1; }; \
	done; echo "==== all examples ran: $(EXAMPLES)"
	@$(if $(HAVE_MPI),echo "==== $(MPIRUN) -np 2 --oversubscribe $(BUILD)/mpi_halo cpu"; \
	  $(MPIRUN) $(MPI_ROOT) -np 2 --oversubscribe $(BUILD)/mpi_halo cpu || { echo "==== mpi_halo FAILED"; exit 1; },\
	  echo "==== mpi_halo skipped: $(MPICC) or $(MPIRUN) not found (Open MPI: apt-get install libopenmpi-dev openmpi-bin)")

# the examples as wasm32-wasi command modules (no threads: each batch runs inside its submit), run under
# node by tests/wasi_run.mjs. --single-threaded where node knows it: on some kernels and sandboxes node
# 20 crashes (SIGSEGV) at exit, in its worker threads' teardown, after a module grew its memory past
# 64 MiB (seen here with node 20.20.2; the WASM modules themselves are single-threaded anyway).
NODE_WASM = $(NODE) --no-warnings $(shell $(NODE) --single-threaded -e 0 >/dev/null 2>&1 \
            && echo --single-threaded) $(shell $(NODE) --experimental-wasi-unstable-preview1 -e 0 \
            >/dev/null 2>&1 && echo --experimental-wasi-unstable-preview1) tests/wasi_run.mjs
WASM_EXAMPLE_BINS := $(EXAMPLES:%=$(BUILD)/wasm-examples/%.wasm)
$(WASM_EXAMPLE_BINS): $(BUILD)/wasm-examples/%.wasm: examples/%.c $(wildcard accel*.h) $(wildcard examples/*.h) Makefile
	@mkdir -p $(@D)
	$(CLANG) $(subst -O1,-O2,$(WASMFLAGS)) -o $@ $< $(WASMLIBS)
examples-wasm: $(WASM_EXAMPLE_BINS)

run-wasm: examples-wasm
	@set -e; for e in $(EXAMPLES); do \
	  echo "==== $(NODE_WASM) $(BUILD)/wasm-examples/$$e.wasm cpu"; \
	  $(NODE_WASM) $(BUILD)/wasm-examples/$$e.wasm cpu || { echo "==== $$e FAILED as WASM (exit $$?)"; exit 1; }; \
	done; echo "==== all examples ran as wasm32-wasi modules under node $$($(NODE) --version): $(EXAMPLES)"

# make bench BENCH_ARGS=--quick: a few seconds (the CI smoke run)
BENCH_ARGS ?=
# figure 9 puts oneTBB beside OpenMP where libtbb-dev is installed (bench/tbb.cpp); else it says so
HAVE_TBB := $(shell printf '\043include <oneapi/tbb/task_group.h>\n' | $(GXX) -x c++ -E - >/dev/null 2>&1 && echo 1)
BENCH_TBB_OBJ := $(if $(HAVE_TBB),$(BUILD)/bench_tbb.o)
$(BUILD)/bench_tbb.o: bench/tbb.cpp Makefile
	@mkdir -p $(@D)
	$(GXX) -std=c++17 -O2 -Wall -Wextra -c -o $@ $<
$(BUILD)/bench_cpu: bench/cpu.c $(wildcard accel*.h) $(wildcard bench/*.h) $(BENCH_TBB_OBJ) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=c11 -O2 -fopenmp -Wall -Wextra -I. $(if $(HAVE_TBB),-DBENCH_HAVE_TBB) -o $@ $< $(BENCH_TBB_OBJ) \
	  $(if $(HAVE_TBB),-ltbb -lstdc++) $(LIBS)

bench: $(BUILD)/bench_cpu
	$(BUILD)/bench_cpu $(BENCH_ARGS)

# make bench-decode: bench/decode.c, a transformer decode loop through accel and through OpenMP
$(BUILD)/bench_decode: bench/decode.c $(wildcard accel*.h) $(wildcard bench/*.h) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=c11 -O2 -fopenmp -Wall -Wextra -I. -o $@ $< $(LIBS)
bench-decode: $(BUILD)/bench_decode
	$(BUILD)/bench_decode $(BENCH_ARGS)

$(BUILD)/bench_cuda: bench/cuda.c $(wildcard accel*.h) $(wildcard bench/*.h) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=c11 -O2 $(WARN) -I. -o $@ $< $(LIBS)

bench-cuda: $(BUILD)/bench_cuda
	$(BUILD)/bench_cuda $(BENCH_ARGS)

# make bench-device-waits: bench/device_waits.c, a CUDA queue's wait on a CPU signal (on the GPU, gated in
# the ring mode) next to raw cuStreamWaitValue64; on the mock with MOCK_ENV's library where no GPU is
$(BUILD)/bench_device_waits: bench/device_waits.c $(wildcard accel*.h) $(wildcard bench/*.h) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=c11 -O2 $(WARN) -I. -o $@ $< $(LIBS)
bench-device-waits: $(BUILD)/bench_device_waits
	$(BUILD)/bench_device_waits $(BENCH_ARGS)

# make cuda-blocking: bench/cuda_blocking.c, which driver calls block the host while a stream waits on the GPU
$(BUILD)/cuda_blocking: bench/cuda_blocking.c $(wildcard accel*.h) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=gnu11 -O1 $(WARN) -I. -o $@ $< $(LIBS)
cuda-blocking: $(BUILD)/cuda_blocking
	$(BUILD)/cuda_blocking

gpu-check:
	bench/gpu_check.sh

# what bench/gpu_check.sh builds and runs, one "KIND PATH" a line: the CUDA suite, then the examples
gpu-check-list:
	@for b in $(cuda_BINS); do echo "suite $$b"; done
	@for b in $(EXAMPLE_BINS); do echo "example $$b"; done
	@echo "nccl $(BUILD)/nccl_allreduce"

# ---- more than one machine: examples/mpi_halo.c (MPI ranks, CPU backend), examples/nccl_allreduce.c --
# mpi_halo is built with mpicc where Open MPI is installed (libopenmpi-dev openmpi-bin); `make run` runs it
# on 2 ranks, `make test` on 2 and 4 ranks, with and without a failure (tests/check_mpi.sh), and
# `make bench-mpi` (bench/mpi.sh) times it against plain MPI + OpenMP (bench/mpi_omp.c). nccl_allreduce
# (CUDA: NCCL and cuBLAS loaded at run time) runs in `make gpu-check`; elsewhere it says why and exits 0.
$(BUILD)/mpi_halo: examples/mpi_halo.c accel.h Makefile
	@mkdir -p $(@D)
	$(MPICC) -std=gnu11 -O2 -Wall -Wextra -I. -o $@ $< $(LIBS)
$(BUILD)/bench_mpi_omp: bench/mpi_omp.c Makefile
	@mkdir -p $(@D)
	$(MPICC) -std=gnu11 -O2 -fopenmp -Wall -Wextra -o $@ $< -lm
$(BUILD)/nccl_allreduce: examples/nccl_allreduce.c accel.h accel_cuda.h Makefile
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -I. -o $@ $< $(LIBS)
# tests/mock_nccl.c: NCCL and cuBLAS stand-ins over the mock driver (one rank), for nccl_allreduce on the mock
MOCK_NCCL_LIB := $(BUILD)/mock/libnccl_mock.so
$(MOCK_NCCL_LIB): tests/mock_nccl.c
	@mkdir -p $(@D)
	$(GCC) -std=gnu11 -O1 -g -Wall -Wextra -Werror -shared -fPIC -o $@ $< -ldl
NCCL_MOCK_ENV = ACCEL_CUDA_LIBRARY=$(MOCK_LIB) ACCEL_NVRTC_LIBRARY=$(MOCK_LIB) \
                ACCEL_EXAMPLE_NCCL_LIBRARY=$(MOCK_NCCL_LIB) ACCEL_EXAMPLE_CUBLAS_LIBRARY=$(MOCK_NCCL_LIB)
MPI_CHECK = $(MAKE) --no-print-directory -s $(BUILD)/mpi_halo && MPIRUN=$(MPIRUN) tests/check_mpi.sh $(BUILD)/mpi_halo
MPI_SMALL = --cells 20000 --steps 60 --every 6
MPI_CHECKS = \
  $(if $(HAVE_MPI),\
    --cmd mpi_halo.c-warnings '$(MPICC) -std=c11 -O2 -c -o $(CHK)/scratch.o $(WARN) -I. examples/mpi_halo.c' \
    --cmd mpi-halo-2-ranks '$(MPI_CHECK) 2' \
    --cmd mpi-halo-4-ranks '$(MPI_CHECK) 4 $(MPI_SMALL)' \
    --cmd mpi-halo-2-ranks-fail-signal '$(MPI_CHECK) 2 --fail signal:1:5' \
    --cmd mpi-halo-4-ranks-fail-mpi '$(MPI_CHECK) 4 $(MPI_SMALL) --fail mpi:0:7' \
    --cmd mpi-halo-4-ranks-fail-signal-late '$(MPI_CHECK) 4 $(MPI_SMALL) --fail signal:3:50' \
    --cmd mpi-halo-2-ranks-fail-last-step '$(MPI_CHECK) 2 --cells 2000 --steps 30 --every 7 --fail mpi:1:29' \
    --cmd bench-mpi-omp.c-warnings '$(MPICC) -std=c11 -O2 -fopenmp -c -o $(CHK)/scratch.o $(WARN) bench/mpi_omp.c' \
    --cmd bench-mpi-smoke 'CELLS=65536 MPIRUN=$(MPIRUN) bench/mpi.sh --quick --rounds=1 > $(CHK)/bench_mpi.out 2>&1 && tail -n 1 $(CHK)/bench_mpi.out | grep -q "^mpi: ratio" || { cat $(CHK)/bench_mpi.out; exit 1; }',\
    --skip mpi-halo '$(MPICC) or $(MPIRUN) not found (Open MPI: libopenmpi-dev openmpi-bin)') \
  --cmd nccl_allreduce.c-warnings '$(GCC) -std=c11 -O2 -c -o $(CHK)/scratch.o $(WARN) -I. examples/nccl_allreduce.c && $(CLANG) -std=c11 -fsyntax-only $(WARN) -I. examples/nccl_allreduce.c && $(GXX) -x c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I. examples/nccl_allreduce.c' \
  --cmd nccl-allreduce-on-mock '$(MAKE) --no-print-directory -s $(BUILD)/nccl_allreduce $(MOCK_LIB) $(MOCK_NCCL_LIB) && $(NCCL_MOCK_ENV) $(BUILD)/nccl_allreduce cuda --bench-mib 1 > $(CHK)/nccl_mock.out 2>&1 && grep -q "cublasSgemm -> consume in one queue: matches the host" $(CHK)/nccl_mock.out && tail -n 1 $(CHK)/nccl_mock.out | grep -qx OK || { cat $(CHK)/nccl_mock.out; exit 1; }' \
  --cmd native-cublas-on-mock '$(MAKE) --no-print-directory -s $(BUILD)/native $(MOCK_LIB) $(MOCK_NCCL_LIB) && for m in 0 1; do env ACCEL_CUDA_NO_MEMOPS=$$m $(NCCL_MOCK_ENV) $(BUILD)/native cuda > $(CHK)/native_mock.out 2>&1 && grep -q "GEMMs by cublasSgemm" $(CHK)/native_mock.out && grep -q "foreign stream: .*: OK" $(CHK)/native_mock.out || { cat $(CHK)/native_mock.out; exit 1; }; done' \
  --cmd nccl-allreduce-without-a-gpu '$(MAKE) --no-print-directory -s $(BUILD)/nccl_allreduce && ACCEL_CUDA_LIBRARY=/nonexistent/libcuda.so.1 $(BUILD)/nccl_allreduce > $(CHK)/nccl.out 2>&1 && grep -q "^nccl_allreduce: skipped: " $(CHK)/nccl.out && ACCEL_EXAMPLE_NCCL_LIBRARY=/nonexistent/libnccl.so.2 $(BUILD)/nccl_allreduce > $(CHK)/nccl.out 2>&1 && grep -q "^nccl_allreduce: skipped: " $(CHK)/nccl.out || { cat $(CHK)/nccl.out; exit 1; }'

bench-mpi: $(BUILD)/mpi_halo $(BUILD)/bench_mpi_omp
	bench/mpi.sh $(BENCH_ARGS)

# ---- Vulkan examples and bench ---------------------------------------------------------------------
# The example kernels compiled like the test kernels; the examples built with -DACCEL_EXAMPLE_HAVE_VULKAN
# into build/vulkan/NAME and run with the `vulkan` argument (lavapipe pinned where installed).
EX_KERNELS := $(basename $(notdir $(wildcard examples/kernels/*.comp)))
EX_KINCS   := $(EX_KERNELS:%=$(BUILD)/examples/kernels/%.spv.inc)
$(BUILD)/examples/kernels/%.spv: examples/kernels/%.comp
	@mkdir -p $(@D)
	$(GLSLC) -fshader-stage=compute --target-env=vulkan1.2 -o $@ $<
	$(SPIRVVAL) --target-env vulkan1.2 $@
$(BUILD)/examples/kernels/%.spv.inc: examples/kernels/%.comp $(BUILD)/examples/kernels/%.spv
	@mkdir -p $(@D)
	$(GLSLC) -fshader-stage=compute --target-env=vulkan1.2 -mfmt=c -o $@ $<
.SECONDARY: $(EX_KINCS) $(EX_KINCS:.inc=)

VK_EXAMPLE_BINS := $(EXAMPLES:%=$(BUILD)/vulkan/%)
$(VK_EXAMPLE_BINS): $(BUILD)/vulkan/%: examples/%.c $(wildcard accel*.h) $(wildcard examples/*.h) $(EX_KINCS) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=c11 -O2 $(WARN) -DACCEL_EXAMPLE_HAVE_VULKAN -I. -I$(BUILD)/examples/kernels -o $@ $< $(LIBS)
examples-vulkan: $(VK_EXAMPLE_BINS)

VK_RUN_ENV = $(if $(LVP_ICD),VK_DRIVER_FILES=$(LVP_ICD))
run-vulkan: examples-vulkan
	@set -e; for e in $(EXAMPLES); do \
	  echo "==== $(BUILD)/vulkan/$$e vulkan"; \
	  $(VK_RUN_ENV) $(BUILD)/vulkan/$$e vulkan || { echo "==== $$e FAILED on vulkan (exit $$?)"; exit 1; }; \
	done; echo "==== all examples ran on vulkan: $(EXAMPLES)"

$(BUILD)/bench_vulkan: bench/vulkan.c $(wildcard accel*.h) $(wildcard bench/*.h) $(KERNEL_INCS) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=c11 -O2 $(WARN) -I. -Ibench -I$(BUILD)/kernels -o $@ $< $(LIBS) -ldl

bench-vulkan: $(BUILD)/bench_vulkan
	$(VK_RUN_ENV) $(BUILD)/bench_vulkan $(BENCH_ARGS)

# make bench-devices: bench/devices.c, peer copies between devices (CPU; Vulkan where its headers are; CUDA and
# Vulkan on one GPU where a CUDA device has the Vulkan device's uuid: on lavapipe, with
# ACCEL_CUDA_LIBRARY=build/mock/libcuda_mock.so, a sanity check of the path only)
$(BUILD)/bench_devices: bench/devices.c $(wildcard accel*.h) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=gnu11 -O2 $(WARN) -I. $(if $(HAVE_VK_HEADERS),-DBENCH_HAVE_VULKAN) -o $@ $< $(LIBS)
bench-devices: $(BUILD)/bench_devices
	$(VK_RUN_ENV) $(BUILD)/bench_devices $(BENCH_ARGS)

# make bench-shared-waits: bench/shared_waits.c, waits across two devices of one GPU through a shared timeline
# semaphore (a Vulkan signal waited on by a CUDA queue and by another Vulkan device's queue) against the raw
# programs; where the Vulkan driver exports no timeline semaphores (lavapipe) accel's rows run gated on the host,
# for information, and the raw rows are skipped (make gpu-check runs it on the GPU)
$(BUILD)/bench_shared_waits: bench/shared_waits.c $(wildcard accel*.h) $(wildcard bench/*.h) Makefile
	@mkdir -p $(@D)
	$(GCC) -std=gnu11 -O2 $(WARN) -I. -o $@ $< $(LIBS)
bench-shared-waits: $(BUILD)/bench_shared_waits
	$(VK_RUN_ENV) $(BUILD)/bench_shared_waits $(BENCH_ARGS)

clean:
	rm -rf $(BUILD)

# the comment block at the top of this file
help:
	@sed -n '/^#   make help/,/^#$$/{/^#$$/q;s/^# //;p}' $(firstword $(MAKEFILE_LIST))
