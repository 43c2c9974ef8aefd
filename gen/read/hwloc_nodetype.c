/* Node shapes from hwloc: packages and cores per package of one node, and
 * the machine of one node that an hwloc source describes.
 *
 * The shape is read from an hwloc synthetic description, from an
 * `lstopo --of xml` dump or from the machine this runs on, so that a
 * topology file can name a node type instead of spelling out its counts.
 * Only the two levels the model knows survive: packages (sockets) and the
 * cores inside each; caches, NUMA nodes and I/O are ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>
#include <unistd.h>

#include "reader.h"
#include "readers.h"
#include "xml_common.h"
#include "topo.h"

/* Most PUs a synthetic description may have: hwloc builds a synthetic
 * topology in time that grows faster than its size (about 2 s for 4096 PUs,
 * minutes for 100,000), so a larger node is refused before hwloc sees it; the
 * topology language's "packages N; cores ...;" takes nodes of any size. */
#define TRD_SYNTHETIC_MAX_PUS 4096

/* The PUs desc describes: the product of its levels' arities ("package:2
 * core:8" -> 16; a bare number is an arity too; memory children in brackets
 * and attributes in parentheses are skipped).  Stops counting above
 * TRD_SYNTHETIC_MAX_PUS and returns that + 1 then; returns
 * TRD_SYNTHETIC_UNCLOSED where a '(' or '[' is never closed by its own
 * closer (a ')' for a '(', a ']' for a '['), which would hide every arity
 * after it from this count but not from hwloc ("pack(ge:100000
 * core:100000" and "pack(ge:100000 cor]e:100000", where a ']' seemed to
 * close the '(', kept hwloc busy for minutes). */
#define TRD_SYNTHETIC_UNCLOSED (~0ull)
static unsigned long long synthetic_pus(const char *desc)
{
    unsigned long long n = 1;
    const char *p = desc;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *tok = p;
        char closer[32]; /* the closers the open brackets wait for, innermost last */
        int depth = 0;
        while (*p && (depth > 0 || !isspace((unsigned char)*p))) {
            if (*p == '(' || *p == '[') {
                if (depth == (int)sizeof closer)
                    return TRD_SYNTHETIC_UNCLOSED;
                closer[depth++] = *p == '(' ? ')' : ']';
            } else if (depth > 0 && *p == closer[depth - 1]) {
                depth--; /* another closer closes nothing: hwloc judges it */
            }
            p++;
        }
        if (depth > 0)
            return TRD_SYNTHETIC_UNCLOSED;
        if (*tok == '[')
            continue; /* a memory child: no arity */
        /* the arity follows the first ':' outside parentheses: hwloc takes
         * "package(x):100000" as 100,000 packages */
        const char *num = tok;
        for (int d = 0; num < p && (d > 0 || *num != ':'); num++)
            d += *num == '(' ? 1 : *num == ')' && d > 0 ? -1 : 0;
        num = num < p ? num + 1 : tok;
        if (!isdigit((unsigned char)*num))
            continue; /* not an arity hwloc would take: let it refuse */
        unsigned long long a = 0;
        for (; num < p && isdigit((unsigned char)*num); num++) {
            a = a * 10 + (unsigned)(*num - '0');
            if (a > TRD_SYNTHETIC_MAX_PUS)
                return TRD_SYNTHETIC_MAX_PUS + 1;
        }
        n *= a ? a : 1;
        if (n > TRD_SYNTHETIC_MAX_PUS)
            return TRD_SYNTHETIC_MAX_PUS + 1;
    }
    return n;
}

/* hwloc wants PUs as the last level; the model counts cores, so
 * "package:2 core:8" is read as "package:2 core:8 pu:1". */
static int set_synthetic(hwloc_topology_t topo, const char *desc)
{
    size_t len = strlen(desc);
    char *with_pu;
    int rc;

    if (hwloc_topology_set_synthetic(topo, desc) == 0)
        return 0;
    with_pu = malloc(len + sizeof " pu:1");
    if (with_pu == NULL)
        return -1;
    snprintf(with_pu, len + sizeof " pu:1", "%s pu:1", desc);
    rc = hwloc_topology_set_synthetic(topo, with_pu);
    free(with_pu);
    return rc;
}

int trd_hwloc_check_synthetic(const char *desc, char *err, size_t errlen)
{
    unsigned long long pus = desc != NULL ? synthetic_pus(desc) : 0;
    if (desc == NULL || strspn(desc, " \t\n") == strlen(desc)) { /* hwloc: a single PU */
        snprintf(err, errlen, "hwloc cannot parse synthetic description '%s'", desc ? desc : "");
        return TRD_ERR_INPUT;
    }
    if (pus == TRD_SYNTHETIC_UNCLOSED) {
        snprintf(err, errlen, "synthetic description '%s' has a '(' or '[' that is not closed",
                 desc);
        return TRD_ERR_INPUT;
    }
    if (pus > TRD_SYNTHETIC_MAX_PUS) {
        snprintf(err, errlen,
                 "synthetic description '%s' has more than %d cores, more than hwloc builds "
                 "in good time; give the node's package and core counts instead",
                 desc, TRD_SYNTHETIC_MAX_PUS);
        return TRD_ERR_INPUT;
    }
    return TRD_OK;
}

