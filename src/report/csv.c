/*
 * csv.c - RFC 4180 record splitting. A record may span lines inside quotes; an
 * unterminated quote or text after a closing quote is an error naming the line.
 * At most 64 fields per record and 1 MiB per field keep hostile input bounded.
 */
#include "report/csv.h"

#include <ctype.h>
#include <string.h>

#include "base/common.h"
#include "base/strbuf.h"
#include "report/rutil.h"

#define CSV_MAX_FIELDS 64
#define CSV_MAX_FIELD  ((size_t)1 << 20)

/* Fields live in the arena; only the row vector is freed. */
void ib_rpt_csv_deinit(ib_rpt_csv *csv)
{
    if (!csv) return;
    IB_VEC_FREE(&csv->rows);
}

/* Header lookup is case-insensitive so "System" and "system" both work. */
int ib_rpt_csv_column(const ib_rpt_csv *csv, const char *name)
{
    if (!csv->rows.len) return -1;
    const ib_rpt_csv_row *h = &csv->rows.data[0];
    for (size_t i = 0; i < h->nfield; i++)
        if (ib_rpt_ieq(h->field[i], name)) return (int)i;
    return -1;
}

/* A quote opens a quoted field only at the start of a field (after blanks). */
static bool all_space(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return false;
    return true;
}

/* Unquoted fields are trimmed; quoted ones are kept verbatim. */
static int push_field(ib_arena *a, ib_strbuf *sb, bool quoted, char **fields, size_t *nf,
                      const char *name, size_t line, ib_err *err)
{
    if (*nf >= CSV_MAX_FIELDS)
        return ib_err_set(err, IB_EFORMAT, "%s:%zu: more than %d fields", name, line,
                          CSV_MAX_FIELDS);
    const char *s = ib_strbuf_cstr(sb);
    char *f = ib_arena_strdup(a, s);
    if (!f || sb->oom) return ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
    fields[(*nf)++] = quoted ? f : ib_rpt_trim(f);
    ib_strbuf_reset(sb);
    return IB_OK;
}

/* Blank lines and comment lines are not records. */
static int push_row(ib_rpt_csv *out, ib_arena *a, char **fields, size_t nf, size_t line,
                    const char *name, ib_err *err)
{
    /* a record of one empty field is a blank line; '#' starts a comment line */
    if (nf == 1 && (!fields[0][0] || fields[0][0] == '#')) return IB_OK;
    if (nf >= 1 && fields[0][0] == '#') return IB_OK;
    ib_rpt_csv_row row = {line, nf, ib_arena_alloc(a, nf * sizeof(char *))};
    if (!row.field || IB_VEC_PUSH(&out->rows, row))
        return ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
    memcpy(row.field, fields, nf * sizeof(char *));
    out->rows.data[out->rows.len - 1].field = row.field;
    return IB_OK;
}

int ib_rpt_csv_parse(const char *text, size_t len, const char *name, ib_arena *arena,
                     ib_rpt_csv *out, ib_err *err)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "csv";
    ib_strbuf sb;
    ib_strbuf_init(&sb);
    char *fields[CSV_MAX_FIELDS];
    size_t nf = 0, line = 1, rec_line = 1;
    bool in_quotes = false, quoted = false, after_quote = false;
    int rc = IB_OK;
    for (size_t i = 0; i <= len && rc == IB_OK; i++) {
        char c = i < len ? text[i] : '\n'; /* a final virtual newline ends the last record */
        if (i < len && c == '\0') {
            rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: NUL byte; not a text file", name, line);
            break;
        }
        if (in_quotes) {
            if (c == '"') {
                if (i + 1 < len && text[i + 1] == '"') {
                    ib_strbuf_putc(&sb, '"');
                    i++;
                } else {
                    in_quotes = false;
                    after_quote = true;
                }
            } else {
                if (c == '\n') line++;
                if (i < len)
                    ib_strbuf_putc(&sb, c);
                else {
                    rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: unterminated quoted field", name,
                                    rec_line);
                    break;
                }
            }
        } else if (c == '"' && !after_quote && !quoted && all_space(ib_strbuf_cstr(&sb))) {
            ib_strbuf_reset(&sb);
            in_quotes = quoted = true;
        } else if (c == ',') {
            rc = push_field(arena, &sb, quoted, fields, &nf, name, rec_line, err);
            quoted = after_quote = false;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < len && text[i + 1] == '\n') i++;
            rc = push_field(arena, &sb, quoted, fields, &nf, name, rec_line, err);
            if (rc == IB_OK) rc = push_row(out, arena, fields, nf, rec_line, name, err);
            nf = 0;
            quoted = after_quote = false;
            line++;
            rec_line = line;
        } else if (after_quote) {
            if (!isspace((unsigned char)c))
                rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: text after a closing quote", name, line);
        } else {
            ib_strbuf_putc(&sb, c);
        }
        if (rc == IB_OK && sb.len > CSV_MAX_FIELD)
            rc = ib_err_set(err, IB_EFORMAT, "%s:%zu: field longer than 1 MiB", name, line);
        if (rc == IB_OK && sb.oom) rc = ib_err_set(err, IB_ENOMEM, "%s: out of memory", name);
    }
    ib_strbuf_deinit(&sb);
    if (rc) ib_rpt_csv_deinit(out);
    return rc;
}
