/* categories.c — what an allocation is for (see docs/report.md, "Categories"):
 * rules of the form CATEGORY FIELD REGEX, tried in order, built in or from
 * --rules FILE; and which categories are held at exit by design. */
#include "frames.h"
#include "pool_id.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_rules =
    "# category         field   pattern (POSIX extended regex, case-sensitive)\n"
    "static             kind    ^static$\n"
    "pinned_host        kind    ^host$\n"
    "graph_pool         api     ^graph_pool$\n"
    "arrays             kind    ^array$\n"
    "nccl               module  libnccl\n"
    "workspace          module  libcublas|libcublasLt|libcudnn|libcufft|libcusolver|libcusparse\n"
    "workspace          frame   setWorkspaceForHandle|getCUDABlasLtWorkspace|getCurrentCUDABlasHandle\n"
    "allocator_cache    frame   DeviceCachingAllocator|ExpandableSegment|CUDACachingAllocator::Native\n"
    "kv_cache           frame   [Kk][Vv]_?[Cc]ache|kv_pool|paged_attention|PagedAttention|KVCacheManager\n"
    "optimizer          frame   torch/optim/|optim\\.|Optimizer|_fused_adam|_multi_tensor_adam|_foreach_|adamw?_step|zero_grad\n"
    "gradients          frame   AccumulateGrad|autograd::Engine::evaluate_function|\\.grad\\b|backward\n"
    "parameters         frame   load_state_dict|^Module\\.(_apply|to|cuda|to_empty)(\\.|$)|from_pretrained|load_adapter|(^|[^a-z])[Ll]o[Rr][Aa]([^a-z]|$)\n"
    "activations        frame   forward|autograd::Engine\n"
    "other              kind    ^block$\n"
    "activations        frame   at::native::\n"
    "other              frame   .\n";

static int field_of(const char *s, enum gl_rule_field *f)
{
    static const char *const names[] = {"symbol", "module", "file", "api", "kind", "frame"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(s, names[i])) {
            *f = (enum gl_rule_field)i;
            return 0;
        }
    return -1;
}

static int parse_rules(struct gl_rules *r, const char *text, const char *name, char *err, size_t errsz)
{
    memset(r, 0, sizeof *r);
    const char *p = text;
    int lineno = 0;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p = eol ? eol + 1 : p + len;
        lineno++;
        char *hash = strchr(line, '#');
        if (hash && (hash == line || hash[-1] == ' ' || hash[-1] == '\t'))
            *hash = 0;
        char cat[64], field[32];
        int off = 0;
        int got = sscanf(line, " %63s %31s %n", cat, field, &off);
        if (got < 1)
            continue; /* blank or comment */
        if (got < 2) {
            snprintf(err, errsz, "%s:%d: rule '%s' has no field and no pattern (want CATEGORY FIELD PATTERN)", name,
                     lineno, cat);
            return -1;
        }
        const char *pat = line + off;
        while (*pat == ' ' || *pat == '\t')
            pat++;
        size_t pl = strlen(pat);
        while (pl && (pat[pl - 1] == ' ' || pat[pl - 1] == '\t' || pat[pl - 1] == '\r'))
            pl--;
        struct gl_rule *nv = realloc(r->v, (r->n + 1) * sizeof *nv);
        if (!nv) {
            snprintf(err, errsz, "%s: out of memory", name);
            return -1;
        }
        r->v = nv;
        struct gl_rule *rule = &r->v[r->n];
        memset(rule, 0, sizeof *rule);
        snprintf(rule->category, sizeof rule->category, "%s", cat);
        snprintf(rule->pattern, sizeof rule->pattern, "%.*s", (int)pl, pat);
        if (field_of(field, &rule->field)) {
            snprintf(err, errsz, "%s:%d: unknown field '%s' (want symbol, module, file, frame, api or kind)", name,
                     lineno, field);
            return -1;
        }
        if (!pl) {
            snprintf(err, errsz, "%s:%d: rule '%s %s' has no pattern", name, lineno, cat, field);
            return -1;
        }
        int rc = regcomp(&rule->re, rule->pattern, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char msg[128];
            regerror(rc, &rule->re, msg, sizeof msg);
            snprintf(err, errsz, "%s:%d: bad pattern '%s': %s", name, lineno, rule->pattern, msg);
            return -1;
        }
        r->n++;
    }
    return 0;
}

int gl_rules_default(struct gl_rules *r)
{
    char err[256];
    return parse_rules(r, default_rules, "(built-in rules)", err, sizeof err);
}

