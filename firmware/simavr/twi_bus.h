/* The TWI (I2C) bus: every message the firmware's master sends goes to each slave part
 * on the bus, and each answers its own address. */
#ifndef HIL_SIMAVR_TWI_BUS_H
#define HIL_SIMAVR_TWI_BUS_H

#include <avr_twi.h>

/* A slave part: called with every message; answers (ACK, data) by raising ``reply``. */
typedef void (*twi_slave)(avr_twi_msg_irq_t message, avr_irq_t *reply, void *context);

/* Put a part on the bus (the AVR must exist). */
void twi_bus_add(twi_slave slave, void *context);

#endif
