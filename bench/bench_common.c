/* bench_common.c - what bench_allreduce.c, bench_pieces.c and bench_persistent.c
 * have in common: the options, the libraries under test, the data, the
 * timing's helpers, the copy bandwidth, the floors' window and the tables
 * (bench_common.h, which holds the timing itself).
 */
#include "bench_common.h"

#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#define MIN_ITERS 20
#define SECONDS_PER_SIZE 0.5 /* iterations shrink to fit; at least MIN_ITERS */

struct bench_opts opt = {8, 64u << 20, 1000, 5, NULL, 0, {NULL, NULL}, 0, 0};

int rank, nprocs;

/* The program's name, for the messages (bench_init). */
static const char *bench_prog = "";

/* Writes the message fmt, ap (printf-style) to stderr with the program's
 * name and rank, in one line. */
static __attribute__((format(printf, 1, 0))) void bench_vsay(const char *fmt, va_list ap)
{
    char msg[512];

    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "%s: rank %d: %s\n", bench_prog, rank, msg);
    fflush(stderr);
}

void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    bench_vsay(fmt, ap);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* die() for an error that every rank finds alike, as in its command line:
 * the message, then MPI_Finalize and exit status 1.  MPI_Abort can end the
 * job before the launcher has passed the message on (mpi.bench.columns saw
 * no message at all, once). */
static __attribute__((format(printf, 1, 2))) void die_all(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    bench_vsay(fmt, ap);
    va_end(ap);
    MPI_Finalize();
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory");
    return p;
}

/* ---- Options -------------------------------------------------------------- */

int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;

    if (end == s)
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        shift = 10;
        end++;
        break;
    case 'M':
        shift = 20;
        end++;
        break;
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v > (1ULL << 40) >> shift)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

int bench_parse_args(int argc, char **argv, int (*extra)(const char *a, const char *v))
{
    int i;

    for (i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check-only")) {
            opt.check_only = 1;
            i--;
            continue;
        }
        if (!strcmp(a, "--verify")) {
            opt.verify = 1;
            i--;
            continue;
        }
        if (!v)
            return -1;
        if (!strcmp(a, "--min-bytes")) {
            if (parse_size(v, &opt.min_bytes))
                return -1;
        } else if (!strcmp(a, "--max-bytes")) {
            if (parse_size(v, &opt.max_bytes))
                return -1;
        } else if (!strcmp(a, "--iters")) {
            opt.iters = atoi(v);
        } else if (!strcmp(a, "--warmup")) {
            opt.warmup = atoi(v);
        } else if (!strcmp(a, "--csv")) {
            opt.csv = v;
        } else if (!strcmp(a, "--lib")) {
            if (opt.nlib == BENCH_MAX_LIBS)
                return -1;
            opt.lib[opt.nlib++] = v;
        } else if (!extra || extra(a, v) <= 0) {
            return -1;
        }
    }
    /* Whole doubles only. */
    opt.min_bytes = (opt.min_bytes + 7) / 8 * 8;
    if (opt.min_bytes == 0)
        opt.min_bytes = 8;
    if (opt.iters < 1 || opt.warmup < 0 || opt.max_bytes < opt.min_bytes ||
        opt.max_bytes > ((size_t)INT32_MAX) * 8)
        return -1;
    return 0;
}

/* ---- The treeduce libraries under test --------------------------------------- */

/* Without --lib, the program's MPI_ routines: treeduce's when it is linked in
 * or preloaded. */
struct bench_lib libs[BENCH_MAX_ROUTINES] = {{.name = "treeduce",
                                              .abbr = "tr",
                                              .allreduce = MPI_Allreduce,
                                              .reduce_scatter_block = MPI_Reduce_scatter_block,
                                              .allgather = MPI_Allgather,
                                              .reduce = MPI_Reduce,
                                              .bcast = MPI_Bcast,
                                              .machine = "local"}};
int nlibs = 1; /* libs[0 .. nlibs-1]; routine nlibs is the MPI library's (PMPI_) */
int nbase = 1; /* libs[0 .. nbase-1]: the libraries and --also NAME; then forced ones */

/* The trd_<machine>_<name> of a library, or NULL. */
static void *bench_lib_find(void *handle, const char *machine, const char *name)
{
    char sym[160];

    snprintf(sym, sizeof sym, "trd_%s_%s", machine, name);
    return dlsym(handle, sym);
}

