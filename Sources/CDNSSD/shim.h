// Avahi's libdns_sd compatibility layer (DNS-SD discovery; used from the network layer).
#include <dns_sd.h>
