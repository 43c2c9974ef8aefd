/* XML topology reader (gen/read/treeduce-topology.xsd) and hwloc single-node machines.
 *
 * The file is parsed with libxml2 (no network, no external entities), validated
 * against the schema compiled into the binary, and only then lowered to the
 * topology model, so a file that fails validation adds nothing to t.  Every
 * libxml2 message is caught and rewritten into the treeduce wording with the
 * file:line:col of the offending element, attribute value or text; libxml2 never
 * prints anything itself.
 */
#include "reader.h"
#include "readers.h"
#include "xml_common.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlschemas.h>

#define TRD_XML_NS "urn:treeduce:topology:1"

/* The schema text, compiled in from gen/read/treeduce-topology.xsd by
 * cmake/Embed.cmake (KIND=xsd). */
extern const char trd_topology_xsd[];
extern const size_t trd_topology_xsd_len;

struct xml_reader {
    trd_topo_t t;
    trd_diag *d;
    const char *file; /* interned */
    const char *text;
    size_t len;
    const char *dir;       /* directory that relative hwloc paths start from */
    xmlParserCtxtPtr ctxt; /* while parsing */
    int nerrors;           /* parse and validation errors */
    int nomem;
    /* The last attribute reported, so that one bad value gives one message
     * (a bad list item makes libxml2 complain about the item and the list). */
    const void *last_node;
    char last_attr[128];
    size_t *bol; /* line start offsets */
    size_t nlines;
};

/* ---- Positions ------------------------------------------------------------ */

static trd_loc loc_line(struct xml_reader *r, long line, int col)
{
    trd_loc loc = {r->file, line > INT_MAX ? INT_MAX : (int)line, col};
    return loc;
}

/* Offsets of the line starts, built on first use so that each position
 * costs a binary search instead of a scan of the file. */
static int build_lines(struct xml_reader *r)
{
    size_t n = 1;

    if (r->bol != NULL)
        return 0;
    for (size_t i = 0; i < r->len; i++)
        n += r->text[i] == '\n';
    r->bol = malloc(n * sizeof *r->bol);
    if (r->bol == NULL)
        return -1;
    r->nlines = 0;
    r->bol[r->nlines++] = 0;
    for (size_t i = 0; i < r->len; i++)
        if (r->text[i] == '\n')
            r->bol[r->nlines++] = i + 1;
    return 0;
}

