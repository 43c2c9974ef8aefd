/* Shared body of the libFuzzer harnesses (tests/fuzz/fuzz_*.c), header only.
 *
 * trd_fuzz_reader() feeds one input to a string reader of readers.h on a
 * fresh topology, as treeduce-gen does: read, finalize when the reader found
 * no error, then the first planning step (the closed forms, trd_plan_build)
 * and the --dot output for machines small enough to keep the fuzzer fast.
 * Every message is formatted (with its quoted source line and caret) into a
 * sink that discards it, so the diagnostics are exercised without a line on
 * stderr per input.  Everything is freed: a leak is a finding.
 *
 * A new reader's harness is one file that calls trd_fuzz_reader() with its
 * reader, plus its name in TRD_FUZZ_HARNESSES (tests/fuzz/CMakeLists.txt),
 * a seed corpus in tests/fuzz/corpus/NAME/ and optionally NAME.dict.
 */
#ifndef TRD_FUZZ_COMMON_H
#define TRD_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "diag.h"
#include "load.h"
#include "plan.h"
#include "readers.h"
#include "report.h"
#include "topo.h"

/* Machines with more nodes are read and finalized but not planned: planning
 * is linear or worse in the node count and would slow every such input. */
#define TRD_FUZZ_PLAN_MAX_NODES 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline ssize_t trd_fuzz_discard(void *cookie, const char *buf, size_t len)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)len;
}

/* A FILE that accepts and drops everything (opened once, never closed). */
static inline FILE *trd_fuzz_sink(void)
{
    static FILE *f;
    if (f == NULL) {
        cookie_io_functions_t io = {NULL, trd_fuzz_discard, NULL, NULL};
        f = fopencookie(NULL, "w", io);
        if (f == NULL)
            abort();
    }
    return f;
}

/* The defaults treeduce-gen gives every input (TRD_DEFAULT_LATENCY,
 * TRD_DEFAULT_BANDWIDTH, TRD_DEFAULT_NODETYPE of load.h): Slurm files take
 * all their costs and node types from them.  Their values are worked out
 * once, not with hwloc for every input. */
static inline void trd_fuzz_defaults(trd_topo_t t)
{
    static trd_link_cost link;
    static int npackages, cores[TRD_MAX_PACKAGES];
    if (npackages == 0) {
        char err[256];
        if (trd_parse_time(TRD_DEFAULT_LATENCY, &link.latency_s) != TRD_OK ||
            trd_parse_bandwidth(TRD_DEFAULT_BANDWIDTH, &link.bandwidth_Bps) != TRD_OK ||
            trd_hwloc_node_shape("synthetic", TRD_DEFAULT_NODETYPE, &npackages, cores, NULL, err,
                                 sizeof err) != TRD_OK)
            abort();
    }
    trd_topo_set_default_link(t, link);
    trd_topo_set_default_nodetype(t, npackages, cores, "--nodetype \"" TRD_DEFAULT_NODETYPE "\"");
}

/* A string reader of readers.h (trd_read_dsl_string, ...). */
typedef int (*trd_fuzz_read_fn)(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                                size_t len);

/* The directory of the file name the harnesses give the readers (set by
 * CMake: tests/data), where relative hwloc XML paths ("node-2x4.xml") start;
 * absolute ones are read as given. */
#ifndef TRD_FUZZ_DIR
#define TRD_FUZZ_DIR "."
#endif

/* Read data[0..size) with read as file name into a topology with the CLI's
 * defaults, finalize, plan, free. */
static inline int trd_fuzz_reader(trd_fuzz_read_fn read, const char *name, const uint8_t *data,
                                  size_t size)
{
    trd_topo_t t = NULL;
    trd_diag *d = NULL;
    if (trd_diag_create(&d) != TRD_OK || trd_topo_create(&t) != TRD_OK)
        abort();
    trd_fuzz_defaults(t);
    int rc = read(t, d, name, (const char *)data, size);
    if (rc == TRD_OK && trd_diag_count(d) == 0)
        rc = trd_topo_finalize(t, d);
    if (rc == TRD_OK && trd_diag_count(d) == 0 && trd_topo_nnodes(t) <= TRD_FUZZ_PLAN_MAX_NODES) {
        trd_machine_plan p;
        if (trd_plan_build(t, &p) != TRD_OK || trd_dot(trd_fuzz_sink(), t) != TRD_OK)
            abort(); /* a finalized machine always plans */
    }
    trd_diag_print(d, trd_fuzz_sink());
    trd_topo_destroy(t);
    trd_diag_destroy(d);
    return 0;
}

#endif
