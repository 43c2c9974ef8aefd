/* Recursive multiplying schedules [RM §4]: parse, check, format, the default
 * schedule (rm_schedule.c) and the per-rank step plan (allreduce_rm.c).
 * Pure C, no MPI: allreduce_rm.c plans with them, for the runtime and for
 * the generator.
 *
 * A schedule runs on an ordered list of n ranks, virtual ranks 0..n-1 (the
 * executor uses the ring order for commutative operations, rank order
 * otherwise).  It is a string of tokens, optionally separated by commas,
 * spaces or tabs [RM §4.2]:
 *
 *   aB       a stage of base B >= 2
 *   cTmB     collapse the first T ranks (T % B == 0) in groups of B
 *   eTmB     expand them again (closes the cTmB with the same T and B)
 *   mRgGaB   merge R remaining ranks into group G of an aB stage
 *   nRgGaB   the last stage of a merged hypercuboid, also feeding the R
 *
 * (decimal integers).  Grammar, recursively, for a level of n ranks:
 *
 *   level(n) := a-stages whose bases multiply to exactly n   (n == 1: none)
 *             | cTmB level(n - T + T/B) eTmB                  (0 < T <= n)
 *             | mRgGaB a-stages nRgGaB                        (R >= 1, n - R >= 2,
 *                   the m base, the a bases and the n base multiply to n - R,
 *                   0 <= G < number of groups of the m (resp. n) stage)
 *
 * The whole schedule is level(n); nothing may follow it.
 *
 * Semantics, in the virtual ranks v = 0..n-1 of the current level.  The
 * stride S starts at 1 in each level and is multiplied by a stage's base
 * after the stage.
 *
 * - aB at stride S: v's digit is d = (v / S) % B and its group is
 *   {v + (k - d) S : k = 0..B-1}.  Every member sends its vector to the
 *   other B-1 and computes p_0 op p_1 op ... op p_{B-1} (p_k the vector of
 *   member k): the same expression in the same order on every member, so all
 *   get the same bits and rank order is kept [RM §4.1, Figs. 5-6].
 * - cTmB: ranks 0..T-1 form T/B groups of B consecutive ranks; members
 *   1..B-1 of a group send their vector to member 0 (the representative),
 *   which computes p_0 op ... op p_{B-1}.  The inner level numbers the
 *   representatives 0..T/B-1 and ranks v >= T as v - T + T/B; the others sit
 *   idle until eTmB, where each representative sends them the final vector.
 *   c2m2 with T = 2(n - 2^k) is MPICH's non-power-of-two fix [MPICH §4].
 * - mRgGaB: an aB stage on the hypercuboid 0..H-1 (H = n - R) at stride 1;
 *   in the same step every remaining rank H+j (j = 0..R-1) sends its vector
 *   to the B members of group G (the groups of a stage are numbered from 0 in
 *   increasing order of their lowest member), which compute
 *   (p_0 op ... op p_{B-1}) op x_H op ... op x_{n-1}.  The remaining ranks
 *   then sit idle until nRgGaB [RM §4.1, Fig. 7].
 * - nRgGaB: the last stage of the hypercuboid, an aB stage; in the same step
 *   the B members of its group G also send their vector (from before the
 *   stage) to every remaining rank, which computes p_0 op ... op p_{B-1} in
 *   digit order: the same bits as the hypercuboid's ranks.
 *
 * Every token is one step.  A schedule without m/n keeps rank order (every
 * vector holds a contiguous range of ranks and ranges are joined in order),
 * so it serves non-commutative operations; merging does not.
 *
 * Examples: n = 6: "a2,a3", "a3a2", "a6"; n = 7: "m1g0a3,n1g0a2" (RM Fig. 7)
 * or "c2m2,a2,a3,e2m2"; n = 5: "c2m2,a2,a2,e2m2"; n = 12: "a4,a3".
 */
#ifndef TRD_RM_H
#define TRD_RM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRD_RM_MAX_BASE 64   /* largest base B of a token */
#define TRD_RM_MAX_REMAIN 64 /* largest R of a merge */
#define TRD_RM_MAX_TOKENS 64 /* most tokens (= steps) of a schedule */
/* most peers of one rank in one step, and most sources of one fold */
#define TRD_RM_MAX_PEERS (TRD_RM_MAX_BASE + TRD_RM_MAX_REMAIN)
/* a fold source that is the rank's own vector (trd_rm_step.fold) */
#define TRD_RM_SELF (-1)

enum trd_rm_kind {
    TRD_RM_A = 0, /* aB */
    TRD_RM_C,     /* cTmB */
    TRD_RM_E,     /* eTmB */
    TRD_RM_M,     /* mRgGaB */
    TRD_RM_N,     /* nRgGaB */
    TRD_RM_KIND_MAX
};

/* One token of a schedule.  kind, base, arg and group are the text; the rest
 * is derived by trd_rm_parse / trd_rm_default. */
