/* S3's XML answers through libxml2 (s3xml.h). */
#include "local/objects/s3/s3xml.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

static bool named(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static xmlDoc *parse(const char *xml, size_t len)
{
	if (!xml || !len || len > (size_t)INT32_MAX)
		return NULL;
	return xmlReadMemory(xml, (int)len, "s3.xml", NULL,
	                     XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

/* The text of the child called name, or NULL (free with xmlFree). */
static xmlChar *child_text(const xmlNode *parent, const char *name)
{
	for (const xmlNode *c = parent->children; c; c = c->next)
		if (named(c, name))
			return xmlNodeGetContent(c);
	return NULL;
}

void s0__s3xml_error_code(const char *xml, size_t len, char *code, size_t cap)
{
	code[0] = '\0';
	xmlDoc *d = parse(xml, len);
	xmlNode *root = d ? xmlDocGetRootElement(d) : NULL;
	xmlChar *c = root && named(root, "Error") ? child_text(root, "Code") : NULL;
	if (c)
		s0__strlcpy(code, (const char *)c, cap);
	xmlFree(c);
	if (d)
		xmlFreeDoc(d);
}

int s0__s3xml_list(const char *xml, size_t len, s0__s3xml_key_cb cb, void *payload,
                   char **next_token, s0_error **err)
{
	*next_token = NULL;
	xmlDoc *d = parse(xml, len);
	xmlNode *root = d ? xmlDocGetRootElement(d) : NULL;
	if (!root || !named(root, "ListBucketResult")) {
		if (d)
			xmlFreeDoc(d);
		return s0__error_set(err, S0_EIO, "object_store",
		                     "S3 listing: the answer is not a ListBucketResult");
	}
	int rc = S0_OK;
	bool truncated = false;
	for (const xmlNode *c = root->children; rc == S0_OK && c; c = c->next) {
		if (named(c, "Contents")) {
			xmlChar *k = child_text(c, "Key"), *sz = child_text(c, "Size");
			if (k && cb((const char *)k, sz ? strtoull((const char *)sz, NULL, 10) : 0, payload))
				rc = s0__error_set(err, S0_EUSER, NULL, "object listing stopped by its callback");
			xmlFree(k);
			xmlFree(sz);
		} else if (named(c, "IsTruncated")) {
			xmlChar *t = xmlNodeGetContent(c);
			truncated = t && !strcmp((const char *)t, "true");
			xmlFree(t);
		} else if (named(c, "NextContinuationToken")) {
			xmlChar *t = xmlNodeGetContent(c);
			free(*next_token);
			*next_token = t ? s0__strdup((const char *)t) : NULL;
			xmlFree(t);
		}
	}
	xmlFreeDoc(d);
	if (rc == S0_OK && !truncated) {
		free(*next_token);
		*next_token = NULL;
	}
	if (rc == S0_OK && truncated && !*next_token)
		rc = s0__error_set(err, S0_EIO, "object_store",
		                   "S3 listing: truncated page without a continuation token");
	if (rc < 0) {
		free(*next_token);
		*next_token = NULL;
	}
	return rc;
}
