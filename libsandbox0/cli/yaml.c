/*
 * YAML through libyaml: -o yaml re-encodes the JSON result (like the
 * official CLI, which marshals to JSON and then to YAML with sorted keys and
 * a 2-space indent), and config files (-c, -f) are read as YAML, which also
 * accepts JSON.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli.h"
#include "yaml_in.h"

/* ---- output ---- */

/* Would a plain scalar with this text read back as something else than a string? */
static bool needs_quotes(const char *s, size_t len)
{
	static const char *const special[] = {"y", "yes", "n", "no", "true", "false", "on",
	                                      "off", "null", "~", ".inf", "-.inf", "+.inf", ".nan"};
	if (!len)
		return true;
	for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
		if (strlen(special[i]) == len && !strncasecmp(s, special[i], len))
			return true;
	/* numbers, timestamps and dates begin with a digit (maybe after a sign or dot) */
	const char *p = s;
	if ((*p == '-' || *p == '+' || *p == '.') && len > 1)
		p++;
	return isdigit((unsigned char)*p) != 0;
}

static int scalar(yaml_emitter_t *em, const char *text, size_t len, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1,
	                                  style))
		return -1;
	return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const cj *const *)a)->string, (*(const cj *const *)b)->string);
}

static int emit_node(yaml_emitter_t *em, const cj *v)
{
	yaml_event_t ev;
	char num[32];
	const char *s = v->valuestring ? v->valuestring : "";
	size_t n = 0;
	switch (v->type & 0xff) {
	case cJSON_NULL:
		return scalar(em, "null", 4, YAML_PLAIN_SCALAR_STYLE);
	case cJSON_True:
		return scalar(em, "true", 4, YAML_PLAIN_SCALAR_STYLE);
	case cJSON_False:
		return scalar(em, "false", 5, YAML_PLAIN_SCALAR_STYLE);
	case cJSON_Number:
		s = cj_num_text(v, num);
		return scalar(em, s, strlen(s), YAML_PLAIN_SCALAR_STYLE);
	case cJSON_String:
		if (strchr(s, '\n'))
			return scalar(em, s, strlen(s), YAML_LITERAL_SCALAR_STYLE);
		return scalar(em, s, strlen(s),
		              needs_quotes(s, strlen(s)) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
		                                         : YAML_ANY_SCALAR_STYLE);
	case cJSON_Array:
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		                                          v->child ? YAML_BLOCK_SEQUENCE_STYLE
		                                                   : YAML_FLOW_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		for (const cj *c = v->child; c; c = c->next)
			if (emit_node(em, c) < 0)
				return -1;
		yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev) ? 0 : -1;
	case cJSON_Object: {
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		                                         v->child ? YAML_BLOCK_MAPPING_STYLE
		                                                  : YAML_FLOW_MAPPING_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		/* sorted keys, as the official CLI's YAML encoder writes a generic map */
		for (const cj *c = v->child; c; c = c->next)
			n++;
		const cj **order = xmalloc(n * sizeof *order);
		n = 0;
		for (const cj *c = v->child; c; c = c->next)
			order[n++] = c;
		qsort(order, n, sizeof order[0], by_key);
		for (size_t i = 0; i < n; i++) {
			const char *k = order[i]->string;
			if (scalar(em, k, strlen(k),
			           needs_quotes(k, strlen(k)) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
			                                      : YAML_ANY_SCALAR_STYLE) < 0 ||
			    emit_node(em, order[i]) < 0) {
				free(order);
				return -1;
			}
		}
		free(order);
		yaml_mapping_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev) ? 0 : -1;
	}
	}
	return -1;
}

int out_yaml(const cj *v, FILE *f)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int rc = -1;
	if (!yaml_emitter_initialize(&em))
		return cli_failf("formatting output", "libyaml could not start");
	yaml_emitter_set_output_file(&em, f);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_indent(&em, 2);
	yaml_emitter_set_width(&em, -1);
	if (yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
	    yaml_emitter_emit(&em, &ev) &&
	    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
	    yaml_emitter_emit(&em, &ev) && emit_node(&em, v) == 0 &&
	    yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
	    yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev) &&
	    yaml_emitter_flush(&em))
		rc = 0;
	if (rc < 0)
		cli_failf("formatting output", "libyaml: %s", em.problem ? em.problem : "emit failed");
	yaml_emitter_delete(&em);
	fflush(f);
	return rc == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* ---- input ---- */

/* A plain scalar that is a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool is_number(const char *s)
{
	const char *p = s;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == 0;
}

static cj *convert(yaml_document_t *doc, yaml_node_t *n, int depth)
{
	if (!n || depth > 64)
		return NULL;
	switch (n->type) {
	case YAML_SCALAR_NODE: {
		const char *s = (const char *)n->data.scalar.value;
		size_t len = n->data.scalar.length;
		if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
			if (!len || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
			    !strcmp(s, "NULL"))
				return cj_null();
			if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
				return cj_bool(true);
			if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
				return cj_bool(false);
			if (is_number(s))
				return cj_num(strtod(s, NULL));
		}
		return cj_str(s);
	}
	case YAML_SEQUENCE_NODE: {
		cj *a = cj_array();
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			cj *item = convert(doc, yaml_document_get_node(doc, *it), depth + 1);
			if (!item) {
				cj_free(a);
				return NULL;
			}
			cj_push(a, item);
		}
		return a;
	}
	case YAML_MAPPING_NODE: {
		cj *o = cj_object();
		for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
		     p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			cj *val = convert(doc, yaml_document_get_node(doc, p->value), depth + 1);
			if (!k || k->type != YAML_SCALAR_NODE || !val) {
				cj_free(val);
				cj_free(o);
				return NULL;
			}
			cj_set(o, (const char *)k->data.scalar.value, val);
		}
		return o;
	}
	default:
		return NULL;
	}
}

cj *yaml_load(const char *text, size_t len, char **why_out)
{
	yaml_parser_t p;
	yaml_document_t doc;
	/* JSON first (cJSON); YAML otherwise */
	cj *v = cj_parse(text, len, NULL);
	if (v)
		return v;
	if (!yaml_parser_initialize(&p)) {
		*why_out = xstrdup("libyaml could not start");
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &doc)) {
		*why_out = xasprintf("%s at line %zu, column %zu",
		                     p.problem ? p.problem : "invalid YAML",
		                     p.problem_mark.line + 1, p.problem_mark.column + 1);
		yaml_parser_delete(&p);
		return NULL;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	v = root ? convert(&doc, root, 0) : cj_object();
	if (!v)
		*why_out = xstrdup("unsupported YAML (keys must be scalars; nesting at most 64)");
	yaml_document_delete(&doc);
	yaml_parser_delete(&p);
	return v;
}
