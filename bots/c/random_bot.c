/*
 * A random bot in C for any game of the card referee (protocol v1, see protocol/PROTOCOL.md).
 *
 * It connects one ZeroMQ DEALER socket to $REFEREE_ENDPOINT, says hello with $REFEREE_TOKEN, and answers
 * every request with a uniformly random element of legal_actions, re-packed verbatim from the request.
 * Messages it does not understand are ignored (with a note on stderr). It exits on bye (status 0), on
 * refused (2), when the referee is gone (3: its parent process died, or a long silence), or without an
 * endpoint (4).
 */
#include <msgpack.h>
#include <zmq.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROTOCOL_VERSION 1
#define TICK_MS 1000
#define SILENCE_TICKS 3600
#define LINGER_MS 200
#define MAX_FRAME_BYTES (1 << 20)

enum exit_status { EXIT_BYE = 0, EXIT_REFUSED = 2, EXIT_REFEREE_GONE = 3, EXIT_NO_ENDPOINT = 4 };

static void pack_string(msgpack_packer *pk, const char *text) {
    size_t length = strlen(text);
    msgpack_pack_str(pk, length);
    msgpack_pack_str_body(pk, text, length);
}

/* The value of `key` in a msgpack map, or NULL. */
static const msgpack_object *map_get(const msgpack_object *map, const char *key) {
    size_t key_length = strlen(key);
    if (map->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == key_length &&
            memcmp(k->via.str.ptr, key, key_length) == 0)
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

static int string_is(const msgpack_object *value, const char *text) {
    return value != NULL && value->type == MSGPACK_OBJECT_STR && value->via.str.size == strlen(text) &&
           memcmp(value->via.str.ptr, text, value->via.str.size) == 0;
}

static int send_buffer(void *socket, const msgpack_sbuffer *buffer) {
    return zmq_send(socket, buffer->data, buffer->size, 0) < 0 ? -1 : 0;
}

static int send_hello(void *socket, const char *token) {
    msgpack_sbuffer buffer;
    msgpack_packer pk;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 5);
    pack_string(&pk, "type");
    pack_string(&pk, "hello");
    pack_string(&pk, "protocol");
    msgpack_pack_int(&pk, PROTOCOL_VERSION);
    pack_string(&pk, "token");
    pack_string(&pk, token);
    pack_string(&pk, "name");
    pack_string(&pk, "c-random");
    pack_string(&pk, "version");
    pack_string(&pk, "1");
    int status = send_buffer(socket, &buffer);
    msgpack_sbuffer_destroy(&buffer);
    return status;
}

/* Answer a request with a random legal action; a malformed request is ignored. */
static void answer(void *socket, const msgpack_object *request) {
    const msgpack_object *id = map_get(request, "id");
    const msgpack_object *legal = map_get(request, "legal_actions");
    if (id == NULL || (id->type != MSGPACK_OBJECT_POSITIVE_INTEGER && id->type != MSGPACK_OBJECT_NEGATIVE_INTEGER) ||
        legal == NULL || legal->type != MSGPACK_OBJECT_ARRAY || legal->via.array.size == 0) {
        fprintf(stderr, "c-random: ignored a request without an integer id and legal actions\n");
        return;
    }
    const msgpack_object *choice = &legal->via.array.ptr[(uint32_t)rand() % legal->via.array.size];
    msgpack_sbuffer buffer;
    msgpack_packer pk;
    msgpack_sbuffer_init(&buffer);
    msgpack_packer_init(&pk, &buffer, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 3);
    pack_string(&pk, "type");
    pack_string(&pk, "action");
    pack_string(&pk, "id");
    msgpack_pack_object(&pk, *id);
    pack_string(&pk, "action");
    msgpack_pack_object(&pk, *choice);
    if (send_buffer(socket, &buffer) != 0) fprintf(stderr, "c-random: send failed: %s\n", zmq_strerror(errno));
    msgpack_sbuffer_destroy(&buffer);
}

