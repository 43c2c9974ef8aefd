/* The counter protocol of the node segment, as every node phase uses it
 * [FLEX §3.1]: an epoch per chunk, whose slot the node's ranks may write once
 * every rank has finished the epoch two before (the same memory), and the
 * epoch of a single-copy exchange, which every rank ends by waiting for all
 * others to be done with its buffers. */
#include "phases.h"

int trd_seg_next(trd_sb *b, int round)
{
    int e = trd_sb_epoch(b);
    trd_s_wait(b, round, TRD_PEER_LOCALS, b->ppn, TRD_CTR_DONE, e - 2);
    return e;
}

int trd_seg_contrib(const trd_sb *b, int e, size_t cnt, size_t *at)
{
    if (cnt * b->call->extent <= TRD_INLINE_BYTES) {
        *at = trd_sb_inl(b, e);
        return TRD_B_INL;
    }
    *at = trd_sb_seg_in(b, e);
    return TRD_B_SEG;
}

int trd_seg_direct_begin(trd_sb *b, int round)
{
    int e = trd_seg_next(b, round);
    b->s->direct = 1;
    trd_s_signal(b, round, TRD_CTR_IN, e);
    return e;
}

void trd_seg_direct_end(trd_sb *b, int round, int e)
{
    trd_s_signal(b, round, TRD_CTR_DONE, e);
    trd_s_wait(b, round, TRD_PEER_LOCALS, b->ppn, TRD_CTR_DONE, e);
}
