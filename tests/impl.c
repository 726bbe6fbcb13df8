/* tests/impl.c — the implementation of one test configuration (accel.h, and the GPU backends the
   configuration builds with), compiled once per configuration with its flags and linked into its test
   programs that do not look inside it (Makefile: test_config). Those are compiled with
   ACCEL_*_IMPLEMENTATION_INCLUDED, so their own `#define ACCEL_IMPLEMENTATION` reads only the
   declarations, as a program's other files do. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#ifdef ACCEL_TEST_HAVE_VULKAN
#  define ACCEL_VULKAN_IMPLEMENTATION
#  include "accel_vulkan.h"
#endif
#ifdef ACCEL_TEST_HAVE_CUDA
#  define ACCEL_CUDA_IMPLEMENTATION
#  include "accel_cuda.h"
#endif
