/* rtld_next: dlsym semantics that the tracer's dlsym wrapper must keep:
 * RTLD_NEXT from a library finds the definition after that library, and
 * RTLD_DEFAULT the first one. Prints "next=b default=a". */
#include <dlfcn.h>
#include <stdio.h>

const char *next_who(void);

int main(void)
{
    const char *(*first)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "who");
    printf("next=%s default=%s\n", next_who(), first ? first() : "none");
    return 0;
}
