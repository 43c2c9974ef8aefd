/* SHA-256 (FIPS 180-4) for the input hash in generated banners. */
#ifndef TRD_SHA256_H
#define TRD_SHA256_H

#include <stddef.h>
#include <stdint.h>

/* Hash len bytes of data; writes 64 lowercase hex digits and a NUL to hex. */
void trd_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
