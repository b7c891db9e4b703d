// tracer.cu: a small ray tracer whose spheres live in constant memory (German slides), next to the same
// kernel reading them from global memory, and a variant whose sphere count is known at compile time.
//
// One thread per pixel: a ray from the eye through the pixel, the nearest sphere it hits, diffuse
// shading from one directional light, and a shadow ray towards the light.
//
// Built with -DMAX_SPHERES=... and the layout of Sphere (-DSPHERE_SIZE, -DSPHERE_OFFSET_*) from
// kernels/build.rs, which also hands the same numbers to Rust, so both sides agree by construction.
#include <cstddef>

struct Sphere {
    float x, y, z;     // centre
    float radius;
    float r, g, b;     // colour, 0 to 1
};
static_assert(sizeof(Sphere) == SPHERE_SIZE, "Sphere's size differs from kernels/build.rs");
static_assert(offsetof(Sphere, x) == SPHERE_OFFSET_x && offsetof(Sphere, y) == SPHERE_OFFSET_y &&
              offsetof(Sphere, z) == SPHERE_OFFSET_z && offsetof(Sphere, radius) == SPHERE_OFFSET_radius &&
              offsetof(Sphere, r) == SPHERE_OFFSET_r && offsetof(Sphere, g) == SPHERE_OFFSET_g &&
              offsetof(Sphere, b) == SPHERE_OFFSET_b,
              "Sphere's layout differs from kernels/build.rs");

// As on the slide: raw bytes, because types with non-trivial constructors may not be __constant__.
// MAX_SPHERES fills the 64 KiB of constant memory. The host writes it through the module's symbol
// (cuModuleGetGlobal + copy: cudaMemcpyToSymbol) and reads it back (cudaMemcpyFromSymbol).
// BEGIN ASSIGNMENT
// TODO: put sphere_storage in constant memory (__constant__): 64 KiB that every thread reads through a
// TODO: cache that broadcasts one address to a whole warp. Keep its type, size and alignment.
// STARTER: __device__ __align__(16) char sphere_storage[sizeof(Sphere) * MAX_SPHERES];
__constant__ __align__(16) char sphere_storage[sizeof(Sphere) * MAX_SPHERES];
// END ASSIGNMENT

// Camera and light, passed by value; the same struct as `View` in lab-constant-tracer.
struct View {
    int width, height;
    float eye_z;                          // the eye sits at (0, 0, eye_z) and looks towards +z
    float light_x, light_y, light_z;      // direction towards the light, normalized by the host
    float ambient;                        // light that reaches shadowed surfaces
};

struct Ray {
    float ox, oy, oz, dx, dy, dz;
};

// Distance along the ray to the sphere, or a negative number if the ray misses it.
__device__ inline float hit(const Sphere& s, const Ray& ray) {
    const float px = ray.ox - s.x, py = ray.oy - s.y, pz = ray.oz - s.z;
    const float b = px * ray.dx + py * ray.dy + pz * ray.dz;
    const float c = px * px + py * py + pz * pz - s.radius * s.radius;
    const float discriminant = b * b - c;
    return discriminant > 0.0f ? -b - sqrtf(discriminant) : -1.0f;
}

__device__ inline unsigned int to_byte(float value) {
    return (unsigned int)(255.0f * fminf(fmaxf(value, 0.0f), 1.0f) + 0.5f);
}

// The whole tracer, for any place the spheres come from: `spheres` points to constant or global memory.
// COUNT > 0 makes the sphere count a compile-time constant (and the loops fully unrolled).
template <int COUNT>
__device__ void trace(const Sphere* spheres, int count, unsigned int* image, View view) {
    const int px = blockIdx.x * blockDim.x + threadIdx.x;
    const int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= view.width || py >= view.height) return;
    const int n = COUNT > 0 ? COUNT : count;

    const float aspect = (float)view.width / (float)view.height;
    const float u = (2.0f * (px + 0.5f) / view.width - 1.0f) * aspect;
    const float v = 1.0f - 2.0f * (py + 0.5f) / view.height;
    const float length = sqrtf(u * u + v * v + view.eye_z * view.eye_z);
    const Ray ray = {0.0f, 0.0f, view.eye_z, u / length, v / length, -view.eye_z / length};

    // Every thread of a warp reads sphere i at the same time: the access the constant cache broadcasts.
    // A count known at compile time unrolls fully; a run-time count by 4, about what nvcc does unasked
    // (unroll(1) here made the kernel 1.27x slower than reference/tracer/tracer.cu on an H200).
    float nearest = 1e30f;
    int hit_index = -1;
#pragma unroll(COUNT > 0 ? COUNT : 4)
    for (int i = 0; i < n; ++i) {
        const float t = hit(spheres[i], ray);
        if (t > 0.0f && t < nearest) {
            nearest = t;
            hit_index = i;
        }
    }
    unsigned int rgb;
    if (hit_index < 0) {
        rgb = to_byte(0.1f) | to_byte(0.1f) << 8 | to_byte(0.15f + 0.15f * v) << 16;   // background
    } else {
        const Sphere s = spheres[hit_index];
        const float x = ray.ox + nearest * ray.dx, y = ray.oy + nearest * ray.dy, z = ray.oz + nearest * ray.dz;
        const float nx = (x - s.x) / s.radius, ny = (y - s.y) / s.radius, nz = (z - s.z) / s.radius;
        const float diffuse = fmaxf(nx * view.light_x + ny * view.light_y + nz * view.light_z, 0.0f);
        bool shadowed = false;
        if (diffuse > 0.0f) {
            const Ray towards_light = {x + 1e-3f * nx, y + 1e-3f * ny, z + 1e-3f * nz,
                                       view.light_x, view.light_y, view.light_z};
#pragma unroll(COUNT > 0 ? COUNT : 4)
            for (int i = 0; i < n; ++i) {
                shadowed = shadowed || (i != hit_index && hit(spheres[i], towards_light) > 0.0f);
            }
        }
        const float light = view.ambient + (1.0f - view.ambient) * (shadowed ? 0.0f : diffuse);
        rgb = to_byte(s.r * light) | to_byte(s.g * light) << 8 | to_byte(s.b * light) << 16;
    }
    image[(size_t)py * view.width + px] = rgb | 0xFF000000u;   // RGBA, alpha 255
}

// Spheres from constant memory, any count up to MAX_SPHERES.
extern "C" __global__ void trace_constant(int count, unsigned int* image, View view) {
    // BEGIN ASSIGNMENT
    // TODO: render with the first `count` spheres of sphere_storage, seen as an array of Sphere
    // TODO: (reinterpret_cast<const Sphere*>), through trace<0> like trace_global below.
    trace<0>(reinterpret_cast<const Sphere*>(sphere_storage), count, image, view);
    // END ASSIGNMENT
}

// The same from global memory.
extern "C" __global__ void trace_global(const Sphere* spheres, int count, unsigned int* image, View view) {
    trace<0>(spheres, count, image, view);
}

// Constant memory with the count known at compile time: the loops unroll and every sphere's fields
// become constant-bank operands of the arithmetic instructions (c[0x3][...] in SASS), no loads at all.
#define TRACE_CONSTANT_FIXED(N)                                                                    \
    extern "C" __global__ void trace_constant_fixed_##N(unsigned int* image, View view) {          \
        trace<N>(reinterpret_cast<const Sphere*>(sphere_storage), N, image, view);                 \
    }
TRACE_CONSTANT_FIXED(8)
TRACE_CONSTANT_FIXED(16)
TRACE_CONSTANT_FIXED(32)
TRACE_CONSTANT_FIXED(64)
