// cudart_table2 — the paper's Table II through the CUDA runtime, built by nvcc with its default
// (static) cudart: cudaMalloc, cudaMallocManaged, cudaMallocPitch, cudaMalloc3D, cudaFree,
// cudaMemGetInfo, cudaGetDeviceProperties (totalGlobalMem).
//
// The static cudart dlopens libcuda.so.1 and finds every driver entry point through dlsym on that
// handle and cuGetProcAddress: the path libconvgpu.so must catch without the program's help.
//
//   cudart_table2 --limit BYTES    run under `convgpu run --gpu-memory BYTES`: total memory is
//                                  the limit, free = limit - use, allocations within succeed,
//                                  beyond fail with cudaErrorMemoryAllocation, frees return it
//   cudart_table2 --native BYTES   run without convgpu: the same allocations, and the ones that
//                                  must fail under the limit succeed (the GPU is larger)
//
// Output: "PASS name: detail", "FAIL name: detail", "INFO key=value". Exit 0 iff no FAIL.
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const size_t MiB = size_t(1) << 20;
const size_t kGranule = 2 * MiB;  // the driver's (and convgpu's) rounding of large allocations
int g_fails = 0;
bool g_limit_mode = false;
size_t g_limit = 0;

void result(bool ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void result(bool ok, const char *name, const char *fmt, ...)
{
    std::printf("%s %s: ", ok ? "PASS" : "FAIL", name);
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
    std::printf("\n");
    std::fflush(stdout);
    if (!ok)
        g_fails++;
}

bool mem_info(size_t *free_b, size_t *total_b)
{
    cudaError_t e = cudaMemGetInfo(free_b, total_b);
    if (e != cudaSuccess) {
        result(false, "cudaMemGetInfo", "%s", cudaGetErrorString(e));
        return false;
    }
    return true;
}

__global__ void fill(unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x)
        p[i] = static_cast<unsigned char>(v ^ (i & 0xff));
}

// Writes the whole allocation on the device and checks its first and last MiB on the host.
bool touch(void *ptr, size_t n, unsigned char v, bool managed)
{
    fill<<<1024, 256>>>(static_cast<unsigned char *>(ptr), n, v);
    if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
        return false;
    size_t span = n < MiB ? n : MiB;
    std::vector<unsigned char> host(span);
    const size_t offsets[2] = {0, n - span};
    for (size_t off : offsets) {
        const unsigned char *src = static_cast<const unsigned char *>(ptr) + off;
        if (managed)
            std::memcpy(host.data(), src, span);
        else if (cudaMemcpy(host.data(), src, span, cudaMemcpyDeviceToHost) != cudaSuccess)
            return false;
        for (size_t i = 0; i < span; i++)
            if (host[i] != static_cast<unsigned char>(v ^ ((off + i) & 0xff)))
                return false;
    }
    return true;
}

enum Api { PLAIN, MANAGED, PITCH, MALLOC3D };
const char *const kApiName[] = {"cudaMalloc", "cudaMallocManaged", "cudaMallocPitch", "cudaMalloc3D"};

// One allocation of about `bytes` through `api`; *charged is what it really spans.
cudaError_t alloc(Api api, size_t bytes, void **ptr, size_t *charged)
{
    cudaError_t e = cudaErrorInvalidValue;
    *ptr = nullptr;
    *charged = bytes;
    switch (api) {
    case PLAIN: e = cudaMalloc(ptr, bytes); break;
    case MANAGED: e = cudaMallocManaged(ptr, bytes, cudaMemAttachGlobal); break;
    case PITCH: {
        size_t width = MiB, height = (bytes + width - 1) / width, pitch = 0;
        e = cudaMallocPitch(ptr, &pitch, width, height);
        *charged = pitch * height;
        break;
    }
    case MALLOC3D: {
        cudaExtent ext = make_cudaExtent(4096, 256, (bytes + 4096 * 256 - 1) / (4096 * 256));
        cudaPitchedPtr pp{};
        e = cudaMalloc3D(&pp, ext);
        *ptr = pp.ptr;
        *charged = pp.pitch * ext.height * ext.depth;
        break;
    }
    }
    return e;
}

size_t round_up(size_t v, size_t g) { return (v + g - 1) / g * g; }

