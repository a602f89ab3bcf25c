/* fk_image.h: what a module image holds, read as the real driver reads it:
 * PTX text (its .entry names and .global variables), a cubin (an ELF: its
 * symbol table's functions and objects), a fatbinary (its PTX and
 * uncompressed ELF members); and a cubin written back out (cuLinkComplete). */
#ifndef FK_IMAGE_H
#define FK_IMAGE_H

#include <stddef.h>
#include <stdint.h>

enum fk_image_kind { FK_IMG_OPAQUE, FK_IMG_PTX, FK_IMG_CUBIN, FK_IMG_FATBIN };

struct fk_symbol {
    char *name;
    size_t size;     /* a global's bytes; 0 for a function */
    int is_func;
};

struct fk_image {
    int kind;        /* enum fk_image_kind */
    int any;         /* its functions could not all be read (compressed fatbin members): any name is one */
    int has_ptx;     /* PTX the driver compiles (JIT) */
    size_t bytes;    /* the image's length */
    struct fk_symbol *syms;
    size_t nsyms;
};

/* Reads `image` (`len` 0: find the length from the image itself). An image
 * that is none of the known formats is FK_IMG_OPAQUE, with no symbols. A
 * cubin's functions are its kernel entries (STO_CUDA_ENTRY), not its device
 * functions, as PTX's are its .entry names, not its .func ones.
 * 0, or -1 when out of memory or a known format is broken. */
int fk_image_read(const void *image, size_t len, struct fk_image *out);
/* Adds the symbols of `in` to `out` (a link). */
int fk_image_merge(struct fk_image *out, const struct fk_image *in);
void fk_image_free(struct fk_image *img);
/* A cubin (ELF64) whose symbol table holds img's symbols: malloc'd. */
void *fk_image_write_cubin(const struct fk_image *img, size_t *len);

#endif
