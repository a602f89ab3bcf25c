/* fk_module.c: modules, libraries and the linker. The simulated GPU runs
 * no code, but every entry point loads its image as the real driver reads
 * it (fk_image.h), far enough that cuModuleGetFunction finds exactly its
 * kernels (CUDA_ERROR_NOT_FOUND for any other name) and cuModuleGetGlobal
 * its variables, each given device memory of its size: PTX (.entry names,
 * .global/.const variables), a cubin (kernel entries, objects), a fat
 * binary (its uncompressed members; with a compressed one, any name is a
 * kernel). cuModuleLoad reads the file, as Triton's and PyTorch Inductor's
 * launchers load what ptxas wrote. PTX is compiled (JIT): each PTX image a
 * load or a link takes costs FAKECUDA_JIT_NS of host time inside the call.
 * A module load refuses bytes in no known format (CUDA_ERROR_INVALID_IMAGE);
 * a library takes them as an opaque module in which any name is a kernel
 * (how the simulated runtime loads nvcc's fat binaries). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"
#include "fk_image.h"

struct CUmod_st {
    uint32_t magic;
    struct fk_image img;
    void **global_mem;       /* device memory of each symbol that is a global */
};

struct CUlinkState_st {
    uint32_t magic;
    struct fk_image img;
    void *cubin;             /* cuLinkComplete's output, freed by cuLinkDestroy */
};

enum { FK_MAGIC_LINK = 0x4c4e4b31, FK_MAGIC_MOD_GONE = 0x474f4e45 };

/* What a PTX compile costs the host, set from outside. */
static void fk_jit(const struct fk_image *img)
{
    if (!img->has_ptx || !fk_cfg.jit_ns)
        return;
    uint64_t t0 = fakecuda_now_ns();
    while (fakecuda_now_ns() - t0 < fk_cfg.jit_ns)
        ;
}

/* Without a context check: a library needs none. `opaque_ok`: bytes in no
 * known format are a module in which any name is a kernel (a library). */
static CUresult fk_module_new(const void *image, size_t len, CUmodule *out, int opaque_ok)
{
    if (!out || !image)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = calloc(1, sizeof(*m));
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (fk_image_read(image, len, &m->img) < 0 || (m->img.kind == FK_IMG_OPAQUE && !opaque_ok)) {
        fk_image_free(&m->img);
        free(m);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    if (m->img.kind == FK_IMG_OPAQUE)
        m->img.any = 1;
    fk_jit(&m->img);
    m->global_mem = calloc(m->img.nsyms + 1, sizeof(*m->global_mem));
    if (!m->global_mem) {
        fk_image_free(&m->img);
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < m->img.nsyms; i++) {
        const struct fk_symbol *s = &m->img.syms[i];
        if (s->is_func || !(m->global_mem[i] = calloc(1, s->size ? s->size : 1)))
            continue;
        fk_mem_add((uintptr_t)m->global_mem[i], s->size ? s->size : 1, FK_MEM_DEVICE, 0);
    }
    m->magic = FK_MAGIC_MOD;
    *out = m;
    return CUDA_SUCCESS;
}

static struct CUmod_st *fk_mod(CUmodule m)
{
    return m && m->magic == FK_MAGIC_MOD ? m : NULL;
}

static const struct fk_symbol *fk_find(const struct CUmod_st *m, const char *name, int func, size_t *index)
{
    for (size_t i = 0; i < m->img.nsyms; i++)
        if (m->img.syms[i].is_func == func && !strcmp(m->img.syms[i].name, name)) {
            *index = i;
            return &m->img.syms[i];
        }
    return NULL;
}

/* A file's bytes, malloc'd (the caller frees). */
static void *fk_read_file(const char *path, size_t *len)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    while (b) {
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *g = realloc(b, 2 * cap + 1);
        if (!g) {
            free(b);
            b = NULL;
            break;
        }
        b = g;
        cap *= 2;
    }
    fclose(f);
    if (b)
        b[n] = 0;  /* PTX text ends there */
    *len = n;
    return b;
}

/* ---- modules ---- */

FK_API CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    CHECK_CTX();
    return fk_module_new(image, 0, m, 0);
}

FK_API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *o, void **v)
{
    (void)n; (void)o; (void)v;
    CHECK_CTX();
    return fk_module_new(image, 0, m, 0);
}

FK_API CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fat)
{
    CHECK_CTX();
    return fk_module_new(fat, 0, m, 0);
}

FK_API CUresult cuModuleLoad(CUmodule *m, const char *path)
{
    CHECK_CTX();
    if (!m || !path)
        return CUDA_ERROR_INVALID_VALUE;
    size_t len;
    void *b = fk_read_file(path, &len);
    if (!b)
        return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = len ? fk_module_new(b, len, m, 0) : CUDA_ERROR_INVALID_IMAGE;
    free(b);
    return r;
}

FK_API CUresult cuModuleUnload(CUmodule hm)
{
    struct CUmod_st *m = fk_mod(hm);
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    m->magic = FK_MAGIC_MOD_GONE;  /* kept: a stale handle must not reach freed memory */
    return CUDA_SUCCESS;
}

