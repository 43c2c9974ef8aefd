/* The libxml2 plumbing the XML readers share (gen/read/xml_common.c): the
 * global error handlers silenced around a parse and given back after it, and
 * the root element of a document, which tells a treeduce machine from an
 * hwloc dump before either reader runs.  Below read_xml.c and
 * hwloc_nodetype.c, which both stand on it. */
#ifndef TRD_XML_COMMON_H
#define TRD_XML_COMMON_H

#include <stddef.h>

#include <libxml/xmlerror.h>

/* Structured error handlers take a const error from libxml2 2.12 on. */
#if LIBXML_VERSION >= 21200
typedef const xmlError *trd_xml_error;
#else
typedef xmlError *trd_xml_error;
#endif

/* libxml2's global handlers, saved by trd_xml_capture_handlers. */
typedef struct trd_xml_handlers {
    xmlStructuredErrorFunc serror;
    void *sctx;
    xmlGenericErrorFunc gerror;
    void *gctx;
} trd_xml_handlers;

/* Save libxml2's global error handlers into s, then send its structured
 * errors to fn(ctx, error) and drop its generic ones; undo with
 * trd_xml_restore_handlers, so that callers that use libxml2 themselves
 * keep theirs.  Not thread-safe (libxml2's handlers are global). */
void trd_xml_capture_handlers(trd_xml_handlers *s, void *ctx, xmlStructuredErrorFunc fn);
/* Put back the handlers saved in s. */
void trd_xml_restore_handlers(const trd_xml_handlers *s);
/* A structured error handler that drops every error. */
void trd_xml_ignore_structured(void *ctx, trd_xml_error e);

/* Local name of the root element of the XML file at path into buf (len
 * bytes): "machine" for a treeduce topology, "topology" for an
 * `lstopo --of xml` dump.  Reports nothing.
 * Returns TRD_OK; TRD_ERR_INPUT when the file cannot be read, is not XML, or
 *         the name does not fit in buf. */
int trd_xml_root_name(const char *path, char *buf, size_t len);
/* The same, and the root's "version" attribute into version (vlen bytes;
 * "" when it has none or it does not fit): "2.0" or "3.0" for an hwloc
 * dump, which hwloc refuses without naming it.  Returns as
 * trd_xml_root_name(). */
int trd_xml_root(const char *path, char *buf, size_t len, char *version, size_t vlen);
/* trd_xml_root() of the len bytes at text, for a file already read (a FIFO
 * cannot be read twice).  Returns as trd_xml_root_name(). */
int trd_xml_root_text(const char *text, size_t len, char *buf, size_t blen, char *version,
                      size_t vlen);

#endif
