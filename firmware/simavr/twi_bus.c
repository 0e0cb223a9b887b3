/* The TWI bus: simavr's TWI master messages to the slave parts in the order they came. */
#include "twi_bus.h"

#include "harness.h"

#define MAX_SLAVES 8

static struct {
    twi_slave slave;
    void *context;
} slaves[MAX_SLAVES];
static int slave_count;

static void on_twi(avr_irq_t *irq, uint32_t value, void *param) {
    (void)irq;
    (void)param;
    avr_twi_msg_irq_t message;
    avr_irq_t *reply = avr_io_getirq(harness_avr(), AVR_IOCTL_TWI_GETIRQ(0), TWI_IRQ_INPUT);
    message.u.v = value;
    for (int i = 0; i < slave_count; i++) {
        slaves[i].slave(message, reply, slaves[i].context);
    }
}

void twi_bus_add(twi_slave slave, void *context) {
    if (slave_count == MAX_SLAVES) {
        harness_fail(2, "more than %d parts on the I2C bus", MAX_SLAVES);
    }
    if (slave_count == 0) {
        avr_irq_register_notify(avr_io_getirq(harness_avr(), AVR_IOCTL_TWI_GETIRQ(0), TWI_IRQ_OUTPUT), on_twi, NULL);
    }
    slaves[slave_count].slave = slave;
    slaves[slave_count].context = context;
    slave_count++;
}
