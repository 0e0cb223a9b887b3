/* Byte queues between the AVR's peripherals and the ptys. */
#include "queue.h"

#include <unistd.h>

int queue_push(queue_t *q, uint8_t byte) {
    if (q->length == QUEUE_SIZE) {
        return 0;
    }
    q->data[(q->head + q->length) % QUEUE_SIZE] = byte;
    q->length++;
    return 1;
}

uint8_t queue_pop(queue_t *q) {
    uint8_t byte = q->data[q->head];
    q->head = (q->head + 1) % QUEUE_SIZE;
    q->length--;
    return byte;
}

size_t queue_room(const queue_t *q) { return QUEUE_SIZE - q->length; }

size_t queue_read(queue_t *q, int fd) {
    uint8_t buffer[4096];
    size_t room = queue_room(q);
    if (room > sizeof buffer) {
        room = sizeof buffer;
    }
    ssize_t n = room > 0 ? read(fd, buffer, room) : 0;
    for (ssize_t i = 0; i < n; i++) {
        queue_push(q, buffer[i]);
    }
    return n > 0 ? (size_t)n : 0;
}

size_t queue_flush(queue_t *q, int fd, uint64_t *dropped) {
    size_t written = 0;
    while (q->length > 0) {
        size_t chunk = q->length;
        if (q->head + chunk > QUEUE_SIZE) {
            chunk = QUEUE_SIZE - q->head;
        }
        ssize_t n = write(fd, q->data + q->head, chunk);
        if (n <= 0) {
            *dropped += q->length;
            q->head = 0;
            q->length = 0;
            return written;
        }
        q->head = (q->head + (size_t)n) % QUEUE_SIZE;
        q->length -= (size_t)n;
        written += (size_t)n;
    }
    return written;
}
