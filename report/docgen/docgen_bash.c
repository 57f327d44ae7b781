/* docgen_bash.c — the bash completion of gpuledger: the verbs, each verb's
 * options as its --help shows them, the words an option takes
 * ("--format text|json|html"), files for FILE/PATTERN/DB arguments, and
 * the profiled command's own completion after `gpuledger run [options]`. */
#include <stdio.h>
#include <string.h>

#include "docgen.h"

#define MAXOPT 48

/* Does an option's argument name a path? */
static int is_path(const char *arg)
{
    return !strcmp(arg, "FILE") || !strcmp(arg, "PATTERN") || !strcmp(arg, "DIR");
}

/* The case branches of one verb: what follows an option that takes an
 * argument, in _gpuledger_arg_VERB. */
static void verb_function(FILE *f, const char *verb, const struct gl_doc_opt *o, size_t n)
{
    fprintf(f, "_gpuledger_arg_%s() {\n    case $1 in\n", verb);
    for (size_t i = 0; i < n; i++) {
        if (!o[i].arg[0] || o[i].optional)
            continue;
        fprintf(f, "    %s%s%s) ", o[i].alias, o[i].alias[0] ? "|" : "", o[i].name);
        if (o[i].words[0])
            fprintf(f, "COMPREPLY=($(compgen -W '%s' -- \"$2\")) ;;\n", o[i].words);
        else if (is_path(o[i].arg))
            fputs("_gpuledger_files \"$2\" ;;\n", f);
        else
            fputs("COMPREPLY=() ;;\n", f);
    }
    fputs("    *) return 1 ;;\n    esac\n}\n", f);
}

static void option_words(FILE *f, const struct gl_doc_opt *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (o[i].alias[0])
            fprintf(f, "%s ", o[i].alias);
        fprintf(f, "%s%s%s", o[i].name, o[i].optional ? " " : "", o[i].optional ? o[i].name : "");
        if (o[i].optional)
            fputc('=', f);
        fputs(i + 1 < n ? " " : "", f);
    }
}

int gl_docgen_bash(FILE *f)
{
    fputs("# bash completion for gpuledger. Generated at build time by report/docgen from the\n"
          "# --help texts (report/help.c): do not edit.\n\n"
          "_gpuledger_files() {\n"
          "    compopt -o filenames 2>/dev/null\n"
          "    COMPREPLY=($(compgen -f -- \"$1\"))\n"
          "}\n\n"
          "_gpuledger_dbs() {\n"
          "    compopt -o filenames 2>/dev/null\n"
          "    COMPREPLY=($(compgen -d -- \"$1\") $(compgen -f -X '!*.db' -- \"$1\"))\n"
          "}\n\n",
          f);
    for (size_t i = 0; i < gl_help_npages; i++) {
        struct gl_doc_opt o[MAXOPT];
        size_t n = gl_doc_options(gl_help_pages[i].usage, o, MAXOPT);
        verb_function(f, gl_help_pages[i].verb, o, n);
        fprintf(f, "_gpuledger_opts_%s='", gl_help_pages[i].verb);
        option_words(f, o, n);
        fprintf(f, "'\n_gpuledger_argopts_%s=' ", gl_help_pages[i].verb);
        for (size_t k = 0; k < n; k++)
            if (o[k].arg[0] && !o[k].optional)
                fprintf(f, "%s%s%s ", o[k].alias, o[k].alias[0] ? " " : "", o[k].name);
        fputs("'\n\n", f);
    }
    struct gl_doc_opt top[8];
    size_t ntop = gl_doc_options(strstr(gl_usage_main, "\noptions:\n"), top, 8);
    fputs("_gpuledger() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} verb=${COMP_WORDS[1]} i\n"
          "    COMPREPLY=()\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W '",
          f);
    for (size_t i = 0; i < gl_help_npages; i++)
        fprintf(f, "%s ", gl_help_pages[i].verb);
    option_words(f, top, ntop);
    fputs("' -- \"$cur\"))\n"
          "        return\n"
          "    fi\n"
          "    case $verb in\n"
          "    ",
          f);
    for (size_t i = 0; i < gl_help_npages; i++)
        fprintf(f, "%s%s", gl_help_pages[i].verb, i + 1 < gl_help_npages ? "|" : ") ;;\n");
    fputs("    *) return ;;\n"
          "    esac\n"
          "    if [ \"$verb\" = run ]; then\n"
          "        # the first word that is neither an option nor an option's argument is the\n"
          "        # command: from there on, complete as for that command\n"
          "        for ((i = 2; i < COMP_CWORD; i++)); do\n"
          "            case ${COMP_WORDS[i]} in\n"
          "            --) ((i++)); break ;;\n"
          "            -*) [[ $_gpuledger_argopts_run == *\" ${COMP_WORDS[i]} \"* ]] && ((i++)) ;;\n"
          "            *) break ;;\n"
          "            esac\n"
          "        done\n"
          "        if [ \"$i\" -lt \"$COMP_CWORD\" ]; then\n"
          "            if declare -F _command_offset >/dev/null; then\n"
          "                _command_offset \"$i\"\n"
          "            else\n"
          "                _gpuledger_files \"$cur\"\n"
          "            fi\n"
          "            return\n"
          "        fi\n"
          "    fi\n"
          "    _gpuledger_arg_\"$verb\" \"$prev\" \"$cur\" && return\n"
          "    local opts=_gpuledger_opts_$verb\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"${!opts}\" -- \"$cur\"))\n"
          "        [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null\n"
          "    elif [ \"$verb\" = run ]; then\n"
          "        COMPREPLY=($(compgen -c -- \"$cur\"))\n"
          "    else\n"
          "        _gpuledger_dbs \"$cur\"\n"
          "    fi\n"
          "}\n"
          "complete -F _gpuledger gpuledger\n",
          f);
    return ferror(f) ? -1 : 0;
}
