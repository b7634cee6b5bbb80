/* test_narrow.c */
#include <criterion/criterion.h>
