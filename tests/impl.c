/* tests/impl.c — the implementation of one test configuration (accel.h, and the GPU backends the
   configuration builds with), compiled once per configuration with its flags and linked into its test
   programs that do not look inside it (Makefile: test_config). Those are compiled with
   ACCEL_*_IMPLEMENTATION_INCLUDED, so their own `#define ACCEL_IMPLEMENTATION` reads only the
   declarations, as a program's other files do. */
#define ACCEL_IMPLEMENTATION
#include "accel.h"
#include "test_backends.h"
