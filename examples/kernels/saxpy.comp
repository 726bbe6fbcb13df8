// saxpy.comp — y = a*x + y; the GLSL twin of saxpy_cpu in examples/saxpy.c.
// Binding layout of every accel program: set 0, storage buffers at bindings 0..n-1 in exec order,
// the exec constants as 32-bit push-constant words.
// Build: glslc -fshader-stage=compute examples/kernels/saxpy.comp -o build/saxpy.spv
#version 450

// 256 matches the example's accel_exec_1d(n, 256); specialization constants 0, 1, 2 can override it.
layout(local_size_x = 256, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) buffer Y { float y[]; };
layout(set = 0, binding = 1, std430) readonly buffer X { float x[]; };

layout(push_constant) uniform Constants {
    uint a_bits;   // the bits of the float a
    uint n;        // element count: items at or past n do nothing
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) y[i] = uintBitsToFloat(pc.a_bits) * x[i] + y[i];
}
