/* test_utf8.c: the filter that keeps text outputs valid UTF-8
 * (analyzer/base/gt_utf8.c): what it makes of bad bytes, and that a
 * sequence cut between two writes comes out as written whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gt_utf8.h"
#include "unit.h"

/* `in` written through the filter `chunk` bytes a write (0: one write). */
static char *filtered(const char *in, size_t n, size_t chunk)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *under = open_memstream(&buf, &len);
    FILE *f = gt_utf8_wrap(under);
    if (!f)
        return NULL;
    setvbuf(f, NULL, _IONBF, 0); /* each fwrite reaches the filter as it is */
    for (size_t at = 0; at < n;) {
        size_t k = chunk && n - at > chunk ? chunk : n - at;
        fwrite(in + at, 1, k, f);
        at += k;
    }
    fclose(f); /* closes `under` too */
    return buf;
}

static int valid(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        size_t k = gt_utf8_seq_len((const unsigned char *)s + i, n - i);
        if (!k || ((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t'))
            return 0;
        i += k;
    }
    return 1;
}

#define FFFD "\xef\xbf\xbd"

static void same_every_way(const char *in, const char *want)
{
    size_t n = strlen(in);
    for (size_t chunk = 0; chunk <= 7; chunk++) {
        char *got = filtered(in, n, chunk);
        CHECK_STR(got, want);
        free(got);
    }
}

int main(void)
{
    /* well-formed text, one to four bytes a character, is left alone */
    same_every_way("a\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80 z\n\t", "a\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80 z\n\t");
    /* Latin-1, a lone continuation byte, a cut sequence, bytes that are
     * never UTF-8 */
    same_every_way("k\xe9rn\x80" "el", "k" FFFD "rn" FFFD "el");
    same_every_way("x\xe2\x9c y", "x" FFFD FFFD " y");
    same_every_way("\xff\xfe\xc0\xaf", FFFD FFFD FFFD FFFD);
    /* surrogates, past U+10FFFF, overlong forms */
    same_every_way("\xed\xa0\x80|\xf4\x90\x80\x80|\xe0\x80\xaf", FFFD FFFD FFFD "|" FFFD FFFD FFFD FFFD "|" FFFD FFFD FFFD);
    /* control characters: '?', tab and newline kept */
    same_every_way("a\x01\x1b[31m\r\x7f\tb\n", "a??[31m?\x7f\tb\n");
    /* a sequence cut at the very end of the output */
    same_every_way("end\xc3", "end" FFFD);
    same_every_way("end\xf0\x9f\x98", "end" FFFD FFFD FFFD);
    /* random bytes: valid whatever the cut, and the same for every cut */
    srand(7);
    for (int round = 0; round < 300; round++) {
        char in[64];
        size_t n = 1 + (size_t)(rand() % 63);
        for (size_t i = 0; i < n; i++)
            in[i] = (char)(rand() % 3 ? 0x80 + rand() % 0x80 : 0x01 + rand() % 0x7f);
        in[n] = 0;
        n = strlen(in);
        char *one = filtered(in, n, 0);
        CHECK(one && valid(one));
        for (size_t chunk = 1; chunk <= 5; chunk++) {
            char *got = filtered(in, n, chunk);
            CHECK(got && one && strcmp(got, one) == 0);
            free(got);
        }
        free(one);
    }
    return unit_report("test_utf8");
}
