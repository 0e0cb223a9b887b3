/* Byte queues between the AVR's peripherals and the ptys (DESIGN.md "Firmware in the loop"). */
#ifndef HIL_SIMAVR_QUEUE_H
#define HIL_SIMAVR_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define QUEUE_SIZE 8192

typedef struct {
    uint8_t data[QUEUE_SIZE];
    size_t head, length;
} queue_t;

/* Append a byte; 0 if the queue is full (the byte is not kept). */
int queue_push(queue_t *q, uint8_t byte);
/* The oldest byte (the queue must not be empty). */
uint8_t queue_pop(queue_t *q);
/* Free room. */
size_t queue_room(const queue_t *q);
/* Read from fd, without blocking, as much as the queue has room for (at most 4096 bytes);
 * returns how many bytes came. */
size_t queue_read(queue_t *q, int fd);
/* Write what the queue holds to fd without blocking; what a full tty refuses is
 * dropped and counted in *dropped, as a UART's bytes are lost when nobody reads them.
 * Returns how many bytes were written. */
size_t queue_flush(queue_t *q, int fd, uint64_t *dropped);

#endif
