/* The asynchronous progress thread (TREEDUCE_ASYNC_PROGRESS=1): treeduce's
 * outstanding runs advance while the application computes or sits in any MPI
 * call, not only inside the MPI calls treeduce intercepts (nbc.c).
 *
 * One thread per process, started by the first nonblocking or persistent
 * call and joined when MPI_Finalize begins.  It needs MPI_THREAD_MULTIPLE
 * (it makes MPI calls beside the application's); where the application asked
 * for less, TREEDUCE_VERBOSE=1 says so once and there is no thread.
 *
 * While runs are outstanding it makes passes of progress (trd_nbc_poll):
 * after a pass that advanced something, the next at once; after passes that
 * advanced nothing, it yields, then sleeps an eighth of the time it has
 * found nothing to do (1 us at least, TRD_ASYNC_SLEEP_MAX_NS at most), so
 * that a step of a run ends at most an eighth late and a run waiting
 * milliseconds for the network costs tens of passes, not thousands: a rank
 * computing on its one core keeps nearly all of it.  (Sleeps of at most
 * 20 us, tried first, took more than half of that core from the computation
 * on an emulated 2-node cluster: passes of the MPI library's progress every
 * few microseconds.)  On a node a pass also counts as having advanced
 * something when it took longer than an empty pass can
 * (TRD_ASYNC_BUSY_NS): the MPI library moves a large message through shared
 * memory a piece per pass of its progress, on both sides, and no step ends
 * before the last piece, so a thread that slept between those passes would
 * stretch the transfer (2 ranks of a 2-core node, the computation a sleep,
 * 10 runs: at 1 MiB it hid a median of 91.9% of the call, the lowest run
 * 32.0%, and 94.1%, 81.2% counting such passes; at 2 MiB 91.3% and 97.4%).
 * Not across nodes: there the kernel or the network card moves
 * the message, and a long pass is mostly the TCP stack run on a write; on
 * the emulated 2-node cluster, counting those passes made the thread take
 * the cores it shares with the computation (1 MiB: 22-53% hidden, against
 * 65-88% without).  While an application's thread advances the runs
 * itself (it waits on them) the thread sleeps at once, without yielding: a
 * node with as many ranks as cores has no core to spare for it.  With
 * nothing outstanding it sleeps on a condition variable, woken by the call
 * that queues the next run: an idle thread costs no cycles.
 * This follows what the users of MPICH's progress thread
 * (MPIR_CVAR_ASYNC_PROGRESS) met: a thread that spins in the library's
 * progress holds its lock against the application's own calls (MPICH yields
 * it with sched_yield since 4.1), and one that never rests takes a core from
 * memory-bound compute (Open MPI's discussion of an equivalent, ompi#13074:
 * "should remain quiet during periods of time where nothing is expected to
 * be progressed").
 */
#include "rt.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

/* Passes that advanced nothing before the thread sleeps, and its longest
 * sleep between two passes: a run waiting for the network is noticed at
 * most that late. */
#define TRD_ASYNC_YIELDS 16
#define TRD_ASYNC_SLEEP_MIN_NS 1000L
#define TRD_ASYNC_SLEEP_MAX_NS 1000000L

/* A pass on a node longer than this did work, though no step of a run
 * ended: the MPI library moved part of a message in it.  Measured at 4 MiB
 * on 2 ranks with MPICH's shared memory, of 5189 passes that ended no step
 * 4641 took under 1 us, 185 took 1-2 us, 12 took 2-32 us, and the 351 that
 * copied took 64 us to 2 ms. */
#define TRD_ASYNC_BUSY_NS 5000L

enum { OFF, RUNNING, STOPPING };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_t thread;
static int state = OFF; /* under mu */
static atomic_int on;   /* the thread runs: enqueue wakes it */
static _Atomic(const trd_machine *) first_machine;