/* Why hwloc refused the XML file at path: the dump's version where this
 * build's hwloc does not read it (hwloc 2.x reads 1.x and 2.x dumps; 3.x
 * writes version="3.0"), else that it is no hwloc topology. */
static void xml_refused(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
    char root[32], version[32];
    unsigned api = hwloc_get_api_version();
    if (trd_xml_root_text(text, len, root, sizeof root, version, sizeof version) == TRD_OK &&
        strcmp(root, "topology") == 0 && version[0] && atoi(version) > (int)(api >> 16))
        snprintf(err, errlen,
                 "cannot read hwloc XML '%s': it is an hwloc %s topology (<topology "
                 "version=\"%s\">) and this build has hwloc %u.%u.%u, which reads versions up "
                 "to %u.x; dump it with an hwloc %u.x lstopo (lstopo --of xml)",
                 path, version, version, api >> 16, (api >> 8) & 0xff, api & 0xff, api >> 16,
                 api >> 16);
    else
        snprintf(err, errlen, "cannot read hwloc XML '%s': not an hwloc topology file", path);
}

/* Load topo from the source named by kind/arg.  0 or -1 with err filled.
 * The text of an XML file is *xml, NUL-terminated after its len bytes: read
 * here from arg when *xml is NULL (then free it); it must outlive topo. */
static int load_source(hwloc_topology_t topo, const char *kind, const char *arg, char **xml,
                       size_t len, char *err, size_t errlen)
{
    if (strcmp(kind, "synthetic") == 0) {
        if (trd_hwloc_check_synthetic(arg, err, errlen) != TRD_OK)
            return -1;
        if (set_synthetic(topo, arg) < 0) {
            snprintf(err, errlen, "hwloc cannot parse synthetic description '%s'", arg ? arg : "");
            return -1;
        }
    } else if (strcmp(kind, "xml") == 0) {
        if (arg == NULL || arg[0] == '\0') {
            snprintf(err, errlen, "cannot read hwloc XML '': no file name given");
            return -1;
        }
        /* Read here, under the readers' size cap, and not by hwloc: it only
         * says EINVAL, and reads /dev/zero until memory runs out. */
        if (*xml == NULL && trd_read_text(arg, xml, &len) != TRD_OK) {
            if (errno == EFBIG)
                snprintf(err, errlen, "cannot read hwloc XML '%s': file is larger than %zu bytes",
                         arg, TRD_MAX_INPUT_BYTES);
            else
                snprintf(err, errlen, "cannot read hwloc XML '%s': %s", arg, strerror(errno));
            return -1;
        }
        /* hwloc takes the buffer with its terminating NUL */
        if (hwloc_topology_set_xmlbuffer(topo, *xml, (int)len + 1) < 0) {
            xml_refused(arg, *xml, len, err, errlen);
            return -1;
        }
    } else if (strcmp(kind, "local") != 0) {
        snprintf(err, errlen, "unknown hwloc source '%s' (expected synthetic, xml or local)", kind);
        return -1;
    }

    if (hwloc_topology_load(topo) < 0) {
        if (strcmp(kind, "xml") == 0)
            xml_refused(arg, *xml, len, err, errlen);
        else if (strcmp(kind, "synthetic") == 0)
            snprintf(err, errlen, "hwloc cannot build synthetic topology '%s'", arg);
        else
            snprintf(err, errlen, "hwloc cannot read the topology of this machine: %s",
                     strerror(errno));
        return -1;
    }
    return 0;
}

/* trd_hwloc_node_shape(); an XML source from the len bytes at text
 * (NUL-terminated after them) when text is not NULL. */
