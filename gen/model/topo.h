/* The topology model: one tree for every input format.
 *
 * switches (any depth) -> nodes -> packages (sockets) -> cores.
 * Every reader (DSL, XML, Slurm topology.conf, hwloc for node types) builds a
 * trd_topo through the constructors below and then calls trd_topo_finalize();
 * nothing downstream knows which format a machine came from.
 *
 * Constructors take names, not ids, for anything that may be defined later in
 * the file (links, node types, child switches); trd_topo_finalize() resolves
 * them and reports unresolved names at the location where they were used.
 *
 * After finalize, nodes are numbered in DFS ring order [TREE §3.2, Lemma 4]:
 * switches are visited depth-first from the root in the order their parents
 * list them, and a switch's nodes are numbered in attach order when the switch
 * is first reached.  Node index i is the i-th node of the contention-free ring.
 */
#ifndef TRD_TOPO_H
#define TRD_TOPO_H

#include "algo.h"
#include "diag.h"
#include "trd_status.h"

/* trd_link_cost, the cost of one link class, is the planners' (algo.h). */

/* A valid alpha_r: >= 0 and at most the latency, give or take the rounding
 * of times written in different units ("1000ns" against "1us"). */
#define TRD_ALPHA_R_OK(c) ((c).alpha_r_s >= 0 && (c).alpha_r_s <= (c).latency_s * (1 + 1e-12))

/* Default costs used when a file does not give them. */
#define TRD_DEFAULT_NET_LATENCY_S 2e-6
#define TRD_DEFAULT_NET_BANDWIDTH_BPS 10e9
#define TRD_DEFAULT_PACKAGE_LATENCY_S 0.3e-6 /* two cores of one package */
#define TRD_DEFAULT_PACKAGE_BANDWIDTH_BPS 20e9
#define TRD_DEFAULT_NODE_LATENCY_S 0.6e-6 /* two packages of one node */
#define TRD_DEFAULT_NODE_BANDWIDTH_BPS 10e9

/* Largest machine the model accepts. */
#define TRD_MAX_PACKAGES 64
#define TRD_MAX_NODES (1 << 20)

typedef struct trd_topo *trd_topo_t;

/* Create an empty topology into *t; trd_topo_destroy() frees it (NULL is
 * ignored).  Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_topo_create(trd_topo_t *t);
void trd_topo_destroy(trd_topo_t t);

/* The file the topology was read from, named by errors that belong to no
 * line of it ("the topology has no switch"); the readers set it, the first
 * call wins (file is copied).  Returns TRD_OK or TRD_ERR_NOMEM. */
int trd_topo_set_source(trd_topo_t t, const char *file);

/* The one rule for every name a reader takes from a file (machine, link,
 * node type, switch and node names): printable UTF-8 text, not empty.  Each
 * output escapes what its format needs (generated C, DOT, XML, JSON); what
 * none can carry (control characters, bytes that are not UTF-8) is refused
 * here, reported to d at loc as "WHAT name ...".  The constructors below
 * apply it; a reader calls it for a machine name.  Returns TRD_OK or
 * TRD_ERR_INPUT. */
int trd_topo_check_name(trd_diag *d, trd_loc loc, const char *what, const char *name);

/* Machine name used for generated files unless --name overrides it (name
 * is copied; the name is not checked here: trd_topo_check_name).  Returns
 * TRD_OK or TRD_ERR_NOMEM; trd_topo_name() returns it, NULL before it is
 * set, owned by t. */
int trd_topo_set_name(trd_topo_t t, const char *name);
const char *trd_topo_name(trd_topo_t t);

/* Define a link class.  Duplicate names and bad costs (alpha_r: see
 * TRD_ALPHA_R_OK) are reported to d at loc.
 * Returns TRD_OK, TRD_ERR_INPUT or TRD_ERR_NOMEM. */
int trd_topo_add_link(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name, trd_link_cost cost);

/* Define a node type with npackages packages of cores_per_package[p] cores
 * (1 <= npackages <= TRD_MAX_PACKAGES, every count >= 1).  package_link and
 * node_link name link classes for core-to-core traffic inside one package and
 * between packages of one node; NULL keeps the TRD_DEFAULT_* shared-memory
 * costs.  source is a human-readable origin ("synthetic \"package:2 core:8\"",
 * "hwloc foo.xml", "local") shown by --explain.
 * Returns TRD_OK, TRD_ERR_INPUT (duplicate name, bad counts) or TRD_ERR_NOMEM. */
int trd_topo_add_nodetype(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name, int npackages,
                          const int *cores_per_package, const char *package_link,
                          const char *node_link, const char *source);

