/* Slurm's topology/block and topology/ring plugins mapped onto the model's
 * switch tree; shared by the topology.conf reader (read_slurm.c) and the
 * topology.yaml reader (read_yaml.c).
 *
 * topology/block [Slurm topology.conf(5), src/plugins/topology/block]: each
 * BlockName is a base block, nodes with a fast network among them.  BlockSizes
 * lists sizes in nodes: the first is the base block size (every block must
 * hold at least that many nodes), each further size is the base size times a
 * power of two 2^k (k <= 15) and makes an aggregation level of 2^k
 * consecutive base blocks in file order.  Without BlockSizes, the base size
 * is the node count of the first block and the levels are 1, 2, 4 and 8
 * blocks.  Levels stop at the first one that holds every block.  As in Slurm,
 * a group at the end of a level that holds fewer blocks than a group of the
 * level below is not made; its blocks join the next level up.
 *   Model: every base block is a switch named after the block, holding its
 * nodes in listed order; every aggregated block is a switch named
 * "first..last" (its first and last base block) whose children are the
 * largest groups below it; the top groups hang under one root named after the
 * first and last block of the file, unless one group already holds them all.
 * Every switch gets the default link (--latency, --bandwidth): Slurm's file
 * gives no costs.  Block b1..b4 with BlockSizes=4,16 (4 nodes each):
 *     b1..b4 -> b1 b2 b3 b4 -> 4 nodes each
 *
 * topology/ring [topology.conf(5), src/plugins/topology/ring]: each RingName
 * is an ordered ring of at most 16 nodes, position 0 first.  Model: one switch
 * per ring named after it, holding its nodes in ring order, so that the DFS
 * ring order of the model (topo.h) walks each Slurm ring in its order; several
 * rings hang under a root named "first..last" ring.
 */
#include "readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's block_record.c: levels 0..15 (2^15 base blocks). */
#define TRD_SLURM_MAX_BLOCK_LEVEL 15
/* Slurm's ring_record.c: MAX_RING_SIZE. */
#define TRD_SLURM_MAX_RING 16

/* "first..last" into a malloc'd string, or NULL. */
static char *range_name(const char *first, const char *last)
{
    size_t len = strlen(first) + strlen(last) + 3;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s..%s", first, last);
    return s;
}

/* One switch holding the nodes of g.  TRD_OK (errors in d) or TRD_ERR_NOMEM. */
static int group_switch(trd_topo_t t, trd_diag *d, const trd_slurm_group *g)
{
    int sw, rc = trd_topo_add_switch(t, d, g->loc, g->name, NULL, &sw);
    if (rc != TRD_OK)
        return rc == TRD_ERR_NOMEM ? rc : TRD_OK;
    for (int i = 0; i < g->n && rc != TRD_ERR_NOMEM; i++)
        rc = trd_topo_switch_add_node(t, d, g->nodes_loc, sw, g->nodes[i], NULL);
    return rc == TRD_ERR_NOMEM ? rc : TRD_OK;
}

/* A switch named name at loc whose children are the distinct names of
 * top[from..to) in order.  TRD_OK or TRD_ERR_NOMEM. */
static int parent_switch(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name, char *const *top,
                         int from, int to)
{
    int sw, rc = trd_topo_add_switch(t, d, loc, name, NULL, &sw);
    for (int i = from; i < to && rc == TRD_OK; i++)
        if (i == from || strcmp(top[i], top[i - 1]) != 0)
            rc = trd_topo_switch_add_child(t, d, loc, sw, top[i]);
    return rc == TRD_ERR_NOMEM ? rc : TRD_OK;
}

void trd__slurm_block_size(const char *s, long *x, const char **end)
{
    long v = 0;
    while (*s >= '0' && *s <= '9' && v <= 100000000L)
        v = 10 * v + (*s++ - '0');
    *x = v;
    *end = s;
}

static int check_sizes(trd_diag *d, const long *sizes, const trd_loc *locs, int nsizes,
                       unsigned *levels)
{
    int errs = trd_diag_count(d);
    for (int i = 0; i < nsizes; i++) {
        long q = sizes[i] / sizes[0];
        int k = 0;
        while (k <= TRD_SLURM_MAX_BLOCK_LEVEL && (1L << k) < q)
            k++;
        if (sizes[i] % sizes[0] != 0 || (q != (1L << k) && k <= TRD_SLURM_MAX_BLOCK_LEVEL))
            trd_diag_error(d, locs[i],
                           "BlockSizes %ld is not the base block size %ld times a power of two",
                           sizes[i], sizes[0]);
        else if (k > TRD_SLURM_MAX_BLOCK_LEVEL)
            trd_diag_error(d, locs[i], "BlockSizes %ld is more than 2^%d base blocks of %ld nodes",
                           sizes[i], TRD_SLURM_MAX_BLOCK_LEVEL, sizes[0]);
        else if (i > 0 && sizes[i] <= sizes[i - 1])
            trd_diag_error(d, locs[i], "BlockSizes %ld is not larger than %ld before it", sizes[i],
                           sizes[i - 1]);
        else
            *levels |= 1u << k;
    }
    return trd_diag_count(d) == errs ? TRD_OK : TRD_ERR_INPUT;
}

