/* Grammar of the topology DSL (*.topo); tokens are in topo.l, the actions'
 * helpers and the reader entry points in gen/read/read_dsl.c.
 *
 *   machine NAME;
 *   link NAME { latency TIME; bandwidth BW; [injection BW;] [alpha_r TIME;] }
 *   nodetype NAME { SHAPE; [package LINK;] [node LINK;] }
 *       SHAPE: synthetic "STRING" | hwloc "PATH" | local | [packages N;] cores N...
 *   switch NAME { [link LINK;] nodes HOSTLIST [: NODETYPE]; ... switches NAME...; }
 *
 * Every block is checked and handed to the model when its '}' is read.
 * When the caller asks for a source map, the clean productions also record
 * the byte ranges of blocks and statements (trd__dsl_stmt, trd__dsl_end).
 * Error productions ("X value error", "error ';'", "head items error") let
 * one run report every broken statement; a block that had an error is not
 * added to the model, so that it cannot cause follow-up errors there.
 */
%code requires {
#include <stddef.h>

#include "readers.h"
#include "topo.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

typedef struct trd_dsl_ctx trd_dsl_ctx;

/* Token and symbol positions: line and column (bytes from 1) for messages,
 * and byte offsets into the text [first_byte, last_byte) for the source map. */
typedef struct trd_dsl_yyltype {
    int first_line, first_column, last_line, last_column;
    size_t first_byte, last_byte;
} trd_dsl_yyltype;
}

