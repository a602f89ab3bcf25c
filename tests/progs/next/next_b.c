/* next_b: the definition of who() that comes after next_a's. */
const char *who(void);

const char *who(void)
{
    return "b";
}