/* How a node type described for hwloc is read: the readers' side gives its
 * functions (trd_hwloc_nodetype_hook, readers.h) with each such type, so
 * that the model calls into no reader by name.
 *   shape: the packages and cores per package of (kind, arg), kind
 *          "synthetic", "xml" or "local"; TRD_OK, or TRD_ERR_INPUT or
 *          TRD_ERR_NOMEM with a one-line reason in err.  hostname (may be
 *          NULL) gets a malloc'd host name or NULL.
 *   check_synthetic: what shape("synthetic", desc) refuses that is found
 *          without reading it, cheaply; TRD_OK, or TRD_ERR_INPUT with the
 *          reason in err. */
typedef struct trd_nodetype_hook {
    int (*shape)(const char *kind, const char *arg, int *npackages,
                 int cores_per_package[TRD_MAX_PACKAGES], char **hostname, char *err,
                 size_t errlen);
    int (*check_synthetic)(const char *desc, char *err, size_t errlen);
} trd_nodetype_hook;

/* Define a node type whose shape hook->shape(kind, arg) reads when a node
 * first uses it: trd_topo_finalize() builds the types its nodes use and
 * reports the refusal at arg_loc; a type no node uses costs no hwloc
 * topology (a few milliseconds each), and of its description only what
 * hook->check_synthetic() checks is checked.  Until built, the type has 0
 * packages.  The other arguments are trd_topo_add_nodetype()'s.
 * Returns TRD_OK, TRD_ERR_INPUT (no hook, duplicate name, a synthetic
 * description refused at arg_loc) or TRD_ERR_NOMEM. */
int trd_topo_add_nodetype_hwloc(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name,
                                const trd_nodetype_hook *hook, const char *kind, const char *arg,
                                trd_loc arg_loc, const char *package_link, const char *node_link,
                                const char *source);

/* alpha_r where a link gives none, as a fraction of its latency: each
 * further message in flight from one rank costs ratio x latency [RM §3,
 * Eq. 3].  The default, TRD_ALPHA_R_RATIO, has four messages in flight cost
 * about two latencies [RM Fig. 4]; 0 describes a network that overlaps the
 * messages a rank posts together for free, as SimGrid's links do (the
 * platform of --simgrid has no per-message cost). */
#define TRD_ALPHA_R_RATIO 0.25
/* Set the ratio above for t, ratio in [0, 1]; trd_topo_alpha_r_ratio()
 * returns it.  Returns TRD_OK, or TRD_ERR_INPUT (t unchanged) for a ratio
 * outside [0, 1]. */
int trd_topo_set_alpha_r_ratio(trd_topo_t t, double ratio);
double trd_topo_alpha_r_ratio(trd_topo_t t);

/* The link class used where a switch names none (Slurm topology.conf
 * carries none).  Without it, a missing name is an error.  Returns TRD_OK. */
int trd_topo_set_default_link(trd_topo_t t, trd_link_cost cost);
/* The default link in *cost: 1 when one was set, else 0 and TRD_DEFAULT_NET_*
 * costs (readers that know a bandwidth but no latency start from it). */
int trd_topo_default_link(trd_topo_t t, trd_link_cost *cost);
/* The node type used where a node names none, of npackages packages of
 * cores_per_package[0..npackages) cores; source as for
 * trd_topo_add_nodetype() (NULL: "default").  Returns TRD_OK, TRD_ERR_INPUT
 * (counts out of range, nothing reported) or TRD_ERR_NOMEM. */
int trd_topo_set_default_nodetype(trd_topo_t t, int npackages, const int *cores_per_package,
                                  const char *source);

/* Declare a switch.  link names the link class of the links from this switch
 * down to its children (nodes and switches); NULL = default link.  *sw gets
 * the switch id for the calls below.  A name defined twice is reported.
 * Switches may be referenced as children before they are defined.
 * Returns TRD_OK, TRD_ERR_INPUT (reported to d at loc) or TRD_ERR_NOMEM. */
int trd_topo_add_switch(trd_topo_t t, trd_diag *d, trd_loc loc, const char *name, const char *link,
                        int *sw);

/* Attach one node (by name) of type nodetype (NULL = default) to switch sw.
 * Nodes are attached in call order.  A node name used twice, or more than
 * TRD_MAX_NODES nodes, is reported to d at loc.  Returns TRD_OK,
 * TRD_ERR_INPUT, TRD_ERR_STATE (sw is not a switch id) or TRD_ERR_NOMEM. */
int trd_topo_switch_add_node(trd_topo_t t, trd_diag *d, trd_loc loc, int sw, const char *node,
                             const char *nodetype);

/* Make the switch named child a child of sw (resolved at finalize, which
 * reports an unknown name at loc).  Returns TRD_OK, TRD_ERR_STATE (sw is not
 * a switch id) or TRD_ERR_NOMEM. */
int trd_topo_switch_add_child(trd_topo_t t, trd_diag *d, trd_loc loc, int sw, const char *child);

/* Resolve names, check that the switches form one tree (exactly one root, no
 * switch with two parents, no cycle), that there is at least one node, and
 * number nodes and switches in DFS order.  Errors go to d at the location of
 * the offending reference.  Returns TRD_OK or TRD_ERR_INPUT. */
