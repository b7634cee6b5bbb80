/* test_solver.c */
#include <criterion/criterion.h>
