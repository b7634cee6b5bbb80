/* batch_cuda.cu — the CUDA backend of the batch API (rl_batch_cuda.h).
 *
 * The AVBD sources are compiled here a second time, by nvcc, as host and device code (their functions are
 * RL_HDFN); the C engine's library keeps its own C build of them.  The C++ names of this translation unit do
 * not clash with the C library's (C++ linkage, in a namespace), and the engine API the host side calls (rl_batch_reset,
 * rl_check_ctrl, …) is the C library's (declared extern "C"). */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <malloc.h>
#include <cuda_runtime.h>

extern "C" {
#include "rl_engine.h"
}
/* The AVBD header and sources in a namespace of this precision: their functions and types are this file's own
   (C++ linkage, the namespace in their names), apart from the C library's same-named ones (which this file
   does not declare, so no call can reach them) and from the other precision's object.  rl_batch_cuda.h (the
   backend's API, extern "C") is included inside, after rl_avbd.h, so rl_batch's AVBD pointers are this
   namespace's rl_avbd (the same layout). */
namespace RL_NAME(cuda) {
#include "rl_avbd.h"
#include "avbd_internal.h"
#include "avbd_sweep.c"
#include "avbd_contact.c"
#include "avbd_joint.c"
#include "avbd_compound.c"
#include "avbd_diag.c"
#include "avbd_build.c"
#include "avbd_tree.c"
#include "avbd_tendon.c"
#include "avbd_mdof.c"
#include "avbd_wrench.c"
extern "C" {
#include "rl_batch_cuda.h"
}

/* One environment as the step sees it: pointers to its images (device or host memory). */
typedef struct rlcu_env {
  rl_avbd *am;
  const rl_model *m;
  rl_data *d;
  int failed;      /* the last step failed (non-finite update, undone) */
  int unconverged; /* the last step did not meet its stopping test */
} rlcu_env;

/* The environment step of the kernel and of the host emulation: rl_avbd_step's for ground contacts (this
   file's compilation of the C engine's source) — the step of the maximal state, then qpos/qvel written back
   from it — with its status and convergence recorded.  (rl_avbd_step's start-of-step tests are the host's:
   the controls' at attach and put, the state's after a failed step by the reset.) */
RL_HDFN static void rlcu_env_step(rlcu_env *v) {
  v->failed = rl_avbd_step_maximal(v->am, v->m, v->d) != RL_OK;
  rl_avbd_to_generalized(v->am, v->m, v->d);
  v->unconverged = !v->am->stat.converged;
}

__global__ void rlcu_step_kernel(rlcu_env *env, int n, int *nfailed) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n) return;
  rlcu_env_step(env + e);
  if (env[e].failed) atomicAdd(nfailed, 1);
}

/* ------------------------------------------------------------ images */

/* Every pointer-aligned word of the struct copy s (bytes long) that points into [lo, lo + len) moves to the
   same offset from to: the engine's structs (rl_model, rl_data, rl_avbd) hold every array in one buffer,
   so this rebases all of them, whatever fields a struct gains.  (A non-pointer word whose bits fall in a
   live heap range would be moved too; a real or counter never holds such a value in practice.) */
static void rlcu_rebase(void *s, size_t bytes, const char *lo, size_t len, const char *to) {
  for (size_t o = 0; o + sizeof(void *) <= bytes; o += sizeof(void *)) {
    uintptr_t w;
    memcpy(&w, (char *)s + o, sizeof w);
    if (w >= (uintptr_t)lo && w < (uintptr_t)lo + len) {
      w = (uintptr_t)to + (w - (uintptr_t)lo);
      memcpy((char *)s + o, &w, sizeof w);
    }
  }
}

static size_t rlcu_align(size_t n) { return (n + 255) & ~(size_t)255; }

/* one struct + its buffer, as placed in the image block */
typedef struct rlcu_part {
  size_t off;  /* struct's offset in the block; its buffer follows at off + rlcu_align(sbytes) */
  size_t sbytes, bbytes;
} rlcu_part;

