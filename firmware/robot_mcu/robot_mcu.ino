/* robot_mcu: the program under test, flashed to the robot's Arduino (Nano / UNO).
 *
 * The behaviour lives in mcu_core.c (plain C, shared vectors, tested on the host);
 * this file is the hardware around it: the serial port, the L298 motor pins, the
 * HC-SR04 (timed by a pin-change interrupt, never pulseIn), the bumpers on external
 * interrupts, the ADC sensors, the HMC5883L compass, the radio module behind an
 * SC16IS750 I2C-to-UART bridge and the LED. loop() never
 * blocks: no delay(), serial output only as far as the transmit buffer has room.
 * Pins and options: pins.h. The protocol library: firmware/libraries/hil_protocol.
 */
#include <math.h>

#include "mcu_core.h"
#include "pins.h"

#if HAS_COMPASS || HAS_RADIO
#include <Wire.h>
#endif

static mcu_core core;

static volatile uint32_t echo_rise_us;
static volatile uint32_t echo_width_us;
static volatile uint8_t echo_done;
static volatile uint8_t bumper_left_level;
static volatile uint8_t bumper_right_level;

static uint32_t next_ping_ms;
static uint32_t ping_sent_ms;
static uint8_t ping_waiting;
static uint32_t next_analog_ms;
static uint32_t next_compass_ms;
#if HAS_RADIO
static uint32_t next_radio_ms;
#endif

/* Echo edges: rising starts the pulse, falling ends it (width = distance x 58.2 us). */
ISR(ULTRASONIC_ECHO_VECT) {
    uint32_t now = micros();
    if (ULTRASONIC_ECHO_PINREG & _BV(ULTRASONIC_ECHO_BIT)) {
        echo_rise_us = now;
    } else {
        echo_width_us = now - echo_rise_us;
        echo_done = 1;
    }
}

static void on_bumper_left(void) { bumper_left_level = digitalRead(PIN_BUMPER_LEFT); }

static void on_bumper_right(void) { bumper_right_level = digitalRead(PIN_BUMPER_RIGHT); }

static uint8_t reached(uint32_t now, uint32_t deadline) { return (int32_t)(now - deadline) >= 0; }

static void drive_motor(uint8_t enable, uint8_t a, uint8_t b, int16_t command) {
    analogWrite(enable, mcu_enable_duty(command, 255));
    digitalWrite(a, command > 0 ? HIGH : LOW);
    digitalWrite(b, command < 0 ? HIGH : LOW);
}

static void read_ultrasonic(uint32_t now) {
    uint32_t width;
    uint8_t done;
    noInterrupts();
    done = echo_done;
    width = echo_width_us;
    echo_done = 0;
    interrupts();
    if (ping_waiting && done) {
        /* tenths of a cm: width / 58.2 us per cm, saturated at 200.0 cm like the sensor */
        uint32_t tenths = (width * 100u + 291u) / 582u;
        core.tl2[MCU_TL2_ULTRASONIC_TENTHS] = (int32_t)(tenths > 2000u ? 2000u : tenths);
        ping_waiting = 0;
    } else if (ping_waiting && reached(now, ping_sent_ms + ULTRASONIC_TIMEOUT_MS)) {
        core.tl2[MCU_TL2_ULTRASONIC_TENTHS] = 2000; /* no echo: nothing in range */
        ping_waiting = 0;
    }
    if (!ping_waiting && reached(now, next_ping_ms)) {
        next_ping_ms = now + ULTRASONIC_PERIOD_MS;
        digitalWrite(PIN_ULTRASONIC_TRIGGER, HIGH);
        delayMicroseconds(10); /* the 10 us trigger pulse: short enough not to matter */
        digitalWrite(PIN_ULTRASONIC_TRIGGER, LOW);
        ping_sent_ms = now;
        ping_waiting = 1;
    }
}

static void read_analog(void) {
    core.tl2[MCU_TL2_IR_ADC] = analogRead(PIN_IR);
    core.tl2[MCU_TL2_LIGHT_0] = analogRead(PIN_LIGHT_0);
    core.tl2[MCU_TL2_LIGHT_1] = analogRead(PIN_LIGHT_1);
    core.tl2[MCU_TL2_LIGHT_2] = analogRead(PIN_LIGHT_2);
    core.tl2[MCU_TL2_LIGHT_3] = analogRead(PIN_LIGHT_3);
    core.tl2[MCU_TL2_BUMPER_LEFT] = bumper_left_level == BUMPER_PRESSED_LEVEL;
    core.tl2[MCU_TL2_BUMPER_RIGHT] = bumper_right_level == BUMPER_PRESSED_LEVEL;
}

