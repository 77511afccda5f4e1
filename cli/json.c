// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "json.h"

static void json_sep(struct json *j)
{
	if (j->keyed) {
		j->keyed = false;
		return;
	}
	if (!j->depth)
		return;
	if (!j->first)
		fputc(',', j->f);
	if (j->flat & (1u << j->depth)) {
		if (!j->first)
			fputc(' ', j->f);
	} else {
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	}
	j->first = false;
}

void json_open(struct json *j, char c, bool flat)
{
	json_sep(j);
	fputc(c, j->f);
	if (j->depth + 1 >= JSON_DEPTH)
		abort();	/* a bug here, not in the input */
	j->depth++;
	if (flat || (j->flat & (1u << (j->depth - 1))))
		j->flat |= 1u << j->depth;
	else
		j->flat &= ~(1u << j->depth);
	j->first = true;
}

void json_close(struct json *j, char c)
{
	if (!j->first && !(j->flat & (1u << j->depth)))
		fprintf(j->f, "\n%*s", 2 * (j->depth - 1), "");
	fputc(c, j->f);
	j->depth--;
	j->first = false;
	if (!j->depth)
		fputc('\n', j->f);
}

/* Bytes of the valid UTF-8 sequence at s (RFC 3629), 0 if none starts there. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (*s >= 0xc2 && *s <= 0xdf)
		n = 2;
	else if (*s >= 0xe0 && *s <= 0xef)
		n = 3;
	else if (*s >= 0xf0 && *s <= 0xf4)
		n = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (*s == 0xe0)
		lo = 0xa0;
	else if (*s == 0xed)
		hi = 0x9f;
	else if (*s == 0xf0)
		lo = 0x90;
	else if (*s == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void json_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		size_t n;

		switch (*s) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*s < 0x20) {
				fprintf(f, "\\u%04x", *s);
			} else if (*s < 0x80) {
				fputc(*s, f);
			} else if ((n = utf8_len(s))) {
				fwrite(s, 1, n, f);
				s += n;
				continue;
			} else {
				fputs("\\ufffd", f);
			}
		}
		s++;
	}
	fputc('"', f);
}

static void json_string(struct json *j, const char *str)
{
	json_escape(j->f, str);
}

void json_key(struct json *j, const char *key)
{
	json_sep(j);
	json_string(j, key);
	fputs(": ", j->f);
	j->keyed = true;
}

void json_str(struct json *j, const char *key, const char *v)
{
	json_key(j, key);
	json_sep(j);
	json_string(j, v);
}

/* An array element. */
void json_elem_str(struct json *j, const char *v)
{
	json_sep(j);
	json_string(j, v);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_sep(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	json_key(j, key);
	json_sep(j);
	fputs(v ? "true" : "false", j->f);
}

void json_number(struct json *j, const char *key, const char *number)
{
	json_key(j, key);
	json_sep(j);
	fputs(number, j->f);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	json_sep(j);
	fputs("null", j->f);
}

/* Hexadecimal in a string, as iwx decode writes STags and tagged offsets. */
void json_hex(struct json *j, const char *key, uint64_t v, int digits)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%0*" PRIx64, digits, v);
	json_str(j, key, buf);
}

