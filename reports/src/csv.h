/* csv.h — the harness's one CSV reader, one CSV writer, one way to write a file whole, and one way to find
 * the studies in a results tree.
 *   writer  RFC 4180: header row, numbers round-trip exact (%.17g, or %.9g for float runs), nan/inf
 *           spelled so; written to a temporary name and renamed on close, so an interrupted run never
 *           leaves a half file that looks whole.
 *   files   PATH is written as PATH.tmp.PID and renamed onto PATH when whole (rl_file_*).  PATH must be a
 *           regular file or absent: a symbolic link, directory, device or pipe there is refused, never
 *           replaced.  Every temporary is registered while it exists and removed on every exit path:
 *           exit() (atexit) and SIGINT/SIGTERM/SIGHUP (rl_tmp_catch_signals).
 *   reader  RFC 4180 (quotes, doubled quotes, CRLF, blank lines skipped) into a table of strings, every
 *           row checked against the header's field count; numbers through strtod, so every number the
 *           writer printed reads back to the same bits (nan, inf and -inf included).
 *   results a study folder is one that holds metrics.csv; rl_results_find walks a results tree for them.
 * Every function that can fail returns −1 (or a negative count) after writing one line into err that
 * names the file (and line). */
#ifndef RL_CSV_H
#define RL_CSV_H

#include <stddef.h>
#include <stdio.h>

/* ---------- a file written whole: PATH.tmp.PID, renamed onto PATH ---------- */

typedef struct rl_file {
  FILE *f;
  char path[4096];
  char tmp[4200]; /* empty once renamed (or for stdout) */
} rl_file;

/* Temporaries of this process (a file, or with DIR = 1 a flat folder removed with its entries), removed
   by rl_tmp_remove_all: at exit, and by the handler rl_tmp_catch_signals installs for SIGINT, SIGTERM
   and SIGHUP (which then ends the process by the same signal).  A forked child's copy of the list never
   removes the parent's entries.  rl_tmp_remove_all and rl_dir_remove_flat are async-signal-safe. */
void rl_tmp_register(const char *path, int dir);
void rl_tmp_forget(const char *path); /* renamed into place, or removed: no longer a temporary */
void rl_tmp_remove_all(void);
void rl_tmp_catch_signals(void);
/* remove the entries of the folder DIR (not recursive), then DIR */
void rl_dir_remove_flat(const char *dir);
/* 0 when PATH is a regular file or absent; −1 with "PATH: is a directory: refusing to replace it …" */
int rl_file_target_ok(const char *path, char *err, int errlen);
/* the temporary name PATH.tmp.PID the process PID writes PATH under */
void rl_tmp_path(char *out, size_t n, const char *path, long pid);
/* open PATH.tmp.<getpid()> for writing (registered as a temporary); −1 with "PATH: cannot write: why" or
   the rl_file_target_ok refusal */
int rl_file_open(rl_file *o, const char *path, char *err, int errlen);
/* close the temporary (not yet renamed); −1 with "PATH: write failed: why" and the temporary removed */
int rl_file_close(rl_file *o, char *err, int errlen);
/* rename the closed temporary onto PATH; −1 with "PATH: cannot rename into place: why", temporary removed */
int rl_file_commit(rl_file *o, char *err, int errlen);
/* drop an unfinished file: close it if open, remove the temporary */
void rl_file_drop(rl_file *o);
/* PATH ← the N bytes at DATA, through the temporary (open, write, close, commit) */
int rl_file_write(const char *path, const void *data, size_t n, char *err, int errlen);
/* PATH's whole content, NUL-terminated (*n its length when n is not NULL); NULL with err when unreadable */
char *rl_file_read(const char *path, size_t *n, char *err, int errlen);

/* ---------- the CSV writer ---------- */

typedef struct rl_csv {
  rl_file out; /* out.f is stdout for "-" */
  int col;     /* columns written in the current row */
  int f32;     /* print numbers with 9 significant digits (float round trip) */
  long rows;   /* rows ended so far (the header counts) */
} rl_csv;

/* Open PATH for writing (through PATH.tmp.PID); "-" writes to stdout.  Returns 0 or −1 with err. */
int rl_csv_open(rl_csv *w, const char *path, int f32, char *err, int errlen);
void rl_csv_str(rl_csv *w, const char *s); /* quoted when it holds , " or newline */
void rl_csv_num(rl_csv *w, double v);      /* %.17g (or %.9g when f32), nan, inf, -inf */
void rl_csv_int(rl_csv *w, long long v);
void rl_csv_end_row(rl_csv *w);
/* Flush, fsync-free close and rename into place.  Returns 0, or −1 (file removed) on I/O error. */
int rl_csv_close(rl_csv *w, char *err, int errlen);
/* Drop the temporary file (error paths). */
void rl_csv_abort(rl_csv *w);
/* Remove every temporary CSV still open (called at exit so a killed run leaves no stray file). */
void rl_csv_abort_all(void);

/* ---------- the CSV reader ---------- */

typedef struct rl_table {
  char path[4096];
  char *buf; /* the file, tokenized in place */
  int ncol, nrow;
  char **hdr;  /* ncol */
  char **cell; /* nrow * ncol */
  int *line;   /* file line of each row */
} rl_table;

/* PATH → T; −1 with "PATH:LINE: why" (T is then empty and may be freed) */
int rl_table_load(rl_table *t, const char *path, char *err, int errlen);
void rl_table_free(rl_table *t);
const char *rl_table_cell(const rl_table *t, int r, int c);
/* the column named NAME, −1 when absent */
int rl_table_col(const rl_table *t, const char *name);
/* cell (R, C) as a number (strtod, the whole cell: nan, inf, -inf too); −1 with "PATH:LINE: column 'H': not a number" */
int rl_table_num(const rl_table *t, int r, int c, double *v, char *err, int errlen);
/* PATH as a matrix of numbers (every cell numeric): row-major *v (nrow × ncol, malloc'd), the header row
 * joined by commas into *header (malloc'd; may be NULL); −1 with err naming the file and line */
int rl_numcsv_read(const char *path, char **header, int *nrow, int *ncol, double **v, char *err, int errlen);

/* ---------- the studies in a results tree ---------- */

/* Every study folder (one holding metrics.csv) in the tree under ROOT, ROOT itself included, sorted by
 * path.  A study folder is not searched further; hidden folders, plots/ and temporaries (NAME.tmp.PID)
 * are skipped and symbolic links below ROOT are not followed.  Returns the count (0: none) with *dirs
 * (free with rl_results_free) and *nsearched the number of folders looked in; −1 with err when ROOT is
 * not a readable folder or a folder in it holds a metrics.csv that is not a regular file. */
int rl_results_find(const char *root, char ***dirs, int *nsearched, char *err, int errlen);
void rl_results_free(char **dirs, int n);

#endif
