/* test_constraint.c */
#include <criterion/criterion.h>