int trd__slurm_blocks(trd_topo_t t, trd_diag *d, const trd_slurm_group *b, int n, const long *sizes,
                      const trd_loc *size_locs, int nsizes)
{
    unsigned levels = nsizes > 0 ? 0 : 0xfu; /* Slurm's default: 1, 2, 4, 8 blocks */
    long base = nsizes > 0 ? sizes[0] : (n > 0 ? b[0].n : 0);
    int rc = TRD_OK, errs = trd_diag_count(d);
    if (nsizes > 0 && check_sizes(d, sizes, size_locs, nsizes, &levels) != TRD_OK)
        return TRD_ERR_INPUT;
    if (n == 0) {
        trd_diag_error(d, size_locs[0], "BlockSizes without any block");
        return TRD_ERR_INPUT;
    }
    for (int i = 0; i < n; i++)
        if (b[i].n < base)
            trd_diag_error(d, b[i].loc,
                           "block '%s' has %d node%s, fewer than the base block size %ld",
                           b[i].name, b[i].n, b[i].n == 1 ? "" : "s", base);
    if (trd_diag_count(d) != errs)
        return TRD_ERR_INPUT;

    /* Group sizes in base blocks, as block_record_validate() makes them. */
    int bs[TRD_SLURM_MAX_BLOCK_LEVEL + 1], nbs = 0;
    for (int k = 0; k <= TRD_SLURM_MAX_BLOCK_LEVEL; k++)
        if (levels & (1u << k)) {
            bs[nbs++] = 1 << k;
            if ((1 << k) >= n)
                break;
        }
    char **top = calloc((size_t)n, sizeof *top), **made = calloc((size_t)n * 2, sizeof *made);
    int nmade = 0;
    if (!top || !made)
        rc = TRD_ERR_NOMEM;
    for (int i = 0; i < n && rc == TRD_OK; i++) {
        rc = group_switch(t, d, &b[i]);
        top[i] = (char *)b[i].name;
    }
    for (int j = 1; j < nbs && rc == TRD_OK; j++)
        for (int i = 0; i < n && rc == TRD_OK; i += bs[j]) {
            int left = n - i, end = i + (bs[j] < left ? bs[j] : left);
            if (bs[j] > left && bs[j - 1] >= left)
                continue; /* no bigger than the group below it */
            char *name = range_name(b[i].name, b[end - 1].name);
            if (!name) {
                rc = TRD_ERR_NOMEM;
                break;
            }
            made[nmade++] = name;
            rc = parent_switch(t, d, b[i].loc, name, top, i, end);
            for (int k = i; k < end; k++)
                top[k] = name;
        }
    if (rc == TRD_OK && strcmp(top[0], top[n - 1]) != 0) {
        char *name = range_name(b[0].name, b[n - 1].name);
        if (!name)
            rc = TRD_ERR_NOMEM;
        else {
            made[nmade++] = name;
            rc = parent_switch(t, d, b[0].loc, name, top, 0, n);
        }
    }
    for (int i = 0; i < nmade; i++)
        free(made[i]);
    free(made);
    free(top);
    if (rc == TRD_OK && trd_diag_count(d) != errs)
        rc = TRD_ERR_INPUT;
    return rc;
}

int trd__slurm_rings(trd_topo_t t, trd_diag *d, const trd_slurm_group *r, int n)
{
    int rc = TRD_OK, errs = trd_diag_count(d);
    for (int i = 0; i < n; i++)
        if (r[i].n > TRD_SLURM_MAX_RING)
            trd_diag_error(d, r[i].nodes_loc,
                           "ring '%s' has %d nodes, more than the %d Slurm allows", r[i].name,
                           r[i].n, TRD_SLURM_MAX_RING);
    if (trd_diag_count(d) != errs)
        return TRD_ERR_INPUT;
    for (int i = 0; i < n && rc == TRD_OK; i++)
        rc = group_switch(t, d, &r[i]);
    if (rc == TRD_OK && n > 1) {
        char *name = range_name(r[0].name, r[n - 1].name);
        char **top = malloc((size_t)n * sizeof *top);
        if (!name || !top)
            rc = TRD_ERR_NOMEM;
        for (int i = 0; i < n && top; i++)
            top[i] = (char *)r[i].name;
        if (rc == TRD_OK)
            rc = parent_switch(t, d, r[0].loc, name, top, 0, n);
        free(top);
        free(name);
    }
    if (rc == TRD_OK && trd_diag_count(d) != errs)
        rc = TRD_ERR_INPUT;
    return rc;
}