/* trd_<machine>_<name> of the library loaded as handle from path. */
static void *bench_lib_sym(void *handle, const char *machine, const char *name, const char *path)
{
    void *f = bench_lib_find(handle, machine, name);

    if (!f)
        die("--lib %s: no trd_%s_%s", path, machine, name);
    return f;
}

/* Loads libs[l] from path, a libtreeduce_<machine>.so. */
static void bench_lib_open(int l, const char *path)
{
    static const char prefix[] = "libtreeduce_";
    const size_t np = sizeof prefix - 1;
    const char *base = strrchr(path, '/');
    struct bench_lib *b = &libs[l];
    char machine[64], file[4096];
    size_t n;
    void *h;

    base = base ? base + 1 : path;
    n = strncmp(base, prefix, np) ? 0 : strcspn(base + np, ".");
    if (n == 0 || n >= sizeof machine || strncmp(base + np + n, ".so", 3))
        die("--lib %s: not a libtreeduce_MACHINE.so", path);
    memcpy(machine, base + np, n);
    machine[n] = '\0';
    /* dlopen would search the library path for a name without a slash */
    snprintf(file, sizeof file, "%s%s", strchr(path, '/') ? "" : "./", path);
    /* RTLD_LOCAL: the library's symbols stay out of the global scope, so that
     * each library's calls into its runtime bind within itself (its own
     * communicator cache, shared-memory segment and notes).  RTLD_DEEPBIND is
     * not needed, as the program defines none of them, and AddressSanitizer
     * refuses it.  Never closed: MPI may call its attribute callbacks until
     * MPI_Finalize. */
    if (!(h = dlopen(file, RTLD_NOW | RTLD_LOCAL)))
        die("--lib: %s", dlerror());
    b->path = path;
    b->handle = h;
    memcpy(b->machine, machine, n + 1);
    b->allreduce = (bench_allreduce_fn)bench_lib_sym(h, machine, "allreduce", path);
    b->reduce_scatter_block = (bench_rsb_fn)bench_lib_sym(h, machine, "reduce_scatter_block", path);
    b->allgather = (bench_allgather_fn)bench_lib_sym(h, machine, "allgather", path);
    b->reduce = (bench_reduce_fn)bench_lib_sym(h, machine, "reduce", path);
    b->bcast = (bench_bcast_fn)bench_lib_sym(h, machine, "bcast", path);
    b->allreduce_with = (bench_allreduce_with_fn)bench_lib_find(h, machine, "allreduce_with");
    /* dlopen hands out a file already loaded (same path, or a link to it) once */
    for (int k = 0; k < l; k++)
        if (libs[k].allreduce == b->allreduce)
            die_all("--lib %s is the library --lib %s, already loaded: give two files", path,
                    libs[k].path);
}

/* libs[l] as the MPI library's own routines (--lib mpi), called through
 * PMPI_ as a routine of their own: timed in turn with the others like a
 * library, so that old_us beside mpi_us shows what the run's noise alone
 * makes of one routine timed twice. */
static void bench_lib_mpi(int l)
{
    libs[l] = (struct bench_lib){.path = "mpi",
                                 .allreduce = PMPI_Allreduce,
                                 .reduce_scatter_block = PMPI_Reduce_scatter_block,
                                 .allgather = PMPI_Allgather,
                                 .reduce = PMPI_Reduce,
                                 .bcast = PMPI_Bcast,
                                 .machine = "mpi"};
}

