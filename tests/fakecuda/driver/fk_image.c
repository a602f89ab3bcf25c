/* fk_image.c: module images (see fk_image.h). */
#include <ctype.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fk_image.h"

/* A member's flags: compressed (LZ4, or zstd as nvcc 12.8 on writes) */
enum { FK_FATBIN_MAGIC = 0xBA55ED50u, FK_FATBIN_KIND_PTX = 1, FK_FATBIN_KIND_ELF = 2,
       FK_FATBIN_COMPRESSED = 0x2000 | 0x8000, FK_STO_CUDA_ENTRY = 0x10 };

static int fk_add_sym(struct fk_image *img, const char *name, size_t nlen, size_t size, int is_func)
{
    for (size_t i = 0; i < img->nsyms; i++)
        if (strlen(img->syms[i].name) == nlen && !memcmp(img->syms[i].name, name, nlen))
            return 0;
    struct fk_symbol *v = realloc(img->syms, (img->nsyms + 1) * sizeof(*v));
    if (!v)
        return -1;
    img->syms = v;
    char *n = malloc(nlen + 1);
    if (!n)
        return -1;
    memcpy(n, name, nlen);
    n[nlen] = 0;
    img->syms[img->nsyms++] = (struct fk_symbol){n, size, is_func};
    return 0;
}

/* ---- PTX ---- */

static size_t fk_ptx_type_bytes(const char *t)
{
    /* .b8 .u16 .s32 .f64 ...: the digits are bits */
    if (t[0] != '.' || !strchr("busf", t[1]))
        return 0;
    int bits = atoi(t + 2);
    return bits >= 8 ? (size_t)bits / 8 : 0;
}

static int fk_ident_len(const char *p)
{
    int n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == '$' || p[n] == '.')
        n++;
    return n;
}

/* One statement of PTX (from p to the end of its line or brace): an
 * .entry's name, or a .global variable's name and size. */
static int fk_ptx_statement(struct fk_image *img, const char *p, const char *end)
{
    char tok[64];
    int func = 0, global = 0;
    size_t elem = 0;
    while (p < end) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (p >= end || *p == '(' || *p == '{' || *p == ';')
            break;
        int n = fk_ident_len(p);
        if (!n)
            return 0;
        snprintf(tok, sizeof(tok), "%.*s", n, p);
        if (!strcmp(tok, ".entry")) {
            func = 1;
        } else if (!strcmp(tok, ".global") || !strcmp(tok, ".const")) {
            global = 1; /* cuModuleGetGlobal finds __constant__ variables too */
        } else if (isdigit((unsigned char)tok[0])) {
            /* an alignment's value */
        } else if (tok[0] == '.') {
            if (global && fk_ptx_type_bytes(tok))
                elem = fk_ptx_type_bytes(tok);
        } else if (func) {
            return fk_add_sym(img, p, (size_t)n, 0, 1);
        } else if (global && elem) {
            size_t count = 1;
            const char *q = p + n;
            while (q < end && *q == '[') {
                count *= (size_t)strtoull(q + 1, NULL, 10);
                q = strchr(q, ']');
                if (!q)
                    break;
                q++;
            }
            return fk_add_sym(img, p, (size_t)n, elem * count, 0);
        } else {
            return 0;
        }
        p += n;
    }
    return 0;
}

static int fk_read_ptx(const char *text, size_t len, struct fk_image *img)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        const char *s = p;
        while (s < eol && isspace((unsigned char)*s))
            s++;
        /* only statements at the top level start with these directives */
        if (s < eol && *s == '.' && fk_ptx_statement(img, s, eol) < 0)
            return -1;
        p = eol + 1;
    }
    return 0;
}

static int fk_looks_like_ptx(const char *t, size_t len)
{
    size_t i = 0;
    while (i < len && (isspace((unsigned char)t[i]) || t[i] == '/')) {
        if (t[i] == '/' && i + 1 < len && t[i + 1] == '/') {
            while (i < len && t[i] != '\n')
                i++;
        } else {
            i++;
        }
    }
    return len - i >= 8 && (!strncmp(t + i, ".version", 8) || !strncmp(t + i, ".target", 7));
}

