// mlp_matmul.comp — C += A * B (row-major floats: C is m x n, A m x k, B k x n); the GLSL twin of
// mlp_matmul_cuda in examples/native.c. One item per element of C: x = column, y = row.
// Binding layout of every accel program: set 0, storage buffers at bindings 0..n-1 in exec order,
// the exec constants as 32-bit push-constant words.
#version 450

// 16 x 16 matches the example's accel_exec_2d(n, m, 16, 16)
layout(local_size_x = 16, local_size_y = 16, local_size_x_id = 0, local_size_y_id = 1) in;
layout(local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) buffer C { float c[]; };
layout(set = 0, binding = 1, std430) readonly buffer A { float a[]; };
layout(set = 0, binding = 2, std430) readonly buffer B { float b[]; };

layout(push_constant) uniform Constants { uint m, n, k; } pc;

void main() {
    uint col = gl_GlobalInvocationID.x, row = gl_GlobalInvocationID.y;
    if (row >= pc.m || col >= pc.n) return;
    float sum = 0.0;
    for (uint i = 0; i < pc.k; i++) sum += a[row * pc.k + i] * b[i * pc.n + col];
    c[row * pc.n + col] += sum;
}
