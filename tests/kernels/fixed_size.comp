#version 450
// A kernel with a fixed work-group size (no specialization constants): out[i] = i * 3 for i < n.
// tests/test_vulkan.c uses it to check that an exec must match (or leave to the shader) that size.
// constants: n.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Out { uint data[]; };
layout(push_constant) uniform Constants { uint n; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) data[i] = i * 3u;
}
