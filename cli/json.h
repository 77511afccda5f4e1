/* SPDX-License-Identifier: MIT */
/*
 * JSON output of the iwx commands (RFC 8259). A small emitter: keys and values in
 * order, commas and indentation kept here. A container opened "flat" stays on one line
 * (with everything inside it), so that a listing is one object a line.
 */
#ifndef IWX_CLI_JSON_H
#define IWX_CLI_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_DEPTH	8

struct json {
	FILE		*f;
	int		depth;
	unsigned	flat;		/* bit d: the container at depth d is on one line */
	bool		first;		/* nothing in the current container yet */
	bool		keyed;		/* a key was written: its value follows without a comma */
};

/* Open ('{' or '[') and close a container; flat keeps it on one line. */
void json_open(struct json *j, char c, bool flat);
void json_close(struct json *j, char c);

/* The key of a member whose value is a container: json_open follows. */
void json_key(struct json *j, const char *key);

/* "key": value members of the current object. */
void json_str(struct json *j, const char *key, const char *v);
void json_u64(struct json *j, const char *key, uint64_t v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* A number the caller formatted (e.g. "99.5"), written as it is. */
void json_number(struct json *j, const char *key, const char *number);
/* Hexadecimal in a string, as iwx decode writes STags and tagged offsets. */
void json_hex(struct json *j, const char *key, uint64_t v, int digits);

/* A string element of the current array. */
void json_elem_str(struct json *j, const char *v);

/* str as a JSON string, quoted: escapes where needed, a byte not in UTF-8 becomes U+FFFD. */
void json_escape(FILE *f, const char *str);

#endif /* IWX_CLI_JSON_H */
