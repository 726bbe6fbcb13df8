// mlp_bias_act.comp — y[i] = act(y[i] + bias[i % cols]) for i < count, act = max(., 0) when relu != 0;
// the GLSL twin of mlp_bias_act_cpu in examples/native.c.
#version 450

layout(local_size_x = 256, local_size_x_id = 0) in;
layout(local_size_y_id = 1, local_size_z_id = 2) in;

layout(set = 0, binding = 0, std430) buffer Y { float y[]; };
layout(set = 0, binding = 1, std430) readonly buffer Bias { float bias[]; };

layout(push_constant) uniform Constants { uint count, cols, relu; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) return;
    float v = y[i] + bias[i % pc.cols];
    y[i] = pc.relu != 0u ? max(v, 0.0) : v;
}
