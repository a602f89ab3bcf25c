/* kinds_work: GPU work of every kind, under kernel names real libraries
 * give their kernels (docs/report.md, "Kernel categories", says where each
 * was seen), for tests/test_categories.py. The simulated GPU runs any name
 * a program registers; mangled names are demangled by the tracer as a
 * real .cu file's would be.
 *   base:  2 steps (NVTX start/end ranges "train_step"), each a "forward" phase
 *          (matmul, attention, convolution, elementwise, reduction,
 *          other) and a "backward" phase (matmul, collective), a copy and
 *          a memset (top-level push ranges: the report's phases)
 *   attn:  the same, with the attention kernel 3 times as long and no
 *          convolution: another mix of work
 * Each kernel's duration is in the table below; the program prints each
 * name it launched and how often, for the test to check against. */
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include "fakecuda.h"

struct kind {
    const char *name;   /* as the library's kernel is named (mangled where it is) */
    unsigned long long ns;
    int backward;       /* launched in the backward phase */
    const void *k;
    int launches;
};

static struct kind kinds[] = {
    /* cuBLAS (sm80_xmma_gemm_...), cuBLAS on Hopper (nvjet_...), CUTLASS */
    {"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma", 2000000, 0, 0, 0},
    {"nvjet_tst_192x176_64x4_1x2_h_bz_coopB_T", 1000000, 1, 0, 0},
    /* PyTorch's FlashAttention, xFormers' memory-efficient attention */
    {"_ZN13pytorch_flash16flash_fwd_kernelILi1EEEvNS_16Flash_fwd_paramsE", 1500000, 0, 0, 0},
    {"fmha_cutlassF_f16_aligned_64x64_rf_sm80", 500000, 0, 0, 0},
    /* cuDNN's implicit-GEMM convolution (a gemm by name: convolution first) */
    {"sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x32x32_stage4_warpsize4x1x1_g1_"
     "tensor16x8x16_execute_kernel__5x_cudnn", 1200000, 0, 0, 0},
    /* ATen's elementwise kernel, and inductor's pointwise kernel named
     * after the batch norm it fused (elementwise, not reduction) */
    {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", 300000, 0, 0,
     0},
    {"triton_poi_fused__native_batch_norm_legit_functional_0", 200000, 0, 0, 0},
    /* inductor's reduction named after the mm it fused (reduction, not
     * matmul), ATen's layer norm */
    {"triton_red_fused_add_bmm_mm_mul_16", 400000, 0, 0, 0},
    {"_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIffEEviT0_PKT_S6_S6_PS3_S7_S7_", 250000, 0, 0, 0},
    /* NCCL's all-reduce */
    {"_Z37ncclKernel_AllReduce_RING_LL_Sum_halfP11ncclDevCommmP8ncclWork", 800000, 1, 0, 0},
    /* as an H100 named them (docs/validation.md): cuBLASLt's epilogue and
     * cuBLAS's beta scaling around a product, ATen's foreach kernel */
    {"void cublasLt::epilogue::impl::globalKernel<8, 32, float, float, float, true, true, 1>(int, int, long, "
     "float*, cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, int*)", 150000, 1, 0, 0},
    {"void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(cublasTransposeParams<float>, float const*, float*, "
     "float const*)", 50000, 1, 0, 0},
    {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, "
     "0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous "
     "namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)", 120000, 1, 0, 0},
    /* the program's own */
    {"kinds_custom_kernel", 100000, 0, 0, 0},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

int main(int argc, char **argv)
{
    const char *v = argc > 1 ? argv[1] : "base";
    int attn = strcmp(v, "attn") == 0;
    dim3 g1 = {1, 1, 1}, b1 = {32, 1, 1};
    for (size_t i = 0; i < NKINDS; i++) {
        unsigned long long ns = kinds[i].ns;
        if (attn && strstr(kinds[i].name, "flash_fwd"))
            ns *= 3;
        kinds[i].k = fakecuda_runtime_kernel(kinds[i].name, ns);
    }
    void *dev;
    static char host[1 << 16];
    cudaMalloc(&dev, sizeof(host));
    for (int step = 0; step < 2; step++) {
        nvtxRangeId_t step_range = nvtxRangeStartA("train_step");
        nvtxRangePushA("forward");
        for (size_t i = 0; i < NKINDS; i++) {
            if (kinds[i].backward || (attn && strstr(kinds[i].name, "fprop")))
                continue;
            cudaLaunchKernel(kinds[i].k, g1, b1, NULL, 0, NULL);
            kinds[i].launches++;
        }
        cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice);
        cudaDeviceSynchronize();
        nvtxRangePop();
        nvtxRangePushA("backward");
        for (size_t i = 0; i < NKINDS; i++) {
            if (!kinds[i].backward)
                continue;
            cudaLaunchKernel(kinds[i].k, g1, b1, NULL, 0, NULL);
            kinds[i].launches++;
        }
        cudaMemset(dev, 0, sizeof(host));
        cudaDeviceSynchronize();
        nvtxRangePop();
        nvtxRangeEnd(step_range);
    }
    cudaFree(dev);
    for (size_t i = 0; i < NKINDS; i++)
        printf("launched %d %s\n", kinds[i].launches, kinds[i].name);
    printf("kinds_work: %s done\n", v);
    return 0;
}
