// tracer.cu: a ray tracer whose spheres live in constant memory (German slides). One thread per pixel:
// the nearest sphere on the ray through the pixel, diffuse light from one direction, a shadow ray.
//
//   tracer SCENE [WIDTH HEIGHT [REPETITIONS]]    SCENE: one sphere per line, "x y z radius r g b"
//
// Beside: lab-constant-tracer --scene SCENE (same camera, light and image size). Built as the lab's
// tracer is, without fused multiply-adds, so that the lab's CPU check can demand identical pixels; with
// them (nvcc's default) this program ran 1.14x faster than the lab on an H200, a difference of flags.
// build: -fmad=false
#include <fstream>
#include <sstream>
#include <string>

#include "../check.h"

struct Sphere {
    float x, y, z, radius, r, g, b;
};

// As on the slide: raw bytes, since types with constructors may not be __constant__ (ours has none,
// but the slide's had). 2340 spheres of 28 bytes fill the 64 KiB.
const int SPHERES = 2340;
__constant__ char sphere_storage[sizeof(Sphere) * SPHERES];

struct View {
    int width, height;
    float eye_z, light_x, light_y, light_z, ambient;
};

__device__ __host__ inline float hit(const Sphere& s, float ox, float oy, float oz, float dx, float dy, float dz) {
    const float px = ox - s.x, py = oy - s.y, pz = oz - s.z;
    const float b = px * dx + py * dy + pz * dz;
    const float c = px * px + py * py + pz * pz - s.radius * s.radius;
    const float discriminant = b * b - c;
    return discriminant > 0.0f ? -b - sqrtf(discriminant) : -1.0f;
}

__device__ __host__ inline unsigned int to_byte(float value) {
    return (unsigned int)(255.0f * fminf(fmaxf(value, 0.0f), 1.0f) + 0.5f);
}

// The colour of pixel (px, py), on either side.
__device__ __host__ unsigned int shade(const Sphere* spheres, int count, View view, int px, int py) {
    const float aspect = (float)view.width / (float)view.height;
    const float u = (2.0f * (px + 0.5f) / view.width - 1.0f) * aspect;
    const float v = 1.0f - 2.0f * (py + 0.5f) / view.height;
    const float length = sqrtf(u * u + v * v + view.eye_z * view.eye_z);
    const float dx = u / length, dy = v / length, dz = -view.eye_z / length;
    float nearest = 1e30f;
    int index = -1;
    for (int i = 0; i < count; ++i) {
        const float t = hit(spheres[i], 0.0f, 0.0f, view.eye_z, dx, dy, dz);
        if (t > 0.0f && t < nearest) {
            nearest = t;
            index = i;
        }
    }
    if (index < 0) return to_byte(0.1f) | to_byte(0.1f) << 8 | to_byte(0.15f + 0.15f * v) << 16 | 0xFF000000u;
    const Sphere s = spheres[index];
    const float x = nearest * dx, y = nearest * dy, z = view.eye_z + nearest * dz;
    const float nx = (x - s.x) / s.radius, ny = (y - s.y) / s.radius, nz = (z - s.z) / s.radius;
    const float diffuse = fmaxf(nx * view.light_x + ny * view.light_y + nz * view.light_z, 0.0f);
    bool shadowed = false;
    if (diffuse > 0.0f) {
        for (int i = 0; i < count; ++i) {
            shadowed = shadowed || (i != index && hit(spheres[i], x + 1e-3f * nx, y + 1e-3f * ny, z + 1e-3f * nz,
                                                      view.light_x, view.light_y, view.light_z) > 0.0f);
        }
    }
    const float light = view.ambient + (1.0f - view.ambient) * (shadowed ? 0.0f : diffuse);
    return to_byte(s.r * light) | to_byte(s.g * light) << 8 | to_byte(s.b * light) << 16 | 0xFF000000u;
}

__global__ void tracer(int count, unsigned int* image, View view) {
    const int px = blockIdx.x * blockDim.x + threadIdx.x;
    const int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px < view.width && py < view.height) {
        image[(size_t)py * view.width + px] = shade((const Sphere*)sphere_storage, count, view, px, py);
    }
}

static std::vector<Sphere> read_scene(const char* name) {
    std::ifstream in(name);
    if (!in) {
        std::fprintf(stderr, "tracer: cannot open %s\n", name);
        std::exit(1);
    }
    std::vector<Sphere> spheres;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        line = line.substr(0, line.find('#'));
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::istringstream fields(line);
        Sphere s;
        if (!(fields >> s.x >> s.y >> s.z >> s.radius >> s.r >> s.g >> s.b)) {
            std::fprintf(stderr, "tracer: %s:%d: expected seven numbers: x y z radius r g b\n", name, number);
            std::exit(1);
        }
        spheres.push_back(s);
    }
    if (spheres.empty() || spheres.size() > SPHERES) {
        std::fprintf(stderr, "tracer: %s: %zu spheres; 1 to %d fit in constant memory\n", name, spheres.size(), SPHERES);
        std::exit(1);
    }
    return spheres;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s SCENE [WIDTH HEIGHT [REPETITIONS]]\n", argv[0]);
        return 1;
    }
    const std::vector<Sphere> host_spheres = read_scene(argv[1]);
    const int count = (int)host_spheres.size();
    View view = {(int)argument(argc, argv, 2, 1024), (int)argument(argc, argv, 3, 768), -4.0f, -0.5f, 1.0f, -0.6f, 0.15f};
    const float length = std::sqrt(view.light_x * view.light_x + view.light_y * view.light_y + view.light_z * view.light_z);
    view.light_x /= length, view.light_y /= length, view.light_z /= length;
    const int repetitions = (int)argument(argc, argv, 4, 10);

    // copy spheres to constant memory
    CHECK_CUDA(cudaMemcpyToSymbol, sphere_storage, host_spheres.data(), count * sizeof(Sphere));
    const size_t pixels = (size_t)view.width * view.height;
    unsigned int* cuda_image;
    CHECK_CUDA(cudaMalloc, (void**)&cuda_image, pixels * sizeof(unsigned int));
    CHECK_CUDA(cudaMemset, cuda_image, 0, pixels * sizeof(unsigned int));  // alpha 0: never written
    dim3 block(16, 16);
    dim3 grid((view.width + 15) / 16, (view.height + 15) / 16);
    std::printf("%d spheres in constant memory, %d x %d pixels\n", count, view.width, view.height);
    const Timing timing = time_gpu(repetitions, [&] {
        tracer<<<grid, block>>>(count, cuda_image, view);
        CHECK_LAUNCH();
    });
    print_time("constant              ", timing);

    std::vector<unsigned int> image(pixels);
    CHECK_CUDA(cudaMemcpy, image.data(), cuda_image, pixels * sizeof(unsigned int), cudaMemcpyDeviceToHost);
    CHECK_CUDA(cudaFree, cuda_image);
    // The CPU traces every pixel; fused multiply-adds on the GPU may move a channel by one step.
    size_t differing = 0;
    for (int py = 0; py < view.height; ++py) {
        for (int px = 0; px < view.width; ++px) {
            const unsigned int gpu = image[(size_t)py * view.width + px], cpu = shade(host_spheres.data(), count, view, px, py);
            for (int shift = 0; shift < 32; shift += 8) {
                if (std::abs((int)(gpu >> shift & 0xFF) - (int)(cpu >> shift & 0xFF)) > 1) {
                    ++differing;
                    break;
                }
            }
        }
    }
    std::printf("against the CPU: %zu of %zu pixels differ by more than one step\n", differing, pixels);
    return print_result(differing <= pixels / 1000);
}