typedef struct rlcu_batch {
  int mode;
  int n;
  char *block;           /* all images (device or host memory) */
  size_t bytes;
  rlcu_env *env;         /* [n] in the block's memory space */
  rlcu_env *henv;        /* [n] host copy of env (the pointers) */
  int *nfailed;          /* device counter (GPU mode) */
  rlcu_part *pm, *pa, *pd; /* [n] model (shared: all entries the same), AVBD, data parts */
  char *stage;           /* host staging of one part */
  size_t stage_bytes;
} rlcu_batch;

static void rlcu_copy(const rlcu_batch *c, void *dst, const void *src, size_t n, int up) {
  if (c->mode == RL_CUDA_HOST) memcpy(dst, src, n);
  else cudaMemcpy(dst, src, n, up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
}

/* place struct s (sbytes) with its buffer (host: buf) at part p of the block: struct copy rebased to the
   buffer's image, then both copied */
static void rlcu_put_part(rlcu_batch *c, const rlcu_part *p, const void *s, const void *buf) {
  char *dst = c->block + p->off, *dbuf = dst + rlcu_align(p->sbytes);
  memcpy(c->stage, s, p->sbytes);
  rlcu_rebase(c->stage, p->sbytes, (const char *)buf, p->bbytes, dbuf);
  rlcu_copy(c, dst, c->stage, p->sbytes, 1);
  if (p->bbytes) rlcu_copy(c, dbuf, buf, p->bbytes, 1);
}

/* part p back into struct s (host), the struct's pointers rebased to the host buffer buf, and (with_buffer)
   the buffer itself */
static void rlcu_get_part(rlcu_batch *c, const rlcu_part *p, void *s, void *buf, int with_buffer) {
  char *src = c->block + p->off, *sbuf = src + rlcu_align(p->sbytes);
  rlcu_copy(c, c->stage, src, p->sbytes, 0);
  rlcu_rebase(c->stage, p->sbytes, sbuf, p->bbytes, (const char *)buf);
  memcpy(s, c->stage, p->sbytes);
  if (with_buffer && p->bbytes) rlcu_copy(c, buf, sbuf, p->bbytes, 0);
}

static size_t rlcu_part_size(const rlcu_part *p) { return rlcu_align(p->sbytes) + rlcu_align(p->bbytes); }

/* the allocation size of an engine buffer (glibc: the usable size, ≥ what was asked) */
static size_t rlcu_buf_bytes(void *buf) { return buf ? malloc_usable_size(buf) : 0; }

extern "C" int rl_cuda_devices(char *why, int whylen) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(why, (size_t)whylen, "no CUDA device (%s)", cudaGetErrorString(e));
    return 0;
  }
  if (n == 0) snprintf(why, (size_t)whylen, "no CUDA device (the runtime reports 0)");
  return n;
}

static void rlcu_free(rlcu_batch *c) {
  if (!c) return;
  if (c->mode == RL_CUDA_HOST) free(c->block);
  else {
    if (c->block) cudaFree(c->block);
    if (c->nfailed) cudaFree(c->nfailed);
  }
  free(c->henv);
  free(c->pm);
  free(c->pa);
  free(c->pd);
  free(c->stage);
  free(c);
}

/* environment e's three parts into the block and its env entry */
static void rlcu_put_env(rlcu_batch *c, rl_batch *b, int e) {
  const rl_model *m = b->m[e];
  if (b->own[e] || e == 0) rlcu_put_part(c, c->pm + e, m, m->buffer);
  rlcu_put_part(c, c->pa + e, b->am[e], b->am[e]->buffer);
  rlcu_put_part(c, c->pd + e, b->d[e], b->d[e]->buffer);
  rlcu_env *v = c->henv + e;
  v->m = (const rl_model *)(c->block + c->pm[e].off);
  v->am = (rl_avbd *)(c->block + c->pa[e].off);
  v->d = (rl_data *)(c->block + c->pd[e].off);
  v->failed = v->unconverged = 0;
  rlcu_copy(c, c->env + e, v, sizeof *v, 1);
}