void bench_load_libs(void)
{
    static const char *const names[BENCH_MAX_LIBS] = {"new", "old", "mpi_b", "old_b"};

    if (opt.nlib == 0)
        return;
    /* A treeduce already in the process (linked in or preloaded) defines its
     * runtime's symbols globally, and the libraries would share its copies. */
    if (dlsym(RTLD_DEFAULT, "MPI_Allreduce") != dlsym(RTLD_DEFAULT, "PMPI_Allreduce"))
        die_all("--lib needs a program whose MPI_Allreduce is the MPI library's (bench_allreduce, "
                "bench_pieces; no LD_PRELOAD)");
    for (int l = 0; l < opt.nlib; l++) {
        if (l == 2 && strcmp(opt.lib[l], "mpi"))
            die_all("--lib %s: the third --lib can only be mpi (the MPI library's routine timed "
                    "twice: the run's A/B noise)",
                    opt.lib[l]);
        if (!strcmp(opt.lib[l], "mpi")) {
            if (l == 0)
                die_all("--lib mpi: give the library under test first (--lib NEW.so --lib mpi)");
            if (l == 3)
                die_all("--lib mpi: the fourth --lib is a copy of OLD (the second), in a file "
                        "of its own");
            bench_lib_mpi(l);
        } else
            bench_lib_open(l, opt.lib[l]);
        if (opt.nlib > 1)
            libs[l].name = libs[l].abbr = names[l];
    }
    nlibs = nbase = opt.nlib;
}

/* ---- Every forced algorithm (--also all) ------------------------------------------ */

struct bench_runtime brt;

/* The CSV's candidate columns: the union, by name, of the candidates of
 * every collective benchmarked, in the order first listed. */
static char csv_cand[4 * BENCH_MAX_CANDIDATES][TRD_CANDIDATE_MAX];
static int ncsv_cand;

/* Symbol name of the first library (--lib) or of the program (linked in). */
static void *bench_rt_sym(const char *name)
{
    void *f = dlsym(libs[0].handle ? libs[0].handle : RTLD_DEFAULT, name);

    if (!f)
        die("--also all: no %s in %s", name, libs[0].path ? libs[0].path : "the program");
    return f;
}

void bench_find_runtime(void)
{
    char sym[160];
    const trd_machine *(*machine)(void);

    if (!libs[0].path &&
        dlsym(RTLD_DEFAULT, "MPI_Allreduce") == dlsym(RTLD_DEFAULT, "PMPI_Allreduce"))
        die("--also all needs a treeduce library: a program with libtreeduce_local linked in, "
            "or --lib libtreeduce_MACHINE.so");
    snprintf(sym, sizeof sym, "trd_%s_machine", libs[0].machine);
    *(void **)&machine = bench_rt_sym(sym);
    brt.machine = machine();
    *(void **)&brt.candidates = bench_rt_sym("trd_candidates");
    *(void **)&brt.fell_back = bench_rt_sym("trd_fell_back");
    *(void **)&brt.allreduce_with = bench_rt_sym("trd_allreduce_with");
    *(void **)&brt.reduce_scatter_block_with = bench_rt_sym("trd_reduce_scatter_block_with");
    *(void **)&brt.allgather_with = bench_rt_sym("trd_allgather_with");
    *(void **)&brt.reduce_with = bench_rt_sym("trd_reduce_with");
    *(void **)&brt.bcast_with = bench_rt_sym("trd_bcast_with");
}

/* The forced algorithms of collective coll (TRD_ALLREDUCE ...) on
 * MPI_COMM_WORLD, "mpi" left out (the MPI library's routine is timed
 * anyway), as names[0 ..) of at most BENCH_MAX_CANDIDATES; returns how many. */
static int bench_candidate_names(int coll, char (*names)[TRD_CANDIDATE_MAX])
{
    static char all[BENCH_MAX_CANDIDATES + 1][TRD_CANDIDATE_MAX];
    int n = brt.candidates(brt.machine, MPI_COMM_WORLD, coll, all, BENCH_MAX_CANDIDATES + 1), k = 0;

    if (n < 0)
        die("--also all: trd_candidates cannot set up MPI_COMM_WORLD on machine %s",
            libs[0].machine);
    for (int i = 0; i < n && i <= BENCH_MAX_CANDIDATES && k < BENCH_MAX_CANDIDATES; i++)
        if (strcmp(all[i], "mpi"))
            memcpy(names[k++], all[i], TRD_CANDIDATE_MAX);
    return k;
}

/* name as the CSV writes it: its commas ("shm:rx:2,2") as ';', in a static buffer. */
static const char *bench_csv_name(const char *name)
{
    static char buf[TRD_CANDIDATE_MAX];
    size_t n = strnlen(name, sizeof buf - 1);
    char *c;

    memcpy(buf, name, n);
    buf[n] = '\0';
    for (c = buf; (c = strchr(c, ',')) != NULL;)
        *c = ';';
    return buf;
}

