/* csv.h — RFC 4180 CSV writer: header row, numbers round-trip exact, nan/inf spelled so,
 * written to a temporary name and renamed on close so an interrupted run never leaves a
 * half file that looks whole. */
#ifndef RL_CSV_H
#define RL_CSV_H

#include <stdio.h>

typedef struct rl_csv {
  FILE *f;
  char path[4096];
  char tmp[4200];
  int col;      /* columns written in the current row */
  int f32;      /* print numbers with 9 significant digits (float round trip) */
  long rows;    /* rows ended so far (the header counts) */
} rl_csv;

/* Open PATH for writing (through PATH.tmp.PID); "-" writes to stdout.  Returns 0 or −1 with err. */
int rl_csv_open(rl_csv *w, const char *path, int f32, char *err, int errlen);
void rl_csv_str(rl_csv *w, const char *s);   /* quoted when it holds , " or newline */
void rl_csv_num(rl_csv *w, double v);        /* %.17g (or %.9g when f32), nan, inf, -inf */
void rl_csv_int(rl_csv *w, long long v);
void rl_csv_end_row(rl_csv *w);
/* Flush, fsync-free close and rename into place.  Returns 0, or −1 (file removed) on I/O error. */
int rl_csv_close(rl_csv *w, char *err, int errlen);
/* Drop the temporary file (error paths). */
void rl_csv_abort(rl_csv *w);
/* Remove every temporary CSV still open (called at exit so a killed run leaves no stray file). */
void rl_csv_abort_all(void);

#endif
