/*
 * notes.h - the disclosures every report carries (users.md §3.3, MLCommons
 * messaging guidelines): verification status, result IDs and retrieval, price
 * basis and date, derived-metric method, chip counts and scenarios, host and
 * version differences, power source, trademark legend. Shared by the JSON and
 * HTML writers and by `inferbench compare`. Internal to src/report.
 */
#ifndef IB_REPORT_NOTES_H
#define IB_REPORT_NOTES_H

#include "base/vec.h"
#include "report/report_impl.h"

typedef struct ib_rpt_note {
    const char *kind; /* static tag: "verification", "published", "price", "derived", ... */
    char *text;       /* ib_malloc'd, plain text (writers escape it) */
} ib_rpt_note;

typedef struct ib_rpt_notes {
    IB_VEC(ib_rpt_note) v;
} ib_rpt_notes;

/* The trademark legend (verbatim, MLCommons messaging guidelines). */
extern const char ib_rpt_trademark[];
/* The sentence required next to each unverified score. */
extern const char ib_rpt_unverified_note[];

int ib_rpt_notes_build(const ib_report *rep, ib_rpt_notes *out);
void ib_rpt_notes_deinit(ib_rpt_notes *n);

/* "MLPerf® Inference v1.1" style suite label of the results (versions joined). */
void ib_rpt_suite_label(const ib_report *rep, char *out, size_t cap);
/* "closed division, Dell": the distinct divisions and submitters of the systems. */
void ib_rpt_scope_label(const ib_report *rep, char *out, size_t cap);

#endif