static int node_shape(const char *kind, const char *arg, const char *text, size_t len,
                      int *npackages, int cores_per_package[TRD_MAX_PACKAGES], char **hostname,
                      char *err, size_t errlen)
{
    hwloc_topology_t topo = NULL;
    hwloc_obj_type_t unit = HWLOC_OBJ_CORE;
    hwloc_obj_t root;
    const char *host;
    char *xml = (char *)text, *owned = NULL;
    int npkg, p, rc = TRD_ERR_INPUT;

    if (hostname != NULL)
        *hostname = NULL;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    if (kind == NULL) {
        snprintf(err, errlen, "no hwloc source given");
        return TRD_ERR_INPUT;
    }

    if (hwloc_topology_init(&topo) < 0) {
        snprintf(err, errlen, "cannot initialise hwloc: %s", strerror(errno));
        return TRD_ERR_NOMEM;
    }
    /* Only packages and cores matter: skip I/O discovery on local loads. */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    int loaded = load_source(topo, kind, arg, &xml, len, err, errlen);
    if (xml != text)
        owned = xml;
    if (loaded < 0)
        goto out;

    /* Count PUs when there is no core level (synthetic "package:2 pu:4"). */
    if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) <= 0)
        unit = HWLOC_OBJ_PU;
    root = hwloc_get_root_obj(topo);

    npkg = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    if (npkg > TRD_MAX_PACKAGES) {
        snprintf(err, errlen, "hwloc topology has %d packages; at most %d are supported", npkg,
                 TRD_MAX_PACKAGES);
        goto out;
    }
    if (npkg <= 0) {
        cores_per_package[0] = hwloc_get_nbobjs_inside_cpuset_by_type(topo, root->cpuset, unit);
        npkg = 1;
        if (cores_per_package[0] <= 0) {
            snprintf(err, errlen, "hwloc topology has no cores");
            goto out;
        }
    } else {
        for (p = 0; p < npkg; p++) {
            hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)p);

            cores_per_package[p] = hwloc_get_nbobjs_inside_cpuset_by_type(topo, pkg->cpuset, unit);
            if (cores_per_package[p] <= 0) {
                snprintf(err, errlen, "hwloc topology has no cores in package %d", p);
                goto out;
            }
        }
    }
    *npackages = npkg;

    host = hwloc_obj_get_info_by_name(root, "HostName");
    if (hostname != NULL && host != NULL && host[0] != '\0') {
        *hostname = strdup(host);
        if (*hostname == NULL) {
            snprintf(err, errlen, "out of memory");
            rc = TRD_ERR_NOMEM;
            goto out;
        }
    }
    rc = TRD_OK;

out:
    hwloc_topology_destroy(topo);
    free(owned);
    return rc;
}

int trd_hwloc_node_shape(const char *kind, const char *arg, int *npackages,
                         int cores_per_package[TRD_MAX_PACKAGES], char **hostname, char *err,
                         size_t errlen)
{
    return node_shape(kind, arg, NULL, 0, npackages, cores_per_package, hostname, err, errlen);
}

const trd_nodetype_hook trd_hwloc_nodetype_hook = {trd_hwloc_node_shape, trd_hwloc_check_synthetic};

/* ---- A machine of one node (readers.h) ----------------------------------------- */

/* trd_read_hwloc_machine(); an XML source from text as node_shape(). */
static int hwloc_machine(trd_topo_t t, trd_diag *d, const char *kind, const char *arg,
                         const char *text, size_t len)
{
    const int is_xml = kind != NULL && strcmp(kind, "xml") == 0;
    trd_loc loc = {trd_diag_intern(d, is_xml && arg ? arg : "local machine"), 0, 0};
    trd_link_cost net = {TRD_DEFAULT_NET_LATENCY_S, TRD_DEFAULT_NET_BANDWIDTH_BPS, 0, 0};
    int cores[TRD_MAX_PACKAGES], npackages = 0, sw = -1, rc;
    char *host = NULL, err[512], source[600];
    const char *node;

    if (kind == NULL || (!is_xml && strcmp(kind, "local") != 0)) {
        trd_diag_error(d, loc, "unknown hwloc source '%s' (expected xml or local)",
                       kind ? kind : "");
        return TRD_ERR_INPUT;
    }
    if (node_shape(kind, arg, text, len, &npackages, cores, &host, err, sizeof err) != TRD_OK) {
        trd_diag_error(d, loc, "%s", err);
        return is_xml && !text && arg != NULL && access(arg, R_OK) != 0 ? TRD_ERR_IO
                                                                        : TRD_ERR_INPUT;
    }
    node = host != NULL ? host : "localhost";
    if (is_xml)
        snprintf(source, sizeof source, "hwloc %s", arg);
    else
        snprintf(source, sizeof source, "local");
    rc = trd_topo_set_name(t, node);
    if (rc == TRD_OK)
        rc = trd_topo_set_default_link(t, net);
    if (rc == TRD_OK)
        rc = trd_topo_add_nodetype(t, d, loc, "node", npackages, cores, NULL, NULL, source);
    if (rc == TRD_OK)
        rc = trd_topo_add_switch(t, d, loc, "node-switch", NULL, &sw);
    if (rc == TRD_OK)
        rc = trd_topo_switch_add_node(t, d, loc, sw, node, "node");
    free(host);
    return rc;
}

int trd_read_hwloc_machine(trd_topo_t t, trd_diag *d, const char *kind, const char *arg)
{
    return hwloc_machine(t, d, kind, arg, NULL, 0);
}

int trd_read_hwloc_machine_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                                  size_t len)
{
    const char *file;
    int rc = trd__reader_begin(t, d, filename, &text, len, &file);
    char *copy = rc == TRD_OK ? malloc(len + 1) : NULL; /* hwloc wants the NUL after it */
    if (rc != TRD_OK)
        return rc;
    if (!copy)
        return TRD_ERR_NOMEM;
    memcpy(copy, text, len);
    copy[len] = '\0';
    rc = hwloc_machine(t, d, "xml", file, copy, len);
    free(copy);
    return rc;
}
