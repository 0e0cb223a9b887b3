/* The TWI (I2C) bus: every message the firmware's master sends goes to each slave part
 * on the bus, and each answers its own address. Register-file parts (a pointer set by
 * the first byte written after START, then data written to or read from the register
 * it points at) share the slave side of the protocol: twi_bus_add_registers. */
#ifndef HIL_SIMAVR_TWI_BUS_H
#define HIL_SIMAVR_TWI_BUS_H

#include <avr_twi.h>

/* A slave part: called with every message; answers (ACK, data) by raising ``reply``. */
typedef void (*twi_slave)(avr_twi_msg_irq_t message, avr_irq_t *reply, void *context);

/* Put a part on the bus (the AVR must exist). */
void twi_bus_add(twi_slave slave, void *context);

/* A part seen as registers behind a pointer, at a 7-bit address. The functions get
 * ``context``; ``start`` and ``next`` may be NULL. */
typedef struct twi_registers {
    int address;
    /* A START addressed to the part (``read``: the master reads): latch outputs. */
    void (*start)(void *context, int read);
    /* The first byte written after START: the register it selects. */
    uint8_t (*select)(void *context, uint8_t byte);
    /* A later written byte, for register ``reg``. */
    void (*write)(void *context, uint8_t reg, uint8_t value);
    /* The byte the master reads from register ``reg``. */
    uint8_t (*read)(void *context, uint8_t reg);
    /* The pointer after an access to ``reg`` (auto-increment); NULL: it stays. */
    uint8_t (*next)(void *context, uint8_t reg);
    void *context;
    /* the bus's state of the part */
    uint8_t pointer, selected, index;
} twi_registers;

/* Put a register-file part on the bus; ``part`` must live as long as the AVR. */
void twi_bus_add_registers(twi_registers *part);

#endif