void check_api(Api api, size_t chunk)
{
    const char *name = kApiName[api];
    char label[96];
    size_t free0, free1, free2, total;
    if (!mem_info(&free0, &total))
        return;

    // Within: a chunk that fits.
    void *p = nullptr;
    size_t charged = 0;
    cudaError_t e = alloc(api, chunk, &p, &charged);
    std::snprintf(label, sizeof label, "%s.within", name);
    result(e == cudaSuccess, label, "%zu MiB -> %s", chunk / MiB, cudaGetErrorString(e));
    if (e != cudaSuccess)
        return;
    std::snprintf(label, sizeof label, "%s.data", name);
    result(touch(p, charged, 0x5a, api == MANAGED), label, "kernel wrote %zu bytes, host verified",
           charged);

    if (!mem_info(&free1, &total))
        return;
    long long delta = static_cast<long long>(free0) - static_cast<long long>(free1);
    std::snprintf(label, sizeof label, "%s.meminfo_delta", name);
    // Managed memory is placed lazily by a real driver: without convgpu its free-memory delta
    // may be anything up to the size; under convgpu the charge is the rounded size, exactly.
    if (g_limit_mode)
        result(delta == static_cast<long long>(round_up(charged, kGranule)), label,
               "free fell by %lld bytes for %zu charged (rounded %zu)", delta, charged,
               round_up(charged, kGranule));
    else if (api == MANAGED)
        result(delta >= 0, label, "free fell by %lld bytes for %zu (managed, lazily placed)", delta,
               charged);
    else
        result(delta >= static_cast<long long>(charged), label,
               "free fell by %lld bytes for %zu", delta, charged);

    // Beyond: more than what is left under the limit (or, natively, the same size: it fits).
    void *q = nullptr;
    size_t qc = 0;
    size_t over = g_limit_mode ? free1 + 64 * MiB : g_limit;
    e = alloc(api, over, &q, &qc);
    std::snprintf(label, sizeof label, "%s.%s", name, g_limit_mode ? "over_limit" : "unrestricted");
    if (g_limit_mode) {
        cudaError_t last = cudaGetLastError();  // clears the sticky-free error state
        result(e == cudaErrorMemoryAllocation, label,
               "%zu MiB with %zu MiB free under the limit -> %s (want cudaErrorMemoryAllocation; "
               "last error %s)",
               over / MiB, free1 / MiB, cudaGetErrorString(e), cudaGetErrorName(last));
        if (e == cudaSuccess)
            cudaFree(q);
    } else {
        result(e == cudaSuccess, label, "%zu MiB (the limit used under convgpu) -> %s", over / MiB,
               cudaGetErrorString(e));
        if (e == cudaSuccess)
            cudaFree(q);
        cudaGetLastError();
    }

    e = cudaFree(p);
    std::snprintf(label, sizeof label, "%s.cudaFree", name);
    result(e == cudaSuccess, label, "%s", cudaGetErrorString(e));
    if (!mem_info(&free2, &total))
        return;
    std::snprintf(label, sizeof label, "%s.freed", name);
    if (g_limit_mode)
        result(free2 == free0, label, "free back to %zu (was %zu)", free2, free0);
    else
        result(free2 + 64 * MiB >= free0, label, "free back to %zu (was %zu; 64 MiB tolerance)", free2,
               free0);
}

// Under the limit: allocate everything that is left, in granules; one more granule must fail.
void check_fill_to_limit()
{
    size_t free0, total;
    if (!mem_info(&free0, &total))
        return;
    size_t n = free0 / kGranule * kGranule;
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, n);
    result(e == cudaSuccess, "fill_to_limit.alloc", "%zu bytes (all that is free under the limit) -> %s",
           n, cudaGetErrorString(e));
    if (e != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    size_t free1;
    mem_info(&free1, &total);
    result(free1 < kGranule, "fill_to_limit.free", "free now %zu bytes", free1);
    void *q = nullptr;
    e = cudaMalloc(&q, kGranule);
    result(e == cudaErrorMemoryAllocation, "fill_to_limit.one_more", "one more 2 MiB -> %s",
           cudaGetErrorString(e));
    if (e == cudaSuccess)
        cudaFree(q);
    cudaGetLastError();
    e = cudaFree(p);
    result(e == cudaSuccess, "fill_to_limit.free_all", "%s", cudaGetErrorString(e));
}

bool parse_bytes(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    if (std::strcmp(end, "MiB") == 0)
        v <<= 20;
    else if (std::strcmp(end, "GiB") == 0)
        v <<= 30;
    else if (*end)
        return false;
    *out = static_cast<size_t>(v);
    return v > 0;
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc != 3 || (std::strcmp(argv[1], "--limit") != 0 && std::strcmp(argv[1], "--native") != 0) ||
        !parse_bytes(argv[2], &g_limit)) {
        std::fprintf(stderr, "usage: cudart_table2 --limit BYTES | --native BYTES (e.g. 2GiB)\n");
        return 1;
    }
    g_limit_mode = std::strcmp(argv[1], "--limit") == 0;
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    std::printf("INFO mode=%s\nINFO limit=%zu\nINFO cudart_version=%d\nINFO driver_version=%d\n",
                g_limit_mode ? "limit" : "native", g_limit, runtime, driver);

    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, 0);
    if (e != cudaSuccess) {
        result(false, "cudaGetDeviceProperties", "%s", cudaGetErrorString(e));
        return 1;
    }
    std::printf("INFO device=%s\nINFO totalGlobalMem=%zu\n", prop.name, prop.totalGlobalMem);
    size_t free0, total;
    if (!mem_info(&free0, &total))
        return 1;
    std::printf("INFO meminfo_free=%zu\nINFO meminfo_total=%zu\n", free0, total);

    if (g_limit_mode) {
        result(prop.totalGlobalMem == g_limit, "cudaGetDeviceProperties.totalGlobalMem",
               "%zu, limit %zu", prop.totalGlobalMem, g_limit);
        result(total == g_limit, "cudaMemGetInfo.total", "%zu, limit %zu", total, g_limit);
        // The process's context is charged: free is below the limit, by the context charge.
        result(free0 < g_limit && free0 > 0, "cudaMemGetInfo.free",
               "%zu = limit - %zu (the context charge)", free0, g_limit - free0);
    } else {
        result(prop.totalGlobalMem == total && total > g_limit, "cudaGetDeviceProperties.totalGlobalMem",
               "%zu; cudaMemGetInfo total %zu (the whole GPU, larger than %zu)", prop.totalGlobalMem,
               total, g_limit);
        result(free0 <= total, "cudaMemGetInfo.free", "%zu of %zu", free0, total);
    }

    size_t chunk = g_limit / 4 / kGranule * kGranule;
    for (Api api : {PLAIN, MANAGED, PITCH, MALLOC3D})
        check_api(api, chunk);
    if (g_limit_mode)
        check_fill_to_limit();

    size_t free_end;
    if (mem_info(&free_end, &total))
        result(g_limit_mode ? free_end == free0 : true, "end.meminfo", "free %zu at the end (start %zu)",
               free_end, free0);
    std::printf("INFO result=%s\n", g_fails ? "fail" : "ok");
    return g_fails ? 1 : 0;
}
