/* Recursive multiplying schedules [RM §4] (pure C, no MPI). */
#ifndef TRD_RM_H
#define TRD_RM_H
#endif