/* ---- ELF (cubin) ---- */

static int fk_read_elf(const unsigned char *b, size_t len, struct fk_image *img)
{
    if (len && len < sizeof(Elf64_Ehdr))
        return -1;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr))
        return -1;
    size_t need = eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr);
    if (len && need > len)
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
    size_t total = need;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_offset + sh[i].sh_size > total)
            total = sh[i].sh_offset + sh[i].sh_size;
    if (len && total > len)
        return -1;
    img->bytes = len ? len : total;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(b + sh[i].sh_offset);
        const char *str = (const char *)(b + sh[sh[i].sh_link].sh_offset);
        size_t strsz = sh[sh[i].sh_link].sh_size;
        for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
            int type = ELF64_ST_TYPE(sym[k].st_info);
            /* a module's globals are local symbols (not relocatable device
             * code); its functions that are kernels are marked entries */
            if ((type != STT_FUNC && type != STT_OBJECT) || sym[k].st_name >= strsz || sym[k].st_shndx == SHN_UNDEF ||
                (type == STT_FUNC && !(sym[k].st_other & FK_STO_CUDA_ENTRY)))
                continue;
            const char *name = str + sym[k].st_name;
            if (fk_add_sym(img, name, strnlen(name, strsz - sym[k].st_name), type == STT_OBJECT ? sym[k].st_size : 0,
                           type == STT_FUNC) < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- fatbinary: a header, then members, each a header and a payload ---- */

struct fk_fatbin_header {
    uint32_t magic;
    uint16_t version, header_size;
    uint64_t size;   /* of the members, after the header */
};

struct fk_fatbin_member {
    uint16_t kind, unknown;
    uint32_t header_size;
    uint64_t size;
    uint32_t compressed_size, unknown2;
    uint16_t minor, major;
    uint32_t arch;
    uint32_t name_offset, name_size;
    uint64_t flags;
};

static int fk_read_fatbin(const unsigned char *b, struct fk_image *img)
{
    const struct fk_fatbin_header *h = (const struct fk_fatbin_header *)b;
    img->bytes = (size_t)h->header_size + h->size;
    size_t off = h->header_size, end = img->bytes;
    while (off + sizeof(struct fk_fatbin_member) <= end) {
        const struct fk_fatbin_member *m = (const struct fk_fatbin_member *)(b + off);
        if (m->header_size < sizeof(*m) || off + m->header_size + m->size > end)
            return -1;
        const unsigned char *payload = b + off + m->header_size;
        img->has_ptx |= m->kind == FK_FATBIN_KIND_PTX;
        img->any |= (m->flags & FK_FATBIN_COMPRESSED) != 0;  /* what it holds cannot be told here */
        if (!(m->flags & FK_FATBIN_COMPRESSED)) {
            struct fk_image part = {0};
            int rc = 0;
            if (m->kind == FK_FATBIN_KIND_PTX) {
                rc = fk_read_ptx((const char *)payload, strnlen((const char *)payload, m->size), &part);
            } else if (m->kind == FK_FATBIN_KIND_ELF && !memcmp(payload, ELFMAG, SELFMAG)) {
                rc = fk_read_elf(payload, m->size, &part);
            }
            if (rc < 0 || fk_image_merge(img, &part) < 0) {
                fk_image_free(&part);
                return -1;
            }
            fk_image_free(&part);
        }
        off += m->header_size + m->size;
    }
    return 0;
}

int fk_image_read(const void *image, size_t len, struct fk_image *out)
{
    memset(out, 0, sizeof(*out));
    const unsigned char *b = image;
    int rc;
    if ((!len || len >= SELFMAG) && !memcmp(b, ELFMAG, SELFMAG)) {
        out->kind = FK_IMG_CUBIN;
        rc = fk_read_elf(b, len, out);
    } else if ((!len || len >= sizeof(struct fk_fatbin_header)) && *(const uint32_t *)b == FK_FATBIN_MAGIC) {
        out->kind = FK_IMG_FATBIN;
        rc = fk_read_fatbin(b, out);
    } else {
        size_t n = len ? strnlen(image, len) : strlen(image);
        if (fk_looks_like_ptx(image, n)) {
            out->kind = FK_IMG_PTX;
            out->has_ptx = 1;
            out->bytes = len ? len : n + 1;
            rc = fk_read_ptx(image, n, out);
        } else {
            out->kind = FK_IMG_OPAQUE;
            out->bytes = len ? len : n + 1;
            rc = 0;
        }
    }
    if (rc < 0)
        fk_image_free(out);
    return rc;
}

int fk_image_merge(struct fk_image *out, const struct fk_image *in)
{
    for (size_t i = 0; i < in->nsyms; i++)
        if (fk_add_sym(out, in->syms[i].name, strlen(in->syms[i].name), in->syms[i].size, in->syms[i].is_func) < 0)
            return -1;
    out->has_ptx |= in->has_ptx;
    out->any |= in->any;
    return 0;
}

void fk_image_free(struct fk_image *img)
{
    for (size_t i = 0; i < img->nsyms; i++)
        free(img->syms[i].name);
    free(img->syms);
    memset(img, 0, sizeof(*img));
}

void *fk_image_write_cubin(const struct fk_image *img, size_t *len)
{
    /* sections: null, .shstrtab, .strtab, .symtab */
    static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab";
    size_t strsz = 1;
    for (size_t i = 0; i < img->nsyms; i++)
        strsz += strlen(img->syms[i].name) + 1;
    size_t nsym = img->nsyms + 1;
    size_t off_shstr = sizeof(Elf64_Ehdr), off_str = off_shstr + sizeof(shstr);
    size_t off_sym = (off_str + strsz + 7) & ~(size_t)7;
    size_t off_sh = off_sym + nsym * sizeof(Elf64_Sym);
    size_t total = off_sh + 4 * sizeof(Elf64_Shdr);
    unsigned char *b = calloc(1, total);
    if (!b)
        return NULL;
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = ET_EXEC;
    eh->e_machine = 190; /* EM_CUDA */
    eh->e_version = EV_CURRENT;
    eh->e_ehsize = sizeof(Elf64_Ehdr);
    eh->e_shoff = off_sh;
    eh->e_shentsize = sizeof(Elf64_Shdr);
    eh->e_shnum = 4;
    eh->e_shstrndx = 1;
    memcpy(b + off_shstr, shstr, sizeof(shstr));
    Elf64_Sym *sym = (Elf64_Sym *)(b + off_sym);
    size_t at = 1;
    for (size_t i = 0; i < img->nsyms; i++) {
        size_t n = strlen(img->syms[i].name) + 1;
        memcpy(b + off_str + at, img->syms[i].name, n);
        sym[i + 1].st_name = (uint32_t)at;
        sym[i + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, img->syms[i].is_func ? STT_FUNC : STT_OBJECT);
        sym[i + 1].st_size = img->syms[i].size;
        sym[i + 1].st_shndx = SHN_ABS; /* defined: no section of code or data here */
        sym[i + 1].st_other = img->syms[i].is_func ? FK_STO_CUDA_ENTRY : 0;
        at += n;
    }
    Elf64_Shdr *sh = (Elf64_Shdr *)(b + off_sh);
    sh[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_STRTAB, .sh_offset = off_shstr, .sh_size = sizeof(shstr)};
    sh[2] = (Elf64_Shdr){.sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = off_str, .sh_size = strsz};
    sh[3] = (Elf64_Shdr){.sh_name = 19, .sh_type = SHT_SYMTAB, .sh_offset = off_sym,
                         .sh_size = nsym * sizeof(Elf64_Sym), .sh_link = 2, .sh_info = 1,
                         .sh_entsize = sizeof(Elf64_Sym)};
    *len = total;
    return b;
}
