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

#endif
