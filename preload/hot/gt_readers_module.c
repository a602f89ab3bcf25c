/* gt_readers_module.c: what a module-loading call was given (category
 * GT_CAT_MODULE): the image's format and length, and whether the driver
 * compiled PTX for it. An image is only read once the real call accepted
 * it, and only as far as its own format says it reaches. */
#include <string.h>

#include "hot/gt_names.h"
#include "hot/gt_readers.h"

enum { GT_FATBIN_MAGIC = 0xBA55ED50u, GT_FATBIN_WRAPPER_MAGIC = 0x466243b1u };

/* The ELF header fields that place its section header table (64-bit). */
struct gt_elf64_head {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct gt_fatbin_head {
    uint32_t magic;
    uint16_t version, header_size;
    uint64_t size;
};

/* __fatBinC_Wrapper_t: what nvcc's host code hands the runtime. */
struct gt_fatbin_wrapper {
    uint32_t magic, version;
    const void *data;
    const void *unused;
};

static int gt_is_ptx(const char *t)
{
    for (int i = 0; i < 4096 && t[i]; i++) {
        if (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')
            continue;
        if (t[i] == '/' && t[i + 1] == '/') {
            while (t[i] && t[i] != '\n')
                i++;
            if (!t[i])
                return 0;
            continue;
        }
        return !strncmp(t + i, ".version", 8) || !strncmp(t + i, ".target", 7);
    }
    return 0;
}

/* An ELF image's length: where its last table or section ends. */
static uint64_t gt_elf_bytes(const unsigned char *b)
{
    const struct gt_elf64_head *h = (const struct gt_elf64_head *)b;
    uint64_t end = h->shoff + (uint64_t)h->shnum * h->shentsize;
    if (h->phoff + (uint64_t)h->phnum * h->phentsize > end)
        end = h->phoff + (uint64_t)h->phnum * h->phentsize;
    if (h->shentsize < 64)
        return end;
    for (uint16_t i = 0; i < h->shnum; i++) {
        const unsigned char *sh = b + h->shoff + (uint64_t)i * h->shentsize;
        uint32_t type;
        uint64_t off, size;
        memcpy(&type, sh + 4, sizeof(type));
        memcpy(&off, sh + 24, sizeof(off));
        memcpy(&size, sh + 32, sizeof(size));
        if (type != 8 /* SHT_NOBITS */ && off + size > end)
            end = off + size;
    }
    return end;
}

static void gt_set_module(struct gt_event *ev, int kind, uint64_t bytes, int jit)
{
    ev->u.module.kind = (uint8_t)kind;
    ev->u.module.bytes = bytes;
    ev->u.module.jit = (uint8_t)(jit ? 1 : 0);
}

void gt_rd_module_image(struct gt_event *ev, int res, const void *image)
{
    if (res != CUDA_SUCCESS || !image) {
        gt_set_module(ev, GT_MOD_NONE, 0, 0);
        return;
    }
    const unsigned char *b = image;
    uint32_t magic;
    memcpy(&magic, b, sizeof(magic));
    if (magic == GT_FATBIN_WRAPPER_MAGIC) {
        const struct gt_fatbin_wrapper *w = image;
        if (!w->data) {
            gt_set_module(ev, GT_MOD_FATBIN, 0, 0);
            return;
        }
        b = w->data;
        memcpy(&magic, b, sizeof(magic));
    }
    if (!memcmp(b, "\177ELF", 4) && b[4] == 2) {
        gt_set_module(ev, GT_MOD_CUBIN, gt_elf_bytes(b), 0);
    } else if (magic == GT_FATBIN_MAGIC) {
        const struct gt_fatbin_head *h = (const struct gt_fatbin_head *)b;
        gt_set_module(ev, GT_MOD_FATBIN, (uint64_t)h->header_size + h->size, 0);
    } else if (gt_is_ptx((const char *)b)) {
        /* PTX is text, NUL-terminated as the API asks; the driver compiled it */
        gt_set_module(ev, GT_MOD_PTX, strlen((const char *)b) + 1, 1);
    } else {
        gt_set_module(ev, GT_MOD_OTHER, 0, 0);
    }
}

void gt_rd_module_file(struct gt_event *ev, int res, int ptx)
{
    gt_set_module(ev, GT_MOD_FILE, 0, res == CUDA_SUCCESS && ptx);
}

void gt_rd_module_none(struct gt_event *ev)
{
    gt_set_module(ev, GT_MOD_NONE, 0, 0);
}

void gt_rd_link_data(struct gt_event *ev, int res, CUjitInputType type, size_t size)
{
    int kind = type == CU_JIT_INPUT_PTX ? GT_MOD_PTX : type == CU_JIT_INPUT_CUBIN ? GT_MOD_CUBIN
             : type == CU_JIT_INPUT_FATBINARY ? GT_MOD_FATBIN : GT_MOD_OTHER;
    gt_set_module(ev, kind, size, res == CUDA_SUCCESS && type == CU_JIT_INPUT_PTX);
}

void gt_rd_link_complete(struct gt_event *ev, int res, size_t *size)
{
    gt_set_module(ev, GT_MOD_CUBIN, res == CUDA_SUCCESS && size ? *size : 0, 0);
}
