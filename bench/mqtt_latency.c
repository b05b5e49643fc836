/* The broker side of `scripts/bench-lan`: pub/sub done the way a user would do it with mosquitto, QoS 0.
 *
 *   mqtt_latency sub HOST COUNT OUT     subscribes to dongne/bench on HOST, writes one latency (ns) per line
 *                                       to OUT for each of COUNT messages (gives up after 60 s)
 *   mqtt_latency pub HOST COUNT GAP_US  publishes COUNT messages of 300 bytes, GAP_US microseconds apart
 *
 * Each payload starts with the send time on CLOCK_BOOTTIME (the clock Swift's ContinuousClock reads, shared by
 * every network namespace of the machine), so a receiver's latency is its receive time minus that. */
#include <errno.h>
#include <mosquitto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int wanted, received;
static FILE *out;

static void on_message(struct mosquitto *m, void *u, const struct mosquitto_message *message) {
    (void)m; (void)u;
    long long sent = 0;
    if (message->payloadlen > 0 && sscanf((const char *)message->payload, "%lld", &sent) == 1) {
        fprintf(out, "%lld\n", now_ns() - sent);
        received++;
    }
}

static char ready_path[4096];

static void on_subscribe(struct mosquitto *m, void *u, int mid, int count, const int *granted) {
    (void)m; (void)u; (void)mid; (void)count; (void)granted;
    FILE *ready = fopen(ready_path, "w");  /* tells the orchestrator this subscriber is listening */
    if (ready) fclose(ready);
}

static void on_connect(struct mosquitto *m, void *u, int rc) {
    (void)u;
    if (rc == 0) mosquitto_subscribe(m, NULL, "dongne/bench", 0);
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: mqtt_latency sub|pub HOST COUNT OUT|GAP_US\n"); return 2; }
    mosquitto_lib_init();
    struct mosquitto *m = mosquitto_new(NULL, true, NULL);
    /* As a user after low latency would: no Nagle delay on the client's socket (the broker's is set too). */
    mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1);
    wanted = atoi(argv[3]);
    if (strcmp(argv[1], "sub") == 0) {
        out = fopen(argv[4], "w");
        mosquitto_connect_callback_set(m, on_connect);
        mosquitto_message_callback_set(m, on_message);
        mosquitto_subscribe_callback_set(m, on_subscribe);
        snprintf(ready_path, sizeof ready_path, "%s.ready", argv[4]);
        if (mosquitto_connect(m, argv[2], 1883, 30) != MOSQ_ERR_SUCCESS) { perror("connect"); return 1; }
        long long deadline = now_ns() + 60000000000LL;
        while (received < wanted && now_ns() < deadline) mosquitto_loop(m, 100, 1);
        fclose(out);
    } else {
        if (mosquitto_connect(m, argv[2], 1883, 30) != MOSQ_ERR_SUCCESS) { perror("connect"); return 1; }
        mosquitto_loop_start(m);
        char payload[300];
        // Sends on a fixed schedule (start + i × gap), as the dongne sender does, whatever a publish costs.
        struct timespec next;
        clock_gettime(CLOCK_MONOTONIC, &next);
        long gap_ns = atol(argv[4]) * 1000L;
        for (int i = 0; i < wanted; i++) {
            memset(payload, 'x', sizeof payload);
            int n = snprintf(payload, sizeof payload, "%lld %d ", now_ns(), i);
            payload[n] = 'x';
            mosquitto_publish(m, NULL, "dongne/bench", sizeof payload, payload, 0, false);
            next.tv_nsec += gap_ns;
            while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec += 1; }
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR) {}
        }
        sleep(1);
        mosquitto_loop_stop(m, true);
    }
    mosquitto_destroy(m);
    mosquitto_lib_cleanup();
    return 0;
}