void bench_csv_candidates(int coll)
{
    char names[BENCH_MAX_CANDIDATES][TRD_CANDIDATE_MAX];
    int n = bench_candidate_names(coll, names);

    for (int i = 0; i < n; i++) {
        int c = 0;
        while (c < ncsv_cand && strcmp(csv_cand[c], names[i]))
            c++;
        if (c == ncsv_cand && ncsv_cand < (int)(sizeof csv_cand / sizeof csv_cand[0]))
            memcpy(csv_cand[ncsv_cand++], names[i], TRD_CANDIDATE_MAX);
    }
}

void bench_set_candidates(int coll)
{
    static char names[BENCH_MAX_CANDIDATES][TRD_CANDIDATE_MAX];
    int n = bench_candidate_names(coll, names);

    nlibs = nbase;
    for (int i = 0; i < n; i++) {
        int c = 0;
        while (c < ncsv_cand && strcmp(csv_cand[c], names[i]))
            c++;
        libs[nlibs++] = (struct bench_lib){
            .name = names[i], .abbr = names[i], .algorithm = names[i], .forced = 1, .col = c};
    }
}

int bench_all(void)
{
    return brt.candidates != NULL;
}

/* ---- Data ------------------------------------------------------------------ */

uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Values in [-1, 1] scaled by 2^-8 .. 2^8, so that sums round. */
static void fill(double *x, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    size_t i;

    for (i = 0; i < n; i++) {
        uint64_t r = rng_next(&s);
        double u = (double)(r >> 11) * 0x1.0p-53 * 2 - 1;
        x[i] = ldexp(u, (int)(r & 15) - 8);
    }
}

void fill_check(double *x, size_t n, size_t count)
{
    fill(x, n, 0x5eed0000u + (uint64_t)rank * 7919 + count);
}

/* FNV-1a hash of the bytes of x[0..n), for comparing results across ranks. */
static uint64_t hash(const double *x, size_t n)
{
    const unsigned char *p = (const unsigned char *)x;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t k;

    for (k = 0; k < n * sizeof *x; k++)
        h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}

int same_on_all_ranks(const double *a, size_t n)
{
    uint64_t h[2];

    h[0] = hash(a, n);
    h[1] = ~h[0];
    PMPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return h[0] == ~h[1];
}

void sweep_buffers(size_t bytes, double **x, double **y)
{
    *x = xmalloc(bytes);
    *y = xmalloc(bytes);
    fill(*x, bytes / sizeof **x, 0xbe4c0000u + (uint64_t)rank);
    memset(*y, 0, bytes);
}

double bench_value(size_t i, int r, unsigned stamp)
{
    return (double)(int)(((unsigned)i * 7u + (unsigned)r * 13u) & 63u) + (double)(stamp & 63u);
}

void bench_write_values(double *x, size_t n, unsigned stamp)
{
    for (size_t i = 0; i < n; i++)
        x[i] = bench_value(i, rank, stamp);
}

double bench_sum_values(size_t i, unsigned stamp)
{
    double s = 0;

    for (int r = 0; r < nprocs; r++)
        s += bench_value(i, r, stamp);
    return s;
}

double bench_sum_of(size_t i, unsigned stamp, size_t unused)
{
    (void)unused;
    return bench_sum_values(i, stamp);
}

void bench_verify_values(const double *y, size_t n,
                         double (*expected)(size_t i, unsigned stamp, size_t arg), size_t arg,
                         unsigned stamp, const char *routine)
{
    for (size_t i = 0; i < n; i++) {
        double e = expected(i, stamp, arg);
        if (y[i] != e)
            die("--verify: %s: wrong result after the send buffers were written for call %u: "
                "index %zu expected %.17g actual %.17g",
                routine, stamp, i, e, y[i]);
    }
}

/* ---- Timing ------------------------------------------------------------------ */

unsigned bench_stamp;