static void print_reason(const msgpack_object *message) {
    const msgpack_object *reason = map_get(message, "reason");
    if (reason != NULL && reason->type == MSGPACK_OBJECT_STR)
        fprintf(stderr, "c-random: the referee refused this bot: %.*s\n", (int)reason->via.str.size, reason->via.str.ptr);
    else
        fprintf(stderr, "c-random: the referee refused this bot\n");
}

/* Handle one frame; returns an exit status when the session is over, -1 otherwise. */
static int handle(void *socket, const char *frame, size_t size) {
    msgpack_unpacked unpacked;
    size_t offset = 0;
    int end = -1;
    msgpack_unpacked_init(&unpacked);
    if (msgpack_unpack_next(&unpacked, frame, size, &offset) != MSGPACK_UNPACK_SUCCESS ||
        unpacked.data.type != MSGPACK_OBJECT_MAP) {
        fprintf(stderr, "c-random: ignored a message that is not a msgpack map\n");
    } else {
        const msgpack_object *type = map_get(&unpacked.data, "type");
        if (string_is(type, "request"))
            answer(socket, &unpacked.data);
        else if (string_is(type, "bye"))
            end = EXIT_BYE;
        else if (string_is(type, "refused")) {
            print_reason(&unpacked.data);
            end = EXIT_REFUSED;
        }
        /* welcome, game_start, game_over and unknown types need nothing from a random bot */
    }
    msgpack_unpacked_destroy(&unpacked);
    return end;
}

static int play(void *socket) {
    static char frame[MAX_FRAME_BYTES];
    pid_t parent = getppid();
    int quiet_ticks = 0;
    for (;;) {
        int size = zmq_recv(socket, frame, sizeof frame, 0);
        if (size < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN) {
                fprintf(stderr, "c-random: receive failed: %s\n", zmq_strerror(errno));
                return EXIT_REFEREE_GONE;
            }
            if (getppid() != parent || ++quiet_ticks >= SILENCE_TICKS) {
                fprintf(stderr, "c-random: the referee is gone; exiting\n");
                return EXIT_REFEREE_GONE;
            }
            continue;
        }
        quiet_ticks = 0;
        if ((size_t)size > sizeof frame) {
            fprintf(stderr, "c-random: ignored a message of %d bytes (too large)\n", size);
            continue;
        }
        int end = handle(socket, frame, (size_t)size);
        if (end >= 0) return end;
    }
}

/* A seed from the kernel: bots are pid 1 of their own PID namespace, so time ^ getpid() would repeat. */
static unsigned random_seed(void) {
    unsigned seed = (unsigned)time(NULL);
    FILE *urandom = fopen("/dev/urandom", "rb");
    if (urandom != NULL) {
        if (fread(&seed, sizeof seed, 1, urandom) != 1) {
            seed = (unsigned)time(NULL);
        }
        fclose(urandom);
    }
    return seed;
}

int main(void) {
    const char *endpoint = getenv("REFEREE_ENDPOINT");
    const char *token = getenv("REFEREE_TOKEN");
    if (endpoint == NULL || *endpoint == '\0') {
        fprintf(stderr, "c-random: REFEREE_ENDPOINT is not set (the referee starts bots)\n");
        return EXIT_NO_ENDPOINT;
    }
    srand(random_seed());
    void *context = zmq_ctx_new();
    void *socket = zmq_socket(context, ZMQ_DEALER);
    int linger = LINGER_MS, tick = TICK_MS;
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(socket, ZMQ_RCVTIMEO, &tick, sizeof tick);
    int status = EXIT_REFEREE_GONE;
    if (zmq_connect(socket, endpoint) != 0)
        fprintf(stderr, "c-random: cannot connect to %s: %s\n", endpoint, zmq_strerror(errno));
    else if (send_hello(socket, token != NULL ? token : "") != 0)
        fprintf(stderr, "c-random: cannot send hello: %s\n", zmq_strerror(errno));
    else
        status = play(socket);
    zmq_close(socket);
    zmq_ctx_term(context);
    return status;
}
