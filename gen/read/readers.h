/* Topology readers: each parses one input format into a trd_topo through the
 * constructors of topo.h.  A reader does not finalize; the caller calls
 * trd_topo_finalize() once every input has been read, and only when the
 * readers reported no error (otherwise finalize adds follow-up errors).
 */
#ifndef TRD_READERS_H
#define TRD_READERS_H

#include <stddef.h>

#include "diag.h"
#include "topo.h"

/* ---- XML machines (gen/read/read_xml.c, schema gen/read/treeduce-topology.xsd) ---- */

/* Parse the XML topology file at path, validate it against the schema that
 * is compiled into the binary, and add its links, node types, switches and
 * nodes to t (not finalized).  Nothing is added when the file is not
 * well-formed or does not match the schema.  Errors go to d as
 * "path:line:col: error: ..."; the file text is registered with
 * trd_diag_add_source().  Relative hwloc="..." paths start from the directory
 * of path.
 * Returns TRD_OK; TRD_ERR_INPUT with every error in d; TRD_ERR_IO when the
 *         file cannot be read (also reported in d, as line 0); TRD_ERR_NOMEM. */
int trd_read_xml(trd_topo_t t, trd_diag *d, const char *path);

/* Parse len bytes of XML text into t; filename is used for messages and for
 * the directory of relative hwloc paths, and the text is registered with
 * trd_diag_add_source().  Returns as trd_read_xml(), except TRD_ERR_IO. */
int trd_read_xml_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                        size_t len);

/* ---- One node from hwloc (gen/read/hwloc_nodetype.c) ------------------------------ */

/* Read a node shape (packages and cores per package) with hwloc from
 *   kind "synthetic": arg is an hwloc synthetic string ("package:2 core:8");
 *   kind "xml":       arg is a path to an `lstopo --of xml` file;
 *   kind "local":     arg ignored, the machine this runs on.
 * A machine without package objects counts as one package.  Returns TRD_OK;
 * TRD_ERR_INPUT (or TRD_ERR_NOMEM) with a one-line reason in err.  *hostname
 * (may be NULL) gets a malloc'd copy of the HostName info of the topology, or
 * NULL. */
int trd_hwloc_node_shape(const char *kind, const char *arg, int *npackages,
                         int cores_per_package[TRD_MAX_PACKAGES], char **hostname, char *err,
                         size_t errlen);

/* What trd_hwloc_node_shape("synthetic", desc) refuses before hwloc sees
 * desc, without hwloc: an empty description, a '(' or '[' never closed, more
 * cores than hwloc builds in good time.  TRD_OK, or TRD_ERR_INPUT with the
 * reason in err. */
int trd_hwloc_check_synthetic(const char *desc, char *err, size_t errlen);

/* The two above as the model's hook for node types read by hwloc, which the
 * readers give to trd_topo_add_nodetype_hwloc(). */
extern const trd_nodetype_hook trd_hwloc_nodetype_hook;

/* A machine of one node: switch "node-switch" with the default link
 * (TRD_DEFAULT_NET_*), one node named after the HostName of the hwloc
 * topology (else "localhost"), of node type "node" shaped by
 * trd_hwloc_node_shape(kind, arg).  The machine is named after the node.
 *   kind "xml":   arg is an `lstopo --of xml` file;
 *   kind "local": arg is ignored, the machine this runs on.
 * Errors are reported at "arg: ..." (xml) or "local machine: ...".
 * Returns TRD_OK; TRD_ERR_INPUT when hwloc cannot use the source (details in
 *         d); TRD_ERR_IO when the XML file cannot be read; TRD_ERR_NOMEM. */
int trd_read_hwloc_machine(trd_topo_t t, trd_diag *d, const char *kind, const char *arg);

/* trd_read_hwloc_machine(t, d, "xml", filename) of the len bytes of an
 * `lstopo --of xml` dump at text, already read from filename; the text is
 * refused as the other *_string readers refuse it (trd__reader_begin).
 * Returns as trd_read_hwloc_machine(), except TRD_ERR_IO. */