/* 1-based line of byte offset off, or 0 if unknown. */
static long line_of(struct xml_reader *r, size_t off)
{
    size_t lo = 0, hi;

    if (build_lines(r) != 0)
        return 0;
    hi = r->nlines;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->bol[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return (long)lo + 1;
}

/* file:line:col of byte offset off in the source text. */
static trd_loc loc_at(struct xml_reader *r, size_t off)
{
    long line;

    if (off > r->len)
        off = r->len;
    line = line_of(r, off);
    if (line == 0)
        return loc_line(r, 0, 0);
    return loc_line(r, line, (int)(off - r->bol[line - 1]) + 1);
}

/* Byte offset of the '<' that starts element node, or -1 if unknown.  The
 * offset is noted while parsing (on_start_element); input in an encoding
 * other than UTF-8 is converted first, and its offsets then fail the line
 * check (which libxml2 cannot make past line 65535). */
static long elem_offset(struct xml_reader *r, xmlNodePtr node)
{
    uintptr_t off;
    long line;

    if (node == NULL || node->type != XML_ELEMENT_NODE || node->_private == NULL)
        return -1;
    off = (uintptr_t)node->_private - 1;
    if (off >= r->len || r->text[off] != '<')
        return -1;
    line = xmlGetLineNo(node);
    if (line < 65535 && line_of(r, off) != line)
        return -1;
    return (long)off;
}

static trd_loc elem_loc(struct xml_reader *r, xmlNodePtr node)
{
    long off = elem_offset(r, node);

    if (off >= 0)
        return loc_at(r, (size_t)off);
    return loc_line(r, node != NULL ? xmlGetLineNo(node) : 0, 1);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Offset of attribute qname in the start tag of node: of its value (after
 * the quote) when value is set, else of its name; -1 if not found. */
static long attr_offset(struct xml_reader *r, xmlNodePtr node, const char *qname, int value)
{
    long start = elem_offset(r, node);
    size_t i, n, qlen = strlen(qname);

    if (start < 0)
        return -1;
    n = r->len;
    i = (size_t)start + 1;
    while (i < n && !is_space(r->text[i]) && r->text[i] != '>' && r->text[i] != '/')
        i++;
    for (;;) {
        size_t name, name_end, val;
        char quote;

        while (i < n && is_space(r->text[i]))
            i++;
        if (i >= n || r->text[i] == '>' || r->text[i] == '/')
            break;
        name = i;
        while (i < n && !is_space(r->text[i]) && r->text[i] != '=' && r->text[i] != '>')
            i++;
        name_end = i;
        while (i < n && is_space(r->text[i]))
            i++;
        if (i >= n || r->text[i] != '=')
            break;
        i++;
        while (i < n && is_space(r->text[i]))
            i++;
        if (i >= n || (r->text[i] != '"' && r->text[i] != '\''))
            break;
        quote = r->text[i++];
        val = i;
        while (i < n && r->text[i] != quote)
            i++;
        i++;
        if (name_end - name == qlen && memcmp(r->text + name, qname, qlen) == 0)
            return (long)(value ? val : name);
    }
    return -1;
}

/* Location of an attribute (see attr_offset); the element if not found. */
static trd_loc attr_loc(struct xml_reader *r, xmlNodePtr node, const char *qname, int value)
{
    long off = attr_offset(r, node, qname, value);

    return off >= 0 ? loc_at(r, (size_t)off) : elem_loc(r, node);
}

/* Offset just past the first needle in text[from..n), or n. */
static size_t skip_past(const char *text, size_t n, size_t from, const char *needle)
{
    size_t k = strlen(needle);

    for (size_t i = from; i + k <= n; i++)
        if (memcmp(text + i, needle, k) == 0)
            return i + k;
    return n;
}

/* Skip the comment, CDATA section, PI, or start/end tag at text[i] == '<';
 * returns the index after it.  *depth goes up by one for a start tag and
 * down by one for an end tag. */
static size_t skip_markup(const char *text, size_t n, size_t i, int *depth)
{
    if (n - i >= 4 && memcmp(text + i, "<!--", 4) == 0)
        return skip_past(text, n, i + 4, "-->");
    if (n - i >= 9 && memcmp(text + i, "<![CDATA[", 9) == 0)
        return skip_past(text, n, i + 9, "]]>");
    if (n - i >= 2 && text[i + 1] == '?')
        return skip_past(text, n, i + 2, "?>");
    if (n - i >= 2 && text[i + 1] == '/')
        (*depth)--;
    else
        (*depth)++;
    for (i++; i < n && text[i] != '>'; i++) {
        if (text[i] == '"' || text[i] == '\'') {
            char q = text[i++];
            while (i < n && text[i] != q)
                i++;
        }
    }
    if (i < n && text[i - 1] == '/')
        (*depth)--;
    return i < n ? i + 1 : n;
}

/* Location of the first text that is not white space directly inside
 * element node (schema errors about text name only the element). */
static trd_loc text_loc(struct xml_reader *r, xmlNodePtr node)
{
    long start = elem_offset(r, node);
    size_t i, n = r->len;
    int depth = 0;

    if (start < 0)
        return elem_loc(r, node);
    i = skip_markup(r->text, n, (size_t)start, &depth); /* the start tag itself */
    depth = 0;
    while (i < n) {
        if (r->text[i] == '<') {
            if (n - i >= 9 && memcmp(r->text + i, "<![CDATA[", 9) == 0 && depth == 0)
                return loc_at(r, i);
            i = skip_markup(r->text, n, i, &depth);
            if (depth < 0)
                break;
        } else if (depth == 0 && !is_space(r->text[i])) {
            return loc_at(r, i);
        } else {
            i++;
        }
    }
    return elem_loc(r, node);
}

/* ---- Error messages ------------------------------------------------------- */

/* Name of an element as the user wrote it, with its namespace when that is
 * not ours: "switch", "o:nodes (namespace urn:other)". */
static void elem_desc(xmlNodePtr node, char *buf, size_t len)
{
    const char *ns = node->ns != NULL ? (const char *)node->ns->href : NULL;
    const char *prefix = node->ns != NULL ? (const char *)node->ns->prefix : NULL;

    if (ns != NULL && strcmp(ns, TRD_XML_NS) == 0)
        snprintf(buf, len, "'%s'", (const char *)node->name);
    else if (ns != NULL)
        snprintf(buf, len, "'%s%s%s' (namespace %s)", prefix ? prefix : "", prefix ? ":" : "",
                 (const char *)node->name, ns);
    else
        snprintf(buf, len, "'%s' (no namespace)", (const char *)node->name);
}

/* What a valid value of each attribute looks like, for value errors. */
static const char *attr_expectation(const char *attr, char *buf, size_t len)
{
    if (strcmp(attr, "latency") == 0)
        return "a time such as 50us";
    if (strcmp(attr, "alpha_r") == 0)
        return "a time such as 0.5us";
    if (strcmp(attr, "bandwidth") == 0 || strcmp(attr, "injection") == 0)
        return "a bandwidth such as 125MB/s";
    if (strcmp(attr, "packages") == 0) {
        snprintf(buf, len, "a whole number from 1 to %d", TRD_MAX_PACKAGES);
        return buf;
    }
    if (strcmp(attr, "cores") == 0)
        return "core counts from 1 to 65536, one for every package (\"8\") or one per "
               "package (\"8 8\")";
    if (strcmp(attr, "local") == 0)
        return "'true'";
    if (strcmp(attr, "names") == 0)
        return "a host list such as n[0-7]";
    if (strcmp(attr, "synthetic") == 0)
        return "an hwloc synthetic description such as \"package:2 core:8\"";
    if (strcmp(attr, "hwloc") == 0)
        return "the name of an lstopo XML file";
    return "a name made of letters, digits, '_', '.' and '-'";
}

/* Turn "( {urn}a, {urn}b )" into "'a' or 'b'" (namespaces dropped). */
static void expected_list(const char *s, char *buf, size_t len)
{
    const char *names[16];
    size_t lens[16];
    int n = 0;
    size_t used = 0;

    buf[0] = '\0';
    while (*s != '\0' && *s != ')' && n < 16) {
        const char *b, *e;

        while (*s == ' ' || *s == ',' || *s == '(')
            s++;
        b = s;
        while (*s != '\0' && *s != ',' && *s != ' ' && *s != ')')
            s++;
        e = s;
        if (e == b)
            continue;
        if (*b == '{') {
            const char *close = memchr(b, '}', (size_t)(e - b));
            if (close != NULL)
                b = close + 1;
        }
        names[n] = b;
        lens[n++] = (size_t)(e - b);
    }
    for (int i = 0; i < n && used < len; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int w = snprintf(buf + used, len - used, "%s'%.*s'", sep, (int)lens[i], names[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* The attribute named in a libxml2 schema message "Element 'x', attribute 'a': ...". */
static int message_attr(const char *msg, char *buf, size_t len)
{
    const char *a = strstr(msg, "', attribute '");
    const char *e;

    if (a == NULL)
        return -1;
    a += strlen("', attribute '");
    e = strchr(a, '\'');
    if (e == NULL || (size_t)(e - a) >= len)
        return -1;
    memcpy(buf, a, (size_t)(e - a));
    buf[e - a] = '\0';
    return 0;
}

/* "{urn:other}x" -> "o:x" as written on node, for messages and for finding
 * the attribute in the source. */
static void attr_qname(xmlNodePtr node, const char *clark, char *buf, size_t len)
{
    const char *close;

    snprintf(buf, len, "%s", clark);
    if (clark[0] != '{' || (close = strchr(clark, '}')) == NULL)
        return;
    for (xmlAttrPtr a = node->properties; a != NULL; a = a->next) {
        size_t nslen = (size_t)(close - clark - 1);
        if (a->ns != NULL && strcmp((const char *)a->name, close + 1) == 0 &&
            strlen((const char *)a->ns->href) == nslen &&
            memcmp(a->ns->href, clark + 1, nslen) == 0) {
            snprintf(buf, len, "%s%s%s", a->ns->prefix ? (const char *)a->ns->prefix : "",
                     a->ns->prefix ? ":" : "", (const char *)a->name);
            return;
        }
    }
}

/* libxml2 text with the "Element '...': " head, namespaces and the final
 * period removed, for messages without a rewrite of their own. */
static void plain_message(const char *msg, char *buf, size_t len)
{
    size_t o = 0;
    const char *p = msg;

    if (strncmp(p, "Element '", 9) == 0) {
        const char *e = strstr(p, "': ");
        if (e != NULL)
            p = e + 3;
    }
    while (*p != '\0' && o + 1 < len) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            if (close != NULL) {
                p = close + 1;
                continue;
            }
        }
        buf[o++] = *p++;
    }
    while (o > 0 && (buf[o - 1] == '\n' || buf[o - 1] == '.' || buf[o - 1] == ' '))
        o--;
    buf[o] = '\0';
    if (buf[0] >= 'A' && buf[0] <= 'Z')
        buf[0] = (char)(buf[0] - 'A' + 'a');
}

static void report_content_error(struct xml_reader *r, xmlNodePtr node, const char *msg)
{
    char what[256], list[256] = "";
    const char *exp = strstr(msg, "Expected is");

    if (exp != NULL)
        expected_list(strchr(exp, '(') ? strchr(exp, '(') : exp + strlen("Expected is"), list,
                      sizeof list);
    elem_desc(node, what, sizeof what);
    if (strstr(msg, "Missing child element") != NULL) {
        trd_diag_error(r->d, elem_loc(r, node), "element %s is incomplete; expected %s inside",
                       what, list[0] ? list : "more elements");
    } else if (list[0] == '\0' && node->parent != NULL && node->parent->type == XML_ELEMENT_NODE &&
               strcmp((const char *)node->parent->name, "machine") == 0 &&
               strcmp((const char *)node->name, "switch") == 0) {
        trd_diag_error(r->d, elem_loc(r, node),
                       "second top-level 'switch'; expected one root switch that contains "
                       "the others");
    } else if (list[0] == '\0') {
        trd_diag_error(r->d, elem_loc(r, node), "element %s is not expected here", what);
    } else {
        trd_diag_error(r->d, elem_loc(r, node), "element %s is not expected here; expected %s",
                       what, list);
    }
}

static void report_root_error(struct xml_reader *r, xmlNodePtr node)
{
    const char *name = (const char *)node->name;

    if (strcmp(name, "machine") == 0)
        trd_diag_error(r->d, elem_loc(r, node),
                       "root element 'machine' needs xmlns=\"" TRD_XML_NS "\"");
    else if (strcmp(name, "topology") == 0)
        trd_diag_error(r->d, elem_loc(r, node),
                       "this is an hwloc topology (root element 'topology'), not a machine; "
                       "expected root element 'machine'");
    else
        trd_diag_error(r->d, elem_loc(r, node), "expected root element 'machine', got '%s'", name);
}

/* Schema validation errors, rewritten by kind: missing or stray attributes,
 * bad attribute values, unexpected or missing elements, stray text. */
static void on_schema_error(void *ctx, trd_xml_error e)
{
    struct xml_reader *r = ctx;
    xmlNodePtr node = e->node;
    char attr[128], qname[160], buf[160], what[256], text[512];

    if (e->level < XML_ERR_ERROR)
        return;
    r->nerrors++;
    if (node == NULL || node->type != XML_ELEMENT_NODE) {
        plain_message(e->message ? e->message : "invalid document", text, sizeof text);
        trd_diag_error(r->d, loc_line(r, e->line, 1), "%s", text);
        return;
    }
    elem_desc(node, what, sizeof what);

    switch (e->code) {
    case XML_SCHEMAV_CVC_COMPLEX_TYPE_4: /* required attribute missing */
        trd_diag_error(r->d, elem_loc(r, node), "expected attribute '%s' on element %s",
                       e->str1 ? e->str1 : "?", what);
        return;
    case XML_SCHEMAV_CVC_COMPLEX_TYPE_3_2_1: /* attribute not allowed */
    case XML_SCHEMAV_CVC_COMPLEX_TYPE_3_2_2:
        attr_qname(node, e->str1 ? e->str1 : "?", qname, sizeof qname);
        trd_diag_error(r->d, attr_loc(r, node, qname, 0),
                       "attribute '%s' is not allowed on element %s", qname, what);
        return;
    case XML_SCHEMAV_ELEMENT_CONTENT:
        report_content_error(r, node, e->message ? e->message : "");
        return;
    case XML_SCHEMAV_CVC_ELT_1: /* no declaration for the root */
        report_root_error(r, node);
        return;
    case XML_SCHEMAV_CVC_COMPLEX_TYPE_2_1:
    case XML_SCHEMAV_CVC_COMPLEX_TYPE_2_3:
        trd_diag_error(r->d, text_loc(r, node), "text is not allowed inside element %s", what);
        return;
    default:
        break;
    }

    if (e->message != NULL && message_attr(e->message, attr, sizeof attr) == 0) {
        /* A value that the attribute's type rejects. */
        xmlChar *value;

        if (r->last_node == node && strcmp(r->last_attr, attr) == 0) {
            r->nerrors--;
            return;
        }
        r->last_node = node;
        snprintf(r->last_attr, sizeof r->last_attr, "%s", attr);
        value = xmlGetNoNsProp(node, (const xmlChar *)attr);
        trd_diag_error(r->d, attr_loc(r, node, attr, 1), "attribute '%s': expected %s, got '%s'",
                       attr, attr_expectation(attr, buf, sizeof buf),
                       value ? (const char *)value : (e->str1 ? e->str1 : ""));
        xmlFree(value);
        return;
    }
    plain_message(e->message ? e->message : "invalid element", text, sizeof text);
    trd_diag_error(r->d, elem_loc(r, node), "element %s: %s", what, text);
}

/* Column (1-based) where needle starts on line, searching back from column
 * col: libxml2 reports where it noticed a problem, usually after it.
 * Returns col if needle is not there. */
static int find_before(struct xml_reader *r, int line, int col, const char *needle)
{
    size_t bol, nlen = strlen(needle);

    if (build_lines(r) != 0 || line < 1 || (size_t)line > r->nlines)
        return col;
    bol = r->bol[line - 1];
    for (int c = col - 1; c >= 1; c--) {
        size_t at = bol + (size_t)c - 1;
        if (at + nlen <= r->len && memcmp(r->text + at, needle, nlen) == 0)
            return c;
    }
    return col;
}

/* Well-formedness errors.  libxml2 stops at the first one and its follow-up
 * messages only repeat it, so only the first is kept. */
static void on_parse_error(void *ctx, trd_xml_error e)
{
    struct xml_reader *r = ctx;
    char text[512], needle[160];
    const char *s1 = e->str1 ? e->str1 : "";
    int line = e->line, col = e->int2 > 0 ? e->int2 : 1;

    if (e->level < XML_ERR_ERROR)
        return;
    if (r->nerrors++ > 0)
        return;
    if (line <= 0)
        line = 1;
    trd_loc loc = loc_line(r, line, col);

    switch (e->code) {
    case XML_ERR_DOCUMENT_EMPTY: {
        size_t i = 0;
        while (i < r->len && is_space(r->text[i]))
            i++;
        if (i == r->len)
            trd_diag_error(r->d, loc, "the file is empty; expected an XML document");
        else
            trd_diag_error(r->d, loc_at(r, i), "expected '<' to start an XML document");
        return;
    }
    case XML_ERR_DOCUMENT_END:
        trd_diag_error(r->d, loc, "extra content after the end of the root element");
        return;
    case XML_ERR_TAG_NAME_MISMATCH:
        snprintf(needle, sizeof needle, "</%s", e->str2 ? e->str2 : "");
        loc.col = find_before(r, line, col, needle);
        trd_diag_error(r->d, loc,
                       "expected '</%s>' to close the element opened at line %d, got "
                       "'</%s>'",
                       s1, e->int1, e->str2 ? e->str2 : "");
        return;
    case XML_ERR_TAG_NOT_FINISHED:
        trd_diag_error(r->d, loc, "end of file inside element '%s' opened at line %d", s1, e->int1);
        return;
    case XML_ERR_GT_REQUIRED:
        trd_diag_error(r->d, loc, "expected '>' or '/>' to end the start tag of element '%s'", s1);
        return;
    case XML_ERR_ATTRIBUTE_NOT_STARTED:
        trd_diag_error(r->d, loc, "expected '\"' to start the attribute value");
        return;
    case XML_ERR_ATTRIBUTE_WITHOUT_VALUE:
        trd_diag_error(r->d, loc, "attribute '%s' has no value; expected %s=\"...\"", s1, s1);
        return;
    case XML_ERR_ATTRIBUTE_REDEFINED:
        snprintf(needle, sizeof needle, "%s=", s1);
        loc.col = find_before(r, line, col, needle);
        trd_diag_error(r->d, loc, "attribute '%s' is given twice", s1);
        return;
    case XML_ERR_LT_IN_ATTRIBUTE:
        trd_diag_error(r->d, loc, "'<' is not allowed in an attribute value; write '&lt;'");
        return;
    case XML_ERR_UNDECLARED_ENTITY:
        snprintf(needle, sizeof needle, "&%s;", s1);
        loc.col = find_before(r, line, col, needle);
        trd_diag_error(r->d, loc, "unknown entity '&%s;'", s1);
        return;
    case XML_ERR_ENTITY_IS_EXTERNAL:
    case XML_ERR_EXT_ENTITY_STANDALONE:
        snprintf(needle, sizeof needle, "&%s;", s1);
        loc.col = find_before(r, line, col, needle);
        trd_diag_error(r->d, loc, "external entity '&%s;' is not allowed", s1);
        return;
    case XML_ERR_NAME_REQUIRED:
        if (e->message != NULL && strstr(e->message, "EntityRef") != NULL) {
            loc.col = find_before(r, line, col, "&");
            trd_diag_error(r->d, loc, "'&' must be written as '&amp;'");
        } else {
            trd_diag_error(r->d, loc, "expected an element name after '<'");
        }
        return;
    case XML_ERR_SPACE_REQUIRED:
        trd_diag_error(r->d, loc,
                       "malformed attributes; expected name=\"value\" pairs separated "
                       "by spaces");
        return;
    default:
        /* libxml2 stops at 256 nested elements unless told XML_PARSE_HUGE,
         * which would lift its other limits on hostile input too */
        if (e->message != NULL && strstr(e->message, "xcessive depth") != NULL) {
            trd_diag_error(r->d, loc,
                           "elements nested more than 256 deep (a switch tree that deep); an XML "
                           "topology takes at most that, the topology language any depth");
            return;
        }
        plain_message(e->message ? e->message : "malformed XML", text, sizeof text);
        trd_diag_error(r->d, loc, "malformed XML: %s", text);
        return;
    }
}

/* ---- Lowering to the model ------------------------------------------------ */

/* Copy of an attribute value (entities resolved), or NULL; free with xmlFree. */
static char *prop_dup(xmlNodePtr node, const char *name)
{
    return (char *)xmlGetNoNsProp(node, (const xmlChar *)name);
}

static int is_elem(xmlNodePtr n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static int note_rc(struct xml_reader *r, int rc)
{
    if (rc == TRD_ERR_NOMEM)
        r->nomem = 1;
    return rc;
}

static void read_link(struct xml_reader *r, xmlNodePtr node)
{
    /* times: latency, alpha_r [RM §3, Eq. 3]; bandwidths: bandwidth, injection */
    static const char *const attrs[4] = {"latency", "bandwidth", "injection", "alpha_r"};
    double v[4] = {0, 0, 0, 0};
    char *name = prop_dup(node, "name");
    int bad = 0;

    for (int i = 0; i < 4; i++) {
        char *s = prop_dup(node, attrs[i]);
        char buf[64];
        int rc;

        if (s == NULL)
            continue;
        rc = i == 0 || i == 3 ? trd_parse_time(s, &v[i]) : trd_parse_bandwidth(s, &v[i]);
        if (rc != 0 || !isfinite(v[i])) {
            trd_diag_error(r->d, attr_loc(r, node, attrs[i], 1),
                           "attribute '%s': expected %s, got '%s'", attrs[i],
                           attr_expectation(attrs[i], buf, sizeof buf), s);
            bad = 1;
        }
        xmlFree(s);
    }
    trd_link_cost cost = {v[0], v[1], v[2], v[3]};
    /* The model checks this too, at the element; here it is located at the
     * attribute [RM §3, Eq. 3]. */
    if (!bad && name != NULL && !TRD_ALPHA_R_OK(cost)) {
        trd_diag_error(r->d, attr_loc(r, node, "alpha_r", 1),
                       "link '%s': alpha_r must be >= 0 and at most the latency", name);
        bad = 1;
    }
    if (!bad && name != NULL)
        note_rc(r, trd_topo_add_link(r->t, r->d, elem_loc(r, node), name, cost));
    xmlFree(name);
}

/* Parse cores="8 8 4" into counts; the schema has checked the syntax. */
static int parse_counts(const char *s, int *counts, int max)
{
    int n = 0;

    while (*s != '\0') {
        char *end;
        long v;

        while (is_space(*s))
            s++;
        if (*s == '\0')
            break;
        v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > INT_MAX)
            return -1;
        if (n < max)
            counts[n] = (int)v;
        n++;
        s = end;
    }
    return n;
}

/* A path from the file relative to the directory of the topology file. */
static char *resolve_path(struct xml_reader *r, const char *path)
{
    size_t need;
    char *out;

    if (path[0] == '/' || r->dir == NULL || strcmp(r->dir, ".") == 0)
        return strdup(path);
    need = strlen(r->dir) + strlen(path) + 2;
    out = malloc(need);
    if (out != NULL)
        snprintf(out, need, "%s/%s", r->dir, path);
    return out;
}

static void read_nodetype(struct xml_reader *r, xmlNodePtr node)
{
    static const char *const shapes[] = {"synthetic", "hwloc", "local", "cores"};
    char *name = prop_dup(node, "name");
    char *plink = prop_dup(node, "package-link");
    char *nlink = prop_dup(node, "node-link");
    char *val = NULL, *path = NULL;
    char err[512], source[600];
    int cores[TRD_MAX_PACKAGES];
    int npackages = 0, shape = -1, errs = trd_diag_count(r->d);

    if (name == NULL) {
        r->nomem = 1; /* the schema requires it */
        goto out;
    }
    for (int i = 0; i < 4; i++) {
        if (xmlHasNsProp(node, (const xmlChar *)shapes[i], NULL) == NULL)
            continue;
        if (shape >= 0) {
            trd_diag_error(r->d, attr_loc(r, node, shapes[i], 0),
                           "attribute '%s': node type '%s' already takes its shape from '%s'",
                           shapes[i], name, shapes[shape]);
            continue;
        }
        shape = i;
    }
    if (shape < 0 && xmlHasNsProp(node, (const xmlChar *)"packages", NULL) != NULL) {
        trd_diag_error(r->d, attr_loc(r, node, "packages", 0),
                       "attribute 'packages' needs attribute 'cores'");
        goto out;
    }
    if (shape < 0) {
        trd_diag_error(r->d, elem_loc(r, node),
                       "node type '%s' has no shape; expected attribute 'synthetic', 'hwloc', "
                       "'local' or 'cores'",
                       name);
        goto out;
    }
    if (trd_diag_count(r->d) > errs)
        goto out;
    if (shape != 3 && xmlHasNsProp(node, (const xmlChar *)"packages", NULL) != NULL) {
        trd_diag_error(r->d, attr_loc(r, node, "packages", 0),
                       "attribute 'packages' goes with 'cores', not with '%s'", shapes[shape]);
        goto out;
    }

    val = prop_dup(node, shapes[shape]);
    switch (shape) {
    case 0: /* synthetic, hwloc, local: hwloc builds the shape when a node first uses the type */
    case 1:
    case 2: {
        static const char *const kinds[] = {"synthetic", "xml", "local"};
        path = shape == 1 ? resolve_path(r, val) : NULL;
        if (shape == 1 && path == NULL) {
            r->nomem = 1;
            goto out;
        }
        if (shape == 0)
            snprintf(source, sizeof source, "synthetic \"%s\"", val);
        else if (shape == 1)
            snprintf(source, sizeof source, "hwloc %s", val);
        else
            snprintf(source, sizeof source, "local");
        note_rc(r, trd_topo_add_nodetype_hwloc(
                       r->t, r->d, elem_loc(r, node), name, &trd_hwloc_nodetype_hook, kinds[shape],
                       shape == 1 ? path : (const char *)val, attr_loc(r, node, shapes[shape], 1),
                       plink, nlink, source));
        goto out;
    }
    default: { /* cores, with or without packages */
        char *pk = prop_dup(node, "packages");
        int n = parse_counts(val, cores, TRD_MAX_PACKAGES);

        npackages = pk != NULL ? atoi(pk) : n;
        if (n < 1) {
            trd_diag_error(r->d, attr_loc(r, node, "cores", 1),
                           "attribute 'cores': expected %s, got '%s'",
                           attr_expectation("cores", err, sizeof err), val);
        } else if (pk == NULL && n > TRD_MAX_PACKAGES) {
            trd_diag_error(r->d, attr_loc(r, node, "cores", 1),
                           "attribute 'cores': expected at most %d counts (one per package), "
                           "got %d",
                           TRD_MAX_PACKAGES, n);
        } else if (pk != NULL && n != 1 && n != npackages) {
            trd_diag_error(r->d, attr_loc(r, node, "cores", 1),
                           "attribute 'cores': expected 1 or %d counts (one per package), got %d",
                           npackages, n);
        } else if (n == 1) {
            for (int p = 1; p < npackages && p < TRD_MAX_PACKAGES; p++)
                cores[p] = cores[0];
        }
        /* Same wording as the DSL reader: "packages 2 cores 8", "cores 8 8 4". */
        size_t used = pk != NULL
                          ? (size_t)snprintf(source, sizeof source, "packages %d cores", npackages)
                          : (size_t)snprintf(source, sizeof source, "cores");
        for (int p = 0; p < n && p < TRD_MAX_PACKAGES && used < sizeof source; p++)
            used += (size_t)snprintf(source + used, sizeof source - used, " %d", cores[p]);
        xmlFree(pk);
        if (trd_diag_count(r->d) > errs)
            goto out;
        break;
    }
    }
    note_rc(r, trd_topo_add_nodetype(r->t, r->d, elem_loc(r, node), name, npackages, cores, plink,
                                     nlink, source));
out:
    free(path);
    xmlFree(val);
    xmlFree(name);
    xmlFree(plink);
    xmlFree(nlink);
}

static void read_nodes(struct xml_reader *r, xmlNodePtr node, int sw)
{
    char *names = prop_dup(node, "names");
    char *type = prop_dup(node, "type");
    char **list = NULL, err[256];
    int n = 0, errpos = 0;
    trd_loc loc = elem_loc(r, node);
    long off;

    if (names == NULL || type == NULL)
        goto out;
    if (trd_hostlist_expand(names, &list, &n, err, sizeof err, &errpos) != 0) {
        /* The schema's pattern keeps entities and newlines out of the value,
         * so errpos counts bytes in the source too. */
        off = attr_offset(r, node, "names", 1);
        trd_diag_error(r->d, off >= 0 ? loc_at(r, (size_t)off + (size_t)errpos) : loc,
                       "attribute 'names': %s", err);
        goto out;
    }
    for (int i = 0; i < n && !r->nomem; i++)
        note_rc(r, trd_topo_switch_add_node(r->t, r->d, loc, sw, list[i], type));
    trd_hostlist_free(list, n);
out:
    xmlFree(names);
    xmlFree(type);
}

/* A switch and everything below it; children in document order.  parent is
 * the id of the enclosing switch, or -1 for the root. */
static void read_switch(struct xml_reader *r, xmlNodePtr node, int parent)
{
    char *name = prop_dup(node, "name");
    char *link = prop_dup(node, "link");
    trd_loc loc = elem_loc(r, node);
    int sw = -1;

    if (name == NULL || link == NULL)
        goto out;
    if (note_rc(r, trd_topo_add_switch(r->t, r->d, loc, name, link, &sw)) != TRD_OK)
        goto out; /* duplicate name: its subtree would only repeat the error */
    if (parent >= 0 && note_rc(r, trd_topo_switch_add_child(r->t, r->d, loc, parent, name)))
        goto out;
    for (xmlNodePtr c = node->children; c != NULL && !r->nomem; c = c->next) {
        if (is_elem(c, "switch"))
            read_switch(r, c, sw);
        else if (is_elem(c, "nodes"))
            read_nodes(r, c, sw);
    }
out:
    xmlFree(name);
    xmlFree(link);
}

static void read_machine(struct xml_reader *r, xmlNodePtr root)
{
    char *name = prop_dup(root, "name");

    if (name != NULL)
        note_rc(r, trd_topo_set_name(r->t, name));
    xmlFree(name);
    for (xmlNodePtr c = root->children; c != NULL && !r->nomem; c = c->next) {
        if (is_elem(c, "link"))
            read_link(r, c);
        else if (is_elem(c, "nodetype"))
            read_nodetype(r, c);
        else if (is_elem(c, "switch"))
            read_switch(r, c, -1);
    }
}

/* ---- Entry points --------------------------------------------------------- */

/* SAX start-element hook: build the node as usual, then note in its _private
 * field where its start tag begins (libxml2 2.9 records no usable start
 * offset for elements with content).  The parser calls this at the end of
 * the start tag; '<' cannot occur inside a start tag, so the nearest '<'
 * before the current position opens it. */
static void on_start_element(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                             const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                             int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
    xmlParserCtxtPtr ctxt = ctx;
    struct xml_reader *r = ctxt->_private;
    xmlNodePtr before = ctxt->node;
    size_t pos;

    xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces, nb_attributes,
                          nb_defaulted, attributes);
    if (ctxt->node == NULL || ctxt->node == before || ctxt->input == NULL)
        return;
    pos = (size_t)ctxt->input->consumed + (size_t)(ctxt->input->cur - ctxt->input->base);
    if (pos >= r->len)
        pos = r->len - 1;
    while (pos > 0 && r->text[pos] != '<')
        pos--;
    if (r->text[pos] == '<')
        ctxt->node->_private = (void *)(uintptr_t)(pos + 1);
}

/* Compile the embedded schema.  NULL only if the build embedded a broken
 * schema or memory ran out. */
static xmlSchemaPtr compile_schema(void)
{
    xmlSchemaParserCtxtPtr pc;
    xmlSchemaPtr schema;

    pc = xmlSchemaNewMemParserCtxt(trd_topology_xsd, (int)trd_topology_xsd_len);
    if (pc == NULL)
        return NULL;
    xmlSchemaSetParserStructuredErrors(pc, trd_xml_ignore_structured, NULL);
    schema = xmlSchemaParse(pc);
    xmlSchemaFreeParserCtxt(pc);
    return schema;
}

static char *dir_of(const char *filename)
{
    const char *slash = filename != NULL ? strrchr(filename, '/') : NULL;
    char *dir;

    if (slash == NULL)
        return strdup(".");
    if (slash == filename)
        return strdup("/");
    dir = malloc((size_t)(slash - filename) + 1);
    if (dir != NULL) {
        memcpy(dir, filename, (size_t)(slash - filename));
        dir[slash - filename] = '\0';
    }
    return dir;
}

int trd_read_xml_string(trd_topo_t t, trd_diag *d, const char *filename, const char *text,
                        size_t len)
{
    struct xml_reader r;
    trd_xml_handlers saved;
    xmlSchemaPtr schema = NULL;
    xmlSchemaValidCtxtPtr vctx = NULL;
    xmlDocPtr doc = NULL;
    char *dir = NULL;
    int errs = trd_diag_count(d), rc = TRD_OK;

    memset(&r, 0, sizeof r);
    r.t = t;
    r.d = d;
    rc = trd__reader_begin(t, d, filename != NULL ? filename : "<input>", &text, len, &r.file);
    if (rc != TRD_OK)
        return rc;
    r.text = text;
    r.len = len;
    dir = dir_of(r.file);
    if (dir == NULL)
        return TRD_ERR_NOMEM;
    r.dir = dir;

    LIBXML_TEST_VERSION
    trd_xml_capture_handlers(&saved, &r, on_parse_error);
    if (len == 0) {
        trd_diag_error(d, loc_line(&r, 0, 0), "the file is empty; expected an XML document");
        rc = TRD_ERR_INPUT;
        goto out;
    }
    r.ctxt = xmlCreateMemoryParserCtxt(text, (int)len);
    if (r.ctxt == NULL || r.ctxt->sax == NULL) {
        rc = TRD_ERR_NOMEM;
        goto out;
    }
    /* No network, no external entities, no DTD loading. */
    xmlCtxtUseOptions(r.ctxt, XML_PARSE_NONET | XML_PARSE_NOCDATA | XML_PARSE_BIG_LINES);
    r.ctxt->linenumbers = 1;
    r.ctxt->_private = &r;
    r.ctxt->sax->startElementNs = on_start_element;
    xmlParseDocument(r.ctxt);
    doc = r.ctxt->myDoc;
    r.ctxt->myDoc = NULL;
    if (r.nerrors > 0 || !r.ctxt->wellFormed || doc == NULL) {
        if (r.nerrors == 0)
            trd_diag_error(d, loc_line(&r, 0, 0), "malformed XML");
        rc = TRD_ERR_INPUT;
        goto out;
    }

    xmlSetStructuredErrorFunc(&r, on_schema_error);
    schema = compile_schema();
    vctx = schema != NULL ? xmlSchemaNewValidCtxt(schema) : NULL;
    if (vctx == NULL) {
        trd_diag_error(d, loc_line(&r, 0, 0), "internal error: cannot compile the topology schema");
        rc = TRD_ERR_NOMEM;
        goto out;
    }
    xmlSchemaSetValidStructuredErrors(vctx, on_schema_error, &r);
    if (xmlSchemaValidateDoc(vctx, doc) != 0 || r.nerrors > 0) {
        if (r.nerrors == 0)
            trd_diag_error(d, loc_line(&r, 0, 0), "the file does not match the topology schema");
        rc = TRD_ERR_INPUT;
        goto out;
    }

    read_machine(&r, xmlDocGetRootElement(doc));
    if (r.nomem)
        rc = TRD_ERR_NOMEM;
    else if (trd_diag_count(d) > errs)
        rc = TRD_ERR_INPUT;

out:
    if (vctx != NULL)
        xmlSchemaFreeValidCtxt(vctx);
    if (schema != NULL)
        xmlSchemaFree(schema);
    if (doc != NULL)
        xmlFreeDoc(doc);
    if (r.ctxt != NULL)
        xmlFreeParserCtxt(r.ctxt);
    trd_xml_restore_handlers(&saved);
    free(r.bol);
    free(dir);
    return rc;
}

int trd_read_xml(trd_topo_t t, trd_diag *d, const char *path)
{
    return trd__read_file(t, d, path, trd_read_xml_string);
}
