/* fk_module.c: the modules cuModuleLoadData loads. The simulated GPU runs
 * no code, but loads an image as the driver does far enough to know its
 * kernels by name, so that cuModuleGetFunction finds exactly those (and
 * answers CUDA_ERROR_NOT_FOUND for any other), as on a real GPU:
 *  - a cubin (ELF, as nvcc -cubin and NVRTC's nvrtcGetCUBIN make): its
 *    symbols that are functions marked as kernel entries (STO_CUDA_ENTRY);
 *  - PTX text (nvrtcGetPTX, Triton before ptxas): its `.entry` names;
 *  - a fat binary (0xBA55ED50): the cubins and PTX in it, when stored
 *    uncompressed; one whose members are compressed is loaded with its
 *    kernels unknown, and any name is found in it.
 * Anything else is not an image: CUDA_ERROR_INVALID_IMAGE. Libraries
 * (cuLibraryLoadData, how the simulated runtime loads nvcc's fat binaries)
 * are one module in which any name is found. */
#include <ctype.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "fk_driver.h"

#define FK_STO_CUDA_ENTRY 0x10
#define FK_FATBIN_MAGIC 0xBA55ED50u
#define FK_FATBIN_WRAPPER_MAGIC 0x466243B1u

static int fk_mod_add(struct CUmod_st *m, const char *name, size_t len)
{
    for (size_t i = 0; i < m->n; i++)
        if (strlen(m->names[i]) == len && !memcmp(m->names[i], name, len))
            return 0;
    char **grown = realloc(m->names, (m->n + 1) * sizeof *grown);
    if (!grown)
        return -1;
    m->names = grown;
    if (!(m->names[m->n] = strndup(name, len)))
        return -1;
    m->n++;
    return 0;
}

