/*
 * names.c: origins and key names on document lines (names.h).
 */
#include "schema/names.h"

#include "schema/note.h"

#include <string.h>

int names_origin_is_valid(const char *origin, size_t len)
{
	if (len == 0 || len > NAMES_ORIGIN_MAX)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (origin[i] <= 0x20 || origin[i] > 0x7e || origin[i] == '+')
			return 0;
	}
	return 1;
}

int names_key_name_is_ascii(const char *name, size_t len)
{
	if (!note_name_is_valid(name, len))
		return 0;
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)name[i] > 0x7e)
			return 0;
	}
	return 1;
}

int names_origin_field_is_valid(const char *field, size_t cap)
{
	size_t len = strnlen(field, cap);
	return len < cap && names_origin_is_valid(field, len);
}

int names_key_name_field_is_ascii(const char *field, size_t cap)
{
	size_t len = strnlen(field, cap);
	return len < cap && names_key_name_is_ascii(field, len);
}