int gl_rules_load(struct gl_rules *r, const char *path, char *err, size_t errsz)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errsz, "%s: cannot read rule file", path);
        return -1;
    }
    char *text = calloc(1, 1 << 20);
    size_t n = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (!text) {
        snprintf(err, errsz, "%s: out of memory", path);
        return -1;
    }
    text[n] = 0;
    int rc = parse_rules(r, text, path, err, errsz);
    free(text);
    if (rc)
        gl_rules_free(r); /* the rules before the bad line */
    return rc;
}

void gl_rules_free(struct gl_rules *r)
{
    for (size_t i = 0; i < r->n; i++)
        regfree(&r->v[i].re);
    free(r->v);
    memset(r, 0, sizeof *r);
}


static int rule_matches(const struct gl_rule *rule, const struct gl_stack *st, const struct gl_alloc *a)
{
    switch (rule->field) {
    case GL_RF_API:
        return !regexec(&rule->re, gl_api_name(a->api), 0, NULL, 0);
    case GL_RF_KIND:
        return !regexec(&rule->re, gl_kind_name(a->kind), 0, NULL, 0);
    case GL_RF_FRAME:
        if (!st->n) /* no stack at all: only a catch-all matches */
            return !regexec(&rule->re, "-", 0, NULL, 0);
        return gl_stack_matches(st, &rule->re);
    default:
        break;
    }
    for (int i = 0; i < st->n; i++) {
        const struct gl_frame *f = gl_stack_frame(st, i);
        const char *v = rule->field == GL_RF_SYMBOL ? f->symbol : rule->field == GL_RF_MODULE ? f->module : f->file;
        if (v && !regexec(&rule->re, v, 0, NULL, 0))
            return 1;
    }
    return 0;
}

const char *gl_cat_name(int cat)
{
    switch (cat) {
    case GL_CAT_ACTIVATIONS:
        return "activations";
    case GL_CAT_TEMPORARIES:
        return "temporaries";
    case GL_CAT_OPTIMIZER_TEMPORARIES:
        return "optimizer_temporaries";
    case GL_CAT_XLA_ARENA:
        return "xla_arena";
    case GL_CAT_PRIVATE_POOL:
        return GL_PRIVATE_POOL;
    default:
        return cat > 0 && cat < GL_TAG_COUNT ? gl_tag_name(cat) : NULL;
    }
}

/* A rule that cannot hold for this allocation: a tensor is never the
 * allocator's cache, whatever frames it has; one made inside the closure
 * of an optimizer's step(closure) is not the optimizer's for the
 * optimizer's frames above it. */
static int rule_excluded(const struct gl_rule *rule, const struct gl_alloc *a)
{
    return (a->kind == GL_KIND_BLOCK && !strcmp(rule->category, "allocator_cache")) ||
           ((a->flags & GL_AF_CLOSURE) && !strcmp(rule->category, "optimizer"));
}

const char *gl_categorize(const struct gl_rules *r, struct gl_stacks *s, const struct gl_alloc *a)
{
    /* a private pool's blocks: one category per pool, "private_pool (0, 1)" */
    const char *known = a->cat == GL_CAT_PRIVATE_POOL ? gl_private_pool_label(a->pool) : gl_cat_name(a->cat);
    const struct gl_stack *st = known && (a->flags & GL_AF_TAGGED) ? NULL : gl_stack_get(s, a->stack_id);
    if (known && st) /* by lifetime: a library's workspace stays one wherever it was made */
        for (size_t i = 0; i < r->n; i++)
            if (!strcmp(r->v[i].category, "workspace") && r->v[i].field != GL_RF_KIND && r->v[i].field != GL_RF_API &&
                st->n && rule_matches(&r->v[i], st, a))
                return "workspace";
    if (known) /* identity, or lifetime */
        return known;
    for (size_t i = 0; i < r->n; i++)
        if (!rule_excluded(&r->v[i], a) && rule_matches(&r->v[i], st, a))
            return r->v[i].category;
    return "other";
}

int gl_is_cached_category(const char *cat)
{
    /* segments a caching allocator keeps, module globals the driver frees
     * at unload, the CUDA-graph pool's reservation until a trim, XLA's
     * arena, the blocks of a PyTorch private pool (what a captured graph
     * holds): held at exit by design, not leaks */
    return cat && (!strcmp(cat, "allocator_cache") || !strcmp(cat, "static") || !strcmp(cat, "graph_pool") ||
                   !strcmp(cat, "xla_arena") || gl_is_private_pool(cat, NULL));
}