extern "C" int rl_batch_cuda_attach(rl_batch *b, int mode, char *err, int errlen) {
  if (b->engine != RL_BATCH_AVBD) {
    snprintf(err, (size_t)errlen, "cuda: the device runs the AVBD engine only");
    return -1;
  }
  if (b->prm.contacts == RL_AVBD_CONTACTS_DATA) {
    snprintf(err, (size_t)errlen,
             "cuda: the model has geoms on different dynamic bodies that may touch; the device has no pair "
             "collision (ground contacts of sphere, capsule and box geoms on planes only)");
    return -1;
  }
  for (int u = 0; u < b->m[0]->nu; u++)
    if (b->m[0]->actuator_trntype[u] == RL_TRN_BODY) {
      snprintf(err, (size_t)errlen,
               "cuda: actuator '%s' acts through a body (adhesion): its moment is a mean over the contacts of "
               "rl_collision, which the device does not run",
               rl_model_name(b->m[0], b->m[0]->name_actuatoradr[u]));
      return -1;
    }
  if (mode == RL_CUDA_GPU && !rl_cuda_devices(err, errlen)) return -1;
  rlcu_batch *c = (rlcu_batch *)calloc(1, sizeof *c);
  int n = b->n;
  if (!c) goto oom;
  c->mode = mode;
  c->n = n;
  c->henv = (rlcu_env *)calloc((size_t)n, sizeof *c->henv);
  c->pm = (rlcu_part *)calloc((size_t)n, sizeof *c->pm);
  c->pa = (rlcu_part *)calloc((size_t)n, sizeof *c->pa);
  c->pd = (rlcu_part *)calloc((size_t)n, sizeof *c->pd);
  if (!c->henv || !c->pm || !c->pa || !c->pd) goto oom;
  {
    size_t off = rlcu_align(sizeof(rlcu_env) * (size_t)n), big = 0;
    for (int e = 0; e < n; e++) {
      rlcu_part *pm = c->pm + e, *pa = c->pa + e, *pd = c->pd + e;
      if (b->own[e] || e == 0) {
        pm->sbytes = sizeof(rl_model);
        pm->bbytes = rlcu_buf_bytes(b->m[e]->buffer);
        pm->off = off;
        off += rlcu_part_size(pm);
      } else *pm = c->pm[0];
      pa->sbytes = sizeof(rl_avbd);
      pa->bbytes = rlcu_buf_bytes(b->am[e]->buffer);
      pa->off = off;
      off += rlcu_part_size(pa);
      pd->sbytes = sizeof(rl_data);
      pd->bbytes = rlcu_buf_bytes(b->d[e]->buffer);
      pd->off = off;
      off += rlcu_part_size(pd);
      if (pm->sbytes > big) big = pm->sbytes;
      if (pa->sbytes > big) big = pa->sbytes;
      if (pd->sbytes > big) big = pd->sbytes;
    }
    c->bytes = off;
    c->stage_bytes = big;
    c->stage = (char *)malloc(big);
    if (!c->stage) goto oom;
    if (mode == RL_CUDA_HOST) {
      c->block = (char *)aligned_alloc(256, rlcu_align(off));
      if (!c->block) goto oom;
    } else {
      if (cudaMalloc((void **)&c->block, off) != cudaSuccess || cudaMalloc((void **)&c->nfailed, sizeof(int)) != cudaSuccess) {
        snprintf(err, (size_t)errlen, "cuda: cannot allocate %.3g GB of device memory for %d environments", (double)off / 1e9, n);
        rlcu_free(c);
        return -1;
      }
      /* the step's stack: the sweep's 6×6 systems and the diagnostics' locals */
      cudaDeviceSetLimit(cudaLimitStackSize, 16384);
    }
    c->env = (rlcu_env *)c->block;
  }
  for (int e = 0; e < n; e++) {
    b->am[e]->ctrl_zero = !rl_check_ctrl(b->m[e], b->d[e]);
    rlcu_put_env(c, b, e);
  }
  b->dev = c;
  return 0;
oom:
  snprintf(err, (size_t)errlen, "cuda: cannot allocate the images of %d environments", n);
  rlcu_free(c);
  return -1;
}

/* environment e back into the host mirror: its AVBD state and its data (struct and buffer each) */
static void rlcu_get_env(rlcu_batch *c, rl_batch *b, int e) {
  rlcu_get_part(c, c->pa + e, b->am[e], b->am[e]->buffer, 1);
  rlcu_get_part(c, c->pd + e, b->d[e], b->d[e]->buffer, 1);
}