#if HAS_COMPASS
static void compass_write(uint8_t reg, uint8_t value) {
    Wire.beginTransmission(COMPASS_ADDRESS);
    Wire.write(reg);
    Wire.write(value);
    Wire.endTransmission();
}

/* Heading = atan2(y, x) of the field in the sensor's plane, 0..360 deg, in tenths. */
static void read_compass(void) {
    int16_t x, y;
    float degrees;
    Wire.beginTransmission(COMPASS_ADDRESS);
    Wire.write((uint8_t)0x03); /* data output X MSB; then X LSB, Z, Y */
    if (Wire.endTransmission() != 0 || Wire.requestFrom((uint8_t)COMPASS_ADDRESS, (uint8_t)6) != 6) {
        return; /* no compass answering: keep the last heading */
    }
    x = (int16_t)((uint16_t)Wire.read() << 8 | (uint16_t)Wire.read());
    (void)((uint16_t)Wire.read() << 8 | (uint16_t)Wire.read()); /* z */
    y = (int16_t)((uint16_t)Wire.read() << 8 | (uint16_t)Wire.read());
    degrees = atan2((float)y, (float)x) * (180.0f / (float)M_PI);
    if (degrees < 0.0f) {
        degrees += 360.0f;
    }
    core.tl2[MCU_TL2_HEADING_TENTHS] = (int32_t)(degrees * 10.0f + 0.5f) % 3600;
}
#endif

#if HAS_RADIO
/* SC16IS750 registers (the address byte on the bus is reg << 3, channel 0). */
#define SC_RHR 0x00 /* read: receive FIFO; write: THR, transmit FIFO */
#define SC_THR 0x00
#define SC_DLL 0x00 /* while LCR bit 7 is set */
#define SC_DLH 0x01
#define SC_FCR 0x02
#define SC_LCR 0x03
#define SC_SPR 0x07
#define SC_TXLVL 0x08
#define SC_RXLVL 0x09

static uint8_t radio_write(uint8_t reg, uint8_t value) {
    Wire.beginTransmission(RADIO_ADDRESS);
    Wire.write((uint8_t)(reg << 3));
    Wire.write(value);
    return Wire.endTransmission() == 0;
}

/* Read count bytes of one register (RHR: successive FIFO bytes); how many came. */
static uint8_t radio_read(uint8_t reg, uint8_t count) {
    Wire.beginTransmission(RADIO_ADDRESS);
    Wire.write((uint8_t)(reg << 3));
    if (Wire.endTransmission() != 0) {
        return 0;
    }
    return Wire.requestFrom((uint8_t)RADIO_ADDRESS, count);
}

/* Set the bridge's UART up; 1 if it answered (its scratch pad reads back). */
static uint8_t radio_setup(void) {
    const uint16_t divisor = (uint16_t)(RADIO_XTAL_HZ / (16UL * RADIO_BAUD));
    if (!radio_write(SC_LCR, 0x80) || !radio_write(SC_DLL, (uint8_t)divisor) ||
        !radio_write(SC_DLH, (uint8_t)(divisor >> 8)) || !radio_write(SC_LCR, 0x03) || /* 8N1 */
        !radio_write(SC_FCR, 0x07) ||                                                   /* FIFOs on, reset */
        !radio_write(SC_SPR, 0x5A) || radio_read(SC_SPR, 1) != 1) {
        return 0;
    }
    return Wire.read() == 0x5A;
}

/* Bytes the module sent (at most one Wire buffer), then what waits for it as far as
 * the transmit FIFO has room. Every I2C call is bounded by the Wire timeout. */
static void radio_poll(uint32_t now) {
    char chunk[BUFFER_LENGTH - 1];
    uint8_t level, n;
    if (radio_read(SC_RXLVL, 1) == 1 && (level = (uint8_t)Wire.read()) > 0) {
        n = radio_read(SC_RHR, level < BUFFER_LENGTH ? level : BUFFER_LENGTH);
        while (n-- > 0) {
            mcu_radio_feed(&core, (uint8_t)Wire.read(), now);
        }
    }
    if (core.radio_out_length == 0 || radio_read(SC_TXLVL, 1) != 1) {
        return;
    }
    level = (uint8_t)Wire.read();
    n = mcu_radio_take(&core, chunk, level < sizeof(chunk) ? level : (uint8_t)sizeof(chunk));
    if (n > 0) {
        Wire.beginTransmission(RADIO_ADDRESS);
        Wire.write((uint8_t)(SC_THR << 3));
        Wire.write((const uint8_t *)chunk, n);
        Wire.endTransmission();
    }
}
#endif

