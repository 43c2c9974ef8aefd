/* Recursive multiplying schedules [RM §4]. */
#include "trd_rm.h"
