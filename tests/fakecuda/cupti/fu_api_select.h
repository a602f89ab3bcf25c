/* fu_api_select.h: which driver and runtime functions get API records
 * (fu_api_select.c), for the simulated CUPTI's record writer. */
#ifndef FU_API_SELECT_H
#define FU_API_SELECT_H

#include <cupti.h>

/* The driver or runtime function `api` (its name as CUPTI's callback ids
 * spell it: a runtime one starts "cuda") gets an API record: selected by
 * cuptiActivityEnableDriverApi/RuntimeApi, or every function of its
 * domain by CUPTI_ACTIVITY_KIND_DRIVER/_RUNTIME. Its callback id in *cbid
 * (0: none known) and its record's kind in *kind. */
int fu_api_selected(const char *api, uint32_t *cbid, CUpti_ActivityKind *kind);

/* CUPTI_ACTIVITY_KIND_DRIVER or _RUNTIME turned on or off: every function
 * of that domain is selected or not, overriding the per-function choices
 * made before (as CUPTI documents for cuptiActivityEnableDriverApi). */
void fu_api_select_all(CUpti_ActivityKind kind, int on);

#endif
