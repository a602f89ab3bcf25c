/* fk_module_file.c: cuModuleLoad, a module from a file (a cubin, PTX or
 * fatbin on disk), as Triton's and PyTorch Inductor's launchers load the
 * kernels ptxas wrote. The driver reads the whole file and loads it as
 * cuModuleLoadData loads an image in memory: its kernels are found by name
 * (cuModuleGetFunction), never run. */
#include <stdio.h>
#include <stdlib.h>

#include "fk_driver.h"

FK_API CUresult cuModuleLoad(CUmodule *m, const char *fname)
{
    CHECK_CTX();
    if (!m || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(fname, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size <= 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    /* one NUL past the end: PTX is read as text */
    char *image = calloc(1, (size_t)size + 1);
    if (!image) {
        fclose(f);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    size_t n = fread(image, 1, (size_t)size, f);
    fclose(f);
    CUresult r = n == (size_t)size ? cuModuleLoadData(m, image) : CUDA_ERROR_INVALID_IMAGE;
    free(image); /* a module keeps its kernels' names, not its image */
    return r;
}
