/* rl_batch_cuda.h — the CUDA backend of the batch API (rl_batch.h): the same environments, stepped on the GPU.
 *
 *   b = rl_batch_create(m, N, RL_BATCH_AVBD, NULL, err, n);       (the host mirror: models, states, caches)
 *   rl_batch_cuda_attach(b, RL_CUDA_GPU, err, n);                 (every environment copied to the device)
 *   loop { rl_batch_cuda_step(b); }  rl_batch_cuda_sync(b);        (states back into b->d[e], b->am[e])
 *
 * Layout: one thread per environment (block of RL_CUDA_BLOCK threads); each environment is its AVBD state
 * (rl_avbd and its one buffer), its rl_data (struct and buffer) and its model (shared, or its own copy after
 * rl_batch_env_model), copied byte for byte with every pointer rebased to the device copy.  The step of an
 * environment is the C engine's AVBD step (rl_avbd_step_maximal: ground contacts, colouring, sweeps, dual
 * update, velocity recovery, then qpos/qvel from the maximal state) compiled by nvcc for the device from the
 * same sources (RL_HDFN functions), so no formula has a second copy; the colouring is redone at every step
 * from that step's contacts, as on the CPU.
 *
 * Divergence policy (as rl_batch.h): an environment whose step fails (non-finite update: the step undone) is
 * brought back, reset on the host by rl_batch_reset's rule, counted in b->resets[e], and copied up again.
 *
 * RL_CUDA_HOST: the same images in host memory and the same environment step run on the host, one
 * environment after the other (the kernel's logic without a GPU: tests and the device study's
 * cuda_host_emulation rows).
 *
 * Refused at attach (one line): another engine than AVBD; a model whose contacts need the collision
 * pipeline (RL_AVBD_CONTACTS_DATA: two geoms on different dynamic bodies may touch; the device builds the
 * AVBD ground contacts of sphere, capsule and box geoms against planes only); no CUDA device (RL_CUDA_GPU). */
#ifndef RL_BATCH_CUDA_H
#define RL_BATCH_CUDA_H
#include "rl_batch.h"

#define rl_cuda_devices       RL_NAME(cuda_devices)
#define rl_batch_cuda_attach  RL_NAME(batch_cuda_attach)
#define rl_batch_cuda_step    RL_NAME(batch_cuda_step)
#define rl_batch_cuda_sync    RL_NAME(batch_cuda_sync)
#define rl_batch_cuda_put     RL_NAME(batch_cuda_put)
#define rl_batch_cuda_detach  RL_NAME(batch_cuda_detach)
#define rl_batch_cuda_emulated RL_NAME(batch_cuda_emulated)
#define rl_batch_cuda_host_twin RL_NAME(batch_cuda_host_twin)

#ifdef __cplusplus
extern "C" {
#endif

enum { RL_CUDA_GPU = 0, RL_CUDA_HOST = 1 };
#define RL_CUDA_BLOCK 64

/* CUDA devices present (0 when the runtime finds none or fails); a one-line reason in why when 0 */
int rl_cuda_devices(char *why, int whylen);
/* copy every environment of b to the device (mode RL_CUDA_GPU) or to host images (RL_CUDA_HOST); 0, or −1
   with a one-line err */
int rl_batch_cuda_attach(rl_batch *b, int mode, char *err, int errlen);
/* one step of every environment (kernel, or the host loop of RL_CUDA_HOST); divergence policy applied */
void rl_batch_cuda_step(rl_batch *b);
/* every environment's state back into the host mirror (b->am[e], b->d[e]: qpos, qvel, time, counters) */
void rl_batch_cuda_sync(rl_batch *b);
/* environment e copied up again after a host-side change (rl_batch_set_state, controls, its model) */
void rl_batch_cuda_put(rl_batch *b, int e);
void rl_batch_cuda_detach(rl_batch *b);
/* 1 when b is attached in RL_CUDA_HOST mode */
int rl_batch_cuda_emulated(const rl_batch *b);
/* one step of every environment on the host from copies of the current images (the same environment step);
   qpos [n×nq], qvel [n×nv] receive the states after it; the images are not changed.  0, or −1 (memory) */
int rl_batch_cuda_host_twin(rl_batch *b, real *qpos, real *qvel);

#ifdef __cplusplus
}
#endif
#endif