int trd_topo_finalize(trd_topo_t t, trd_diag *d);

/* ---- Queries (valid after a successful finalize) ---------------------- */

/* The number of switches; 0 before finalize. */
int trd_topo_nswitches(trd_topo_t t);
/* Switch i (0 <= i < trd_topo_nswitches) in DFS arrival order; switch 0 is
 * the root.  Its name (owned by t), its parent's index (-1 for the root), its
 * depth (root = 0), the cost of its link down to its children and that link
 * class's name ("default" where it names none). */
const char *trd_topo_switch_name(trd_topo_t t, int i);
int trd_topo_switch_parent(trd_topo_t t, int i);
int trd_topo_switch_depth(trd_topo_t t, int i);
trd_link_cost trd_topo_switch_link(trd_topo_t t, int i);
const char *trd_topo_switch_link_name(trd_topo_t t, int i);

/* The number of nodes; 0 before finalize. */
int trd_topo_nnodes(trd_topo_t t);
/* Node i (0 <= i < trd_topo_nnodes) in DFS ring order: its name (owned by
 * t), the index of its switch, the index of its node type. */
const char *trd_topo_node_name(trd_topo_t t, int i);
int trd_topo_node_switch(trd_topo_t t, int i);
int trd_topo_node_type(trd_topo_t t, int i);
/* Index of the node named name, or -1 (also before finalize). */
int trd_topo_find_node(trd_topo_t t, const char *name);

/* The number of node types defined, in definition order. */
int trd_topo_nnodetypes(trd_topo_t t);
/* Node type ty (0 <= ty < trd_topo_nnodetypes): its name and source (owned
 * by t), its packages, the cores of package p, its cores in all, the cost
 * between two cores of one package and between two packages of one node. */
const char *trd_topo_nodetype_name(trd_topo_t t, int ty);
int trd_topo_nodetype_npackages(trd_topo_t t, int ty);
int trd_topo_nodetype_cores(trd_topo_t t, int ty, int package);
int trd_topo_nodetype_ncores(trd_topo_t t, int ty);
const char *trd_topo_nodetype_source(trd_topo_t t, int ty);
trd_link_cost trd_topo_nodetype_package_link(trd_topo_t t, int ty);
trd_link_cost trd_topo_nodetype_node_link(trd_topo_t t, int ty);

/* Cost of one message between nodes a and b: latency summed over the links
 * of the tree path, bandwidth of the slowest link on it, alpha_r the largest
 * of the link classes on it (0 if none gives one).  a == b gives the
 * zero-hop cost {0, inf}. */
trd_link_cost trd_topo_path_cost(trd_topo_t t, int a, int b);

/* ---- Helpers shared by the readers (gen/model/units.c, gen/model/hostlist.c) ------ */

/* The costs a link may have: a time from 0 to TRD_MAX_TIME_S seconds, a
 * bandwidth from TRD_MIN_BANDWIDTH_BPS to TRD_MAX_BANDWIDTH_BPS bytes/s
 * (outside, the model's sums overflow or lose every digit: a denormal
 * bandwidth made every prediction inf). */
#define TRD_MAX_TIME_S 3600.0
#define TRD_MIN_BANDWIDTH_BPS 1.0
#define TRD_MAX_BANDWIDTH_BPS 1e15
/* Parse a time such as "50us", "1.5 ms", "2e-6s", "0.3ns" into seconds.
 * Units: s, ms, us, ns (a bare number is seconds).  Returns TRD_OK, or
 * TRD_ERR_INPUT for text that is not a time or one outside 0 ..
 * TRD_MAX_TIME_S. */
int trd_parse_time(const char *s, double *seconds);
/* Parse a bandwidth such as "125MB/s", "10 GB/s", "100Gb/s", "1e9" into
 * bytes per second.  Units: B/s KB/s MB/s GB/s TB/s PB/s (powers of 1000),
 * KiB/s MiB/s GiB/s (powers of 1024), Kb/s Mb/s Gb/s Tb/s (bits).  TRD_OK or
 * TRD_ERR_INPUT (not a bandwidth, or outside TRD_MIN_BANDWIDTH_BPS ..
 * TRD_MAX_BANDWIDTH_BPS). */
int trd_parse_bandwidth(const char *s, double *bytes_per_s);

/* Expand a Slurm-style host list "n[0-3,7],gpu[00-02],login" into names
 * (zero padding kept: gpu00 gpu01 gpu02).  *names is a malloc'd array of
 * malloc'd strings; free with trd_hostlist_free.  Returns TRD_OK; on a syntax
 * error TRD_ERR_INPUT with a message ("expected ']' in host range") and the
 * 0-based offset of the error in err/errpos; TRD_ERR_NOMEM. */
int trd_hostlist_expand(const char *expr, char ***names, int *n, char *err, size_t errlen,
                        int *errpos);
/* Free names[0..n) of trd_hostlist_expand() and the array. */
void trd_hostlist_free(char **names, int n);

#endif