FK_API CUresult cuModuleGetFunction(CUfunction *f, CUmodule hm, const char *name)
{
    CHECK_CTX();
    if (!f || !name)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = fk_mod(hm);
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    size_t i;
    if (!m->img.any && !fk_find(m, name, 1, &i))
        return CUDA_ERROR_NOT_FOUND;
    *f = fk_function(name);
    return *f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FK_API CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hm, const char *name)
{
    CHECK_CTX();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = fk_mod(hm);
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    size_t i;
    const struct fk_symbol *s = fk_find(m, name, 0, &i);
    if (!s || !m->global_mem[i])
        return CUDA_ERROR_NOT_FOUND;
    if (dptr)
        *dptr = (CUdeviceptr)(uintptr_t)m->global_mem[i];
    if (bytes)
        *bytes = s->size;
    return CUDA_SUCCESS;
}

/* ---- libraries: a module by another name (cuLibraryGetModule gives it) ---- */

static CUresult fk_library_new(CUlibrary *lib, const void *code, size_t len)
{
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!lib || !code)
        return CUDA_ERROR_INVALID_VALUE;
    /* a library is context-independent: loaded without a current context */
    CUmodule m = NULL;
    CUresult r = fk_module_new(code, len, &m, 1);
    if (r == CUDA_SUCCESS)
        *lib = (CUlibrary)m;
    return r;
}

FK_API CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv, unsigned int njo,
                                  CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo; (void)jv; (void)njo; (void)lo; (void)lv; (void)nlo;
    return fk_library_new(lib, code, 0);
}

FK_API CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *path, CUjit_option *jo, void **jv,
                                      unsigned int njo, CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo; (void)jv; (void)njo; (void)lo; (void)lv; (void)nlo;
    if (!lib || !path)
        return CUDA_ERROR_INVALID_VALUE;
    size_t len;
    void *b = fk_read_file(path, &len);
    if (!b)
        return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = len ? fk_library_new(lib, b, len) : CUDA_ERROR_INVALID_IMAGE;
    free(b);
    return r;
}

FK_API CUresult cuLibraryUnload(CUlibrary lib)
{
    return cuModuleUnload((CUmodule)lib);
}

FK_API CUresult cuLibraryGetModule(CUmodule *m, CUlibrary lib)
{
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_mod((CUmodule)lib))
        return CUDA_ERROR_INVALID_HANDLE;
    *m = (CUmodule)lib;
    return CUDA_SUCCESS;
}

/* A CUkernel is the same object as its CUfunction here, as the real driver
 * lets either be passed to cuLaunchKernel. */
FK_API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    if (!k || !name)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUmod_st *m = fk_mod((CUmodule)lib);
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    size_t i;
    if (!m->img.any && !fk_find(m, name, 1, &i))
        return CUDA_ERROR_NOT_FOUND;
    *k = (CUkernel)fk_function(name);
    return *k ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- the linker: images in, one cubin out ---- */

static struct CUlinkState_st *fk_link(CUlinkState s)
{
    return s && s->magic == FK_MAGIC_LINK ? s : NULL;
}

FK_API CUresult cuLinkCreate_v2(unsigned int n, CUjit_option *o, void **v, CUlinkState *out)
{
    (void)n; (void)o; (void)v;
    CHECK_CTX();
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUlinkState_st *s = calloc(1, sizeof(*s));
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = FK_MAGIC_LINK;
    *out = s;
    return CUDA_SUCCESS;
}

static CUresult fk_link_add(struct CUlinkState_st *s, CUjitInputType type, const void *data, size_t size)
{
    if (type != CU_JIT_INPUT_CUBIN && type != CU_JIT_INPUT_PTX && type != CU_JIT_INPUT_FATBINARY)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct fk_image img;
    if (fk_image_read(data, size, &img) < 0)
        return CUDA_ERROR_INVALID_IMAGE;
    int ok = type == CU_JIT_INPUT_PTX     ? img.kind == FK_IMG_PTX
           : type == CU_JIT_INPUT_CUBIN ? img.kind == FK_IMG_CUBIN
                                         : img.kind == FK_IMG_FATBIN;
    if (!ok) {
        fk_image_free(&img);
        return CUDA_ERROR_INVALID_IMAGE;
    }
    fk_jit(&img);
    int rc = fk_image_merge(&s->img, &img);
    fk_image_free(&img);
    return rc < 0 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}

FK_API CUresult cuLinkAddData_v2(CUlinkState hs, CUjitInputType type, void *data, size_t size, const char *name,
                                 unsigned int n, CUjit_option *o, void **v)
{
    (void)name; (void)n; (void)o; (void)v;
    struct CUlinkState_st *s = fk_link(hs);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!data || !size)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_link_add(s, type, data, size);
}

FK_API CUresult cuLinkAddFile_v2(CUlinkState hs, CUjitInputType type, const char *path, unsigned int n,
                                 CUjit_option *o, void **v)
{
    (void)n; (void)o; (void)v;
    struct CUlinkState_st *s = fk_link(hs);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    size_t len;
    void *b = fk_read_file(path, &len);
    if (!b)
        return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = len ? fk_link_add(s, type, b, len) : CUDA_ERROR_INVALID_IMAGE;
    free(b);
    return r;
}

FK_API CUresult cuLinkComplete(CUlinkState hs, void **cubin, size_t *size)
{
    struct CUlinkState_st *s = fk_link(hs);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!cubin || !size)
        return CUDA_ERROR_INVALID_VALUE;
    free(s->cubin);
    if (!(s->cubin = fk_image_write_cubin(&s->img, size)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    *cubin = s->cubin;
    return CUDA_SUCCESS;
}

FK_API CUresult cuLinkDestroy(CUlinkState hs)
{
    struct CUlinkState_st *s = fk_link(hs);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    s->magic = 0;
    fk_image_free(&s->img);
    free(s->cubin);
    free(s);
    return CUDA_SUCCESS;
}