typedef struct trd_rm_token {
    int kind;   /* enum trd_rm_kind */
    int base;   /* B, 2..TRD_RM_MAX_BASE */
    int arg;    /* c, e: threshold T; m, n: remaining ranks R; a: 0 */
    int group;  /* m, n: group index G; otherwise 0 */
    int ranks;  /* ranks of the level the token belongs to */
    int stride; /* a, m, n: stride S of the stage in its level; c, e: 0 */
    int remain; /* a, m, n inside a merge: its R (ranks >= ranks - remain idle); else 0 */
    int outer;  /* index of the cTmB whose inner level holds the token, or -1 */
} trd_rm_token;

/* A checked schedule for n ranks.  Unused tokens are zero, so two schedules
 * are equal exactly when their bytes are. */
typedef struct trd_rm_schedule {
    int n;       /* ranks */
    int ntokens; /* tokens = steps */
    trd_rm_token tok[TRD_RM_MAX_TOKENS];
} trd_rm_schedule;

/* One step of one rank.  The rank sends its vector from before the step to
 * each of send[0..nsend-1] and receives one vector from each of
 * recv[0..nrecv-1] (virtual ranks, i.e. indices into the rank list); then its
 * vector becomes src(fold[0]) op src(fold[1]) op ... op src(fold[nfold-1]),
 * where src(TRD_RM_SELF) is its own vector from before the step and src(i),
 * i >= 0, the vector received from recv[i].  nfold == 0 keeps the vector;
 * nfold == 1 with a received source replaces it.  An idle step has all three
 * counts 0. */
typedef struct trd_rm_step {
    int nsend, nrecv, nfold;
    int send[TRD_RM_MAX_PEERS];
    int recv[TRD_RM_MAX_PEERS];
    int fold[TRD_RM_MAX_PEERS];
} trd_rm_step;

/* Parse and check schedule text for n >= 1 ranks [RM §4.2].
 *   text   the schedule string (grammar above); "" is the schedule of n == 1;
 *   out    the schedule (fully written on success, zeroed on error);
 *   err    errlen bytes for the message on error (may be NULL).
 * Returns TRD_OK, or TRD_ERR_INPUT with a message that names the 1-based
 * column where it
 * can, e.g. "column 4: expected a base >= 2 after 'a'",
 * "the bases multiply to 6, not 7 ranks",
 * "column 9: 'e4m2' does not close 'c2m2'". */
int trd_rm_parse(const char *text, int n, trd_rm_schedule *out, char *err, size_t errlen);

/* A schedule for any n >= 1 (out->ntokens == 0 for n == 1; n < 1 is taken as
 * 1), keeping rank order:
 *   - n's prime factors all <= maxbase: the primes, largest first, are packed
 *     first-fit into bases of product <= maxbase, and the stages run in
 *     decreasing base (the first stage, on consecutive ranks, is the largest:
 *     consecutive ranks share a node most often);
 *   - otherwise collapse to m, the largest number n/2 <= m < n whose prime
 *     factors are all <= maxbase: c<T>m2 (T = 2(n - m)), m's stages as
 *     above, e<T>m2 [RM §4.1, MPICH §4].
 * maxbase is clamped to 2..TRD_RM_MAX_BASE. */
void trd_rm_default(int n, int maxbase, trd_rm_schedule *out);

/* As trd_rm_default, but with a first stage of base `first` when
 * 2 <= first <= TRD_RM_MAX_BASE, first divides n and n / first has no prime
 * factor above maxbase (then "a<first>" followed by the stages of n / first as
 * above); otherwise trd_rm_default(n, maxbase).  With first = ranks per node,
 * the first stage is the allreduce within each node. */
void trd_rm_default_first(int n, int first, int maxbase, trd_rm_schedule *out);

/* The canonical text of s (tokens joined by ','), so that parsing it for
 * s->n ranks gives s again.  Writes at most len bytes including the '\0'
 * (truncating as snprintf does) and returns the length of the whole text. */
int trd_rm_format(const trd_rm_schedule *s, char *buf, size_t len);

/* Nonzero if s keeps rank order (it has no merge), so that a
 * non-commutative operation gives the rank-order result. */
int trd_rm_keeps_order(const trd_rm_schedule *s);

/* Steps of every rank: s->ntokens (one per token). */
int trd_rm_nsteps(const trd_rm_schedule *s);

/* Most vectors one rank receives in one step of s (the executor's buffers). */
int trd_rm_max_recv(const trd_rm_schedule *s);

/* Step `step` (0..nsteps-1) of virtual rank me (0..n-1) of s, into *out.
 * Returns TRD_OK, or TRD_ERR_INPUT for arguments out of range. */
int trd_rm_plan_step(const trd_rm_schedule *s, int me, int step, trd_rm_step *out);

#ifdef __cplusplus
}
#endif
#endif
