/* fk_module_file.c: cuModuleLoad, a module from a file (a cubin, PTX or
 * fatbin on disk), as Triton's and PyTorch Inductor's launchers load the
 * kernels ptxas wrote. Like any module here, its image is not run: the
 * file must exist and be readable, as a real driver reads it, and its
 * kernels are then found by name (cuModuleGetFunction). */
#include <stdio.h>

#include "fk_driver.h"

FK_API CUresult cuModuleLoad(CUmodule *m, const char *fname)
{
    CHECK_CTX();
    if (!m || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(fname, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    char head[16];
    size_t n = fread(head, 1, sizeof(head), f);
    fclose(f);
    if (n == 0)
        return CUDA_ERROR_INVALID_IMAGE;
    return cuModuleLoadData(m, head);
}
