#ifndef DONGNE_CSQLITE_SHIM_H
#define DONGNE_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro that casts -1 to a function pointer, which Swift cannot import.
// Binding with it makes SQLite copy the bytes before the call returns, so Swift buffers may be temporary.
static inline sqlite3_destructor_type dongne_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// sqlite3_config is variadic, which Swift cannot call. Without memory statistics (which no part of dongne
// reads), SQLite's allocations skip the process-wide mutex that counts them: every connection allocates often,
// since Debian builds SQLite without its lookaside allocator (SQLITE_OMIT_LOOKASIDE). Only takes effect before
// SQLite initializes; SQLITE_MISUSE after.
static inline int dongne_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

#endif
