/* tests/spirv_edit.h — SPIR-V modules word by word for the tests of accel_program_create's checks: a
   hand-written minimal compute module, and edits of glslc's output (insert, remove, rename the entry
   point, change the version). Each edit keeps the header's bound; a module holds TEST_SPV_MAX words. */
#ifndef TEST_SPIRV_EDIT_H
#define TEST_SPIRV_EDIT_H
#include <stdint.h>
#include <string.h>

#define TEST_SPV_MAX 4096
typedef struct test_spv { uint32_t w[TEST_SPV_MAX]; size_t n; } test_spv;
#define TEST_SPV_OP(op, words) (((uint32_t)(words) << 16) | (uint32_t)(op))

/* The smallest valid compute module (SPIR-V 1.0, checked with spirv-val): an empty `main`, 1x1x1.
   with_function = 0 leaves out its OpFunction .. OpFunctionEnd: six instructions whose OpEntryPoint
   names an id nothing defines. */
static inline void test_spv_tiny(test_spv* m, int with_function) {
    static const uint32_t w[] = {
        0x07230203u, 0x00010000u, 0, 6, 0,
        TEST_SPV_OP(17, 2), 1,                                  /* OpCapability Shader */
        TEST_SPV_OP(14, 3), 0, 1,                               /* OpMemoryModel Logical GLSL450 */
        TEST_SPV_OP(15, 5), 5, 5, 0x6e69616du, 0,               /* OpEntryPoint GLCompute %5 "main" */
        TEST_SPV_OP(16, 6), 5, 17, 1, 1, 1,                     /* OpExecutionMode %5 LocalSize 1 1 1 */
        TEST_SPV_OP(19, 2), 1,                                  /* %1 = OpTypeVoid */
        TEST_SPV_OP(33, 3), 2, 1,                               /* %2 = OpTypeFunction %1 */
        TEST_SPV_OP(54, 5), 1, 5, 0, 2,                         /* %5 = OpFunction %1 None %2 */
        TEST_SPV_OP(248, 2), 3,                                 /* %3 = OpLabel */
        TEST_SPV_OP(253, 1),                                    /* OpReturn */
        TEST_SPV_OP(56, 1)                                      /* OpFunctionEnd */
    };
    m->n = with_function ? sizeof w / 4 : sizeof w / 4 - 9;
    memcpy(m->w, w, m->n * 4);
}

static inline void test_spv_copy(test_spv* m, const uint32_t* w, size_t bytes) {
    m->n = bytes / 4 < TEST_SPV_MAX ? bytes / 4 : TEST_SPV_MAX;
    memcpy(m->w, w, m->n * 4);
}
/* The word index of the first instruction with opcode op (0: none). */
static inline size_t test_spv_find(const test_spv* m, uint32_t op) {
    for (size_t i = 5; i < m->n && (m->w[i] >> 16); i += m->w[i] >> 16)
        if ((m->w[i] & 0xffffu) == op) return i;
    return 0;
}
static inline void test_spv_insert(test_spv* m, size_t at, const uint32_t* words, size_t count) {
    if (m->n + count > TEST_SPV_MAX || at > m->n) return;
    memmove(&m->w[at + count], &m->w[at], (m->n - at) * 4);
    memcpy(&m->w[at], words, count * 4);
    m->n += count;
}
static inline void test_spv_remove(test_spv* m, size_t at, size_t count) {
    memmove(&m->w[at], &m->w[at + count], (m->n - at - count) * 4);
    m->n -= count;
}
/* Gives the first OpEntryPoint a new name (its interface list kept). */
static inline void test_spv_rename_entry(test_spv* m, const char* name) {
    uint32_t ins[TEST_SPV_MAX / 4];
    size_t at = test_spv_find(m, 15), len = m->w[at] >> 16;
    size_t old_words = (strlen((const char*)&m->w[at + 3]) + 4) / 4, new_words = (strlen(name) + 4) / 4;
    size_t iface = len - 3 - old_words, n = 0;
    ins[n++] = TEST_SPV_OP(15, 3 + new_words + iface);
    ins[n++] = m->w[at + 1];
    ins[n++] = m->w[at + 2];
    memset(&ins[n], 0, new_words * 4);
    memcpy(&ins[n], name, strlen(name));
    n += new_words;
    memcpy(&ins[n], &m->w[at + 3 + old_words], iface * 4);
    n += iface;
    test_spv_remove(m, at, len);
    test_spv_insert(m, at, ins, n);
}
#endif