/* qsort's comparison of two doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int iters_for(double round_s)
{
    double fit = round_s > 0 ? SECONDS_PER_SIZE / round_s : opt.iters;
    int n = fit < opt.iters ? (int)fit : opt.iters;
    if (n < MIN_ITERS)
        n = MIN_ITERS < opt.iters ? MIN_ITERS : opt.iters;
    return n;
}

int bench_turn(int i, int k)
{
    return k < nlibs ? (i + k) % nlibs : nlibs;
}

int bench_turn_shuffled(int i, int k)
{
    static int perm[BENCH_MAX_ROUTINES + 1], round = -1, n;

    if (round != i || n != nlibs + 1) {
        uint64_t s = 0x7e5a0000u + (uint64_t)i;
        n = nlibs + 1;
        for (int j = 0; j < n; j++)
            perm[j] = j;
        for (int j = n - 1; j > 0; j--) {
            int r = (int)(rng_next(&s) % (uint64_t)(j + 1)), x = perm[j];
            perm[j] = perm[r];
            perm[r] = x;
        }
        round = i;
    }
    return perm[k];
}

/* ---- Memory bandwidth ---------------------------------------------------------- */

#define COPY_REPS 5 /* measure_copy_bw's copies; the best counts */

size_t copy_bytes = 256u << 20;

struct bench_bw bw;

/* Called through a volatile pointer: the copies are never read, and must not
 * be optimized away. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

void measure_copy_bw(size_t bytes)
{
    char *src = xmalloc(bytes), *dst = xmalloc(bytes);
    double best = 0, sum;
    int i;

    memset(src, 1, bytes); /* first touch outside the timing */
    memset(dst, 0, bytes);
    for (i = 0; i < COPY_REPS; i++) {
        double t;
        PMPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        copy_fn(dst, src, bytes);
        t = MPI_Wtime() - t;
        t = t > 0 ? 2.0 * (double)bytes / t : 0;
        if (t > best)
            best = t;
        PMPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (sum > bw.sum_Bps)
            bw.sum_Bps = sum;
    }
    free(src);
    free(dst);
    if (rank == 0)
        bw.rank_Bps = xmalloc((size_t)nprocs * sizeof *bw.rank_Bps);
    PMPI_Gather(&best, 1, MPI_DOUBLE, bw.rank_Bps, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* ---- The floors: copies between the ranks' caches ------------------------------ */

struct bench_xfer xf = {.node = MPI_COMM_NULL};

void xfer_init(size_t max)
{
    MPI_Comm node;
    MPI_Aint size;
    int nsize, unit, ok;
    char *mine;

    PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &nsize);
    ok = nsize == nprocs;
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!ok || PMPI_Win_allocate_shared((MPI_Aint)(XFER_FLAG_BYTES + 2 * max), XFER_FLAG_BYTES,
                                        MPI_INFO_NULL, node, &mine, &xf.win) != MPI_SUCCESS) {
        PMPI_Comm_free(&node);
        return;
    }
    xf.area = xmalloc((size_t)nprocs * sizeof *xf.area);
    for (int r = 0; r < nprocs; r++)
        PMPI_Win_shared_query(xf.win, r, &size, &unit, &xf.area[r]);
    atomic_init(xfer_flag(rank), 0);
    fill((double *)(mine + XFER_FLAG_BYTES), max / sizeof(double), 0x5eed0000u + (uint64_t)rank);
    memset(mine + XFER_FLAG_BYTES + max, 0, max);
    xf.copy = xmalloc(max);
    memset(xf.copy, 0, max);
    xf.max = max;
    xf.node = node;
    PMPI_Barrier(MPI_COMM_WORLD);
}

void xfer_free(void)
{
    if (xf.node == MPI_COMM_NULL)
        return;
    PMPI_Win_free(&xf.win);
    PMPI_Comm_free(&xf.node);
    free(xf.area);
    free(xf.copy);
}

int xfer_on(size_t m)
{
    return xf.node != MPI_COMM_NULL && m <= xf.max && nprocs >= 2;
}

/* ---- Start, output and end ----------------------------------------------------- */

void bench_init_thread(int *argc, char ***argv, const char *prog, int multiple)
{
    int provided = MPI_THREAD_SINGLE;
    bench_prog = prog;
    if (multiple)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (multiple && provided != MPI_THREAD_MULTIPLE)
        die("MPI gave thread level %d, not MPI_THREAD_MULTIPLE", provided);
}

void bench_init(int *argc, char ***argv, const char *prog)
{
    const char *v = getenv("BENCH_THREAD_MULTIPLE");
    bench_init_thread(argc, argv, prog, v && !strcmp(v, "1"));
}

