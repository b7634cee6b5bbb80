/* scale_scene.h — the synthetic scenes of the scale study (kind = scale), written as MJCF at run time so
 * that no large model file is committed:
 *   spheres:N  N free spheres (r 0.05 m, 0.1 kg) on a jittered cubic lattice of spacing 0.098 m (slight
 *              overlaps: contact-rich from the first step) in a square bin (floor and four wall planes)
 *   boxes:N    the same with boxes of half-size 0.05 m
 *   links:N    an N-link chain of free capsules (0.1 m long) joined end to end by connect equalities (a flat
 *              MJCF: MuJoCo 2.2.2's parser refuses body nesting deeper than ~95, so a nested hinge chain of
 *              1000 links cannot be loaded), lying in a zigzag on a floor plane (link–floor contacts only)
 * The lattice jitter is a fixed linear congruential sequence: the same N gives the same file. */
#ifndef RL_SCALE_SCENE_H
#define RL_SCALE_SCENE_H

/* 1 if name is a synthetic scale scene ("spheres:…", "boxes:…", "links:…") */
int rl_scale_is_scene(const char *name);
/* Write the scene FAMILY with n bodies to path, with MuJoCo's <size njmax> = njmax (MuJoCo 2.2.2 allocates
   its dense row arrays, njmax·nv and njmax², already when it loads a model: the caller sizes njmax to the
   rows it needs) and nconmax large enough for every contact the pile can make (rigidlab's capacity is
   nconmax too).  0, or −1 with one line in err. */
int rl_scale_scene_write(const char *path, const char *family, int n, long njmax, char *err, int errlen);

#endif
