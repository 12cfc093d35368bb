/* names.c — printable names for statuses, event kinds and reasons (logs, the CLI, tests). */
#include "core.h"

const char *cg_status_str(cg_status s)
{
    switch (s) {
    case CG_OK: return "ok";
    case CG_ERR_INVALID: return "invalid argument";
    case CG_ERR_NO_DEVICE: return "no such device";
    case CG_ERR_TOO_LARGE: return "limit above device capacity";
    case CG_ERR_NOT_FOUND: return "not found";
    case CG_ERR_BELOW_USE: return "limit below current use";
    case CG_ERR_NOMEM: return "out of memory";
    case CG_ERR_EXISTS: return "already exists";
    case CG_ERR_NO_COMPUTE: return "hard compute shares on the device would exceed 100%";
    case CG_ERR_NO_SWAP: return "swap is off, or the container refuses it";
    case CG_ERR_SWAP_BUDGET: return "the host-memory budget for swap would be exceeded";
    case CG_ERR_STATE: return "not in a state that allows it";
    case CG_ERR_BUSY: return "device busy: an exclusive container needs it empty";
    case CG_ERR_EXCLUSIVE: return "device held by an exclusive container";
    case CG_ERR_NOT_FREE: return "the whole limit is not free now on every device asked for";
    }
    return "unknown status";
}

const char *cg_event_kind_name(cg_event_kind k)
{
    switch (k) {
    case CG_EV_ADMIT: return "admit";
    case CG_EV_ASSIGN: return "assign";
    case CG_EV_UNASSIGN: return "unassign";
    case CG_EV_GRANT: return "grant";
    case CG_EV_SUSPEND: return "suspend";
    case CG_EV_RESUME: return "resume";
    case CG_EV_REJECT: return "reject";
    case CG_EV_RELEASE: return "release";
    case CG_EV_REMOVE: return "remove";
    case CG_EV_LIMIT: return "limit";
    case CG_EV_COMPUTE: return "compute";
    case CG_EV_SWAP_OUT: return "swap-out";
    case CG_EV_SWAP_IN: return "swap-in";
    case CG_EV_PRIORITY: return "priority";
    }
    return "unknown";
}

const char *cg_reason_str(cg_reason r)
{
    switch (r) {
    case CG_WHY_NONE: return "";
    case CG_WHY_FITS_ASSIGNMENT: return "fits assignment";
    case CG_WHY_RAISED: return "assignment raised";
    case CG_WHY_NO_FREE: return "not enough free memory";
    case CG_WHY_UNSAFE: return "raise would be unsafe";
    case CG_WHY_OVER_LIMIT: return "over limit";
    case CG_WHY_PROCESS_EXIT: return "process exited";
    case CG_WHY_REMOVED: return "container removed";
    case CG_WHY_POLICY: return "resume policy";
    case CG_WHY_LIMIT_CHANGED: return "limit changed";
    case CG_WHY_FREE: return "freed";
    case CG_WHY_VICTIM: return "swapped out for a waiting request";
    case CG_WHY_OPERATOR: return "operator's order";
    case CG_WHY_SWAPPED: return "container is swapped out";
    case CG_WHY_FAIR_SHARE: return "tenant at its fair-share ceiling";
    case CG_WHY_STEP_ASIDE: return "stepped aside for a later request";
    case CG_WHY_GANG: return "waits for all its GPUs";
    case CG_WHY_GANG_EXPIRED: return "its GPUs were not all free within the bound (gang-wait-max)";
    }
    return "unknown";
}
