// simulate.comp — one frame of examples/frames.c (GLSL twin of simulate_cpu): step every particle,
// then add its signature into stats[work group] (the queue zeroes stats with a fill first).
// Binding layout of every accel program: set 0, storage buffers at bindings 0..n-1 in exec order,
// the exec constants as 32-bit push-constant words.
// Build: glslc -fshader-stage=compute examples/kernels/simulate.comp -o build/simulate.spv
#version 450

layout(local_size_x = 256, local_size_x_id = 0) in;   // the example's group size; spec constants 0..2
layout(local_size_y_id = 1, local_size_z_id = 2) in;

struct Particle { int x, y, vx, vy; };

layout(set = 0, binding = 0, std430) buffer Particles { Particle particles[]; };
layout(set = 0, binding = 1, std430) readonly buffer Params {
    uint frame;
    int gravity;
    int wind;
    int pad;
} params;
layout(set = 0, binding = 2, std430) buffer Stats { uint stats[]; };

layout(push_constant) uniform Constants {
    uint count;    // particles: invocations at or past count do nothing
} pc;

const int WORLD = 1 << 20;
const int MAX_SPEED = 4096;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) return;
    Particle p = particles[i];
    p.vx = clamp(p.vx + params.wind, -MAX_SPEED, MAX_SPEED);
    p.vy = clamp(p.vy + params.gravity, -MAX_SPEED, MAX_SPEED);
    p.x += p.vx;
    p.y += p.vy;
    if (p.x < 0) { p.x = -p.x; p.vx = -p.vx; }
    else if (p.x >= WORLD) { p.x = 2 * (WORLD - 1) - p.x; p.vx = -p.vx; }
    if (p.y < 0) { p.y = -p.y; p.vy = -p.vy; }
    else if (p.y >= WORLD) { p.y = 2 * (WORLD - 1) - p.y; p.vy = -p.vy; }
    particles[i] = p;
    atomicAdd(stats[gl_WorkGroupID.x],
              uint(p.x) * 7u + uint(p.y) * 13u + uint(p.vx) * 17u + uint(p.vy) * 19u);
}
