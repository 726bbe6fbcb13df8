/* tests/test_backends.h — the GPU backends a test configuration builds with (ACCEL_TEST_HAVE_VULKAN,
   ACCEL_TEST_HAVE_CUDA), after accel.h: their implementations where accel.h's is in the same file
   (tests/impl.c, and the programs of the Makefile's TESTS_OWN_IMPL), their declarations elsewhere. */
#ifdef ACCEL_TEST_HAVE_VULKAN
#  define ACCEL_VULKAN_IMPLEMENTATION
#  include "accel_vulkan.h"
#endif
#ifdef ACCEL_TEST_HAVE_CUDA
#  define ACCEL_CUDA_IMPLEMENTATION
#  include "accel_cuda.h"
#endif
