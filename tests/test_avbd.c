/* test_avbd.c */
#include <criterion/criterion.h>
