/* next_a: defines who() and asks for the NEXT definition of it, as
 * interposing libraries do; with next_b linked after it, that is next_b's. */
#include <dlfcn.h>

const char *who(void);
const char *next_who(void);

const char *who(void)
{
    return "a";
}

const char *next_who(void)
{
    const char *(*next)(void) = (const char *(*)(void))dlsym(RTLD_NEXT, "who");
    return next ? next() : "none";
}
