/* Contention check for rings on the switch tree [TREE §2, §3.2 Lemma 4].
 *
 * A message between two nodes climbs from the source to the lowest common
 * switch and descends to the destination.  The ring is contention-free when
 * no directed link (child->parent or parent->child) carries two of the ring's
 * neighbour messages.
 */
#include "ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Count the directed links of the path a -> b in use (ids as in
 * trd_topo_path_links: vertex v's up-link is 2v, its down-link 2v+1, where
 * switches are 0..S-1 and node i is S+i); the first link used twice goes to
 * *dup_link.  Returns how many links reached two uses. */
static int walk(trd_topo_t t, int a, int b, int *use, int *dup_link)
{
    int links[256], dups = 0;
    int n = trd_topo_path_links(t, a, b, links, 256);
    for (int i = 0; i < n && i < 256; i++)
        if (++use[links[i]] == 2) {
            if (*dup_link < 0)
                *dup_link = links[i];
            dups++;
        }
    return dups;
}

int trd_topo_path_links(trd_topo_t t, int a, int b, int *links, int cap)
{
    int S = trd_topo_nswitches(t), n = 0;
    int sa = trd_topo_node_switch(t, a), sb = trd_topo_node_switch(t, b);
#define PUT(link)                                                                                  \
    do {                                                                                           \
        if (n < cap)                                                                               \
            links[n] = (link);                                                                     \
        n++;                                                                                       \
    } while (0)
    if (a == b)
        return 0;
    PUT(2 * (S + a));
    PUT(2 * (S + b) + 1);
    while (sa != sb) {
        if (trd_topo_switch_depth(t, sa) >= trd_topo_switch_depth(t, sb)) {
            PUT(2 * sa);
            sa = trd_topo_switch_parent(t, sa);
        } else {
            PUT(2 * sb + 1);
            sb = trd_topo_switch_parent(t, sb);
        }
    }
#undef PUT
    return n;
}

int trd_ring_contention(trd_topo_t t, const int *nodes, int n, int *dups, char *why, size_t whylen)
{
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t);
    int *use = calloc(2 * ((size_t)S + (size_t)N), sizeof(int));
    int *seq = malloc(((size_t)n + 1) * sizeof(int));
    int m = 0, dup_link = -1;
    *dups = 0;
    if (!use || !seq) {
        free(use);
        free(seq);
        snprintf(why, whylen, "out of memory");
        return TRD_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++)
        if (m == 0 || seq[m - 1] != nodes[i])
            seq[m++] = nodes[i];
    while (m > 1 && seq[m - 1] == seq[0])
        m--;
    for (int i = 0; m > 1 && i < m; i++)
        *dups += walk(t, seq[i], seq[(i + 1) % m], use, &dup_link);
    if (*dups && why) {
        int v = dup_link / 2, down = dup_link % 2;
        const char *vn = v < S ? trd_topo_switch_name(t, v) : trd_topo_node_name(t, v - S);
        snprintf(why, whylen, "the link %s '%s' is used twice", down ? "down to" : "up from", vn);
    }
    free(use);
    free(seq);
    return TRD_OK;
}

/* The lowest common switch of switches a and b (climbing by depth). */
static int common_switch(trd_topo_t t, int a, int b)
{
    while (a != b) {
        if (trd_topo_switch_depth(t, a) >= trd_topo_switch_depth(t, b))
            a = trd_topo_switch_parent(t, a);
        else
            b = trd_topo_switch_parent(t, b);
    }
    return a;
}

int trd_ring_dfs_proof(trd_topo_t t, const int *nodes, int n, int *runs, char *why, size_t whylen)
{
    int S = trd_topo_nswitches(t), N = trd_topo_nnodes(t), m = 0, rc = TRD_OK;
    /* exits[v]: messages of the ring leaving vertex v's subtree (switches
     * 0..S-1, node i is S+i), by differences: +1 at the sender, -1 at the
     * lowest common switch, summed up the tree */
    long *exits = calloc((size_t)S + (size_t)N, sizeof *exits);
    int *seq = malloc(((size_t)n + 1) * sizeof *seq),
        *order = malloc(((size_t)S + 1) * sizeof *order);
    int *bucket = calloc((size_t)S + 2, sizeof *bucket);
    *runs = 0;
    if (!exits || !seq || !order || !bucket) {
        rc = TRD_ERR_NOMEM;
        if (why && whylen)
            snprintf(why, whylen, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (m == 0 || seq[m - 1] != nodes[i])
            seq[m++] = nodes[i];
    while (m > 1 && seq[m - 1] == seq[0])
        m--;
    for (int i = 0; m > 1 && i < m; i++) {
        int a = seq[i], b = seq[(i + 1) % m];
        exits[S + a]++;
        /* the message leaves a's switches up to (not) the common one */
        int sa = trd_topo_node_switch(t, a), c = common_switch(t, sa, trd_topo_node_switch(t, b));
        exits[sa]++;
        exits[c]--;
    }
    /* switches deepest first (counting sort by depth): children before parents */
    int maxd = 0;
    for (int s = 0; s < S; s++) {
        int d = trd_topo_switch_depth(t, s);
        maxd = d > maxd ? d : maxd;
    }
    int *cnt = realloc(bucket, ((size_t)maxd + 2) * sizeof *cnt);
    if (!cnt) {
        rc = TRD_ERR_NOMEM;
        goto out;
    }
    bucket = cnt;
    memset(cnt, 0, ((size_t)maxd + 2) * sizeof *cnt);
    for (int s = 0; s < S; s++)
        cnt[maxd - trd_topo_switch_depth(t, s) + 1]++;
    for (int d = 1; d <= maxd + 1; d++)
        cnt[d] += cnt[d - 1];
    for (int s = 0; s < S; s++)
        order[cnt[maxd - trd_topo_switch_depth(t, s)]++] = s;
    for (int k = 0; k < S; k++) {
        int s = order[k], up = trd_topo_switch_parent(t, s);
        if (up >= 0)
            exits[up] += exits[s];
    }
    /* a subtree left more than once is entered as often: its up-link and
     * its down-link carry two messages of one step */
    for (int v = 0; v < S + N; v++)
        if (exits[v] > 1) {
            (*runs)++;
            if (*runs == 1 && why && whylen)
                snprintf(why, whylen,
                         "not a DFS order: the ring enters and leaves %s '%s' %ld times (its "
                         "nodes are not one contiguous run), so its up- and down-links carry "
                         "%ld messages of one step",
                         v < S ? "switch" : "node",
                         v < S ? trd_topo_switch_name(t, v) : trd_topo_node_name(t, v - S),
                         exits[v], exits[v]);
        }
out:
    free(exits);
    free(seq);
    free(order);
    free(bucket);
    return rc;
}
