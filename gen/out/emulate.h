/* Export of a machine as the description of an emulated cluster: the
 * network that bench/cluster.sh builds on one Linux host, each node a
 * network namespace with its own host name, each switch a bridge, each link
 * a veth pair shaped in both directions to the topology's bandwidth.
 *
 * The file is plain text, one record per line, fields separated by one
 * blank, that a POSIX shell reads with `while read`; lines starting with '#'
 * are comments:
 *
 *   switch INDEX PARENT UP_Bps UP_LATENCY_s
 *   node INDEX HOSTNAME SWITCH CORES LINK_Bps LINK_LATENCY_s
 *
 * Switches come first, in the topology's DFS order (switch 0 is the root,
 * its PARENT -1 and its uplink "0 0"; every parent is listed before its
 * children).  A switch's uplink has its parent's link class (the class of
 * the links from a switch down), as in the cost model [TREE §2].  Nodes
 * follow in ring (DFS) order, the order of the SimGrid hostfile, each with
 * its switch's index, its node type's core count and the link to its switch:
 * the switch's link class, its bandwidth capped by the class's max-rate
 * injection bandwidth where it gives one [NAP Eq. 3].  Rates are bytes per
 * second and latencies seconds, as printf's %.9g writes them.
 *
 * Input is data: a node's name becomes a host name that a shell script
 * handles, so it must be a host-name label (trd_emulate_check_names); switch
 * and machine names are never written (switches are named by index). */
#ifndef TRD_EMULATE_H
#define TRD_EMULATE_H

#include <stdio.h>

#include "topo.h"

/* Longest host-name label (RFC 1035, section 2.3.4). */
#define TRD_EMULATE_NAME_MAX 63

/* TRD_OK if every node name of t is a host-name label: 1 to 63 characters
 * of [A-Za-z0-9-], neither first nor last a '-'; else TRD_ERR_INPUT with the
 * first node refused named in err (errlen bytes at most). */
int trd_emulate_check_names(trd_topo_t t, char *err, size_t errlen);

/* Write the description of t to f (names as trd_emulate_check_names
 * accepts them).  Output is deterministic.  Returns TRD_OK or TRD_ERR_IO
 * when writing failed. */
int trd_emulate_cluster(FILE *f, trd_topo_t t);

#endif
