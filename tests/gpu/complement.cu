// complement.cu — the `complement` kernel of convgpu-sample as real GPU code, for a PTX image the
// sample can load on a real driver (its built-in image is the emulator's text format, which a
// real cuModuleLoadData rejects). `make -C tests/gpu OUT=DIR DIR/complement.ptx` writes the PTX
// (compute_75: the driver JIT-compiles it for any newer GPU). Parameters as the sample passes
// them: (CUdeviceptr p, size_t n); every byte is complemented.
extern "C" __global__ void complement(unsigned char *p, size_t n)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x)
        p[i] = static_cast<unsigned char>(~p[i]);
}