int bench_usage(const char *usage)
{
    if (rank == 0)
        fputs(usage, stderr);
    MPI_Finalize();
    return 2;
}

int bench_check_only(int nchecks)
{
    if (rank == 0)
        printf("correctness check: %d passed, 0 failed\n", nchecks);
    MPI_Finalize();
    return 0;
}

const char *bench_algorithm(void)
{
    const char *alg = getenv("TREEDUCE_ALGORITHM");
    return alg && *alg ? alg : "";
}

void bench_print_env(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], *p;
    const char *alg = bench_algorithm(), *hosts = getenv("TREEDUCE_HOSTS");
    int len, k = 0;

    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = '\0';
    for (p = lib; *p; p++) /* tabs and runs of blanks to one space */
        if (!((*p == ' ' || *p == '\t') && k > 0 && lib[k - 1] == ' '))
            lib[k++] = *p == '\t' ? ' ' : *p;
    lib[k] = '\0';

    for (k = 0; k < nlibs; k++)
        if (libs[k].path && !libs[k].handle)
            printf("# %s: the MPI library's routines (--lib mpi), timed as a routine of their "
                   "own: %s_us\n#   against mpi_us is what the run's noise makes of one routine "
                   "timed twice\n",
                   libs[k].name, libs[k].name);
        else if (libs[k].path)
            printf("# %s: %s\n", libs[k].name, libs[k].path);
    printf("# MPI library: %s\n", lib);
    printf("# ranks: %d\n", nprocs);
    printf("# TREEDUCE_ALGORITHM: %s\n", *alg ? alg : "(unset)");
    if (hosts && *hosts)
        printf("# TREEDUCE_HOSTS: %s\n", hosts);
}

const char *bench_under_test(const char *linked)
{
    if (!libs[0].path)
        return linked;
    return opt.nlib == 1 ? "--lib" : "new and old, --lib --lib";
}

void bench_print_ratios(void)
{
    printf("# each timed call: the calling rank writes its send buffer (bcast: the root), new "
           "values each call,\n#   then a barrier, then the call: it finds the buffer as an "
           "application leaves it\n");
    printf("# NAME_loop_us: a tight loop as OSU times, iters calls back to back on the same "
           "buffers, not\n#   written (a barrier, then the loop; slowest rank's time / iters); "
           "loop_spd = mpi_loop_us / %s_loop_us\n",
           libs[0].name);
    if (opt.nlib < 2)
        printf("# speed-up = MPI time / treeduce time (> 1: treeduce faster)\n");
    else
        printf("# new/old = new time / old time (> 1.05: new more than 5%% slower; the two take "
               "turns at\n#   going first); speed-up = MPI time / new time (> 1: new faster)\n");
    if (opt.nlib >= 3)
        printf("# mpi_b_us: the MPI library's routine timed a second time, in turn with the "
               "others;\n#   mpi_b/mpi: what the run's noise alone makes of one routine timed "
               "twice\n");
    if (opt.nlib == 4)
        printf("# old_b_us: a copy of old, loaded from a file of its own (its own instance and "
               "segment);\n#   old_b/old: what the run's noise makes of one library loaded "
               "twice\n");
    for (int l = 0; l < nbase; l++)
        if (libs[l].algorithm)
            printf("# %s_us: %s's allreduce with algorithm %s, timed in turn with the others; "
                   "%s/%s = its time over %s's\n",
                   libs[l].name, libs[0].name, libs[l].algorithm, libs[l].abbr, libs[0].abbr,
                   libs[0].name);
    if (bench_all())
        printf("# --also all: every algorithm that can be forced (trd_candidates, but mpi), %s's "
               "trd_X_with,\n#   timed in turn with the others after a check of its results; "
               "best, best_us: the fastest\n#   of them (those that fell back to the MPI "
               "library's routine at a size left out: \"-\"\n#   in the CSV); %s/best = %s "
               "time over best_us; the CSV has a column per algorithm (NAME_us, commas\n#   in "
               "NAME written as ';')\n",
               libs[0].name, libs[0].abbr, libs[0].name);
}

/* Index of the fastest forced algorithm that did not fall back, or -1. */
static int bench_best(const double *t)
{
    int best = -1;

    for (int l = nbase; l < nlibs; l++)
        if (!libs[l].fell && (best < 0 || t[l] < t[best]))
            best = l;
    return best;
}

