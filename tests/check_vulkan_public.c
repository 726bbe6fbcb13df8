/* tests/check_vulkan_public.c — a compile check (Makefile CHECKS), not a test program: the public part of
   accel_vulkan.h used by code that only calls accel's interop functions.
   - Built plain, with -I pointing at a directory whose vulkan/vulkan_core.h is an #error: the header
     must not need (or include) the Vulkan headers, and its handle types are the opaque ones.
   - Built with -DCHECK_WITH_VULKAN_HEADERS: <vulkan/vulkan_core.h> comes first, and the same
     declarations must then use Vulkan's own types (a function pointer of the Vulkan type must take each
     function without a cast). */
#if defined(CHECK_WITH_VULKAN_HEADERS)
#  define VK_NO_PROTOTYPES
#  include <vulkan/vulkan_core.h>
#endif
#include <string.h>
#include "accel.h"
#include "accel_vulkan.h"
#include "accel_vulkan.h"

#if defined(CHECK_WITH_VULKAN_HEADERS)
typedef VkBuffer check_buffer;
typedef VkSemaphore check_semaphore;
typedef VkDeviceSize check_size;
#else
#  if defined(VULKAN_CORE_H_)
#    error "accel_vulkan.h included the Vulkan headers"
#  endif
#  if UINTPTR_MAX > 0xffffffffu
typedef void* check_buffer;
typedef void* check_semaphore;
#  else
typedef uint64_t check_buffer;
typedef uint64_t check_semaphore;
#  endif
typedef uint64_t check_size;
#endif

#ifdef __cplusplus
extern "C" {
#endif
int check_vulkan_public(accel_device* d, accel_buffer* b, accel_signal* s);
#ifdef __cplusplus
}
#endif

int check_vulkan_public(accel_device* d, accel_buffer* b, accel_signal* s) {
    check_buffer (*handle)(accel_buffer*) = accel_vulkan_buffer_handle;
    check_semaphore (*semaphore)(accel_signal*) = accel_vulkan_signal_semaphore;
    accel_result (*buffer_wrap)(accel_device*, check_buffer, check_size, accel_buffer**) = accel_vulkan_buffer_wrap;
    accel_result (*signal_wrap)(accel_device*, check_semaphore, accel_signal**) = accel_vulkan_signal_wrap;
    accel_buffer* wb = NULL;
    accel_signal* ws = NULL;
    accel_vulkan_adopt_desc ad;
    int ok;
    memset(&ad, 0, sizeof ad);
    ok = buffer_wrap(d, handle(b), 256, &wb) == ACCEL_OK;
    ok += signal_wrap(d, semaphore(s), &ws) == ACCEL_OK;
    accel_buffer_destroy(wb);
    accel_signal_destroy(ws);
    return ok + (accel_vulkan_device_adopt(NULL, &ad, NULL) == ACCEL_OK) + (accel_vulkan_backend() != NULL);
}