/* The kernel entries of a cubin; the image's bytes may be unaligned. */
static int fk_mod_elf(struct CUmod_st *m, const uint8_t *img)
{
    Elf64_Ehdr eh;
    memcpy(&eh, img, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
        return -1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh, strsh;
        memcpy(&sh, img + eh.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum || sh.sh_entsize != sizeof(Elf64_Sym))
            continue;
        memcpy(&strsh, img + eh.e_shoff + (size_t)sh.sh_link * sizeof strsh, sizeof strsh);
        const char *strs = (const char *)img + strsh.sh_offset;
        for (size_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); k++) {
            Elf64_Sym sym;
            memcpy(&sym, img + sh.sh_offset + k * sizeof sym, sizeof sym);
            if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && (sym.st_other & FK_STO_CUDA_ENTRY) &&
                sym.st_name < strsh.sh_size) {
                const char *name = strs + sym.st_name;
                if (fk_mod_add(m, name, strnlen(name, strsh.sh_size - sym.st_name)) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* The `.entry NAME` of PTX text, up to its end (n bytes, or its NUL). */
static int fk_mod_ptx(struct CUmod_st *m, const char *p, size_t n)
{
    const char *end = p + strnlen(p, n);
    for (const char *q = p; (q = memmem(q, (size_t)(end - q), ".entry", 6)) != NULL; q += 6) {
        const char *s = q + 6;
        if (q > p && !isspace((unsigned char)q[-1]))
            continue;
        while (s < end && isspace((unsigned char)*s))
            s++;
        const char *e = s;
        while (e < end && (isalnum((unsigned char)*e) || *e == '_' || *e == '$' || *e == '.'))
            e++;
        if (e > s && fk_mod_add(m, s, (size_t)(e - s)) < 0)
            return -1;
    }
    return 0;
}

static int fk_is_ptx(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return !strncmp(p, "//", 2) || !strncmp(p, ".version", 8) || !strncmp(p, ".target", 7);
}

/* A fat binary's members: header (magic, version, header size, size of
 * what follows), then each member's header (kind, version, header size,
 * payload size, ..., flags: bit 13 compressed) and payload. */
static int fk_mod_fatbin(struct CUmod_st *m, const uint8_t *img)
{
    uint32_t magic;
    uint16_t hsize;
    uint64_t total;
    memcpy(&magic, img, 4);
    memcpy(&hsize, img + 6, 2);
    memcpy(&total, img + 8, 8);
    const uint8_t *p = img + hsize, *end = p + total;
    while (p + 16 <= end) {
        uint16_t kind;
        uint32_t mh;
        uint64_t size, flags = 0;
        memcpy(&kind, p, 2);
        memcpy(&mh, p + 4, 4);
        memcpy(&size, p + 8, 8);
        if (mh >= 32)
            memcpy(&flags, p + 24, 8);
        const uint8_t *payload = p + mh;
        if (mh < 16 || payload + size > end)
            break;
        if (flags & (1u << 13))
            m->any = 1;
        else if (kind == 2 && size >= 4 && !memcmp(payload, ELFMAG, SELFMAG)) {
            if (fk_mod_elf(m, payload) < 0)
                return -1;
        } else if (kind == 1 && fk_mod_ptx(m, (const char *)payload, size) < 0)
            return -1;
        p = payload + size;
    }
    return 0;
}

CUresult fk_module_load(struct CUmod_st **out, const void *image)
{
    const uint8_t *img = image;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = FK_MAGIC_MOD;
    uint32_t magic;
    memcpy(&magic, img, 4);
    if (magic == FK_FATBIN_WRAPPER_MAGIC) { /* __fatBinC_Wrapper_t: magic, version, the fat binary */
        memcpy(&img, img + 8, sizeof img);
        memcpy(&magic, img, 4);
    }
    int r;
    if (!memcmp(img, ELFMAG, SELFMAG))
        r = fk_mod_elf(m, img);
    else if (magic == FK_FATBIN_MAGIC)
        r = fk_mod_fatbin(m, img);
    else if (fk_is_ptx((const char *)img))
        r = fk_mod_ptx(m, (const char *)img, SIZE_MAX);
    else
        r = 1;
    if (r != 0) {
        fk_module_free(m);
        return r < 0 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_IMAGE;
    }
    *out = m;
    return CUDA_SUCCESS;
}

int fk_module_has(const struct CUmod_st *m, const char *name)
{
    if (m->any)
        return 1;
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->names[i], name))
            return 1;
    return 0;
}

void fk_module_free(struct CUmod_st *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->names[i]);
    free(m->names);
    m->magic = 0;
    free(m);
}

/* ---- the driver's entry points ---- */

static struct CUmod_st fk_module = {FK_MAGIC_MOD, 1, NULL, 0};

FK_API CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    CHECK_CTX();
    if (!m || !image)
        return CUDA_ERROR_INVALID_VALUE;
    return fk_module_load(m, image);
}

FK_API CUresult cuModuleUnload(CUmodule m)
{
    if (!m || m == &fk_module || m->magic != FK_MAGIC_MOD)
        return CUDA_ERROR_INVALID_HANDLE;
    fk_module_free(m);
    return CUDA_SUCCESS;
}

FK_API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    CHECK_CTX();
    if (!f || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m || m == &fk_module || m->magic != FK_MAGIC_MOD)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!fk_module_has(m, name))
        return CUDA_ERROR_NOT_FOUND;
    *f = fk_function(name);
    return *f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

FK_API CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv, unsigned int njo,
                                  CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo; (void)jv; (void)njo; (void)lo; (void)lv; (void)nlo;
    if (!fk_initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!lib || !code)
        return CUDA_ERROR_INVALID_VALUE;
    *lib = (CUlibrary)&fk_module;
    return CUDA_SUCCESS;
}

FK_API CUresult cuLibraryUnload(CUlibrary lib)
{
    return (void *)lib == &fk_module ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* A CUkernel is the same object as its CUfunction here, as the real driver
 * lets either be passed to cuLaunchKernel. */
FK_API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    if (!k || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if ((void *)lib != &fk_module)
        return CUDA_ERROR_INVALID_HANDLE;
    *k = (CUkernel)fk_function(name);
    return *k ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
