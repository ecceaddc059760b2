#!/bin/sh
# gen-man.sh CLI OUTDIR VERSION - man pages from the command's own help, so they never drift
# from it: inferbench.1 (the command list, exit codes, files) and inferbench-<cmd>.1 for each
# command (its --help verbatim). Plain troff (man(7)); no tool beyond sh, sed and the CLI.
set -eu
cli=$1 out=$2 version=$3
mkdir -p "$out"
date=$(date -u +%Y-%m-%d)

# Text to troff: backslashes as \e, '-' as \- (a minus sign, so options copy-paste from a
# rendered page), a leading '.' or "'" protected; one output line each.
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

page() { # page NAME SECTION-TITLE
    printf '.TH "%s" 1 "%s" "inferbench %s" "inferbench manual"\n' "$(echo "$1" | tr a-z A-Z)" \
        "$date" "$version"
}

cmds=$("$cli" --help | sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')

{
    page inferbench
    printf '.SH NAME\ninferbench \\- MLPerf Inference benchmarks, load generator and reports\n'
    printf '.SH SYNOPSIS\n.B inferbench\n[\\-\\-version] [\\-\\-help] \\fIcommand\\fR [\\fIargs\\fR]\n'
    printf '.SH DESCRIPTION\n.nf\n'
    "$cli" --help | esc
    printf '.fi\n.SH COMMANDS\n'
    for c in $cmds; do
        printf '.TP\n.BR inferbench\\-%s (1)\n' "$c"
        "$cli" --help | sed -n "s/^  $c  *//p" | esc
    done
    printf '.SH EXIT STATUS\n0 every result VALID; 1 runtime error; 2 usage, configuration or '
    printf 'input error; 3 ran, but a result is INVALID or a check failed; 130 interrupted '
    printf '(SIGINT/SIGTERM: the run finished its logs and left every earlier run as it was).\n'
    printf '.SH FILES\n.TP\n.I $XDG_CACHE_HOME/inferbench\n'
    printf 'generated models and synthetic data, reused across runs (\\-\\-cache\\-dir)\n'
    printf '.SH SEE ALSO\n'
    sep=''
    for c in $cmds; do printf '%s\\fBinferbench\\-%s\\fR(1)' "$sep" "$c"; sep=', '; done
    printf '\n'
} > "$out/inferbench.1"

for c in $cmds; do
    {
        page "inferbench-$c"
        summary=$("$cli" --help | sed -n "s/^  $c  *//p")
        printf '.SH NAME\ninferbench\\-%s \\- %s\n' "$c" "$summary"
        printf '.SH DESCRIPTION\n.nf\n'
        "$cli" "$c" --help | esc
        printf '.fi\n.SH SEE ALSO\n\\fBinferbench\\fR(1)\n'
    } > "$out/inferbench-$c.1"
done
