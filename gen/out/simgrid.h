/* Export of a machine as a SimGrid platform, so that SMPI (SimGrid's
 * simulator of MPI programs) runs the generated routines, and any MPI
 * program, on the machine the topology describes.
 *
 * The platform (SimGrid's platform DTD, version 4.1) has one zone holding:
 *   - one host per node, named as the topology names the node, with the
 *     node type's core count (`core`) and a nominal speed of 1 Gflop/s;
 *   - one router per switch (named as the switch; a name a node also has gets
 *     the suffix "_switch");
 *   - per node, a link to its switch with the switch's link class (latency,
 *     bandwidth), split duplex, so that each direction is a shared resource
 *     as in the cost model [TREE §2]; where the link class gives a max-rate
 *     injection bandwidth R_N [NAP Eq. 3], a second split-duplex link of
 *     that bandwidth and no latency (the node's network interface);
 *   - per switch below the root, a split-duplex link to its parent with the
 *     parent's link class (the class of the links from a switch down);
 *   - per node, a loopback route: one fatpipe link with the node's intra-node
 *     cost, the slower of its package and node links, as the model takes it
 *     for two ranks of one node.
 * A message between nodes a and b then crosses the links of the tree path
 * that trd_topo_path_cost() sums: latency summed, bandwidth of the slowest.
 * alpha_r [RM §3] has no counterpart in SimGrid and is not exported.
 *
 * Routes are given edge by edge, both directions (symmetrical="NO"), and the
 * zone computes the paths: Floyd up to TRD_SIMGRID_FLOYD_MAX netpoints,
 * DijkstraCache above (Floyd's table is quadratic in memory).
 *
 * The hostfile has one line per node in ring (DFS) order, "name:cores", the
 * format smpirun -hostfile reads: rank r goes to the r-th core so listed, so
 * ranks are in ring order, a node's ranks consecutive.
 *
 * Use with SMPI's network factors set to 1 to simulate the model's costs
 * exactly: smpirun --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1
 * --cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:0. */
#ifndef TRD_SIMGRID_H
#define TRD_SIMGRID_H

#include <stdio.h>

#include "topo.h"

/* Zones up to this many netpoints (hosts + routers) route with Floyd. */
#define TRD_SIMGRID_FLOYD_MAX 2048

/* Write the platform of t to f.  Names are written only in attributes,
 * escaped for XML.  Output is deterministic.  Returns TRD_OK or TRD_ERR_IO
 * when writing failed. */
int trd_simgrid_platform(FILE *f, trd_topo_t t);

/* TRD_OK if every node name of t can be a line of the hostfile (a name with
 * a blank cannot), else TRD_ERR_INPUT with the node named in err. */
int trd_simgrid_check_names(trd_topo_t t, char *err, size_t errlen);

/* Write the hostfile of t to f: "node:cores" per line, ring order (names as
 * trd_simgrid_check_names accepts them).  Returns TRD_OK or TRD_ERR_IO. */
int trd_simgrid_hostfile(FILE *f, trd_topo_t t);

/* The hostfile's path for platform path `platform`: its ".xml" suffix
 * replaced by ".hosts", or ".hosts" appended.  Writes at most len bytes to
 * out.  Returns TRD_OK, or TRD_ERR_INPUT if it does not fit. */
int trd_simgrid_hostfile_path(const char *platform, char *out, size_t len);

#endif