extern "C" void rl_batch_cuda_step(rl_batch *b) {
  rlcu_batch *c = (rlcu_batch *)b->dev;
  int n = b->n, nfailed = 0;
  if (c->mode == RL_CUDA_HOST) {
    for (int e = 0; e < n; e++) {
      rlcu_env_step(c->env + e);
      nfailed += c->env[e].failed;
    }
  } else {
    cudaMemset(c->nfailed, 0, sizeof(int));
    rlcu_step_kernel<<<(n + RL_CUDA_BLOCK - 1) / RL_CUDA_BLOCK, RL_CUDA_BLOCK>>>(c->env, n, c->nfailed);
    cudaMemcpy(&nfailed, c->nfailed, sizeof(int), cudaMemcpyDeviceToHost);
  }
  b->steps++;
  /* the convergence flags and, when an environment failed, the failed ones: reset on the host, put back */
  rlcu_copy(c, c->henv, c->env, sizeof(rlcu_env) * (size_t)n, 0);
  for (int e = 0; e < n; e++) {
    b->unconverged[e] += c->henv[e].unconverged;
    if (nfailed && c->henv[e].failed) {
      unsigned char *mask = (unsigned char *)calloc((size_t)n, 1);
      rlcu_get_env(c, b, e);
      if (mask) {
        mask[e] = 1;
        rl_batch_reset(b, mask);
        free(mask);
      }
      b->resets[e]++;
      rlcu_put_env(c, b, e);
    }
  }
}

extern "C" void rl_batch_cuda_sync(rl_batch *b) {
  rlcu_batch *c = (rlcu_batch *)b->dev;
  for (int e = 0; e < b->n; e++) rlcu_get_env(c, b, e);
}

extern "C" void rl_batch_cuda_put(rl_batch *b, int e) {
  rlcu_batch *c = (rlcu_batch *)b->dev;
  b->am[e]->ctrl_zero = !rl_check_ctrl(b->m[e], b->d[e]);
  rlcu_put_env(c, b, e);
}

extern "C" void rl_batch_cuda_detach(rl_batch *b) {
  rlcu_free((rlcu_batch *)b->dev);
  b->dev = NULL;
}

extern "C" int rl_batch_cuda_emulated(const rl_batch *b) { return b->dev && ((const rlcu_batch *)b->dev)->mode == RL_CUDA_HOST; }

/* The images as they are now (the device's state) copied to the host, every pointer rebased to the copy, and
   one step of every environment run there by the same environment step; qpos [n×nq], qvel [n×nv] receive
   each environment's state after it.  With the
   kernel's step from the same images after it, this is the CPU-vs-device comparison of one step from the
   same states.  0, or −1 when the copy cannot be allocated. */
extern "C" int rl_batch_cuda_host_twin(rl_batch *b, real *qpos, real *qvel) {
  rlcu_batch *c = (rlcu_batch *)b->dev;
  char *h = (char *)aligned_alloc(256, rlcu_align(c->bytes));
  if (!h) return -1;
  rlcu_copy(c, h, c->block, c->bytes, 0);
  rlcu_env *env = (rlcu_env *)h;
  const rl_model *m = b->m[0];
  for (int e = 0; e < c->n; e++) {
    if (e == 0 || b->own[e]) rlcu_rebase(h + c->pm[e].off, c->pm[e].sbytes, c->block, c->bytes, h);
    rlcu_rebase(h + c->pa[e].off, c->pa[e].sbytes, c->block, c->bytes, h);
    rlcu_rebase(h + c->pd[e].off, c->pd[e].sbytes, c->block, c->bytes, h);
    rlcu_rebase(env + e, sizeof *env, c->block, c->bytes, h);
  }
  for (int e = 0; e < c->n; e++) {
    rlcu_env_step(env + e);
    const rl_data *d = env[e].d;
    memcpy(qpos + (size_t)e * m->nq, d->qpos, sizeof(real) * (size_t)m->nq);
    memcpy(qvel + (size_t)e * m->nv, d->qvel, sizeof(real) * (size_t)m->nv);
  }
  free(h);
  return 0;
}

} /* namespace */
