/* Reading a machine: the TOPOLOGY argument of treeduce-gen and
 * treeduce-tune, in any format the readers know (readers.h), with the
 * command line's defaults for what the input leaves out. */
#ifndef TRD_LOAD_H
#define TRD_LOAD_H

#include <stddef.h>

#include "diag.h"
#include "topo.h"

typedef struct trd_load_opts {
    const char *input;     /* a file, or "local" (this node, read with hwloc) */
    const char *format;    /* dsl, xml, slurm, yaml, ibnetdiscover, ibnet, hwloc, local; NULL: from
                            * the name or the text */
    const char *nodetype;  /* hwloc synthetic node type where the input gives none */
    const char *latency;   /* link latency where the input gives none ("2us") */
    const char *bandwidth; /* link bandwidth where the input gives none ("10GB/s") */
    const char *alpha_r_ratio; /* NULL: the topology's default */
    const char *program;       /* names the command line in messages ("treeduce-gen") */
} trd_load_opts;

/* The format of the input at path, as the readers name it (load_opts'
 * format): by its name, "local" for "local", "dsl" for *.topo, "slurm" for
 * *.conf, "yaml" for *.yaml and *.yml; else by the len bytes of its text, an
 * *.xml file "xml" (a treeduce machine) or "hwloc" (an `lstopo --of xml`
 * dump) by its root element, any other "ibnetdiscover" where the text looks
 * like ibnetdiscover output (trd_ibnet_detect), else "dsl".  text NULL: by
 * the name alone, NULL where the name does not tell (read the text once, as
 * it may be a FIFO, and ask again).  The one detector of treeduce-gen,
 * treeduce-tune and treeduce-calibrate. */
const char *trd_input_format(const char *path, const char *text, size_t len);

/* Read and finalize the machine o describes into t (created, empty).
 * *intext gets the input's text (malloc'd, NULL for local; the caller frees
 * it, also on error) and *inlen its length, for the input's hash.  Returns
 * TRD_OK, or TRD_ERR_INPUT (or another error) with the messages in d. */
int trd_load_topology(const trd_load_opts *o, trd_topo_t t, trd_diag *d, char **intext,
                      size_t *inlen);

/* Most ranks a placement file (trd_read_hosts) may place. */
#define TRD_MAX_HOSTS_RANKS (1 << 20)

/* A placement, one host name per rank in rank order, from the file at
 * path: names separated by white space or commas, as the runtime reads a
 * TREEDUCE_HOSTS file; a name that is no node of t is looked up again
 * without its domain (from its first '.'), as the runtime does.  *node_of_rank
 * gets a malloc'd array of *nranks ring indices of t (the caller frees it).
 * Each unknown host is reported to d at its line and column ("host 'x' is
 * not a node of machine 'm'"), every one of them; a file without names, or
 * with more than TRD_MAX_HOSTS_RANKS, once.  Returns TRD_OK, TRD_ERR_INPUT
 * or TRD_ERR_IO (reported to d), or TRD_ERR_NOMEM. */
int trd_read_hosts(trd_diag *d, const char *path, trd_topo_t t, int **node_of_rank, int *nranks);

#endif
