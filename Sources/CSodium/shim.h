#ifndef DONGNE_CSODIUM_SHIM_H
#define DONGNE_CSODIUM_SHIM_H
#include <sodium.h>

// BLAKE2b-256 of prefix ‖ message without joining them first. crypto_generichash_state is declared with
// CRYPTO_ALIGN(64), which Swift does not import, so the streaming state lives on the C stack here instead.
static inline int dongne_blake2b256_prefixed(unsigned char *out, const unsigned char *prefix,
                                             unsigned long long prefix_length, const unsigned char *message,
                                             unsigned long long message_length) {
    crypto_generichash_state state;
    if (crypto_generichash_init(&state, NULL, 0, 32) != 0) return -1;
    if (crypto_generichash_update(&state, prefix, prefix_length) != 0) return -1;
    if (crypto_generichash_update(&state, message, message_length) != 0) return -1;
    return crypto_generichash_final(&state, out, 32);
}

// Leading zero bits of a 32-byte digest, most significant bit of the first byte first.
static inline int dongne_leading_zero_bits(const unsigned char *digest) {
    int bits = 0;
    for (int i = 0; i < 32; i++) {
        if (digest[i] == 0) { bits += 8; continue; }
        for (unsigned char byte = digest[i]; (byte & 0x80) == 0; byte <<= 1) bits++;
        break;
    }
    return bits;
}

// Searches counters first, first + stride, ... (count of them) for one whose 8 big-endian bytes, written at
// the end of `input` (input_length bytes, the last 8 of them overwritten), make BLAKE2b-256(input) start with
// at least `bits` zero bits. Returns 1 and the counter in *found, or 0. A loop in C: mining runs millions of
// hashes, and this keeps each one free of allocation.
static inline int dongne_stamp_search(unsigned char *input, unsigned long long input_length,
                                      unsigned long long first, unsigned long long stride,
                                      unsigned long long count, int bits, unsigned long long *found) {
    unsigned char digest[32];
    unsigned long long counter = first;
    for (unsigned long long tried = 0; tried < count; tried++, counter += stride) {
        for (int i = 0; i < 8; i++) input[input_length - 1 - i] = (unsigned char)(counter >> (8 * i));
        if (crypto_generichash(digest, 32, input, input_length, NULL, 0) != 0) return 0;
        if (dongne_leading_zero_bits(digest) >= bits) { *found = counter; return 1; }
    }
    return 0;
}

#endif
