/* Write-back of measured link costs into a topology file (measure/calib_edit.c).
 *
 * No MPI in here: treeduce-calibrate's rank 0 opens the file before it
 * measures anything (so that a bad file costs no measurement), plans which
 * link class each measured level goes to, and after measuring writes the
 * values back.  The generator's own readers (libtrdgen: trd_read_dsl_string_map,
 * trd_read_xml_string) check the file, map host names to nodes, node types
 * and switches, locate the DSL statements to rewrite, and check the result
 * again before it replaces the original.
 */
#ifndef CALIB_EDIT_H
#define CALIB_EDIT_H

#include <stddef.h>

#include "trd_status.h"

/* The three levels of the machine model [MPICH §3]. */
enum {
    CAL_PACKAGE = 0, /* two cores of one package: the node type's package link */
    CAL_NODE = 1,    /* two packages of one node: the node type's node link */
    CAL_NETWORK = 2, /* two nodes: the link class of the switches between them */
    CAL_NLEVELS
};

/* Exit codes of treeduce-calibrate. */
enum {
    CAL_EXIT_OK = 0,
    CAL_EXIT_USAGE = 1,  /* bad command line */
    CAL_EXIT_INPUT = 2,  /* FILE unreadable, not a topology, or ambiguous: nothing written */
    CAL_EXIT_WRITE = 3,  /* FILE could not be replaced: left untouched */
    CAL_EXIT_MEASURE = 4 /* MPI or hwloc failure */
};

/* Where a measured level is written, decided before measuring. */
typedef struct cal_target {
    int wanted;      /* the job has a pair of ranks at this level */
    char link[128];  /* link class that receives the values */
    int create;      /* 1: link class is new; it is added and referenced by owner */
    char owner[128]; /* node type (package/node levels) or switch (network level) */
    int hops;        /* network: links on the measured path; latency is divided by it */
    char why[256];   /* how the target was chosen, for the report */
} cal_target;

/* Measured costs of one level; measured == 0 leaves the level alone. */
typedef struct cal_values {
    int measured;
    double latency_s;     /* alpha, one hop */
    double bandwidth_Bps; /* 1/beta */
    double injection_Bps; /* 0: not measured, the file's value (if any) is kept */
    double alpha_r_s;     /* alpha_r of the pipelined postal model [RM §3, Eq. 3], at most
                           * latency_s; 0: not measured, the file's value (if any) is kept
                           * unless it is above the latency written now (then it is removed) */
} cal_values;

typedef struct cal_file cal_file;

/* Read and check path (format as treeduce-gen detects it, trd_reader_detect:
 * the topology language or treeduce XML; a format whose row of the readers'
 * table has no write_back, such as a Slurm topology.conf or an lstopo dump,
 * has no link classes and is refused).  Symbolic links are followed: the file they
 * point to is the one replaced.  The file must be writable (a file without
 * write permission bits is refused even for root).
 * *f is the caller's, freed with cal_close() (NULL is ignored).
 * Returns TRD_OK, or TRD_ERR_INPUT (TRD_ERR_NOMEM) with a message (with
 * the reader's located errors) in err. */
int cal_open(cal_file **f, const char *path, char *err, size_t errlen);
void cal_close(cal_file *f);

/* Decide tg[level] for every level with want[level] != 0.  host[level] names
 * the host (MPI_Get_processor_name) of the first rank of the measured pair,
 * host2[level] the second's (same host for the package and node levels).
 * nodetype / switch_link: from --nodetype / --switch-link, or NULL.
 * Returns TRD_OK, or TRD_ERR_INPUT with the reason (ambiguity, unknown
 * name, a link class that would receive two levels' values) in err. */
int cal_plan(cal_file *f, const int want[CAL_NLEVELS], const char *const host[CAL_NLEVELS],
             const char *const host2[CAL_NLEVELS], const char *nodetype, const char *switch_link,
             cal_target tg[CAL_NLEVELS], char *err, size_t errlen);

/* Write v into the planned link classes, with the comment line
 * "measured by treeduce-calibrate on <date>, <nranks> ranks" above each
 * changed link class; every other byte of a DSL file is kept (XML: libxml2
 * re-serialises the document; the schema is checked before saving).  The
 * result is read back with the generator's reader and must give the written
 * costs; it goes to a temporary file in the same folder that is renamed over
 * the original.  On any error the original is untouched.
 * summary (may be NULL) gets one line per changed link class.  *written
 * is 1 where the file was replaced, 0 where nothing was measured (TRD_OK,
 * with "nothing was measured; FILE unchanged" in err).  Returns TRD_OK;
 * TRD_ERR_INPUT (costs that are not usable) or TRD_ERR_IO (the file could
 * not be written as asked, or did not read back) with the reason in err. */
int cal_write(cal_file *f, const cal_target tg[CAL_NLEVELS], const cal_values v[CAL_NLEVELS],
              const char *date, int nranks, char *summary, size_t sumlen, int *written, char *err,
              size_t errlen);

/* Values as the DSL and the XML schema accept them, 3 significant digits,
 * into buf (len bytes): a time s in seconds as "0.352us", "41.5us",
 * "1.20ms"; a bandwidth Bps in bytes per second as "21.4GB/s", "125MB/s". */
void cal_format_time(double s, char *buf, size_t len);
void cal_format_bandwidth(double Bps, char *buf, size_t len);

#endif
