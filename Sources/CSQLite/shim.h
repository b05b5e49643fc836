#ifndef DONGNE_CSQLITE_SHIM_H
#define DONGNE_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro that casts -1 to a function pointer, which Swift cannot import.
// Binding with it makes SQLite copy the bytes before the call returns, so Swift buffers may be temporary.
static inline sqlite3_destructor_type dongne_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
