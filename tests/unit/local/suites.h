/* The lifecycle-engine suites (one per topic of docs/behaviours.md). */
#ifndef S0_LOCAL_SUITES_H
#define S0_LOCAL_SUITES_H

#include <check.h>

Suite *s0_local_fs_suite(void);    /* FS-, EPH- */
Suite *s0_local_ptx_suite(void);   /* PTX- */
Suite *s0_local_rtx_suite(void);   /* RTX- */
Suite *s0_local_rec_suite(void);   /* REC-, INS- */
Suite *s0_local_ttl_suite(void);   /* TTL-, GW- */
Suite *s0_local_cost_suite(void);  /* COST- */
Suite *s0_local_bad_suite(void);   /* bad input */
Suite *s0_local_crash_suite(void); /* PTX-05, REC-05 crash campaign */
Suite *s0_local_crash_mem_suite(void); /* MEM-03/04, MFB-03..07 crash campaign */
Suite *s0_local_model_suite(void); /* random lifecycles against a model */
Suite *s0_local_memory_suite(void); /* FS-04, SES-, MEM-, MFB-, TTL-07/08 */
Suite *s0_local_webhook_suite(void); /* MFB-15 */
Suite *s0_local_network_suite(void); /* RTX-04 network policy */
Suite *s0_local_damaged_suite(void); /* damaged metadata at reopen (fuzz findings) */
Suite *s0_local_fidelity_suite(void); /* MEM-12, UC-14, UC-16 */
Suite *s0_local_watch_suite(void);   /* waits end at the commit (issue #22) */
Suite *s0_local_fence_suite(void);   /* node lease and generation claims */

#endif
