/* test_convex.c */
#include <criterion/criterion.h>
