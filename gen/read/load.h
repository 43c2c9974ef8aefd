/* Reading a machine: the table of the input formats, one row per reader of
 * readers.h, and the TOPOLOGY argument of treeduce-gen and treeduce-tune in
 * any of them, with the command line's defaults for what the input leaves
 * out. */
#ifndef TRD_LOAD_H
#define TRD_LOAD_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "topo.h"

/* ---- The readers, one row each ------------------------------------------------ */

/* One input format: what selects it, what reads it, and whether
 * treeduce-calibrate can write measured costs back into it.  The format
 * detector, the loader, treeduce-gen's --help and treeduce-calibrate read
 * these rows, and no other code lists the formats.  Adding a format is its
 * reader and one row (load.c). */
typedef struct trd_reader_desc {
    const char *name;        /* --format's spelling, and what trd_input_format() returns */
    const char *alias;       /* another spelling --format takes ("ibnet"), or NULL */
    const char *input;       /* the TOPOLOGY argument that is this input ("local"), or NULL */
    const char *extensions;  /* file name endings that select the row, blank-separated
                              * (".yaml .yml"); NULL: any name (by detect) */
    const char *description; /* --help's line for the row; continuation lines after '\n';
                              * rows of the same extensions share one line */
    /* Whether the len bytes of text are this format, for a file named with
     * one of the row's extensions (any name where it has none); NULL: the
     * name decides alone.  Returns 1 or 0. */
    int (*detect)(const char *text, size_t len);
    /* Read the input into t (not finalized), as the *_string readers of
     * readers.h: filename names it in messages, text its len bytes (NULL
     * where reads_text is 0).  Returns as they do. */
    int (*read)(trd_topo_t t, trd_diag *d, const char *filename, const char *text, size_t len);
    int reads_text; /* 0: the input is no file, and read gets no text (local) */
    int listed;     /* 1: named in --format's list (local is named by the TOPOLOGY argument) */
    const char *write_back; /* how treeduce-calibrate --write names such a file ("*.topo"),
                             * NULL where it has no link costs to write */
    const char *no_costs;   /* where write_back is NULL, why ("a Slurm topology.conf
                             * carries no link costs") */
} trd_reader_desc;

/* The rows, in the order --format lists them; *n gets their number.  The
 * first row reads what no name and no content selects. */
const trd_reader_desc *trd_readers(int *n);

/* The row that --format name selects (its name or alias), or NULL. */
const trd_reader_desc *trd_reader_find(const char *name);

/* The row of the input at path: the row whose input is path; else the row
 * whose extensions end path and which has no detect; else, by the len bytes
 * of its text, the first row whose extensions end path and whose detect
 * takes the text, then the first row of any name whose detect takes it;
 * else the first row.  text NULL: by the name alone, NULL where the name
 * does not tell (read the text once, as it may be a FIFO, and ask again).
 * The one detector of treeduce-gen, treeduce-tune and treeduce-calibrate. */
const trd_reader_desc *trd_reader_detect(const char *path, const char *text, size_t len);

/* trd_reader_detect()'s name: "local" for "local", "dsl" for *.topo,
 * "slurm" for *.conf, "yaml" for *.yaml and *.yml; by the text an *.xml
 * file "xml" (a treeduce machine) or "hwloc" (an `lstopo --of xml` dump) by
 * its root element, any other "ibnetdiscover" where the text looks like
 * ibnetdiscover output (trd_ibnet_detect), else "dsl".  NULL where
 * trd_reader_detect() is. */
const char *trd_input_format(const char *path, const char *text, size_t len);

/* The formats --format lists, "dsl, xml, ... ibnetdiscover (or ibnet) or
 * hwloc", into buf (len bytes, cut short where it does not fit). */
void trd_reader_list(char *buf, size_t len);

/* The files treeduce-calibrate --write takes, "*.topo or treeduce *.xml",
 * into buf (len bytes, cut short where it does not fit). */
void trd_reader_write_back_list(char *buf, size_t len);

/* The TOPOLOGY list of --help to out: a line per row (rows of the same
 * extensions on one), "  FILE.topo        the treeduce topology language". */
void trd_reader_usage(FILE *out);

/* ---- Loading the TOPOLOGY argument -------------------------------------------- */

/* The defaults for what an input leaves out: --nodetype, --latency and
 * --bandwidth of treeduce-gen and treeduce-tune without the option, and
 * what treeduce-calibrate reads a file with.  The link is topo.h's
 * TRD_DEFAULT_NET_LATENCY_S and TRD_DEFAULT_NET_BANDWIDTH_BPS as text
 * (unit.test_load holds them equal). */
#define TRD_DEFAULT_NODETYPE "package:1 core:1"
#define TRD_DEFAULT_LATENCY "2us"
#define TRD_DEFAULT_BANDWIDTH "10GB/s"

typedef struct trd_load_opts {
    const char *input;     /* a file, or "local" (this node, read with hwloc) */
    const char *format;    /* a name or alias of trd_readers(); NULL: from the name or the text */
    const char *nodetype;  /* hwloc synthetic node type where the input gives none */
    const char *latency;   /* link latency where the input gives none */
    const char *bandwidth; /* link bandwidth where the input gives none */
    const char *alpha_r_ratio; /* NULL: the topology's default */
    const char *program;       /* names the command line in messages ("treeduce-gen") */
} trd_load_opts;

/* The trd_load_opts of a command line without options: input (NULL: to be
 * set), no format, the TRD_DEFAULT_* above, the topology's alpha_r ratio,
 * program naming the command line in messages. */
trd_load_opts trd_load_opts_default(const char *input, const char *program);

/* Give t (created, nothing read yet) o's defaults for what the input leaves
 * out: the link (latency, bandwidth), the alpha_r ratio and the node type.
 * A value that does not parse is reported to d at o's program ("--latency
 * 'x': expected a time such as 2us").  Returns TRD_OK or TRD_ERR_INPUT. */
int trd_load_defaults(const trd_load_opts *o, trd_topo_t t, trd_diag *d);

/* Read and finalize the machine o describes into t (created, empty), with
 * trd_load_defaults(), in the format of the row trd_reader_find(o->format)
 * or trd_reader_detect().
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