%code provides {
/* One entry of a switch body, kept in written order until the '}'. */
typedef struct trd_dsl_item {
    char *name;
    char *nodetype; /* node type of a node; NULL: default type */
    int is_child;   /* 1: child switch, 0: node */
    trd_loc loc;
} trd_dsl_item;

/* A message held back so that all of one file's messages can be sorted. */
typedef struct trd_dsl_msg {
    trd_loc loc;
    char *text;
} trd_dsl_msg;

/* Messages kept per file; a file of garbage stops there. */
#define TRD_DSL_MAX_ERRORS 100

/* Reader state shared by the scanner, the parser and gen/read/read_dsl.c. */
struct trd_dsl_ctx {
    trd_topo_t t;
    trd_diag *d;
    const char *file; /* interned; every trd_loc points here */
    char *dir;        /* directory of file ending in '/', or NULL: relative hwloc paths */
    int nomem;
    int line, col; /* scanner position of the next byte */
    size_t off;    /* its byte offset */

    /* The token read last (the lookahead when a syntax error is found). */
    long ntokens;
    int tok_eof;
    char tok[48];
    trd_loc tok_loc, tok_end, prev_end; /* prev_end: end of the token before it */

    /* A syntax error not yet recorded: an error production may still say it
     * better ("expected ';' after bandwidth value"). */
    int pend, pend_quiet;
    long pend_ntokens;
    long quiet_lo, quiet_hi; /* syntax errors at these tokens are follow-ups */
    trd_loc pend_loc, pend_prev_end;
    char pend_got[64];
    char pend_text[400];

    trd_dsl_msg *msgs;
    int nmsgs, capmsgs;
    long nerrs;    /* errors seen so far, including ones a recovery kept quiet */
    int nrecorded; /* messages kept, at most TRD_DSL_MAX_ERRORS */

    int have_machine;

    /* The block being read: kind "link", "nodetype" or "switch", or NULL. */
    const char *blk_kind;
    char *blk_name; /* NULL when the name itself was missing */
    trd_loc blk_loc;
    long blk_nerrs;
    trd_loc seen[TRD_TOK_SWITCHES - TRD_TOK_MACHINE + 1]; /* statements given, by keyword */

    trd_link_cost cost;

    int shape; /* 0: none yet, 1: from hwloc, 2: from packages/cores */
    int npackages, ncores;
    int cores[TRD_MAX_PACKAGES];
    int counts[TRD_MAX_PACKAGES], ncounts, counts_bad;
    char *source;
    char *package_link, *node_link;
    const char *hw_kind; /* shape 1: trd_hwloc_node_shape()'s kind and argument */
    char *hw_arg;
    trd_loc hw_loc;

    char *sw_link;
    trd_dsl_item *items;
    int nitems, capitems;

    /* Source map asked for by the caller, or NULL (nothing recorded). */
    trd_dsl_map *map;
    int capblocks, capstmts;
    int stmts_kept; /* statements of the map's blocks; the ones after belong to the open block */
};

/* Helpers for the scanner and the grammar actions (gen/read/read_dsl.c).  Every
 * char * argument is borrowed; NULL (out of memory, or the text of an
 * unterminated string) is accepted and ignored. */
int trd__dsl_token(trd_dsl_ctx *ctx, int kind, const char *text, size_t len,
                   const TRD_YYLTYPE *loc);
char *trd__dsl_strndup(trd_dsl_ctx *ctx, const char *s, size_t len);
trd_loc trd__dsl_loc(const trd_dsl_ctx *ctx, const TRD_YYLTYPE *loc);
void trd__dsl_error(trd_dsl_ctx *ctx, trd_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void trd__dsl_syntax_error(trd_dsl_ctx *ctx, const char *expected);
void trd__dsl_expect_after(trd_dsl_ctx *ctx, const char *what);
void trd__dsl_expect_got(trd_dsl_ctx *ctx, const char *what);
void trd__dsl_expect_close(trd_dsl_ctx *ctx);
void trd__dsl_recovered(trd_dsl_ctx *ctx);

void trd__dsl_machine(trd_dsl_ctx *ctx, const char *name, const TRD_YYLTYPE *loc);
void trd__dsl_begin(trd_dsl_ctx *ctx, const char *kind, const char *name,
                    const TRD_YYLTYPE *loc);
void trd__dsl_end(trd_dsl_ctx *ctx, const TRD_YYLTYPE *head, const TRD_YYLTYPE *close);
void trd__dsl_stmt(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const TRD_YYLTYPE *first,
                   const TRD_YYLTYPE *last, const TRD_YYLTYPE *semi);
void trd__dsl_link_value(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const char *text,
                         const TRD_YYLTYPE *loc);
void trd__dsl_nt_hwloc(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const char *arg,
                       const TRD_YYLTYPE *loc);
void trd__dsl_nt_packages(trd_dsl_ctx *ctx, const TRD_YYLTYPE *kwloc, const char *text,
                          const TRD_YYLTYPE *loc);
void trd__dsl_nt_count(trd_dsl_ctx *ctx, int first, const char *text, const TRD_YYLTYPE *loc);
void trd__dsl_nt_cores(trd_dsl_ctx *ctx, const TRD_YYLTYPE *kwloc);
void trd__dsl_nt_link(trd_dsl_ctx *ctx, int kw, const TRD_YYLTYPE *kwloc, const char *name);
void trd__dsl_sw_link(trd_dsl_ctx *ctx, const TRD_YYLTYPE *kwloc, const char *name);
void trd__dsl_sw_nodes(trd_dsl_ctx *ctx, const char *hosts, const TRD_YYLTYPE *loc,
                       const char *nodetype);
void trd__dsl_sw_child(trd_dsl_ctx *ctx, const char *names, const TRD_YYLTYPE *loc);

/* Scan and parse text into ctx->t.  Returns TRD_OK or TRD_ERR_NOMEM;
 * input errors are in ctx (grammar/topo.l). */
int trd__dsl_parse_text(trd_dsl_ctx *ctx, const char *text, size_t len);
int trd_yylex(TRD_YYSTYPE *lval, TRD_YYLTYPE *lloc, yyscan_t scanner);
}

%code {
#include <stdlib.h>
#include <string.h>

/* Bison's default span (first symbol's start to last symbol's end; an empty
 * rule sits at the end of the symbol before it), byte offsets included. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                                    \
    do {                                                                               \
        if (N) {                                                                       \
            (Cur) = YYRHSLOC(Rhs, 1);                                                  \
            (Cur).last_line = YYRHSLOC(Rhs, N).last_line;                              \
            (Cur).last_column = YYRHSLOC(Rhs, N).last_column;                          \
            (Cur).last_byte = YYRHSLOC(Rhs, N).last_byte;                              \
        } else {                                                                       \
            (Cur) = YYRHSLOC(Rhs, 0);                                                  \
            (Cur).first_line = (Cur).last_line;                                        \
            (Cur).first_column = (Cur).last_column;                                    \
            (Cur).first_byte = (Cur).last_byte;                                        \
        }                                                                              \
    } while (0)

/* Bison calls this only when its stack is exhausted. */
static void yyerror(const YYLTYPE *loc, yyscan_t scanner, trd_dsl_ctx *ctx, const char *msg)
{
    (void)loc;
    (void)scanner;
    (void)msg;
    ctx->nomem = 1;
}
}

%define api.pure full
/* Reduce by default only where nothing else can happen, so that after an
 * error the parser skips to the next ';' instead of closing the block. */
%define lr.default-reduction consistent
%define api.prefix {trd_yy}
%define api.token.prefix {TRD_TOK_}
%define parse.error custom
%locations
%define api.location.type {trd_dsl_yyltype}
%expect 0
%param {yyscan_t scanner}
%parse-param {trd_dsl_ctx *ctx}

%union {
    char *str;
}

%token <str> IDENT "identifier"
%token <str> HOSTLIST "host list"
%token <str> VALUE "number"
%token <str> STRING "string"
%token MACHINE "'machine'"
%token LINK "'link'"
%token LATENCY "'latency'"
%token BANDWIDTH "'bandwidth'"
%token INJECTION "'injection'"
%token ALPHA_R "'alpha_r'"
%token NODETYPE "'nodetype'"
%token SYNTHETIC "'synthetic'"
%token HWLOC "'hwloc'"
%token LOCAL "'local'"
%token PACKAGES "'packages'"
%token CORES "'cores'"
%token PACKAGE "'package'"
%token NODE "'node'"
%token SWITCH "'switch'"
%token NODES "'nodes'"
%token SWITCHES "'switches'"

%type <str> value hosts

%destructor { free($$); } <str>

%%

file
    : %empty
    | file stmt
    ;

stmt
    : MACHINE IDENT ';'
        { trd__dsl_machine(ctx, $2, &@2); free($2); }
    | MACHINE IDENT error
        { trd__dsl_expect_after(ctx, "';' after machine name");
          trd__dsl_machine(ctx, $2, &@2); free($2); }
    | MACHINE error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a machine name"); }
    | link_head link_items '}'
        { trd__dsl_end(ctx, &@1, &@3); }
    | link_head link_items error
        { trd__dsl_expect_close(ctx); trd__dsl_end(ctx, &@1, NULL); }
    | nodetype_head nodetype_items '}'
        { trd__dsl_end(ctx, &@1, &@3); }
    | nodetype_head nodetype_items error
        { trd__dsl_expect_close(ctx); trd__dsl_end(ctx, &@1, NULL); }
    | switch_head switch_items '}'
        { trd__dsl_end(ctx, &@1, &@3); }
    | switch_head switch_items error
        { trd__dsl_expect_close(ctx); trd__dsl_end(ctx, &@1, NULL); }
    | error ';'
        { yyerrok; trd__dsl_recovered(ctx); }
    | error '}'
        { yyerrok; trd__dsl_recovered(ctx); }
    ;

link_head
    : LINK IDENT '{'
        { trd__dsl_begin(ctx, "link", $2, &@2); free($2); }
    | LINK IDENT error
        { trd__dsl_begin(ctx, "link", $2, &@2); free($2);
          trd__dsl_expect_after(ctx, "'{' after link name"); }
    | LINK error '{'
        { yyerrok; trd__dsl_begin(ctx, "link", NULL, &@1);
          trd__dsl_expect_got(ctx, "a link name"); }
    ;

nodetype_head
    : NODETYPE IDENT '{'
        { trd__dsl_begin(ctx, "nodetype", $2, &@2); free($2); }
    | NODETYPE IDENT error
        { trd__dsl_begin(ctx, "nodetype", $2, &@2); free($2);
          trd__dsl_expect_after(ctx, "'{' after nodetype name"); }
    | NODETYPE error '{'
        { yyerrok; trd__dsl_begin(ctx, "nodetype", NULL, &@1);
          trd__dsl_expect_got(ctx, "a nodetype name"); }
    ;

switch_head
    : SWITCH IDENT '{'
        { trd__dsl_begin(ctx, "switch", $2, &@2); free($2); }
    | SWITCH IDENT error
        { trd__dsl_begin(ctx, "switch", $2, &@2); free($2);
          trd__dsl_expect_after(ctx, "'{' after switch name"); }
    | SWITCH error '{'
        { yyerrok; trd__dsl_begin(ctx, "switch", NULL, &@1);
          trd__dsl_expect_got(ctx, "a switch name"); }
    ;

/* An identifier where a value belongs is reported by the action, with the
 * example of what was expected. */
value
    : VALUE
    | IDENT
    ;

/* Host names may start with a digit ("001"); such a name scans as a number. */
hosts
    : IDENT
    | HOSTLIST
    | VALUE
    ;

link_items
    : %empty
    | link_items link_item
    ;

link_item
    : LATENCY value ';'
        { trd__dsl_link_value(ctx, TRD_TOK_LATENCY, &@1, $2, &@2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_LATENCY, &@1, &@2, &@2, &@3); }
    | LATENCY value error
        { trd__dsl_expect_after(ctx, "';' after latency value");
          trd__dsl_link_value(ctx, TRD_TOK_LATENCY, &@1, $2, &@2); free($2); }
    | LATENCY error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a time such as 50us"); }
    | BANDWIDTH value ';'
        { trd__dsl_link_value(ctx, TRD_TOK_BANDWIDTH, &@1, $2, &@2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_BANDWIDTH, &@1, &@2, &@2, &@3); }
    | BANDWIDTH value error
        { trd__dsl_expect_after(ctx, "';' after bandwidth value");
          trd__dsl_link_value(ctx, TRD_TOK_BANDWIDTH, &@1, $2, &@2); free($2); }
    | BANDWIDTH error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a bandwidth such as 125MB/s"); }
    | INJECTION value ';'
        { trd__dsl_link_value(ctx, TRD_TOK_INJECTION, &@1, $2, &@2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_INJECTION, &@1, &@2, &@2, &@3); }
    | INJECTION value error
        { trd__dsl_expect_after(ctx, "';' after injection value");
          trd__dsl_link_value(ctx, TRD_TOK_INJECTION, &@1, $2, &@2); free($2); }
    | INJECTION error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a bandwidth such as 10GB/s"); }
    | ALPHA_R value ';'
        { trd__dsl_link_value(ctx, TRD_TOK_ALPHA_R, &@1, $2, &@2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_ALPHA_R, &@1, &@2, &@2, &@3); }
    | ALPHA_R value error
        { trd__dsl_expect_after(ctx, "';' after alpha_r value");
          trd__dsl_link_value(ctx, TRD_TOK_ALPHA_R, &@1, $2, &@2); free($2); }
    | ALPHA_R error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a time such as 0.5us"); }
    | error ';'
        { yyerrok; trd__dsl_recovered(ctx); }
    ;

nodetype_items
    : %empty
    | nodetype_items nodetype_item
    ;

nodetype_item
    : SYNTHETIC STRING ';'
        { trd__dsl_nt_hwloc(ctx, TRD_TOK_SYNTHETIC, &@1, $2, &@2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_SYNTHETIC, &@1, &@2, &@2, &@3); }
    | SYNTHETIC STRING error
        { trd__dsl_expect_after(ctx, "';' after synthetic description");
          trd__dsl_nt_hwloc(ctx, TRD_TOK_SYNTHETIC, &@1, $2, &@2); free($2); }
    | SYNTHETIC error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a quoted hwloc synthetic description"); }
    | HWLOC STRING ';'
        { trd__dsl_nt_hwloc(ctx, TRD_TOK_HWLOC, &@1, $2, &@2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_HWLOC, &@1, &@2, &@2, &@3); }
    | HWLOC STRING error
        { trd__dsl_expect_after(ctx, "';' after hwloc file name");
          trd__dsl_nt_hwloc(ctx, TRD_TOK_HWLOC, &@1, $2, &@2); free($2); }
    | HWLOC error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a quoted hwloc XML file name"); }
    | LOCAL ';'
        { trd__dsl_nt_hwloc(ctx, TRD_TOK_LOCAL, &@1, NULL, &@1);
          trd__dsl_stmt(ctx, TRD_TOK_LOCAL, &@1, NULL, NULL, &@2); }
    | LOCAL error
        { trd__dsl_expect_after(ctx, "';' after 'local'");
          trd__dsl_nt_hwloc(ctx, TRD_TOK_LOCAL, &@1, NULL, &@1); }
    | PACKAGES value ';'
        { trd__dsl_nt_packages(ctx, &@1, $2, &@2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_PACKAGES, &@1, &@2, &@2, &@3); }
    | PACKAGES value error
        { trd__dsl_expect_after(ctx, "';' after package count");
          trd__dsl_nt_packages(ctx, &@1, $2, &@2); free($2); }
    | PACKAGES error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a package count such as 2"); }
    | CORES counts ';'
        { trd__dsl_nt_cores(ctx, &@1);
          trd__dsl_stmt(ctx, TRD_TOK_CORES, &@1, &@2, &@2, &@3); }
    | CORES counts error
        { trd__dsl_expect_after(ctx, "';' after core counts"); trd__dsl_nt_cores(ctx, &@1); }
    | CORES error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a core count such as 8"); }
    | PACKAGE IDENT ';'
        { trd__dsl_nt_link(ctx, TRD_TOK_PACKAGE, &@1, $2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_PACKAGE, &@1, &@2, &@2, &@3); }
    | PACKAGE IDENT error
        { trd__dsl_expect_after(ctx, "';' after link name");
          trd__dsl_nt_link(ctx, TRD_TOK_PACKAGE, &@1, $2); free($2); }
    | PACKAGE error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a link name"); }
    | NODE IDENT ';'
        { trd__dsl_nt_link(ctx, TRD_TOK_NODE, &@1, $2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_NODE, &@1, &@2, &@2, &@3); }
    | NODE IDENT error
        { trd__dsl_expect_after(ctx, "';' after link name");
          trd__dsl_nt_link(ctx, TRD_TOK_NODE, &@1, $2); free($2); }
    | NODE error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a link name"); }
    | error ';'
        { yyerrok; trd__dsl_recovered(ctx); }
    ;

counts
    : value
        { trd__dsl_nt_count(ctx, 1, $1, &@1); free($1); }
    | counts value
        { trd__dsl_nt_count(ctx, 0, $2, &@2); free($2); }
    ;

switch_items
    : %empty
    | switch_items switch_item
    ;

switch_item
    : LINK IDENT ';'
        { trd__dsl_sw_link(ctx, &@1, $2); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_LINK, &@1, &@2, &@2, &@3); }
    | LINK IDENT error
        { trd__dsl_expect_after(ctx, "';' after link name");
          trd__dsl_sw_link(ctx, &@1, $2); free($2); }
    | LINK error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a link name"); }
    | NODES hosts ':' IDENT ';'
        { trd__dsl_sw_nodes(ctx, $2, &@2, $4); free($2); free($4);
          trd__dsl_stmt(ctx, TRD_TOK_NODES, &@1, &@2, &@4, &@5); }
    | NODES hosts ':' IDENT error
        { trd__dsl_expect_after(ctx, "';' after node type");
          trd__dsl_sw_nodes(ctx, $2, &@2, $4); free($2); free($4); }
    | NODES hosts ':' error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a node type name"); free($2); }
    | NODES hosts ';'
        { trd__dsl_sw_nodes(ctx, $2, &@2, NULL); free($2);
          trd__dsl_stmt(ctx, TRD_TOK_NODES, &@1, &@2, &@2, &@3); }
    | NODES hosts error
        { trd__dsl_expect_after(ctx, "':' or ';' after host list"); free($2); }
    | NODES error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a host list such as n[0-7]"); }
    | SWITCHES children ';'
        { trd__dsl_stmt(ctx, TRD_TOK_SWITCHES, &@1, &@2, &@2, &@3); }
    | SWITCHES children error
        { trd__dsl_expect_after(ctx, "';' after switch names"); }
    | SWITCHES error ';'
        { yyerrok; trd__dsl_expect_got(ctx, "a switch name"); }
    | error ';'
        { yyerrok; trd__dsl_recovered(ctx); }
    ;

