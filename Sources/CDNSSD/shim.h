// Avahi's libdns_sd compatibility layer (DNS-SD discovery; used from the network layer).
#include <dns_sd.h>
#include <avahi-common/malloc.h>
#include <stdlib.h>

// Avahi 0.8's compat layer allocates a DNSServiceRef with avahi_new (malloc) and sets only the callback of
// its own kind. When the daemon goes away, its client callback calls the first callback that is not NULL
// among the browse, resolve, domain and query ones: for a resolve or a query-record reference, whatever the
// heap left in the fields before its own, a jump to a stray address (seen: a node crashed when its daemon
// was stopped while it resolved a service). An allocator that zero-fills makes those fields NULL, so the
// reference's own callback hears the error.
static inline void *dongne_avahi_zeroed_malloc(size_t size) { return calloc(1, size); }
static inline void *dongne_avahi_calloc(size_t count, size_t size) { return calloc(count, size); }
static const AvahiAllocator dongne_avahi_zeroing_allocator = {
    dongne_avahi_zeroed_malloc, free, realloc, dongne_avahi_calloc,
};

// Makes every later allocation of libavahi-common zero-filled. Call before the first DNS-SD call.
static inline void dongne_avahi_zero_fill_allocations(void) {
    avahi_set_allocator(&dongne_avahi_zeroing_allocator);
}