/* Whether libs[l] is the old of two libraries: new/old follows it. */
static int bench_is_old(int l)
{
    return opt.nlib >= 2 && l == 1;
}

/* Whether libs[l] is the MPI library's routine timed a second time beside
 * two libraries (--lib NEW --lib OLD --lib mpi): mpi_b/mpi follows it. */
static int bench_is_mpi_b(int l)
{
    return opt.nlib >= 3 && l == 2;
}

/* Whether libs[l] is the copy of old (--lib NEW --lib OLD --lib mpi --lib
 * OLD_COPY): old_b/old follows it. */
static int bench_is_old_b(int l)
{
    return opt.nlib == 4 && l == 3;
}

/* The ratio column of libs[l], l >= 1: new/old, mpi_b/mpi, old_b/old, or its
 * time over the first library's. */
static double bench_ratio(int l, const double *t)
{
    if (bench_is_old(l))
        return t[0] / t[1];
    if (bench_is_old_b(l))
        return t[l] / t[1];
    return bench_is_mpi_b(l) ? t[l] / t[nlibs] : t[l] / t[0];
}

/* The head of libs[l]'s ratio column (bench_ratio) in the table (csv 0) or
 * the CSV (csv 1), at most len bytes into head. */
static void bench_ratio_head(int l, int csv, char *head, size_t len)
{
    if (bench_is_old(l))
        snprintf(head, len, csv ? "new_over_old" : "new/old");
    else if (bench_is_mpi_b(l))
        snprintf(head, len, csv ? "mpi_b_over_mpi" : "mpi_b/mpi");
    else if (bench_is_old_b(l))
        snprintf(head, len, csv ? "old_b_over_old" : "old_b/old");
    else
        snprintf(head, len, csv ? "%s_over_%s" : "%s/%s", csv ? libs[l].name : libs[l].abbr,
                 csv ? libs[0].name : libs[0].abbr);
}

void bench_print_time_heads(void)
{
    char head[32];

    for (int l = 0; l < nbase; l++) {
        snprintf(head, sizeof head, "%s_us", libs[l].name);
        printf(" %13s", head);
    }
    printf(" %13s", "mpi_us");
    for (int l = 1; l < nbase; l++) {
        bench_ratio_head(l, 0, head, sizeof head);
        printf(" %9s", head);
    }
    if (bench_all()) {
        snprintf(head, sizeof head, "%s/best", libs[0].abbr);
        printf(" %-18s %13s %8s", "best", "best_us", head);
    }
    printf(" %9s", "speed-up");
    for (int l = 0; l < nbase; l++) {
        snprintf(head, sizeof head, "%s_loop_us", libs[l].name);
        printf(" %13s", head);
    }
    printf(" %13s %8s", "mpi_loop_us", "loop_spd");
}

void bench_print_times(const double *t, const double *t_loop)
{
    int b = bench_best(t);

    for (int l = 0; l < nbase; l++)
        printf(" %13.2f", t[l] * 1e6);
    printf(" %13.2f", t[nlibs] * 1e6);
    for (int l = 1; l < nbase; l++)
        printf(" %9.3f", bench_ratio(l, t));
    if (bench_all() && b < 0)
        printf(" %-18s %13s %8s", "-", "-", "-");
    else if (bench_all())
        printf(" %-18s %13.2f %8.3f", libs[b].name, t[b] * 1e6, t[0] / t[b]);
    printf(" %9.3f", t[nlibs] / t[0]);
    for (int l = 0; l < nbase; l++)
        printf(" %13.2f", t_loop[l] * 1e6);
    printf(" %13.2f %8.3f", t_loop[nlibs] * 1e6, t_loop[nlibs] / t_loop[0]);
}