int trd_read_hwloc_machine_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                                  size_t len);

/* ---- Topology DSL, *.topo (grammar/topo.l, grammar/topo.y, gen/read/read_dsl.c)
 * and Slurm topology.conf (gen/read/read_slurm.c) ------------------------------ */

/* Parse the DSL file at path into t (not finalized).  The text is registered
 * with trd_diag_add_source() so that messages quote the line; hwloc XML paths
 * in the file are relative to its directory.
 * Returns TRD_OK; TRD_ERR_INPUT with every error in d; TRD_ERR_IO when the
 *         file cannot be read (also reported in d, as line 0); TRD_ERR_NOMEM. */
int trd_read_dsl(trd_topo_t t, trd_diag *d, const char *path);

/* Parse len bytes of DSL text; filename is used for messages and for the
 * directory of relative hwloc paths.  Returns as trd_read_dsl(). */
int trd_read_dsl_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                        size_t len);

/* One statement of a DSL block, as byte offsets into the text that was read
 * (from 0; an end is one past the last byte).  The offsets are the scanner's
 * token positions, so comments and blanks between tokens are never part of a
 * token but may lie inside arg_off..arg_end. */
typedef struct trd_dsl_stmt {
    const char *kw; /* keyword (static): "latency", "bandwidth", "injection", "alpha_r",
                     * "synthetic", "hwloc", "local", "packages", "cores", "package",
                     * "node", "link", "nodes" or "switches" */
    size_t kw_off;  /* first byte of the keyword */
    size_t arg_off; /* first byte of the first token after the keyword */
    size_t arg_end; /* end of the last token before the ';': a whole "50 us", or
                     * "n[0-7], gpu[00-03] : big" of a nodes statement; for "local;",
                     * which has none, arg_off == arg_end == the offset of its ';' */
    size_t end;     /* one past the ';' */
} trd_dsl_stmt;

/* A link, nodetype or switch block of a DSL text. */
typedef struct trd_dsl_block {
    const char *kind;          /* "link", "nodetype" or "switch" (static) */
    char *name;                /* owned by the map */
    size_t kw_off;             /* first byte of the keyword that opens the block */
    size_t close;              /* offset of its '}' */
    const trd_dsl_stmt *stmts; /* its nstmts statements in written order (in the map's stmts) */
    int nstmts;
} trd_dsl_block;

/* Source map of a DSL text: where the parser found each block and statement,
 * for tools that edit the file in place and keep every other byte.  The
 * machine statement is not part of it. */
typedef struct trd_dsl_map {
    trd_dsl_block *blocks; /* in written order */
    int nblocks;
    trd_dsl_stmt *stmts; /* all statements, block after block */
    int nstmts;
} trd_dsl_map;

/* trd_read_dsl_string() that also returns the source map of text in *map
 * (free it with trd_dsl_map_free()).  *map is set only when the result is
 * TRD_OK, so it always describes a text the reader accepted; otherwise it is
 * NULL.  map may be NULL: then this is trd_read_dsl_string().
 * Returns as trd_read_dsl_string(); TRD_ERR_NOMEM also when the map cannot
 *         be kept. */
int trd_read_dsl_string_map(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                            size_t len, trd_dsl_map **map);

/* Free a map of trd_read_dsl_string_map() with its names; NULL is ignored. */
void trd_dsl_map_free(trd_dsl_map *map);

/* Parse a Slurm topology.conf at path into t (not finalized): the
 * topology/tree (SwitchName), topology/block (BlockName, BlockSizes) or
 * topology/ring (RingName) format, one per file.  Nodes get the default node
 * type and switches the default link (trd_topo_set_default_*); LinkSpeed is
 * accepted and ignored, as Slurm itself does.
 * Returns as trd_read_dsl(). */
int trd_read_slurm(trd_topo_t t, trd_diag *d, const char *path);