#if !defined(SMPI_H) /* SMPI's ranks are simulated: no thread of their own */
static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *loop(void *arg)
{
    (void)arg;
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* sleeps of microseconds, not 50 us */
#endif
    pthread_mutex_lock(&mu);
    while (state == RUNNING) {
        if (!trd_nbc_outstanding()) {
            pthread_cond_wait(&cv, &mu);
            continue;
        }
        pthread_mutex_unlock(&mu);
        unsigned idle = 0;
        long long since = 0; /* when the passes began to find nothing */
        int moved;
        for (;;) {
            long long t0 = now_ns();
            int on_node = 0;
            moved = trd_nbc_poll(&on_node);
            if (moved < 0 || !atomic_load_explicit(&on, memory_order_relaxed))
                break;
            long long t1 = now_ns(); /* the pass's end */
            if (moved == 0 && on_node && t1 - t0 > TRD_ASYNC_BUSY_NS)
                moved = 1; /* the MPI library moved part of a message in this pass */
            if (moved == 1) {
                idle = 0;
                continue;
            }
            if (moved == 2 && idle < TRD_ASYNC_YIELDS) { /* not a core's rival to a waiting rank */
                idle = TRD_ASYNC_YIELDS;
                since = t1;
            }
            if (++idle < TRD_ASYNC_YIELDS) {
                if (idle == 1)
                    since = t1;
                sched_yield();
            } else {
                long long ns = (t1 - since) / 8;
                ns = ns < TRD_ASYNC_SLEEP_MIN_NS   ? TRD_ASYNC_SLEEP_MIN_NS
                     : ns > TRD_ASYNC_SLEEP_MAX_NS ? TRD_ASYNC_SLEEP_MAX_NS
                                                   : ns;
                struct timespec t = {0, (long)ns};
                nanosleep(&t, NULL);
            }
        }
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

static const char *level_name(int level)
{
    return level == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                            : "MPI_THREAD_MULTIPLE";
}
#endif

static void start_once(void)
{
#if defined(SMPI_H)
    trd_note(first_machine, "TREEDUCE_ASYNC_PROGRESS=1 is ignored under SMPI, whose ranks are "
                            "simulated: no progress thread");
#else
    char msg[256];
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    if (level != MPI_THREAD_MULTIPLE) {
        snprintf(msg, sizeof msg,
                 "TREEDUCE_ASYNC_PROGRESS=1 needs MPI_THREAD_MULTIPLE and MPI was initialized "
                 "with %s: no progress thread",
                 level_name(level));
        trd_note(first_machine, msg);
        return;
    }
    pthread_mutex_lock(&mu);
    state = RUNNING;
    if (pthread_create(&thread, NULL, loop, NULL) != 0) {
        state = OFF;
        pthread_mutex_unlock(&mu);
        trd_note(first_machine, "TREEDUCE_ASYNC_PROGRESS=1: the progress thread could not be "
                                "created: no progress thread");
        return;
    }
    atomic_store(&on, 1);
    pthread_mutex_unlock(&mu);
    trd_note(first_machine, "TREEDUCE_ASYNC_PROGRESS=1: a progress thread advances the "
                            "nonblocking and persistent calls");
#endif
}

void trd_progress_start(const trd_machine *m)
{
    if (!trd_env_async_progress()) /* the usual case: one relaxed load per call */
        return;
    const trd_machine *none = NULL;
    atomic_compare_exchange_strong(&first_machine, &none, m);
    pthread_once(&once, start_once);
}

int trd_progress_on(void)
{
    return atomic_load_explicit(&on, memory_order_relaxed);
}

void trd_progress_wake(void)
{
    pthread_mutex_lock(&mu);
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
}

void trd_progress_stop(void)
{
    pthread_mutex_lock(&mu);
    if (state != RUNNING) {
        pthread_mutex_unlock(&mu);
        return;
    }
    state = STOPPING;
    atomic_store(&on, 0);
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(thread, NULL);
    pthread_mutex_lock(&mu);
    state = OFF;
    pthread_mutex_unlock(&mu);
}