const char *bench_csv_time_heads(void)
{
    static char heads[256 + sizeof csv_cand];
    size_t n = 0;

    for (int l = 0; l < nbase; l++)
        n += (size_t)snprintf(heads + n, sizeof heads - n, "%s_us,", libs[l].name);
    n += (size_t)snprintf(heads + n, sizeof heads - n, "mpi_us,");
    for (int l = 1; l < nbase && n < sizeof heads; l++) {
        char head[64];
        bench_ratio_head(l, 1, head, sizeof head);
        n += (size_t)snprintf(heads + n, sizeof heads - n, "%s,", head);
    }
    if (n < sizeof heads)
        n += (size_t)snprintf(heads + n, sizeof heads - n, "speedup");
    for (int l = 0; l < nbase && n < sizeof heads; l++)
        n += (size_t)snprintf(heads + n, sizeof heads - n, ",%s_loop_us", libs[l].name);
    if (n < sizeof heads)
        n += (size_t)snprintf(heads + n, sizeof heads - n, ",mpi_loop_us,loop_speedup");
    if (bench_all() && n < sizeof heads)
        n += (size_t)snprintf(heads + n, sizeof heads - n, ",best,best_us,%s_over_best",
                              libs[0].name);
    for (int c = 0; bench_all() && c < ncsv_cand && n < sizeof heads; c++)
        n += (size_t)snprintf(heads + n, sizeof heads - n, ",%s_us", bench_csv_name(csv_cand[c]));
    return heads;
}

void bench_csv_times(FILE *csv, const double *t, const double *t_loop)
{
    int b = bench_best(t);

    for (int l = 0; l < nbase; l++)
        fprintf(csv, "%.3f,", t[l] * 1e6);
    fprintf(csv, "%.3f,", t[nlibs] * 1e6);
    for (int l = 1; l < nbase; l++)
        fprintf(csv, "%.4f,", bench_ratio(l, t));
    fprintf(csv, "%.4f", t[nlibs] / t[0]);
    for (int l = 0; l < nbase; l++)
        fprintf(csv, ",%.3f", t_loop[l] * 1e6);
    fprintf(csv, ",%.3f,%.4f", t_loop[nlibs] * 1e6, t_loop[nlibs] / t_loop[0]);
    if (!bench_all())
        return;
    if (b < 0)
        fprintf(csv, ",,,");
    else
        fprintf(csv, ",%s,%.3f,%.4f", bench_csv_name(libs[b].name), t[b] * 1e6, t[0] / t[b]);
    /* a column per candidate of any collective: empty where this one has none */
    for (int c = 0; c < ncsv_cand; c++) {
        int l = nbase;
        while (l < nlibs && libs[l].col != c)
            l++;
        if (l == nlibs)
            fprintf(csv, ",");
        else if (libs[l].fell)
            fprintf(csv, ",-");
        else
            fprintf(csv, ",%.3f", t[l] * 1e6);
    }
}

FILE *bench_csv_open(const char *fmt, ...)
{
    FILE *csv = NULL;
    va_list ap;

    if (opt.csv && !(csv = fopen(opt.csv, "w")))
        perror(opt.csv);
    if (csv) {
        va_start(ap, fmt);
        vfprintf(csv, fmt, ap);
        va_end(ap);
        fputc('\n', csv);
    }
    return csv;
}

void bench_human(char *buf, size_t n, size_t bytes)
{
    static const char *unit[] = {"B", "KiB", "MiB", "GiB"};
    double v = (double)bytes;
    int u = 0;

    while (u < 3 && v >= 1023.95) { /* what "%.1f" would print as 1024.0 */
        v /= 1024;
        u++;
    }
    snprintf(buf, n, v == floor(v) ? "%.0f %s" : "%.1f %s", v, unit[u]);
}

void bench_print_copy_bw(void)
{
    char size[32];

    bench_human(size, sizeof size, copy_bytes);
    printf("# copy bandwidth (memcpy of %s, best of %d, all ranks at once; read + write bytes):\n",
           size, COPY_REPS);
    printf("#   per rank GB/s:");
    for (int r = 0; r < nprocs; r++)
        printf(" %.2f", bw.rank_Bps[r] / 1e9);
    printf("\n#   sum GB/s: %.2f\n", bw.sum_Bps / 1e9);
}

int bench_next_size(size_t *bytes)
{
    if (*bytes > opt.max_bytes / 2)
        return 0;
    *bytes *= 2;
    return 1;
}

void bench_sweep_end(double t0, FILE *csv)
{
    double wall = MPI_Wtime() - t0;

    if (rank == 0) {
        printf("# sweep took %.1f s\n", wall);
        if (csv && fclose(csv) != 0)
            perror(opt.csv);
    }
}