static void flush_output(void) {
    char chunk[SERIAL_TX_BUFFER_SIZE];
    int room = Serial.availableForWrite();
    uint16_t n;
    if (room <= 0 || core.out_length == 0) {
        return;
    }
    n = mcu_take(&core, chunk, (uint16_t)(room < (int)sizeof(chunk) ? room : (int)sizeof(chunk)));
    Serial.write((const uint8_t *)chunk, n);
}

void setup() {
    uint32_t now;
    Serial.begin(HIL_BAUD);
    pinMode(PIN_MOTOR_LEFT_ENABLE, OUTPUT);
    pinMode(PIN_MOTOR_LEFT_A, OUTPUT);
    pinMode(PIN_MOTOR_LEFT_B, OUTPUT);
    pinMode(PIN_MOTOR_RIGHT_ENABLE, OUTPUT);
    pinMode(PIN_MOTOR_RIGHT_A, OUTPUT);
    pinMode(PIN_MOTOR_RIGHT_B, OUTPUT);
    pinMode(PIN_LED, OUTPUT);
    pinMode(PIN_ULTRASONIC_TRIGGER, OUTPUT);
    pinMode(PIN_ULTRASONIC_ECHO, INPUT);
    pinMode(PIN_BUMPER_LEFT, BUMPER_PULLUP ? INPUT_PULLUP : INPUT);
    pinMode(PIN_BUMPER_RIGHT, BUMPER_PULLUP ? INPUT_PULLUP : INPUT);
    drive_motor(PIN_MOTOR_LEFT_ENABLE, PIN_MOTOR_LEFT_A, PIN_MOTOR_LEFT_B, 0);
    drive_motor(PIN_MOTOR_RIGHT_ENABLE, PIN_MOTOR_RIGHT_A, PIN_MOTOR_RIGHT_B, 0);
    bumper_left_level = digitalRead(PIN_BUMPER_LEFT);
    bumper_right_level = digitalRead(PIN_BUMPER_RIGHT);
    attachInterrupt(digitalPinToInterrupt(PIN_BUMPER_LEFT), on_bumper_left, CHANGE);
    attachInterrupt(digitalPinToInterrupt(PIN_BUMPER_RIGHT), on_bumper_right, CHANGE);
    ULTRASONIC_ECHO_PCMSK |= _BV(ULTRASONIC_ECHO_PCINT);
    PCICR |= _BV(ULTRASONIC_ECHO_PCIE);
#if HAS_COMPASS || HAS_RADIO
    Wire.begin();
    Wire.setWireTimeout(3000, true); /* a missing compass or bridge must not hang the loop */
#endif
#if HAS_RADIO
    Wire.setClock(I2C_CLOCK_HZ);
#endif
#if HAS_COMPASS
    compass_write(0x00, 0x70); /* 8 samples averaged, 15 Hz */
    compass_write(0x02, 0x00); /* continuous measurement */
#endif
    now = millis();
    mcu_init(&core, HIL_CHECKED, now);
#if HAS_RADIO
    if (radio_setup()) {
        mcu_radio_begin(&core, now); /* heard at power-on: lost 3 s later if it never speaks */
    }
    next_radio_ms = now;
#endif
    next_ping_ms = now;
    next_analog_ms = now;
    next_compass_ms = now;
}

void loop() {
    uint32_t now = millis();
    while (Serial.available() > 0) {
        mcu_feed(&core, (uint8_t)Serial.read(), now);
    }
    read_ultrasonic(now);
    if (reached(now, next_analog_ms)) {
        next_analog_ms = now + ANALOG_PERIOD_MS;
        read_analog();
    }
#if HAS_COMPASS
    if (reached(now, next_compass_ms)) {
        next_compass_ms = now + COMPASS_PERIOD_MS;
        read_compass();
    }
#endif
#if HAS_RADIO
    if (core.has_radio && reached(now, next_radio_ms)) {
        next_radio_ms = now + RADIO_POLL_MS;
        radio_poll(now);
    }
#endif
    mcu_tick(&core, now);
    drive_motor(PIN_MOTOR_LEFT_ENABLE, PIN_MOTOR_LEFT_A, PIN_MOTOR_LEFT_B, core.left);
    drive_motor(PIN_MOTOR_RIGHT_ENABLE, PIN_MOTOR_RIGHT_A, PIN_MOTOR_RIGHT_B, core.right);
    digitalWrite(PIN_LED, core.led_on ? HIGH : LOW);
    flush_output();
}
