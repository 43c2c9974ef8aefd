/* The libxml2 plumbing the XML readers share: error handlers and the root
 * element of a document (xml_common.h). */
#include "xml_common.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlreader.h>

#include "trd_status.h"

/* ---- Silencing libxml2 ---------------------------------------------------- */

static void ignore_generic(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

void trd_xml_ignore_structured(void *ctx, trd_xml_error e)
{
    (void)ctx;
    (void)e;
}

void trd_xml_capture_handlers(trd_xml_handlers *s, void *ctx, xmlStructuredErrorFunc fn)
{
    s->serror = xmlStructuredError;
    s->sctx = xmlStructuredErrorContext;
    s->gerror = xmlGenericError;
    s->gctx = xmlGenericErrorContext;
    xmlSetGenericErrorFunc(NULL, ignore_generic);
    xmlSetStructuredErrorFunc(ctx, fn);
}

void trd_xml_restore_handlers(const trd_xml_handlers *s)
{
    xmlSetStructuredErrorFunc(s->sctx, s->serror);
    xmlSetGenericErrorFunc(s->gctx, s->gerror);
}

/* ---- The root element ----------------------------------------------------- */

/* The root element's local name and version of the document reader reads
 * (NULL: it could not be opened); frees reader.  As trd_xml_root(). */
static int root_of(xmlTextReaderPtr reader, char *buf, size_t len, char *version, size_t vlen)
{
    int rc = TRD_ERR_INPUT;
    if (reader == NULL)
        return rc;
    while (xmlTextReaderRead(reader) == 1) {
        if (xmlTextReaderNodeType(reader) == XML_READER_TYPE_ELEMENT) {
            const xmlChar *name = xmlTextReaderConstLocalName(reader);
            if (name != NULL && strlen((const char *)name) < len) {
                snprintf(buf, len, "%s", (const char *)name);
                rc = TRD_OK;
            }
            xmlChar *v =
                version && vlen ? xmlTextReaderGetAttribute(reader, BAD_CAST "version") : NULL;
            if (v != NULL && strlen((const char *)v) < vlen)
                snprintf(version, vlen, "%s", (const char *)v);
            xmlFree(v);
            break;
        }
    }
    xmlFreeTextReader(reader);
    return rc;
}

/* trd_xml_root() of the file at path, or of the len bytes at text when text
 * is not NULL. */
static int xml_root(const char *path, const char *text, size_t len, char *buf, size_t blen,
                    char *version, size_t vlen)
{
    const int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
    trd_xml_handlers saved;
    int rc;

    if (blen == 0 || (text != NULL && len > INT_MAX))
        return TRD_ERR_INPUT;
    buf[0] = '\0';
    if (version && vlen)
        version[0] = '\0';
    trd_xml_capture_handlers(&saved, NULL, trd_xml_ignore_structured);
    rc = root_of(text != NULL ? xmlReaderForMemory(text, (int)len, path, NULL, opts)
                              : xmlReaderForFile(path, NULL, opts),
                 buf, blen, version, vlen);
    trd_xml_restore_handlers(&saved);
    return rc;
}

int trd_xml_root(const char *path, char *buf, size_t len, char *version, size_t vlen)
{
    return xml_root(path, NULL, 0, buf, len, version, vlen);
}

int trd_xml_root_text(const char *text, size_t len, char *buf, size_t blen, char *version,
                      size_t vlen)
{
    return xml_root(NULL, text, len, buf, blen, version, vlen);
}

int trd_xml_root_name(const char *path, char *buf, size_t len)
{
    return trd_xml_root(path, buf, len, NULL, 0);
}