/* Parse len bytes of topology.conf text; filename is used for messages.
 * Returns as trd_read_slurm(), except TRD_ERR_IO. */
int trd_read_slurm_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                          size_t len);

/* Parse a Slurm topology.yaml (Slurm 25.05 and later) at path into t (not
 * finalized), with libyaml.  Of the file's topologies, the first with
 * "cluster_default: true" is read, else the first one: a tree as
 * topology.conf's SwitchName lines, a block or ring as its BlockName or
 * RingName lines (see gen/read/slurm_plugins.c); a flat one names no nodes and is
 * refused.  Nodes and switches get the defaults as trd_read_slurm().
 * Errors are "path:line:col: error: ..." with libyaml's marks.
 * Returns as trd_read_dsl(). */
int trd_read_yaml(trd_topo_t t, trd_diag *d, const char *path);

/* Parse len bytes of topology.yaml text; filename is used for messages.
 * Returns as trd_read_yaml(), except TRD_ERR_IO. */
int trd_read_yaml_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                         size_t len);

/* Parse the text output of InfiniBand's `ibnetdiscover` at path into t (not
 * finalized): switches become switches, hosts (the first word of a channel
 * adapter's description) become nodes of the default node type, and each
 * switch's link gets the bandwidth of its slowest child link (width x speed,
 * parallel links added) and the default link's latency.  A fabric that is
 * not a tree is reduced to one (gen/read/read_ibnet.c says how).
 * Returns as trd_read_dsl(). */
int trd_read_ibnet(trd_topo_t t, trd_diag *d, const char *path);

/* Parse len bytes of ibnetdiscover output; filename is used for messages.
 * Returns as trd_read_ibnet(), except TRD_ERR_IO. */
int trd_read_ibnet_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                          size_t len);

/* Whether the len bytes of text look like ibnetdiscover output: a first
 * non-blank line "# Topology file: ...", or a vendid=, switchguid=, caguid=,
 * "Switch N \"S-" or "Ca N \"H-" line before any other text.  Returns 1 or 0. */
int trd_ibnet_detect(const char *text, size_t len);

/* ---- Shared by the Slurm readers (gen/read/slurm_plugins.c) -------------------- */

/* One BlockName or RingName of a Slurm file. */
typedef struct trd_slurm_group {
    const char *name;  /* the block's or ring's name (borrowed) */
    trd_loc loc;       /* of the name */
    trd_loc nodes_loc; /* of its node list */
    char **nodes;      /* n node names in listed order (borrowed) */
    int n;
} trd_slurm_group;

/* The block size (a node count of BlockSizes or block_sizes) at s: its
 * value into *x and the first byte after its digits into *end (*end == s:
 * no digits).  Stops reading digits past 10^8, so that a longer number leaves
 * a digit at *end.  Whether the value is positive and what may follow is the
 * caller's to check. */
void trd__slurm_block_size(const char *s, long *x, const char **end);

/* Add Slurm topology/block blocks b[0..n) to t as a switch tree, with
 * BlockSizes sizes[0..nsizes) (node counts; size_locs their locations;
 * nsizes 0: Slurm's default).  Bad sizes and blocks smaller than the base
 * block size are reported to d.
 * Returns TRD_OK, TRD_ERR_INPUT or TRD_ERR_NOMEM. */
int trd__slurm_blocks(trd_topo_t t, trd_diag *d, const trd_slurm_group *b, int n, const long *sizes,
                      const trd_loc *size_locs, int nsizes);

/* Add Slurm topology/ring rings r[0..n) to t: one switch per ring with its
 * nodes in ring order, under one root when n > 1.  A ring of more than 16
 * nodes (Slurm's limit) is reported.
 * Returns TRD_OK, TRD_ERR_INPUT or TRD_ERR_NOMEM. */
int trd__slurm_rings(trd_topo_t t, trd_diag *d, const trd_slurm_group *r, int n);

#endif
