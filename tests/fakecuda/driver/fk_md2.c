/* fk_md2.c: MD2 (RFC 1319) and HMAC over it (RFC 2104, a 16-byte block),
 * which NVIDIA's runtime asks the driver for to check that it talks to a
 * driver of NVIDIA's (fk_export.c, INTEGRITY_CHECK). */
#include <stdint.h>
#include <string.h>

#include "fk_driver.h"

/* RFC 1319's permutation of 0..255, made from the digits of pi. */
static const uint8_t fk_md2_s[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243, 192, 199,
    115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,  103, 66,  111, 24,
    138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142, 187, 47,  238, 122, 169, 104,
    121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,  128, 127, 93,  154, 90,  144, 50,  39,
    53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179, 72,  165, 181, 209, 215, 94,  146, 42,  172, 86,
    170, 198, 79,  184, 56,  210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,
    100, 113, 135, 32,  134, 91,  207, 101, 230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,
    97,  105, 52,  64,  126, 15,  85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,
    44,  83,  13,  110, 133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193,
    171, 250, 36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,  49,  68,
    80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,
};

static void fk_md2_block(struct fk_md2 *m)
{
    for (int j = 0; j < 16; j++) {
        m->x[32 + j] = m->x[16 + j] ^ m->x[j];
        m->c[j] ^= fk_md2_s[m->x[16 + j] ^ m->l];
        m->l = m->c[j];
    }
    uint8_t t = 0;
    for (int j = 0; j < 18; j++) {
        for (int k = 0; k < 48; k++)
            t = m->x[k] ^= fk_md2_s[t];
        t = (uint8_t)(t + j);
    }
}

void fk_md2_init(struct fk_md2 *m)
{
    memset(m, 0, sizeof *m);
}

/* Each byte XORed with mask first (HMAC's key pads). */
void fk_md2_update(struct fk_md2 *m, const void *data, size_t n, uint8_t mask)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        m->x[16 + m->n++] = p[i] ^ mask;
        if (m->n == 16) {
            fk_md2_block(m);
            m->n = 0;
        }
    }
}

void fk_md2_final(struct fk_md2 *m, uint8_t out[16])
{
    uint8_t pad[16], sum[16];
    uint8_t k = (uint8_t)(16 - m->n);
    memset(pad, k, k);
    fk_md2_update(m, pad, k, 0);
    memcpy(sum, m->c, 16);
    fk_md2_update(m, sum, 16, 0);
    memcpy(out, m->x, 16);
}
