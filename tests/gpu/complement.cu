// complement.cu — the `complement` kernel of convgpu-sample as CUDA C++: the source of the PTX
// embedded in src/tools/complement_ptx.h (`make -C tests/gpu OUT=DIR DIR/complement.ptx` writes
// it at compute_75; the driver JIT-compiles it for any newer GPU; gpu.build checks the two agree).
// Parameters as the sample passes them: (CUdeviceptr p, size_t n); every byte is complemented.
extern "C" __global__ void complement(unsigned char *p, size_t n)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x)
        p[i] = static_cast<unsigned char>(~p[i]);
}