children
    : hosts
        { trd__dsl_sw_child(ctx, $1, &@1); free($1); }
    | children hosts
        { trd__dsl_sw_child(ctx, $2, &@2); free($2); }
    ;

%%

/* "expected A, B or C" from the parser state; the rest is up to
 * trd__dsl_syntax_error, which knows the lookahead token. */
static int yyreport_syntax_error(const yypcontext_t *yyctx, yyscan_t scanner, trd_dsl_ctx *ctx)
{
    enum { MAXTOK = 24 };
    yysymbol_kind_t exp[MAXTOK];
    char buf[300];
    size_t used = 0;
    (void)scanner;
    int n = yypcontext_expected_tokens(yyctx, exp, MAXTOK);
    /* "end of file" reads better last. */
    if (n > 1 && exp[0] == YYSYMBOL_YYEOF) {
        memmove(exp, exp + 1, (size_t)(n - 1) * sizeof exp[0]);
        exp[n - 1] = YYSYMBOL_YYEOF;
    }
    buf[0] = '\0';
    for (int i = 0; i < n && used < sizeof buf; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int w = snprintf(buf + used, sizeof buf - used, "%s%s", sep, yysymbol_name(exp[i]));
        used += w > 0 ? (size_t)w : 0;
    }
    trd__dsl_syntax_error(ctx, buf);
    return 0;
}
