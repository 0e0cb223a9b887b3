/* The TWI bus: simavr's TWI master messages to the slave parts in the order they came,
 * and the slave side of register-file parts. */
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

/* The slave side of simavr's TWI messages, as its i2c_eeprom part does it: a START
 * with the part's address is acknowledged; the first byte written after it selects a
 * register, later ones are written to it; reads return it; the pointer moves on after
 * each access as the part says. A STOP or a START to another address deselects. */
static void registers_twi(avr_twi_msg_irq_t v, avr_irq_t *reply, void *context) {
    twi_registers *p = context;
    if (v.u.twi.msg & TWI_COND_STOP) {
        p->selected = 0;
    }
    if (v.u.twi.msg & TWI_COND_START) {
        p->selected = 0;
        p->index = 0;
        if ((v.u.twi.addr >> 1) == p->address) {
            p->selected = v.u.twi.addr;
            if (p->start) {
                p->start(p->context, v.u.twi.addr & 1);
            }
            avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, p->selected, 1));
        }
    }
    if (!p->selected) {
        return;
    }
    if (v.u.twi.msg & TWI_COND_WRITE) {
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_ACK, p->selected, 1));
        if (p->index == 0) {
            p->pointer = p->select(p->context, v.u.twi.data);
        } else {
            p->write(p->context, p->pointer, v.u.twi.data);
            if (p->next) {
                p->pointer = p->next(p->context, p->pointer);
            }
        }
        p->index++;
    }
    if (v.u.twi.msg & TWI_COND_READ) {
        uint8_t data = p->read(p->context, p->pointer);
        if (p->next) {
            p->pointer = p->next(p->context, p->pointer);
        }
        avr_raise_irq(reply, avr_twi_irq_msg(TWI_COND_READ, p->selected, data));
    }
}

void twi_bus_add_registers(twi_registers *part) { twi_bus_add(registers_twi, part); }
