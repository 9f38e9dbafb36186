/*
 * detail.h: how verify/ writes its detail sentences. Internal to the module: the other modules
 * see only the `char *detail, size_t detail_cap` of each function (verify.h).
 */
#ifndef DIRAUTH_VERIFY_DETAIL_H
#define DIRAUTH_VERIFY_DETAIL_H

#include <stddef.h>

/* Writes the formatted sentence into detail (capacity cap), truncating; nothing when detail is
 * NULL or cap is 0. */
void verify_detail_set(char *detail, size_t cap, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Empties detail (when there is one). */
void verify_detail_clear(char *detail, size_t cap);

#endif
